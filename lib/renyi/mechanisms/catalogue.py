r"""The mechanisms of Section IV of Kutta, Askin and Dunsche (2024).

Every mechanism maps a database :math:`x\in[0,1]^m` to a random output and
offers

* ``sample(database, n, rng)`` — ``n`` independent outputs of
  :math:`A(\text{database})`, vectorised (``n = 10**7`` takes seconds);
* ``target(order)`` — the exact :math:`D_\lambda(p\|q)` for the adjacent pair
  of eq. (21), :math:`p` the law of :math:`A(x)` and :math:`q` that of
  :math:`A(x')`;
* ``discrete`` — whether outputs are discrete (relative frequencies) or
  continuous in :math:`\mathbb R` (kernel density estimates);
* ``params`` — the parameters, defaulting to the paper's values.

:data:`MECHANISMS` holds one instance of each with the paper's parameters;
build others with different parameters from the classes, e.g.
``GaussianMechanism(scale=2.0)``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import ClassVar

import numpy as np
from scipy import special, stats

from .._docs import fill
from .._validation import as_int, as_positive_scalar, as_probability
from ..closed_forms import gaussian_renyi, laplace_renyi, quadrature_renyi
from .base import (
    ADJACENT_PAIR,
    SAMPLE_CHUNK,
    SAMPLE_DOC,
    TARGET_DOC,
    Mechanism,
    check_database,
    check_n,
    check_rng,
    check_target_order,
    integer_order,
)
from .randomized_response import RandomizedResponse, ShuffledRandomizedResponse

__all__ = [
    "MECHANISMS",
    "LaplaceMechanism",
    "GaussianMechanism",
    "SubsampledMechanism",
    "NoisyGradientDescent",
    "subsampled_rdp",
]

#: The one parameter of the additive mechanisms.
_SCALE = r"""
scale : float, default 5
    Noise scale :math:`b>0` (the standard deviation for the Gaussian).
