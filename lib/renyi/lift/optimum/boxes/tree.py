"""The box tree of the box branch and bound.

A partition of a box around the feasible set, each box with a certified bound of F_mu, bounded
in rounds (with a :class:`~renyi.lift.optimum.pool.WorkerPool`, in chunks on its workers).
"""

from __future__ import annotations

import time

import numpy as np
from scipy import optimize

from ..bracket import output_chi2_radius
from ..candidates import stop_at
from ..polytope import lift_ranges
from .bound import BoxLagrangian
from .cover import knapsack, tighten
from .multipliers import BoxBounds, MultiplierSearch
from .state import BoxState, CutState


class BoxTree:
    """A partition of a box around the feasible set into boxes, each with a certified bound of F_mu."""

    def __init__(self, geo, pool=None, deadline=np.inf):
        self.geo, self.pool = geo, pool
        self.settings = geo.settings
        # Workers of the pool running something else (a local search), left out of the chunks.
        self.busy_workers = 0
        self.p, self.A, self.alpha, self.level = geo.p, geo.A, geo.alpha, geo.level
        self.weight = geo.p_x ** (1 - geo.alpha)
        n = self.p.size
        # Every feasible posterior's z = A q lies in these ranges (rounded outwards as the
        # box's own z range is): on a box they can raise the least z, and with it Phi's
        # curvature, far above what the box alone allows.
        lift_lo, lift_hi = lift_ranges(geo.p_x, geo.eps, geo.alpha)
        widen = self.settings.margins.z_range
        lift_range = (lift_lo * (1 - widen), lift_hi * (1 + widen))
        self.lagrangian = BoxLagrangian(self.p, self.A, self.alpha, self.level, self.weight, self.settings, lift_range)
        self.search = MultiplierSearch(self.lagrangian, self.settings)
        self.basis = self.lagrangian.basis
        self._phi, self._grad_phi = self.lagrangian._phi, self.lagrangian._grad_phi
        self._quadratic_minorant = self.lagrangian._quadratic_minorant
        lo, hi, _ = tighten(*(b[None] for b in self._root(deadline)))
        #: The boxes (:class:`~renyi.lift.optimum.boxes.state.BoxState`), first the root.
        self.boxes = BoxState.fresh(
            lo, hi, self.p[None], np.full(1, np.inf), np.full(1, -1), np.zeros(n), np.full(1, np.inf)
        )
        #: What range reduction cut off them (:meth:`_cut`); boxes and cuts together cover Q.
        self.cuts = CutState.empty(n)
        # Whether evaluations still cut: not after a cut has been undone (see _roll_back).
        self.reducing = True
        #: The largest bound of F_mu on the parts cut off, at the last mu bounded (-inf: none).
        self.cut_off = -np.inf

    def _root(self, deadline=np.inf):
        """A box that contains Q: each coordinate's range over Q, certified by duality, within the D_2 box.

        2 |Y| local searches of O(|Y|^3) per iteration; from ``deadline`` (a
        :func:`time.perf_counter` reading) on, the remaining coordinates keep the D_2 box's
        range, which holds as well.
        """
        lo, hi = self._ellipsoid_shadow()
        for y in range(self.p.size):
            for sign in (1.0, -1.0):
                if time.perf_counter() > deadline:
                    return lo, hi
                c = np.zeros(self.p.size)
                c[y] = sign
                extent = sign * self._certified_min(c, deadline)
                lo[y], hi[y] = (max(lo[y], extent), hi[y]) if sign > 0 else (lo[y], min(hi[y], extent))
        return lo, hi

    def _ellipsoid_shadow(self):
        """A chi^2 ellipsoid's box within [0, 1]: Q lies inside the ellipsoid.

        Its radius is :func:`~renyi.lift.optimum.bracket.output_chi2_radius` (D_2 <= D_alpha for
        alpha >= 2, :func:`~renyi.lift.optimum.bracket.chi2_radius` below order 2).
        """
        n = self.p.size
        radius = output_chi2_radius(self.geo.p_x, self.geo.eps, self.alpha, self.settings.margins)
        chi2 = self.A.T @ (self.A / self.geo.p_x[:, None])
        inverse = self.basis @ np.linalg.inv(self.basis.T @ chi2 @ self.basis) @ self.basis.T
        margins = self.settings.margins
        half = np.sqrt(radius * np.maximum(np.diag(inverse), 0.0)) * (1 + margins.eigenvalue) + margins.absolute
        return np.maximum(np.zeros(n), self.p - half), np.minimum(np.ones(n), self.p + half)

    def _certified_min(self, c, deadline=np.inf):
        """A lower bound of min c^T q over Q, valid whatever the optimiser returns (weak duality).

        For any multiplier >= 0 and x in the simplex, the convex D(q) = c^T q + multiplier (Phi(q) - level)
        satisfies min_Q c^T q >= min_simplex D >= D(x) + min_j grad D(x)_j - grad D(x)^T x.
        SLSQP supplies x (stopped at ``deadline``: any x serves) and a least-squares KKT
        estimate supplies multiplier.
        """
        constraints = [
            {"type": "eq", "fun": lambda q: q.sum() - 1, "jac": lambda q: np.ones_like(q)},
            {"type": "ineq", "fun": lambda q: self.level - self._phi(q), "jac": lambda q: -self._grad_phi(q)},
        ]
        res = optimize.minimize(
            lambda q: c @ q,
            self.p,
            jac=lambda q: c,
            method="SLSQP",
            bounds=[(0.0, 1.0)] * c.size,
            constraints=constraints,
            options={"maxiter": 200, "ftol": self.settings.heuristics.boxes.root_extent_ftol},
            callback=stop_at(deadline),
        )
        x = np.clip(res.x, 0.0, None)
        x /= x.sum()
        grad_phi = self._grad_phi(x)
        free = x > self.settings.heuristics.tree_multiplier.root_free
        design = np.stack([grad_phi[free], np.ones(free.sum())], axis=1)
        (multiplier, _), *_ = np.linalg.lstsq(design, -c[free], rcond=None)
        multiplier = max(float(multiplier), 0.0)
        grad = c + multiplier * grad_phi
        value = c @ x + multiplier * (self._phi(x) - self.level)
        return float(value + grad.min() - grad @ x) - self.settings.margins.root_extent

    def _evaluate(self, which, mu, prior, target=-np.inf):
        """Bound the boxes ``which`` and store the results.

        With a pool, its workers take all chunks but the last, which this process bounds
        meanwhile.
        """
        b = self.boxes
        args = (b.lo, b.hi, b.start, b.anchor, b.multiplier, b.multiplier_best)
        args = tuple(a[which] for a in args)
        free = 0 if self.pool is None else self.pool.workers - self.busy_workers
        chunks = min(free + 1, which.size // self.settings.heuristics.boxes.pool_min_boxes)
        if chunks <= 1:
            found = self.search(*args, mu, target)
        else:
            parts = [np.array_split(a, chunks) for a in args]
            futures = [
                self.pool.executor.submit(self.search, *(part[i] for part in parts), mu, target)
                for i in range(chunks - 1)
            ]
            mine = self.search(*(part[-1] for part in parts), mu, target)
            found = BoxBounds.concat([f.result() for f in futures] + [mine])
        b.anchor_best[which] = found.anchor
        # A box lies in its parent, and a bound at another mu moves by the knapsack shift:
        # ``prior`` is valid too, and the smaller of the two is kept.
        b.cached[which], b.mu_at[which], b.rival[which] = np.minimum(found.bound, prior), mu, found.rival
        b.unbounded[which] = False
        b.best_point[which], b.multiplier[which], b.theta[which] = found.point, found.multiplier, found.theta
        b.multiplier_best[which] = found.bound_multiplier
        self._cut(which, found.cut_lo, found.cut_hi, mu, target)

    def _drift(self, mu_from, mu, lo, hi):
        """How much a bound of F_mu at ``mu_from`` can rise at ``mu`` on each box.

        The largest
        change of the linear term -mu^T (q - P_Y) there (a knapsack).
        """
        delta = mu[None, :] - mu_from
        return np.maximum(-np.sum(delta * (knapsack(-delta, lo, hi) - self.p), axis=-1), 0.0)

    def _cut(self, which, cut_lo, cut_hi, mu, target):
        """Narrow boxes ``which`` to their range reductions, and record the parts cut off.

        F_mu <= target on every feasible point cut off, at this mu.  A box reduced to nothing
        has F_mu <= target throughout, which is its bound then.
        """
        if not np.isfinite(target) or not self.reducing:
            return
        b = self.boxes
        lo, hi, nonempty = tighten(cut_lo, cut_hi)
        live = b.cached[which] > target
        b.cached[which[live & ~nonempty]] = target
        moved = nonempty & live & (np.any(lo > b.lo[which], axis=1) | np.any(hi < b.hi[which], axis=1))
        idx = which[moved]
        if idx.size == 0:
            return
        new = CutState(
            outer_lo=b.lo[idx],
            outer_hi=b.hi[idx],
            bound=np.full(idx.size, float(target)),
            mu=np.broadcast_to(mu, (idx.size, mu.size)),
            multiplier=b.multiplier[idx],
            point=b.best_point[idx],
            parent=b.lineage[idx],
        )
        b.lineage[idx] = len(self.cuts) + np.arange(idx.size)
        self.cuts = self.cuts.concat(new)
        b.lo[idx], b.hi[idx] = lo[moved], hi[moved]

    def _roll_back(self, entries, mu):
        """Undo the cuts ``entries`` (by entry index).

        Each outer box, with everything inside it
        (the boxes and cut-off parts it was refined into), becomes one box again.

        Its bound at mu is the largest of theirs, moved to mu: they cover the outer box's
        feasible points.  What lies inside is found by lineage (a box or cut descends from
        the cut whose box it was refined from), in time and memory linear in the tree (a
        pairwise test of the outer boxes needs |Y| bytes per pair of cuts, and a long run
        undoes tens of thousands at once).  The cut-off parts are thin shells around their
        boxes, whose bounds rise after a large move of mu about as much as the boxes'; turning
        each shell into boxes instead (up to 2 |Y| slabs per cut) multiplies the boxes.

        After a roll-back the tree cuts no more: mu moves where the mechanism is still far from
        optimal, and there every further roll-back would reset the tree to a few boxes (``make
        bench-scale`` at eps = 0.02).  Where mu never moves (``make bench``'s |Y| = 10 case)
        the cuts stay, and save boxes.
        """
        self.reducing = False
        boxes, cuts = self.boxes, self.cuts
        count = len(cuts)
        chosen = np.zeros(count, dtype=bool)
        chosen[entries] = True
        # owner[i]: the outermost undone cut that cut i descends from (itself included), -1 if
        # none; found by walking every chain up at once (as many steps as cuts are nested).
        owner, at = np.full(count, -1), np.arange(count)
        while np.any(at >= 0):
            live = np.flatnonzero(at >= 0)
            hit = live[chosen[at[live]]]
            owner[hit] = at[hit]
            at[live] = cuts.parent[at[live]]
        entries = np.flatnonzero(chosen & (owner == np.arange(count)))
        slot = np.full(count, -1)
        slot[entries] = np.arange(entries.size)
        box_owner = np.where(boxes.lineage >= 0, owner[np.maximum(boxes.lineage, 0)], -1)
        drop_box, drop_part = box_owner >= 0, owner >= 0
        box_bounds = boxes.cached + self._drift(boxes.mu_at, mu, boxes.lo, boxes.hi)
        part_bounds = cuts.bound + self._drift(cuts.mu, mu, cuts.outer_lo, cuts.outer_hi)
        merged = np.full(entries.size, -np.inf)
        np.maximum.at(merged, slot[box_owner[drop_box]], box_bounds[drop_box])
        np.maximum.at(merged, slot[owner[drop_part]], part_bounds[drop_part])
        undone = cuts.take(entries)
        # (the cut around an outermost undone one is not undone: it stays)
        whole = BoxState.fresh(
            undone.outer_lo, undone.outer_hi, undone.point, undone.multiplier, undone.parent, mu, merged
        )
        boxes = boxes.take(~drop_box).concat(whole)
        # The cuts left are renumbered; none of them descends from a dropped one.
        renumber = np.cumsum(~drop_part) - 1
        boxes.lineage = np.where(boxes.lineage >= 0, renumber[np.maximum(boxes.lineage, 0)], -1)
        cuts = cuts.take(~drop_part)
        cuts.parent = np.where(cuts.parent >= 0, renumber[np.maximum(cuts.parent, 0)], -1)
        self.boxes, self.cuts = boxes, cuts

    def bounds(self, mu, target=-np.inf, ceiling=None, limit=None):
        """A certified bound of F_mu over Q in every box.

        Only boxes that may exceed ``target``, and were not bounded at this mu, are solved (at
        most ``limit``, the largest bounds first).

        The Lagrangian depends on mu only through -mu^T (q - P_Y), so a box's bound moves by at
        most the largest change of that linear term on the box (a knapsack): the others keep
        that valid, slightly larger bound.  So do the parts of Q cut off from the boxes
        (:meth:`_cut`): a cut whose part's bound now exceeds ``ceiling`` (default ``target``)
        is undone (:meth:`_roll_back`), the others keep that bound (``cut_off``).  A ceiling
        above the target keeps a round-off rise of the target, or a small move of mu, from
        undoing every cut.
        """
        ceiling = target if ceiling is None else ceiling
        parts = self._cut_bounds(mu)
        if np.any(parts > ceiling):
            self._roll_back(np.flatnonzero(parts > ceiling), mu)
            parts = self._cut_bounds(mu)
        b = self.boxes
        bounds = b.cached + self._drift(b.mu_at, mu, b.lo, b.hi)
        # A box bounded at this very mu is not bounded again (its bound would not change).
        current = ~b.unbounded & np.all(b.mu_at == mu[None, :], axis=1)
        stale = np.flatnonzero((bounds > target) & ~current)
        if limit is not None and stale.size > limit:
            stale = stale[np.argsort(-bounds[stale], kind="stable")[:limit]]
        self.evaluated = stale.size
        if stale.size:
            self._evaluate(stale, mu, bounds[stale], target)
            bounds[stale] = self.boxes.cached[stale]
        # (a part cut off in this round is bounded at this mu, by the target)
        new = self.cuts.bound[parts.size :]
        self.cut_off = max(float(parts.max(initial=-np.inf)), float(new.max(initial=-np.inf)))
        return bounds

    def _cut_bounds(self, mu):
        """A bound of F_mu on each part cut off, moved from the mu it was found at."""
        cuts = self.cuts
        return cuts.bound + self._drift(cuts.mu, mu, cuts.outer_lo, cuts.outer_hi)

    def candidates(self, which):
        """The ascent end points of boxes ``which`` (columns; not necessarily in Q)."""
        return self.boxes.best_point[which].T

    def split(self, which, widest=False):
        """Halve each box in ``which``; return the children's indices.

        Halve each box in ``which``: between its two rival maximisers (unless ``widest``), else
        across its widest side; return the children's indices.
        """
        b = self.boxes
        lo, hi = b.lo[which], b.hi[which]
        width = hi - lo
        # A bound is loose where two maximisers of the Lagrangian compete (the hard case of the
        # trust-region problem): a cut between them separates them.
        apart = (b.best_point[which] - b.rival[which]) ** 2 / self.p
        wide = width**2 / self.p
        use_apart = apart.max(axis=1, keepdims=True) > self.settings.heuristics.boxes.rival_apart * wide.max(
            axis=1, keepdims=True
        )
        use_apart &= not widest
        score = np.where(use_apart, apart, wide)
        y, rows = np.argmax(score, axis=1), np.arange(which.size)
        between = 0.5 * (b.best_point[which] + b.rival[which])[rows, y]
        middle = np.where(use_apart[:, 0], between, 0.5 * (lo[rows, y] + hi[rows, y]))
        middle = np.clip(middle, lo[rows, y] + 0.1 * width[rows, y], hi[rows, y] - 0.1 * width[rows, y])
        hi_left, lo_right = hi.copy(), lo.copy()
        hi_left[rows, y], lo_right[rows, y] = middle, middle
        lo_new, hi_new, keep = tighten(np.concatenate([lo, lo_right]), np.concatenate([hi_left, hi]))
        # The children's ascents start at the parent's end point, which is also where their
        # quadratic minorant of Phi is expanded: its tightness depends on that point (a start
        # on the boundary of Q needs many times more boxes to converge).
        ends = b.best_point[which]
        parents = np.concatenate([which, which])[keep]
        rest = np.ones(len(b), dtype=bool)
        rest[which] = False
        # (a box whose halves both vanish on the plane, by round-off, stays whole)
        rest[np.setdiff1d(which, parents)] = True
        # A child is its parent, halved, until it is bounded itself.
        children = b.take(parents)
        children.lo, children.hi = lo_new[keep], hi_new[keep]
        children.start = np.concatenate([ends, ends])[keep]
        children.anchor = b.anchor_best[parents]
        children.unbounded[:] = True
        self.boxes = b.take(rest).concat(children)
        return np.arange(len(self.boxes) - parents.size, len(self.boxes))
