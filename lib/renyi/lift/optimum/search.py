"""The phases of the search.

The conical branch and bound with column generation, then the box branch and bound, with the
local searches; the multiplier the box tree bounds at comes from
:mod:`~renyi.lift.optimum.stationary`.
"""

from __future__ import annotations

import contextlib
import math
import time

import numpy as np

from .._numerics import NEGLIGIBLE_WEIGHT, TINY
from .boxes import BoxTree
from .candidates import lines_through_centre, polish_channel, polish_mechanism, price_locally, pull_inside
from .lp import (
    LinearProgramFailed,
    OutOfTime,
    enter,
    gains,
    initial_columns,
    next_columns,
    priced,
    solve_lp,
    solve_priced,
)
from .stationary import nearest_multiplier, polished_multiplier

__all__: list[str] = []


def clock(time_limit):
    """A clock for ``time_limit`` seconds from now.

    ``out_of_time(margin=0)``: whether ``time_limit`` seconds from now would be passed after
    ``margin`` more; ``out_of_time.left()`` is the time left (inf without a limit).
    """
    started = time.perf_counter()

    def out_of_time(margin=0.0):
        return time_limit is not None and time.perf_counter() - started + margin > time_limit

    out_of_time.left = lambda: math.inf if time_limit is None else time_limit - (time.perf_counter() - started)
    return out_of_time


def deadline_of(out_of_time) -> float:
    """The :func:`clock`'s limit as a :func:`time.perf_counter` reading (inf without a limit)."""
    return time.perf_counter() + out_of_time.left()


class Schedule:
    """The rounds at which a periodic local search runs.

    First at round ``first`` (default
    ``every``), then every ``every`` rounds while it raises the LP's value, and twice as
    rarely after each time it does not (they cost seconds, and where the LP is already
    optimal, as at small eps, they find nothing).
    """

    def __init__(self, every, first=None):
        self.base = self.every = every
        self.next = every if first is None else first
        self.seconds = 0.0

    def due(self, rounds):
        return rounds >= self.next

    @contextlib.contextmanager
    def timed(self):
        """Time the search's run (``seconds``: the last one's)."""
        start = time.perf_counter()
        yield
        self.seconds = time.perf_counter() - start

    def record(self, rounds, useful):
        self.every = self.base if useful else 2 * self.every
        self.next = rounds + self.every


