r"""A returned channel checked in decimal arithmetic: its α-lifts against the budget, and its χ².

Double precision computes :math:`\Phi_\alpha(q)=\sum_x P_X(P_{X|U}/P_X)^\alpha` with an
absolute error of about :math:`10^{-16}`, while the budget :math:`e^{\alpha\epsilon}-1` is
:math:`2\cdot10^{-13}` at :math:`\alpha=2,\ \epsilon=10^{-13}`: there a channel that double
precision calls feasible can exceed the budget by :math:`10^{-3}` of itself.  So whether a
returned channel is feasible, and what its utility is, is decided here once more, with the
channel's floats taken as exact numbers and every operation carried out with enough decimal
digits to resolve the budget (:func:`digits_for`).

Everything is defined from :math:`(A, P_Y, P_{U|Y})` alone:
:math:`P_{X|U}(\cdot|u)\propto\sum_y A_{xy}P_Y(y)P_{U|Y}(u|y)` and
:math:`P_X\propto AP_Y`, each normalised, so that the trivial output :math:`q_u=P_Y` has
:math:`\Phi=1` exactly even where the floats of :math:`A` do not sum to one.

Cost: :math:`O(|\mathcal U||\mathcal X||\mathcal Y|)` decimal operations per check; it runs
on returned mechanisms only, never inside a search.
"""

from __future__ import annotations

import decimal
import functools
import math
import time
from decimal import Decimal

import numpy as np

__all__ = ["digits_for", "budget", "lift_excess", "chi2", "round_down", "check_seconds"]

#: Decimal digits beyond those the budget's magnitude needs.
GUARD_DIGITS = 40
#: The last check's inputs (their exact bytes) and result: a returned channel is checked, then
#: its budget use is read from the same numbers.
_LAST: list = [(None, ())]


def digits_for(order: float, eps: float) -> int:
    """Decimal digits that resolve ``Phi - 1`` relative to the budget ``e^(order*eps) - 1``."""
    if order * eps > 1:  # a budget above e - 1 needs no digits beyond the guard
        return GUARD_DIGITS
    scale = math.expm1(order * eps) if eps > 0 else 1e-30
    return GUARD_DIGITS + max(0, math.ceil(-math.log10(scale)))


def _context(digits: int) -> decimal.Context:
    return decimal.Context(prec=digits, Emin=-decimal.MAX_EMAX, Emax=decimal.MAX_EMAX)


def budget(order: float, eps: float, digits: int) -> Decimal:
    r""":math:`e^{\alpha\epsilon}-1` to ``digits`` digits (the floats ``order`` and ``eps`` exact)."""
    ctx = _context(digits)
    return ctx.subtract(ctx.exp(ctx.multiply(Decimal(order), Decimal(eps))), Decimal(1))


def _decimals(values) -> np.ndarray:
    """An object array of the floats' exact Decimal values."""
    values = np.asarray(values, dtype=float)
    return np.array([Decimal(float(v)) for v in values.ravel()], dtype=object).reshape(values.shape)


def _marginals(a, p_y, channel, ctx):
    """(P_{X|U} columns, P_X), normalised, and the output weights p_u, as Decimals.

    Called inside ``decimal.localcontext(ctx)``: the object arrays' products and sums (numpy
    adds them in index order, as ``sum`` would) are rounded in that context.
    """
    a, p_y, channel = _decimals(a), _decimals(p_y), _decimals(channel)
    p_xy = a * p_y[None, :]
    p_x = [ctx.add(Decimal(0), sum(row, Decimal(0))) for row in p_xy]
    total_x = sum(p_x, Decimal(0))
    p_x = [ctx.divide(v, total_x) for v in p_x]
    posteriors, weights = [], []
    for row in channel:
        joint = list(p_xy.dot(row)) if row.size else [Decimal(0)] * len(p_x)
        mass = sum(joint, Decimal(0))
        posteriors.append([ctx.divide(v, mass) for v in joint])
        weights.append(sum(p_y * row, Decimal(0)))
    return posteriors, p_x, weights


