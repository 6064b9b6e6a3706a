"""renyi.audit.log_ratio and renyi.audit.reduction: the estimated likelihood ratio, the choice
of a map on held-out outputs, and the diagnostic of how much a route keeps.

Expected values come from closed forms (the exact log ratios and divergences of Gaussian and
Laplace laws), not from the code under test.
"""

import math

import numpy as np
import pytest
from renyi.audit import audit, rdp_lower_bound
from renyi.audit.log_ratio import fit_log_ratio
from renyi.audit.reduction import held_out_scores, learn_map, projected_samples
from renyi.cli import main
from renyi.closed_forms import gaussian_renyi, laplace_renyi

CORRELATION = np.array([[1.0, 0.9], [0.9, 1.0]])
SHIFT = np.array([0.3, 0.0])


def correlated(rng, n):
    root = np.linalg.cholesky(CORRELATION)
    return rng.normal(size=(n, 2)) @ root.T + SHIFT, rng.normal(size=(n, 2)) @ root.T


def correlated_truth(order):
    return order / 2 * SHIFT @ np.linalg.solve(CORRELATION, SHIFT)


def spread(rng, n, d=5):
    return 1.2 * rng.normal(size=(n, d)), rng.normal(size=(n, d))


def spread_truth(order, d=5):
    return d * gaussian_renyi(0.0, 1.2, 0.0, 1.0, order)


LAPLACE_SCALE = math.sqrt(5.0)


def laplace(rng, n, d=5):
    p, q = rng.laplace(0, LAPLACE_SCALE, (n, d)), rng.laplace(0, LAPLACE_SCALE, (n, d))
    p[:, 0] += 1.0
    return p, q


SIGN = [np.array([[1.0, r], [r, 1.0]]) for r in (0.3, -0.3)]


def opposite_correlation(rng, n):
    return tuple(rng.normal(size=(n, 2)) @ np.linalg.cholesky(c).T for c in SIGN)


def _quadratic_log_ratio(x):
    # log N(0, S_P) - log N(0, S_Q) up to a constant: -x'(S_P^-1 - S_Q^-1)x / 2
    form = np.linalg.inv(SIGN[0]) - np.linalg.inv(SIGN[1])
    return -0.5 * np.einsum("ij,jk,ik->i", x, form, x)


def _slope_and_correlation(fitted, exact):
    slope = np.polyfit(exact, fitted, 1)[0]
    return slope, np.corrcoef(fitted, exact)[0, 1]


@pytest.mark.parametrize(
    "law, exact_log_ratio",
    [
        (correlated, lambda x: x @ np.linalg.solve(CORRELATION, SHIFT)),
        (spread, lambda x: (1 - 1 / 1.44) / 2 * np.sum(x * x, axis=1)),
        (laplace, lambda x: (np.abs(x[:, 0]) - np.abs(x[:, 0] - 1.0)) / LAPLACE_SCALE),
        (opposite_correlation, lambda x: _quadratic_log_ratio(x)),
    ],
    ids=["correlated-gaussian", "spread", "product-laplace", "opposite-correlation"],
)
def test_the_fitted_log_ratio_is_the_exact_one_up_to_a_constant(law, exact_log_ratio):
    # Logistic regression with balanced sides estimates log p/q itself: slope 1, not only
    # a monotone relative of it (the exact ratios are written out from the densities).
    rng = np.random.default_rng(0)
    ratio = fit_log_ratio(*law(rng, 40_000))
    fresh = np.vstack(law(rng, 5_000))
    slope, corr = _slope_and_correlation(ratio(fresh), exact_log_ratio(fresh))
    assert corr > 0.97 and slope == pytest.approx(1.0, abs=0.12)


def test_the_choice_uses_held_out_outputs_only():
    # The same rng holds out the same rows; changing every bounded row changes no score.
    rng = np.random.default_rng(1)
    p, q = spread(rng, 20_000)
    _, _, first = projected_samples(p, q, "auto", rng=np.random.default_rng(5))
    held = np.random.default_rng(5).random(p.shape[0]) < 0.5
    changed = p.copy()
    changed[~held] *= 3.0
    _, _, second = projected_samples(changed, q, "auto", rng=np.random.default_rng(5))
    assert first.scores == second.scores and first.kind == second.kind == "likelihood-ratio"


@pytest.mark.parametrize(
    "law, truth, order, floor",
    [(correlated, correlated_truth, 2, 0.85), (spread, spread_truth, 2, 0.55), (laplace, None, 2, 0.85)],
    ids=["correlated-gaussian", "spread", "product-laplace"],
)
def test_auto_keeps_most_of_the_divergence_and_stays_below_it(law, truth, order, floor):
    rng = np.random.default_rng(2)
    exact = truth(order) if truth else laplace_renyi(1.0, 0.0, LAPLACE_SCALE, order)
    bound = rdp_lower_bound(*law(rng, 100_000), order, projection="auto")
    assert floor * exact < bound.lower <= exact
    assert bound.projection["requested"] == "auto" and bound.projection["divergence_share"] == 1.0
    assert not bound.warnings


def test_a_route_that_keeps_little_is_named_with_the_better_one():
    rng = np.random.default_rng(3)
    bound = rdp_lower_bound(*correlated(rng, 50_000), 2, projection="mean-difference")
    share = bound.projection["divergence_share"]
    # the mean shift (0.3, 0) keeps 0.09 of Delta' C^-1 Delta = 0.474 under this noise
    assert share < 0.5
    assert any("keeps about" in w and "'auto'" in w for w in bound.warnings)


