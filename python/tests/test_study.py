"""stiction.study on local threads: the same rows and values as `stiction sweep`."""

import subprocess
import sys

import numpy as np
import pytest

import stiction
from conftest import EXAMPLES, read_csv

SYSTEM = EXAMPLES / "two_mass_model_c_fig11.json"


def assert_same_table(table, expected):
    """`table` (DataFrame or structured array) equals the CSV columns, bit for bit."""
    names = list(table.columns) if hasattr(table, "columns") else list(table.dtype.names)
    assert names == list(expected)
    for name, values in expected.items():
        got = np.asarray(table[name])
        if isinstance(values[0], float):
            np.testing.assert_array_equal(got.astype(np.float64), np.array(values), err_msg=name)
        else:
            assert [str(x) for x in got] == values, name


def sweep_csv(cli, tmp_path, args):
    out = tmp_path / "sweep.csv"
    subprocess.run([str(cli), "sweep", str(SYSTEM), *args, "-o", str(out), "--quiet"], check=True, timeout=600)
    return read_csv(out)


def test_grid_study_equals_cli_sweep_with_failed_runs(cli, tmp_path):
    expected = sweep_csv(
        cli, tmp_path,
        ["--vary", "contact1.F=4,-1", "--vary", "m2.mass=0.5:1.5:3", "--outputs", "stuck1=mean", "--outputs", "v2=absmax,final"],
    )
    system = stiction.load(str(SYSTEM))
    table = stiction.study(
        system,
        vary={"contact1.F": [4, -1], "m2.mass": "0.5:1.5:3"},
        outputs={"stuck1": "mean", "v2": ["absmax", "final"]},
        threads=2,
    )
    assert_same_table(table, expected)
    status = list(table["status"])
    assert status == ["ok"] * 3 + ["failed"] * 3
    assert "components.contact1.F" in table["message"][3]
    # Fig. 11: stick-slip, so contact 1 is stuck part of the time, not always nor never.
    ok = table[table["status"] == "ok"]
    assert np.all((ok["stuck1:mean"] > 0) & (ok["stuck1:mean"] < 1))


def test_monte_carlo_equals_cli_and_does_not_depend_on_threads(cli, tmp_path):
    expected = sweep_csv(
        cli, tmp_path,
        ["--vary", "contact1.F=uniform(4,6)", "--vary", "contact2.F=normal(2.5,0.25)", "--samples", "12",
         "--seed", "7", "--outputs", "v2=absmax,rms"],
    )
    system = stiction.load(str(SYSTEM))
    kw = dict(vary={"contact1.F": "uniform(4,6)", "contact2.F": "normal(2.5,0.25)"}, samples=12, seed=7,
              outputs={"v2": ["absmax", "rms"]})
    one = stiction.study(system, threads=1, **kw)
    two = stiction.study(system, threads=2, **kw)
    assert_same_table(one, expected)
    assert_same_table(two, expected)
    # uniform(4, 6) draws stay in range
    assert np.all((one["contact1.F"] >= 4) & (one["contact1.F"] <= 6))


def test_progress_and_defaults(tmp_path):
    system = stiction.load(str(SYSTEM)).with_set({"solver.stop_time": 0.5})
    seen = []
    table = stiction.study(system, vary={"contact1.F": [3, 4, 5]}, progress=lambda d, n: seen.append((d, n)))
    # Without outputs: the final value of every output signal, as the CLI.
    assert list(table.columns) == ["run", "contact1.F", "v1:final", "v2:final", "f1:final", "f2:final",
                                   "stuck1:final", "stuck2:final", "u:final", "status", "message"]
    assert seen and seen[-1] == (3, 3)


def test_structured_array_without_pandas(monkeypatch):
    monkeypatch.setitem(sys.modules, "pandas", None)  # `import pandas` now raises ImportError
    system = stiction.load(str(SYSTEM)).with_set({"solver.stop_time": 0.5})
    arr = stiction.study(system, vary={"contact1.F": [4, -1]}, outputs={"v2": "final"})
    assert isinstance(arr, np.ndarray)
    assert arr.dtype.names == ("run", "contact1.F", "v2:final", "status", "message")
    assert list(arr["status"]) == ["ok", "failed"] and np.isnan(arr["v2:final"][1])


def test_bad_study_is_an_input_error():
    system = stiction.load(str(SYSTEM))
    with pytest.raises(stiction.InputError, match="samples"):
        stiction.study(system, vary={"contact1.F": "uniform(4,6)"})
    with pytest.raises(stiction.InputError, match="nosuch"):
        stiction.study(system, vary={"contact1.F": [1, 2]}, outputs={"nosuch": "max"})
    with pytest.raises(stiction.InputError):
        stiction.study(system, vary={})


def test_ctrl_c_interrupts_a_local_study(sigint_handler):
    import _thread
    import threading
    import time

    system = stiction.load(str(SYSTEM))  # 6 s simulated per run: 400 runs take several seconds
    timer = threading.Timer(0.3, _thread.interrupt_main)
    started = time.monotonic()
    timer.start()
    try:
        with pytest.raises(KeyboardInterrupt):
            stiction.study(system, vary={"contact1.F": "uniform(4,6)"}, samples=400, threads=1)
    finally:
        timer.cancel()
    assert time.monotonic() - started < 10.0
