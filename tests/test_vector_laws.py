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
