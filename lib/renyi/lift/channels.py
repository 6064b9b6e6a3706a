r"""Mechanisms as channels: :class:`LiftMechanism`, χ²-information, posteriors ↔ channel.

Orientation, stated once for the whole package: a channel is
**column-stochastic**, ``p_u_given_y[u, y]`` :math:`=P_{U|Y}(u|y)`, so each
column sums to one; posteriors are the columns ``p_y_given_u[:, u]``
:math:`=q_u=P_{Y|U=u}`, and :math:`P_{X|U=u}=Aq_u`.

Taught in the chapter *α-lift and χ²-information* (``book/part2``).
"""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal

import numpy as np

from .._docs import fill
from .._validation import as_pmf, as_rdp_order, as_real_array, as_real_scalar
from ..divergence import alpha_lift
from . import _exact
from ._numerics import FEASIBILITY_RTOL, LOG_BUDGET_MAX, ZERO_BUDGET_ATOL, ZERO_COMPONENT

#: A prior passed by the user must sum to 1 within this (it is renormalised).
PMF_TOL = 1e-9
#: The posteriors of a built mechanism are re-checked as pmfs within this.
PMF_TOL_RECHECK = 1e-8

__all__ = [
    "LiftMechanism",
    "chi2_information",
    "mutual_information",
    "channel_from_posteriors",
    "posteriors_from_channel",
    "budget_use",
    "from_channel",
]

#: The Parameters and Returns of the information measures of a channel and its prior.
_CHANNEL_PRIOR = r"""
Parameters
----------
p_u_given_y : array_like, shape (n_u, n_y)
    Column-stochastic channel.
p_y : array_like, shape (n_y,)
    Prior of :math:`Y`.

Returns
-------
float
"""


@dataclass(frozen=True)
class LiftMechanism:
    r"""A privacy mechanism :math:`P_{U|Y}` with its exact utility and leakage.

    Attributes
    ----------
    p_u : ndarray, shape (n_u,)
    p_u_given_y : ndarray, shape (n_u, n_y)
        Column-stochastic: column ``y`` is :math:`P_{U|Y=y}`.
    p_y_given_u : ndarray, shape (n_y, n_u)
        The posteriors :math:`q_u`.
    p_x_given_u : ndarray, shape (n_x, n_u)
        :math:`Aq_u`.
    utility : float
        :math:`\chi^2(Y;U)`, recomputed from ``p_u_given_y``.
    lifts : ndarray
        :math:`\mathcal L^\alpha(X\to u)` of each output, recomputed.
    eps, order : float
    feasible : bool
        Every output meets the budget, checked in decimal arithmetic: :math:`\Phi_\alpha(u)-1\le
        (e^{\alpha\epsilon}-1)(1+10^{-10})`, a tolerance relative to the budget (see
        :func:`from_channel`).
    """

    p_u: np.ndarray
    p_u_given_y: np.ndarray
    p_y_given_u: np.ndarray
    p_x_given_u: np.ndarray
    utility: float
    lifts: np.ndarray
    eps: float
    order: float
    feasible: bool


def _joint(p_u_given_y, p_y):
    """(P(u, y), P_U, P_Y) of a validated channel and prior."""
    ch = as_real_array(p_u_given_y, "p_u_given_y", ndim=2)
    p_y = as_pmf(p_y, "p_y", tol=PMF_TOL)
    if ch.shape[1] != p_y.size:
        raise ValueError(f"p_u_given_y has {ch.shape[1]} columns (values of Y) but p_y has {p_y.size} entries")
    sums = ch.sum(axis=0)
    if np.any(ch < 0) or np.any(np.abs(sums - 1) > PMF_TOL_RECHECK):
        worst = float(sums[np.argmax(np.abs(sums - 1))])
        raise ValueError(
            "p_u_given_y must be a column-stochastic channel (non-negative, each column P_(U|Y=y) "
            f"summing to 1); found a column summing to {worst:.12g} or a negative entry"
        )
    joint = ch * p_y[None, :]
    return joint, joint.sum(axis=1), p_y


