"""Parameter studies (``stiction sweep``) on local threads or on a Dask cluster."""

from __future__ import annotations

import os
import sys
import uuid
from typing import Any, Callable, Dict, List, Mapping, Optional, Sequence, Tuple, Union

import numpy as np

from . import _core
from ._core import InputError

#: The CLI's default seed of ``stiction sweep`` (``--seed``).
DEFAULT_SEED = 0

Row = Tuple[int, List[float], List[float], str, str]
Progress = Union[bool, Callable[[int, int], None], None]


def _number(x: Any) -> str:
    if isinstance(x, np.generic):
        x = x.item()
    if isinstance(x, bool) or not isinstance(x, (int, float)):
        raise InputError(f"expected a number, got {x!r}")
    return repr(float(x)) if isinstance(x, float) else str(x)


def _vary_strings(vary: Mapping[str, Any]) -> List[str]:
    """``{"block.F": [7, 8]}`` -> ``["block.F=7,8"]``; a string value is the CLI's text
    (``"0.1:0.5:5"``, ``"uniform(0.1, 0.2)"``, ``"normal(1, 0.05)"``) as is."""
    if not isinstance(vary, Mapping) or not vary:
        raise InputError("vary must be a non-empty dict of 'component.parameter' -> values")
    out = []
    for key, spec in vary.items():
        if isinstance(spec, str):
            out.append(f"{key}={spec}")
        elif isinstance(spec, (list, tuple, np.ndarray)):
            vals = list(spec.tolist() if isinstance(spec, np.ndarray) else spec)
            if not vals:
                raise InputError(f"vary[{key!r}]: no values")
            out.append(f"{key}=" + ",".join(_number(v) for v in vals))
        else:
            out.append(f"{key}={_number(spec)}")
    return out


def _output_strings(outputs: Optional[Mapping[str, Any]]) -> List[str]:
    """``{"v": ["final", "max"]}`` -> ``["v=final,max"]`` (the CLI's ``--outputs``)."""
    if outputs is None:
        return []
    out = []
    for sig, stats in outputs.items():
        if isinstance(stats, str):
            out.append(f"{sig}={stats}")
        else:
            out.append(f"{sig}=" + ",".join(str(s) for s in stats))
    return out


def _table(columns: List[str], rows: List[Row]):
    """A pandas DataFrame (or, without pandas, a numpy structured array) of the rows."""
    n_varied = len(rows[0][1]) if rows else 0
    n_stats = len(rows[0][2]) if rows else 0
    names = columns
    data: Dict[str, Any] = {names[0]: np.array([r[0] for r in rows], dtype=np.int64)}
    for j in range(n_varied):
        data[names[1 + j]] = np.array([r[1][j] for r in rows], dtype=np.float64)
    for j in range(n_stats):
        data[names[1 + n_varied + j]] = np.array([r[2][j] for r in rows], dtype=np.float64)
    data[names[-2]] = np.array([r[3] for r in rows], dtype=object)
    data[names[-1]] = np.array([r[4] for r in rows], dtype=object)
    try:
        import pandas as pd
    except ImportError:
        width = max([1] + [len(r[4]) for r in rows])
        dtype = [(k, v.dtype if v.dtype != object else f"U{width if k == names[-1] else 6}") for k, v in data.items()]
        arr = np.empty(len(rows), dtype=dtype)
        for k, v in data.items():
            arr[k] = v
        return arr
    return pd.DataFrame(data, columns=names)


def _report(progress: Progress, done: int, total: int) -> None:
    if progress is None:
        progress = sys.stderr.isatty()
    if progress is True:
        end = "\n" if done >= total else ""
        sys.stderr.write(f"\rstiction study: {done}/{total} runs{end}")
        sys.stderr.flush()
    elif callable(progress):
        progress(done, total)


def _rows_task(
    system_json: str,
    file: str,
    base_dir: str,
    vary: List[str],
    samples: Optional[int],
    seed: int,
    outputs: List[str],
    start: int,
    stop: int,
) -> List[Row]:
    """A Dask task: the rows of runs ``start..stop`` on one thread of a worker."""
    return _core.study_rows(system_json, file, base_dir, vary, samples, seed, outputs, start, stop, 1)


