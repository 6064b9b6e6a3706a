"""The linear program over candidate posteriors (column generation) and what feeds it.

The lower bound of :func:`~renyi.lift.optimum.global_optimum` is the value of
``max sum_j w_j g(q_j)`` over weights with ``sum_j w_j q_j = P_Y`` (HiGHS), whose columns
are candidate posteriors; its dual ``mu`` is the multiplier of the weak-duality bound.
"""

from __future__ import annotations

import time

import numpy as np
from scipy import optimize

from .._numerics import NEGLIGIBLE_WEIGHT
from .candidates import lines_through_centre, seed_points

__all__: list[str] = []


def gains(model, q):
    return np.sum((q - model.p_y[:, None]) ** 2 / model.p_y[:, None], axis=0)


class OutOfTime(RuntimeError):
    """A linear program stopped at its deadline, unsolved."""


class LinearProgramFailed(RuntimeError):
    """HiGHS solved a linear program by none of its methods."""


def solve_lp(model, q, gains, settings, deadline=None):
    """Max gains^T w s.t. q w = P_Y, w >= 0; returns value, weights and the dual mu (mu^T q_j >= g_j).

    With ``deadline`` (a :func:`time.perf_counter` reading) HiGHS stops there and
    :class:`OutOfTime` is raised: one such program can take minutes at |Y| = 50.
    """
    options = {
        "primal_feasibility_tolerance": settings.heuristics.pricing.lp_tolerance,
        "dual_feasibility_tolerance": settings.heuristics.pricing.lp_tolerance,
    }
    # Tight tolerances occasionally stall the dual simplex (status 4); the interior-point
    # method (with crossover) is tried at the same tolerances before HiGHS's defaults, whose
    # weights (1e-7) once left P_Y off by 2e-8 and the mechanism's lifts 4e-9 above e^eps.
    for method, opts in (("highs-ds", options), ("highs-ipm", options), ("highs-ds", {})):
        if deadline is not None:
            left = deadline - time.perf_counter()
            if left <= 0:
                raise OutOfTime("the time limit came before the linear program's solution")
            opts = {**opts, "time_limit": left}
        res = optimize.linprog(-gains, A_eq=q, b_eq=model.p_y, bounds=(0, None), method=method, options=opts)
        if res.status == 0:
            break
    else:
        raise LinearProgramFailed(f"linear program failed: {res.message}")
    weights = exact_weights(model, q, res.x, settings)
    return float(gains @ weights), weights, -res.eqlin.marginals


def exact_weights(model, q, weights, settings):
    """Weights on the support of ``weights`` that reproduce P_Y to round-off, where they exist.

    On the basis support the barycentre equations determine the weights (least squares);
    where the support is off (a tolerance-limited solution) non-negative least squares on
    it is tried too.  Else (or if it does not converge) ``weights`` is returned.
    """
    support = np.flatnonzero(weights > settings.heuristics.pricing.exact_solve_weight)
    exact, *_ = np.linalg.lstsq(q[:, support], model.p_y, rcond=None)
    if not (
        np.all(exact >= 0)
        and np.allclose(q[:, support] @ exact, model.p_y, atol=settings.margins.marginal_atol, rtol=0)
    ):
        support = np.flatnonzero(weights > 0)
        try:
            exact, _ = optimize.nnls(q[:, support], model.p_y)
        except RuntimeError:  # its iteration limit, on near-parallel columns: keep the LP's weights
            return weights
        if not np.allclose(q[:, support] @ exact, model.p_y, atol=settings.margins.marginal_atol, rtol=0):
            return weights
    out = np.zeros_like(weights)
    out[support] = exact
    return out


def solve_priced(model, tree, columns):
    """The LP over ``columns``, with every ray end point that prices above its value added.

    Without this the dual can price points the LP does not see far above the value
    (column generation drops columns), and the bound ``U(mu)`` is loose.
    """
    settings = tree.settings
    for _ in range(settings.heuristics.pricing.passes):
        value, weights, mu = solve_lp(model, columns, gains(model, columns), settings)
        priced = tree.ray_values(mu)
        # HiGHS's dual feasibility tolerance is absolute: reduced costs below it are noise.
        violated = np.flatnonzero(
            priced > value * (1 + settings.heuristics.pricing.rtol) + settings.heuristics.pricing.lp_tolerance
        )
        if violated.size == 0:
            return columns, value, weights, mu
        worst = violated[np.argsort(-priced[violated])][:500]
        columns = np.concatenate([columns, tree.ray_points(worst)], axis=1)
    # Out of passes: solve once more on the columns just added.  Any mu gives a valid bound
    # U(mu); the passes only make it tight.
    value, weights, mu = solve_lp(model, columns, gains(model, columns), settings)
    return columns, value, weights, mu


