r"""The search controls of :func:`~renyi.lift.optimum.global_optimum`, in one frozen object.

Two groups, with different rules:

* :class:`Margins` guard correctness.  Each is a relative (or absolute, where said) safety
  margin on a quantity computed in floating point whose exact value a proof needs, or a
  tolerance that decides whether a computed mechanism is accepted.  They are never tuned
  for speed; the reason each is safe is written next to it.
* :class:`~renyi.lift.optimum.heuristics.Heuristics` decide speed only
  (:mod:`~renyi.lift.optimum.heuristics`, one record per part of the search): every value
  of every field yields a valid bracket.

Pass a modified copy to change one, for instance
``SearchSettings(heuristics=Heuristics(boxes=BoxHeuristics(batch=100)))``, or use
``dataclasses.replace``.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from .heuristics import Heuristics

__all__ = ["SearchSettings", "Margins"]


@dataclass(frozen=True)
class Margins:
    r"""Safety margins and acceptance tolerances that the certificate relies on.

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
    absolute : float, default 1e-15
        Absolute margin added beside a relative one (a box's bound, a box's half-width in the
        root ellipsoid, a range reduction's slack), which vanishes where the value is 0.
    z_range : float, default 1e-12
        Relative widening of a box's range of :math:`z=Aq` (the knapsack that computes it sums
        a few terms of size at most 1) and of the budget's ranges of :math:`z`.
    remainder_span, remainder_quotient : float, default 1e-2, 1e-8
        A box's exact remainder curvature (a difference quotient) is used only where
        :math:`|z-z_0|` exceeds ``remainder_span`` of :math:`\max(z,z_0)`; its round-off is
        then below 1e-10 of it, and it is lowered by ``remainder_quotient`` of itself.
    curvature_span, curvature_quotient : float, default 1e-3, 1e-9
        The same for the chi^2 radius below order 2
        (:func:`~renyi.lift.optimum.bracket.chi2_radius`): the exact quotient
        :math:`f(r)/(r-1)^2` is used where :math:`r-1` exceeds ``curvature_span``, lowered by
        ``curvature_quotient`` of itself.
    segment_pullback : float, default 1e-9
        A segment's end point moved back within the budget's ranges of :math:`z` stops short by
        this fraction of the step, so that round-off leaves it inside.
    plane_offset : float, default 1e-12
        Relative outward shift of a tangent plane of the polyhedral relaxation, above the
        rounding of its offset (a sum of a few terms of size at most the budget).
    on_plane, same_point : float, default 1e-10, 1e-11
        The polyhedral relaxation's vertex enumeration: a vertex within ``on_plane`` of a plane
        (relative to its scale) lies on it, and a new vertex within ``same_point`` of a known
        one is that vertex; the relaxation's bound adds the slack these allow.
    vertex_check : float, default 1e-9
        Its completeness check: a linear program's optimum that beats the best vertex by more
        than this (relative to 1 + the optimum) reveals a missing vertex.
    vertex_lp_feasibility : float, default 1e-10
        HiGHS's primal and dual feasibility tolerances in that check (HiGHS's default 1e-7
        would compare the solver's slack, not the vertices).
    min_prior : float, default 1e-12
        The least prior probability of a value of Y the search accepts: its linear programs
        carry coefficients 1 / P_Y(y), and below about 1e-13 HiGHS fails on them.
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
    absolute: float = 1e-15
    z_range: float = 1e-12
    remainder_span: float = 1e-2
    remainder_quotient: float = 1e-8
    curvature_span: float = 1e-3
    curvature_quotient: float = 1e-9
    segment_pullback: float = 1e-9
    plane_offset: float = 1e-12
    on_plane: float = 1e-10
    same_point: float = 1e-11
    vertex_check: float = 1e-9
    vertex_lp_feasibility: float = 1e-10
    min_prior: float = 1e-12


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
