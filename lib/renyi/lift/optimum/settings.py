r"""The search controls of :func:`~renyi.lift.optimum.global_optimum`, in one frozen object.

Two groups, with different rules:

* :class:`Margins` guard correctness.  Each is a relative (or absolute, where said) safety
  margin on a quantity computed in floating point whose exact value a proof needs, or a
  tolerance that decides whether a computed mechanism is accepted.  They are never tuned
  for speed; the reason each is safe is written next to it.
* :class:`Heuristics` decide speed only.  Every value of every field yields a valid bracket
  (lower bound from an exactly checked mechanism, upper bound from weak duality at *some*
  multiplier), so a heuristic changes how fast the gap closes, never whether the bracket
  holds.  Defaults were chosen on the cases of ``make bench`` (table ``lift``, cases named
  by their label, e.g. ``random |Y|=10`` at ``eps = eps_max / 2``; table
  ``lift_cones_alone``), the book's *Performance* page.

Pass a modified copy to change one: ``SearchSettings(heuristics=Heuristics(box_batch=100))``
or ``dataclasses.replace``.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

__all__ = ["SearchSettings", "Margins", "Heuristics"]


@dataclass(frozen=True)
class Margins:
    """Safety margins and acceptance tolerances that the certificate relies on.

    Attributes
    ----------
    upper_bound : float, default 1e-12
        Relative margin added to every reported upper bound (computed or closed form), above
        the round-off of the float sums that evaluate it (a few ulp of terms of size ≤ 1).
    box_bound : float, default 1e-12
        Relative margin added to each box's certified bound, for the same reason.
    eigenvalue : float, default 1e-9
        Relative margin on computed eigenvalues (concavity of the box Lagrangian, the D_2
        ellipsoid's shadow): LAPACK's eigenvalues are accurate to about 1e-15 of the largest.
    root_extent : float, default 1e-12
        Absolute slack subtracted from the root box's extents, each a weak-duality bound
        evaluated in floats.
    range_reduction : float, default 1e-10
        Relative margin of a range reduction's slack, on the sizes of its terms: a cut must
        never remove a point where the tangent plane reaches the target.
    cover_floor : float, default 1e-9
        Relative floor of the concavity cover's shape, which keeps it definite for the
        Cholesky factor that certifies it.
    min_width : float, default 1e-7
        Box widths below this count as this in the scaling of the cover (keeps its
        eigenproblem well posed; a wider width only raises the bound).
    marginal_atol : float, default 1e-14
        Re-solved LP weights are used only when they reproduce P_Y to this (absolute).
    merge_marginal_atol : float, default 1e-13
        ... and after outputs are merged or dropped.
    radial_bisections : int, default 60
        Bisection steps for a ray's extent in the feasible set (2^-60 of a step is below one
        ulp), so ray end points are feasible to round-off.
    """

    upper_bound: float = 1e-12
    box_bound: float = 1e-12
    eigenvalue: float = 1e-9
    root_extent: float = 1e-12
    range_reduction: float = 1e-10
    cover_floor: float = 1e-9
    min_width: float = 1e-7
    marginal_atol: float = 1e-14
    merge_marginal_atol: float = 1e-13
    radial_bisections: int = 60


@dataclass(frozen=True)
class Heuristics:
    r"""Speed controls: any value gives a valid bracket, only the time to a gap changes.

    Attributes
    ----------
    box_min_size : int, default 6
        From this :math:`|\mathcal Y|` on (with ε > 0 and a square invertible A) the box branch and
        bound follows one round of the cones, whose count grows exponentially in :math:`|\mathcal Y|`
        (``lift_cones_alone``: the :math:`|\mathcal Y|` = 6 and 7 cases with the cones alone).
    cone_target, box_target : float, default 0.5, 0.9
        Cones (boxes) bounded below ``value * (1 + target * rtol)`` are not split; a target
        nearer 1 splits fewer (``random |Y|=10`` at ``eps_max / 2``).
    split_batch, split_work : int, default 20,000, 2,000,000
        Most cones split in one round, and a round's work budget (cones × k × (k + pairs)).
    cover_rays : int, default 4,000
        Random ray end points in the first LP: 200 per dimension of the feasible set, at most
        this many (the LP's cost grows with their number times ``|Y|``).
    cone_local_every : int, default 8
        The cone phase's local search runs at the first round, then every this many rounds
        while it raises the value.
    pricing_passes : int, default 10
        Rounds of adding priced ray end points to one LP.
    lp_tolerance : float, default 1e-10
        Feasibility tolerances of the HiGHS linear programs (their weights are re-solved
        exactly, and the final mechanism is checked exactly).
    exact_solve_weight : float, default 1e-12
        LP weights above this define the support whose weights are re-solved exactly.
    pricing_rtol : float, default 1e-9
        A priced candidate enters the LP when it beats the LP's value by this much (relative).
    keep_near_best : float, default 1e-3
        New candidates within this (relative) of the best priced value stay in the next LP.
    merge_rtol : float, default 0.01
        Outputs are merged, then dropped, while the mechanism loses at most this times rtol of
        its value: the support is what Proposition 1 counts.
    box_batch, box_min_batch : int, default 400, 8
        Most boxes split in one round, and the least the adaptive batch falls to.
    box_min_round : int, default 16
        While a round would bound fewer boxes, children are halved again across their widest
        side (a round's fixed overhead dominates small rounds: ``random |Y|=6`` at
        ``eps_max / 2``).
    box_round_seconds : float, default 1.0
        Seconds a box round aims at (its batch adapts): how far a time limit may be overrun.
    box_lp_columns : int, default 4000
        Columns carried from one box-phase LP to the next.
    stuck_slack : float, default 0.5
        A tree stuck on a μ that prices a feasible point above ``value * (1 + rtol)`` moves to
        the nearest μ that prices the known points at most at ``value * (1 + slack * rtol)``.
    stuck_share : float, default 0.5
        Such a point holds the tree only once the boxes' bound nears its price: it counts as
        stuck when it prices at least this share of the way from the value to the best upper
        bound (a move of μ re-bounds every box).
    dual_switch : float, default 0.1
        When such a point prices above ``value * (1 + dual_switch)``, the mechanism the μ was
        fitted to is far from optimal: the tree bounds at the LP's dual instead, so that its
        boxes' maximisers are the columns the LP lacks (column generation's pricing problem),
        until the value rises and μ is fitted again.
    column_share : float, default 0.25
        Before its first box, the box phase generates columns priced near the LP mechanism's
        outputs for at most this share of the time left.
    column_patience : int, default 3
        That column generation ends after this many rounds at the fitted μ whose best column
        prices within ``column_slack`` (or rtol, if larger) of the value (relative): smaller
        gains are left to the box phase's own local searches.
    column_slack : float, default 1e-3
        See ``column_patience``.
    column_rounds : int, default 200
        At most this many rounds of that column generation (without a time limit too).
    box_local_every, box_local_starts, box_local_iter : int, default 4, 8, 100
        Every this many box rounds, local searches (SLSQP) price posteriors from the worst
        boxes: how often, from how many starts, with how many iterations.
    channel_polish_max_size, channel_polish_starts : int, default 12, 2
        Up to this :math:`|\mathcal Y|` the box phase runs local searches over the channel itself (an SLSQP over
        :math:`|\mathcal Y|^2` variables, whose cost grows about as :math:`|\mathcal Y|^6`), first from
        this many starts.
    channel_polish_iter : int, default 300
        Iterations of one channel search.
    channel_tilt : float, default 0.02
        Random tilt of a channel search's start.
    tiny_output : float, default 1e-12
        Outputs of a channel search lighter than this are dropped.
    output_floor : float, default 1e-100
        Floor of an output's probability inside the channel search (its square must not
        underflow).
    stationary_rtol, stationary_zero : float, default 1e-3, 1e-10
        The box tree's μ is the stationary one when its least-squares KKT system fits this well
        (relative residual), else the LP's dual; posterior coordinates at or below
        ``stationary_zero`` count as a face in that system.
    polish_max_variables : int, default 600
        The whole-mechanism polish runs only up to this many variables (``|Y| + 1`` per output):
        an SLSQP iteration costs O(variables^3) and cannot be stopped, so beyond it (``|Y|`` about
        25 and more) one iteration could outlast the time limit; the per-posterior searches
        and the LP remain.
    mu_polish_iter : int, default 200
        SLSQP iterations of the mechanism polish that precedes the KKT fit.
    mu_polish_merge : float, default 1e-3
        Before that polish, nearby outputs are merged while the mechanism loses at most this
        fraction of its value (the polish regains it): a degenerate LP spreads its weight over
        clusters of near-equivalent posteriors, on which the polish does not converge.
    mu_renew : float, default 0.1
        The tree's μ is renewed when the LP's value has risen by this fraction of rtol.
    search_useful : float, default 0.01
        A periodic local search keeps its pace when it raises the value by this fraction of
        rtol; else it runs half as often.
    slsqp_ftol_posterior : float, default 1e-15
        SLSQP tolerance when one posterior is priced.
    singular_direction_norm : float, default 1e-12
        Singular directions of W shorter than this after projection are not used as seeds.
    cuts_per_cone : int, default 3
        Candidate cuts kept per cone (each gives a valid simplex; the bound uses the best).
    multiplier_steps, threshold_steps : tuple of float
        Multiples of a box's previous Lagrange multiplier, and of its concavity threshold,
        tried when it is bounded again.
    golden_evaluations, golden_span : int, float, default 10, 1.3
        The golden-section search over the best trial's multiplier: evaluations, over
        ``[m / span, m * span]`` on a log scale.
    golden_wide_span : float, default 5.0
        Where that search ends at an end of its range, at m, a second one continues beyond it,
        over ``[m / span, m]`` or ``[m, m * span]`` (1: none).
    root_multipliers : tuple of float
        Multipliers tried at the root box (a wide log grid from 0.05 to 500).
    trial_steps, ascent_steps : int, default 30, 100
        Accelerated projected-gradient steps per bound: a short ascent ranks the trial
        multipliers, a long one finishes the best (the certificate holds after any number).
    metric_floor : float, default 1e-12
        Smallest entry of the ascent's diagonal metric, relative to its largest.
    cover_stages, cover_newton_steps : int, default 6, 2
        The least-cost cover's barrier method: stages, and damped Newton steps per stage.
    cover_growth, cover_start_margin : float, default 4.0, 0.1
        Growth of the barrier parameter per stage, and the enlargement of its start.
    cover_cost_floor_per_output : float, default 0.01
        Floor of a coordinate's cover cost as a share of its squared width per output :math:`|\mathcal Y|`
        (``random |Y|=10`` and ``random |Y|=20`` at ``eps = 0.02``).
    rival_apart : float, default 1e-3
        Split between rival maximisers when they are this far apart, relative to the widest
        side.
    root_free : float, default 1e-9
        Coordinates above this count as free in the KKT estimate of the root box's multipliers.
    pool_min_boxes : int, default 8
        With worker processes, each chunk of a round's boxes has at least this many.
    polytope_vertices : int, default 50,000
        The polyhedral relaxation (:mod:`renyi.lift.optimum.polytope`) adds no cut once its
        polytope has this many vertices (an update costs about the square of the count).
    polytope_share : float, default 0.5
        Share of the time limit the polyhedral relaxation may use before the cones
        (``non-square 5x10``).
    root_share : float, default 0.5
        Share of the time left that the root box's coordinate ranges may use; the coordinates
        not reached keep the chi^2 ellipsoid's range (valid too), and the box rounds and the
        returned channel's decimal check get the rest (``random |Y|=200`` in ``make bench-scale``).
    """

    box_min_size: int = 6
    cone_target: float = 0.5
    box_target: float = 0.9
    split_batch: int = 20_000
    split_work: int = 2_000_000
    cover_rays: int = 4_000
    cone_local_every: int = 8
    pricing_passes: int = 10
    lp_tolerance: float = 1e-10
    exact_solve_weight: float = 1e-12
    pricing_rtol: float = 1e-9
    keep_near_best: float = 1e-3
    merge_rtol: float = 0.01
    box_batch: int = 400
    box_min_batch: int = 8
    box_min_round: int = 16
    box_round_seconds: float = 1.0
    box_lp_columns: int = 4000
    stuck_slack: float = 0.5
    stuck_share: float = 0.5
    dual_switch: float = 0.1
    column_share: float = 0.25
    column_patience: int = 3
    column_slack: float = 1e-3
    column_rounds: int = 200
    box_local_every: int = 4
    box_local_starts: int = 8
    box_local_iter: int = 100
    channel_polish_max_size: int = 12
    channel_polish_starts: int = 2
    channel_polish_iter: int = 300
    channel_tilt: float = 0.02
    tiny_output: float = 1e-12
    output_floor: float = 1e-100
    stationary_rtol: float = 1e-3
    stationary_zero: float = 1e-10
    polish_max_variables: int = 600
    mu_polish_iter: int = 200
    mu_polish_merge: float = 1e-3
    mu_renew: float = 0.1
    search_useful: float = 0.01
    slsqp_ftol_posterior: float = 1e-15
    singular_direction_norm: float = 1e-12
    cuts_per_cone: int = 3
    multiplier_steps: tuple = (0.0, 0.3, 0.6, 1.0, 1.6, 2.5)
    threshold_steps: tuple = (1.0, 1.3)
    golden_evaluations: int = 10
    golden_span: float = 1.3
    golden_wide_span: float = 5.0
    root_multipliers: tuple = tuple(np.geomspace(0.05, 500.0, 13).tolist())
    trial_steps: int = 30
    ascent_steps: int = 100
    metric_floor: float = 1e-12
    cover_stages: int = 6
    cover_newton_steps: int = 2
    cover_growth: float = 4.0
    cover_start_margin: float = 0.1
    cover_cost_floor_per_output: float = 0.01
    rival_apart: float = 1e-3
    root_free: float = 1e-9
    pool_min_boxes: int = 8
    polytope_vertices: int = 50_000
    polytope_share: float = 0.5
    root_share: float = 0.5


@dataclass(frozen=True)
class SearchSettings:
    """All search controls of :func:`~renyi.lift.optimum.global_optimum`.

    Attributes
    ----------
    margins : Margins
        Correctness margins (never tuned).
    heuristics : Heuristics
        Speed controls (any value gives a valid bracket).
    """

    margins: Margins = field(default_factory=Margins)
    heuristics: Heuristics = field(default_factory=Heuristics)
