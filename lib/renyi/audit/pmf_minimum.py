r"""The smallest Rényi divergence between two boxes of pmfs, certified from below.

For :math:`\lambda>1` the function :math:`F(p,q)=\sum_i p_i^\lambda q_i^{1-\lambda}` is jointly
convex (each term is the perspective of :math:`x^\lambda`), and
:math:`D_\lambda(p\|q)=\log F(p,q)/(\lambda-1)`.  Given boxes
:math:`a\le p\le b`, :math:`c\le q\le d` (cell by cell), :func:`box_minimum` brackets

.. math::

    F^\star=\min\{F(p,q):\ a\le p\le b,\ c\le q\le d,\ \textstyle\sum_ip_i=\sum_iq_i=1\}

between a *certified* value, proved by Lagrangian duality, and a *primal* value, attained at a
feasible pair of pmfs.  :mod:`renyi.audit.finite_sample` turns it into a lower bound for
:math:`D_\lambda` that holds at every sample size.

**The dual.**  For any multipliers :math:`(\mu,\nu)`, weak duality gives

.. math::

    g(\mu,\nu)=-\mu-\nu+\sum_i\min_{p_i\in[a_i,b_i],\,q_i\in[c_i,d_i]}
    \bigl[p_i^\lambda q_i^{1-\lambda}+\mu p_i+\nu q_i\bigr]\ \le\ F^\star .

Each cell's function is convex and positively homogeneous of degree 1, hence linear along rays
from the origin, so its minimum over the rectangle lies on an edge; on each edge the minimiser
is a stationary point in closed form, clipped to the edge.  The value there is lowered by the
convexity gap :math:`\max(h'(t)\,(e-t))` over the edge's ends :math:`e` (zero at an exact
stationary point or at a minimising end), so that a stationary point rounded in floating point
never certifies too much.  A relative rounding allowance is subtracted from the sum.

**The multipliers** are searched in the one-parameter family that the Karush–Kuhn–Tucker
conditions give when the cell without a box (the *free* cell, pinned by :math:`\sum p=1`) is
interior: :math:`\mu=-\lambda r^{\lambda-1}`, :math:`\nu=(\lambda-1)r^\lambda`, with :math:`r`
the free cell's ratio :math:`p/q`.  Any :math:`r` gives a valid certificate; the search only
makes it tight.

**The primal.**  For the same :math:`r`, a cell whose box holds no point of ratio :math:`r` sits
at its corner nearest the ray (:math:`(a_i,d_i)` or :math:`(b_i,c_i)`); the other cells sit on
the ray, and the free cell takes what is left of the unit mass.  The pair is feasible whenever
the free cell's share is non-negative, and :math:`F` there is an upper bound for
:math:`F^\star`.  Both ends are computed in log space (:math:`F` exceeds :math:`e^{700}` for
many-cell laws at large orders).

Cost: :math:`O(k\,c)` for :math:`k` cells and :math:`c\le` :data:`MAX_CANDIDATES` trial ratios,
then a bounded scalar search of :math:`O(k)` per step (``make bench`` case *finite-sample*).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy import optimize, special

__all__ = ["BoxMinimum", "box_minimum", "MAX_CANDIDATES"]

#: Trial ratios r evaluated before the scalar refinement (breakpoints of the boxes, thinned).
MAX_CANDIDATES = 256
#: Relative allowance for the floating-point rounding of the dual's sum.
_ROUNDING = 1e-12
_EPS = np.finfo(float).eps
#: A relative gap above which both multipliers are searched (not only the one-parameter family).
_CLOSE = 1e-9
#: Stands in for an infinite dual value inside the scalar and simplex searches.
_FAR = 1e300


@dataclass(frozen=True)
class BoxMinimum:
    r"""A certified bracket for :math:`\log F^\star` over two boxes of pmfs.

    Attributes
    ----------
    log_certified : float
        A proved lower bound for :math:`\log F^\star` (``-inf`` when the dual found nothing
        positive; :math:`\log F^\star\ge0` always holds on the simplex).
    log_primal : float
        :math:`\log F` at a feasible pair of pmfs, an upper bound for :math:`\log F^\star`.
    ratio : float
        The free cell's ratio :math:`r` of the best certificate.
    """

    log_certified: float
    log_primal: float
    ratio: float

    def divergence(self, order: float) -> tuple[float, float]:
        r"""The bracket as divergences: :math:`\max(0,\log F)/(\lambda-1)` at both ends.

        Parameters
        ----------
        order : float
            :math:`\lambda>1`.

        Returns
        -------
        tuple of float
            (certified, primal): a lower bound for :math:`\min D_\lambda` over the boxes, and
            the divergence at a feasible pair.
        """
        certified = max(0.0, self.log_certified) / (order - 1.0)
        return certified * (1.0 - _ROUNDING), max(0.0, self.log_primal) / (order - 1.0)


def _log_phi(log_p, log_q, order):
    """Log of p^λ q^(1-λ) with 0^λ·q^(1-λ) = 0 (also at q = 0) and p^λ·0^(1-λ) = inf."""
    with np.errstate(invalid="ignore"):
        out = order * log_p + (1.0 - order) * log_q
    out = np.where(np.isneginf(log_p), -np.inf, out)
    return np.where(np.isneginf(log_q) & ~np.isneginf(log_p), np.inf, out)


def _lowered(value, gap, linear=0.0):
    """``value + gap``, except where the value at the stationary point overflowed to ``inf``.

    There the power term exceeds the largest float and the linear term is at least
    ``linear`` (a negative multiplier times an end of at most 1), so their sum is above
    ``min(_FAR, max_float + linear)``, the value used; the gap would turn ``inf`` into ``nan``
    (``inf * 0``, ``inf - inf``), which voided the whole dual.
    """
    floor = min(_FAR, float(np.finfo(float).max) + min(linear, 0.0))
    return np.where(np.isposinf(value), floor, value + gap)


def _edge_q(p_end, c, d, nu, order, shift):
    """Lower bound of min over q in [c, d] of p^λ q^(1-λ) e^-shift + nu q, p fixed (vectorised).

    The caller adds the edge's constant mu p.
    """
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        log_p = np.log(p_end)
        if nu <= 0:  # non-increasing in q: the upper end is exact
            return np.exp(_log_phi(log_p, np.log(d), order) - shift) + nu * d
        log_t = log_p + (math.log(order - 1.0) - shift - math.log(nu)) / order
        t = np.clip(np.exp(log_t), c, d)
        log_t = np.log(t)
        value = np.exp(_log_phi(log_p, log_t, order) - shift) + nu * t
        slope = (1.0 - order) * np.exp(order * (log_p - log_t) - shift) + nu
        # convexity: h(e) >= h(t) + h'(t)(e - t) on the whole edge
        value = _lowered(value, np.minimum(slope * (c - t), slope * (d - t)))
    # p = 0: the term vanishes, the edge is linear in q
    return np.where(p_end == 0, nu * c, value)


def _edge_p(q_end, a, b, mu, order, shift):
    """Lower bound of min over p in [a, b] of p^λ q^(1-λ) e^-shift + mu p, q fixed (vectorised).

    The caller adds the edge's constant nu q.
    """
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        log_q = np.log(q_end)
        if mu >= 0:  # non-decreasing in p: the lower end is exact
            value = np.exp(_log_phi(np.log(a), log_q, order) - shift) + mu * a
        else:
            log_t = log_q + (math.log(-mu) + shift - math.log(order)) / (order - 1.0)
            t = np.clip(np.exp(log_t), a, b)
            log_t = np.log(t)
            value = np.exp(_log_phi(log_t, log_q, order) - shift) + mu * t
            slope = order * np.exp((order - 1.0) * (log_t - log_q) - shift) + mu
            slope = np.where(t == 0, mu, slope)
            value = _lowered(value, np.minimum(slope * (a - t), slope * (b - t)), mu)
    # q = 0: only p = 0 is finite
    return np.where(q_end == 0, np.where(a == 0, 0.0, np.inf), value)


def _multipliers(log_r, order, shift):
    """(μ, ν) e^-shift of the family that the free cell's ratio r gives (module docstring)."""
    mu = -order * math.exp(min((order - 1.0) * log_r - shift, 700.0))
    nu = (order - 1.0) * math.exp(min(order * log_r - shift, 700.0))
    return mu, nu


