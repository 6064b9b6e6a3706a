"""renyi — Rényi-divergence privacy, the library of the compendium.

Part I (auditing, Kutta, Askin and Dunsche, IEEE S&P 2024):
:mod:`renyi.mechanisms`, :mod:`renyi.audit.density`, :mod:`renyi.audit`,
:mod:`renyi.audit.smoothness`, :mod:`renyi.sweeps`.

Part II (design, Zamani, Zarrabian, Sadeghi and Skoglund, 2026):
:mod:`renyi.lift`.

Shared: :mod:`renyi.divergence` (divergences of pmfs and densities),
:mod:`renyi.closed_forms` (exact divergences of the Section IV pairs), :mod:`renyi.reporting`
(numbers as a reader sees them), :mod:`renyi.plotting` (the book's figure style) and
:mod:`renyi.cli` (``python -m renyi``); ``renyi._validation`` and ``renyi._docs`` are the
checks and docstring pieces the others share.
"""

__version__ = "0.1.0"

import importlib

#: The subpackages and modules ``renyi.<name>`` reaches after ``import renyi``.
_SUBMODULES = (
    "audit",
    "cli",
    "closed_forms",
    "divergence",
    "lift",
    "mechanisms",
    "plotting",
    "reporting",
    "sweeps",
)


def __getattr__(name: str):
    # Loaded when first reached, not at import: a worker process that draws a black box's
    # outputs imports renyi.audit.tasks and numpy only (scipy would double its start-up).
    if name in _SUBMODULES:
        return importlib.import_module(f".{name}", __name__)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__():
    return sorted([*globals(), *_SUBMODULES])
