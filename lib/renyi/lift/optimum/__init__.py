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
  (:mod:`renyi.lift.optimum.boxes`); for any matrix, a polyhedral outer approximation of the
  budget turns it into a linear program over a polytope's vertices
  (:mod:`renyi.lift.optimum.polytope`).

Theorem 1's :math:`V_+` is a second valid upper bound where it is proved
(invertible :math:`A`, :math:`\alpha\ge2`, :math:`\bar\delta_\epsilon<1`), closed-form
relaxations hold for an invertible :math:`A` at every order (the :math:`D_2` one for
:math:`\alpha\ge2`, the :math:`\chi^2` one of :func:`~renyi.lift.optimum.bracket.chi2_radius`
below), and :math:`|\mathcal Y|-1` always (see :func:`global_optimum`); the result reports the
smallest and says which it is.
The modules, in the order a call uses them: :mod:`~renyi.lift.optimum.settings` (the search
controls and the proof's margins), :mod:`~renyi.lift.optimum.heuristics` (the speed controls,
one record per phase), :mod:`~renyi.lift.optimum.lp` (the linear program
over candidate posteriors), :mod:`~renyi.lift.optimum.candidates` (those posteriors),
:mod:`~renyi.lift.optimum.search` (the phases), :mod:`~renyi.lift.optimum.stationary` (the
multiplier the boxes bound at), :mod:`~renyi.lift.optimum.cones` (the
conical branch and bound), :mod:`~renyi.lift.optimum.boxes` (the box branch and bound, on a
:mod:`~renyi.lift.optimum.pool` of worker processes), :mod:`~renyi.lift.optimum.polytope`
(the polyhedral relaxation) and :mod:`~renyi.lift.optimum.bracket` (the reported bracket and
the closed-form upper bounds).
"""

from __future__ import annotations

import contextlib
import time

import numpy as np
from threadpoolctl import threadpool_limits

from ..._validation import as_int, as_real_scalar, as_workers
from .._exact import check_seconds
from .._numerics import NEGLIGIBLE_WEIGHT
from ..channels import build_mechanism
from ..model import GeneralLeakageModel, LeakageModel, check_eps, check_order
from .bracket import CertifiedOptimum, best_upper_bound, certified, feasible_mechanism
from .candidates import pull_inside
from .cones import ConeTree, Geometry
from .heuristics import Heuristics
from .lp import merge_outputs, prune_outputs
from .polytope import polytope_bound
from .pool import WorkerPool
from .search import BoxPhase, clock, cone_phase
from .settings import Margins, SearchSettings

__all__ = ["global_optimum", "CertifiedOptimum", "SearchSettings", "Margins", "Heuristics"]


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
    settings: SearchSettings | None = None,
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
        Seconds after which the search stops and returns the bracket it has.  Every phase
        looks at the clock inside its loops; what can run past the limit is one step that
        cannot be interrupted (one linear program, one SLSQP iteration, a chunk of the first
        cones, the first round of boxes).  The final exact check of the channel,
        :math:`O(|\mathcal U||\mathcal X||\mathcal Y|)` decimal operations, is set aside: the
        search stops that much earlier, by an estimate from one small timed product (at most
        half the limit; ``make bench-scale-large`` up to :math:`|\mathcal Y|=200`, and
        ``tests/test_optimum.py`` bounds the overrun at :math:`|\mathcal Y|=30` and 100).
        ``None``: no limit.
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
        one must run under ``if __name__ == "__main__":``, as with any process pool
        (otherwise a ``RuntimeError`` says so).
    settings : SearchSettings, optional
        The search's margins and heuristics (default ``SearchSettings()``); see
        :mod:`renyi.lift.optimum.settings`.  Heuristics change only the time to a gap.

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

    * the **conical** one (:mod:`renyi.lift.optimum.cones`), which bounds a convex
      function on a simplex by its vertices; it closes the gap at
      :math:`|\mathcal Y|\le5` but needs exponentially many cones beyond;
    * from :math:`|\mathcal Y|\ge6` (with a square invertible
      :math:`A` and :math:`\epsilon>0`, at every order), after one round of the cones, the
      **box** one (:mod:`renyi.lift.optimum.boxes`), which majorises :math:`F_\mu` on each
      box by a concave Lagrangian (:math:`\lambda(e^{\alpha\epsilon}-\Phi_\alpha)` plus a
      cover that makes it concave) and certifies its maximum by a supergradient.  Its
      :math:`\mu` is not the LP's dual but the multiplier at which :math:`F_\mu` is
      stationary at every output of the polished mechanism (a least-squares fit of the
      KKT conditions), renewed when the lower bound rises (after a fit that fails, the
      next 1, 2, 4, ... renewals keep the LP's dual instead of polishing again).  Before its first box, column
      generation priced near the outputs (local optima of :math:`F_\mu` from perturbed
      outputs, at the LP's dual and at the fitted :math:`\mu` in turn) brings the mechanism
      to a local optimum, for up to ``settings.heuristics.columns.share`` of the time left.

    Where the boxes do not run (a matrix that is not square and invertible) and
    :math:`\epsilon>0`, a **polyhedral
    relaxation** (:mod:`renyi.lift.optimum.polytope`) runs first, for up to
    ``settings.heuristics.polytope.share`` of the time limit: the budget replaced by linear
    inequalities that hold on it, the problem over the resulting polytope solved as a linear
    program over its vertices, and the vertices the LP uses that break the budget cut off by
    tangent planes, round after round.  It is the bound that closes the gap for a non-square
    :math:`A`, where the cones alone stay near :math:`|\mathcal Y|-1`.  There the cones'
    local searches also search over the channel (up to :math:`|\mathcal Y|=12`), from the
    mechanism and from a random channel, as the box phase does for a square :math:`A`
    (``settings.heuristics.polish``).

    The smallest of these and Theorem 1's :math:`V_+` (and the closed forms: a relaxation
    of the budget to a :math:`\chi^2` ball, by :math:`D_2\le D_\alpha` for :math:`\alpha\ge2`
    and by :func:`~renyi.lift.optimum.bracket.chi2_radius` below order 2, and
    :math:`|\mathcal Y|-1`) is reported, with its name.  All are valid whatever the time limit;
    only the gap depends on it.

    Cost.  A cone's bound costs :math:`O(|\mathcal Y|^3)` and a box's
    :math:`O(|\mathcal Y|^3)` per ascent step; what grows fast is their number.  Cones
    cover directions, so their count for a fixed gap grows exponentially in
    :math:`|\mathcal Y|`; boxes cover posteriors, and range reduction keeps their count
    small below :math:`\epsilon_{\max}` and larger where the optimal posteriors sit on faces
    of the simplex.  The cases of ``make bench`` (the book's *Performance* page) measure it
    at :math:`\alpha=3` from :math:`|\mathcal Y|=3` to 20 in both regimes, then for a prior
    with an entry below :math:`10^{-4}` and at :math:`\alpha=1.5`, with the cones alone on the
    :math:`|\mathcal Y|=6` and 7 cases as a yardstick in the same run; at
    :math:`|\mathcal Y|=20` and :math:`\epsilon=0.02` the time limit binds and the gap is
    what it reaches.  Memory grows as :math:`O(|\mathcal Y|^3)` for the first cones (their
    outer sets) plus :math:`O(|\mathcal Y|^2)` a cone and :math:`O(|\mathcal Y|)` a box kept.

    References
    ----------
    :cite:t:`zamani2026alphalift`, Theorem 2 and Proposition 1.

    Examples
    --------
    The medical example at :math:`\epsilon=0.02`: a mechanism and a proved upper bound,
    within ``rtol`` of each other.

    >>> from renyi.lift import EXAMPLES, global_optimum
    >>> best = global_optimum(EXAMPLES["medical"], 0.02, 3)
    >>> best.certified, f"{best.lower_bound:.5f}", f"{best.upper_bound:.5f}"
    (True, '0.08071', '0.08071')
    """
    eps, alpha = check_eps(eps), check_order(order)
    settings = check_settings(settings)
    rtol, time_limit, max_cones = check_search(model, rtol, time_limit, max_cones, settings.margins)
    seed = as_int(seed, "seed", minimum=0)
    workers = as_workers(workers)
    started = time.perf_counter()
    out_of_time = clock(search_time(model, time_limit))
    geo = Geometry(model, eps, alpha, settings)
    if geo.k == 0:  # invertible A at eps = 0: only the trivial mechanism is private
        mech = build_mechanism(model, np.array([1.0]), model.p_y[:, None], eps, alpha)
        return certified(mech, 0.0, "exact", rtol, started, (0, 0), ("exact",))

    use_boxes = boxes_apply(model, geo)
    computed, extra, known = [], None, np.inf
    # A matrix that is not square and invertible: the polytope bounds it, and since no box
    # phase follows, the cones' local searches search over the channel too.
    non_square_route = polytope_applies(model, geo, use_boxes)
    channels = non_square_route and model.p_y.min() >= settings.heuristics.polish.channel_min_prior
    if non_square_route:
        known, extra = polytope_step(model, geo, rtol, time_limit, seed)
        computed.append((known, "polytope relaxation"))
    # Where the boxes run, the cones only set up the first LP (one round): the boxes reach the
    # same bound with about a thousandth as many regions.
    cone_limit = 0.0 if use_boxes else (None if time_limit is None else max(0.0, out_of_time.left()))
    with WorkerPool(workers - 1) if use_boxes and workers > 1 else contextlib.nullcontext() as pool:
        tree = ConeTree(geo)
        limits = {"known_upper": known, "overall": out_of_time}
        columns, value, weights, mu, cone_upper = cone_phase(
            model, geo, tree, rtol, seed, cone_limit, max_cones, extra=extra, channels=channels, **limits
        )
        computed.append((cone_upper, "branch-and-bound"))
        n_boxes = 0
        if use_boxes and cone_upper - value > rtol * cone_upper and not out_of_time():
            # One BLAS thread for the boxes: their matrices are |Y| x |Y| (stacked), where a second
            # thread gains nothing, and a thread spinning while another process holds the core
            # slows both (two searches on two cores took several times as long).  The cones'
            # larger products keep the default, where a second thread pays.
            with threadpool_limits(limits=1, user_api="blas"):
                phase = BoxPhase(model, geo, (columns, value, weights, mu), rtol, out_of_time, pool, seed)
                columns, value, weights, mu, box_upper, n_boxes = phase.run(max_cones)
            computed.append((box_upper, "box branch-and-bound"))
    support = weights > NEGLIGIBLE_WEIGHT
    merge = settings.heuristics.pricing.merge_rtol * rtol
    q, w = merge_outputs(columns[:, support], weights[support], model.p_y, merge * value)
    q, w = prune_outputs(model, geo, q, w, tolerance=merge, out_of_time=out_of_time)
    mech = feasible_mechanism(model, w, q, eps, alpha, settings)
    upper, source, ran = best_upper_bound(model, eps, alpha, computed, settings)
    return certified(mech, upper, source, rtol, started, (len(tree.cones), n_boxes), ran)


