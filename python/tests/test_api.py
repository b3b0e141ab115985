"""The API on the examples: values bit-identical to the CLI's CSV, the paper's physics,
Result/System/Finding objects, FMU export."""

import json
import subprocess
import zipfile

import numpy as np
import pytest

import stiction
from conftest import EXAMPLES, read_csv

CASES = [
    "rolling_sphere.json",
    "model_a_fig6_T1e-3.json",
    "two_mass_model_c_fig11.json",
    "gear_1dof_fig9_gv105.json",
    "karnopp_fig4.json",
]


@pytest.mark.parametrize("name", CASES)
def test_run_equals_cli_csv(name, cli, tmp_path):
    out = tmp_path / "cli.csv"
    subprocess.run([str(cli), "run", str(EXAMPLES / name), "-o", str(out), "--quiet"], check=True, timeout=600)
    expected = read_csv(out)
    result = stiction.load(EXAMPLES / name).run(threads=1)
    assert result.keys() == list(expected)
    for label, values in expected.items():
        got = result[label]
        assert got.dtype == np.float64 and got.shape == (len(values),)
        # Bit for bit: the CLI prints the shortest text that reads back to the same double.
        np.testing.assert_array_equal(got, np.array(values), err_msg=f"{name}: column {label}")


def test_rolling_sphere_physics():
    """Sim I: the sphere slides, then rolls at 5/7 v0 = 1.428571 m/s; spin = v/r."""
    r = stiction.load(EXAMPLES / "rolling_sphere.json").run()
    assert r.units["center_vx"] == "m/s" and r.units["time"] == "s" and r.units["height"] == "m"
    at = np.searchsorted(r.time, 1.0)
    assert abs(r["center_vx"][at] - 5 / 7 * 2.0) < 1e-5
    assert abs(r["spin_y"][-1] - r["center_vx"][-1] / 0.2) < 1e-4


def test_model_a_stops_exactly_and_set_moves_the_stop():
    """Fig. 6: model A, v0 = 0.7 m/s, F = 8 N, h = -1 N, M = 1 kg: deceleration (F + |h|)/M,
    v exactly 0 from 0.7/9 = 0.0778 s. With F = 6 N (a --set) it stops at 0.7/7 = 0.1 s."""
    s = stiction.load(EXAMPLES / "model_a_fig6_T1e-3.json")

    def first_zero(r):
        return r.time[np.argmax(r["v"] == 0.0)]

    r = s.run()
    assert abs(first_zero(r) - 0.7 / 9) <= 1e-3
    assert np.all(r["v"][r.time >= 0.079] == 0.0)
    r6 = s.run(set={"block.F": 6.0})
    assert abs(first_zero(r6) - 0.1) <= 1e-3
    # with_set gives a new System and leaves the original as it was
    s6 = s.with_set({"block.F": 6.0})
    np.testing.assert_array_equal(s6.run()["v"], r6["v"])
    np.testing.assert_array_equal(s.run()["v"], r["v"])
    assert s6.to_dict()["components"]["block"]["F"] == 6.0
    assert s.to_dict()["components"]["block"]["F"] == 8.0


def test_threads_and_stop_time():
    s = stiction.load(EXAMPLES / "two_mass_model_c_fig11.json")
    a, b = s.run(threads=1), s.run(threads=2)
    for k in a.keys():
        np.testing.assert_array_equal(a[k], b[k])
    short = s.run(stop_time=0.5)
    n = len(short)
    assert abs(short.time[-1] - 0.5) < 1e-9
    for k in a.keys():
        np.testing.assert_array_equal(short[k], a[k][:n])


def test_result_containers():
    r = stiction.load(EXAMPLES / "model_a_fig6_T1e-3.json").run()
    arr = r.to_numpy()
    assert arr.dtype.names == ("time", "v", "f", "stuck")
    np.testing.assert_array_equal(arr["v"], r["v"])
    with pytest.raises(KeyError, match="no column 'nope'"):
        r["nope"]
    pd = pytest.importorskip("pandas", reason="to_pandas needs pandas")
    df = r.to_pandas()
    assert list(df.columns) == ["time", "v", "f", "stuck"]
    np.testing.assert_array_equal(df["f"].to_numpy(), r["f"])


