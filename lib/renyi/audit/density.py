r"""Density estimators of Part I: relative frequencies and a grid KDE with two tail modes.

* :func:`~renyi.audit.frequencies.relative_frequencies` — the estimator (9) of Kutta et al. for
  discrete outputs (integers, or rows of an integer array), on the union of
  the outcomes observed in either sample.
* :func:`kde_on_grid` — the Gaussian-kernel estimator (10) of two samples on
  one common equispaced grid: by default a linear-binned FFT KDE
  (``tails="absolute"``), or the tail-accurate fast Gauss transform
  (``tails="relative"``).
* :class:`DensityFit` — the fitted pair on its grid (or its outcomes): what every
  estimator reads, whichever road (in memory, streamed, in tasks, in d dimensions) fitted it.
* the bandwidth rules are in :mod:`renyi.audit.bandwidth`.

Two ways to compute the same KDE
--------------------------------
**Linear binning and FFT** (the default, ``tails="absolute"``).  Each sample
:math:`X_i` splits unit weight between its two neighbouring grid nodes in
proportion to proximity (two ``bincount`` passes), and the counts are
convolved with the Gaussian sampled on the grid by FFT.  Linear binning adds,
on average over a sample's position within its cell, the variance
:math:`\Delta^2/6` of a triangular kernel; the sampled Gaussian therefore
uses the bandwidth :math:`\sqrt{h^2-\Delta^2/6}`, so that the effective
bandwidth is :math:`h` to second order in :math:`\Delta/h`
(``tests/test_density.py`` checks a relative bandwidth error below
:math:`10^{-3}`; it is about :math:`10^{-5}`).  The result is accurate to
round-off *relative to the density's maximum* (FFT round-off is about
:math:`10^{-16}` of the peak); below :data:`FFT_NOISE` (:math:`10^{-12}`) of the peak,
in the deep tails, it reports zero.  The floored estimator never looks there: wherever
:math:`\hat q<\tau` it uses :math:`\tau`, and :math:`\tau` is many orders of
magnitude above the noise.

**The fast Gauss transform** (``tails="relative"``).  The audit floors :math:`\hat q` at :math:`\tau` and raises
:math:`\hat p/\hat q_\tau` to the power :math:`\lambda`; a user who wants the
*relative* accuracy of the density estimate in its tails (e.g. to study the
estimator with very small floors) can have it.  FFT convolution has
an absolute round-off error of about :math:`10^{-16}` times the peak, and
linear binning a relative error of order :math:`(\Delta/h)^2(z^2-1)` that
grows in the tails, which puts a noise floor under the estimate exactly
where a floor far below the default would look.

``tails="relative"`` instead uses the one-dimensional fast Gauss transform
(Greengard and Strain, 1991).  Each sample :math:`X_i` is assigned to its
nearest grid node :math:`g_j` with offset :math:`s_i=(X_i-g_j)/h`,
:math:`|s_i|\le\Delta/(2h)`, and the kernel factorises exactly,

.. math::

    e^{-(v-s)^2/2}=e^{-v^2/2}\,e^{-s^2/2}\,e^{vs}
    =e^{-v^2/2}\,e^{-s^2/2}\sum_{k\ge0}\frac{v^k s^k}{k!},\qquad v=(t-g_j)/h .

Truncating the series after ``terms`` terms gives the *moments*
:math:`c_k[j]=\sum_{i\to j}e^{-s_i^2/2}s_i^k/k!` (one ``bincount`` each) and
:math:`\hat f(g_l)=\frac{1}{nh\sqrt{2\pi}}\sum_k\sum_j c_k[j]\,G_k(l-j)` with
:math:`G_k(l)=(l\Delta/h)^k e^{-(l\Delta/h)^2/2}`, a direct (not FFT)
convolution with all-positive weights for even :math:`k`.  The relative
error of every sample's contribution within :math:`V` bandwidths is at most
:math:`e^{Vs}(Vs)^p/p!` with :math:`s=\Delta/(2h)`; the defaults
(:math:`\Delta=h/8`) make it below :math:`10^{-10}` for every sample within
the kernel's reach of :math:`V=12` bandwidths; samples beyond contribute
less than :math:`e^{-72}/(h\sqrt{2\pi})`, negligible wherever the KDE
exceeds :math:`10^{-12}`.  There the grid value matches the direct sum to
about :math:`10^{-10}` relative (``tests/test_density.py`` checks 1e-9;
observed errors are near 1e-13).
"""

from __future__ import annotations

import math
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

import numpy as np
from scipy import fft, special

from .._validation import as_positive_scalar, as_real_array
from .counts import MAX_NODES, NODES_PER_BANDWIDTH, PAD_BANDWIDTHS

