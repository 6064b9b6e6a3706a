r"""The optimal value of problem (3) for any leakage matrix (Theorem 2), with a certificate.

Taught in the chapter *General leakage matrices* (``book/part2``).

Theorem 2 writes :math:`V_{\chi^2}(\epsilon,\alpha)` as the concave envelope at
:math:`P_Y` of the convex :math:`g(q)=\|D_Y^{-1/2}(q-P_Y)\|^2` over the convex
feasible set :math:`\mathcal Q^{\rm ex}_\epsilon=\{q\in\Delta:\Phi_\alpha(q)\le
e^{\alpha\epsilon}\}`.  :func:`global_optimum` brackets it between two numbers:

* a **lower bound**, the utility of an exactly feasible mechanism: a linear
  program over the weights of candidate posteriors (column generation), whose
  support is refined by a local optimiser over the whole mechanism;
* an **upper bound** valid by construction, from weak duality: for *every*
  :math:`\mu`,

  .. math::

      V_{\chi^2}\le U(\mu)=\max_{q\in\mathcal Q^{\rm ex}_\epsilon}
      F_\mu(q),\qquad F_\mu(q)=g(q)-\mu^{\mathsf T}(q-P_Y),

  because any feasible mechanism has :math:`\sum_up_ug(q_u)=\sum_up_uF_\mu(q_u)`.
  :math:`\mu` is the LP's dual, and the maximum of the convex :math:`F_\mu`
  over the convex set is bounded by a *conical branch and bound*: the
  directions from :math:`P_Y` are split into simplicial cones; in each, the
  feasible set lies in a simplex cut off by one supporting hyperplane (a facet
  :math:`q_y\ge0` or a tangent plane of the convex :math:`\Phi_\alpha`), and a
  convex function on a simplex is largest at a vertex.  Cones whose bound is
  below the target are left alone; the others are bisected.  At large
  :math:`|\mathcal Y|` a *box branch and bound* on a concave Lagrangian follows
  (:mod:`renyi.lift.boxes`).

Theorem 1's :math:`V_+` is a second valid upper bound where it is proved
(invertible :math:`A`, :math:`\alpha\ge2`, :math:`\bar\delta_\epsilon<1`), and two
coarse ones always hold (see :func:`global_optimum`); the result reports the
smallest and says which it is.
"""

from __future__ import annotations

import contextlib
import math
import os
import time
import warnings
from dataclasses import dataclass

import numpy as np
from scipy import optimize
from threadpoolctl import threadpool_limits

from .._validation import as_int, as_real_scalar
from .certificate import certificate
from .channels import LiftMechanism, build_mechanism, budget_use, from_channel
from .model import GeneralLeakageModel, LeakageModel, check_order, check_eps
from .candidates import (
    lines_through_centre,
    polish_channel,
    polish_mechanism,
    price_locally,
    pull_inside,
    seed_points,
)
from .boxes import BoxTree, WorkerPool
from .cones import ConeTree, Geometry
from ._numerics import NEGLIGIBLE_WEIGHT, TINY

__all__ = ["CertifiedOptimum", "global_optimum"]

#: Outputs are merged, then dropped, while the mechanism loses at most this times rtol of its
#: value (relative): the support of the solution is what Proposition 1 counts.
MERGE_RTOL = 0.01
#: Most cones split in one round, and the work budget of a round (cones x k x (k + pairs)).
SPLIT_BATCH = 20_000
SPLIT_WORK = 2_000_000
#: Feasibility tolerances of the HiGHS linear programs.
LP_TOLERANCE = 1e-10
#: Rounds of adding priced ray end points to one LP.
PRICING_PASSES = 10
#: Relative safety margin on the upper bound for floating-point round-off.
ROUNDOFF_MARGIN = 1e-12
#: LP weights above this define the support whose weights are re-solved exactly.
EXACT_SOLVE_WEIGHT = 1e-12
#: The re-solved weights must reproduce P_Y this closely (else the LP's are kept).
MARGINAL_ATOL = 1e-14
#: ... and after merging coincident outputs.
MERGE_MARGINAL_ATOL = 1e-13
#: A priced candidate enters the LP when it beats the LP value by this much, relatively.
PRICING_RTOL = 1e-9
#: Candidates within this (relatively) of the best priced value stay in the next LP.
KEEP_NEAR_BEST = 1e-3
#: From this |Y| on, the box branch and bound bounds U(mu), after one round of the cones.  The
#: cones need a number of cones exponential in |Y|; below it they close the gap faster than the
#: boxes, from it the boxes do (make bench, table lift_cones_alone: the |Y| = 6 and 7 cases
#: with the cones alone beside the same cases with the boxes).
BOX_MIN_SIZE = 6
#: The cone phase's local search (mechanism polish and local pricing) runs at the first round,
#: then every this many rounds while it raises the value (:class:`_Schedule`): later runs
#: rarely raise it, and each costs as much as many rounds of splitting.
CONE_LOCAL_EVERY = 8
#: Most boxes split in one round, and the columns carried from one box-phase LP to the next.
BOX_BATCH = 400
BOX_MIN_BATCH = 8
#: While a round would bound fewer boxes than this, the children are halved again across
#: their widest side: below tens of boxes a round costs its fixed numpy call overhead, not its
#: size (a round of 32 boxes costs about twice one of 2), so small rounds are filled
#: (make bench, the |Y| = 6 case at eps_max / 2, where one or two boxes stay live a round).
BOX_MIN_ROUND = 16
#: Boxes (cones) whose bound is below value * (1 + BOX_TARGET * rtol) are not split: the gap
#: rtol is reached once every one is below value / (1 - rtol), and a target nearer it splits
#: far fewer (at |Y| = 10, eps_max / 2: 1169 boxes at 0.9, 2868 at 0.5, for rtol = 1e-4).
BOX_TARGET = 0.9
CONE_TARGET = 0.5
#: A tree stuck on a mu that prices a feasible point above value (1 + rtol) moves to the
#: nearest mu that prices the known points at most at value (1 + STUCK_SLACK rtol).
STUCK_SLACK = 0.5
BOX_LP_COLUMNS = 4000
#: Seconds a box round aims at (the batch adapts): how far the time limit may be overrun.
BOX_ROUND_SECONDS = 1.0
#: Every this many box rounds, a local search (SLSQP) prices posteriors from the worst boxes.
BOX_LOCAL_EVERY = 4
BOX_LOCAL_STARTS = 8
BOX_LOCAL_ITER = 100
#: Up to this |Y| the box phase starts with this many local searches over the channel itself;
#: each is an SLSQP over |Y|^2 variables whose cost grows about as |Y|^6, hence the limit.
CHANNEL_POLISH_MAX_SIZE = 12
CHANNEL_POLISH_STARTS = 2
#: The box tree's mu is the stationary one when its least-squares KKT system fits this well
#: (relative residual), else the LP's dual.  An exact local optimum fits to round-off and an
#: SLSQP polish to about 1e-6; even a rougher fit is far better than the dual (at |Y| = 20,
#: eps_max / 2, the dual kept every box bound 109 % above the value).
STATIONARY_RTOL = 1e-3
#: Posterior coordinates at or below this count as zero (a face) in the KKT system.
STATIONARY_ZERO = 1e-10
#: SLSQP iterations of the mechanism polish that precedes the KKT fit.
MU_POLISH_ITER = 200
#: The tree's mu is renewed when the LP's value has risen by this fraction of rtol since.
MU_RENEW = 0.1
#: A periodic local search keeps its pace when it raises the LP's value by this fraction of
#: rtol; else it runs half as often.
SEARCH_USEFUL = 0.01


