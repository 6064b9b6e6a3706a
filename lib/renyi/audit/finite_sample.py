r"""A lower bound for the Rényi divergence of discrete outputs that holds at every sample size.

The paper's bound (eq. 16) rests on the delta method and holds "for large :math:`n`".  For
discrete outputs this module gives one that holds for every :math:`n`, an addition of this
compendium:

1. **Cells fixed in advance.**  Either the declared support (each outcome a cell), or groups
   chosen on a held-out fraction ``split`` of each sample: outcomes whose estimated privacy loss
   :math:`\log(\hat p/\hat q)` rounds to the same multiple of ``resolution`` form one group, and
   every outcome the held-out part never showed joins the group of loss 0.  The grouping is a
   fixed map of the outputs once the held-out part is drawn, and post-processing never raises a
   divergence, so :math:`D_\lambda` of the grouped laws is a lower bound for the mechanism's.
2. **A confidence box per pmf.**  On the remaining outputs, Clopper–Pearson intervals at level
   :math:`\alpha/(4m)` per side for :math:`m=k-1` of the :math:`k` cells (the *free* cell, the
   largest group of the held-out part, is pinned by :math:`\sum p=1`), widened by a relative
   :data:`WIDENING`.  By the union bound both boxes hold the true pmfs with probability at
   least :math:`1-\alpha`, for every :math:`n`.
3. **A certified minimum.**  On that event
   :math:`D_\lambda(p\|q)\ge\min_{\text{boxes}}D_\lambda`, which
   :func:`~renyi.audit.pmf_minimum.box_minimum` bounds from below by Lagrangian duality.

One event covers every order and both directions, so no level is split among them: a verdict
on these bounds spends :math:`\alpha` once.  What is assumed: the outputs of each sample are
i.i.d. in the order given (the split takes a random subset), and the support, when declared,
contains every output.  Taught in the chapter *A bound valid at every n* (``book/part1``).
"""

from __future__ import annotations

import hashlib
import math
from dataclasses import dataclass

import numpy as np
from scipy import special

from .._validation import as_generator, as_probability, as_rdp_orders, as_samples
from .bounds import LABELS, LowerBound, best_per_order
from .frequencies import encode_outcomes
from .pmf_minimum import box_minimum

__all__ = [
    "finite_sample_bounds",
    "clopper_pearson",
    "Grouping",
    "group_outcomes",
    "grouping_from_counts",
    "bounds_from_grouping",
    "checked_settings",
    "WIDENING",
    "MAX_FS_ORDER",
    "DEFAULT_SPLIT",
    "DEFAULT_RESOLUTION",
]

#: Relative widening of every Clopper–Pearson end, against the rounding of the inverse beta.
WIDENING = 1e-12
#: The largest order accepted; beyond it the certificate's exponents λ·log p lose their digits.
MAX_FS_ORDER = 1e4
#: Default held-out fraction that chooses the groups (when more than two cells are possible).
DEFAULT_SPLIT = 0.2
#: Default width of a group in privacy loss (natural log units).
DEFAULT_RESOLUTION = 0.25


