"""Which mechanism?  A cross-paper privacy-utility frontier at equal, end-to-end privacy cost (issue 11).

One sweep (mechanism x data set x epsilon x seed) over every classifier of the workbook, run through
:func:`dpkernels.sweep.run_sweep` (a content-addressed store: a rerun computes only what is missing; joblib locally,
a Dask cluster when a scheduler address is given).  :func:`run_task` is the task: it fits one mechanism on one seeded
subsample and returns the test error, the fit time, the peak memory of the fit (``tracemalloc``) and the privacy
spent as accounted.

Equal total privacy cost, end to end.  Every mechanism receives the same total (epsilon, delta) for *everything*
that touches the training rows:

* **Features.**  Every row goes through a per-record map with public constants (:func:`public_features`), so
  replace-one neighbours stay replace-one neighbours and nothing is computed from the data: Adult's numeric columns
  are divided by public caps (census top codes and stated round caps, clipped), its categoricals one-hot encoded
  with the vocabularies of ``adult.names``; KDDCup99's counters go through log1p / log1p(public cap) (clipped) and
  its categoricals through a data-independent hash into ``KDD_HASH_BUCKETS`` buckets; satimage's pixels are divided
  by 255.  Rows are then projected onto the unit ball (a per-record map).  ``dpkernels.datasets``' Chaudhuri
  preprocessing is *not* used: it divides each column by its maximum over the data (a data-dependent scale).
* **Label sets** are public (Adult: income above 50K or not; KDD: DoS or not; satimage: its 6 documented classes).
* **Hyper-parameters** are fixed before any data set is loaded (:data:`HYPER`: Lambda = 0.01 for every
  regularised ERM, translated into each paper's parameterisation; the RBF kernel exp(-||x - y||^2 / 2) on the unit
  ball; no tuning on training or test rows), except for the row ``chaudhuri-tuned``, which picks Lambda privately
  with Chaudhuri et al.'s Algorithm 4 (:class:`~dpkernels.mechanisms.PrivateTuning`) inside the same budget.
* **Composition.**  One-against-all on a K-class set fits K binary mechanisms on the same rows: pure-epsilon
  mechanisms get epsilon / K each (basic composition, exact for pure DP); (epsilon, delta) mechanisms get the largest
  (epsilon_k, delta / (2K)) whose K-fold composition, accounted by dp-accounting's privacy-loss distributions
  (:func:`dpkernels.accounting.compose`), stays within (epsilon, delta) (:func:`split_budget`).  Mechanisms whose
  guarantee carries a certified-solver factor (epsilon (1 + 2 solver_tol)) are calibrated at
  epsilon / (1 + 2 solver_tol), so that the guarantee *including* the solver error meets the target.
* **Pure epsilon-DP** mechanisms spend epsilon with delta = 0: strictly stronger than the (epsilon, delta) of the
  others at the same epsilon.

Neighbouring relation: replace-one, on a training sample of fixed, public size n (each mechanism's own relation).
Seeds are for reproduction only: a deployment draws noise from operating-system entropy.
"""

from __future__ import annotations

import functools
import hashlib
import math
import threading
import time
import tracemalloc
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
from numpy.typing import NDArray
from scipy import stats

from dpkernels.accounting import compose

__all__ = [
    "DELTA",
    "HYPER",
    "MECHANISMS",
    "Mechanism",
    "DATASETS",
    "KDD_HASH_BUCKETS",
    "public_features",
    "load_task_data",
    "available",
    "split_budget",
    "accounted_epsilon",
    "make_configs",
    "validate_config",
    "run_task",
    "run_frontier",
    "summarise",
    "recommendation",
    "paired_claim",
]

Array = NDArray[np.float64]

