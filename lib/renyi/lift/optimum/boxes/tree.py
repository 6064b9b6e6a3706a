"""The box tree and the worker processes that bound its boxes.

The box tree (a partition of a box around the feasible set, each box with a certified bound
of F_mu) and the worker processes that bound a round's boxes.
"""

from __future__ import annotations

import multiprocessing
import os
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool

import numpy as np
from scipy import optimize

from ..bracket import output_chi2_radius
from ..polytope import lift_ranges
from .bound import BoxLagrangian
from .cover import knapsack, tighten

#: Thread counts of the BLAS libraries numpy may use, set to 1 in worker processes.
BLAS_THREAD_VARIABLES = ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")


def _warm_up():
    """A no-op task: unpickling it imports this module (numpy, scipy) in a fresh worker."""


class WorkerPool:
    """Worker processes that bound chunks of a round's boxes while this process bounds one.

    Started with ``spawn`` on every platform: a forked child of a process with BLAS
    threads can deadlock, and the same start method everywhere behaves the same.  As with
    any process pool, a script that uses it must run under ``if __name__ == "__main__":``;
    a pool that breaks (without that guard its workers fail at their start) raises a
    ``RuntimeError`` that says so.  The workers start at once (a no-op task each), so that
    they boot while the first LP and the channel searches run.
    """

    def __init__(self, processes):
        self.workers = processes
        self.executor = ProcessPoolExecutor(processes, mp_context=multiprocessing.get_context("spawn"))
        # One BLAS thread per worker: its matrices are |Y| x |Y|, and threads would only
        # compete with the other processes for the cores.  A spawned child takes the
        # environment of the moment it starts, which is at these submits.
        saved = {name: os.environ.get(name) for name in BLAS_THREAD_VARIABLES}
        os.environ.update({name: "1" for name in BLAS_THREAD_VARIABLES})
        try:
            for _ in range(processes):
                self.executor.submit(_warm_up)
        except BrokenProcessPool as err:
            # (a submit can find the pool broken already: a worker that failed at its start)
            self.executor.shutdown(wait=True, cancel_futures=True)
            raise self._explained() from err
        finally:
            for name, value in saved.items():
                if value is None:
                    os.environ.pop(name)
                else:
                    os.environ[name] = value

    def __enter__(self):
        return self

    def __exit__(self, kind, error, traceback):
        self.executor.shutdown(wait=True, cancel_futures=True)
        if isinstance(error, BrokenProcessPool):
            raise self._explained() from error

    def _explained(self):
        """A broken pool's likely cause and the way out, as the caller of ``global_optimum`` sees it.

        A spawned worker imports the calling script; one that starts ``global_optimum`` outside
        ``if __name__ == "__main__":`` fails at that import, and the pool then reports only that a
        child "terminated abruptly".
        """
        return RuntimeError(
            f"a worker process of global_optimum(..., workers={self.workers + 1}) ended abruptly. In a "
            'script, call global_optimum under if __name__ == "__main__": (each worker is a new Python '
            "process that imports the script); otherwise a worker may have been killed, for example for "
            "memory. workers=1 runs in this process alone."
        )


