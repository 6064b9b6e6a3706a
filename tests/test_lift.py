"""Part II: every reported number, Lemma 1/2 identities, feasibility of every mechanism, global optimum.

Reference values are the paper's printed numbers (4 significant digits) and the
digest's independent check script (part2-paper.md, sections 7 and 10).
"""

import math

import numpy as np
import pytest
from renyi.divergence import alpha_lift
from renyi.lift import (
    EXAMPLES,
    GeneralLeakageModel,
    LeakageModel,
    analytic_mechanism,
    asymmetric_mechanism,
    certificate,
    chi2_information,
    corollary1_value,
    directional_mechanism,
    epsilon_max,
    global_optimum,
    mutual_information,
    null_space_mechanism,
    renyi_budget_max,
    renyi_certificate,
    taylor_constants,
    taylor_remainder,
)

MEDICAL = EXAMPLES["medical"]
SECOND = EXAMPLES["second"]


def sig4(x):
    return float(f"{x:.4g}")


def test_paper_numbers_medical_example():
    cert = certificate(MEDICAL, 0.02, 3)
    assert sig4(cert.delta0) == 0.2845
    assert sig4(cert.delta_bar) == 0.3902
    assert sig4(cert.rho) == 0.3902 and cert.admissible
    assert sig4(epsilon_max(MEDICAL, 3)) == 0.02408  # paper: 0.0241
    assert round(epsilon_max(MEDICAL, 3), 4) == 0.0241
    assert round(renyi_budget_max(MEDICAL, 3), 4) == 0.0361
    assert epsilon_max(MEDICAL, 3) == pytest.approx(math.log1p(3 * MEDICAL.r_val**2) / 3, rel=1e-12)


def test_digest_intermediate_values():
    cert = certificate(MEDICAL, 0.02, 3)
    expected = dict(
        r0=0.143569,
        r_minus=0.137211,
        r_plus=0.153929,
        V_minus=0.073369,
        V0=0.080326,
        V_plus=0.092337,
        G_minus=0.028872,
        G_plus=0.049841,
        E=0.018968,
    )
    for name, value in expected.items():
        assert getattr(cert, name) == pytest.approx(value, abs=1.5e-6), name
    assert directional_mechanism(MEDICAL, 0.02, 3).utility == pytest.approx(0.075324, abs=1e-6)
    assert asymmetric_mechanism(MEDICAL, 0.02, 3).utility == pytest.approx(0.080709, abs=1e-6)
    assert global_optimum(MEDICAL, 0.02, 3).utility == pytest.approx(0.080712, abs=1e-6)


def test_derived_quantities_and_lemma2():
    m = MEDICAL
    np.testing.assert_allclose(m.p_y, [0.088398, 0.237569, 0.674033], atol=1e-6)
    np.testing.assert_allclose(m.singular_values, [1.974089, 1.629743, 1.0], atol=1e-6)
    np.testing.assert_allclose(m.v_star, [0.886186, -0.164263, -0.433235], atol=1e-6)
    assert m.kappa_star == pytest.approx(1.981571, abs=1e-6)
    assert m.r_val == pytest.approx(0.158037, abs=1e-6)
    for model in (MEDICAL, SECOND):
        W = model.W
        np.testing.assert_allclose(W @ np.sqrt(model.p_x), np.sqrt(model.p_y), atol=1e-12)
        np.testing.assert_allclose(W.T @ np.sqrt(model.p_y), np.sqrt(model.p_x), atol=1e-12)
        assert model.singular_values[-1] == pytest.approx(1.0, abs=1e-12)
        assert abs(model.v_star @ np.sqrt(model.p_x)) < 1e-12
        assert abs(model.d_star.sum()) < 1e-12
        assert np.linalg.norm(W @ model.v_star) == pytest.approx(model.sigma_max, rel=1e-12)
    assert SECOND.r_val == pytest.approx(0.347325, abs=1e-6)


def test_taylor_constants():
    assert taylor_constants(2, 0.3)[2] == 0
    assert taylor_constants(3, 0.7)[2] == 1
    a, m, k = taylor_constants(5, 0.2)
    assert (a, m, k) == pytest.approx((10, 1.2**2, 10 * 1.44))
    a, m, k = taylor_constants(2.5, 0.2)
    assert m == pytest.approx(0.8**-0.5)


