r"""The box branch and bound of :func:`~renyi.lift.optimum.global_optimum`, for :math:`|\mathcal Y|\ge6`.

Weak duality bounds :math:`V_{\chi^2}` by :math:`U(\mu)=\max_{q\in\mathcal Q^{\rm ex}_\epsilon}F_\mu(q)`
with the convex :math:`F_\mu(q)=g(q)-\mu^{\mathsf T}(q-P_Y)`.  The conical branch and bound
(:mod:`renyi.lift.cones`) bounds it by vertex enumeration, which needs exponentially many
cones as :math:`|\mathcal Y|` grows.  Here the posteriors are split into boxes
:math:`\ell\le q\le u` on the plane :math:`\mathbf 1^{\mathsf T}q=1`, and on each box
:math:`F_\mu` is majorised on :math:`\mathcal Q^{\rm ex}_\epsilon` by a **concave** function

.. math::

    L(q)=F_\mu(q)+\lambda\,(e^{\alpha\epsilon}-\tilde\Phi(q))
    +\textstyle\sum_y\theta_y(q_y-\ell_y)(u_y-q_y),\qquad\lambda,\theta\ge0,

where :math:`\tilde\Phi\le\Phi_\alpha` on the box's feasible points: :math:`\Phi_\alpha`
itself, or its quadratic minorant there (a Taylor polynomial with a proved lower bound of the
remainder, expanded at the parent's ascent end point or where the parent's bound expanded
it: neither point dominates).  Both added terms are non-negative on the box's feasible
points, so :math:`L\ge F_\mu` there.

* **Concavity.**  For :math:`\alpha\ge2` the Hessian of :math:`\Phi_\alpha` is smallest at the
  box's lower corner (:math:`A\ge0`), that of the minorant is constant, and :math:`\theta` is
  raised until :math:`\nabla^2L\preceq0` on the plane (a generalised eigenvalue, with a
  safety margin).  Its shape is the one of least cost :math:`\sum_y\theta_yc_y`, a small
  semidefinite program solved by a barrier method (``_cheapest_cover``), where
  :math:`c_y=4(x_y-\ell_y)(u_y-x_y)`, floored at :math:`0.01|\mathcal Y|\,w_y^2`, is what the cover
  adds at the box's expected maximiser :math:`x` (``_cover_cost``): against a face of the
  simplex (:math:`x_y=\ell_y=0`) the convexity across the face is covered almost for free.
  A box against a face is also tens of times narrower in some coordinates than in others,
  and a fixed shape there costs up to 1.6 times the least.
* **Certificate.**  For any :math:`\hat q` in the box,
  :math:`\max L\le L(\hat q)+\max_v\nabla L(\hat q)^{\mathsf T}(v-\hat q)`, a fractional
  knapsack; :math:`\hat q` comes from an accelerated projected ascent in the metric of a
  diagonal majoriser of :math:`-\nabla^2L` (the covers' :math:`\theta` span four decades on
  a box against a face), whose accuracy affects only how tight the bound is.
* **Multipliers.**  :math:`\lambda` is tried at multiples of the parent box's, at the one of
  the parent's bound and at the value from which :math:`F_\mu-\lambda\tilde\Phi` is concave
  without :math:`\theta`; a golden-section search follows around the winner (the bound is
  roughly convex in :math:`\lambda`, with a sharp minimum where two maximisers compete), each
  evaluation's least-cost cover starting from the previous one's.
* **Root and splits.**  The root box is each coordinate's range over
  :math:`\mathcal Q^{\rm ex}_\epsilon`, certified by duality.  A box is halved between the
  maximisers of two competing multipliers when they differ (the hard case of the
  trust-region problem), else across its widest side in the :math:`\chi^2` metric.  A
  child keeps its parent's bound (valid on the smaller box) when its own is larger, so
  bounds never grow.
* **Range reduction.**  Each bound's tangent plane of :math:`L` at the ascent's end point
  majorises :math:`F_\mu` on the box's feasible points, so the box shrinks to where that
  plane can exceed the split target (reduced-cost bound tightening, ``_reduce``): at
  no cost, in every coordinate at once, which splits alone do one at a time.  What is cut
  off keeps the target as its bound at that :math:`\mu` (``BoxTree.cut_off``); when a
  move of :math:`\mu` lifts it above value :math:`\times(1+\text{rtol})`, the cut is
  undone.  At :math:`|\mathcal Y|=10`, :math:`\epsilon=0.02`, the tree converges with 323
  boxes instead of 1,378, and in the bounded family with 611 instead of 25,063.
* **Speed.**  All trial multipliers of every constraint model run as one stacked ascent,
  and so do the searches that refine the winners (a round bounds tens of boxes, where the
  cost of a numpy call, not its size, dominates), and with a :class:`WorkerPool` the
  boxes of a round are bounded in chunks by several processes
  (``global_optimum(..., workers=2)``).  Which :math:`\mu` the tree bounds
  (:mod:`renyi.lift.optimum` fits it to the KKT conditions of a locally optimal mechanism)
  matters more than either: any :math:`\mu` is valid, but only the stationary one can make
  the bound tight.

At a local maximiser of :math:`F_\mu` with its KKT multiplier the added terms vanish,
which is why the bound tightens fast where :math:`\mathcal Q^{\rm ex}_\epsilon` is nearly an
ellipsoid (small :math:`\epsilon`: the S-lemma is exact for a quadratic on an ellipsoid).
Where the optimal posteriors sit on faces of the simplex, the Lagrangian is convex across
the faces and the boxes must shrink in every direction, so the gap closes slowly.  Taught
in the chapter *General leakage matrices* (``book/part2``).
"""

from __future__ import annotations

import math
import multiprocessing
import os
from concurrent.futures import ProcessPoolExecutor

import numpy as np
from scipy import linalg, optimize

from ._numerics import power


__all__: list[str] = []

#: Multiples of a box's previous Lagrange multiplier tried when it is bounded again (the small
#: ones also find the rival maximiser that the split separates).
LAMBDA_STEPS = (0.0, 0.3, 0.6, 1.0, 1.6, 2.5)
#: Multiples of the concavity threshold of the multiplier tried for every box.
THRESHOLD_STEPS = (1.0, 1.3)
#: The golden-section search of the best trial's multiplier: evaluations (each a short
#: ascent), over [lam / span, lam * span] on a log scale (its ends are 1.1 % apart after 10).
GOLDEN_EVALUATIONS = 10
GOLDEN_SPAN = 1.3
#: Multipliers tried at the root box (a wide grid: nothing is known yet).
ROOT_LAMBDAS = np.geomspace(0.05, 500.0, 13)
#: Accelerated projected-gradient steps per bound (the certificate holds after any number):
#: a short ascent ranks the trial multipliers, a long one finishes the best.
TRIAL_STEPS = 30
ASCENT_STEPS = 100
#: Relative safety margins on computed eigenvalues and bounds (floating-point round-off).
EIGEN_MARGIN = 1e-9
BOUND_MARGIN = 1e-12
#: Smallest entry of the ascent's diagonal metric, relative to its largest.
METRIC_FLOOR = 1e-12
#: The least-cost cover's barrier method: stages, damped Newton steps per stage, the growth of
#: its parameter per stage, the start's enlargement (strictly feasible), and a relative floor
#: that keeps the shape definite for the Cholesky factor that certifies it.
COVER_STAGES = 6
COVER_NEWTON_STEPS = 2
COVER_GROWTH = 4.0
COVER_START_MARGIN = 0.1
COVER_FLOOR = 1e-9
#: The cover's cost of a coordinate is 4 (x - lo)(hi - x) at the box's expected maximiser x
#: (what it adds to the bound there), but at least this share of the squared width per
#: output |Y| (the guess x is off, and more so the more coordinates it has; at |Y| = 10 a
#: share of 0.1 converged where 0.2 did not within the same limit, and at |Y| = 20 0.2 reached
#: half the gap of 0.1: the make bench cases at eps = 0.02).
COVER_COST_FLOOR_PER_OUTPUT = 0.01
#: Split between rival maximisers when they are this far apart, relative to the widest side.
RIVAL_APART = 1e-3
#: Coordinates above this count as free in the KKT estimate of the root box's multipliers.
ROOT_FREE = 1e-9
#: Absolute slack subtracted from the root box's certified extents (round-off of the duality bound).
ROOT_MARGIN = 1e-12
#: Box widths below this count as this in the scaling of theta (keeps the eigenproblem sane).
MIN_WIDTH = 1e-7
#: With worker processes, each chunk of a round's boxes has at least this many (else the
#: transfer costs more than it saves).
POOL_MIN_BOXES = 8
#: Relative round-off margin of a range reduction's slack (on the sizes of its terms).
REDUCE_MARGIN = 1e-10
#: Thread counts of the BLAS libraries numpy may use, set to 1 in worker processes.
BLAS_THREAD_VARIABLES = ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")


