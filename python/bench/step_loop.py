"""Per-iteration cost of a controller loop in Python: stiction's step loop against MuJoCo's,
on the same body in both.

    python3 python/bench/step_loop.py [--iterations 100000] [--repeat 2] [--venv DIR]

Each iteration reads two outputs (position and velocity of the body along x), computes a PD
force toward 0.5 m, 20 (0.5 − q) − 4 v, sets it as the one input and takes one step
(T = 1 ms). Two bodies, each modelled the same in both tools (μ = 0.5, m = 1 kg, asserted):

- block: a 1-D body with Coulomb friction F = μ m g = 4.905 N. stiction: `kikuuwe_a` (RK4)
  pushed by a force_source that reads the input u; MuJoCo: a body on a slide joint with
  `frictionloss` 4.905 N (MuJoCo's dry joint friction) and a motor on the joint;
- box: a free 1 kg box (10 cm) on the ground, pushed along x at its centre (it slides, it
  cannot tip: μ < half its width over its height). stiction: a `rigid_body` on four corner
  `plane_contact`s (K = 1e5 N/m, B = 100 N·s/m, RK4); MuJoCo: a box geom with a free joint
  on a plane, both geoms with friction 0.5 (MuJoCo takes the larger of the two).

stiction: ``sim.read`` twice, ``sim.inputs["u"] = ...``, ``sim.step()``; MuJoCo: ``d.qpos``,
``d.qvel``, ``d.ctrl[0] = ...``, ``mujoco.mj_step(m, d)``, at its documented settings for
holding (bench_env.Settings, timestep 1 ms) and at its defaults (Euler, pyramidal cone, no
noslip). The PD holds the body where |20 (0.5 − q)| ≤ 4.905 N once it stops, so a final q
other than where the body stopped is creep: the script prints q after the loop.

MuJoCo is not a dependency of the package: it runs (pinned, bench_env.py) in its own venv,
target/py-bench-mujoco (created on first use), in a child process; only the loop is timed in
either. The two alternate, --repeat times; the script prints µs per iteration of each and the
ratio stiction / MuJoCo of each pair.
"""

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_env import G, VENV, Settings, contact_mu, mujoco_python, require_stiction  # noqa: E402

MU, MASS, T = 0.5, 1.0, 0.001
F = MU * MASS * G  # 4.905 N


def block_system():
    return {
        "name": "block_on_plane",
        "solver": {"method": "rk4", "step": T, "stop_time": 1.0},
        "inputs": {"u": {"unit": "N", "start": 0}},
        "output": {"interval": 0.01, "signals": {"q": "block.q", "v": "block.v"}},
        "components": {
            "block": {"type": "kikuuwe_a", "mass": MASS, "F": F},
            "motor": {"type": "force_source", "force": {"signal": "u"}},
        },
        "connections": [{"from": "motor.body", "to": "block.body"}],
    }


def box_system():
    h, k = 0.05, 1e5
    sag = MASS * G / (4 * k)  # static penetration of each corner
    comps = {
        "box": {
            "type": "rigid_body",
            "mass": MASS,
            "inertia": [MASS * (2 * h) ** 2 / 6] * 3,
            "gravity": [0, 0, -G],
            "init": {"p": [0, 0, h - sag]},
        },
        "motor": {"type": "force_source", "domain": "point3", "force": [{"signal": "u"}, 0, 0]},
    }
    conns = [{"from": "motor.body", "to": "box"}]
    for i, (x, y) in enumerate([(-h, -h), (-h, h), (h, -h), (h, h)]):
        comps[f"c{i}"] = {"type": "plane_contact", "K": k, "B": 100.0, "mu": MU}
        conns.append({"from": f"c{i}.body", "to": "box", "at": [x, y, -h]})
    return {
        "name": "box_on_plane",
        "solver": {"method": "rk4", "step": T, "stop_time": 1.0},
        "inputs": {"u": {"unit": "N", "start": 0}},
        "output": {"interval": 0.01, "signals": {"q": "box.p[0]", "v": "box.v[0]"}},
        "components": comps,
        "connections": conns,
    }


STICTION = {"block": (block_system, "block.q", "block.v"), "box": (box_system, "box.p[0]", "box.v[0]")}


