"""Creep of a grasped object and of a box on an accelerating conveyor: stiction against
MuJoCo with its documented anti-slip settings (elliptic friction cone, impratio 10,
noslip iterations), issue 35.

    python python/bench/vs_mujoco.py [--stiction PATH] [--venv DIR]

MuJoCo comes from PyPI into this script's own venv (DIR, default ~/.cache/stiction/venv-mujoco),
created on the first run; it is not a dependency of the stiction package. stiction runs
through its CLI (`stiction run`, PATH: default the release binary under target/ or
$CARGO_TARGET_DIR, else `stiction` on PATH) on examples/pinch_hold.json and
examples/conveyor.json. The MuJoCo models are the same scenes:

- pinch: a 0.1 kg box held between two pads (slide joints along x) each pushed in by a
  constant force N with 2 mu N = 1.05 m g, mu = 0.5, gravity; drift = change of the box's
  height from t = 2 s to t = 100 s;
- conveyor: a 1 kg box (0.2 x 0.2 x 0.02 m) on a tray driven at the velocity profile of
  conveyor.json (0.4 g up, cruise, 0.4 g down), mu = 0.5; drift = change of the box's
  position on the tray within the accelerating phase (0.6..1.0 s) and after the ride
  (t = 3 s against t = 0.45 s).

Both engines run at T = 5e-4 s.

    python python/bench/vs_mujoco.py --speed [--counts 5,50,200] [--stop-time 4] [--repeat R]

prints the speed of contact-rich scenes instead: N copies of examples/stack.json (three boxes
on corner body_contacts, the top one pushed) against the same boxes in MuJoCo (box geoms,
mu 0.5, the same push) with its default settings and with the anti-slip ones: wall time per
simulated second, per step, and the creep of the boxes at the same phase 2 s apart
(python/bench/stacks.py).
"""

import argparse
import csv
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
G = 9.81
# The MuJoCo release the figures of docs/performance.md were measured with.
MUJOCO = "mujoco==4.0.0"


def ensure_mujoco(venv: Path):
    """Re-run this script inside `venv` with mujoco installed (created on first use)."""
    try:
        import mujoco  # noqa: F401

        return
    except ImportError:
        pass
    py = venv / "bin" / "python"
    if not py.exists():
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
        subprocess.run([str(py), "-m", "pip", "install", "-q", MUJOCO, "numpy"], check=True)
    os.execv(str(py), [str(py), *sys.argv])


def stiction_binary(arg):
    if arg:
        return arg
    for d in [os.environ.get("CARGO_TARGET_DIR"), ROOT / "target"]:
        if d and (Path(d) / "release" / "stiction").exists():
            return str(Path(d) / "release" / "stiction")
    found = shutil.which("stiction")
    if not found:
        sys.exit("no stiction binary: build it (cargo build --release) or pass --stiction")
    return found


def run_stiction(binary, example):
    with tempfile.TemporaryDirectory() as d:
        out = Path(d) / "out.csv"
        subprocess.run([binary, "run", "--quiet", "-o", str(out), str(ROOT / "examples" / example)], check=True)
        rows = list(csv.DictReader(open(out)))
    return {k: [float(r[k]) for r in rows] for k in rows[0]}


def at(cols, key, t):
    i = min(range(len(cols["time"])), key=lambda i: abs(cols["time"][i] - t))
    return cols[key][i]


def conveyor_velocity(t, a=0.4 * G):
    """The tray velocity of conveyor.json: 0 until 0.5 s, up at a, cruise, down at a."""
    v = a * 0.5
    if t < 0.5:
        return 0.0
    if t < 1.0:
        return a * (t - 0.5)
    if t < 1.5:
        return v
    if t < 2.0:
        return v - a * (t - 1.5)
    return 0.0


OPTION = (
    '<option timestep="5e-4" integrator="implicitfast" cone="elliptic" impratio="10" noslip_iterations="20" gravity="0 0 -9.81"/>'
)


