r"""The optimal value of problem (3) for any leakage matrix (Theorem 2), with a certificate.

Taught in the chapter *General leakage matrices* (``book/part2``).

Theorem 2 writes :math:`V_{\chi^2}(\epsilon,\alpha)` as the concave envelope at
:math:`P_Y` of the convex :math:`g(q)=\|D_Y^{-1/2}(q-P_Y)\|^2` over the convex
feasible set :math:`\mathcal Q^{\rm ex}_\epsilon=\{q\in\Delta:\Phi_\alpha(q)\le
e^{\alpha\epsilon}\}`.  :func:`global_optimum` brackets it between two numbers:

* a **lower bound**, the utility of an exactly feasible mechanism: a linear
  program over the weights of candidate posteriors (column generation), whose
  support is refined by a local optimiser over the whole mechanism;
* an **upper bound** valid by construction, from weak duality: for *every*
  :math:`\mu`,

  .. math::

      V_{\chi^2}\le U(\mu)=\max_{q\in\mathcal Q^{\rm ex}_\epsilon}
      F_\mu(q),\qquad F_\mu(q)=g(q)-\mu^{\mathsf T}(q-P_Y),

  because any feasible mechanism has :math:`\sum_up_ug(q_u)=\sum_up_uF_\mu(q_u)`.
  :math:`\mu` is the LP's dual, and the maximum of the convex :math:`F_\mu`
  over the convex set is bounded by a *conical branch and bound*: the
  directions from :math:`P_Y` are split into simplicial cones; in each, the
  feasible set lies in a simplex cut off by one supporting hyperplane (a facet
  :math:`q_y\ge0` or a tangent plane of the convex :math:`\Phi_\alpha`), and a
  convex function on a simplex is largest at a vertex.  Cones whose bound is
  below the target are left alone; the others are bisected.

Theorem 1's :math:`V_+` is a second valid upper bound where it is proved
(invertible :math:`A`, :math:`\alpha\ge2`, :math:`\bar\delta_\epsilon<1`), and two
coarse ones always hold (see :func:`global_optimum`); the result reports the
smallest and says which it is.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass

import numpy as np
from scipy import linalg, optimize

from .._validation import as_int, as_real_scalar
from .certificate import certificate
from .channels import LiftMechanism, _build
from .model import GeneralLeakageModel, LeakageModel, _check_alpha, _check_eps

__all__ = ["CertifiedOptimum", "global_optimum"]

#: Posteriors closer than this (max-norm) are one output of the mechanism.
MERGE_TOL = 1e-9
#: Feasibility tolerances of the HiGHS linear programs.
LP_TOLERANCE = 1e-10
#: Rounds of adding priced ray end points to one LP.
PRICING_PASSES = 10
#: Relative safety margin on the upper bound for floating-point round-off.
ROUNDOFF_MARGIN = 1e-12
#: Candidate cuts kept per cone (each gives a valid simplex; the bound uses the best).
CUTS_PER_CONE = 3
#: Bisection steps for the radial extent of the feasible set (2^-60 of a step < 1 ulp).
RADIAL_BISECTIONS = 60


@dataclass(frozen=True)
class CertifiedOptimum(LiftMechanism):
    r"""A feasible mechanism with a certified bracket :math:`[\text{lower},\text{upper}]\ni V_{\chi^2}`.

    Attributes
    ----------
    lower_bound : float
        The utility of this (exactly feasible) mechanism; equals ``utility``.
    upper_bound : float
        A proved upper bound on :math:`V_{\chi^2}(\epsilon,\alpha)`.
    gap : float
        ``(upper_bound - lower_bound) / upper_bound`` (0 when both are 0).
    upper_bound_source : str
        ``"branch-and-bound"`` (weak duality, computed), ``"theorem 1"``
        (:math:`V_+`), ``"D2 relaxation"`` (:math:`\sigma^2_{\max}(e^{\alpha\epsilon/(\alpha-1)}-1)`,
        from :math:`D_2\le D_\alpha`), ``"|Y| - 1"``, or ``"exact"`` (no utility is
        possible).
    certified : bool
        ``gap <= rtol`` as requested.
    elapsed : float
        Seconds spent.
    cones : int
        Cones in the final partition of the branch and bound.
    """

    lower_bound: float = 0.0
    upper_bound: float = math.inf
    gap: float = math.inf
    upper_bound_source: str = ""
    certified: bool = False
    elapsed: float = 0.0
    cones: int = 0


class _Geometry:
    """The feasible set in coordinates c of the affine hull: q = P_Y + B c."""

    def __init__(self, model, eps, alpha):
        self.p, self.A, self.p_x = model.p_y, model.A, model.p_x
        self.alpha, self.eps, self.level = alpha, eps, math.exp(alpha * eps)
        if eps == 0:
            # Perfect privacy forces A q = P_X (Jensen), so q moves in null(A) (Proposition 4).
            self.B = linalg.null_space(self.A)
        else:
            self.B = linalg.null_space(np.ones((1, self.p.size)))
            # Near P_Y the feasible set is the ellipsoid chi^2(Aq || P_X) <= r_0^2; in coordinates
            # where it is a ball, cones bisected by angle stay round relative to it.
            chi2_metric = self.B.T @ (self.A.T @ (self.A / self.p_x[:, None])) @ self.B
            if np.linalg.cond(chi2_metric) < 1e10:
                self.B = self.B @ np.linalg.inv(np.linalg.cholesky(chi2_metric)).T
        self.k = self.B.shape[1]
        self.B_pinv = np.linalg.pinv(self.B)
        self.metric = self.B.T @ (self.B / self.p[:, None])  # g(P_Y + B c) = c^T metric c

    def _phi(self, t, slope):
        return np.sum(self.p_x[:, None] * np.maximum(1 + t * slope, 0.0) ** self.alpha, axis=0)

    def rays(self, r, with_kind=False):
        """Radial extent along unit coordinate directions ``r`` (k, m) and a supporting cut at each end.

        Returns ``t`` (feasible side of the boundary), the end points ``q`` (n_y, m),
        and cuts ``a^T c <= b`` valid for the whole feasible set.
        """
        d = self.B @ r
        with np.errstate(divide="ignore"):
            caps = np.where(d < -1e-15, self.p[:, None] / np.maximum(-d, 1e-300), np.inf)
        facet = np.argmin(caps, axis=0)
        cap = caps[facet, np.arange(r.shape[1])]
        facet_cut_a, facet_cut_b = -self.B.T[:, facet], self.p[facet]
        if self.eps == 0:
            out = cap, self.p[:, None] + cap * d, facet_cut_a, facet_cut_b
            return (*out, np.ones(cap.size, dtype=bool)) if with_kind else out
        slope = (self.A @ d) / self.p_x[:, None]
        on_facet = self._phi(cap, slope) <= self.level
        lo, hi = np.zeros_like(cap), cap.copy()
        for _ in range(RADIAL_BISECTIONS):
            mid = 0.5 * (lo + hi)
            inside = self._phi(mid, slope) <= self.level
            lo = np.where(inside, mid, lo)
            hi = np.where(inside, hi, mid)
        t = np.where(on_facet, cap, lo)
        q = self.p[:, None] + t * d
        # Tangent plane of the convex Phi at a feasible point, shifted by its slack.
        ratio = np.maximum(1 + t * slope, 0.0)
        grad = self.B.T @ (self.alpha * self.A.T @ ratio ** (self.alpha - 1))
        slack = np.maximum(self.level - self._phi(t, slope), 0.0)
        tangent_b = np.sum(grad * (t * r), axis=0) + slack
        a = np.where(on_facet, facet_cut_a, grad)
        b = np.where(on_facet, facet_cut_b, tangent_b)
        return (t, q, a, b, on_facet) if with_kind else (t, q, a, b)


class _ConeTree:
    """A partition of the directions into simplicial cones, each with simplices that contain Q in it."""

    def __init__(self, geo: _Geometry):
        self.geo = geo
        k, p = geo.k, geo.p
        if geo.k == geo.p.size - 1:
            start = geo.B_pinv @ (np.eye(p.size) - p[:, None])  # towards the simplex vertices
        else:
            start = linalg.null_space(np.ones((1, k + 1))).T if k > 1 else np.array([[1.0, -1.0]])
        self.cones = np.array([[j for j in range(k + 1) if j != i] for i in range(k + 1)])
        self.r = np.zeros((k, 0))
        self.t = self.s = self.b = np.zeros(0)
        self.on_facet = np.zeros(0, dtype=bool)
        self.a = np.zeros((k, 0))
        self.pairs = np.array([(i, j) for i in range(k) for j in range(i + 1, k)], dtype=int).reshape(-1, 2)
        self.points = self.add_rays(start / np.linalg.norm(start, axis=0))
        self._sets = ("single", "single_quad", "one", "one_quad", "two", "two_quad")
        for name, value in zip(self._sets, self._simplices(self.cones)):
            setattr(self, name, value)
        self._fresh(len(self.cones))

    def add_rays(self, r):
        t, q, a, b, on_facet = self.geo.rays(r, with_kind=True)
        self.on_facet = np.concatenate([self.on_facet, on_facet])
        self.r = np.concatenate([self.r, r], axis=1)
        self.t, self.b = np.concatenate([self.t, t]), np.concatenate([self.b, b])
        self.a = np.concatenate([self.a, a], axis=1)
        self.s = np.concatenate([self.s, np.einsum("im,ij,jm->m", r, self.geo.metric, r)])
        return q

    def _simplices(self, cones):
        """Outer sets of Q within each cone, in ray coordinates lam (q = P_Y + B sum_i lam_i r_i).

        ``single`` (cones, cuts, k): for each of the best single cuts, Q in the cone lies in
        conv(0, lam_i r_i).  ``pair``: the cone cut by the best facet *and* the best tangent
        plane, a polytope whose vertices have at most two non-zero lam (k - 2 of the k + 2
        constraints lam >= 0 are active at a vertex): ``one`` (cones, k) and
        ``two`` (cones, P, 2) for the P index pairs ``self.pairs``; this is what bounds
        cones that straddle a ridge where a facet meets the curved boundary.
        """
        geo = self.geo
        n_cones, k_r = cones.shape
        rr = self.r[:, cones]                                                  # (k, C, k)
        # A tangent plane at the cone's centre is four times closer to Q than one at a corner.
        centre = rr.sum(axis=2)
        _, _, centre_a, centre_b, centre_facet = geo.rays(centre / np.linalg.norm(centre, axis=0), with_kind=True)
        facets_a = np.repeat(-geo.B.T[:, None, :], n_cones, axis=1)
        cut_a = np.concatenate([self.a[:, cones], centre_a[:, :, None], facets_a], axis=2)   # (k, C, J)
        cut_b = np.concatenate([self.b[cones], centre_b[:, None],
                                np.broadcast_to(geo.p, (n_cones, geo.p.size))], axis=1)
        tangent_kind = np.concatenate([self.on_facet[cones], centre_facet[:, None]], axis=1)
        dots = np.einsum("kcj,kci->cji", cut_a, rr)                            # (C, J, k)
        with np.errstate(divide="ignore", invalid="ignore"):
            lam = np.where(dots > 1e-14, cut_b[:, :, None] / dots, np.inf)
        overshoot = np.max(lam / np.maximum(self.t[cones][:, None, :], 1e-300), axis=2)
        best = np.argsort(overshoot, axis=1)[:, :CUTS_PER_CONE]
        single = np.take_along_axis(lam, best[:, :, None], axis=1)
        # The pair: best tangent cut of the cone's own rays, best facet.
        rows = np.arange(n_cones)
        tangent = np.argmin(np.where(tangent_kind, np.inf, overshoot[:, :k_r + 1]), axis=1)
        facet = k_r + 1 + np.argmin(overshoot[:, k_r + 1:], axis=1)
        d1, d2 = dots[rows, tangent], dots[rows, facet]                        # (C, k)
        b1, b2 = cut_b[rows, tangent][:, None], cut_b[rows, facet][:, None]
        with np.errstate(divide="ignore", invalid="ignore"):
            one = np.minimum(np.where(d1 > 1e-14, b1 / d1, np.inf), np.where(d2 > 1e-14, b2 / d2, np.inf))
            i, j = self.pairs.T
            det = d1[:, i] * d2[:, j] - d1[:, j] * d2[:, i]
            li = (b1 * d2[:, j] - b2 * d1[:, j]) / det
            lj = (b2 * d1[:, i] - b1 * d2[:, i]) / det
        ok = (np.abs(det) > 1e-14) & (li >= 0) & (lj >= 0)
        li, lj = np.where(ok, li, 0.0), np.where(ok, lj, 0.0)
        # F_mu at a vertex is quad - lam . (m . r): store the mu-independent quadratic parts.
        s = self.s[cones]
        cross = np.einsum("kcp,kl,lcp->cp", rr[:, :, i], geo.metric, rr[:, :, j])
        two_quad = li**2 * s[:, i] + 2 * li * lj * cross + lj**2 * s[:, j]
        return (*_finite_parts(single, single**2 * s[:, None, :]), *_finite_parts(one, one**2 * s),
                np.stack([li, lj], axis=-1), two_quad)

    def _set_values(self, m, which):
        """F_mu at its largest vertex for each outer set of the cones ``which`` (m = B^T mu)."""
        cones = self.cones[which]
        mr = (m @ self.r)[cones]
        single = np.max(self.single_quad[which] - self.single[which] * mr[:, None, :], axis=2)
        pair = np.max(self.one_quad[which] - self.one[which] * mr, axis=1)
        if len(self.pairs):
            i, j = self.pairs.T
            two = self.two[which]
            f_two = self.two_quad[which] - two[..., 0] * mr[:, i] - two[..., 1] * mr[:, j]
            pair = np.maximum(pair, np.max(f_two, axis=1))
        return np.maximum(np.minimum(single.min(axis=1), pair), 0.0)  # F_mu(P_Y) = 0 is a vertex too

    def _fresh(self, n):
        """Bookkeeping for ``n`` new cones at the end: not yet evaluated, and their reach."""
        new = slice(len(self.cones) - n, len(self.cones))
        reach = np.maximum(np.max(np.where(np.isfinite(self.single_quad[new]), self.single[new], 0.0), axis=(1, 2)),
                           np.max(self.one[new], axis=1))
        if len(self.pairs):
            reach = np.maximum(reach, np.max(self.two[new].sum(axis=2), axis=1))
        k = self.geo.k
        self.reach = np.concatenate([getattr(self, "reach", np.zeros(0)), reach])
        self.cached = np.concatenate([getattr(self, "cached", np.zeros(0)), np.full(n, np.inf)])
        self.m_at = np.concatenate([getattr(self, "m_at", np.zeros((0, k))), np.zeros((n, k))])

    def ray_values(self, mu):
        """F_mu at every ray's end point (all of them lie in Q)."""
        return self.t**2 * self.s - self.t * ((self.geo.B.T @ mu) @ self.r)

    def ray_points(self, which):
        return self.geo.p[:, None] + self.geo.B @ (self.t[which] * self.r[:, which])

    def bounds(self, mu, target=-np.inf):
        """Upper bound of F_mu over Q within each cone: its largest value at the vertices of an outer set.

        F_mu(P_Y + B c) = c^T metric c - (B^T mu)^T c is convex, so on a polytope it is
        largest at a vertex; the bound is the smallest over the cone's outer sets.  A cone's
        bound moves by at most ``reach * |m - m_at|`` when mu moves (every vertex lies within
        ``reach`` of P_Y), so only cones that might exceed ``target`` are evaluated again; the
        others keep that valid, slightly larger bound.
        """
        m = self.geo.B.T @ mu
        slack = self.reach * np.linalg.norm(m[None, :] - self.m_at, axis=1)
        bounds = self.cached + slack
        stale = np.flatnonzero(bounds > target)
        if stale.size:
            bounds[stale] = self.cached[stale] = self._set_values(m, stale)
            self.m_at[stale] = m
        return bounds

    def split(self, which):
        """Bisect the widest edge of each cone in ``which``; return the new rays' end points."""
        kr = self.cones.shape[1]
        if kr == 1:
            return np.zeros((self.geo.p.size, 0))
        rr = self.r[:, self.cones[which]]
        cosines = np.einsum("kli,klj->lij", rr, rr)
        cosines[:, np.arange(kr), np.arange(kr)] = 2.0
        i, j = np.unravel_index(np.argmin(cosines.reshape(len(which), -1), axis=1), (kr, kr))
        cols = np.arange(len(which))
        mid = rr[:, cols, i] + rr[:, cols, j]
        new = self.r.shape[1] + cols
        points = self.add_rays(mid / np.linalg.norm(mid, axis=0))
        left, right = self.cones[which].copy(), self.cones[which].copy()
        left[cols, i], right[cols, j] = new, new
        keep = np.ones(len(self.cones), dtype=bool)
        keep[which] = False
        children = np.concatenate([left, right])
        self.cones = np.concatenate([self.cones[keep], children])
        for name, value in zip(self._sets, self._simplices(children)):
            setattr(self, name, np.concatenate([getattr(self, name)[keep], value]))
        self.cached, self.m_at = self.cached[keep], self.m_at[keep]
        self.reach = self.reach[keep]
        self._fresh(len(children))
        return points


