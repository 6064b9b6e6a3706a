r"""Part I: black-box lower bounds for Rényi DP (Kutta, Askin and Dunsche, 2024).

The estimator of Section III in one module per step:

* :mod:`~renyi.audit.frequencies`, :mod:`~renyi.audit.density` and
  :mod:`~renyi.audit.bandwidth`: relative frequencies (eq. 9) and the kernel density
  estimate on a grid (eq. 10), with its bandwidth rules;
* :mod:`~renyi.audit.floor`: the softmax floor :math:`t_\tau` (eqs. 13, 17);
* :mod:`~renyi.audit.delta_method`: the floored plug-in, its delta-method variance
  (eq. 18), the second-order bias and the bound of eq. (16);
* :mod:`~renyi.audit.pipeline`: :func:`rdp_lower_bound` (two samples), through one
  :class:`DensityFit`;
* :mod:`~renyi.audit.sampling`: :func:`audit` (draws from a mechanism first), and
  :mod:`~renyi.audit.parallel` with :mod:`~renyi.audit.mergeable`, which draw it in tasks on
  worker processes or a Dask cluster, each output once; :mod:`~renyi.audit.black_box`: what
  a black box is given and must return, and how it is named;
* :mod:`~renyi.audit.streaming`: the same fit from chunks, memory independent of n;
* :mod:`~renyi.audit.projection`: vector outputs reduced to one dimension by a direction
  learned on held-out outputs (or fixed), in chunks, and :mod:`~renyi.audit.multivariate_kde`:
  in two or three dimensions, the estimator on a whitened grid with no projection;
* :mod:`~renyi.audit.finite_sample` with :mod:`~renyi.audit.pmf_minimum`: for discrete outputs,
  a bound that holds at every sample size (confidence boxes and a certified minimum);
* :mod:`~renyi.audit.claims`: claimed curves and the family-wise :func:`verdict`;
* :mod:`~renyi.audit.bounds`: the :class:`LowerBound` record;
* :mod:`~renyi.audit.baselines` and :mod:`~renyi.audit.smoothness`: the naive, hard-floor
  and histogram estimators, and the Nikol'ski moduli of Definition 4.

This package's namespace is the public face; the submodules hold the details.
"""

from .bounds import DensityFit, LowerBound
from .claims import Verdict, VerdictRow, claim_gaussian, claim_pure_dp, claim_zcdp, test_claim, verdict
from .delta_method import (
    MAX_LOG_SCALE_ERROR,
    MAX_ORDER,
    MAX_UNCORRECTED_BIAS,
    MIN_SAMPLES,
    bound_from_densities,
    floored_estimate,
    second_order_bias,
)
from .finite_sample import finite_sample_bounds
from .floor import default_floor, paper_floor, softmax_derivative, softmax_floor
from .multivariate_kde import fit_grid_kde
from .pipeline import DIRECTIONS, bounds_from_fit, fit_densities, rdp_lower_bound
from .projection import learn_direction, projected_samples
from .sampling import audit
from .streaming import array_chunks, fit_densities_chunked

__all__ = [
    "rdp_lower_bound",
    "audit",
    "fit_densities",
    "bounds_from_fit",
    "DensityFit",
    "LowerBound",
    "DIRECTIONS",
    "test_claim",
    "verdict",
    "Verdict",
    "VerdictRow",
    "claim_pure_dp",
    "claim_zcdp",
    "claim_gaussian",
    "finite_sample_bounds",
    "projected_samples",
    "learn_direction",
    "fit_grid_kde",
    "fit_densities_chunked",
    "array_chunks",
    "bound_from_densities",
    "floored_estimate",
    "second_order_bias",
    "softmax_floor",
    "softmax_derivative",
    "default_floor",
    "paper_floor",
    "MAX_ORDER",
    "MIN_SAMPLES",
    "MAX_LOG_SCALE_ERROR",
    "MAX_UNCORRECTED_BIAS",
]
