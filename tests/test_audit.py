"""The floored-softmax estimator, the delta-method bound and its validation by simulation.

Simulation tests are seeded; tolerances leave room for Monte-Carlo error
(200 replicates: a true coverage of 0.95 falls below 0.90 with probability < 0.5%).
"""

import numpy as np
import pytest
from renyi.audit import LowerBound, audit, default_floor, rdp_lower_bound
from renyi.mechanisms import ADJACENT_PAIR, MECHANISMS
from scipy import stats

X, X_PRIME = ADJACENT_PAIR


# ------------------------------------------------------------- softmax (13)


# --------------------------------------------------------------- eq. (18)


# ------------------------------------------------------------ simulations


def _replicates(name, n, orders, reps, seed):
    mech = MECHANISMS[name]
    rng = np.random.default_rng(seed)
    return np.array(
        [
            [(b.lower, b.estimate, b.std_error) for b in audit(mech, X, X_PRIME, n, orders, rng=r)]
            for r in rng.spawn(reps)
        ]
    )


@pytest.fixture(scope="module")
def gaussian_runs():
    return _replicates("gaussian", 20_000, [2, 5], 200, 101)


@pytest.mark.slow
def test_standard_error_matches_monte_carlo_spread(gaussian_runs):
    mc_sd = gaussian_runs[:, :, 1].std(axis=0, ddof=1)
    mean_se = gaussian_runs[:, :, 2].mean(axis=0)
    np.testing.assert_allclose(mean_se, mc_sd, rtol=0.20)


@pytest.mark.slow
@pytest.mark.parametrize("name,n", [("gaussian", 20_000), ("laplace", 20_000), ("randomized_response", 2_000)])
def test_coverage_of_the_95_percent_bound(name, n, gaussian_runs):
    runs = gaussian_runs if name == "gaussian" else _replicates(name, n, [2, 5], 200, 202)
    targets = np.array([MECHANISMS[name].target(lam) for lam in (2, 5)])
    coverage = (runs[:, :, 0] <= targets).mean(axis=0)
    assert np.all(coverage >= 0.90), coverage


def test_tightness_gaussian_one_million():
    bound = audit("gaussian", X, X_PRIME, 1_000_000, 2, rng=np.random.default_rng(303))
    assert bound.lower >= 0.85 * 0.04, bound
    assert bound.lower <= 0.04


def test_orders_share_one_fit_and_scalar_returns_one():
    rng = np.random.default_rng(1)
    a, b = rng.normal(1, 5, 5000), rng.normal(0, 5, 5000)
    many = rdp_lower_bound(a, b, [2, 5, 7])
    one = rdp_lower_bound(a, b, 5)
    assert isinstance(one, LowerBound) and len(many) == 3
    assert many[1] == one
    assert one.bandwidth > 0 and one.floor == pytest.approx(default_floor(5000, bandwidth=one.bandwidth))
    assert one.beta == pytest.approx(1 / one.floor)
    # eq. (16) as printed, forward direction, with a floor large enough that the Jensen bias is small
    printed = rdp_lower_bound(a, b, 2, bias_correction=False, direction="forward", floor=10 * one.floor)
    assert printed.reliable and printed.bias < printed.std_error
    assert printed.lower == pytest.approx(printed.estimate + stats.norm.ppf(0.05) * printed.std_error)
    # ... and at the default floor its estimated bias is too large: it falls back
    refused = rdp_lower_bound(a, b, 5, bias_correction=False, direction="forward")
    assert refused.bias > refused.std_error
    assert not refused.reliable and "anti-conservative" in refused.note
    assert refused.lower < refused.estimate + stats.norm.ppf(0.05) * refused.std_error


def test_audit_with_a_black_box_callable():
    def sampler(db, n, rng):
        return np.sum(db) + rng.normal(0, 1.0, n)

    res = audit(sampler, X, X_PRIME, 50_000, [2], rng=np.random.default_rng(4))
    assert 0.5 < res[0].lower < 1.0 + 1e-9  # truth is 2/2 = 1


def test_discrete_inference():
    rng = np.random.default_rng(2)
    rr = MECHANISMS["randomized_response"]
    res = rdp_lower_bound(rr.sample(X, 5000, rng), rr.sample(X_PRIME, 5000, rng), 2)
    assert res.discrete and res.bandwidth is None and res.cells > 100


# -------------------------------------------------------------- bad input

GOOD = np.random.default_rng(0).normal(size=100)


