r"""Mergeable sufficient statistics of a sample: the fit from counts drawn anywhere, each output once.

A black box that cannot be replayed (most real ones draw from the operating system's
generator) must be drawn from **once**, so the three passes of
:func:`~renyi.audit.streaming.fit_densities_chunked` are not available.  Here the grid is fixed
before the bulk of the sample is drawn:

1. a **pilot** of each sample (drawn first, and counted in the sample) gives the robust scale
   :math:`\hat s`, hence the default bandwidth :math:`h=1.06\,\hat s\,n^{-0.35}` for the *full*
   sizes, and the spacing :math:`\Delta=h/8`;
2. every chunk is linearly binned onto the nodes :math:`l\Delta` of that spacing, anchored at 0
   (:class:`~renyi.audit.counts.GridCounts`), so counts from different chunks, processes and machines add by
   aligned index, with no range pass;
3. :func:`fit_from_counts` pads the merged range by eight bandwidths and smooths it exactly as
   :func:`~renyi.audit.density.kde_on_grid` does.

Discrete outputs are counted per outcome (:class:`~renyi.audit.counts.OutcomeCounts`) and merged by outcome.

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

import numpy as np

from .bandwidth import bandwidth_from_scale, robust_scale
from .counts import MAX_NODES, PAD_BANDWIDTHS, GridCounts, OutcomeCounts
from .density import DensityFit, smooth_counts
from .frequencies import DiscreteEstimate

__all__ = ["pilot_bandwidth", "fit_from_counts", "fit_from_outcomes"]


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
        :func:`~renyi.audit.bandwidth.bandwidth_from_scale` at :math:`\min(n_p,n_q)`, with
        :math:`\hat s` the mean of the pilots' robust scales (as :func:`~renyi.audit.bandwidth.default_bandwidth` does).
    """
    scale = 0.5 * (robust_scale(np.asarray(pilot_p, dtype=float)) + robust_scale(np.asarray(pilot_q, dtype=float)))
    return bandwidth_from_scale(scale, min(n_p, n_q)), float(scale)


def fit_from_counts(counts_p: GridCounts, counts_q: GridCounts, bandwidth: float, scale: float) -> DensityFit:
    """The KDE fit of two samples from their merged counts.

    Parameters
    ----------
    counts_p, counts_q : renyi.audit.counts.GridCounts
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
    dx, pad = counts_p.dx, int(math.ceil(PAD_BANDWIDTHS * bandwidth / counts_p.dx))
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
    counts_p, counts_q : renyi.audit.counts.OutcomeCounts

    Returns
    -------
    DensityFit
    """
    values = sorted(set(counts_p.counts) | set(counts_q.counts))
    p = np.array([counts_p.counts.get(v, 0) for v in values], dtype=float) / counts_p.n
    q = np.array([counts_q.counts.get(v, 0) for v in values], dtype=float) / counts_q.n
    est = DiscreteEstimate(p, q, np.array(values))  # rows come back as tuples: an array of rows
    return DensityFit(est.p, est.q, est.dx, counts_p.n, counts_q.n, True, est.size, None, None)
