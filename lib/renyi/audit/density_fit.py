r"""The delta-method route: two samples' densities fitted once, and bounds at every order.

:func:`fit_densities` runs steps 1–2 of :func:`~renyi.audit.pipeline.rdp_lower_bound` (the
kind of output, relative frequencies or a KDE on a grid) and :func:`bounds_from_fit` steps 3–5
(floor, plug-in, delta method, eq. 16) at each order and direction, so that several orders
share one fit.  :func:`infer_kind` decides whether outputs are discrete.
"""

from __future__ import annotations

import math
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from .._validation import as_positive_scalar, as_probability, as_rdp_orders, as_samples
from .bandwidth import bandwidth_from_scale, robust_scale, strided_subsample
from .bounds import LABELS, LowerBound, best_per_order
from .counts import MAX_NODES, NODES_PER_BANDWIDTH, PAD_BANDWIDTHS
from .delta_method import MAX_ORDER, MIN_SAMPLES, PlugIn, bound_one_direction
from .density import KERNEL_ROUGHNESS, TAILS, DensityFit, kde_on_checked_grid
from .floor import default_floor, paper_floor
from .frequencies import relative_frequencies

__all__ = ["fit_densities", "bounds_from_fit", "infer_kind", "DIRECTIONS"]

#: A bandwidth above this many times the outputs' spread is refused: the KDE is flat (and its
#: values underflow) long before, and no such bound is informative.
MAX_BANDWIDTH_SPANS = 1e6
#: Directions audited by :func:`~renyi.audit.pipeline.rdp_lower_bound`: ``"both"`` (default), or one ordered pair.
DIRECTIONS = ("both", "forward", "reverse")


def real_vectors(arr: np.ndarray) -> bool:
    """Whether outputs are vectors of real values (rows of d > 1 floats).

    No route takes them as they are: they need a projection, or ``discrete=True`` if each row
    is an outcome.
    """
    return arr.ndim == 2 and arr.shape[1] > 1 and arr.dtype.kind == "f"


def mostly_unique(distinct: int, n: int) -> bool:
    """Whether ``distinct`` outcomes are too many for ``n`` outputs inferred as discrete.

    From 20 outputs on, more distinct outcomes than half the smaller sample means most occur
    once: they are real values, and relative frequencies estimate nothing.
    """
    return n >= 20 and distinct > 0.5 * n


def infer_kind(a: np.ndarray, b: np.ndarray, discrete) -> bool:
    """Whether two samples are discrete: ``discrete`` if given, else what both look like.

    Integers, booleans and 2-D rows (outcomes such as bit vectors) look discrete; 1-D floats
    look continuous.  Samples that look unlike each other are refused.

    Parameters
    ----------
    a, b : ndarray
    discrete : bool or None

    Returns
    -------
    bool
    """

    def looks_discrete(arr):
        return arr.ndim == 2 or np.issubdtype(arr.dtype, np.integer) or arr.dtype == bool

    if discrete is None:
        kinds = looks_discrete(a), looks_discrete(b)
        if kinds[0] != kinds[1]:
            raise ValueError(
                f"samples_p looks {'discrete' if kinds[0] else 'continuous'} ({a.dtype}, {a.ndim}-D) but "
                f"samples_q looks {'discrete' if kinds[1] else 'continuous'} ({b.dtype}, {b.ndim}-D); "
                "pass both as the same kind, or set discrete=True/False"
            )
        return kinds[0]
    if not isinstance(discrete, (bool, np.bool_)):
        raise TypeError(f"discrete must be True, False or None, got {discrete!r}")
    return bool(discrete)


