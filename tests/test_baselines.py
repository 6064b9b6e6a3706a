"""The estimators the floored softmax is compared with (renyi.audit.baselines)."""

import math

import numpy as np
import pytest
from renyi.audit.baselines import hard_floor_plugin, histogram_renyi, naive_plugin
from renyi.divergence import renyi_divergence


def test_plugins():
    p, q = np.array([0.5, 0.5]), np.array([0.9, 0.1])
    assert naive_plugin(p, q, 2) == pytest.approx(renyi_divergence(p, q, 2))
    assert naive_plugin(p, np.array([1.0, 0.0]), 2) == math.inf
    assert hard_floor_plugin(p, np.array([1.0, 0.0]), 2, 0.2) == pytest.approx(math.log(0.25 / 1 + 0.25 / 0.2))
    rng = np.random.default_rng(0)
    x, y = rng.normal(1, 1, 10_000), rng.normal(0, 1, 10_000)
    assert math.isnan(histogram_renyi(x, y, 2, bins=200))
    assert 0.5 < histogram_renyi(x, y, 2, bins=10, range_=(-2, 3)) < 1.5
