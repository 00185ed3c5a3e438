"""Experiments for Chaudhuri, Monteleoni and Sarwate (2011); used by ``notebooks/chaudhuri2011.py``.

Published values are those recovered from the JMLR PDF in ../shared/papers/chaudhuri2011-formulas.md
(Tables 1-2 exact; Figures 2-5 read from the PDF's vector paths).
"""

from __future__ import annotations

import math
import time
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd
from joblib import Parallel, delayed
from numpy.typing import NDArray
from scipy import stats
from sklearn.model_selection import KFold

from dpkernels.audit import (
    adversarial_neighbour_sensitivity,
    clopper_pearson,
    epsilon_lower_bound,
    random_neighbour_sensitivity,
)
from dpkernels.bounds import chaudhuri as B
from dpkernels.datasets import Dataset, load_adult, load_kddcup99
from dpkernels.losses import MarginLoss, make_loss
from dpkernels.mechanisms.chaudhuri import ObjectivePerturbation, OutputPerturbation, PrivateKernelERM
from dpkernels.noise import exponential_mechanism, gamma_norm_vector
from dpkernels.solvers import solve_smooth_erm

Array = NDArray[np.float64]

__all__ = [
    "LAMBDA_EXPONENTS",
    "PUBLISHED_TABLES",
    "PUBLISHED_FIGURES_2_3",
    "PUBLISHED_FIGURES_4_5",
    "CHOSEN_LAMBDA",
    "chaudhuri_data",
    "error_grid",
    "published_table_frame",
    "within_spread",
    "learning_curves",
    "sensitivity_experiment",
    "noise_sampler_tests",
    "lemma_17_grid",
    "lemma_16_experiment",
    "lemma_19_experiment",
    "theorem_27_experiment",
    "exact_objective_llr",
    "audit_output_perturbation",
    "audit_objective_perturbation",
    "diffprivlib_available",
    "diffprivlib_release",
    "diffprivlib_noise",
    "diffprivlib_constants",
    "diffprivlib_comparison",
    "kernel_feature_norms",
    "kernel_experiment",
]

