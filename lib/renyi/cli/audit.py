"""The ``audit`` and ``mechanisms`` commands of ``python -m renyi``, and the parser of all three.

User errors (missing files, pickled arrays, NaN, bad orders...) print one line
on stderr and exit with status 1; usage errors exit with status 2 (argparse).
``audit`` with a claim (``--claim-epsilon``, ``--claim-rho``, ``--claim-curve``) exits
with status 3 when the samples refute it, 0 when they do not.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys

import numpy as np

from .. import __version__
from .._docs import CLI_MAIN, fill
from .samples_io import UserError, load_samples

EXAMPLES = """\
examples:
  # two files of outputs, one value per line (or .npy arrays)
  python -m renyi audit outputs_x.txt outputs_xprime.txt --orders 2 5 7
  # discrete outputs, machine-readable result
  python -m renyi audit p.npy q.npy --orders 2 --discrete --json
  # the paper's set-up: one ordered pair, eq. (16) as printed
  python -m renyi audit p.npy q.npy --orders 2 --direction forward --no-bias-correction
  # read one sample from standard input
  my_mechanism --db x | python -m renyi audit - q.csv --orders 2
  # test a claim (family-wise at --alpha over orders and directions); exit status 3 if refuted
  python -m renyi audit p.npy q.npy --orders 2 5 7 --claim-rho 0.02
  # a black box by name, drawn here in tasks on every core (each output once)
  python -m renyi audit-mechanism mypkg.noise:f --database x.json --neighbour x2.json \\
      -n 1e7 --orders 2 --continuous --workers -1
  # the built-in mechanisms of Section IV and their exact epsilon(lambda)
  python -m renyi mechanisms
  # Part II: an alpha-lift mechanism for a leakage matrix P_{X|Y} and a prior
  python -m renyi design --leakage A.csv --prior 0.2,0.3,0.5 --eps 0.02 --order 3 --out channel.csv

exit status:
  0 done (a claim, if given, is not refuted)   1 user error (one line on stderr)
  2 usage error                                 3 the claim is refuted
  130 interrupted (Ctrl-C)
  The status carries the verdict even when standard output is closed early (| head).
