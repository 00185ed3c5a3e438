"""Hall, Rinaldo and Wasserman (2013): (epsilon, delta)-DP release of functions with Gaussian-process noise.

* :func:`gaussian_mechanism` (Proposition 1.1): a vector v_X released as N(v_X, s^2 Sigma) for a Mahalanobis
  sensitivity ||Sigma^{-1/2}(v_X - v_X')|| <= Delta, with s from the paper's c = 2 log(2/delta) Delta^2 / eps^2
  (``calibration="hall"``) or the exact Gaussian calibration of dp-accounting (``"analytic"``).
* :class:`GaussianProcessRelease` (Proposition 2.1): the released *function* f_X + s G, G ~ GP(0, K), evaluated
  lazily: every call returns values of one sample path (points seen before return their stored values; new points
  are drawn conditionally on every value released so far by extending a Cholesky factor).  It holds the data's mean
  function and the noise: it is the curator, never the release.
* :class:`PrivateKDE` (Section 3, first example) and :class:`PrivateKernelMachine` (Section 3, second example).

Floating point.  Every released value is the exact rounding of the continuous mechanism's real output to a public
grid (:mod:`dpkernels.lattice`; ``noise="continuous"`` keeps the paper's float sampler and warns).  The continuous
mechanism actually run is N(m, s^2 A A') where m is the float mean vector and A the float Cholesky factor of the
Gram matrix plus a jitter tau I, taken as exact real matrices.  Proposition 2.1's argument needs A A' to dominate
the Gram matrix K of the RKHS kernel on the released points, and m to be the exact mean.  Both are enforced and
folded into the calibration (:func:`float_margins`):

* A A' = K^ + tau I + E with ||E||_2 <= 2 gamma_{M+2} (2 M (k0 + tau) + tau) (Higham, Accuracy and Stability,
  Theorems 8.5 and 10.3: triangular solves and Cholesky, any summation order; conventional BLAS/LAPACK, no
  Strassen-type products) and ||K^ - K||_2 <= M k0 delta_K (kernel entries computed from direct differences
  (scipy's cdist) and exp, relative accuracy delta_K); the object refuses more than ``max_points`` points and the
  jitter must leave tau_eff = tau - ||E|| - ||K^ - K|| >= tau / 2, so that A A' >= K + (tau/2) I;
* the mean's float error ``|m(x) - f_X(x)| <= e`` (a data-independent bound: pairwise summation of n terms of size
  <= W k0) moves the Mahalanobis distance of neighbouring means by at most 2 sqrt(M) e / sqrt(tau_eff), which is
  added to the RKHS sensitivity before calibration (``sensitivity_`` is the sum).

Adaptively chosen points are covered: the conditional law of each new block given the earlier continuous values is
Gaussian with a data-independent covariance and a mean shift whose squared Mahalanobis norms add up to that of the
joint vector (block-triangular whitening), so the release is a Gaussian privacy filter with total sensitivity
``sensitivity_`` (fully adaptive composition of Gaussian DP, Smith and Thakurta 2022), and a post-processing of it.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy.linalg import LinAlgError, cho_factor, cho_solve, solve_triangular
from scipy.linalg import cholesky as _cholesky
from scipy.spatial.distance import cdist
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.utils.validation import check_is_fitted

from dpkernels import lattice
from dpkernels._validation import (
    ClippingWarning,
    check_delta,
    check_delta_far_below_inverse_n,
    delta_ceiling,
    check_epsilon,
    check_finite_array,
    check_positive,
    check_random_state,
    diagnostics_enabled,
)
from dpkernels.accounting import gaussian_delta, gaussian_sigma
from dpkernels.bounds import hall as HB
from dpkernels.losses import Hinge, Logistic
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
    void_guarantee,
)
from dpkernels.solvers import hinge_duality_gap, solve_erm, solve_smooth_erm

__all__ = [
    "CalibrationWarning",
    "GaussianKernel",
    "FloatMargins",
    "float_margins",
    "GaussianRelease",
    "gaussian_mechanism",
    "calibrate",
    "GaussianProcessRelease",
    "sample_paths",
    "PrivateKDE",
    "PrivateKernelMachine",
    "kernel_expansion",
    "gp_factor",
    "KernelMachineSolution",
    "solve_kernel_machine",
    "loss_lipschitz",
    "expansion_error",
]

Array = NDArray[np.float64]
_U = 2.0**-53
#: Relative accuracy assumed of numpy's float64 exp (64 times its documented 4-ulp bound 2^-50, as dpkernels.lattice).
_EXP_REL = 2.0**-44
CALIBRATIONS = ("analytic", "hall")
#: Relative tolerance on delta when the privacy curve (dp-accounting's PLD, float) is evaluated at a calibrated sigma.
DELTA_RTOL = 1e-9
#: Default jitter, relative to K(x, x): tau = jitter * k0.
DEFAULT_JITTER = 1e-6
DEFAULT_MAX_POINTS = 4096
#: Default grid points per axis of PrivateKDE's release at fit.
DEFAULT_GRID = {1: 257, 2: 33, 3: 13}


class CalibrationWarning(RuntimeWarning):
    """A calibration does not deliver the (epsilon, delta) it was asked for (e.g. Proposition 1.1 at a large epsilon).

    Raised as a warning by ``calibration="hall"`` when Proposition 1.1's noise falls short of (epsilon, delta); the
    guarantee then states the delta that holds (larger than the one asked for).  ``calibration="analytic"`` (the
    default) never falls short.
    """


def _gamma(k: float) -> float:
    """gamma_k = k u / (1 - k u) (Higham's constant)."""
    ku = k * _U
    if ku >= 0.5:
        raise ValueError("too many terms for the rounding-error bound")
    return ku / (1.0 - ku)


# ----------------------------------------------------------------------------------------------
# the kernel
# ----------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class GaussianKernel:
    """K(x, y) = k0 exp(-||x - y||^2 / (2 sigma^2)) with k0 = (2 pi sigma^2)^{-d/2} (``normalised``, the KDE's kernel)
    or k0 = 1.  Squared distances come from direct differences (scipy's cdist "sqeuclidean"), never from the
    ||x||^2 + ||y||^2 - 2 x'y expansion, so each entry has a small relative error (:meth:`entry_error`)."""

    sigma: float
    normalised: bool = False

    def __post_init__(self) -> None:
        check_positive(self.sigma, "bandwidth sigma")

    def k0(self, d: int) -> float:
        """K(x, x)."""
        return HB.gaussian_kernel_sup(self.sigma, d) if self.normalised else 1.0

    def __call__(self, X: Array, Y: Array) -> Array:
        X, Y = np.atleast_2d(X), np.atleast_2d(Y)
        d = X.shape[1]
        r2 = cdist(X, Y, "sqeuclidean")
        out = np.exp(r2 * (-1.0 / (2.0 * self.sigma * self.sigma)))
        k0 = self.k0(d)
        return out if k0 == 1.0 else out * k0

    def entry_error(self, d: int) -> float:
        """A bound on ``|K^(x, y) - K(x, y)| / k0`` for one computed entry: the argument a = r2 / (2 sigma^2) has
        relative error <= (d + 4) u, ``|d exp(-a)| <= a e^{-a} |da/a| <= |da/a| / e``, exp itself <= _EXP_REL, k0 and
        the product (d / 2 + 6) u."""
        return (d + 4) * _U + _EXP_REL + (d / 2 + 6) * _U


def kernel_expansion(kernel: GaussianKernel, points: Array, centers: Array, coef: Array | float) -> Array:
    """sum_j coef_j K(centers_j, x) at every point x, summed pairwise (depth ceil(log2 n)) so that the float error is
    at most (gamma_{depth + 2} + entry_error) k0 ``sum_j |coef_j|`` (:func:`expansion_error`).  ``coef`` may be a
    scalar (the same weight for every centre, e.g. 1/n for the KDE)."""
    points = np.atleast_2d(points)
    n = centers.shape[0]
    out = np.empty(points.shape[0])
    chunk = max(1, (1 << 21) // max(n, 1))
    width = 1 << max(0, math.ceil(math.log2(max(n, 1))))
    scalar = np.ndim(coef) == 0
    for s in range(0, points.shape[0], chunk):
        Kc = kernel(points[s:s + chunk], centers)
        terms = Kc * coef if scalar else Kc * np.asarray(coef)[None, :]
        if width > n:
            terms = np.hstack([terms, np.zeros((terms.shape[0], width - n))])
        while terms.shape[1] > 1:
            h = terms.shape[1] // 2
            terms = terms[:, :h] + terms[:, h:]
        out[s:s + chunk] = terms[:, 0]
    return out


def expansion_error(kernel: GaussianKernel, d: int, n: int, coef_l1: float) -> float:
    """The data-independent bound on ``|kernel_expansion(...)(x) - sum_j coef_j K(centers_j, x)|`` when
    ``sum |coef_j| <= coef_l1`` (exact real coefficients; the products and the pairwise sum add gamma_{depth + 2})."""
    depth = max(0, math.ceil(math.log2(max(n, 1))))
    return kernel.k0(d) * coef_l1 * (_gamma(depth + 2) + kernel.entry_error(d)) * (1.0 + 2.0**-40)


# ----------------------------------------------------------------------------------------------
# float margins and calibration
# ----------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class FloatMargins:
    """What floating point costs a Gaussian-process release (see the module docstring)."""

    max_points: int
    tau: float  #: jitter added to the Gram diagonal
    cholesky_error: float  #: bound on ||A A' - (K^ + tau I)||_2 at max_points
    gram_error: float  #: bound on ||K^ - K||_2 at max_points
    tau_eff: float  #: A A' >= K + tau_eff I
    mean_error: float  #: bound on ``|m(x) - f_X(x)|`` per point
    sensitivity_float: float  #: 2 sqrt(M) mean_error / sqrt(tau_eff), added to the sensitivity


def float_margins(kernel: GaussianKernel, d: int, max_points: int, jitter: float, mean_error: float) -> FloatMargins:
    """The margins of a release at up to ``max_points`` points with jitter tau = jitter * k0 (``ValueError`` when the
    jitter cannot absorb the factorisation's error at that many points)."""
    M = int(max_points)
    if M < 1:
        raise ValueError(f"max_points must be a positive integer, got {max_points!r}")
    k0 = kernel.k0(d)
    tau = check_positive(jitter, "jitter") * k0
    chol = 2.0 * _gamma(M + 2) * (2.0 * M * (k0 + tau) + tau)
    gram = M * k0 * kernel.entry_error(d)
    tau_eff = tau - chol - gram
    if not tau_eff >= tau / 2:
        need = 2.0 * (chol + gram) / k0
        raise ValueError(f"jitter {jitter:g} is too small for max_points = {M}: the Cholesky and Gram errors need "
                         f"jitter >= {need:.3g} (or fewer points)")
    sens = 2.0 * math.sqrt(M) * mean_error / math.sqrt(tau_eff)
    return FloatMargins(M, tau, chol, gram, tau_eff, mean_error, sens)


def calibrate(epsilon: float, delta: float, sensitivity: float, calibration: str) -> tuple[float, float, str]:
    """(s, delta_true, statement): the noise multiplier of the Gaussian mechanism with L2 (Mahalanobis) sensitivity
    ``sensitivity`` and the delta that actually holds at ``epsilon`` (the exact privacy curve; values within a relative
    1e-9 of the target are the curve's round-off and count as the target).  ``"hall"``:
    Proposition 1.1's s = sqrt(2 log(2/delta)) Delta / eps, which fails above an epsilon that depends on delta
    (:func:`dpkernels.bounds.hall.proposition_1_1_max_epsilon`): a :class:`CalibrationWarning` then says so and
    delta_true > delta.  ``"analytic"``: the exact calibration of dp-accounting (delta_true <= delta)."""
    epsilon, delta = check_epsilon(epsilon), check_delta(delta)
    if calibration not in CALIBRATIONS:
        raise ValueError(f"calibration must be one of {CALIBRATIONS}, got {calibration!r}")
    s = gaussian_sigma(epsilon, delta, sensitivity, calibration=calibration)
    true_delta = gaussian_delta(epsilon, s, sensitivity)
    if true_delta <= delta * (1.0 + DELTA_RTOL):
        true_delta = min(true_delta, delta)  # the privacy curve's evaluation carries round-off of ~1e-15 relative
    elif calibration == "hall":
        warnings.warn(f"Proposition 1.1's calibration does not hold at (epsilon, delta) = ({epsilon:g}, {delta:g}): the "
                      f"exact delta at epsilon is {true_delta:.3g}; use calibration='analytic'", CalibrationWarning,
                      stacklevel=3)
    statement = ("Proposition 1.1 calibration c = 2 log(2/delta) Delta^2 / eps^2" if calibration == "hall"
                 else "exact (analytic) Gaussian calibration, dp-accounting (Balle and Wang 2018)")
    return s, true_delta, statement


# ----------------------------------------------------------------------------------------------
# Proposition 1.1: the Gaussian mechanism for vectors
# ----------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class GaussianRelease:
    """A released vector, its noise multiplier s (noise s A z, A A' = Sigma), the grid and the guarantee."""

    value: Array
    noise_multiplier: float
    grid: float | None
    guarantee: Guarantee


def gaussian_mechanism(value: ArrayLike, *, epsilon: float, delta: float, sensitivity: float,
                       covariance_factor: ArrayLike | None = None, calibration: str = "analytic",
                       noise: str = "lattice", random_state: object = None) -> GaussianRelease:
    """Hall et al. (2013) Proposition 1.1: the Gaussian mechanism, v + s A z with z ~ N(0, I).

    Releases a vector v_X whose Mahalanobis sensitivity ||(A A')^{-1/2}(v_X - v_X')||_2 is at most ``sensitivity``
    for all neighbouring data sets, with noise s A z calibrated to (epsilon, delta).

    Parameters
    ----------
    value : array-like
        v_X, the vector to release (flattened), as the caller computed it.  Its sensitivity is the caller's statement.
    epsilon : float
        The privacy level epsilon (keyword-only).
    delta : float
        The privacy level delta, in (0, 1) (keyword-only).
    sensitivity : float
        Delta, the bound on ||(A A')^{-1/2}(v_X - v_X')||_2 over neighbours (keyword-only).
    covariance_factor : array-like of shape (len(value), k) or None, default=None
        A, taken as the exact real matrix it holds, so that Sigma = A A' is the covariance actually used: state the
        sensitivity for that Sigma (a Cholesky factor of a covariance carries rounding error;
        :class:`GaussianProcessRelease` shows how to dominate it with a jitter).  None: the identity.
    calibration : {"analytic", "hall"}, default="analytic"
        ``"analytic"``: the exact Gaussian calibration of dp-accounting (Balle and Wang 2018), the smallest s for
        (epsilon, delta).  ``"hall"``: Proposition 1.1's s = sqrt(2 log(2/delta)) Delta / epsilon, which falls short
        above an epsilon that depends on delta (a :class:`CalibrationWarning` then says so, and the guarantee states
        the delta that holds).
    noise : {"lattice", "continuous"}, default="lattice"
        ``"lattice"``: the continuous mechanism's output exactly rounded to a public grid (floating-point safe);
        ``"continuous"``: numpy's float sampler (NOT floating-point safe; warns).
    random_state : None, int, SeedSequence or numpy.random.Generator, default=None
        The noise source; None draws from operating-system entropy.

    Returns
    -------
    GaussianRelease
        ``value`` (the released vector), ``noise_multiplier`` (s), ``grid`` (the lattice spacing, or None) and
        ``guarantee`` (:class:`~dpkernels.mechanisms.base.Guarantee`).

    Raises
    ------
    ValueError
        If ``value`` is empty or not finite, or a parameter is out of range.

    Notes
    -----
    Privacy: (epsilon, delta)-differential privacy for the neighbouring relation under which ``sensitivity`` holds
    (the library's mechanisms: replace-one), Proposition 1.1; the stated delta is the larger of ``delta`` and the
    exact delta of the calibrated noise at ``epsilon``.  Assumption: the sensitivity bound, for all neighbours.

    Examples
    --------
    >>> import numpy as np
    >>> from dpkernels import gaussian_mechanism
    >>> mean = np.array([0.2, 0.5])  # e.g. the mean of n = 100 rows in [0, 1]^2: sensitivity sqrt(2) / 100
    >>> out = gaussian_mechanism(mean, epsilon=1.0, delta=1e-5, sensitivity=np.sqrt(2) / 100)
    >>> out.value.shape, out.guarantee.epsilon, out.guarantee.delta
    ((2,), 1.0, 1e-05)
    """
    v = np.asarray(value, dtype=np.float64).ravel()
    if v.size == 0 or not np.all(np.isfinite(v)):
        raise ValueError("value must be a non-empty vector of finite numbers")
    sensitivity = check_positive(sensitivity, "sensitivity")
    noise = check_noise(noise)
    rng = check_random_state(random_state)
    s, true_delta, statement = calibrate(epsilon, delta, sensitivity, calibration)
    if covariance_factor is None:
        A = None
        out = noise_release(v, "gaussian", s, noise=noise, random_state=rng)
        grid = lattice.grid_for(s) if noise == "lattice" else None
    else:
        A = np.asarray(covariance_factor, dtype=np.float64)
        if A.ndim != 2 or A.shape[0] != v.size or not np.all(np.isfinite(A)):
            raise ValueError(f"covariance_factor must be a finite ({v.size}, k) matrix")
        grid = lattice.grid_for(s) if noise == "lattice" else None
        if noise == "lattice":
            z = lattice.ExactNormals(rng)
            z.draw(A.shape[1])
            out = lattice.affine_gaussian_lattice(v, A, s, z, np.arange(A.shape[1]), grid=grid)
        else:
            out = v + s * (A @ rng.standard_normal(A.shape[1]))
    g = Guarantee(
        epsilon=float(epsilon), delta=float(max(delta, true_delta)), neighbouring=REPLACE_ONE,
        released="v + s A z (the released vector)", statement=f"Hall et al. (2013) Proposition 1.1; {statement}",
        assumptions=(f"||(A A')^(-1/2) (v_X - v_X')||_2 <= {sensitivity:.6g} for all neighbours "
                     f"({'A = I' if A is None else 'A as given, exact'})",),
        noise=noise_description(noise), notes=(randomness_note(random_state), f"noise multiplier s = {s:.6g}",
                                               f"exact delta at epsilon: {true_delta:.3g}"))
    return GaussianRelease(out, s, grid, settle(g, random_state=random_state, noise=noise))


# ----------------------------------------------------------------------------------------------
# Proposition 2.1: the Gaussian-process release, evaluated lazily
# ----------------------------------------------------------------------------------------------
def gp_factor(kernel: GaussianKernel, points: Array, tau: float) -> Array:
    """The lower Cholesky factor of K(points, points) + tau I (the factor a one-shot release at these points uses)."""
    G = kernel(points, points)
    G[np.diag_indices_from(G)] += tau
    return _chol(G)


def _chol(G: Array) -> Array:
    """The lower Cholesky factor (LAPACK dpotrf through scipy)."""
    return _cholesky(G, lower=True, check_finite=False)


def _row_keys(points: Array) -> list[bytes]:
    pts = np.ascontiguousarray(points + 0.0)  # -0.0 -> 0.0: one key per point
    return [r.tobytes() for r in pts]


class GaussianProcessRelease:
    """One sample path of f + s G, G ~ GP(0, K + tau delta), revealed point by point (Hall et al. 2013, Prop. 2.1).

    ``mean(points)`` computes f at new points.  It closes over the private data: this object is the curator and must
    never be published; publish :attr:`points` and :attr:`values`.  Each call to :meth:`evaluate` returns the stored
    value of every point released before and draws the new points jointly, conditionally on all earlier values:
    with A the lower-triangular factor of the Gram matrix (plus tau I) of the points so far, the new rows are
    [B, L22] with B = K21 A^{-T} and L22 = chol(K22 + tau I - B B'); the new values are
    f(new) + s (B z_old + L22 z_new), rounded to the grid (the earlier normals z_old are reused, z_new are fresh).
    Independent draws per call cannot happen: the old normals are the only source of the new values' dependence.

    Parameters
    ----------
    mean : callable
        f: maps an array of points (k, d) to the k values of the function to release (the private part).
    kernel : GaussianKernel
        The kernel K of the noise process (:class:`GaussianKernel`).
    d : int
        The points' dimension.
    noise_multiplier : float
        s, calibrated by the caller to the sensitivity of f in the RKHS of K (e.g. :func:`calibrate`).
    tau : float
        The jitter added to the Gram diagonal (keyword-only; it must dominate the factorisation's rounding error,
        :func:`float_margins`).
    max_points : int
        The largest number of points this path may release (keyword-only; the float margins are computed for it).
    noise : {"lattice", "continuous"}, default="lattice"
        ``"lattice"``: every value exactly rounded to a public grid (floating-point safe); ``"continuous"``: float
        normals (NOT floating-point safe; warns).
    random_state : None, int, SeedSequence or numpy.random.Generator, default=None
        The noise source; None draws from operating-system entropy.

    Attributes
    ----------
    points : ndarray of shape (m, d)
        The points released so far (a copy).
    values : ndarray of shape (m,)
        Their released values (a copy).
    grid : float or None
        The spacing of the public grid (``noise="lattice"``), else None.

    See Also
    --------
    PrivateKDE, PrivateKernelMachine : estimators built on this release.

    Notes
    -----
    Privacy: the values released at any (adaptively chosen) points are (epsilon, delta)-DP when s is calibrated to
    (epsilon, delta) for the RKHS sensitivity of f plus the float margin (Proposition 2.1, and fully adaptive
    composition of Gaussian DP; module docstring).  The object itself holds the private data and the noise state.

    Examples
    --------
    >>> import numpy as np
    >>> from dpkernels.mechanisms.hall import GaussianKernel, GaussianProcessRelease
    >>> gp = GaussianProcessRelease(lambda P: np.zeros(len(P)), GaussianKernel(sigma=0.5), d=1, noise_multiplier=0.1,
    ...                             tau=1e-6, max_points=100)
    >>> first = gp.evaluate(np.array([[0.1], [0.2]]))
    >>> again = gp.evaluate(np.array([[0.2], [0.3]]))  # 0.2 keeps its value; 0.3 is drawn given both
    >>> bool(again[0] == first[1]), len(gp)
    (True, 3)
    """

    def __init__(self, mean: Callable[[Array], Array], kernel: GaussianKernel, d: int, noise_multiplier: float, *,
                 tau: float, max_points: int, noise: str = "lattice", random_state: object = None) -> None:
        self._mean = mean
        self.kernel = kernel
        self.d = int(d)
        self.s = check_positive(noise_multiplier, "noise multiplier")
        self.tau = check_positive(tau, "tau")
        self.max_points = int(max_points)
        self.noise = check_noise(noise)
        self.grid = lattice.grid_for(self.s) if noise == "lattice" else None
        rng = check_random_state(random_state)
        self._rng = rng
        self._normals = lattice.ExactNormals(rng) if noise == "lattice" else None
        self._z = np.empty(0)  # continuous mode: the float normals
        self._L = np.zeros((0, 0))
        self._m = 0
        self._points = np.empty((0, self.d))
        self._values = np.empty(0)
        self._index: dict[bytes, int] = {}

    def __len__(self) -> int:
        return self._m

    @property
    def points(self) -> Array:
        """The points released so far, shape (m, d) (a copy)."""
        return self._points[: self._m].copy()

    @property
    def values(self) -> Array:
        """The values released at :attr:`points`, shape (m,) (a copy)."""
        return self._values[: self._m].copy()

    def _grow(self, m_new: int) -> None:
        need = self._m + m_new
        cap = self._L.shape[0]
        if need <= cap:
            return
        cap = min(self.max_points, max(need, 2 * cap, 64))
        L = np.zeros((cap, cap))
        L[: self._m, : self._m] = self._L[: self._m, : self._m]
        P = np.empty((cap, self.d))
        P[: self._m] = self._points[: self._m]
        V = np.empty(cap)
        V[: self._m] = self._values[: self._m]
        self._L, self._points, self._values = L, P, V

    def evaluate(self, points: ArrayLike) -> Array:
        """The released values at ``points`` (shape (k, d)), extending the sample path where needed."""
        X = check_finite_array(points, "points")
        if X.shape[1] != self.d:
            raise ValueError(f"points must have {self.d} columns, got {X.shape[1]}")
        keys = _row_keys(X)
        new_keys: dict[bytes, int] = {}
        for i, k in enumerate(keys):
            if k not in self._index and k not in new_keys:
                new_keys[k] = i
        if new_keys:
            if self._m + len(new_keys) > self.max_points:
                raise ValueError(f"this release is limited to max_points = {self.max_points} points (its float margins "
                                 f"were computed for that many); {self._m} released, {len(new_keys)} new requested")
            self._extend(X[list(new_keys.values())], list(new_keys))
        return self._values[[self._index[k] for k in keys]].copy()

    def _extend(self, Xn: Array, keys: list[bytes]) -> None:
        m0, mn = self._m, Xn.shape[0]
        self._grow(mn)
        K22 = self.kernel(Xn, Xn)
        K22[np.diag_indices_from(K22)] += self.tau
        if m0:
            L11 = self._L[:m0, :m0]
            K21 = self.kernel(Xn, self._points[:m0])
            B = solve_triangular(L11, K21.T, lower=True, check_finite=False).T
            S = K22 - B @ B.T
        else:
            B = np.zeros((mn, 0))
            S = K22
        try:
            L22 = _chol(S)
        except LinAlgError as exc:  # excluded by the jitter margin; never silently worked around
            raise RuntimeError("the conditional covariance is not positive definite in floating point") from exc
        A_new = np.hstack([B, L22])
        self._L[m0:m0 + mn, :m0] = B
        self._L[m0:m0 + mn, m0:m0 + mn] = L22
        center = np.asarray(self._mean(Xn), dtype=np.float64)
        if self.noise == "lattice":
            self._normals.draw(mn)
            vals = lattice.affine_gaussian_lattice(center, A_new, self.s, self._normals, np.arange(m0 + mn), grid=self.grid)
        else:
            self._z = np.concatenate([self._z, self._rng.standard_normal(mn)])
            vals = center + self.s * (A_new @ self._z)
        self._points[m0:m0 + mn] = Xn
        self._values[m0:m0 + mn] = vals
        for j, k in enumerate(keys):
            self._index[k] = m0 + j
        self._m = m0 + mn


def sample_paths(center: Array, A: Array, s: float, n_draws: int, noise: str, rng: np.random.Generator) -> Array:
    """``n_draws`` independent releases N(center, s^2 A A') at fixed points (lattice: exact rounding; small point
    sets are batched through a block-diagonal factor; ``"idealized"`` / ``"continuous"``: float normals; anything else
    raises ``ValueError``)."""
    m = center.shape[0]
    out = np.empty((int(n_draws), m))
    if check_noise(noise, warn=False) != "lattice":
        return center + s * (rng.standard_normal((int(n_draws), A.shape[1])) @ A.T)
    grid = lattice.grid_for(s)
    per = max(1, 256 // max(m, 1))
    for start in range(0, int(n_draws), per):
        c = min(per, int(n_draws) - start)
        Ab = np.kron(np.eye(c), A) if c > 1 else A
        z = lattice.ExactNormals(rng)
        z.draw(Ab.shape[1])
        vals = lattice.affine_gaussian_lattice(np.tile(center, c), Ab, s, z, np.arange(Ab.shape[1]), grid=grid)
        out[start:start + c] = vals.reshape(c, m)
    return out


# ----------------------------------------------------------------------------------------------
# shared estimator logic
# ----------------------------------------------------------------------------------------------
@dataclass
class _NonPrivate:
    """Evaluation state kept only with keep_nonprivate=True (not a release): the data and the mean's parameters."""

    X: Array
    coef: Array
    centers: Array
    extra: dict[str, Any] = field(default_factory=dict)


class _FunctionRelease:
    """The GP release of a function (Proposition 2.1) as a scikit-learn-style estimator (shared logic; the estimators
    put :class:`ReleaseMixin` first in their bases).

    ``curator=False`` (default): ``fit`` releases the function at the public ``points`` and keeps nothing else; the
    object holds only the released points and values (a release).  ``curator=True``: the object also keeps the
    private data and the noise state (``_curator``) to answer new points on the same sample path; it is then the
    curator, not a release; its pickle and ``release()`` hold only the release made at fit (the public ``points``):
    the points the curator is asked about later may be private rows (a selection's validation rows), so neither they
    nor their answers enter ``released_points_`` / ``released_values_``.
    """

    _release_attributes: tuple[str, ...] = ("released_points_", "released_values_", "noise_multiplier_",
                                            "sensitivity_", "rkhs_sensitivity_", "float_sensitivity_", "jitter_",
                                            "grid_", "max_points_", "n_samples_", "guarantee_")

    def __getstate__(self) -> dict[str, object]:
        """A pickle never carries the curator (the private data and the noise state): an unpickled curator answers
        only at the released points."""
        state = BaseEstimator.__getstate__(self)
        state.pop("_curator", None)
        return state

    # helpers -------------------------------------------------------------------------------------------------------
    def _check_common(self, n: int) -> tuple[float, float, str]:
        """(epsilon, delta, noise) validated for a fit on ``n`` rows (public): delta at most 1/(10 n)."""
        epsilon, delta = check_epsilon(self.epsilon), check_delta(self.delta)
        check_delta_far_below_inverse_n(delta, n)
        if self.calibration not in CALIBRATIONS:
            raise ValueError(f"calibration must be one of {CALIBRATIONS}, got {self.calibration!r}")
        return epsilon, delta, check_noise(self.noise)

    def _start(self, mean: Callable[[Array], Array], kernel: GaussianKernel, d: int, rkhs_sensitivity: float,
               margins: FloatMargins, epsilon: float, delta: float, noise: str, rng: np.random.Generator,
               points: Array | None) -> tuple[float, str]:
        total = rkhs_sensitivity + margins.sensitivity_float
        s, true_delta, statement = calibrate(epsilon, delta, total, self.calibration)
        gp = GaussianProcessRelease(mean, kernel, d, s, tau=margins.tau, max_points=margins.max_points, noise=noise,
                                    random_state=rng)
        self.noise_multiplier_ = s
        self.sensitivity_ = total
        self.rkhs_sensitivity_ = rkhs_sensitivity
        self.float_sensitivity_ = margins.sensitivity_float
        self.jitter_ = margins.tau
        self.grid_ = gp.grid
        self.max_points_ = margins.max_points
        self._curator = gp
        self._true_delta = true_delta
        if points is not None and len(points):
            gp.evaluate(points)
        self._publish()
        return true_delta, statement

    def _publish(self) -> None:
        gp = self._curator
        self.released_points_ = gp.points
        self.released_values_ = gp.values

    def _finish(self) -> None:
        """Release mode: drop the curator (the data and the noise state)."""
        if not self.curator:
            del self._curator
        self.__dict__.pop("_true_delta", None)

    def _check_query(self, points: ArrayLike) -> Array:
        check_is_fitted(self, "guarantee_")
        P = check_finite_array(points, "points")
        if P.shape[1] != self.n_features_in_:
            raise ValueError(f"X has {P.shape[1]} features, but {type(self).__name__} is expecting {self.n_features_in_} "
                             "features as input")
        return P

    def _evaluate(self, points: Array) -> Array:
        gp = getattr(self, "_curator", None)
        if gp is not None:  # the curator's answer: not recorded in the release (the query may be private rows)
            return gp.evaluate(points)
        if not hasattr(self, "released_points_"):
            raise ValueError("not fitted")
        index = {k: i for i, k in enumerate(_row_keys(self.released_points_))}
        keys = _row_keys(check_finite_array(points, "points"))
        missing = sum(k not in index for k in keys)
        if missing:
            raise ValueError(f"{missing} of {len(keys)} points were not released: this object holds only the released "
                             "points and values (it is a release, or an unpickled curator); fit with curator=True to "
                             "answer new points, or include them in points=")
        return self.released_values_[[index[k] for k in keys]].copy()

    def _curator_notes(self) -> tuple[str, ...]:
        if self.curator:
            return ("curator=True: this object holds the private data and the noise state so that it can answer new "
                    "points on the same sample path; it is the curator, NOT a release (never publish it). Its pickle "
                    "and release() hold only the points released at fit and their values (never the points it was "
                    "asked about later); an unpickled object answers only at those points",)
        return ("released at the public points given at fit; the data and the noise state were discarded",)

    def _float_notes(self, margins: FloatMargins) -> tuple[str, ...]:
        return (f"floating point: at most {margins.max_points} points; jitter tau = {margins.tau:.3g} (A A' >= K + "
                f"{margins.tau_eff:.3g} I: Cholesky error <= {margins.cholesky_error:.2g}, Gram error <= "
                f"{margins.gram_error:.2g}); mean error <= {margins.mean_error:.2g} per point, adding "
                f"{margins.sensitivity_float:.3g} to the sensitivity",)

    def sample_releases(self, points: ArrayLike, n_draws: int, random_state: object = None, epsilon: float | None = None,
                        noise: str = "lattice") -> Array:
        """Evaluation only (``keep_nonprivate=True``): ``n_draws`` independent releases (fresh sample paths) at
        ``points``, each N(f_X(points), s^2 A A') with A the factor a one-shot release there uses; ``epsilon``
        recalibrates s (same delta, calibration and sensitivity).  Returns (n_draws, len(points))."""
        np_state = self._require_nonprivate()
        P = check_finite_array(points, "points")
        s = self.noise_multiplier_ if epsilon is None else calibrate(epsilon, self.delta, self.sensitivity_, self.calibration)[0]
        key = (P.shape, P.tobytes())
        cache = self.__dict__.setdefault("_factor_cache", {})  # evaluation objects only; never pickled
        if key not in cache:
            cache.clear()
            cache[key] = (self._factor_at(P), self._mean_from(np_state)(P))
        A, center = cache[key]
        return sample_paths(center, A, s, n_draws, noise, check_random_state(random_state))

    def nonprivate_function(self, points: ArrayLike) -> Array:
        """Evaluation only (``keep_nonprivate=True``): the non-private mean f_X at ``points``."""
        return self._mean_from(self._require_nonprivate())(check_finite_array(points, "points"))

    def _require_nonprivate(self) -> _NonPrivate:
        st = getattr(self, "nonprivate_", None)
        if st is None:
            raise ValueError("evaluation helpers need keep_nonprivate=True (the object then holds the data; not a release)")
        return st

    def _mean_from(self, st: _NonPrivate) -> Callable[[Array], Array]:
        kern = self._kernel()
        return lambda P: kernel_expansion(kern, P, st.centers, st.coef)

    def _factor_at(self, points: Array) -> Array:
        """The noise factor A of a one-shot release at ``points`` (noise s A z)."""
        return gp_factor(self._kernel(), points, self.jitter_)


def _public_points(points: ArrayLike | None, d: int) -> Array | None:
    """Validate public evaluation points (shape (k, d); k = 0 allowed: nothing released at fit)."""
    if points is None:
        return None
    P = np.asarray(points, dtype=np.float64)
    if P.ndim != 2 or P.shape[1] != d:
        raise ValueError(f"points must have shape (k, {d}), got {P.shape}")
    if P.size and not np.all(np.isfinite(P)):
        raise ValueError("points must be finite")
    return P


def _default_grid(d: int, grid_size: int | None) -> Array:
    k = DEFAULT_GRID.get(d) if grid_size is None else int(grid_size)
    if k is None:
        raise ValueError(f"no default grid in {d} dimensions: pass points= (public evaluation points) or grid_size=")
    if k < 1:
        raise ValueError(f"grid_size must be positive, got {grid_size!r}")
    axes = np.meshgrid(*[np.linspace(0.0, 1.0, k)] * d, indexing="ij")
    return np.column_stack([a.ravel() for a in axes])


# ----------------------------------------------------------------------------------------------
# Section 3, first example: the private kernel density estimate
# ----------------------------------------------------------------------------------------------
def _void_if_delta_not_far_below_one_over_n(g: Guarantee, n: int) -> Guarantee:
    """``g``, or when the delta it states (the exact delta of the calibration, above the asked-for one with
    ``calibration="hall"`` beyond Proposition 1.1's range) is above 1/(10 n) (:func:`delta_ceiling`), the guarantee
    of a fit that is not private (:func:`~dpkernels.mechanisms.base.void_guarantee`: epsilon infinite, status "not
    private", the note says why), whatever the randomness; fit refuses an asked-for delta above 1/(10 n) before any
    noise is drawn."""
    if g.delta <= delta_ceiling(n):
        return g
    return void_guarantee(g, f"the calibration's exact delta {g.delta:.3g} at epsilon {g.epsilon:g} is above "
                             f"1/(10 n) = {delta_ceiling(n):.3g}: not a release (use calibration='analytic')")


class PrivateKDE(ReleaseMixin, _FunctionRelease, BaseEstimator):
    """Hall et al. (2013) Section 3, first example: the Gaussian kernel density estimate released as f_X + s G.

    f_X(x) = (1/n) sum_i K_sigma(x_i, x) on T = [0, 1]^d, with K_sigma(x, y) = (2 pi sigma^2)^{-d/2}
    exp(-||x - y||^2 / (2 sigma^2)), is released as one sample path of f_X + s G, G ~ GP(0, K_sigma) (Proposition
    2.1), evaluated at public points (by default a regular grid).

    Parameters
    ----------
    epsilon : float, default=1.0
        The privacy level epsilon (the paper's alpha).
    delta : float, default=1e-5
        The privacy level delta (the paper's beta); must be at most 1/(10 n) (n rows; ``fit`` raises ``ValueError``).
    sigma : float, default=0.1
        The kernel's width (the KDE's bandwidth); public (it must not depend on the data).
    convention : {"jmlr", "seed"}, default="jmlr"
        The RKHS sensitivity: ``"jmlr"`` sqrt(2) / (n (2 pi sigma^2)^{d/4}) (the journal version; the exact worst
        case over R^d) or ``"seed"`` 2 / (n (2 pi sigma^2)^{d/4}) (the short version).
    calibration : {"analytic", "hall"}, default="analytic"
        The exact Gaussian calibration of dp-accounting, or Proposition 1.1's c = 2 log(2/delta) Delta^2 / eps^2
        (which falls short at large epsilon: a :class:`CalibrationWarning` then says so).
    points : array-like of shape (k, d) or None, default=None
        Public points at which the density is released at fit; None: a regular grid of ``grid_size`` points per axis
        on [0, 1]^d.
    grid_size : int or None, default=None
        Points per axis of the default grid (None: 257, 33 and 13 for d = 1, 2, 3; beyond d = 3 pass ``points``).
    curator : bool, default=False
        Keep the private data and the noise state to answer new points on the same sample path (:meth:`density`).
        The object is then the curator, NOT a release: never publish it (its pickle, and :meth:`release`, hold only
        the released points and values).
    clip : bool, default=False
        Rows outside [0, 1]^d raise ``ValueError`` (False) or are clipped onto it with a
        :class:`~dpkernels.ClippingWarning` (True; a per-record map).
    max_points : int, default=4096
        The largest number of released points (the float margins are computed for it).
    jitter : float, default=1e-6
        tau / K(x, x), the relative jitter added to the Gram diagonal (module docstring).
    noise : {"lattice", "continuous"}, default="lattice"
        ``"lattice"``: every value exactly rounded to a public grid (floating-point safe); ``"continuous"``: the
        paper's float sampler (NOT floating-point safe; warns).
    keep_nonprivate : bool, default=False
        Keep the data as ``nonprivate_`` for evaluation (:meth:`sample_releases`, :meth:`nonprivate_function`); the
        object is then not a release.
    random_state : None, int, SeedSequence or numpy.random.Generator, default=None
        The noise source.  None draws from operating-system entropy; a seed is for reproduction only.

    Attributes
    ----------
    released_points_ : ndarray of shape (k, d)
        The points released so far (the public ``points`` at fit; more with ``curator=True``).
    released_values_ : ndarray of shape (k,)
        The released density values at ``released_points_`` (the release).
    noise_multiplier_ : float
        s, the noise multiplier (s^2 = the paper's c).
    sensitivity_ : float
        The total sensitivity the noise is calibrated to: ``rkhs_sensitivity_`` + ``float_sensitivity_``.
    rkhs_sensitivity_ : float
        The RKHS sensitivity of the released function (the paper's Delta).
    float_sensitivity_ : float
        What the float error of the mean adds to the sensitivity (module docstring).
    jitter_ : float
        tau, the jitter added to the Gram diagonal.
    grid_ : float or None
        The spacing of the public grid of the released values (``noise="lattice"``), else None.
    max_points_ : int
        The largest number of points the release may hold.
    n_samples_ : int
        n, the number of training rows (public under replace-one).
    n_features_in_ : int
        d, the number of input features.
    guarantee_ : Guarantee
        The privacy statement of the fit (:class:`~dpkernels.mechanisms.base.Guarantee`).
    nonprivate_ : object
        The data and the mean's coefficients (``keep_nonprivate=True`` only; NOT private).

    See Also
    --------
    GaussianProcessRelease : the lazily evaluated sample path behind the release.
    PrivateKernelMachine : the second example of Section 3.

    Notes
    -----
    Privacy: (epsilon, delta)-differential privacy for the replace-one neighbouring relation (n fixed),
    Proposition 2.1 with the KDE's RKHS sensitivity; ``guarantee_.delta`` is the larger of ``delta`` and the exact
    delta of the calibrated noise.  Released: the values at the released points (and the public constants above).
    Assumptions: the rows lie in T = [0, 1]^d (checked, or clipped with ``clip=True``); the bandwidth and the points
    are chosen without the data; conventional BLAS/LAPACK for the rounding-error bounds.  Floating point: every
    released value is the exact rounding of the continuous mechanism's output to a public grid, and the float errors
    of the Gram factor and of the mean are folded into the calibration (module docstring).  Publish :meth:`release`
    (never a curator).

    Examples
    --------
    >>> import numpy as np
    >>> from dpkernels import PrivateKDE
    >>> X = np.random.default_rng(0).uniform(size=(500, 1))  # rows in [0, 1]^d
    >>> kde = PrivateKDE(epsilon=1.0, delta=1e-5, sigma=0.1).fit(X)
    >>> kde.guarantee_.epsilon, kde.guarantee_.delta
    (1.0, 1e-05)
    >>> kde.released_points_.shape, kde.released_values_.shape  # the default grid: 257 points on [0, 1]
    ((257, 1), (257,))
    >>> kde.density(kde.released_points_[:3]).shape
    (3,)
    """

    _release_attributes = _FunctionRelease._release_attributes

    def __init__(self, *, epsilon: float = 1.0, delta: float = 1e-5, sigma: float = 0.1, convention: str = "jmlr",
                 calibration: str = "analytic", points: ArrayLike | None = None, grid_size: int | None = None,
                 curator: bool = False, clip: bool = False, max_points: int = DEFAULT_MAX_POINTS,
                 jitter: float = DEFAULT_JITTER, noise: str = "lattice", keep_nonprivate: bool = False,
                 random_state: object = None) -> None:
        self.epsilon = epsilon
        self.delta = delta
        self.sigma = sigma
        self.convention = convention
        self.calibration = calibration
        self.points = points
        self.grid_size = grid_size
        self.curator = curator
        self.clip = clip
        self.max_points = max_points
        self.jitter = jitter
        self.noise = noise
        self.keep_nonprivate = keep_nonprivate
        self.random_state = random_state

    def _kernel(self) -> GaussianKernel:
        return GaussianKernel(check_positive(self.sigma, "sigma"), normalised=True)

    def __sklearn_tags__(self) -> Any:
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True  # densified by check_finite_array
        return tags

    def fit(self, X: ArrayLike, y: object = None) -> "PrivateKDE":
        """Release the KDE of the rows of X at the public points.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            The rows (the private data), in [0, 1]^d.
        y : None
            Ignored.

        Returns
        -------
        self
            The fitted release; its ``guarantee_`` states the privacy level that holds.
        """
        X = check_finite_array(X)
        epsilon, delta, noise = self._check_common(X.shape[0])
        if self.convention not in HB.KDE_CONVENTIONS:
            raise ValueError(f"convention must be one of {HB.KDE_CONVENTIONS}, got {self.convention!r}")
        outside = np.any((X < 0.0) | (X > 1.0), axis=1)
        if np.any(outside):
            stats = f" [nonprivate_diagnostics: {int(outside.sum())} of {len(X)} rows]" if diagnostics_enabled() else ""
            if not self.clip:
                raise ValueError(f"rows lie outside [0, 1]^d, the KDE's domain T; rescale with public bounds or pass "
                                 f"clip=True{stats}")
            if stats:
                warnings.warn(f"clipped rows onto [0, 1]^d{stats}", ClippingWarning, stacklevel=2)
            X = np.clip(X, 0.0, 1.0)
        n, d = X.shape
        kern = self._kernel()
        rng = self._noise_rng(X)
        P = _default_grid(d, self.grid_size) if self.points is None else _public_points(self.points, d)
        delta_h = HB.kde_sensitivity(n, kern.sigma, d, self.convention)
        # the mean uses the double fl(1/n): |fl(1/n) - 1/n| <= u / n adds u k0
        mean_error = expansion_error(kern, d, n, 1.0 + _U) + 2.0 * _U * kern.k0(d)
        margins = float_margins(kern, d, self.max_points, self.jitter, mean_error)
        coef = 1.0 / n
        mean = lambda Q: kernel_expansion(kern, Q, X, coef)  # noqa: E731
        self.n_features_in_ = d
        self.n_samples_ = n
        true_delta, statement = self._start(mean, kern, d, delta_h, margins, epsilon, delta, noise, rng, P)
        if self.keep_nonprivate:
            self.nonprivate_ = _NonPrivate(X.copy(), np.full(n, coef), X.copy())
        self.guarantee_ = Guarantee(
            epsilon=epsilon, delta=max(delta, true_delta), neighbouring=REPLACE_ONE,
            released="values at the released points of one sample path of f_X + s G, G ~ GP(0, K_sigma + tau delta)",
            statement=f"Hall et al. (2013) Proposition 2.1, Section 3 KDE ({self.convention} sensitivity); {statement}",
            assumptions=(f"rows in T = [0, 1]^{d} ({'clipped' if self.clip else 'checked'}); n = {n} public (replace-one)",
                         "bandwidth and points chosen without looking at the data",
                         "conventional BLAS/LAPACK (no Strassen-type products) for the error bounds"),
            attributes=self._release_attributes + ("n_features_in_",), noise=noise_description(noise),
            notes=(randomness_note(self.random_state),) + self._curator_notes() + self._float_notes(margins)
            + (("keep_nonprivate=True: this object also holds the data (nonprivate_); it is not a release",)
               if self.keep_nonprivate else ()),
        )
        self.guarantee_ = _void_if_delta_not_far_below_one_over_n(self.guarantee_, n)
        self._finish()
        self._void_if_data_derived()
        return self

    def density(self, points: ArrayLike) -> Array:
        """The released density values at ``points`` (k, d)."""
        return self._evaluate(self._check_query(np.atleast_2d(np.asarray(points, dtype=np.float64))))


# ----------------------------------------------------------------------------------------------
# Section 3, second example: the kernel machine
# ----------------------------------------------------------------------------------------------
MACHINE_LOSSES = ("hinge", "logistic", "squared")


@dataclass
class KernelMachineSolution:
    """f = sum_j coef_j K(centers_j, .) with a certified RKHS distance to the exact minimiser."""

    coef: Array
    distance_bound: float  #: certified ||f - f*||_H
    objective: float
    n_iter: int
    method: str


def loss_lipschitz(loss: str, kappa: float, lam: float) -> float:
    """L of the loss on the values the minimisers take (hinge, logistic: 1; squared: ours,
    :func:`dpkernels.bounds.hall.squared_loss_lipschitz`)."""
    if loss in ("hinge", "logistic"):
        return 1.0
    if loss == "squared":
        return HB.squared_loss_lipschitz(kappa, lam)
    raise ValueError(f"loss must be one of {MACHINE_LOSSES}, got {loss!r}")


def _smooth_parts(loss: str, m: Array) -> tuple[Array, Array, Array]:
    if loss == "logistic":
        lg = Logistic()
        return lg.value(m), lg.derivative(m), lg.second_derivative(m)
    r = 1.0 - m
    return r * r, -2.0 * r, np.full_like(m, 2.0)


def solve_kernel_machine(K: Array, y: Array, loss: str, lam: float, *, distance_tol: float, max_iter: int = 100
                         ) -> KernelMachineSolution:
    """argmin_f (1/n) sum l(y_i f(x_i)) + lam ||f||_H^2 over f = sum_j coef_j K(x_j, .) (the representer theorem),
    given the Gram matrix K of the training points.

    * hinge: the SVM dual through :func:`dpkernels.solvers.solve_erm` on features V with V V' = K + 1e-12 k0 I
      (C = 1/(2 lam)), then certified *with K itself*: the duality gap of the problem scaled by 1/(2 lam) (1-strongly
      convex) gives ||f - f*||_H <= sqrt(2 gap);
    * logistic, squared: Newton in function space (the step sum_j b_j K(x_j, .) solves (D K / n + 2 lam I) b = g,
      g the gradient's coefficients), certified by ||grad J||_H / (2 lam) = sqrt(g'Kg) / (2 lam).

    The returned coefficients satisfy ``sum_j |coef_j| <= L / (2 lam)`` by construction (hinge: alpha in the box;
    smooth: the stationarity map coef = -l'(y f(x)) y / (2 lam n) with l' clipped to [-L, L]), which bounds the float
    error of evaluating f (:func:`expansion_error`)."""
    n = K.shape[0]
    if loss == "hinge":
        k0 = float(np.max(np.diag(K)))
        G = K.copy()
        G[np.diag_indices_from(G)] += 1e-12 * k0
        V = _chol(G)
        C = 1.0 / (2.0 * lam)
        sol = solve_erm(V, y, Hinge(), C, distance_tol=distance_tol)
        upper = C / n
        alpha = np.clip(sol.alpha, 0.0, upper)
        coef = alpha * y
        margins = y * (K @ coef)
        gap = hinge_duality_gap(margins, alpha, upper)
        # the problem (1/2)||f||^2 + (C/n) sum hinge = J / (2 lam) is 1-strongly convex in H
        dist = math.sqrt(2.0 * max(gap, 0.0))
        obj = float(np.mean(np.maximum(0.0, 1.0 - margins))) + lam * float(coef @ K @ coef)
        return KernelMachineSolution(coef, dist, obj, sol.n_iter, "hinge dual (liblinear + working set), gap with K")
    if loss not in ("logistic", "squared"):
        raise ValueError(f"loss must be one of {MACHINE_LOSSES}, got {loss!r}")
    kappa = math.sqrt(float(np.max(np.diag(K))))
    L = loss_lipschitz(loss, kappa, lam)

    def objective(c: Array) -> tuple[float, Array, Array, Array]:
        f = K @ c
        m = y * f
        val, d1, d2 = _smooth_parts(loss, m)
        return float(np.mean(val)) + lam * float(c @ f), m, d1, d2

    coef = np.zeros(n)
    J, m, d1, d2 = objective(coef)
    it = 0
    dist = math.inf
    for it in range(1, max_iter + 1):
        g = d1 * y / n + 2.0 * lam * coef
        gnorm = math.sqrt(max(float(g @ K @ g), 0.0))
        dist = gnorm / (2.0 * lam)
        if dist <= 0.1 * distance_tol:
            break
        b = np.linalg.solve(K * (d2 / n)[:, None] + 2.0 * lam * np.eye(n), g)
        t = 1.0
        dec = float(g @ K @ b)
        while True:
            cand = coef - t * b
            Jc, mc, d1c, d2c = objective(cand)
            if Jc <= J - 1e-4 * t * dec or t < 1e-10:
                break
            t *= 0.5
        coef, J, m, d1, d2 = cand, Jc, mc, d1c, d2c
    # the stationarity map: exact at the minimiser, and bounds sum |coef| by L / (2 lam)
    coef = -np.clip(d1, -L, L) * y / (2.0 * lam * n)
    J, m, d1, d2 = objective(coef)
    g = d1 * y / n + 2.0 * lam * coef
    dist = math.sqrt(max(float(g @ K @ g), 0.0)) / (2.0 * lam)
    return KernelMachineSolution(coef, dist, J, it, f"Newton in function space ({loss})")


class PrivateKernelMachine(ReleaseMixin, _FunctionRelease, ClassifierMixin, BaseEstimator):
    """Hall et al. (2013) Section 3, second example: a regularised kernel machine released with Gaussian-process noise.

    f_X = argmin_f (1/n) sum_i l(y_i f(x_i)) + lam ||f||_H^2 in the RKHS of K(x, y) = exp(-||x - y||^2 /
    (2 sigma^2)) (kappa^2 = sup K(x, x) = 1, any finite inputs) is released as f_X + s G, G ~ GP(0, K), with s
    calibrated to the RKHS sensitivity L kappa / (n lam) (Proposition 2.1).

    ``solver="exact"``: the representer theorem with the n x n Gram matrix (:func:`solve_kernel_machine`), released
    as the sample path at the public ``points`` (and at new points with ``curator=True``), like :class:`PrivateKDE`.
    ``solver="nystrom"``: the same problem over the span of K(p, .) for *public* ``landmarks`` p (chosen without the
    data), through the features v(x) = A_P^{-1} k_P(x) (A_P A_P' = K_PP + tau I; rows clipped to norm <= 1, a
    per-record map), an O(n m^2) solve; the release is w + s z, z ~ N(0, I) on the coefficient vector, i.e. the GP
    release of Proposition 2.1 for the kernel k_P(x, y) = v(x)'v(y), with the same sensitivity.  The guarantee is
    the same; the function class shrinks to the landmarks' span, and the release is a finite vector that answers any
    point.

    Parameters
    ----------
    epsilon : float, default=1.0
        The privacy level epsilon.
    delta : float, default=1e-5
        The privacy level delta; must be at most 1/(10 n) (n rows; ``fit`` raises ``ValueError``).
    alpha : float, default=2e-2
        The regulariser of (1/n) sum_i l + (alpha / 2) ||f||_H^2, i.e. twice the paper's lam of
        (1/n) sum_i l + lam ||f||_H^2; the noise scales as 1 / (n alpha).
    loss : {"hinge", "logistic", "squared"}, default="hinge"
        The loss l: hinge and logistic are 1-Lipschitz; squared is L = 2 (1 + 1/sqrt(lam))-Lipschitz on the values
        the minimisers take (ours, :func:`dpkernels.bounds.hall.squared_loss_lipschitz`).
    sigma : float, default=1.0
        The Gaussian kernel's width in exp(-||x - y||^2 / (2 sigma^2)); public (chosen without the data).
    classes : sequence of two labels, "data" or None, default=None
        The public label set (``classes[0]`` maps to -1, ``classes[1]`` to +1).  None: the labels must be -1/+1.
        ``"data"`` reads the label set from the data, explicitly: the fit is then NOT private.
    solver : {"exact", "nystrom"}, default="exact"
        The representer solve (n <= 6000) or the Nystrom solve over public ``landmarks``.
    landmarks : array-like of shape (m, d) or None, default=None
        The public landmarks of ``solver="nystrom"`` (required there).
    points : array-like of shape (k, d) or None, default=None
        ``solver="exact"``: public points at which the function is released at fit (``points`` or ``curator=True``
        is required).
    curator : bool, default=False
        ``solver="exact"``: keep the private data and the noise state to answer new points on the same sample path;
        the object is then the curator, NOT a release (its pickle and :meth:`release` hold only the released points
        and values).
    calibration : {"analytic", "hall"}, default="analytic"
        The exact Gaussian calibration of dp-accounting, or Proposition 1.1's (which falls short at large epsilon: a
        :class:`CalibrationWarning` then says so).
    solver_tol : float, default=1e-3
        The solver must certify ||f - f*||_H <= solver_tol x the sensitivity, else ``fit`` raises ``RuntimeError``;
        the calibration uses (1 + 2 solver_tol) x the sensitivity.
    max_points : int, default=4096
        ``solver="exact"``: the largest number of released points (the float margins are computed for it).
    jitter : float, default=1e-6
        tau / K(x, x), the relative jitter added to the Gram diagonal (module docstring).
    noise : {"lattice", "continuous"}, default="lattice"
        ``"lattice"``: exact rounding to a public grid (floating-point safe); ``"continuous"``: float normals (NOT
        floating-point safe; warns).
    keep_nonprivate : bool, default=False
        Keep the data and the non-private solution as ``nonprivate_`` for evaluation (:meth:`sample_releases`,
        :meth:`nonprivate_function`); the object is then not a release.
    random_state : None, int, SeedSequence or numpy.random.Generator, default=None
        The noise source.  None draws from operating-system entropy; a seed is for reproduction only.

    Attributes
    ----------
    released_points_ : ndarray of shape (k, d)
        ``solver="exact"``: the points released so far.
    released_values_ : ndarray of shape (k,)
        ``solver="exact"``: the released function values there (the release).
    coef_ : ndarray of shape (m,)
        ``solver="nystrom"``: w + s z, the released coefficients on the landmarks' features (the release).
    landmark_factor_ : ndarray of shape (m, m)
        ``solver="nystrom"``: A_P, the lower Cholesky factor of K_PP + tau I (public: landmarks only).
    noise_multiplier_ : float
        s, the noise multiplier (s^2 = the paper's c).
    sensitivity_ : float
        The total sensitivity the noise is calibrated to: ``rkhs_sensitivity_`` + ``float_sensitivity_``.
    rkhs_sensitivity_ : float
        The RKHS sensitivity of the released function (the paper's Delta).
    float_sensitivity_ : float
        ``solver="exact"``: what the float error of the mean adds to the sensitivity (module docstring).
    jitter_ : float
        tau, the jitter added to the Gram diagonal.
    grid_ : float or None
        The spacing of the public grid of the released values (``noise="lattice"``), else None.
    max_points_ : int
        ``solver="exact"``: the largest number of points the release may hold.
    n_samples_ : int
        n, the number of training rows (public under replace-one).
    classes_ : ndarray of shape (2,)
        The public label set; ``predict`` returns ``classes_[1]`` where the released function is >= 0.
    n_features_in_ : int
        d, the number of input features.
    guarantee_ : Guarantee
        The privacy statement of the fit (:class:`~dpkernels.mechanisms.base.Guarantee`).
    nonprivate_ : object
        The data and the non-private solution (``keep_nonprivate=True`` only; NOT private).

    See Also
    --------
    PrivateKDE : the first example of Section 3.
    PrivateSVM, ObjectivePerturbation : pure-DP kernel classifiers on random features.

    Notes
    -----
    Privacy: (epsilon, delta)-differential privacy for the replace-one neighbouring relation (n fixed),
    Proposition 2.1 with the sensitivity L kappa / (n lam); ``guarantee_.delta`` is the larger of ``delta`` and the
    exact delta of the calibrated noise.  Released: the values at the released points (``solver="exact"``) or the
    noisy coefficients (``solver="nystrom"``), with the public constants above.  Assumptions: the labels lie in the
    public ``classes``; the loss is convex and L-Lipschitz on the values the minimisers take; K(x, x) = 1; the exact
    minimiser (certified, and the certified error folded into the calibration); the bandwidth, points and landmarks
    are chosen without the data; conventional BLAS/LAPACK for the rounding-error bounds.  Floating point: released
    values are exactly rounded to a public grid and the float errors are folded into the calibration (module
    docstring).  Publish :meth:`release` (never a curator).

    Examples
    --------
    >>> import numpy as np
    >>> from dpkernels import PrivateKernelMachine
    >>> rng = np.random.default_rng(0)
    >>> X = rng.uniform(-1, 1, size=(200, 2))
    >>> y = np.where(X[:, 0] > 0, 1, 0)
    >>> grid = np.linspace(-1, 1, 5)
    >>> landmarks = np.array([[a, b] for a in grid for b in grid])  # public: chosen without the data
    >>> clf = PrivateKernelMachine(epsilon=1.0, delta=1e-5, alpha=0.2, classes=[0, 1], solver="nystrom",
    ...                            landmarks=landmarks).fit(X, y)
    >>> clf.guarantee_.epsilon, clf.guarantee_.delta
    (1.0, 1e-05)
    >>> clf.coef_.shape, clf.predict(X[:5]).shape
    ((25,), (5,))
    """

    def __init__(self, *, epsilon: float = 1.0, delta: float = 1e-5, alpha: float = 2e-2, loss: str = "hinge",
                 sigma: float = 1.0, classes: Sequence[Any] | None = None, solver: str = "exact",
                 landmarks: ArrayLike | None = None, points: ArrayLike | None = None, curator: bool = False,
                 calibration: str = "analytic", solver_tol: float = 1e-3, max_points: int = DEFAULT_MAX_POINTS,
                 jitter: float = DEFAULT_JITTER, noise: str = "lattice", keep_nonprivate: bool = False,
                 random_state: object = None) -> None:
        self.epsilon = epsilon
        self.delta = delta
        self.alpha = alpha
        self.loss = loss
        self.sigma = sigma
        self.classes = classes
        self.solver = solver
        self.landmarks = landmarks
        self.points = points
        self.curator = curator
        self.calibration = calibration
        self.solver_tol = solver_tol
        self.max_points = max_points
        self.jitter = jitter
        self.noise = noise
        self.keep_nonprivate = keep_nonprivate
        self.random_state = random_state

    #: rows above which the exact solver refuses (the n x n Gram matrix); use solver="nystrom"
    MAX_EXACT_ROWS = 6000

    #: exact solver: the released points and values; Nystrom: the noisy coefficients and the (public) landmark factor
    _release_attributes = _FunctionRelease._release_attributes + ("coef_", "landmark_factor_")
    _nystrom_attributes = ("coef_", "landmark_factor_", "noise_multiplier_", "sensitivity_", "rkhs_sensitivity_",
                           "grid_", "jitter_", "n_samples_", "guarantee_")

    def _kernel(self) -> GaussianKernel:
        return GaussianKernel(check_positive(self.sigma, "sigma"), normalised=False)

    def fit(self, X: ArrayLike, y: ArrayLike) -> "PrivateKernelMachine":
        """Solve the kernel machine (certified) and release it with Gaussian-process noise.

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
        X = check_finite_array(X)
        epsilon, delta, noise = self._check_common(X.shape[0])
        cls, idx = resolve_classes(y, self.classes, binary=True, n_samples=X.shape[0])
        ys = np.where(idx == 1, 1.0, -1.0)
        lam = check_positive(self.alpha, "alpha") / 2.0  # the paper's lam ||f||^2 = (alpha / 2) ||f||^2
        solver_tol = check_positive(self.solver_tol, "solver_tol")
        if self.loss not in MACHINE_LOSSES:
            raise ValueError(f"loss must be one of {MACHINE_LOSSES}, got {self.loss!r}")
        if self.solver not in ("exact", "nystrom"):
            raise ValueError(f"solver must be 'exact' or 'nystrom', got {self.solver!r}")
        n, d = X.shape
        kern = self._kernel()
        rng = self._noise_rng(X, ys)
        kappa = 1.0
        L = loss_lipschitz(self.loss, kappa, lam)
        self.classes_ = cls
        self.n_features_in_ = d
        self.n_samples_ = n
        if self.solver == "nystrom":
            self._fit_nystrom(X, ys, kern, L, lam, solver_tol, epsilon, delta, noise, rng)
        else:
            self._fit_exact(X, ys, kern, L, lam, solver_tol, epsilon, delta, noise, rng)
        self._void_if_data_derived()
        return self

    # exact solver ---------------------------------------------------------------------------------------------------
    def _fit_exact(self, X, ys, kern, L, lam, solver_tol, epsilon, delta, noise, rng) -> None:
        n, d = X.shape
        if n > self.MAX_EXACT_ROWS:
            raise ValueError(f"solver='exact' needs an n x n Gram matrix; n = {n} > {self.MAX_EXACT_ROWS}: use "
                             "solver='nystrom' with public landmarks")
        if self.points is None and not self.curator:
            raise ValueError("solver='exact' releases the function at public points given at fit (points=...), or keeps "
                             "the curator (curator=True) to answer new points")
        delta_h = HB.kernel_machine_sensitivity(L, 1.0, n, lam)
        sol = solve_kernel_machine(kern(X, X), ys, self.loss, lam, distance_tol=solver_tol * delta_h)
        require_certified(sol.distance_bound, solver_tol * delta_h, "||f - f*||_H")
        margins = float_margins(kern, d, self.max_points, self.jitter, expansion_error(kern, d, n, L / (2.0 * lam)))
        coef = sol.coef
        mean = lambda Q: kernel_expansion(kern, Q, X, coef)  # noqa: E731
        P = _public_points(self.points, d)
        true_delta, statement = self._start(mean, kern, d, delta_h * (1.0 + 2.0 * solver_tol), margins, epsilon, delta,
                                            noise, rng, P)
        if self.keep_nonprivate:
            self.nonprivate_ = _NonPrivate(X.copy(), coef.copy(), X.copy(), {"solution": sol})
        self.guarantee_ = self._guarantee(epsilon, delta, true_delta, statement, noise, n, lam, L,
                                          "values at the released points of one sample path of f + s G, "
                                          "G ~ GP(0, K + tau delta)", self._float_notes(margins) + self._curator_notes())
        self._finish()

    # Nystrom solver -------------------------------------------------------------------------------------------------
    def _features(self, X: Array) -> Array:
        P = self._landmark_points()
        V = solve_triangular(self.landmark_factor_, self._kernel()(P, X), lower=True, check_finite=False).T
        nrm = np.sqrt(np.sum(V * V, axis=1))
        over = nrm > 1.0
        V[over] /= nrm[over, None] * (1.0 + 4 * _U)
        return V

    def _landmark_points(self) -> Array:
        if self.landmarks is None:
            raise ValueError("solver='nystrom' needs public landmarks (points chosen without looking at the data)")
        P = check_finite_array(self.landmarks, "landmarks")
        if P.shape[1] != self.n_features_in_:
            raise ValueError(f"landmarks must have {self.n_features_in_} columns")
        return P

    def _fit_nystrom(self, X, ys, kern, L, lam, solver_tol, epsilon, delta, noise, rng) -> None:
        n, d = X.shape
        P = self._landmark_points()
        tau = check_positive(self.jitter, "jitter") * kern.k0(d)
        self.landmark_factor_ = gp_factor(kern, P, tau)
        V = self._features(X)
        kappa_v = 1.0 + 1e-12
        delta_h = HB.kernel_machine_sensitivity(L, kappa_v, n, lam)
        tol = solver_tol * delta_h
        if self.loss == "squared":
            m = V.shape[1]
            w = cho_solve(cho_factor(V.T @ V / n + lam * np.eye(m)), V.T @ ys / n)
            grad = -2.0 * V.T @ (ys - V @ w) / n + 2.0 * lam * w
            dist = float(np.linalg.norm(grad)) / (2.0 * lam)
        elif self.loss == "hinge":
            sol = solve_erm(V, ys, Hinge(), 1.0 / (2.0 * lam), distance_tol=tol)
            w, dist = sol.coef, sol.distance_bound
        else:
            sol = solve_smooth_erm(V, ys, Logistic(), 2.0 * lam, gtol=min(1e-10, tol * 2.0 * lam))
            w, dist = sol.coef, sol.distance_bound
        require_certified(dist, tol, "||w - w*||")
        total = delta_h * (1.0 + 2.0 * solver_tol)
        s, true_delta, statement = calibrate(epsilon, delta, total, self.calibration)
        self.coef_ = noise_release(w, "gaussian", s, noise=noise, random_state=rng)
        self.noise_multiplier_ = s
        self.sensitivity_ = total
        self.rkhs_sensitivity_ = delta_h
        self.grid_ = lattice.grid_for(s) if noise == "lattice" else None
        self.jitter_ = tau
        if self.keep_nonprivate:
            self.nonprivate_ = _NonPrivate(X.copy(), w.copy(), P.copy(), {"V": V, "distance_bound": dist})
        self.guarantee_ = self._guarantee(
            epsilon, delta, true_delta, statement, noise, n, lam, L,
            "coef_ = w + s z (z ~ N(0, I)), i.e. f + s G with G ~ GP(0, k_P), k_P the Nystrom kernel of the landmarks",
            ("landmarks are public (chosen without the data); the feature rows are clipped to norm <= 1",))

    def _guarantee(self, epsilon, delta, true_delta, statement, noise, n, lam, L, released, notes) -> Guarantee:
        named = self._nystrom_attributes if self.solver == "nystrom" else _FunctionRelease._release_attributes
        attrs = named + ("n_features_in_", "classes_")
        return _void_if_delta_not_far_below_one_over_n(Guarantee(
            epsilon=epsilon, delta=max(delta, true_delta), neighbouring=REPLACE_ONE, released=released,
            statement=f"Hall et al. (2013) Proposition 2.1, Section 3 kernel machine (sensitivity L kappa / (n lam)); {statement}",
            assumptions=(f"labels in the public classes {list(self.classes_)}", f"loss {self.loss}: convex, "
                         f"{L:.6g}-Lipschitz on the values the minimisers take", f"K(x, x) = 1 (Gaussian kernel, sigma = "
                         f"{self.sigma:g}); n = {n} public", "f is the exact minimiser, certified to "
                         f"{self.solver_tol:g} x the sensitivity (folded into the calibration)",
                         "conventional BLAS/LAPACK (no Strassen-type products) for the error bounds"),
            attributes=attrs, noise=noise_description(noise),
            notes=(randomness_note(self.random_state),) + tuple(notes)
            + (("keep_nonprivate=True: this object also holds the data (nonprivate_); it is not a release",)
               if self.keep_nonprivate else ()),
        ), n)

    # prediction -----------------------------------------------------------------------------------------------------
    def decision_function(self, X: ArrayLike) -> Array:
        """The released function at the rows of X.

        ``solver="nystrom"``: any rows.  ``solver="exact"``: rows released at fit, or any rows with ``curator=True``
        (each new row is released on the same sample path, and the object stays the curator).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            The rows to score.

        Returns
        -------
        ndarray of shape (n_samples,)
            The released values; positive values predict ``classes_[1]``.
        """
        Xq = self._check_query(X)
        if self.solver == "nystrom":
            return self._features(Xq) @ self.coef_
        return self._evaluate(Xq)

    def predict(self, X: ArrayLike) -> NDArray:
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
        positive = self.decision_function(X) >= 0
        return self.classes_[positive.astype(int)]

    def __sklearn_tags__(self) -> Any:
        tags = super().__sklearn_tags__()
        tags.classifier_tags.multi_class = False  # a binary mechanism: K classes would be K releases (composition)
        tags.classifier_tags.poor_score = True  # noise at the default (epsilon, delta) on a few dozen rows
        tags.input_tags.sparse = True  # densified by check_finite_array
        return tags

    def _mean_from(self, st: _NonPrivate) -> Callable[[Array], Array]:
        if self.solver == "nystrom":
            return lambda P: self._features(P) @ st.coef
        return super()._mean_from(st)

    def _factor_at(self, points: Array) -> Array:
        if self.solver == "nystrom":
            return self._features(points)
        return super()._factor_at(points)
