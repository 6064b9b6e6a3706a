"""Closed-form Rényi divergences of the Gaussian and Laplace families (renyi.closed_forms)."""

import math

import numpy as np
import pytest
from renyi.closed_forms import gaussian_renyi, laplace_renyi
from scipy import stats


def test_gaussian_max_divergence():
    assert gaussian_renyi(1, 5, 0, 5, np.inf) == math.inf
    t = np.linspace(-30, 30, 600001)
    ratio = stats.norm(0.5, 1).logpdf(t) - stats.norm(0, 2).logpdf(t)
    assert gaussian_renyi(0.5, 1, 0, 2, np.inf) == pytest.approx(ratio.max(), abs=1e-8)


def test_laplace_paper_values():
    # Section IV (a) of Kutta et al., b = 5: values printed in the digest (quadrature-checked there)
    assert [round(laplace_renyi(1, 0, 5, lam), 5) for lam in (2, 5, 7)] == [0.03701, 0.08410, 0.10711]
    assert laplace_renyi(1, 0, 5, np.inf) == pytest.approx(0.2)


def test_laplace_large_order_log_space():
    # d = 2: for large lam, D -> d - log(2)/(lam-1) + ...; compare with mpmath-free asymptotics
    lam = 400.0
    d = 2.0
    exact = (math.log(lam / (2 * lam - 1)) + (lam - 1) * d) / (lam - 1)
    assert laplace_renyi(d, 0, 1, lam) == pytest.approx(exact, rel=1e-12)
