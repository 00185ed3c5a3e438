"""The protocol of Park (2022)'s experiments (Section 7): data sets, Table 7.1's settings, the published numbers, and
the accuracy sweep behind Figure 7.1, Tables 7.2-7.3 and Figure 7.2; used by ``notebooks/park2022.py``.

Protocol (Section 7.3, and the author's public code where the thesis is silent): random 80/20 splits, features
scaled as a :class:`~.readings.Reading` says (fitted on the training part; data-dependent, see the notebook), five
runs (:data:`THESIS_RUNS`), F = 400 random features (200 frequencies), one-against-all for the SVM baselines, the
hyperparameters of Table 7.1 per dataset and method.

Speed.  One non-private SVDD solve and one set of one-against-all SVMs per (dataset, run), reused for every
epsilon (:meth:`~dpkernels.mechanisms.park.PrivateSVDD.resample`); the (dataset, run) tasks of a sweep run in a
joblib pool (:func:`sweep`, one BLAS thread per worker, tqdm progress), each with its own seeded stream, so the
numbers do not depend on the number of workers.  The non-private fits are cached (:func:`dpkernels.cache.memory`).
"""

from __future__ import annotations

import math
import time
import warnings
import zlib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

import numpy as np
import pandas as pd
from joblib import Parallel, delayed
from numpy.typing import NDArray
from threadpoolctl import threadpool_limits
from tqdm import tqdm

from dpkernels._validation import PrivacyLeakWarning
from dpkernels.cache import memory
from dpkernels.datasets import Dataset, load
from dpkernels.experiments.park2022.readings import AUTHOR_READING, Reading, split_scale, start_domain
from dpkernels.mechanisms.baselines import OneVsAllSVM, fit_one_vs_all, semi_operator
from dpkernels.mechanisms.park import EquilibriumPointClassifier, PrivateSVDD, run_dynamics

Array = NDArray[np.float64]

__all__ = [
    "DATASETS",
    "SETTINGS",
    "Setting",
    "THESIS_RUNS",
    "METHODS",
    "AUTHOR_CODE",
    "SEMI_P18",
    "PUBLISHED_TABLE_7_1",
    "PUBLISHED_TABLE_7_2",
    "PUBLISHED_TABLE_7_3",
    "TABLE_7_3_EPSILONS",
    "SHUTTLE_ROWS",
    "park_dataset",
    "RunTask",
    "tasks_for",
    "sweep",
    "evaluate",
    "summarise",
    "paired_difference",
    "ep_displacement",
    "setting_effect",
    "ep_release_effect",
]

DATASETS = ["three_moons", "five_gaussians", "iris", "wine", "vowel", "satimage", "segment", "shuttle"]
#: Section 7.3: "performance is evaluated over 5 runs" (the n_runs of every published number).
THESIS_RUNS = 5
#: Methods of Figure 7.1.  "Proposed" is the thesis's algorithm (variant="paper"); "Proposed (corrected)" spends
#: eps/2 + eps/2 end to end; "Proposed (author's code)" is the thesis's algorithm with the author's code's eps
#: split (eps/2 for the centre, Laplace(2/eps) votes) and r_max = 0.1 (Table 7.3 only).
METHODS = ("Proposed", "Proposed (corrected)", "SVM WEIGHT", "SVM SEMI", "SVM OUTPUT")
AUTHOR_CODE = "Proposed (author's code)"
#: Hypothesis P18 (``registry.yaml``) as a method of the sweep: SVM SEMI with its Gaussian noise calibrated to the
#: sensitivity 4C/n alone, without the factor ||Phi_Z||_2 (Table 7.3 only; its own noise stream).
SEMI_P18 = "SVM SEMI (P18: no ||Phi_Z||)"


@dataclass(frozen=True)
class Setting:
    """Table 7.1's hyperparameters of one dataset: (C/n, gamma) per method, lr / iters / r_max of the proposed method."""

    weight: tuple[float, float]
    semi: tuple[float, float]
    proposed: tuple[float, float]
    output: tuple[float, float]
    lr: float
    n_iter: int
    r_max: float | None


