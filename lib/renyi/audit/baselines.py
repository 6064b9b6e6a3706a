r"""Estimators the floored softmax is compared with (Part I, chapter on tuning).

* :func:`naive_plugin` — :math:`D_\lambda(\hat p,\hat q)` with no floor;
* :func:`hard_floor_plugin` — :math:`D_\lambda(\hat p,\hat q\lor\tau)`, the floor
  of Askin, Kutta and Dette (2022), eq. (11);
* :func:`histogram_renyi` — fixed-bin histograms in the style of Gorla et al.
  (2022): relative frequencies of bins, and ``nan`` when some bin has
  :math:`\hat p>0=\hat q` (the estimate is undefined there);
* :func:`compare_estimators` — all of them, with the floored-softmax estimate and the
  lower bound, on the same pairs of samples.
"""

from __future__ import annotations

import math

import numpy as np

from .._validation import as_generator, as_int, as_positive_scalar, as_rdp_order, as_real_array
from ..divergence import log_integral

__all__ = ["ESTIMATORS", "compare_estimators", "naive_plugin", "hard_floor_plugin", "histogram_renyi"]

#: The estimators of :func:`compare_estimators`, in the order of its table.
ESTIMATORS = ("naive", "hard floor", "histogram", "softmax estimate", "lower bound")


def naive_plugin(p_hat, q_hat, order, dx=1.0) -> float:
    r""":math:`D_\lambda(\hat p,\hat q)`; ``inf`` where :math:`\hat q=0<\hat p`.

    Parameters
    ----------
    p_hat, q_hat : array_like
    order : float
    dx : float, default 1

    Returns
    -------
    float
    """
    order = as_rdp_order(order)
    p, q = np.asarray(p_hat, float), np.asarray(q_hat, float)
    if np.any((p > 0) & (q <= 0)):
        return math.inf
    on = p > 0
    return log_integral(order * np.log(p[on]) + (1 - order) * np.log(q[on]), dx) / (order - 1)


def hard_floor_plugin(p_hat, q_hat, order, floor, dx=1.0) -> float:
    r""":math:`D_\lambda(\hat p,\max(\hat q,\tau))` (eq. 11 of Kutta et al.).

    Parameters
    ----------
    p_hat, q_hat : array_like
    order : float
    floor : float
        :math:`\tau>0`.
    dx : float, default 1

    Returns
    -------
    float
    """
    tau = as_positive_scalar(floor, "floor")
    return naive_plugin(p_hat, np.maximum(np.asarray(q_hat, float), tau), order, dx)


def histogram_renyi(samples_p, samples_q, order, bins: int = 50, range_=None) -> float:
    r"""Fixed-bin histogram plug-in; ``nan`` if a bin has :math:`\hat p>0` and :math:`\hat q=0`.

    Follows the histogram estimator of Gorla et al. (2022), which assumes
    densities bounded away from zero on a known interval.  Returning ``nan``
    (instead of ``inf``) marks the failure mode the floor was invented for.

    Parameters
    ----------
    samples_p, samples_q : array_like, 1-D
    order : float
    bins : int, default 50
    range_ : (float, float), optional
        Histogram range; default the range of both samples.

    Returns
    -------
    float
    """
    order = as_rdp_order(order)
    a = as_real_array(samples_p, "samples_p", ndim=1)
    b = as_real_array(samples_q, "samples_q", ndim=1)
    if range_ is None:
        range_ = (min(a.min(), b.min()), max(a.max(), b.max()))
    p, edges = np.histogram(a, bins=bins, range=range_)
    q, _ = np.histogram(b, bins=edges)
    p, q = p / a.size, q / b.size
    if np.any((p > 0) & (q == 0)):
        return math.nan
    return naive_plugin(p, q, order)


def compare_estimators(
    mechanism, order, *, n: int = 10_000, reps: int = 50, rng, bins: int = 50, databases=None
) -> dict[str, np.ndarray]:
    r"""Every estimator of this module, the floored softmax and its lower bound, on shared samples.

    Each replicate draws one pair of samples from the pair of databases and evaluates, on
    that same pair: the naive plug-in and the hard-floor plug-in on the audit's own KDE grid
    (bandwidth and floor :math:`\tau_0` of :func:`~renyi.audit.rdp_lower_bound`, exact tails
    so that the unfloored ratio is not decided by FFT round-off), the histogram plug-in,
    the floored-softmax estimate and the lower bound (forward direction, as in the paper).

    Parameters
    ----------
    mechanism : Mechanism
        A continuous mechanism of :mod:`renyi.mechanisms`.
    order : float
        The Rényi order :math:`\lambda>1`.
    n : int, default 10000
        Samples per side and replicate.
    reps : int, default 50
        Replicates.
    rng : numpy.random.Generator
        The only source of randomness (p, then q, in every replicate).
    bins : int, default 50
        Bins of the histogram plug-in.
    databases : (array_like, array_like), optional
        The adjacent pair; default ``ADJACENT_PAIR`` of :mod:`renyi.mechanisms` (eq. 21).

    Returns
    -------
    dict of str to ndarray
        One array of ``reps`` values per entry of :data:`ESTIMATORS`; ``nan`` marks an
        undefined histogram estimate.

    References
    ----------
    :cite:t:`kutta2024lower`, Section V; :cite:t:`askin2022statistical`, eq. (11).

    Examples
    --------
    >>> import numpy as np
    >>> from renyi.audit.baselines import ESTIMATORS, compare_estimators
    >>> from renyi.mechanisms import MECHANISMS
    >>> out = compare_estimators(MECHANISMS["gaussian"], 2, n=2000, reps=2,
    ...                          rng=np.random.default_rng(0))
    >>> list(out) == list(ESTIMATORS), out["lower bound"].shape
    (True, (2,))
    """
    from ..mechanisms import ADJACENT_PAIR, Mechanism
    from .density import kde_on_grid
    from .pipeline import rdp_lower_bound  # the audit does not import this module: no cycle

    if not isinstance(mechanism, Mechanism) or mechanism.discrete:
        raise TypeError(f"mechanism must be a continuous Mechanism, got {mechanism!r}")
    order = as_rdp_order(order)
    n, reps = as_int(n, "n", minimum=2), as_int(reps, "reps")
    rng = as_generator(rng)
    x, x_prime = ADJACENT_PAIR if databases is None else databases
    out = {name: np.empty(reps) for name in ESTIMATORS}
    for i in range(reps):
        a, c = mechanism.sample(x, n, rng), mechanism.sample(x_prime, n, rng)
        bound = rdp_lower_bound(a, c, order, direction="forward")
        grid = kde_on_grid(a, c, bound.bandwidth, tails="relative")
        out["naive"][i] = naive_plugin(grid.p, grid.q, order, grid.dx)
        out["hard floor"][i] = hard_floor_plugin(grid.p, grid.q, order, bound.floor, grid.dx)
        out["histogram"][i] = histogram_renyi(a, c, order, bins=bins)
        out["softmax estimate"][i] = bound.estimate
        out["lower bound"][i] = bound.lower
    return out