@fill(channel_prior=_CHANNEL_PRIOR)
def chi2_information(p_u_given_y, p_y) -> float:
    r""":math:`\chi^2(Y;U)=\sum_{u,y}P(u,y)^2/(P_U(u)P_Y(y))-1` of a channel (rows u, columns y).

    {{channel_prior}}
    """
    joint, p_u, p_y = _joint(p_u_given_y, p_y)
    keep = p_u > 0
    return float(np.sum(joint[keep] ** 2 / (p_u[keep, None] * p_y[None, :])) - 1.0)


@fill(channel_prior=_CHANNEL_PRIOR)
def mutual_information(p_u_given_y, p_y) -> float:
    r""":math:`I(Y;U)=\sum_{u,y}P(u,y)\log\frac{P(u,y)}{P_U(u)P_Y(y)}` of a channel (rows u, columns y), in nats.

    Near independence :math:`I(Y;U)\approx\frac12\chi^2(Y;U)`, with the third-order bound
    shown in the chapter *α-lift and χ²-information*.

    {{channel_prior}}
    """
    joint, p_u, p_y = _joint(p_u_given_y, p_y)
    positive = joint > 0
    return float(np.sum(joint[positive] * np.log((joint / (p_u[:, None] * p_y[None, :]))[positive])))


def channel_from_posteriors(p_u, posteriors, p_y) -> np.ndarray:
    r""":math:`P_{U|Y}(u|y)=p_u\,q_u(y)/P_Y(y)` from weights and posteriors (columns of ``posteriors``).

    Parameters
    ----------
    p_u : array_like, shape (n_u,)
        Output probabilities :math:`P_U`.
    posteriors : array_like, shape (n_y, n_u)
        Posteriors :math:`q_u` as columns.
    p_y : array_like, shape (n_y,)
        Prior of :math:`Y` (the barycentre of the posteriors).

    Returns
    -------
    ndarray, shape (n_u, n_y)
        The column-stochastic channel :math:`P_{U|Y}`.
    """
    p_u = np.asarray(p_u, dtype=float)
    q = np.asarray(posteriors, dtype=float)
    return (p_u[None, :] * q / np.asarray(p_y, dtype=float)[:, None]).T


@fill(channel_prior=_CHANNEL_PRIOR)
def posteriors_from_channel(p_u_given_y, p_y):
    """Inverse of :func:`channel_from_posteriors`: returns ``(p_u, posteriors)``.

    Parameters
    ----------
    {{channel_prior}}

    Returns
    -------
    p_u : ndarray, shape (n_u,)
    posteriors : ndarray, shape (n_y, n_u)
    """
    joint = np.asarray(p_u_given_y, dtype=float) * np.asarray(p_y, dtype=float)[None, :]
    p_u = joint.sum(axis=1)
    return p_u, (joint / p_u[:, None]).T


def budget_use(model, p_u_given_y, eps, order) -> float:
    r"""The largest :math:`(\Phi_\alpha(u)-1)/(e^{\alpha\epsilon}-1)` of a channel, in decimal arithmetic.

    At most 1 exactly when every output meets the α-lift budget
    :math:`\mathcal L^\alpha(X\to u)\le e^\epsilon`, since
    :math:`(\mathcal L^\alpha)^\alpha=\Phi_\alpha`.  The channel's floats are taken as exact
    numbers and the check is carried out with enough digits to resolve the budget, so it
    holds at budgets far below double precision's round-off of :math:`\Phi_\alpha` itself
    (``renyi.lift._exact``).

    Parameters
    ----------
    model : LeakageModel or GeneralLeakageModel
    p_u_given_y : array_like, shape (n_u, n_y)
        Column-stochastic channel.
    eps : float
        :math:`\epsilon>0`.
    order : float
        :math:`\alpha>1`.

    Returns
    -------
    float
        Rounded up, so that a value :math:`\le1` proves feasibility.

    Examples
    --------
    A certified optimum meets the budget exactly; a mechanism designed by a bisection in
    double precision meets it to round-off (``feasible`` allows 1e-10 of the budget):

    >>> from renyi.lift import directional_mechanism, global_optimum
    >>> from renyi.lift.examples import MEDICAL
    >>> best = global_optimum(MEDICAL, 0.02, 3).p_u_given_y
    >>> budget_use(MEDICAL, best, 0.02, 3) <= 1
    True
    >>> designed = directional_mechanism(MEDICAL, 0.02, 3).p_u_given_y
    >>> abs(budget_use(MEDICAL, designed, 0.02, 3) - 1) < 1e-10
    True
    """
    eps = as_real_scalar(eps, "eps")
    if not eps > 0:
        raise ValueError(f"eps must be > 0 (the budget e^(order*eps) - 1 is the denominator), got {eps!r}")
    order = as_rdp_order(order)
    channel = as_real_array(p_u_given_y, "p_u_given_y", ndim=2)
    if order * eps > LOG_BUDGET_MAX:  # e^(order eps) is beyond any double: compare logs
        _, q = posteriors_from_channel(channel, model.p_y)
        p_x_given_u = model.A @ q
        lifts = alpha_lift(p_x_given_u / p_x_given_u.sum(axis=0), model.p_x, order, tol=PMF_TOL_RECHECK)
        return float(np.exp(order * (np.log(np.max(lifts)) - eps)))
    digits = _exact.digits_for(order, eps)
    excess = _exact.lift_excess(model.A, model.p_y, channel, order, digits)
    return -_exact.round_down(-max(excess) / _exact.budget(order, eps, digits))


