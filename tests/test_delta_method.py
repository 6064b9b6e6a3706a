"""The floored plug-in, the variance (18) and the second-order bias (renyi.audit.delta_method)."""

import math

import numpy as np
import pytest
from renyi.audit import floored_estimate, rdp_lower_bound, second_order_bias
from renyi.mechanisms import ADJACENT_PAIR, MECHANISMS

X, X_PRIME = ADJACENT_PAIR


def _rfe(a, b):
    from renyi.audit.frequencies import relative_frequencies

    est = relative_frequencies(a, b)
    return est.p, est.q


@pytest.mark.parametrize("name", ["gaussian", "laplace"])
@pytest.mark.parametrize("lam", [2, 5])
def test_floored_divergence_is_below_the_truth_and_converges(name, lam):
    """Exact curves: D(p, q_tau) <= D(p, q), increasing to it as tau -> 0."""
    mech = MECHANISMS[name]
    t, dx = np.linspace(-150, 150, 300_001, retstep=True)
    p, q = np.exp(mech.logpdf(X)(t)), np.exp(mech.logpdf(X_PRIME)(t))
    values = [floored_estimate(p, q, lam, tau, 1 / tau, dx)[0] for tau in (1e-2, 1e-3, 1e-4, 1e-6, 1e-9)]
    truth = mech.target(lam)
    assert all(v <= truth + 1e-9 for v in values)
    assert all(a <= b + 1e-12 for a, b in zip(values[:-1], values[1:]))
    assert values[-1] == pytest.approx(truth, rel=1e-4)


def test_variance_is_eq_18_as_printed():
    """Linear-space transcription of eq. (18) against the log-space implementation."""
    p = np.array([0.1, 0.4, 0.3, 0.2])
    q = np.array([0.25, 0.25, 0.45, 0.05])
    lam, tau, beta = 3.0, 0.08, 1 / 0.08
    qt = np.log(np.exp(beta * q) + np.exp(beta * tau)) / beta
    pi = np.exp(beta * q) / (np.exp(beta * q) + np.exp(beta * tau))
    F = np.sum(p**lam * qt ** (1 - lam))
    s1 = lam**2 * (np.sum(p ** (2 * lam - 1) * qt ** (2 - 2 * lam)) - F**2)
    s2 = (1 - lam) ** 2 * (
        np.sum(pi**2 * qt ** (-2 * lam) * q * p ** (2 * lam)) - np.sum(pi * qt ** (-lam) * q * p**lam) ** 2
    )
    sigma2 = (s1 + s2) / ((lam - 1) * F) ** 2
    est, var_p, var_q = floored_estimate(p, q, lam, tau, beta)
    assert est == pytest.approx(math.log(F) / (lam - 1), rel=1e-13)
    assert var_p + var_q == pytest.approx(sigma2, rel=1e-10)
    assert var_p == pytest.approx(s1 / ((lam - 1) * F) ** 2, rel=1e-10)


def test_unequal_sizes_reduce_to_eq_18():
    rng = np.random.default_rng(5)
    a, b = rng.integers(0, 6, 4000), rng.integers(0, 6, 4000)
    b[b == 5] = 0
    res = rdp_lower_bound(a, b, 2.0, floor=1e-3)
    _, var_p, var_q = floored_estimate(*_rfe(a, b), 2.0, 1e-3, 1e3)
    assert res.std_error == pytest.approx(math.sqrt((var_p + var_q) / 4000), rel=1e-12)
    assert res.sigma == pytest.approx(math.sqrt(var_p + var_q), rel=1e-12)
    res2 = rdp_lower_bound(a, b[:1000], 2.0, floor=1e-3)
    _, vp2, vq2 = floored_estimate(*_rfe(a, b[:1000]), 2.0, 1e-3, 1e3)
    assert res2.std_error == pytest.approx(math.sqrt(vp2 / 4000 + vq2 / 1000), rel=1e-12)


@pytest.mark.slow
def test_bias_formula_against_monte_carlo_discrete():
    """Second-order bias estimate vs the Monte-Carlo bias of the plug-in on a small pmf."""
    p = np.array([0.5, 0.3, 0.15, 0.05])
    q = np.array([0.3, 0.3, 0.3, 0.1])
    lam, tau, beta, n = 4.0, 1e-3, 1e3, 400
    rng = np.random.default_rng(9)
    plug = [
        floored_estimate(rng.multinomial(n, p) / n, rng.multinomial(n, q) / n, lam, tau, beta)[0] for _ in range(20_000)
    ]
    mc_bias = np.mean(plug) - floored_estimate(p, q, lam, tau, beta)[0]
    _, vp, vq = floored_estimate(p, q, lam, tau, beta)
    predicted = second_order_bias(p, q, lam, floor=tau, beta=beta, dx=1.0, n_p=n, n_q=n)
    assert predicted == pytest.approx(
        second_order_bias(p, q, lam, floor=tau, beta=beta, dx=1.0, n_p=n, n_q=n, std_error=math.sqrt((vp + vq) / n)),
        rel=1e-13,
    )
    assert mc_bias > 0
    assert predicted == pytest.approx(mc_bias, rel=0.25)
