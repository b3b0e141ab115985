"""The step loop (`System.simulation()`): a controller in Python, inputs held between steps,
signals read at any step, rows as `run` records them, save/restore bit for bit, errors,
Ctrl-C and the GIL. The two examples of python/examples/ equal `stiction run --input` of
the same inputs bit for bit."""

import importlib.util
import subprocess
import threading
import time

import numpy as np
import pytest

import stiction
from conftest import EXAMPLES, REPO, read_csv

PY_EXAMPLES = REPO / "python" / "examples"


def _example(name):
    spec = importlib.util.spec_from_file_location(name, PY_EXAMPLES / f"{name}.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _table(path, name, step, values):
    """A CSV table giving value k at t = k·T (the same double as the simulator's k·T), so
    that an Euler run reads exactly `values[k]` at step k and the last one after."""
    with open(path, "w") as f:
        f.write(f"t,{name}\n")
        for k, v in enumerate(values):
            f.write(f"{k * step!r},{v!r}\n")


def _same_as_cli(cli, tmp_path, system, result, inputs):
    """`stiction run system --input ...` gives `result`'s rows bit for bit. The CSV writes a
    negative zero as 0 (framework/src/output/number.rs), so -0.0 in `result` is compared as +0.0
    (adding +0.0 maps -0.0 to +0.0 and leaves every other double as it is)."""
    out = tmp_path / "cli.csv"
    args = [str(cli), "run", str(system), "-o", str(out), "--quiet", "--no-warnings"]
    for a in inputs:
        args += ["--input", a]
    subprocess.run(args, check=True, timeout=600)
    csv = read_csv(out)
    assert len(csv["time"]) == len(result)
    assert np.array_equal(np.array(csv["time"]), result.time)
    for label in result.labels:
        a, b = np.array(csv[label]), result[label] + 0.0
        assert np.array_equal(a.view(np.uint64), b.view(np.uint64)), f"{label} differs from the CLI's"


def test_pi_controller_in_python_holds_a_load_with_a_self_locking_gear_and_lets_go(cli, tmp_path):
    ex = _example("gear_hold")
    result, torques = ex.control()
    t, q, v, tau = result.time, result["q"], result["v"], result["tau"]
    # Lifted to about the reference and held by the controller.
    hold = (t > 1.5) & (t < 2.0)
    assert np.all(np.abs(q[hold] - ex.Q_REF) < 0.06), q[hold]
    # Released at 2 s: no motor torque, and the worm gear holds the 5 N·m load by itself:
    # speed exactly zero, angle constant to the bit.
    after = t >= 2.1
    assert np.all(tau[after] == 0.0)
    assert np.all(v[after] == 0.0)
    assert np.all(q[after] == q[after][0]) and q[after][0] > 0.9
    # The same torques as a table to `stiction run --input`: the same rows, bit for bit.
    table = tmp_path / "tau.csv"
    _table(table, "tau", 0.001, torques + [0.0])
    _same_as_cli(cli, tmp_path, PY_EXAMPLES / "gear_hold.json", result, [f"tau={table}"])


def test_grasp_loop_restores_the_last_state_on_slip_and_retries_with_more_grip(cli, tmp_path):
    ex = _example("grasp_retry")
    result, grips, retries = ex.grasp()
    # It slipped at 1 N (pull > mu grip = 0.5 N after 0.31 s) and at 2 N (after 0.625 s),
    # and holds with 4 N to the end.
    assert [g for _, g in retries] == [2.0, 4.0]
    assert 0.31 < retries[0][0] < 0.4 and 0.625 < retries[1][0] < 0.7
    assert grips[-1] == 4.0 and len(grips) == 1000
    # Held: the object only creeps with the pad's elastic element, |x| < 1 mm, and the
    # friction balances the pull.
    assert np.all(np.abs(result["x"]) < 1e-3)
    assert abs(result["fx"][-1] + ex.pull_at(1.0)) < 1e-9
    # The final branch's inputs to the CLI: the same rows, bit for bit.
    table = tmp_path / "grip.csv"
    _table(table, "grip", 0.001, grips + [grips[-1]])
    _same_as_cli(cli, tmp_path, PY_EXAMPLES / "grasp.json", result, [f"grip={table}", "pull=1.6*t"])


def test_save_and_restore_continue_bit_for_bit_and_match_the_cli_resume(cli, tmp_path):
    system = stiction.load(EXAMPLES / "two_link_fricK.json")
    with system.simulation() as sim:
        sim.advance_to(1.234)
        assert sim.time == 1.234 and sim.steps == 12340
        state = sim.save()
        sim.advance_to(2.0)
        ahead = sim.read_many(["arm.q[0]", "arm.q[1]", "arm.w[0]", "arm.w[1]"])
        rows_ahead = sim.result()
        sim.restore(state)
        assert sim.steps == 12340
        sim.advance_to(2.0)
        again = sim.read_many(["arm.q[0]", "arm.q[1]", "arm.w[0]", "arm.w[1]"])
        assert np.array_equal(ahead.view(np.uint64), again.view(np.uint64))
        rows = sim.result()
        for label in rows.labels:
            assert np.array_equal(rows[label], rows_ahead[label])
        # The whole run through Python equals System.run's rows.
        sim.advance_to(system.to_dict()["solver"]["stop_time"])
        mine = sim.result()
    full = system.run()
    assert len(mine) == len(full)
    for label in full.labels:
        assert np.array_equal(mine[label].view(np.uint64), full[label].view(np.uint64)), label
    # A state saved in Python continues in the CLI (--resume) as in Python.
    f = tmp_path / "s.state"
    f.write_bytes(state)
    out = tmp_path / "rest.csv"
    subprocess.run([str(cli), "run", str(EXAMPLES / "two_link_fricK.json"), "--resume", str(f), "-o", str(out),
                    "--quiet", "--no-warnings"], check=True, timeout=600)
    rest = read_csv(out)
    i = int(np.searchsorted(full.time, rest["time"][0]))
    for label in full.labels:
        assert np.array_equal(np.array(rest[label]), full[label][i:]), label


def test_inputs_outputs_and_reads():
    system = stiction.load(EXAMPLES / "pi_gear_hold.json")
    sim = system.simulation()
    assert list(sim.inputs) == ["w_ref"] and len(sim.inputs) == 1 and "w_ref" in sim.inputs
    assert sim.inputs["w_ref"] == 1.0
    sim.inputs["w_ref"] = 0.5
    assert sim.inputs["w_ref"] == 0.5
    sim.step(10)
    out = sim.outputs
    assert list(out) == ["q", "v", "u", "mode"]
    assert out["q"] == sim.read("gear.q") and out["v"] == sim.read("gear.v")
    both = sim.read_many(["gear.q", "gear.v"])
    assert both.dtype == np.float64 and list(both) == [out["q"], out["v"]]
    with pytest.raises(stiction.InputError, match="no input 'w_rf'.*did you mean 'w_ref'"):
        sim.inputs["w_rf"] = 1.0
    with pytest.raises(stiction.InputError, match="not a finite number"):
        sim.inputs["w_ref"] = float("nan")
    with pytest.raises(KeyError):
        sim.inputs["nope"]
    with pytest.raises(stiction.InputError, match="gear.qq|no signal 'qq'"):
        sim.read("gear.qq")
    with pytest.raises(stiction.InputError, match="already at t = 0.01 s"):
        sim.advance_to(0.005)
    with pytest.raises(stiction.InputError, match="saved state"):
        sim.restore(b"not a state")
    with pytest.raises(stiction.InputError, match="another system"):
        sim.restore(stiction.load(EXAMPLES / "model_d_fig14.json").simulation().save())
    assert sim.steps == 10
    sim.close()
    assert sim.closed
    with pytest.raises(stiction.InputError, match="closed"):
        sim.step()


def test_a_failing_step_raises_simulation_error_with_time_and_component():
    # A mass pushed by sqrt(u): an input u < 0 from the controller makes the force NaN.
    system = stiction.load({
        "name": "sqrt_push",
        "solver": {"method": "euler", "step": 1e-3, "stop_time": 1.0},
        "inputs": {"u": {"start": 1.0}},
        "output": {"signals": {"v": "m.v"}},
        "components": {"m": {"type": "mass", "mass": 1.0}, "f": {"type": "force_source", "force": "sqrt(u)"}},
        "connections": [{"from": "f.body", "to": "m"}],
    })
    with system.simulation() as sim:
        sim.step(100)
        good = sim.save()
        sim.inputs["u"] = -1.0
        with pytest.raises(stiction.SimulationError) as e:
            sim.step(10)
        assert e.value.component == "m" and abs(e.value.time - 0.101) < 1e-12 and "non-finite" in e.value.message
        # A saved state brings it back.
        sim.restore(good)
        sim.inputs["u"] = 4.0
        sim.step(10)
        assert sim.read("m.v") > 0.1 and sim.steps == 110


def test_ctrl_c_stops_at_the_next_step_and_the_gil_is_released(sigint_handler):
    import _thread

    system = stiction.load(EXAMPLES / "two_link_fricK.json")
    sim = system.simulation(threads=1)
    timer = threading.Timer(0.3, _thread.interrupt_main)
    timer.start()
    with pytest.raises(KeyboardInterrupt):
        sim.step(10**9)
    timer.join()
    k = sim.steps
    assert 0 < k < 10**9
    sim.step()  # still usable, at a step boundary
    assert sim.steps == k + 1
    # Another Python thread runs while a long step call is in progress.
    count = 0
    worker = threading.Thread(target=sim.step, args=(100_000,))
    worker.start()
    while worker.is_alive():
        count += 1
        time.sleep(0.001)
    worker.join()
    assert sim.steps == k + 1 + 100_000
    assert count > 10, count