# ----------------------------------------------------------------------------------------------
# published values (Tables 1-2: exact; Figures 2-5: read from the PDF's vector paths)
# ----------------------------------------------------------------------------------------------
LAMBDA_EXPONENTS = {"adult": [-10, -7, -4, -3.5, -3, -2.5, -2, -1.5], "kddcup99": [-9, -7, -5, -3.5, -3, -2.5, -2, -1.5]}
_T1 = {
    ("logistic", "non-private"): [0.1540, 0.1533, 0.1654, 0.1694, 0.1758, 0.1895, 0.2322, 0.2478],
    ("logistic", "output"): [0.5318, 0.5318, 0.5175, 0.4928, 0.4310, 0.3163, 0.2395, 0.2456],
    ("logistic", "objective"): [0.8248, 0.8248, 0.8248, 0.2694, 0.2369, 0.2161, 0.2305, 0.2475],
    ("huber", "non-private"): [0.1527, 0.1521, 0.1632, 0.1669, 0.1719, 0.1793, 0.2454, 0.2478],
    ("huber", "output"): [0.5318, 0.5318, 0.5211, 0.5011, 0.4464, 0.3352, 0.2376, 0.2476],
    ("huber", "objective"): [0.2585, 0.2585, 0.2585, 0.2582, 0.2559, 0.2046, 0.2319, 0.2478],
}
_T2 = {
    ("logistic", "non-private"): [0.0016, 0.0016, 0.0021, 0.0038, 0.0037, 0.0037, 0.0325, 0.0594],
    ("logistic", "output"): [0.5245, 0.5245, 0.5093, 0.3518, 0.1114, 0.0359, 0.0304, 0.0678],
    ("logistic", "objective"): [0.2084, 0.2084, 0.2084, 0.0196, 0.0118, 0.0113, 0.0285, 0.0591],
    ("huber", "non-private"): [0.0013, 0.0013, 0.0013, 0.0029, 0.0051, 0.0056, 0.0061, 0.0163],
    ("huber", "output"): [0.5245, 0.5245, 0.5229, 0.4611, 0.3353, 0.0590, 0.0092, 0.0179],
    ("huber", "objective"): [0.0191, 0.0191, 0.0191, 0.1827, 0.0123, 0.0066, 0.0064, 0.0157],
}
PUBLISHED_TABLES = {"adult": _T1, "kddcup99": _T2}
#: Lambda exponent each curve of Figures 2-3 uses (the bold entries of Tables 1-2).
CHOSEN_LAMBDA = {
    "adult": {("logistic", "non-private"): -7, ("logistic", "output"): -2, ("logistic", "objective"): -2.5,
              ("huber", "non-private"): -7, ("huber", "output"): -2, ("huber", "objective"): -2.5},
    "kddcup99": {("logistic", "non-private"): -7, ("logistic", "output"): -2, ("logistic", "objective"): -2.5,
                 ("huber", "non-private"): -9, ("huber", "output"): -2, ("huber", "objective"): -2},
}
_EPS_F2 = [0.02, 0.025, 0.05, 0.075, 0.1, 0.175, 0.25, 0.5]
PUBLISHED_FIGURES_2_3 = {
    "adult": {
        ("logistic", "output"): dict(zip(_EPS_F2, [0.4162, 0.3878, 0.2974, 0.2571, 0.2394, 0.2242, 0.2233, 0.2287])),
        ("logistic", "objective"): dict(zip(_EPS_F2, [0.3206, 0.3018, 0.2541, 0.2289, 0.2161, 0.1990, 0.1930, 0.1895])),
        ("logistic", "non-private"): {e: 0.1523 for e in _EPS_F2},
        ("huber", "output"): dict(zip(_EPS_F2, [0.4290, 0.4035, 0.3093, 0.2601, 0.2375, 0.2270, 0.2327, 0.2414])),
        ("huber", "objective"): dict(zip(_EPS_F2, [0.3387, 0.3319, 0.2581, 0.2219, 0.2045, 0.1871, 0.1830, 0.1803])),
        ("huber", "non-private"): {e: 0.1526 for e in _EPS_F2},
    },
    "kddcup99": {
        ("logistic", "output"): dict(zip(_EPS_F2[2:], [0.0476, 0.0350, 0.0304, 0.0278, 0.0283, 0.0293])),
        ("logistic", "objective"): dict(zip(_EPS_F2[1:], [0.0392, 0.0211, 0.0147, 0.0113, 0.0063, 0.0051, 0.0041])),
        ("logistic", "non-private"): {e: 0.0016 for e in _EPS_F2[1:]},
        ("huber", "output"): dict(zip(_EPS_F2[3:], [0.0133, 0.0092, 0.0070, 0.0065, 0.0060])),
        ("huber", "objective"): dict(zip(_EPS_F2[2:], [0.0096, 0.0071, 0.0064, 0.0059, 0.0059, 0.0060])),
        ("huber", "non-private"): {e: 0.0013 for e in _EPS_F2[1:]},
    },
}
_SIZES_F4 = [60000, 70000, 80000, 90000, 100000, 110000, 120000]
PUBLISHED_FIGURES_4_5 = {
    ("logistic", 0.05, "output"): [0.0233, 0.0198, 0.0190, 0.0179, 0.0168, 0.0161, 0.0149],
    ("logistic", 0.05, "objective"): [0.0118, 0.0106, 0.0093, 0.0086, 0.0080, 0.0074, 0.0069],
    ("logistic", 0.01, "output"): [0.0667, 0.0604, 0.0583, 0.0515, 0.0480, 0.0513, 0.0493],
    ("logistic", 0.01, "objective"): [0.0396, 0.0358, 0.0337, 0.0305, 0.0283, 0.0268, 0.0243],
    ("huber", 0.05, "output"): [0.0113, 0.0096, 0.0086, 0.0073, 0.0070, 0.0065, 0.0061],
    ("huber", 0.05, "objective"): [0.0068, 0.0063, 0.0057, 0.0052, 0.0050, 0.0049, 0.0048],
    ("huber", 0.01, "output"): [0.0484, 0.0439, 0.0371, 0.0356, 0.0308, 0.0277, 0.0268],
    ("huber", 0.01, "objective"): [0.0252, 0.0225, 0.0206, 0.0188, 0.0177, 0.0167, 0.0159],
}
PUBLISHED_FIGURES_4_5_SIZES = _SIZES_F4
PUBLISHED_FIGURES_4_5_NONPRIVATE = {"logistic": 0.0029, "huber": 0.0041}


def chaudhuri_data(name: str, random_state: int = 0, kdd_rows: int = 70000) -> Dataset:
    """Adult (45,222 x 105) or the seeded 70,000-row KDDCup99 subset (DoS task, +1 = not DoS), preprocessed as in Sec 7."""
    if name == "adult":
        return load_adult()
    if name == "kddcup99":
        return load_kddcup99(target="dos", subsample=kdd_rows, random_state=random_state)
    raise ValueError(f"unknown dataset {name!r}")


def published_table_frame(dataset: str) -> pd.DataFrame:
    """Table 1 (adult) or Table 2 (kddcup99) in long format (source = published)."""
    rows = []
    for (loss, method), values in PUBLISHED_TABLES[dataset].items():
        for e, v in zip(LAMBDA_EXPONENTS[dataset], values):
            rows.append({"loss": loss, "method": method, "log10_Lambda": e, "source": "published", "value": v})
    return pd.DataFrame(rows)


# ----------------------------------------------------------------------------------------------
# the error protocol (Tables 1-2, Figures 2-3)
# ----------------------------------------------------------------------------------------------
def _errors(X: Array, y: Array, W: Array) -> Array:
    """Misclassification rate of each column of W (predict +1 on ties)."""
    return np.mean(np.where(X @ W >= 0, 1.0, -1.0) != y[:, None], axis=0)


