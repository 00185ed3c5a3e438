"""Rubinstein, Bartlett, Huang and Taft (2012): PrivateSVM-Finite (Algorithm 2) and PrivateSVM (Algorithm 3).

Both mechanisms solve the SVM primal (1/2)||w||^2 + (C/n) sum_i l(y_i, <w, phi(x_i)>) without a bias
term (the paper's model) and release w-hat = w-tilde + mu with mu i.i.d. Laplace(0, lambda):

* :class:`PrivateSVMFinite`: a finite feature map (the identity by default) with ||phi(x)|| <= kappa;
  lambda = 4 L C kappa sqrt(F) / (epsilon n) (Theorem 10, via Lemma 9's L1 sensitivity).
* :class:`PrivateSVM`: random Fourier features (Eq. 6) of a translation-invariant kernel, so that
  ||phi-hat(x)|| = 1; the release is w-hat and the frequencies rho_1..rho_d-hat;
  lambda = 2^{2.5} L C sqrt(d-hat) / (epsilon n) (Corollary 12).

Guarantee: epsilon-differential privacy (the paper's beta) under the replace-one neighbouring relation,
assuming labels in the public label set ``classes`` (mapped to {-1, +1}), ||phi(x)|| <= kappa for every possible
input, an L-Lipschitz convex loss and the *exact* minimiser.  The solver certifies ||w - w*|| <= eta (see
:mod:`dpkernels.solvers`); fitting refuses to release when eta > solver_tol * (4 L C kappa / n), so the release is
epsilon (1 + 2 solver_tol)-DP in the worst case (:attr:`guarantee_`).

Release hygiene (:class:`~dpkernels.mechanisms.base.ReleaseMixin`).  The Laplace noise is drawn by
:func:`~dpkernels.mechanisms.base.noise_release`: by default (``noise="lattice"``) the continuous mechanism's output
exactly rounded to a public grid (2^-16 lambda), which keeps the guarantee in floating point; ``noise="continuous"``
is the paper's float64 sampler, kept to reproduce the paper and warned about (a floating-point attack tells
neighbours apart, Mironov 2012).  A fitted object holds its parameters, the release (``_release_attributes``) and
scikit-learn's public metadata; the non-private minimiser (``nonprivate_``) and the evaluation helpers
(:meth:`sample_releases`, :meth:`nonprivate_decision_function`) exist only with ``keep_nonprivate=True``.

One class.  The label set is public, so a data set in which only one of the two labels occurs is an ordinary data
set: its SVM minimiser exists and is released with the same noise (no error tells it apart from its neighbours).

Intercept.  The paper has none.  ``fit_intercept=True`` appends a constant feature s =
``intercept_scaling`` to phi (as liblinear does), so the bias is regularised like w and the feature
norm bound becomes kappa' = sqrt(kappa^2 + s^2), which the noise calibration uses.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any, ClassVar

import numpy as np
from numpy.typing import ArrayLike, NDArray
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.utils.extmath import row_norms
from sklearn.utils.multiclass import check_classification_targets, type_of_target
from sklearn.utils.validation import check_is_fitted

from dpkernels._validation import (
    DEFAULT_DATA_NORM,
    MAX_ABS_INPUT,
    check_epsilon,
    check_finite_array,
    check_positive,
    check_row_norms,
    noise_dominance,
    public_bound,
    validate_data,
)
from dpkernels.bounds.rubinstein import corollary_12_noise_scale, lemma_9_sensitivity, theorem_10_noise_scale
from dpkernels.losses import make_loss
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
from dpkernels.random_features import RandomFourierFeatures
from dpkernels.solvers import ERMSolution, solve_erm

__all__ = ["PrivateSVMFinite", "PrivateSVM"]

Array = NDArray[np.float64]


class _OutputPerturbedSVM(ReleaseMixin, ClassifierMixin, BaseEstimator):
    """Shared fit / release logic of Algorithms 2 and 3."""

    _statement = ""
    _released = ""
    #: The release: what predict needs, the calibration (functions of n, C, kappa and the public parameters only)
    #: and the public feature map.  Subclasses extend it.
    _release_attributes: ClassVar[tuple[str, ...]] = (
        "coef_", "intercept_", "noise_scale_", "sensitivity_l1_", "sensitivity_l2_", "kappa_", "noise_to_solution_",
        "alpha_",
    )

    # hooks ------------------------------------------------------------------------------------
    def _fit_features(self, X: Array, rng: np.random.Generator) -> tuple[Array, float]:
        """Return (phi(X), kappa) for the training data."""
        raise NotImplementedError

    def _transform(self, X: Array) -> Array:
        raise NotImplementedError

    def _noise_scale(self, epsilon: float, L: float, C: float, kappa: float, F: int, n: int) -> float:
        return theorem_10_noise_scale(epsilon, L, C, kappa, F, n)

    def __sklearn_tags__(self) -> Any:
        tags = super().__sklearn_tags__()
        tags.classifier_tags.multi_class = False
        tags.input_tags.sparse = True  # densified (dpkernels._validation.check_finite_array)
        return tags

    def _validate(self, X: ArrayLike, reset: bool) -> Array:
        """scikit-learn's checks (feature count and names, dtype) then the mechanisms' input domain: finite entries of
        magnitude at most 1e100, sparse input densified."""
        X = validate_data(self, X, reset=reset, accept_sparse=True, dtype=np.float64, ensure_all_finite=False)
        return check_finite_array(X)

    # estimator API ------------------------------------------------------------------------------
    def fit(self, X: ArrayLike, y: ArrayLike) -> "_OutputPerturbedSVM":
        """Solve the SVM on (X, y) and release w-hat = w-tilde + Laplace noise (see the class docstring).

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
        if y is None:
            raise ValueError(f"{type(self).__name__} requires y to be passed, but the target y is None")
        X = self._validate(X, reset=True)
        y = np.asarray(y)
        if y.ndim == 2 and y.shape[1] == 1:
            from sklearn.utils.validation import column_or_1d

            y = column_or_1d(y, warn=True)
        if isinstance(self.classes, str) and self.classes == "data":  # classes=None: resolve_classes's one text
            check_classification_targets(y)
            if type_of_target(y) == "multiclass":
                raise ValueError("Only binary classification is supported: y has more than two labels (pass the "
                                 "public label set as classes=[a, b])")
        classes, index = resolve_classes(y, self.classes, binary=True, n_samples=X.shape[0])
        y_pm = np.where(index == 1, 1.0, -1.0)
        epsilon = check_epsilon(self.epsilon)
        if isinstance(self.alpha, str):
            if self.alpha != "auto":
                raise ValueError(f"alpha must be a positive float or 'auto', got {self.alpha!r}")
            from dpkernels.defaults import rubinstein_C

            self.alpha_ = 1.0 / rubinstein_C(X.shape[0])  # C = sqrt(n), Remark 1; n is public (replace-one)
        else:
            self.alpha_ = check_positive(self.alpha, "alpha")
        C = 1.0 / self.alpha_  # the paper's C: (1/2)||w||^2 + (C/n) sum l = C J
        solver_tol = check_positive(self.solver_tol, "solver_tol")
        noise = check_noise(self.noise)
        loss = make_loss(self.loss, self.h)
        rng = self._noise_rng(X, y_pm)
        if self.noise_scale is not None:
            check_positive(self.noise_scale, "noise_scale")
        if self.fit_intercept:
            check_positive(self.intercept_scaling, "intercept_scaling")
        Phi, kappa = self._fit_features(X, self._public_rng(X.shape[1]))
        if self.fit_intercept:
            s = float(self.intercept_scaling)
            Phi = np.hstack([Phi, np.full((Phi.shape[0], 1), s)])
            kappa = math.sqrt(kappa**2 + s**2)
        n, F = Phi.shape
        L = loss.lipschitz
        l2, l1 = lemma_9_sensitivity(L, C, kappa, n, F)
        sol = solve_erm(Phi, y_pm, loss, C, distance_tol=solver_tol * l2)
        require_certified(sol.distance_bound, solver_tol * l2)
        # the centre is certified to within solver_tol x the L2 sensitivity, so its L1 sensitivity is at most
        # (1 + 2 solver_tol) x Lemma 9's: calibrate at eps / (1 + 2 solver_tol) so that eps holds
        slack = 1.0 + 2.0 * solver_tol
        lam = self._noise_scale(epsilon / slack, L, C, kappa, F, n) if self.noise_scale is None else float(self.noise_scale)
        w_hat = noise_release(sol.coef, "laplace", lam, noise=noise, random_state=rng)
        self.classes_ = classes
        self.kappa_ = kappa
        self.sensitivity_l1_ = l1
        self.sensitivity_l2_ = l2
        self.noise_scale_ = lam
        self.coef_, self.intercept_ = split_intercept(w_hat, self.fit_intercept, self.intercept_scaling)
        if self.keep_nonprivate:
            self.nonprivate_ = sol
        eps_level = l1 / lam
        # public: E||Laplace(lam)^F||_2 ~ lam sqrt(2F) against ||w*|| <= sqrt(2 C l(0)) (the primal at w = 0)
        self.noise_to_solution_ = noise_dominance(lam * math.sqrt(2.0 * F),
                                                  math.sqrt(2.0 * C * float(np.asarray(loss.value(np.zeros(1)))[0])),
                                                  type(self).__name__)
        self.guarantee_ = Guarantee(
            epsilon=eps_level * slack,
            delta=0.0,
            neighbouring=REPLACE_ONE,
            released=self._released,
            statement=self._statement if self.noise_scale is None else f"{self._statement} with lambda given: epsilon = L1 sensitivity / lambda",
            assumptions=(
                f"labels in the public label set {classes.tolist()} (mapped to -1, +1 in this order); a data set in "
                "which one label is absent is fitted like any other",
                f"||phi(x)||_2 <= kappa = {kappa:.6g} for every possible input x, |x_j| <= {MAX_ABS_INPUT:g}",
                f"loss {loss.name}: convex, {L:g}-Lipschitz in the prediction",
                f"regulariser alpha_ = 1 / C = {self.alpha_:.6g} chosen without the data ("
                + ("C = sqrt(n), n public under replace-one)" if isinstance(self.alpha, str) else "given)"),
                f"the released w-tilde is the exact minimiser: the solver certifies ||w - w*|| <= solver_tol x the L2 "
                f"sensitivity ({solver_tol:g} x {l2:.6g}) or fit refuses to release (RuntimeError)",
            ),
            epsilon_calibrated=eps_level,
            attributes=tuple(a for a in self._release_attributes if hasattr(self, a)),
            noise=f"Laplace(lambda = {lam:.6g}) i.i.d. on the {F} coordinates of w; {noise_description(noise)}",
            notes=self._notes(),
        )
        self._void_if_data_derived()
        return self

    def decision_function(self, X: ArrayLike) -> Array:
        """f-hat(x) = <w-hat, phi(x)> (+ ``intercept_``), the released linear function in feature space.

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
        check_is_fitted(self, "coef_")
        return self._transform(self._validate(X, reset=False)) @ self.coef_ + self.intercept_

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
        check_is_fitted(self, "coef_")
        return self.classes_[(self.decision_function(X) >= 0).astype(np.intp)]

    # evaluation helpers (keep_nonprivate=True only; never release these) ------------------------
    def _require_nonprivate(self, what: str) -> ERMSolution:
        check_is_fitted(self, "coef_")
        if not self.keep_nonprivate:
            raise AttributeError(f"{what} needs the non-private solution: fit with keep_nonprivate=True (evaluation "
                                 "and audits only; such an object is not a release)")
        return self.nonprivate_

    def nonprivate_decision_function(self, X: ArrayLike) -> Array:
        """The non-private SVM f-tilde(x) = <w-tilde, phi(x)> (keep_nonprivate=True; utility measurements only)."""
        w = self._require_nonprivate("nonprivate_decision_function").coef
        Z = self._transform(self._validate(X, reset=False))
        if self.fit_intercept:
            return Z @ w[:-1] + w[-1] * self.intercept_scaling
        return Z @ w

    def sample_releases(self, n_draws: int, random_state: object = None, epsilon: float | None = None,
                        noise_scale: float | None = None) -> Array:
        """``n_draws`` further releases w-tilde + mu from the kept non-private solution (keep_nonprivate=True; audits,
        Monte Carlo), drawn exactly as :meth:`fit` draws its release (same noise mode).

        Each row is distributed as the released vector of a fresh :meth:`fit` (including the intercept component
        when ``fit_intercept``); the solve is not repeated.  With ``epsilon`` the noise is recalibrated to that
        level (lambda scales as 1/epsilon), so one solve serves a whole privacy sweep; with ``noise_scale`` the
        noise has that lambda whatever it guarantees (utility sweeps, audits' negative controls).
        """
        w = self._require_nonprivate("sample_releases").coef
        lam = self.noise_scale_
        if epsilon is not None and noise_scale is not None:
            raise ValueError("give epsilon or noise_scale, not both")
        if epsilon is not None:
            if self.noise_scale is not None:
                raise ValueError("epsilon cannot recalibrate an explicitly given noise_scale")
            lam = self.sensitivity_l1_ / check_epsilon(epsilon)
        if noise_scale is not None:
            lam = check_positive(noise_scale, "noise_scale")
        center = np.broadcast_to(w, (int(n_draws), w.shape[0]))
        return noise_release(center, "laplace", lam, noise=self.noise, random_state=random_state)


class PrivateSVMFinite(_OutputPerturbedSVM):
    """PrivateSVM-Finite (Rubinstein et al. 2012, Algorithm 2): Laplace output perturbation of the linear SVM.

    Solves the primal (1/2)||w||^2 + (C/n) sum_i l(y_i, <w, phi(x_i)>) in a finite feature space phi (the identity
    by default), without a bias term (the paper's model), and releases w-hat = w-tilde + mu with mu i.i.d.
    Laplace(0, lambda) on the F coordinates, lambda = 4 L C kappa sqrt(F) / (epsilon n) (Theorem 10, from Lemma 9's L1
    sensitivity of the minimiser).

    Parameters
    ----------
    epsilon : float, default=1.0
        The privacy level epsilon (the paper's beta); the guarantee is pure epsilon-DP (delta = 0).
    alpha : float or "auto", default="auto"
        The regulariser of J = (1/n) sum_i l + (alpha / 2)||w||^2, i.e. 1 / C for the paper's soft-margin C of
        (1/2)||w||^2 + (C/n) sum_i l (scikit-learn's ``SVC`` would take C / n).  The noise scale lambda grows as
        1 / alpha.  ``"auto"``: 1 / sqrt(n), the paper's C = sqrt(n)
        (Remark 1, :func:`dpkernels.defaults.rubinstein_C`; n is public under replace-one); the value used is
        ``alpha_``.
    loss : {"hinge", "huber", "logistic", "smoothed_hinge"}, default="hinge"
        The convex loss l; all four are 1-Lipschitz (L = 1).
    h : float, default=0.5
        The smoothing width h of the Huber and smoothed hinge losses (ignored by the others).
    feature_map : None, fitted transformer or callable, default=None
        phi.  None: phi(x) = x.  A fitted transformer with ``transform`` and ``max_feature_norm`` (such as
        :class:`~dpkernels.random_features.RandomFourierFeatures`) supplies its own bound kappa.  Any other callable
        needs ``data_norm``.  The map is public: fitted on public data or data-independent.
    data_norm : float, "data" or None, default=None
        kappa, a public bound on ||phi(x)||_2 over *all possible* inputs.  None: the feature map's own bound
        (``max_feature_norm``) when it has one, else 1 (a documented public default: scale or clip the rows).
        ``"data"`` reads it from the data, explicitly: the fit is then NOT private (``guarantee_.private`` is False,
        epsilon infinite).
    clip : bool, default=False
        Rows with ||phi(x)|| > kappa raise ``ValueError`` (False) or are rescaled onto the ball of radius kappa with
        a :class:`~dpkernels.ClippingWarning` (True; a per-record map, no privacy cost; ``predict`` clips alike).
    fit_intercept : bool, default=False
        Append a constant feature s = ``intercept_scaling`` to phi (as liblinear does): the bias is regularised like
        w, and the norm bound used by the calibration becomes kappa' = sqrt(kappa^2 + s^2).  The paper has none.
    intercept_scaling : float, default=1.0
        s, the value of the constant feature (``fit_intercept=True`` only).
    noise_scale : float or None, default=None
        lambda.  None: Theorem 10's lambda for ``epsilon``.  A given lambda is used as is and the guarantee states
        what it buys: epsilon = Delta_1 / lambda (Delta_1 = ``sensitivity_l1_``).
    solver_tol : float, default=1e-3
        The largest certified solver error ||w - w*||, relative to the L2 sensitivity, accepted before release; the
        noise is calibrated at epsilon / (1 + 2 solver_tol) so that ``epsilon`` holds for the certified minimiser.
    classes : sequence of two labels, "data" or None, default=None
        The public label set (``classes[0]`` plays -1, ``classes[1]`` plays +1).  None: the labels must be -1/+1.
        ``"data"`` reads the label set from the data, explicitly: the fit is then NOT private.
    noise : {"lattice", "continuous"}, default="lattice"
        How the Laplace noise is drawn: ``"lattice"`` is the continuous mechanism's output exactly rounded to a public
        grid (floating-point safe); ``"continuous"`` is the paper's float64 sampler (NOT floating-point safe; for
        reproducing the paper's numbers; warns with :class:`~dpkernels.UnsafeNoiseWarning`).
    keep_nonprivate : bool, default=False
        Keep the non-private minimiser as ``nonprivate_`` for evaluation and audits (:meth:`sample_releases`,
        :meth:`nonprivate_decision_function`); the object is then not a release (:meth:`release` drops it).
    random_state : None, int, SeedSequence or numpy.random.Generator, default=None
        Source of the Laplace noise.  None draws from operating-system entropy; a seed is for reproduction only
        (anyone who knows it can subtract the noise; :meth:`release` drops it).

    Attributes
    ----------
    alpha_ : float
        The regulariser used (``alpha``, or 1 / sqrt(n) for ``"auto"``): public.
    coef_ : ndarray of shape (n_features_out,)
        w-hat, the release (n_features_out is the dimension of phi; without the intercept coordinate).
    intercept_ : float
        The released intercept (s times the noisy last coordinate with ``fit_intercept``, else 0.0).
    noise_scale_ : float
        lambda, the Laplace scale used.
    sensitivity_l1_ : float
        Lemma 9's L1 sensitivity 4 L C kappa' sqrt(F) / n of the minimiser (F coordinates, intercept included).
    sensitivity_l2_ : float
        Lemma 9's L2 sensitivity 4 L C kappa' / n.
    kappa_ : float
        kappa', the norm bound used by the calibration (with the intercept feature).
    feature_kappa_ : float
        kappa, the bound on ||phi(x)|| (the clipping radius of ``predict`` with ``clip=True``).
    noise_to_solution_ : float
        The noise's expected norm over the largest norm the non-private solution can have (both public); above 1 a
        :class:`~dpkernels.UtilityWarning` says the release may be mostly noise.
    classes_ : ndarray of shape (2,)
        The public label set; ``predict`` returns ``classes_[1]`` where the decision function is >= 0.
    n_features_in_ : int
        The number of input features.
    guarantee_ : Guarantee
        The privacy statement of the fit (:class:`~dpkernels.mechanisms.base.Guarantee`).
    nonprivate_ : ERMSolution
        The certified non-private minimiser (``keep_nonprivate=True`` only; NOT private).

    See Also
    --------
    PrivateSVM : the same mechanism on random Fourier features of a translation-invariant kernel (Algorithm 3).
    OutputPerturbation : Chaudhuri et al.'s output perturbation (noise with a Gamma-distributed norm).

    Notes
    -----
    Privacy: epsilon-differential privacy (delta = 0) for the replace-one neighbouring relation (two data sets of
    the same size n differing in one example), Theorem 10.  Released: ``coef_`` and ``intercept_`` (with the public
    constants listed above); the feature map is public.  Assumptions: the labels lie in the public ``classes``
    (a data set in which one label is absent is fitted like any other); ||phi(x)|| <= kappa for every possible input;
    an L-Lipschitz convex loss; the exact minimiser (the solver certifies ||w - w*|| <= solver_tol x the L2
    sensitivity, else ``fit`` raises ``RuntimeError`` rather than release).  The default noise is floating-point
    safe (exact rounding to a grid of 2^-16 lambda, :mod:`dpkernels.lattice`).  A fitted object holds its parameters,
    including a seed given as ``random_state``: publish :meth:`release`, which holds no seed and no non-private state.

    Examples
    --------
    >>> import numpy as np
    >>> from dpkernels import PrivateSVMFinite
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(300, 3))
    >>> X /= np.maximum(1.0, np.linalg.norm(X, axis=1, keepdims=True))  # each row into the unit ball: no privacy cost
    >>> y = np.where(X[:, 0] + 0.5 * X[:, 1] > 0, 1, 0)
    >>> svm = PrivateSVMFinite(epsilon=1.0, alpha=1.0, data_norm=1.0, classes=[0, 1]).fit(X, y)
    >>> round(svm.guarantee_.epsilon, 6), svm.guarantee_.delta
    (1.0, 0.0)
    >>> svm.guarantee_.statement
    'Rubinstein et al. (2012) Theorem 10'
    >>> svm.coef_.shape, svm.predict(X[:5]).shape
    ((3,), (5,))
    >>> published = svm.release()  # no seed, no non-private state
    """

    _statement = "Rubinstein et al. (2012) Theorem 10"
    _released = "w-hat = w-tilde + Laplace(lambda)^F (the feature map is public)"
    _release_attributes = _OutputPerturbedSVM._release_attributes + ("feature_kappa_",)

    def __init__(
        self,
        *,
        epsilon: float = 1.0,
        alpha: float | str = "auto",
        loss: str = "hinge",
        h: float = 0.5,
        feature_map: object = None,
        data_norm: float | None = None,
        clip: bool = False,
        fit_intercept: bool = False,
        intercept_scaling: float = 1.0,
        noise_scale: float | None = None,
        solver_tol: float = 1e-3,
        classes: object = None,
        noise: str = "lattice",
        keep_nonprivate: bool = False,
        random_state: object = None,
    ) -> None:
        self.epsilon = epsilon
        self.alpha = alpha
        self.loss = loss
        self.h = h
        self.feature_map = feature_map
        self.data_norm = data_norm
        self.clip = clip
        self.fit_intercept = fit_intercept
        self.intercept_scaling = intercept_scaling
        self.noise_scale = noise_scale
        self.solver_tol = solver_tol
        self.classes = classes
        self.noise = noise
        self.keep_nonprivate = keep_nonprivate
        self.random_state = random_state

    def _map(self) -> Callable[[Array], Array]:
        fm = self.feature_map
        if fm is None:
            return lambda X: X
        if hasattr(fm, "transform"):
            return fm.transform
        if callable(fm):
            return fm
        raise ValueError("feature_map must be None, a fitted transformer or a callable")

    def _fit_features(self, X: Array, rng: np.random.Generator) -> tuple[Array, float]:
        fm_state = getattr(self.feature_map, "random_state", None)
        if isinstance(fm_state, np.random.Generator) and fm_state is self.random_state:
            raise ValueError("feature_map holds the generator that draws the noise (random_state): a pickle of this "
                             "estimator (its parameters) would carry the generator's state, from which the noise can be "
                             "rewound; fit the feature map with its own generator or set its random_state to None")
        Phi = np.asarray(self._map()(X), dtype=np.float64)
        if Phi.ndim != 2 or len(Phi) != len(X):
            raise ValueError(f"phi(X) must be a 2-d array with one row per example, got shape {Phi.shape}")
        norms = row_norms(Phi)
        if not np.all(np.isfinite(norms)):  # a non-finite entry makes its row's norm non-finite
            raise ValueError("phi(X) contains NaN or infinite values; the privacy analysis needs finite inputs")
        if self.data_norm is None:
            own = getattr(self.feature_map, "max_feature_norm", None) if self.feature_map is not None else None
            kappa = float(own) if own is not None else DEFAULT_DATA_NORM
        else:
            kappa, _ = public_bound(self.data_norm, norms)
        Phi = check_row_norms(Phi, kappa, clip=self.clip, what=f"feature norms ||phi(x)|| (data_norm = {kappa:g})",
                              norms=norms)
        self.feature_kappa_ = kappa
        return Phi, kappa

    def _transform(self, X: Array) -> Array:
        Phi = self._map()(X)
        if self.clip:  # the same per-record clipping as in fit
            Phi = Phi / np.maximum(row_norms(Phi) / self.feature_kappa_, 1.0)[:, None]
        return Phi


class PrivateSVM(_OutputPerturbedSVM):
    """PrivateSVM (Rubinstein et al. 2012, Algorithm 3): the SVM on random Fourier features, Laplace output noise.

    The SVM primal (1/2)||w||^2 + (C/n) sum_i l(y_i, <w, phi-hat(x_i)>) on d-hat random Fourier features of a
    translation-invariant kernel (Eq. 6: phi-hat(x) = d-hat^{-1/2} [cos<rho_t, x>, sin<rho_t, x>]_t, so that
    ||phi-hat(x)|| = 1 for every x), without a bias term, released as w-hat = w-tilde + mu, mu i.i.d. Laplace(0, lambda)
    with lambda = 2^{2.5} L C sqrt(d-hat) / (epsilon n) (Corollary 12), together with the frequencies rho_1..rho_d-hat.

    Parameters
    ----------
    epsilon : float, default=1.0
        The privacy level epsilon (the paper's beta); the guarantee is pure epsilon-DP (delta = 0).
    alpha : float or "auto", default="auto"
        The regulariser of J = (1/n) sum_i l + (alpha / 2)||w||^2, i.e. 1 / C for the paper's soft-margin C of
        (1/2)||w||^2 + (C/n) sum_i l.  The noise scale lambda grows as 1 / alpha.  ``"auto"``: 1 / sqrt(n), the paper's C = sqrt(n)
        (Remark 1, :func:`dpkernels.defaults.rubinstein_C`; n is public under replace-one); the value used is
        ``alpha_``.
    kernel : {"rbf", "laplacian", "cauchy"}, default="rbf"
        The translation-invariant kernel (the paper's Table 2, normalised so that k(x, x) = 1).
    sigma : float, default=1.0
        The kernel width sigma (RBF: exp(-||x - x'||^2 / (2 sigma^2))); public, chosen without the data.
    n_components : int, default=100
        d-hat, the number of frequencies (2 d-hat features); lambda grows as sqrt(d-hat).
    loss : {"hinge", "huber", "logistic", "smoothed_hinge"}, default="hinge"
        The convex loss l; all four are 1-Lipschitz (L = 1).
    h : float, default=0.5
        The smoothing width h of the Huber and smoothed hinge losses (ignored by the others).
    fit_intercept : bool, default=False
        Append a constant feature s = ``intercept_scaling``; the norm bound becomes sqrt(1 + s^2) and the noise
        scale falls back to Theorem 10's (the paper has no intercept).
    intercept_scaling : float, default=1.0
        s, the value of the constant feature (``fit_intercept=True`` only).
    noise_scale : float or None, default=None
        lambda.  None: Corollary 12's lambda for ``epsilon``.  A given lambda is used as is and the guarantee states
        what it buys: epsilon = Delta_1 / lambda.
    solver_tol : float, default=1e-3
        The largest certified solver error ||w - w*||, relative to the L2 sensitivity, accepted before release; the
        noise is calibrated at epsilon / (1 + 2 solver_tol).
    classes : sequence of two labels, "data" or None, default=None
        The public label set (``classes[0]`` plays -1, ``classes[1]`` plays +1).  None: the labels must be -1/+1.
        ``"data"`` reads the label set from the data, explicitly: the fit is then NOT private.
    noise : {"lattice", "continuous"}, default="lattice"
        How the Laplace noise is drawn: exactly rounded to a public grid (floating-point safe) or the paper's float64
        sampler (NOT floating-point safe; warns).
    keep_nonprivate : bool, default=False
        Keep the non-private minimiser as ``nonprivate_`` for evaluation and audits; the object is then not a release.
    random_state : None, int, SeedSequence or numpy.random.Generator, default=None
        Source of the frequencies (data-independent: drawn from the seed and the input dimension only) and of the
        noise.  None draws from operating-system entropy; a seed is for reproduction only.

    Attributes
    ----------
    alpha_ : float
        The regulariser used (``alpha``, or 1 / sqrt(n) for ``"auto"``): public.
    coef_ : ndarray of shape (2 * n_components,)
        w-hat in R^{2 d-hat}, the release.
    intercept_ : float
        The released intercept (0.0 unless ``fit_intercept``).
    frequencies_ : ndarray of shape (n_components, n_features)
        rho_1..rho_d-hat, released with ``coef_`` (data-independent).
    rff_ : RandomFourierFeatures
        The fitted feature map phi-hat (its frequencies and kernel; no generator).
    noise_scale_ : float
        lambda, the Laplace scale used.
    sensitivity_l1_ : float
        Lemma 9's L1 sensitivity 4 L C kappa sqrt(F) / n (kappa = 1, F = 2 d-hat; with the intercept feature if any).
    sensitivity_l2_ : float
        Lemma 9's L2 sensitivity 4 L C kappa / n.
    kappa_ : float
        The norm bound used by the calibration (1, or sqrt(1 + s^2) with the intercept).
    noise_to_solution_ : float
        The noise's expected norm over the largest norm the non-private solution can have (both public); above 1 a
        :class:`~dpkernels.UtilityWarning` says the release may be mostly noise.
    classes_ : ndarray of shape (2,)
        The public label set; ``predict`` returns ``classes_[1]`` where the decision function is >= 0.
    n_features_in_ : int
        The number of input features.
    guarantee_ : Guarantee
        The privacy statement of the fit (:class:`~dpkernels.mechanisms.base.Guarantee`).
    nonprivate_ : ERMSolution
        The certified non-private minimiser (``keep_nonprivate=True`` only; NOT private).

    See Also
    --------
    PrivateSVMFinite : the same mechanism in a finite feature space (Algorithm 2).
    PrivateKernelERM : Chaudhuri et al.'s Algorithm 3 on random features.

    Notes
    -----
    Privacy: epsilon-differential privacy (delta = 0) for the replace-one neighbouring relation, Corollary 12
    (Theorem 10 with F = 2 d-hat and kappa = 1).  Released: ``coef_``, ``intercept_`` and the frequencies
    ``frequencies_`` (data-independent, so they cost no privacy).  No bound on the inputs is needed:
    ||phi-hat(x)|| = 1 for every x.  Assumptions: the labels lie in the public ``classes``; a 1-Lipschitz convex loss;
    the exact minimiser (certified to within ``solver_tol`` x the L2 sensitivity, else ``fit`` raises
    ``RuntimeError``).  The default noise is floating-point safe (:mod:`dpkernels.lattice`).  Publish
    :meth:`release`, which holds no seed and no non-private state.

    Examples
    --------
    >>> import numpy as np
    >>> from dpkernels import PrivateSVM
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(300, 3))
    >>> y = np.where(X[:, 0] + 0.5 * X[:, 1] > 0, 1, 0)
    >>> svm = PrivateSVM(epsilon=1.0, alpha=1.0, sigma=1.0, n_components=20, classes=[0, 1]).fit(X, y)
    >>> round(svm.guarantee_.epsilon, 6), svm.guarantee_.statement
    (1.0, 'Rubinstein et al. (2012) Corollary 12')
    >>> svm.coef_.shape, svm.frequencies_.shape, svm.predict(X[:5]).shape
    ((40,), (20, 3), (5,))
    >>> published = svm.release()  # what to publish: coef_, frequencies_ and the public constants
    """

    _statement = "Rubinstein et al. (2012) Corollary 12"
    _released = "w-hat = w-tilde + Laplace(lambda)^{2 d-hat} and the frequencies rho_1..rho_d-hat (data-independent)"
    _release_attributes = _OutputPerturbedSVM._release_attributes + ("frequencies_", "rff_")

    def __init__(
        self,
        *,
        epsilon: float = 1.0,
        alpha: float | str = "auto",
        kernel: str = "rbf",
        sigma: float = 1.0,
        n_components: int = 100,
        loss: str = "hinge",
        h: float = 0.5,
        fit_intercept: bool = False,
        intercept_scaling: float = 1.0,
        noise_scale: float | None = None,
        solver_tol: float = 1e-3,
        classes: object = None,
        noise: str = "lattice",
        keep_nonprivate: bool = False,
        random_state: object = None,
    ) -> None:
        self.epsilon = epsilon
        self.alpha = alpha
        self.kernel = kernel
        self.sigma = sigma
        self.n_components = n_components
        self.loss = loss
        self.h = h
        self.fit_intercept = fit_intercept
        self.intercept_scaling = intercept_scaling
        self.noise_scale = noise_scale
        self.solver_tol = solver_tol
        self.classes = classes
        self.noise = noise
        self.keep_nonprivate = keep_nonprivate
        self.random_state = random_state

    def _fit_features(self, X: Array, rng: np.random.Generator) -> tuple[Array, float]:
        rff = RandomFourierFeatures(self.kernel, self.sigma, self.n_components, random_state=rng).fit(X)
        rff.set_params(random_state=None)  # the release must not hold the generator that draws the noise
        self.rff_ = rff
        self.frequencies_ = rff.frequencies_
        return rff.transform(X), 1.0

    def _transform(self, X: Array) -> Array:
        return self.rff_.transform(X)

    def _noise_scale(self, epsilon: float, L: float, C: float, kappa: float, F: int, n: int) -> float:
        if self.fit_intercept:  # the constant feature changes kappa: fall back to Theorem 10
            return theorem_10_noise_scale(epsilon, L, C, kappa, F, n)
        return corollary_12_noise_scale(epsilon, L, C, int(self.n_components), n)
