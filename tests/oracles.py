"""Independent oracles for the tests: none of them imports the code it checks.

``pmf_renyi`` and ``quad_renyi`` are the textbook formulas of D_lambda (a sum over a pmf,
and scipy's adaptive quadrature of exact densities split at their kinks).

``best_mechanism_multistart`` searches problem (3) over the *channel* P_{U|Y}
directly (SLSQP from random starts), a parametrisation that ``renyi.lift``
never uses, and recomputes the α-lift and the χ²-information from their
definitions.

``most_misses`` turns a claimed miss rate into the number of misses a Monte Carlo test may
see, through the exact binomial law (Clopper–Pearson), so that a test needs only as many
replicates as its question.
"""

import math

import numpy as np
from scipy import integrate, optimize, stats


def lifts_of_channel(channel, p_y, a, p_x, order):
    """α-lift of each output, eq. (1), straight from the definition."""
    joint = channel * p_y[None, :]  # P(u, y)
    p_u = joint.sum(axis=1)
    p_x_given_u = (a @ joint.T) / p_u[None, :]  # columns P_{X|U=u}
    return np.sum(p_x[:, None] * (p_x_given_u / p_x[:, None]) ** order, axis=0) ** (1 / order)


def chi2_of_channel(channel, p_y):
    joint = channel * p_y[None, :]
    p_u = joint.sum(axis=1)
    keep = p_u > 0
    return float(np.sum(joint[keep] ** 2 / (p_u[keep, None] * p_y[None, :])) - 1)


def best_mechanism_multistart(p_y, a, eps, order, *, starts=30, seed=0, start=None):
    """The best exactly feasible channel found by multistart SLSQP over P_{U|Y} (|U| = |Y|).

    ``start`` (a |Y| x |Y| channel) is tried first, then ``starts`` random ones: at |Y| = 20
    random starts rarely get near the optimum, and a polish of a given channel is the sharper
    test of an upper bound.
    """
    p_y, a = np.asarray(p_y, float), np.asarray(a, float)
    p_x = a @ p_y
    n = p_y.size
    level = math.exp(eps)
    rng = np.random.default_rng(seed)

    def unpack(x):
        return x.reshape(n, n)

    def objective(x):
        return -chi2_of_channel(unpack(x), p_y)

    def privacy(x):
        with np.errstate(divide="ignore", invalid="ignore"):
            lifts = lifts_of_channel(unpack(x) + 1e-300, p_y, a, p_x, order)
        return math.log(level) - np.log(lifts)

    constraints = [{"type": "eq", "fun": lambda x: unpack(x).sum(axis=0) - 1}, {"type": "ineq", "fun": privacy}]

    def random_start():  # near the constant channel (feasible), with a random tilt of random size
        tilt = rng.dirichlet(np.full(n, 0.3), size=n).T
        return (1 - rng.uniform(0.01, 0.5)) / n + rng.uniform(0.01, 0.5) * tilt / tilt.sum(axis=0)

    given = [] if start is None else [np.asarray(start, float)]
    best = 0.0
    for x0 in given + [random_start() for _ in range(starts)]:
        x0 = x0 / x0.sum(axis=0)
        res = optimize.minimize(
            objective,
            x0.ravel(),
            method="SLSQP",
            bounds=[(0, 1)] * n * n,
            constraints=constraints,
            options={"maxiter": 500, "ftol": 1e-14},
        )
        channel = np.clip(unpack(res.x), 0, None)
        channel = channel / channel.sum(axis=0)
        channel = channel[channel.sum(axis=1) > 0]  # (an unused output has no posterior)
        if np.all(lifts_of_channel(channel, p_y, a, p_x, order) <= level * (1 + 1e-10)):
            best = max(best, chi2_of_channel(channel, p_y))
    return best


def pmf_renyi(p, q, lam):
    """D_lam(p || q) of two pmfs by the textbook formula (KL at lam = 1)."""
    p, q = np.asarray(p, float), np.asarray(q, float)
    if lam == 1:
        m = p > 0
        return float(np.sum(p[m] * np.log(p[m] / q[m])))
    return float(np.log(np.sum(p**lam * q ** (1 - lam))) / (lam - 1))


def pmf_renyi_log(p, q, lam):
    """D_lam(p || q) of two pmfs, the textbook sum taken in log space (tails of 1e-27 at order 100)."""
    p, q = np.asarray(p, float), np.asarray(q, float)
    m = p > 0
    terms = lam * np.log(p[m]) + (1 - lam) * np.log(q[m])
    top = terms.max()
    return float((top + math.log(math.fsum(np.exp(terms - top)))) / (lam - 1))


