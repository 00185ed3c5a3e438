"""Yu et al. (2020)'s protocol on Iyengar et al. (2019)'s Adult and KDDCup99, run with the library's estimators.

The published protocol (Yu, Zhang, Chen, Yin and Liu, "Gradient perturbation is underrated for differentially private
convex optimization", IJCAI 2020, arXiv 1911.11363, Section 4 and Table 2):

* data: Iyengar et al.'s benchmark sets, 80% of the rows for training and 20% for testing (their order);
* logistic regression, L2 regulariser 1e-4, per-example gradients clipped to norm 1, delta = 1 / n^2;
* DP-GD: T in {50, 200, 800}, learning rate in {0.1, 1, 5}; DP-SGD: the same T, sampling ratio 0.1, learning rate twice
  DP-GD's, halved at the middle of training; noise the smallest the budget allows for T steps (Renyi DP accounting);
* AMP and output-perturbed SGD with Iyengar et al.'s implementation and hyper-parameter grids;
* epsilon = 0.1 for the binary sets; every number the mean of 20 runs, the best grid point by that mean on the test
  rows: hyper-parameters tuned NON-PRIVATELY on the test data, as published (our rows say so).

Iyengar et al.'s preparation (their public benchmark, ``datasets/preprocess/adult.py`` and ``kddcup99.py``; read,
not copied), reimplemented here from our checksummed files:

* Adult: the training and test files together, rows with a missing value (``?``) dropped; the slicing of their reader
  also drops the last record of each file (45,220 rows; the text says 45,222); the six numeric columns divided by
  their maximum, the eight categorical ones one-hot over the values present (d = 104); labels >50K = +1; rows shuffled
  with ``numpy.random.seed(10000019)``'s stream (we draw the same permutation with the legacy ``RandomState``).
* KDDCup99: 70,000 rows of the 10 percent file drawn uniformly *with replacement* (``randint`` from the same seed),
  protocol, service and flag one-hot over the values present, the 38 numeric columns left raw; normal = +1; shuffled by
  the same stream.
* Rows are not normalised: gradient methods clip per-example gradients; AMP and output perturbation clip each row to a
  norm L from their grid {0.1, 1, 10} (Iyengar et al.'s sample clipping, a per-record map).

What is ours: the mechanisms' calibrations (exact Gaussian-DP composition for DP-GD, dp-accounting's PLD accountant
for DP-SGD, both under replace-one; the analytic Gaussian for output perturbation; our AMP argument), floating-point-
safe noise, the exclusion of output-SGD grid points that break Wu et al.'s step condition (eta <= 2 / beta), and the
vectorised runs (many noise draws in one pass: each run is exactly one fit of the estimator).
"""

from __future__ import annotations

import csv
import functools
import gzip
import io
import os
import tempfile
import warnings
import zlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from itertools import product

import numpy as np
import pandas as pd
from numpy.typing import NDArray
from sklearn.linear_model import LogisticRegression

from dpkernels._validation import check_random_state
from dpkernels.datasets import KDD_CATEGORICAL, KDD_COLUMNS, locate
from dpkernels.losses import make_loss
from dpkernels.mechanisms.base import noise_release
from dpkernels.mechanisms.gradient import (
    amp_calibration,
    amp_releases,
    as_design_matrix,
    dp_gd_calibration,
    dp_sgd_calibration,
    dp_sgd_path,
    noisy_gd_path,
    output_sgd_calibration,
    permutation_sgd_path,
)
from dpkernels.solvers.smooth import Design

__all__ = [
    "PAPER", "SPLIT_SEED", "TRAIN_FRACTION", "KDD_ROWS", "EPSILON", "N_RUNS", "ALPHA", "CLIP_NORM", "SAMPLING_RATE",
    "GRIDS", "METHODS", "Split", "iyengar_adult", "iyengar_kddcup99", "unseen_test_rows",
    "load_split", "delta_for", "nonprivate_accuracy",
    "grid_points", "run_point", "run_grid", "best_points", "protocol_configs", "config_grid", "run_task", "run_protocol",
]

