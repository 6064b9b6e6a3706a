"""renyi.reporting: stored numbers that do not depend on the CPU."""

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from renyi.reporting import ROUNDOFF, count, format_roundoff, roundoff_ceiling, significant


def test_significant_keeps_the_requested_digits():
    assert significant(1.1018592115258954) == 1.10186
    assert significant(1.1018592115258938) == 1.10186  # another SIMD path, same stored value
    assert significant(-0.49142108328039213, 4) == -0.4914
    assert significant(np.float64(6.152746064461407e-07), 3) == 6.15e-07
    assert type(significant(np.float32(0.5))) is float
    assert significant(0) == 0.0


@given(st.floats(min_value=1e-300, max_value=1e300), st.integers(1, 15))
def test_significant_is_within_half_a_unit_of_the_last_digit(x, digits):
    y = significant(x, digits)
    # Half a unit of the last decimal digit, plus the binary representation of x and y: at 15
    # digits half a unit is about 5e-16 relative, the size of an ulp (x = 7.145169204086845e-216
    # missed the decimal bound alone by 0.15 ulp).
    half_unit = 0.5 * 10 ** (math.floor(math.log10(x)) - digits + 1)
    assert abs(y - x) <= half_unit * (1 + 1e-12) + math.ulp(x) + math.ulp(y)


def test_significant_refuses_bad_input():
    with pytest.raises(ValueError, match="digits"):
        significant(1.0, 0)
    with pytest.raises(ValueError, match="finite"):
        significant(float("nan"))
    with pytest.raises(TypeError, match="real number"):
        significant("1.0")


def test_roundoff_formatting():
    assert format_roundoff(6.2e-07) == "6.2e-07"
    assert format_roundoff(8.7e-16) == "< 1e-12"
    assert format_roundoff(0.0) == "< 1e-12"
    assert format_roundoff(3e-9, ".0e", resolution=1e-8) == "< 1e-08"
    assert roundoff_ceiling(2.1e-13) == ROUNDOFF
    assert roundoff_ceiling(3.456e-7) == 3.5e-7
    with pytest.raises(ValueError, match="non-negative"):
        format_roundoff(-1e-3)


def _read_count(text: str) -> int:
    """Parse ``count``'s output back to an integer, independently of its code."""
    supers = "⁰¹²³⁴⁵⁶⁷⁸⁹"
    if "10" in text and any(ch in supers for ch in text):
        head, _, power = text.rpartition("10")
        mantissa = int(head.rstrip("·")) if head else 1
        return mantissa * 10 ** int("".join(str(supers.index(ch)) for ch in power))
    return int(text.replace(",", ""))


@pytest.mark.parametrize("n", [0, 7, 10, 99, 100, 1_000, 1_500, 20_000, 262_144, 10**6, 5 * 10**7, 123_456_789])
def test_count_is_exact_and_never_longer_than_the_digits(n):
    text = count(n)
    assert _read_count(text) == n
    assert len(text) <= len(f"{n:,}")


def test_count_writes_round_sizes_as_powers_of_ten():
    assert [count(10**k) for k in (2, 3, 6, 7)] == ["10²", "10³", "10⁶", "10⁷"]
    assert count(3 * 10**5) == "3·10⁵"


@pytest.mark.parametrize("bad", [-1, 2.0, True, "100"])
def test_count_refuses_what_is_not_a_count(bad):
    with pytest.raises(ValueError, match="n must be"):
        count(bad)
