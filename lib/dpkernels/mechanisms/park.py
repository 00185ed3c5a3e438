"""Park (2022): differentially private SVDD and multi-class classification with equilibrium points.

* :class:`PrivateSVDD` (Algorithm 1): the SVDD centre a* = Phi' beta* in the random Fourier feature space of
  the RBF kernel exp(-||x - y||^2 / (2 sigma^2)) (Eq. 4.5 with gamma = 1 / (2 sigma^2), F features), plus i.i.d. Laplace(lambda) noise with
  lambda = 2 C kappa sqrt(F) / (n eps) (Corollary 4.2, Theorem 4.3; C/n is the dual box bound, Table 7.1's
  "C/n"), then clipped to norm kappa = 1 (post-processing).
* :func:`find_equilibrium_points` (Phase II): gradient dynamics dx/dt = -grad f-hat(x) on the private support
  function f-hat(x) = ||phi(x) - a-hat||^2 (Eq. 5.2), learning-rate decay by 1/5 after 80% of the iterations,
  converged points merged on a grid of side ``merge_tol``.
* :class:`EquilibriumPointClassifier` (Phases I-III): basins labelled by noisy majority votes (Eq. 5.5),
  hypercubes of side r_max for d > 2 (Eq. 5.6), and the two releases of Section 6 (the support function with
  labelled equilibrium points; equilibrium points with kNN inference).

Privacy (replace-one neighbours).  ``variant="corrected"`` (the default) starts the dynamics from
data-independent points (a uniform sample of the public ``domain``), so the equilibrium points are
post-processing of a-hat, and labels *every* cell from the whole (cell x class) histogram with Laplace(2/eps_vote)
noise (a replaced row lowers one count and raises another: L1 sensitivity 2): eps_svdd + eps_vote in total, for a
public label set ``classes``.  ``variant="paper"`` runs the dynamics from the training points, as the thesis
does: the released equilibrium points then sit next to training points without any noise and only occupied
cells are labelled, so the release is **not** differentially private whatever eps is (ERRATA P3); its votes add
Laplace(1/eps_vote) per count, 2 eps_vote-DP under replacement (P4).  Fitting it warns.

Releases.  Every noisy value goes through :func:`~dpkernels.mechanisms.base.noise_release`: by default exactly
rounded to a grid (:mod:`dpkernels.lattice`, floating-point safe at no privacy cost); ``noise="continuous"`` is
the thesis's float64 sampler, kept to reproduce its numbers, and warns.
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy.spatial import cKDTree
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_is_fitted

from dpkernels._validation import (
    PrivacyLeakWarning,
    check_epsilon,
    check_finite_array,
    check_positive,
    check_random_state,
    validate_data,
)
from dpkernels.mechanisms.base import (
    REPLACE_ONE,
    Guarantee,
    ReleaseMixin,
    check_noise,
    noise_description,
    noise_release,
    randomness_note,
    require_certified,
    resolve_classes,
    settle,
)
from dpkernels.random_features import RandomFourierFeatures, rff_paired
from dpkernels.solvers import ERMSolution, solve_svdd

__all__ = [
    "PrivateSVDD",
    "EquilibriumPoints",
    "run_dynamics",
    "find_equilibrium_points",
    "cells_of",
    "nearest",
    "EquilibriumPointClassifier",
    "EPCNonprivate",
    "corollary_4_2_sensitivity",
    "VARIANTS",
]

Array = NDArray[np.float64]
VARIANTS = ("corrected", "paper")
#: Rows per block of the dynamics' gradient (the (rows x D) temporaries stay in cache).
_GRADIENT_BLOCK = 1024


def corollary_4_2_sensitivity(box: float, F: int, kappa: float = 1.0) -> tuple[float, float]:
    """Corollary 4.2: ||a_D - a_D'||_F <= 2 C kappa / n (L2) and ||.||_1 <= 2 C kappa sqrt(F) / n, with C/n = ``box``."""
    l2 = 2.0 * box * kappa
    return l2, l2 * math.sqrt(F)


def _validate_X(est: BaseEstimator, X: ArrayLike, reset: bool) -> Array:
    """scikit-learn's validation (sparse accepted and densified, NaN/inf refused with its messages), then the
    mechanisms' input-domain check (entries above 1e100 in magnitude are refused)."""
    X = validate_data(est, X, reset=reset, accept_sparse=True, dtype=np.float64)
    return check_finite_array(X)


