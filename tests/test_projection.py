"""renyi.audit.projection: vector outputs bounded through a direction learned on held-out outputs."""

import math

import numpy as np
import pytest
from renyi.audit import audit, rdp_lower_bound
from renyi.audit.projection import learn_direction
from renyi.cli import main

SIGMA = math.sqrt(10.0)


def gaussian_pair(rng, n, d, shift, cov_root=None):
    """Gaussian mechanism on a d-vector: N(shift, s^2 I) against N(0, s^2 I) (or correlated noise)."""
    noise_p, noise_q = rng.normal(0, SIGMA, (n, d)), rng.normal(0, SIGMA, (n, d))
    if cov_root is not None:
        noise_p, noise_q = noise_p @ cov_root.T, noise_q @ cov_root.T
    return noise_p + shift, noise_q


def test_learned_direction_gives_a_bound_below_the_truth_and_near_it():
    rng = np.random.default_rng(0)
    shift = np.zeros(10)
    shift[0] = 1.0
    p, q = gaussian_pair(rng, 100_000, 10, shift)
    truth = 2 / (2 * SIGMA**2)  # D_2 = order |shift|^2 / (2 sigma^2) = 0.1
    bound = rdp_lower_bound(p, q, 2, projection="mean-difference")
    assert 0.75 * truth < bound.lower <= truth
    assert bound.projection["kind"] == "mean-difference" and bound.projection["dimension"] == 10
    held = bound.projection["held_out"]
    assert 40_000 < held[0] < 60_000 and bound.n_p == 100_000 - held[0]
    # cos^2 ~ 1 / (1 + 2 d sigma^2 / (m |shift|^2)) with m held-out outputs per side
    expected = 1 / (1 + 2 * 10 * SIGMA**2 / (held[0] * 1.0))
    assert bound.projection["signal_share"] == pytest.approx(expected, abs=0.05)


def test_a_fixed_direction_uses_every_output_and_equals_the_one_dimensional_bound():
    rng = np.random.default_rng(1)
    shift = np.array([1.0, 0.0, 0.0])
    p, q = gaussian_pair(rng, 20_000, 3, shift)
    w = np.array([2.0, 0.0, 0.0])
    bound = rdp_lower_bound(p, q, [2, 5], projection=w)
    direct = rdp_lower_bound(p[:, 0], q[:, 0], [2, 5])  # the projection by hand (scale-free)
    for b, c in zip(bound, direct):
        assert b.lower == pytest.approx(c.lower, rel=1e-9)
        assert b.projection["held_out"] == [0, 0] and b.n_p == 20_000


def test_a_callable_projection_and_its_checks():
    rng = np.random.default_rng(2)
    p, q = gaussian_pair(rng, 5_000, 4, np.array([1.0, 1.0, 0.0, 0.0]))
    bound = rdp_lower_bound(p, q, 2, projection=lambda x: x[:, 0] + x[:, 1])
    assert bound.projection["kind"] == "callable" and bound.lower <= 2 * 2 / (2 * 2 * SIGMA**2) * 2
    with pytest.raises(ValueError, match="returned 1 values for 5000 rows"):
        rdp_lower_bound(p, q, 2, projection=lambda x: np.array([1.0]))


def test_whitening_recovers_the_signal_that_correlated_noise_hides():
    # noise correlated across coordinates: Sigma = L L^T; the truth is order/2 shift^T Sigma^-1 shift
    rng = np.random.default_rng(3)
    d = 10
    corr = 0.9 ** np.abs(np.subtract.outer(np.arange(d), np.arange(d)))
    root = np.linalg.cholesky(corr)
    shift = np.zeros(d)
    shift[0] = 1.0
    p, q = gaussian_pair(rng, 100_000, d, shift, root)
    truth = 2 / 2 * shift @ np.linalg.solve(SIGMA**2 * corr, shift)
    plain = rdp_lower_bound(p, q, 2, projection="mean-difference")
    white = rdp_lower_bound(p, q, 2, projection="whitened")
    assert plain.lower < 0.5 * truth  # the mean difference sees only 1 / Sigma_11 of it
    assert 0.7 * truth < white.lower <= truth


