"""global_optimum against SCIP on the same instances of problem (3), with the same time limit.

SCIP (through pyscipopt, a benchmark-only dependency) gets the problem as written: output
weights P_U(u), posteriors q_u, their products w_u = P_U(u) q_u (bilinear equalities), the
barycentre sum_u w_u = P_Y, the alpha-lift constraint sum_x P_X(x)^(1 - alpha) (A q_u)_x^alpha
<= e^(alpha eps) per output, and the chi^2-information sum_u sum_y w_u(y) q_u(y) / P_Y(y) - 1 in
an epigraph variable, with P_U sorted to break the outputs' symmetry.  SCIP's best solution is
re-checked in numpy and brought to exact feasibility by the library's own repair (moving the
channel towards P_U until every lift meets the budget in exact arithmetic); its dual bound is
taken as reported.  Soundness columns check that neither solver's exactly feasible value
exceeds the other's upper (dual) bound.

Run ``make bench-scip`` (``python benchmarks/scip_benchmark.py [--time-limit S] [--quick]``);
writes ``benchmarks/results/scip.csv`` and ``scip_machine.json`` (the machine, SCIP's version and the limit).
"""

from __future__ import annotations

import argparse
import math
import time
from pathlib import Path

import numpy as np
from run import RESULTS, record, write_machine, write_results

ORDER_DEFAULT = 3.0


def random_model(k):
    """The random invertible |Y| = k model: half the identity, half Dirichlet(0.5) columns, seed 100 + k."""
    from renyi.lift import LeakageModel

    rng = np.random.default_rng(100 + k)
    a = 0.5 * np.eye(k) + 0.5 * rng.dirichlet(np.full(k, 0.5), size=k).T
    return LeakageModel(a @ rng.dirichlet(np.ones(k)), a)


def instances(quick=False):
    """(label, model, eps, order) of the comparison: random invertible models and six non-square A."""
    from renyi.lift import EXAMPLES, GeneralLeakageModel, epsilon_max

    out = [("medical example", EXAMPLES["medical"], 0.02, 3.0)]
    sizes = (3, 6, 10) if quick else (3, 6, 10, 15, 20)
    for k in sizes:
        model = random_model(k)
        orders = (2.0, 3.0, 5.0) if k in (6, 10) and not quick else (3.0,)
        for order in orders:
            e_max = epsilon_max(model, order)
            out.append((f"random |Y|={k}", model, 0.5 * e_max, order))
            out.append((f"random |Y|={k}", model, 0.02, order))
    for rows, cols in ((4, 8), (5, 10)):
        rng = np.random.default_rng(rows * cols)
        a = rng.dirichlet(np.full(rows, 0.7), size=cols).T
        out.append((f"non-square {rows}x{cols}", GeneralLeakageModel(rng.dirichlet(np.ones(cols)), a), 0.05, 3.0))
    if not quick:
        out += [(f"{kind} {rows}x{cols}", model, 0.1, order) for kind, rows, cols, order, model in wide_and_tall()]
    return out


def wide_and_tall():
    """Non-square A with |Y| = 9 to 12, wide (|X| < |Y|) and tall, with small prior entries.

    (kind, |X|, |Y|, alpha, model): Dirichlet(0.5) columns and a Dirichlet(0.6) prior, seed 100 + i;
    the tall 14 x 12 one has a prior entry of 5.4e-5.
    """
    from renyi.lift import GeneralLeakageModel

    out = []
    for i, (kind, rows, cols, order) in enumerate(
        [("wide", 10, 12, 3.0), ("tall", 14, 12, 5.0), ("wide", 9, 11, 3.0), ("tall", 12, 9, 5.0)], start=1
    ):
        rng = np.random.default_rng(100 + i)
        a = rng.dirichlet(np.full(rows, 0.5), size=cols).T
        out.append((kind, rows, cols, order, GeneralLeakageModel(rng.dirichlet(np.full(cols, 0.6)), a)))
    return out


