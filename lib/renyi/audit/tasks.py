"""What runs in a worker: one task of an audit, drawn from the black box and counted.

:class:`Task` names a task (its sample, size and seed), :func:`draw` runs it, and
:func:`start_worker` with :func:`run_in_worker` (local processes) or :func:`run_on_dask` (a
Dask cluster) are what a worker calls.  This module and the ones it imports need numpy only,
so a worker process starts in a fraction of a second; :mod:`renyi.audit.parallel` plans the
tasks and merges what they return.
"""

from __future__ import annotations

import os
import pickle
import signal
import sys
from dataclasses import dataclass

import numpy as np

from .black_box import checked_outputs
from .counts import GridCounts, OutcomeCounts, RowMoments, VectorGridCounts, grid_coordinates

__all__ = [
    "Task",
    "Grid",
    "BlackBoxFailure",
    "draw",
    "start_worker",
    "run_in_worker",
    "run_on_dask",
    "shape_text",
    "project_rows",
    "SIDES",
]

SIDES = ("database", "neighbour")


class BlackBoxFailure(Exception):
    """The black box's failure in a task, as one line (the audit prefixes the task's name)."""


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
    """Where a counting task puts its outputs: on the nodes of a spacing, or by outcome.

    Attributes
    ----------
    dx : float or None
        The node spacing; None counts outcomes (discrete outputs).
    shape : tuple
        One output's shape in the pilot (``()`` for scalars); a task whose outputs differ is
        refused.
    direction : ndarray, callable or None
        For vector outputs: the unit direction ``w`` that each row is projected on
        (``rows @ w``), or a map ``f(rows) -> values``, before it is binned.
    whitening : tuple or None
        For vector outputs binned with no projection (``projection="grid"``): the pilots'
        ``(centre, inverse_factor)`` of :func:`~renyi.audit.counts.grid_coordinates`; ``dx``
        is then the spacing per axis.
    """

    dx: float | np.ndarray | None
    shape: tuple
    direction: object = None
    whitening: tuple | None = None


def draw(sampler, data, task: Task, grid: Grid | None):
    """Run one task: the pilot's outputs, or the counts of the task's outputs on ``grid``.

    Parameters
    ----------
    sampler : callable
        ``f(database, n, rng) -> outputs``.
    data : object
        The task's database.
    task : renyi.audit.tasks.Task
    grid : Grid or None
        None for a pilot task.

    Returns
    -------
    ndarray, GridCounts, OutcomeCounts, VectorGridCounts, or (GridCounts, RowMoments)
        The pilot's outputs; the counts (of vector outputs in the grid's coordinates, with
        ``grid.whitening``); or, for vector outputs projected on ``grid.direction``, the counts
        of the projections with the rows' sums.

    Notes
    -----
    The black box's failure (it raised anything but Ctrl-C, exited, or returned outputs that
    :func:`~renyi.audit.black_box.checked_outputs` refuses or of another shape than the
    pilot's) is raised as one line, which the audit prefixes with the task's name.
    """
    try:
        outputs = sampler(data, task.size, np.random.default_rng(task.seed))
    except SystemExit as exc:
        raise BlackBoxFailure(f"the black box called sys.exit({exc.code!r})") from None
    except Exception as exc:
        raise BlackBoxFailure(f"{type(exc).__name__}: {exc}") from None
    try:
        outputs = checked_outputs(outputs, task.size, "this task")
    except ValueError as exc:
        raise BlackBoxFailure(str(exc)) from None
    if task.pilot:
        return outputs
    if outputs.shape[1:] != grid.shape:
        raise BlackBoxFailure(
            f"outputs of shape {shape_text(outputs.shape[1:])}, where the pilot's were {shape_text(grid.shape)}"
        )
    if grid.dx is None:
        return OutcomeCounts.of(outputs, name="its outputs")
    if grid.whitening is not None:
        return VectorGridCounts.of(grid_coordinates(outputs, *grid.whitening), grid.dx, name="its outputs")
    if grid.direction is not None:
        values = project_rows(outputs, grid.direction)
        return GridCounts.of(values, grid.dx, name="its projected outputs"), RowMoments.of(outputs, values)
    return GridCounts.of(outputs, grid.dx, name="its outputs")


def project_rows(rows: np.ndarray, direction) -> np.ndarray:
    """Vector outputs reduced to one value each: ``rows @ w``, or a map ``f(rows)``.

    Parameters
    ----------
    rows : ndarray, shape (m, d)
    direction : ndarray of shape (d,), or callable

    Returns
    -------
    ndarray, shape (m,)

    Raises
    ------
    BlackBoxFailure
        A map returned the wrong number of values, or NaN or infinite ones.
    """
    if not callable(direction):
        return np.asarray(rows, dtype=float) @ direction
    try:
        values = np.asarray(direction(rows), dtype=float).ravel()
    except Exception as exc:
        raise BlackBoxFailure(f"the projection raised {type(exc).__name__}: {exc}") from None
    if values.size != rows.shape[0] or not np.all(np.isfinite(values)):
        raise BlackBoxFailure(
            f"the projection returned {values.size:,} values (finite: {bool(np.all(np.isfinite(values)))}) "
            f"for {rows.shape[0]:,} rows"
        )
    return values


def shape_text(trailing: tuple) -> str:
    """One output's shape as a reader writes the sample's: ``(n,)`` or ``(n, 3)``.

    Parameters
    ----------
    trailing : tuple
        The shape of one output.

    Returns
    -------
    str
    """
    return "(n,)" if not trailing else f"(n, {', '.join(map(str, trailing))})"


# The black box and both databases in a worker process, set once by start_worker.
_WORKER: dict = {}


def start_worker(payload: bytes) -> None:
    """A worker process's start: Ctrl-C is the parent's, prints go to stderr, the black box loads.

    Parameters
    ----------
    payload : bytes
        The pickled pair ``(sampler, (database, neighbour))``, loaded once for the whole audit.

    Returns
    -------
    None
    """
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    sys.stdout.flush()
    os.dup2(2, 1)  # (a black box's output must not land in the audit's standard output)
    sys.stdout = sys.stderr
    try:
        _WORKER["sampler"], _WORKER["data"] = pickle.loads(payload)
    except Exception as exc:  # e.g. a function of a notebook's __main__, unknown to the worker
        _WORKER["error"] = f"the black box cannot be loaded in a worker process: {type(exc).__name__}: {exc}"


def run_in_worker(task: Task, grid: Grid | None):
    """:func:`draw` in a worker process that :func:`start_worker` set up.

    Parameters
    ----------
    task : renyi.audit.tasks.Task
    grid : Grid or None

    Returns
    -------
    ndarray, GridCounts or OutcomeCounts
    """
    if "error" in _WORKER:
        raise BlackBoxFailure(_WORKER["error"])
    try:
        return draw(_WORKER["sampler"], _WORKER["data"][task.side], task, grid)
    except KeyboardInterrupt:  # workers ignore Ctrl-C, so the black box raised it itself
        raise BlackBoxFailure("the black box raised KeyboardInterrupt") from None


def run_on_dask(sampler, data, task: Task, grid: Grid | None):
    """:func:`draw` on a Dask worker (the black box and the database come with the task).

    Parameters
    ----------
    sampler : callable
    data : object
    task : renyi.audit.tasks.Task
    grid : Grid or None

    Returns
    -------
    ndarray, GridCounts or OutcomeCounts
    """
    try:
        return draw(sampler, data, task, grid)
    except KeyboardInterrupt:
        raise BlackBoxFailure("the black box raised KeyboardInterrupt") from None
