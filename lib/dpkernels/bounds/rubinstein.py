"""Calculators for Rubinstein, Bartlett, Huang and Taft (2012), "Learning in a large function space:
privacy-preserving mechanisms for SVM learning" (Journal of Privacy and Confidentiality 4(1)).

Notation as in the paper: beta is the privacy level (our ``epsilon`` elsewhere), (eps, delta) the
usefulness (utility) parameters, C the SVM's soft-margin parameter in (1/2)||w||^2 + (C/n) sum l,
L the loss's Lipschitz constant, kappa^2 >= k(x, x), F the feature dimension, d-hat the number of
random frequencies (2 d-hat features), ``Phi >= |phi(x)_i|``, Lambda >= ||alpha||_1.

Functions named ``*_derived`` give what the paper's own ingredients imply where the printed
statement differs; ``ERRATA.md`` records each difference with the command that shows it.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from dpkernels._validation import check_delta, check_positive

__all__ = [
    "remark_1_C",
    "lemma_9_sensitivity",
    "sensitivity_strong_convexity",
    "theorem_10_noise_scale",
    "theorem_11_max_noise_scale",
    "theorem_11_epsilon",
    "theorem_11_tail_bound",
    "corollary_12_noise_scale",
    "theorem_13_theta",
    "theorem_13_d_hat",
    "theorem_13_max_noise_scale",
    "corollary_15_max_noise_scale",
    "corollary_15_tail_bound",
    "lemma_16_distance",
    "lemma_17_kernel_tolerance",
    "lemma_17_sup_distance",
    "lemma_17_stated_slack",
    "lemma_18_d_hat",
    "lemma_18_failure_probability",
    "corollary_19_beta_upper",
    "corollary_19_beta_upper_derived",
    "corollary_20_theta",
    "corollary_20_d_hat",
    "theorem_21_beta_upper_derived",
    "theorem_21_claimed_rate",
    "theorem_21_beta_paper_proof",
    "Lemma22Databases",
    "lemma_22_databases",
    "lemma_22_closed_form",
    "lemma_22_separation",
    "theorem_23_beta_lower",
    "theorem_23_max_epsilon",
    "remark_24_min_delta",
    "theorem_23_min_delta",
    "lemma_25_N",
    "lemma_25_max_sigma",
    "Lemma25Databases",
    "lemma_25_databases",
    "lemma_25_duals",
    "lemma_25_separation",
    "lemma_25_neighbour_kernel",
    "lemma_25_neighbour_kernel_paper",
    "theorem_26_beta_lower",
    "fourier_transform_normalisation",
]


def remark_1_C(n: int) -> float:
    """Remark 1: "For universal consistency, the SVM's parameter C should grow like sqrt(n)"; returns sqrt(n)."""
    return math.sqrt(n)


# ---------------------------------------------------------------------------------------------
# Section 3: finite feature maps
# ---------------------------------------------------------------------------------------------
def lemma_9_sensitivity(L: float, C: float, kappa: float, n: int, F: int | None = None) -> tuple[float, float]:
    """Lemma 9: for a convex L-Lipschitz loss and k(x, x) <= kappa^2, neighbouring databases of n entries give
    ||w_D - w_D'||_2 <= 4 L C kappa / n and ||w_D - w_D'||_1 <= 4 L C kappa sqrt(F) / n.

    Returns (L2 bound, L1 bound); the L1 bound is ``nan`` when F is not given.
    """
    l2 = 4.0 * L * C * kappa / n
    return l2, (l2 * math.sqrt(F) if F is not None else float("nan"))


def sensitivity_strong_convexity(L: float, C: float, kappa: float, n: int) -> float:
    """The tight replace-one L2 sensitivity 2 L C kappa / n of the same minimiser (not a statement of the paper).

    (1/2)||w||^2 is 1-strongly convex and replacing one example changes the objective by
    (C/n)(l(y', <w, phi(x')>) - l(y, <w, phi(x)>)), whose subgradients have norm <= 2 L C kappa / n; the
    minimisers of a 1-strongly convex function and its perturbation differ by at most that norm
    (Chaudhuri et al. 2011, Lemma 7 / Corollary 8 with Lambda = 1/C; Bousquet and Elisseeff 2002).
    Lemma 22's databases approach it, so Lemma 9's 4 L C kappa / n is loose by exactly 2.
    """
    return 2.0 * L * C * kappa / n


def theorem_10_noise_scale(beta: float, L: float, C: float, kappa: float, F: int, n: int) -> float:
    """Theorem 10: PrivateSVM-Finite with lambda >= 4 L C kappa sqrt(F) / (beta n) is beta-differentially private."""
    check_positive(beta, "beta")
    return 4.0 * L * C * kappa * math.sqrt(F) / (beta * n)


def theorem_11_max_noise_scale(eps: float, delta: float, Phi: float, F: int) -> float:
    """Theorem 11: PrivateSVM-Finite with 0 < lambda <= eps / (2 Phi (F + ln(1/delta))) is (eps, delta)-useful
    w.r.t. the SVM in the sup-norm over M (``|phi(x)_i| <= Phi`` on M)."""
    check_delta(delta)
    return eps / (2.0 * Phi * (F + math.log(1.0 / delta)))


def theorem_11_epsilon(lam: float, delta: float, Phi: float, F: int) -> float:
    """Theorem 11 restated: with noise lambda, PrivateSVM-Finite is (eps, delta)-useful for eps = 2 lambda Phi (F + ln 1/delta)."""
    return 2.0 * lam * Phi * (F + math.log(1.0 / check_delta(delta)))


def theorem_11_tail_bound(eps: float, lam: float, Phi: float, F: int) -> float:
    """Proof of Theorem 11 (Chernoff step): P(||f-hat - f||_inf > eps) <= 2^F exp(-eps / (2 lambda Phi))."""
    return min(1.0, math.exp(F * math.log(2.0) - eps / (2.0 * lam * Phi)))


def corollary_12_noise_scale(beta: float, L: float, C: float, d_hat: int, n: int) -> float:
    """Corollary 12: PrivateSVM with lambda >= 2^{2.5} L C sqrt(d-hat) / (beta n) is beta-differentially private
    (Theorem 10 with F = 2 d-hat and kappa = 1)."""
    check_positive(beta, "beta")
    return 2.0**2.5 * L * C * math.sqrt(d_hat) / (beta * n)


# ---------------------------------------------------------------------------------------------
# Section 4: translation-invariant kernels
# ---------------------------------------------------------------------------------------------
def _lemma_17_H(Lambda: float, C: float, L: float) -> float:
    return Lambda + 2.0 * math.sqrt((C * L + Lambda / 2.0) * Lambda)


def theorem_13_theta(eps: float, Lambda: float, C: float, L: float = 1.0) -> float:
    """Theorem 13: theta(eps) = min{1, eps^4 / (2^4 (Lambda + 2 sqrt((C L + Lambda/2) Lambda))^4)}."""
    return min(1.0, eps**4 / (2.0**4 * _lemma_17_H(Lambda, C, L) ** 4))


def theorem_13_d_hat(eps: float, delta: float, d: int, sigma_p: float, diam: float, Lambda: float, C: float, L: float = 1.0) -> float:
    """Theorem 13: d-hat >= 4 (d + 2) / theta(eps) ln(2^9 (sigma_p diam(M))^2 / (delta theta(eps))).

    Infinite when sigma_p is infinite (e.g. the Laplacian kernel, whose spectral law is Cauchy).
    """
    check_delta(delta)
    if not math.isfinite(sigma_p):
        return math.inf
    th = theorem_13_theta(eps, Lambda, C, L)
    return 4.0 * (d + 2) / th * math.log(2.0**9 * (sigma_p * diam) ** 2 / (delta * th))


def corollary_15_max_noise_scale(eps: float, delta: float, d_hat: int) -> float:
    """Corollary 15: if 0 < lambda <= min{eps / (2^4 ln(2) sqrt(d-hat)), eps sqrt(d-hat) / (8 ln(2/delta))} then
    P(||f-hat* - f-tilde||_inf <= eps/2) >= 1 - delta/2."""
    check_delta(delta)
    return min(eps / (2.0**4 * math.log(2.0) * math.sqrt(d_hat)), eps * math.sqrt(d_hat) / (8.0 * math.log(2.0 / delta)))


def theorem_13_max_noise_scale(eps: float, delta: float, d_hat: int) -> float:
    """Theorem 13's condition on lambda (identical to Corollary 15's)."""
    return corollary_15_max_noise_scale(eps, delta, d_hat)


def corollary_15_tail_bound(eps: float, lam: float, d_hat: int) -> float:
    """Proof of Corollary 15 (Chernoff step): P(||f-hat* - f-tilde||_inf > eps/2) <= exp(d-hat ln 4 - eps sqrt(d-hat) / (4 lambda))."""
    return min(1.0, math.exp(d_hat * math.log(4.0) - eps * math.sqrt(d_hat) / (4.0 * lam)))


def lemma_16_distance(eps: float, a: float) -> float:
    """Lemma 16: if R[f] >= R[f*] + (a/2)||f - f*||^2 for all f, then R[f] <= R[f*] + eps implies ||f - f*|| <= sqrt(2 eps / a)."""
    return math.sqrt(2.0 * eps / a)


def lemma_17_kernel_tolerance(eps: float, Lambda: float, C: float, L: float = 1.0) -> float:
    """Lemma 17 (second, complete statement): ||k - k-hat||_inf <= min{1, eps^2 / (2^2 (Lambda + 2 sqrt((CL + Lambda/2)Lambda))^2)}
    implies ||f* - g*||_inf <= eps/2.  (The first printed statement, min{1, eps^2/(1 + eps^2)}, is garbled.)"""
    return min(1.0, eps**2 / (4.0 * _lemma_17_H(Lambda, C, L) ** 2))


def lemma_17_sup_distance(eps_prime: float, Lambda: float, C: float, L: float = 1.0) -> float:
    """Proof of Lemma 17: on the event ||k - k-hat||_inf <= eps', ||f* - g*||_inf <= eps' Lambda + 2 sqrt((CL + Lambda/2) Lambda eps')."""
    return eps_prime * Lambda + 2.0 * math.sqrt((C * L + Lambda / 2.0) * Lambda * eps_prime)


def lemma_17_stated_slack(eps: float, Lambda: float, C: float, L: float = 1.0,
                           tolerance: Callable[[float, float, float, float], float] | None = None) -> float:
    """Lemma 17 as stated, through its proof's bound: at the stated kernel tolerance eps' (:func:`lemma_17_kernel_tolerance`,
    or ``tolerance(eps, Lambda, C, L)``), the proof's bound :func:`lemma_17_sup_distance` over the statement's eps/2.
    At most 1 is what the proof's last paragraph of algebra claims: with H = Lambda + 2 sqrt((CL + Lambda/2) Lambda)
    and eps' = eps^2 / (4 H^2) <= 1, the bound is eps^2 Lambda / (4 H^2) + eps (H - Lambda) / (2 H) <= eps/2 exactly
    when eps <= 2H, which eps' <= 1 says; where the min takes 1 (eps > 2H) the bound is H < eps/2."""
    eps_prime = (lemma_17_kernel_tolerance if tolerance is None else tolerance)(eps, Lambda, C, L)
    return lemma_17_sup_distance(eps_prime, Lambda, C, L) / (eps / 2.0)


def lemma_18_d_hat(eps: float, delta: float, d: int, sigma_p: float, diam: float) -> float:
    """Lemma 18 (Rahimi and Recht 2008, Claim 1): d-hat >= 4 (d+2) / eps^2 ln(2^8 (sigma_p diam(M))^2 / (delta eps^2))
    gives P(||k-hat - k||_inf < eps) >= 1 - delta on the compact set M."""
    check_delta(delta)
    if not math.isfinite(sigma_p):
        return math.inf
    return 4.0 * (d + 2) / eps**2 * math.log(2.0**8 * (sigma_p * diam) ** 2 / (delta * eps**2))


def lemma_18_failure_probability(eps: float, d_hat: int, d: int, sigma_p: float, diam: float) -> float:
    """Rahimi and Recht's Claim 1 as a tail bound: P(||k-hat - k||_inf >= eps) <= 2^8 (sigma_p diam / eps)^2 exp(-d-hat eps^2 / (4 (d + 2)))."""
    if not math.isfinite(sigma_p):
        return 1.0
    return min(1.0, 2.0**8 * (sigma_p * diam / eps) ** 2 * math.exp(-d_hat * eps**2 / (4.0 * (d + 2))))


# ---------------------------------------------------------------------------------------------
# Section 5: hinge loss and upper bounds on optimal privacy
# ---------------------------------------------------------------------------------------------
def corollary_19_beta_upper(eps: float, delta: float, C: float, n: int, F: int, kappa: float, Phi: float, L: float = 1.0) -> float:
    """Corollary 19 as printed: beta* <= 8 kappa Phi C (F ln 2 + ln(1/delta)) / (n eps) (times L for general losses)."""
    check_delta(delta)
    return 8.0 * kappa * Phi * C * L * (F * math.log(2.0) + math.log(1.0 / delta)) / (n * eps)


def corollary_19_beta_upper_derived(eps: float, delta: float, C: float, n: int, F: int, kappa: float, Phi: float, L: float = 1.0) -> float:
    """What Theorems 10 and 11 give: beta = 8 kappa Phi C L sqrt(F) (F ln 2 + ln(1/delta)) / (n eps).

    Theorem 11's Chernoff step needs lambda <= eps / (2 Phi (F ln 2 + ln 1/delta)); Theorem 10 then needs
    beta >= 4 L C kappa sqrt(F) / (lambda n).  The printed corollary drops the sqrt(F) of Theorem 10's L1 sensitivity.
    """
    return math.sqrt(F) * corollary_19_beta_upper(eps, delta, C, n, F, kappa, Phi, L)


def corollary_20_theta(eps: float, C: float) -> float:
    """Corollary 20 (hinge loss, Lambda = C, L = 1): theta(eps) = min{1, eps^4 / (2^12 C^4)}."""
    return min(1.0, eps**4 / (2.0**12 * C**4))


def corollary_20_d_hat(eps: float, delta: float, C: float, d: int, sigma_p: float, diam: float) -> float:
    """Corollary 20: d-hat >= 4 (d+2) / theta(eps) ln(2^9 (sigma_p diam(M))^2 / (delta theta(eps))) with theta of :func:`corollary_20_theta`."""
    check_delta(delta)
    if not math.isfinite(sigma_p):
        return math.inf
    th = corollary_20_theta(eps, C)
    return 4.0 * (d + 2) / th * math.log(2.0**9 * (sigma_p * diam) ** 2 / (delta * th))


def theorem_21_beta_upper_derived(eps: float, delta: float, C: float, n: int, d: int, sigma_p: float, diam: float) -> float:
    """The explicit upper bound on beta* that Corollary 20's constants give (hinge loss, translation-invariant kernel).

    d-hat = ceil(Corollary 20's requirement); lambda = Corollary 15's largest allowed value;
    beta = 2^{2.5} C sqrt(d-hat) / (lambda n) (Corollary 20's privacy condition).
    """
    d_hat = math.ceil(corollary_20_d_hat(eps, delta, C, d, sigma_p, diam))
    lam = corollary_15_max_noise_scale(eps, delta, d_hat)
    return 2.0**2.5 * C * math.sqrt(d_hat) / (lam * n)


def theorem_21_claimed_rate(eps: float, delta: float, C: float, n: int) -> float:
    """Theorem 21 as printed: beta* = O(C / (eps^3 n) log^{1.5}(C / (delta eps))) (returns the expression without constant)."""
    return C / (eps**3 * n) * math.log(C / (delta * eps)) ** 1.5


def theorem_21_beta_paper_proof(eps: float, delta: float, C: float, n: int, d: int, sigma_p: float, diam: float) -> float:
    """The proof's first case as written: lambda = eps / (2^4 ln(2 sqrt(d-hat))) (reading Corollary 15's
    2^4 ln(2) sqrt(d-hat) as 2^4 ln(2 sqrt(d-hat))), with Corollary 20's d-hat.  Kept to show where the
    printed rate comes from; it violates Corollary 15's condition by a factor sqrt(d-hat) ln 2 / ln(2 sqrt(d-hat))."""
    d_hat = math.ceil(corollary_20_d_hat(eps, delta, C, d, sigma_p, diam))
    lam = eps / (2.0**4 * math.log(2.0 * math.sqrt(d_hat)))
    return 2.0**2.5 * C * math.sqrt(d_hat) / (lam * n)


# ---------------------------------------------------------------------------------------------
# Section 6.1: linear kernel lower bound
# ---------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Lemma22Databases:
    """Lemma 22's construction on the line: shared examples, last example x_n = M - m with y_n = -1 (D1) or +1 (D2)."""

    X1: NDArray[np.float64]
    y1: NDArray[np.float64]
    X2: NDArray[np.float64]
    y2: NDArray[np.float64]
    M: float
    m: float


def lemma_22_databases(n: int, C: float, eps: float | None = None, M: float | None = None, m: float | None = None) -> Lemma22Databases:
    """Proof of Lemma 22: x_1..x_{floor(n/2)} = -M (y = -1), x_{floor(n/2)+1}..x_{n-1} = M (y = +1), x_n = M - m.

    By default M = 2 n eps / C and m = n eps / C with eps = sqrt(C) / (2 n) (the proof's choice).
    """
    if n < 2:
        raise ValueError("Lemma 22 needs n > 1")
    if M is None or m is None:
        eps = math.sqrt(C) / (2 * n) if eps is None else eps
        M, m = 2.0 * n * eps / C, n * eps / C
    h = n // 2
    x = np.concatenate([np.full(h, -M), np.full(n - 1 - h, M), [M - m]])
    y_shared = np.concatenate([np.full(h, -1.0), np.full(n - 1 - h, 1.0)])
    return Lemma22Databases(x[:, None], np.append(y_shared, -1.0), x[:, None].copy(), np.append(y_shared, 1.0), float(M), float(m))


def lemma_22_closed_form(n: int, C: float, M: float, m: float) -> tuple[float, float, bool]:
    """Proof of Lemma 22: w1* = C (M (n - 2) + m) / n and w2* = C (M n - m) / n, valid when
    1/M > C (M n - m) / n.  Returns (w1*, w2*, condition holds)."""
    w1 = C * (M * (n - 2) + m) / n
    w2 = C * (M * n - m) / n
    return w1, w2, 1.0 / M > max(w1, w2)


def lemma_22_separation(C: float, n: int) -> float:
    """Lemma 22: ||f1* - f2*||_inf > sqrt(C) / n (measured at x = 1 in the proof)."""
    return math.sqrt(C) / n


def theorem_23_max_epsilon(C: float, n: int) -> float:
    """Theorem 23's range: eps in (0, sqrt(C) / (2 n))."""
    return math.sqrt(C) / (2.0 * n)


def theorem_23_beta_lower(delta: float) -> float:
    """Theorem 23: beta* >= ln((1 - delta) / delta) for eps < sqrt(C)/(2n) (linear kernel, hinge loss)."""
    check_delta(delta)
    return math.log((1.0 - delta) / delta)


def theorem_23_min_delta(beta: float) -> float:
    """Theorem 23 solved for delta: a beta-DP, (eps, delta)-useful mechanism with eps < sqrt(C)/(2n) needs delta >= 1 / (1 + e^beta)."""
    return 1.0 / (1.0 + math.exp(beta))


def remark_24_min_delta(beta: float) -> float:
    """Remark 24 as printed: "either eps >= sqrt(C)/(2n) or delta >= exp(-beta)"."""
    return math.exp(-beta)


# ---------------------------------------------------------------------------------------------
# Section 6.2: RBF kernel lower bound
# ---------------------------------------------------------------------------------------------
def lemma_25_N(sigma: float) -> int:
    """Lemma 25: N = floor((2 / sigma) sqrt(2 / ln 2)) pairwise-neighbouring databases."""
    return int(math.floor(2.0 / sigma * math.sqrt(2.0 / math.log(2.0))))


def lemma_25_max_sigma() -> float:
    """Lemma 25's range: 0 < sigma < sqrt(1 / (2 ln 2))."""
    return math.sqrt(1.0 / (2.0 * math.log(2.0)))


@dataclass(frozen=True)
class Lemma25Databases:
    """Lemma 25's construction: n-1 negatives at the origin, the positive at (cos theta_i, sin theta_i)."""

    X: list[NDArray[np.float64]]
    y: NDArray[np.float64]
    N: int


def lemma_25_databases(n: int, sigma: float, N: int | None = None) -> Lemma25Databases:
    """The N databases D_i of Lemma 25's proof, theta_i = 2 pi i / N."""
    N = lemma_25_N(sigma) if N is None else N
    y = np.append(np.full(n - 1, -1.0), 1.0)
    Xs = []
    for i in range(1, N + 1):
        X = np.zeros((n, 2))
        X[-1] = (math.cos(2 * math.pi * i / N), math.sin(2 * math.pi * i / N))
        Xs.append(X)
    return Lemma25Databases(Xs, y, N)


def lemma_25_duals(n: int, C: float, gamma: float) -> tuple[float, float, str]:
    """Lemma 25's dual solution (alpha_1 = ... = alpha_{n-1}, alpha_n) of the reduced two-variable program.

    Solves max (n-1) a1 + a2 - (1/2)[(n-1)^2 a1^2 - 2 gamma (n-1) a1 a2 + a2^2] over 0 <= a <= C/n exactly
    (the four cases of the proof), with the correct case-4 stationary point a1 = (1 + C gamma / n) / (n - 1).
    Returns (alpha_1, alpha_n, case).
    """
    u = C / n
    # interior
    a1, a2 = 1.0 / ((n - 1) * (1.0 - gamma)), 1.0 / (1.0 - gamma)
    if a1 <= u and a2 <= u:
        return a1, a2, "interior"
    cands = []
    # alpha_1 at the bound: alpha_n = 1 + C gamma (n-1)/n, clipped
    cands.append((u, min(max(1.0 + C * gamma * (n - 1) / n, 0.0), u)))
    # alpha_n at the bound: alpha_1 = (1 + C gamma / n)/(n - 1), clipped
    cands.append((min(max((1.0 + C * gamma / n) / (n - 1), 0.0), u), u))
    cands.append((u, u))

    def obj(a: tuple[float, float]) -> float:
        x1, x2 = a
        return (n - 1) * x1 + x2 - 0.5 * ((n - 1) ** 2 * x1**2 - 2 * gamma * (n - 1) * x1 * x2 + x2**2)

    best = max(cands, key=obj)
    case = "alpha_1 at C/n" if best == cands[0] else ("alpha_n at C/n" if best == cands[1] else "both at C/n")
    if best[0] == u and best[1] == u:
        case = "both at C/n"
    return best[0], best[1], case


def lemma_25_neighbour_kernel(sigma: float, N: int) -> float:
    """k(x_{i,n}, x_{i+1,n}) = exp(-2 sin^2(pi/N) / sigma^2) (points at angular distance 2 pi / N on the unit circle)."""
    return math.exp(-2.0 * math.sin(math.pi / N) ** 2 / sigma**2)


def lemma_25_neighbour_kernel_paper(sigma: float, N: int) -> float:
    """Lemma 25's proof as printed: "this maximum is equal to gamma^4 exp(sin^2(pi/N))" with gamma = exp(-1/(2 sigma^2))."""
    gamma = math.exp(-1.0 / (2.0 * sigma**2))
    return gamma**4 * math.exp(math.sin(math.pi / N) ** 2)


def lemma_25_separation(C: float, n: int, sigma: float, N: int | None = None) -> float:
    """Lemma 25's proof: ``|f_i(x_{i,n}) - f_j(x_{i,n})| >= (1 - exp(-2 sin^2(pi/N)/sigma^2)) C / n`` (>= C/(2n))."""
    N = lemma_25_N(sigma) if N is None else N
    return (1.0 - lemma_25_neighbour_kernel(sigma, N)) * C / n


def theorem_26_beta_lower(delta: float, sigma: float) -> float:
    """Theorem 26: beta* >= ln((1 - delta)(N - 1) / delta), N = floor((2/sigma) sqrt(2/ln 2)),
    for n > C, eps in (0, C/(4n)), sigma in (0, sqrt(1/(2 ln 2)))."""
    check_delta(delta)
    return math.log((1.0 - delta) * (lemma_25_N(sigma) - 1) / delta)


def fourier_transform_normalisation(d: int, paper: bool = False) -> float:
    """The constant in front of int exp(-j <w, x>) g(x) dx in the definition of the spectral density p.

    The normalised transform (so that p is a probability density and g(D) = E_p cos <w, D>) needs (2 pi)^{-d};
    Algorithm 3 prints 2^{-1} (``paper=True``).
    """
    return 0.5 if paper else (2.0 * math.pi) ** (-d)
