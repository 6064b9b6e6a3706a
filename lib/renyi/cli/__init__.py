"""Command line: ``python -m renyi`` (also installed as ``renyi``).

* :mod:`~renyi.cli.audit`: ``audit`` (two files of outputs, optionally against a claimed
  curve) and ``mechanisms``, and the parser of every command;
* :mod:`~renyi.cli.design`: ``design`` (Part II: an α-lift mechanism for a leakage matrix);
* :mod:`~renyi.cli.samples_io`: reading outputs from files, pipes and standard input.

Exit statuses: 0 done (a claim, if given, is not refuted), 1 user error (one line on
stderr), 2 usage error, 3 the claim is refuted, 130 interrupted.
"""

from .audit import REFUTED, build_parser, main

__all__ = ["main", "build_parser", "REFUTED"]