SETTINGS: dict[str, Setting] = {
    "three_moons": Setting((0.05, 5), (0.05, 5), (0.05, 5), (0.05, 5), 0.001, 20, None),
    "five_gaussians": Setting((0.1, 1), (0.1, 1), (0.1, 5), (0.1, 1), 0.001, 20, None),
    "iris": Setting((0.05, 1), (0.05, 1), (0.05, 1), (0.05, 1), 0.001, 10, 0.5),
    "wine": Setting((0.05, 0.1), (0.05, 0.1), (0.05, 0.1), (0.05, 0.1), 0.1, 100, 1.0),
    "vowel": Setting((1.0, 1), (0.05, 1), (0.05, 1), (0.05, 1), 0.1, 30, 0.5),
    "satimage": Setting((0.05, 0.1), (0.05, 1), (0.05, 0.1), (0.05, 1), 0.001, 20, 1.0),
    "segment": Setting((0.5, 1), (0.5, 1), (0.5, 1), (0.5, 1), 0.001, 20, 0.5),
    "shuttle": Setting((0.01, 0.1), (0.01, 0.1), (0.01, 1), (0.01, 0.1), 0.001, 20, 0.5),
}

#: Table 7.1 as printed (the dims and classes of iris and wine are swapped there).
PUBLISHED_TABLE_7_1 = {
    "three_moons": (2, 3, 320, 80), "five_gaussians": (2, 5, 800, 200), "iris": (3, 4, 80, 20), "wine": (3, 13, 142, 36),
    "vowel": (10, 11, 422, 106), "satimage": (36, 6, 3548, 887), "segment": (19, 7, 1232, 308), "shuttle": (9, 3, 24360, 6090),
}
#: Table 7.2: training and inference time (s) per method.
PUBLISHED_TABLE_7_2 = {
    "SVM WEIGHT": [4.72, 100.65, 0.60, 4.66, 71.17, 1376.24, 298.70, 49943.29],
    "SVM SEMI": [5.01, 64.35, 0.51, 1.63, 31.39, 1158.10, 140.61, 52519.56],
    "Proposed": [0.90, 2.41, 0.18, 1.32, 1.96, 31.03, 4.54, 1334.80],
}
#: Table 7.3: shuttle sub-sampled to 10% and 30%, test accuracy.
PUBLISHED_TABLE_7_3 = {
    (0.1, "SVM WEIGHT"): [0.366, 0.310, 0.892, 0.917, 0.912], (0.1, "SVM SEMI"): [0.332, 0.484, 0.899, 0.932, 0.930],
    (0.1, "Proposed"): [0.456, 0.644, 0.908, 0.983, 0.987], (0.1, "SVM OUTPUT"): [0.493, 0.919, 0.926, 0.926, 0.926],
    (0.3, "SVM WEIGHT"): [0.135, 0.456, 0.957, 0.955, 0.948], (0.3, "SVM SEMI"): [0.330, 0.514, 0.935, 0.950, 0.947],
    (0.3, "Proposed"): [0.635, 0.786, 0.958, 0.981, 0.986], (0.3, "SVM OUTPUT"): [0.559, 0.943, 0.943, 0.946, 0.946],
}
TABLE_7_3_EPSILONS = [0.01, 0.1, 1.0, 5.0, None]  # None: non-private
SHUTTLE_ROWS = 58000


def park_dataset(name: str, random_state: int = 0, shuttle_rows: int | None = 30450) -> Dataset:
    """The datasets of Section 7.2.  Shuttle: the three-class grouping and a seeded subsample of ``shuttle_rows``
    rows (Table 7.1's 24,360 + 6,090 = 30,450; None keeps all 58,000); vowel: the 528-row training set."""
    if name == "shuttle":
        d = load("shuttle")
        if shuttle_rows is not None and shuttle_rows < d.n_samples:
            idx = np.sort(np.random.default_rng(random_state).choice(d.n_samples, size=shuttle_rows, replace=False))
            d = Dataset(d.name, d.X[idx], d.y[idx], d.feature_names, d.target_names, {**d.meta, "subsample": shuttle_rows})
        return d
    return load(name)


