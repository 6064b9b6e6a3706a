"""Where an audit's tasks run: in this process, in local worker processes, or on a Dask cluster.

:func:`engine` picks one; each submits tasks (:class:`~renyi.audit.tasks.Task`) and collects
their results in task order, however the workers finish.  Whatever fails in a task becomes one
:class:`TaskError` line that names it; local workers are ended on any failure or Ctrl-C, so
none is left running.  :mod:`renyi.audit.parallel` plans the tasks and merges the results.
"""

from __future__ import annotations

import contextlib
import multiprocessing
import pickle
import signal
import sys
import threading
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures import TimeoutError as FuturesTimeout
from concurrent.futures.process import BrokenProcessPool

from .tasks import BlackBoxFailure, Task, draw, run_in_worker, run_on_dask, start_worker

__all__ = ["engine", "progress_bar", "TaskError", "CONNECT_TIMEOUT"]

#: Seconds to wait for a Dask scheduler to answer before the audit gives up.
CONNECT_TIMEOUT = 10.0
#: Seconds a stopped worker process gets to exit before it is killed.
STOP_GRACE = 1.0


class TaskError(RuntimeError):
    """A task of an audit failed: the black box raised, exited, hung or returned the wrong outputs."""


def engine(sampler, data, workers, scheduler, timeout, isolate):
    """Where the tasks run: here, in local worker processes, or on a Dask cluster.

    Parameters
    ----------
    sampler : callable
    data : tuple
        ``(database, neighbour)``.
    workers : int
    scheduler : str, dask.distributed.Client or None
    timeout : float or None
    isolate : bool

    Returns
    -------
    object
        A context manager with ``submit(tasks, grid)`` and ``collect(submitted, bar)``.
    """
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

    def submit(self, tasks, grid):
        return [(task, grid) for task in tasks]  # (drawn when collected, one at a time)

    def collect(self, submitted, bar):
        for task, grid in submitted:
            try:
                result = draw(self.sampler, self.data[task.side], task, grid)
            except BlackBoxFailure as exc:
                raise TaskError(f"{task.name} failed: {exc}") from None
            bar.update(1)
            yield task, result


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
        self.pool = ProcessPoolExecutor(workers, mp_context=context, initializer=start_worker, initargs=(payload,))
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
        with _ctrl_c_held():
            self._end_workers()

    def _end_workers(self) -> None:
        processes = list((getattr(self.pool, "_processes", None) or {}).values())
        manager = getattr(self.pool, "_executor_manager_thread", None)
        results = getattr(self.pool, "_result_queue", None)
        for process in processes:
            process.terminate()
        for process in processes:
            process.join(STOP_GRACE)
            if process.is_alive():
                process.kill()
                process.join(STOP_GRACE)
        self.pool.shutdown(wait=False, cancel_futures=True)
        # A worker ended while it wrote a result leaves half a message in the result pipe, and
        # the executor's thread waits for the rest for ever: this process holds the pipe's write
        # end too.  Closing that end turns the wait into an end of file, which the thread takes
        # for a broken pool, and it ends (else the interpreter would wait for it at exit).
        if results is not None:
            results._writer.close()
        if manager is not None:
            manager.join()

    def submit(self, tasks, grid):
        with _ctrl_c_held():  # (submit starts workers)
            return [(task, self.pool.submit(run_in_worker, task, grid)) for task in tasks]

    def collect(self, submitted, bar):
        for task, future in submitted:
            result = _result(future, task, self.timeout)
            bar.update(1)
            yield task, result


@contextlib.contextmanager
def _ctrl_c_held():
    """Hold a Ctrl-C until the block is done, then raise it.

    The executor starts a worker, then records it; a Ctrl-C between the two leaves a worker
    that :meth:`_Pool.stop` cannot see and that the interpreter waits for at exit: a hang.
    Only the main thread receives signals, and only there can the handler be swapped; a
    handler of the caller's own (or Ctrl-C ignored) is left alone.
    """
    if (
        threading.current_thread() is not threading.main_thread()
        or signal.getsignal(signal.SIGINT) is not signal.default_int_handler
    ):
        yield
        return
    caught = []
    previous = signal.signal(signal.SIGINT, lambda *_: caught.append(True))
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)
    if caught:
        raise KeyboardInterrupt


def _result(future, task: Task, timeout):
    """A task's result, or one :class:`TaskError` line: what failed, or that it hung."""
    try:
        return future.result(timeout=timeout)
    except (FuturesTimeout, TimeoutError):
        raise TaskError(f"{task.name} did not finish within {timeout:g} s (task_timeout); the audit stopped") from None
    except BlackBoxFailure as exc:
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

    def submit(self, tasks, grid):
        submitted = [
            (task, self.client.submit(run_on_dask, self.sampler, self.data[task.side], task, grid, pure=False))
            for task in tasks
        ]
        self.futures += [future for _, future in submitted]
        return submitted

    def collect(self, submitted, bar):
        for task, future in submitted:
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


class _NoBar:
    def update(self, _):
        pass

    def close(self):
        pass


def progress_bar(total: int, progress):
    """A tqdm bar on standard error (default: when it is a terminal), or one that shows nothing.

    Parameters
    ----------
    total : int
    progress : bool or None

    Returns
    -------
    object
        With ``update(k)`` and ``close()``.
    """
    if progress is None:
        progress = sys.stderr.isatty()
    if not progress:
        return _NoBar()
    from tqdm import tqdm

    return tqdm(total=total, unit="task", desc="drawing", file=sys.stderr)