def _fold_task(Xtr: Array, ytr: Array, Xte: Array, yte: Array, loss: str, Lambdas: Sequence[float], epsilons: Sequence[float],
               n_runs: int, seed: Sequence[int], methods: Sequence[str]) -> list[dict[str, object]]:
    """All Lambdas of one (loss, fold), largest first, each non-private solve warm-started at the previous one."""
    rows = []
    f_prev = None
    for Lambda in sorted(Lambdas, reverse=True):
        out = OutputPerturbation(epsilon=epsilons[0], Lambda=Lambda, loss=loss, init=f_prev, random_state=0).fit(Xtr, ytr)
        f_star = f_prev = out.nonprivate_solution.coef
        block = []
        if "non-private" in methods:
            block.append({"method": "non-private", "epsilon": np.nan, "run": 0, "error": float(_errors(Xte, yte, f_star[:, None])[0])})
        for eps in epsilons:
            if "output" in methods:
                W = out.sample_releases(n_runs, np.random.default_rng([*seed, 1]), epsilon=eps)
                for r, e in enumerate(_errors(Xte, yte, W.T)):
                    block.append({"method": "output", "epsilon": eps, "run": r, "error": float(e)})
            if "objective" in methods:
                obj = ObjectivePerturbation(epsilon=eps, Lambda=Lambda, loss=loss, init=f_star,
                                            random_state=np.random.default_rng([*seed, 2])).fit(Xtr, ytr)
                W = np.vstack([obj.release_, obj.sample_releases(n_runs - 1, np.random.default_rng([*seed, 3]), w0=f_star)])
                for r, e in enumerate(_errors(Xte, yte, W.T)):
                    block.append({"method": "objective", "epsilon": eps, "run": r, "error": float(e),
                                  "branch": obj.params_.branch, "epsilon_prime": obj.params_.epsilon_prime})
        for row in block:
            row.update(loss=loss, Lambda=Lambda)
        rows += block
    return rows


def error_grid(data: Dataset, Lambdas: Sequence[float], losses: Sequence[str], epsilons: Sequence[float], n_folds: int,
               n_runs: int, methods: Sequence[str] = ("non-private", "output", "objective"), random_state: int = 0,
               n_jobs: int = 1, folds_used: int | None = None) -> pd.DataFrame:
    """Test errors of the non-private, output- and objective-perturbation classifiers by k-fold cross-validation.

    Every (loss, Lambda, fold) solves the non-private problem once; output perturbation reuses that
    minimiser for all ``n_runs`` noise draws at every epsilon; objective perturbation solves once per draw
    (warm-started at the non-private minimiser).  Noise draws use common random numbers across Lambda, so
    in Algorithm 2's Delta > 0 branch (where the effective regulariser does not depend on Lambda) the
    errors are identical across Lambda, as in the paper's tables.  ``folds_used`` runs only the first folds.
    """
    X, y = data.X, data.y.astype(float)
    splits = list(KFold(n_splits=n_folds, shuffle=True, random_state=random_state).split(X))[: folds_used or n_folds]
    tasks = [(loss, k, tr, te) for loss in losses for k, (tr, te) in enumerate(splits)]
    out = Parallel(n_jobs=n_jobs)(
        delayed(_fold_task)(X[tr], y[tr], X[te], y[te], loss, list(Lambdas), list(epsilons), n_runs, (random_state, k), methods)
        for loss, k, tr, te in tasks)
    rows = []
    for (loss, k, tr, te), block in zip(tasks, out):
        for r in block:
            r.update(fold=k, n_train=len(tr))
            rows.append(r)
    return pd.DataFrame(rows)


def within_spread(published: float, errors: Sequence[float]) -> tuple[bool, float, float]:
    """Is the published value inside the central 95% of the reproduced per-run errors?  Returns (ok, q2.5, q97.5)."""
    e = np.asarray(errors, dtype=float)
    lo, hi = (float(np.min(e)), float(np.max(e))) if len(e) < 40 else (float(np.quantile(e, 0.025)), float(np.quantile(e, 0.975)))
    return lo - 1e-12 <= published <= hi + 1e-12, lo, hi


