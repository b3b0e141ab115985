"""Creep of a grasped object and of a box on an accelerating conveyor: stiction against
MuJoCo at the settings MuJoCo's documentation recommends for holding objects, and a sweep
of those settings that finds MuJoCo's best figure and its cost.

    python3 python/bench/vs_mujoco.py [--stiction PATH] [--venv DIR] [--sweep]

stiction runs through its CLI (`stiction run`; PATH: default the release binary under
target/ or $CARGO_TARGET_DIR, else `stiction` on PATH) on examples/pinch_hold.json and
examples/conveyor.json. MuJoCo (pinned in bench_env.py) runs in its own venv (DIR, default
target/py-bench-mujoco, created on the first run); the script re-runs itself there.

The scenes, the same in both (μ = 0.5 on every contact, asserted in both models; MuJoCo
takes the larger of two geoms' coefficients, so every geom carries 0.5):

- pinch: a 0.1 kg box between two pads, each pressing with N so that 2μN = 1.05 m g, under
  gravity (stiction: two body_contacts on fixed planes pressed in by N/K; MuJoCo: two pads
  on slide joints pushed by motors with N); creep = change of the box's height from t = 2 s
  to t = 100 s. Check that the settings do not hold more than μ allows: at 2μN = 0.95 m g
  the box must slide down at (1 − 0.95) g.
- conveyor: a 1 kg box (0.2 × 0.2 × 0.02 m) on a tray that follows conveyor.json's profile
  (0.4 g up from 0.5 s to 1 s, cruise, 0.4 g down); creep = change of the box's position
  on the tray within the accelerating phase (0.6..1.0 s) and over the ride (3 s against
  0.45 s). stiction's tray is a velocity source; MuJoCo's is a 100 kg body on a slide joint
  pushed by (M + m)·a(t), which follows the same velocity profile (the error is printed).
  Check: at 0.6 g the box must slip at the relative acceleration −(0.6 − 0.5) g.

--sweep varies MuJoCo's settings one at a time around the documented ones (integrator, cone
and impratio, noslip iterations and tolerance, timestep), then combines the best of each,
and prints each setting's creep and cost (CPU per simulated second, this machine); the best
creep among the settings that pass the sliding checks is what the README quotes. It takes
about 5 minutes (the 1000-iteration noslip row alone about 2).

    python3 python/bench/vs_mujoco.py --speed [--counts 5,50,200] [--stop-time 4] [--repeat R]

prints the speed of contact-rich scenes instead: N copies of examples/stack.json (three boxes
on corner body_contacts, the top one pushed) against the same boxes in MuJoCo (box geoms,
mu 0.5, the same push) with its default settings and with the anti-slip ones of the issue's
table (elliptic, impratio 10, 20 noslip iterations, implicitfast, T = 5e-4 s): wall time per
simulated second, per step, and the creep of the boxes at the same phase 2 s apart
(python/bench/stacks.py). It runs wholly in the MuJoCo venv.
"""

import argparse
import csv
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_env import G, ROOT, Settings, contact_mu, in_mujoco_venv, mujoco_python, stiction_binary  # noqa: E402

MU = 0.5
PINCH_MASS = 0.1
CONVEYOR_A = 0.4 * G


# ---------------------------------------------------------------- stiction (the CLI)


def stiction_run(binary, example, sets=()):
    """Run an example; its columns as lists, and the CPU time of the whole process (load, run, write)."""
    with tempfile.TemporaryDirectory() as d:
        out = Path(d) / "out.csv"
        cmd = [binary, "run", "--quiet", "-o", str(out), str(ROOT / "examples" / example)]
        for s in sets:
            cmd += ["--set", s]
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        subprocess.run(cmd, check=True)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
        rows = list(csv.DictReader(open(out)))
    return {k: [float(r[k]) for r in rows] for k in rows[0]}, cpu


def at(cols, key, t):
    i = min(range(len(cols["time"])), key=lambda i: abs(cols["time"][i] - t))
    return cols[key][i]


def stiction_mu(example):
    """The μ of every contact of an example (asserted equal to MU)."""
    system = json.loads((ROOT / "examples" / example).read_text())
    mus = {c["mu"] for c in system["components"].values() if "mu" in c}
    assert mus == {MU}, f"{example}: contacts' μ {mus}, expected {MU}"
    return mus


def stiction_pinch(binary):
    stiction_mu("pinch_hold.json")
    cols, cpu = stiction_run(binary, "pinch_hold.json")
    return {"creep": at(cols, "z", 100.0) - at(cols, "z", 2.0), "cpu_per_s": cpu / 100.0}