PAPER = "yu2020"
#: Iyengar et al.'s preprocessing seed (``np.random.seed(10000019)`` in their benchmark).
SPLIT_SEED = 10000019
TRAIN_FRACTION = 0.8
KDD_ROWS = 70_000
EPSILON = 0.1
N_RUNS = 20
ALPHA = 1e-4
CLIP_NORM = 1.0
SAMPLING_RATE = 0.1
#: Table 2's methods, in the paper's order.
METHODS = ("DP-GD", "DP-SGD", "AMP", "Out-SGD")
#: The published grids (Yu et al. Sec. 4 for DP-GD and DP-SGD; Iyengar et al.'s ``gridsearch.py`` for AMP, whose
#: hyper-parameter-free variant fixes the rest, and for their convex permutation-SGD, whose lambda grid is unused by
#: the convex variant and so left out).
GRIDS: dict[str, dict[str, tuple]] = {
    "DP-GD": {"n_iter": (50, 200, 800), "learning_rate": (0.1, 1.0, 5.0)},
    "DP-SGD": {"n_iter": (50, 200, 800), "learning_rate": (0.2, 2.0, 10.0)},
    "AMP": {"data_norm": (0.1, 1.0, 10.0), "noise_fraction": (0.9, 0.95, 0.98, 0.99),
            "out_fraction": (0.001, 0.01, 0.1, 0.5)},
    "Out-SGD": {"data_norm": (0.1, 1.0, 10.0), "learning_rate": (0.001, 0.01, 0.1), "n_passes": (5, 10, 100)},
}
OUT_SGD_BATCH = 50

Array = NDArray[np.float64]


@dataclass
class Split:
    """A prepared data set and its 80/20 split (in the published order)."""

    name: str
    X_train: Array
    y_train: Array
    X_test: Array
    y_test: Array
    meta: dict[str, object] = field(default_factory=dict)
    #: A key per test row naming its source record's content (a hash of the raw record, label included), and the
    #: training rows' keys, where the split was built from raw records (:func:`~.fair.frontier_split`); else None.
    records_train: NDArray[np.uint64] | None = field(default=None, repr=False)
    records_test: NDArray[np.uint64] | None = field(default=None, repr=False)

    @property
    def n_train(self) -> int:
        return int(self.X_train.shape[0])

    @property
    def d(self) -> int:
        return int(self.X_train.shape[1])


def _one_hot(columns: Sequence[NDArray]) -> Array:
    """One-hot blocks over the values present, sorted (their LabelEncoder then OneHotEncoder)."""
    blocks = []
    for col in columns:
        values, codes = np.unique(col, return_inverse=True)
        block = np.zeros((len(col), len(values)))
        block[np.arange(len(col)), codes] = 1.0
        blocks.append(block)
    return np.hstack(blocks)


def _split(name: str, X: Array, y: Array, order: NDArray[np.intp], meta: dict[str, object],
           records: NDArray[np.uint64] | None = None) -> Split:
    X, y = X[order], y[order]
    m = int(X.shape[0] * TRAIN_FRACTION)
    meta = {**meta, "rows": int(X.shape[0]), "train": m, "test": int(X.shape[0] - m), "d": int(X.shape[1])}
    keys = None if records is None else np.asarray(records)[order]
    return Split(name, X[:m], y[:m], X[m:], y[m:], meta, None if keys is None else keys[:m],
                 None if keys is None else keys[m:])


def iyengar_adult_records() -> NDArray[np.object_]:
    """The raw records Iyengar et al.'s reader keeps (45,220 rows of the 15 columns of adult.data + adult.test, as
    strings with their leading spaces), in file order (module docstring)."""
    records = []
    for key, head in (("adult.data", 0), ("adult.test", 1)):
        loc = locate(key)
        raw = loc.path.read_bytes()
        text = (gzip.decompress(raw) if loc.path.suffix == ".gz" else raw).decode("utf-8")
        rows = [r for r in csv.reader(io.StringIO(text)) if " ?" not in r]
        records += rows[head:-2]  # their slicing: the header line of adult.test; the blank line and the last record
    return np.array(records, dtype=object)


def iyengar_adult_labels(table: NDArray[np.object_]) -> Array:
    """+1 for income above 50K, -1 otherwise, of :func:`iyengar_adult_records`' rows."""
    return np.where(np.isin(table[:, -1], (" <=50K", " <=50K.")), -1.0, 1.0)


