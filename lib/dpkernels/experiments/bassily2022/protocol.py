"""Bassily, Mohri and Suresh (2022) on data (the paper has none): Adult and KDDCup99 margin curves of Algorithm 2 next to
the other papers' mechanisms, and our private choice of rho (the paper's Appendix F was not recovered)."""

from __future__ import annotations

import math
import warnings
from collections.abc import Sequence

import numpy as np
import pandas as pd
from joblib import Parallel, delayed
from numpy.typing import NDArray
from sklearn.svm import LinearSVC

from dpkernels._validation import PrivacyLeakWarning
from dpkernels.accounting import compose, gaussian_sigma
from dpkernels.bounds import bassily as B
from dpkernels.datasets import load_adult, load_kddcup99
from dpkernels.jl import make_jl
from dpkernels.mechanisms.bassily import (
    PrivateMarginSelection,
    calibrate_noisy_gd,
    gradient_sensitivity,
    noisy_projected_gd,
    project_rows,
)

from .statements import make_baselines

Array = NDArray[np.float64]


# ----------------------------------------------------------------------------------------------
# Adult and KDDCup99: margin curves next to the other papers' mechanisms; the private choice of rho
# ----------------------------------------------------------------------------------------------
def real_data(name: str, n_train: int, n_test: int, random_state: int = 0) -> tuple[Array, Array, Array, Array]:
    """A seeded split of Adult (45,222 x 105) or of KDDCup99's 10% file (DoS task, 118 columns), Chaudhuri et al.'s
    preprocessing (rows of norm <= 1).  Raises :class:`dpkernels.datasets.DatasetUnavailable` without the KDD file."""
    if name == "adult":
        ds = load_adult(preprocess="chaudhuri")  # the paper's preprocessing (reads the rows' column maxima)
    elif name == "kddcup99":
        ds = load_kddcup99(target="dos", subsample=n_train + n_test, random_state=random_state, preprocess="chaudhuri")
    else:
        raise ValueError(f"unknown data set {name!r}")
    rng = np.random.default_rng(random_state)
    idx = rng.permutation(ds.n_samples)
    if n_train + n_test > len(idx):
        raise ValueError(f"{name} has {len(idx)} rows, fewer than {n_train} + {n_test}")
    tr, te = idx[:n_train], idx[n_train:n_train + n_test]
    return ds.X[tr], ds.y[tr].astype(np.float64), ds.X[te], ds.y[te].astype(np.float64)


def _sweep_alg2(Xtr: Array, ytr: Array, Xte: Array, yte: Array, rhos: Sequence[float], epsilon: float, delta: float,
                k_cap: int, max_iter: int, rng: np.random.Generator, Lambda: float = 1.0, r: float = 1.0) -> list[dict]:
    """Algorithm 2 for every rho at one epsilon, one JL map, all rho in one vectorised pass (the same computation as
    :class:`PrivateMarginClassifier` with n_components = min(paper's k, k_cap) for each rho; common random numbers)."""
    m = len(ytr)
    k = min(B.algorithm_2_k(epsilon, delta, m, 0.05), int(k_cap))
    proj = make_jl("rademacher", k, rng).fit(Xtr[:1])
    Z = project_rows(proj.transform(Xtr), 2 * r)
    rhos = np.asarray(rhos, dtype=np.float64)
    L = 2 * r / rhos
    s1 = gaussian_sigma(epsilon, delta, 1.0)
    T = B.noisy_gd_iterations(m, k, s1, max_iter)
    sig = np.array([calibrate_noisy_gd(epsilon, delta, gradient_sensitivity(Lc, m), T) for Lc in L])
    eta = 2 * Lambda / (np.sqrt(L * L + k * sig * sig) * math.sqrt(T))
    W = noisy_projected_gd(Z, ytr, rho=rhos, radius=2 * Lambda, sigma=sig, n_iter=T, learning_rate=eta, random_state=rng,
                           n_chains=len(rhos))
    Zte = proj.transform(Xte)
    err = np.mean(np.where(Zte @ W.T > 0, 1.0, -1.0) != yte[:, None], axis=0)
    return [{"method": "Algorithm 2", "rho": float(rho), "epsilon": epsilon, "delta": delta, "k": k, "n_iter": T,
             "error": float(e)} for rho, e in zip(rhos, err)]


