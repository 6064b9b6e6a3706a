"""Odd inputs to the library: no silent wrong number, no overflow, no false "certified".

The Part II checks recompute the returned channels in exact rational arithmetic
(:mod:`fractions`), independently of the library's decimal check, with :math:`e^{2\\epsilon}`
bracketed by :mod:`decimal` at 60 digits.
"""

import decimal
import math
import warnings
from fractions import Fraction

import numpy as np
import pytest
from renyi.audit import audit, bound_from_densities, claim_pure_dp, claim_zcdp, rdp_lower_bound
from renyi.audit.floor import softmax_floor
from renyi.audit.streaming import fit_densities_chunked
from renyi.divergence import log_integral
from renyi.lift import (
    GeneralLeakageModel,
    LeakageModel,
    certificate,
    chi2_information,
    directional_mechanism,
    epsilon_max,
    global_optimum,
)
from renyi.lift.examples import EXAMPLES, MEDICAL
from renyi.mechanisms import subsampled_rdp

RNG = np.random.default_rng(33)
P = RNG.normal(1, 5, 20_000)
Q = RNG.normal(0, 5, 20_000)


# ------------------------------------------------------------- flags on meaningless numbers


def test_two_outputs_against_twenty_thousand_are_flagged():
    bound = rdp_lower_bound(P[:2], Q, 2)
    assert any("only 2 outputs on one side" in w for w in bound.warnings)
    assert any("below 0" in w for w in bound.warnings)


@pytest.mark.parametrize("options", [dict(floor=10.0), dict(beta=1e-300), dict(discrete=True)])
def test_impossible_estimates_are_flagged(options):
    bound = rdp_lower_bound(P, Q, 2, **options)
    assert bound.estimate < -bound.std_error
    assert any("more than one standard error" in w and "below 0" in w for w in bound.warnings)
    assert "below 0" in str(bound)


def test_an_ordinary_audit_has_no_warning():
    assert rdp_lower_bound(P, Q, [2, 5]) and all(not b.warnings for b in rdp_lower_bound(P, Q, [2, 5]))


def test_a_black_box_must_return_n_outputs():
    def short(database, n, rng):
        return np.zeros(3)

    with pytest.raises(ValueError, match=r"returned 3 outputs for the database where 1,000 were asked for"):
        audit(short, 0, 1, 1000, 2, rng=np.random.default_rng(1))


def test_one_output_is_not_called_all_values_equal():
    with pytest.raises(ValueError, match="has 1 output; a density estimate needs at least 2"):
        rdp_lower_bound(P[:1], Q, 2)


def test_a_bandwidth_far_beyond_the_data_is_refused_clearly():
    with pytest.raises(ValueError, match="more than 1e\\+06 times the spread"):
        rdp_lower_bound(P, Q, 2, bandwidth=1e300)


# ------------------------------------------------------------------- extreme orders


def test_orders_beyond_the_cap_are_refused():
    with pytest.raises(ValueError, match=r"orders must be at most 1e\+06, got 1e\+20"):
        rdp_lower_bound(P, Q, 1e20)


def test_the_largest_order_falls_back_to_one_that_qualifies():
    huge, eight = rdp_lower_bound(P, Q, [1e6, 8])
    assert not huge.reliable and huge.bound_order is not None and 1 < huge.bound_order < 50
    assert 0 < huge.lower <= 1e6 / 50  # the truth at order 1e6 is order / (2 sigma^2)
    assert eight.reliable


# -------------------------------------------------------------- Part II at tiny budgets


def _exp_bounds(x: Fraction):
    """Rationals lo <= e^x - 1 <= hi, from 60-digit decimal arithmetic."""
    with decimal.localcontext() as ctx:
        ctx.prec = 60
        value = (decimal.Decimal(x.numerator) / decimal.Decimal(x.denominator)).exp() - 1
    exact = Fraction(value)
    slack = abs(exact) * Fraction(1, 10**50)
    return exact - slack, exact + slack


