"""Gradient perturbation and its peers for regularised ERM on the original features: the methods later work showed
beating output and objective perturbation (issue 29).

* :class:`NoisyGradientDescent` (DP-GD): full-batch gradient descent whose every step releases the mean of the
  per-example gradients clipped to norm C plus Gaussian noise (Bassily, Smith and Thakurta 2014, Sec. 4; Yu, Zhang,
  Chen, Yin and Liu 2020, Algorithm 1).  T steps of L2 sensitivity 2C/n (replace-one) compose *exactly* into one
  Gaussian mechanism of sensitivity sqrt(T) 2C/n (Gaussian DP, Dong, Roth and Su 2022), calibrated analytically by
  dp-accounting (:func:`dpkernels.mechanisms.bassily.calibrate_noisy_gd`, whose signature this module keeps).
* :class:`DPSGD`: stochastic gradient descent on Poisson-subsampled batches with per-example clipping and Gaussian
  noise on the batch sum (Abadi, Chu, Goodfellow, McMahan, Mironov, Talwar and Zhang 2016, Algorithm 1; Yu et al.
  2020, Algorithm 2 with batches), accounted by dp-accounting's privacy-loss-distribution accountant with
  ``NeighboringRelation.REPLACE_ONE`` (:func:`dp_sgd_epsilon`).
* :class:`ApproximateMinimaPerturbation` (AMP): objective perturbation with Gaussian noise, an *approximate*
  minimiser certified to a gradient norm gamma, and Gaussian output noise covering the approximation (Iyengar,
  Near, Song, Thakkar, Thakurta and Wang 2019, Algorithm 1), for the logistic loss.
* :class:`OutputPerturbedSGD`: permutation-based mini-batch SGD with a constant step, then Gaussian noise calibrated
  to its L2 sensitivity 2 k eta L / b (Wu, Li, Kumar, Chaudhuri, Jha and Naughton 2017, "Bolt-on differential
  privacy", Algorithm 2 and Theorem 6 for the convex case with mini-batches).

Neighbouring relation: replace-one (n fixed; :data:`~dpkernels.mechanisms.base.REPLACE_ONE`), the relation of the
workbook's five papers, for every estimator here.  Each fitted ``guarantee_`` states exactly what its accountant
computed.  Every noisy quantity goes through :func:`~dpkernels.mechanisms.base.noise_release` (``noise="lattice"``
by default: the continuous Gaussian mechanism exactly rounded to a grid, :mod:`dpkernels.lattice`), and every
sensitivity includes the float64 rounding of the quantity it bounds (the computed centre, not the real one).

What is ours, not the papers':

* DP-GD and DP-SGD clip the gradient of the loss only; the regulariser's gradient alpha w is a function of the
  previous releases and costs nothing.  DP-SGD divides the noisy batch sum by the expected batch size q n (public).
* AMP's privacy argument (:func:`amp_calibration`): the papers' proofs were not recovered here, so we prove the
  statement we implement.  (i) The exact minimiser theta* of J_b(w) = (1/n) sum l(y_i w'x_i) + (lambda/2) ||w||^2 +
  b'w / n with b ~ N(0, sigma_1^2 I): the map theta -> b is a bijection with Jacobian -(sum_i l'' x_i x_i' + n lambda
  I); a replaced row changes log ``|det|`` by at most log(1 + c R^2 / (n lambda)), which we charge twice (the paper's
  r = 2 for a rank-one Hessian): eps_jac = 2 log(1 + c R^2 / (n lambda)).  The noise densities differ by the shift
  v = b_D'(theta) - b_D(theta), which lies in span{x_i, x_i'} (dimension <= 2) with ||v|| <= 2R, so the privacy loss
  of the noise part is at most 2R ||P b|| / sigma_1^2 + (2R)^2 / (2 sigma_1^2) with ||P b|| / sigma_1 a chi variable
  with <= 2 degrees of freedom: P(||P b|| > sigma_1 t) <= exp(-t^2 / 2) = delta_1 at t = sqrt(2 log(1 / delta_1)).
  So theta* is (eps_noise + eps_jac, delta_1)-DP.  (ii) Given theta*, the float64 point theta~ the solver returns
  is a deterministic function of (D, theta*) within gamma / lambda of it (certified, :mod:`dpkernels.solvers.certify`),
  so two neighbours' theta~ differ by at most 2 gamma / lambda: the output noise is the Gaussian mechanism at that
  sensitivity (analytic calibration).  Adaptive composition: (eps_noise + eps_jac + eps_out, delta_1 + delta_out).
  Iyengar et al.'s implementation charges gamma n / Lambda (one side) for (ii); we charge both sides.
* Output-perturbed SGD drops the last n mod b rows of each permutation (a partial batch would weigh its rows more
  than 1 / b) and adds the float64 rounding of the trajectory to the sensitivity (:func:`sgd_rounding_bound`).
"""

from __future__ import annotations

import functools
import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np
from numpy.typing import ArrayLike, NDArray
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.utils.extmath import row_norms
from sklearn.utils.metaestimators import available_if
from sklearn.utils.multiclass import type_of_target
from sklearn.utils.validation import check_is_fitted, column_or_1d