def _dual(multipliers, boxes, order, shift):
    """g(μ, ν) e^-shift, lowered by its rounding allowance (``-inf`` if it overflows).

    ``boxes`` include the free cell's, [0, 1] on both sides: its minimum is 0 only on the
    one-parameter family.
    """
    mu, nu = multipliers
    a, b, c, d = boxes
    cells = np.minimum.reduce(
        [
            _edge_q(a, c, d, nu, order, shift) + mu * a,
            _edge_q(b, c, d, nu, order, shift) + mu * b,
            _edge_p(c, a, b, mu, order, shift) + nu * c,
            _edge_p(d, a, b, mu, order, shift) + nu * d,
        ]
    )
    total = -mu - nu + float(np.sum(cells))
    if not math.isfinite(total):
        return -math.inf
    # every part of the sum, in magnitude: the exponentials carry order·|log| relative error
    exponent = order * (np.abs(np.log(np.maximum(b, 1e-300))) + np.abs(np.log(np.maximum(d, 1e-300)))) + abs(shift)
    with np.errstate(over="ignore"):
        size = abs(mu) + abs(nu) + float(np.sum(np.abs(cells))) + abs(mu) * float(b.sum()) + abs(nu) * float(d.sum())
        slack = _ROUNDING * size + 8 * _EPS * float(np.sum(np.abs(cells) * (exponent + 10.0)))
    return total - slack if math.isfinite(slack) else -math.inf


