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
:class:`~renyi.audit.engines.TaskError` line that names the task and carries the black box's own message; no worker
process is left running.  Worker processes ignore Ctrl-C (the audit stops them) and write what
the black box prints to standard error.
"""

from __future__ import annotations

import math

import numpy as np

from .bandwidth import SCALE_SAMPLE
from .counts import GridCounts, OutcomeCounts, RowMoments, VectorGridCounts, grid_coordinates
from .engines import TaskError, engine, progress_bar
from .tasks import (
    SIDES,
    BlackBoxFailure,
    Grid,
    Task,
    project_rows,
    shape_text,
)

__all__ = ["audit_in_tasks", "default_chunk", "plan", "CHUNK"]

#: Most outputs per task by default: its counts are a few hundred kilobytes, its outputs 8 MB.
CHUNK = 1_000_000
#: Tasks per sample the default ``chunk`` aims at (enough to keep dozens of workers busy).
TASKS_PER_SIDE = 32
#: Fewest outputs per task by default (below it, a task costs more to send than to draw).
MIN_CHUNK = 4_096
#: Most tasks one audit runs; beyond it the task list alone would take minutes to build.
MAX_TASKS = 100_000
#: Most bytes of pilot outputs held per sample (vector outputs: the pilot's rows times d).
MAX_PILOT_BYTES = 1 << 30
#: Most bytes of outputs one task of vector outputs holds (its rows times d), when chunk is default.
TASK_BYTES = 1 << 26


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
    list of renyi.audit.tasks.Task

    Raises
    ------
    ValueError
        More than ``MAX_TASKS`` (100,000) tasks (counted before any is built).
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
    pilot=SCALE_SAMPLE,
    bandwidth=None,
    progress=None,
    scheduler=None,
    task_timeout=None,
    isolate=False,
    projection=None,
    method="delta",
    support=None,
    scored_at=None,
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
        pilots as :func:`~renyi.audit.density_fit.infer_kind` infers it from whole samples
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
        audit with a :class:`~renyi.audit.engines.TaskError` naming it.
    isolate : bool, default False
        With ``workers=1``, draw in one worker process rather than here, so that a black box
        that ends its process (``os._exit``, a crash in C) or raises ``KeyboardInterrupt``
        fails as one :class:`~renyi.audit.engines.TaskError` instead of taking this process with it.
    projection : str, array_like or callable, optional
        For vector outputs, shape ``(n, d)``: a learned map (``"auto"``,
        ``"likelihood-ratio"``, ``"mean-difference"`` or ``"whitened"``,
        :func:`~renyi.audit.reduction.learn_map`) is scored, chosen and learned on the pilots,
        which are then held out of the bound (as ``split`` holds out part of each sample in
        one process); a fixed direction ``w`` or a picklable map
        ``f(rows) -> values`` uses every output.  Each task projects its rows and bins the
        values; with the default ``chunk``, a task of vectors holds at most 64 MiB of rows.
        ``"grid"`` (:math:`d=2` or 3) projects nothing: the pilots fix the whitening, the
        bandwidths and the spacing (:func:`~renyi.audit.multivariate_kde.pilot_grid`), each task
        bins its rows on that grid, and every output, the pilots' too, is in the estimate.
        ``"auto"`` at :math:`d=2` or 3 scores that grid too; where it wins, the pilots fix it
        as above but stay out of the estimate (they chose it).

    method : {"delta", "finite-sample"}, default "delta"
        ``"finite-sample"`` (discrete outputs): outcome counts for the bound that holds at
        every n; the pilot chooses the cells and is held out, unless ``support`` (or boolean
        outputs) declares at most two outcomes, which are the cells.
    support : array_like, optional
        With ``"finite-sample"``: every outcome the mechanism can produce (1-D outputs).
    scored_at : dict, optional
        ``orders``, ``alpha`` and ``direction`` of the bound to come: where a learned map's
        candidates are scored (:func:`~renyi.audit.reduction.held_out_scores`).

    Returns
    -------
    fit : DensityFit, or renyi.audit.finite_sample.Grouping with ``"finite-sample"``
    projection : renyi.audit.projection.Projection or None
        How vector outputs were projected (None without ``projection``).

    Raises
    ------
    renyi.audit.engines.TaskError
        A task failed (one line: the task, and the black box's message).
    """
    root = np.random.SeedSequence(rng.integers(0, 2**63, size=4).tolist())
    tasks = plan(n_p, n_q, pilot, chunk, root)
    with engine(sampler, (database, neighbour), workers, scheduler, task_timeout, isolate) as running:
        bar = progress_bar(len(tasks), progress)
        drawn = [0]  # outputs drawn so far, for the message on Ctrl-C
        try:
            submitted = running.submit([t for t in tasks if t.pilot], None)
            # The fit's modules (scipy) load while the workers draw the pilots, not before.
            from .mergeable import fit_from_counts, fit_from_outcomes

            pilot_p, pilot_q = _pilots(running.collect(submitted, bar), drawn)
            if method == "finite-sample":
                start = _start_cells(pilot_p, pilot_q, discrete, support)
            elif projection is None:
                start = _start(pilot_p, pilot_q, discrete, bandwidth, (n_p, n_q))
            elif isinstance(projection, str) and projection == "grid":
                start = _start_grid(pilot_p, pilot_q, (n_p, n_q))
            else:
                start = _start_projected(pilot_p, pilot_q, projection, bandwidth, (n_p, n_q), scored_at)
            del pilot_p, pilot_q
            rest = [t for t in tasks if not t.pilot]
            if start.grid.shape and start.grid.dx is not None and chunk is None:
                rest = _vector_tasks(rest, start.grid.shape[0], root)
            for task, result in running.collect(running.submit(rest, start.grid), bar):
                start.add(task.side, result)
                drawn[0] += task.size
        except KeyboardInterrupt:
            raise KeyboardInterrupt(f"interrupted after {drawn[0]:,} of {n_p + n_q:,} outputs were drawn") from None
        finally:
            bar.close()
    if method == "finite-sample":
        from .finite_sample import grouping_from_counts

        counts_p, counts_q = (c.counts for c in start.counts)
        return grouping_from_counts(counts_p, counts_q, chosen=start.chosen, support=start.support), None
    if start.grid.dx is None:
        return fit_from_outcomes(*start.counts), None
    if start.grid.whitening is not None:
        return _grid_fit(start)
    return fit_from_counts(*start.counts, start.bandwidth, start.scale), start.projection()


