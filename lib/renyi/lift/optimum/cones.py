r"""The geometry of the conical branch and bound behind :func:`~renyi.lift.optimum.global_optimum`.

Directions from :math:`P_Y` are split into simplicial cones.  For each ray, the radial
extent of the feasible set :math:`\mathcal Q^{\rm ex}_\epsilon` and a supporting hyperplane at
its end (a facet :math:`q_y\ge0` or a tangent plane of the convex :math:`\Phi_\alpha`) are
computed once; in each cone the feasible set then lies in polytopes cut off by those
planes, and a convex function on a polytope is largest at one of its vertices.  Taught in
the chapter *General leakage matrices* (``book/part2``).
"""

from __future__ import annotations

import math
import time

import numpy as np
from scipy import linalg

from .._numerics import PARALLEL, TINY, ZERO_COMPONENT, bisect_feasible, power

__all__: list[str] = []


class Geometry:
    """The feasible set in coordinates c of the affine hull: q = P_Y + B c."""

    def __init__(self, model, eps, alpha, settings):
        self.settings = settings
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
        return np.sum(self.p_x[:, None] * power(np.maximum(1 + t * slope, 0.0), self.alpha), axis=0)

    def rays(self, r, with_kind=False):
        """Radial extent along unit coordinate directions ``r`` (k, m) and a supporting cut at each end.

        Returns ``t`` (feasible side of the boundary), the end points ``q`` (n_y, m),
        and cuts ``a^T c <= b`` valid for the whole feasible set.
        """
        d = self.B @ r
        with np.errstate(divide="ignore"):
            caps = np.where(d < -ZERO_COMPONENT, self.p[:, None] / np.maximum(-d, TINY), np.inf)
        facet = np.argmin(caps, axis=0)
        cap = caps[facet, np.arange(r.shape[1])]
        facet_cut_a, facet_cut_b = -self.B.T[:, facet], self.p[facet]
        if self.eps == 0:
            out = cap, self.p[:, None] + cap * d, facet_cut_a, facet_cut_b
            return (*out, np.ones(cap.size, dtype=bool)) if with_kind else out
        slope = (self.A @ d) / self.p_x[:, None]
        on_facet = self._phi(cap, slope) <= self.level
        lo = bisect_feasible(
            lambda t: self._phi(t, slope) <= self.level,
            np.zeros_like(cap),
            cap,
            rtol=0.0,
            steps=self.settings.margins.radial_bisections,
        )
        t = np.where(on_facet, cap, lo)
        q = self.p[:, None] + t * d
        # Tangent plane of the convex Phi at a feasible point, shifted by its slack.
        ratio = np.maximum(1 + t * slope, 0.0)
        grad = self.B.T @ (self.alpha * self.A.T @ power(ratio, self.alpha - 1))
        slack = np.maximum(self.level - self._phi(t, slope), 0.0)
        tangent_b = np.sum(grad * (t * r), axis=0) + slack
        a = np.where(on_facet, facet_cut_a, grad)
        b = np.where(on_facet, facet_cut_b, tangent_b)
        return (t, q, a, b, on_facet) if with_kind else (t, q, a, b)


