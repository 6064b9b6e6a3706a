"""Nikol'ski moduli and the density derivatives they need (renyi.audit.smoothness)."""

import numpy as np
import pytest
from renyi.audit.smoothness import (
    gaussian_derivative,
    holder_exponent,
    l2_modulus,
    laplace_derivative,
    laplace_modulus_closed_form,
)


def test_laplace_weak_derivative_modulus_matches_closed_form_and_slope_half():
    u = np.geomspace(1e-3, 1e-1, 8)
    numeric = l2_modulus(laplace_derivative(5.0, 1), u, lo=-200, hi=200, kinks=[0.0])
    np.testing.assert_allclose(numeric, laplace_modulus_closed_form(u, 5.0), rtol=1e-7)
    assert holder_exponent(u, numeric) == pytest.approx(0.5, abs=0.02)
    assert np.all(laplace_modulus_closed_form(u, 5.0) <= np.sqrt(u) / 25)  # L = b^-2, s - 1 = 1/2


def test_gaussian_derivatives_have_slope_one():
    u = np.geomspace(1e-3, 1e-1, 8)
    for k in (1, 2, 3):
        w = l2_modulus(gaussian_derivative(5.0, k), u, lo=-80, hi=80)
        assert holder_exponent(u, w) == pytest.approx(1.0, abs=0.02)


def test_gaussian_derivative_against_finite_differences():
    t = np.linspace(-3, 3, 13)
    f0, f1 = gaussian_derivative(1.3, 0), gaussian_derivative(1.3, 1)
    np.testing.assert_allclose(f1(t), (f0(t + 1e-6) - f0(t - 1e-6)) / 2e-6, rtol=1e-6, atol=1e-12)
