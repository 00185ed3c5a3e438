"""Chaudhuri, Monteleoni and Sarwate (2011): output and objective perturbation for regularised ERM.

* :class:`OutputPerturbation` (Algorithm 1): f_priv = argmin J(f, D) + b, density of b ~ exp(-beta ||b||),
  beta = n Lambda eps_p / (2R) (Theorem 6, Corollary 8).
* :class:`ObjectivePerturbation` (Algorithm 2): f_priv = argmin J(f, D) + (1/n) b'f + (Delta/2)||f||^2 with
  eps', Delta and beta = eps'/(2R) from Theorem 9 (both branches).
* :class:`PrivateKernelERM` (Algorithm 3): either algorithm on random features of the Gaussian kernel; the
  released model is f_priv and the frequencies (the "pre-filter").
* :class:`PrivateTuning` (Algorithm 4): the exponential mechanism picks among m private learners trained on
  disjoint parts, scored on a held-out part.

J(f, D) = (1/n) sum_i l(y_i f'x_i) + (Lambda/2) ||f||^2.  ``Lambda`` is the paper's regulariser; the
scikit-learn / diffprivlib parameter is C = 1 / (n Lambda).

Guarantee: eps_p-differential privacy under the replace-one relation (Definition 2; Definition 3 for the
Huber loss in Algorithm 2, Corollary 13), assuming labels in {-1, +1}, ||x_i|| <= R for every possible
input (R = ``data_norm``; the paper has R = 1), a convex loss with |l'| <= 1 (and |l''| <= c for Algorithm 2)
and the exact minimiser (solved by Newton to ||grad|| <= ``tol``, certified distance tol / (Lambda + Delta)).
For R != 1 the calibration is our generalisation (see :func:`dpkernels.bounds.chaudhuri.theorem_9_parameters`).
Intercept: ``fit_intercept`` appends a constant feature s (penalised like f), so R becomes sqrt(R^2 + s^2);
an unpenalised intercept is not offered because the proofs need strong convexity in every direction.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
from numpy.typing import ArrayLike, NDArray
from sklearn.base import BaseEstimator, ClassifierMixin, clone
from sklearn.utils.validation import check_is_fitted

from dpkernels._validation import (
    check_binary_labels,
    check_epsilon,
    check_finite_array,
    check_positive,
    check_random_state,
    check_row_norms,
)
from dpkernels.bounds.chaudhuri import ObjectivePerturbationParameters, theorem_6_beta, theorem_9_parameters
from dpkernels.losses import MarginLoss, make_loss
from dpkernels.mechanisms.base import REPLACE_ONE, Guarantee, require_certified, split_intercept
from dpkernels.noise import exponential_mechanism, gamma_norm_vector
from dpkernels.random_features import RandomFourierFeatures
from dpkernels.solvers import ERMSolution, solve_smooth_erm

__all__ = ["OutputPerturbation", "ObjectivePerturbation", "PrivateKernelERM", "PrivateTuning"]

Array = NDArray[np.float64]
#: Gradient-norm tolerance of the Newton solves (certified distance tol / (Lambda + Delta)).
DEFAULT_TOL = 1e-10


def _check_certificate(distance_bound: float, solver_tol: float, scale: float) -> None:
    """Refuse to release when the solver cannot certify ||f - f_exact|| <= solver_tol * 2R/(n (Lambda + Delta))."""
    require_certified(distance_bound, check_positive(solver_tol, "solver_tol") * scale, "||f - f_exact||")


class _ChaudhuriERM(ClassifierMixin, BaseEstimator):
    """Shared parameters (Algorithms 1 and 2), validation and prediction."""

    _smooth_losses = ("logistic", "huber", "smoothed_hinge")

    def __init__(self, *, epsilon: float = 1.0, Lambda: float = 1e-3, loss: str = "logistic", h: float = 0.5,
                 data_norm: float = 1.0, clip: bool = False, fit_intercept: bool = False, intercept_scaling: float = 1.0,
                 tol: float = DEFAULT_TOL, solver_tol: float = 1e-3, init: ArrayLike | None = None,
                 random_state: object = None) -> None:
        self.epsilon = epsilon
        self.Lambda = Lambda
        self.loss = loss
        self.h = h
        self.data_norm = data_norm
        self.clip = clip
        self.fit_intercept = fit_intercept
        self.intercept_scaling = intercept_scaling
        self.tol = tol
        self.solver_tol = solver_tol
        self.init = init
        self.random_state = random_state

    def _prepare(self, X: ArrayLike, y: ArrayLike) -> tuple[Array, Array, MarginLoss, float, float, float, np.random.Generator]:
        X = check_finite_array(X)
        y = check_binary_labels(y, X.shape[0])
        epsilon = check_epsilon(self.epsilon)
        Lambda = check_positive(self.Lambda, "Lambda")
        R = check_positive(self.data_norm, "data_norm")
        if str(self.loss) not in self._smooth_losses:
            raise ValueError(f"loss must be one of {self._smooth_losses} (differentiable, |l'| <= 1); got {self.loss!r}")
        loss = make_loss(self.loss, self.h)
        rng = check_random_state(self.random_state)
        X = check_row_norms(X, R, clip=self.clip, what="row L2 norms ||x||")
        if self.fit_intercept:
            s = check_positive(self.intercept_scaling, "intercept_scaling")
            X = np.hstack([X, np.full((X.shape[0], 1), s)])
            R = math.sqrt(R * R + s * s)
        self.n_features_in_ = X.shape[1] - int(bool(self.fit_intercept))
        self.classes_ = np.array([-1, 1])
        self.data_norm_ = R
        return X, y, loss, epsilon, Lambda, R, rng

    def _augment(self, X: Array) -> Array:
        X = check_finite_array(X)
        if self.clip:
            nrm = np.linalg.norm(X, axis=1)
            X = X / np.maximum(nrm / self.data_norm, 1.0)[:, None]
        if self.fit_intercept:
            X = np.hstack([X, np.full((X.shape[0], 1), self.intercept_scaling)])
        return X

    def _set_release(self, f: Array) -> None:
        self.release_ = f
        self.coef_, self.intercept_ = split_intercept(f, self.fit_intercept, self.intercept_scaling)

    def decision_function(self, X: ArrayLike) -> Array:
        check_is_fitted(self, "coef_")
        return self._augment(np.asarray(X, dtype=np.float64)) @ self.release_

    def predict(self, X: ArrayLike) -> Array:
        return np.where(self.decision_function(X) >= 0, 1, -1)


class OutputPerturbation(_ChaudhuriERM):
    """Algorithm 1 (sensitivity method): f_priv = argmin_f J(f, D) + b, ||b|| ~ Gamma(d, 2R / (n Lambda eps_p)).

    Parameters
    ----------
    epsilon : float, keyword-only
        eps_p.
    Lambda : float
        Regulariser of J (scikit-learn's C = 1 / (n Lambda)).
    loss : {"logistic", "huber", "smoothed_hinge"}
    h : float
        Smoothing width of huber / smoothed_hinge (the paper's experiments: h = 0.5).
    data_norm : float
        R, a bound on ||x|| over all possible inputs (the paper: 1).
    clip : bool
        Rows with ||x|| > R raise ``ValueError`` (False) or are clipped with a ``ClippingWarning`` (True).
    fit_intercept, intercept_scaling : bool, float
        A penalised constant feature; R becomes sqrt(R^2 + s^2).
    tol : float
        Newton's gradient-norm tolerance.
    solver_tol : float
        The release is refused unless the solver certifies ||f - f_exact|| <= solver_tol x 2R/(n Lambda).
    init : array or None
        The solver's starting point (changes the speed, not the release).
    random_state : numpy.random.Generator, int or None

    Attributes
    ----------
    coef_, intercept_, release_ (the released vector), beta_, sensitivity_, guarantee_.
    """

    def fit(self, X: ArrayLike, y: ArrayLike) -> "OutputPerturbation":
        X, y, loss, epsilon, Lambda, R, rng = self._prepare(X, y)
        n, d = X.shape
        w0 = None if self.init is None else np.asarray(self.init, dtype=np.float64)
        sol = solve_smooth_erm(X, y, loss, Lambda, gtol=self.tol, w0=w0)
        self._nonprivate = sol
        self.sensitivity_ = 2.0 * R / (n * Lambda)
        _check_certificate(sol.distance_bound, self.solver_tol, self.sensitivity_)
        self.solver_distance_bound_ = sol.distance_bound
        self.beta_ = theorem_6_beta(epsilon, n, Lambda, R)
        self._set_release(sol.coef + gamma_norm_vector(self.beta_, d, random_state=rng))
        self.guarantee_ = Guarantee(
            epsilon=epsilon, delta=0.0, neighbouring=REPLACE_ONE, statement="Chaudhuri et al. (2011) Theorem 6 / Corollary 8",
            released="f_priv = f* + b, density of b ~ exp(-beta ||b||)",
            assumptions=("labels in {-1, +1}", f"||x|| <= R = {R:.6g} for every possible input",
                         f"loss {loss.name}: convex, differentiable, |l'| <= 1", "N(f) = ||f||^2 / 2 (1-strongly convex)",
                         "f* is the exact minimiser (certified to within the solver tolerance)"),
            epsilon_solver=epsilon * (1.0 + 2.0 * sol.distance_bound / self.sensitivity_),
        )
        return self

    @property
    def nonprivate_solution(self) -> ERMSolution:
        """f* and its certificate (evaluation only: not private)."""
        check_is_fitted(self, "coef_")
        return self._nonprivate

    def sample_releases(self, n_draws: int, random_state: object = None, epsilon: float | None = None) -> Array:
        """Further releases f* + b from the cached minimiser (optionally recalibrated to another epsilon)."""
        check_is_fitted(self, "coef_")
        f = self._nonprivate.coef
        beta = self.beta_ if epsilon is None else check_epsilon(epsilon) / self.sensitivity_
        return f + gamma_norm_vector(beta, f.shape[0], n=int(n_draws), random_state=random_state)


class ObjectivePerturbation(_ChaudhuriERM):
    """Algorithm 2 (objective perturbation): f_priv = argmin_f J(f, D) + (1/n) b'f + (Delta/2)||f||^2.

    Parameters as :class:`OutputPerturbation`; the loss's curvature bound c (logistic 1/4, Huber 1/(2h),
    smoothed hinge 3/(4h)) enters eps' and Delta (Theorem 9 and Corollaries 11-13).  ``init`` is the
    solver's starting point (e.g. the non-private minimiser); it changes the speed, not the release.

    Attributes
    ----------
    coef_, intercept_, release_, params_ (eps', Delta, beta, branch), guarantee_.
    """

    def fit(self, X: ArrayLike, y: ArrayLike) -> "ObjectivePerturbation":
        X, y, loss, epsilon, Lambda, R, rng = self._prepare(X, y)
        n, d = X.shape
        params = theorem_9_parameters(epsilon, n, Lambda, loss.curvature, R)
        b = gamma_norm_vector(params.beta, d, random_state=rng)
        w0 = None if self.init is None else np.asarray(self.init, dtype=np.float64)
        sol = solve_smooth_erm(X, y, loss, Lambda + params.Delta, b=b, gtol=self.tol, w0=w0)
        _check_certificate(sol.distance_bound, self.solver_tol, 2.0 * R / (n * (Lambda + params.Delta)))
        self.params_ = params
        self._X, self._y, self._loss = X, y, loss
        self._set_release(sol.coef)
        self.solver_distance_bound_ = sol.distance_bound
        statement = "Chaudhuri et al. (2011) Theorem 9" if loss.twice_differentiable else "Chaudhuri et al. (2011) Corollary 13 (Definition 3)"
        self.guarantee_ = Guarantee(
            epsilon=epsilon, delta=0.0, neighbouring=REPLACE_ONE, statement=statement,
            released="f_priv = argmin J(f, D) + b'f / n + Delta ||f||^2 / 2",
            assumptions=("labels in {-1, +1}", f"||x|| <= R = {R:.6g} for every possible input",
                         f"loss {loss.name}: convex, |l'| <= 1, |l''| <= c = {loss.curvature:.6g}",
                         "N(f) = ||f||^2 / 2", "f_priv is the exact minimiser (solved to ||grad|| <= tol)",
                         f"branch {params.branch}: eps' = {params.epsilon_prime:.6g}, Delta = {params.Delta:.6g}"),
        )
        return self

    def sample_releases(self, n_draws: int, random_state: object = None, w0: Array | None = None) -> Array:
        """Further releases, each a fresh noise vector and a fresh solve (warm-started at ``w0``).

        The draws consume ``random_state`` exactly as :meth:`fit` does (one Gamma norm, one direction), so a
        common seed gives common random numbers across Lambda or epsilon.
        """
        check_is_fitted(self, "coef_")
        rng = check_random_state(random_state)
        d = self._X.shape[1]
        p: ObjectivePerturbationParameters = self.params_
        out = np.empty((int(n_draws), d))
        for k in range(int(n_draws)):
            b = gamma_norm_vector(p.beta, d, random_state=rng)
            sol = solve_smooth_erm(self._X, self._y, self._loss, self.Lambda + p.Delta, b=b, gtol=self.tol,
                                   w0=self.release_ if w0 is None else w0)
            _check_certificate(sol.distance_bound, self.solver_tol, 2.0 * self.data_norm_ / (self._X.shape[0] * (self.Lambda + p.Delta)))
            out[k] = sol.coef
        return out


class PrivateKernelERM(_ChaudhuriERM):
    """Algorithm 3: Algorithm 1 or 2 on random features of the Gaussian kernel exp(-gamma ||x - x'||^2).

    The features are sqrt(2/D) cos(w'x + psi) with w ~ N(0, 2 gamma I), psi ~ U[-pi, pi].  Their norm can
    reach sqrt(2) > 1 (ERRATA E10), which the privacy proofs do not allow; ``feature_scale="unit"`` (default)
    divides them by sqrt(2) so that ||v(x)|| <= 1 always holds; ``feature_scale="paper"`` keeps the
    paper's map and calibrates with R = sqrt(2) instead.  Released: f_priv and the frequencies/phases.
    """

    def __init__(self, *, epsilon: float = 1.0, Lambda: float = 1e-3, algorithm: str = "objective", loss: str = "logistic",
                 h: float = 0.5, gamma: float = 1.0, n_components: int = 100, feature_scale: str = "unit",
                 data_norm: float = 1.0, clip: bool = False, tol: float = DEFAULT_TOL, random_state: object = None) -> None:
        self.epsilon = epsilon
        self.Lambda = Lambda
        self.algorithm = algorithm
        self.loss = loss
        self.h = h
        self.gamma = gamma
        self.n_components = n_components
        self.feature_scale = feature_scale
        self.data_norm = data_norm
        self.clip = clip
        self.tol = tol
        self.random_state = random_state

    def fit(self, X: ArrayLike, y: ArrayLike) -> "PrivateKernelERM":
        X = check_finite_array(X)
        if self.algorithm not in ("objective", "output"):
            raise ValueError(f"algorithm must be 'objective' or 'output', got {self.algorithm!r}")
        if self.feature_scale not in ("unit", "paper"):
            raise ValueError(f"feature_scale must be 'unit' or 'paper', got {self.feature_scale!r}")
        rng = check_random_state(self.random_state)
        sigma = math.sqrt(1.0 / (2.0 * check_positive(self.gamma, "gamma")))
        self.rff_ = RandomFourierFeatures("rbf", sigma, self.n_components, variant="phase",
                                          scale_to_unit_ball=self.feature_scale == "unit", random_state=rng).fit(X)
        R = self.rff_.max_feature_norm
        cls = ObjectivePerturbation if self.algorithm == "objective" else OutputPerturbation
        self.model_ = cls(epsilon=self.epsilon, Lambda=self.Lambda, loss=self.loss, h=self.h, data_norm=R,
                          tol=self.tol, random_state=rng).fit(self.rff_.transform(X), y)
        self.n_features_in_ = X.shape[1]
        self.classes_ = np.array([-1, 1])
        self.coef_ = self.model_.coef_
        self.frequencies_, self.phases_ = self.rff_.frequencies_, self.rff_.phases_
        self.guarantee_ = self.model_.guarantee_
        return self

    def decision_function(self, X: ArrayLike) -> Array:
        check_is_fitted(self, "coef_")
        return self.rff_.transform(check_finite_array(X)) @ self.coef_


class PrivateTuning(ClassifierMixin, BaseEstimator):
    """Algorithm 4: private choice of Lambda by the exponential mechanism over disjoint parts.

    D is split into m + 1 equal disjoint parts (``part_sizes`` may fix them, e.g. the paper's Figures 4-5 use
    m training parts plus a 25,000-row validation part); learner i is ``estimator`` with Lambda_i, trained on
    part i with the same epsilon; z_i = mistakes on the last part; i is released with probability
    proportional to exp(-eps_p z_i / 2).  Theorem 26: eps_p-DP (parallel composition + exponential mechanism).
    """

    def __init__(self, estimator: BaseEstimator, Lambdas: Sequence[float], *, epsilon: float = 1.0,
                 validation_size: int | None = None, random_state: object = None) -> None:
        self.estimator = estimator
        self.Lambdas = Lambdas
        self.epsilon = epsilon
        self.validation_size = validation_size
        self.random_state = random_state

    def fit(self, X: ArrayLike, y: ArrayLike) -> "PrivateTuning":
        X = check_finite_array(X)
        y = check_binary_labels(y, X.shape[0])
        epsilon = check_epsilon(self.epsilon)
        rng = check_random_state(self.random_state)
        m = len(self.Lambdas)
        if m < 1:
            raise ValueError("Lambdas must not be empty")
        n = X.shape[0]
        order = rng.permutation(n)
        n_val = n // (m + 1) if self.validation_size is None else int(self.validation_size)
        n_part = (n - n_val) // m
        if n_part < 1 or n_val < 1:
            raise ValueError(f"not enough rows ({n}) for {m} parts and a validation part")
        val = order[m * n_part:m * n_part + n_val]
        self.models_, self.mistakes_ = [], []
        for i, lam in enumerate(self.Lambdas):
            part = order[i * n_part:(i + 1) * n_part]
            est = clone(self.estimator).set_params(epsilon=epsilon, Lambda=lam, random_state=rng)
            est.fit(X[part], y[part])
            self.models_.append(est)
            self.mistakes_.append(int(np.sum(est.predict(X[val]) != y[val])))
        self.selected_ = exponential_mechanism(-np.asarray(self.mistakes_, float), epsilon, 1.0, rng)
        best = self.models_[self.selected_]
        self.best_estimator_ = best
        self.coef_ = best.coef_
        self.classes_ = np.array([-1, 1])
        self.n_features_in_ = X.shape[1]
        self.guarantee_ = Guarantee(
            epsilon=epsilon, delta=0.0, neighbouring=REPLACE_ONE, statement="Chaudhuri et al. (2011) Theorem 26",
            released="the selected private classifier (its index is revealed by the release)",
            assumptions=("the candidate Lambdas do not depend on the private data", "each learner is eps_p-DP",
                         "mistake counts have sensitivity 1 (one row of the validation part)"),
        )
        return self

    def decision_function(self, X: ArrayLike) -> Array:
        check_is_fitted(self, "coef_")
        return self.best_estimator_.decision_function(X)

    def predict(self, X: ArrayLike) -> Array:
        return np.where(self.decision_function(X) >= 0, 1, -1)

