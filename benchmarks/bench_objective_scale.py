"""Issue 27 at scale: objective perturbation's fit time against diffprivlib's, and Algorithm 3's peak memory.

1. ``ObjectivePerturbation.fit`` (logistic, the default floating-point-safe release, noise from a seeded Generator so
   that no seed is hashed) against diffprivlib 0.6.6's ``LogisticRegression`` (no intercept, C = 1 / (n Lambda), the
   same objective perturbation, not certified) on ``--rows`` x ``--dim`` synthetic rows in the unit ball (normal rows
   scaled into the ball, labels from a noisy linear rule), at each epsilon and regulariser (``alpha = 1e-4`` and our
   rule's ``"auto"``, Theorem 18's Lambda at this n, d, epsilon), in two BLAS settings: one thread (threadpoolctl, both
   libraries) and the default threads.  ``--repeats`` pairs per cell, alternating which library runs first; reported:
   the median seconds of each, the ratio of the medians and the median of the paired ratios (which a changing load
   moves less than absolute times), with the load average before and after each cell.
2. Bassily et al.'s Algorithm 3 (``PrivateKernelMarginClassifier``, D = 100 frequencies, k = 200, the frontier's
   rule) on ``--alg3-rows`` x 123 rows (KDDCup99's shape after the frontier's map): peak traced memory of the fit
   (tracemalloc) over the training matrix's bytes.

Writes benchmarks/results/objective_scale.json.  The machine is shared: timings mean something only beside the load
average recorded with them.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import time
import tracemalloc
import warnings
from pathlib import Path

import numpy as np

OUT = Path(__file__).resolve().parent / "results" / "objective_scale.json"


def unit_ball_rows(n: int, d: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Normal rows scaled into the unit ball, labels sign(x'w + noise) in {-1, +1}."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    X /= np.maximum(1.0, np.linalg.norm(X, axis=1))[:, None] * (1.0 + 1e-9)
    y = np.where(X @ rng.normal(size=d) + 0.5 * rng.normal(size=n) > 0, 1, -1)
    return X, y


def time_pair(X: np.ndarray, y: np.ndarray, epsilon: float, alpha: float | str, repeats: int, threads: int | None
              ) -> dict[str, object]:
    """Alternating repeats of our fit and diffprivlib's at the same epsilon and Lambda."""
    from diffprivlib.accountant import BudgetAccountant
    from diffprivlib.models import LogisticRegression
    from threadpoolctl import threadpool_limits

    from dpkernels import ObjectivePerturbation

    n = X.shape[0]
    ours_s, theirs_s, lam, delta = [], [], None, None
    load_before = os.getloadavg()
    with threadpool_limits(limits=threads, user_api="blas"):
        for r in range(repeats):
            order = ("ours", "theirs") if r % 2 == 0 else ("theirs", "ours")
            for who in order:
                t0 = time.perf_counter()
                if who == "ours":
                    est = ObjectivePerturbation(epsilon=epsilon, alpha=alpha, random_state=np.random.default_rng(r)).fit(X, y)
                    ours_s.append(time.perf_counter() - t0)
                    lam, delta = est.alpha_, est.guarantee_.delta
                else:
                    with warnings.catch_warnings():
                        warnings.simplefilter("ignore")  # scipy's L-BFGS-B option deprecation, inside diffprivlib
                        LogisticRegression(epsilon=epsilon, data_norm=1.0, C=1.0 / (n * lam), fit_intercept=False,
                                           random_state=r, accountant=BudgetAccountant()).fit(X, y)
                    theirs_s.append(time.perf_counter() - t0)
    ours, theirs = np.array(ours_s), np.array(theirs_s)
    return {"epsilon": epsilon, "alpha": alpha, "Lambda": lam, "blas_threads": threads or "default", "repeats": repeats,
            "ours_median_s": float(np.median(ours)), "diffprivlib_median_s": float(np.median(theirs)),
            "ratio_of_medians": float(np.median(ours) / np.median(theirs)),
            "median_paired_ratio": float(np.median(ours / theirs)), "ours_s": ours_s, "diffprivlib_s": theirs_s,
            "stated_delta": delta, "load_average_before": load_before, "load_average_after": os.getloadavg()}


def algorithm_3_memory(m: int, d: int) -> dict[str, object]:
    """Peak traced memory of one Algorithm 3 fit over the training matrix's bytes."""
    from dpkernels import PrivateKernelMarginClassifier

    X, y = unit_ball_rows(m, d, 1)
    est = PrivateKernelMarginClassifier(epsilon=1.0, delta=1e-7, rho=0.1, n_frequencies=100, n_components=200,
                                        max_iter=40, random_state=np.random.default_rng(0))
    load_before = os.getloadavg()
    tracemalloc.start()
    t0 = time.perf_counter()
    try:
        est.fit(X, y)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    return {"rows": m, "dim": d, "n_frequencies": 100, "k": 200, "n_iter": int(est.n_iter_),
            "train_mb": X.nbytes / 2**20, "peak_mb": peak / 2**20, "peak_over_train": peak / X.nbytes,
            "fit_s": time.perf_counter() - t0, "load_average_before": load_before, "load_average_after": os.getloadavg()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rows", type=int, default=494_021)
    parser.add_argument("--dim", type=int, default=100)
    parser.add_argument("--epsilons", type=float, nargs="+", default=[1.0])
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--alg3-rows", type=int, default=484_000)
    parser.add_argument("--skip-memory", action="store_true")
    args = parser.parse_args()
    import diffprivlib

    X, y = unit_ball_rows(args.rows, args.dim, 0)
    cells = []
    for threads in (1, None):
        for eps in args.epsilons:
            for alpha in (1e-4, "auto"):
                cell = time_pair(X, y, eps, alpha, args.repeats, threads)
                cells.append(cell)
                print(f"threads={cell['blas_threads']} eps={eps:g} alpha={alpha}: ours {cell['ours_median_s']:.3f} s, "
                      f"diffprivlib {cell['diffprivlib_median_s']:.3f} s, ratio {cell['ratio_of_medians']:.2f} (paired "
                      f"{cell['median_paired_ratio']:.2f}), load {cell['load_average_before'][0]:.1f} -> "
                      f"{cell['load_average_after'][0]:.1f}", flush=True)
    result = {"rows": args.rows, "dim": args.dim, "diffprivlib_version": diffprivlib.__version__, "cpus": os.cpu_count(),
              "machine": platform.processor() or platform.machine(), "fit_time": cells}
    if not args.skip_memory:
        del X, y
        mem = algorithm_3_memory(args.alg3_rows, 123)
        result["algorithm_3_memory"] = mem
        print(f"Algorithm 3 at {mem['rows']:,} x 123: peak {mem['peak_mb']:.0f} MB = {mem['peak_over_train']:.2f} x the "
              f"training matrix ({mem['train_mb']:.0f} MB)", flush=True)
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text(json.dumps(result, indent=2) + "\n")
    print(f"wrote {OUT}")


if __name__ == "__main__":
    main()
