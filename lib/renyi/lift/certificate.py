r"""Theorem 1's certificate, :math:`\epsilon_{\max}`, Corollary 1 and the Rényi transfer (eqs. 20–44).

Taught in the chapters *Taylor remainder* and *The closed-form mechanism*
(``book/part2``).

**Reconstructions.** :math:`\bar\delta_\epsilon` for :math:`\alpha\ge2` is derived (it reproduces the
paper's 0.3902); for :math:`1<\alpha<2` it is a **guess**; :math:`r_+`, :math:`V_+`,
:math:`G_+` and :math:`E_\rho` are derived (see the chapters).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from .._validation import as_pmf, as_real_array, as_real_scalar
from ._numerics import LOG_BUDGET_MAX, bisect_feasible
from .model import LeakageModel, check_eps, check_order

#: Bisection tolerance of epsilon_max, relative (it is printed to 6 digits).
EPS_MAX_RTOL = 1e-15
#: The Taylor constant K(alpha, rho) diverges at rho = 1; rho is capped this far below it.
RHO_BELOW_ONE = 1e-15
#: A budget passed as the printed limit (rounded) is accepted this far, relatively, above it.
BUDGET_RTOL = 1e-12

__all__ = [
    "Certificate",
    "taylor_constants",
    "taylor_remainder",
    "certificate",
    "epsilon_max",
    "renyi_budget_max",
    "renyi_certificate",
    "corollary1_value",
]


def taylor_constants(order, rho):
    r""":math:`(A_\alpha, M_{\alpha,\rho}, K_{\alpha,\rho})` of Lemma 1.

    :math:`A_\alpha=\alpha(\alpha-1)/2`,
    :math:`M_{\alpha,\rho}=\max\{(1-\rho)^{\alpha-3},(1+\rho)^{\alpha-3}\}`,
    :math:`K_{\alpha,\rho}=\frac{|\alpha(\alpha-1)(\alpha-2)|}{6}M_{\alpha,\rho}`;
    :math:`K_{2,\rho}=0` and :math:`K_{3,\rho}=1`.

    Parameters
    ----------
    order : float
        :math:`\alpha>1`.
    rho : float
        Neighbourhood radius :math:`\rho\in[0,1)` of Lemma 1.

    Returns
    -------
    tuple of float
        ``(A, M, K)``.

    References
    ----------
    :cite:t:`zamani2026alphalift`, Lemma 1.
    """
    alpha = check_order(order)
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

    Attributes
    ----------
    eps, order : float
        :math:`\epsilon` and :math:`\alpha`.
    b, r0, delta0, delta_bar, rho, K : float
        :math:`b_\epsilon`, :math:`r_0`, :math:`\delta_0`, :math:`\bar\delta_\epsilon`, :math:`\rho`,
        :math:`K_{\alpha,\rho}`.
    r_minus, r_plus : float
        The radii :math:`r_\pm`.
    V_minus, V0, V_plus : float
        The bounds and the surrogate.
    G_minus, G_plus, E : float
        The gap terms and :math:`E_\rho=V_+-V_-`.
    admissible : bool
    failing : tuple of str
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


#: Largest order at which Theorem 1's constants are evaluated: (1 + rho)^(alpha - 3) in
#: K_(alpha, rho) overflows double precision near alpha = 1000 / log2(1 + rho).
MAX_ORDER = 1000.0


def _delta_bar(model, eps, alpha, a_alpha):
    b = math.expm1(alpha * eps)
    if alpha >= 2:
        # D_2 <= D_alpha <= alpha eps/(alpha-1) and D_2 = log(1 + chi^2): r_u^2 <= e^{alpha eps/(alpha-1)} - 1
        return math.sqrt(math.expm1(alpha * eps / (alpha - 1)) / model.p_min)
    # Reconstruction (a guess, flagged in the docs): (1+h)^alpha >= 1 + alpha h + A p_min^{2-alpha} h^2
    return math.sqrt(b / (a_alpha * model.p_min ** (2 - alpha) * model.p_min))


def taylor_remainder(h, p_x, order) -> np.ndarray:
    r"""The remainder :math:`R_u` of the second-order expansion (10) of the :math:`\alpha`-lift.

    .. math::

        R_u=\sum_xP_X(x)\big[(1+h_u(x))^\alpha-1-\alpha h_u(x)-A_\alpha h_u(x)^2\big],

        h_u(x)=\frac{P_{X|U}(x|u)}{P_X(x)}-1,

    so that :math:`(\mathcal L^\alpha(X\to u))^\alpha=1+A_\alpha r_u^2+R_u` when
    :math:`\sum_xP_Xh_u=0`.  Lemma 1 bounds it by :math:`K_{\alpha,\rho}\rho r_u^2`
    (:func:`taylor_constants`); the chapter *Taylor remainder bounds* and the tests check
    that bound with this function.

    Parameters
    ----------
    h : array_like, shape (..., n_x)
        Relative perturbations :math:`h_u`, one per row; :math:`h\ge-1`.
    p_x : array_like, shape (n_x,)
        The prior :math:`P_X`.
    order : float
        :math:`\alpha>1`.

    Returns
    -------
    ndarray or float
        :math:`R_u` for each row of ``h``.

    References
    ----------
    :cite:t:`zamani2026alphalift`, eq. (10) and Lemma 1.

    Examples
    --------
    >>> from renyi.lift import taylor_remainder
    >>> h, p_x = [0.3, -0.1], [0.25, 0.75]  # sum_x P_X h = 0
    >>> round(float(taylor_remainder(h, p_x, 2)), 12)  # the expansion is exact at alpha = 2
    0.0
    >>> round(float(taylor_remainder(h, p_x, 3)), 12)  # alpha = 3: R = sum_x P_X h^3
    0.006
    """
    alpha = check_order(order)
    p_x = as_pmf(p_x, "p_x")
    h = as_real_array(h, "h", allow_empty=False)
    if h.shape[-1] != p_x.size:
        raise ValueError(f"h has {h.shape[-1]} entries per row but p_x has {p_x.size}")
    if np.any(h < -1):
        raise ValueError("h must be >= -1 (posteriors are non-negative)")
    a_alpha = alpha * (alpha - 1) / 2
    return ((1 + h) ** alpha - 1 - alpha * h - a_alpha * h**2) @ p_x


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

    Parameters
    ----------
    model : LeakageModel
        An invertible leakage model.
    eps : float
        Budget :math:`\epsilon\ge0`.
    order : float
        :math:`\alpha>1`.
    rho : float, optional
        Evaluate at this :math:`\rho\in(0,1)` instead of :math:`\rho_\epsilon`.

    Returns
    -------
    Certificate

    References
    ----------
    :cite:t:`zamani2026alphalift`, Theorem 1 and Proposition 3.

    Examples
    --------
    The paper's medical example at :math:`\alpha=3`, :math:`\epsilon=0.02`:

    >>> from renyi.lift import EXAMPLES, certificate
    >>> cert = certificate(EXAMPLES["medical"], 0.02, 3)
    >>> f"{cert.delta_bar:.4f}", cert.admissible
    ('0.3902', True)
    """
    if not isinstance(model, LeakageModel):
        raise TypeError("model must be a LeakageModel (Theorem 1 needs an invertible P_{X|Y})")
    eps, alpha = check_eps(eps), check_order(order)
    if alpha > MAX_ORDER:
        raise ValueError(
            f"order must be at most {MAX_ORDER:g} for Theorem 1 (its constant K_(alpha,rho) overflows "
            f"double precision beyond), got {alpha:g}"
        )
    a_alpha = alpha * (alpha - 1) / 2
    if alpha * eps > LOG_BUDGET_MAX:
        # e^(alpha eps) overflows; Theorem 1 is far out of reach (it needs rho_eps < 1).
        inf = math.inf
        return Certificate(
            eps=eps, order=alpha, b=inf, r0=inf, delta0=inf, delta_bar=inf, rho=inf, K=inf,
            r_minus=inf, r_plus=inf, V_minus=inf, V0=inf, V_plus=inf, G_minus=inf, G_plus=inf, E=inf,
            admissible=False,
            failing=(f"order * eps = {alpha * eps:.4g}: e^(order*eps) overflows, so rho_eps >= 1",),
        )  # fmt: skip
    b = math.expm1(alpha * eps)
    r0 = math.sqrt(b / a_alpha)
    delta0 = model.kappa_star * r0
    delta_bar = _delta_bar(model, eps, alpha, a_alpha)
    rho_used, failing = _radius(rho, delta0, delta_bar)
    K = taylor_constants(alpha, min(rho_used, 1 - RHO_BELOW_ONE))[2]
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
    return Certificate(
        eps=eps,
        order=alpha,
        b=b,
        r0=r0,
        delta0=delta0,
        delta_bar=delta_bar,
        rho=rho_used,
        K=K,
        r_minus=r_minus,
        r_plus=r_plus,
        V_minus=r_minus**2 * s2,
        V0=r0**2 * s2,
        V_plus=r_plus**2 * s2,
        G_minus=g_minus,
        G_plus=g_plus,
        E=b * s2 * (g_minus + g_plus),
        admissible=not failing,
        failing=tuple(failing),
    )