def scip_solve(model, eps, order, time_limit):
    """SCIP on problem (3) as written; returns its primal channel (or None), bounds and status."""
    from pyscipopt import Model, quicksum

    p_y, a = np.asarray(model.p_y, float), np.asarray(model.A, float)
    p_x = a @ p_y
    n_x, n_y = a.shape
    k = n_y  # Proposition 1: |Y| outputs suffice
    m = Model()
    m.hideOutput()
    m.setParam("limits/time", float(time_limit))
    m.setParam("parallel/maxnthreads", 1)
    pu = [m.addVar(lb=0.0, ub=1.0, name=f"pu{u}") for u in range(k)]
    q = [[m.addVar(lb=0.0, ub=1.0, name=f"q{u}_{y}") for y in range(n_y)] for u in range(k)]
    w = [[m.addVar(lb=0.0, ub=float(p_y[y]), name=f"w{u}_{y}") for y in range(n_y)] for u in range(k)]
    z = [[m.addVar(lb=0.0, ub=1.0, name=f"z{u}_{x}") for x in range(n_x)] for u in range(k)]
    t = m.addVar(lb=0.0, ub=float(n_y), name="t")
    m.addCons(quicksum(pu) == 1)
    for u in range(k):
        m.addCons(quicksum(q[u]) == 1)
        for y in range(n_y):
            m.addCons(w[u][y] == pu[u] * q[u][y])
        for x in range(n_x):
            m.addCons(z[u][x] == quicksum(float(a[x, y]) * q[u][y] for y in range(n_y)))
        m.addCons(
            quicksum(float(p_x[x] ** (1 - order)) * z[u][x] ** order for x in range(n_x)) <= math.exp(order * eps)
        )
        if u + 1 < k:
            m.addCons(pu[u] >= pu[u + 1])
    for y in range(n_y):
        m.addCons(quicksum(w[u][y] for u in range(k)) == float(p_y[y]))
    m.addCons(t <= quicksum(w[u][y] * q[u][y] * float(1 / p_y[y]) for u in range(k) for y in range(n_y)) - 1)
    m.setObjective(t, "maximize")
    started = time.perf_counter()
    m.optimize()
    seconds = time.perf_counter() - started
    status = m.getStatus()
    solution = None
    primal = math.nan
    if m.getNSols() > 0:
        sol = m.getBestSol()
        primal = m.getSolObjVal(sol)
        weights = np.array([max(m.getSolVal(sol, pu[u]), 0.0) for u in range(k)])
        posteriors = np.array([[max(m.getSolVal(sol, q[u][y]), 0.0) for u in range(k)] for y in range(n_y)])
        solution = (weights, posteriors)
    return solution, primal, m.getDualbound(), seconds, status


def repaired_value(model, solution, eps, order):
    """SCIP's weights and posteriors made exactly feasible by the library's own repair; the utility.

    The repair of ``global_optimum``'s candidates: the weights re-solved so that the posteriors
    average to P_Y exactly, then the posteriors moved towards P_Y until every lift meets the
    budget in exact (decimal) arithmetic.
    """
    from renyi.lift.optimum import SearchSettings
    from renyi.lift.optimum.bracket import feasible_mechanism

    if solution is None:
        return math.nan
    weights, posteriors = solution
    keep = weights > 0
    posteriors = posteriors[:, keep] / posteriors[:, keep].sum(axis=0, keepdims=True)
    mech = feasible_mechanism(model, weights[keep] / weights[keep].sum(), posteriors, eps, order, SearchSettings())
    return float(mech.utility)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--time-limit", type=float, default=60.0, help="seconds per instance and solver (60)")
    parser.add_argument("--quick", action="store_true", help="|Y| up to 10, alpha = 3 only")
    parser.add_argument("--results", type=Path, default=RESULTS)
    args = parser.parse_args(argv)
    from renyi.lift import global_optimum

    print(f"# global_optimum against SCIP, {args.time_limit:g} s each")
    print("| case | alpha | eps | ours: lower | upper | gap | s | SCIP: primal | repaired | dual | gap | s | status |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|")
    for label, model, eps, order in instances(args.quick):
        ours = global_optimum(model, eps, order, rtol=1e-6, time_limit=args.time_limit)
        solution, primal, dual, seconds, status = scip_solve(model, eps, order, args.time_limit)
        repaired = repaired_value(model, solution, eps, order)
        scip_gap = (dual - repaired) / dual if dual > 0 and math.isfinite(repaired) else math.nan
        row = dict(
            case=label,
            size=int(np.asarray(model.p_y).size),
            order=order,
            eps=eps,
            ours_lower=ours.lower_bound,
            ours_upper=ours.upper_bound,
            ours_gap=ours.gap,
            ours_seconds=round(ours.elapsed, 2),
            ours_upper_from=ours.upper_bound_source,
            scip_primal=primal,
            scip_repaired=repaired,
            scip_dual=dual,
            scip_gap=scip_gap,
            scip_seconds=round(seconds, 2),
            scip_status=status,
            # soundness: no exactly feasible value above the other's proved bound
            scip_value_within_our_upper=not (repaired > ours.upper_bound),
            our_value_within_scip_dual=not (ours.lower_bound > dual * (1 + 1e-9)),
        )
        record("scip", **row)
        print(
            f"| {label} | {order:g} | {eps:.3g} | {ours.lower_bound:.6g} | {ours.upper_bound:.6g} | {ours.gap:.1e} | "
            f"{ours.elapsed:.1f} | {primal:.6g} | {repaired:.6g} | {dual:.6g} | {scip_gap:.1e} | {seconds:.1f} | "
            f"{status} |",
            flush=True,
        )
    write_results(args.results, machine_too=False)
    from importlib.metadata import version

    from pyscipopt import Model

    write_machine(
        args.results,
        "scip_machine.json",
        pyscipopt=version("pyscipopt"),
        scip=str(Model().version()),
        time_limit=args.time_limit,
    )


if __name__ == "__main__":
    main()