from dpkernels import lattice
from dpkernels._validation import (
    DEFAULT_DATA_NORM,
    check_delta,
    check_delta_far_below_inverse_n,
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
from dpkernels.losses import MarginLoss, make_loss
from dpkernels.mechanisms.base import (
    REPLACE_ONE,
    Guarantee,
    ReleaseMixin,
    check_noise,
    noise_description,
    noise_release,
    resolve_classes,
    split_intercept,
)
from dpkernels.mechanisms.bassily import _check_int, calibrate_noisy_gd, gradient_sensitivity
from dpkernels.solvers.certify import certified_gradient, newton_end_game
from dpkernels.solvers.smooth import Design, _curvature, _loss_parts, solve_smooth_erm_batch

__all__ = [
    "NoisyGradientDescent",
    "DPSGD",
    "ApproximateMinimaPerturbation",
    "OutputPerturbedSGD",
    "GRADIENT_LOSSES",
    "clip_bound",
    "as_design_matrix",
    "dp_gd_calibration",
    "dp_sgd_calibration",
    "output_sgd_calibration",
    "clipped_mean_gradient",
    "noisy_gd_path",
    "dp_sgd_path",
    "dp_sgd_record_bound",
    "dp_sgd_epsilon",
    "calibrate_dp_sgd",
    "accounting_discretization",
    "poisson_rate",
    "AMPCalibration",
    "amp_calibration",
    "amp_noise_sigma",
    "amp_noise_epsilon",
    "amp_releases",
    "permutation_sgd_path",
    "sgd_rounding_bound",
    "output_sgd_sensitivity",
]

Array = NDArray[np.float64]
_U = 2.0**-53
#: Smooth margin losses with ``|l'|`` <= 1 the estimators accept (the hinge is not differentiable).
GRADIENT_LOSSES = ("logistic", "huber")
#: DP-SGD runs chains masked over all rows (rather than gathering each chain's batch) up to this many row-chain pairs.
_MASKED_ENTRIES = 1 << 21
#: Relative slack on a public row-norm bound: :func:`dpkernels._validation.check_row_norms` accepts rows up to
#: 1e-9 above it; clipped rows land within a few ulps.
_NORM_SLACK = 2e-9


# ----------------------------------------------------------------------------------------------
# clipped gradients (DP-GD, DP-SGD)
# ----------------------------------------------------------------------------------------------
def clip_bound(clip_norm: float, d: int) -> float:
    """A bound on the float64 norm of a per-example gradient clipped to ``clip_norm`` in ``d`` dimensions.

    The clipped vector s l'(z) a with s = min(1, C / fl(``|l'(z)|`` fl(||a||))) is computed with a relative error of at
    most (d + 8) u in norm (the row norm's sum and square root, the quotient, the products); 2 (d + 16) u covers it."""
    return check_positive(clip_norm, "clip_norm") * (1.0 + 2.0 * (int(d) + 16) * _U)


def _clip_factors(V: Array, norms: Array, clip_norm: float) -> Array:
    """l'(z) times min(1, C / (``|l'(z)|`` ||a||)) per entry: the derivative of each clipped per-example gradient."""
    mag = np.abs(V) * norms[:, None]
    with np.errstate(divide="ignore", over="ignore"):  # a zero gradient: no clipping (its factor is irrelevant)
        scale = np.minimum(1.0, clip_norm / mag)
    return V * scale


def clipped_mean_gradient(A: Array, W: Array, loss: MarginLoss, clip_norm: float, norms: Array | None = None,
                          counts: Array | None = None) -> Array:
    """(1/n) sum_i clip_C(l'(a_i'w) a_i) at every column w of ``W`` (shape (d, c)) for the signed rows a_i = y_i x_i;
    returns (d, c).  ``norms``: the rows' norms (computed when omitted).  ``counts``: integer multiplicities of the
    rows (merged duplicates: the same real sum; its float64 error, products included, stays within the gamma_{n+1}
    of :func:`~dpkernels.mechanisms.bassily.gradient_sensitivity` because there are fewer distinct rows than n)."""
    norms = row_norms(A) if norms is None else norms
    _, V = _loss_parts(loss, np.asarray(A @ W), value=False)
    F = _clip_factors(V, norms, clip_norm)
    if counts is None:
        return np.asarray(A.T @ F) / A.shape[0]
    return np.asarray(A.T @ (F * counts[:, None])) / float(np.sum(counts))


def as_design_matrix(A: Array) -> Array | Any:
    """``A`` as a CSR matrix when at most 30% of it is non-zero (one-hot columns: the products cost the non-zeros),
    else unchanged.  The float64 sums then run in another order, which every sensitivity here covers (any order)."""
    from scipy import sparse

    if sparse.issparse(A) or A.size < 20_000 or np.count_nonzero(A) > 0.3 * A.size:
        return A
    return sparse.csr_matrix(A)


def _per_chain(value: float | ArrayLike, c: int, name: str) -> Array:
    arr = np.broadcast_to(np.asarray(value, dtype=np.float64), (c,)).copy()
    if not np.all(np.isfinite(arr) & (arr >= 0)):
        raise ValueError(f"{name} must be finite and non-negative, got {value!r}")
    return arr


def noisy_gd_path(A: Array, *, loss: MarginLoss, alpha: float, clip_norm: float, sigma: float | ArrayLike,
                  learning_rate: float | ArrayLike, n_iter: int, noise: str = "lattice", random_state: object = None,
                  n_chains: int = 1, counts: Array | None = None) -> Array:
    """``n_chains`` independent runs of noisy full-batch gradient descent from w_0 = 0; returns the last iterates
    (n_chains, d).

    Step: w <- w - eta (g~ + alpha w), g~ the release of the clipped mean gradient g plus N(0, sigma^2 I), drawn as
    ``noise`` says: sigma times the release of g / sigma with unit noise (``"lattice"``: exactly rounded,
    :func:`~dpkernels.lattice.gaussian_lattice`), one call for every chain whatever its sigma.  ``sigma`` and
    ``learning_rate`` are scalars or one value per chain; the caller calibrates sigma (:func:`calibrate_noisy_gd`).
    ``counts``: the rows' multiplicities when duplicates were merged (:func:`clipped_mean_gradient`)."""
    rng = check_random_state(random_state)
    c = int(n_chains)
    sig = _per_chain(sigma, c, "sigma")
    eta = _per_chain(learning_rate, c, "learning_rate")
    norms = row_norms(A)
    counts = None if counts is None else np.asarray(counts, dtype=np.float64)
    W = np.zeros((A.shape[1], c))
    for _ in range(int(n_iter)):
        G = clipped_mean_gradient(A, W, loss, clip_norm, norms, counts)
        noisy = noise_release(G / sig, "gaussian", 1.0, noise=noise, random_state=rng) * sig
        W -= eta * (noisy + alpha * W)
    return W.T


def dp_gd_calibration(epsilon: float, delta: float, clip_norm: float, n: int, d: int, n_iter: int) -> tuple[float, float]:
    """(sigma, sensitivity) of :class:`NoisyGradientDescent`: the replace-one sensitivity of one step's clipped mean
    gradient, 2C/n with the float64 rounding (:func:`~dpkernels.mechanisms.bassily.gradient_sensitivity` of
    :func:`clip_bound`), and the sigma at which ``n_iter`` such steps compose to (epsilon, delta)
    (:func:`~dpkernels.mechanisms.bassily.calibrate_noisy_gd`)."""
    sens = gradient_sensitivity(clip_bound(clip_norm, d), int(n))
    return calibrate_noisy_gd(epsilon, delta, sens, int(n_iter)), sens


# ----------------------------------------------------------------------------------------------
# DP-SGD: Poisson subsampling, accounted with dp-accounting under replace-one
# ----------------------------------------------------------------------------------------------
def poisson_rate(sampling_rate: float) -> float:
    """The inclusion probability the sampler realises: a row is kept when U < q with U = k 2^-53 (numpy's
    ``Generator.random``), so with probability ceil(q 2^53) 2^-53 >= q; the accountant is given that number."""
    q = check_probability(sampling_rate, "sampling_rate")
    return math.ceil(q * 2.0**53) * 2.0**-53


def dp_sgd_record_bound(clip_norm: float, d: int, n: int) -> float:
    """A bound on how far one row can move the float64 batch sum from its reference, per side of a replacement: the
    clipped gradient's float norm (:func:`clip_bound`) plus the summation error gamma_n sum ||v_i|| <= n gamma_n C_f
    of a batch of at most n rows (Higham 2002, any order), plus the division by the noise scale (2u).  When the
    replaced row is not sampled the two batches are the same rows in the same order: the sums are identical."""
    n = int(n)
    g = (n + 1) * _U / (1.0 - (n + 1) * _U)
    return clip_bound(clip_norm, d) * (1.0 + n * g) * (1.0 + 4.0 * _U)


def _pld_accountant(relation: str, discretization: float) -> Any:
    import dp_accounting
    from dp_accounting.pld import pld_privacy_accountant

    rel = {"replace": dp_accounting.NeighboringRelation.REPLACE_ONE,
           "add_remove": dp_accounting.NeighboringRelation.ADD_OR_REMOVE_ONE}[relation]
    return pld_privacy_accountant.PLDAccountant(rel, value_discretization_interval=discretization)


def _dp_sgd_event(noise_multiplier: float, sampling_rate: float, n_iter: int) -> Any:
    import dp_accounting

    return dp_accounting.SelfComposedDpEvent(
        dp_accounting.PoissonSampledDpEvent(sampling_rate, dp_accounting.GaussianDpEvent(noise_multiplier)), int(n_iter))


def accounting_discretization(epsilon: float) -> float:
    """The privacy-loss discretisation the DP-SGD accounting uses at a target ``epsilon``: epsilon / 1000, within
    [1e-5, 1e-2] (pessimistic rounding: the result is an upper bound whatever the interval; a finer one is tighter and
    slower)."""
    return min(1e-2, max(1e-5, 1e-3 * float(epsilon)))


def dp_sgd_epsilon(noise_multiplier: float, sampling_rate: float, n_iter: int, delta: float, *,
                   relation: str = "replace", discretization: float = 1e-4) -> float:
    """Epsilon at ``delta`` of ``n_iter`` Poisson-subsampled Gaussian steps (dp-accounting's privacy-loss
    distributions, pessimistic discretisation: an upper bound).

    ``noise_multiplier`` is the noise standard deviation over the per-record bound C (one record moves the batch sum
    by at most C from a reference).  ``relation="replace"`` passes ``NeighboringRelation.REPLACE_ONE``: the
    accountant's pair is q N(-C) + (1 - q) N(0) against q N(+C) + (1 - q) N(0), a replaced record moving the sum by
    up to 2C when sampled (with q = 1 it is the Gaussian mechanism at sensitivity 2C).  ``"add_remove"`` is
    ``ADD_OR_REMOVE_ONE`` (sensitivity C), for comparison only: it is not the guarantee of any estimator here.

    Examples
    --------
    >>> from dpkernels.accounting import gaussian_epsilon
    >>> from dpkernels.mechanisms.gradient import dp_sgd_epsilon
    >>> round(dp_sgd_epsilon(4.0, 1.0, 1, 1e-5), 3) == round(gaussian_epsilon(4.0, 1e-5, 2.0), 3)
    True

    A function of public parameters only (checked, then cached per process).
    """
    if relation not in ("replace", "add_remove"):
        raise ValueError(f"relation must be 'replace' or 'add_remove', got {relation!r}")
    return _dp_sgd_epsilon(check_positive(noise_multiplier, "noise_multiplier"), float(sampling_rate), int(n_iter),
                           check_delta(delta), relation, float(discretization))


@functools.lru_cache(maxsize=1024)
def _dp_sgd_epsilon(noise_multiplier: float, sampling_rate: float, n_iter: int, delta: float, relation: str,
                    discretization: float) -> float:
    """:func:`dp_sgd_epsilon` on checked arguments (cached: a privacy-loss-distribution composition of about 20 ms)."""
    acc = _pld_accountant(relation, discretization)
    acc.compose(_dp_sgd_event(noise_multiplier, sampling_rate, n_iter))
    return float(acc.get_epsilon(delta))


@functools.lru_cache(maxsize=256)
def calibrate_dp_sgd(epsilon: float, delta: float, sampling_rate: float, n_iter: int, *,
                     relation: str = "replace") -> float:
    """The smallest noise multiplier (to 0.1% relative) whose :func:`dp_sgd_epsilon` at ``delta`` is at most
    ``epsilon``: a bracket from a classical-Gaussian guess, then bisection in log z; the returned z meets the budget
    (every evaluation is a fresh dp-accounting accountant, discretised by :func:`accounting_discretization`).  A function of public parameters only (cached)."""
    epsilon, delta = check_epsilon(epsilon), check_delta(delta)
    disc = accounting_discretization(epsilon)

    def ok(z: float) -> bool:
        return dp_sgd_epsilon(z, sampling_rate, n_iter, delta, relation=relation, discretization=disc) <= epsilon

    hi = max(0.5, math.sqrt(2.0 * math.log(1.25 / delta)) * 2.0 * sampling_rate * math.sqrt(n_iter) / epsilon)
    while not ok(hi):
        hi *= 2.0
    lo = hi / 2.0
    while lo > 0.25 and ok(lo):
        hi, lo = lo, lo / 2.0
    while hi / lo > 1.001:
        mid = math.sqrt(lo * hi)
        if ok(mid):
            hi = mid
        else:
            lo = mid
    return hi


def dp_sgd_calibration(epsilon: float, delta: float, sampling_rate: float, clip_norm: float, n: int, d: int,
                       n_iter: int) -> tuple[float, float, float]:
    """(noise multiplier z, noise standard deviation on the batch sum z C', realised inclusion probability q) of
    :class:`DPSGD`: :func:`calibrate_dp_sgd` at the sampler's q (:func:`poisson_rate`) and the per-record bound C'
    (:func:`dp_sgd_record_bound`)."""
    q = poisson_rate(sampling_rate)
    z = calibrate_dp_sgd(check_epsilon(epsilon), check_delta(delta), q, int(n_iter))
    return z, z * dp_sgd_record_bound(clip_norm, d, n), q


def dp_sgd_path(A: Array, *, loss: MarginLoss, alpha: float, clip_norm: float, sampling_rate: float,
                noise_std: float | ArrayLike, learning_rate: float | ArrayLike, n_iter: int, schedule: str = "constant",
                noise: str = "lattice", random_state: object = None, n_chains: int = 1) -> Array:
    """``n_chains`` independent runs of DP-SGD from w_0 = 0; returns the last iterates (n_chains, d).

    Step t: each row joins the batch independently with probability q (``sampling_rate``); S = sum over the batch of
    the clipped per-example gradients; S~ = release of S + N(0, noise_std^2 I) (``noise``: lattice by default);
    w <- w - eta_t (S~ / (q n) + alpha w), eta_t = ``learning_rate``, halved from step T/2 on when
    ``schedule="step"`` (Yu et al. 2020, Sec. 4).  With few rows and many chains (audits) the batch is a mask over
    every row (an excluded row contributes an exact zero, so the sums are those of the batch alone up to order)."""
    rng = check_random_state(random_state)
    c = int(n_chains)
    n, d = A.shape
    sd = _per_chain(noise_std, c, "noise_std")
    eta = _per_chain(learning_rate, c, "learning_rate")
    if schedule not in ("constant", "step"):
        raise ValueError(f"schedule must be 'constant' or 'step', got {schedule!r}")
    q = check_probability(sampling_rate, "sampling_rate")
    norms = row_norms(A)
    W = np.zeros((d, c))
    S = np.empty((d, c))
    T = int(n_iter)
    # many chains on few rows (audits): every row for every chain, masked; else each chain's batch gathered
    masked = n * c <= _MASKED_ENTRIES
    for t in range(T):
        if masked:
            _, V = _loss_parts(loss, np.asarray(A @ W), value=False)
            S[:] = np.asarray(A.T @ (_clip_factors(V, norms, clip_norm) * (rng.random((n, c)) < q)))
        else:
            for k in range(c):
                rows = np.flatnonzero(rng.random(n) < q)
                if rows.size:
                    Ab = A[rows]
                    _, V = _loss_parts(loss, np.asarray(Ab @ W[:, k:k + 1]), value=False)
                    S[:, k] = np.asarray(Ab.T @ _clip_factors(V, norms[rows], clip_norm))[:, 0]
                else:
                    S[:, k] = 0.0
        noisy = noise_release(S / sd, "gaussian", 1.0, noise=noise, random_state=rng) * sd
        step = eta * (0.5 if schedule == "step" and t >= T // 2 else 1.0)
        W -= step * (noisy / (q * n) + alpha * W)
    return W.T


# ----------------------------------------------------------------------------------------------
# approximate minima perturbation (Iyengar et al. 2019)
# ----------------------------------------------------------------------------------------------
def amp_noise_epsilon(sigma: float, delta: float, sensitivity: float) -> float:
    """The epsilon of the noise part of objective perturbation with b ~ N(0, sigma^2 I) whose shift v lies in a fixed
    subspace of dimension <= 2 with ||v|| <= ``sensitivity`` (module docstring): Delta t / sigma + Delta^2 /
    (2 sigma^2) with t = sqrt(2 log(1 / delta)), exceeded with probability at most delta."""
    t = math.sqrt(2.0 * math.log(1.0 / check_delta(delta)))
    a = check_positive(sensitivity, "sensitivity") / check_positive(sigma, "sigma")
    return a * t + 0.5 * a * a


def amp_noise_sigma(epsilon: float, delta: float, sensitivity: float) -> float:
    """The smallest sigma with :func:`amp_noise_epsilon` (sigma, delta, sensitivity) <= epsilon:
    Delta (t + sqrt(t^2 + 2 eps)) / (2 eps), checked after rounding."""
    epsilon = check_epsilon(epsilon)
    t = math.sqrt(2.0 * math.log(1.0 / check_delta(delta)))
    sigma = check_positive(sensitivity, "sensitivity") * (t + math.sqrt(t * t + 2.0 * epsilon)) / (2.0 * epsilon)
    while amp_noise_epsilon(sigma, delta, sensitivity) > epsilon:
        sigma = float(np.nextafter(sigma, math.inf))
    return sigma


@dataclass(frozen=True)
class AMPCalibration:
    """The public constants of one AMP release (:func:`amp_calibration`)."""

    epsilon_noise: float  #: epsilon of b's density ratio (exceeded with probability delta_objective)
    epsilon_jacobian: float  #: 2 log(1 + c R^2 / (n lambda)), the Jacobian's share
    epsilon_out: float  #: the output Gaussian mechanism's epsilon
    delta_objective: float
    delta_out: float
    lam: float  #: lambda, the regulariser of J_b (its strong convexity)
    lam_min: float  #: the smallest lambda the Jacobian share allows
    sigma_objective: float  #: sigma_1 of b
    sensitivity_objective: float  #: 2R (the shift of b)
    gamma: float  #: the certified gradient-norm tolerance
    sigma_out: float  #: sigma_2 of the output noise
    sensitivity_out: float  #: 2 gamma / lambda

    @property
    def data_norm(self) -> float:
        """R, the rows' public norm bound (half the objective noise's sensitivity 2R, exactly)."""
        return self.sensitivity_objective / 2.0

    @property
    def epsilon(self) -> float:
        return self.epsilon_noise + self.epsilon_jacobian + self.epsilon_out

    @property
    def delta(self) -> float:
        return self.delta_objective + self.delta_out


def amp_calibration(epsilon: float, delta: float, n: int, data_norm: float, curvature: float, *,
                    out_fraction: float = 0.01, noise_fraction: float = 0.9, alpha: float | str = "auto",
                    gamma: float | None = None) -> AMPCalibration:
    """AMP's budget split and noise scales (Iyengar et al. 2019, Algorithm 1; the privacy argument of the module
    docstring).

    eps_out = out_fraction eps and delta_out = out_fraction delta pay for the output noise; of the rest, eps_obj,
    ``noise_fraction`` pays for b and the remainder eps_reg for the Jacobian: lambda_min = c R^2 / (n (exp(eps_reg / 2)
    - 1)) (2 log(1 + c R^2 / (n lambda)) <= eps_reg; Iyengar et al.'s Lambda = r beta / eps_reg with r = 2, in the
    normalisation J = (1/n) sum l + (lambda / 2) ||w||^2).  ``alpha="auto"`` takes lambda_min; a number must be at
    least lambda_min.  ``gamma`` (default 1 / n^2, Iyengar et al.'s choice; n is public under replace-one) is the
    certified gradient norm of the approximate minimiser.  ``curvature`` is c >= ``|l''|``, ``data_norm`` R >= ||x||."""
    epsilon, delta = check_epsilon(epsilon), check_delta(delta)
    fo = check_probability(out_fraction, "out_fraction")
    fn = check_probability(noise_fraction, "noise_fraction")
    n = int(n)
    R, c = check_positive(data_norm, "data_norm"), check_positive(curvature, "curvature")
    eps_out, delta_out = fo * epsilon, fo * delta
    eps_obj, delta_obj = epsilon - eps_out, delta - delta_out
    eps_noise = fn * eps_obj
    eps_reg = eps_obj - eps_noise
    lam_min = c * R * R / (n * math.expm1(eps_reg / 2.0))
    if isinstance(alpha, str):
        if alpha != "auto":
            raise ValueError(f"alpha must be a positive float or 'auto', got {alpha!r}")
        lam = lam_min * (1.0 + 1e-9)
    else:
        lam = check_positive(alpha, "alpha")
        if lam < lam_min:
            raise ValueError(f"alpha = {lam:g} is below the regulariser the budget split needs, {lam_min:.6g} "
                             "(2 log(1 + c R^2 / (n alpha)) <= (1 - noise_fraction) (1 - out_fraction) epsilon); use "
                             "alpha='auto', a larger alpha or a smaller noise_fraction")
    eps_jac = 2.0 * math.log1p(c * R * R / (n * lam))
    if eps_jac > eps_reg * (1.0 + 1e-12):
        raise RuntimeError("the Jacobian's share exceeds its budget after rounding")  # cannot happen with lam >= lam_min
    sens_obj = 2.0 * R
    sigma_obj = amp_noise_sigma(eps_noise, delta_obj, sens_obj)
    g = 1.0 / (float(n) * n) if gamma is None else check_positive(gamma, "gamma")
    sens_out = 2.0 * g / lam
    sigma_out = gaussian_sigma(eps_out, delta_out, sens_out)
    return AMPCalibration(eps_noise, eps_jac, eps_out, delta_obj, delta_out, lam, lam_min, sigma_obj, sens_obj, g,
                          sigma_out, sens_out)


def _newton_polish(design: Design, loss: MarginLoss, lam: float, lin: Array, w: Array) -> Array:
    """One Newton step with the float64 Hessian at w (the end game of a certified solve whose quasi-Newton iterations
    stopped above the target; the certificate, not this step, decides)."""
    _, G_data = design.loss_gradient(loss, w, value=False)
    factor = design.hessian_factor(_curvature(loss, design.matvec(w)), lam)
    return w - factor.solve(G_data + lam * w + lin)


def amp_releases(design: Design, loss: MarginLoss, cal: AMPCalibration, m: int, *, noise: str = "lattice",
                 random_state: object = None, center: Array | None = None) -> Array:
    """``m`` independent AMP releases (rows, shape (m, d)) on one design.

    b = sigma_1 z with z exact standard normals (:class:`~dpkernels.lattice.ExactNormals`: float64 balls (mid, rad)
    around the exact reals); the solver minimises J at b = mid (one batched solve,
    :func:`~dpkernels.solvers.smooth.solve_smooth_erm_batch`); each draw is certified: ||grad J_b(theta~)|| <= the
    rigorous float bound at mid plus ||rad|| / n <= gamma (a Newton polish where it is not yet, then damped Newton
    to convergence, :func:`~dpkernels.solvers.certify.newton_end_game`; ``RuntimeError`` if a draw still cannot be
    certified: no release); the output is theta~ + N(0, sigma_2^2 I) through
    :func:`~dpkernels.mechanisms.base.noise_release`.  ``center``: the unperturbed minimiser (computed if omitted)."""
    rng = check_random_state(random_state)
    m, d = int(m), design.d
    n = design.n_examples
    normals = lattice.ExactNormals(rng)
    normals.draw(m * d)
    b = normals.ball().scale(cal.sigma_objective)
    mid, rad = b.mid.reshape(m, d), b.rad.reshape(m, d)
    target = cal.gamma - np.linalg.norm(rad, axis=1) / n * (1.0 + 2.0**-40)
    if np.any(target <= 0.5 * cal.gamma):  # data-independent: the enclosure is far narrower in practice
        raise RuntimeError("the noise enclosure is too wide for the gradient target gamma")
    sol = solve_smooth_erm_batch(design, None, loss, cal.lam, mid, center=center, gtol=float(target.min()) / 4.0)
    W = sol.coef.T.copy()
    lin = mid.T / n
    cert = certified_gradient(design, loss, cal.lam, lin, W, cal.data_norm)[1]
    for _ in range(3):
        bad = np.flatnonzero(cert > target)
        if bad.size == 0:
            break
        for k in bad:
            W[:, k] = _newton_polish(design, loss, cal.lam, lin[:, k], W[:, k])
        cert[bad] = certified_gradient(design, loss, cal.lam, lin[:, bad], W[:, bad], cal.data_norm)[1]
    for k in np.flatnonzero(cert > target):  # keep solving: a refusal here would depend on the data
        W[:, k], cert[k] = newton_end_game(design, loss, cal.lam, mid[k], W[:, k], float(target[k]), cal.data_norm)
    if np.any(cert > target):
        raise RuntimeError(f"the approximate minimiser could not be certified to the gradient norm gamma = {cal.gamma:.3g}; "
                           "refusing to release")
    return noise_release(W.T, "gaussian", cal.sigma_out, noise=noise, random_state=rng)


# ----------------------------------------------------------------------------------------------
# output perturbation of permutation-based SGD (Wu et al. 2017)
# ----------------------------------------------------------------------------------------------
def output_sgd_sensitivity(lipschitz: float, learning_rate: float, n_passes: int, batch_size: int) -> float:
    """Wu et al. (2017), convex case with a constant step eta <= 2 / beta and mini-batches of b: the L2 sensitivity
    2 k eta L / b of the last iterate after k passes (each pass meets the replaced row once; every other step is
    non-expansive)."""
    return 2.0 * int(n_passes) * check_positive(learning_rate, "learning_rate") * check_positive(lipschitz, "lipschitz") \
        / int(batch_size)


def sgd_rounding_bound(n_steps: int, batch_size: int, d: int, learning_rate: float, lipschitz: float,
                       smoothness: float, alpha: float) -> float:
    """A public bound on how far the float64 trajectory of :func:`permutation_sgd_path` can drift from the exact
    iteration map applied to its own iterates, summed over the steps: each step errs by at most
    4 (b + d + 8) u (B_t (1 + eta alpha + eta beta) + eta L) (margins, l', the batch sum, the update), with
    B_t = t eta L bounding ||w_t|| (non-expansive steps from w_0 = 0, each moving at most eta L from the map's value
    at 0).  Two neighbours' outputs differ by at most :func:`output_sgd_sensitivity` plus twice this."""
    T = int(n_steps)
    eta, L = float(learning_rate), float(lipschitz)
    per = 4.0 * (int(batch_size) + int(d) + 8) * _U
    growth = 1.0 + eta * float(alpha) + eta * float(smoothness)
    return per * (growth * eta * L * T * (T - 1) / 2.0 + T * eta * L) * (1.0 + 2.0**-40)


def output_sgd_calibration(epsilon: float, delta: float, n: int, d: int, data_norm: float, smoothness: float,
                           alpha: float, learning_rate: float, n_passes: int, batch_size: int) -> tuple[float, float, float]:
    """(sigma, sensitivity, drift) of :class:`OutputPerturbedSGD`: the sensitivity 2 k eta L / b
    (:func:`output_sgd_sensitivity`, L = R) plus twice the float64 drift (:func:`sgd_rounding_bound`), and the analytic
    Gaussian sigma at (epsilon, delta).  Refuses a step above 2 / (beta + alpha) (Wu et al.'s condition)."""
    eta, beta, alpha = check_positive(learning_rate, "learning_rate"), float(smoothness), float(alpha)
    if eta > 2.0 / (beta + alpha):
        raise ValueError(f"learning_rate = {eta:g} exceeds 2 / (beta + alpha) = {2.0 / (beta + alpha):.6g} (beta = c R^2 "
                         f"= {beta:.6g}): the steps would not be non-expansive (Wu et al.'s condition)")
    k, b = int(n_passes), int(batch_size)
    drift = sgd_rounding_bound(k * (int(n) // b), b, d, eta, data_norm, beta, alpha)
    sens = output_sgd_sensitivity(data_norm, eta, k, b) + 2.0 * drift
    return gaussian_sigma(epsilon, delta, sens), sens, drift


def permutation_sgd_path(A: Array, *, loss: MarginLoss, alpha: float, batch_size: int, learning_rate: float,
                         n_passes: int, random_state: object = None, n_chains: int = 1) -> Array:
    """``n_chains`` runs of permutation-based mini-batch SGD (non-private), each over its own random permutation;
    returns the last iterates (n_chains, d).

    A run draws one permutation, cuts it into n // b batches of b rows (the last n mod b rows are left out), and makes
    ``n_passes`` passes in that order: w <- w - eta ((1/b) sum_batch l'(a_i'w) a_i + alpha w), from w_0 = 0."""
    rng = check_random_state(random_state)
    c, b = int(n_chains), int(batch_size)
    n, d = A.shape
    nb = n // b
    if nb < 1:
        raise ValueError(f"batch_size = {b} exceeds the {n} rows")
    order = np.stack([rng.permutation(n)[: nb * b].reshape(nb, b) for _ in range(c)])  # (c, nb, b)
    W = np.zeros((c, d))
    eta = float(learning_rate)
    for _ in range(int(n_passes)):
        for j in range(nb):
            Ab = A[order[:, j]]  # (c, b, d)
            _, V = _loss_parts(loss, np.einsum("cbd,cd->cb", Ab, W), value=False)
            W -= eta * (np.einsum("cbd,cb->cd", Ab, V) / b + alpha * W)
    return W


# ----------------------------------------------------------------------------------------------
# estimators
# ----------------------------------------------------------------------------------------------
@dataclass
class GradientState:
    """What ``keep_nonprivate=True`` keeps (NOT private): the training rows (signed, intercept column included) and
    the calibration, to draw further releases (:meth:`_GradientEstimator.sample_releases`) for audits."""

    A: Array  #: signed rows y_i x_i
    loss: MarginLoss
    params: dict[str, Any]


def _pm1_labels(est: BaseEstimator, X: ArrayLike, y: ArrayLike | None) -> tuple[Array, NDArray[Any], Array]:
    if y is None:
        raise ValueError(f"{type(est).__name__} requires y to be passed, but the target y is None")
    X = validate_data(est, X, accept_sparse=("csr", "csc", "coo"), dtype=np.float64, reset=True)
    X = check_finite_array(X)
    y = column_or_1d(y, warn=True)
    classes = est.classes
    if isinstance(classes, str) and classes == "data":  # classes=None: resolve_classes's one text, whatever the labels
        kind = type_of_target(y)
        if kind not in ("binary", "multiclass"):
            raise ValueError(f"Unknown label type: {kind} (a classifier needs a public set of two labels)")
        if kind == "multiclass" and len(np.unique(y)) > 2:
            raise ValueError("Only binary classification is supported. The type of the target is multiclass "
                             "(use PrivateOneVsRest)")
    cls, idx = resolve_classes(y, classes, binary=True, n_samples=X.shape[0])
    return X, cls, np.where(idx == 1, 1.0, -1.0)


class _GradientEstimator(ReleaseMixin, ClassifierMixin, BaseEstimator):
    """Shared validation, intercept column, prediction and evaluation draws of this module's estimators."""

    _release_attributes: ClassVar[tuple[str, ...]] = ("coef_", "intercept_")
    #: Whether rows must lie in the ball ``data_norm`` (AMP, output-perturbed SGD); DP-GD and DP-SGD clip gradients.
    _bounded_rows: ClassVar[bool] = False

    def _check_common(self) -> tuple[float, float, MarginLoss]:
        epsilon, delta = check_epsilon(self.epsilon), check_delta(self.delta)
        if str(self.loss) not in self._losses:
            raise ValueError(f"loss must be one of {self._losses}, got {self.loss!r}")
        check_noise(self.noise)
        return epsilon, delta, make_loss(self.loss, getattr(self, "h", 0.5))

    _losses: ClassVar[tuple[str, ...]] = GRADIENT_LOSSES

    def _prepare(self, X: ArrayLike, y: ArrayLike) -> tuple[Array, Array, float | None]:
        """(signed rows with the intercept column, labels in {-1, +1}, the rows' norm bound R (None when rows are not
        bounded)), with ``classes_`` set.  The row bound is public (``data_norm``) or read from the data on request."""
        X, self.classes_, ypm = _pm1_labels(self, X, y)
        R = None
        if self._bounded_rows:
            norms = row_norms(X)
            R, _ = public_bound(self.data_norm, norms)
            X = check_row_norms(X, R, clip=self.clip, what=f"row L2 norms ||x|| (data_norm = {R:g})", norms=norms)
            R *= 1.0 + _NORM_SLACK
        if self.fit_intercept:
            s = check_positive(self.intercept_scaling, "intercept_scaling")
            X = np.hstack([X, np.full((X.shape[0], 1), s)])
            if R is not None:
                R = math.sqrt(R * R + s * s) * (1.0 + 4.0 * _U)
        check_delta_far_below_inverse_n(self.delta, X.shape[0])
        return X * ypm[:, None], ypm, R

    def _set_release(self, w: Array) -> None:
        self.coef_, self.intercept_ = split_intercept(np.asarray(w, dtype=np.float64), self.fit_intercept,
                                                      self.intercept_scaling)

    def _scores_input(self, X: ArrayLike) -> Array:
        check_is_fitted(self, "coef_")
        X = check_finite_array(validate_data(self, X, accept_sparse=("csr", "csc", "coo"), dtype=np.float64, reset=False))
        if self._bounded_rows and self.clip and not isinstance(self.data_norm, str):
            nrm = row_norms(X)
            X = X / np.maximum(nrm / float(self.data_norm), 1.0)[:, None]
        return X

    def decision_function(self, X: ArrayLike) -> Array:
        """w'x + ``intercept_`` (rows clipped to ``data_norm`` first when the estimator bounds rows and
        ``clip=True``).  Post-processing of the release: no further privacy cost.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            The rows to score.

        Returns
        -------
        ndarray of shape (n_samples,)
            The scores; positive values predict ``classes_[1]``.
        """
        return self._scores_input(X) @ self.coef_ + self.intercept_

    def predict(self, X: ArrayLike) -> NDArray[Any]:
        """The predicted labels: ``classes_[1]`` where the decision function is >= 0, else ``classes_[0]``.

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
        return self.classes_[positive.astype(np.intp)]

    def _is_logistic(self) -> bool:
        return str(self.loss) == "logistic"

    @available_if(_is_logistic)
    def predict_proba(self, X: ArrayLike) -> Array:
        """(P(classes_[0]), P(classes_[1])) with P(classes_[1] | x) = 1 / (1 + exp(-f(x))) (logistic loss only;
        post-processing of the release).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            The rows.

        Returns
        -------
        ndarray of shape (n_samples, 2)
            Class probabilities.
        """
        p1 = 0.5 * (1.0 + np.tanh(0.5 * self.decision_function(X)))
        return np.column_stack([1.0 - p1, p1])

    def __sklearn_tags__(self) -> Any:
        tags = super().__sklearn_tags__()
        tags.classifier_tags.multi_class = False
        tags.classifier_tags.poor_score = True
        tags.input_tags.sparse = True
        return tags

    def _evaluation(self) -> GradientState:
        check_is_fitted(self, "coef_")
        if not self.keep_nonprivate:
            raise AttributeError("this estimator is a release and holds no non-private state; refit with "
                                 "keep_nonprivate=True (evaluation and audits only) to draw further releases")
        return self.nonprivate_

    def _guarantee(self, epsilon: float, delta: float, statement: str, released: str, assumptions: tuple[str, ...],
                   noise: str, notes: tuple[str, ...] = ()) -> Guarantee:
        return Guarantee(epsilon=epsilon, delta=delta, neighbouring=REPLACE_ONE, statement=statement, released=released,
                         assumptions=(f"labels in the public set classes = {self.classes_.tolist()}",) + assumptions,
                         attributes=self._release_attributes, noise=noise, notes=self._notes() + notes)


def _check_alpha(alpha: object) -> float:
    if isinstance(alpha, bool) or not isinstance(alpha, (int, float, np.floating, np.integer)) or not 0 <= alpha < math.inf:
        raise ValueError(f"alpha must be a finite number >= 0, got {alpha!r}")
    return float(alpha)


class NoisyGradientDescent(_GradientEstimator):
    """Noisy full-batch gradient descent (DP-GD): Bassily, Smith and Thakurta (2014), Yu et al. (2020) Algorithm 1.

    From w_0 = 0, ``n_iter`` steps w <- w - eta (g~ + alpha w), where g~ is the mean of the per-example loss gradients
    l'(y w'x) y x, each clipped to norm C = ``clip_norm``, plus N(0, sigma^2 I).  Released: the last iterate.

    Parameters
    ----------
    epsilon : float, default=1.0
        The privacy level epsilon.
    delta : float, default=1e-6
        The privacy level delta; at most 1/(10 n) (``fit`` raises ``ValueError`` above it).
    loss : {"logistic", "huber"}, default="logistic"
        The margin loss l (``|l'|`` <= 1).
    h : float, default=0.5
        The Huber loss's smoothing width.
    alpha : float, default=1e-4
        The L2 regulariser (the objective is the mean loss + (alpha / 2) ||w||^2; Yu et al. use 1e-4).  Not clipped:
        its gradient alpha w is a function of earlier releases.
    clip_norm : float, default=1.0
        C, the per-example gradient norm bound (Yu et al.: 1).  Rows need no norm bound.
    n_iter : int, default=200
        T, the number of noisy steps (Yu et al.'s grid: 50, 200, 800).
    learning_rate : float, default=1.0
        eta (Yu et al.'s grid: 0.1, 1, 5).
    fit_intercept : bool, default=False
        Append a constant feature ``intercept_scaling`` (regularised like the other weights).
    intercept_scaling : float, default=1.0
        The constant feature's value.
    classes : sequence of two labels, "data" or None, default=None
        The public label set (``classes[0]`` maps to -1, ``classes[1]`` to +1).  None: the labels must be -1/+1.
        ``"data"`` reads the label set from the data, explicitly: the fit is then NOT private.
    noise : {"lattice", "continuous"}, default="lattice"
        How each step's Gaussian noise is drawn: exactly rounded to a grid (floating-point safe) or numpy's float
        sampler (NOT floating-point safe; warns with :class:`~dpkernels.UnsafeNoiseWarning`).
    keep_nonprivate : bool, default=False
        Keep the training rows (``nonprivate_``) to draw further releases (:meth:`sample_releases`; audits).  The
        object is then not a release.
    random_state : None, int, SeedSequence or numpy.random.Generator, default=None
        The noise source.  None draws from operating-system entropy; a seed is for reproduction only.

    Attributes
    ----------
    coef_ : ndarray of shape (n_features,)
        The released weights (without the intercept coordinate).
    intercept_ : float
        The released intercept (0.0 without ``fit_intercept``).
    noise_sigma_ : float
        sigma, the standard deviation of each step's noise on the mean gradient.
    sensitivity_ : float
        The L2 sensitivity of one step's clipped mean gradient: 2C/n with the float64 rounding.
    epsilon_accounted_ : float
        The epsilon of the T composed steps at delta (dp-accounting's exact Gaussian curve); at most ``epsilon``.
    classes_ : ndarray of shape (2,)
        The public label set.
    n_features_in_ : int
        The number of input features.
    guarantee_ : Guarantee
        The privacy statement of the fit.
    nonprivate_ : GradientState
        The training rows (``keep_nonprivate=True`` only; NOT private).

    See Also
    --------
    DPSGD : the same on Poisson-subsampled batches.
    dpkernels.PrivateMarginClassifier : noisy projected subgradient descent on the rho-hinge loss after a JL map.

    Notes
    -----
    Privacy: (epsilon, delta)-DP for the replace-one relation.  A replaced row moves the clipped mean gradient by at
    most 2C/n (:func:`~dpkernels.mechanisms.bassily.gradient_sensitivity` adds the float64 summation error), whatever
    w is; the T adaptive Gaussian steps compose exactly into one Gaussian mechanism of sensitivity sqrt(T) 2C/n
    (Gaussian DP), and sigma is the analytic calibration (:func:`~dpkernels.mechanisms.bassily.calibrate_noisy_gd`).
    Yu et al. track Renyi DP instead (looser: more noise).  Assumptions: the labels lie in the public ``classes``.
    Publish :meth:`release`.

    Examples
    --------
    >>> import numpy as np
    >>> from dpkernels import NoisyGradientDescent
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(2000, 5)); y = np.where(X[:, 0] > 0, 1, 0)
    >>> clf = NoisyGradientDescent(epsilon=1.0, delta=1e-7, n_iter=50, classes=[0, 1]).fit(X, y)
    >>> clf.guarantee_.epsilon, clf.guarantee_.delta
    (1.0, 1e-07)
    >>> float(np.mean(clf.predict(X) == y)) > 0.9
    True
    """

    _release_attributes = ("coef_", "intercept_", "noise_sigma_", "sensitivity_", "epsilon_accounted_")

    def __init__(self, *, epsilon: float = 1.0, delta: float = 1e-6, loss: str = "logistic", h: float = 0.5,
                 alpha: float = 1e-4, clip_norm: float = 1.0, n_iter: int = 200, learning_rate: float = 1.0,
                 fit_intercept: bool = False, intercept_scaling: float = 1.0, classes: Sequence[Any] | None = None,
                 noise: str = "lattice", keep_nonprivate: bool = False, random_state: object = None) -> None:
        self.epsilon = epsilon
        self.delta = delta
        self.loss = loss
        self.h = h
        self.alpha = alpha
        self.clip_norm = clip_norm
        self.n_iter = n_iter
        self.learning_rate = learning_rate
        self.fit_intercept = fit_intercept
        self.intercept_scaling = intercept_scaling
        self.classes = classes
        self.noise = noise
        self.keep_nonprivate = keep_nonprivate
        self.random_state = random_state

    def fit(self, X: ArrayLike, y: ArrayLike) -> "NoisyGradientDescent":
        """Run T noisy full-batch gradient steps and release the last iterate.

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
        epsilon, delta, loss = self._check_common()
        A, ypm, _ = self._prepare(X, y)
        n, d = A.shape
        T = _check_int(self.n_iter, "n_iter")
        C = check_positive(self.clip_norm, "clip_norm")
        alpha = _check_alpha(self.alpha)
        eta = check_positive(self.learning_rate, "learning_rate")
        self.noise_sigma_, self.sensitivity_ = dp_gd_calibration(epsilon, delta, C, n, d, T)
        self.epsilon_accounted_ = gaussian_epsilon(self.noise_sigma_, delta, math.sqrt(T) * self.sensitivity_)
        params = dict(alpha=alpha, clip_norm=C, sigma=self.noise_sigma_, learning_rate=eta, n_iter=T)
        w = noisy_gd_path(as_design_matrix(A), loss=loss, noise=self.noise, random_state=self._noise_rng(A), **params)[0]
        self._set_release(w)
        if self.keep_nonprivate:
            self.nonprivate_ = GradientState(A, loss, params)
        self.guarantee_ = self._guarantee(
            epsilon, delta, "Bassily, Smith and Thakurta (2014) / Yu et al. (2020) Algorithm 1 (DP-GD), accounted by "
                            "Gaussian DP",
            "the last iterate w_T (coef_, intercept_)",
            (f"per-example loss gradients clipped to C = {C:g}; a replaced row moves the mean by <= 2C/n, "
             f"{self.sensitivity_:.6g} with float64 rounding (n = {n})",
             f"T = {T} adaptive Gaussian steps, sigma = {self.noise_sigma_:.6g} each: exactly one Gaussian mechanism of "
             f"sensitivity sqrt(T) x {self.sensitivity_:.6g} (Gaussian DP), analytic calibration (dp-accounting): "
             f"epsilon = {self.epsilon_accounted_:.6g} at delta = {delta:g}",
             f"regulariser alpha = {alpha:g}, learning rate {eta:g} and T are public (chosen without the data)"),
            f"T Gaussian steps; {noise_description(self.noise)}")
        self._void_if_data_derived()
        return self

    def sample_releases(self, n_draws: int, random_state: object = None, sigma: float | None = None) -> Array:
        """Further releases (rows; intercept coordinate last with ``fit_intercept``), each distributed as a fresh fit
        on the kept rows; ``sigma`` overrides the noise (negative controls).  ``keep_nonprivate=True`` only."""
        ev = self._evaluation()
        p = dict(ev.params)
        if sigma is not None:
            p["sigma"] = check_positive(sigma, "sigma")
        return noisy_gd_path(ev.A, loss=ev.loss, noise=self.noise, random_state=random_state, n_chains=int(n_draws), **p)


class DPSGD(_GradientEstimator):
    """DP-SGD with Poisson subsampling (Abadi et al. 2016, Algorithm 1; Yu et al. 2020, Algorithm 2 with batches).

    From w_0 = 0, ``n_iter`` steps: every row joins the batch independently with probability q = ``sampling_rate``;
    the per-example loss gradients are clipped to norm C, summed, and released with N(0, (z C)^2 I) noise;
    w <- w - eta_t (noisy sum / (q n) + alpha w).  Released: the last iterate.

    Parameters
    ----------
    epsilon : float, default=1.0
        The privacy level epsilon.
    delta : float, default=1e-6
        The privacy level delta; at most 1/(10 n) (``fit`` raises ``ValueError`` above it).
    loss : {"logistic", "huber"}, default="logistic"
        The margin loss.
    h : float, default=0.5
        The Huber loss's smoothing width.
    alpha : float, default=1e-4
        The L2 regulariser (not clipped; public).
    clip_norm : float, default=1.0
        C, the per-example gradient norm bound.
    sampling_rate : float, default=0.1
        q, the Poisson inclusion probability (Yu et al.: 0.1).
    n_iter : int, default=200
        T, the number of steps.
    learning_rate : float, default=2.0
        eta (Yu et al.: twice DP-GD's).
    schedule : {"step", "constant"}, default="step"
        ``"step"`` halves eta from step T/2 on (Yu et al. Sec. 4).
    fit_intercept : bool, default=False
        Append a constant feature ``intercept_scaling``.
    intercept_scaling : float, default=1.0
        The constant feature's value.
    classes : sequence of two labels, "data" or None, default=None
        The public label set.
    noise : {"lattice", "continuous"}, default="lattice"
        How each step's noise is drawn (see :class:`NoisyGradientDescent`).
    keep_nonprivate : bool, default=False
        Keep the training rows to draw further releases (audits); the object is then not a release.
    random_state : None, int, SeedSequence or numpy.random.Generator, default=None
        The source of the batches and the noise.  None draws from operating-system entropy.

    Attributes
    ----------
    coef_ : ndarray of shape (n_features,)
        The released weights.
    intercept_ : float
        The released intercept.
    noise_multiplier_ : float
        z, the noise standard deviation over the clip norm (before the float64 slack).
    noise_sigma_ : float
        z C', the standard deviation of the noise on the batch sum (C' the float64 per-record bound).
    sampling_rate_ : float
        The inclusion probability the sampler realises (:func:`poisson_rate`; the accountant's q).
    epsilon_accounted_ : float
        dp-accounting's epsilon at delta for the T steps (REPLACE_ONE); at most ``epsilon``.
    classes_ : ndarray of shape (2,)
        The public label set.
    n_features_in_ : int
        The number of input features.
    guarantee_ : Guarantee
        The privacy statement of the fit.
    nonprivate_ : GradientState
        The training rows (``keep_nonprivate=True`` only; NOT private).

    See Also
    --------
    NoisyGradientDescent : full batches, exact Gaussian composition.

    Notes
    -----
    Privacy: (epsilon, delta)-DP for the replace-one relation, by dp-accounting's privacy-loss-distribution
    accountant with ``NeighboringRelation.REPLACE_ONE`` and T self-composed ``PoissonSampledDpEvent(q,
    GaussianDpEvent(z))`` (:func:`dp_sgd_epsilon`): its pair q N(-1) + (1 - q) N(0) against q N(+1) + (1 - q) N(0), in
    units of the per-record bound C', is the replace-one pair of one step (the replaced row is in both batches or in
    neither; when in, the sums differ by at most 2C').  dp-accounting's RDP accountant does not take REPLACE_ONE
    for Poisson sampling, and an RDP Gaussian event's multiplier is relative to the L2 sensitivity (2C under
    replace-one; google/differential-privacy issue 378): we use the PLD accountant only.  z is the smallest
    multiplier meeting (epsilon, delta) (:func:`calibrate_dp_sgd`).  The batches are secret (drawn from the noise
    source).  Assumptions: the labels lie in the public ``classes``.  Publish :meth:`release`.

    Examples
    --------
    >>> import numpy as np
    >>> from dpkernels import DPSGD
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(2000, 5)); y = np.where(X[:, 0] > 0, 1, 0)
    >>> clf = DPSGD(epsilon=1.0, delta=1e-7, n_iter=50, classes=[0, 1]).fit(X, y)
    >>> clf.guarantee_.epsilon, clf.epsilon_accounted_ <= 1.0
    (1.0, True)
    """

    _release_attributes = ("coef_", "intercept_", "noise_multiplier_", "noise_sigma_", "sampling_rate_",
                           "epsilon_accounted_")

    def __init__(self, *, epsilon: float = 1.0, delta: float = 1e-6, loss: str = "logistic", h: float = 0.5,
                 alpha: float = 1e-4, clip_norm: float = 1.0, sampling_rate: float = 0.1, n_iter: int = 200,
                 learning_rate: float = 2.0, schedule: str = "step", fit_intercept: bool = False,
                 intercept_scaling: float = 1.0, classes: Sequence[Any] | None = None, noise: str = "lattice",
                 keep_nonprivate: bool = False, random_state: object = None) -> None:
        self.epsilon = epsilon
        self.delta = delta
        self.loss = loss
        self.h = h
        self.alpha = alpha
        self.clip_norm = clip_norm
        self.sampling_rate = sampling_rate
        self.n_iter = n_iter
        self.learning_rate = learning_rate
        self.schedule = schedule
        self.fit_intercept = fit_intercept
        self.intercept_scaling = intercept_scaling
        self.classes = classes
        self.noise = noise
        self.keep_nonprivate = keep_nonprivate
        self.random_state = random_state

    def fit(self, X: ArrayLike, y: ArrayLike) -> "DPSGD":
        """Run T noisy steps on Poisson batches and release the last iterate.

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
        epsilon, delta, loss = self._check_common()
        A, ypm, _ = self._prepare(X, y)
        n, d = A.shape
        T = _check_int(self.n_iter, "n_iter")
        C = check_positive(self.clip_norm, "clip_norm")
        alpha = _check_alpha(self.alpha)
        eta = check_positive(self.learning_rate, "learning_rate")
        if self.schedule not in ("constant", "step"):
            raise ValueError(f"schedule must be 'constant' or 'step', got {self.schedule!r}")
        self.noise_multiplier_, self.noise_sigma_, q = dp_sgd_calibration(epsilon, delta, self.sampling_rate, C, n, d, T)
        self.sampling_rate_ = q
        record = dp_sgd_record_bound(C, d, n)
        self.epsilon_accounted_ = dp_sgd_epsilon(self.noise_multiplier_, q, T, delta,
                                                 discretization=accounting_discretization(epsilon))
        params = dict(alpha=alpha, clip_norm=C, sampling_rate=float(self.sampling_rate), noise_std=self.noise_sigma_,
                      learning_rate=eta, n_iter=T, schedule=self.schedule)
        w = dp_sgd_path(as_design_matrix(A), loss=loss, noise=self.noise, random_state=self._noise_rng(A), **params)[0]
        self._set_release(w)
        if self.keep_nonprivate:
            self.nonprivate_ = GradientState(A, loss, params)
        self.guarantee_ = self._guarantee(
            epsilon, delta, "Abadi et al. (2016) DP-SGD with Poisson subsampling, accounted by dp-accounting (PLD, "
                            "REPLACE_ONE)",
            "the last iterate w_T (coef_, intercept_)",
            (f"per-example loss gradients clipped to C = {C:g}; one record moves the float64 batch sum by <= C' = "
             f"{record:.9g} from the accountant's reference (a replaced record: <= 2C' when sampled, 0 otherwise)",
             f"dp-accounting PLDAccountant(NeighboringRelation.REPLACE_ONE): {T} x PoissonSampledDpEvent(q = {q:.17g}, "
             f"GaussianDpEvent(z = {self.noise_multiplier_:.6g})), noise standard deviation z C' = {self.noise_sigma_:.6g} "
             f"on the sum: epsilon = {self.epsilon_accounted_:.6g} at delta = {delta:g}",
             f"regulariser alpha = {alpha:g}, learning rate {eta:g} ({self.schedule}), T and q are public"),
            f"T Gaussian steps on secret Poisson batches; {noise_description(self.noise)}")
        self._void_if_data_derived()
        return self

    def sample_releases(self, n_draws: int, random_state: object = None, noise_std: float | None = None) -> Array:
        """Further releases (rows), each distributed as a fresh fit on the kept rows; ``noise_std`` overrides the noise
        on the batch sum (negative controls).  ``keep_nonprivate=True`` only."""
        ev = self._evaluation()
        p = dict(ev.params)
        if noise_std is not None:
            p["noise_std"] = check_positive(noise_std, "noise_std")
        return dp_sgd_path(ev.A, loss=ev.loss, noise=self.noise, random_state=random_state, n_chains=int(n_draws), **p)


class ApproximateMinimaPerturbation(_GradientEstimator):
    """Approximate minima perturbation (AMP): Iyengar, Near, Song, Thakkar, Thakurta and Wang (2019), Algorithm 1.

    Objective perturbation with Gaussian noise, solved only approximately (to a certified gradient norm gamma), with
    Gaussian output noise that covers the approximation: theta_out = theta~ + N(0, sigma_2^2 I), theta~ a point with
    ||grad J_b(theta~)|| <= gamma for J_b(w) = (1/n) sum l(y_i w'x_i) + (lambda / 2) ||w||^2 + b'w / n,
    b ~ N(0, sigma_1^2 I).  Logistic loss (twice differentiable: the Jacobian argument needs it).

    Parameters
    ----------
    epsilon : float, default=1.0
        The total privacy level epsilon.
    delta : float, default=1e-6
        The total delta; at most 1/(10 n) (``fit`` raises ``ValueError`` above it).
    loss : {"logistic"}, default="logistic"
        The loss (c = 1/4 bounds l'').
    data_norm : float or "data", default=1.0
        R, a public bound on ||x|| over all possible inputs.  ``"data"`` reads it from the data: NOT private.
    clip : bool, default=False
        Rows above ``data_norm`` raise ``ValueError`` (False) or are rescaled onto the ball (True; Iyengar et al.'s
        sample clipping; prediction clips alike).
    alpha : float or "auto", default="auto"
        lambda; ``"auto"``: the smallest the budget split allows (Iyengar et al.'s Lambda), see
        :func:`amp_calibration`.
    out_fraction : float, default=0.01
        The share of epsilon and delta paying for the output noise (Iyengar et al.'s grid: 0.001, 0.01, 0.1, 0.5).
    noise_fraction : float, default=0.9
        The share of the remaining epsilon paying for b; the rest pays for the Jacobian (Iyengar et al.'s grid: 0.9,
        0.95, 0.98, 0.99).
    gamma : float or None, default=None
        The certified gradient norm; None: 1 / n^2 (Iyengar et al.).
    fit_intercept : bool, default=False
        Append a constant feature s (R becomes sqrt(R^2 + s^2)).
    intercept_scaling : float, default=1.0
        s.
    classes : sequence of two labels, "data" or None, default=None
        The public label set.
    noise : {"lattice", "continuous"}, default="lattice"
        How the output noise is drawn (b is always drawn exactly, as enclosed reals).
    keep_nonprivate : bool, default=False
        Keep the training rows to draw further releases (audits); the object is then not a release.
    random_state : None, int, SeedSequence or numpy.random.Generator, default=None
        The noise source.

    Attributes
    ----------
    coef_ : ndarray of shape (n_features,)
        The released weights.
    intercept_ : float
        The released intercept.
    alpha_ : float
        lambda, the regulariser used.
    calibration_ : AMPCalibration
        The budget split and noise scales (public).
    classes_ : ndarray of shape (2,)
        The public label set.
    n_features_in_ : int
        The number of input features.
    guarantee_ : Guarantee
        The privacy statement of the fit.
    nonprivate_ : GradientState
        The training rows (``keep_nonprivate=True`` only; NOT private).

    See Also
    --------
    dpkernels.ObjectivePerturbation : Chaudhuri et al.'s exact-minimiser objective perturbation (pure DP).

    Notes
    -----
    Privacy: (epsilon_noise + epsilon_jac + epsilon_out, delta)-DP for the replace-one relation (at most the
    ``epsilon`` asked), by the argument of the module docstring: the exact perturbed minimiser is (epsilon_noise +
    epsilon_jac, delta_1)-DP (b's density ratio bounded outside an event of probability delta_1; the Jacobian's
    ratio by 2 log(1 + c R^2 / (n lambda))), and the output, given it, is the Gaussian mechanism at sensitivity
    2 gamma / lambda; adaptive composition.  Assumptions: the labels lie in the public ``classes``; ||x|| <= R; the
    solver reaches the certified target (else ``fit`` raises and nothing is released).  Publish :meth:`release`.

    Examples
    --------
    >>> import numpy as np
    >>> from dpkernels import ApproximateMinimaPerturbation
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(2000, 5)); X /= np.linalg.norm(X, axis=1, keepdims=True)
    >>> y = np.where(X[:, 0] > 0, 1, 0)
    >>> clf = ApproximateMinimaPerturbation(epsilon=1.0, delta=1e-7, classes=[0, 1]).fit(X, y)
    >>> clf.guarantee_.epsilon <= 1.0, clf.guarantee_.delta
    (True, 1e-07)
    """

    _release_attributes = ("coef_", "intercept_", "alpha_", "calibration_")
    _bounded_rows = True
    _losses = ("logistic",)

    def __init__(self, *, epsilon: float = 1.0, delta: float = 1e-6, loss: str = "logistic",
                 data_norm: float | str = DEFAULT_DATA_NORM, clip: bool = False, alpha: float | str = "auto",
                 out_fraction: float = 0.01, noise_fraction: float = 0.9, gamma: float | None = None,
                 fit_intercept: bool = False, intercept_scaling: float = 1.0, classes: Sequence[Any] | None = None,
                 noise: str = "lattice", keep_nonprivate: bool = False, random_state: object = None) -> None:
        self.epsilon = epsilon
        self.delta = delta
        self.loss = loss
        self.data_norm = data_norm
        self.clip = clip
        self.alpha = alpha
        self.out_fraction = out_fraction
        self.noise_fraction = noise_fraction
        self.gamma = gamma
        self.fit_intercept = fit_intercept
        self.intercept_scaling = intercept_scaling
        self.classes = classes
        self.noise = noise
        self.keep_nonprivate = keep_nonprivate
        self.random_state = random_state

    def fit(self, X: ArrayLike, y: ArrayLike) -> "ApproximateMinimaPerturbation":
        """Perturb the objective, solve it to the certified gradient norm gamma and release theta~ + output noise.

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
        epsilon, delta, loss = self._check_common()
        A, ypm, R = self._prepare(X, y)
        n = A.shape[0]
        cal = amp_calibration(epsilon, delta, n, R, loss.curvature, out_fraction=self.out_fraction,
                              noise_fraction=self.noise_fraction, alpha=self.alpha, gamma=self.gamma)
        self.alpha_, self.calibration_ = cal.lam, cal
        design = Design(A, np.ones(n))
        w = amp_releases(design, loss, cal, 1, noise=self.noise, random_state=self._noise_rng(A))[0]
        self._set_release(w)
        if self.keep_nonprivate:
            self.nonprivate_ = GradientState(A, loss, {"calibration": cal})
        self.guarantee_ = self._guarantee(
            cal.epsilon, cal.delta, "Iyengar et al. (2019) Algorithm 1 (AMP) with our privacy argument (module docstring)",
            "theta~ + N(0, sigma_2^2 I) (coef_, intercept_)",
            (f"||x|| <= R = {R:.9g} for every possible input (the loss is R-Lipschitz, c = {loss.curvature:g})",
             f"objective perturbation: b ~ N(0, {cal.sigma_objective:.6g}^2 I), shift <= 2R in a plane: epsilon "
             f"{cal.epsilon_noise:.6g} outside probability delta_1 = {cal.delta_objective:.3g}; lambda = {cal.lam:.6g} "
             f"(>= {cal.lam_min:.6g}): Jacobian epsilon {cal.epsilon_jacobian:.6g}",
             f"certified ||grad J_b(theta~)|| <= gamma = {cal.gamma:.3g}: output Gaussian mechanism at sensitivity 2 gamma "
             f"/ lambda = {cal.sensitivity_out:.6g}, sigma_2 = {cal.sigma_out:.6g} (analytic, epsilon {cal.epsilon_out:.6g}, "
             f"delta {cal.delta_out:.3g})",
             "adaptive composition: epsilon = sum of the three, delta = delta_1 + delta_out"),
            f"b: exact normals enclosed in float64 balls; output: {noise_description(self.noise)}",
            ("a solve that cannot be certified raises (no release); such a refusal is not covered and was never observed",))
        self._void_if_data_derived()
        return self

    def sample_releases(self, n_draws: int, random_state: object = None, sigma_scale: float = 1.0) -> Array:
        """Further releases (rows) on the kept rows, each distributed as a fresh fit; ``sigma_scale`` multiplies both
        noise scales (negative controls).  ``keep_nonprivate=True`` only."""
        ev = self._evaluation()
        cal = ev.params["calibration"]
        if sigma_scale != 1.0:
            s = check_positive(sigma_scale, "sigma_scale")
            cal = AMPCalibration(**{**cal.__dict__, "sigma_objective": cal.sigma_objective * s,
                                    "sigma_out": cal.sigma_out * s})
        design = Design(ev.A, np.ones(ev.A.shape[0]))
        return amp_releases(design, ev.loss, cal, int(n_draws), noise=self.noise, random_state=random_state)


class OutputPerturbedSGD(_GradientEstimator):
    """Output perturbation of permutation-based SGD: Wu, Li, Kumar, Chaudhuri, Jha and Naughton (2017), "Bolt-on
    differential privacy for scalable stochastic gradient descent-based analytics", Algorithm 2 (convex case).

    ``n_passes`` passes of mini-batch SGD with a constant step eta over one random permutation, then the last iterate
    plus N(0, sigma^2 I) with sigma calibrated (analytic Gaussian) to the L2 sensitivity 2 k eta L / b (Wu et al.,
    Theorem 6 with mini-batches) plus the float64 rounding of the trajectory.

    Parameters
    ----------
    epsilon : float, default=1.0
        The privacy level epsilon.
    delta : float, default=1e-6
        The privacy level delta; at most 1/(10 n) (``fit`` raises ``ValueError`` above it).
    loss : {"logistic", "huber"}, default="logistic"
        The loss: convex, L-Lipschitz (L = R) and beta-smooth (beta = c R^2) on the ball ||x|| <= R.
    h : float, default=0.5
        The Huber loss's smoothing width.
    alpha : float, default=0.0
        An L2 regulariser (a convex, smooth term: the steps stay non-expansive for eta <= 2 / (beta + alpha)).
    data_norm : float or "data", default=1.0
        R, a public bound on ||x||.  ``"data"`` reads it from the data: NOT private.
    clip : bool, default=False
        Rows above ``data_norm`` raise (False) or are rescaled onto the ball (True).
    n_passes : int, default=10
        k, the passes over the permutation (Iyengar et al.'s grid: 5, 10, 100).
    batch_size : int, default=50
        b (Iyengar et al.: 50).
    learning_rate : float, default=0.01
        The constant step eta (Iyengar et al.'s grid: 0.001, 0.01, 0.1); must be <= 2 / (beta + alpha).
    fit_intercept : bool, default=False
        Append a constant feature s (R becomes sqrt(R^2 + s^2)).
    intercept_scaling : float, default=1.0
        s.
    classes : sequence of two labels, "data" or None, default=None
        The public label set.
    noise : {"lattice", "continuous"}, default="lattice"
        How the output noise is drawn.
    keep_nonprivate : bool, default=False
        Keep the training rows to draw further releases (audits); the object is then not a release.
    random_state : None, int, SeedSequence or numpy.random.Generator, default=None
        The source of the permutation and the noise.

    Attributes
    ----------
    coef_ : ndarray of shape (n_features,)
        The released weights.
    intercept_ : float
        The released intercept.
    sensitivity_ : float
        2 k eta L / b plus twice :func:`sgd_rounding_bound`.
    noise_sigma_ : float
        The output noise's standard deviation.
    classes_ : ndarray of shape (2,)
        The public label set.
    n_features_in_ : int
        The number of input features.
    guarantee_ : Guarantee
        The privacy statement of the fit.
    nonprivate_ : GradientState
        The training rows (``keep_nonprivate=True`` only; NOT private).

    See Also
    --------
    dpkernels.OutputPerturbation : Chaudhuri et al.'s output perturbation of the exact minimiser.

    Notes
    -----
    Privacy: (epsilon, delta)-DP for the replace-one relation: for any permutation, the two trajectories of
    neighbouring data sets drift apart only at the step holding the replaced row (by at most 2 eta L / b) and never
    apart at the others (a gradient step on a convex beta-smooth function with eta <= 2 / beta is non-expansive),
    plus the float64 rounding; the Gaussian mechanism on the last iterate.  Assumptions: the labels lie in the
    public ``classes``; ||x|| <= R.  Publish :meth:`release`.

    Examples
    --------
    >>> import numpy as np
    >>> from dpkernels import OutputPerturbedSGD
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(2000, 5)); X /= np.linalg.norm(X, axis=1, keepdims=True)
    >>> y = np.where(X[:, 0] > 0, 1, 0)
    >>> clf = OutputPerturbedSGD(epsilon=1.0, delta=1e-7, learning_rate=0.1, classes=[0, 1]).fit(X, y)
    >>> clf.guarantee_.epsilon, clf.sensitivity_ < 0.05
    (1.0, True)
    """

    _release_attributes = ("coef_", "intercept_", "sensitivity_", "noise_sigma_")
    _bounded_rows = True

    def __init__(self, *, epsilon: float = 1.0, delta: float = 1e-6, loss: str = "logistic", h: float = 0.5,
                 alpha: float = 0.0, data_norm: float | str = DEFAULT_DATA_NORM, clip: bool = False, n_passes: int = 10,
                 batch_size: int = 50, learning_rate: float = 0.01, fit_intercept: bool = False,
                 intercept_scaling: float = 1.0, classes: Sequence[Any] | None = None, noise: str = "lattice",
                 keep_nonprivate: bool = False, random_state: object = None) -> None:
        self.epsilon = epsilon
        self.delta = delta
        self.loss = loss
        self.h = h
        self.alpha = alpha
        self.data_norm = data_norm
        self.clip = clip
        self.n_passes = n_passes
        self.batch_size = batch_size
        self.learning_rate = learning_rate
        self.fit_intercept = fit_intercept
        self.intercept_scaling = intercept_scaling
        self.classes = classes
        self.noise = noise
        self.keep_nonprivate = keep_nonprivate
        self.random_state = random_state

    def fit(self, X: ArrayLike, y: ArrayLike) -> "OutputPerturbedSGD":
        """Run permutation SGD and release the last iterate plus Gaussian noise.

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
        epsilon, delta, loss = self._check_common()
        A, ypm, R = self._prepare(X, y)
        n, d = A.shape
        k = _check_int(self.n_passes, "n_passes")
        b = _check_int(self.batch_size, "batch_size")
        if b > n:
            raise ValueError(f"batch_size = {b} exceeds the {n} rows")
        alpha = _check_alpha(self.alpha)
        eta = check_positive(self.learning_rate, "learning_rate")
        beta = loss.curvature * R * R
        self.noise_sigma_, self.sensitivity_, drift = output_sgd_calibration(epsilon, delta, n, d, R, beta, alpha, eta, k, b)
        w = permutation_sgd_path(A, loss=loss, alpha=alpha, batch_size=b, learning_rate=eta, n_passes=k,
                                 random_state=self._noise_rng(A))[0]
        self._set_release(noise_release(w, "gaussian", self.noise_sigma_, noise=self.noise,
                                        random_state=self._noise_rng(A, "output")))
        if self.keep_nonprivate:
            self.nonprivate_ = GradientState(A, loss, dict(alpha=alpha, batch_size=b, learning_rate=eta, n_passes=k,
                                                           sigma=self.noise_sigma_))
        self.guarantee_ = self._guarantee(
            epsilon, delta, "Wu et al. (2017) Algorithm 2 (output perturbation of permutation-based SGD, convex, constant "
                            "step)",
            "the last iterate plus N(0, sigma^2 I) (coef_, intercept_)",
            (f"||x|| <= R = {R:.9g} for every possible input: the loss is R-Lipschitz and beta = {beta:.6g}-smooth; eta = "
             f"{eta:g} <= 2 / (beta + alpha)",
             f"L2 sensitivity 2 k eta L / b = {output_sgd_sensitivity(R, eta, k, b):.6g} (k = {k}, b = {b}) plus twice "
             f"the float64 drift bound {drift:.3g}: {self.sensitivity_:.6g}",
             f"Gaussian mechanism, analytic calibration: sigma = {self.noise_sigma_:.6g}",
             "the permutation is secret and data-independent; the last n mod b rows of it are left out"),
            noise_description(self.noise))
        self._void_if_data_derived()
        return self

    def sample_releases(self, n_draws: int, random_state: object = None, sigma: float | None = None) -> Array:
        """Further releases (rows) on the kept rows, each distributed as a fresh fit (its own permutation and noise);
        ``sigma`` overrides the output noise (negative controls).  ``keep_nonprivate=True`` only."""
        ev = self._evaluation()
        p = dict(ev.params)
        kept = p.pop("sigma")
        s = kept if sigma is None else check_positive(sigma, "sigma")
        rng = check_random_state(random_state)
        W = permutation_sgd_path(ev.A, loss=ev.loss, random_state=rng, n_chains=int(n_draws), **p)
        return noise_release(W, "gaussian", s, noise=self.noise, random_state=rng)
