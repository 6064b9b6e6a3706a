"""Theorem 2 computed: the bracket [lower, upper] of global_optimum against an independent oracle."""

import math
import time

import numpy as np
import pytest
from oracles import best_mechanism_multistart, lifts_of_channel
from renyi.lift import EXAMPLES, GeneralLeakageModel, LeakageModel, certificate, epsilon_max, global_optimum
from renyi.lift.optimum import search
from renyi.lift.optimum.candidates import polish_mechanism
from renyi.lift.optimum.cones import Geometry
from renyi.lift.optimum.heuristics import Heuristics, PolishHeuristics, PricingHeuristics
from renyi.lift.optimum.settings import SearchSettings

MEDICAL = EXAMPLES["medical"]


def random_model(seed, k):
    """Diagonally dominant columns and P_Y bounded away from 0 (the issue's test family)."""
    rng = np.random.default_rng(seed)
    a = 0.6 * np.eye(k) + 0.4 * rng.dirichlet(np.full(k, 0.7), size=k).T
    p_y = 0.5 / k + 0.5 * rng.dirichlet(np.ones(k))
    return LeakageModel(a @ p_y, a)


def benchmark_matrix(rng, k):
    """Half identity, half Dirichlet(0.5) columns: the family of ``make bench-scip``."""
    return 0.5 * np.eye(k) + 0.5 * rng.dirichlet(np.full(k, 0.5), size=k).T


CASES = [
    (seed, k, order, eps)
    for seed, k in [(1, 4), (2, 4), (3, 4), (4, 6), (5, 6)]
    for order, eps in [(3, 0.02), (5, 0.1)]
]
# From |Y| = 6 the boxes bound U(mu) where their proof holds (alpha >= 2); below alpha = 2 the
# cones alone do, and this case checks them at that size.
CASES.append((4, 6, 1.5, 0.02))


@pytest.mark.slow
@pytest.mark.parametrize("seed,k,order,eps", CASES)
def test_oracle_never_beats_the_upper_bound(seed, k, order, eps):
    model = random_model(seed, k)
    result = global_optimum(model, eps, order, rtol=1e-5, time_limit=30)
    oracle = best_mechanism_multistart(model.p_y, model.A, eps, order, starts=12, seed=seed)
    assert oracle > 0
    assert oracle <= result.upper_bound * (1 + 1e-8), (oracle, result.upper_bound)
    # The lower bound is within the reported gap of anything the oracle finds.
    assert oracle - result.lower_bound <= result.gap * result.upper_bound + 1e-9
    assert result.lower_bound <= result.upper_bound
    lifts = lifts_of_channel(result.p_u_given_y, model.p_y, model.A, model.p_x, order)
    assert np.all(lifts <= math.exp(eps) * (1 + 1e-10))


def test_medical_example_is_certified():
    result = global_optimum(MEDICAL, 0.02, 3)
    assert result.certified and result.gap <= 1e-6
    assert result.lower_bound == result.utility == pytest.approx(0.080712, abs=1e-6)
    assert result.upper_bound_source == "branch-and-bound"
    cert = certificate(MEDICAL, 0.02, 3)
    assert cert.V_minus <= result.lower_bound <= result.upper_bound <= cert.V_plus


def _closest_pair(q):
    distances = [np.max(np.abs(q[:, i] - q[:, j])) for i in range(q.shape[1]) for j in range(i)]
    return min(distances, default=math.inf)


def test_coincident_posteriors_are_merged():
    result = global_optimum(MEDICAL, 0.01, 3)
    assert _closest_pair(result.p_y_given_u) > 1e-6
    assert len(result.p_u) <= 3


