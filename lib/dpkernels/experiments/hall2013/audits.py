"""Privacy audits of the releases of Hall, Rinaldo and Wasserman (2013): the (epsilon, delta) lower-bound criterion
(:func:`dpkernels.audit.epsilon_lower_bound` at delta), audits of the released KDE and kernel machine on their worst-case neighbouring
pairs (each with a negative control: the same pair with too little noise), and the floating-point release's grid."""

from __future__ import annotations

import warnings
from collections.abc import Sequence

import numpy as np
from numpy.typing import NDArray
from scipy.linalg import solve_triangular

from dpkernels import lattice
from dpkernels.accounting import gaussian_epsilon
from dpkernels.audit import epsilon_lower_bound
from dpkernels.bounds import hall as HB
from dpkernels.mechanisms.hall import GaussianKernel, PrivateKDE, PrivateKernelMachine, gp_factor, sample_paths

Array = NDArray[np.float64]


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
    (:func:`dpkernels.audit.epsilon_lower_bound` at delta).  ``noise_factor`` < 1 scales the noise down (the negative control).  The
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
    res = epsilon_lower_bound(a @ w, b @ w, n_thresholds=400, random_state=rng, delta=delta)
    return {**out, "epsilon_lb": res.epsilon_lb, "p_hat": res.p_hat, "q_hat": res.q_hat, "n_releases": int(n_releases),
            "releases_on_grid": on_grid}


def lattice_grid_check(n: int, sigma: float, epsilon: float, delta: float, n_points: int, random_state: int = 0
                       ) -> dict[str, float]:
    """The default release is on its public grid (every value an integer multiple of ``grid_``); the paper's continuous
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

    With the hinge loss and lam = 1 every margin ``|f(x)| <= sup K / (2 lam)`` stays below 1, so the minimiser is
    f_X = (1 / (2 lam n)) sum_i y_i K(x_i, .); flipping the label of row 0 moves it by (1 / (lam n)) K(x_0, .), whose RKHS
    norm is L kappa / (n lam), the calibrated sensitivity (attained).  The release at the single point x_0 carries the
    whole difference (its Mahalanobis distance is the sensitivity up to the jitter).  Releases are drawn from both fitted
    machines (exact lattice releases at x_0), and :func:`dpkernels.audit.epsilon_lower_bound` at delta turns them into a lower bound on
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
    res = epsilon_lower_bound(sign * sa, sign * sb, n_thresholds=400, random_state=rng, delta=delta)
    return {"n": n, "lam": lam, "sigma": sigma, "epsilon_claimed": epsilon, "delta": delta, "noise_factor": noise_factor,
            "epsilon_lb": res.epsilon_lb, "p_hat": res.p_hat, "q_hat": res.q_hat, "n_releases": int(n_releases),
            "pair_mahalanobis": mahal, "rkhs_sensitivity": a.rkhs_sensitivity_, "sensitivity_calibrated": a.sensitivity_,
            "pair_epsilon_exact": gaussian_epsilon(s, delta, mahal), "noise_multiplier": s,
            "nonprivate_change": float(abs(ma[0] - mb[0]))}
