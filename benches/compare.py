#!/usr/bin/env python3
"""Compare this build of stiction against a baseline build, scene by scene, whole process.

    python3 benches/compare.py --baseline OLD/target/release/stiction
        [--current target/release/stiction] [--reference FUSED_CHAIN] [--runs 5]
        [--figures FILE.json] [--save FILE.json] [--only SCENE,...] [--mujoco [--venv DIR]]

Run it before every submission (docs/performance.md, "Comparing two builds"). The scenes:

- chain-10k, 1 thread and 2 threads (examples/chain_10k.json, 1000 steps);
- chain-100k load + 1 step, 1 thread (examples/generate_chain.rs at N = 100 000, one step):
  CPU time and peak memory;
- multibody-10k, 1 thread, 100 steps (examples/generate_multibody.rs);
- stacks-50, 1 thread, 4 s simulated (50 copies of examples/stack.json,
  python/bench/stacks.py), with the creep of the boxes at the same phase 2 s apart; at the
  example's step (explicit) and at MuJoCo's default step 2e-3 s (contacts held implicitly,
  each stack's stage solved as one group).

Each scene runs as its own process, current and baseline in turn (A B A B ...), so a change
in the machine's speed hits both; per pair the ratio current/baseline is taken, and the
median ratio is printed with the range of the pairs. A figure is flagged WORSE when its
median ratio exceeds 1 by more than the noise: half the range of the pair ratios, at least
2 % (times) or 1 % (peak memory). CPU time (user + system) is the figure for one thread,
wall time for two. A scene the baseline cannot load (a component type it does not have) is
compared against stored figures instead (`--figures`, written by `--save` from an earlier
run of this script on the same machine), flagged only past 10 %.

With `--reference`, the path of the hand-written reference loop of chain-N (a binary taking
`N THREADS`, e.g. the fused-chain loop, outside this repository), chain-10k on
one thread is also compared against it, and the two-thread speed-up is printed: the targets
are at most 1.1x the reference loop and at least 1.85x on two threads.

With `--mujoco`, 50 copies of examples/stack.json run 4 s at the largest step at which
`stiction check` finds them stable with their contacts explicit (python/bench/stacks.py
`checked_step`), on one and on two threads, in turn with the same boxes in MuJoCo at its
default settings (MuJoCo, pinned in python/bench/bench_env.py, runs in its own venv, DIR,
default target/py-bench-mujoco, created on first use): wall time per simulated second,
whole process for stiction, building and stepping the model for MuJoCo (as
`python/bench/vs_mujoco.py --speed`), and the creep of the boxes 2 s apart. The targets:
at or below MuJoCo's wall time on one thread, below it on two, creep at most 1e-12 m.
Run against a build of 9d01c11 (`--baseline`, with `--figures` for the scenes it cannot
load) and with `--reference`, one run shows every figure issue 42 asks for.

Times come from the operating system's accounting of each finished child (wait4: user and
system seconds, peak resident memory); wall time from a monotonic clock. Standard library
only.
"""

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "python" / "bench"))
import stacks  # noqa: E402


def measure(cmd):
    """Run `cmd` once, output discarded: (exit status, wall s, cpu s, peak MiB)."""
    t0 = time.perf_counter()
    p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _, status, ru = os.wait4(p.pid, 0)
    wall = time.perf_counter() - t0
    p.returncode = os.waitstatus_to_exitcode(status)
    return p.returncode, wall, ru.ru_utime + ru.ru_stime, ru.ru_maxrss / 1024.0


def generator(name):
    """The example binary `name` of this tree, built if missing."""
    exe = ROOT / "target" / "release" / "examples" / name
    if not exe.exists():
        subprocess.run(["cargo", "build", "--release", "--example", name], cwd=ROOT, check=True)
    return str(exe)


# Sets a generated system's stop time to STEPS steps, in a process of its own: this one stays
# small, because a child forked from it starts with its resident memory, which the operating
# system counts in the child's peak.
STEPS = """
import json, sys
spec = json.load(open(sys.argv[1]))
spec["solver"]["stop_time"] = int(sys.argv[2]) * spec["solver"]["step"]
json.dump(spec, open(sys.argv[1], "w"))
"""