@pytest.mark.slow
def test_near_twin_posteriors_are_merged_into_one_output():
    # The bench's bounded family at eps = 0.02: the LP once returned 8 outputs, three pairs of
    # them 1e-9 to 4e-9 apart (5 distinct posteriors; the pairs could not be pruned, as the
    # other outputs alone miss P_Y by 1e-9).
    rng = np.random.default_rng(11)
    a = 0.6 * np.eye(10) + 0.4 * rng.dirichlet(np.full(10, 0.7), size=10).T
    model = LeakageModel(a @ (0.05 + 0.5 * rng.dirichlet(np.ones(10))), a)
    result = global_optimum(model, 0.02, 3, time_limit=2.0)
    assert _closest_pair(result.p_y_given_u) > 1e-6
    lifts = lifts_of_channel(result.p_u_given_y, model.p_y, model.A, model.p_x, 3)
    assert np.all(lifts <= math.exp(0.02) * (1 + 1e-10))
    assert np.allclose(result.p_y_given_u @ result.p_u, model.p_y, rtol=0, atol=1e-12)
    assert len(result.p_u) <= 5


@pytest.mark.slow
def test_time_limit_still_returns_a_valid_bracket():
    model = random_model(9, 10)
    result = global_optimum(model, 0.02, 3, time_limit=2.0)
    assert result.feasible and 0 < result.lower_bound <= result.upper_bound
    assert result.elapsed < 30
    assert math.isfinite(result.upper_bound) and result.gap < 1


@pytest.mark.slow
def test_theorem1_upper_bound_is_used_when_smaller():
    model = random_model(9, 10)
    eps = 0.5 * epsilon_max(model, 3)
    result = global_optimum(model, eps, 3, time_limit=1.0, max_cones=50)
    cert = certificate(model, eps, 3)
    # V_+ is evaluated in floats; it enters with the round-off margin of every computed bound.
    assert result.upper_bound <= cert.V_plus * (1 + 2e-12)
    # (within 1 s the box branch and bound may already beat V_+ at this size)
    assert result.upper_bound_source in {"theorem 1", "branch-and-bound", "box branch-and-bound"}
    if result.upper_bound_source == "theorem 1":
        assert cert.V_plus < result.upper_bound <= cert.V_plus * (1 + 2e-12)


def test_perfect_privacy_null_space_is_exact():
    model = GeneralLeakageModel([0.3, 0.3, 0.4], [[0.9, 0.5, 0.1], [0.1, 0.5, 0.9]])
    result = global_optimum(model, 0.0, 3)
    assert result.certified and result.lower_bound > 0.1
    exact = global_optimum(MEDICAL, 0.0, 3)
    assert exact.upper_bound == exact.lower_bound == 0 and exact.upper_bound_source == "exact"


@pytest.mark.parametrize(
    "kwargs,match",
    [
        ({"rtol": 0}, "rtol"),
        ({"rtol": 2}, "rtol"),
        ({"max_cones": 0}, "max_cones"),
        ({"max_cones": 2.5}, "max_cones"),
        ({"time_limit": -1}, "time_limit"),
    ],
)
def test_bad_options(kwargs, match):
    with pytest.raises(ValueError, match=match):
        global_optimum(MEDICAL, 0.02, 3, **kwargs)


@pytest.mark.slow
def test_pricing_passes_running_out_keeps_columns_and_weights_together():
    """With one pricing pass the LP is re-solved on the columns it added (a bug at |Y| = 20 once)."""
    from renyi.lift.optimum import SearchSettings

    one_pass = SearchSettings(heuristics=Heuristics(pricing=PricingHeuristics(passes=1)))
    model = random_model(3, 6)
    result = global_optimum(model, 0.02, 3, time_limit=3.0, settings=one_pass)
    assert result.feasible and 0 < result.lower_bound <= result.upper_bound
    reference = global_optimum(random_model(3, 6), 0.02, 3, time_limit=3.0, rtol=1e-3)
    assert result.lower_bound <= reference.upper_bound * (1 + 1e-9)


@pytest.mark.slow
def test_box_phase_runs_with_one_blas_thread(monkeypatch):
    from renyi.lift.optimum import search
    from threadpoolctl import threadpool_info

    seen, original = [], search.BoxPhase.run

    def spy(*args, **kwargs):
        seen.extend(info["num_threads"] for info in threadpool_info() if info["user_api"] == "blas")
        return original(*args, **kwargs)

    monkeypatch.setattr(search.BoxPhase, "run", spy)
    global_optimum(random_model(9, 10), 0.02, 3, time_limit=1.0)
    assert seen and set(seen) == {1}


