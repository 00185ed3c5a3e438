"""Which mechanism, and is private learning worth it at all?  The cross-paper frontier from a thousand rows to the full
data, at equal end-to-end privacy cost, with its cost curves (issues 11 and 22).

One sweep (data set x training size x mechanism x epsilon x seed) over every classifier of the workbook, run through
:func:`dpkernels.sweep.run_sweep` (a content-addressed store: a rerun computes only what is missing; joblib processes
locally, a Dask cluster for the full-size profile).  :func:`run_task` fits one mechanism on one seeded training set and
returns its test error, the majority-class error of the same test set, the fit time, the fit's peak traced memory,
the size of the training matrix and the privacy spent as accounted.

**Sizes.**  Each data set has a fixed, seeded test set (:data:`DATASETS`, ``n_test``); the training sets of one seed
are nested prefixes of the remaining rows, from about 1,000 rows to all of them ("full": Adult 40,000, KDDCup99
484,000, shuttle 50,000, satimage 5,000).

**Equal total privacy cost, end to end.**  Every private mechanism receives the same total (epsilon, delta) for
everything that touches the training rows:

* *Features*: a per-record map with public constants (:func:`public_features`); replace-one neighbours stay
  replace-one neighbours and nothing is computed from the data.  Adult's numeric columns are divided by public caps
  (census top codes and stated round caps, clipped) and its categoricals one-hot encoded with the vocabularies of
  ``adult.names``; KDDCup99's counters go through log1p / log1p(public cap) and its categoricals through a
  data-independent hash into :data:`KDD_HASH_BUCKETS` buckets; satimage's pixels are divided by 255 (their public
  range); shuttle's sensor readings are clipped to +-:data:`SHUTTLE_CAP` (a stated round cap) and divided by it.
  Rows are then in the unit ball, with a public constant feature (a penalised intercept).
* *Label sets* are public: Adult income above 50K or not; KDD denial-of-service or not; satimage's six and shuttle's
  seven documented classes.
* *Hyper-parameters* follow public rules fixed before any data are loaded (:mod:`dpkernels.defaults`, each citing
  its source), as functions of (n, d, epsilon): Chaudhuri et al.'s Theorems 15 and 18 for Lambda, Rubinstein et al.'s
  C = sqrt(n), Bassily et al.'s Theorem 3.2 for rho, Park's Table 7.1.  Where a paper offers a *private* selection it
  runs as its own row inside the same budget: Chaudhuri et al.'s Algorithm 4 (``chaudhuri-tuned``) and the private
  choice of rho (``bassily-selected``).  The non-private references are tuned on a validation split of their
  training rows (they are references, not releases).
* *Composition*: one-against-all on a K-class task fits K binary mechanisms on the same rows: pure-epsilon mechanisms
  get epsilon / K each (basic composition, exact for pure DP); (epsilon, delta) mechanisms the largest
  (epsilon_k, delta / (2K)) whose K-fold composition, accounted by dp-accounting's privacy-loss distributions, stays
  within (epsilon, delta) (:func:`split_budget`).  Mechanisms whose guarantee carries a certified-solver factor
  epsilon (1 + 2 solver_tol) are calibrated at epsilon / (1 + 2 solver_tol).
* *Pure epsilon-DP* mechanisms spend epsilon with delta = 0, a stronger guarantee than the (epsilon, delta) of the
  others at the same epsilon.

**Sizes a mechanism cannot reach** (:attr:`Mechanism.max_n`): only scikit-learn's kernel SVC (the non-private RBF
reference: libsvm's kernel evaluations grow as n^2) stops before the full data; it runs up to its stated limit.
(Park's SVDD is a QP over the n rows, but in a 400-dimensional random-feature space it reaches 50,000 rows in seconds.)

Neighbouring relation: replace-one, on a training sample of fixed, public size n.  Seeds are for reproduction only: a
deployment draws noise from operating-system entropy.
"""

from __future__ import annotations

import functools
import hashlib
import json
import math
import os
import socket
import time
import tracemalloc
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from dpkernels import defaults
from dpkernels.accounting import compose

__all__ = [
    "DELTA",
    "SOLVER_TOL",
    "DatasetSpec",
    "DATASETS",
    "Mechanism",
    "MECHANISMS",
    "KDD_HASH_BUCKETS",
    "SHUTTLE_CAP",
    "public_features",
    "training_sizes",
    "load_task_data",
    "available",
    "split_budget",
    "accounted_epsilon",
    "make_configs",
    "seeds_for",
    "validate_config",
    "task_cost",
    "run_task",
    "run_frontier",
]

Array = NDArray[np.float64]

#: The total delta of every (epsilon, delta) mechanism: below 1 / n for every training size (484,000 rows at most).
DELTA = 1e-6
#: Certified-solver tolerance (x the sensitivity) of every mechanism that solves an ERM.
SOLVER_TOL = 1e-3
#: The public constant feature appended to every row (an intercept, penalised like the weights).
INTERCEPT_FEATURE = 0.5
#: Buckets of the data-independent hash of each KDD categorical column.
KDD_HASH_BUCKETS = 16
#: Adult's numeric columns with public caps (values above are clipped): census top codes (age 90, capital gain
#: 99,999, hours 99), the 16 education levels of adult.names, and a stated round cap of 5,000 for capital loss.
#: fnlwgt (a sampling weight, not an attribute of the person) is dropped.
ADULT_CAPS = {"age": 90.0, "education-num": 16.0, "capital-gain": 99999.0, "capital-loss": 5000.0, "hours-per-week": 99.0}
#: KDD columns named ``*_rate`` are rates in [0, 1] by definition; every other numeric column is a counter mapped to
#: log1p(x) / log1p(cap), cap 1e9 for durations and byte counts, 1e3 for the other counters (clipped).
KDD_BIG = ("duration", "src_bytes", "dst_bytes")
#: shuttle's nine sensor readings are clipped to [-cap, cap] and divided by cap (a stated round cap, not read from the
#: data; extreme readings are clipped).
SHUTTLE_CAP = 256.0
#: Random features of every random-feature mechanism (a documented default: Chaudhuri et al. run no kernel experiment
#: and Rubinstein et al.'s and Bassily et al.'s theorems ask for far more than any sweep can afford).
N_FEATURES = 100
#: Public landmarks of Hall et al.'s kernel machine (Nystrom), drawn on the sphere of radius 1/2 without the data.
N_LANDMARKS = 50
#: Park's data-independent starts of the dynamics.
PARK_STARTS = 300


