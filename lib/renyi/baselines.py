r"""Estimators the floored softmax is compared with (Part I, chapter on tuning).

* :func:`naive_plugin` — :math:`D_\lambda(\hat p,\hat q)` with no floor;
* :func:`hard_floor_plugin` — :math:`D_\lambda(\hat p,\hat q\lor\tau)`, the floor
  of Askin, Kutta and Dette (2022), eq. (11);
* :func:`histogram_renyi` — fixed-bin histograms in the style of Gorla et al.
  (2022): relative frequencies of bins, and ``nan`` when some bin has
  :math:`\hat p>0=\hat q` (the estimate is undefined there).
"""

from __future__ import annotations

import math

import numpy as np

from ._validation import as_positive_scalar, as_rdp_order, as_real_array
from .divergence import log_integral

__all__ = ["naive_plugin", "hard_floor_plugin", "histogram_renyi"]


def naive_plugin(p_hat, q_hat, order, dx=1.0) -> float:
    r""":math:`D_\lambda(\hat p,\hat q)`; ``inf`` where :math:`\hat q=0<\hat p`.

    Parameters
    ----------
    p_hat, q_hat : array_like
    order : float
    dx : float, default 1

    Returns
    -------
    float
    """
    lam = as_rdp_order(order)
    p, q = np.asarray(p_hat, float), np.asarray(q_hat, float)
    if np.any((p > 0) & (q <= 0)):
        return math.inf
    on = p > 0
    return log_integral(lam * np.log(p[on]) + (1 - lam) * np.log(q[on]), dx) / (lam - 1)


def hard_floor_plugin(p_hat, q_hat, order, floor, dx=1.0) -> float:
    r""":math:`D_\lambda(\hat p,\max(\hat q,\tau))` (eq. 11 of Kutta et al.).

    Parameters
    ----------
    p_hat, q_hat : array_like
    order : float
    floor : float
        :math:`\tau>0`.
    dx : float, default 1

    Returns
    -------
    float
    """
    tau = as_positive_scalar(floor, "floor")
    return naive_plugin(p_hat, np.maximum(np.asarray(q_hat, float), tau), order, dx)


def histogram_renyi(samples_p, samples_q, order, bins: int = 50, range_=None) -> float:
    r"""Fixed-bin histogram plug-in; ``nan`` if a bin has :math:`\hat p>0` and :math:`\hat q=0`.

    Follows the histogram estimator of Gorla et al. (2022), which assumes
    densities bounded away from zero on a known interval.  Returning ``nan``
    (instead of ``inf``) marks the failure mode the floor was invented for.

    Parameters
    ----------
    samples_p, samples_q : array_like, 1-D
    order : float
    bins : int, default 50
    range_ : (float, float), optional
        Histogram range; default the range of both samples.

    Returns
    -------
    float
    """
    lam = as_rdp_order(order)
    a = as_real_array(samples_p, "samples_p", ndim=1)
    b = as_real_array(samples_q, "samples_q", ndim=1)
    if range_ is None:
        range_ = (min(a.min(), b.min()), max(a.max(), b.max()))
    p, edges = np.histogram(a, bins=bins, range=range_)
    q, _ = np.histogram(b, bins=edges)
    p, q = p / a.size, q / b.size
    if np.any((p > 0) & (q == 0)):
        return math.nan
    return naive_plugin(p, q, lam)
