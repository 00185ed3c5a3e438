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
for every possible input (R = ``data_norm``; the paper has R = 1), a convex loss with ``|l'| <= 1`` (and
``|l''| <= c`` for Algorithm 2) and the exact minimiser (the solver certifies ||f - f_exact|| <= ``solver_tol`` x the
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
float sampler, kept to reproduce the paper and warned about.  Objective perturbation's release
(:mod:`dpkernels.argmin_release`) is the float64 minimiser for an exactly drawn noise vector, certified in floating
point to a public gradient target, plus a small smoothing noise, exactly rounded to a public grid: the certified
error moves the smoothed release's density by a factor paid for by a share of the noise budget (Theorem 9's epsilon
holds), and delta is e^eps times the probability that the noise exceeds its 1 - 2^-100 quantile.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy import sparse
from sklearn.base import BaseEstimator, ClassifierMixin, clone
from sklearn.utils.metaestimators import available_if
from sklearn.utils.multiclass import type_of_target
from sklearn.utils.validation import check_is_fitted, column_or_1d

from dpkernels import lattice
from dpkernels.argmin_release import ArgminReleasePlan, plan_argmin_release
from dpkernels._validation import (
    MAX_ABS_INPUT,
    check_epsilon,
    delta_ceiling,
    noise_dominance,
    check_finite_array,
    check_positive,
    check_random_state,
    check_row_norms,
    validate_data,
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
from dpkernels.solvers.certify import certified_gradient, certified_solve, newton_end_game
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
    ``"idealized"`` (or its former name ``"continuous"``): numpy's float sampler; anything else raises ``ValueError``.
    The same generator state gives the same unit draws for any beta (common random numbers across Lambda and epsilon).
    """
    if check_noise(noise, warn=False) == "lattice":
        return lattice.gamma_norm_lattice(np.zeros((int(m), int(d))), 1.0, random_state)
    return gamma_norm_vector(1.0, int(d), n=int(m), random_state=random_state, idealized=True)


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
    """One Newton step with the exact float64 Hessian at w (the end game of a solve that stopped above the target)."""
    _, G_data = design.loss_gradient(loss, w, value=False)
    curv = _curvature(loss, design.matvec(w))
    return w - design.hessian_factor(curv, lam).solve(G_data + lam * w + lin)


def fp_safe_objective_releases(design: Design, loss: MarginLoss, Lambda: float, params: ObjectivePerturbationParameters,
                               m: int, random_state: object, *, data_norm: float, center: Array | None = None
                               ) -> tuple[Array, ArgminReleasePlan]:
    """``m`` floating-point-safe releases of Algorithm 2 (:mod:`dpkernels.argmin_release`): noise enclosures at the
    plan's rate beta_r, a solve per draw certified to the public gradient target, the smoothing noise and the exact
    rounding to the public grid (:func:`dpkernels.lattice.gamma_norm_lattice`).

    One draw is solved by :func:`~dpkernels.solvers.certify.certified_solve` (from ``center``, or its multilevel start
    when ``center`` is None); several together by :func:`~dpkernels.solvers.smooth.solve_smooth_erm_batch` from
    ``center``, then certified (:func:`~dpkernels.solvers.certify.certified_gradient`), with a Newton polish where a
    draw stopped above the target, then damped Newton to convergence
    (:func:`~dpkernels.solvers.certify.newton_end_game`) where it still is: a refusal is an output that would depend
    on the data, so the solve does not give up early.  ``RuntimeError`` if a draw still cannot be certified (the
    message names only public constants).  The rows of ``design`` must satisfy ||x_i|| <= ``data_norm``
    (1 + ``NORM_RTOL``).  Returns the
    releases (m, d) and the plan (its ``delta(eps)`` is the guarantee's delta)."""
    rng = check_random_state(random_state)
    lam = Lambda + params.Delta
    n, d = design.n_examples, design.d
    plan = plan_argmin_release(n, d, data_norm, loss, lam, params.beta)
    mid, rad = lattice.gamma_norm_enclosure(int(m), d, plan.beta_release, rng)
    radius = np.linalg.norm(rad, axis=1)
    plan.check_noise(np.linalg.norm(mid, axis=1) + radius, radius)
    Lin = mid.T / n  # the quotients the solver uses (the certificate covers their rounding)
    target = plan.gradient_target
    if int(m) == 1:
        sol = certified_solve(design, loss, lam, Lin[:, 0], target, data_norm, w0=center)
        W, cert = sol.coef[:, None].copy(), np.array([sol.certificate])
    else:
        W = solve_smooth_erm_batch(design, None, loss, lam, mid, center=center, gtol=target / 4.0).coef.T.copy()
        _, cert = certified_gradient(design, loss, lam, Lin, W, data_norm)
    for _ in range(3):
        bad = np.flatnonzero(~(cert <= target))
        if bad.size == 0:
            break
        for k in bad:
            W[:, k] = _polish(design, loss, lam, Lin[:, k], W[:, k])
        _, cert[bad] = certified_gradient(design, loss, lam, Lin[:, bad], W[:, bad], data_norm)
    for k in np.flatnonzero(~(cert <= target)):  # keep solving: a refusal here would depend on the data
        W[:, k], cert[k] = newton_end_game(design, loss, lam, mid[k], W[:, k], target, data_norm)
    if not np.all(cert <= target):
        raise RuntimeError(f"the solve could not be certified to the public float64 target ||grad|| <= {target:.3g}; "
                           "refusing to release")
    return lattice.gamma_norm_lattice(W.T, 1.0 / plan.smoothing_scale, rng, grid=plan.grid), plan


def _solution_bound(loss: MarginLoss, lam: float) -> float:
    """The largest norm the minimiser of J = mean loss + (lam / 2) ||f||^2 can have: sqrt(2 l(0) / lam)."""
    return math.sqrt(2.0 * float(np.asarray(loss.value(np.zeros(1)))[0]) / lam)


def _fit_inputs(est: BaseEstimator, X: ArrayLike, y: ArrayLike | None, classes: Sequence[Any] | None, *,
                finite: bool = True) -> tuple[Array, NDArray[Any], NDArray[np.float64]]:
    """Validated X (dense float64; sparse input is densified), the public label set and labels in {-1, +1}.

    ``finite=False`` leaves the check for NaN, infinity and entries beyond ``MAX_ABS_INPUT`` to the caller
    (:func:`_finite_row_norms`, which reads the rows once for it and for their norms)."""
    if y is None:
        raise ValueError(f"{type(est).__name__} requires y to be passed, but the target y is None")
    X = validate_data(est, X, accept_sparse=("csr", "csc", "coo"), dtype=np.float64, reset=True,
                      ensure_all_finite=finite)
    X = check_finite_array(X) if finite else (X.toarray() if sparse.issparse(X) else X)
    y = column_or_1d(y, warn=True)
    if classes is None and y.dtype.kind in "biuf" and bool(np.all((y == 1) | (y == -1))):
        # the papers' convention, data-independent: resolve_classes's answer for these labels, without its three passes
        if y.shape[0] != X.shape[0]:
            raise ValueError(f"X has {X.shape[0]} rows but y has {y.shape[0]} labels")
        return X, np.array([-1, 1]), y.astype(np.float64)
    # read from the data anyway: say what is wrong (classes=None: resolve_classes's one text, whatever the labels)
    if isinstance(classes, str) and classes == "data":
        kind = type_of_target(y)
        if kind not in ("binary", "multiclass"):
            raise ValueError(f"Unknown label type: {kind} (a classifier needs a public set of two labels)")
        if kind == "multiclass" and len(np.unique(y)) > 2:
            raise ValueError("Only binary classification is supported. The type of the target is multiclass.")
    cls, idx = resolve_classes(y, classes, binary=True, n_samples=X.shape[0])
    return X, cls, np.where(idx == 1, 1.0, -1.0)


def _finite_row_norms(X: Array) -> Array:
    """The rows' L2 norms, refusing non-finite inputs and entries beyond ``MAX_ABS_INPUT`` (by
    :func:`~dpkernels._validation.check_finite_array`'s rules) from the norms alone: every ``|x_ij|`` <= ||x_i||, so finite
    norms at most ``MAX_ABS_INPUT`` clear every entry; otherwise the entries are checked one by one."""
    from sklearn.utils.extmath import row_norms

    norms = row_norms(X)
    if not (np.all(np.isfinite(norms)) and float(norms.max(initial=0.0)) <= MAX_ABS_INPUT):
        check_finite_array(X)
    return norms


def _predict_inputs(est: BaseEstimator, X: ArrayLike) -> Array:
    check_is_fitted(est)
    X = validate_data(est, X, accept_sparse=("csr", "csc", "coo"), dtype=np.float64, reset=False)
    return check_finite_array(X)


class _ReleaseClassifier(ReleaseMixin, ClassifierMixin, BaseEstimator):
    """Binary classifiers of this module: public label set, sparse input accepted, scikit-learn tags."""

    _pure_in_exact_arithmetic = True  # Theorems 6, 9, 22, 26: any delta stated is the float64 argmin's

    def __sklearn_tags__(self) -> Any:
        tags = super().__sklearn_tags__()
        tags.classifier_tags.multi_class = False
        tags.input_tags.sparse = True
        return tags

    def predict(self, X: ArrayLike) -> NDArray[Any]:
        """The predicted labels: ``classes_[1]`` where the decision function is >= 0, else ``classes_[0]``.

        Post-processing of the release: no further privacy cost.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            The rows to classify.

        Returns
        -------
        ndarray of shape (n_samples,)
            Labels from ``classes_``.
        """
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
    _release_attributes: ClassVar[tuple[str, ...]] = ("coef_", "intercept_", "alpha_")
    #: Which of Theorems 15 (output) and 18 (objective) sets ``alpha="auto"`` (:func:`dpkernels.defaults.chaudhuri_lambda`).
    _rule_algorithm: ClassVar[str] = "objective"
    #: The solver's Design: ``"auto"`` (CSR for mostly-zero rows) or dense (False).
    _sparse_design: ClassVar[str | bool] = "auto"

    def __init__(self, *, epsilon: float = 1.0, alpha: float | str = "auto", loss: str = "logistic", h: float = 0.5,
                 data_norm: float = 1.0, clip: bool = False, fit_intercept: bool = False, intercept_scaling: float = 1.0,
                 classes: Sequence[Any] | None = None, noise: str = "lattice", solver_tol: float = 1e-3,
                 tol: float | None = None, init: ArrayLike | None = None, keep_nonprivate: bool = False,
                 random_state: object = None) -> None:
        self.epsilon = epsilon
        self.alpha = alpha
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
        X, self.classes_, ypm = _fit_inputs(self, X, y, self.classes, finite=False)
        norms = _finite_row_norms(X)
        epsilon = check_epsilon(self.epsilon)
        R = check_positive(self.data_norm, "data_norm")
        check_positive(self.solver_tol, "solver_tol")
        if str(self.loss) not in self._smooth_losses:
            raise ValueError(f"loss must be one of {self._smooth_losses} (differentiable, |l'| <= 1); got {self.loss!r}")
        loss = make_loss(self.loss, self.h)
        check_noise(self.noise)
        rng = self._noise_rng(X, ypm)
        X = check_row_norms(X, R, clip=self.clip, what=f"row L2 norms ||x|| (data_norm = {R:g})", norms=norms)
        if self.fit_intercept:
            s = check_positive(self.intercept_scaling, "intercept_scaling")
            X = np.hstack([X, np.full((X.shape[0], 1), s)])
            R = math.sqrt(R * R + s * s)
        self.alpha_ = Lambda = self._resolve_alpha(X.shape[0], X.shape[1], epsilon, R)
        return Design(X, ypm, sparse_mode=self._sparse_design), loss, epsilon, Lambda, R, rng

    def _resolve_alpha(self, n: int, d: int, epsilon: float, R: float) -> float:
        """``alpha``, or for ``"auto"`` the public rule of :func:`dpkernels.defaults.chaudhuri_lambda` (Theorem 15 or
        18's Lambda = eps_g / ||f0||^2 for rows in the unit ball) at this n, d and epsilon, times R^2 for rows in the
        ball of radius R (the objective with rows x / R and weights R f is the same problem with Lambda / R^2).  Under
        the replace-one relation n is public, so the rule costs no privacy."""
        if isinstance(self.alpha, str):
            if self.alpha != "auto":
                raise ValueError(f"alpha must be a positive float or 'auto', got {self.alpha!r}")
            from dpkernels.defaults import chaudhuri_lambda

            return chaudhuri_lambda(n, d, epsilon, algorithm=self._rule_algorithm, loss=str(self.loss),
                                    h=float(self.h)) * R * R
        return check_positive(self.alpha, "alpha")

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
                         assumptions=(f"labels in the public set classes = {self.classes_.tolist()}",
                                      f"regulariser Lambda = alpha_ = {self.alpha_:.6g} chosen without the data ("
                                      + ("the public rule of n, d and epsilon; n public under replace-one)"
                                         if isinstance(self.alpha, str) else "given)")) + assumptions,
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
        """f_priv'x + ``intercept_`` (rows clipped to ``data_norm`` first when ``clip=True``).

        Post-processing of the release: no further privacy cost.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            The rows to score.

        Returns
        -------
        ndarray of shape (n_samples,)
            The scores; positive values predict ``classes_[1]``.
        """
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


class OutputPerturbation(_ChaudhuriERM):
    """Chaudhuri et al. (2011) Algorithm 1 (sensitivity method): f_priv = argmin_f J(f, D) + b.

    The regularised ERM minimiser f* = argmin J(f, D), J(f, D) = (1/n) sum_i l(y_i f'x_i) + (Lambda/2)||f||^2, plus
    noise b with density proportional to exp(-beta ||b||) (||b|| ~ Gamma(d, 1/beta), uniform direction), beta =
    n Lambda eps_p / (2R) (Theorem 6; Corollary 8 for the logistic loss).

    Parameters
    ----------
    epsilon : float, default=1.0
        eps_p, the privacy level.
    alpha : float or "auto", default="auto"
        The regulariser (the paper's Lambda) of J(f, D) = (1/n) sum_i l(y_i f'x_i) + (Lambda/2)||f||^2; scikit-learn's (and
        diffprivlib's) C = 1 / (n Lambda).  The noise shrinks as 1 / (n Lambda).  ``"auto"``: the public rule of
        Theorem 15 (:func:`dpkernels.defaults.chaudhuri_lambda`, a function of n, d and epsilon only, times
        ``data_norm`` squared); otherwise choose it without looking at the data, or privately with
        :class:`PrivateTuning`.  The value used is ``alpha_``.
    loss : {"logistic", "huber", "smoothed_hinge"}, default="logistic"
        The loss l (convex, differentiable, ``|l'| <= 1``); ``"logistic"`` also gives ``predict_proba``.
    h : float, default=0.5
        The smoothing width h of the Huber and smoothed hinge losses (the paper's experiments: h = 0.5).
    data_norm : float, default=1.0
        R, a public bound on ||x|| over all possible inputs (the paper: R = 1).  Never read from the data.
    clip : bool, default=False
        Rows with ||x|| > R raise ``ValueError`` (False) or are rescaled onto the ball of radius R with a
        :class:`~dpkernels.ClippingWarning` (True; a per-record map, no privacy cost; prediction clips alike).
    fit_intercept : bool, default=False
        Append a constant feature s = ``intercept_scaling``, penalised like f, so that R becomes sqrt(R^2 + s^2)
        (an unpenalised intercept would break the strong convexity the proofs need).
    intercept_scaling : float, default=1.0
        s, the value of the constant feature (``fit_intercept=True`` only).
    classes : sequence of two labels, "data" or None, default=None
        The public label set (``classes[0]`` maps to -1, ``classes[1]`` to +1).  None: the labels must be -1/+1.
        ``"data"`` reads the label set from the data, explicitly: the fit is then NOT private.
    noise : {"lattice", "continuous"}, default="lattice"
        How the noise is drawn (see Notes); ``"continuous"`` is NOT floating-point safe and warns with
        :class:`~dpkernels.UnsafeNoiseWarning`.
    solver_tol : float, default=1e-3
        The release is refused (``RuntimeError``) unless the solver certifies ||f - f_exact|| <= solver_tol x the
        sensitivity 2R / (n Lambda); the noise is calibrated at eps_p / (1 + 2 solver_tol), so that eps_p holds.
    tol : float or None, default=None
        A tighter gradient-norm target for the solver (default: what ``solver_tol`` needs).
    init : array-like of shape (n_features,) or None, default=None
        The solver's starting point (changes the speed, not the release).
    keep_nonprivate : bool, default=False
        Keep the non-private state ``nonprivate_`` for evaluation and audits (:meth:`sample_releases`,
        :meth:`nonprivate_decision_function`); the object is then not a release (:meth:`release` drops it).
    random_state : None, int, SeedSequence or numpy.random.Generator, default=None
        The noise source.  None draws from operating-system entropy; a seed is for reproduction only (anyone who
        knows it can subtract the noise; :meth:`release` drops it).

    Attributes
    ----------
    alpha_ : float
        The regulariser used (``alpha``, or the rule's value for ``"auto"``): public.
    coef_ : ndarray of shape (n_features,)
        f_priv, the release (without the intercept coordinate).
    intercept_ : float
        The released intercept (s times the noisy last coordinate with ``fit_intercept``, else 0.0).
    beta_ : float
        beta, the noise density's rate, calibrated at eps_p / (1 + 2 solver_tol) (public: n, Lambda, eps_p, R).
    sensitivity_ : float
        The L2 sensitivity 2R / (n Lambda) of f* (Corollary 8).
    noise_to_solution_ : float
        The noise's expected norm d / beta over the largest norm f* can have (both public); above 1 a
        :class:`~dpkernels.UtilityWarning` says the release may be mostly noise.
    classes_ : ndarray of shape (2,)
        The public label set; ``predict`` returns ``classes_[1]`` where the decision function is >= 0.
    n_features_in_ : int
        The number of input features.
    guarantee_ : Guarantee
        The privacy statement of the fit (:class:`~dpkernels.mechanisms.base.Guarantee`).
    nonprivate_ : EvaluationState
        The non-private minimiser and the training data (``keep_nonprivate=True`` only; NOT private).

    See Also
    --------
    ObjectivePerturbation : Algorithm 2, usually more accurate at the same eps_p.
    PrivateKernelERM : either algorithm on random features of the Gaussian kernel (Algorithm 3).
    PrivateTuning : a private choice of Lambda (Algorithm 4).

    Notes
    -----
    Privacy: eps_p-differential privacy (delta = 0) for the replace-one neighbouring relation (Definition 2: data
    sets of the same size n differing in one example), Theorem 6.  Released: ``coef_`` and ``intercept_`` (with
    the public constants above).  Assumptions: the labels lie in the public ``classes``; ||x|| <= R for every
    possible input; a convex, differentiable loss with ``|l'| <= 1``; the exact minimiser (the solver certifies
    ||f - f_exact|| <= solver_tol x the sensitivity, else ``fit`` raises ``RuntimeError``; the calibration at
    eps_p / (1 + 2 solver_tol) covers the certified error, so ``guarantee_.epsilon`` is the level that holds).  For
    R != 1 the calibration is our generalisation of the paper's.  The default noise (``noise="lattice"``) is the
    exact rounding of f* + b to a public grid (:mod:`dpkernels.lattice`), so Theorem 6 holds for the released doubles.
    A fitted object holds its parameters, including a seed given as ``random_state``: publish :meth:`release`.

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(300, 3))
    >>> X /= np.maximum(1.0, np.linalg.norm(X, axis=1, keepdims=True))  # each row into the unit ball: no privacy cost
    >>> y = np.where(X[:, 0] + 0.5 * X[:, 1] > 0, 1, 0)
    >>> from dpkernels import OutputPerturbation
    >>> clf = OutputPerturbation(epsilon=1.0, alpha=0.1, classes=[0, 1]).fit(X, y)
    >>> clf.guarantee_.epsilon, clf.guarantee_.delta
    (1.0, 0.0)
    >>> clf.guarantee_.statement
    'Chaudhuri et al. (2011) Theorem 6 / Corollary 8'
    >>> clf.coef_.shape, clf.predict(X[:5]).shape, clf.predict_proba(X[:5]).shape
    ((3,), (5,), (5, 2))
    >>> published = clf.release()  # no seed, no non-private state
    """

    _rule_algorithm = "output"
    _release_attributes: ClassVar[tuple[str, ...]] = ("coef_", "intercept_", "alpha_", "beta_", "sensitivity_",
                                                      "noise_to_solution_")

    def fit(self, X: ArrayLike, y: ArrayLike) -> "OutputPerturbation":
        """Minimise J(f, D) (certified) and release f* + b (Algorithm 1).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            The training rows (the private data).
        y : array-like of shape (n_samples,)
            The labels, in the public set ``classes``.

        Returns
        -------
        self
            The fitted estimator: a release whose ``guarantee_`` states the privacy level that holds.
        """
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
    """Objective perturbation (Chaudhuri et al. 2011, Algorithm 2): f_priv = argmin J(f, D) + b'f/n + Delta||f||^2/2.

    J(f, D) = (1/n) sum_i l(y_i f'x_i) + (Lambda/2)||f||^2 is perturbed by a random linear term, b with density
    proportional to exp(-beta ||b||).  Theorem 9 sets eps' = eps_p - 2 log(1 + c R^2 / (n Lambda)); if eps' > 0,
    Delta = 0 and beta = eps' / (2R), else Delta = c R^2 / (n (e^{eps_p/4} - 1)) - Lambda and beta = eps_p / (4R)
    (:func:`dpkernels.bounds.chaudhuri.theorem_9_parameters`).  The loss's curvature bound c (logistic 1/4,
    Corollary 11; smoothed hinge 3/(4h), Corollary 12; Huber 1/(2h), Corollary 13) enters eps' and Delta.

    Parameters
    ----------
    epsilon : float, default=1.0
        eps_p, the privacy level.
    alpha : float or "auto", default="auto"
        The regulariser (the paper's Lambda) of J(f, D) = (1/n) sum_i l(y_i f'x_i) + (Lambda/2)||f||^2; scikit-learn's (and
        diffprivlib's) C = 1 / (n Lambda).  The noise shrinks as 1 / (n Lambda).  ``"auto"``: the public rule of
        Theorem 18 (:func:`dpkernels.defaults.chaudhuri_lambda`, a function of n, d and epsilon only, times
        ``data_norm`` squared); otherwise choose it without looking at the data, or privately with
        :class:`PrivateTuning`.  The value used is ``alpha_``.
    loss : {"logistic", "huber", "smoothed_hinge"}, default="logistic"
        The loss l (convex, differentiable, ``|l'| <= 1``); ``"logistic"`` also gives ``predict_proba``.
    h : float, default=0.5
        The smoothing width h of the Huber and smoothed hinge losses (the paper's experiments: h = 0.5).
    data_norm : float, default=1.0
        R, a public bound on ||x|| over all possible inputs (the paper: R = 1).  Never read from the data.
    clip : bool, default=False
        Rows with ||x|| > R raise ``ValueError`` (False) or are rescaled onto the ball of radius R with a
        :class:`~dpkernels.ClippingWarning` (True; a per-record map, no privacy cost; prediction clips alike).
    fit_intercept : bool, default=False
        Append a constant feature s = ``intercept_scaling``, penalised like f, so that R becomes sqrt(R^2 + s^2)
        (an unpenalised intercept would break the strong convexity the proofs need).
    intercept_scaling : float, default=1.0
        s, the value of the constant feature (``fit_intercept=True`` only).
    classes : sequence of two labels, "data" or None, default=None
        The public label set (``classes[0]`` maps to -1, ``classes[1]`` to +1).  None: the labels must be -1/+1.
        ``"data"`` reads the label set from the data, explicitly: the fit is then NOT private.
    noise : {"lattice", "continuous"}, default="lattice"
        How the noise is drawn (see Notes); ``"continuous"`` is NOT floating-point safe and warns with
        :class:`~dpkernels.UnsafeNoiseWarning`.
    solver_tol : float, default=1e-3
        With ``noise="continuous"``: the release is refused (``RuntimeError``) unless the solver certifies
        ||f - f_exact|| <= solver_tol x the sensitivity 2R / (n (Lambda + Delta)).  With ``noise="lattice"`` the solve
        is certified to the public gradient target of :mod:`dpkernels.argmin_release` instead; ``solver_tol`` then
        sets only the accuracy of the non-private solve kept with ``keep_nonprivate``.
    tol : float or None, default=None
        A tighter gradient-norm target for the solver with ``noise="continuous"`` (default: what ``solver_tol``
        needs).
    init : array-like of shape (n_features,) or None, default=None
        The solver's starting point (changes the speed, not the release).
    keep_nonprivate : bool, default=False
        Keep the non-private state ``nonprivate_`` for evaluation and audits (:meth:`sample_releases`,
        :meth:`nonprivate_decision_function`); the object is then not a release (:meth:`release` drops it).
    random_state : None, int, SeedSequence or numpy.random.Generator, default=None
        The noise source.  None draws from operating-system entropy; a seed is for reproduction only (anyone who
        knows it can subtract the noise; :meth:`release` drops it).

    Attributes
    ----------
    alpha_ : float
        The regulariser used (``alpha``, or the rule's value for ``"auto"``): public.
    coef_ : ndarray of shape (n_features,)
        f_priv, the release (without the intercept coordinate).
    intercept_ : float
        The released intercept (s times the last coordinate with ``fit_intercept``, else 0.0).
    params_ : ObjectivePerturbationParameters
        Theorem 9's eps', Delta, beta and branch (public constants).
    release_grid_ : float or None
        The spacing of the public grid the smoothed minimiser is exactly rounded to (``noise="lattice"``), else None.
    noise_to_solution_ : float
        The noise's expected effect d / (beta n (Lambda + Delta)) over the largest norm the unperturbed minimiser
        can have (both public); above 1 a :class:`~dpkernels.UtilityWarning` says the release may be mostly noise.
    classes_ : ndarray of shape (2,)
        The public label set; ``predict`` returns ``classes_[1]`` where the decision function is >= 0.
    n_features_in_ : int
        The number of input features.
    guarantee_ : Guarantee
        The privacy statement of the fit (:class:`~dpkernels.mechanisms.base.Guarantee`).
    nonprivate_ : EvaluationState
        The non-private minimiser and the training data (``keep_nonprivate=True`` only; NOT private).

    See Also
    --------
    OutputPerturbation : Algorithm 1 (noise added to the minimiser).
    PrivateKernelERM : either algorithm on random features of the Gaussian kernel (Algorithm 3).
    PrivateTuning : a private choice of Lambda (Algorithm 4).
    dpkernels.argmin_release : the floating-point-safe release of a perturbed minimiser and its delta.

    Notes
    -----
    Privacy: (eps_p, delta)-differential privacy for the replace-one neighbouring relation (Definition 2;
    Definition 3 for the Huber loss), Theorem 9 with Corollaries 11-13.  delta comes from floating point only:
    with ``noise="lattice"`` (the default) the noise b is an exact draw (at a rate beta_r just below Theorem 9's beta)
    enclosed in floating point, the solve is certified to a public gradient target, and the minimiser plus a smoothing
    noise of density ~ exp(-||v|| / s) is exactly rounded to a public grid (:mod:`dpkernels.argmin_release`): the
    certified error eta moves the smoothed release's density by at most e^(2 eta / s), paid for by the noise
    budget beta - beta_r, so eps_p holds, and delta = e^eps_p x the probability that the noise exceeds its 1 - 2^-100
    quantile (then the fit refuses, data-independently): about 1e-30 to 1e-26, stated in ``guarantee_.delta``.  With
    ``noise="continuous"`` (the paper's sampler and a float64 solve) the stated delta is 0 but the release is NOT
    floating-point safe: the float64 argmin identifies the data set it was computed from (for reproducing the
    paper only).  Released: ``coef_`` and ``intercept_`` (with the public constants above).  Assumptions: the labels
    lie in the public ``classes``; ||x|| <= R for every possible input; a convex loss with ``|l'| <= 1`` and
    ``|l''| <= c``.  For R != 1 the calibration is our generalisation of the paper's.  A fitted object holds its
    parameters, including a seed given as ``random_state``: publish :meth:`release`.

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(300, 3))
    >>> X /= np.maximum(1.0, np.linalg.norm(X, axis=1, keepdims=True))  # each row into the unit ball: no privacy cost
    >>> y = np.where(X[:, 0] + 0.5 * X[:, 1] > 0, 1, 0)
    >>> from dpkernels import ObjectivePerturbation
    >>> clf = ObjectivePerturbation(epsilon=1.0, alpha=0.1, classes=[0, 1]).fit(X, y)
    >>> clf.guarantee_.epsilon, clf.guarantee_.delta < 1e-6
    (1.0, True)
    >>> clf.guarantee_.statement
    'Chaudhuri et al. (2011) Theorem 9 / Corollary 11'
    >>> clf.coef_.shape, clf.predict(X[:5]).shape, clf.predict_proba(X[:5]).shape
    ((3,), (5,), (5, 2))
    >>> published = clf.release()  # no seed, no non-private state
    """

    #: One certified solve of about ten passes: converting the (already dense) rows to CSR costs more than its cheaper
    #: passes save (KDDCup99's one-hot rows, 15% non-zero: 1.6-1.8 s against 0.65-0.8 s dense at 484,000 x 87).
    _sparse_design = False
    _release_attributes: ClassVar[tuple[str, ...]] = ("coef_", "intercept_", "alpha_", "params_", "release_grid_",
                                                      "noise_to_solution_")
    _numerics: ClassVar[tuple[str, ...]] = ("exp",)  # the certified argmin (dpkernels.solvers.certify)

    def fit(self, X: ArrayLike, y: ArrayLike) -> "ObjectivePerturbation":
        """Release the minimiser of the perturbed objective (Algorithm 2).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            The training rows (the private data).
        y : array-like of shape (n_samples,)
            The labels, in the public set ``classes``.

        Returns
        -------
        self
            The fitted estimator: a release whose ``guarantee_`` states the privacy level that holds.
        """
        design, loss, epsilon, Lambda, R, rng = self._prepare(X, y)
        n, d = design.shape
        params = theorem_9_parameters(epsilon, n, Lambda, loss.curvature, R)
        w0 = self._init(d)
        if self.noise == "lattice":
            plan = plan_argmin_release(n, d, R, loss, Lambda + params.Delta, params.beta)  # public: the fit's own plan
            delta = plan.delta(epsilon)
            if delta > delta_ceiling(n):  # decided from public constants, before any noise is drawn or data solved
                raise ValueError(f"the floating-point-safe release would state delta = {delta:.3g}, above 1/(10 n) = "
                                 f"{delta_ceiling(n):.3g} (epsilon = {epsilon:g}, n = {n}, d = {d}: public constants); "
                                 "lower "
                                 "epsilon, or use noise='continuous' to reproduce the paper (not a release)")
            f = fp_safe_objective_releases(design, loss, Lambda, params, 1, rng, data_norm=R, center=w0)[0][0]
            self.release_grid_ = plan.grid
            fp_note = (f"floating-point safe (dpkernels.argmin_release): the float64 minimiser for noise drawn at "
                       f"beta_r = {plan.beta_release:.6g} (Theorem 9's beta less eps_fp / (2R), eps_fp = "
                       f"{plan.epsilon_fp:.3g}), certified to ||grad|| <= {plan.gradient_target:.3g} (within "
                       f"eta = {plan.eta:.3g} of the exact minimiser), plus noise of density ~ exp(-||v|| / s), "
                       f"s = {plan.smoothing_scale:.3g}, exactly rounded to the public grid {plan.grid:.3g}: the "
                       "certified error moves the smoothed release's density by at most e^(2 eta / s) <= e^eps_fp, "
                       "so Theorem 9's epsilon holds; delta = e^eps x the probability that the noise exceeds its "
                       "1 - 2^-100 quantile (the fit then refuses)")
        else:
            unit = unit_gamma_noise(1, d, self.noise, rng)
            f = objective_releases(design, loss, Lambda, params, unit, data_norm=R, solver_tol=self.solver_tol,
                                   center=np.zeros(d) if w0 is None else w0, tol=self.tol)[0]
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
            return fp_safe_objective_releases(ev.design, ev.loss, float(self.alpha_), self.params_, int(n_draws), rng,
                                              data_norm=R, center=ev.solution.coef)[0]
        unit = unit_gamma_noise(int(n_draws), ev.design.d, self.noise, rng)
        return objective_releases(ev.design, ev.loss, float(self.alpha_), self.params_, unit, data_norm=R,
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
    """Chaudhuri et al. (2011) Algorithm 3: Algorithm 1 or 2 on random features of the Gaussian kernel.

    The Gaussian kernel exp(-||x - x'||^2 / (2 sigma^2)) (the paper's exp(-gamma ||x - x'||^2), gamma = 1 / (2 sigma^2))
    is approximated by D random features v(x) = sqrt(2/D) cos(w'x + psi) with w ~ N(0, I / sigma^2) and
    psi ~ U[-pi, pi] (the "pre-filter", data-independent), and :class:`OutputPerturbation`
    or :class:`ObjectivePerturbation` is run on v(x).  The paper's features can reach ||v(x)|| = sqrt(2) > 1 (ERRATA
    C1 / E10), which its privacy proofs do not allow: ``feature_scale="unit"`` (default) divides them by sqrt(2);
    ``"paper"`` keeps them and calibrates with R = sqrt(2).  Either way ||v(x)|| is bounded for *every* input, so no
    bound on ||x|| is needed for privacy (Theorem 22's ||x|| <= 1 serves the utility results of Section 5 only): this
    estimator has no ``data_norm`` or ``clip``.

    Parameters
    ----------
    epsilon : float, default=1.0
        eps_p, the privacy level.
    alpha : float or "auto", default="auto"
        The regulariser (the paper's Lambda) of J(f, D) = (1/n) sum_i l(y_i f'v(x_i)) + (Lambda/2)||f||^2 in feature space;
        scikit-learn's C = 1 / (n Lambda).  ``"auto"``: the public rule of Theorem 18 (or 15 for ``algorithm="output"``)
        with d = ``n_components`` features (:func:`dpkernels.defaults.chaudhuri_lambda`), times ``feature_norm_``
        squared; the value used is ``alpha_``.
    algorithm : {"objective", "output"}, default="objective"
        Run Algorithm 2 (:class:`ObjectivePerturbation`) or Algorithm 1 (:class:`OutputPerturbation`) on the features.
    loss : {"logistic", "huber", "smoothed_hinge"}, default="logistic"
        The loss l (convex, differentiable, ``|l'| <= 1``); ``"logistic"`` also gives ``predict_proba``.
    h : float, default=0.5
        The smoothing width h of the Huber and smoothed hinge losses.
    sigma : float, default=sqrt(1/2)
        The kernel width in exp(-||x - x'||^2 / (2 sigma^2)) (public, chosen without the data); the paper's and
        scikit-learn's gamma is 1 / (2 sigma^2) (the default is gamma = 1).
    n_components : int, default=100
        D, the number of random features.
    feature_scale : {"unit", "paper"}, default="unit"
        ``"unit"``: features divided by sqrt(2), so ||v(x)|| <= 1; ``"paper"``: the paper's map, R = sqrt(2).
    classes : sequence of two labels, "data" or None, default=None
        The public label set (``classes[0]`` maps to -1, ``classes[1]`` to +1).  None: the labels must be -1/+1.
        ``"data"`` reads the label set from the data, explicitly: the fit is then NOT private.
    noise : {"lattice", "continuous"}, default="lattice"
        How the noise is drawn (as in :class:`OutputPerturbation` / :class:`ObjectivePerturbation`);
        ``"continuous"`` is NOT floating-point safe and warns.
    solver_tol : float, default=1e-3
        The solver certification passed to the inner estimator.
    keep_nonprivate : bool, default=False
        Keep the inner fit's non-private state as ``nonprivate_`` (evaluation only; the object is then not a release).
    random_state : None, int, SeedSequence or numpy.random.Generator, default=None
        Source of the features (data-independent: drawn from the seed and the input dimension only) and of the
        noise.  None draws from operating-system entropy; a seed is for reproduction only.

    Attributes
    ----------
    alpha_ : float
        The regulariser used (``alpha``, or the rule's value for ``"auto"``): public.
    coef_ : ndarray of shape (n_components,)
        f_priv in feature space, the release.
    frequencies_ : ndarray of shape (n_components, n_features)
        The frequencies w_j (data-independent, released with ``coef_``).
    phases_ : ndarray of shape (n_components,)
        The phases psi_j (data-independent, released with ``coef_``).
    feature_norm_ : float
        The bound on ||v(x)|| used as R (1 or sqrt(2)).
    noise_to_solution_ : float
        The inner algorithm's noise-to-solution ratio (public bounds; see :class:`OutputPerturbation`).
    classes_ : ndarray of shape (2,)
        The public label set; ``predict`` returns ``classes_[1]`` where the decision function is >= 0.
    n_features_in_ : int
        The number of input features.
    guarantee_ : Guarantee
        The privacy statement of the fit (:class:`~dpkernels.mechanisms.base.Guarantee`).
    nonprivate_ : EvaluationState
        The inner fit's non-private minimiser and features (``keep_nonprivate=True`` only; NOT private).

    See Also
    --------
    PrivateSVM : Rubinstein et al.'s random-feature SVM with Laplace noise.
    dpkernels.random_features.RandomFourierFeatures : the feature map (``variant="phase"``).

    Notes
    -----
    Privacy: the inner algorithm's guarantee (eps_p-DP for Algorithm 1; (eps_p, delta)-DP with a floating-point
    delta of about e^eps_p 2^-100 for Algorithm 2, see :class:`ObjectivePerturbation`) for the replace-one neighbouring
    relation, Theorem 22.  Released: ``coef_`` and the frequencies and phases (data-independent, so they cost no
    privacy).  Assumptions: the labels lie in the public ``classes``; the inner algorithm's assumptions with
    R = ``feature_norm_``, which holds for every input.  Publish :meth:`release`, which holds no seed and no
    non-private state.

    Examples
    --------
    >>> import numpy as np
    >>> from dpkernels import PrivateKernelERM
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(300, 3))  # any finite inputs: the features are bounded for every x
    >>> y = np.where(X[:, 0] * X[:, 1] > 0, 1, 0)
    >>> clf = PrivateKernelERM(epsilon=1.0, alpha=0.1, sigma=0.7, n_components=50, classes=[0, 1]).fit(X, y)
    >>> clf.guarantee_.statement
    'Chaudhuri et al. (2011) Theorem 22 (Algorithm 3 with Theorem 9 / Corollary 11)'
    >>> clf.coef_.shape, clf.frequencies_.shape, clf.predict(X[:5]).shape
    ((50,), (50, 3), (5,))
    >>> published = clf.release()
    """

    _release_attributes: ClassVar[tuple[str, ...]] = ("coef_", "frequencies_", "phases_", "feature_norm_", "alpha_",
                                                      "noise_to_solution_")

    def __init__(self, *, epsilon: float = 1.0, alpha: float | str = "auto", algorithm: str = "objective", loss: str = "logistic",
                 h: float = 0.5, sigma: float = math.sqrt(0.5), n_components: int = 100, feature_scale: str = "unit",
                 classes: Sequence[Any] | None = None, noise: str = "lattice", solver_tol: float = 1e-3,
                 keep_nonprivate: bool = False, random_state: object = None) -> None:
        self.epsilon = epsilon
        self.alpha = alpha
        self.algorithm = algorithm
        self.loss = loss
        self.h = h
        self.sigma = sigma
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
        """Draw the random features (data-independent) and run Algorithm 1 or 2 on them (Algorithm 3).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            The training rows (the private data).
        y : array-like of shape (n_samples,)
            The labels, in the public set ``classes``.

        Returns
        -------
        self
            The fitted estimator: a release whose ``guarantee_`` states the privacy level that holds.
        """
        X, _, ypm = _fit_inputs(self, X, y, self.classes)
        check_noise(self.noise)
        if self.algorithm not in ("objective", "output"):
            raise ValueError(f"algorithm must be 'objective' or 'output', got {self.algorithm!r}")
        if self.feature_scale not in ("unit", "paper"):
            raise ValueError(f"feature_scale must be 'unit' or 'paper', got {self.feature_scale!r}")
        if not isinstance(self.n_components, (int, np.integer)) or self.n_components < 1:
            raise ValueError(f"n_components must be a positive integer, got {self.n_components!r}")
        rng = self._noise_rng(X, ypm)
        sigma = check_positive(self.sigma, "sigma")
        rff = RandomFourierFeatures("rbf", sigma, int(self.n_components), variant="phase",
                                    scale_to_unit_ball=self.feature_scale == "unit",
                                    random_state=self._public_rng(X.shape[1])).fit(X)
        self.frequencies_, self.phases_ = rff.frequencies_, rff.phases_
        self.feature_norm_ = rff.max_feature_norm
        cls = ObjectivePerturbation if self.algorithm == "objective" else OutputPerturbation
        inner = cls(epsilon=self.epsilon, alpha=self.alpha, loss=self.loss, h=self.h, data_norm=self.feature_norm_,
                    classes=self.classes, noise=self.noise, solver_tol=self.solver_tol,
                    keep_nonprivate=self.keep_nonprivate, random_state=rng).fit(self._features(X), y)
        self.classes_ = inner.classes_
        self.coef_, self.alpha_, self.noise_to_solution_ = inner.coef_, inner.alpha_, inner.noise_to_solution_
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
        """f_priv'v(x), the released function on the random features of x.

        Post-processing of the release: no further privacy cost.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            The rows to score.

        Returns
        -------
        ndarray of shape (n_samples,)
            The scores; positive values predict ``classes_[1]``.
        """
        return self._features(_predict_inputs(self, X)) @ self.coef_


class PrivateTuning(_ReleaseClassifier):
    """Chaudhuri et al. (2011) Algorithm 4: a private choice of Lambda by the exponential mechanism.

    D is split (by a data-independent random permutation) into m + 1 disjoint parts: m = len(alphas) equal training
    parts and a validation part of ``validation_size`` rows.  Learner i is ``estimator`` with alpha_i (the paper's Lambda_i), trained on
    part i with the whole eps_p; z_i is its number of mistakes on the validation part; index i is drawn with
    probability proportional to exp(-eps_p z_i / 2), exactly (:func:`dpkernels.lattice.exponential_mechanism_exact`).

    Parameters
    ----------
    estimator : OutputPerturbation, ObjectivePerturbation or None, default=None
        The private learner (any estimator taking ``epsilon``, ``alpha`` and ``random_state``); None:
        ``ObjectivePerturbation()``.  Its other parameters (loss, bound, ...) are kept.
    alphas : sequence of float, default=(1e-3, 1e-2, 1e-1)
        The m candidate regularisers (the paper's Lambdas; public: chosen without the data).
    epsilon : float, default=1.0
        eps_p, used by every learner (each on its own part) and by the exponential mechanism.
    validation_size : int or None, default=None
        Rows of the validation part; None: n / (m + 1) (the paper's Figures 4-5 use 25,000).
    classes : sequence of two labels, "data" or None, default=None
        The public label set (``classes[0]`` maps to -1, ``classes[1]`` to +1).  None: the labels must be -1/+1.
        ``"data"`` reads the label set from the data, explicitly: the fit is then NOT private.
    keep_nonprivate : bool, default=False
        Keep the validation mistakes and the unselected models as ``nonprivate_`` (evaluation only; the object is
        then not a release).
    random_state : None, int, SeedSequence or numpy.random.Generator, default=None
        Source of the split (data-independent), the learners' noise and the selection.  None draws from
        operating-system entropy; a seed is for reproduction only.

    Attributes
    ----------
    best_estimator_ : estimator
        The selected private classifier (itself a release).
    selected_ : int
        Its index in ``alphas``.
    alpha_ : float
        Its regulariser (which the model reveals anyway).
    coef_ : ndarray of shape (n_features,)
        ``best_estimator_.coef_``.
    classes_ : ndarray of shape (2,)
        The public label set.
    n_features_in_ : int
        The number of input features.
    guarantee_ : Guarantee
        The privacy statement of the fit (:class:`~dpkernels.mechanisms.base.Guarantee`).
    nonprivate_ : TuningEvaluation
        The candidates' validation mistakes and the m - 1 unselected models (``keep_nonprivate=True`` only; NOT
        private: the counts alone are not).

    See Also
    --------
    OutputPerturbation, ObjectivePerturbation : the learners.

    Notes
    -----
    Privacy: eps_p-differential privacy for the replace-one neighbouring relation, Theorem 26: by parallel
    composition over the disjoint parts (a replaced row changes one learner, or only the validation scores) and the
    exponential mechanism (z_i has sensitivity 1).  The stated (epsilon, delta) is the largest of eps_p and the
    learners' own levels, with their largest delta (the floating-point delta of :class:`ObjectivePerturbation`).
    Released: the selected model, its index and its Lambda; nothing about the other candidates.  Assumptions: the
    candidate alphas and the labels' set ``classes`` are public; each learner's own assumptions.  Publish
    :meth:`release`, which holds no seed and no non-private state.

    Examples
    --------
    >>> import numpy as np
    >>> from dpkernels import ObjectivePerturbation, PrivateTuning
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(400, 3))
    >>> X /= np.maximum(1.0, np.linalg.norm(X, axis=1, keepdims=True))
    >>> y = np.where(X[:, 0] + 0.5 * X[:, 1] > 0, 1, 0)
    >>> tuned = PrivateTuning(ObjectivePerturbation(), alphas=[0.1, 0.3, 1.0], epsilon=1.0, classes=[0, 1]).fit(X, y)
    >>> tuned.guarantee_.statement
    'Chaudhuri et al. (2011) Theorem 26'
    >>> tuned.alpha_ in (0.1, 0.3, 1.0), tuned.predict(X[:5]).shape
    (True, (5,))
    """

    _release_attributes: ClassVar[tuple[str, ...]] = ("best_estimator_", "selected_", "alpha_", "coef_")

    def __init__(self, estimator: BaseEstimator | None = None, alphas: Sequence[float] = (1e-3, 1e-2, 1e-1), *,
                 epsilon: float = 1.0, validation_size: int | None = None, classes: Sequence[Any] | None = None,
                 keep_nonprivate: bool = False, random_state: object = None) -> None:
        self.estimator = estimator
        self.alphas = alphas
        self.epsilon = epsilon
        self.validation_size = validation_size
        self.classes = classes
        self.keep_nonprivate = keep_nonprivate
        self.random_state = random_state

    def fit(self, X: ArrayLike, y: ArrayLike) -> "PrivateTuning":
        """Train one learner per Lambda on disjoint parts and select one privately (Algorithm 4).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            The training rows (the private data).
        y : array-like of shape (n_samples,)
            The labels, in the public set ``classes``.

        Returns
        -------
        self
            The fitted estimator: a release whose ``guarantee_`` states the privacy level that holds.
        """
        X, self.classes_, ypm = _fit_inputs(self, X, y, self.classes)
        y = np.asarray(y)
        epsilon = check_epsilon(self.epsilon)
        rng = self._noise_rng(X, ypm)
        lambdas = [check_positive(lam, "alphas[i]") for lam in self.alphas]
        m = len(lambdas)
        if m < 1:
            raise ValueError("alphas must not be empty")
        base = ObjectivePerturbation() if self.estimator is None else self.estimator
        if not {"epsilon", "alpha", "random_state"} <= set(base.get_params()):
            raise ValueError("estimator must take epsilon, alpha and random_state (a Chaudhuri mechanism)")
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
            est = clone(base).set_params(epsilon=epsilon, alpha=lam, classes=list(self.classes_),
                                         keep_nonprivate=self.keep_nonprivate, random_state=rng)
            est.fit(X[part], y[part])
            est.random_state = None  # the shared generator is not part of any release
            models.append(est)
            mistakes.append(int(np.sum(est.predict(X[val]) != y[val])))
        self.selected_ = lattice.exponential_mechanism_exact(-np.asarray(mistakes, dtype=np.float64), epsilon, 1.0, rng)
        self.best_estimator_ = models[self.selected_]
        self.alpha_ = lambdas[self.selected_]
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
            assumptions=("the candidate alphas do not depend on the private data",
                         "each learner is (eps_i, delta_i)-DP on its part (their guarantees; the maximum is stated)",
                         "mistake counts have sensitivity 1 (one row of the validation part)",
                         f"labels in the public set classes = {self.classes_.tolist()}"),
            attributes=self._release_attributes, noise="exponential mechanism sampled exactly (Gumbel-max over exact reals)",
            notes=self._notes())
        self._void_if_data_derived()
        return self

    def decision_function(self, X: ArrayLike) -> Array:
        """The selected model's decision function.

        Post-processing of the release: no further privacy cost.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            The rows to score.

        Returns
        -------
        ndarray of shape (n_samples,)
            The scores; positive values predict ``classes_[1]``.
        """
        X = _predict_inputs(self, X)
        return self.best_estimator_.decision_function(X)