def generate(example, n, path, steps):
    subprocess.run([generator(example), str(n), str(path)], check=True, stdout=subprocess.DEVNULL)
    subprocess.run([sys.executable, "-c", STEPS, str(path), str(steps)], check=True)
    return path


def scenes(workdir):
    """(name, arguments after the binary, figures compared) of every scene."""
    chain10k = str(ROOT / "examples" / "chain_10k.json")
    chain100k = generate("generate_chain", 100000, Path(workdir) / "chain_100k.json", 1)
    multibody = generate("generate_multibody", 10000, Path(workdir) / "multibody_10k.json", 100)
    stacks50 = stacks.write(50, Path(workdir) / "stacks_50.json", stop_time=4.0)
    held50 = stacks.write(50, Path(workdir) / "stacks_50_held.json", stop_time=4.0, step=2e-3)
    run = lambda path, threads: ["run", str(path), "-o", os.devnull, "--threads", str(threads), "--quiet"]  # noqa: E731
    return [
        ("chain-10k, 1 thread", run(chain10k, 1), ("cpu",)),
        ("chain-10k, 2 threads", run(chain10k, 2), ("wall",)),
        ("chain-100k load + 1 step, 1 thread", run(chain100k, 1), ("cpu", "peak")),
        ("multibody-10k, 100 steps, 1 thread", run(multibody, 1), ("cpu",)),
        ("stacks-50, 4 s, 1 thread", run(stacks50, 1), ("cpu",)),
        ("stacks-50 held, T = 2e-3, 4 s, 1 thread", run(held50, 1), ("cpu",)),
    ]


def pairs(a, b, runs):
    """`runs` runs of A and B in turn (after one unmeasured warm-up of each): lists of
    (wall, cpu, peak) per command, or None for B if it fails."""
    ra, rb = [], []
    for cmd in (a, b):
        if cmd is not None:
            measure(cmd)
    for _ in range(runs):
        for cmd, out in ((a, ra), (b, rb)):
            if cmd is None:
                continue
            code, wall, cpu, peak = measure(cmd)
            if code != 0:
                if out is rb:
                    return ra, None
                sys.exit(f"failed (exit {code}): {' '.join(cmd)}")
            out.append({"wall": wall, "cpu": cpu, "peak": peak})
    return ra, rb


# Builds and steps `n` stacks in MuJoCo at its defaults, in the MuJoCo venv: its wall time,
# steps and the creep of the boxes, as JSON.
MUJOCO_STACKS = """
import json, sys
sys.path.insert(0, sys.argv[1])
import mujoco, stacks
wall, steps, samples = stacks.mujoco_stacks(int(sys.argv[2]), stacks.MUJOCO_DEFAULT, float(sys.argv[3]))
print(json.dumps({"wall": wall, "steps": steps, "creep": stacks.creep(samples), "version": mujoco.__version__}))
"""


