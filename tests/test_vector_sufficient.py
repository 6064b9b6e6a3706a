"""The sufficient-statistics simulation of the mean-difference route has the law of the full one.

Independent check: the full route (``rdp_lower_bound(..., projection="mean-difference")`` on
drawn (n, d) outputs) and the shortcut are run on separate streams; a two-sample
Kolmogorov-Smirnov test compares the bound and the signal share.  A negative control (the
shortcut with a different split, or with more noise) shows that the test can tell laws apart at this size.
The same comparison runs for product-Laplace noise, whose control is Gaussian noise of the same
variance.
"""

import math

import numpy as np
import pytest
from renyi.audit import rdp_lower_bound
from renyi.sweeps.vector_laws import vector_rows
from renyi.sweeps.vector_sufficient import sufficient_bounds, sufficient_samples
from scipy import stats

D, N, SIGMA, REPS = 40, 3_000, 2.0, 150
CENTRE_P = np.r_[1.5, 0.5, np.zeros(D - 2)]
CENTRE_Q = np.r_[0.0, 0.25, np.zeros(D - 2)]


def _full(rng, noise="gaussian"):
    draw = (lambda: rng.standard_normal((N, D))) if noise == "gaussian" else (lambda: rng.laplace(size=(N, D)))
    p = CENTRE_P + SIGMA * draw()
    q = CENTRE_Q + SIGMA * draw()
    bound = rdp_lower_bound(p, q, 2.0, projection="mean-difference", rng=rng)
    return bound.estimate, bound.projection["signal_share"], bound.projection["held_out"][0]


def _short(rng, split=0.5, sigma=SIGMA, noise="gaussian", chunk=1000):
    bound = sufficient_bounds(CENTRE_P, CENTRE_Q, sigma, N, 2.0, rng, split=split, noise=noise, chunk=chunk)
    return bound.estimate, bound.projection["signal_share"], bound.projection["held_out"][0]


@pytest.fixture(scope="module")
def laws():
    full = np.array([_full(np.random.default_rng([1, r])) for r in range(REPS)], dtype=float)
    short = np.array([_short(np.random.default_rng([2, r])) for r in range(REPS)], dtype=float)
    # two wrong laws: another split (moves the signal share), 10 % more noise (moves the bound)
    split = np.array([_short(np.random.default_rng([3, r]), split=0.3) for r in range(REPS)], dtype=float)
    noise = np.array([_short(np.random.default_rng([4, r]), sigma=1.1 * SIGMA) for r in range(REPS)], dtype=float)
    return full, short, (split, noise)


@pytest.mark.parametrize("column", [0, 1, 2], ids=["estimate", "signal_share", "held_out"])
@pytest.mark.slow
def test_same_law_as_the_full_route(laws, column):
    full, short, _ = laws
    assert stats.ks_2samp(full[:, column], short[:, column]).pvalue > 1e-3


def test_the_comparison_has_power(laws):
    full, _, (split, noise) = laws
    assert stats.ks_2samp(full[:, 1], split[:, 1]).pvalue < 1e-6
    assert stats.ks_2samp(full[:, 0], noise[:, 0]).pvalue < 1e-6


@pytest.fixture(scope="module")
def laplace_laws():
    full = np.array([_full(np.random.default_rng([5, r]), "laplace") for r in range(REPS)], dtype=float)
    # chunks of 1000 rows: the bounded outputs (about 1500) span two chunks
    short = np.array([_short(np.random.default_rng([6, r]), noise="laplace") for r in range(REPS)], dtype=float)
    # the control: Gaussian noise of the same variance, 2 b^2
    gauss = np.array([_short(np.random.default_rng([7, r]), sigma=math.sqrt(2) * SIGMA) for r in range(REPS)])
    return full, short, gauss


@pytest.mark.parametrize("column", [0, 1, 2], ids=["estimate", "signal_share", "held_out"])
@pytest.mark.slow
def test_laplace_same_law_as_the_full_route(laplace_laws, column):
    full, short, _ = laplace_laws
    assert stats.ks_2samp(full[:, column], short[:, column]).pvalue > 1e-3


def test_laplace_comparison_has_power(laplace_laws):
    full, _, gauss = laplace_laws
    assert stats.ks_2samp(full[:, 0], gauss[:, 0]).pvalue < 1e-6


def test_laplace_draws_are_standard_laplace():
    from renyi.sweeps.vector_sufficient import _laplace_noise

    draws = _laplace_noise(500, 40, np.random.default_rng(8)).ravel()
    assert stats.kstest(draws, stats.laplace.cdf).pvalue > 1e-3


def test_projected_outputs_are_gaussian_with_the_projected_centres():
    rng = np.random.default_rng(5)
    x, y, info = sufficient_samples(CENTRE_P, CENTRE_Q, SIGMA, 200_000, rng)
    assert info.kind == "mean-difference" and info.dimension == D
    assert x.size + info.held_out[0] == 200_000 and y.size + info.held_out[1] == 200_000
    # standard deviation sigma on both sides (a unit direction), within 5 standard errors
    for v in (x, y):
        assert abs(float(np.std(v)) - SIGMA) < 5 * SIGMA / math.sqrt(2 * v.size)
    # with 10^5 held-out outputs per side the direction is close to the shift's
    shift = CENTRE_P - CENTRE_Q
    gap = float(np.mean(x) - np.mean(y))
    assert gap == pytest.approx(float(np.linalg.norm(shift)), rel=0.02)


def test_vector_rows_route_matches_the_truth_scale():
    rows = vector_rows({}, "gaussian_sufficient", 1000, 1_000_000, [2.0], np.random.default_rng(0))
    assert rows[0]["target"] == pytest.approx(0.1)
    assert 0.6 * rows[0]["target"] < rows[0]["lower"] < rows[0]["target"]


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"sigma": 0.0}, "sigma"),
        ({"split": 1.0}, "split"),
        ({"centre_q": np.zeros(3)}, "one length"),
        ({"noise": "cauchy"}, "noise"),
        ({"chunk": 0}, "chunk"),
    ],
)
def test_bad_input(kwargs, match):
    args = {"centre_p": CENTRE_P, "centre_q": CENTRE_Q, "sigma": SIGMA, "n": 100, "rng": np.random.default_rng(0)}
    with pytest.raises(ValueError, match=match):
        sufficient_samples(**(args | kwargs))
