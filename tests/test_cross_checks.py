"""Implementations checked against each other (KDEpy style), gathered in one place.

Each test computes one quantity two independent ways: the binned and the exact-tail KDE
against the direct kernel sum (and scipy), closed-form divergences against quadrature and
grid integrals, the exact mechanism targets against quadrature of their densities, and
Corollary 1's value against the certified global optimum.
"""

import math

import numpy as np
import pytest
from oracles import quad_renyi
from renyi.audit.density import direct_kde, kde_on_grid
from renyi.closed_forms import gaussian_renyi, laplace_renyi
from renyi.divergence import renyi_divergence
from renyi.lift import EXAMPLES, corollary1_value, directional_mechanism, global_optimum
from renyi.mechanisms import MECHANISMS
from scipy import stats

# --- KDE back-ends against the direct kernel sum


@pytest.mark.slow
@pytest.mark.parametrize("law", ["normal", "laplace", "student3"])
@pytest.mark.parametrize("h", [0.05, 0.4, 2.0])
def test_exact_tail_kde_matches_direct_sum_in_the_tails(law, h):
    rng = np.random.default_rng(12)
    draw = {
        "normal": lambda n: rng.normal(0, 5, n),
        "laplace": lambda n: rng.laplace(0, 5, n),
        "student3": lambda n: 3 * rng.standard_t(3, n),
    }[law]
    x, y = draw(3000), draw(2000) + 1
    est = kde_on_grid(x, y, h, tails="relative")
    for dens, sample in ((est.p, x), (est.q, y)):
        ref = direct_kde(sample, h, est.grid)
        keep = ref > 1e-12
        assert keep.sum() > 100
        assert np.max(np.abs(dens[keep] / ref[keep] - 1)) < 1e-9
        # below 1e-12 the grid value is still tiny, never round-off noise at 1e-16 of the peak
        assert np.all(dens[~keep] <= 1e-12 * (1 + 1e-9))


def test_direct_kde_against_scipy_gaussian_kde():
    rng = np.random.default_rng(1)
    x = rng.normal(size=500)
    kde = stats.gaussian_kde(x, bw_method=0.3 / x.std(ddof=1))  # scipy's factor times the sd = h
    pts = np.linspace(-4, 4, 50)
    np.testing.assert_allclose(direct_kde(x, 0.3, pts), kde(pts), rtol=1e-10)


@pytest.mark.slow
def test_binned_kde_matches_direct_sum_near_the_bulk():
    """Accurate relative to the maximum; the tails below are where the floor hides them."""
    rng = np.random.default_rng(4)
    a, b = rng.normal(1, 5, 20_000), rng.normal(0, 5, 20_000)
    g = kde_on_grid(a, b, 0.2)
    exact = direct_kde(a, 0.2, g.grid)
    assert np.max(np.abs(g.p - exact)) < 2e-3 * exact.max()
    bulk = exact > 1e-3 * exact.max()
    assert np.max(np.abs(g.p[bulk] / exact[bulk] - 1)) < 2e-3


# --- closed-form divergences against quadrature and grid integrals

#: The orders of test_divergence.py (both sides of 1, and large).
DIVERGENCE_ORDERS = [0.3, 0.5, 0.9, 1.0, 1.5, 2.0, 5.0, 7.0, 20.0]


@pytest.mark.parametrize("lam", DIVERGENCE_ORDERS)
@pytest.mark.parametrize("mp,sp,mq,sq", [(1, 5, 0, 5), (0.3, 1.0, -0.2, 1.3), (0, 1.2, 0, 1.0)])
def test_gaussian_closed_form_against_quadrature(mp, sp, mq, sq, lam):
    if lam * sq**2 + (1 - lam) * sp**2 <= 0:
        assert gaussian_renyi(mp, sp, mq, sq, lam) == math.inf
        return
    expected = quad_renyi(stats.norm(mp, sp).logpdf, stats.norm(mq, sq).logpdf, lam)
    assert gaussian_renyi(mp, sp, mq, sq, lam) == pytest.approx(expected, rel=1e-8, abs=1e-12)


@pytest.mark.parametrize("lam", DIVERGENCE_ORDERS)
@pytest.mark.parametrize("shift,b", [(1.0, 5.0), (2.0, 1.0), (0.1, 0.7)])
def test_laplace_closed_form_against_quadrature(shift, b, lam):
    expected = quad_renyi(stats.laplace(shift, b).logpdf, stats.laplace(0, b).logpdf, lam, points=[0.0, shift])
    assert laplace_renyi(shift, 0, b, lam) == pytest.approx(expected, rel=1e-8, abs=1e-12)


@pytest.mark.parametrize("lam", [2.0, 5.0, 50.0])
def test_grid_integral_matches_closed_forms(lam):
    t, dx = np.linspace(-80, 80, 64001, retstep=True)
    p, q = stats.norm(1, 5).pdf(t), stats.norm(0, 5).pdf(t)
    assert renyi_divergence(p, q, lam, dx=dx) == pytest.approx(gaussian_renyi(1, 5, 0, 5, lam), rel=1e-8)
    t, dx = np.linspace(-400, 400, 800001, retstep=True)
    p, q = stats.laplace(1, 5).pdf(t), stats.laplace(0, 5).pdf(t)
    assert renyi_divergence(p, q, lam, dx=dx) == pytest.approx(laplace_renyi(1, 0, 5, lam), rel=1e-5)


# --- exact mechanism targets against quadrature of their densities

#: The orders of test_mechanisms.py (integers and a fractional one).
TARGET_ORDERS = [2, 5, 7, 2.5]


@pytest.mark.parametrize("lam", TARGET_ORDERS)
def test_additive_targets_by_quadrature(lam):
    lap = stats.laplace(0, 5)
    assert MECHANISMS["laplace"].target(lam) == pytest.approx(
        quad_renyi(lambda t: lap.logpdf(t - 1), lap.logpdf, lam, points=[0, 1], span=400), rel=1e-8
    )
    gau = stats.norm(0, 5)
    assert MECHANISMS["gaussian"].target(lam) == pytest.approx(
        quad_renyi(lambda t: gau.logpdf(t - 1), gau.logpdf, lam, points=[0, 1], span=150), rel=1e-8
    )


@pytest.mark.parametrize("noise", ["laplace", "gaussian"])
@pytest.mark.parametrize("lam", TARGET_ORDERS)
def test_subsampled_targets_by_quadrature(noise, lam):
    base = stats.laplace(0, 5) if noise == "laplace" else stats.norm(0, 5)
    mixture = lambda t: np.logaddexp(base.logpdf(t), base.logpdf(t - 1)) + math.log(0.5)
    expected = quad_renyi(mixture, base.logpdf, lam, points=[0, 1], span=400 if noise == "laplace" else 150)
    assert MECHANISMS[f"subsampled_{noise}"].target(lam) == pytest.approx(expected, rel=1e-7)


# --- Corollary 1 against the certified global optimum


@pytest.mark.parametrize("model", [EXAMPLES["medical"], EXAMPLES["second"]])
@pytest.mark.parametrize("frac", [0.3, 1.0])
def test_corollary1_equals_global_optimum(model, frac):
    eps = frac * 0.5 * math.log1p(model.r_val**2)
    exact = corollary1_value(model, eps)
    assert global_optimum(model, eps, 2).utility == pytest.approx(exact, rel=1e-6)
    assert directional_mechanism(model, eps, 2).utility == pytest.approx(exact, rel=1e-9)
