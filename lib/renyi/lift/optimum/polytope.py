r"""An upper bound for any leakage matrix from a polyhedral outer approximation of the feasible set.

The feasible posteriors :math:`\mathcal Q_\epsilon=\{q\in\Delta:\Phi_\alpha(Aq)\le
e^{\alpha\epsilon}\}` lie in a polytope :math:`R` when the convex budget is replaced by
linear inequalities on :math:`s=Aq` that every point of the budget satisfies:

* a **range** per :math:`x`: :math:`P_X(x)f(r_x)\le\Phi_\alpha-1\le e^{\alpha\epsilon}-1`
  with :math:`r_x=s_x/P_X(x)` and :math:`f(r)=r^\alpha-1-\alpha(r-1)\ge0` (each term of a sum of
  non-negative terms is at most the sum, as in
  :func:`~renyi.lift.optimum.bracket.chi2_radius`), so :math:`r_x` lies between the two roots
  of :math:`P_X(x)f(r)=e^{\alpha\epsilon}-1`;
* **tangent planes** of the convex :math:`\Phi_\alpha` at points :math:`s_0` on or outside
  the budget's boundary: :math:`\nabla\Phi_\alpha(s_0)^{\mathsf T}(s-s_0)\le0` (convexity).

Relaxing the budget to :math:`R` can only raise the optimum, and over a polytope the problem
is a linear program: the objective :math:`g(q)=\|D_Y^{-1/2}(q-P_Y)\|^2` is convex, so the best
decomposition of :math:`P_Y` uses vertices of :math:`R` only, and

.. math::

    V_{\chi^2}\ \le\ \max\Bigl\{\textstyle\sum_vw_vg(v):\ \sum_vw_vv=P_Y,\ w\ge0\Bigr\}
    \ \le\ \lambda^{\mathsf T}P_Y+\max_v\bigl(g(v)-\lambda^{\mathsf T}v\bigr)

for every :math:`\lambda` (weak duality; the LP's dual makes the two equal).  The vertices come
from the double description method: the simplex's vertices, then one inequality at a time,
each new vertex where an edge between a kept and a removed vertex crosses the new plane (two
vertices span an edge when the inequalities active at both, with the sum, have rank
:math:`|\mathcal Y|-1`).
Rounds alternate: solve the LP, cut off each vertex it uses that breaks the budget by the
tangent plane where the segment from :math:`P_X` to it leaves the budget, and update the
vertices.  The bound falls towards :math:`V_{\chi^2}`; when no vertex the LP uses breaks the
budget, it is :math:`V_{\chi^2}` up to rounding.

This is the one bound besides the cones that needs no square invertible :math:`A`; for a
non-square :math:`A` (:math:`|\mathcal X|<|\mathcal Y|`) the null-space directions, which the
budget does not see, are bounded by the facets :math:`q_y\ge0` exactly.  Cost: the number of
vertices grows with every cut (at most a few thousand are kept, ``Heuristics.polytope.vertices``),
and each update compares every removed vertex with every kept one, :math:`O(V^2m)` for
:math:`V` vertices and :math:`m` inequalities.  A derivation of this compendium; the paper
bounds the non-square case by :math:`|\mathcal Y|-1`.

Floating point.  Each vertex is computed by interpolation along an edge, classified against a
plane with a tolerance (``Margins.on_plane``), and points within it count as on the plane, so a
point slightly outside :math:`R` may be kept (which can only raise the bound) but a vertex is
dropped only when clearly cut off.  A new vertex within ``Margins.same_point`` of one already found is
merged into it: near the budget's smooth boundary the cuts nearly coincide, and copies of a
vertex would otherwise multiply with every cut.  Before the bound is reported, linear programs over
:math:`R` itself (HiGHS) in random directions check that no point of :math:`R` lies beyond the
computed vertices; if one does, the bound is not used.  ``tests/test_lift_polytope.py``
compares the vertices with a brute-force enumeration of every basis.
"""

