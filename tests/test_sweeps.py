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


def test_finite_sample_summary_compares_both_directions_with_both_directions():
    """Two replicates of one order worked by hand: every ratio is over max(D(P||Q), D(Q||P))."""
    from renyi.sweeps.summaries import finite_sample_summary

    base = {"mechanism": "geometric", "n": 100, "order": 2.0, "target": 1.0, "target_reverse": 2.0, "cells": 3}
    rows = [
        base
        | {"replicate": 0, "fs_forward": 0.5, "fs_reverse": 1.5, "delta_forward": 0.9, "delta_both": 1.2}
        | {"direction_both": "Q||P"},  # below D(Q||P) = 2: covers
        base
        | {"replicate": 1, "fs_forward": 1.1, "fs_reverse": 0.4, "delta_forward": 0.3, "delta_both": 1.1}
        | {"direction_both": "P||Q"},  # above D(P||Q) = 1: misses; and the forward fs bound misses
    ]
    (s,) = finite_sample_summary(rows)
    assert s["replicates"] == 2 and s["fs_family"] == 0.5
    assert s["delta_coverage"] == {2.0: 0.5}
    assert s["fs_ratio"][2.0] == (1.5 + 1.1) / 2 / 2.0
    assert s["delta_ratio"][2.0] == (1.2 + 1.1) / 2 / 2.0
    assert s["cells"] == 3.0