def cone_phase(
    model, geo, tree, rtol, seed, time_limit, max_cones, extra=None, known_upper=math.inf, overall=None, channels=False
):
    """Column generation priced by the conical branch and bound, until the gap or the time is reached.

    ``extra``: more feasible candidate posteriors for the first LP; ``known_upper``: a valid
    upper bound found elsewhere, which ends the search once the value is within ``rtol`` of it.
    ``overall``: the whole search's clock; out of it before the first cones are ready, no cone
    is bounded (the bound is then ``inf``).  ``channels``: the local search also searches over
    the channel (:func:`channel_columns`), where an output can split in two, from the
    mechanism and from a random start; the route of a matrix that is not square and
    invertible, where no box phase follows to do it.
    """
    settings = geo.settings
    out_of_time = clock(time_limit)
    columns = initial_columns(model, geo, tree, seed)
    if extra is not None and extra.size:
        columns = np.concatenate([columns, extra], axis=1)
    columns, value, weights, mu = solve_priced(model, tree, columns)
    best_upper, rounds = math.inf, 0
    local_search = Schedule(settings.heuristics.cones.local_every, first=1)
    # A split costs about k (k + pairs) operations per cone: bound the batch so that one round
    # stays well under a second at every |Y| (the time limit is checked between rounds).
    h = settings.heuristics
    polish_iter = h.cones.polish_iter if model.p_y.size <= h.cones.large_size else h.cones.polish_iter_large
    batch = min(h.cones.split_batch, max(200, h.cones.split_work // (geo.k * (geo.k + len(tree.pairs)))))
    while True:
        rounds += 1
        # The local search is the slowest step at large |Y| (seconds at |Y| = 20): start it
        # again only if the time left exceeds what it took last time.
        if local_search.due(rounds) and not out_of_time(local_search.seconds):
            previous = value
            with local_search.timed():
                deadline = deadline_of(out_of_time)
                columns, value, weights, mu = improve(model, geo, tree, columns, weights, polish_iter, deadline)
                if channels and not out_of_time():
                    found = channel_columns(model, geo, columns, weights, [rounds], random_starts=True)
                    try:
                        solved = solve_priced(model, tree, np.concatenate([columns, found], axis=1))
                    except LinearProgramFailed:
                        # (an output of a channel search that nearly vanished can carry a gain
                        # of order 1 / P_Y(y) that no LP solves beside the others: left out)
                        solved = columns, value, weights, mu
                    columns, value, weights, mu = solved
            local_search.record(rounds, value > previous * (1 + settings.heuristics.boxes.search_useful * rtol))
        target = value * (1 + settings.heuristics.cones.target * rtol)
        ends = math.inf if overall is None else deadline_of(overall)
        bounds = tree.bounds(mu, target=target, deadline=ends)
        if bounds is None:  # (out of time before the first cones were ready)
            return columns, value, weights, mu, best_upper
        best_upper = min(best_upper, max(value, float(bounds.max())))
        closed = min(best_upper, known_upper)
        if closed - value <= rtol * closed or out_of_time() or len(tree.cones) >= max_cones:
            return columns, value, weights, mu, best_upper
        live = np.flatnonzero(bounds > target)
        live = live[np.argsort(-bounds[live])][: max(1, min(len(live), max_cones - len(tree.cones), batch))]
        columns = next_columns(model, columns, weights, tree.split(live), mu, value, settings)
        columns, value, weights, mu = solve_priced(model, tree, columns)


def improve(model, geo, tree, columns, weights, max_iter, deadline=None):
    """Polish the LP's support as a whole mechanism, then price locally from the best columns.

    Both searches stop at ``deadline`` (a :func:`time.perf_counter` reading).
    """
    support = weights > NEGLIGIBLE_WEIGHT
    polished, _ = polish_mechanism(geo, columns[:, support], weights[support], max_iter, deadline)
    columns = np.concatenate([columns, pull_inside(geo, polished), lines_through_centre(geo, polished)], axis=1)
    columns, value, weights, mu = solve_priced(model, tree, columns)
    reduced = priced(model, columns, mu)
    starts = columns[:, np.argsort(-reduced)[: min(12, columns.shape[1])]]
    columns = np.concatenate([columns, pull_inside(geo, price_locally(geo, mu, starts, max_iter, deadline))], axis=1)
    return solve_priced(model, tree, columns)


def channel_columns(model, geo, columns, weights, seeds, random_starts=False):
    """Posteriors from local searches over the channel started at the LP's support (none above the size limit).

    Over the channel an output can split, which the posterior polish cannot do.  With
    ``random_starts``, each seed also starts one search near the constant channel.
    """
    if model.p_y.size > geo.settings.heuristics.polish.channel_max_size:
        return np.zeros((model.p_y.size, 0))
    support = weights > NEGLIGIBLE_WEIGHT
    q, w = columns[:, support], weights[support]
    found = [polish_channel(geo, q, w, seed) for seed in seeds]
    if random_starts:
        found += [polish_channel(geo, q, w, seed, from_random=True) for seed in seeds]
    return np.concatenate(found, axis=1)


class BoxPhase:
    """The box branch and bound's bound of U(mu), with column generation from its boxes' maximisers.

    Every round's ``max(value, U(mu))`` bounds V (weak duality holds for every mu); the
    smallest is kept.  Where the bound is loosest the LP may lack a column: the boxes'
    ascent end points, moved onto Q, enter it when they price above its value, and every few
    rounds local searches over posteriors (from them) and over the channel (from the LP's
    support) add more.  One :meth:`round` bounds the live boxes, splits the worst, searches
    for better posteriors, re-prices the LP and moves the tree's mu when the mechanism improves.
    """

    def __init__(self, model, geo, lp, rtol, out_of_time, pool=None, seed=0):
        self.model, self.geo, self.rtol, self.out_of_time, self.pool = model, geo, rtol, out_of_time, pool
        # The local searches' random starts near the mechanism's outputs (reproducible).
        self.rng = np.random.default_rng(seed)
        self.settings = geo.settings
        h = self.settings.heuristics
        self.columns, self.value, self.weights, self.mu = lp
        # Each further start of the channel search runs only if the one before raised the value.
        self.channel_search = Schedule(h.boxes.local_every)
        if model.p_y.size <= h.polish.channel_max_size:
            for start in range(h.polish.channel_starts):
                previous = self.value
                with self.channel_search.timed():
                    channel = channel_columns(model, geo, self.columns, self.weights, [start])
                self._enter(channel)
                self.channel_search.record(0, self.value > previous * (1 + h.boxes.search_useful * rtol))
                if self.channel_search.every > h.boxes.local_every:
                    break
        self.tree = BoxTree(geo, pool, time.perf_counter() + h.boxes.root_share * self.out_of_time.left())
        # Polishes skipped before the next one, and polishes in a row whose fit failed.
        self.polish_skips, self.polish_failures = 0, 0
        # The tree's mu changes only when the mechanism improves: every change re-solves boxes.
        self.tree_mu = self._generate_columns()
        self.mu_value, self.pending, self.held = self.value, self.columns[:, :0], self.columns[:, :0]
        self.best_upper, self.rounds, self.batch = math.inf, 0, h.boxes.batch
        self.local_search = Schedule(h.boxes.local_every)
        # A channel search running in a worker (pool only), and when it started.
        self.channel_running, self.channel_started = None, 0.0

    @property
    def lp(self):
        """The LP's ``(columns, value, weights, mu)``."""
        return self.columns, self.value, self.weights, self.mu

    def _enter(self, new):
        deadline = deadline_of(self.out_of_time)
        self.columns, self.value, self.weights, self.mu = enter(self.model, self.lp, new, self.settings, deadline)

    def run(self, max_boxes):
        """Rounds until the gap, the time or ``max_boxes``; returns the LP, the bound and the box count.

        The first round runs even out of time: it bounds the root box, the phase's only upper
        bound (``global_optimum``'s docstring counts it among the steps that can overrun).
        """
        while True:
            size = self.round(max_boxes)
            if size is not None:
                return (*self.lp, self.best_upper, size)

    def round(self, max_boxes):
        """One round; the number of boxes when the search is over, else None."""
        self.rounds += 1
        live, per_box, size = self.bound(max_boxes)
        if live is None:
            return size
        found, worst = self.split(live, per_box)
        found, searches, stuck = self.search(found, worst)
        self.reprice(found, searches)
        self.move_mu(stuck)
        return None

    def bound(self, max_boxes):
        """Bound the live boxes at the tree's mu: the boxes to split (None when done), the cost per box."""
        h, rtol, tree = self.settings.heuristics, self.rtol, self.tree
        target = self.value * (1 + h.boxes.target * rtol)
        start = time.perf_counter()
        # At most the boxes the round's time allows are bounded (after a move of mu, every box
        # may need it); parts that range reduction cut off stay so while below value (1 + rtol).
        bounds = tree.bounds(self.tree_mu, target, ceiling=self.value * (1 + rtol), limit=2 * self.batch)
        per_box = (time.perf_counter() - start) / max(tree.evaluated, 1)
        # The parts of Q that range reduction cut off from the boxes are bounded too.
        self.best_upper = min(self.best_upper, max(self.value, float(bounds.max()), tree.cut_off))
        live = np.flatnonzero(bounds > target)
        closed = self.best_upper - self.value <= rtol * self.best_upper
        if live.size == 0 or closed or self.out_of_time() or bounds.size >= max_boxes:
            return None, per_box, bounds.size
        return live[np.argsort(-bounds[live])][: self.batch], per_box, bounds.size

    def split(self, live, per_box):
        """Split the live boxes; their maximisers (moved onto Q) and those of the worst boxes."""
        h, tree = self.settings.heuristics, self.tree
        found = pull_inside(self.geo, tree.candidates(live))
        worst = found[:, : h.boxes.local_starts]
        children = tree.split(live)
        while 0 < children.size < h.boxes.min_round:
            previous, children = children.size, tree.split(children, widest=True)
            if children.size <= previous:  # (halves vanished: boxes as thin as round-off)
                break
        # Keep the next round's bounding (two children per split) near boxes.round_seconds, and
        # within the time left.
        budget = min(h.boxes.round_seconds, self.out_of_time.left())
        self.batch = int(np.clip(budget / max(2 * per_box, TINY), h.boxes.min_batch, h.boxes.batch))
        return found, worst

    def search(self, found, worst):
        """The local searches due this round: candidates, the schedules that ran, and stuck points."""
        h, model, geo, rounds = self.settings.heuristics, self.model, self.geo, self.rounds
        searches, found = [], np.concatenate([found, self.pending], axis=1)
        self.pending = found[:, :0]
        # A search runs only if it would end in time, judging by how long it took last time.
        stuck = found[:, :0]
        if self.local_search.due(rounds) and not self.out_of_time(self.local_search.seconds):
            with self.local_search.timed():
                starts, ends = found[:, : h.boxes.local_starts], deadline_of(self.out_of_time)
                local = pull_inside(geo, price_locally(geo, self.mu, starts, h.boxes.local_iter, ends))
                # The same search at the tree's mu from the worst boxes: a feasible point with
                # F_mu above value (1 + rtol) proves U(mu) above it, and no split can close the
                # gap then (a fitted mu slightly off can hold a tree on one box).
                at_tree = pull_inside(geo, price_locally(geo, self.tree_mu, worst, h.boxes.local_iter, ends))
                stuck = at_tree[:, priced(model, at_tree, self.tree_mu) > self._stuck_above()]
            found, searches = np.concatenate([found, local, stuck], axis=1), searches + [self.local_search]
        channel = self._channel_search()
        if channel is not None:
            found, searches = np.concatenate([found, channel], axis=1), searches + [self.channel_search]
        return found, searches, stuck

    def _stuck_above(self):
        """The price above which a point holds the tree (see ``Heuristics.tree_multiplier.stuck_share``).

        A point priced above value (1 + rtol) keeps U(mu) above the goal, but moving mu
        re-bounds every box, which is worth it only once the boxes' bound nears that price
        (``make bench-scale``, alpha = 3, eps = 0.02).
        """
        h, value = self.settings.heuristics, self.value
        return max(value * (1 + self.rtol), value + h.tree_multiplier.stuck_share * (self.best_upper - value))

    def _generate_columns(self):
        """Column generation priced near the outputs, then the tree's mu (see :func:`polished_multiplier`).

        Every box bound is computed at one mu, and a mu fitted to a mechanism that is not yet
        locally optimal keeps U(mu) above the value however fine the boxes (``make
        bench-scale``, alpha = 5, eps = 0.02).  Rounds alternate between the LP's dual (degenerate: its
        columns may price far above the value for tens of rounds before the value rises, but
        they move it) and the fitted mu, refitted when the value rises (its columns show that
        the mechanism is not yet locally optimal); the loop ends after ``columns.patience``
        rounds at the fitted mu whose best column prices within ``columns.slack`` (or rtol) of
        the value, after ``columns.rounds`` rounds (a fitted mu whose columns do not raise the
        value would find them again), or when ``columns.share`` of the time left is spent.
        """
        h = self.settings.heuristics
        ends = time.perf_counter() + h.columns.share * self.out_of_time.left()
        slack = max(h.columns.slack, self.rtol)
        fitted, fitted_at = self._refit()
        dry, rounds = 0, 0
        while (
            dry < h.columns.patience
            and rounds < h.columns.rounds
            and time.perf_counter() < ends
            and not self.out_of_time()
        ):
            rounds += 1
            at_fit = rounds % 2 == 0
            mu = fitted if at_fit else self.mu
            starts, ends = self._near_support(), deadline_of(self.out_of_time)
            found = pull_inside(self.geo, price_locally(self.geo, mu, starts, h.boxes.local_iter, ends))
            if at_fit:
                best = float(priced(self.model, found, mu).max(initial=-np.inf))
                dry = dry + 1 if best <= self.value * (1 + slack) else 0
            self._enter(found)
            # (A refit polishes the whole mechanism, seconds at |Y| = 20: only after real gains.)
            if self.value > fitted_at * (1 + slack):
                fitted, fitted_at = self._refit()
        if self.value > fitted_at * (1 + h.tree_multiplier.renew * self.rtol):
            fitted, fitted_at = self._refit()
        return fitted

    def _refit(self):
        """The mu fitted to the LP's mechanism polished (its points enter the LP), and the value then."""
        fitted, polished = self._polished()
        self._enter(polished)
        return fitted, self.value

    def _polished(self):
        """:func:`polished_multiplier`'s mu and points, or the LP's dual and none when skipped.

        After a polish whose fit failed the next 1, 2, 4, ... are skipped (consecutive failures
        double it; a fit that holds resets it): where the posteriors' budget is tight SLSQP
        ends far from feasible, and a failed fit yields the LP's dual, which skipping gives at
        once (``make bench-scale``, alpha = 5, eps = 2 eps_max).
        """
        if self.polish_skips > 0:
            self.polish_skips -= 1
            return self.mu, self.columns[:, :0]
        fitted, polished, fits = polished_multiplier(
            self.model, self.geo, self.columns, self.weights, self.mu, self._polish_deadline()
        )
        self.polish_failures = 0 if fits else self.polish_failures + 1
        self.polish_skips = 0 if fits else 2 ** (self.polish_failures - 1)
        return fitted, polished

    def _polish_deadline(self):
        """When a polish of the mechanism must stop: at the time limit.

        Not earlier: a polish cut short leaves both the lower bound and the tree's mu poorer,
        which costs more than the overrun it saves (``make bench-scale``, alpha = 3,
        eps = 2 eps_max).
        """
        return deadline_of(self.out_of_time)

    def _near_support(self):
        """Starts near the LP mechanism's outputs: each coordinate scaled by a factor in [0.5, 1.5].

        Other local maxima of F_mu lie near the outputs (the posteriors polish cannot leave
        theirs), where the boxes' points and uniformly random starts rarely land (``make
        bench-scale``, alpha = 5, eps = 0.02).
        """
        support = self.columns[:, self.weights > NEGLIGIBLE_WEIGHT]
        n = self.settings.heuristics.boxes.local_starts
        starts = support[:, self.rng.integers(0, support.shape[1], n)] * self.rng.uniform(
            0.5, 1.5, (support.shape[0], n)
        )
        return starts / starts.sum(axis=0)

    def _channel_search(self):
        """Posteriors of a channel search that finished or ran this round (None: none)."""
        h, model = self.settings.heuristics, self.model
        small = model.p_y.size <= h.polish.channel_max_size
        search = self.channel_search
        if self.channel_running is not None and self.channel_running.done():
            channel = self.channel_running.result()
            search.seconds = time.perf_counter() - self.channel_started
            self.channel_running, self.tree.busy_workers = None, 0
            return channel
        if small and self.channel_running is None and search.due(self.rounds) and not self.out_of_time(search.seconds):
            args = (model, self.geo, self.columns, self.weights, [self.rounds])
            if self.pool is not None:
                # In a worker, while the boxes are bounded here: the worker would be idle.
                self.channel_running = self.pool.executor.submit(channel_columns, *args)
                self.channel_started, self.tree.busy_workers = time.perf_counter(), 1
                return None
            with search.timed():
                return channel_columns(*args)
        return None

    def reprice(self, found, searches):
        """Re-solve the LP with the candidates that price above its value; update the schedules."""
        h, model = self.settings.heuristics, self.model
        better = found[:, priced(model, found, self.mu) > self.value * (1 + h.pricing.rtol)]
        previous = self.value
        if better.shape[1]:
            # The support, then the newest columns: the boxes' points are where mu is still wrong.
            support = self.columns[:, self.weights > NEGLIGIBLE_WEIGHT]
            columns = np.concatenate([model.p_y[:, None], support, self.columns, better], axis=1)
            keep = columns[:, -h.boxes.lp_columns :]
            columns = np.concatenate([columns[:, : 1 + support.shape[1]], keep], axis=1)
            try:
                solved = solve_lp(model, columns, gains(model, columns), self.settings, deadline_of(self.out_of_time))
                self.columns, (self.value, self.weights, self.mu) = columns, solved
            except OutOfTime:  # (the LP before stays: a mechanism, and a valid mu)
                pass
        for search in searches:
            search.record(self.rounds, self.value > previous * (1 + h.boxes.search_useful * self.rtol))

    def move_mu(self, stuck):
        """Move the tree's mu: towards the stuck points, or to the polished mechanism's when it improved."""
        h, rtol = self.settings.heuristics, self.rtol
        if stuck.shape[1] and self.value <= self.mu_value * (1 + h.tree_multiplier.renew * rtol):
            if priced(self.model, stuck, self.tree_mu).max() > self.value * (1 + h.tree_multiplier.dual_switch):
                # (a fitted mu can bound U far above the value; at the LP's dual the boxes'
                # maximisers find better mechanisms fast)
                self.tree_mu = self.mu
                return
            # The nearest mu that prices the LP's support and those points at most at the
            # value (the LP's own dual is one such, but far off and poor elsewhere).
            # (every stuck point found so far is kept: the step must not undo an earlier one)
            self.held = np.concatenate([stuck, self.held], axis=1)
            known = np.concatenate([self.columns[:, self.weights > NEGLIGIBLE_WEIGHT], self.held], axis=1)
            controls = h.tree_multiplier
            nearer = nearest_multiplier(
                self.model, self.tree_mu, known, self.value, controls.stuck_slack * rtol, controls
            )
            if nearer is not None:
                self.tree_mu = nearer
        elif self.value > self.mu_value * (1 + h.tree_multiplier.renew * rtol):
            # The polished points enter the next round's LP with the boxes' points.
            self.tree_mu, polished = self._polished()
            self.pending, self.mu_value = polished, self.value
