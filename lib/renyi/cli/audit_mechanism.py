"""``python -m renyi audit-mechanism``: audit a black box by name, drawing its outputs here.

The black box is ``package.module:function``, a callable ``f(database, n, rng) -> outputs``;
the databases are read from JSON or ``.npy``.  Outputs are drawn in tasks (each once, memory
independent of ``n``) on ``--workers`` processes or a Dask cluster (``--scheduler``), and the
result is printed as ``audit`` prints it, with the same claims and exit statuses.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from .report import add_claim_options, claim_of, report
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
    if not file.is_file():
        raise UserError(f"{option}: no such file: {path}")
    try:
        if file.suffix == ".npy":
            return np.load(file, allow_pickle=False)
        return json.loads(file.read_text())
    except (ValueError, OSError) as exc:
        raise UserError(f"{option}: cannot read {path}: {exc}") from None


def _count(text: str) -> int:
    try:
        value = float(text)
    except ValueError:
        raise UserError(f"-n: expected a number of outputs such as 1e7, got {text!r}") from None
    if not value.is_integer() or value < 2:
        raise UserError(f"-n: expected a whole number of outputs >= 2, got {text}")
    return int(value)


def _cmd(args) -> int:
    from ..audit import audit
    from ..audit.parallel import load_black_box

    try:
        sampler = load_black_box(args.black_box)
    except (ValueError, TypeError) as exc:
        raise UserError(str(exc)) from None
    database = load_database(args.database, "--database")
    neighbour = load_database(args.neighbour, "--neighbour")
    claim = claim_of(args)
    level = args.alpha / len(args.orders) if claim is not None else args.alpha
    workers = None if args.scheduler else args.workers
    bounds = audit(
        sampler,
        database,
        neighbour,
        _count(args.n),
        args.orders,
        rng=np.random.default_rng(args.seed),
        workers=workers,
        scheduler=args.scheduler,
        chunk=args.chunk,
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
    import argparse

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
    kind = a.add_mutually_exclusive_group(required=True)
    kind.add_argument("--discrete", dest="discrete", action="store_true", help="count outcomes")
    kind.add_argument("--continuous", dest="discrete", action="store_false", help="real outputs (Gaussian KDE)")
    a.add_argument("--alpha", type=float, default=0.05, help="error level (default 0.05)")
    a.add_argument("--direction", choices=["both", "forward", "reverse"], default="both")
    where = a.add_mutually_exclusive_group()
    where.add_argument("--workers", type=int, default=1, metavar="K", help="local processes (-1: every core)")
    where.add_argument("--scheduler", metavar="ADDRESS", help="a Dask scheduler, e.g. tcp://host:8786")
    a.add_argument("--chunk", type=int, default=None, metavar="M", help="most outputs per task (default 1e6)")
    a.add_argument("--seed", type=int, default=0, help="seed of the tasks' streams (default 0)")
    a.add_argument("--quiet", action="store_true", help="no progress bar")
    a.add_argument("--json", action="store_true", help="print JSON instead of a table")
    add_claim_options(a)
    a.set_defaults(func=_cmd)
