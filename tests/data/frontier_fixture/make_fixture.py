"""Writes the small frontier results that tests/test_recommendation.py reads (summary.csv, recommendation.csv,
runs.csv in this folder): synthetic runs on Adult's shape through the frontier's own analysis, so the files have the
committed results' format.  Rerun after a change of that format: ``python tests/data/frontier_fixture/make_fixture.py``.

Mean errors per (n, epsilon) cell: objective perturbation (an (epsilon, delta) row, delta 1e-7) 0.20 / 0.18 at
n = 10,000 and 0.17 / 0.16 at n = 30,000 (epsilon 0.3 / 1); output perturbation (pure) 0.01 worse everywhere;
Bassily's Algorithm 2 at the majority error 0.25 (it learns nothing); Rubinstein's linear SVM best everywhere but over
its budget (delta stated 1e-3).
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd

from dpkernels.experiments import frontier as F
from dpkernels.experiments import frontier_analysis as A

HERE = Path(__file__).parent
MEANS = {(10_000, 0.3): 0.20, (10_000, 1.0): 0.18, (30_000, 0.3): 0.17, (30_000, 1.0): 0.16}
SEEDS = 5


def runs() -> pd.DataFrame:
    noise = np.linspace(-0.002, 0.002, SEEDS)
    rows = []
    for (n, eps), mean in MEANS.items():
        for m, err, delta in (("chaudhuri-objective-logistic", mean, 1e-7), ("chaudhuri-output-logistic", mean + 0.01, 0.0),
                              ("bassily-alg2", 0.25, 1e-6), ("rubinstein-finite", mean - 0.05, 1e-3)):
            for s in range(SEEDS):
                rows.append({"dataset": "adult", "mechanism": m, "n_train": n, "epsilon": eps, "seed": s,
                             "error": err + noise[s], "base_error": 0.25, "d": 105, "fit_seconds": 0.1, "peak_mb": 1.0,
                             "train_mb": 1.0, "epsilon_spent": eps, "delta_spent": delta, "scale": 1.0})
        for s in range(SEEDS):
            rows.append({"dataset": "adult", "mechanism": "nonprivate-logistic", "n_train": n, "epsilon": math.nan,
                         "seed": s, "error": 0.15, "base_error": 0.25, "d": 105, "fit_seconds": 0.1, "peak_mb": 1.0,
                         "train_mb": 1.0, "epsilon_spent": math.inf, "delta_spent": 0.0, "scale": 1.0})
    df = pd.DataFrame(rows).drop_duplicates(["mechanism", "n_train", "epsilon", "seed"])
    df["privacy"] = df["mechanism"].map(lambda m: F.MECHANISMS[m].privacy)
    return df


if __name__ == "__main__":
    df = runs()
    summary = A.summarise(df)
    summary.to_csv(HERE / "summary.csv", index=False)
    A.recommendation_map(df, summary).to_csv(HERE / "recommendation.csv", index=False)
    df[["dataset", "mechanism", "n_train", "epsilon", "seed", "error", "d"]].to_csv(HERE / "runs.csv", index=False)
