"""Command line: ``python -m renyi`` (also installed as ``renyi``).

* :mod:`~renyi.cli.main`: the parser of every command, and the dispatch that turns user errors
  into one line on stderr and an exit status;
* :mod:`~renyi.cli.audit`: ``audit`` (two files of outputs, optionally against a claimed curve);
* :mod:`~renyi.cli.audit_mechanism`: ``audit-mechanism`` (a black box drawn here, in tasks);
* :mod:`~renyi.cli.mechanisms`: ``mechanisms`` (the built-in mechanisms and their exact curves);
* :mod:`~renyi.cli.design`: ``design`` (Part II: an α-lift mechanism for a leakage matrix);
* :mod:`~renyi.cli.report`: the claim options, the printed or JSON report and the verdict's
  exit status, shared by both audits;
* :mod:`~renyi.cli.samples_io` and :mod:`~renyi.cli.leakage_io`: reading outputs, leakage
  matrices and priors from files, pipes and standard input.

Exit statuses: 0 done (a claim, if given, is not refuted), 1 user error (one line on
stderr), 2 usage error, 3 the claim is refuted, 130 interrupted.
"""

from .main import build_parser, main
from .report import REFUTED

__all__ = ["main", "build_parser", "REFUTED"]
