"""Drawing a black box's outputs in tasks, on worker processes: each output once, counts only back.

:func:`audit_in_tasks` is the engine of ``audit(..., workers=k)``.  Each sample is split into
tasks of at most ``chunk`` outputs, every task drawing from its own stream, a child of one
``SeedSequence`` (one per task, not per worker).  The first tasks of each sample are its
**pilot**: they return their outputs, which fix the kind (discrete or continuous) and the grid
(:mod:`renyi.audit.mergeable`); every other task bins its outputs and returns only the counts.
Both pilots and then all other tasks run on the workers, and the counts are merged in task
order, so a worker holds one chunk at a time and the result depends on the seed, ``n``,
``chunk`` and ``pilot``, never on the number of workers.

Failures.  Whatever goes wrong in a task (the black box raises, exits, returns the wrong
outputs, hangs past ``task_timeout``, or its worker process dies) stops the audit with one
:class:`TaskError` line that names the task and carries the black box's own message; no worker
process is left running.  Worker processes ignore Ctrl-C (the audit stops them) and write what
the black box prints to standard error.
"""

from __future__ import annotations

import math
import multiprocessing
import os
import pickle
import signal
import sys
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures import TimeoutError as FuturesTimeout
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass

import numpy as np

from .black_box import checked_outputs
from .mergeable import (
    PILOT_SIZE,
    SPACING,
    GridCounts,
    OutcomeCounts,
    fit_from_counts,
    fit_from_outcomes,
    pilot_bandwidth,
)

__all__ = ["audit_in_tasks", "default_chunk", "TaskError", "CHUNK", "Task"]

#: Most outputs per task by default: its counts are a few hundred kilobytes, its outputs 8 MB.
CHUNK = 1_000_000
#: Tasks per sample the default ``chunk`` aims at (enough to keep dozens of workers busy).
TASKS_PER_SIDE = 32
#: Fewest outputs per task by default (below it, a task costs more to send than to draw).
MIN_CHUNK = 4_096
#: Most tasks one audit runs; beyond it the task list alone would take minutes to build.
MAX_TASKS = 100_000
#: Seconds to wait for a Dask scheduler to answer before the audit gives up.
CONNECT_TIMEOUT = 10.0
#: Seconds a stopped worker process gets to exit before it is killed.
STOP_GRACE = 1.0

SIDES = ("database", "neighbour")


class TaskError(RuntimeError):
    """A task of an audit failed: the black box raised, exited, hung or returned the wrong outputs."""


class _BlackBoxFailed(Exception):
    """Raised in a worker: the black box's failure as one line (the task is named by the audit)."""


