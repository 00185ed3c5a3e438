"""Fit time against n on KDDCup99 with nothing else running (ERRATA F2: is the F-slope excess the load's?).

The frontier's ``F-slope-<mechanism>`` rows fit the log-log slope of the sweep's untraced fit seconds against n over
KDDCup99's three sizes of the scale profile.  In the sweep, the largest cells run first, while Yu et al.'s notebook
shares the two cores; the smaller ones run after it.  This benchmark runs the same configurations (the scale
profile's, untraced seeds ``--seeds``, every epsilon of the profile), one after another in one process
(:func:`dpkernels.sweep.call_serially`, as a worker calls them), the three sizes interleaved in a seeded order, and
judges the slope as the notebook does (:func:`dpkernels.verdicts.bound_verdict` at 1.1 with the slope's standard
error): if it holds here and not in the sweep, the sweep's excess is the load's.

A second part tests one explanation of a slope above 1 for ``rubinstein-rff``: its rule's C = sqrt(n)
(:func:`dpkernels.defaults.rubinstein_C`), under which the hinge problem changes with n.  The same estimator
(:func:`~dpkernels.experiments.frontier.task_estimator`, epsilon = 1) is fitted at 10,000 and 135,000 rows with the
rule's C and with C held at the rule's value for 10,000 rows (the rule's scale set to the ratio), seeds ``--seeds``:
if the rule's C were the cause, the fit time's ratio between the sizes would fall to about their ratio of rows
(13.5) with C held.

A third part (``--part stages``; registered in the sixteenth session, before it was run) splits the same fit into its
stages at the same two sizes, to test the two explanations left (ERRATA F2): the training matrix leaving the
processor's caches, or the solver's stages growing faster than n.  Per fit: the seconds of the whole fit, of
:func:`dpkernels.solvers.solve_hinge_primal` (the solve) and of its liblinear calls (the warm start, with their count
and iterations); the rest of the solve is the stages after the warm start (working sets, active-set polish,
certificates), the rest of the fit the features, the checks and the noise.  Two controls on the fit's own feature
matrix measure the cost per row of work that is fixed per row: one liblinear pass (the time of ``max_iter`` = 1 less
that of ``max_iter`` = 0, so without liblinear's copy of the rows and scikit-learn's checks: liblinear shrinks no row
in its first pass) and a product with the matrix (NumPy, one BLAS thread, a sequential read).  The machine's cache
sizes are recorded (at 10,000 rows the 201-column matrix takes 16 MB, at 135,000 rows 217 MB).  Decision rules,
stated before the run (sizes 10,000 and 135,000, 13.5 times the rows; seeds paired):

* **excess**: per seed, E = fit(135,000) - 13.5 fit(10,000); with a median E <= 0 there is nothing to explain and no
  stage verdict;
* **stages**: per seed, a stage's share of E is its own seconds at 135,000 less 13.5 times its seconds at 10,000,
  over E (the three stages' shares sum to 1); a stage explains the excess if its median share is at least a half;
* **the warm start's growth**: its seconds per row grow by the ratio of its iterations times the ratio of its
  seconds per row and iteration (exactly); the share of the growth (in logarithms) that the iterations carry is
  reported, the rest being costlier iterations (with shrinking, an iteration visits only the rows still active:
  recorded beside it, the shares of rows that are support vectors and free ones, which bound how many stay active);
* **memory**: consistent with the caches if both fixed-work controls cost at least 1.5 times as much per row at
  135,000 rows as at 10,000 (medians over seeds), rejected if both ratios are at most 1.2, inconclusive otherwise;
  beside it, the share of the fit's growth per row (in logarithms) the controls' growth would account for.

Writes ``benchmarks/results/fit_slope.json`` with the machine's load before and after (a measurement on a loaded
machine does not test the hypothesis); ``--part stages`` runs the third part alone and replaces its
``rubinstein_rff_stages`` in the file, keeping the other parts.

    python benchmarks/bench_fit_slope.py [--mechanisms rubinstein-rff bassily-alg3] [--seeds 1 2 3 4] [--part all|stages]
"""

from __future__ import annotations

import argparse
import contextlib
import json
import math
import os
import random
import subprocess
import time
import warnings
from contextlib import ExitStack
from pathlib import Path
from typing import Any
from unittest import mock

import numpy as np
from sklearn.exceptions import ConvergenceWarning
from sklearn.svm import LinearSVC
from threadpoolctl import threadpool_limits

import dpkernels.solvers as solvers
import dpkernels.solvers.hinge as hinge

