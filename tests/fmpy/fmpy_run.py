"""Test driver: validate or simulate an FMU with FMPy; reads a JSON request on stdin and
prints a JSON answer on stdout (used by tests/fmu_export.rs)."""
import json
import sys

import numpy as np
from fmpy import simulate_fmu
from fmpy.validation import validate_fmu

req = json.load(sys.stdin)
if req["action"] == "validate":
    print(json.dumps({"problems": validate_fmu(req["fmu"])}))
    sys.exit(0)

signals = None
table = req.get("input")
if table:
    names = [n for n in table if n != "time"]
    rows = list(zip(*[table[n] for n in ["time"] + names]))
    signals = np.array(rows, dtype=[(n, np.float64) for n in ["time"] + names])

kwargs = dict(
    fmi_type=req["fmi_type"],
    start_time=req.get("start_time", 0.0),
    stop_time=req["stop_time"],
    output_interval=req["output_interval"],
    input=signals,
    start_values=req.get("start_values", {}),
    output=req["output"],
    record_events=False,
)
if req["fmi_type"] == "ModelExchange":
    kwargs["solver"] = req.get("solver", "CVode")
    if "relative_tolerance" in req:
        kwargs["relative_tolerance"] = req["relative_tolerance"]
    if "step_size" in req:
        kwargs["step_size"] = req["step_size"]
result = simulate_fmu(req["fmu"], **kwargs)
print(json.dumps({n: result[n].astype(np.float64).tolist() for n in result.dtype.names}))
