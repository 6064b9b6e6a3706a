"""A bound on memory-mapped vector outputs too large to copy: d = 1000, n = 10^6 per side (``make bench-vectors``).

Each replicate writes the outputs of the Gaussian mechanism (noise variance 10 per coordinate,
a unit shift in the first) to two ``.npy`` files of 8 GB each, in chunks of rows drawn from a
seeded stream, then bounds them through ``rdp_lower_bound(np.load(..., mmap_mode="r"), ...,
projection="mean-difference")``: the library reads each file in chunks, once to learn the
direction on a held-out half and once to project the rest.  Recorded per replicate: the
seconds of the bound, the peak memory it allocates (``tracemalloc``, numpy included; the
mapped files are the operating system's page cache, not allocations), and the bound at
orders 2 and 5 beside the exact divergence order / 20.

A handful of replicates measure the mean bound/truth and the cost; the coverage study at
smaller d is ``data/part1/vectors*.csv``.  Needs about 17 GB of free disk in ``--scratch``.
Writes ``benchmarks/results/vector_streaming.csv``.
"""

from __future__ import annotations

import argparse
import csv
import shutil
import tempfile
import time
import tracemalloc
from pathlib import Path

import numpy as np
from renyi.audit import rdp_lower_bound

RESULTS = Path(__file__).resolve().parent / "results"
SIGMA = 10**0.5
ORDERS = [2.0, 5.0]
ROWS_PER_CHUNK = 10_000


def write_outputs(path: Path, n: int, d: int, shift: float, rng: np.random.Generator) -> None:
    """n rows of N(shift e_1, 10 I) written to ``path`` in chunks, never whole in memory."""
    out = np.lib.format.open_memmap(path, mode="w+", dtype=np.float64, shape=(n, d))
    for start in range(0, n, ROWS_PER_CHUNK):
        block = rng.normal(0.0, SIGMA, (min(ROWS_PER_CHUNK, n - start), d))
        block[:, 0] += shift
        out[start : start + block.shape[0]] = block
    out.flush()
    del out


def replicate(scratch: Path, n: int, d: int, seed: int, rep: int) -> dict:
    """One replicate: write both samples, bound them from the mapped files, and measure."""
    draw_p, draw_q, split = np.random.default_rng(np.random.SeedSequence(seed, spawn_key=(rep,))).spawn(3)
    write_outputs(scratch / "p.npy", n, d, 1.0, draw_p)
    write_outputs(scratch / "q.npy", n, d, 0.0, draw_q)
    p, q = (np.load(scratch / name, mmap_mode="r") for name in ("p.npy", "q.npy"))
    tracemalloc.start()
    start = time.perf_counter()
    bounds = rdp_lower_bound(p, q, ORDERS, projection="mean-difference", rng=split)
    seconds = time.perf_counter() - start
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    row = {
        "replicate": rep,
        "n": n,
        "d": d,
        "input_gib": (p.nbytes + q.nbytes) / 2**30,
        "seconds": seconds,
        "peak_mib": peak / 2**20,
        "signal_share": bounds[0].projection["signal_share"],
    }
    for b in bounds:
        row[f"ratio_{b.order:g}"] = b.lower / (b.order / 20)
    del p, q
    return row


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-n", type=int, default=1_000_000, help="outputs per side")
    parser.add_argument("-d", type=int, default=1000, help="dimension")
    parser.add_argument("--replicates", type=int, default=5)
    parser.add_argument("--seed", type=int, default=20261203)
    parser.add_argument("--scratch", type=Path, default=None, help="folder for the two files (default: a temp dir)")
    parser.add_argument("--results", type=Path, default=RESULTS)
    args = parser.parse_args(argv)
    scratch = Path(tempfile.mkdtemp(dir=args.scratch))
    need = 2 * args.n * args.d * 8
    free = shutil.disk_usage(scratch).free
    if free < 1.05 * need:
        raise SystemExit(f"bench-vectors: needs {need / 2**30:.1f} GiB in {scratch}, {free / 2**30:.1f} GiB free")
    rows = []
    print(f"# d = {args.d}, n = {args.n:,} per side, memory-mapped .npy, projection='mean-difference'")
    print("| replicate | input GiB | seconds | peak MiB | bound/exact λ=2 | λ=5 | signal share |")
    print("|---:|---:|---:|---:|---:|---:|---:|")
    try:
        for rep in range(args.replicates):
            row = replicate(scratch, args.n, args.d, args.seed, rep)
            rows.append(row)
            print(
                f"| {rep} | {row['input_gib']:.1f} | {row['seconds']:.1f} | {row['peak_mib']:.0f} | "
                f"{row['ratio_2']:.3f} | {row['ratio_5']:.3f} | {row['signal_share']:.3f} |",
                flush=True,
            )
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    args.results.mkdir(parents=True, exist_ok=True)
    with open(args.results / "vector_streaming.csv", "w", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=list(rows[0]), lineterminator="\n")
        writer.writeheader()
        writer.writerows(rows)
    print(f"\nwrote vector_streaming.csv to {args.results}")


if __name__ == "__main__":
    main()
