r"""``python -m renyi design``: an α-lift mechanism for your own leakage matrix (Part II).

Inputs are a leakage matrix :math:`A=P_{X|Y}` (rows x, columns y; each column a
distribution) and a prior, :math:`P_X` or :math:`P_Y`.  The command prints Theorem 1's
certificate and band, designs a mechanism, writes its channel :math:`P_{U|Y}`
(rows u, columns y; each column sums to one) and checks every α-lift of the
*written* channel against :math:`e^\epsilon`.  Taught in the chapter *Design your
own mechanism* (``book/part2``).
"""

from __future__ import annotations

import argparse
import json
import math
import sys

import numpy as np

from .leakage_io import DesignError, build_model, check_output, load_leakage, load_prior, write_channel

__all__ = ["design", "print_report", "run", "add_parser", "MAX_OPTIMUM_Y"]

#: Above this many values of Y, ``design`` notes that the optimum's gap will likely stay open.
MAX_OPTIMUM_Y = 30
#: Largest order * eps: e^(order * eps) must be a finite double (log of the largest is 709.8).
MAX_LOG_BUDGET = 700.0

EXAMPLES = """\
examples:
  # the paper's medical example: P_X given inline, alpha = 3, eps = 0.02
  python -m renyi design --leakage A.csv --prior 0.2,0.3,0.5 --eps 0.02 --order 3 --out channel.csv
  # a prior on Y instead, the two-scale mechanism, machine-readable output
  python -m renyi design --leakage A.npy --prior p_y.csv --prior-of y --eps 0.01 --order 2 \\
      --method two-scale --json
file formats: .csv/.txt (comma or whitespace separated, '#' comments), .npy, .json (a list of rows)
"""


def design(args) -> dict:
    """Run the design command and return everything it reports (the JSON form).

    Parameters
    ----------
    args : argparse.Namespace
        The parsed options of ``python -m renyi design``.

    Returns
    -------
    dict
    """
    from ..lift import (
        LeakageModel,
    )

    _check_options(args)
    if args.out:
        check_output(args.out, [args.leakage, args.prior])
    a = load_leakage(args.leakage, transpose=args.transpose)
    model = build_model(a, load_prior(args.prior, "--prior"), args.prior_of)
    eps, order = args.eps, args.order
    if eps == 0 and isinstance(model, LeakageModel):
        raise DesignError(
            "--eps 0 with an invertible leakage matrix allows only the trivial mechanism (utility 0); "
            "utility at eps = 0 needs a non-injective matrix (Proposition 4)"
        )
    report = {
        "n_x": int(a.shape[0]),
        "n_y": int(a.shape[1]),
        "order": order,
        "eps": eps,
        "lift_limit": math.exp(eps),
        "p_y": model.p_y.tolist(),
        "p_x": model.p_x.tolist(),
        "method": args.method,
        "rtol": args.rtol,
    }
    report["theorem1"] = _theorem1(model, eps, order, args)
    mech = _designed(model, eps, order, args, report)
    channel = mech.p_u_given_y
    if args.out:
        header = (
            f"P_(U|Y): row u = output, column y = value of Y; each column sums to 1. "
            f"alpha-lift <= e^{eps:g} at order {order:g}; renyi design --method {args.method}"
        )
        write_channel(args.out, channel, header)
        channel = np.load(args.out) if args.out.endswith(".npy") else np.loadtxt(args.out, delimiter=",", ndmin=2)
    lifts, use, passed = _check_written(model, channel, eps, order, args.method)
    report.update(
        {
            "utility": mech.utility,
            "outputs": int(channel.shape[0]),
            "p_u": mech.p_u.tolist(),
            "p_u_given_y": channel.tolist(),
            "lifts": lifts.tolist(),
            "max_lift": float(lifts.max()),
            "budget_use": use,
            "check_passed": bool(passed),
            "out": args.out,
        }
    )
    return report


def _designed(model, eps, order, args, report):
    """The mechanism of ``--method``; the optimum's bracket goes into ``report``."""
    from ..lift import asymmetric_mechanism, directional_mechanism, global_optimum

    if args.method == "optimum":
        if model.p_y.size > MAX_OPTIMUM_Y:
            print(
                f"renyi: note: |Y| = {model.p_y.size}: above |Y| = {MAX_OPTIMUM_Y} the optimum's search "
                f"rarely closes its gap within --time-limit {args.time_limit:g}; expect a proved bracket, "
                "possibly wide, around a feasible mechanism",
                file=sys.stderr,
            )
        mech = global_optimum(model, eps, order, rtol=args.rtol, time_limit=args.time_limit, workers=args.workers)
        report["bracket"] = {
            "lower": mech.lower_bound,
            "upper": mech.upper_bound,
            "gap": mech.gap,
            "upper_bound_source": mech.upper_bound_source,
            "certified": mech.certified,
            "seconds": mech.elapsed,
        }
    elif args.method == "two-scale":
        mech = asymmetric_mechanism(model, eps, order)
    else:
        mech = directional_mechanism(model, eps, order)
    return mech


