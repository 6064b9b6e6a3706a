"""The bound of F_mu on a stack of boxes.

The concave Lagrangian, its certificate by a
supergradient, and the range reduction that each bound gives (see :mod:`renyi.lift.optimum.boxes`).
"""

from __future__ import annotations

import math

import numpy as np
from scipy import linalg

from ..._numerics import TINY, power
from .cover import cheapest_cover, congruence, cover_cost, knapsack, linear_range, outer, project


class Constraint:
    """Phi, or its minorant, on a stack of boxes: values, gradients and Hessian bounds.

    ``z0`` None means Phi itself on every box; else ``exact`` (None: none) marks the boxes
    on which it is Phi itself, and the others take the minorant expanded at ``z0``
    (:meth:`BoxLagrangian._quadratic_minorant`): in each z_x its Taylor polynomial with the
    remainder's bound, and below order 2 z^alpha itself on the side of z0 away from the
    range's end that bound was taken at (:meth:`_beyond`).  ``h``
    bounds the Hessian below on each box (only at its points within the budget's z ranges
    where ``within``, else at all), ``row_sums`` are the row sums of a bound above
    (entrywise; for the ascent's metric).
    """

    def __init__(self, lagrangian, h, row_sums, within, z0=None, kappa=None, exact=None):
        self.owner, self.h, self.row_sums, self.z0, self.kappa = lagrangian, h, row_sums, z0, kappa
        self.within, self.exact = within, exact
        # The minorant's weighted slope is affine in z = A q: its two coefficients, computed
        # once (the ascent asks for the gradient at every step).
        self._affine = None

    def rows(self, idx):
        """The same model on the boxes ``idx`` only."""
        pick = lambda v: None if v is None else v[idx]
        return Constraint(
            self.owner,
            self.h[idx],
            self.row_sums[idx],
            self.within[idx],
            pick(self.z0),
            pick(self.kappa),
            pick(self.exact),
        )

    def _every_row(self):
        """Expansion points, kappa and exactness for every row.

        Expansion points, kappa and which rows are Phi itself, for every row (Phi's rows
        carry zeros, unused).
        """
        m = self.h.shape[0]
        if self.z0 is None:
            zeros = np.zeros((m, self.owner.A.shape[0]))
            return zeros, zeros, np.ones(m, dtype=bool)
        return self.z0, self.kappa, np.zeros(m, dtype=bool) if self.exact is None else self.exact

    @staticmethod
    def _from_rows(owner, h, row_sums, within, z0, kappa, exact):
        if exact.all():
            return Constraint(owner, h, row_sums, within)
        return Constraint(owner, h, row_sums, within, z0, kappa, exact if exact.any() else None)

    @staticmethod
    def stack(parts):
        """The rows of ``parts`` one after another (one stacked ascent for several models)."""
        rows = [p._every_row() for p in parts]
        cat = lambda values: np.concatenate(list(values))
        return Constraint._from_rows(
            parts[0].owner,
            cat(p.h for p in parts),
            cat(p.row_sums for p in parts),
            cat(p.within for p in parts),
            *map(cat, zip(*rows)),
        )

    def where(self, mask, other):
        """Rows of ``other`` where ``mask``, else these.

        Both are models of the same boxes; merging them row by row lets one stacked ascent
        refine the boxes of every model.
        """
        pick = lambda a, b: np.where(mask.reshape(mask.shape + (1,) * (a.ndim - 1)), b, a)
        mine, theirs = self._every_row(), other._every_row()
        return Constraint._from_rows(
            self.owner,
            pick(self.h, other.h),
            pick(self.row_sums, other.row_sums),
            pick(self.within, other.within),
            *(pick(a, b) for a, b in zip(mine, theirs)),
        )

    def phi(self, q):
        """Phi, or its minorant, at ``q`` (one point per box)."""
        if self.z0 is None:
            return self.owner._phi(q)
        a, z = self.owner.alpha, q @ self.owner.A.T
        dz = z - self.z0
        piece = power(self.z0, a) + a * power(self.z0, a - 1) * dz + self.kappa * dz**2
        beyond = self._beyond(z)
        if beyond is not None:
            piece = np.where(beyond, power(np.maximum(z, 0.0), a), piece)
        minorant = np.sum(self.owner.weight * piece, axis=-1)
        if self.exact is None:
            return minorant
        return np.where(self.exact, power(np.maximum(z, 0.0), a) @ self.owner.weight, minorant)

    def _beyond(self, z):
        """Where the minorant is z^alpha itself: below z0 for 1 < alpha < 2, nowhere (None) from order 2.

        The Taylor piece holds on both sides of z0 (its remainder's factor is monotone in z and
        least at the range's end, :meth:`BoxLagrangian._quadratic_minorant`), so z^alpha beyond
        z0 only tightens it.  Below order 2 that closes the gap far beyond eps_max (``make
        bench``'s lift case at alpha = 1.5, eps = 0.02); from order 2 the Taylor piece alone
        certifies with fewer boxes (``make bench-scale``, alpha = 3, eps_max / 2), so it is not
        used there.
        """
        if self.owner.alpha >= 2:
            return None
        return z < self.z0

    def grad(self, q):
        """The gradient of :meth:`phi` at ``q``."""
        if self.z0 is None:
            return self.owner._grad_phi(q)
        z = q @ self.owner.A.T
        if self._affine is None:
            a, w = self.owner.alpha, self.owner.weight
            # w (a z0^(a-1) + 2 kappa (z - z0)) = base + scale z
            self._affine = (w * (a * power(self.z0, a - 1) - 2 * self.kappa * self.z0), w * (2 * self.kappa))
        base, scale = self._affine
        slope = base + scale * z
        beyond = self._beyond(z)
        if beyond is not None:
            slope = np.where(beyond, self.owner._exact_slope(z), slope)
        if self.exact is not None:
            slope = np.where(self.exact[:, None], self.owner._exact_slope(z), slope)
        return slope @ self.owner.A


