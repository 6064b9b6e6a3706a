r"""The vector-outputs study: mechanisms with outputs in :math:`\mathbb R^d`, and the rows of one replicate.

Five laws, each a mechanism on a pair of adjacent databases whose exact :math:`D_\lambda` is
known in closed form:

``gaussian``
    :math:`N(\Delta,\sigma^2I)` against :math:`N(0,\sigma^2I)`, :math:`\sigma^2=10`,
    :math:`\Delta=e_1`: :math:`D_\lambda=\lambda\|\Delta\|^2/(2\sigma^2)` (0.1 at order 2).
``gaussian_correlated``
    The same with noise :math:`N(0,\sigma^2C)`, :math:`C_{ij}=0.9^{|i-j|}`, bounded through the
    whitened projection: :math:`D_\lambda=\tfrac\lambda2\Delta^\top(\sigma^2C)^{-1}\Delta`.
``product_laplace``
    Independent Laplace noise of scale :math:`\sqrt5` (variance 10) per coordinate, shift
    :math:`e_1`: the one-dimensional Laplace divergence.
``clipped_mean``
    Gaussian noise (:math:`\sigma^2=0.1`) on the mean of 100 records of :math:`d` features
    clipped to :math:`[0,1]`, one record all ones in :math:`x` and all zeros in :math:`x'`:
    a dense shift :math:`\Delta=\mathbf 1/100`.
``laplace_diagonal``
    Product Laplace noise as above, shifted by 1 in *every* coordinate: :math:`d` times the
    one-dimensional divergence, which no single direction carries.
``spread``
    :math:`N(0,1.2^2I)` against :math:`N(0,I)`: the laws differ in spread, not in mean;
    :math:`d` times the one-dimensional Gaussian divergence (finite for
    :math:`\lambda<1.2^2/(1.2^2-1)\approx3.27`).
``correlation_sign``
    :math:`d=2`: unit Gaussian noise of correlation :math:`+0.3` against :math:`-0.3`, equal
    means and variances: only the joint law differs.  With :math:`\Sigma_\lambda=
    \lambda\Sigma_Q+(1-\lambda)\Sigma_P`, :math:`D_\lambda=-\log(|\Sigma_\lambda|/
    (|\Sigma_P|^{1-\lambda}|\Sigma_Q|^{\lambda}))/(2(\lambda-1))` (finite while
    :math:`\Sigma_\lambda` is positive definite: :math:`\lambda<(1+1/0.3)/2\approx2.17`).

A case (:data:`CASES`) is a law and a route: the projection learned on half of each sample (the
library's default), the whitened one, the one chosen on held-out outputs (cases ``*_auto``,
``projection="auto"``; ``*_md``: the mean difference where the law's default is another),
``"grid"`` (cases ``*_kde``, :math:`d\le3`): no
projection, the density on a grid, or ``"sufficient"`` (cases ``*_sufficient``): the default
route drawn from its sufficient statistics (:mod:`~renyi.sweeps.vector_sufficient`), the same law
of the bound at :math:`O(n+d)` cost for Gaussian laws and with half the draws for product Laplace.
Every other case draws both samples in full.  Each replicate records the bound at every order
beside the truth.  The studies are
:data:`~renyi.sweeps.definitions.SWEEPS` ``["vectors"]``, ``["vectors_1e6"]`` and
``["vectors_kde"]``, ``["vectors_auto"]``; taught in the chapter *Vector-valued outputs* (``book/part1``).
"""

from __future__ import annotations

import math

import numpy as np

from ..audit import rdp_lower_bound
from ..closed_forms import gaussian_renyi, laplace_renyi
from .vector_sufficient import sufficient_bounds

__all__ = ["CASES", "truth", "vector_rows"]

SIGMA2 = 10.0
RHO = 0.9
LAPLACE_SCALE = math.sqrt(5.0)
RECORDS = 100
CLIPPED_SIGMA2 = 0.1
SPREAD = 1.2
SIGN_CORRELATION = 0.3

#: Each case: the law of its outputs and the route to one dimension (``"grid"``: none, the grid).
CASES = {
    "gaussian": ("gaussian", "mean-difference"),
    "gaussian_correlated": ("gaussian_correlated", "whitened"),
    "product_laplace": ("product_laplace", "mean-difference"),
    "clipped_mean": ("clipped_mean", "mean-difference"),
    "laplace_diagonal": ("laplace_diagonal", "mean-difference"),
    "gaussian_correlated_md": ("gaussian_correlated", "mean-difference"),
    "gaussian_correlated_auto": ("gaussian_correlated", "auto"),
    "product_laplace_auto": ("product_laplace", "auto"),
    "spread": ("spread", "mean-difference"),
    "spread_auto": ("spread", "auto"),
    "correlation_sign_auto": ("correlation_sign", "auto"),
    "gaussian_kde": ("gaussian", "grid"),
    "laplace_diagonal_kde": ("laplace_diagonal", "grid"),
    "gaussian_sufficient": ("gaussian", "sufficient"),
    "clipped_mean_sufficient": ("clipped_mean", "sufficient"),
    "product_laplace_sufficient": ("product_laplace", "sufficient"),
}


def _correlation(d):
    idx = np.arange(d)
    return RHO ** np.abs(np.subtract.outer(idx, idx))


