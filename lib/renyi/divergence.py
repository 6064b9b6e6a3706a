r"""Rényi divergence, χ²-divergence and α-lift, computed stably.

This module is the common ground of both parts of the compendium.

* :func:`renyi_divergence` — :math:`D_\lambda(p\|q)` for discrete pmfs or for
  densities sampled on an equispaced grid, for every order
  :math:`\lambda\in(0,\infty]` (the KL limit at :math:`\lambda=1` and the
  max-divergence at :math:`\lambda=\infty` included).
* :func:`chi_square_divergence` — Pearson's :math:`\chi^2(p\|q)`.
* closed forms (Gaussian, Laplace) and quadrature are in :mod:`renyi.closed_forms`.
* :func:`alpha_lift`, :func:`renyi_from_lift` — the α-lift of Part II and its
  exact link to Rényi divergence.

Definitions (Kutta et al. 2024, Def. 2; Mironov 2017, Def. 3), for
:math:`\lambda\in(0,1)\cup(1,\infty)`:

.. math::

    D_\lambda(p\|q) = \frac{1}{\lambda-1}\log\int p(t)^\lambda q(t)^{1-\lambda}\,dt,

:math:`D_1 = \int p\log(p/q)` (Kullback–Leibler) and
:math:`D_\infty=\log\operatorname{ess\,sup}_{p>0} p/q`.

All integrals are evaluated in log space: the integrand is
:math:`\exp(\lambda\log p + (1-\lambda)\log q)` accumulated with
``logsumexp``, so orders up to several hundred neither overflow nor underflow.
"""

from __future__ import annotations

import math
import warnings

import numpy as np
from scipy.special import logsumexp

from ._validation import as_order, as_pmf, as_positive_scalar

__all__ = [
    "InfiniteDivergenceWarning",
    "renyi_divergence",
    "chi_square_divergence",
    "alpha_lift",
    "renyi_from_lift",
    "log_integral",
]


class InfiniteDivergenceWarning(RuntimeWarning):
    """Emitted when a divergence is +inf because the supports are not nested.

    The value returned is ``math.inf``; the warning says *why*, e.g. that
    ``p`` puts mass where ``q`` is zero.  Silence it with
    ``warnings.simplefilter("ignore", InfiniteDivergenceWarning)`` once the
    reason is understood.
    """


def _safe_log(x: np.ndarray) -> np.ndarray:
    with np.errstate(divide="ignore"):
        return np.log(x)


def log_integral(log_f: np.ndarray, dx: float | None = None) -> float:
    r"""``log(sum(exp(log_f)) * dx)`` computed without overflow.

    This is the single quadrature rule of the library: a Riemann sum on an
    equispaced grid (exact for pmfs, and spectrally accurate for smooth
    densities that vanish at the grid ends).  ``-inf`` entries are zeros.

    Parameters
    ----------
    log_f : ndarray
        Logs of the integrand on the grid (``-inf`` for zeros).
    dx : float, optional
        Grid spacing; ``None`` for a sum (pmfs).

    Returns
    -------
    float
    """
    log_f = np.asarray(log_f, dtype=float)
    # The max-shift by hand rather than scipy's logsumexp: the delta method calls this
    # four times per order and tuning, where scipy's argument handling dominated.
    top = float(np.max(log_f)) if log_f.size else -math.inf
    if top == -math.inf:
        return -math.inf
    if math.isnan(top) or top == math.inf:
        raise ValueError(f"log_f contains {'NaN' if math.isnan(top) else '+inf'}; the integrand must be finite")
    out = top + math.log(float(np.sum(np.exp(log_f - top))))
    return out if dx is None else out + math.log(dx)


def _support_mismatch(p: np.ndarray, q: np.ndarray) -> np.ndarray:
    return (p > 0) & (q == 0)


