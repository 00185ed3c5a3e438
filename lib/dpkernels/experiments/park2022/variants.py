"""Registered hypotheses about Park (2022) that need runs of their own, run outside the full profile (issue 28).

``python -m dpkernels.experiments.park2022 [--out DIR] [--jobs N] [--quick] [--only p19 p20]`` runs P19 and P20 of
``registry.yaml`` and writes into ``DIR`` (default ``build/registered/park2022``):

* ``registered_runs.csv`` (:data:`RUN_COLUMNS`): P19's runs, one row per (arm, method, sampling, epsilon, run): the
  SVM baselines of Table 7.3 with each baseline's own setting (arm ``variant``, the setting in ``setting``) and with
  Table 7.1's shared setting (arm ``ours``), on the notebook's splits, and the published number;
  ``p19_screen.csv``: the non-private screen that chose each baseline's setting;
* ``figure_7_1_standardised.csv``: P20's runs, Figure 7.1's sweep of the data sets other than shuttle under the chosen
  (standardised) scaling, one row per (data set, method, epsilon, run).

They are committed under ``paper_figures/park2022/`` (``--out paper_figures/park2022`` regenerates them) and read by
``notebooks/park2022.py``, which runs the tests and copies the files into its own output.  A replicate is a random
80/20 split with new noise (the thesis's "run"); the published number is the mean of the thesis's 5 runs.
"""

from __future__ import annotations

import argparse
import dataclasses
from collections.abc import Iterable
from pathlib import Path

import numpy as np
import pandas as pd
from joblib import Parallel, delayed

from dpkernels.experiments.park2022.protocol import (
    DATASETS,
    PUBLISHED_TABLE_7_3,
    SETTINGS,
    SHUTTLE_ROWS,
    TABLE_7_3_EPSILONS,
    THESIS_RUNS,
    park_dataset,
    sweep,
    tasks_for,
)
from dpkernels.experiments.park2022.readings import Reading, _screen_svm, choose_reading, reading_scores, screen_readings, split_scale
from dpkernels.experiments.park2022.registry import family_size
from dpkernels.experiments.registry import joint_mean_test, joint_test_row
from dpkernels.verdicts import hypothesis_outcome
from dpkernels.experiments.registry import load_committed as _load_committed

__all__ = ["RUN_COLUMNS", "P19_GRID", "BASELINES", "Scale", "REGISTERED", "QUICK", "p19_screen", "p19_choose",
           "p19_runs", "p20_runs", "p19_hypothesis", "load_committed", "main"]

#: The SVM baselines of Table 7.3 and the field of :class:`~.protocol.Setting` that holds each one's (C/n, gamma).
BASELINES = {"SVM WEIGHT": "weight", "SVM SEMI": "semi", "SVM OUTPUT": "output"}
#: P19's candidate settings (C/n, gamma), ``registry.yaml``.
P19_GRID = tuple((c, g) for c in (0.005, 0.01, 0.05, 0.1, 0.5) for g in (0.1, 1.0, 10.0))
RUN_COLUMNS = ["hypothesis", "arm", "method", "setting", "sampling", "epsilon", "run", "accuracy", "published"]


@dataclasses.dataclass(frozen=True)
class Scale:
    """The sizes of the command's runs: the registered ones (:data:`REGISTERED`) and a smoke-test size (``QUICK``)."""

    screen_runs: int = 5  #: P19's screen (the thesis's 5 runs)
    runs: int = 20  #: Table 7.3's splits (the full profile's t73_runs)
    fractions: tuple[float, ...] = (0.1, 0.3)
    reading_runs: int = 2  #: the reading rule's screen (the full profile's)
    p20_runs: int = 5  #: Figure 7.1's runs (the full profile's)
    p20_epsilons: tuple[float, ...] = (0.01, 0.1, 1.0, 5.0, 10.0, 100.0)
    n_starts: int = 2000


REGISTERED = Scale()
QUICK = Scale(screen_runs=2, runs=2, fractions=(0.1,), reading_runs=1, p20_runs=1, p20_epsilons=(0.1, 1.0), n_starts=200)


def _chosen_reading(data: dict[float, object], scale: Scale, n_jobs: int) -> Reading:
    """The reading the notebook's rule chooses (Table 7.3's non-private column, :func:`~.readings.choose_reading`)."""
    screen = screen_readings(data, range(scale.reading_runs), SETTINGS["shuttle"], n_jobs=n_jobs)
    published = {(frac, m): v[-1] for (frac, m), v in PUBLISHED_TABLE_7_3.items()}
    return choose_reading(reading_scores(screen, published, THESIS_RUNS))[0]