def mujoco_pinch():
    import mujoco

    m, mu = 0.1, 0.5
    n = 1.05 * m * G / (2 * mu)
    xml = f"""
<mujoco>
  {OPTION}
  <worldbody>
    <body name="object" pos="0 0 0">
      <freejoint/>
      <geom type="box" size="0.02 0.02 0.02" mass="{m}" friction="{mu} 0.005 0.0001"/>
    </body>
    <body name="left" pos="-0.03 0 0">
      <joint name="lx" type="slide" axis="1 0 0"/>
      <geom type="box" size="0.01 0.03 0.03" mass="0.1" friction="{mu} 0.005 0.0001"/>
    </body>
    <body name="right" pos="0.03 0 0">
      <joint name="rx" type="slide" axis="1 0 0"/>
      <geom type="box" size="0.01 0.03 0.03" mass="0.1" friction="{mu} 0.005 0.0001"/>
    </body>
  </worldbody>
  <actuator>
    <motor joint="lx" gear="1"/>
    <motor joint="rx" gear="1"/>
  </actuator>
</mujoco>"""
    model = mujoco.MjModel.from_xml_string(xml)
    data = mujoco.MjData(model)
    data.ctrl[:] = [n, -n]
    z = {}
    steps = round(100.0 / model.opt.timestep)
    for k in range(1, steps + 1):
        mujoco.mj_step(model, data)
        if k == round(2.0 / model.opt.timestep):
            z[2.0] = data.qpos[2]
    z[100.0] = data.qpos[2]
    return z[100.0] - z[2.0]


def mujoco_conveyor():
    import mujoco

    xml = f"""
<mujoco>
  {OPTION}
  <worldbody>
    <body name="tray" pos="0 0 -0.01">
      <joint name="tx" type="slide" axis="1 0 0"/>
      <geom type="box" size="1 0.3 0.01" mass="100" friction="0.5 0.005 0.0001"/>
    </body>
    <body name="box" pos="0 0 0.01">
      <freejoint/>
      <geom type="box" size="0.1 0.1 0.01" mass="1" friction="0.5 0.005 0.0001"/>
    </body>
  </worldbody>
  <actuator>
    <velocity joint="tx" kv="1e5"/>
  </actuator>
</mujoco>"""
    model = mujoco.MjModel.from_xml_string(xml)
    data = mujoco.MjData(model)
    dt = model.opt.timestep
    rel = {}
    marks = {0.45: "start", 0.6: "a0", 1.0: "a1", 3.0: "end"}
    for k in range(1, round(3.0 / dt) + 1):
        data.ctrl[0] = conveyor_velocity(k * dt)
        mujoco.mj_step(model, data)
        for t, name in marks.items():
            if k == round(t / dt):
                rel[name] = data.qpos[1] - data.qpos[0]
    return rel["a1"] - rel["a0"], rel["end"] - rel["start"]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--stiction", help="path of the stiction binary")
    ap.add_argument("--venv", default=str(Path.home() / ".cache" / "stiction" / "venv-mujoco"))
    ap.add_argument("--speed", action="store_true", help="the stacks speed table instead of the creep comparison")
    ap.add_argument("--counts", default="5,50,200", help="--speed: numbers of stacks")
    ap.add_argument("--stop-time", type=float, default=4.0, help="--speed: simulated seconds")
    ap.add_argument("--repeat", type=int, default=1, help="--speed: runs per figure (the median is printed)")
    args = ap.parse_args()
    ensure_mujoco(Path(args.venv))
    import mujoco

    binary = stiction_binary(args.stiction)
    if args.speed:
        return speed(binary, args)
    p = run_stiction(binary, "pinch_hold.json")
    s_pinch = at(p, "z", 100.0) - at(p, "z", 2.0)
    c = run_stiction(binary, "conveyor.json")
    rel = lambda t: at(c, "x", t) - at(c, "tray_x", t)  # noqa: E731
    s_conv_phase, s_conv_net = rel(1.0) - rel(0.6), rel(3.0) - rel(0.45)
    m_pinch = mujoco_pinch()
    m_conv_phase, m_conv_net = mujoco_conveyor()
    print(f"MuJoCo {mujoco.__version__} (elliptic cone, impratio 10, noslip_iterations 20, implicitfast, T = 5e-4 s)")
    print("| scenario | stiction | MuJoCo |")
    print("|---|---|---|")
    print(f"| pinch, 2 mu N = 1.05 m g: height drift 2..100 s | {s_pinch:.3e} m | {m_pinch:.3e} m |")
    print(f"| conveyor 0.4 g: drift on the tray while accelerating (0.6..1.0 s) | {s_conv_phase:.3e} m | {m_conv_phase:.3e} m |")
    print(f"| conveyor 0.4 g: net position on the tray after the ride | {s_conv_net:.3e} m | {m_conv_net:.3e} m |")


def speed(binary, args):
    """`--speed`: the stacks table (python/bench/stacks.py)."""
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    import stacks

    counts = [int(c) for c in args.counts.split(",")]
    rows = stacks.speed_table(binary, counts, args.stop_time, args.repeat)
    stacks.print_speed_table(rows, args.stop_time)


if __name__ == "__main__":
    main()