#: The total delta of every (epsilon, delta) mechanism (below 1 / n for every training size used here).
DELTA = 1e-5
#: Hyper-parameters fixed before any data set was loaded (public knowledge, not tuned): one regularisation strength
#: Lambda of J(f) = (1/n) sum l + (Lambda / 2) ||f||^2 for every ERM, in each paper's parameterisation; the RBF
#: kernel exp(-||x - y||^2 / (2 sigma^2)) with sigma = 1 (rows lie in the unit ball); feature counts; Bassily's
#: margin rho and norm bound; the Lambda grid of the privately tuned row.
HYPER: dict[str, Any] = {
    "Lambda": 1e-2,
    "sigma": 1.0,
    "rff_components": 100,
    "nystrom_landmarks": 50,
    "bassily_rho": 0.1,
    "bassily_Lambda": 1.0,
    "bassily_frequencies": 100,
    "huber_h": 0.5,
    "tuning_grid": (1e-3, 1e-2, 1e-1),
    "park_starts": 300,
    "solver_tol": 1e-3,
}
#: The public constant feature appended to every row (an intercept, penalised like the weights).
INTERCEPT_FEATURE = 0.5
#: Buckets of the data-independent hash of each KDD categorical column.
KDD_HASH_BUCKETS = 16
#: Adult's numeric columns with public caps (values above are clipped): census top codes (age 90, capital gain
#: 99,999, hours 99), the 16 education levels of adult.names, and a stated round cap of 5,000 for capital loss.
#: fnlwgt (a sampling weight, not an attribute of the person) is dropped.
ADULT_CAPS = {"age": 90.0, "education-num": 16.0, "capital-gain": 99999.0, "capital-loss": 5000.0, "hours-per-week": 99.0}
#: KDD columns that are rates in [0, 1] by definition (kept as they are); every other numeric column is a counter
#: mapped to log1p(x) / log1p(cap), cap 1e9 for durations and byte counts, 1e3 for the other counters (clipped).
KDD_BIG = ("duration", "src_bytes", "dst_bytes")
#: satimage's binary task: class "red soil" (code 3 of the sorted class names) against the rest.
SATIMAGE_BINARY = 3
#: Data sets: name -> (public label set, number of classes, loader).
DATASETS = ("adult", "kddcup99", "satimage")


@dataclass(frozen=True)
class Mechanism:
    """One row of the benchmark: a name, its paper, its privacy kind and a factory."""

    name: str
    label: str
    paper: str
    privacy: str  #: "pure" (delta = 0), "approx" ((epsilon, delta)) or "none"
    multiclass: bool  #: native multi-class (Park's); binary ones run one-against-all on multi-class tasks
    factory: Callable[[float, float, dict[str, int], np.random.Generator], Any]  #: (epsilon, delta, {n, d, K}, rng) -> estimator


def _solver_eps(eps: float) -> float:
    """The calibration epsilon of a mechanism whose guarantee is epsilon (1 + 2 solver_tol) (certified solver),
    rounded down one ulp so that the stated guarantee, recomputed in floating point, does not exceed ``eps``."""
    return float(np.nextafter(eps / (1.0 + 2.0 * HYPER["solver_tol"]), 0.0))


def _sphere(n: int, d: int, radius: float, rng: np.random.Generator) -> Array:
    g = rng.standard_normal((n, d))
    return radius * g / np.linalg.norm(g, axis=1, keepdims=True)


