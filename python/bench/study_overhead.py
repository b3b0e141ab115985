"""Wall time of a 200-run Monte Carlo study on local threads (1 and 2) and on a Dask
LocalCluster of 2 worker processes (1 thread each), in the same process, alternating,
--repeat times; prints the median (and min, max) of each and the Dask path's overhead per
run against 2 local threads, pair by pair (median of the repetitions' differences).

    python python/bench/study_overhead.py [--runs 200] [--repeat 3] [--stop-time 6]

The system is examples/two_mass_model_c_fig11.json (Fig. 11 of the friction paper: two
masses on model-C contacts, Euler, T = 1 ms) with both Coulomb forces drawn per run.
"""

import argparse
import os
import time
from pathlib import Path

import numpy as np

import stiction

ROOT = Path(__file__).resolve().parents[2]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--runs", type=int, default=200)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--stop-time", type=float, default=6.0, help="simulated time per run, s")
    args = ap.parse_args()

    from dask.distributed import Client, LocalCluster

    system = stiction.load(ROOT / "examples" / "two_mass_model_c_fig11.json").with_set(
        {"solver.stop_time": args.stop_time}
    )
    study = dict(
        vary={"contact1.F": "uniform(4,6)", "contact2.F": "normal(2.5,0.25)"},
        samples=args.runs,
        seed=1,
        outputs={"stuck1": "mean", "v2": ["absmax", "rms"]},
    )
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, host="127.0.0.1",
                      dashboard_address=None) as cluster, Client(cluster) as client:
        client.wait_for_workers(2)
        stiction.study(system, client=client, **dict(study, samples=8))  # warm the workers
        times = {"local, 1 thread": [], "local, 2 threads": [], "Dask LocalCluster, 2 workers": []}
        tables = {}
        for _ in range(args.repeat):
            for name, kw in (("local, 1 thread", dict(threads=1)), ("local, 2 threads", dict(threads=2)),
                             ("Dask LocalCluster, 2 workers", dict(client=client))):
                t = time.perf_counter()
                tables[name] = stiction.study(system, **kw, **study)
                times[name].append(time.perf_counter() - t)
    ref = tables["local, 1 thread"]
    for name, table in tables.items():
        for c in ref.columns:
            a, b = ref[c].to_numpy(), table[c].to_numpy()
            same = np.array_equal(a.view(np.uint64), b.view(np.uint64)) if a.dtype.kind == "f" else list(a) == list(b)
            assert same, f"{name}: column {c} differs from the local table"
    med = {k: float(np.median(v)) for k, v in times.items()}
    n = args.runs
    print(f"{n}-run study, {args.stop_time} s simulated per run, median of {args.repeat} (all tables bit-identical):")
    for k, v in med.items():
        print(f"  {k:30s} {v:7.3f} s   {v / n * 1e3:7.2f} ms/run   (min {min(times[k]):.3f} s, max {max(times[k]):.3f} s)")
    d, l2 = times["Dask LocalCluster, 2 workers"], times["local, 2 threads"]
    diff = float(np.median([(a - b) / n * 1e3 for a, b in zip(d, l2)]))
    ratio = float(np.median([a / b for a, b in zip(d, l2)]))
    print(f"  Dask overhead vs 2 local threads: {diff:+.2f} ms/run (ratio {ratio:.2f}), paired medians")


if __name__ == "__main__":
    main()