class PrivateSVDD(ReleaseMixin, BaseEstimator):
    """Park (2022) Algorithm 1 (private SVDD): Laplace perturbation of the SVDD centre in a random feature space.

    The support vector data description's centre a* = Phi' beta* in the random Fourier feature space of the RBF
    kernel exp(-||x - y||^2 / (2 sigma^2)) (Eq. 4.5, gamma = 1 / (2 sigma^2), F = 2 ``n_components`` features), plus i.i.d. Laplace(lambda) noise with
    lambda = 2 C kappa sqrt(F) / (n eps) (Corollary 4.2, Theorem 4.3; C/n = ``box`` is the dual box bound), then
    clipped to norm kappa = 1 (post-processing).  The support function f-hat(x) = ||phi(x) - a-hat||^2 (Eq. 4.6)
    describes the data's support: :meth:`score_samples` is -f-hat (higher: closer to the centre, as scikit-learn's
    outlier detectors), :meth:`score` its mean, which compares models of one feature map (fixed sigma and
    n_components), e.g. in a ``GridSearchCV`` over ``box`` or ``epsilon``; tuning on private data spends privacy
    (each candidate fit is a release).

    Parameters
    ----------
    epsilon : float or None, default=1.0
        The privacy level of the centre; None releases the non-private centre (a baseline: the guarantee says NOT
        PRIVATE).
    box : float, default=0.05
        C/n, the dual box bound (Table 7.1's "C/n"); needs n * box >= 1.  The noise grows linearly in it.
    sigma : float, default=sqrt(1/2)
        The RBF kernel's width in exp(-||x - y||^2 / (2 sigma^2)) (public, chosen without the data); the thesis's
        gamma is 1 / (2 sigma^2) (the default is gamma = 1).
    n_components : int, default=200
        The number of frequencies; F = 2 n_components features (Park: F = 400).
    clip_center : bool, default=True
        Clip the noisy centre to norm kappa = 1 (post-processing; the thesis does).
    noise : {"lattice", "continuous"}, default="lattice"
        ``"lattice"``: the Laplace noise exactly rounded to a public grid (floating-point safe); ``"continuous"``:
        the thesis's float64 sampler (NOT floating-point safe; warns).
    solver_tol : float, default=1e-3
        The release is refused (``RuntimeError``) unless the solver certifies ||a - a*|| <= solver_tol x the L2
        sensitivity; the noise is calibrated at eps / (1 + 2 solver_tol).
    keep_nonprivate : bool, default=False
        Keep the non-private solution as ``nonprivate_`` for evaluation and audits (:meth:`sample_centers`,
        :meth:`resample`); the object is then not a release.
    random_state : None, int, SeedSequence or numpy.random.Generator, default=None
        Source of the frequencies (data-independent: drawn from the seed and the input dimension only) and of the
        noise.  None draws from operating-system entropy; a seed is for reproduction only.

    Attributes
    ----------
    center_ : ndarray of shape (2 * n_components,)
        a-hat, the released centre (clipped to norm 1 with ``clip_center``).
    frequencies_ : ndarray of shape (n_components, n_features)
        The frequencies of the feature map (data-independent, released with ``center_``).
    noise_scale_ : float or None
        lambda, the Laplace scale used (None with ``epsilon=None``).
    n_features_in_ : int
        The number of input features.
    guarantee_ : Guarantee
        The privacy statement of the fit (:class:`~dpkernels.mechanisms.base.Guarantee`).
    nonprivate_ : ERMSolution
        The certified non-private SVDD solution (``keep_nonprivate=True`` only; NOT private).

    See Also
    --------
    EquilibriumPointClassifier : Park's multi-class classifier built on this release.

    Notes
    -----
    Privacy: epsilon-differential privacy (delta = 0) for the replace-one neighbouring relation, Theorem 4.3.
    Released: ``center_`` and the data-independent ``frequencies_``.  Assumptions: the RBF kernel (||phi(x)|| = 1
    for every x, so no bound on the inputs is needed); Corollary 4.2's sensitivity; the exact minimiser (certified
    to within ``solver_tol`` x the sensitivity, folded into the calibration, else the release is refused).  The
    default noise is floating-point safe (:mod:`dpkernels.lattice`).  Publish :meth:`release`, which holds no seed
    and no non-private state.

    Examples
    --------
    >>> import numpy as np
    >>> from dpkernels import PrivateSVDD
    >>> X = np.random.default_rng(0).uniform(size=(200, 2))
    >>> svdd = PrivateSVDD(epsilon=1.0, box=0.05, sigma=0.3, n_components=50).fit(X)
    >>> svdd.guarantee_.epsilon, svdd.guarantee_.statement
    (1.0, 'Park (2022) Theorem 4.3')
    >>> svdd.center_.shape, svdd.score_samples(X[:5]).shape
    ((100,), (5,))
    """

    _release_attributes = ("center_", "frequencies_", "noise_scale_")

    def __init__(self, *, epsilon: float | None = 1.0, box: float = 0.05, sigma: float = math.sqrt(0.5), n_components: int = 200,
                 clip_center: bool = True, noise: str = "lattice", solver_tol: float = 1e-3, keep_nonprivate: bool = False,
                 random_state: object = None) -> None:
        self.epsilon = epsilon
        self.box = box
        self.sigma = sigma
        self.n_components = n_components
        self.clip_center = clip_center
        self.noise = noise
        self.solver_tol = solver_tol
        self.keep_nonprivate = keep_nonprivate
        self.random_state = random_state

    def __sklearn_tags__(self) -> Any:
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        tags.non_deterministic = self.random_state is None
        return tags

    # fitting -----------------------------------------------------------------------------------
    def _randomness(self, inherited: str | None = None) -> str:
        """A fitted SVDD whose guarantee states seeded noise while its ``random_state`` is None (an export of a seeded
        fit, or :meth:`resample` with a seed) stays a reproduction, also as a classifier's given ``svdd``: the base rule
        reads ``random_state`` alone, and a wrapper would otherwise pass its own randomness down to it."""
        g = getattr(self, "guarantee_", None)
        if self.random_state is None and g is not None and g.randomness == "seed":
            return "seed"
        return super()._randomness(inherited)

    def fit(self, X: ArrayLike, y: object = None) -> "PrivateSVDD":
        """Solve the SVDD (certified) and release the noisy centre (Algorithm 1).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            The rows (the private data).
        y : None
            Ignored.

        Returns
        -------
        self
            The fitted release; its ``guarantee_`` states the privacy level that holds.
        """
        X = _validate_X(self, X, reset=True)
        box = check_positive(self.box, "box (C/n)")
        if X.shape[0] * box < 1.0 - 1e-12:
            raise ValueError(f"box (C/n) = {box:g} needs at least {math.ceil(1.0 / box - 1e-9)} rows (n * box >= 1: the "
                             f"SVDD duals sum to 1 and are at most C/n); got {X.shape[0]}")
        if self.epsilon is not None:
            check_epsilon(self.epsilon)
        if int(self.n_components) != self.n_components or self.n_components < 1:
            raise ValueError(f"n_components must be a positive integer, got {self.n_components!r}")
        noise = check_noise(self.noise)
        solver_tol = check_positive(self.solver_tol, "solver_tol")
        rng = self._noise_rng(X)
        sigma = check_positive(self.sigma, "sigma")
        freqs = RandomFourierFeatures("rbf", sigma, int(self.n_components),
                                      random_state=self._public_rng(X.shape[1])).fit(X).frequencies_
        l2, _ = self.sensitivity(freqs.shape[0] * 2)
        sol = solve_svdd(rff_paired(X, freqs), box, distance_tol=solver_tol * l2)
        require_certified(sol.distance_bound, solver_tol * l2, "||a - a*|| (SVDD centre)")
        self.__dict__.pop("nonprivate_", None)
        if self.keep_nonprivate:
            self.nonprivate_ = sol
        self.frequencies_ = freqs
        self.noise_scale_ = None if self.epsilon is None else self.noise_scale(self._calibrated(self.epsilon))
        self.center_ = self._release(sol.coef, self.epsilon, noise, rng)
        self.guarantee_ = self._guarantee(self.epsilon, noise, self.random_state)
        self._void_if_data_derived()
        return self

    def sensitivity(self, F: int | None = None) -> tuple[float, float]:
        """Corollary 4.2's (L2, L1) sensitivity of the centre for this box and F features."""
        F = 2 * int(self.n_components) if F is None else int(F)
        return corollary_4_2_sensitivity(check_positive(self.box, "box (C/n)"), F)

    def noise_scale(self, epsilon: float) -> float:
        """lambda = 2 C kappa sqrt(F) / (n eps) (Theorem 4.3)."""
        return self.sensitivity()[1] / check_epsilon(epsilon)

    def _calibrated(self, epsilon: float) -> float:
        """The epsilon the noise is calibrated at: eps / (1 + 2 solver_tol), since the certified centre's sensitivity
        is at most (1 + 2 solver_tol) x Corollary 4.2's; ``epsilon`` then holds."""
        return check_epsilon(epsilon) / (1.0 + 2.0 * float(self.solver_tol))

    def _release(self, a: Array, epsilon: float | None, noise: str, rng: np.random.Generator) -> Array:
        """Noisy, clipped centre(s): ``a`` is one centre (F,) or a stack of copies (k, F)."""
        if epsilon is None:
            return np.array(a, dtype=np.float64, copy=True)
        out = noise_release(a, "laplace", self.noise_scale(self._calibrated(epsilon)), noise=noise, random_state=rng)
        if self.clip_center:
            nrm = np.linalg.norm(out, axis=-1, keepdims=True)
            out = out / np.maximum(1.0, nrm)
        return out

    def _guarantee(self, epsilon: float | None, noise: str, random_state: object) -> Guarantee:
        box = float(self.box)
        notes = [randomness_note(random_state)]
        if self.keep_nonprivate:
            notes.append("keep_nonprivate=True: this object also holds the NON-PRIVATE solution (nonprivate_) for "
                         "evaluation and audits; it is not a release")
        common = dict(neighbouring=REPLACE_ONE, statement="Park (2022) Theorem 4.3", attributes=self._release_attributes,
                      assumptions=("RBF kernel: ||phi(x)|| = 1 for every input (kappa = 1)", f"dual box C/n = {box:g}",
                                   "Corollary 4.2's sensitivity 2 C kappa sqrt(F) / n (L1)",
                                   "the exact SVDD minimiser, certified to within solver_tol x the L2 sensitivity: the "
                                   "noise is calibrated at eps / (1 + 2 solver_tol)"))
        if epsilon is None:
            return Guarantee(epsilon=math.inf, delta=0.0, released="the NON-PRIVATE centre a* and the frequencies (epsilon=None)",
                             private=False, notes=tuple(notes), **common)
        eps = float(epsilon)
        return Guarantee(epsilon=eps, delta=0.0, released="the noisy centre a-hat (clipped to norm 1 if clip_center) and the frequencies",
                         epsilon_calibrated=self._calibrated(eps), noise=noise_description(noise),
                         notes=tuple(notes), **common)

    # evaluation helpers (keep_nonprivate=True only) -------------------------------------------
    def _nonprivate_solution(self) -> ERMSolution:
        check_is_fitted(self, "center_")
        if not hasattr(self, "nonprivate_"):
            raise AttributeError("this release holds no non-private solution: fit with keep_nonprivate=True (evaluation only)")
        return self.nonprivate_

    def sample_centers(self, n_draws: int, random_state: object = None, epsilon: float | None = None,
                       noise: str | None = None) -> Array:
        """``n_draws`` further released centres from the cached non-private solution (``epsilon`` recalibrates the
        noise); each row is distributed exactly as the ``center_`` of a fresh fit.  Audits and Monte Carlo only."""
        a = self._nonprivate_solution().coef
        eps = self.epsilon if epsilon is None else epsilon
        noise = check_noise(self.noise if noise is None else noise)
        return self._release(np.tile(a, (int(n_draws), 1)), eps, noise, check_random_state(random_state))

    def resample(self, epsilon: float | None, random_state: object = None) -> "PrivateSVDD":
        """A fitted release at ``epsilon`` (None: non-private) from the cached non-private solution, as a fresh
        :meth:`fit` with that epsilon would give (same frequencies); it holds no non-private state.  Lets a sweep
        over epsilon reuse one solve."""
        a = self._nonprivate_solution().coef
        new = type(self)(**{**self.get_params(deep=False), "epsilon": epsilon, "keep_nonprivate": False,
                            "random_state": None})
        noise = check_noise(self.noise)
        new.n_features_in_ = self.n_features_in_
        new.frequencies_ = self.frequencies_
        new.noise_scale_ = None if epsilon is None else new.noise_scale(epsilon)
        new.center_ = new._release(a, epsilon, noise, check_random_state(random_state))
        new.guarantee_ = settle(new._guarantee(epsilon, noise, random_state), random_state=random_state, noise=noise)
        return new

    # the support function -----------------------------------------------------------------------
    def support_function(self, X: ArrayLike, center: Array | None = None) -> Array:
        """f-hat(x) = ||phi(x) - a-hat||^2 = 1 - 2 phi(x)'a + ||a||^2 (Eq. 4.6)."""
        check_is_fitted(self, "center_")
        X = _validate_X(self, X, reset=False)
        a = self.center_ if center is None else center
        return 1.0 - 2.0 * rff_paired(X, self.frequencies_) @ a + float(a @ a)

    def score_samples(self, X: ArrayLike) -> Array:
        """-f-hat(x): higher for points closer to the released centre (inside the description)."""
        return -self.support_function(X)

    def score(self, X: ArrayLike, y: object = None) -> float:
        """Mean of :meth:`score_samples` (see the class docstring)."""
        return float(np.mean(self.score_samples(X)))

    def gradient(self, X: ArrayLike, center: Array | None = None) -> Array:
        """grad_x f-hat(x) = -2 (d phi / dx)' a for the paired map phi = D^{-1/2} [cos(Wx), sin(Wx)] (interleaved).

        In float32 and by row blocks: grad = cos(X W') M_cos + sin(X W') M_sin with M_cos = -2 D^{-1/2} a_sin W and
        M_sin = 2 D^{-1/2} a_cos W, two small matrix products instead of (n x D) elementwise temporaries.  The
        dynamics only need the direction of descent: float32 (relative error ~1e-6) is ample for steps merged on
        a 0.05 grid.
        """
        a = self.center_ if center is None else center
        W = np.asarray(self.frequencies_, dtype=np.float32)
        scale = 2.0 / math.sqrt(W.shape[0])
        M = np.vstack([(-scale * a[1::2, None]) * W, (scale * a[0::2, None]) * W]).astype(np.float32)
        X32 = np.asarray(X, dtype=np.float32)
        n, D = X32.shape[0], W.shape[0]
        out = np.empty((n, X32.shape[1]), dtype=np.float32)
        buf = np.empty((min(n, _GRADIENT_BLOCK), 2 * D), dtype=np.float32)
        for lo in range(0, n, _GRADIENT_BLOCK):
            hi = min(lo + _GRADIENT_BLOCK, n)
            Z = X32[lo:hi] @ W.T
            np.cos(Z, out=buf[: hi - lo, :D])
            np.sin(Z, out=buf[: hi - lo, D:])
            np.matmul(buf[: hi - lo], M, out=out[lo:hi])
        return out.astype(np.float64)