def _factories() -> dict[str, Mechanism]:
    from sklearn.linear_model import LogisticRegression
    from sklearn.svm import SVC, LinearSVC

    from dpkernels.mechanisms import (
        EquilibriumPointClassifier,
        ObjectivePerturbation,
        OutputPerturbation,
        PrivateKernelERM,
        PrivateKernelMachine,
        PrivateKernelMarginClassifier,
        PrivateMarginClassifier,
        PrivateSVM,
        PrivateSVMFinite,
        PrivateTuning,
    )

    H, pm = HYPER, [-1, 1]
    lam, sig, tol = H["Lambda"], H["sigma"], H["solver_tol"]
    gamma = 1.0 / (2.0 * sig**2)

    def dpl(eps: float, delta: float, info: dict[str, int], rng: np.random.Generator) -> Any:
        from diffprivlib.accountant import BudgetAccountant
        from diffprivlib.models import LogisticRegression as DPL

        return DPL(epsilon=eps, data_norm=1.0, C=1.0 / (info['n'] * lam), fit_intercept=False,
                   random_state=int(rng.integers(2**31)), accountant=BudgetAccountant())

    def hall(eps: float, delta: float, info: dict[str, int], rng: np.random.Generator) -> Any:
        # public landmarks: drawn data-independently on the sphere of radius 1/2 (rows lie in the unit ball)
        return PrivateKernelMachine(epsilon=eps, delta=delta, lam=lam / 2.0, bandwidth=sig, classes=pm, solver="nystrom",
                                    landmarks=_sphere(H["nystrom_landmarks"], info['d'], 0.5, rng), solver_tol=tol,
                                    random_state=rng)

    def park(eps: float, delta: float, info: dict[str, int], rng: np.random.Generator) -> Any:
        # Park's method runs on the pixels / 255 in [0, 1]^d (its public start domain), recovered from our features
        # by a public per-record map; Table 7.1's satimage setting (C/n = 0.05, gamma = 0.1, lr = 0.001, 20
        # iterations, r_max = 1): published values, used as public knowledge
        from sklearn.pipeline import make_pipeline
        from sklearn.preprocessing import FunctionTransformer

        c = INTERCEPT_FEATURE
        to_unit = FunctionTransformer(lambda X: np.clip((X[:, :-1] / math.sqrt(1 - c * c) * math.sqrt(X.shape[1] - 1)
                                                         + 1.0) / 2.0, 0.0, 1.0))
        epc = EquilibriumPointClassifier(epsilon_svdd=_solver_eps(eps / 2.0), epsilon_vote=eps / 2.0,
                                         classes=list(range(info["K"])), box=0.05, gamma=0.1, lr=0.001, n_iter=20,
                                         r_max=1.0, n_starts=H["park_starts"], domain=(0.0, 1.0), random_state=rng)
        return make_pipeline(to_unit, epc)

    ms = [
        Mechanism("rubinstein-rff", "PrivateSVM (RFF, hinge)", "Rubinstein 2012", "pure", False,
                  lambda e, d, info, r: PrivateSVM(epsilon=_solver_eps(e), C=1.0 / lam, sigma=sig,
                                                n_components=H["rff_components"], classes=pm, solver_tol=tol, random_state=r)),
        Mechanism("rubinstein-finite", "PrivateSVM-Finite (linear, hinge)", "Rubinstein 2012", "pure", False,
                  lambda e, d, info, r: PrivateSVMFinite(epsilon=_solver_eps(e), C=1.0 / lam, data_norm=1.0, classes=pm,
                                                      solver_tol=tol, random_state=r)),
        Mechanism("chaudhuri-output-logistic", "output perturbation (logistic)", "Chaudhuri 2011", "pure", False,
                  lambda e, d, info, r: OutputPerturbation(epsilon=_solver_eps(e), Lambda=lam, loss="logistic", data_norm=1.0,
                                                        classes=pm, solver_tol=tol, random_state=r)),
        Mechanism("chaudhuri-output-huber", "output perturbation (Huber)", "Chaudhuri 2011", "pure", False,
                  lambda e, d, info, r: OutputPerturbation(epsilon=_solver_eps(e), Lambda=lam, loss="huber", h=H["huber_h"],
                                                        data_norm=1.0, classes=pm, solver_tol=tol, random_state=r)),
        Mechanism("chaudhuri-objective-logistic", "objective perturbation (logistic)", "Chaudhuri 2011", "pure", False,
                  lambda e, d, info, r: ObjectivePerturbation(epsilon=e, Lambda=lam, loss="logistic", data_norm=1.0,
                                                           classes=pm, solver_tol=tol, random_state=r)),
        Mechanism("chaudhuri-objective-huber", "objective perturbation (Huber)", "Chaudhuri 2011", "pure", False,
                  lambda e, d, info, r: ObjectivePerturbation(epsilon=e, Lambda=lam, loss="huber", h=H["huber_h"],
                                                           data_norm=1.0, classes=pm, solver_tol=tol, random_state=r)),
        Mechanism("chaudhuri-kernel", "PrivateKernelERM (RFF, objective, logistic)", "Chaudhuri 2011", "pure", False,
                  lambda e, d, info, r: PrivateKernelERM(epsilon=e, Lambda=lam, gamma=gamma, n_components=H["rff_components"],
                                                      classes=pm, solver_tol=tol, random_state=r)),
        Mechanism("chaudhuri-tuned", "objective perturbation (logistic), Lambda by Algorithm 4", "Chaudhuri 2011", "pure",
                  False,
                  lambda e, d, info, r: PrivateTuning(ObjectivePerturbation(loss="logistic", data_norm=1.0, solver_tol=tol),
                                                   Lambdas=H["tuning_grid"], epsilon=e, classes=pm, random_state=r)),
        Mechanism("hall-nystrom", "PrivateKernelMachine (Nystrom, hinge)", "Hall 2013", "approx", False, hall),
        Mechanism("bassily-alg2", "Algorithm 2 (JL + noisy GD)", "Bassily 2022", "approx", False,
                  lambda e, d, info, r: PrivateMarginClassifier(epsilon=e, delta=d, rho=H["bassily_rho"],
                                                             Lambda=H["bassily_Lambda"], data_norm=1.0, classes=pm,
                                                             random_state=r)),
        Mechanism("bassily-alg3", "Algorithm 3 (RFF + Algorithm 2)", "Bassily 2022", "approx", False,
                  lambda e, d, info, r: PrivateKernelMarginClassifier(epsilon=e, delta=d, rho=H["bassily_rho"],
                                                                   Lambda=H["bassily_Lambda"], sigma=sig,
                                                                   n_frequencies=H["bassily_frequencies"], classes=pm,
                                                                   random_state=r)),
        Mechanism("park-epc", "EquilibriumPointClassifier", "Park 2022", "pure", True, park),
        Mechanism("diffprivlib-lr", "diffprivlib LogisticRegression", "diffprivlib", "pure", False, dpl),
        Mechanism("nonprivate-linearsvc", "non-private LinearSVC", "reference", "none", False,
                  lambda e, d, info, r: LinearSVC(C=1.0 / (info['n'] * lam), fit_intercept=False)),
        Mechanism("nonprivate-logistic", "non-private LogisticRegression", "reference", "none", False,
                  lambda e, d, info, r: LogisticRegression(C=1.0 / (info['n'] * lam), fit_intercept=False)),
        Mechanism("nonprivate-svc", "non-private SVC (RBF)", "reference", "none", False,
                  lambda e, d, info, r: SVC(C=1.0 / (info['n'] * lam), gamma=gamma)),
    ]
    return {m.name: m for m in ms}


