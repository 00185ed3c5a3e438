"""Chaudhuri et al. (2011), Algorithm 2 (objective perturbation): the solver's speed, measured two ways.

1. Batched against per-draw (issue 14b).  One Adult training fold (40,698 rows), K noise draws of Algorithm 2 at
   several (loss, Lambda, eps): :func:`solve_smooth_erm_batch` (one data pass per iteration for all draws, started
   and preconditioned at the non-private minimiser) against a loop of per-draw Newton solves warm-started at the same
   minimiser (the previous implementation), both to the gradient norm the certificate needs.  Reported: seconds per
   draw, the ratio, and the largest distance between the two answers against the sum of their certificates.

2. One fit against diffprivlib (issue 14f).  ``ObjectivePerturbation.fit`` (logistic, certified) against diffprivlib
   0.6.6's ``LogisticRegression`` (no intercept, L-BFGS at tol 1e-4, not certified) on an 80/20 Adult split,
   Lambda = 10^-2.5 (C = 1/(n Lambda)), ``--seeds`` seeds x eps grid, in two settings: BLAS limited to one thread
   (threadpoolctl, both libraries), and default threads while a second process keeps one of the two cores busy.
   Repeats alternate which library runs first; reported: median seconds per fit, ratio, and the mean test error of
   each (equal error: the same noise law).  Timings mean something only on an otherwise quiet machine; the result
   file records the load average before and after.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing as mp
import os
import time
from pathlib import Path

import numpy as np


def _busy(stop: "mp.synchronize.Event") -> None:  # a process that keeps one core busy
    x = 0.0
    while not stop.is_set():
        for i in range(100000):
            x += i * 1e-9


def batched_against_loop(K: int, repeats: int) -> list[dict[str, object]]:
    from sklearn.model_selection import KFold

    from dpkernels.bounds import chaudhuri as B
    from dpkernels.experiments.chaudhuri2011 import chaudhuri_data
    from dpkernels.losses import make_loss
    from dpkernels.mechanisms.chaudhuri import certified_gtol, unit_gamma_noise
    from dpkernels.solvers.smooth import Design, blas_threads, solve_smooth_erm, solve_smooth_erm_batch

    data = chaudhuri_data("adult")
    tr, _ = next(KFold(10, shuffle=True, random_state=2011).split(data.X))
    X, y = data.X[tr], data.y[tr].astype(float)
    n, d = X.shape
    design = Design(X, y)
    gtol = certified_gtol(1e-3, 1.0, n)
    rows = []
    for loss, e, eps in (("logistic", -2.5, 0.1), ("logistic", -7, 0.1), ("logistic", -2, 0.02), ("logistic", -2.5, 0.5),
                         ("huber", -2.5, 0.1), ("huber", -7, 0.1)):
        L = make_loss(loss)
        p = B.theorem_9_parameters(eps, n, 10.0**e, L.curvature)
        lam = 10.0**e + p.Delta
        centre = solve_smooth_erm(design, None, L, lam, gtol=gtol).coef
        Bm = unit_gamma_noise(K, d, "lattice", np.random.default_rng(0)) / p.beta
        t_batch, t_loop = [], []
        for _ in range(repeats):
            t = time.perf_counter()
            batch = solve_smooth_erm_batch(design, None, L, lam, Bm, center=centre, gtol=gtol)
            t_batch.append((time.perf_counter() - t) / K)
            t = time.perf_counter()
            with blas_threads(0):
                loop = [solve_smooth_erm(X, y, L, lam, b=b, gtol=gtol, w0=centre) for b in Bm]
            t_loop.append((time.perf_counter() - t) / K)
        dist = max(float(np.linalg.norm(batch.coef[k] - loop[k].coef) / (batch.distance_bound[k] + loop[k].distance_bound))
                   for k in range(K))
        rows.append({"loss": loss, "log10_Lambda": e, "epsilon": eps, "branch": p.branch, "draws": K,
                     "batched_s_per_draw": float(np.median(t_batch)), "loop_s_per_draw": float(np.median(t_loop)),
                     "speedup": float(np.median(t_loop) / np.median(t_batch)),
                     "max_distance_over_certificates": dist, "all_certified": bool(batch.converged.all())})
        print(rows[-1], flush=True)
    return rows


def one_fit(epsilons: list[float], seeds: int, repeats: int, setting: str) -> dict[str, object]:
    from threadpoolctl import threadpool_limits

    from dpkernels.datasets import load_adult
    from dpkernels.experiments.chaudhuri2011 import diffprivlib_release
    from dpkernels.mechanisms import ObjectivePerturbation

    data = load_adult(preprocess="chaudhuri")
    rng = np.random.default_rng(0)
    idx = rng.permutation(data.n_samples)
    n_test = int(round(0.2 * len(idx)))
    te, tr = idx[:n_test], idx[n_test:]
    Xtr, ytr, Xte, yte = data.X[tr], data.y[tr].astype(float), data.X[te], data.y[te].astype(float)
    lam = 10**-2.5

    def ours(eps: float, seed: int) -> tuple[float, float]:
        t = time.perf_counter()
        m = ObjectivePerturbation(epsilon=eps, alpha=lam, random_state=seed).fit(Xtr, ytr)
        return time.perf_counter() - t, 1.0 - m.score(Xte, yte)

    def theirs(eps: float, seed: int) -> tuple[float, float]:
        t = time.perf_counter()
        w = diffprivlib_release(Xtr, ytr, eps, lam, 1.0, False, seed)
        return time.perf_counter() - t, float(np.mean(np.where(Xte @ w >= 0, 1.0, -1.0) != yte))

    stop = mp.Event()
    busy = mp.Process(target=_busy, args=(stop,)) if setting == "default threads, one core busy" else None
    if busy is not None:
        busy.start()
    limit = threadpool_limits(limits=1, user_api="blas") if setting == "one BLAS thread" else None
    res: dict[str, list[tuple[float, float]]] = {"dpkernels": [], "diffprivlib": []}
    try:
        ours(0.1, 0), theirs(0.1, 0)  # warm-up (imports, thread pools)
        for r in range(repeats):
            order = (("dpkernels", ours), ("diffprivlib", theirs)) if r % 2 == 0 else (("diffprivlib", theirs), ("dpkernels", ours))
            for name, fn in order:
                for eps in epsilons:
                    for seed in range(seeds):
                        res[name].append(fn(eps, 100 * r + seed))
    finally:
        if limit is not None:
            limit.restore_original_limits()
        if busy is not None:
            stop.set()
            busy.join()
    med = {k: float(np.median([t for t, _ in v])) for k, v in res.items()}
    err = {k: float(np.mean([e for _, e in v])) for k, v in res.items()}
    sd = {k: float(np.std([e for _, e in v], ddof=1) / np.sqrt(len(v))) for k, v in res.items()}
    out = {"setting": setting, "median_fit_s": med, "ratio_dpkernels_over_diffprivlib": med["dpkernels"] / med["diffprivlib"],
           "mean_test_error": err, "se_test_error": sd, "fits_each": len(res["dpkernels"])}
    print(out, flush=True)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--seeds", type=int, default=5)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--draws", type=int, default=50)
    parser.add_argument("--epsilons", type=float, nargs="+", default=[0.05, 0.1, 0.5, 1.0])
    args = parser.parse_args()
    from dpkernels.experiments.chaudhuri2011 import diffprivlib_available

    ok, version = diffprivlib_available()
    if not ok:
        raise SystemExit(f"diffprivlib unavailable: {version}")
    load_before = os.getloadavg()
    result = {"diffprivlib_version": version, "cpus": os.cpu_count(), "load_average_before": load_before,
              "batched_against_loop": batched_against_loop(args.draws, args.repeats),
              "one_fit": [one_fit(args.epsilons, args.seeds, args.repeats, s)
                          for s in ("one BLAS thread", "default threads, one core busy")],
              "load_average_after": os.getloadavg()}
    result["quiet_machine"] = bool(max(load_before[0], result["load_average_after"][0]) < 0.5)
    out = Path(__file__).with_name("results") / "chaudhuri2011.json"
    out.write_text(json.dumps(result, indent=2) + "\n")
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