def stiction_loop(scenario, n):
    import stiction

    make, q_name, v_name = STICTION[scenario]
    system = make()
    mus = {c.get("mu", c.get("F", 0) / (MASS * G)) for c in system["components"].values() if "mu" in c or "F" in c}
    assert mus == {MU}, f"{scenario}: μ {mus}"
    sim = stiction.load(system).simulation(threads=1)
    inputs, read, step = sim.inputs, sim.read, sim.step
    t0 = time.perf_counter()
    for _ in range(n):
        q = read(q_name)
        v = read(v_name)
        inputs["u"] = 20.0 * (0.5 - q) - 4.0 * v
        step()
    dt = time.perf_counter() - t0
    return dt / n * 1e6, float(read(q_name))


def mujoco_model(scenario, s):
    import mujoco

    if scenario == "block":
        xml = f"""
<mujoco>
  {s.option()}
  <worldbody>
    <body name="block">
      <joint name="x" type="slide" axis="1 0 0" frictionloss="{F}"/>
      <geom type="box" size="0.05 0.05 0.05" mass="{MASS}" contype="0" conaffinity="0"/>
    </body>
  </worldbody>
  <actuator><motor joint="x" gear="1"/></actuator>
</mujoco>"""
    else:
        xml = f"""
<mujoco>
  {s.option()}
  <worldbody>
    <geom type="plane" size="5 5 0.1" friction="{MU} 0.005 0.0001"/>
    <body name="box" pos="0 0 0.05">
      <freejoint/>
      <geom type="box" size="0.05 0.05 0.05" mass="{MASS}" friction="{MU} 0.005 0.0001"/>
      <site name="s"/>
    </body>
  </worldbody>
  <actuator><motor site="s" gear="1 0 0 0 0 0"/></actuator>
</mujoco>"""
    m = mujoco.MjModel.from_xml_string(xml)
    d = mujoco.MjData(m)
    if scenario == "block":
        assert abs(m.dof_frictionloss[0] - MU * MASS * G) < 1e-12 and abs(m.body_mass[1] - MASS) < 1e-12
    else:
        mujoco.mj_forward(m, d)
        assert contact_mu(m, d) == [MU], f"box: contacts' μ {contact_mu(m, d)}"
    return m, d


def mujoco_loop(scenario, s, n):
    import mujoco

    m, d = mujoco_model(scenario, s)
    t0 = time.perf_counter()
    for _ in range(n):
        q = d.qpos[0]
        v = d.qvel[0]
        d.ctrl[0] = 20.0 * (0.5 - q) - 4.0 * v
        mujoco.mj_step(m, d)
    dt = time.perf_counter() - t0
    return dt / n * 1e6, float(d.qpos[0])


# MuJoCo's settings: documented for holding (1 ms as the loop's T), and its defaults.
MUJOCO_SETTINGS = {
    "holding": Settings(timestep=T),
    "defaults": Settings(integrator="Euler", cone="pyramidal", impratio=1.0, noslip_iterations=0,
                         noslip_tolerance=1e-6, timestep=T),
}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--iterations", type=int, default=100_000)
    ap.add_argument("--repeat", type=int, default=2)
    ap.add_argument("--venv", default=str(VENV), help="the MuJoCo venv (default target/py-bench-mujoco)")
    ap.add_argument("--mujoco-only", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.mujoco_only:
        out = {f"{sc} {name}": mujoco_loop(sc, s, args.iterations)
               for sc in STICTION for name, s in MUJOCO_SETTINGS.items()}
        print(json.dumps(out))
        return
    require_stiction()
    py = mujoco_python(args.venv)
    for name, s in MUJOCO_SETTINGS.items():
        print(f"MuJoCo {name}: {s.describe()}")
    print("stiction: RK4, T = 1 ms, one thread")
    print()
    print("| run | body | stiction µs/iteration (final q) | MuJoCo holding µs/iteration (final q) | ratio | MuJoCo defaults µs/iteration (final q) | ratio |")
    print("|---|---|---|---|---|---|---|")
    for r in range(args.repeat):
        st = {sc: stiction_loop(sc, args.iterations) for sc in STICTION}
        out = subprocess.run(
            [str(py), __file__, "--mujoco-only", "--iterations", str(args.iterations)],
            check=True, capture_output=True, text=True,
        )
        mj = json.loads(out.stdout)
        for sc in STICTION:
            s, qs = st[sc]
            h, qh = mj[f"{sc} holding"]
            d, qd = mj[f"{sc} defaults"]
            print(f"| {r + 1} | {sc} | {s:.2f} ({qs:.4f} m) | {h:.2f} ({qh:.4f} m) | {s / h:.2f} | {d:.2f} ({qd:.4f} m) | {s / d:.2f} |")


if __name__ == "__main__":
    main()
