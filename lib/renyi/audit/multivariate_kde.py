r"""Vector outputs in two or three dimensions: the estimator on a :math:`d`-dimensional grid.

No projection is needed when :math:`d\le3`: the Gaussian-kernel estimator (10) of Kutta et al.
is defined on :math:`\mathbb R^d`, and the plug-in, the floor (13) and the standard error (18)
are sums over grid cells times the cell's volume, so they run unchanged on the flattened grid.
This route wins where no one-dimensional projection is lossless, for example independent
Laplace noise shifted in two coordinates.

The steps, each chosen for a reason:

1. **Whitening.**  Both samples are mapped by the same invertible affine map
   :math:`z=L^{-1}(x-m)`, with :math:`LL^\top` the pooled within-sample covariance.  An
   invertible map leaves every Rényi divergence unchanged, so the map may be computed from the
   outputs themselves; it makes one bandwidth rule fit every axis, whatever the units or the
   correlation of the coordinates.  Each whitened coordinate then passes through
   :math:`z\mapsto c\,\operatorname{asinh}(z/c)` (:data:`TAIL_SCALE` :math:`c`), the identity to
   within a few per cent inside :math:`|z|<c/2` and logarithmic beyond: also invertible, so the
   divergence is still unchanged, and heavy tails (Laplace noise at :math:`n=10^6` reaches ten
   standard deviations) no longer stretch the grid beyond its node budget.
2. **Bandwidths at Scott's rate.**  :math:`h_k=\hat s_k\,n^{-1/(d+4)}` per whitened axis
   (:math:`\hat s_k` the robust scale of :func:`~renyi.audit.bandwidth.robust_scale`).  The
   one-dimensional rate :math:`n^{-0.35}` leaves too few outputs per kernel in the plane: the
   floor then sits at a sizeable fraction of the density's peak and the bound collapses.
3. **Linear binning and separable smoothing.**  Each output splits unit weight between the
   :math:`2^d` corners of its grid cell; the counts are convolved axis by axis with the sampled
   Gaussian whose variance :math:`h_k^2-\Delta_k^2/6` leaves out what binning adds (as in
   :func:`~renyi.audit.density.kde_on_grid`).  The convolution is direct, so there is no FFT
   round-off floor.
4. **Only the cells that matter.**  Cells where both estimates are below
   :data:`~renyi.audit.density.FFT_NOISE` of their peak are dropped before the plug-in, as the
   one-dimensional estimator reports zero there; wherever :math:`\hat p\le\tau` they add at most
   their own mass of :math:`\hat p` to :math:`F`.

The kernel's roughness is :math:`R(K_H)=\prod_k(2\sqrt\pi h_k)^{-1}`: it sets the default floor
:math:`\tau=R(K_H)/(nr^2)` (:func:`~renyi.audit.floor.default_floor` with ``kernel_factor``) and
the second-order bias correction.  Smoothing with a fixed kernel is itself a Markov kernel, so
the estimator's mean :math:`D_\lambda(p*K_H\|q*K_H)` is at most :math:`D_\lambda(p\|q)`: the
larger bandwidths cost tightness, not validity.

Cost: :math:`O(2^d n)` for the binning and :math:`O(N\sum_k h_k/\Delta_k)` for the smoothing on
:math:`N` grid nodes, at most :data:`~renyi.audit.counts.MAX_NODES`; the benchmark case ``--only-projection`` of
``benchmarks/run.py`` measures it.  Taught in the chapter *Vector-valued outputs*
(``book/part1``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy import ndimage

from .bandwidth import robust_scale, strided_subsample
from .counts import MAX_NODES, PAD_BANDWIDTHS, TAIL_SCALE, VectorGridCounts, grid_coordinates
from .density import BIN_CHUNK, FFT_NOISE, KERNEL_ROUGHNESS, DensityFit

__all__ = [
    "MAX_KDE_DIMENSION",
    "TAIL_SCALE",
    "GridKDE",
    "whitening_map",
    "scott_bandwidths",
    "fit_grid_kde",
    "pilot_grid",
    "fit_grid_from_counts",
]

#: The largest dimension estimated directly; beyond it the grid's memory grows out of reach.
MAX_KDE_DIMENSION = 3
# The node budget is counts.MAX_NODES.  In three dimensions at n = 10^6 it coarsens the
# spacing to between half a bandwidth and one (Laplace noise), where the bound agrees with a
# finer grid to four digits (``tests/test_multivariate_kde.py``).
#: Grid nodes per bandwidth along each axis, when the node budget allows it.
SPACING = 4.0
#: The coarsest spacing accepted, in nodes per bandwidth.  The binning-corrected kernel keeps
#: the bound within 1e-4 of a grid four times finer up to a spacing of one bandwidth
#: (``tests/test_multivariate_kde.py``); beyond it the correction has nothing left to take out.
MIN_SPACING = 1.0


@dataclass(frozen=True)
class GridKDE:
    r"""What :func:`fit_grid_kde` chose: the bandwidths and the grid, in the grid's coordinates.

    The grid's coordinates are the whitened outputs with their tails compressed
    (:meth:`transform`).

    Attributes
    ----------
    dimension : int
    bandwidths : ndarray
        :math:`h_k` per axis.
    spacing : ndarray
        :math:`\Delta_k` per axis.
    shape : tuple of int
        Nodes per axis.
    lower : ndarray
        The grid's first node.
    index : ndarray of int
        The flat (C-order) indices of the nodes kept for the plug-in (the module's step 4), in
        the order of ``DensityFit.p``.
    centre, inverse_factor : ndarray
        The whitening :math:`z=(x-m)\,L^{-\top}` (:func:`whitening_map`).
    """

    dimension: int
    bandwidths: np.ndarray
    spacing: np.ndarray
    shape: tuple
    lower: np.ndarray
    index: np.ndarray
    centre: np.ndarray
    inverse_factor: np.ndarray

    def transform(self, outputs) -> np.ndarray:
        """Outputs of shape (m, d) in the grid's coordinates: whitened, then tails compressed."""
        return grid_coordinates(outputs, self.centre, self.inverse_factor)

    def nodes(self) -> np.ndarray:
        """The kept nodes' coordinates in the grid's units (see :meth:`transform`), shape (kept, d)."""
        return self.lower + np.stack(np.unravel_index(self.index, self.shape), axis=1) * self.spacing

    @property
    def roughness(self) -> float:
        r""":math:`R(K_H)=\prod_k R(K)/h_k`, the kernel's :math:`\int K_H^2`."""
        return float(np.prod(KERNEL_ROUGHNESS / self.bandwidths))


def whitening_map(samples_p, samples_q):
    r"""The affine map :math:`z=(x-m)\,L^{-\top}` that whitens the pooled within-sample covariance.

    Parameters
    ----------
    samples_p, samples_q : ndarray, shape (n, d)

    Returns
    -------
    centre : ndarray, shape (d,)
    inverse_factor : ndarray, shape (d, d)
        :math:`L^{-\top}`, so that ``(x - centre) @ inverse_factor`` has identity covariance.

    Raises
    ------
    ValueError
        When the covariance is singular: the outputs lie on a hyperplane and have no density
        in :math:`\mathbb R^d`.
    """
    means = [s.mean(axis=0) for s in (samples_p, samples_q)]
    n = samples_p.shape[0] + samples_q.shape[0]
    scatter = sum((s - m).T @ (s - m) for s, m in zip((samples_p, samples_q), means)) / n
    try:
        factor = np.linalg.cholesky(scatter)
    except np.linalg.LinAlgError:
        factor = None
    if factor is None or np.linalg.cond(factor) > 1e6:
        raise ValueError(
            "the outputs' covariance is singular: they lie on a line or plane and have no density in "
            f"{samples_p.shape[1]} dimensions; drop the redundant coordinates or use a projection"
        )
    centre = 0.5 * (means[0] + means[1])
    return centre, np.linalg.inv(factor).T


def scott_bandwidths(white_p, white_q) -> np.ndarray:
    r"""Per-axis bandwidths :math:`h_k=\hat s_k\,n^{-1/(d+4)}` on whitened outputs (Scott's rate).

    :math:`\hat s_k` is the mean of the two samples' robust scales on axis :math:`k` and
    :math:`n` the smaller sample size.

    Parameters
    ----------
    white_p, white_q : ndarray, shape (d, n)
        Whitened outputs, one axis per row.

    Returns
    -------
    ndarray, shape (d,)
    """
    d, n = white_p.shape[0], min(white_p.shape[1], white_q.shape[1])
    scales = [0.5 * sum(robust_scale(strided_subsample(s[k])) for s in (white_p, white_q)) for k in range(d)]
    return np.asarray(scales) * n ** (-1.0 / (d + 4))


def _grid(white, bandwidths, max_nodes):
    """Lower corner, spacing and nodes per axis covering every output with a margin of ``PAD_BANDWIDTHS``."""
    lo = np.minimum(white[0].min(axis=1), white[1].min(axis=1)) - PAD_BANDWIDTHS * bandwidths
    hi = np.maximum(white[0].max(axis=1), white[1].max(axis=1)) + PAD_BANDWIDTHS * bandwidths
    spacing = bandwidths / SPACING
    shape = np.ceil((hi - lo) / spacing).astype(int) + 2
    nodes = float(np.prod(shape.astype(float)))
    if nodes > max_nodes:
        # coarsen every axis alike until the grid fits
        spacing = spacing * (nodes / max_nodes) ** (1.0 / bandwidths.size) * 1.001
        shape = np.ceil((hi - lo) / spacing).astype(int) + 2
    coarsest = float(np.max(spacing / bandwidths))
    if coarsest > 1.0 / MIN_SPACING:
        need = float(np.prod(np.ceil((hi - lo) / (bandwidths / SPACING)) + 2))
        raise ValueError(
            f"the {bandwidths.size}-D grid would need {need:,.0f} nodes ({need * 8 * 4 / 2**30:.1f} GiB) to "
            f"resolve the kernel over the outputs' range; at most {max_nodes:,} fit: extreme outliers "
            "stretch the range (clip them), or use a projection"
        )
    return lo, spacing, shape


def _binned(white, lo, spacing, shape):
    """Linear-binning weights of one sample (axes by rows) on the grid, summing to 1 (flat, C order)."""
    d, n = white.shape
    strides = np.cumprod((1,) + tuple(shape[::-1]))[:-1][::-1]
    counts = np.zeros(int(np.prod(shape)))
    for start in range(0, n, BIN_CHUNK):
        base = np.zeros(min(BIN_CHUNK, n - start), dtype=np.intp)
        shares = []  # per axis: the weights of the lower and the upper node
        for k in range(d):
            u = white[k, start : start + BIN_CHUNK] - lo[k]
            u *= 1.0 / spacing[k]
            idx = u.astype(np.intp)  # floor: the grid starts below the data
            u -= idx
            base += idx * strides[k]
            shares.append((1.0 - u, u))
        corners = list(np.ndindex(*(2,) * d))
        index = np.concatenate([base + int(np.dot(c, strides)) for c in corners])
        weight = np.concatenate([np.prod([shares[k][c[k]] for k in range(d)], axis=0) for c in corners])
        # one pass over the grid per chunk: the grid, not the chunk, is the large array
        counts += np.bincount(index, weights=weight, minlength=counts.size)
    return counts / n


def _smoothed(counts, shape, spacing, bandwidths):
    """Densities on the grid: the counts convolved with the binning-corrected Gaussian per axis."""
    dens = counts.reshape(shape)
    for axis, (delta, h) in enumerate(zip(spacing, bandwidths)):
        sd = math.sqrt(h * h - delta * delta / 6.0) / delta  # in nodes
        reach = int(math.ceil(PAD_BANDWIDTHS * sd))
        kernel = np.exp(-0.5 * (np.arange(-reach, reach + 1) / sd) ** 2)
        dens = ndimage.correlate1d(dens, kernel / kernel.sum(), axis=axis, mode="constant")
    dens = dens.ravel()
    dens *= 1.0 / float(np.prod(spacing))
    return dens


def fit_grid_kde(samples_p, samples_q, *, max_nodes: int = MAX_NODES) -> tuple[DensityFit, GridKDE]:
    r"""The Gaussian KDE of two samples of :math:`d\le3`-dimensional outputs on one grid.

    Parameters
    ----------
    samples_p, samples_q : ndarray, shape (n, d)
        Finite float outputs, :math:`2\le d\le` :data:`MAX_KDE_DIMENSION`.
    max_nodes : int, default MAX_NODES
        Grid nodes allowed; the spacing is coarsened to fit, down to ``MIN_SPACING`` (one) node
        per bandwidth.

    Returns
    -------
    fit : DensityFit
        The estimates on the kept nodes (flattened), ``dx`` the cell volume and
        ``kernel_factor`` :math:`R(K_H)`, all in the grid's coordinates (:meth:`GridKDE.transform`).
    grid : GridKDE

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> x, y = rng.normal(size=(20_000, 2)) + [1, 0], rng.normal(size=(20_000, 2))
    >>> fit, grid = fit_grid_kde(x, y)
    >>> round(float(fit.p.sum() * fit.dx), 6), grid.dimension
    (1.0, 2)
    """
    d = samples_p.shape[1]
    if not 2 <= d <= MAX_KDE_DIMENSION:
        raise ValueError(f"the grid KDE takes 2 or 3 dimensions, got {d}")
    for name, arr in (("samples_p", samples_p), ("samples_q", samples_q)):
        if arr.shape[0] < 2 * d + 2:
            raise ValueError(f"{name} has {arr.shape[0]} outputs: too few for a {d}-D density estimate")
        if not np.all(np.isfinite(arr)):
            raise ValueError(f"{name} contains NaN or infinite values")
    centre, inverse_factor = whitening_map(samples_p, samples_q)
    # axes by rows: every later pass reads one coordinate at a time
    white = [np.ascontiguousarray(inverse_factor.T @ (s - centre).T) for s in (samples_p, samples_q)]
    for w in white:  # an invertible map per coordinate: the divergence does not change
        w *= 1.0 / TAIL_SCALE
        np.arcsinh(w, out=w)
        w *= TAIL_SCALE
    bandwidths = scott_bandwidths(*white)
    lo, spacing, shape = _grid(white, bandwidths, max_nodes)
    dens = [_smoothed(_binned(w, lo, spacing, shape), shape, spacing, bandwidths) for w in white]
    layout = (bandwidths, spacing, tuple(int(k) for k in shape), lo, (centre, inverse_factor))
    fit, grid = _fit_on_grid(dens, layout, samples_p.shape[0], samples_q.shape[0])
    return fit, grid


def pilot_grid(pilot_p, pilot_q, sizes):
    r"""What the pilots fix for a grid estimate counted in tasks: the map, bandwidths and spacing.

    The whitening is the pilots' (:func:`whitening_map`), the bandwidths Scott's rate at the
    whole samples' size (the pilots' robust scales times :math:`n^{-1/(d+4)}`), and the
    spacing that resolves them over the pilots' range within a quarter of :data:`~renyi.audit.counts.MAX_NODES`
    (outputs beyond the pilots' range widen the merged grid).

    Parameters
    ----------
    pilot_p, pilot_q : ndarray, shape (m, d)
    sizes : tuple of int
        The whole samples' sizes :math:`(n_p, n_q)`.

    Returns
    -------
    bandwidths, spacing : ndarray, shape (d,)
    whitening : tuple
        ``(centre, inverse_factor)`` for :func:`~renyi.audit.counts.grid_coordinates`.
    """
    d = pilot_p.shape[1]
    if not 2 <= d <= MAX_KDE_DIMENSION:
        raise ValueError(f"projection='grid' estimates densities in 2 or 3 dimensions; the outputs have d = {d}")
    centre, inverse_factor = whitening_map(pilot_p, pilot_q)
    white = [np.ascontiguousarray(grid_coordinates(s, centre, inverse_factor).T) for s in (pilot_p, pilot_q)]
    m = min(pilot_p.shape[0], pilot_q.shape[0])
    bandwidths = scott_bandwidths(*white) * (m / min(sizes)) ** (1.0 / (d + 4))
    _, spacing, _ = _grid(white, bandwidths, MAX_NODES // 4)
    return bandwidths, spacing, (centre, inverse_factor)


def fit_grid_from_counts(counts_p: VectorGridCounts, counts_q: VectorGridCounts, bandwidths, whitening):
    """:func:`fit_grid_kde`'s fit from merged grid counts, the grid padded by ``PAD_BANDWIDTHS`` bandwidths.

    Parameters
    ----------
    counts_p, counts_q : renyi.audit.counts.VectorGridCounts
        Each sample's counts, on one spacing.
    bandwidths : ndarray, shape (d,)
    whitening : tuple
        ``(centre, inverse_factor)``, recorded in the :class:`GridKDE`.

    Returns
    -------
    fit : DensityFit
    grid : GridKDE
    """
    spacing = counts_p.dx
    pad = np.ceil(PAD_BANDWIDTHS * bandwidths / spacing).astype(np.int64) + 1
    start = np.minimum(counts_p.offset, counts_q.offset) - pad
    stop = np.maximum(counts_p.offset + counts_p.counts.shape, counts_q.offset + counts_q.counts.shape) + pad
    shape = tuple(int(k) for k in stop - start)
    if math.prod(shape) > MAX_NODES:
        raise ValueError(
            f"the outputs span {math.prod(shape):,} grid nodes, more than {MAX_NODES:,}: extreme outliers "
            "stretch the range (clip them), or use a projection"
        )
    dens = []
    for counts in (counts_p, counts_q):
        full = np.zeros(shape)
        place = tuple(slice(int(a), int(a) + k) for a, k in zip(counts.offset - start, counts.counts.shape))
        full[place] = counts.counts / counts.n
        dens.append(_smoothed(full.ravel(), shape, spacing, bandwidths))
    return _fit_on_grid(dens, (bandwidths, spacing, shape, start * spacing, whitening), counts_p.n, counts_q.n)


def _fit_on_grid(dens, layout, n_p, n_q):
    """The fit and its :class:`GridKDE` from both densities on the whole grid.

    The nodes that matter are kept (the module's step 4); ``layout`` is the bandwidths, the
    spacing, the shape, the first node and the whitening.
    """
    bandwidths, spacing, shape, lower, (centre, inverse_factor) = layout
    keep = np.flatnonzero((dens[0] >= FFT_NOISE * dens[0].max()) | (dens[1] >= FFT_NOISE * dens[1].max()))
    grid = GridKDE(spacing.size, bandwidths, spacing, shape, lower, keep, centre, inverse_factor)
    fit = DensityFit(
        dens[0][keep], dens[1][keep], float(np.prod(spacing)), n_p, n_q, False, int(keep.size), None, None,
        kernel_factor=grid.roughness,
    )  # fmt: skip
    return fit, grid