from __future__ import annotations

import math

import numpy as np
from scipy.optimize import linprog
from scipy.spatial import cKDTree

from .._numerics import TINY, power
from .bracket import outer_root
from .settings import SearchSettings

__all__ = ["polytope_bound", "VertexSet", "lift_ranges"]


class VertexSet:
    r"""The vertices of :math:`\{q\in\Delta:Gq\le h\}`, one inequality at a time (double description).

    Parameters
    ----------
    n : int
        The dimension, :math:`|\mathcal Y|`; starts from the simplex's vertices, whose
        inequalities :math:`-q_y\le0` are rows :math:`0..n-1`.
    settings : SearchSettings, optional
        Its margins ``on_plane``, ``same_point``, ``vertex_check`` and
        ``vertex_lp_feasibility``, and the heuristics ``polytope.rank_rtol`` and
        ``polytope.probes`` (default ``SearchSettings()``).
    """

    def __init__(self, n, settings=None):
        self.n = n
        settings = SearchSettings() if settings is None else settings
        self.margins, self.heuristics = settings.margins, settings.heuristics
        self.G = -np.eye(n)
        self.h = np.zeros(n)
        self.V = np.eye(n)
        # active[k, j]: inequality j holds with equality at vertex k
        self.active = ~np.eye(n, dtype=bool)

    def add(self, g, c):
        """Intersect with ``g @ q <= c``; returns the number of vertices it removed."""
        g = np.asarray(g, dtype=float)
        scale = max(1.0, abs(float(c)), float(np.max(np.abs(g))))
        s = self.V @ g - c
        on_plane = self.margins.on_plane * scale
        out, inside = s > on_plane, s < -on_plane
        on = ~(out | inside)
        new_points, new_active = [], []
        outs, ins = np.flatnonzero(out), np.flatnonzero(inside)
        flags = self.active.astype(np.float32)
        # removed vertices in chunks: at most about 2e7 pairs (80 MB) at a time
        step = max(1, 20_000_000 // max(1, ins.size))
        for start in range(0, outs.size if ins.size else 0, step):
            chunk = outs[start : start + step]
            # inequalities active at both, counted by a product of 0/1 matrices; neighbours
            # share at least n - 2 of them (the affine hull has dimension n - 1)
            ii, jj = np.nonzero(flags[chunk] @ flags[ins].T >= self.n - 2.5)
            a, b = chunk[ii], ins[jj]
            common = self.active[a] & self.active[b]
            edge = self._edges(common)
            a, b, common = a[edge], b[edge], common[edge]
            t = (s[a] / (s[a] - s[b]))[:, None]
            new_points.append(self.V[a] + t * (self.V[b] - self.V[a]))
            new_active.append(common)
        keep = ~out
        self.G = np.vstack([self.G, g])
        self.h = np.append(self.h, c)
        active = np.hstack([self.active[keep], on[keep, None]])
        V = self.V[keep]
        if new_points:
            points, common = np.vstack(new_points), np.vstack(new_active)
            V = np.vstack([V, points])
            active = np.vstack([active, np.hstack([common, np.ones((len(points), 1), dtype=bool)])])
            V, active = _merge_copies(V, active, len(V) - len(points), self.margins.same_point)
        self.V, self.active = V, active
        return int(out.sum())

    def _edges(self, common):
        """Which pairs of vertices, by the inequalities active at both, span an edge.

        The smallest face holding both is where those inequalities (and the sum) hold with
        equality; it is an edge when their rank is n - 1.
        """
        edge = np.zeros(len(common), dtype=bool)
        sizes = common.sum(axis=1)
        for size in np.unique(sizes):
            rows = np.flatnonzero(sizes == size)
            idx = np.nonzero(common[rows])[1].reshape(rows.size, size)
            stacked = np.concatenate([self.G[idx], np.ones((rows.size, 1, self.n))], axis=1)
            sv = np.linalg.svd(stacked, compute_uv=False)
            edge[rows] = np.sum(sv > self.heuristics.polytope.rank_rtol * sv[:, :1], axis=1) == self.n - 1
        return edge

    def missing(self, rng):
        """Whether a linear program over the polytope finds a point beyond the vertices."""
        tolerance = self.margins.vertex_lp_feasibility
        exact = {"primal_feasibility_tolerance": tolerance, "dual_feasibility_tolerance": tolerance}
        for _ in range(self.heuristics.polytope.probes):
            c = rng.standard_normal(self.n)
            res = linprog(
                -c, A_ub=self.G, b_ub=self.h, A_eq=np.ones((1, self.n)), b_eq=[1.0], method="highs", options=exact
            )
            if res.status != 0 or -res.fun > float(np.max(self.V @ c)) + self.margins.vertex_check * (1 + abs(res.fun)):
                return True
        return False


def _merge_copies(V, active, old, same_point):
    """Merge each new vertex (rows ``old`` on) into an earlier one within ``same_point``.

    The merged vertex is active where either was.  Near the budget's boundary hundreds of
    tangent planes nearly coincide, and a cut can create a vertex again, a few 1e-13 from
    where it already is, with other active inequalities.  Left alone, both copies count as
    vertices: the next cut's edges from k copies to m copies give k m new points, and the
    copies multiply by thousands within one cut.  Two distinct vertices of the polytope are rarely this close,
    and merging them moves the hull by at most ``same_point``, inside the bound's slack.
    """
    tree = cKDTree(V)
    near = tree.query_ball_point(V[old:], same_point, p=np.inf)
    target = np.arange(len(V))
    for offset, found in enumerate(near):
        j = old + offset
        i = min(found)
        if i < j:  # (an earlier vertex, itself already resolved to a survivor)
            target[j] = target[i]
    merged = np.flatnonzero(target != np.arange(len(V)))
    if merged.size == 0:
        return V, active
    np.logical_or.at(active, target[merged], active[merged])
    survivors = target == np.arange(len(V))
    return V[survivors], active[survivors]


def lift_ranges(p_x, eps, alpha):
    r"""Per-:math:`x` bounds :math:`[l_x,u_x]` on :math:`s_x` of every :math:`s` within the budget.

    With :math:`r_x=s_x/P_X(x)` and :math:`f(r)=r^\alpha-1-\alpha(r-1)\ge0`,
    :math:`\Phi_\alpha(s)-1=\sum_xP_X(x)f(r_x)` (the lifts' weighted mean is 1).  The other
    outputs' lifts average :math:`\rho=1-P_X(x)(r_x-1)/(1-P_X(x))`, so by Jensen they add at
    least :math:`(1-P_X(x))f(\rho)`: the ends are the roots of
    :math:`P_X(x)f(r)+(1-P_X(x))f(\rho)=e^{\alpha\epsilon}-1` on either side of 1, by
    bisection keeping the outer end (clipped to :math:`[0,1/P_X(x)]`), times :math:`P_X(x)`.
    Equal lifts elsewhere reach them, so they are the least and greatest :math:`s_x` within
    the budget (up to the bisection's last step).

    Parameters
    ----------
    p_x : ndarray
        :math:`P_X`, positive.
    eps : float
        :math:`\epsilon>0`.
    alpha : float
        :math:`\alpha>1`.

    Returns
    -------
    lo, hi : ndarray
        :math:`l_x\le s_x\le u_x` for every :math:`s` with :math:`\Phi_\alpha(s)\le e^{\alpha\epsilon}`.
    """
    budget = math.expm1(alpha * eps)
    mass = [float(m) for m in p_x]
    hi = [m * outer_root(m, budget, alpha, 1.0 / m, others=True) for m in mass]
    lo = [m * outer_root(m, budget, alpha, 0.0, others=True) for m in mass]
    return np.array(lo), np.array(hi)


def _phi(s, p_x, alpha):
    return float(np.sum(p_x * power(s / p_x, alpha)))


def _tangent(s, p_x, alpha, budget):
    """A plane ``n @ s' <= c`` through a point on or outside the budget, between P_X and ``s``."""
    lo, hi = 0.0, 1.0
    for _ in range(100):
        mid = 0.5 * (lo + hi)
        if _phi(p_x + mid * (s - p_x), p_x, alpha) <= budget:
            lo = mid
        else:
            hi = mid
    s0 = p_x + hi * (s - p_x)  # Phi(s0) >= budget: the plane supports the budget set
    normal = alpha * power(s0 / p_x, alpha - 1)
    return normal, float(normal @ s0)


def polytope_bound(model, eps, alpha, *, rtol, max_vertices, out_of_time, seed=0, settings=None):
    r"""The LP bound over a polyhedral outer approximation of :math:`\mathcal Q_\epsilon` (module docstring).

    Parameters
    ----------
    model : GeneralLeakageModel
    eps : float
        :math:`\epsilon>0`.
    alpha : float
        :math:`\alpha>1`.
    rtol : float
        No further cut once every vertex the LP uses is within ``rtol / 10`` of the budget
        (relative to :math:`e^{\alpha\epsilon}-1`): moving such a vertex inside loses about
        that fraction of its utility, so the bound is then within about ``rtol`` of a feasible
        value.
    max_vertices : int
        No further cut once the polytope has this many vertices.
    out_of_time : callable
        Returns True when the search must stop; checked between rounds.
    seed : int
        Seed of the completeness check's directions.
    settings : SearchSettings, optional
        The margins of the vertex enumeration and of the cuts (default ``SearchSettings()``).

    Returns
    -------
    bound : float
        A valid upper bound on :math:`V_{\chi^2}(\epsilon,\alpha)`, or ``inf`` when the
        completeness check failed.
    points : ndarray, shape (|Y|, k)
        The vertices the last LP used that meet the budget (candidate posteriors).
    """
    p_y, a, p_x = model.p_y, model.p_x_given_y, model.p_x
    n = p_y.size
    budget = math.exp(alpha * eps)
    settings = SearchSettings() if settings is None else settings
    poly = VertexSet(n, settings)
    lo, hi = lift_ranges(p_x, eps, alpha)
    for x in range(a.shape[0]):
        poly.add(a[x], hi[x])
        poly.add(-a[x], -lo[x])
    while True:
        V = poly.V
        values = np.sum(V * V / p_y, axis=1) - 1.0
        res = linprog(-values, A_eq=V.T, b_eq=p_y, bounds=(0, None), method="highs")
        if res.status != 0:
            return math.inf, np.empty((n, 0))
        used = V[res.x > TINY]
        over = [v for v in used if _phi(a @ v, p_x, alpha) - budget > 0.1 * rtol * (budget - 1)]
        if not over or len(V) >= max_vertices or out_of_time():
            break
        for v in over:
            # (one cut can cost seconds at tens of thousands of vertices: the limits hold
            # between cuts, and the loop's next LP bounds the polytope as it is then)
            if len(poly.V) >= max_vertices or out_of_time():
                break
            normal, offset = _tangent(a @ v, p_x, alpha, budget)
            # outward: covers the rounding of the plane's offset
            poly.add(normal @ a, offset * (1 + settings.margins.plane_offset))
    if poly.missing(np.random.default_rng(seed)):
        return math.inf, np.empty((n, 0))
    lam = -np.asarray(res.eqlin.marginals)
    # each vertex's g is within this of its exact value (coordinates off by at most on_plane)
    slack = (2.0 / float(p_y.min()) + float(np.abs(lam).sum())) * settings.margins.on_plane
    bound = float(lam @ p_y + np.max(values - V @ lam)) + slack
    inside = [v for v in used if _phi(a @ v, p_x, alpha) <= budget]
    return bound, np.array(inside).T.reshape(n, -1)