@pytest.mark.slow
def test_channel_search_runs_in_a_worker_while_the_boxes_are_bounded(monkeypatch):
    """With a pool, the box phase's channel search goes to a worker, the boxes of the rounds
    meanwhile are bounded here alone, and the bracket stays valid (a thread pool stands in for
    the processes)."""
    from concurrent.futures import ThreadPoolExecutor

    import renyi.lift.optimum as optimum
    from renyi.lift.optimum import search as phases

    calls, chunked_while_busy, pooled = [], [], []

    class ThreadPool:
        def __init__(self, processes):
            self.workers, self.executor, self.busy = processes, self, False
            self.threads = ThreadPoolExecutor(processes)

        def submit(self, fn, *args):
            calls.append(fn is phases.channel_columns)
            if fn is not phases.channel_columns:
                chunked_while_busy.append(self.busy)
                return self.threads.submit(fn, *args)
            self.busy = True

            def search():
                try:
                    found = fn(*args)
                    pooled.append(found.shape[1])
                    return found
                finally:
                    self.busy = False

            return self.threads.submit(search)

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            self.threads.shutdown(wait=True)

    monkeypatch.setattr(optimum, "WorkerPool", ThreadPool)
    # The run's own clock (not the cone phase's share) keeps going until the search has been
    # submitted, however slow the machine: on one twice as slow as the one this was written
    # on, 4 s ended before the box round that submits it.
    real_clock, limit = optimum.clock, 4.0

    def clock(time_limit):
        out_of_time = real_clock(time_limit)
        if time_limit is None or not 0.9 * limit < time_limit <= limit:  # (the limit less the check)
            return out_of_time
        patient = lambda margin=0.0: any(calls) and out_of_time(margin)
        patient.left = out_of_time.left
        return patient

    monkeypatch.setattr(optimum, "clock", clock)
    model = random_model(9, 10)
    two = global_optimum(model, 0.02, 3, rtol=1e-4, time_limit=limit, workers=2)
    # Both kinds of task went to the pool, and the searches there returned posteriors.
    assert any(calls) and not all(calls) and sum(pooled) > 0
    assert not any(chunked_while_busy)
    one = global_optimum(model, 0.02, 3, rtol=1e-4, time_limit=4.0)
    assert one.lower_bound <= two.upper_bound * (1 + 1e-12) and two.lower_bound <= one.upper_bound * (1 + 1e-12)


def test_nearest_multiplier_prices_the_points_at_the_value_and_moves_least():
    """The stuck tree's new mu: every given point priced at most at value (1 + slack), and no
    farther from the old mu than the LP's dual (which qualifies) is."""
    from renyi.lift.optimum import SearchSettings, candidates, cones, lp, stationary

    settings = SearchSettings()
    model = random_model(3, 8)
    geo = cones.Geometry(model, 0.05, 3, settings)
    rng = np.random.default_rng(3)
    points = candidates.pull_inside(geo, rng.dirichlet(np.full(8, 0.3), size=60).T)
    columns = np.concatenate([model.p_y[:, None], points], axis=1)
    gains = np.sum((columns - model.p_y[:, None]) ** 2 / model.p_y[:, None], axis=0)
    value, _, mu_lp = lp.solve_lp(model, columns, gains, settings)
    start = mu_lp + 0.3 * rng.standard_normal(8)
    slack = 5e-5
    nearer = stationary.nearest_multiplier(model, start, columns, value, slack, Heuristics().tree_multiplier)
    assert nearer is not None
    priced = gains - nearer @ (columns - model.p_y[:, None])
    assert np.all(priced <= value * (1 + slack) + 1e-12)
    assert np.linalg.norm(nearer - start) <= np.linalg.norm(mu_lp - start) + 1e-9
    # (and it does move: the old mu priced some point above the value)
    assert np.max(gains - start @ (columns - model.p_y[:, None])) > value * (1 + slack)


