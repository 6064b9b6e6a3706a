"""The chi^2 relaxation of the alpha-lift budget below order 2 (renyi.lift.optimum.bracket.chi2_radius)."""

import math
import warnings

import numpy as np
import pytest
from renyi.lift import GeneralLeakageModel, LeakageModel, global_optimum
from renyi.lift.optimum.bracket import chi2_radius, closed_form_upper_bounds
from scipy.optimize import minimize


def largest_chi2(p_x, eps, alpha, rng, starts=40):
    """max chi^2(z || p_x) over the simplex with sum p_x (z / p_x)^alpha <= e^(alpha eps), by SLSQP."""
    cap = math.exp(alpha * eps)
    best = 0.0
    for _ in range(starts):
        start = p_x + 1e-3 * (rng.dirichlet(np.ones(p_x.size)) - p_x)
        res = minimize(
            lambda z: -np.sum((z - p_x) ** 2 / p_x),
            start,
            method="SLSQP",
            bounds=[(0, 1)] * p_x.size,
            constraints=[
                {"type": "eq", "fun": lambda z: z.sum() - 1},
                {"type": "ineq", "fun": lambda z: cap - np.sum(p_x * (np.maximum(z, 0) / p_x) ** alpha)},
            ],
            options={"maxiter": 500, "ftol": 1e-14},
        )
        z = np.maximum(res.x, 0)
        z /= z.sum()
        # SLSQP may end a hair outside the budget (where it ends depends on the BLAS build and
        # its thread count): pull it back towards p_x, which is inside (Phi(p_x) = 1 <= cap), to
        # the last point of the segment within the budget (Phi is convex along it).
        inside, outside = 0.0, 1.0
        if np.sum(p_x * (z / p_x) ** alpha) <= cap:
            inside = 1.0
        for _ in range(60 if inside < 1 else 0):
            t = 0.5 * (inside + outside)
            zt = p_x + t * (z - p_x)
            inside, outside = (t, outside) if np.sum(p_x * (zt / p_x) ** alpha) <= cap else (inside, t)
        best = max(best, float(inside**2 * np.sum((z - p_x) ** 2 / p_x)))
    return best


@pytest.mark.parametrize("seed", range(8))
@pytest.mark.slow
def test_no_posterior_within_the_budget_exceeds_the_radius_and_the_radius_is_close(seed):
    rng = np.random.default_rng(seed)
    p_x = rng.dirichlet(np.ones(int(rng.integers(3, 7))))
    alpha, eps = rng.uniform(1.05, 1.95), 10 ** rng.uniform(-4, -0.5)
    found, radius = largest_chi2(p_x, eps, alpha, rng), chi2_radius(p_x, eps, alpha)
    assert found > 0
    assert found <= radius
    assert radius <= 1.15 * found  # nearly tight (the optimiser may find slightly less than the max)


@pytest.mark.parametrize("alpha", [1.01, 1.5, 1.99])
def test_the_radius_tends_to_its_first_order_size(alpha):
    # chi^2 ~ 2 D_alpha / alpha and D_alpha <= alpha eps / (alpha - 1) to first order; the cap
    # R - 1 on the ratios shrinks like sqrt(eps), and so does the relative excess
    p_x = np.array([0.1, 0.3, 0.6])
    excess = [chi2_radius(p_x, eps, alpha) / (2 * eps / (alpha - 1)) - 1 for eps in (1e-6, 1e-10)]
    assert 0 <= excess[1] < 2e-3
    assert excess[1] <= 0.05 * excess[0] + 1e-9  # sqrt(1e-4) = 0.01, times 3 for the cruder floor


def test_the_cap_of_every_ratio_applies_at_large_budgets():
    # a huge budget: every posterior is allowed, and chi^2 <= 1 / min p_x - 1 <= radius still
    p_x = np.array([0.2, 0.8])
    assert chi2_radius(p_x, 50.0, 1.5) >= 1 / 0.2 - 1


@pytest.mark.slow
def test_global_optimum_below_order_two_reports_the_relaxation_for_any_class_holding_A():
    rng = np.random.default_rng(110)
    a = 0.5 * np.eye(10) + 0.5 * rng.dirichlet(np.full(10, 0.5), size=10).T
    p_y = rng.dirichlet(np.ones(10))
    results = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        for model in (LeakageModel(a @ p_y, a), GeneralLeakageModel(p_y, a)):
            results.append(global_optimum(model, 0.02, 1.5, time_limit=3))
    sigma2 = LeakageModel(a @ p_y, a).sigma_max ** 2
    radius = chi2_radius(a @ p_y, 0.02, 1.5)
    for res in results:
        assert "chi2 relaxation" in res.bounds_run
        # the cones alone stay at |Y| - 1 = 9 here; the reported bound is the relaxation's, or the
        # box branch and bound's where that got further within the time limit (machine speed)
        assert res.upper_bound_source in ("chi2 relaxation", "box branch-and-bound")
        assert res.lower_bound <= res.upper_bound <= sigma2 * radius * (1 + 1e-6) < 9
    for model in (LeakageModel(a @ p_y, a), GeneralLeakageModel(p_y, a)):
        bounds = dict((name, value) for value, name in closed_form_upper_bounds(model, 0.02, 1.5))
        assert bounds["chi2 relaxation"] == pytest.approx(sigma2 * radius, rel=1e-12)
