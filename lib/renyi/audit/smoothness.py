r"""Nikol'ski smoothness, computed numerically (Definition 4 of Kutta et al., 2024).

A density :math:`f` is in the Nikol'ski class :math:`\mathcal N(s,L)` when its
derivative of order :math:`k=\lfloor s\rfloor` (the largest integer *strictly*
below :math:`s`) satisfies

.. math::

    \omega_k(u)=\Big(\int\big(f^{(k)}(t+u)-f^{(k)}(t)\big)^2dt\Big)^{1/2}\le L\,|u|^{s-k}

for all shifts :math:`u`; in the *weak* class, :math:`f^{(k)}` may be a weak
derivative.  On a log–log plot of :math:`\omega_k(u)` against :math:`u` the
slope at small :math:`u` is the Hölder exponent :math:`s-k`.  For the Laplace
density the weak derivative jumps at 0, which gives slope :math:`1/2` and
:math:`s=1.5`; the Gaussian's derivatives are all smooth, so the slope is 1
for every :math:`k` and any :math:`s` is reachable.
"""

from __future__ import annotations

import math

import numpy as np

from .._docs import fill
from .._validation import as_int, as_positive_scalar, as_real_array

__all__ = ["l2_modulus", "laplace_derivative", "gaussian_derivative", "holder_exponent", "laplace_modulus_closed_form"]

#: The arguments of the closed-form density derivatives.
_SCALE_ORDER = r"""
scale : float, default 1
    :math:`b>0`.
order : int, default 1
    Derivative order :math:`k\ge0`.

Returns
-------
callable
"""


def l2_modulus(func, shifts, *, lo: float, hi: float, kinks=()) -> np.ndarray:
    r""":math:`\omega(u)=\|g(\cdot+u)-g\|_{L^2}` of a function ``func`` on :math:`[lo, hi]`, per shift.

    Adaptive quadrature (``scipy.integrate.quad``) split at every point where
    ``func`` or its shift may jump (``kinks`` and ``kinks - u``), so jumps of a
    weak derivative are integrated exactly.  Choose :math:`[lo,hi]` so that
    ``func`` is negligible outside it.

    Parameters
    ----------
    func : callable
        Vectorised function of one variable.
    shifts : array_like
        Shifts :math:`u`.
    lo, hi : float
        Integration interval.
    kinks : sequence of float, optional
        Points where ``func`` is not smooth (split points for quadrature).

    Returns
    -------
    ndarray
    """
    from scipy import integrate

    u_all = as_real_array(shifts, "shifts", ndim=1)
    out = []
    for u in u_all:
        cuts = np.unique(
            np.clip(np.concatenate([[lo, hi], np.asarray(kinks, float), np.asarray(kinks, float) - u]), lo, hi)
        )
        f = lambda t, u=u: float((func(t + u) - func(t)) ** 2)
        total = sum(integrate.quad(f, a, b, limit=200, epsabs=0, epsrel=1e-10)[0] for a, b in zip(cuts[:-1], cuts[1:]))
        out.append(math.sqrt(total))
    return np.array(out)


@fill(scale_order=_SCALE_ORDER)
def laplace_derivative(scale: float = 1.0, order: int = 1):
    r"""(Weak) derivative of the Laplace density :math:`\frac{1}{2b}e^{-|t|/b}`.

    ``order=0`` is the density; ``order=1`` the weak derivative
    :math:`-\operatorname{sgn}(t)e^{-|t|/b}/(2b^2)` (it jumps by :math:`1/b^2` at 0).

    Parameters
    ----------
    {{scale_order}}
    """
    b = as_positive_scalar(scale, "scale")
    if order == 0:
        return lambda t: np.exp(-np.abs(t) / b) / (2 * b)
    if order == 1:
        return lambda t: -np.sign(t) * np.exp(-np.abs(t) / b) / (2 * b * b)
    raise ValueError("order must be 0 or 1 (higher weak derivatives of the Laplace density are not functions)")


@fill(scale_order=_SCALE_ORDER)
def gaussian_derivative(scale: float = 1.0, order: int = 1):
    r""":math:`k`-th derivative of the :math:`\mathcal N(0,b^2)` density, via Hermite polynomials.

    Parameters
    ----------
    {{scale_order}}
    """
    from numpy.polynomial.hermite_e import hermeval

    b = as_positive_scalar(scale, "scale")
    order = as_int(order, "order", minimum=0)
    coef = np.zeros(order + 1)
    coef[-1] = 1.0
    # d^k/dt^k phi(t/b)/b = (-1)^k He_k(t/b) phi(t/b) / b^{k+1}
    return lambda t: (
        (-1) ** order
        * hermeval(t / b, coef)
        * np.exp(-0.5 * (t / b) ** 2)
        / (math.sqrt(2 * math.pi) * b ** (order + 1))
    )


def laplace_modulus_closed_form(shifts, scale: float = 1.0) -> np.ndarray:
    r"""Exact :math:`\omega_1(u)` of the Laplace weak derivative.

    Our derivation (Appendix A-B of the paper was not recovered):

    .. math::

        \omega_1(u)^2=\frac{1-e^{-u/b}}{2b^3}+\frac{u\,e^{-u/b}}{2b^4}\le\frac{u}{b^4}.

    Parameters
    ----------
    shifts : array_like
    scale : float, default 1

    Returns
    -------
    ndarray
    """
    u = np.abs(as_real_array(shifts, "shifts", ndim=1))
    b = as_positive_scalar(scale, "scale")
    return np.sqrt(-np.expm1(-u / b) / (2 * b**3) + u * np.exp(-u / b) / (2 * b**4))


def holder_exponent(shifts, modulus) -> float:
    """Least-squares slope of log(modulus) against log(shift): the Hölder exponent s - floor(s).

    Parameters
    ----------
    shifts, modulus : array_like
        Shifts and the modulus at them (positive).

    Returns
    -------
    float
    """
    u = as_real_array(shifts, "shifts", ndim=1)
    w = as_real_array(modulus, "modulus", ndim=1)
    if u.size != w.size or u.size < 2 or np.any(u <= 0) or np.any(w <= 0):
        raise ValueError("shifts and modulus must be positive arrays of the same length (>= 2)")
    return float(np.polyfit(np.log(u), np.log(w), 1)[0])