# ----------------------------------------------------------------------------------------------
# Figures 4-5: learning curves with private tuning (Algorithm 4)
# ----------------------------------------------------------------------------------------------
def learning_curves(data: Dataset, sizes: Sequence[int], Lambdas: Sequence[float], losses: Sequence[str],
                    epsilons: Sequence[float], n_perms: int, n_runs: int, val_size: int = 25000, test_size: int = 25000,
                    random_state: int = 0, n_jobs: int = 1) -> pd.DataFrame:
    """Algorithm 4 end to end: m = len(Lambdas) training parts of ``size`` rows, a validation and a test part.

    For each permutation, part i trains the private learner with Lambda_i (output: one solve, ``n_runs``
    noise draws; objective: ``n_runs`` solves, restricted to Lambdas whose eps' > 0 as in the paper), the
    exponential mechanism selects one learner per run from its validation mistakes, and its test error is
    recorded.  The non-private baseline trains on the union of the parts and picks Lambda by validation error.
    """
    X, y = data.X, data.y.astype(float)
    m = len(Lambdas)
    need = m * max(sizes) + val_size + test_size
    if need > len(y):
        raise ValueError(f"{need} rows needed, {len(y)} available: scale the sizes down")

    def one(size: int, perm: int) -> list[dict[str, object]]:
        rng = np.random.default_rng([random_state, size, perm])
        order = rng.permutation(len(y))
        te, va = order[:test_size], order[test_size:test_size + val_size]
        parts = [order[test_size + val_size + i * size: test_size + val_size + (i + 1) * size] for i in range(m)]
        rows = []
        for loss in losses:
            union = np.concatenate(parts)
            np_errs = []
            f = None
            for lam in sorted(Lambdas, reverse=True):
                f = solve_smooth_erm(X[union], y[union], make_loss(loss), lam, w0=f).coef
                np_errs.append((_errors(X[va], y[va], f[:, None])[0], _errors(X[te], y[te], f[:, None])[0]))
            rows.append({"size": size, "perm": perm, "loss": loss, "epsilon": np.nan, "method": "non-private", "run": 0,
                         "error": float(min(np_errs)[1])})
            for eps in epsilons:
                for method in ("output", "objective"):
                    test_err = np.empty((m, n_runs))
                    val_mis = np.empty((m, n_runs))
                    for i, lam in enumerate(Lambdas):
                        Xp, yp = X[parts[i]], y[parts[i]]
                        if method == "output":
                            mdl = OutputPerturbation(epsilon=eps, Lambda=lam, loss=loss, random_state=rng).fit(Xp, yp)
                            W = mdl.sample_releases(n_runs, rng)
                        else:
                            params = B.theorem_9_parameters(eps, size, lam, make_loss(loss).curvature)
                            if params.branch != "eps' > 0":
                                val_mis[i], test_err[i] = np.inf, np.nan
                                continue
                            mdl = ObjectivePerturbation(epsilon=eps, Lambda=lam, loss=loss, random_state=rng).fit(Xp, yp)
                            W = mdl.sample_releases(n_runs, rng)
                        val_mis[i] = np.sum(np.where(X[va] @ W.T >= 0, 1.0, -1.0) != y[va][:, None], axis=0)
                        test_err[i] = _errors(X[te], y[te], W.T)
                    if not np.isfinite(val_mis).any():  # no Lambda in the eps' > 0 regime at this n and eps
                        continue
                    for r in range(n_runs):
                        ok = np.isfinite(val_mis[:, r])
                        idx = np.flatnonzero(ok)
                        pick = idx[exponential_mechanism(-val_mis[ok, r], eps, 1.0, rng)]
                        rows.append({"size": size, "perm": perm, "loss": loss, "epsilon": eps, "method": method, "run": r,
                                     "error": float(test_err[pick, r]), "selected_Lambda": Lambdas[pick]})
        return rows

    out = Parallel(n_jobs=n_jobs)(delayed(one)(s, p) for s in sizes for p in range(n_perms))
    return pd.DataFrame([r for block in out for r in block])


# ----------------------------------------------------------------------------------------------
# Corollary 8: empirical sensitivity
# ----------------------------------------------------------------------------------------------
def sensitivity_experiment(losses: Sequence[str], Lambdas: Sequence[float], n: int = 30, d: int = 2, n_random: int = 100,
                           n_adv: int = 32, maxiter: int = 120, random_state: int = 0) -> pd.DataFrame:
    """max ||f*(D) - f*(D')||_2 over random and adversarially searched neighbours against Corollary 8's 2/(n Lambda)."""
    rng = np.random.default_rng(random_state)

    def ball(r: np.random.Generator) -> Array:
        v = r.standard_normal(d)
        return v / np.linalg.norm(v) * r.uniform(0.3, 1.0) ** (1 / d)

    proj = lambda x: x / max(1.0, float(np.linalg.norm(x)))  # noqa: E731
    rows = []
    for loss in losses:
        for lam in Lambdas:
            X = np.array([ball(rng) for _ in range(n)])
            y = np.where(X[:, 0] + 0.3 * rng.standard_normal(n) > 0, 1.0, -1.0)
            L = make_loss(loss)
            fit = lambda A, b, L=L, lam=lam: solve_smooth_erm(A, b, L, lam).coef  # noqa: E731
            w_d = fit(X, y)
            rand = random_neighbour_sensitivity(fit, X, y, ball, n_neighbours=n_random, random_state=rng, w_d=w_d)
            adv = adversarial_neighbour_sensitivity(fit, X, y, ball, proj, n_random=n_adv, n_refine=3, maxiter=maxiter,
                                                    random_state=rng, w_d=w_d)
            bound = B.corollary_8_sensitivity(n, lam)
            for method, res in (("random neighbours", rand), ("adversarial search", adv)):
                rows.append({"loss": loss, "Lambda": lam, "n": n, "method": method, "l2": res.l2, "bound": bound,
                             "ratio": res.l2 / bound})
    return pd.DataFrame(rows)


