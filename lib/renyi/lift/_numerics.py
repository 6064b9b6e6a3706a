r"""Numerical tolerances of Part II, and the one bisection every radial search uses.

Each tolerance is named for what it decides, so a maintainer who changes one sees every
place it acts.  None is a modelling choice: all sit far below the accuracy the chapters
print (6-7 significant digits) and far above double-precision round-off where they compare
computed quantities.
"""

from __future__ import annotations

import numpy as np

__all__ = ["bisect_feasible", "power"]

#: Floor for denominators and arguments of logs: far below any quantity that matters, so
#: 0/0 and log(0) become harmless large numbers instead of nan.
TINY = 1e-300
#: A component of a direction smaller than this is zero: it neither hits a facet q_y = 0 nor
#: bounds a step length (directions are unit vectors or differences of pmfs).
ZERO_COMPONENT = 1e-15
#: Two cut normals with a dot product below this are parallel to the ray (no intersection);
#: also the smallest determinant of a 2x2 system that is solved for a ridge vertex.
PARALLEL = 1e-14
#: A candidate direction (or the difference of a posterior from P_Y) shorter than this is the
#: centre itself and is dropped.
DEGENERATE_NORM = 1e-13
#: Mechanism outputs with a weight below this are dropped from the reported support.
NEGLIGIBLE_WEIGHT = 1e-13
#: Tolerance of ``LiftMechanism.feasible``, relative to the budget e^(alpha eps) - 1 (not to
#: the lift): Phi - 1 is checked in decimal arithmetic, so this is the slack a mechanism
#: designed in double precision may use, the same fraction of the budget at every eps.
#: ``global_optimum`` allows none.
FEASIBILITY_RTOL = 1e-10
#: Largest alpha * eps whose e^(alpha eps) is a finite double (log of the largest is 709.8);
#: beyond it budgets are compared in log space.
LOG_BUDGET_MAX = 700.0
#: At eps = 0 the budget is 0 and a posterior moves in the null space of A, which double
#: precision represents only to round-off: Phi - 1 up to this is feasible there.
ZERO_BUDGET_ATOL = 1e-15
#: Stopping rule of the scalar bisections: the bracket is this small relative to its top.
BISECT_RTOL = 4e-16
#: Most bisection steps (2^-200 of the start interval: the stopping rule acts first).
BISECT_STEPS = 200
#: Stopping tolerance (``ftol``) of the SLSQP polishes: as tight as SLSQP accepts.
SLSQP_FTOL = 1e-16
#: Largest integer (or half-integer) exponent that :func:`power` computes by multiplication.
MULTIPLIED_EXPONENT = 16


def power(x, exponent):
    r"""``x ** exponent`` elementwise, multiplied out for the common orders.

    ``x ** exponent`` elementwise, by repeated squaring where ``exponent`` is a whole or
    half number in ``[0, MULTIPLIED_EXPONENT]`` (the orders used in practice: 2, 3, 5, 2.5 and
    their :math:`\alpha-1`, :math:`\alpha-2`).

    Why: ``np.power`` with a float exponent is a libm call per element, on CPUs without
    AVX-512 tens of times the cost of a multiplication, and :math:`\Phi_\alpha` and its
    gradient are most of the box and cone bounds' arithmetic: on such a CPU the Part II
    cases of ``make bench`` take several times as long with ``np.power``.  Each
    multiplication rounds once, so the result is within a few ulp of the correctly
    rounded power (``np.power``: within one), far below every tolerance in this module;
    non-negative ``x`` is all the callers pass.

    Examples
    --------
    >>> import numpy as np
    >>> from renyi.lift._numerics import power
    >>> x = np.array([0.0, 0.5, 2.0])
    >>> power(x, 3.0).tolist(), bool(power(x, 2.5)[2] == 2.0**2.5)
    ([0.0, 0.125, 8.0], True)
    """
    doubled = 2.0 * exponent
    if not (0 <= exponent <= MULTIPLIED_EXPONENT and doubled == int(doubled)):
        return np.power(x, exponent)
    x = np.asarray(x, dtype=float)
    whole, half = divmod(int(doubled), 2)
    result, square = None, x
    while whole:
        if whole & 1:
            result = square if result is None else result * square
        whole >>= 1
        if whole:
            square = square * square
    if half:
        root = np.sqrt(x)
        result = root if result is None else result * root
    if result is None:
        return np.ones_like(x)
    return result.copy() if result is x else result


def bisect_feasible(feasible, lo, hi, *, rtol: float = BISECT_RTOL, steps: int = BISECT_STEPS):
    r"""The largest point of ``[lo, hi]`` found feasible, by bisection on a monotone test.

    Parameters
    ----------
    feasible : callable
        ``feasible(t) -> bool`` (or a boolean array for array ``t``), True on ``[lo, t*]`` and
        False beyond, e.g. :math:`\Phi_\alpha(P_Y+t\,d)\le e^{\alpha\epsilon}` along a ray.
    lo, hi : float or ndarray
        The bracket; ``lo`` must be feasible (it is returned if nothing larger is).  Arrays
        run independent bisections elementwise.
    rtol : float, default BISECT_RTOL
        Stop once every bracket satisfies ``hi - lo <= rtol * hi``; 0 runs all ``steps``.
    steps : int, default BISECT_STEPS
        Most halvings.

    Returns
    -------
    float or ndarray
        The **feasible side** of the final bracket, never the infeasible one, so a mechanism
        built from it satisfies the constraint exactly rather than within the bracket.

    Examples
    --------
    >>> from renyi.lift._numerics import bisect_feasible
    >>> t = bisect_feasible(lambda t: t * t <= 2.0, 0.0, 2.0)
    >>> t * t <= 2.0, abs(t - 2 ** 0.5) < 1e-15
    (True, True)
    """
    scalar = np.ndim(lo) == 0 and np.ndim(hi) == 0
    lo, hi = np.array(lo, dtype=float), np.array(hi, dtype=float)
    for _ in range(steps):
        mid = 0.5 * (lo + hi)
        inside = np.asarray(feasible(float(mid) if scalar else mid), dtype=bool)
        lo = np.where(inside, mid, lo)
        hi = np.where(inside, hi, mid)
        if np.all(hi - lo <= rtol * hi):
            break
    return float(lo) if scalar else lo
