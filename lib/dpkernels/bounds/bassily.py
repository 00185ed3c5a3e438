"""Calculators for Bassily, Mohri and Suresh (2022), "Differentially Private Learning with Margin Guarantees"
(NeurIPS 2022; arXiv 2204.10376).

Sources.  Only a damaged extraction of the main text was available to us; ``docs/statements/bassily2022.md`` restates
what could be restored, each item tagged.  Every function here names its statement and
the tag of its source (:data:`SOURCES`):

* ``seed``: legible in the main text;
* ``COLT22``: restated in the authors' COLT 2022 open-problem note (eqs. (2)-(4));
* ``reconstructed``: our reading of garbled tokens, checked by dimensional or derivational arguments;
* ``ours``: not the paper's (a substitute for an unrecovered part, e.g. the DP-ERM subroutine's bound).

Unknown constants and log factors (the O(.) and O~(.) of Theorems 3.1, 3.2, 4.2, 5.1 and Lemma 3.1, the k of
Algorithms 1-2) are parameters (``constant``, ``log_factor``); their defaults (1) are ours.  Notation: m sample size,
r the data radius (||x|| <= r; K(x, x) = r^2 for kernels), Lambda the norm bound, rho the margin, (epsilon, delta)
privacy, beta the confidence.
"""

from __future__ import annotations

import math
from collections.abc import Callable

from dpkernels._validation import check_delta, check_epsilon, check_positive, check_probability

__all__ = [
    "SOURCES",
    "rho_hinge_lipschitz",
    "theorem_3_1_k",
    "theorem_3_1_gamma",
    "theorem_3_1_bound",
    "algorithm_1_cover_spacing",
    "algorithm_1_log10_cover_size",
    "algorithm_2_k",
    "algorithm_2_conditions",
    "lemma_3_1_excess_risk",
    "noisy_gd_excess_risk",
    "noisy_gd_iterations",
    "theorem_3_2_bound",
    "theorem_3_2_runtime",
    "theorem_4_1_bound",
    "theorem_4_1_bound_hoeffding",
    "algorithm_3_D",
    "algorithm_3_feature_bytes",
    "theorem_4_2_bound",
    "theorem_5_1_bound",
    "theorem_5_1_k",
    "theorem_5_1_gamma",
    "jl_norm_distortion",
]


def _log(x: float) -> float:
    return math.log(check_positive(x, "log argument"))


def rho_hinge_lipschitz(data_norm: float, rho: float) -> float:
    """||x|| / rho: the Lipschitz constant (in w) of the rho-hinge loss max(1 - y<w, x>/rho, 0) on ||x|| <= data_norm
    (Section 2; Algorithm 2 uses it with data_norm = 2r after the projection onto B^k(2r)). [reconstructed]"""
    return check_positive(data_norm, "data_norm") / check_positive(rho, "rho")


# ----------------------------------------------------------------------------------------------
# Section 3.1: Algorithm 1 and Theorem 3.1 (pure DP)
# ----------------------------------------------------------------------------------------------
def theorem_3_1_k(Lambda: float, r: float, rho: float, m: int, beta: float, constant: float = 1.0) -> int:
    """k = O(Lambda^2 r^2 / rho^2 log(m / beta)): Algorithm 1's projected dimension.  The prose gives
    O(Lambda^2 r^2 / rho^2) [reconstructed]; the log(m / beta) (JL on m points) and the constant are ours."""
    val = check_positive(constant, "constant") * (Lambda * r / rho) ** 2 * _log(m / check_probability(beta, "beta"))
    return max(1, math.ceil(val))


def theorem_3_1_gamma(Lambda: float, r: float, rho: float, epsilon: float, m: int, beta: float,
                      log_factor: Callable[[float], float] | None = None) -> float:
    """Gamma = Lambda^2 r^2 polylog(m / beta) / (rho^2 min(1, eps) m), the complexity term of Theorem 3.1
    [reconstructed].  ``log_factor(m / beta)`` (default log) stands for the lost polylog."""
    lf = _log(m / beta) if log_factor is None else float(log_factor(m / beta))
    return (Lambda * r / rho) ** 2 * lf / (min(1.0, check_epsilon(epsilon)) * check_positive(m, "m"))


