r"""The softmax floor of Kutta, Askin and Dunsche (2024), eq. (13), its derivative (17), and the default floor.

Step 2 of the pipeline in :mod:`renyi.audit`: the plug-in divides by :math:`\hat q`, so
:math:`\hat q` is floored smoothly at :math:`\tau` before it is used.  Taught in the chapter
*The floored softmax* (``book/part1``).
"""

from __future__ import annotations

import numpy as np
from scipy import special

from .._docs import fill
from .._validation import as_int, as_positive_scalar
from .density import KERNEL_ROUGHNESS

__all__ = [
    "softmax_floor",
    "softmax_derivative",
    "default_floor",
    "paper_floor",
    "FLOOR_RELATIVE_ERROR",
    "PAPER_FLOOR_EXPONENT",
]

#: The arguments of the softmax floor and of its derivative.
_FLOOR_INPUTS = r"""
t : array_like
    Density values :math:`\hat q`.
floor : float
    :math:`\tau>0`.
beta : float
    Softmax sharpness :math:`\beta>0`.

Returns
-------
ndarray
"""

#: Relative standard deviation of q_hat at the floor level, by kind of output (default tuning).
#: Chosen by simulation together with the second-order bias correction: lower floors make the
#: plug-in biased upwards where q_hat is noisy, higher floors make the bound loose.
FLOOR_RELATIVE_ERROR = {"continuous": 0.3, "discrete": 0.4}


@fill(floor_inputs=_FLOOR_INPUTS)
def softmax_floor(t, floor, beta):
    r"""Smooth floor :math:`t_\tau=\beta^{-1}\log(e^{\beta t}+e^{\beta\tau})` (eq. 13).

    Computed as :math:`\max(t,\tau)+\beta^{-1}\operatorname{log1p}(e^{-\beta|t-\tau|})`,
    which never overflows.  It satisfies
    :math:`\max(t,\tau)\le t_\tau\le\max(t,\tau)+\log 2/\beta`.

    Parameters
    ----------
    {{floor_inputs}}

    References
    ----------
    :cite:t:`kutta2024lower`, eq. (13).
    """
    floor, beta = _check_floor(floor, beta)
    t = np.asarray(t, dtype=float)
    return np.maximum(t, floor) + np.log1p(np.exp(-beta * np.abs(t - floor))) / beta


def _check_floor(floor, beta):
    """Tau >= 0 and beta > 0, finite: the parameters of eq. (13)."""
    return as_positive_scalar(floor, "floor", strict=False), as_positive_scalar(beta, "beta")


@fill(floor_inputs=_FLOOR_INPUTS)
def softmax_derivative(t, floor, beta):
    r""":math:`\pi(t)=\partial_t t_\tau=e^{\beta t}/(e^{\beta t}+e^{\beta\tau})` (eq. 17), a logistic function.

    Parameters
    ----------
    {{floor_inputs}}

    References
    ----------
    :cite:t:`kutta2024lower`, eq. (17).
    """
    floor, beta = _check_floor(floor, beta)
    return special.expit(beta * (np.asarray(t, dtype=float) - floor))


