"""The audited calls of diffprivlib and OpenDP: each a black box with its claimed RDP curve.

Each :class:`Config` wraps a documented call of a third-party library as a black box
``sample(value, n, seed) -> outputs`` on the adjacent pair "query value 1 against 0"
(a counting query, sensitivity 1), with the RDP curve its documentation implies (``claim``)
and, where it has a closed form, the exact divergence of the pair (``truth``).  Three
*mis-calibrated* configurations reproduce realistic bugs in those same calls.  Building them
imports the optional libraries, so :func:`configs` does it on first use.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from ..audit import claim_gaussian, claim_pure_dp, claim_zcdp
from ..closed_forms import gaussian_renyi, laplace_renyi

__all__ = ["Config", "CONFIGS", "configs"]


@dataclass(frozen=True)
class Config:
    """One audited call: how to sample it, what it claims, and the truth where known.

    Attributes
    ----------
    name, library, description : str
    sampler : callable
        ``sample(value, n, seed) -> outputs``.
    claim : callable
        ``order -> claimed epsilon``.
    claim_basis : str
        Where the claim comes from (the documentation, a privacy map).
    truth : callable or None
        ``order -> exact divergence`` of the pair, where it has a closed form.
    discrete, miscalibrated : bool
    """

    name: str
    library: str
    description: str
    sampler: Callable  # (value, n, seed or None) -> array of n outputs
    claim: Callable  # order -> claimed epsilon(order)
    claim_basis: str
    truth: Callable | None  # order -> exact D_order for the pair, or None
    discrete: bool = False
    miscalibrated: bool = False


def _discrete_laplace_renyi(scale, order, shift=1):
    """D_order between discrete Laplace laws (pmf ~ exp(-|k|/scale)) centred at shift and 0, by summation."""
    k = np.arange(-2000, 2001)
    log_p, log_q = -np.abs(k - shift) / scale, -np.abs(k) / scale
    log_p -= np.logaddexp.reduce(log_p)
    log_q -= np.logaddexp.reduce(log_q)
    return float(np.logaddexp.reduce(order * log_p + (1 - order) * log_q) / (order - 1))


def _dpl(mechanism_factory):
    """diffprivlib: one seeded mechanism object per sample, randomise() once per output."""

    def sample(value, n, seed):
        mech = mechanism_factory(seed)
        return np.array([mech.randomise(value) for _ in range(n)])

    return sample


def _opendp(make):
    """OpenDP: one vector measurement of n copies (not seedable: the seed is ignored)."""

    def sample(value, n, seed):
        out = np.asarray(make()([value] * n))
        return out if out.dtype.kind in "iu" else out.astype(float)

    return sample


#: Records in the audited mean queries (one of them differs between the databases).
M_RECORDS = 100


def _mean_records(value):
    data = np.full(M_RECORDS, 0.5)
    data[0] = value
    return data


def _dpl_mean(value, n, seed):  # correct: diffprivlib clips to the declared bounds
    from diffprivlib import tools as dpl_tools

    rng = np.random.RandomState(seed)
    data = _mean_records(10.0 * value)
    return np.array([dpl_tools.mean(data, epsilon=1.0, bounds=(0.0, 1.0), random_state=rng) for _ in range(n)])


def _unclipped_mean(value, n, seed):  # the bug: Laplace noise for bounds (0, 1), no clipping
    from diffprivlib import mechanisms as dpl

    mech = dpl.Laplace(epsilon=1.0, sensitivity=1.0 / M_RECORDS, random_state=seed)
    centre = float(np.mean(_mean_records(10.0 * value)))
    return np.array([mech.randomise(centre) for _ in range(n)])


def _configs() -> dict:
    import opendp.prelude as dp
    from diffprivlib import mechanisms as dpl

    dp.enable_features("contrib")
    domains = {
        "float_l1": (dp.vector_domain(dp.atom_domain(T=float, nan=False)), dp.l1_distance(T=float)),
        "int_l1": (dp.vector_domain(dp.atom_domain(T=int)), dp.l1_distance(T=int)),
        "float_l2": (dp.vector_domain(dp.atom_domain(T=float, nan=False)), dp.l2_distance(T=float)),
    }
    gauss_sigma = dpl.Gaussian(epsilon=0.5, delta=1e-5, sensitivity=1.0)._scale
    configs = [
        *_diffprivlib_configs(dpl, gauss_sigma),
        *_opendp_configs(dp, domains),
        *_miscalibrated_configs(dpl, dp, domains, gauss_sigma),
    ]
    return {c.name: c for c in configs}


def _diffprivlib_configs(dpl, gauss_sigma) -> list:
    analytic_sigma = dpl.GaussianAnalytic(epsilon=0.5, delta=1e-5, sensitivity=1.0)._scale
    return [
        Config(
            "dpl-laplace",
            "diffprivlib",
            "Laplace(epsilon=1, sensitivity=1)",
            _dpl(lambda s: dpl.Laplace(epsilon=1.0, sensitivity=1.0, random_state=s)),
            claim_pure_dp(1.0),
            "pure 1-DP (documented)",
            lambda o: laplace_renyi(1, 0, 1.0, o),
        ),
        Config(
            "dpl-gaussian",
            "diffprivlib",
            "Gaussian(epsilon=0.5, delta=1e-5, sensitivity=1)",
            _dpl(lambda s: dpl.Gaussian(epsilon=0.5, delta=1e-5, sensitivity=1.0, random_state=s)),
            claim_gaussian(gauss_sigma),
            f"RDP of its sigma = {gauss_sigma:.4g} (it claims (0.5, 1e-5)-DP)",
            lambda o: gaussian_renyi(1, gauss_sigma, 0, gauss_sigma, o),
        ),
        Config(
            "dpl-gaussian-analytic",
            "diffprivlib",
            "GaussianAnalytic(epsilon=0.5, delta=1e-5, sensitivity=1)",
            _dpl(lambda s: dpl.GaussianAnalytic(epsilon=0.5, delta=1e-5, sensitivity=1.0, random_state=s)),
            claim_gaussian(analytic_sigma),
            f"RDP of its sigma = {analytic_sigma:.4g} (it claims (0.5, 1e-5)-DP)",
            lambda o: gaussian_renyi(1, analytic_sigma, 0, analytic_sigma, o),
        ),
        Config(
            "dpl-geometric",
            "diffprivlib",
            "Geometric(epsilon=1, sensitivity=1)",
            _dpl(lambda s: dpl.Geometric(epsilon=1.0, sensitivity=1, random_state=s)),
            claim_pure_dp(1.0),
            "pure 1-DP (documented)",
            lambda o: _discrete_laplace_renyi(1.0, o),
            discrete=True,
        ),
        Config(
            "dpl-snapping",
            "diffprivlib",
            "Snapping(epsilon=1, sensitivity=1, bounds [-50, 50])",
            _dpl(lambda s: dpl.Snapping(epsilon=1.0, sensitivity=1.0, lower=-50, upper=50, random_state=s)),
            claim_pure_dp(1.0),
            "pure 1-DP (documented)",
            None,
        ),
        Config(
            "dpl-mean",
            "diffprivlib",
            "tools.mean(100 records, epsilon=1, bounds=(0, 1)), one record 10 vs 0",
            _dpl_mean,
            claim_pure_dp(1.0),
            "pure 1-DP (documented)",
            None,
        ),
    ]


def _opendp_configs(dp, domains) -> list:
    float_l1, int_l1, float_l2 = domains["float_l1"], domains["int_l1"], domains["float_l2"]
    # What each OpenDP measurement states for a sensitivity-1 query (its privacy map).
    odp_laplace_eps = float((float_l1 >> dp.m.then_laplace(scale=1.0)).map(1.0))
    odp_int_eps = float((int_l1 >> dp.m.then_laplace(scale=1.0)).map(1))
    odp_gauss_rho = float((float_l2 >> dp.m.then_gaussian(scale=2.0)).map(1.0))
    return [
        Config(
            "odp-laplace-float",
            "opendp",
            "then_laplace(scale=1) on floats",
            _opendp(lambda: float_l1 >> dp.m.then_laplace(scale=1.0)),
            claim_pure_dp(odp_laplace_eps),
            f"pure {odp_laplace_eps:.6g}-DP (its privacy map)",
            lambda o: laplace_renyi(1, 0, 1.0, o),
        ),
        Config(
            "odp-laplace-int",
            "opendp",
            "then_laplace(scale=1) on integers (discrete Laplace)",
            _opendp(lambda: int_l1 >> dp.m.then_laplace(scale=1.0)),
            claim_pure_dp(odp_int_eps),
            f"pure {odp_int_eps:.6g}-DP (its privacy map)",
            lambda o: _discrete_laplace_renyi(1.0, o),
            discrete=True,
        ),
        Config(
            "odp-gaussian-float",
            "opendp",
            "then_gaussian(scale=2) on floats",
            _opendp(lambda: float_l2 >> dp.m.then_gaussian(scale=2.0)),
            claim_zcdp(odp_gauss_rho),
            f"{odp_gauss_rho:.6g}-zCDP (its privacy map)",
            lambda o: gaussian_renyi(1, 2.0, 0, 2.0, o),
        ),
    ]


def _miscalibrated_configs(dpl, dp, domains, gauss_sigma) -> list:
    """Realistic mis-calibrations of the same calls."""
    sigma_bug = 1.0 / (2.0 * math.sqrt(0.02))  # rho = 0.02 wants 1/sqrt(2 rho) = 5
    return [
        Config(
            "bug-sensitivity",
            "diffprivlib",
            "Gaussian(..., sensitivity=1) on a query of sensitivity 2",
            lambda v, n, s: _dpl(lambda t: dpl.Gaussian(epsilon=0.5, delta=1e-5, sensitivity=1.0, random_state=t))(
                2.0 * v, n, s
            ),
            claim_gaussian(gauss_sigma),
            "RDP of its sigma for sensitivity 1 (as passed)",
            lambda o: gaussian_renyi(2, gauss_sigma, 0, gauss_sigma, o),
            miscalibrated=True,
        ),
        Config(
            "bug-sigma-formula",
            "opendp",
            "then_gaussian(scale=1/(2 sqrt(rho))) for rho = 0.02",
            _opendp(lambda: domains["float_l2"] >> dp.m.then_gaussian(scale=sigma_bug)),
            claim_zcdp(0.02),
            "0.02-zCDP (intended; sigma should be 1/sqrt(2 rho) = 5)",
            lambda o: gaussian_renyi(1, sigma_bug, 0, sigma_bug, o),
            miscalibrated=True,
        ),
        Config(
            "bug-no-clipping",
            "diffprivlib",
            "Laplace noise for bounds (0, 1) on an unclipped mean",
            _unclipped_mean,
            claim_pure_dp(1.0),
            "pure 1-DP (intended)",
            lambda o: laplace_renyi(10.0 / M_RECORDS, 0, 1.0 / M_RECORDS, o),
            miscalibrated=True,
        ),
    ]


CONFIGS: dict = {}  # filled on first use: building them imports the optional libraries


def configs() -> dict:
    """The audited calls by name (importing diffprivlib and OpenDP on first use).

    Returns
    -------
    dict of str to Config
    """
    if not CONFIGS:
        CONFIGS.update(_configs())
    return CONFIGS
