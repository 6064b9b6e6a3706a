"""The parser of ``python -m renyi`` and its dispatch.

One command per module; user errors become one line on stderr and an exit status.

Exit statuses: 0 done (a claim, if given, is not refuted), 1 user error (one line on stderr),
2 usage error, 3 the claim is refuted, 130 interrupted.
"""

from __future__ import annotations

import argparse
import os
import sys

from .. import __version__
from .._docs import CLI_MAIN, fill
from ..audit.engines import TaskError
from . import audit, audit_mechanism, design, mechanisms
from .samples_io import UserError

__all__ = ["build_parser", "main"]

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

    for command in (audit, mechanisms, audit_mechanism, design):
        command.add_parser(sub, _order)
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
    except (UserError, TaskError, ValueError, TypeError, OverflowError, MemoryError) as exc:
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
    ("a larger chunk", "a larger --chunk"),
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