def _project(x, lo, hi, scale=None):
    """Projection of rows of ``x`` onto ``{lo <= q <= hi, sum(q) = 1}`` (exact), in the metric
    ``sum((q - x)^2 / scale)`` (Euclidean without ``scale``).

    The nearest point is ``clip(x - k scale, lo, hi)`` for the ``k`` where its sum is 1.
    ``S(k)`` falls from ``sum(hi)`` with slope minus the ``scale`` of the free coordinates
    between its sorted kinks ``(x - hi) / scale`` (one becomes free) and ``(x - lo) / scale``
    (one leaves): a cumulative sum gives it at every kink, then the piece where it crosses 1.
    """
    m, n = x.shape
    if scale is None:
        scale = np.ones_like(x)
    elif scale.shape != x.shape:
        scale = np.broadcast_to(scale, x.shape)
    kinks = np.concatenate([(x - hi) / scale, (x - lo) / scale], axis=-1)
    # Gathers by flat index (np.take): at tens of rows a call's overhead, not its size,
    # dominates, and this is the ascent's most frequent step (a third of the box phase).
    order = np.argsort(kinks, axis=-1)
    order += 2 * n * np.arange(m)[:, None]
    kinks = np.take(kinks, order)
    slope = np.take(np.concatenate([scale, -scale], axis=-1), order)
    free = np.cumsum(slope[:, :-1], axis=-1)
    sums = np.empty_like(kinks)
    sums[:, 0] = hi.sum(axis=-1)
    np.cumsum(free * (kinks[:, 1:] - kinks[:, :-1]), axis=-1, out=sums[:, 1:])
    sums[:, 1:] = sums[:, :1] - sums[:, 1:]
    j = np.minimum(np.maximum(np.count_nonzero(sums >= 1, axis=-1) - 1, 0), 2 * n - 2)
    flat = j + 2 * n * np.arange(m)
    s0, s1 = np.take(sums, flat), np.take(sums, flat + 1)
    k0, k1 = np.take(kinks, flat), np.take(kinks, flat + 1)
    frac = np.where(s0 > s1, (s0 - 1) / np.where(s0 > s1, s0 - s1, 1.0), 0.0)
    k = k0 + np.minimum(np.maximum(frac, 0.0), 1.0) * (k1 - k0)
    return np.minimum(np.maximum(x - k[:, None] * scale, lo), hi)


def _cheapest_cover(m, basis, cost, theta):
    r"""The diagonal cover of least cost: :math:`\min\sum_y\theta_yc_y` subject to
    :math:`B^{\mathsf T}\mathrm{diag}(2\theta)B\succeq m`, from a feasible ``theta`` (rows: boxes).

    The cover adds :math:`\sum_y\theta_y(x_y-\ell_y)(u_y-x_y)` to the Lagrangian at a point
    :math:`x` of the box, at most :math:`\sum_y\theta_yw_y^2/4`; ``cost`` weighs each
    coordinate by what it adds at the box's expected maximiser (:func:`_cover_cost`).
    Which coordinates carry it matters: on the plane, a convex direction :math:`e_y` can be paid for
    by :math:`\theta_y` alone or smeared over every coordinate, and where the widths differ
    tens of times (a box against a face of the simplex) the fixed shapes of
    ``_BoxLagrangian._cover`` cost up to 1.6 times the least (``tests/test_boxes.py``);
    on the box that held the bound 31 % above the value in a 10-s run at |Y| = 10,
    eps = 0.02, the least-cost cover brought it below the value.  This small semidefinite
    program (|Y| variables, one LMI of order |Y| - 1) is solved by a log-barrier method,
    :math:`t\,c^{\mathsf T}\theta-\log\det(B^{\mathsf T}\mathrm{diag}(2\theta)B-m)-\sum_y\log\theta_y`
    with damped Newton steps (which stay feasible: the barrier is self-concordant) and
    :math:`t` raised 4-fold per stage from where the duality gap :math:`(2|Y|-1)/t` equals the
    start's cost; 6 stages (2 steps each) leave it near 4^-5 of that.  The caller certifies the
    result (a generalised eigenvalue), so its accuracy affects tightness, never validity.
    """
    n = basis.shape[0]
    t = (2 * n - 1) / np.sum(theta * cost, axis=-1)
    eye = np.eye(n)[None]
    for _ in range(COVER_STAGES):
        for _ in range(COVER_NEWTON_STEPS):
            slack = _congruence(basis, 2 * theta) - m
            g = basis @ np.linalg.inv(slack) @ basis.T
            grad = t[:, None] * cost - 2 * np.diagonal(g, axis1=1, axis2=2) - 1 / theta
            hess = 4 * g * g + eye / theta[:, :, None] ** 2
            step = np.linalg.solve(hess, grad[..., None])[..., 0]
            decrement = np.sqrt(np.maximum(np.sum(grad * step, axis=-1), 0.0))
            theta = theta - step / (1 + decrement)[:, None]
        t = t * COVER_GROWTH
    return theta


def _cover_cost(lo, hi, at=None):
    """Each coordinate's cost per unit of cover: what it adds to the bound at ``at``, the box's
    expected maximiser, floored at ``COVER_COST_FLOOR_PER_OUTPUT`` |Y| times the squared width
    (the worst case, the box's centre, without ``at``).

    Where the maximiser lies against a side of its box (a posterior on a face of the simplex,
    ``x_y = lo_y = 0``), a cover of that coordinate costs almost nothing there, so the
    least-cost cover pays for the convexity across the face with it.  Weighed by the squared
    widths, the cover was spread over the free coordinates, where it loosens the bound: at
    |Y| = 10, eps = 0.02, the tree needed 4,965 boxes instead of 1,271.
    """
    width2 = np.maximum(hi - lo, MIN_WIDTH) ** 2
    if at is None:
        return width2
    floor = min(1.0, COVER_COST_FLOOR_PER_OUTPUT * lo.shape[-1])
    return np.maximum(4 * (at - lo) * (hi - at), floor * width2)


