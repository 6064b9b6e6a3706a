r"""The floored plug-in, its delta-method variance (eq. 18), the second-order bias and the reliability rule.

Steps 3-5 of the pipeline in :mod:`renyi.audit` (Kutta, Askin and Dunsche, 2024, eqs. 16-18),
on density estimates that are already fitted.  Taught in the chapter *The delta method*
(``book/part1``).
"""

from __future__ import annotations

import math

import numpy as np
from scipy import special

from .._docs import fill
from .._validation import as_probability, as_real_array
from ..divergence import log_integral
from .density import KERNEL_ROUGHNESS
from .floor import softmax_derivative, softmax_floor

__all__ = [
    "floored_estimate",
    "second_order_bias",
    "bound_from_densities",
    "MAX_LOG_SCALE_ERROR",
    "MAX_UNCORRECTED_BIAS",
    "NEAR_ONE",
    "MAX_ORDER",
    "MIN_SAMPLES",
]

#: Grid spacing and sample sizes, keyword-only where they follow the data.
_SAMPLE_SIZES = r"""
dx : float
    Grid spacing (1 for pmfs).
n_p, n_q : int
    Sample sizes.
"""

#: The density estimates, the order and the floor of eqs. (13)-(18).
_PLUGIN_INPUTS = r"""
p_hat, q_hat : array_like
    Density estimates on a common grid (or pmfs).
order : float
    :math:`\lambda>1`.
floor, beta : float
    :math:`\tau` and :math:`\beta` of eq. (13).
"""

#: Largest :math:`(\lambda-1)\,\mathrm{se}` -- the standard error of :math:`\log\hat F` -- at
#: which the delta-method bound is reported at the requested order.  Beyond it the normal
#: approximation of :math:`\log\hat F` fails (the study in the chapter on the delta method shows
#: coverage falling to 0.1 at (λ-1)se ≈ 20), and the bound falls back to a smaller order.
MAX_LOG_SCALE_ERROR = 1.0
#: With ``bias_correction=False`` (eq. 16 as printed): the largest estimated upward bias, in
#: standard errors, at which the uncorrected bound is reported.  Beyond it eq. (16) is
#: anti-conservative (coverage 0.15-0.7 at bias/se ≈ 2-3 in the order-range study).
MAX_UNCORRECTED_BIAS = 1.0
#: The largest order an audit accepts.  Beyond it the exponents λ·log(p̂/q̂_τ) lose whole
#: units to round-off in double precision (relative error 1e-16 times λ), so the plug-in and
#: its variance mean nothing; D_λ is nearly constant in λ there anyway.
MAX_ORDER = 1e6
#: Fewer outputs than this per side and the delta method's normal approximation is not
#: credible; such bounds are returned with a warning.
MIN_SAMPLES = 30
#: Below this value of λ-1 the estimate and var_p are computed by an expm1 form
#: (``_near_one``), which has no cancellation as λ -> 1.
NEAR_ONE = 1e-3


