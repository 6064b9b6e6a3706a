r"""The mean-difference route on Gaussian outputs, simulated from its sufficient statistics.

At :math:`d=1000` and :math:`n=10^6` outputs per side, one replicate of the vector study draws
:math:`2\cdot10^9` numbers (16 GB); 200 replicates take hours.  For a Gaussian law with
isotropic noise, :math:`X_i=c+\sigma Z_i` with :math:`Z_i\sim N(0,I_d)`, everything the
``"mean-difference"`` route of :func:`~renyi.audit.projection.projected_samples` computes is a
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

The bound is then the library's one-dimensional bound on the projected outputs, exactly as
``rdp_lower_bound(..., projection="mean-difference")`` computes it.  The law of a replicate is the
law of the full simulation; ``tests/test_vector_sufficient.py`` checks the two against each other
(two-sample Kolmogorov–Smirnov on the bound and the signal share).  Used by the study
``vectors_d1000`` for the ``*_sufficient`` cases.
"""

from __future__ import annotations

import math

import numpy as np

from ..audit import rdp_lower_bound
from ..audit.pipeline import with_projection
from ..audit.projection import DEFAULT_SPLIT, Projection, signal_share

__all__ = ["sufficient_samples", "sufficient_bounds"]


def _side(centre, sigma, n, split, rng):
    """Held-out count and mean of one side."""
    m = int(rng.binomial(n, split))
    if m in (0, n):
        raise ValueError(f"split={split:g} leaves no outputs on one side of {n:,} rows")
    held_mean = centre + sigma * rng.standard_normal(centre.size) / math.sqrt(m)
    return m, held_mean


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


def sufficient_samples(centre_p, centre_q, sigma, n, rng, split=DEFAULT_SPLIT):
    r"""Projected outputs of the mean-difference route on :math:`N(c_P,\sigma^2I)` and :math:`N(c_Q,\sigma^2I)`.

    Parameters
    ----------
    centre_p, centre_q : array_like, shape (d,)
        The means of the two output laws.
    sigma : float
        The noise scale per coordinate.
    n : int
        Outputs per side.
    rng : numpy.random.Generator
    split : float, optional
        Fraction of each side held out to learn the direction.

    Returns
    -------
    x, y : ndarray
        The projected outputs that are bounded.
    info : renyi.audit.projection.Projection
        As :func:`~renyi.audit.projection.projected_samples` records it.
    """
    centres = [np.asarray(c, dtype=float) for c in (centre_p, centre_q)]
    if centres[0].shape != centres[1].shape or centres[0].ndim != 1:
        raise ValueError("centre_p and centre_q must be vectors of one length")
    if not (sigma > 0 and math.isfinite(sigma)):
        raise ValueError(f"sigma must be positive and finite, got {sigma!r}")
    if not 0.0 < split < 1.0:
        raise ValueError(f"split must be in (0, 1), got {split!r}")
    held = [_side(c, sigma, n, split, rng) for c in centres]
    w = held[0][1] - held[1][1]
    w /= np.linalg.norm(w)
    (x, mean_p, sq_p), (y, mean_q, sq_q) = (_bounded(c, sigma, n - m, w, rng) for c, (m, _) in zip(centres, held))
    share = signal_share(w, (x, y), (mean_p, mean_q), (sq_p, sq_q))
    info = Projection("mean-difference", centres[0].size, (held[0][0], held[1][0]), share)
    return x, y, info


def sufficient_bounds(centre_p, centre_q, sigma, n, orders, rng, split=DEFAULT_SPLIT):
    """The library's bounds on :func:`sufficient_samples`, with the projection recorded.

    Parameters
    ----------
    centre_p, centre_q, sigma, n, rng, split
        As for :func:`sufficient_samples`.
    orders : float or sequence of float

    Returns
    -------
    LowerBound or list of LowerBound
    """
    x, y, info = sufficient_samples(centre_p, centre_q, sigma, n, rng, split)
    return with_projection(rdp_lower_bound(x, y, orders), info)
