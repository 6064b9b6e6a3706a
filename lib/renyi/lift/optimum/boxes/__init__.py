r"""The box branch and bound of :func:`~renyi.lift.optimum.global_optimum`, for :math:`|\mathcal Y|\ge6`.

Weak duality bounds :math:`V_{\chi^2}` by :math:`U(\mu)=\max_{q\in\mathcal Q^{\rm ex}_\epsilon}F_\mu(q)`
with the convex :math:`F_\mu(q)=g(q)-\mu^{\mathsf T}(q-P_Y)`.  The conical branch and bound
(:mod:`renyi.lift.optimum.cones`) bounds it by vertex enumeration, which needs exponentially many
cones as :math:`|\mathcal Y|` grows.  Here the posteriors are split into boxes
:math:`\ell\le q\le u` on the plane :math:`\mathbf 1^{\mathsf T}q=1`, and on each box
:math:`F_\mu` is majorised on :math:`\mathcal Q^{\rm ex}_\epsilon` by a **concave** function

.. math::

    L(q)=F_\mu(q)+\lambda\,(e^{\alpha\epsilon}-\tilde\Phi(q))
    +\textstyle\sum_y\theta_y(q_y-\ell_y)(u_y-q_y),\qquad\lambda,\theta\ge0,

where :math:`\tilde\Phi\le\Phi_\alpha` on the box's feasible points: :math:`\Phi_\alpha`
itself, or its minorant there (in each :math:`z_x=(Aq)_x` a Taylor polynomial with a proved
lower bound of the remainder, below order 2 :math:`z_x^\alpha` itself on one side of the
expansion point, expanded at the parent's ascent end point or where the parent's bound
expanded it: neither point dominates).  Both added terms are non-negative on the box's feasible
points, so :math:`L\ge F_\mu` there.

* **Concavity.**  The Hessian of :math:`\Phi_\alpha`,
  :math:`A^{\mathsf T}\operatorname{diag}(w\,\alpha(\alpha-1)z^{\alpha-2})A` with :math:`z=Aq`, is
  smallest where :math:`z` is least on the box's points of the plane for :math:`\alpha\ge2`
  and greatest for :math:`1<\alpha<2` (:math:`z^{\alpha-2}` is monotone; each end a
  fractional knapsack, ``linear_range``: on the 200 highest boxes of a tree at
  :math:`|\mathcal Y|=20`, :math:`\alpha=5`, the least :math:`z` is a median 1.26 times the
  lower corner's, which doubles the floor).  Only feasible points need a concave majorant, and
  every feasible :math:`z_x` lies in a range the budget sets (``lift_ranges``), which raises
  the least :math:`z` further (on the 200 highest boxes of such a tree after 60 rounds, for
  54 % of the pairs :math:`(x,\text{box})`; the floor rises a median 1.4 times, for a tenth of
  them over 4 times).  They are used where a box's ascent starts within them, and its
  certificate is then taken at the last point within them on the ascent's way; a box with
  no point within them holds no feasible point, and its bound is :math:`-\infty`.  The minorant's remainder is
  bounded on the same range, its Hessian is at least a constant one, and :math:`\theta` is
  raised until :math:`\nabla^2L\preceq0` on the plane (a generalised eigenvalue, with a
  safety margin).  Its shape is the one of least cost :math:`\sum_y\theta_yc_y`, a small
  semidefinite program solved by a barrier method (``cheapest_cover``), where
  :math:`c_y=4(x_y-\ell_y)(u_y-x_y)`, floored at :math:`0.01|\mathcal Y|\,w_y^2`, is what the cover
  adds at the box's expected maximiser :math:`x` (``cover_cost``): against a face of the
  simplex (:math:`x_y=\ell_y=0`) the convexity across the face is covered almost for free.
  A box against a face is also tens of times narrower in some coordinates than in others,
  and a fixed shape there costs up to 1.6 times the least.
* **Certificate.**  For any :math:`\hat q` in the box with :math:`A\hat q` in those ranges,
  :math:`\max L\le L(\hat q)+\max_v\nabla L(\hat q)^{\mathsf T}(v-\hat q)`, a fractional
  knapsack; :math:`\hat q` comes from an accelerated projected ascent in the metric of a
  diagonal majoriser of :math:`-\nabla^2L` (the covers' :math:`\theta` span four decades on
  a box against a face), whose accuracy affects only how tight the bound is.
* **Multipliers.**  :math:`\lambda` is tried at multiples of the parent box's, at the one of
  the parent's bound and at the value from which :math:`F_\mu-\lambda\tilde\Phi` is concave
  without :math:`\theta`; a golden-section search follows around the winner (the bound is
  roughly convex in :math:`\lambda`, with a sharp minimum where two maximisers compete), each
  evaluation's least-cost cover starting from the previous one's.  The trials rank with fixed
  shapes of cover, which favour large multipliers: where the search ends at an end of its
  range, a second one continues beyond it.
* **Root and splits.**  The root box is each coordinate's range over
  :math:`\mathcal Q^{\rm ex}_\epsilon`, certified by duality.  A box is halved between the
  maximisers of two competing multipliers when they differ (the hard case of the
  trust-region problem), else across its widest side in the :math:`\chi^2` metric.  A
  child keeps its parent's bound (valid on the smaller box) when its own is larger, so
  bounds never grow.
* **Range reduction.**  Each bound's tangent plane of :math:`L` at the ascent's end point
  majorises :math:`F_\mu` on the box's feasible points, so the box shrinks to where that
  plane can exceed the split target (reduced-cost bound tightening, ``reduce_range``): at
  no cost, in every coordinate at once, which splits alone do one at a time.  What is cut
  off keeps the target as its bound at that :math:`\mu` (``BoxTree.cut_off``); when a
  move of :math:`\mu` lifts it above value :math:`\times(1+\text{rtol})`, the cut is
  undone.  At :math:`|\mathcal Y|=10`, :math:`\epsilon=0.02`, the tree converges with 323
  boxes instead of 1,378, and in the bounded family with 611 instead of 25,063.
* **Speed.**  All trial multipliers of every constraint model run as one stacked ascent,
  and so do the searches that refine the winners (a round bounds tens of boxes, where the
  cost of a numpy call, not its size, dominates), and with a :class:`~renyi.lift.optimum.pool.WorkerPool` the
  boxes of a round are bounded in chunks by several processes
  (``global_optimum(..., workers=2)``).  Which :math:`\mu` the tree bounds
  (:mod:`renyi.lift.optimum` fits it to the KKT conditions of a locally optimal mechanism)
  matters more than either: any :math:`\mu` is valid, but only the stationary one can make
  the bound tight, and only at a mechanism that is locally optimal, which column generation
  priced near the outputs provides before the first box (``BoxPhase._generate_columns``).
  A :math:`\mu` fitted to a poor local mechanism can bound :math:`U(\mu)` many times above
  the value (``make bench-scale`` at :math:`\epsilon=0.02`); when a
  feasible point prices more than ``Heuristics.tree_multiplier.dual_switch``
  above the value there, the tree bounds at the LP's dual instead, whose boxes' maximisers
  are the columns the LP lacks (column generation's pricing problem).

At a local maximiser of :math:`F_\mu` with its KKT multiplier the added terms vanish,
which is why the bound tightens fast where :math:`\mathcal Q^{\rm ex}_\epsilon` is nearly an
ellipsoid (small :math:`\epsilon`: the S-lemma is exact for a quadratic on an ellipsoid).
Where the optimal posteriors sit on faces of the simplex, the Lagrangian is convex across
the faces and the boxes must shrink in every direction, so the gap closes slowly.  Taught
in the chapter *General leakage matrices* (``book/part2``).

The modules: :mod:`~renyi.lift.optimum.boxes.cover` (knapsacks, covers and range reduction
on boxes), :mod:`~renyi.lift.optimum.boxes.bound` (the certified bound at one multiplier),
:mod:`~renyi.lift.optimum.boxes.multipliers` (the multiplier and model of Phi per box),
:mod:`~renyi.lift.optimum.boxes.state` (the tree's per-box and per-cut records) and
:mod:`~renyi.lift.optimum.boxes.tree` (the tree itself).
"""

from .tree import BoxTree

__all__ = ["BoxTree"]
