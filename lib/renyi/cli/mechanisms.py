"""``python -m renyi mechanisms``: the built-in mechanisms of Section IV and their exact epsilon(order)."""

from __future__ import annotations

from .report import write_json

__all__ = ["add_parser", "run"]


def run(args) -> int:
    """Print the built-in mechanisms and their exact epsilon(order) (a table or ``--json``).

    Parameters
    ----------
    args : argparse.Namespace
        The parsed options: ``orders`` and ``json``.

    Returns
    -------
    int
        The exit status, 0.
    """
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
        write_json(out)
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


def add_parser(sub, order_type) -> None:
    """Add ``mechanisms`` to the subparsers ``sub`` (``order_type`` parses an order).

    Parameters
    ----------
    sub : argparse._SubParsersAction
    order_type : callable

    Returns
    -------
    None
    """
    m = sub.add_parser("mechanisms", help="list the built-in mechanisms and their exact epsilon(order)")
    m.add_argument("--orders", type=order_type, nargs="+", default=[2.0, 5.0, 7.0], metavar="ORDER")
    m.add_argument("--json", action="store_true")
    m.set_defaults(func=run)