def _check_written(model, channel, eps, order, method):
    """Every α-lift of ``channel`` (the channel as written), its use of the budget, and the verdict."""
    from ..divergence import alpha_lift
    from ..lift._numerics import FEASIBILITY_RTOL, ZERO_BUDGET_ATOL
    from ..lift.channels import budget_use

    joint = channel * model.p_y[None, :]
    p_x_given_u = model.A @ (joint / joint.sum(axis=1, keepdims=True)).T
    lifts = np.atleast_1d(alpha_lift(p_x_given_u / p_x_given_u.sum(axis=0), model.p_x, order, tol=1e-8))
    if eps > 0:
        # Decided in decimal arithmetic: at small eps the budget is below the floats' round-off.
        # The optimum is checked with no tolerance, the designed mechanisms with the library's
        # 1e-10 of the budget (they are built in double precision).
        use = budget_use(model, channel, eps, order)
        passed = use <= (1 if method == "optimum" else 1 + FEASIBILITY_RTOL)
    else:
        use, passed = None, bool(lifts.max() <= 1 + ZERO_BUDGET_ATOL)
    return lifts, use, passed


def _check_options(args) -> None:
    """The numeric options of ``design``, each checked with a message that names it."""
    if args.workers == 0 or args.workers < -1:
        raise DesignError(f"--workers must be a positive process count or -1 (every core), got {args.workers}")
    if not args.eps >= 0 or not math.isfinite(args.eps):
        raise DesignError(f"--eps must be a finite budget >= 0, got {args.eps:g}")
    if not args.order > 1 or not math.isfinite(args.order):
        raise DesignError(f"--order (the order alpha) must be finite and > 1, got {args.order:g}")
    if args.order * args.eps > MAX_LOG_BUDGET:
        raise DesignError(
            f"--eps {args.eps:g} at --order {args.order:g}: the budget e^(order*eps) overflows double "
            f"precision (order*eps must be at most {MAX_LOG_BUDGET:g}); no mechanism design needs it"
        )
    if not args.rtol > 0 or not args.rtol < 1:
        raise DesignError(f"--rtol must lie strictly between 0 and 1, got {args.rtol:g}")
    if not args.time_limit > 0:
        raise DesignError(f"--time-limit must be a number of seconds > 0, got {args.time_limit:g}")


def _theorem1(model, eps, order, args):
    """Theorem 1's certificate for the report (None for a general leakage matrix)."""
    from ..lift import LeakageModel, certificate, epsilon_max

    if isinstance(model, LeakageModel):
        cert = certificate(model, eps, order)
        e_max = epsilon_max(model, order)
        theorem1 = {
            "epsilon_max": e_max,
            "delta0": cert.delta0,
            "delta_bar": cert.delta_bar,
            "rho": cert.rho,
            "admissible": cert.admissible,
            "failing": list(cert.failing),
            "V_minus": cert.V_minus,
            "V0": cert.V0,
            "V_plus": cert.V_plus,
        }
        # The optimum's bracket is proved at every eps; the closed forms rest on Theorem 1's range.
        if not cert.admissible and args.method != "optimum" and not args.above_epsilon_max:
            raise DesignError(
                f"--eps {eps:g} is above epsilon_max = {e_max:.6g}, outside Theorem 1's range at order "
                f"{order:g}, where the {args.method} mechanism has no guarantee of utility; use "
                "--method optimum (its bracket is proved at every eps) or pass --above-epsilon-max"
            )
        return theorem1
    if args.method != "optimum":
        raise DesignError(f"--method {args.method} needs a square, invertible leakage matrix; use --method optimum")
    return None


def print_report(r: dict) -> None:
    """Print the human-readable summary of :func:`design`.

    Parameters
    ----------
    r : dict
        The result of :func:`design`.

    Returns
    -------
    None
    """
    print(
        f"leakage: |X| = {r['n_x']}, |Y| = {r['n_y']}; P_Y = "
        + np.array2string(np.array(r["p_y"]), precision=6, separator=", ")
    )
    print(
        f"budget: order alpha = {r['order']:g}, eps = {r['eps']:g} (every alpha-lift <= e^eps = {r['lift_limit']:.10g})"
    )
    t1 = r["theorem1"]
    if t1 is None:
        print("Theorem 1: not applicable (the leakage matrix is not square and invertible)")
    else:
        state = "admissible" if t1["admissible"] else "NOT admissible: " + "; ".join(t1["failing"])
        print(
            f"Theorem 1: epsilon_max = {t1['epsilon_max']:.6g}; at this eps delta0 = {t1['delta0']:.4g}, "
            f"delta_bar = {t1['delta_bar']:.4g}, rho = {t1['rho']:.4g}, {state}"
        )
        if t1["admissible"]:
            print(
                f"  certified band: V_- = {t1['V_minus']:.6g} <= V <= V_+ = {t1['V_plus']:.6g} "
                f"(surrogate V_0 = {t1['V0']:.6g})"
            )
    print(f"mechanism ({r['method']}): chi2(Y;U) = {r['utility']:.6g} with {r['outputs']} outputs")
    if "bracket" in r:
        b = r["bracket"]
        # Certified gaps print as such: their last digits depend on the search (JSON has them).
        gap = f"certified gap < {r['rtol']:g}" if b["certified"] else f"gap {b['gap']:.1e}, not certified"
        print(
            f"  optimum: {b['lower']:.6g} <= V <= {b['upper']:.6g} ({gap}; upper bound from {b['upper_bound_source']})"
        )
    verdict = "ok" if r["check_passed"] else "FAILED"
    where = f"the channel in {r['out']}" if r["out"] else "the channel"
    print(f"check: max alpha-lift of {where} = {r['max_lift']:.10f} <= e^eps = {r['lift_limit']:.10f}: {verdict}")
    if r["budget_use"] is not None:
        print(
            f"  in decimal arithmetic: max (Phi - 1) / (e^(alpha eps) - 1) = {r['budget_use']:.10f} "
            "(at most 1: within the budget)"
        )
    if r["out"]:
        print(f"wrote P_(U|Y) to {r['out']} (rows u = outputs, columns y; each column sums to 1)")


