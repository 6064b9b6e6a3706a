"""What ``audit`` and ``audit-mechanism`` share.

The claim options, the printed or JSON report of the bounds, and the exit status that carries
the verdict.
"""

from __future__ import annotations

import json
import math
import sys

import numpy as np

from .samples_io import UserError, load_samples

__all__ = ["REFUTED", "add_claim_options", "claim_of", "format_order", "report", "support_of", "write_json"]


def json_safe(value):
    """JSON has no NaN or Infinity: write null, and say why next to it."""
    if isinstance(value, dict):
        out = {}
        for key, item in value.items():
            if isinstance(item, float) and not math.isfinite(item):
                out[key] = None
                out[f"{key}_reason"] = "nan" if math.isnan(item) else ("+inf" if item > 0 else "-inf")
            else:
                out[key] = json_safe(item)
        return out
    if isinstance(value, (list, tuple)):
        return [json_safe(item) for item in value]
    return value


def write_json(obj) -> None:
    """Write ``obj`` to standard output as indented JSON, non-finite numbers as null.

    Parameters
    ----------
    obj : dict or list
        A non-finite float becomes null beside a ``<key>_reason`` of ``"nan"``, ``"+inf"``
        or ``"-inf"``.

    Returns
    -------
    None
    """
    json.dump(json_safe(obj), sys.stdout, indent=2, allow_nan=False)
    sys.stdout.write("\n")


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
            write_json([b.to_dict() for b in bounds])
        else:
            write_json(
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


#: How the report names each projection's map.
_MAPS = {
    "likelihood-ratio": "the estimated log-likelihood ratio",
    "mean-difference": "the mean-difference direction",
    "whitened": "the whitened direction",
    "fixed": "a fixed direction",
    "callable": "a given map",
}


def _projection_line(record) -> str:
    """How vector outputs were reduced: the map, its held-out outputs, the share it keeps."""
    held = record["held_out"]
    if record["kind"].removesuffix(" (pilot)") == "grid":
        widths = ", ".join(f"{h:.3g}" for h in record["bandwidths"])
        chosen = f"; chosen by auto on {held[0]:,} + {held[1]:,} held-out outputs" if held[0] else ""
        return (
            f"outputs: {record['dimension']}-dimensional, estimated on a whitened grid with no projection\n"
            f"            (bandwidths {widths} in whitened units{chosen})"
        )
    source = f"learned from {held[0]:,} + {held[1]:,} held-out outputs" if held[0] else "fixed"
    kind = record["kind"].removesuffix(" (pilot)")
    map_ = _MAPS.get(kind, "a direction")
    chosen = " (chosen by auto)" if record.get("requested") == "auto" else ""
    share = record.get("divergence_share")
    kept = "" if share is None else f";\n            it keeps {share:.2f} of the best candidate's held-out bound"
    return f"projection: {record['dimension']}-dimensional outputs on {map_}{chosen},\n            {source}{kept}"


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
    """The claimed RDP curve from ``--claim-epsilon``, ``--claim-rho`` or ``--claim-curve``.

    Parameters
    ----------
    args : argparse.Namespace
        The parsed options; ``--claim-curve`` must list every order of ``args.orders``.

    Returns
    -------
    callable or None
        ``epsilon(order)`` of the claim, or None when no claim is given.
    """
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
    """An order as short as ``:g`` prints it, but never so short that two orders look alike.

    Parameters
    ----------
    order : float

    Returns
    -------
    str
    """
    short = f"{float(order):g}"
    return short if float(short) == float(order) else repr(float(order))


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


def support_of(text):
    """``--support``: ``A:B`` (the integers A to B) or ``v1,v2,...``, the outcomes a mechanism can produce.

    Parameters
    ----------
    text : str or None

    Returns
    -------
    ndarray or None
    """
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
