r"""Leakage models of Part II: :math:`P_X`, :math:`A=P_{X|Y}`, :math:`P_Y`, and Lemma 2.

Taught in the chapters *α-lift and χ²-information* and *The closed-form
mechanism* (``book/part2``).  Every channel in :mod:`renyi.lift` is
column-stochastic: ``p_x_given_y[x, y]`` is :math:`P_{X|Y}(x|y)`.
"""

from __future__ import annotations

import numpy as np

from .._validation import as_pmf, as_rdp_order, as_real_array, as_real_scalar
from ._numerics import ZERO_COMPONENT, power

__all__ = ["GeneralLeakageModel", "LeakageModel"]

#: Columns of P_{X|Y} and the priors must sum to 1 within this.
_STOCHASTIC_TOL = 1e-12
#: If every dominant singular direction is this close to sqrt(P_X), none is informative.
NO_INFORMATIVE_DIRECTION = 1e-12
#: Singular values within this (relative) of sigma_max span the dominant space (ties).
SINGULAR_TIE = 1e-10
#: A square leakage matrix counts as invertible while its condition number stays below this:
#: then A^{-1} P_X carries at most about 1e12 ulp of error (1e-4 relative), and Theorem 1,
#: the D_2 relaxation and the box branch and bound apply.  Above it a model is singular.
MAX_CONDITION = 1e12


def _check_leakage_matrix(p_x_given_y) -> np.ndarray:
    a = as_real_array(p_x_given_y, "p_x_given_y", ndim=2)
    if np.any(a < 0):
        raise ValueError("p_x_given_y must be non-negative (it is the channel P_{X|Y})")
    sums = a.sum(axis=0)
    if np.any(np.abs(sums - 1) > _STOCHASTIC_TOL):
        worst = float(sums[np.argmax(np.abs(sums - 1))])
        raise ValueError(
            f"p_x_given_y must be column-stochastic (columns are P_{{X|Y=y}}); found a column summing to {worst:.15g}"
        )
    return a


def check_eps(eps) -> float:
    eps = as_real_scalar(eps, "eps")
    if eps < 0:
        raise ValueError(f"eps must be >= 0, got {eps!r}")
    return eps


def check_order(order) -> float:
    return as_rdp_order(order)


