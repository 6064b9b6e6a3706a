r"""Real libraries' discrete mechanisms audited with both bounds: ``data/part1/libraries_fs.csv``.

The discrete configurations of :mod:`renyi.sweeps.library_configs` (diffprivlib's
``Geometric`` and OpenDP's integer ``then_laplace``, both tight pure 1-DP laws) are audited
at :math:`n=10^3`–:math:`10^6` per side with the delta method (each order at
``ALPHA / len(ORDERS)``, both directions: the verdict's setting) and with the finite-sample
bound (one event at ``ALPHA`` for every order and direction), on the same outputs.

Needs the optional libraries (``pip install -e .[libraries]``).  Run
``python -m renyi.sweeps.library_finite_sample --out data``; it refuses to overwrite a shipped
file unless ``--force`` is given.  Seeds as in :mod:`renyi.sweeps.libraries` (OpenDP cannot
be seeded).  Taught in the chapter *A bound valid at every n* (``book/part1``).
"""

from __future__ import annotations

import argparse
import csv
import sys
from pathlib import Path

import numpy as np

from .._docs import CLI_MAIN, fill
from ..audit import rdp_lower_bound, verdict
from .datafiles import ManifestError

__all__ = ["ORDERS", "SIZES", "REPLICATES", "FIELDS", "run_one", "run", "load", "main"]

ROOT_SEED = 0x5EED_2026_1203_0038
ORDERS = (2.0, 5.0, 10.0, 50.0)
SIZES = (1_000, 10_000, 100_000, 1_000_000)
REPLICATES = 5
ALPHA = 0.05
_TEXT = ("config", "library")
_BOOL = ("delta_refuted", "fs_refuted")
_INT = ("n", "replicate", "cells")
FIELDS = [
    "config",
    "library",
    "n",
    "replicate",
    "order",
    "claimed",
    "truth",
    "delta_lower",
    "fs_lower",
    "fs_primal",
    "cells",
    "delta_refuted",
    "fs_refuted",
]


def run_one(config, n: int, seed: int) -> list[dict]:
    """Both bounds and both verdicts on one pair of samples of ``config``.

    Parameters
    ----------
    config : renyi.sweeps.library_configs.Config
        A discrete configuration.
    n : int
        Outputs per side.
    seed : int
        Seed of the first side (the second gets ``seed + 1``; OpenDP ignores both).

    Returns
    -------
    list of dict
        One row per order.
    """
    p, q = config.sampler(1, n, seed), config.sampler(0, n, seed + 1)
    delta = rdp_lower_bound(p, q, list(ORDERS), alpha=ALPHA / len(ORDERS), discrete=True)
    fs = rdp_lower_bound(p, q, list(ORDERS), alpha=ALPHA, discrete=True, method="finite-sample")
    refuted = {"delta": verdict(delta, config.claim, alpha=ALPHA).refuted}
    refuted["fs"] = verdict(fs, config.claim, alpha=ALPHA).refuted
    return [
        {
            "config": config.name,
            "library": config.library,
            "n": n,
            "order": d.order,
            "claimed": config.claim(d.order),
            "truth": config.truth(d.order),
            "delta_lower": d.lower,
            "fs_lower": f.lower,
            "fs_primal": f.primal,
            "cells": f.cells,
            "delta_refuted": refuted["delta"],
            "fs_refuted": refuted["fs"],
        }
        for d, f in zip(delta, fs)
    ]


def _discrete_configs() -> list:
    from .library_configs import configs

    return [c for c in configs().values() if c.discrete and not c.miscalibrated]