def renyi_divergence(p, q, order, dx=None, *, tol: float = 1e-6) -> float:
    r"""Rényi divergence :math:`D_\lambda(p\|q)` of order ``order``.

    Parameters
    ----------
    p, q : array_like
        Two pmfs of the same shape (``dx=None``), or two densities sampled on
        the same equispaced grid with spacing ``dx``.  Each must be
        non-negative, finite, and have total mass 1 within ``tol`` (the sum,
        or the Riemann sum ``sum(p) * dx``).
    order : float
        :math:`\lambda\in(0,\infty]`.  ``1`` gives the Kullback–Leibler
        divergence and ``numpy.inf`` the max-divergence
        :math:`D_\infty(p\|q)=\log\max_{p>0}p/q`.
    dx : float, optional
        Grid spacing for densities; ``None`` for pmfs.
    tol : float, default 1e-6
        Tolerance of the normalisation check.

    Returns
    -------
    float
        The divergence in nats.  It is ``+inf`` when ``p`` puts mass where
        ``q`` vanishes and :math:`\lambda\ge1` (or the supports are disjoint
        and :math:`\lambda<1`); an :class:`InfiniteDivergenceWarning` then
        states the reason.

    Notes
    -----
    For :math:`\lambda\ne1,\infty`,

    .. math::

        D_\lambda(p\|q)=\frac{1}{\lambda-1}\log\sum_t p(t)^\lambda q(t)^{1-\lambda}\,\Delta,

    with :math:`\Delta` = ``dx`` (or 1), as in Definition 2 of Kutta, Askin
    and Dunsche (2024) and Definition 3 of Mironov (2017).  The sum is
    formed in log space.  :math:`D_\lambda` is non-decreasing in
    :math:`\lambda` (van Erven and Harremoës, 2014, Thm. 3).

    Examples
    --------
    >>> from renyi.divergence import renyi_divergence
    >>> round(renyi_divergence([0.5, 0.5], [0.9, 0.1], 2), 6)
    1.021651
    """
    order = as_order(order, "order")
    if dx is not None:
        dx = as_positive_scalar(dx, "dx")
    tol = as_positive_scalar(tol, "tol")
    p = as_pmf(p, "p", dx=dx, tol=tol, tol_option="tol")
    q = as_pmf(q, "q", dx=dx, tol=tol, tol_option="tol")
    if p.shape != q.shape:
        raise ValueError(f"p and q must have the same shape, got {p.shape} and {q.shape}")

    mismatch = _support_mismatch(p, q)
    if order >= 1 and np.any(mismatch):
        mass = float(p[mismatch].sum() * (1.0 if dx is None else dx))
        warnings.warn(
            f"D_{order:g}(p||q) = +inf: p puts mass {mass:.3g} where q = 0 "
            f"({int(mismatch.sum())} point(s)); the supports are not nested",
            InfiniteDivergenceWarning,
            stacklevel=2,
        )
        return math.inf

    log_p, log_q = _safe_log(p), _safe_log(q)
    on = p > 0
    if order == 1.0:
        # KL: sum p log(p/q) over p > 0 (q > 0 there, checked above).
        val = float(np.sum(p[on] * (log_p[on] - log_q[on])) * (1.0 if dx is None else dx))
        return max(val, 0.0)
    if math.isinf(order):
        return max(float(np.max(log_p[on] - log_q[on])), 0.0)

    both = on & (q > 0)
    if not np.any(both):
        warnings.warn(
            f"D_{order:g}(p||q) = +inf: p and q have disjoint supports", InfiniteDivergenceWarning, stacklevel=2
        )
        return math.inf
    if abs(order - 1.0) < 0.5:
        # Near lambda = 1 the generic formula loses ~eps/|lambda-1| to cancellation.
        # Write sum p^l q^(1-l) = M + sum p*expm1((l-1) log(p/q)), M = mass of p on both.
        # Dividing by the total mass of p (Renyi's definition for incomplete
        # distributions) keeps p == q at exactly 0 despite 1e-16 normalisation error.
        w = 1.0 if dx is None else dx
        pb = p[both]
        total = math.fsum(p.ravel() * w)
        excess = (
            math.fsum(pb * w * np.expm1((order - 1.0) * (log_p[both] - log_q[both]))) - math.fsum(p[on & ~both] * w)
        ) / total
        val = math.log1p(excess) / (order - 1.0) if excess > -1 else math.inf
    else:
        log_f = order * log_p[both] + (1.0 - order) * log_q[both]
        val = log_integral(log_f, dx) / (order - 1.0)
    # Round-off can push an exact 0 (p == q) to -1e-17; D >= 0 always.
    return max(val, 0.0)


def chi_square_divergence(p, q, dx=None, *, tol: float = 1e-6) -> float:
    r"""Pearson χ²-divergence :math:`\chi^2(p\|q)=\sum_t p(t)^2/q(t)\,\Delta-1`.

    It equals :math:`\exp(D_2(p\|q))-1`, the identity that ties the
    χ²-utility of Part II to Rényi divergence of order 2.

    Parameters
    ----------
    p, q, dx, tol
        As in :func:`renyi_divergence`.

    Returns
    -------
    float
        ``+inf`` (with a warning) when ``p`` has mass where ``q`` is zero.
    """
    d2 = renyi_divergence(p, q, 2.0, dx, tol=tol)
    return math.inf if math.isinf(d2) else math.expm1(d2)