def iyengar_adult(seed: int = SPLIT_SEED) -> Split:
    """Adult as Iyengar et al. prepared it (module docstring), split 80/20 in their shuffled order (``seed``: another
    shuffle of the same rows, for hypothesis Y12).  ``meta["numeric"]``: the trailing numeric columns (6)."""
    table = iyengar_adult_records()
    numeric = [0, 2, 4, 10, 11, 12]
    cont = np.column_stack([table[:, j].astype(np.float64) for j in numeric])
    cont /= cont.max(axis=0)
    cats = [table[:, j] for j in range(table.shape[1] - 1) if j not in numeric]
    X = np.hstack([_one_hot(cats), cont])
    y = iyengar_adult_labels(table)
    order = np.random.RandomState(seed).permutation(len(y))  # their np.random.shuffle after seed(10000019)
    return _split("adult", X, y, order, {"source": "adult.data + adult.test (UCI)", "numeric": cont.shape[1],
                                         "seed": int(seed)})


def unseen_test_rows(split: Split) -> np.ndarray:
    """Which of ``split``'s test rows are copies of no training row's source record (issue 29: 74.5% of KDDCup99's 10
    percent file's rows have an exact copy, and Iyengar et al. draw their rows with replacement, so many test rows are
    training records).  Where the split keeps a hash of each raw record (``split.records_*``,
    :func:`~.fair.frontier_split`), a copy is the same raw record, label included, not merely the same features under
    the public map, which is coarser (on Adult it drops fnlwgt and caps columns: 22% of test rows share a training
    row's features, 0.1% its record); a split built without records (Iyengar et al.'s own preparation, a synthetic
    one) compares its features and labels (:func:`iyengar_kddcup99`'s ``test_rows_in_train``).  Yu et al.'s split
    keeps the copies, so the published comparison does; the accuracy on the others is ``accuracy_unseen`` of
    :func:`~.fair.fair_runs`.  This is evaluation metadata of the published split (as is every test accuracy here),
    outside any fit's guarantee."""
    if split.records_train is not None and split.records_test is not None:
        seen = set(np.asarray(split.records_train).tolist())
        return np.array([k not in seen for k in np.asarray(split.records_test).tolist()], dtype=bool)
    rows = np.ascontiguousarray(np.column_stack([split.X_train, split.y_train]))
    seen = {r.tobytes() for r in rows}
    test = np.ascontiguousarray(np.column_stack([split.X_test, split.y_test]))
    return np.array([r.tobytes() not in seen for r in test], dtype=bool)


def iyengar_kddcup99(seed: int = SPLIT_SEED) -> Split:
    """KDDCup99 as Iyengar et al. prepared it: 70,000 rows drawn with replacement from the 10 percent file (module
    docstring), split 80/20 in their shuffled order (``seed``: another draw and shuffle, for hypothesis Y12).
    ``meta["test_rows_in_train"]`` counts test rows whose features and label repeat a training row exactly (the draw
    is with replacement, and the file has duplicates); ``meta["numeric"]``: the trailing numeric columns (38)."""
    df, order = iyengar_kddcup99_rows(seed)
    numeric = [c for c in KDD_COLUMNS[:-1] if c not in KDD_CATEGORICAL]
    X = np.hstack([_one_hot([df[c].to_numpy() for c in KDD_CATEGORICAL]), df[numeric].to_numpy(dtype=np.float64)])
    y = iyengar_kddcup99_labels(df)
    split = _split("kddcup99", X, y, order, {"source": "kddcup.data_10_percent (UCI KDD archive)",
                                             "drawn_with_replacement": True, "numeric": len(numeric), "seed": int(seed)})
    split.meta["test_rows_in_train"] = int((~unseen_test_rows(split)).sum())
    return split


def iyengar_kddcup99_rows(seed: int = SPLIT_SEED) -> tuple[pd.DataFrame, NDArray[np.intp]]:
    """The 70,000 raw rows Iyengar et al.'s script draws with replacement from the 10 percent file (in draw order) and
    the shuffle it then applies (the same ``RandomState`` stream, after the draw)."""
    rs = np.random.RandomState(seed)
    idx = rs.randint(494021, size=KDD_ROWS)
    df = pd.read_csv(locate("kddcup99").path, header=None, names=KDD_COLUMNS, compression="gzip")
    if len(df) != 494021:
        raise ValueError(f"the 10 percent file has {len(df)} rows, expected 494,021")
    return df.iloc[idx], rs.permutation(KDD_ROWS)