MECHANISMS: dict[str, Mechanism] = _factories()


# ----------------------------------------------------------------------------------------------
# data: public, per-record feature maps
# ----------------------------------------------------------------------------------------------
def _hash_bucket(value: str, column: str, buckets: int) -> int:
    return int(hashlib.sha1(f"{column}={value}".encode()).hexdigest(), 16) % buckets


def _unit_ball(X: Array) -> Array:
    return X / np.maximum(np.linalg.norm(X, axis=1), 1.0)[:, None]


def _with_constant(X: Array) -> Array:
    """Rows of norm <= 1 shrunk by sqrt(1 - c^2), with the public constant feature c = INTERCEPT_FEATURE appended: a
    (penalised) intercept for every linear mechanism, rows still in the unit ball."""
    c = INTERCEPT_FEATURE
    return np.hstack([X * math.sqrt(1.0 - c * c), np.full((X.shape[0], 1), c)])


def public_features(name: str, frame: pd.DataFrame) -> Array:
    """The per-record, data-independent feature map of a raw table (module docstring); rows in the unit ball."""
    from dpkernels.datasets import ADULT_CATEGORICAL, KDD_CATEGORICAL, KDD_COLUMNS, _adult_vocabularies

    if name == "adult":
        blocks = [np.clip(frame[c].to_numpy(np.float64) / cap, 0.0, 1.0)[:, None] for c, cap in ADULT_CAPS.items()]
        for col, values in _adult_vocabularies().items():
            if col not in ADULT_CATEGORICAL:
                continue
            codes = pd.Categorical(frame[col], categories=values).codes
            if np.any(codes < 0):
                raise ValueError(f"Adult column {col!r} has values outside adult.names")
            blocks.append(np.eye(len(values))[codes])
        return _with_constant(_unit_ball(np.hstack(blocks)))
    if name == "kddcup99":
        numeric = [c for c in KDD_COLUMNS[:-1] if c not in KDD_CATEGORICAL]
        blocks = []
        for c in numeric:
            x = np.maximum(frame[c].to_numpy(np.float64), 0.0)
            if c.endswith("_rate"):
                blocks.append(np.clip(x, 0.0, 1.0)[:, None])
            else:
                cap = 1e9 if c in KDD_BIG else 1e3
                blocks.append(np.clip(np.log1p(x) / math.log1p(cap), 0.0, 1.0)[:, None])
        for col in KDD_CATEGORICAL:
            values = frame[col].astype(str)
            idx = values.map({v: _hash_bucket(v, col, KDD_HASH_BUCKETS) for v in values.unique()}).to_numpy()
            blocks.append(np.eye(KDD_HASH_BUCKETS)[idx])
        return _with_constant(_unit_ball(np.hstack(blocks)))
    if name == "satimage":
        # pixels in [0, 255] (public range), centred at the public midpoint: each coordinate in [-1/sqrt(d), 1/sqrt(d)]
        P = np.clip(frame.to_numpy(np.float64) / 255.0, 0.0, 1.0)
        return _with_constant((2.0 * P - 1.0) / math.sqrt(P.shape[1]))
    raise ValueError(f"unknown data set {name!r}; known: {DATASETS}")


