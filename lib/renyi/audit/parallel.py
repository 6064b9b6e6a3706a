"""Drawing a black box's outputs in tasks, on worker processes: each output once, counts only back.

:func:`audit_in_tasks` is the engine of ``audit(..., workers=k)``.  A pilot of each sample is
drawn here first and fixes the grid (:mod:`renyi.audit.mergeable`); the rest of each sample is
split into tasks of at most ``chunk`` outputs.  Every task draws from its own stream, a child
of one ``SeedSequence`` (one per task, not per worker), bins its outputs and returns only the
counts, so a worker holds one chunk at a time and the result does not depend on the number of
workers: the counts are merged in task order.
"""

from __future__ import annotations

import multiprocessing
import sys
from concurrent.futures import ProcessPoolExecutor

import numpy as np

from .mergeable import (
    PILOT_SIZE,
    SPACING,
    GridCounts,
    OutcomeCounts,
    fit_from_counts,
    fit_from_outcomes,
    pilot_bandwidth,
)

__all__ = ["audit_in_tasks", "load_black_box", "TaskError", "CHUNK"]

#: Outputs per task: its counts are a few hundred kilobytes, its outputs 8 MB of floats.
CHUNK = 1_000_000


class TaskError(RuntimeError):
    """A task of an audit failed: the black box raised or returned the wrong outputs."""


def _checked(outputs, size: int, what: str):
    got = np.shape(outputs)[0] if np.ndim(outputs) else None
    if got != size:
        shown = "a scalar" if got is None else f"{got:,} outputs"
        raise ValueError(f"the mechanism returned {shown} for {what} where {size:,} were asked for")
    return outputs


def _run_task(sampler, database, size, seed, dx, what):
    """Draw ``size`` outputs from ``seed``'s stream and return their counts (in a worker)."""
    outputs = _checked(sampler(database, size, np.random.default_rng(seed)), size, "this task")
    if dx is None:
        return OutcomeCounts.of(outputs, name="its outputs")
    return GridCounts.of(outputs, dx, name="its outputs")


def _tasks(n: int, first: int, chunk: int):
    sizes, left = [], n - first
    while left > 0:
        sizes.append(min(chunk, left))
        left -= sizes[-1]
    return sizes


def audit_in_tasks(
    sampler,
    database,
    neighbour,
    n_p,
    n_q,
    *,
    rng,
    discrete,
    workers,
    chunk=CHUNK,
    pilot=PILOT_SIZE,
    bandwidth=None,
    progress=None,
    scheduler=None,
    task_timeout=None,
):
    """The fit of two samples drawn in tasks (in ``workers`` processes; 1: here).

    Parameters
    ----------
    sampler : callable
        ``f(database, n, rng) -> outputs``, picklable when ``workers > 1``.
    database, neighbour : object
        Passed to the sampler.
    n_p, n_q : int
        Outputs per sample (the pilots included).
    rng : numpy.random.Generator
        Seeds one ``SeedSequence`` whose children are the pilots' and the tasks' streams.
    discrete : bool
        Count outcomes (True) or bin onto the pilot's grid (False).
    workers : int
        Processes drawing the tasks; 1 draws them in this process.
    chunk : int, default 1,000,000
        Most outputs per task.
    pilot : int, default 262,144
        Pilot outputs per sample (at most the sample).
    bandwidth : float, optional
        The KDE's :math:`h`; default: the pilots' (:func:`~renyi.audit.mergeable.pilot_bandwidth`).
    progress : bool, optional
        A progress bar on standard error; default: when it is a terminal.
    scheduler : str or dask.distributed.Client, optional
        Run the tasks on a Dask cluster (its address, or a client) instead of local
        processes; the workers need ``renyi`` and the black box's package.
    task_timeout : float, optional
        Seconds a task may take once the audit waits for it (worker processes and Dask
        only); a task that hangs stops the audit with a :class:`TaskError` naming it.

    Returns
    -------
    DensityFit
    """
    root = np.random.SeedSequence(rng.integers(0, 2**63, size=4).tolist())
    sizes = {"database": _tasks(n_p, min(pilot, n_p), chunk), "neighbour": _tasks(n_q, min(pilot, n_q), chunk)}
    pilot_p_seed, pilot_q_seed, *task_seeds = root.spawn(2 + len(sizes["database"]) + len(sizes["neighbour"]))
    pilot_p = _guarded((sampler, database, min(pilot, n_p), pilot_p_seed, None, "the pilot (database)"), raw=True)
    pilot_q = _guarded((sampler, neighbour, min(pilot, n_q), pilot_q_seed, None, "the pilot (neighbour)"), raw=True)
    if discrete:
        dx, h, scale = None, None, None
        merged = [OutcomeCounts.of(pilot_p, name="the pilot"), OutcomeCounts.of(pilot_q, name="the pilot")]
    else:
        h, scale = pilot_bandwidth(pilot_p, pilot_q, n_p, n_q)
        h = h if bandwidth is None else float(bandwidth)
        dx = h / SPACING
        merged = [GridCounts.of(pilot_p, dx, name="the pilot"), GridCounts.of(pilot_q, dx, name="the pilot")]
    del pilot_p, pilot_q
    jobs = []
    for side, (which, data) in enumerate((("database", database), ("neighbour", neighbour))):
        for size in sizes[which]:
            seed = task_seeds[len(jobs)]
            jobs.append((side, (sampler, data, size, seed, dx, f"task {len(jobs)} ({which}, {size:,} outputs)")))
    try:
        for side, counts in _run(jobs, workers, progress, scheduler, task_timeout):
            merged[side].merge(counts)
    except KeyboardInterrupt:
        drawn = merged[0].n + merged[1].n
        raise KeyboardInterrupt(f"interrupted after {drawn:,} of {n_p + n_q:,} outputs were drawn") from None
    if discrete:
        return fit_from_outcomes(*merged)
    return fit_from_counts(merged[0], merged[1], h, scale)


