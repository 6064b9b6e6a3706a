"""renyi.audit: claim curves, family-wise accounting, error rates on correct and mis-calibrated mechanisms."""

import json
import math

import numpy as np
import pytest
from renyi.audit import audit, claim_gaussian, claim_pure_dp, claim_zcdp, rdp_lower_bound, test_claim, verdict
from renyi.audit import verdict as verdict_from_audit
from renyi.cli import REFUTED, main
from renyi.divergence import renyi_divergence
from renyi.mechanisms import ADJACENT_PAIR, MECHANISMS


@pytest.mark.parametrize("order", [1.01, 2, 5, 20, 64])
def test_pure_dp_curve_is_attained_by_randomized_response(order):
    eps = 1.5
    p = np.array([math.exp(eps), 1.0]) / (1 + math.exp(eps))
    exact = renyi_divergence(p, p[::-1], order)
    assert claim_pure_dp(eps)(order) == pytest.approx(exact, rel=1e-12)
    assert MECHANISMS["randomized_response"].target(order) == pytest.approx(exact, rel=1e-10)
    assert claim_pure_dp(eps)(order) <= min(eps, order * eps**2 / 2) + 1e-15


def test_zcdp_and_gaussian_curves():
    assert claim_zcdp(0.02)(5) == pytest.approx(0.1)
    assert claim_gaussian(5.0, 1.0)(2) == pytest.approx(MECHANISMS["gaussian"].target(2), rel=1e-12)
    with pytest.raises(ValueError, match="sigma must be finite and > 0"):
        claim_gaussian(0.0)
    with pytest.raises(TypeError, match="rho must be a number"):
        claim_zcdp("a lot")


def test_the_audit_module_exports_verdict():
    assert verdict_from_audit is verdict


def test_rows_levels_and_margins():
    rng = np.random.default_rng(0)
    orders = [2, 5, 7]
    bounds = audit("gaussian", *ADJACENT_PAIR, 50_000, orders, rng=rng, alpha=0.05 / 3)
    result = verdict(bounds, claim_gaussian(5.0))
    assert len(result.rows) == 6 and {r.direction for r in result.rows} == {"P||Q", "Q||P"}
    assert result.spent == pytest.approx(0.05)
    for row in result.rows:
        assert row.level == pytest.approx(0.05 / 6)
        assert row.refutes == (row.lower > row.claimed)
    assert "not refuted" in str(result)
    # An array of claimed values, one per order, is the same claim.
    same = verdict(bounds, [claim_gaussian(5.0)(o) for o in orders])
    assert same.rows == result.rows


def test_bounds_at_the_per_order_level_are_required():
    rng = np.random.default_rng(1)
    bounds = audit("gaussian", *ADJACENT_PAIR, 20_000, [2, 5], rng=rng)  # alpha=0.05 each
    with pytest.raises(ValueError, match=r"alpha=0.025 \(alpha / number of orders\)"):
        verdict(bounds, claim_gaussian(5.0), alpha=0.05)
    assert verdict(bounds, claim_gaussian(5.0), alpha=0.1).alpha == 0.1  # 2 x 0.05 fits in 0.1


@pytest.mark.parametrize(
    "claimed,match",
    [
        ([0.1], "1 value but 2 orders"),
        ([0.1, -1], "must be >= 0"),
        ([0.1, float("nan")], "must be >= 0"),
        (["x", 1], "must be a number"),
    ],
)
def test_bad_claims(claimed, match):
    rng = np.random.default_rng(2)
    bounds = audit("gaussian", *ADJACENT_PAIR, 5_000, [2, 5], rng=rng, alpha=0.025)
    with pytest.raises((ValueError, TypeError), match=match):
        verdict(bounds, claimed)
    with pytest.raises(TypeError, match="LowerBound"):
        verdict([], claim_zcdp(1.0))


@pytest.mark.slow
def test_correct_mechanisms_are_refuted_at_most_alpha_of_the_time():
    """200 seeded audits of correct mechanisms against their exact curves, family-wise at 5 %."""
    seeds = np.random.SeedSequence(20261201).spawn(200)
    names = ["gaussian", "laplace", "randomized_response", "subsampled_gaussian"]
    refuted = 0
    for i, seed in enumerate(seeds):
        mech = MECHANISMS[names[i % len(names)]]
        samples = [mech.sample(db, 20_000, rng) for db, rng in zip(ADJACENT_PAIR, np.random.default_rng(seed).spawn(2))]
        result = test_claim(*samples, mech.target, [2, 5], alpha=0.05, discrete=mech.discrete)
        refuted += result.refuted
    assert refuted <= 0.05 * 200


@pytest.mark.slow
def test_miscalibrated_gaussian_is_caught():
    """A wrapper that computes sigma from eps where eps^2 belongs: claims rho = eps^2/2, delivers far less noise."""
    eps = 0.2
    claimed = claim_zcdp(eps**2 / 2)  # what a correct sigma = 1/eps = 5 would give
    sigma_buggy = 1 / math.sqrt(2 * eps)  # the bug: eps in place of eps^2
    seeds = np.random.SeedSequence(7).spawn(100)
    caught = 0
    for seed in seeds:
        rp, rq = np.random.default_rng(seed).spawn(2)
        p, q = rp.normal(1.0, sigma_buggy, 100_000), rq.normal(0.0, sigma_buggy, 100_000)
        caught += test_claim(p, q, claimed, [2, 5, 7]).refuted
    assert caught >= 95


def test_cli_verdict_and_exit_status(tmp_path, capsys):
    rng = np.random.default_rng(5)
    np.save(tmp_path / "p.npy", rng.normal(1, 5, 100_000))
    np.save(tmp_path / "q.npy", rng.normal(0, 5, 100_000))
    files = [str(tmp_path / "p.npy"), str(tmp_path / "q.npy")]
    # The Gaussian with sigma = 5 is (order, order/50)-RDP: a pure 0.02-DP claim is far too strong.
    assert main(["audit", *files, "--orders", "2", "5", "--claim-epsilon", "0.02"]) == REFUTED == 3
    assert "verdict: claim REFUTED at family-wise level 0.05" in capsys.readouterr().out
    assert main(["audit", *files, "--orders", "2", "5", "--claim-rho", "0.02"]) == 0
    assert "verdict: claim not refuted" in capsys.readouterr().out
    assert main(["audit", *files, "--orders", "2", "5", "--claim-rho", "0.02", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["verdict"]["refuted"] is False and len(out["verdict"]["rows"]) == 4
    assert out["bounds"][0]["alpha"] == pytest.approx(0.025)
    lib = rdp_lower_bound(np.load(files[0]), np.load(files[1]), [2, 5], alpha=0.025)
    assert [b["lower"] for b in out["bounds"]] == pytest.approx([b.lower for b in lib], rel=1e-12)
    (tmp_path / "curve.csv").write_text("2, 0.04\n5, 0.1\n")
    assert main(["audit", *files, "--orders", "2", "5", "--claim-curve", str(tmp_path / "curve.csv")]) == 0
    capsys.readouterr()
    assert main(["audit", *files, "--orders", "2", "7", "--claim-curve", str(tmp_path / "curve.csv")]) == 1
    assert "no claimed epsilon for order 7" in capsys.readouterr().err