def run(out: Path, *, force=False, progress=True) -> Path:
    """Every discrete configuration at every size; writes the CSV and its MANIFEST entry.

    Parameters
    ----------
    out : Path
        The data folder.
    force : bool, default False
        Overwrite a shipped file.
    progress : bool, default True

    Returns
    -------
    Path
    """
    from importlib.metadata import version

    from .datafiles import file_sha256, git_output, read_manifest, update_manifest, versions, write_rows

    path = Path(out) / "part1" / "libraries_fs.csv"
    read_manifest(Path(out) / "MANIFEST.json")
    if path.exists() and not force:
        raise FileExistsError(f"{path} exists; pass --force to overwrite the shipped file")
    rows = []
    for ci, config in enumerate(_discrete_configs()):
        for ni, n in enumerate(SIZES):
            for rep in range(REPLICATES):
                seed = int(np.random.SeedSequence(ROOT_SEED, spawn_key=(ci, ni, rep)).generate_state(1)[0])
                rows.extend(row | {"replicate": rep} for row in run_one(config, n, seed))
            if progress:
                print(f"{config.name}: n = {n:,} done", file=sys.stderr, flush=True)
    path.parent.mkdir(parents=True, exist_ok=True)
    write_rows(path, FIELDS, rows)
    entry = {
        "bytes": path.stat().st_size,
        "sha256": file_sha256(path),
        "rows": len(rows),
        "command": "python -m renyi.sweeps.library_finite_sample --out data",
        "git_commit": git_output("rev-parse", "HEAD"),
        "lib_dirty": bool(git_output("status", "--porcelain", "lib")),
        "root_seed": ROOT_SEED,
        "spawn_scheme": "SeedSequence(root_seed, spawn_key=(config, n, replicate)).generate_state(1) -> seed s; "
        "diffprivlib random_state s (x) and s + 1 (x'); OpenDP is not seedable",
        "parameters": {
            "orders": list(ORDERS),
            "alpha": ALPHA,
            "sizes": list(SIZES),
            "replicates": REPLICATES,
            "configs": {c.name: {"library": c.library, "call": c.description} for c in _discrete_configs()},
        },
        "versions": {**versions(), "diffprivlib": version("diffprivlib"), "opendp": version("opendp")},
    }
    for line in update_manifest(out, {"part1/libraries_fs.csv": entry}):
        print(f"renyi.sweeps.library_finite_sample: warning: {line}", file=sys.stderr)
    return path


def load(data: Path | None = None) -> list[dict]:
    """The shipped rows of ``data/part1/libraries_fs.csv`` (needs no optional library).

    Parameters
    ----------
    data : Path, optional
        The data folder (default: the repository's ``data/``).

    Returns
    -------
    list of dict
    """
    folder = Path(data) if data is not None else Path(__file__).resolve().parents[3] / "data"
    path = folder / "part1" / "libraries_fs.csv"
    with open(path, newline="") as fh:
        rows = list(csv.DictReader(fh))
    try:
        return [{k: _typed(k, v) for k, v in row.items()} for row in rows]
    except (TypeError, ValueError, AttributeError):
        raise ValueError(
            f"{path}: a malformed row (a missing or non-numeric field); restore the shipped file"
        ) from None


def _typed(key, value):
    if key in _TEXT:
        return value
    if key in _BOOL:
        return value == "True"
    return int(value) if key in _INT else float(value)


@fill(cli_main=CLI_MAIN)
def main(argv=None) -> int:
    """The command line ``python -m renyi.sweeps.library_finite_sample``.

    {{cli_main}}
    """
    parser = argparse.ArgumentParser(
        prog="python -m renyi.sweeps.library_finite_sample", description=__doc__.splitlines()[0]
    )
    parser.add_argument("--out", type=Path, required=True, help="the data folder (data/)")
    parser.add_argument("--force", action="store_true", help="overwrite a shipped libraries_fs.csv")
    args = parser.parse_args(argv)
    try:
        _discrete_configs()
    except ImportError as exc:
        print(
            f"renyi.sweeps.library_finite_sample: error: {exc.name or exc} is not installed; "
            "pip install -e .[libraries]",
            file=sys.stderr,
        )
        return 1
    try:
        print(run(args.out, force=args.force))
    except (FileExistsError, ManifestError) as exc:
        print(f"renyi.sweeps.library_finite_sample: error: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