def run(args) -> int:
    """The ``design`` command: run it, print the summary or JSON, return the exit status.

    Parameters
    ----------
    args : argparse.Namespace

    Returns
    -------
    int
        0, or 1 if the written channel fails its check.
    """
    report = design(args)
    if args.json:
        non_finite = {}
        report = _json_ready(report, "", non_finite)
        if non_finite:
            report["non_finite"] = non_finite
        # One string, then one write: a value JSON cannot hold never leaves half a document.
        sys.stdout.write(json.dumps(report, indent=2, allow_nan=False) + "\n")
    else:
        print_report(report)
    return 0 if report["check_passed"] else 1


def _json_ready(value, path, non_finite):
    """``value`` with every infinite or NaN float as None, its path and value in ``non_finite``.

    JSON has no infinity; a bound that is infinite (``V_plus`` where Theorem 1's upper bound is
    vacuous) is reported as null and named under ``"non_finite"``.
    """
    if isinstance(value, dict):
        return {k: _json_ready(v, f"{path}.{k}" if path else str(k), non_finite) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_json_ready(v, f"{path}[{i}]", non_finite) for i, v in enumerate(value)]
    if isinstance(value, float) and not math.isfinite(value):
        non_finite[path] = str(value)
        return None
    return value


def add_parser(sub, number) -> None:
    """Register the ``design`` subcommand on the ``python -m renyi`` parser.

    Parameters
    ----------
    sub : argparse subparsers
    number : callable
        The type of numeric options.

    Returns
    -------
    None
    """
    d = sub.add_parser(
        "design",
        help="design an alpha-lift mechanism for a leakage matrix (Part II)",
        description="An alpha-lift mechanism with chi^2 utility for your leakage matrix P_{X|Y} "
        "(Zamani, Zarrabian, Sadeghi and Skoglund, 2026).",
        epilog=EXAMPLES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    d.add_argument(
        "--leakage",
        required=True,
        metavar="FILE",
        help="P_{X|Y}: rows x, columns y, each column a distribution (.csv, .txt, .npy, .json)",
    )
    d.add_argument("--transpose", action="store_true", help="the file has rows y and columns x")
    d.add_argument(
        "--prior",
        required=True,
        metavar="P",
        help="the prior: inline (0.2,0.3,0.5) or a file; of X by default (a value that starts "
        "with '-' must be attached: --prior=-0.2,...)",
    )
    d.add_argument("--prior-of", choices=["x", "y"], default="x", help="whose prior --prior is (default x)")
    d.add_argument("--eps", type=number, required=True, help="the budget: every alpha-lift <= e^eps")
    d.add_argument("--order", type=number, required=True, metavar="ALPHA", help="the order alpha > 1")
    d.add_argument(
        "--method",
        choices=["optimum", "two-scale", "directional"],
        default="optimum",
        help="certified optimum (Theorem 2, default), two-scale or Lemma 3's directional mechanism",
    )
    d.add_argument(
        "--above-epsilon-max",
        "--beyond-certificate",
        dest="above_epsilon_max",
        action="store_true",
        help="two-scale and directional mechanisms: design them above epsilon_max too, outside "
        "Theorem 1's range (the optimum needs no flag: its bracket is proved at every eps; "
        "--beyond-certificate is the former name)",
    )
    d.add_argument("--rtol", type=number, default=1e-6, help="target relative gap of the optimum (default 1e-6)")
    d.add_argument(
        "--time-limit",
        type=number,
        default=120.0,
        metavar="S",
        help="seconds for the optimum's search; the bracket found so far is reported (default 120)",
    )
    d.add_argument(
        "--workers",
        type=int,
        default=1,
        metavar="N",
        help="processes for the optimum's box search at |Y| >= 6 (-1: every core; default 1)",
    )
    d.add_argument("--out", metavar="FILE", help="write P_{U|Y} to FILE (.csv, .txt or .npy)")
    d.add_argument("--json", action="store_true", help="print JSON instead of a summary")
    d.set_defaults(func=run)
