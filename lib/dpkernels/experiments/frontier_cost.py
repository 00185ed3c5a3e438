"""The frontier's scale profile in CPU seconds, estimated from measured per-task CPU times (issue 29 item 4).

The scale profile must finish within 60 minutes on 2 cores from a cold cache.  Its sweep is every mechanism at every
(data set, n, epsilon, seed) of ``profiles.yaml`` plus the ablation (:func:`~dpkernels.experiments.frontier.
profile_configs`); the estimate is

* **per task**: the CPU seconds of one task (:func:`timed_task`: the process's CPU time around
  :func:`~dpkernels.experiments.frontier.run_task`, i.e. the rows' loading, the fit and the predictions, one BLAS
  thread as in the sweep), measured per (data set, n, mechanism, rule scale) at the epsilons of
  :data:`MEASURE_EPSILONS` (:func:`measure`) and read for every planned task at its epsilon (linear in log epsilon
  between the measured ones, :func:`estimate`).  A traced task's fit runs under ``tracemalloc`` (:func:`~dpkernels.
  experiments.frontier.traced`, slower) and is charged a traced measurement's cost; every other task an untraced one's.
  A (key, epsilon) with two or more untraced measurements (seeds 1 and 2, measured in that order before seed 0, and
  seed 0 where it is not traced) separates a one-off cost (a worker's first call, seed 1: imports, a cached
  calibration such as DP-SGD's accountant) from the per-seed cost: the smallest is charged to every untraced seed,
  the excess of the largest once per worker;
* **the rest**: a stated per-task overhead of the Dask scheduler and store (:data:`TASK_OVERHEAD`), the notebook's
  analysis and figures (measured by the caller), and the other notebooks of the profile (their measured CPU).

CPU time, unlike wall time, is little affected by the other jobs of a shared machine (cache and memory-bandwidth
contention still inflate it a little, so a loaded machine's numbers are an upper estimate); the machine's load is
recorded with every measurement.
"""

from __future__ import annotations

import contextlib
import math
import os
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

__all__ = ["MEASURE_EPSILONS", "TASK_OVERHEAD", "SWEEP_OVERHEAD", "KEY", "SPEED_PAIR", "timed_task", "measure_keys", "measure",
           "estimate", "totals", "paired_fit_times"]

#: The epsilons at which a (data set, n, mechanism, scale) is measured; others are interpolated in log epsilon.
MEASURE_EPSILONS = (0.1, 1.0, 8.0)
#: CPU seconds per task outside the task itself (Dask scheduling and serialisation, the result store's write), and
#: once per sweep (the workers' start and imports): measured on a LocalCluster of 2 worker processes, 400 and 1,600
#: cheap tasks (Adult, 1,000 rows; load 10-11), as (all processes' CPU - the tasks' own CPU) = 7.1 s + 12.9 ms per
#: task.  Measured with one fit per Dask task, before the sweep ran its cheap fits 8 to a Dask task
#: (:data:`~dpkernels.experiments.frontier.BATCH_BELOW_COST`): the scheduling and serialisation are now shared by a
#: batch's fits while the store's write (in the caller) is still one per fit, and the split between the two was not
#: measured, so :func:`totals` still charges it per fit: for the batched fits an upper estimate.
TASK_OVERHEAD = 0.013
SWEEP_OVERHEAD = 7.1
#: The columns that identify a measured cost.
KEY = ["dataset", "n_train", "mechanism", "scale"]


def timed_task(config: dict[str, Any]) -> dict[str, Any]:
    """:func:`~dpkernels.experiments.frontier.run_task` with nested parallelism serial (one BLAS thread, as in the
    sweep), and the process CPU seconds and wall seconds around it, with the 1-minute load average at its end."""
    from dpkernels.experiments.frontier import run_task
    from dpkernels.sweep import call_serially

    cpu, wall = time.process_time(), time.perf_counter()
    _, result = call_serially(run_task, config)
    return {**config, "cpu_seconds": time.process_time() - cpu, "wall_seconds": time.perf_counter() - wall,
            "fit_seconds": result["fit_seconds"], "traced": bool(result["traced"]), "load": os.getloadavg()[0]}


