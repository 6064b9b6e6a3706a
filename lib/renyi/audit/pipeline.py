r"""Black-box lower bounds for Rényi DP (Kutta, Askin and Dunsche, 2024, Section III).

Given outputs :math:`X_1,\dots,X_{n_p}\sim p=A(x)` and
:math:`Y_1,\dots,Y_{n_q}\sim q=A(x')` of an algorithm on adjacent databases,

1. estimate :math:`\hat p,\hat q` (relative frequencies or a KDE);
2. floor :math:`\hat q` smoothly, :math:`\hat q_\tau=t_\tau(\hat q)` (eq. 13);
3. plug in: :math:`D_\lambda(\hat p,\hat q_\tau)`;
4. estimate its standard error by the delta method (eq. 18);
5. report :math:`\hat\ell(\alpha)=D_\lambda(\hat p,\hat q_\tau)+\Phi^{-1}(\alpha)\hat\sigma_n/\sqrt n`
   (eq. 16), a lower confidence bound for :math:`D_\lambda(p\|q)\le\varepsilon(\lambda)`.

:func:`rdp_lower_bound` runs steps 1–5 on two samples (:func:`~renyi.audit.sampling.audit`
draws them from a mechanism first).  Several orders share one density fit.
"""

from __future__ import annotations

import math
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace

import numpy as np

from .._validation import as_positive_scalar, as_probability, as_rdp_orders, as_samples
from .bandwidth import robust_scale, strided_subsample
from .bounds import DensityFit, LowerBound
from .delta_method import MAX_ORDER, MIN_SAMPLES, PlugIn, bound_one_direction
from .density import TAILS, kde_on_checked_grid
from .floor import KERNEL_ROUGHNESS, default_floor, paper_floor
from .frequencies import relative_frequencies
from .multivariate_kde import MAX_KDE_DIMENSION, SPACING, fit_grid_kde
from .projection import Projection, output_rows, projected_samples

__all__ = ["fit_densities", "bounds_from_fit", "rdp_lower_bound", "with_projection", "infer_kind", "DIRECTIONS"]

#: A bandwidth above this many times the outputs' spread is refused: the KDE is flat (and its
#: values underflow) long before, and no such bound is informative.
MAX_BANDWIDTH_SPANS = 1e6
#: Directions audited by :func:`rdp_lower_bound`: ``"both"`` (default), or one ordered pair.
DIRECTIONS = ("both", "forward", "reverse")


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