def _radius(rho, delta0, delta_bar) -> tuple[float, list]:
    """rho_eps (the given rho, or max(delta0, delta_bar)) and the conditions on it that fail."""
    failing = []
    if rho is None:
        rho_used = max(delta0, delta_bar)
        if not rho_used < 1:
            failing.append(f"rho_eps = {rho_used:.4g} >= 1")
        return rho_used, failing
    rho_used = as_real_scalar(rho, "rho")
    if not 0 < rho_used < 1:
        raise ValueError(f"rho must lie in (0, 1), got {rho_used!r}")
    if delta0 > rho_used:
        failing.append(f"delta0 = {delta0:.4g} > rho")
    if delta_bar > rho_used:
        failing.append(f"delta_bar = {delta_bar:.4g} > rho")
    return rho_used, failing


def epsilon_max(model: LeakageModel, order) -> float:
    r"""The largest :math:`\epsilon` at which Theorem 1's certificate applies (conditions (32)).

    Every condition of (32) is monotone in :math:`\epsilon` (:math:`\delta_0`,
    :math:`\bar\delta_\epsilon`, :math:`r_0` and :math:`K_{\alpha,\rho_\epsilon}`
    all increase with it), so the admissible budgets form an interval
    :math:`[0,\epsilon_{\max}]`, found here by bisection to machine precision.
    For :math:`\alpha=3` (:math:`K=1`) it equals :math:`\frac13\log(1+3r^{\star2}_{\rm val})`
    when :math:`r_0\le r^\star_Y` binds first, that is when
    :math:`\sqrt{1+3r^{\star2}_{\rm val}}-1<\min_xP_X(x)` (so that :math:`\bar\delta_\epsilon<1` there);
    otherwise the :math:`\bar\delta_\epsilon` condition binds and it is smaller.

    Parameters
    ----------
    model : LeakageModel
    order : float
        :math:`\alpha>1`.

    Returns
    -------
    float
        :math:`\epsilon_{\max}` (``inf`` if every budget up to 1000 is admissible).

    References
    ----------
    :cite:t:`zamani2026alphalift`, Theorem 1 and its admissibility conditions.

    Examples
    --------
    >>> from renyi.lift import EXAMPLES, epsilon_max
    >>> f"{epsilon_max(EXAMPLES['medical'], 3):.4g}"
    '0.02408'
    """
    alpha = check_order(order)
    hi = 1.0
    while certificate(model, hi, alpha).admissible:
        hi *= 2
        if hi > 1e3:
            return math.inf
    return bisect_feasible(lambda eps: certificate(model, eps, alpha).admissible, 0.0, hi, rtol=EPS_MAX_RTOL)