def fit_densities(samples_p, samples_q, *, discrete=None, bandwidth=None, tails="absolute") -> DensityFit:
    r"""Validate two samples and estimate their densities (steps 1–2 of :func:`~renyi.audit.pipeline.rdp_lower_bound`).

    Parameters
    ----------
    samples_p, samples_q : array_like
        Outputs of :math:`A(x)` and :math:`A(x')`; see :func:`~renyi.audit.pipeline.rdp_lower_bound`.
        A 2-D array with one column, the usual shape of a model's outputs, is
        read as 1-D.
    discrete : bool, optional
        ``None`` infers it from the dtype and shape.  Inferred-discrete data
        in which most outcomes occur only once are refused: they are almost
        certainly continuous values (or a decimal-comma file read as rows).
    bandwidth : float, optional
        KDE bandwidth; default :func:`~renyi.audit.bandwidth.default_bandwidth`.
    tails : {"absolute", "relative"}, default "absolute"
        KDE algorithm, see :func:`~renyi.audit.density.kde_on_grid`.

    Returns
    -------
    DensityFit

    Examples
    --------
    >>> import numpy as np
    >>> fit = fit_densities(np.array([0, 1, 1, 2]), np.array([0, 0, 1, 2]))
    >>> fit.discrete, fit.cells, fit.p.tolist()
    (True, 3, [0.25, 0.5, 0.25])
    """
    a = as_samples(samples_p, "samples_p")
    b = as_samples(samples_q, "samples_q")
    inferred = discrete is None
    if inferred and real_vectors(a):
        raise ValueError(
            f"samples_p holds vectors of d = {a.shape[1]} real values: pass projection='mean-difference' "
            "(a direction learned on a held-out half of each sample), or in Python a fixed direction or "
            "map (projection=w or f); or discrete=True if each row is an outcome"
        )
    is_discrete = infer_kind(a, b, discrete)
    n_p, n_q = int(a.shape[0]), int(b.shape[0])
    if is_discrete:
        if bandwidth is not None:
            raise ValueError("bandwidth applies to continuous outputs only; drop it or set discrete=False")
        est = relative_frequencies(a, b)
        if inferred and mostly_unique(est.size, min(n_p, n_q)):
            raise ValueError(
                f"the outputs look continuous, not discrete: {est.size:,} distinct outcomes in "
                f"{n_p + n_q:,} observations, so most occur once and relative frequencies estimate "
                "nothing; pass 1-D real values (discrete=False), or discrete=True to insist"
            )
        return DensityFit(est.p, est.q, est.dx, n_p, n_q, True, est.size, None, None)
    if a.ndim != 1 or b.ndim != 1:
        raise ValueError(
            f"continuous outputs must be 1-D (the KDE is one-dimensional), got shapes "
            f"{a.shape} and {b.shape}; for vector outputs pass projection='mean-difference' (or a "
            "direction), for discrete vector outputs discrete=True"
        )
    a, b = a.astype(float, copy=False), b.astype(float, copy=False)
    spans = [_checked_span(name, arr) for name, arr in (("samples_p", a), ("samples_q", b))]
    with ThreadPoolExecutor(max_workers=2) as pool:  # numpy's partition releases the GIL
        scale_p, scale_q = pool.map(lambda x: robust_scale(strided_subsample(x)), (a, b))
    scale = 0.5 * (scale_p + scale_q)
    # the rule of default_bandwidth, with the scale computed once
    h = bandwidth_from_scale(scale, min(n_p, n_q)) if bandwidth is None else as_positive_scalar(bandwidth, "bandwidth")
    if h > MAX_BANDWIDTH_SPANS * max(spans):
        raise ValueError(
            f"bandwidth {h:.3g} is more than {MAX_BANDWIDTH_SPANS:g} times the spread of the outputs "
            f"({max(spans):.3g}): the KDE is flat and says nothing; choose a bandwidth on the outputs' "
            "scale, or leave it to the default rule"
        )
    if tails not in TAILS:
        raise ValueError(f"tails must be one of {', '.join(map(repr, TAILS))}, got {tails!r}")
    grid = kde_on_checked_grid(
        a, b, h, NODES_PER_BANDWIDTH, PAD_BANDWIDTHS, MAX_NODES, tails
    )  # the samples are validated above
    return DensityFit(grid.p, grid.q, grid.dx, n_p, n_q, False, int(grid.size), float(h), float(scale))


def _checked_span(name: str, arr: np.ndarray) -> float:
    """The spread (largest minus smallest) of continuous outputs, refused where no grid holds them."""
    if arr.size < 2:
        raise ValueError(f"{name} has {arr.size} output; a density estimate needs at least 2 (and a bound about 30)")
    lo, hi = float(arr.min()), float(arr.max())
    if not hi > lo:
        raise ValueError(
            f"{name} has zero spread (all values equal); a continuous density "
            "cannot be estimated — are the outputs discrete? then pass discrete=True"
        )
    if not math.isfinite(hi - lo) or max(abs(lo), abs(hi)) > 1e150:
        raise ValueError(
            f"{name} spans {lo:.3g} to {hi:.3g}, beyond what a density grid can hold in "
            "double precision; rescale the outputs (the bound does not depend on units)"
        )
    return hi - lo


