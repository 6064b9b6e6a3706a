"""Density estimators: the FGT grid KDE against direct sums, RFE, bandwidth rules."""


import numpy as np
import pytest

from renyi.density import (default_bandwidth, kde_on_grid, relative_frequencies, robust_scale,
                           scott_bandwidth, silverman_bandwidth, undersmoothed_bandwidth)


def test_grid_covers_the_mass_and_reports_errors():
    rng = np.random.default_rng(3)
    x, y = rng.normal(0, 1, 10_000), rng.normal(1, 1, 10_000)
    est = kde_on_grid(x, y, 0.1, tails="relative")
    assert est.p.sum() * est.dx == pytest.approx(1, abs=1e-12)
    assert est.q.sum() * est.dx == pytest.approx(1, abs=1e-12)
    assert est.neglected_mass < 1e-12
    assert est.taylor_error < 1e-10
    assert est.grid[0] <= x.min() - 8 * 0.1 + est.dx and est.grid[-1] >= y.max() + 8 * 0.1 - est.dx
    assert np.allclose(np.diff(est.grid), est.dx)


def test_grid_too_large_is_refused():
    x = np.array([0.0, 1e9, 3.0])
    with pytest.raises(ValueError, match="grid would need"):
        kde_on_grid(x, x, 0.01)


def test_relative_frequencies_integers_and_union_support():
    est = relative_frequencies(np.array([0, 0, 1, 3]), np.array([1, 1, 2, 2, 2]))
    assert est.outcomes.tolist() == [0, 1, 2, 3]
    np.testing.assert_allclose(est.p, [0.5, 0.25, 0, 0.25])
    np.testing.assert_allclose(est.q, [0, 0.4, 0.6, 0])


def test_discrete_and_grid_estimates_share_one_face():
    """(p, q, dx, size) mean the same for frequencies and KDE grids: mass = sum(p) * dx = 1."""
    rng = np.random.default_rng(3)
    disc = relative_frequencies(rng.integers(0, 5, 200), rng.integers(0, 5, 300))
    grid = kde_on_grid(rng.normal(size=500), rng.normal(size=400), 0.3)
    for est in (disc, grid):
        assert est.size == est.p.size == est.q.size
        assert np.sum(est.p) * est.dx == pytest.approx(1.0, abs=1e-6)
        assert np.sum(est.q) * est.dx == pytest.approx(1.0, abs=1e-6)
    assert disc.dx == 1.0


def test_relative_frequencies_rows():
    a = np.array([[0, 1], [0, 1], [1, 1]], dtype=np.uint8)
    b = np.array([[1, 0], [0, 1]], dtype=np.uint8)
    est = relative_frequencies(a, b)
    table = {tuple(o): (p, q) for o, p, q in zip(est.outcomes.tolist(), est.p, est.q)}
    assert table == {(0, 1): (2 / 3, 0.5), (1, 1): (1 / 3, 0.0), (1, 0): (0.0, 0.5)}


def test_relative_frequencies_float_categories_and_wide_integers():
    est = relative_frequencies(np.array([0.5, 0.5, 2.0]), np.array([2.0]))
    assert est.outcomes.tolist() == [0.5, 2.0]
    est = relative_frequencies(np.array([0, 10**12]), np.array([10**12]))
    assert est.outcomes.tolist() == [0, 10**12] and est.q.tolist() == [0, 1]


def test_bandwidth_rules():
    rng = np.random.default_rng(4)
    x = rng.normal(0, 2, 10_000)
    a = min(x.std(ddof=1), (np.percentile(x, 75) - np.percentile(x, 25)) / 1.349)
    assert robust_scale(x) == pytest.approx(a)
    assert silverman_bandwidth(x) == pytest.approx(0.9 * a * 10_000 ** -0.2, rel=1e-3)
    assert scott_bandwidth(x) == pytest.approx(1.059 * a * 10_000 ** -0.2, rel=1e-3)
    assert undersmoothed_bandwidth(x) == pytest.approx(1.06 * a * 10_000 ** -0.35)
    assert undersmoothed_bandwidth(x) < silverman_bandwidth(x)
    y = rng.normal(5, 2, 5000)
    assert default_bandwidth(x, y) == pytest.approx(1.06 * 0.5 * (a + robust_scale(y)) * 5000 ** -0.35)


def test_zero_spread_is_an_error():
    with pytest.raises(ValueError, match="zero spread"):
        silverman_bandwidth(np.ones(10))
    with pytest.raises(ValueError, match="rate must lie in"):
        undersmoothed_bandwidth(np.arange(10.0), rate=1.5)
    with pytest.raises(ValueError, match="bandwidth must be > 0"):
        kde_on_grid(np.arange(3.0), np.arange(3.0), 0)


def test_binned_kde_bandwidth_inflation_is_below_1e_3():
    """Linear binning adds Delta^2/6 of variance; the compensated kernel removes it.

    The variance of a KDE is the sample variance plus h_eff^2, so h_eff is measured exactly
    from the grid estimate's second moment.
    """
    rng = np.random.default_rng(3)
    x = rng.normal(0, 2, 50_000)
    for h in (0.05, 0.2, 1.0):
        for spacing in (4.0, 8.0):
            g = kde_on_grid(x, x, h, spacing=spacing)
            mean = np.sum(g.grid * g.p) * g.dx
            var = np.sum((g.grid - mean) ** 2 * g.p) * g.dx
            h_eff = np.sqrt(var - x.var())
            assert abs(h_eff / h - 1) < 1e-3, (h, spacing, h_eff / h - 1)
            assert np.sum(g.p) * g.dx == pytest.approx(1.0, abs=1e-12)