@pytest.mark.parametrize("alpha", [1.5, 2.5, 3.0, 5.0, 10.0])
def test_lemma1_uniform_remainder_bound_on_random_perturbations(alpha):
    rng = np.random.default_rng(int(alpha * 10))
    p_x = np.array([0.1, 0.2, 0.3, 0.4])
    worst = 0.0
    for _ in range(2500):
        rho = rng.uniform(0.01, 0.95)
        h = rng.uniform(-1, 1, 4)
        h -= np.sum(p_x * h)  # sum P_X h = 0 (a valid posterior perturbation)
        h *= rho * rng.uniform(0, 1) / np.max(np.abs(h))
        r2 = np.sum(p_x * h**2)
        remainder = taylor_remainder(h, p_x, alpha)
        k = taylor_constants(alpha, rho)[2]
        if r2 > 0 and k > 0:
            worst = max(worst, abs(remainder) / (k * rho * r2))
    assert worst <= 1 + 1e-9


@pytest.mark.parametrize("factory", [analytic_mechanism, directional_mechanism, asymmetric_mechanism, global_optimum])
@pytest.mark.parametrize("alpha,frac", [(2, 0.5), (3, 0.3), (3, 1.0), (5, 0.6)])
def test_every_mechanism_is_valid_and_exactly_feasible(factory, alpha, frac):
    eps = frac * epsilon_max(MEDICAL, alpha)
    mech = factory(MEDICAL, eps, alpha)
    ch = mech.p_u_given_y
    assert np.all(ch >= 0) and np.allclose(ch.sum(axis=0), 1, atol=1e-12)
    assert len(mech.p_u) <= 3  # Proposition 1
    lifts = np.atleast_1d(alpha_lift((MEDICAL.A @ mech.p_y_given_u), MEDICAL.p_x, alpha, tol=1e-9))
    assert np.all(lifts <= math.exp(eps) * (1 + 1e-10)), lifts
    assert mech.feasible
    # utility recomputed independently from the joint law
    joint = ch * MEDICAL.p_y[None, :]
    pu = joint.sum(axis=1)
    assert mech.utility == pytest.approx(np.sum(joint**2 / (pu[:, None] * MEDICAL.p_y[None, :])) - 1, rel=1e-10)


@pytest.mark.parametrize("alpha", [2, 3, 5])
@pytest.mark.parametrize("frac", [0.25, 0.6, 1.0])
def test_global_optimum_within_theorem1_bounds(alpha, frac):
    eps = frac * epsilon_max(MEDICAL, alpha)
    cert = certificate(MEDICAL, eps, alpha)
    assert cert.admissible
    value = global_optimum(MEDICAL, eps, alpha).utility
    assert cert.V_minus * (1 - 1e-6) <= value <= cert.V_plus * (1 + 1e-9)  # computed to rtol 1e-6 from below
    assert value >= asymmetric_mechanism(MEDICAL, eps, alpha).utility * (1 - 1e-7)  # LP tolerances


def test_second_example_solid_and_dashed_pairs():
    expected = {
        0.01: {2: (0.07961, 0.07961), 3: (0.03919, 0.04001), 5: (0.01929, 0.02021), 10: (0.00843, 0.00921)},
        0.05: {2: (0.41448, 0.41448), 3: (0.20299, 0.21259), 5: (0.10011, 0.11193), 10: (0.04494, 0.05681)},
    }
    for eps, row in expected.items():
        for alpha, (solid, dashed) in row.items():
            assert directional_mechanism(SECOND, eps, alpha).utility == pytest.approx(solid, abs=6e-6)
            assert certificate(SECOND, eps, alpha).V0 == pytest.approx(dashed, abs=6e-6)


def test_renyi_transfer():
    beta, eta = 3.0, 0.02
    cert = renyi_certificate(MEDICAL, eta, beta)
    assert cert.b == pytest.approx(math.expm1((beta - 1) * eta))
    assert cert.delta_bar == pytest.approx(math.sqrt(math.expm1(eta) / 0.2))
    mech = directional_mechanism(MEDICAL, cert.eps, beta)
    from renyi.divergence import renyi_divergence

    for u in range(mech.p_x_given_u.shape[1]):
        assert renyi_divergence(mech.p_x_given_u[:, u] / mech.p_x_given_u[:, u].sum(), MEDICAL.p_x, beta) <= eta + 1e-12


def test_proposition4_positive_utility_at_zero_budget():
    model = GeneralLeakageModel([0.3, 0.3, 0.4], [[0.9, 0.5, 0.1], [0.1, 0.5, 0.9]])
    mech = null_space_mechanism(model)
    assert mech.utility > 0.1
    np.testing.assert_allclose(mech.lifts, 1.0, atol=1e-12)
    best = global_optimum(model, 0.0, 3)
    assert best.utility >= mech.utility * (1 - 1e-9)
    np.testing.assert_allclose(best.lifts, 1.0, atol=1e-9)
    # and an invertible A gives nothing at eps = 0
    assert global_optimum(MEDICAL, 0.0, 3).utility == pytest.approx(0.0, abs=1e-12)


