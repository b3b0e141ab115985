"""N copies of examples/stack.json (three boxes stacked on the ground, each on four corner
body_contacts, the top one pushed sideways by 0.3 m g sin(pi t)) for speed comparisons:
`vs_mujoco.py --speed` and `benches/compare.py` use them.

The copies are independent systems in one network: every component of copy i is named
`s<i>_<name>`, so each copy computes exactly what the example computes alone. The output is
every box's position every 2 s (one period of the push), from which `creep` takes the
largest displacement of a box between two samples one period apart.
"""

import csv
import json
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
STACK = ROOT / "examples" / "stack.json"
# The push's period (s): the boxes sit at the same phase every PERIOD seconds.
PERIOD = 2.0


def replicate(n, stop_time=4.0, step=None, stack=STACK):
    """The system of `n` stacks as a dict (JSON-ready), run for `stop_time` seconds."""
    one = json.loads(Path(stack).read_text())
    comps, conns, signals = {}, [], {}
    for i in range(n):
        name = lambda c: f"s{i}_{c}" if c != "ground" else c  # noqa: E731
        for c, spec in one["components"].items():
            comps[name(c)] = spec
            if spec["type"] == "rigid_body":
                for axis, k in (("x", 0), ("y", 1), ("z", 2)):
                    signals[f"{name(c)}_{axis}"] = f"{name(c)}.p[{k}]"
        for c in one["connections"]:
            conns.append({**c, "from": name(c["from"].split(".")[0]) + "." + c["from"].split(".", 1)[1], "to": name(c["to"])})
    solver = dict(one["solver"], stop_time=stop_time)
    if step is not None:
        solver["step"] = step
    return {
        "name": f"stacks_{n}",
        "description": f"{n} copies of examples/stack.json (python/bench/stacks.py)",
        "solver": solver,
        "output": {"interval": PERIOD, "signals": signals},
        "components": comps,
        "connections": conns,
    }


def write(n, path, **kw):
    Path(path).write_text(json.dumps(replicate(n, **kw)))
    return path


def boxes_from_csv(path):
    """{time: [(x, y, z) of every box]} from a run's CSV of `replicate`'s signals."""
    out = {}
    with open(path) as f:
        rows = csv.reader(f)
        head = next(rows)
        names = sorted({h[:-2] for h in head[1:]})
        col = {h: k for k, h in enumerate(head)}
        for r in rows:
            out[float(r[0])] = [tuple(float(r[col[f"{b}_{a}"]]) for a in "xyz") for b in names]
    return out


def creep(samples, t0=PERIOD, t1=2 * PERIOD):
    """The largest distance a box moved between times t0 and t1 (same phase of the push)."""
    a, b = samples[t0], samples[t1]
    return max(sum((p - q) ** 2 for p, q in zip(u, v)) ** 0.5 for u, v in zip(a, b))


# MuJoCo's defaults written out (timestep 2e-3, pyramidal cone, Euler), and the anti-slip
# settings of vs_mujoco.py's creep comparison at the step that holds there.
MUJOCO_DEFAULT = '<option gravity="0 0 -9.81"/>'
MUJOCO_ANTI_SLIP = (
    '<option timestep="5e-4" integrator="implicitfast" cone="elliptic" impratio="10" noslip_iterations="20" gravity="0 0 -9.81"/>'
)


def mujoco_stacks(n, option=MUJOCO_DEFAULT, stop_time=4.0, mu=0.5):
    """The same `n` stacks in MuJoCo (box geoms 0.2 x 0.2 x 0.02 m, 1 kg, friction mu, the
    stacks 0.5 m apart along y), the top box of each pushed by 2.943 sin(pi t) N along x.
    Returns (wall seconds of building and stepping, steps, {time: box positions})."""
    import time

    import mujoco
    import numpy as np

    bodies = []
    for i in range(n):
        for k in range(3):
            bodies.append(
                f'<body name="s{i}_box{k + 1}" pos="0 {0.5 * i} {0.01 + 0.02 * k}"><freejoint/>'
                f'<geom type="box" size="0.1 0.1 0.01" mass="1" friction="{mu} 0.005 0.0001"/></body>'
            )
    xml = f"""<mujoco>{option}<worldbody><geom type="plane" size="0 0 1" friction="{mu} 0.005 0.0001"/>
{"".join(bodies)}</worldbody></mujoco>"""
    t0 = time.perf_counter()
    model = mujoco.MjModel.from_xml_string(xml)
    data = mujoco.MjData(model)
    top = np.array([model.body(f"s{i}_box3").id for i in range(n)])
    dt = model.opt.timestep
    steps = round(stop_time / dt)
    marks = {round(t / dt): t for t in (PERIOD, 2 * PERIOD)}
    samples = {}
    for k in range(1, steps + 1):
        data.xfrc_applied[top, 0] = 2.943 * np.sin(np.pi * data.time)
        mujoco.mj_step(model, data)
        if k in marks:
            q = data.qpos.reshape(-1, 7)[:, :3]
            samples[marks[k]] = [tuple(p) for p in q]
    wall = time.perf_counter() - t0
    return wall, steps, samples


