"""Randomized response and its shuffled version: targets and samplers (renyi.mechanisms)."""

import itertools
import math

import numpy as np
import pytest
from oracles import pmf_renyi
from renyi.mechanisms import ADJACENT_PAIR, MECHANISMS
from scipy import stats

X, X_PRIME = ADJACENT_PAIR


def _rr_vector_pmf(database, eps0):
    keep = math.exp(eps0) / (1 + math.exp(eps0))
    outs = np.array(list(itertools.product([0, 1], repeat=len(database))))
    agree = outs == np.asarray(database)[None, :]
    return outs, np.prod(np.where(agree, keep, 1 - keep), axis=1)


ORDERS = [2, 5, 7, 2.5]


@pytest.mark.parametrize("lam", ORDERS)
def test_randomized_response_target_by_enumeration(lam):
    _, p = _rr_vector_pmf(X, 1.5)
    _, q = _rr_vector_pmf(X_PRIME, 1.5)
    assert MECHANISMS["randomized_response"].target(lam) == pytest.approx(pmf_renyi(p, q, lam), rel=1e-10)


@pytest.mark.parametrize("lam", ORDERS)
def test_shuffled_target_equals_exact_count_divergence(lam):
    outs, p = _rr_vector_pmf(X, 1.5)
    _, q = _rr_vector_pmf(X_PRIME, 1.5)
    counts = outs.sum(axis=1)
    pc = np.bincount(counts, weights=p, minlength=11)
    qc = np.bincount(counts, weights=q, minlength=11)
    assert MECHANISMS["shuffled_randomized_response"].target(lam) == pytest.approx(pmf_renyi(pc, qc, lam), rel=1e-9)


def test_shuffling_reduction_above_60_percent():
    for lam in (2, 5, 7):
        rr = MECHANISMS["randomized_response"].target(lam)
        assert 1 - MECHANISMS["shuffled_randomized_response"].target(lam) / rr > 0.60


def test_randomized_response_sampler_chi_square():
    rng = np.random.default_rng(7)
    db = np.array([1, 0, 1, 1, 0, 0, 0, 1, 0, 1.0])
    s = MECHANISMS["randomized_response"].sample(db, 50_000, rng)
    assert s.shape == (50_000, 10) and s.dtype == np.uint8
    outs, pmf = _rr_vector_pmf(db, 1.5)
    codes = s.astype(np.int64) @ (2 ** np.arange(9, -1, -1))
    observed = np.bincount(codes, minlength=1024)
    expected_codes = outs @ (2 ** np.arange(9, -1, -1))
    expected = np.zeros(1024)
    expected[expected_codes] = pmf * 50_000
    # pool cells with small expectation
    big = expected > 5
    obs = np.append(observed[big], observed[~big].sum())
    exp = np.append(expected[big], expected[~big].sum())
    assert stats.chisquare(obs, exp).pvalue > 1e-3


def test_shuffled_sampler_chi_square():
    rng = np.random.default_rng(8)
    mech = MECHANISMS["shuffled_randomized_response"]
    s = mech.sample(X, 50_000, rng)
    expected = mech.count_pmf(X) * 50_000
    big = expected > 5
    obs = np.bincount(s, minlength=11)
    assert (
        stats.chisquare(np.append(obs[big], obs[~big].sum()), np.append(expected[big], expected[~big].sum())).pvalue
        > 1e-3
    )