def test_non_square_general_model():
    a = np.array([[0.7, 0.2, 0.1, 0.3], [0.2, 0.6, 0.2, 0.3], [0.1, 0.2, 0.7, 0.4]])
    model = GeneralLeakageModel([0.2, 0.3, 0.3, 0.2], a)
    small, large = global_optimum(model, 0.01, 2), global_optimum(model, 0.05, 2)
    assert small.feasible and large.feasible and 0 < small.utility < large.utility
    assert len(large.p_u) <= 4


def test_chi2_information_of_identity_channel():
    p_y = np.array([0.2, 0.3, 0.5])
    assert chi2_information(np.eye(3), p_y) == pytest.approx(2.0)  # |Y| - 1 for full disclosure
    assert chi2_information(np.ones((1, 3)), p_y) == pytest.approx(0.0)


@pytest.mark.parametrize(
    "call,exc,match",
    [
        (lambda: LeakageModel([0.5, 0.5], [[0.9, 0.2], [0.2, 0.8]]), ValueError, "column-stochastic"),
        (lambda: LeakageModel([0.5, 0.5], [[-0.1, 0.2], [1.1, 0.8]]), ValueError, "non-negative"),
        (lambda: LeakageModel([1.0, 0.0], [[0.9, 0.2], [0.1, 0.8]]), ValueError, "strictly positive"),
        (lambda: LeakageModel([0.5, 0.5], [[0.5, 0.5], [0.5, 0.5]]), ValueError, "singular.*GeneralLeakageModel"),
        (lambda: LeakageModel([0.5, 0.5], [[0.5, 0.5, 0.2], [0.5, 0.5, 0.8]]), ValueError, "not square"),
        (lambda: LeakageModel([0.05, 0.95], [[0.9, 0.2], [0.1, 0.8]]), ValueError, "not a strictly positive"),
        (lambda: certificate(MEDICAL, -0.1, 3), ValueError, "eps must be >= 0"),
        (lambda: certificate(MEDICAL, 0.01, 1.0), ValueError, "order must be > 1"),
        (lambda: certificate(MEDICAL, 0.01, float("inf")), ValueError, "finite"),
        (lambda: analytic_mechanism(MEDICAL, 0.05, 3), ValueError, "outside Theorem 1's range"),
        (lambda: corollary1_value(MEDICAL, 0.05), ValueError, "Corollary 1 needs"),
    ],
)
def test_bad_input(call, exc, match):
    with pytest.raises(exc, match=match):
        call()


def test_outside_range_is_flagged_not_silent():
    cert = certificate(MEDICAL, 0.05, 3)
    assert not cert.admissible and any("r_Y*" in f for f in cert.failing)


@pytest.mark.slow
def test_global_optimum_time_limit_returns_a_feasible_mechanism_in_time():
    import time

    rng = np.random.default_rng(7)
    k = 12
    a = 0.5 * np.eye(k) + 0.5 * rng.dirichlet(np.full(k, 0.5), size=k).T
    model = LeakageModel(a @ rng.dirichlet(np.ones(k)), a)
    start = time.perf_counter()
    quick = global_optimum(model, 0.02, 3, time_limit=1.0)
    elapsed = time.perf_counter() - start
    assert quick.feasible and quick.utility > 0
    assert elapsed < 30  # round 0 and one LP at most after the limit
    with pytest.raises(ValueError, match="time_limit"):
        global_optimum(model, 0.02, 3, time_limit=0)


def test_alpha3_epsilon_max_formula_holds_only_under_its_condition():
    formula = math.log1p(3 * MEDICAL.r_val**2) / 3
    assert math.sqrt(1 + 3 * MEDICAL.r_val**2) - 1 < MEDICAL.p_min
    assert epsilon_max(MEDICAL, 3) == pytest.approx(formula, rel=1e-12)
    a = np.array([[0.777717, 0.028909, 0.296957], [0.073957, 0.893058, 0.011088], [0.148326, 0.078033, 0.691955]])
    a = a / a.sum(axis=0)
    model = LeakageModel(a @ np.array([0.430399, 0.113939, 0.455662]), a)
    assert math.sqrt(1 + 3 * model.r_val**2) - 1 > model.p_min  # the condition fails ...
    assert epsilon_max(model, 3) == pytest.approx(0.086555, abs=1e-6)  # ... and eps_max is smaller
    assert math.log1p(3 * model.r_val**2) / 3 == pytest.approx(0.164263, abs=1e-6)
    eps = epsilon_max(model, 3)
    assert certificate(model, eps, 3).admissible and not certificate(model, eps * 1.001, 3).admissible


