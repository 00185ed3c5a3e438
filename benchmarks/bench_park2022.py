"""Park (2022): where the time of the full profile goes, and the algorithms that cut it (ratios in one run).

* Shuttle (issue 4's target): training and inference time of every method on the 24,360-row training part, one run
  of the notebook's protocol (Table 7.1's settings, eps = 1), every non-private solve included, the cache off.  SVM
  WEIGHT, SEMI and OUTPUT share one set of one-against-all SVMs, so their training time is that one fit.
* The dynamics' gradient on shuttle's training points: the blocked form (cos / sin of one block, two small matrix
  products) against the elementwise form it replaced.
* The nearest equilibrium point of every training point (corrected variant, 2,000 EPs): blocked matrix products
  against a k-d tree.
* The SVDD solve on spread-out data (default gamma, 600 x 6): the certified solver (libsvm and an active-set
  step, working sets or Clarabel when those do not certify; the first-order fallback it replaced took 50-100 s on such
  data, not rerun here).
* CPU seconds of one run of every (data set, run) task of the full profile's sweep, one worker: the sweep's share
  of the full profile (5 runs each, split over 2 workers).

Run on a quiet machine: ``python benchmarks/bench_park2022.py``.
"""

from __future__ import annotations

import json
import math
import os
import time
from pathlib import Path

os.environ.setdefault("DPKERNELS_NO_CACHE", "1")

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
from scipy.spatial import cKDTree  # noqa: E402
from threadpoolctl import threadpool_limits  # noqa: E402

from dpkernels import profiles  # noqa: E402
from dpkernels.experiments import park2022 as E  # noqa: E402
from dpkernels.mechanisms import PrivateSVDD  # noqa: E402
from dpkernels.mechanisms.park import find_equilibrium_points, nearest, run_dynamics  # noqa: E402


def _best(f, repeats: int = 5) -> float:
    times = []
    for _ in range(repeats):
        t = time.perf_counter()
        f()
        times.append(time.perf_counter() - t)
    return min(times)


def _elementwise_gradient(svdd: PrivateSVDD, X: np.ndarray) -> np.ndarray:
    """The gradient as computed before: (n x D) elementwise temporaries, then one product."""
    a, W = svdd.center_, svdd.frequencies_.astype(np.float32)
    Z = X.astype(np.float32) @ W.T
    coeff = (np.cos(Z) * a[1::2].astype(np.float32) - np.sin(Z) * a[0::2].astype(np.float32)) / np.float32(math.sqrt(W.shape[0]))
    return (-2.0 * (coeff @ W)).astype(np.float64)


def main() -> None:
    out: dict[str, object] = {"load_average_before": list(os.getloadavg()), "cpus": os.cpu_count()}
    start = time.perf_counter()
    df = E.evaluate("shuttle", [1.0], [0])
    rows = df.groupby("method")[["train_s", "infer_s"]].first().reset_index()
    methods = rows.to_dict(orient="records")
    for r in methods:  # Table 7.2 has no SVM OUTPUT row
        r["published_s"] = E.PUBLISHED_TABLE_7_2[r["method"]][7] if r["method"] in E.PUBLISHED_TABLE_7_2 else None
    out.update({"n_train": int(df.n_train.iloc[0]), "wall_s_all_methods": time.perf_counter() - start, "methods": methods,
                "all_under_10_s": bool((rows.train_s < 10).all())})
    print(pd.DataFrame(methods).to_string(index=False))

    with threadpool_limits(1):
        Xtr = E.split_scale(E.park_dataset("shuttle"), 0)[0]
        svdd = E.protocol._svdd_base(Xtr, 0.01, 1.0, 0).resample(1.0, 0)
        new = _best(lambda: svdd.gradient(Xtr))
        old = _best(lambda: _elementwise_gradient(svdd, Xtr))
        out["gradient_shuttle_train"] = {"rows": len(Xtr), "blocked_s": new, "elementwise_s": old, "speed_up": old / new,
                                         "max_abs_difference": float(np.abs(svdd.gradient(Xtr) - _elementwise_gradient(svdd, Xtr)).max())}
        eps_pts = find_equilibrium_points(svdd, np.random.default_rng(0).uniform(size=(2000, Xtr.shape[1])), 0.001, 20).points
        finals = run_dynamics(svdd, Xtr, 0.001, 20)
        t_new = _best(lambda: nearest(finals, eps_pts), 3)
        t_kd = _best(lambda: cKDTree(eps_pts).query(finals, k=1), 3)
        same = float(np.mean(nearest(finals, eps_pts) == cKDTree(eps_pts).query(finals, k=1)[1]))
        out["nearest_ep"] = {"queries": len(finals), "eps": len(eps_pts), "blocked_s": t_new, "kdtree_s": t_kd, "speed_up": t_kd / t_new,
                             "same_answer_share": same}
        X = 3.0 * np.random.default_rng(0).normal(size=(600, 6))
        t = time.perf_counter()
        m = PrivateSVDD(epsilon=1.0, keep_nonprivate=True, random_state=0).fit(X)
        out["svdd_spread_out_600x6"] = {"seconds": time.perf_counter() - t, "method": m.nonprivate_.method,
                                        "certified_distance": m.nonprivate_.distance_bound}

        P = profiles.load("park2022", "full")
        tasks = []
        for name in E.DATASETS:
            tasks += E.tasks_for(name, [None] + P["epsilons"], [0], shuttle_rows=P["shuttle_rows"], n_starts=P["n_starts"],
                                 knn=(1, 3, 5, 7, 9) if name in ("three_moons", "vowel") else (), seed=2022, labels={"sampling": 0.0})
        for frac in P["t73_fractions"]:
            tasks += E.tasks_for("shuttle", E.TABLE_7_3_EPSILONS, [0], n_starts=P["n_starts"], seed=2022,
                                 methods=("Proposed", E.AUTHOR_CODE, "SVM WEIGHT", "SVM SEMI", "SVM OUTPUT"),
                                 data=E.park_dataset("shuttle", 2022, shuttle_rows=int(E.SHUTTLE_ROWS * frac)), labels={"sampling": frac})
    cpu = {}
    for task in tasks:
        t = time.process_time()
        E.protocol._run_task(task)
        cpu[f"{task.name} {dict(task.labels)['sampling']:g}"] = time.process_time() - t
    out["sweep_cpu_s_one_run"] = {**cpu, "total": sum(cpu.values())}
    out["load_average_after"] = list(os.getloadavg())
    res = Path(__file__).with_name("results") / "park2022.json"
    res.write_text(json.dumps(out, indent=2, default=str) + "\n")
    print(json.dumps({k: v for k, v in out.items() if k != "methods"}, indent=1, default=str))
    print(f"wrote {res}")


if __name__ == "__main__":
    main()
