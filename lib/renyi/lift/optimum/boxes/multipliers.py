"""The multiplier search of the box bound.

For each box: which multiplier of the budget and which model of Phi give the least certified
bound of F_mu.

:class:`~renyi.lift.optimum.boxes.bound.BoxLagrangian` certifies a bound for one multiplier and
one model of Phi; this module tries a grid of them per box in one stacked ascent, refines each
box's winner by a golden-section search, and keeps what the box tree needs of the result
(:class:`BoxBounds`), each box narrowed to where F_mu may exceed the target (:class:`Reduction`).
"""

from __future__ import annotations

import enum
import math
from dataclasses import dataclass, fields

import numpy as np

from .bound import Constraint
from .cover import project, reduce_range

__all__ = ["BoxBounds", "Model", "MultiplierSearch", "Reduction"]


class Model(enum.IntEnum):
    """The models of Phi a box is bounded with, in the order of ``BoxLagrangian.models``.

    Attributes
    ----------
    EXACT : int
        Phi itself, with the bound of its Hessian where z = A q is least.
    AT_START : int
        Phi's quadratic minorant expanded at the ascent's start (the parent's end point).
    AT_ANCHOR : int
        Phi's quadratic minorant expanded where the parent's own bound expanded it.
    """

    EXACT = 0
    AT_START = 1
    AT_ANCHOR = 2


@dataclass(eq=False)
class BoxBounds:
    """What one call of :class:`MultiplierSearch` returns, one row per box.

    Attributes
    ----------
    bound : ndarray, shape (boxes,)
        A certified bound of F_mu on the box's feasible points (-inf: it holds none).
    point : ndarray, shape (boxes, |Y|)
        The end point of the best bound's ascent.
    multiplier : ndarray, shape (boxes,)
        The coarse winner's multiplier: the centre of the children's trials.
    bound_multiplier : ndarray, shape (boxes,)
        The multiplier of the best bound, after refinement.
    theta : ndarray, shape (boxes, |Y|)
        The best bound's cover.
    rival : ndarray, shape (boxes, |Y|)
        The maximiser of the best trial with a smaller multiplier (a split falls between it
        and ``point``).
    anchor : ndarray, shape (boxes, |Y|)
        Where the winning model of Phi was expanded.
    cut_lo, cut_hi : ndarray, shape (boxes, |Y|)
        The box narrowed to where F_mu may exceed the target.
    """

    bound: np.ndarray
    point: np.ndarray
    multiplier: np.ndarray
    bound_multiplier: np.ndarray
    theta: np.ndarray
    rival: np.ndarray
    anchor: np.ndarray
    cut_lo: np.ndarray
    cut_hi: np.ndarray

    @classmethod
    def concat(cls, parts):
        """The results of consecutive chunks of boxes, as one.

        Parameters
        ----------
        parts : sequence of BoxBounds

        Returns
        -------
        BoxBounds
        """
        return cls(**{f.name: np.concatenate([getattr(p, f.name) for p in parts]) for f in fields(cls)})


class Reduction:
    """The boxes of one call, each narrowed by every tangent plane its bounds produce.

    Every bound's tangent plane majorises F_mu on the box's feasible points, so each one's
    range reduction (:func:`~renyi.lift.optimum.boxes.cover.reduce_range`) is valid and they
    intersect.  With no finite target nothing is reduced.

    Parameters
    ----------
    lo, hi : ndarray, shape (boxes, |Y|)
        The boxes as they are bounded.
    target : float
        F_mu <= target on every feasible point cut off.
    settings : SearchSettings
    """

    def __init__(self, lo, hi, target, settings):
        self.settings = settings
        self.boxes = (lo, hi)
        self.lo, self.hi, self.target = lo.copy(), hi.copy(), target
        self.active = bool(np.isfinite(target))

    def narrow(self, rows, tangent):
        """Narrow boxes ``rows`` by the reductions of these tangents.

        Intersect boxes ``rows`` (one per row of the tangent; repeats allowed) with the
        reductions of these tangents, each on the box as it was bounded.
        """
        if not self.active:
            return
        lo, hi = self.boxes
        new_lo, new_hi = reduce_range(*tangent, lo[rows], hi[rows], self.target, self.settings)
        np.maximum.at(self.lo, rows, new_lo)
        np.minimum.at(self.hi, rows, new_hi)