# ----------------------------------------------------------------------------------------------
# Figure 7.1, Tables 7.2 and 7.3, Figure 7.2: one task per (dataset, run)
# ----------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class RunTask:
    """One (dataset, run) of a sweep: its data, the epsilons (None: non-private), the methods and extra columns."""

    name: str
    data: Dataset
    run: int
    epsilons: tuple[float | None, ...]
    methods: tuple[str, ...] = METHODS
    n_starts: int = 2000
    knn: tuple[int, ...] = ()
    seed: int = 0
    labels: tuple[tuple[str, object], ...] = field(default_factory=tuple)  #: extra columns, e.g. (("sampling", 0.1),)
    reading: Reading = AUTHOR_READING  #: scaling and the SVMs' box (:mod:`~dpkernels.experiments.park2022.readings`)
    setting: Setting | None = None  #: Table 7.1's row of the data set unless given (hypothesis P19's per-method settings)

    @property
    def cost(self) -> int:
        return self.data.n_samples * len(self.epsilons) * len(self.methods)


def tasks_for(name: str, epsilons: Sequence[float | None], runs: Iterable[int], *, methods: Sequence[str] = METHODS,
              shuttle_rows: int | None = 30450, n_starts: int = 2000, knn: Sequence[int] = (), data: Dataset | None = None,
              seed: int = 0, labels: dict[str, object] | None = None, reading: Reading = AUTHOR_READING) -> list[RunTask]:
    data = park_dataset(name, 0, shuttle_rows) if data is None else data
    return [RunTask(name, data, int(r), tuple(epsilons), tuple(methods), int(n_starts), tuple(knn), int(seed),
                    tuple((labels or {}).items()), reading) for r in runs]


def _stream(task: RunTask, tag: str) -> np.random.Generator:
    """The task's own noise stream: a function of (seed, dataset, extra labels, run, purpose) only."""
    key = zlib.crc32(f"{task.name}|{task.labels}|{tag}".encode())
    return np.random.default_rng(np.random.SeedSequence([task.seed, key, task.run]))


def _acc(pred: NDArray, y: NDArray) -> float:
    return float(np.mean(np.asarray(pred) == np.asarray(y)))


def _fit_base(Xtr: Array, box: float, gamma: float, seed: int) -> PrivateSVDD:
    """The non-private SVDD of one split in evaluation mode (deterministic given the seed; cached)."""
    return PrivateSVDD(epsilon=None, box=box, sigma=math.sqrt(0.5 / gamma), keep_nonprivate=True, random_state=seed).fit(Xtr)


def _epc_settings(cfg: dict[str, object]) -> dict[str, object]:
    """Table 7.1's names (``lr``) as EquilibriumPointClassifier's parameters (``learning_rate``)."""
    return {("learning_rate" if k == "lr" else k): v for k, v in cfg.items()}


def _svdd_base(Xtr: Array, box: float, gamma: float, seed: int) -> PrivateSVDD:
    return memory().cache(_fit_base)(Xtr, box, gamma, seed)


def _proposed_specs(methods: Sequence[str], eps: float | None, s: Setting, scaling: str
                    ) -> list[tuple[str, str, float | None, float | None, float | None, str, str]]:
    """(method, variant, eps_svdd, eps_vote, r_max, accounting, scaling) of the proposed methods at one epsilon.  The
    author's-code variant runs as that code does: min-max scaling, eps/2 for the centre, Laplace(2/eps) votes,
    r_max = 0.1."""
    half = None if eps is None else eps / 2
    specs = []
    if "Proposed" in methods:
        specs.append(("Proposed", "paper", eps, eps, s.r_max, "per-component", scaling))
    if "Proposed (corrected)" in methods:
        specs.append(("Proposed (corrected)", "corrected", half, half, s.r_max, "total", scaling))
    if AUTHOR_CODE in methods:
        specs.append((AUTHOR_CODE, "paper", half, half, 0.1, "per-component", AUTHOR_READING.scaling))
    return specs


def _domain(scaling: str, variant: str) -> tuple[float, float]:
    """The corrected variant's start box for the scaling (the thesis's variant starts from the data)."""
    return start_domain(scaling) if variant == "corrected" else (0.0, 1.0)