def test_means_that_do_not_differ_are_said_to_and_the_remedy_named():
    rng = np.random.default_rng(4)
    bound = rdp_lower_bound(*spread(rng, 50_000), 2, projection="mean-difference")
    assert any("means do not differ" in w and "likelihood-ratio" in w for w in bound.warnings)


def test_equal_laws_give_a_positive_bound_rarely():
    # The choice never sees the bounded rows, so under P = Q the bound is positive with
    # probability about its level (0.05); 40 replicates: at most 6 (binomial tail < 0.02).
    rng = np.random.default_rng(6)
    positive = 0
    for _ in range(40):
        p, q = rng.standard_t(5, (8_000, 3)), rng.standard_t(5, (8_000, 3))
        positive += rdp_lower_bound(p, q, 2, projection="auto", rng=rng).lower > 0
    assert positive <= 6


def test_scores_need_rows_and_a_log_ratio_needs_good_input():
    rng = np.random.default_rng(7)
    p, q = spread(rng, 30)
    assert held_out_scores(p, q, 2) == {}
    with pytest.raises(ValueError, match="at least 10 held-out rows"):
        fit_log_ratio(p[:5], q)
    with pytest.raises(ValueError, match="one d"):
        fit_log_ratio(p, q[:, :2])
    with pytest.raises(ValueError, match="penalty"):
        fit_log_ratio(p, q, penalty=-1.0)
    with pytest.raises(ValueError, match="'auto'"):
        projected_samples(p, q, "best")
    with pytest.raises(ValueError, match="learned projection is one of"):
        learn_map(p, q, "grid")


def _spread_box(database, n, rng):
    return (1.2 if database else 1.0) * rng.normal(size=(n, 4))


def test_auto_in_tasks_is_the_same_with_one_or_two_workers():
    bounds = [
        audit(_spread_box, 1, 0, 40_000, [2, 3], projection="auto", workers=k, rng=np.random.default_rng(8))
        for k in (1, 2)
    ]
    assert [b.lower for b in bounds[0]] == [b.lower for b in bounds[1]]
    assert bounds[0][0].projection["kind"] == "likelihood-ratio (pilot)"
    assert bounds[0][0].lower <= spread_truth(2, d=4)


def test_cli_auto_says_what_it_chose(tmp_path, capsys):
    rng = np.random.default_rng(9)
    p, q = spread(rng, 20_000, d=3)
    np.save(tmp_path / "p.npy", p)
    np.save(tmp_path / "q.npy", q)
    args = ["audit", str(tmp_path / "p.npy"), str(tmp_path / "q.npy"), "--orders", "2", "--projection", "auto"]
    assert main(args) == 0
    out = capsys.readouterr().out
    assert "on the estimated log-likelihood ratio (chosen by auto)," in out


def test_auto_takes_the_grid_where_only_the_joint_law_differs():
    # Correlation +0.3 against -0.3: D_2 = 0.7832 (closed form, and a quadrature in
    # test_vector_laws); no direction sees it, the grid sees it best at d = 2.
    rng = np.random.default_rng(10)
    bound = rdp_lower_bound(*opposite_correlation(rng, 100_000), 2, projection="auto")
    assert bound.projection["kind"] == "grid" and bound.projection["bandwidths"]
    assert 0.3 * 0.7832 < bound.lower <= 0.7832
    assert bound.n_p == 100_000 - bound.projection["held_out"][0]  # only the rows not held out


def test_the_grid_is_no_candidate_where_an_option_it_does_not_take_is_set():
    rng = np.random.default_rng(11)
    bound = rdp_lower_bound(*opposite_correlation(rng, 20_000), 2, projection="auto", bandwidth=0.3)
    assert "grid" not in bound.projection["scores"] and bound.projection["kind"] != "grid"


def _opposite_box(database, n, rng):
    # correlation +0.3 (database) against -0.3, unit variances: D_2 = 0.7832
    return opposite_correlation(rng, n)[0 if database else 1]


def test_auto_with_a_pilot_takes_the_grid_and_bounds_every_output():
    """In one process a pilot chooses among the maps and the grid (d = 2); the grid chosen, every
    output of the main samples is estimated on it (the pilot only chose)."""
    bound = audit(_opposite_box, 1, 0, 40_000, 2, projection="auto", pilot=20_000, rng=np.random.default_rng(12))
    assert bound.projection["kind"] == "grid (pilot)" and bound.projection["bandwidths"]
    assert bound.n_p == bound.n_q == 40_000
    assert bound.projection["held_out"] == [20_000, 20_000]
    assert 0.3 * 0.7832 < bound.lower <= 0.7832


def test_auto_in_tasks_takes_the_grid_with_the_pilot_held_out():
    """In tasks the pilots choose among the maps and the grid; the grid chosen, the pilots fix it
    and stay out of the estimate. The same seed gives the same bound on one and two workers."""
    bounds = [
        audit(_opposite_box, 1, 0, 60_000, 2, projection="auto", workers=k, rng=np.random.default_rng(13))
        for k in (1, 2)
    ]
    assert bounds[0].lower == bounds[1].lower
    bound = bounds[0]
    assert bound.projection["kind"] == "grid (pilot)" and bound.projection["bandwidths"]
    held = bound.projection["held_out"][0]
    assert held > 0 and bound.n_p == 60_000 - held
    assert 0.3 * 0.7832 < bound.lower <= 0.7832
    from renyi.cli.report import _projection_line

    line = _projection_line(bound.projection)
    assert "estimated on a whitened grid with no projection" in line
    assert f"chosen by auto on {held:,} + {held:,} held-out outputs" in line