def search_time(model, time_limit):
    """The time limit less what the returned channel's decimal check will take (at most half).

    That check (:func:`renyi.lift._exact.lift_excess`, run on the channel and usually once
    more on its repair) cannot be interrupted, and at large |Y| it takes seconds.

    Parameters
    ----------
    model : LeakageModel or GeneralLeakageModel
    time_limit : float or None

    Returns
    -------
    float or None
        Seconds for the search (``None``: no limit).
    """
    if time_limit is None:
        return None
    n_y = model.p_y.size
    reserve = 2 * check_seconds(n_y + 1, model.A.shape[0], n_y)
    return max(time_limit - reserve, time_limit / 2)


def boxes_apply(model, geo):
    """Whether the box branch and bound runs: large |Y|, eps > 0 and a square invertible A.

    The matrix decides, not the class that holds it (``LeakageModel.of``).

    Its root box is a chi^2 ellipsoid's shadow (D_2 <= D_alpha for alpha >= 2,
    :func:`~renyi.lift.optimum.bracket.chi2_radius` below), which needs a non-degenerate
    ellipsoid; its concavity cover needs a floor of Phi's Hessian on each box, where z = A q is
    least on the box's points of the plane for alpha >= 2 and greatest below.
    """
    return LeakageModel.of(model) is not None and geo.eps > 0 and model.p_y.size >= geo.settings.heuristics.box_min_size