def quad_renyi(logpdf_p, logpdf_q, lam, points=(), span=400.0):
    """D_lam by adaptive quadrature (scipy.integrate.quad) of the exact densities, split at kinks."""
    if lam == 1:

        def f(t):
            return math.exp(logpdf_p(t)) * (logpdf_p(t) - logpdf_q(t))
    else:

        def f(t):
            return math.exp(lam * logpdf_p(t) + (1 - lam) * logpdf_q(t))

    pieces = np.concatenate([[-span], np.sort(points), [span]])  # tails beyond are < 1e-30
    val = sum(
        integrate.quad(f, a, b, epsabs=0 if lam != 1 else 1e-15, epsrel=1e-13, limit=500)[0]
        for a, b in zip(pieces[:-1], pieces[1:])
    )
    return val if lam == 1 else math.log(val) / (lam - 1)


def box_minimum_two_cells(p_box, q_box, lam, points=4001):
    """min over a dense grid of F = p^lam q^(1-lam) + (1-p)^lam (1-q)^(1-lam), p and q in their boxes.

    Two cells, the second pinned by the simplex: the grid's minimum is attained at a feasible
    pair, so it is an upper bound for the true minimum and within the grid's spacing of it.
    Returns log of the minimum.
    """
    p = np.linspace(*p_box, points)[:, None]
    q = np.linspace(*q_box, points)[None, :]
    with np.errstate(divide="ignore", invalid="ignore"):
        log_terms = np.stack([lam * np.log(p) + (1 - lam) * np.log(q), lam * np.log1p(-p) + (1 - lam) * np.log1p(-q)])
    log_terms = np.where(np.isnan(log_terms), -np.inf, log_terms)
    top = log_terms.max(axis=0)
    total = top + np.log(np.exp(log_terms[0] - top) + np.exp(log_terms[1] - top))
    return float(np.nanmin(total))


def box_minimum_multistart(lower_p, upper_p, lower_q, upper_q, lam, *, starts=20, seed=0):
    """log min of sum p^lam q^(1-lam) over boxes (last cell free) by SLSQP from random starts.

    Every accepted point is checked feasible to 1e-12, so the value is an upper bound for the
    true minimum.
    """
    rng = np.random.default_rng(seed)
    k = len(lower_p)
    bounds = list(zip(np.r_[lower_p, lower_q], np.r_[upper_p, upper_q]))

    def objective(x):
        p = np.append(x[:k], 1 - x[:k].sum())
        q = np.append(x[k:], 1 - x[k:].sum())
        p, q = np.clip(p, 0, None), np.clip(q, 1e-300, None)
        with np.errstate(over="ignore", invalid="ignore"):
            value = float(np.sum(np.where(p > 0, p**lam * q ** (1 - lam), 0.0)))
        return min(value, 1e300)  # SLSQP needs finite values; such points are never the minimum

    cons = [{"type": "ineq", "fun": lambda x: 1 - x[:k].sum()}, {"type": "ineq", "fun": lambda x: 1 - x[k:].sum()}]
    best = math.inf
    for _ in range(starts):
        x0 = np.array([rng.uniform(lo, hi) for lo, hi in bounds])
        res = optimize.minimize(
            objective, x0, bounds=bounds, constraints=cons, method="SLSQP", options={"ftol": 1e-15, "maxiter": 2000}
        )
        x = res.x
        feasible = x[:k].sum() <= 1 + 1e-12 and x[k:].sum() <= 1 + 1e-12
        feasible &= all(lo - 1e-12 <= v <= hi + 1e-12 for v, (lo, hi) in zip(x, bounds))
        if feasible and np.isfinite(res.fun):
            best = min(best, objective(np.clip(x, [b[0] for b in bounds], [b[1] for b in bounds])))
    return math.log(best)


def most_misses(replicates, rate=0.05, confidence=0.001):
    """The most misses in ``replicates`` that leave a miss probability of ``rate`` plausible.

    A test fails at ``m`` misses when the one-sided Clopper–Pearson lower bound of the miss
    probability, at level ``1 - confidence``, lies above ``rate``; by the duality of that
    interval with the binomial test this is P(Bin(replicates, rate) >= m) < confidence.  So a
    correct bound (miss probability at most ``rate``) fails such a test with probability
    below ``confidence``.

    >>> most_misses(200)   # P(Bin(200, 0.05) >= 22) = 4.8e-4 < 1e-3 <= P(... >= 21)
    21
    """
    m = 0
    while stats.binom.sf(m, replicates, rate) >= confidence:  # sf(m) = P(X >= m + 1)
        m += 1
    return m