def margin_curves(name: str, n_train: int, n_test: int, rhos: Sequence[float], epsilons: Sequence[float], seeds: int,
                  delta: float = 1e-6, k_cap: int = 256, max_iter: int = 200, baselines: dict | None = None,
                  n_jobs: int = 1, random_state: int = 0) -> pd.DataFrame:
    """Test error of Algorithm 2 against rho and epsilon on a real data set, and of the other papers' mechanisms (each
    at every value of its grid) and a non-private LinearSVC, one row per (seed, method, setting)."""
    Xtr, ytr, Xte, yte = real_data(name, n_train, n_test, random_state)
    baselines = make_baselines() if baselines is None else baselines

    def one(s: int) -> list[dict]:
        rng = np.random.default_rng(random_state + 17 * s)
        out = []
        for eps in epsilons:
            for row in _sweep_alg2(Xtr, ytr, Xte, yte, rhos, eps, delta, k_cap, max_iter, rng):
                out.append({**row, "seed": s, "param": "rho", "value": row["rho"]})
            for mname, (make, pname, grid) in baselines.items():
                for v in grid:
                    with warnings.catch_warnings():
                        warnings.simplefilter("ignore", PrivacyLeakWarning)
                        est = make(eps, v, random_state + 31 * s).fit(Xtr, ytr)
                    out.append({"method": mname, "epsilon": eps, "delta": 0.0, "seed": s, "param": pname, "value": v,
                                "error": float(np.mean(est.predict(Xte) != yte))})
        return out

    rows = [r for part in Parallel(n_jobs=n_jobs)(delayed(one)(s) for s in range(seeds)) for r in part]
    svc = LinearSVC(C=1.0).fit(Xtr, ytr)
    rows.append({"method": "non-private LinearSVC (C = 1)", "epsilon": np.inf, "delta": 0.0, "seed": 0, "param": "C",
                 "value": 1.0, "error": float(np.mean(svc.predict(Xte) != yte))})
    df = pd.DataFrame(rows)
    df["dataset"] = name
    df["n_train"] = n_train
    return df


def rho_selection_experiment(name: str, n_train: int, n_test: int, rhos: Sequence[float], epsilon: float, seeds: int,
                             delta: float = 1e-6, k_cap: int = 256, max_iter: int = 200, validation_fraction: float = 0.2,
                             n_jobs: int = 1, random_state: int = 0) -> pd.DataFrame:
    """:class:`PrivateMarginSelection` (ours) over ``rhos`` at total (epsilon, delta): the chosen rho and its test error
    per seed, with the accounting of the composition (dp-accounting's PLD accountant over the G candidates, each the
    T-step Gaussian mechanism, against the Gaussian-DP calibration the mechanism uses)."""
    Xtr, ytr, Xte, yte = real_data(name, n_train, n_test, random_state)
    mt = n_train - int(round(validation_fraction * n_train))
    k = min(B.algorithm_2_k(epsilon, delta, mt, 0.05), int(k_cap))

    def one(s: int) -> dict:
        est = PrivateMarginSelection(rhos=tuple(rhos), epsilon=epsilon, delta=delta, data_norm=1.0, n_components=k,
                                     validation_fraction=validation_fraction, max_iter=max_iter,
                                     random_state=random_state + 101 * s).fit(Xtr, ytr)
        return {"seed": s, "rho_selected": est.rho_, "error": float(np.mean(est.predict(Xte) != yte)), "k": k,
                "n_iter": est.n_iter_, "epsilon_total": est.guarantee_.epsilon, "delta": delta,
                "epsilon_accounted_gdp": est.epsilon_accounted_, "sigma_selected": est.noise_sigma_}

    df = pd.DataFrame(Parallel(n_jobs=n_jobs)(delayed(one)(s) for s in range(seeds)))
    # the composition through dp-accounting's PLD accountant (G events, each T Gaussian steps = one Gaussian with
    # sensitivity sqrt(T)): an independent check of the Gaussian-DP calibration the mechanism uses
    G, T = len(rhos), int(df["n_iter"].iloc[0])
    mult = calibrate_noisy_gd(epsilon, delta, 1.0, G * T)
    df["epsilon_accounted_pld"] = compose([("gaussian", mult, math.sqrt(T))] * G, delta)
    df["dataset"] = name
    return df