@dataclass(frozen=True)
class DatasetSpec:
    """A data set of the frontier: its task, public label set, public row count and test-set size."""

    name: str
    task: str  #: "binary" or "multiclass"
    classes: tuple[Any, ...]  #: the public label set (binary: -1, +1)
    n_rows: int  #: rows of the population (public: the size of the published file)
    n_test: int  #: rows of the seeded test set
    files: tuple[str, ...]  #: the raw files (:data:`dpkernels.datasets.FILES` keys)
    description: str

    @property
    def n_full(self) -> int:
        """The largest training size: every row outside the test set."""
        return self.n_rows - self.n_test


DATASETS: dict[str, DatasetSpec] = {
    d.name: d for d in (
        DatasetSpec("adult", "binary", (-1, 1), 45_222, 5_222, ("adult.data", "adult.test", "adult.names"),
                    "income above 50K (+1) or not; complete rows of adult.data + adult.test"),
        DatasetSpec("kddcup99", "binary", (-1, 1), 494_021, 10_021, ("kddcup99",),
                    "denial-of-service attack (-1) or not (+1); the 10 percent file (not committed)"),
        DatasetSpec("shuttle", "multiclass", tuple(range(7)), 58_000, 8_000, ("shuttle",),
                    "Statlog shuttle, the 7 original classes (Rad.Flow is 79%)"),
        DatasetSpec("satimage", "multiclass", tuple(range(6)), 6_435, 1_435, ("satellite",),
                    "Statlog Landsat satellite (LIBSVM satimage), 6 classes"),
    )
}


# ----------------------------------------------------------------------------------------------
# mechanisms: public hyper-parameter rules and factories
# ----------------------------------------------------------------------------------------------
Info = dict[str, Any]  #: {"n", "d", "K", "dataset"}: public quantities a rule may use
Params = dict[str, Any]


@dataclass(frozen=True)
class Mechanism:
    """One row of the frontier: a name, its paper, its privacy kind, its public hyper-parameter rule and a factory.

    ``params(epsilon, info)`` returns the hyper-parameters (JSON-able; recorded with each result) from the public
    quantities only; ``build(params, epsilon, delta, info, rng)`` the unfitted estimator.  ``epsilon`` is the budget
    of one fit (after the one-against-all split)."""

    name: str
    label: str
    paper: str
    privacy: str  #: "pure" (delta = 0), "approx" ((epsilon, delta)) or "none"
    family: str  #: "linear", "random-features", "landmarks", "reference" or "quadratic" (a kernel matrix over the n rows)
    params: Callable[[float | None, Info], Params]
    build: Callable[[Params, float | None, float, Info, np.random.Generator], Any]
    source: str  #: where the hyper-parameter rule comes from
    multiclass: bool = False  #: native multi-class; binary ones run one-against-all on multi-class tasks
    max_n: int | None = None  #: the largest training size it is run at (None: every size)
    limit: str = ""  #: why it stops there
    weight: float = 1.0  #: relative cost per row (orders the sweep, most expensive first)
    tasks: tuple[str, ...] = ("binary", "multiclass")


def _solver_eps(eps: float) -> float:
    """The calibration epsilon of a mechanism whose guarantee is epsilon (1 + 2 solver_tol) (certified solver),
    rounded down one ulp so that the stated guarantee, recomputed in floating point, does not exceed ``eps``."""
    return float(np.nextafter(eps / (1.0 + 2.0 * SOLVER_TOL), 0.0))


def _sphere(n: int, d: int, radius: float, rng: np.random.Generator) -> Array:
    g = rng.standard_normal((n, d))
    return radius * g / np.linalg.norm(g, axis=1, keepdims=True)


#: RBF kernel exp(-gamma ||x - y||^2) with the public gamma of :func:`dpkernels.defaults.rbf_gamma` (rows in the unit
#: ball), i.e. bandwidth sigma = 1 / sqrt(2 gamma) in the exp(-||x - y||^2 / (2 sigma^2)) parameterisation.
GAMMA = defaults.rbf_gamma(1.0)
SIGMA = 1.0 / math.sqrt(2.0 * GAMMA)


def _chaudhuri(algorithm: str, loss: str) -> Callable[[float | None, Info], Params]:
    def params(eps: float | None, info: Info) -> Params:
        return {"Lambda": defaults.chaudhuri_lambda(info["n"], info["d"], float(eps), algorithm=algorithm, loss=loss)}
    return params


