"""Relative frequencies of discrete outputs, eq. (9) (renyi.audit.frequencies)."""

import numpy as np
import pytest
from renyi.audit.density import kde_on_grid
from renyi.audit.frequencies import relative_frequencies


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
