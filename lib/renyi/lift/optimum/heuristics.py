r"""The speed controls of :func:`~renyi.lift.optimum.global_optimum`: one record per part of the search.

Every value of every field yields a valid bracket (the lower bound from an exactly checked
mechanism, the upper bound from weak duality at *some* multiplier), so a heuristic changes
how fast the gap closes, never whether the bracket holds; the proof's margins are
:class:`~renyi.lift.optimum.settings.Margins`.  Defaults were chosen on the cases of
``make bench`` (table ``lift``, cases named by their label, e.g. ``random |Y|=10`` at
``eps = eps_max / 2``; table ``lift_cones_alone``), the book's *Performance* page.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

__all__ = [
    "Heuristics",
    "ConeHeuristics",
    "PricingHeuristics",
    "BoxHeuristics",
    "TreeMultiplierHeuristics",
    "BoxBoundHeuristics",
    "CoverHeuristics",
    "ColumnHeuristics",
    "PolishHeuristics",
    "PolytopeHeuristics",
]


@dataclass(frozen=True)
class ConeHeuristics:
    r"""The cone phase (:mod:`~renyi.lift.optimum.cones`, the cone loop of ``search``).

    Attributes
    ----------
    target : float, default 0.5
        Cones bounded below ``value * (1 + target * rtol)`` are not split; a target nearer 1
        splits fewer (``random |Y|=10`` at ``eps_max / 2``).
    split_batch, split_work : int, default 20,000, 2,000,000
        Most cones split in one round, and a round's work budget (cones × k × (k + pairs)).
    local_every : int, default 8
        The local search runs at the first round, then every this many rounds while it raises
        the value.
    cuts : int, default 3
        Candidate cuts kept per cone (each gives a valid simplex; the bound uses the best).
    outer_set_work : int, default 20,000,000
        Operations (about k^3 a cone) of the first cones' outer sets built between two looks
        at the clock.
    polish_iter, polish_iter_large, large_size : int, default 200, 60, 12
        Iterations of the local search's mechanism polish: the first up to
        :math:`|\mathcal Y|` = ``large_size``, the second above.
    """

    target: float = 0.5
    split_batch: int = 20_000
    split_work: int = 2_000_000
    local_every: int = 8
    cuts: int = 3
    outer_set_work: int = 20_000_000
    polish_iter: int = 200
    polish_iter_large: int = 60
    large_size: int = 12


@dataclass(frozen=True)
class PricingHeuristics:
    """The linear programs over candidate posteriors and their pricing (:mod:`~renyi.lift.optimum.lp`).

    Attributes
    ----------
    rays : int, default 4,000
        Random ray end points in the first LP: 200 per dimension of the feasible set, at most
        this many (the LP's cost grows with their number times ``|Y|``).
    passes : int, default 10
        Rounds of adding priced ray end points to one LP.
    lp_tolerance : float, default 1e-10
        Feasibility tolerances of the HiGHS linear programs (their weights are re-solved
        exactly, and the final mechanism is checked exactly).
    exact_solve_weight : float, default 1e-12
        LP weights above this define the support whose weights are re-solved exactly.
    rtol : float, default 1e-9
        A priced candidate enters the LP when it beats the LP's value by this much (relative).
    keep_near_best : float, default 1e-3
        New candidates within this (relative) of the best priced value stay in the next LP.
    merge_rtol : float, default 0.01
        Outputs are merged, then dropped, while the mechanism loses at most this times rtol of
        its value: the support is what Proposition 1 counts.
    posterior_ftol : float, default 1e-15
        SLSQP tolerance when one posterior is priced.
    singular_direction_norm : float, default 1e-12
        Singular directions of W shorter than this after projection are not used as seeds.
    """

    rays: int = 4_000
    passes: int = 10
    lp_tolerance: float = 1e-10
    exact_solve_weight: float = 1e-12
    rtol: float = 1e-9
    keep_near_best: float = 1e-3
    merge_rtol: float = 0.01
    posterior_ftol: float = 1e-15
    singular_direction_norm: float = 1e-12


@dataclass(frozen=True)
class BoxHeuristics:
    r"""The box branch and bound's rounds (:mod:`~renyi.lift.optimum.boxes.tree`, ``search``).

    Attributes
    ----------
    target : float, default 0.9
        Boxes bounded below ``value * (1 + target * rtol)`` are not split.
    batch, min_batch : int, default 400, 8
        Most boxes split in one round, and the least the adaptive batch falls to.
    min_round : int, default 16
        While a round would bound fewer boxes, children are halved again across their widest
        side (a round's fixed overhead dominates small rounds: ``random |Y|=6`` at
        ``eps_max / 2``).
    round_seconds : float, default 1.0
        Seconds a box round aims at (its batch adapts): how far a time limit may be overrun.
    lp_columns : int, default 4000
        Columns carried from one box-phase LP to the next.
    local_every, local_starts, local_iter : int, default 4, 8, 100
        Every this many box rounds, local searches (SLSQP) price posteriors from the worst
        boxes: how often, from how many starts, with how many iterations.
    search_useful : float, default 0.01
        A periodic local search keeps its pace when it raises the value by this fraction of
        rtol; else it runs half as often.
    rival_apart : float, default 1e-3
        Split between rival maximisers when they are this far apart, relative to the widest
        side.
    pool_min_boxes : int, default 8
        With worker processes, each chunk of a round's boxes has at least this many.
    root_share : float, default 0.5
        Share of the time left that the root box's coordinate ranges may use; the coordinates
        not reached keep the chi^2 ellipsoid's range (valid too), and the box rounds and the
        returned channel's decimal check get the rest (``random |Y|=200`` in ``make bench-scale``).
    root_extent_ftol : float, default 1e-15
        SLSQP tolerance of the root box's extents (any result gives a valid extent).
    """

    target: float = 0.9
    batch: int = 400
    min_batch: int = 8
    min_round: int = 16
    round_seconds: float = 1.0
    lp_columns: int = 4000
    local_every: int = 4
    local_starts: int = 8
    local_iter: int = 100
    search_useful: float = 0.01
    rival_apart: float = 1e-3
    pool_min_boxes: int = 8
    root_share: float = 0.5
    root_extent_ftol: float = 1e-15


@dataclass(frozen=True)
class TreeMultiplierHeuristics:
    """The box tree's multiplier μ of the outputs' constraint (:mod:`~renyi.lift.optimum.stationary`).

    Attributes
    ----------
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
    renew : float, default 0.1
        The tree's μ is renewed when the LP's value has risen by this fraction of rtol.
    stationary_rtol, stationary_zero : float, default 1e-3, 1e-10
        The box tree's μ is the stationary one when its least-squares KKT system fits this well
        (relative residual), else the LP's dual; posterior coordinates at or below
        ``stationary_zero`` count as a face in that system.
    root_free : float, default 1e-9
        Coordinates above this count as free in the KKT estimate of the root box's multipliers.
    polish_iter : int, default 200
        SLSQP iterations of the mechanism polish that precedes the KKT fit.
    polish_merge : float, default 1e-3
        Before that polish, nearby outputs are merged while the mechanism loses at most this
        fraction of its value (the polish regains it): a degenerate LP spreads its weight over
        clusters of near-equivalent posteriors, on which the polish does not converge.
    nearest_ftol, nearest_accept : float, default 1e-16, 1e-9
        SLSQP tolerance of the move to the nearest μ that prices the known points low, and
        how far outside that set (relative to the value) its result is accepted.
    """

    stuck_slack: float = 0.5
    stuck_share: float = 0.5
    dual_switch: float = 0.1
    renew: float = 0.1
    stationary_rtol: float = 1e-3
    stationary_zero: float = 1e-10
    root_free: float = 1e-9
    polish_iter: int = 200
    polish_merge: float = 1e-3
    nearest_ftol: float = 1e-16
    nearest_accept: float = 1e-9


@dataclass(frozen=True)
class BoxBoundHeuristics:
    """A box's Lagrange multiplier and its ascent (:mod:`~renyi.lift.optimum.boxes.multipliers`).

    Attributes
    ----------
    multiplier_steps, threshold_steps : tuple of float
        Multiples of a box's previous Lagrange multiplier, and of its concavity threshold,
        tried when it is bounded again.
    golden_evaluations, golden_span : int, float, default 10, 1.3
        The golden-section search over the best trial's multiplier: evaluations, over
        ``[m / span, m * span]`` on a log scale.
    golden_wide_span : float, default 5.0
        Where that search ends at an end of its range, at m, a second one continues beyond it,
        over ``[m / span, m]`` or ``[m, m * span]`` (1: none).
    golden_edge : float, default 0.9
        A golden-section search whose best multiplier lies this far towards an end of its range
        (1: at the end; its last interval is 1 % of the range) ended there.
    root_multipliers : tuple of float
        Multipliers tried at the root box (a wide log grid from 0.05 to 500).
    trial_steps, ascent_steps : int, default 30, 100
        Accelerated projected-gradient steps per bound: a short ascent ranks the trial
        multipliers, a long one finishes the best (the certificate holds after any number).
    metric_floor : float, default 1e-12
        Smallest entry of the ascent's diagonal metric, relative to its largest.
    step_curvature_share : float, default 0.01
        Below order 2 the ascent's step sizes take Phi's curvature where z is at least this
        share of its box's largest z (z^(alpha - 2) is infinite at 0).
    """

    multiplier_steps: tuple = (0.0, 0.3, 0.6, 1.0, 1.6, 2.5)
    threshold_steps: tuple = (1.0, 1.3)
    golden_evaluations: int = 10
    golden_span: float = 1.3
    golden_wide_span: float = 5.0
    golden_edge: float = 0.9
    root_multipliers: tuple = tuple(np.geomspace(0.05, 500.0, 13).tolist())
    trial_steps: int = 30
    ascent_steps: int = 100
    metric_floor: float = 1e-12
    step_curvature_share: float = 0.01


@dataclass(frozen=True)
class CoverHeuristics:
    r"""The concavity cover of a box's Lagrangian (:mod:`~renyi.lift.optimum.boxes.cover`).

    Attributes
    ----------
    stages, newton_steps : int, default 6, 2
        The least-cost cover's barrier method: stages, and damped Newton steps per stage.
    growth, start_margin : float, default 4.0, 0.1
        Growth of the barrier parameter per stage, and the enlargement of its start.
    start_floor : float, default 1e-12
        Added to that start, which keeps it strictly feasible.
    cost_floor_per_output : float, default 0.01
        Floor of a coordinate's cover cost as a share of its squared width per output
        :math:`|\mathcal Y|` (``random |Y|=10`` and ``random |Y|=20`` at ``eps = 0.02``).
    near_growth : float, default 4.0
        A cover from a nearby multiplier that had to grow this many times to certify is
        compared with the equal-cost shape.
    shape_floor : float, default 1e-6
        Added (over P_Y) to the rank-one cover shape, which keeps it definite.
    """

    stages: int = 6
    newton_steps: int = 2
    growth: float = 4.0
    start_margin: float = 0.1
    start_floor: float = 1e-12
    cost_floor_per_output: float = 0.01
    near_growth: float = 4.0
    shape_floor: float = 1e-6


@dataclass(frozen=True)
class ColumnHeuristics:
    """The column generation that precedes the first box (``search``).

    Attributes
    ----------
    share : float, default 0.25
        It generates columns priced near the LP mechanism's outputs for at most this share of
        the time left.
    patience : int, default 3
        It ends after this many rounds at the fitted μ whose best column prices within
        ``slack`` (or rtol, if larger) of the value (relative): smaller gains are left to the
        box phase's own local searches.
    slack : float, default 1e-3
        See ``patience``.
    rounds : int, default 200
        At most this many rounds (without a time limit too).
    """

    share: float = 0.25
    patience: int = 3
    slack: float = 1e-3
    rounds: int = 200


@dataclass(frozen=True)
class PolishHeuristics:
    r"""Local searches over the channel and the whole mechanism (:mod:`~renyi.lift.optimum.candidates`).

    Attributes
    ----------
    channel_max_size, channel_starts : int, default 12, 2
        Up to this :math:`|\mathcal Y|` the box phase runs local searches over the channel
        itself (an SLSQP over :math:`|\mathcal Y|^2` variables, whose cost grows about as
        :math:`|\mathcal Y|^6`), first from this many starts.
    channel_iter : int, default 300
        Iterations of one channel search.
    channel_tilt : float, default 0.02
        Random tilt of a channel search's start.
    tiny_output : float, default 1e-12
        Outputs of a channel search lighter than this are dropped.
    output_floor : float, default 1e-100
        Floor of an output's probability inside the channel search (its square must not
        underflow).
    random_concentration : float, default 0.3
        A channel search from a random start begins near the constant channel, tilted towards
        a random channel whose columns are Dirichlet with this concentration (small: tilts
        towards few outputs) ...
    random_tilt : tuple of float, default (0.01, 0.5)
        ... by an amount uniform in this range.
    channel_min_prior : float, default 1e-8
        The cone phase of a matrix that is not square and invertible searches over the
        channel only where every :math:`P_Y(y)` is at least this: below it the searches' nearly
        vanishing outputs (gains of order :math:`1/P_Y(y)`) left the linear programs
        unsolvable or the mechanism worse (a 2 x 3 and a 4 x 6 matrix with one prior entry of
        1e-10 and 1e-11).
    max_variables : int, default 600
        The whole-mechanism polish runs only up to this many variables (``|Y| + 1`` per
        output): an SLSQP iteration costs O(variables^3) and cannot be stopped, so beyond it
        (``|Y|`` about 25 and more) one iteration could outlast the time limit; the
        per-posterior searches and the LP remain.
    """

    channel_max_size: int = 12
    channel_starts: int = 2
    channel_iter: int = 300
    channel_tilt: float = 0.02
    tiny_output: float = 1e-12
    output_floor: float = 1e-100
    random_concentration: float = 0.3
    random_tilt: tuple = (0.01, 0.5)
    channel_min_prior: float = 1e-8
    max_variables: int = 600


@dataclass(frozen=True)
class PolytopeHeuristics:
    """The polyhedral relaxation (:mod:`~renyi.lift.optimum.polytope`).

    Attributes
    ----------
    vertices : int, default 50,000
        It adds no cut once its polytope has this many vertices (an update costs about the
        square of the count).
    share : float, default 0.5
        Share of the time limit it may use before the cones (``non-square 5x10``).
    rank_rtol : float, default 1e-9
        Singular values below this, relative to the largest, count as zero in its edge test
        (a missed edge is caught by the completeness check).
    probes : int, default 32
        Random directions of the completeness check.
    """

    vertices: int = 50_000
    share: float = 0.5
    rank_rtol: float = 1e-9
    probes: int = 32


@dataclass(frozen=True)
class Heuristics:
    r"""Speed controls: any value gives a valid bracket, only the time to a gap changes.

    One record per part of the search that reads them; change one field with
    ``Heuristics(boxes=BoxHeuristics(batch=100))`` or ``dataclasses.replace``.

    Attributes
    ----------
    box_min_size : int, default 6
        From this :math:`|\mathcal Y|` on (with ε > 0 and a square invertible A) the box branch
        and bound follows one round of the cones, whose count grows exponentially in
        :math:`|\mathcal Y|` (``lift_cones_alone``: the :math:`|\mathcal Y|` = 6 and 7 cases
        with the cones alone).
    cones : ConeHeuristics
    pricing : PricingHeuristics
    boxes : BoxHeuristics
    tree_multiplier : TreeMultiplierHeuristics
    box_bound : BoxBoundHeuristics
    cover : CoverHeuristics
    columns : ColumnHeuristics
    polish : PolishHeuristics
    polytope : PolytopeHeuristics
    """

    box_min_size: int = 6
    cones: ConeHeuristics = field(default_factory=ConeHeuristics)
    pricing: PricingHeuristics = field(default_factory=PricingHeuristics)
    boxes: BoxHeuristics = field(default_factory=BoxHeuristics)
    tree_multiplier: TreeMultiplierHeuristics = field(default_factory=TreeMultiplierHeuristics)
    box_bound: BoxBoundHeuristics = field(default_factory=BoxBoundHeuristics)
    cover: CoverHeuristics = field(default_factory=CoverHeuristics)
    columns: ColumnHeuristics = field(default_factory=ColumnHeuristics)
    polish: PolishHeuristics = field(default_factory=PolishHeuristics)
    polytope: PolytopeHeuristics = field(default_factory=PolytopeHeuristics)
