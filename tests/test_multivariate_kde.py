"""renyi.audit.multivariate_kde: the estimator on a whitened grid in two or three dimensions."""

import math

import numpy as np
import pytest
from renyi.audit import audit, rdp_lower_bound
from renyi.audit.density_fit import bounds_from_fit
from renyi.audit.multivariate_kde import fit_grid_kde
from renyi.cli import main
from renyi.closed_forms import laplace_renyi

SIGMA = math.sqrt(10.0)


def gaussian_pair(rng, n, d, shift=1.0):
    """N(shift e_1, 10 I) against N(0, 10 I): D_order = order shift^2 / 20."""
    p = rng.normal(0, SIGMA, (n, d))
    p[:, 0] += shift
    return p, rng.normal(0, SIGMA, (n, d))


def direct_kde(white, bandwidths, points):
    """The product-Gaussian KDE of whitened outputs, summed over every output at each point."""
    norm = np.prod(bandwidths * math.sqrt(2 * math.pi))
    return np.array([np.mean(np.exp(-0.5 * np.sum(((t - white) / bandwidths) ** 2, axis=1))) / norm for t in points])


@pytest.mark.parametrize("d", [2, 3])
@pytest.mark.slow
def test_grid_values_match_the_kde_summed_directly(d):
    rng = np.random.default_rng(d)
    p, q = gaussian_pair(rng, 4_000, d)
    p[:, 1] = 3 * p[:, 1] + 0.5 * p[:, 0]  # unequal scales and a correlation: whitening undoes both
    fit, grid = fit_grid_kde(p, q)
    for dens in (fit.p, fit.q):
        assert dens.sum() * fit.dx == pytest.approx(1.0, abs=1e-9)
    pooled = np.vstack([(s - grid.centre) @ grid.inverse_factor for s in (p, q)])
    assert np.cov(pooled.T) == pytest.approx(np.eye(d), abs=0.05)  # whitened (up to the mean shift)
    white = grid.transform(p)  # whitened, tails compressed: the grid's coordinates
    # 40 nodes spread over the range of p_hat, down to a thousandth of its peak
    ranked = np.argsort(fit.p)[::-1]
    ranked = ranked[fit.p[ranked] > 1e-3 * fit.p.max()]
    pick = ranked[:: max(1, ranked.size // 40)]
    expected = direct_kde(white, grid.bandwidths, grid.nodes()[pick])
    # linear binning is exact to second order in spacing / bandwidth (1/4 here) near the peak;
    # its relative error grows in the tails like (spacing / h)^2 (z^2 - 1)
    core = expected > 1e-2 * expected.max()
    assert fit.p[pick][core] == pytest.approx(expected[core], rel=3e-3 * (d - 1))  # per axis
    assert fit.p[pick] == pytest.approx(expected, rel=2e-2)


def test_bandwidths_follow_scotts_rate_on_whitened_axes():
    rng = np.random.default_rng(5)
    widths = []
    for n in (10_000, 160_000):
        p, q = gaussian_pair(rng, n, 2)
        p *= [1.0, 100.0]
        q *= [1.0, 100.0]
        widths.append(fit_grid_kde(p, q)[1].bandwidths)
    # robust scale ~1 per whitened axis, n^(-1/6): a factor 16 in n is 16^(1/6) in h
    assert widths[0] == pytest.approx([10_000 ** (-1 / 6)] * 2, rel=0.08)
    assert widths[0] / widths[1] == pytest.approx([16 ** (1 / 6)] * 2, rel=0.03)


def test_the_bound_does_not_depend_on_the_outputs_units_or_origin():
    rng = np.random.default_rng(6)
    p, q = gaussian_pair(rng, 20_000, 2)
    scale, shift = np.array([1e3, 1e-3]), np.array([-5.0, 7.0])
    a = rdp_lower_bound(p, q, [2, 5], projection="grid")
    b = rdp_lower_bound(p * scale + shift, q * scale + shift, [2, 5], projection="grid")
    for x, y in zip(a, b):
        assert x.lower == pytest.approx(y.lower, rel=1e-6)


@pytest.mark.slow
@pytest.mark.parametrize("law", ["gaussian", "laplace"])
def test_a_coarser_grid_changes_the_bound_by_little(law):
    rng = np.random.default_rng(7)
    if law == "gaussian":
        p, q = gaussian_pair(rng, 200_000, 3)
    else:  # heavy tails: the outputs' range, hence the spacing, is largest
        p, q = rng.laplace(0, math.sqrt(5), (200_000, 3)) + 1.0, rng.laplace(0, math.sqrt(5), (200_000, 3))
    fine, grid = fit_grid_kde(p, q, max_nodes=1 << 24)
    assert float(np.max(grid.spacing / grid.bandwidths)) < 0.45
    reference = bounds_from_fit(fine, [2.0, 5.0])
    coarsest = 0.0
    for nodes in (1 << 21, 1 << 20, 1 << 19):
        try:
            coarse, grid = fit_grid_kde(p, q, max_nodes=nodes)
        except ValueError:  # beyond one node per bandwidth: refused
            continue
        coarsest = max(coarsest, float(np.max(grid.spacing / grid.bandwidths)))
        for f, c in zip(reference, bounds_from_fit(coarse, [2.0, 5.0])):
            assert c.lower == pytest.approx(f.lower, rel=1e-3)
    assert coarsest > 0.7


@pytest.mark.parametrize("d", [2, 3])
@pytest.mark.slow
def test_gaussian_bound_is_below_the_truth_and_near_it(d):
    rng = np.random.default_rng(10 + d)
    p, q = gaussian_pair(rng, 200_000, d)
    bounds = rdp_lower_bound(p, q, [2, 5], projection="grid")
    for b in bounds:
        truth = b.order / 20
        assert 0.7 * truth < b.lower <= truth
        assert b.projection["kind"] == "grid" and b.projection["dimension"] == d
        assert b.n_p == 200_000 and b.bandwidth is None and len(b.projection["bandwidths"]) == d


def test_the_grid_beats_every_projection_when_two_coordinates_shift():
    # independent Laplace noise shifted in both coordinates: D is the sum of two 1-D divergences,
    # and the projection on the diagonal mixes two Laplace laws, losing about a third of it
    rng = np.random.default_rng(20)
    scale = math.sqrt(5.0)
    p, q = rng.laplace(0, scale, (300_000, 2)) + 1.0, rng.laplace(0, scale, (300_000, 2))
    truth = 2 * laplace_renyi(1.0, 0.0, scale, 2.0)
    grid = rdp_lower_bound(p, q, 2, projection="grid")
    line = rdp_lower_bound(p, q, 2, projection="mean-difference", rng=np.random.default_rng(0))
    assert line.lower < 0.75 * truth < grid.lower <= truth


@pytest.mark.slow
def test_no_evidence_when_both_samples_come_from_one_law():
    rng = np.random.default_rng(30)
    positive = 0
    for _ in range(40):
        p, q = gaussian_pair(rng, 20_000, 2, shift=0.0)
        positive += sum(b.lower > 0 for b in rdp_lower_bound(p, q, [2, 5], projection="grid"))
    # each bound is at level 5 %; 80 bounds, strongly correlated across orders
    assert positive <= 12


@pytest.mark.slow
def test_coverage_of_the_grid_bound_in_two_dimensions():
    rng = np.random.default_rng(31)
    covered = [
        b.lower <= b.order / 20
        for _ in range(60)
        for b in rdp_lower_bound(*gaussian_pair(rng, 20_000, 2), [2, 5], projection="grid")
    ]
    assert np.mean(covered) >= 0.9


def test_audit_draws_then_bounds_on_the_grid():
    def mechanism(database, n, rng):
        return rng.normal(0, SIGMA, (n, 2)) + [float(database), 0.0]

    bound = audit(mechanism, 1, 0, 50_000, 2, rng=np.random.default_rng(40), projection="grid")
    assert 0 < bound.lower <= 0.1 and bound.projection["kind"] == "grid"


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"split": 0.3}, "drop split"),
        ({"bandwidth": 0.1}, "drop bandwidth"),
        ({"floor": "paper"}, "one-dimensional"),
        ({"tails": "relative"}, "drop tails"),
        ({"discrete": True}, "continuous outputs"),
        ({"method": "finite-sample"}, "delta-method"),
    ],
)
def test_options_that_do_not_apply_are_refused(options, message):
    rng = np.random.default_rng(50)
    p, q = gaussian_pair(rng, 1_000, 2)
    with pytest.raises(ValueError, match=message):
        rdp_lower_bound(p, q, 2, projection="grid", **options)


