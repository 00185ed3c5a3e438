"""Rubinstein et al. (2012): Tables 1 and 2 (printed against reproduced, each pair verified) and the Adult
illustration (the paper has no experiments)."""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable, Sequence

import numpy as np
import pandas as pd
from joblib import Parallel, delayed
from numpy.typing import NDArray
from scipy import integrate
from threadpoolctl import threadpool_limits
from tqdm import tqdm

from dpkernels._validation import UtilityWarning
from dpkernels.datasets import load_adult
from dpkernels.kernels import CauchyKernel, LaplacianKernel, RBFKernel, TranslationInvariantKernel
from dpkernels.mechanisms.rubinstein import PrivateSVM

from .records import KERNEL_MC_SE, kernel_pair_consistent

Array = NDArray[np.float64]


# ----------------------------------------------------------------------------------------------
# Tables 1 and 2
# ----------------------------------------------------------------------------------------------
PUBLISHED_TABLE_1 = {
    "RBF": "exp(-||D||_2^2 / (2 sigma^2))",
    "Laplacian": "exp(-||D||_1)",
    "Cauchy": "prod_i 2 / (1 + D_i^2)",
}
PUBLISHED_TABLE_2 = {
    ("RBF", "g"): "exp(-||D||_2^2 / (2 sigma^2))",
    ("RBF", "p"): "(2 pi)^{-d/2} exp(-||w||_2^2 / 2)",
    ("Laplacian", "g"): "exp(-||D||_1)",
    ("Laplacian", "p"): "prod_i 1 / (pi (1 + w_i^2))",
    ("Cauchy", "g"): "prod_i 2 / (1 + D_i^2)",
    ("Cauchy", "p"): "exp(-||D||_1)",
}
#: Our reproduction, normalised so that g(0) = 1 and p is a probability density, with bandwidth sigma.
REPRODUCED_TABLE_2 = {
    ("RBF", "g"): "exp(-||D||_2^2 / (2 sigma^2))",
    ("RBF", "p"): "(sigma^2 / (2 pi))^{d/2} exp(-sigma^2 ||w||_2^2 / 2), i.e. N(0, sigma^-2 I)",
    ("Laplacian", "g"): "exp(-||D||_1 / sigma)",
    ("Laplacian", "p"): "prod_i sigma / (pi (1 + sigma^2 w_i^2)), i.e. Cauchy(0, 1/sigma) coordinates",
    ("Cauchy", "g"): "prod_i 1 / (1 + D_i^2 / sigma^2)",
    ("Cauchy", "p"): "prod_i (sigma / 2) exp(-sigma |w_i|), i.e. Laplace(0, 1/sigma) coordinates",
}


def _published_pair(name: str, d: int, sigma: float) -> tuple[Callable[[Array], Array], Callable[[Array], Array]]:
    """The printed (g, p) of Table 2 as functions (p as printed, in terms of w), for bandwidth sigma."""
    if name == "RBF":
        return (lambda D: np.exp(-np.sum(D**2, -1) / (2 * sigma**2)),
                lambda w: (2 * np.pi) ** (-d / 2) * np.exp(-np.sum(w**2, -1) / 2))
    if name == "Laplacian":
        return (lambda D: np.exp(-np.sum(np.abs(D), -1)), lambda w: np.prod(1 / (np.pi * (1 + w**2)), -1))
    return (lambda D: np.prod(2 / (1 + D**2), -1), lambda w: np.exp(-np.sum(np.abs(w), -1)))


def _mc_kernel_error(g: Callable[[Array], Array], freqs: Array, diffs: Array) -> tuple[float, float]:
    """max_j ``|mean_m cos <w_m, D_j> - g(D_j)|`` and the largest standard error."""
    cos = np.cos(diffs @ freqs.T)
    est = cos.mean(axis=1)
    se = cos.std(axis=1) / math.sqrt(freqs.shape[0])
    return float(np.max(np.abs(est - g(diffs)))), float(np.max(se))