class ConeTree:
    """A partition of the directions into simplicial cones, each with simplices that contain Q in it."""

    def __init__(self, geo: Geometry):
        self.settings = geo.settings
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
        # Per-cone arrays are views of buffers with room to grow (see split).
        self._buffers = {}
        self.reach, self.cached, self.m_at = np.zeros(0), np.zeros(0), np.zeros((0, k))
        self._outer_sets_ready = False

    def _outer_sets(self, deadline=math.inf) -> bool:
        """Build the first cones' outer sets, when first needed; whether they are built.

        They cost O(|Y|^4) operations (O(|Y|^3) per cone), so they are built a few cones at a
        time and given up at ``deadline`` (a :func:`time.perf_counter` reading).
        """
        if self._outer_sets_ready:
            return True
        per_chunk = max(1, self.geo.settings.heuristics.cones.outer_set_work // self.geo.k**3)
        parts = []
        for start in range(0, len(self.cones), per_chunk):
            if time.perf_counter() > deadline:
                return False
            parts.append(self._simplices(self.cones[start : start + per_chunk]))
        for name, values in zip(self._sets, zip(*parts)):
            setattr(self, name, np.concatenate(values))
        self._fresh(np.arange(len(self.cones)))
        self._outer_sets_ready = True
        return True

    def add_rays(self, r):
        t, q, a, b, on_facet = self.geo.rays(r, with_kind=True)
        self.on_facet = np.concatenate([self.on_facet, on_facet])
        self.r = np.concatenate([self.r, r], axis=1)
        self.t, self.b = np.concatenate([self.t, t]), np.concatenate([self.b, b])
        self.a = np.concatenate([self.a, a], axis=1)
        self.s = np.concatenate([self.s, np.einsum("im,ij,jm->m", r, self.geo.metric, r)])
        return q

    def _simplices(self, cones):
        """Outer sets of Q within each cone, in ray coordinates coords (q = P_Y + B sum_i coords_i r_i).

        ``single`` (cones, cuts, k): for each of the best single cuts, Q in the cone lies in
        conv(0, coords_i r_i).  ``pair``: the cone cut by the best facet *and* the best tangent
        plane, a polytope whose vertices have at most two non-zero coords (k - 2 of the k + 2
        constraints coords >= 0 are active at a vertex): ``one`` (cones, k) and
        ``two`` (cones, P, 2) for the P index pairs ``self.pairs``; this is what bounds
        cones that straddle a ridge where a facet meets the curved boundary.
        """
        geo = self.geo
        n_cones, k_r = cones.shape
        rr = self.r[:, cones]  # (k, C, k)
        # A tangent plane at the cone's centre is four times closer to Q than one at a corner.
        centre = rr.sum(axis=2)
        _, _, centre_a, centre_b, centre_facet = geo.rays(centre / np.linalg.norm(centre, axis=0), with_kind=True)
        # Each cut's normal against each of the cone's rays, (C, J, k): the rays' own tangent
        # planes, the centre's, and the facets q_y >= 0 (normal -B[y], the same for every cone,
        # so one product serves all cones).
        own = np.matmul(self.a[:, cones].transpose(1, 2, 0), rr.transpose(1, 0, 2))
        at_centre = np.einsum("kc,kci->ci", centre_a, rr)[:, None, :]
        facets = -(geo.B @ rr.reshape(rr.shape[0], -1)).reshape(-1, n_cones, k_r).transpose(1, 0, 2)
        dots = np.concatenate([own, at_centre, facets], axis=1)
        cut_b = np.concatenate(
            [self.b[cones], centre_b[:, None], np.broadcast_to(geo.p, (n_cones, geo.p.size))], axis=1
        )
        tangent_kind = np.concatenate([self.on_facet[cones], centre_facet[:, None]], axis=1)
        with np.errstate(divide="ignore", invalid="ignore"):
            coords = np.where(dots > PARALLEL, cut_b[:, :, None] / dots, np.inf)
        overshoot = np.max(coords / np.maximum(self.t[cones][:, None, :], TINY), axis=2)
        best = np.argsort(overshoot, axis=1)[:, : self.settings.heuristics.cones.cuts]
        single = np.take_along_axis(coords, best[:, :, None], axis=1)
        # The pair: best tangent cut of the cone's own rays, best facet.
        rows = np.arange(n_cones)
        tangent = np.argmin(np.where(tangent_kind, np.inf, overshoot[:, : k_r + 1]), axis=1)
        facet = k_r + 1 + np.argmin(overshoot[:, k_r + 1 :], axis=1)
        d1, d2 = dots[rows, tangent], dots[rows, facet]  # (C, k)
        b1, b2 = cut_b[rows, tangent][:, None], cut_b[rows, facet][:, None]
        with np.errstate(divide="ignore", invalid="ignore"):
            one = np.minimum(np.where(d1 > PARALLEL, b1 / d1, np.inf), np.where(d2 > PARALLEL, b2 / d2, np.inf))
            i, j = self.pairs.T
            det = d1[:, i] * d2[:, j] - d1[:, j] * d2[:, i]
            li = (b1 * d2[:, j] - b2 * d1[:, j]) / det
            lj = (b2 * d1[:, i] - b1 * d2[:, i]) / det
        ok = (np.abs(det) > PARALLEL) & (li >= 0) & (lj >= 0)
        li, lj = np.where(ok, li, 0.0), np.where(ok, lj, 0.0)
        # F_mu at a vertex is quad - coords . (m . r): store the mu-independent quadratic parts.
        s = self.s[cones]
        # r_i . metric r_j for every pair from each cone's Gram matrix: O(C k^3) operations and
        # O(C k^2) memory, where gathering the pairs' rays first takes O(C k^4) of both.
        metric_rr = (geo.metric @ rr.reshape(rr.shape[0], -1)).reshape(rr.shape)
        cross = np.matmul(rr.transpose(1, 2, 0), metric_rr.transpose(1, 0, 2))[:, i, j]
        two_quad = li**2 * s[:, i] + 2 * li * lj * cross + lj**2 * s[:, j]
        return (
            *_finite_parts(single, single**2 * s[:, None, :]),
            *_finite_parts(one, one**2 * s),
            np.stack([li, lj], axis=-1),
            two_quad,
        )

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

    def _fresh(self, rows):
        """Bookkeeping for the new cones ``rows``: not yet evaluated, and their reach."""
        reach = np.maximum(
            np.max(np.where(np.isfinite(self.single_quad[rows]), self.single[rows], 0.0), axis=(1, 2)),
            np.max(self.one[rows], axis=1),
        )
        if len(self.pairs):
            reach = np.maximum(reach, np.max(self.two[rows].sum(axis=2), axis=1))
        self._store("reach", reach, rows)
        self._store("cached", np.full(rows.size, np.inf), rows)
        self._store("m_at", np.zeros((rows.size, self.geo.k)), rows)

    def ray_values(self, mu):
        """F_mu at every ray's end point (all of them lie in Q)."""
        return self.t**2 * self.s - self.t * ((self.geo.B.T @ mu) @ self.r)

    def ray_points(self, which):
        return self.geo.p[:, None] + self.geo.B @ (self.t[which] * self.r[:, which])

    def bounds(self, mu, target=-np.inf, deadline=math.inf):
        """Upper bound of F_mu over Q within each cone: its largest value at the vertices of an outer set.

        F_mu(P_Y + B c) = c^T metric c - (B^T mu)^T c is convex, so on a polytope it is
        largest at a vertex; the bound is the smallest over the cone's outer sets.  A cone's
        bound moves by at most ``reach * |m - m_at|`` when mu moves (every vertex lies within
        ``reach`` of P_Y), so only cones that might exceed ``target`` are evaluated again; the
        others keep that valid, slightly larger bound.  None if the first cones' outer sets
        could not be built by ``deadline``.
        """
        if not self._outer_sets(deadline):
            return None
        m = self.geo.B.T @ mu
        slack = self.reach * np.linalg.norm(m[None, :] - self.m_at, axis=1)
        bounds = self.cached + slack
        stale = np.flatnonzero(bounds > target)
        if stale.size:
            bounds[stale] = self.cached[stale] = self._set_values(m, stale)
            self.m_at[stale] = m
        return bounds

    def split(self, which):
        """Bisect the widest edge of each cone in ``which``; return the new rays' end points.

        The left child takes its parent's place and the right one is appended, so a round
        writes only the cones it splits (a compacted copy of every cone's arrays each round
        would cost time linear in all the cones, not in the split ones).
        """
        self._outer_sets()
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
        n = len(self.cones)
        children = np.concatenate([left, right])
        rows = np.concatenate([which, np.arange(n, n + len(which))])
        self._store("cones", children, rows)
        for name, value in zip(self._sets, self._simplices(children)):
            self._store(name, value, rows)
        self._fresh(rows)
        return points

    def _store(self, name, value, rows):
        """Write ``value`` into rows ``rows`` of the per-cone array ``name``.

        Growing its buffer
        (by doubling) for rows past the end.
        """
        buffer = self._buffers.get(name)
        used = len(getattr(self, name))
        end = max(used, int(rows.max()) + 1)
        if buffer is None or end > len(buffer):
            grown = np.empty((max(2 * end, 64), *value.shape[1:]), dtype=value.dtype)
            grown[:used] = getattr(self, name)
            buffer = self._buffers[name] = grown
        buffer[rows] = value
        setattr(self, name, buffer[:end])


def _finite_parts(coords, quad):
    """Unbounded vertices (coords = inf) as coords = 0, quad = inf, so F_mu = inf there without NaNs."""
    bounded = np.isfinite(coords)
    return np.where(bounded, coords, 0.0), np.where(bounded, quad, np.inf)
