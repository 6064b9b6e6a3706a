"""The shared validation primitives of renyi._validation."""

import numpy as np
import pytest
from renyi._validation import as_int


@pytest.mark.parametrize(
    "value,kwargs,expected",
    [
        (3, {}, 3),
        (np.int64(7), {}, 7),
        (0, {"minimum": 0}, 0),
        (15, {"maximum": 15}, 15),
        (np.uint8(2), {"minimum": 2}, 2),
    ],
)
def test_as_int_accepts_python_and_numpy_integers(value, kwargs, expected):
    out = as_int(value, "k", **kwargs)
    assert out == expected and type(out) is int


@pytest.mark.parametrize(
    "value,kwargs,message",
    [
        (True, {}, "k must be a positive integer, got True"),
        (2.0, {}, "k must be a positive integer, got 2.0"),
        (0, {}, "k must be a positive integer, got 0"),
        (-1, {"minimum": 0}, "k must be a non-negative integer, got -1"),
        (1, {"minimum": 2}, "k must be an integer >= 2, got 1"),
        (16, {"maximum": 15}, "k must be an integer from 1 to 15, got 16"),
        ("3", {}, "k must be a positive integer, got '3'"),
    ],
)
def test_as_int_names_the_argument_and_the_range(value, kwargs, message):
    with pytest.raises(ValueError, match=message.replace("(", r"\(").replace(")", r"\)")):
        as_int(value, "k", **kwargs)


def test_as_generator():
    from renyi._validation import as_generator

    rng = np.random.default_rng(0)
    assert as_generator(rng) is rng
    assert as_generator(None, allow_none=True) is None
    message = r"rng must be a numpy.random.Generator, e.g. numpy.random.default_rng\(seed\)$"
    with pytest.raises(TypeError, match=message):
        as_generator(42)
    with pytest.raises(TypeError, match="or None for a black box"):
        as_generator(np.random.RandomState(0), allow_none=True, why_none="for a black box")
