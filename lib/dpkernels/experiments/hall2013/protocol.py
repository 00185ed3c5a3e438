"""Hall, Rinaldo and Wasserman (2013) on data: the kernel machine against the other papers' private SVMs, Adult's
KDE data with public bounds, and the Nystrom kernel machine at large n.  (The paper has no experiments; the journal's
one KDE figure is regenerated in the notebook from :mod:`dpkernels.bounds.hall`'s mixture.)"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd
from joblib import Parallel, delayed
from numpy.typing import NDArray

from dpkernels.mechanisms.hall import PrivateKernelMachine

Array = NDArray[np.float64]




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
        hall = PrivateKernelMachine(epsilon=epsilons[0], delta=delta, alpha=2.0 * lam, sigma=sigma, classes=[-1, 1],
                                    points=Xte, keep_nonprivate=True, random_state=seed).fit(Xtr, ytr)
        f0 = hall.nonprivate_function(Xte)
        rows.append({**base, "method": "non-private kernel machine (hinge)", "epsilon": np.inf, "privacy": "none",
                     "accuracy": float(np.mean(np.where(f0 >= 0, 1, -1) == yte))})
        for eps in epsilons:
            rel = hall.sample_releases(Xte, 1, random_state=np.random.default_rng([seed, 1, int(eps * 1000)]), epsilon=eps)[0]
            rows.append({**base, "method": "Hall et al. GP release (hinge)", "epsilon": eps, "privacy": f"({eps:g}, {delta:g})-DP",
                         "accuracy": float(np.mean(np.where(rel >= 0, 1, -1) == yte))})
            svm = PrivateSVM(epsilon=eps, alpha=2.0 * lam, sigma=sigma, n_components=d_hat,
                             random_state=np.random.default_rng([seed, 2, int(eps * 1000)])).fit(Xtr, ytr)
            rows.append({**base, "method": "Rubinstein et al. PrivateSVM (hinge)", "epsilon": eps, "privacy": f"{eps:g}-DP",
                         "accuracy": float(svm.score(Xte, yte))})
            erm = PrivateKernelERM(epsilon=eps, alpha=2.0 * lam, sigma=sigma, n_components=d_hat,
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
    km = PrivateKernelMachine(epsilon=epsilon, delta=delta, alpha=2.0 * lam, sigma=sigma, solver="nystrom", landmarks=landmarks,
                              classes=[-1, 1], keep_nonprivate=True, random_state=random_state).fit(Xtr, ytr)
    seconds = time.perf_counter() - t0
    f0 = km.nonprivate_function(Xte)
    return pd.DataFrame([{"n_train": n_train, "landmarks": len(landmarks), "epsilon": epsilon, "delta": delta,
                          "accuracy_private": float(km.score(Xte, yte)),
                          "accuracy_nonprivate": float(np.mean(np.where(f0 >= 0, 1, -1) == yte)),
                          "noise_multiplier": km.noise_multiplier_, "fit_seconds": seconds}])