class BoxTree:
    """A partition of a box around the feasible set into boxes, each with a certified bound of F_mu."""

    def __init__(self, geo, pool=None):
        self.geo, self.pool = geo, pool
        self.settings = geo.settings
        # Workers of the pool running something else (a local search), left out of the chunks.
        self.busy_workers = 0
        self.p, self.A, self.alpha, self.level = geo.p, geo.A, geo.alpha, geo.level
        self.weight = geo.p_x ** (1 - geo.alpha)
        n = self.p.size
        # Every feasible posterior's z = A q lies in these ranges (rounded outwards by the
        # box bound's own 1e-12): on a box they can raise the least z, and with it Phi's
        # curvature, far above what the box alone allows.
        lift_lo, lift_hi = lift_ranges(geo.p_x, geo.eps, geo.alpha)
        lift_range = (lift_lo * (1 - 1e-12), lift_hi * (1 + 1e-12))
        self.lagrangian = BoxLagrangian(self.p, self.A, self.alpha, self.level, self.weight, self.settings, lift_range)
        self.basis = self.lagrangian.basis
        self._phi, self._grad_phi = self.lagrangian._phi, self.lagrangian._grad_phi
        self._quadratic_minorant = self.lagrangian._quadratic_minorant
        lo, hi, _ = tighten(*(b[None] for b in self._root()))
        self.lo, self.hi = lo, hi
        # Per box: its multiplier (inf: not yet chosen; the centre of its children's trials),
        # the multiplier of its bound (after refinement), cover, where the ascent starts, its
        # end point, the rival maximiser, and the cached bound with the mu it was computed at.
        self.multiplier = np.full(1, np.inf)
        self.multiplier_best = np.full(1, np.inf)
        self.theta = np.zeros((1, n))
        self.start = self.p[None].copy()
        # Where the minorant of each box's bound was expanded, and its children's second point.
        self.anchor = self.p[None].copy()
        self.anchor_best = self.p[None].copy()
        self.best_point = self.p[None].copy()
        self.rival = self.p[None].copy()
        self.cached = np.full(1, np.inf)
        # Whether the box has not been bounded itself yet (a child keeps its parent's bound,
        # valid on the smaller box, until it is).
        self.unbounded = np.ones(1, dtype=bool)
        self.mu_at = np.zeros((1, n))
        # What range reduction cut off (:meth:`_cut`), one entry per cut: the box before it,
        # the bound of F_mu on what was cut off (the target then), that mu, and the box's
        # multiplier and end point (for when the cut is undone).  The boxes and these parts
        # together cover Q.
        self.cut_outer = (np.empty((0, n)), np.empty((0, n)))
        self.cut_bound, self.cut_mu = np.empty(0), np.empty((0, n))
        self.cut_multiplier, self.cut_point = np.empty(0), np.empty((0, n))
        # Lineage: the innermost cut whose box contains each box (-1: none), and the cut that
        # contained each cut's box when it was made, so that undoing a cut finds what lies
        # inside it in time linear in the tree (:meth:`_roll_back`).
        self.lineage = np.full(1, -1)
        self.cut_parent = np.empty(0, dtype=np.intp)
        # Whether evaluations still cut: not after a cut has been undone (see _roll_back).
        self.reducing = True
        #: The largest bound of F_mu on the parts cut off, at the last mu bounded (-inf: none).
        self.cut_off = -np.inf

    def _root(self):
        """A box that contains Q: each coordinate's range over Q, certified by duality, within the D_2 box."""
        lo, hi = self._ellipsoid_shadow()
        for y in range(self.p.size):
            for sign in (1.0, -1.0):
                c = np.zeros(self.p.size)
                c[y] = sign
                extent = sign * self._certified_min(c)
                lo[y], hi[y] = (max(lo[y], extent), hi[y]) if sign > 0 else (lo[y], min(hi[y], extent))
        return lo, hi

    def _ellipsoid_shadow(self):
        """A chi^2 ellipsoid's box within [0, 1]: Q lies inside the ellipsoid.

        Its radius is :func:`~renyi.lift.optimum.bracket.output_chi2_radius` (D_2 <= D_alpha for
        alpha >= 2, :func:`~renyi.lift.optimum.bracket.chi2_radius` below order 2).
        """
        n = self.p.size
        radius = output_chi2_radius(self.geo.p_x, self.geo.eps, self.alpha)
        chi2 = self.A.T @ (self.A / self.geo.p_x[:, None])
        inverse = self.basis @ np.linalg.inv(self.basis.T @ chi2 @ self.basis) @ self.basis.T
        half = np.sqrt(radius * np.maximum(np.diag(inverse), 0.0)) * (1 + self.settings.margins.eigenvalue) + 1e-15
        return np.maximum(np.zeros(n), self.p - half), np.minimum(np.ones(n), self.p + half)

    def _certified_min(self, c):
        """A lower bound of min c^T q over Q, valid whatever the optimiser returns (weak duality).

        For any multiplier >= 0 and x in the simplex, the convex D(q) = c^T q + multiplier (Phi(q) - level)
        satisfies min_Q c^T q >= min_simplex D >= D(x) + min_j grad D(x)_j - grad D(x)^T x.
        SLSQP supplies x and a least-squares KKT estimate supplies multiplier.
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
            options={"maxiter": 200, "ftol": 1e-15},
        )
        x = np.clip(res.x, 0.0, None)
        x /= x.sum()
        grad_phi = self._grad_phi(x)
        free = x > self.settings.heuristics.root_free
        design = np.stack([grad_phi[free], np.ones(free.sum())], axis=1)
        (multiplier, _), *_ = np.linalg.lstsq(design, -c[free], rcond=None)
        multiplier = max(float(multiplier), 0.0)
        grad = c + multiplier * grad_phi
        value = c @ x + multiplier * (self._phi(x) - self.level)
        return float(value + grad.min() - grad @ x) - self.settings.margins.root_extent

    def _evaluate(self, which, mu, prior, target=-np.inf):
        """Bound the boxes ``which`` and store the results.

        Bound the boxes ``which`` and store the results; with a pool, its workers take all
        chunks but the last, which this process bounds meanwhile.
        """
        args = tuple(
            getattr(self, name)[which] for name in ("lo", "hi", "start", "anchor", "multiplier", "multiplier_best")
        )
        free = 0 if self.pool is None else self.pool.workers - self.busy_workers
        chunks = min(free + 1, which.size // self.settings.heuristics.pool_min_boxes)
        if chunks <= 1:
            results = self.lagrangian(*args, mu, target)
        else:
            parts = [np.array_split(a, chunks) for a in args]
            futures = [
                self.pool.executor.submit(self.lagrangian, *(part[i] for part in parts), mu, target)
                for i in range(chunks - 1)
            ]
            mine = self.lagrangian(*(part[-1] for part in parts), mu, target)
            results = [np.concatenate(r) for r in zip(*[f.result() for f in futures], mine)]
        best, best_x, best_multiplier, bound_multiplier, best_theta, rival, best_anchor, cut_lo, cut_hi = results
        self.anchor_best[which] = best_anchor
        # A box lies in its parent, and a bound at another mu moves by the knapsack shift:
        # ``prior`` is valid too, and the smaller of the two is kept.
        self.cached[which], self.mu_at[which], self.rival[which] = np.minimum(best, prior), mu, rival
        self.unbounded[which] = False
        self.best_point[which], self.multiplier[which], self.theta[which] = best_x, best_multiplier, best_theta
        self.multiplier_best[which] = bound_multiplier
        self._cut(which, cut_lo, cut_hi, mu, target)

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
        lo, hi, nonempty = tighten(cut_lo, cut_hi)
        live = self.cached[which] > target
        self.cached[which[live & ~nonempty]] = target
        moved = nonempty & live & (np.any(lo > self.lo[which], axis=1) | np.any(hi < self.hi[which], axis=1))
        idx = which[moved]
        if idx.size == 0:
            return
        grow = lambda old, new: np.concatenate([old, new])
        self.cut_parent = grow(self.cut_parent, self.lineage[idx])
        self.lineage[idx] = self.cut_bound.size + np.arange(idx.size)
        self.cut_outer = tuple(map(grow, self.cut_outer, (self.lo[idx], self.hi[idx])))
        self.cut_bound = grow(self.cut_bound, np.full(idx.size, float(target)))
        self.cut_mu = grow(self.cut_mu, np.broadcast_to(mu, (idx.size, mu.size)))
        self.cut_multiplier, self.cut_point = (
            grow(self.cut_multiplier, self.multiplier[idx]),
            grow(self.cut_point, self.best_point[idx]),
        )
        self.lo[idx], self.hi[idx] = lo[moved], hi[moved]

    def _roll_back(self, entries, mu):
        """Undo the cuts ``entries`` (by entry index).

        Each outer box, with everything inside it
        (the boxes and cut-off parts it was refined into), becomes one box again.

        Its bound at mu is the largest of theirs, moved to mu: they cover the outer box's
        feasible points.  What lies inside is found by lineage (a box or cut descends from
        the cut whose box it was refined from), in time and memory linear in the tree: the
        pairwise test of the outer boxes needed |Y| bytes per pair of cuts, and a 240-s run at
        |Y| = 20, eps = 0.02 undid tens of thousands of cuts at once.  The cut-off parts are
        thin shells around their boxes, and after a large move of mu their bounds rise by
        about as much as the boxes'; turning each shell into boxes instead (up to 2 |Y| slabs
        per cut) made 100,000 boxes at |Y| = 20.

        After a roll-back the tree cuts no more: mu moves where the mechanism is still far from
        optimal, and at |Y| = 20, eps = 0.02 (three moves within the 60-s limit, each raising
        the parts' bounds by about 0.08 against a value of 0.31) every roll-back reset the tree
        to a few boxes (a gap of 9.7e-2 against 6.1e-2 at that limit).  Where mu never moves, as at |Y| = 10 in
        ``make bench``, the cuts stay: there they take 3 to 20 times fewer boxes.
        """
        self.reducing = False
        count = self.cut_bound.size
        chosen = np.zeros(count, dtype=bool)
        chosen[entries] = True
        # owner[i]: the outermost undone cut that cut i descends from (itself included), -1 if
        # none; found by walking every chain up at once (as many steps as cuts are nested).
        owner, at = np.full(count, -1), np.arange(count)
        while np.any(at >= 0):
            live = np.flatnonzero(at >= 0)
            hit = live[chosen[at[live]]]
            owner[hit] = at[hit]
            at[live] = self.cut_parent[at[live]]
        entries = np.flatnonzero(chosen & (owner == np.arange(count)))
        slot = np.full(count, -1)
        slot[entries] = np.arange(entries.size)
        box_owner = np.where(self.lineage >= 0, owner[np.maximum(self.lineage, 0)], -1)
        drop_box, drop_part = box_owner >= 0, owner >= 0
        outer_lo, outer_hi = self.cut_outer
        box_bounds = self.cached + self._drift(self.mu_at, mu, self.lo, self.hi)
        part_bounds = self.cut_bound + self._drift(self.cut_mu, mu, outer_lo, outer_hi)
        merged = np.full(entries.size, -np.inf)
        np.maximum.at(merged, slot[box_owner[drop_box]], box_bounds[drop_box])
        np.maximum.at(merged, slot[owner[drop_part]], part_bounds[drop_part])
        lo, hi = outer_lo[entries], outer_hi[entries]
        point, multiplier = self.cut_point[entries], self.cut_multiplier[entries]
        fields = {
            "lo": lo,
            "hi": hi,
            "cached": merged,
            "mu_at": np.broadcast_to(mu, lo.shape),
            "multiplier": multiplier,
            "multiplier_best": multiplier,
            "theta": np.zeros_like(lo),
            "unbounded": np.ones(entries.size, dtype=bool),
            # (the cut around an outermost undone one is not undone: it stays)
            "lineage": self.cut_parent[entries],
        }
        fields.update({name: point for name in ("start", "anchor", "anchor_best", "best_point", "rival")})
        for name, new in fields.items():
            setattr(self, name, np.concatenate([getattr(self, name)[~drop_box], new]))
        # The cuts left are renumbered; none of them descends from a dropped one.
        renumber = np.cumsum(~drop_part) - 1
        self.lineage = np.where(self.lineage >= 0, renumber[np.maximum(self.lineage, 0)], -1)
        parent = self.cut_parent[~drop_part]
        self.cut_parent = np.where(parent >= 0, renumber[np.maximum(parent, 0)], -1)
        self.cut_outer = tuple(a[~drop_part] for a in self.cut_outer)
        for name in ("cut_bound", "cut_mu", "cut_multiplier", "cut_point"):
            setattr(self, name, getattr(self, name)[~drop_part])

    def bounds(self, mu, target=-np.inf, ceiling=None, limit=None):
        """A certified bound of F_mu over Q in every box.

        A certified bound of F_mu over Q in every box; only boxes that may exceed ``target``, and
        were not bounded at this mu, are solved (at most ``limit``, the largest bounds first).

        The Lagrangian depends on mu only through -mu^T (q - P_Y), so a box's bound moves by at
        most the largest change of that linear term on the box (a knapsack): the others keep
        that valid, slightly larger bound.  So do the parts of Q cut off from the boxes
        (:meth:`_cut`): a cut whose part's bound now exceeds ``ceiling`` (default ``target``)
        is undone (:meth:`_roll_back`), the others keep that bound (``cut_off``).  A ceiling
        above the target keeps a round-off rise of the target, or a small move of mu, from
        undoing every cut.
        """
        ceiling = target if ceiling is None else ceiling
        parts = self.cut_bound + self._drift(self.cut_mu, mu, *self.cut_outer)
        if np.any(parts > ceiling):
            self._roll_back(np.flatnonzero(parts > ceiling), mu)
            parts = self.cut_bound + self._drift(self.cut_mu, mu, *self.cut_outer)
        bounds = self.cached + self._drift(self.mu_at, mu, self.lo, self.hi)
        # A box bounded at this very mu is not bounded again (its bound would not change).
        current = ~self.unbounded & np.all(self.mu_at == mu[None, :], axis=1)
        stale = np.flatnonzero((bounds > target) & ~current)
        if limit is not None and stale.size > limit:
            stale = stale[np.argsort(-bounds[stale], kind="stable")[:limit]]
        self.evaluated = stale.size
        if stale.size:
            self._evaluate(stale, mu, bounds[stale], target)
            bounds[stale] = self.cached[stale]
        # (a part cut off in this round is bounded at this mu, by the target)
        new = self.cut_bound[parts.size :]
        self.cut_off = max(float(parts.max(initial=-np.inf)), float(new.max(initial=-np.inf)))
        return bounds

    def candidates(self, which):
        """The ascent end points of boxes ``which`` (columns; not necessarily in Q)."""
        return self.best_point[which].T

    def split(self, which, widest=False):
        """Halve each box in ``which``; return the children's indices.

        Halve each box in ``which``: between its two rival maximisers (unless ``widest``), else
        across its widest side; return the children's indices.
        """
        lo, hi = self.lo[which], self.hi[which]
        width = hi - lo
        # A bound is loose where two maximisers of the Lagrangian compete (the hard case of the
        # trust-region problem): a cut between them separates them.
        apart = (self.best_point[which] - self.rival[which]) ** 2 / self.p
        wide = width**2 / self.p
        use_apart = apart.max(axis=1, keepdims=True) > self.settings.heuristics.rival_apart * wide.max(
            axis=1, keepdims=True
        )
        use_apart &= not widest
        score = np.where(use_apart, apart, wide)
        y, rows = np.argmax(score, axis=1), np.arange(which.size)
        between = 0.5 * (self.best_point[which] + self.rival[which])[rows, y]
        middle = np.where(use_apart[:, 0], between, 0.5 * (lo[rows, y] + hi[rows, y]))
        middle = np.clip(middle, lo[rows, y] + 0.1 * width[rows, y], hi[rows, y] - 0.1 * width[rows, y])
        hi_left, lo_right = hi.copy(), lo.copy()
        hi_left[rows, y], lo_right[rows, y] = middle, middle
        lo_new, hi_new, keep = tighten(np.concatenate([lo, lo_right]), np.concatenate([hi_left, hi]))
        # The children's ascents start at the parent's end point, which is also where their
        # quadratic minorant of Phi is expanded: its tightness depends on that point (starting
        # at the boundary of Q along the ray through it left |Y| = 20 below eps_max
        # converging with about 400 boxes instead of 35).
        ends = self.best_point[which]
        parents = np.concatenate([which, which])[keep]
        rest = np.ones(self.lo.shape[0], dtype=bool)
        rest[which] = False
        # (a box whose halves both vanish on the plane, by round-off, stays whole)
        rest[np.setdiff1d(which, parents)] = True
        self.lo = np.concatenate([self.lo[rest], lo_new[keep]])
        self.hi = np.concatenate([self.hi[rest], hi_new[keep]])
        self.start = np.concatenate([self.start[rest], np.concatenate([ends, ends])[keep]])
        self.anchor = np.concatenate([self.anchor[rest], self.anchor_best[parents]])
        for name in (
            "multiplier",
            "multiplier_best",
            "theta",
            "best_point",
            "rival",
            "cached",
            "mu_at",
            "unbounded",
            "anchor_best",
            "lineage",
        ):
            old = getattr(self, name)
            setattr(self, name, np.concatenate([old[rest], old[parents]]))
        self.unbounded[-parents.size :] = True
        return np.arange(self.lo.shape[0] - parents.size, self.lo.shape[0])
