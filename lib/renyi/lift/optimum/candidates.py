r"""Candidate posteriors for the linear program of :func:`~renyi.lift.optimum.global_optimum`.

Local optimisers (SLSQP) over the whole mechanism, over the channel and over single posteriors, the
lines through :math:`P_Y` that two-output optima lie on, the singular directions of
:math:`W`, and the projection that makes every candidate exactly feasible.  Taught in the
chapter *General leakage matrices* (``book/part2``).
"""

from __future__ import annotations

import math
import time

import numpy as np
from scipy import optimize

from .._numerics import DEGENERATE_NORM, SLSQP_FTOL, TINY, power
from ..model import LeakageModel

__all__: list[str] = []


def pull_inside(geo, q):
    """Project points onto the feasible set along rays from P_Y (exactly feasible end points)."""
    c = geo.B_pinv @ (q - geo.p[:, None])
    norm = np.linalg.norm(c, axis=0)
    keep = norm > DEGENERATE_NORM
    if not np.any(keep):
        return np.zeros((geo.p.size, 0))
    r = c[:, keep] / norm[keep]
    t, ends, _, _ = geo.rays(r)
    scale = np.minimum(norm[keep], t)
    return geo.p[:, None] + geo.B @ (scale * r)


def polish_mechanism(geo, q, w, max_iter, deadline=None):
    """Local optimum of sum_u w_u g(q_u) over the whole mechanism (SLSQP), started from (q, w).

    Returns its posteriors and weights (feasible to SLSQP's tolerance only).  With ``deadline``
    (a :func:`time.perf_counter` reading) the iterations stop there and the last iterate is
    returned: an iteration costs O((|Y| n_u)^3) (one dense least-squares step in all the
    posteriors' coordinates), and at |Y| = 20 ``max_iter`` of them can outlast the search's
    time limit.  Above ``polish.max_variables`` variables it returns (q, w) unchanged.
    """
    p, A, p_x, alpha = geo.p, geo.A, geo.p_x, geo.alpha
    n_y, n_u = q.shape
    if (n_y + 1) * n_u > geo.settings.heuristics.polish.max_variables:
        return q, w
    log_level = math.log(geo.level) if geo.eps > 0 else 0.0
    split = n_y * n_u

    def unpack(x):
        return x[:split].reshape(n_y, n_u), x[split:]

    def objective(x):
        qq, ww = unpack(x)
        d = qq - p[:, None]
        gains = np.sum(d * d / p[:, None], axis=0)
        return -ww @ gains, -np.concatenate([(2 * d / p[:, None] * ww).ravel(), gains])

    rows = np.arange(n_y)[:, None] * n_u + np.arange(n_u)[None, :]

    def equalities(x):
        qq, ww = unpack(x)
        return np.concatenate([qq @ ww - p, qq.sum(axis=0) - 1])

    def equalities_jac(x):
        qq, ww = unpack(x)
        jac = np.zeros((n_y + n_u, split + n_u))
        jac[np.repeat(np.arange(n_y), n_u), rows.ravel()] = np.tile(ww, n_y)
        jac[:n_y, split:] = qq
        jac[n_y + np.tile(np.arange(n_u), n_y), rows.ravel()] = 1.0
        return jac

    def privacy(x):
        z = np.maximum(A @ unpack(x)[0] / p_x[:, None], TINY)
        return log_level - np.log(np.sum(p_x[:, None] * power(z, alpha), axis=0))

    def privacy_jac(x):
        z = np.maximum(A @ unpack(x)[0] / p_x[:, None], TINY)
        grad = -(alpha * A.T @ power(z, alpha - 1)) / np.sum(p_x[:, None] * power(z, alpha), axis=0)
        jac = np.zeros((n_u, split + n_u))
        jac[np.tile(np.arange(n_u), n_y), rows.ravel()] = grad.ravel()
        return jac

    constraints = [{"type": "eq", "fun": equalities, "jac": equalities_jac}]
    if geo.eps > 0:
        constraints.append({"type": "ineq", "fun": privacy, "jac": privacy_jac})
    else:
        constraints.append({"type": "eq", "fun": lambda x: (A @ unpack(x)[0] - p_x[:, None]).ravel()})
    res = optimize.minimize(
        objective,
        np.concatenate([q.ravel(), w]),
        jac=True,
        method="SLSQP",
        bounds=[(0.0, 1.0)] * (split + n_u),
        constraints=constraints,
        options={"maxiter": max_iter, "ftol": SLSQP_FTOL},
        callback=None if deadline is None else stop_at(deadline),
    )
    return unpack(res.x)


