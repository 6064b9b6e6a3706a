"""``python -m renyi audit``: lower confidence bounds for epsilon(order) from two files of outputs.

User errors (missing files, pickled arrays, NaN, bad orders...) print one line on stderr and exit
with status 1; usage errors exit with status 2 (argparse).  With a claim (``--claim-epsilon``,
``--claim-rho``, ``--claim-curve``) the exit status is 3 when the samples refute it, 0 when they
do not.
"""

from __future__ import annotations

import argparse
import sys

from .report import add_claim_options, claim_of, report, support_of
from .samples_io import UserError, load_samples

__all__ = ["add_parser", "run"]

EXAMPLES = """\
examples:
  # two files of outputs, one value per line (or .npy arrays)
  python -m renyi audit outputs_x.txt outputs_xprime.txt --orders 2 5 7
  # discrete outputs, machine-readable result
  python -m renyi audit p.npy q.npy --orders 2 --discrete --json
  # discrete outputs, a bound valid at every n
  python -m renyi audit p.npy q.npy --orders 2 5 --finite-sample
  # the paper's set-up: one ordered pair, eq. (16) as printed
  python -m renyi audit p.npy q.npy --orders 2 --direction forward --no-bias-correction
  # read one sample from standard input
  my_mechanism --db x | python -m renyi audit - q.csv --orders 2
  # test a claim (family-wise at --alpha over orders and directions); exit status 3 if refuted
  python -m renyi audit p.npy q.npy --orders 2 5 7 --claim-rho 0.02
"""


def run(args) -> int:
    """Run ``audit`` on parsed options: read both samples, bound, report, give the verdict.

    Parameters
    ----------
    args : argparse.Namespace
        The options of ``python -m renyi audit``.

    Returns
    -------
    int
        The exit status: 0, or 3 when a claim is refuted.
    """
    from ..audit import MAX_UNCORRECTED_BIAS, rdp_lower_bound

    if args.p == "-" and args.q == "-":
        raise UserError("P and Q cannot both be standard input ('-'); give at least one as a file")
    if 0.5 <= args.alpha < 1:
        print(
            f"renyi: warning: --alpha is the error level (the bound holds with probability 1 - alpha), "
            f"so --alpha {args.alpha:g} gives a {100 * (1 - args.alpha):g}% bound; for a 95% bound pass --alpha 0.05",
            file=sys.stderr,
        )
    p = load_samples(args.p, "P", decimal_comma=args.decimal_comma)
    q = load_samples(args.q, "Q", decimal_comma=args.decimal_comma)
    discrete = True if args.discrete else (False if args.continuous else None)
    floor = args.floor
    if floor is not None and floor != "paper":
        floor = _number(floor, "--floor")
    if args.no_bias_correction:
        print(
            f"renyi: warning: --no-bias-correction uses eq. (16) as printed, which is anti-conservative "
            f"where the plug-in's upward bias is large; orders whose estimated bias exceeds "
            f"{MAX_UNCORRECTED_BIAS:g} standard error fall back (marked *)",
            file=sys.stderr,
        )
    claim = claim_of(args)
    projection = _projection_options(args)
    if args.finite_sample:
        _refuse_delta_options(args)
        bounds = rdp_lower_bound(
            p,
            q,
            args.orders,
            alpha=args.alpha,  # one confidence event for every order and direction
            discrete=discrete,
            direction=args.direction,
            method="finite-sample",
            support=support_of(args.support),
            **(projection or {"split": args.split}),
        )
        return report(bounds, claim, args)
    if args.support is not None:
        raise UserError("--support belongs to --finite-sample")
    if args.split is not None and not args.projection:
        raise UserError("--split belongs to --projection or --finite-sample")
    # With a claim, each order gets alpha / k, so that the verdict is family-wise at alpha.
    level = args.alpha / len(args.orders) if claim is not None else args.alpha
    bounds = rdp_lower_bound(
        p,
        q,
        args.orders,
        alpha=level,
        discrete=discrete,
        bandwidth=args.bandwidth,
        floor=floor,
        beta=args.beta,
        bias_correction=not args.no_bias_correction,
        direction=args.direction,
        **projection,
    )
    return report(bounds, claim, args)


def _projection_options(args) -> dict:
    """``projection=`` and ``split=`` for the library, the former name ``kde`` read as ``grid``."""
    if args.projection == "kde":
        print("renyi: note: --projection kde is now --projection grid (the same estimate)", file=sys.stderr)
        args.projection = "grid"
    return {"projection": args.projection, "split": args.split} if args.projection else {}