def test_ledoit_wolf_matches_a_direct_computation():
    from renyi.audit.projection import _Moments, _shrunk_covariance

    rng = np.random.default_rng(4)
    x, y = rng.normal(size=(300, 5)) * [1, 2, 3, 4, 5], rng.normal(size=(200, 5)) + 1
    moments = []
    for arr in (x, y):
        m = _Moments(5, True, centre=arr.mean(axis=0))
        m.add(arr)
        moments.append(m)
    # Ledoit and Wolf (2004): shrink S towards mu I by min(1, b^2 / d^2), pooled centred rows
    z = np.vstack([x - x.mean(axis=0), y - y.mean(axis=0)])
    n = z.shape[0]
    s = z.T @ z / n
    mu = np.trace(s) / 5
    d2 = np.sum((s - mu * np.eye(5)) ** 2)
    b2 = sum(np.sum((np.outer(r, r) - s) ** 2) for r in z) / n**2
    shrink = min(1.0, b2 / d2)
    assert np.allclose(_shrunk_covariance(moments), shrink * mu * np.eye(5) + (1 - shrink) * s, rtol=1e-10)


def test_one_pass_moments_about_a_first_block_centre_match_the_two_pass_ones():
    """Rows in blocks, the centre taken from the first block, which sits far from the mean
    (a drifting stream): the scatter and fourth powers about the mean, computed directly."""
    from renyi.audit.projection import _Moments

    rng = np.random.default_rng(6)
    x = rng.normal(size=(3000, 4)) * [1, 2, 3, 4] + np.linspace(0, 50, 3000)[:, None]
    m = _Moments(4, True)
    for start in range(0, 3000, 500):
        m.add(x[start : start + 500])
    z = x - x.mean(axis=0)
    assert np.allclose(m.mean, x.mean(axis=0), rtol=1e-12)
    assert np.allclose(m.scatter, z.T @ z, rtol=1e-9)
    assert m.fourth == pytest.approx(float(np.sum(np.sum(z * z, axis=1) ** 2)), rel=1e-9)


def test_learn_direction_in_memory():
    rng = np.random.default_rng(5)
    x, y = rng.normal(size=(20_000, 3)) + [0.0, 2.0, 0.0], rng.normal(size=(20_000, 3))
    assert abs(learn_direction(x, y)[1]) > 0.99


def test_memory_mapped_outputs_give_the_same_bound(tmp_path):
    rng = np.random.default_rng(6)
    p, q = gaussian_pair(rng, 30_000, 20, np.r_[1.0, np.zeros(19)])
    np.save(tmp_path / "p.npy", p)
    np.save(tmp_path / "q.npy", q)
    mapped = [np.load(tmp_path / f, mmap_mode="r") for f in ("p.npy", "q.npy")]
    a = rdp_lower_bound(*mapped, 2, projection="mean-difference")
    b = rdp_lower_bound(p, q, 2, projection="mean-difference")
    assert a.lower == b.lower


