"""One-against-all private SVM baselines of Park (2022), Section 6.3, built on one non-private fit.

For each class k a hinge-loss SVM without bias, (1/2)||w||^2 + (C/n) sum hinge, is trained one-against-all
on the paired random Fourier features of exp(-gamma ||x - y||^2) (d-hat frequencies, ||phi|| = 1), with
C/n the dual box of Table 7.1.  From these K non-private solutions:

* **SVM WEIGHT** (Rubinstein et al. 2012, PrivateSVM): w_k + Laplace(lambda), lambda = 2^{2.5} (C/n) sqrt(d-hat)/eps
  (Corollary 12); eps per class, so K eps in total (every class uses every row).
* **SVM OUTPUT** (Jain and Thakurta 2013, interactive): each answer f_k(z) + Laplace(4 (C/n) / eps) (Lemma 9:
  ``|f_D(z) - f_D'(z)| <= ||w_D - w_D'|| ||phi(z)|| <= 4 C/n``); eps per answer, so m K eps for m test points.
* **SVM SEMI** (Jain and Thakurta 2013, semi-interactive): the publisher receives the unlabelled test set Z and
  releases the predictions f_k(Z) plus Gaussian noise (L2 sensitivity ||Phi_Z||_2 4 C/n, the thesis's delta = 1/n),
  then the weights w-hat_k = Phi_Z^+ (f_k(Z) + mu), the least-squares fit to the noisy predictions (Park's
  Section 6.3): (eps, delta) per class.  sigma is the exact (analytic) calibration of the Gaussian mechanism
  (:func:`dpkernels.accounting.gaussian_sigma`, Balle and Wang 2018); the thesis's classical
  sigma = Delta sqrt(2 ln(1.25/delta)) / eps holds for eps < 1 only and is kept as ``calibration="classical"``
  to reproduce its numbers.  The thesis's minimiser w* + Phi_Z^+ mu (the minimum-norm change of w*) equals ours on
  Z but keeps the component of w* outside the row space of Phi_Z un-noised, so it is not post-processing of the
  noisy predictions when Phi_Z is rank-deficient; ours is.

Every noisy value goes through :func:`~dpkernels.mechanisms.base.noise_release` (exactly rounded to a grid by
default; ``noise="continuous"`` is the float64 sampler and warns).  Every function returns class scores; the
caller takes the argmax.  The guarantees are stated by :func:`guarantees`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from dpkernels._validation import check_delta_far_below_inverse_n, check_epsilon, check_probability, check_random_state
from dpkernels.accounting import gaussian_sigma
from dpkernels.bounds.rubinstein import corollary_12_noise_scale, lemma_9_sensitivity
from dpkernels.losses import Hinge
from dpkernels.mechanisms.base import check_noise, noise_release, require_certified
from dpkernels.random_features import RandomFourierFeatures, rff_paired
from dpkernels.solvers import solve_erm

__all__ = ["OneVsAllSVM", "fit_one_vs_all", "semi_operator", "semi_sigma", "guarantees"]

Array = NDArray[np.float64]


def semi_sigma(epsilon: float, delta: float, box: float, spectral_norm: float, calibration: str = "analytic") -> float:
    """SVM SEMI's Gaussian noise: the L2 sensitivity of the test predictions is ||Phi_Z||_2 x Lemma 9's 4 C/n."""
    return gaussian_sigma(epsilon, delta, spectral_norm * lemma_9_sensitivity(1.0, box, 1.0, 1)[0], calibration=calibration)


@dataclass
class OneVsAllSVM:
    """K certified non-private one-against-all SVMs in a random Fourier feature space (evaluation object: the
    weights ``W`` are NOT private; the methods below release noisy versions)."""

    frequencies: Array
    W: Array  #: (K, F) weights
    classes: NDArray
    box: float
    n: int
    d_hat: int
    distance_bounds: Array

    def features(self, X: Array) -> Array:
        return rff_paired(X, self.frequencies)

    def scores(self, Phi: Array) -> Array:
        return Phi @ self.W.T

    def weight(self, Phi: Array, epsilon: float, random_state: object = None, noise: str = "lattice") -> Array:
        """SVM WEIGHT scores with Corollary 12's noise at ``epsilon`` per class."""
        lam = corollary_12_noise_scale(check_epsilon(epsilon), 1.0, self.box * self.n, self.d_hat, self.n)
        W_hat = noise_release(self.W, "laplace", lam, noise=check_noise(noise), random_state=random_state)
        return Phi @ W_hat.T

    def output(self, Phi: Array, epsilon: float, random_state: object = None, noise: str = "lattice") -> Array:
        """SVM OUTPUT scores: Laplace(4 box / eps) on every (test point, class) answer."""
        scale = lemma_9_sensitivity(1.0, self.box, 1.0, 1)[0] / check_epsilon(epsilon)
        return noise_release(self.scores(Phi), "laplace", scale, noise=check_noise(noise), random_state=random_state)

    def semi(self, Phi: Array, epsilon: float, delta: float, random_state: object = None,
             operator: tuple[Array, float] | None = None, noise: str = "lattice", calibration: str = "analytic", *,
             reproduce_thesis: bool = False) -> Array:
        """SVM SEMI scores: noisy test predictions (Gaussian), refitted weights Phi^+ (f(Z) + mu).

        ``operator`` = :func:`semi_operator` (Phi) caches the pseudo-inverse and spectral norm across calls.  A
        ``delta`` above 1/(10 n) (n training rows) is refused (``ValueError``: a delta near 1/n allows releasing a row)
        unless ``reproduce_thesis=True``: the thesis runs SVM SEMI at delta = 1/n per class (ERRATA P10), and only the
        reproduction of its tables may.
        """
        check_epsilon(epsilon)
        check_probability(delta, "delta")
        if not reproduce_thesis:
            check_delta_far_below_inverse_n(delta, self.n)
        rng = check_random_state(random_state)
        pinv, norm2 = semi_operator(Phi) if operator is None else operator
        sigma = semi_sigma(epsilon, delta, self.box, norm2, calibration)
        noisy = noise_release(self.scores(Phi), "gaussian", sigma, noise=check_noise(noise), random_state=rng)
        return Phi @ (pinv @ noisy)  # (F x K) least-squares weights, post-processing of the noisy predictions


