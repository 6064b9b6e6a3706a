r"""Vector-valued outputs: a bound through a one-dimensional projection learned on held-out outputs.

By the data-processing inequality, :math:`D_\lambda(f_\#P\|f_\#Q)\le D_\lambda(P\|Q)` for any map
:math:`f` fixed in advance, so a lower bound for the divergence of the projected outputs
:math:`w^\top X` is a lower bound for the mechanism's.  The direction :math:`w` may be learned
from the outputs only if the outputs it is then applied to were not used: a fraction ``split``
of each sample (a random subset drawn with ``rng``) learns it, the rest is projected and bounded
by the one-dimensional estimator.  Learning on the whole sample is never offered: with
:math:`d=1000` the bound then exceeded the truth in every replicate of the prototype study.

Directions:

``"mean-difference"``
    :math:`w=\bar X-\bar Y` on the held-out part: the most informative direction for a shift
    under isotropic noise (the Gaussian and Laplace mechanisms on a histogram or a mean).
``"whitened"``
    :math:`w=\hat\Sigma^{-1}(\bar X-\bar Y)` with :math:`\hat\Sigma` the Ledoit–Wolf shrinkage
    estimate of the pooled covariance (computed in chunks): correlated noise does not waste the
    projection.
an array ``w`` or a callable ``f(outputs) -> values``
    Fixed by the user, so every output is used for the bound.

How much a learned direction keeps is measured on held-out outputs, against the other
candidates and the estimated likelihood ratio (:mod:`~renyi.audit.reduction`, which also
holds the entry point :func:`~renyi.audit.reduction.projected_samples`).  ``signal_share``
records the angle to the mean shift only: :math:`\cos^2\approx1/(1+2d\sigma^2/(m\|\Delta\|^2))`
for isotropic noise of scale :math:`\sigma`, a shift :math:`\Delta` and :math:`m` held-out
outputs per side, estimated from the outputs that were not held out (debiased for their
noise).  It is not the share of the divergence kept: under correlated noise the mean shift
is the wrong direction, and when the laws differ in spread there is no shift at all.

Everything runs in chunks of rows, so a memory-mapped ``.npy`` of any size is read once for the
direction and once for the projection.  Taught in the chapter *Vector-valued outputs*
(``book/part1``).
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass, field

import numpy as np
from scipy.linalg.blas import dsyrk as syrk

__all__ = [
    "PROJECTIONS",
    "DEFAULT_SPLIT",
    "signal_share_from_moments",
    "fixed_direction",
    "Projection",
    "Side",
    "learn_direction_from_moments",
    "learn_direction",
    "project",
    "output_rows",
    "signal_share",
    "renamed",
]

#: The directions learned from held-out outputs.
PROJECTIONS = ("mean-difference", "whitened")
#: Default fraction of each sample held out to learn the direction.
DEFAULT_SPLIT = 0.5
#: Rows per chunk: about 8 MB of float64 at d = 1000.
_CHUNK_BYTES = 1 << 23


@dataclass(frozen=True)
class Projection:
    r"""How vector outputs were reduced to one dimension.

    Attributes
    ----------
    kind : str
        ``"mean-difference"``, ``"whitened"``, ``"likelihood-ratio"``, ``"fixed"`` (an array),
        ``"callable"`` or ``"grid"``: the route the bound went through.
    dimension : int
        :math:`d`, the outputs' dimension.
    held_out : tuple of int
        Outputs per side that learned the direction (not used in the bound).
    signal_share : float or None
        Estimated :math:`\cos^2` between the direction and the mean shift, from the outputs
        that were bounded; ``None`` when it cannot be estimated (a map, a shift too small to
        see, or no projection).  Not the share of the divergence kept (``divergence_share``).
    bandwidths : tuple of float
        ``kind="grid"`` only (no projection: the density estimated on a grid in
        :math:`d\le3` dimensions, :mod:`~renyi.audit.multivariate_kde`): the per-axis
        bandwidths in the grid's coordinates (whitened); empty otherwise.
    requested : str
        What the caller asked for: ``"auto"`` when the route was chosen on held-out
        outputs, else ``kind`` (empty for records built before the choice existed).
    scores : dict
        Learned routes only: each candidate's bound on held-out outputs (the mean over the
        requested orders of the lower bound, :func:`~renyi.audit.reduction.held_out_scores`);
        empty otherwise.
    divergence_share : float or None
        ``scores[kind]`` over the best score: the share of what the best candidate finds on
        held-out outputs that this route keeps; ``None`` without scores or when every
        score is 0.
    """

    kind: str
    dimension: int
    held_out: tuple
    signal_share: float | None
    bandwidths: tuple = ()
    requested: str = ""
    scores: dict = field(default_factory=dict)
    divergence_share: float | None = None

    def to_dict(self) -> dict:
        """The fields as a JSON-ready dict.

        Returns
        -------
        dict
        """
        return {
            "kind": self.kind,
            "dimension": self.dimension,
            "held_out": list(self.held_out),
            "signal_share": self.signal_share,
            "bandwidths": list(self.bandwidths),
            "requested": self.requested or self.kind,
            "scores": dict(self.scores),
            "divergence_share": self.divergence_share,
        }


def _chunks(array, name="outputs", check=True):
    """Row blocks of ``array`` as float64, about ``_CHUNK_BYTES`` each (memory-mapped input welcome).

    ``check=False`` skips the test for NaN and infinities, for a pass over rows already checked.
    """
    n, d = array.shape
    step = max(1, _CHUNK_BYTES // (8 * max(d, 1)))
    for start in range(0, n, step):
        block = np.asarray(array[start : start + step], dtype=float)
        if check and not np.all(np.isfinite(block)):
            bad = int(block.size - np.count_nonzero(np.isfinite(block)))
            raise ValueError(f"{name} contains NaN or infinite values ({bad} in rows {start:,} onwards)")
        yield start, block


class _Moments:
    """Running sums of a sample's rows: count and sum, and with ``second`` the scatter and fourth powers.

    The second-order sums are taken about a fixed centre ``c`` (given, or the mean of the first
    block), of ``z = x - c``: ``sum z z^T`` (upper triangle), ``sum (z.z) z`` and ``sum (z.z)^2``.
    The moments about the sample mean follow exactly from them in one pass over the rows;
    with ``c`` near the mean (a block of thousands of rows) the correction is small and loses
    no precision that matters.
    """

    def __init__(self, d, second, centre=None):
        self.n, self.total = 0, np.zeros(d)
        self.centre = centre
        self.second = second
        if second:
            self.outer, self.cubic, self.quartic, self.shifted = np.zeros((d, d)), np.zeros(d), 0.0, np.zeros(d)

    def add(self, block):
        if block.shape[0] == 0:
            return
        self.n += block.shape[0]
        self.total += block.sum(axis=0)
        if self.second:
            if self.centre is None:
                self.centre = block.mean(axis=0)
            z = block - self.centre
            norms = np.einsum("ij,ij->i", z, z)
            # upper triangle only (BLAS syrk): half the flops of z.T @ z
            self.outer += syrk(1.0, z.T)
            self.cubic += norms @ z
            self.quartic += float(norms @ norms)
            self.shifted += z.sum(axis=0)

    @property
    def scatter(self):
        """The scatter about the sample mean, sum (x - m)(x - m)^T."""
        delta = self.shifted / self.n
        raw = self.outer + np.triu(self.outer, 1).T
        return raw - self.n * np.outer(delta, delta)

    @property
    def fourth(self):
        """The sum of ((x - m).(x - m))^2, from the sums about the centre, with z = x - c and m = c + delta.

        (z - delta).(z - delta) = z.z - 2 z.delta + delta.delta, squared and summed.
        """
        delta = self.shifted / self.n
        raw = self.outer + np.triu(self.outer, 1).T
        e = float(delta @ delta)
        value = self.quartic + 4 * float(delta @ raw @ delta) - 4 * float(delta @ self.cubic)
        return value + 2 * e * float(np.trace(raw)) - 3 * self.n * e * e

    @property
    def mean(self):
        return self.total / self.n


def _shrunk_covariance(moments):
    """Ledoit–Wolf shrinkage of the pooled within-sample covariance towards a multiple of I.

    Each sample's sums are about its own mean (a first pass found it): S is the pooled
    covariance, the target mu I with mu = tr(S) / d, and the intensity min(1, b^2 / d^2) of
    Ledoit and Wolf (2004, Lemma 3.3), with n^2 b^2 = sum_k |x_k|^4 - n |S|_F^2.
    """
    d = moments[0].total.size
    n = sum(m.n for m in moments)
    s = sum(m.scatter for m in moments) / n
    mu = np.trace(s) / d
    dist = float(np.sum((s - mu * np.eye(d)) ** 2))
    spread = max(sum(m.fourth for m in moments) / n - float(np.sum(s**2)), 0.0) / n
    weight = 1.0 if dist <= 0 else min(1.0, spread / dist)
    return weight * mu * np.eye(d) + (1 - weight) * s


def learn_direction_from_moments(moments, kind):
    """The unit direction from the held-out rows' running sums (see :func:`learn_direction`).

    Parameters
    ----------
    moments : sequence of two running sums
        Each side's held-out rows, as :meth:`Side.learn` accumulates them (with the
        scatter for ``"whitened"``).
    kind : {"mean-difference", "whitened"}

    Returns
    -------
    ndarray, shape (d,)
    """
    w = moments[0].mean - moments[1].mean
    if kind == "whitened":
        w = np.linalg.solve(_shrunk_covariance(moments), w)
    norm = float(np.linalg.norm(w))
    if not (norm > 0 and math.isfinite(norm)):
        raise ValueError(
            "the held-out outputs of both sides have the same mean: no direction to learn; "
            "pass a fixed direction (projection=w) or more outputs"
        )
    return w / norm


def learn_direction(held_p, held_q, kind="mean-difference"):
    r"""The projection direction from held-out outputs of both sides.

    Parameters
    ----------
    held_p, held_q : ndarray, shape (m, d)
        Outputs that will *not* be bounded.
    kind : {"mean-difference", "whitened"}

    Returns
    -------
    ndarray, shape (d,)
        Unit-norm direction :math:`w`: the mean difference, or
        :math:`\hat\Sigma^{-1}` times it.

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> x, y = rng.normal(size=(5000, 3)) + [1, 0, 0], rng.normal(size=(5000, 3))
    >>> [round(float(v), 1) for v in learn_direction(x, y)]
    [1.0, 0.0, 0.0]
    """
    if kind not in PROJECTIONS:
        raise ValueError(f"kind must be one of {', '.join(map(repr, PROJECTIONS))}, got {kind!r}")
    held_p, held_q = (np.asarray(x, dtype=float) for x in (held_p, held_q))
    moments = []
    for arr in (held_p, held_q):
        m = _Moments(arr.shape[1], kind == "whitened", centre=arr.mean(axis=0))
        for _, block in _chunks(arr):
            m.add(block)
        moments.append(m)
    return learn_direction_from_moments(moments, kind)


def project(outputs, direction):
    """``outputs @ direction`` in chunks of rows (a memory-mapped array is read once).

    Parameters
    ----------
    outputs : ndarray, shape (n, d)
    direction : ndarray, shape (d,)

    Returns
    -------
    ndarray, shape (n,)
    """
    out = np.empty(outputs.shape[0])
    for start, block in _chunks(outputs):
        out[start : start + block.shape[0]] = block @ direction
    return out


class Side:
    """One sample's split: which rows are held out, their running sums, and passes over the rest.

    Parameters
    ----------
    arr : ndarray, shape (n, d)
        The sample (a memory-mapped array is read in chunks).
    name : str
        Its name in error messages.
    split : float
        The fraction held out (0: none).
    rng : numpy.random.Generator or None
        Draws the held-out rows (unused when ``split`` is 0).
    """

    def __init__(self, arr, name, split, rng):
        self.arr, self.name = arr, name
        self.held = rng.random(arr.shape[0]) < split if split else np.zeros(arr.shape[0], bool)
        if split and (self.held.all() or not self.held.any()):
            raise ValueError(f"split={split:g} leaves no outputs on one side of {arr.shape[0]:,} rows")
        self.moments = None
        self.checked = False  # every row seen finite by an earlier pass

    def learn(self, second):
        """Running sums of the held-out rows (``second``: the scatter too, for ``"whitened"``)."""
        self.moments = _Moments(self.arr.shape[1], second)
        for start, block in _chunks(self.arr, self.name):
            self.moments.add(block[self.held[start : start + block.shape[0]]])
        self.checked = True

    def project(self, w):
        """The projection of the rows not held out, and their mean and total squared norm."""
        keep = ~self.held
        out = np.empty(int(keep.sum()))
        filled, total, squares = 0, np.zeros(w.size), 0.0
        for start, block in _chunks(self.arr, self.name, check=not self.checked):
            rows = block[keep[start : start + block.shape[0]]]
            out[filled : filled + rows.shape[0]] = rows @ w
            filled += rows.shape[0]
            total += rows.sum(axis=0)
            squares += float(np.einsum("ij,ij->", rows, rows))
        return out, total / out.size, squares / out.size

    def project_map(self, f):
        """``f`` at the rows not held out (a learned map such as a log ratio), in chunks."""
        keep = ~self.held
        parts = []
        for start, block in _chunks(self.arr, self.name, check=not self.checked):
            parts.append(np.asarray(f(block[keep[start : start + block.shape[0]]]), dtype=float))
        return np.concatenate(parts)

    def held_rows(self, cap, rng):
        """At most ``cap`` of the held-out rows (a random subset beyond it), in memory."""
        chosen = np.flatnonzero(self.held)
        if chosen.size > cap:
            chosen = np.sort(rng.choice(chosen, size=cap, replace=False))
        rows = np.asarray(self.arr[chosen], dtype=float)
        if not self.checked and not np.all(np.isfinite(rows)):
            raise ValueError(f"{self.name} contains NaN or infinite values")
        return rows


def output_rows(value, name):
    """An (n, d) array of real numbers, without copying a memory-mapped one.

    Parameters
    ----------
    value : array_like
        Outputs, one per row.
    name : str
        The argument's name, for the error message.

    Returns
    -------
    ndarray, shape (n, d)

    Raises
    ------
    TypeError
        For non-numeric or complex values.
    ValueError
        For another shape, or fewer than two rows.
    """
    arr = value if isinstance(value, np.ndarray) else np.asarray(value)
    if arr.dtype == object or not (np.issubdtype(arr.dtype, np.number) or arr.dtype == bool):
        raise TypeError(f"{name} must contain real numbers, got dtype {arr.dtype}")
    if np.issubdtype(arr.dtype, np.complexfloating):
        raise TypeError(f"{name} must be real, got complex dtype {arr.dtype}")
    if arr.ndim != 2 or arr.shape[0] < 2 or arr.shape[1] < 1:
        raise ValueError(f"projection= needs outputs of shape (n, d) with n >= 2; {name} has shape {arr.shape}")
    return arr


def signal_share(w, projected, means, mean_squares):
    """cos^2 between w and the mean shift, from the bounded rows, debiased for their noise.

    Parameters
    ----------
    w : ndarray, shape (d,)
        The unit direction.
    projected : tuple of two ndarray
        The bounded rows of each side projected on ``w``.
    means : tuple of two ndarray, shape (d,)
        The mean of each side's bounded rows.
    mean_squares : tuple of two float
        The mean squared norm of each side's bounded rows.

    Returns
    -------
    float or None

    Notes
    -----
    With m rows per side, the estimated shift's expected squared norm is the shift's plus
    ``tr(S_p)/m_p + tr(S_q)/m_q``, and for a fixed unit w the expected square of its
    component along w is ``(w . shift)^2 + var(w X)/m_p + var(w Y)/m_q``.
    ``None`` when the shift is not resolved above three standard deviations of that noise
    (isotropic approximation).
    """
    sizes = [v.size for v in projected]
    return signal_share_from_moments(w, sizes, [float(np.var(v)) for v in projected], means, mean_squares)


def signal_share_from_moments(w, sizes, variances, means, mean_squares):
    """:func:`signal_share` from running sums: rows per side and the projections' variances.

    Parameters
    ----------
    w : ndarray, shape (d,)
    sizes : tuple of two int
        Bounded rows per side.
    variances : tuple of two float
        The variance of each side's projected rows (divided by the rows).
    means : tuple of two ndarray, shape (d,)
    mean_squares : tuple of two float

    Returns
    -------
    float or None
    """
    shift = means[0] - means[1]
    traces = [ms - float(m @ m) for ms, m in zip(mean_squares, means)]
    noise = sum(t / n for t, n in zip(traces, sizes))
    along = float(w @ shift) ** 2 - sum(v / n for v, n in zip(variances, sizes))
    signal = float(shift @ shift) - noise
    if signal <= 3 * noise * math.sqrt(2.0 / w.size):
        return None
    return float(min(1.0, max(0.0, along / signal)))


def fixed_direction(projection, d: int) -> np.ndarray:
    """A direction given in advance, checked: a finite, non-zero vector of length ``d``.

    Parameters
    ----------
    projection : array_like
    d : int
        The outputs' dimension.

    Returns
    -------
    ndarray, shape (d,)
        As given (not normalised).
    """
    w = np.asarray(projection, dtype=float)
    if w.shape != (d,) or not np.all(np.isfinite(w)) or not np.any(w):
        raise ValueError(f"a fixed projection must be a finite, non-zero vector of length {d}, got shape {w.shape}")
    return w


def renamed(projection, stacklevel: int = 2):
    """``projection``, with its former name ``"kde"`` read as ``"grid"`` (and a ``FutureWarning``).

    Parameters
    ----------
    projection : object
        What the caller passed.
    stacklevel : int, default 2
        The warning's stack level, counted from the caller of this function.

    Returns
    -------
    object
        ``"grid"`` for ``"kde"``, else ``projection``.
    """
    if isinstance(projection, str) and projection == "kde":
        warnings.warn(
            "projection='kde' is now projection='grid' (the same estimate); the old name will go",
            FutureWarning,
            stacklevel=stacklevel + 1,
        )
        return "grid"
    return projection
