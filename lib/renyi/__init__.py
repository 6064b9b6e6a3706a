"""renyi — Rényi-divergence privacy, the library of the compendium.

Part I (auditing, Kutta, Askin and Dunsche, IEEE S&P 2024):
:mod:`renyi.mechanisms`, :mod:`renyi.audit.density`, :mod:`renyi.audit`,
:mod:`renyi.audit.smoothness`, :mod:`renyi.sweeps`.

Part II (design, Zamani, Zarrabian, Sadeghi and Skoglund, 2026):
:mod:`renyi.lift`.

Shared: :mod:`renyi.divergence`, :mod:`renyi.plotting`.
"""

__version__ = "0.1.0"

from . import divergence  # noqa: F401  (the common ground is always loaded)
