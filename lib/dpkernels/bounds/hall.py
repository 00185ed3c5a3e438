"""Calculators for Hall, Rinaldo and Wasserman (2013): (alpha, beta)-differential privacy in an RKHS.

Sources: the short version ("(alpha, beta)-Differential Privacy in Reproducing Kernel Hilbert Spaces":
Proposition 1.1, Proposition 2.1, Section 3) and the journal version ("Differential privacy for functions and
functional data", JMLR 14:703-727, 2013), whose statements we have from secondary sources only and whose numbering
is not known, so they are named by content ("the journal's ..."; ``docs/statements/hall2013.md`` restates
both versions).  Notation: alpha = epsilon, beta = delta; T = [0, 1]^d; K the reproducing kernel.

Two conventions of the kernel density estimate appear (Section 3; the journal's KDE example); both release the same
function f_X(x) = (1/n) sum_i (2 pi sigma^2)^{-d/2} exp(-||x - x_i||^2 / (2 sigma^2)) and differ only in the
constant of the RKHS sensitivity:

``"seed"``
    the short version: the normalised kernel K_sigma(x, y) = (2 pi sigma^2)^{-d/2} exp(...) is the reproducing
    kernel and Delta = (2/n) sup_x ||K_sigma(x, .)|| = 2 / (n (2 pi sigma^2)^{d/4}) (triangle inequality);
``"jmlr"``
    the journal version: Delta = sqrt(2) / (n (2 pi h^2)^{d/2}) in the RKHS of the unnormalised kernel
    exp(-||x - y||^2 / (2 h^2)); in the normalised RKHS this is sqrt(2) / (n (2 pi sigma^2)^{d/4}) (the exact
    worst case of ||K(x, .) - K(x', .)|| over all of R^d).

Both noises are f_X + sqrt(c(alpha, beta, Delta)) G with G ~ GP(0, K_sigma) (the same law in either RKHS, see
:func:`kde_sensitivity_jmlr_form`); they differ by the factor sqrt(2) in the noise standard deviation.

Functions named ``*_derived`` or marked "(ours)" are our derivations where the paper gives none or where its
statement and its ingredients differ; ``ERRATA.md`` (section Hall) records every difference.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy.optimize import brentq, minimize_scalar
from scipy.special import log_ndtr, ndtr

from dpkernels._validation import check_delta, check_epsilon, check_positive

__all__ = [
    "KDE_CONVENTIONS",
    "proposition_1_1_c",
    "proposition_1_1_sigma",
    "proposition_1_1_exact_delta",
    "proposition_1_1_max_epsilon",
    "jmlr_gaussian_mechanism_scale",
    "proposition_2_1_noise_sd",
    "jmlr_mahalanobis_of_evaluations",
    "gaussian_kernel_sup",
    "kde_sensitivity",
    "kde_sensitivity_seed",
    "kde_sensitivity_jmlr",
    "kde_sensitivity_jmlr_form",
    "kde_sensitivity_exact",
    "kernel_machine_sensitivity",
    "kernel_machine_sensitivity_half_regulariser",
    "squared_loss_lipschitz",
    "mean_l2_noise_error",
    "mean_l2_noise_error_exact",
    "kde_privacy_error",
    "kde_privacy_error_order",
    "kde_sampling_error_order",
    "GaussianMixture",
    "bimodal_mixture",
    "KDERisk",
    "kde_risk",
    "optimal_bandwidth",
    "claimed_optimal_bandwidth",
    "optimal_bandwidth_exponent",
    "claimed_optimal_bandwidth_exponent",
    "optimal_mise_exponent",
    "privacy_to_sampling_exponent",
]

KDE_CONVENTIONS = ("seed", "jmlr")


# ---------------------------------------------------------------------------------------------
# Section 1: the Gaussian mechanism (Proposition 1.1)
# ---------------------------------------------------------------------------------------------
def proposition_1_1_c(alpha: float, beta: float, Delta: float) -> float:
    """Proposition 1.1: releasing N(v_X, c Sigma) with c(alpha, beta, Delta) = 2 log(2/beta) Delta^2 / alpha^2 is
    (alpha, beta)-DP when sup ||Sigma^{-1/2}(v_X - v_X')||_2 <= Delta.  Returns the *variance* multiplier c."""
    alpha, beta, Delta = check_epsilon(alpha, "alpha"), check_delta(beta, "beta"), check_positive(Delta, "Delta")
    return 2.0 * math.log(2.0 / beta) * Delta**2 / alpha**2


def proposition_1_1_sigma(alpha: float, beta: float, Delta: float) -> float:
    """sqrt(c(alpha, beta, Delta)) = sqrt(2 log(2/beta)) Delta / alpha: the noise standard deviation of
    Proposition 1.1 in the whitened coordinates Sigma^{-1/2} v."""
    return math.sqrt(proposition_1_1_c(alpha, beta, Delta))


def proposition_1_1_exact_delta(alpha: float, beta: float) -> float:
    """(ours) The exact delta at epsilon = alpha of Proposition 1.1's calibration (Delta = 1 without loss of
    generality): the Gaussian mechanism's privacy curve delta(eps) = Phi(1/(2s) - eps s) - e^eps Phi(-1/(2s) - eps s)
    at s = sqrt(c(alpha, beta, 1)) (Balle and Wang 2018, Theorem 8), evaluated in log space.  The proposition holds
    at (alpha, beta) exactly when this is <= beta.  (:func:`dpkernels.accounting.gaussian_delta` computes the same
    curve through dp-accounting; the notebook compares the two.)"""
    s = proposition_1_1_sigma(alpha, beta, 1.0)
    a, b = 1.0 / (2.0 * s) - alpha * s, -1.0 / (2.0 * s) - alpha * s
    first = float(ndtr(a))
    second = math.exp(alpha + float(log_ndtr(b)))
    return max(0.0, first - second)


def proposition_1_1_max_epsilon(beta: float, upper: float = 1e4) -> float:
    """(ours) The largest alpha at which Proposition 1.1's calibration still meets its beta (the root of
    exact_delta(alpha, beta) = beta above the region where it holds); ``inf`` if it holds up to ``upper``."""
    beta = check_delta(beta, "beta")
    f = lambda a: proposition_1_1_exact_delta(a, beta) - beta  # noqa: E731
    grid = np.geomspace(1e-3, upper, 400)
    vals = np.array([f(a) for a in grid])
    bad = np.flatnonzero(vals > 0)
    if bad.size == 0:
        return math.inf
    k = int(bad[0])
    if k == 0:
        return 0.0
    return float(brentq(f, grid[k - 1], grid[k], xtol=1e-12, rtol=1e-12))


def jmlr_gaussian_mechanism_scale(alpha: float, beta: float, Delta: float, c_beta: float | None = None) -> float:
    """The journal's Gaussian mechanism: v~ = v + (c(beta) Delta / alpha) Z, Z ~ N(0, M), with
    c(beta) >= sqrt(2 log(2/beta)) (a standard-deviation multiplier).  Returns c(beta) Delta / alpha (default:
    c(beta) at its lower limit, which equals :func:`proposition_1_1_sigma`)."""
    alpha, beta, Delta = check_epsilon(alpha, "alpha"), check_delta(beta, "beta"), check_positive(Delta, "Delta")
    low = math.sqrt(2.0 * math.log(2.0 / beta))
    if c_beta is None:
        c_beta = low
    if c_beta < low:
        raise ValueError(f"c(beta) must be >= sqrt(2 log(2/beta)) = {low:.6g}, got {c_beta!r}")
    return c_beta * Delta / alpha


# ---------------------------------------------------------------------------------------------
# Section 2: the Gaussian-process release (Proposition 2.1)
# ---------------------------------------------------------------------------------------------
def proposition_2_1_noise_sd(alpha: float, beta: float, Delta_H: float, k_xx: float) -> float:
    """Proposition 2.1: f~ = f_X + sqrt(c) G with G ~ GP(0, K) and c = c(alpha, beta, Delta_H); the noise at a point
    x has standard deviation sqrt(c K(x, x))."""
    return proposition_1_1_sigma(alpha, beta, Delta_H) * math.sqrt(check_positive(k_xx, "K(x, x)"))


def jmlr_mahalanobis_of_evaluations(values: ArrayLike, gram: ArrayLike) -> float:
    """The journal's proposition on evaluations: for f in H and distinct points x_i, with M the Gram matrix,
    ||M^{-1/2} (f(x_1), ..., f(x_n))||_2 <= ||f||_H.  Returns the left side, sqrt(v' M^{-1} v), by a Cholesky
    solve (M must be positive definite)."""
    v = np.asarray(values, dtype=np.float64)
    M = np.asarray(gram, dtype=np.float64)
    L = np.linalg.cholesky(M)
    w = np.linalg.solve(L, v)
    return float(np.sqrt(w @ w))


# ---------------------------------------------------------------------------------------------
# Section 3, first example: kernel density estimation
# ---------------------------------------------------------------------------------------------
def gaussian_kernel_sup(sigma: float, d: int) -> float:
    """sup_x K_sigma(x, x) = (2 pi sigma^2)^{-d/2} for the normalised Gaussian kernel of the KDE."""
    return (2.0 * math.pi * check_positive(sigma, "sigma") ** 2) ** (-d / 2.0)


def kde_sensitivity_seed(n: int, sigma: float, d: int) -> float:
    """Section 3 (short version): ||f_X - f_X'||_H <= (2/n) sup_x ||K(x, .)||_H = 2 / (n (sqrt(2 pi) sigma)^{d/2})
    in the RKHS of the normalised kernel K_sigma."""
    return 2.0 / (n * (math.sqrt(2.0 * math.pi) * check_positive(sigma, "sigma")) ** (d / 2.0))


def kde_sensitivity_jmlr_form(n: int, h: float, d: int) -> float:
    """The journal's KDE sensitivity (as recovered): ||f_D - f_D'||_H^2 <= 2 (1 / (n (2 pi h^2)^{d/2}))^2
    in the RKHS of the *unnormalised* kernel exp(-||x - y||^2 / (2 h^2)); returns sqrt(2) / (n (2 pi h^2)^{d/2}).

    The unnormalised RKHS norm is (2 pi h^2)^{d/4} times the normalised one and GP(0, K_unnormalised) is
    (2 pi h^2)^{d/4} GP(0, K_sigma), so the released noise sqrt(c) G is the same as with
    :func:`kde_sensitivity_jmlr` in the normalised RKHS."""
    return math.sqrt(2.0) / (n * (2.0 * math.pi * check_positive(h, "h") ** 2) ** (d / 2.0))


def kde_sensitivity_jmlr(n: int, sigma: float, d: int) -> float:
    """The journal version's constant in the normalised RKHS: sqrt(2) / (n (2 pi sigma^2)^{d/4})."""
    return math.sqrt(2.0) / (n * (2.0 * math.pi * check_positive(sigma, "sigma") ** 2) ** (d / 4.0))


def kde_sensitivity(n: int, sigma: float, d: int, convention: str = "jmlr") -> float:
    """The RKHS sensitivity of the KDE under a named convention (``"seed"``: factor 2, ``"jmlr"``: sqrt(2)), in
    the RKHS of the normalised kernel K_sigma."""
    if convention == "seed":
        return kde_sensitivity_seed(n, sigma, d)
    if convention == "jmlr":
        return kde_sensitivity_jmlr(n, sigma, d)
    raise ValueError(f"convention must be one of {KDE_CONVENTIONS}, got {convention!r}")


def kde_sensitivity_exact(n: int, sigma: float, d: int, diameter_sq: float | None = None) -> float:
    """(ours) The exact sup over replace-one neighbours with rows in T = [0, 1]^d:
    ||f_X - f_X'||_H = ||K(x, .) - K(x', .)||_H / n = sqrt(2 K(0) (1 - exp(-||x - x'||^2 / (2 sigma^2)))) / n,
    largest at opposite corners (||x - x'||^2 = d, or ``diameter_sq``)."""
    r2 = float(d) if diameter_sq is None else float(diameter_sq)
    k0 = gaussian_kernel_sup(sigma, d)
    return math.sqrt(2.0 * k0 * -math.expm1(-r2 / (2.0 * sigma**2))) / n


# ---------------------------------------------------------------------------------------------
# Section 3, second example: the kernel machine
# ---------------------------------------------------------------------------------------------
def kernel_machine_sensitivity(L: float, kappa: float, n: int, lam: float) -> float:
    """Section 3 (following Bousquet and Elisseeff 2002): for f_X = argmin (1/n) sum l(f, x_i) + lam ||f||_H^2 with
    an L-Lipschitz convex loss and sup K(x, x) <= kappa^2, ||f_X - f_X'||_H <= L kappa / (n lam)."""
    return check_positive(L, "L") * check_positive(kappa, "kappa") / (n * check_positive(lam, "lam"))


def kernel_machine_sensitivity_half_regulariser(L: float, kappa: float, n: int, lam: float) -> float:
    """(ours) The same argument for the regulariser (lam/2)||f||^2 (lam-strongly convex): 2 L kappa / (n lam)."""
    return 2.0 * kernel_machine_sensitivity(L, kappa, n, lam)


def squared_loss_lipschitz(kappa: float, lam: float) -> float:
    """(ours) The squared loss (1 - y f(x))^2 is not Lipschitz; on the values the minimisers can take it is.
    J(f*) <= J(0) = 1 gives lam ||f*||^2 <= 1, so ``|f*(x)| <= kappa / sqrt(lam)`` and ``|l'| = 2|1 - y f| <= 2 (1 + kappa / sqrt(lam))``,
    the L that the sensitivity argument needs (both minimisers lie in that ball)."""
    return 2.0 * (1.0 + check_positive(kappa, "kappa") / math.sqrt(check_positive(lam, "lam")))


# ---------------------------------------------------------------------------------------------
# Section 2 remark and Section 3: the error due to privacy
# ---------------------------------------------------------------------------------------------
def mean_l2_noise_error(alpha: float, beta: float, Delta: float, sup_k: float, volume: float = 1.0) -> float:
    """Section 2 (remark after Proposition 2.1): E ||sqrt(c) G||_{L2(T)}^2 = lambda(T) c(alpha, beta, Delta) sup_x K(x, x)
    (lambda(T) = 1 on [0, 1]^d).  Exact for a stationary kernel; an upper bound otherwise (the paper writes an equality)."""
    return volume * proposition_1_1_c(alpha, beta, Delta) * check_positive(sup_k, "sup K")


def mean_l2_noise_error_exact(noise_sd: float, integral_k_xx: float) -> float:
    """(ours) E ||s G||_{L2(T)}^2 = s^2 int_T K(x, x) dx for any noise multiplier s (Fubini)."""
    return noise_sd**2 * integral_k_xx


def kde_privacy_error(n: int, sigma: float, d: int, alpha: float, beta: float, convention: str = "seed",
                      noise_sd: float | None = None) -> float:
    """The privacy part of the KDE's MISE on [0, 1]^d: c(alpha, beta, Delta) (2 pi sigma^2)^{-d/2}; with the seed's
    Delta this is 8 log(2/beta) / (alpha^2 n^2 (2 pi sigma^2)^d) (Section 3, first example).  ``noise_sd``
    (sqrt(c) from another calibration) overrides the Proposition 1.1 calibration."""
    s = proposition_1_1_sigma(alpha, beta, kde_sensitivity(n, sigma, d, convention)) if noise_sd is None else noise_sd
    return s**2 * gaussian_kernel_sup(sigma, d)


def kde_privacy_error_order(n: ArrayLike, sigma: ArrayLike, d: int) -> NDArray[np.float64]:
    """Section 3: "our proposed method adds error on the order of n^-2 sigma^-2d"."""
    return np.asarray(n, dtype=float) ** -2.0 * np.asarray(sigma, dtype=float) ** (-2.0 * d)


def kde_sampling_error_order(n: ArrayLike, sigma: ArrayLike, d: int) -> NDArray[np.float64]:
    """Section 3: "the sampling error of sigma^4 + n^-1 sigma^-d"."""
    s = np.asarray(sigma, dtype=float)
    return s**4 + 1.0 / (np.asarray(n, dtype=float) * s**d)


# ---------------------------------------------------------------------------------------------
# the exact MISE of the (private) KDE for a Gaussian mixture, on T = [0, 1]^d  (ours)
# ---------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class GaussianMixture:
    """f(x) = sum_k w_k N(x; mu_k, s_k^2 I_d) on R^d (isotropic components).

    Used as the true density of the KDE experiments: with components well inside [0, 1]^d the mass outside T is
    negligible (reported by :meth:`mass_outside`), samples are drawn by rejection to T, and every integral over T
    below is exact (products of Gaussians integrate to products of normal CDF differences)."""

    weights: tuple[float, ...]
    means: tuple[tuple[float, ...], ...]
    sds: tuple[float, ...]

    @property
    def d(self) -> int:
        return len(self.means[0])

    def pdf(self, x: ArrayLike) -> NDArray[np.float64]:
        x = np.atleast_2d(np.asarray(x, dtype=np.float64))
        out = np.zeros(x.shape[0])
        for w, mu, s in zip(self.weights, self.means, self.sds):
            r2 = np.sum((x - np.asarray(mu)) ** 2, axis=1)
            out += w * (2 * math.pi * s * s) ** (-self.d / 2) * np.exp(-r2 / (2 * s * s))
        return out

    def sample(self, n: int, rng: np.random.Generator) -> NDArray[np.float64]:
        """n draws of f conditioned on T = [0, 1]^d (rejection)."""
        out = np.empty((0, self.d))
        while out.shape[0] < n:
            k = rng.choice(len(self.weights), size=n, p=np.asarray(self.weights))
            z = np.asarray(self.means)[k] + np.asarray(self.sds)[k, None] * rng.standard_normal((n, self.d))
            out = np.vstack([out, z[np.all((z >= 0) & (z <= 1), axis=1)]])
        return out[:n]

    def mass_outside(self) -> float:
        """P_f(X not in [0, 1]^d)."""
        return 1.0 - sum(w * _box_mass(np.asarray(mu), s * s) for w, mu, s in zip(self.weights, self.means, self.sds))


def bimodal_mixture(d: int = 1, means: Sequence[float] = (0.38, 0.68), sd: float = 0.06,
                    weights: Sequence[float] = (0.5, 0.5)) -> GaussianMixture:
    """Our stand-in for the journal's bimodal density (peaks near 0.38 and 0.68, the journal's KDE figure; its
    parameters are not recovered): two isotropic components centred at (m, ..., m) in d dimensions."""
    return GaussianMixture(tuple(float(w) for w in weights), tuple((float(m),) * d for m in means), (float(sd),) * len(means))


def _box_mass(mu: NDArray[np.float64], var: float) -> float:
    """int_T N(x; mu, var I) dx for T = [0, 1]^d."""
    s = math.sqrt(var)
    return float(np.prod(ndtr((1.0 - mu) / s) - ndtr(-mu / s)))


def _gauss_product_integral(a: NDArray[np.float64], A: float, b: NDArray[np.float64], B: float) -> float:
    """int_T N(x; a, A I) N(x; b, B I) dx = N(a; b, (A + B) I) * int_T N(x; c, C I) dx, C = AB/(A+B)."""
    d = a.shape[0]
    S = A + B
    norm = (2 * math.pi * S) ** (-d / 2) * math.exp(-float(np.sum((a - b) ** 2)) / (2 * S))
    C = A * B / S
    c = (B * a + A * b) / S
    return norm * _box_mass(c, C)


@dataclass(frozen=True)
class KDERisk:
    """The MISE of the (private) KDE on T = [0, 1]^d, split into its parts."""

    bias_sq: float  #: int_T (E f^ - f)^2
    variance: float  #: int_T Var f^(x) dx
    privacy: float  #: E int_T (f~ - f^)^2 = noise_sd^2 int_T K(x, x) dx

    @property
    def sampling(self) -> float:
        return self.bias_sq + self.variance

    @property
    def total(self) -> float:
        return self.bias_sq + self.variance + self.privacy


def kde_risk(mixture: GaussianMixture, n: int, sigma: float, noise_sd: float = 0.0) -> KDERisk:
    """(ours) The exact MISE on T = [0, 1]^d of the Gaussian KDE with bandwidth sigma of n draws from ``mixture``,
    plus the privacy part of the release f~ = f^ + noise_sd G, G ~ GP(0, K_sigma):

    E f^(x) = g(x) = sum_k w_k N(x; mu_k, (s_k^2 + sigma^2) I), Var f^(x) = (h(x) - g(x)^2) / n with
    h(x) = E K_sigma(x - X)^2 = (4 pi sigma^2)^{-d/2} sum_k w_k N(x; mu_k, (s_k^2 + sigma^2/2) I), and
    E int_T noise^2 = noise_sd^2 (2 pi sigma^2)^{-d/2}.  The data are the mixture itself (not conditioned on T;
    :meth:`GaussianMixture.mass_outside` bounds the difference)."""
    sigma = check_positive(sigma, "sigma")
    d = mixture.d
    comps = [(w, np.asarray(mu, dtype=float), s * s) for w, mu, s in zip(mixture.weights, mixture.means, mixture.sds)]
    s2 = sigma * sigma
    gg = gf = ff = 0.0
    for wk, mk, vk in comps:
        for wl, ml, vl in comps:
            gg += wk * wl * _gauss_product_integral(mk, vk + s2, ml, vl + s2)
            gf += wk * wl * _gauss_product_integral(mk, vk + s2, ml, vl)
            ff += wk * wl * _gauss_product_integral(mk, vk, ml, vl)
    h = (4 * math.pi * s2) ** (-d / 2) * sum(w * _box_mass(m, v + s2 / 2) for w, m, v in comps)
    bias_sq = gg - 2 * gf + ff
    variance = (h - gg) / n
    privacy = noise_sd**2 * gaussian_kernel_sup(sigma, d)
    return KDERisk(bias_sq, variance, privacy)


def optimal_bandwidth(mixture: GaussianMixture, n: int, noise_sd_of_sigma: Callable[[float], float] | None = None,
                      bounds: tuple[float, float] = (1e-6, 1.0)) -> float:
    """(ours) argmin_sigma of the exact MISE (:func:`kde_risk`), with the privacy part when ``noise_sd_of_sigma``
    (a function sigma -> noise_sd, e.g. the calibrated sqrt(c)) is given; bounded scalar minimisation in log sigma."""
    def total(log_s: float) -> float:
        s = math.exp(log_s)
        sd = 0.0 if noise_sd_of_sigma is None else noise_sd_of_sigma(s)
        return math.log(kde_risk(mixture, n, s, sd).total)

    res = minimize_scalar(total, bounds=(math.log(bounds[0]), math.log(bounds[1])), method="bounded",
                          options={"xatol": 1e-7})
    return float(math.exp(res.x))


def claimed_optimal_bandwidth(n: ArrayLike, d: int) -> NDArray[np.float64]:
    """Section 3 (short version): "permits the optimal choice of sigma = n^(-1/(1+4d))"."""
    return np.asarray(n, dtype=float) ** claimed_optimal_bandwidth_exponent(d)


def claimed_optimal_bandwidth_exponent(d: int) -> float:
    """The exponent of the claimed optimal bandwidth, -1/(1 + 4d)."""
    return -1.0 / (1.0 + 4.0 * d)


def optimal_bandwidth_exponent(d: int) -> float:
    """(ours) The exponent that sigma^4 + 1/(n sigma^d) implies (its minimiser is proportional to n^(-1/(d+4))), and
    the privacy term n^-2 sigma^-2d does not change it (it is of smaller order there)."""
    return -1.0 / (d + 4.0)


def optimal_mise_exponent(d: int) -> float:
    """(ours) The rate of the minimised MISE, n^(-4/(d+4)); the journal version states it is not changed by privacy
    (O(h^4 + c/(n h^d)), the journal's KDE example)."""
    return -4.0 / (d + 4.0)


def privacy_to_sampling_exponent(d: int, bandwidth_exponent: float | None = None) -> float:
    """(ours) At sigma = n^b the privacy part n^-2 sigma^-2d over the sampling part (sigma^4 + 1/(n sigma^d), order
    n^max(4b, -1 - d b)) behaves like n^e; returns e (negative: the privacy error vanishes faster, the seed's "at a
    rate far faster").  Default b: the optimal exponent -1/(d+4)."""
    b = optimal_bandwidth_exponent(d) if bandwidth_exponent is None else bandwidth_exponent
    privacy = -2.0 - 2.0 * d * b
    sampling = max(4.0 * b, -1.0 - d * b)
    return privacy - sampling