def rdp_lower_bound(
    samples_p,
    samples_q,
    orders,
    *,
    alpha=0.05,
    discrete=None,
    bandwidth=None,
    floor=None,
    beta=None,
    bias_correction=True,
    direction="both",
    tails="absolute",
    method="delta",
    support=None,
    split=None,
    projection=None,
    rng=None,
):
    r"""Lower confidence bound(s) for :math:`\varepsilon(\lambda)` from two samples (eq. 16).

    Parameters
    ----------
    samples_p : array_like
        Outputs of :math:`A(x)`: 1-D (values), or 2-D with one discrete
        outcome per row.
    samples_q : array_like
        Outputs of :math:`A(x')` for an adjacent :math:`x'`.  The sample
        sizes may differ.
    orders : float or sequence of float
        Orders :math:`\lambda>1`.  A scalar gives one :class:`~renyi.audit.bounds.LowerBound`, a
        sequence a list; all orders share one density estimate.
    alpha : float, default 0.05
        The bound holds with asymptotic probability :math:`1-\alpha`.
    discrete : bool, optional
        ``None`` infers it: integer or boolean dtype, or 2-D input, means
        discrete (relative frequencies, eq. 9); 1-D floats mean continuous
        (Gaussian KDE, eq. 10).
    bandwidth : float, optional
        KDE bandwidth :math:`h`.  Default:
        :func:`~renyi.audit.bandwidth.default_bandwidth`, an undersmoothed rule
        :math:`1.06\,\hat s\,n^{-0.35}`.
    floor : float or "paper", optional
        :math:`\tau>0`.  Default: :func:`~renyi.audit.floor.default_floor`.  ``"paper"``
        (continuous outputs only): :func:`~renyi.audit.floor.paper_floor`, :math:`\tau` slightly
        larger than :math:`h` in standardised units, the regime of the paper's
        Theorem 1 as we reconstruct it.
    beta : float, optional
        Softmax sharpness :math:`\beta>0`.  Default :math:`1/\tau`, as the
        paper advises.
    bias_correction : bool, default True
        Centre the bound at :math:`D_\lambda(\hat p,\hat q_\tau)` minus its
        estimated second-order bias (:func:`~renyi.audit.delta_method.second_order_bias`, only ever
        subtracted), an addition of this compendium.  ``False`` gives eq. (16)
        exactly as printed, which is anti-conservative under the default
        floor at large :math:`n`, for continuous and discrete outputs alike
        (coverage down to 0.02 in the Section IV sweep): with it, orders whose
        estimated bias exceeds :data:`~renyi.audit.delta_method.MAX_UNCORRECTED_BIAS` standard errors
        fall back as described below.
    direction : {"both", "forward", "reverse"}, default "both"
        Adjacency is symmetric, so :math:`\varepsilon(\lambda)\ge
        \max(D_\lambda(P\|Q), D_\lambda(Q\|P))`.  ``"both"`` bounds each
        direction at level :math:`\alpha/2` (Bonferroni) and reports the
        larger bound, naming its direction; ``"forward"`` bounds
        :math:`D_\lambda(P\|Q)` alone at level :math:`\alpha`, the paper's
        set-up for the ordered pair (21); ``"reverse"`` bounds
        :math:`D_\lambda(Q\|P)` alone.
    tails : {"absolute", "relative"}, default "absolute"
        The KDE algorithm (:func:`~renyi.audit.density.kde_on_grid`): linear binning
        and FFT, or the tail-accurate fast Gauss transform.  The bounds agree
        to a small fraction of a standard error; ignored for discrete outputs.
    method : {"delta", "finite-sample"}, default "delta"
        ``"delta"``: eq. (16), valid as :math:`n\to\infty`.  ``"finite-sample"`` (discrete
        outputs only): :func:`~renyi.audit.finite_sample.finite_sample_bounds`, which holds
        with probability at least :math:`1-\alpha` for *every* :math:`n`, jointly over all
        orders and both directions (so ``direction="both"`` costs no level); ``bandwidth``,
        ``floor``, ``beta``, ``bias_correction`` and ``tails`` do not apply to it.
    support : array_like, optional
        ``method="finite-sample"`` only: every outcome the mechanism can produce; an output
        outside it is an error.  See :func:`~renyi.audit.finite_sample.group_outcomes`.
    split : float, optional
        The fraction of each sample held out to learn a ``projection`` (default 0.5) or, with
        ``method="finite-sample"``, to choose the cells (default 0 for a declared support of
        two outcomes or boolean outputs, else 0.2).  Held-out outputs are not bounded.
    projection : {"mean-difference", "whitened", "kde"}, array_like or callable, optional
        For vector outputs of shape ``(n, d)``: reduce them to one dimension first, by a
        direction learned on a held-out ``split`` of each sample, a fixed direction ``w``, or a
        map ``f(outputs) -> values`` (:func:`~renyi.audit.projection.projected_samples`).  Valid
        by the data-processing inequality; the bound is then on the projected outputs.
        ``"kde"`` (:math:`d=2` or 3) projects nothing: the densities are estimated on a
        whitened :math:`d`-dimensional grid (:func:`~renyi.audit.multivariate_kde.fit_grid_kde`),
        every output is used, and ``bandwidth`` and ``split`` do not apply.  It is tighter where
        no direction carries the whole shift (independent noise shifted in several
        coordinates); its smoothing bias grows with :math:`d`.
    rng : numpy.random.Generator, optional
        Draws the held-out subsets of ``split``; default ``numpy.random.default_rng(0)``.

    Returns
    -------
    LowerBound or list of LowerBound

    Notes
    -----
    The standard error generalises eq. (18) to unequal sample sizes:
    :math:`\mathrm{se}^2=\text{var}_p/n_p+\text{var}_q/n_q` (see
    :func:`~renyi.audit.delta_method.floored_estimate`), since the two samples are independent and
    each enters through its own influence function.  With
    :math:`n_p=n_q=n` it is exactly :math:`\hat\sigma_n^2/n`.

    **What is proved and what is simulated.**  Theorem 1 of Kutta et al.
    gives asymptotic validity of eq. (16) for floors
    :math:`\tau\to0` with :math:`nh\tau\to\infty` (and the smoothness
    conditions of the chapter on densities).  The *defaults* of this library
    are not in that regime: :func:`~renyi.audit.floor.default_floor` holds :math:`nh\tau`
    constant, so the relative noise of :math:`\hat q` at the floor does not
    vanish, and the second-order bias correction compensates for the
    resulting Jensen bias.  Their validity rests on the compendium's
    simulations (the Section IV sweep and the order-range study in the
    chapter on the delta method), not on Theorem 1.

    **Reliability rule.**  The normal approximation of
    :math:`\log\hat F` behind eq. (16) needs its standard error
    :math:`(\lambda-1)\,\mathrm{se}` to be small; at large orders the
    integral is dominated by a tail region with few samples and the
    approximation fails (the bound can exceed the truth).  When
    :math:`(\lambda-1)\,\mathrm{se}>` :data:`~renyi.audit.delta_method.MAX_LOG_SCALE_ERROR` the bound
    at the requested order is not reported.  Instead the largest order
    :math:`\lambda'=1+(\lambda-1)2^{-k/2}` that passes the rule is used: its
    bound is also a lower bound for :math:`D_\lambda`, since Rényi
    divergences are nondecreasing in the order.  ``reliable`` is then False,
    ``bound_order`` is :math:`\lambda'` and ``note`` says why.  When no
    order qualifies, the trivial bound 0 is reported.  The order-range study
    shows coverage at least 0.90 for every returned bound at orders 1.01–64
    and :math:`n=10^2`–:math:`10^7`, and a false-positive rate at most 0.10
    when :math:`P=Q`.

    Examples
    --------
    >>> import numpy as np
    >>> from renyi.audit import rdp_lower_bound
    >>> rng = np.random.default_rng(1)
    >>> x, y = rng.normal(1, 5, 100_000), rng.normal(0, 5, 100_000)
    >>> bound = rdp_lower_bound(x, y, 2)
    >>> bound.lower < 2 / (2 * 5**2)    # the true epsilon(2) = 0.04
    True
    """
    if isinstance(projection, str) and projection == "kde":
        _check_grid_kde_options(discrete, bandwidth, floor, tails, method, support, split)
        a, b = (output_rows(s, name) for s, name in ((samples_p, "samples_p"), (samples_q, "samples_q")))
        if a.shape[1] != b.shape[1]:
            raise ValueError(f"samples_p and samples_q must have the same dimension, got {a.shape[1]} and {b.shape[1]}")
        if a.shape[1] > MAX_KDE_DIMENSION:
            raise ValueError(
                f"projection='kde' estimates densities on a grid in 2 or 3 dimensions; d = {a.shape[1]} would need "
                f"about {_grid_gib(a.shape[1], min(a.shape[0], b.shape[0])):,.0f} GiB per array: use "
                "projection='mean-difference'"
            )
        fit, grid = fit_grid_kde(np.asarray(a, dtype=float), np.asarray(b, dtype=float))
        bounds = bounds_from_fit(
            fit, orders, alpha=alpha, floor=floor, beta=beta, bias_correction=bias_correction, direction=direction
        )
        info = Projection("kde", grid.dimension, (0, 0), None, tuple(float(h) for h in grid.bandwidths))
        return with_projection(bounds, info)
    if projection is not None:
        x, y, info = projected_samples(samples_p, samples_q, projection, split=split, rng=rng)
        bounds = rdp_lower_bound(
            x,
            y,
            orders,
            alpha=alpha,
            discrete=discrete,
            bandwidth=bandwidth,
            floor=floor,
            beta=beta,
            bias_correction=bias_correction,
            direction=direction,
            tails=tails,
            method=method,
            support=support,
            rng=rng,
        )
        return with_projection(bounds, info)
    if method == "finite-sample":
        _check_finite_sample_options(samples_p, samples_q, discrete, bandwidth, floor, beta, bias_correction, tails)
        from .finite_sample import finite_sample_bounds  # (scipy.optimize: only for this method)

        return finite_sample_bounds(
            samples_p, samples_q, orders, alpha=alpha, support=support, split=split, rng=rng, direction=direction
        )
    if method != "delta":
        raise ValueError(f"method must be 'delta' or 'finite-sample', got {method!r}")
    if support is not None or split is not None:
        raise ValueError("support and split apply to method='finite-sample' only")
    fit = fit_densities(samples_p, samples_q, discrete=discrete, bandwidth=bandwidth, tails=tails)
    return bounds_from_fit(
        fit, orders, alpha=alpha, floor=floor, beta=beta, bias_correction=bias_correction, direction=direction
    )