from dpkernels import profiles, verdicts
from dpkernels.defaults import rubinstein_C
from dpkernels.experiments import frontier as F
from dpkernels.sweep import call_serially

OUT = Path(__file__).resolve().parent / "results" / "fit_slope.json"
BOUND = 1.1
#: The sizes and epsilon of the second part (C held against the rule's).
C_SIZES = (10_000, 135_000)
C_EPSILON = 1.0


def timed_fit(config: dict[str, object]) -> dict[str, float]:
    """Fit seconds of ``config["mechanism"]``'s task estimator on seed ``config["seed"]``'s ``config["n"]`` training
    rows of ``config["dataset"]``, with its rule's constant multiplied by ``config["scale"]``: the sweep's own fit
    (:func:`~dpkernels.experiments.frontier._fit_predict`, which times the call to ``fit`` alone)."""
    name, n, seed = str(config["dataset"]), int(config["n"]), int(config["seed"])  # type: ignore[call-overload]
    spec = F.DATASETS[name]
    Xtr, ytr, Xte, _ = F.load_task_data(name, n, spec.n_test, seed)
    scale = float(config["scale"])  # type: ignore[arg-type]
    fitted = F._fit_predict(F.MECHANISMS[str(config["mechanism"])], C_EPSILON, F.cell_delta(n), scale, Xtr, ytr, Xte,
                            spec, np.random.default_rng([seed, 17]))
    return {"seconds": fitted[4]}


def held_C(dataset: str, seeds: list[int]) -> dict[str, object]:
    """Median fit seconds of ``rubinstein-rff`` at :data:`C_SIZES` with the rule's C and with C held at the rule's
    value for the smaller size, and the ratio of the larger size's to the smaller's under each."""
    small = C_SIZES[0]
    out: dict[str, object] = {"sizes": list(C_SIZES), "epsilon": C_EPSILON, "C_held": rubinstein_C(small)}
    for label, scale_at in (("rule", lambda n: 1.0), ("held", lambda n: rubinstein_C(small) / rubinstein_C(n))):
        runs = [(n, call_serially(timed_fit, {"dataset": dataset, "mechanism": "rubinstein-rff", "n": n, "seed": s,
                                              "scale": scale_at(n)})[1]["seconds"]) for s in seeds for n in C_SIZES]
        med = {n: float(np.median([t for m, t in runs if m == n])) for n in C_SIZES}
        out[label] = {"median_seconds": {str(n): v for n, v in med.items()}, "ratio": med[C_SIZES[1]] / med[small]}
    return out


#: Thresholds of the memory rule (the ratio of a fixed-work pass's cost per row, 135,000 rows against 10,000).
MEMORY_CONSISTENT, MEMORY_REJECTED = 1.5, 1.2
#: Repeats of each control pass (their median is kept).
CONTROL_REPEATS = 9


def _control_passes(Phi: np.ndarray, y: np.ndarray, C: float) -> dict[str, float]:
    """Seconds per row of one liblinear pass (``max_iter`` = 1 less ``max_iter`` = 0: the pass without the copy and
    the checks) and of one product with ``Phi``, medians over :data:`CONTROL_REPEATS` repeats, one BLAS thread."""
    n = len(y)
    w = np.ones(Phi.shape[1]) / Phi.shape[1]

    def liblinear(max_iter: int) -> float:
        t0 = time.perf_counter()
        with warnings.catch_warnings():  # a fit of 0 or 1 pass does not converge, by design
            warnings.simplefilter("ignore", ConvergenceWarning)
            LinearSVC(C=C / n, loss="hinge", fit_intercept=False, dual=True, tol=1e-4, max_iter=max_iter,
                      random_state=0).fit(Phi, y)
        return time.perf_counter() - t0

    def product() -> float:
        t0 = time.perf_counter()
        Phi @ w
        return time.perf_counter() - t0

    zero = float(np.median([liblinear(0) for _ in range(CONTROL_REPEATS)]))
    one = float(np.median([liblinear(1) for _ in range(CONTROL_REPEATS)]))
    return {"liblinear_setup": zero, "liblinear_pass_per_row": (one - zero) / n,
            "product_per_row": float(np.median([product() for _ in range(CONTROL_REPEATS)])) / n}


def _ratio(a: float, b: float) -> float | None:
    """a / b, or None (JSON null) where b is not positive."""
    return a / b if b > 0 else None


def _caches() -> dict[str, str]:
    """The processor's cache sizes as Linux reports them for CPU 0 (level and type: size)."""
    out = {}
    for d in sorted(Path("/sys/devices/system/cpu/cpu0/cache").glob("index*")):
        with contextlib.suppress(OSError):
            out[f"L{(d / 'level').read_text().strip()} {(d / 'type').read_text().strip()}"] = (d / "size").read_text().strip()
    return out