def merge_outputs(q, w, p_y, budget):
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


def prune_outputs(model, geo, q, w, *, tolerance, out_of_time=None):
    """Drop outputs, lightest first, while the LP on the rest loses at most ``tolerance`` (relative).

    Degenerate LPs spread the weight over several nearly equivalent posteriors, or keep
    outputs with weights like 1e-6 whose presence depends on round-off; the support of
    the solution is what Proposition 1 counts.  Up to one linear program per pair of outputs,
    so it stops at ``out_of_time()`` (the mechanism is feasible after every step).
    """
    settings = geo.settings
    value = float(gains(model, q) @ w)
    for _ in range(w.size):
        for drop in np.argsort(w):
            if out_of_time is not None and out_of_time():
                return q, w
            rest = q[:, np.delete(np.arange(w.size), drop)]
            # Two outputs must lie on one line through P_Y; only those points are tried then.
            lines = lines_through_centre(geo, rest)
            rest = lines if rest.shape[1] == 2 else np.concatenate([rest, lines], axis=1)
            try:
                new_value, new_w, _ = solve_lp(model, rest, gains(model, rest), settings)
            except RuntimeError:
                continue
            exact = np.allclose(rest @ new_w, model.p_y, atol=settings.margins.merge_marginal_atol, rtol=0)
            if exact and new_value >= value * (1 - tolerance) and np.count_nonzero(new_w) < w.size:
                q, w = rest[:, new_w > 0], new_w[new_w > 0]
                break
        else:
            break
    return q, w


def priced(model, columns, mu):
    """The reduced gains g(q) - mu^T (q - P_Y) of candidate columns."""
    return gains(model, columns) - mu @ (columns - model.p_y[:, None])


def enter(model, lp, new, settings, deadline=None):
    """The LP ``(columns, value, weights, mu)`` re-solved with ``new`` if a column of it would enter.

    Unchanged when the solve meets ``deadline`` first: the old LP is still a mechanism, and
    its mu still gives a valid bound.
    """
    columns, value, weights, mu = lp
    if not prices_above(model, new, mu, value, settings):
        return lp
    columns = np.concatenate([columns, new], axis=1)
    try:
        return (columns, *solve_lp(model, columns, gains(model, columns), settings, deadline))
    except OutOfTime:
        return lp


def prices_above(model, columns, mu, value, settings):
    """Whether a candidate column would enter the LP (its reduced gain beats the LP's value)."""
    return bool(np.any(priced(model, columns, mu) > value * (1 + settings.heuristics.pricing.rtol)))


def initial_columns(model, geo, tree, seed):
    """P_Y, the cone tree's ray ends, 200 k random ray ends (``pricing.rays`` at most), the seed points."""
    rng = np.random.default_rng(seed)
    cover = rng.standard_normal((geo.k, min(200 * geo.k, geo.settings.heuristics.pricing.rays)))
    _, cover_points, _, _ = geo.rays(cover / np.linalg.norm(cover, axis=0))
    return np.concatenate([model.p_y[:, None], tree.points, cover_points, seed_points(model, geo)], axis=1)


def next_columns(model, columns, weights, new, mu, value, settings):
    """The next LP's candidates: the support, new ray ends priced near the best, the best 200 old ones."""
    new_prices = priced(model, new, mu)
    support = columns[:, weights > NEGLIGIBLE_WEIGHT]
    reduced = priced(model, columns, mu)
    return np.concatenate(
        [
            model.p_y[:, None],
            support,
            new[:, new_prices > value * (1 - settings.heuristics.pricing.keep_near_best)],
            columns[:, np.argsort(-reduced)[:200]],
        ],
        axis=1,
    )
