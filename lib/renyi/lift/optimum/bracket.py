"""The two ends of the reported bracket.

An exactly feasible mechanism and the smallest proved
upper bound, and the :class:`CertifiedOptimum` that holds them.
"""

from __future__ import annotations

import math
import time
import warnings
from dataclasses import dataclass

from .._numerics import TINY
from ..certificate import certificate
from ..channels import LiftMechanism, budget_use, build_mechanism, from_channel
from ..model import LeakageModel
from .lp import exact_weights
from .settings import Margins

__all__ = ["CertifiedOptimum", "chi2_radius"]


@dataclass(frozen=True)
class CertifiedOptimum(LiftMechanism):
    r"""A feasible mechanism with a certified bracket :math:`[\text{lower},\text{upper}]\ni V_{\chi^2}`.

    Attributes
    ----------
    lower_bound : float
        The utility of this mechanism; equals ``utility``.  For :math:`\epsilon>0` the
        mechanism meets the budget exactly: its lifts are checked in decimal arithmetic with no
        tolerance (:func:`~renyi.lift.channels.budget_use`), and its χ² is rounded down.
    upper_bound : float
        A proved upper bound on :math:`V_{\chi^2}(\epsilon,\alpha)`.
    gap : float
        ``(upper_bound - lower_bound) / upper_bound`` (0 when both are 0).  Never raised or
        clipped: a negative gap would mean an inconsistent bracket, which is warned about
        and not certified.
    upper_bound_source : str
        ``"branch-and-bound"`` (weak duality, computed over cones), ``"box branch-and-bound"``
        (weak duality, computed over boxes with a concave Lagrangian), ``"polytope relaxation"``
        (the LP over a polyhedral outer approximation of the budget), ``"theorem 1"``
        (:math:`V_+`), ``"D2 relaxation"`` (:math:`\sigma^2_{\max}(e^{\alpha\epsilon/(\alpha-1)}-1)`,
        from :math:`D_2\le D_\alpha`, for :math:`\alpha\ge2`), ``"chi2 relaxation"``
        (:math:`\sigma^2_{\max}` times :func:`chi2_radius`, for :math:`1<\alpha<2`),
        ``"|Y| - 1"``, or ``"exact"`` (no utility is possible).
    certified : bool
        ``0 <= gap <= rtol`` as requested.
    elapsed : float
        Seconds spent.
    cones : int
        Cones in the final partition of the conical branch and bound.
    boxes : int
        Boxes in the final partition of the box branch and bound (0 when it did not run).
    bounds_run : tuple of str
        Every upper bound that was computed, by the names of ``upper_bound_source``: which
        run depends on the matrix (a square invertible :math:`A` gets the box branch and
        bound, Theorem 1 and the :math:`D_2` relaxation, or below order 2 the
        :math:`\chi^2` relaxation, whichever class holds it), on :math:`\alpha` and
        :math:`\epsilon>0`.
    """

    lower_bound: float = 0.0
    upper_bound: float = math.inf
    gap: float = math.inf
    upper_bound_source: str = ""
    certified: bool = False
    elapsed: float = 0.0
    cones: int = 0
    boxes: int = 0
    bounds_run: tuple = ()


def closed_form_upper_bounds(model, eps, alpha, margins=None):
    """Upper bounds that need no search, with their names.

    * ``"theorem 1"``: V_+ where its proof applies (invertible A, alpha >= 2,
      delta_bar < 1, A_alpha > K delta_bar);
    * ``"D2 relaxation"``: for alpha >= 2, D_2 <= D_alpha gives chi^2(P_{X|U=u} || P_X)
      <= e^{alpha eps/(alpha-1)} - 1 for every output, and chi^2(P_{Y|U=u} || P_Y) =
      ||W Z_u||^2 <= sigma_max^2 ||Z_u||^2 (invertible A);
    * ``"chi2 relaxation"``: for 1 < alpha < 2, the same with the radius of
      :func:`chi2_radius`, where D_2 <= D_alpha fails;
    * ``"|Y| - 1"``: chi^2(Y; U) <= min(|Y|, |U|) - 1 always.

    All but the last need a square invertible A, whichever class holds it (``LeakageModel.of``).
    ``margins`` (default ``Margins()``) holds the chi^2 radius's rounding margins.
    """
    bounds = [(float(model.p_y.size - 1), "|Y| - 1")]
    invertible = LeakageModel.of(model)
    if invertible is not None and alpha > 1 and eps > 0:
        radius = output_chi2_radius(invertible.p_x, eps, alpha, margins)
        bounds.append((invertible.sigma_max**2 * radius, "D2 relaxation" if alpha >= 2 else "chi2 relaxation"))
    if invertible is not None and alpha >= 2 and eps > 0:
        model = invertible
        cert = certificate(model, eps, alpha)
        if cert.delta_bar < 1 and cert.rho < 1 and math.isfinite(cert.V_plus):
            bounds.append((cert.V_plus, "theorem 1"))
    return bounds