# ----------------------------------------------------------------------------------------------
# the noise sampler, Lemmas 16, 17, 19 and Theorem 27
# ----------------------------------------------------------------------------------------------
def noise_sampler_tests(dims: Sequence[int], beta: float, draws: int, random_state: int = 0) -> pd.DataFrame:
    """Eq. (4)'s sampler: KS tests of ||b|| against Gamma(d, 1/beta) and of each direction's first coordinate
    ((u_1 + 1)/2 ~ Beta((d-1)/2, (d-1)/2)); the rank correlation of norm and direction (independence)."""
    rng = np.random.default_rng(random_state)
    rows = []
    for d in dims:
        b = gamma_norm_vector(beta, d, n=draws, random_state=rng)
        r = np.linalg.norm(b, axis=1)
        u1 = b[:, 0] / r
        p_norm = stats.kstest(r, stats.gamma(a=d, scale=1 / beta).cdf).pvalue
        p_dir = stats.kstest((u1 + 1) / 2, stats.beta((d - 1) / 2, (d - 1) / 2).cdf).pvalue if d > 1 else float("nan")
        rows.append({"d": d, "beta": beta, "draws": draws, "p_norm_gamma": p_norm, "p_direction_uniform": p_dir,
                     "spearman_norm_direction": stats.spearmanr(r, u1).statistic})
    return pd.DataFrame(rows)


def lemma_17_grid(ks: Sequence[int], deltas: Sequence[float]) -> pd.DataFrame:
    """Lemma 17 exactly: P(X < k theta log(k/delta)) for X ~ Gamma(k, theta) (theta cancels) against 1 - delta."""
    rows = []
    for k in ks:
        for delta in deltas:
            p = stats.gamma(a=k).cdf(B.lemma_17_quantile(k, 1.0, delta))
            rows.append({"k": k, "delta": delta, "probability": p, "required": 1 - delta, "margin": p - (1 - delta)})
    return pd.DataFrame(rows)


def _toy(n: int, d: int, rng: np.random.Generator) -> tuple[Array, Array]:
    X = rng.standard_normal((n, d))
    X /= np.maximum(1.0, np.linalg.norm(X, axis=1))[:, None]
    y = np.where(X[:, 0] + 0.5 * rng.standard_normal(n) > 0, 1.0, -1.0)
    return X, y


def lemma_16_experiment(cases: Sequence[tuple[str, float, float, float]], draws: int, n: int = 500, d: int = 5,
                        random_state: int = 0) -> pd.DataFrame:
    """Lemma 16 (Algorithm 1): P(J(f_priv) - J(f*) > 2 d^2 (c + Lambda) log^2(d/delta) / (Lambda^2 n^2 eps^2)) against delta.

    Cases are (loss, Lambda, eps, delta); eta = 1 for N = ||f||^2 / 2.
    """
    rng = np.random.default_rng(random_state)
    X, y = _toy(n, d, rng)
    rows = []
    for loss_name, lam, eps, delta in cases:
        loss = make_loss(loss_name)
        f = solve_smooth_erm(X, y, loss, lam).coef
        J = lambda w: float(np.mean(loss.value(y * (X @ w)))) + 0.5 * lam * float(w @ w)  # noqa: E731
        W = f + gamma_norm_vector(B.theorem_6_beta(eps, n, lam), d, n=draws, random_state=rng)
        excess = np.array([J(w) for w in W]) - J(f)
        bound = B.lemma_16_excess_risk(d, loss.curvature, lam, 1.0, n, eps, delta)
        k = int(np.sum(excess > bound))
        lo, hi = clopper_pearson(k, draws)
        rows.append({"loss": loss_name, "Lambda": lam, "eps": eps, "delta": delta, "bound": bound,
                     "median_excess": float(np.median(excess)), "failures": k, "draws": draws, "p_hat": k / draws,
                     "cp_low": lo, "cp_high": hi})
    return pd.DataFrame(rows)


def lemma_19_experiment(cases: Sequence[tuple[str, float, float, float]], draws: int, n: int = 200, d: int = 5,
                        random_state: int = 0) -> pd.DataFrame:
    """Lemma 19 (Algorithm 2, eps' > 0): P(J(f_priv) - J(f*) > 4 d^2 log^2(d/delta) / (Lambda n^2 eps_p^2)) against delta,
    with the noise Algorithm 2 really adds (beta = eps'/2); also the bound with eps' in place of eps_p."""
    rng = np.random.default_rng(random_state)
    X, y = _toy(n, d, rng)
    rows = []
    for loss_name, lam, eps, delta in cases:
        loss = make_loss(loss_name)
        params = B.theorem_9_parameters(eps, n, lam, loss.curvature)
        if params.branch != "eps' > 0":
            raise ValueError("Lemma 19 assumes the eps' > 0 branch")
        f = solve_smooth_erm(X, y, loss, lam).coef
        J = lambda w: float(np.mean(loss.value(y * (X @ w)))) + 0.5 * lam * float(w @ w)  # noqa: E731
        excess = []
        for _ in range(draws):
            b = gamma_norm_vector(params.beta, d, random_state=rng)
            excess.append(J(solve_smooth_erm(X, y, loss, lam, b=b, w0=f).coef) - J(f))
        excess = np.array(excess)
        bound = B.lemma_19_excess_risk(d, lam, n, eps, delta)
        bound_prime = B.lemma_19_excess_risk_derived(d, lam, n, params.epsilon_prime, delta)
        k = int(np.sum(excess > bound))
        lo, hi = clopper_pearson(k, draws)
        rows.append({"loss": loss_name, "Lambda": lam, "eps": eps, "eps_prime": params.epsilon_prime, "delta": delta,
                     "bound": bound, "bound_with_eps_prime": bound_prime, "q_1_minus_delta": float(np.quantile(excess, 1 - delta)),
                     "failures": k, "failures_eps_prime": int(np.sum(excess > bound_prime)), "draws": draws,
                     "p_hat": k / draws, "cp_low": lo, "cp_high": hi})
    return pd.DataFrame(rows)