@pytest.mark.slow
@pytest.mark.parametrize("k,order", [(8, 3), (8, 5)])
def test_column_generation_reaches_the_certified_optimum_from_the_trivial_mechanism(k, order):
    """The box phase's column generation, started from an LP whose only mechanism is the
    trivial one (value 0), ends within its slack of the value certified by a separate run,
    and never above that run's proved upper bound.  (The channel search is switched off:
    only the posteriors priced near the outputs can raise the value.)"""

    from renyi.lift.optimum import candidates, cones, lp, search

    rng = np.random.default_rng(5)
    a = benchmark_matrix(rng, k)
    model = LeakageModel(a @ rng.dirichlet(np.ones(k)), a)
    reference = global_optimum(model, 0.02, order, rtol=1e-6, time_limit=60)
    assert reference.gap <= 1e-6
    heuristics = Heuristics(polish=PolishHeuristics(channel_max_size=0))
    settings = SearchSettings(heuristics=heuristics)
    geo = cones.Geometry(model, 0.02, order, settings)
    # P_Y and four feasible points that no mechanism can mix to P_Y: the LP's value is 0.
    points = candidates.pull_inside(geo, np.random.default_rng(1).dirichlet(np.ones(k), size=4).T)
    columns = np.concatenate([model.p_y[:, None], points], axis=1)
    start = (columns, *lp.solve_lp(model, columns, lp.gains(model, columns), settings))
    assert start[1] == 0.0
    phase = search.BoxPhase(model, geo, start, 1e-6, search.clock(60.0))
    assert reference.lower_bound * (1 - heuristics.columns.slack) <= phase.value
    assert phase.value <= reference.upper_bound * (1 + 1e-12)


def test_merge_loses_exactly_the_gain_it_reports_and_keeps_the_barycentre():
    """Merging nearby outputs: the chi^2 gain lost (recomputed) stays within the budget, the
    barycentre is kept, and outputs 1e-4 apart become one."""
    from renyi.lift.optimum.lp import merge_outputs

    model = random_model(5, 6)
    rng = np.random.default_rng(5)
    centres = rng.dirichlet(np.ones(6), size=3).T
    # Three clusters of two outputs 1e-4 apart (on the plane), weights summing to 1.
    shift = 1e-4 * (np.eye(6)[:, :3] - np.eye(6)[:, 3:6])
    q = np.concatenate([centres, centres + shift], axis=1)
    w = rng.dirichlet(np.ones(6))
    gain = lambda q, w: float(np.sum((q - model.p_y[:, None]) ** 2 / model.p_y[:, None], axis=0) @ w)
    budget = 1e-6 * gain(q, w)
    merged_q, merged_w = merge_outputs(q, w, model.p_y, budget)
    assert merged_w.size == 3
    assert np.allclose(merged_q @ merged_w, q @ w, rtol=0, atol=1e-15)
    assert 0 <= gain(q, w) - gain(merged_q, merged_w) <= budget
    assert np.all(np.diff(merged_w) <= 0)
    # With no budget only coincident outputs merge.
    assert merge_outputs(q, w, model.p_y, 0.0)[1].size == 6