@dataclass(frozen=True)
class CertifiedOptimum(LiftMechanism):
    r"""A feasible mechanism with a certified bracket :math:`[\text{lower},\text{upper}]\ni V_{\chi^2}`.

    Attributes
    ----------
    lower_bound : float
        The utility of this mechanism; equals ``utility``.  For :math:`\epsilon>0` the
        mechanism meets the budget exactly: its lifts are checked in decimal arithmetic with no
        tolerance (:func:`~renyi.lift.channels.budget_use`), and its χ² is rounded down.
    upper_bound : float
        A proved upper bound on :math:`V_{\chi^2}(\epsilon,\alpha)`.
    gap : float
        ``(upper_bound - lower_bound) / upper_bound`` (0 when both are 0).  Never raised or
        clipped: a negative gap would mean an inconsistent bracket, which is warned about
        and not certified.
    upper_bound_source : str
        ``"branch-and-bound"`` (weak duality, computed over cones), ``"box branch-and-bound"``
        (weak duality, computed over boxes with a concave Lagrangian), ``"theorem 1"``
        (:math:`V_+`), ``"D2 relaxation"`` (:math:`\sigma^2_{\max}(e^{\alpha\epsilon/(\alpha-1)}-1)`,
        from :math:`D_2\le D_\alpha`), ``"|Y| - 1"``, or ``"exact"`` (no utility is
        possible).
    certified : bool
        ``0 <= gap <= rtol`` as requested.
    elapsed : float
        Seconds spent.
    cones : int
        Cones in the final partition of the conical branch and bound.
    boxes : int
        Boxes in the final partition of the box branch and bound (0 when it did not run).
    """

    lower_bound: float = 0.0
    upper_bound: float = math.inf
    gap: float = math.inf
    upper_bound_source: str = ""
    certified: bool = False
    elapsed: float = 0.0
    cones: int = 0
    boxes: int = 0


def _gains(model, q):
    return np.sum((q - model.p_y[:, None]) ** 2 / model.p_y[:, None], axis=0)


def _solve_lp(model, q, gains):
    """max gains^T w s.t. q w = P_Y, w >= 0; returns value, weights and the dual mu (mu^T q_j >= g_j)."""
    options = {"primal_feasibility_tolerance": LP_TOLERANCE, "dual_feasibility_tolerance": LP_TOLERANCE}
    # Tight tolerances occasionally stall the dual simplex (status 4); the interior-point
    # method (with crossover) is tried at the same tolerances before HiGHS's defaults, whose
    # weights (1e-7) once left P_Y off by 2e-8 and the mechanism's lifts 4e-9 above e^eps.
    for method, opts in (("highs-ds", options), ("highs-ipm", options), ("highs-ds", None)):
        res = optimize.linprog(-gains, A_eq=q, b_eq=model.p_y, bounds=(0, None), method=method, options=opts)
        if res.status == 0:
            break
    else:
        raise RuntimeError(f"linear program failed: {res.message}")
    weights = _exact_weights(model, q, res.x)
    return float(gains @ weights), weights, -res.eqlin.marginals


def _exact_weights(model, q, weights):
    """Weights on the support of ``weights`` that reproduce P_Y to round-off, where they exist.

    On the basis support the barycentre equations determine the weights (least squares);
    where the support is off (a tolerance-limited solution) non-negative least squares on
    it is tried too.  Else ``weights`` is returned.
    """
    support = np.flatnonzero(weights > EXACT_SOLVE_WEIGHT)
    exact, *_ = np.linalg.lstsq(q[:, support], model.p_y, rcond=None)
    if not (np.all(exact >= 0) and np.allclose(q[:, support] @ exact, model.p_y, atol=MARGINAL_ATOL, rtol=0)):
        support = np.flatnonzero(weights > 0)
        exact, _ = optimize.nnls(q[:, support], model.p_y)
        if not np.allclose(q[:, support] @ exact, model.p_y, atol=MARGINAL_ATOL, rtol=0):
            return weights
    out = np.zeros_like(weights)
    out[support] = exact
    return out


