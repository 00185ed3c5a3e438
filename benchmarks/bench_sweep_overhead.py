"""Where the frontier sweep's time goes outside the fits (ERRATA F1: the scale profile's hour).

A seeded sample of the scale profile's untraced tasks (default 1,000 of those up to 3,000 training rows, where most
of the 30,671 tasks are) runs twice:

* in this process, one after another (:func:`dpkernels.sweep.call_serially`, as a Dask worker calls each task): its
  CPU seconds and the fits' own seconds; then the first ``--profiled`` of them again under ``cProfile``, for the
  cumulative seconds per task of steps outside the fit (the rows' loading, ``threadpoolctl``'s limit,
  ``inspect.signature`` as scikit-learn's parameter machinery calls it; profiled, so slowed);
* through :func:`dpkernels.sweep.run_sweep` on a Dask LocalCluster of 2 worker processes (the scale profile's
  scheduler, with the frontier's batching of cheap tasks, ``dask_tasks`` Dask tasks): its wall time x 2 cores, the
  CPU of this process (the scheduler and the store) and the fits' seconds.

Writes ``benchmarks/results/sweep_overhead.json`` with the machine's load before and after.  CPU and wall seconds on
a shared machine: meaningful beside the load.

    python benchmarks/bench_sweep_overhead.py [--tasks 1000] [--max-rows 3000]
"""

from __future__ import annotations

import argparse
import cProfile
import json
import os
import pstats
import random
import tempfile
import time
from pathlib import Path

from dpkernels import profiles
from dpkernels.experiments import frontier as F
from dpkernels.sweep import ResultStore, batches, call_serially, run_sweep

OUT = Path(__file__).resolve().parent / "results" / "sweep_overhead.json"
#: Steps outside the fit, as (label, substring of the profiled function's "file:line(name)").
STEPS = {"rows": "frontier.py:{}(load_task_data)", "threadpool_limits": "threadpoolctl.py:{}(_load_libraries)",
         "inspect_signature": "inspect.py:{}(signature)"}


def _cumulative(stats: pstats.Stats, needle: str) -> float:
    """Cumulative seconds of the profiled functions whose "file:line(name)" matches ``needle`` ({} any line)."""
    head, tail = needle.split("{}")
    total = 0.0
    for (file, line, name), (_, _, _, cum, _) in stats.stats.items():  # type: ignore[attr-defined]
        where = f"{os.path.basename(file)}:{line}({name})"
        if where.startswith(head) and where.endswith(tail):
            total += cum
    return total


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--tasks", type=int, default=1000)
    parser.add_argument("--max-rows", type=int, default=3000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--profiled", type=int, default=300, help="tasks of the profiled pass (the steps' shares)")
    args = parser.parse_args()
    P = profiles.load("frontier", "scale")
    configs, _ = F.profile_configs(P)
    pool = [c for c in configs if c["n_train"] <= args.max_rows and not F.traced(c)]
    sample = random.Random(args.seed).sample(pool, args.tasks)
    load_before = os.getloadavg()
    for c in sample[:20]:  # imports and per-process caches (a worker's first calls), not counted
        call_serially(F.run_task, c)
    cpu0, fit = time.process_time(), 0.0
    for c in sample:
        fit += call_serially(F.run_task, c)[1]["fit_seconds"]
    cpu_serial = time.process_time() - cpu0
    profiled = sample[: args.profiled]  # the steps' shares, from a profiled pass (cProfile slows Python-heavy code)
    prof = cProfile.Profile()
    prof.enable()
    for c in profiled:
        call_serially(F.run_task, c)
    prof.disable()
    stats = pstats.Stats(prof)
    steps = {k: _cumulative(stats, v) for k, v in STEPS.items()}
    with tempfile.TemporaryDirectory() as d:
        t0, own0 = time.perf_counter(), time.process_time()
        df = run_sweep(F.run_task, sample, ResultStore(d), n_jobs=2, scheduler="local", progress=False,
                       cost=F.task_cost, batch_below=F.BATCH_BELOW_COST, batch_size=F.BATCH_SIZE)
        wall, own = time.perf_counter() - t0, time.process_time() - own0
    n = len(sample)
    out = {"tasks": n, "max_rows": args.max_rows, "population": len(pool), "seed": args.seed,
           "serial_cpu_seconds": cpu_serial, "serial_fit_seconds": fit,
           "serial_outside_fit_ms_per_task": 1e3 * (cpu_serial - fit) / n,
           "profiled_tasks": len(profiled),
           "profiled_steps_ms_per_task": {k: 1e3 * v / len(profiled) for k, v in steps.items()},
           "dask_batch_below": F.BATCH_BELOW_COST, "dask_batch_size": F.BATCH_SIZE,
           "dask_tasks": len(batches(sorted(sample, key=F.task_cost, reverse=True), F.task_cost, F.BATCH_BELOW_COST,
                                     F.BATCH_SIZE)),
           "dask_wall_seconds": wall, "dask_core_seconds": 2 * wall, "dask_caller_cpu_seconds": own,
           "dask_fit_seconds": float(df["fit_seconds"].sum()),
           "dask_extra_ms_per_task": 1e3 * (2 * wall - cpu_serial) / n,
           "load_average_before": load_before, "load_average_after": os.getloadavg()}
    OUT.write_text(json.dumps(out, indent=1) + "\n")
    print(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
