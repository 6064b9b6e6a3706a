"""The softmax floor (13), its derivative (17), and the default and paper floors (renyi.audit.floor)."""

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from renyi.audit import rdp_lower_bound, softmax_derivative, softmax_floor
from renyi.audit.bandwidth import robust_scale


@settings(max_examples=200, deadline=None)
@given(st.floats(-10, 10), st.floats(1e-6, 1.0), st.floats(0.1, 1e6))
def test_softmax_floor_bounds(t, tau, beta):
    value = float(softmax_floor(t, tau, beta))
    hard = max(t, tau)
    assert hard - 1e-12 <= value <= hard + math.log(2) / beta + 1e-12


def test_softmax_matches_definition_and_derivative():
    t = np.linspace(-0.01, 0.03, 101)
    tau, beta = 0.01, 300.0
    direct = np.log(np.exp(beta * t) + np.exp(beta * tau)) / beta
    np.testing.assert_allclose(softmax_floor(t, tau, beta), direct, rtol=1e-13)
    pi_direct = np.exp(beta * t) / (np.exp(beta * t) + np.exp(beta * tau))
    np.testing.assert_allclose(softmax_derivative(t, tau, beta), pi_direct, rtol=1e-12)
    eps = 1e-7
    fd = (softmax_floor(t + eps, tau, beta) - softmax_floor(t - eps, tau, beta)) / (2 * eps)
    np.testing.assert_allclose(softmax_derivative(t, tau, beta), fd, rtol=1e-5)


def test_paper_floor_is_slightly_larger_than_h_in_standardised_units():
    from renyi.audit import paper_floor

    h, s = 0.02, 5.0
    tau = paper_floor(h, s)
    assert tau * s == pytest.approx((h / s) ** 0.9)
    assert tau * s > h / s  # larger than h, in units of the outputs' scale
    rng = np.random.default_rng(2)
    a, b = rng.normal(1, 5, 50_000), rng.normal(0, 5, 50_000)
    bound = rdp_lower_bound(a, b, 2, floor="paper", bias_correction=False, direction="forward")
    assert bound.floor == pytest.approx(paper_floor(bound.bandwidth, 0.5 * (robust_scale(a) + robust_scale(b))))
    # n h tau grows with n (the paper's regime), unlike the default floor's constant 3.13
    small = rdp_lower_bound(a[:5000], b[:5000], 2, floor="paper")
    assert bound.n_p * bound.bandwidth * bound.floor > 2 * small.n_p * small.bandwidth * small.floor
