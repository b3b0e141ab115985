"""Per-iteration cost of a controller loop in Python: stiction's step loop against MuJoCo's.

    python python/bench/step_loop.py [--iterations 100000] [--repeat 2]

Each iteration reads two outputs (position and velocity of the body), computes a PD force
toward 0.5 m, sets it as the one input and takes one step (T = 1 ms):

- stiction: a 1 kg block on a frictional surface (kikuuwe_a, Coulomb F = 4.905 N = 0.5·m·g,
  RK4) pushed by a force_source that reads the system input u: ``sim.read`` twice,
  ``sim.inputs["u"] = ...``, ``sim.step()``;
- MuJoCo: a 1 kg box (10 cm) on a plane (friction 0.5) with a free joint and one motor
  along x: ``d.qpos[0]``, ``d.qvel[0]``, ``d.ctrl[0] = ...``, ``mujoco.mj_step(m, d)``.

MuJoCo is not a dependency of the package: it runs in its own venv, target/py-bench-mujoco
(created on first use, `pip install mujoco==4.0.0`), in a child process; only the loop is
timed in either. The two alternate, --repeat times; the script prints µs per iteration of
each and the ratio stiction / MuJoCo of each pair.
"""

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
VENV = ROOT / "target" / "py-bench-mujoco"
MUJOCO = "mujoco==4.0.0"

SYSTEM = {
    "name": "block_on_plane",
    "solver": {"method": "rk4", "step": 0.001, "stop_time": 1.0},
    "inputs": {"u": {"unit": "N", "start": 0}},
    "output": {"interval": 0.01, "signals": {"q": "block.q", "v": "block.v"}},
    "components": {
        "block": {"type": "kikuuwe_a", "mass": 1.0, "F": 4.905},
        "motor": {"type": "force_source", "force": {"signal": "u"}},
    },
    "connections": [{"from": "motor.body", "to": "block.body"}],
}

MJCF = """
<mujoco>
  <option timestep="0.001"/>
  <worldbody>
    <geom type="plane" size="5 5 0.1" friction="0.5 0.005 0.0001"/>
    <body name="box" pos="0 0 0.05">
      <freejoint/>
      <geom type="box" size="0.05 0.05 0.05" mass="1"/>
      <site name="s"/>
    </body>
  </worldbody>
  <actuator><motor site="s" gear="1 0 0 0 0 0"/></actuator>
</mujoco>
"""


def stiction_loop(n):
    import stiction

    sim = stiction.load(SYSTEM).simulation(threads=1)
    inputs, read, step = sim.inputs, sim.read, sim.step
    t0 = time.perf_counter()
    for _ in range(n):
        q = read("block.q")
        v = read("block.v")
        inputs["u"] = 20.0 * (0.5 - q) - 4.0 * v
        step()
    dt = time.perf_counter() - t0
    return dt / n * 1e6, q


def mujoco_loop(n):
    import mujoco

    m = mujoco.MjModel.from_xml_string(MJCF)
    d = mujoco.MjData(m)
    t0 = time.perf_counter()
    for _ in range(n):
        q = d.qpos[0]
        v = d.qvel[0]
        d.ctrl[0] = 20.0 * (0.5 - q) - 4.0 * v
        mujoco.mj_step(m, d)
    dt = time.perf_counter() - t0
    return dt / n * 1e6, float(q)


def mujoco_python():
    py = VENV / "bin" / "python"
    ok = py.exists() and subprocess.run([str(py), "-c", "import mujoco"], capture_output=True).returncode == 0
    if not ok:
        print(f"creating {VENV} with {MUJOCO} ...", file=sys.stderr)
        subprocess.run([sys.executable, "-m", "venv", str(VENV)], check=True)
        subprocess.run([str(py), "-m", "pip", "install", "--quiet", MUJOCO], check=True)
    return py


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--iterations", type=int, default=100_000)
    ap.add_argument("--repeat", type=int, default=2)
    ap.add_argument("--mujoco-only", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.mujoco_only:
        print(json.dumps(mujoco_loop(args.iterations)))
        return
    py = mujoco_python()
    for r in range(args.repeat):
        s, qs = stiction_loop(args.iterations)
        out = subprocess.run(
            [str(py), __file__, "--mujoco-only", "--iterations", str(args.iterations)],
            check=True, capture_output=True, text=True,
        )
        m, qm = json.loads(out.stdout)
        print(f"run {r + 1}: stiction {s:.2f} µs/iteration (q = {qs:.4f} m), "
              f"MuJoCo {m:.2f} µs/iteration (q = {qm:.4f} m), ratio stiction/MuJoCo {s / m:.2f}")


if __name__ == "__main__":
    main()
