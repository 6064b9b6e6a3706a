"""Input checks shared by the public functions.

Every public function of :mod:`renyi` validates its inputs with these helpers,
so that a user error always surfaces as a ``ValueError``/``TypeError`` that
names the offending argument, what was expected and what was given — never as
a silent ``nan`` further down the pipeline.
"""

from __future__ import annotations

import math
import numbers
import os

import numpy as np


def _describe(value) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def as_real_array(
    value, name: str, *, ndim: int | tuple[int, ...] | None = None, allow_empty: bool = False, finite: bool = True
) -> np.ndarray:
    """Return ``value`` as a float array, or raise naming ``name``."""
    if isinstance(value, (str, bytes)) or value is None:
        raise TypeError(f"{name} must be array-like of real numbers, got {_describe(value)}")
    try:
        arr = np.asarray(value)
    except Exception:  # ragged lists and other oddities
        raise TypeError(
            f"{name} must be a rectangular array of real numbers (its rows have different lengths)"
        ) from None
    if arr.dtype == object or not (np.issubdtype(arr.dtype, np.number) or arr.dtype == bool):
        raise TypeError(f"{name} must contain real numbers, got dtype {arr.dtype}")
    if np.issubdtype(arr.dtype, np.complexfloating):
        raise TypeError(f"{name} must be real, got complex dtype {arr.dtype}")
    arr = arr.astype(float, copy=False)
    if ndim is not None:
        allowed = (ndim,) if isinstance(ndim, int) else ndim
        if arr.ndim not in allowed:
            raise ValueError(f"{name} must have {' or '.join(map(str, allowed))} dimension(s), got shape {arr.shape}")
    if not allow_empty and arr.size == 0:
        raise ValueError(f"{name} must not be empty")
    if finite and not np.all(np.isfinite(arr)):
        bad = int(np.size(arr) - np.count_nonzero(np.isfinite(arr)))
        raise ValueError(f"{name} contains {bad} NaN or infinite value(s)")
    return arr


def as_pmf(
    value,
    name: str,
    *,
    dx: float | None = None,
    tol: float = 1e-6,
    ndim: int | tuple[int, ...] = 1,
    tol_option: str | None = None,
) -> np.ndarray:
    """A non-negative, finite array whose total mass (times ``dx``) is 1 within ``tol``.

    ``tol_option`` names the caller's argument that sets ``tol``; the message suggests raising
    it only where the caller has one.
    """
    arr = as_real_array(value, name, ndim=ndim)
    if np.any(arr < 0):
        raise ValueError(f"{name} must be non-negative, found minimum {arr.min():.3g}")
    mass = float(arr.sum() * (1.0 if dx is None else dx))
    kind = "sum" if dx is None else "integral (sum * dx)"
    if ndim == 1 and abs(mass - 1.0) > tol:
        raise ValueError(
            f"{name} must have total mass 1 (its {kind}) within {tol:g}, got {mass:.10g}; normalise it"
            + (f" or raise {tol_option}" if tol_option else "")
        )
    return arr


def as_positive_scalar(value, name: str, *, allow_inf: bool = False, strict: bool = True) -> float:
    """A real scalar > 0 (or >= 0 when ``strict`` is False)."""
    x = as_real_scalar(value, name, allow_inf=allow_inf)
    if (x <= 0) if strict else (x < 0):
        raise ValueError(f"{name} must be {'> 0' if strict else '>= 0'}, got {x!r}")
    return x


def as_real_scalar(value, name: str, *, allow_inf: bool = False) -> float:
    if isinstance(value, bool) or not isinstance(value, (numbers.Real, np.ndarray, np.generic)):
        raise TypeError(f"{name} must be a real number, got {_describe(value)}")
    if isinstance(value, np.ndarray):
        if value.ndim != 0 or not np.issubdtype(value.dtype, np.number):
            raise TypeError(f"{name} must be a real scalar, got array of shape {value.shape}")
    x = float(value)
    if math.isnan(x) or (math.isinf(x) and not allow_inf):
        raise ValueError(f"{name} must be finite, got {x!r}")
    return x


def as_order(
    value, name: str = "order", *, minimum: float = 0.0, allow_one: bool = True, allow_inf: bool = True
) -> float:
    """A Rényi order: real, > ``minimum``; 1 and +inf only where allowed."""
    x = as_real_scalar(value, name, allow_inf=allow_inf)
    if x == -math.inf or x <= minimum:
        raise ValueError(f"{name} must be > {minimum:g}, got {x!r}")
    if x == 1.0 and not allow_one:
        raise ValueError(f"{name} must differ from 1, got 1")
    return x