def study(
    system: "System",
    vary: Mapping[str, Any],
    samples: Optional[int] = None,
    seed: Optional[int] = None,
    outputs: Optional[Mapping[str, Any]] = None,
    client: Any = None,
    threads: Optional[int] = None,
    chunk_size: Optional[int] = None,
    progress: Progress = None,
):
    """Run a parameter study, as ``stiction sweep`` does, and return its table.

    :param system: the base :class:`System`.
    :param vary: ``"component.parameter"`` -> values: a list (a grid axis; several axes
        make their full product), or the CLI's text: ``"start:stop:count"``,
        ``"uniform(a, b)"``, ``"normal(mu, sigma)"`` (random draws need ``samples``).
    :param samples: number of Monte Carlo runs (for random draws).
    :param seed: random seed (default 0, as the CLI). Run ``i`` draws from (seed, i) only,
        so the table does not depend on where or in which order runs are computed.
    :param outputs: output column label -> statistics, e.g. ``{"v": ["final", "max"]}``.
    :param client: a ``dask.distributed.Client``: the runs go to its workers in chunks
        (the system travels as JSON; the package must be installed on the workers, and
        files the system names must be readable there). None: local threads.
    :param threads: local threads (default: all cores); unused with a client.
    :param chunk_size: runs per Dask task (default: about 4 tasks per worker thread).
    :param progress: a ``callback(done, total)``, True for a progress line on stderr, False
        for none; None (default): the line when stderr is a terminal, as the CLI's bar.
    :returns: a ``pandas.DataFrame`` with columns ``run``, the varied parameters, one
        column per statistic, ``status`` (``"ok"``/``"failed"``) and ``message``; a numpy
        structured array when pandas is not installed. Rows are in run order; a failed
        run is a row with its message, not an exception.
    :raises InputError: a bad study or system.
    :raises KeyboardInterrupt: Ctrl-C (local: between chunks of runs; Dask: the
        remaining tasks are cancelled).
    """
    vary_s = _vary_strings(vary)
    out_s = _output_strings(outputs)
    seed = DEFAULT_SEED if seed is None else int(seed)
    if seed < 0:
        raise InputError(f"seed must be >= 0, got {seed}")
    text, file, base_dir = system.to_json(), system.file, system.base_dir
    runs, columns = _core.study_plan(text, file, base_dir, vary_s, samples, seed, out_s)
    if threads is not None and threads < 1:
        raise InputError(f"threads must be at least 1, got {threads}")
    if client is None:
        n = threads or os.cpu_count() or 1
        cb = (lambda done: _report(progress, done, runs)) if progress is not False else None
        rows = _core.study_rows(text, file, base_dir, vary_s, samples, seed, out_s, 0, runs, n, cb)
        return _table(columns, rows)
    return _table(columns, _dask_rows(client, text, file, base_dir, vary_s, samples, seed, out_s, runs, chunk_size, progress))


def _dask_rows(client, text, file, base_dir, vary_s, samples, seed, out_s, runs, chunk_size, progress) -> List[Row]:
    """Chunks of runs as Dask tasks, gathered as they finish, keyed by run id.

    A task lost with its worker is run again by the scheduler on another worker; since a
    chunk's rows depend only on (system, study, run ids), the retry gives the same rows and
    the table keyed by run id has each run exactly once.
    """
    try:
        from dask.distributed import as_completed
    except ImportError as e:  # pragma: no cover - a client implies dask
        raise ImportError("study(client=...) needs dask.distributed: pip install 'stiction[dask]'") from e
    if chunk_size is None:
        try:
            slots = sum(client.nthreads().values()) or 1
        except Exception:
            slots = 1
        chunk_size = max(1, min(64, -(-runs // (4 * slots))))
    elif chunk_size < 1:
        raise InputError(f"chunk_size must be >= 1, got {chunk_size}")
    token = uuid.uuid4().hex[:12]
    futures = []
    for start in range(0, runs, chunk_size):
        stop = min(start + chunk_size, runs)
        futures.append(
            client.submit(
                _rows_task, text, file, base_dir, vary_s, samples, seed, out_s, start, stop,
                key=f"stiction-study-{token}-{start}-{stop}", pure=False,
            )
        )
    rows: Dict[int, Row] = {}
    try:
        for _future, chunk in as_completed(futures, with_results=True):
            for row in chunk:
                run = row[0]
                if run in rows and rows[run] != row:
                    raise RuntimeError(f"run {run} came back twice with different rows")
                rows[run] = tuple(row)
            _report(progress, len(rows), runs)
    except BaseException:
        client.cancel(futures)
        raise
    missing = [i for i in range(runs) if i not in rows]
    if missing:
        raise RuntimeError(f"study incomplete: runs {missing[:10]} missing")
    return [rows[i] for i in range(runs)]