def test_cone_tree_bounds_hold_in_every_cone_and_its_rows_match_a_rebuild():
    """After rounds of splits, each cone's stored outer sets are those computed afresh from its
    rays (the per-cone arrays stay aligned), and its bound is at least F_mu at feasible points
    (random directions, pushed to the boundary of Q) whose direction lies in it."""
    from renyi.lift.optimum import SearchSettings
    from renyi.lift.optimum.cones import ConeTree, Geometry

    model, rng = random_model(7, 4), np.random.default_rng(0)
    geo = Geometry(model, 0.05, 3.0, SearchSettings())
    tree = ConeTree(geo)
    mu = rng.normal(size=4)
    for _ in range(6):
        bounds = tree.bounds(mu)
        tree.split(np.argsort(-bounds)[: max(1, 3 * len(bounds) // 4)])
    fresh = tree._simplices(tree.cones)
    for name, value in zip(tree._sets, fresh):
        np.testing.assert_array_equal(getattr(tree, name), value)
    assert len(tree.cones) == len(tree.reach) == len(tree.m_at) == len(tree.cached) > 60
    bounds = tree.bounds(mu)
    # Feasible points: random directions, each pushed to the boundary of Q along its ray.
    c = rng.normal(size=(geo.k, 4000))
    t, q, _, _ = geo.rays(c / np.linalg.norm(c, axis=0))
    d = q - model.p_y[:, None]
    values = np.sum(d * d / model.p_y[:, None], axis=0) - mu @ d
    coords = geo.B_pinv @ d
    covered = np.zeros(c.shape[1], dtype=bool)
    for cone, bound in zip(tree.cones, bounds):
        lam = np.linalg.solve(tree.r[:, cone], coords)
        inside = np.all(lam >= -1e-12, axis=0)
        assert np.all(values[inside] <= bound * (1 + 1e-12) + 1e-15)
        covered |= inside
    # The cones still partition the directions: none was lost when a child took its parent's place.
    assert covered.all()


@pytest.mark.slow
def test_a_mechanism_built_from_inexact_weights_is_repaired_to_exactly_feasible():
    """Weights that miss P_Y by 1e-7 (what HiGHS's default tolerance can leave) put the
    built mechanism's lifts above e^eps; the repair re-solves the weights, or failing that
    moves the outputs inside Q, and loses no more than it must (lifts by the oracle's code)."""
    from renyi.lift.channels import build_mechanism
    from renyi.lift.optimum import SearchSettings
    from renyi.lift.optimum.bracket import feasible_mechanism

    model, eps, order = random_model(61, 6), 0.02, 3
    best = global_optimum(model, eps, order, rtol=1e-6, time_limit=30)
    q, w = best.p_y_given_u, best.p_u
    assert q.shape[1] < model.p_y.size  # the shrink case below needs P_Y outside q's span
    rng = np.random.default_rng(61)
    cases = {
        "weights off": (q, w * (1 + 1e-6 * rng.standard_normal(w.size))),
        "outputs off": (q + 1e-7 * rng.standard_normal(q.shape) * (q > 0), w),
    }
    for name, (q_off, w_off) in cases.items():
        q_off = q_off / q_off.sum(axis=0)
        naive = build_mechanism(model, w_off, q_off, eps, order)
        fixed = feasible_mechanism(model, w_off, q_off, eps, order, SearchSettings())
        naive_lifts = lifts_of_channel(naive.p_u_given_y, model.p_y, model.A, model.p_x, order)
        lifts = lifts_of_channel(fixed.p_u_given_y, model.p_y, model.A, model.p_x, order)
        assert naive_lifts.max() > math.exp(eps) * (1 + 1e-10), name  # the case is a real one
        assert fixed.feasible and np.all(lifts <= math.exp(eps) * (1 + 1e-10)), name
        assert fixed.utility >= best.utility * (1 - 1e-5), name


@pytest.mark.slow
def test_the_fast_path_is_chosen_by_the_matrix_not_the_class():
    """The same square invertible A at |Y| = 8, held by either class: the same bounds run
    (boxes, Theorem 1, the D_2 relaxation) and the brackets are both certified and overlap."""
    from renyi.lift import GeneralLeakageModel, LeakageModel

    rng = np.random.default_rng(7)
    k = 8
    a = benchmark_matrix(rng, k)
    p_y = rng.dirichlet(np.ones(k))
    general = global_optimum(GeneralLeakageModel(p_y, a), 0.01, 3, rtol=1e-6, time_limit=60)
    square = global_optimum(LeakageModel.from_leakage(a, p_y=p_y), 0.01, 3, rtol=1e-6, time_limit=60)
    assert general.bounds_run == square.bounds_run
    assert {"box branch-and-bound", "theorem 1", "D2 relaxation"} <= set(general.bounds_run)
    assert general.boxes > 0 and square.boxes > 0
    assert general.certified and square.certified
    assert general.lower_bound <= square.upper_bound and square.lower_bound <= general.upper_bound


def test_a_non_square_matrix_runs_the_polytope_and_the_cones_and_says_so():
    a34 = np.array([[0.7, 0.2, 0.1, 0.3], [0.2, 0.6, 0.2, 0.3], [0.1, 0.2, 0.7, 0.4]])
    from renyi.lift import GeneralLeakageModel

    result = global_optimum(GeneralLeakageModel([0.2, 0.3, 0.3, 0.2], a34), 0.05, 2)
    assert result.bounds_run == ("polytope relaxation", "branch-and-bound", "|Y| - 1") and result.boxes == 0
    assert result.certified


@pytest.mark.slow
@pytest.mark.parametrize("shape", [(40, 30), (100, 100)])
def test_a_short_time_limit_is_kept_at_large_sizes_with_an_exactly_feasible_channel(shape):
    """A 3-s limit on a wide 40 x 30 matrix (the polytope route) and at |Y| = 100 (the boxes'
    route): the call returns within the limit plus 5 s (when only the rounds looked at the clock,
    such matrices took 13 s at a 4-s limit and 41 s at a 2-s one; what still runs past it at
    |Y| = 100 is one LP, the first round of boxes and the exact check, 1.5-2 s on a loaded
    2-core machine), and the channel meets the budget, recomputed independently."""
    n_x, n_y = shape
    rng = np.random.default_rng(n_y)
    a = benchmark_matrix(rng, n_y) if n_x == n_y else rng.dirichlet(np.full(n_x, 0.5), size=n_y).T
    model = GeneralLeakageModel(rng.dirichlet(np.ones(n_y)), a)
    started = time.perf_counter()
    result = global_optimum(model, 0.5, 3.0, time_limit=3.0)
    assert time.perf_counter() - started < 8.0
    assert 0 < result.lower_bound <= result.upper_bound < math.inf
    lifts = lifts_of_channel(result.p_u_given_y, model.p_y, model.A, model.p_x, 3.0)
    assert np.all(lifts <= math.exp(0.5) * (1 + 1e-12))


def test_a_linear_program_past_its_deadline_leaves_the_lp_as_it_was():
    """One LP can take minutes at |Y| = 50: at its deadline it stops, and a column that would
    enter is left out (the old LP is still a mechanism with a valid mu)."""
    from renyi.lift.optimum.lp import OutOfTime, enter, gains, solve_lp

    model, settings = EXAMPLES["medical"], SearchSettings()
    columns = model.p_y[:, None]  # the trivial mechanism: value 0
    lp = (columns, *solve_lp(model, columns, gains(model, columns), settings))
    with pytest.raises(OutOfTime):
        solve_lp(model, columns, gains(model, columns), settings, deadline=time.perf_counter() - 1)
    new = np.eye(model.p_y.size)  # full disclosure: every column prices above 0
    assert enter(model, lp, new, settings, deadline=time.perf_counter() - 1) is lp
    entered = enter(model, lp, new, settings)
    assert entered[0].shape[1] == 1 + model.p_y.size and entered[1] > 0


def test_the_search_sets_aside_the_decimal_check_of_its_channel_and_at_most_half_the_limit(monkeypatch):
    """The check's estimate grows as |U| |X| |Y| (its products); the search keeps at least half."""
    from renyi.lift import _exact
    from renyi.lift.optimum import search_time

    one = _exact.check_seconds(1, 1, 1)
    assert one > 0 and _exact.check_seconds(201, 200, 200) == pytest.approx(201 * 200 * 200 * one)
    small = EXAMPLES["medical"]
    assert search_time(small, None) is None and 9.9 < search_time(small, 10.0) < 10.0
    monkeypatch.setattr("renyi.lift.optimum.check_seconds", lambda *sizes: 1.5)
    assert search_time(small, 10.0) == 7.0 and search_time(small, 4.0) == 2.0


@pytest.mark.slow
def test_every_returned_channel_meets_the_budget_to_1e12_when_recomputed_independently():
    """Runs cut short by their time limit included: the channel's lifts, recomputed from the
    definition in numpy, exceed e^eps by at most 1e-12 relative (the library checks in decimal)."""
    from renyi.lift import GeneralLeakageModel, LeakageModel

    rng = np.random.default_rng(7)
    k = 8
    a = benchmark_matrix(rng, k)
    p_y = rng.dirichlet(np.ones(k))
    wide = np.random.default_rng(32).dirichlet(np.full(4, 0.7), size=8).T
    runs = [
        (GeneralLeakageModel(p_y, a), 0.01, 3.0),
        (LeakageModel.from_leakage(a, p_y=p_y), 0.5, 2.0),
        (GeneralLeakageModel(np.random.default_rng(3).dirichlet(np.ones(8)), wide), 0.05, 3.0),
    ]
    for model, eps, order in runs:
        result = global_optimum(model, eps, order, rtol=1e-9, time_limit=2)
        lifts = lifts_of_channel(result.p_u_given_y, model.p_y, model.A, model.p_x, order)
        assert np.all(lifts <= math.exp(eps) * (1 + 1e-12)), float(lifts.max() / math.exp(eps) - 1)
        assert np.allclose(result.p_u_given_y.sum(axis=0), 1.0, rtol=0, atol=1e-12)


def test_weights_stay_the_lp_ones_when_nnls_hits_its_iteration_limit(monkeypatch):
    """Where the LP's basis misses P_Y, the weights are re-solved by non-negative least
    squares; when that raises (its iteration limit, met at |Y| = 20 on near-parallel
    columns) the LP's weights come back unchanged instead of an exception."""
    from renyi.lift.optimum import SearchSettings, lp

    settings = SearchSettings()
    model = random_model(5, 6)
    # The posteriors e_y: the exact weights are P_Y itself.  One weight below the basis
    # threshold leaves the basis unable to reproduce P_Y, so the nnls branch runs.
    q = np.eye(6)
    weights = model.p_y.copy()
    weights[2] = 0.1 * settings.heuristics.pricing.exact_solve_weight
    repaired = lp.exact_weights(model, q, weights, settings)
    np.testing.assert_allclose(repaired, model.p_y, rtol=1e-12, atol=0)

    def out_of_iterations(*args, **kwargs):
        raise RuntimeError("Maximum number of iterations reached.")

    monkeypatch.setattr(lp.optimize, "nnls", out_of_iterations)
    kept = lp.exact_weights(model, q, weights, settings)
    np.testing.assert_array_equal(kept, weights)


@pytest.mark.slow
def test_no_channel_beats_the_upper_bound_at_twenty_outputs():
    """|Y| = 20, alpha = 3, ten times eps_max (the benchmark's model): SLSQP over the channel,
    started from the returned channel, finds nothing above the boxes' upper bound (how far
    the bracket closes in 30 s depends on the machine, so it is not tested); the channel
    meets the budget when recomputed.  (Random starts at this size cost minutes and end
    far below the optimum.)"""
    rng = np.random.default_rng(120)
    k = 20
    a = benchmark_matrix(rng, k)
    model = LeakageModel(a @ rng.dirichlet(np.ones(k)), a)
    order = 3.0
    eps = 10 * epsilon_max(model, order)
    result = global_optimum(model, eps, order, rtol=1e-6, time_limit=30)
    assert result.upper_bound_source == "box branch-and-bound"
    lifts = lifts_of_channel(result.p_u_given_y, model.p_y, model.A, model.p_x, order)
    assert np.all(lifts <= math.exp(eps) * (1 + 1e-12))
    start = np.zeros((k, k))
    start[: result.p_u_given_y.shape[0]] = result.p_u_given_y
    start = (1 - 1e-9) * start + 1e-9 / k  # (no output unused: SLSQP starts inside)
    oracle = best_mechanism_multistart(model.p_y, model.A, eps, order, starts=0, start=start)
    assert oracle >= result.lower_bound * (1 - 1e-6)  # the polish found the returned channel's value
    assert oracle <= result.upper_bound * (1 + 1e-8), (oracle, result.upper_bound)


def test_a_mechanism_polish_stops_at_its_deadline_with_its_last_iterate():
    """A deadline already passed stops SLSQP after its first iteration: the result is the
    one-iteration polish's, exactly (a polish of 200 iterations at |Y| = 20 can outlast the
    search's time limit, and ``BoxPhase`` gives each one the time left)."""
    rng = np.random.default_rng(7)
    k = 8
    a = benchmark_matrix(rng, k)
    model = LeakageModel(a @ rng.dirichlet(np.ones(k)), a)
    geo = Geometry(model, 0.05, 3.0, SearchSettings())
    # A mechanism of two outputs with P_Y as barycentre: P_Y +- a feasible step.
    step = 0.3 * model.p_y * (rng.uniform(size=k) - 0.5)
    step -= step.sum() * model.p_y
    q = np.stack([model.p_y + step, model.p_y - step], axis=1)
    w = np.array([0.5, 0.5])
    once = polish_mechanism(geo, q, w, max_iter=1)
    stopped = polish_mechanism(geo, q, w, max_iter=200, deadline=time.perf_counter())
    full = polish_mechanism(geo, q, w, max_iter=200)
    assert np.array_equal(stopped[0], once[0]) and np.array_equal(stopped[1], once[1])
    # (and the full polish went further: the deadline is what stopped it)
    assert not np.allclose(full[0], once[0])


def test_after_failed_kkt_fits_the_mechanism_polish_is_skipped_one_two_four_times(monkeypatch):
    """A polish whose KKT fit fails is followed by 1, 2, 4, ... skipped ones (the LP's dual in
    their place, what a failed fit gives); a fit that holds resets the count."""
    outcomes = iter([False, False, False, True, False])
    calls = []

    def fake_polish(model, geo, columns, weights, mu, deadline=None):
        calls.append(len(results))  # (the attempt's index)
        return np.full(3, 7.0), np.ones((3, 1)), next(outcomes)

    monkeypatch.setattr(search, "polished_multiplier", fake_polish)
    phase = object.__new__(search.BoxPhase)
    phase.model = phase.geo = None
    phase.columns, phase.weights, phase.mu = np.eye(3), np.ones(3) / 3, np.zeros(3)
    phase.out_of_time = search.clock(None)
    phase.polish_skips = phase.polish_failures = 0
    results = []
    for _ in range(13):
        results.append(phase._polished())
    # fail (skip 1), fail (skip 2), fail (skip 4), holds, fail (skip 1): attempts by hand
    assert calls == [0, 2, 5, 10, 11]
    for attempt, (mu, points) in enumerate(results):
        if attempt in calls:
            assert np.all(mu == 7.0) and points.shape == (3, 1)
        else:
            assert np.array_equal(mu, phase.mu) and points.shape == (3, 0)


def test_a_point_priced_just_above_the_value_holds_the_tree_only_near_its_bound():
    """A feasible point priced above value (1 + rtol) counts as stuck (a move of the tree's mu)
    only from halfway between the value and the best upper bound (``tree_multiplier.stuck_share`` 0.5)."""
    phase = object.__new__(search.BoxPhase)
    phase.settings, phase.value, phase.rtol = SearchSettings(), 1.0, 1e-6
    priced_at = 1.0 + 2e-6  # a fitted mu slightly off: this point is above value (1 + rtol)
    phase.best_upper = 1.27  # the boxes' bound far above: not stuck yet
    assert not priced_at > phase._stuck_above()
    assert 1.2 > phase._stuck_above() > 1.1
    phase.best_upper = 1.0 + 3e-6  # the bound near the point's price: stuck
    assert priced_at > phase._stuck_above()
    phase.best_upper = 1.0 + 1e-7  # within rtol of the value: nothing above it is stuck
    assert phase._stuck_above() == pytest.approx(1.0 + 1e-6, rel=1e-15)