def bounds_from_fit(
    fit: DensityFit, orders, *, alpha=0.05, floor=None, beta=None, bias_correction=True, direction="both"
):
    r"""Steps 3–5 of :func:`~renyi.audit.pipeline.rdp_lower_bound` on a :class:`DensityFit` (several tunings, one fit).

    Parameters
    ----------
    fit : DensityFit
        From :func:`fit_densities`.
    orders, alpha, floor, beta, bias_correction, direction
        As for :func:`~renyi.audit.pipeline.rdp_lower_bound`.

    Returns
    -------
    LowerBound or list of LowerBound
    """
    if not isinstance(fit, DensityFit):
        raise TypeError(f"fit must be a DensityFit from fit_densities, got {type(fit).__name__}")
    order_list, scalar = as_rdp_orders(orders, "orders")
    too_large = [o for o in order_list if o > MAX_ORDER]
    if too_large:
        raise ValueError(
            f"orders must be at most {MAX_ORDER:g}, got {too_large[0]:g}: beyond it the plug-in "
            "loses its meaning to round-off in double precision, and D_order barely grows with "
            f"the order there; audit order {MAX_ORDER:g} instead"
        )
    alpha = as_probability(alpha, "alpha")
    if not isinstance(bias_correction, (bool, np.bool_)):
        raise TypeError(f"bias_correction must be True or False, got {bias_correction!r}")
    if direction not in DIRECTIONS:
        raise ValueError(f"direction must be one of {', '.join(map(repr, DIRECTIONS))}, got {direction!r}")
    if beta is not None:
        beta = as_positive_scalar(beta, "beta")
    n_p, n_q, h = fit.n_p, fit.n_q, fit.bandwidth
    tau = _floor_of(fit, floor)
    beta_used = 1.0 / tau if beta is None else beta
    p_hat, q_hat, dx = fit.p, fit.q, fit.dx

    common = dict(
        alpha=alpha,
        n_p=n_p,
        n_q=n_q,
        bandwidth=h,
        floor=float(tau),
        beta=float(beta_used),
        discrete=fit.discrete,
        cells=fit.cells,
        bias_corrected=bool(bias_correction),
    )
    level = alpha / 2 if direction == "both" else alpha
    kernel_factor = fit.kernel_factor or (1.0 if h is None else KERNEL_ROUGHNESS / h)
    pairs = {"P||Q": (p_hat, q_hat, n_p, n_q), "Q||P": (q_hat, p_hat, n_q, n_p)}
    plugins = {
        label: PlugIn(f, g, tau, beta_used, dx, n_f, n_g, kernel_factor)
        for label, (f, g, n_f, n_g) in pairs.items()
        if label in LABELS[direction]
    }

    def bound_at(order, label):
        res = bound_one_direction(plugins[label], order, alpha=level, bias_correction=bool(bias_correction))
        return _to_bound(order, res, label, level, common)

    results = best_per_order(order_list, direction, bound_at)
    return results[0] if scalar else results


def _floor_of(fit: DensityFit, floor) -> float:
    """The floor tau: the library's default rule, the paper's, or the number given."""
    n = min(fit.n_p, fit.n_q)
    if floor is None:
        if fit.kernel_factor is not None:
            return default_floor(n, kernel_factor=fit.kernel_factor)
        return default_floor(n, bandwidth=fit.bandwidth)
    if isinstance(floor, str):
        if floor != "paper":
            raise ValueError(f"floor must be a positive number, None or 'paper', got {floor!r}")
        if fit.discrete or fit.kernel_factor is not None:
            raise ValueError(
                "floor='paper' is defined for one-dimensional continuous outputs only (it compares "
                "tau with the bandwidth); pass a number or None"
            )
        return paper_floor(fit.bandwidth, fit.scale)
    return as_positive_scalar(floor, "floor")


def _warnings(res, common, label) -> tuple:
    """The facts that make a bound's numbers doubtful (see ``LowerBound.warnings``)."""
    found = []
    n_min = min(common["n_p"], common["n_q"])
    if n_min < MIN_SAMPLES:
        found.append(
            f"only {n_min} outputs on one side: below about {MIN_SAMPLES} per side the delta "
            "method's normal approximation is not credible"
        )
    estimate, se = res["estimate"], res["std_error"]
    if estimate < -se and estimate < -1e-9:
        found.append(
            f"the estimate of D({label}) {estimate:.3g} is more than one standard error ({se:.2g}) below 0, "
            "which a divergence cannot be: the density estimates do not describe the samples "
            "(too few outputs, a floor, beta or bandwidth far from the data's scale, or "
            "continuous values read as discrete)"
        )
    return tuple(found)


def _to_bound(order, res, label, level, common) -> LowerBound:
    return LowerBound(
        order=float(order),
        estimate=float(res["estimate"]),
        std_error=float(res["std_error"]),
        lower=float(res["lower"]),
        bias=float(res["bias"]),
        direction=label,
        reliable=bool(res["reliable"]),
        note=res["note"],
        level=level,
        bound_order=None if res["bound_order"] is None else float(res["bound_order"]),
        warnings=_warnings(res, common, label),
        **common,
    )