"""


def _json_safe(value):
    """JSON has no NaN or Infinity: write null, and say why next to it."""
    if isinstance(value, dict):
        out = {}
        for key, item in value.items():
            if isinstance(item, float) and not math.isfinite(item):
                out[key] = None
                out[f"{key}_reason"] = "nan" if math.isnan(item) else ("+inf" if item > 0 else "-inf")
            else:
                out[key] = _json_safe(item)
        return out
    if isinstance(value, (list, tuple)):
        return [_json_safe(item) for item in value]
    return value


def _write_json(obj) -> None:
    json.dump(_json_safe(obj), sys.stdout, indent=2, allow_nan=False)
    sys.stdout.write("\n")


def _cmd_audit(args) -> int:
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
    projection = {"projection": args.projection, "split": args.split} if args.projection else {}
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
            support=_support(args.support),
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


def _support(text):
    """``A:B`` (the integers A to B) or ``v1,v2,...``: the outcomes a mechanism can produce."""
    if text is None:
        return None
    try:
        if ":" in text:
            low, high = (int(part) for part in text.split(":"))
            if high < low:
                raise UserError(f"--support {text}: the range A:B needs A <= B")
            return np.arange(low, high + 1)
        return np.array([float(v) if "." in v else int(v) for v in text.split(",")])
    except ValueError:
        raise UserError(
            f"--support must be A:B (integers) or a comma-separated list of outcomes, got {text!r}"
        ) from None


def report(bounds, claim, args) -> int:
    """Print ``bounds`` (a table or ``--json``) and the verdict on ``claim``; the exit status.

    Parameters
    ----------
    bounds : list of LowerBound
    claim : callable or None
        The claimed curve of ``--claim-*``.
    args : argparse.Namespace
        The parsed options (``alpha``, ``orders``, ``json``, ``direction``); ``args.status``
        is set to the verdict's status before anything is printed.

    Returns
    -------
    int
        0, or 3 when the claim is refuted.
    """
    result = None
    if claim is not None:
        from ..audit import verdict

        result = verdict(bounds, claim, alpha=args.alpha)
        # The verdict is the exit status even if stdout is closed before it is printed.
        args.status = REFUTED if result.refuted else 0
    if args.json:
        if result is None:
            _write_json([b.to_dict() for b in bounds])
        else:
            _write_json(
                {
                    "bounds": [b.to_dict() for b in bounds],
                    "verdict": {
                        "refuted": result.refuted,
                        "alpha": result.alpha,
                        "spent": result.spent,
                        "rows": [vars(row) for row in result.rows],
                    },
                }
            )
        return REFUTED if result is not None and result.refuted else 0
    if bounds[0].method == "finite-sample":
        _print_finite_sample(bounds)
    else:
        _print_bounds(bounds, args.direction)
    if result is not None:
        if bounds[0].method == "finite-sample":
            print(f"verdict: {result}; one confidence event for every order and direction")
            return REFUTED if result.refuted else 0
        print(f"verdict: {result} (each order at alpha/{len(args.orders)}, each direction at half of that)")
        return REFUTED if result.refuted else 0
    return 0


def _projection_line(record) -> str:
    """How vector outputs were reduced: direction, held-out outputs, signal kept."""
    if record["kind"] == "kde":
        widths = ", ".join(f"{h:.3g}" for h in record["bandwidths"])
        return (
            f"outputs: {record['dimension']}-dimensional, estimated on a whitened grid with no projection\n"
            f"            (bandwidths {widths} in whitened units)"
        )
    held = record["held_out"]
    source = f"learned from {held[0]:,} + {held[1]:,} held-out outputs" if held[0] else "fixed"
    share = record["signal_share"]
    kept = "" if share is None else f";\n            it holds about {share:.2f} of the mean shift (cos^2)"
    return f"projection: {record['dimension']}-dimensional outputs on a direction {source}{kept}"


def _print_finite_sample(bounds) -> None:
    """The table of ``audit --finite-sample``: cells, one row per order."""
    first = bounds[0]
    level = 100 * (1 - first.alpha)
    held = first.held_out
    chosen = (
        f"{first.cells:,} cells, chosen on {held[0]:,} + {held[1]:,} held-out outputs"
        if held[0]
        else f"{first.cells:,} cells, the declared support"
    )
    print(f"samples: n_p={first.n_p:,}  n_q={first.n_q:,}  discrete, finite-sample bound on {chosen}")
    if first.projection is not None:
        print(_projection_line(first.projection))
    print(f"{'order':>7} {'direction':>9} {'estimate':>11} {'at most':>11} {f'lower({level:g}%)':>12}")
    for b in bounds:
        mark = " (trivial)" if b.trivial else ""
        print(f"{b.order:7g} {b.direction:>9} {b.estimate:11.6g} {b.primal:11.6g} {b.lower:12.6g}{mark}")
    print(
        f"Every 'lower' holds at once with probability >= {level:g}% at any sample size\n"
        "(i.i.d. outputs); 'at most' is the divergence at a pair of pmfs inside both\n"
        "confidence boxes: no bound from these boxes is larger."
    )


def _print_bounds(bounds, direction) -> None:
    """The human-readable table of ``audit``: set-up, one row per order, notes."""
    first = bounds[0]
    level = 100 * (1 - first.alpha)
    if first.discrete:
        kind = f"discrete (relative frequencies on {first.cells:,} observed outcomes)"
    elif first.bandwidth is None:
        kind = f"continuous (Gaussian KDE, {first.cells:,} grid points)"
    else:
        kind = f"continuous (Gaussian KDE, bandwidth h={first.bandwidth:.4g}, {first.cells:,} grid points)"
    print(f"samples: n_p={first.n_p:,}  n_q={first.n_q:,}  {kind}")
    if first.projection is not None:
        print(_projection_line(first.projection))
    print(f"floor: q_hat is floored smoothly at tau={first.floor:.4g} (sharpness beta={first.beta:.4g})")
    centre = "bias-corrected estimate" if first.bias_corrected else "estimate as in eq. (16), no bias correction"
    sides = {
        "both": "P||Q and Q||P at alpha/2 each, the larger shown",
        "forward": "P||Q only (the paper's ordered pair)",
        "reverse": "Q||P only",
    }[direction]
    print(f"centre: {centre}; {sides}")
    conf = f"lower({level:g}%)"
    print(f"{'order':>7} {'direction':>9} {'estimate':>11} {'- bias':>10} {'std.error':>10} {conf:>12}")
    notes = []
    for b in bounds:
        subtracted = f"{max(b.bias, 0.0):10.3g}" if b.bias_corrected else f"{'-':>10}"
        mark = ""
        if not b.reliable:
            notes.append(f"order {b.order:g}: {b.note}")
            mark = " *"
        elif b.trivial:
            mark = " (trivial)"
        if b.warnings:
            notes.extend(f"order {b.order:g}: warning: {w}" for w in b.warnings)
            mark += " !"
        print(
            f"{b.order:7g} {b.direction:>9} {b.estimate:11.6g} {subtracted} {b.std_error:10.4g} {b.lower:12.6g}{mark}"
        )
    for note in notes:
        print(f"{'!' if ': warning: ' in note else '*'} {note}")
    print(
        f"Each 'lower' is a {level:g}% lower confidence bound on epsilon(order) for the pair that "
        "produced P and Q;\na bound <= 0 is trivial: no evidence of privacy loss."
    )


#: Exit status of ``audit`` with a claim that the samples refute (0: not refuted, 1: error).
REFUTED = 3


def claim_of(args):
    """The claimed RDP curve from --claim-epsilon, --claim-rho or --claim-curve (or None)."""
    from ..audit import claim_pure_dp, claim_zcdp

    if args.claim_epsilon is not None:
        return claim_pure_dp(args.claim_epsilon)
    if args.claim_rho is not None:
        return claim_zcdp(args.claim_rho)
    if args.claim_curve is None:
        return None
    table = load_samples(args.claim_curve, "--claim-curve")
    table = np.asarray(table, dtype=float)
    if table.ndim != 2 or table.shape[1] != 2:
        raise UserError("--claim-curve: expected two columns per line: order, claimed epsilon")
    curve = {}
    for order, eps in table:
        if float(order) in curve:
            raise UserError(
                f"--claim-curve: order {format_order(order)} is listed twice; give one claimed epsilon per order"
            )
        curve[float(order)] = float(eps)
    repeated = sorted({o for o in args.orders if args.orders.count(o) > 1})
    if repeated:
        raise UserError(f"--orders: order {format_order(repeated[0])} is given twice")
    missing = [o for o in args.orders if o not in curve]
    if missing:
        raise UserError(
            f"--claim-curve: no claimed epsilon for order {format_order(missing[0])}; the file lists orders "
            + ", ".join(format_order(o) for o in sorted(curve))
        )
    return lambda order: curve[float(order)]


def format_order(order: float) -> str:
    """An order as short as ``:g`` prints it, but never so short that two different orders look alike."""
    short = f"{float(order):g}"
    return short if float(short) == float(order) else repr(float(order))


def _number(text: str, option: str) -> float:
    try:
        return float(text)
    except ValueError:
        raise UserError(f"{option} must be a number or 'paper', got {text!r}") from None


def _cmd_mechanisms(args) -> int:
    from ..mechanisms import MECHANISMS

    orders = args.orders
    if args.json:
        out = {
            name: {
                "params": m.params,
                "discrete": m.discrete,
                "targets": {f"{o:g}": m.target(o) for o in orders},
                "reverse_targets": {f"{o:g}": m.reverse_target(o) for o in orders},
            }
            for name, m in MECHANISMS.items()
        }
        _write_json(out)
        return 0
    targets = {name: [m.target(o) for o in orders] for name, m in MECHANISMS.items()}  # errors before output
    print("Section IV mechanisms; targets are the exact D_order(p||q) for x=(1,0,...,0), x'=(0,...,0).")
    header = f"{'name':<30}{'output':<11}{'parameters':<36}"
    header += "".join(f"{'eps(' + format(o, 'g') + ')':>11}" for o in orders)
    print(header)
    for name, m in MECHANISMS.items():
        params = ", ".join(f"{k}={v:g}" if isinstance(v, float) else f"{k}={v}" for k, v in m.params.items())
        row = f"{name:<30}{'discrete' if m.discrete else 'real':<11}{params:<36}"
        print(row + "".join(f"{t:11.5f}" for t in targets[name]))
    return 0


def _order(text: str) -> float:
    # Range checks are the library's, so the CLI and the API word them alike.
    try:
        return float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None


class _Parser(argparse.ArgumentParser):
    """argparse, but usage errors are one line on stderr (exit 2), like the other errors."""

    def error(self, message):
        if "expected one argument" in message:
            message += " (a value that starts with '-' must be attached: --option=-0.2,...)"
        self.exit(2, f"renyi: error: {message} (see '{self.prog} --help')\n")


def add_claim_options(parser) -> None:
    """The mutually exclusive ``--claim-epsilon``, ``--claim-rho`` and ``--claim-curve``.

    Parameters
    ----------
    parser : argparse.ArgumentParser

    Returns
    -------
    None
    """
    claim = parser.add_mutually_exclusive_group()
    claim.add_argument(
        "--claim-epsilon",
        type=float,
        metavar="E",
        help="test a pure E-DP claim (its tight RDP curve); exit status 3 if refuted",
    )
    claim.add_argument("--claim-rho", type=float, metavar="R", help="test a rho-zCDP claim, epsilon(order) = R*order")
    claim.add_argument("--claim-curve", metavar="FILE", help="test a claimed curve: lines 'order, epsilon'")


def build_parser() -> argparse.ArgumentParser:
    """The parser of ``python -m renyi`` and its commands ``audit``, ``design`` and ``mechanisms``.

    Returns
    -------
    argparse.ArgumentParser
    """
    parser = _Parser(
        prog="python -m renyi",
        description="Rényi-divergence privacy: black-box RDP lower bounds (audit) and "
        "α-lift mechanism design (design).",
        epilog=EXAMPLES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"renyi {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

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
    a.add_argument("--orders", type=_order, nargs="+", required=True, metavar="ORDER", help="orders lambda > 1")
    a.add_argument("--alpha", type=float, default=0.05, help="error level; the bound holds w.p. 1-alpha (default 0.05)")
    kind = a.add_mutually_exclusive_group()
    kind.add_argument("--discrete", action="store_true", help="treat outputs as discrete (relative frequencies)")
    kind.add_argument("--continuous", action="store_true", help="treat outputs as real numbers (Gaussian KDE)")
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
        choices=["mean-difference", "whitened", "kde"],
        help="vector outputs (rows of d values): bound their projection on a direction learned from "
        "a held-out part of each sample (whitened: for correlated noise); kde: no projection, "
        "the densities on a whitened grid (d = 2 or 3)",
    )
    a.add_argument(
        "--split",
        type=float,
        metavar="F",
        help="fraction of each sample held out: to learn --projection (default 0.5), or to choose the "
        "--finite-sample cells (default 0 for a two-outcome support, else 0.2)",
    )
    a.add_argument("--decimal-comma", action="store_true", help="text files use decimal commas (1,5 = 1.5)")
    a.add_argument("--json", action="store_true", help="print JSON instead of a table")
    add_claim_options(a)
    a.set_defaults(func=_cmd_audit)

    m = sub.add_parser("mechanisms", help="list the built-in mechanisms and their exact epsilon(order)")
    m.add_argument("--orders", type=_order, nargs="+", default=[2.0, 5.0, 7.0], metavar="ORDER")
    m.add_argument("--json", action="store_true")
    m.set_defaults(func=_cmd_mechanisms)

    from .audit_mechanism import add_parser as add_audit_mechanism
    from .design import add_parser as add_design

    add_audit_mechanism(sub, _order)
    add_design(sub, _order)
    return parser


@fill(cli_main=CLI_MAIN)
def main(argv: list[str] | None = None) -> int:
    """Run ``python -m renyi``: parse, dispatch, and turn user errors into one line and a status.

    Exit statuses: 0 done (a claim, if given, not refuted), 1 user error, 2 usage error,
    3 claim refuted, 130 interrupted.

    {{cli_main}}
    """
    args = build_parser().parse_args(argv)
    args.status = 0
    try:
        status = args.func(args)
        sys.stdout.flush()  # surface a full disk here, as a user error, not at exit
        return status
    except (UserError, ValueError, TypeError, OverflowError, MemoryError) as exc:
        print(f"renyi: error: {_cli_words(str(exc))}", file=sys.stderr)
        return 1
    except KeyboardInterrupt as exc:
        # (an audit in tasks says how far it got: "interrupted after 3,000,000 of ... outputs")
        print(f"renyi: {exc}" if str(exc) else "renyi: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        # A reader that stops early (`| head -1`) is no error, but a verdict reached before
        # the pipe closed is still the exit status: "refuted" must not read as "passed".
        _silence_stdout()
        return args.status
    except OSError as exc:  # e.g. standard output on a full disk
        _silence_stdout()
        print(f"renyi: error: cannot write the output: {exc.strerror or exc}", file=sys.stderr)
        return 1


#: The library's messages name keyword arguments; on the command line the options are meant.
_CLI_WORDS = [
    ("discrete=True/False", "--discrete or --continuous"),
    ("discrete=True", "--discrete"),
    ("discrete=False", "--continuous"),
    ("set discrete", "use --discrete or --continuous"),
    ("samples_p", "P"),
    ("samples_q", "Q"),
    ("bias_correction=False", "--no-bias-correction"),
    ("floor=", "--floor "),
    ("alpha ", "--alpha "),
    ("method='finite-sample'", "--finite-sample"),
    ("support=...", "--support A:B"),
    ("split=0", "--split 0"),
    ("split=", "--split "),
    ("projection='mean-difference'", "--projection mean-difference"),
]


def _cli_words(message: str) -> str:
    for api, cli in _CLI_WORDS:
        message = message.replace(api, cli)
    return message


def _silence_stdout() -> None:
    """After a failed write, point stdout at devnull so that the exit flush cannot fail again."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):
        pass