class PlugIn:
    """The order-independent pieces of the floored plug-in for one direction and one tuning.

    Every integral of eqs. (16)-(18) and of the bias carries a factor of p_hat, so only the
    cells with p_hat > 0 are kept; logs, the softmax floor and its derivative are computed
    once and reused for every order (the audit evaluates several orders, and the fallback
    ladder more).
    """

    def __init__(self, p_hat, q_hat, floor, beta, dx, n_p=1, n_q=1, kernel_factor=1.0):
        p_hat, q_hat = np.asarray(p_hat, dtype=float), np.asarray(q_hat, dtype=float)
        keep = p_hat > 0
        p, q = p_hat[keep], q_hat[keep]
        self.p, self.beta = p, beta
        self.dx, self.log_dx = dx, math.log(dx)
        with np.errstate(divide="ignore"):
            self.lp, self.lq = np.log(p), np.log(q)
        self.qt = softmax_floor(q, floor, beta)
        self.lqt = np.log(self.qt)
        self.pi = softmax_derivative(q, floor, beta)
        with np.errstate(divide="ignore"):
            self.lpi = np.log(self.pi)
        self.log_ratio = self.lp - self.lqt  # L = log(p_hat / q_tau)
        self.pointwise_var_p = np.maximum(kernel_factor * p - p * p, 0.0) / n_p
        self.pointwise_var_q = np.maximum(kernel_factor * q - q * q, 0.0) / n_q
        self.n_p, self.n_q = n_p, n_q
        self.base_q = self.lpi + self.lq  # log(pi q_hat)

    def moments(self, order):
        """(estimate, var_p, var_q, log F) at order order (the formulas of floored_estimate)."""
        if self.p.size == 0:
            raise ValueError("the estimated p has no mass on the grid; check the samples")
        order_log_ratio = order * self.log_ratio
        log_f = log_integral(self.lqt + order_log_ratio, self.dx)
        log_i2 = log_integral(2 * self.lpi + self.lq + 2 * order_log_ratio, self.dx)
        log_i3 = log_integral(self.base_q + order_log_ratio, self.dx)
        if order - 1 < NEAR_ONE:
            estimate, var_p = _near_one(self.p, self.lp, self.lqt, order)
        else:
            log_i1 = log_integral(self.lp + 2 * (order - 1) * self.log_ratio, self.dx)
            estimate = log_f / (order - 1)
            var_p = (order / (order - 1)) ** 2 * math.expm1(log_i1 - 2 * log_f)
        var_q = math.exp(log_i2 - 2 * log_f) - math.exp(2 * (log_i3 - log_f)) if math.isfinite(log_i2) else 0.0
        # Cancellation can leave -1e-17 when p_hat == q_hat; a variance is >= 0.
        return estimate, max(var_p, 0.0), max(var_q, 0.0), log_f

    def bias(self, order, log_f, std_error):
        """The second-order bias of second_order_bias, both terms."""
        with np.errstate(over="ignore", invalid="ignore"):
            # each term divided by F inside the exponent, so nothing overflows
            t_p = (
                order
                * (order - 1)
                * np.exp((order - 1) * self.log_ratio - self.lp + self.log_dx - log_f)
                * self.pointwise_var_p
            )
            curv_q = self.beta * self.pi * (1 - self.pi) - order * self.pi**2 / self.qt
            t_q = (1 - order) * np.exp(order * self.log_ratio + self.log_dx - log_f) * curv_q * self.pointwise_var_q
        b_over_f = 0.5 * (np.nansum(t_p) + np.nansum(t_q))
        return b_over_f / (order - 1) - 0.5 * (order - 1) * std_error * std_error

    def bound(self, order, alpha, bias_correction):
        """(estimate, std_error, bias, lower) at order order: steps 3-5."""
        estimate, var_p, var_q, log_f = self.moments(order)
        se = math.sqrt(var_p / self.n_p + var_q / self.n_q)
        bias = self.bias(order, log_f, se)
        centre = estimate - max(bias, 0.0) if bias_correction else estimate
        return estimate, se, bias, min(centre + special.ndtri(alpha) * se, estimate)


@fill(plugin_inputs=_PLUGIN_INPUTS)
def floored_estimate(p_hat, q_hat, order, floor, beta, dx=1.0):
    r"""The plug-in :math:`D_\lambda(\hat p,\hat q_\tau)` and the delta-method variance terms.

    Returns ``(estimate, var_p, var_q)`` with

    .. math::

        \text{var}_p=\frac{\lambda^2}{(\lambda-1)^2}
        \Big(\frac{\int\hat p^{2\lambda-1}\hat q_\tau^{2-2\lambda}}{F^2}-1\Big),

        \text{var}_q=\frac{\int\pi(\hat q)^2\hat q_\tau^{-2\lambda}\hat q\,\hat p^{2\lambda}}{F^2}
        -\Big(\frac{\int\pi(\hat q)\hat q_\tau^{-\lambda}\hat q\,\hat p^{\lambda}}{F}\Big)^2,

    :math:`F=\int\hat p^\lambda\hat q_\tau^{1-\lambda}`, so that
    :math:`\text{var}_p+\text{var}_q=\hat\sigma_n^2` of eq. (18):
    :math:`(\hat\sigma^{(1)})^2/((\lambda-1)F)^2` and
    :math:`(\hat\sigma^{(2)})^2/((\lambda-1)F)^2` respectively.  They are the
    variances of the influence functions
    :math:`g_1=\lambda\hat p^{\lambda-1}\hat q_\tau^{1-\lambda}` under :math:`p` and
    :math:`g_2=(1-\lambda)\hat p^\lambda\hat q_\tau^{-\lambda}\pi(\hat q)` under :math:`q`,
    divided by :math:`((\lambda-1)F)^2`.  All integrals are ``logsumexp`` sums
    times ``dx`` (1 for pmfs), so large orders are safe.

    Parameters
    ----------
    {{plugin_inputs}}
    dx : float, default 1
        Grid spacing (1 for pmfs).

    Returns
    -------
    tuple of float
        ``(estimate, var_p, var_q)``.

    References
    ----------
    :cite:t:`kutta2024lower`, eqs. (16)–(18).
    """
    estimate, var_p, var_q, _ = PlugIn(p_hat, q_hat, floor, beta, dx).moments(float(order))
    return estimate, var_p, var_q


