"""global_optimum at |Y| = 20, and at |Y| = 30-200: the bracket after 60 s on two workers.

The model is ``make bench-scip``'s |Y| = 20 one (:func:`scip_benchmark.random_model`); the
orders are alpha = 2, 3 and 5, the budgets eps_max / 2 (inside Theorem 1's range), 2, 10 and
100 eps_max and eps = 0.02 (the simplex binds), each with the default requested gap (1e-6, a
certificate) and a 60-s limit on two worker processes.  The goal the library is built for is
a gap of at most 1e-3 in every cell; the table says where it holds on the machine of the run.

With ``--sizes 30 50 100 200`` (``make bench-scale-large``) the same random models at those
sizes, alpha = 2 and 3, budgets eps_max / 2, 2 eps_max and 0.02: the bracket, the wall time
against the limit and the process's peak memory so far (the worker's is not counted), in
``lift_scale_large.csv`` and ``lift_scale_large_machine.json``.

Run ``make bench-scale`` (``python benchmarks/lift_scale.py [--time-limit S] [--workers K]``);
writes ``benchmarks/results/lift_scale.csv`` and ``lift_scale_machine.json`` (the machine, the
limit and the workers).
"""

from __future__ import annotations

import argparse
import resource
import time
from pathlib import Path

from run import RESULTS, record, write_machine, write_results
from scip_benchmark import random_model

ORDERS = (2.0, 3.0, 5.0)
# Budgets as multiples of eps_max (the order's own), then the absolute eps = 0.02.
FACTORS = (0.5, 2.0, 10.0, 100.0)
ABSOLUTE = 0.02
# The large sizes' grid: fewer cells, as each may take its whole limit.
LARGE_ORDERS = (2.0, 3.0)
LARGE_FACTORS = (0.5, 2.0)


def budgets(model, order, factors=FACTORS):
    """(label, eps) of the grid's budgets for ``order``."""
    from renyi.lift import epsilon_max

    e_max = epsilon_max(model, order)
    return [(f"{factor:g} eps_max", factor * e_max) for factor in factors] + [(f"{ABSOLUTE:g}", ABSOLUTE)]


def outcome(res) -> dict:
    """The columns a run of ``global_optimum`` adds to a row: its bracket, and how it got there."""
    return dict(
        lower=res.lower_bound,
        upper=res.upper_bound,
        gap=res.gap,
        certified=res.certified,
        seconds=round(res.elapsed, 1),
        boxes=res.boxes,
        upper_from=res.upper_bound_source,
    )


def cells(res) -> str:
    """The same columns as Markdown table cells (lower | upper | gap | certified | s | boxes | from)."""
    return (
        f"{res.lower_bound:.7g} | {res.upper_bound:.7g} | {res.gap:.1e} | {res.certified} | "
        f"{res.elapsed:.1f} | {res.boxes} | {res.upper_bound_source}"
    )


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=20, help="|Y| of the model (20)")
    parser.add_argument("--time-limit", type=float, default=60.0, help="seconds per cell (60)")
    parser.add_argument("--workers", type=int, default=2, help="worker processes of the box bounds (2)")
    parser.add_argument("--sizes", type=int, nargs="+", help="the large grid at these |Y| instead")
    parser.add_argument("--results", type=Path, default=RESULTS)
    args = parser.parse_args(argv)
    if args.sizes:
        return large(args)
    from renyi.lift import global_optimum

    model = random_model(args.size)
    print(f"# global_optimum, |Y| = {args.size}, {args.time_limit:g} s, {args.workers} workers")
    print("| alpha | eps | lower | upper | gap | certified | s | boxes | upper from |")
    print("|---:|---|---:|---:|---:|---|---:|---:|---|")
    for order in ORDERS:
        for label, eps in budgets(model, order):
            res = global_optimum(model, eps, order, time_limit=args.time_limit, workers=args.workers)
            record("lift_scale", size=args.size, order=order, budget=label, eps=eps, **outcome(res))
            print(f"| {order:g} | {label} | {cells(res)} |", flush=True)
    write_results(args.results, machine_too=False)
    write_machine(args.results, "lift_scale_machine.json", time_limit=args.time_limit, workers=args.workers)


def large(args):
    """The large grid: per cell the bracket, the wall time and the peak memory so far."""
    from renyi.lift import global_optimum

    print(f"# global_optimum, |Y| = {args.sizes}, {args.time_limit:g} s, {args.workers} workers")
    print("| |Y| | alpha | eps | lower | upper | gap | certified | s | boxes | upper from | wall s | peak MB |")
    print("|---:|---:|---|---:|---:|---:|---|---:|---:|---|---:|---:|")
    for size in args.sizes:
        model = random_model(size)
        for order in LARGE_ORDERS:
            for label, eps in budgets(model, order, LARGE_FACTORS):
                started = time.perf_counter()
                res = global_optimum(model, eps, order, time_limit=args.time_limit, workers=args.workers)
                wall = time.perf_counter() - started
                peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # (KiB on Linux)
                row = dict(size=size, order=order, budget=label, eps=eps, **outcome(res))
                record("lift_scale_large", **row, wall=round(wall, 1), peak_mb=round(peak))
                print(f"| {size} | {order:g} | {label} | {cells(res)} | {wall:.1f} | {peak:.0f} |", flush=True)
    write_results(args.results, machine_too=False)
    write_machine(args.results, "lift_scale_large_machine.json", time_limit=args.time_limit, workers=args.workers)


if __name__ == "__main__":
    main()