def iyengar_kddcup99_labels(rows: pd.DataFrame) -> Array:
    """+1 for a normal connection, -1 for an attack, of :func:`iyengar_kddcup99_rows`' rows (their task)."""
    return np.where(rows["label"].to_numpy() == "normal.", 1.0, -1.0)


def load_split(name: str, seed: int = SPLIT_SEED) -> Split:
    """``"adult"`` or ``"kddcup99"`` (:class:`~dpkernels.datasets.DatasetUnavailable` when the file is missing);
    ``seed``: Iyengar et al.'s by default."""
    if name == "adult":
        return iyengar_adult(seed)
    if name == "kddcup99":
        return iyengar_kddcup99(seed)
    raise ValueError(f"unknown data set {name!r}")


def delta_for(split: Split) -> float:
    """delta = 1 / n^2 with n the training rows (Yu et al.; Iyengar et al.'s ``1 / training_size^2``)."""
    return 1.0 / float(split.n_train) ** 2


def nonprivate_accuracy(split: Split) -> float:
    """Iyengar et al.'s non-private baseline: scikit-learn's logistic regression with its defaults of their version
    (0.18: liblinear, C = 1, an intercept) on the unclipped features; test accuracy."""
    clf = LogisticRegression(solver="liblinear", C=1.0, max_iter=1000).fit(split.X_train, split.y_train)
    return float(np.mean(clf.predict(split.X_test) == split.y_test))


def grid_points(method: str, grid: Mapping[str, Sequence] | None = None) -> list[dict[str, object]]:
    """Every point of ``method``'s grid (default :data:`GRIDS`), as dicts."""
    g = GRIDS[method] if grid is None else grid
    keys = list(g)
    return [dict(zip(keys, vals)) for vals in product(*(g[k] for k in keys))]


def _clip_rows(X: Array, L: float) -> Array:
    nrm = np.linalg.norm(X, axis=1)
    return X * np.minimum(1.0, L / np.maximum(nrm, np.finfo(float).tiny))[:, None]


def _merge_duplicates(A: Array) -> tuple[Array, Array | None]:
    """(distinct signed rows, their multiplicities) when merging saves at least a fifth of the rows (KDDCup99's
    training rows: 56,000 with many repeats), else (A, None).  The full gradient is the same real sum either way."""
    rows, counts = np.unique(A, axis=0, return_counts=True)
    if len(rows) > 0.8 * len(A):
        return A, None
    return rows, counts


def _accuracy(X: Array, y: Array, W: Array) -> Array:
    """Test accuracy of every row of ``W`` (predict +1 where the score is >= 0, as the estimators do)."""
    S = X @ W.T
    return np.mean(np.where(S >= 0, 1.0, -1.0) == y[:, None], axis=0)


