r"""Bandwidth rules for the KDE of Part I, and the robust scale they share.

:func:`default_bandwidth` is the audit's default :math:`h`, an undersmoothed
normal-reference rule (the bias of the plug-in is of order :math:`h^{\min(s,2)}`, so
:math:`h` shrinks faster than the mean-square-optimal :math:`n^{-1/5}`).  Taught in the
chapter *Density estimation and smoothness* (``book/part1``).
"""

from __future__ import annotations

import numpy as np

from .._docs import fill
from .._validation import as_positive_scalar, as_real_array

__all__ = [
    "robust_scale",
    "silverman_bandwidth",
    "scott_bandwidth",
    "undersmoothed_bandwidth",
    "default_bandwidth",
    "bandwidth_from_scale",
]

#: The audit's rate a in h = c s n^(-a) (undersmoothing: a > 1/5, see undersmoothed_bandwidth).
DEFAULT_RATE = 0.35
#: The normal-reference constant c.
DEFAULT_CONSTANT = 1.06

#: A bandwidth rule's argument and result.
_SAMPLES_RULE = r"""
Parameters
----------
samples : array_like, 1-D

Returns
-------
float
"""


#: Most outputs the sample's spread is estimated from: the in-memory fit's strided subsample,
#: and the pilot of each sample drawn in tasks (:mod:`renyi.audit.parallel`).
SCALE_SAMPLE = 1 << 18


def strided_subsample(x: np.ndarray, limit: int = SCALE_SAMPLE) -> np.ndarray:
    """Every k-th output, so that at most about ``limit`` remain (all of them if fewer).

    The bandwidth rules and the grid's extent need the sample's spread, not every output:
    an evenly strided subsample keeps their cost flat in n and, unlike a random one, draws
    nothing from a generator.

    Parameters
    ----------
    x : ndarray, 1-D
    limit : int, default SCALE_SAMPLE (2**18)

    Returns
    -------
    ndarray
        A view of ``x`` (strided), between ``limit`` and ``2 * limit`` outputs long, or ``x``.
    """
    return x if x.size <= limit else x[:: x.size // limit]


@fill(samples_rule=_SAMPLES_RULE)
def robust_scale(samples) -> float:
    r""":math:`\min(\hat\sigma, \mathrm{IQR}/1.349)`, the scale used by normal-reference rules.

    {{samples_rule}}
    """
    x = as_real_array(samples, "samples", ndim=1)
    sd = float(np.std(x, ddof=1)) if x.size > 1 else 0.0
    q75, q25 = np.percentile(x, [75, 25])
    iqr = (q75 - q25) / 1.349
    scale = min(sd, iqr) if iqr > 0 else sd
    if not scale > 0:
        raise ValueError("samples have zero spread (all values equal); a density estimate needs spread")
    return scale


def _statsmodels_rule(samples, rule: str) -> float:
    x = as_real_array(samples, "samples", ndim=1)
    robust_scale(x)  # raises on zero spread
    # imported here: statsmodels is slow to import, and most audits never need it
    from statsmodels.nonparametric import bandwidths

    return float(getattr(bandwidths, rule)(x))


@fill(samples_rule=_SAMPLES_RULE)
def silverman_bandwidth(samples) -> float:
    r"""Silverman's rule :math:`0.9\,\min(\hat\sigma,\mathrm{IQR}/1.349)\,n^{-1/5}` (statsmodels).

    {{samples_rule}}
    """
    return _statsmodels_rule(samples, "bw_silverman")


@fill(samples_rule=_SAMPLES_RULE)
def scott_bandwidth(samples) -> float:
    r"""Scott's rule :math:`1.059\,\min(\hat\sigma,\mathrm{IQR}/1.349)\,n^{-1/5}` (statsmodels).

    {{samples_rule}}
    """
    return _statsmodels_rule(samples, "bw_scott")


def bandwidth_from_scale(scale, n, *, rate: float = DEFAULT_RATE, constant: float = DEFAULT_CONSTANT) -> float:
    r"""The rule :math:`h=c\,\hat s\,n^{-a}` of :func:`undersmoothed_bandwidth`, from a scale already computed.

    The one place the audit's bandwidth rule is written: the in-memory, streamed and
    task-merged fits compute :math:`\hat s` (:func:`robust_scale`) in their own way and
    call this.

    Parameters
    ----------
    scale : float
        :math:`\hat s > 0`.
    n : int
        The sample size (:math:`\min(n_p,n_q)` for two samples).
    rate, constant : float, default 0.35, 1.06
        :math:`a` and :math:`c`.

    Returns
    -------
    float

    Examples
    --------
    >>> from renyi.audit.bandwidth import bandwidth_from_scale
    >>> round(bandwidth_from_scale(1.0, 10**4), 4)  # 1.06 * 10^(-1.4) = 1.06 * 0.03981
    0.0422
    """
    return constant * scale * n ** (-rate)


def undersmoothed_bandwidth(samples, *, rate: float = DEFAULT_RATE, constant: float = DEFAULT_CONSTANT) -> float:
    r"""Undersmoothed bandwidth :math:`h=c\,\hat s\,n^{-a}` with :math:`a>1/5`.

    The MSE-optimal rate :math:`n^{-1/5}` leaves a bias of order
    :math:`h^{s}` that is not :math:`o(n^{-1/2})`.  For densities in the
    Nikol'ski class :math:`\mathcal N(s,L)` the bias vanishes against the
    :math:`\sqrt n` fluctuations when :math:`h=n^{-a}` with :math:`a>1/(2s)`.
    The default :math:`a=0.35` covers :math:`s=1.5` (the Laplace density, in
    the weak class; :math:`1/(2s)=1/3`) and every smoother density
    (Gaussian: any :math:`s`).  :math:`\hat s` is :func:`robust_scale`.

    Parameters
    ----------
    samples : array_like, 1-D
    rate : float, default 0.35
        The exponent :math:`a`, in (0, 1).
    constant : float, default 1.06
        The constant :math:`c` (1.06 is the normal-reference constant).

    Returns
    -------
    float
    """
    x = as_real_array(samples, "samples", ndim=1)
    rate = as_positive_scalar(rate, "rate")
    if rate >= 1:
        raise ValueError(f"rate must lie in (0, 1), got {rate!r}")
    return bandwidth_from_scale(robust_scale(x), x.size, rate=rate, constant=as_positive_scalar(constant, "constant"))


def default_bandwidth(samples_p, samples_q, *, rate: float = DEFAULT_RATE, constant: float = DEFAULT_CONSTANT) -> float:
    r"""The audit's default :math:`h`: :func:`undersmoothed_bandwidth` for two samples.

    Uses :math:`n=\min(n_p,n_q)` and the mean of the two robust scales
    (pooling the samples would inflate the scale by their location shift).
    Beyond :math:`2^{18}` points the scale is computed on an evenly strided
    subsample of :math:`2^{18}` points, which changes :math:`h` by about
    0.1 % and saves most of the cost of the quantiles.

    Parameters
    ----------
    samples_p, samples_q : array_like, 1-D
        The two samples (their robust scales are averaged).
    rate : float, default 0.35
        :math:`h\propto n^{-\text{rate}}`.
    constant : float, default 1.06

    Returns
    -------
    float
    """
    xp = as_real_array(samples_p, "samples_p", ndim=1)
    xq = as_real_array(samples_q, "samples_q", ndim=1)
    scale = 0.5 * (robust_scale(strided_subsample(xp)) + robust_scale(strided_subsample(xq)))
    return bandwidth_from_scale(
        scale, min(xp.size, xq.size), rate=rate, constant=as_positive_scalar(constant, "constant")
    )