def theorem_3_1_bound(empirical_margin_loss: float, Lambda: float, r: float, rho: float, epsilon: float, m: int,
                      beta: float, constant: float = 1.0, log_factor: Callable[[float], float] | None = None) -> float:
    """Theorem 3.1 (relative deviation margin bound, [reconstructed] from the prose):
    R_D(w^Priv) <= R-hat^rho_S(w) + c (sqrt(R-hat^rho_S(w) Gamma) + Gamma), minimised over w by the caller."""
    g = theorem_3_1_gamma(Lambda, r, rho, epsilon, m, beta, log_factor)
    return float(empirical_margin_loss) + check_positive(constant, "constant") * (math.sqrt(max(empirical_margin_loss, 0.0) * g) + g)


def algorithm_1_cover_spacing(rho: float, r: float) -> float:
    """gamma = rho / (10 r): the resolution of Algorithm 1's cover of B^k(2 Lambda), step 4 [reconstructed]."""
    return check_positive(rho, "rho") / (10.0 * check_positive(r, "r"))


def algorithm_1_log10_cover_size(Lambda: float, r: float, rho: float, k: int) -> float:
    """log10 of (1 + 2 R / gamma)^k with R = 2 Lambda and gamma = rho / (10 r), i.e. k log10(1 + 40 Lambda r / rho): the
    standard volume bound on the size of a gamma-cover of B^k(R), which the exponential mechanism of Algorithm 1
    enumerates [reconstructed]."""
    return int(k) * math.log10(1.0 + 2.0 * 2.0 * Lambda / algorithm_1_cover_spacing(rho, r))


# ----------------------------------------------------------------------------------------------
# Section 3.2: Algorithm 2, Lemma 3.1, Theorem 3.2
# ----------------------------------------------------------------------------------------------
def algorithm_2_k(epsilon: float, delta: float, m: int, beta: float, constant: float = 1.0) -> int:
    """k = c eps m sqrt(log(m / beta)) / (log^{3/2}(1 / delta) log(1 / beta)) (Algorithm 2, step 1; the prose: O(m eps)).
    [reconstructed: the placement of the roots and logs is our reading of the garbled line; c is ours]"""
    check_epsilon(epsilon)
    check_delta(delta)
    check_probability(beta, "beta")
    val = check_positive(constant, "constant") * epsilon * m * math.sqrt(_log(m / beta)) / (_log(1 / delta) ** 1.5 * _log(1 / beta))
    return max(1, math.ceil(val))


def algorithm_2_conditions(epsilon: float, delta: float, m: int) -> list[str]:
    """The conditions of Lemma 3.1 and Theorem 3.2 that (epsilon, delta, m) break: 0 < delta < 1/m and
    0 < epsilon <= log(1/delta). [seed]  An empty list means they hold."""
    out = []
    if not 0.0 < delta < 1.0 / m:
        out.append(f"delta = {delta:g} is not in (0, 1/m) = (0, {1.0 / m:.3g})")
    if not (0.0 < delta < 1.0 and 0.0 < epsilon <= math.log(1.0 / delta)):
        out.append(f"epsilon = {epsilon:g} is not in (0, log(1/delta)]")
    return out


def lemma_3_1_excess_risk(Lambda_prime: float, r_prime: float, rho: float, k: int, epsilon: float, delta: float,
                          m: int, beta: float, constant: float = 1.0) -> float:
    """The shape of Lemma 3.1's lost excess empirical-risk bound for Algorithm 4 [reconstructed, from the Lipschitz GLL
    DP-ERM rate of BST14]: c (Lambda' r' / rho) sqrt(k log(1/delta)) log(1/beta) / (eps m).  The exact factors are
    unknown; this is not a bound on our substitute (see :func:`noisy_gd_excess_risk`)."""
    return (check_positive(constant, "constant") * Lambda_prime * r_prime / rho * math.sqrt(k * _log(1 / delta))
            * _log(1 / beta) / (check_epsilon(epsilon) * m))