def test_load_from_dict_equals_file():
    path = EXAMPLES / "model_a_fig6_T1e-3.json"
    doc = json.loads(path.read_text())
    a = stiction.load(path).run()
    b = stiction.load(doc).run()
    np.testing.assert_array_equal(a["v"], b["v"])
    assert stiction.load(doc).file == "<dict>"


def test_pickle_roundtrip():
    import pickle

    s = stiction.load(EXAMPLES / "model_a_fig6_T1e-3.json").with_set({"block.mass": 2.0})
    t = pickle.loads(pickle.dumps(s))
    assert t.to_json() == s.to_json() and t.file == s.file
    np.testing.assert_array_equal(t.run()["v"], s.run()["v"])


def test_check_findings():
    s = stiction.load(EXAMPLES / "gear_1dof_fig9_gv105.json")
    findings = s.check()
    assert findings and all(isinstance(f, stiction.Finding) for f in findings)
    gear = [f for f in findings if f.component == "gear"]
    # The gear reports its efficiencies and that gamma_v >= 1 makes it non-backdrivable.
    assert any("non-backdrivable" in f.message for f in gear), [str(f) for f in findings]
    # An output interval that is not a whole number of steps: a system-wide warning.
    w = s.with_set({"output.interval": 0.0015}).check()
    assert any(f.level == "warning" and f.component is None and "whole number of steps" in f.message for f in w)


def test_components():
    types = {t.name: t for t in stiction.components()}
    assert {"mass", "gear", "fric_k", "rigid_body"} <= set(types)
    mass = types["mass"]
    assert mass.kind == "admittance"
    params = {p[0]: p for p in mass.params}
    assert params["mass"][1] == "kg"
    assert types["spring_damper"].kind == "impedance"


def test_export_fmu_equals_cli(cli, tmp_path):
    py = stiction.export_fmu("gear", fmi=2, interface="both", params={"fu": 3, "gamma_v": 1.05}, path=tmp_path / "py.fmu")
    assert py == tmp_path / "py.fmu"
    ref = tmp_path / "cli.fmu"
    subprocess.run(
        [str(cli), "fmu", "export", "gear", "--fmi", "2", "--interface", "both", "--param", "fu=3.0",
         "--param", "gamma_v=1.05", "-o", str(ref)],
        check=True, timeout=300, capture_output=True,
    )
    with zipfile.ZipFile(py) as a, zipfile.ZipFile(ref) as b:
        assert sorted(a.namelist()) == sorted(b.namelist())
        assert "binaries/linux64/StictionGear.so" in a.namelist()
        for n in ("modelDescription.xml", "resources/stiction-start.txt"):
            assert a.read(n) == b.read(n), n
        assert a.read("binaries/linux64/StictionGear.so")[:4] == b"\x7fELF"


def test_exported_fmu_runs_like_native(tmp_path):
    """The exported gear FMU in the Fig. 9 system reproduces the native gear: v exactly 0
    while stuck against the wall (examples/fmu_gear_fig9.json)."""
    fmu = tmp_path / "StictionGear.fmu"
    stiction.export_fmu("gear", fmi=2, interface="cs", path=fmu)
    doc = json.loads((EXAMPLES / "fmu_gear_fig9.json").read_text())
    doc["components"]["gear"]["path"] = str(fmu)
    r = stiction.load(doc, base_dir=EXAMPLES).run(stop_time=1.4)
    native = stiction.load(EXAMPLES / "gear_1dof_fig9_gv105.json").run(stop_time=1.4)
    stuck = (r.time >= 0.95) & (r.time < 1.4)
    assert np.all(r["v"][stuck] == 0.0)
    n = min(len(r), len(native))
    assert np.max(np.abs(r["v"][:n] - native["v"][:n])) < 1e-9


