"""Test driver: FMU states of a Co-Simulation FMU through FMPy's FMI 2.0 / 3.0 wrappers.

Reads {"fmu", "outputs", "input": name, "u": [value per step], "h", "k1", "k2"} on stdin:
steps k1 times, saves the state (GetFMUstate, and serialized), steps k2 more (A); sets the
state and steps k2 again (B); deserializes the bytes, sets them and steps again (C); in a
second, fresh instance deserializes the bytes and steps from there (D). Prints the outputs
of A, B, C, D (one list per step) as JSON (floats as repr: exact)."""
import json
import sys

from fmpy import extract, read_model_description
from fmpy.fmi2 import FMU2Slave
from fmpy.fmi3 import FMU3Slave

req = json.load(sys.stdin)
md = read_model_description(req["fmu"])
unzipped = extract(req["fmu"])
vr = {v.name: v.valueReference for v in md.modelVariables}
outs = [vr[n] for n in req["outputs"]]
u_vr = vr[req["input"]] if req.get("input") else None
h, k1, k2 = req["h"], req["k1"], req["k2"]
u = req.get("u") or [0.0] * (k1 + k2)
v3 = md.fmiVersion.startswith("3")


def instance(name):
    if v3:
        f = FMU3Slave(guid=md.guid, unzipDirectory=unzipped,
                      modelIdentifier=md.coSimulation.modelIdentifier, instanceName=name)
        f.instantiate()
        f.enterInitializationMode(startTime=0.0)
        f.exitInitializationMode()
    else:
        f = FMU2Slave(guid=md.guid, unzipDirectory=unzipped,
                      modelIdentifier=md.coSimulation.modelIdentifier, instanceName=name)
        f.instantiate()
        f.setupExperiment(startTime=0.0)
        f.enterInitializationMode()
        f.exitInitializationMode()
    return f


def setu(f, x):
    if u_vr is None:
        return
    if v3:
        f.setFloat64([u_vr], [x])
    else:
        f.setReal([u_vr], [x])


def get(f):
    return list(f.getFloat64(outs) if v3 else f.getReal(outs))


def steps(f, k0, n):
    rows = []
    for k in range(k0, k0 + n):
        setu(f, u[k])
        f.doStep(currentCommunicationPoint=k * h, communicationStepSize=h)
        rows.append(get(f))
    return rows


a = instance("a")
steps(a, 0, k1)
if v3:
    state = a.getFMUState()
    data = a.serializeFMUState(state)
else:
    state = a.getFMUstate()
    data = a.serializeFMUstate(state)
A = steps(a, k1, k2)
(a.setFMUState if v3 else a.setFMUstate)(state)
B = steps(a, k1, k2)
again = a.deserializeFMUState(data) if v3 else a.deSerializeFMUstate(data)
(a.setFMUState if v3 else a.setFMUstate)(again)
C = steps(a, k1, k2)
b = instance("b")
other = b.deserializeFMUState(data) if v3 else b.deSerializeFMUstate(data)
(b.setFMUState if v3 else b.setFMUstate)(other)
D = steps(b, k1, k2)
for f in (a, b):
    f.terminate()
    f.freeInstance()
print(json.dumps({"A": A, "B": B, "C": C, "D": D, "bytes": len(data)}))
