r"""Closed-form and one-dimensional mechanisms: (22)–(23), Lemma 3, two scales, Proposition 4.

Taught in the chapters *The closed-form mechanism*, *Numerical examples* and
*General leakage matrices* (``book/part2``).
"""

from __future__ import annotations

import math

import numpy as np
from scipy import linalg
from scipy.special import logsumexp

from .._docs import fill
from ._numerics import LOG_BUDGET_MAX, ZERO_COMPONENT, bisect_feasible, power
from .certificate import certificate, epsilon_max
from .channels import LiftMechanism, build_mechanism
from .model import GeneralLeakageModel, LeakageModel, check_eps, check_order

__all__ = ["analytic_mechanism", "directional_mechanism", "asymmetric_mechanism", "null_space_mechanism"]

#: The Parameters and Returns of the invertible-model mechanisms.
_MODEL_EPS_ORDER = r"""
Parameters
----------
model : LeakageModel
eps : float
    Budget :math:`\epsilon\ge0`.
order : float
    :math:`\alpha>1`.

Returns
-------
LiftMechanism
    Exactly feasible; ``utility`` recomputed from the channel.
"""


@fill(model_eps_order=_MODEL_EPS_ORDER)
def analytic_mechanism(model: LeakageModel, eps, order) -> LiftMechanism:
    r"""The binary mechanism (22)–(23) with radius :math:`r_-` (Theorem 1).

    :math:`P_U=(\frac12,\frac12)`, :math:`P_{Y|U=u_{1,2}}=P_Y\pm r_-d^\star`; requires
    an admissible certificate.

    {{model_eps_order}}
    """
    cert = certificate(model, eps, order)
    if not cert.admissible:
        raise ValueError(
            f"eps = {cert.eps:g} is outside Theorem 1's range at order {cert.order:g}: "
            + "; ".join(cert.failing)
            + f" (epsilon_max = {epsilon_max(model, order):.6g})"
        )
    q = np.stack([model.p_y + cert.r_minus * model.d_star, model.p_y - cert.r_minus * model.d_star], axis=1)
    return build_mechanism(model, np.array([0.5, 0.5]), q, cert.eps, cert.order)


def _phi_along(model, sign, alpha, *, log=False):
    """T -> Phi_alpha(P_Y + sign t d*), or its log (for budgets e^(alpha eps) beyond a double)."""
    a_x = model.v_star / np.sqrt(model.p_x)

    def phi(t):
        with np.errstate(over="ignore"):  # at large orders Phi overflows to inf: infeasible
            return float(np.sum(model.p_x * power(np.maximum(1 + sign * t * a_x, 0.0), alpha)))

    def log_phi(t):
        with np.errstate(divide="ignore"):
            return float(logsumexp(np.log(model.p_x) + alpha * np.log(np.maximum(1 + sign * t * a_x, 0.0))))

    return log_phi if log else phi


def _largest_feasible(f, level, upper):
    """Max t in [0, upper] with f(t) <= level, f convex with f(0) = 1 <= level (bisection, feasible side)."""
    if f(upper) <= level:
        return upper
    return bisect_feasible(lambda t: f(t) <= level, 0.0, upper)


def _scales(model, eps, alpha):
    if not isinstance(model, LeakageModel):
        raise TypeError(
            f"model must be a LeakageModel (the mechanisms along v* need an invertible P_(X|Y)), "
            f"got {type(model).__name__}; for any other leakage matrix use global_optimum"
        )
    # Beyond LOG_BUDGET_MAX the budget e^(alpha eps) overflows: compare logs there.
    log = alpha * eps > LOG_BUDGET_MAX
    level = alpha * eps if log else math.exp(alpha * eps)
    d, p_y = model.d_star, model.p_y
    cap_plus = float(np.min(p_y[d < 0] / -d[d < 0])) if np.any(d < 0) else math.inf
    cap_minus = float(np.min(p_y[d > 0] / d[d > 0])) if np.any(d > 0) else math.inf
    cap_plus = min(cap_plus, 1 / model.kappa_star)
    cap_minus = min(cap_minus, 1 / model.kappa_star)
    t_plus = _largest_feasible(_phi_along(model, +1, alpha, log=log), level, cap_plus)
    t_minus = _largest_feasible(_phi_along(model, -1, alpha, log=log), level, cap_minus)
    return t_plus, t_minus


