r"""Vector outputs to one dimension: the held-out split, the candidate maps, the choice and its diagnostic.

A learned projection holds out a fraction ``split`` of each sample; the rest is projected and
bounded.  On the held-out outputs every candidate map is scored: each is learned on one half
of them and bounded on the other half by the one-dimensional estimator, at the orders the
caller asked for.  The candidates are the directions of :mod:`~renyi.audit.projection`
(``"mean-difference"``, ``"whitened"``) and the estimated log-likelihood ratio of
:mod:`~renyi.audit.log_ratio` (``"likelihood-ratio"``); with ``"auto"`` in one process and
:math:`d=2` or 3, also ``"grid"``: no projection, the densities estimated on a whitened grid
(:mod:`~renyi.audit.multivariate_kde`), scored on the second halves (it learns nothing) and, when
it wins, run on the outputs that were not held out.  The scores serve twice:

* ``projection="auto"`` takes the best-scoring candidate (ties go to the simpler);
* whatever was chosen, ``divergence_share`` (its score over the best) says how much of what
  the best candidate finds this route keeps, and a warning names the better route below
  one half.

The outputs that are bounded take no part in either, so the bound stays valid (the
data-processing inequality holds for any map fixed before they are seen).  The chosen map is
then learned on all held-out outputs: the directions from running sums over every one of
them, the log ratio on at most :data:`HELD_BYTES` of them a side.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from functools import partial

import numpy as np

from .._validation import as_generator, as_rdp_orders
from .density_fit import bounds_from_fit, fit_densities
from .log_ratio import feature_count, fit_log_ratio
from .multivariate_kde import MAX_KDE_DIMENSION, fit_grid_kde
from .projection import (
    DEFAULT_SPLIT,
    PROJECTIONS,
    Projection,
    Side,
    fixed_direction,
    learn_direction,
    learn_direction_from_moments,
    output_rows,
    signal_share,
)

__all__ = [
    "CANDIDATES",
    "CHOICES",
    "HELD_BYTES",
    "LearnedMap",
    "held_out_scores",
    "learn_map",
    "projected_samples",
    "route_warnings",
]

#: The maps learned on held-out outputs and scored there, simplest first.
CANDIDATES = PROJECTIONS + ("likelihood-ratio",)
#: What ``projection=`` accepts by name for a learned map.
CHOICES = CANDIDATES + ("auto",)
#: Bytes of the log ratio's feature matrix per side: caps the held-out rows kept in memory.
HELD_BYTES = 1 << 24
#: At most this many held-out rows a side are kept in memory, whatever the dimension.
_HELD_ROWS = 1 << 16
#: Fewer held-out rows a side than this and the candidates are not scored.
_MIN_SCORED = 40
#: Below this share of the best candidate's score, a chosen route gets a warning.
SHARE_WARNING = 0.5


def _learn(held_p, held_q, kind):
    """The map of ``kind`` learned on held-out rows: a unit direction or a log ratio."""
    if kind == "likelihood-ratio":
        return fit_log_ratio(held_p, held_q)
    return learn_direction(held_p, held_q, kind)


def _apply(f, rows):
    return f(rows) if callable(f) else rows @ f


def _mean_bound(fit, orders, alpha, direction):
    """The mean over ``orders`` of the lower bound of ``fit()`` (floored at 0; 0 where it cannot fit).

    A fit fails on a projection with no spread (a map constant on the rows), say: such a
    candidate finds nothing.
    """
    try:
        bounds = bounds_from_fit(fit(), orders, alpha=alpha, direction=direction)
    except ValueError:
        return 0.0
    return float(np.mean([max(b.lower, 0.0) for b in bounds]))


def held_out_scores(held_p, held_q, orders, *, alpha=0.05, direction="both", rng=None, grid=False):
    r"""Each candidate's bound on held-out outputs: learned on one half, bounded on the other.

    Parameters
    ----------
    held_p, held_q : ndarray, shape (m, d)
        Held-out outputs of each side (never the ones that will be bounded).
    orders : float or sequence of float
        The orders the bound is for.
    alpha : float, default 0.05
    direction : {"both", "forward", "reverse"}, default "both"
    rng : numpy.random.Generator, optional
        Splits the held-out rows in halves; default ``numpy.random.default_rng(0)``.
    grid : bool, default False
        Also score ``"grid"`` (:math:`d\le3`): the density estimated on a whitened grid with
        no projection (:func:`~renyi.audit.multivariate_kde.fit_grid_kde`), bounded on the
        second halves (it learns nothing).

    Returns
    -------
    dict
        :data:`CANDIDATES` (and ``"grid"``) → the mean over ``orders`` of the delta-method
        lower bound of the projected second halves (0 where a candidate cannot be learned);
        empty with fewer than 40 rows a side.

    Examples
    --------
    Two laws that differ in spread only: a direction sees one coordinate's share of the
    difference, the log ratio (a sum of squares) all three.

    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> p, q = 1.5 * rng.normal(size=(20_000, 3)), rng.normal(size=(20_000, 3))
    >>> scores = held_out_scores(p, q, 2)
    >>> max(scores, key=scores.get), scores["mean-difference"] < 0.5 * scores["likelihood-ratio"]
    ('likelihood-ratio', True)
    """
    orders = as_rdp_orders(orders)[0]
    rng = as_generator(rng, allow_none=True) or np.random.default_rng(0)
    if min(held_p.shape[0], held_q.shape[0]) < _MIN_SCORED:
        return {}
    halves = [rng.random(rows.shape[0]) < 0.5 for rows in (held_p, held_q)]
    (learn_p, score_p), (learn_q, score_q) = ((x[h], x[~h]) for x, h in zip((held_p, held_q), halves))
    scores = {}
    for kind in CANDIDATES:
        try:
            f = _learn(learn_p, learn_q, kind)
        except ValueError:  # the same mean on both sides: this direction finds nothing
            scores[kind] = 0.0
            continue
        fit = partial(fit_densities, _apply(f, score_p), _apply(f, score_q), discrete=False)
        scores[kind] = _mean_bound(fit, orders, alpha, direction)
    if grid and 2 <= held_p.shape[1] <= MAX_KDE_DIMENSION:
        scores["grid"] = _mean_bound(lambda: fit_grid_kde(score_p, score_q)[0], orders, alpha, direction)
    return scores


def route_warnings(info: Projection) -> tuple:
    """What the scores and the mean shift say against the route taken (see the module).

    Parameters
    ----------
    info : Projection

    Returns
    -------
    tuple of str
        Empty when the route keeps at least half of the best candidate's held-out bound.
    """
    found, kind = [], info.kind.removesuffix(" (pilot)")
    if info.scores and info.divergence_share is not None and info.divergence_share < SHARE_WARNING:
        best = max(info.scores, key=info.scores.get)
        found.append(
            f"on held-out outputs, projection={kind!r} keeps about {info.divergence_share:.2f} of the bound "
            f"that {best!r} finds: use projection={best!r} or 'auto'"
        )
    if kind in PROJECTIONS and info.requested != "auto" and info.signal_share is None and info.scores:
        found.append(
            "the two sides' means do not differ detectably: a direction learned from them carries little; "
            "projection='likelihood-ratio' or 'auto' also sees differences in spread and shape"
        )
    return tuple(found)


@dataclass(frozen=True)
class LearnedMap:
    """A map learned on held-out outputs, with what chose it.

    Attributes
    ----------
    map : ndarray or LogRatio
        A unit direction, or an estimated log ratio (a picklable callable).
    kind : str
        Its candidate name (:data:`CANDIDATES`).
    requested : str
        What was asked for (``"auto"`` or ``kind``).
    scores : dict
        :func:`held_out_scores` (empty with too few rows).
    share : float or None
        ``scores[kind]`` over the best score.
    """

    map: object
    kind: str
    requested: str
    scores: dict = field(default_factory=dict)
    share: float | None = None

    def projection(self, dimension, held, signal_share=None, kind=None, bandwidths=()) -> Projection:
        """The :class:`~renyi.audit.projection.Projection` record of a bound through this map."""
        kind = kind or self.kind
        return Projection(
            kind, dimension, held, signal_share, tuple(bandwidths), self.requested, self.scores, self.share
        )


def _grid_competes(grid, kind, d) -> bool:
    """Whether the grid estimate is among ``"auto"``'s candidates: asked for, and d = 2 or 3."""
    return grid and kind == "auto" and 2 <= d <= MAX_KDE_DIMENSION


