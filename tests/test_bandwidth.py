"""Bandwidth rules and the robust scale (renyi.audit.bandwidth)."""

import numpy as np
import pytest
from renyi.audit.bandwidth import (
    default_bandwidth,
    robust_scale,
    scott_bandwidth,
    silverman_bandwidth,
    undersmoothed_bandwidth,
)
from renyi.audit.density import kde_on_grid


def test_bandwidth_rules():
    rng = np.random.default_rng(4)
    x = rng.normal(0, 2, 10_000)
    a = min(x.std(ddof=1), (np.percentile(x, 75) - np.percentile(x, 25)) / 1.349)
    assert robust_scale(x) == pytest.approx(a)
    assert silverman_bandwidth(x) == pytest.approx(0.9 * a * 10_000**-0.2, rel=1e-3)
    assert scott_bandwidth(x) == pytest.approx(1.059 * a * 10_000**-0.2, rel=1e-3)
    assert undersmoothed_bandwidth(x) == pytest.approx(1.06 * a * 10_000**-0.35)
    assert undersmoothed_bandwidth(x) < silverman_bandwidth(x)
    y = rng.normal(5, 2, 5000)
    assert default_bandwidth(x, y) == pytest.approx(1.06 * 0.5 * (a + robust_scale(y)) * 5000**-0.35)


def test_zero_spread_is_an_error():
    with pytest.raises(ValueError, match="zero spread"):
        silverman_bandwidth(np.ones(10))
    with pytest.raises(ValueError, match="rate must lie in"):
        undersmoothed_bandwidth(np.arange(10.0), rate=1.5)
    with pytest.raises(ValueError, match="bandwidth must be > 0"):
        kde_on_grid(np.arange(3.0), np.arange(3.0), 0)
