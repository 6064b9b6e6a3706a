"""Where the bracket of the hardest |Y| = 20 cell goes with more time: 60 s against 10 minutes.

``make bench-scale``'s cell alpha = 5, eps = 0.02 (the simplex binds) keeps a gap after 60 s on
two workers.  This run gives the same call 60 s and then 600 s (``--limits``), so that the
chapter *General leakage matrices* can show both brackets side by side.  Each is proved: the
lower end is an exactly feasible mechanism, the upper end a valid bound; more time only narrows
the gap.

Run ``make bench-long`` (``python benchmarks/lift_long_run.py [--limits 60 600] [--workers 2]``);
writes ``benchmarks/results/lift_long.csv`` and ``lift_long_machine.json``.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from lift_scale import cells, outcome
from run import RESULTS, record, write_machine, write_results
from scip_benchmark import random_model

ORDER = 5.0
EPS = 0.02
SIZE = 20


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--limits", type=float, nargs="+", default=[60.0, 600.0], help="time limits, s")
    parser.add_argument("--workers", type=int, default=2, help="worker processes of the box bounds (2)")
    parser.add_argument("--results", type=Path, default=RESULTS)
    args = parser.parse_args(argv)
    from renyi.lift import global_optimum

    model = random_model(SIZE)
    print(f"# global_optimum, |Y| = {SIZE}, alpha = {ORDER:g}, eps = {EPS:g}, {args.workers} workers")
    print("| limit (s) | lower | upper | gap | certified | s | boxes | upper from |")
    print("|---:|---:|---:|---:|---|---:|---:|---|")
    for limit in args.limits:
        res = global_optimum(model, EPS, ORDER, time_limit=limit, workers=args.workers)
        record("lift_long", size=SIZE, order=ORDER, eps=EPS, time_limit=limit, **outcome(res))
        print(f"| {limit:g} | {cells(res)} |", flush=True)
    write_results(args.results, machine_too=False)
    write_machine(args.results, "lift_long_machine.json", workers=args.workers)


if __name__ == "__main__":
    main()
