"""Privacy audits of the releases of Hall, Rinaldo and Wasserman (2013): the (epsilon, delta) lower-bound criterion
(:func:`epsilon_delta_lower_bound`), audits of the released KDE and kernel machine on their worst-case neighbouring
pairs (each with a negative control: the same pair with too little noise), and the floating-point release's grid."""

from __future__ import annotations

import math
import warnings
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray
from scipy.linalg import solve_triangular

from dpkernels import lattice
from dpkernels.accounting import gaussian_epsilon
from dpkernels.audit import clopper_pearson
from dpkernels.bounds import hall as HB
from dpkernels.mechanisms.hall import GaussianKernel, PrivateKDE, PrivateKernelMachine, gp_factor, sample_paths

Array = NDArray[np.float64]




# ----------------------------------------------------------------------------------------------
# the (epsilon, delta) audit criterion
# ----------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class DeltaAudit:
    epsilon_lb: float  #: (1 - alpha)-confidence lower bound on epsilon at the given delta (0 when nothing is found)
    threshold: float
    p_hat: float
    q_hat: float
    n_eval: int


def _lb(k1: int, k2: int, n: int, delta: float, alpha: float) -> float:
    p_lo, _ = clopper_pearson(k1, n, alpha)
    _, q_hi = clopper_pearson(k2, n, alpha)
    if p_lo - delta <= 0.0:
        return 0.0
    return max(0.0, math.log((p_lo - delta) / q_hi))


def epsilon_delta_lower_bound(scores_d: Array, scores_dprime: Array, delta: float, alpha: float = 0.05,
                              n_thresholds: int = 400, random_state: object = 0) -> DeltaAudit:
    """A (1 - alpha)-confidence lower bound on epsilon of an (epsilon, delta)-DP claim from samples of a test statistic
    under D and D': P_D(S) <= e^eps P_D'(S) + delta gives eps >= log((P_D(S) - delta) / P_D'(S)).

    Half of each sample picks the region S = {score > t} (or {score <= t} with the roles swapped) maximising the
    bound; the other half evaluates it with Clopper-Pearson intervals at alpha/2 each (as
    :func:`dpkernels.audit.epsilon_lower_bound`, which is the delta = 0 case)."""
    rng = np.random.default_rng(random_state) if not isinstance(random_state, np.random.Generator) else random_state
    a = rng.permutation(np.asarray(scores_d, dtype=np.float64))
    b = rng.permutation(np.asarray(scores_dprime, dtype=np.float64))
    n = min(len(a), len(b))
    if n < 40:
        raise ValueError("need at least 40 samples from each data set")
    half = n // 2
    sa, sb = np.sort(a[:half]), np.sort(b[:half])
    cands = np.unique(np.quantile(np.concatenate([sa, sb]), np.linspace(0.0, 1.0, n_thresholds)))
    best = (-1.0, 0.0, True)
    for t in cands:
        ka = half - int(np.searchsorted(sa, t, side="right"))
        kb = half - int(np.searchsorted(sb, t, side="right"))
        for k1, k2, upper in ((ka, kb, True), (half - kb, half - ka, False)):
            lb = _lb(k1, k2, half, delta, alpha)
            if lb > best[0]:
                best = (lb, float(t), upper)
    _, t, upper = best
    ea, eb = a[half:n], b[half:n]
    m = len(ea)
    k1, k2 = (int(np.sum(ea > t)), int(np.sum(eb > t))) if upper else (int(np.sum(eb <= t)), int(np.sum(ea <= t)))
    return DeltaAudit(_lb(k1, k2, m, delta, alpha), t, k1 / m, k2 / m, m)




# ----------------------------------------------------------------------------------------------
# privacy audit of the released function, and floating point
# ----------------------------------------------------------------------------------------------
def kde_pair_audit(d: int, n: int, sigma: float, epsilon: float, delta: float, n_releases: int,
                   x_old: Sequence[float] | None = None, x_new: Sequence[float] | None = None, noise_factor: float = 1.0,
                   convention: str = "jmlr", calibration: str = "analytic", random_state: int = 0) -> dict[str, float]:
    """Audit of the KDE's release on a neighbouring pair: D has n uniform rows with row 0 at ``x_old`` (default the
    origin), D' replaces it by ``x_new`` (default the far corner).  Releases at the two points {x_old, x_new} (where the
    difference f_D - f_D' concentrates) are drawn from both fitted mechanisms (exact lattice releases), scored by the
    Gaussian log-likelihood ratio, and turned into a lower bound on epsilon at the claimed delta
    (:func:`epsilon_delta_lower_bound`).  ``noise_factor`` < 1 scales the noise down (the negative control).  The
    pair's exact epsilon at delta (the Gaussian privacy curve of its Mahalanobis distance) is returned beside it;
    ``n_releases = 0`` returns the pair's numbers without an audit."""
    rng = np.random.default_rng(random_state)
    X = rng.uniform(size=(n, d))
    X[0] = np.zeros(d) if x_old is None else np.asarray(x_old, dtype=float)
    X2 = X.copy()
    X2[0] = np.ones(d) if x_new is None else np.asarray(x_new, dtype=float)
    P = np.vstack([X[0], X2[0]])
    make = lambda Z: PrivateKDE(epsilon=epsilon, delta=delta, sigma=sigma, convention=convention,  # noqa: E731
                                calibration=calibration, points=P, keep_nonprivate=True, random_state=rng).fit(Z)
    kd, kdp = make(X), make(X2)
    s = kd.noise_multiplier_ * noise_factor
    A = gp_factor(GaussianKernel(sigma, normalised=True), P, kd.jitter_)
    md, mdp = kd.nonprivate_function(P), kdp.nonprivate_function(P)
    wv = solve_triangular(A, md - mdp, lower=True)
    mahal = float(np.linalg.norm(wv))
    w = solve_triangular(A.T, wv, lower=False)  # (A A')^{-1} (m_D - m_D')
    out = {"d": d, "n": n, "sigma": sigma, "epsilon_claimed": epsilon, "delta": delta, "noise_factor": noise_factor,
           "pair_mahalanobis": mahal, "sensitivity_calibrated": kd.sensitivity_, "noise_multiplier": s,
           "pair_epsilon_exact": gaussian_epsilon(s, delta, mahal)}
    if not n_releases:
        return out
    a = sample_paths(md, A, s, n_releases, "lattice", rng)
    b = sample_paths(mdp, A, s, n_releases, "lattice", rng)
    k = a / lattice.grid_for(s)
    on_grid = bool(np.all(k == np.round(k)))
    res = epsilon_delta_lower_bound(a @ w, b @ w, delta, random_state=rng)
    return {**out, "epsilon_lb": res.epsilon_lb, "p_hat": res.p_hat, "q_hat": res.q_hat, "n_releases": int(n_releases),
            "releases_on_grid": on_grid}