"""

ADJACENT_PAIR[0].setflags(write=False)
ADJACENT_PAIR[1].setflags(write=False)


# ------------------------------------------------------------------ additive


@dataclass(frozen=True)
class _AdditiveMechanism(Mechanism):
    """Sum query plus i.i.d. noise of scale :math:`b`: the Laplace and Gaussian mechanisms."""

    scale: float = 5.0
    name: ClassVar[str] = ""
    _noise: ClassVar[str] = ""  # the numpy Generator method that draws the noise
    _law: ClassVar[object] = None  # the scipy.stats family of the output

    def __post_init__(self):
        self._normalise(scale=as_positive_scalar(self.scale, "scale"))

    @fill(contract=SAMPLE_DOC)
    def sample(self, database, n, rng):
        """Draw ``n`` independent outputs on ``database`` (the hook of :meth:`Mechanism.sample`).

        {{contract}}
        """
        x, n, rng = check_database(database), check_n(n), check_rng(rng)
        return x.sum() + getattr(rng, self._noise)(0.0, self.scale, size=n)

    def logpdf(self, database):
        """Exact log-density of the output (used for quadrature checks)."""
        return self._law(float(np.sum(database)), self.scale).logpdf


@dataclass(frozen=True)
@fill(scale=_SCALE)
class LaplaceMechanism(_AdditiveMechanism):
    r"""Sum query plus Laplace noise: :math:`A(x)=\sum_i x_i+Y`, :math:`Y\sim\mathrm{Lap}(0,b)`.

    The sum has sensitivity :math:`\triangle_S=1` on :math:`[0,1]^m`, so for
    the pair (21) the target equals the optimal :math:`\varepsilon(\lambda)`:

    .. math::

        \varepsilon(\lambda)=\frac{1}{\lambda-1}\log\Big\{\frac{\lambda}{2\lambda-1}e^{(\lambda-1)/b}
        +\frac{\lambda-1}{2\lambda-1}e^{-\lambda/b}\Big\}.

    Parameters
    ----------
    {{scale}}
    """

    name: ClassVar[str] = "laplace"
    _noise: ClassVar[str] = "laplace"
    _law: ClassVar[object] = stats.laplace

    @fill(contract=TARGET_DOC)
    def target(self, order):
        r"""The exact :math:`D_\lambda(p\|q)` for the pair (21) (the hook of :meth:`Mechanism.target`).

        {{contract}}
        """
        return laplace_renyi(1.0, 0.0, self.scale, check_target_order(order))


@dataclass(frozen=True)
@fill(scale=_SCALE)
class GaussianMechanism(_AdditiveMechanism):
    r"""Sum query plus Gaussian noise :math:`\mathcal N(0,b^2)`; :math:`\varepsilon(\lambda)=\lambda/(2b^2)`.

    Parameters
    ----------
    {{scale}}
    """

    name: ClassVar[str] = "gaussian"
    _noise: ClassVar[str] = "normal"
    _law: ClassVar[object] = stats.norm

    @fill(contract=TARGET_DOC)
    def target(self, order):
        r"""The exact :math:`D_\lambda(p\|q)` for the pair (21) (the hook of :meth:`Mechanism.target`).

        {{contract}}
        """
        return gaussian_renyi(1.0, self.scale, 0.0, self.scale, check_target_order(order))


# --------------------------------------------------------------- subsampled


def subsampled_rdp(base_rdp, gamma: float, order: int, *, as_printed: bool = False) -> float:
    r"""Poisson-subsampled RDP of Section IV (b), after Zhu and Wang (2019).

    .. math::

        \varepsilon(\lambda)=\frac{1}{\lambda-1}\log\Big\{(1-\gamma)^{\lambda-1}(\lambda\gamma-\gamma+1)
        +\sum_{j=2}^{\lambda}\binom{\lambda}{j}(1-\gamma)^{\lambda-j}\gamma^{j}
        e^{(j-1)\varepsilon_0(j)}\Big\}

    for integer :math:`\lambda\ge2`, where :math:`\varepsilon_0(j)` = ``base_rdp(j)``
    is the base mechanism's RDP curve.  For the pair (21) this is the *exact*
    divergence: with :math:`L=p_1/q` the likelihood ratio of the shifted and
    unshifted noise, :math:`p/q=1-\gamma+\gamma L` and
    :math:`\mathbb E_q[L^j]=e^{(j-1)\varepsilon_0(j)}`; expand the binomial.

    Parameters
    ----------
    base_rdp : callable
        The base mechanism's RDP curve :math:`\varepsilon_0`, called at integer orders.
    gamma : float
        Sampling probability :math:`\gamma\in(0,1]`.
    order : int
        Integer order :math:`\lambda\ge2`.
    as_printed : bool, default False
        Use :math:`\varepsilon_0(\lambda)` inside the sum, as the seed text of
        Kutta et al. prints it.  **Erratum:** only the :math:`\varepsilon_0(j)`
        version is the divergence, and only it reproduces the paper's claim
        that subsampling cuts :math:`\varepsilon_0(\lambda)` by more than 70 %
        at every :math:`\lambda\in\{2,5,7\}`; the printed variant gives 60.5 %
        and 56.7 % at :math:`\lambda=5,7` (see ``tests/test_mechanisms.py``).

    Returns
    -------
    float

    References
    ----------
    :cite:t:`zhu2019poisson`; :cite:t:`kutta2024lower`, Section IV (b).
    """
    whole_order = integer_order(order)
    if whole_order is None:
        raise ValueError(f"order must be an integer >= 2 for the binomial expansion, got {order!r}")
    gamma = as_probability(gamma, "gamma")
    j = np.arange(2, whole_order + 1)
    eps0 = np.full(j.size, base_rdp(whole_order)) if as_printed else np.array([base_rdp(int(k)) for k in j])
    eps0 = np.asarray(eps0, dtype=float)
    if not np.all(np.isfinite(eps0)) or np.any(eps0 < 0):
        bad = int(j[np.argmax(~np.isfinite(eps0) | (eps0 < 0))])
        raise ValueError(f"base_rdp must return a finite epsilon >= 0 at every order; at order {bad} it did not")
    log_comb = special.gammaln(whole_order + 1) - special.gammaln(j + 1) - special.gammaln(whole_order - j + 1)
    log_terms = np.concatenate(
        [
            [(whole_order - 1) * math.log1p(-gamma) + math.log(whole_order * gamma - gamma + 1)],
            log_comb + (whole_order - j) * math.log1p(-gamma) + j * math.log(gamma) + (j - 1) * eps0,
        ]
    )
    return float(special.logsumexp(log_terms)) / (whole_order - 1)


@dataclass(frozen=True)
class SubsampledMechanism(Mechanism):
    r"""Poisson subsampling :math:`\Gamma` (eq. 22) followed by an additive mechanism.

    Each record enters independently with probability :math:`\gamma`; the sum
    of the selected records receives Laplace or Gaussian noise of scale
    :math:`b`.  For the pair (21), :math:`p=(1-\gamma)\,\nu+\gamma\,\nu(\cdot-1)`
    and :math:`q=\nu`, :math:`\nu` the noise law.  The target is
    :func:`subsampled_rdp` for integer orders and adaptive quadrature of the
    exact mixture density otherwise.

    Parameters
    ----------
    noise : {"laplace", "gaussian"}
    scale : float, default 5
        Noise scale :math:`b>0`.
    gamma : float, default 0.5
        Sampling probability :math:`\gamma\in(0,1]`.
    """

    noise: str = "laplace"
    scale: float = 5.0
    gamma: float = 0.5

    def __post_init__(self):
        if self.noise not in ("laplace", "gaussian"):
            raise ValueError(f"noise must be 'laplace' or 'gaussian', got {self.noise!r}")
        self._normalise(scale=as_positive_scalar(self.scale, "scale"), gamma=as_probability(self.gamma, "gamma"))

    @property
    def name(self) -> str:
        """``subsampled_laplace`` or ``subsampled_gaussian``."""
        return f"subsampled_{self.noise}"

    @property
    def base(self) -> Mechanism:
        """The additive mechanism that is subsampled."""
        return (LaplaceMechanism if self.noise == "laplace" else GaussianMechanism)(self.scale)

    @fill(contract=SAMPLE_DOC)
    def sample(self, database, n, rng):
        """Draw ``n`` independent outputs on ``database`` (the hook of :meth:`Mechanism.sample`).

        {{contract}}
        """
        x, n, rng = check_database(database), check_n(n), check_rng(rng)
        # Records equal to 0 add nothing whatever the coin, so only the others need coins.
        nz = x[x != 0]
        out = np.empty(n)
        for start in range(0, n, SAMPLE_CHUNK):
            k = min(SAMPLE_CHUNK, n - start)
            total = (rng.random((k, nz.size)) < self.gamma) @ nz if nz.size else np.zeros(k)
            noise = rng.laplace(0, self.scale, k) if self.noise == "laplace" else rng.normal(0, self.scale, k)
            out[start : start + k] = total + noise
        return out

    @fill(contract=TARGET_DOC)
    def target(self, order):
        r"""The exact :math:`D_\lambda(p\|q)` for the pair (21) (the hook of :meth:`Mechanism.target`).

        {{contract}}
        """
        order = check_target_order(order)
        if integer_order(order) is not None:
            return subsampled_rdp(self.base.target, self.gamma, int(order))
        return quadrature_renyi(
            self.logpdf(ADJACENT_PAIR[0]), self.logpdf(ADJACENT_PAIR[1]), order, kinks=(0.0, 1.0), span=80 * self.scale
        )

    def reverse_target(self, order):
        r""":math:`D_\lambda(q\|p)`: the base noise against the subsampled mixture, by quadrature."""
        order = check_target_order(order)
        return quadrature_renyi(
            self.logpdf(ADJACENT_PAIR[1]), self.logpdf(ADJACENT_PAIR[0]), order, kinks=(0.0, 1.0), span=80 * self.scale
        )

    def logpdf(self, database):
        """Exact log-density of one output on ``database`` (the mixture; quadrature checks)."""
        x = check_database(database)
        base = stats.laplace if self.noise == "laplace" else stats.norm
        nz = x[x != 0]
        # Law of the subsampled sum: a finite mixture over subsets of the non-zero records.
        subsets = (
            np.array(np.meshgrid(*[[0, 1]] * nz.size, indexing="ij")).reshape(nz.size, -1).T
            if nz.size
            else np.zeros((1, 0))
        )
        if subsets.shape[0] > 4096:
            raise ValueError("logpdf enumerates subsets; use at most 12 non-zero records")
        shifts = subsets @ nz if nz.size else np.zeros(1)
        logw = subsets.sum(1) * math.log(self.gamma) + (nz.size - subsets.sum(1)) * math.log1p(-self.gamma)

        noise = base(0, self.scale)

        def logpdf(t):
            t_arr = np.atleast_1d(np.asarray(t, dtype=float))
            out = special.logsumexp(logw[:, None] + noise.logpdf(t_arr[None, :] - shifts[:, None]), axis=0)
            return out if np.ndim(t) else float(out[0])

        return logpdf


# ------------------------------------------------------ noisy gradient descent


@dataclass(frozen=True)
class NoisyGradientDescent(Mechanism):
    r"""Noisy gradient descent on the quadratic loss, Section IV (e).

    The empirical risk is :math:`\mathcal L_x(\theta)=\frac1m\sum_i\frac12(\theta-x_i)^2`
    with :math:`\theta_0=0`, :math:`\Theta=\mathbb R`, and :math:`K` steps

    .. math::

        \theta_{k+1}=\theta_k-\eta\nabla\mathcal L_x(\theta_k)+\sqrt{2\eta}\,Y_k,\qquad Y_k\sim\mathcal N(0,b^2);

    the output is :math:`\theta_K`.

    **Reconstruction.** The seed text lacks the update equation.  The noise
    scale :math:`\sqrt{2\eta}\,b` is our reconstruction (the Langevin form of
    Chourasia et al., 2021); it reproduces the paper's closed form exactly:
    :math:`\theta_K\sim\mathcal N\big(\bar x(1-a),\,2b^2(1-a^2)/(2-\eta)\big)`
    with :math:`a=(1-\eta)^K`, hence

    .. math::

        D_\lambda(p\|q)=\frac{\lambda S_g^2}{4b^2m^2}\,\frac{2-\eta}{1+(1-\eta)^K}\,\big(1-(1-\eta)^K\big)

    for the pair (21) (:math:`S_g=1`).

    Parameters
    ----------
    eta : float, default 0.2
        Step size.
    scale : float, default 1
        Standard deviation of the Gaussian noise added to each gradient.
    steps : int, default 10
        Number of iterations.
    """

    name: ClassVar[str] = "noisy_gradient_descent"
    eta: float = 0.2
    scale: float = 1.0
    steps: int = 10

    def __post_init__(self):
        eta = as_positive_scalar(self.eta, "eta")
        if eta >= 1:
            raise ValueError(f"eta must lie in (0, 1) for a contraction, got {eta!r}")
        as_int(self.steps, "steps")
        self._normalise(eta=eta, scale=as_positive_scalar(self.scale, "scale"))

    @fill(contract=SAMPLE_DOC)
    def sample(self, database, n, rng):
        """Draw ``n`` independent outputs on ``database`` (the hook of :meth:`Mechanism.sample`).

        {{contract}}
        """
        x, n, rng = check_database(database), check_n(n), check_rng(rng)
        xbar = x.mean()
        out = np.empty(n)
        noise_sd = math.sqrt(2 * self.eta) * self.scale
        for start in range(0, n, SAMPLE_CHUNK):
            k = min(SAMPLE_CHUNK, n - start)
            theta = np.zeros(k)
            for _ in range(self.steps):
                theta -= self.eta * (theta - xbar)  # gradient of the mean loss
                theta += noise_sd * rng.standard_normal(k)
            out[start : start + k] = theta
        return out

    def output_law(self, database) -> tuple[float, float]:
        r"""Exact mean and standard deviation of :math:`\theta_K` (Gaussian)."""
        x = check_database(database)
        a = (1 - self.eta) ** self.steps
        var = 2 * self.scale**2 * (1 - a * a) / (2 - self.eta)
        return float(x.mean() * (1 - a)), math.sqrt(var)

    @fill(contract=TARGET_DOC)
    def target(self, order):
        r"""The exact :math:`D_\lambda(p\|q)` for the pair (21) (the hook of :meth:`Mechanism.target`).

        {{contract}}
        """
        order = check_target_order(order)
        m = ADJACENT_PAIR[0].size
        a = (1 - self.eta) ** self.steps
        return order / (4 * self.scale**2 * m**2) * (2 - self.eta) / (1 + a) * (1 - a)


#: The seven mechanisms of Section IV with the paper's parameters, keyed by name.
MECHANISMS: dict[str, Mechanism] = {
    "laplace": LaplaceMechanism(),
    "gaussian": GaussianMechanism(),
    "subsampled_laplace": SubsampledMechanism("laplace"),
    "subsampled_gaussian": SubsampledMechanism("gaussian"),
    "randomized_response": RandomizedResponse(),
    "shuffled_randomized_response": ShuffledRandomizedResponse(),
    "noisy_gradient_descent": NoisyGradientDescent(),
}