@functools.lru_cache(maxsize=4)
def _population(name: str, task: str) -> tuple[pd.DataFrame, NDArray]:
    """The whole raw table (rows the feature map will see) with its public labels (cached per process)."""
    from dpkernels import datasets as D

    if name == "adult":
        frames = []
        for key, skip in (("adult.data", 0), ("adult.test", 1)):
            frames.append(pd.read_csv(D._open_text(D.locate(key)), header=None, names=D.ADULT_COLUMNS, skiprows=skip,
                                      skipinitialspace=True, na_values="?", keep_default_na=False))
        df = pd.concat(frames, ignore_index=True)
        df = df[df["income"].notna() & (df["income"] != "")]
        df = df[df[D.ADULT_COLUMNS].notna().all(axis=1)].reset_index(drop=True)  # the population: complete rows
        return df, np.where(df["income"].str.rstrip(".") == ">50K", 1, -1)
    if name == "kddcup99":
        df = D._kdd_frame()
        return df, np.where(df["label"].isin(D.KDD_DOS), -1, 1)
    if name == "satimage":
        ds = D.load_satimage("all")
        if task == "binary":  # class "red soil" (SATIMAGE_BINARY) against the rest
            return pd.DataFrame(ds.X), np.where(ds.y == SATIMAGE_BINARY, 1, -1)
        return pd.DataFrame(ds.X), ds.y.astype(np.int64)
    raise ValueError(f"unknown data set {name!r}; known: {DATASETS}")


#: The raw files each data set needs (checked by :func:`available` without reading them).
FILES = {"adult": ("adult.data", "adult.test", "adult.names"), "kddcup99": ("kddcup99",), "satimage": ("satellite",)}


def available(name: str) -> str:
    """'' when the files of data set ``name`` can be found (or downloaded), else the reason (the first line of
    :class:`dpkernels.datasets.DatasetUnavailable`'s message)."""
    from dpkernels.datasets import DatasetUnavailable, locate

    try:
        for key in FILES[name]:
            locate(key)
    except DatasetUnavailable as exc:
        return str(exc).splitlines()[0]
    return ""


def load_task_data(name: str, task: str, n_train: int, n_test: int, seed: int) -> tuple[Array, NDArray, Array, NDArray]:
    """A seeded split of ``n_train`` training and ``n_test`` test rows of a data set, through the public feature map
    (applied to the drawn rows only: it is per-record).  Raises :class:`dpkernels.datasets.DatasetUnavailable` when
    the file is absent (KDDCup99 without DPKERNELS_DATA)."""
    frame, y = _population(name, task)
    if n_train + n_test > len(y):
        raise ValueError(f"{name} has {len(y)} rows, fewer than {n_train} + {n_test}")
    idx = np.random.default_rng([seed, 11]).permutation(len(y))[: n_train + n_test]
    X = public_features(name, frame.iloc[idx])
    return X[:n_train], y[idx[:n_train]], X[n_train:], y[idx[n_train:]]


# ----------------------------------------------------------------------------------------------
# accounting
# ----------------------------------------------------------------------------------------------
def accounted_epsilon(parts: Sequence[tuple[float, float]], delta: float) -> float:
    """Epsilon at total ``delta`` of the sequential composition of (epsilon_i, delta_i)-DP parts: the exact sum for
    pure parts (basic composition), the part itself for a single part, and otherwise dp-accounting's PLD accountant
    over each part's worst-case privacy-loss distribution (:func:`dpkernels.accounting.compose`; its delta_i mass at
    infinite loss is charged against ``delta``)."""
    if len(parts) == 1 and parts[0][1] <= delta:
        return float(parts[0][0])
    basic = float(sum(e for e, _ in parts))
    if all(d == 0.0 for _, d in parts):
        return basic
    pld = compose([("dp", e, d) for e, d in parts], delta)
    # basic composition (sum of epsilons at the sum of deltas) is valid too; PLD's discretisation is pessimistic
    return min(pld, basic) if sum(d for _, d in parts) <= delta else pld


def split_budget(epsilon: float, delta: float, k: int) -> tuple[float, float]:
    """Per-part (epsilon_k, delta_k) for k sequential parts within a total (epsilon, delta).

    delta = 0: epsilon / k (basic composition, exact for pure DP).  delta > 0: delta_k = delta / (2k) and the
    largest epsilon_k (bisection) whose PLD-accounted composition at the remaining delta / 2 is <= epsilon."""
    if k < 1 or int(k) != k:
        raise ValueError(f"k must be a positive integer, got {k!r}")
    if epsilon <= 0:
        raise ValueError(f"epsilon must be > 0, got {epsilon!r}")
    if delta == 0.0 or k == 1:
        return epsilon / k, delta / k
    dk = delta / (2 * k)
    lo, hi = epsilon / k, epsilon
    for _ in range(40):
        mid = 0.5 * (lo + hi)
        if accounted_epsilon([(mid, dk)] * k, delta) <= epsilon:
            lo = mid
        else:
            hi = mid
    return lo, dk


