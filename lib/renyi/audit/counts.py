r"""Counts of a black box's outputs that add up across chunks, processes and machines.

:class:`GridCounts` linearly bins real outputs onto the nodes :math:`l\Delta` of a spacing fixed
in advance, anchored at 0, so that counts from anywhere add by aligned index with no range pass;
:class:`OutcomeCounts` counts discrete outcomes, and :class:`RowMoments` sums vector outputs
and their projections (for the projection's diagnostics).  All need numpy only, so that a worker process
that draws and counts starts in a fraction of a second (:mod:`renyi.audit.tasks`);
:mod:`renyi.audit.mergeable` turns merged counts into a fit.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

__all__ = [
    "GridCounts",
    "VectorGridCounts",
    "OutcomeCounts",
    "RowMoments",
    "MAX_NODES",
    "NODES_PER_BANDWIDTH",
    "PAD_BANDWIDTHS",
    "TAIL_SCALE",
    "grid_coordinates",
]

#: The grid of every one-dimensional fit (in memory, streamed or merged from tasks), and the
#: node budget of every grid: nodes per bandwidth (the spacing is h / 8, where linear binning's
#: bandwidth error is about 1e-5, ``tests/test_density.py``) ...
NODES_PER_BANDWIDTH = 8.0
#: ... bandwidths of padding beyond the outputs on each side (the kernel's mass outside is
#: below 1e-15) ...
PAD_BANDWIDTHS = 8.0
#: ... and the most nodes a grid may hold (32 MiB of float64 per sample).
MAX_NODES = 1 << 22
#: Whitened coordinates are compressed beyond about this many standard deviations (asinh).
TAIL_SCALE = 3.0


def grid_coordinates(outputs, centre, inverse_factor) -> np.ndarray:
    r"""Rows of outputs in a :math:`d`-dimensional grid's coordinates: whitened, tails compressed.

    :math:`z=(x-m)\,L^{-\top}`, then :math:`c\,\operatorname{asinh}(z/c)` per coordinate
    (:data:`TAIL_SCALE` :math:`c`): both invertible, so no Rényi divergence changes
    (:mod:`renyi.audit.multivariate_kde`).

    Parameters
    ----------
    outputs : array_like, shape (m, d)
    centre : ndarray, shape (d,)
    inverse_factor : ndarray, shape (d, d)

    Returns
    -------
    ndarray, shape (m, d)
    """
    white = (np.asarray(outputs, dtype=float) - centre) @ inverse_factor
    return TAIL_SCALE * np.arcsinh(white / TAIL_SCALE)


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
class VectorGridCounts:
    """Linear-binning counts of 2- or 3-dimensional points on the nodes ``(offset + l) * dx``.

    The analogue of :class:`GridCounts` per axis: each point splits unit weight between the
    :math:`2^d` corners of its cell, and counts from anywhere add by aligned index.

    Attributes
    ----------
    dx : ndarray, shape (d,)
        The node spacing per axis, fixed before any point is binned.
    offset : ndarray of int or None
        Index of the first node held, per axis.
    counts : ndarray or None
        Counts per node, one array axis per coordinate.
    n : int
        Points binned.
    """

    dx: np.ndarray
    offset: np.ndarray | None = None
    counts: np.ndarray | None = None
    n: int = 0

    @classmethod
    def of(cls, points, dx, *, name: str = "outputs") -> VectorGridCounts:
        """The counts of one chunk of points (in the grid's coordinates).

        Parameters
        ----------
        points : array_like, shape (m, d)
        dx : array_like, shape (d,)
        name : str, default "outputs"
            How errors name the chunk.

        Returns
        -------
        VectorGridCounts
        """
        x, dx = np.asarray(points, dtype=float), np.asarray(dx, dtype=float)
        if x.shape[0] == 0:
            return cls(dx)
        if not np.all(np.isfinite(x)):
            raise ValueError(f"{name} contain NaN or infinite values")
        u = x / dx
        cell = np.floor(u)
        first = cell.min(axis=0).astype(np.int64)
        shape = tuple(int(k) for k in cell.max(axis=0).astype(np.int64) - first + 2)
        if math.prod(shape) > MAX_NODES:
            raise ValueError(f"{name} span more than {MAX_NODES:,} grid nodes: clip extreme outliers")
        share = u - cell  # the upper corner's share, per axis
        index = cell.astype(np.int64) - first
        counts = np.zeros(math.prod(shape))
        for corner in np.ndindex(*(2,) * x.shape[1]):
            flat = np.ravel_multi_index(tuple((index + corner).T), shape)
            weight = np.prod(np.where(np.asarray(corner, bool), share, 1.0 - share), axis=1)
            counts += np.bincount(flat, weights=weight, minlength=counts.size)
        return cls(dx, first, counts.reshape(shape), int(x.shape[0]))

    def merge(self, other: VectorGridCounts) -> VectorGridCounts:
        """Add ``other``'s counts (same spacing) to these, by aligned node index; returns self.

        Parameters
        ----------
        other : VectorGridCounts

        Returns
        -------
        VectorGridCounts
        """
        if other.dx.shape != self.dx.shape or np.any(other.dx != self.dx):
            raise ValueError(f"cannot merge counts on spacing {other.dx!r} into counts on {self.dx!r}")
        if other.counts is None:
            return self
        if self.counts is None:
            self.offset, self.counts, self.n = other.offset.copy(), other.counts.copy(), other.n
            return self
        start = np.minimum(self.offset, other.offset)
        stop = np.maximum(self.offset + self.counts.shape, other.offset + other.counts.shape)
        if math.prod(int(k) for k in stop - start) > MAX_NODES:
            raise ValueError(f"the merged outputs need more than {MAX_NODES:,} grid nodes; clip extreme outliers")
        merged = np.zeros(tuple(int(k) for k in stop - start))
        for part in (self, other):
            place = tuple(slice(int(a), int(a) + k) for a, k in zip(part.offset - start, part.counts.shape))
            merged[place] += part.counts
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


@dataclass
class RowMoments:
    """Running sums of vector outputs and of their projections, for the projection's diagnostics.

    Attributes
    ----------
    n : int
        Rows summed.
    rows : ndarray or None
        The sum of the rows, shape ``(d,)``.
    squared_norms : float
        The sum of the rows' squared norms.
    projected : float
        The sum of the projected values.
    projected_squares : float
        The sum of their squares.
    """

    n: int = 0
    rows: np.ndarray | None = None
    squared_norms: float = 0.0
    projected: float = 0.0
    projected_squares: float = 0.0

    @classmethod
    def of(cls, rows: np.ndarray, projected: np.ndarray) -> RowMoments:
        """The sums of one chunk of rows and of their projections.

        Parameters
        ----------
        rows : ndarray, shape (m, d)
        projected : ndarray, shape (m,)

        Returns
        -------
        RowMoments
        """
        rows = np.asarray(rows, dtype=float)
        return cls(
            int(rows.shape[0]),
            rows.sum(axis=0),
            float(np.einsum("ij,ij->", rows, rows)),
            float(projected.sum()),
            float(projected @ projected),
        )

    def merge(self, other: RowMoments) -> RowMoments:
        """Add ``other``'s sums to these; returns self.

        Parameters
        ----------
        other : RowMoments

        Returns
        -------
        RowMoments
        """
        if other.n == 0:
            return self
        self.rows = other.rows.copy() if self.rows is None else self.rows + other.rows
        self.n += other.n
        self.squared_norms += other.squared_norms
        self.projected += other.projected
        self.projected_squares += other.projected_squares
        return self
