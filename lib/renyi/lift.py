r"""Mechanism design under a bounded α-lift with χ²-utility (Zamani, Zarrabian, Sadeghi, Skoglund, 2026).

Private :math:`X` and useful :math:`Y` have a joint law with column-stochastic
leakage matrix :math:`A=P_{X|Y}`; a channel :math:`P_{U|Y}` releases :math:`U`
(so :math:`X-Y-U`).  The design problem (3) is

.. math::

    V_{\chi^2}(\epsilon,\alpha)=\sup_{P_{U|Y}}\ \chi^2(Y;U)
    \quad\text{s.t.}\quad \mathcal L^\alpha(X\to u)\le e^\epsilon\ \ \forall u .

This module provides

* :class:`LeakageModel` — :math:`P_X`, :math:`A`, :math:`P_Y=A^{-1}P_X`,
  :math:`W=D_Y^{-1/2}A^{-1}D_X^{1/2}`, :math:`\sigma_{\max}`, :math:`v^\star`
  (Lemma 2), :math:`\kappa_\star`, :math:`d^\star`, :math:`r^\star_Y`, :math:`r^\star_{\rm val}`;
  :class:`GeneralLeakageModel` for singular or non-square :math:`A`;
* :func:`certificate` — the radii and bounds of Theorem 1 with the
  admissibility conditions (32)/(34) at the selected :math:`\rho_\epsilon`
  (Proposition 3); :func:`epsilon_max`, :func:`renyi_budget_max`;
* mechanisms: :func:`analytic_mechanism` (22)–(23), :func:`directional_mechanism`
  (Lemma 3), :func:`asymmetric_mechanism` (not in the paper),
  :func:`global_optimum` (Theorem 2, computed), :func:`null_space_mechanism`
  (Proposition 4).

Reconstructions
---------------
The seed text lacks several statements; these are our reconstructions, each
consistent with every recovered fragment (see the Part II chapters):

* :math:`\bar\delta_\epsilon=\sqrt{(e^{\alpha\epsilon/(\alpha-1)}-1)/\min_xP_X(x)}`
  for :math:`\alpha\ge2` (reproduces the paper's 0.3902); for
  :math:`1<\alpha<2` the formula
  :math:`\sqrt{b_\epsilon/(A_\alpha p_{\min}^{3-\alpha})}` is a **guess**;
* :math:`r_+`, :math:`V_+`, :math:`G_+`, :math:`E_\rho`, and the full
  admissibility set (34);
* the common scale :math:`t_\epsilon` of Lemma 3.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass

import numpy as np
from scipy import linalg, optimize

from ._validation import as_order, as_pmf, as_real_array, as_real_scalar
from .divergence import alpha_lift

__all__ = [
    "LeakageModel", "GeneralLeakageModel", "Certificate", "LiftMechanism",
    "taylor_constants", "certificate", "epsilon_max", "renyi_budget_max", "renyi_certificate",
    "analytic_mechanism", "directional_mechanism", "asymmetric_mechanism", "global_optimum",
    "null_space_mechanism", "chi2_information", "channel_from_posteriors", "posteriors_from_channel",
    "corollary1_value",
]

_STOCHASTIC_TOL = 1e-12


def _check_leakage_matrix(p_x_given_y) -> np.ndarray:
    a = as_real_array(p_x_given_y, "p_x_given_y", ndim=2)
    if np.any(a < 0):
        raise ValueError("p_x_given_y must be non-negative (it is the channel P_{X|Y})")
    sums = a.sum(axis=0)
    if np.any(np.abs(sums - 1) > _STOCHASTIC_TOL):
        worst = float(sums[np.argmax(np.abs(sums - 1))])
        raise ValueError(f"p_x_given_y must be column-stochastic (columns are P_{{X|Y=y}}); "
                         f"found a column summing to {worst:.15g}")
    return a


def _check_eps(eps) -> float:
    eps = as_real_scalar(eps, "eps")
    if eps < 0:
        raise ValueError(f"eps must be >= 0, got {eps!r}")
    return eps


def _check_alpha(order) -> float:
    return as_order(order, "order", minimum=1.0, allow_inf=False)


class GeneralLeakageModel:
    r"""A leakage model with any column-stochastic :math:`A` (Section III-D).

    Parameters
    ----------
    p_y : array_like
        :math:`P_Y`, strictly positive.
    p_x_given_y : array_like, shape (n_x, n_y)
        Column-stochastic :math:`A`.  :math:`P_X=AP_Y` must be strictly positive.
    """

    def __init__(self, p_y, p_x_given_y):
        a = _check_leakage_matrix(p_x_given_y)
        p_y = as_pmf(p_y, "p_y", tol=1e-12)
        if p_y.size != a.shape[1]:
            raise ValueError(f"p_y has {p_y.size} entries but p_x_given_y has {a.shape[1]} columns")
        if np.any(p_y <= 0):
            raise ValueError("p_y must be strictly positive")
        p_x = a @ p_y
        if np.any(p_x <= 0):
            raise ValueError("P_X = A P_Y must be strictly positive")
        self.p_y, self.p_x_given_y, self.p_x = p_y, a, p_x

    @property
    def A(self) -> np.ndarray:
        return self.p_x_given_y

    @property
    def p_min(self) -> float:
        return float(self.p_x.min())

    def phi(self, q, order) -> np.ndarray:
        r""":math:`\Phi_\alpha(q)=\sum_xP_X(x)((Aq)(x)/P_X(x))^\alpha=(\mathcal L^\alpha)^\alpha` for columns of ``q``."""
        q = np.asarray(q, dtype=float)
        px = self.p_x[:, None] if q.ndim == 2 else self.p_x
        return np.sum(px * np.maximum((self.A @ q) / px, 0.0) ** order, axis=0)

    def __repr__(self) -> str:
        return f"{type(self).__name__}(|X|={self.p_x.size}, |Y|={self.p_y.size})"


class LeakageModel(GeneralLeakageModel):
    r"""The invertible leakage model of Section II and the quantities of Lemma 2.

    Parameters
    ----------
    p_x : array_like
        :math:`P_X`, strictly positive.
    p_x_given_y : array_like, shape (K, K)
        :math:`A=P_{X|Y}`, column-stochastic (within 1e-12) and invertible,
        such that :math:`P_Y=A^{-1}P_X` is a strictly positive distribution.

    Attributes
    ----------
    p_y, W, singular_values, sigma_max, v_star, kappa_star, d_star, r_y_star, r_val
        As in Sections II–III: :math:`W=D_Y^{-1/2}A^{-1}D_X^{1/2}`; :math:`v^\star`
        a unit dominant right singular vector of :math:`W` chosen orthogonal to
        :math:`\sqrt{P_X}` (Lemma 2; among tied singular values the one with
        the largest component orthogonal to :math:`\sqrt{P_X}`), with its sign
        fixed so that its largest entry in absolute value is positive;
        :math:`\kappa_\star=\|D_X^{-1/2}v^\star\|_\infty`;
        :math:`d^\star=A^{-1}D_X^{1/2}v^\star`; :math:`r^\star_Y=\min_{d^\star(y)\ne0}P_Y(y)/|d^\star(y)|`;
        :math:`r^\star_{\rm val}=\min\{\kappa_\star^{-1},r^\star_Y\}`.
    """

    def __init__(self, p_x, p_x_given_y):
        a = _check_leakage_matrix(p_x_given_y)
        p_x = as_pmf(p_x, "p_x", tol=1e-12)
        if np.any(p_x <= 0):
            raise ValueError("p_x must be strictly positive")
        if a.shape[0] != a.shape[1]:
            raise ValueError(f"p_x_given_y is {a.shape[0]}x{a.shape[1]}, not square; P_Y is not determined by P_X. "
                             "Use GeneralLeakageModel(p_y, p_x_given_y) with global_optimum (Theorem 2)")
        if a.shape[0] != p_x.size:
            raise ValueError(f"p_x has {p_x.size} entries but p_x_given_y is {a.shape[0]}x{a.shape[1]}")
        if np.linalg.cond(a) > 1e12:
            raise ValueError("p_x_given_y is singular (or nearly so); P_Y = A^{-1} P_X is undefined. "
                             "Use GeneralLeakageModel(p_y, p_x_given_y) with global_optimum and "
                             "null_space_mechanism (Proposition 4)")
        p_y = np.linalg.solve(a, p_x)
        if np.any(p_y <= 0):
            raise ValueError(f"P_Y = A^{{-1}} P_X = {np.array2string(p_y, precision=4)} is not a strictly positive "
                             "distribution; this P_X is incompatible with this P_{X|Y}")
        self.p_x, self.p_x_given_y, self.p_y = p_x, a, p_y / p_y.sum()
        self._lemma2()

    def _lemma2(self):
        a_inv = np.linalg.inv(self.A)
        W = np.diag(self.p_y ** -0.5) @ a_inv @ np.diag(np.sqrt(self.p_x))
        _, s, vt = np.linalg.svd(W)
        sqrt_px = np.sqrt(self.p_x)
        # Dominant right singular space (ties included), projected orthogonal to sqrt(P_X).
        top = vt[np.isclose(s, s[0], rtol=1e-10, atol=0)]
        proj = top - np.outer(top @ sqrt_px, sqrt_px)
        norms = np.linalg.norm(proj, axis=1)
        if norms.max() < 1e-12:
            raise ValueError("sigma_max(W) is attained only along sqrt(P_X); no informative direction exists")
        v = proj[np.argmax(norms)]
        v /= np.linalg.norm(v)
        v *= np.sign(v[np.argmax(np.abs(v))])
        d = a_inv @ (sqrt_px * v)
        kappa = float(np.max(np.abs(v / sqrt_px)))
        nz = np.abs(d) > 1e-15
        r_y = float(np.min(self.p_y[nz] / np.abs(d[nz])))
        self.W, self.singular_values, self.sigma_max = W, s, float(s[0])
        self.v_star, self.kappa_star, self.d_star = v, kappa, d
        self.r_y_star, self.r_val = r_y, min(1.0 / kappa, r_y)


# ------------------------------------------------------------ certificate

def taylor_constants(order, rho):
    r""":math:`(A_\alpha, M_{\alpha,\rho}, K_{\alpha,\rho})` of Lemma 1.

    :math:`A_\alpha=\alpha(\alpha-1)/2`,
    :math:`M_{\alpha,\rho}=\max\{(1-\rho)^{\alpha-3},(1+\rho)^{\alpha-3}\}`,
    :math:`K_{\alpha,\rho}=\frac{|\alpha(\alpha-1)(\alpha-2)|}{6}M_{\alpha,\rho}`;
    :math:`K_{2,\rho}=0` and :math:`K_{3,\rho}=1`.
    """
    alpha = _check_alpha(order)
    rho = as_real_scalar(rho, "rho")
    if not 0 <= rho < 1:
        raise ValueError(f"rho must lie in [0, 1), got {rho!r}")
    a = alpha * (alpha - 1) / 2
    m = max((1 - rho) ** (alpha - 3), (1 + rho) ** (alpha - 3))
    return a, m, abs(alpha * (alpha - 1) * (alpha - 2)) / 6 * m


@dataclass(frozen=True)
class Certificate:
    r"""Theorem 1's radii and bounds at one :math:`(\epsilon,\alpha)`, evaluated at :math:`\rho_\epsilon`.

    ``admissible`` is True iff conditions (32) hold; ``failing`` names those
    that do not.  The bounds ``V_minus <= V <= V_plus`` are proved only when
    ``admissible``.
    """

    eps: float
    order: float
    b: float
    r0: float
    delta0: float
    delta_bar: float
    rho: float
    K: float
    r_minus: float
    r_plus: float
    V_minus: float
    V0: float
    V_plus: float
    G_minus: float
    G_plus: float
    E: float
    admissible: bool
    failing: tuple[str, ...]


def _delta_bar(model, eps, alpha, a_alpha):
    b = math.expm1(alpha * eps)
    if alpha >= 2:
        # D_2 <= D_alpha <= alpha eps/(alpha-1) and D_2 = log(1 + chi^2): r_u^2 <= e^{alpha eps/(alpha-1)} - 1
        return math.sqrt(math.expm1(alpha * eps / (alpha - 1)) / model.p_min)
    # Reconstruction (a guess, flagged in the docs): (1+h)^alpha >= 1 + alpha h + A p_min^{2-alpha} h^2
    return math.sqrt(b / (a_alpha * model.p_min ** (2 - alpha) * model.p_min))


def certificate(model: LeakageModel, eps, order, *, rho=None) -> Certificate:
    r"""Theorem 1's certificate: :math:`\delta_0,\bar\delta_\epsilon,\rho_\epsilon,r_\pm,V_-,V_0,V_+`.

    .. math::

        b_\epsilon=e^{\alpha\epsilon}-1,\quad r_0^2=\frac{b_\epsilon}{A_\alpha},\quad
        \delta_0=\kappa_\star r_0,\quad
        r_-^2=\frac{b_\epsilon}{A_\alpha+K_{\alpha,\rho}\delta_0},\quad
        r_+^2=\frac{b_\epsilon}{A_\alpha-K_{\alpha,\rho}\bar\delta_\epsilon},

    :math:`V_\bullet=r_\bullet^2\sigma_{\max}^2(W)`,
    :math:`G_-=\frac{K\delta_0}{A(A+K\delta_0)}`, :math:`G_+=\frac{K\bar\delta}{A(A-K\bar\delta)}`,
    :math:`E_\rho=b_\epsilon\sigma^2_{\max}(G_-+G_+)=V_+-V_-`.  By default
    :math:`\rho=\rho_\epsilon=\max\{\delta_0,\bar\delta_\epsilon\}`, which
    minimises :math:`E_\rho` over the admissible set (Proposition 3); the
    admissibility conditions (32) are :math:`\rho_\epsilon<1`,
    :math:`r_0\le r^\star_Y` and :math:`K_{\alpha,\rho_\epsilon}\bar\delta_\epsilon\le A_\alpha/2`.
    With an explicit ``rho`` the conditions (34) are checked instead
    (:math:`\delta_0\le\rho`, :math:`\bar\delta_\epsilon\le\rho` in addition).
    """
    if not isinstance(model, LeakageModel):
        raise TypeError("model must be a LeakageModel (Theorem 1 needs an invertible P_{X|Y})")
    eps, alpha = _check_eps(eps), _check_alpha(order)
    a_alpha = alpha * (alpha - 1) / 2
    b = math.expm1(alpha * eps)
    r0 = math.sqrt(b / a_alpha)
    delta0 = model.kappa_star * r0
    delta_bar = _delta_bar(model, eps, alpha, a_alpha)
    failing = []
    if rho is None:
        rho_used = max(delta0, delta_bar)
        if not rho_used < 1:
            failing.append(f"rho_eps = {rho_used:.4g} >= 1")
    else:
        rho_used = as_real_scalar(rho, "rho")
        if not 0 < rho_used < 1:
            raise ValueError(f"rho must lie in (0, 1), got {rho_used!r}")
        if delta0 > rho_used:
            failing.append(f"delta0 = {delta0:.4g} > rho")
        if delta_bar > rho_used:
            failing.append(f"delta_bar = {delta_bar:.4g} > rho")
    K = taylor_constants(alpha, min(rho_used, 1 - 1e-15))[2]
    if r0 > model.r_y_star:
        failing.append(f"r0 = {r0:.4g} > r_Y* = {model.r_y_star:.4g} (the mechanism would leave the simplex)")
    if K * delta_bar > a_alpha / 2:
        failing.append(f"K*delta_bar = {K * delta_bar:.4g} > A_alpha/2 = {a_alpha / 2:.4g}")
    s2 = model.sigma_max**2
    r_minus = math.sqrt(b / (a_alpha + K * delta0))
    denom = a_alpha - K * delta_bar
    r_plus = math.sqrt(b / denom) if denom > 0 else math.inf
    g_minus = K * delta0 / (a_alpha * (a_alpha + K * delta0))
    g_plus = K * delta_bar / (a_alpha * denom) if denom > 0 else math.inf
    return Certificate(eps=eps, order=alpha, b=b, r0=r0, delta0=delta0, delta_bar=delta_bar, rho=rho_used, K=K,
                       r_minus=r_minus, r_plus=r_plus, V_minus=r_minus**2 * s2, V0=r0**2 * s2,
                       V_plus=r_plus**2 * s2, G_minus=g_minus, G_plus=g_plus, E=b * s2 * (g_minus + g_plus),
                       admissible=not failing, failing=tuple(failing))


def epsilon_max(model: LeakageModel, order) -> float:
    r"""The largest :math:`\epsilon` at which Theorem 1's certificate applies (conditions (32)).

    Every condition of (32) is monotone in :math:`\epsilon` (:math:`\delta_0`,
    :math:`\bar\delta_\epsilon`, :math:`r_0` and :math:`K_{\alpha,\rho_\epsilon}`
    all increase with it), so the admissible budgets form an interval
    :math:`[0,\epsilon_{\max}]`, found here by bisection to machine precision.
    For :math:`\alpha=3` it is :math:`\frac13\log(1+3r^{\star2}_{\rm val})`.
    """
    alpha = _check_alpha(order)
    lo, hi = 0.0, 1.0
    while certificate(model, hi, alpha).admissible:
        hi *= 2
        if hi > 1e3:
            return math.inf
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        if certificate(model, mid, alpha).admissible:
            lo = mid
        else:
            hi = mid
        if hi - lo <= 1e-15 * hi:
            break
    return lo


def renyi_budget_max(model: LeakageModel, order) -> float:
    r""":math:`\eta^{\rm R}_{\max}=\frac{\beta}{\beta-1}\epsilon_{\max}` for point-wise Rényi privacy (eq. 44).

    The constraint :math:`D_\beta(P_{X|U=u}\|P_X)\le\eta` is the α-lift
    constraint with :math:`\alpha=\beta` and :math:`\epsilon=(\beta-1)\eta/\beta`
    (Section III-B).
    """
    beta = _check_alpha(order)
    return beta / (beta - 1) * epsilon_max(model, beta)


def renyi_certificate(model: LeakageModel, eta, order) -> Certificate:
    r"""Certificate for the point-wise Rényi budget :math:`\eta` at order :math:`\beta` (eqs. 41–44).

    Uses :math:`\epsilon=(\beta-1)\eta/\beta`, so :math:`b=e^{(\beta-1)\eta}-1=b^{\rm R}_\eta`,
    :math:`r_{0,\rm R}`, :math:`\delta_{0,\rm R}`, :math:`r_{-,\rm R}` and
    :math:`\bar\delta^{\rm R}_\eta=\sqrt{(e^\eta-1)/p_{\min}}` (:math:`\beta\ge2`).
    """
    beta = _check_alpha(order)
    eta = _check_eps(eta)
    return certificate(model, (beta - 1) * eta / beta, beta)


def corollary1_value(model: LeakageModel, eps) -> float:
    r"""Corollary 1 (:math:`\alpha=2`): :math:`V_{\chi^2}(\epsilon,2)=(e^{2\epsilon}-1)\sigma^2_{\max}(W)`.

    Valid for :math:`\epsilon\le\frac12\log(1+r^{\star2}_{\rm val})`; raises otherwise.
    """
    eps = _check_eps(eps)
    limit = 0.5 * math.log1p(model.r_val**2)
    if eps > limit * (1 + 1e-12):
        raise ValueError(f"Corollary 1 needs eps <= log(1 + r_val^2)/2 = {limit:.6g}, got {eps!r}")
    return math.expm1(2 * eps) * model.sigma_max**2


# -------------------------------------------------------------- mechanisms

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
        Every lift is at most :math:`e^\epsilon(1+10^{-10})`.
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


def chi2_information(p_u_given_y, p_y) -> float:
    r""":math:`\chi^2(Y;U)=\sum_{u,y}P(u,y)^2/(P_U(u)P_Y(y))-1` of a channel (rows u, columns y)."""
    ch = as_real_array(p_u_given_y, "p_u_given_y", ndim=2)
    p_y = as_pmf(p_y, "p_y", tol=1e-9)
    joint = ch * p_y[None, :]
    p_u = joint.sum(axis=1)
    keep = p_u > 0
    return float(np.sum(joint[keep] ** 2 / (p_u[keep, None] * p_y[None, :])) - 1.0)


def channel_from_posteriors(p_u, posteriors, p_y) -> np.ndarray:
    r""":math:`P_{U|Y}(u|y)=p_u\,q_u(y)/P_Y(y)` from weights and posteriors (columns of ``posteriors``)."""
    p_u = np.asarray(p_u, dtype=float)
    q = np.asarray(posteriors, dtype=float)
    return (p_u[None, :] * q / np.asarray(p_y, dtype=float)[:, None]).T


def posteriors_from_channel(p_u_given_y, p_y):
    """Inverse of :func:`channel_from_posteriors`: returns ``(p_u, posteriors)``."""
    joint = np.asarray(p_u_given_y, dtype=float) * np.asarray(p_y, dtype=float)[None, :]
    p_u = joint.sum(axis=1)
    return p_u, (joint / p_u[:, None]).T


def _build(model, p_u, q, eps, alpha) -> LiftMechanism:
    keep = p_u > 1e-15
    p_u, q = p_u[keep] / p_u[keep].sum(), q[:, keep]
    q = np.maximum(q, 0.0)
    q = q / q.sum(axis=0)
    channel = channel_from_posteriors(p_u, q, model.p_y)
    # The channel is the mechanism; everything reported is recomputed from it.
    channel = channel / channel.sum(axis=0, keepdims=True)
    p_u2, q2 = posteriors_from_channel(channel, model.p_y)
    p_x_given_u = model.A @ q2
    lifts = alpha_lift(p_x_given_u / p_x_given_u.sum(axis=0), model.p_x, alpha, tol=1e-8)
    lifts = np.atleast_1d(lifts)
    return LiftMechanism(p_u=p_u2, p_u_given_y=channel, p_y_given_u=q2, p_x_given_u=p_x_given_u,
                         utility=chi2_information(channel, model.p_y), lifts=lifts, eps=eps, order=alpha,
                         feasible=bool(np.all(lifts <= math.exp(eps) * (1 + 1e-10))))


def analytic_mechanism(model: LeakageModel, eps, order) -> LiftMechanism:
    r"""The binary mechanism (22)–(23) with radius :math:`r_-` (Theorem 1).

    :math:`P_U=(\frac12,\frac12)`, :math:`P_{Y|U=u_{1,2}}=P_Y\pm r_-d^\star`; requires
    an admissible certificate.
    """
    cert = certificate(model, eps, order)
    if not cert.admissible:
        raise ValueError(f"eps = {cert.eps:g} is outside Theorem 1's range at order {cert.order:g}: "
                         + "; ".join(cert.failing) + f" (epsilon_max = {epsilon_max(model, order):.6g})")
    q = np.stack([model.p_y + cert.r_minus * model.d_star, model.p_y - cert.r_minus * model.d_star], axis=1)
    return _build(model, np.array([0.5, 0.5]), q, cert.eps, cert.order)


def _phi_along(model, sign, alpha):
    a_x = model.v_star / np.sqrt(model.p_x)
    return lambda t: float(np.sum(model.p_x * np.maximum(1 + sign * t * a_x, 0.0) ** alpha))


def _largest_feasible(f, level, upper):
    """max t in [0, upper] with f(t) <= level, f convex with f(0) = 1 <= level (bisection, feasible side)."""
    if f(upper) <= level:
        return upper
    lo, hi = 0.0, upper
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        if f(mid) <= level:
            lo = mid
        else:
            hi = mid
        if hi - lo <= 4e-16 * hi:
            break
    return lo


def _scales(model, eps, alpha):
    level = math.exp(alpha * eps)
    d, p_y = model.d_star, model.p_y
    cap_plus = float(np.min(p_y[d < 0] / -d[d < 0])) if np.any(d < 0) else math.inf
    cap_minus = float(np.min(p_y[d > 0] / d[d > 0])) if np.any(d > 0) else math.inf
    cap_plus = min(cap_plus, 1 / model.kappa_star)
    cap_minus = min(cap_minus, 1 / model.kappa_star)
    t_plus = _largest_feasible(_phi_along(model, +1, alpha), level, cap_plus)
    t_minus = _largest_feasible(_phi_along(model, -1, alpha), level, cap_minus)
    return t_plus, t_minus


def directional_mechanism(model: LeakageModel, eps, order) -> LiftMechanism:
    r"""Lemma 3: the exact one-dimensional search along :math:`\pm v^\star`.

    With :math:`F_s(r)=\sum_xP_X(x)(1+s\,r\,v^\star(x)/\sqrt{P_X(x)})^\alpha`,
    the common scale is
    :math:`t_\epsilon=\min\{r^\star_{\rm val},t_{+1},t_{-1}\}` where :math:`t_s`
    solves :math:`F_s(t)=e^{\alpha\epsilon}` (bisection on the convex
    :math:`F_s`, keeping the feasible end).  The mechanism (22)–(23) with
    :math:`r_-` replaced by :math:`t_\epsilon` satisfies the *unexpanded*
    constraint exactly and has utility :math:`t_\epsilon^2\sigma^2_{\max}(W)`.
    """
    eps, alpha = _check_eps(eps), _check_alpha(order)
    t_plus, t_minus = _scales(model, eps, alpha)
    t = min(model.r_val, t_plus, t_minus)
    q = np.stack([model.p_y + t * model.d_star, model.p_y - t * model.d_star], axis=1)
    return _build(model, np.array([0.5, 0.5]), q, eps, alpha)


def asymmetric_mechanism(model: LeakageModel, eps, order) -> LiftMechanism:
    r"""Two scales along :math:`\pm v^\star` with non-uniform :math:`P_U` (beyond the paper).

    :math:`q_1=P_Y+t_+d^\star`, :math:`q_2=P_Y-t_-d^\star`, each scale the
    largest that keeps its own posterior valid and within the exact
    constraint; :math:`P_U(u_1)=t_-/(t_++t_-)` keeps the barycentre at
    :math:`P_Y`.  The utility is :math:`t_+t_-\sigma^2_{\max}\ge t_\epsilon^2\sigma^2_{\max}`.
    """
    eps, alpha = _check_eps(eps), _check_alpha(order)
    t_plus, t_minus = _scales(model, eps, alpha)
    if t_plus + t_minus == 0:
        return _build(model, np.array([1.0]), model.p_y[:, None], eps, alpha)
    q = np.stack([model.p_y + t_plus * model.d_star, model.p_y - t_minus * model.d_star], axis=1)
    return _build(model, np.array([t_minus, t_plus]) / (t_plus + t_minus), q, eps, alpha)


# ---------------------------------------------------------- global optimum

def _direction_basis(model, eps):
    n_y = model.p_y.size
    if eps == 0:
        # Perfect privacy: A q = P_X, so directions live in null(A) (Proposition 4).
        basis = linalg.null_space(model.A)
        return basis
    ones = np.ones((n_y, 1)) / math.sqrt(n_y)
    return linalg.null_space(ones.T)


def _boundary(model, dirs, eps, alpha):
    """Points P_Y + t d on the boundary of Q_eps^ex for unit directions d (columns), vectorised bisection."""
    p_y = model.p_y
    with np.errstate(divide="ignore"):
        caps = np.where(dirs < -1e-15, p_y[:, None] / np.maximum(-dirs, 1e-300), np.inf).min(axis=0)
    level = math.exp(alpha * eps)
    if eps == 0:
        t = caps
    else:
        q_cap = p_y[:, None] + caps * dirs
        ok = model.phi(q_cap, alpha) <= level
        lo, hi = np.zeros_like(caps), caps.copy()
        for _ in range(64):  # caps <= 1/min P_Y, so 2^-64 of it is below double precision of q
            mid = 0.5 * (lo + hi)
            inside = model.phi(p_y[:, None] + mid * dirs, alpha) <= level
            lo = np.where(inside, mid, lo)
            hi = np.where(inside, hi, mid)
        t = np.where(ok, caps, lo)
    q = p_y[:, None] + t * dirs
    return np.maximum(q, 0.0)


def _objective(model, q):
    return np.sum((q - model.p_y[:, None]) ** 2 / model.p_y[:, None], axis=0)


def _solve_lp(model, q, gains):
    res = optimize.linprog(-gains, A_eq=q, b_eq=model.p_y, bounds=(0, None), method="highs-ds",
                           options={"primal_feasibility_tolerance": 1e-10, "dual_feasibility_tolerance": 1e-10})
    if res.status != 0:  # tight tolerances occasionally stall HiGHS; the polish below restores accuracy
        res = optimize.linprog(-gains, A_eq=q, b_eq=model.p_y, bounds=(0, None), method="highs-ds")
    if res.status != 0:
        raise RuntimeError(f"linear program failed: {res.message}")
    weights = res.x
    # Polish: on the basis support, the barycentre equations determine the weights exactly.
    support = np.flatnonzero(weights > 1e-12)
    exact, *_ = np.linalg.lstsq(q[:, support], model.p_y, rcond=None)
    if np.all(exact >= 0) and np.allclose(q[:, support] @ exact, model.p_y, atol=1e-14, rtol=0):
        weights = np.zeros_like(weights)
        weights[support] = exact
    return float(gains @ weights), weights, res.eqlin.marginals


def global_optimum(model, eps, order, *, rtol: float = 1e-6, max_rounds: int = 60, seed: int = 0,
                   time_limit: float | None = 120.0):
    r"""The optimal value of problem (3) for any leakage matrix (Theorem 2), computed.

    :math:`V_{\chi^2}(\epsilon,\alpha)` is the concave envelope at :math:`P_Y` of
    :math:`g(q)=\|D_Y^{-1/2}(q-P_Y)\|^2` over the exact feasible set
    :math:`\mathcal Q^{\rm ex}_\epsilon=\{q\in\Delta:\Phi_\alpha(q)\le e^{\alpha\epsilon}\}`.
    Because :math:`g` is convex, it suffices to mix boundary points: a
    linear program over the weights of candidate boundary points (HiGHS dual
    simplex, whose vertex solution uses at most :math:`|\mathcal Y|` outputs —
    Proposition 1), refined by **column generation**: the LP duals
    :math:`\mu` price a new boundary point by :math:`g(q)-\mu^Tq`, which is
    maximised over the boundary (parametrised by the direction from
    :math:`P_Y`: an angle when :math:`|\mathcal Y|=3`, a sphere otherwise) from
    many starts.  It stops when no point prices above ``rtol`` times the
    value and the value is stable to ``rtol``.

    Parameters
    ----------
    model : LeakageModel or GeneralLeakageModel
    eps : float
        :math:`\epsilon\ge0`; at 0 the directions are restricted to
        :math:`\operatorname{null}(A)` (Proposition 4).
    order : float
        :math:`\alpha>1`.
    rtol : float, default 1e-6
    seed : int
        Seed of the random starting directions (the result is deterministic).
    time_limit : float or None, default 120
        Seconds after which refinement stops (checked between LP rounds and
        local searches); the mechanism found so far is returned, still exactly
        feasible and a valid lower bound.  ``None``: no limit.  The cost grows
        quickly with :math:`|\mathcal Y|`: each round prices
        :math:`\mathcal O(|\mathcal Y|^2)` boundary points (each a bisection
        over :math:`|\mathcal X|\times|\mathcal Y|` products) and the polish runs a
        Nelder–Mead search of up to :math:`80(|\mathcal Y|-1)` steps from each
        active point; :math:`|\mathcal Y|=10` takes tens of seconds on two cores.

    Returns
    -------
    LiftMechanism
        With ``utility`` recomputed from the channel.  The value is always
        *achieved* by the returned, exactly feasible mechanism, hence a valid
        lower bound on :math:`V_{\chi^2}`.

    Notes
    -----
    Accuracy.  For :math:`|\mathcal Y|\le3` the boundary is a curve and the
    angle grid is refined to :math:`10^{-9}` rad; the value matches the
    exact Corollary 1 to better than ``rtol`` (tests).  For
    :math:`|\mathcal Y|\ge4` the search (random covers, local clouds, dual
    pricing, Nelder–Mead polish) is a heuristic: we observed differences of
    order :math:`10^{-5}` relative between seeds.  When Theorem 1 applies,
    compare with its certified :math:`V_+` (:func:`certificate`).
    """
    eps, alpha = _check_eps(eps), _check_alpha(order)
    if not isinstance(model, GeneralLeakageModel):
        raise TypeError("model must be a LeakageModel or GeneralLeakageModel")
    basis = _direction_basis(model, eps)
    k = basis.shape[1]
    if k == 0:
        return _build(model, np.array([1.0]), model.p_y[:, None], eps, alpha)
    rng = np.random.default_rng(seed)
    if time_limit is not None:
        time_limit = as_real_scalar(time_limit, "time_limit")
        if time_limit <= 0:
            raise ValueError(f"time_limit must be > 0 seconds or None, got {time_limit!r}")
    started = time.perf_counter()

    def out_of_time():
        return time_limit is not None and time.perf_counter() - started > time_limit

    def dirs_from(c):  # c: (k, m) coordinates -> unit directions in R^{n_y}
        d = basis @ c
        return d / np.linalg.norm(d, axis=0)

    def to_coords(th):  # k == 2: angle parametrisation of the boundary curve
        return np.stack([np.cos(th), np.sin(th)])

    # Round 0: a dense, even cover of the boundary.
    if k == 1:
        params = np.array([[1.0, -1.0]])
    elif k == 2:
        seeds = _seed_directions(model, basis)
        params = np.concatenate([np.linspace(0, 2 * np.pi, 1441)[:-1], np.arctan2(seeds[1], seeds[0])])[None, :]
    else:
        params = rng.standard_normal((k, 1000 * k))
        params = np.concatenate([params, np.eye(k), -np.eye(k), _seed_directions(model, basis)], axis=1)
    coords = to_coords(params[0]) if k == 2 else params
    q = np.concatenate([model.p_y[:, None], _boundary(model, dirs_from(coords), eps, alpha)], axis=1)
    value, weights, duals = _solve_lp(model, q, _objective(model, q))
    all_params = np.concatenate([np.full((params.shape[0], 1), np.nan), params], axis=1)

    # Zoom rounds: add fine local covers around the active points and re-solve.  The LP
    # value is achieved by a valid mechanism at every round and increases to V_chi2.
    width = 2 * np.pi / 1440 if k == 2 else 0.05
    for _ in range((max_rounds if k == 2 else min(max_rounds, 14)) if k > 1 else 0):
        if out_of_time():
            break
        active = all_params[:, (weights > 1e-14) & ~np.isnan(all_params[0])]
        if k == 2:
            local = (active[0][:, None] + np.linspace(-width, width, 201)[None, :]).ravel()[None, :]
            coords = to_coords(local[0])
        else:
            local = np.concatenate([a[:, None] + width * np.linalg.norm(a) * rng.standard_normal((k, 300))
                                    for a in active.T], axis=1)
            coords = local
        q = np.concatenate([q, _boundary(model, dirs_from(coords), eps, alpha)], axis=1)
        all_params = np.concatenate([all_params, local], axis=1)
        if k > 2:  # column generation: a fresh global cloud, priced with the LP duals; keep the best
            cloud = rng.standard_normal((k, 500 * k))
            qq = _boundary(model, dirs_from(cloud), eps, alpha)
            priced = _objective(model, qq) - duals @ qq
            best = np.argsort(priced)[-8:]
            q = np.concatenate([q, qq[:, best]], axis=1)
            all_params = np.concatenate([all_params, cloud[:, best]], axis=1)
        new_value, weights, duals = _solve_lp(model, q, _objective(model, q))
        improvement = new_value - value
        value = new_value
        width /= 20 if k == 2 else 2
        if improvement <= 0.01 * rtol * max(value, 1e-12) and (k == 2 and width < 1e-9 or k > 2 and width < 1e-4):
            break
    for _ in range(3 if k > 2 else 0):
        # Polish: Nelder-Mead pricing from each active point (column generation with local search).
        active = all_params[:, (weights > 1e-14) & ~np.isnan(all_params[0])]

        def neg_reduced(c):
            qq = _boundary(model, dirs_from(c[:, None]), eps, alpha)
            return -(_objective(model, qq) - duals @ qq)[0]

        if out_of_time():
            break
        found = []
        for c0 in active.T:
            if out_of_time():
                break
            found.append(optimize.minimize(neg_reduced, c0, method="Nelder-Mead",
                                           options={"xatol": 1e-9, "fatol": 1e-15, "maxiter": 80 * k}).x)
        if not found:
            break
        found = np.array(found).T
        q = np.concatenate([q, _boundary(model, dirs_from(found), eps, alpha)], axis=1)
        all_params = np.concatenate([all_params, found], axis=1)
        new_value, weights, duals = _solve_lp(model, q, _objective(model, q))
        if new_value - value <= 0.01 * rtol * max(new_value, 1e-12):
            value = new_value
            break
        value = new_value
    keep = weights > 1e-12
    return _build(model, weights[keep], q[:, keep], eps, alpha)


def _seed_directions(model, basis):
    """Directions A^{-1} D_X^{1/2} v_i of the right singular vectors of W (both signs), in basis coordinates."""
    if not isinstance(model, LeakageModel):
        return np.zeros((basis.shape[1], 0))
    _, _, vt = np.linalg.svd(model.W)
    dirs = np.linalg.solve(model.A, np.sqrt(model.p_x)[:, None] * vt.T)
    coords = basis.T @ dirs
    coords = coords[:, np.linalg.norm(coords, axis=0) > 1e-12]
    return np.concatenate([coords, -coords], axis=1)


def null_space_mechanism(model: GeneralLeakageModel) -> LiftMechanism:
    r"""Proposition 4: positive utility at :math:`\epsilon=0` when :math:`A` is not injective.

    With :math:`z` a unit vector of :math:`\operatorname{null}(A)` maximising
    :math:`\|D_Y^{-1/2}z\|`, the posteriors :math:`q_{1,2}=P_Y+t_1z,\;P_Y-t_2z`
    (largest steps keeping them valid) satisfy :math:`Aq_u=AP_Y=P_X`, so every
    output has lift exactly 1 (perfect privacy), while
    :math:`\chi^2(Y;U)=t_1t_2\|D_Y^{-1/2}z\|^2>0`.
    """
    basis = linalg.null_space(model.A)
    if basis.shape[1] == 0:
        raise ValueError("null(A) is trivial: with an injective P_{X|Y} no utility is possible at eps = 0")
    m = basis.T @ np.diag(1 / model.p_y) @ basis
    w, v = np.linalg.eigh(m)
    z = basis @ v[:, -1]
    z /= np.linalg.norm(z)
    t1 = float(np.min(model.p_y[z < -1e-15] / -z[z < -1e-15]))
    t2 = float(np.min(model.p_y[z > 1e-15] / z[z > 1e-15]))
    q = np.stack([model.p_y + t1 * z, model.p_y - t2 * z], axis=1)
    return _build(model, np.array([t2, t1]) / (t1 + t2), q, 0.0, 2.0)