def theorem_27_experiment(cases: Sequence[tuple[Sequence[int], float, float]], draws: int, random_state: int = 0) -> pd.DataFrame:
    """Theorem 27: P(z > z_min + (2/eps) log(m/delta)) for Algorithm 4's selection, exactly and by simulation."""
    rng = np.random.default_rng(random_state)
    rows = []
    for mistakes, eps, delta in cases:
        z = np.asarray(mistakes, dtype=float)
        bound = B.theorem_27_mistake_bound(z.min(), eps, len(z), delta)
        q = B.algorithm_4_probabilities(z, eps)
        exact = float(q[z > bound].sum())
        picks = np.array([exponential_mechanism(-z, eps, 1.0, rng) for _ in range(draws)])
        k = int(np.sum(z[picks] > bound))
        rows.append({"m": len(z), "eps": eps, "delta": delta, "bound": bound, "exact_probability": exact,
                     "simulated": k / draws, "cp_high": clopper_pearson(k, draws)[1], "draws": draws})
    return pd.DataFrame(rows)


# ----------------------------------------------------------------------------------------------
# privacy audits (Algorithms 1 and 2, ours and diffprivlib's)
# ----------------------------------------------------------------------------------------------
def _gamma_llr(outputs: Array, c: Array, cp: Array, beta: float) -> Array:
    """beta (||o - c'|| - ||o - c||): Algorithm 1's log-likelihood ratio, rounded against floating-point ties."""
    o = np.atleast_2d(outputs)
    stat = beta * (np.linalg.norm(o - cp, axis=1) - np.linalg.norm(o - c, axis=1))
    return np.round(stat, 9)


def audit_output_perturbation(X1: Array, y1: Array, X2: Array, y2: Array, epsilon: float, Lambda: float, loss: str,
                              n_releases: int, random_state: int = 0) -> dict[str, float]:
    """Audit Algorithm 1 on the pair (D, D'): releases from both, the exact likelihood-ratio statistic, CP lower bound."""
    rng = np.random.default_rng(random_state)
    m1 = OutputPerturbation(epsilon=epsilon, Lambda=Lambda, loss=loss, random_state=rng).fit(X1, y1)
    m2 = OutputPerturbation(epsilon=epsilon, Lambda=Lambda, loss=loss, random_state=rng).fit(X2, y2)
    c, cp = m1.nonprivate_solution.coef, m2.nonprivate_solution.coef
    a, b = m1.sample_releases(n_releases, rng), m2.sample_releases(n_releases, rng)
    res = epsilon_lower_bound(_gamma_llr(a, c, cp, m1.beta_), _gamma_llr(b, c, cp, m1.beta_), random_state=rng)
    return {"epsilon": epsilon, "epsilon_lb": res.epsilon_lb, "epsilon_hat": res.epsilon_hat,
            "pair_l2": float(np.linalg.norm(c - cp)), "corollary_8": m1.sensitivity_,
            "pair_privacy_loss": m1.beta_ * float(np.linalg.norm(c - cp)), "n_releases": n_releases}


@dataclass(frozen=True)
class ObjectiveMechanism:
    """The constants an objective-perturbation release uses (ours or diffprivlib's)."""

    Lambda: float  #: regulariser of the weights (per example, as in J)
    Delta: float  #: extra regulariser of every coordinate (diffprivlib: including the intercept)
    beta: float  #: noise density ~ exp(-beta ||b||)
    intercept: bool  #: an unpenalised intercept coordinate (diffprivlib's fit_intercept)


def exact_objective_llr(theta: Array, X1: Array, y1: Array, X2: Array, y2: Array, loss: MarginLoss, mech: ObjectiveMechanism) -> Array:
    """log p_D(theta) - log p_D'(theta) for objective-perturbation releases theta (rows), exactly.

    theta = argmin J(t) + b't/n + (Delta/2)||t||^2 gives b = -n (grad J(theta) + Delta theta), a bijection, so the
    release density is nu(b(theta)) |det db/dtheta| with nu ~ exp(-beta ||b||) and db/dtheta = -n (hess J + Delta I).
    With an intercept, theta = (w, b0), the features are (x, 1) and only w carries Lambda.
    """
    theta = np.atleast_2d(theta)

    def log_density(X: Array, y: Array) -> Array:
        n = X.shape[0]
        Xa = np.hstack([X, np.ones((n, 1))]) if mech.intercept else X
        reg = np.full(Xa.shape[1], mech.Lambda + mech.Delta)
        if mech.intercept:
            reg[-1] = mech.Delta
        out = np.empty(theta.shape[0])
        for k, t in enumerate(theta):
            z = y * (Xa @ t)
            grad = Xa.T @ (y * loss.derivative(z)) / n + reg * t
            H = (Xa * loss.second_derivative(z)[:, None]).T @ Xa / n + np.diag(reg)
            sign, logdet = np.linalg.slogdet(H)
            out[k] = -mech.beta * n * float(np.linalg.norm(grad)) + (logdet if sign > 0 else -np.inf)
        return out

    return log_density(X1, y1) - log_density(X2, y2)


