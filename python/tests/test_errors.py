"""Errors are exceptions that say where: InputError (file, JSON path), SimulationError
(time, component); Ctrl-C is a KeyboardInterrupt that leaves the System usable."""

import _thread
import json
import threading
import time

import numpy as np
import pytest

import stiction
from conftest import EXAMPLES


def blowup():
    """A mass pushed by sqrt(0.05 - t): the force is NaN after t = 0.05 s."""
    return {
        "name": "blowup",
        "solver": {"method": "euler", "step": 1e-3, "stop_time": 0.1},
        "output": {"signals": {"v": "m.v"}},
        "components": {"m": {"type": "mass", "mass": 1.0}, "f": {"type": "force_source", "force": "sqrt(0.05 - t)"}},
        "connections": [{"from": "f.body", "to": "m"}],
    }


def test_input_error_names_file_and_json_path(tmp_path):
    doc = json.loads((EXAMPLES / "model_a_fig6_T1e-3.json").read_text())
    doc["components"]["block"]["mass"] = -1
    f = tmp_path / "bad.json"
    f.write_text(json.dumps(doc))
    with pytest.raises(stiction.InputError) as e:
        stiction.load(f)
    assert e.value.path == "components.block.mass"
    assert e.value.file == str(f)
    assert isinstance(e.value, ValueError)
    assert "must be > 0" in str(e.value)


def test_input_errors_of_every_kind(tmp_path):
    s = stiction.load(EXAMPLES / "model_a_fig6_T1e-3.json")
    with pytest.raises(stiction.InputError) as e:
        s.with_set({"block.mas": 2})
    assert e.value.path == "components.block.mas" and "unknown parameter" in str(e.value)
    with pytest.raises(stiction.InputError, match="no component 'blok'.*block"):
        s.run(set={"blok.mass": 2})
    with pytest.raises(stiction.InputError) as e:
        s.run(set={"block.mass": 0})
    assert e.value.path == "components.block.mass" and "--set block.mass=0" in str(e.value)
    with pytest.raises(stiction.InputError) as e:
        s.run(stop_time=-1.0)
    assert e.value.path == "solver.stop_time"
    with pytest.raises(stiction.InputError, match="threads"):
        s.run(threads=0)
    with pytest.raises(stiction.InputError) as e:
        stiction.load(tmp_path / "missing.json")
    assert e.value.file == str(tmp_path / "missing.json")
    (tmp_path / "broken.json").write_text("{ not json")
    with pytest.raises(stiction.InputError):
        stiction.load(tmp_path / "broken.json")
    with pytest.raises(stiction.InputError) as e:
        stiction.load({"solver": {"step": 1e-3, "stop_time": 1}, "components": {"x": {"type": "nosuch"}}})
    assert e.value.path == "components.x.type" and e.value.file == "<dict>"
    with pytest.raises(stiction.InputError, match="CLI") as e:
        stiction.load(EXAMPLES / "fmu_only_gear_contact.json")
    assert e.value.path == "fmus"
    with pytest.raises(stiction.InputError, match="unknown model"):
        stiction.export_fmu("nosuch", path=tmp_path / "x.fmu")
    with pytest.raises(stiction.InputError, match="fu"):
        stiction.export_fmu("gear", params={"fu": float("nan")}, path=tmp_path / "x.fmu")


def test_simulation_error_carries_time_and_component():
    s = stiction.load(blowup())
    with pytest.raises(stiction.SimulationError) as e:
        s.run()
    err = e.value
    assert isinstance(err, RuntimeError)
    assert err.component == "m"
    # First step whose force is NaN: t = 0.051 s, detected at the end of that step.
    assert 0.05 < err.time <= 0.053
    assert "non-finite" in err.message
    # The rows before the failure, as the CLI's CSV keeps them: every 1 ms up to 0.051 s.
    part = err.partial
    assert isinstance(part, stiction.Result) and 0.049 <= part.time[-1] < err.time
    assert np.all(np.isfinite(part["v"])) and part["v"][-1] > 0


def test_ctrl_c_interrupts_a_long_run_and_leaves_the_system_usable(sigint_handler):
    s = stiction.load(EXAMPLES / "rolling_sphere.json")
    before = s.run()
    # 1000 s of simulated time would take minutes; Ctrl-C (simulated) after 0.3 s.
    timer = threading.Timer(0.3, _thread.interrupt_main)
    started = time.monotonic()
    timer.start()
    try:
        with pytest.raises(KeyboardInterrupt):
            s.run(stop_time=1000.0)
    finally:
        timer.cancel()
    assert time.monotonic() - started < 5.0
    after = s.run()
    for k in before.keys():
        np.testing.assert_array_equal(after[k], before[k])


def test_other_threads_run_while_a_simulation_runs():
    """The GIL is released during a run: a Python thread keeps counting meanwhile."""
    s = stiction.load(EXAMPLES / "rolling_sphere.json")
    ticks = []
    stop = threading.Event()

    def count():
        while not stop.is_set():
            ticks.append(1)
            time.sleep(0.001)

    t = threading.Thread(target=count)
    t.start()
    try:
        started = time.monotonic()
        s.run(stop_time=20.0)
        elapsed = time.monotonic() - started
    finally:
        stop.set()
        t.join()
    assert elapsed > 0.05
    # With the GIL held for the whole run the thread would tick about once.
    assert len(ticks) > 10
