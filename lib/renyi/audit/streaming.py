r"""Audits of samples too large for memory: the KDE fitted from chunks.

Linear binning is additive, so the default KDE of :func:`renyi.audit.density.kde_on_grid`
can be accumulated chunk by chunk in memory independent of :math:`n`.  The
bandwidth needs the sample size, range and robust scale first, so the samples are
read three times: (1) size, range and finiteness; (2) the evenly strided
subsample of at most :math:`2^{18}` points behind the robust scale, exactly as
:func:`renyi.audit.bandwidth.default_bandwidth` takes it; (3) the binning.  The result
is a :class:`renyi.audit.DensityFit` equal to the in-memory fit up to the
summation order of the counts (last bits), for :func:`renyi.audit.bounds_from_fit`.

Chunks come from a *callable* that returns a fresh iterable each time (a seeded
sampler, a reader that reopens a file), or from an array, including a
``numpy.memmap`` or a ``.npy`` file opened with ``mmap_mode="r"``.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable

import numpy as np

from .._validation import as_int, as_positive_scalar
from .bandwidth import SCALE_SAMPLE, bandwidth_from_scale, robust_scale
from .counts import MAX_NODES, NODES_PER_BANDWIDTH, PAD_BANDWIDTHS
from .density import BIN_CHUNK, DensityFit, linear_bin, smooth_counts

__all__ = ["fit_densities_chunked", "array_chunks"]


def array_chunks(array, chunk: int = 10_000_000) -> Callable[[], Iterable[np.ndarray]]:
    """A chunk source over a 1-D array (in memory or memory-mapped), ``chunk`` values at a time.

    Parameters
    ----------
    array : array_like, 1-D
        In memory, or opened with ``numpy.load(..., mmap_mode="r")``.
    chunk : int, default 10,000,000

    Returns
    -------
    callable
        A function returning a fresh iterator of chunks (two passes need two iterators).
    """
    arr = np.asarray(array) if not isinstance(array, np.memmap) else array
    if arr.ndim == 2 and arr.shape[1] == 1:  # a model's (n, 1) outputs, read as values
        arr = arr[:, 0]
    if arr.ndim != 1:
        raise ValueError(f"chunked audits take 1-D continuous outputs, got shape {arr.shape}")
    chunk = as_int(chunk, "chunk")
    return lambda: (np.asarray(arr[i : i + chunk], dtype=float) for i in range(0, arr.shape[0], chunk))


def _source(value, name):
    if callable(value):
        return value
    if isinstance(value, np.ndarray):
        return array_chunks(value)
    raise TypeError(
        f"{name} must be a callable returning an iterable of 1-D chunks, or a 1-D array; got {type(value).__name__}"
    )


def _chunks(source, name):
    for i, chunk in enumerate(source()):
        arr = np.asarray(chunk)
        if arr.ndim == 2 and arr.shape[1] == 1:
            arr = arr[:, 0]
        if arr.dtype.kind not in "biuf" or arr.ndim != 1:
            raise ValueError(
                f"{name}: chunk {i} must be a 1-D array of real numbers, got {arr.dtype} with shape {arr.shape}"
            )
        yield i, arr.astype(float, copy=False)


def _pass_range(source, name):
    n, lo, hi, total = 0, math.inf, -math.inf, 0.0
    for i, arr in _chunks(source, name):
        if arr.size == 0:
            continue
        if not np.all(np.isfinite(arr)):
            raise ValueError(f"{name}: chunk {i} contains NaN or infinite values")
        n += arr.size
        lo, hi = min(lo, float(arr.min())), max(hi, float(arr.max()))
        total += float(np.sum(arr))
    if n < 2 or not hi > lo:
        raise ValueError(f"{name} needs at least two distinct values, got n={n}")
    if not math.isfinite(hi - lo) or max(abs(lo), abs(hi)) > 1e150:
        raise ValueError(f"{name} spans {lo:.3g} to {hi:.3g}; rescale the outputs")
    return n, lo, hi, total


def _pass_scale(source, name, n, total):
    stride = n // SCALE_SAMPLE if n > SCALE_SAMPLE else 1
    picked, start, again = [], 0, 0.0
    for _, arr in _chunks(source, name):
        first = (-start) % stride
        picked.append(arr[first::stride].copy())  # a copy: a view would keep the whole chunk alive
        start += arr.size
        again += float(np.sum(arr)) if arr.size else 0.0
    _same_pass(name, n, start, other=again != total)
    return robust_scale(np.concatenate(picked))


def _same_pass(name, n, seen, other=False):
    """A later pass must read what the first one did: the source is read three times.

    Equal counts and an equal sum of the values (added chunk by chunk in the same order, so
    equal to the bit for the same values) are the check.
    """
    if seen != n or other:
        what = f"{seen:,} values where the first pass read {n:,}" if seen != n else "other values"
        raise ValueError(
            f"{name}: the passes over the source disagree (a later pass yielded {what}); a callable "
            "source must yield the same values on every call, e.g. a sampler seeded inside the callable"
        )


def fit_densities_chunked(
    samples_p,
    samples_q,
    *,
    bandwidth=None,
    spacing: float = NODES_PER_BANDWIDTH,
    pad: float = PAD_BANDWIDTHS,
    max_points: int = MAX_NODES,
) -> DensityFit:
    r"""The default KDE fit of two continuous samples read in chunks (three passes each).

    Parameters
    ----------
    samples_p, samples_q : callable or ndarray
        A callable returning a fresh iterable of 1-D chunks on every call (it is
        called three times and must yield the same values each time, e.g. a
        sampler re-seeded inside), or a 1-D array (``numpy.memmap`` included),
        read :func:`array_chunks`-wise.
    bandwidth : float, optional
        KDE bandwidth; default: the rule of :func:`renyi.audit.bandwidth.default_bandwidth`.
    spacing, pad, max_points
        As for :func:`renyi.audit.density.kde_on_grid`.

    Returns
    -------
    DensityFit
        For :func:`renyi.audit.bounds_from_fit`.

    Notes
    -----
    Peak memory is the grid (a few arrays of at most ``max_points`` floats) plus
    one chunk and its temporaries, independent of :math:`n`.

    Examples
    --------
    >>> import numpy as np
    >>> from renyi.audit import bounds_from_fit
    >>> def sampler(mean, seed, n=400_000, chunk=100_000):
    ...     def chunks():
    ...         rng = np.random.default_rng(seed)
    ...         for _ in range(n // chunk):
    ...             yield rng.normal(mean, 5, chunk)
    ...     return chunks
    >>> fit = fit_densities_chunked(sampler(1, 1), sampler(0, 2))
    >>> bound = bounds_from_fit(fit, 2)
    >>> 0.03 < bound.lower < 0.04    # epsilon(2) = 0.04
    True
    """
    src_p, src_q = _source(samples_p, "samples_p"), _source(samples_q, "samples_q")
    n_p, lo_p, hi_p, sum_p = _pass_range(src_p, "samples_p")
    n_q, lo_q, hi_q, sum_q = _pass_range(src_q, "samples_q")
    scale = 0.5 * (_pass_scale(src_p, "samples_p", n_p, sum_p) + _pass_scale(src_q, "samples_q", n_q, sum_q))
    h = bandwidth_from_scale(scale, min(n_p, n_q)) if bandwidth is None else as_positive_scalar(bandwidth, "bandwidth")
    dx = h / as_positive_scalar(spacing, "spacing")
    lo = min(lo_p, lo_q) - pad * h
    hi = max(hi_p, hi_q) + pad * h
    size = int(math.ceil((hi - lo) / dx)) + 1
    if size > max_points:
        raise ValueError(
            f"the KDE grid would need {size:,} points (data range {hi - lo:.4g} at bandwidth "
            f"{h:.4g}); pass a larger bandwidth, clip extreme outliers, or raise max_points"
        )
    counts = np.zeros((2, size))
    passes = ((src_p, "samples_p", n_p, lo_p, hi_p, sum_p), (src_q, "samples_q", n_q, lo_q, hi_q, sum_q))
    for row, (src, name, n, first, last, total) in enumerate(passes):
        seen, again = 0, 0.0
        for _, arr in _chunks(src, name):
            seen += arr.size
            if arr.size:
                # checked before binning: a value off the grid would not fit the counts
                _same_pass(name, n, n, other=arr.min() < first or arr.max() > last)
                again += float(np.sum(arr))
            for start in range(0, arr.size, BIN_CHUNK * 16):
                counts[row] += linear_bin(arr[start : start + BIN_CHUNK * 16], lo, dx, size)
        _same_pass(name, n, seen, other=again != total)
        counts[row] /= n
    p, q = smooth_counts(counts, dx, h)
    return DensityFit(p, q, dx, n_p, n_q, False, size, float(h), float(scale))