def _pilots(results, drawn) -> tuple[np.ndarray, np.ndarray]:
    """Both samples' pilots from their tasks, refused past :data:`MAX_PILOT_BYTES` a side."""
    parts, held = [[], []], [0, 0]
    for task, outputs in results:
        parts[task.side].append(outputs)
        held[task.side] += outputs.nbytes
        drawn[0] += task.size
        if held[task.side] > MAX_PILOT_BYTES:
            raise TaskError(
                f"the pilot ({SIDES[task.side]}) would hold more than {MAX_PILOT_BYTES / 2**30:g} GiB of outputs "
                f"({shape_text(outputs.shape[1:])} each): pass a smaller pilot"
            )
    return tuple(_joined(side_parts, side) for side, side_parts in enumerate(parts))


class _Start:
    """What the pilots fixed: the grid, the counts so far, and (vectors) the projection's sums."""

    def __init__(self, grid, counts, bandwidth=None, scale=None, moments=None, projected=None):
        self.grid, self.counts, self.bandwidth, self.scale = grid, counts, bandwidth, scale
        self.moments, self.projected = moments, projected
        self.chosen, self.support = None, None  # (the finite-sample bound's cells)

    def add(self, side: int, result) -> None:
        """Merge one task's result into its side."""
        if self.moments is None:
            self.counts[side].merge(result)
            return
        counts, moments = result
        self.counts[side].merge(counts)
        self.moments[side].merge(moments)

    def projection(self):
        """The :class:`~renyi.audit.projection.Projection` record of a projected audit, or None."""
        if self.projected is None:
            return None
        from .projection import Projection, signal_share_from_moments

        kind, held, w, learned = self.projected
        share = None
        if not callable(w) and all(m.n > 1 for m in self.moments):
            sizes = [m.n for m in self.moments]
            means = [m.rows / m.n for m in self.moments]
            variances = [m.projected_squares / m.n - (m.projected / m.n) ** 2 for m in self.moments]
            squares = [m.squared_norms / m.n for m in self.moments]
            share = signal_share_from_moments(w, sizes, variances, means, squares)
        if learned is not None:
            return learned.projection(self.grid.shape[0], held, share, kind)
        return Projection(kind, self.grid.shape[0], held, share)


