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

from dataclasses import replace

import numpy as np

from .._validation import as_samples
from .density_fit import bounds_from_fit, fit_densities, infer_kind
from .multivariate_kde import MAX_KDE_DIMENSION, SPACING, fit_grid_kde
from .projection import Projection, output_rows, renamed
from .reduction import projected_samples, route_warnings

__all__ = ["rdp_lower_bound", "with_projection"]


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
    projection : {"auto", "likelihood-ratio", "mean-difference", "whitened", "grid"}, array_like or callable, optional
        For vector outputs of shape ``(n, d)``: reduce them to one dimension first, by a map
        learned on a held-out ``split`` of each sample, a fixed direction ``w``, or a map
        ``f(outputs) -> values`` (:func:`~renyi.audit.reduction.projected_samples`).  Valid
        by the data-processing inequality; the bound is then on the projected outputs.
        ``"auto"`` (recommended) scores the learned maps (the two directions and the
        estimated log-likelihood ratio) on held-out outputs and takes the best; with any
        learned map the record's ``divergence_share`` says how much of the best candidate's
        held-out bound the route keeps, and a warning names a better one below one half.
        ``"grid"`` (:math:`d=2` or 3) projects nothing: the densities are estimated on a
        whitened :math:`d`-dimensional grid (:func:`~renyi.audit.multivariate_kde.fit_grid_kde`),
        every output is used, and ``bandwidth`` and ``split`` do not apply.  It is tighter where
        no direction carries the whole shift (independent noise shifted in several
        coordinates); its smoothing bias grows with :math:`d`.  (``"kde"`` is its former name,
        still accepted with a ``FutureWarning``.)
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
    projection = renamed(projection, stacklevel=2)
    options = dict(alpha=alpha, floor=floor, beta=beta, bias_correction=bias_correction, direction=direction)
    if isinstance(projection, str) and projection == "grid":
        _check_grid_kde_options(discrete, bandwidth, floor, tails, method, support, split)
        return _grid_route(samples_p, samples_q, orders, options)
    if projection is not None:
        one_d = dict(options, discrete=discrete, bandwidth=bandwidth, tails=tails, method=method, support=support)
        return _projected_route(samples_p, samples_q, projection, orders, split, rng, one_d)
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
    """``bounds`` (one or a list) with the projection recorded, and warnings against its route.

    Parameters
    ----------
    bounds : LowerBound or list of LowerBound
    info : renyi.audit.projection.Projection

    Returns
    -------
    LowerBound or list of LowerBound
    """
    extra = route_warnings(info)

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


def _grid_route(samples_p, samples_q, orders, options):
    """``projection="grid"``: the densities on a whitened grid, every output used."""
    a, b = (output_rows(s, name) for s, name in ((samples_p, "samples_p"), (samples_q, "samples_q")))
    if a.shape[1] != b.shape[1]:
        raise ValueError(f"samples_p and samples_q must have the same dimension, got {a.shape[1]} and {b.shape[1]}")
    if a.shape[1] > MAX_KDE_DIMENSION:
        raise ValueError(
            f"projection='grid' estimates densities on a grid in 2 or 3 dimensions; d = {a.shape[1]} would need "
            f"about {_grid_gib(a.shape[1], min(a.shape[0], b.shape[0])):,.0f} GiB per array: use "
            "projection='auto'"
        )
    bounds, widths = _grid_bounds(a, b, orders, options)
    return with_projection(bounds, Projection("grid", a.shape[1], (0, 0), None, widths))


def _projected_route(samples_p, samples_q, projection, orders, split, rng, options):
    """A learned or given projection, then the one-dimensional bound (or the grid, if "auto" chose it)."""
    grid = (
        options["bandwidth"] is None
        and not isinstance(options["floor"], str)
        and options["tails"] == "absolute"
        and options["method"] == "delta"
    )  # the grid is a candidate of "auto" unless an option it does not take is set
    scored_at = {k: options[k] for k in ("alpha", "direction")}
    x, y, info = projected_samples(
        samples_p, samples_q, projection, split=split, rng=rng, orders=orders, grid=grid, **scored_at
    )
    if info.kind == "grid":  # "auto" chose the grid: x and y are the rows not held out
        bounds, widths = _grid_bounds(x, y, orders, options)
        return with_projection(bounds, replace(info, bandwidths=widths))
    return with_projection(rdp_lower_bound(x, y, orders, rng=rng, **options), info)


def _grid_bounds(a, b, orders, options):
    """The bounds of the grid estimate on (n, d) rows, and its bandwidths (whitened units)."""
    fit, grid = fit_grid_kde(np.asarray(a, dtype=float), np.asarray(b, dtype=float))
    tuning = {k: options[k] for k in ("alpha", "floor", "beta", "bias_correction", "direction")}
    return bounds_from_fit(fit, orders, **tuning), tuple(float(h) for h in grid.bandwidths)


def _check_grid_kde_options(discrete, bandwidth, floor, tails, method, support, split):
    """Refuse what does not apply to the grid KDE of ``projection="grid"``."""
    if discrete:
        raise ValueError("projection='grid' is for continuous outputs; discrete rows are outcomes already")
    if bandwidth is not None:
        raise ValueError("projection='grid' chooses one bandwidth per whitened axis (Scott's rate); drop bandwidth")
    if isinstance(floor, str):
        raise ValueError("floor='paper' is defined for one-dimensional outputs; pass a number or None")
    if tails != "absolute":
        raise ValueError("projection='grid' has one algorithm (linear binning, direct smoothing); drop tails")
    if method != "delta" or support is not None:
        raise ValueError("projection='grid' is a delta-method bound; method='finite-sample' is for discrete outputs")
    if split is not None:
        raise ValueError("projection='grid' uses every output (nothing is learned): drop split")


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