def _choice(kind, scores) -> LearnedMap:
    """What ``kind`` comes to on these scores, and its share of the best; no map learned yet.

    ``"auto"`` comes to the best candidate, or the simplest where none finds anything.
    """
    chosen = kind
    best = max(scores.values(), default=0.0)
    if kind == "auto":
        chosen = max(scores, key=scores.get) if best > 0 else CANDIDATES[0]
    share = float(scores[chosen] / best) if best > 0 else None
    return LearnedMap(None, chosen, kind, scores, share)


def learn_map(held_p, held_q, kind, *, orders=2.0, alpha=0.05, direction="both", rng=None, grid=False) -> LearnedMap:
    """Score the candidates on held-out rows, choose (``"auto"``) and learn the map on all of them.

    Parameters
    ----------
    held_p, held_q : ndarray, shape (m, d)
        Held-out outputs (a pilot, say), in memory.
    kind : {"auto", "likelihood-ratio", "mean-difference", "whitened"}
    orders, alpha, direction
        What the candidates are scored at (:func:`held_out_scores`).
    rng : numpy.random.Generator, optional
        Splits the rows for the scores; default ``numpy.random.default_rng(0)``.
    grid : bool, default False
        With ``"auto"`` and :math:`d=2` or 3, let the grid estimate compete too; when it wins,
        the result's ``map`` is None and its ``kind`` ``"grid"``: the caller bounds the outputs
        on a grid, with no map (the held-out rows only chose that).

    Returns
    -------
    LearnedMap
    """
    if kind not in CHOICES:
        raise ValueError(f"a learned projection is one of {', '.join(map(repr, CHOICES))}, got {kind!r}")
    held_p, held_q = (np.asarray(x, dtype=float) for x in (held_p, held_q))
    cap = _rows_in_memory(held_p.shape[1])
    few = held_p[:cap], held_q[:cap]  # the rows are independent draws: the first are a fair subset
    grid = _grid_competes(grid, kind, held_p.shape[1])
    choice = _choice(kind, held_out_scores(*few, orders, alpha=alpha, direction=direction, rng=rng, grid=grid))
    if choice.kind == "grid":
        return choice
    rows = few if choice.kind == "likelihood-ratio" else (held_p, held_q)
    return replace(choice, map=_learn(*rows, choice.kind))