def test_run_with_inputs_equals_the_cli_and_drives_the_system(cli, tmp_path):
    """A system's inputs from Python: a constant, a callable f(t), rows (t, value); the same
    as `stiction run --input` of the same functions, bit for bit."""
    system = stiction.load(EXAMPLES / "two_link_pd_fricK.json")
    start = system.run()
    # Inputs not given keep their start values (1.0 and -0.5): the arm rests in the dead band.
    assert abs(start["theta0"][-1] - 1.0) <= 0.5 / 4 + 1e-9
    assert abs(start["theta1"][-1] + 0.5) <= 0.5 / 4 + 1e-9
    r = system.run(inputs={"q0_ref": 0.3, "q1_ref": lambda t: 0.4 * min(t, 1.0)})
    out = tmp_path / "cli.csv"
    subprocess.run(
        [str(cli), "run", str(EXAMPLES / "two_link_pd_fricK.json"), "-o", str(out), "--quiet",
         "--input", "q0_ref=0.3", "--input", "q1_ref=0.4*min(t,1)"],
        check=True,
        timeout=600,
    )
    expected = read_csv(out)
    for label in ("theta0", "theta1"):
        np.testing.assert_allclose(r[label], expected[label], rtol=0, atol=1e-12)
    assert abs(r["theta1"][-1] - 0.4) <= 0.5 / 4 + 1e-9
    # Rows (t, value): a table.
    rows = np.array([[0.0, 0.3], [4.0, 0.3]])
    t = system.run(inputs={"q0_ref": rows, "q1_ref": [[0.0, 0.0], [1.0, 0.4]]})
    np.testing.assert_allclose(t["theta0"], r["theta0"], rtol=0, atol=1e-12)
    np.testing.assert_allclose(t["theta1"], r["theta1"], rtol=0, atol=1e-12)
    with pytest.raises(stiction.InputError, match="no input 'speed'"):
        system.run(inputs={"speed": 1.0})
    with pytest.raises(stiction.InputError, match=r"inputs\['q0_ref'\]"):
        system.run(inputs={"q0_ref": "fast"})


def _pi_controller_fmu(tmp_path):
    """The PIController test FMU (tests/fixtures/pi_controller), compiled with the system C
    compiler and packed as the Rust tests do."""
    src = EXAMPLES.parent / "tests" / "fixtures" / "pi_controller"
    so = tmp_path / "PIController.so"
    subprocess.run(
        ["cc", "-shared", "-fPIC", "-O2", "-std=c99", "-o", str(so), str(src / "pi_controller.c"), "-lm"],
        check=True,
        timeout=300,
    )
    fmu = tmp_path / "PIController.fmu"
    with zipfile.ZipFile(fmu, "w", zipfile.ZIP_DEFLATED) as z:
        z.write(src / "modelDescription2.xml", "modelDescription.xml")
        z.write(so, "binaries/linux64/PIController.so")
    return fmu


def test_a_signal_block_controller_runs_from_python(tmp_path):
    """examples/fmu_pi_gear_hold.json: a PI controller FMU as a signal block drives a
    self-locking gear; with the motor off the gear holds the load exactly."""
    doc = json.loads((EXAMPLES / "fmu_pi_gear_hold.json").read_text())
    doc["components"]["pi"]["path"] = str(_pi_controller_fmu(tmp_path))
    system = stiction.load(doc)
    r = system.run()
    late = r["time"] >= 1.35
    assert np.all(r["v"][late] == 0.0)
    assert np.all(r["q"][late] == r["q"][late][0]) and r["q"][late][0] > 0.8
    track = (r["time"] >= 0.8) & (r["time"] < 1.0)
    assert np.all(np.abs(r["v"][track] - 1.0) < 0.03)
    # A slower reference through the inputs lifts the load less far.
    slow = system.run(inputs={"w_ref": 0.5})
    assert 0.2 < slow["q"][-1] < r["q"][-1] - 0.4