def _exact_phi_minus_one(model, channel):
    """Phi_2(u) - 1 of every output, in rationals: P_{X|U} and P_X from (A, P_Y, channel)."""
    a = [[Fraction(float(v)) for v in row] for row in model.A]
    p_y = [Fraction(float(v)) for v in model.p_y]
    n_x, n_y = len(a), len(p_y)
    p_x = [sum(a[x][y] * p_y[y] for y in range(n_y)) for x in range(n_x)]
    total = sum(p_x)
    p_x = [v / total for v in p_x]
    out = []
    for row in np.asarray(channel):
        row = [Fraction(float(v)) for v in row]
        joint = [sum(a[x][y] * p_y[y] * row[y] for y in range(n_y)) for x in range(n_x)]
        mass = sum(joint)
        out.append(sum((j / mass) ** 2 / px for j, px in zip(joint, p_x)) - 1)
    return out


def _exact_chi2(model, channel):
    p_y = [Fraction(float(v)) for v in model.p_y]
    mass = sum(p_y)
    total = Fraction(0)
    for row in np.asarray(channel):
        row = [Fraction(float(v)) for v in row]
        p_u = sum(py * c for py, c in zip(p_y, row)) / mass
        total += sum(py * (c - p_u) ** 2 for py, c in zip(p_y, row)) / (mass * p_u)
    return total


@pytest.mark.parametrize("name", sorted(EXAMPLES))
@pytest.mark.parametrize("eps", [1e-3, 1e-5, 1e-7, 1e-9, 1e-11, 1e-13])
def test_tiny_budgets_at_order_two_bracket_the_exact_optimum(name, eps):
    """At alpha = 2 the optimum is expm1(2 eps) sigma_max^2 (Corollary 1).

    Before, at eps = 1e-9 .. 1e-13 the channel exceeded the budget by up to 1e-3 of it and the
    lower bound exceeded the optimum, twice with gap 0 and certified=True.
    """
    model = EXAMPLES[name]
    result = global_optimum(model, eps, 2)
    budget_lo, budget_hi = _exp_bounds(2 * Fraction(eps))
    assert max(_exact_phi_minus_one(model, result.p_u_given_y)) <= budget_lo  # feasible, exactly
    assert Fraction(result.lower_bound) <= _exact_chi2(model, result.p_u_given_y)  # its utility, rounded down
    sigma2 = model.sigma_max**2
    optimum = math.expm1(2 * eps) * sigma2
    assert result.lower_bound <= optimum * (1 + 1e-14)  # sigma_max carries float round-off
    assert optimum <= result.upper_bound
    assert result.gap >= 0 and result.certified == (result.gap <= 1e-6)


def test_feasible_is_relative_to_the_budget():
    """A designed mechanism's `feasible` agrees with the exact check at a budget of 2e-13."""
    eps = 1e-13
    mech = directional_mechanism(MEDICAL, eps, 2)
    budget_lo, budget_hi = _exp_bounds(2 * Fraction(eps))
    worst = max(_exact_phi_minus_one(MEDICAL, mech.p_u_given_y))
    assert mech.feasible == (worst <= budget_hi * (1 + Fraction(1, 10**10)))


def test_an_inconsistent_bracket_is_reported_not_hidden(monkeypatch):
    from renyi.lift import optimum

    monkeypatch.setattr(optimum, "best_upper_bound", lambda *args: (1e-6, "a wrong bound", ("a wrong bound",)))
    with pytest.warns(RuntimeWarning, match="inconsistent and not certified"):
        result = global_optimum(MEDICAL, 0.02, 3)
    assert result.upper_bound == 1e-6 and result.gap < 0 and not result.certified


# --------------------------------------------------------- overflow and range messages


