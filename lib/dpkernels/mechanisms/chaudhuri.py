"""Chaudhuri, Monteleoni and Sarwate (2011): output and objective perturbation for regularised ERM.

* :class:`OutputPerturbation` (Algorithm 1): f_priv = argmin J(f, D) + b, density of b ~ exp(-beta ||b||),
  beta = n Lambda eps_p / (2R) (Theorem 6, Corollary 8).
* :class:`ObjectivePerturbation` (Algorithm 2): f_priv = argmin J(f, D) + (1/n) b'f + (Delta/2)||f||^2 with
  eps', Delta and beta = eps'/(2R) from Theorem 9 (both branches; Corollaries 11-13 for the losses).
* :class:`PrivateKernelERM` (Algorithm 3): either algorithm on random features of the Gaussian kernel; the
  released model is f_priv and the frequencies (the "pre-filter").
* :class:`PrivateTuning` (Algorithm 4): the exponential mechanism picks among m private learners trained on
  disjoint parts, scored on a held-out part (Theorem 26).

J(f, D) = (1/n) sum_i l(y_i f'x_i) + (Lambda/2) ||f||^2.  ``Lambda`` is the paper's regulariser; the
scikit-learn / diffprivlib parameter is C = 1 / (n Lambda).

Guarantee: eps_p-differential privacy under the replace-one relation (Definition 2; Definition 3 for the
Huber loss in Algorithm 2, Corollary 13), assuming a public label set of two classes (``classes``), ||x_i|| <= R
for every possible input (R = ``data_norm``; the paper has R = 1), a convex loss with |l'| <= 1 (and
|l''| <= c for Algorithm 2) and the exact minimiser (the solver certifies ||f - f_exact|| <= ``solver_tol`` x the
sensitivity, else the fit refuses to release).  For R != 1 the calibration is our generalisation (see
:func:`dpkernels.bounds.chaudhuri.theorem_9_parameters`).  Intercept: ``fit_intercept`` appends a constant feature
s (penalised like f), so R becomes sqrt(R^2 + s^2); an unpenalised intercept is not offered because the proofs
need strong convexity in every direction.

What a fitted object holds (release hygiene, :class:`~dpkernels.mechanisms.base.ReleaseMixin`): the released
coefficients and public constants only.  ``keep_nonprivate=True`` (evaluation and audits only; the object is then
NOT a release and its guarantee says so) also keeps ``nonprivate_``: the non-private minimiser, the training data
as a :class:`~dpkernels.solvers.smooth.Design` and what :meth:`sample_releases` needs to draw more releases.

Floating point.  Output perturbation releases through :func:`~dpkernels.mechanisms.base.noise_release`:
``noise="lattice"`` (default) is the exact rounding of the continuous mechanism f* + b to a public grid
(:mod:`dpkernels.lattice`), so Theorem 6 holds for the released doubles; ``noise="continuous"`` is the paper's
float sampler, kept to reproduce the paper and warned about.  Objective perturbation's noise vector b is drawn
the same way (exactly rounded to a grid of 2^-16 of its scale), but its release is a float64 solve certified
to within ``solver_tol`` x the sensitivity of the exact minimiser: no finite-precision proof covers an argmin
(as for every implementation we know of), and the guarantee says so.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np
from numpy.typing import ArrayLike, NDArray
from sklearn.base import BaseEstimator, ClassifierMixin, clone
from sklearn.utils.metaestimators import available_if
from sklearn.utils.multiclass import type_of_target
from sklearn.utils.validation import check_is_fitted, column_or_1d, validate_data

from dpkernels import lattice
from dpkernels.argmin_release import ArgminReleasePlan, plan_argmin_release, shifted_grid_round
from dpkernels._validation import (
    check_epsilon,
    noise_dominance,
    check_finite_array,
    check_positive,
    check_random_state,
    check_row_norms,
)
from dpkernels.bounds.chaudhuri import ObjectivePerturbationParameters, theorem_6_beta, theorem_9_parameters
from dpkernels.losses import MarginLoss, make_loss
from dpkernels.mechanisms.base import (
    REPLACE_ONE,
    Guarantee,
    ReleaseMixin,
    check_noise,
    noise_description,
    noise_release,
    require_certified,
    resolve_classes,
    split_intercept,
)
from dpkernels.noise import gamma_norm_vector
from dpkernels.random_features import RandomFourierFeatures
from dpkernels.solvers import ERMSolution
from dpkernels.solvers.certify import certified_gradient_norm, gradient_with_bound
from dpkernels.solvers.smooth import Design, _curvature, solve_smooth_erm_batch

__all__ = [
    "OutputPerturbation",
    "ObjectivePerturbation",
    "PrivateKernelERM",
    "PrivateTuning",
    "EvaluationState",
    "TuningEvaluation",
    "certified_gtol",
    "unit_gamma_noise",
    "objective_releases",
    "fp_safe_objective_releases",
]

Array = NDArray[np.float64]
#: The solver stops at half the gradient norm the certificate needs (a margin against round-off in ||grad||).
GTOL_SAFETY = 0.5


def certified_gtol(solver_tol: float, data_norm: float, n: float, tol: float | None = None) -> float:
    """The gradient norm at which ||f - f_exact|| <= ||grad|| / (Lambda + Delta) meets solver_tol x the sensitivity
    2R / (n (Lambda + Delta)): ||grad|| <= solver_tol x 2R / n (times ``GTOL_SAFETY``); ``tol`` may tighten it."""
    g = GTOL_SAFETY * check_positive(solver_tol, "solver_tol") * 2.0 * data_norm / n
    return g if tol is None else min(g, check_positive(tol, "tol"))


def unit_gamma_noise(m: int, d: int, noise: str, random_state: object) -> Array:
    """``m`` draws (rows) of Eq. (4)'s law with beta = 1 (density ~ exp(-||b||)); b / beta has the law for beta.

    ``noise="lattice"``: each draw exactly rounded to the grid 2^-16 (:func:`dpkernels.lattice.gamma_norm_lattice`);
    ``"continuous"``: numpy's float sampler.  The same generator state gives the same unit draws for any beta
    (common random numbers across Lambda and epsilon).
    """
    if noise == "lattice":
        return lattice.gamma_norm_lattice(np.zeros((int(m), int(d))), 1.0, random_state)
    return gamma_norm_vector(1.0, int(d), n=int(m), random_state=random_state)


def objective_releases(design: Design, loss: MarginLoss, Lambda: float, params: ObjectivePerturbationParameters,
                       unit_noise: Array, *, data_norm: float, solver_tol: float, center: Array | None = None,
                       tol: float | None = None) -> Array:
    """Algorithm 2's releases argmin J(f, D) + b'f / n + Delta ||f||^2 / 2 for b = ``unit_noise`` / beta (rows), all
    solved together (:func:`~dpkernels.solvers.smooth.solve_smooth_erm_batch`) and each certified to
    ``solver_tol`` x the sensitivity 2R / (n (Lambda + Delta)) (``RuntimeError`` otherwise).

    ``center``: the unperturbed minimiser at Lambda + Delta (computed when omitted); it only sets the starting
    points and the preconditioner.  Returns an array of shape (m, d).
    """
    lam = Lambda + params.Delta
    n = design.n_examples
    gtol = certified_gtol(solver_tol, data_norm, n, tol)
    sol = solve_smooth_erm_batch(design, None, loss, lam, np.atleast_2d(unit_noise) / params.beta, center=center, gtol=gtol)
    require_certified(float(np.max(sol.distance_bound)), solver_tol * 2.0 * data_norm / (n * lam), "||f - f_exact||")
    return sol.coef


def _polish(design: Design, loss: MarginLoss, lam: float, lin: Array, w: Array) -> Array:
    """One Newton step with the exact float64 Hessian at w, from the tree-summed gradient (the end game of a
    certified solve, when L-BFGS stops above the float64 target)."""
    G, _ = gradient_with_bound(design, loss, lam, lin[:, None], w[:, None])
    curv = _curvature(loss, design.matvec(w))
    factor = design.hessian_factor(curv, lam)
    return w - factor.solve(G[:, 0])


def fp_safe_objective_releases(design: Design, loss: MarginLoss, Lambda: float, params: ObjectivePerturbationParameters,
                               m: int, random_state: object, *, data_norm: float, center: Array | None = None
                               ) -> tuple[Array, ArgminReleasePlan]:
    """``m`` floating-point-safe releases of Algorithm 2 (:mod:`dpkernels.argmin_release`): noise enclosures
    (:func:`dpkernels.lattice.gamma_norm_enclosure`), one batched solve, a rigorous certificate per draw to the public
    gradient target (a Newton polish where L-BFGS stopped above it; ``RuntimeError`` if a draw still cannot be
    certified), and rounding to the public grid with fresh uniform offsets.  Returns the releases (m, d) and the plan
    (its ``delta(eps)`` is the guarantee's delta)."""
    rng = check_random_state(random_state)
    lam = Lambda + params.Delta
    n, d = design.n_examples, design.d
    plan = plan_argmin_release(n, d, data_norm, loss, lam, params.beta)
    mid, rad = lattice.gamma_norm_enclosure(int(m), d, params.beta, rng)
    b_upper = np.linalg.norm(mid, axis=1) + np.linalg.norm(rad, axis=1)  # >= ||b*||
    if np.any(np.linalg.norm(rad, axis=1) > plan.radius_target(b_upper)):  # data-independent, never seen
        raise RuntimeError("the noise enclosure is wider than its public bound: refit")
    target = plan.gradient_target(b_upper)
    sol = solve_smooth_erm_batch(design, None, loss, lam, mid, center=center, gtol=float(target.min()) / 4.0)
    W = sol.coef.T.copy()  # (d, m)
    Lin = mid.T / n  # the quotients the solver used
    cert = certified_gradient_norm(design, loss, lam, Lin, W)
    for _ in range(3):
        bad = np.flatnonzero(cert > target)
        if bad.size == 0:
            break
        for k in bad:
            W[:, k] = _polish(design, loss, lam, Lin[:, k], W[:, k])
        cert[bad] = certified_gradient_norm(design, loss, lam, Lin[:, bad], W[:, bad])
    if np.any(cert > target):
        k = int(np.argmax(cert / target))
        raise RuntimeError(
            f"the solve could not be certified to the public float64 target ||grad|| <= {target[k]:.3g} (certified "
            f"{cert[k]:.3g}); refusing to release")
    return shifted_grid_round(W.T, plan.grid, rng), plan


def _solution_bound(loss: MarginLoss, lam: float) -> float:
    """The largest norm the minimiser of J = mean loss + (lam / 2) ||f||^2 can have: sqrt(2 l(0) / lam)."""
    return math.sqrt(2.0 * float(np.asarray(loss.value(np.zeros(1)))[0]) / lam)


def _fit_inputs(est: BaseEstimator, X: ArrayLike, y: ArrayLike | None, classes: Sequence[Any] | None
                ) -> tuple[Array, NDArray[Any], NDArray[np.float64]]:
    """Validated X (dense float64; sparse input is densified), the public label set and labels in {-1, +1}."""
    if y is None:
        raise ValueError(f"{type(est).__name__} requires y to be passed, but the target y is None")
    X = validate_data(est, X, accept_sparse=("csr", "csc", "coo"), dtype=np.float64, reset=True)
    X = check_finite_array(X)
    y = column_or_1d(y, warn=True)
    if classes is None or (isinstance(classes, str) and classes == "data"):
        kind = type_of_target(y)
        if kind not in ("binary", "multiclass"):
            raise ValueError(f"Unknown label type: {kind} (a classifier needs a public set of two labels)")
        if kind == "multiclass" and len(np.unique(y)) > 2:
            raise ValueError("Only binary classification is supported. The type of the target is multiclass.")
    cls, idx = resolve_classes(y, classes, binary=True, n_samples=X.shape[0])
    return X, cls, np.where(idx == 1, 1.0, -1.0)


def _predict_inputs(est: BaseEstimator, X: ArrayLike) -> Array:
    check_is_fitted(est)
    X = validate_data(est, X, accept_sparse=("csr", "csc", "coo"), dtype=np.float64, reset=False)
    return check_finite_array(X)


class _ReleaseClassifier(ReleaseMixin, ClassifierMixin, BaseEstimator):
    """Binary classifiers of this module: public label set, sparse input accepted, scikit-learn tags."""

    def __sklearn_tags__(self) -> Any:
        tags = super().__sklearn_tags__()
        tags.classifier_tags.multi_class = False
        tags.input_tags.sparse = True
        return tags

    def predict(self, X: ArrayLike) -> NDArray[Any]:
        scores = self.decision_function(X)
        return self.classes_[(scores >= 0).astype(np.intp)]

    def _logistic(self) -> bool:
        est = getattr(self, "estimator", None)
        if isinstance(self, PrivateTuning):
            return est is None or str(est.get_params().get("loss", "logistic")) == "logistic"
        return str(getattr(self, "loss", "")) == "logistic"

    @available_if(_logistic)
    def predict_proba(self, X: ArrayLike) -> Array:
        """P(classes_[1] | x) = 1 / (1 + exp(-f(x))) for the logistic loss (post-processing of the release: free),
        as columns (P(classes_[0]), P(classes_[1]))."""
        p1 = 0.5 * (1.0 + np.tanh(0.5 * self.decision_function(X)))  # the logistic function, without overflow
        return np.column_stack([1.0 - p1, p1])


@dataclass
class EvaluationState:
    """What ``keep_nonprivate=True`` keeps (NOT private: the training data and the non-private minimiser)."""

    solution: ERMSolution  #: the non-private minimiser of J(f, D) (Algorithm 1's f*; Algorithm 2: at Lambda + Delta)
    design: Design  #: the training rows (signed, after clipping and the intercept column)
    loss: MarginLoss


@dataclass
class TuningEvaluation:
    """What :class:`PrivateTuning` keeps with ``keep_nonprivate=True`` (NOT private)."""

    mistakes: Array  #: z_i, the validation mistakes of every candidate (exact counts)
    unselected: list[Any]  #: the m - 1 candidates the exponential mechanism did not select
    validation_rows: int


class _ChaudhuriERM(_ReleaseClassifier):
    """Shared parameters (Algorithms 1 and 2), validation and prediction."""

    _smooth_losses = ("logistic", "huber", "smoothed_hinge")
    _release_attributes: ClassVar[tuple[str, ...]] = ("coef_", "intercept_")

    def __init__(self, *, epsilon: float = 1.0, Lambda: float = 1e-3, loss: str = "logistic", h: float = 0.5,
                 data_norm: float = 1.0, clip: bool = False, fit_intercept: bool = False, intercept_scaling: float = 1.0,
                 classes: Sequence[Any] | None = None, noise: str = "lattice", solver_tol: float = 1e-3,
                 tol: float | None = None, init: ArrayLike | None = None, keep_nonprivate: bool = False,
                 random_state: object = None) -> None:
        self.epsilon = epsilon
        self.Lambda = Lambda
        self.loss = loss
        self.h = h
        self.data_norm = data_norm
        self.clip = clip
        self.fit_intercept = fit_intercept
        self.intercept_scaling = intercept_scaling
        self.classes = classes
        self.noise = noise
        self.solver_tol = solver_tol
        self.tol = tol
        self.init = init
        self.keep_nonprivate = keep_nonprivate
        self.random_state = random_state

    # validation ------------------------------------------------------------------------------
    def _prepare(self, X: ArrayLike, y: ArrayLike) -> tuple[Design, MarginLoss, float, float, float, np.random.Generator]:
        X, self.classes_, ypm = _fit_inputs(self, X, y, self.classes)
        epsilon = check_epsilon(self.epsilon)
        Lambda = check_positive(self.Lambda, "Lambda")
        R = check_positive(self.data_norm, "data_norm")
        check_positive(self.solver_tol, "solver_tol")
        if str(self.loss) not in self._smooth_losses:
            raise ValueError(f"loss must be one of {self._smooth_losses} (differentiable, |l'| <= 1); got {self.loss!r}")
        loss = make_loss(self.loss, self.h)
        check_noise(self.noise)
        rng = self._noise_rng(X, ypm)
        X = check_row_norms(X, R, clip=self.clip, what=f"row L2 norms ||x|| (data_norm = {R:g})")
        if self.fit_intercept:
            s = check_positive(self.intercept_scaling, "intercept_scaling")
            X = np.hstack([X, np.full((X.shape[0], 1), s)])
            R = math.sqrt(R * R + s * s)
        return Design(X, ypm), loss, epsilon, Lambda, R, rng

    def _init(self, d: int) -> Array | None:
        if self.init is None:
            return None
        w0 = np.asarray(self.init, dtype=np.float64).ravel()
        if w0.shape != (d,):
            raise ValueError(f"init must have {d} entries, got {w0.shape}")
        return w0

    def _augment(self, X: ArrayLike) -> Array:
        X = _predict_inputs(self, X)
        if self.clip:
            nrm = np.linalg.norm(X, axis=1)
            X = X / np.maximum(nrm / self.data_norm, 1.0)[:, None]
        return X

    def _set_release(self, f: Array) -> None:
        self.coef_, self.intercept_ = split_intercept(f, self.fit_intercept, self.intercept_scaling)

    def _guarantee(self, epsilon: float, statement: str, released: str, assumptions: tuple[str, ...], *,
                   delta: float = 0.0, epsilon_calibrated: float | None = None) -> Guarantee:
        return Guarantee(epsilon=epsilon, delta=delta, neighbouring=REPLACE_ONE, statement=statement, released=released,
                         assumptions=(f"labels in the public set classes = {self.classes_.tolist()}",) + assumptions,
                         epsilon_calibrated=epsilon_calibrated, attributes=self._release_attributes,
                         noise=noise_description(self.noise), notes=self._notes())

    def _evaluation(self) -> EvaluationState:
        check_is_fitted(self, "coef_")
        if not self.keep_nonprivate:
            raise AttributeError("this estimator is a release and holds no non-private state; refit with "
                                 "keep_nonprivate=True (evaluation and audits only) to use this method")
        return self.nonprivate_

    # prediction ------------------------------------------------------------------------------
    def decision_function(self, X: ArrayLike) -> Array:
        return self._augment(X) @ self.coef_ + self.intercept_

    @property
    def nonprivate_solution(self) -> ERMSolution:
        """The non-private minimiser and its certificate (``keep_nonprivate=True`` only: not private)."""
        return self._evaluation().solution

    def nonprivate_decision_function(self, X: ArrayLike) -> Array:
        """Scores of the non-private minimiser (``keep_nonprivate=True`` only: not private)."""
        w = self._evaluation().solution.coef
        coef, intercept = split_intercept(w, self.fit_intercept, self.intercept_scaling)
        return self._augment(X) @ coef + intercept


_CLS_DOC = """
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
    classes : sequence of two labels or None
        The public label set (the first maps to -1, the second to +1).  None: {-1, +1} when the labels are -1/+1,
        else inferred from y with a ``PrivacyLeakWarning``.
    noise : {"lattice", "continuous"}
        How the noise is drawn (see the module docstring); "continuous" warns.
    solver_tol : float
        The release is refused unless the solver certifies ||f - f_exact|| <= solver_tol x the sensitivity.
    tol : float or None
        A tighter gradient-norm target for the solver (default: what ``solver_tol`` needs).
    init : array or None
        The solver's starting point (changes the speed, not the release).
    keep_nonprivate : bool
        Keep the non-private state ``nonprivate_`` for evaluation and audits (the object is then not a release).
    random_state : numpy.random.Generator, int, SeedSequence or None
        The noise source; None draws from operating-system entropy, a seed is for reproduction only.
"""


class OutputPerturbation(_ChaudhuriERM):
    """Algorithm 1 (sensitivity method): f_priv = argmin_f J(f, D) + b, ||b|| ~ Gamma(d, 2R / (n Lambda eps_p)).
    """ + _CLS_DOC + """
    Attributes
    ----------
    coef_, intercept_ : the release; beta_, sensitivity_ : public constants (n, Lambda, eps_p, R); guarantee_.
    """

    _release_attributes: ClassVar[tuple[str, ...]] = ("coef_", "intercept_", "beta_", "sensitivity_", "noise_to_solution_")

    def fit(self, X: ArrayLike, y: ArrayLike) -> "OutputPerturbation":
        design, loss, epsilon, Lambda, R, rng = self._prepare(X, y)
        n, d = design.shape
        self.sensitivity_ = 2.0 * R / (n * Lambda)
        sol = _nonprivate(design, loss, Lambda, certified_gtol(self.solver_tol, R, n, self.tol), self._init(d))
        require_certified(sol.distance_bound, self.solver_tol * self.sensitivity_, "||f - f_exact||")
        eps_cal = epsilon / (1.0 + 2.0 * self.solver_tol)
        self.beta_ = theorem_6_beta(eps_cal, n, Lambda, R)
        # public: E||b|| = d / beta against ||f*|| <= sqrt(2 J(0) / Lambda) (J(f*) <= J(0) = l(0))
        self.noise_to_solution_ = noise_dominance(d / self.beta_, _solution_bound(loss, Lambda), type(self).__name__)
        self._set_release(noise_release(sol.coef, "gamma_norm", 1.0 / self.beta_, noise=self.noise, random_state=rng))
        if self.keep_nonprivate:
            self.nonprivate_ = EvaluationState(sol, design, loss)
        self.guarantee_ = self._guarantee(
            epsilon, "Chaudhuri et al. (2011) Theorem 6 / Corollary 8",
            "f_priv = f* + b, density of b ~ exp(-beta ||b||) (coef_, intercept_)",
            (f"||x|| <= R = {R:.6g} for every possible input", f"loss {loss.name}: convex, differentiable, |l'| <= 1",
             "N(f) = ||f||^2 / 2 (1-strongly convex)",
             f"f* is certified to within solver_tol = {self.solver_tol:g} x the sensitivity of the exact minimiser, so "
             f"the centre's sensitivity is at most (1 + 2 solver_tol) x 2R / (n Lambda): beta is calibrated at "
             f"eps / (1 + 2 solver_tol)"),
            epsilon_calibrated=eps_cal,
        )
        self._void_if_data_derived()
        return self

    def sample_releases(self, n_draws: int, random_state: object = None, epsilon: float | None = None) -> Array:
        """Further releases f* + b from the kept minimiser (optionally recalibrated to another epsilon), drawn like
        :meth:`fit` (``noise``).  ``keep_nonprivate=True`` only."""
        f = self._evaluation().solution.coef
        beta = self.beta_ if epsilon is None else check_epsilon(epsilon) / (1.0 + 2.0 * self.solver_tol) / self.sensitivity_
        centre = np.broadcast_to(f, (int(n_draws), f.shape[0]))
        return noise_release(centre, "gamma_norm", 1.0 / beta, noise=self.noise, random_state=random_state)


class ObjectivePerturbation(_ChaudhuriERM):
    """Algorithm 2 (objective perturbation): f_priv = argmin_f J(f, D) + (1/n) b'f + (Delta/2)||f||^2.

    The loss's curvature bound c (logistic 1/4, Huber 1/(2h), smoothed hinge 3/(4h)) enters eps' and Delta
    (Theorem 9 and Corollaries 11-13).
    """ + _CLS_DOC + """
    Attributes
    ----------
    coef_, intercept_ : the release; params_ : (eps', Delta, beta, branch), public constants; guarantee_.
    """

    _release_attributes: ClassVar[tuple[str, ...]] = ("coef_", "intercept_", "params_", "release_grid_",
                                                      "noise_to_solution_")

    def fit(self, X: ArrayLike, y: ArrayLike) -> "ObjectivePerturbation":
        design, loss, epsilon, Lambda, R, rng = self._prepare(X, y)
        n, d = design.shape
        params = theorem_9_parameters(epsilon, n, Lambda, loss.curvature, R)
        w0 = self._init(d)
        center = np.zeros(d) if w0 is None else w0
        if self.noise == "lattice":
            f_all, plan = fp_safe_objective_releases(design, loss, Lambda, params, 1, rng, data_norm=R, center=center)
            f, delta = f_all[0], plan.delta(epsilon)
            self.release_grid_ = plan.grid
            fp_note = (f"floating-point safe: the certified float64 minimiser (||grad|| <= {plan.gradient_targets[0]:.3g} "
                       "for a median noise draw) "
                       f"rounded to the public grid {plan.grid:.6g} with a uniform random offset; it differs from the "
                       f"rounded exact minimiser with probability <= {plan.delta0:.3g} (dpkernels.argmin_release), "
                       f"hence delta = (1 + e^eps) x that")
        else:
            unit = unit_gamma_noise(1, d, self.noise, rng)
            f = objective_releases(design, loss, Lambda, params, unit, data_norm=R, solver_tol=self.solver_tol,
                                   center=center, tol=self.tol)[0]
            delta, fp_note = 0.0, ("NOT floating-point safe (noise='continuous'): the float64 argmin identifies the "
                                   "data set it was computed from; for reproducing the paper only")
            self.release_grid_ = None
        self.params_ = params
        lam_tot = Lambda + params.Delta
        # public: the noise moves f by at most ||b|| / (n lam), E||b|| = d / beta, against ||f*|| <= sqrt(2 l(0) / lam)
        self.noise_to_solution_ = noise_dominance(d / (params.beta * n * lam_tot), _solution_bound(loss, lam_tot),
                                                  type(self).__name__)
        self._set_release(f)
        if self.keep_nonprivate:
            sol = _nonprivate(design, loss, Lambda + params.Delta, certified_gtol(self.solver_tol, R, n, self.tol), None)
            self.nonprivate_ = EvaluationState(sol, design, loss)
        statement = {"logistic": "Chaudhuri et al. (2011) Theorem 9 / Corollary 11",
                     "smoothed_hinge": "Chaudhuri et al. (2011) Theorem 9 / Corollary 12",
                     "huber": "Chaudhuri et al. (2011) Corollary 13 (Definition 3)"}[loss.name]
        self.guarantee_ = self._guarantee(
            epsilon, statement, "f_priv = argmin J(f, D) + b'f / n + Delta ||f||^2 / 2, rounded to a public grid (coef_, "
            "intercept_)",
            (f"||x|| <= R = {R:.6g} for every possible input",
             f"loss {loss.name}: convex, |l'| <= 1, |l''| <= c = {loss.curvature:.6g}", "N(f) = ||f||^2 / 2",
             f"branch {params.branch}: eps' = {params.epsilon_prime:.6g}, Delta = {params.Delta:.6g}",
             fp_note),
            delta=delta,
        )
        self._void_if_data_derived()
        return self

    def sample_releases(self, n_draws: int, random_state: object = None) -> Array:
        """Further releases drawn like :meth:`fit` (``noise="lattice"``: floating-point safe, each certified and
        rounded; ``"continuous"``: the paper's float sampler and solve), all solved together (one data pass per
        iteration, started and preconditioned at the kept unperturbed minimiser).  ``keep_nonprivate=True`` only."""
        ev = self._evaluation()
        rng = check_random_state(random_state)
        R = math.sqrt(self.data_norm**2 + self.intercept_scaling**2) if self.fit_intercept else float(self.data_norm)
        if self.noise == "lattice":
            return fp_safe_objective_releases(ev.design, ev.loss, float(self.Lambda), self.params_, int(n_draws), rng,
                                              data_norm=R, center=ev.solution.coef)[0]
        unit = unit_gamma_noise(int(n_draws), ev.design.d, self.noise, rng)
        return objective_releases(ev.design, ev.loss, float(self.Lambda), self.params_, unit, data_norm=R,
                                  solver_tol=self.solver_tol, center=ev.solution.coef, tol=self.tol)


def _nonprivate(design: Design, loss: MarginLoss, lam: float, gtol: float, w0: Array | None) -> ERMSolution:
    """The certified minimiser of J (b = 0) at regulariser ``lam``."""
    d = design.d
    sol = solve_smooth_erm_batch(design, None, loss, lam, np.zeros((1, d)), center=np.zeros(d) if w0 is None else w0,
                                 gtol=gtol)
    return ERMSolution(coef=sol.coef[0], objective=float("nan"), distance_bound=float(sol.distance_bound[0]),
                       method="lbfgs-batch", n_iter=sol.n_iter, converged=bool(sol.converged[0]),
                       grad_norm=float(sol.grad_norm[0]))


class PrivateKernelERM(_ReleaseClassifier):
    """Algorithm 3: Algorithm 1 or 2 on random features of the Gaussian kernel exp(-gamma ||x - x'||^2).

    The features are sqrt(2/D) cos(w'x + psi) with w ~ N(0, 2 gamma I), psi ~ U[-pi, pi].  Their norm can
    reach sqrt(2) > 1 (ERRATA C1 / E10), which the privacy proofs do not allow; ``feature_scale="unit"`` (default)
    divides them by sqrt(2) so that ||v(x)|| <= 1 always holds; ``feature_scale="paper"`` keeps the paper's map
    and calibrates with R = sqrt(2) instead.  Either way the feature norm is bounded for *every* input, so no
    bound on ||x|| is needed for privacy (Theorem 22's ||x|| <= 1 serves the utility results of Section 5 only):
    this estimator therefore has no ``data_norm`` or ``clip``.  Released: ``coef_`` (f_priv in feature space),
    ``frequencies_`` and ``phases_`` (data-independent).  Other parameters as :class:`ObjectivePerturbation`.
    """

    _release_attributes: ClassVar[tuple[str, ...]] = ("coef_", "frequencies_", "phases_", "feature_norm_")

    def __init__(self, *, epsilon: float = 1.0, Lambda: float = 1e-3, algorithm: str = "objective", loss: str = "logistic",
                 h: float = 0.5, gamma: float = 1.0, n_components: int = 100, feature_scale: str = "unit",
                 classes: Sequence[Any] | None = None, noise: str = "lattice", solver_tol: float = 1e-3,
                 keep_nonprivate: bool = False, random_state: object = None) -> None:
        self.epsilon = epsilon
        self.Lambda = Lambda
        self.algorithm = algorithm
        self.loss = loss
        self.h = h
        self.gamma = gamma
        self.n_components = n_components
        self.feature_scale = feature_scale
        self.classes = classes
        self.noise = noise
        self.solver_tol = solver_tol
        self.keep_nonprivate = keep_nonprivate
        self.random_state = random_state

    def _features(self, X: Array) -> Array:
        D = self.frequencies_.shape[0]
        scale = math.sqrt(2.0 / D) / (math.sqrt(2.0) if self.feature_scale == "unit" else 1.0)
        return scale * np.cos(X @ self.frequencies_.T + self.phases_)

    def fit(self, X: ArrayLike, y: ArrayLike) -> "PrivateKernelERM":
        X, _, ypm = _fit_inputs(self, X, y, self.classes)
        check_noise(self.noise)
        if self.algorithm not in ("objective", "output"):
            raise ValueError(f"algorithm must be 'objective' or 'output', got {self.algorithm!r}")
        if self.feature_scale not in ("unit", "paper"):
            raise ValueError(f"feature_scale must be 'unit' or 'paper', got {self.feature_scale!r}")
        if not isinstance(self.n_components, (int, np.integer)) or self.n_components < 1:
            raise ValueError(f"n_components must be a positive integer, got {self.n_components!r}")
        rng = self._noise_rng(X, ypm)
        sigma = math.sqrt(1.0 / (2.0 * check_positive(self.gamma, "gamma")))
        rff = RandomFourierFeatures("rbf", sigma, int(self.n_components), variant="phase",
                                    scale_to_unit_ball=self.feature_scale == "unit",
                                    random_state=self._public_rng(X.shape[1])).fit(X)
        self.frequencies_, self.phases_ = rff.frequencies_, rff.phases_
        self.feature_norm_ = rff.max_feature_norm
        cls = ObjectivePerturbation if self.algorithm == "objective" else OutputPerturbation
        inner = cls(epsilon=self.epsilon, Lambda=self.Lambda, loss=self.loss, h=self.h, data_norm=self.feature_norm_,
                    classes=self.classes, noise=self.noise, solver_tol=self.solver_tol,
                    keep_nonprivate=self.keep_nonprivate, random_state=rng).fit(self._features(X), y)
        self.classes_ = inner.classes_
        self.coef_ = inner.coef_
        if self.keep_nonprivate:
            self.nonprivate_ = inner.nonprivate_
        g = inner.guarantee_
        self.guarantee_ = Guarantee(
            epsilon=g.epsilon, delta=g.delta, neighbouring=REPLACE_ONE,
            statement=f"Chaudhuri et al. (2011) Theorem 22 (Algorithm 3 with {g.statement.split(') ', 1)[-1]})",
            released="f_priv in feature space and the frequencies and phases (data-independent)",
            assumptions=(f"features sqrt(2/D) cos(w'x + psi){' / sqrt(2)' if self.feature_scale == 'unit' else ''}: "
                         f"||v(x)|| <= {self.feature_norm_:.6g} for every x (no bound on ||x|| needed)",)
            + tuple(a for a in g.assumptions if not a.startswith("||x||")),
            epsilon_calibrated=g.epsilon_calibrated, attributes=self._release_attributes, noise=g.noise,
            notes=self._notes())
        self._void_if_data_derived()
        return self

    def decision_function(self, X: ArrayLike) -> Array:
        return self._features(_predict_inputs(self, X)) @ self.coef_


class PrivateTuning(_ReleaseClassifier):
    """Algorithm 4: private choice of Lambda by the exponential mechanism over disjoint parts.

    D is split into m + 1 disjoint parts (m = len(Lambdas) equal training parts and a validation part of
    ``validation_size`` rows, default n / (m + 1); the paper's Figures 4-5 use 25,000); learner i is ``estimator``
    with Lambda_i, trained on part i with the same epsilon; z_i = mistakes on the validation part; index i is drawn
    with probability proportional to exp(-eps_p z_i / 2) (exactly: :func:`dpkernels.lattice.exponential_mechanism_exact`).
    Theorem 26: eps_p-DP (parallel composition over the disjoint parts + the exponential mechanism; z_i has
    sensitivity 1 under replace-one).

    Released: the selected model only (``best_estimator_``, itself a release, its ``coef_``, and its index
    ``selected_`` and regulariser ``Lambda_``, which the model reveals anyway).  The validation counts and the other m - 1 models are
    not kept (the counts alone are not private); with ``keep_nonprivate=True`` (evaluation only) ``nonprivate_``
    (:class:`TuningEvaluation`) holds both.
    """

    _release_attributes: ClassVar[tuple[str, ...]] = ("best_estimator_", "selected_", "Lambda_", "coef_")

    def __init__(self, estimator: BaseEstimator | None = None, Lambdas: Sequence[float] = (1e-3, 1e-2, 1e-1), *,
                 epsilon: float = 1.0, validation_size: int | None = None, classes: Sequence[Any] | None = None,
                 keep_nonprivate: bool = False, random_state: object = None) -> None:
        self.estimator = estimator
        self.Lambdas = Lambdas
        self.epsilon = epsilon
        self.validation_size = validation_size
        self.classes = classes
        self.keep_nonprivate = keep_nonprivate
        self.random_state = random_state

    def fit(self, X: ArrayLike, y: ArrayLike) -> "PrivateTuning":
        X, self.classes_, ypm = _fit_inputs(self, X, y, self.classes)
        y = np.asarray(y)
        epsilon = check_epsilon(self.epsilon)
        rng = self._noise_rng(X, ypm)
        lambdas = [check_positive(lam, "Lambdas[i]") for lam in self.Lambdas]
        m = len(lambdas)
        if m < 1:
            raise ValueError("Lambdas must not be empty")
        base = ObjectivePerturbation() if self.estimator is None else self.estimator
        if not {"epsilon", "Lambda", "random_state"} <= set(base.get_params()):
            raise ValueError("estimator must take epsilon, Lambda and random_state (a Chaudhuri mechanism)")
        n = X.shape[0]
        n_val = n // (m + 1) if self.validation_size is None else int(self.validation_size)
        n_part = (n - n_val) // m
        if n_part < 1 or n_val < 1:
            raise ValueError(f"not enough rows (n_samples = {n}) for {m} parts and a validation part")
        order = self._public_rng(n).permutation(n)  # a data-independent split
        val = order[m * n_part:m * n_part + n_val]
        models, mistakes = [], []
        for i, lam in enumerate(lambdas):
            part = order[i * n_part:(i + 1) * n_part]
            est = clone(base).set_params(epsilon=epsilon, Lambda=lam, classes=list(self.classes_),
                                         keep_nonprivate=self.keep_nonprivate, random_state=rng)
            est.fit(X[part], y[part])
            est.random_state = None  # the shared generator is not part of any release
            models.append(est)
            mistakes.append(int(np.sum(est.predict(X[val]) != y[val])))
        self.selected_ = lattice.exponential_mechanism_exact(-np.asarray(mistakes, dtype=np.float64), epsilon, 1.0, rng)
        self.best_estimator_ = models[self.selected_]
        self.Lambda_ = lambdas[self.selected_]
        self.coef_ = self.best_estimator_.coef_
        if self.keep_nonprivate:
            self.nonprivate_ = TuningEvaluation(np.asarray(mistakes, dtype=np.float64),
                                                [mdl for i, mdl in enumerate(models) if i != self.selected_], n_val)
        # parallel composition over the disjoint parts: a changed row of part i changes learner i only (its own
        # (eps_i, delta_i)); a changed validation row changes the scores only (the exponential mechanism's eps)
        eps_total = max([epsilon] + [mdl.guarantee_.epsilon for mdl in models])
        delta_total = max(mdl.guarantee_.delta for mdl in models)
        self.guarantee_ = Guarantee(
            epsilon=eps_total, delta=delta_total, neighbouring=REPLACE_ONE, statement="Chaudhuri et al. (2011) Theorem 26",
            released="the selected private classifier, its index and its Lambda (nothing about the other candidates)",
            assumptions=("the candidate Lambdas do not depend on the private data",
                         "each learner is (eps_i, delta_i)-DP on its part (their guarantees; the maximum is stated)",
                         "mistake counts have sensitivity 1 (one row of the validation part)",
                         f"labels in the public set classes = {self.classes_.tolist()}"),
            attributes=self._release_attributes, noise="exponential mechanism sampled exactly (Gumbel-max over exact reals)",
            notes=self._notes())
        self._void_if_data_derived()
        return self

    def decision_function(self, X: ArrayLike) -> Array:
        X = _predict_inputs(self, X)
        return self.best_estimator_.decision_function(X)
