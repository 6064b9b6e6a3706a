r"""Randomized response and its shuffled version: Section IV (c) and (d) of Kutta, Askin and Dunsche (2024).

Taught in the chapters *Section IV reproduction* and *Tuning and comparison* (``book/part1``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import ClassVar

import numpy as np
from scipy import special, stats

from .._docs import fill
from .._validation import as_int, as_positive_scalar
from ..divergence import renyi_divergence
from .base import (
    SAMPLE_CHUNK,
    SAMPLE_DOC,
    TARGET_DOC,
    Mechanism,
    check_database,
    check_n,
    check_rng,
    check_target_order,
    integer_order,
)

__all__ = ["RandomizedResponse", "ShuffledRandomizedResponse", "shuffled_rr_rdp"]


def _rr_keep_probability(eps0: float) -> float:
    return 1.0 / (1.0 + math.exp(-eps0))  # e^eps/(1+e^eps), overflow-free


@dataclass(frozen=True)
class RandomizedResponse(Mechanism):
    r"""Binary randomized response on every bit (local model), Section IV (c).

    Each :math:`x_i\in\{0,1\}` is reported truthfully with probability
    :math:`e^{\varepsilon_0}/(1+e^{\varepsilon_0})` and flipped otherwise; the
    output is the vector of the :math:`m` reports, returned as an
    ``(n, m)`` array of ``uint8``.  For the pair (21) only the first bit's law
    differs, so

    .. math::

        \varepsilon(\lambda)=\frac{1}{\lambda-1}\log\Big\{\Big(\tfrac{e^{\varepsilon_0}}{e^{\varepsilon_0}+1}\Big)^{\lambda}
        \Big(\tfrac{1}{e^{\varepsilon_0}+1}\Big)^{1-\lambda}+\Big(\tfrac{e^{\varepsilon_0}}{e^{\varepsilon_0}+1}\Big)^{1-\lambda}
        \Big(\tfrac{1}{e^{\varepsilon_0}+1}\Big)^{\lambda}\Big\}.

    Parameters
    ----------
    eps0 : float, default 1.5
        Local privacy parameter :math:`\varepsilon_0>0` of each bit.
    """

    name: ClassVar[str] = "randomized_response"
    discrete: ClassVar[bool] = True
    eps0: float = 1.5

    def __post_init__(self):
        self._normalise(eps0=as_positive_scalar(self.eps0, "eps0"))

    @fill(contract=SAMPLE_DOC)
    def sample(self, database, n, rng):
        """Draw ``n`` independent outputs on ``database`` (the hook of :meth:`Mechanism.sample`).

        {{contract}}
        """
        x, n, rng = check_database(database, binary=True), check_n(n), check_rng(rng)
        keep = _rr_keep_probability(self.eps0)
        out = np.empty((n, x.size), dtype=np.uint8)
        for start in range(0, n, SAMPLE_CHUNK):
            k = min(SAMPLE_CHUNK, n - start)
            flip = rng.random((k, x.size)) >= keep
            out[start : start + k] = np.bitwise_xor(x.astype(np.uint8)[None, :], flip)
        return out

    @fill(contract=TARGET_DOC)
    def target(self, order):
        r"""The exact :math:`D_\lambda(p\|q)` for the pair (21) (the hook of :meth:`Mechanism.target`).

        {{contract}}
        """
        order = check_target_order(order)
        keep = _rr_keep_probability(self.eps0)
        return renyi_divergence([keep, 1 - keep], [1 - keep, keep], order)


def shuffled_rr_rdp(eps0: float, m: int, order: int) -> float:
    r"""The shuffle-model RDP formula of Section IV (d), from Girgis et al. (2021).

    .. math::

        \begin{aligned}
        D_\lambda=\frac{1}{\lambda-1}\log\Big\{1&+\binom{\lambda}{2}\frac{(e^{\varepsilon_0}-1)^2}{m e^{\varepsilon_0}}
        \\
        &+\sum_{j=3}^{\lambda}\binom{\lambda}{j}\Big(\frac{e^{2\varepsilon_0}-1}{m e^{\varepsilon_0}}\Big)^{j}
        \mathbb E\Big[\Big(Z-\frac{m}{e^{\varepsilon_0}+1}\Big)^{j}\Big]\Big\},
        \end{aligned}

        Z\sim\mathrm{Bin}\big(m,\tfrac{1}{e^{\varepsilon_0}+1}\big),

    for integer :math:`\lambda\ge2`.  For the pair (21) it equals the exact
    divergence of the count-of-ones laws (checked in the tests).

    Parameters
    ----------
    eps0 : float
        Local randomizer's :math:`\varepsilon_0`.
    m : int
        Number of users.
    order : int
        Integer order :math:`\lambda\ge2`.

    Returns
    -------
    float

    References
    ----------
    :cite:t:`girgis2021renyi`.
    """
    whole_order = integer_order(order)
    if whole_order is None:
        raise ValueError(f"order must be an integer >= 2, got {order!r}")
    e = math.exp(eps0)
    q1 = 1.0 / (e + 1.0)
    z = np.arange(m + 1)
    pz = stats.binom(m, q1).pmf(z)
    total = 1.0 + special.comb(whole_order, 2) * (e - 1) ** 2 / (m * e)
    for j in range(3, whole_order + 1):
        total += special.comb(whole_order, j) * ((e * e - 1) / (m * e)) ** j * float(np.sum(pz * (z - m * q1) ** j))
    return math.log(total) / (whole_order - 1)


@dataclass(frozen=True)
class ShuffledRandomizedResponse(Mechanism):
    r"""Randomized response followed by a uniform shuffle, Section IV (d).

    **Output representation.**  The shuffled vector
    :math:`(R_{\pi(1)},\dots,R_{\pi(m)})` has the law "draw the number of ones
    :math:`C=\sum_iR_i`, then place them at uniformly random positions".  The
    second step is a fixed Markov kernel that does not depend on the database,
    and :math:`C` is a function of the shuffled vector; by the data-processing
    inequality applied in both directions, :math:`D_\lambda` between the laws of
    the shuffled vectors equals :math:`D_\lambda` between the laws of :math:`C`.
    The sampler therefore returns the count :math:`C\in\{0,\dots,m\}`
    (an ``int64`` array), which loses no information about the database and
    makes relative frequencies live on :math:`m+1` cells instead of :math:`2^m`.

    The target is :func:`shuffled_rr_rdp` (Girgis et al.) for integer orders
    and the exact divergence of the count laws otherwise.

    Parameters
    ----------
    eps0 : float, default 1.5
        Local privacy parameter of each user's randomizer.
    m : int, default 10
        Number of users (bits) shuffled.
    """

    name: ClassVar[str] = "shuffled_randomized_response"
    discrete: ClassVar[bool] = True
    eps0: float = 1.5
    m: int = 10

    def __post_init__(self):
        as_int(self.m, "m")
        self._normalise(eps0=as_positive_scalar(self.eps0, "eps0"))

    @fill(contract=SAMPLE_DOC)
    def sample(self, database, n, rng):
        """Draw ``n`` independent outputs on ``database`` (the hook of :meth:`Mechanism.sample`).

        {{contract}}
        """
        x, n, rng = check_database(database, binary=True), check_n(n), check_rng(rng)
        keep = _rr_keep_probability(self.eps0)
        ones = int(x.sum())
        # Reports of the ones stay 1 w.p. keep; reports of the zeros become 1 w.p. 1 - keep.
        return rng.binomial(ones, keep, size=n) + rng.binomial(x.size - ones, 1 - keep, size=n)

    def count_pmf(self, database) -> np.ndarray:
        """Exact law of the number of ones in the shuffled report, on {0, ..., m}."""
        x = check_database(database, binary=True)
        keep = _rr_keep_probability(self.eps0)
        ones = int(x.sum())
        return np.convolve(
            stats.binom(ones, keep).pmf(np.arange(ones + 1)),
            stats.binom(x.size - ones, 1 - keep).pmf(np.arange(x.size - ones + 1)),
        )

    @fill(contract=TARGET_DOC)
    def target(self, order):
        r"""The exact :math:`D_\lambda(p\|q)` for the pair (21) (the hook of :meth:`Mechanism.target`).

        {{contract}}
        """
        order = check_target_order(order)
        # Girgis et al.'s sum has order terms of alternating size; beyond 64 it is evaluated as the
        # exact divergence of the count laws, which it equals (tests), in log space.
        if integer_order(order) is not None and order <= 64:
            return shuffled_rr_rdp(self.eps0, self.m, int(order))
        x, x_prime = np.eye(1, self.m).ravel(), np.zeros(self.m)
        return renyi_divergence(self.count_pmf(x), self.count_pmf(x_prime), order)

    def reverse_target(self, order):
        r""":math:`D_\lambda(q\|p)` of the count laws; not equal to ``target(order)``."""
        order = check_target_order(order)
        x, x_prime = np.eye(1, self.m).ravel(), np.zeros(self.m)
        return renyi_divergence(self.count_pmf(x_prime), self.count_pmf(x), order)