@pytest.mark.parametrize(
    "kwargs,exc,match",
    [
        (dict(samples_p=[]), ValueError, "samples_p is empty"),
        (dict(samples_p=np.array([1.0, np.nan] * 10)), ValueError, "NaN"),
        (dict(samples_q=np.array([1.0, np.inf] * 10)), ValueError, "samples_q contains 10 NaN or infinite"),
        (dict(samples_p=np.float64(3.0)), ValueError, "got a scalar"),
        (dict(samples_p="abc"), TypeError, "samples_p must be an array"),
        (dict(orders=1), ValueError, "orders must be > 1"),
        (dict(orders=0.5), ValueError, "orders must be > 1"),
        (dict(orders=float("inf")), ValueError, "orders must be finite"),
        (dict(orders=[2, float("nan")]), ValueError, r"orders\[1\] must be finite"),
        (dict(orders=[]), ValueError, "orders must not be empty"),
        (dict(alpha=0), ValueError, "alpha must lie strictly between 0 and 1"),
        (dict(alpha=1.5), ValueError, "alpha"),
        (dict(samples_p=np.ones(100)), ValueError, "zero spread"),
        (dict(floor=-1e-3), ValueError, "floor must be > 0"),
        (dict(beta=0), ValueError, "beta must be > 0"),
        (dict(bandwidth=-0.1), ValueError, "bandwidth must be > 0"),
        (dict(samples_p=np.arange(100)), ValueError, "looks discrete"),
        (dict(samples_p=GOOD.reshape(50, 2), samples_q=GOOD.reshape(50, 2), discrete=False), ValueError, "must be 1-D"),
        (dict(discrete="yes"), TypeError, "discrete must be"),
        (dict(bias_correction=None), TypeError, "bias_correction"),
        (dict(samples_p=np.zeros((2, 2, 2))), ValueError, "2-D with one outcome per row"),
    ],
)
def test_bad_input_is_a_clear_error(kwargs, exc, match):
    args = dict(samples_p=GOOD, samples_q=GOOD + 1, orders=2)
    args.update(kwargs)
    with pytest.raises(exc, match=match):
        rdp_lower_bound(args.pop("samples_p"), args.pop("samples_q"), args.pop("orders"), **args)


def test_audit_bad_input():
    rng = np.random.default_rng(0)
    with pytest.raises(ValueError, match="unknown mechanism"):
        audit("nope", X, X_PRIME, 100, 2, rng=rng)
    with pytest.raises(TypeError, match="rng must be"):
        audit("gaussian", X, X_PRIME, 100, 2, rng=1)
    with pytest.raises(ValueError, match="n must be an integer >= 2"):
        audit("gaussian", X, X_PRIME, 1, 2, rng=rng)


# ------------------------------------------- directions, reliability, tails


def test_both_directions_find_the_larger_reverse_divergence_of_shuffled_rr():
    """Shuffled RR: D_5(q||p) = 1.005 against the forward target 0.437; 'both' reports Q||P."""
    mech = MECHANISMS["shuffled_randomized_response"]
    rng = np.random.default_rng(8)
    a, b = mech.sample(X, 200_000, rng), mech.sample(X_PRIME, 200_000, rng)
    both = rdp_lower_bound(a, b, 5)
    forward = rdp_lower_bound(a, b, 5, direction="forward")
    assert both.direction == "Q||P" and both.level == 0.025
    assert both.lower > forward.lower
    assert forward.lower <= mech.target(5) < both.lower <= mech.reverse_target(5)
    assert [d.direction for d in both.directions] == ["P||Q", "Q||P"]
    # each direction is bounded at alpha/2: wider than the forward-only bound at alpha
    assert both.directions[0].lower < forward.lower


def test_fallback_order_bound_is_valid_by_monotonicity():
    rng = np.random.default_rng(12)
    a, b = rng.normal(1, 5, 5_000), rng.normal(0, 5, 5_000)
    high = rdp_lower_bound(a, b, 40, direction="forward")
    assert not high.reliable and 1 < high.bound_order < 40
    at_used = rdp_lower_bound(a, b, high.bound_order, direction="forward")
    assert at_used.reliable and high.lower == pytest.approx(min(at_used.lower, high.estimate))


@pytest.mark.parametrize("name", list(MECHANISMS))
def test_binned_kde_bounds_equal_exact_tail_bounds(name):
    """The default KDE (linear binning + FFT) against the fast Gauss transform: < 1e-3 standard errors.

    At the Section IV orders (and 1.5).  At order 20 the two differ by up to about 1e-3 standard
    errors (Laplace, n = 10^5): high orders weigh the tails more.
    """
    mech = MECHANISMS[name]
    rng = np.random.default_rng(list(MECHANISMS).index(name))
    for n in (10_000, 100_000):
        a, b = mech.sample(X, n, rng), mech.sample(X_PRIME, n, rng)
        fast = rdp_lower_bound(a, b, [1.5, 2, 5, 7])
        exact = rdp_lower_bound(a, b, [1.5, 2, 5, 7], tails="relative")
        compared = 0
        for u, v in zip(fast, exact):
            assert (u.reliable, u.direction, u.bound_order) == (v.reliable, v.direction, v.bound_order)
            if v.reliable:  # a fallback bound has the standard error of its own order, not this one's
                assert abs(u.lower - v.lower) <= 1e-3 * v.std_error, (n, u.order)
                compared += 1
        assert compared >= 2


def test_audit_accepts_rng_none_for_a_black_box_and_any_database_object():
    calls = []

    def black_box(records, n, rng):
        calls.append(rng)
        own = np.random.default_rng(len(calls))  # draws its own randomness
        return sum(r["value"] for r in records) + own.normal(0, 1.0, n)

    bound = audit(black_box, [{"value": 1.0}], [{"value": 0.0}], 20_000, 2)
    assert calls == [None, None] and 0 < bound.lower <= 1.0
    with pytest.raises(TypeError, match="built-in mechanisms"):
        audit("gaussian", X, X_PRIME, 100, 2)
