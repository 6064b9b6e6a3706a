"""Tests of renyi.divergence against independent computations.

Expected values come from scipy quadrature of the exact densities, from
plain (non-log-space) numpy formulas on small pmfs, and from the paper's
printed closed forms — never from the function under test.
"""

import math
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays
from oracles import pmf_renyi
from renyi.closed_forms import laplace_renyi
from renyi.divergence import (
    InfiniteDivergenceWarning,
    alpha_lift,
    chi_square_divergence,
    renyi_divergence,
    renyi_from_lift,
)

ORDERS = [0.3, 0.5, 0.9, 1.0, 1.5, 2.0, 5.0, 7.0, 20.0]


pmf = arrays(float, 6, elements=st.floats(0.01, 1.0)).map(lambda a: a / a.sum())


# ---------------------------------------------------------------- discrete


@pytest.mark.parametrize("lam", ORDERS)
def test_matches_naive_formula_on_small_pmfs(lam):
    p, q = [0.2, 0.5, 0.3], [0.4, 0.4, 0.2]
    assert renyi_divergence(p, q, lam) == pytest.approx(pmf_renyi(p, q, lam), rel=1e-12)


def test_docstring_example_value():
    # 0.5^2/0.9 + 0.5^2/0.1 = 2.7777..., log of it = 1.0216512...
    assert renyi_divergence([0.5, 0.5], [0.9, 0.1], 2) == pytest.approx(math.log(0.25 / 0.9 + 2.5))


def test_max_divergence_is_log_max_ratio():
    p, q = [0.2, 0.5, 0.3], [0.4, 0.4, 0.2]
    assert renyi_divergence(p, q, np.inf) == pytest.approx(math.log(max(0.5, 1.25, 1.5)))


@settings(max_examples=60, deadline=None)
@given(pmf, pmf, st.sampled_from(ORDERS + [np.inf]))
def test_nonnegative_and_zero_on_diagonal(p, q, lam):
    assert renyi_divergence(p, q, lam) >= 0
    assert renyi_divergence(p, p, lam) == pytest.approx(0, abs=1e-12)


@settings(max_examples=60, deadline=None)
@given(pmf, pmf)
def test_monotone_in_order(p, q):
    values = [renyi_divergence(p, q, lam) for lam in ORDERS + [np.inf]]
    assert all(a <= b + 1e-12 for a, b in zip(values[:-1], values[1:]))


@settings(max_examples=60, deadline=None)
@given(pmf, pmf, arrays(float, (4, 6), elements=st.floats(0.0, 1.0)), st.sampled_from(ORDERS))
def test_data_processing_inequality(p, q, kernel, lam):
    kernel = kernel + 1e-3
    kernel = kernel / kernel.sum(axis=0)  # column-stochastic channel from 6 to 4 symbols
    assert renyi_divergence(kernel @ p, kernel @ q, lam) <= renyi_divergence(p, q, lam) + 1e-10


@settings(max_examples=40, deadline=None)
@given(pmf, pmf)
def test_limits_kl_and_max(p, q):
    kl = renyi_divergence(p, q, 1)
    assert renyi_divergence(p, q, 1 + 1e-7) == pytest.approx(kl, rel=1e-4, abs=1e-9)
    assert renyi_divergence(p, q, 1 - 1e-7) == pytest.approx(kl, rel=1e-4, abs=1e-9)
    dmax = renyi_divergence(p, q, np.inf)
    d_big = renyi_divergence(p, q, 1e5)
    assert d_big <= dmax + 1e-12
    assert d_big == pytest.approx(dmax, abs=2e-4)


def test_chi_square_closed_form():
    p, q = np.array([0.2, 0.5, 0.3]), np.array([0.4, 0.4, 0.2])
    assert chi_square_divergence(p, q) == pytest.approx(np.sum((p - q) ** 2 / q), rel=1e-12)


def test_large_order_stays_finite_in_log_space():
    # Mass 1e-300 against 1e-200: p^50 q^-49 underflows/overflows in linear space.
    q = np.array([1 - 1e-200, 1e-200])
    p = np.array([1 - 1e-150, 1e-150])
    lam = 50.0
    # log sum = logaddexp(50 log p0 - 49 log q0, 50 log p1 - 49 log q1); second term dominates.
    expected = (50 * math.log(1e-150) - 49 * math.log(1e-200)) / 49
    assert renyi_divergence(p, q, lam) == pytest.approx(expected, rel=1e-10)


