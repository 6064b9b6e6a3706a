r"""Audits of real DP libraries (diffprivlib, OpenDP): the ``libraries`` sweep behind ``data/part1/libraries.csv``.

Each configuration wraps a documented call of a third-party library as a black box
``sample(value, n, seed) -> outputs`` on the adjacent pair "query value 1 against 0"
(a counting query, sensitivity 1), together with the RDP curve its documentation implies
(``claim``) and, where it has a closed form, the exact divergence of the pair (``truth``).
Three *mis-calibrated* configurations reproduce realistic bugs in those same calls.

The libraries are an optional extra (``pip install -e .[libraries]``); nothing else in
the compendium imports this module.  Run ``python -m renyi.sweeps.libraries --out data`` (or
``make data-libraries``): it refuses to overwrite a shipped file unless ``--force`` is given.

Reproducibility: diffprivlib's mechanisms take a ``random_state`` and are seeded from
``SeedSequence(ROOT_SEED, spawn_key=(config, n, replicate))``; OpenDP samples from the
operating system's secure generator and cannot be seeded, so its rows are reproducible
only in distribution (``tests/test_libraries.py`` checks them statistically).

Taught in the chapter *Auditing real libraries* (``book/part1``).
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from pathlib import Path

import numpy as np

from .._docs import CLI_MAIN, fill
from ..audit import verdict
from .datafiles import ManifestError
from .library_configs import Config, configs

__all__ = [
    "ROOT_SEED",
    "ORDERS",
    "ALPHA",
    "run_one",
    "run",
    "load",
    "summarize",
    "main",
]

ROOT_SEED = 0x5EED_2026_1201_0015
ORDERS = (2.0, 5.0, 7.0)
ALPHA = 0.05
SIZES = (10_000, 100_000)
DETECTION_SIZES = (1_000, 3_000, 10_000, 30_000, 100_000)
REPLICATES = 5
FIELDS = [
    "config",
    "library",
    "miscalibrated",
    "n",
    "replicate",
    "order",
    "lower",
    "estimate",
    "std_error",
    "claimed",
    "truth",
    "refuted",
    "seconds_sampling",
    "seconds_bound",
]


def _seed(config_index, n_index, replicate) -> int:
    ss = np.random.SeedSequence(ROOT_SEED, spawn_key=(config_index, n_index, replicate))
    return int(ss.generate_state(1)[0])


def run_one(config: Config, n: int, seed_p: int, seed_q: int) -> list[dict]:
    """Sample both sides, bound at ALPHA / len(ORDERS) per order, and return one row per order.

    Parameters
    ----------
    config : Config
    n : int
        Samples per side.
    seed_p, seed_q : int
        Seeds of the two sides (ignored by OpenDP).

    Returns
    -------
    list of dict
    """
    start = time.perf_counter()
    one, zero = (1, 0) if config.discrete else (1.0, 0.0)  # integer mechanisms refuse floats
    p = config.sampler(one, n, seed_p)
    q = config.sampler(zero, n, seed_q)
    sampled = time.perf_counter()
    from ..audit import rdp_lower_bound

    bounds = rdp_lower_bound(p, q, list(ORDERS), alpha=ALPHA / len(ORDERS), discrete=config.discrete or None)
    result = verdict(bounds, config.claim, alpha=ALPHA)
    bounded = time.perf_counter()
    return [
        {
            "config": config.name,
            "library": config.library,
            "miscalibrated": config.miscalibrated,
            "n": n,
            "order": b.order,
            "lower": b.lower,
            "estimate": b.estimate,
            "std_error": b.std_error,
            "claimed": config.claim(b.order),
            "truth": config.truth(b.order) if config.truth else math.nan,
            "refuted": result.refuted,
            "seconds_sampling": sampled - start,
            "seconds_bound": bounded - sampled,
        }
        for b in bounds
    ]


def run(out: Path, *, force=False, sizes=None, replicates=REPLICATES, progress=True) -> Path:
    """The whole sweep; writes ``out/part1/libraries.csv`` and its MANIFEST entry.

    Parameters
    ----------
    out : Path
        The data folder.
    force : bool, default False
    sizes : sequence of int, optional
    replicates : int, default REPLICATES
    progress : bool, default True

    Returns
    -------
    Path
        The file written.
    """
    from .datafiles import file_sha256, git_output, read_manifest, update_manifest, versions, write_rows

    path = Path(out) / "part1" / "libraries.csv"
    read_manifest(Path(out) / "MANIFEST.json")  # an unreadable manifest stops the run before hours of sampling
    if path.exists() and not force:
        raise FileExistsError(f"{path} exists; pass --force to overwrite the shipped file")
    rows = []
    for ci, (name, config) in enumerate(configs().items()):
        grid = sizes or (DETECTION_SIZES if config.miscalibrated else SIZES)
        for ni, n in enumerate(grid):
            for rep in range(replicates):
                seed = _seed(ci, ni, rep)
                for row in run_one(config, n, seed, seed + 1):
                    row["replicate"] = rep
                    rows.append(row)
            if progress:
                print(f"{name}: n = {n:,} done", file=sys.stderr, flush=True)
    path.parent.mkdir(parents=True, exist_ok=True)
    write_rows(path, FIELDS, rows)
    from importlib.metadata import version

    entry = {
        "bytes": path.stat().st_size,
        "sha256": file_sha256(path),
        "rows": len(rows),
        "command": "python -m renyi.sweeps.libraries --out data",
        "git_commit": git_output("rev-parse", "HEAD"),
        "lib_dirty": bool(git_output("status", "--porcelain", "lib")),
        "root_seed": ROOT_SEED,
        "spawn_scheme": "SeedSequence(root_seed, spawn_key=(config, n, replicate)).generate_state(1) -> seed s; "
        "diffprivlib random_state s (x) and s + 1 (x'); OpenDP is not seedable",
        "parameters": {
            "orders": list(ORDERS),
            "alpha": ALPHA,
            "sizes": list(SIZES),
            "detection_sizes": list(DETECTION_SIZES),
            "replicates": replicates,
            "configs": {
                c.name: {"library": c.library, "call": c.description, "claim": c.claim_basis}
                for c in configs().values()
            },
        },
        "versions": {
            **versions(),
            "diffprivlib": version("diffprivlib"),
            "opendp": version("opendp"),
            "scikit-learn": version("scikit-learn"),
        },
    }
    for line in update_manifest(out, {"part1/libraries.csv": entry}):
        print(f"renyi.sweeps.libraries: warning: {line}", file=sys.stderr)
    return path


_TEXT = ("config", "library")
_BOOL = ("miscalibrated", "refuted")
_INT = ("n", "replicate")


def load(data: Path | None = None) -> list[dict]:
    """The shipped rows of ``data/part1/libraries.csv`` (needs no optional library).

    Parameters
    ----------
    data : Path, optional
        The data folder (default: the repository's ``data/``).

    Returns
    -------
    list of dict
    """
    import csv

    folder = Path(data) if data is not None else Path(__file__).resolve().parents[3] / "data"
    with open(folder / "part1" / "libraries.csv", newline="") as fh:
        rows = list(csv.DictReader(fh))
    out = []
    for line, row in enumerate(rows, 2):
        try:
            out.append(
                {
                    k: (v if k in _TEXT else v == "True" if k in _BOOL else int(v) if k in _INT else float(v))
                    for k, v in row.items()
                }
            )
        except (TypeError, ValueError, AttributeError):
            raise ValueError(
                f"{folder / 'part1' / 'libraries.csv'}, line {line}: malformed row (a missing or "
                "non-numeric field); restore the shipped file"
            ) from None
    return out


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not an integer: {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {value}")
    return value


def summarize(rows, n: int) -> dict:
    """Per configuration at ``n`` outputs per side: refutations and mean bound ratios.

    Parameters
    ----------
    rows : list of dict
        Rows of :func:`load` (one per configuration, n, replicate and order).
    n : int
        The sample size to summarise.

    Returns
    -------
    dict
        Keyed by configuration name, in the order of ``rows``: ``library``; ``refuted`` and
        ``runs`` (replicates whose claim was refuted, and all replicates); ``lower/claim`` and
        ``lower/truth``, each a dict order -> the mean of the bound divided by the claimed
        curve and by the exact divergence (NaN where no closed form is known); and the mean
        seconds of ``sampling`` and of the ``bound``.
    """
    out = {}
    for name in dict.fromkeys(r["config"] for r in rows):
        sel = [r for r in rows if r["config"] == name and r["n"] == n]
        if not sel:
            continue
        reps = {r["replicate"]: r["refuted"] for r in sel}
        by_order = {}
        for r in sel:
            by_order.setdefault(r["order"], []).append(r)
        out[name] = {
            "library": sel[0]["library"],
            "refuted": sum(reps.values()),
            "runs": len(reps),
            "lower/claim": {o: float(np.mean([r["lower"] / r["claimed"] for r in v])) for o, v in by_order.items()},
            "lower/truth": {o: float(np.mean([r["lower"] / r["truth"] for r in v])) for o, v in by_order.items()},
            "sampling": float(np.mean([r["seconds_sampling"] for r in sel])),
            "bound": float(np.mean([r["seconds_bound"] for r in sel])),
        }
    return out


@fill(cli_main=CLI_MAIN)
def main(argv=None) -> int:
    """The command line ``python -m renyi.sweeps.libraries`` (``make data-libraries``).

    {{cli_main}}
    """
    parser = argparse.ArgumentParser(prog="python -m renyi.sweeps.libraries", description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, required=True, help="the data folder (data/)")
    parser.add_argument("--force", action="store_true", help="overwrite a shipped libraries.csv")
    parser.add_argument("--replicates", type=_positive_int, default=REPLICATES)
    args = parser.parse_args(argv)
    try:
        configs()
    except ImportError as exc:
        print(
            f"renyi.sweeps.libraries: error: {exc.name or exc} is not installed; pip install -e .[libraries]",
            file=sys.stderr,
        )
        return 1
    try:
        print(run(args.out, force=args.force, replicates=args.replicates))
    except (FileExistsError, ManifestError) as exc:
        print(f"renyi.sweeps.libraries: error: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