def build_mechanism(model, p_u, q, eps, alpha) -> LiftMechanism:
    keep = p_u > ZERO_COMPONENT
    p_u, q = p_u[keep] / p_u[keep].sum(), q[:, keep]
    q = np.maximum(q, 0.0)
    q = q / q.sum(axis=0)
    channel = channel_from_posteriors(p_u, q, model.p_y)
    # The channel is the mechanism; everything reported is recomputed from it.
    return from_channel(model, channel / channel.sum(axis=0, keepdims=True), eps, alpha)


def from_channel(model, channel, eps, alpha) -> LiftMechanism:
    r"""The :class:`LiftMechanism` of a column-stochastic channel: everything recomputed from it.

    ``utility`` is the channel's χ²-information evaluated in decimal arithmetic (rounded down
    to a float), and ``feasible`` is decided there too: for :math:`\epsilon>0` every
    :math:`\Phi_\alpha(u)-1` is at most the budget :math:`e^{\alpha\epsilon}-1` times
    :math:`1+` ``FEASIBILITY_RTOL`` (a tolerance relative to the budget, so it means the same at
    every :math:`\epsilon`); at :math:`\epsilon=0` at most ``ZERO_BUDGET_ATOL``, the round-off
    of a posterior that moves in the null space of :math:`A` in double precision.

    Parameters
    ----------
    model : LeakageModel or GeneralLeakageModel
    channel : ndarray, shape (n_u, n_y)
    eps, alpha : float

    Returns
    -------
    LiftMechanism
    """
    p_u2, q2 = posteriors_from_channel(channel, model.p_y)
    p_x_given_u = model.A @ q2
    lifts = alpha_lift(p_x_given_u / p_x_given_u.sum(axis=0), model.p_x, alpha, tol=PMF_TOL_RECHECK)
    lifts = np.atleast_1d(lifts)
    digits = _exact.digits_for(alpha, eps)
    if alpha * eps > LOG_BUDGET_MAX:  # e^(alpha eps) is beyond any double: compare logs
        feasible = bool(np.all(np.log(lifts) <= eps * (1 + FEASIBILITY_RTOL)))
    else:
        excess = _exact.lift_excess(model.A, model.p_y, channel, alpha, digits)
        if eps > 0:
            allowed = _exact.budget(alpha, eps, digits) * (1 + Decimal(FEASIBILITY_RTOL))
        else:
            allowed = Decimal(ZERO_BUDGET_ATOL)
        feasible = bool(max(excess) <= allowed)
    return LiftMechanism(
        p_u=p_u2,
        p_u_given_y=channel,
        p_y_given_u=q2,
        p_x_given_u=p_x_given_u,
        utility=_exact.chi2(model.p_y, channel, digits),
        lifts=lifts,
        eps=eps,
        order=alpha,
        feasible=feasible,
    )