@dataclass(eq=False)
class _Best:
    """Each box's best bound so far and where it came from; refined in place."""

    trial: np.ndarray
    bound: np.ndarray
    point: np.ndarray
    multiplier: np.ndarray
    bound_multiplier: np.ndarray
    theta: np.ndarray


class MultiplierSearch:
    """The least certified bound of F_mu per box over trial multipliers and models of Phi.

    Parameters
    ----------
    lagrangian : BoxLagrangian
        Certifies a bound for one multiplier and model per box.
    settings : SearchSettings
    """

    def __init__(self, lagrangian, settings):
        self.lagrangian, self.settings = lagrangian, settings

    def __call__(self, lo, hi, start, anchor, multiplier, multiplier_best, mu, target=-np.inf):
        """Bound boxes with each trial multiplier and model of Phi; keep the best per box.

        Parameters
        ----------
        lo, hi : ndarray, shape (boxes, |Y|)
        start : ndarray, shape (boxes, |Y|)
            Where each box's ascent starts (its parent's end point).
        anchor : ndarray, shape (boxes, |Y|)
            Where the parent's bound expanded its minorant of Phi.
        multiplier : ndarray, shape (boxes,)
            Each box's previous multiplier (inf: none yet), the centre of its trial grid.
        multiplier_best : ndarray, shape (boxes,)
            The multiplier of the box's previous bound, tried too: a child that did not try it
            could not match its parent's bound, and would keep that bound round after round.
        mu : ndarray, shape (|Y|,)
        target : float, optional
            A box whose trials already bound it below ``target`` is not refined, and every box
            is narrowed to where F_mu may exceed it.

        Returns
        -------
        BoxBounds

        Notes
        -----
        The trials of all models run as one stacked ascent (trial-major rows), so a box costs
        a few array operations rather than a Python loop per trial.
        """
        # A box whose best multiplier was 0 gets the root's wide grid: multiples of 0 are 0,
        # and its children would otherwise never try another.
        fresh = ~np.isfinite(multiplier) | (multiplier == 0)
        known = np.where(fresh, 0.0, multiplier)
        inherited = np.where(fresh, known, multiplier_best)
        # Phi's minorant is expanded at the ascent's start and at the point the parent's own
        # bound expanded it at: neither dominates.  The budget's z ranges tighten a box's bounds
        # only where its ascent starts within them (they hold where it ends, ``bound_at``);
        # elsewhere the bounds hold on the whole box.
        within = ~self.lagrangian.outside(project(np.clip(start, lo, hi), lo, hi))
        constraints = self.lagrangian.models(lo, hi, (start, anchor), within)
        multipliers, models = self._trial_grid(constraints, fresh, known, inherited)
        reduction = Reduction(lo, hi, target, self.settings)
        best, trials = self._rank(lo, hi, mu, multipliers, models, constraints, start, known, reduction)
        winner = models[best.trial]
        # Every box is refined with the model its best trial used, all in one stacked search.
        constraint = (
            constraints[Model.AT_START]
            .where(winner == Model.AT_ANCHOR, constraints[Model.AT_ANCHOR])
            .where(winner == Model.EXACT, constraints[Model.EXACT])
        )
        # (A box already below the target needs no better bound: it will not be split.)
        rows = np.flatnonzero(best.bound > target)
        if rows.size:
            self._refine(lo, hi, mu, rows, constraint, best, reduction, target)
        rival = self._rival(multipliers, trials, best)
        # Where the winning minorant was expanded (the exact model's boxes keep their start).
        best_anchor = np.where((winner == Model.AT_ANCHOR)[:, None], anchor, start)
        # A box that holds no point within the budget's ranges holds no feasible point: F_mu
        # has no maximum there at any mu (with a tiny prior entry two boxes in three can be such,
        # and each would otherwise keep its parent's bound and be split again and again).
        empty = self.lagrangian.misses_budget(self.lagrangian.box_z_range(lo, hi))
        return BoxBounds(
            bound=np.where(empty, -np.inf, best.bound),
            point=best.point,
            multiplier=best.multiplier,
            bound_multiplier=best.bound_multiplier,
            theta=best.theta,
            rival=rival,
            anchor=best_anchor,
            cut_lo=reduction.lo,
            cut_hi=reduction.hi,
        )

    def _trial_grid(self, constraints, fresh, known, inherited):
        """Every trial multiplier, one row per trial, and the model of Phi each is tried with."""
        h = self.settings.heuristics
        multipliers, models = [], []
        for model, constraint in zip(Model, constraints):
            if model == Model.AT_ANCHOR:
                # The parent's minorant only at the parent's multiplier: what lets a child match
                # its parent's bound (a full grid here cost more than it gained).
                trials = [inherited]
            else:
                trials = [known * step for step in h.box_bound.multiplier_steps]
                # Also the multiplier from which the Lagrangian is concave with no cover at all.
                threshold = self.lagrangian.concave_from(constraint.h)
                if np.all(np.isfinite(threshold)):
                    trials += [threshold * step for step in h.box_bound.threshold_steps]
                # The multiplier of the parent's bound, so that a child can always match it.
                trials.append(inherited)
                if fresh.any():
                    trials += [np.where(fresh, root, known) for root in h.box_bound.root_multipliers]
            multipliers += trials
            models += [model] * len(trials)
        return np.stack(multipliers), np.array(models)

    def _rank(self, lo, hi, mu, multipliers, models, constraints, start, known, reduction):
        """A short ascent per trial ranks them, with the fixed shapes of cover only.

        The least-cost cover costs most of a bound; the winner's is refined and continued
        later with it.  Returns each box's best trial (:class:`_Best`) and every trial's
        bounds and end points.
        """
        bounds, points, thetas = self._trials(
            lo, hi, mu, multipliers, start, [constraints[m] for m in models], reduction, least=False
        )
        # The first best trial per box; a box with no finite bound keeps its start.
        top, rows = np.argmin(bounds, axis=0), np.arange(lo.shape[0])
        bound, ok = bounds[top, rows], np.isfinite(bounds[top, rows])
        coarse = np.where(ok, multipliers[top, rows], known)
        best = _Best(
            trial=top,
            bound=bound,
            point=np.where(ok[:, None], points[top, rows], start),
            multiplier=coarse,
            bound_multiplier=coarse.copy(),
            theta=np.where(ok[:, None], thetas[top, rows], 0.0),
        )
        return best, (bounds, points)

    def _refine(self, lo, hi, mu, rows, constraint, best, reduction, target):
        """Search each box's multiplier around its coarse winner, then continue its best ascent.

        The bound is roughly convex in the multiplier, often with a sharp minimum between the
        coarse trials: a golden-section search.  The trials rank the multipliers with fixed
        shapes of cover, which cost most where the Lagrangian is most convex (small
        multipliers), so the coarse winner can lie far from the least-cost cover's best: where
        the search ends at an end of its range, a second one continues beyond it, up to
        ``box_bound.golden_wide_span`` times further.
        """
        h = self.settings.heuristics
        results = (best.bound, best.point, best.theta, best.bound_multiplier, reduction)
        self._golden(
            lo,
            hi,
            mu,
            rows,
            constraint,
            best.bound,
            best.multiplier,
            best.bound_multiplier,
            best.point,
            reduction,
            h.box_bound.golden_span,
        )
        self._finish(lo, hi, mu, rows, constraint, *results)
        with np.errstate(divide="ignore", invalid="ignore"):
            side = np.log(best.bound_multiplier / best.multiplier) / math.log(h.box_bound.golden_span)
        side = np.where(np.isfinite(side), side, 0.0)
        edge = rows[(best.bound[rows] > target) & (np.abs(side[rows]) > h.box_bound.golden_edge)]
        if edge.size and h.box_bound.golden_wide_span > 1:
            before = best.bound_multiplier.copy()
            centre = before * math.sqrt(h.box_bound.golden_wide_span) ** np.sign(side)
            span = math.sqrt(h.box_bound.golden_wide_span)
            self._golden(
                lo, hi, mu, edge, constraint, best.bound, centre, best.bound_multiplier, best.point, reduction, span
            )
            self._finish(lo, hi, mu, edge[best.bound_multiplier[edge] != before[edge]], constraint, *results)

    @staticmethod
    def _rival(multipliers, trials, best):
        """The maximiser of each box's best trial with a smaller multiplier (else its end point)."""
        bounds, points = trials
        smaller = np.where(multipliers < best.multiplier, bounds, np.inf)
        pick, rows = np.argmin(smaller, axis=0), np.arange(bounds.shape[1])
        has = np.isfinite(smaller[pick, rows])
        return np.where(has[:, None], points[pick, rows], best.point)

    def _trials(self, lo, hi, mu, multipliers, start, constraints, reduction, least=True):
        """Short ascents for every trial multiplier, all at once.

        Short ascents for every row of ``multipliers`` (trials x boxes), row t with the model
        ``constraints[t]``, all at once; results trials x boxes.
        """
        n_trials, m = multipliers.shape
        tile = np.tile(np.arange(m), n_trials)
        bound, x, theta, tangent = self.lagrangian.bound_at(
            lo[tile],
            hi[tile],
            mu,
            multipliers.ravel(),
            start[tile],
            Constraint.stack(constraints),
            self.settings.heuristics.box_bound.trial_steps,
            least,
        )
        reduction.narrow(tile, tangent)
        return bound.reshape(n_trials, m), x.reshape(n_trials, m, -1), theta.reshape(n_trials, m, -1)

    def _golden(self, lo, hi, mu, rows, constraint, best, centre, bound_multiplier, start, reduction, span):
        """Golden-section search of the multiplier in ``[centre / span, centre * span]`` for boxes ``rows``.

        Every evaluation is a valid bound, so ``best`` and ``bound_multiplier`` (updated in place)
        keep the smallest seen; the search only decides where to look.
        """
        rows = rows[centre[rows] > 0]
        if rows.size == 0:
            return
        g = (math.sqrt(5) - 1) / 2
        u = np.log(centre[rows])
        a, b = u - math.log(span), u + math.log(span)
        sub = constraint.rows(rows)
        # Each evaluation's cover starts from the previous one's (the fixed shapes are ranked
        # once, at the first).
        cover = [None]

        def f(points):
            multiplier = np.exp(points)
            bound, _, cover[0], tangent = self.lagrangian.bound_at(
                lo[rows],
                hi[rows],
                mu,
                multiplier,
                start[rows],
                sub,
                self.settings.heuristics.box_bound.trial_steps,
                near=cover[0],
            )
            reduction.narrow(rows, tangent)
            better = bound < best[rows]
            best[rows[better]], bound_multiplier[rows[better]] = bound[better], multiplier[better]
            return bound

        c, d = b - g * (b - a), a + g * (b - a)
        fc, fd = f(c), f(d)
        for _ in range(self.settings.heuristics.box_bound.golden_evaluations - 2):
            left = fc <= fd
            a, b = np.where(left, a, c), np.where(left, d, b)
            new = np.where(left, b - g * (b - a), a + g * (b - a))
            fn = f(new)
            c, d = np.where(left, new, d), np.where(left, c, new)
            fc, fd = np.where(left, fn, fd), np.where(left, fc, fn)

    def _finish(self, lo, hi, mu, rows, constraint, best, best_x, best_theta, bound_multiplier, reduction):
        """The long ascent at the multiplier of each box's best bound (kept where it is better).

        The children inherit the coarse winner's multiplier (their trial grid drifts otherwise,
        and the gap closes far more slowly: ``make bench``'s lift case at eps_max / 2) and try
        this one too.
        """
        if rows.size == 0:
            return
        final_multiplier = bound_multiplier[rows]
        bound, x, theta, tangent = self.lagrangian.bound_at(
            lo[rows], hi[rows], mu, final_multiplier, best_x[rows], constraint.rows(rows)
        )
        reduction.narrow(rows, tangent)
        keep = bound < best[rows]
        best[rows[keep]], best_x[rows[keep]], best_theta[rows[keep]] = bound[keep], x[keep], theta[keep]