def stages(dataset: str, seeds: list[int]) -> dict[str, Any]:
    """``rubinstein-rff``'s fit at :data:`C_SIZES` (epsilon :data:`C_EPSILON`, the rule's C) split into its stages,
    with the fixed-work controls on each fit's own feature matrix, and the decision rules of the module docstring."""
    runs: list[dict[str, Any]] = []
    for s in seeds:
        for n in C_SIZES:
            rec: dict[str, Any] = {"n": n, "seed": s, "solve": 0.0, "liblinear": 0.0, "liblinear_iter": 0, "calls": 0}
            kept: dict[str, Any] = {}
            solve = solvers.solve_hinge_primal

            def timed_solve(X: np.ndarray, y: np.ndarray, C: float, **kw: Any) -> Any:
                kept.update(X=X, y=y, C=C)
                t0 = time.perf_counter()
                out = solve(X, y, C, **kw)
                rec["solve"] += time.perf_counter() - t0
                upper = C / len(y)  # the duals' box [0, C/n]: support vectors and the free ones between the bounds
                rec["support_share"] = float(np.mean(out.alpha > 1e-6 * upper))
                rec["free_share"] = float(np.mean((out.alpha > 1e-6 * upper) & (out.alpha < (1 - 1e-6) * upper)))
                return out

            class TimedSVC(LinearSVC):  # the solver's warm start, timed and its iterations kept
                def fit(self, X: Any, y: Any, sample_weight: Any = None) -> "TimedSVC":
                    t0 = time.perf_counter()
                    super().fit(X, y, sample_weight)
                    rec["liblinear"] += time.perf_counter() - t0
                    rec["liblinear_iter"] += int(self.n_iter_)
                    rec["calls"] += 1
                    return self

            with ExitStack() as stack:
                stack.enter_context(mock.patch.object(solvers, "solve_hinge_primal", timed_solve))
                stack.enter_context(mock.patch.object(hinge, "LinearSVC", TimedSVC))
                rec["fit"] = call_serially(timed_fit, {"dataset": dataset, "mechanism": "rubinstein-rff", "n": n,
                                                       "seed": s, "scale": 1.0})[1]["seconds"]
            with threadpool_limits(1):
                rec.update(_control_passes(kept["X"], kept["y"], kept["C"]))
            rec["after_warm_start"] = rec["solve"] - rec["liblinear"]
            rec["outside_solve"] = rec["fit"] - rec["solve"]
            rec["liblinear_per_row_iteration"] = rec["liblinear"] / (n * max(rec["liblinear_iter"], 1))
            runs.append(rec)
    small, large = C_SIZES
    rows = large / small
    by = {(r["seed"], r["n"]): r for r in runs}
    keys = ["fit", "solve", "liblinear", "calls", "after_warm_start", "outside_solve", "liblinear_iter",
            "liblinear_per_row_iteration", "liblinear_setup", "liblinear_pass_per_row", "product_per_row",
            "support_share", "free_share"]
    medians = {k: {str(n): float(np.median([by[s, n][k] for s in seeds])) for n in C_SIZES} for k in keys}

    def ratio(k: str) -> float | None:
        return _ratio(medians[k][str(large)], medians[k][str(small)])

    stage_names = ("liblinear", "after_warm_start", "outside_solve")
    excess = [by[s, large]["fit"] - rows * by[s, small]["fit"] for s in seeds]
    out: dict[str, Any] = {"sizes": list(C_SIZES), "epsilon": C_EPSILON, "seeds": seeds, "caches": _caches(),
                           "runs": runs, "medians": medians, "excess_seconds": float(np.median(excess)),
                           "fit_ratio": ratio("fit")}
    if float(np.median(excess)) <= 0:
        out["stages"] = {"verdict": "no excess", "explains": []}
    else:
        shares = {k: float(np.median([(by[s, large][k] - rows * by[s, small][k]) / e
                                      for s, e in zip(seeds, excess) if e > 0])) for k in stage_names}
        out["stages"] = {"rule": "a stage explains the excess if its median share over the seeds is >= 0.5",
                         "excess_share": shares, "explains": [k for k, v in shares.items() if v >= 0.5]}
    growth = {k: ratio(k) for k in ("liblinear_iter", "liblinear_per_row_iteration", "support_share", "free_share")}
    per_row = _ratio(medians["liblinear"][str(large)] / large, medians["liblinear"][str(small)] / small)
    out["warm_start"] = {"per_row_ratio": per_row, **{f"{k}_ratio": v for k, v in growth.items()},
                         "iterations_log_share": (math.log(growth["liblinear_iter"]) / math.log(per_row)
                                                  if per_row and per_row > 1 and growth["liblinear_iter"] else None)}
    control = {k: ratio(k) for k in ("liblinear_pass_per_row", "product_per_row")}
    fit_per_row = (ratio("fit") or 0.0) / rows
    values = [v for v in control.values() if v is not None]
    memory = ("inconclusive" if len(values) < 2 else "consistent" if min(values) >= MEMORY_CONSISTENT else
              "rejected" if max(values) <= MEMORY_REJECTED else "inconclusive")
    out["memory"] = {"rule": f"consistent if both fixed-work ratios >= {MEMORY_CONSISTENT}, rejected if both <= "
                             f"{MEMORY_REJECTED}", "ratios": control, "fit_per_row_ratio": fit_per_row,
                     "log_share_of_fit_growth": {k: (math.log(v) / math.log(fit_per_row)
                                                     if v and v > 0 and fit_per_row > 1 else None)
                                                 for k, v in control.items()},
                     "verdict": memory}
    return out