def _rows_in_memory(d):
    """Held-out rows a side that the scores and the log ratio use: :data:`HELD_BYTES` of features."""
    return max(_MIN_SCORED, min(_HELD_ROWS, HELD_BYTES // (8 * feature_count(d))))


def _learned(sides, kind, held, scored_at, rng, grid):
    """Score the candidates, choose (for ``"auto"``), learn on all held-out rows, project the rest."""
    d = sides[0].arr.shape[1]
    rows = [side.held_rows(_rows_in_memory(d), rng) for side in sides]
    orders, alpha, direction = scored_at
    grid = _grid_competes(grid, kind, d)
    learned = _choice(kind, held_out_scores(*rows, orders, alpha=alpha, direction=direction, rng=rng, grid=grid))
    chosen = learned.kind
    if chosen == "grid":  # no map: the caller estimates the rows not held out on a grid
        x, y = (np.asarray(side.arr[~side.held], dtype=float) for side in sides)
        return x, y, learned.projection(d, held)
    if chosen == "likelihood-ratio":
        f = fit_log_ratio(*rows)
        x, y = (side.project_map(f) for side in sides)
        return x, y, learned.projection(d, held)
    for side in sides:
        side.learn(second=chosen == "whitened")
    w = learn_direction_from_moments([side.moments for side in sides], chosen)
    (x, mean_p, sq_p), (y, mean_q, sq_q) = (side.project(w) for side in sides)
    return x, y, learned.projection(d, held, signal_share(w, (x, y), (mean_p, mean_q), (sq_p, sq_q)))


def projected_samples(
    samples_p, samples_q, projection, *, split=None, rng=None, orders=2.0, alpha=0.05, direction="both", grid=True
):
    r"""Reduce vector outputs to one dimension for :func:`~renyi.audit.rdp_lower_bound`.

    Parameters
    ----------
    samples_p, samples_q : array_like, shape (n, d)
        Outputs on two adjacent databases (a memory-mapped ``.npy`` is read in chunks).
    projection : {"auto", "likelihood-ratio", "mean-difference", "whitened"}, array_like of shape (d,), or callable
        A map to learn on held-out outputs (``"auto"``: the candidate with the best bound
        on held-out outputs, see the module), a fixed direction, or a map
        ``f(outputs of shape (m, d)) -> m values`` fixed in advance.
    split : float, optional
        Fraction of each sample held out to learn a map (default 0.5; 0.25 keeps more
        outputs for the bound and suits large :math:`n/d`).  Not allowed with a fixed
        projection, which uses every output.
    rng : numpy.random.Generator, optional
        Draws the held-out subset and its halves; default ``numpy.random.default_rng(0)``
        (any generator that does not look at the outputs keeps the bound valid).
    orders : float or sequence of float, default 2.0
        The orders the candidates are scored at (those of the bound to come).
    alpha : float, default 0.05
        The level they are scored at.
    direction : {"both", "forward", "reverse"}, default "both"
        The direction they are scored in.
    grid : bool, default True
        With ``"auto"`` and :math:`d=2` or 3: whether the grid estimate is a candidate.

    Returns
    -------
    x, y : ndarray
        The projected outputs to bound; when ``"auto"`` chose the grid (``info.kind`` is
        ``"grid"``), the rows not held out, shape (m, d), for the grid estimate.
    info : Projection
        The route, its held-out outputs, and for a learned map the candidates' scores and
        ``divergence_share``.

    Examples
    --------
    Correlated noise: the mean shift points the wrong way, and the choice sees it.

    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> noise = rng.normal(size=(40_000, 2)) @ np.array([[1.0, 0.0], [0.9, 0.44]])
    >>> p, q = noise[:20_000] + [0.3, 0.0], noise[20_000:]
    >>> x, y, info = projected_samples(p, q, "auto")
    >>> info.kind != "mean-difference", info.scores["mean-difference"] < info.scores[info.kind]
    (True, True)
    """
    a, b = output_rows(samples_p, "samples_p"), output_rows(samples_q, "samples_q")
    if a.shape[1] != b.shape[1]:
        raise ValueError(f"samples_p and samples_q must have the same dimension, got {a.shape[1]} and {b.shape[1]}")
    d = a.shape[1]
    if callable(projection) or not isinstance(projection, str):
        if split is not None:
            raise ValueError("split applies to a learned projection; a fixed one uses every output")
        return _fixed(a, b, projection, d)
    if projection not in CHOICES:
        raise ValueError(
            f"projection must be one of {', '.join(map(repr, CHOICES))}, an array or a callable, got {projection!r}"
        )
    split = DEFAULT_SPLIT if split is None else float(split)
    if not 0.0 < split < 1.0:
        raise ValueError(f"split must be in (0, 1) for a learned projection, got {split!r}")
    rng = as_generator(rng, allow_none=True) or np.random.default_rng(0)
    sides = [Side(arr, name, split, rng) for arr, name in ((a, "samples_p"), (b, "samples_q"))]
    held = tuple(int(side.held.sum()) for side in sides)
    return _learned(sides, projection, held, (orders, alpha, direction), rng, grid)


def _fixed(a, b, projection, d):
    """A direction or a map given in advance: every output is projected and bounded."""
    if callable(projection):
        x, y = (np.asarray(projection(arr), dtype=float).ravel() for arr in (a, b))
        for name, arr, v in (("samples_p", a, x), ("samples_q", b, y)):
            if v.size != arr.shape[0]:
                raise ValueError(f"the projection returned {v.size} values for {arr.shape[0]} rows of {name}")
            if not np.all(np.isfinite(v)):
                raise ValueError(f"the projection returned NaN or infinite values for {name}")
        return x, y, Projection("callable", d, (0, 0), None)
    w = fixed_direction(projection, d)
    w = w / np.linalg.norm(w)
    sides = [Side(arr, name, 0.0, None) for arr, name in ((a, "samples_p"), (b, "samples_q"))]
    (x, mean_p, sq_p), (y, mean_q, sq_q) = (side.project(w) for side in sides)
    share = signal_share(w, (x, y), (mean_p, mean_q), (sq_p, sq_q))
    return x, y, Projection("fixed", d, (0, 0), share)
