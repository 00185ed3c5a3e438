"""The maintained peer, IBM diffprivlib 0.6.6, held to the paper's standard (findings D1-D2)."""

from __future__ import annotations

import math
import time
import warnings
from collections.abc import Sequence

import numpy as np
import pandas as pd
from joblib import Parallel, delayed
from numpy.typing import NDArray

from dpkernels.audit import epsilon_lower_bound
from dpkernels.bounds import chaudhuri as B
from dpkernels.datasets import Dataset
from dpkernels.losses import make_loss
from dpkernels.mechanisms.chaudhuri import ObjectivePerturbation

from .audits import AuditResult, ObjectiveMechanism, audit_objective_perturbation, exact_objective_llr, objective_pair_loss
from .protocol import holdout_split

Array = NDArray[np.float64]

# ----------------------------------------------------------------------------------------------
# diffprivlib: Algorithm 2 in IBM's library, held to the same standard
# ----------------------------------------------------------------------------------------------
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


def diffprivlib_audit(epsilon: float, n_releases: int, n_ours: int, R: float = 30.0, Lambda: float = 0.2, n_jobs: int = 1,
                      random_state: int = 0) -> tuple[AuditResult, AuditResult]:
    """Theorem 9 with data_norm R = 30 (n = 5, d = 1, C = 1, eps = 1, no intercept: four rows at the origin and one at
    x = 30 (D) or x = 0 (D')): diffprivlib's own releases (its c R calibration, D1) against ours (c R^2), each with
    the exact loss of the pair and a statistical audit (``n_releases`` diffprivlib fits per side, ``n_ours`` of our
    releases, which are solved together); our negative control as in :func:`audit_objective_perturbation`."""
    n = 5
    XA = np.zeros((n, 1))
    XA[-1, 0] = R
    XB = np.zeros((n, 1))
    y = np.array([1.0, -1.0, 1.0, -1.0, 1.0])
    cst = diffprivlib_constants(epsilon, n, Lambda, R, False)
    mech = ObjectiveMechanism(Lambda, cst["dpl_Delta"], cst["dpl_beta"], False)
    L = make_loss("logistic")
    exact = objective_pair_loss(XA, y, XB, y, L, mech, 40.0)
    rel = Parallel(n_jobs=n_jobs)(delayed(diffprivlib_release)(X, y, epsilon, Lambda, R, False, s)
                                  for X, base in ((XA, 0), (XB, 10**7)) for s in range(base, base + n_releases))
    relA, relB = np.array(rel[:n_releases]), np.array(rel[n_releases:])
    s1 = exact_objective_llr(relA, XA, y, XB, y, L, mech)
    s2 = exact_objective_llr(relB, XA, y, XB, y, L, mech)
    lb = epsilon_lower_bound(np.round(s1, 9), np.round(s2, 9), random_state=random_state).epsilon_lb
    theirs = AuditResult("diffprivlib 0.6.6 LogisticRegression, data_norm = 30", epsilon, lb, exact, n_releases,
                         float("nan"), float("nan"), float("nan"), "diffprivlib's c R calibration (D1); releases from diffprivlib")
    ours = audit_objective_perturbation("logistic", epsilon, n_ours, Lambda=Lambda, data_norm=R, random_state=random_state)
    return theirs, ours


def diffprivlib_comparison(data: Dataset, epsilons: Sequence[float], Lambda: float, seeds: Sequence[int],
                           test_fraction: float = 0.2, random_state: int = 0) -> pd.DataFrame:
    """Our ObjectivePerturbation (logistic) against diffprivlib's LogisticRegression on one split, same Lambda and
    epsilon grid, both without an intercept, plus diffprivlib with its default intercept: test error and fit time."""
    Xtr, ytr, Xte, yte = holdout_split(data, test_fraction, random_state)
    rows = []
    # each implementation is timed in its own block of seeds: interleaving the two libraries perturbs
    # the BLAS thread pool and caches and slows whichever runs second
    for eps in epsilons:
        for seed in seeds:
            t = time.perf_counter()
            ours = ObjectivePerturbation(epsilon=eps, alpha=Lambda, loss="logistic", random_state=seed).fit(Xtr, ytr)
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


def diffprivlib_intercept(seeds: int, run_diffprivlib: bool) -> pd.DataFrame:
    """D2: diffprivlib's default ``fit_intercept=True`` with eps' > 0 leaves the intercept unregularised; the perturbed
    objective on a 5-row data set then has no minimiser whenever the noise's intercept coordinate b_0 lies outside
    [-#negatives, #positives] (noise replicated from diffprivlib's RandomState), and L-BFGS releases wherever it stops."""
    Xi = np.array([[0.1], [0.2], [-0.1], [0.3], [-0.2]])
    yi = np.array([1.0, 1.0, 1.0, -1.0, -1.0])
    ci = diffprivlib_constants(1.0, 5, 0.2, 1.0, True)
    rows = []
    for s in range(seeds):
        b = diffprivlib_noise(s, 2, ci["dpl_eps_prime"], ci["R"])
        unbounded = not (-2 <= b[1] <= 3)  # intercept slope at infinity: #neg + b_0 (b_0 -> +inf), #pos - b_0 (-inf)
        rel = diffprivlib_release(Xi, yi, 1.0, 0.2, 1.0, True, s) if run_diffprivlib else np.full(2, np.nan)
        rows.append({"seed": s, "b_w": b[0], "b_0": b[1], "no_minimiser": unbounded, "released_w": rel[0],
                     "released_intercept": rel[1]})
    return pd.DataFrame(rows)