def _finite_parts(lam, quad):
    """Unbounded vertices (lam = inf) as lam = 0, quad = inf, so F_mu = inf there without NaNs."""
    bounded = np.isfinite(lam)
    return np.where(bounded, lam, 0.0), np.where(bounded, quad, np.inf)


def _gains(model, q):
    return np.sum((q - model.p_y[:, None]) ** 2 / model.p_y[:, None], axis=0)


def _solve_lp(model, q, gains):
    """max gains^T w s.t. q w = P_Y, w >= 0; returns value, weights and the dual mu (mu^T q_j >= g_j)."""
    options = {"primal_feasibility_tolerance": LP_TOLERANCE, "dual_feasibility_tolerance": LP_TOLERANCE}
    res = optimize.linprog(-gains, A_eq=q, b_eq=model.p_y, bounds=(0, None), method="highs-ds", options=options)
    if res.status != 0:  # tight tolerances occasionally stall HiGHS; the polish below restores accuracy
        res = optimize.linprog(-gains, A_eq=q, b_eq=model.p_y, bounds=(0, None), method="highs-ds")
    if res.status != 0:
        raise RuntimeError(f"linear program failed: {res.message}")
    weights = res.x
    # On the basis support the barycentre equations determine the weights exactly.
    support = np.flatnonzero(weights > 1e-12)
    exact, *_ = np.linalg.lstsq(q[:, support], model.p_y, rcond=None)
    if np.all(exact >= 0) and np.allclose(q[:, support] @ exact, model.p_y, atol=1e-14, rtol=0):
        weights = np.zeros_like(weights)
        weights[support] = exact
    return float(gains @ weights), weights, -res.eqlin.marginals