# ----------------------------------------------------------------------------------------------
# the sweep
# ----------------------------------------------------------------------------------------------
def validate_config(config: dict[str, Any]) -> None:
    """Refuse an invalid configuration with ValueError (unknown names, privacy parameters out of range)."""
    m = config.get("mechanism")
    if m not in MECHANISMS:
        raise ValueError(f"unknown mechanism {m!r}; known: {sorted(MECHANISMS)}")
    if config.get("dataset") not in DATASETS:
        raise ValueError(f"unknown data set {config.get('dataset')!r}; known: {DATASETS}")
    if config.get("task") not in ("binary", "multiclass"):
        raise ValueError(f"task must be 'binary' or 'multiclass', got {config.get('task')!r}")
    if config["task"] == "multiclass" and config["dataset"] != "satimage":
        raise ValueError("the multi-class task exists for satimage only")
    if MECHANISMS[m].multiclass and config["task"] != "multiclass":
        raise ValueError(f"{m} is a multi-class mechanism; use task='multiclass'")
    mech = MECHANISMS[m]
    eps, delta = config.get("epsilon"), config.get("delta")
    if mech.privacy == "none":
        if eps is not None:
            raise ValueError(f"{m} is not private; its epsilon must be None")
    else:
        if eps is None or not (isinstance(eps, (int, float)) and math.isfinite(eps) and eps > 0):
            raise ValueError(f"epsilon must be a finite number > 0, got {eps!r}")
        if not (isinstance(delta, float) and 0.0 < delta < 1.0 / config["n_train"]):
            raise ValueError(f"delta must lie in (0, 1/n_train), got {delta!r}")
    for key in ("n_train", "n_test"):
        if not isinstance(config.get(key), int) or config[key] < 10:
            raise ValueError(f"{key} must be an integer >= 10, got {config.get(key)!r}")


def _fit_predict(mech: Mechanism, eps: float | None, delta: float, Xtr: Array, ytr: NDArray, Xte: Array,
                 classes: NDArray | None, rng: np.random.Generator) -> tuple[NDArray, list[tuple[float, float]]]:
    """Fit (one-against-all for a binary mechanism on a multi-class task) and predict; returns the predictions and
    the (epsilon, delta) of each part as stated by the fitted guarantee(s)."""
    info = {"n": len(ytr), "d": Xtr.shape[1], "K": 2 if classes is None else len(classes)}
    if classes is None or mech.multiclass:
        est = mech.factory(eps, delta if mech.privacy == "approx" else 0.0, info, rng)
        est.fit(Xtr, ytr)
        return est.predict(Xte), [_spent(est, mech)]
    K = len(classes)
    e_k, d_k = (split_budget(eps, delta, K) if mech.privacy == "approx" else (eps / K, 0.0)) if eps is not None else (None, 0.0)
    scores, parts = np.empty((len(Xte), K)), []
    for j, c in enumerate(classes):
        est = mech.factory(e_k, d_k, info, rng).fit(Xtr, np.where(ytr == c, 1, -1))
        scores[:, j] = est.decision_function(Xte)
        parts.append(_spent(est, mech))
    return classes[np.argmax(scores, axis=1)], parts


def _spent(est: Any, mech: Mechanism) -> tuple[float, float]:
    """The (epsilon, delta) a fitted estimator states, including its certified-solver factor when it has one."""
    if mech.privacy == "none":
        return 0.0, 0.0
    g = getattr(est[-1] if hasattr(est, "steps") else est, "guarantee_", None)
    if g is None:  # diffprivlib: pure epsilon-DP at its epsilon
        return float(est.epsilon), 0.0
    eps = g.epsilon  # the level that holds, solver slack included
    return float(eps), float(g.delta)


_FIT_LOCK = threading.Lock()