def _primal(log_r, boxes, order):
    """Log F at the feasible pair built for ratio r (``inf`` if the free cell's share is negative)."""
    a, b, c, d = boxes
    r = math.exp(log_r)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        low = a > r * d  # every point of the box has ratio above r: corner (a, d)
        high = b < r * c  # every point has ratio below r: corner (b, c)
        on_ray = ~(low | high)
        p_ray = np.maximum(a, r * c)  # the ray's entry into the box
        p = np.where(low, a, np.where(high, b, p_ray))
        q = np.where(low, d, np.where(high, c, p_ray / r))
        q = np.where(on_ray & (r == 0), np.maximum(c, 0.0), q)
    p_free, q_free = 1.0 - math.fsum(p), 1.0 - math.fsum(q)
    if p_free < 0 or q_free < 0:
        return math.inf
    with np.errstate(divide="ignore"):  # an empty cell is log 0 = -inf, which _log_phi reads
        log_terms = _log_phi(np.log(np.append(p, p_free)), np.log(np.append(q, q_free)), order)
    return float(special.logsumexp(log_terms))


def _log_ratios(boxes):
    """Trial values of log r: the breakpoints a/d and b/c of every box, finite ones only."""
    a, b, c, d = boxes
    # the free cell's ratio when every box sits at one of its ends, or at its middle
    ends = ((a, d), (b, c), ((a + b) / 2, (c + d) / 2))
    rest_p, rest_q = (np.array([1.0 - math.fsum(pair[i]) for pair in ends]) for i in (0, 1))
    with np.errstate(divide="ignore", invalid="ignore"):
        rest = np.log(np.abs(rest_p)) - np.log(np.abs(rest_q))
        values = np.concatenate([np.log(a) - np.log(d), np.log(b) - np.log(c), rest, [0.0]])
    values = np.unique(values[np.isfinite(values)])
    if values.size > MAX_CANDIDATES:
        values = values[np.linspace(0, values.size - 1, MAX_CANDIDATES).round().astype(int)]
    return values


def box_minimum(lower_p, upper_p, lower_q, upper_q, order) -> BoxMinimum:
    r"""Bracket :math:`\log\min F` over two boxes and the simplex (module docstring).

    Parameters
    ----------
    lower_p, upper_p, lower_q, upper_q : ndarray
        The boxes of every cell but the free one, in :math:`[0,1]`; the free cell is limited
        only by the simplex.
    order : float
        :math:`\lambda>1`.

    Returns
    -------
    BoxMinimum

    Examples
    --------
    Two cells, one box each side: the closest pair is at the boxes' facing ends.

    >>> import numpy as np
    >>> m = box_minimum(np.array([0.6]), np.array([0.7]), np.array([0.3]), np.array([0.4]), 2.0)
    >>> bool(np.isclose(m.log_primal, np.log(0.6**2 / 0.4 + 0.4**2 / 0.6)))
    True
    >>> bool(m.log_certified <= m.log_primal)
    True
    """
    boxes = tuple(np.asarray(x, dtype=float) for x in (lower_p, upper_p, lower_q, upper_q))
    trials = _log_ratios(boxes)
    primal = np.array([_primal(t, boxes, order) for t in trials])
    best = int(np.argmin(primal))
    log_primal = float(primal[best])
    if not math.isfinite(log_primal):  # cannot happen for boxes that hold the estimates
        raise ValueError("the boxes hold no pair of pmfs")
    shift = log_primal  # the dual in units of the primal value, so that no exponential overflows
    full = tuple(np.append(x, end) for x, end in zip(boxes, (0.0, 1.0, 0.0, 1.0)))
    dual = np.array([_dual(_multipliers(t, order, shift), full, order, shift) for t in trials])
    top = int(np.argmax(dual))
    lo = trials[max(top - 1, 0)] - (1.0 if top == 0 else 0.0)
    hi = trials[min(top + 1, trials.size - 1)] + (1.0 if top == trials.size - 1 else 0.0)
    found = optimize.minimize_scalar(
        lambda t: -max(_dual(_multipliers(t, order, shift), full, order, shift), -_FAR),
        bounds=(lo, hi),
        method="bounded",
        options={"xatol": 1e-10},
    )
    log_r, value = (found.x, -found.fun) if -found.fun > dual[top] else (trials[top], dual[top])
    log_primal = min(log_primal, _primal(log_r, boxes, order))
    if value <= 0 or math.log(value) + shift < log_primal - _CLOSE * (1.0 + log_primal):
        # the free cell sits on the simplex's edge, off the family: both multipliers free
        start = np.array(_multipliers(log_r, order, shift))
        found = optimize.minimize(
            lambda m: -max(_dual(m, full, order, shift), -_FAR),  # finite, for the simplex's arithmetic
            start,
            method="Nelder-Mead",
            options={"xatol": 1e-12, "fatol": 1e-14, "maxiter": 2000},
        )
        value = max(value, -found.fun)
    log_certified = math.log(value) + shift if value > 0 else -math.inf
    return BoxMinimum(log_certified, log_primal, math.exp(log_r))