def against_mujoco(current, venv, runs, workdir, n=50, stop_time=4.0):
    """stacks-n at `check`'s largest explicit step, one and two threads, against MuJoCo's
    defaults, in turn: the lines to print and the targets missed."""
    from bench_env import mujoco_python

    py = str(mujoco_python(venv))
    step = stacks.checked_step(current, workdir)
    system = stacks.write(n, Path(workdir) / f"stacks_{n}_checked.json", stop_time=stop_time, step=step)
    out = Path(workdir) / f"stacks_{n}_checked.csv"
    one = [current, "run", str(system), "-o", str(out), "--threads", "1", "--quiet"]
    two = [current, "run", str(system), "-o", os.devnull, "--threads", "2", "--quiet"]
    mj = [py, "-c", MUJOCO_STACKS, str(ROOT / "python" / "bench"), str(n), str(stop_time)]
    walls = {"one": [], "two": [], "mujoco": []}
    result = None
    for i in range(runs + 1):
        code_1, wall_1, _, _ = measure(one)
        code_2, wall_2, _, _ = measure(two)
        p = subprocess.run(mj, capture_output=True, text=True)
        if code_1 or code_2 or p.returncode:
            sys.exit(f"stacks against MuJoCo failed: stiction exit {code_1}, {code_2}; MuJoCo: {p.stderr.strip()[-400:]}")
        result = json.loads(p.stdout)
        if i > 0:  # the first round warms up
            walls["one"].append(wall_1)
            walls["two"].append(wall_2)
            walls["mujoco"].append(result["wall"])
    creep = stacks.creep(stacks.boxes_from_csv(out))
    r1 = [a / m for a, m in zip(walls["one"], walls["mujoco"])]
    r2 = [a / m for a, m in zip(walls["two"], walls["mujoco"])]
    med = {k: statistics.median(v) / stop_time for k, v in walls.items()}
    m1, m2 = statistics.median(r1), statistics.median(r2)
    lines = [
        f"stacks-{n} ({3 * n} boxes, {12 * n} body contacts), {stop_time:g} s, against MuJoCo {result['version']} at its defaults "
        f"(T = 2e-3, {result['steps']} steps), wall per simulated second, medians of {runs} rounds:",
        f"  MuJoCo default: {med['mujoco']:.3f} s/s (building and stepping), creep of the boxes 2 s apart {result['creep']:.1e} m",
        f"  stiction, T = {step:.4g} (`check`'s largest step with explicit contacts), 1 thread: {med['one']:.3f} s/s, "
        f"{m1:.3f} ({min(r1):.3f}-{max(r1):.3f}) of MuJoCo's, target <= 1: {'met' if m1 <= 1 else 'NOT met'}",
        f"  stiction, the same on 2 threads: {med['two']:.3f} s/s, {m2:.3f} ({min(r2):.3f}-{max(r2):.3f}) of MuJoCo's, "
        f"target below 1 thread's: {'met' if m2 < m1 else 'NOT met'}",
        f"  stiction's creep of the boxes 2 s apart: {creep:.1e} m (target <= 1e-12 m)",
    ]
    missed = [f"stacks-{n} against MuJoCo ({what})" for what, bad in (("1 thread", m1 > 1), ("2 threads", m2 >= m1), ("creep", creep > 1e-12)) if bad]
    return lines, missed


def noise_floor(figure):
    return 0.01 if figure == "peak" else 0.02


def verdict(ratios, floor):
    med = statistics.median(ratios)
    noise = max(floor, (max(ratios) - min(ratios)) / 2)
    return med, noise, ("WORSE" if med > 1 + noise else "better" if med < 1 - noise else "same")