@dataclass
class EquilibriumPoints:
    """Converged points of the dynamics, merged into equilibrium points (EPs)."""

    points: Array  #: the EPs, one row each
    assignment: NDArray[np.int64]  #: for each start, the index of its EP
    finals: Array  #: the converged point of each start


@dataclass
class EPCNonprivate:
    """The non-private state of an evaluation fit (``keep_nonprivate=True``): not a release."""

    svdd: ERMSolution | None  #: the SVDD solution (None when an external release was given)
    counts: NDArray[np.int64]  #: the exact (cell x class) vote counts


def run_dynamics(svdd: PrivateSVDD, starts: Array, lr: float, n_iter: int, center: Array | None = None,
                 decay_at: float = 0.8, decay: float = 0.2) -> Array:
    """Gradient descent x <- x - lr grad f-hat(x) from every start at once (Eq. 5.2), lr * decay after decay_at."""
    x = np.array(starts, dtype=np.float64, copy=True)
    switch = int(math.floor(decay_at * n_iter))
    for it in range(int(n_iter)):
        step = lr * (decay if it >= switch else 1.0)
        x -= step * svdd.gradient(x, center)
    return x


def find_equilibrium_points(svdd: PrivateSVDD, starts: Array, lr: float, n_iter: int, merge_tol: float = 0.05,
                            center: Array | None = None) -> EquilibriumPoints:
    """Phase II: run the dynamics from ``starts`` and merge converged points on a grid of side ``merge_tol``."""
    finals = run_dynamics(svdd, starts, lr, n_iter, center)
    keys = np.round(finals / merge_tol).astype(np.int64)
    _, first, inverse = np.unique(keys, axis=0, return_index=True, return_inverse=True)
    return EquilibriumPoints(points=finals[first], assignment=inverse.ravel(), finals=finals)


