"""The worker processes of :func:`~renyi.lift.optimum.global_optimum`.

They bound chunks of a round of the box tree's boxes, and run local searches for channels,
while the calling process works on its own share.
"""

from __future__ import annotations

import multiprocessing
import os
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool

__all__ = ["WorkerPool"]

#: Thread counts of the BLAS libraries numpy may use, set to 1 in worker processes.
BLAS_THREAD_VARIABLES = ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")


def _warm_up():
    """A no-op task: unpickling it imports this module (numpy, scipy) in a fresh worker."""


class WorkerPool:
    """Worker processes that bound chunks of a round's boxes while this process bounds one.

    Started with ``spawn`` on every platform: a forked child of a process with BLAS
    threads can deadlock, and the same start method everywhere behaves the same.  As with
    any process pool, a script that uses it must run under ``if __name__ == "__main__":``;
    a pool that breaks (without that guard its workers fail at their start) raises a
    ``RuntimeError`` that says so.  The workers start at once (a no-op task each), so that
    they boot while the first LP and the channel searches run.

    Parameters
    ----------
    processes : int
        Worker processes besides the calling one.
    """

    def __init__(self, processes):
        self.workers = processes
        self.executor = ProcessPoolExecutor(processes, mp_context=multiprocessing.get_context("spawn"))
        # One BLAS thread per worker: its matrices are |Y| x |Y|, and threads would only
        # compete with the other processes for the cores.  A spawned child takes the
        # environment of the moment it starts, which is at these submits.
        saved = {name: os.environ.get(name) for name in BLAS_THREAD_VARIABLES}
        os.environ.update({name: "1" for name in BLAS_THREAD_VARIABLES})
        try:
            for _ in range(processes):
                self.executor.submit(_warm_up)
        except BrokenProcessPool as err:
            # (a submit can find the pool broken already: a worker that failed at its start)
            self.executor.shutdown(wait=True, cancel_futures=True)
            raise self._explained() from err
        finally:
            for name, value in saved.items():
                if value is None:
                    os.environ.pop(name)
                else:
                    os.environ[name] = value

    def __enter__(self):
        return self

    def __exit__(self, kind, error, traceback):
        self.executor.shutdown(wait=True, cancel_futures=True)
        if isinstance(error, BrokenProcessPool):
            raise self._explained() from error

    def _explained(self):
        """A broken pool's likely cause and the way out, as the caller of ``global_optimum`` sees it.

        A spawned worker imports the calling script; one that starts ``global_optimum`` outside
        ``if __name__ == "__main__":`` fails at that import, and the pool then reports only that a
        child "terminated abruptly".
        """
        return RuntimeError(
            f"a worker process of global_optimum(..., workers={self.workers + 1}) ended abruptly. In a "
            'script, call global_optimum under if __name__ == "__main__": (each worker is a new Python '
            "process that imports the script); otherwise a worker may have been killed, for example for "
            "memory. workers=1 runs in this process alone."
        )