def measure_keys(configs: Sequence[dict[str, Any]], epsilons: Sequence[float] = MEASURE_EPSILONS,
                 repeat_below: int = 20_000) -> list[dict[str, Any]]:
    """The configurations to measure for a planned sweep: per (data set, n, mechanism, scale), at the smallest and
    largest epsilon the key runs and at those of ``epsilons`` it runs (a non-private reference: once), seeds 1
    (untraced), 2 (untraced, below ``repeat_below`` rows only: one-off and per-seed costs apart) and 0 (traced where
    :func:`~dpkernels.experiments.frontier.traced` says, an untraced cost otherwise), in that order."""
    out = []
    groups: dict[tuple, list[dict[str, Any]]] = {}
    for c in configs:
        groups.setdefault((c["dataset"], int(c["n_train"]), c["mechanism"], float(c["scale"])), []).append(c)
    for key, g in sorted(groups.items()):
        planned = sorted({float(c["epsilon"]) for c in g if c["epsilon"] is not None})
        eps_list: list[float | None] = sorted({e for e in planned if e in epsilons} | {planned[0], planned[-1]}) \
            if planned else [None]
        first = dict(g[0])
        for e in eps_list:
            for seed in ((1, 2, 0) if int(key[1]) < repeat_below else (1, 0)):
                out.append({**first, "epsilon": e, "seed": seed})
    return out


def _append(path: Path, row: dict[str, Any]) -> None:
    """Append one measurement to the CSV ``path`` under its header; a row with a column the header lacks (a file
    written before that column existed, e.g. ``traced``) rewrites the file with every column, the old rows' new
    cells empty."""
    frame = pd.DataFrame([row])
    if not path.is_file():
        frame.to_csv(path, index=False)
        return
    header = list(pd.read_csv(path, nrows=0).columns)
    if set(frame.columns) <= set(header):
        frame.reindex(columns=header).to_csv(path, mode="a", header=False, index=False)
    else:
        pd.concat([pd.read_csv(path), frame], ignore_index=True).to_csv(path, index=False)


def measure(configs: Sequence[dict[str, Any]], path: Path | str | None = None, n_jobs: int = 1,
            progress: bool = True) -> pd.DataFrame:
    """Run :func:`timed_task` on ``configs`` (most expensive first), appending each result to the CSV ``path`` (a
    rerun measures only what is missing from it); returns every measurement for ``configs``."""
    from joblib import Parallel, delayed

    from dpkernels.experiments.frontier import task_cost

    cols = [*KEY, "epsilon", "seed"]
    done = pd.read_csv(path) if path is not None and Path(path).is_file() else pd.DataFrame(columns=cols)

    def ident(c: dict[str, Any]) -> tuple:
        e = c["epsilon"]
        e = -1.0 if e is None or (isinstance(e, float) and math.isnan(e)) else float(e)
        return (c["dataset"], int(c["n_train"]), c["mechanism"], float(c["scale"]), e, int(c["seed"]))

    have = {ident(r) for r in done.to_dict("records")}
    todo = sorted((c for c in configs if ident(c) not in have), key=task_cost, reverse=True)
    bar = None
    if progress:
        from tqdm.auto import tqdm

        bar = tqdm(total=len(todo), desc="measure")
    rows = []
    for r in Parallel(n_jobs=n_jobs, return_as="generator_unordered")(delayed(timed_task)(c) for c in todo):
        rows.append(r)
        if path is not None:
            _append(Path(path), r)
        if bar is not None:
            bar.update()
    if bar is not None:
        bar.close()
    allrows = pd.concat([done, pd.DataFrame(rows)], ignore_index=True) if rows else done
    wanted = {ident(c) for c in configs}
    return allrows[[ident(r) in wanted for r in allrows.to_dict("records")]].reset_index(drop=True)


def _interpolate(points: pd.Series, eps: float) -> float:
    """The value at ``eps`` of a function measured at ``points.index`` (epsilons), linear in log epsilon, constant
    beyond the measured range."""
    x = np.log(np.asarray(points.index, dtype=float))
    order = np.argsort(x)
    return float(np.interp(math.log(eps), x[order], np.asarray(points, dtype=float)[order]))