def test_bad_outputs_are_refused_with_the_reason():
    rng = np.random.default_rng(51)
    p, q = gaussian_pair(rng, 1_000, 4)
    with pytest.raises(ValueError, match=r"d = 4 would need about .* GiB per array"):
        rdp_lower_bound(p, q, 2, projection="grid")
    p2, q2 = p[:, :2].copy(), q[:, :2].copy()
    p2[:, 1] = 2 * p2[:, 0]
    q2[:, 1] = 2 * q2[:, 0]
    with pytest.raises(ValueError, match="covariance is singular"):
        rdp_lower_bound(p2, q2, 2, projection="grid")
    p3 = p[:, :2].copy()
    p3[0, 0] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        rdp_lower_bound(p3, q[:, :2], 2, projection="grid")
    with pytest.raises(ValueError, match="same dimension"):
        rdp_lower_bound(p[:, :2], q[:, :3], 2, projection="grid")
    outlier = p[:, :3].copy()
    for k in range(3):  # one wild output per axis: whitening squeezes the rest to a sliver
        outlier[k, k] = 1e5
    with pytest.raises(ValueError, match="clip them"):
        rdp_lower_bound(outlier, q[:, :3], 2, projection="grid")


def test_cli_audits_on_the_grid(tmp_path, capsys):
    rng = np.random.default_rng(60)
    p, q = gaussian_pair(rng, 20_000, 2)
    np.save(tmp_path / "p.npy", p)
    np.save(tmp_path / "q.npy", q)
    assert (
        main(["audit", str(tmp_path / "p.npy"), str(tmp_path / "q.npy"), "--orders", "2", "--projection", "grid"]) == 0
    )
    out = capsys.readouterr().out
    assert "2-dimensional, estimated on a whitened grid with no projection" in out
    assert (
        main(
            [
                "audit",
                str(tmp_path / "p.npy"),
                str(tmp_path / "q.npy"),
                "--orders",
                "2",
                "--projection",
                "kde",
                "--split",
                "0.5",
            ]
        )
        != 0
    )
    assert "drop split" in capsys.readouterr().err