def cells_of(points: Array, r_max: float | None) -> tuple[Array, NDArray[np.int64]]:
    """Eq. (5.6)'s hypercubes: cubes of side r_max centred on multiples of r_max (the author's ``round_sep``);
    returns the cube keys and the cube of each point.  ``r_max=None``: every point is its own cell."""
    if r_max is None:
        return points, np.arange(len(points))
    keys = np.round(points / r_max).astype(np.int64)
    uniq, inverse = np.unique(keys, axis=0, return_inverse=True)
    return uniq.astype(np.float64), inverse.ravel()


def nearest(A: Array, B: Array) -> NDArray[np.int64]:
    """Index of the nearest row of B for every row of A (Euclidean): blocks of ||b||^2 - 2 a'b (a few matrix
    products; several times faster than a k-d tree for the EP sets here), a k-d tree beyond 1e8 pairs."""
    if A.shape[0] * B.shape[0] > 1e8:
        return cKDTree(B).query(A, k=1)[1].astype(np.int64)
    out = np.empty(A.shape[0], dtype=np.int64)
    bb = np.einsum("ij,ij->i", B, B)
    for lo in range(0, A.shape[0], _GRADIENT_BLOCK):
        out[lo:lo + _GRADIENT_BLOCK] = np.argmin(bb - 2.0 * (A[lo:lo + _GRADIENT_BLOCK] @ B.T), axis=1)
    return out


