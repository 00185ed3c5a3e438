"""Calibration of :class:`~dpkernels.UtilityWarning` on the frontier's committed scale run.

The warning compares two public bounds: the noise's expected effect on the solution and the largest norm the
non-private solution can have (``noise_to_solution_`` of Rubinstein et al.'s and Chaudhuri et al.'s estimators).  Their
ratio is a function of n, d, epsilon and the hyper-parameters only, so the ratio of every configuration the frontier ran
(``paper_figures/frontier/summary.csv``: data set, mechanism, training size, epsilon, and whether the mechanism beat the
majority class, a paired one-sided test at 95%) is recomputed here without its data: the frontier's own factory builds
the estimator with the frontier's public rules (:data:`dpkernels.experiments.frontier.MECHANISMS`; one-against-all
shares of the budget on the multi-class sets) and fits it on zero rows of the same shape, which reads no data.

The threshold (:data:`dpkernels._validation.UTILITY_RATIO_THRESHOLD`) is the largest ratio at which some configuration
beat the majority class ("holds"), rounded up to a power of two: at every larger ratio the frontier has no fit that
learned.  ``python -m dpkernels.experiments.utility_calibration`` rewrites
``lib/dpkernels/data/utility_calibration.csv`` (one row per configuration: ratio and verdict) and prints the threshold;
``tests/test_utility_warning.py`` checks the constant against the file and recomputes some of its ratios.
"""

from __future__ import annotations

import math
import warnings
from importlib import resources
from pathlib import Path

import numpy as np
import pandas as pd

__all__ = ["RATIO_MECHANISMS", "CALIBRATION_FILE", "public_ratio", "calibration_table", "threshold", "committed_table",
           "write_table", "main"]

#: The frontier mechanisms whose estimators compute a noise-to-solution ratio (the others state none).
RATIO_MECHANISMS = ("rubinstein-finite", "rubinstein-rff", "chaudhuri-output-logistic", "chaudhuri-output-huber",
                    "chaudhuri-objective-logistic", "chaudhuri-objective-huber", "chaudhuri-kernel")
#: The committed calibration table (package data).
CALIBRATION_FILE = "utility_calibration.csv"


def public_ratio(mechanism: str, dataset: str, n: int, d: int, epsilon: float) -> float:
    """The noise-to-solution ratio of the frontier's ``mechanism`` at (n, d, epsilon) on ``dataset`` (its public
    rules; one binary fit of a one-against-all split on a multi-class set), from a fit on zero rows."""
    from dpkernels.experiments import frontier as F

    spec, mech = F.DATASETS[dataset], F.MECHANISMS[mechanism]
    K = len(spec.classes)
    eps = float(epsilon) if spec.task == "binary" or mech.multiclass else F.split_budget(float(epsilon), 0.0, K)[0]
    info = {"n": int(n), "d": int(d), "K": K, "dataset": dataset, "delta": 0.0}
    est = mech.build(mech.params(eps, info), eps, 0.0, info, np.random.default_rng(0))
    y = np.where(np.arange(int(n)) % 2 == 0, 1, -1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        est.fit(np.zeros((int(n), int(d))), y)
    return float(est.noise_to_solution_)


def calibration_table(summary: pd.DataFrame, dims: dict[str, int]) -> pd.DataFrame:
    """One row per (data set, mechanism, n, epsilon) of ``summary`` whose mechanism computes a ratio: the ratio and
    the frontier's verdict on beating the majority class."""
    rows = summary[summary.mechanism.isin(RATIO_MECHANISMS)]
    out = rows[["dataset", "mechanism", "n_train", "epsilon", "error", "base_error", "beats_majority"]].copy()
    out["d"] = out.dataset.map(dims)
    out["ratio"] = [public_ratio(r.mechanism, r.dataset, r.n_train, r.d, r.epsilon) for r in out.itertuples()]
    return out.sort_values(["ratio", "dataset", "mechanism"]).reset_index(drop=True)


def threshold(table: pd.DataFrame) -> float:
    """The largest ratio at which a configuration beat the majority class, rounded up to a power of two."""
    top = float(table.loc[table.beats_majority == "holds", "ratio"].max())
    return math.ldexp(1.0, math.ceil(math.log2(top)))


def committed_table() -> pd.DataFrame:
    """The committed calibration table."""
    return pd.read_csv(resources.files("dpkernels").joinpath("data", CALIBRATION_FILE))


def write_table(root: Path) -> tuple[pd.DataFrame, float]:
    """Recompute the table from ``root``'s committed frontier results (``paper_figures/frontier/``), write it to
    ``root/lib/dpkernels/data/`` and return it with its threshold (called by
    :func:`dpkernels.reference.update_reference` after a scale reference moves the frontier's results)."""
    summary = pd.read_csv(root / "paper_figures" / "frontier" / "summary.csv")
    runs = pd.read_csv(root / "paper_figures" / "frontier" / "runs.csv", usecols=["dataset", "d"])
    dims = runs.groupby("dataset").d.first().astype(int).to_dict()
    table = calibration_table(summary, dims)
    table.to_csv(root / "lib" / "dpkernels" / "data" / CALIBRATION_FILE, index=False)
    return table, threshold(table)


def main(root: Path | None = None) -> float:
    """Recompute the table from the committed frontier results, write it, and return the threshold."""
    from dpkernels.workbook import find_root

    table, t = write_table(find_root() if root is None else root)
    holds = table[table.beats_majority == "holds"]
    above = table[table.ratio > t]
    print(f"{len(table)} configurations; beat the majority class at ratios up to {holds.ratio.max():.4g}; threshold "
          f"{t:g}; above it: {len(above)} configurations, verdicts {above.beats_majority.value_counts().to_dict()}")
    return t


if __name__ == "__main__":
    main()