def _run_task(task: RunTask) -> list[dict[str, object]]:
    """Every method at every epsilon on one split (the work of :func:`sweep`)."""
    with threadpool_limits(1), warnings.catch_warnings():
        warnings.simplefilter("ignore", PrivacyLeakWarning)  # the thesis's variant warns on every fit
        return _run_task_inner(task)


def _run_task_inner(task: RunTask) -> list[dict[str, object]]:
    name, reading = task.name, task.reading
    s = SETTINGS[name] if task.setting is None else task.setting
    Xtr, Xte, ytr, yte = split_scale(task.data, task.run, scaling=reading.scaling)
    classes = np.arange(task.data.n_classes)
    K, m, n = len(classes), len(yte), len(ytr)
    majority = float(np.max(np.bincount(yte, minlength=K)) / m)
    extra = dict(task.labels)
    rng = _stream(task, "noise")
    p18_rng = _stream(task, "P18")  # its own stream: the other methods' draws do not move
    scaled = {reading.scaling: (Xtr, Xte)}
    bases: dict[str, tuple[PrivateSVDD, float]] = {}

    def base_for(scaling: str) -> tuple[Array, Array, PrivateSVDD, float]:
        """The split scaled as asked (the same rows: the split depends on the run only) and its SVDD solve."""
        if scaling not in scaled:
            scaled[scaling] = split_scale(task.data, task.run, scaling=scaling)[:2]
        if scaling not in bases:
            t0 = time.perf_counter()
            bases[scaling] = (_svdd_base(scaled[scaling][0], s.proposed[0], s.proposed[1], task.run), time.perf_counter() - t0)
        return (*scaled[scaling], *bases[scaling])

    fits: dict[tuple[float, float], tuple[OneVsAllSVM, float]] = {}
    svm_methods = [(mt, (reading.box(bg[0], n), bg[1])) for mt, bg in (("SVM WEIGHT", s.weight), ("SVM SEMI", s.semi),
                                                                       ("SVM OUTPUT", s.output)) if mt in task.methods]
    for _, key in svm_methods:
        if key not in fits:
            t0 = time.perf_counter()
            fits[key] = (memory().cache(fit_one_vs_all)(Xtr, ytr, key[0], key[1], random_state=task.run, classes=classes),
                         time.perf_counter() - t0)
    ops = {key: (ova.features(Xte),) for key, (ova, _) in fits.items()}
    for mt, key in svm_methods:
        if mt == "SVM SEMI":
            ops[key] = (ops[key][0], semi_operator(ops[key][0]))
    rows: list[dict[str, object]] = []
    for eps in task.epsilons:
        label = "non-private" if eps is None else eps
        head = {"dataset": name, **extra, "run": task.run, "epsilon": label, "n_train": n, "K": K, "majority": majority,
                "scaling": reading.scaling, "svm_box": reading.svm_box}
        for method, variant, e_svdd, e_vote, r_max, accounting, scaling in _proposed_specs(task.methods, eps, s, reading.scaling):
            A, B, base, t_svdd = base_for(scaling)
            t0 = time.perf_counter()
            release = base.resample(e_svdd, rng)
            clf = EquilibriumPointClassifier(epsilon_svdd=e_svdd, epsilon_vote=e_vote, classes=classes, box=s.proposed[0],
                                             sigma=math.sqrt(0.5 / s.proposed[1]), learning_rate=s.lr, n_iter=s.n_iter, r_max=r_max, variant=variant,
                                             n_starts=task.n_starts, domain=_domain(scaling, variant),
                                             random_state=rng).fit(A, ytr, svdd=release)
            t1 = time.perf_counter()
            acc = _acc(clf.predict(B), yte)
            rows.append({**head, "scaling": scaling, "method": method, "accounting": accounting, "accuracy": acc,
                         "train_s": t1 - t0 + t_svdd, "infer_s": time.perf_counter() - t1, "n_cells": clf.n_cells_,
                         "n_eps": len(clf.labelled_points_)})
            if method == "Proposed":
                for k in task.knn:  # the same fitted model released as equilibrium points, kNN inference
                    clf.set_params(inference="knn", n_neighbors=k)
                    rows.append({**head, "method": f"Proposed (EP release, {k}-NN)", "accounting": accounting, "k": k,
                                 "accuracy": _acc(clf.predict(B), yte)})
        for method, key in svm_methods:
            ova, t_fit = fits[key]
            t0 = time.perf_counter()
            Phi = ops[key][0]
            share = K if method != "SVM OUTPUT" else m * K
            for accounting, e in (("per-component", eps), ("total", None if eps is None else eps / share)):
                if eps is None and accounting == "total":
                    continue
                if e is None:
                    S = ova.scores(Phi)
                elif method == "SVM WEIGHT":
                    S = ova.weight(Phi, e, rng)
                elif method == "SVM OUTPUT":
                    S = ova.output(Phi, e, rng)
                else:
                    delta = 1.0 / n if accounting == "per-component" else 1.0 / (n * K)
                    S = ova.semi(Phi, e, delta, rng, operator=ops[key][1], reproduce_thesis=True)
                rows.append({**head, "method": method, "accounting": accounting,
                             "accuracy": _acc(ova.classes[S.argmax(axis=1)], yte), "train_s": t_fit,
                             "infer_s": time.perf_counter() - t0})
        if SEMI_P18 in task.methods and eps is not None:  # P18: the same fit and features, sigma without ||Phi_Z||_2
            key = dict(svm_methods)["SVM SEMI"]
            pinv = ops[key][1][0]
            S = fits[key][0].semi(ops[key][0], eps, 1.0 / n, p18_rng, operator=(pinv, 1.0), reproduce_thesis=True)
            rows.append({**head, "method": SEMI_P18, "accounting": "per-component",
                         "accuracy": _acc(fits[key][0].classes[S.argmax(axis=1)], yte)})
    return rows