def kernel_tables(n_freq: int = 200_000, random_state: int = 0) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Tables 1 and 2 (published and reproduced) and a verification of each (g, p) pair.

    For each row: is p a probability density (numerical integral over R, d = 1)?  Is g(0) = 1 (so that
    k-hat(x, x) = 1 = k(x, x))?  Does sampling w from (normalised) p give E cos <w, D> = g(D)?  The RBF
    row is checked at sigma = 1 and sigma = 2 (Table 2 prints p for sigma = 1 only).  Returns
    (table_1, table_2) in the long format of :func:`dpkernels.report.write_table`.
    """
    rng = np.random.default_rng(random_state)
    d = 2
    diffs = np.array([[0.0, 0.0], [0.3, -0.2], [1.0, 0.5], [-1.5, 0.7], [2.0, 2.0]])
    ours: dict[str, TranslationInvariantKernel] = {"RBF": RBFKernel(1.0), "Laplacian": LaplacianKernel(1.0), "Cauchy": CauchyKernel(1.0)}
    t1 = []
    for name, formula in PUBLISHED_TABLE_1.items():
        t1.append({"kernel": name, "column": "g", "source": "published", "value": formula})
        t1.append({"kernel": name, "column": "g", "source": "reproduced", "value": REPRODUCED_TABLE_2[(name, "g")]})
    rows = []
    for name in ("RBF", "Laplacian", "Cauchy"):
        for sigma in ((1.0, 2.0) if name == "RBF" else (1.0,)):
            g_pub, p_pub = _published_pair(name, d, sigma)
            mass_1d = integrate.quad(lambda w: float(p_pub(np.array([[w]]))[0]) if name != "RBF" else
                                     float((2 * np.pi) ** -0.5 * np.exp(-w * w / 2)), -np.inf, np.inf)[0]
            mass = mass_1d**d  # product form in d dimensions
            g0 = float(g_pub(np.zeros((1, d)))[0])
            # sample the printed p after normalising it (its shape is what a sampler would use)
            if name == "RBF":
                freqs = rng.standard_normal((n_freq, d))
            elif name == "Laplacian":
                freqs = rng.standard_cauchy((n_freq, d))
            else:
                freqs = rng.laplace(0.0, 1.0, (n_freq, d))
            err_pub, se_pub = _mc_kernel_error(g_pub, freqs, diffs)
            kern = RBFKernel(sigma) if name == "RBF" else ours[name]
            err_ours, se_ours = _mc_kernel_error(kern.g, kern.sample_frequencies(n_freq, d, rng), diffs)
            label = f"{name} (sigma={sigma:g})" if name == "RBF" else name
            verification = (f"integral of p = {mass:.4g}; g(0) = {g0:.4g}; sampling p: max |E cos<w,D> - g(D)| = {err_pub:.3g} "
                            f"(5 SE = {KERNEL_MC_SE * se_pub:.2g}, {n_freq} frequencies)")
            ok_pub = kernel_pair_consistent(mass, g0, err_pub, se_pub)
            rows.append({"kernel": label, "column": "g, p", "source": "published",
                         "value": f"{PUBLISHED_TABLE_2[(name, 'g')]} ; {PUBLISHED_TABLE_2[(name, 'p')]}",
                         "verification": verification, "consistent": ok_pub,
                         "mc_error": err_pub, "mc_5se": KERNEL_MC_SE * se_pub, "p_mass": mass, "g0": g0})
            rows.append({"kernel": label, "column": "g, p", "source": "reproduced",
                         "value": f"{REPRODUCED_TABLE_2[(name, 'g')]} ; {REPRODUCED_TABLE_2[(name, 'p')]}",
                         "verification": f"sampling p: max |E cos<w,D> - g(D)| = {err_ours:.3g} (5 SE = {KERNEL_MC_SE * se_ours:.2g}, {n_freq} frequencies)",
                         "consistent": kernel_pair_consistent(1.0, 1.0, err_ours, se_ours), "mc_error": err_ours,
                         "mc_5se": KERNEL_MC_SE * se_ours,
                         "p_mass": 1.0, "g0": 1.0})
    return pd.DataFrame(t1), pd.DataFrame(rows)




# ----------------------------------------------------------------------------------------------
# Adult: privacy-utility of PrivateSVM with an RBF kernel
# ----------------------------------------------------------------------------------------------
def _adult_fit(Xtr: Array, ytr: Array, Xte: Array, yte: Array, epsilons: Sequence[float], d_hat: int, seed: int, C: float,
               sigma: float, n_draws: int) -> list[dict[str, object]]:
    """One PrivateSVM fit (one certified solve) and ``n_draws`` releases per epsilon (recalibrated noise)."""
    with warnings.catch_warnings():
        # the figure shows accuracy against epsilon, noise-dominated at small epsilon on purpose (UtilityWarning)
        warnings.simplefilter("ignore", UtilityWarning)
        model = PrivateSVM(epsilon=1.0, alpha=1.0 / C, sigma=sigma, n_components=d_hat, keep_nonprivate=True,
                           random_state=seed).fit(Xtr, ytr)
    Zte = model.rff_.transform(Xte)
    f_np = Zte @ model.nonprivate_.coef
    rows = [{"d_hat": d_hat, "seed": seed, "epsilon": np.inf, "method": "non-private RFF SVM",
             "accuracy": float(np.mean(np.where(f_np >= 0, 1, -1) == yte)), "sup_distance": 0.0}]
    for eps in epsilons:
        W = model.sample_releases(n_draws, np.random.default_rng([seed, d_hat, int(eps * 1000)]), epsilon=eps)
        F = Zte @ W.T
        acc = np.mean(np.where(F >= 0, 1, -1) == yte[:, None], axis=0)
        sup = np.max(np.abs(F - f_np[:, None]), axis=0)
        rows += [{"d_hat": d_hat, "seed": seed, "epsilon": eps, "method": "PrivateSVM", "accuracy": float(a),
                  "sup_distance": float(s)} for a, s in zip(acc, sup)]
    return rows


def adult_privacy_utility(epsilons: Sequence[float], d_hats: Sequence[int], seeds: Sequence[int], C: float = 1.0,
                          sigma: float = 1.0, n_rows: int | None = None, n_draws: int = 20, test_fraction: float = 0.2,
                          random_state: int = 0, n_jobs: int = 1) -> pd.DataFrame:
    """Test accuracy and sup-norm distance to the non-private SVM (over the test points) against epsilon and d-hat.

    Adult with Chaudhuri et al.'s preprocessing, labels +1 = >50K.  For each (d-hat, seed), in parallel threads: one fit of
    :class:`PrivateSVM` (one non-private solve, default lattice noise), then ``n_draws`` releases per epsilon.  The
    non-private RFF SVM and the majority-class classifier are the baselines.
    """
    data = load_adult(preprocess="chaudhuri")  # the paper's preprocessing (reads the rows' column maxima)
    rng = np.random.default_rng(random_state)
    idx = rng.permutation(data.n_samples)
    if n_rows is not None:
        idx = idx[:n_rows]
    n_test = int(round(test_fraction * len(idx)))
    test, train = idx[:n_test], idx[n_test:]
    Xtr, ytr, Xte, yte = data.X[train], data.y[train].astype(float), data.X[test], data.y[test].astype(float)
    majority = float(max(np.mean(yte == 1), np.mean(yte == -1)))
    jobs = [(d_hat, seed) for d_hat in d_hats for seed in seeds]
    # the largest problems first, so that the two workers finish together; threads (liblinear, the feature map and
    # the BLAS products release the GIL): no copies of the data, no worker processes to start or to recycle
    jobs.sort(key=lambda j: -j[0])
    with threadpool_limits(limits=1, user_api="blas"):
        blocks = Parallel(n_jobs=n_jobs, prefer="threads")(
            delayed(_adult_fit)(Xtr, ytr, Xte, yte, epsilons, d_hat, seed, C, sigma, n_draws)
            for d_hat, seed in tqdm(jobs, desc="Adult fits", leave=False))
    df = pd.DataFrame([r for block in blocks for r in block])
    df["majority"] = majority
    df["n_train"] = len(train)
    return df.sort_values(["d_hat", "seed", "epsilon"], kind="stable").reset_index(drop=True)


def adult_summary(adult: pd.DataFrame) -> pd.DataFrame:
    """Mean test accuracy per (d-hat, epsilon) with its standard error over the seeds (each seed's frequencies and
    non-private solve are shared by its noise draws, so the seeds are the independent runs: n_runs = seeds, each the
    mean of its draws), and the median sup distance."""
    per_seed = adult.groupby(["method", "d_hat", "epsilon", "seed"]).agg(accuracy=("accuracy", "mean"),
                                                                         sup_distance=("sup_distance", "median")).reset_index()
    out = per_seed.groupby(["method", "d_hat", "epsilon"]).agg(accuracy=("accuracy", "mean"), sd=("accuracy", "std"),
                                                               n_runs=("accuracy", "size"),
                                                               sup_distance=("sup_distance", "median")).reset_index()
    out["se"] = out["sd"] / np.sqrt(out["n_runs"])
    return out