def _screen_one(data: object, frac: float, run: int, reading: Reading) -> list[dict[str, object]]:
    Xtr, Xte, ytr, yte = split_scale(data, run, scaling=reading.scaling)
    n, K = len(ytr), data.n_classes
    return [{"sampling": frac, "run": run, "C/n": c, "gamma": g,
             "accuracy": _screen_svm(Xtr, Xte, ytr, yte, reading.box(c, n), g, run, K)} for c, g in P19_GRID]


def p19_screen(data: dict[float, object], reading: Reading, runs: Iterable[int], n_jobs: int = 1) -> pd.DataFrame:
    """Non-private accuracy of the one-against-all SVMs (liblinear screen, the reading rule's) at every setting of
    :data:`P19_GRID`, per sampling and run."""
    jobs = [(frac, d, int(r)) for frac, d in data.items() for r in runs]
    out = Parallel(n_jobs=n_jobs)(delayed(_screen_one)(d, frac, r, reading) for frac, d, r in jobs)
    return pd.DataFrame([row for rows in out for row in rows])


def p19_choose(screen: pd.DataFrame) -> dict[str, tuple[float, float]]:
    """Each baseline's setting: the smallest largest ``|mean accuracy - published non-private number|`` over the samplings
    (ties: the smallest mean distance), the reading rule's distance applied to that baseline's own numbers."""
    mean = screen.groupby(["C/n", "gamma", "sampling"]).accuracy.mean().reset_index()
    out = {}
    for method in BASELINES:
        d = mean.assign(dist=[abs(a - PUBLISHED_TABLE_7_3[(s, method)][-1]) for a, s in zip(mean.accuracy, mean.sampling)])
        rank = d.groupby(["C/n", "gamma"]).dist.agg(["max", "mean"]).reset_index().sort_values(["max", "mean"], kind="stable")
        out[method] = (float(rank["C/n"].iloc[0]), float(rank["gamma"].iloc[0]))
    return out


def p19_runs(data: dict[float, object], reading: Reading, choice: dict[str, tuple[float, float]], seed: int,
             scale: Scale = REGISTERED, n_jobs: int = 1) -> pd.DataFrame:
    """Table 7.3's private and non-private numbers of the three baselines on the notebook's splits (its seed, labels and
    runs): each baseline under its own setting (arm ``variant``) and all three under Table 7.1's (arm ``ours``)."""
    base = SETTINGS["shuttle"]
    tasks = []
    for frac, d in data.items():
        common = dict(data=d, seed=seed, reading=reading, n_starts=scale.n_starts)
        tasks += tasks_for("shuttle", TABLE_7_3_EPSILONS, range(scale.runs), methods=tuple(BASELINES),
                           labels={"sampling": frac, "arm": "ours"}, **common)
        for method, field in BASELINES.items():
            setting = dataclasses.replace(base, **{field: choice[method]})
            tasks += [dataclasses.replace(t, setting=setting) for t in
                      tasks_for("shuttle", TABLE_7_3_EPSILONS, range(scale.runs), methods=(method,),
                                labels={"sampling": frac, "arm": "variant"}, **common)]
    res = sweep(tasks, n_jobs=n_jobs, desc="P19", progress=False)
    res = res[res.accounting == "per-component"]
    rows = []
    for r in res.itertuples():
        eps = None if r.epsilon == "non-private" else float(r.epsilon)
        c, g = getattr(base, BASELINES[r.method]) if r.arm == "ours" else choice[r.method]
        rows.append({"hypothesis": "P19", "arm": r.arm, "method": r.method, "setting": f"C/n = {c:g}, gamma = {g:g}",
                     "sampling": r.sampling, "epsilon": r.epsilon, "run": r.run, "accuracy": r.accuracy,
                     "published": PUBLISHED_TABLE_7_3[(r.sampling, r.method)][TABLE_7_3_EPSILONS.index(eps)]})
    return pd.DataFrame(rows, columns=RUN_COLUMNS)


def p20_runs(reading: Reading, seed: int, scale: Scale = REGISTERED, n_jobs: int = 1) -> pd.DataFrame:
    """P20: Figure 7.1's sweep of every data set but shuttle under ``reading`` (the chosen, standardised scaling), the
    full profile's runs and epsilons, the three SVM baselines (P7's reach: do they beat the majority class there)."""
    tasks = []
    for name in DATASETS:
        if name == "shuttle":
            continue
        tasks += tasks_for(name, [None, *scale.p20_epsilons], range(scale.p20_runs), n_starts=scale.n_starts, seed=seed,
                           labels={"sampling": 0.0}, reading=reading, methods=tuple(BASELINES))
    return sweep(tasks, n_jobs=n_jobs, desc="P20", progress=False).drop(columns="sampling")