def _near_one(p_hat, lp, lqt, order):
    r"""Estimate and :math:`\text{var}_p` for :math:`\lambda-1<` :data:`NEAR_ONE`, without cancellation.

    With :math:`w=\hat p/\!\int\hat p`, :math:`L=\log(\hat p/\hat q_\tau)` and
    :math:`u=\operatorname{expm1}((\lambda-1)L)/(\lambda-1)` (which tends to
    :math:`L`), :math:`F/\!\int\hat p=1+(\lambda-1)E_w u` and
    :math:`\text{var}_p=\lambda^2\operatorname{Var}_w(u)/(1+(\lambda-1)E_wu)^2`:
    the same quantities as the general formulas, which divide an
    :math:`O((\lambda-1)^2)` difference by :math:`(\lambda-1)^2`.  The mass of
    :math:`\hat p` (1 up to round-off) is divided out, since
    :math:`\log\!\int\hat p/(\lambda-1)` would turn its last bits into an error
    of order :math:`10^{-16}/(\lambda-1)`.
    """
    keep = p_hat > 0
    w = p_hat[keep] / np.sum(p_hat[keep])
    u = np.expm1((order - 1) * (lp[keep] - lqt[keep])) / (order - 1)
    mean_u = float(np.sum(w * u))
    var_u = float(np.sum(w * (u - mean_u) ** 2))
    log_f_rel = math.log1p((order - 1) * mean_u)
    var_p = order**2 * var_u / (1 + (order - 1) * mean_u) ** 2
    return log_f_rel / (order - 1), var_p


@fill(plugin_inputs=_PLUGIN_INPUTS, sample_sizes=_SAMPLE_SIZES)
def second_order_bias(p_hat, q_hat, order, *, floor, beta, dx, n_p, n_q, kernel_factor=1.0, std_error=None):
    r"""Estimated second-order bias of :math:`D_\lambda(\hat p,\hat q_\tau)` (beyond the paper).

    The plug-in is a smooth function of the density estimates, so by a
    second-order expansion (the delta method one term further, van der
    Vaart 1998, Ch. 3),

    .. math::

        \mathbb E\,D_\lambda(\hat p,\hat q_\tau)-D_\lambda(p,q_\tau)\approx
        \frac{B_F}{(\lambda-1)F}-\frac{\lambda-1}{2}\,\mathrm{se}^2,

        B_F=\tfrac12\int\Big(\partial_p^2f\,\mathrm{Var}\,\hat p(t)+\partial_q^2f\,\mathrm{Var}\,\hat q(t)\Big),

    with :math:`f(p,q)=p^\lambda q_\tau^{1-\lambda}`,
    :math:`\partial_p^2f=\lambda(\lambda-1)p^{\lambda-2}q_\tau^{1-\lambda}`,
    :math:`\partial_q^2f=(1-\lambda)p^\lambda\big(\beta\pi(1-\pi)q_\tau^{-\lambda}-\lambda\pi^2q_\tau^{-\lambda-1}\big)`,
    and :math:`\mathrm{Var}\,\hat f(t)\approx(c\,f(t)-f(t)^2)/n` where
    :math:`c=1` for relative frequencies (multinomial cells) and
    :math:`c=R(K)/h` for a KDE (``kernel_factor``).  :math:`F` is separable
    over cells, so no covariances enter.  The convexity of
    :math:`q\mapsto q_\tau^{1-\lambda}` makes the bias positive where
    :math:`\hat q` is noisy: Jensen's inequality pushes the plug-in *up*,
    which can break the coverage of the lower bound at large :math:`n`
    when many cells sit just above the floor.

    Returns the whole approximation, both terms.  ``std_error`` is the
    :math:`\mathrm{se}` of the second term; ``None`` computes it with
    :func:`floored_estimate`.

    Parameters
    ----------
    {{plugin_inputs}}
    {{sample_sizes}}
    kernel_factor : float, default 1
        :math:`R(K)/h` for a KDE (pointwise variance :math:`\approx R(K)p/(nh)`), 1 for frequencies.
    std_error : float, optional
        The delta-method standard error; computed if not given.

    Returns
    -------
    float
    """
    order = float(order)
    plugin = PlugIn(p_hat, q_hat, floor, beta, dx, n_p, n_q, kernel_factor)
    _, var_p, var_q, log_f = plugin.moments(order)
    if std_error is None:
        std_error = math.sqrt(var_p / n_p + var_q / n_q)
    return plugin.bias(order, log_f, std_error)


