"""renyi.sweeps.vector_laws: the vector-outputs study's mechanisms and their exact divergences."""

import math

import numpy as np
import pytest
from oracles import quad_renyi
from renyi.sweeps.vector_laws import CASES, _draw, truth
from scipy import stats


@pytest.mark.parametrize("order", [2.0, 5.0])
def test_product_laplace_truth_is_the_one_dimensional_divergence_by_quadrature(order):
    b = math.sqrt(5.0)
    exact = quad_renyi(
        lambda t: stats.laplace.logpdf(t, 1.0, b), lambda t: stats.laplace.logpdf(t, 0.0, b), order, points=(0.0, 1.0)
    )
    assert truth("product_laplace", 10, order) == pytest.approx(exact, rel=1e-8)


@pytest.mark.slow
def test_gaussian_truths_against_monte_carlo():
    # E_Q[(p/q)^order] from the multivariate densities themselves, d = 3, correlated noise
    rng = np.random.default_rng(0)
    d, order = 3, 2.0
    corr = 0.9 ** np.abs(np.subtract.outer(np.arange(d), np.arange(d)))
    cov = 10.0 * corr
    shift = np.array([1.0, 0.0, 0.0])
    x = rng.multivariate_normal(np.zeros(d), cov, 2_000_000)
    log_ratio = stats.multivariate_normal(shift, cov).logpdf(x) - stats.multivariate_normal(np.zeros(d), cov).logpdf(x)
    estimate = math.log(np.mean(np.exp(order * log_ratio))) / (order - 1)
    assert truth("gaussian_correlated", d, order) == pytest.approx(estimate, rel=0.02)
    # isotropic: the shift's squared norm over twice the variance, per unit of order
    assert truth("gaussian", 1000, 2.0) == pytest.approx(0.1, rel=1e-12)


@pytest.mark.parametrize("case", sorted({law for law, _ in CASES.values()}))
def test_samplers_draw_the_laws_the_truths_describe(case):
    rng = np.random.default_rng(1)
    d, n = 3, 400_000
    p, q = _draw(case, d, n, rng, True), _draw(case, d, n, rng, False)
    if case == "correlation_sign":  # d = 2 whatever d: correlation +0.3 against -0.3
        assert np.corrcoef(p.T)[0, 1] == pytest.approx(0.3, abs=0.01)
        assert np.corrcoef(q.T)[0, 1] == pytest.approx(-0.3, abs=0.01)
        return
    if case == "spread":  # no shift; variance 1.2^2 against 1
        assert np.all(np.abs(p.mean(axis=0) - q.mean(axis=0)) < 5 * 1.2 * math.sqrt(2 / n))
        assert np.allclose(p.var(axis=0), 1.44, rtol=0.02) and np.allclose(q.var(axis=0), 1.0, rtol=0.02)
        return
    shift = p.mean(axis=0) - q.mean(axis=0)
    expected = {"clipped_mean": np.full(d, 0.01), "laplace_diagonal": np.ones(d)}.get(case, np.array([1.0, 0.0, 0.0]))
    scale = math.sqrt(0.1 if case == "clipped_mean" else 10.0)
    assert np.all(np.abs(shift - expected) < 5 * scale * math.sqrt(2 / n))
    # per-coordinate variance of the noise
    assert np.allclose(q.var(axis=0), scale**2, rtol=0.02)


def test_the_correlation_sign_truth_matches_quadrature_and_diverges_where_it_should():
    from scipy.stats import multivariate_normal

    x = np.linspace(-9, 9, 1201)
    points = np.dstack(np.meshgrid(x, x))
    log_p = multivariate_normal([0, 0], [[1, 0.3], [0.3, 1]]).logpdf(points)
    log_q = multivariate_normal([0, 0], [[1, -0.3], [-0.3, 1]]).logpdf(points)
    step = x[1] - x[0]
    quadrature = math.log(np.sum(np.exp(2 * log_p - log_q)) * step * step)  # order 2
    assert truth("correlation_sign_auto", 2, 2.0) == pytest.approx(quadrature, rel=1e-3)
    # 3 Sigma_Q - 2 Sigma_P has off-diagonal -1.5: not positive definite, the integral diverges
    assert truth("correlation_sign_auto", 2, 3.0) == math.inf