class BoxLagrangian:
    """The bound of F_mu on boxes: geometry only, so that it pickles small (worker processes)."""

    def __init__(self, p, A, alpha, level, weight, settings, lift_range=None):
        self.p, self.A, self.alpha, self.level, self.weight = p, A, alpha, level, weight
        self.settings = settings
        if lift_range is None:
            lift_range = (np.zeros(A.shape[0]), np.full(A.shape[0], np.inf))
        self.lift_lo, self.lift_hi = lift_range
        self.basis = linalg.null_space(np.ones((1, p.size)))
        self._ascending = np.argsort(A, axis=1)

    def _phi(self, q):
        return power(np.maximum(q @ self.A.T, 0.0), self.alpha) @ self.weight

    def _exact_slope(self, z):
        """Phi's weighted slope in z = A q: its gradient is this times A."""
        return self.alpha * power(np.maximum(z, 0.0), self.alpha - 1) * self.weight

    def _grad_phi(self, q):
        return self._exact_slope(q @ self.A.T) @ self.A

    def _values(self, q, mu):
        d = q - self.p
        return np.sum(d * d / self.p, axis=-1) - d @ mu

    def box_z_range(self, lo, hi):
        """The range of z = A q on each box's points of the plane (:func:`linear_range`).

        Widened by the relative margin ``z_range`` (the knapsack's round-off), the least
        floored at 0.
        """
        z_lo, z_hi = linear_range(self.A, self._ascending, lo, hi)
        widen = self.settings.margins.z_range
        return np.maximum(z_lo - widen * np.abs(z_lo), 0.0), z_hi + widen * np.abs(z_hi)

    def _z_range(self, lo, hi, box_range=None):
        """The range of z = A q on each box's points of the plane within the budget's ranges.

        The box's range (``box_range``, else :meth:`box_z_range`) intersected with
        ``lift_range`` (every feasible posterior's z lies in it,
        :func:`~renyi.lift.optimum.polytope.lift_ranges`).  A box that holds no point within
        those ranges, and so no feasible one, keeps the box's range (:meth:`__call__` bounds it
        by -inf).
        """
        z_lo, z_hi = self.box_z_range(lo, hi) if box_range is None else box_range
        new_lo, new_hi = np.maximum(z_lo, self.lift_lo), np.minimum(z_hi, self.lift_hi)
        ok = ~self.misses_budget((z_lo, z_hi))[:, None]
        return np.where(ok, new_lo, z_lo), np.where(ok, new_hi, z_hi)

    def misses_budget(self, box_range):
        """Which boxes (their z ranges ``box_range``) hold no point within the budget's ranges."""
        z_lo, z_hi = box_range
        return np.any((z_lo > self.lift_hi) | (z_hi < self.lift_lo), axis=-1)

    def outside(self, q):
        """Which rows of ``q`` have z = A q outside the budget's ranges (no feasible point does)."""
        z = q @ self.A.T
        return np.any((z < self.lift_lo) | (z > self.lift_hi), axis=-1)

    def _back_inside(self, start, end):
        """The point of each segment from ``start`` to ``end`` nearest ``end`` within the budget's ranges.

        The ranges are a polytope in q (z = A q is linear), so its intersection with the
        segment is an interval: a ratio test per row of A.  Pulled back by the margin
        ``segment_pullback`` of the step (round-off); ``end`` itself where it is inside, ``start`` where it is outside.
        """
        z_start, z_end = start @ self.A.T, end @ self.A.T
        step = z_end - z_start
        with np.errstate(divide="ignore", invalid="ignore"):
            reach = np.where(
                z_end > self.lift_hi,
                (self.lift_hi - z_start) / step,
                np.where(z_end < self.lift_lo, (self.lift_lo - z_start) / step, np.inf),
            )
        t = np.clip(np.min(np.nan_to_num(reach, nan=0.0, posinf=np.inf), axis=-1), 0.0, 1.0)
        t = np.where(t < 1.0, t * (1 - self.settings.margins.segment_pullback), 1.0)
        return start + t[:, None] * (end - start)

    def _hessian_floor(self, lo, hi, z_range=None):
        """A lower bound of Phi's Hessian on each box: where z^(alpha - 2) is least.

        z = A q lies in [z_lo, z_hi] on the box's points of the plane within the budget's
        ranges (``z_range``, else :meth:`_z_range`); z^(alpha - 2) increases in z for alpha >= 2 (take z_lo) and
        decreases for 1 < alpha < 2 (take z_hi).
        """
        a = self.alpha
        z_lo, z_hi = self._z_range(lo, hi) if z_range is None else z_range
        return congruence(self.A, a * (a - 1) * self.weight * power(z_lo if a >= 2 else z_hi, a - 2))

    def _row_sums(self, diagonal):
        """Row sums of an entrywise bound above of a Hessian A^T diag(d) A (the ascent's metric only)."""
        return (diagonal * self.A.sum(axis=1)) @ self.A

    def concave_from(self, h):
        """The smallest multiplier m that makes F_mu - m Phi concave on each box without theta.

        ``h`` is a bound of Phi's Hessian on each box.
        """
        h = self.basis.T @ h @ self.basis
        d = self.basis.T @ (self.basis * (2 / self.p)[:, None])
        try:
            cover = np.linalg.cholesky(h)
        except np.linalg.LinAlgError:
            return np.full(h.shape[0], np.inf)
        x = np.linalg.solve(cover, np.broadcast_to(d, h.shape))
        x = np.linalg.solve(cover, np.swapaxes(x, 1, 2))
        return np.linalg.eigvalsh(0.5 * (x + np.swapaxes(x, 1, 2)))[:, -1]

    def _quadratic_minorant(self, lo, hi, start, z_range=None):
        """Phi's minorant on the box's feasible points, expanded where the ascent starts.

        [z_lo, z_hi] is the range of z = A q on the box's points of the plane within the
        budget's ranges (``z_range``, else :meth:`_z_range`).  For z >= z_lo the Taylor
        remainder of z^alpha at z0 is at least kappa (z - z0)^2 with
        kappa = alpha (alpha - 1) int_0^1 (1 - s) (z0 + s (z_lo - z0))^(alpha - 2) ds, bounded
        below by Jensen (alpha >= 3, convex integrand) or by the chord (2 <= alpha <= 3).  For
        1 < alpha < 2 the integrand decreases in z and is convex, so for z <= z_hi Jensen (the
        weight 2 (1 - s) has mean 1/3) gives kappa >= alpha (alpha - 1) / 2 ((2 z0 + z_hi) / 3)^(alpha - 2).
        The bound holds on the other side of z0 too: the remainder's factor R(z) / (z - z0)^2
        is monotone in z, least at the range's end.  Below order 2 the minorant is z^alpha itself
        below z0 (:meth:`Constraint._beyond`): the two pieces meet with equal slopes, and there
        the power's curvature alpha (alpha - 1) z^(alpha - 2) is at least its value at z0, which
        is at least 2 kappa, so each piece minus kappa z^2 is convex and the whole is too.
        Returns (z0, kappa): its Hessian is at least 2 A^T diag(w kappa) A, which no longer falls
        to the box's corner.
        """
        a = self.alpha
        z_lo, z_hi = self._z_range(lo, hi) if z_range is None else z_range
        # (a start outside the budget's z ranges is clipped into them: only there is the
        # minorant needed)
        z0 = np.minimum(np.maximum(project(np.clip(start, lo, hi), lo, hi) @ self.A.T, z_lo), z_hi)
        if a >= 3:
            kappa = 0.5 * a * (a - 1) * power((2 * z0 + z_lo) / 3, a - 2)
        elif a >= 2:
            kappa = a * (a - 1) * (power(z0, a - 2) / 3 + power(z_lo, a - 2) / 6)
        else:
            kappa = 0.5 * a * (a - 1) * power(np.maximum((2 * z0 + z_hi) / 3, TINY), a - 2)
        # The ratio R(z) / (z - z0)^2 of the remainder is monotone in z (the integral's factor
        # is), so its least value on the box is at one end, z_lo for alpha >= 2 and z_hi below:
        # in closed form it is up to a third larger than Jensen's bound at alpha = 5 (0.5 alpha
        # (alpha - 1) ((2 z0 + z_lo) / 3)^3 = 2.96 against 4 at z0 = 1, z_lo = 0).  Used where
        # z - z0 is wide enough for the difference quotient to be accurate (its round-off is then
        # below 1e-10 of it), less a margin.
        edge = z_lo if a >= 2 else z_hi
        dz = edge - z0
        margins = self.settings.margins
        wide = np.abs(dz) > margins.remainder_span * np.maximum(z0, edge)
        with np.errstate(divide="ignore", invalid="ignore"):
            exact = (power(edge, a) - power(z0, a) - a * power(z0, a - 1) * dz) / dz**2
        kappa = np.where(wide, np.maximum(kappa, exact * (1 - margins.remainder_quotient)), kappa)
        return z0, kappa

    def _cover(self, lo, hi, multiplier, h, least=True, near=None, at=None):
        """Theta >= 0 that makes the Lagrangian concave on each box (a generalised eigenvalue).

        The Hessian of L on the plane is 2 D_Y^-1 - multiplier H_Phi(q) - 2 diag(theta), and
        H_Phi(q) >= ``h`` on the box (:meth:`_hessian_floor`, or the minorant's own).  Three
        fixed shapes of theta are scaled until it is, then (``least``) the least-cost cover is
        computed from the cheapest (``cheapest_cover``) and certified the same way; the
        cheapest (sum theta_y cost_y, :func:`cover_cost` at ``at``, the expected maximiser) is
        kept.  With ``near`` (a cover of each box at a nearby multiplier) the fixed shapes are
        skipped: it is scaled and the barrier starts there.
        """
        full = np.diag(2 / self.p)[None] - multiplier[:, None, None] * h
        m = self.basis.T @ full @ self.basis

        def certified(shape, rows=slice(None)):
            """The shape scaled until the Lagrangian is concave: the pencil's top eigenvalue.

            max u^T M u / u^T diag(2 shape) u over the plane u^T 1 = 0 is, with
            v = diag(2 shape)^(1/2) u, the top eigenvalue of K = S M S (S = diag(2 shape)^(-1/2))
            on the plane v^T s = 0, i.e. of P K P with P the projector off s; P K P adds the
            eigenvalue 0 (on s), which the max with 0 below absorbs.  ``shape`` is given for
            the boxes ``rows`` only.
            """
            scale = 1 / np.sqrt(2 * shape)
            k = full[rows] * scale[:, :, None] * scale[:, None, :]
            c = scale / np.linalg.norm(scale, axis=-1, keepdims=True)
            kc = np.einsum("mij,mj->mi", k, c)
            ckc = np.sum(c * kc, axis=-1)[:, None, None]
            k = k - outer(c, kc) - outer(kc, c) + ckc * outer(c, c)
            eig_c = np.linalg.eigvalsh(0.5 * (k + np.swapaxes(k, 1, 2)))
            top = np.maximum(eig_c[:, -1], 0.0) + self.settings.margins.eigenvalue * np.abs(eig_c).max(axis=1)
            return top[:, None] * shape

        cost = cover_cost(lo, hi, self.settings, at)

        def cheaper(a, b, weights=cost):
            """Per row, the cover of ``a`` and ``b`` that costs less (rows of ``weights``)."""
            return np.where((np.sum(a * weights, axis=-1) < np.sum(b * weights, axis=-1))[:, None], a, b)

        equal = 1 / (lo.shape[1] * cost)  # equal cost per coordinate
        if near is not None:
            # A cover at a nearby multiplier leaves uncovered a direction that turns convex in
            # between, and scaled to cover it can cost a hundred times the least, too far for the
            # barrier's few steps.  Where it had to grow over ``cover.near_growth`` times, the equal
            # shape bounds that start (only there: it costs an eigenvalue problem per box).
            start = certified(near)
            growth = self.settings.heuristics.cover.near_growth
            grown = np.flatnonzero(np.sum(start * cost, axis=-1) > growth * np.sum(near * cost, axis=-1))
            if grown.size:
                start[grown] = cheaper(certified(equal[grown], grown), start[grown], cost[grown])
            return self._least_cover(m, cost, start, certified, cheaper)
        # Where the Lagrangian is convex: its positive eigen-directions, in the box's coordinates.
        eig, vec = np.linalg.eigh(m)
        directions = self.basis @ vec
        spread = np.sqrt(np.einsum("myk,mk->my", directions**2, np.maximum(eig, 0.0)))
        shapes = (
            equal,
            np.broadcast_to(1 / self.p, lo.shape),  # F's own curvature
            # optimal for a rank-one convexity (kept definite)
            spread / np.sqrt(cost) + self.settings.heuristics.cover.shape_floor / self.p,
        )
        best = certified(shapes[0])
        for shape in shapes[1:]:
            best = cheaper(certified(shape), best)
        return self._least_cover(m, cost, best, certified, cheaper) if least else best

    def _least_cover(self, m, cost, best, certified, cheaper):
        """The least-cost cover from the certified ``best`` (kept where it is cheaper)."""
        # From a strictly feasible point (``best``, enlarged); a row the barrier method lost
        # (round-off) keeps that point.
        h = self.settings.heuristics
        start = best * (1 + h.cover.start_margin) + h.cover.start_floor
        try:
            shape = cheapest_cover(m, self.basis, cost, start, self.settings)
        except np.linalg.LinAlgError:
            shape = start
        ok = np.all(np.isfinite(shape) & (shape > 0), axis=-1, keepdims=True)
        shape = np.where(ok, shape, start)
        return cheaper(certified(shape + self.settings.margins.cover_floor * shape.max(axis=-1, keepdims=True)), best)

    def bound_at(self, lo, hi, mu, multiplier, start, constraint, steps=None, least=True, near=None):
        """Certified max of F_mu over each box's feasible points.

        The ascent's end point, theta,
        and a tangent plane of the Lagrangian there (:func:`~renyi.lift.optimum.boxes.cover.reduce_range`).

        ``constraint`` (a :class:`Constraint`) is Phi itself or a minorant of it on the box's
        feasible points; ``least`` whether the cover is the least-cost one (else the cheapest
        fixed shape).  The tangent ``(slope, offset, spread)`` majorises F_mu on the box's
        feasible points by ``offset + slope . q`` (L is above F_mu there, and concave on the
        box's points within the budget's z ranges, which hold them), with ``spread`` a bound of
        its round-off's scale.  Where ``constraint.within``, the Hessian bounds hold only within
        the budget's z ranges: where the ascent ends outside them, the certificate is taken at
        the last point within them on its way, and where it starts outside too, the bound and
        the offset are infinite.
        """
        phi, grad_phi = constraint.phi, constraint.grad
        # The cover is priced where the ascent starts (the parent's or the best trial's end
        # point), the best guess of where the box's maximiser is.
        x = x_start = project(np.clip(start, lo, hi), lo, hi)
        theta = self._cover(lo, hi, multiplier, constraint.h, least, near, at=x)
        level = self.level

        def gradient(q):
            return 2 * (q - self.p) / self.p - mu - multiplier[:, None] * grad_phi(q) + theta * (lo + hi - 2 * q)

        # The same gradient for the ascent's steps, its affine part collected once (the
        # certificate below uses the formula above).
        linear = 2 / self.p - 2 * theta
        constant = theta * (lo + hi) - 2 - mu
        multiplier_column = multiplier[:, None]

        def step_gradient(q):
            return q * linear + constant - multiplier_column * grad_phi(q)

        # A diagonal majoriser of -Hess L on the box, as the ascent's metric: H_Phi is entrywise
        # non-negative and at most its value at the upper corner, diag(H 1) >= H for such a
        # matrix, and F's own curvature 2 / p only makes L less concave.  The covers' theta
        # span 10^4 on a box against a face, and one step size for all coordinates leaves the
        # flat ones unconverged.
        metric = multiplier[:, None] * constraint.row_sums + 2 * theta
        metric = 1 / np.maximum(
            metric, self.settings.heuristics.box_bound.metric_floor * metric.max(axis=-1, keepdims=True) + TINY
        )
        y, t_acc = x.copy(), 1.0
        for _ in range(self.settings.heuristics.box_bound.ascent_steps if steps is None else steps):
            x_new = project(y + metric * step_gradient(y), lo, hi, metric)
            t_new = 0.5 * (1 + math.sqrt(1 + 4 * t_acc * t_acc))
            y = x_new + ((t_acc - 1) / t_new) * (x_new - x)
            x, t_acc = x_new, t_new
        # The Hessian bounds hold only within the budget's z ranges (:meth:`_z_range`), so the
        # certificate needs a point there: where the ascent ended outside, the last point
        # inside on the way from its start (ascents do end outside, most often with a tiny
        # prior entry).  A tangent outside them bounds nothing.
        within = constraint.within[:, None]
        x = np.where(within, self._back_inside(x_start, x), x)
        outside = self.outside(x) & constraint.within
        g = gradient(x)
        values, lifted, cover = self._values(x, mu), multiplier * phi(x), np.sum(theta * (x - lo) * (hi - x), axis=-1)
        at_x = values + (multiplier * level - lifted) + cover
        bound = at_x + np.sum(g * (knapsack(g, lo, hi) - x), axis=-1)
        # A NaN bound (round-off in a degenerate box) certifies nothing: it counts as infinite.
        bound = np.where(np.isnan(bound), np.inf, bound)
        bound = np.where(outside, np.inf, bound)
        gx = g * x
        offset = np.where(outside, np.inf, at_x - np.sum(gx, axis=-1))
        spread = (
            np.abs(values) + multiplier * level + np.abs(lifted) + cover + np.sum(np.abs(gx) + np.abs(g) * hi, axis=-1)
        )
        margins = self.settings.margins
        return bound + margins.box_bound * np.abs(bound) + margins.absolute, x, theta, (g, offset, spread)

    def models(self, lo, hi, points, within=None):
        """Phi itself and its quadratic minorants on the boxes.

        Phi itself (Hessian bound where z = A q is least) and its quadratic minorants
        expanded at each of ``points`` (stacks of one point per box).  Where ``within``
        (default: where the box holds points within the budget's ranges) on the box's
        points within those ranges (:meth:`_z_range`), elsewhere on the whole box.
        """
        a, w = self.alpha, self.weight
        box_range = self.box_z_range(lo, hi)
        if within is None:
            within = ~self.misses_budget(box_range)
        ranged = self._z_range(lo, hi, box_range)
        z_range = tuple(np.where(within[:, None], r, b) for r, b in zip(ranged, box_range))
        # Phi's Hessian A^T diag(w a (a - 1) z^(a - 2)) A is largest where z is greatest for
        # alpha >= 2, where it is least below (floored there: z^(a - 2) is infinite at 0, and
        # this bound sets only the ascent's step sizes, not the certificate), on the whole box,
        # where the ascent's steps go.
        z_lo, z_hi = box_range
        share = self.settings.heuristics.box_bound.step_curvature_share
        z_top = z_hi if a >= 2 else np.maximum(z_lo, share * z_hi + TINY)
        floor = self._hessian_floor(lo, hi, z_range)
        models = [Constraint(self, floor, self._row_sums(a * (a - 1) * w * power(z_top, a - 2)), within)]
        for point in points:
            z0, kappa = self._quadratic_minorant(lo, hi, point, z_range)
            h = congruence(self.A, 2 * w * kappa)
            # (the row sums of the Taylor piece's Hessian, not of the power's beyond z0: a bound
            # of that, larger at alpha = 5, left the ascent's bounds higher after its steps)
            models.append(Constraint(self, h, self._row_sums(2 * w * kappa), within, z0, kappa))
        return models
