r"""Relative frequencies of two samples of discrete outputs: the estimator (9) of Kutta, Askin and Dunsche (2024).

Outputs are integers or rows of an integer array; both samples are counted on the union
of the outcomes observed in either.  Taught in the chapter *Density estimation and
smoothness* (``book/part1``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from .._validation import as_samples

__all__ = ["DiscreteEstimate", "relative_frequencies", "encode_outcomes"]


@dataclass(frozen=True)
class DiscreteEstimate:
    """Relative frequencies of two samples on the union of observed outcomes.

    Attributes
    ----------
    p, q : ndarray
        Relative frequencies (eq. 9 of Kutta et al.); each sums to 1.
    outcomes : ndarray
        The outcome of each cell (values, or rows for vector outputs).
    """

    p: np.ndarray
    q: np.ndarray
    outcomes: np.ndarray

    @property
    def dx(self) -> float:
        """1: every cell has unit weight.

        So ``sum(p) * dx == 1`` as for a :class:`~renyi.audit.density.GridEstimate`, and the
        integrals of the delta method are the same code for both.
        """
        return 1.0

    @property
    def size(self) -> int:
        """The number of cells (outcomes in the union of both supports)."""
        return int(self.p.size)


#: Row codes up to this size index the counts directly (no sort): 10-bit RR vectors have 1024.
_DIRECT_CODES = 1 << 20


def encode_outcomes(a: np.ndarray, b: np.ndarray):
    r"""Integer codes of 1-D values or 2-D rows, shared between the two samples.

    Codes are ordered like the outcomes (lexicographically from the last column for
    rows), so the estimates do not depend on which encoding is used.  Integer rows whose
    columns' ranges multiply to less than :math:`2^{62}` get a mixed-radix code in
    :math:`O(n\,d)`, without the :math:`O(n\log n)` sort of ``numpy.unique(axis=0)``.

    Parameters
    ----------
    a, b : ndarray
        Validated samples of the same kind: 1-D values, or 2-D rows of equal width.

    Returns
    -------
    codes_p, codes_q : ndarray of int
        Non-negative codes, equal exactly where the outcomes are equal.
    decode : callable
        ``decode(codes)`` gives the outcomes (values or rows) of sorted distinct codes.
    """
    if a.ndim == 1:
        both = np.concatenate([a, b])
        if np.issubdtype(both.dtype, np.integer) and both.size:
            lo, hi = int(both.min()), int(both.max())
            # int64 offsets only when every value fits int64 (uint64 may not)
            if hi - lo < 50_000_000 and -(2**63) <= lo and hi < 2**63:
                return a.astype(np.int64) - lo, b.astype(np.int64) - lo, lambda codes: codes + lo
        values, inverse = np.unique(both, return_inverse=True)
        return inverse[: a.size], inverse[a.size :], lambda codes: values[codes]
    # Rows: mixed-radix code of per-column compact values when it fits in int64.
    if np.issubdtype(a.dtype, np.integer) and np.issubdtype(b.dtype, np.integer):
        # Spans in Python integers: int64 arithmetic would wrap for huge or uint64 values.
        lows = [min(int(u), int(v)) for u, v in zip(a.min(axis=0), b.min(axis=0))]
        highs = [max(int(u), int(v)) for u, v in zip(a.max(axis=0), b.max(axis=0))]
        spans = [hi - lo + 1 for lo, hi in zip(lows, highs)]
        fits = all(-(2**63) <= lo and hi < 2**63 for lo, hi in zip(lows, highs))
        if fits and sum(math.log2(span) for span in spans) < 62:
            lo = np.array(lows, dtype=np.int64)
            radix = np.array(spans, dtype=np.int64)
            weights = np.concatenate([[1], np.cumprod(radix[:-1])]).astype(np.int64)

            def codes_of(x):
                codes = np.zeros(x.shape[0], dtype=np.int64)
                for j in range(x.shape[1]):  # one column at a time: no int64 copy of the matrix
                    codes += (x[:, j].astype(np.int64) - lo[j]) * weights[j]
                return codes

            def decode(codes):
                return (codes[:, None] // weights[None, :]) % radix[None, :] + lo[None, :]

            codes_p, codes_q = codes_of(a), codes_of(b)
            if int(np.prod(spans, dtype=object)) <= _DIRECT_CODES:
                return codes_p, codes_q, decode
            values, inverse = np.unique(np.concatenate([codes_p, codes_q]), return_inverse=True)
            return inverse[: a.shape[0]], inverse[a.shape[0] :], lambda idx: decode(values[idx])
    both = np.concatenate([a, b], axis=0)
    values, inverse = np.unique(both, axis=0, return_inverse=True)
    inverse = inverse.ravel()
    return inverse[: a.shape[0]], inverse[a.shape[0] :], lambda idx: values[idx]


def relative_frequencies(samples_p, samples_q) -> DiscreteEstimate:
    r"""Relative-frequency estimates :math:`\hat p,\hat q` (eq. 9 of Kutta et al.).

    .. math::

        \hat f(t)=\frac{|\{i: X_i=t\}|}{n}.

    Parameters
    ----------
    samples_p, samples_q : array_like
        Discrete outputs: a 1-D array of outcomes, or a 2-D array whose rows
        are outcomes (e.g. bit vectors).  Outcomes are compared exactly.

    Returns
    -------
    DiscreteEstimate
        Frequencies on the union of outcomes observed in either sample.
    """
    a, b = as_samples(samples_p, "samples_p"), as_samples(samples_q, "samples_q")
    for name, arr in (("samples_p", a), ("samples_q", b)):
        if arr.ndim not in (1, 2) or arr.shape[0] == 0:
            raise ValueError(f"{name} must be a non-empty 1-D array or 2-D array of rows, got shape {arr.shape}")
    if a.ndim != b.ndim or (a.ndim == 2 and a.shape[1] != b.shape[1]):
        raise ValueError(f"samples_p and samples_q must have outcomes of the same shape, got {a.shape} and {b.shape}")
    codes_p, codes_q, decode = encode_outcomes(a, b)
    size = int(max(codes_p.max(), codes_q.max())) + 1
    counts_p = np.bincount(codes_p, minlength=size)
    counts_q = np.bincount(codes_q, minlength=size)
    seen = (counts_p > 0) | (counts_q > 0)
    values = decode(np.nonzero(seen)[0])
    return DiscreteEstimate(counts_p[seen] / a.shape[0], counts_q[seen] / b.shape[0], values)
