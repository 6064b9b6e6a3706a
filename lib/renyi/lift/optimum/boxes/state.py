"""The box tree's per-box and per-cut arrays, each kept as one record.

Every array of a :class:`BoxState` has one row per box, and every array of a :class:`CutState`
one row per cut, so that splitting, dropping or merging boxes is one ``take`` and
one ``concat`` over every field: a field added to a record is carried along by
every step of the tree without being named there.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import numpy as np

__all__ = ["BoxState", "CutState"]


class _Rows:
    """Row-wise take and concatenation over every field of a dataclass of arrays."""

    def __len__(self) -> int:
        return len(getattr(self, dataclasses.fields(self)[0].name))

    def take(self, rows):
        """The record of the rows ``rows`` (indices, repeats allowed, or a boolean mask); a copy.

        Parameters
        ----------
        rows : array_like of int or bool

        Returns
        -------
        the same type
        """
        return type(self)(**{f.name: getattr(self, f.name)[rows] for f in dataclasses.fields(self)})

    def concat(self, other):
        """The rows of this record followed by those of ``other``; a copy.

        Parameters
        ----------
        other : the same type

        Returns
        -------
        the same type
        """
        names = [f.name for f in dataclasses.fields(self)]
        return type(self)(**{name: np.concatenate([getattr(self, name), getattr(other, name)]) for name in names})


@dataclass(eq=False)
class BoxState(_Rows):
    """Everything the tree keeps per box; row ``i`` of every field is box ``i``.

    Attributes
    ----------
    lo, hi : ndarray, shape (boxes, |Y|)
        The box's corners.
    start : ndarray, shape (boxes, |Y|)
        Where the ascent of the box's bound starts (its parent's end point).
    anchor, anchor_best : ndarray, shape (boxes, |Y|)
        Where the quadratic minorant of the box's bound is expanded, and where its best bound
        expanded it (its children's second point).
    multiplier, multiplier_best : ndarray, shape (boxes,)
        The box's multiplier of the budget (inf: not chosen yet; the centre of its children's
        trials) and that of its bound, after refinement.
    theta : ndarray, shape (boxes, |Y|)
        The cover of the box's bound.
    best_point, rival : ndarray, shape (boxes, |Y|)
        The ascent's end point and the rival maximiser (a split falls between them).
    cached : ndarray, shape (boxes,)
        The box's bound of F_mu, at ``mu_at``.
    unbounded : ndarray of bool, shape (boxes,)
        Whether the box has not been bounded itself yet (a child keeps its parent's bound,
        valid on the smaller box, until it is).
    mu_at : ndarray, shape (boxes, |Y|)
        The mu of ``cached``.
    lineage : ndarray of int, shape (boxes,)
        The innermost cut whose box contains the box (-1: none).
    """

    lo: np.ndarray
    hi: np.ndarray
    start: np.ndarray
    anchor: np.ndarray
    anchor_best: np.ndarray
    multiplier: np.ndarray
    multiplier_best: np.ndarray
    theta: np.ndarray
    best_point: np.ndarray
    rival: np.ndarray
    cached: np.ndarray
    unbounded: np.ndarray
    mu_at: np.ndarray
    lineage: np.ndarray

    @classmethod
    def fresh(cls, lo, hi, points, multipliers, lineage, mu, cached):
        """New boxes that no bound has been computed on, every point of each at ``points``.

        Parameters
        ----------
        lo, hi : ndarray, shape (boxes, |Y|)
        points : ndarray, shape (boxes, |Y|)
            Start, anchors, end point and rival of each box.
        multipliers : ndarray, shape (boxes,)
        lineage : ndarray of int, shape (boxes,)
        mu : ndarray, shape (|Y|,)
            The mu of ``cached``.
        cached : ndarray, shape (boxes,)
            A valid bound of F_mu on each box (inf: none yet).

        Returns
        -------
        BoxState
        """
        count = lo.shape[0]
        # (a copy each: the tree updates fields in place, row by row)
        return cls(
            lo=lo,
            hi=hi,
            start=points.copy(),
            anchor=points.copy(),
            anchor_best=points.copy(),
            multiplier=multipliers.copy(),
            multiplier_best=multipliers.copy(),
            theta=np.zeros_like(lo),
            best_point=points.copy(),
            rival=points.copy(),
            cached=cached,
            unbounded=np.ones(count, dtype=bool),
            mu_at=np.broadcast_to(mu, lo.shape).copy(),
            lineage=lineage,
        )


@dataclass(eq=False)
class CutState(_Rows):
    """What range reduction cut off the boxes, one row per cut.

    The boxes and these parts together cover the feasible posteriors.

    Attributes
    ----------
    outer_lo, outer_hi : ndarray, shape (cuts, |Y|)
        The box before the cut.
    bound : ndarray, shape (cuts,)
        A bound of F_mu on what was cut off (the target then), at ``mu``.
    mu : ndarray, shape (cuts, |Y|)
    multiplier : ndarray, shape (cuts,)
        The box's multiplier, for when the cut is undone.
    point : ndarray, shape (cuts, |Y|)
        The box's end point, for when the cut is undone.
    parent : ndarray of int, shape (cuts,)
        The cut that contained this cut's box when it was made (-1: none), so that undoing a
        cut finds what lies inside it in time linear in the tree.
    """

    outer_lo: np.ndarray
    outer_hi: np.ndarray
    bound: np.ndarray
    mu: np.ndarray
    multiplier: np.ndarray
    point: np.ndarray
    parent: np.ndarray

    @classmethod
    def empty(cls, size):
        """No cuts, for posteriors of ``size`` outputs.

        Parameters
        ----------
        size : int

        Returns
        -------
        CutState
        """
        return cls(
            outer_lo=np.empty((0, size)),
            outer_hi=np.empty((0, size)),
            bound=np.empty(0),
            mu=np.empty((0, size)),
            multiplier=np.empty(0),
            point=np.empty((0, size)),
            parent=np.empty(0, dtype=np.intp),
        )