def _solve_priced(model, tree, columns):
    """The LP over ``columns``, with every ray end point that prices above its value added.

    Without this the dual can price points the LP does not see far above the value
    (column generation drops columns), and the bound ``U(mu)`` is loose.
    """
    for _ in range(PRICING_PASSES):
        value, weights, mu = _solve_lp(model, columns, _gains(model, columns))
        priced = tree.ray_values(mu)
        # HiGHS's dual feasibility tolerance is absolute: reduced costs below it are noise.
        violated = np.flatnonzero(priced > value * (1 + 1e-9) + LP_TOLERANCE)
        if violated.size == 0:
            break
        worst = violated[np.argsort(-priced[violated])][:500]
        columns = np.concatenate([columns, tree.ray_points(worst)], axis=1)
    # Any mu gives a valid bound U(mu); these passes only make it tight.
    return columns, value, weights, mu


def _pull_inside(geo, q):
    """Project points onto the feasible set along rays from P_Y (exactly feasible end points)."""
    c = geo.B_pinv @ (q - geo.p[:, None])
    norm = np.linalg.norm(c, axis=0)
    keep = norm > 1e-13
    if not np.any(keep):
        return np.zeros((geo.p.size, 0))
    r = c[:, keep] / norm[keep]
    t, ends, _, _ = geo.rays(r)
    scale = np.minimum(norm[keep], t)
    return geo.p[:, None] + geo.B @ (scale * r)


