r"""The Part I sweeps' definitions: their parameters, seeds and columns.

Each sweep of :mod:`renyi.sweeps` is a dict of parameters in :data:`SWEEPS`, with the columns
of its CSV in :data:`FIELDS` and a quick slice in :data:`QUICK`; every task draws from
``SeedSequence(ROOT_SEED, spawn_key=task.key)`` (:mod:`renyi.sweeps.tasks`, which computes the
rows).  Writing files, caching parts and the manifest are :mod:`renyi.sweeps`' job.
"""

from __future__ import annotations

from ..mechanisms import MECHANISMS

__all__ = ["ROOT_SEED", "SWEEPS", "QUICK", "FIELDS", "ALPHA"]

#: Root entropy of every Part I sweep (minted once with SeedSequence().entropy, then fixed).
ROOT_SEED = 0x5EED_2026_1129_0001


SECTION4 = {
    "mechanisms": list(MECHANISMS),
    "sizes": [1_000, 3_000, 10_000, 30_000, 100_000, 300_000, 1_000_000, 10_000_000],
    "orders": [2.0, 5.0, 7.0],
    "replicates": 100,
    "block": 25,
}


TUNING = {
    "mechanisms": ["gaussian", "laplace"],
    "sizes": [10_000, 1_000_000],
    "orders": [2.0, 5.0],
    "replicates": 100,
    "block": 25,
    "bandwidth_factors": [0.25, 0.5, 1.0, 2.0, 4.0],
    "floor_factors": [0.1, 0.3, 1.0, 3.0, 10.0],
    "beta_tau": [0.1, 1.0, 10.0],
}


ORDERS = {
    "mechanisms": ["gaussian", "laplace", "randomized_response", "gaussian_p_eq_q", "randomized_response_p_eq_q"],
    "sizes": [100, 1_000, 10_000, 100_000, 1_000_000, 10_000_000],
    "orders": [1.01, 1.5, 2.0, 5.0, 10.0, 20.0, 32.0, 64.0],
    "replicates": 100,
    "block": 25,
}


FLOOR_R = {
    "mechanisms": ["randomized_response", "shuffled_randomized_response"],
    "sizes": [10_000, 100_000, 1_000_000],
    "orders": [2.0, 5.0, 7.0],
    "replicates": 100,
    "block": 25,
    "relative_errors": [0.2, 0.3, 0.4, 0.6, 0.8],
}


#: The verdict study: how often the family-wise verdict refutes a claim that is exactly true
#: (randomized response against its tight pure-DP curve, the Gaussian mechanism against its
#: own), and how many outputs it needs to refute a weak bug (noise of scale 4 where 5 is
#: claimed), beside a rule that tests every order at the full level (not family-wise).
VERDICT = {
    "mechanisms": ["randomized_response", "gaussian", "gaussian_scale_4"],
    "sizes": [1_000, 3_000, 10_000, 30_000, 100_000, 300_000],
    "orders": [2.0, 5.0, 7.0],
    "replicates": 100,
    "block": 25,
}


#: The finite-sample study: the bound valid at every n against the delta method, on discrete
#: laws with two to about a thousand cells (:mod:`renyi.sweeps.discrete_laws`).
FINITE_SAMPLE = {
    "mechanisms": [
        "binary_rr",
        "shuffled_randomized_response",
        "rounded_laplace",
        "geometric",
        "randomized_response",
    ],
    "sizes": [100, 1_000, 10_000, 100_000, 1_000_000],
    "orders": [2.0, 10.0, 50.0, 100.0],
    "replicates": 200,
    "block": 25,
}


#: The vector-outputs study (:mod:`renyi.sweeps.vector_laws`): cases named ``"{case}-d{d}"``;
#: sizes with more than ``max_values`` numbers per sample (n * d) are left out.
VECTORS = {
    "mechanisms": [
        f"{case}-d{d}" for case in ("gaussian", "product_laplace", "clipped_mean") for d in (2, 3, 10, 100, 1000)
    ]
    + [f"gaussian_correlated-d{d}" for d in (3, 10, 100)],
    "sizes": [10_000, 100_000],
    "orders": [2.0, 5.0],
    "replicates": 200,
    "block": 25,
    "max_values": 10_000_000,
}


#: The vector-outputs study at a million outputs per side, kept in its own file so that the
#: smaller study's rows keep their seeds; d = 1000 is left out (8 GB per sample).
VECTORS_1E6 = {
    "mechanisms": [f"{case}-d{d}" for case in ("gaussian", "product_laplace", "clipped_mean") for d in (2, 3, 10, 100)]
    + [f"gaussian_correlated-d{d}" for d in (3, 10, 100)],
    "sizes": [1_000_000],
    "orders": [2.0, 5.0],
    "replicates": 200,
    "block": 25,
}


#: The vector outputs estimated directly on a grid (``*_kde`` cases) beside the projection, where
#: it matters: Gaussian noise shifted in one coordinate, Laplace noise shifted in all of them.
VECTORS_KDE = {
    "mechanisms": [
        "gaussian_kde-d2",
        "gaussian_kde-d3",
        "laplace_diagonal-d2",
        "laplace_diagonal_kde-d2",
        "laplace_diagonal-d3",
        "laplace_diagonal_kde-d3",
    ],
    "sizes": [10_000, 100_000, 1_000_000],
    "orders": [2.0, 5.0],
    "replicates": 200,
    "block": 25,
}


