"""What the chapters read from a sweep: coverage and mean ratios per point, and refutation rates.

Both take the rows of :func:`~renyi.sweeps.run.load_sweep` (or of a recomputation) and return
one dict per group, so that a chapter's table or figure is a loop over them.
"""

from __future__ import annotations

import numpy as np
from scipy import stats

from .definitions import FINITE_SAMPLE, VERDICT

__all__ = ["summarize", "refutation_rates", "finite_sample_summary"]


def refutation_rates(rows) -> list[dict]:
    """Per (mechanism, n) of the verdict study: the fraction of replicates each rule refuted.

    Parameters
    ----------
    rows : list of dict
        Rows of ``data/part1/verdict.csv``.

    Returns
    -------
    list of dict
        ``mechanism``, ``n``, ``replicates``, ``familywise``, ``per_order`` (fractions refuted)
        and ``excess_q95``, the 95 % quantile over replicates of the largest excess of a bound
        over the claim in standard errors.
    """
    groups: dict[tuple, list[dict]] = {}
    for row in rows:
        groups.setdefault((row["mechanism"], row["n"]), []).append(row)
    out = []
    for (name, n), g in sorted(groups.items(), key=lambda kv: (VERDICT["mechanisms"].index(kv[0][0]), kv[0][1])):
        out.append(
            {
                "mechanism": name,
                "n": n,
                "replicates": len(g),
                "familywise": float(np.mean([r["refuted_familywise"] for r in g])),
                "per_order": float(np.mean([r["refuted_per_order"] for r in g])),
                "excess_q95": float(np.quantile([r["largest_excess_se"] for r in g], 0.95)),
            }
        )
    return out


def summarize(rows, by=("mechanism", "n", "order"), *, column="lower", target="target") -> list[dict]:
    r"""Per-group summaries of a sweep: replicates, mean of ``column``/target, 5–95 % band, coverage.

    Coverage is the fraction of replicates with ``column <= target``, i.e. with
    a valid lower bound, with its exact (Clopper–Pearson) 95 % interval
    ``coverage_low``–``coverage_high``; ``positive`` is the fraction with
    ``column > 0``.  Returns one dict per group, sorted by the group key.

    Parameters
    ----------
    rows : list of dict
    by : tuple of str
        Grouping keys.
    column : str, default "lower"
        The bound column summarised.
    target : str, default "target"
        The column of the exact divergence.

    Returns
    -------
    list of dict
    """
    groups: dict[tuple, list[dict]] = {}
    for row in rows:
        groups.setdefault(tuple(row[k] for k in by), []).append(row)
    out = []
    for key in sorted(groups, key=lambda k: tuple(str(v) if isinstance(v, str) else v for v in k)):
        g = [r for r in groups[key] if r[column] is not None]
        if not g:
            continue
        values = np.array([r[column] for r in g])
        truth = np.array([r[target] for r in g])
        entry = dict(zip(by, key))
        covered = int(np.sum(values <= truth))
        ci = stats.binomtest(covered, len(g)).proportion_ci(0.95, method="exact")
        entry.update(
            replicates=len(g),
            target=float(truth[0]),
            mean=float(values.mean()),
            q05=float(np.quantile(values, 0.05)),
            q95=float(np.quantile(values, 0.95)),
            mean_ratio=float(values.mean() / truth[0]) if truth[0] != 0 else float("nan"),
            coverage=covered / len(g),
            coverage_low=float(ci.low),
            coverage_high=float(ci.high),
            positive=float(np.mean(values > 0)),
        )
        out.append(entry)
    return out


def _direction_target(row) -> float:
    """The exact divergence of the direction that a row's two-direction delta bound chose."""
    return row["target"] if row["direction_both"] == "P||Q" else row["target_reverse"]


def finite_sample_summary(rows) -> list[dict]:
    r"""Per (law, n) of the finite-sample study: coverage and mean ratios of both bounds.

    Parameters
    ----------
    rows : list of dict
        Rows of ``data/part1/finite_sample.csv``.

    Returns
    -------
    list of dict
        ``mechanism``, ``n``, ``replicates``; ``fs_family``, the fraction of replicates whose
        finite-sample bounds all hold (every order, both directions: the event the bound
        guarantees); ``delta_coverage``, per order the fraction of delta-method bounds on both
        directions (each direction at level 0.025, the larger of the two reported: level 0.05 for
        the pair) that lie at or below the divergence of the direction they name; ``fs_ratio``
        and ``delta_ratio``, per order the mean bound over :math:`\max(D_\lambda(P\|Q), D_\lambda(Q\|P))`, both methods
        bounding both directions on the same outputs, so that the two ratios compare like with
        like; ``cells``, the mean number of cells of the boxes.
    """
    groups: dict[tuple, list[dict]] = {}
    for row in rows:
        groups.setdefault((row["mechanism"], row["n"]), []).append(row)
    laws = FINITE_SAMPLE["mechanisms"]
    out = []
    for (name, n), g in sorted(groups.items(), key=lambda kv: (laws.index(kv[0][0]), kv[0][1])):
        replicates = sorted({r["replicate"] for r in g})
        held = {rep: True for rep in replicates}
        for r in g:
            held[r["replicate"]] &= r["fs_forward"] <= r["target"] and r["fs_reverse"] <= r["target_reverse"]
        orders = sorted({r["order"] for r in g})
        by_order = {o: [r for r in g if r["order"] == o] for o in orders}
        out.append(
            {
                "mechanism": name,
                "n": n,
                "replicates": len(replicates),
                "fs_family": float(np.mean(list(held.values()))),
                "delta_coverage": {
                    o: float(np.mean([r["delta_both"] <= _direction_target(r) for r in v])) for o, v in by_order.items()
                },
                "fs_ratio": {
                    o: float(
                        np.mean([max(r["fs_forward"], r["fs_reverse"]) for r in v])
                        / max(v[0]["target"], v[0]["target_reverse"])
                    )
                    for o, v in by_order.items()
                },
                "delta_ratio": {
                    o: float(np.mean([r["delta_both"] for r in v]) / max(v[0]["target"], v[0]["target_reverse"]))
                    for o, v in by_order.items()
                },
                "cells": float(np.mean([r["cells"] for r in g])),
            }
        )
    return out
