"""LowerBound: what a bound prints and serialises (renyi.audit.bounds)."""

import numpy as np
import pytest
from renyi.audit import rdp_lower_bound
from scipy import stats


def test_printed_bound_shows_the_subtracted_bias_and_the_direction():
    rng = np.random.default_rng(4)
    a, b = rng.normal(1, 5, 20_000), rng.normal(0, 5, 20_000)
    bound = rdp_lower_bound(a, b, 2)
    text = str(bound)
    assert f"- bias {max(bound.bias, 0):.3g}" in text and bound.direction in text
    assert f"{bound.lower:.6g}" in text
    centre = bound.estimate - max(bound.bias, 0)
    assert bound.lower == pytest.approx(centre + stats.norm.ppf(bound.level) * bound.std_error)
    trivial = rdp_lower_bound(a[:200], a[200:400], 2)
    assert trivial.trivial and "trivial" in str(trivial)