def _stationary_multiplier(model, geo, columns, weights, value):
    r"""The mu at which F_mu is stationary on Q's boundary at every output of the LP's mechanism.

    At a local optimum of the mechanism every output ``q_u`` satisfies the KKT conditions of
    :math:`\max_Q F_\mu`: :math:`\partial_y g(q_u)-\mu_y-\lambda_u\partial_y\Phi_\alpha(q_u)=\nu_u`
    on its support, and :math:`F_\mu(q_u)=V`.  Least squares over :math:`(\mu,\lambda,\nu)`
    (with :math:`\sum\mu=0`, since :math:`\mu+t\mathbf 1` is the same function on the plane)
    returns that mu and the relative residual.  Only this mu can make :math:`U(\mu)` equal V
    at that mechanism; the LP's dual tends to it only as its columns crowd round the outputs.
    Any mu gives a valid bound, so a poor one costs tightness, never validity.
    """
    support = weights > NEGLIGIBLE_WEIGHT
    q, weights = columns[:, support], weights[support]
    n, m = q.shape
    d = q - model.p_y[:, None]
    z = np.maximum(geo.A @ q, 0.0)
    grad_phi = geo.A.T @ (geo.alpha * z ** (geo.alpha - 1) * (geo.p_x ** (1 - geo.alpha))[:, None])
    blocks, rhs = [], []
    for u in range(m):
        free = np.flatnonzero(q[:, u] > STATIONARY_ZERO)
        rows = np.zeros((free.size + 1, n + 2 * m))
        rows[np.arange(free.size), free] = 1.0
        rows[: free.size, n + u], rows[: free.size, n + m + u] = grad_phi[free, u], 1.0
        rows[-1, :n] = d[:, u]
        # Weighted by sqrt(P_U(u)): a near-duplicate output of tiny weight barely moves mu.
        scale = math.sqrt(weights[u])
        blocks.append(scale * rows)
        rhs.append(scale * np.append(2 * d[free, u] / model.p_y[free], np.sum(d[:, u] ** 2 / model.p_y) - value))
    blocks.append(np.concatenate([np.ones(n), np.zeros(2 * m)])[None])
    design, target = np.concatenate(blocks), np.concatenate(rhs + [np.zeros(1)])
    solution, *_ = np.linalg.lstsq(design, target, rcond=None)
    residual = np.linalg.norm(design @ solution - target) / max(np.linalg.norm(target), TINY)
    return solution[:n], float(residual)


def _polished_multiplier(model, geo, columns, weights, mu):
    """The box tree's mu and new columns: the LP's mechanism polished, and its stationary mu.

    The LP's outputs are ray end points near, not at, a local optimum (coordinates of 1e-6
    where the optimum has zeros), which spoils the KKT fit; a polish of the whole mechanism
    fixes that.  Where the fit is still poor the LP's dual is returned.
    """
    support = weights > NEGLIGIBLE_WEIGHT
    q, w = polish_mechanism(geo, columns[:, support], weights[support], MU_POLISH_ITER)
    w = np.clip(w, 0.0, None)
    stationary, residual = _stationary_multiplier(model, geo, q, w, float(_gains(model, q) @ w))
    return (stationary if residual <= STATIONARY_RTOL else mu), pull_inside(geo, q[:, w > NEGLIGIBLE_WEIGHT])


def _solve_priced(model, tree, columns):
    """The LP over ``columns``, with every ray end point that prices above its value added.

    Without this the dual can price points the LP does not see far above the value
    (column generation drops columns), and the bound ``U(mu)`` is loose.
    """
    for _ in range(PRICING_PASSES):
        value, weights, mu = _solve_lp(model, columns, _gains(model, columns))
        priced = tree.ray_values(mu)
        # HiGHS's dual feasibility tolerance is absolute: reduced costs below it are noise.
        violated = np.flatnonzero(priced > value * (1 + PRICING_RTOL) + LP_TOLERANCE)
        if violated.size == 0:
            return columns, value, weights, mu
        worst = violated[np.argsort(-priced[violated])][:500]
        columns = np.concatenate([columns, tree.ray_points(worst)], axis=1)
    # Out of passes: solve once more on the columns just added.  Any mu gives a valid bound
    # U(mu); the passes only make it tight.
    value, weights, mu = _solve_lp(model, columns, _gains(model, columns))
    return columns, value, weights, mu


def _merge(q, w, p_y, budget):
    """Merge nearby posteriors while the chi^2 gain they lose stays within ``budget`` (absolute).

    Merging q_i and q_j into their weighted mean keeps the barycentre, stays feasible (Q is
    convex) and loses exactly w_i w_j / (w_i + w_j) ||q_i - q_j||^2 in the metric diag(1/P_Y)
    (the gain is a quadratic); the cheapest pair goes first.  Coincident posteriors cost
    nothing; near-twins 1e-9 apart, or clusters 1e-4 apart that a degenerate LP spreads its
    weight over, are what this is for.
    """
    order = np.argsort(-w)  # heaviest output first, as reported
    q, w = q[:, order], w[order]
    spent = 0.0
    while w.size > 1:
        diff = q[:, :, None] - q[:, None, :]
        cost = (w[:, None] * w[None, :] / (w[:, None] + w[None, :])) * np.sum(diff**2 / p_y[:, None, None], axis=0)
        cost[np.diag_indices(w.size)] = np.inf
        i, j = np.unravel_index(np.argmin(cost), cost.shape)
        if spent + cost[i, j] > budget:
            break
        spent += cost[i, j]
        total = w[i] + w[j]
        q[:, i] = (w[i] * q[:, i] + w[j] * q[:, j]) / total
        w[i] = total
        q, w = np.delete(q, j, axis=1), np.delete(w, j)
    order = np.argsort(-w, kind="stable")
    return q[:, order], w[order]