def default_floor(
    n: int, *, bandwidth: float | None = None, relative_error: float | None = None, kernel_factor: float | None = None
) -> float:
    r"""Default :math:`\tau`: the density level below which :math:`\hat q` is mostly noise.

    The estimator's variance blows up where :math:`\hat q` is small and noisy,
    and its bias :math:`D(p,q_\tau)-D(p,q)\le0` grows with :math:`\tau`.  We place
    :math:`\tau` where the *relative* standard deviation of :math:`\hat q` is
    ``relative_error`` (:math:`r`; default 0.4 for relative frequencies and
    0.3 for the KDE, see :data:`FLOOR_RELATIVE_ERROR`):

    * relative frequencies: :math:`\mathrm{sd}(\hat q(t))/q(t)\approx(nq)^{-1/2}`,
      so :math:`\tau=1/(nr^2)`;
    * Gaussian KDE: :math:`\mathrm{sd}(\hat q(t))/q(t)\approx(R(K)/(nhq))^{1/2}`
      with :math:`R(K)=1/(2\sqrt\pi)`, so :math:`\tau=R(K)/(nhr^2)`;
    * a product Gaussian kernel in :math:`d` dimensions: :math:`R(K)/h` becomes
      :math:`R(K_H)=\prod_k R(K)/h_k` (``kernel_factor``), so :math:`\tau=R(K_H)/(nr^2)`.

    **What this rule does, truthfully.**  Since :math:`\tau=R(K)/(nhr^2)`,
    :math:`nh\tau=R(K)/r^2\approx3.13` at every :math:`n`: the relative
    noise of :math:`\hat q` at the floor stays :math:`r` and does *not* vanish.
    This is not the regime of Theorem 1 of Kutta et al. (:math:`\tau\to0`
    with :math:`nh\tau\to\infty`, and their advice of :math:`\tau` "slightly
    larger than :math:`h`", see :func:`paper_floor`); the resulting Jensen
    bias of the plug-in is of the order of its standard error, and the
    second-order correction of :func:`~renyi.audit.rdp_lower_bound` removes it.  The
    validity of the defaults rests on the compendium's simulations (the
    Section IV reproduction and the order-range study in the chapter on the
    delta method), not on the paper's theorem.  :math:`r` itself was chosen
    by those simulations (the chapter on tuning shows the sensitivity).

    Parameters
    ----------
    n : int
        Samples per side (the smaller one).
    bandwidth : float, optional
        KDE bandwidth :math:`h`; ``None`` for discrete outputs.
    relative_error : float, optional
        The constant :math:`r`; default :data:`FLOOR_RELATIVE_ERROR`.
    kernel_factor : float, optional
        :math:`R(K_H)` of a multivariate kernel, in place of ``bandwidth``.

    Returns
    -------
    float
        :math:`\tau`.
    """
    n = as_int(n, "n")
    if bandwidth is not None and kernel_factor is not None:
        raise ValueError("pass bandwidth (one dimension) or kernel_factor (several), not both")
    continuous = bandwidth is not None or kernel_factor is not None
    if relative_error is None:
        relative_error = FLOOR_RELATIVE_ERROR["continuous" if continuous else "discrete"]
    r2 = as_positive_scalar(relative_error, "relative_error") ** 2
    if kernel_factor is not None:
        return as_positive_scalar(kernel_factor, "kernel_factor") / (n * r2)
    if bandwidth is None:
        return 1.0 / (n * r2)
    return KERNEL_ROUGHNESS / (n * as_positive_scalar(bandwidth, "bandwidth") * r2)


#: Exponent ratio b/a of the paper-regime floor: tau_std = h_std ** PAPER_FLOOR_EXPONENT.
PAPER_FLOOR_EXPONENT = 0.9


def paper_floor(bandwidth: float, scale: float) -> float:
    r"""A floor in the paper's regime: :math:`\tau` "slightly larger than :math:`h`".

    **Reconstruction.**  :math:`\tau` is a density level and :math:`h` a
    length, so "larger than" needs units: we read it in the units of the
    standardised outputs :math:`X/\hat s` (:math:`\hat s` the robust scale of
    :func:`~renyi.audit.bandwidth.robust_scale`), where the density level is
    :math:`\tau\hat s` and the bandwidth :math:`h/\hat s`.  With
    :math:`h\asymp n^{-a}` and :math:`\tau\asymp n^{-b}`, "slightly larger"
    is :math:`b` slightly below :math:`a`; the reconstructed conditions of
    Assumption 1 (KDE noise small against the floor, :math:`b<(1-a)/2`) hold
    for the default :math:`a=0.35` when :math:`b<0.325`.  We take
    :math:`b=0.9a=0.315`:

    .. math::

        \tau\hat s=(h/\hat s)^{0.9},\qquad nh\tau\asymp n^{1-a-b}\to\infty .

    Parameters
    ----------
    bandwidth : float
        :math:`h>0`.
    scale : float
        :math:`\hat s>0`, in the units of the outputs.

    Returns
    -------
    float
        :math:`\tau=(h/\hat s)^{0.9}/\hat s`.
    """
    h = as_positive_scalar(bandwidth, "bandwidth")
    s_hat = as_positive_scalar(scale, "scale")
    return (h / s_hat) ** PAPER_FLOOR_EXPONENT / s_hat