def _excess(ratio, alpha):
    """f(r) = r^alpha - 1 - alpha (r - 1) >= 0, accurately near r = 1."""
    d = ratio - 1.0
    if ratio <= 0.0:
        return alpha - 1.0  # f(0); log1p(-1) is outside math's domain
    return math.expm1(alpha * math.log1p(d)) - alpha * d


def _curvature_floor(ratio, alpha, margins):
    """A lower bound on h(r) = f(r) / (r - 1)^2 for r >= 1 and 1 < alpha < 2 (h decreases in r).

    h(r) = alpha (alpha - 1) int_0^1 (1 - t) (1 + t (r - 1))^(alpha - 2) dt >= alpha (alpha - 1)
    r^(alpha - 2) / 2, free of cancellation; away from r = 1 (``margins.curvature_span``) the
    exact quotient, less ``margins.curvature_quotient`` of it for its rounding, is larger and
    used instead.
    """
    floor = 0.5 * alpha * (alpha - 1) * ratio ** (alpha - 2)
    d = ratio - 1.0
    if d > margins.curvature_span:
        floor = max(floor, _excess(ratio, alpha) / (d * d) * (1 - margins.curvature_quotient))
    return floor


def _share(ratio, mass, alpha, others):
    """One output's least share of Phi_alpha - 1 at lift ``ratio``, divided by its ``mass``.

    ``f(r)`` alone, or with ``others`` also the least the other outputs add: their ratios
    average ``rho = 1 - mass (r - 1) / (1 - mass)`` (the lifts' weighted mean is 1), and
    ``f`` is convex, so by Jensen they add at least ``(1 - mass) f(rho)``.
    """
    share = _excess(ratio, alpha)
    if others and mass < 1.0:
        share += (1.0 - mass) / mass * _excess(1.0 - mass * (ratio - 1.0) / (1.0 - mass), alpha)
    return share


def outer_root(mass, budget, alpha, outer, others=False):
    """The root of ``mass * f(r) = budget`` between 1 and ``outer``, rounded outwards.

    ``f(r) = r^alpha - 1 - alpha (r - 1)`` (:func:`_excess`, accurate near r = 1) is
    monotone on each side of 1, so bisection between 1 and ``outer`` (``1 / mass`` above, 0
    below) keeps the end beyond the root: the interval it bounds contains every ratio within
    the budget.  ``outer`` itself when the budget does not bind before it.  With ``others``
    the other outputs' least share is added to ``mass * f(r)`` (:func:`_share`; still
    monotone on each side of 1, and a narrower interval).
    """
    target = budget / mass
    if _share(outer, mass, alpha, others) <= target:
        return outer
    inner = 1.0  # share(inner) <= target < share(outer)
    for _ in range(200):
        mid = 0.5 * (inner + outer)
        if mid in (inner, outer):
            break
        inner, outer = (mid, outer) if _share(mid, mass, alpha, others) <= target else (inner, mid)
    return outer


def chi2_radius(p_x, eps, alpha, margins=None):
    r"""The largest :math:`\chi^2(P_{X|U=u}\|P_X)` of an output within an α-lift budget, :math:`1<\alpha<2`.

    With :math:`r_x=P_{X|U=u}(x)/P_X(x)` and :math:`f(r)=r^\alpha-1-\alpha(r-1)\ge0`,
    :math:`\sum_xP_X(x)f(r_x)=\Phi_\alpha-1\le e^{\alpha\epsilon}-1` because
    :math:`\sum_xP_X(x)(r_x-1)=0`.  Each term is at most the sum, so
    :math:`r_x\le R_x`, the root above 1 of :math:`P_X(x)f(r)=e^{\alpha\epsilon}-1`
    (and :math:`r_x\le1/P_X(x)` always).  For :math:`\alpha<2`, :math:`h(r)=f(r)/(r-1)^2`
    decreases in :math:`r` (its integral form has the decreasing factor
    :math:`(1+t(r-1))^{\alpha-2}`), so :math:`f(r_x)\ge h(R)(r_x-1)^2` with
    :math:`R=\max_xR_x`, and

    .. math::

        \chi^2(P_{X|U=u}\|P_X)=\sum_xP_X(x)(r_x-1)^2\le\frac{e^{\alpha\epsilon}-1}{h(R)} .

    As :math:`\epsilon\to0`, :math:`R\to1` and the radius tends to
    :math:`2\epsilon/(\alpha-1)`, the first-order size of the set.  A derivation of this
    compendium (the paper's relaxation needs :math:`D_2\le D_\alpha`, i.e. :math:`\alpha\ge2`).

    Parameters
    ----------
    p_x : ndarray
        :math:`P_X`, positive.
    eps : float
        :math:`\epsilon>0`.
    alpha : float
        :math:`1<\alpha<2`.
    margins : Margins, optional
        The rounding margins of the curvature's lower bound (default ``Margins()``).

    Returns
    -------
    float
    """
    budget = math.expm1(alpha * eps)
    largest = max([1.0] + [outer_root(float(mass), budget, alpha, 1.0 / float(mass)) for mass in p_x])
    return budget / _curvature_floor(largest, alpha, Margins() if margins is None else margins)