def estimate(configs: Sequence[dict[str, Any]], measured: pd.DataFrame, workers: int = 2) -> pd.DataFrame:
    """Per planned task: its estimated CPU seconds (``cpu_seconds``: a traced seed's measured cost, or the per-seed
    cost of an untraced one, at its epsilon) and, once per worker and (key, epsilon), the one-off excess of a
    worker's first call (``one_off``).

    Per (key, epsilon) with two untraced measurements, the per-seed cost is the smaller and the one-off the excess of
    the larger; with one, it is all per-seed.  A measurement is traced as its ``traced`` column says (measurements
    without one, from before :func:`~dpkernels.experiments.frontier.traced`, traced every seed of
    ``TRACED_SEEDS``); a planned task as :func:`~dpkernels.experiments.frontier.traced` says.  A key with no
    measurement raises ``KeyError``."""
    from dpkernels.experiments.frontier import TRACED_SEEDS, traced

    m = measured.assign(_e=measured["epsilon"].fillna(-1.0).astype(float))
    legacy = m["seed"].isin(TRACED_SEEDS)
    traced_seed = m["traced"].fillna(legacy).astype(bool) if "traced" in m else legacy
    per = m[~traced_seed].groupby([*KEY, "_e"])["cpu_seconds"].agg(["min", "max", "size"])
    per["once"] = np.where(per["size"] > 1, per["max"] - per["min"], 0.0)
    per["traced"] = m[traced_seed].groupby([*KEY, "_e"])["cpu_seconds"].min()
    rows = []
    seen: set[tuple] = set()
    for c in configs:
        key = (c["dataset"], int(c["n_train"]), c["mechanism"], float(c["scale"]))
        try:
            g = per.loc[key]
        except KeyError:
            raise KeyError(f"no measurement for {key}") from None
        e = c["epsilon"]
        col = "traced" if traced(c) else "min"
        if e is None:
            cost, once = float(g[col].iloc[0]), float(g["once"].iloc[0])
        else:
            pos = g[g.index >= 0]
            points = pos[col].dropna()  # the epsilons measured traced (or untraced), not the others
            if points.empty:
                raise KeyError(f"no {'traced' if col == 'traced' else 'untraced'} measurement for {key}")
            cost, once = _interpolate(points, float(e)), _interpolate(pos["once"], float(e))
        ident = (*key, -1.0 if e is None else float(e))
        first = ident not in seen
        seen.add(ident)
        rows.append({**c, "cpu_seconds": cost, "one_off": workers * once if first else 0.0})
    return pd.DataFrame(rows)


def totals(est: pd.DataFrame, overhead: float = TASK_OVERHEAD, fixed: float = SWEEP_OVERHEAD) -> dict[str, float]:
    """The sweep's CPU seconds: tasks, one-off costs and the overhead (per task and per sweep), and their sum."""
    tasks = float(est["cpu_seconds"].sum())
    once = float(est["one_off"].sum())
    over = overhead * len(est) + fixed
    return {"tasks": len(est), "task_cpu": tasks, "one_off_cpu": once, "overhead_cpu": over,
            "sweep_cpu": tasks + once + over}


#: The pair of :func:`paired_fit_times`: our objective perturbation and diffprivlib's, the same mechanism (issue 27).
SPEED_PAIR = ("chaudhuri-objective-logistic", "diffprivlib-lr")


def paired_fit_times(dataset: str = "kddcup99", epsilon: float = 1.0, repeats: int = 5, threads: int | None = 1,
                     seed: int = 0, pair: Sequence[str] = SPEED_PAIR) -> pd.DataFrame:
    """Wall seconds of ``fit`` alone (no ``tracemalloc``, the estimator built beforehand) of the two frontier rows
    ``pair`` at the data set's full training size (seed ``seed``'s training rows), at the same epsilon and the same
    public rule's regulariser, alternating their order over ``repeats`` rounds, with ``threads`` BLAS threads
    (None: the library's default).  One row per (round, mechanism), with the 1-minute load average after it.  Issue
    27's target: objective perturbation at most half of diffprivlib's time, with one BLAS thread and with default
    threads."""
    from threadpoolctl import threadpool_limits

    from dpkernels.experiments.frontier import DATASETS, DELTA, MECHANISMS, load_task_data

    spec = DATASETS[dataset]
    X, y, _, _ = load_task_data(dataset, spec.n_full, spec.n_test, seed)
    info = {"n": len(y), "d": X.shape[1], "K": len(spec.classes), "dataset": dataset, "task": spec.task,
            "delta": DELTA, "scale": 1.0}
    rows = []
    with threadpool_limits(threads) if threads is not None else contextlib.nullcontext():
        for r in range(int(repeats)):
            for name in (pair if r % 2 == 0 else tuple(reversed(pair))):
                mech = MECHANISMS[name]
                params = mech.params(float(epsilon), info)
                est = mech.build(params, float(epsilon), 0.0, info, np.random.default_rng([seed, r]))
                start = time.perf_counter()
                est.fit(X, y)
                rows.append({"round": r, "mechanism": name, "seconds": time.perf_counter() - start,
                             "threads": "default" if threads is None else int(threads), "n": len(y), "d": X.shape[1],
                             "epsilon": float(epsilon), "load": os.getloadavg()[0]})
    return pd.DataFrame(rows)

