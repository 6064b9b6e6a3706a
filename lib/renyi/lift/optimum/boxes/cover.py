"""Primitives of the box bound.

Projection onto a box, the least-cost concavity cover, the
fractional knapsack of the certificate, range reduction and box tightening.
"""

from __future__ import annotations

import numpy as np


def project(x, lo, hi, scale=None):
    """Projection of rows of ``x`` onto a box on the simplex's plane.

    The set is ``{lo <= q <= hi, sum(q) = 1}`` and the projection exact, in the metric
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


def cheapest_cover(m, basis, cost, theta, settings):
    r"""The diagonal concavity cover of least cost.

    The diagonal cover of least cost: :math:`\min\sum_y\theta_yc_y` subject to
    :math:`B^{\mathsf T}\mathrm{diag}(2\theta)B\succeq m`, from a feasible ``theta`` (rows: boxes).

    The cover adds :math:`\sum_y\theta_y(x_y-\ell_y)(u_y-x_y)` to the Lagrangian at a point
    :math:`x` of the box, at most :math:`\sum_y\theta_yw_y^2/4`; ``cost`` weighs each
    coordinate by what it adds at the box's expected maximiser (:func:`cover_cost`).
    Which coordinates carry it matters: on the plane, a convex direction :math:`e_y` can be paid for
    by :math:`\theta_y` alone or smeared over every coordinate, and where the widths differ
    tens of times (a box against a face of the simplex) the fixed shapes of
    ``BoxLagrangian._cover`` cost up to 1.6 times the least (``tests/test_boxes.py``), enough
    to keep a box's bound above the value.  This small semidefinite
    program (|Y| variables, one LMI of order |Y| - 1) is solved by a log-barrier method,
    :math:`t\,c^{\mathsf T}\theta-\log\det(B^{\mathsf T}\mathrm{diag}(2\theta)B-m)-\sum_y\log\theta_y`
    with damped Newton steps (which stay feasible: the barrier is self-concordant) and
    :math:`t` raised 4-fold per stage from where the duality gap :math:`(2|Y|-1)/t` equals the
    start's cost; 6 stages (2 steps each) would leave it near 4^-5 of that if each stage were
    centred.  Two damped steps do not centre it where the least cover is a small part of the
    start's (``tests/test_boxes.py``: up to 4.8 % above the minimum, 1.0 % with three steps).
    The caller certifies the result (a generalised eigenvalue), so its accuracy affects
    tightness, never validity.
    """
    n = basis.shape[0]
    t = (2 * n - 1) / np.sum(theta * cost, axis=-1)
    eye = np.eye(n)[None]
    for _ in range(settings.heuristics.cover.stages):
        for _ in range(settings.heuristics.cover.newton_steps):
            slack = congruence(basis, 2 * theta) - m
            g = basis @ np.linalg.inv(slack) @ basis.T
            grad = t[:, None] * cost - 2 * np.diagonal(g, axis1=1, axis2=2) - 1 / theta
            hess = 4 * g * g + eye / theta[:, :, None] ** 2
            step = np.linalg.solve(hess, grad[..., None])[..., 0]
            decrement = np.sqrt(np.maximum(np.sum(grad * step, axis=-1), 0.0))
            theta = theta - step / (1 + decrement)[:, None]
        t = t * settings.heuristics.cover.growth
    return theta


def cover_cost(lo, hi, settings, at=None):
    """Each coordinate's cost per unit of cover.

    What it adds to the bound at ``at``, the box's
    expected maximiser, floored at ``cover.cost_floor_per_output`` |Y| times the squared width
    (the worst case, the box's centre, without ``at``).

    Where the maximiser lies against a side of its box (a posterior on a face of the simplex,
    ``x_y = lo_y = 0``), a cover of that coordinate costs almost nothing there, so the
    least-cost cover pays for the convexity across the face with it.  Weighed by the squared
    widths alone, the cover would spread over the free coordinates, where it loosens the
    bound and the tree needs several times the boxes (``make bench``'s lift case at
    eps = 0.02).
    """
    width2 = np.maximum(hi - lo, settings.margins.min_width) ** 2
    if at is None:
        return width2
    floor = min(1.0, settings.heuristics.cover.cost_floor_per_output * lo.shape[-1])
    return np.maximum(4 * (at - lo) * (hi - at), floor * width2)


def knapsack(g, lo, hi):
    """A maximiser of ``g . v`` over ``{lo <= v <= hi, sum(v) = 1}`` (fill the best coordinates first)."""
    order = np.argsort(-g, axis=-1)
    width = np.take_along_axis(hi - lo, order, axis=-1)
    room = 1 - lo.sum(axis=-1, keepdims=True)
    add = np.clip(room - (np.cumsum(width, axis=-1) - width), 0.0, width)
    v = lo.copy()
    np.put_along_axis(v, order, np.take_along_axis(lo, order, axis=-1) + add, axis=-1)
    return v


def linear_range(A, ascending, lo, hi):
    r"""The least and greatest value of each row of ``A q`` over each box on the plane.

    The least and greatest of :math:`(Aq)_x` over :math:`\{\ell\le q\le u,\ \mathbf 1^{\mathsf T}q=1\}`,
    rows of ``lo`` and ``hi`` being boxes; ``ascending`` is ``argsort(A, axis=1)``.  Each is a
    fractional knapsack: from :math:`q=\ell`, the remaining mass :math:`1-\mathbf 1^{\mathsf T}\ell`
    goes to the smallest entries of the row first (the least) or to the largest (the greatest).

    The corners :math:`A\ell` and :math:`Au` (valid for :math:`A\ge0`) ignore the plane: on a box
    whose lower corner sums to 0.4 the mass 0.6 must land somewhere.  On the 200 highest boxes of
    a tree at :math:`|\mathcal Y|=20`, :math:`\alpha=5`, :math:`\epsilon=0.02`, the least
    :math:`z_x` is a median 1.26 times :math:`(A\ell)_x` (up to 2.8 times), and the Hessian floor
    takes it to the power :math:`\alpha-2`.  Returns two arrays (boxes x rows of ``A``).
    """
    k = A.shape[0]
    row = np.arange(k)[:, None]
    sorted_a = A[row, ascending]  # k x n, each row ascending
    width = (hi - lo)[:, ascending]  # boxes x k x n
    room = (1 - lo.sum(axis=-1))[:, None, None]
    base = lo @ A.T

    def filled(w, a):
        add = np.clip(room - (np.cumsum(w, axis=-1) - w), 0.0, w)
        return base + np.sum(add * a, axis=-1)

    return filled(width, sorted_a[None]), filled(width[..., ::-1], sorted_a[None, :, ::-1])


def reduce_range(slope, offset, spread, lo, hi, target, settings):
    r"""Range reduction: the sub-box outside which no point of the box can have ``F_mu > target``.

    ``offset + slope . q`` majorises :math:`F_\mu` on the box's feasible points (a tangent plane
    of the concave Lagrangian, :meth:`BoxLagrangian.bound_at`).  For any :math:`\tau`, on the
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
    margins = settings.margins
    slack = np.maximum(offset + top - target + margins.range_reduction * size + margins.absolute, 0.0)[:, None]
    slack = np.where(np.isnan(slack), np.inf, slack)  # (a NaN tangent certifies nothing)
    # (where d is 0 or tiny the reach is infinite: no reduction)
    with np.errstate(divide="ignore", over="ignore", invalid="ignore"):
        reach = np.where(d != 0, slack / np.abs(d), np.inf)
    return np.where(d > 0, np.maximum(lo, hi - reach), lo), np.where(d < 0, np.minimum(hi, lo + reach), hi)


def congruence(b, diagonal):
    """``b^T diag(d) b`` for each row ``d`` of ``diagonal`` (a stack of matrices)."""
    return (b.T[None] * diagonal[:, None, :]) @ b


def outer(a, b):
    """Row-wise outer products of two stacks of vectors."""
    return a[:, :, None] * b[:, None, :]


def tighten(lo, hi):
    """Shrink boxes to the plane sum(q) = 1; returns the boxes and which are non-empty."""
    lo = np.maximum(lo, 1 - (hi.sum(axis=-1, keepdims=True) - hi))
    hi = np.minimum(hi, 1 - (lo.sum(axis=-1, keepdims=True) - lo))
    return lo, hi, np.all(lo <= hi, axis=-1) & (lo.sum(axis=-1) <= 1) & (hi.sum(axis=-1) >= 1)