def stiction_conveyor(binary):
    stiction_mu("conveyor.json")
    cols, cpu = stiction_run(binary, "conveyor.json")

    def rel(t):
        return at(cols, "x", t) - at(cols, "tray_x", t)

    return {"phase": rel(1.0) - rel(0.6), "net": rel(3.0) - rel(0.45), "cpu_per_s": cpu / 3.0}


# ---------------------------------------------------------------- MuJoCo


def pinch_model(s, ratio):
    import mujoco

    n = ratio * PINCH_MASS * G / (2 * MU)
    fr = f'friction="{MU} 0.005 0.0001"'
    xml = f"""
<mujoco>
  {s.option()}
  <worldbody>
    <body name="object">
      <freejoint/>
      <geom type="box" size="0.02 0.02 0.02" mass="{PINCH_MASS}" {fr}/>
    </body>
    <body name="left" pos="-0.03 0 0">
      <joint name="lx" type="slide" axis="1 0 0"/>
      <geom type="box" size="0.01 0.03 0.03" mass="0.1" {fr}/>
    </body>
    <body name="right" pos="0.03 0 0">
      <joint name="rx" type="slide" axis="1 0 0"/>
      <geom type="box" size="0.01 0.03 0.03" mass="0.1" {fr}/>
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
    return model, data


def mujoco_pinch(s, t_end=100.0):
    """Height creep of the held box from 2 s to t_end, and the CPU per step."""
    import mujoco

    model, data = pinch_model(s, 1.05)
    dt = model.opt.timestep
    k2, steps = round(2.0 / dt), round(t_end / dt)
    t0 = time.process_time()
    for k in range(1, steps + 1):
        mujoco.mj_step(model, data)
        if k == k2:
            z2 = float(data.qpos[2])
            mus = contact_mu(model, data)
    cpu = time.process_time() - t0
    assert mus == [MU], f"pinch: contacts' μ {mus}, expected {MU}"
    return {"creep": float(data.qpos[2]) - z2, "us_per_step": cpu / steps * 1e6, "cpu_per_s": cpu / t_end}


def mujoco_pinch_slides(s):
    """At 2μN = 0.95 m g the box slides: its mean acceleration from 0.1 s to 0.3 s (it leaves the
    pads at about 0.45 s) against (1 − 0.95) g."""
    import mujoco

    model, data = pinch_model(s, 0.95)
    dt = model.opt.timestep
    v = {}
    k1, k2 = round(0.1 / dt), round(0.3 / dt)
    for k in range(1, k2 + 1):
        mujoco.mj_step(model, data)
        if k in (k1, k2):
            v[k] = float(data.qvel[2])
    got = (v[k2] - v[k1]) / 0.2
    return got, -(1 - 0.95) * G


def tray_profile(t, a):
    """Position, velocity and acceleration of the tray of conveyor.json at acceleration a."""
    if t < 0.5:
        return 0.0, 0.0, 0.0
    if t < 1.0:
        u = t - 0.5
        return 0.5 * a * u * u, a * u, a
    x1, v = 0.125 * a, 0.5 * a
    if t < 1.5:
        return x1 + v * (t - 1.0), v, 0.0
    x2 = x1 + 0.5 * v
    if t < 2.0:
        u = t - 1.5
        return x2 + v * u - 0.5 * a * u * u, v - a * u, -a
    return x2 + 0.5 * v - 0.125 * a, 0.0, 0.0


def conveyor_run(s, a, marks, t_end):
    """Run the conveyor at tray acceleration a; the box's position and velocity relative to
    the tray at the marked times, the tray's largest velocity deviation from the profile, CPU per step."""
    import mujoco

    tray_mass, box_mass = 100.0, 1.0
    fr = f'friction="{MU} 0.005 0.0001"'
    xml = f"""
<mujoco>
  {s.option()}
  <worldbody>
    <body name="tray" pos="0 0 -0.01">
      <joint name="tx" type="slide" axis="1 0 0"/>
      <geom type="box" size="1 0.3 0.01" mass="{tray_mass}" {fr}/>
    </body>
    <body name="box" pos="0 0 0.01">
      <freejoint/>
      <geom type="box" size="0.1 0.1 0.01" mass="{box_mass}" {fr}/>
    </body>
  </worldbody>
</mujoco>"""
    model = mujoco.MjModel.from_xml_string(xml)
    data = mujoco.MjData(model)
    dt = model.opt.timestep
    at_step = {round(t / dt): t for t in marks}
    rel, dev, mus = {}, 0.0, None
    t0 = time.process_time()
    steps = round(t_end / dt)
    for k in range(steps):
        # The force that gives tray and box together the profile's acceleration.
        data.qfrc_applied[0] = (tray_mass + box_mass) * tray_profile(k * dt, a)[2]
        mujoco.mj_step(model, data)
        dev = max(dev, abs(float(data.qvel[0]) - tray_profile((k + 1) * dt, a)[1]))
        if mus is None and data.ncon:
            mus = contact_mu(model, data)
        if k + 1 in at_step:
            rel[at_step[k + 1]] = (float(data.qpos[1] - data.qpos[0]), float(data.qvel[1] - data.qvel[0]))
    cpu = time.process_time() - t0
    assert mus == [MU], f"conveyor: contacts' μ {mus}, expected {MU}"
    return rel, dev, cpu / steps * 1e6, cpu / t_end