def _polish_mechanism(geo, q, w, max_iter):
    """Local optimum of sum_u w_u g(q_u) over the whole mechanism (SLSQP), started from (q, w)."""
    p, A, p_x, alpha = geo.p, geo.A, geo.p_x, geo.alpha
    n_y, n_u = q.shape
    log_level = math.log(geo.level) if geo.eps > 0 else 0.0
    split = n_y * n_u

    def unpack(x):
        return x[:split].reshape(n_y, n_u), x[split:]

    def objective(x):
        qq, ww = unpack(x)
        d = qq - p[:, None]
        gains = np.sum(d * d / p[:, None], axis=0)
        return -ww @ gains, -np.concatenate([(2 * d / p[:, None] * ww).ravel(), gains])

    rows = np.arange(n_y)[:, None] * n_u + np.arange(n_u)[None, :]

    def equalities(x):
        qq, ww = unpack(x)
        return np.concatenate([qq @ ww - p, qq.sum(axis=0) - 1])

    def equalities_jac(x):
        qq, ww = unpack(x)
        jac = np.zeros((n_y + n_u, split + n_u))
        jac[np.repeat(np.arange(n_y), n_u), rows.ravel()] = np.tile(ww, n_y)
        jac[:n_y, split:] = qq
        jac[n_y + np.tile(np.arange(n_u), n_y), rows.ravel()] = 1.0
        return jac

    def privacy(x):
        z = np.maximum(A @ unpack(x)[0] / p_x[:, None], 1e-300)
        return log_level - np.log(np.sum(p_x[:, None] * z**alpha, axis=0))

    def privacy_jac(x):
        z = np.maximum(A @ unpack(x)[0] / p_x[:, None], 1e-300)
        grad = -(alpha * A.T @ z ** (alpha - 1)) / np.sum(p_x[:, None] * z**alpha, axis=0)
        jac = np.zeros((n_u, split + n_u))
        jac[np.tile(np.arange(n_u), n_y), rows.ravel()] = grad.ravel()
        return jac

    constraints = [{"type": "eq", "fun": equalities, "jac": equalities_jac}]
    if geo.eps > 0:
        constraints.append({"type": "ineq", "fun": privacy, "jac": privacy_jac})
    else:
        constraints.append({"type": "eq", "fun": lambda x: (A @ unpack(x)[0] - p_x[:, None]).ravel()})
    res = optimize.minimize(objective, np.concatenate([q.ravel(), w]), jac=True, method="SLSQP",
                            bounds=[(0.0, 1.0)] * (split + n_u), constraints=constraints,
                            options={"maxiter": max_iter, "ftol": 1e-16})
    return unpack(res.x)[0]