def _prune(model, geo, q, w, *, tolerance):
    """Drop outputs, lightest first, while the LP on the rest loses at most ``tolerance`` (relative).

    Degenerate LPs spread the weight over several nearly equivalent posteriors, or keep
    outputs with weights like 1e-6 whose presence depends on round-off; the support of
    the solution is what Proposition 1 counts.
    """
    value = float(_gains(model, q) @ w)
    for _ in range(w.size):
        for drop in np.argsort(w):
            rest = q[:, np.delete(np.arange(w.size), drop)]
            # Two outputs must lie on one line through P_Y; only those points are tried then.
            lines = lines_through_centre(geo, rest)
            rest = lines if rest.shape[1] == 2 else np.concatenate([rest, lines], axis=1)
            try:
                new_value, new_w, _ = _solve_lp(model, rest, _gains(model, rest))
            except RuntimeError:
                continue
            exact = np.allclose(rest @ new_w, model.p_y, atol=MERGE_MARGINAL_ATOL, rtol=0)
            if exact and new_value >= value * (1 - tolerance) and np.count_nonzero(new_w) < w.size:
                q, w = rest[:, new_w > 0], new_w[new_w > 0]
                break
        else:
            break
    return q, w


def _closed_form_upper_bounds(model, eps, alpha):
    """Upper bounds that need no search, with their names.

    * ``"theorem 1"``: V_+ where its proof applies (invertible A, alpha >= 2,
      delta_bar < 1, A_alpha > K delta_bar);
    * ``"D2 relaxation"``: for alpha >= 2, D_2 <= D_alpha gives chi^2(P_{X|U=u} || P_X)
      <= e^{alpha eps/(alpha-1)} - 1 for every output, and chi^2(P_{Y|U=u} || P_Y) =
      ||W Z_u||^2 <= sigma_max^2 ||Z_u||^2 (invertible A);
    * ``"|Y| - 1"``: chi^2(Y; U) <= min(|Y|, |U|) - 1 always.
    """
    bounds = [(float(model.p_y.size - 1), "|Y| - 1")]
    if isinstance(model, LeakageModel) and alpha >= 2 and eps > 0:
        bounds.append((model.sigma_max**2 * math.expm1(alpha * eps / (alpha - 1)), "D2 relaxation"))
        cert = certificate(model, eps, alpha)
        if cert.delta_bar < 1 and cert.rho < 1 and math.isfinite(cert.V_plus):
            bounds.append((cert.V_plus, "theorem 1"))
    return bounds


