r"""The finite-sample study: discrete laws, exact divergences, and the rows of one replicate.

Five pairs of discrete laws, each with its exact :math:`D_\lambda` in both directions:

``binary_rr``
    Randomized response on one bit, :math:`\varepsilon_0=1.5`: two cells, support declared.
``randomized_response`` and ``shuffled_randomized_response``
    The Section IV mechanisms on the pair (21): 10-bit vectors (1,024 cells) and the count
    of ones after shuffling (11 cells).
``geometric``
    The two-sided geometric (discrete Laplace) law :math:`\propto e^{-\varepsilon|x|}`,
    :math:`\varepsilon=0.25`, against its shift by one: unbounded support, about a hundred
    cells seen at :math:`n=10^6`.
``rounded_laplace``
    Laplace noise of scale 2 rounded to the nearest integer, against its shift by one.

Each replicate gets the finite-sample bound (both directions, one event) and the delta-method
bound (forward at level 0.05, and both directions) at every order.  The study is defined in
:data:`~renyi.sweeps.definitions.SWEEPS` ``["finite_sample"]``; taught in the chapter *A bound
valid at every n* (``book/part1``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy import special

from ..audit import bounds_from_fit, rdp_lower_bound
from ..audit.counts import OutcomeCounts
from ..audit.mergeable import fit_from_outcomes
from ..mechanisms import ADJACENT_PAIR, MECHANISMS

__all__ = [
    "LAWS",
    "DiscreteLaw",
    "finite_sample_rows",
    "targets",
    "section4_pmfs",
    "delta_coverage_from_counts",
    "bounds_from_counts",
]


@dataclass(frozen=True)
class DiscreteLaw:
    r"""A pair of discrete laws on the integers, sampled exactly, with exact divergences.

    Attributes
    ----------
    name : str
    log_p, log_q : callable
        ``x -> log pmf`` on an integer array.
    sample_p, sample_q : callable
        ``(n, rng) -> n integer outputs``.
    span : int
        The sums for the exact divergence run over :math:`|x|\le` ``span``; beyond it both
        pmfs are below :math:`e^{-700}`.
    support : tuple or None
        The support to declare to the finite-sample bound, when it is finite and small.
    """

    name: str
    log_p: object
    log_q: object
    sample_p: object
    sample_q: object
    span: int
    support: tuple | None = None

    def target(self, order: float, *, reverse: bool = False) -> float:
        r""":math:`D_\lambda(P\|Q)` (or :math:`D_\lambda(Q\|P)`), a log-space sum over the support.

        Parameters
        ----------
        order : float
        reverse : bool, default False

        Returns
        -------
        float
        """
        x = np.arange(-self.span, self.span + 2)
        lp, lq = (self.log_q(x), self.log_p(x)) if reverse else (self.log_p(x), self.log_q(x))
        seen = np.isfinite(lp)  # outside the first law's support the term is 0
        return float(special.logsumexp(order * lp[seen] + (1 - order) * lq[seen]) / (order - 1))


def _geometric(eps: float) -> DiscreteLaw:
    r = math.exp(-eps)
    log_norm = math.log((1 - r) / (1 + r))

    def draw(n, rng, shift):
        # the difference of two geometric counts is two-sided geometric
        return rng.geometric(1 - r, n) - rng.geometric(1 - r, n) + shift

    return DiscreteLaw(
        "geometric",
        lambda x: log_norm - eps * np.abs(x),
        lambda x: log_norm - eps * np.abs(x - 1),
        lambda n, rng: draw(n, rng, 0),
        lambda n, rng: draw(n, rng, 1),
        span=int(800 / eps),
    )


def _rounded_laplace(scale: float) -> DiscreteLaw:
    def log_pmf(x):
        x = np.abs(x)
        # P(round(L) = x) = e^{-|x|/b} sinh(1/(2b)) for x != 0, and 1 - e^{-1/(2b)} at 0
        return np.where(x == 0, math.log(-math.expm1(-0.5 / scale)), -x / scale + math.log(math.sinh(0.5 / scale)))

    return DiscreteLaw(
        "rounded_laplace",
        log_pmf,
        lambda x: log_pmf(x - 1),
        lambda n, rng: np.rint(rng.laplace(0.0, scale, n)).astype(np.int64),
        lambda n, rng: np.rint(rng.laplace(1.0, scale, n)).astype(np.int64),
        span=int(800 * scale),
    )


def _binary_rr(eps0: float) -> DiscreteLaw:
    keep = math.exp(eps0) / (1 + math.exp(eps0))

    def log_pmf(x, truth):
        return np.where(x == truth, math.log(keep), np.where(np.abs(x - 0.5) == 0.5, math.log(1 - keep), -np.inf))

    return DiscreteLaw(
        "binary_rr",
        lambda x: log_pmf(x, 1),
        lambda x: log_pmf(x, 0),
        lambda n, rng: (rng.random(n) < keep).astype(np.int64),
        lambda n, rng: (rng.random(n) >= keep).astype(np.int64),
        span=2,
        support=(0, 1),
    )


#: The laws of the study by name (Section IV mechanisms are looked up in MECHANISMS).
LAWS = {law.name: law for law in (_binary_rr(1.5), _geometric(0.25), _rounded_laplace(2.0))}


def _draw(name, n, rng_p, rng_q):
    if name in LAWS:
        law = LAWS[name]
        return law.sample_p(n, rng_p), law.sample_q(n, rng_q), law.support
    x, x_prime = ADJACENT_PAIR
    return MECHANISMS[name].sample(x, n, rng_p), MECHANISMS[name].sample(x_prime, n, rng_q), None


def targets(name: str, order: float) -> tuple[float, float]:
    """(D(P||Q), D(Q||P)) of a case of the study, exactly.

    Parameters
    ----------
    name : str
        A case of the study.
    order : float

    Returns
    -------
    tuple of float
    """
    if name in LAWS:
        return LAWS[name].target(order), LAWS[name].target(order, reverse=True)
    mech = MECHANISMS[name]
    return mech.target(order), mech.reverse_target(order)


def finite_sample_rows(base: dict, name: str, n: int, orders, stream: np.random.Generator) -> list[dict]:
    """One replicate of the study: both bounds at every order, beside the exact divergences.

    Parameters
    ----------
    base : dict
        The row's identity (``mechanism``, ``n``, ``replicate``).
    name : str
        A key of :data:`LAWS` or a discrete mechanism of :data:`~renyi.mechanisms.MECHANISMS`.
    n : int
        Outputs per side.
    orders : sequence of float
    stream : numpy.random.Generator
        The replicate's stream, split into the two samples' (the held-out part of the
        finite-sample bound is the library's default, a fixed random subset).

    Returns
    -------
    list of dict
    """
    rng_p, rng_q = stream.spawn(2)
    a, b, support = _draw(name, n, rng_p, rng_q)
    fs = rdp_lower_bound(a, b, orders, method="finite-sample", support=support)
    forward = rdp_lower_bound(a, b, orders, discrete=True, direction="forward")
    both = rdp_lower_bound(a, b, orders, discrete=True)
    rows = []
    for f, d1, d2 in zip(fs, forward, both):
        sides = {d.direction: d for d in f.directions}
        target, target_reverse = targets(name, f.order)
        rows.append(
            base
            | {
                "order": f.order,
                "target": target,
                "target_reverse": target_reverse,
                "fs_forward": sides["P||Q"].lower,
                "fs_reverse": sides["Q||P"].lower,
                "fs_primal": f.primal,
                "cells": f.cells,
                "delta_forward": d1.lower,
                "delta_both": d2.lower,
                "direction_both": d2.direction,
            }
        )
    return rows


def section4_pmfs(name: str) -> tuple[np.ndarray, np.ndarray]:
    r"""The exact output laws of a discrete Section IV mechanism on the pair (21), cell by cell.

    Parameters
    ----------
    name : {"randomized_response", "shuffled_randomized_response"}

    Returns
    -------
    p, q : ndarray
        Randomized response: the :math:`2^m` bit vectors in lexicographic order, each bit
        kept with probability :math:`e^{\varepsilon_0}/(1+e^{\varepsilon_0})`; shuffled
        randomized response: the count of ones, :math:`0,\dots,m`.
    """
    x, x_prime = ADJACENT_PAIR
    mech = MECHANISMS[name]
    if name == "shuffled_randomized_response":
        return mech.count_pmf(x), mech.count_pmf(x_prime)
    if name != "randomized_response":
        raise ValueError(f"name must be a discrete Section IV mechanism, got {name!r}")
    keep = math.exp(mech.eps0) / (1 + math.exp(mech.eps0))
    bits = (np.arange(2 ** len(x))[:, None] >> np.arange(len(x))[::-1]) & 1

    def law(database):
        return np.prod(np.where(bits == np.asarray(database)[None, :], keep, 1 - keep), axis=1)

    return law(x), law(x_prime)


def delta_coverage_from_counts(name: str, n: int, orders, replicates: int, rng: np.random.Generator) -> dict:
    """Coverage of the forward delta-method bound at level 0.05, simulated from cell counts.

    The bound of discrete outputs depends on the outputs only through the count of each
    outcome, and ``n`` independent outputs have multinomial counts; drawing the counts costs
    one draw per cell instead of one per output, so thousands of replicates at
    :math:`n=10^7` take seconds.  Each replicate's bound is that of the Section IV sweep
    (:func:`~renyi.audit.bounds_from_fit`, ``direction="forward"``, on the fit of the counts).

    Parameters
    ----------
    name : {"randomized_response", "shuffled_randomized_response"}
    n : int
        Outputs per side.
    orders : sequence of float
    replicates : int
    rng : numpy.random.Generator

    Returns
    -------
    dict
        Order to the number of replicates whose bound lay at or below the exact divergence.
    """
    p, q = section4_pmfs(name)
    truth = {order: MECHANISMS[name].target(order) for order in orders}
    covered = dict.fromkeys(orders, 0)
    for _ in range(replicates):
        for bound in bounds_from_counts(rng.multinomial(n, p), rng.multinomial(n, q), orders):
            covered[bound.order] += int(bound.lower <= truth[bound.order])
    return covered


def bounds_from_counts(counts_p, counts_q, orders) -> list:
    """The forward delta-method bounds (level 0.05) of two samples given by their cell counts.

    Parameters
    ----------
    counts_p, counts_q : array_like of int
        Outputs per cell, cells numbered alike in both.
    orders : sequence of float

    Returns
    -------
    list of LowerBound
    """
    # only the outcomes seen, as counting the outputs themselves would list them
    seen = [OutcomeCounts({i: int(c[i]) for i in np.flatnonzero(c)}, int(np.sum(c))) for c in (counts_p, counts_q)]
    return bounds_from_fit(fit_from_outcomes(*seen), list(orders), direction="forward")