def _references() -> list[Mechanism]:
    """Non-private references, tuned on a validation split (the last 20% of the training rows, which are in random
    order) by scikit-learn's GridSearchCV with a predefined split, then refitted on all training rows."""
    from sklearn.linear_model import LogisticRegression
    from sklearn.svm import SVC, LinearSVC

    def linear_grid(eps: float | None, info: Info) -> Params:
        return {"C": [defaults.sklearn_C(info["n"], lam) for lam in defaults.NONPRIVATE_LAMBDAS]}

    return [
        Mechanism("nonprivate-logistic", "non-private LogisticRegression", "reference", "none", "reference",
                  linear_grid, lambda p, e, dl, info, r: _ValidationTuned(LogisticRegression(fit_intercept=False, max_iter=1000), p),
                  "validation split, Lambda in 1e-7..1e-2 (Chaudhuri et al.'s Table 1 range)", multiclass=True, weight=2.0),
        Mechanism("nonprivate-linearsvc", "non-private LinearSVC", "reference", "none", "reference", linear_grid,
                  lambda p, e, dl, info, r: _ValidationTuned(LinearSVC(fit_intercept=False, dual="auto", max_iter=2000), p),
                  "validation split, Lambda in 1e-7..1e-2", multiclass=True, weight=2.0),
        Mechanism("nonprivate-svc", "non-private SVC (RBF)", "reference", "none", "quadratic",
                  lambda e, info: {"C": [1.0, 10.0, 100.0], "gamma": [GAMMA]},
                  lambda p, e, dl, info, r: _ValidationTuned(SVC(), p),
                  "validation split, C in {1, 10, 100}, gamma = 1 (public scale rule)", multiclass=True, max_n=10_000,
                  limit="libsvm's O(n^2) kernel evaluations (about 45 s per fit at 20,000 rows)", weight=50.0),
    ]


class _ValidationTuned:
    """A non-private estimator whose grid of hyper-parameters is chosen on a fixed validation split (the last 20% of
    the training rows) and refitted on all of them; ``chosen_params_`` holds the choice."""

    def __init__(self, estimator: Any, grid: dict[str, list[float]]) -> None:
        self.estimator, self.grid = estimator, grid

    def fit(self, X: Array, y: NDArray) -> "_ValidationTuned":
        from sklearn.model_selection import GridSearchCV, PredefinedSplit

        fold = np.full(len(y), -1)
        fold[int(0.8 * len(y)):] = 0
        self.search_ = GridSearchCV(self.estimator, self.grid, cv=PredefinedSplit(fold), refit=True, error_score="raise")
        self.search_.fit(X, y)
        self.chosen_params_ = {k: float(v) for k, v in self.search_.best_params_.items()}
        return self

    def predict(self, X: Array) -> NDArray:
        return self.search_.predict(X)

    def decision_function(self, X: Array) -> Array:
        return self.search_.decision_function(X)


