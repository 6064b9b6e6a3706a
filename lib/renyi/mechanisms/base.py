r"""The base class of the Section IV mechanisms, the adjacent pair (21), and their input checks.

The mechanisms themselves are in :mod:`renyi.mechanisms.catalogue` (additive, subsampled,
noisy gradient descent, and the registry :data:`~renyi.mechanisms.MECHANISMS`) and
:mod:`renyi.mechanisms.randomized_response`.
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import ClassVar

import numpy as np

from .._docs import fill
from .._validation import as_generator, as_rdp_order, as_real_array

__all__ = ["ADJACENT_PAIR", "MAX_TARGET_ORDER", "Mechanism"]

#: The contract of ``Mechanism.sample``, shared by every implementation (``renyi._docs.fill``).
SAMPLE_DOC = r"""
Parameters
----------
database : array_like, 1-D
    The database :math:`x\in[0,1]^m` (for randomized response, entries in {0, 1}).
n : int
    Number of independent outputs, n >= 1.
rng : numpy.random.Generator or int
    The source of randomness (an int seeds a new generator).

Returns
-------
ndarray
    ``n`` outputs of :math:`A(\text{database})`: shape ``(n,)`` (floats for continuous
    mechanisms, integers for discrete ones), drawn in chunks so that memory stays bounded.
"""

#: The contract of ``Mechanism.target``, shared by every implementation.
TARGET_DOC = r"""
Parameters
----------
order : float
    The Rényi order :math:`\lambda>1`, at most :data:`MAX_TARGET_ORDER`.

Returns
-------
float
    :math:`D_\lambda(p\|q)` with :math:`p=A(x)`, :math:`q=A(x')` for the pair (21),
    computed exactly (closed form, exact sum, or quadrature to round-off).
"""

#: The adjacent databases of eq. (21): x = (1, 0, ..., 0) and x' = (0, ..., 0) in [0,1]^10.
ADJACENT_PAIR: tuple[np.ndarray, np.ndarray] = (np.eye(1, 10).ravel(), np.zeros(10))


#: Outputs are generated in chunks of this many draws to bound peak memory.
SAMPLE_CHUNK = 2_000_000


def check_database(database, *, binary: bool = False) -> np.ndarray:
    """``database`` as a 1-D float array in [0, 1] (``binary``: in {0, 1}), or a ValueError."""
    x = as_real_array(database, "database", ndim=1)
    if np.any((x < 0) | (x > 1)):
        raise ValueError("database entries must lie in [0, 1] (the unit cube of Section IV)")
    if binary and not np.all((x == 0) | (x == 1)):
        raise ValueError("database entries must be 0 or 1 for randomized response")
    return x


def check_n(n) -> int:
    """``n`` as a positive int, or a TypeError/ValueError naming it."""
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)):
        raise TypeError(f"n must be an integer, got {n!r}")
    if n < 1:
        raise ValueError(f"n must be >= 1, got {n}")
    return int(n)


def check_rng(rng) -> np.random.Generator:
    """``rng`` as a Generator (an int seeds one)."""
    return as_generator(rng)


#: Largest order for which targets are computed.  The exact subsampled target is a sum of
#: ``order`` terms (cost O(order), vectorised); far beyond, the values
#: are of no use to an audit, whose bounds stop being informative long before.
MAX_TARGET_ORDER = 10_000


def check_target_order(order) -> float:
    order = as_rdp_order(order)
    if order > MAX_TARGET_ORDER:
        raise ValueError(
            f"order must be at most {MAX_TARGET_ORDER:,} for the exact targets "
            f"(their cost grows linearly with the order), got {order:g}"
        )
    return order


def integer_order(order: float) -> int | None:
    """``order`` as an int where it is a whole number >= 2 (exact sums apply), else None."""
    return int(order) if float(order).is_integer() and order >= 2 else None


@dataclass(frozen=True)
class Mechanism:
    """Base class: a sampler plus the exact divergence for the pair (21).

    Attributes
    ----------
    name : str
        The key of :data:`~renyi.mechanisms.MECHANISMS`.
    discrete : bool
        Whether outputs are discrete (relative frequencies) or real (KDE).
    """

    name: ClassVar[str] = ""
    discrete: ClassVar[bool] = False

    @property
    def params(self) -> dict:
        """The constructor parameters, by name."""
        return {f.name: getattr(self, f.name) for f in fields(self)}

    def _normalise(self, **values) -> None:
        """Store validated constructor values on the frozen instance (``__post_init__`` only)."""
        for key, value in values.items():
            object.__setattr__(self, key, value)

    @fill(contract=SAMPLE_DOC)
    def sample(self, database, n, rng):  # pragma: no cover - abstract
        """Draw ``n`` independent outputs of the mechanism on ``database``.

        Subclasses implement this hook; the audit (:func:`renyi.audit.audit`) calls it once
        per side with its own generator, so a subclass must draw only from ``rng``.

        {{contract}}
        """
        raise NotImplementedError

    @fill(contract=TARGET_DOC)
    def target(self, order) -> float:  # pragma: no cover - abstract
        r"""The exact :math:`D_\lambda(p\|q)` for the adjacent pair (21).

        Subclasses implement this hook; the sweeps compare every bound with it.

        {{contract}}
        """
        raise NotImplementedError

    def reverse_target(self, order) -> float:
        r"""The exact :math:`D_\lambda(q\|p)` for the pair (21), with the roles of x and x' swapped.

        Adjacency is symmetric, so :math:`\varepsilon(\lambda)` is at least the larger of
        ``target(order)`` and this.  For the symmetric mechanisms (Laplace, Gaussian,
        randomized response, noisy gradient descent) the two are equal.
        """
        return self.target(order)

    def __str__(self) -> str:
        args = ", ".join(f"{k}={v:g}" if isinstance(v, float) else f"{k}={v}" for k, v in self.params.items())
        return f"{self.name}({args})"