def with_projection(bounds, info):
    """``bounds`` (one or a list) with the projection recorded, and a warning when it holds little signal.

    Parameters
    ----------
    bounds : LowerBound or list of LowerBound
    info : renyi.audit.projection.Projection

    Returns
    -------
    LowerBound or list of LowerBound
    """
    extra = ()
    share = info.signal_share
    if share is not None and share < 0.5:
        extra = (
            f"the learned direction holds about {share:.2f} of the mean shift (cos^2): n is small for "
            f"d = {info.dimension}, and the bound is loose; draw more outputs, hold out less (split), or "
            "pass a direction known from the mechanism",
        )

    def mark(bound):
        return replace(
            bound,
            projection=info.to_dict(),
            warnings=bound.warnings + extra,
            directions=tuple(
                replace(d, projection=info.to_dict(), warnings=d.warnings + extra) for d in bound.directions
            ),
        )

    return [mark(b) for b in bounds] if isinstance(bounds, list) else mark(bounds)


def _check_grid_kde_options(discrete, bandwidth, floor, tails, method, support, split):
    """Refuse what does not apply to the grid KDE of ``projection="kde"``."""
    if discrete:
        raise ValueError("projection='kde' is for continuous outputs; discrete rows are outcomes already")
    if bandwidth is not None:
        raise ValueError("projection='kde' chooses one bandwidth per whitened axis (Scott's rate); drop bandwidth")
    if isinstance(floor, str):
        raise ValueError("floor='paper' is defined for one-dimensional outputs; pass a number or None")
    if tails != "absolute":
        raise ValueError("projection='kde' has one algorithm (linear binning, direct smoothing); drop tails")
    if method != "delta" or support is not None:
        raise ValueError("projection='kde' is a delta-method bound; method='finite-sample' is for discrete outputs")
    if split is not None:
        raise ValueError("projection='kde' uses every output (nothing is learned): drop split")