UNIT = {"wall": "s", "cpu": "s", "peak": "MiB"}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--baseline", required=True, help="the stiction binary to compare against")
    ap.add_argument("--current", default=str(ROOT / "target" / "release" / "stiction"))
    ap.add_argument("--reference", help="the reference loop of chain-N (arguments N THREADS)")
    ap.add_argument("--runs", type=int, default=5, help="measured runs per command (default 5)")
    ap.add_argument("--figures", help="stored figures (JSON from --save) for scenes the baseline cannot run")
    ap.add_argument("--save", help="write this run's medians of the current build to this JSON file")
    ap.add_argument("--only", help="comma-separated prefixes of the scenes to run")
    ap.add_argument("--mujoco", action="store_true", help="also stacks-50 against MuJoCo's defaults (in the MuJoCo venv)")
    ap.add_argument("--venv", help="the MuJoCo venv (default target/py-bench-mujoco, or $STICTION_MUJOCO_VENV)")
    args = ap.parse_args()
    for b in (args.current, args.baseline):
        if not (shutil.which(b) or Path(b).exists()):
            sys.exit(f"no such binary: {b}")
    stored = json.loads(Path(args.figures).read_text()) if args.figures else {}
    saved, worse = {}, []
    print(f"current {args.current}\nbaseline {args.baseline}\n{args.runs} paired runs per scene, whole process; ratio = current / baseline, median (range of pairs)\n")
    print(f"{'scene':<38} {'figure':<5} {'current':>10} {'baseline':>10}  {'ratio':<22} verdict")
    with tempfile.TemporaryDirectory() as d:
        medians = {}
        for name, rest, figures in scenes(d):
            if args.only and not any(name.startswith(p) for p in args.only.split(",")):
                continue
            ra, rb = pairs([args.current, *rest], [args.baseline, *rest], args.runs)
            medians[name] = {f: statistics.median(r[f] for r in ra) for f in ("wall", "cpu", "peak")}
            saved[name] = medians[name]
            for f in figures:
                cur = medians[name][f]
                if rb is not None:
                    ratios = [x[f] / y[f] for x, y in zip(ra, rb)]
                    base = statistics.median(r[f] for r in rb)
                    med, noise, v = verdict(ratios, noise_floor(f))
                    rng = f"{med:.3f} ({min(ratios):.3f}-{max(ratios):.3f})"
                elif name in stored and f in stored[name]:
                    base = stored[name][f]
                    med = cur / base
                    v = "WORSE" if med > 1.10 else "better" if med < 0.90 else "same"
                    rng = f"{med:.3f} (stored figure)"
                else:
                    print(f"{name:<38} {f:<5} {cur:>8.3f} {UNIT[f]:<3} {'(baseline cannot run it; no stored figure)'}")
                    continue
                print(f"{name:<38} {f:<5} {cur:>8.3f} {UNIT[f]:<3}{base:>8.3f} {UNIT[f]:<3} {rng:<22} {v}")
                if v == "WORSE":
                    worse.append(f"{name} ({f})")
        if "chain-10k, 1 thread" in medians and "chain-10k, 2 threads" in medians:
            s = medians["chain-10k, 1 thread"]["wall"] / medians["chain-10k, 2 threads"]["wall"]
            print(f"\nchain-10k speed-up on two threads (current, medians of wall): {s:.2f}x (target >= 1.85)")
        if args.reference and (not args.only or "chain-10k".startswith(tuple(args.only.split(",")))):
            chain10k = str(ROOT / "examples" / "chain_10k.json")
            cmd = [args.current, "run", chain10k, "-o", os.devnull, "--threads", "1", "--quiet"]
            ra, rb = pairs(cmd, [args.reference, "10000", "1"], args.runs)
            ratios = [x["wall"] / y["wall"] for x, y in zip(ra, rb)]
            med, noise, _ = verdict(ratios, 0.02)
            # The median decides; a median above 1.1 but within the pairs' noise of it is
            # still not the target met.
            if med <= 1.1:
                flag = "met"
            elif med > 1.1 + noise:
                flag = "WORSE than the target"
            else:
                flag = f"not met (above it by less than the noise, {noise:.3f})"
            print(f"chain-10k, 1 thread / the reference loop (wall): {med:.3f} ({min(ratios):.3f}-{max(ratios):.3f}), target <= 1.1: {flag}")
            if med > 1.1 + noise:
                worse.append("chain-10k against the reference loop")
        # The stacks hold: creep between two samples one period apart.
        for scene, file in (("stacks-50, 4 s, 1 thread", "stacks_50"), ("stacks-50 held, T = 2e-3, 4 s, 1 thread", "stacks_50_held")):
            if scene not in medians:
                continue
            out = Path(d) / f"{file}.csv"
            subprocess.run([args.current, "run", str(Path(d) / f"{file}.json"), "-o", str(out), "--quiet"], check=True)
            c = stacks.creep(stacks.boxes_from_csv(out))
            print(f"{scene.split(', 4 s')[0]}: creep of the boxes at the same phase 2 s apart: {c:.1e} m (target <= 1e-12 m)")
            if c > 1e-12:
                worse.append(f"{scene} creep")
        if args.mujoco:
            venv = args.venv or os.environ.get("STICTION_MUJOCO_VENV") or ROOT / "target" / "py-bench-mujoco"
            lines, missed = against_mujoco(args.current, venv, args.runs, d)
            print()
            print("\n".join(lines))
            worse += missed
    if args.save:
        Path(args.save).write_text(json.dumps(saved, indent=1) + "\n")
    print("\n" + (f"worse by more than the noise: {', '.join(worse)}" if worse else "nothing worse by more than the noise"))
    return 1 if worse else 0


if __name__ == "__main__":
    sys.exit(main())