def output_chi2_radius(p_x, eps, alpha, margins=None):
    """A bound of chi^2(P_{X|U=u} || P_X) for every output within the budget, alpha > 1.

    e^{alpha eps / (alpha - 1)} - 1 by D_2 <= D_alpha for alpha >= 2, :func:`chi2_radius` below.
    """
    return math.expm1(alpha * eps / (alpha - 1)) if alpha >= 2 else chi2_radius(p_x, eps, alpha, margins)


def best_upper_bound(model, eps, alpha, computed, settings):
    """The smallest valid upper bound, its name, and the names of every bound that ran."""
    upper, source, ran = math.inf, "", []
    for bound, name in computed:
        ran.append(name)
        if bound * (1 + settings.margins.upper_bound) + TINY < upper:
            upper, source = bound * (1 + settings.margins.upper_bound) + TINY, name
    for bound, name in closed_form_upper_bounds(model, eps, alpha, settings.margins):
        ran.append(name)
        # The closed forms are evaluated in floats too (sigma_max by an SVD).
        bound = bound * (1 + settings.margins.upper_bound) + TINY
        if bound < upper:
            upper, source = bound, name
    return upper, source, tuple(ran)


def feasible_mechanism(model, w, q, eps, alpha, settings):
    """The mechanism of outputs ``q`` (feasible posteriors) with weights ``w``, exactly feasible.

    The channel is built from (w, q), and its own posteriors differ from q as much as q w
    misses P_Y.  Where that makes a lift exceed e^eps (by the library's tolerance), the
    weights are re-solved exactly, and failing that the outputs move towards P_Y (strictly
    inside Q, a convex set containing P_Y) by 1e-9, 1e-8, ... of their distance: the utility
    loses about twice that, which the reported lower bound and gap include.
    """
    mech = build_mechanism(model, w, q, eps, alpha)
    if not mech.feasible:
        w = exact_weights(model, q, w, settings)
        for shrink in [0.0] + [10.0**-j for j in range(9, 2, -1)]:
            mech = build_mechanism(model, w, model.p_y[:, None] + (1 - shrink) * (q - model.p_y[:, None]), eps, alpha)
            if mech.feasible:
                break
    return within_budget(model, mech, eps, alpha) if eps > 0 else mech


def within_budget(model, mech, eps, alpha):
    """``mech``, or its channel moved towards P_U until it meets the budget exactly (no tolerance).

    ``feasible`` allows 1e-10 of the budget; a certified optimum allows nothing.  Along
    P_U + t (P_{U|Y} - P_U) every posterior moves to P_Y + t (q_u - P_Y), so the outputs'
    barycentre stays P_Y, and Phi_u - 1 is convex in t and 0 at t = 0, hence at most
    t (Phi_u(1) - 1): t = 1 / use meets the budget in exact arithmetic, and t = use^(-1/2),
    tried first, where Phi_u - 1 is nearly quadratic in t (small budgets).  The utility scales
    by t^2; the reported lower bound is that of the returned channel.
    """
    use = budget_use(model, mech.p_u_given_y, eps, alpha)
    if use <= 1:
        return mech
    centre = mech.p_u[:, None]
    for t in [use**-0.5, 1 / use] + [(1 - 10.0**-k) / use for k in range(12, 5, -1)]:
        channel = centre + t * (mech.p_u_given_y - centre)
        channel = channel / channel.sum(axis=0, keepdims=True)
        if budget_use(model, channel, eps, alpha) <= 1:
            return from_channel(model, channel, eps, alpha)
    raise RuntimeError(f"could not bring the mechanism within the budget (it used {use:.17g} of it)")


def certified(mech, upper, source, rtol, started, pieces, bounds_run=()):
    """The :class:`CertifiedOptimum` of ``mech`` and the upper bound ``upper`` (warned if below it)."""
    lower = mech.utility
    gap = (upper - lower) / upper if upper > 0 else 0.0
    if upper < lower:
        # Never hidden by raising the upper bound to the utility: one of the two is wrong.
        warnings.warn(
            f"global_optimum: the upper bound {upper!r} ({source}) is below the utility {lower!r} of a "
            "mechanism checked to meet the budget; the bracket is inconsistent and not certified",
            RuntimeWarning,
            stacklevel=3,
        )
    fields = {name: getattr(mech, name) for name in LiftMechanism.__dataclass_fields__}
    cones, boxes = pieces
    return CertifiedOptimum(
        **fields,
        lower_bound=lower,
        upper_bound=float(upper),
        gap=gap,
        upper_bound_source=source,
        certified=0 <= gap <= rtol,
        elapsed=time.perf_counter() - started,
        cones=cones,
        boxes=boxes,
        bounds_run=tuple(bounds_run),
    )
