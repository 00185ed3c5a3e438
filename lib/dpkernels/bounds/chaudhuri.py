"""Calculators for Chaudhuri, Monteleoni and Sarwate (2011), "Differentially private empirical risk
minimization", JMLR 12:1069-1109 (JMLR numbering; restated in ``docs/statements/chaudhuri2011.md``).

Notation: J(f, D) = (1/n) sum_i l(y_i f'x_i) + (Lambda/2)||f||^2; eps_p the privacy level; ``c >= |l''|``;
data in the ball ||x|| <= R (the paper: R = 1; the ``data_norm`` argument gives our generalisation,
derived in the docstrings and reducing to the paper at R = 1).  Sample-complexity statements carry
unspecified absolute constants (C, C0, C1, C2 in the paper); they are explicit arguments here.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy.special import logsumexp

from dpkernels._validation import check_delta, check_epsilon, check_positive

__all__ = [
    "corollary_8_sensitivity",
    "theorem_6_beta",
    "ObjectivePerturbationParameters",
    "theorem_9_parameters",
    "corollary_11_c",
    "corollary_12_c",
    "corollary_13_c",
    "delta_branch_threshold",
    "theorem_15_terms",
    "theorem_15_sample_size",
    "theorem_18_terms",
    "theorem_18_sample_size",
    "corollary_20_sample_sizes",
    "corollary_21_sample_sizes",
    "lemma_16_excess_risk",
    "lemma_17_quantile",
    "lemma_19_excess_risk",
    "lemma_19_excess_risk_derived",
    "lemma_23_sample_size",
    "theorem_24_sample_size",
    "theorem_25_sample_size",
    "algorithm_4_probabilities",
    "theorem_27_mistake_bound",
    "unit_ball_volume",
]


def corollary_8_sensitivity(n: int, Lambda: float, data_norm: float = 1.0) -> float:
    """Corollary 8: the L2 sensitivity of argmin_f J(f, D) is at most 2 / (n Lambda) (times R for ||x|| <= R).

    Lemma 7 with the Lambda-strongly convex G = J(., D) and g = (1/n)(l(y' f'x') - l(y f'x)), whose
    gradient has norm ``<= (|l'| ||x|| + |l'| ||x'||)/n <= 2R/n``.
    """
    return 2.0 * check_positive(data_norm, "data_norm") / (n * check_positive(Lambda, "Lambda"))


def theorem_6_beta(epsilon: float, n: int, Lambda: float, data_norm: float = 1.0) -> float:
    """Theorem 6 / Algorithm 1: beta = n Lambda eps_p / 2 (noise density ~ exp(-beta ||b||)); eps_p / (2R / (n Lambda)) for ||x|| <= R."""
    return check_epsilon(epsilon) / corollary_8_sensitivity(n, Lambda, data_norm)


@dataclass(frozen=True)
class ObjectivePerturbationParameters:
    """Algorithm 2's derived parameters."""

    epsilon_prime: float  #: privacy spent on the noise density
    Delta: float  #: extra regularisation (0 in the first branch)
    beta: float  #: noise density ~ exp(-beta ||b||)
    branch: str  #: "eps' > 0" or "Delta > 0"


def theorem_9_parameters(epsilon: float, n: int, Lambda: float, c: float, data_norm: float = 1.0) -> ObjectivePerturbationParameters:
    """Algorithm 2 / Theorem 9: eps' = eps_p - log(1 + 2c/(n Lambda) + c^2/(n^2 Lambda^2)); if eps' > 0, Delta = 0,
    else Delta = c / (n (e^{eps_p/4} - 1)) - Lambda and eps' = eps_p / 2; beta = eps' / 2.

    For ||x|| <= R (not in the paper; derived like Theorem 9): the Jacobian's rank-2 change has eigenvalues
    <= c R^2, so c becomes c R^2 in eps' and Delta, and ||b - b'|| <= 2R makes beta = eps' / (2R).
    """
    epsilon = check_epsilon(epsilon)
    R = check_positive(data_norm, "data_norm")
    Lambda = check_positive(Lambda, "Lambda")
    cR = c * R * R
    eps_prime = epsilon - 2.0 * math.log1p(cR / (n * Lambda))
    if eps_prime > 0:
        return ObjectivePerturbationParameters(eps_prime, 0.0, eps_prime / (2.0 * R), "eps' > 0")
    Delta = cR / (n * math.expm1(epsilon / 4.0)) - Lambda
    return ObjectivePerturbationParameters(epsilon / 2.0, Delta, epsilon / (4.0 * R), "Delta > 0")


def delta_branch_threshold(epsilon: float, n: int, c: float, data_norm: float = 1.0) -> float:
    """The Lambda below which Algorithm 2 takes the Delta > 0 branch: c R^2 / (n (e^{eps_p/2} - 1))."""
    return c * data_norm**2 / (n * math.expm1(check_epsilon(epsilon) / 2.0))


def corollary_11_c() -> float:
    """Corollary 11 (logistic regression): Algorithm 2 with c = 1/4."""
    return 0.25


def corollary_12_c(h: float) -> float:
    """Corollary 12 (smoothed hinge l_s): Algorithm 2 with c = 3 / (4h)."""
    return 3.0 / (4.0 * check_positive(h, "h"))


def corollary_13_c(h: float) -> float:
    """Corollary 13 (Huber): Algorithm 2 with c = 1 / (2h) satisfies Definition 3."""
    return 1.0 / (2.0 * check_positive(h, "h"))


def theorem_15_terms(eps_g: float, eps_p: float, delta: float, d: int, f0_norm: float, c: float) -> tuple[float, float, float]:
    """The three terms of Theorem 15's condition (Eq. 8): ||f0||^2 log(1/delta)/eps_g^2 (non-private),
    d log(d/delta)||f0||/(eps_g eps_p) and d log(d/delta) c^{1/2} ||f0||^2 / (eps_g^{3/2} eps_p) (privacy)."""
    check_delta(delta)
    return (f0_norm**2 * math.log(1 / delta) / eps_g**2,
            d * math.log(d / delta) * f0_norm / (eps_g * eps_p),
            d * math.log(d / delta) * math.sqrt(c) * f0_norm**2 / (eps_g**1.5 * eps_p))


def theorem_15_sample_size(eps_g: float, eps_p: float, delta: float, d: int, f0_norm: float, c: float, C: float = 1.0) -> float:
    """Theorem 15 (Algorithm 1): n > C max{terms} (:func:`theorem_15_terms`) gives P(L(f_priv) <= L* + eps_g) >= 1 - 2 delta."""
    return C * max(theorem_15_terms(eps_g, eps_p, delta, d, f0_norm, c))


def theorem_18_terms(eps_g: float, eps_p: float, delta: float, d: int, f0_norm: float, c: float) -> tuple[float, float, float]:
    """The three terms of Theorem 18's condition: ||f0||^2 log(1/delta)/eps_g^2, c ||f0||^2/(eps_g eps_p),
    d log(d/delta)||f0||/(eps_g eps_p)."""
    check_delta(delta)
    return (f0_norm**2 * math.log(1 / delta) / eps_g**2,
            c * f0_norm**2 / (eps_g * eps_p),
            d * math.log(d / delta) * f0_norm / (eps_g * eps_p))


def theorem_18_sample_size(eps_g: float, eps_p: float, delta: float, d: int, f0_norm: float, c: float, C: float = 1.0) -> float:
    """Theorem 18 (Algorithm 2): n > C max{terms} (:func:`theorem_18_terms`) gives P(L(f_priv) <= L* + eps_g) >= 1 - 2 delta."""
    return C * max(theorem_18_terms(eps_g, eps_p, delta, d, f0_norm, c))


def corollary_20_sample_sizes(eps_g: float, eps_p: float, delta: float, d: int, f0_norm: float,
                              C1: float = 1.0, C: float = 1.0) -> tuple[float, float]:
    """Corollary 20 (logistic regression): (Algorithm 1's, Algorithm 2's) sufficient n; Theorems 15/18 with c = 1/4
    (Algorithm 1's third term written without c^{1/2})."""
    check_delta(delta)
    out = C1 * max(f0_norm**2 * math.log(1 / delta) / eps_g**2, d * math.log(d / delta) * f0_norm / (eps_g * eps_p),
                   d * math.log(d / delta) * f0_norm**2 / (eps_g**1.5 * eps_p))
    obj = C * max(f0_norm**2 * math.log(1 / delta) / eps_g**2, f0_norm**2 / (eps_g * eps_p),
                  d * math.log(d / delta) * f0_norm / (eps_g * eps_p))
    return out, obj


def corollary_21_sample_sizes(eps_g: float, eps_p: float, delta: float, d: int, f0_norm: float, h: float,
                              C1: float = 1.0, C2: float = 1.0) -> tuple[float, float]:
    """Corollary 21 (Huber SVM): Algorithm 1's third term d log(d/delta)||f0||^2 / (h^{1/2} eps_g^{3/2} eps_p);
    Algorithm 2's second term ||f0||^2 / (h eps_g eps_p) (the corollary's "c = 1/4" is a typo for 1/(2h), E7)."""
    check_delta(delta)
    out = C1 * max(f0_norm**2 * math.log(1 / delta) / eps_g**2, d * math.log(d / delta) * f0_norm / (eps_g * eps_p),
                   d * math.log(d / delta) * f0_norm**2 / (math.sqrt(h) * eps_g**1.5 * eps_p))
    obj = C2 * max(f0_norm**2 * math.log(1 / delta) / eps_g**2, f0_norm**2 / (h * eps_g * eps_p),
                   d * math.log(d / delta) * f0_norm / (eps_g * eps_p))
    return out, obj


def lemma_16_excess_risk(d: int, c: float, Lambda: float, eta: float, n: int, eps_p: float, delta: float) -> float:
    """Lemma 16 (Algorithm 1): with probability >= 1 - delta over b,
    J(f_priv) <= J(f*) + 2 d^2 (c + Lambda eta) log^2(d/delta) / (Lambda^2 n^2 eps_p^2) (||Hessian of N|| <= eta)."""
    check_delta(delta)
    return 2.0 * d**2 * (c + Lambda * eta) * math.log(d / delta) ** 2 / (Lambda**2 * n**2 * eps_p**2)


def lemma_17_quantile(k: int, theta: float, delta: float) -> float:
    """Lemma 17: X ~ Gamma(k, theta) with integer k satisfies P(X < k theta log(k / delta)) >= 1 - delta."""
    check_delta(delta)
    return k * theta * math.log(k / delta)


def lemma_19_excess_risk(d: int, Lambda: float, n: int, eps_p: float, delta: float) -> float:
    """Lemma 19 (Algorithm 2, eps' > 0): with probability >= 1 - delta, J(f_priv) <= J(f*) + 4 d^2 log^2(d/delta) / (Lambda n^2 eps_p^2)."""
    check_delta(delta)
    return 4.0 * d**2 * math.log(d / delta) ** 2 / (Lambda * n**2 * eps_p**2)


def lemma_19_excess_risk_derived(d: int, Lambda: float, n: int, eps_prime: float, delta: float) -> float:
    """Lemma 19's argument with the noise Algorithm 2 actually adds (||b|| ~ Gamma(d, 2/eps'), not 2/eps_p):
    J(f_priv) - J(f*) <= ||b||^2 / (n^2 Lambda) <= 4 d^2 log^2(d/delta) / (Lambda n^2 eps'^2)."""
    return lemma_19_excess_risk(d, Lambda, n, eps_prime, delta)


def unit_ball_volume(d: int) -> float:
    """Vol of the unit L2 ball in R^d: pi^{d/2} / Gamma(d/2 + 1)."""
    return math.pi ** (d / 2) / math.gamma(d / 2 + 1)


def lemma_23_sample_size(eps_g: float, eps_p: float, delta: float, Cbound: float, c: float, C0: float = 1.0) -> float:
    """Lemma 23 (Algorithm 3 + 2): n > C0 max{C^2 sqrt(log(1/delta)) / (eps_p eps_g^2) log(C log(1/delta)/(eps_g delta)),
    c eps_g / (eps_p log(1/delta))} (``|a0(theta)| <= C``) gives P(L(f_priv) - L* <= eps_g) >= 1 - 4 delta."""
    check_delta(delta)
    L = math.log(1 / delta)
    a = Cbound**2 * math.sqrt(L) / (eps_p * eps_g**2) * math.log(Cbound * L / (eps_g * delta))
    return C0 * max(a, c * eps_g / (eps_p * L))


def theorem_24_sample_size(eps_g: float, eps_p: float, delta: float, d: int, f0_sup: float, zeta: float, c: float, C0: float = 1.0) -> float:
    """Theorem 24 (||f0||_inf bounded, X the unit ball): Lemma 23 with C = Vol(X) zeta ||f0||_inf, Eq. (28)."""
    check_delta(delta)
    L = math.log(1 / delta)
    vol = unit_ball_volume(d)
    a = (f0_sup**2 * zeta**2 * vol**2 * math.sqrt(L) / (eps_p * eps_g**2)
         * math.log(f0_sup * vol * zeta * L / (eps_g * delta * math.gamma(d / 2 + 1))))
    return C0 * max(a, c * eps_g / (eps_p * L))


def theorem_25_sample_size(eps_g: float, eps_p: float, delta: float, d: int, f0_H: float, zeta: float, c: float, C0: float = 1.0) -> float:
    """Theorem 25 (||f0||_H bounded): first term ||f0||_H^4 zeta^2 Vol(X)^2 sqrt(log(1/delta)) / (eps_p eps_g^4) times
    log(||f0||_H Vol(X) zeta log(1/delta) / (eps_g delta Gamma(d/2 + 1))); second as Theorem 24 (printed "n = C0 max", E8)."""
    check_delta(delta)
    L = math.log(1 / delta)
    vol = unit_ball_volume(d)
    a = (f0_H**4 * zeta**2 * vol**2 * math.sqrt(L) / (eps_p * eps_g**4)
         * math.log(f0_H * vol * zeta * L / (eps_g * delta * math.gamma(d / 2 + 1))))
    return C0 * max(a, c * eps_g / (eps_p * L))


def algorithm_4_probabilities(mistakes: ArrayLike, epsilon: float) -> NDArray[np.float64]:
    """Algorithm 4: q_i = exp(-eps_p z_i / 2) / sum_j exp(-eps_p z_j / 2) (exponential mechanism, z_i of sensitivity 1)."""
    z = np.asarray(mistakes, dtype=np.float64)
    logits = -check_epsilon(epsilon) * z / 2.0
    return np.exp(logits - logsumexp(logits))


def theorem_27_mistake_bound(z_min: float, epsilon: float, m: int, delta: float) -> float:
    """Theorem 27: with probability >= 1 - delta the selected classifier makes at most z_min + (2/eps_p) log(m/delta) mistakes."""
    check_delta(delta)
    return z_min + 2.0 / check_epsilon(epsilon) * math.log(m / delta)
