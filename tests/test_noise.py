"""Noise samplers against their laws.  Each test uses a fixed seed and a test at level 1e-3, so its
false-alarm rate under a random seed would be 0.1 % (two-sample/goodness-of-fit tests below)."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from dpkernels import noise
from dpkernels._validation import UnsafeNoiseWarning, check_random_state

LEVEL = 1e-3


def test_laplace_vector_matches_laplace_law(rng):
    x = noise.laplace_vector(0.7, (20000,), rng, idealized=True)
    assert stats.kstest(x, stats.laplace(scale=0.7).cdf).pvalue > LEVEL


@pytest.mark.parametrize("d, beta", [(1, 2.0), (5, 0.5), (40, 3.0)])
def test_gamma_norm_vector_norm_is_gamma(rng, d, beta):
    """Chaudhuri et al. Eq. (4): density ~ exp(-beta ||b||) => ||b|| ~ Gamma(d, 1/beta)."""
    b = noise.gamma_norm_vector(beta, d, n=20000, random_state=rng, idealized=True)
    r = np.linalg.norm(b, axis=1)
    assert stats.kstest(r, stats.gamma(a=d, scale=1 / beta).cdf).pvalue > LEVEL


@pytest.mark.parametrize("d", [2, 3, 10])
def test_gamma_norm_vector_direction_is_uniform(rng, d):
    """For u uniform on S^{d-1}, (u_1 + 1)/2 ~ Beta((d-1)/2, (d-1)/2); also independent of the norm."""
    b = noise.gamma_norm_vector(1.3, d, n=20000, random_state=rng, idealized=True)
    r = np.linalg.norm(b, axis=1)
    u = b / r[:, None]
    for axis in range(min(d, 3)):
        z = (u[:, axis] + 1) / 2
        assert stats.kstest(z, stats.beta((d - 1) / 2, (d - 1) / 2).cdf).pvalue > LEVEL
    assert abs(stats.spearmanr(r, u[:, 0]).statistic) < 4 / np.sqrt(len(r))


def test_gamma_norm_vector_density_in_one_dimension(rng):
    """d = 1: b is Laplace(0, 1/beta), the density exp(-beta |b|) beta / 2."""
    b = noise.gamma_norm_vector(2.5, 1, n=20000, random_state=rng, idealized=True)[:, 0]
    assert stats.kstest(b, stats.laplace(scale=1 / 2.5).cdf).pvalue > LEVEL


def test_gaussian_vector(rng):
    x = noise.gaussian_vector(1.7, 20000, rng, idealized=True)
    assert stats.kstest(x, stats.norm(scale=1.7).cdf).pvalue > LEVEL


def test_exponential_mechanism_frequencies(rng):
    u = np.array([0.0, 1.0, 3.0, 3.5])
    p = noise.exponential_mechanism_probabilities(u, epsilon=1.2, sensitivity=1.0)
    assert np.isclose(p.sum(), 1.0) and np.allclose(p, np.exp(0.6 * u) / np.exp(0.6 * u).sum())
    picks = np.array([noise.exponential_mechanism(u, 1.2, 1.0, rng, idealized=True) for _ in range(20000)])
    observed = np.bincount(picks, minlength=4)
    assert stats.chisquare(observed, 20000 * p).pvalue > LEVEL


def test_report_noisy_max_two_counts_closed_form(rng):
    """P(argmax = 0) for counts (c, 0) with Laplace(s) noise: 1 - exp(-c/s)(2 + c/s)/4."""
    c, s = 1.0, 1.0
    picks = noise.report_noisy_max(np.tile([c, 0.0], (40000, 1)), s, rng, axis=1, idealized=True)
    p0 = 1 - np.exp(-c / s) * (2 + c / s) / 4
    assert stats.binomtest(int(np.sum(picks == 0)), 40000, p0).pvalue > LEVEL


@pytest.mark.parametrize("bad", [0.0, -1.0, float("nan"), float("inf")])
def test_invalid_scales_raise(bad):
    with pytest.raises(ValueError):
        noise.laplace_vector(bad, 3, 0, idealized=True)
    with pytest.raises(ValueError):
        noise.gamma_norm_vector(bad, 3, random_state=0, idealized=True)


@pytest.mark.parametrize("call", [
    lambda: noise.laplace_vector(1.0, 3, 0),
    lambda: noise.gamma_norm_vector(1.0, 3, random_state=0),
    lambda: noise.gaussian_vector(1.0, 3, 0),
    lambda: noise.exponential_mechanism([0.0, 1.0], 1.0, 1.0, 0),
    lambda: noise.report_noisy_max([0.0, 1.0], 1.0, 0),
])
def test_float_samplers_warn_unless_idealized_is_asked_for(call):
    """Their laws hold in exact arithmetic only (a float Laplace sample betrays its centre, Mironov 2012): without the
    explicit opt-in ``idealized=True`` each warns and names its floating-point-safe counterpart in dpkernels.lattice
    (privacy audit F8: none warned before)."""
    with pytest.warns(UnsafeNoiseWarning, match="dpkernels.lattice"):
        call()


def test_global_rng_is_refused():
    with pytest.raises(ValueError, match="global RNG"):
        check_random_state(np.random.RandomState(0))


def test_same_seed_same_noise():
    first, again = (noise.laplace_vector(1.0, 5, 11, idealized=True) for _ in range(2))
    assert np.array_equal(first, again)


# ----------------------------------------------------------------------------------------------
# issue 26.5: the noise option, everywhere it is taken
# ----------------------------------------------------------------------------------------------
def _noise_entry_points():
    """Every exported function or method that takes a ``noise`` option, called with a given value."""
    from dpkernels.mechanisms.base import noise_release
    from dpkernels.mechanisms.baselines import OneVsAllSVM
    from dpkernels.mechanisms.chaudhuri import unit_gamma_noise
    from dpkernels.mechanisms.hall import gaussian_mechanism, sample_paths

    svm = OneVsAllSVM(np.zeros((2, 2)), np.zeros((2, 4)), np.array([0, 1]), 0.1, 10, 2, np.zeros(2))
    return {
        "noise_release": lambda v: noise_release(np.zeros(3), "laplace", 1.0, noise=v, random_state=0),
        "chaudhuri.unit_gamma_noise": lambda v: unit_gamma_noise(2, 3, v, np.random.default_rng(0)),
        "hall.sample_paths": lambda v: sample_paths(np.zeros(2), np.eye(2), 1.0, 3, v, np.random.default_rng(0)),
        "hall.gaussian_mechanism": lambda v: gaussian_mechanism([1.0, 2.0], epsilon=1.0, delta=1e-5, sensitivity=1.0,
                                                                noise=v),
        "OneVsAllSVM.weight": lambda v: svm.weight(np.zeros((2, 4)), 1.0, random_state=0, noise=v),
        "OneVsAllSVM.output": lambda v: svm.output(np.zeros((2, 4)), 1.0, random_state=0, noise=v),
    }


@pytest.mark.parametrize("name", sorted(_noise_entry_points()))
def test_every_exported_noise_helper_validates_its_option(name):
    """A typo never falls back to a float sampler: "Lattice" used to give unit_gamma_noise the float64 sampler, and
    sample_paths took "continuous" and anything but "continuous" as the lattice."""
    call = _noise_entry_points()[name]
    for typo in ("Lattice", "float", "exact", None):
        with pytest.raises(ValueError, match="noise must be one of"):
            call(typo)


def test_idealized_noise_is_an_explicit_opt_in_whose_guarantee_says_so():
    """noise="idealized" (former name "continuous", still accepted) warns, and the fit's guarantee says
    status="idealized" (not private in floating point), lists the idealized-numerics assumption, and its release()
    stays idealized; the Accountant refuses it (tests/test_accounting.py)."""
    from dpkernels import OutputPerturbation, UnsafeNoiseWarning
    from dpkernels.mechanisms.base import NUMERICAL_ASSUMPTIONS, check_noise

    with pytest.warns(UnsafeNoiseWarning, match="former name"):
        assert check_noise("continuous") == "continuous"
    X = np.random.default_rng(0).uniform(-0.5, 0.5, size=(50, 3))
    y = np.where(X[:, 0] > 0, 1, -1)
    for name in ("idealized", "continuous"):
        with pytest.warns(UnsafeNoiseWarning, match="status='idealized'"):
            m = OutputPerturbation(noise=name).fit(X, y)
        g = m.guarantee_
        assert g.status == "idealized" and not g.private and NUMERICAL_ASSUMPTIONS["idealized"] in g.assumptions
        assert NUMERICAL_ASSUMPTIONS["lattice"] not in g.assumptions and str(g).startswith("IDEALIZED NUMERICS")
        assert m.release().guarantee_.status == "idealized"
    with pytest.warns(UnsafeNoiseWarning):
        out = __import__("dpkernels").gaussian_mechanism([1.0], epsilon=1.0, delta=1e-5, sensitivity=1.0,
                                                         noise="idealized")
    assert out.guarantee.status == "idealized"


def test_guarantees_state_the_numerical_assumptions_of_their_proofs():
    """The random source (every fit), the lattice sampler's float accuracy (lattice noise) and numpy's exp accuracy
    (objective perturbation's certified argmin: dpkernels.solvers.certify.EXP_REL), as dpkernels.lattice and
    dpkernels.solvers.certify state them."""
    from dpkernels import ObjectivePerturbation, OutputPerturbation, PrivateTuning
    from dpkernels.lattice import _REL_TRANS
    from dpkernels.mechanisms.base import NUMERICAL_ASSUMPTIONS
    from dpkernels.solvers.certify import EXP_REL

    assert "2^-48" in NUMERICAL_ASSUMPTIONS["exp"] and EXP_REL == 2.0**-48
    assert "2^-44" in NUMERICAL_ASSUMPTIONS["lattice"] and _REL_TRANS == 2.0**-44
    X = np.random.default_rng(0).uniform(-0.5, 0.5, size=(80, 3))
    y = np.where(X[:, 0] > 0, 1, -1)
    obj = ObjectivePerturbation().fit(X, y).guarantee_.assumptions
    out = OutputPerturbation().fit(X, y).guarantee_.assumptions
    tuned = PrivateTuning(ObjectivePerturbation(), [0.1, 1.0]).fit(X, y).guarantee_.assumptions
    for key in ("random bits", "lattice", "exp"):
        assert NUMERICAL_ASSUMPTIONS[key] in obj and NUMERICAL_ASSUMPTIONS[key] in tuned, key
    assert NUMERICAL_ASSUMPTIONS["exp"] not in out and NUMERICAL_ASSUMPTIONS["lattice"] in out