def mujoco_conveyor(s):
    rel, dev, us, cpu_s = conveyor_run(s, CONVEYOR_A, [0.45, 0.6, 1.0, 3.0], 3.0)
    return {
        "phase": rel[1.0][0] - rel[0.6][0],
        "net": rel[3.0][0] - rel[0.45][0],
        "tray_error": dev,
        "us_per_step": us,
        "cpu_per_s": cpu_s,
    }


def mujoco_conveyor_slips(s):
    """At 0.6 g the box slips: its relative acceleration from 0.6 s to 0.9 s against −(0.6 − μ) g."""
    rel, _, _, _ = conveyor_run(s, 0.6 * G, [0.6, 0.9], 0.9)
    return (rel[0.9][1] - rel[0.6][1]) / 0.3, -(0.6 - MU) * G


def evaluate(s):
    """Everything the table and the sweep need of one setting."""
    pinch = mujoco_pinch(s)
    got, want = mujoco_pinch_slides(s)
    pinch["slides"], pinch["slide_ok"] = got, abs(got - want) <= 0.1 * abs(want)
    conv = mujoco_conveyor(s)
    got, want = mujoco_conveyor_slips(s)
    conv["slips"], conv["slip_ok"] = got, abs(got - want) <= 0.1 * abs(want)
    return {"settings": s.to_dict(), "pinch": pinch, "conveyor": conv}


FACTORS = {
    "integrator": [{"integrator": i} for i in ["Euler", "implicit", "RK4", "discrete"]],
    "cone and impratio": [{"cone": c, "impratio": r} for c, r in [("pyramidal", 1.0), ("elliptic", 1.0), ("elliptic", 100.0)]],
    # noslip_tolerance 0: no early termination, every iteration runs.
    "noslip": [{"noslip_iterations": n, "noslip_tolerance": t}
               for n, t in [(0, 1e-6), (100, 1e-6), (100, 1e-12), (10, 0.0), (1000, 0.0)]],
    "timestep": [{"timestep": dt} for dt in [1e-3, 2e-4]],
}


def mujoco_main(args):
    """The MuJoCo part, in the MuJoCo venv: JSON on standard output."""
    import mujoco

    base = Settings()
    documented = evaluate(base)
    results = {"version": mujoco.__version__, "documented": documented}
    if args.sweep:
        rows, combined = [documented], {}
        for factor, changes in FACTORS.items():
            group = [documented] + [evaluate(base.with_(**c)) for c in changes]
            rows += group[1:]
            # The value of this factor with the least pinch creep among the settings that still slide.
            ok = [r for r in group if r["pinch"]["slide_ok"] and r["conveyor"]["slip_ok"]] or [documented]
            best = min(ok, key=lambda r: abs(r["pinch"]["creep"]))
            combined.update({k: best["settings"][k] for k in changes[0]})
        if base.with_(**combined) != base:
            rows.append(evaluate(base.with_(**combined)))
        results["sweep"] = rows
    print(json.dumps(results))


# ---------------------------------------------------------------- report


def fmt_settings(d):
    return Settings(**d).describe()


def print_table(version, st_pinch, st_conv, doc):
    s = Settings(**doc["settings"])
    print(f"MuJoCo {version} at its documented settings for holding: {s.describe()}")
    print("stiction: examples/pinch_hold.json and examples/conveyor.json (RK4, T = 5e-4 s); μ = 0.5 in both models")
    print()
    print("| scenario | stiction | MuJoCo |")
    print("|---|---|---|")
    p, c = doc["pinch"], doc["conveyor"]
    print(f"| pinch, 2μN = 1.05 m g: height creep from 2 to 100 s | {st_pinch['creep']:.3g} m | {p['creep']:.3g} m |")
    print(f"| conveyor 0.4 g: creep on the tray while accelerating (0.6..1.0 s) | {st_conv['phase']:.3g} m | {c['phase']:.3g} m |")
    print(f"| conveyor 0.4 g: net creep on the tray over the ride | {st_conv['net']:.3g} m | {c['net']:.3g} m |")
    print(f"| CPU per simulated second: pinch / conveyor (stiction: the whole process) "
          f"| {st_pinch['cpu_per_s'] * 1e3:.1f} / {st_conv['cpu_per_s'] * 1e3:.1f} ms "
          f"| {p['cpu_per_s'] * 1e3:.1f} / {c['cpu_per_s'] * 1e3:.1f} ms |")
    print()
    print(f"MuJoCo checks: at 2μN = 0.95 m g the box slides at {p['slides']:.4g} m/s² (expected {-(0.05) * G:.4g}); "
          f"at 0.6 g the conveyor box slips at {c['slips']:.4g} m/s² (expected {-(0.1) * G:.4g}); "
          f"tray velocity off its profile by at most {c['tray_error']:.2g} m/s")