def run_task(config: dict[str, Any]) -> dict[str, Any]:
    """One (mechanism, data set, task, epsilon, seed): test error, fit seconds, peak fit memory (MB, tracemalloc)
    and the privacy spent as accounted.  A missing data file returns a row with its reason (``skipped``)."""
    from diffprivlib.utils import PrivacyLeakWarning as DPLPrivacyLeakWarning
    from threadpoolctl import threadpool_limits

    from dpkernels._validation import PrivacyLeakWarning
    from dpkernels.datasets import DatasetUnavailable

    validate_config(config)
    mech = MECHANISMS[config["mechanism"]]
    try:
        Xtr, ytr, Xte, yte = load_task_data(config["dataset"], config["task"], config["n_train"], config["n_test"],
                                            config["seed"])
    except DatasetUnavailable as exc:
        return {"error": math.nan, "fit_seconds": math.nan, "peak_mb": math.nan, "epsilon_spent": math.nan,
                "delta_spent": math.nan, "n_parts": 0, "d": 0, "base_error": math.nan,
                "skipped": str(exc).splitlines()[0][:300]}
    classes = np.arange(6) if config["task"] == "multiclass" else None
    rng = np.random.default_rng([config["seed"], int(hashlib.sha1(config["mechanism"].encode()).hexdigest()[:8], 16),
                                 int(round((config["epsilon"] or 0.0) * 1e6))])
    # tracemalloc, the warning filters and the BLAS thread limit are process-wide: fits in threads of one process
    # (a Dask worker with several threads) take turns, or their measurements would mix and tracemalloc could crash
    with _FIT_LOCK, threadpool_limits(1), warnings.catch_warnings():
        # a privacy-leak warning (a bound or label set taken from the data) fails the task instead of passing by
        warnings.simplefilter("error", PrivacyLeakWarning)
        warnings.simplefilter("error", DPLPrivacyLeakWarning)
        warnings.simplefilter("ignore", DeprecationWarning)  # scipy's L-BFGS-B options, called by diffprivlib
        tracemalloc.start()
        t0 = time.perf_counter()
        pred, parts = _fit_predict(mech, config["epsilon"], config["delta"], Xtr, ytr, Xte, classes, rng)
        seconds = time.perf_counter() - t0
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
    eps_spent = accounted_epsilon(parts, config["delta"]) if mech.privacy == "approx" else float(sum(e for e, _ in parts))
    return {"error": float(np.mean(pred != yte)), "fit_seconds": float(seconds), "peak_mb": peak / 2**20,
            "epsilon_spent": float(eps_spent), "delta_spent": float(config["delta"] if mech.privacy == "approx" else 0.0),
            "n_parts": len(parts), "d": int(Xtr.shape[1]), "base_error": _majority_error(yte), "skipped": ""}


def _majority_error(y: NDArray) -> float:
    """Test error of always predicting the test set's most frequent label (an evaluation reference, used by no
    mechanism): a private classifier that does not beat it has learned nothing usable."""
    return float(1.0 - np.max(np.unique(y, return_counts=True)[1]) / len(y))


def make_configs(datasets: Sequence[str], mechanisms: Sequence[str], epsilons: Sequence[float], seeds: int,
                 n_train: dict[str, int], n_test: int, delta: float = DELTA) -> list[dict[str, Any]]:
    """Every (data set, task, mechanism, epsilon, seed); the non-private references once per seed.  satimage gets
    the binary task (red soil against the rest) and the 6-class task (Park's method natively, the binary mechanisms
    one-against-all)."""
    out = []
    for ds in datasets:
        for task in (("binary", "multiclass") if ds == "satimage" else ("binary",)):
            for m in mechanisms:
                mech = MECHANISMS[m]
                if mech.multiclass and task != "multiclass":
                    continue
                for eps in ([None] if mech.privacy == "none" else list(epsilons)):
                    for s in range(seeds):
                        c = {"dataset": ds, "task": task, "mechanism": m, "epsilon": None if eps is None else float(eps),
                             "delta": float(delta), "seed": s, "n_train": int(n_train[ds]), "n_test": int(n_test)}
                        validate_config(c)
                        out.append(c)
    return out


def run_frontier(configs: Sequence[dict[str, Any]], store: Any = None, n_jobs: int = 1, scheduler: str | None = None,
                 progress: bool = True) -> pd.DataFrame:
    """The sweep through :func:`dpkernels.sweep.run_sweep` (default store ``$DPKERNELS_CACHE/sweeps/frontier``; a
    fresh temporary folder when ``DPKERNELS_NO_CACHE`` is set), with each mechanism's label, paper and privacy kind."""
    import os
    import tempfile

    from dpkernels.sweep import ResultStore, run_sweep

    if store is None:
        store = ResultStore(tempfile.mkdtemp(prefix="frontier-")) if os.environ.get("DPKERNELS_NO_CACHE") else \
            ResultStore.default("frontier")
    df = run_sweep(run_task, list(configs), store, n_jobs=n_jobs, scheduler=scheduler, progress=progress, desc="frontier")
    df["label"] = df["mechanism"].map(lambda m: MECHANISMS[m].label)
    df["paper"] = df["mechanism"].map(lambda m: MECHANISMS[m].paper)
    df["privacy"] = df["mechanism"].map(lambda m: MECHANISMS[m].privacy)
    return df


# ----------------------------------------------------------------------------------------------
# summaries, claims and the recommendation
# ----------------------------------------------------------------------------------------------
def _ci(x: NDArray) -> tuple[float, float, float]:
    """Mean, standard error and the half-width of the t 95% interval over seeds."""
    x = np.asarray(x, dtype=float)
    n = len(x)
    if n < 2:
        return float(np.mean(x)), math.nan, math.nan
    se = float(np.std(x, ddof=1) / math.sqrt(n))
    return float(np.mean(x)), se, float(stats.t.ppf(0.975, n - 1) * se)


