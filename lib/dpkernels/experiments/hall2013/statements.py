"""Experiments for Hall, Rinaldo and Wasserman (2013); used by ``notebooks/hall2013.py``.

Every function returns tables (pandas) or small dicts of measured numbers next to the paper's statements
(:mod:`dpkernels.bounds.hall`); the notebook turns them into ``checks.csv`` rows, tables and figures.  The criteria
that are specific to this paper live here too (:func:`epsilon_delta_lower_bound`, :func:`whitened_covariance_test`),
each unit-tested with a case where it must fail.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd
from joblib import Parallel, delayed
from numpy.typing import NDArray
from scipy import stats
from scipy.linalg import solve_triangular

from dpkernels import lattice
from dpkernels.accounting import gaussian_delta, gaussian_epsilon, gaussian_sigma
from dpkernels.audit import adversarial_neighbour_sensitivity, clopper_pearson, random_neighbour_sensitivity
from dpkernels.bounds import hall as HB
from dpkernels.mechanisms.hall import (
    GaussianKernel,
    GaussianProcessRelease,
    PrivateKDE,
    PrivateKernelMachine,
    gp_factor,
    kernel_expansion,
    loss_lipschitz,
    sample_paths,
    solve_kernel_machine,
)

Array = NDArray[np.float64]

__all__ = [
    "calibration_map",
    "calibration_monte_carlo",
    "epsilon_delta_lower_bound",
    "evaluation_bound_experiment",
    "kde_sensitivity_experiment",
    "kernel_machine_sensitivity_experiment",
    "noise_error_experiment",
    "mise_monte_carlo",
    "mise_curves",
    "bandwidth_exponents",
    "bandwidth_exponent_monte_carlo",
    "privacy_order_experiment",
    "kde_pair_audit",
    "whitened_covariance_test",
    "conditional_sampling_experiment",
    "lattice_grid_check",
    "classification_data",
    "kernel_machine_comparison",
    "adult_kde_data",
    "mercer_basis_check",
    "nystrom_demo",
]


# ----------------------------------------------------------------------------------------------
# Proposition 1.1: where does the calibration hold?
# ----------------------------------------------------------------------------------------------
def calibration_map(epsilons: Sequence[float], deltas: Sequence[float]) -> pd.DataFrame:
    """For every (epsilon, delta): Proposition 1.1's noise multiplier (Delta = 1), the exact delta of that noise at
    epsilon (dp-accounting's privacy curve and our closed form), whether the proposition holds (exact delta <= delta),
    and the analytic calibration's multiplier (how much noise the exact calibration needs instead)."""
    rows = []
    for eps in epsilons:
        for dlt in deltas:
            s = HB.proposition_1_1_sigma(eps, dlt, 1.0)
            exact = gaussian_delta(eps, s, 1.0)
            closed = HB.proposition_1_1_exact_delta(eps, dlt)
            s_an = gaussian_sigma(eps, dlt, 1.0, calibration="analytic")
            rows.append({"epsilon": eps, "delta": dlt, "sigma_hall": s, "exact_delta": exact, "exact_delta_closed": closed,
                         "ratio": exact / dlt, "holds": bool(exact <= dlt), "sigma_analytic": s_an,
                         "noise_ratio": s / s_an})
    return pd.DataFrame(rows)


def calibration_monte_carlo(epsilon: float, delta: float, n_draws: int, random_state: int = 0) -> dict[str, float]:
    """A simulation of Proposition 1.1's mechanism (Delta = 1, v_D = 0, v_D' = 1): draws o ~ N(0, s^2), computes the
    privacy loss L(o) = log p_D(o) / p_D'(o) and estimates delta(epsilon) = E_D (1 - e^{epsilon - L})_+ (the
    Gaussian mechanism's hockey-stick divergence) with its standard error."""
    rng = np.random.default_rng(random_state)
    s = HB.proposition_1_1_sigma(epsilon, delta, 1.0)
    o = s * rng.standard_normal(int(n_draws))
    loss = ((o - 1.0) ** 2 - o**2) / (2 * s * s)
    terms = np.maximum(0.0, -np.expm1(epsilon - loss))
    est, se = float(terms.mean()), float(terms.std(ddof=1) / math.sqrt(len(terms)))
    return {"epsilon": epsilon, "delta": delta, "sigma": s, "delta_mc": est, "se": se, "delta_exact": gaussian_delta(epsilon, s, 1.0),
            "n_draws": int(n_draws), "z_vs_claim": (est - delta) / se if se > 0 else math.inf}


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
# Proposition 2.1's ingredient: ||M^{-1/2} f(x_1..n)|| <= ||f||_H (journal version)
# ----------------------------------------------------------------------------------------------
def evaluation_bound_experiment(n_trials: int, random_state: int = 0) -> pd.DataFrame:
    """Random f = sum_j a_j K(z_j, .) (RKHS norm exact: sqrt(a' K_zz a)) evaluated at random points x_1..m (with a
    jitter-free Gram matrix M of well-separated points); returns the ratio ||M^{-1/2} f(x)|| / ||f||_H per trial.
    Points that include the centres give ratio 1 (the bound is attained)."""
    rng = np.random.default_rng(random_state)
    rows = []
    for t in range(int(n_trials)):
        d = int(rng.integers(1, 4))
        sigma = float(rng.choice([0.2, 0.5, 1.0]))
        kern = GaussianKernel(sigma)
        z = rng.uniform(size=(int(rng.integers(1, 6)), d))
        a = rng.standard_normal(z.shape[0])
        norm = math.sqrt(float(a @ kern(z, z) @ a))
        include = t % 4 == 0
        x = np.vstack([z, rng.uniform(size=(3, d))]) if include else rng.uniform(size=(int(rng.integers(1, 8)), d))
        M = kern(x, x)
        if np.linalg.eigvalsh(M).min() < 1e-8:
            continue
        v = kern(x, z) @ a
        rows.append({"trial": t, "d": d, "sigma": sigma, "m": len(x), "includes_centres": include,
                     "lhs": HB.jmlr_mahalanobis_of_evaluations(v, M), "rkhs_norm": norm})
    df = pd.DataFrame(rows)
    df["ratio"] = df["lhs"] / df["rkhs_norm"]
    return df


# ----------------------------------------------------------------------------------------------
# RKHS sensitivities measured over random and adversarial neighbours
# ----------------------------------------------------------------------------------------------
def _unit_box(d: int) -> Callable[[np.random.Generator], Array]:
    return lambda rng: rng.uniform(size=d)


def _kde_distance(X: Array, kern: GaussianKernel) -> Callable[[Array, Array], Array]:
    """fit(X', y') = [||f_X - f_X'||_H] (exact: (1/n) sqrt(q' G q) over the rows that differ), so that the audit's
    searches, which measure ||fit(D) - fit(D')||, measure the RKHS distance to the base data set X."""
    n = X.shape[0]

    def fit(X2: Array, _y: Array) -> Array:
        diff = np.flatnonzero(np.any(X2 != X, axis=1))
        if diff.size == 0:
            return np.zeros(1)
        pts = np.vstack([X[diff], X2[diff]])
        q = np.concatenate([np.ones(diff.size), -np.ones(diff.size)]) / n
        return np.array([math.sqrt(max(float(q @ kern(pts, pts) @ q), 0.0))])

    return fit


def kde_sensitivity_experiment(settings: Sequence[tuple[int, float]], n: int, n_random: int, n_adv: int, maxiter: int,
                               random_state: int = 0, n_jobs: int = 1) -> pd.DataFrame:
    """For each (d, sigma): the largest ||f_X - f_X'||_H over random and adversarially searched neighbours of a
    uniform data set of n rows in [0, 1]^d, against the seed's and the journal's bounds and our exact sup."""
    rows = []
    for d, sigma in settings:
        rng = np.random.default_rng([random_state, d, int(sigma * 1e6)])
        X = rng.uniform(size=(n, d))
        y = np.ones(n)
        kern = GaussianKernel(sigma, normalised=True)
        fit = _kde_distance(X, kern)
        w0 = np.zeros(1)
        rnd = random_neighbour_sensitivity(fit, X, y, _unit_box(d), n_neighbours=n_random, labels=(1.0,),
                                           random_state=rng, n_jobs=n_jobs, w_d=w0)
        adv = adversarial_neighbour_sensitivity(fit, X, y, _unit_box(d), lambda x: np.clip(x, 0.0, 1.0), n_random=n_adv,
                                                n_refine=4, maxiter=maxiter, labels=(1.0,), random_state=rng,
                                                n_jobs=n_jobs, w_d=w0)
        best = max(rnd.l2, adv.l2)
        row = {"d": d, "sigma": sigma, "n": n, "random": rnd.l2, "adversarial": adv.l2, "measured": best,
               "bound_seed": HB.kde_sensitivity_seed(n, sigma, d), "bound_jmlr": HB.kde_sensitivity_jmlr(n, sigma, d),
               "sup_exact": HB.kde_sensitivity_exact(n, sigma, d), "evaluated": rnd.n_evaluated + adv.n_evaluated,
               "x_old": X[adv.index].round(4).tolist(), "x_new": np.asarray(adv.x_replacement).round(4).tolist()}
        rows.append(row)
    df = pd.DataFrame(rows)
    for b in ("bound_seed", "bound_jmlr", "sup_exact"):
        df[f"ratio_{b.split('_')[1]}"] = df["measured"] / df[b]
    return df


def _machine_distance(X: Array, y: Array, kern: GaussianKernel, loss: str, lam: float, tol: float
                      ) -> tuple[Callable[[Array, Array], Array], list[float]]:
    """fit(X', y') = [||f_X - f_X'||_H] for the certified kernel-machine minimisers (exact through the Gram matrix of
    X and X'); the certified distances of the solves are collected (they bound the measurement's error)."""
    base = solve_kernel_machine(kern(X, X), y, loss, lam, distance_tol=tol)
    certs: list[float] = [base.distance_bound]

    def fit(X2: Array, y2: Array) -> Array:
        if np.array_equal(X2, X) and np.array_equal(y2, y):
            return np.zeros(1)
        sol = solve_kernel_machine(kern(X2, X2), y2, loss, lam, distance_tol=tol)
        certs.append(sol.distance_bound)
        pts = np.vstack([X, X2])
        q = np.concatenate([base.coef, -sol.coef])
        return np.array([math.sqrt(max(float(q @ kern(pts, pts) @ q), 0.0))])

    return fit, certs


def kernel_machine_sensitivity_experiment(settings: Sequence[tuple[str, float, float]], n: int, d: int, n_random: int,
                                          n_adv: int, maxiter: int, random_state: int = 0, n_jobs: int = 1,
                                          regulariser: str = "lam") -> pd.DataFrame:
    """For each (loss, lam, sigma): the largest ||f_D - f_D'||_H of the certified minimisers over random and
    adversarially searched neighbours (point and label) of n rows in [0, 1]^d, against L kappa / (n lam).

    ``regulariser="lam/2"`` solves with (lam/2)||f||^2 instead (our lam' = lam / 2) and compares with the same
    L kappa / (n lam): the seed's constant is then exceeded (its argument needs lam ||f||^2, without 1/2)."""
    rows = []
    for loss, lam, sigma in settings:
        rng = np.random.default_rng([random_state, int(lam * 1e6), int(sigma * 1e3)])
        X = rng.uniform(size=(n, d))
        y = np.where(X[:, 0] + 0.2 * rng.standard_normal(n) > 0.5, 1.0, -1.0)
        kern = GaussianKernel(sigma)
        solve_lam = lam if regulariser == "lam" else lam / 2.0
        L = loss_lipschitz(loss, 1.0, lam)
        bound = HB.kernel_machine_sensitivity(L, 1.0, n, lam)
        fit, certs = _machine_distance(X, y, kern, loss, solve_lam, 1e-6 * bound)
        w0 = np.zeros(1)
        rnd = random_neighbour_sensitivity(fit, X, y, _unit_box(d), n_neighbours=n_random, random_state=rng, w_d=w0)
        adv = adversarial_neighbour_sensitivity(fit, X, y, _unit_box(d), lambda x: np.clip(x, 0.0, 1.0), n_random=n_adv,
                                                n_refine=3, maxiter=maxiter, random_state=rng, w_d=w0)
        best = max(rnd.l2, adv.l2)
        rows.append({"loss": loss, "lam": lam, "sigma": sigma, "regulariser": regulariser, "n": n, "d": d, "L": L,
                     "random": rnd.l2, "adversarial": adv.l2, "measured": best, "bound": bound,
                     "bound_half_regulariser": HB.kernel_machine_sensitivity_half_regulariser(L, 1.0, n, lam),
                     "ratio": best / bound, "max_certified_error": 2.0 * max(certs),
                     "evaluated": rnd.n_evaluated + adv.n_evaluated})
    return pd.DataFrame(rows)


# ----------------------------------------------------------------------------------------------
# the mean L2 error of the noise, and the KDE's MISE
# ----------------------------------------------------------------------------------------------
def noise_error_experiment(n: int, sigma: float, d: int, epsilon: float, delta: float, n_points: int, n_draws: int,
                           conventions: Sequence[str] = ("seed", "jmlr"), calibrations: Sequence[str] = ("hall", "analytic"),
                           random_state: int = 0) -> pd.DataFrame:
    """Monte Carlo of E int_T (f~ - f_X)^2: ``n_draws`` independent lattice releases of the fitted KDE at ``n_points``
    uniform points of T (the mean over points estimates the integral), against lambda(T) c sup K with the c actually
    used (``noise_multiplier_`` squared; for the "hall" calibration c is Proposition 1.1's c at ``sensitivity_``)."""
    rng = np.random.default_rng(random_state)
    X = HB.bimodal_mixture(d).sample(n, rng)
    P = rng.uniform(size=(n_points, d))
    rows = []
    for conv in conventions:
        for cal in calibrations:
            kde = PrivateKDE(epsilon=epsilon, delta=delta, bandwidth=sigma, convention=conv, calibration=cal, points=P,
                             keep_nonprivate=True, random_state=rng).fit(X)
            rel = kde.sample_releases(P, n_draws, random_state=rng)
            sq = np.mean((rel - kde.nonprivate_function(P)) ** 2, axis=1)
            k0 = HB.gaussian_kernel_sup(sigma, d)
            formula = (HB.mean_l2_noise_error(epsilon, delta, kde.sensitivity_, k0) if cal == "hall"
                       else HB.mean_l2_noise_error_exact(kde.noise_multiplier_, k0))
            rows.append({"convention": conv, "calibration": cal, "n": n, "sigma": sigma, "d": d, "measured": sq.mean(),
                         "se": sq.std(ddof=1) / math.sqrt(len(sq)), "formula": formula, "n_draws": len(sq),
                         "noise_multiplier": kde.noise_multiplier_, "jitter": kde.jitter_})
    df = pd.DataFrame(rows)
    df["z"] = (df["measured"] - df["formula"]) / df["se"]
    return df


def _noise_sd(n: int, sigma: float, d: int, epsilon: float, delta: float, convention: str, calibration: str) -> float:
    return gaussian_sigma(epsilon, delta, HB.kde_sensitivity(n, sigma, d, convention), calibration=calibration)


def mise_monte_carlo(configs: Sequence[tuple[int, int, float]], epsilon: float, delta: float, n_points: int, n_runs: int,
                     convention: str = "jmlr", calibration: str = "analytic", random_state: int = 0,
                     n_jobs: int = 1) -> pd.DataFrame:
    """For each (d, n, sigma): the MISE of the released KDE on T split into sampling (f^ - f) and privacy (f~ - f^)
    parts, each the average over ``n_runs`` runs (fresh data, fresh uniform evaluation points, fresh noise), next to
    the exact risk (:func:`dpkernels.bounds.hall.kde_risk` with the noise multiplier actually used)."""
    def one(d: int, n: int, sigma: float, run: int) -> dict[str, float]:
        rng = np.random.default_rng([random_state, d, n, int(sigma * 1e6), run])
        mix = HB.bimodal_mixture(d)
        X = mix.sample(n, rng)
        P = rng.uniform(size=(n_points, d))
        kde = PrivateKDE(epsilon=epsilon, delta=delta, bandwidth=sigma, convention=convention, calibration=calibration,
                         points=P, keep_nonprivate=True, random_state=rng).fit(X)
        fhat = kde.nonprivate_function(P)
        f = mix.pdf(P)
        return {"d": d, "n": n, "sigma": sigma, "run": run, "sampling": float(np.mean((fhat - f) ** 2)),
                "privacy": float(np.mean((kde.released_values_ - fhat) ** 2)),
                "total": float(np.mean((kde.released_values_ - f) ** 2)), "noise_multiplier": kde.noise_multiplier_}

    raw = pd.DataFrame(Parallel(n_jobs=n_jobs)(delayed(one)(d, n, s, r) for d, n, s in configs for r in range(int(n_runs))))
    rows = []
    for (d, n, sigma), g in raw.groupby(["d", "n", "sigma"], sort=False):
        risk = HB.kde_risk(HB.bimodal_mixture(int(d)), int(n), float(sigma), float(g["noise_multiplier"].iloc[0]))
        for part, exact in (("sampling", risk.sampling), ("privacy", risk.privacy), ("total", risk.total)):
            v = g[part].to_numpy()
            se = float(v.std(ddof=1) / math.sqrt(len(v)))
            rows.append({"d": int(d), "n": int(n), "sigma": float(sigma), "part": part, "measured": float(v.mean()),
                         "se": se, "sd": float(v.std(ddof=1)), "n_runs": len(v), "exact": exact,
                         "z": (float(v.mean()) - exact) / se if se > 0 else 0.0})
    return pd.DataFrame(rows)


def mise_curves(d: int, ns: Sequence[float], epsilon: float, delta: float, convention: str = "jmlr",
                calibration: str = "analytic", sigma: float | None = None) -> pd.DataFrame:
    """The exact risk's parts against n: at a fixed ``sigma``, or (None) at the private MISE's optimal bandwidth."""
    mix = HB.bimodal_mixture(d)
    rows = []
    for n in ns:
        n = int(n)
        sd_of = lambda s, n=n: _noise_sd(n, s, d, epsilon, delta, convention, calibration)  # noqa: E731
        s = HB.optimal_bandwidth(mix, n, sd_of) if sigma is None else sigma
        r = HB.kde_risk(mix, n, s, sd_of(s))
        rows.append({"d": d, "n": n, "sigma": s, "bias_sq": r.bias_sq, "variance": r.variance, "sampling": r.sampling,
                     "privacy": r.privacy, "total": r.total})
    return pd.DataFrame(rows)


def bandwidth_exponents(ds: Sequence[int], ns: Sequence[float], epsilon: float, delta: float, convention: str = "jmlr",
                        calibration: str = "analytic", top_decades: float = 2.0) -> pd.DataFrame:
    """The optimal bandwidth of the exact MISE, without and with the privacy part, over a wide range of n: the fitted
    exponent over the whole range and over the top ``top_decades`` decades (the asymptotic regime), next to the
    claimed -1/(1 + 4d) and to -1/(d + 4); also the exponent of the minimised MISE and of privacy/sampling there."""
    rows = []
    ns = np.asarray(ns, dtype=float)
    top = ns >= ns.max() / 10**top_decades
    for d in ds:
        mix = HB.bimodal_mixture(d)
        for private in (False, True):
            sig, tot, ratio = [], [], []
            for n in ns:
                sd_of = (lambda s, n=int(n): _noise_sd(n, s, d, epsilon, delta, convention, calibration)) if private else None
                s = HB.optimal_bandwidth(mix, int(n), sd_of)
                r = HB.kde_risk(mix, int(n), s, sd_of(s) if private else 0.0)
                sig.append(s)
                tot.append(r.total)
                ratio.append(r.privacy / r.sampling if private else np.nan)
            sig, tot = np.asarray(sig), np.asarray(tot)
            row = {"d": d, "private": private, "n_min": ns.min(), "n_max": ns.max(),
                   "exponent_all": float(np.polyfit(np.log(ns), np.log(sig), 1)[0]),
                   "exponent_top": float(np.polyfit(np.log(ns[top]), np.log(sig[top]), 1)[0]),
                   "claimed": HB.claimed_optimal_bandwidth_exponent(d), "standard": HB.optimal_bandwidth_exponent(d),
                   "mise_exponent_top": float(np.polyfit(np.log(ns[top]), np.log(tot[top]), 1)[0]),
                   "mise_claimed": HB.optimal_mise_exponent(d)}
            if private:
                rr = np.asarray(ratio)
                row["privacy_over_sampling_exponent_top"] = float(np.polyfit(np.log(ns[top]), np.log(rr[top]), 1)[0])
                row["privacy_over_sampling_claimed"] = HB.privacy_to_sampling_exponent(d)
                cross = ns[rr <= 1.0]
                row["n_privacy_below_sampling"] = float(cross.min()) if cross.size else math.inf
            rows.append(row)
    return pd.DataFrame(rows)


def bandwidth_exponent_monte_carlo(d: int, ns: Sequence[int], sigmas: Sequence[float], n_points: int, n_runs: int,
                                   random_state: int = 0, n_jobs: int = 1) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The sampling MISE (no noise) of the KDE by Monte Carlo on a grid of bandwidths (common random numbers: the same
    data and evaluation points for every bandwidth), its minimiser per n (a parabola through the three grid points
    around the smallest mean, in log sigma) and the fitted exponent of the minimiser against n.  Returns (per-sigma
    table, per-n table); the exponent's standard error comes from a bootstrap over runs."""
    mix = HB.bimodal_mixture(d)
    sig = np.asarray(sigmas, dtype=float)

    def one(n: int, run: int) -> Array:
        rng = np.random.default_rng([random_state, d, n, run])
        X = mix.sample(n, rng)
        P = rng.uniform(size=(n_points, d))
        f = mix.pdf(P)
        out = np.empty(len(sig))
        for k, s in enumerate(sig):
            fhat = kernel_expansion(GaussianKernel(s, normalised=True), P, X, 1.0 / n)
            out[k] = np.mean((fhat - f) ** 2)
        return out

    res = Parallel(n_jobs=n_jobs)(delayed(one)(int(n), r) for n in ns for r in range(int(n_runs)))
    cube = np.asarray(res).reshape(len(ns), int(n_runs), len(sig))

    def argmin(curve: Array) -> float:
        k = int(np.clip(np.argmin(curve), 1, len(sig) - 2))
        x, yv = np.log(sig[k - 1:k + 2]), curve[k - 1:k + 2]
        a, b, _ = np.polyfit(x, yv, 2)
        return float(math.exp(-b / (2 * a))) if a > 0 else float(sig[int(np.argmin(curve))])

    per_sigma = pd.DataFrame([{"d": d, "n": int(n), "sigma": float(s), "mise": float(cube[i, :, k].mean()),
                               "se": float(cube[i, :, k].std(ddof=1) / math.sqrt(n_runs)),
                               "exact": HB.kde_risk(mix, int(n), float(s)).sampling}
                              for i, n in enumerate(ns) for k, s in enumerate(sig)])
    best = np.array([argmin(cube[i].mean(axis=0)) for i in range(len(ns))])
    rng = np.random.default_rng([random_state, 99])
    boots = []
    for _ in range(200):
        idx = rng.integers(0, n_runs, size=n_runs)
        b = [argmin(cube[i, idx].mean(axis=0)) for i in range(len(ns))]
        boots.append(np.polyfit(np.log(ns), np.log(b), 1)[0])
    exact = [HB.optimal_bandwidth(mix, int(n)) for n in ns]
    per_n = pd.DataFrame({"d": d, "n": list(ns), "sigma_opt_mc": best, "sigma_opt_exact": exact,
                          "sigma_claimed_shape": HB.claimed_optimal_bandwidth(ns, d)})
    per_n.attrs["exponent"] = float(np.polyfit(np.log(ns), np.log(best), 1)[0])
    per_n.attrs["exponent_se"] = float(np.std(boots, ddof=1))
    per_n.attrs["n_runs"] = int(n_runs)
    return per_sigma, per_n


def privacy_order_experiment(d: int, ns: Sequence[int], sigmas: Sequence[float], epsilon: float, delta: float,
                             n_points: int, n_draws: int, convention: str = "seed", calibration: str = "hall",
                             random_state: int = 0) -> tuple[pd.DataFrame, dict[str, float]]:
    """Monte Carlo of the privacy error E int_T (f~ - f^)^2 over n (sigma fixed at ``sigmas[0]``) and over sigma (n fixed
    at ``ns[0]``), through the release's own noise (lattice releases at uniform points); the fitted log-log slopes
    against the seed's order n^-2 sigma^-2d."""
    rng = np.random.default_rng(random_state)
    mix = HB.bimodal_mixture(d)
    rows = []
    grid = [(int(n), float(sigmas[0])) for n in ns] + [(int(ns[0]), float(s)) for s in sigmas[1:]]
    P = rng.uniform(size=(n_points, d))
    for n, s in grid:
        X = mix.sample(n, rng)
        kde = PrivateKDE(epsilon=epsilon, delta=delta, bandwidth=s, convention=convention, calibration=calibration,
                         points=P, keep_nonprivate=True, random_state=rng).fit(X)
        v = np.mean((kde.sample_releases(P, n_draws, random_state=rng) - kde.nonprivate_function(P)) ** 2, axis=1)
        rows.append({"n": n, "sigma": s, "privacy_error": v.mean(), "se": v.std(ddof=1) / math.sqrt(len(v)),
                     "n_draws": len(v), "formula": HB.kde_privacy_error(n, s, d, epsilon, delta, convention,
                                                                          noise_sd=kde.noise_multiplier_)})
    df = pd.DataFrame(rows)
    by_n = df[df["sigma"] == float(sigmas[0])]
    by_s = df[df["n"] == int(ns[0])]
    sn, sn_se = _slope_with_se(by_n["n"], by_n["privacy_error"], by_n["se"])
    ss, ss_se = _slope_with_se(by_s["sigma"], by_s["privacy_error"], by_s["se"])
    slopes = {"slope_n": sn, "slope_n_se": sn_se, "slope_sigma": ss, "slope_sigma_se": ss_se,
              "claimed_n": -2.0, "claimed_sigma": -2.0 * d}
    return df, slopes


def _slope_with_se(x: Sequence[float], y: Sequence[float], se: Sequence[float]) -> tuple[float, float]:
    """Least-squares slope of log y on log x and its standard error from the standard errors of y (delta method:
    var log y_i = (se_i / y_i)^2; independent points)."""
    lx, ly = np.log(np.asarray(x, float)), np.log(np.asarray(y, float))
    v = (np.asarray(se, float) / np.asarray(y, float)) ** 2
    c = lx - lx.mean()
    slope = float(np.sum(c * (ly - ly.mean())) / np.sum(c * c))
    return slope, float(math.sqrt(np.sum(c * c * v)) / np.sum(c * c))


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
    pair's exact epsilon at delta (the Gaussian privacy curve of its Mahalanobis distance) is returned beside it."""
    rng = np.random.default_rng(random_state)
    X = rng.uniform(size=(n, d))
    X[0] = np.zeros(d) if x_old is None else np.asarray(x_old, dtype=float)
    X2 = X.copy()
    X2[0] = np.ones(d) if x_new is None else np.asarray(x_new, dtype=float)
    P = np.vstack([X[0], X2[0]])
    make = lambda Z: PrivateKDE(epsilon=epsilon, delta=delta, bandwidth=sigma, convention=convention,  # noqa: E731
                                calibration=calibration, points=P, keep_nonprivate=True, random_state=rng).fit(Z)
    kd, kdp = make(X), make(X2)
    s = kd.noise_multiplier_ * noise_factor
    A = gp_factor(GaussianKernel(sigma, normalised=True), P, kd.jitter_)
    md, mdp = kd.nonprivate_function(P), kdp.nonprivate_function(P)
    wv = solve_triangular(A, md - mdp, lower=True)
    mahal = float(np.linalg.norm(wv))
    w = solve_triangular(A.T, wv, lower=False)  # (A A')^{-1} (m_D - m_D')
    a = sample_paths(md, A, s, n_releases, "lattice", rng)
    b = sample_paths(mdp, A, s, n_releases, "lattice", rng)
    k = a / lattice.grid_for(s)
    on_grid = bool(np.all(k == np.round(k)))
    res = epsilon_delta_lower_bound(a @ w, b @ w, delta, random_state=rng)
    return {"d": d, "n": n, "sigma": sigma, "epsilon_claimed": epsilon, "delta": delta, "noise_factor": noise_factor,
            "epsilon_lb": res.epsilon_lb, "p_hat": res.p_hat, "q_hat": res.q_hat, "n_releases": int(n_releases),
            "pair_mahalanobis": mahal, "sensitivity_calibrated": kd.sensitivity_,
            "pair_epsilon_exact": gaussian_epsilon(s, delta, mahal), "noise_multiplier": s,
            "releases_on_grid": on_grid}


def lattice_grid_check(n: int, sigma: float, epsilon: float, delta: float, n_points: int, random_state: int = 0
                       ) -> dict[str, float]:
    """The default release is on its public grid (every value an integer multiple of grid_); the paper's continuous
    sampler is not (its low-order bits carry the data's float mean)."""
    rng = np.random.default_rng(random_state)
    X = HB.bimodal_mixture(1).sample(n, rng)
    P = np.linspace(0, 1, n_points)[:, None]
    lat = PrivateKDE(epsilon=epsilon, delta=delta, bandwidth=sigma, points=P, random_state=rng).fit(X)
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        cont = PrivateKDE(epsilon=epsilon, delta=delta, bandwidth=sigma, points=P, noise="continuous",
                          random_state=rng).fit(X)
    k = lat.released_values_ / lat.grid_
    kc = cont.released_values_ / lat.grid_
    return {"n_values": n_points, "lattice_on_grid": int(np.sum(k == np.round(k))), "grid": lat.grid_,
            "continuous_on_grid": int(np.sum(kc == np.round(kc)))}


# ----------------------------------------------------------------------------------------------
# the conditional-sampling consistency of the released function
# ----------------------------------------------------------------------------------------------
def whitened_covariance_test(Z: Array) -> dict[str, float]:
    """Rows of Z should be i.i.d. N(0, I_m).  Returns the largest |mean| and |Cov - I| entry in units of their standard
    errors, and the p-value of the chi-square test of sum_i ||z_i||^2 ~ chi^2(R m) together with a Bartlett-type
    test of the covariance (Box's M for one group against I: -2 log LR ~ chi^2(m (m + 1) / 2))."""
    R, m = Z.shape
    mean = Z.mean(axis=0)
    C = (Z.T @ Z) / R
    se_off = 1.0 / math.sqrt(R)
    se_diag = math.sqrt(2.0 / R)
    off = np.abs(C - np.eye(m))
    zmax = max(float(np.max(np.abs(mean)) * math.sqrt(R)),
               float(np.max(off[~np.eye(m, dtype=bool)]) / se_off) if m > 1 else 0.0,
               float(np.max(np.diag(off)) / se_diag))
    sign, logdet = np.linalg.slogdet(C)
    lr = R * (np.trace(C) - logdet - m) if sign > 0 else math.inf
    p_cov = float(stats.chi2.sf(lr, m * (m + 1) / 2))
    return {"z_max": zmax, "p_covariance": p_cov, "R": R, "m": m}


def conditional_sampling_experiment(n_paths: int, sigma: float = 0.1, n: int = 50, random_state: int = 0
                                    ) -> dict[str, object]:
    """The released function queried adaptively in three batches (the later ones overlapping and permuted) must
    reproduce one draw of N(f_X, s^2 (K + tau I)) at the union of the points.  Over ``n_paths`` seeds: whiten the
    released vectors with the joint Cholesky factor and test for N(0, I) (:func:`whitened_covariance_test`).  The
    negative control draws each batch independently (what a release with fresh noise per call would do), which the
    same test must reject.  Also returns whether repeated and permuted queries return identical values (all seeds)."""
    rng = np.random.default_rng(random_state)
    X = HB.bimodal_mixture(1).sample(n, rng)
    b1 = np.array([[0.1], [0.4], [0.45]])
    b2 = np.array([[0.45], [0.5], [0.9], [0.1]])
    b3 = np.array([[0.47], [0.2], [0.9]])
    union = np.array([[0.1], [0.4], [0.45], [0.5], [0.9], [0.47], [0.2]])
    kern = GaussianKernel(sigma, normalised=True)
    ref = PrivateKDE(epsilon=1.0, delta=1e-5, bandwidth=sigma, points=np.empty((0, 1)), curator=True,
                     keep_nonprivate=True, random_state=0).fit(X)
    s, tau = ref.noise_multiplier_, ref.jitter_
    mean = ref.nonprivate_function(union)
    A = gp_factor(kern, union, tau)
    good, naive = [], []
    consistent = True
    for r in range(int(n_paths)):
        kde = PrivateKDE(epsilon=1.0, delta=1e-5, bandwidth=sigma, points=np.empty((0, 1)), curator=True,
                         random_state=np.random.default_rng([random_state, r])).fit(X)
        v1 = kde.density(b1)
        v2 = kde.density(b2)
        v3 = kde.density(b3)
        again = kde.density(union[::-1])[::-1]
        vals = {tuple(p): v for p, v in zip(np.vstack([b1, b2, b3]), np.concatenate([v1, v2, v3]))}
        consistent &= all(vals[tuple(p)] == v for p, v in zip(union, again))
        consistent &= bool(v2[0] == v1[2] and v2[3] == v1[0] and v3[2] == v2[2])
        good.append(solve_triangular(A, again - mean, lower=True) / s)
        # negative control: a fresh, independent draw for every call
        fresh = [GaussianProcessRelease(lambda Q: kernel_expansion(kern, Q, X, 1.0 / n), kern, 1, s, tau=tau,
                                        max_points=16, random_state=np.random.default_rng([random_state, r, k]))
                 for k in range(3)]
        w1, w2, w3 = fresh[0].evaluate(b1), fresh[1].evaluate(b2), fresh[2].evaluate(b3)
        dv = {}
        for p, v in zip(np.vstack([b3, b2, b1]), np.concatenate([w3, w2, w1])):
            dv[tuple(p)] = v  # later batches' duplicates overwritten by earlier ones
        naive.append(solve_triangular(A, np.array([dv[tuple(p)] for p in union]) - mean, lower=True) / s)
    return {"released": whitened_covariance_test(np.asarray(good)), "independent_per_call": whitened_covariance_test(np.asarray(naive)),
            "repeated_and_permuted_identical": bool(consistent), "n_paths": int(n_paths), "points": len(union)}


# ----------------------------------------------------------------------------------------------
# the kernel machine against Rubinstein's PrivateSVM and Chaudhuri's PrivateKernelERM
# ----------------------------------------------------------------------------------------------
def classification_data(name: str, n_train: int, n_test: int, random_state: int) -> tuple[Array, Array, Array, Array]:
    """A binary task on public-scaled features: ``"satimage"`` (Park's data set: 36 pixel values divided by their
    public range 255; class "red soil" (label 1) against the rest) or ``"adult"`` (Chaudhuri et al.'s preprocessing:
    one-hot categoricals, rows of norm <= 1).  A seeded subsample of n_train + n_test rows."""
    from dpkernels.datasets import load

    if name == "satimage":
        data = load("satimage")
        X = data.X / 255.0
        y = np.where(data.y == 0, 1, -1)
    elif name == "adult":
        data = load("adult")
        X, y = data.X, data.y
    else:
        raise ValueError(f"unknown data set {name!r}")
    rng = np.random.default_rng([random_state, 17])
    idx = rng.permutation(len(y))[: n_train + n_test]
    return X[idx[:n_train]], y[idx[:n_train]], X[idx[n_train:]], y[idx[n_train:]]


def kernel_machine_comparison(dataset: str, epsilons: Sequence[float], seeds: Sequence[int], n_train: int, n_test: int,
                              lam: float, sigma: float, delta: float, d_hat: int, n_jobs: int = 1) -> pd.DataFrame:
    """Test accuracy of Hall et al.'s kernel machine (hinge, (eps, delta), exact solve, GP release at the test points),
    Rubinstein et al.'s PrivateSVM (hinge, eps, random features, Laplace) and Chaudhuri et al.'s PrivateKernelERM
    (logistic, eps, random features, objective perturbation) on the same data, with matched regularisation (C =
    1/(2 lam), Lambda = 2 lam) and kernel (exp(-||x - y||^2 / (2 sigma^2)); gamma = 1/(2 sigma^2)); plus Hall's
    non-private minimiser.  Each seed draws a new subsample and new noise; the non-private solve of Hall's machine is
    reused for every epsilon (keep_nonprivate=True, sample_releases)."""
    from dpkernels.mechanisms.chaudhuri import PrivateKernelERM
    from dpkernels.mechanisms.rubinstein import PrivateSVM

    def one(seed: int) -> list[dict[str, object]]:
        Xtr, ytr, Xte, yte = classification_data(dataset, n_train, n_test, seed)
        rows = []
        base = {"dataset": dataset, "seed": seed, "n_train": n_train, "n_test": n_test}
        hall = PrivateKernelMachine(epsilon=epsilons[0], delta=delta, lam=lam, bandwidth=sigma, classes=[-1, 1],
                                    points=Xte, keep_nonprivate=True, random_state=seed).fit(Xtr, ytr)
        f0 = hall.nonprivate_function(Xte)
        rows.append({**base, "method": "non-private kernel machine (hinge)", "epsilon": np.inf, "privacy": "none",
                     "accuracy": float(np.mean(np.where(f0 >= 0, 1, -1) == yte))})
        for eps in epsilons:
            rel = hall.sample_releases(Xte, 1, random_state=np.random.default_rng([seed, 1, int(eps * 1000)]), epsilon=eps)[0]
            rows.append({**base, "method": "Hall et al. GP release (hinge)", "epsilon": eps, "privacy": f"({eps:g}, {delta:g})-DP",
                         "accuracy": float(np.mean(np.where(rel >= 0, 1, -1) == yte))})
            svm = PrivateSVM(epsilon=eps, C=1.0 / (2.0 * lam), sigma=sigma, n_components=d_hat,
                             random_state=np.random.default_rng([seed, 2, int(eps * 1000)])).fit(Xtr, ytr)
            rows.append({**base, "method": "Rubinstein et al. PrivateSVM (hinge)", "epsilon": eps, "privacy": f"{eps:g}-DP",
                         "accuracy": float(svm.score(Xte, yte))})
            erm = PrivateKernelERM(epsilon=eps, Lambda=2.0 * lam, gamma=1.0 / (2.0 * sigma**2), n_components=d_hat,
                                   random_state=np.random.default_rng([seed, 3, int(eps * 1000)])).fit(Xtr, ytr)
            rows.append({**base, "method": "Chaudhuri et al. PrivateKernelERM (logistic)", "epsilon": eps,
                         "privacy": f"{eps:g}-DP", "accuracy": float(erm.score(Xte, yte))})
        return rows

    out = Parallel(n_jobs=n_jobs)(delayed(one)(s) for s in seeds)
    return pd.DataFrame([r for rows in out for r in rows])


def adult_kde_data() -> tuple[Array, dict[str, tuple[float, float]]]:
    """Adult's age and hours per week scaled to [0, 1] with public bounds, all 48,842 rows (neither column has missing
    values): age 17 (adult.names: the extract kept AAGE > 16) to 90 (the census top code), hours per week 1 (HRSWK > 0)
    to 99 (the top code).  The bounds are public facts of the census coding, not computed from the data."""
    from dpkernels.datasets import load_adult

    data = load_adult(preprocess=None)
    cols = [data.feature_names.index("age"), data.feature_names.index("hours-per-week")]
    bounds = {"age": (17.0, 90.0), "hours-per-week": (1.0, 99.0)}
    Z = data.X[:, cols].astype(float)
    lo = np.array([bounds["age"][0], bounds["hours-per-week"][0]])
    hi = np.array([bounds["age"][1], bounds["hours-per-week"][1]])
    return (Z - lo) / (hi - lo), bounds


# ----------------------------------------------------------------------------------------------
# the proof sketch of Proposition 2.1: which basis is orthonormal (formula sheet E2)
# ----------------------------------------------------------------------------------------------
def mercer_basis_check(sigma: float = 0.2, grid: int = 400, n_terms: int = 6) -> pd.DataFrame:
    """The sketch writes K = sum_i lambda_i phi_i phi_i with phi_i "orthonormal under the RKHS inner product" and
    eta_i(f) = lambda_i <f, phi_i>_H.  For the Gaussian kernel on [0, 1] (the integral operator discretised on a
    midpoint grid) the eigenfunctions with K = sum lambda_i phi_i phi_i are L2(T)-orthonormal, and their RKHS norms are
    ||phi_i||_H = 1 / sqrt(lambda_i), not 1; RKHS-orthonormal functions psi_i = sqrt(lambda_i) phi_i give
    K = sum psi_i psi_i instead.  Returns per term: lambda_i, ||phi_i||_L2, ||phi_i||_H, and the reconstruction errors
    of K from sum lambda phi phi (L2 basis) and from sum lambda psi psi (the sketch's formula with an RKHS basis)."""
    h = 1.0 / grid
    x = (np.arange(grid) + 0.5) * h
    kern = GaussianKernel(sigma)
    K = kern(x[:, None], x[:, None])
    vals, vecs = np.linalg.eigh(K * h)
    order = np.argsort(vals)[::-1]
    lam, U = vals[order], vecs[:, order]
    keep = lam > 1e-12 * lam[0]
    lam, U = lam[keep], U[:, keep]
    phi = U / math.sqrt(h)  # int phi_i phi_j = delta_ij (midpoint rule)
    psi = phi * np.sqrt(lam)  # RKHS-orthonormal
    K_l2 = (phi * lam) @ phi.T
    K_rkhs = (psi * lam) @ psi.T
    rows = []
    for i in range(n_terms):
        rows.append({"term": i + 1, "lambda": lam[i], "norm_L2": float(np.sqrt(np.sum(phi[:, i] ** 2) * h)),
                     "norm_H": 1.0 / math.sqrt(lam[i]), "recon_error_L2_basis": float(np.max(np.abs(K_l2 - K))),
                     "recon_error_RKHS_basis": float(np.max(np.abs(K_rkhs - K)))})
    return pd.DataFrame(rows)


def nystrom_demo(n_train: int, n_test: int, epsilon: float, delta: float, lam: float, sigma: float, n_landmarks_axis: int,
                 random_state: int = 0) -> pd.DataFrame:
    """The kernel machine on Park's three moons (binary: moon 0 against the rest), large n: the Nystrom solver with a
    public grid of landmarks on the generator's known box [-1.5, 3.5] x [-1.5, 2] (no n x n matrix), released as noisy
    coefficients, next to its non-private solution."""
    from dpkernels.datasets import make_three_moons

    data = make_three_moons(n_samples=n_train + n_test, random_state=random_state)
    y = np.where(data.y == 0, 1, -1)
    Xtr, ytr, Xte, yte = data.X[:n_train], y[:n_train], data.X[n_train:], y[n_train:]
    g = np.meshgrid(np.linspace(-1.5, 3.5, n_landmarks_axis), np.linspace(-1.5, 2.0, n_landmarks_axis))
    landmarks = np.column_stack([a.ravel() for a in g])
    import time

    t0 = time.perf_counter()
    km = PrivateKernelMachine(epsilon=epsilon, delta=delta, lam=lam, bandwidth=sigma, solver="nystrom", landmarks=landmarks,
                              classes=[-1, 1], keep_nonprivate=True, random_state=random_state).fit(Xtr, ytr)
    seconds = time.perf_counter() - t0
    f0 = km.nonprivate_function(Xte)
    return pd.DataFrame([{"n_train": n_train, "landmarks": len(landmarks), "epsilon": epsilon, "delta": delta,
                          "accuracy_private": float(km.score(Xte, yte)),
                          "accuracy_nonprivate": float(np.mean(np.where(f0 >= 0, 1, -1) == yte)),
                          "noise_multiplier": km.noise_multiplier_, "fit_seconds": seconds}])
