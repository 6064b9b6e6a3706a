r"""The result of an audit: :class:`LowerBound`, one lower confidence bound for :math:`\varepsilon(\lambda)`.

Produced by :func:`~renyi.audit.rdp_lower_bound` and :func:`~renyi.audit.audit`, judged
against a claim by :func:`~renyi.audit.verdict`.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, replace

from scipy import special

__all__ = ["LowerBound", "LABELS", "best_per_order"]


@dataclass(frozen=True)
class LowerBound:
    r"""A lower confidence bound for :math:`\varepsilon(\lambda)` from one pair of samples.

    Attributes
    ----------
    order : float
        :math:`\lambda`.
    estimate : float
        :math:`D_\lambda(\hat p,\hat q_\tau)` for the reported direction.
    std_error : float
        :math:`\sqrt{\hat\sigma_{(1)}^2/n_p+\hat\sigma_{(2)}^2/n_q}` after
        normalisation, which is :math:`\hat\sigma_n/\sqrt n` of eq. (18) when
        :math:`n_p=n_q=n`.
    lower : float
        The lower confidence bound: ``estimate - max(bias, 0) + z_alpha * std_error``
        (eq. 16, centred at the bias-corrected estimate), or the bound at
        ``bound_order`` when the delta method is not reliable at ``order``
        (see ``reliable``), and never above ``estimate``.  A value ``<= 0`` is
        trivial: no evidence of privacy loss.
    alpha : float
        Overall one-sided error level; the bound holds with probability about
        :math:`1-\alpha` for large samples.  With ``direction="both"`` each
        direction is bounded at level :math:`\alpha/2` (Bonferroni).
    n_p, n_q : int
        Sample sizes of P and Q as given (not swapped for the reverse direction).
    bandwidth : float or None
        KDE bandwidth :math:`h` (``None`` for discrete outputs).
    floor, beta : float
        :math:`\tau` and :math:`\beta` of the softmax floor (13).
    discrete : bool
    cells : int
        Grid points (continuous) or observed outcomes (discrete).
    bias : float
        Estimated second-order bias of ``estimate`` (:func:`~renyi.audit.delta_method.second_order_bias`
        minus :math:`(\lambda-1)\mathrm{se}^2/2`); ``max(bias, 0)`` is subtracted
        when ``bias_corrected``.
    bias_corrected : bool
        Whether ``lower`` is centred at ``estimate - max(bias, 0)`` (the default)
        or at ``estimate`` (eq. 16 exactly as printed).
    direction : str
        ``"P||Q"`` (the divergence :math:`D_\lambda(P\|Q)`, the paper's
        ordered pair) or ``"Q||P"``: the direction whose bound is reported.
    reliable : bool
        True when the delta-method bound at ``order`` itself is reported: its
        standard error of :math:`\log\hat F`, :math:`(\lambda-1)\,\mathrm{se}`,
        is at most :data:`~renyi.audit.delta_method.MAX_LOG_SCALE_ERROR` (and, without the bias
        correction, the bias at most :data:`~renyi.audit.delta_method.MAX_UNCORRECTED_BIAS` standard
        errors).  When False, ``lower`` is the bound at the smaller
        ``bound_order``, valid here because :math:`D_\lambda` is nondecreasing
        in :math:`\lambda`, or 0 when no order qualifies.
    bound_order : float or None
        The order whose delta-method bound is ``lower`` (``None``: trivial 0).
    note : str
        Why the bound is not reliable (empty when it is).
    warnings : tuple of str
        What makes the numbers doubtful even where the rule above passes: fewer than
        :data:`~renyi.audit.delta_method.MIN_SAMPLES` outputs on a side, or an estimate more than one
        standard error below 0, which a divergence cannot be (the density estimates then do
        not describe the samples: too few outputs, a floor, sharpness or bandwidth far from
        the data's scale, or continuous values read as discrete).  Empty normally.
    directions : tuple of LowerBound
        With ``direction="both"``: the two one-direction bounds, each at level
        :math:`\alpha/2`; empty otherwise.
    level : float
        The one-sided level of this direction's bound: ``alpha``, or
        ``alpha / 2`` for each of the two bounds when both directions were audited.
        For ``method="finite-sample"`` it is ``alpha``: one event covers every bound.
    method : str
        ``"delta"`` (eq. 16, asymptotic) or ``"finite-sample"``
        (:func:`~renyi.audit.finite_sample.finite_sample_bounds`, valid for every n).  For the
        latter ``floor``, ``beta`` and ``bandwidth`` are ``None``, ``std_error`` is 0,
        ``estimate`` is the plug-in on the cells (``inf`` when a cell of the second
        law is empty) and ``cells`` counts the cells the boxes are built on.
    primal : float or None
        Finite-sample bounds only: the divergence at a pair of pmfs inside both confidence
        boxes, so no bound from these boxes can exceed it; ``primal - lower`` is what the
        certificate leaves on the table.
    event : str
        Finite-sample bounds only: the name of their confidence event; bounds that share it
        spend their level once in a :func:`~renyi.audit.verdict`.
    held_out : tuple of int
        Finite-sample bounds only: the outputs per side that chose the cells (not used in
        the bound).
    projection : dict or None
        Vector outputs only: how they were reduced to one dimension
        (:class:`~renyi.audit.projection.Projection` as a dict: ``kind``, ``dimension``,
        ``held_out``, ``signal_share``, ``bandwidths``, ``requested``, ``scores``,
        ``divergence_share``).  ``n_p`` and ``n_q`` then count the outputs bounded.
    """

    order: float
    estimate: float
    std_error: float
    lower: float
    alpha: float
    n_p: int
    n_q: int
    bandwidth: float | None
    floor: float | None
    beta: float | None
    discrete: bool
    cells: int
    bias: float = 0.0
    bias_corrected: bool = False
    direction: str = "P||Q"
    reliable: bool = True
    bound_order: float | None = None
    note: str = ""
    directions: tuple = ()
    level: float | None = None
    warnings: tuple = ()
    method: str = "delta"
    primal: float | None = None
    event: str = ""
    held_out: tuple = (0, 0)
    projection: dict | None = None

    @property
    def sigma(self) -> float:
        r""":math:`\hat\sigma_n` of eq. (18).

        ``std_error`` times :math:`\sqrt n`
        (with :math:`n` the harmonic-mean sample size when they differ).
        """
        n_eff = 2.0 / (1.0 / self.n_p + 1.0 / self.n_q)
        return self.std_error * math.sqrt(n_eff)

    @property
    def trivial(self) -> bool:
        """True when the bound is <= 0: the samples show no evidence of privacy loss."""
        return self.lower <= 0.0

    def to_dict(self) -> dict:
        """The fields as a JSON-ready dict (``directions`` as a list of dicts).

        Beside the fields: ``trivial`` (the bound is <= 0: no evidence of privacy loss),
        ``bias_subtracted`` (what was subtracted from ``estimate``: ``max(bias, 0)`` when
        ``bias_corrected``, else 0) and ``grid`` (``"grid points"`` for a KDE, ``"outcomes"``
        for relative frequencies: what ``cells`` counts).

        Returns
        -------
        dict
        """
        out = asdict(self)
        for record, bound in zip([out, *out["directions"]], [self, *self.directions]):
            record["trivial"] = bound.trivial
            record["bias_subtracted"] = max(bound.bias, 0.0) if bound.bias_corrected else 0.0
            record["grid"] = "outcomes" if bound.discrete else "grid points"
        return out

    def __str__(self) -> str:
        if self.method == "finite-sample":
            return (
                f"order {self.order:g} ({self.direction}): finite-sample lower bound {self.lower:.6g}"
                f"{' (trivial: no evidence)' if self.trivial else ''} (alpha={self.alpha:g}, every n; "
                f"at most {self.primal:.6g} from these boxes; {self.cells:,} cells)"
            )
        correction = f" - bias {max(self.bias, 0.0):.3g}" if self.bias_corrected else ""
        text = (
            f"order {self.order:g} ({self.direction}): lower bound {self.lower:.6g}"
            f"{' (trivial: no evidence)' if self.trivial else ''} = estimate {self.estimate:.6g}"
            f"{correction} - {-special.ndtri(self.level or self.alpha):.3g} x std.error {self.std_error:.3g}"
            f" (alpha={self.alpha:g})"
        )
        if not self.reliable:
            text = (
                f"order {self.order:g} ({self.direction}): lower bound {self.lower:.6g}"
                f"{' (trivial: no evidence)' if self.trivial else ''}; {self.note}"
            )
        return "; ".join([text, *self.warnings])


#: The ordered pairs each ``direction`` of an audit bounds: ``"P||Q"`` is the paper's.
LABELS = {"forward": ("P||Q",), "reverse": ("Q||P",), "both": ("P||Q", "Q||P")}


def best_per_order(orders, direction: str, bound_at) -> list[LowerBound]:
    """One :class:`LowerBound` per order: the larger of the directions' bounds.

    Every method builds its result here, so the rule is one: ``direction="both"`` reports the
    larger bound, keeps each direction's in ``directions``, and carries a doubt about either
    direction (a doubt about the audit); ties keep ``"P||Q"``, the paper's ordered pair.

    Parameters
    ----------
    orders : sequence of float
    direction : {"both", "forward", "reverse"}
    bound_at : callable
        ``bound_at(order, label)``: the :class:`LowerBound` of one ordered pair at one order.

    Returns
    -------
    list of LowerBound
        In the order of ``orders``.
    """
    results = []
    for order in orders:
        found = [bound_at(order, label) for label in LABELS[direction]]
        best = max(found, key=lambda b: b.lower)
        if direction == "both":
            doubts = tuple(dict.fromkeys(w for b in found for w in b.warnings))
            best = replace(best, directions=tuple(found), warnings=doubts)
        results.append(best)
    return results
