"""The statements of Hall, Rinaldo and Wasserman (2013) set against measurements and exact computations
(Proposition 1.1's calibration, Proposition 2.1's release and its proof sketch, the KDE's and the kernel machine's
sensitivities, the noise's mean L2 error, the MISE decomposition, the orders and the optimal bandwidth, the kernel
machine's rate).  Each function returns tables (pandas) or small dicts; :mod:`~dpkernels.experiments.hall2013.records` turns them into check rows."""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable, Sequence

import numpy as np
import pandas as pd
from joblib import Parallel, delayed
from numpy.typing import NDArray
from scipy import stats
from scipy.linalg import solve_triangular

from dpkernels.accounting import gaussian_delta, gaussian_sigma
from dpkernels.audit import adversarial_neighbour_sensitivity, random_neighbour_sensitivity
from dpkernels.bounds import hall as HB
from dpkernels.mechanisms.hall import (
    GaussianKernel,
    GaussianProcessRelease,
    PrivateKDE,
    PrivateKernelMachine,
    gp_factor,
    kernel_expansion,
    loss_lipschitz,
    solve_kernel_machine,
)

Array = NDArray[np.float64]




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
    Gaussian mechanism's hockey-stick divergence) with its standard error, and counts the draws with a positive term
    (every term lies in [0, 1], so delta <= P(term > 0): a bound that stays valid when no draw is positive)."""
    rng = np.random.default_rng(random_state)
    s = HB.proposition_1_1_sigma(epsilon, delta, 1.0)
    o = s * rng.standard_normal(int(n_draws))
    loss = ((o - 1.0) ** 2 - o**2) / (2 * s * s)
    terms = np.maximum(0.0, -np.expm1(epsilon - loss))
    est, se = float(terms.mean()), float(terms.std(ddof=1) / math.sqrt(len(terms)))
    return {"epsilon": epsilon, "delta": delta, "sigma": s, "delta_mc": est, "se": se, "delta_exact": gaussian_delta(epsilon, s, 1.0),
            "n_draws": int(n_draws), "n_positive": int(np.count_nonzero(terms)),
            "z_vs_claim": (est - delta) / se if se > 0 else math.inf}




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
            kde = PrivateKDE(epsilon=epsilon, delta=delta, sigma=sigma, convention=conv, calibration=cal, points=P,
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
        kde = PrivateKDE(epsilon=epsilon, delta=delta, sigma=sigma, convention=convention, calibration=calibration,
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
        kde = PrivateKDE(epsilon=epsilon, delta=delta, sigma=s, convention=convention, calibration=calibration,
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
# the conditional-sampling consistency of the released function
# ----------------------------------------------------------------------------------------------
def whitened_covariance_test(Z: Array) -> dict[str, float]:
    """Rows of Z should be i.i.d. N(0, I_m).  Returns the largest ``|mean|`` and ``|Cov - I|`` entry in units of their standard
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
    ref = PrivateKDE(epsilon=1.0, delta=1e-5, sigma=sigma, points=np.empty((0, 1)), curator=True,
                     keep_nonprivate=True, random_state=0).fit(X)
    s, tau = ref.noise_multiplier_, ref.jitter_
    mean = ref.nonprivate_function(union)
    A = gp_factor(kern, union, tau)
    good, naive = [], []
    consistent = True
    for r in range(int(n_paths)):
        kde = PrivateKDE(epsilon=1.0, delta=1e-5, sigma=sigma, points=np.empty((0, 1)), curator=True,
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
# the proof sketch of Proposition 2.1: which basis is orthonormal (ERRATA H4)
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




# ----------------------------------------------------------------------------------------------
# Proposition 2.1 inherits Proposition 1.1's range of alpha
# ----------------------------------------------------------------------------------------------
def proposition_2_1_beyond_boundary(epsilons: Sequence[float], delta: float, n: int = 10, sigma: float = 0.05
                                    ) -> pd.DataFrame:
    """The GP release of a KDE calibrated by Proposition 1.1's c (``calibration="hall"``), on the worst-case neighbouring
    pair (a row at 0 replaced by 1, d = 1): the exact delta at epsilon of the release at {x, x'}, where the pair's
    Mahalanobis distance equals the calibrated sensitivity.  Proposition 2.1 is an instance of Proposition 1.1, so it
    fails where that one does (ERRATA H1).  The exact delta does not depend on ``n`` (the sensitivity and the noise
    both scale as 1/n); n = 10 rows keep the paper's delta = 1e-2 within the library's 1/(10 n)."""
    from .audits import kde_pair_audit

    rows = []
    for eps in epsilons:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # CalibrationWarning: the point of the check
            a = kde_pair_audit(1, n, sigma, float(eps), delta, 0, calibration="hall")
        rows.append({"epsilon": float(eps), "delta": delta, "pair_mahalanobis": a["pair_mahalanobis"],
                     "sensitivity_calibrated": a["sensitivity_calibrated"], "noise_multiplier": a["noise_multiplier"],
                     "exact_delta": gaussian_delta(float(eps), a["noise_multiplier"], a["pair_mahalanobis"]),
                     "exact_delta_worst": gaussian_delta(float(eps), a["noise_multiplier"], a["sensitivity_calibrated"])})
    return pd.DataFrame(rows)


# ----------------------------------------------------------------------------------------------
# the sampling error's order, and the kernel machine's rate
# ----------------------------------------------------------------------------------------------
def sampling_order_slopes(d: int = 1) -> dict[str, float]:
    """Log-log slopes of the exact risk's parts (:func:`dpkernels.bounds.hall.kde_risk`): bias^2 against sigma for small
    sigma (claimed 4), the variance against n (claimed -1) and against sigma (claimed -d)."""
    from dpkernels.verdicts import slope

    mix = HB.bimodal_mixture(d)
    small = np.geomspace(0.002, 0.006, 5)
    return {"bias_sigma": slope(small, [HB.kde_risk(mix, 1000, s).bias_sq for s in small]),
            "variance_n": slope([1e3, 1e4, 1e5], [HB.kde_risk(mix, int(n), 0.01).variance for n in (1e3, 1e4, 1e5)]),
            "variance_sigma": slope(small, [HB.kde_risk(mix, 1000, s).variance for s in small]),
            "claimed_bias_sigma": 4.0, "claimed_variance_n": -1.0, "claimed_variance_sigma": -float(d)}


def _rate_data(n: int, rng: np.random.Generator, flip: float) -> tuple[Array, Array]:
    X = rng.uniform(size=(n, 1))
    y = np.where(np.sin(2 * np.pi * X[:, 0]) > 0, 1.0, -1.0)
    y[rng.uniform(size=n) < flip] *= -1
    return X, y


def kernel_machine_rate_experiment(ns: Sequence[int], runs: int, lam_exponent: float = -0.5, lam0: float = 1.0,
                                   sigma: float = 0.1, epsilon: float = 1.0, delta: float = 1e-5, grid: int = 64,
                                   flip: float = 0.1, risk_grid: int = 2000, random_state: int = 0, n_jobs: int = 1
                                   ) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Section 3's kernel machine (hinge, exact certified solve) against n, with lam_n = lam0 n^lam_exponent (lam -> 0 and
    n lam -> infinity, the regime of consistent SVMs): per n, ``runs`` independent samples of x uniform on T = [0, 1] with
    labels b(x) = sign(sin 2 pi x) flipped with probability ``flip`` independently of x, so the Bayes classifier is b and
    the excess risk of any classifier h is exactly (1 - 2 flip) P_x(h(x) != b(x)).

    Risk: the non-private classifier's excess risk (exact on a ``risk_grid`` of T), and the private release's expected
    excess risk over its noise, also exact: at each x the release is f(x) + s sqrt(1 + tau) Z, so
    P(sign != b(x)) = Phi(-b(x) f(x) / (s sqrt(1 + tau))).  L2(T) parts at ``grid`` points: the estimator's variance
    across samples (a lower bound on its sampling error) and the privacy error s^2 (1 + tau) (exact: the GP release of
    Proposition 2.1 with K(x, x) = 1), also measured from the release.  Standard errors by a bootstrap over the samples.
    Returns (per run, per n)."""
    P = np.linspace(0.0, 1.0, grid)[:, None]
    G = (np.arange(risk_grid) + 0.5)[:, None] / risk_grid
    bayes = np.where(np.sin(2 * np.pi * G[:, 0]) > 0, 1.0, -1.0)
    scale = 1.0 - 2.0 * flip

    def one(n: int, run: int) -> dict[str, object]:
        rng = np.random.default_rng([random_state, n, run])
        X, y = _rate_data(n, rng, flip)
        lam = lam0 * float(n) ** lam_exponent
        km = PrivateKernelMachine(epsilon=epsilon, delta=delta, alpha=2.0 * lam, sigma=sigma, points=P, keep_nonprivate=True,
                                  random_state=rng).fit(X, y)
        f0 = km.nonprivate_function(P)
        fg = km.nonprivate_function(G)
        sd = km.noise_multiplier_ * math.sqrt(1.0 + km.jitter_)
        return {"n": n, "run": run, "lam": lam, "f": f0, "released_sq": float(np.mean((km.released_values_ - f0) ** 2)),
                "privacy_exact": sd * sd, "noise_multiplier": km.noise_multiplier_,
                "excess_nonprivate": scale * float(np.mean(np.where(fg >= 0, 1.0, -1.0) != bayes)),
                "excess_private": scale * float(np.mean(stats.norm.cdf(-bayes * fg / sd)))}

    res = Parallel(n_jobs=n_jobs)(delayed(one)(int(n), r) for n in ns for r in range(int(runs)))
    per_run = pd.DataFrame([{k: v for k, v in r.items() if k != "f"} for r in res])
    rows = []
    boot_rng = np.random.default_rng([random_state, 99])
    for n in ns:
        F = np.array([r["f"] for r in res if r["n"] == int(n)])
        g = per_run[per_run.n == int(n)].reset_index(drop=True)
        ep, en = g.excess_private.to_numpy(), g.excess_nonprivate.to_numpy()
        bv, br = [], []
        for _ in range(200):
            idx = boot_rng.integers(0, len(F), size=len(F))
            bv.append(float(np.mean(F[idx].var(axis=0, ddof=1))))
            br.append(float(ep[idx].mean() / en[idx].mean()) if en[idx].mean() > 0 else math.nan)
        priv = float(g.privacy_exact.iloc[0])
        var = float(np.mean(F.var(axis=0, ddof=1)))
        rows.append({"n": int(n), "lam": float(g.lam.iloc[0]), "runs": len(F), "sampling_variance": var,
                     "sampling_variance_se": float(np.std(bv, ddof=1)), "privacy_error": priv,
                     "privacy_error_measured": float(g.released_sq.mean()),
                     "privacy_error_measured_se": float(g.released_sq.std(ddof=1) / math.sqrt(len(g))),
                     "excess_nonprivate": float(en.mean()), "excess_nonprivate_se": float(en.std(ddof=1) / math.sqrt(len(en))),
                     "excess_private": float(ep.mean()), "excess_private_se": float(ep.std(ddof=1) / math.sqrt(len(ep))),
                     "risk_ratio": float(ep.mean() / en.mean()) if en.mean() > 0 else math.nan,
                     "risk_ratio_se": float(np.nanstd(br, ddof=1))})
    return per_run, pd.DataFrame(rows)
