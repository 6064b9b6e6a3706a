r"""The mean-difference route on Gaussian and product-Laplace outputs, simulated from sufficient statistics.

At :math:`d=1000` and :math:`n=10^6` outputs per side, one replicate of the vector study draws
:math:`2\cdot10^9` numbers (16 GB); 200 replicates take hours.  For a Gaussian law with
isotropic noise, :math:`X_i=c+\sigma Z_i` with :math:`Z_i\sim N(0,I_d)`, everything the
``"mean-difference"`` route of :func:`~renyi.audit.reduction.projected_samples` computes is a
function of statistics whose joint law is known exactly, so a replicate can be drawn with
:math:`O(n+d)` numbers instead of :math:`O(nd)`:

* the held-out count :math:`m\sim\mathrm{Bin}(n,\text{split})` (each output is held out with
  probability ``split``) and the held-out mean :math:`c+\sigma g/\sqrt m`,
  :math:`g\sim N(0,I_d)`; the unit direction :math:`w` is the normalized difference of the two
  sides' held-out means;
* the :math:`k=n-m` bounded outputs, independent of :math:`w`, project to
  :math:`c^\top w+\sigma a_i` with :math:`a_i\sim N(0,1)` (rotation invariance of
  :math:`Z_i`);
* their components orthogonal to :math:`w` enter only the signal-share estimate, through their
  mean :math:`b\sim N(0,(I-ww^\top)/k)` and their scatter about it, :math:`\sigma^2` times a
  :math:`\chi^2` variable with :math:`(d-1)(k-1)` degrees of freedom, independent of the rest.

For independent Laplace noise of scale :math:`b` per coordinate (``noise="laplace"``) the held-out
means are still exact at :math:`O(d)` cost: a sum of :math:`m` Laplace variables is
:math:`b(G-G')` with :math:`G,G'\sim\mathrm{Gamma}(m,1)` independent, since a Laplace variable is
a difference of two standard exponentials.  The projection of a Laplace vector has no such
summary, so the bounded outputs are drawn, in chunks of ``chunk`` rows: :math:`O(kd)` numbers but
no :math:`k\times d` array, and half the draws of the full simulation.

The bound is then the library's one-dimensional bound on the projected outputs, exactly as
``rdp_lower_bound(..., projection="mean-difference")`` computes it.  The law of a replicate is the
law of the full simulation; ``tests/test_vector_sufficient.py`` checks the two against each other
(two-sample Kolmogorov–Smirnov on the bound, the signal share and the held-out count) for both
noises.  Used by the study ``vectors_d1000`` for the ``*_sufficient`` cases.
"""

from __future__ import annotations

import math

import numpy as np

from ..audit import rdp_lower_bound
from ..audit.pipeline import with_projection
from ..audit.projection import DEFAULT_SPLIT, Projection, signal_share

__all__ = ["sufficient_samples", "sufficient_bounds"]


NOISES = ("gaussian", "laplace")

#: Rows per chunk of drawn Laplace outputs (32 MB of doubles at d = 1000).
CHUNK = 4096


def _side(centre, sigma, n, split, rng, noise):
    """Held-out count and mean of one side."""
    m = int(rng.binomial(n, split))
    if m in (0, n):
        raise ValueError(f"split={split:g} leaves no outputs on one side of {n:,} rows")
    if noise == "gaussian":
        return m, centre + sigma * rng.standard_normal(centre.size) / math.sqrt(m)
    # a Laplace(b) variable is b (E - E') with E, E' standard exponential: m of them sum to
    # b (G - G'), G, G' ~ Gamma(m, 1)
    return m, centre + sigma * (rng.standard_gamma(m, centre.size) - rng.standard_gamma(m, centre.size)) / m