class EquilibriumPointClassifier(ReleaseMixin, ClassifierMixin, BaseEstimator):
    """Park (2022) Phases I-III: multi-class classification from a private SVDD, equilibrium points and noisy votes.

    Phase I fits :class:`PrivateSVDD`; Phase II runs the gradient dynamics dx/dt = -grad f-hat(x) of the private
    support function (Eq. 5.2; :func:`find_equilibrium_points`) to its equilibrium points (EPs); Phase III labels the
    EPs, grouped into hypercubes of side ``r_max`` (Eq. 5.6), by noisy majority votes (Eq. 5.5).  Prediction follows
    Section 6.1 (the dynamics to the nearest labelled EP) or 6.2 (kNN on the labelled EPs).  ``variant="corrected"``
    (the default) starts the dynamics from data-independent points of the public ``domain`` and labels every cell
    from the whole (cell x class) histogram with Laplace(2/eps_vote) noise; ``variant="paper"`` is the thesis's
    algorithm, which is NOT private (see Notes).

    Parameters
    ----------
    epsilon_svdd : float or None, default=0.5
        The privacy level of the SVDD centre; None releases it without noise (NOT private).
    epsilon_vote : float or None, default=0.5
        The privacy level of the votes; None releases them without noise (NOT private).
    classes : sequence, "data" or None, default=None
        The public label set (K >= 2 labels).  None: the labels must be -1/+1.  ``"data"`` reads it from the data,
        explicitly: the fit is then NOT private (a class present in D and absent from D' shows in ``classes_``).
    box : float, default=0.05
        C/n, the SVDD's dual box bound (Table 7.1).
    sigma : float, default=sqrt(1/2)
        The RBF kernel's width, exp(-||x - y||^2 / (2 sigma^2)); Table 7.1's gamma is 1 / (2 sigma^2).
    n_components : int, default=200
        The SVDD's number of frequencies (F = 2 n_components features).
    learning_rate : float, default=1e-3
        The dynamics' initial learning rate (Table 7.1; decayed by 1/5 after 80% of the iterations).
    n_iter : int, default=20
        The dynamics' iterations.
    r_max : float or None, default=None
        The hypercube side for grouping EPs (Eq. 5.6); None: every EP is its own cell.
    merge_tol : float, default=0.05
        Converged points on one grid cell of this side are one EP.
    variant : {"corrected", "paper"}, default="corrected"
        The private variant, or the thesis's algorithm (NOT private; warns with :class:`~dpkernels.PrivacyLeakWarning`).
    n_starts : int, default=2000
        The number of data-independent starts of the corrected variant (uniform on ``domain``).
    domain : tuple of float, default=(0.0, 1.0)
        (low, high), the public box of the inputs (after min-max scaling with public bounds: [0, 1]^d).
    inference : {"dynamics", "knn"}, default="dynamics"
        Prediction by the dynamics and the nearest labelled EP (Section 6.1) or by kNN on the labelled EPs (6.2).
    n_neighbors : int, default=1
        k of the kNN inference.
    noise : {"lattice", "continuous"}, default="lattice"
        How the Laplace noise of the centre and the votes is drawn (``"continuous"``: NOT floating-point safe; warns).
    keep_nonprivate : bool, default=False
        Keep the non-private SVDD solution and the exact vote counts as ``nonprivate_`` (evaluation only); the object
        is then not a release.
    random_state : None, int, SeedSequence or numpy.random.Generator, default=None
        Source of the frequencies and the starts (data-independent) and of the noise.  None draws from
        operating-system entropy; a seed is for reproduction only.

    Attributes
    ----------
    svdd_ : PrivateSVDD
        The SVDD release (centre and frequencies).
    equilibrium_points_ : ndarray of shape (n_eps, n_features)
        The equilibrium points found by the dynamics.
    labelled_points_ : ndarray of shape (n_labelled, n_features)
        The EPs that carry a label (all of them in the corrected variant).
    ep_labels_ : ndarray of shape (n_labelled,)
        The index in ``classes_`` of each labelled EP's noisy-majority label.
    n_cells_ : int
        The number of cells (hypercubes) the EPs fall in.
    classes_ : ndarray of shape (n_classes,)
        The public label set.
    n_features_in_ : int
        The number of input features.
    guarantee_ : Guarantee
        The privacy statement of the fit (:class:`~dpkernels.mechanisms.base.Guarantee`).
    nonprivate_ : EPCNonprivate
        The non-private SVDD solution and the exact vote counts (``keep_nonprivate=True`` only; NOT private).

    See Also
    --------
    PrivateSVDD : Phase I.
    PrivateOneVsRest : multi-class classification from any binary mechanism.

    Notes
    -----
    Privacy (``variant="corrected"``): (epsilon_svdd + epsilon_vote)-differential privacy (delta = 0) for the
    replace-one neighbouring relation, by basic composition of Theorem 4.3 (the centre) and the Laplace mechanism on
    the whole (cell x class) histogram (a replaced row lowers one count and raises another: L1 sensitivity 2); the
    EPs are post-processing of the centre because the starts are data-independent.  Released: the SVDD release,
    the equilibrium points and every cell's label.  Assumptions: the label set ``classes`` and the start ``domain``
    and ``n_starts`` are public; Theorem 4.3's assumptions.  ``variant="paper"`` runs the dynamics from the training
    points, so the released EPs sit next to training points without any noise, and labels occupied cells only: NOT
    differentially private whatever epsilon says (ERRATA P3), and its votes are 2 eps_vote-DP under replacement
    (P4); its ``guarantee_`` says so.  Publish :meth:`release`.

    Examples
    --------
    >>> import numpy as np
    >>> from dpkernels import EquilibriumPointClassifier
    >>> rng = np.random.default_rng(0)
    >>> X = np.vstack([rng.normal([0.25, 0.25], 0.05, size=(100, 2)), rng.normal([0.75, 0.75], 0.05, size=(100, 2))])
    >>> X = X.clip(0.0, 1.0)  # the public domain [0, 1]^d
    >>> y = np.repeat([0, 1], 100)
    >>> clf = EquilibriumPointClassifier(epsilon_svdd=1.0, epsilon_vote=1.0, classes=[0, 1], sigma=0.3,
    ...                                  n_components=50, n_starts=200).fit(X, y)
    >>> clf.guarantee_.epsilon, clf.guarantee_.delta
    (2.0, 0.0)
    >>> clf.predict(X[:5]).shape
    (5,)
    """

    _release_attributes = ("svdd_", "equilibrium_points_", "labelled_points_", "ep_labels_", "n_cells_")

    def __init__(self, *, epsilon_svdd: float | None = 0.5, epsilon_vote: float | None = 0.5, classes: object = None,
                 box: float = 0.05, sigma: float = math.sqrt(0.5), n_components: int = 200, learning_rate: float = 1e-3,
                 n_iter: int = 20, r_max: float | None = None, merge_tol: float = 0.05, variant: str = "corrected", n_starts: int = 2000,
                 domain: tuple[float, float] = (0.0, 1.0), inference: str = "dynamics", n_neighbors: int = 1,
                 noise: str = "lattice", keep_nonprivate: bool = False, random_state: object = None) -> None:
        self.epsilon_svdd = epsilon_svdd
        self.epsilon_vote = epsilon_vote
        self.classes = classes
        self.box = box
        self.sigma = sigma
        self.n_components = n_components
        self.learning_rate = learning_rate
        self.n_iter = n_iter
        self.r_max = r_max
        self.merge_tol = merge_tol
        self.variant = variant
        self.n_starts = n_starts
        self.domain = domain
        self.inference = inference
        self.n_neighbors = n_neighbors
        self.noise = noise
        self.keep_nonprivate = keep_nonprivate
        self.random_state = random_state

    def __sklearn_tags__(self) -> Any:
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        tags.non_deterministic = self.random_state is None
        return tags

    def _check_params(self) -> None:
        if self.variant not in VARIANTS:
            raise ValueError(f"variant must be one of {VARIANTS}, got {self.variant!r}")
        if self.inference not in ("dynamics", "knn"):
            raise ValueError(f"inference must be 'dynamics' or 'knn', got {self.inference!r}")
        for name in ("epsilon_svdd", "epsilon_vote"):
            if getattr(self, name) is not None:
                check_epsilon(getattr(self, name), name)
        check_positive(self.learning_rate, "learning_rate")
        check_positive(self.merge_tol, "merge_tol")
        if self.r_max is not None:
            check_positive(self.r_max, "r_max")
        if int(self.n_iter) != self.n_iter or self.n_iter < 0:
            raise ValueError(f"n_iter must be a non-negative integer, got {self.n_iter!r}")
        if int(self.n_starts) != self.n_starts or self.n_starts < 1:
            raise ValueError(f"n_starts must be a positive integer, got {self.n_starts!r}")
        lo, hi = self.domain
        if not (np.isfinite(lo) and np.isfinite(hi) and lo < hi):
            raise ValueError(f"domain must be a finite (low, high) with low < high, got {self.domain!r}")
        check_noise(self.noise)

    # ------------------------------------------------------------------------------------------
    def fit(self, X: ArrayLike, y: ArrayLike, svdd: PrivateSVDD | None = None) -> "EquilibriumPointClassifier":
        """Fit Phases I-III and release the SVDD, the equilibrium points and the cells' labels.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            The training rows (the private data), in the public ``domain``.
        y : array-like of shape (n_samples,)
            The labels, in the public set ``classes``.
        svdd : PrivateSVDD or None, default=None
            An already fitted :class:`PrivateSVDD` release to build on: its own guarantee then takes the place of
            ``epsilon_svdd``, ``box``, ``sigma`` and ``n_components`` (it must not hold non-private state), which lets
            a sweep reuse one SVDD solve (:meth:`PrivateSVDD.resample`).

        Returns
        -------
        self
            The fitted estimator: a release whose ``guarantee_`` states the privacy level that holds.
        """
        if y is None:
            raise ValueError("requires y to be passed, but the target y is None")
        X, y = validate_data(self, X, y, reset=True, accept_sparse=True, dtype=np.float64)
        X = check_finite_array(X)
        check_classification_targets(y)
        self._check_params()
        classes, y_idx = resolve_classes(y, self.classes, binary=False, n_samples=X.shape[0])
        rng = self._noise_rng(X, y_idx)
        noise = self.noise
        if self.variant == "paper":
            warnings.warn("variant='paper' is the thesis's algorithm, which is NOT differentially private: its equilibrium "
                          "points are reached from the training points without noise and only occupied cells are labelled "
                          "(ERRATA P3); use variant='corrected'", PrivacyLeakWarning, stacklevel=2)
        if svdd is None:
            svdd = PrivateSVDD(epsilon=self.epsilon_svdd, box=self.box, sigma=self.sigma, n_components=self.n_components,
                               noise=noise, keep_nonprivate=self.keep_nonprivate,
                               random_state=self.random_state).fit(X)
            svdd.set_params(random_state=None)  # a sub-release keeps no generator (it drew this fit's noise)
        else:
            check_is_fitted(svdd, "center_")
            if hasattr(svdd, "nonprivate_") and not self.keep_nonprivate:
                raise ValueError("the given svdd holds its non-private solution; pass a release (PrivateSVDD.resample)")
        center = svdd.center_
        if self.variant == "paper":
            eps_pts = find_equilibrium_points(svdd, X, self.learning_rate, self.n_iter, self.merge_tol, center)
            train_ep = eps_pts.assignment
        else:
            lo, hi = self.domain
            starts = self._public_rng(X.shape[1]).uniform(lo, hi, size=(int(self.n_starts), X.shape[1]))
            eps_pts = find_equilibrium_points(svdd, starts, self.learning_rate, self.n_iter, self.merge_tol, center)
            train_ep = nearest(run_dynamics(svdd, X, self.learning_rate, self.n_iter, center), eps_pts.points)
        cells, cell_of_ep = cells_of(eps_pts.points, self.r_max)
        counts = np.zeros((len(cells), len(classes)))
        np.add.at(counts, (cell_of_ep[train_ep], y_idx), 1.0)
        keep = np.ones(len(eps_pts.points), dtype=bool)
        if self.variant == "paper":  # Eq. (5.5): Laplace(1/eps) on each count of the occupied cells only
            occupied = counts.sum(axis=1) > 0
            keep = occupied[cell_of_ep]
            scale = None if self.epsilon_vote is None else 1.0 / float(self.epsilon_vote)
        else:  # the whole histogram, Laplace(2/eps): eps-DP for replace-one neighbours
            scale = None if self.epsilon_vote is None else 2.0 / float(self.epsilon_vote)
        noisy = counts if scale is None else noise_release(counts, "laplace", scale, noise=noise, random_state=rng)
        labels = np.argmax(noisy, axis=1)
        self.__dict__.pop("nonprivate_", None)
        if self.keep_nonprivate:
            self.nonprivate_ = EPCNonprivate(getattr(svdd, "nonprivate_", None), counts.astype(np.int64))
        self.classes_ = classes
        self.svdd_ = svdd
        self.equilibrium_points_ = eps_pts.points
        self.labelled_points_ = eps_pts.points[keep]
        self.ep_labels_ = labels[cell_of_ep][keep]
        self.n_cells_ = len(cells)
        self.guarantee_ = self._guarantee(svdd.guarantee_, noise)
        self._void_if_data_derived()
        return self

    def _guarantee(self, g_svdd: Guarantee, noise: str) -> Guarantee:
        notes = list(self._notes())
        eps_v = self.epsilon_vote
        private = self.variant == "corrected" and math.isfinite(g_svdd.epsilon) and eps_v is not None
        if self.variant == "paper":
            why = ("the equilibrium points are reached from the training points without noise and only occupied cells are "
                   "labelled (ERRATA P3); the votes add Laplace(1/eps_vote) per count, 2 eps_vote-DP under replacement (P4)")
            notes.append(why)
        elif eps_v is None:
            notes.append("epsilon_vote=None: the votes are released without noise")
        if not math.isfinite(g_svdd.epsilon):
            notes.append("the SVDD centre is released without noise (epsilon_svdd=None)")
        eps = g_svdd.epsilon + float(eps_v) if private else math.inf
        return Guarantee(
            epsilon=eps, delta=0.0, neighbouring=REPLACE_ONE,
            statement=("Park (2022) Theorem 4.3 (centre) + Laplace(2/eps_vote) on the (cell x class) histogram, basic "
                       "composition" if self.variant == "corrected" else "Park (2022) Sections 5-6 as printed"),
            released="the SVDD release (svdd_), the equilibrium points, the cells' labels" + (
                " (every cell)" if self.variant == "corrected" else " (occupied cells only)"),
            assumptions=("the label set `classes` is public", "the start domain and n_starts are public",
                         *g_svdd.assumptions),
            attributes=self._release_attributes, noise=noise_description(noise), notes=tuple(notes), private=private)

    def predict(self, X: ArrayLike) -> NDArray:
        """The labels of the rows of X, by the dynamics (Section 6.1) or kNN on the labelled EPs (6.2).

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
        check_is_fitted(self, "ep_labels_")
        X = _validate_X(self, X, reset=False)
        if len(self.labelled_points_) == 0:
            raise RuntimeError("no labelled equilibrium point")
        if self.inference == "dynamics":  # Section 6.1: run the dynamics, take the nearest labelled EP
            finals = run_dynamics(self.svdd_, X, self.learning_rate, self.n_iter, self.svdd_.center_)
            return self.classes_[self.ep_labels_[nearest(finals, self.labelled_points_)]]
        k = min(int(self.n_neighbors), len(self.labelled_points_))  # Section 6.2: kNN on the labelled EPs
        nn = cKDTree(self.labelled_points_).query(X, k=k)[1].reshape(len(X), k)
        votes = np.zeros((len(X), len(self.classes_)))
        np.add.at(votes, (np.repeat(np.arange(len(X)), k), self.ep_labels_[nn].ravel()), 1.0)
        return self.classes_[votes.argmax(axis=1)]
