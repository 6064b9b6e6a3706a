"""Command line: ``python -m renyi`` (also installed as ``renyi``).

User errors (missing files, pickled arrays, NaN, bad orders...) print one line
on stderr and exit with status 1; usage errors exit with status 2 (argparse).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np

from . import __version__

EXAMPLES = """\
examples:
  # two files of outputs, one value per line (or .npy arrays)
  python -m renyi audit outputs_x.txt outputs_xprime.txt --orders 2 5 7
  # discrete outputs, machine-readable result
  python -m renyi audit p.npy q.npy --orders 2 --discrete --json
  # read one sample from standard input
  my_mechanism --db x | python -m renyi audit - q.csv --orders 2
  # the built-in mechanisms of Section IV and their exact epsilon(lambda)
  python -m renyi mechanisms
"""


class UserError(Exception):
    """An error in what the user asked for: reported in one line, no traceback."""


def load_samples(path: str, name: str) -> np.ndarray:
    """Load outputs from ``.npy`` (no pickles), or text/CSV with one value or row per line."""
    if path == "-":
        text = sys.stdin.read()
        source = "standard input"
        return _parse_text(text, source)
    file = Path(path)
    if not file.exists():
        raise UserError(f"{name}: no such file: {path}")
    if file.is_dir():
        raise UserError(f"{name}: is a directory: {path}")
    if file.suffix == ".npy":
        try:
            arr = np.load(file, allow_pickle=False)
        except ValueError as exc:
            if "pickle" in str(exc).lower():
                raise UserError(f"{name}: {path} holds pickled objects, which are refused for safety; "
                                "save a plain numeric array with numpy.save") from None
            raise UserError(f"{name}: cannot read {path} as .npy: {exc}") from None
        except OSError as exc:
            raise UserError(f"{name}: cannot read {path}: {exc}") from None
        if arr.size == 0:
            raise UserError(f"{name}: {path} is empty")
        return arr
    try:
        text = file.read_text()
    except (OSError, UnicodeDecodeError) as exc:
        raise UserError(f"{name}: cannot read {path} as text: {exc}") from None
    return _parse_text(text, path)


def _parse_text(text: str, source: str) -> np.ndarray:
    rows = []
    for lineno, line in enumerate(text.splitlines(), 1):
        line = line.split("#")[0].strip()
        if not line:
            continue
        fields = [f for f in line.replace(",", " ").replace(";", " ").split() if f]
        rows.append((lineno, fields))
    if not rows:
        raise UserError(f"{source} is empty (no values)")
    width = len(rows[0][1])
    for lineno, fields in rows:
        if len(fields) != width:
            raise UserError(f"{source}, line {lineno}: expected {width} value(s), found {len(fields)}")
    flat = [f for _, fields in rows for f in fields]
    try:
        arr = np.array([int(f) for f in flat], dtype=np.int64)
    except ValueError:
        try:
            arr = np.array([float(f) for f in flat])
        except ValueError:
            bad = next(f for f in flat if not _is_float(f))
            raise UserError(f"{source}: not a number: {bad!r}") from None
    return arr if width == 1 else arr.reshape(len(rows), width)


def _is_float(text: str) -> bool:
    try:
        float(text)
        return True
    except ValueError:
        return False


def _cmd_audit(args) -> int:
    from .audit import rdp_lower_bound

    p = load_samples(args.p, "P")
    q = load_samples(args.q, "Q")
    if args.discrete:
        discrete = True
    elif args.continuous:
        discrete = False
    else:
        discrete = None
    bounds = rdp_lower_bound(p, q, args.orders, alpha=args.alpha, discrete=discrete,
                             bandwidth=args.bandwidth, floor=args.floor, beta=args.beta,
                             bias_correction=not args.no_bias_correction)
    if args.json:
        json.dump([b.to_dict() for b in bounds], sys.stdout, indent=2)
        sys.stdout.write("\n")
        return 0
    first = bounds[0]
    kind = "discrete (relative frequencies)" if first.discrete else f"continuous (Gaussian KDE, h={first.bandwidth:.4g})"
    print(f"samples: n_p={first.n_p:,}  n_q={first.n_q:,}  {kind}, {first.cells:,} cells")
    print(f"floor tau={first.floor:.4g}  beta={first.beta:.4g}  "
          f"{'bias-corrected' if first.bias_corrected else 'eq. (16) as printed'}")
    conf = f"lower({100 * (1 - first.alpha):g}%)"
    print(f"{'order':>7} {'estimate':>12} {'std.error':>11} {'bias':>11} {conf:>12}")
    for b in bounds:
        print(f"{b.order:7g} {b.estimate:12.6g} {b.std_error:11.4g} {b.bias:11.3g} {b.lower:12.6g}")
    print(f"Each 'lower' is a {100 * (1 - first.alpha):g}% lower confidence bound on epsilon(order) "
          "for the pair that produced P and Q.")
    return 0


def _cmd_mechanisms(args) -> int:
    from .mechanisms import MECHANISMS

    orders = args.orders
    if args.json:
        out = {name: {"params": m.params, "discrete": m.discrete,
                      "targets": {f"{o:g}": m.target(o) for o in orders}} for name, m in MECHANISMS.items()}
        json.dump(out, sys.stdout, indent=2)
        sys.stdout.write("\n")
        return 0
    print("Section IV mechanisms; targets are the exact D_order(p||q) for x=(1,0,...,0), x'=(0,...,0).")
    header = f"{'name':<30}{'output':<11}{'parameters':<36}" + "".join(f"{'eps(' + format(o, 'g') + ')':>11}" for o in orders)
    print(header)
    for name, m in MECHANISMS.items():
        params = ", ".join(f"{k}={v:g}" if isinstance(v, float) else f"{k}={v}" for k, v in m.params.items())
        row = f"{name:<30}{'discrete' if m.discrete else 'real':<11}{params:<36}"
        print(row + "".join(f"{m.target(o):11.5f}" for o in orders))
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
        self.exit(2, f"renyi: error: {message} (see '{self.prog} --help')\n")


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="python -m renyi", description="Rényi-divergence privacy: black-box RDP lower bounds.",
        epilog=EXAMPLES, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--version", action="version", version=f"renyi {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    a = sub.add_parser("audit", help="lower confidence bounds for epsilon(order) from two samples",
                       description="Lower confidence bounds for Rényi DP from outputs on adjacent databases "
                                   "(Kutta, Askin and Dunsche, 2024, eq. 16).",
                       epilog=EXAMPLES, formatter_class=argparse.RawDescriptionHelpFormatter)
    a.add_argument("p", metavar="P", help="outputs of A(x): .npy, or text/CSV with one value (or row) per line; - for stdin")
    a.add_argument("q", metavar="Q", help="outputs of A(x') for an adjacent x'")
    a.add_argument("--orders", type=_order, nargs="+", required=True, metavar="ORDER", help="orders lambda > 1")
    a.add_argument("--alpha", type=float, default=0.05, help="error level; the bound holds w.p. 1-alpha (default 0.05)")
    kind = a.add_mutually_exclusive_group()
    kind.add_argument("--discrete", action="store_true", help="treat outputs as discrete (relative frequencies)")
    kind.add_argument("--continuous", action="store_true", help="treat outputs as real numbers (Gaussian KDE)")
    a.add_argument("--bandwidth", type=float, metavar="H", help="KDE bandwidth (default: undersmoothed rule)")
    a.add_argument("--floor", type=float, metavar="T", help="floor tau (default: tied to the estimator's noise)")
    a.add_argument("--beta", type=float, metavar="B", help="softmax sharpness (default 1/tau)")
    a.add_argument("--no-bias-correction", action="store_true", help="use eq. (16) exactly as printed")
    a.add_argument("--json", action="store_true", help="print JSON instead of a table")
    a.set_defaults(func=_cmd_audit)

    m = sub.add_parser("mechanisms", help="list the built-in mechanisms and their exact epsilon(order)")
    m.add_argument("--orders", type=_order, nargs="+", default=[2.0, 5.0, 7.0], metavar="ORDER")
    m.add_argument("--json", action="store_true")
    m.set_defaults(func=_cmd_mechanisms)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return args.func(args)
    except (UserError, ValueError, TypeError) as exc:
        print(f"renyi: error: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("renyi: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        return 0


if __name__ == "__main__":
    sys.exit(main())