def global_optimum(
    model,
    eps,
    order,
    *,
    rtol: float = 1e-6,
    time_limit: float | None = 120.0,
    seed: int = 0,
    max_cones: int = 1_000_000,
    workers: int = 1,
) -> CertifiedOptimum:
    r"""Bracket the optimal value of problem (3) for any leakage matrix (Theorem 2).

    Parameters
    ----------
    model : LeakageModel or GeneralLeakageModel
    eps : float
        :math:`\epsilon\ge0`; at 0 the posteriors move in :math:`\operatorname{null}(A)`
        (Proposition 4).
    order : float
        :math:`\alpha>1`.
    rtol : float, default 1e-6
        Target relative gap ``(upper - lower) / upper``.
    time_limit : float or None, default 120
        Seconds after which the search stops and returns the bracket it has
        (checked between rounds).  ``None``: no limit.
    seed : int, default 0
        Seed of the random directions of the initial cover.  The result is
        deterministic for a given seed when the gap is reached within the time
        limit and no box round was cut short to keep to it (a round splits at
        most the boxes that about a second allows, as measured); otherwise how
        far the search got depends on the machine's speed.  The bracket is
        valid either way.
    max_cones : int, default 1_000_000
        Memory guard: each branch and bound stops refining beyond this many cones
        or boxes (about 100 bytes per cone and dimension; a box holds a few
        vectors of length :math:`|\mathcal Y|`).
    workers : int, default 1
        Processes that bound boxes (:math:`|\mathcal Y|\ge6`): this one plus
        ``workers - 1`` spawned ones; ``-1`` uses every core.  Up to
        :math:`|\mathcal Y|=12` one of them also runs the local searches over the
        channel, while this one bounds the boxes.  Where the boxes do not run
        no process is started; below :math:`|\mathcal Y|=8` a second one rarely
        pays for its start.  A script that passes more than
        one must run under ``if __name__ == "__main__":``, as with any process pool.

    Returns
    -------
    CertifiedOptimum
        An exactly feasible mechanism (``utility`` = ``lower_bound``, recomputed
        from its channel) with ``upper_bound``, ``gap``, ``upper_bound_source``
        and ``certified``.  Nearby posteriors are merged, and outputs dropped, while
        the utility loses at most ``0.01 * rtol`` of itself, so ``len(p_u)`` is the
        support of the solution, at most :math:`|\mathcal Y|` (Proposition 1).

    Notes
    -----
    The lower bound comes from a linear program over candidate posteriors
    (HiGHS dual simplex; its vertex solution has at most :math:`|\mathcal Y|`
    outputs), whose candidates are the end points of the branch and bound's rays,
    the maximisers found in its boxes, and local optima (SLSQP) over the whole
    mechanism, over single posteriors and, up to :math:`|\mathcal Y|=12`, over the
    channel :math:`P_{U|Y}` itself (where an output can split in two).  The upper bound is the weak-duality
    bound :math:`U(\mu)` of the module docstring, evaluated by two branch and
    bounds:

    * the **conical** one (:mod:`renyi.lift.cones`), which bounds a convex
      function on a simplex by its vertices; it closes the gap at
      :math:`|\mathcal Y|\le5` but needs exponentially many cones beyond;
    * from :math:`|\mathcal Y|\ge6` (with :math:`\alpha\ge2`, invertible
      :math:`A`, :math:`\epsilon>0`), after one round of the cones, the
      **box** one (:mod:`renyi.lift.boxes`), which majorises :math:`F_\mu` on each
      box by a concave Lagrangian (:math:`\lambda(e^{\alpha\epsilon}-\Phi_\alpha)` plus a
      cover that makes it concave) and certifies its maximum by a supergradient.  Its
      :math:`\mu` is not the LP's dual but the multiplier at which :math:`F_\mu` is
      stationary at every output of the polished mechanism (a least-squares fit of the
      KKT conditions), renewed when the lower bound rises.

    The smallest of these and Theorem 1's :math:`V_+` (and two coarse closed
    forms) is reported, with its name.  All are valid whatever the time limit;
    only the gap depends on it.

    Cost.  A cone's bound costs :math:`O(|\mathcal Y|^3)` and a box's
    :math:`O(|\mathcal Y|^3)` per ascent step; what grows fast is their number.  Cones
    cover directions, so their count for a fixed gap grows exponentially in
    :math:`|\mathcal Y|`; boxes cover posteriors, and range reduction keeps their count
    small below :math:`\epsilon_{\max}` and larger where the optimal posteriors sit on faces
    of the simplex.  The cases of ``make bench`` (the book's *Performance* page) measure it
    at :math:`\alpha=3` from :math:`|\mathcal Y|=3` to 20 in both regimes, with the cones
    alone on the :math:`|\mathcal Y|=6` and 7 cases as a yardstick in the same run; at
    :math:`|\mathcal Y|=20` and :math:`\epsilon=0.02` the time limit binds and the gap is
    what it reaches.  The time limit is kept to within about ``BOX_ROUND_SECONDS``.

    References
    ----------
    :cite:t:`zamani2026alphalift`, Theorem 2 and Proposition 1.
    """
    eps, alpha = check_eps(eps), check_order(order)
    rtol, time_limit, max_cones = _check_search(model, rtol, time_limit, max_cones)
    seed = as_int(seed, "seed", minimum=0)
    workers = _check_workers(workers)
    started = time.perf_counter()
    out_of_time = _clock(time_limit)
    geo = Geometry(model, eps, alpha)
    if geo.k == 0:  # invertible A at eps = 0: only the trivial mechanism is private
        mech = build_mechanism(model, np.array([1.0]), model.p_y[:, None], eps, alpha)
        return _certified(mech, 0.0, "exact", rtol, started, (0, 0))

    use_boxes = _boxes_apply(model, geo)
    # Where the boxes run, the cones only set up the first LP (one round: their bound at
    # |Y| = 6 needed 200,000 cones where the boxes need about 200).
    cone_limit = 0.0 if use_boxes else time_limit
    with WorkerPool(workers - 1) if use_boxes and workers > 1 else contextlib.nullcontext() as pool:
        tree = ConeTree(geo)
        columns, value, weights, mu, cone_upper = _cone_phase(model, geo, tree, rtol, seed, cone_limit, max_cones)
        computed = [(cone_upper, "branch-and-bound")]
        n_boxes = 0
        if use_boxes and cone_upper - value > rtol * cone_upper and not out_of_time():
            # One BLAS thread for the boxes: their matrices are |Y| x |Y| (stacked), where a second
            # thread gains nothing, and a thread spinning while another process holds the core
            # slows both (two searches on two cores took several times as long).  The cones'
            # larger products keep the default, where a second thread pays.
            with threadpool_limits(limits=1, user_api="blas"):
                columns, value, weights, mu, box_upper, n_boxes = _box_phase(
                    model, geo, tree, (columns, value, weights, mu), rtol, out_of_time, max_cones, pool
                )
            computed.append((box_upper, "box branch-and-bound"))
    support = weights > NEGLIGIBLE_WEIGHT
    q, w = _merge(columns[:, support], weights[support], model.p_y, MERGE_RTOL * rtol * value)
    q, w = _prune(model, geo, q, w, tolerance=MERGE_RTOL * rtol)
    mech = _feasible_mechanism(model, w, q, eps, alpha)
    upper, source = _best_upper_bound(model, eps, alpha, computed)
    return _certified(mech, upper, source, rtol, started, (len(tree.cones), n_boxes))


def _boxes_apply(model, geo):
    """Whether the box branch and bound runs: large |Y|, eps > 0, alpha >= 2 and an invertible A.

    Its root box is the D_2 ellipsoid's shadow, which needs D_2 <= D_alpha (alpha >= 2) and
    a non-degenerate ellipsoid; its concavity cover needs Phi's Hessian to grow with A q.
    """
    return isinstance(model, LeakageModel) and geo.eps > 0 and geo.alpha >= 2 and model.p_y.size >= BOX_MIN_SIZE


def _clock(time_limit):
    """``out_of_time(margin=0)``: whether ``time_limit`` seconds from now would be passed after
    ``margin`` more; ``out_of_time.left()`` is the time left (inf without a limit)."""
    started = time.perf_counter()

    def out_of_time(margin=0.0):
        return time_limit is not None and time.perf_counter() - started + margin > time_limit

    out_of_time.left = lambda: math.inf if time_limit is None else time_limit - (time.perf_counter() - started)
    return out_of_time


def _channel_columns(model, geo, columns, weights, seeds):
    """Posteriors from local searches over the channel started at the LP's support (none above the size limit).

    Over the channel an output can split, which the posterior polish cannot do.
    """
    if model.p_y.size > CHANNEL_POLISH_MAX_SIZE:
        return np.zeros((model.p_y.size, 0))
    support = weights > NEGLIGIBLE_WEIGHT
    found = [polish_channel(geo, columns[:, support], weights[support], seed) for seed in seeds]
    return np.concatenate(found, axis=1)