def test_bad_input_is_refused_with_the_option_named():
    rng = np.random.default_rng(7)
    p, q = gaussian_pair(rng, 1_000, 3, np.ones(3))
    with pytest.raises(ValueError, match="projection="):
        rdp_lower_bound(p, q, 2, discrete=False)
    with pytest.raises(ValueError, match=r"split must be in \(0, 1\)"):
        rdp_lower_bound(p, q, 2, projection="mean-difference", split=0.0)
    with pytest.raises(ValueError, match="a fixed one uses every output"):
        rdp_lower_bound(p, q, 2, projection=np.ones(3), split=0.5)
    with pytest.raises(ValueError, match="length 3"):
        rdp_lower_bound(p, q, 2, projection=np.ones(4))
    with pytest.raises(ValueError, match="projection must be one of"):
        rdp_lower_bound(p, q, 2, projection="lda")
    with pytest.raises(ValueError, match="same dimension"):
        rdp_lower_bound(p, q[:, :2], 2, projection="mean-difference")
    with pytest.raises(ValueError, match="shape \\(n, d\\)"):
        rdp_lower_bound(p[:, 0], q[:, 0], 2, projection="mean-difference")
    # a bad value in a held-out row or in a bounded row, in either sample, for every route
    for row in range(8):
        for value in (np.nan, np.inf):
            for projection in ("mean-difference", "whitened", np.ones(3)):
                bad = q.copy()
                bad[row, 1] = value
                with pytest.raises(ValueError, match="NaN or infinite"):
                    rdp_lower_bound(p, bad, 2, projection=projection, rng=np.random.default_rng(row))


def test_audit_learns_the_direction_on_a_pilot_and_bounds_every_output():
    def vector_gaussian(database, n, rng):
        return rng.normal(0, SIGMA, (n, 5)) + np.asarray(database, float)

    x, x_prime = np.r_[1.0, np.zeros(4)], np.zeros(5)
    rng = np.random.default_rng(8)
    bound = audit(vector_gaussian, x, x_prime, 50_000, 2, rng=rng, projection="mean-difference", pilot=20_000)
    assert bound.n_p == 50_000 and bound.projection["kind"] == "mean-difference (pilot)"
    assert bound.projection["held_out"] == [20_000, 20_000]
    assert bound.lower <= 0.1


def test_cli_projection(tmp_path, capsys):
    rng = np.random.default_rng(9)
    p, q = gaussian_pair(rng, 20_000, 4, np.r_[1.0, 0, 0, 0])
    np.save(tmp_path / "p.npy", p)
    np.savetxt(tmp_path / "q.csv", q, delimiter=",")
    args = ["audit", str(tmp_path / "p.npy"), str(tmp_path / "q.csv"), "--orders", "2"]
    assert main([*args, "--projection", "mean-difference", "--split", "0.25"]) == 0
    out = capsys.readouterr().out
    assert "outputs on the mean-difference direction,\n            learned from" in out and "n_p=" in out
    assert main(args) == 1
    assert "--projection" in capsys.readouterr().err


@pytest.mark.slow
@pytest.mark.parametrize("d", [2, 100])
def test_coverage_of_the_projected_bound(d):
    rng = np.random.default_rng(d)
    shift = np.zeros(d)
    shift[0] = 1.0
    truth = 2 / (2 * SIGMA**2)
    misses, replicates = 0, 200
    for _ in range(replicates):
        p, q = gaussian_pair(rng, 10_000, d, shift)
        misses += rdp_lower_bound(p, q, 2, projection="mean-difference", rng=rng).lower > truth
    assert misses / replicates <= 0.05 + 3 * math.sqrt(0.05 * 0.95 / replicates)


def test_integer_histograms_projected_with_an_integer_direction_stay_discrete():
    # noisy counts from a discrete (geometric) mechanism on 3 bins; one count moves by one
    rng = np.random.default_rng(10)
    n, eps = 50_000, 0.5
    r = math.exp(-eps)

    def noisy(counts):
        noise = rng.geometric(1 - r, (n, 3)) - rng.geometric(1 - r, (n, 3))
        return np.asarray(counts) + noise

    p, q = noisy([5, 3, 1]), noisy([4, 3, 1])
    bound = rdp_lower_bound(p, q, 2, projection=np.array([1, 0, 0]), discrete=True)
    assert bound.discrete and bound.projection["kind"] == "fixed"
    exact = math.log((math.exp(eps) + math.exp(-eps) * math.exp(-eps)) / (1 + math.exp(-eps)))
    assert 0.5 * exact < bound.lower <= exact