def _run(jobs, workers, progress, scheduler=None, timeout=None):
    """Each job's ``(side, counts)``, in job order, however the workers finish."""
    bar = _bar(len(jobs), progress)
    try:
        if scheduler is not None:
            yield from _run_on_dask(jobs, scheduler, bar, timeout)
            return
        if workers == 1:
            for side, args in jobs:
                yield side, _guarded(args)
                bar.update(1)
            return
        context = multiprocessing.get_context("spawn")
        with ProcessPoolExecutor(workers, mp_context=context) as pool:
            futures = [(side, args[-1], pool.submit(_run_task, *args)) for side, args in jobs]
            try:
                for side, what, future in futures:
                    counts = _result(future, what, timeout)
                    bar.update(1)
                    yield side, counts
            except BaseException:
                # A hung black box must not outlive the audit; the executor has no public way
                # to stop a running task, so its processes are terminated.
                processes = list((getattr(pool, "_processes", None) or {}).values())
                pool.shutdown(wait=False, cancel_futures=True)
                for process in processes:
                    process.terminate()
                raise
    finally:
        bar.close()


def _result(future, what, timeout):
    """A task's counts, or one :class:`TaskError` line: what failed, or that it hung."""
    from concurrent.futures import TimeoutError as FuturesTimeout

    try:
        return future.result(timeout=timeout)
    except (FuturesTimeout, TimeoutError):
        raise TaskError(f"{what} did not finish within {timeout:g} s (task_timeout); the audit stopped") from None
    except Exception as exc:
        raise TaskError(f"{what} failed: {type(exc).__name__}: {exc}") from None


def _guarded(args, raw=False):
    """A task here, its failure as one :class:`TaskError` line (``raw``: the outputs, not counts)."""
    try:
        if raw:
            sampler, data, size, seed, _, what = args
            outputs = _checked(sampler(data, size, np.random.default_rng(seed)), size, "the pilot")
            if np.asarray(outputs).dtype.kind == "f" and not np.all(np.isfinite(outputs)):
                raise ValueError("its outputs contain NaN or infinite values")
            return outputs
        return _run_task(*args)
    except Exception as exc:
        raise TaskError(f"{args[-1]} failed: {type(exc).__name__}: {exc}") from None


class _NoBar:
    def update(self, _):
        pass

    def close(self):
        pass


def _bar(total, progress):
    if progress is None:
        progress = sys.stderr.isatty()
    if not progress:
        return _NoBar()
    from tqdm import tqdm

    return tqdm(total=total, unit="task", desc="drawing", file=sys.stderr)


def _run_on_dask(jobs, scheduler, bar, timeout=None):
    """The jobs as tasks of a Dask cluster (a client, or the address of its scheduler)."""
    from dask.distributed import Client

    own = not isinstance(scheduler, Client)
    client = Client(scheduler) if own else scheduler
    futures = [(side, args[-1], client.submit(_run_task, *args, pure=False)) for side, args in jobs]
    try:
        for side, what, future in futures:
            counts = _result(future, what, timeout)
            bar.update(1)
            yield side, counts
    finally:
        client.cancel([future for _, _, future in futures])
        if own:
            client.close()


def load_black_box(spec: str):
    """The callable named ``"package.module:function"`` (imported here, and by name in workers).

    Parameters
    ----------
    spec : str
        A module path and an attribute path, separated by a colon, e.g.
        ``"mypackage.noise:laplace_count"``.

    Returns
    -------
    callable
        ``f(database, n, rng) -> outputs``.
    """
    import importlib

    if not isinstance(spec, str) or spec.count(":") != 1 or not all(spec.split(":")):
        raise ValueError(f"a black box is named 'package.module:function', got {spec!r}")
    module_name, attribute = spec.split(":")
    try:
        target = importlib.import_module(module_name)
    except ImportError as exc:
        raise ValueError(f"cannot import {module_name!r} for the black box {spec!r}: {exc}") from None
    for part in attribute.split("."):
        if not hasattr(target, part):
            raise ValueError(f"{module_name!r} has no {attribute!r} (the black box {spec!r})")
        target = getattr(target, part)
    if not callable(target):
        raise TypeError(f"the black box {spec!r} is not callable")
    return target