def audit_objective_perturbation(releases_d: Array, releases_dprime: Array, X1: Array, y1: Array, X2: Array, y2: Array,
                                 loss: str, mech: ObjectiveMechanism, epsilon: float, random_state: int = 0) -> dict[str, float]:
    """Statistical audit of objective-perturbation releases with the exact log-likelihood ratio as test statistic."""
    L = make_loss(loss)
    s1 = exact_objective_llr(releases_d, X1, y1, X2, y2, L, mech)
    s2 = exact_objective_llr(releases_dprime, X1, y1, X2, y2, L, mech)
    finite = np.isfinite(s1).all() and np.isfinite(s2).all()
    res = epsilon_lower_bound(np.round(s1, 9), np.round(s2, 9), random_state=random_state)
    return {"epsilon": epsilon, "epsilon_lb": res.epsilon_lb, "epsilon_hat": res.epsilon_hat,
            "max_llr_seen": float(max(np.max(np.abs(s1)), np.max(np.abs(s2)))), "n_releases": len(releases_d), "finite": finite}


def diffprivlib_available() -> tuple[bool, str]:
    """diffprivlib is a test/benchmark extra: (importable?, version or the import error)."""
    try:
        import diffprivlib

        return True, str(diffprivlib.__version__)
    except Exception as exc:  # ImportError, or an incompatible scikit-learn
        return False, f"{type(exc).__name__}: {exc}"


def diffprivlib_constants(epsilon: float, n: int, Lambda: float, data_norm: float, fit_intercept: bool, c: float = 0.25) -> dict[str, float]:
    """The constants diffprivlib 0.6.6's LogisticRegression uses (models/logistic_regression.py, mechanisms/vector.py)
    next to what Theorem 9's argument requires, for C = 1/(n Lambda).

    diffprivlib: R' = sqrt(R^2 + 1) with an intercept; eps' = eps - 2 log(1 + c R' / (n Lambda)); Delta = (c R' /
    (e^{eps/4} - 1) - n Lambda) / n in the second branch; beta = eps' / (2 R'); the intercept is not
    regularised by Lambda (but is by Delta).  Required: c R'^2 in place of c R' (the Jacobian's rank-2 change
    has eigenvalues up to c ||x||^2), and strong convexity in every coordinate (Lambda on the intercept too).
    """
    R = math.sqrt(data_norm**2 + 1.0) if fit_intercept else data_norm
    alpha = n * Lambda  # diffprivlib's alpha = 1/C
    eps_p = epsilon - 2.0 * math.log1p(c * R / alpha)
    delta = 0.0
    if eps_p <= 0:
        delta = (c * R / math.expm1(epsilon / 4.0) - alpha) / n
        eps_p = epsilon / 2.0
    ours = B.theorem_9_parameters(epsilon, n, Lambda, c, R)
    return {"R": R, "dpl_eps_prime": eps_p, "dpl_Delta": delta, "dpl_beta": eps_p / (2.0 * R),
            "required_eps_prime": ours.epsilon_prime, "required_Delta": ours.Delta, "required_beta": ours.beta,
            "intercept_unregularised_when_Delta_0": bool(fit_intercept and delta == 0.0)}


def diffprivlib_release(X: Array, y: Array, epsilon: float, Lambda: float, data_norm: float, fit_intercept: bool,
                        random_state: int, max_iter: int = 100, tol: float = 1e-4) -> Array:
    """One diffprivlib LogisticRegression release (C = 1/(n Lambda)) as (w, b0) (b0 only with an intercept)."""
    import warnings

    from diffprivlib.models import LogisticRegression as DPLR
    from sklearn.exceptions import ConvergenceWarning

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        m = DPLR(epsilon=epsilon, data_norm=data_norm, C=1.0 / (len(y) * Lambda), fit_intercept=fit_intercept,
                 max_iter=max_iter, tol=tol, random_state=random_state).fit(X, y)
    w = m.coef_.ravel()
    return np.append(w, m.intercept_[0]) if fit_intercept else w


def diffprivlib_noise(seed: int, dimension: int, epsilon_prime: float, data_norm: float) -> Array:
    """The noise vector diffprivlib 0.6.6's Vector mechanism draws for an integer ``random_state`` (replicated:
    RandomState(seed), a direction from standard_normal((d, 4)).sum(1)/2, a norm from gamma(d/4, 2R/eps', 4).sum())."""
    rs = np.random.RandomState(seed)
    direction = rs.standard_normal((dimension, 4)).sum(axis=1) / 2
    norm = rs.gamma(dimension / 4, data_norm * 2 / epsilon_prime, 4).sum()
    return direction / np.linalg.norm(direction) * norm


