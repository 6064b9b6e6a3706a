"""Black boxes for ``audit(..., workers=k)`` in the benchmarks, in a module that imports numpy only.

A worker process imports the module of the black box it runs; this one keeps that import (and
so the worker's start) as short as a user's own small module would.
"""

import numpy as np


def busy_box(database, n, rng):
    """A CPU-bound black box whose cost per output is set by ``database = (value, rounds)``:
    each output sums ``rounds`` normal draws (the rounds travel with the database, so that the
    worker processes use the cost calibrated in the parent)."""
    value, rounds = database
    total = np.zeros(n)
    for _ in range(int(rounds)):
        total += rng.standard_normal(n)
    return float(value) + 5.0 * total / np.sqrt(rounds)


def light_box(database, n, rng):
    """The Gaussian mechanism as a plain callable (for the memory table)."""
    return float(np.sum(database)) + rng.normal(0.0, 5.0, n)


def diffprivlib_geometric(database, n, rng):
    """diffprivlib's ``Geometric(epsilon=1, sensitivity=1)`` on the database's sum, one
    ``randomise`` call per output (the ``[libraries]`` extra), seeded from ``rng``."""
    from diffprivlib.mechanisms import Geometric

    mechanism = Geometric(epsilon=1.0, sensitivity=1, random_state=int(rng.integers(2**31)))
    value = int(np.sum(database))
    return np.array([mechanism.randomise(value) for _ in range(n)])