def summarise(df: pd.DataFrame) -> pd.DataFrame:
    """Mean test error, standard error, 95% CI half-width, fit time and peak memory per (data set, task,
    mechanism, epsilon)."""
    rows = []
    ok = df[df["skipped"] == ""]
    for key, g in ok.groupby(["dataset", "task", "mechanism", "epsilon"], dropna=False, sort=False):
        m, se, hw = _ci(g["error"].to_numpy())
        rows.append({"dataset": key[0], "task": key[1], "mechanism": key[2], "epsilon": key[3],
                     "label": MECHANISMS[key[2]].label, "privacy": MECHANISMS[key[2]].privacy,
                     "n_train": int(g["n_train"].iloc[0]), "d": int(g["d"].iloc[0]), "error": m, "se": se, "ci95": hw,
                     "fit_seconds": float(g["fit_seconds"].mean()), "peak_mb": float(g["peak_mb"].mean()),
                     "base_error": float(g["base_error"].mean()),
                     "epsilon_spent_max": float(g["epsilon_spent"].max()), "n_runs": len(g)})
    return pd.DataFrame(rows)


def paired_claim(df: pd.DataFrame, dataset: str, task: str, a: str, b: str, epsilons: Sequence[float],
                 alpha: float = 0.05) -> dict[str, Any]:
    """"a beats b at these epsilons": a one-sided paired t-test over seeds of the error difference (b - a) averaged
    over the epsilons (both mechanisms see the same training and test rows for a given seed, so the seeds are the
    independent units; the epsilons of one seed are not).  Holds when p < alpha and the mean difference is positive;
    a family of such claims is judged with :func:`dpkernels.verdicts.holm`."""
    sel = df[(df["dataset"] == dataset) & (df["task"] == task) & (df["skipped"] == "") & df["epsilon"].isin(list(epsilons))]
    pa = sel[sel["mechanism"] == a].set_index(["seed", "epsilon"])["error"]
    pb = sel[sel["mechanism"] == b].set_index(["seed", "epsilon"])["error"]
    common = pa.index.intersection(pb.index)
    per_seed = (pb.loc[common] - pa.loc[common]).groupby(level="seed").mean()
    if len(per_seed) < 3:
        return {"n_seeds": len(per_seed), "mean_diff": math.nan, "p": math.nan, "holds": False}
    diff = per_seed.to_numpy()
    if np.all(diff == diff[0]):
        p = 0.0 if diff[0] > 0 else 1.0
    else:
        p = float(stats.ttest_1samp(diff, 0.0, alternative="greater").pvalue)
    return {"n_seeds": len(per_seed), "mean_diff": float(diff.mean()), "p": p, "holds": bool(p < alpha and diff.mean() > 0)}


def recommendation(summary: pd.DataFrame, results: pd.DataFrame) -> pd.DataFrame:
    """Per (data set, task, epsilon): the private mechanism with the lowest mean test error, its evidence (mean error
    and 95% CI), the runner-up, and ``tie`` when their intervals overlap (the data then do not separate them);
    ``paired_p``: the one-sided paired t-test of "best beats runner-up" over seeds (:func:`paired_claim`, more
    powerful than the overlap of intervals, reported as further evidence); ``beats_majority`` says whether the best
    one's interval lies below the majority-class error (``base_error``)."""
    rows = []
    priv = summary[summary["privacy"] != "none"]
    for (ds, task, eps), g in priv.groupby(["dataset", "task", "epsilon"], sort=True):
        g = g.sort_values("error")
        best = g.iloc[0]
        second = g.iloc[1] if len(g) > 1 else None
        tie = bool(second is not None and best["error"] + best["ci95"] >= second["error"] - second["ci95"])
        p = math.nan if second is None else paired_claim(results, ds, task, best["mechanism"], second["mechanism"], [eps])["p"]
        level = "high (eps <= 0.1)" if eps <= 0.1 else ("medium (0.1 < eps <= 1)" if eps <= 1 else "low (eps > 1)")
        rows.append({"dataset": ds, "task": task, "n_train": int(best["n_train"]), "d": int(best["d"]),
                     "epsilon": eps, "privacy_level": level, "mechanism": best["mechanism"], "label": best["label"],
                     "error": best["error"], "ci95": best["ci95"],
                     "runner_up": "" if second is None else second["mechanism"],
                     "runner_up_error": math.nan if second is None else second["error"],
                     "runner_up_ci95": math.nan if second is None else second["ci95"],
                     "verdict": "tie" if tie else "separated", "paired_p": p, "base_error": best["base_error"],
                     "beats_majority": bool(best["error"] + best["ci95"] < best["base_error"])})
    return pd.DataFrame(rows)
