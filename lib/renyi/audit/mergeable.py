r"""Mergeable sufficient statistics of a sample: the fit from counts drawn anywhere, each output once.

A black box that cannot be replayed (most real ones draw from the operating system's
generator) must be drawn from **once**, so the three passes of
:func:`~renyi.audit.streaming.fit_densities_chunked` are not available.  Here the grid is fixed
before the bulk of the sample is drawn:

1. a **pilot** of each sample (drawn first, and counted in the sample) gives the robust scale
   :math:`\hat s`, hence the default bandwidth :math:`h=1.06\,\hat s\,n^{-0.35}` for the *full*
   sizes, and the spacing :math:`\Delta=h/8`;
2. every chunk is linearly binned onto the nodes :math:`l\Delta` of that spacing, anchored at 0
   (:class:`GridCounts`), so counts from different chunks, processes and machines add by
   aligned index, with no range pass;
3. :func:`fit_from_counts` pads the merged range by eight bandwidths and smooths it exactly as
   :func:`~renyi.audit.density.kde_on_grid` does.

Discrete outputs are counted per outcome (:class:`OutcomeCounts`) and merged by outcome.

What the pilot changes.  The in-memory fit takes :math:`\hat s` from an evenly strided
subsample of at most :math:`2^{18}` of the *whole* sample; here it comes from the pilot (of the
same default size), a random subsample of the same law, so :math:`h` differs by the sampling
error of a robust scale from :math:`2^{18}` values (a relative :math:`10^{-3}` for Gaussian
outputs).  The grid is anchored at 0 instead of the sample's minimum.  Given :math:`h` and the
grid, the fit equals the in-memory linear-binning fit on that grid up to the summation order
of the counts; ``tests/test_parallel_audit.py`` checks both, and the coverage of the bound.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from .bandwidth import robust_scale
from .bounds import DensityFit
from .density import smooth_counts
from .frequencies import DiscreteEstimate

__all__ = ["GridCounts", "OutcomeCounts", "pilot_bandwidth", "fit_from_counts", "fit_from_outcomes", "PILOT_SIZE"]

#: Pilot outputs per sample: the size of the in-memory fit's strided subsample.
PILOT_SIZE = 1 << 18
#: Nodes per bandwidth, as in :func:`~renyi.audit.density.kde_on_grid`.
SPACING = 8.0
#: Bandwidths of padding on each side of the merged range.
PAD = 8.0
#: Most nodes a merged grid may hold (as :func:`~renyi.audit.density.kde_on_grid`'s ``max_points``).
MAX_NODES = 1 << 22


@dataclass
class GridCounts:
    """Linear-binning counts of continuous outputs on the nodes ``(offset + l) * dx``.

    Attributes
    ----------
    dx : float
        The node spacing, fixed before any output is binned.
    offset : int
        Index of the first node held.
    counts : ndarray
        Counts per node from ``offset`` on (fractions: linear binning splits each output
        between its two nodes).
    n : int
        Outputs binned.
    """

    dx: float
    offset: int = 0
    counts: np.ndarray | None = None
    n: int = 0

    @classmethod
    def of(cls, outputs, dx: float, *, name: str = "outputs") -> GridCounts:
        """The counts of one chunk of outputs.

        Parameters
        ----------
        outputs : array_like, 1-D
            Finite real outputs.
        dx : float
            The node spacing.
        name : str, default "outputs"
            How errors name the chunk.

        Returns
        -------
        GridCounts
        """
        x = np.asarray(outputs, dtype=float).reshape(-1)
        if x.size == 0:
            return cls(dx)
        if not np.all(np.isfinite(x)):
            raise ValueError(f"{name} contain NaN or infinite values")
        u = x / dx
        first, last = math.floor(float(u.min())), math.floor(float(u.max()))
        if last - first + 2 > MAX_NODES:
            raise ValueError(
                f"{name} span {float(x.min()):.4g} to {float(x.max()):.4g}: more than {MAX_NODES:,} nodes at "
                f"spacing {dx:.4g}; clip extreme outliers or pass a larger bandwidth"
            )
        idx = np.floor(u).astype(np.int64)
        share = u - idx  # the right-hand node's share
        idx -= first
        size = last - first + 2
        right = np.bincount(idx, weights=share, minlength=size)
        counts = np.bincount(idx, minlength=size).astype(float) - right
        counts[1:] += right[:-1]
        return cls(dx, first, counts, int(x.size))

    def merge(self, other: GridCounts) -> GridCounts:
        """Add ``other``'s counts (same spacing) to these, by aligned node index; returns self.

        Parameters
        ----------
        other : GridCounts

        Returns
        -------
        GridCounts
        """
        if other.dx != self.dx:
            raise ValueError(f"cannot merge counts on spacing {other.dx!r} into counts on {self.dx!r}")
        if other.counts is None:
            return self
        if self.counts is None:
            self.offset, self.counts, self.n = other.offset, other.counts.copy(), other.n
            return self
        start = min(self.offset, other.offset)
        stop = max(self.offset + self.counts.size, other.offset + other.counts.size)
        if stop - start > MAX_NODES:
            raise ValueError(f"the merged outputs need more than {MAX_NODES:,} nodes; clip extreme outliers")
        merged = np.zeros(stop - start)
        merged[self.offset - start : self.offset - start + self.counts.size] += self.counts
        merged[other.offset - start : other.offset - start + other.counts.size] += other.counts
        self.offset, self.counts, self.n = start, merged, self.n + other.n
        return self


@dataclass
class OutcomeCounts:
    """Counts per outcome of discrete outputs (scalars, or rows such as bit vectors).

    Attributes
    ----------
    counts : dict
        Outcome to count.
    n : int
        Outputs counted.
    """

    counts: dict
    n: int = 0

    @classmethod
    def of(cls, outputs, *, name: str = "outputs") -> OutcomeCounts:
        """The counts of one chunk of outcomes.

        Parameters
        ----------
        outputs : array_like, 1-D or 2-D
            Outcomes, or rows compared exactly (e.g. bit vectors).
        name : str, default "outputs"

        Returns
        -------
        OutcomeCounts
        """
        x = np.asarray(outputs)
        if x.ndim == 2 and x.shape[1] == 1:
            x = x[:, 0]
        if x.ndim not in (1, 2):
            raise ValueError(f"{name}: discrete outputs must be scalars or rows, got shape {x.shape}")
        if x.dtype.kind == "f" and not np.all(np.isfinite(x)):
            raise ValueError(f"{name} contain NaN or infinite values")
        values, counts = np.unique(x, axis=0, return_counts=True)
        keys = [tuple(row) for row in values.tolist()] if x.ndim == 2 else values.tolist()
        return cls(dict(zip(keys, counts.tolist())), int(x.shape[0]))

    def merge(self, other: OutcomeCounts) -> OutcomeCounts:
        """Add ``other``'s counts to these; returns self.

        Parameters
        ----------
        other : OutcomeCounts

        Returns
        -------
        OutcomeCounts
        """
        for value, count in other.counts.items():
            self.counts[value] = self.counts.get(value, 0) + count
        self.n += other.n
        return self


def pilot_bandwidth(pilot_p, pilot_q, n_p: int, n_q: int) -> tuple[float, float]:
    r"""The default bandwidth for samples of sizes ``n_p, n_q``, from pilots of them.

    Parameters
    ----------
    pilot_p, pilot_q : array_like, 1-D
        The first outputs of each sample.
    n_p, n_q : int
        The full sample sizes.

    Returns
    -------
    bandwidth, scale : float
        :math:`h=1.06\,\hat s\,\min(n_p,n_q)^{-0.35}`, with :math:`\hat s` the mean of the
        pilots' robust scales (as :func:`~renyi.audit.bandwidth.default_bandwidth` does).
    """
    scale = 0.5 * (robust_scale(np.asarray(pilot_p, dtype=float)) + robust_scale(np.asarray(pilot_q, dtype=float)))
    return 1.06 * scale * min(n_p, n_q) ** (-0.35), float(scale)


def fit_from_counts(counts_p: GridCounts, counts_q: GridCounts, bandwidth: float, scale: float) -> DensityFit:
    """The KDE fit of two samples from their merged counts.

    Parameters
    ----------
    counts_p, counts_q : GridCounts
        Merged counts of each whole sample, on one spacing.
    bandwidth : float
        The KDE's :math:`h` (the spacing is ``bandwidth / 8``).
    scale : float
        The robust scale behind it (recorded in the fit).

    Returns
    -------
    DensityFit
        For :func:`~renyi.audit.bounds_from_fit`.
    """
    if counts_p.dx != counts_q.dx or counts_p.counts is None or counts_q.counts is None:
        raise ValueError("both samples need counts on one spacing")
    dx, pad = counts_p.dx, int(math.ceil(PAD * bandwidth / counts_p.dx))
    start = min(counts_p.offset, counts_q.offset) - pad
    stop = max(counts_p.offset + counts_p.counts.size, counts_q.offset + counts_q.counts.size) + pad
    if stop - start > MAX_NODES:
        raise ValueError(f"the KDE grid would need {stop - start:,} nodes; clip extreme outliers")
    dense = np.zeros((2, stop - start))
    for row, c in enumerate((counts_p, counts_q)):
        dense[row, c.offset - start : c.offset - start + c.counts.size] = c.counts / c.n
    p, q = smooth_counts(dense, dx, bandwidth)
    return DensityFit(p, q, dx, counts_p.n, counts_q.n, False, stop - start, float(bandwidth), float(scale))


def fit_from_outcomes(counts_p: OutcomeCounts, counts_q: OutcomeCounts) -> DensityFit:
    """The relative-frequency fit (eq. 9) of two samples from their merged outcome counts.

    Parameters
    ----------
    counts_p, counts_q : OutcomeCounts

    Returns
    -------
    DensityFit
    """
    values = sorted(set(counts_p.counts) | set(counts_q.counts))
    p = np.array([counts_p.counts.get(v, 0) for v in values], dtype=float) / counts_p.n
    q = np.array([counts_q.counts.get(v, 0) for v in values], dtype=float) / counts_q.n
    est = DiscreteEstimate(p, q, np.array(values))  # rows come back as tuples: an array of rows
    return DensityFit(est.p, est.q, est.dx, counts_p.n, counts_q.n, True, est.size, None, None)