def _price_locally(geo, mu, starts, max_iter):
    """Local maxima of F_mu over the feasible set (SLSQP), from each start (columns)."""
    p, A, p_x, alpha = geo.p, geo.A, geo.p_x, geo.alpha
    log_level = math.log(geo.level) if geo.eps > 0 else 0.0

    def objective(q):
        d = q - p
        return -(np.sum(d * d / p) - mu @ d), -(2 * d / p - mu)

    def privacy(q):
        return log_level - math.log(max(np.sum(p_x * np.maximum(A @ q / p_x, 0.0) ** alpha), 1e-300))

    def privacy_jac(q):
        z = np.maximum(A @ q / p_x, 0.0)
        return -(alpha * A.T @ z ** (alpha - 1)) / np.sum(p_x * z**alpha)

    constraints = [{"type": "eq", "fun": lambda q: q.sum() - 1, "jac": lambda q: np.ones_like(q)}]
    if geo.eps > 0:
        constraints.append({"type": "ineq", "fun": privacy, "jac": privacy_jac})
    else:
        constraints.append({"type": "eq", "fun": lambda q: A @ q - p_x, "jac": lambda q: A})
    found = [optimize.minimize(objective, q0, jac=True, method="SLSQP", bounds=[(0.0, 1.0)] * p.size,
                               constraints=constraints, options={"maxiter": max_iter, "ftol": 1e-15}).x
             for q0 in starts.T]
    return np.array(found).T if found else np.zeros((p.size, 0))