def polytope_step(model, geo, rtol, time_limit, seed):
    """The polyhedral relaxation's bound, and its feasible vertices moved inside (candidates)."""
    settings = geo.settings
    share = None if time_limit is None else settings.heuristics.polytope.share * time_limit
    known, extra = polytope_bound(
        model,
        geo.eps,
        geo.alpha,
        rtol=rtol,
        max_vertices=settings.heuristics.polytope.vertices,
        out_of_time=clock(share),
        seed=seed,
        settings=settings,
    )
    return known, pull_inside(geo, extra)


def polytope_applies(model, geo, use_boxes):
    """Whether the polyhedral relaxation runs: eps > 0 where only the cones would bound otherwise.

    That is a matrix that is not square and invertible (the cones alone cannot close a gap
    there, :mod:`renyi.lift.optimum.polytope`).  At smaller |Y| with an invertible A the cones
    close the gap first, and from ``box_min_size`` on the boxes run.
    """
    if geo.eps <= 0 or use_boxes:
        return False
    return LeakageModel.of(model) is None or model.p_y.size >= geo.settings.heuristics.box_min_size


def check_search(model, rtol, time_limit, max_cones, margins):
    """Validate the model and the search controls of :func:`global_optimum`."""
    if not isinstance(model, GeneralLeakageModel):
        raise TypeError(f"model must be a LeakageModel or GeneralLeakageModel, got {type(model).__name__}")
    if model.p_y.min() < margins.min_prior:
        y = int(np.argmin(model.p_y))
        raise ValueError(
            f"P_Y(y={y}) = {model.p_y[y]:.3g} is below {margins.min_prior:g}, where the optimum's linear programs "
            "(coefficients 1/P_Y) fail; drop or merge the values of Y that almost never occur"
        )
    rtol = as_real_scalar(rtol, "rtol")
    if not 0 < rtol < 1:
        raise ValueError(f"rtol must lie in (0, 1), got {rtol!r}")
    if time_limit is not None:
        time_limit = as_real_scalar(time_limit, "time_limit")
        if time_limit <= 0:
            raise ValueError(f"time_limit must be > 0 seconds or None, got {time_limit!r}")
    return rtol, time_limit, as_int(max_cones, "max_cones")


def check_settings(settings):
    """``settings`` as a :class:`SearchSettings` (None: the defaults)."""
    if settings is None:
        return SearchSettings()
    if not isinstance(settings, SearchSettings):
        raise TypeError(f"settings must be a SearchSettings, got {type(settings).__name__}")
    return settings