def test_the_former_name_kde_still_gives_the_grid_estimate_with_a_warning(tmp_path, capsys):
    rng = np.random.default_rng(61)
    p, q = gaussian_pair(rng, 5_000, 2)
    with pytest.warns(FutureWarning, match="projection='kde' is now projection='grid'"):
        old = rdp_lower_bound(p, q, [2, 5], projection="kde")
    assert old == rdp_lower_bound(p, q, [2, 5], projection="grid") and old[0].projection["kind"] == "grid"
    np.save(tmp_path / "p.npy", p)
    np.save(tmp_path / "q.npy", q)
    assert (
        main(["audit", str(tmp_path / "p.npy"), str(tmp_path / "q.npy"), "--orders", "2", "--projection", "kde"]) == 0
    )
    assert capsys.readouterr().err == "renyi: note: --projection kde is now --projection grid (the same estimate)\n"


@pytest.mark.parametrize("d", [2, 3])
def test_grid_counts_of_chunks_merge_to_those_of_the_whole_and_keep_mass_and_mean(d):
    """Linear binning keeps each point's unit mass and, per axis, its position: the counts sum to
    n and their centroid on the nodes is the points' mean (exact arithmetic of the corners)."""
    from renyi.audit.counts import VectorGridCounts

    rng = np.random.default_rng(70 + d)
    points = rng.standard_normal((30_001, d)) * [1.0, 2.0, 0.5][:d]
    dx = np.array([0.07, 0.11, 0.05] if d == 2 else [0.1, 0.2, 0.05])[:d]
    whole = VectorGridCounts.of(points, dx)
    parts = VectorGridCounts(dx)
    for chunk in (points[20_000:], points[:7], points[7:20_000]):  # any order
        parts.merge(VectorGridCounts.of(chunk, dx))
    assert parts.n == whole.n == points.shape[0]
    assert np.array_equal(parts.offset, whole.offset) and parts.counts.shape == whole.counts.shape
    np.testing.assert_allclose(parts.counts, whole.counts, rtol=0, atol=1e-9)
    assert whole.counts.sum() == pytest.approx(points.shape[0], rel=1e-12)
    nodes = np.indices(whole.counts.shape).reshape(d, -1).T + whole.offset
    centroid = (nodes * dx * whole.counts.reshape(-1, 1)).sum(axis=0) / points.shape[0]
    np.testing.assert_allclose(centroid, points.mean(axis=0), rtol=0, atol=1e-9)


def _shifted_laplace(database, n, rng):
    out = rng.laplace(0.0, math.sqrt(5.0), (n, 2))
    out += float(np.sum(database))
    return out


@pytest.mark.slow
@pytest.mark.xdist_group("processes")
def test_the_grid_in_tasks_is_the_same_on_any_number_of_workers_and_near_the_one_process_bound():
    """Laplace noise of scale sqrt(5) shifted by 1 in both coordinates: D_2 = 2 x 0.1646 (closed
    form); the pilots fix the grid, so 1 and 2 workers give the same bound bit for bit."""
    truth = [2 * laplace_renyi(1.0, 0.0, math.sqrt(5.0), order) for order in (2.0, 5.0)]
    one, two = (
        audit(_shifted_laplace, [1], [0], 200_000, [2, 5], rng=np.random.default_rng(3), workers=w, projection="grid")
        for w in (1, 2)
    )
    assert [b.lower for b in one] == [b.lower for b in two] and one[0].projection["kind"] == "grid"
    rng = np.random.default_rng(4)
    p, q = _shifted_laplace([1], 200_000, rng), _shifted_laplace([0], 200_000, rng)
    here = rdp_lower_bound(p, q, [2, 5], projection="grid")
    for tasks, memory, exact in zip(one, here, truth):
        assert 0 < tasks.lower <= exact and abs(tasks.lower - memory.lower) < 0.1 * exact
    with pytest.warns(FutureWarning, match="projection='kde' is now projection='grid'"):
        old = audit(_shifted_laplace, [1], [0], 200_000, 2, rng=np.random.default_rng(3), workers=1, projection="kde")
    assert old.lower == one[0].lower
