r"""Part I: black-box lower bounds for Rényi DP (Kutta, Askin and Dunsche, 2024).

The estimator of Section III in one module per step:

* :mod:`~renyi.audit.frequencies`, :mod:`~renyi.audit.density` and
  :mod:`~renyi.audit.bandwidth`: relative frequencies (eq. 9) and the kernel density
  estimate on a grid (eq. 10), with its bandwidth rules;
* :mod:`~renyi.audit.floor`: the softmax floor :math:`t_\tau` (eqs. 13, 17);
* :mod:`~renyi.audit.delta_method`: the floored plug-in, its delta-method variance
  (eq. 18), the second-order bias and the bound of eq. (16);
* :mod:`~renyi.audit.pipeline`: :func:`rdp_lower_bound` (two samples), through one
  :class:`~renyi.audit.density.DensityFit` fitted by :mod:`~renyi.audit.density_fit` (once;
  bounds at every order);
* :mod:`~renyi.audit.sampling`: :func:`audit` (draws from a mechanism first), and
  :mod:`~renyi.audit.parallel` with :mod:`~renyi.audit.mergeable`, which draw it in tasks on
  worker processes or a Dask cluster, each output once (:mod:`~renyi.audit.tasks`: what a
  worker runs; :mod:`~renyi.audit.engines`: where tasks run, and their failures;
  :mod:`~renyi.audit.counts`: the counts a task sends back);
  :mod:`~renyi.audit.black_box`: what a black box is given and must return, and how it is named;
* :mod:`~renyi.audit.streaming`: the same fit from chunks, memory independent of n;
* :mod:`~renyi.audit.reduction`: vector outputs reduced to one dimension by a map learned on
  held-out outputs and chosen there (:mod:`~renyi.audit.projection`: the directions, in chunks;
  :mod:`~renyi.audit.log_ratio`: the estimated log-likelihood ratio), or fixed, and
  :mod:`~renyi.audit.multivariate_kde`: in two or three dimensions, the estimator on a
  whitened grid with no projection;
* :mod:`~renyi.audit.finite_sample` with :mod:`~renyi.audit.pmf_minimum`: for discrete outputs,
  a bound that holds at every sample size (confidence boxes and a certified minimum);
* :mod:`~renyi.audit.claims`: claimed curves and the family-wise :func:`verdict`;
* :mod:`~renyi.audit.bounds`: the :class:`LowerBound` record;
* :mod:`~renyi.audit.baselines` and :mod:`~renyi.audit.smoothness`: the naive, hard-floor
  and histogram estimators, and the Nikol'ski moduli of Definition 4.

This package's namespace is the public face; the submodules hold the details.
"""

import importlib

#: Where each public name lives: loaded on first use, so that importing one module of the
#: package (a worker process imports renyi.audit.tasks) does not load them all.
_HOMES = {
    "DensityFit": "density",
    "LowerBound": "bounds",
    "Verdict": "claims",
    "VerdictRow": "claims",
    "claim_gaussian": "claims",
    "claim_pure_dp": "claims",
    "claim_zcdp": "claims",
    "test_claim": "claims",
    "verdict": "claims",
    "MAX_LOG_SCALE_ERROR": "delta_method",
    "MAX_ORDER": "delta_method",
    "MAX_UNCORRECTED_BIAS": "delta_method",
    "MIN_SAMPLES": "delta_method",
    "bound_from_densities": "delta_method",
    "floored_estimate": "delta_method",
    "second_order_bias": "delta_method",
    "finite_sample_bounds": "finite_sample",
    "default_floor": "floor",
    "paper_floor": "floor",
    "softmax_derivative": "floor",
    "softmax_floor": "floor",
    "fit_grid_kde": "multivariate_kde",
    "DIRECTIONS": "density_fit",
    "bounds_from_fit": "density_fit",
    "fit_densities": "density_fit",
    "rdp_lower_bound": "pipeline",
    "learn_direction": "projection",
    "projected_samples": "reduction",
    "audit": "sampling",
    "array_chunks": "streaming",
    "fit_densities_chunked": "streaming",
}


def __getattr__(name: str):
    module = _HOMES.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f".{module}", __name__), name)
    globals()[name] = value  # (found directly from now on)
    return value


def __dir__():
    return sorted([*globals(), *_HOMES])


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
