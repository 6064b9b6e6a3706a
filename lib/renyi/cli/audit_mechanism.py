"""``python -m renyi audit-mechanism``: audit a black box by name, drawing its outputs here.

The black box is ``package.module:function``, a callable ``f(database, n, rng) -> outputs``;
the databases are read from JSON or ``.npy``.  Outputs are drawn in tasks (each once, memory
independent of ``n``) on ``--workers`` processes or a Dask cluster (``--scheduler``), and the
result is printed as ``audit`` prints it, with the same claims and exit statuses.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import sys
from pathlib import Path

import numpy as np

from .report import add_claim_options, claim_of, report, support_of
from .samples_io import UserError

__all__ = ["add_parser", "load_database"]

EXAMPLES = """\
examples:
  # your own sampler mypkg/noise.py: def laplace_count(database, n, rng): ...
  python -m renyi audit-mechanism mypkg.noise:laplace_count --database x.json \\
      --neighbour x2.json -n 1e7 --orders 2 5 10 --continuous --workers -1 --claim-epsilon 1
  # the same tasks on a Dask cluster
  python -m renyi audit-mechanism mypkg.noise:laplace_count --database x.json \\
      --neighbour x2.json -n 1e8 --orders 2 --continuous --scheduler tcp://host:8786
"""


def load_database(path: str, option: str):
    """A database from ``.npy`` (an array) or JSON (any value: a list, a number, an object).

    Parameters
    ----------
    path : str
    option : str
        The option's name for error messages.

    Returns
    -------
    object
    """
    file = Path(path)
    if file.is_dir():
        raise UserError(f"{option}: {path} is a folder; give a JSON or .npy file")
    if not file.is_file():
        raise UserError(f"{option}: no such file: {path}")
    try:
        if file.suffix == ".npy":
            return np.load(file, allow_pickle=False)
        return json.loads(file.read_text())
    except RecursionError:
        raise UserError(f"{option}: cannot read {path}: its JSON is nested too deeply") from None
    except (ValueError, OSError) as exc:
        raise UserError(f"{option}: cannot read {path}: {exc}") from None


def _count(text: str, option: str = "-n", minimum: int = 2) -> int:
    try:
        value = float(text)
    except ValueError:
        raise UserError(f"{option}: expected a number of outputs such as 1e7, got {text!r}") from None
    if not value.is_integer() or value < minimum:
        raise UserError(f"{option}: expected a whole number of outputs >= {minimum}, got {text}")
    return int(value)


def _seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected seconds, such as 60, got {text!r}") from None
    if not 0 < value < float("inf"):
        raise argparse.ArgumentTypeError(f"expected a positive number of seconds, got {text}")
    return value


@contextlib.contextmanager
def _prints_to_stderr():
    """What the black box prints goes to stderr: stdout carries the report (and ``--json``)."""
    sys.stdout.flush()
    saved = os.dup(1)
    try:
        os.dup2(2, 1)  # (C extensions and subprocesses write to the descriptor, not sys.stdout)
        with contextlib.redirect_stdout(sys.stderr):
            yield
    finally:
        sys.stdout.flush()
        os.dup2(saved, 1)
        os.close(saved)


def _cmd(args) -> int:
    from ..audit import audit
    from ..audit.black_box import load_black_box

    # `python -m renyi` finds modules in the working directory; the installed `renyi` script
    # does not, unless told: a black box named from where the user stands must load either way.
    if "" not in sys.path and os.getcwd() not in sys.path:
        sys.path.insert(0, os.getcwd())
    try:
        sampler = load_black_box(args.black_box)
    except (ValueError, TypeError) as exc:
        raise UserError(str(exc)) from None
    database = load_database(args.database, "--database")
    neighbour = load_database(args.neighbour, "--neighbour")
    if args.support is not None and not args.finite_sample:
        raise UserError("--support belongs to --finite-sample")
    if args.finite_sample and args.projection is not None:
        raise UserError("--finite-sample is for discrete outputs; --projection for real vectors")
    claim = claim_of(args)
    # With a claim, each delta-method order gets alpha / J (family-wise); the finite-sample
    # bound is one confidence event for every order and direction already.
    level = args.alpha / len(args.orders) if claim is not None and not args.finite_sample else args.alpha
    workers = None if args.scheduler else args.workers
    n = _count(args.n)
    with _prints_to_stderr():
        bounds = audit(
            sampler,
            database,
            neighbour,
            n,
            args.orders,
            rng=np.random.default_rng(args.seed),
            workers=workers,
            scheduler=args.scheduler,
            chunk=None if args.chunk is None else _count(args.chunk, "--chunk", minimum=1),
            pilot=None if args.pilot is None else _count(args.pilot, "--pilot"),
            task_timeout=args.task_timeout,
            isolate=True,  # a black box that ends its process must not end the CLI with it
            **({} if args.projection is None else {"projection": args.projection}),
            **({"method": "finite-sample", "support": support_of(args.support)} if args.finite_sample else {}),
            discrete=args.discrete,
            alpha=level,
            direction=args.direction,
            progress=None if not args.quiet else False,
        )
    return report(bounds, claim, args)


def add_parser(sub, order_type) -> None:
    """Add ``audit-mechanism`` to the subparsers ``sub`` (``order_type`` parses an order).

    Parameters
    ----------
    sub : argparse._SubParsersAction
    order_type : callable

    Returns
    -------
    None
    """
    a = sub.add_parser(
        "audit-mechanism",
        help="draw a black box's outputs here (in tasks, on all cores or a cluster) and bound epsilon(order)",
        description="Lower confidence bounds for Rényi DP of a black box f(database, n, rng), drawn "
        "in tasks: each output once, memory independent of n.",
        epilog=EXAMPLES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    a.add_argument("black_box", metavar="PACKAGE.MODULE:FUNCTION", help="the sampler f(database, n, rng)")
    a.add_argument("--database", required=True, metavar="FILE", help="x: JSON or .npy")
    a.add_argument("--neighbour", required=True, metavar="FILE", help="an adjacent x': JSON or .npy")
    a.add_argument("-n", required=True, metavar="N", help="outputs per database (e.g. 1e7)")
    a.add_argument("--orders", type=order_type, nargs="+", required=True, metavar="ORDER", help="orders lambda > 1")
    kind = a.add_mutually_exclusive_group()
    kind.add_argument(
        "--discrete", dest="discrete", action="store_true", default=None, help="count outcomes (default: inferred)"
    )
    kind.add_argument(
        "--continuous",
        dest="discrete",
        action="store_false",
        help="real outputs, Gaussian KDE (default: inferred from the pilots: integers and rows are discrete)",
    )
    a.add_argument(
        "--projection",
        choices=["auto", "likelihood-ratio", "mean-difference", "whitened", "grid"],
        default=None,
        help="vector outputs (n, d): a map learned on the pilot, which is held out of the bound (auto, "
        "recommended: the direction or estimated likelihood ratio that bounds best on the pilot); "
        "grid: no projection, the densities on a whitened grid fixed by the pilot (d = 2 or 3)",
    )
    a.add_argument(
        "--finite-sample",
        action="store_true",
        help="discrete outputs: a bound valid for every n; the pilot chooses the cells and is held out",
    )
    a.add_argument(
        "--support",
        metavar="A:B",
        help="with --finite-sample: every outcome the black box can produce (integers A to B, or a,b,c)",
    )
    a.add_argument("--alpha", type=float, default=0.05, help="error level (default 0.05)")
    a.add_argument("--direction", choices=["both", "forward", "reverse"], default="both")
    _add_task_options(a)
    a.add_argument("--seed", type=int, default=0, help="seed of the tasks' streams (default 0)")
    a.add_argument("--quiet", action="store_true", help="no progress bar")
    a.add_argument("--json", action="store_true", help="print JSON instead of a table")
    add_claim_options(a)
    a.set_defaults(func=_cmd)


def _add_task_options(a) -> None:
    """Where and how the tasks run: workers or a Dask scheduler, chunk, pilot, timeout."""
    where = a.add_mutually_exclusive_group()
    where.add_argument("--workers", type=int, default=1, metavar="K", help="local processes (-1: every core)")
    where.add_argument("--scheduler", metavar="ADDRESS", help="a Dask scheduler, e.g. tcp://host:8786")
    a.add_argument(
        "--chunk",
        default=None,
        metavar="M",
        help="most outputs per task (default: about 32 tasks per side, at most 1e6)",
    )
    a.add_argument(
        "--pilot", default=None, metavar="M", help="pilot outputs per side, which fix the grid (default 262144)"
    )
    a.add_argument(
        "--task-timeout",
        type=_seconds,
        default=None,
        metavar="S",
        help="stop the audit if a task takes longer than S seconds (default: wait)",
    )