@fill(plugin_inputs=_PLUGIN_INPUTS, sample_sizes=_SAMPLE_SIZES)
def bound_from_densities(
    p_hat, q_hat, order, *, floor, beta, dx, n_p, n_q, bandwidth=None, alpha=0.05, bias_correction=True
):
    r"""Steps 3–5 on given density estimates: ``(estimate, std_error, bias, lower)``.

    ``bandwidth`` is the KDE's :math:`h` (``None`` for relative frequencies),
    which sets the pointwise variance used by :func:`second_order_bias`.
    :func:`~renyi.audit.rdp_lower_bound` calls this after fitting the densities; it is
    public so that sweeps over :math:`(\tau,\beta)` can reuse one fit.

    ``lower`` is eq. (16) centred at ``estimate - max(bias, 0)`` (or at
    ``estimate`` when ``bias_correction`` is False), so it never exceeds
    ``estimate``: the correction only ever lowers the bound.  A negative
    ``bias`` comes from the concavity term :math:`-(\lambda-1)\mathrm{se}^2/2`
    and would raise the centre; it is large exactly where the normal
    approximation of :math:`\log\hat F` fails, so it is not applied.  This
    function applies no reliability rule; :func:`~renyi.audit.rdp_lower_bound` does.

    Parameters
    ----------
    {{plugin_inputs}}
    {{sample_sizes}}
    bandwidth : float, optional
        The KDE bandwidth (``None``: discrete).
    alpha : float, default 0.05
        One-sided error level.
    bias_correction : bool, default True

    Returns
    -------
    tuple of float
        ``(estimate, std_error, bias, lower)``.
    """
    alpha = as_probability(alpha, "alpha")
    p_hat, q_hat = as_real_array(p_hat, "p_hat"), as_real_array(q_hat, "q_hat")
    if p_hat.shape != q_hat.shape or np.any(p_hat < 0) or np.any(q_hat < 0):
        raise ValueError(
            f"p_hat and q_hat must be non-negative estimates on one grid, got shapes {p_hat.shape} and {q_hat.shape}"
        )
    kernel_factor = 1.0 if bandwidth is None else KERNEL_ROUGHNESS / bandwidth
    return PlugIn(p_hat, q_hat, floor, beta, dx, n_p, n_q, kernel_factor).bound(float(order), alpha, bias_correction)


def is_reliable(order, se, bias, bias_correction) -> bool:
    """The rule of :data:`MAX_LOG_SCALE_ERROR` and :data:`MAX_UNCORRECTED_BIAS`."""
    if not (order - 1) * se <= MAX_LOG_SCALE_ERROR:
        return False
    return bias_correction or bias <= MAX_UNCORRECTED_BIAS * se


def fallback_orders(order):
    """Orders below ``order`` to try, largest first: 1 + (order - 1) * 2**(-k/2), k = 1, 2, ...

    At least 40 steps, and on until order - 1 falls below 1e-6: from any order the audit
    accepts (up to :data:`MAX_ORDER`) the ladder reaches the small orders that qualify
    first, so a huge order never reports "none qualifies" where order 8 would.
    """
    ladder, k = [], 1
    while k <= 40 or (order - 1.0) * 2.0 ** (-k / 2) >= 1e-6:
        ladder.append(1.0 + (order - 1.0) * 2.0 ** (-k / 2))
        k += 1
    return ladder


def bound_one_direction(plugin: PlugIn, order, *, alpha, bias_correction):
    """Bound at ``order`` for one direction, with the fallback to a smaller order."""
    n_p, n_q = plugin.n_p, plugin.n_q
    estimate, se, bias, lower = plugin.bound(order, alpha, bias_correction)
    out = dict(estimate=estimate, std_error=se, bias=bias, lower=lower, reliable=True, bound_order=order, note="")
    if is_reliable(order, se, bias, bias_correction):
        return out
    n_min = min(n_p, n_q)
    if (order - 1) * se > MAX_LOG_SCALE_ERROR:
        # No sample size is promised here: the default floor shrinks with n, so the
        # standard error at a large order falls more slowly than 1/sqrt(n).
        why = (
            f"the delta method is unreliable at order {order:g} with n={n_min:,} "
            f"((order-1) x std.error = {(order - 1) * se:.2g} > {MAX_LOG_SCALE_ERROR:g})"
        )
    else:
        why = (
            f"eq. (16) without the bias correction is anti-conservative here (estimated bias "
            f"{bias / se:.2g} standard errors > {MAX_UNCORRECTED_BIAS:g})"
        )
    for smaller in fallback_orders(order):
        e2, se2, b2, l2 = plugin.bound(smaller, alpha, bias_correction)
        if is_reliable(smaller, se2, b2, bias_correction):
            out.update(
                lower=min(l2, estimate),
                reliable=False,
                bound_order=smaller,
                note=f"{why}; reported the bound at order {smaller:.4g}, which is also a bound at "
                f"order {order:g} because D_order is nondecreasing in the order",
            )
            return out
    out.update(
        lower=0.0,
        reliable=False,
        bound_order=None,
        note=f"{why}; no smaller order qualifies either, so only the trivial bound 0 is reported",
    )
    return out