def run_stiction(binary, n, workdir, threads=1, step=None, stop_time=4.0):
    """`stiction run` of `n` stacks: (wall seconds of the whole process, steps, samples)."""
    import subprocess
    import time

    system = write(n, Path(workdir) / f"stacks_{n}.json", stop_time=stop_time, step=step)
    out = Path(workdir) / f"stacks_{n}.csv"
    cmd = [binary, "run", "--quiet", "--threads", str(threads), "-o", str(out), str(system)]
    t0 = time.perf_counter()
    subprocess.run(cmd, check=True)
    wall = time.perf_counter() - t0
    spec = replicate(1, stop_time=stop_time, step=step)
    steps = round(stop_time / spec["solver"]["step"])
    return wall, steps, boxes_from_csv(out)


def checked_step(binary, workdir, probe=2e-3):
    """The largest step that divides the push's period (so that samples 2 s apart meet the
    same phase) at which `stiction check` finds a stack stable with its contacts explicit:
    no warning and no contact held implicitly (past it the contacts are held implicitly,
    stable at every step but each stage a Newton solve of the stack). Bisection over the
    period's divisors from `probe` down; one stack (every copy is the same group)."""
    import math
    import subprocess

    def explicit(k):
        system = write(1, Path(workdir) / "stacks_probe.json", step=PERIOD / k)
        out = subprocess.run([binary, "check", str(system)], capture_output=True, text=True).stdout
        return "no warnings" in out and "held implicitly" not in out

    lo = math.ceil(PERIOD / probe)
    if explicit(lo):
        return PERIOD / lo
    hi = 2 * lo
    while not explicit(hi):
        lo, hi = hi, 2 * hi
    # explicit(hi) holds, explicit(lo) does not.
    while hi - lo > 1:
        mid = (lo + hi) // 2
        lo, hi = (lo, mid) if explicit(mid) else (mid, hi)
    return PERIOD / hi


def speed_table(binary, counts=(5, 50, 200), stop_time=4.0, repeat=1, anti_slip=True):
    """The rows of `vs_mujoco.py --speed`: per N stacks, stiction (at the largest stable step
    `stiction check` reports with the contacts explicit, on one and two threads; at MuJoCo's
    default step, the contacts held implicitly, and at the example's step, on one) and MuJoCo
    (defaults; the anti-slip settings), each with the wall time of `stop_time` simulated
    seconds (median of `repeat`), per simulated second, per step, and the creep of the boxes
    between t = 2 s and 4 s (same phase)."""
    import statistics
    import tempfile

    import mujoco

    example_step = replicate(1)["solver"]["step"]
    rows = []
    with tempfile.TemporaryDirectory() as d:
        for n in counts:
            t = checked_step(binary, d)
            runs = [
                (f"stiction rk4, T = {t:.4g} (`check`'s largest step with explicit contacts), 1 thread", lambda: run_stiction(binary, n, d, 1, t, stop_time)),
                (f"stiction rk4, T = {t:.4g}, 2 threads", lambda: run_stiction(binary, n, d, 2, t, stop_time)),
                ("stiction rk4, T = 2e-3 (MuJoCo's step; contacts held implicitly), 1 thread", lambda: run_stiction(binary, n, d, 1, 2e-3, stop_time)),
                (f"stiction rk4, T = {example_step:g} (the example's), 1 thread", lambda: run_stiction(binary, n, d, 1, None, stop_time)),
                (f"MuJoCo {mujoco.__version__} default (T = 2e-3, pyramidal, Euler)", lambda: mujoco_stacks(n, MUJOCO_DEFAULT, stop_time)),
            ]
            if anti_slip:
                runs.append(
                    ("MuJoCo anti-slip (T = 5e-4, elliptic, impratio 10, noslip 20, implicitfast)", lambda: mujoco_stacks(n, MUJOCO_ANTI_SLIP, stop_time))
                )
            for label, run in runs:
                results = [run() for _ in range(repeat)]
                wall = statistics.median(r[0] for r in results)
                steps, samples = results[0][1], results[0][2]
                rows.append((n, label, wall, wall / stop_time, wall / steps, creep(samples)))
    return rows


def print_speed_table(rows, stop_time=4.0):
    print(f"| stacks (boxes, contacts) | engine, settings | wall for {stop_time:g} s | wall per simulated s | per step | creep 2 s apart (same phase) |")
    print("|---|---|---|---|---|---|")
    for n, label, wall, per_s, per_step, c in rows:
        print(f"| {n} ({3 * n}, {12 * n}) | {label} | {wall:.2f} s | {per_s:.3f} s | {per_step * 1e3:.3f} ms | {c:.1e} m |")