def test_claim_curves_never_overflow_and_refuse_orders_up_to_one():
    assert claim_pure_dp(1e3)(2) == pytest.approx(1e3, rel=1e-12)
    assert claim_pure_dp(1e300)(2) == pytest.approx(1e300, rel=1e-12)
    assert claim_pure_dp(1.0)(1e300) == pytest.approx(1.0, rel=1e-12)
    exact = math.log((math.exp(2) + math.exp(-1)) / (1 + math.e))  # the sinh form at order 2
    assert claim_pure_dp(1.0)(2) == pytest.approx(exact, rel=1e-14)
    for order in (1, 0.5):
        with pytest.raises(ValueError, match="order must be > 1"):
            claim_pure_dp(1.0)(order)
        with pytest.raises(ValueError, match="order must be > 1"):
            claim_zcdp(0.1)(order)


def test_theorem1_at_huge_budgets_and_orders():
    cert = certificate(MEDICAL, 1e3, 3)
    assert not cert.admissible and "overflows" in cert.failing[0]
    assert 0 < epsilon_max(MEDICAL, 1000) < 1e-3
    with pytest.raises(ValueError, match="order must be at most 1000"):
        certificate(MEDICAL, 0.02, 1e6)


@pytest.mark.parametrize("eps,order", [(0.02, 1e6), (1e6, 3)])
def test_directional_mechanism_at_huge_order_or_budget(eps, order):
    mech = directional_mechanism(MEDICAL, eps, order)
    assert mech.feasible and np.all(np.log(mech.lifts) <= eps * (1 + 1e-9))


# ------------------------------------------------------------------- leftovers


def test_wrong_types_and_shapes_get_named():
    with pytest.raises(TypeError, match="model must be a LeakageModel"):
        directional_mechanism(None, 0.02, 3)
    with pytest.raises(ValueError, match="seed must be a non-negative integer"):
        global_optimum(MEDICAL, 0.02, 3, seed="x")
    with pytest.raises(ValueError, match="rectangular"):
        rdp_lower_bound([[1, 2], [3]], Q, 2)
    with pytest.raises(TypeError, match="rectangular"):
        LeakageModel([0.5, 0.5], [[0.5, 0.5], [0.5]])


def test_a_non_stochastic_channel_is_refused():
    with pytest.raises(ValueError, match="column-stochastic"):
        chi2_information([[0.5, 0.9], [0.5, 0.9]], [0.5, 0.5])


def test_nan_inputs_are_refused():
    with pytest.raises(ValueError, match="NaN"):
        log_integral(np.array([np.nan, 0.0]))
    with pytest.raises(ValueError, match="beta must be > 0"):
        softmax_floor(np.ones(3), 0.1, 0.0)
    with pytest.raises(ValueError, match="NaN or infinite"):
        bound_from_densities([0.5, np.nan], [0.5, 0.5], 2, floor=0.1, beta=10, dx=1.0, n_p=10, n_q=10)
    with pytest.raises(ValueError, match="at order 2 it did not"):
        subsampled_rdp(lambda order: math.nan, 0.5, 3)


def test_the_pmf_message_does_not_mention_a_missing_option():
    with pytest.raises(ValueError) as info:
        GeneralLeakageModel([0.5, 0.6], [[0.5, 0.5], [0.5, 0.5]])
    assert "tol" not in str(info.value).split("within")[0] and "normalise it" in str(info.value)


def test_streaming_passes_that_disagree_are_named():
    calls = []

    def unseeded():
        calls.append(1)
        rng = np.random.default_rng(len(calls))  # a new stream on every pass
        for _ in range(3):
            yield rng.normal(0, 1, 1000)

    with pytest.raises(ValueError, match="the passes over the source disagree"):
        fit_densities_chunked(unseeded, np.random.default_rng(5).normal(1, 1, 3000))


def test_streaming_squeezes_a_column_like_the_in_memory_fit():
    x, y = P[:5000, None], Q[:5000, None]
    from renyi.audit import bounds_from_fit

    assert bounds_from_fit(fit_densities_chunked(x, y), 2).lower == pytest.approx(
        rdp_lower_bound(x, y, 2).lower, rel=1e-9
    )


def test_no_overflow_warning_escapes(recwarn):
    warnings.simplefilter("error")
    directional_mechanism(MEDICAL, 0.02, 1e6)
    claim_pure_dp(800.0)(3)