__all__ = ["DensityFit", "GridEstimate", "kde_on_grid", "direct_kde", "TAILS", "FFT_NOISE", "KERNEL_ROUGHNESS"]

#: Roughness of the Gaussian kernel, R(K) = int K^2 = 1 / (2 sqrt(pi)).
KERNEL_ROUGHNESS = 1.0 / (2.0 * math.sqrt(math.pi))


@dataclass(frozen=True)
class DensityFit:
    r"""Steps 1–2 of the audit: :math:`\hat p,\hat q` on one grid (or on the observed outcomes).

    Attributes
    ----------
    p, q : ndarray
        The estimates (densities on the grid, or relative frequencies).
    dx : float
        Grid spacing (1 for relative frequencies).
    n_p, n_q : int
        Sample sizes.
    discrete : bool
        Relative frequencies (True) or Gaussian KDE (False).
    cells : int
        Grid points or observed outcomes.
    bandwidth : float or None
        The KDE's :math:`h`.
    scale : float or None
        The robust scale :math:`\hat s` behind the default bandwidth and
        :func:`~renyi.audit.floor.paper_floor` (mean of the two samples' scales).
    kernel_factor : float or None
        :math:`R(K_H)=\int K_H^2` of a multivariate kernel
        (:mod:`~renyi.audit.multivariate_kde`), which then sets the default floor and the bias
        correction in place of ``bandwidth``; ``None`` otherwise.
    """

    p: np.ndarray
    q: np.ndarray
    dx: float
    n_p: int
    n_q: int
    discrete: bool
    cells: int
    bandwidth: float | None
    scale: float | None
    kernel_factor: float | None = None


#: The two algorithms of :func:`kde_on_grid` (see the module docstring).
TAILS = ("absolute", "relative")

#: Relative truncation error targeted by the Taylor expansion of the fast Gauss transform.
_TAYLOR_TOL = 1e-10
#: Kernel reach in bandwidths.  A sample farther than this contributes at most
#: exp(-72)/(h sqrt(2 pi)) ~ 2e-32/h, i.e. < 1e-19 relative wherever the KDE exceeds
#: 1e-12 (for any h > 1e-12); every included contribution has Taylor error <= _TAYLOR_TOL.
_KERNEL_REACH = 12.0
_ACCURATE_WITHIN = _KERNEL_REACH
#: Process samples in chunks of this size to bound memory (a few arrays of this length).
BIN_CHUNK = 1 << 18


@dataclass(frozen=True)
class GridEstimate:
    r"""Gaussian KDEs of two samples on one equispaced grid.

    Attributes
    ----------
    grid : ndarray
        The nodes :math:`g_0 + l\Delta`.
    dx : float
        The spacing :math:`\Delta`.
    p, q : ndarray
        :math:`\hat p(g_l)` and :math:`\hat q(g_l)`.
    bandwidth : float
    terms : int
        Number of Taylor terms of the fast Gauss transform (0 for the
        binned FFT KDE).
    taylor_error : float
        Bound on the relative error of each sample's contribution within
        twelve bandwidths (fast Gauss transform; 0 for the binned KDE).
    neglected_mass : float
        Upper bound on the kernel mass of any sample that falls outside the
        grid (the grid extends ``pad`` bandwidths beyond the data).
    tails : {"absolute", "relative"}
        Which algorithm produced the estimates (see :func:`kde_on_grid`).
    """

    grid: np.ndarray
    dx: float
    p: np.ndarray
    q: np.ndarray
    bandwidth: float
    terms: int
    taylor_error: float
    neglected_mass: float
    tails: str = "relative"

    @property
    def size(self) -> int:
        """Number of grid nodes."""
        return int(self.grid.size)


def _taylor_terms(half_cell: float) -> tuple[int, float]:
    """Smallest p with e^{Vs}(Vs)^p/p! below the tolerance, s = half a cell in bandwidths."""
    vs = _ACCURATE_WITHIN * half_cell
    for p in range(1, 60):
        bound = math.exp(vs + p * math.log(vs) - special.gammaln(p + 1)) if vs > 0 else 0.0
        if bound <= _TAYLOR_TOL:
            return p, bound
    raise ValueError("grid spacing too coarse for the bandwidth; lower spacing (cells per bandwidth)")


def _fgt_moments(x: np.ndarray, origin: float, dx: float, h: float, size: int, terms: int) -> np.ndarray:
    moments = np.zeros((terms, size))
    ratio = dx / h
    for start in range(0, x.size, BIN_CHUNK):
        # u = offset from the nearest node in cells, in [-1/2, 1/2]; s = u * dx / h.
        u = x[start : start + BIN_CHUNK] - (origin - 0.5 * dx)
        u *= 1.0 / dx  # >= 1/2 because the grid starts below the data
        idx = u.astype(np.intp)  # floor for positive values
        u -= idx
        u -= 0.5
        w = np.multiply(u, u)
        w *= -0.5 * ratio * ratio
        np.exp(w, out=w)
        for k in range(terms):
            moments[k] += np.bincount(idx, weights=w, minlength=size)
            if k + 1 < terms:
                np.multiply(w, u, out=w)
    # (dx/h)^k / k!: the units and the Taylor coefficients, applied to the short arrays
    k = np.arange(terms)
    moments *= (ratio**k / special.factorial(k))[:, None]
    return moments