def lift_excess(a, p_y, channel, order: float, digits: int) -> list[Decimal]:
    r""":math:`\Phi_\alpha(u)-1=\sum_x P_X\big((P_{X|U}(x|u)/P_X(x))^\alpha-1\big)` of every output ``u``.

    Parameters
    ----------
    a : array_like, shape (n_x, n_y)
        :math:`A=P_{X|Y}`.
    p_y : array_like, shape (n_y,)
    channel : array_like, shape (n_u, n_y)
        :math:`P_{U|Y}`, rows u.
    order : float
        :math:`\alpha>1`.
    digits : int
        Decimal digits of every operation (:func:`digits_for`).

    Returns
    -------
    list of Decimal
        One per output; the channel meets the budget iff each is at most :func:`budget`.
    """
    key = tuple(np.ascontiguousarray(x, dtype=float).tobytes() for x in (a, p_y, channel))
    key += (np.shape(a), np.shape(channel), float(order), digits)
    last_key, last_out = _LAST[0]  # (one read of one tuple: safe across threads)
    if last_key == key:  # (a channel checked, then its budget use read: one computation)
        return list(last_out)
    with decimal.localcontext(_context(digits)) as ctx:
        posteriors, p_x, _ = _marginals(a, p_y, channel, ctx)
        alpha = Decimal(order)
        whole = order == int(order) and order <= 64
        out = []
        for post in posteriors:
            total = Decimal(0)
            for px, pxu in zip(p_x, post):
                ratio = ctx.divide(pxu, px)
                total += px * ((ratio ** int(order) if whole else ctx.power(ratio, alpha)) - 1)
            out.append(total)
    _LAST[0] = (key, tuple(out))
    return out


def check_seconds(n_u: int, n_x: int, n_y: int) -> float:
    r"""An estimate of the seconds one :func:`lift_excess` of these sizes takes.

    Its cost grows as :math:`O(n_u n_x n_y)`, the decimal products of the joint law; the time of
    one product is read once per process from a small product of the same kind.  A search that
    must return within a time limit sets this much aside for the check of the channel it
    returns (``make bench-scale-large``, :math:`|\mathcal Y|=200`).
    """
    return _seconds_per_product() * n_u * n_x * n_y


@functools.cache
def _seconds_per_product() -> float:
    size = 48
    matrix = _decimals(np.linspace(0.01, 0.99, size * size).reshape(size, size))
    with decimal.localcontext(_context(GUARD_DIGITS)):
        start = time.perf_counter()
        for row in matrix[:4]:
            matrix.dot(row)
        return (time.perf_counter() - start) / (4 * size * size)


def chi2(p_y, channel, digits: int) -> float:
    r""":math:`\chi^2(Y;U)=\sum_{u,y}P_Y(y)(P_{U|Y}(u|y)-P_U(u))^2/P_U(u)` of a channel, rows u.

    The form with differences has no cancellation against the 1 of
    :math:`\sum P(u,y)^2/(P_UP_Y)-1`, which at a budget of :math:`10^{-13}` would keep only
    three digits of the value.  Returned as the largest float not above the decimal value,
    so that a utility reported as a lower bound is one.
    """
    with decimal.localcontext(_context(digits)):
        p_y = [Decimal(float(v)) for v in np.asarray(p_y)]
        mass = sum(p_y, Decimal(0))  # the floats of P_Y need not sum to 1 exactly
        total = Decimal(0)
        for row in np.asarray(channel):
            row = [Decimal(float(v)) for v in row]
            # one division, so that a constant row has P_U(u) equal to it exactly
            p_u = sum((py * c for py, c in zip(p_y, row)), Decimal(0)) / mass
            if p_u == 0:
                continue
            total += sum((py * (c - p_u) ** 2 for py, c in zip(p_y, row)), Decimal(0)) / (mass * p_u)
    return round_down(total)


def round_down(value: Decimal) -> float:
    """The largest float that is at most ``value``."""
    nearest = float(value)
    return nearest if nearest <= value else math.nextafter(nearest, -math.inf)