def diffprivlib_comparison(data: Dataset, epsilons: Sequence[float], Lambda: float, seeds: Sequence[int],
                           test_fraction: float = 0.2, random_state: int = 0) -> pd.DataFrame:
    """Our ObjectivePerturbation (logistic) against diffprivlib's LogisticRegression on one split, same Lambda and
    epsilon grid, both without an intercept, plus diffprivlib with its default intercept: test error and fit time."""
    rng = np.random.default_rng(random_state)
    idx = rng.permutation(data.n_samples)
    n_test = int(round(test_fraction * len(idx)))
    te, tr = idx[:n_test], idx[n_test:]
    Xtr, ytr, Xte, yte = data.X[tr], data.y[tr].astype(float), data.X[te], data.y[te].astype(float)
    rows = []
    # each implementation is timed in its own block of seeds: interleaving the two libraries perturbs
    # the BLAS thread pool and caches and slows whichever runs second
    for eps in epsilons:
        for seed in seeds:
            t = time.perf_counter()
            ours = ObjectivePerturbation(epsilon=eps, Lambda=Lambda, loss="logistic", random_state=seed).fit(Xtr, ytr)
            rows.append({"implementation": "dpkernels", "epsilon": eps, "seed": seed, "fit_s": time.perf_counter() - t,
                         "error": 1.0 - ours.score(Xte, yte)})
        for fit_intercept, label in ((False, "diffprivlib (no intercept)"), (True, "diffprivlib (default: intercept)")):
            for seed in seeds:
                t = time.perf_counter()
                theta = diffprivlib_release(Xtr, ytr, eps, Lambda, 1.0, fit_intercept, seed)
                elapsed = time.perf_counter() - t
                score = Xte @ theta[:Xte.shape[1]] + (theta[-1] if fit_intercept else 0.0)
                rows.append({"implementation": label, "epsilon": eps, "seed": seed, "fit_s": elapsed,
                             "error": float(np.mean(np.where(score >= 0, 1.0, -1.0) != yte))})
    return pd.DataFrame(rows)


# ----------------------------------------------------------------------------------------------
# Section 5: random features (Algorithm 3)
# ----------------------------------------------------------------------------------------------
def kernel_feature_norms(D_values: Sequence[int], gamma: float, n_points: int = 20000, random_state: int = 0) -> pd.DataFrame:
    """ERRATA E10: max ||v(x)|| of Algorithm 3's map sqrt(2/D) cos(w'x + psi) over random inputs, per D."""
    from dpkernels.random_features import RandomFourierFeatures

    rng = np.random.default_rng(random_state)
    X = rng.uniform(-1, 1, size=(n_points, 3)) / math.sqrt(3)
    rows = []
    for D in D_values:
        v = RandomFourierFeatures("rbf", math.sqrt(1 / (2 * gamma)), D, variant="phase", random_state=rng).fit_transform(X)
        nrm = np.linalg.norm(v, axis=1)
        rows.append({"D": D, "max_norm": float(nrm.max()), "share_above_1": float(np.mean(nrm > 1.0)), "bound_sqrt2": math.sqrt(2)})
    return pd.DataFrame(rows)


def kernel_experiment(data: Dataset, D_values: Sequence[int], epsilons: Sequence[float], Lambda: float, gamma: float,
                      seeds: Sequence[int], algorithm: str = "objective", n_rows: int | None = None,
                      test_fraction: float = 0.2, random_state: int = 0) -> pd.DataFrame:
    """Algorithm 3 (features scaled to norm <= 1) against the linear Algorithm 2/1 on the same split: test error by epsilon and D."""
    rng = np.random.default_rng(random_state)
    idx = rng.permutation(data.n_samples)[: n_rows or data.n_samples]
    n_test = int(round(test_fraction * len(idx)))
    te, tr = idx[:n_test], idx[n_test:]
    Xtr, ytr, Xte, yte = data.X[tr], data.y[tr].astype(float), data.X[te], data.y[te].astype(float)
    linear_cls = ObjectivePerturbation if algorithm == "objective" else OutputPerturbation
    rows = []
    for eps in epsilons:
        for seed in seeds:
            lin = linear_cls(epsilon=eps, Lambda=Lambda, loss="logistic", random_state=seed).fit(Xtr, ytr)
            rows.append({"model": "linear", "D": 0, "epsilon": eps, "seed": seed, "error": 1.0 - lin.score(Xte, yte)})
            for D in D_values:
                k = PrivateKernelERM(epsilon=eps, Lambda=Lambda, algorithm=algorithm, gamma=gamma, n_components=D,
                                     random_state=seed).fit(Xtr, ytr)
                rows.append({"model": "RBF random features", "D": D, "epsilon": eps, "seed": seed, "error": 1.0 - k.score(Xte, yte)})
    return pd.DataFrame(rows)