def run_point(method: str, split: Split, point: Mapping[str, object], n_runs: int, random_state: object, *,
              epsilon: float = EPSILON, delta: float | None = None, calibration: str = "ours",
              alpha: float = ALPHA) -> dict[str, object]:
    """``n_runs`` independent fits of ``method`` at one grid point on ``split``; their test accuracies and what was
    calibrated.

    Each run is one fit of the library's estimator (the same path functions and calibrations, many noise draws in one
    vectorised pass).  ``calibration``: ``"ours"`` (the estimators'), or, for the hypotheses only, one of
    :data:`~dpkernels.experiments.yu2020.hypotheses.NOISE_CALIBRATIONS` (DP-GD, DP-SGD), ``"iyengar_amp"`` (AMP) or
    ``"iyengar_benchmark"`` (AMP as ``"iyengar_amp"``; output-perturbed SGD as Iyengar et al.'s code, Y20): most are
    NOT the estimators' replace-one guarantee (:mod:`~dpkernels.experiments.yu2020.hypotheses`).  ``alpha``:
    the regulariser of DP-GD and DP-SGD (:data:`ALPHA`; hypothesis Y10 doubles it)."""
    rng = check_random_state(random_state)
    delta = delta_for(split) if delta is None else float(delta)
    n, d = split.X_train.shape
    A = split.X_train * split.y_train[:, None]
    loss = make_loss("logistic")
    info: dict[str, object] = {}
    if method in ("DP-GD", "DP-SGD"):
        T, eta = int(point["n_iter"]), point["learning_rate"]  # a rate per chain (DP-GD's grid) or one for all
        if method == "DP-GD":
            sigma, sens = dp_gd_calibration(epsilon, delta, CLIP_NORM, n, d, T)
            if calibration != "ours":
                from .hypotheses import variant_gd_sigma

                sigma = variant_gd_sigma(calibration, epsilon, delta, CLIP_NORM, n, d, T)
            rows, counts = _merge_duplicates(A)
            W = noisy_gd_path(as_design_matrix(rows), loss=loss, alpha=alpha, clip_norm=CLIP_NORM, sigma=sigma,
                              learning_rate=eta, n_iter=T, random_state=rng, n_chains=n_runs, counts=counts)
            info.update(noise_sigma=sigma, sensitivity=sens)
        else:
            z, sd, q = dp_sgd_calibration(epsilon, delta, SAMPLING_RATE, CLIP_NORM, n, d, T)
            if calibration != "ours":
                from .hypotheses import variant_sgd_noise

                sd = variant_sgd_noise(calibration, epsilon, delta, CLIP_NORM, n, d, T)
            W = dp_sgd_path(as_design_matrix(A), loss=loss, alpha=alpha, clip_norm=CLIP_NORM, sampling_rate=SAMPLING_RATE,
                            noise_std=sd, learning_rate=float(eta), n_iter=T, schedule="step", random_state=rng,
                            n_chains=n_runs)
            info.update(noise_multiplier=z, noise_sigma=sd)
        X_test = split.X_test
    elif method == "AMP":
        L = float(point["data_norm"])
        Xc = _clip_rows(split.X_train, L)
        if calibration in ("iyengar_amp", "iyengar_benchmark"):
            from .hypotheses import iyengar_amp_calibration

            cal = iyengar_amp_calibration(epsilon, delta, n, L * (1.0 + 2e-9), out_fraction=float(point["out_fraction"]),
                                          noise_fraction=float(point["noise_fraction"]))
        elif calibration == "ours":
            cal = amp_calibration(epsilon, delta, n, L * (1.0 + 2e-9), loss.curvature,
                                  out_fraction=float(point["out_fraction"]), noise_fraction=float(point["noise_fraction"]))
        else:
            raise ValueError(f"AMP has no calibration {calibration!r}")
        W = amp_releases(Design(Xc, split.y_train), loss, cal, n_runs, random_state=rng)
        X_test = _clip_rows(split.X_test, L)
        info.update(alpha=cal.lam, epsilon_stated=cal.epsilon, sigma_objective=cal.sigma_objective)
    elif method == "Out-SGD":
        L, eta, k = float(point["data_norm"]), float(point["learning_rate"]), int(point["n_passes"])
        R = L * (1.0 + 2e-9)
        if calibration == "iyengar_benchmark":
            from .hypotheses import iyengar_psgd_sigma

            sigma, sens = iyengar_psgd_sigma(epsilon, delta, L, eta, k, OUT_SGD_BATCH)
        elif calibration == "ours":
            sigma, sens, _ = output_sgd_calibration(epsilon, delta, n, d, R, loss.curvature * R * R, 0.0, eta, k,
                                                    OUT_SGD_BATCH)
        else:
            raise ValueError(f"output-perturbed SGD has no calibration {calibration!r}")
        Xc = _clip_rows(split.X_train, L)
        W0 = permutation_sgd_path(Xc * split.y_train[:, None], loss=loss, alpha=0.0, batch_size=OUT_SGD_BATCH,
                                  learning_rate=eta, n_passes=k, random_state=rng, n_chains=n_runs)
        W = noise_release(W0, "gaussian", sigma, noise="lattice", random_state=rng)
        X_test = _clip_rows(split.X_test, L)
        info.update(noise_sigma=sigma, sensitivity=sens)
    else:
        raise ValueError(f"unknown method {method!r}")
    return {"accuracy": _accuracy(X_test, split.y_test, W), **info}