def _start(pilot_p, pilot_q, discrete, bandwidth, sizes) -> _Start:
    """Scalar outputs: the kind, and the outcome counts or the grid of the pilots' bandwidth."""
    from .counts import NODES_PER_BANDWIDTH
    from .mergeable import pilot_bandwidth

    if _kind(pilot_p, pilot_q, discrete):
        counts = [OutcomeCounts.of(pilot_p, name="the pilot"), OutcomeCounts.of(pilot_q, name="the pilot")]
        if discrete is None:
            _refuse_unique_outcomes(counts, min(pilot_p.shape[0], pilot_q.shape[0]))
        return _Start(Grid(None, pilot_p.shape[1:]), counts)
    h, scale = pilot_bandwidth(pilot_p, pilot_q, *sizes)
    h = h if bandwidth is None else float(bandwidth)
    grid = Grid(h / NODES_PER_BANDWIDTH, ())
    counts = [GridCounts.of(pilot, grid.dx, name="the pilot") for pilot in (pilot_p, pilot_q)]
    return _Start(grid, counts, h, scale)


def _start_cells(pilot_p, pilot_q, discrete, support) -> _Start:
    """The finite-sample bound's start: outcome counts, and cells chosen by the pilot or declared.

    The pilot chooses the cells and is held out, unless the support declares at most two
    outcomes (boolean outputs do), which are then the cells and the pilot is counted.
    """
    if discrete is False or not _kind(pilot_p, pilot_q, discrete):
        raise ValueError(
            "method='finite-sample' is for discrete outputs (integers, booleans or rows); these look continuous"
        )
    if support is None and pilot_p.ndim == 1 and pilot_p.dtype == bool and pilot_q.dtype == bool:
        support = np.array([False, True])
    pilots = [OutcomeCounts.of(pilot, name="the pilot") for pilot in (pilot_p, pilot_q)]
    if support is not None and np.unique(np.asarray(support)).size <= 2:
        start = _Start(Grid(None, pilot_p.shape[1:]), pilots)
    else:  # the pilot chooses the groups: counting it in the bound too would void the guarantee
        start = _Start(Grid(None, pilot_p.shape[1:]), [OutcomeCounts({}), OutcomeCounts({})])
        start.chosen = (pilots[0].counts, pilots[1].counts)
    start.support = support
    return start


def _start_projected(pilot_p, pilot_q, projection, bandwidth, sizes, scored_at=None) -> _Start:
    """Vector outputs: the direction (learned on the pilots, which are then held out, or given)."""
    from .counts import NODES_PER_BANDWIDTH
    from .mergeable import pilot_bandwidth
    from .projection import fixed_direction
    from .reduction import CHOICES, learn_map

    if pilot_p.ndim != 2 or pilot_p.dtype.kind not in "biuf":
        raise ValueError(
            f"projection= reduces vector outputs of shape (n, d); the black box returns {shape_text(pilot_p.shape[1:])}"
        )
    d = pilot_p.shape[1]
    learned = None
    if isinstance(projection, str):
        if projection not in CHOICES:
            raise ValueError(
                f"with workers, projection is one of {', '.join(map(repr, CHOICES))}, a direction or a map; "
                f"got {projection!r} (projection='grid' draws in one process: drop workers and scheduler)"
            )
        learned = learn_map(pilot_p, pilot_q, projection, grid=True, **(scored_at or {}))
        if learned.kind == "grid":  # (auto chose the grid on the pilots, which are then held out)
            return _start_grid(pilot_p, pilot_q, sizes, learned)
        w, kind, held = learned.map, f"{learned.kind} (pilot)", (len(pilot_p), len(pilot_q))
    elif callable(projection):
        w, kind, held = projection, "callable", (0, 0)
    else:
        w = fixed_direction(projection, d)
        w, kind, held = w / np.linalg.norm(w), "fixed", (0, 0)
    try:
        values = [project_rows(pilot, w) for pilot in (pilot_p, pilot_q)]
    except BlackBoxFailure as exc:
        raise TaskError(f"the pilot failed: {exc}") from None
    counted = [n - k for n, k in zip(sizes, held)]
    h, scale = pilot_bandwidth(*values, *counted)
    h = h if bandwidth is None else float(bandwidth)
    grid = Grid(h / NODES_PER_BANDWIDTH, (d,), w)
    if held != (0, 0):  # the pilots chose the direction: bounding them too would be biased
        counts, moments = [GridCounts(grid.dx), GridCounts(grid.dx)], [RowMoments(), RowMoments()]
    else:
        counts = [GridCounts.of(v, grid.dx, name="the pilot") for v in values]
        moments = [RowMoments.of(pilot, v) for pilot, v in zip((pilot_p, pilot_q), values)]
    return _Start(grid, counts, h, scale, moments, (kind, held, w, learned))