def test_non_nested_support_is_inf_with_reason():
    with pytest.warns(InfiniteDivergenceWarning, match="where q = 0"):
        assert renyi_divergence([0.5, 0.5], [1.0, 0.0], 2) == math.inf
    with pytest.warns(InfiniteDivergenceWarning, match="where q = 0"):
        assert renyi_divergence([0.5, 0.5], [1.0, 0.0], 1) == math.inf
    with pytest.warns(InfiniteDivergenceWarning, match="disjoint"):
        assert renyi_divergence([1.0, 0.0], [0.0, 1.0], 0.5) == math.inf
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        # order < 1: non-nested but overlapping supports give a finite value
        assert renyi_divergence([0.5, 0.5], [1.0, 0.0], 0.5) == pytest.approx(pmf_renyi([0.5], [1.0], 0.5))


# ------------------------------------------------------------ closed forms


# ----------------------------------------------------------------- α-lift


@settings(max_examples=60, deadline=None)
@given(pmf, pmf, st.sampled_from([1.5, 2.0, 3.0, 10.0]))
def test_alpha_lift_identity(post, prior, alpha):
    lift = alpha_lift(post, prior, alpha)
    naive = np.sum(prior * (post / prior) ** alpha) ** (1 / alpha)
    assert lift == pytest.approx(naive, rel=1e-10)
    assert renyi_from_lift(lift, alpha) == pytest.approx(pmf_renyi(post, prior, alpha), rel=1e-9, abs=1e-12)


def test_alpha_lift_columns_and_max_lift():
    prior = np.array([0.4, 0.6])
    post = np.array([[0.5, 0.2], [0.5, 0.8]])
    lifts = alpha_lift(post, prior, np.inf)
    np.testing.assert_allclose(lifts, [0.5 / 0.4, 0.8 / 0.6])
    assert alpha_lift(prior, prior, 3) == pytest.approx(1.0)
    # non-decreasing in alpha (Zarrabian and Sadeghi)
    vals = [alpha_lift(post[:, 0], prior, a) for a in (1.5, 2, 4, 10, np.inf)]
    assert all(a <= b + 1e-12 for a, b in zip(vals[:-1], vals[1:]))


# -------------------------------------------------------------- bad input


@pytest.mark.parametrize(
    "p,q,order,kw,exc,match",
    [
        ([0.5, 0.5], [0.5, 0.5], 0, {}, ValueError, "order must be > 0"),
        ([0.5, 0.5], [0.5, 0.5], -1, {}, ValueError, "order"),
        ([0.5, 0.5], [0.5, 0.5], float("nan"), {}, ValueError, "order must be finite"),
        ([0.5, 0.5], [0.5, 0.5], "2", {}, TypeError, "order must be a real number"),
        ([-0.5, 1.5], [0.5, 0.5], 2, {}, ValueError, "p must be non-negative"),
        ([0.5, 0.5], [0.5, 0.4], 2, {}, ValueError, "q must have total mass 1"),
        ([0.5, 0.5], [0.2, 0.3, 0.5], 2, {}, ValueError, "same shape"),
        ([0.5, np.nan], [0.5, 0.5], 2, {}, ValueError, "p contains 1 NaN"),
        ([0.5, np.inf], [0.5, 0.5], 2, {}, ValueError, "p contains 1 NaN or infinite"),
        (["a", "b"], [0.5, 0.5], 2, {}, TypeError, "p must contain real numbers"),
        ("ab", [0.5, 0.5], 2, {}, TypeError, "p must be array-like"),
        ([], [], 2, {}, ValueError, "p must not be empty"),
        ([0.5, 0.5], [0.5, 0.5], 2, {"dx": 0.0}, ValueError, "dx must be > 0"),
        ([[0.5, 0.5]], [[0.5, 0.5]], 2, {}, ValueError, "p must have 1 dimension"),
    ],
)
def test_bad_input_is_named(p, q, order, kw, exc, match):
    with pytest.raises(exc, match=match):
        renyi_divergence(p, q, order, **kw)


def test_bad_lift_input():
    with pytest.raises(ValueError, match="p_x must be strictly positive"):
        alpha_lift([0.5, 0.5], [1.0, 0.0], 2)
    with pytest.raises(ValueError, match="order must be > 1"):
        alpha_lift([0.5, 0.5], [0.5, 0.5], 1)
    with pytest.raises(ValueError, match="rows"):
        alpha_lift([0.2, 0.3, 0.5], [0.5, 0.5], 2)
    with pytest.raises(ValueError, match="lift must be finite and >= 1"):
        renyi_from_lift(0.5, 2)
    with pytest.raises(ValueError, match="scale must be > 0"):
        laplace_renyi(0, 1, -1, 2)