def _indexed(i: int, task: RunTask) -> tuple[int, list[dict[str, object]]]:
    return i, _run_task(task)


def sweep(tasks: Sequence[RunTask], n_jobs: int = 1, desc: str = "runs", progress: bool = True) -> pd.DataFrame:
    """Run every task (largest first) in a joblib pool with a progress bar; rows in task order."""
    order = sorted(range(len(tasks)), key=lambda i: -tasks[i].cost)
    results: dict[int, list[dict[str, object]]] = {}
    gen = Parallel(n_jobs=n_jobs, return_as="generator_unordered")(delayed(_indexed)(i, tasks[i]) for i in order)
    for i, rows in tqdm(gen, total=len(tasks), desc=desc, disable=not progress, mininterval=1.0):
        results[i] = rows
    return pd.DataFrame([r for i in range(len(tasks)) for r in results[i]])


def evaluate(name: str, epsilons: Sequence[float | None], runs: Iterable[int], *, methods: Sequence[str] = METHODS,
             shuttle_rows: int | None = 30450, n_starts: int = 2000, knn: Sequence[int] = (), data: Dataset | None = None,
             seed: int = 0, n_jobs: int = 1, progress: bool = False, reading: Reading = AUTHOR_READING) -> pd.DataFrame:
    """Test accuracy of every method at every epsilon (None: non-private) on one dataset, under two accountings.

    ``accounting="per-component"`` is the thesis's reading (eps for the SVDD noise and for the votes; eps per
    class for the one-against-all SVMs; eps per answer for SVM OUTPUT).  ``accounting="total"`` spends one eps
    per method end to end: the corrected proposed method splits it eps/2 + eps/2; the SVMs give eps/K to each
    class (SVM SEMI also delta/K); SVM OUTPUT eps/(m K) to each answer; the thesis's proposed method has no finite
    total (its equilibrium points are not private) and is omitted there.  ``knn`` adds the equilibrium-point
    release of the thesis's method with kNN inference.
    """
    tasks = tasks_for(name, epsilons, runs, methods=methods, shuttle_rows=shuttle_rows, n_starts=n_starts, knn=knn,
                      data=data, seed=seed, reading=reading)
    return sweep(tasks, n_jobs=n_jobs, desc=name, progress=progress)


def summarise(res: pd.DataFrame, keys: Sequence[str], value: str = "accuracy") -> pd.DataFrame:
    """Mean (``value``), standard error of the mean (``se``), per-run sd (``sd``) and ``n_runs`` per group; a single
    run has no sd or se (NaN: its spread is unknown, not zero)."""
    g = res.groupby(list(keys), sort=False)[value]
    out = g.agg(value="mean", sd="std", n_runs="count").reset_index()
    out["se"] = out["sd"] / np.sqrt(out["n_runs"])
    return out