def _factories() -> dict[str, Mechanism]:
    """The mechanisms.  A mechanism's ``params`` are recorded in the papers' own parameterisations (Chaudhuri's
    Lambda, Rubinstein's C, Hall's lam, Park's gamma and lr, Bassily's Lambda); the factories convert them to the
    library's one name per concept (``alpha`` = Lambda = 1 / C = 2 lam, ``sigma`` with gamma = 1 / (2 sigma^2),
    ``learning_rate``, ``weight_bound``)."""
    from dpkernels.mechanisms import (
        EquilibriumPointClassifier,
        ObjectivePerturbation,
        OutputPerturbation,
        PrivateKernelERM,
        PrivateKernelMachine,
        PrivateKernelMarginClassifier,
        PrivateMarginClassifier,
        PrivateMarginSelection,
        PrivateSVM,
        PrivateSVMFinite,
        PrivateTuning,
    )

    pm = [-1, 1]
    tol = SOLVER_TOL
    thm = "Chaudhuri et al. (2011) Theorem {} (Lambda = eps_g / ||f0||^2, ||f0|| = 100)"

    def dpl(p: Params, eps: float | None, delta: float, info: Info, rng: np.random.Generator) -> Any:
        from diffprivlib.accountant import BudgetAccountant
        from diffprivlib.models import LogisticRegression as DPL

        return DPL(epsilon=eps, data_norm=1.0, C=defaults.sklearn_C(info["n"], p["Lambda"]), fit_intercept=False,
                   random_state=int(rng.integers(2**31)), accountant=BudgetAccountant())

    def hall(p: Params, eps: float | None, delta: float, info: Info, rng: np.random.Generator) -> Any:
        # public landmarks, drawn without the data on the sphere of radius 1/2 (rows lie in the unit ball); the
        # logistic loss (L = 1, as the hinge of Hall et al.'s Section 3) has a certifiable smooth solve at any n
        return PrivateKernelMachine(epsilon=eps, delta=delta, alpha=2.0 * p["lam"], loss="logistic", sigma=SIGMA,
                                    classes=pm, solver="nystrom", landmarks=_sphere(N_LANDMARKS, info["d"], 0.5, rng),
                                    solver_tol=tol, random_state=rng)

    def park(p: Params, eps: float | None, delta: float, info: Info, rng: np.random.Generator) -> Any:
        # Park's method runs on the public box [0, 1]^d, recovered from our features by a public per-record map
        from sklearn.pipeline import make_pipeline
        from sklearn.preprocessing import FunctionTransformer

        c = INTERCEPT_FEATURE
        to_unit = FunctionTransformer(lambda X: np.clip((X[:, :-1] / math.sqrt(1 - c * c) * math.sqrt(X.shape[1] - 1)
                                                         + 1.0) / 2.0, 0.0, 1.0))
        epc = EquilibriumPointClassifier(epsilon_svdd=_solver_eps(eps / 2.0), epsilon_vote=eps / 2.0,
                                         classes=list(range(info["K"])), box=p["box"], sigma=math.sqrt(0.5 / p["gamma"]), learning_rate=p["lr"],
                                         n_iter=int(p["n_iter"]), r_max=p["r_max"], n_starts=PARK_STARTS,
                                         domain=(0.0, 1.0), random_state=rng)
        return make_pipeline(to_unit, epc)

    def tuning(eps: float | None, info: Info) -> Params:
        m = len(defaults.CHAUDHURI_GRID_DECADES)
        return {"Lambdas": list(defaults.chaudhuri_lambda_grid(info["n"] // (m + 1), info["d"], float(eps)))}

    def margin(d_features: Callable[[Info], int]) -> Callable[[float | None, Info], Params]:
        def params(eps: float | None, info: Info) -> Params:
            k = defaults.bassily_k(info["n"], d_features(info), float(eps), info["delta"])
            return {"rho": defaults.bassily_rho(info["n"], float(eps)), "Lambda": defaults.BASSILY_LAMBDA, "k": k,
                    "max_iter": defaults.bassily_iterations(info["n"])}
        return params

    def selection(eps: float | None, info: Info) -> Params:
        m_train = info["n"] - int(round(0.2 * info["n"]))
        return {"rhos": list(defaults.bassily_rho_grid(m_train, float(eps))), "Lambda": defaults.BASSILY_LAMBDA,
                "k": defaults.bassily_k(m_train, info["d"], float(eps), info["delta"]),
                "max_iter": defaults.bassily_iterations(m_train)}

    ms = [
        Mechanism("rubinstein-finite", "PrivateSVM-Finite (linear, hinge)", "Rubinstein 2012", "pure", "linear",
                  lambda e, info: {"C": defaults.rubinstein_C(info["n"])},
                  lambda p, e, dl, info, r: PrivateSVMFinite(epsilon=_solver_eps(e), alpha=1.0 / p["C"], data_norm=1.0, classes=pm,
                                                             solver_tol=tol, random_state=r),
                  "Rubinstein et al. (2012) Remark 1: C = sqrt(n)", weight=2.0),
        Mechanism("rubinstein-rff", "PrivateSVM (RFF, hinge)", "Rubinstein 2012", "pure", "random-features",
                  lambda e, info: {"C": defaults.rubinstein_C(info["n"]), "sigma": SIGMA, "n_components": N_FEATURES},
                  lambda p, e, dl, info, r: PrivateSVM(epsilon=_solver_eps(e), alpha=1.0 / p["C"], sigma=p["sigma"],
                                                       n_components=p["n_components"], classes=pm, solver_tol=tol,
                                                       random_state=r),
                  "Rubinstein et al. (2012) Remark 1: C = sqrt(n); gamma = 1 (public scale rule)", weight=8.0),
        Mechanism("chaudhuri-output-logistic", "output perturbation (logistic)", "Chaudhuri 2011", "pure", "linear",
                  _chaudhuri("output", "logistic"),
                  lambda p, e, dl, info, r: OutputPerturbation(epsilon=_solver_eps(e), alpha=p["Lambda"], loss="logistic",
                                                               data_norm=1.0, classes=pm, solver_tol=tol, random_state=r),
                  thm.format(15)),
        Mechanism("chaudhuri-output-huber", "output perturbation (Huber SVM)", "Chaudhuri 2011", "pure", "linear",
                  _chaudhuri("output", "huber"),
                  lambda p, e, dl, info, r: OutputPerturbation(epsilon=_solver_eps(e), alpha=p["Lambda"], loss="huber",
                                                               h=0.5, data_norm=1.0, classes=pm, solver_tol=tol,
                                                               random_state=r),
                  thm.format(15) + "; h = 0.5 (Section 7)"),
        Mechanism("chaudhuri-objective-logistic", "objective perturbation (logistic)", "Chaudhuri 2011", "pure", "linear",
                  _chaudhuri("objective", "logistic"),
                  lambda p, e, dl, info, r: ObjectivePerturbation(epsilon=e, alpha=p["Lambda"], loss="logistic",
                                                                  data_norm=1.0, classes=pm, solver_tol=tol,
                                                                  random_state=r),
                  thm.format(18)),
        Mechanism("chaudhuri-objective-huber", "objective perturbation (Huber SVM)", "Chaudhuri 2011", "pure", "linear",
                  _chaudhuri("objective", "huber"),
                  lambda p, e, dl, info, r: ObjectivePerturbation(epsilon=e, alpha=p["Lambda"], loss="huber", h=0.5,
                                                                  data_norm=1.0, classes=pm, solver_tol=tol,
                                                                  random_state=r),
                  thm.format(18) + "; h = 0.5 (Section 7)"),
        Mechanism("chaudhuri-kernel", "PrivateKernelERM (RFF + objective, logistic)", "Chaudhuri 2011", "pure",
                  "random-features",
                  lambda e, info: {"Lambda": defaults.chaudhuri_lambda(info["n"], N_FEATURES, float(e)), "gamma": GAMMA,
                                   "n_components": N_FEATURES},
                  lambda p, e, dl, info, r: PrivateKernelERM(epsilon=e, alpha=p["Lambda"], sigma=math.sqrt(0.5 / p["gamma"]),
                                                             n_components=p["n_components"], classes=pm, solver_tol=tol,
                                                             random_state=r),
                  thm.format(18) + " with d = D random features (Algorithm 3)", weight=2.0),
        Mechanism("chaudhuri-tuned", "objective perturbation (logistic), Lambda by Algorithm 4", "Chaudhuri 2011", "pure",
                  "linear", tuning,
                  lambda p, e, dl, info, r: PrivateTuning(ObjectivePerturbation(loss="logistic", data_norm=1.0,
                                                                                solver_tol=tol),
                                                          alphas=tuple(p["Lambdas"]), epsilon=e, classes=pm,
                                                          random_state=r),
                  "Chaudhuri et al. (2011) Algorithm 4 over Theorem 18's Lambda at n / 6 times 10^(-1..1)"),
        Mechanism("hall-nystrom", "PrivateKernelMachine (Nystrom, logistic)", "Hall 2013", "approx", "landmarks",
                  lambda e, info: {"lam": defaults.hall_lam(info["n"]), "sigma": SIGMA, "landmarks": N_LANDMARKS},
                  hall, "lam = 1 / (2 sqrt(n)) (Rubinstein et al.'s C = sqrt(n); Hall et al. give no rule)", weight=2.0),
        Mechanism("bassily-alg2", "Algorithm 2 (JL + noisy GD)", "Bassily 2022", "approx", "random-features",
                  margin(lambda info: info["d"]),
                  lambda p, e, dl, info, r: PrivateMarginClassifier(epsilon=e, delta=dl, rho=p["rho"], weight_bound=p["Lambda"],
                                                                    data_norm=1.0, n_components=p["k"],
                                                                    max_iter=p["max_iter"], classes=pm, random_state=r),
                  "rho from Theorem 3.2's privacy term (ours); Lambda = 1 (footnote 1); the paper's k, at most d; "
                  "ln(m) ln(1/beta) gradient passes (Lemma 3.1's count)",
                  weight=4.0),
        Mechanism("bassily-alg3", "Algorithm 3 (RFF + Algorithm 2)", "Bassily 2022", "approx", "random-features",
                  lambda e, info: {**margin(lambda i: 2 * N_FEATURES)(e, info), "sigma": SIGMA, "n_frequencies": N_FEATURES},
                  lambda p, e, dl, info, r: PrivateKernelMarginClassifier(epsilon=e, delta=dl, rho=p["rho"],
                                                                          weight_bound=p["Lambda"], sigma=p["sigma"],
                                                                          n_frequencies=p["n_frequencies"],
                                                                          n_components=p["k"], max_iter=p["max_iter"],
                                                                          classes=pm, random_state=r),
                  "as Algorithm 2; D = 100 frequencies (2D = 200 features)", weight=6.0),
        Mechanism("bassily-selected", "Algorithm 2, rho chosen privately", "Bassily 2022", "approx", "random-features",
                  selection,
                  lambda p, e, dl, info, r: PrivateMarginSelection(rhos=tuple(p["rhos"]), epsilon=e, delta=dl,
                                                                   weight_bound=p["Lambda"], data_norm=1.0, n_components=p["k"],
                                                                   max_iter=p["max_iter"], classes=pm, random_state=r),
                  "ours (the paper's Appendix F was not recovered): the rule's rho times 1/4..4, exponential mechanism "
                  "on a disjoint 20% validation part", weight=8.0),
        Mechanism("park-epc", "EquilibriumPointClassifier", "Park 2022", "pure", "random-features",
                  lambda e, info: defaults.park_settings(info["dataset"]), park, "Park (2022) Table 7.1",
                  multiclass=True, weight=3.0, tasks=("multiclass",)),
        Mechanism("diffprivlib-lr", "diffprivlib LogisticRegression", "diffprivlib", "pure", "linear",
                  _chaudhuri("objective", "logistic"), dpl,
                  "as objective perturbation (the same mechanism): C = 1 / (n Lambda); binary tasks only: it reads the "
                  "label set from the data and refuses a training set without one of the classes (shuttle's rarest "
                  "class has 10 rows in 58,000)", tasks=("binary",)),
        *_references(),
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
    if name in ("satimage", "shuttle"):
        # satimage: pixels in [0, 255] (public range), centred at the public midpoint; shuttle: readings clipped to
        # +-SHUTTLE_CAP; either way each coordinate in [-1/sqrt(d), 1/sqrt(d)], so rows lie in the unit ball
        V = frame.to_numpy(np.float64)
        P = 2.0 * np.clip(V / 255.0, 0.0, 1.0) - 1.0 if name == "satimage" else np.clip(V / SHUTTLE_CAP, -1.0, 1.0)
        return _with_constant(P / math.sqrt(P.shape[1]))
    raise ValueError(f"unknown data set {name!r}; known: {sorted(DATASETS)}")


def _raw(name: str) -> tuple[pd.DataFrame, NDArray]:
    """The whole raw table with its public labels."""
    from dpkernels import datasets as D

    if name == "adult":
        frames = []
        for key, skip in (("adult.data", 0), ("adult.test", 1)):
            frames.append(pd.read_csv(D._open_text(D.locate(key, download=False)), header=None, names=D.ADULT_COLUMNS,
                                      skiprows=skip, skipinitialspace=True, na_values="?", keep_default_na=False))
        df = pd.concat(frames, ignore_index=True)
        df = df[df["income"].notna() & (df["income"] != "")]
        df = df[df[D.ADULT_COLUMNS].notna().all(axis=1)].reset_index(drop=True)  # the population: complete rows
        return df, np.where(df["income"].str.rstrip(".") == ">50K", 1, -1)
    if name == "kddcup99":  # read here, not through datasets._kdd_frame, whose module-level copy would stay in memory
        df = pd.read_csv(D.locate("kddcup99", download=False).path, header=None, names=D.KDD_COLUMNS, compression="gzip")
        return df, np.where(df["label"].str.rstrip(".").isin(D.KDD_DOS), -1, 1)
    if name == "satimage":
        D.locate("satellite", download=False)
        ds = D.load_satimage("all")
        return pd.DataFrame(ds.X), ds.y.astype(np.int64)
    if name == "shuttle":
        D.locate("shuttle", download=False)
        ds = D.load_shuttle(n_classes=7)
        return pd.DataFrame(ds.X), ds.y.astype(np.int64)
    raise ValueError(f"unknown data set {name!r}; known: {sorted(DATASETS)}")


def _feature_cache(name: str) -> Path:
    from dpkernels.cache import source_hash
    from dpkernels.datasets import _cache_dir

    return _cache_dir() / "frontier-features" / f"{name}-{source_hash()[:16]}"


@functools.lru_cache(maxsize=4)
def _population(name: str) -> tuple[Path, NDArray]:
    """Every row of a data set through the public feature map (per record, so mapping all rows equals mapping the
    drawn ones), saved once under ``$DPKERNELS_CACHE/frontier-features`` (keyed by the library's source): the path of
    the feature matrix (.npy) and the labels."""
    base = _feature_cache(name)
    xf, yf = base.with_suffix(".X.npy"), base.with_suffix(".y.npy")
    if not (xf.exists() and yf.exists()):
        frame, y = _raw(name)
        X = public_features(name, frame)
        if len(y) != DATASETS[name].n_rows:
            raise ValueError(f"{name}: {len(y)} rows, the public row count is {DATASETS[name].n_rows}")
        base.parent.mkdir(parents=True, exist_ok=True)
        for path, arr in ((xf, X), (yf, y)):
            tmp = path.with_suffix(f".{os.getpid()}.tmp.npy")
            np.save(tmp, arr)
            os.replace(tmp, path)
    return xf, np.load(yf)


def _rows(path: Path, idx: NDArray[np.intp]) -> Array:
    """Rows ``idx`` of the saved feature matrix, read through a memory map that is closed again: only the copy stays
    (a long-lived map would count the file's pages as the worker's resident memory, which joblib's loky workers
    report as a leak)."""
    X = np.load(path, mmap_mode="r")
    order = np.argsort(idx, kind="stable")
    try:
        out = np.empty((len(idx), X.shape[1]))
        out[order] = X[idx[order]]  # read in file order, placed in the requested order
        return out
    finally:
        X._mmap.close()


def available(name: str) -> str:
    """'' when the files of data set ``name`` can be found (or downloaded), else the reason (the first line of
    :class:`dpkernels.datasets.DatasetUnavailable`'s message)."""
    from dpkernels.datasets import DatasetUnavailable, locate

    try:
        for key in DATASETS[name].files:
            locate(key)
    except DatasetUnavailable as exc:
        return str(exc).splitlines()[0]
    return ""


def training_sizes(name: str, grid: Sequence[int | str]) -> list[int]:
    """A profile's grid of training sizes for a data set (``"full"``: every row outside the test set), increasing."""
    full = DATASETS[name].n_full
    out = sorted({full if g == "full" else int(g) for g in grid})
    if out[0] < 10 or out[-1] > full:
        raise ValueError(f"{name}: training sizes must lie in [10, {full}], got {list(grid)}")
    return out


def load_task_data(name: str, n_train: int, n_test: int, seed: int) -> tuple[Array, NDArray, Array, NDArray]:
    """Seed ``seed``'s test set (the first ``n_test`` rows of a seeded permutation of the population) and its training
    set of ``n_train`` rows (the next rows: the training sets of one seed are nested)."""
    path, y = _population(name)
    if n_train + n_test > len(y):
        raise ValueError(f"{name} has {len(y)} rows, fewer than {n_train} + {n_test}")
    perm = np.random.default_rng([seed, 11]).permutation(len(y))
    te, tr = np.sort(perm[:n_test]), perm[n_test:n_test + n_train]
    return _rows(path, tr), y[tr], _rows(path, te), y[te]


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


@functools.lru_cache(maxsize=256)
def split_budget(epsilon: float, delta: float, k: int) -> tuple[float, float]:
    """Per-part (epsilon_k, delta_k) for k sequential parts within a total (epsilon, delta).

    delta = 0: epsilon / k (basic composition, exact for pure DP), rounded down so that the k parts' floating-point sum
    does not exceed epsilon.  delta > 0: delta_k = delta / (2k) and the
    largest epsilon_k (bisection) whose PLD-accounted composition at the remaining delta / 2 is <= epsilon."""
    if k < 1 or int(k) != k:
        raise ValueError(f"k must be a positive integer, got {k!r}")
    if epsilon <= 0:
        raise ValueError(f"epsilon must be > 0, got {epsilon!r}")
    if k == 1:
        return epsilon, delta
    if delta == 0.0:  # epsilon / k rounded down until k of them sum (in floating point) to at most epsilon
        e = epsilon / k
        while math.fsum([e] * k) > epsilon or sum([e] * k) > epsilon:
            e = float(np.nextafter(e, 0.0))
        return e, 0.0
    dk = delta / (2 * k)
    lo, hi = split_budget(epsilon, 0.0, k)[0], epsilon  # the pure split is always within the target
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
    """Refuse an invalid configuration with ValueError (unknown names, sizes or privacy parameters out of range)."""
    m = config.get("mechanism")
    if m not in MECHANISMS:
        raise ValueError(f"unknown mechanism {m!r}; known: {sorted(MECHANISMS)}")
    ds = config.get("dataset")
    if ds not in DATASETS:
        raise ValueError(f"unknown data set {ds!r}; known: {sorted(DATASETS)}")
    mech, spec = MECHANISMS[m], DATASETS[ds]
    if spec.task not in mech.tasks:
        raise ValueError(f"{m} does not run on {spec.task} tasks ({ds})")
    eps, delta = config.get("epsilon"), config.get("delta")
    for key in ("n_train", "n_test"):
        if not isinstance(config.get(key), int) or config[key] < 10:
            raise ValueError(f"{key} must be an integer >= 10, got {config.get(key)!r}")
    if config["n_train"] + config["n_test"] > spec.n_rows:
        raise ValueError(f"{ds} has {spec.n_rows} rows: n_train + n_test = {config['n_train'] + config['n_test']}")
    if mech.max_n is not None and config["n_train"] > mech.max_n:
        raise ValueError(f"{m} runs up to n = {mech.max_n} ({mech.limit})")
    if mech.privacy == "none":
        if eps is not None:
            raise ValueError(f"{m} is not private; its epsilon must be None")
    else:
        if eps is None or not (isinstance(eps, (int, float)) and math.isfinite(eps) and eps > 0):
            raise ValueError(f"epsilon must be a finite number > 0, got {eps!r}")
        if not (isinstance(delta, float) and 0.0 < delta < 1.0 / config["n_train"]):
            raise ValueError(f"delta must lie in (0, 1/n_train), got {delta!r}")


def _fit_predict(mech: Mechanism, eps: float | None, delta: float, Xtr: Array, ytr: NDArray, Xte: Array,
                 spec: DatasetSpec, rng: np.random.Generator) -> tuple[NDArray, list[tuple[float, float]], Params]:
    """Fit (one-against-all for a binary mechanism on a multi-class task) and predict; returns the predictions, the
    (epsilon, delta) of each part as stated by the fitted guarantee(s), and the hyper-parameters."""
    K = len(spec.classes)
    info = {"n": len(ytr), "d": Xtr.shape[1], "K": K, "dataset": spec.name, "delta": delta}
    if spec.task == "binary" or mech.multiclass:
        p = mech.params(eps, info)
        est = mech.build(p, eps, delta if mech.privacy == "approx" else 0.0, info, rng)
        est.fit(Xtr, ytr)
        return est.predict(Xte), [_spent(est, mech)], {**p, **getattr(est, "chosen_params_", {})}
    classes = np.asarray(spec.classes)
    e_k, d_k = split_budget(float(eps), delta if mech.privacy == "approx" else 0.0, K)
    p = mech.params(e_k, {**info, "delta": d_k})
    scores, parts = np.empty((len(Xte), K)), []
    for j, c in enumerate(classes):
        est = mech.build(p, e_k, d_k, info, rng).fit(Xtr, np.where(ytr == c, 1, -1))
        scores[:, j] = est.decision_function(Xte)
        parts.append(_spent(est, mech))
    return classes[np.argmax(scores, axis=1)], parts, {**p, "epsilon_per_class": e_k, "delta_per_class": d_k}


def _spent(est: Any, mech: Mechanism) -> tuple[float, float]:
    """The (epsilon, delta) a fitted estimator states, including its certified-solver factor when it has one."""
    if mech.privacy == "none":
        return 0.0, 0.0
    g = getattr(est[-1] if hasattr(est, "steps") else est, "guarantee_", None)
    if g is None:  # diffprivlib: pure epsilon-DP at its epsilon
        return float(est.epsilon), 0.0
    eps = g.epsilon  # the level that holds, solver slack included
    return float(eps), float(g.delta)


def _majority_error(y: NDArray) -> float:
    """Test error of always predicting the test set's most frequent label (an evaluation reference, used by no
    mechanism): a private classifier that does not beat it has learned nothing usable."""
    return float(1.0 - np.max(np.unique(y, return_counts=True)[1]) / len(y))


def task_cost(config: dict[str, Any]) -> float:
    """A relative cost estimate (rows x classes x the mechanism's weight) that orders the sweep."""
    mech, spec = MECHANISMS[config["mechanism"]], DATASETS[config["dataset"]]
    k = 1 if spec.task == "binary" or mech.multiclass else len(spec.classes)
    return float(config["n_train"]) * k * mech.weight


def run_task(config: dict[str, Any]) -> dict[str, Any]:
    """One (data set, mechanism, n, epsilon, seed): test error, majority-class error of the same test set, fit seconds,
    peak traced memory of the fit (MB), the training matrix's size (MB), the privacy spent as accounted, the
    hyper-parameters used and a digest of the predictions (for identity checks across executors).

    A privacy-leak warning of any mechanism (a bound or label set taken from the data) fails the task.  A mechanism
    whose certified solver cannot certify its minimiser refuses to release: the result records the refusal (``refused``,
    error NaN) instead of failing the sweep.  A missing data file raises :class:`dpkernels.datasets.DatasetUnavailable` at once, naming the host (no download is tried here:
    a worker without the data fails fast instead of waiting)."""
    from dpkernels.datasets import DatasetUnavailable

    validate_config(config)
    mech, spec = MECHANISMS[config["mechanism"]], DATASETS[config["dataset"]]
    try:
        Xtr, ytr, Xte, yte = load_task_data(spec.name, config["n_train"], config["n_test"], config["seed"])
    except DatasetUnavailable as exc:
        raise DatasetUnavailable(f"on host {socket.gethostname()} (pid {os.getpid()}): {exc}") from None
    rng = np.random.default_rng([config["seed"], int(hashlib.sha1(mech.name.encode()).hexdigest()[:8], 16),
                                 int(round((config["epsilon"] or 0.0) * 1e6)), config["n_train"]])
    with warnings.catch_warnings():
        _privacy_leaks_fail(mech)
        warnings.simplefilter("ignore", DeprecationWarning)  # scipy's L-BFGS-B options, called by diffprivlib
        tracemalloc.start()
        t0 = time.perf_counter()
        try:
            pred, parts, params = _fit_predict(mech, config["epsilon"], config["delta"], Xtr, ytr, Xte, spec, rng)
        except RuntimeError as exc:  # a certified solver that cannot certify refuses to release: an outcome, not a bug
            if "refusing to release" not in str(exc):
                raise
            return {"error": math.nan, "base_error": _majority_error(yte), "fit_seconds": math.nan, "peak_mb": math.nan,
                    "train_mb": Xtr.nbytes / 2**20, "epsilon_spent": 0.0, "delta_spent": 0.0, "n_parts": 0,
                    "d": int(Xtr.shape[1]), "params": "{}", "pred_digest": "", "refused": str(exc)[:300]}
        finally:
            seconds = time.perf_counter() - t0
            peak = tracemalloc.get_traced_memory()[1]
            tracemalloc.stop()
    eps_spent = accounted_epsilon(parts, config["delta"]) if mech.privacy == "approx" else float(sum(e for e, _ in parts))
    return {"error": float(np.mean(pred != yte)), "base_error": _majority_error(yte), "fit_seconds": float(seconds),
            "peak_mb": peak / 2**20, "train_mb": Xtr.nbytes / 2**20, "epsilon_spent": float(eps_spent),
            "delta_spent": float(config["delta"] if mech.privacy == "approx" else 0.0), "n_parts": len(parts),
            "d": int(Xtr.shape[1]), "params": json.dumps(params, sort_keys=True, default=float),
            "pred_digest": hashlib.sha1(np.ascontiguousarray(pred).astype(np.int64).tobytes()).hexdigest()[:16],
            "refused": ""}


def seeds_for(n: int, seeds: int | dict[int, int]) -> int:
    """The number of seeds at training size n: ``seeds``, or the value of the largest key <= n of {size: seeds}."""
    if isinstance(seeds, dict):
        keys = [int(k) for k in seeds if int(k) <= n]
        if not keys:
            raise ValueError(f"seeds {seeds} has no entry for n = {n}")
        return int(seeds[max(keys)] if max(keys) in seeds else seeds[str(max(keys))])
    return int(seeds)


def make_configs(datasets: Sequence[str], mechanisms: Sequence[str], epsilons: Sequence[float],
                 seeds: int | dict[int, int], sizes: dict[str, Sequence[int | str]],
                 delta: float = DELTA) -> list[dict[str, Any]]:
    """Every (data set, training size, mechanism, epsilon, seed) a mechanism can run (its task kind, up to its
    ``max_n``); the non-private references once per (size, seed).  ``seeds``: see :func:`seeds_for`."""
    out = []
    for ds in datasets:
        spec = DATASETS[ds]
        for n in training_sizes(ds, sizes[ds]):
            for m in mechanisms:
                mech = MECHANISMS[m]
                if spec.task not in mech.tasks or (mech.max_n is not None and n > mech.max_n):
                    continue
                for eps in ([None] if mech.privacy == "none" else list(epsilons)):
                    for s in range(seeds_for(n, seeds)):
                        c = {"dataset": ds, "mechanism": m, "n_train": int(n), "n_test": spec.n_test,
                             "epsilon": None if eps is None else float(eps), "delta": float(delta), "seed": s}
                        validate_config(c)
                        out.append(c)
    return out


def _privacy_leaks_fail(mech: Mechanism) -> None:
    """Inside ``warnings.catch_warnings``: a privacy-leak warning (a bound or label set taken from the data; ours, and
    diffprivlib's for its own mechanism) fails the fit instead of passing by.  diffprivlib is imported only for its
    mechanism, so that a sweep without it runs without diffprivlib."""
    from dpkernels._validation import PrivacyLeakWarning

    warnings.simplefilter("error", PrivacyLeakWarning)
    if mech.paper == "diffprivlib":
        from diffprivlib.utils import PrivacyLeakWarning as DPLPrivacyLeakWarning

        warnings.simplefilter("error", DPLPrivacyLeakWarning)


def preflight_fit(name: str) -> None:
    """Fit mechanism ``name`` once, through the sweep's own path (:func:`_fit_predict`, privacy-leak warnings as
    errors), on a tiny public problem: 200 seeded Gaussian rows of 6 features mapped into the unit ball with the
    constant feature, labels from the first data set of its task kind.  A certified solver's refusal to release is an
    outcome, as in :func:`run_task`; anything else raises (run by :func:`dpkernels.sweep.preflight` before a sweep)."""
    mech = MECHANISMS[name]
    spec = next(s for s in DATASETS.values() if s.task in mech.tasks)
    rng = np.random.default_rng(0)
    X = _with_constant(_unit_ball(rng.normal(size=(240, 6)) / 3.0))
    y = np.asarray(spec.classes)[np.arange(240) % len(spec.classes)]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # a tiny problem: no utility to speak of
        _privacy_leaks_fail(mech)
        try:
            _fit_predict(mech, None if mech.privacy == "none" else 1.0, DELTA, X[:200], y[:200], X[200:], spec, rng)
        except RuntimeError as exc:
            if "refusing to release" not in str(exc):
                raise


def run_frontier(configs: Sequence[dict[str, Any]], store: Any = None, n_jobs: int = 1, scheduler: str | None = None,
                 progress: bool = True) -> pd.DataFrame:
    """The sweep through :func:`dpkernels.sweep.run_sweep` (default store ``$DPKERNELS_CACHE/sweeps/frontier``; a
    fresh temporary folder when ``DPKERNELS_NO_CACHE`` is set), most expensive tasks first, with each mechanism's
    label, paper, privacy kind and family."""
    import tempfile

    from dpkernels.sweep import ResultStore, run_sweep

    from dpkernels.datasets import DatasetUnavailable

    if store is None:
        store = ResultStore(tempfile.mkdtemp(prefix="frontier-")) if os.environ.get("DPKERNELS_NO_CACHE") else \
            ResultStore.default("frontier")
    for ds in sorted({c["dataset"] for c in configs}):  # build the feature caches once, here, not in every worker
        try:
            _population(ds)
        except DatasetUnavailable:
            pass  # the workers may have the data; a worker without it fails its task
    checks = {f"mechanism {m!r}": functools.partial(preflight_fit, m) for m in sorted({c["mechanism"] for c in configs})}
    df = run_sweep(run_task, list(configs), store, n_jobs=n_jobs, scheduler=scheduler, progress=progress,
                   desc="frontier", cost=task_cost, preflight_checks=checks)
    for col in ("label", "paper", "privacy", "family"):
        df[col] = df["mechanism"].map(lambda m, c=col: getattr(MECHANISMS[m], c))
    df["task"] = df["dataset"].map(lambda d: DATASETS[d].task)
    return df
