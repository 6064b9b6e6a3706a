"""renyi.sweeps.discrete_laws: the finite-sample study's laws, their samplers and exact divergences."""

import math

import numpy as np
import pytest
from oracles import pmf_renyi
from renyi.audit import rdp_lower_bound
from renyi.mechanisms import ADJACENT_PAIR, MECHANISMS
from renyi.sweeps.discrete_laws import (
    LAWS,
    bounds_from_counts,
    delta_coverage_from_counts,
    finite_sample_rows,
    section4_pmfs,
    targets,
)
from scipy import stats


@pytest.mark.parametrize("order", [1.5, 2.0, 10.0, 100.0])
def test_geometric_divergence_matches_its_closed_form(order):
    # p/q = e^eps on x <= 0 (mass 1/(1 + e^-eps)) and e^-eps on x >= 1
    eps = 0.25
    closed = math.log(
        (math.exp((order - 1) * eps) + math.exp(-eps) * math.exp(-(order - 1) * eps)) / (1 + math.exp(-eps))
    )
    assert LAWS["geometric"].target(order) == pytest.approx(closed / (order - 1), rel=1e-12)
    assert LAWS["geometric"].target(order, reverse=True) == pytest.approx(closed / (order - 1), rel=1e-12)


@pytest.mark.parametrize("order", [2.0, 10.0])
def test_rounded_laplace_divergence_matches_differences_of_the_cdf(order):
    x = np.arange(-60, 62)
    p = stats.laplace.cdf(x + 0.5, 0, 2) - stats.laplace.cdf(x - 0.5, 0, 2)
    q = stats.laplace.cdf(x + 0.5, 1, 2) - stats.laplace.cdf(x - 0.5, 1, 2)
    brute = math.log(np.sum(p**order * q ** (1 - order))) / (order - 1)
    assert LAWS["rounded_laplace"].target(order) == pytest.approx(brute, rel=1e-9)


def test_binary_rr_divergence_and_samplers():
    keep = math.exp(1.5) / (1 + math.exp(1.5))
    exact = math.log(keep**2 / (1 - keep) + (1 - keep) ** 2 / keep)
    assert targets("binary_rr", 2.0) == pytest.approx((exact, exact), rel=1e-12)
    rng = np.random.default_rng(0)
    for law in LAWS.values():
        a, b = law.sample_p(200_000, rng), law.sample_q(200_000, rng)
        values, counts = np.unique(a, return_counts=True)
        # the sampler draws the law whose pmf the divergence sums
        expected = np.exp(law.log_p(values)) * a.size
        big = expected > 500
        assert np.all(np.abs(counts[big] - expected[big]) < 5 * np.sqrt(expected[big]))
        assert law.name == "binary_rr" or abs(b.mean() - a.mean() - 1) < 0.05  # Q is P shifted by one


def test_one_replicate_gives_both_bounds_below_the_truth():
    rows = finite_sample_rows(
        {"mechanism": "geometric", "n": 50_000, "replicate": 0},
        "geometric",
        50_000,
        [2.0, 10.0],
        np.random.default_rng(1),
    )
    for row in rows:
        assert 0 < row["fs_forward"] <= row["fs_primal"] + 1e-12
        assert max(row["fs_forward"], row["fs_reverse"]) <= max(row["target"], row["target_reverse"])
        assert row["delta_forward"] < row["target"] * 1.2


@pytest.mark.parametrize("name", ["randomized_response", "shuffled_randomized_response"])
def test_section4_pmfs_are_laws_with_the_mechanisms_divergence(name):
    p, q = section4_pmfs(name)
    assert p.sum() == pytest.approx(1, abs=1e-12) and q.sum() == pytest.approx(1, abs=1e-12)
    for order in (2.0, 7.0):
        assert pmf_renyi(p, q, order) == pytest.approx(MECHANISMS[name].target(order), rel=1e-9)


@pytest.mark.parametrize("name", ["randomized_response", "shuffled_randomized_response"])
def test_the_bound_from_counts_is_the_bound_from_the_outputs(name):
    """Cells numbered as section4_pmfs numbers them give the sampled outputs' bound."""
    mech, (x, x_prime) = MECHANISMS[name], ADJACENT_PAIR
    rng = np.random.default_rng(4)
    a, b = mech.sample(x, 20_000, rng), mech.sample(x_prime, 20_000, rng)
    orders = [2.0, 5.0, 7.0]
    direct = rdp_lower_bound(a, b, orders, discrete=True, direction="forward")
    # the same outputs as cell numbers (bit vectors read as binary numbers, first bit highest)
    cell = (lambda o: o @ (1 << np.arange(o.shape[1])[::-1])) if a.ndim == 2 else (lambda o: o)
    p, q = section4_pmfs(name)
    counts = [np.bincount(cell(o), minlength=p.size) for o in (a, b)]
    for mine, theirs in zip(bounds_from_counts(*counts, orders), direct, strict=True):
        for field in ("order", "estimate", "std_error", "bias", "lower", "floor", "cells", "reliable"):
            # the same numbers, summed in another order (the last bit of the bias differs)
            assert getattr(mine, field) == pytest.approx(getattr(theirs, field), rel=1e-12), field

    class Replay:  # hands delta_coverage_from_counts these counts instead of a fresh draw
        draws = iter(counts)

        def multinomial(self, n, law):
            assert n == 20_000 and law.size == p.size
            return next(self.draws)

    covered = delta_coverage_from_counts(name, 20_000, orders, 1, Replay())
    assert covered == {o: int(d.lower <= mech.target(o)) for o, d in zip(orders, direct)}
    # and the law of the counts: cell frequencies of the outputs match section4_pmfs (chi^2 test)
    expected = 20_000 * p
    keep = expected > 5
    assert stats.chisquare(counts[0][keep], expected[keep] * counts[0][keep].sum() / expected[keep].sum()).pvalue > 1e-3
