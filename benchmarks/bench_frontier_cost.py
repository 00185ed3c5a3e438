"""CPU estimate of the frontier's scale profile from per-task CPU times measured on this machine (issue 29 item 4).

Measures one task per (data set, n, mechanism, rule scale) at the epsilons of
:data:`dpkernels.experiments.frontier_cost.MEASURE_EPSILONS` (seeds 0 and 1 below 20,000 rows), appending to
``benchmarks/results/frontier_cost_measured.csv`` (a rerun measures only what is missing; delete a mechanism's rows
to remeasure it), then estimates every planned task of the profile and writes
``benchmarks/results/frontier_cost.json`` (totals) and ``frontier_cost_by_mechanism.csv``.  CPU seconds, one BLAS
thread per task as in the sweep; the load average is recorded with each measurement.  ``--other-cpu`` adds the CPU
seconds of the profile's other notebooks (yu2020's scale run without its registered variants, which a command of
their own runs: about 492 s, its eight grids timed one after another in one process on 2026-11-27).

    python benchmarks/bench_frontier_cost.py --profile scale [--jobs 1] [--estimate-only]
"""

from __future__ import annotations

import argparse
import json
import os
import time
from pathlib import Path

import pandas as pd

from dpkernels import profiles
from dpkernels.experiments import frontier as F
from dpkernels.experiments import frontier_cost as C

RESULTS = Path(__file__).parent / "results"


def _measured_by_cell(measured: pd.DataFrame) -> dict[str, dict[str, float]]:
    """Per (data set, n): the measured tasks' wall seconds over their CPU seconds (sums) and the median load they
    ran under: one task at a time, so a ratio near 1 at a low load says the tasks do not wait off the CPU when alone."""
    out = {}
    for (d, n), g in measured.groupby(["dataset", "n_train"]):
        ratio = float(g["wall_seconds"].sum() / g["cpu_seconds"].sum())
        out[f"{d}:{n}"] = {"tasks": int(len(g)), "wall_over_cpu": round(ratio, 3),
                           "load_median": round(float(g["load"].median()), 2)}
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--profile", default="scale")
    parser.add_argument("--jobs", type=int, default=1)
    parser.add_argument("--estimate-only", action="store_true", help="use the measurements already in the CSV")
    parser.add_argument("--other-cpu", type=float, default=492.0, help="CPU seconds of the profile's other notebooks")
    parser.add_argument("--analysis-cpu", type=float, default=0.0, help="CPU seconds of the notebook's analysis")
    args = parser.parse_args()
    P = profiles.load("frontier", args.profile, None)
    missing = {ds: F.available(ds) for ds in P["datasets"]}
    if any(missing.values()):
        raise SystemExit(f"data missing: {missing}")
    configs, ablation = F.profile_configs(P)
    planned = configs + ablation
    path = RESULTS / "frontier_cost_measured.csv"
    keys = C.measure_keys(planned)
    load_before = os.getloadavg()
    features_cpu = {}
    for ds in P["datasets"]:  # the public features, built once per run (a cold cache builds them: counted)
        start = time.process_time()
        F._population(ds)
        features_cpu[ds] = round(time.process_time() - start, 2)
    if args.estimate_only:
        measured = pd.read_csv(path)
    else:
        measured = C.measure(keys, path, n_jobs=args.jobs)
    est = C.estimate(planned, measured, workers=P["n_jobs"])
    tot = C.totals(est)
    by_mech = est.groupby("mechanism").agg(tasks=("cpu_seconds", "size"), cpu_seconds=("cpu_seconds", "sum"),
                                           one_off=("one_off", "sum")).sort_values("cpu_seconds", ascending=False)
    by_mech.to_csv(RESULTS / "frontier_cost_by_mechanism.csv")
    by_cell = est.groupby(["dataset", "n_train"]).agg(tasks=("cpu_seconds", "size"), cpu_seconds=("cpu_seconds", "sum"),
                                                      seeds=("seed", "nunique"))
    first = est[(est["seed"] == 1) & (est["scale"] == 1.0)]  # one untraced seed's fits per (data set, n, epsilon)
    per_seed = first.groupby(["dataset", "n_train", "epsilon"])["cpu_seconds"].sum().rename("cpu_per_seed")
    per_seed.reset_index().merge(by_cell["seeds"].reset_index(), on=["dataset", "n_train"]).to_csv(
        RESULTS / "frontier_cost_by_cell.csv", index=False)
    total = tot["sweep_cpu"] + sum(features_cpu.values()) + args.analysis_cpu + args.other_cpu
    out = {"profile": args.profile, **tot, "features_cpu": features_cpu, "analysis_cpu": args.analysis_cpu, "other_notebooks_cpu": args.other_cpu,
           "total_cpu": total, "cores": 2, "wall_lower_bound_seconds": total / 2.0,
           "measurements": len(measured), "measured_load_median": float(measured["load"].median()),
           "load_average_before": load_before, "load_average_after": os.getloadavg(),
           "by_cell": {f"{d}:{n}": round(v, 1) for (d, n), v in by_cell["cpu_seconds"].items()},
           "measured_by_cell": _measured_by_cell(measured)}
    (RESULTS / "frontier_cost.json").write_text(json.dumps(out, indent=1) + "\n")
    print(by_mech.round(1).to_string())
    print(by_cell.round(1).to_string())
    print(json.dumps({k: v for k, v in out.items() if k != "by_cell"}, indent=1))


if __name__ == "__main__":
    main()