def _merge(q, w):
    """Merge coincident posteriors (convexity keeps the merged point feasible and the barycentre fixed)."""
    order = np.argsort(-w)
    q, w = q[:, order], w[order]
    merged_q, merged_w = [], []
    for j in range(w.size):
        for i, qi in enumerate(merged_q):
            if np.max(np.abs(qi - q[:, j])) < MERGE_TOL:
                total = merged_w[i] + w[j]
                merged_q[i] = (merged_w[i] * qi + w[j] * q[:, j]) / total
                merged_w[i] = total
                break
        else:
            merged_q.append(q[:, j].copy())
            merged_w.append(w[j])
    return np.array(merged_q).T, np.array(merged_w)


def _prune(model, geo, q, w, *, tolerance):
    """Drop outputs, lightest first, while the LP on the rest loses at most ``tolerance`` (relative).

    Degenerate LPs spread the weight over several nearly equivalent posteriors, or keep
    outputs with weights like 1e-6 whose presence depends on round-off; the support of
    the solution is what Proposition 1 counts.
    """
    value = float(_gains(model, q) @ w)
    for _ in range(w.size):
        for drop in np.argsort(w):
            rest = q[:, np.delete(np.arange(w.size), drop)]
            # Two outputs must lie on one line through P_Y; only those points are tried then.
            lines = _lines_through_centre(geo, rest)
            rest = lines if rest.shape[1] == 2 else np.concatenate([rest, lines], axis=1)
            try:
                new_value, new_w, _ = _solve_lp(model, rest, _gains(model, rest))
            except RuntimeError:
                continue
            exact = np.allclose(rest @ new_w, model.p_y, atol=1e-13, rtol=0)
            if exact and new_value >= value * (1 - tolerance) and np.count_nonzero(new_w) < w.size:
                q, w = rest[:, new_w > 0], new_w[new_w > 0]
                break
        else:
            break
    return q, w


def _closed_form_upper_bounds(model, eps, alpha):
    """Upper bounds that need no search, with their names.

    * ``"theorem 1"``: V_+ where its proof applies (invertible A, alpha >= 2,
      delta_bar < 1, A_alpha > K delta_bar);
    * ``"D2 relaxation"``: for alpha >= 2, D_2 <= D_alpha gives chi^2(P_{X|U=u} || P_X)
      <= e^{alpha eps/(alpha-1)} - 1 for every output, and chi^2(P_{Y|U=u} || P_Y) =
      ||W Z_u||^2 <= sigma_max^2 ||Z_u||^2 (invertible A);
    * ``"|Y| - 1"``: chi^2(Y; U) <= min(|Y|, |U|) - 1 always.
    """
    bounds = [(float(model.p_y.size - 1), "|Y| - 1")]
    if isinstance(model, LeakageModel) and alpha >= 2 and eps > 0:
        bounds.append((model.sigma_max**2 * math.expm1(alpha * eps / (alpha - 1)), "D2 relaxation"))
        cert = certificate(model, eps, alpha)
        if cert.delta_bar < 1 and cert.rho < 1 and math.isfinite(cert.V_plus):
            bounds.append((cert.V_plus, "theorem 1"))
    return bounds


