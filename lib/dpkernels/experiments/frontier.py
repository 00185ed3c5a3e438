"""Which mechanism, and is private learning worth it at all?  The cross-paper frontier from a thousand rows to the full
data, at equal end-to-end privacy cost, under one hyper-parameter protocol, with its cost curves (issues 11, 22, 29).

One sweep (data set x training size x mechanism x epsilon x rule scale x seed) over every classifier of the workbook
and, beside them, the methods later work showed beating the five papers' (noisy gradient descent, DP-SGD, approximate
minima perturbation, output-perturbed SGD: :mod:`dpkernels.mechanisms.gradient`), run through :func:`dpkernels.sweep.run_sweep` (a content-addressed store: a rerun computes only what is missing;
joblib processes locally, a Dask cluster for the full-size profile).  :func:`run_task` fits one mechanism on one
seeded training set and returns its test error, the majority-class error of the same test set, the fit time (wall
and CPU seconds, its start and its wait for a core: :class:`Fitted`), the fit's peak traced memory (seed 0's fits
at epsilon = 1, and at every epsilon from 100,000 rows: :func:`traced`), the size of the training matrix and the
(epsilon, delta) the fitted object states.

**Data.**  Each data set's population is its *distinct* rows after the public feature map (:func:`distinct_rows`;
74.5% of KDDCup99's 10 percent file repeats another row exactly, and Adult without fnlwgt has 7,000 repeats), so no
test row repeats a training row.  Each seed draws a fixed test set (:data:`DATASETS`, ``n_test``); the training
sets of one seed are nested prefixes of the remaining rows, from about 1,000 rows to all of them ("full": Adult
33,000, KDDCup99 135,000, shuttle 50,000, satimage 5,000).

**Equal total privacy cost, end to end, as stated.**  Every private run of a cell receives the same total
(epsilon, delta) for everything that touches the training rows (delta = :func:`cell_delta` (n): 1e-6, at most
1 / (10 n)), and records what its fitted object *states*
(``epsilon_spent``, ``delta_spent``: :func:`stated`, composed over every fitted part by :func:`stated_budget`):

* *Features*: a per-record map with public constants (:mod:`dpkernels.feature_maps`); replace-one neighbours stay
  replace-one neighbours and nothing is computed from the data.  Rows are in the unit ball, with a public constant
  feature (a penalised intercept).
* *Label sets* are public: Adult income above 50K or not; KDD denial-of-service or not; satimage's six and shuttle's
  seven documented classes.
* *Hyper-parameters*, one protocol for every mechanism (:data:`PROTOCOLS`): each mechanism runs under its **public
  rule** (:mod:`dpkernels.defaults`), a function of (n, d, epsilon) whose constants (:data:`CONSTANTS`) were not set
  on the frontier's data sets, and beside it under **private selection** (``<name>-selected``): the same selector
  for all, :class:`dpkernels.selection.PrivateSelection` (Chaudhuri et al.'s Algorithm 4 generalised) over the rule
  with its constant times :data:`SCALES`, inside the same budget.  An ablation reruns each rule with its constant
  times 0.1 and 10 (``scale``).  Park's Table 7.1, tuned by the thesis on satimage and shuttle, stays as a labelled
  row (protocol ``"paper"``).  The non-private references are tuned on a validation split of their training rows
  (they are references, not releases).
* *Composition*: one-against-all on a K-class task fits K binary mechanisms on the same rows (:class:`OneVsAll`):
  pure-epsilon mechanisms get epsilon / K each (basic composition, exact for pure DP); (epsilon, delta) mechanisms
  the largest (epsilon_k, delta / (2K)) whose K-fold composition, accounted by dp-accounting's privacy-loss
  distributions, stays within (epsilon, delta) (:func:`split_budget`).  Mechanisms whose guarantee carries a
  certified-solver factor epsilon (1 + 2 solver_tol) are calibrated at epsilon / (1 + 2 solver_tol).
* *Pure epsilon-DP* rows state delta = 0, a stronger guarantee than the (epsilon, delta) of the others at the same
  epsilon; objective perturbation's floating-point-safe release states a small delta of its own
  (:mod:`dpkernels.argmin_release`), so its rows are (epsilon, delta) rows.

**Sizes a mechanism cannot reach** (:attr:`Mechanism.max_n`): only scikit-learn's kernel SVC (the non-private RBF
reference: libsvm's kernel evaluations grow as n^2) stops before the full data; it runs up to its stated limit.

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
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np
import pandas as pd
from numpy.typing import NDArray
from sklearn.base import BaseEstimator, ClassifierMixin

from dpkernels import defaults
from dpkernels.feature_maps import FEATURE_MAPS, INTERCEPT_FEATURE, KDD_HASH_BUCKETS, SHUTTLE_CAP, _unit_ball, _with_constant
from dpkernels._validation import delta_ceiling
from dpkernels.accounting import compose

__all__ = [
    "Fitted",
    "DELTA",
    "cell_delta",
    "SOLVER_TOL",
    "TRACED_SEEDS",
    "TRACED_EPSILON",
    "COST_TARGET_ROWS",
    "BATCH_BELOW_COST",
    "BATCH_SIZE",
    "traced",
    "DatasetSpec",
    "DATASETS",
    "Mechanism",
    "MECHANISMS",
    "KDD_HASH_BUCKETS",
    "SHUTTLE_CAP",
    "public_features",
    "training_sizes",
    "load_task_data",
    "distinct_rows",
    "available",
    "split_budget",
    "stated",
    "stated_budget",
    "OneVsAll",
    "task_estimator",
    "selected",
    "SCALES",
    "PROTOCOLS",
    "CONSTANTS",
    "make_configs",
    "profile_configs",
    "seeds_for",
    "validate_config",
    "task_cost",
    "run_task",
    "run_frontier",
]

Array = NDArray[np.float64]

#: The total delta of every (epsilon, delta) mechanism of a cell of up to 100,000 training rows; a larger cell's is
#: 1 / (10 n) (:func:`cell_delta`), so that delta is at most a tenth of 1 / n wherever the frontier runs.
DELTA = 1e-6


def cell_delta(n: int) -> float:
    """The total delta of a cell of ``n`` training rows: min(:data:`DELTA`, 1 / (10 n)) (7.4e-7 at KDDCup99's
    135,000 rows; 1e-6 everywhere else on the grid).  Far below 1 / n: a delta near 1 / n would allow releasing a
    whole row with that probability."""
    return min(DELTA, delta_ceiling(n))
#: Certified-solver tolerance (x the sensitivity) of every mechanism that solves an ERM.
SOLVER_TOL = 1e-3
#: Random features of every random-feature mechanism (a documented default: Chaudhuri et al. run no kernel experiment
#: and Rubinstein et al.'s and Bassily et al.'s theorems ask for far more than any sweep can afford).
N_FEATURES = 100
#: Public landmarks of Hall et al.'s kernel machine (Nystrom), drawn on the sphere of radius 1/2 without the data.
N_LANDMARKS = 50
#: Park's data-independent starts of the dynamics.
PARK_STARTS = 300
#: The seeds whose fit may run under ``tracemalloc`` (its peak memory, :func:`run_task`, :func:`traced`).  Tracing
#: every allocation slows allocation-heavy Python code by 1.1x (Park, certified solves) to 5x (DP-SGD's steps, a
#: selection's small fits) on this workbook's mechanisms, so one seed measures memory and the others time the fit.
TRACED_SEEDS = (0,)
#: The epsilon at which a traced seed measures memory below :data:`COST_TARGET_ROWS` rows (the memory curves: one
#: point per data set, mechanism and n, at one epsilon).
TRACED_EPSILON = 1.0
#: The training size from which the cost targets are judged (the notebook's ``F-slope`` and ``F-memory``): there a
#: traced seed measures memory at every epsilon, since ``F-memory`` reads the largest peak over a cell's runs.
COST_TARGET_ROWS = 100_000


@dataclass(frozen=True)
class DatasetSpec:
    """A data set of the frontier: its task, public label set, row counts and test-set size.

    The population is the file's *distinct* rows after the public feature map (:func:`population_rows`): a row whose
    features repeat an earlier row's is dropped (the first occurrence in file order is kept, with its label), so that
    a test row never repeats a training row (issue 29)."""

    name: str
    task: str  #: "binary" or "multiclass"
    classes: tuple[Any, ...]  #: the public label set (binary: -1, +1)
    n_rows: int  #: rows of the published file (Adult: its complete rows)
    n_distinct: int  #: distinct rows after the public feature map: the population
    n_test: int  #: rows of the seeded test set
    files: tuple[str, ...]  #: the raw files (:data:`dpkernels.datasets.FILES` keys)
    description: str

    @property
    def n_full(self) -> int:
        """The largest training size: every distinct row outside the test set."""
        return self.n_distinct - self.n_test


DATASETS: dict[str, DatasetSpec] = {
    d.name: d for d in (
        DatasetSpec("adult", "binary", (-1, 1), 45_222, 38_229, 5_229, ("adult.data", "adult.test", "adult.names"),
                    "income above 50K (+1) or not; complete rows of adult.data + adult.test, distinct after the map "
                    "(fnlwgt, which the map drops, made most rows unique)"),
        DatasetSpec("kddcup99", "binary", (-1, 1), 494_021, 145_242, 10_242, ("kddcup99",),
                    "denial-of-service attack (-1) or not (+1); the 10 percent file (not committed), distinct rows "
                    "(74.5% of its rows repeat another exactly; NSL-KDD, Tavallaee et al. 2009, removes them too)"),
        DatasetSpec("shuttle", "multiclass", tuple(range(7)), 58_000, 57_939, 7_939, ("shuttle",),
                    "Statlog shuttle, the 7 original classes (Rad.Flow is 79%), distinct rows"),
        DatasetSpec("satimage", "multiclass", tuple(range(6)), 6_435, 6_435, 1_435, ("satellite",),
                    "Statlog Landsat satellite (LIBSVM satimage), 6 classes (no repeated row)"),
    )
}


# ----------------------------------------------------------------------------------------------
# mechanisms: public hyper-parameter rules, their private selection, and factories
# ----------------------------------------------------------------------------------------------
Info = dict[str, Any]  #: {"n", "d", "K", "dataset", "delta", "scale"}: public quantities a rule may use
Params = dict[str, Any]

#: The multipliers of every public rule's constant (:attr:`Mechanism.constant`): the private selection's grid (each
#: mechanism's candidates are its rule with the constant times these, at the size of one part) and the ablation's
#: settings (the rule at the full size with the constant times these).
SCALES = (0.1, 1.0, 10.0)
#: Hyper-parameter protocols of a frontier row.
PROTOCOLS = {
    "rule": "public rule of (n, d, epsilon) whose constants were not set on the frontier's data sets",
    "selected": "private selection over the rule's grid (constant x 0.1, 1, 10) inside the same budget "
                "(dpkernels.selection.PrivateSelection: Chaudhuri et al.'s Algorithm 4 generalised)",
    "paper": "a paper's setting tuned on the frontier's own data sets (labelled, not a public rule)",
    "reference": "non-private reference tuned on a validation split of its training rows",
}


@dataclass(frozen=True)
class Mechanism:
    """One row of the frontier: a name, its paper, its privacy kind, its hyper-parameter protocol and a factory.

    ``params(epsilon, info)`` returns the hyper-parameters (JSON-able; recorded with each result) from the public
    quantities only, with the rule's constant multiplied by ``info.get("scale", 1.0)``; ``build(params, epsilon,
    delta, info, rng)`` the unfitted binary (or natively multi-class) estimator at the budget of one fit.  Rows of
    protocol ``"selected"`` are generated from their ``base`` (:func:`selected`) and built by :func:`task_estimator`.

    Adding a mechanism is one entry of the list in :func:`_factories` (at import time, so that every sweep worker has
    it): its rule, its factory, the constant its rule scales (``info["scale"]`` times it) and ``select=True`` for a
    private-selection row beside it (generated by :func:`selected`); its privacy kind is what its fits state."""

    name: str
    label: str
    paper: str
    privacy: str  #: what its fits state: "pure" (delta = 0), "approx" ((epsilon, delta)) or "none"
    family: str  #: "linear", "random-features", "landmarks", "reference" or "quadratic" (a kernel matrix over the n rows)
    params: Callable[[float | None, Info], Params]
    build: Callable[[Params, float | None, float, Info, np.random.Generator], Any] | None
    source: str  #: where the hyper-parameters come from
    constant: str = ""  #: the rule's constant that ``info["scale"]`` multiplies ("" : none)
    protocol: str = "rule"  #: a key of :data:`PROTOCOLS`
    select: bool = False  #: a private-selection row over its rule's grid runs beside it
    base: str = ""  #: a selected row's mechanism
    #: calibrated to a delta budget; False: given epsilon only (a floating-point delta of its own, if any, is stated)
    takes_delta: bool = False
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


def _scale(info: Info) -> float:
    return float(info.get("scale", 1.0))


#: RBF kernel exp(-gamma ||x - y||^2) with the public gamma of :func:`dpkernels.defaults.rbf_gamma` (rows in the unit
#: ball), i.e. bandwidth sigma = 1 / sqrt(2 gamma) in the exp(-||x - y||^2 / (2 sigma^2)) parameterisation.
GAMMA = defaults.rbf_gamma(1.0)
SIGMA = 1.0 / math.sqrt(2.0 * GAMMA)
#: The constants of the public rules (none was set on the frontier's data sets), as :attr:`Mechanism.constant` names
#: them.
CONSTANTS = {
    "chaudhuri": f"||f0|| = {defaults.CHAUDHURI_NORM_BOUND:g} (median norm of tuned non-private logistic regression "
                 "on six public data sets outside the frontier)",
    "rubinstein": "c = 1 in C = c sqrt(n) (Rubinstein et al.'s Remark 1)",
    "hall": "c = 1 in lam = 1 / (2 c sqrt(n)) (Rubinstein et al.'s rule; Hall et al. give none)",
    "bassily": f"excess = {defaults.BASSILY_EXCESS:g} of Theorem 3.2's privacy term (ours, from the theorem's shape)",
    "park": "C/n = 0.05 (median of Park's Table 7.1 over its six data sets outside the frontier)",
    "gradient": f"||f0|| = {defaults.CHAUDHURI_NORM_BOUND:g} in the first-principles rules of the gradient methods "
                "(dpkernels.defaults: step from the logistic loss's smoothness, T, batch and regulariser from the "
                f"bounds' optimum at (n, d, epsilon, delta); DP-GD and DP-SGD at most {defaults.GRADIENT_MAX_STEPS} "
                "steps, a compute cap)",
}


def _chaudhuri(algorithm: str, loss: str, d: int | None = None) -> Callable[[float | None, Info], Params]:
    def params(eps: float | None, info: Info) -> Params:
        return {"Lambda": defaults.chaudhuri_lambda(info["n"], info["d"] if d is None else d, float(eps),
                                                    algorithm=algorithm, loss=loss,
                                                    norm_bound=defaults.CHAUDHURI_NORM_BOUND * _scale(info))}
    return params


def _references() -> list[Mechanism]:
    """Non-private references, tuned on a validation split (the last 20% of the training rows, which are in random
    order) by scikit-learn's GridSearchCV with a predefined split, then refitted on all training rows."""
    from sklearn.linear_model import LogisticRegression
    from sklearn.svm import SVC, LinearSVC

    def linear_grid(eps: float | None, info: Info) -> Params:
        return {"C": [defaults.sklearn_C(info["n"], lam) for lam in defaults.NONPRIVATE_LAMBDAS]}

    ref = {"privacy": "none", "protocol": "reference", "multiclass": True}
    return [
        Mechanism("nonprivate-logistic", "non-private LogisticRegression", "reference", family="reference",
                  params=linear_grid,
                  build=lambda p, e, dl, info, r: _ValidationTuned(LogisticRegression(fit_intercept=False, max_iter=1000), p),
                  source="validation split, Lambda in 1e-7..1e-2 (Chaudhuri et al.'s Table 1 range)", weight=2.0, **ref),
        Mechanism("nonprivate-linearsvc", "non-private LinearSVC", "reference", family="reference", params=linear_grid,
                  build=lambda p, e, dl, info, r: _ValidationTuned(LinearSVC(fit_intercept=False, dual="auto", max_iter=2000), p),
                  source="validation split, Lambda in 1e-7..1e-2", weight=2.0, **ref),
        Mechanism("nonprivate-svc", "non-private SVC (RBF)", "reference", family="quadratic",
                  params=lambda e, info: {"C": [1.0, 10.0, 100.0], "gamma": [GAMMA]},
                  build=lambda p, e, dl, info, r: _ValidationTuned(SVC(), p),
                  source="validation split, C in {1, 10, 100}, gamma = 1 (public scale rule)", max_n=5_000,
                  limit="libsvm's O(n^2) kernel evaluations (about 11 s per fit at 10,000 rows)", weight=50.0, **ref),
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
    ``learning_rate``, ``weight_bound``).  Every rule scales its constant by ``info["scale"]``."""
    from dpkernels.mechanisms import (
        DPSGD,
        ApproximateMinimaPerturbation,
        EquilibriumPointClassifier,
        NoisyGradientDescent,
        OutputPerturbedSGD,
        ObjectivePerturbation,
        OutputPerturbation,
        PrivateKernelERM,
        PrivateKernelMachine,
        PrivateKernelMarginClassifier,
        PrivateMarginClassifier,
        PrivateSVM,
        PrivateSVMFinite,
    )

    pm = [-1, 1]
    tol = SOLVER_TOL
    thm = "Chaudhuri et al. (2011) Theorem {} (Lambda = eps_g / ||f0||^2)"

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
                                         classes=list(range(info["K"])), box=p["box"], sigma=math.sqrt(0.5 / p["gamma"]),
                                         learning_rate=p["lr"], n_iter=int(p["n_iter"]), r_max=p["r_max"],
                                         n_starts=PARK_STARTS, domain=(0.0, 1.0), random_state=rng)
        return make_pipeline(to_unit, epc)

    def margin(d_features: Callable[[Info], int]) -> Callable[[float | None, Info], Params]:
        def params(eps: float | None, info: Info) -> Params:
            k = defaults.bassily_k(info["n"], d_features(info), float(eps), info["delta"])
            return {"rho": defaults.bassily_rho(info["n"], float(eps), excess=defaults.BASSILY_EXCESS * _scale(info)),
                    "Lambda": defaults.BASSILY_LAMBDA, "k": k, "max_iter": defaults.bassily_iterations(info["n"])}
        return params

    def gradient_rule(rule: Callable[..., dict[str, Any]], with_d: bool = True) -> Callable[[float | None, Info], Params]:
        # the rules of dpkernels.defaults at the run's (n, d, epsilon, delta), ||f0|| times the rule's scale
        def params(eps: float | None, info: Info) -> Params:
            B = defaults.CHAUDHURI_NORM_BOUND * _scale(info)
            size = (info["n"], info["d"]) if with_d else (info["n"],)
            return dict(rule(*size, float(eps), info["delta"], norm_bound=B))
        return params

    def rubinstein_C(info: Info) -> float:
        return _scale(info) * defaults.rubinstein_C(info["n"])

    ch, rb, gr = CONSTANTS["chaudhuri"], CONSTANTS["rubinstein"], CONSTANTS["gradient"]
    ms = [
        Mechanism("rubinstein-finite", "PrivateSVM-Finite (linear, hinge)", "Rubinstein 2012", "pure", "linear",
                  lambda e, info: {"C": rubinstein_C(info)},
                  lambda p, e, dl, info, r: PrivateSVMFinite(epsilon=_solver_eps(e), alpha=1.0 / p["C"], data_norm=1.0, classes=pm,
                                                             solver_tol=tol, random_state=r),
                  "Rubinstein et al. (2012) Remark 1: C = sqrt(n)", constant=rb, select=True, weight=2.0),
        Mechanism("rubinstein-rff", "PrivateSVM (RFF, hinge)", "Rubinstein 2012", "pure", "random-features",
                  lambda e, info: {"C": rubinstein_C(info), "sigma": SIGMA, "n_components": N_FEATURES},
                  lambda p, e, dl, info, r: PrivateSVM(epsilon=_solver_eps(e), alpha=1.0 / p["C"], sigma=p["sigma"],
                                                       n_components=p["n_components"], classes=pm, solver_tol=tol,
                                                       random_state=r),
                  "Rubinstein et al. (2012) Remark 1: C = sqrt(n); gamma = 1 (public scale rule)", constant=rb,
                  select=True, weight=8.0),
        Mechanism("chaudhuri-output-logistic", "output perturbation (logistic)", "Chaudhuri 2011", "pure", "linear",
                  _chaudhuri("output", "logistic"),
                  lambda p, e, dl, info, r: OutputPerturbation(epsilon=_solver_eps(e), alpha=p["Lambda"], loss="logistic",
                                                               data_norm=1.0, classes=pm, solver_tol=tol, random_state=r),
                  thm.format(15), constant=ch, select=True),
        Mechanism("chaudhuri-output-huber", "output perturbation (Huber SVM)", "Chaudhuri 2011", "pure", "linear",
                  _chaudhuri("output", "huber"),
                  lambda p, e, dl, info, r: OutputPerturbation(epsilon=_solver_eps(e), alpha=p["Lambda"], loss="huber",
                                                               h=0.5, data_norm=1.0, classes=pm, solver_tol=tol,
                                                               random_state=r),
                  thm.format(15) + "; h = 0.5 (Section 7)", constant=ch, select=True),
        # objective perturbation's floating-point-safe release states a small delta of its own
        # (dpkernels.argmin_release): an (epsilon, delta) row, given epsilon only
        Mechanism("chaudhuri-objective-logistic", "objective perturbation (logistic)", "Chaudhuri 2011", "approx",
                  "linear", _chaudhuri("objective", "logistic"),
                  lambda p, e, dl, info, r: ObjectivePerturbation(epsilon=e, alpha=p["Lambda"], loss="logistic",
                                                                  data_norm=1.0, classes=pm, solver_tol=tol,
                                                                  random_state=r),
                  thm.format(18), constant=ch, select=True),
        Mechanism("chaudhuri-objective-huber", "objective perturbation (Huber SVM)", "Chaudhuri 2011", "approx", "linear",
                  _chaudhuri("objective", "huber"),
                  lambda p, e, dl, info, r: ObjectivePerturbation(epsilon=e, alpha=p["Lambda"], loss="huber", h=0.5,
                                                                  data_norm=1.0, classes=pm, solver_tol=tol,
                                                                  random_state=r),
                  thm.format(18) + "; h = 0.5 (Section 7)", constant=ch, select=True),
        Mechanism("chaudhuri-kernel", "PrivateKernelERM (RFF + objective, logistic)", "Chaudhuri 2011", "approx",
                  "random-features",
                  lambda e, info: {**_chaudhuri("objective", "logistic", N_FEATURES)(e, info), "gamma": GAMMA,
                                   "n_components": N_FEATURES},
                  lambda p, e, dl, info, r: PrivateKernelERM(epsilon=e, alpha=p["Lambda"], sigma=math.sqrt(0.5 / p["gamma"]),
                                                             n_components=p["n_components"], classes=pm, solver_tol=tol,
                                                             random_state=r),
                  thm.format(18) + " with d = D random features (Algorithm 3)", constant=ch, select=True, weight=2.0),
        Mechanism("hall-nystrom", "PrivateKernelMachine (Nystrom, logistic)", "Hall 2013", "approx", "landmarks",
                  lambda e, info: {"lam": defaults.hall_lam(info["n"]) / _scale(info), "sigma": SIGMA,
                                   "landmarks": N_LANDMARKS},
                  hall, "lam = 1 / (2 sqrt(n)) (Rubinstein et al.'s C = sqrt(n); Hall et al. give no rule)",
                  constant=CONSTANTS["hall"], select=True, takes_delta=True, weight=2.0),
        Mechanism("bassily-alg2", "Algorithm 2 (JL + noisy GD)", "Bassily 2022", "approx", "random-features",
                  margin(lambda info: info["d"]),
                  lambda p, e, dl, info, r: PrivateMarginClassifier(epsilon=e, delta=dl, rho=p["rho"], weight_bound=p["Lambda"],
                                                                    data_norm=1.0, n_components=p["k"],
                                                                    max_iter=p["max_iter"], classes=pm, random_state=r),
                  "rho from Theorem 3.2's privacy term (ours); Lambda = 1 (footnote 1); the paper's k, at most d; "
                  "ln(m) ln(1/beta) gradient passes (Lemma 3.1's count)",
                  constant=CONSTANTS["bassily"], select=True, takes_delta=True, weight=4.0),
        Mechanism("bassily-alg3", "Algorithm 3 (RFF + Algorithm 2)", "Bassily 2022", "approx", "random-features",
                  lambda e, info: {**margin(lambda i: 2 * N_FEATURES)(e, info), "sigma": SIGMA, "n_frequencies": N_FEATURES},
                  lambda p, e, dl, info, r: PrivateKernelMarginClassifier(epsilon=e, delta=dl, rho=p["rho"],
                                                                          weight_bound=p["Lambda"], sigma=p["sigma"],
                                                                          n_frequencies=p["n_frequencies"],
                                                                          n_components=p["k"], max_iter=p["max_iter"],
                                                                          classes=pm, random_state=r),
                  "as Algorithm 2; D = 100 frequencies (2D = 200 features)", constant=CONSTANTS["bassily"], select=True,
                  takes_delta=True, weight=6.0),
        Mechanism("park-epc", "EquilibriumPointClassifier (public rule)", "Park 2022", "pure", "random-features",
                  lambda e, info: defaults.park_public_settings(info["d"] - 1, info["n"], scale=_scale(info)), park,
                  "Park (2022) Table 7.1 outside the frontier (medians) and gamma = 4 / d",
                  constant=CONSTANTS["park"], select=True, multiclass=True, weight=3.0, tasks=("multiclass",)),
        Mechanism("park-table-7.1", "EquilibriumPointClassifier (Table 7.1, tuned on these data)", "Park 2022", "pure",
                  "random-features", lambda e, info: defaults.park_settings(info["dataset"]), park,
                  "Park (2022) Table 7.1: the paper's tuned setting, chosen by the thesis on satimage and shuttle",
                  protocol="paper", multiclass=True, weight=3.0, tasks=("multiclass",)),
        # the methods later work showed beating output and objective perturbation (issue 29): (epsilon, delta) rows on
        # the original features, logistic loss, rules from first principles (dpkernels.defaults)
        Mechanism("noisy-gd", "noisy gradient descent (DP-GD)", "Bassily 2014", "approx", "linear",
                  gradient_rule(defaults.noisy_gd_settings),
                  lambda p, e, dl, info, r: NoisyGradientDescent(epsilon=e, delta=dl, loss="logistic", classes=pm,
                                                                 random_state=r, **p),
                  "Bassily, Smith and Thakurta (2014) / Yu et al. (2020) Algorithm 1; T and step from Bubeck (2015) "
                  "Theorem 6.3 at the Gaussian-DP noise, C = R = 1, alpha = 0 (dpkernels.defaults.noisy_gd_settings)",
                  constant=gr, select=True, takes_delta=True, weight=4.0),
        Mechanism("dp-sgd", "DP-SGD (Poisson batches)", "Abadi 2016", "approx", "linear",
                  gradient_rule(defaults.dp_sgd_settings),
                  lambda p, e, dl, info, r: DPSGD(epsilon=e, delta=dl, loss="logistic", classes=pm, random_state=r, **p),
                  "Abadi et al. (2016) Algorithm 1, accounted by dp-accounting (PLD, replace-one); DP-GD's T and step, "
                  "the smallest sampling rate with noise multiplier >= 4 (dpkernels.defaults.dp_sgd_settings)",
                  constant=gr, select=True, takes_delta=True, weight=2.0),
        Mechanism("amp", "approximate minima perturbation (AMP)", "Iyengar 2019", "approx", "linear",
                  gradient_rule(defaults.amp_settings),
                  lambda p, e, dl, info, r: ApproximateMinimaPerturbation(epsilon=e, delta=dl, loss="logistic",
                                                                          data_norm=1.0, classes=pm, random_state=r, **p),
                  "Iyengar et al. (2019) Algorithm 1; lambda from objective perturbation's bound at Gaussian noise, "
                  "the budget split it needs (dpkernels.defaults.amp_settings)",
                  constant=gr, select=True, takes_delta=True, weight=1.5),
        Mechanism("output-sgd", "output-perturbed SGD", "Wu 2017", "approx", "linear",
                  gradient_rule(defaults.output_sgd_settings, with_d=False),
                  lambda p, e, dl, info, r: OutputPerturbedSGD(epsilon=e, delta=dl, loss="logistic", data_norm=1.0,
                                                               classes=pm, random_state=r, **p),
                  "Wu et al. (2017) Algorithm 2 (convex, constant step); one pass, batch and step from the bound's "
                  "optimum (dpkernels.defaults.output_sgd_settings)",
                  constant=gr, select=True, takes_delta=True, weight=1.0),
        Mechanism("diffprivlib-lr", "diffprivlib LogisticRegression", "diffprivlib", "pure", "linear",
                  _chaudhuri("objective", "logistic"), dpl,
                  "as objective perturbation (the same mechanism): C = 1 / (n Lambda); binary tasks only: it reads the "
                  "label set from the data and refuses a training set without one of the classes (shuttle's rarest "
                  "class has 10 rows in 58,000); an implementation cross-check, so no selection row",
                  constant=ch, tasks=("binary",)),
        *_references(),
    ]
    return _with_selection(ms)


def selected(m: Mechanism) -> Mechanism:
    """The private-selection row of a mechanism: :class:`dpkernels.selection.PrivateSelection` over its rule with the
    constant times :data:`SCALES`, each candidate at the size of one part, inside the same (epsilon, delta)."""
    if not (m.select and m.constant):
        raise ValueError(f"{m.name} has no rule constant to select over")
    return replace(m, name=f"{m.name}-selected", label=f"{m.label}, selected privately", protocol="selected",
                   base=m.name, select=False, build=None,
                   params=lambda e, info: {"scales": list(SCALES)},
                   source=f"private selection over {m.constant} times {', '.join(f'{s:g}' for s in SCALES)} "
                          "(Chaudhuri et al.'s Algorithm 4 generalised, dpkernels.selection.PrivateSelection)",
                   weight=1.5 * m.weight)


def _with_selection(ms: Sequence[Mechanism]) -> dict[str, Mechanism]:
    out: dict[str, Mechanism] = {}
    for m in ms:
        out[m.name] = m
        if m.select:
            s = selected(m)
            out[s.name] = s
    return out


MECHANISMS: dict[str, Mechanism] = _factories()



# ----------------------------------------------------------------------------------------------
# data: public, per-record feature maps
# ----------------------------------------------------------------------------------------------
def public_features(name: str, frame: pd.DataFrame) -> Array:
    """The per-record, data-independent feature map of a raw table (:data:`dpkernels.feature_maps.FEATURE_MAPS`);
    rows in the unit ball, with the public constant feature."""
    if name not in FEATURE_MAPS:
        raise ValueError(f"unknown data set {name!r}; known: {sorted(DATASETS)}")
    return FEATURE_MAPS[name]().fit_transform(frame)


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


def distinct_rows(X: Array) -> NDArray[np.intp]:
    """Indices (increasing) of the first occurrence in file order of every distinct row of ``X`` (exact equality)."""
    first = np.unique(np.ascontiguousarray(X), axis=0, return_index=True)[1]
    return np.sort(first)


@functools.lru_cache(maxsize=4)
def _population(name: str) -> tuple[Path, NDArray]:
    """The population of a data set: every row of its file through the public feature map (per record, so mapping all
    rows equals mapping the drawn ones), without the rows whose features repeat an earlier row's
    (:func:`distinct_rows`), saved once under ``$DPKERNELS_CACHE/frontier-features`` (keyed by the library's source):
    the path of the feature matrix (.npy) and the labels."""
    base = _feature_cache(name)
    xf, yf = base.with_suffix(".X.npy"), base.with_suffix(".y.npy")
    if not (xf.exists() and yf.exists()):
        frame, y = _raw(name)
        X = public_features(name, frame)
        spec = DATASETS[name]
        if len(y) != spec.n_rows:
            raise ValueError(f"{name}: {len(y)} rows, the public row count is {spec.n_rows}")
        keep = distinct_rows(X)
        if len(keep) != spec.n_distinct:
            raise ValueError(f"{name}: {len(keep)} distinct rows after the map, expected {spec.n_distinct}")
        X, y = X[keep], y[keep]
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


@functools.lru_cache(maxsize=128)
def _seeded_split(name: str, n_test: int, seed: int) -> tuple[NDArray[np.intp], Array]:
    """Seed ``seed``'s permutation of the population and its test rows (read-only), kept per process: every task of a
    seed reads the same test set (Adult's 5,229 rows, 4.4 MB; KDDCup99's 10,242, 7.1 MB), about 5 ms through the
    memory map, the order of a small fit.  The price is memory: a worker that meets every (data set, seed) of the
    scale profile (80 of them) keeps about 270 MB."""
    path, y = _population(name)
    perm = np.random.default_rng([seed, 11]).permutation(len(y))
    Xte = _rows(path, np.sort(perm[:n_test]))
    perm.flags.writeable = False
    Xte.flags.writeable = False
    return perm, Xte


def load_task_data(name: str, n_train: int, n_test: int, seed: int) -> tuple[Array, NDArray, Array, NDArray]:
    """Seed ``seed``'s test set (the first ``n_test`` rows of a seeded permutation of the population, whose rows are
    distinct: no test row repeats a training row) and its training set of ``n_train`` rows (the next rows: the
    training sets of one seed are nested).  Every array returned is a fresh copy."""
    path, y = _population(name)
    if n_train + n_test > len(y):
        raise ValueError(f"{name} has {len(y)} rows, fewer than {n_train} + {n_test}")
    perm, Xte = _seeded_split(name, int(n_test), int(seed))
    te, tr = np.sort(perm[:n_test]), perm[n_test:n_test + n_train]
    return _rows(path, tr), y[tr], Xte.copy(), y[te]


# ----------------------------------------------------------------------------------------------
# accounting: what the fitted objects state
# ----------------------------------------------------------------------------------------------
def stated(estimator: Any) -> tuple[float, float]:
    """The (epsilon, delta) a fitted estimator states: its ``guarantee_`` (a Pipeline: its last step's; read whether or
    not it says ``private``, which a seeded fit may not), or for a diffprivlib model what its fit booked
    (:func:`diffprivlib_spent`)."""
    from dpkernels.selection import stated_guarantee

    inner = estimator[-1] if hasattr(estimator, "steps") else estimator
    if getattr(inner, "guarantee_", None) is None and type(inner).__module__.startswith("diffprivlib"):
        return diffprivlib_spent(inner)
    g = stated_guarantee(estimator)
    return float(g.epsilon), float(g.delta)


def diffprivlib_spent(model: Any) -> tuple[float, float]:
    """The (epsilon, delta) a fitted diffprivlib model booked on its ``accountant`` (diffprivlib's
    ``BudgetAccountant.total()``): diffprivlib's own statement of what its fits spent, read after the fit, not the
    constructor's ``epsilon``.  The frontier gives every fit a fresh accountant, so the total is that fit's spend; an
    accountant shared by several fits states their composition.

    Raises
    ------
    ValueError
        If the accountant booked nothing (the model was not fitted).
    """
    accountant = model.accountant
    if not accountant.spent_budget:
        raise ValueError(f"{type(model).__name__}'s accountant booked nothing: it was not fitted")
    epsilon, delta = accountant.total()  # diffprivlib's Budget: a tuple (epsilon, delta)
    return float(epsilon), float(delta)


def stated_budget(parts: Sequence[tuple[float, float]], delta: float) -> tuple[float, float]:
    """(epsilon, delta) of the sequential composition of parts stating (epsilon_i, delta_i) on the same rows.

    One part: itself.  Pure parts: (sum of epsilons, 0), exact.  Otherwise basic composition (sum, sum) or, when the
    parts' deltas sum to at most ``delta``, dp-accounting's privacy-loss-distribution composition at ``delta``
    (:func:`dpkernels.accounting.compose`, each part's delta_i charged as mass at infinite loss) if its epsilon is
    smaller."""
    parts = [(float(e), float(d)) for e, d in parts]
    if len(parts) == 1:
        return parts[0]
    eps_basic = math.fsum(e for e, _ in parts)
    delta_basic = math.fsum(d for _, d in parts)
    if delta_basic == 0.0 or delta_basic > delta or not math.isfinite(eps_basic):
        return eps_basic, delta_basic
    pld = compose([("dp", e, d) for e, d in parts], delta)
    return (pld, float(delta)) if pld < eps_basic else (eps_basic, delta_basic)


@functools.lru_cache(maxsize=256)
def split_budget(epsilon: float, delta: float, k: int) -> tuple[float, float]:
    """Per-part (epsilon_k, delta_k) for k sequential parts within a total (epsilon, delta).

    delta = 0: epsilon / k (basic composition, exact for pure DP), rounded down so that the k parts' floating-point sum
    does not exceed epsilon.  delta > 0: delta_k = delta / (2k) and the largest epsilon_k (bisection) whose
    PLD-accounted composition (:func:`stated_budget`) is within (epsilon, delta)."""
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
        if stated_budget([(mid, dk)] * k, delta)[0] <= epsilon:
            lo = mid
        else:
            hi = mid
    return lo, dk


class OneVsAll(ClassifierMixin, BaseEstimator):
    """One-against-all over a public label set: one binary estimator per class ("class k" against the rest), each
    built with its share of the budget, fitted on the same rows; ``guarantee_`` composes what the K fitted parts
    state (:func:`stated_budget` at ``delta``), read from each part.

    Parameters
    ----------
    estimators : list of estimators
        One unfitted binary estimator per class (labels -1 / +1), in the order of ``classes``.
    classes : sequence
        The public label set.
    delta : float
        The total delta the parts' composition is accounted at.
    random_state : numpy.random.Generator or None
        When given, every part draws its noise from it (in turn).
    """

    def __init__(self, estimators: Sequence[Any], classes: Sequence[Any], delta: float,
                 random_state: np.random.Generator | None = None) -> None:
        self.estimators = estimators
        self.classes = classes
        self.delta = delta
        self.random_state = random_state

    def fit(self, X: Array, y: NDArray) -> "OneVsAll":
        from sklearn.base import clone

        from dpkernels.mechanisms.base import STATUSES, Guarantee
        from dpkernels.selection import _set_random_state, stated_guarantee

        if len(self.estimators) != len(self.classes):
            raise ValueError("one estimator per class")
        self.estimators_ = []
        for est, c in zip(self.estimators, self.classes):
            part = clone(est)
            if self.random_state is not None:
                _set_random_state(part, self.random_state)
            part.fit(X, np.where(np.asarray(y) == c, 1, -1))
            self.estimators_.append(part if self.random_state is None else _set_random_state(part, None))
        guarantees = [stated_guarantee(e) for e in self.estimators_]
        eps, delta = stated_budget([stated(e) for e in self.estimators_], self.delta)
        self.classes_ = np.asarray(self.classes)
        self.guarantee_ = Guarantee(
            epsilon=eps, delta=delta, neighbouring=guarantees[0].neighbouring,
            released=f"{len(self.classes_)} binary releases, one per class against the rest",
            statement="sequential composition of the parts' stated guarantees (basic, or dp-accounting's PLD)",
            status=max((g.status for g in guarantees), key=STATUSES.index))  # the parts' most severe status
        return self

    def decision_function(self, X: Array) -> Array:
        return np.column_stack([e.decision_function(X) for e in self.estimators_])

    def predict(self, X: Array) -> NDArray:
        return self.classes_[np.argmax(self.decision_function(X), axis=1)]


def task_estimator(mech: Mechanism, eps: float | None, delta: float, info: Info,
                   rng: np.random.Generator) -> tuple[Any, Params]:
    """The unfitted estimator of one run and its hyper-parameters: the mechanism itself (a binary task, or natively
    multi-class), :class:`OneVsAll` over the task's classes with the budget split by :func:`split_budget`, or (a
    selected row) :class:`~dpkernels.selection.PrivateSelection` over the base mechanism's task estimators at the rule
    times :data:`SCALES`, each evaluated at the size of one part.  ``info``: n, d, K, dataset, task, delta, scale
    (and optionally classes, else the data set's)."""
    if mech.protocol == "selected":
        from dpkernels.selection import PrivateSelection

        base = MECHANISMS[mech.base]
        part = {**info, "n": info["n"] // (len(SCALES) + 1)}
        cands, cparams = [], []
        for s in SCALES:
            est, p = task_estimator(base, eps, delta, {**part, "scale": s}, rng)
            cands.append(est)
            cparams.append(p)
        return PrivateSelection(cands, epsilon=float(eps), random_state=rng), {"scales": list(SCALES),
                                                                               "candidates": cparams}
    d_given = delta if mech.takes_delta else 0.0
    if info["task"] == "binary" or mech.multiclass:
        p = mech.params(eps, info)
        return mech.build(p, eps, d_given, info, rng), p  # type: ignore[misc]
    K = info["K"]
    e_k, d_k = split_budget(float(eps), d_given, K)
    p = mech.params(e_k, {**info, "delta": d_k})
    parts = [mech.build(p, e_k, d_k, info, rng) for _ in range(K)]  # type: ignore[misc]
    classes = list(info["classes"]) if "classes" in info else list(DATASETS[info["dataset"]].classes)
    return OneVsAll(parts, classes, delta, random_state=rng), \
        {**p, "epsilon_per_class": e_k, "delta_per_class": d_k}


def _n_parts(est: Any) -> int:
    """Binary (or natively multi-class) fits of a fitted task estimator."""
    if hasattr(est, "best_estimator_"):
        return len(est.candidates) * _n_parts(est.best_estimator_)
    return len(est.estimators_) if isinstance(est, OneVsAll) else 1


# ----------------------------------------------------------------------------------------------
# the sweep
# ----------------------------------------------------------------------------------------------
def validate_config(config: dict[str, Any]) -> None:
    """Refuse an invalid configuration with ValueError (unknown names, sizes, privacy parameters or rule scales out of
    range)."""
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
    if config["n_train"] + config["n_test"] > spec.n_distinct:
        raise ValueError(f"{ds} has {spec.n_distinct} distinct rows: n_train + n_test = "
                         f"{config['n_train'] + config['n_test']}")
    if mech.max_n is not None and config["n_train"] > mech.max_n:
        raise ValueError(f"{m} runs up to n = {mech.max_n} ({mech.limit})")
    if mech.privacy == "none":
        if eps is not None:
            raise ValueError(f"{m} is not private; its epsilon must be None")
    else:
        if eps is None or not (isinstance(eps, (int, float)) and math.isfinite(eps) and eps > 0):
            raise ValueError(f"epsilon must be a finite number > 0, got {eps!r}")
        if not (isinstance(delta, float) and 0.0 < delta <= delta_ceiling(config["n_train"])):
            raise ValueError(f"delta must lie in (0, 1/(10 n_train)], far below 1/n, got {delta!r}")
    scale = config.get("scale", 1.0)
    if not (isinstance(scale, float) and math.isfinite(scale) and scale > 0):
        raise ValueError(f"scale must be a finite float > 0, got {scale!r}")
    if scale != 1.0 and not (mech.protocol == "rule" and mech.constant):
        raise ValueError(f"{m} has no rule constant to scale (scale = {scale!r})")


def _run_queue_wait() -> float:
    """Seconds the calling thread has waited on a run queue for a core (Linux's ``/proc/thread-self/schedstat``,
    its second field, in nanoseconds); NaN where the platform has none."""
    try:
        with open("/proc/thread-self/schedstat") as f:
            return int(f.read().split()[1]) / 1e9
    except (OSError, IndexError, ValueError):
        return math.nan


class Fitted(NamedTuple):
    """What :func:`_fit_predict` returns: the predictions, the (epsilon, delta) the fitted object states, the number
    of binary fits, the hyper-parameters, and the call to ``fit`` alone timed four ways: its wall seconds; the CPU
    seconds of the process meanwhile (every thread of it: a BLAS or random-feature pool counts, and so do a Dask
    worker's own threads, so it errs high; on a busy machine the wall seconds exceed it by the time the process was
    off the CPU); the wall clock at its start (seconds since the epoch: where the fit fell in a sweep); and the
    seconds its thread waited on a run queue for a core (:func:`_run_queue_wait`: the wait itself, where wall minus
    CPU seconds is any time off the CPU).  With ``trace``, its peak memory in bytes (NaN without)."""

    predictions: NDArray
    spent: tuple[float, float]
    n_parts: int
    params: Params
    seconds: float
    peak: float
    cpu_seconds: float
    start_time: float
    wait_seconds: float


def _fit_predict(mech: Mechanism, eps: float | None, delta: float, scale: float, Xtr: Array, ytr: NDArray,
                 Xte: Array, spec: DatasetSpec, rng: np.random.Generator, trace: bool = False) -> Fitted:
    """Fit the run's task estimator (:func:`task_estimator`) and predict (:class:`Fitted`): the (epsilon, delta) the
    fitted object states is composed from every fitted part's statement (non-private references: (inf, 0)), the
    hyper-parameters include the non-private references' and the selection's choices, the peak memory is above what
    was traced before the call to ``fit`` (under ``tracemalloc``)."""
    info = {"n": len(ytr), "d": Xtr.shape[1], "K": len(spec.classes), "dataset": spec.name, "task": spec.task,
            "delta": delta, "scale": scale}
    est, params = task_estimator(mech, eps, delta, info, rng)
    if trace:
        tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        started, wait0, cpu0, t0 = time.time(), _run_queue_wait(), time.process_time(), time.perf_counter()
        est.fit(Xtr, ytr)
        seconds, cpu, wait = time.perf_counter() - t0, time.process_time() - cpu0, _run_queue_wait() - wait0
        peak = float(tracemalloc.get_traced_memory()[1] - before) if trace else math.nan
    finally:
        if trace:
            tracemalloc.stop()
    if mech.protocol == "selected":
        params = {**params, "selected_scale": SCALES[est.selected_]}
    spent = (math.inf, 0.0) if mech.privacy == "none" else stated(est)
    return Fitted(est.predict(Xte), spent, _n_parts(est), {**params, **getattr(est, "chosen_params_", {})}, seconds,
                  peak, cpu, started, wait)


def _majority_error(y: NDArray) -> float:
    """Test error of always predicting the test set's most frequent label (an evaluation reference, used by no
    mechanism): a private classifier that does not beat it has learned nothing usable."""
    return float(1.0 - np.max(np.unique(y, return_counts=True)[1]) / len(y))


#: On a Dask cluster, tasks whose :func:`task_cost` is below this run :data:`BATCH_SIZE` to a Dask task
#: (:func:`dpkernels.sweep.batches`): 18,970 of the scale profile's 30,671 fits, each a few tens of milliseconds, the
#: order of what one Dask task costs the cores beyond its fit (``benchmarks/bench_sweep_overhead.py``).
BATCH_BELOW_COST = 30_000.0
BATCH_SIZE = 8


def task_cost(config: dict[str, Any]) -> float:
    """A relative cost estimate (rows x classes x the mechanism's weight) that orders the sweep."""
    mech, spec = MECHANISMS[config["mechanism"]], DATASETS[config["dataset"]]
    k = 1 if spec.task == "binary" or mech.multiclass else len(spec.classes)
    return float(config["n_train"]) * k * mech.weight


def traced(config: dict[str, Any]) -> bool:
    """Whether ``config``'s fit runs under ``tracemalloc``: a seed of :data:`TRACED_SEEDS`, at :data:`TRACED_EPSILON`
    (a non-private reference: always), and at every epsilon from :data:`COST_TARGET_ROWS` training rows.

    In the scale reference of 30,671 fits, seed 0's 2,120 traced fits (every epsilon of the sweep and of the ablation)
    took 1,389 of the 5,277 fit seconds, about 690 more than the same cells' untraced fits; this rule keeps 504 of
    them and drops 1,616 (951 fit seconds).  At KDDCup99's 135,000 rows the peak moved by less than 1% across epsilon
    for 25 of 29 mechanisms and by at most 6% for all but one (Hall et al.'s Nystrom machine, 19%), so every epsilon
    is traced where ``F-memory`` judges the largest peak; at 1,000 rows it moves across epsilon by 17% for the median
    (data set, mechanism) and up to 19-fold (Bassily et al.'s Algorithm 2 on Adult, 0.07 to 1.4 MB: hyper-parameters
    that depend on epsilon), so the memory curves are drawn at one epsilon."""
    if config["seed"] not in TRACED_SEEDS:
        return False
    eps = config.get("epsilon")
    nonprivate = eps is None or math.isnan(float(eps))  # a reference's epsilon read back from a table is NaN
    return nonprivate or float(eps) == TRACED_EPSILON or int(config["n_train"]) >= COST_TARGET_ROWS


def run_task(config: dict[str, Any]) -> dict[str, Any]:
    """One (data set, mechanism, n, epsilon, rule scale, seed): test error, majority-class error of the same test
    set, the fit's wall seconds, its CPU seconds, its start on the wall clock and its wait for a core
    (:class:`Fitted`), its peak traced memory (MB; the call to ``fit`` alone, under ``tracemalloc``, for the
    configurations :func:`traced` names only, whose ``traced`` is True: tracing slows allocation-heavy Python code,
    so the other runs' fit times are the untraced ones), the training matrix's size (MB), the (epsilon, delta) the
    fitted object states (``epsilon_spent``, ``delta_spent``), the hyper-parameters used (a selected row: the scale it
    chose, ``selected_scale``) and a digest of the predictions (for identity checks across executors).

    A privacy-leak warning of any mechanism (a bound or label set taken from the data) fails the task.  A mechanism
    whose certified solver cannot certify its minimiser refuses to release: the result records the refusal
    (``refused``, error NaN, nothing spent) instead of failing the sweep.  A missing data file raises
    :class:`dpkernels.datasets.DatasetUnavailable` at once, naming the host (no download is tried here: a worker
    without the data fails fast instead of waiting)."""
    from dpkernels._validation import UtilityWarning
    from dpkernels.datasets import DatasetUnavailable

    validate_config(config)
    mech, spec = MECHANISMS[config["mechanism"]], DATASETS[config["dataset"]]
    scale = float(config.get("scale", 1.0))
    try:
        Xtr, ytr, Xte, yte = load_task_data(spec.name, config["n_train"], config["n_test"], config["seed"])
    except DatasetUnavailable as exc:
        raise DatasetUnavailable(f"on host {socket.gethostname()} (pid {os.getpid()}): {exc}") from None
    rng = np.random.default_rng([config["seed"], int(hashlib.sha1(mech.name.encode()).hexdigest()[:8], 16),
                                 int(round((config["epsilon"] or 0.0) * 1e6)), config["n_train"],
                                 int(round(scale * 1e6))])
    with warnings.catch_warnings():
        _privacy_leaks_fail(mech)
        warnings.simplefilter("ignore", DeprecationWarning)  # scipy's L-BFGS-B options, called by diffprivlib
        warnings.simplefilter("ignore", UtilityWarning)  # "mostly noise": what the test error measures anyway
        trace = traced(config)
        try:
            fitted = _fit_predict(mech, config["epsilon"], config["delta"], scale, Xtr, ytr, Xte, spec, rng, trace)
        except RuntimeError as exc:  # a certified solver that cannot certify refuses to release: an outcome, not a bug
            if "refusing to release" not in str(exc):
                raise
            return {"error": math.nan, "base_error": _majority_error(yte), "fit_seconds": math.nan,
                    "fit_cpu_seconds": math.nan, "fit_start_time": math.nan, "fit_wait_seconds": math.nan,
                    "peak_mb": math.nan, "traced": trace, "train_mb": Xtr.nbytes / 2**20, "epsilon_spent": 0.0,
                    "delta_spent": 0.0, "n_parts": 0, "d": int(Xtr.shape[1]), "params": "{}", "selected_scale": math.nan, "pred_digest": "",
                    "refused": str(exc)[:300]}
    pred, (eps_spent, delta_spent), params = fitted.predictions, fitted.spent, fitted.params
    return {"error": float(np.mean(pred != yte)), "base_error": _majority_error(yte),
            "fit_seconds": float(fitted.seconds), "fit_cpu_seconds": float(fitted.cpu_seconds),
            "fit_start_time": float(fitted.start_time), "fit_wait_seconds": float(fitted.wait_seconds),
            "peak_mb": fitted.peak / 2**20, "traced": trace,
            "train_mb": Xtr.nbytes / 2**20, "epsilon_spent": float(eps_spent), "delta_spent": float(delta_spent),
            "n_parts": int(fitted.n_parts), "d": int(Xtr.shape[1]),
            "params": json.dumps(params, sort_keys=True, default=float),
            "selected_scale": float(params.get("selected_scale", math.nan)),
            "pred_digest": hashlib.sha1(np.ascontiguousarray(pred).astype(np.int64).tobytes()).hexdigest()[:16],
            "refused": ""}


def seeds_for(n: int, seeds: int | dict[Any, Any], dataset: str | None = None) -> int:
    """The number of seeds at training size n: ``seeds``, or the value of the largest key <= n of {size: seeds}, or
    (keys naming data sets) that of ``seeds[dataset]``."""
    if isinstance(seeds, dict) and dataset is not None and dataset in seeds:
        return seeds_for(n, seeds[dataset])
    if isinstance(seeds, dict):
        keys = [int(k) for k in seeds if int(k) <= n]
        if not keys:
            raise ValueError(f"seeds {seeds} has no entry for n = {n}")
        return int(seeds[max(keys)] if max(keys) in seeds else seeds[str(max(keys))])
    return int(seeds)


def make_configs(datasets: Sequence[str], mechanisms: Sequence[str], epsilons: Sequence[float],
                 seeds: int | dict[Any, Any], sizes: dict[str, Sequence[int | str]],
                 delta: float | None = None, scales: Sequence[float] = (1.0,)) -> list[dict[str, Any]]:
    """Every (data set, training size, mechanism, epsilon, rule scale, seed) a mechanism can run (its task kind, up to
    its ``max_n``); the non-private references once per (size, seed).  ``seeds``: see :func:`seeds_for`.  ``delta``:
    every cell's total delta (default: :func:`cell_delta` of its size).  ``scales`` other than 1 (the ablation) apply
    to the rule rows with a constant only."""
    out = []
    for ds in datasets:
        spec = DATASETS[ds]
        for n in training_sizes(ds, sizes[ds]):
            for m in mechanisms:
                mech = MECHANISMS[m]
                if spec.task not in mech.tasks or (mech.max_n is not None and n > mech.max_n):
                    continue
                for scale in scales:
                    if float(scale) != 1.0 and not (mech.protocol == "rule" and mech.constant):
                        continue
                    for eps in ([None] if mech.privacy == "none" else list(epsilons)):
                        for s in range(seeds_for(n, seeds, ds)):
                            c = {"dataset": ds, "mechanism": m, "n_train": int(n), "n_test": spec.n_test,
                                 "epsilon": None if eps is None else float(eps), "delta": float(cell_delta(n) if delta is None else delta),
                                 "scale": float(scale), "seed": s}
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
    X = _with_constant(_unit_ball(rng.normal(size=(240, 6)) / 3.0), INTERCEPT_FEATURE)
    y = np.asarray(spec.classes)[np.arange(240) % len(spec.classes)]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # a tiny problem: no utility to speak of
        _privacy_leaks_fail(mech)
        try:
            _fit_predict(mech, None if mech.privacy == "none" else 1.0, DELTA, 1.0, X[:200], y[:200], X[200:], spec, rng)
        except RuntimeError as exc:
            if "refusing to release" not in str(exc):
                raise


def profile_configs(P: dict[str, Any], datasets: Sequence[str] | None = None
                    ) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """A profile's sweep (:mod:`dpkernels.profiles`, section ``frontier``): every mechanism at its ``sizes``,
    ``epsilons`` and ``seeds``, and the ablation's configurations (each public rule's constant times 0.1 and 10 in the
    ``ablation`` cells), on ``datasets`` (default: the profile's)."""
    datasets = list(P["datasets"] if datasets is None else datasets)
    configs = make_configs(datasets, list(MECHANISMS), P["epsilons"], P["seeds"], P["sizes"])
    ab = P["ablation"]
    ablation = [c for c in make_configs([d for d in ab["datasets"] if d in datasets], list(MECHANISMS), ab["epsilons"],
                                        ab["seeds"], ab["sizes"], scales=(SCALES[0], SCALES[-1]))
                if c["scale"] != 1.0]
    return configs, ablation


def run_frontier(configs: Sequence[dict[str, Any]], store: Any = None, n_jobs: int = 1, scheduler: str | None = None,
                 progress: bool = True) -> pd.DataFrame:
    """The sweep through :func:`dpkernels.sweep.run_sweep` (default store ``$DPKERNELS_CACHE/sweeps/frontier``; a
    fresh temporary folder when ``DPKERNELS_NO_CACHE`` is set), most expensive tasks first, with each mechanism's
    label, paper, privacy kind, family, protocol and base (a selected row's mechanism)."""
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
                   desc="frontier", cost=task_cost, preflight_checks=checks, batch_below=BATCH_BELOW_COST,
                   batch_size=BATCH_SIZE)
    for col in ("label", "paper", "privacy", "family", "protocol", "base"):
        df[col] = df["mechanism"].map(lambda m, c=col: getattr(MECHANISMS[m], c))
    df["task"] = df["dataset"].map(lambda d: DATASETS[d].task)
    return df