def stages_part(dataset: str, seeds: list[int]) -> dict[str, Any]:
    """:func:`stages` after one untimed fit per size (imports and the feature cache), with the load before and
    after, the time and the code's revision (``git describe --always --dirty``)."""
    load_before = os.getloadavg()
    for n in C_SIZES:
        call_serially(timed_fit, {"dataset": dataset, "mechanism": "rubinstein-rff", "n": n, "seed": 0, "scale": 1.0})
    result = stages(dataset, seeds)
    rev = subprocess.run(["git", "describe", "--always", "--dirty"], capture_output=True, text=True,
                         cwd=Path(__file__).resolve().parent).stdout.strip()
    return {"revision": rev, "finished": time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime()),
            "load_average_before": load_before, **result, "load_average_after": os.getloadavg()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--mechanisms", nargs="+", default=["rubinstein-rff", "bassily-alg3"])
    parser.add_argument("--seeds", nargs="+", type=int, default=[1, 2, 3, 4])
    parser.add_argument("--dataset", default="kddcup99")
    parser.add_argument("--part", choices=["all", "stages"], default="all")
    args = parser.parse_args()
    if args.part == "stages":
        out = json.loads(OUT.read_text())
        out["rubinstein_rff_stages"] = stages_part(args.dataset, args.seeds)
        OUT.write_text(json.dumps(out, indent=1) + "\n")
        print(json.dumps({k: v for k, v in out["rubinstein_rff_stages"].items() if k != "runs"}, indent=1))
        return
    P = profiles.load("frontier", "scale")
    configs, _ = F.profile_configs(P)
    todo = [c for c in configs if c["dataset"] == args.dataset and c["mechanism"] in args.mechanisms
            and c["seed"] in args.seeds and c.get("scale", 1.0) == 1.0 and not F.traced(c)]
    random.Random(0).shuffle(todo)  # sizes interleaved: a drift of the machine does not line up with n
    load_before = os.getloadavg()
    for c in todo[:3]:  # imports, the feature cache, per-process caches: not counted
        call_serially(F.run_task, c)
    rows = [{**c, "fit_seconds": call_serially(F.run_task, c)[1]["fit_seconds"]} for c in todo]
    out: dict[str, object] = {"dataset": args.dataset, "seeds": args.seeds, "bound": BOUND, "runs": len(rows),
                              "load_average_before": load_before, "mechanisms": {}}
    for m in args.mechanisms:
        mine = [r for r in rows if r["mechanism"] == m]
        n = np.array([r["n_train"] for r in mine], dtype=float)
        t = np.array([r["fit_seconds"] for r in mine], dtype=float)
        s, se, dof = verdicts.slope_with_se(n, t)
        v = verdicts.bound_verdict(s, BOUND, se=se, df=dof)
        out["mechanisms"][m] = {  # type: ignore[index]
            "runs": len(mine), "slope": s, "se": se, "df": dof, "verdict": v.status, "criterion": v.criterion,
            "median_seconds": {str(int(k)): float(np.median(t[n == k])) for k in np.unique(n)}}
    out["rubinstein_rff_C"] = held_C(args.dataset, args.seeds)
    out["load_average_after"] = os.getloadavg()  # of the first two parts; the third records its own
    out["rubinstein_rff_stages"] = stages_part(args.dataset, args.seeds)
    OUT.write_text(json.dumps(out, indent=1) + "\n")
    print(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