@fill(model_eps_order=_MODEL_EPS_ORDER)
def directional_mechanism(model: LeakageModel, eps, order) -> LiftMechanism:
    r"""Lemma 3: the exact one-dimensional search along :math:`\pm v^\star`.

    With :math:`F_s(r)=\sum_xP_X(x)(1+s\,r\,v^\star(x)/\sqrt{P_X(x)})^\alpha`,
    the common scale is
    :math:`t_\epsilon=\min\{r^\star_{\rm val},t_{+1},t_{-1}\}` where :math:`t_s`
    solves :math:`F_s(t)=e^{\alpha\epsilon}` (bisection on the convex
    :math:`F_s`, keeping the feasible end).  The mechanism (22)–(23) with
    :math:`r_-` replaced by :math:`t_\epsilon` satisfies the *unexpanded*
    constraint exactly and has utility :math:`t_\epsilon^2\sigma^2_{\max}(W)`.

    {{model_eps_order}}

    References
    ----------
    :cite:t:`zamani2026alphalift`, Lemma 3 and eqs. (22)-(23).

    Examples
    --------
    >>> from renyi.lift import EXAMPLES, directional_mechanism
    >>> mech = directional_mechanism(EXAMPLES["medical"], 0.02, 3)
    >>> mech.feasible, len(mech.p_u), f"{mech.utility:.5f}"
    (True, 2, '0.07532')
    """
    eps, alpha = check_eps(eps), check_order(order)
    t_plus, t_minus = _scales(model, eps, alpha)
    t = min(model.r_val, t_plus, t_minus)
    q = np.stack([model.p_y + t * model.d_star, model.p_y - t * model.d_star], axis=1)
    return build_mechanism(model, np.array([0.5, 0.5]), q, eps, alpha)


@fill(model_eps_order=_MODEL_EPS_ORDER)
def asymmetric_mechanism(model: LeakageModel, eps, order) -> LiftMechanism:
    r"""Two scales along :math:`\pm v^\star` with non-uniform :math:`P_U` (beyond the paper).

    :math:`q_1=P_Y+t_+d^\star`, :math:`q_2=P_Y-t_-d^\star`, each scale the
    largest that keeps its own posterior valid and within the exact
    constraint; :math:`P_U(u_1)=t_-/(t_++t_-)` keeps the barycentre at
    :math:`P_Y`.  The utility is :math:`t_+t_-\sigma^2_{\max}\ge t_\epsilon^2\sigma^2_{\max}`.

    {{model_eps_order}}
    """
    eps, alpha = check_eps(eps), check_order(order)
    t_plus, t_minus = _scales(model, eps, alpha)
    if t_plus + t_minus == 0:
        return build_mechanism(model, np.array([1.0]), model.p_y[:, None], eps, alpha)
    q = np.stack([model.p_y + t_plus * model.d_star, model.p_y - t_minus * model.d_star], axis=1)
    return build_mechanism(model, np.array([t_minus, t_plus]) / (t_plus + t_minus), q, eps, alpha)


def null_space_mechanism(model: GeneralLeakageModel) -> LiftMechanism:
    r"""Proposition 4: positive utility at :math:`\epsilon=0` when :math:`A` is not injective.

    With :math:`z` a unit vector of :math:`\operatorname{null}(A)` maximising
    :math:`\|D_Y^{-1/2}z\|`, the posteriors :math:`q_{1,2}=P_Y+t_1z,\;P_Y-t_2z`
    (largest steps keeping them valid) satisfy :math:`Aq_u=AP_Y=P_X`, so every
    output has lift exactly 1 (perfect privacy), while
    :math:`\chi^2(Y;U)=t_1t_2\|D_Y^{-1/2}z\|^2>0`.

    Parameters
    ----------
    model : GeneralLeakageModel
        With a non-trivial :math:`\operatorname{null}(A)`.

    Returns
    -------
    LiftMechanism
        Two outputs, every lift exactly 1.

    References
    ----------
    :cite:t:`zamani2026alphalift`, Proposition 4.
    """
    basis = linalg.null_space(model.A)
    if basis.shape[1] == 0:
        raise ValueError("null(A) is trivial: with an injective P_{X|Y} no utility is possible at eps = 0")
    m = basis.T @ np.diag(1 / model.p_y) @ basis
    w, v = np.linalg.eigh(m)
    z = basis @ v[:, -1]
    z /= np.linalg.norm(z)
    t1 = float(np.min(model.p_y[z < -ZERO_COMPONENT] / -z[z < -ZERO_COMPONENT]))
    t2 = float(np.min(model.p_y[z > ZERO_COMPONENT] / z[z > ZERO_COMPONENT]))
    q = np.stack([model.p_y + t1 * z, model.p_y - t2 * z], axis=1)
    return build_mechanism(model, np.array([t2, t1]) / (t1 + t2), q, 0.0, 2.0)