def as_orders(value, name: str = "orders", **kwargs) -> tuple[list[float], bool]:
    """Scalar or sequence of orders; returns (list, was_scalar)."""
    if isinstance(value, (numbers.Real, np.generic)) and not isinstance(value, bool):
        return [as_order(value, name, **kwargs)], True
    if isinstance(value, (str, bytes)) or value is None:
        raise TypeError(f"{name} must be a number or a sequence of numbers, got {_describe(value)}")
    try:
        items = list(np.asarray(value, dtype=object).ravel())
    except Exception:
        raise TypeError(f"{name} must be a number or a sequence of numbers, got {_describe(value)}") from None
    if not items:
        raise ValueError(f"{name} must not be empty")
    return [as_order(v, f"{name}[{i}]", **kwargs) for i, v in enumerate(items)], False


def as_rdp_order(value, name: str = "order") -> float:
    """A finite order > 1: the orders at which Rényi DP is claimed, audited and designed for."""
    return as_order(value, name, minimum=1.0, allow_inf=False)


def as_rdp_orders(value, name: str = "orders") -> tuple[list[float], bool]:
    """Scalar or sequence of :func:`as_rdp_order` orders; returns (list, was_scalar)."""
    return as_orders(value, name, minimum=1.0, allow_inf=False)


def as_samples(value, name: str) -> np.ndarray:
    """Mechanism outputs: a 1-D array, or a 2-D array with one outcome per row.

    A single column (``model(x).numpy()`` has shape ``(n, 1)``) is read as 1-D.  Integer and
    boolean dtypes are kept, since the audit reads them as discrete outputs.
    """
    if isinstance(value, (str, bytes)) or value is None:
        raise TypeError(f"{name} must be an array of outputs, got {value!r}")
    try:
        arr = np.asarray(value)
    except ValueError:  # ragged nested lists
        raise ValueError(
            f"{name} must be a rectangular array (1-D, or 2-D with one outcome per row); "
            "its rows have different lengths"
        ) from None
    if arr.dtype == object or not (np.issubdtype(arr.dtype, np.number) or arr.dtype == bool):
        raise TypeError(f"{name} must contain numbers, got dtype {arr.dtype}")
    if arr.ndim == 0:
        raise ValueError(f"{name} must be an array of outputs (1-D, or 2-D with one outcome per row), got a scalar")
    if arr.ndim == 2 and arr.shape[1] == 1:
        arr = arr[:, 0]
    if arr.ndim > 2:
        raise ValueError(f"{name} must be 1-D, or 2-D with one outcome per row, got shape {arr.shape}")
    if arr.shape[0] == 0 or arr.size == 0:
        raise ValueError(f"{name} is empty")
    if np.issubdtype(arr.dtype, np.floating) and not np.all(np.isfinite(arr)):
        bad = int(arr.size - np.count_nonzero(np.isfinite(arr)))
        raise ValueError(f"{name} contains {bad} NaN or infinite value(s)")
    if np.issubdtype(arr.dtype, np.complexfloating):
        raise TypeError(f"{name} must be real, got {arr.dtype}")
    return arr


def as_probability(value, name: str) -> float:
    """A scalar strictly inside (0, 1)."""
    x = as_real_scalar(value, name)
    if not 0.0 < x < 1.0:
        raise ValueError(f"{name} must lie strictly between 0 and 1, got {x!r}")
    return x


def as_int(value, name: str, *, minimum: int = 1, maximum: int | None = None) -> int:
    """An integer (Python or NumPy, never bool) in ``[minimum, maximum]``, as a Python ``int``."""
    ok = not isinstance(value, bool) and isinstance(value, (numbers.Integral, np.integer))
    ok = ok and value >= minimum and (maximum is None or value <= maximum)
    if not ok:
        if maximum is not None:
            wanted = f"an integer from {minimum} to {maximum}"
        else:
            wanted = {1: "a positive integer", 0: "a non-negative integer"}.get(minimum, f"an integer >= {minimum}")
        raise ValueError(f"{name} must be {wanted}, got {value!r}")
    return int(value)


def as_workers(value, name: str = "workers") -> int:
    """A process count: an integer >= 1, or -1 for every core of this machine."""
    if not isinstance(value, bool) and isinstance(value, (numbers.Integral, np.integer)) and value == -1:
        return os.cpu_count() or 1
    return as_int(value, name)


def as_generator(rng, name: str = "rng", *, allow_none: bool = False, why_none: str = ""):
    """A ``numpy.random.Generator`` (or ``None`` where allowed); the library's only source of randomness."""
    if rng is None and allow_none:
        return None
    if not isinstance(rng, np.random.Generator):
        extra = f", or None {why_none}" if allow_none else ""
        raise TypeError(f"{name} must be a numpy.random.Generator, e.g. numpy.random.default_rng(seed){extra}")
    return rng
