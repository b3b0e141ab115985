"""Test driver: run an .ssp with libcosim (PyPI libcosimpy) at a fixed step to a stop time and
print the last value of every real variable of every component as JSON (tests/ssp.rs).

usage: run_ssp.py SSP STOP_TIME STEP  (seconds)"""
import json
import sys

from libcosimpy.CosimExecution import CosimExecution
from libcosimpy.CosimObserver import CosimObserver

ssp, stop, step = sys.argv[1], float(sys.argv[2]), float(sys.argv[3])
execution = CosimExecution.from_ssp_file(ssp, int(round(step * 1e9)))  # nanoseconds
observer = CosimObserver.create_last_value()
execution.add_observer(observer)
execution.step(int(round(stop / step)))
values = {}
for slave in execution.slave_infos():
    name = slave.name.decode() if isinstance(slave.name, bytes) else slave.name
    for v in execution.slave_variables(slave.index):
        if v.type == 0:  # real
            var = v.name.decode() if isinstance(v.name, bytes) else v.name
            values[f"{name}.{var}"] = observer.last_real_values(slave.index, [v.reference])[0]
print(json.dumps(values))