def clopper_pearson(counts, n, level):
    r"""Clopper–Pearson interval for each cell's probability, ``level`` in each tail.

    Parameters
    ----------
    counts : array_like of int
        Counts per cell out of ``n``.
    n : int
        Sample size.
    level : float
        One-sided error level :math:`\delta`: each interval misses its probability with
        chance at most :math:`2\delta`.

    Returns
    -------
    lower, upper : ndarray
        The interval ends, widened by a relative :data:`WIDENING` and clipped to [0, 1].

    References
    ----------
    Clopper and Pearson, *Biometrika* 26 (1934): the exact binomial interval,
    :math:`[B^{-1}_{x,n-x+1}(\delta),\ B^{-1}_{x+1,n-x}(1-\delta)]`.

    Examples
    --------
    >>> lo, hi = clopper_pearson([0, 5, 10], 10, 0.025)
    >>> [round(float(x), 4) for x in lo], [round(float(x), 4) for x in hi]
    ([0.0, 0.1871, 0.6915], [0.3085, 0.8129, 1.0])
    """
    counts = np.asarray(counts, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        lower = np.where(counts > 0, special.betaincinv(counts, n - counts + 1, level), 0.0)
        upper = np.where(counts < n, special.betaincinv(counts + 1, n - counts, 1 - level), 1.0)
    return np.clip(lower * (1 - WIDENING), 0.0, 1.0), np.clip(upper * (1 + WIDENING), 0.0, 1.0)


@dataclass(frozen=True)
class Grouping:
    """Which cell each outcome falls in, fixed before the bound's outputs are counted.

    Attributes
    ----------
    counts_p, counts_q : ndarray of int
        Counts per cell of the outputs used for the bound.
    free : int
        The cell without a confidence interval (pinned by the simplex).
    held_out : tuple of int
        Outputs per side that chose the groups (0 when the support's cells are used).
    """

    counts_p: np.ndarray
    counts_q: np.ndarray
    free: int
    held_out: tuple

    @property
    def cells(self) -> int:
        """The number of cells."""
        return int(self.counts_p.size)


def _codes(a, b, support):
    """Integer codes of outcomes (values or rows) of both samples, and of the support first."""
    head = a if support is None else np.concatenate([support, a])
    codes_head, codes_q, _ = encode_outcomes(head, b)
    offset = 0 if support is None else support.shape[0]
    size = int(max(codes_head.max(), codes_q.max())) + 1
    if size > 2 * (codes_head.size + codes_q.size):  # sparse codes (a wide integer range): compact them
        _, inverse = np.unique(np.concatenate([codes_head, codes_q]), return_inverse=True)
        codes_head, codes_q = inverse[: codes_head.size], inverse[codes_head.size :]
        size = int(inverse.max()) + 1
    return codes_head[offset:], codes_q, size


def group_outcomes(samples_p, samples_q, *, support=None, split=None, resolution=DEFAULT_RESOLUTION, rng=None):
    """Cells for the finite-sample bound, and the counts of the outputs that bound (module docstring).

    Parameters
    ----------
    samples_p, samples_q : array_like
        Discrete outputs: 1-D outcomes or 2-D rows.
    support : array_like, optional
        Every outcome the mechanism can produce (1-D outputs).  An output outside it is an
        error.  Without a split each outcome of the support is a cell.
    split : float, optional
        Fraction of each sample held out to choose the groups.  Default: 0 when a support of
        at most two outcomes is declared (or the outputs are boolean), else
        :data:`~renyi.audit.finite_sample.DEFAULT_SPLIT` (0.2).  0 needs ``support``.
    resolution : float, default 0.25
        Width of a group in estimated privacy loss.
    rng : numpy.random.Generator, optional
        Draws the held-out subset; default ``numpy.random.default_rng(0)``.  Any generator
        that does not look at the outputs keeps the bound valid.

    Returns
    -------
    Grouping
    """
    a, b = as_samples(samples_p, "samples_p"), as_samples(samples_q, "samples_q")
    if a.ndim != b.ndim or (a.ndim == 2 and a.shape[1] != b.shape[1]):
        raise ValueError(f"samples_p and samples_q must have outcomes of the same shape, got {a.shape} and {b.shape}")
    if a.dtype == bool and b.dtype == bool and support is None and a.ndim == 1:
        support = np.array([False, True])
    if support is not None:
        support = _check_support(support, a, b)
    if split is None:
        split = 0.0 if support is not None and support.size <= 2 else DEFAULT_SPLIT
    split = float(split)
    if not 0.0 <= split < 1.0:
        raise ValueError(f"split must be in [0, 1), got {split!r}")
    if split == 0.0 and support is None:
        raise ValueError(
            "split=0 needs the support declared (support=...): cells chosen after seeing the "
            "outputs would void the guarantee; declare the support, or keep a held-out split"
        )
    if not (isinstance(resolution, (int, float)) and math.isfinite(resolution) and resolution > 0):
        raise ValueError(f"resolution must be a finite number > 0, got {resolution!r}")
    codes_p, codes_q, size = _codes(a, b, support)
    if split == 0.0:
        # the support's first outcome is the free cell: chosen without looking at the outputs
        counts_p, counts_q = np.bincount(codes_p, minlength=size), np.bincount(codes_q, minlength=size)
        return Grouping(counts_p, counts_q, 0, (0, 0))
    rng = as_generator(rng, allow_none=True) or np.random.default_rng(0)
    held = [rng.permutation(codes.size) for codes in (codes_p, codes_q)]
    k_p, k_q = max(1, round(split * codes_p.size)), max(1, round(split * codes_q.size))
    if k_p >= codes_p.size or k_q >= codes_q.size:
        raise ValueError(f"split={split:g} leaves no outputs for the bound with n_p={codes_p.size}, n_q={codes_q.size}")
    choose_p, use_p = codes_p[held[0][:k_p]], codes_p[held[0][k_p:]]
    choose_q, use_q = codes_q[held[1][:k_q]], codes_q[held[1][k_q:]]
    seen_p, seen_q = np.bincount(choose_p, minlength=size), np.bincount(choose_q, minlength=size)
    loss = np.log((seen_p + 0.5) / k_p) - np.log((seen_q + 0.5) / k_q)
    keys = np.where((seen_p + seen_q) > 0, np.round(loss / resolution), 0.0)
    key_values, group_of = np.unique(keys, return_inverse=True)
    mass = np.bincount(group_of, weights=seen_p + seen_q, minlength=key_values.size)
    counts_p = np.bincount(group_of[use_p], minlength=key_values.size)
    counts_q = np.bincount(group_of[use_q], minlength=key_values.size)
    return Grouping(counts_p, counts_q, int(np.argmax(mass)), (k_p, k_q))


def grouping_from_counts(counts_p: dict, counts_q: dict, *, chosen=None, support=None, resolution=DEFAULT_RESOLUTION):
    """:func:`group_outcomes` from outcome counts, as outputs drawn in tasks arrive.

    Parameters
    ----------
    counts_p, counts_q : dict
        Outcome (a value, or a tuple for a row) to count, of the outputs that bound.
    chosen : tuple of two dict, optional
        Counts of held-out outputs (a pilot) that choose the groups, by the rule of
        :func:`group_outcomes`; every outcome they did not see falls in the group of estimated
        loss 0, which always exists, so that the cells are a function of the held-out outputs
        alone.  ``None``: each outcome of ``support`` is a cell.
    support : array_like, optional
        Every outcome the mechanism can produce; required without ``chosen``.  A counted
        outcome outside it is an error.
    resolution : float, default 0.25

    Returns
    -------
    Grouping
    """
    outcomes = set(counts_p) | set(counts_q)
    if support is not None:
        declared = set(np.unique(np.asarray(support)).tolist())
        outside = outcomes - declared
        if outside:
            raise ValueError(
                f"{len(outside):,} outcome(s) outside the declared support, e.g. {sorted(outside)[0]!r}; the "
                "support must contain every outcome the mechanism can produce"
            )
        outcomes |= declared
    if chosen is None:
        if support is None:
            raise ValueError("cells fixed without held-out outputs need the support declared (support=...)")
        cells = sorted(outcomes)  # each outcome a cell; the first is the free one, fixed in advance
        index = {o: i for i, o in enumerate(cells)}
        free, held = 0, (0, 0)
    else:
        seen_p, seen_q = chosen
        k_p, k_q = sum(seen_p.values()), sum(seen_q.values())

        def key(o):
            if o not in seen_p and o not in seen_q:
                return 0.0
            loss = math.log((seen_p.get(o, 0) + 0.5) / k_p) - math.log((seen_q.get(o, 0) + 0.5) / k_q)
            return float(np.round(loss / resolution))

        pilot_keys = {o: key(o) for o in set(seen_p) | set(seen_q)}
        keys = sorted(set(pilot_keys.values()) | {0.0})
        position = {k: i for i, k in enumerate(keys)}
        index = {o: position[pilot_keys.get(o, 0.0)] for o in outcomes | set(pilot_keys)}
        mass = np.zeros(len(keys))
        for o, k in pilot_keys.items():
            mass[position[k]] += seen_p.get(o, 0) + seen_q.get(o, 0)
        free, held, cells = int(np.argmax(mass)), (k_p, k_q), keys
    grouped = []
    for counts in (counts_p, counts_q):
        column = np.zeros(len(cells), dtype=np.int64)
        for o, c in counts.items():
            column[index[o]] += c
        grouped.append(column)
    return Grouping(grouped[0], grouped[1], free, held)


def _check_support(support, a, b):
    if a.ndim != 1:
        raise ValueError("support applies to 1-D outputs; for rows leave it out and keep a held-out split")
    values = np.asarray(support)
    if values.ndim != 1 or values.size == 0:
        raise ValueError(f"support must be a non-empty 1-D array of outcomes, got shape {values.shape}")
    values = np.unique(values)
    for name, arr in (("samples_p", a), ("samples_q", b)):
        outside = ~np.isin(arr, values)
        if outside.any():
            raise ValueError(
                f"{name} has {int(outside.sum()):,} output(s) outside the declared support, e.g. "
                f"{arr[outside][0].tolist()!r}; the support must contain every outcome the mechanism can produce"
            )
    return values


def finite_sample_bounds(
    samples_p,
    samples_q,
    orders,
    *,
    alpha=0.05,
    support=None,
    split=None,
    resolution=DEFAULT_RESOLUTION,
    rng=None,
    direction="both",
):
    r"""Lower bounds for :math:`\varepsilon(\lambda)` valid for every :math:`n` (module docstring).

    Parameters
    ----------
    samples_p, samples_q : array_like
        Discrete outputs on two adjacent databases (1-D outcomes or 2-D rows), i.i.d. within
        each sample.
    orders : float or sequence of float
        Orders :math:`\lambda>1`, up to :data:`MAX_FS_ORDER`.
    alpha : float, default 0.05
        With probability at least :math:`1-\alpha`, *every* returned bound (all orders, both
        directions) holds, whatever :math:`n`.
    support, split, resolution, rng
        How the cells are fixed; see :func:`group_outcomes`.
    direction : {"both", "forward", "reverse"}, default "both"
        As for :func:`~renyi.audit.rdp_lower_bound`; here at no cost in level.

    Returns
    -------
    LowerBound or list of LowerBound
        With ``method="finite-sample"``: ``lower`` is the certified bound (in each direction
        the largest certified at this order or a smaller requested one, since
        :math:`D_\lambda` is nondecreasing in :math:`\lambda` and all orders share one event),
        ``primal`` the divergence at a pair of pmfs inside both boxes (no bound from these
        boxes can exceed it), ``estimate`` the plug-in on the cells, ``std_error`` 0,
        ``level`` = ``alpha``.

    Notes
    -----
    For :math:`\lambda>1`, :math:`F(p,q)=\sum_ip_i^\lambda q_i^{1-\lambda}` is jointly convex and
    :math:`D_\lambda=\log F/(\lambda-1)`; the bound is
    :math:`\max(0,\log F^\star)/(\lambda-1)` with :math:`F^\star` the certified minimum of
    :math:`F` over the two boxes and the simplex.  The held-out split costs a fraction of
    the sample but keeps the number of cells, and with it the union bound over the
    intervals, small.

    Examples
    --------
    Binary randomized response with :math:`\varepsilon_0=1`, 20,000 outputs per side:

    >>> import numpy as np
    >>> rng = np.random.default_rng(3)
    >>> keep = np.e / (1 + np.e)
    >>> p, q = rng.random(20_000) < keep, rng.random(20_000) >= keep
    >>> b = finite_sample_bounds(p, q, 2)
    >>> b.method, round(b.lower, 3), round(b.primal, 3)   # the exact D_2 is 0.7350
    ('finite-sample', 0.699, 0.699)
    """
    order_list, scalar, alpha = checked_settings(orders, alpha, direction)
    n_p, n_q = len(samples_p), len(samples_q)
    grouping = group_outcomes(samples_p, samples_q, support=support, split=split, resolution=resolution, rng=rng)
    results = bounds_from_grouping(grouping, order_list, alpha=alpha, direction=direction, sizes=(n_p, n_q))
    return results[0] if scalar else results


def checked_settings(orders, alpha, direction) -> tuple[list, bool, float]:
    """The orders (a list, and whether one was given as a scalar), alpha and direction, checked.

    Parameters
    ----------
    orders : float or sequence of float
    alpha : float
    direction : str

    Returns
    -------
    orders : list of float
    scalar : bool
    alpha : float
    """
    order_list, scalar = as_rdp_orders(orders, "orders")
    too_large = [o for o in order_list if o > MAX_FS_ORDER]
    if too_large:
        raise ValueError(f"orders must be at most {MAX_FS_ORDER:g} for the finite-sample bound, got {too_large[0]:g}")
    alpha = as_probability(alpha, "alpha")
    if direction not in ("both", "forward", "reverse"):
        raise ValueError(f"direction must be one of 'both', 'forward', 'reverse', got {direction!r}")
    return order_list, scalar, alpha


def bounds_from_grouping(grouping: Grouping, orders, *, alpha: float, direction: str, sizes: tuple) -> list:
    """The finite-sample bounds at each order from fixed cells and their counts.

    Parameters
    ----------
    grouping : Grouping
        Cells fixed before the bound's outputs were counted, and those counts.
    orders : sequence of float
        Checked orders (at most :data:`MAX_FS_ORDER`).
    alpha : float
    direction : {"both", "forward", "reverse"}
    sizes : tuple of int
        ``(n_p, n_q)``, every output drawn (the held-out ones included), for the record.

    Returns
    -------
    list of LowerBound
        One per order; in each direction ``lower`` is the running maximum of the certified
        bounds over the requested orders up to this one (:func:`finite_sample_bounds`).
    """
    n_p, n_q = sizes
    order_list = list(orders)
    boxes = _boxes(grouping, alpha)
    event = _event_id(grouping, alpha)
    common = dict(
        alpha=alpha,
        level=alpha,
        n_p=n_p,
        n_q=n_q,
        bandwidth=None,
        floor=None,
        beta=None,
        discrete=True,
        cells=grouping.cells,
        std_error=0.0,
        method="finite-sample",
        event=event,
        held_out=grouping.held_out,
    )
    used_p = grouping.counts_p / grouping.counts_p.sum()
    used_q = grouping.counts_q / grouping.counts_q.sum()
    wanted = LABELS[direction]
    # D_lambda is nondecreasing in lambda and every order holds on the one event of the boxes,
    # so a bound proved at a smaller order holds at every larger one (running maximum).
    proved = {label: {} for label in wanted}
    for label in wanted:
        (lp, up), (lq, uq) = boxes if label == "P||Q" else boxes[::-1]
        best = 0.0
        for order in sorted(set(order_list)):
            certified, primal = box_minimum(lp, up, lq, uq, order).divergence(order)
            best = max(best, certified)
            proved[label][order] = (best, primal)

    def bound_at(order, label):
        f, g = (used_p, used_q) if label == "P||Q" else (used_q, used_p)
        certified, primal = proved[label][order]
        estimate = _plug_in(f, g, order)
        return LowerBound(
            order=float(order), estimate=estimate, lower=certified, primal=primal, direction=label, **common
        )

    return best_per_order(order_list, direction, bound_at)


def _boxes(grouping: Grouping, alpha: float):
    """Clopper–Pearson boxes of every cell but the free one, both sides, at α/(4m) per tail."""
    keep = np.arange(grouping.cells) != grouping.free
    m = max(grouping.cells - 1, 1)
    out = []
    for counts in (grouping.counts_p, grouping.counts_q):
        lower, upper = clopper_pearson(counts[keep], int(counts.sum()), alpha / (4 * m))
        out.append((lower, upper))
    return out


def _plug_in(f, g, order) -> float:
    """D_order of the cell frequencies (``inf`` where g has an empty cell that f has not)."""
    seen = f > 0
    with np.errstate(divide="ignore"):
        log_terms = order * np.log(f[seen]) + (1 - order) * np.log(g[seen])
    return float(special.logsumexp(log_terms) / (order - 1))


def _event_id(grouping: Grouping, alpha: float) -> str:
    """One name per confidence event: bounds from the same boxes share their level in a verdict."""
    digest = hashlib.sha1()
    for part in (grouping.counts_p, grouping.counts_q, np.array([grouping.free, alpha])):
        digest.update(np.ascontiguousarray(part, dtype=float).tobytes())
    return digest.hexdigest()[:16]