class GeneralLeakageModel:
    r"""A leakage model with any column-stochastic :math:`A` (Section III-D).

    The positional form takes :math:`P_Y` first; :meth:`from_leakage` names the prior
    (``GeneralLeakageModel.from_leakage(A, p_y=...)``).

    Parameters
    ----------
    p_y : array_like
        :math:`P_Y`, strictly positive.
    p_x_given_y : array_like, shape (n_x, n_y)
        Column-stochastic :math:`A`.  :math:`P_X=AP_Y` must be strictly positive.
    """

    def __init__(self, p_y, p_x_given_y):
        a = _check_leakage_matrix(p_x_given_y)
        p_y = as_pmf(p_y, "p_y", tol=_STOCHASTIC_TOL)
        if p_y.size != a.shape[1]:
            raise ValueError(f"p_y has {p_y.size} entries but p_x_given_y has {a.shape[1]} columns")
        if np.any(p_y <= 0):
            raise ValueError("p_y must be strictly positive")
        p_x = a @ p_y
        if np.any(p_x <= 0):
            raise ValueError("P_X = A P_Y must be strictly positive")
        self.p_y, self.p_x_given_y, self.p_x = p_y, a, p_x

    @classmethod
    def from_leakage(cls, p_x_given_y, *, p_y=None, p_x=None):
        r"""The model of a leakage matrix and one named prior: the unambiguous constructor.

        The positional constructors differ in what their first argument is
        (:class:`GeneralLeakageModel` takes :math:`P_Y`, :class:`LeakageModel` takes
        :math:`P_X`, as the paper's two settings do); this one names it.

        Parameters
        ----------
        p_x_given_y : array_like, shape (n_x, n_y)
            Column-stochastic :math:`A=P_{X|Y}`.
        p_y, p_x : array_like, keyword-only
            Exactly one of the priors.  :class:`GeneralLeakageModel` needs ``p_y``
            (:math:`P_X` does not determine :math:`P_Y` for a general :math:`A`);
            :class:`LeakageModel` takes either, with :math:`P_X=AP_Y` or
            :math:`P_Y=A^{-1}P_X`.

        Returns
        -------
        GeneralLeakageModel or LeakageModel
            An instance of the class it is called on.

        Examples
        --------
        >>> from renyi.lift import LeakageModel
        >>> a = [[0.85, 0.10, 0.15], [0.10, 0.80, 0.15], [0.05, 0.10, 0.70]]
        >>> m = LeakageModel.from_leakage(a, p_x=[0.2, 0.3, 0.5])
        >>> same = LeakageModel.from_leakage(a, p_y=m.p_y)
        >>> bool(abs(same.sigma_max - m.sigma_max) < 1e-12)
        True
        """
        if (p_y is None) == (p_x is None):
            raise ValueError("give exactly one of p_y and p_x")
        if not issubclass(cls, LeakageModel):
            if p_y is None:
                raise ValueError(
                    f"{cls.__name__} needs p_y: P_X does not determine P_Y for a general A "
                    "(for an invertible A use LeakageModel.from_leakage(A, p_x=...))"
                )
            return cls(p_y, p_x_given_y)
        if p_x is None:
            a = _check_leakage_matrix(p_x_given_y)
            p_x = a @ as_pmf(p_y, "p_y", tol=_STOCHASTIC_TOL)
        return cls(p_x, p_x_given_y)

    @property
    def A(self) -> np.ndarray:
        """The leakage matrix :math:`A=P_{X|Y}` (``p_x_given_y``)."""
        return self.p_x_given_y

    @property
    def p_min(self) -> float:
        r"""The smallest prior probability :math:`\min_x P_X(x)`."""
        return float(self.p_x.min())

    def phi(self, q, order) -> np.ndarray:
        r""":math:`\Phi_\alpha(q)=\sum_xP_X(x)((Aq)(x)/P_X(x))^\alpha=(\mathcal L^\alpha)^\alpha`, columns of ``q``."""
        q = np.asarray(q, dtype=float)
        px = self.p_x[:, None] if q.ndim == 2 else self.p_x
        return np.sum(px * power(np.maximum((self.A @ q) / px, 0.0), order), axis=0)

    def __repr__(self) -> str:
        return f"{type(self).__name__}(|X|={self.p_x.size}, |Y|={self.p_y.size})"