def _knapsack(g, lo, hi):
    """A maximiser of ``g . v`` over ``{lo <= v <= hi, sum(v) = 1}`` (fill the best coordinates first)."""
    order = np.argsort(-g, axis=-1)
    width = np.take_along_axis(hi - lo, order, axis=-1)
    room = 1 - lo.sum(axis=-1, keepdims=True)
    add = np.clip(room - (np.cumsum(width, axis=-1) - width), 0.0, width)
    v = lo.copy()
    np.put_along_axis(v, order, np.take_along_axis(lo, order, axis=-1) + add, axis=-1)
    return v


def _reduce(slope, offset, spread, lo, hi, target):
    r"""Range reduction: the sub-box outside which no point of the box can have ``F_mu > target``.

    ``offset + slope . q`` majorises :math:`F_\mu` on the box's feasible points (a tangent plane
    of the concave Lagrangian, :meth:`_BoxLagrangian._bound`).  For any :math:`\tau`, on the
    box and the plane :math:`\mathbf 1^{\mathsf T}q=1`,
    :math:`g^{\mathsf T}q=\tau+\sum_y(g_y-\tau)q_y\le M-|g_y-\tau|\,r_y(q)`, where
    :math:`M=\tau+\sum_y\max(g_y-\tau,0)u_y+\min(g_y-\tau,0)\ell_y` and :math:`r_y(q)` is
    the distance of :math:`q_y` from the side :math:`M` takes (:math:`u_y` where
    :math:`g_y>\tau`, :math:`\ell_y` where :math:`g_y<\tau`): every other term only lowers
    the sum.  So ``F_mu(q) > target`` needs :math:`r_y(q)<s/|g_y-\tau|` with the slack
    :math:`s=\text{offset}+M-\text{target}`; :math:`\tau` is the knapsack's marginal slope,
    which makes :math:`M` the linear maximum (the reduced-cost range reduction of spatial
    branch and bound).  ``spread`` bounds the round-off of ``offset + slope . q`` (absolute).
    """
    n = slope.shape[-1]
    order = np.argsort(-slope, axis=-1)
    width = np.take_along_axis(hi - lo, order, axis=-1)
    room = 1 - lo.sum(axis=-1, keepdims=True)
    filled = np.minimum(np.count_nonzero(np.cumsum(width, axis=-1) <= room, axis=-1), n - 1)
    tau = np.take_along_axis(slope, np.take_along_axis(order, filled[:, None], axis=-1), axis=-1)
    d = slope - tau
    top = tau[:, 0] + np.sum(np.maximum(d, 0.0) * hi + np.minimum(d, 0.0) * lo, axis=-1)
    size = np.abs(offset) + np.abs(top) + np.abs(target) + spread
    slack = np.maximum(offset + top - target + REDUCE_MARGIN * size + 1e-15, 0.0)[:, None]
    slack = np.where(np.isnan(slack), np.inf, slack)  # (a NaN tangent certifies nothing)
    # (where d is 0 or tiny the reach is infinite: no reduction)
    with np.errstate(divide="ignore", over="ignore", invalid="ignore"):
        reach = np.where(d != 0, slack / np.abs(d), np.inf)
    return np.where(d > 0, np.maximum(lo, hi - reach), lo), np.where(d < 0, np.minimum(hi, lo + reach), hi)


def _congruence(b, diagonal):
    """``b^T diag(d) b`` for each row ``d`` of ``diagonal`` (a stack of matrices)."""
    return (b.T[None] * diagonal[:, None, :]) @ b


def _outer(a, b):
    """Row-wise outer products of two stacks of vectors."""
    return a[:, :, None] * b[:, None, :]


def _tighten(lo, hi):
    """Shrink boxes to the plane sum(q) = 1; returns the boxes and which are non-empty."""
    lo = np.maximum(lo, 1 - (hi.sum(axis=-1, keepdims=True) - hi))
    hi = np.minimum(hi, 1 - (lo.sum(axis=-1, keepdims=True) - lo))
    return lo, hi, np.all(lo <= hi, axis=-1) & (lo.sum(axis=-1) <= 1) & (hi.sum(axis=-1) >= 1)


def _warm_up():
    """A no-op task: unpickling it imports this module (numpy, scipy) in a fresh worker."""


class WorkerPool:
    """Worker processes that bound chunks of a round's boxes while this process bounds one.

    Started with ``spawn`` on every platform: a forked child of a process with BLAS
    threads can deadlock, and the same start method everywhere behaves the same.  As with
    any process pool, a script that uses it must run under ``if __name__ == "__main__":``.
    The workers start at once (a no-op task each), so that they boot while the first LP and
    the channel searches run.
    """

    def __init__(self, processes):
        self.workers = processes
        self.executor = ProcessPoolExecutor(processes, mp_context=multiprocessing.get_context("spawn"))
        # One BLAS thread per worker: its matrices are |Y| x |Y|, and threads would only
        # compete with the other processes for the cores.  A spawned child takes the
        # environment of the moment it starts, which is at these submits.
        saved = {name: os.environ.get(name) for name in BLAS_THREAD_VARIABLES}
        os.environ.update({name: "1" for name in BLAS_THREAD_VARIABLES})
        try:
            for _ in range(processes):
                self.executor.submit(_warm_up)
        finally:
            for name, value in saved.items():
                if value is None:
                    os.environ.pop(name)
                else:
                    os.environ[name] = value

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.executor.shutdown(wait=True, cancel_futures=True)


class _Constraint:
    """Phi, or its quadratic minorant, on a stack of boxes: values, gradients and Hessian bounds.

    ``z0`` None means Phi itself on every box; else ``exact`` (None: none) marks the boxes
    on which it is Phi itself, and the others take the minorant expanded at ``z0``.  ``h``
    bounds the Hessian below on each box, ``row_sums`` are the row sums of a bound above
    (entrywise; for the ascent's metric).
    """

    def __init__(self, lagrangian, h, row_sums, z0=None, kappa=None, exact=None):
        self.owner, self.h, self.row_sums, self.z0, self.kappa = lagrangian, h, row_sums, z0, kappa
        self.exact = exact
        # The minorant's weighted slope is affine in z = A q: its two coefficients, computed
        # once (the ascent asks for the gradient at every step).
        self._affine = None

    def rows(self, idx):
        pick = lambda v: None if v is None else v[idx]
        return _Constraint(
            self.owner, self.h[idx], self.row_sums[idx], pick(self.z0), pick(self.kappa), pick(self.exact)
        )

    def _every_row(self):
        """Expansion points, kappa and which rows are Phi itself, for every row (Phi's rows
        carry zeros, unused)."""
        m = self.h.shape[0]
        if self.z0 is None:
            zeros = np.zeros((m, self.owner.A.shape[0]))
            return zeros, zeros, np.ones(m, dtype=bool)
        return self.z0, self.kappa, np.zeros(m, dtype=bool) if self.exact is None else self.exact

    @staticmethod
    def _from_rows(owner, h, row_sums, z0, kappa, exact):
        if exact.all():
            return _Constraint(owner, h, row_sums)
        return _Constraint(owner, h, row_sums, z0, kappa, exact if exact.any() else None)

    @staticmethod
    def stack(parts):
        """The rows of ``parts`` one after another (one stacked ascent for several models)."""
        rows = [p._every_row() for p in parts]
        cat = lambda values: np.concatenate(list(values))
        return _Constraint._from_rows(
            parts[0].owner, cat(p.h for p in parts), cat(p.row_sums for p in parts), *map(cat, zip(*rows))
        )

    def where(self, mask, other):
        """Rows of ``other`` where ``mask``, else these (models of the same boxes), so that the
        boxes of every model are refined by one stacked ascent."""
        pick = lambda a, b: np.where(mask.reshape(mask.shape + (1,) * (a.ndim - 1)), b, a)
        mine, theirs = self._every_row(), other._every_row()
        return _Constraint._from_rows(
            self.owner,
            pick(self.h, other.h),
            pick(self.row_sums, other.row_sums),
            *(pick(a, b) for a, b in zip(mine, theirs)),
        )

    def phi(self, q):
        if self.z0 is None:
            return self.owner._phi(q)
        a, z = self.owner.alpha, q @ self.owner.A.T
        dz = z - self.z0
        taylor = power(self.z0, a) + a * power(self.z0, a - 1) * dz + self.kappa * dz**2
        minorant = np.sum(self.owner.weight * taylor, axis=-1)
        if self.exact is None:
            return minorant
        return np.where(self.exact, power(np.maximum(z, 0.0), a) @ self.owner.weight, minorant)

    def grad(self, q):
        if self.z0 is None:
            return self.owner._grad_phi(q)
        z = q @ self.owner.A.T
        if self._affine is None:
            a, w = self.owner.alpha, self.owner.weight
            # w (a z0^(a-1) + 2 kappa (z - z0)) = base + scale z
            self._affine = (w * (a * power(self.z0, a - 1) - 2 * self.kappa * self.z0), w * (2 * self.kappa))
        base, scale = self._affine
        slope = base + scale * z
        if self.exact is not None:
            slope = np.where(self.exact[:, None], self.owner._exact_slope(z), slope)
        return slope @ self.owner.A