def lattice_grid_check(n: int, sigma: float, epsilon: float, delta: float, n_points: int, random_state: int = 0
                       ) -> dict[str, float]:
    """The default release is on its public grid (every value an integer multiple of grid_); the paper's continuous
    sampler is not (its low-order bits carry the data's float mean)."""
    rng = np.random.default_rng(random_state)
    X = HB.bimodal_mixture(1).sample(n, rng)
    P = np.linspace(0, 1, n_points)[:, None]
    lat = PrivateKDE(epsilon=epsilon, delta=delta, sigma=sigma, points=P, random_state=rng).fit(X)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        cont = PrivateKDE(epsilon=epsilon, delta=delta, sigma=sigma, points=P, noise="continuous",
                          random_state=rng).fit(X)
    k = lat.released_values_ / lat.grid_
    kc = cont.released_values_ / lat.grid_
    return {"n_values": n_points, "lattice_on_grid": int(np.sum(k == np.round(k))), "grid": lat.grid_,
            "continuous_on_grid": int(np.sum(kc == np.round(kc)))}




def kernel_machine_pair_audit(n: int, lam: float, sigma: float, epsilon: float, delta: float, n_releases: int,
                              noise_factor: float = 1.0, calibration: str = "analytic", random_state: int = 0
                              ) -> dict[str, float]:
    """Audit of the kernel machine's release (Section 3, Proposition 2.1) on its worst-case neighbouring pair.

    With the hinge loss and lam = 1 every margin |f(x)| <= sup K / (2 lam) stays below 1, so the minimiser is
    f_X = (1 / (2 lam n)) sum_i y_i K(x_i, .); flipping the label of row 0 moves it by (1 / (lam n)) K(x_0, .), whose RKHS
    norm is L kappa / (n lam), the calibrated sensitivity (attained).  The release at the single point x_0 carries the
    whole difference (its Mahalanobis distance is the sensitivity up to the jitter).  Releases are drawn from both fitted
    machines (exact lattice releases at x_0), and :func:`epsilon_delta_lower_bound` turns them into a lower bound on
    epsilon at the claimed delta.  ``noise_factor`` < 1 scales the noise down (the negative control).  Returns the bound
    next to the pair's exact epsilon at delta (Gaussian privacy curve of its Mahalanobis distance)."""
    rng = np.random.default_rng(random_state)
    X = rng.uniform(size=(n, 1))
    y = np.where(X[:, 0] > 0.5, 1.0, -1.0)
    y2 = y.copy()
    y2[0] = -y2[0]
    P = X[:1].copy()

    def make(labels: Array) -> PrivateKernelMachine:
        return PrivateKernelMachine(epsilon=epsilon, delta=delta, alpha=2.0 * lam, sigma=sigma, points=P, calibration=calibration,
                                    keep_nonprivate=True, random_state=rng).fit(X, labels)

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # calibration="hall" warns where Proposition 1.1 fails (stated in the guarantee)
        a, b = make(y), make(y2)
    s = a.noise_multiplier_ * noise_factor
    A = gp_factor(GaussianKernel(sigma), P, a.jitter_)
    ma, mb = a.nonprivate_function(P), b.nonprivate_function(P)
    mahal = float(abs(ma[0] - mb[0]) / A[0, 0])
    sa = sample_paths(ma, A, s, n_releases, "lattice", rng)[:, 0]
    sb = sample_paths(mb, A, s, n_releases, "lattice", rng)[:, 0]
    sign = 1.0 if ma[0] >= mb[0] else -1.0
    res = epsilon_delta_lower_bound(sign * sa, sign * sb, delta, random_state=rng)
    return {"n": n, "lam": lam, "sigma": sigma, "epsilon_claimed": epsilon, "delta": delta, "noise_factor": noise_factor,
            "epsilon_lb": res.epsilon_lb, "p_hat": res.p_hat, "q_hat": res.q_hat, "n_releases": int(n_releases),
            "pair_mahalanobis": mahal, "rkhs_sensitivity": a.rkhs_sensitivity_, "sensitivity_calibrated": a.sensitivity_,
            "pair_epsilon_exact": gaussian_epsilon(s, delta, mahal), "noise_multiplier": s,
            "nonprivate_change": float(abs(ma[0] - mb[0]))}
