"""Audits of diffprivlib and OpenDP: the shipped sweep, and a recomputed slice when the extra is installed."""

import importlib.util
from pathlib import Path

import numpy as np
import pytest
from renyi.sweeps import libraries

DATA = Path(__file__).resolve().parents[1] / "data"
ROWS = libraries.load(DATA)
HAVE_EXTRA = all(importlib.util.find_spec(m) for m in ("diffprivlib", "opendp", "sklearn"))


def runs(rows):
    return {(r["config"], r["n"], r["replicate"]): r["refuted"] for r in rows}


def test_correct_calls_are_not_accused():
    verdicts = runs(r for r in ROWS if not r["miscalibrated"])
    assert len(verdicts) >= 80
    assert sum(verdicts.values()) <= 0.05 * len(verdicts) + 1  # family-wise level 5 % per audit
    with_truth = [r for r in ROWS if not r["miscalibrated"] and np.isfinite(r["truth"])]
    above = np.mean([r["lower"] > r["truth"] for r in with_truth])
    assert above <= 0.05  # each row is a 95 %+ bound


def test_miscalibrations_are_caught_at_large_n():
    bugs = [r for r in ROWS if r["miscalibrated"]]
    largest = max(r["n"] for r in bugs)
    verdicts = runs(r for r in bugs if r["n"] == largest)
    assert len({name for name, _, _ in verdicts}) == 3
    assert all(verdicts.values())


def test_claims_match_the_libraries_documented_parameters():
    # The pure-DP claims are the tight curve of epsilon = 1; zCDP claims are rho * order.
    from renyi.audit import claim_pure_dp

    for r in ROWS:
        if r["config"] in {"dpl-laplace", "dpl-geometric", "dpl-snapping", "dpl-mean", "bug-no-clipping"}:
            assert r["claimed"] == pytest.approx(claim_pure_dp(1.0)(r["order"]), rel=1e-12)
        if r["config"] == "bug-sigma-formula":
            assert r["claimed"] == pytest.approx(0.02 * r["order"], rel=1e-12)


@pytest.mark.skipif(
    not HAVE_EXTRA,
    reason="diffprivlib/opendp not installed (pip install -e .[libraries]); the shipped sweep is checked above",
)
def test_recomputed_slice_matches_the_shipped_data():
    configs = libraries.configs()
    names = list(configs)
    # diffprivlib is seeded: bit-for-bit.
    ci, n_index = names.index("dpl-laplace"), libraries.SIZES.index(10_000)
    seed = libraries._seed(ci, n_index, 0)
    fresh = libraries.run_one(configs["dpl-laplace"], 10_000, seed, seed + 1)
    shipped = [r for r in ROWS if r["config"] == "dpl-laplace" and r["n"] == 10_000 and r["replicate"] == 0]
    assert [r["lower"] for r in fresh] == pytest.approx([r["lower"] for r in shipped], rel=1e-12)
    # OpenDP cannot be seeded: the fresh bound lies within the spread of the shipped replicates.
    fresh = libraries.run_one(configs["odp-laplace-int"], 10_000, 0, 1)
    shipped = [r for r in ROWS if r["config"] == "odp-laplace-int" and r["n"] == 10_000]
    for row in fresh:
        same = [r["lower"] for r in shipped if r["order"] == row["order"]]
        se = np.mean([r["std_error"] for r in shipped if r["order"] == row["order"]])
        assert abs(row["lower"] - np.mean(same)) <= 5 * se


def test_summarize_counts_refutations_per_replicate_and_averages_the_ratios():
    """Hand-made rows: two replicates (one refuted), two orders; the means by hand."""
    base = dict(config="c", library="lib", n=100, seconds_sampling=1.0, seconds_bound=3.0)
    rows = [
        dict(base, replicate=0, order=2.0, lower=0.2, claimed=1.0, truth=0.5, refuted=False),
        dict(base, replicate=0, order=5.0, lower=0.6, claimed=2.0, truth=float("nan"), refuted=False),
        dict(base, replicate=1, order=2.0, lower=0.4, claimed=1.0, truth=0.5, refuted=True),
        dict(base, replicate=1, order=5.0, lower=1.0, claimed=2.0, truth=float("nan"), refuted=True),
        dict(base, replicate=0, order=2.0, lower=9.0, claimed=1.0, truth=1.0, refuted=True, n=10),
    ]
    out = libraries.summarize(rows, 100)
    assert list(out) == ["c"]
    s = out["c"]
    assert (s["library"], s["refuted"], s["runs"]) == ("lib", 1, 2)
    assert s["lower/claim"] == pytest.approx({2.0: 0.3, 5.0: 0.4})
    assert s["lower/truth"][2.0] == pytest.approx(0.6) and np.isnan(s["lower/truth"][5.0])
    assert (s["sampling"], s["bound"]) == (1.0, 3.0)
    assert libraries.summarize(rows, 1_000) == {}