def p19_hypothesis(runs: pd.DataFrame, *, n_sim: int = 1000, random_state: int = 0) -> list[dict[str, object]]:
    """P19's rows of ``hypotheses.csv`` (one joint test, a row per sampling) from ``registered_runs.csv``: the joint
    mean test (:func:`dpkernels.experiments.registry.joint_mean_test`) of the three baselines' published private
    numbers against their own settings' law over the splits (the published number a mean of 5 runs), false acceptance
    on published vectors simulated from the shared fit's law on the same splits."""
    p = runs[(runs.hypothesis == "P19") & (runs.epsilon != "non-private")]
    if p.empty:
        return []

    def matrix(arm: str) -> tuple[np.ndarray, np.ndarray, list[tuple]]:
        a = p[p.arm == arm]
        piv = a.pivot_table(index="run", columns=["method", "sampling", "epsilon"], values="accuracy")
        pub = a.groupby(["method", "sampling", "epsilon"]).published.first().reindex(piv.columns)
        return pub.to_numpy(float), piv.to_numpy(float), list(piv.columns)

    P, M, cells = matrix("variant")
    _, M0, cells0 = matrix("ours")
    if cells != cells0:
        raise ValueError("P19: the variant and our shared fit ran different cells")
    if M.shape[0] < 2:
        return []
    j = joint_mean_test(P, M, n_published=THESIS_RUNS, alternative=M0,
                        paired=True, n_sim=n_sim, random_state=random_state)
    own = p[p.arm == "variant"].groupby("method").setting.first()
    settings = "; ".join(f"{m}: {s}" for m, s in own.items())
    void = own.equals(p[p.arm == "ours"].groupby("method").setting.first())
    if void:
        settings += " (void: every baseline's own setting is Table 7.1's, so the variant is our shared fit with other noise draws)"
    row = joint_test_row("P19", j, family_size("P19"), f"the baselines' {j['cells']} published private numbers against "
                         "their own settings' law, the splits as replicates", "published vectors simulated from the "
                         "shared fit's law", f"settings chosen on each baseline's own non-private numbers: {settings}; "
                         "one test for both samplings", "method=SVM WEIGHT|SVM SEMI|SVM OUTPUT")
    if void:  # the variant is ours: its test compares our fit with itself and says nothing of the hypothesis
        row.update(accepted=False, outcome=hypothesis_outcome(False, False, void=True))
    return [{**row, "dataset": f"shuttle {round(100 * float(s))}%"} for s in sorted(set(p.sampling))]


def load_committed(name: str, out: Path | None = None) -> pd.DataFrame | None:
    """The committed output ``name`` of this command, copied into the notebook's output folder
    (:func:`dpkernels.experiments.registry.load_committed`)."""
    return _load_committed("park2022", name, out)


def main(argv: list[str] | None = None) -> int:
    """The command (module docstring)."""
    from dpkernels.report import REPO_ROOT

    ap = argparse.ArgumentParser(prog="python -m dpkernels.experiments.park2022",
                                 description="Run the registered hypotheses of Park (2022) that need runs of their own.")
    ap.add_argument("--out", type=Path, default=REPO_ROOT / "build" / "registered" / "park2022")
    ap.add_argument("--seed", type=int, default=2022, help="the notebook's seed (default 2022)")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--quick", action="store_true", help="a smoke-test size (not the registered protocol)")
    ap.add_argument("--only", nargs="*", default=None, choices=("p19", "p20"))
    args = ap.parse_args(argv)
    scale = QUICK if args.quick else REGISTERED
    args.out.mkdir(parents=True, exist_ok=True)
    parts = set(args.only or ("p19", "p20"))
    data = {frac: park_dataset("shuttle", args.seed, shuttle_rows=int(SHUTTLE_ROWS * frac)) for frac in scale.fractions}
    reading = _chosen_reading(data, scale, args.jobs)
    print(f"chosen reading: {reading.label}", flush=True)
    if "p19" in parts:
        screen = p19_screen(data, reading, range(scale.screen_runs), args.jobs)
        screen.to_csv(args.out / "p19_screen.csv", index=False)
        choice = p19_choose(screen)
        print(f"P19 settings: {choice}", flush=True)
        p19_runs(data, reading, choice, args.seed, scale, args.jobs).to_csv(args.out / "registered_runs.csv", index=False)
    if "p20" in parts:
        p20_runs(reading, args.seed, scale, args.jobs).to_csv(args.out / "figure_7_1_standardised.csv", index=False)
    return 0