def _fgt_convolve(moments: np.ndarray, dx: float, h: float) -> np.ndarray:
    reach = int(math.ceil(_KERNEL_REACH * h / dx))
    v = np.arange(-reach, reach + 1) * (dx / h)
    gauss = np.exp(-0.5 * v * v)
    size = moments.shape[1]
    out = np.zeros(size)
    vk = np.ones_like(v)
    for k in range(moments.shape[0]):
        if np.any(moments[k]):
            out += np.convolve(moments[k], vk * gauss)[reach : reach + size]
        vk = vk * v
    return out


def kde_on_grid(
    samples_p,
    samples_q,
    bandwidth,
    *,
    spacing: float = NODES_PER_BANDWIDTH,
    pad: float = PAD_BANDWIDTHS,
    max_points: int = MAX_NODES,
    tails: str = "absolute",
) -> GridEstimate:
    r"""Gaussian KDEs (eq. 10 of Kutta et al.) of two 1-D samples on a common grid.

    .. math::

        \hat f(t)=\frac{1}{nh}\sum_{i=1}^n K\Big(\frac{t-X_i}{h}\Big),\qquad K=\varphi .

    Parameters
    ----------
    samples_p, samples_q : array_like, 1-D
        Continuous outputs of :math:`A(x)` and :math:`A(x')`.
    bandwidth : float
        :math:`h>0`, shared by both estimates.
    spacing : float, default 8
        Grid nodes per bandwidth (:math:`\Delta=h/\text{spacing}`).  Grid sums
        of the smooth KDE are then exact integrals to round-off (the
        trapezoidal rule for a Gaussian sampled at :math:`h/8` errs by
        :math:`e^{-2\pi^2\cdot64}`).
    pad : float, default 8
        Bandwidths added on each side of the data; the kernel mass of any
        sample beyond the grid is below :math:`\Phi(-\text{pad})\approx6\cdot10^{-16}`.
    max_points : int, default 4,194,304
        Refuse grids larger than this (heavy tails with a tiny bandwidth).
    tails : {"absolute", "relative"}, default "absolute"
        ``"absolute"``: linear binning and FFT convolution, accurate to
        round-off relative to the density's maximum, cost
        :math:`\mathcal O(n+M\log M)` for :math:`M` grid points.
        ``"relative"``: the fast Gauss transform, accurate to about
        :math:`10^{-11}` relative to the local value wherever the KDE exceeds
        :math:`10^{-12}`, cost :math:`\mathcal O(np + Mp\,h/\Delta)` with
        :math:`p\approx13` Taylor terms (about six times slower).

    Returns
    -------
    GridEstimate

    Notes
    -----
    Both algorithms compute the same estimator; the module docstring gives
    their error analyses.  The audit's bounds agree between the two to far
    below their standard error (``tests/test_density.py``), because the
    floor hides the tails where they differ.
    """
    h = as_positive_scalar(bandwidth, "bandwidth")
    spacing = as_positive_scalar(spacing, "spacing")
    pad = as_positive_scalar(pad, "pad")
    xp = as_real_array(samples_p, "samples_p", ndim=1)
    xq = as_real_array(samples_q, "samples_q", ndim=1)
    if tails not in TAILS:
        raise ValueError(f"tails must be one of {', '.join(map(repr, TAILS))}, got {tails!r}")
    return kde_on_checked_grid(xp, xq, h, spacing, pad, max_points, tails)


