"""The statements of Bassily, Mohri and Suresh (2022) against measurements; used by ``notebooks/bassily2022.py``.

The paper has no experiments.  Each function measures one of its claims (or a property of our substitutes) and
returns a :class:`pandas.DataFrame` (or a dict) of measured numbers next to the calculators of
:mod:`dpkernels.bounds.bassily`; :mod:`~dpkernels.experiments.bassily2022.records` turns them into ``checks.csv`` rows.

Synthetic data with a known margin (:func:`margin_data`): x = a y u + sqrt(r^2 - a^2) s with u a random unit vector,
y uniform in {-1, +1} and s uniform on the unit sphere of u's orthogonal complement, so ||x|| = r and y <u, x> = a
for every point: w = u has margin a and R-hat^rho_S(u) = L-hat^rho_S(u) = 0 for rho <= a.  The population error of
any linear classifier w is exact (:func:`population_error`): y <w, x> = a <w, u> + sqrt(r^2 - a^2) ||w_perp|| t with
(t + 1) / 2 ~ Beta((d - 2) / 2, (d - 2) / 2), so no test set (of d = 10^5 columns) is needed.
"""

from __future__ import annotations

import math
import time
import warnings
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd
from joblib import Parallel, delayed
from numpy.typing import NDArray
from scipy import stats

from dpkernels._validation import PrivacyLeakWarning, UnsafeNoiseWarning, UtilityWarning, check_random_state
from dpkernels.bounds import bassily as B
from dpkernels.jl import SparseJL, make_jl
from dpkernels.kernels import RBFKernel
from dpkernels.accounting import gaussian_sigma
from dpkernels.mechanisms.bassily import (
    PrivateKernelMarginClassifier,
    PrivateMarginClassifier,
    calibrate_noisy_gd,
    gradient_sensitivity,
    noisy_projected_gd,
    rho_hinge_loss,
)
from dpkernels.mechanisms.chaudhuri import ObjectivePerturbation, OutputPerturbation
from dpkernels.mechanisms.rubinstein import PrivateSVMFinite
from dpkernels.random_features import rff_paired

Array = NDArray[np.float64]


# ----------------------------------------------------------------------------------------------
# data with a known margin
# ----------------------------------------------------------------------------------------------
@dataclass
class MarginData:
    """Rows of norm r with margin a along the unit vector u (module docstring)."""

    X: Array
    y: Array
    u: Array
    margin: float
    r: float