def _laplace_noise(rows, d, rng):
    """Standard Laplace draws, shape (rows, d): exponentials with a random sign from one bit each."""
    noise = rng.standard_exponential((rows, d))
    signs = np.unpackbits(np.frombuffer(rng.bytes((rows * d + 7) // 8), dtype=np.uint8), count=rows * d)
    np.negative(noise, out=noise, where=signs.view(bool).reshape(rows, d))
    return noise


def _bounded_laplace(centre, scale, k, w, rng, chunk):
    """As :func:`_bounded`, for Laplace noise of scale ``scale``: the k outputs drawn in chunks."""
    d = centre.size
    projected = np.empty(k)
    total = np.zeros(d)
    squares = 0.0
    for start in range(0, k, chunk):
        noise = _laplace_noise(min(chunk, k - start), d, rng)
        projected[start : start + noise.shape[0]] = noise @ w
        total += noise.sum(axis=0)
        squares += float(np.einsum("ij,ij->", noise, noise))
    mean_noise = scale * total / k
    # (1/k) sum |c + b l_i|^2 = |c|^2 + 2 c.(b mean l) + b^2 (1/k) sum |l_i|^2
    mean_squares = float(centre @ centre) + 2 * float(centre @ mean_noise) + scale**2 * squares / k
    return float(centre @ w) + scale * projected, centre + mean_noise, mean_squares


def _bounded(centre, sigma, k, w, rng):
    """The projected bounded outputs, their mean and mean squared norm (d-dimensional)."""
    d = centre.size
    a = rng.standard_normal(k)
    # mean of the components orthogonal to w: N(0, (I - w w^T) / k)
    b = rng.standard_normal(d) / math.sqrt(k)
    b -= (b @ w) * w
    scatter = rng.chisquare((d - 1) * (k - 1)) if d > 1 else 0.0
    mean_z = a.mean() * w + b
    mean = centre + sigma * mean_z
    # (1/k) sum |c + sigma z_i|^2, with sum |z_i|^2 = sum a_i^2 + k |b|^2 + scatter
    squares = float(centre @ centre) + 2 * sigma * float(centre @ mean_z)
    squares += sigma**2 * (float(a @ a) + k * float(b @ b) + scatter) / k
    return float(centre @ w) + sigma * a, mean, squares


def sufficient_samples(centre_p, centre_q, sigma, n, rng, split=DEFAULT_SPLIT, noise="gaussian", chunk=CHUNK):
    r"""Projected outputs of the mean-difference route on :math:`c_P+\sigma Z` and :math:`c_Q+\sigma Z`.

    Parameters
    ----------
    centre_p, centre_q : array_like, shape (d,)
        The means of the two output laws.
    sigma : float
        The noise scale per coordinate: the standard deviation of Gaussian noise, the scale
        :math:`b` of Laplace noise.
    n : int
        Outputs per side.
    rng : numpy.random.Generator
    split : float, optional
        Fraction of each side held out to learn the direction.
    noise : {"gaussian", "laplace"}, optional
        The law of :math:`Z`: :math:`N(0,I_d)`, or independent standard Laplace coordinates.
    chunk : int, optional
        Rows per chunk of drawn Laplace outputs (memory :math:`8\,\text{chunk}\,d` bytes).

    Returns
    -------
    x, y : ndarray
        The projected outputs that are bounded.
    info : renyi.audit.projection.Projection
        As :func:`~renyi.audit.reduction.projected_samples` records it.
    """
    centres = [np.asarray(c, dtype=float) for c in (centre_p, centre_q)]
    if centres[0].shape != centres[1].shape or centres[0].ndim != 1:
        raise ValueError("centre_p and centre_q must be vectors of one length")
    if not (sigma > 0 and math.isfinite(sigma)):
        raise ValueError(f"sigma must be positive and finite, got {sigma!r}")
    if not 0.0 < split < 1.0:
        raise ValueError(f"split must be in (0, 1), got {split!r}")
    if noise not in NOISES:
        raise ValueError(f"noise must be one of {NOISES}, got {noise!r}")
    if not (isinstance(chunk, (int, np.integer)) and chunk >= 1):
        raise ValueError(f"chunk must be a positive integer, got {chunk!r}")
    held = [_side(c, sigma, n, split, rng, noise) for c in centres]
    w = held[0][1] - held[1][1]
    w /= np.linalg.norm(w)

    def bounded(centre, k):
        if noise == "gaussian":
            return _bounded(centre, sigma, k, w, rng)
        return _bounded_laplace(centre, sigma, k, w, rng, int(chunk))

    (x, mean_p, sq_p), (y, mean_q, sq_q) = (bounded(c, n - m) for c, (m, _) in zip(centres, held))
    share = signal_share(w, (x, y), (mean_p, mean_q), (sq_p, sq_q))
    info = Projection("mean-difference", centres[0].size, (held[0][0], held[1][0]), share)
    return x, y, info


def sufficient_bounds(centre_p, centre_q, sigma, n, orders, rng, split=DEFAULT_SPLIT, noise="gaussian", chunk=CHUNK):
    """The library's bounds on :func:`sufficient_samples`, with the projection recorded.

    Parameters
    ----------
    centre_p, centre_q, sigma, n, rng, split, noise, chunk
        As for :func:`sufficient_samples`.
    orders : float or sequence of float

    Returns
    -------
    LowerBound or list of LowerBound
    """
    x, y, info = sufficient_samples(centre_p, centre_q, sigma, n, rng, split, noise, chunk)
    return with_projection(rdp_lower_bound(x, y, orders), info)
