"""renyi.sweeps.discrete_laws: the finite-sample study's laws, their samplers and exact divergences."""

import math

import numpy as np
import pytest
from renyi.sweeps.discrete_laws import LAWS, finite_sample_rows, targets
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
