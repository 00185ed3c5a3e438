"""Translation-invariant kernels k(x, y) = g(x - y) and their spectral (Fourier) samplers.

By Bochner's theorem a continuous, positive-definite, translation-invariant g with g(0) = 1 is the
characteristic function of a probability measure p (the kernel's normalised Fourier transform,
p(w) = (2 pi)^{-d} int exp(-j <w, D>) g(D) dD), so that g(D) = E_{w ~ p}[cos <w, D>].  Random
Fourier features (Rahimi and Recht 2008; Rubinstein et al. 2012, Eq. 6) sample w from p.

Every kernel here is normalised so that k(x, x) = g(0) = 1 and carries a bandwidth ``sigma``:

====================  ==========================================  ========================================
kernel                g(D)                                        p(w) (the spectral sampler)
====================  ==========================================  ========================================
RBF (Gaussian)        exp(-||D||_2^2 / (2 sigma^2))               N(0, sigma^-2 I_d)
Laplacian             exp(-||D||_1 / sigma)                       prod_i Cauchy(0, 1/sigma)
Cauchy                prod_i 1 / (1 + D_i^2 / sigma^2)            prod_i Laplace(0, scale 1/sigma)
====================  ==========================================  ========================================

Rubinstein et al.'s Tables 1-2 give sigma = 1 for Laplacian and Cauchy and write the Cauchy row
without normalisation; see ``ERRATA.md`` and :mod:`dpkernels.bounds.rubinstein`.
"""

from __future__ import annotations

import math
from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import ClassVar

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy.spatial.distance import cdist

from dpkernels._validation import check_positive, check_random_state

__all__ = [
    "TranslationInvariantKernel",
    "RBFKernel",
    "LaplacianKernel",
    "CauchyKernel",
    "make_kernel",
    "KERNELS",
]


@dataclass(frozen=True)
class TranslationInvariantKernel(ABC):
    """A kernel k(x, y) = g(x - y) with g(0) = 1, its spectral density and sampler."""

    sigma: float = 1.0

    def __post_init__(self) -> None:
        check_positive(self.sigma, "sigma (kernel bandwidth)")

    name: ClassVar[str] = "abstract"

    @abstractmethod
    def g(self, delta: ArrayLike) -> NDArray[np.float64]:
        """The kernel profile g evaluated at differences ``delta`` (shape (..., d))."""

    @abstractmethod
    def spectral_density(self, omega: ArrayLike) -> NDArray[np.float64]:
        """The normalised Fourier transform p(w) of g (a probability density on R^d)."""

    @abstractmethod
    def sample_frequencies(self, n: int, d: int, random_state: object = None) -> NDArray[np.float64]:
        """Draw ``n`` i.i.d. frequency vectors in R^d from p (shape (n, d))."""

    @abstractmethod
    def second_moment(self, d: int) -> float:
        """sigma_p^2 = E_{w ~ p} ||w||_2^2 (Lemma 18's sigma_p squared); ``inf`` if it does not exist."""

    def __call__(self, X: ArrayLike, Y: ArrayLike | None = None) -> NDArray[np.float64]:
        """Gram matrix K[i, j] = g(X[i] - Y[j])."""
        X = np.atleast_2d(np.asarray(X, dtype=np.float64))
        Y = X if Y is None else np.atleast_2d(np.asarray(Y, dtype=np.float64))
        return self._gram(X, Y)

    def _gram(self, X: NDArray[np.float64], Y: NDArray[np.float64]) -> NDArray[np.float64]:
        return self.g(X[:, None, :] - Y[None, :, :])


@dataclass(frozen=True)
class RBFKernel(TranslationInvariantKernel):
    """Gaussian kernel exp(-||x - y||^2 / (2 sigma^2)); spectral law N(0, sigma^-2 I)."""

    name: ClassVar[str] = "rbf"

    @classmethod
    def from_gamma(cls, gamma: float) -> "RBFKernel":
        """The kernel exp(-gamma ||x - y||^2) (scikit-learn's and Park's parametrisation)."""
        gamma = check_positive(gamma, "gamma")
        return cls(sigma=math.sqrt(1.0 / (2.0 * gamma)))

    @property
    def gamma(self) -> float:
        return 1.0 / (2.0 * self.sigma**2)

    def g(self, delta: ArrayLike) -> NDArray[np.float64]:
        delta = np.asarray(delta, dtype=np.float64)
        return np.exp(-np.sum(delta**2, axis=-1) / (2.0 * self.sigma**2))

    def _gram(self, X: NDArray[np.float64], Y: NDArray[np.float64]) -> NDArray[np.float64]:
        return np.exp(-cdist(X, Y, "sqeuclidean") / (2.0 * self.sigma**2))

    def spectral_density(self, omega: ArrayLike) -> NDArray[np.float64]:
        omega = np.asarray(omega, dtype=np.float64)
        d = omega.shape[-1]
        s2 = self.sigma**2
        return (s2 / (2 * math.pi)) ** (d / 2) * np.exp(-s2 * np.sum(omega**2, axis=-1) / 2)

    def sample_frequencies(self, n: int, d: int, random_state: object = None) -> NDArray[np.float64]:
        rng = check_random_state(random_state)
        return rng.standard_normal((n, d)) / self.sigma

    def second_moment(self, d: int) -> float:
        return d / self.sigma**2