def _cone_phase(model, geo, tree, rtol, seed, time_limit, max_cones):
    """Column generation priced by the conical branch and bound, until the gap or the time is reached."""
    out_of_time = _clock(time_limit)
    columns, value, weights, mu = _solve_priced(model, tree, _initial_columns(model, geo, tree, seed))
    polish_iter = 200 if model.p_y.size <= 12 else 60
    best_upper, rounds = math.inf, 0
    improve = _Schedule(CONE_LOCAL_EVERY, first=1)
    # A split costs about k (k + pairs) operations per cone: bound the batch so that one round
    # stays well under a second at every |Y| (the time limit is checked between rounds).
    batch = min(SPLIT_BATCH, max(200, SPLIT_WORK // (geo.k * (geo.k + len(tree.pairs)))))
    while True:
        rounds += 1
        # The local search is the slowest step at large |Y| (seconds at |Y| = 20): start it
        # again only if the time left exceeds what it took last time.
        if improve.due(rounds) and not out_of_time(improve.seconds):
            previous = value
            with improve.timed():
                columns, value, weights, mu = _improve(model, geo, tree, columns, weights, polish_iter)
            improve.record(rounds, value > previous * (1 + SEARCH_USEFUL * rtol))
        target = value * (1 + CONE_TARGET * rtol)
        bounds = tree.bounds(mu, target=target)
        best_upper = min(best_upper, max(value, float(bounds.max())))
        if best_upper - value <= rtol * best_upper or out_of_time() or len(tree.cones) >= max_cones:
            return columns, value, weights, mu, best_upper
        live = np.flatnonzero(bounds > target)
        live = live[np.argsort(-bounds[live])][: max(1, min(len(live), max_cones - len(tree.cones), batch))]
        columns = _next_columns(model, columns, weights, tree.split(live), mu, value)
        columns, value, weights, mu = _solve_priced(model, tree, columns)


def _box_phase(model, geo, cone_tree, lp, rtol, out_of_time, max_boxes, pool=None):
    """The box branch and bound's bound of U(mu), with column generation from its boxes' maximisers.

    Every round's ``max(value, U(mu))`` bounds V (weak duality holds for every mu); the
    smallest is kept.  Where the bound is loosest the LP may lack a column: the boxes'
    ascent end points, moved onto Q, enter it when they price above its value, and every few
    rounds local searches over posteriors (from them) and over the channel (from the LP's
    support) add more.
    """
    columns, value, weights, mu = lp
    # Each further start of the channel search runs only if the one before raised the value.
    channel_search = _Schedule(BOX_LOCAL_EVERY)
    if model.p_y.size <= CHANNEL_POLISH_MAX_SIZE:
        for seed in range(CHANNEL_POLISH_STARTS):
            previous = value
            with channel_search.timed():
                channel = _channel_columns(model, geo, columns, weights, [seed])
            columns, value, weights, mu = _enter(model, (columns, value, weights, mu), channel)
            channel_search.record(0, value > previous * (1 + SEARCH_USEFUL * rtol))
            if channel_search.every > BOX_LOCAL_EVERY:
                break
    tree = BoxTree(geo, pool)
    # The tree's mu changes only when the mechanism improves: every change re-solves boxes.
    tree_mu, polished = _polished_multiplier(model, geo, columns, weights, mu)
    columns, value, weights, mu = _enter(model, (columns, value, weights, mu), polished)
    mu_value, pending, held = value, columns[:, :0], columns[:, :0]
    best_upper, rounds, batch = math.inf, 0, BOX_BATCH
    local_search = _Schedule(BOX_LOCAL_EVERY)
    # A channel search running in a worker (pool only), and when it started.
    channel_running, channel_started = None, 0.0
    while True:
        rounds += 1
        target = value * (1 + BOX_TARGET * rtol)
        start = time.perf_counter()
        # At most the boxes the round's time allows are bounded (after a move of mu, every box
        # may need it); parts that range reduction cut off stay so while below value (1 + rtol).
        bounds = tree.bounds(tree_mu, target, ceiling=value * (1 + rtol), limit=2 * batch)
        per_box = (time.perf_counter() - start) / max(tree.evaluated, 1)
        # The parts of Q that range reduction cut off from the boxes are bounded too.
        best_upper = min(best_upper, max(value, float(bounds.max()), tree.cut_off))
        live = np.flatnonzero(bounds > target)
        if live.size == 0 or best_upper - value <= rtol * best_upper or out_of_time() or bounds.size >= max_boxes:
            return columns, value, weights, mu, best_upper, bounds.size
        live = live[np.argsort(-bounds[live])][:batch]
        found = pull_inside(geo, tree.candidates(live))
        worst = found[:, :BOX_LOCAL_STARTS]
        children = tree.split(live)
        while 0 < children.size < BOX_MIN_ROUND:
            previous, children = children.size, tree.split(children, widest=True)
            if children.size <= previous:  # (halves vanished: boxes as thin as round-off)
                break
        # Keep the next round's bounding (two children per split) near BOX_ROUND_SECONDS, and
        # within the time left.
        budget = min(BOX_ROUND_SECONDS, out_of_time.left())
        batch = int(np.clip(budget / max(2 * per_box, 1e-9), BOX_MIN_BATCH, BOX_BATCH))
        searches, found = [], np.concatenate([found, pending], axis=1)
        pending = found[:, :0]
        # A search runs only if it would end in time, judging by how long it took last time.
        stuck = found[:, :0]
        if local_search.due(rounds) and not out_of_time(local_search.seconds):
            with local_search.timed():
                local = pull_inside(geo, price_locally(geo, mu, found[:, :BOX_LOCAL_STARTS], BOX_LOCAL_ITER))
                # The same search at the tree's mu from the worst boxes: a feasible point with
                # F_mu above value (1 + rtol) proves U(mu) above it, and no split can close the
                # gap then (at |Y| = 20, eps_max / 2, a fitted mu 2e-4 off held a tree on one
                # box for most of a 60-s limit).
                at_tree = pull_inside(geo, price_locally(geo, tree_mu, worst, BOX_LOCAL_ITER))
                stuck = at_tree[:, _priced(model, at_tree, tree_mu) > value * (1 + rtol)]
            found, searches = np.concatenate([found, local, stuck], axis=1), searches + [local_search]
        small = model.p_y.size <= CHANNEL_POLISH_MAX_SIZE
        channel = None
        if channel_running is not None and channel_running.done():
            channel = channel_running.result()
            channel_search.seconds = time.perf_counter() - channel_started
            channel_running, tree.busy_workers = None, 0
        elif (
            small and channel_running is None and channel_search.due(rounds) and not out_of_time(channel_search.seconds)
        ):
            if pool is not None:
                # In a worker, while the boxes are bounded here: it takes half a second at
                # |Y| = 10, a sixth of the box phase, which the worker spent idle.
                channel_running = pool.executor.submit(_channel_columns, model, geo, columns, weights, [rounds])
                channel_started, tree.busy_workers = time.perf_counter(), 1
            else:
                with channel_search.timed():
                    channel = _channel_columns(model, geo, columns, weights, [rounds])
        if channel is not None:
            found, searches = np.concatenate([found, channel], axis=1), searches + [channel_search]
        better = found[:, _priced(model, found, mu) > value * (1 + PRICING_RTOL)]
        previous = value
        if better.shape[1]:
            # The support, then the newest columns: the boxes' points are where mu is still wrong.
            support = columns[:, weights > NEGLIGIBLE_WEIGHT]
            columns = np.concatenate([model.p_y[:, None], support, columns, better], axis=1)
            columns = np.concatenate([columns[:, : 1 + support.shape[1]], columns[:, -BOX_LP_COLUMNS:]], axis=1)
            value, weights, mu = _solve_lp(model, columns, _gains(model, columns))
        for search in searches:
            search.record(rounds, value > previous * (1 + SEARCH_USEFUL * rtol))
        if stuck.shape[1] and value <= mu_value * (1 + MU_RENEW * rtol):
            # The nearest mu that prices the LP's support and those points at most at the
            # value (the LP's own dual is one such, but far off and poor elsewhere).
            # (every stuck point found so far is kept: the step must not undo an earlier one)
            held = np.concatenate([stuck, held], axis=1)
            known = np.concatenate([columns[:, weights > NEGLIGIBLE_WEIGHT], held], axis=1)
            nearer = _nearest_multiplier(model, tree_mu, known, value, STUCK_SLACK * rtol)
            if nearer is not None:
                tree_mu = nearer
        elif value > mu_value * (1 + MU_RENEW * rtol):
            # The polished points enter the next round's LP with the boxes' points.
            tree_mu, polished = _polished_multiplier(model, geo, columns, weights, mu)
            pending, mu_value = polished, value


def _nearest_multiplier(model, mu, points, value, slack):
    """The mu nearest to ``mu`` at which every column of ``points`` prices at most at
    ``value (1 + slack)`` (a projection onto a polyhedron, SLSQP), or None if none is found.

    The LP's dual with those points among its columns is feasible, so the set is not empty;
    any mu gives a valid bound, so this only decides how tight the tree's can become.
    """
    d = points - model.p_y[:, None]
    ceiling = value * (1 + slack) - _gains(model, points)
    res = optimize.minimize(
        lambda m: 0.5 * np.sum((m - mu) ** 2),
        mu,
        jac=lambda m: m - mu,
        constraints=[{"type": "ineq", "fun": lambda m: ceiling + m @ d, "jac": lambda m: d.T}],
        method="SLSQP",
        options={"maxiter": 200, "ftol": 1e-16},
    )
    ok = res.success and np.all(ceiling + res.x @ d >= -1e-12 * abs(value))
    return res.x if ok else None


def _priced(model, columns, mu):
    """The reduced gains g(q) - mu^T (q - P_Y) of candidate columns."""
    return _gains(model, columns) - mu @ (columns - model.p_y[:, None])


def _enter(model, lp, new):
    """The LP ``(columns, value, weights, mu)`` re-solved with ``new`` if a column of it would enter."""
    columns, value, weights, mu = lp
    if not _prices_above(model, new, mu, value):
        return lp
    columns = np.concatenate([columns, new], axis=1)
    return (columns, *_solve_lp(model, columns, _gains(model, columns)))


def _prices_above(model, columns, mu, value):
    """Whether a candidate column would enter the LP (its reduced gain beats the LP's value)."""
    return bool(np.any(_priced(model, columns, mu) > value * (1 + PRICING_RTOL)))


class _Schedule:
    """The rounds at which a periodic local search runs: first at round ``first`` (default
    ``every``), then every ``every`` rounds while it raises the LP's value, and twice as
    rarely after each time it does not (they cost seconds, and where the LP is already
    optimal, as at small eps, they find nothing)."""

    def __init__(self, every, first=None):
        self.base = self.every = every
        self.next = every if first is None else first
        self.seconds = 0.0

    def due(self, rounds):
        return rounds >= self.next

    @contextlib.contextmanager
    def timed(self):
        """Time the search's run (``seconds``: the last one's)."""
        start = time.perf_counter()
        yield
        self.seconds = time.perf_counter() - start

    def record(self, rounds, useful):
        self.every = self.base if useful else 2 * self.every
        self.next = rounds + self.every


def _check_search(model, rtol, time_limit, max_cones):
    """Validate the model and the search controls of :func:`global_optimum`."""
    if not isinstance(model, GeneralLeakageModel):
        raise TypeError(f"model must be a LeakageModel or GeneralLeakageModel, got {type(model).__name__}")
    rtol = as_real_scalar(rtol, "rtol")
    if not 0 < rtol < 1:
        raise ValueError(f"rtol must lie in (0, 1), got {rtol!r}")
    if time_limit is not None:
        time_limit = as_real_scalar(time_limit, "time_limit")
        if time_limit <= 0:
            raise ValueError(f"time_limit must be > 0 seconds or None, got {time_limit!r}")
    return rtol, time_limit, as_int(max_cones, "max_cones")


def _check_workers(workers):
    """``workers`` as a process count: an int >= 1, or -1 for every core."""
    if isinstance(workers, (int, np.integer)) and not isinstance(workers, bool) and workers == -1:
        return os.cpu_count() or 1
    return as_int(workers, "workers")


def _initial_columns(model, geo, tree, seed):
    """P_Y, the cone tree's ray ends, 200 k random ray ends and the structured seed points."""
    rng = np.random.default_rng(seed)
    cover = rng.standard_normal((geo.k, 200 * geo.k))
    _, cover_points, _, _ = geo.rays(cover / np.linalg.norm(cover, axis=0))
    return np.concatenate([model.p_y[:, None], tree.points, cover_points, seed_points(model, geo)], axis=1)


def _next_columns(model, columns, weights, new, mu, value):
    """The next LP's candidates: the support, new ray ends priced near the best, the best 200 old ones."""
    priced = _priced(model, new, mu)
    support = columns[:, weights > NEGLIGIBLE_WEIGHT]
    reduced = _priced(model, columns, mu)
    return np.concatenate(
        [
            model.p_y[:, None],
            support,
            new[:, priced > value * (1 - KEEP_NEAR_BEST)],
            columns[:, np.argsort(-reduced)[:200]],
        ],
        axis=1,
    )


def _best_upper_bound(model, eps, alpha, computed):
    """The smallest valid upper bound, with its name: a branch and bound's or a closed form."""
    upper, source = math.inf, ""
    for bound, name in computed:
        if bound * (1 + ROUNDOFF_MARGIN) + TINY < upper:
            upper, source = bound * (1 + ROUNDOFF_MARGIN) + TINY, name
    for bound, name in _closed_form_upper_bounds(model, eps, alpha):
        # The closed forms are evaluated in floats too (sigma_max by an SVD).
        bound = bound * (1 + ROUNDOFF_MARGIN) + TINY
        if bound < upper:
            upper, source = bound, name
    return upper, source


def _improve(model, geo, tree, columns, weights, max_iter):
    """Polish the LP's support as a whole mechanism, then price locally from the best columns."""
    support = weights > NEGLIGIBLE_WEIGHT
    polished, _ = polish_mechanism(geo, columns[:, support], weights[support], max_iter)
    columns = np.concatenate([columns, pull_inside(geo, polished), lines_through_centre(geo, polished)], axis=1)
    columns, value, weights, mu = _solve_priced(model, tree, columns)
    reduced = _priced(model, columns, mu)
    starts = columns[:, np.argsort(-reduced)[: min(12, columns.shape[1])]]
    columns = np.concatenate([columns, pull_inside(geo, price_locally(geo, mu, starts, max_iter))], axis=1)
    return _solve_priced(model, tree, columns)


def _feasible_mechanism(model, w, q, eps, alpha):
    """The mechanism of outputs ``q`` (feasible posteriors) with weights ``w``, exactly feasible.

    The channel is built from (w, q), and its own posteriors differ from q as much as q w
    misses P_Y.  Where that makes a lift exceed e^eps (by the library's tolerance), the
    weights are re-solved exactly, and failing that the outputs move towards P_Y (strictly
    inside Q, a convex set containing P_Y) by 1e-9, 1e-8, ... of their distance: the utility
    loses about twice that, which the reported lower bound and gap include.
    """
    mech = build_mechanism(model, w, q, eps, alpha)
    if not mech.feasible:
        w = _exact_weights(model, q, w)
        for shrink in [0.0] + [10.0**-j for j in range(9, 2, -1)]:
            mech = build_mechanism(model, w, model.p_y[:, None] + (1 - shrink) * (q - model.p_y[:, None]), eps, alpha)
            if mech.feasible:
                break
    return _within_budget(model, mech, eps, alpha) if eps > 0 else mech


def _within_budget(model, mech, eps, alpha):
    """``mech``, or its channel moved towards P_U until it meets the budget exactly (no tolerance).

    ``feasible`` allows 1e-10 of the budget; a certified optimum allows nothing.  Along
    P_U + t (P_{U|Y} - P_U) every posterior moves to P_Y + t (q_u - P_Y), so the outputs'
    barycentre stays P_Y, and Phi_u - 1 is convex in t and 0 at t = 0, hence at most
    t (Phi_u(1) - 1): t = 1 / use meets the budget in exact arithmetic, and t = use^(-1/2),
    tried first, where Phi_u - 1 is nearly quadratic in t (small budgets).  The utility scales
    by t^2; the reported lower bound is that of the returned channel.
    """
    use = budget_use(model, mech.p_u_given_y, eps, alpha)
    if use <= 1:
        return mech
    centre = mech.p_u[:, None]
    for t in [use**-0.5, 1 / use] + [(1 - 10.0**-k) / use for k in range(12, 5, -1)]:
        channel = centre + t * (mech.p_u_given_y - centre)
        channel = channel / channel.sum(axis=0, keepdims=True)
        if budget_use(model, channel, eps, alpha) <= 1:
            return from_channel(model, channel, eps, alpha)
    raise RuntimeError(f"could not bring the mechanism within the budget (it used {use:.17g} of it)")


def _certified(mech, upper, source, rtol, started, pieces):
    lower = mech.utility
    gap = (upper - lower) / upper if upper > 0 else 0.0
    if upper < lower:
        # Never hidden by raising the upper bound to the utility: one of the two is wrong.
        warnings.warn(
            f"global_optimum: the upper bound {upper!r} ({source}) is below the utility {lower!r} of a "
            "mechanism checked to meet the budget; the bracket is inconsistent and not certified",
            RuntimeWarning,
            stacklevel=3,
        )
    fields = {name: getattr(mech, name) for name in LiftMechanism.__dataclass_fields__}
    cones, boxes = pieces
    return CertifiedOptimum(
        **fields,
        lower_bound=lower,
        upper_bound=float(upper),
        gap=gap,
        upper_bound_source=source,
        certified=0 <= gap <= rtol,
        elapsed=time.perf_counter() - started,
        cones=cones,
        boxes=boxes,
    )