def stop_at(deadline):
    """A callback that ends an optimisation once ``deadline`` has passed (SciPy's StopIteration)."""

    def callback(xk):
        if time.perf_counter() > deadline:
            raise StopIteration

    return callback


def price_locally(geo, mu, starts, max_iter, deadline=None):
    """Local maxima of F_mu over the feasible set (SLSQP), from each start (columns).

    With ``deadline`` (a :func:`time.perf_counter` reading) no start begins after it and a
    running one stops there (its last iterate is returned): a start costs O(|Y|^3) per
    iteration.
    """
    p, A, p_x, alpha = geo.p, geo.A, geo.p_x, geo.alpha
    log_level = math.log(geo.level) if geo.eps > 0 else 0.0

    def objective(q):
        d = q - p
        return -(np.sum(d * d / p) - mu @ d), -(2 * d / p - mu)

    def privacy(q):
        return log_level - math.log(max(np.sum(p_x * power(np.maximum(A @ q / p_x, 0.0), alpha)), TINY))

    def privacy_jac(q):
        z = np.maximum(A @ q / p_x, 0.0)
        return -(alpha * A.T @ power(z, alpha - 1)) / np.sum(p_x * power(z, alpha))

    constraints = [{"type": "eq", "fun": lambda q: q.sum() - 1, "jac": lambda q: np.ones_like(q)}]
    if geo.eps > 0:
        constraints.append({"type": "ineq", "fun": privacy, "jac": privacy_jac})
    else:
        constraints.append({"type": "eq", "fun": lambda q: A @ q - p_x, "jac": lambda q: A})
    found = []
    for q0 in starts.T:
        if deadline is not None and time.perf_counter() > deadline:
            break
        found.append(
            optimize.minimize(
                objective,
                q0,
                jac=True,
                method="SLSQP",
                bounds=[(0.0, 1.0)] * p.size,
                constraints=constraints,
                options={"maxiter": max_iter, "ftol": geo.settings.heuristics.pricing.posterior_ftol},
                callback=None if deadline is None else stop_at(deadline),
            ).x
        )
    return np.array(found).T if found else np.zeros((p.size, 0))


def lines_through_centre(geo, q):
    """Both end points of the line through P_Y parallel to q_i - q_j, for every pair of columns of q.

    A two-output optimum lies on such a line; candidates found by a local optimiser are
    only nearly collinear with P_Y, and the LP would then need a third output of tiny weight.
    """
    n = q.shape[1]
    if n < 2:
        return np.zeros((geo.p.size, 0))
    i, j = np.triu_indices(n, 1)
    c = geo.B_pinv @ (q[:, i] - q[:, j])
    c = c[:, np.linalg.norm(c, axis=0) > DEGENERATE_NORM]
    if c.shape[1] == 0:
        return np.zeros((geo.p.size, 0))
    c = c / np.linalg.norm(c, axis=0)
    return geo.rays(np.concatenate([c, -c], axis=1))[1]


def seed_points(model, geo):
    """End points along A^{-1} D_X^{1/2} v_i for the right singular vectors of W, both signs."""
    if not isinstance(model, LeakageModel) or geo.eps == 0:
        return np.zeros((model.p_y.size, 0))
    _, _, vt = np.linalg.svd(model.W)
    c = geo.B_pinv @ np.linalg.solve(model.A, np.sqrt(model.p_x)[:, None] * vt.T)
    c = c[:, np.linalg.norm(c, axis=0) > geo.settings.heuristics.pricing.singular_direction_norm]
    c = np.concatenate([c, -c], axis=1)
    return geo.rays(c / np.linalg.norm(c, axis=0))[1]


def _tilted_channel(geo, q, w, seed):
    """The mechanism (q, w) as a |Y| x |Y| channel (heaviest outputs first), tilted at random.

    The unused rows start at zero plus the tilt, so that an output can split into them.
    """
    p = geo.p
    n = p.size
    rng = np.random.default_rng(seed)
    channel = np.zeros((n, n))
    rows = min(n, w.size)
    order = np.argsort(-w)[:rows]
    channel[:rows] = (q[:, order] * w[order]).T / p[None, :]
    tilt = geo.settings.heuristics.polish.channel_tilt
    channel = (1 - tilt) * channel + tilt * rng.dirichlet(np.ones(n), size=n).T
    return channel / channel.sum(axis=0, keepdims=True)


