"""Kernels and random Fourier features: Bochner pairs, Monte-Carlo E[k-hat] = k, Eq. (6) norms."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import integrate

from dpkernels.kernels import CauchyKernel, LaplacianKernel, RBFKernel, make_kernel
from dpkernels.random_features import RandomFourierFeatures

KERNELS = [RBFKernel(0.7), LaplacianKernel(1.3), CauchyKernel(0.5), RBFKernel(2.0)]


@pytest.mark.parametrize("kernel", KERNELS, ids=lambda k: f"{k.name}-{k.sigma}")
def test_spectral_density_is_fourier_transform_of_g_1d(kernel):
    """g(t) = int p(w) cos(w t) dw, by quadrature, for the 1-d profile (a product kernel's factor)."""
    density = lambda w: float(kernel.spectral_density(np.array([w])))  # noqa: E731  (even in w)
    assert 2 * integrate.quad(density, 0, np.inf)[0] == pytest.approx(1.0, abs=1e-7)
    for t in (0.3, 1.1, 2.5):
        val = 2 * integrate.quad(density, 0, np.inf, weight="cos", wvar=t)[0]  # Fourier integral (QAWF)
        assert val == pytest.approx(float(kernel.g(np.array([t]))), abs=1e-6)


@pytest.mark.parametrize("kernel", KERNELS, ids=lambda k: f"{k.name}-{k.sigma}")
def test_monte_carlo_kernel_estimate_is_unbiased(kernel, rng):
    """E_w[cos <w, x - y>] = k(x, y): 200,000 frequencies, each estimate within 5 standard errors."""
    X = rng.normal(size=(6, 3)) * 0.6
    W = kernel.sample_frequencies(200_000, 3, rng)
    diffs = X[:, None, :] - X[None, :, :]
    cosines = np.cos(np.einsum("ijd,md->ijm", diffs, W))
    est = cosines.mean(axis=-1)
    se = cosines.std(axis=-1) / np.sqrt(W.shape[0]) + 1e-12
    assert np.all(np.abs(est - kernel(X)) <= 5 * se + 1e-9)


@pytest.mark.parametrize("name", ["rbf", "laplacian", "cauchy"])
def test_random_features_approximate_kernel(name, rng):
    X = rng.uniform(-1, 1, size=(30, 4))
    rff = RandomFourierFeatures(kernel=name, sigma=1.5, n_components=20000, random_state=rng).fit(X)
    err = np.abs(rff.approximate_kernel(X) - make_kernel(name, 1.5)(X)).max()
    assert err < 0.05


def test_paired_features_have_unit_norm(rng):
    """Rubinstein et al. Eq. (6): ||phi-hat(x)|| = 1 for every x, so k-hat(x, x) = 1."""
    X = rng.normal(size=(500, 7)) * 10
    Z = RandomFourierFeatures(n_components=37, random_state=1).fit_transform(X)
    assert Z.shape == (500, 74)
    assert np.allclose(np.linalg.norm(Z, axis=1), 1.0)


def test_paired_features_match_cos_and_sin(rng):
    """The half-angle evaluation of Eq. (6) equals cos/sin to round-off, over small and large angles and across
    the thread pool's row blocks (9,000 rows), with the unit norm kept to 1e-15."""
    X = rng.normal(size=(9000, 5)) * np.repeat([0.1, 3.0, 300.0], 3000)[:, None]
    rff = RandomFourierFeatures(n_components=64, sigma=0.8, random_state=2).fit(X)
    Z = rff.transform(X)
    theta = X @ rff.frequencies_.T
    assert np.abs(Z[:, 0::2] - np.cos(theta) / 8.0).max() < 1e-15
    assert np.abs(Z[:, 1::2] - np.sin(theta) / 8.0).max() < 1e-15
    assert np.abs(np.einsum("ij,ij->i", Z, Z) - 1.0).max() < 1e-15


def test_phase_features_norm_and_scaling(rng):
    """Chaudhuri et al. Algorithm 3: sqrt(2/D) cos(w x + psi) has norm up to sqrt(2); rescaled <= 1."""
    X = rng.normal(size=(2000, 3))
    raw = RandomFourierFeatures(n_components=2, variant="phase", random_state=3).fit_transform(X)
    assert np.linalg.norm(raw, axis=1).max() > 1.2
    unit = RandomFourierFeatures(n_components=2, variant="phase", scale_to_unit_ball=True, random_state=3).fit_transform(X)
    assert np.linalg.norm(unit, axis=1).max() <= 1 + 1e-12


def test_bandwidth_scaling(rng):
    """Frequencies of bandwidth sigma are those of bandwidth 1 divided by sigma."""
    a = RBFKernel(1.0).sample_frequencies(5, 3, np.random.default_rng(0))
    b = RBFKernel(4.0).sample_frequencies(5, 3, np.random.default_rng(0))
    assert np.allclose(a / 4.0, b)
    assert RBFKernel.from_gamma(0.5).sigma == pytest.approx(1.0)


def test_second_moments():
    assert RBFKernel(2.0).second_moment(3) == pytest.approx(3 / 4)
    assert CauchyKernel(1.0).second_moment(2) == pytest.approx(4.0)
    assert LaplacianKernel(1.0).second_moment(2) == np.inf


def test_frequencies_do_not_depend_on_data():
    X1, X2 = np.zeros((5, 3)), np.ones((9, 3))
    a = RandomFourierFeatures(n_components=10, random_state=4).fit(X1).frequencies_
    b = RandomFourierFeatures(n_components=10, random_state=4).fit(X2).frequencies_
    assert np.array_equal(a, b)


def test_invalid_kernel_parameters():
    with pytest.raises(ValueError):
        RBFKernel(0.0)
    with pytest.raises(ValueError, match="unknown kernel"):
        make_kernel("polynomial")
    with pytest.raises(ValueError, match="n_components"):
        RandomFourierFeatures(n_components=0).fit(np.zeros((2, 2)))
