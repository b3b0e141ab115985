"""stiction.study on a Dask LocalCluster (2 worker processes, loopback only): the same table
as the local study, also when a worker is killed in the middle of it."""

import os
import signal
import time

import numpy as np
import pytest

import stiction
from conftest import EXAMPLES

distributed = pytest.importorskip(
    "distributed", reason="dask.distributed is not installed (pip install './python[dask]')"
)
pd = pytest.importorskip("pandas", reason="the Dask tests compare DataFrames")

SYSTEM = EXAMPLES / "two_mass_model_c_fig11.json"
STUDY = dict(
    vary={"contact1.F": "uniform(4,6)", "contact2.F": "normal(2.5,0.25)"},
    samples=48,
    seed=11,
    outputs={"stuck1": "mean", "v2": ["absmax", "final"]},
)


@pytest.fixture(scope="module")
def client():
    cluster = distributed.LocalCluster(
        n_workers=2, threads_per_worker=1, processes=True, host="127.0.0.1", dashboard_address=None
    )
    c = distributed.Client(cluster)
    try:
        yield c
    finally:
        c.close(timeout=30)
        cluster.close(timeout=30)


@pytest.fixture(scope="module")
def system():
    # 2 s of the 6 s run keeps each run near 12 ms.
    return stiction.load(str(SYSTEM)).with_set({"solver.stop_time": 2.0})


@pytest.fixture(scope="module")
def local(system):
    return stiction.study(system, threads=2, **STUDY)


def assert_bit_identical(a, b):
    assert list(a.columns) == list(b.columns) and len(a) == len(b)
    for c in a.columns:
        x, y = a[c].to_numpy(), b[c].to_numpy()
        if x.dtype.kind == "f":
            # Same bits (NaN included), not just close.
            assert np.array_equal(x.view(np.uint64), y.view(np.uint64)), c
        else:
            assert list(x) == list(y), c


def test_dask_study_equals_local(client, system, local):
    seen = []
    table = stiction.study(system, client=client, chunk_size=5, progress=lambda d, n: seen.append(d), **STUDY)
    assert_bit_identical(table, local)
    assert list(table["run"]) == list(range(48))
    assert seen[-1] == 48 and seen == sorted(seen)


def test_worker_killed_mid_study(client, system, local):
    client.wait_for_workers(2, timeout=60)
    pids = client.run(os.getpid)
    killed = []

    def kill_one(done, total):
        # After the first chunk came back: kill (SIGKILL, like os._exit) a worker that has
        # tasks of the study in progress; the scheduler gives them to the other worker.
        if killed:
            return
        processing = client.processing()
        busy = [a for a, keys in processing.items() if any("stiction-study" in str(k) for k in keys) and a in pids]
        if busy:
            os.kill(pids[busy[0]], signal.SIGKILL)
            killed.append((busy[0], done))

    table = stiction.study(system, client=client, chunk_size=2, progress=kill_one, **STUDY)
    assert killed, "no worker was busy with the study when the first chunk finished"
    addr, done_at_kill = killed[0]
    print(f"killed worker {addr} (pid {pids[addr]}) after {done_at_kill} of 48 runs")
    assert done_at_kill < 48
    # Complete, each run once, and bit-identical to the local table.
    assert list(table["run"]) == list(range(48))
    assert_bit_identical(table, local)
    # The nanny replaced the killed worker process.
    client.wait_for_workers(2, timeout=60)
    deadline = time.monotonic() + 30
    while pids[addr] in client.run(os.getpid).values() and time.monotonic() < deadline:
        time.sleep(0.2)
    assert pids[addr] not in client.run(os.getpid).values()