def _start_grid(pilot_p, pilot_q, sizes, chosen=None) -> _Start:
    """Vector outputs with no projection: the pilots fix the whitening, bandwidths and spacing.

    The pilots are counted too, as the one-process estimate uses every output, unless they
    chose the grid (``chosen``, the :class:`~renyi.audit.reduction.LearnedMap` of
    ``projection="auto"``): bounding them too would then be biased, and they are held out.
    """
    from .multivariate_kde import pilot_grid

    if pilot_p.ndim != 2 or pilot_p.dtype.kind not in "biuf":
        raise ValueError(
            "projection='grid' estimates densities of vector outputs of shape (n, d); the black box "
            f"returns {shape_text(pilot_p.shape[1:])}"
        )
    pilots = [np.asarray(pilot, dtype=float) for pilot in (pilot_p, pilot_q)]
    held = (0, 0) if chosen is None else (len(pilot_p), len(pilot_q))
    bandwidths, spacing, whitening = pilot_grid(*pilots, [n - k for n, k in zip(sizes, held)])
    if chosen is None:
        counts = [VectorGridCounts.of(grid_coordinates(p, *whitening), spacing, name="the pilot") for p in pilots]
    else:
        counts = [VectorGridCounts(spacing), VectorGridCounts(spacing)]
    projected = None if chosen is None else (held, chosen)
    return _Start(Grid(spacing, pilot_p.shape[1:], whitening=whitening), counts, bandwidths, projected=projected)


def _grid_fit(start: _Start):
    """The fit of ``projection="grid"`` from the merged counts, and its projection record."""
    from .multivariate_kde import fit_grid_from_counts
    from .projection import Projection

    fit, grid = fit_grid_from_counts(*start.counts, start.bandwidth, start.grid.whitening)
    bandwidths = tuple(float(h) for h in grid.bandwidths)
    if start.projected is not None:  # (chosen by auto on the pilots, held out)
        held, chosen = start.projected
        return fit, chosen.projection(grid.dimension, held, kind="grid (pilot)", bandwidths=bandwidths)
    return fit, Projection("grid", grid.dimension, (0, 0), None, bandwidths)


def _vector_tasks(rest: list[Task], d: int, root: np.random.SeedSequence) -> list[Task]:
    """The tasks after the pilots, re-cut so that a task's rows take at most :data:`TASK_BYTES`."""
    rows = max(1, TASK_BYTES // (8 * d))
    if all(t.size <= rows for t in rest):
        return rest
    first = rest[0].index if rest else 0
    order = []
    for side in (0, 1):
        left = sum(t.size for t in rest if t.side == side)
        order += [(side, size) for size in _sizes(left, rows)]
    if len(order) > MAX_TASKS:
        raise ValueError(f"{len(order):,} tasks of {rows:,} rows of d = {d}; an audit runs at most {MAX_TASKS:,}")
    seeds = root.spawn(len(order))  # (children after the plan's: the same on any number of workers)
    return [Task(first + i, side, size, seed, False) for i, ((side, size), seed) in enumerate(zip(order, seeds))]


def _kind(pilot_p: np.ndarray, pilot_q: np.ndarray, discrete) -> bool:
    """Discrete or continuous, from the pilots as the in-memory fit infers it from whole samples."""
    from .density_fit import infer_kind, real_vectors

    if discrete is None and real_vectors(pilot_p):
        raise ValueError(
            f"the black box returns vectors of d = {pilot_p.shape[1]} real values: pass projection= (a direction "
            "learned on the pilot, 'mean-difference' or 'whitened', or a fixed one), or discrete=True if each "
            "row is an outcome"
        )
    try:
        is_discrete = infer_kind(pilot_p, pilot_q, discrete)
    except ValueError as exc:
        words = str(exc).replace("samples_p", "the pilot (database)").replace("samples_q", "the pilot (neighbour)")
        raise ValueError(words) from None
    if not is_discrete and pilot_p.ndim != 1:
        raise ValueError(
            f"the black box returns outputs of shape {shape_text(pilot_p.shape[1:])}; continuous outputs are "
            "real values (n,), or vectors (n, d) with projection="
        )
    return is_discrete


def _refuse_unique_outcomes(counts: list, pilot: int) -> None:
    """Inferred discrete outputs whose pilot outcomes are mostly unique are real values, not outcomes."""
    from .density_fit import mostly_unique

    distinct = len(counts[0].counts.keys() | counts[1].counts.keys())
    if mostly_unique(distinct, pilot):  # (the in-memory fit's rule, on the pilots)
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
            f"{', '.join(sorted(shape_text(s) for s in shapes))}: a black box must return one shape"
        )
    return np.concatenate(parts)