def _grid_gib(d, n):
    """GiB of one float64 grid array in d dimensions at the default spacing (about 12 whitened sd a side)."""
    h = n ** (-1.0 / (d + 4))
    return (12.0 / (h / SPACING)) ** d * 8 / 2**30


def _check_finite_sample_options(samples_p, samples_q, discrete, bandwidth, floor, beta, bias_correction, tails):
    """Refuse the delta method's tuning, and continuous outputs, for ``method="finite-sample"``."""
    tuned = {
        "bandwidth": bandwidth is not None,
        "floor": floor is not None,
        "beta": beta is not None,
        "bias_correction": bias_correction is not True,
        "tails": tails != "absolute",
    }
    given = [name for name, set_ in tuned.items() if set_]
    if given:
        verb = "tunes" if len(given) == 1 else "tune"
        raise ValueError(f"{', '.join(given)} {verb} the delta method; method='finite-sample' has no such option")
    a, b = as_samples(samples_p, "samples_p"), as_samples(samples_q, "samples_q")
    if not infer_kind(a, b, discrete):
        raise ValueError(
            "method='finite-sample' is for discrete outputs (integers, booleans or rows); these look "
            "continuous: pass discrete=True if they are outcomes, or use the delta method"
        )


def fit_densities(samples_p, samples_q, *, discrete=None, bandwidth=None, tails="absolute") -> DensityFit:
    r"""Validate two samples and estimate their densities (steps 1–2 of :func:`rdp_lower_bound`).

    Parameters
    ----------
    samples_p, samples_q : array_like
        Outputs of :math:`A(x)` and :math:`A(x')`; see :func:`rdp_lower_bound`.
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
    if inferred and a.ndim == 2 and a.shape[1] > 1 and np.issubdtype(a.dtype, np.floating):
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
        if inferred and est.size > 0.5 * min(n_p, n_q) and min(n_p, n_q) >= 20:
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
    spans = []
    for name, arr in (("samples_p", a), ("samples_q", b)):
        lo, hi = float(arr.min()), float(arr.max())
        if arr.size < 2:
            raise ValueError(
                f"{name} has {arr.size} output; a density estimate needs at least 2 (and a bound about 30)"
            )
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
        spans.append(hi - lo)
    with ThreadPoolExecutor(max_workers=2) as pool:  # numpy's partition releases the GIL
        scale_p, scale_q = pool.map(lambda x: robust_scale(strided_subsample(x)), (a, b))
    scale = 0.5 * (scale_p + scale_q)
    # the rule of default_bandwidth, with the scale computed once
    h = 1.06 * scale * min(n_p, n_q) ** (-0.35) if bandwidth is None else as_positive_scalar(bandwidth, "bandwidth")
    if h > MAX_BANDWIDTH_SPANS * max(spans):
        raise ValueError(
            f"bandwidth {h:.3g} is more than {MAX_BANDWIDTH_SPANS:g} times the spread of the outputs "
            f"({max(spans):.3g}): the KDE is flat and says nothing; choose a bandwidth on the outputs' "
            "scale, or leave it to the default rule"
        )
    if tails not in TAILS:
        raise ValueError(f"tails must be one of {', '.join(map(repr, TAILS))}, got {tails!r}")
    grid = kde_on_checked_grid(a, b, h, 8.0, 8.0, 1 << 22, tails)  # the samples are validated above
    return DensityFit(grid.p, grid.q, grid.dx, n_p, n_q, False, int(grid.size), float(h), float(scale))


def bounds_from_fit(
    fit: DensityFit, orders, *, alpha=0.05, floor=None, beta=None, bias_correction=True, direction="both"
):
    r"""Steps 3–5 of :func:`rdp_lower_bound` on a :class:`DensityFit` (several tunings, one fit).

    Parameters
    ----------
    fit : DensityFit
        From :func:`fit_densities`.
    orders, alpha, floor, beta, bias_correction, direction
        As for :func:`rdp_lower_bound`.

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
    if floor is None:
        if fit.kernel_factor is not None:
            tau = default_floor(min(n_p, n_q), kernel_factor=fit.kernel_factor)
        else:
            tau = default_floor(min(n_p, n_q), bandwidth=h)
    elif isinstance(floor, str):
        if floor != "paper":
            raise ValueError(f"floor must be a positive number, None or 'paper', got {floor!r}")
        if fit.discrete or fit.kernel_factor is not None:
            raise ValueError(
                "floor='paper' is defined for one-dimensional continuous outputs only (it compares "
                "tau with the bandwidth); pass a number or None"
            )
        tau = paper_floor(h, fit.scale)
    else:
        tau = as_positive_scalar(floor, "floor")
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
    wanted = {"forward": ["P||Q"], "reverse": ["Q||P"], "both": ["P||Q", "Q||P"]}[direction]
    pairs = {"P||Q": (p_hat, q_hat, n_p, n_q), "Q||P": (q_hat, p_hat, n_q, n_p)}
    plugins = {
        label: PlugIn(f, g, tau, beta_used, dx, n_f, n_g, kernel_factor)
        for label, (f, g, n_f, n_g) in pairs.items()
        if label in wanted
    }
    results = []
    for order in order_list:
        found = []
        for label in wanted:
            res = bound_one_direction(plugins[label], order, alpha=level, bias_correction=bool(bias_correction))
            found.append(_to_bound(order, res, label, level, common))
        best = max(found, key=lambda b: b.lower)  # ties keep P||Q, the paper's ordered pair
        if direction == "both":
            # A doubt about either direction is a doubt about the audit.
            doubts = tuple(dict.fromkeys(w for b in found for w in b.warnings))
            best = replace(best, directions=tuple(found), warnings=doubts)
        results.append(best)
    return results[0] if scalar else results


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