class _Reduction:
    """The boxes of one call, each narrowed by every tangent plane its bounds produce.

    Every bound's tangent plane majorises F_mu on the box's feasible points, so each one's
    range reduction (:func:`_reduce`) is valid and they intersect.  With no finite target
    nothing is reduced.
    """

    def __init__(self, lo, hi, target):
        self.boxes = (lo, hi)
        self.lo, self.hi, self.target = lo.copy(), hi.copy(), target
        self.active = bool(np.isfinite(target))

    def narrow(self, rows, tangent):
        """Intersect boxes ``rows`` (one per row of the tangent; repeats allowed) with the
        reductions of these tangents, each on the box as it was bounded."""
        if not self.active:
            return
        lo, hi = self.boxes
        new_lo, new_hi = _reduce(*tangent, lo[rows], hi[rows], self.target)
        np.maximum.at(self.lo, rows, new_lo)
        np.minimum.at(self.hi, rows, new_hi)


class _BoxLagrangian:
    """The bound of F_mu on boxes: geometry only, so that it pickles small (worker processes)."""

    def __init__(self, p, A, alpha, level, weight):
        self.p, self.A, self.alpha, self.level, self.weight = p, A, alpha, level, weight
        self.basis = linalg.null_space(np.ones((1, p.size)))

    def _phi(self, q):
        return power(np.maximum(q @ self.A.T, 0.0), self.alpha) @ self.weight

    def _exact_slope(self, z):
        """Phi's weighted slope in z = A q: its gradient is this times A."""
        return self.alpha * power(np.maximum(z, 0.0), self.alpha - 1) * self.weight

    def _grad_phi(self, q):
        return self._exact_slope(q @ self.A.T) @ self.A

    def _values(self, q, mu):
        d = q - self.p
        return np.sum(d * d / self.p, axis=-1) - d @ mu

    def _h_lo(self, lo):
        a = self.alpha
        z_lo = np.maximum(lo @ self.A.T, 0.0)
        return _congruence(self.A, a * (a - 1) * self.weight * power(z_lo, a - 2))

    def _concave_from(self, h):
        """The smallest lam that makes F_mu - lam Phi concave on each box without theta (h: Phi's Hessian bound)."""
        h = self.basis.T @ h @ self.basis
        d = self.basis.T @ (self.basis * (2 / self.p)[:, None])
        try:
            cover = np.linalg.cholesky(h)
        except np.linalg.LinAlgError:
            return np.full(h.shape[0], np.inf)
        x = np.linalg.solve(cover, np.broadcast_to(d, h.shape))
        x = np.linalg.solve(cover, np.swapaxes(x, 1, 2))
        return np.linalg.eigvalsh(0.5 * (x + np.swapaxes(x, 1, 2)))[:, -1]

    def _quadratic_minorant(self, lo, hi, start):
        """Phi's quadratic minorant on the box's feasible points, expanded where the ascent starts.

        For z >= z_lo the Taylor remainder of z^alpha at z0 is at least kappa (z - z0)^2 with
        kappa = alpha (alpha - 1) int_0^1 (1 - s) (z0 + s (z_lo - z0))^(alpha - 2) ds, bounded
        below by Jensen (alpha >= 3, convex integrand) or by the chord (2 <= alpha <= 3).
        Returns (z0, kappa): its Hessian 2 A^T diag(w kappa) A no longer falls to the box's corner.
        """
        a = self.alpha
        z_lo = np.maximum(lo @ self.A.T, 0.0)
        z0 = np.maximum(_project(np.clip(start, lo, hi), lo, hi) @ self.A.T, z_lo)
        if a >= 3:
            kappa = 0.5 * a * (a - 1) * power((2 * z0 + z_lo) / 3, a - 2)
        else:
            kappa = a * (a - 1) * (power(z0, a - 2) / 3 + power(z_lo, a - 2) / 6)
        return z0, kappa

    def _cover(self, lo, hi, lam, h, least=True, near=None, at=None):
        """theta >= 0 that makes the Lagrangian concave on each box (a generalised eigenvalue).

        The Hessian of L on the plane is 2 D_Y^-1 - lam H_Phi(q) - 2 diag(theta), and for
        alpha >= 2 H_Phi(q) >= H_Phi(lo) on the box (A >= 0, z^(alpha-2) increases).  Three
        fixed shapes of theta are scaled until it is, then (``least``) the least-cost cover is
        computed from the cheapest (``_cheapest_cover``) and certified the same way; the
        cheapest (sum theta_y cost_y, :func:`_cover_cost` at ``at``, the expected maximiser) is
        kept.  With ``near`` (a cover of each box at a nearby multiplier) the fixed shapes are
        skipped: it is scaled and the barrier starts there.
        """
        full = np.diag(2 / self.p)[None] - lam[:, None, None] * h
        m = self.basis.T @ full @ self.basis

        def certified(shape):
            """The shape scaled until the Lagrangian is concave: the pencil's top eigenvalue.

            max u^T M u / u^T diag(2 shape) u over the plane u^T 1 = 0 is, with
            v = diag(2 shape)^(1/2) u, the top eigenvalue of K = S M S (S = diag(2 shape)^(-1/2))
            on the plane v^T s = 0, i.e. of P K P with P the projector off s; P K P adds the
            eigenvalue 0 (on s), which the max with 0 below absorbs.
            """
            scale = 1 / np.sqrt(2 * shape)
            k = full * scale[:, :, None] * scale[:, None, :]
            c = scale / np.linalg.norm(scale, axis=-1, keepdims=True)
            kc = np.einsum("mij,mj->mi", k, c)
            ckc = np.sum(c * kc, axis=-1)[:, None, None]
            k = k - _outer(c, kc) - _outer(kc, c) + ckc * _outer(c, c)
            eig_c = np.linalg.eigvalsh(0.5 * (k + np.swapaxes(k, 1, 2)))
            top = np.maximum(eig_c[:, -1], 0.0) + EIGEN_MARGIN * np.abs(eig_c).max(axis=1)
            return top[:, None] * shape

        cost = _cover_cost(lo, hi, at)

        def cheaper(a, b):
            return np.where((np.sum(a * cost, axis=-1) < np.sum(b * cost, axis=-1))[:, None], a, b)

        if near is not None:
            return self._least_cover(m, cost, certified(near), certified, cheaper)
        # Where the Lagrangian is convex: its positive eigen-directions, in the box's coordinates.
        eig, vec = np.linalg.eigh(m)
        directions = self.basis @ vec
        spread = np.sqrt(np.einsum("myk,mk->my", directions**2, np.maximum(eig, 0.0)))
        shapes = (
            1 / (lo.shape[1] * cost),  # equal cost per coordinate
            np.broadcast_to(1 / self.p, lo.shape),  # F's own curvature
            spread / np.sqrt(cost) + 1e-6 / self.p,  # optimal for a rank-one convexity (kept definite)
        )
        best = certified(shapes[0])
        for shape in shapes[1:]:
            best = cheaper(certified(shape), best)
        return self._least_cover(m, cost, best, certified, cheaper) if least else best

    def _least_cover(self, m, cost, best, certified, cheaper):
        """The least-cost cover from the certified ``best`` (kept where it is cheaper)."""
        # From a strictly feasible point (``best``, enlarged); a row the barrier method lost
        # (round-off) keeps that point.
        start = best * (1 + COVER_START_MARGIN) + 1e-12
        try:
            shape = _cheapest_cover(m, self.basis, cost, start)
        except np.linalg.LinAlgError:
            shape = start
        ok = np.all(np.isfinite(shape) & (shape > 0), axis=-1, keepdims=True)
        shape = np.where(ok, shape, start)
        return cheaper(certified(shape + COVER_FLOOR * shape.max(axis=-1, keepdims=True)), best)

    def _bound(self, lo, hi, mu, lam, start, constraint, steps=None, least=True, near=None):
        """Certified max of F_mu over each box's feasible points, the ascent's end point, theta,
        and a tangent plane of the Lagrangian there (:func:`_reduce`).

        ``constraint`` (a :class:`_Constraint`) is Phi itself or a minorant of it on the box's
        feasible points; ``least`` whether the cover is the least-cost one (else the cheapest
        fixed shape).  The tangent ``(slope, offset, spread)`` majorises F_mu on the box's
        feasible points by ``offset + slope . q`` (L is concave on the box and above F_mu),
        with ``spread`` a bound of its round-off's scale.
        """
        phi, grad_phi = constraint.phi, constraint.grad
        # The cover is priced where the ascent starts (the parent's or the best trial's end
        # point), the best guess of where the box's maximiser is.
        x = _project(np.clip(start, lo, hi), lo, hi)
        theta = self._cover(lo, hi, lam, constraint.h, least, near, at=x)
        level = self.level

        def gradient(q):
            return 2 * (q - self.p) / self.p - mu - lam[:, None] * grad_phi(q) + theta * (lo + hi - 2 * q)

        # The same gradient for the ascent's steps, its affine part collected once (the
        # certificate below uses the formula above).
        linear = 2 / self.p - 2 * theta
        constant = theta * (lo + hi) - 2 - mu
        lam_column = lam[:, None]

        def step_gradient(q):
            return q * linear + constant - lam_column * grad_phi(q)

        # A diagonal majoriser of -Hess L on the box, as the ascent's metric: H_Phi is entrywise
        # non-negative and at most its value at the upper corner, diag(H 1) >= H for such a
        # matrix, and F's own curvature 2 / p only makes L less concave.  The covers' theta
        # span 10^4 on a box against a face, and one step size for all coordinates left the
        # flat ones unconverged (at |Y| = 10, eps_max / 2, 77 % of a tree's boxes bounded below
        # the target after 30 steps instead of 97 %).
        metric = lam[:, None] * constraint.row_sums + 2 * theta
        metric = 1 / np.maximum(metric, METRIC_FLOOR * metric.max(axis=-1, keepdims=True) + 1e-300)
        y, t_acc = x.copy(), 1.0
        for _ in range(ASCENT_STEPS if steps is None else steps):
            x_new = _project(y + metric * step_gradient(y), lo, hi, metric)
            t_new = 0.5 * (1 + math.sqrt(1 + 4 * t_acc * t_acc))
            y = x_new + ((t_acc - 1) / t_new) * (x_new - x)
            x, t_acc = x_new, t_new
        g = gradient(x)
        values, lifted, cover = self._values(x, mu), lam * phi(x), np.sum(theta * (x - lo) * (hi - x), axis=-1)
        at_x = values + (lam * level - lifted) + cover
        bound = at_x + np.sum(g * (_knapsack(g, lo, hi) - x), axis=-1)
        # A NaN bound (round-off in a degenerate box) certifies nothing: it counts as infinite.
        bound = np.where(np.isnan(bound), np.inf, bound)
        gx = g * x
        offset = at_x - np.sum(gx, axis=-1)
        spread = np.abs(values) + lam * level + np.abs(lifted) + cover + np.sum(np.abs(gx) + np.abs(g) * hi, axis=-1)
        return bound + BOUND_MARGIN * np.abs(bound) + 1e-15, x, theta, (g, offset, spread)

    def _constraints(self, lo, hi, points):
        """Phi itself (Hessian bound at the box's lower corner) and its quadratic minorants
        expanded at each of ``points`` (stacks of one point per box)."""
        a, w, sums = self.alpha, self.weight, self.A.sum(axis=1)
        # Phi's Hessian A^T diag(w a (a - 1) z^(a - 2)) A is largest at the upper corner.
        z_hi = np.maximum(hi @ self.A.T, 0.0)
        models = [_Constraint(self, self._h_lo(lo), (a * (a - 1) * w * power(z_hi, a - 2) * sums) @ self.A)]
        for point in points:
            z0, kappa = self._quadratic_minorant(lo, hi, point)
            h = _congruence(self.A, 2 * w * kappa)
            models.append(_Constraint(self, h, (2 * w * kappa * sums) @ self.A, z0, kappa))
        return models

    def _trials(self, lo, hi, mu, lams, start, constraints, reduction, least=True):
        """Short ascents for every row of ``lams`` (trials x boxes), row t with the model
        ``constraints[t]``, all at once; results trials x boxes."""
        n_trials, m = lams.shape
        tile = np.tile(np.arange(m), n_trials)
        bound, x, theta, tangent = self._bound(
            lo[tile], hi[tile], mu, lams.ravel(), start[tile], _Constraint.stack(constraints), TRIAL_STEPS, least
        )
        reduction.narrow(tile, tangent)
        return bound.reshape(n_trials, m), x.reshape(n_trials, m, -1), theta.reshape(n_trials, m, -1)

    def _golden(self, lo, hi, mu, rows, constraint, best, best_lam, bound_lam, start, reduction):
        """Golden-section search of the multiplier around ``best_lam`` for boxes ``rows``.

        Every evaluation is a valid bound, so ``best`` and ``bound_lam`` (updated in place)
        keep the smallest seen; the search only decides where to look.
        """
        rows = rows[best_lam[rows] > 0]
        if rows.size == 0:
            return
        g = (math.sqrt(5) - 1) / 2
        u = np.log(best_lam[rows])
        a, b = u - math.log(GOLDEN_SPAN), u + math.log(GOLDEN_SPAN)
        sub = constraint.rows(rows)
        # Each evaluation's cover starts from the previous one's (the fixed shapes are ranked
        # once, at the first).
        cover = [None]

        def f(points):
            lam = np.exp(points)
            bound, _, cover[0], tangent = self._bound(
                lo[rows], hi[rows], mu, lam, start[rows], sub, TRIAL_STEPS, near=cover[0]
            )
            reduction.narrow(rows, tangent)
            better = bound < best[rows]
            best[rows[better]], bound_lam[rows[better]] = bound[better], lam[better]
            return bound

        c, d = b - g * (b - a), a + g * (b - a)
        fc, fd = f(c), f(d)
        for _ in range(GOLDEN_EVALUATIONS - 2):
            left = fc <= fd
            a, b = np.where(left, a, c), np.where(left, d, b)
            new = np.where(left, b - g * (b - a), a + g * (b - a))
            fn = f(new)
            c, d = np.where(left, new, d), np.where(left, c, new)
            fc, fd = np.where(left, fn, fd), np.where(left, fc, fn)

    def __call__(self, lo, hi, start, anchor, lam, lam_best, mu, target=-np.inf):
        """Bound boxes with each trial multiplier and constraint model; keep the best per box.

        ``lam`` is each box's previous multiplier (inf: none yet), the centre of the trial
        grid, and ``lam_best`` the one its previous bound came from (tried too: a child that
        did not try it could not match its parent's bound, and would keep that bound for
        round after round).  Returns the bounds, the ascent end points, the coarse winners'
        multipliers and the bounds' multipliers, the covers theta, the rival maximisers, and
        each box narrowed to where F_mu may exceed ``target`` (:class:`_Reduction`).  A box
        whose trials already bound it below ``target`` is not refined.  The trials of all
        constraint models run as one stacked ascent (trial-major rows), so a box costs a few
        array operations rather than a Python loop per trial.
        """
        m = lo.shape[0]
        # A box whose best multiplier was 0 gets the root's wide grid: multiples of 0 are 0,
        # and its children would otherwise never try another (at |Y| = 10, eps = 0.02 such
        # boxes held the bound for a quarter of a 60-s run, and the gap halved without them).
        fresh = ~np.isfinite(lam) | (lam == 0)
        known = np.where(fresh, 0.0, lam)
        # Phi's minorant is expanded at the ascent's start (the parent's end point) and at the
        # point the parent's own bound expanded it at: neither dominates (a child whose only
        # minorant was at the end point stayed 20 % above its parent's bound round after round
        # in the bounded family at eps = 0.02; with only the inherited point |Y| = 20 below
        # eps_max took about four times as long).
        constraints = self._constraints(lo, hi, (start, anchor))
        lams, models = [], []
        for c, constraint in enumerate(constraints):
            if c == 2:
                # The parent's minorant only at the parent's multiplier: what lets a child match
                # its parent's bound (a full grid here cost more than it gained below eps_max).
                trials = [np.where(fresh, known, lam_best)]
            else:
                trials = [known * s for s in LAMBDA_STEPS]
                # Also the multiplier from which the Lagrangian is concave with no cover at all.
                threshold = self._concave_from(constraint.h)
                if np.all(np.isfinite(threshold)):
                    trials += [threshold * s for s in THRESHOLD_STEPS]
                # The multiplier of the parent's bound, so that a child can always match it.
                trials.append(np.where(fresh, known, lam_best))
                if fresh.any():
                    trials += [np.where(fresh, lam, known) for lam in ROOT_LAMBDAS]
            lams += trials
            models += [c] * len(trials)
        # A short ascent ranks the trials, with the fixed shapes of cover only (the least-cost
        # one costs most of a bound, and at |Y| = 20 ranking with it left a gap over ten times
        # larger within the same limit); the winner's is refined and continued below with it.  All
        # models' trials run as one stacked ascent.
        lams, models = np.stack(lams), np.array(models)
        # Every bound also narrows its box to where F_mu may exceed the target.
        reduction = _Reduction(lo, hi, target)
        bounds, points, thetas = self._trials(
            lo, hi, mu, lams, start, [constraints[c] for c in models], reduction, least=False
        )
        # The first best trial per box; a box with no finite bound keeps its start.
        top, rows = np.argmin(bounds, axis=0), np.arange(m)
        best, ok = bounds[top, rows], np.isfinite(bounds[top, rows])
        best_x = np.where(ok[:, None], points[top, rows], start)
        best_lam = np.where(ok, lams[top, rows], known)
        bound_lam = best_lam.copy()
        best_theta = np.where(ok[:, None], thetas[top, rows], 0.0)
        winner = models[top]
        # Every box is refined with the model its best trial used, all in one stacked search (at
        # |Y| = 10 a round bounds 60 boxes or so, where a search per model cost a third more).
        second = winner == 2
        constraint = constraints[1].where(second, constraints[2]).where(winner == 0, constraints[0])
        # (A box already below the target needs no better bound: it will not be split.)
        rows = np.flatnonzero(best > target)
        if rows.size:
            # The bound is roughly convex in lam, often with a sharp minimum between the
            # coarse trials (at |Y| = 10, eps_max / 2, a box 7.9e-4 above the value at the
            # coarse winner was 1.5e-4 above 2 % further on): a golden-section search.
            self._golden(lo, hi, mu, rows, constraint, best, best_lam, bound_lam, best_x, reduction)
            # The long ascent at the multiplier of the best bound.  The children inherit the
            # coarse winner's (their trial grid drifts otherwise: at |Y| = 10, eps_max / 2,
            # a gap twenty times larger within the same limit) and try this one too.
            final_lam = bound_lam[rows]
            bound, x, theta, tangent = self._bound(
                lo[rows], hi[rows], mu, final_lam, best_x[rows], constraint.rows(rows)
            )
            reduction.narrow(rows, tangent)
            keep = bound < best[rows]
            best[rows[keep]], best_x[rows[keep]], best_theta[rows[keep]] = bound[keep], x[keep], theta[keep]
            bound_lam[rows[keep]] = final_lam[keep]
        # The rival: the maximiser of the best trial with a smaller multiplier.
        smaller = np.where(lams < best_lam, bounds, np.inf)
        pick = np.argmin(smaller, axis=0)
        has = np.isfinite(smaller[pick, np.arange(m)])
        rival = np.where(has[:, None], points[pick, np.arange(m)], best_x)
        # Where the winning minorant was expanded (the exact model's boxes keep their start).
        best_anchor = np.where(second[:, None], anchor, start)
        return best, best_x, best_lam, bound_lam, best_theta, rival, best_anchor, reduction.lo, reduction.hi