def global_optimum(model, eps, order, *, rtol: float = 1e-6, time_limit: float | None = 120.0,
                   seed: int = 0, max_cones: int = 1_000_000) -> CertifiedOptimum:
    r"""Bracket the optimal value of problem (3) for any leakage matrix (Theorem 2).

    Parameters
    ----------
    model : LeakageModel or GeneralLeakageModel
    eps : float
        :math:`\epsilon\ge0`; at 0 the posteriors move in :math:`\operatorname{null}(A)`
        (Proposition 4).
    order : float
        :math:`\alpha>1`.
    rtol : float, default 1e-6
        Target relative gap ``(upper - lower) / upper``.
    time_limit : float or None, default 120
        Seconds after which the search stops and returns the bracket it has
        (checked between rounds).  ``None``: no limit.
    seed : int, default 0
        Seed of the random directions of the initial cover (the result is
        deterministic for a given seed).
    max_cones : int, default 1_000_000
        Memory guard: the branch and bound stops refining beyond this many cones
        (about 100 bytes per cone and dimension).

    Returns
    -------
    CertifiedOptimum
        An exactly feasible mechanism (``utility`` = ``lower_bound``, recomputed
        from its channel) with ``upper_bound``, ``gap``, ``upper_bound_source``
        and ``certified``.  Coincident posteriors are merged, so
        ``len(p_u)`` is the support of the solution, at most :math:`|\mathcal Y|`
        (Proposition 1).

    Notes
    -----
    The lower bound comes from a linear program over candidate posteriors
    (HiGHS dual simplex; its vertex solution has at most :math:`|\mathcal Y|`
    outputs), whose candidates are the end points of the branch and bound's rays
    and the result of a local optimiser (SLSQP) over the whole mechanism,
    started from the LP's support.  The upper bound is the weak-duality bound
    :math:`U(\mu)` of the module docstring, evaluated by conical branch and
    bound, or Theorem 1's :math:`V_+` if smaller.  Both are valid whatever the
    time limit; only the gap depends on it.

    Cost.  Each round solves one LP and evaluates every cone's simplex bound,
    :math:`\mathcal O(\text{cones}\times|\mathcal Y|)`.  The number of cones needed for a
    given gap grows exponentially with :math:`|\mathcal Y|`: on two cores, gaps
    below :math:`10^{-6}` take about a second at :math:`|\mathcal Y|\le6`; at
    :math:`|\mathcal Y|\ge10` the branch and bound rarely closes the gap within a
    minute and Theorem 1's :math:`V_+` is often the better upper bound.  The
    benchmark (``make bench``) and the chapter report measured gaps.

    References
    ----------
    :cite:t:`zamani2026alphalift`, Theorem 2 and Proposition 1.
    """
    eps, alpha = _check_eps(eps), _check_alpha(order)
    if not isinstance(model, GeneralLeakageModel):
        raise TypeError(f"model must be a LeakageModel or GeneralLeakageModel, got {type(model).__name__}")
    rtol = as_real_scalar(rtol, "rtol")
    if not 0 < rtol < 1:
        raise ValueError(f"rtol must lie in (0, 1), got {rtol!r}")
    if time_limit is not None:
        time_limit = as_real_scalar(time_limit, "time_limit")
        if time_limit <= 0:
            raise ValueError(f"time_limit must be > 0 seconds or None, got {time_limit!r}")
    max_cones = as_int(max_cones, "max_cones")
    started = time.perf_counter()

    def out_of_time():
        return time_limit is not None and time.perf_counter() - started > time_limit

    geo = _Geometry(model, eps, alpha)
    if geo.k == 0:  # invertible A at eps = 0: only the trivial mechanism is private
        mech = _build(model, np.array([1.0]), model.p_y[:, None], eps, alpha)
        return _certified(mech, 0.0, "exact", rtol, started, 0)

    tree = _ConeTree(geo)
    rng = np.random.default_rng(seed)
    cover = rng.standard_normal((geo.k, 200 * geo.k))
    _, cover_points, _, _ = geo.rays(cover / np.linalg.norm(cover, axis=0))
    columns = np.concatenate([model.p_y[:, None], tree.points, cover_points, _seed_points(model, geo)], axis=1)
    columns, value, weights, mu = _solve_priced(model, tree, columns)
    polish_iter = 200 if model.p_y.size <= 12 else 60
    best_upper, rounds = math.inf, 0
    while True:
        rounds += 1
        if rounds == 1 or rounds % 8 == 0:
            columns, value, weights, mu = _improve(model, geo, tree, columns, weights, polish_iter)
        bounds = tree.bounds(mu, target=value * (1 + 0.5 * rtol))
        upper_here = max(value, float(bounds.max()))
        best_upper = min(best_upper, upper_here)
        target = value * (1 + 0.5 * rtol)
        done = best_upper - value <= rtol * best_upper
        if done or out_of_time() or len(tree.cones) >= max_cones:
            break
        live = np.flatnonzero(bounds > target)
        live = live[np.argsort(-bounds[live])][: max(1, min(len(live), max_cones - len(tree.cones), 20_000))]
        new = tree.split(live)
        priced = _gains(model, new) - mu @ (new - model.p_y[:, None])
        support = columns[:, weights > 1e-13]
        reduced = _gains(model, columns) - mu @ (columns - model.p_y[:, None])
        columns = np.concatenate([model.p_y[:, None], support, new[:, priced > value * (1 - 1e-3)],
                                  columns[:, np.argsort(-reduced)[:200]]], axis=1)
        columns, value, weights, mu = _solve_priced(model, tree, columns)
    support = weights > 1e-13
    q, w = _prune(model, geo, *_merge(columns[:, support], weights[support]), tolerance=0.01 * rtol)
    mech = _build(model, w, q, eps, alpha)
    upper = best_upper * (1 + ROUNDOFF_MARGIN) + 1e-300
    source = "branch-and-bound"
    for bound, name in _closed_form_upper_bounds(model, eps, alpha):
        if bound < upper:
            upper, source = bound, name
    return _certified(mech, max(upper, mech.utility), source, rtol, started, len(tree.cones))