#: d = 1000 at 10^5 and 10^6 outputs per side.  The full draws (2 * 10^8 numbers per replicate)
#: stop at 10^5; the ``*_sufficient`` cases draw the default route from its sufficient statistics
#: (:mod:`renyi.sweeps.vector_sufficient`: O(n + d) per replicate for the Gaussian laws, the
#: bounded half only for product Laplace) at both sizes, so 10^5 shows them beside the full draws.
#: ``max_values`` skips full draws only.
VECTORS_D1000 = {
    "mechanisms": [f"{case}-d1000" for case in ("gaussian", "product_laplace", "clipped_mean")]
    + [f"{case}_sufficient-d1000" for case in ("gaussian", "product_laplace", "clipped_mean")],
    "sizes": [100_000, 1_000_000],
    "orders": [2.0, 5.0],
    "replicates": 200,
    "block": 25,
    "max_values": 100_000_000,
}


#: The route chosen on held-out outputs (``*_auto``) beside a fixed direction, on three laws where
#: the mean difference loses most: correlated noise, a difference in spread, product Laplace; and
#: at d = 2 a law that differs in its correlation only, where the grid is the candidate to win.
VECTORS_AUTO = {
    "mechanisms": [
        "gaussian_correlated_md-d2",
        "gaussian_correlated-d2",
        "gaussian_correlated_auto-d2",
        "spread-d5",
        "spread_auto-d5",
        "product_laplace-d5",
        "product_laplace_auto-d5",
        "correlation_sign_auto-d2",
    ],
    "sizes": [100_000],
    "orders": [2.0, 3.0],
    "replicates": 200,
    "block": 25,
}


#: Every sweep by name: the parameters that define it (recorded in the manifest).
SWEEPS = {
    "section4": SECTION4,
    "tuning": TUNING,
    "orders": ORDERS,
    "floor_r": FLOOR_R,
    "verdict": VERDICT,
    "finite_sample": FINITE_SAMPLE,
    "vectors": VECTORS,
    "vectors_1e6": VECTORS_1E6,
    "vectors_kde": VECTORS_KDE,
    "vectors_d1000": VECTORS_D1000,
    "vectors_auto": VECTORS_AUTO,
}

#: The slice each sweep recomputes when a chapter asks for it (``load_sweep(name, recompute=True)``):
#: a few sizes and replicates, minutes on a laptop.  Kept apart from :data:`SWEEPS`, whose entries
#: are the parameters recorded in the manifest.
QUICK = {
    "section4": {"sizes": [1_000, 3_000, 10_000, 30_000], "replicates": 20},
    "tuning": {"sizes": [10_000], "replicates": 10},
    "orders": {"sizes": [100, 1_000], "replicates": 20},
    "floor_r": {"sizes": [10_000], "replicates": 10},
    "verdict": {"sizes": [1_000, 3_000], "replicates": 25},
    "finite_sample": {"sizes": [100, 1_000], "replicates": 25},
    "vectors": {"sizes": [10_000], "mechanisms": ["gaussian-d10", "product_laplace-d2"], "replicates": 25},
    "vectors_1e6": {"sizes": [1_000_000], "mechanisms": ["gaussian-d2"], "replicates": 5},
    "vectors_kde": {"sizes": [10_000], "mechanisms": ["gaussian_kde-d2", "laplace_diagonal_kde-d2"], "replicates": 25},
    "vectors_d1000": {"sizes": [1_000_000], "mechanisms": ["gaussian_sufficient-d1000"], "replicates": 25},
    "vectors_auto": {"sizes": [100_000], "mechanisms": ["spread-d5", "spread_auto-d5"], "replicates": 25},
}


#: The level of every shipped bound.
ALPHA = 0.05


#: The columns of each sweep's CSV.
FIELDS = {
    "section4": [
        "mechanism",
        "n",
        "replicate",
        "order",
        "target",
        "estimate",
        "std_error",
        "bias",
        "lower",
        "reliable",
        "bound_order",
        "lower_eq16",
        "target_reverse",
        "lower_both",
        "direction_both",
        "lower_paper",
        "floor_paper",
        "bandwidth",
        "floor",
        "beta",
    ],
    "tuning": [
        "mechanism",
        "n",
        "replicate",
        "order",
        "target",
        "bandwidth_factor",
        "floor_factor",
        "beta_tau",
        "bandwidth",
        "floor",
        "beta",
        "estimate",
        "std_error",
        "bias",
        "lower",
    ],
    "orders": [
        "mechanism",
        "n",
        "replicate",
        "order",
        "target",
        "estimate",
        "std_error",
        "bias",
        "lower",
        "reliable",
        "bound_order",
        "direction",
        "lower_eq16",
    ],
    "verdict": [
        "mechanism",
        "n",
        "replicate",
        "refuted_familywise",
        "refuted_per_order",
        "largest_excess_se",
    ],
    "finite_sample": [
        "mechanism",
        "n",
        "replicate",
        "order",
        "target",
        "target_reverse",
        "fs_forward",
        "fs_reverse",
        "fs_primal",
        "cells",
        "delta_forward",
        "delta_both",
        "direction_both",
    ],
    "vectors": [
        "mechanism",
        "n",
        "replicate",
        "dimension",
        "order",
        "target",
        "lower",
        "estimate",
        "std_error",
        "direction",
        "signal_share",
    ],
    "floor_r": [
        "mechanism",
        "n",
        "replicate",
        "order",
        "target",
        "relative_error",
        "floor",
        "estimate",
        "std_error",
        "bias",
        "lower",
    ],
}
FIELDS["vectors_1e6"] = FIELDS["vectors_kde"] = FIELDS["vectors_d1000"] = FIELDS["vectors"]
FIELDS["vectors_auto"] = FIELDS["vectors"] + ["kind", "divergence_share"]