def semi_operator(Phi: Array) -> tuple[Array, float]:
    """The (F x m) pseudo-inverse of the test features and their spectral norm (the L2 sensitivity factor), from
    the eigendecomposition of the F x F Gram matrix Phi'Phi (m >> F)."""
    vals, vecs = np.linalg.eigh(Phi.T @ Phi)
    keep = vals > vals[-1] * 1e-12
    V = vecs[:, keep]
    return (V / vals[keep]) @ (V.T @ Phi.T), math.sqrt(max(float(vals[-1]), 0.0))


def fit_one_vs_all(X: Array, y: NDArray, box: float, gamma: float, d_hat: int = 200, random_state: object = None,
                   solver_tol: float = 1e-3, *, classes: NDArray) -> OneVsAllSVM:
    """Train the K non-private one-against-all hinge SVMs once; the noise is added later.

    Each solve is certified to within ``solver_tol`` x Lemma 9's L2 sensitivity (the noise of SVM WEIGHT assumes the
    exact minimiser, as in :class:`~dpkernels.mechanisms.PrivateSVM`); a solve that cannot be certified is refused.
    ``classes``: the public label set (required: the labels present in ``y`` are a fact about the private data, and a
    neighbour with a new label would add a class).
    """
    rng = check_random_state(random_state)
    freqs = RandomFourierFeatures("rbf", math.sqrt(1.0 / (2.0 * gamma)), d_hat, random_state=rng).fit(X).frequencies_
    Phi = rff_paired(X, freqs)
    classes = np.asarray(classes)
    n = X.shape[0]
    tol = solver_tol * lemma_9_sensitivity(1.0, box * n, 1.0, n, Phi.shape[1])[0]
    W, bounds = [], []
    for k in classes:
        sol = solve_erm(Phi, np.where(y == k, 1.0, -1.0), Hinge(), box * n, distance_tol=tol)
        require_certified(sol.distance_bound, tol, f"||w - w*|| (class {k!r})")
        W.append(sol.coef)
        bounds.append(sol.distance_bound)
    return OneVsAllSVM(freqs, np.array(W), classes, box, n, d_hat, np.array(bounds))


def guarantees(K: int, m_test: int, epsilon: float, delta: float) -> dict[str, dict[str, float]]:
    """Per-component and end-to-end privacy of each baseline (replace-one neighbours, basic composition)."""
    return {
        "SVM WEIGHT": {"per_component_epsilon": epsilon, "total_epsilon": K * epsilon, "total_delta": 0.0},
        "SVM SEMI": {"per_component_epsilon": epsilon, "total_epsilon": K * epsilon, "total_delta": K * delta},
        "SVM OUTPUT": {"per_component_epsilon": epsilon, "total_epsilon": m_test * K * epsilon, "total_delta": 0.0},
    }