@dataclass(frozen=True)
class LaplacianKernel(TranslationInvariantKernel):
    """Laplacian kernel exp(-||x - y||_1 / sigma); spectral law: i.i.d. Cauchy(0, 1/sigma) coordinates.

    The Cauchy law has no second moment, so sigma_p = inf and the uniform-approximation bound of
    Lemma 18 (hence Theorem 13) gives no finite d-hat for this kernel.
    """

    name: ClassVar[str] = "laplacian"

    def g(self, delta: ArrayLike) -> NDArray[np.float64]:
        delta = np.asarray(delta, dtype=np.float64)
        return np.exp(-np.sum(np.abs(delta), axis=-1) / self.sigma)

    def _gram(self, X: NDArray[np.float64], Y: NDArray[np.float64]) -> NDArray[np.float64]:
        return np.exp(-cdist(X, Y, "cityblock") / self.sigma)

    def spectral_density(self, omega: ArrayLike) -> NDArray[np.float64]:
        omega = np.asarray(omega, dtype=np.float64)
        s = self.sigma
        return np.prod(s / (math.pi * (1.0 + (s * omega) ** 2)), axis=-1)

    def sample_frequencies(self, n: int, d: int, random_state: object = None) -> NDArray[np.float64]:
        rng = check_random_state(random_state)
        return rng.standard_cauchy((n, d)) / self.sigma

    def second_moment(self, d: int) -> float:
        return math.inf


@dataclass(frozen=True)
class CauchyKernel(TranslationInvariantKernel):
    """Cauchy kernel prod_i 1 / (1 + (x_i - y_i)^2 / sigma^2); spectral law: i.i.d. Laplace(0, 1/sigma)."""

    name: ClassVar[str] = "cauchy"

    def g(self, delta: ArrayLike) -> NDArray[np.float64]:
        delta = np.asarray(delta, dtype=np.float64)
        return np.prod(1.0 / (1.0 + (delta / self.sigma) ** 2), axis=-1)

    def _gram(self, X: NDArray[np.float64], Y: NDArray[np.float64]) -> NDArray[np.float64]:
        out = np.ones((X.shape[0], Y.shape[0]))
        for j in range(X.shape[1]):  # one coordinate at a time keeps memory at O(n m)
            out /= 1.0 + ((X[:, j, None] - Y[None, :, j]) / self.sigma) ** 2
        return out

    def spectral_density(self, omega: ArrayLike) -> NDArray[np.float64]:
        omega = np.asarray(omega, dtype=np.float64)
        s = self.sigma
        return np.prod(0.5 * s * np.exp(-s * np.abs(omega)), axis=-1)

    def sample_frequencies(self, n: int, d: int, random_state: object = None) -> NDArray[np.float64]:
        rng = check_random_state(random_state)
        return rng.laplace(0.0, 1.0 / self.sigma, size=(n, d))

    def second_moment(self, d: int) -> float:
        return 2.0 * d / self.sigma**2


KERNELS: dict[str, type[TranslationInvariantKernel]] = {
    "rbf": RBFKernel,
    "laplacian": LaplacianKernel,
    "cauchy": CauchyKernel,
}


def make_kernel(kernel: str | TranslationInvariantKernel, sigma: float = 1.0) -> TranslationInvariantKernel:
    """Return a kernel object from a name (``rbf``, ``laplacian``, ``cauchy``) and bandwidth."""
    if isinstance(kernel, TranslationInvariantKernel):
        return kernel
    try:
        cls = KERNELS[str(kernel).lower()]
    except KeyError:
        raise ValueError(f"unknown kernel {kernel!r}; choose one of {sorted(KERNELS)}") from None
    return cls(sigma=sigma)