def _improve(model, geo, tree, columns, weights, max_iter):
    """Polish the LP's support as a whole mechanism, then price locally from the best columns."""
    support = weights > 1e-13
    polished = _polish_mechanism(geo, columns[:, support], weights[support], max_iter)
    columns = np.concatenate([columns, _pull_inside(geo, polished), _lines_through_centre(geo, polished)], axis=1)
    columns, value, weights, mu = _solve_priced(model, tree, columns)
    reduced = _gains(model, columns) - mu @ (columns - model.p_y[:, None])
    starts = columns[:, np.argsort(-reduced)[: min(12, columns.shape[1])]]
    columns = np.concatenate([columns, _pull_inside(geo, _price_locally(geo, mu, starts, max_iter))], axis=1)
    return _solve_priced(model, tree, columns)


def _lines_through_centre(geo, q):
    """Both end points of the line through P_Y parallel to q_i - q_j, for every pair of columns of q.

    A two-output optimum lies on such a line; candidates found by a local optimiser are
    only nearly collinear with P_Y, and the LP would then need a third output of tiny weight.
    """
    n = q.shape[1]
    if n < 2:
        return np.zeros((geo.p.size, 0))
    i, j = np.triu_indices(n, 1)
    c = geo.B_pinv @ (q[:, i] - q[:, j])
    c = c[:, np.linalg.norm(c, axis=0) > 1e-13]
    if c.shape[1] == 0:
        return np.zeros((geo.p.size, 0))
    c = c / np.linalg.norm(c, axis=0)
    return geo.rays(np.concatenate([c, -c], axis=1))[1]


def _seed_points(model, geo):
    """End points along A^{-1} D_X^{1/2} v_i for the right singular vectors of W, both signs."""
    if not isinstance(model, LeakageModel) or geo.eps == 0:
        return np.zeros((model.p_y.size, 0))
    _, _, vt = np.linalg.svd(model.W)
    c = geo.B_pinv @ np.linalg.solve(model.A, np.sqrt(model.p_x)[:, None] * vt.T)
    c = c[:, np.linalg.norm(c, axis=0) > 1e-12]
    c = np.concatenate([c, -c], axis=1)
    return geo.rays(c / np.linalg.norm(c, axis=0))[1]


def _certified(mech, upper, source, rtol, started, cones):
    lower = mech.utility
    gap = (upper - lower) / upper if upper > 0 else 0.0
    fields = {name: getattr(mech, name) for name in LiftMechanism.__dataclass_fields__}
    return CertifiedOptimum(**fields, lower_bound=lower, upper_bound=float(upper), gap=max(gap, 0.0),
                            upper_bound_source=source, certified=gap <= rtol,
                            elapsed=time.perf_counter() - started, cones=cones)
