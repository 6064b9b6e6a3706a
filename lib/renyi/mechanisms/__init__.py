r"""The mechanisms of Section IV of Kutta, Askin and Dunsche (2024), and the hooks for your own.

* :mod:`~renyi.mechanisms.base`: :class:`Mechanism` (subclasses implement ``sample`` and
  ``target``), the adjacent pair of eq. (21) and the input checks every mechanism shares;
* :mod:`~renyi.mechanisms.catalogue`: Laplace, Gaussian, subsampled and noisy gradient
  descent, and the registry :data:`MECHANISMS` with the paper's parameters;
* :mod:`~renyi.mechanisms.randomized_response`: randomized response and its shuffled form.

This package's namespace is the public face; the submodules hold the details.
"""

from .base import ADJACENT_PAIR, MAX_TARGET_ORDER, Mechanism
from .catalogue import (
    MECHANISMS,
    GaussianMechanism,
    LaplaceMechanism,
    NoisyGradientDescent,
    SubsampledMechanism,
    subsampled_rdp,
)
from .randomized_response import RandomizedResponse, ShuffledRandomizedResponse, shuffled_rr_rdp

__all__ = [
    "MECHANISMS",
    "ADJACENT_PAIR",
    "MAX_TARGET_ORDER",
    "Mechanism",
    "LaplaceMechanism",
    "GaussianMechanism",
    "SubsampledMechanism",
    "NoisyGradientDescent",
    "RandomizedResponse",
    "ShuffledRandomizedResponse",
    "subsampled_rdp",
    "shuffled_rr_rdp",
]