def _as_prior_and_posteriors(p_x_given_u, p_x, tol):
    p_x = as_pmf(p_x, "p_x", tol=tol, tol_option="tol")
    if np.any(p_x == 0):
        raise ValueError("p_x must be strictly positive (the lift P_{X|U}/P_X divides by it)")
    post = as_pmf(p_x_given_u, "p_x_given_u", tol=tol, ndim=(1, 2), tol_option="tol")
    if post.shape[0] != p_x.shape[0]:
        raise ValueError(f"p_x_given_u must have {p_x.shape[0]} rows (one per x), got shape {post.shape}")
    sums = post.sum(axis=0)
    if np.any(np.abs(sums - 1) > tol):
        worst = float(sums.flat[np.argmax(np.abs(sums - 1))])
        raise ValueError(f"each column of p_x_given_u must sum to 1, found a column summing to {worst:.10g}")
    return post, p_x


def alpha_lift(p_x_given_u, p_x, order, *, tol: float = 1e-9):
    r"""α-lift :math:`\mathcal L^\alpha(X\to u)` of one or several outputs ``u``.

    Eq. (1) of Zamani et al. (2026), following Zarrabian and Sadeghi (2024):

    .. math::

        \mathcal L^{\alpha}(X\to u)=\Big(\sum_{x}P_X(x)
        \Big(\frac{P_{X|U}(x|u)}{P_X(x)}\Big)^{\alpha}\Big)^{1/\alpha},
        \qquad\alpha\in(1,\infty],

    with the max-lift :math:`\max_x P_{X|U}(x|u)/P_X(x)` at
    :math:`\alpha=\infty`.

    Parameters
    ----------
    p_x_given_u : array_like, shape (n_x,) or (n_x, n_u)
        One posterior :math:`P_{X|U=u}`, or one posterior per column.
    p_x : array_like, shape (n_x,)
        The prior, strictly positive.
    order : float
        :math:`\alpha>1`, possibly ``inf``.
    tol : float, default 1e-9
        Normalisation tolerance of the inputs.

    Returns
    -------
    float or ndarray
        The lift of each column (a float for a 1-D posterior).  It is
        :math:`\ge1`, with equality iff the posterior equals the prior.

    See Also
    --------
    renyi_from_lift : :math:`D_\alpha(P_{X|U=u}\|P_X)=\frac{\alpha}{\alpha-1}\log\mathcal L^\alpha`.
    """
    alpha = as_order(order, "order", minimum=1.0)
    post, p_x = _as_prior_and_posteriors(p_x_given_u, p_x, tol)
    one_d = post.ndim == 1
    post2 = post[:, None] if one_d else post
    log_ratio = _safe_log(post2) - np.log(p_x)[:, None]
    if math.isinf(alpha):
        out = np.exp(np.max(log_ratio, axis=0))
    else:
        with np.errstate(invalid="ignore"):
            terms = np.log(p_x)[:, None] + alpha * log_ratio
        out = np.exp(logsumexp(terms, axis=0) / alpha)
    return float(out[0]) if one_d else out


def renyi_from_lift(lift, order):
    r"""Convert an α-lift into :math:`D_\alpha(P_{X|U=u}\|P_X)` (Remark 2 of Zamani et al.).

    .. math::

        D_\alpha(P_{X|U=u}\|P_X)=\frac{\alpha}{\alpha-1}\log\mathcal L^\alpha(X\to u),

    because :math:`(\mathcal L^\alpha)^\alpha=\sum_x P_{X|U}^\alpha P_X^{1-\alpha}`.
    At :math:`\alpha=\infty` it is :math:`\log` of the max-lift.  Hence the
    constraint :math:`\mathcal L^\alpha\le e^\epsilon` is equivalent to
    :math:`D_\alpha\le\alpha\epsilon/(\alpha-1)`.

    Parameters
    ----------
    lift : float or array_like
        α-lift values :math:`\mathcal L^\alpha(X\to u)>0`.
    order : float
        :math:`\alpha>1`.

    Returns
    -------
    float or ndarray
        :math:`\frac{\alpha}{\alpha-1}\log\mathcal L^\alpha`.
    """
    alpha = as_order(order, "order", minimum=1.0)
    arr = np.asarray(lift, dtype=float)
    if not np.all(np.isfinite(arr)) or np.any(arr < 1 - 1e-12):
        raise ValueError("lift must be finite and >= 1 (an α-lift is never below 1)")
    logs = np.log(np.maximum(arr, 1.0))
    out = logs if math.isinf(alpha) else alpha / (alpha - 1) * logs
    return float(out) if out.ndim == 0 else out
