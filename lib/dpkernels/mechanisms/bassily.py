"""Bassily, Mohri and Suresh (2022): DP learning with margin guarantees (Algorithms 1-3), and a private choice of rho.

* :class:`PrivateMarginClassifier` (Algorithm 2, (epsilon, delta)-DP): a data-independent JL map Phi to k dimensions,
  each row projected onto the ball B^k(2r), private minimisation of the empirical rho-hinge loss
  (1/m) sum_i max(1 - y_i <w, z_i> / rho, 0) over B^k(2 Lambda), release w^Priv = Phi^T w-tilde.
* :class:`PrivateKernelMarginClassifier` (Algorithm 3): random Fourier features psi(x) with ||psi(x)|| = r exactly
  (a shift-invariant kernel with K(x, x) = r^2), then Algorithm 2 with norm bound 2 Lambda and beta / 2.
* :class:`ExponentialMarginClassifier` (Algorithm 1, pure epsilon-DP): the exponential mechanism over a grid cover
  of B^k(2 Lambda) scored by the empirical margin loss, for k = 1 to 3 (exact enumeration).
* :class:`PrivateMarginSelection` (**ours**): Algorithm 2 for every rho of a data-independent grid, and the
  exponential mechanism on held-out mistakes.

What is ours, not the paper's (its appendices were not recovered; see ``docs/statements/bassily2022.md``):

* **The DP-ERM step of Algorithm 2.**  The paper's Algorithm 4 (phased SGD with proximal smoothing [BGM21] on a
  resample of S, with private confidence boosting) was not recovered.  We use noisy projected full-batch subgradient
  descent (Bassily, Smith and Thakurta 2014; Abadi et al. 2016), a standard, proven (epsilon, delta)-DP method for
  Lipschitz losses over a ball: T steps w_{t+1} = Pi_{B^k(2 Lambda)}(w_t - eta (g_t + N_t)), w-tilde the average of
  the iterates.  Each per-example subgradient -y z / rho 1[y <w, z> < rho] has norm <= 2r / rho = L because every z
  lies in B^k(2r), so the average g_t has replace-one L2 sensitivity 2L / m.  N_t ~ N(0, sigma^2 I_k); T such steps
  compose *exactly* into one Gaussian mechanism with sensitivity sqrt(T) 2L / m (Gaussian differential privacy, Dong,
  Roth and Su 2022), so sigma is the analytic Gaussian calibration of ``dp-accounting`` for (epsilon, delta) at that
  sensitivity (:func:`calibrate_noisy_gd`).  Each noisy gradient is released on a grid (:func:`dpkernels.lattice.
  gaussian_lattice`: floating-point safe); everything after it is post-processing.  Defaults for T and eta are ours
  (:func:`dpkernels.bounds.bassily.noisy_gd_iterations`, eta = 2 Lambda / (G sqrt(T))).
* **The fast JL transform** (Lemma A.4): our SRHT (:class:`dpkernels.jl.SRHT`) or a dense Rademacher matrix.
* **The constants** of k (``k_constant``), of Algorithm 1's score margin (``score_margin``), and the selection of rho.

Conditions enforced (Lemma 3.1, Theorem 3.2): 0 < delta < 1/m and 0 < epsilon <= log(1/delta) (``ValueError``), and
rho in (0, Lambda r].  Neighbouring relation: replace-one (m fixed).  The labels' set is a public parameter
(``classes``).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.utils.extmath import row_norms
from sklearn.utils.multiclass import type_of_target
from sklearn.utils.validation import check_is_fitted

from dpkernels import lattice
from dpkernels._validation import (
    DEFAULT_DATA_NORM,
    check_delta,
    check_epsilon,
    check_finite_array,
    check_positive,
    check_probability,
    check_random_state,
    check_row_norms,
    public_bound,
    validate_data,
)
from dpkernels.accounting import gaussian_epsilon, gaussian_sigma
from dpkernels.bounds import bassily as B
from dpkernels.jl import RademacherJL, make_jl
from dpkernels.mechanisms.base import REPLACE_ONE, Guarantee, ReleaseMixin, noise_description, resolve_classes
from dpkernels.random_features import RandomFourierFeatures, rff_paired

__all__ = [
    "PrivateMarginClassifier",
    "PrivateKernelMarginClassifier",
    "ExponentialMarginClassifier",
    "PrivateMarginSelection",
    "MarginState",
    "gradient_sensitivity",
    "calibrate_noisy_gd",
    "noisy_projected_gd",
    "rho_hinge_loss",
    "project_rows",
    "compress_rows",
    "grid_cover",
]

Array = NDArray[np.float64]

#: Relative slack on the sensitivity for the float64 rounding of a per-example gradient's norm (a few ulps).
_FLOAT_REL = 2.0**-40
#: Dense JL matrices up to this many bytes; the SRHT (O(d) memory) beyond (``projection="auto"``).
_DENSE_JL_BYTES = 1 << 28
#: Largest cover Algorithm 1 enumerates.
MAX_COVER = 2_000_000
#: Rows per block of the feature map and JL projection in Algorithms 2-3 (:func:`compress_rows`).
COMPRESS_BLOCK_ROWS = 8192


# ----------------------------------------------------------------------------------------------
# the DP-ERM substitute: noisy projected subgradient descent on the rho-hinge loss
# ----------------------------------------------------------------------------------------------
def gradient_sensitivity(lipschitz: float, m: int) -> float:
    """Replace-one L2 sensitivity of the float64 average of m per-example gradients of norm <= L.

    Exactly 2L / m in real arithmetic; the computed average also carries a summation error of norm <= gamma_m L
    (Higham 2002, any summation order, gamma_m = m u / (1 - m u), u = 2^-53) on each side, which is added (with a
    2^-40 relative slack for the per-example norms and the division by sigma in :func:`noisy_projected_gd`), so that
    the bound holds for the float64 centre the Gaussian release is computed around.
    """
    L = check_positive(lipschitz, "Lipschitz constant")
    u = (m + 1) * 2.0**-53
    gamma = u / (1.0 - u)
    return (2.0 * L / m + 2.0 * gamma * L) * (1.0 + _FLOAT_REL)


def calibrate_noisy_gd(epsilon: float, delta: float, sensitivity: float, n_steps: int) -> float:
    """sigma of each Gaussian step so that ``n_steps`` adaptive Gaussian mechanisms with L2 ``sensitivity`` compose to
    (epsilon, delta): their composition is exactly one Gaussian mechanism with sensitivity sqrt(n_steps) * sensitivity
    (Gaussian DP), calibrated analytically by ``dp-accounting`` (:func:`dpkernels.accounting.gaussian_sigma`)."""
    n_steps = int(n_steps)
    if n_steps < 1:
        raise ValueError(f"n_steps must be >= 1, got {n_steps}")
    return gaussian_sigma(epsilon, delta, math.sqrt(n_steps) * sensitivity)


def project_rows(Z: Array, radius: float) -> Array:
    """Each row onto the Euclidean ball of ``radius``: z min(1, radius / ||z||) (Algorithm 2, step 3)."""
    nrm = row_norms(Z)
    scale = np.minimum(1.0, radius / np.maximum(nrm, np.finfo(float).tiny))
    return Z * scale[:, None]


def compress_rows(X: Array, projection: Any, radius: float, features: Callable[[Array], Array] | None = None) -> Array:
    """Algorithm 2's steps 1-3 on every row: z_i = Pi_{B^k(radius)}(Phi v_i) with v_i = ``features`` (x_i) (default
    x_i) and Phi the fitted JL transform ``projection``, into one (m, k) array, block by block (``COMPRESS_BLOCK_ROWS``,
    at most 1/64 of the rows): the feature matrix (m x 2D for Algorithm 3) and the unprojected images never exist
    whole, so the fit's memory is the training matrix, Z and a few blocks.  Each row is computed exactly as on the
    whole matrix, up to the summation order BLAS chooses for a block's products."""
    m = X.shape[0]
    Z = np.empty((m, int(projection.n_components)))
    step = max(256, min(COMPRESS_BLOCK_ROWS, -(-m // 64)))
    for a in range(0, m, step):
        V = X[a:a + step] if features is None else features(X[a:a + step])
        Z[a:a + step] = project_rows(projection.transform(V), radius)
    return Z


def rho_hinge_loss(Z: Array, y: Array, W: Array, rho: float) -> Array:
    """L-hat^rho_S(w) = (1/m) sum_i max(1 - y_i <w, z_i> / rho, 0) for every row w of ``W`` (c, k) -> (c,)."""
    W = np.atleast_2d(W)
    margins = (Z @ W.T) * y[:, None]
    return np.maximum(1.0 - margins / rho, 0.0).mean(axis=0)


def _rho_hinge_gradient(Z: Array, y: Array, W: Array, rho: float | Array) -> Array:
    """Average subgradient of the rho-hinge loss at each column of W (k, c): -(1/(rho m)) sum_i y_i z_i 1[y_i <w, z_i> < rho]
    (``rho`` a scalar or one margin per column)."""
    active = ((Z @ W) * y[:, None]) < rho
    return -(Z.T @ (active * y[:, None])) / (np.asarray(rho) * Z.shape[0])


def noisy_projected_gd(Z: Array, y: Array, *, rho: float | ArrayLike, radius: float, sigma: float | ArrayLike, n_iter: int,
                       learning_rate: float | ArrayLike, random_state: object = None, n_chains: int = 1) -> Array:
    """``n_chains`` independent runs of noisy projected subgradient descent on the rho-hinge loss over B^k(radius),
    from w_0 = 0; returns the average of the iterates w_1..w_T of each run, shape (n_chains, k).

    ``rho``, ``sigma`` and ``learning_rate`` are scalars or one value per chain (a sweep over margins and privacy levels
    in one pass over the data).  Each step releases sigma round((g_t / sigma + N(0, I)) / s) s, s = 2^-16: the Gaussian
    mechanism g_t + N(0, sigma^2 I) exactly rounded to the grid sigma s (:func:`dpkernels.lattice.gaussian_lattice`);
    the rest is post-processing.  The caller calibrates sigma (:func:`calibrate_noisy_gd`)."""
    rng = check_random_state(random_state)
    c = int(n_chains)
    k = Z.shape[1]
    rho_c = np.broadcast_to(np.asarray(rho, dtype=np.float64), (c,))
    sig = np.broadcast_to(np.asarray(sigma, dtype=np.float64), (c,))
    eta = np.broadcast_to(np.asarray(learning_rate, dtype=np.float64), (c,))
    rho_arg = rho_c[0] if np.all(rho_c == rho_c[0]) else rho_c
    W = np.zeros((k, c))
    avg = np.zeros_like(W)
    for _ in range(int(n_iter)):
        grad = _rho_hinge_gradient(Z, y, W, rho_arg)
        # g / sigma + N(0, I) on the grid of unit noise, times sigma: the Gaussian mechanism with centre fl(g / sigma)
        # (whose sensitivity is that of g over sigma to a relative 2^-53, inside gradient_sensitivity's slack), one
        # call for all chains whatever their sigma
        noisy = lattice.gaussian_lattice(grad / sig, 1.0, rng) * sig
        W -= eta * noisy
        nrm = np.sqrt(np.einsum("ij,ij->j", W, W))
        W *= np.minimum(1.0, radius / np.maximum(nrm, np.finfo(float).tiny))
        avg += W
    return (avg / int(n_iter)).T


@dataclass
class MarginState:
    """The non-private evaluation state of an Algorithm 2 fit (``keep_nonprivate=True`` only): the projected training
    rows, labels in {-1, +1}, the JL map and the calibration.  Not a release."""

    Z: Array
    y: Array
    projection: Any
    rho: float
    radius: float
    sigma: float
    n_iter: int
    learning_rate: float
    w: Array | None = None  #: the released w-tilde of the fit (``coef_`` = Phi^T w)

    def sample_releases(self, n_draws: int, random_state: object = None, sigma: float | None = None) -> Array:
        """``n_draws`` further releases w-tilde (k-dimensional; ``coef_`` = Phi^T w-tilde), each distributed exactly as
        a fresh fit's; ``sigma`` overrides the noise (negative controls of audits)."""
        s = self.sigma if sigma is None else check_positive(sigma, "sigma")
        return noisy_projected_gd(self.Z, self.y, rho=self.rho, radius=self.radius, sigma=s, n_iter=self.n_iter,
                                  learning_rate=self.learning_rate, random_state=random_state, n_chains=n_draws)


def _pm1(idx: NDArray[np.intp]) -> Array:
    return np.where(idx == 1, 1.0, -1.0)


def _data_norm(X: Array, data_norm: object, clip: bool) -> tuple[Array, float]:
    """(X, r): ``data_norm`` a public bound (rows above it refused or clipped), or ``"data"`` (read from X: the fit is
    then not private; see :func:`dpkernels._validation.public_bound`)."""
    norms = row_norms(X)
    r, _ = public_bound(data_norm, norms)
    return check_row_norms(X, r, clip=clip, what=f"row L2 norms ||x|| (data_norm = {r:g})", norms=norms), r


def _check_privacy(epsilon: float, delta: float, m: int) -> tuple[float, float]:
    epsilon = check_epsilon(epsilon)
    delta = check_delta(delta)
    broken = B.algorithm_2_conditions(epsilon, delta, m)
    if broken:
        raise ValueError("Algorithm 2's guarantee (Lemma 3.1, Theorem 3.2) needs 0 < delta < 1/m and 0 < epsilon <= "
                         f"log(1/delta): {'; '.join(broken)} (m = {m})")
    return epsilon, delta


def _check_int(value: object, name: str, low: int = 1) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < low:
        raise ValueError(f"{name} must be an integer >= {low}, got {value!r}")
    return int(value)


def _projection(kind: str, k: int, d: int, rng: np.random.Generator) -> Any:
    if kind == "auto":
        n_pad = 1 << max(0, (d - 1).bit_length())
        kind = "rademacher" if 8 * k * d <= _DENSE_JL_BYTES or k > n_pad else "srht"
    return make_jl(kind, k, rng)


class _MarginBase(ReleaseMixin, ClassifierMixin, BaseEstimator):
    """Prediction for the linear releases: h(x) = <coef_, x>, classes_[1] where positive."""

    def _validate(self, X: ArrayLike, y: ArrayLike) -> tuple[Array, Array]:
        X, y = validate_data(self, X, y, reset=True, dtype=np.float64)
        X = check_finite_array(X)
        read = isinstance(self.classes, str) and self.classes == "data"
        if self.classes is not None and not read and len(list(self.classes)) != 2:
            raise ValueError(f"Only binary classification is supported: classes must hold two labels, got {self.classes!r}")
        if read:  # the label set is read from the data anyway: say what is wrong (classes=None: one text, whatever y)
            kind = type_of_target(y)
            if kind == "continuous":
                raise ValueError("Unknown label type: continuous target; pass class labels (and classes=...)")
            if kind == "multiclass":
                raise ValueError("Only binary classification is supported; the target has more than two labels")
        cls, idx = resolve_classes(y, self.classes, binary=True, n_samples=X.shape[0])
        self.classes_ = cls
        return X, _pm1(idx)

    def _features(self, X: Array) -> Array:
        return X

    def decision_function(self, X: ArrayLike) -> Array:
        """<w^Priv, x> (Algorithms 1-2) or <w^Priv, psi(x)> (Algorithm 3).

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
        X = check_finite_array(validate_data(self, X, reset=False, dtype=np.float64))
        return self._features(X) @ self.coef_

    def predict(self, X: ArrayLike) -> NDArray[Any]:
        """The predicted labels: ``classes_[1]`` where the decision function is > 0, else ``classes_[0]``.

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
        positive = self.decision_function(X) > 0
        return self.classes_[positive.astype(np.intp)]

    def __sklearn_tags__(self) -> Any:
        tags = super().__sklearn_tags__()
        tags.classifier_tags.multi_class = False
        tags.classifier_tags.poor_score = True  # a private classifier at the default epsilon on a few dozen rows
        return tags


class _Algorithm2(_MarginBase):
    """Algorithm 2's steps 1-4 (shared by Algorithms 2 and 3): JL map, projection onto B^k(2r), DP-ERM."""

    #: Algorithm 3 calls Algorithm 2 with norm bound 2 Lambda and confidence beta / 2.
    _lambda_factor = 1.0
    _beta_factor = 1.0

    def _settings(self, m: int, r: float) -> tuple[float, float, float, float, int]:
        epsilon, delta = _check_privacy(self.epsilon, self.delta, m)
        Lambda = check_positive(self.weight_bound, "weight_bound") * self._lambda_factor
        rho = check_positive(self.rho, "rho")
        if rho > Lambda * r * (1.0 + 1e-12):
            raise ValueError(f"rho = {rho:g} must lie in (0, Lambda r] = (0, {Lambda * r:g}] (Algorithm 2's input)")
        beta = check_probability(self.beta, "beta") * self._beta_factor
        if self.n_components is None:
            k = B.algorithm_2_k(epsilon, delta, m, beta, check_positive(self.k_constant, "k_constant"))
        else:
            k = _check_int(self.n_components, "n_components")
        return epsilon, delta, Lambda, rho, k

    def _fit_compressed(self, X: Array, y: Array, r: float, public: np.random.Generator, rng: np.random.Generator,
                        features: Callable[[Array], Array] | None = None) -> tuple[Array, Any, MarginState]:
        """The JL map from ``public`` (data-independent), the noisy steps from ``rng``; the rows are ``features`` (X)
        (default: X itself), computed, mapped and projected block by block (:func:`compress_rows`)."""
        m = X.shape[0]
        d = X.shape[1] if features is None else features(X[:1]).shape[1]
        epsilon, delta, Lambda, rho, k = self._settings(m, r)
        if self.projection not in ("auto", "srht", "rademacher", "gaussian", "sparse"):
            raise ValueError(f"projection must be 'auto', 'srht', 'rademacher', 'gaussian' or 'sparse', got {self.projection!r}")
        proj = _projection(self.projection, k, d, public).fit(np.zeros((1, d)))  # data-independent: the dimension only
        Z = compress_rows(X, proj, 2.0 * r, features)
        L = B.rho_hinge_lipschitz(2.0 * r, rho)
        sens = gradient_sensitivity(L, m)
        s1 = gaussian_sigma(epsilon, delta, 1.0)
        T = (B.noisy_gd_iterations(m, k, s1, _check_int(self.max_iter, "max_iter")) if self.n_iter is None
             else _check_int(self.n_iter, "n_iter"))
        sigma = calibrate_noisy_gd(epsilon, delta, sens, T)
        G = math.sqrt(L * L + k * sigma * sigma)
        eta = 2.0 * Lambda / (G * math.sqrt(T)) if self.learning_rate is None else check_positive(self.learning_rate, "learning_rate")
        w = noisy_projected_gd(Z, y, rho=rho, radius=2.0 * Lambda, sigma=sigma, n_iter=T, learning_rate=eta, random_state=rng)[0]
        state = MarginState(Z, y, proj, rho, 2.0 * Lambda, sigma, T, eta, w)
        self.n_components_, self.n_iter_, self.noise_sigma_, self.learning_rate_ = k, T, sigma, eta
        self.epsilon_accounted_ = gaussian_epsilon(sigma, delta, math.sqrt(T) * sens)
        self._guarantee_numbers = (epsilon, delta, r, rho, Lambda, k, T, sigma, sens, m)
        return w, proj, state

    def _guarantee(self, statement: str, released: str, extra: tuple[str, ...] = ()) -> Guarantee:
        epsilon, delta, r, rho, Lambda, k, T, sigma, sens, m = self._guarantee_numbers
        del self._guarantee_numbers
        return Guarantee(
            epsilon=epsilon, delta=delta, neighbouring=REPLACE_ONE, statement=statement, released=released,
            attributes=tuple(self._release_attributes),
            assumptions=(
                f"labels in the public set classes = {self.classes_.tolist()}",
                *extra,
                "Phi is data-independent (drawn from random_state and the input dimension only)",
                f"every JL image is projected onto B^k(2r), 2r = {2 * r:.6g}: each per-example subgradient of the rho-hinge "
                f"loss has norm <= L = 2r / rho = {2 * r / rho:.6g}, the averaged gradient replace-one sensitivity "
                f"<= {sens:.6g} (2L/m with float64 rounding)",
                f"conditions of Lemma 3.1: delta < 1/m = {1 / m:.3g}, epsilon <= log(1/delta) = {math.log(1 / delta):.4g}",
            ),
            noise=f"T = {T} Gaussian steps, sigma = {sigma:.6g} each, composed exactly (Gaussian DP) and calibrated by "
                  f"dp-accounting; {noise_description('lattice')}",
            notes=self._notes() + (
                "the DP-ERM step is OUR substitute for the paper's Algorithm 4 (not recovered): noisy projected "
                "subgradient descent; k, T and eta are set by our defaults unless given",
                f"k = {k}, accounting: epsilon = {self.epsilon_accounted_:.6g} at delta = {delta:g}",
            ),
        )

    def sample_releases(self, n_draws: int, random_state: object = None, sigma: float | None = None) -> Array:
        """Further releases w-tilde (rows, k-dimensional) from the kept projected data (``keep_nonprivate=True``;
        evaluation and audits only).  ``coef_ = Phi^T w-tilde``, so an audit of w-tilde is an audit of ``coef_``."""
        check_is_fitted(self, "coef_")
        if not self.keep_nonprivate:
            raise ValueError("sample_releases needs keep_nonprivate=True (it reuses the non-private projected data)")
        return self.nonprivate_.sample_releases(n_draws, random_state, sigma)


class PrivateMarginClassifier(_Algorithm2):
    """Bassily, Mohri and Suresh (2022) Algorithm 2: an (epsilon, delta)-DP linear classifier with margin guarantees.

    A data-independent JL map Phi to k dimensions, each image projected onto the ball B^k(2r), private minimisation
    of the empirical rho-hinge loss (1/m) sum_i max(1 - y_i <w, z_i> / rho, 0) over B^k(2 Lambda), and the release
    w^Priv = Phi^T w-tilde: a dimension-independent margin guarantee (Theorem 3.2), with **our** DP-ERM step (Notes).

    Parameters
    ----------
    epsilon : float, default=1.0
        The privacy level epsilon; 0 < epsilon <= log(1/delta) is enforced (Lemma 3.1).
    delta : float, default=1e-6
        The privacy level delta; 0 < delta < 1/m (m rows) is enforced (Lemma 3.1).
    rho : float, default=0.1
        The confidence margin rho of the rho-hinge loss max(1 - y <w, z> / rho, 0), in (0, Lambda r].
    weight_bound : float, default=1.0
        The paper's Lambda: the norm bound of the comparator class B^d(Lambda); w-tilde is sought in B^k(2 Lambda)
        (step 4).
    data_norm : float or "data", default=1.0
        r, a public bound on ||x|| over all possible inputs (scale the rows into the unit ball, or pass
        ``clip=True``).  ``"data"`` reads it from the data, explicitly: the fit is then NOT private
        (``guarantee_.private`` False, epsilon infinite).
    clip : bool, default=False
        Rows with ||x|| > r raise ``ValueError`` (False) or are rescaled onto B^d(r) with a
        :class:`~dpkernels.ClippingWarning` (True).  Privacy itself does not rely on ||x|| <= r (the JL images are
        projected onto B^k(2r)); Theorem 3.2's accuracy does.
    n_components : int or None, default=None
        k, the JL dimension; None takes the paper's k (:func:`dpkernels.bounds.bassily.algorithm_2_k`, reconstructed,
        O(m epsilon)) with ``k_constant`` and ``beta``.
    projection : {"auto", "srht", "rademacher", "gaussian", "sparse"}, default="auto"
        The JL map (:mod:`dpkernels.jl`; the paper's Lemma A.4 is not recovered).  ``"auto"``: dense Rademacher when
        its matrix takes at most 256 MB, else the SRHT.
    k_constant : float, default=1.0
        The constant of the paper's k (ours: the O(.) hides it); used only when ``n_components`` is None.
    beta : float, default=0.05
        The theorem's confidence parameter (enters the paper's k only).
    n_iter : int or None, default=None
        T, the number of noisy gradient steps; None balances the two terms of the substitute's excess-risk bound
        (:func:`dpkernels.bounds.bassily.noisy_gd_iterations`), capped to ``max_iter``.
    max_iter : int, default=200
        The cap on T when ``n_iter`` is None.
    learning_rate : float or None, default=None
        eta; None: 2 Lambda / (G sqrt(T)), G^2 = L^2 + k sigma^2 (the bound's optimum).
    classes : sequence of two labels, "data" or None, default=None
        The public label set (``classes[0]`` maps to -1, ``classes[1]`` to +1).  None: the labels must be -1/+1.
        ``"data"`` reads the label set from the data, explicitly: the fit is then NOT private.
    keep_nonprivate : bool, default=False
        Keep the evaluation state ``nonprivate_`` (the projected rows); the object is then not a release.
    random_state : None, int, SeedSequence or numpy.random.Generator, default=None
        Source of the JL map (data-independent: drawn from the seed and the input dimension only) and of the noise.
        None draws from operating-system entropy; a seed is for reproduction only.

    Attributes
    ----------
    coef_ : ndarray of shape (n_features,)
        w^Priv = Phi^T w-tilde, the release.
    n_components_ : int
        k, the JL dimension used.
    n_iter_ : int
        T, the number of noisy gradient steps.
    noise_sigma_ : float
        sigma, the standard deviation of each step's Gaussian noise.
    learning_rate_ : float
        eta, the step size used.
    data_norm_ : float
        r, the norm bound used.
    epsilon_accounted_ : float
        The epsilon of the T composed steps at delta, from the exact privacy curve (dp-accounting); at most
        ``epsilon``.
    classes_ : ndarray of shape (2,)
        The public label set; ``predict`` returns ``classes_[1]`` where the decision function is > 0.
    n_features_in_ : int
        The number of input features.
    guarantee_ : Guarantee
        The privacy statement of the fit (:class:`~dpkernels.mechanisms.base.Guarantee`).
    nonprivate_ : MarginState
        The projected rows and the calibration (``keep_nonprivate=True`` only; NOT private).

    See Also
    --------
    PrivateKernelMarginClassifier : Algorithm 3 (random Fourier features, then Algorithm 2).
    ExponentialMarginClassifier : Algorithm 1 (pure epsilon-DP, small k).
    PrivateMarginSelection : a private choice of rho (ours).

    Notes
    -----
    Privacy: (epsilon, delta)-differential privacy for the replace-one neighbouring relation (m fixed), Algorithm 2
    (Lemma 3.1, Theorem 3.2).  Released: ``coef_`` (and the public constants above); Phi is data-independent.
    Assumptions: the labels lie in the public ``classes``; 0 < delta < 1/m and 0 < epsilon <= log(1/delta).
    The DP-ERM step is **ours** (the paper's Algorithm 4 was not recovered): T steps of noisy projected subgradient
    descent, composed exactly as one Gaussian mechanism (Gaussian DP) and calibrated by dp-accounting; each noisy
    gradient is released on a grid (floating-point safe), the rest is post-processing (module docstring).  Publish
    :meth:`release`, which holds no seed and no non-private state.

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(500, 10))
    >>> X /= np.linalg.norm(X, axis=1, keepdims=True)  # rows on the unit sphere: ||x|| <= r = 1
    >>> y = np.where(X[:, 0] > 0, 1, 0)
    >>> from dpkernels import PrivateMarginClassifier
    >>> clf = PrivateMarginClassifier(epsilon=1.0, delta=1e-6, rho=0.1, classes=[0, 1]).fit(X, y)
    >>> clf.guarantee_.epsilon, clf.guarantee_.delta
    (1.0, 1e-06)
    >>> clf.coef_.shape, clf.predict(X[:5]).shape
    ((10,), (5,))
    """

    _release_attributes = ("coef_", "n_components_", "n_iter_", "noise_sigma_", "learning_rate_", "data_norm_",
                           "epsilon_accounted_")

    def __init__(self, *, epsilon: float = 1.0, delta: float = 1e-6, rho: float = 0.1, weight_bound: float = 1.0,
                 data_norm: float | str = DEFAULT_DATA_NORM, clip: bool = False, n_components: int | None = None,
                 projection: str = "auto", k_constant: float = 1.0, beta: float = 0.05, n_iter: int | None = None,
                 max_iter: int = 200, learning_rate: float | None = None, classes: Sequence[Any] | None = None,
                 keep_nonprivate: bool = False, random_state: object = None) -> None:
        self.epsilon = epsilon
        self.delta = delta
        self.rho = rho
        self.weight_bound = weight_bound
        self.data_norm = data_norm
        self.clip = clip
        self.n_components = n_components
        self.projection = projection
        self.k_constant = k_constant
        self.beta = beta
        self.n_iter = n_iter
        self.max_iter = max_iter
        self.learning_rate = learning_rate
        self.classes = classes
        self.keep_nonprivate = keep_nonprivate
        self.random_state = random_state

    # estimator API ------------------------------------------------------------------------------
    def fit(self, X: ArrayLike, y: ArrayLike) -> "PrivateMarginClassifier":
        """Project the rows, run the noisy DP-ERM step and release w^Priv (Algorithm 2).

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
        X, ypm = self._validate(X, y)
        X, r = _data_norm(X, self.data_norm, self.clip)
        w, proj, state = self._fit_compressed(X, ypm, r, self._public_rng(X.shape[1]), self._noise_rng(X, ypm))
        self.data_norm_ = r
        self.coef_ = proj.adjoint(w)
        if self.keep_nonprivate:
            self.nonprivate_ = state
        self.guarantee_ = self._guarantee(
            "Bassily et al. (2022) Algorithm 2 / Theorem 3.2 (privacy), with our DP-ERM step",
            "coef_ = Phi^T w-tilde, w-tilde the average of T noisy projected subgradient steps in R^k",
            (f"||x|| <= r = {r:.6g} for every input (Theorem 3.2's domain; "
             f"{'clipped' if self.clip else 'checked'})",))
        self._void_if_data_derived()
        return self

class PrivateKernelMarginClassifier(_Algorithm2):
    """Bassily, Mohri and Suresh (2022) Algorithm 3: kernel classification with margin guarantees.

    Random Fourier features psi(x) = (r / sqrt(D)) (cos<omega_t, x>, sin<omega_t, x>)_{t <= D} of a shift-invariant
    kernel K = r^2 kappa (||psi(x)|| = r exactly, Theorem 4.1), then Algorithm 2 (:class:`PrivateMarginClassifier`)
    with norm bound 2 Lambda, data radius r and beta / 2.  The paper's D = m^2 log(2m / beta)
    (:func:`dpkernels.bounds.bassily.algorithm_3_D`) is infeasible beyond a few hundred rows; ``n_frequencies`` sets
    D and ``n_frequencies_theorem_`` reports the paper's.

    Parameters
    ----------
    epsilon : float, default=1.0
        The privacy level epsilon; 0 < epsilon <= log(1/delta) is enforced (Lemma 3.1).
    delta : float, default=1e-6
        The privacy level delta; 0 < delta < 1/m (m rows) is enforced (Lemma 3.1).
    rho : float, default=0.1
        The confidence margin rho, in (0, 2 Lambda r].
    weight_bound : float, default=1.0
        The paper's Lambda: the norm bound of the comparator class H_Lambda; Algorithm 2 runs with 2 Lambda.
    kernel : {"rbf", "laplacian", "cauchy"}, default="rbf"
        The shift-invariant kernel kappa (normalised: kappa(0) = 1), as :class:`~dpkernels.RandomFourierFeatures`.
    sigma : float, default=1.0
        The kernel's width (public, chosen without the data).
    kernel_norm : float, default=1.0
        r, the norm of every feature vector: K(x, x) = r^2.
    n_frequencies : int, default=500
        D, the number of frequencies (2D features).
    n_components : int or None, default=None
        k, the JL dimension; None takes the paper's k (:func:`dpkernels.bounds.bassily.algorithm_2_k`, reconstructed,
        O(m epsilon)) with ``k_constant`` and ``beta``.
    projection : {"auto", "srht", "rademacher", "gaussian", "sparse"}, default="auto"
        The JL map (:mod:`dpkernels.jl`; the paper's Lemma A.4 is not recovered).  ``"auto"``: dense Rademacher when
        its matrix takes at most 256 MB, else the SRHT.
    k_constant : float, default=1.0
        The constant of the paper's k (ours: the O(.) hides it); used only when ``n_components`` is None.
    beta : float, default=0.05
        The theorem's confidence parameter (enters the paper's k only).
    n_iter : int or None, default=None
        T, the number of noisy gradient steps; None balances the two terms of the substitute's excess-risk bound
        (:func:`dpkernels.bounds.bassily.noisy_gd_iterations`), capped to ``max_iter``.
    max_iter : int, default=200
        The cap on T when ``n_iter`` is None.
    learning_rate : float or None, default=None
        eta; None: 2 Lambda / (G sqrt(T)), G^2 = L^2 + k sigma^2 (the bound's optimum).
    classes : sequence of two labels, "data" or None, default=None
        The public label set (``classes[0]`` maps to -1, ``classes[1]`` to +1).  None: the labels must be -1/+1.
        ``"data"`` reads the label set from the data, explicitly: the fit is then NOT private.
    keep_nonprivate : bool, default=False
        Keep the evaluation state ``nonprivate_`` (the projected rows); the object is then not a release.
    random_state : None, int, SeedSequence or numpy.random.Generator, default=None
        Source of the JL map (data-independent: drawn from the seed and the input dimension only) and of the noise.
        None draws from operating-system entropy; a seed is for reproduction only.

    Attributes
    ----------
    coef_ : ndarray of shape (2 * n_frequencies,)
        w^Priv = Phi^T w-tilde in feature space, the release.
    frequencies_ : ndarray of shape (n_frequencies, n_features)
        omega_1..omega_D (data-independent, released with ``coef_``).
    n_frequencies_theorem_ : int
        The paper's D = m^2 log(2m / beta) for this m and beta.
    n_components_ : int
        k, the JL dimension used.
    n_iter_ : int
        T, the number of noisy gradient steps.
    noise_sigma_ : float
        sigma, the standard deviation of each step's Gaussian noise.
    learning_rate_ : float
        eta, the step size used.
    data_norm_ : float
        r = ``kernel_norm``, the feature norm.
    epsilon_accounted_ : float
        The epsilon of the T composed steps at delta, from the exact privacy curve (dp-accounting); at most
        ``epsilon``.
    classes_ : ndarray of shape (2,)
        The public label set; ``predict`` returns ``classes_[1]`` where the decision function is > 0.
    n_features_in_ : int
        The number of input features.
    guarantee_ : Guarantee
        The privacy statement of the fit (:class:`~dpkernels.mechanisms.base.Guarantee`).
    nonprivate_ : MarginState
        The projected features and the calibration (``keep_nonprivate=True`` only; NOT private).

    See Also
    --------
    PrivateMarginClassifier : Algorithm 2.

    Notes
    -----
    Privacy: (epsilon, delta)-differential privacy for the replace-one neighbouring relation (m fixed), Algorithm 3
    (Theorem 4.2).  No bound on ||x|| is needed: ||psi(x)|| = r for every x.  Released: ``coef_`` and the frequencies
    (data-independent).  Assumptions: the labels lie in the public ``classes``; 0 < delta < 1/m and
    0 < epsilon <= log(1/delta).  The DP-ERM step is **ours**, as in :class:`PrivateMarginClassifier` (noisy projected
    subgradient descent composed exactly and calibrated by dp-accounting, floating-point safe).  Publish
    :meth:`release`.

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(500, 10))
    >>> X /= np.linalg.norm(X, axis=1, keepdims=True)  # rows on the unit sphere: ||x|| <= r = 1
    >>> y = np.where(X[:, 0] > 0, 1, 0)
    >>> from dpkernels import PrivateKernelMarginClassifier
    >>> clf = PrivateKernelMarginClassifier(epsilon=1.0, delta=1e-6, rho=0.1, n_frequencies=50,
    ...                                     classes=[0, 1]).fit(X, y)
    >>> clf.guarantee_.epsilon, clf.guarantee_.delta
    (1.0, 1e-06)
    >>> clf.coef_.shape, clf.frequencies_.shape, clf.predict(X[:5]).shape
    ((100,), (50, 10), (5,))
    """

    _release_attributes = ("coef_", "frequencies_", "n_frequencies_theorem_", "n_components_", "n_iter_", "noise_sigma_",
                           "learning_rate_", "data_norm_", "epsilon_accounted_")
    _lambda_factor = 2.0
    _beta_factor = 0.5

    def __init__(self, *, epsilon: float = 1.0, delta: float = 1e-6, rho: float = 0.1, weight_bound: float = 1.0,
                 kernel: str = "rbf", sigma: float = 1.0, kernel_norm: float = 1.0, n_frequencies: int = 500,
                 n_components: int | None = None, projection: str = "auto", k_constant: float = 1.0, beta: float = 0.05,
                 n_iter: int | None = None, max_iter: int = 200, learning_rate: float | None = None,
                 classes: Sequence[Any] | None = None, keep_nonprivate: bool = False, random_state: object = None) -> None:
        self.epsilon = epsilon
        self.delta = delta
        self.rho = rho
        self.weight_bound = weight_bound
        self.kernel = kernel
        self.sigma = sigma
        self.kernel_norm = kernel_norm
        self.n_frequencies = n_frequencies
        self.n_components = n_components
        self.projection = projection
        self.k_constant = k_constant
        self.beta = beta
        self.n_iter = n_iter
        self.max_iter = max_iter
        self.learning_rate = learning_rate
        self.classes = classes
        self.keep_nonprivate = keep_nonprivate
        self.random_state = random_state

    def _features(self, X: Array) -> Array:
        return self.data_norm_ * rff_paired(X, self.frequencies_)

    def fit(self, X: ArrayLike, y: ArrayLike) -> "PrivateKernelMarginClassifier":
        """Map the rows to random features and run Algorithm 2 on them (Algorithm 3).

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
        X, ypm = self._validate(X, y)
        r = check_positive(self.kernel_norm, "kernel_norm")
        D = _check_int(self.n_frequencies, "n_frequencies")
        beta = check_probability(self.beta, "beta")
        public = self._public_rng(X.shape[1])
        rff = RandomFourierFeatures(self.kernel, self.sigma, D, random_state=public).fit(X[:1])
        self.frequencies_ = rff.frequencies_
        self.data_norm_ = r
        w, proj, state = self._fit_compressed(X, ypm, r, public, self._noise_rng(X, ypm), features=self._features)
        self.coef_ = proj.adjoint(w)
        self.n_frequencies_theorem_ = B.algorithm_3_D(X.shape[0], beta)
        if self.keep_nonprivate:
            self.nonprivate_ = state
        self.guarantee_ = self._guarantee(
            "Bassily et al. (2022) Algorithm 3 / Theorem 4.2 (privacy), with our DP-ERM step in Algorithm 2",
            "coef_ = Phi^T w-tilde in R^{2D} and the frequencies omega_1..omega_D (data-independent)",
            (f"K(x, x) = r^2 = {r * r:.6g}: ||psi(x)|| = r for every x (no bound on ||x|| needed)",
             f"D = {D} frequencies (Theorem 4.1's D for this m and beta: {self.n_frequencies_theorem_})",
             f"Algorithm 2 is run with norm bound 2 Lambda = {2 * self.weight_bound:g} and beta / 2"))
        self._void_if_data_derived()
        return self



# ----------------------------------------------------------------------------------------------
# Algorithm 1: the exponential mechanism over a cover (pure DP)
# ----------------------------------------------------------------------------------------------
def grid_cover(radius: float, gamma: float, k: int, max_size: int = MAX_COVER) -> Array:
    """A gamma-cover of B^k(radius): the grid h Z^k (h = 2 gamma / sqrt(k)) within radius + gamma of 0.  Every point of
    the ball is within h sqrt(k) / 2 = gamma of its nearest grid point, whose norm is then <= radius + gamma."""
    k = _check_int(k, "k")
    h = 2.0 * check_positive(gamma, "gamma") / math.sqrt(k)
    n = math.ceil((check_positive(radius, "radius") + gamma) / h)
    if (2 * n + 1) ** k > 8 * max_size:
        raise ValueError(f"the grid cover needs about (2 * {n} + 1)^{k} points, more than this enumeration allows "
                         f"({max_size}); raise rho / r or lower k")
    axis = h * np.arange(-n, n + 1)
    grid = np.stack(np.meshgrid(*([axis] * k), indexing="ij"), axis=-1).reshape(-1, k)
    grid = grid[np.einsum("ij,ij->i", grid, grid) <= (radius + gamma) ** 2]
    if len(grid) > max_size:
        raise ValueError(f"the grid cover has {len(grid)} points, more than {max_size}")
    return grid


def _margin_error_counts(Zy: Array, C: Array, margin: float, chunk: int = 1 << 22) -> NDArray[np.int64]:
    """#{i : y_i <c, z_i> <= margin} for every cover point c (rows of C); Zy = y * Z."""
    out = np.empty(len(C), dtype=np.int64)
    step = max(1, chunk // max(1, Zy.shape[0]))
    for s in range(0, len(C), step):
        out[s:s + step] = np.count_nonzero(Zy @ C[s:s + step].T <= margin, axis=0)
    return out


@dataclass
class CoverState:
    """Algorithm 1's non-private evaluation state (``keep_nonprivate=True`` only): the cover, every cover point's
    margin-error count on the training data (the exponential mechanism's scores) and the JL map.  Not a release."""

    cover: Array
    counts: NDArray[np.int64]
    epsilon: float
    projection: Any = None

    def log_probabilities(self) -> Array:
        """The exact law of the release: log P(c) = -eps count_c / 2 - log sum_c' exp(-eps count_c' / 2)."""
        a = -0.5 * self.epsilon * self.counts.astype(np.float64)
        return a - (a.max() + math.log(np.exp(a - a.max()).sum()))

    def sample_indices(self, n_draws: int, random_state: object = None) -> NDArray[np.intp]:
        """Indices of ``n_draws`` further releases, each drawn by the exact sampler of the fit."""
        rng = check_random_state(random_state)
        u = -self.counts.astype(np.float64)
        return np.array([lattice.exponential_mechanism_exact(u, self.epsilon, 1.0, rng) for _ in range(int(n_draws))])


class ExponentialMarginClassifier(_MarginBase):
    """Bassily, Mohri and Suresh (2022) Algorithm 1: pure epsilon-DP by the exponential mechanism over a cover.

    Phi (k x d, entries +-1/sqrt(k)), z_i = Phi x_i; C a grid gamma-cover of B^k(2 Lambda) (:func:`grid_cover`,
    gamma = rho / (10 r) unless ``cover_spacing`` is given); w-tilde drawn from C with P(c) proportional to
    exp(-eps m R-hat^{rho'}(c) / 2) = exp(-eps count_c / 2), count_c = #{i : y_i <c, z_i> <= rho'}, exactly
    (:func:`dpkernels.lattice.exponential_mechanism_exact`: Gumbel-max, no floating-point loss); release
    ``coef_`` = Phi^T w-tilde.  Run here for k = 1 to 3 only (exact enumeration): the theorem's k
    (:func:`dpkernels.bounds.bassily.theorem_3_1_k`) is tens to hundreds and its cover astronomically large
    (:func:`~dpkernels.bounds.bassily.algorithm_1_log10_cover_size`), so k <= 3 is a reduced version, not the
    theorem's algorithm.

    Parameters
    ----------
    epsilon : float, default=1.0
        The privacy level epsilon (pure DP: delta = 0).
    rho : float, default=0.5
        The confidence margin rho, in (0, Lambda r]; sets the cover spacing.
    weight_bound : float, default=1.0
        The paper's Lambda, the norm bound: the cover spans B^k(2 Lambda).
    data_norm : float or "data", default=1.0
        r, a public bound on ||x|| (sets the cover spacing gamma = rho / (10 r); privacy does not depend on it).
        ``"data"`` reads it from the data, explicitly: the fit is then NOT private.
    clip : bool, default=False
        Rows with ||x|| > r raise ``ValueError`` (False) or are rescaled onto B^d(r) with a
        :class:`~dpkernels.ClippingWarning` (True).
    n_components : int, default=1
        k, the JL dimension, 1 to 3 (the cover grows as (1 + 40 Lambda r / rho)^k).
    score_margin : float or None, default=None
        rho', the margin of the score (lost in the text; ours): None takes rho / 2.
    cover_spacing : float or None, default=None
        gamma, the cover's resolution; None: rho / (10 r).
    classes : sequence of two labels, "data" or None, default=None
        The public label set (``classes[0]`` maps to -1, ``classes[1]`` to +1).  None: the labels must be -1/+1.
        ``"data"`` reads the label set from the data, explicitly: the fit is then NOT private.
    keep_nonprivate : bool, default=False
        Keep the cover and its scores as ``nonprivate_`` (evaluation only); the object is then not a release.
    random_state : None, int, SeedSequence or numpy.random.Generator, default=None
        Source of Phi (data-independent) and of the selection.  None draws from operating-system entropy; a seed is
        for reproduction only.

    Attributes
    ----------
    coef_ : ndarray of shape (n_features,)
        Phi^T c for the selected cover point c, the release.
    cover_size_ : int
        The number of cover points.
    n_components_ : int
        k, the JL dimension.
    data_norm_ : float
        r, the norm bound used.
    classes_ : ndarray of shape (2,)
        The public label set; ``predict`` returns ``classes_[1]`` where the decision function is > 0.
    n_features_in_ : int
        The number of input features.
    guarantee_ : Guarantee
        The privacy statement of the fit (:class:`~dpkernels.mechanisms.base.Guarantee`).
    nonprivate_ : CoverState
        The cover and every point's score on the training data (``keep_nonprivate=True`` only; NOT private).

    See Also
    --------
    PrivateMarginClassifier : Algorithm 2, (epsilon, delta)-DP and efficient.

    Notes
    -----
    Privacy: pure epsilon-differential privacy (delta = 0) for the replace-one neighbouring relation, Algorithm 1 /
    Theorem 3.1 (its privacy part): the score counts margin errors and changes by at most 1 when one example is
    replaced, for any rows.  Released: ``coef_`` (and the public constants above); Phi and the cover are
    data-independent.  Assumptions: the labels lie in the public ``classes``.  The score margin rho' and k <= 3 are
    ours.  The sampling is exact (floating-point safe).  Publish :meth:`release`.

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(500, 10))
    >>> X /= np.linalg.norm(X, axis=1, keepdims=True)  # rows on the unit sphere: ||x|| <= r = 1
    >>> y = np.where(X[:, 0] > 0, 1, 0)
    >>> from dpkernels import ExponentialMarginClassifier
    >>> clf = ExponentialMarginClassifier(epsilon=1.0, rho=0.5, n_components=2, classes=[0, 1]).fit(X, y)
    >>> clf.guarantee_.epsilon, clf.guarantee_.delta
    (1.0, 0.0)
    >>> clf.coef_.shape, clf.n_components_, clf.predict(X[:5]).shape
    ((10,), 2, (5,))
    """

    _release_attributes = ("coef_", "cover_size_", "n_components_", "data_norm_")

    def __init__(self, *, epsilon: float = 1.0, rho: float = 0.5, weight_bound: float = 1.0, data_norm: float | str = DEFAULT_DATA_NORM,
                 clip: bool = False, n_components: int = 1, score_margin: float | None = None,
                 cover_spacing: float | None = None, classes: Sequence[Any] | None = None,
                 keep_nonprivate: bool = False, random_state: object = None) -> None:
        self.epsilon = epsilon
        self.rho = rho
        self.weight_bound = weight_bound
        self.data_norm = data_norm
        self.clip = clip
        self.n_components = n_components
        self.score_margin = score_margin
        self.cover_spacing = cover_spacing
        self.classes = classes
        self.keep_nonprivate = keep_nonprivate
        self.random_state = random_state

    def fit(self, X: ArrayLike, y: ArrayLike) -> "ExponentialMarginClassifier":
        """Score every cover point and draw one by the exponential mechanism (Algorithm 1).

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
        X, ypm = self._validate(X, y)
        X, r = _data_norm(X, self.data_norm, self.clip)
        epsilon = check_epsilon(self.epsilon)
        Lambda = check_positive(self.weight_bound, "weight_bound")
        rho = check_positive(self.rho, "rho")
        if rho > Lambda * r * (1.0 + 1e-12):
            raise ValueError(f"rho = {rho:g} must lie in (0, Lambda r] = (0, {Lambda * r:g}]")
        k = _check_int(self.n_components, "n_components")
        if k > 3:
            raise ValueError(f"n_components = {k}: the exact enumeration runs for k <= 3 only (the cover grows as "
                             f"(1 + 40 Lambda r / rho)^k)")
        margin = rho / 2.0 if self.score_margin is None else float(self.score_margin)
        gamma = B.algorithm_1_cover_spacing(rho, r) if self.cover_spacing is None else check_positive(self.cover_spacing, "cover_spacing")
        proj = RademacherJL(n_components=k, random_state=self._public_rng(X.shape[1])).fit(X[:1])
        rng = self._noise_rng(X, ypm)
        cover = grid_cover(2.0 * Lambda, gamma, k)
        counts = _margin_error_counts(proj.transform(X) * ypm[:, None], cover, margin)
        idx = lattice.exponential_mechanism_exact(-counts.astype(np.float64), epsilon, 1.0, rng)
        self.coef_ = proj.adjoint(cover[idx])
        self.cover_size_, self.n_components_, self.data_norm_ = len(cover), k, r
        if self.keep_nonprivate:
            self.nonprivate_ = CoverState(cover, counts, epsilon, proj)
        self.guarantee_ = Guarantee(
            epsilon=epsilon, delta=0.0, neighbouring=REPLACE_ONE,
            statement="Bassily et al. (2022) Algorithm 1 / Theorem 3.1 (privacy), k <= 3",
            released="coef_ = Phi^T c for the cover point c drawn by the exponential mechanism",
            attributes=self._release_attributes,
            assumptions=(f"labels in the public set classes = {self.classes_.tolist()}",
                         "Phi and the cover are data-independent",
                         f"score: margin errors at rho' = {margin:.6g}, sensitivity 1 (replace-one changes one term)",
                         f"||x|| <= r = {r:.6g} (Theorem 3.1's domain; sets the cover spacing gamma = {gamma:.6g})"),
            noise="exact Gumbel-max sampling of the exponential mechanism (dpkernels.lattice): floating-point safe",
            notes=self._notes() + (f"k = {k}, |C| = {len(cover)}; the score margin rho' and k <= 3 are ours",),
        )
        self._void_if_data_derived()
        return self


# ----------------------------------------------------------------------------------------------
# ours: private choice of rho
# ----------------------------------------------------------------------------------------------
@dataclass
class SelectionState:
    """The selection's non-private evaluation state (``keep_nonprivate=True`` only): the projected training rows, every
    candidate's w-tilde and its validation mistakes.  Not a release."""

    Z: Array
    candidates: Array
    mistakes: NDArray[np.int64]


class PrivateMarginSelection(_MarginBase):
    """A private choice of the margin rho for Bassily et al.'s Algorithm 2 over a data-independent grid (**ours**).

    The paper's Appendix F was not recovered.  The rows are split (by a public random permutation) into a training
    part (1 - ``validation_fraction``) and a disjoint validation part.  On the training part, Algorithm 2 is run once
    for every rho of ``rhos`` with one shared JL map; the G candidates' G x T Gaussian steps are calibrated *jointly*
    so that their composition is exactly (epsilon, delta)-DP (Gaussian DP: each step gets noise multiplier
    sqrt(G T) s, s the Gaussian mechanism's multiplier at (epsilon, delta); :func:`calibrate_noisy_gd`).  On the
    validation part, the exponential mechanism with ``epsilon_select`` picks a candidate from its mistake counts
    (sensitivity 1), exactly sampled.

    Parameters
    ----------
    rhos : sequence of float, default=(0.05, 0.1, 0.2, 0.4)
        The candidate margins (public: chosen without the data), each in (0, Lambda r].
    epsilon : float, default=1.0
        The privacy level epsilon; 0 < epsilon <= log(1/delta) is enforced (Lemma 3.1).
    delta : float, default=1e-6
        The privacy level delta; 0 < delta < 1/m (m rows) is enforced (Lemma 3.1).
    epsilon_select : float or None, default=None
        The exponential mechanism's epsilon on the validation part; None: ``epsilon``.
    validation_fraction : float, default=0.2
        The fraction of rows in the validation part.
    weight_bound : float, default=1.0
        The paper's Lambda: the norm bound of the comparator class B^d(Lambda); w-tilde is sought in B^k(2 Lambda).
    data_norm : float or "data", default=1.0
        r, a public bound on ||x|| over all possible inputs (scale the rows into the unit ball, or pass
        ``clip=True``).  ``"data"`` reads it from the data, explicitly: the fit is then NOT private
        (``guarantee_.private`` False, epsilon infinite).
    clip : bool, default=False
        Rows with ||x|| > r raise ``ValueError`` (False) or are rescaled onto B^d(r) with a
        :class:`~dpkernels.ClippingWarning` (True).  Privacy itself does not rely on ||x|| <= r (the JL images are
        projected onto B^k(2r)); Theorem 3.2's accuracy does.
    n_components : int or None, default=None
        k, the JL dimension; None takes the paper's k (:func:`dpkernels.bounds.bassily.algorithm_2_k`, reconstructed,
        O(m epsilon)) with ``k_constant`` and ``beta``.
    projection : {"auto", "srht", "rademacher", "gaussian", "sparse"}, default="auto"
        The JL map (:mod:`dpkernels.jl`; the paper's Lemma A.4 is not recovered).  ``"auto"``: dense Rademacher when
        its matrix takes at most 256 MB, else the SRHT.
    k_constant : float, default=1.0
        The constant of the paper's k (ours: the O(.) hides it); used only when ``n_components`` is None.
    beta : float, default=0.05
        The theorem's confidence parameter (enters the paper's k only).
    n_iter : int or None, default=None
        T, the number of noisy gradient steps; None balances the two terms of the substitute's excess-risk bound
        (:func:`dpkernels.bounds.bassily.noisy_gd_iterations`), capped to ``max_iter``.
    max_iter : int, default=200
        The cap on T when ``n_iter`` is None.
    classes : sequence of two labels, "data" or None, default=None
        The public label set (``classes[0]`` maps to -1, ``classes[1]`` to +1).  None: the labels must be -1/+1.
        ``"data"`` reads the label set from the data, explicitly: the fit is then NOT private.
    keep_nonprivate : bool, default=False
        Keep the evaluation state ``nonprivate_`` (the projected rows); the object is then not a release.
    random_state : None, int, SeedSequence or numpy.random.Generator, default=None
        Source of the JL map (data-independent: drawn from the seed and the input dimension only) and of the noise.
        None draws from operating-system entropy; a seed is for reproduction only.

    Attributes
    ----------
    coef_ : ndarray of shape (n_features,)
        The selected candidate's w^Priv, the release.
    rho_ : float
        The selected margin.
    selected_ : int
        Its index in ``rhos``.
    n_components_ : int
        k, the JL dimension used.
    n_iter_ : int
        T, the number of noisy gradient steps.
    noise_sigma_ : float
        sigma of the selected candidate's steps.
    data_norm_ : float
        r, the norm bound used.
    epsilon_accounted_ : float
        The epsilon of all G x T composed steps at delta, from the exact privacy curve (dp-accounting); at most
        ``epsilon``.
    classes_ : ndarray of shape (2,)
        The public label set; ``predict`` returns ``classes_[1]`` where the decision function is > 0.
    n_features_in_ : int
        The number of input features.
    guarantee_ : Guarantee
        The privacy statement of the fit (:class:`~dpkernels.mechanisms.base.Guarantee`).
    nonprivate_ : SelectionState
        The projected rows, every candidate and its validation mistakes (``keep_nonprivate=True`` only; NOT private).

    See Also
    --------
    PrivateMarginClassifier : Algorithm 2 at one rho.

    Notes
    -----
    Privacy: (max(epsilon, epsilon_select), delta)-differential privacy for the replace-one neighbouring relation:
    a replaced row is in one part only, so the candidates' (epsilon, delta) and the selection's epsilon_select
    combine by parallel composition.  Released: the chosen model, its rho and its index (and the public constants
    above).  Assumptions: the labels lie in the public ``classes``; the grid ``rhos`` and the split are
    data-independent; Lemma 3.1's conditions on the training part.  Publish :meth:`release`.

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(500, 10))
    >>> X /= np.linalg.norm(X, axis=1, keepdims=True)  # rows on the unit sphere: ||x|| <= r = 1
    >>> y = np.where(X[:, 0] > 0, 1, 0)
    >>> from dpkernels import PrivateMarginSelection
    >>> sel = PrivateMarginSelection(rhos=(0.05, 0.1, 0.2), epsilon=1.0, delta=1e-6, classes=[0, 1]).fit(X, y)
    >>> sel.guarantee_.epsilon, sel.guarantee_.delta
    (1.0, 1e-06)
    >>> sel.rho_ in (0.05, 0.1, 0.2), sel.predict(X[:5]).shape
    (True, (5,))
    """

    _release_attributes = ("coef_", "rho_", "selected_", "n_components_", "n_iter_", "noise_sigma_", "data_norm_",
                           "epsilon_accounted_")

    def __init__(self, rhos: Sequence[float] = (0.05, 0.1, 0.2, 0.4), *, epsilon: float = 1.0, delta: float = 1e-6,
                 epsilon_select: float | None = None, validation_fraction: float = 0.2, weight_bound: float = 1.0,
                 data_norm: float | str = DEFAULT_DATA_NORM, clip: bool = False, n_components: int | None = None,
                 projection: str = "auto", k_constant: float = 1.0, beta: float = 0.05, n_iter: int | None = None,
                 max_iter: int = 200, classes: Sequence[Any] | None = None, keep_nonprivate: bool = False,
                 random_state: object = None) -> None:
        self.rhos = rhos
        self.epsilon = epsilon
        self.delta = delta
        self.epsilon_select = epsilon_select
        self.validation_fraction = validation_fraction
        self.weight_bound = weight_bound
        self.data_norm = data_norm
        self.clip = clip
        self.n_components = n_components
        self.projection = projection
        self.k_constant = k_constant
        self.beta = beta
        self.n_iter = n_iter
        self.max_iter = max_iter
        self.classes = classes
        self.keep_nonprivate = keep_nonprivate
        self.random_state = random_state

    def fit(self, X: ArrayLike, y: ArrayLike) -> "PrivateMarginSelection":
        """Run Algorithm 2 for every rho and select one privately on the validation part.

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
        X, ypm = self._validate(X, y)
        X, r = _data_norm(X, self.data_norm, self.clip)
        rhos = np.asarray(list(self.rhos), dtype=np.float64)
        if rhos.ndim != 1 or len(rhos) < 1 or not np.all(np.isfinite(rhos) & (rhos > 0)):
            raise ValueError(f"rhos must be a non-empty sequence of positive margins, got {self.rhos!r}")
        frac = check_probability(self.validation_fraction, "validation_fraction")
        eps_sel = check_epsilon(self.epsilon if self.epsilon_select is None else self.epsilon_select, "epsilon_select")
        public = self._public_rng(X.shape)
        rng = self._noise_rng(X, ypm)
        m = X.shape[0]
        n_val = int(round(frac * m))
        if n_val < 1 or m - n_val < 2:
            raise ValueError(f"n_samples = {m}: too few rows for a training and a validation part (validation_fraction = {frac})")
        order = public.permutation(m)  # a data-independent split
        tr, va = order[n_val:], order[:n_val]
        base = PrivateMarginClassifier(epsilon=self.epsilon, delta=self.delta, rho=float(rhos.max()), weight_bound=self.weight_bound,
                                       data_norm=r, n_components=self.n_components, projection=self.projection,
                                       k_constant=self.k_constant, beta=self.beta, max_iter=self.max_iter, n_iter=self.n_iter)
        mt = len(tr)
        # Lemma 3.1's conditions for the training part (delta < 1/m_train implies delta < 1/m)
        epsilon, delta, Lambda, _, k = base._settings(mt, r)
        proj = _projection(self.projection, k, X.shape[1], public).fit(X[:1])
        Z = project_rows(proj.transform(X[tr]), 2.0 * r)
        G = len(rhos)
        s1 = gaussian_sigma(epsilon, delta, 1.0)
        T = (B.noisy_gd_iterations(mt, k, s1 * math.sqrt(G), _check_int(self.max_iter, "max_iter")) if self.n_iter is None
             else _check_int(self.n_iter, "n_iter"))
        multiplier = calibrate_noisy_gd(epsilon, delta, 1.0, G * T)
        if np.any(rhos > Lambda * r * (1.0 + 1e-12)):
            raise ValueError(f"every rho must lie in (0, Lambda r] = (0, {Lambda * r:g}], got {rhos.tolist()}")
        L = 2.0 * r / rhos
        sigmas = multiplier * np.array([gradient_sensitivity(Lc, mt) for Lc in L])
        etas = 2.0 * Lambda / (np.sqrt(L * L + k * sigmas * sigmas) * math.sqrt(T))
        Wc = noisy_projected_gd(Z, ypm[tr], rho=rhos, radius=2.0 * Lambda, sigma=sigmas, n_iter=T, learning_rate=etas,
                                random_state=rng, n_chains=G)
        mistakes = np.count_nonzero((proj.transform(X[va]) @ Wc.T) * ypm[va][:, None] <= 0, axis=0)
        j = lattice.exponential_mechanism_exact(-mistakes.astype(np.float64), eps_sel, 1.0, rng)
        self.selected_, self.rho_ = int(j), float(rhos[j])
        self.coef_ = proj.adjoint(Wc[j])
        self.n_components_, self.n_iter_, self.noise_sigma_, self.data_norm_ = k, T, float(sigmas[j]), r
        self.epsilon_accounted_ = gaussian_epsilon(multiplier, delta, math.sqrt(G * T))
        if self.keep_nonprivate:
            self.nonprivate_ = SelectionState(Z, Wc, mistakes)
        self.guarantee_ = Guarantee(
            epsilon=max(epsilon, eps_sel), delta=delta, neighbouring=REPLACE_ONE,
            statement="ours: Algorithm 2 for each rho of a data-independent grid + exponential mechanism on a disjoint "
                      "validation part (parallel composition)",
            released="coef_ of the selected candidate, its rho and index",
            attributes=self._release_attributes,
            assumptions=(f"labels in the public set classes = {self.classes_.tolist()}",
                         f"the grid rhos = {rhos.tolist()} and the split are data-independent",
                         f"training part ({mt} rows): {G} candidates x {T} Gaussian steps composed to ({epsilon:g}, "
                         f"{delta:g}) (Gaussian DP, dp-accounting; accounted epsilon {self.epsilon_accounted_:.6g})",
                         f"validation part ({n_val} rows): exponential mechanism, epsilon_select = {eps_sel:g}, "
                         "mistake counts have sensitivity 1",
                         f"||x|| <= r = {r:.6g}"),
            noise=noise_description("lattice"),
            notes=self._notes() + ("the selection of rho is ours (the paper's Appendix F was not recovered)",),
        )
        self._void_if_data_derived()
        return self