def noisy_gd_excess_risk(radius: float, lipschitz: float, sigma: float, k: int, n_iter: int,
                         learning_rate: float | None = None) -> float:
    """Our DP-ERM substitute's expected excess empirical risk [ours; Nesterov 2004 / Shalev-Shwartz 2012, projected
    stochastic subgradient method]: for a convex L-Lipschitz objective over the ball of ``radius`` R (started at its
    centre) and unbiased noisy subgradients with E||g||^2 <= G^2 = L^2 + k sigma^2, the average of the T iterates
    satisfies E f(w-bar) - min f <= R^2 / (2 eta T) + eta G^2 / 2, = R G / sqrt(T) at eta = R / (G sqrt(T))."""
    G2 = lipschitz**2 + k * sigma**2
    T = int(n_iter)
    eta = radius / math.sqrt(G2 * T) if learning_rate is None else check_positive(learning_rate, "learning_rate")
    return radius**2 / (2.0 * eta * T) + eta * G2 / 2.0


def noisy_gd_iterations(m: int, k: int, noise_multiplier_one: float, max_iter: int) -> int:
    """T balancing the two terms of :func:`noisy_gd_excess_risk` when sigma = (2 L / m) sqrt(T) s (s: the Gaussian
    mechanism's noise multiplier at (eps, delta) for sensitivity 1): 1/T = 4 k s^2 / m^2, i.e. T = m^2 / (4 k s^2),
    capped to [1, max_iter] [ours]."""
    T = m * m / (4.0 * k * noise_multiplier_one**2)
    return int(min(max(1, math.ceil(T)), int(max_iter)))


def theorem_3_2_bound(min_hinge_loss: float, Lambda: float, r: float, rho: float, epsilon: float, m: int,
                      constant: float = 1.0, log_factor: float = 1.0) -> float:
    """Theorem 3.2 [COLT22 eq. (2)]: R_D(w^Priv) <= min_{w in B^d(Lambda)} L-hat^rho_S(w) + O~(Lambda r / (rho
    sqrt(min(1, eps) m))).  ``constant`` x ``log_factor`` stands for the O~ (unknown)."""
    return float(min_hinge_loss) + constant * log_factor * Lambda * r / (rho * math.sqrt(min(1.0, check_epsilon(epsilon)) * m))


def theorem_3_2_runtime(m: int, d: int, epsilon: float, delta: float) -> float:
    """m d log(max(d, m)) + eps m^2 log(m) log^{3/2}(1/delta): Algorithm 2's running time up to constants [seed]."""
    return m * d * math.log(max(d, m)) + epsilon * m * m * math.log(m) * math.log(1 / delta) ** 1.5


# ----------------------------------------------------------------------------------------------
# Section 4: random Fourier features, Theorem 4.1, Algorithm 3, Theorem 4.2
# ----------------------------------------------------------------------------------------------
def theorem_4_1_bound(r: float, m: int, beta: float, D: int) -> float:
    """Theorem 4.1: with probability >= 1 - beta, ``max_{i != j} ``|<psi(x_i), psi(x_j)> - K(x_i, x_j)|`` <= 2 r^2
    sqrt(log(2m / beta) / D)`` [reconstructed: the right-hand side is lost after "2r2"; Hoeffding + a union bound over
    the m^2 pairs, as the proof sketch says, and with D = m^2 log(2m/beta) it is 2 r^2 / m, the "<~ 1/m" of the
    overview]."""
    return 2.0 * r * r * math.sqrt(_log(2.0 * m / check_probability(beta, "beta")) / check_positive(D, "D"))