def _refuse_delta_options(args) -> None:
    given = [
        option
        for option, value in (
            ("--bandwidth", args.bandwidth),
            ("--floor", args.floor),
            ("--beta", args.beta),
            ("--no-bias-correction", args.no_bias_correction or None),
            ("--continuous", args.continuous or None),
        )
        if value is not None
    ]
    if given:
        raise UserError(f"{given[0]} tunes the delta method; --finite-sample has no such option")


def _number(text: str, option: str) -> float:
    try:
        return float(text)
    except ValueError:
        raise UserError(f"{option} must be a number or 'paper', got {text!r}") from None


def add_parser(sub, order_type) -> None:
    """Add ``audit`` to the subparsers ``sub`` (``order_type`` parses an order).

    Parameters
    ----------
    sub : argparse._SubParsersAction
    order_type : callable

    Returns
    -------
    None
    """
    a = sub.add_parser(
        "audit",
        help="lower confidence bounds for epsilon(order) from two samples",
        description="Lower confidence bounds for Rényi DP from outputs on adjacent databases "
        "(Kutta, Askin and Dunsche, 2024, eq. 16).",
        epilog=EXAMPLES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    a.add_argument(
        "p", metavar="P", help="outputs of A(x): .npy, or text/CSV with one value (or row) per line; - for stdin"
    )
    a.add_argument("q", metavar="Q", help="outputs of A(x') for an adjacent x'")
    a.add_argument("--orders", type=order_type, nargs="+", required=True, metavar="ORDER", help="orders lambda > 1")
    a.add_argument("--alpha", type=float, default=0.05, help="error level; the bound holds w.p. 1-alpha (default 0.05)")
    kind = a.add_mutually_exclusive_group()
    kind.add_argument("--discrete", action="store_true", help="treat outputs as discrete (relative frequencies)")
    kind.add_argument("--continuous", action="store_true", help="treat outputs as real numbers (Gaussian KDE)")
    _add_estimator_options(a)
    _add_route_options(a)
    a.add_argument("--decimal-comma", action="store_true", help="text files use decimal commas (1,5 = 1.5)")
    a.add_argument("--json", action="store_true", help="print JSON instead of a table")
    add_claim_options(a)
    a.set_defaults(func=run)


def _add_estimator_options(a) -> None:
    """The delta method's tuning: bandwidth, floor, softmax sharpness, bias correction, direction."""
    a.add_argument("--bandwidth", type=float, metavar="H", help="KDE bandwidth (default: undersmoothed rule)")
    a.add_argument(
        "--floor",
        metavar="T",
        help="floor tau, or 'paper' for tau slightly larger than h (default: tied to the KDE's noise)",
    )
    a.add_argument("--beta", type=float, metavar="B", help="softmax sharpness (default 1/tau)")
    a.add_argument(
        "--no-bias-correction",
        action="store_true",
        help="use eq. (16) exactly as printed (anti-conservative where the bias is large; warns)",
    )
    a.add_argument(
        "--direction",
        choices=["both", "forward", "reverse"],
        default="both",
        help="bound D(P||Q) and D(Q||P) at alpha/2 each and report the larger (default), or one direction at alpha",
    )


def _add_route_options(a) -> None:
    """The other routes: the finite-sample bound (discrete) and projections (vector outputs)."""
    a.add_argument(
        "--finite-sample",
        action="store_true",
        help="discrete outputs: a bound valid for every n (confidence boxes and a certified minimum), "
        "one level for all orders and directions",
    )
    a.add_argument(
        "--support",
        metavar="A:B",
        help="with --finite-sample: every outcome the mechanism can produce (integers A to B, or a,b,c); "
        "an output outside it is an error",
    )
    a.add_argument(
        "--projection",
        choices=["auto", "likelihood-ratio", "mean-difference", "whitened", "grid", "kde"],
        help="vector outputs (rows of d values): bound their projection on a map learned from a "
        "held-out part of each sample; auto (recommended): the direction or estimated likelihood "
        "ratio that bounds best on held-out outputs; grid: no projection, the densities on a "
        "whitened grid (d = 2 or 3; kde is its former name)",
    )
    a.add_argument(
        "--split",
        type=float,
        metavar="F",
        help="fraction of each sample held out: to learn --projection (default 0.5), or to choose the "
        "--finite-sample cells (default 0 for a two-outcome support, else 0.2)",
    )