class BoxTree:
    """A partition of a box around the feasible set into boxes, each with a certified bound of F_mu."""

    def __init__(self, geo, pool=None):
        self.geo, self.pool = geo, pool
        # Workers of the pool running something else (a local search), left out of the chunks.
        self.busy_workers = 0
        self.p, self.A, self.alpha, self.level = geo.p, geo.A, geo.alpha, geo.level
        self.weight = geo.p_x ** (1 - geo.alpha)
        n = self.p.size
        self.lagrangian = _BoxLagrangian(self.p, self.A, self.alpha, self.level, self.weight)
        self.basis = self.lagrangian.basis
        self._phi, self._grad_phi = self.lagrangian._phi, self.lagrangian._grad_phi
        self._quadratic_minorant = self.lagrangian._quadratic_minorant
        lo, hi, _ = _tighten(*(b[None] for b in self._root()))
        self.lo, self.hi = lo, hi
        # Per box: its multiplier (inf: not yet chosen; the centre of its children's trials),
        # the multiplier of its bound (after refinement), cover, where the ascent starts, its
        # end point, the rival maximiser, and the cached bound with the mu it was computed at.
        self.lam = np.full(1, np.inf)
        self.lam_best = np.full(1, np.inf)
        self.theta = np.zeros((1, n))
        self.start = self.p[None].copy()
        # Where the minorant of each box's bound was expanded, and its children's second point.
        self.anchor = self.p[None].copy()
        self.anchor_best = self.p[None].copy()
        self.best_point = self.p[None].copy()
        self.rival = self.p[None].copy()
        self.cached = np.full(1, np.inf)
        # Whether the box has not been bounded itself yet (a child keeps its parent's bound,
        # valid on the smaller box, until it is).
        self.unbounded = np.ones(1, dtype=bool)
        self.mu_at = np.zeros((1, n))
        # What range reduction cut off (:meth:`_cut`), one entry per cut: the box before it,
        # the bound of F_mu on what was cut off (the target then), that mu, and the box's
        # multiplier and end point (for when the cut is undone).  The boxes and these parts
        # together cover Q.
        self.cut_outer = (np.empty((0, n)), np.empty((0, n)))
        self.cut_bound, self.cut_mu = np.empty(0), np.empty((0, n))
        self.cut_lam, self.cut_point = np.empty(0), np.empty((0, n))
        # Whether evaluations still cut: not after a cut has been undone (see _roll_back).
        self.reducing = True
        #: The largest bound of F_mu on the parts cut off, at the last mu bounded (-inf: none).
        self.cut_off = -np.inf

    def _root(self):
        """A box that contains Q: each coordinate's range over Q, certified by duality, within the D_2 box."""
        lo, hi = self._ellipsoid_shadow()
        for y in range(self.p.size):
            for sign in (1.0, -1.0):
                c = np.zeros(self.p.size)
                c[y] = sign
                extent = sign * self._certified_min(c)
                lo[y], hi[y] = (max(lo[y], extent), hi[y]) if sign > 0 else (lo[y], min(hi[y], extent))
        return lo, hi

    def _ellipsoid_shadow(self):
        """The D_2 ellipsoid's box (D_2 <= D_alpha for alpha >= 2 puts Q inside it), within [0, 1]."""
        n = self.p.size
        radius = math.expm1(self.alpha * self.geo.eps / (self.alpha - 1))
        chi2 = self.A.T @ (self.A / self.geo.p_x[:, None])
        inverse = self.basis @ np.linalg.inv(self.basis.T @ chi2 @ self.basis) @ self.basis.T
        half = np.sqrt(radius * np.maximum(np.diag(inverse), 0.0)) * (1 + EIGEN_MARGIN) + 1e-15
        return np.maximum(np.zeros(n), self.p - half), np.minimum(np.ones(n), self.p + half)

    def _certified_min(self, c):
        """A lower bound of min c^T q over Q, valid whatever the optimiser returns (weak duality).

        For any lam >= 0 and x in the simplex, the convex D(q) = c^T q + lam (Phi(q) - level)
        satisfies min_Q c^T q >= min_simplex D >= D(x) + min_j grad D(x)_j - grad D(x)^T x.
        SLSQP supplies x and a least-squares KKT estimate supplies lam.
        """
        constraints = [
            {"type": "eq", "fun": lambda q: q.sum() - 1, "jac": lambda q: np.ones_like(q)},
            {"type": "ineq", "fun": lambda q: self.level - self._phi(q), "jac": lambda q: -self._grad_phi(q)},
        ]
        res = optimize.minimize(
            lambda q: c @ q,
            self.p,
            jac=lambda q: c,
            method="SLSQP",
            bounds=[(0.0, 1.0)] * c.size,
            constraints=constraints,
            options={"maxiter": 200, "ftol": 1e-15},
        )
        x = np.clip(res.x, 0.0, None)
        x /= x.sum()
        grad_phi = self._grad_phi(x)
        free = x > ROOT_FREE
        design = np.stack([grad_phi[free], np.ones(free.sum())], axis=1)
        (lam, _), *_ = np.linalg.lstsq(design, -c[free], rcond=None)
        lam = max(float(lam), 0.0)
        grad = c + lam * grad_phi
        value = c @ x + lam * (self._phi(x) - self.level)
        return float(value + grad.min() - grad @ x) - ROOT_MARGIN

    def _evaluate(self, which, mu, prior, target=-np.inf):
        """Bound the boxes ``which`` and store the results; with a pool, its workers take all
        chunks but the last, which this process bounds meanwhile."""
        args = tuple(getattr(self, name)[which] for name in ("lo", "hi", "start", "anchor", "lam", "lam_best"))
        free = 0 if self.pool is None else self.pool.workers - self.busy_workers
        chunks = min(free + 1, which.size // POOL_MIN_BOXES)
        if chunks <= 1:
            results = self.lagrangian(*args, mu, target)
        else:
            parts = [np.array_split(a, chunks) for a in args]
            futures = [
                self.pool.executor.submit(self.lagrangian, *(part[i] for part in parts), mu, target)
                for i in range(chunks - 1)
            ]
            mine = self.lagrangian(*(part[-1] for part in parts), mu, target)
            results = [np.concatenate(r) for r in zip(*[f.result() for f in futures], mine)]
        best, best_x, best_lam, bound_lam, best_theta, rival, best_anchor, cut_lo, cut_hi = results
        self.anchor_best[which] = best_anchor
        # A box lies in its parent, and a bound at another mu moves by the knapsack shift:
        # ``prior`` is valid too, and the smaller of the two is kept.
        self.cached[which], self.mu_at[which], self.rival[which] = np.minimum(best, prior), mu, rival
        self.unbounded[which] = False
        self.best_point[which], self.lam[which], self.theta[which] = best_x, best_lam, best_theta
        self.lam_best[which] = bound_lam
        self._cut(which, cut_lo, cut_hi, mu, target)

    def _drift(self, mu_from, mu, lo, hi):
        """How much a bound of F_mu at ``mu_from`` can rise at ``mu`` on each box: the largest
        change of the linear term -mu^T (q - P_Y) there (a knapsack)."""
        delta = mu[None, :] - mu_from
        return np.maximum(-np.sum(delta * (_knapsack(-delta, lo, hi) - self.p), axis=-1), 0.0)

    def _cut(self, which, cut_lo, cut_hi, mu, target):
        """Narrow boxes ``which`` to their range reductions, and record the parts cut off.

        F_mu <= target on every feasible point cut off, at this mu.  A box reduced to nothing
        has F_mu <= target throughout, which is its bound then.
        """
        if not np.isfinite(target) or not self.reducing:
            return
        lo, hi, nonempty = _tighten(cut_lo, cut_hi)
        live = self.cached[which] > target
        self.cached[which[live & ~nonempty]] = target
        moved = nonempty & live & (np.any(lo > self.lo[which], axis=1) | np.any(hi < self.hi[which], axis=1))
        idx = which[moved]
        if idx.size == 0:
            return
        grow = lambda old, new: np.concatenate([old, new])
        self.cut_outer = tuple(map(grow, self.cut_outer, (self.lo[idx], self.hi[idx])))
        self.cut_bound = grow(self.cut_bound, np.full(idx.size, float(target)))
        self.cut_mu = grow(self.cut_mu, np.broadcast_to(mu, (idx.size, mu.size)))
        self.cut_lam, self.cut_point = grow(self.cut_lam, self.lam[idx]), grow(self.cut_point, self.best_point[idx])
        self.lo[idx], self.hi[idx] = lo[moved], hi[moved]

    def _roll_back(self, entries, mu):
        """Undo the cuts ``entries`` (by entry index): each outer box, with everything inside it
        (the boxes and cut-off parts it was refined into), becomes one box again.

        Its bound at mu is the largest of theirs, moved to mu: they cover the outer box's
        feasible points.  Whatever lies inside the outer box is merged, so this holds however
        the boxes came about.  The cut-off parts are thin shells around their boxes, and after a
        large move of mu their bounds rise by about as much as the boxes'; turning each shell
        into boxes instead (up to 2 |Y| slabs per cut) made 100,000 boxes at |Y| = 20.

        After a roll-back the tree cuts no more: mu moves where the mechanism is still far from
        optimal, and at |Y| = 20, eps = 0.02 (three moves within the 60-s limit, each raising
        the parts' bounds by about 0.08 against a value of 0.31) every roll-back reset the tree
        to a few boxes (a gap of 9.7e-2 against 6.1e-2 at that limit).  Where mu never moves, as at |Y| = 10 in
        ``make bench``, the cuts stay: there they take 3 to 20 times fewer boxes.
        """
        self.reducing = False
        outer_lo, outer_hi = self.cut_outer
        # Only the outermost: an undone cut inside another is merged into it.
        lo, hi = outer_lo[entries], outer_hi[entries]
        inside = np.all((lo[:, None] >= lo[None]) & (hi[:, None] <= hi[None]), axis=2)
        inside[np.arange(entries.size), np.arange(entries.size)] = False
        entries = entries[~inside.any(axis=1)]
        lo, hi = outer_lo[entries], outer_hi[entries]
        box_bounds = self.cached + self._drift(self.mu_at, mu, self.lo, self.hi)
        part_bounds = self.cut_bound + self._drift(self.cut_mu, mu, outer_lo, outer_hi)
        merged = np.full(entries.size, -np.inf)
        drop_box = np.zeros(self.lo.shape[0], dtype=bool)
        drop_part = np.zeros(self.cut_bound.size, dtype=bool)
        for e in range(entries.size):
            boxes = np.all((self.lo >= lo[e]) & (self.hi <= hi[e]), axis=1)
            parts = np.all((outer_lo >= lo[e]) & (outer_hi <= hi[e]), axis=1)
            merged[e] = max(box_bounds[boxes].max(initial=-np.inf), part_bounds[parts].max(initial=-np.inf))
            drop_box |= boxes
            drop_part |= parts
        point, lam = self.cut_point[entries], self.cut_lam[entries]
        fields = {
            "lo": lo,
            "hi": hi,
            "cached": merged,
            "mu_at": np.broadcast_to(mu, lo.shape),
            "lam": lam,
            "lam_best": lam,
            "theta": np.zeros_like(lo),
            "unbounded": np.ones(entries.size, dtype=bool),
        }
        fields.update({name: point for name in ("start", "anchor", "anchor_best", "best_point", "rival")})
        for name, new in fields.items():
            setattr(self, name, np.concatenate([getattr(self, name)[~drop_box], new]))
        self.cut_outer = tuple(a[~drop_part] for a in self.cut_outer)
        for name in ("cut_bound", "cut_mu", "cut_lam", "cut_point"):
            setattr(self, name, getattr(self, name)[~drop_part])

    def bounds(self, mu, target=-np.inf, ceiling=None, limit=None):
        """A certified bound of F_mu over Q in every box; only boxes that may exceed ``target``, and
        were not bounded at this mu, are solved (at most ``limit``, the largest bounds first).

        The Lagrangian depends on mu only through -mu^T (q - P_Y), so a box's bound moves by at
        most the largest change of that linear term on the box (a knapsack): the others keep
        that valid, slightly larger bound.  So do the parts of Q cut off from the boxes
        (:meth:`_cut`): a cut whose part's bound now exceeds ``ceiling`` (default ``target``)
        is undone (:meth:`_roll_back`), the others keep that bound (``cut_off``).  A ceiling
        above the target keeps a round-off rise of the target, or a small move of mu, from
        undoing every cut.
        """
        ceiling = target if ceiling is None else ceiling
        parts = self.cut_bound + self._drift(self.cut_mu, mu, *self.cut_outer)
        if np.any(parts > ceiling):
            self._roll_back(np.flatnonzero(parts > ceiling), mu)
            parts = self.cut_bound + self._drift(self.cut_mu, mu, *self.cut_outer)
        bounds = self.cached + self._drift(self.mu_at, mu, self.lo, self.hi)
        # A box bounded at this very mu is not bounded again (its bound would not change).
        current = ~self.unbounded & np.all(self.mu_at == mu[None, :], axis=1)
        stale = np.flatnonzero((bounds > target) & ~current)
        if limit is not None and stale.size > limit:
            stale = stale[np.argsort(-bounds[stale], kind="stable")[:limit]]
        self.evaluated = stale.size
        if stale.size:
            self._evaluate(stale, mu, bounds[stale], target)
            bounds[stale] = self.cached[stale]
        # (a part cut off in this round is bounded at this mu, by the target)
        new = self.cut_bound[parts.size :]
        self.cut_off = max(float(parts.max(initial=-np.inf)), float(new.max(initial=-np.inf)))
        return bounds

    def candidates(self, which):
        """The ascent end points of boxes ``which`` (columns; not necessarily in Q)."""
        return self.best_point[which].T

    def split(self, which, widest=False):
        """Halve each box in ``which``: between its two rival maximisers (unless ``widest``), else
        across its widest side; return the children's indices."""
        lo, hi = self.lo[which], self.hi[which]
        width = hi - lo
        # A bound is loose where two maximisers of the Lagrangian compete (the hard case of the
        # trust-region problem): a cut between them separates them.
        apart = (self.best_point[which] - self.rival[which]) ** 2 / self.p
        wide = width**2 / self.p
        use_apart = apart.max(axis=1, keepdims=True) > RIVAL_APART * wide.max(axis=1, keepdims=True)
        use_apart &= not widest
        score = np.where(use_apart, apart, wide)
        y, rows = np.argmax(score, axis=1), np.arange(which.size)
        between = 0.5 * (self.best_point[which] + self.rival[which])[rows, y]
        middle = np.where(use_apart[:, 0], between, 0.5 * (lo[rows, y] + hi[rows, y]))
        middle = np.clip(middle, lo[rows, y] + 0.1 * width[rows, y], hi[rows, y] - 0.1 * width[rows, y])
        hi_left, lo_right = hi.copy(), lo.copy()
        hi_left[rows, y], lo_right[rows, y] = middle, middle
        lo_new, hi_new, keep = _tighten(np.concatenate([lo, lo_right]), np.concatenate([hi_left, hi]))
        # The children's ascents start at the parent's end point, which is also where their
        # quadratic minorant of Phi is expanded: its tightness depends on that point (starting
        # at the boundary of Q along the ray through it left |Y| = 20 below eps_max
        # converging with about 400 boxes instead of 35).
        ends = self.best_point[which]
        parents = np.concatenate([which, which])[keep]
        rest = np.ones(self.lo.shape[0], dtype=bool)
        rest[which] = False
        # (a box whose halves both vanish on the plane, by round-off, stays whole)
        rest[np.setdiff1d(which, parents)] = True
        self.lo = np.concatenate([self.lo[rest], lo_new[keep]])
        self.hi = np.concatenate([self.hi[rest], hi_new[keep]])
        self.start = np.concatenate([self.start[rest], np.concatenate([ends, ends])[keep]])
        self.anchor = np.concatenate([self.anchor[rest], self.anchor_best[parents]])
        for name in ("lam", "lam_best", "theta", "best_point", "rival", "cached", "mu_at", "unbounded", "anchor_best"):
            old = getattr(self, name)
            setattr(self, name, np.concatenate([old[rest], old[parents]]))
        self.unbounded[-parents.size :] = True
        return np.arange(self.lo.shape[0] - parents.size, self.lo.shape[0])