def paired_difference(res: pd.DataFrame, method: str, baseline: str, by: Sequence[str], *, accounting: str = "per-component",
                      epsilons: Sequence[object] | None = None) -> pd.DataFrame:
    """Mean over runs of (accuracy of ``method`` - accuracy of ``baseline``), each run's difference averaged over
    ``epsilons`` (default all private ones), with its standard error: paired by split, as both use the same runs."""
    d = res[(res.accounting == accounting) | ((res.epsilon == "non-private") & (accounting == "per-component"))]
    if epsilons is None:
        d = d[d.epsilon != "non-private"]
    else:
        d = d[d.epsilon.isin(list(epsilons))]
    a = d[d.method == method].set_index([*by, "epsilon", "run"]).accuracy
    b = d[d.method == baseline].set_index([*by, "epsilon", "run"]).accuracy
    diff = (a - b).dropna().groupby(level=[*by, "run"]).mean()
    g = diff.groupby(level=list(by))
    out = pd.DataFrame({"diff": g.mean(), "sd": g.std().fillna(0.0), "n_runs": g.count()}).reset_index()
    out["se"] = out["sd"] / np.sqrt(out["n_runs"])
    out.insert(0, "comparison", f"{method} - {baseline}")
    return out


def ep_displacement(name: str, random_state: int = 0, shuttle_rows: int | None = 30450, scaling: str = "minmax"
                    ) -> dict[str, object]:
    """How far the dynamics (Table 7.1's lr and iterations) move the training points: the equilibrium points of
    the thesis's protocol sit at the training points (rounded to the merge grid)."""
    s = SETTINGS[name]
    Xtr, _, _, _ = split_scale(park_dataset(name, 0, shuttle_rows), random_state, scaling=scaling)
    svdd = PrivateSVDD(epsilon=None, box=s.proposed[0], sigma=math.sqrt(0.5 / s.proposed[1]), random_state=random_state).fit(Xtr)
    with threadpool_limits(1):
        finals = run_dynamics(svdd, Xtr, s.lr, s.n_iter)
    moves = np.linalg.norm(finals - Xtr, axis=1)
    return {"dataset": name, "scaling": scaling, "lr": s.lr, "median_move": float(np.median(moves)),
            "max_move": float(moves.max()), "share_within_0.05": float(np.mean(moves <= 0.05)), "n_train": len(Xtr)}


def _setting_one(name: str, data: Dataset, run: int, overrides: Sequence[dict[str, float | None]], scaling: str
                 ) -> list[dict[str, object]]:
    s = SETTINGS[name]
    Xtr, Xte, ytr, yte = split_scale(data, run, scaling=scaling)
    classes = np.arange(data.n_classes)
    rows = []
    with threadpool_limits(1), warnings.catch_warnings():
        warnings.simplefilter("ignore", PrivacyLeakWarning)
        base = _svdd_base(Xtr, s.proposed[0], s.proposed[1], run)
        for ov in overrides:
            cfg = {"lr": s.lr, "n_iter": s.n_iter, "r_max": s.r_max, **ov}
            clf = EquilibriumPointClassifier(epsilon_svdd=None, epsilon_vote=None, classes=classes, box=s.proposed[0],
                                             sigma=math.sqrt(0.5 / s.proposed[1]), variant="paper",
                                             **_epc_settings(cfg)).fit(Xtr, ytr, svdd=base.resample(None))
            rows.append({"dataset": name, "scaling": scaling, "run": run, "setting": ", ".join(f"{k} = {v}" for k, v in ov.items()) or "Table 7.1",
                         **{k: ("none" if v is None else v) for k, v in cfg.items()}, "n_cells": clf.n_cells_,
                         "accuracy": _acc(clf.predict(Xte), yte)})
    return rows