def _valid(method: str, point: Mapping[str, object], calibration: str = "ours") -> bool:
    """Wu et al.'s condition eta <= 2 / beta (beta = L^2 / 4 for the logistic loss on rows of norm <= L): Iyengar et
    al.'s grid has points that break it; they are not private and are left out, except under the calibration
    ``"iyengar_benchmark"`` (Y20: their code runs them)."""
    if method != "Out-SGD" or calibration == "iyengar_benchmark":
        return True
    L = float(point["data_norm"])
    return float(point["learning_rate"]) <= 2.0 / (0.25 * L * L)


def run_grid(method: str, split: Split, n_runs: int = N_RUNS, random_state: object = 0, *,
             grid: Mapping[str, Sequence] | None = None, epsilon: float = EPSILON, delta: float | None = None,
             calibration: str = "ours", alpha: float = ALPHA, label: str | None = None,
             progress: bool = False) -> pd.DataFrame:
    """Every valid point of ``method``'s grid, ``n_runs`` runs each: one row per (point, run) with the test accuracy.
    Points share no noise (one generator, consumed in order).  ``delta``, ``calibration`` and ``alpha`` as
    :func:`run_point`; ``label`` names the runs in the ``calibration`` column (default ``calibration``: a hypothesis
    id for a hypothesis's variant)."""
    rng = check_random_state(random_state)
    rows = []
    points = [p for p in grid_points(method, grid) if _valid(method, p, calibration)]
    if method == "DP-GD":  # the learning rates of one T share a pass over the data (one chain per rate and run)
        by_T: dict[int, list[dict[str, object]]] = {}
        for p in points:
            by_T.setdefault(int(p["n_iter"]), []).append(p)
        groups = list(by_T.values())
    else:
        groups = [[p] for p in points]
    if progress:
        from tqdm import tqdm

        groups = tqdm(groups, desc=f"{split.name} {method}", leave=False)
    for group in groups:
        etas = np.repeat([float(p.get("learning_rate", 0.0)) for p in group], n_runs)
        point = {**group[0], "learning_rate": etas} if method == "DP-GD" else group[0]
        res = run_point(method, split, point, n_runs * len(group), rng, epsilon=epsilon, delta=delta,
                        calibration=calibration, alpha=alpha)
        acc = np.asarray(res["accuracy"]).reshape(len(group), n_runs)
        for p, a in zip(group, acc):
            rows += [{"dataset": split.name, "method": method, "calibration": label or calibration, **p, "run": r,
                      "accuracy": float(v)} for r, v in enumerate(a)]
    return pd.DataFrame(rows)


@functools.lru_cache(maxsize=4)
def _cached_split(name: str, seed: int) -> Split:
    return load_split(name, seed)


def protocol_configs(datasets: Sequence[str], methods: Sequence[str], grids: Mapping[str, Mapping[str, Sequence]],
                     n_runs: int, seed: int, *, label: str = "ours", split_seed: int = SPLIT_SEED) -> list[dict]:
    """One sweep configuration (:func:`run_task`) per (data set, method): the method's whole ``grids`` entry at
    ``n_runs`` runs per point, under ``label`` (``"ours"``, or a hypothesis id whose variant :func:`run_task`
    applies; ``"<id>@<seed>"`` on another split), on the split of ``split_seed``."""
    return [{"paper": PAPER, "label": label, "dataset": ds, "method": m, "n_runs": int(n_runs), "seed": int(seed),
             "split_seed": int(split_seed), "grid": {k: [float(v) for v in vals] for k, vals in grids[m].items()}}
            for ds in datasets for m in methods]


def config_grid(config: Mapping[str, object]) -> dict[str, tuple]:
    """A configuration's grid (:func:`protocol_configs` stores floats) with the integer parameters (``n_iter``,
    ``n_passes``) as integers, as :func:`run_grid` takes it."""
    return {k: tuple(int(v) if k in ("n_iter", "n_passes") else v for v in vals) for k, vals in config["grid"].items()}


