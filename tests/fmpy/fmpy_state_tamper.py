"""Test driver: a Co-Simulation FMU handed serialized states that are not whole or not true.

Reads {"fmu", "outputs", "h", "k1", "k2"} on stdin. Steps k1 times, serializes the state,
steps k2 more (the instance is then at k1 + k2). Then: every cut of the bytes, the bytes with
one more byte, every single-bit flip (every k-th bit of a state over 512 bytes) must be refused by
deserialize; the bytes with the FMU time edited by +0.01 s and the CRC-32 recomputed are read,
but refused by set. After each refusal the instance steps on as if nothing had happened: its
next k2 rows equal those of a second instance that ran k1 + 2 k2 steps straight. Prints
{"bytes", "cuts", "flips", "time_edit_set_refused", "same"} as JSON."""
import json
import sys
import zlib

from fmpy import extract, read_model_description
from fmpy.fmi2 import FMU2Slave
from fmpy.fmi3 import FMU3Slave

req = json.load(sys.stdin)
md = read_model_description(req["fmu"])
unzipped = extract(req["fmu"])
vr = {v.name: v.valueReference for v in md.modelVariables}
outs = [vr[n] for n in req["outputs"]]
h, k1, k2 = req["h"], req["k1"], req["k2"]
v3 = md.fmiVersion.startswith("3")


def instance(name):
    cls = FMU3Slave if v3 else FMU2Slave
    f = cls(guid=md.guid, unzipDirectory=unzipped, modelIdentifier=md.coSimulation.modelIdentifier,
            instanceName=name)
    f.instantiate()
    if v3:
        f.enterInitializationMode(startTime=0.0)
    else:
        f.setupExperiment(startTime=0.0)
        f.enterInitializationMode()
    f.exitInitializationMode()
    return f


def steps(f, k0, n):
    rows = []
    for k in range(k0, k0 + n):
        f.doStep(currentCommunicationPoint=k * h, communicationStepSize=h)
        rows.append(list(f.getFloat64(outs) if v3 else f.getReal(outs)))
    return rows


def deserialize(f, data):
    return f.deserializeFMUState(data) if v3 else f.deSerializeFMUstate(data)


def refused(call):
    try:
        call()
    except Exception:
        return True
    return False


a = instance("a")
steps(a, 0, k1)
state = a.getFMUState() if v3 else a.getFMUstate()
data = bytes(a.serializeFMUState(state) if v3 else a.serializeFMUstate(state))
steps(a, k1, k2)

accepted = []
for n in range(len(data)):
    if not refused(lambda: deserialize(a, data[:n])):
        accepted.append(("cut", n))
if not refused(lambda: deserialize(a, data + b"\0")):
    accepted.append(("extended", len(data) + 1))
stride = max(1, 8 * len(data) // 4096)
flips = 0
for bit in range(0, 8 * len(data), stride):
    b = bytearray(data)
    b[bit // 8] ^= 1 << (bit % 8)
    flips += 1
    if not refused(lambda: deserialize(a, bytes(b))):
        accepted.append(("flip", bit))

# The FMU time (sealed body: model hash, phase, time) moved by 0.01 s, checksum made right.
b = bytearray(data)
t = memoryview(b)[44:52].cast("d")
t[0] += 0.01
b[-4:] = zlib.crc32(bytes(b[:-4])).to_bytes(4, "little")
edited = deserialize(a, bytes(b))
set_refused = refused(lambda: (a.setFMUState if v3 else a.setFMUstate)(edited))

after = steps(a, k1 + k2, k2)
c = instance("c")
straight = steps(c, 0, k1 + 2 * k2)[k1 + k2:]
for f in (a, c):
    f.terminate()
    f.freeInstance()
print(json.dumps({"bytes": len(data), "accepted": accepted, "cuts": len(data), "flips": flips,
                  "time_edit_set_refused": set_refused, "same": after == straight}))
