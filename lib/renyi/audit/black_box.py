"""The black box's contract: how it is named, what it is given and what it must return.

A black box is a callable ``f(database, n, rng) -> outputs``:

- it is given one database of the adjacent pair (any picklable object), a number of outputs
  ``n`` and a :class:`numpy.random.Generator` ``rng``;
- it returns ``n`` outputs: an array of length ``n`` (real or integer values), or of shape
  ``(n, d)`` for vector outputs (one row per output); complex values, NaN and infinities are
  refused;
- it must be a **pure function of** ``(database, n, rng)``: all its randomness from ``rng``,
  no state kept between calls.  The audit calls it once per task, in task order with one
  process and in any order with several; a black box that draws from its own generator or
  counts its calls gives bounds that change with the number of workers (the tests show one
  that does), and is only as reproducible as its own randomness.

:func:`checked_outputs` is the one check every route applies to what the black box returned;
:func:`load_black_box` finds it by name (``"package.module:function"``), as the CLI's
``audit-mechanism`` does.
"""

from __future__ import annotations

import importlib
import os

import numpy as np

__all__ = ["checked_outputs", "load_black_box"]


def checked_outputs(outputs, size: int, what: str, *, finite: bool = True) -> np.ndarray:
    """The black box's outputs as an array, refused unless they are ``size`` real outputs.

    Parameters
    ----------
    outputs : object
        What the black box returned.
    size : int
        Outputs asked for.
    what : str
        How the error names the call, e.g. ``"task 3 (database, 250 outputs)"``.
    finite : bool, default True
        Refuse NaN and infinite values.

    Returns
    -------
    ndarray
        ``size`` rows (one per output).

    Raises
    ------
    ValueError
        The outputs are a scalar, have the wrong length, are not numbers, are complex, or
        (with ``finite``) hold NaN or infinite values; the message names ``what``.
    """
    try:
        array = np.asarray(outputs)
    except Exception as exc:  # a ragged list, an object numpy cannot hold: the black box's error
        raise ValueError(f"the mechanism returned outputs numpy cannot read for {what}: {exc}") from None
    if array.ndim == 0:
        raise ValueError(f"the mechanism returned a scalar for {what} where {size:,} outputs were asked for")
    if array.shape[0] != size:
        raise ValueError(
            f"the mechanism returned {array.shape[0]:,} outputs for {what} where {size:,} were asked for; "
            "a sampler f(database, n, rng) must return n outputs (one per row for vector outcomes)"
        )
    if array.dtype.kind == "c":
        raise ValueError(
            f"the mechanism returned complex outputs for {what}; audit the real and imaginary parts "
            "as a vector (numpy.stack([z.real, z.imag], axis=1))"
        )
    if array.dtype.kind not in "biuf":
        raise ValueError(f"the mechanism returned outputs of type {array.dtype} for {what}; expected numbers")
    if finite and array.dtype.kind == "f" and not np.all(np.isfinite(array)):
        raise ValueError(f"the mechanism's outputs for {what} contain NaN or infinite values")
    return array


def load_black_box(spec: str):
    """The callable named ``"package.module:function"`` (imported here, and by name in workers).

    Parameters
    ----------
    spec : str
        A module path and an attribute path, separated by a colon, e.g.
        ``"mypackage.noise:laplace_count"``.

    Returns
    -------
    callable
        ``f(database, n, rng) -> outputs``.

    Raises
    ------
    ValueError
        The name is malformed, its module cannot be imported (for any reason: the message
        is the import's), or it has no such attribute.
    TypeError
        The attribute is not callable.
    """
    if not isinstance(spec, str) or spec.count(":") != 1 or not all(spec.split(":")):
        raise ValueError(f"a black box is named 'package.module:function', got {spec!r}")
    module_name, attribute = spec.split(":")
    if module_name.endswith(".py") or os.sep in module_name or "/" in module_name:
        dotted = module_name.removesuffix(".py").replace(os.sep, ".").replace("/", ".").strip(".")
        raise ValueError(
            f"{module_name!r} is a file path; name the module with dots, as Python imports it: "
            f"'{dotted}:{attribute}' (run from the folder that holds it, or add that folder to PYTHONPATH)"
        )
    try:
        target = importlib.import_module(module_name)
    except Exception as exc:  # a SyntaxError or a failing import inside the user's module too
        raise ValueError(
            f"cannot import {module_name!r} for the black box {spec!r}: {type(exc).__name__}: {exc}"
        ) from None
    for part in attribute.split("."):
        if not hasattr(target, part):
            raise ValueError(f"{module_name!r} has no {attribute!r} (the black box {spec!r})")
        target = getattr(target, part)
    if not callable(target):
        raise TypeError(f"the black box {spec!r} is not callable")
    return target
