"""Sweep summaries (renyi.sweeps)."""

from scipy import stats


def test_summaries_give_exact_binomial_intervals():
    from renyi.sweeps import summarize

    rows = [{"mechanism": "m", "n": 1, "order": 2.0, "lower": float(i < 90), "target": 0.5} for i in range(100)]
    s = summarize(rows)[0]
    ci = stats.binomtest(10, 100).proportion_ci(0.95, method="exact")
    assert s["coverage"] == 0.10 and (s["coverage_low"], s["coverage_high"]) == (ci.low, ci.high)
    assert s["positive"] == 0.90


def test_every_sweep_has_a_quick_slice_within_its_parameters():
    """load_sweep(name, recompute=True) recomputes QUICK[name]: sizes and replicates the sweep has."""
    from renyi.sweeps import QUICK, SWEEPS

    assert set(QUICK) == set(SWEEPS)
    for name, quick in QUICK.items():
        assert set(quick["sizes"]) <= set(SWEEPS[name]["sizes"]), name
        assert 0 < quick["replicates"] <= SWEEPS[name]["replicates"], name