def test_mutual_information_against_its_definition_and_chi2():
    rng = np.random.default_rng(11)
    p_y = np.array([0.2, 0.3, 0.5])
    channel = rng.dirichlet(np.ones(4), size=3).T  # columns are P_{U|Y=y}
    joint = channel * p_y
    p_u = joint.sum(axis=1)
    by_hand = sum(joint[u, y] * math.log(joint[u, y] / (p_u[u] * p_y[y])) for u in range(4) for y in range(3))
    assert mutual_information(channel, p_y) == pytest.approx(by_hand, rel=1e-12)
    assert mutual_information(np.ones((1, 3)), p_y) == pytest.approx(0.0, abs=1e-15)
    near = np.full((2, 3), 0.5) + 1e-3 * np.array([[1, -1, 0.5], [-1, 1, -0.5]])
    assert mutual_information(near, p_y) == pytest.approx(0.5 * chi2_information(near, p_y), rel=1e-2)


def test_from_leakage_names_the_prior_in_both_classes():
    a = [[0.85, 0.10, 0.15], [0.10, 0.80, 0.15], [0.05, 0.10, 0.70]]
    by_x = LeakageModel.from_leakage(a, p_x=[0.2, 0.3, 0.5])
    positional = LeakageModel([0.2, 0.3, 0.5], a)
    by_y = LeakageModel.from_leakage(a, p_y=positional.p_y)
    for m in (by_x, by_y):
        assert type(m) is LeakageModel
        np.testing.assert_allclose(m.p_x, positional.p_x, atol=1e-12)
        assert m.sigma_max == pytest.approx(positional.sigma_max, rel=1e-12)
    general = GeneralLeakageModel.from_leakage(a, p_y=positional.p_y)
    assert type(general) is GeneralLeakageModel
    np.testing.assert_allclose(general.p_x, positional.p_x, atol=1e-12)
    with pytest.raises(ValueError, match="exactly one"):
        LeakageModel.from_leakage(a)
    with pytest.raises(ValueError, match="exactly one"):
        LeakageModel.from_leakage(a, p_x=[0.2, 0.3, 0.5], p_y=[0.3, 0.3, 0.4])
    with pytest.raises(ValueError, match="needs p_y"):
        GeneralLeakageModel.from_leakage(a, p_x=[0.2, 0.3, 0.5])


def test_taylor_remainder_against_the_exact_lift():
    """(L^alpha)^alpha = 1 + A r^2 + R, with the lift computed independently by alpha_lift."""
    rng = np.random.default_rng(7)
    p_x = np.array([0.1, 0.2, 0.3, 0.4])
    for alpha in (1.5, 3.0, 7.0):
        h = rng.uniform(-0.5, 0.5, 4)
        h -= np.sum(p_x * h)
        posterior = p_x * (1 + h)
        r2 = np.sum(p_x * h**2)
        lift_power = alpha_lift(posterior, p_x, alpha) ** alpha
        expected = lift_power - 1 - alpha * (alpha - 1) / 2 * r2
        assert taylor_remainder(h, p_x, alpha) == pytest.approx(expected, rel=1e-9, abs=1e-13)
    with pytest.raises(ValueError, match=">= -1"):
        taylor_remainder([-1.5, 0.5], [0.5, 0.5], 3)
    with pytest.raises(ValueError, match="entries per row"):
        taylor_remainder([0.1, -0.1, 0.0], [0.5, 0.5], 3)


@pytest.mark.parametrize("exponent", [0, 0.5, 1, 1.5, 2, 2.5, 3, 4, 5, 7.5, 16, 16.5, 2.3, 3.7])
def test_power_by_multiplication_is_within_a_few_ulp_of_numpys(exponent):
    """Whole and half exponents up to 16 are multiplied out (a libm call per element is 30
    times a multiplication on a CPU without AVX-512); each multiplication rounds once, so the
    error is a few ulp, and other exponents are numpy's own."""
    from renyi.lift._numerics import power

    x = np.concatenate([[0.0, 1.0], np.random.default_rng(3).uniform(0.0, 3.0, 2000)])
    got, expected = power(x, exponent), np.power(x, exponent)
    assert got.shape == x.shape and got.dtype == np.float64 and not np.shares_memory(got, x)
    # Each of the at most 2 log2(16) + 1 multiplications (and the square root) rounds once.
    rel = np.abs(got - expected) / np.maximum(expected, np.finfo(float).tiny)
    assert rel.max() <= 10 * np.finfo(float).eps
    if 2 * exponent != int(2 * exponent):
        assert np.array_equal(got, expected)
    assert power(x.reshape(2, -1), exponent).shape == (2, x.size // 2)