def _shift(law, d):
    if law == "clipped_mean":
        return np.full(d, 1.0 / RECORDS)
    if law == "laplace_diagonal":
        return np.ones(d)
    shift = np.zeros(d)
    shift[0] = 1.0
    return shift


def truth(case: str, d: int, order: float) -> float:
    r"""The exact :math:`D_\lambda(P\|Q)` of a case in dimension ``d``.

    Parameters
    ----------
    case : str
        A key of :data:`CASES`.
    d : int
    order : float

    Returns
    -------
    float
    """
    law = CASES[case][0]
    if law == "spread":
        return d * gaussian_renyi(0.0, SPREAD, 0.0, 1.0, order)
    if law == "correlation_sign":
        cov_p, cov_q = _sign_covariances()
        mixed = order * cov_q + (1 - order) * cov_p
        sign, log_mixed = np.linalg.slogdet(mixed)
        if sign <= 0 or np.any(np.linalg.eigvalsh(mixed) <= 0):  # the integral diverges
            return math.inf
        log_ratio = log_mixed - (1 - order) * np.linalg.slogdet(cov_p)[1]
        return float(-(log_ratio - order * np.linalg.slogdet(cov_q)[1]) / (2 * (order - 1)))
    shift = _shift(law, d)
    if law in ("product_laplace", "laplace_diagonal"):
        # independent coordinates: the divergence is the sum over the shifted ones
        return float(np.count_nonzero(shift)) * laplace_renyi(1.0, 0.0, LAPLACE_SCALE, order)
    if law == "gaussian_correlated":
        return order / 2 * float(shift @ np.linalg.solve(SIGMA2 * _correlation(d), shift))
    variance = CLIPPED_SIGMA2 if law == "clipped_mean" else SIGMA2
    return order * float(shift @ shift) / (2 * variance)


def _centre(law, d, shifted):
    """The centre of a law's outputs and its noise scale (not ``gaussian_correlated``)."""
    if law == "clipped_mean":
        # the clipped mean of the database (records in [0, 1]^d), then the noise
        records = np.clip(np.random.default_rng(d).normal(0.5, 0.3, (RECORDS, d)), 0.0, 1.0)
        records[0] = 1.0 if shifted else 0.0
        return records.mean(axis=0), math.sqrt(CLIPPED_SIGMA2)
    scale = LAPLACE_SCALE if law in ("product_laplace", "laplace_diagonal") else math.sqrt(SIGMA2)
    return (_shift(law, d) if shifted else np.zeros(d)), scale


def _sign_covariances():
    """Unit variances, correlation +SIGN_CORRELATION (P) and its negative (Q)."""
    return tuple(np.array([[1.0, r], [r, 1.0]]) for r in (SIGN_CORRELATION, -SIGN_CORRELATION))


def _draw(law, d, n, rng, shifted):
    if law == "correlation_sign":
        cov = _sign_covariances()[0 if shifted else 1]
        return rng.normal(size=(n, 2)) @ np.linalg.cholesky(cov).T
    if law == "spread":
        return rng.normal(0.0, SPREAD if shifted else 1.0, (n, d))
    if law in ("product_laplace", "laplace_diagonal"):
        out = rng.laplace(0.0, LAPLACE_SCALE, (n, d))
    elif law == "gaussian_correlated":
        out = rng.normal(0.0, math.sqrt(SIGMA2), (n, d)) @ np.linalg.cholesky(_correlation(d)).T
    else:
        centre, sigma = _centre(law, d, shifted)
        return rng.normal(0.0, sigma, (n, d)) + centre
    if shifted:
        out += _shift(law, d)
    return out


def vector_rows(base: dict, case: str, d: int, n: int, orders, stream: np.random.Generator) -> list[dict]:
    """One replicate of the study: the projected bound at every order, beside the truth.

    Parameters
    ----------
    base : dict
        The row's identity (``mechanism``, ``n``, ``replicate``).
    case : str
        A key of :data:`CASES`.
    d : int
        The outputs' dimension.
    n : int
        Outputs per side.
    orders : sequence of float
    stream : numpy.random.Generator
        The replicate's stream: the two samples and the held-out draw.

    Returns
    -------
    list of dict
    """
    law, route = CASES[case]
    if route == "sufficient":
        (centre_p, sigma), (centre_q, _) = _centre(law, d, True), _centre(law, d, False)
        noise = "laplace" if law == "product_laplace" else "gaussian"
        bounds = sufficient_bounds(centre_p, centre_q, sigma, n, orders, stream, noise=noise)
    else:
        rng_p, rng_q, rng_split = stream.spawn(3)
        p, q = _draw(law, d, n, rng_p, True), _draw(law, d, n, rng_q, False)
        bounds = rdp_lower_bound(p, q, orders, projection=route, rng=None if route == "grid" else rng_split)
    record = bounds[0].projection
    return [
        base
        | {
            "dimension": d,
            "order": b.order,
            "target": truth(case, d, b.order),
            "lower": b.lower,
            "estimate": b.estimate,
            "std_error": b.std_error,
            "direction": b.direction,
            "signal_share": record["signal_share"],
            "kind": record["kind"],
            "divergence_share": record.get("divergence_share"),
        }
        for b in bounds
    ]