def setting_effect(name: str, overrides: Sequence[dict[str, float | None]], runs: Iterable[int], data: Dataset | None = None,
                   shuttle_rows: int | None = 30450, n_jobs: int = 1, scaling: str = "minmax") -> pd.DataFrame:
    """Non-private test accuracy of the thesis's method when Table 7.1's ``lr``, ``n_iter`` or ``r_max`` is replaced
    (features scaled by ``scaling``, :mod:`~dpkernels.experiments.park2022.readings`).

    Each override is a dict such as ``{"r_max": 0.1}`` or ``{"lr": 0.001}``; ``{}`` is Table 7.1's setting.  Cubes
    of Eq. (5.6) have side r_max centred on multiples of r_max, as in the author's code (``round_sep``); Eq.
    (5.6)'s ||s_0 - s_j||_inf <= r_max reads as side 2 r_max.  ``r_max=None``: no grouping.  The author's code
    differs from Table 7.1 in r_max for shuttle (0.1, the table 0.5) and in lr for vowel (0.001, the table 0.1).
    """
    for ov in overrides:
        if set(ov) - {"lr", "n_iter", "r_max"}:
            raise ValueError(f"overrides may set lr, n_iter and r_max only; got {sorted(ov)}")
    data = park_dataset(name, 0, shuttle_rows) if data is None else data
    out = Parallel(n_jobs=n_jobs)(delayed(_setting_one)(name, data, int(r), list(overrides), scaling) for r in runs)
    return pd.DataFrame([r for rows in out for r in rows])


def _ep_release_one(name: str, data: Dataset, run: int, override: dict[str, float | None], epsilons: Sequence[float | None],
                    ks: Sequence[int], seed: int, scaling: str) -> list[dict[str, object]]:
    s = SETTINGS[name]
    Xtr, Xte, ytr, yte = split_scale(data, run, scaling=scaling)
    classes = np.arange(data.n_classes)
    rng = np.random.default_rng(np.random.SeedSequence([seed, zlib.crc32(f"{name}|{override}".encode()), run]))
    cfg = {"lr": s.lr, "n_iter": s.n_iter, "r_max": s.r_max, **override}
    rows = []
    with threadpool_limits(1), warnings.catch_warnings():
        warnings.simplefilter("ignore", PrivacyLeakWarning)
        base = _svdd_base(Xtr, s.proposed[0], s.proposed[1], run)
        for eps in epsilons:
            clf = EquilibriumPointClassifier(epsilon_svdd=eps, epsilon_vote=eps, classes=classes, box=s.proposed[0], sigma=math.sqrt(0.5 / s.proposed[1]),
                                             variant="paper", random_state=rng,
                                             **_epc_settings(cfg)).fit(Xtr, ytr, svdd=base.resample(eps, rng))
            head = {"dataset": name, "run": run, "epsilon": "non-private" if eps is None else eps, "accounting": "per-component"}
            rows.append({**head, "method": "Proposed", "k": 0, "accuracy": _acc(clf.predict(Xte), yte)})
            for k in ks:
                clf.set_params(inference="knn", n_neighbors=k)
                rows.append({**head, "method": f"Proposed (EP release, {k}-NN)", "k": k, "accuracy": _acc(clf.predict(Xte), yte)})
            clf.set_params(inference="dynamics")
    return rows


def ep_release_effect(name: str, override: dict[str, float | None], epsilons: Sequence[float | None], runs: Iterable[int],
                      ks: Sequence[int] = (1, 3), seed: int = 0, n_jobs: int = 1, scaling: str = "minmax") -> pd.DataFrame:
    """The thesis's method released as its support function and as equilibrium points with k-NN inference
    (Section 7.6), with Table 7.1's settings replaced by ``override`` (e.g. ``{"lr": 0.001}``, the author's code
    for vowel); rows as the sweep's, for :func:`~.statements.figure_7_2_claims`."""
    if set(override) - {"lr", "n_iter", "r_max"}:
        raise ValueError(f"override may set lr, n_iter and r_max only; got {sorted(override)}")
    data = park_dataset(name)
    out = Parallel(n_jobs=n_jobs)(delayed(_ep_release_one)(name, data, int(r), dict(override), list(epsilons), list(ks), seed,
                                                          scaling)
                                  for r in runs)
    return pd.DataFrame([r for rows in out for r in rows])