def default_chunk(n: int) -> int:
    """Outputs per task for a sample of ``n``: about 32 tasks, between 4,096 and 1,000,000 outputs.

    It depends on ``n`` alone, not on the number of workers, so that the tasks, their seeds and
    hence the bound are the same on any number of workers.

    Parameters
    ----------
    n : int

    Returns
    -------
    int
    """
    return min(CHUNK, max(MIN_CHUNK, -(-int(n) // TASKS_PER_SIDE)))


@dataclass(frozen=True)
class Task:
    """One task: ``size`` outputs of the black box on one database, from one seed's stream.

    Attributes
    ----------
    index : int
        Its place in the audit (pilots first); errors name it.
    side : int
        0: the database, 1: the neighbour.
    size : int
    seed : numpy.random.SeedSequence
    pilot : bool
        Return the outputs themselves (they fix the grid), not their counts.
    """

    index: int
    side: int
    size: int
    seed: np.random.SeedSequence
    pilot: bool

    @property
    def name(self) -> str:
        """How errors name the task, e.g. ``task 3 (database, 250 outputs)``."""
        kind = ", pilot" if self.pilot else ""
        return f"task {self.index} ({SIDES[self.side]}{kind}, {self.size:,} outputs)"


@dataclass(frozen=True)
class Grid:
    """Where a counting task puts its outputs: on nodes of spacing ``dx``, or (None) by outcome.

    ``shape`` is one output's shape in the pilot; a task whose outputs differ is refused.
    """

    dx: float | None
    shape: tuple


def _sizes(n: int, chunk: int) -> list[int]:
    return [chunk] * (n // chunk) + ([n % chunk] if n % chunk else [])


def plan(n_p: int, n_q: int, pilot: int, chunk: int | None, root: np.random.SeedSequence) -> list[Task]:
    """The tasks of an audit: each sample's pilot, then the rest, each task with its own stream.

    Parameters
    ----------
    n_p, n_q : int
        Outputs per sample.
    pilot : int
        Pilot outputs per sample (at most the sample).
    chunk : int or None
        Most outputs per task; ``None``: :func:`default_chunk` of each sample.
    root : numpy.random.SeedSequence
        Its children, in task order, are the tasks' streams.

    Returns
    -------
    list of Task

    Raises
    ------
    ValueError
        More than :data:`MAX_TASKS` tasks (counted before any is built).
    """
    sides = []
    for n in (n_p, n_q):
        size = default_chunk(n) if chunk is None else chunk
        first = min(pilot, n)
        sides.append((size, first, n - first))
    count = sum(math.ceil(first / size) + math.ceil(rest / size) for size, first, rest in sides)
    if count > MAX_TASKS:
        raise ValueError(
            f"n = {n_p:,} and {n_q:,} outputs in tasks of at most {sides[0][0]:,} make {count:,} tasks; "
            f"an audit runs at most {MAX_TASKS:,}: pass a larger chunk"
        )
    order = [(side, size, True) for side, (chunk_, first, _) in enumerate(sides) for size in _sizes(first, chunk_)]
    order += [(side, size, False) for side, (chunk_, _, rest) in enumerate(sides) for size in _sizes(rest, chunk_)]
    seeds = root.spawn(len(order))
    return [Task(i, side, size, seed, first) for i, ((side, size, first), seed) in enumerate(zip(order, seeds))]


def draw(sampler, data, task: Task, grid: Grid | None):
    """Run one task: the pilot's outputs, or the counts of the task's outputs on ``grid``.

    Parameters
    ----------
    sampler : callable
        ``f(database, n, rng) -> outputs``.
    data : object
        The task's database.
    task : Task
    grid : Grid or None
        None for a pilot task.

    Returns
    -------
    ndarray, GridCounts or OutcomeCounts

    Notes
    -----
    The black box's failure (it raised anything but Ctrl-C, exited, or returned outputs that
    :func:`~renyi.audit.black_box.checked_outputs` refuses or of another shape than the
    pilot's) is raised as one line, which the audit prefixes with the task's name.
    """
    try:
        outputs = sampler(data, task.size, np.random.default_rng(task.seed))
    except SystemExit as exc:
        raise _BlackBoxFailed(f"the black box called sys.exit({exc.code!r})") from None
    except Exception as exc:
        raise _BlackBoxFailed(f"{type(exc).__name__}: {exc}") from None
    try:
        outputs = checked_outputs(outputs, task.size, "this task")
    except ValueError as exc:
        raise _BlackBoxFailed(str(exc)) from None
    if task.pilot:
        return outputs
    if outputs.shape[1:] != grid.shape:
        raise _BlackBoxFailed(
            f"outputs of shape {_shape(outputs.shape[1:])}, where the pilot's were {_shape(grid.shape)}"
        )
    if grid.dx is None:
        return OutcomeCounts.of(outputs, name="its outputs")
    return GridCounts.of(outputs, grid.dx, name="its outputs")


def _shape(trailing: tuple) -> str:
    return "(n,)" if not trailing else f"(n, {', '.join(map(str, trailing))})"


def audit_in_tasks(
    sampler,
    database,
    neighbour,
    n_p,
    n_q,
    *,
    rng,
    discrete=None,
    workers=1,
    chunk=None,
    pilot=PILOT_SIZE,
    bandwidth=None,
    progress=None,
    scheduler=None,
    task_timeout=None,
    isolate=False,
):
    """The fit of two samples drawn in tasks (in ``workers`` processes; 1: here).

    Parameters
    ----------
    sampler : callable
        ``f(database, n, rng) -> outputs``, picklable when it runs in worker processes.
    database, neighbour : object
        Passed to the sampler.
    n_p, n_q : int
        Outputs per sample (the pilots included).
    rng : numpy.random.Generator
        Seeds one ``SeedSequence`` whose children are the tasks' streams.
    discrete : bool, optional
        Count outcomes (True) or bin onto the pilots' grid (False); default: inferred from the
        pilots as :func:`~renyi.audit.pipeline.infer_kind` infers it from whole samples
        (integers, booleans or rows: discrete; real values: continuous).
    workers : int, default 1
        Processes drawing the tasks; 1 draws them in this process (in one worker process when
        ``task_timeout`` is set, so that a hung task can be stopped).
    chunk : int, optional
        Most outputs per task; default :func:`default_chunk` of each sample.
    pilot : int, default 262,144
        Pilot outputs per sample (at most the sample), drawn in tasks like the rest.
    bandwidth : float, optional
        The KDE's :math:`h`; default: the pilots' (:func:`~renyi.audit.mergeable.pilot_bandwidth`).
    progress : bool, optional
        A progress bar on standard error; default: when it is a terminal.
    scheduler : str or dask.distributed.Client, optional
        Run the tasks on a Dask cluster (its address, or a client) instead of local
        processes; the workers need ``renyi`` and the black box's package.  An address
        that does not answer within 10 s stops the audit.
    task_timeout : float, optional
        Seconds a task may take once the audit waits for it; a task that hangs stops the
        audit with a :class:`TaskError` naming it.
    isolate : bool, default False
        With ``workers=1``, draw in one worker process rather than here, so that a black box
        that ends its process (``os._exit``, a crash in C) or raises ``KeyboardInterrupt``
        fails as one :class:`TaskError` instead of taking this process with it.

    Returns
    -------
    DensityFit

    Raises
    ------
    TaskError
        A task failed (one line: the task, and the black box's message).
    """
    root = np.random.SeedSequence(rng.integers(0, 2**63, size=4).tolist())
    tasks = plan(n_p, n_q, pilot, chunk, root)
    pilots = [t for t in tasks if t.pilot]
    with _engine(sampler, (database, neighbour), workers, scheduler, task_timeout, isolate) as engine:
        bar = _bar(len(tasks), progress)
        done = 0  # outputs drawn so far, for the message on Ctrl-C
        try:
            drawn = [[], []]
            for task, outputs in engine.run(pilots, None, bar):
                drawn[task.side].append(outputs)
                done += task.size
            pilot_p, pilot_q = (_joined(parts, side) for side, parts in enumerate(drawn))
            is_discrete = _kind(pilot_p, pilot_q, discrete)
            if is_discrete:
                grid, h, scale = Grid(None, pilot_p.shape[1:]), None, None
                merged = [OutcomeCounts.of(pilot_p, name="the pilot"), OutcomeCounts.of(pilot_q, name="the pilot")]
                if discrete is None:
                    _refuse_unique_outcomes(merged, min(pilot_p.shape[0], pilot_q.shape[0]))
            else:
                h, scale = pilot_bandwidth(pilot_p, pilot_q, n_p, n_q)
                h = h if bandwidth is None else float(bandwidth)
                grid = Grid(h / SPACING, ())
                merged = [
                    GridCounts.of(pilot_p, grid.dx, name="the pilot"),
                    GridCounts.of(pilot_q, grid.dx, name="the pilot"),
                ]
            del pilot_p, pilot_q, drawn
            for task, counts in engine.run([t for t in tasks if not t.pilot], grid, bar):
                merged[task.side].merge(counts)
                done += task.size
        except KeyboardInterrupt:
            raise KeyboardInterrupt(f"interrupted after {done:,} of {n_p + n_q:,} outputs were drawn") from None
        finally:
            bar.close()
    if is_discrete:
        return fit_from_outcomes(*merged)
    return fit_from_counts(merged[0], merged[1], h, scale)


def _kind(pilot_p: np.ndarray, pilot_q: np.ndarray, discrete) -> bool:
    """Discrete or continuous, from the pilots as the in-memory fit infers it from whole samples."""
    from .pipeline import infer_kind

    if discrete is None and pilot_p.ndim == 2 and pilot_p.shape[1] > 1 and pilot_p.dtype.kind == "f":
        raise ValueError(
            f"the black box returns vectors of d = {pilot_p.shape[1]} real values: in one process, audit "
            "them with projection= (drop workers and scheduler); or set discrete=True if each row is an outcome"
        )
    try:
        is_discrete = infer_kind(pilot_p, pilot_q, discrete)
    except ValueError as exc:
        words = str(exc).replace("samples_p", "the pilot (database)").replace("samples_q", "the pilot (neighbour)")
        raise ValueError(words) from None
    if not is_discrete and pilot_p.ndim != 1:
        raise ValueError(
            f"the black box returns outputs of shape {_shape(pilot_p.shape[1:])}; continuous outputs in tasks "
            "are real values (n,): audit vectors in one process with projection= (drop workers and scheduler)"
        )
    return is_discrete


def _refuse_unique_outcomes(counts: list, pilot: int) -> None:
    """Inferred discrete outputs whose pilot outcomes are mostly unique are real values, not outcomes."""
    distinct = len(counts[0].counts.keys() | counts[1].counts.keys())
    if pilot >= 20 and distinct > 0.5 * pilot:  # (the in-memory fit's rule, on the pilots)
        raise ValueError(
            f"the outputs look continuous, not discrete: {distinct:,} distinct outcomes in the pilots' "
            f"{counts[0].n + counts[1].n:,} outputs, so most occur once and relative frequencies estimate "
            "nothing; pass discrete=False for real values, or discrete=True to insist"
        )


def _joined(parts: list, side: int) -> np.ndarray:
    """One sample's pilot from its tasks' outputs, refused if they disagree in shape."""
    shapes = {part.shape[1:] for part in parts}
    if len(shapes) > 1:
        raise TaskError(
            f"the pilot ({SIDES[side]}) came back in outputs of shapes "
            f"{', '.join(sorted(_shape(s) for s in shapes))}: a black box must return one shape"
        )
    return np.concatenate(parts)


def _engine(sampler, data, workers, scheduler, timeout, isolate):
    if scheduler is not None:
        return _Dask(sampler, data, scheduler, timeout)
    if workers == 1 and timeout is None and not isolate:
        return _Here(sampler, data)
    return _Pool(sampler, data, workers, timeout)


class _Here:
    """The tasks in this process, in order (a black box's Ctrl-C is the user's)."""

    def __init__(self, sampler, data):
        self.sampler, self.data = sampler, data

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False

    def run(self, tasks, grid, bar):
        for task in tasks:
            try:
                result = draw(self.sampler, self.data[task.side], task, grid)
            except _BlackBoxFailed as exc:
                raise TaskError(f"{task.name} failed: {exc}") from None
            bar.update(1)
            yield task, result


# The black box and both databases in a worker process, set once by _start_worker.
_WORKER: dict = {}


def _start_worker(payload: bytes) -> None:
    """A worker process's start: Ctrl-C is the parent's, prints go to stderr, the black box loads."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    sys.stdout.flush()
    os.dup2(2, 1)  # (a black box's output must not land in the audit's standard output)
    sys.stdout = sys.stderr
    try:
        _WORKER["sampler"], _WORKER["data"] = pickle.loads(payload)
    except Exception as exc:  # e.g. a function of a notebook's __main__, unknown to the worker
        _WORKER["error"] = f"the black box cannot be loaded in a worker process: {type(exc).__name__}: {exc}"


def _pool_task(task: Task, grid: Grid | None):
    if "error" in _WORKER:
        raise _BlackBoxFailed(_WORKER["error"])
    try:
        return draw(_WORKER["sampler"], _WORKER["data"][task.side], task, grid)
    except KeyboardInterrupt:  # workers ignore Ctrl-C, so the black box raised it itself
        raise _BlackBoxFailed("the black box raised KeyboardInterrupt") from None


class _Pool:
    """Local worker processes (spawned), each loading the black box once for the whole audit."""

    def __init__(self, sampler, data, workers, timeout):
        try:
            payload = pickle.dumps((sampler, data))
        except Exception as exc:
            raise ValueError(
                "worker processes need a picklable black box and databases (a function defined at "
                f"module level, not a lambda or a closure): {type(exc).__name__}: {exc}"
            ) from None
        context = multiprocessing.get_context("spawn")
        self.pool = ProcessPoolExecutor(workers, mp_context=context, initializer=_start_worker, initargs=(payload,))
        self.timeout = timeout

    def __enter__(self):
        return self

    def __exit__(self, kind, exc, tb):
        if kind is None:
            self.pool.shutdown(wait=True)
        else:
            self.stop()
        return False

    def stop(self) -> None:
        """Stop every worker now: the executor cannot cancel a running task, so they are ended."""
        processes = list((getattr(self.pool, "_processes", None) or {}).values())
        for process in processes:
            process.terminate()
        for process in processes:
            process.join(STOP_GRACE)
            if process.is_alive():
                process.kill()
                process.join(STOP_GRACE)
        self.pool.shutdown(wait=True, cancel_futures=True)

    def run(self, tasks, grid, bar):
        futures = [(task, self.pool.submit(_pool_task, task, grid)) for task in tasks]
        for task, future in futures:
            result = _result(future, task, self.timeout)
            bar.update(1)
            yield task, result


def _result(future, task: Task, timeout):
    """A task's result, or one :class:`TaskError` line: what failed, or that it hung."""
    try:
        return future.result(timeout=timeout)
    except (FuturesTimeout, TimeoutError):
        raise TaskError(f"{task.name} did not finish within {timeout:g} s (task_timeout); the audit stopped") from None
    except _BlackBoxFailed as exc:
        raise TaskError(f"{task.name} failed: {exc}") from None
    except BrokenProcessPool:
        raise TaskError(
            f"{task.name} failed: a worker process died (killed, out of memory, or the black box ended it)"
        ) from None
    except Exception as exc:
        raise TaskError(f"{task.name} failed: {type(exc).__name__}: {_one_line(exc)}") from None


def _one_line(exc: BaseException) -> str:
    return " ".join(str(exc).split())


class _Dask:
    """The tasks on a Dask cluster (a client, or the address of its scheduler)."""

    def __init__(self, sampler, data, scheduler, timeout):
        try:
            from dask.distributed import Client
        except ImportError:
            raise ValueError(
                "scheduler= runs tasks on a Dask cluster and needs dask[distributed]: pip install 'dask[distributed]'"
            ) from None
        self.own = not isinstance(scheduler, Client)
        if self.own:
            _probe(scheduler)
            try:
                self.client = Client(scheduler, timeout=CONNECT_TIMEOUT)
            except Exception as exc:
                raise TaskError(
                    f"cannot use the Dask scheduler at {scheduler!r}: {type(exc).__name__}: {_one_line(exc)}"
                ) from None
        else:
            self.client = scheduler
        self.sampler, self.data, self.timeout = sampler, data, timeout
        self.futures = []

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.client.cancel(self.futures)
        if self.own:
            self.client.close()
        return False

    def run(self, tasks, grid, bar):
        futures = [
            (task, self.client.submit(_dask_task, self.sampler, self.data[task.side], task, grid, pure=False))
            for task in tasks
        ]
        self.futures += [future for _, future in futures]
        for task, future in futures:
            result = _result(future, task, self.timeout)
            bar.update(1)
            yield task, result


def _probe(address) -> None:
    """Refuse, within :data:`CONNECT_TIMEOUT`, a TCP address where no Dask scheduler answers.

    A scheduler speaks first on a new connection (its handshake), so a server that accepts and
    stays silent is not one; the client itself would wait on it for as long as it stays open.
    """
    import socket
    import time

    if not isinstance(address, str):
        raise TypeError(f"scheduler must be an address such as 'tcp://host:8786' or a dask Client, got {address!r}")
    target = address.removeprefix("tcp://")
    if "://" in target:  # tls://, ucx://, inproc://: the client's own checks apply
        return
    host, _, port = target.rpartition(":")
    if not host or not port.isdigit():
        raise TaskError(f"cannot use the Dask scheduler at {address!r}: expected 'tcp://host:port'")
    deadline = time.monotonic() + CONNECT_TIMEOUT
    try:
        with socket.create_connection((host.strip("[]"), int(port)), timeout=CONNECT_TIMEOUT) as sock:
            sock.settimeout(max(0.1, deadline - time.monotonic()))
            if not sock.recv(1):
                raise TaskError(f"the server at {address!r} closed the connection: it is not a Dask scheduler")
    except TimeoutError:
        raise TaskError(
            f"no Dask scheduler answered at {address!r} within {CONNECT_TIMEOUT:g} s (connect timeout)"
        ) from None
    except OSError as exc:
        raise TaskError(f"cannot reach a Dask scheduler at {address!r}: {exc.strerror or exc}") from None


def _dask_task(sampler, data, task: Task, grid: Grid | None):
    try:
        return draw(sampler, data, task, grid)
    except KeyboardInterrupt:
        raise _BlackBoxFailed("the black box raised KeyboardInterrupt") from None


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