def _random_channel(geo, seed):
    """A |Y| x |Y| channel near the constant one, tilted at random by a random amount.

    A start that owes nothing to the mechanism found so far: where the LP and the local
    searches from its outputs sit at one local optimum, such starts reach others.
    """
    n = geo.p.size
    rng = np.random.default_rng(seed)
    h = geo.settings.heuristics.polish
    tilt = rng.dirichlet(np.full(n, h.random_concentration), size=n).T
    size = rng.uniform(*h.random_tilt)
    channel = (1 - size) / n + size * tilt / tilt.sum(axis=0)
    return channel / channel.sum(axis=0, keepdims=True)


def polish_channel(geo, q, w, seed, max_iter=None, from_random=False):
    """Local optimum over the channel P_{U|Y} itself (|U| = |Y|), started near the mechanism (q, w).

    The posterior parametrisation of :func:`polish_mechanism` keeps the number of outputs
    and can stall where an output should split; over the channel, with |Y| rows of which
    the unused ones start at zero plus a small random tilt, SLSQP can split them.  With
    ``from_random`` it starts instead near the constant channel, tilted at random (``seed``).
    Returns the posteriors of the result, moved onto the feasible set (columns; empty on
    failure).
    """
    if max_iter is None:
        max_iter = geo.settings.heuristics.polish.channel_iter
    p, A, p_x, alpha = geo.p, geo.A, geo.p_x, geo.alpha
    n = p.size
    channel = _random_channel(geo, seed) if from_random else _tilted_channel(geo, q, w, seed)
    weight = p_x ** (1 - alpha)
    bound = alpha * geo.eps

    def objective(x):
        c = x.reshape(n, n)
        p_u = np.maximum(c @ p, geo.settings.heuristics.polish.output_floor)
        s = (c * c) @ p
        grad = 2 * c * p[None, :] / p_u[:, None] - (s / p_u**2)[:, None] * p[None, :]
        return -(np.sum(s / p_u) - 1), -grad.ravel()

    def privacy(x):
        c = x.reshape(n, n)
        p_u = np.maximum(c @ p, geo.settings.heuristics.polish.output_floor)
        m = np.maximum((c * p[None, :]) @ A.T, 0.0)
        return bound - np.log(np.maximum(power(m, alpha) @ weight, TINY)) + alpha * np.log(p_u)

    def privacy_jac(x):
        c = x.reshape(n, n)
        p_u = np.maximum(c @ p, geo.settings.heuristics.polish.output_floor)
        m = np.maximum((c * p[None, :]) @ A.T, 0.0)
        total = np.maximum(power(m, alpha) @ weight, TINY)
        inner = (power(m, alpha - 1) * weight) @ A  # (n_u, n_y)
        block = -alpha * p[None, :] * (inner / total[:, None] - 1 / p_u[:, None])
        jac = np.zeros((n, n * n))
        jac[np.arange(n)[:, None], np.arange(n)[:, None] * n + np.arange(n)[None, :]] = block
        return jac

    sums = np.zeros((n, n * n))
    sums[np.arange(n)[None, :].repeat(n, axis=0), np.arange(n * n).reshape(n, n)] = 1.0
    res = optimize.minimize(
        objective,
        channel.ravel(),
        jac=True,
        method="SLSQP",
        bounds=[(0.0, 1.0)] * (n * n),
        constraints=[
            {"type": "eq", "fun": lambda x: x.reshape(n, n).sum(axis=0) - 1, "jac": lambda x: sums},
            {"type": "ineq", "fun": privacy, "jac": privacy_jac},
        ],
        options={"maxiter": max_iter, "ftol": SLSQP_FTOL},
    )
    c = np.clip(res.x.reshape(n, n), 0.0, None)
    joint = c * p[None, :]
    p_u = joint.sum(axis=1)
    keep = p_u > geo.settings.heuristics.polish.tiny_output
    if not np.any(keep):
        return np.zeros((n, 0))
    posteriors = (joint[keep] / p_u[keep, None]).T
    return pull_inside(geo, posteriors / posteriors.sum(axis=0, keepdims=True))