def run_task(config: dict) -> dict:
    """One configuration of :func:`protocol_configs`: the runs of :func:`run_grid` (``{"runs": [...]}``, one record
    per grid point and run).  A hypothesis's label applies its variant
    (:data:`~dpkernels.experiments.yu2020.hypotheses.VARIANTS`: inputs, delta, regulariser, noise calibration).  The
    noise comes from a generator seeded by (seed, label, data set, method), so every configuration is reproducible on
    its own, whichever process runs it."""
    label, name, method = config["label"], config["dataset"], config["method"]
    split = _cached_split(name, int(config["split_seed"]))
    grid = config_grid(config)
    kw: dict[str, object] = {}
    if label != "ours":
        from .hypotheses import VARIANTS, variant_split

        v = VARIANTS[label.partition("@")[0]]
        split = variant_split(split, v)
        kw = {"calibration": v.noise, "alpha": ALPHA * v.alpha_factor,
              "delta": 1.0 / float(split.meta["rows"]) ** 2 if v.delta_rows == "all" else None}
    rng = np.random.default_rng([int(config["seed"]), *(zlib.crc32(t.encode()) for t in (label, name, method))])
    runs = run_grid(method, split, int(config["n_runs"]), rng, grid=grid, label=label, **kw)
    return {"runs": runs.drop(columns=["dataset", "method", "calibration"]).to_dict("records")}


def run_protocol(configs: Sequence[dict], *, n_jobs: int = 1, store: object = None, progress: bool = False
                 ) -> pd.DataFrame:
    """Every configuration through :func:`dpkernels.sweep.run_sweep` (default store ``$DPKERNELS_CACHE/sweeps/yu2020``;
    a fresh temporary folder when ``DPKERNELS_NO_CACHE`` is set: a rerun computes only what is missing), the most
    expensive first on ``n_jobs`` processes; the long table of runs (``dataset``, ``method``, ``calibration`` = the
    label, the grid's parameters, ``run``, ``accuracy``), as :func:`run_grid` returns it."""
    from dpkernels.sweep import ResultStore, run_sweep

    if store is None and os.environ.get("DPKERNELS_NO_CACHE"):
        store = ResultStore(tempfile.mkdtemp(prefix="yu2020-"))
    elif store is None:
        with warnings.catch_warnings():  # the cache folder's pooch imports tqdm.auto, which warns in a kernel
            warnings.filterwarnings("ignore", message="IProgress not found")
            store = ResultStore.default(PAPER)
    cost = {"DP-GD": 1.0, "DP-SGD": 2.0, "AMP": 0.3, "Out-SGD": 1.0}
    with warnings.catch_warnings():
        # loky replaces a worker whose memory grew by more than 300 MB since its first task (the cached splits and
        # variants' copies at the scale profile) and warns "A worker stopped while some jobs were given to the
        # executor" into the notebook; every configuration draws from its own seeded generator, so which process runs
        # it changes nothing (tests/test_yu2020_experiments.py::test_run_task_is_reproducible_and_applies_the_variant)
        warnings.filterwarnings("ignore", message="A worker stopped while some jobs were given to the executor",
                                category=UserWarning)
        df = run_sweep(run_task, list(configs), store, n_jobs=n_jobs, progress=progress, desc=PAPER,
                       cost=lambda c: cost[c["method"]] * len(grid_points(c["method"], c["grid"])) * c["n_runs"])
    out = [pd.DataFrame(r["runs"]).assign(dataset=r["dataset"], method=r["method"], calibration=r["label"])
           for r in df.to_dict("records")]
    runs = pd.concat(out, ignore_index=True)
    params = [c for c in runs.columns if c not in ("dataset", "method", "calibration", "run", "accuracy")]
    return runs[["dataset", "method", "calibration", *params, "run", "accuracy"]]


def best_points(runs: pd.DataFrame) -> pd.DataFrame:
    """Per (data set, method, calibration): the grid point with the largest mean test accuracy (the published
    selection: on the test rows, NOT private), with its mean, standard deviation and number of runs."""
    keys = ["dataset", "method", "calibration"]
    params = [c for c in runs.columns if c not in (*keys, "run", "accuracy")]
    out = []
    for key, g in runs.groupby(keys, sort=False):
        cols = [c for c in params if g[c].notna().any()]
        stats = g.groupby(cols, dropna=False)["accuracy"].agg(["mean", "std", "count"]).reset_index()
        best = stats.loc[stats["mean"].idxmax()]
        out.append({**dict(zip(keys, key)), **{c: best[c] for c in cols}, "mean": float(best["mean"]),
                    "sd": float(best["std"]), "n_runs": int(best["count"]), "grid_points": int(len(stats))})
    return pd.DataFrame(out)
