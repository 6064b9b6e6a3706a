r"""An estimate of the log-likelihood ratio of two output laws, to project vector outputs on.

The likelihood ratio :math:`\ell(x)=\log p(x)/q(x)` is the one statistic that loses no
Rényi divergence: :math:`D_\lambda(\ell_\#P\|\ell_\#Q)=D_\lambda(P\|Q)` for every order (it is
sufficient for the pair).  A mean-difference direction keeps all of it only for a shift under
isotropic Gaussian noise; it keeps little when the noise is correlated or heavy-tailed, and
nothing when the laws differ in spread alone.  :func:`fit_log_ratio` estimates :math:`\ell` on
held-out outputs, up to a constant, by an :math:`L^2`-penalised logistic regression of the
side (P or Q) on a few features per coordinate of the robustly standardised outputs
:math:`z`:

* :math:`z_j`: the whole log ratio of a shift under Gaussian noise, correlated or not;
* :math:`z_j^2`: a difference in spread (Gaussian noise of two scales);
* :math:`|z_j-m^P_j|` and :math:`|z_j-m^Q_j|`, with :math:`m` each side's median: the whole
  log ratio of a shift under independent Laplace noise,
  :math:`(|x_j-\mu^Q_j|-|x_j-\mu^P_j|)/b`;
* for :math:`d\le` :data:`MAX_INTERACTION_DIMENSION`, the products :math:`z_iz_j` (:math:`i<j`):
  with :math:`z_j` and :math:`z_j^2`, every quadratic form, so the whole log ratio of any two
  Gaussian laws (different means and covariances).

Logistic regression with balanced classes estimates :math:`\ell` itself (its log-odds are
:math:`\ell` plus a constant), so the family holds the exact ratio for the mechanisms above
and a projection of it for others.  Any map learned on held-out outputs keeps the bound
valid (the data-processing inequality); how much it keeps is measured on held-out data by
:mod:`~renyi.audit.reduction`.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.optimize import minimize
from scipy.special import expit, log1p

__all__ = ["LogRatio", "fit_log_ratio", "feature_count", "MAX_INTERACTION_DIMENSION"]

#: Up to this dimension the features include every product of two coordinates.
MAX_INTERACTION_DIMENSION = 8


def feature_count(d: int) -> int:
    """Features of a ``d``-dimensional output: four per coordinate, and the pairwise products.

    Parameters
    ----------
    d : int

    Returns
    -------
    int
    """
    return 4 * d + (d * (d - 1) // 2 if d <= MAX_INTERACTION_DIMENSION else 0)


@dataclass(frozen=True)
class LogRatio:
    r"""A fitted map :math:`x\mapsto\hat\ell(x)`, the estimated log-likelihood ratio up to a constant.

    Picklable (plain arrays), so it can be sent to workers as a projection map.

    Attributes
    ----------
    centre, spread : ndarray, shape (d,)
        The pooled median and interquartile range per coordinate: :math:`z=(x-c)/s`.
    medians : ndarray, shape (2, d)
        Each side's median of :math:`z` (the Laplace features' centres).
    shift, scale : ndarray, shape (:func:`feature_count` (d),)
        The features' means and standard deviations on the fitting rows.
    coefficients : ndarray, shape (:func:`feature_count` (d),)
        The logistic regression's weights on the standardised features.
    """

    centre: np.ndarray
    spread: np.ndarray
    medians: np.ndarray
    shift: np.ndarray
    scale: np.ndarray
    coefficients: np.ndarray

    def features(self, rows: np.ndarray) -> np.ndarray:
        """The standardised features of ``rows`` (shape (m, d)), shape (m, :func:`feature_count` (d))."""
        z = (np.asarray(rows, dtype=float) - self.centre) / self.spread
        parts = [z, z * z, np.abs(z - self.medians[0]), np.abs(z - self.medians[1])]
        d = z.shape[1]
        if d <= MAX_INTERACTION_DIMENSION:
            i, j = np.triu_indices(d, 1)
            parts.append(z[:, i] * z[:, j])
        return (np.hstack(parts) - self.shift) / self.scale

    def __call__(self, rows: np.ndarray) -> np.ndarray:
        r""":math:`\hat\ell` at each row of ``rows`` (shape (m, d)), shape (m,)."""
        return self.features(rows) @ self.coefficients


def _robust_standardisation(rows: np.ndarray):
    """Pooled median and interquartile range per coordinate (1 where the range is 0)."""
    centre = np.median(rows, axis=0)
    q75, q25 = np.percentile(rows, [75, 25], axis=0)
    spread = q75 - q25
    fallback = rows.std(axis=0)
    spread = np.where(spread > 0, spread, np.where(fallback > 0, fallback, 1.0))
    return centre, spread


def _logistic(features: np.ndarray, labels: np.ndarray, weights: np.ndarray, penalty: float):
    """Weights of the L2-penalised, weighted logistic regression (intercept unpenalised)."""
    k = features.shape[1]

    def loss(theta):
        beta, intercept = theta[:k], theta[k]
        eta = features @ beta + intercept
        margin = np.where(labels, eta, -eta)
        # log(1 + exp(-margin)) without overflow
        value = weights @ (np.maximum(-margin, 0) + log1p(np.exp(-np.abs(margin))))
        residual = weights * (expit(eta) - labels)
        grad = np.append(features.T @ residual + penalty * beta, residual.sum())
        return value + 0.5 * penalty * float(beta @ beta), grad

    result = minimize(loss, np.zeros(k + 1), jac=True, method="L-BFGS-B", options={"maxiter": 500})
    return result.x[:k]


def fit_log_ratio(held_p, held_q, *, penalty: float | None = None) -> LogRatio:
    r"""Estimate the log-likelihood ratio of two samples of vector outputs (see the module).

    Parameters
    ----------
    held_p, held_q : array_like, shape (m, d)
        Outputs that will *not* be bounded (held out), at least 10 rows a side.
    penalty : float, optional
        The ridge penalty on the standardised features' weights, for a loss averaged over
        the rows; default :math:`k/m` (:math:`k` features, :func:`feature_count`, and
        :math:`m` rows on the smaller side): it shrinks the weights while they are many for
        the rows, and fades as rows accrue.

    Returns
    -------
    LogRatio
        The fitted map; its values are :math:`\hat\ell` up to a constant.

    Notes
    -----
    The two sides are weighted to count equally, so the fitted log-odds estimate
    :math:`\log p/q` whatever the two sample sizes.  The fit is deterministic (L-BFGS from
    zero).  Its cost grows as :math:`O(m d)` per iteration.

    Examples
    --------
    A difference in spread, which no direction sees: the fitted ratio is larger on P's
    wider outputs.

    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> p, q = 1.5 * rng.normal(size=(4000, 3)), rng.normal(size=(4000, 3))
    >>> ratio = fit_log_ratio(p, q)
    >>> bool(ratio(np.array([[3.0, 3.0, 3.0]]))[0] > ratio(np.zeros((1, 3)))[0])
    True
    """
    p, q = (np.asarray(x, dtype=float) for x in (held_p, held_q))
    if p.ndim != 2 or q.ndim != 2 or p.shape[1] != q.shape[1]:
        raise ValueError(f"held_p and held_q must be (m, d) arrays of one d, got shapes {p.shape} and {q.shape}")
    if min(p.shape[0], q.shape[0]) < 10:
        raise ValueError(f"a log ratio needs at least 10 held-out rows a side, got {p.shape[0]} and {q.shape[0]}")
    if not (np.all(np.isfinite(p)) and np.all(np.isfinite(q))):
        raise ValueError("held_p and held_q must be finite")
    rows = np.vstack([p, q])
    centre, spread = _robust_standardisation(rows)
    medians = np.stack([np.median((x - centre) / spread, axis=0) for x in (p, q)])
    empty = np.ones(feature_count(p.shape[1]))
    draft = LogRatio(centre, spread, medians, np.zeros_like(empty), empty, empty)
    raw = draft.features(rows)
    shift, scale = raw.mean(axis=0), raw.std(axis=0)
    scale = np.where(scale > 0, scale, 1.0)
    features = (raw - shift) / scale
    labels = np.r_[np.ones(p.shape[0], bool), np.zeros(q.shape[0], bool)]
    weights = np.r_[np.full(p.shape[0], 0.5 / p.shape[0]), np.full(q.shape[0], 0.5 / q.shape[0])]
    if penalty is None:
        penalty = feature_count(p.shape[1]) / min(p.shape[0], q.shape[0])
    elif not (np.isfinite(penalty) and penalty >= 0):
        raise ValueError(f"penalty must be a finite number >= 0, got {penalty!r}")
    coefficients = _logistic(features, labels, weights, float(penalty))
    return LogRatio(centre, spread, medians, shift, scale, coefficients)