def renyi_budget_max(model: LeakageModel, order) -> float:
    r""":math:`\eta^{\rm R}_{\max}=\frac{\beta}{\beta-1}\epsilon_{\max}` for point-wise Rényi privacy (eq. 44).

    The constraint :math:`D_\beta(P_{X|U=u}\|P_X)\le\eta` is the α-lift
    constraint with :math:`\alpha=\beta` and :math:`\epsilon=(\beta-1)\eta/\beta`
    (Section III-B).

    Parameters
    ----------
    model : LeakageModel
    order : float
        The Rényi order (the paper's :math:`\beta`), > 1.

    Returns
    -------
    float
        :math:`\eta^{\rm R}_{\max}`.
    """
    order = check_order(order)  # the paper's beta; in code beta is only the softmax sharpness
    return order / (order - 1) * epsilon_max(model, order)


def renyi_certificate(model: LeakageModel, eta, order) -> Certificate:
    r"""Certificate for the point-wise Rényi budget :math:`\eta` at order :math:`\beta` (eqs. 41–44).

    Uses :math:`\epsilon=(\beta-1)\eta/\beta`, so :math:`b=e^{(\beta-1)\eta}-1=b^{\rm R}_\eta`,
    :math:`r_{0,\rm R}`, :math:`\delta_{0,\rm R}`, :math:`r_{-,\rm R}` and
    :math:`\bar\delta^{\rm R}_\eta=\sqrt{(e^\eta-1)/p_{\min}}` (:math:`\beta\ge2`).

    Parameters
    ----------
    model : LeakageModel
    eta : float
        Point-wise Rényi budget :math:`\eta\ge0`.
    order : float
        The Rényi order (the paper's :math:`\beta`), > 1.

    Returns
    -------
    Certificate
    """
    order = check_order(order)  # the paper's beta
    eta = check_eps(eta)
    return certificate(model, (order - 1) * eta / order, order)


def corollary1_value(model: LeakageModel, eps) -> float:
    r"""Corollary 1 (:math:`\alpha=2`): :math:`V_{\chi^2}(\epsilon,2)=(e^{2\epsilon}-1)\sigma^2_{\max}(W)`.

    Valid for :math:`\epsilon\le\frac12\log(1+r^{\star2}_{\rm val})`; raises otherwise.

    Parameters
    ----------
    model : LeakageModel
    eps : float
        :math:`0\le\epsilon\le\frac12\log(1+r^{\star2}_{\rm val})`.

    Returns
    -------
    float
        :math:`V_{\chi^2}(\epsilon,2)`.

    References
    ----------
    :cite:t:`zamani2026alphalift`, Corollary 1.
    """
    eps = check_eps(eps)
    limit = 0.5 * math.log1p(model.r_val**2)
    if eps > limit * (1 + BUDGET_RTOL):
        raise ValueError(f"Corollary 1 needs eps <= log(1 + r_val^2)/2 = {limit:.6g}, got {eps!r}")
    return math.expm1(2 * eps) * model.sigma_max**2
