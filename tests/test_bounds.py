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


def _stand_in(order, label, lower, warnings=()):
    from renyi.audit.bounds import LowerBound

    return LowerBound(
        order=order, estimate=lower, std_error=0.0, lower=lower, alpha=0.05, n_p=10, n_q=10, bandwidth=None,
        floor=None, beta=None, discrete=True, cells=2, direction=label, warnings=warnings,
    )  # fmt: skip


def test_both_directions_report_the_larger_bound_keep_each_and_carry_either_doubt():
    """The one rule every method's result is built by (renyi.audit.bounds.best_per_order)."""
    from renyi.audit.bounds import best_per_order

    table = {(2.0, "P||Q"): 0.3, (2.0, "Q||P"): 0.5, (5.0, "P||Q"): 0.7, (5.0, "Q||P"): 0.7}
    doubts = {"Q||P": ("few outputs",)}

    def bound_at(order, label):
        return _stand_in(order, label, table[order, label], doubts.get(label, ()))

    two, five = best_per_order([2.0, 5.0], "both", bound_at)
    assert (two.direction, two.lower) == ("Q||P", 0.5) and five.direction == "P||Q"  # a tie: the paper's pair
    assert [d.lower for d in two.directions] == [0.3, 0.5] and two.warnings == five.warnings == ("few outputs",)
    (forward,) = best_per_order([2.0], "forward", bound_at)
    assert (forward.direction, forward.lower, forward.directions, forward.warnings) == ("P||Q", 0.3, (), ())
    (reverse,) = best_per_order([5.0], "reverse", bound_at)
    assert (reverse.direction, reverse.warnings) == ("Q||P", ("few outputs",))