def print_sweep(rows, st_pinch, st_conv):
    print()
    print("Sweep of MuJoCo's settings (one at a time around the documented ones; the last row combines the best of each).")
    print("cost = MuJoCo's CPU time per simulated second on this machine; 'slides' = the sliding checks pass")
    print()
    print("| settings | pinch creep 2..100 s | conveyor creep while accelerating | conveyor net | slides | cost pinch | cost conveyor |")
    print("|---|---|---|---|---|---|---|")
    for r in rows:
        p, c = r["pinch"], r["conveyor"]
        ok = "yes" if p["slide_ok"] and c["slip_ok"] else f"no ({p['slides']:.3g}, {c['slips']:.3g} m/s²)"
        print(f"| {fmt_settings(r['settings'])} | {p['creep']:.3g} m | {c['phase']:.3g} m | {c['net']:.3g} m | {ok} "
              f"| {p['cpu_per_s'] * 1e3:.1f} ms/s | {c['cpu_per_s'] * 1e3:.1f} ms/s |")
    ok = [r for r in rows if r["pinch"]["slide_ok"] and r["conveyor"]["slip_ok"]]
    print()
    for key, name, st in [("creep", "pinch creep", st_pinch["creep"]), ("phase", "conveyor creep while accelerating", st_conv["phase"])]:
        scen = "pinch" if key == "creep" else "conveyor"
        best = min(ok, key=lambda r: abs(r[scen][key]))
        print(f"MuJoCo's best {name}: {best[scen][key]:.3g} m at {fmt_settings(best['settings'])}, "
              f"cost {best[scen]['cpu_per_s'] * 1e3:.1f} ms CPU per simulated second (stiction: {st:.3g} m)")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--stiction", help="path of the stiction binary")
    ap.add_argument("--venv", default=None, help="the MuJoCo venv (default target/py-bench-mujoco)")
    ap.add_argument("--sweep", action="store_true", help="also sweep MuJoCo's settings (about 5 minutes)")
    ap.add_argument("--mujoco-only", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--speed", action="store_true", help="the stacks speed table instead of the creep comparison")
    ap.add_argument("--counts", default="5,50,200", help="--speed: numbers of stacks")
    ap.add_argument("--stop-time", type=float, default=4.0, help="--speed: simulated seconds")
    ap.add_argument("--repeat", type=int, default=1, help="--speed: runs per figure (the median is printed)")
    args = ap.parse_args()
    if args.mujoco_only:
        mujoco_main(args)
        return
    binary = stiction_binary(args.stiction)
    if args.speed:
        return speed(binary, args)
    py = sys.executable if in_mujoco_venv() else mujoco_python(args.venv or os.environ.get("STICTION_MUJOCO_VENV") or ROOT / "target" / "py-bench-mujoco")
    st_pinch = stiction_pinch(binary)
    st_conv = stiction_conveyor(binary)
    cmd = [str(py), __file__, "--mujoco-only"] + (["--sweep"] if args.sweep else [])
    mj = json.loads(subprocess.run(cmd, check=True, capture_output=True, text=True).stdout)
    print_table(mj["version"], st_pinch, st_conv, mj["documented"])
    if args.sweep:
        print_sweep(mj["sweep"], st_pinch, st_conv)


def speed(binary, args):
    """`--speed`: the stacks table (python/bench/stacks.py), run in the MuJoCo venv."""
    if not in_mujoco_venv():
        py = mujoco_python(args.venv or os.environ.get("STICTION_MUJOCO_VENV") or ROOT / "target" / "py-bench-mujoco")
        subprocess.run([str(py), __file__, *sys.argv[1:], "--stiction", str(binary)], check=True)
        return
    import stacks

    counts = [int(c) for c in args.counts.split(",")]
    rows = stacks.speed_table(binary, counts, args.stop_time, args.repeat)
    stacks.print_speed_table(rows, args.stop_time)


if __name__ == "__main__":
    main()