def margin_data(m: int, d: int, margin: float = 0.3, r: float = 1.0, random_state: object = None) -> MarginData:
    """m points of :class:`MarginData` in R^d (d >= 3), y uniform in {-1, +1}."""
    if d < 3:
        raise ValueError("d must be >= 3")
    if not 0 < margin < r:
        raise ValueError("need 0 < margin < r")
    rng = check_random_state(random_state)
    u = rng.standard_normal(d)
    u /= np.linalg.norm(u)
    y = np.where(rng.integers(0, 2, size=m) == 1, 1.0, -1.0)
    X = rng.standard_normal((m, d))
    b = math.sqrt(r * r - margin * margin)
    step = max(1, (1 << 22) // d)  # row blocks: no m x d temporaries (d = 10^5 columns)
    for s in range(0, m, step):
        blk = X[s:s + step]
        blk -= np.outer(blk @ u, u)
        blk *= (b / np.linalg.norm(blk, axis=1))[:, None]
        blk += np.outer(margin * y[s:s + step], u)
    return MarginData(X, y, u, margin, r)


def population_error(coef: Array, data: MarginData) -> float:
    """P(y <w, x> <= 0) under :func:`margin_data`'s distribution, exactly (module docstring)."""
    w = np.asarray(coef, dtype=np.float64).ravel()
    d = w.shape[0]
    wu = float(w @ data.u)
    wp = math.sqrt(max(float(w @ w) - wu * wu, 0.0))
    b = math.sqrt(data.r**2 - data.margin**2)
    if wp == 0.0:
        return 0.0 if wu > 0 else 1.0
    c = data.margin * wu / (b * wp)  # error iff t <= -c
    a = (d - 2) / 2.0
    return float(stats.beta(a, a).cdf(np.clip((1.0 - c) / 2.0, 0.0, 1.0)))


# ----------------------------------------------------------------------------------------------
# calculators
# ----------------------------------------------------------------------------------------------
def calculator_table() -> pd.DataFrame:
    """Each calculator at a few settings (exact numbers; the notebook prints them in an NBVAL_CHECK_OUTPUT cell)."""
    rows = []
    for m in (1000, 10**5):
        for eps in (0.1, 1.0):
            rows.append({"statement": "Algorithm 2, step 1: k", "setting": f"m={m}, eps={eps:g}, delta=1e-6, beta=0.05",
                         "value": B.algorithm_2_k(eps, 1e-6, m, 0.05)})
    for lr in (1.0, 3.0, 10.0):
        k = B.theorem_3_1_k(lr, 1.0, 1.0, 1000, 0.05)
        rows.append({"statement": "Algorithm 1, step 1: k", "setting": f"Lambda r / rho={lr:g}, m=1000, beta=0.05", "value": k})
        rows.append({"statement": "Algorithm 1, step 4: log10 |C|, |C| <= (1 + 40 Lambda r / rho)^k", "setting": f"Lambda r / rho={lr:g}, k={k}",
                     "value": B.algorithm_1_log10_cover_size(lr, 1.0, 1.0, k)})
    for m in (100, 200, 1000):
        rows.append({"statement": "Algorithm 3, step 2: D = m^2 log(2m/beta)", "setting": f"m={m}, beta=0.05", "value": B.algorithm_3_D(m, 0.05)})
        rows.append({"statement": "Algorithm 3: feature matrix (GB)", "setting": f"m={m}", "value": B.algorithm_3_feature_bytes(m, 0.05) / 1e9})
        rows.append({"statement": "Theorem 4.1 at Algorithm 3's D (= 2 r^2 / m)", "setting": f"m={m}, r=1",
                     "value": B.theorem_4_1_bound(1.0, m, 0.05, B.algorithm_3_D(m, 0.05))})
    for m in (10**3, 10**4, 10**5):
        rows.append({"statement": "Theorem 3.2 / 4.2: O~ term, constant 1", "setting": f"Lambda r / rho=3, eps=1, m={m}",
                     "value": B.theorem_3_2_bound(0.0, 3.0, 1.0, 1.0, 1.0, m)})
    for L in (1, 2, 3):
        rows.append({"statement": "Theorem 5.1: k per layer", "setting": f"L={L}, r=Lambda=1, rho=0.1, m=1e4",
                     "value": B.theorem_5_1_k(1.0, 1.0, L, 0.1, 10**4, 0.05)})
        rows.append({"statement": "Theorem 5.1: bound (COLT22 / seed)", "setting": f"L={L}, N=100, m=1e6, eps=1",
                     "value": f"{B.theorem_5_1_bound(0, 1, 1, L, 100, 0.1, 1, 10**6, 0.05):.4g} / "
                              f"{B.theorem_5_1_bound(0, 1, 1, L, 100, 0.1, 1, 10**6, 0.05, variant='seed'):.4g}"})
    return pd.DataFrame(rows)


# ----------------------------------------------------------------------------------------------
# Theorem 4.1
# ----------------------------------------------------------------------------------------------
def theorem_4_1_experiment(ms: Sequence[int], Ds: Sequence[int], reps: int, beta: float = 0.05, d: int = 5,
                           sigma: float = 1.0, r: float = 1.0, n_jobs: int = 1, random_state: int = 0) -> pd.DataFrame:
    """``max_{i != j} |<psi(x_i), psi(x_j)> - K(x_i, x_j)|`` over ``reps`` draws of the frequencies, for m points uniform in
    the unit ball of R^d and K = r^2 exp(-||x - x'||^2 / (2 sigma^2)); D from ``Ds`` and Algorithm 3's D for each m.
    Also the largest ``| ||psi(x)|| - r |``.  One joblib task per (m, D) (independent seeds)."""
    kern = RBFKernel(sigma)
    points = {}
    for i, m in enumerate(ms):
        rng = np.random.default_rng([random_state, i])
        X = rng.standard_normal((m, d))
        points[m] = X * (rng.uniform(size=m) ** (1 / d) / np.linalg.norm(X, axis=1))[:, None]
    jobs = [(m, D) for m in ms for D in sorted(set(list(Ds) + [B.algorithm_3_D(m, beta)]))]

    def one(j: int, m: int, D: int) -> dict:
        rng = np.random.default_rng([random_state, 1000 + j])
        X = points[m]
        K = r * r * kern(X)
        off = ~np.eye(m, dtype=bool)
        devs, norm_err = np.empty(reps), 0.0
        for t in range(reps):
            psi = r * rff_paired(X, kern.sample_frequencies(D, d, rng))
            devs[t] = float(np.abs(psi @ psi.T - K)[off].max())
            norm_err = max(norm_err, float(np.abs(np.linalg.norm(psi, axis=1) - r).max()))
        bound = B.theorem_4_1_bound(r, m, beta, D)
        return {"m": m, "D": D, "theorem_D": D == B.algorithm_3_D(m, beta), "reps": reps, "bound": bound,
                "bound_hoeffding": B.theorem_4_1_bound_hoeffding(r, m, beta, D), "median_dev": float(np.median(devs)),
                "max_dev": float(devs.max()), "failures": int((devs > bound).sum()), "max_norm_error": norm_err}

    return pd.DataFrame(Parallel(n_jobs=n_jobs)(delayed(one)(j, m, D) for j, (m, D) in enumerate(jobs)))


# ----------------------------------------------------------------------------------------------
# JL transforms
# ----------------------------------------------------------------------------------------------
JL_KINDS = {"rademacher": {}, "gaussian": {}, "sparse (1/3)": {"density": 1.0 / 3.0}, "very sparse (1/sqrt d)": {"density": "auto"},
            "srht": {}}


def _jl(kind: str, k: int, rng: np.random.Generator):
    if kind.startswith("sparse") or kind.startswith("very sparse"):
        return SparseJL(n_components=k, random_state=rng, **JL_KINDS[kind])
    return make_jl(kind, k, rng)


def _jl_inputs(kind: str, n: int, d: int, rng: np.random.Generator) -> Array:
    if kind == "dense":
        X = rng.standard_normal((n, d))
    elif kind == "one-hot":
        X = np.zeros((n, d))
        X[np.arange(n), rng.choice(d, size=n, replace=False)] = 1.0
        # pairs with a known inner product: half the rows share a second coordinate with the next row
        X[1::2] += X[0::2]
    else:
        raise ValueError(kind)
    return X / np.linalg.norm(X, axis=1)[:, None]


def jl_distortion_experiment(ks: Sequence[int], d: int, n_points: int, reps: int, beta: float = 0.05,
                             kinds: Sequence[str] = tuple(JL_KINDS), inputs: Sequence[str] = ("dense", "one-hot"),
                             n_jobs: int = 1, random_state: int = 0) -> pd.DataFrame:
    """For each transform, input type and k: over ``reps`` draws of Phi, the largest relative squared-norm distortion
    ``|(||Phi x||^2 - ||x||^2) / ||x||^2|`` and the largest inner-product error ``|<Phi x, Phi x'> - <x, x'>|`` over the
    ``n_points`` unit vectors, against the dense JL bound :func:`dpkernels.bounds.bassily.jl_norm_distortion`.
    One joblib task per (input, transform) (independent seeds)."""
    vectors = {inp: _jl_inputs(inp, n_points, d, np.random.default_rng([random_state, i])) for i, inp in enumerate(inputs)}

    def one(j: int, inp: str, kind: str) -> list[dict]:
        rng = np.random.default_rng([random_state, 1000 + j])
        X = vectors[inp]
        G = X @ X.T
        iu = np.triu_indices(n_points, 1)
        out = []
        for k in ks:
            norms, ips = np.empty(reps), np.empty(reps)
            for t in range(reps):
                Z = _jl(kind, k, rng).fit(X[:1]).transform(X)
                norms[t] = float(np.abs(np.einsum("ij,ij->i", Z, Z) - 1.0).max())
                ips[t] = float(np.abs((Z @ Z.T - G)[iu]).max())
            bound = B.jl_norm_distortion(k, n_points, beta)
            out.append({"vectors": inp, "projection": kind, "k": k, "reps": reps, "bound": bound,
                        "median_norm_distortion": float(np.median(norms)), "max_norm_distortion": float(norms.max()),
                        "failures": int((norms > bound).sum()), "median_ip_error": float(np.median(ips))})
        return out

    jobs = [(inp, kind) for inp in inputs for kind in kinds]
    parts = Parallel(n_jobs=n_jobs)(delayed(one)(j, inp, kind) for j, (inp, kind) in enumerate(jobs))
    return pd.DataFrame([r for part in parts for r in part])


def jl_timing(d: int, m: int, ks: Sequence[int], random_state: int = 0) -> pd.DataFrame:
    """Wall time of fit + transform of m rows for each transform and k (ONE run, on whatever the machine is doing; the
    benchmark in benchmarks/bench_bassily2022.py repeats it)."""
    rng = np.random.default_rng(random_state)
    X = rng.standard_normal((m, d))
    rows = []
    for kind in ("rademacher", "srht"):
        for k in ks:
            t0 = time.perf_counter()
            make_jl(kind, k, rng).fit(X[:1]).transform(X)
            rows.append({"projection": kind, "d": d, "m": m, "k": k, "seconds": time.perf_counter() - t0})
    return pd.DataFrame(rows)




# ----------------------------------------------------------------------------------------------
# Theorem 3.2 and Theorem 4.2 against measured error
# ----------------------------------------------------------------------------------------------
def _margin_fit(data: MarginData, seed: int, **params) -> PrivateMarginClassifier:
    return PrivateMarginClassifier(data_norm=data.r, random_state=seed, **params).fit(data.X, data.y)


def trial_seeds(random_state: int, m: int, seed: int) -> tuple[int, int]:
    """The data seed and the noise seed of one run of :func:`theorem_3_2_experiment`: two words of the
    :class:`numpy.random.SeedSequence` of (``random_state``, m, seed), below 2**31.  (The old data seed
    random_state + 1000 seed + m gave m = 2,000's seed 6 and m = 8,000's seed 0 the same stream, and the noise seed
    random_state + seed was shared by every m.)"""
    words = np.random.SeedSequence([random_state, m, seed]).generate_state(2) % 2**31
    return int(words[0]), int(words[1])


def theorem_3_2_experiment(ms: Sequence[int], seeds: int | Mapping[int, int], d: int = 1000, margin: float = 0.5,
                           epsilon: float = 1.0, delta: float = 1e-6, beta: float = 0.05, k_constant: float = 1.0,
                           max_iter: int = 200, n_jobs: int = 1, random_state: int = 0) -> pd.DataFrame:
    """Population error of Algorithm 2 (paper's k with ``k_constant``) on :func:`margin_data` with rho = margin, Lambda =
    1, r = 1: min_{B^d(1)} L-hat^rho_S = 0 (w = u), so Theorem 3.2's bound is its O~ term; we evaluate it with constant 1
    and log factor sqrt(log(m / beta)) (our choice) and report the constant that each run would need.

    ``seeds``: runs per m, one number for every m or a mapping m -> runs.  Each run draws its data and its noise from
    its own stream (:class:`numpy.random.SeedSequence` of (``random_state``, m, seed)), so that the runs are
    independent trials of the theorem's failure event: no two runs share a data set or a noise draw."""
    per_m = {int(m): int(seeds[m] if isinstance(seeds, Mapping) else seeds) for m in ms}

    def one(m: int, s: int) -> dict:
        data_seed, fit_seed = trial_seeds(random_state, m, s)
        data = margin_data(m, d, margin, random_state=data_seed)
        est = _margin_fit(data, fit_seed, epsilon=epsilon, delta=delta, rho=margin, weight_bound=1.0, beta=beta,
                          k_constant=k_constant, max_iter=max_iter, keep_nonprivate=True)
        err = population_error(est.coef_, data)
        o_term = B.theorem_3_2_bound(0.0, 1.0, 1.0, margin, epsilon, m)
        st = est.nonprivate_
        L = B.rho_hinge_lipschitz(2.0, margin)
        return {"m": m, "seed": s, "k": est.n_components_, "n_iter": est.n_iter_, "error": err,
                "train_error": float(np.mean(est.predict(data.X) != data.y)),
                # the substitute's excess empirical rho-hinge loss on S_Phi is at most its loss (the minimum is >= 0)
                "hinge_loss_compressed": float(rho_hinge_loss(st.Z, st.y, st.w, margin)[0]),
                "hinge_bound_substitute": B.noisy_gd_excess_risk(2.0, L, st.sigma, est.n_components_, st.n_iter, st.learning_rate),
                "bound": B.theorem_3_2_bound(0.0, 1.0, 1.0, margin, epsilon, m, log_factor=math.sqrt(math.log(m / beta))),
                "implied_constant": err / o_term}

    rows = Parallel(n_jobs=n_jobs)(delayed(one)(m, s) for m in per_m for s in range(per_m[m]))
    return pd.DataFrame(rows)


@dataclass
class KernelMarginData:
    """Points of [-1, 1]^2 with ``|h*(x)| >= tau``, ``y = sign h*(x)``, ``h* = sum_j alpha_j K(c_j, .)`` of RKHS norm Lambda0."""

    X: Array
    y: Array
    tau: float
    Lambda0: float
    sigma: float


def _h_star(X: Array, centers: Array, alpha: Array, kern: RBFKernel) -> Array:
    return kern(X, centers) @ alpha


def kernel_margin_data(m: int, tau: float = 0.3, sigma: float = 0.5, random_state: object = None,
                       n_centers: int = 6) -> KernelMarginData:
    """m points with a known margin tau in the RKHS of exp(-||x - x'||^2 / (2 sigma^2)) (rejection sampling).
    The centres and signs come from ``random_state``'s first draws, so two calls with the same seed share h*."""
    rng = check_random_state(random_state)
    centers = rng.uniform(-1, 1, size=(n_centers, 2))
    alpha = np.where(np.arange(n_centers) % 2 == 0, 1.0, -1.0)
    kern = RBFKernel(sigma)
    lam0 = float(math.sqrt(alpha @ kern(centers) @ alpha))
    out = np.empty((0, 2))
    while len(out) < m:
        cand = rng.uniform(-1, 1, size=(4 * m, 2))
        out = np.vstack([out, cand[np.abs(_h_star(cand, centers, alpha, kern)) >= tau]])
    X = out[:m]
    y = np.sign(_h_star(X, centers, alpha, kern))
    return KernelMarginData(X, y, tau, lam0, sigma)


def theorem_4_2_experiment(m: int, Ds: Sequence[int], seeds: int, n_test: int = 20000, tau: float = 0.3,
                           sigma: float = 0.5, epsilon: float = 1.0, delta: float = 1e-6, beta: float = 0.05,
                           n_components: int | None = None, max_iter: int = 200, n_jobs: int = 1,
                           random_state: int = 0) -> pd.DataFrame:
    """Test error of Algorithm 3 (Gaussian kernel of bandwidth sigma, r = 1, Lambda = ||h*||_H, rho = tau: the minimum
    of the empirical rho-hinge loss over H_Lambda is 0) for several D, against Theorem 4.2's O~ term (constant 1, log
    factor sqrt(log(m / beta)), ours).  Training and test points share h* (one seed); the test error is a Monte Carlo
    mean over n_test fresh points."""
    full = kernel_margin_data(m + n_test, tau, sigma, random_state)
    Xtr, ytr, Xte, yte = full.X[:m], full.y[:m], full.X[m:], full.y[m:]

    def one(D: int, s: int) -> dict:
        est = PrivateKernelMarginClassifier(epsilon=epsilon, delta=delta, rho=tau, weight_bound=full.Lambda0, sigma=sigma,
                                            kernel_norm=1.0, n_frequencies=D, n_components=n_components, beta=beta,
                                            max_iter=max_iter, random_state=random_state + s).fit(Xtr, ytr)
        err = float(np.mean(est.predict(Xte) != yte))
        return {"m": m, "D": D, "seed": s, "k": est.n_components_, "error": err,
                "error_se": math.sqrt(err * (1 - err) / n_test),
                "bound": B.theorem_4_2_bound(0.0, full.Lambda0, 1.0, tau, epsilon, m, log_factor=math.sqrt(math.log(m / beta))),
                "implied_constant": err / B.theorem_4_2_bound(0.0, full.Lambda0, 1.0, tau, epsilon, m),
                "theorem_D": est.n_frequencies_theorem_, "Lambda": full.Lambda0}

    rows = Parallel(n_jobs=n_jobs)(delayed(one)(D, s) for D in Ds for s in range(seeds))
    return pd.DataFrame(rows)


# ----------------------------------------------------------------------------------------------
# the dimension independence claim
# ----------------------------------------------------------------------------------------------
def k_experiment(ks: Sequence[int], m: int, d: int, seeds: int, margin: float = 0.3, epsilon: float = 1.0,
                 delta: float = 1e-6, max_iter: int = 200, n_jobs: int = 1, random_state: int = 0) -> pd.DataFrame:
    """Population error of Algorithm 2 against k (n_components) on :func:`margin_data`, rho = margin: the JL error
    (falls with k) against the DP-ERM noise (grows with k).  ``ks`` may contain None (the paper's k, constant 1)."""

    def one(k: int | None, s: int) -> dict:
        data = margin_data(m, d, margin, random_state=random_state + 7919 * s)
        est = _margin_fit(data, random_state + s, epsilon=epsilon, delta=delta, rho=margin, n_components=k, max_iter=max_iter)
        return {"k_setting": "paper's k" if k is None else str(k), "k": est.n_components_, "seed": s,
                "error": population_error(est.coef_, data)}

    return pd.DataFrame(Parallel(n_jobs=n_jobs)(delayed(one)(k, s) for k in ks for s in range(seeds)))


def make_baselines(output: Sequence[float] = (0.1,), objective: Sequence[float] = (0.1,),
              svm: Sequence[float] = (1.0,), gamma_noise: str = "lattice") -> dict[str, tuple[Callable[..., object], str, tuple[float, ...]]]:
    """The other papers' mechanisms at the same epsilon (pure epsilon-DP, delta = 0; Huber loss h = 0.5 for Chaudhuri
    et al.'s, the hinge for Rubinstein et al.'s, data_norm = 1, no intercept), each with a grid of its regulariser
    (Chaudhuri's Lambda, Rubinstein's C).  Name -> (factory(epsilon, value, seed), parameter name, grid).

    ``gamma_noise``: the sampler of Chaudhuri's Gamma-norm noise.  ``"continuous"`` (the paper's float sampler; it
    warns) is for utility experiments in very high dimension only: the lattice release is the same law rounded to a
    2^-16 grid, but its exact rounding falls back to mpmath for about a minute per release at d = 100,000."""
    return {
        "Chaudhuri output perturbation": (
            lambda eps, v, seed: OutputPerturbation(epsilon=eps, alpha=v, loss="huber", data_norm=1.0, noise=gamma_noise,
                                                    random_state=seed),
            "Lambda", tuple(output)),
        "Chaudhuri objective perturbation": (
            lambda eps, v, seed: ObjectivePerturbation(epsilon=eps, alpha=v, loss="huber", data_norm=1.0, noise=gamma_noise,
                                                       random_state=seed),
            "Lambda", tuple(objective)),
        "Rubinstein PrivateSVM-Finite": (
            lambda eps, v, seed: PrivateSVMFinite(epsilon=eps, alpha=1.0 / v, data_norm=1.0, random_state=seed),
            "C", tuple(svm)),
    }


def _coef(est: object, X: Array) -> Array:
    """The linear release of a baseline, checked against its own predict (so an API change fails loudly)."""
    w = np.asarray(est.coef_, dtype=np.float64).ravel()
    b = float(np.ravel(getattr(est, "intercept_", 0.0))[0])
    if b != 0.0:
        raise ValueError("the baselines are fitted without an intercept")
    pred = est.predict(X[:50])
    mine = np.where(X[:50] @ w > 0, 1, -1)
    ties = X[:50] @ w == 0
    if not np.all((pred == mine) | ties):
        raise ValueError(f"{type(est).__name__}.predict disagrees with sign(X coef_)")
    return w


#: The name of the JL ablation in :func:`dimension_experiment`'s rows.
ABLATION = "ablation: the same noisy GD in R^d (no JL)"


def noisy_gd_without_jl(data: MarginData, epsilon: float, delta: float, rho: float, Lambda: float = 1.0,
                        max_iter: int = 200, random_state: object = None) -> tuple[Array, int]:
    """Algorithm 2 without its JL step: the same DP-ERM (noisy projected subgradient descent on the rho-hinge loss over
    the ball of radius 2 Lambda, features bounded by 2r so L = 2r / rho, T from the same rule with k replaced by d,
    sigma calibrated to (epsilon, delta) for the T composed steps, the same learning-rate rule) run on the original d
    coordinates.  Isolates what the JL map contributes: the noise of DP-ERM grows with the dimension it runs in.
    Returns (w, T)."""
    X, y, r = data.X, data.y, data.r
    m, d = X.shape
    L = B.rho_hinge_lipschitz(2.0 * r, rho)
    sens = gradient_sensitivity(L, m)
    T = B.noisy_gd_iterations(m, d, gaussian_sigma(epsilon, delta, 1.0), max_iter)
    sigma = calibrate_noisy_gd(epsilon, delta, sens, T)
    eta = 2.0 * Lambda / (math.sqrt(L * L + d * sigma * sigma) * math.sqrt(T))
    w = noisy_projected_gd(X, y, rho=rho, radius=2.0 * Lambda, sigma=sigma, n_iter=T, learning_rate=eta,
                           random_state=random_state)[0]
    return w, T


def projected_gd(Z: Array, y: Array, rho: float, radius: float, n_iter: int, learning_rate: float) -> Array:
    """Projected subgradient descent on the rho-hinge loss over B^k(radius) from 0, the average of the iterates: the
    noiseless counterpart of :func:`dpkernels.mechanisms.bassily.noisy_projected_gd` (not private)."""
    w = np.zeros(Z.shape[1])
    avg = np.zeros_like(w)
    for _ in range(int(n_iter)):
        active = y * (Z @ w) < rho
        w = w + learning_rate * (Z[active].T @ y[active]) / (rho * len(y))
        nrm = float(np.linalg.norm(w))
        if nrm > radius:
            w *= radius / nrm
        avg += w
    return avg / int(n_iter)


def epsilon_experiment(epsilons: Sequence[float], m: int, d: int, seeds: int, margin: float = 0.3, delta: float = 1e-6,
                       max_iter: int = 200, n_jobs: int = 1, random_state: int = 0) -> pd.DataFrame:
    """Algorithm 2 (the paper's k) at several epsilon on :func:`margin_data` (rho = margin), next to its noiseless
    counterpart: the same JL map, the same T and learning rate, no noise (:func:`projected_gd`).  Tests "privacy for epsilon > 1 essentially for free" (the min(1, epsilon) of
    Theorem 3.2): the private error beyond epsilon = 1 against the non-private one.  One row per (seed, epsilon)."""

    def one(s: int) -> list[dict]:
        data = margin_data(m, d, margin, random_state=random_state + 7919 * s)
        out = []
        for eps in epsilons:
            est = _margin_fit(data, random_state + s, epsilon=float(eps), delta=delta, rho=margin, max_iter=max_iter,
                              keep_nonprivate=True)
            st = est.nonprivate_
            w0 = projected_gd(st.Z, st.y, st.rho, st.radius, st.n_iter, st.learning_rate)
            out.append({"epsilon": float(eps), "seed": s, "k": est.n_components_, "n_iter": est.n_iter_,
                        "error_private": population_error(est.coef_, data),
                        "error_nonprivate": population_error(st.projection.adjoint(w0), data)})
        return out

    return pd.DataFrame([r for part in Parallel(n_jobs=n_jobs)(delayed(one)(s) for s in range(seeds)) for r in part])


def polynomial_feature_norms(ps: Sequence[int], cs: Sequence[float], r: float = 1.0) -> pd.DataFrame:
    """Section 4's polynomial kernels K_p(x, x') = (<x, x'> + c)^p: the feature map's largest norm over B^d(r) is
    sqrt(K_p(x, x)) = (r^2 + c)^(p/2), against the r^p the paper substitutes for r (equal only when c = 0)."""
    return pd.DataFrame([{"p": int(p), "c": float(c), "r": r, "feature_norm": (r * r + c) ** (p / 2.0), "claimed": r**p}
                         for p in ps for c in cs])


def dimension_experiment(ds: Sequence[int], m: int, seeds: int, margin: float = 0.3, epsilon: float = 1.0,
                         delta: float = 1e-6, k_values: Sequence[int | None] = (None, 100), max_iter: int = 200,
                         baselines: dict | None = None, n_jobs: int = 1, random_state: int = 0) -> pd.DataFrame:
    """Population error against d at fixed m (:func:`margin_data`, rho = margin, Lambda = 1, r = 1) of Algorithm 2 for
    each of ``k_values`` (None: the paper's k), of the JL ablation (:func:`noisy_gd_without_jl`: the same noisy gradient
    descent on the original d coordinates) and of the other papers' mechanisms at the same epsilon (each at every value
    of its grid; the caller takes the best per d).  One row per (d, seed, method, hyperparameter)."""
    baselines = make_baselines() if baselines is None else baselines

    def one(d: int, s: int) -> list[dict]:
        data = margin_data(m, d, margin, random_state=random_state + 104729 * s + d)
        out = []
        t0 = time.perf_counter()
        w, T = noisy_gd_without_jl(data, epsilon, delta, margin, max_iter=max_iter,
                                   random_state=np.random.default_rng([random_state, s, d, 7]))
        out.append({"d": d, "seed": s, "method": ABLATION, "param": "", "value": np.nan, "k": d, "delta": delta,
                    "error": population_error(w, data), "seconds": time.perf_counter() - t0})
        for k in k_values:
            t0 = time.perf_counter()
            est = _margin_fit(data, random_state + s, epsilon=epsilon, delta=delta, rho=margin, n_components=k, max_iter=max_iter)
            out.append({"d": d, "seed": s, "method": "Algorithm 2 (paper's k)" if k is None else f"Algorithm 2 (k = {k})",
                        "param": "", "value": np.nan, "k": est.n_components_, "delta": delta,
                        "error": population_error(est.coef_, data), "seconds": time.perf_counter() - t0})
        for name, (make, pname, grid) in baselines.items():
            for v in grid:
                t0 = time.perf_counter()
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore", PrivacyLeakWarning)
                    warnings.simplefilter("ignore", UnsafeNoiseWarning)  # make_baselines(gamma_noise="continuous")
                    # the other papers' mechanisms are noise-dominated at large d on purpose: that is what the figure shows
                    warnings.simplefilter("ignore", UtilityWarning)
                    est = make(epsilon, v, random_state + s).fit(data.X, data.y)
                out.append({"d": d, "seed": s, "method": name, "param": pname, "value": v, "k": np.nan, "delta": 0.0,
                            "error": population_error(_coef(est, data.X), data), "seconds": time.perf_counter() - t0})
        return out

    jobs = [(d, s) for d in sorted(ds, reverse=True) for s in range(seeds)]  # the large d first (load balance)
    rows = Parallel(n_jobs=n_jobs)(delayed(one)(d, s) for d, s in jobs)
    return pd.DataFrame([r for part in rows for r in part])