def kde_on_checked_grid(xp, xq, h, spacing, pad, max_points, tails) -> GridEstimate:
    """:func:`kde_on_grid` on validated 1-D float arrays (the audit validates once, up front)."""
    dx = h / spacing
    lo = min(xp.min(), xq.min()) - pad * h
    hi = max(xp.max(), xq.max()) + pad * h
    size = int(math.ceil((hi - lo) / dx)) + 1
    if size > max_points:
        raise ValueError(
            f"the KDE grid would need {size:,} points (data range {hi - lo:.4g} at bandwidth {h:.4g}); "
            f"pass a larger bandwidth, clip extreme outliers, or raise max_points"
        )
    grid = lo + dx * np.arange(size)
    if tails == "absolute":
        dens_p, dens_q = _binned_kde((xp, xq), lo, dx, h, size)
        return GridEstimate(grid, dx, dens_p, dens_q, h, 0, 0.0, float(special.ndtr(-pad)), tails)
    terms, bound = _taylor_terms(0.5 / spacing)

    def estimate(x):
        dens = _fgt_convolve(_fgt_moments(x, lo, dx, h, size, terms), dx, h)
        dens *= 1.0 / (x.size * h * math.sqrt(2 * math.pi))
        # Odd Taylor terms can leave -1e-300-level noise where the density underflows.
        return np.maximum(dens, 0.0, out=dens)

    # The two samples are independent work; numpy releases the GIL in its loops,
    # so two threads use two cores.  The result does not depend on scheduling.
    with ThreadPoolExecutor(max_workers=2) as pool:
        dens_p, dens_q = pool.map(estimate, (xp, xq))
    return GridEstimate(grid, dx, dens_p, dens_q, h, terms, bound, float(special.ndtr(-pad)), tails)


#: Relative level (of each density's peak) below which the binned FFT KDE reports 0.
FFT_NOISE = 1e-12


def linear_bin(x: np.ndarray, lo: float, dx: float, size: int) -> np.ndarray:
    """Linear-binning counts of ``x`` on the nodes lo + dx * l, l < size (additive over chunks)."""
    counts = np.zeros(size + 1)
    for start in range(0, x.size, BIN_CHUNK):
        u = x[start : start + BIN_CHUNK] - lo
        u *= 1.0 / dx
        idx = u.astype(np.intp)  # floor: the grid starts below the data
        u -= idx  # the share of the right-hand node
        right = np.bincount(idx, weights=u, minlength=size + 1)
        counts += np.bincount(idx, minlength=size + 1)
        counts -= right
        counts[1:] += right[:-1]
    return counts[:size]


def _binned_kde(samples, lo: float, dx: float, h: float, size: int):
    """Linear binning + FFT convolution with the bandwidth-compensated sampled Gaussian."""
    # The samples are independent work and numpy releases the GIL in its loops: two threads,
    # two cores.  The result does not depend on scheduling.
    with ThreadPoolExecutor(max_workers=2) as pool:
        counts = np.stack(list(pool.map(lambda x: linear_bin(x, lo, dx, size) / x.size, samples)))
    return smooth_counts(counts, dx, h)


def smooth_counts(counts: np.ndarray, dx: float, h: float):
    """Densities from normalised linear-binning counts (one row per sample)."""
    # Linear binning adds Delta^2/6 of variance on average; take it out of the kernel.
    h_kernel = math.sqrt(h * h - dx * dx / 6.0)
    reach = int(math.ceil(_KERNEL_REACH * h / dx))
    v = np.arange(-reach, reach + 1) * (dx / h_kernel)
    kernel = np.exp(-0.5 * v * v)
    kernel /= kernel.sum() * dx  # a density on the grid: unit mass exactly
    # "same"-mode FFT convolution over scipy.fft (scipy.signal costs a second to import)
    full = counts.shape[1] + kernel.size - 1
    nfft = fft.next_fast_len(full, real=True)
    dens = fft.irfft(fft.rfft(counts, nfft, axis=1) * fft.rfft(kernel, nfft)[None, :], nfft, axis=1)
    dens = dens[:, reach : reach + counts.shape[1]]
    # FFT round-off leaves +-1e-16 of the peak where the density underflows.  Values below
    # FFT_NOISE of the peak are not resolved, and their sign is decided by the CPU's rounding
    # (numpy's SIMD exp in the kernel): they are set to zero, so that which cells carry mass,
    # which the bias near order 1 counts, is the same on every machine.
    peak = dens.max(axis=1, keepdims=True)
    dens[dens < FFT_NOISE * peak] = 0.0
    return tuple(dens)


def direct_kde(samples, bandwidth, points) -> np.ndarray:
    r"""Reference Gaussian KDE by direct summation in log space, :math:`\mathcal O(nm)`.

    Slow but exact to round-off at every point, far tails included; used to
    validate :func:`kde_on_grid`.

    Parameters
    ----------
    samples : array_like, 1-D
    bandwidth : float
        :math:`h>0`.
    points : array_like, 1-D
        Where to evaluate the density.

    Returns
    -------
    ndarray
        The density at ``points``.
    """
    x = as_real_array(samples, "samples", ndim=1)
    t = as_real_array(points, "points", ndim=1)
    h = as_positive_scalar(bandwidth, "bandwidth")
    out = np.empty(t.size)
    for start in range(0, t.size, 256):
        z = (t[start : start + 256, None] - x[None, :]) / h
        out[start : start + 256] = special.logsumexp(-0.5 * z * z, axis=1)
    return np.exp(out - math.log(x.size * h * math.sqrt(2 * math.pi)))
