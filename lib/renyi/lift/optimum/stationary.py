r"""The multiplier :math:`\mu` at which the box tree bounds :math:`U(\mu)`.

Any :math:`\mu` gives a valid upper bound (weak duality); only one that makes
:math:`F_\mu` stationary at every output of a locally optimal mechanism can make the bound
meet the mechanism's value.  ``stationary_multiplier`` fits it to the KKT conditions,
``polished_multiplier`` polishes the mechanism first, and ``nearest_multiplier``
moves a multiplier least so that given points price at most at the value.
"""

from __future__ import annotations

import math

import numpy as np
from scipy import optimize

from .._numerics import NEGLIGIBLE_WEIGHT, TINY
from .candidates import polish_mechanism, pull_inside
from .lp import gains, merge_outputs

__all__: list[str] = []


def stationary_multiplier(model, geo, columns, weights, value):
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
        free = np.flatnonzero(q[:, u] > geo.settings.heuristics.tree_multiplier.stationary_zero)
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


def polished_multiplier(model, geo, columns, weights, mu, deadline=None):
    """The box tree's mu and new columns: the LP's mechanism polished, and its stationary mu.

    The LP's outputs are ray end points near, not at, a local optimum (coordinates of 1e-6
    where the optimum has zeros), which spoils the KKT fit; a polish of the whole mechanism
    fixes that.  Where the fit is still poor the LP's dual is returned.  The polish stops at
    ``deadline`` (see :func:`polish_mechanism`).  Returns the mu, the polished posteriors
    (moved onto Q) and whether the fit held.

    The polish starts from the mechanism with nearby outputs merged (``tree_multiplier.polish_merge``):
    beyond eps_max a degenerate LP spreads its weight over clusters of near-equivalent
    posteriors, and from twenty of them SLSQP left the feasible set and ended at its
    iteration limit, while from their merged handful it converged to a better mechanism
    (``make bench-scip``'s |Y| = 20 model, alpha = 5, eps = 2 eps_max).
    """
    h = geo.settings.heuristics
    support = weights > NEGLIGIBLE_WEIGHT
    q, w = columns[:, support], weights[support]
    q, w = merge_outputs(q, w, model.p_y, h.tree_multiplier.polish_merge * float(gains(model, q) @ w))
    q, w = polish_mechanism(geo, q, w, h.tree_multiplier.polish_iter, deadline)
    w = np.clip(w, 0.0, None)
    stationary, residual = stationary_multiplier(model, geo, q, w, float(gains(model, q) @ w))
    fits = residual <= h.tree_multiplier.stationary_rtol
    return (stationary if fits else mu), pull_inside(geo, q[:, w > NEGLIGIBLE_WEIGHT]), fits


def nearest_multiplier(model, mu, points, value, slack, controls):
    """The mu nearest to ``mu`` that prices ``points`` at most at ``value (1 + slack)``.

    Every column of ``points`` must price at most at that level: a projection of ``mu`` onto
    a polyhedron (SLSQP, to ``controls.nearest_ftol``, a point accepted within
    ``controls.nearest_accept`` of the set, ``controls`` a ``TreeMultiplierHeuristics``);
    None if none is found.

    The LP's dual with those points among its columns is feasible, so the set is not empty;
    any mu gives a valid bound, so this only decides how tight the tree's can become.
    """
    d = points - model.p_y[:, None]
    ceiling = value * (1 + slack) - gains(model, points)
    res = optimize.minimize(
        lambda m: 0.5 * np.sum((m - mu) ** 2),
        mu,
        jac=lambda m: m - mu,
        constraints=[{"type": "ineq", "fun": lambda m: ceiling + m @ d, "jac": lambda m: d.T}],
        method="SLSQP",
        options={"maxiter": 200, "ftol": controls.nearest_ftol},
    )
    # SLSQP may end on "positive directional derivative" within round-off of the set; such
    # a point serves as well (any mu is valid, the slack only aims the move), and refusing it
    # can leave the tree at a poor fitted mu for a whole run.
    reach = -controls.nearest_accept * max(abs(value), TINY)
    ok = np.all(np.isfinite(res.x)) and np.all(ceiling + res.x @ d >= reach)
    return res.x if ok else None
