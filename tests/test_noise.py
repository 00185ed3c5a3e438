"""Noise samplers against their laws.  Each test uses a fixed seed and a test at level 1e-3, so its
false-alarm rate under a random seed would be 0.1 % (two-sample/goodness-of-fit tests below)."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from dpkernels import noise
from dpkernels._validation import check_random_state

LEVEL = 1e-3


def test_laplace_vector_matches_laplace_law(rng):
    x = noise.laplace_vector(0.7, (20000,), rng)
    assert stats.kstest(x, stats.laplace(scale=0.7).cdf).pvalue > LEVEL


@pytest.mark.parametrize("d, beta", [(1, 2.0), (5, 0.5), (40, 3.0)])
def test_gamma_norm_vector_norm_is_gamma(rng, d, beta):
    """Chaudhuri et al. Eq. (4): density ~ exp(-beta ||b||) => ||b|| ~ Gamma(d, 1/beta)."""
    b = noise.gamma_norm_vector(beta, d, n=20000, random_state=rng)
    r = np.linalg.norm(b, axis=1)
    assert stats.kstest(r, stats.gamma(a=d, scale=1 / beta).cdf).pvalue > LEVEL


@pytest.mark.parametrize("d", [2, 3, 10])
def test_gamma_norm_vector_direction_is_uniform(rng, d):
    """For u uniform on S^{d-1}, (u_1 + 1)/2 ~ Beta((d-1)/2, (d-1)/2); also independent of the norm."""
    b = noise.gamma_norm_vector(1.3, d, n=20000, random_state=rng)
    r = np.linalg.norm(b, axis=1)
    u = b / r[:, None]
    for axis in range(min(d, 3)):
        z = (u[:, axis] + 1) / 2
        assert stats.kstest(z, stats.beta((d - 1) / 2, (d - 1) / 2).cdf).pvalue > LEVEL
    assert abs(stats.spearmanr(r, u[:, 0]).statistic) < 4 / np.sqrt(len(r))


def test_gamma_norm_vector_density_in_one_dimension(rng):
    """d = 1: b is Laplace(0, 1/beta), the density exp(-beta |b|) beta / 2."""
    b = noise.gamma_norm_vector(2.5, 1, n=20000, random_state=rng)[:, 0]
    assert stats.kstest(b, stats.laplace(scale=1 / 2.5).cdf).pvalue > LEVEL


def test_gaussian_vector(rng):
    x = noise.gaussian_vector(1.7, 20000, rng)
    assert stats.kstest(x, stats.norm(scale=1.7).cdf).pvalue > LEVEL


def test_exponential_mechanism_frequencies(rng):
    u = np.array([0.0, 1.0, 3.0, 3.5])
    p = noise.exponential_mechanism_probabilities(u, epsilon=1.2, sensitivity=1.0)
    assert np.isclose(p.sum(), 1.0) and np.allclose(p, np.exp(0.6 * u) / np.exp(0.6 * u).sum())
    picks = np.array([noise.exponential_mechanism(u, 1.2, 1.0, rng) for _ in range(20000)])
    observed = np.bincount(picks, minlength=4)
    assert stats.chisquare(observed, 20000 * p).pvalue > LEVEL


def test_report_noisy_max_two_counts_closed_form(rng):
    """P(argmax = 0) for counts (c, 0) with Laplace(s) noise: 1 - exp(-c/s)(2 + c/s)/4."""
    c, s = 1.0, 1.0
    picks = noise.report_noisy_max(np.tile([c, 0.0], (40000, 1)), s, rng, axis=1)
    p0 = 1 - np.exp(-c / s) * (2 + c / s) / 4
    assert stats.binomtest(int(np.sum(picks == 0)), 40000, p0).pvalue > LEVEL


@pytest.mark.parametrize("bad", [0.0, -1.0, float("nan"), float("inf")])
def test_invalid_scales_raise(bad):
    with pytest.raises(ValueError):
        noise.laplace_vector(bad, 3, 0)
    with pytest.raises(ValueError):
        noise.gamma_norm_vector(bad, 3, random_state=0)


def test_global_rng_is_refused():
    with pytest.raises(ValueError, match="global RNG"):
        check_random_state(np.random.RandomState(0))


def test_same_seed_same_noise():
    assert np.array_equal(noise.laplace_vector(1.0, 5, 11), noise.laplace_vector(1.0, 5, 11))