def theorem_4_1_bound_hoeffding(r: float, m: int, beta: float, D: int) -> float:
    """What Hoeffding and the union bound over the m (m - 1) / 2 unordered pairs give exactly [ours]: each of the D terms
    (r^2 / D) cos<omega_t, x_i - x_j> lies in an interval of length 2 r^2 / D, so the error exceeds t with probability
    <= 2 exp(-t^2 D / (2 r^4)) per pair: t = r^2 sqrt(2 log(m (m - 1) / beta) / D) (<= :func:`theorem_4_1_bound`)."""
    pairs = max(1, m * (m - 1) // 2)
    return r * r * math.sqrt(2.0 * _log(2.0 * pairs / check_probability(beta, "beta")) / check_positive(D, "D"))


def algorithm_3_D(m: int, beta: float) -> int:
    """D = m^2 log(2m / beta) random frequencies (Algorithm 3, step 2) [seed]."""
    return math.ceil(m * m * _log(2.0 * m / check_probability(beta, "beta")))


def algorithm_3_feature_bytes(m: int, beta: float) -> float:
    """Bytes of the m x 2D float64 feature matrix of Algorithm 3 with the paper's D [ours]."""
    return 8.0 * m * 2.0 * algorithm_3_D(m, beta)


def theorem_4_2_bound(min_hinge_loss: float, Lambda: float, r: float, rho: float, epsilon: float, m: int,
                      constant: float = 1.0, log_factor: float = 1.0) -> float:
    """Theorem 4.2 [COLT22 eq. (3)]: R_D(h_{w^Priv}) <= min_{h in H_Lambda} L-hat^rho_S(h) + O~(Lambda r / (rho
    sqrt(min(1, eps) m))), H_Lambda the RKHS ball of radius Lambda, K(x, x) = r^2."""
    return theorem_3_2_bound(min_hinge_loss, Lambda, r, rho, epsilon, m, constant, log_factor)


# ----------------------------------------------------------------------------------------------
# Section 5: neural networks, Theorem 5.1
# ----------------------------------------------------------------------------------------------
def theorem_5_1_bound(min_margin_loss: float, r: float, Lambda: float, L: int, N: int, rho: float, epsilon: float,
                      m: int, beta: float, variant: str = "COLT22", constant: float = 1.0) -> float:
    """Theorem 5.1 (an eps-DP L-layer, width-N network).

    ``variant="COLT22"`` [COLT22 eq. (4)]: R-hat^rho_S + c (r Lambda^L sqrt(N L) / (rho sqrt(m)) + r^2 (2 Lambda)^{2L}
    N L / (rho^2 eps m)).  ``variant="seed"`` [reconstructed from the main text]: r (2 Lambda)^L sqrt(N Upsilon) /
    (rho sqrt(m)) + r^2 (2 Lambda)^{2L} N Upsilon / (rho^2 eps m), Upsilon = log(L m / beta) log(r (2 Lambda)^L / rho)
    (the second log's argument is partly lost).  The two differ ((2 Lambda)^L against Lambda^L, the L factors)."""
    check_epsilon(epsilon)
    if variant == "COLT22":
        t1 = r * Lambda**L * math.sqrt(N * L) / (rho * math.sqrt(m))
        t2 = r * r * (2 * Lambda) ** (2 * L) * N * L / (rho * rho * epsilon * m)
    elif variant == "seed":
        ups = _log(L * m / beta) * max(_log(r * (2 * Lambda) ** L / rho), 1.0)
        t1 = r * (2 * Lambda) ** L * math.sqrt(N * ups) / (rho * math.sqrt(m))
        t2 = r * r * (2 * Lambda) ** (2 * L) * N * ups / (rho * rho * epsilon * m)
    else:
        raise ValueError(f"variant must be 'COLT22' or 'seed', got {variant!r}")
    return float(min_margin_loss) + constant * (t1 + t2)


def theorem_5_1_k(r: float, Lambda: float, L: int, rho: float, m: int, beta: float, constant: float = 1.0) -> int:
    """k = O(r^2 (2 Lambda)^{2L} log(L m / beta) / rho^2), the JL dimension of each layer [seed + reconstructed: the log
    factor is inferred]."""
    return max(1, math.ceil(constant * r * r * (2 * Lambda) ** (2 * L) * _log(L * m / beta) / (rho * rho)))


def theorem_5_1_gamma(r: float, Lambda: float, L: int, rho: float, constant: float = 1.0) -> float:
    """gamma = O(rho / (r (4 Lambda)^L)), the resolution of the cover of the compressed weights [seed + reconstructed:
    the numerator rho is inferred]."""
    return constant * rho / (r * (4 * Lambda) ** L)


# ----------------------------------------------------------------------------------------------
# JL (Section 3.1, [Nel11, Theorem 109]; Appendix A not recovered)
# ----------------------------------------------------------------------------------------------
def jl_norm_distortion(k: int, n_points: int, beta: float) -> float:
    """The largest relative squared-norm distortion ``|(||Phi x||^2 - ||x||^2) / ||x||^2|`` over ``n_points`` fixed vectors
    that a dense Rademacher or Gaussian k x d projection exceeds with probability <= beta [ours; Achlioptas 2003,
    Theorem 1.1: ``P(|..| > t) <= 2 exp(-k (t^2 / 2 - t^3 / 3) / 2)`` per vector, union bound, solved for t <= 1].
    Returns inf when no t <= 1 suffices."""
    target = _log(2.0 * n_points / check_probability(beta, "beta")) * 2.0 / int(k)

    def f(t: float) -> float:
        return t * t / 2.0 - t**3 / 3.0 - target

    if f(1.0) < 0:
        return math.inf
    lo, hi = 0.0, 1.0
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        if f(mid) < 0:
            lo = mid
        else:
            hi = mid
    return hi


#: The source tag of every calculator (see the module docstring).
SOURCES = {
    "rho_hinge_lipschitz": ("Section 2, the rho-hinge loss", "reconstructed"),
    "theorem_3_1_k": ("Algorithm 1, step 1 / Section 3.1", "reconstructed + ours (log factor, constant)"),
    "theorem_3_1_gamma": ("Theorem 3.1", "reconstructed"),
    "theorem_3_1_bound": ("Theorem 3.1", "reconstructed"),
    "algorithm_1_cover_spacing": ("Algorithm 1, step 4", "reconstructed"),
    "algorithm_1_log10_cover_size": ("Algorithm 1, step 4", "reconstructed"),
    "algorithm_2_k": ("Algorithm 2, step 1", "reconstructed"),
    "algorithm_2_conditions": ("Lemma 3.1 / Theorem 3.2", "seed"),
    "lemma_3_1_excess_risk": ("Lemma 3.1", "reconstructed (shape only)"),
    "noisy_gd_excess_risk": ("our DP-ERM substitute for Algorithm 4", "ours"),
    "noisy_gd_iterations": ("our DP-ERM substitute for Algorithm 4", "ours"),
    "theorem_3_2_bound": ("Theorem 3.2", "COLT22"),
    "theorem_3_2_runtime": ("Theorem 3.2", "seed"),
    "theorem_4_1_bound": ("Theorem 4.1", "reconstructed"),
    "theorem_4_1_bound_hoeffding": ("Theorem 4.1 (proof sketch)", "ours"),
    "algorithm_3_D": ("Algorithm 3, step 2", "seed"),
    "algorithm_3_feature_bytes": ("Algorithm 3, step 2", "ours"),
    "theorem_4_2_bound": ("Theorem 4.2", "COLT22"),
    "theorem_5_1_bound": ("Theorem 5.1", "COLT22 / reconstructed"),
    "theorem_5_1_k": ("Section 5, construction", "seed + reconstructed"),
    "theorem_5_1_gamma": ("Section 5, construction", "seed + reconstructed"),
    "jl_norm_distortion": ("Section 3.1 JL lemma (Achlioptas 2003)", "ours"),
}