class LeakageModel(GeneralLeakageModel):
    r"""The invertible leakage model of Section II and the quantities of Lemma 2.

    The positional form takes :math:`P_X` first (unlike :class:`GeneralLeakageModel`,
    which takes :math:`P_Y`); ``LeakageModel.from_leakage(A, p_x=...)`` (or ``p_y=...``)
    names the prior and reads the same in both classes.

    Parameters
    ----------
    p_x : array_like
        :math:`P_X`, strictly positive.
    p_x_given_y : array_like, shape (K, K)
        :math:`A=P_{X|Y}`, column-stochastic (within 1e-12) and invertible,
        such that :math:`P_Y=A^{-1}P_X` is a strictly positive distribution.

    Attributes
    ----------
    p_y, W, singular_values, sigma_max, v_star, kappa_star, d_star, r_y_star, r_val
        As in Sections II–III: :math:`W=D_Y^{-1/2}A^{-1}D_X^{1/2}`; :math:`v^\star`
        a unit dominant right singular vector of :math:`W` chosen orthogonal to
        :math:`\sqrt{P_X}` (Lemma 2; among tied singular values the one with
        the largest component orthogonal to :math:`\sqrt{P_X}`), with its sign
        fixed so that its largest entry in absolute value is positive;
        :math:`\kappa_\star=\|D_X^{-1/2}v^\star\|_\infty`;
        :math:`d^\star=A^{-1}D_X^{1/2}v^\star`; :math:`r^\star_Y=\min_{d^\star(y)\ne0}P_Y(y)/|d^\star(y)|`;
        :math:`r^\star_{\rm val}=\min\{\kappa_\star^{-1},r^\star_Y\}`.
    """

    def __init__(self, p_x, p_x_given_y):
        a = _check_leakage_matrix(p_x_given_y)
        p_x = as_pmf(p_x, "p_x", tol=_STOCHASTIC_TOL)
        if np.any(p_x <= 0):
            raise ValueError("p_x must be strictly positive")
        if a.shape[0] != a.shape[1]:
            raise ValueError(
                f"p_x_given_y is {a.shape[0]}x{a.shape[1]}, not square; P_Y is not determined by P_X. "
                "Use GeneralLeakageModel(p_y, p_x_given_y) with global_optimum (Theorem 2)"
            )
        if a.shape[0] != p_x.size:
            raise ValueError(f"p_x has {p_x.size} entries but p_x_given_y is {a.shape[0]}x{a.shape[1]}")
        if np.linalg.cond(a) > MAX_CONDITION:
            raise ValueError(
                "p_x_given_y is singular (or nearly so); P_Y = A^{-1} P_X is undefined. "
                "Use GeneralLeakageModel(p_y, p_x_given_y) with global_optimum and "
                "null_space_mechanism (Proposition 4)"
            )
        p_y = np.linalg.solve(a, p_x)
        if np.any(p_y <= 0):
            raise ValueError(
                f"P_Y = A^{{-1}} P_X = {np.array2string(p_y, precision=4)} is not a strictly positive "
                "distribution; this P_X is incompatible with this P_{X|Y}"
            )
        self.p_x, self.p_x_given_y, self.p_y = p_x, a, p_y / p_y.sum()
        self._lemma2()

    @classmethod
    def of(cls, model):
        """``model`` as a :class:`LeakageModel` if its matrix is square and invertible, else None.

        The fast paths of :func:`~renyi.lift.optimum.global_optimum` (Theorem 1's bound, the
        :math:`D_2` relaxation, the box branch and bound) depend on the matrix, not on the
        class that holds it: a :class:`GeneralLeakageModel` with a square :math:`A` of
        condition number below ``MAX_CONDITION`` gets them too.  Its :math:`P_Y` is kept
        as given (not recomputed as :math:`A^{-1}P_X`).

        Parameters
        ----------
        model : GeneralLeakageModel

        Returns
        -------
        LeakageModel or None
        """
        if isinstance(model, LeakageModel):
            return model
        a = model.A
        if a.shape[0] != a.shape[1] or np.linalg.cond(a) > MAX_CONDITION:
            return None
        view = cls.__new__(cls)
        view.p_x, view.p_x_given_y, view.p_y = model.p_x, a, model.p_y
        try:
            view._lemma2()
        except ValueError:  # sigma_max only along sqrt(P_X): no informative direction
            return None
        return view

    def _lemma2(self):
        a_inv = np.linalg.inv(self.A)
        W = np.diag(self.p_y**-0.5) @ a_inv @ np.diag(np.sqrt(self.p_x))
        _, s, vt = np.linalg.svd(W)
        sqrt_px = np.sqrt(self.p_x)
        # Dominant right singular space (ties included), projected orthogonal to sqrt(P_X).
        top = vt[np.isclose(s, s[0], rtol=SINGULAR_TIE, atol=0)]
        proj = top - np.outer(top @ sqrt_px, sqrt_px)
        norms = np.linalg.norm(proj, axis=1)
        if norms.max() < NO_INFORMATIVE_DIRECTION:
            raise ValueError("sigma_max(W) is attained only along sqrt(P_X); no informative direction exists")
        v = proj[np.argmax(norms)]
        v /= np.linalg.norm(v)
        v *= np.sign(v[np.argmax(np.abs(v))])
        d = a_inv @ (sqrt_px * v)
        kappa = float(np.max(np.abs(v / sqrt_px)))
        nz = np.abs(d) > ZERO_COMPONENT
        r_y = float(np.min(self.p_y[nz] / np.abs(d[nz])))
        self.W, self.singular_values, self.sigma_max = W, s, float(s[0])
        self.v_star, self.kappa_star, self.d_star = v, kappa, d
        self.r_y_star, self.r_val = r_y, min(1.0 / kappa, r_y)
