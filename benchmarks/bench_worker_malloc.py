"""The frontier's largest fits under four settings of glibc's allocator (``dpkernels.sweep.WORKER_MALLOC_ENV``).

A worker of the sweep's local Dask cluster used to start with Dask's default environment, which trims the heap above
64 KiB (``MALLOC_TRIM_THRESHOLD_=65536``); glibc also maps large blocks apart and unmaps them when freed.  Every large
fit's arrays then come back from the kernel as fresh pages, faulted in and zeroed again.  This benchmark runs the
same tasks of the scale profile (seed 1, epsilon 1, every mechanism at KDDCup99's 135,000 rows and shuttle's 50,000:
``--epsilon``, ``--seed``), one after another in a fresh process, on a thread other than the main one as a Dask
worker runs its tasks (``dpkernels.sweep.call_serially``, one BLAS thread), under each setting:

* ``dask-default``: Dask's worker setting (the sweep's before commit 80cc019);
* ``glibc-default``: no setting;
* ``no-arena-limit``: the thresholds without ``MALLOC_ARENA_MAX`` (the sweep's from 80cc019 to 58ad7f1, the scale
  reference's of 678d9b9): a thread's arena still maps blocks above 64 MiB apart;
* ``worker``: :data:`dpkernels.sweep.WORKER_MALLOC_ENV` (the sweep's now).

Per setting: the tasks' wall seconds, their fit seconds (``fit_seconds``, the call to ``fit`` alone), the process's
user and system CPU seconds and its minor page faults, with the machine's load; the predictions' digests must agree
across settings (the same bytes).  Writes ``benchmarks/results/worker_malloc.json``.

    python benchmarks/bench_worker_malloc.py [--seed 1] [--epsilon 1.0]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

from dpkernels.sweep import WORKER_MALLOC_ENV

OUT = Path(__file__).resolve().parent / "results" / "worker_malloc.json"
#: The cells whose fits are the frontier's largest (training rows).
CELLS = {"kddcup99": 135_000, "shuttle": 50_000}
SETTINGS = {"dask-default": {"MALLOC_TRIM_THRESHOLD_": "65536"}, "glibc-default": {},
            "no-arena-limit": {k: v for k, v in WORKER_MALLOC_ENV.items() if k != "MALLOC_ARENA_MAX"},
            "worker": WORKER_MALLOC_ENV}


def child(seed: int, epsilon: float) -> dict[str, object]:
    """Run the cells' tasks in this process (after one untimed task: imports, the features) and measure them."""
    from dpkernels import profiles
    from dpkernels.experiments import frontier as F
    from dpkernels.sweep import call_serially

    configs, _ = F.profile_configs(profiles.load("frontier", "scale"))
    todo = [c for c in configs if c["seed"] == seed and c["epsilon"] in (epsilon, None)
            and CELLS.get(c["dataset"]) == c["n_train"] and c["scale"] == 1.0]
    out: dict[str, Any] = {}

    def work() -> None:  # on a thread, as a Dask worker's executor runs a task
        call_serially(F.run_task, todo[0])
        before, t0 = resource.getrusage(resource.RUSAGE_SELF), time.perf_counter()
        out["results"] = [call_serially(F.run_task, c)[1] for c in todo]
        out["wall"], out["before"], out["after"] = (time.perf_counter() - t0, before,
                                                    resource.getrusage(resource.RUSAGE_SELF))

    thread = threading.Thread(target=work)
    thread.start()
    thread.join()
    results, wall, before, after = out["results"], out["wall"], out["before"], out["after"]
    return {"tasks": len(todo), "wall_seconds": wall, "fit_seconds": sum(r["fit_seconds"] for r in results),
            "user_seconds": after.ru_utime - before.ru_utime, "system_seconds": after.ru_stime - before.ru_stime,
            "minor_page_faults": after.ru_minflt - before.ru_minflt,
            "digests": [r["pred_digest"] for r in results]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--epsilon", type=float, default=1.0)
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(child(args.seed, args.epsilon)))
        return
    base = {k: v for k, v in os.environ.items() if not k.startswith("MALLOC_")}
    base.update(OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1", MKL_NUM_THREADS="1")
    out: dict[str, object] = {"seed": args.seed, "epsilon": args.epsilon, "cells": CELLS,
                              "worker_malloc_env": WORKER_MALLOC_ENV, "load_average_before": os.getloadavg(),
                              "settings": {}}
    digests = {}
    for name, env in SETTINGS.items():
        proc = subprocess.run([sys.executable, __file__, "--child", "--seed", str(args.seed), "--epsilon",
                               str(args.epsilon)], env={**base, **env}, capture_output=True, text=True, check=True)
        res = json.loads(proc.stdout.strip().splitlines()[-1])
        digests[name] = res.pop("digests")
        out["settings"][name] = {"environment": env, **res}  # type: ignore[index]
        print(name, res, flush=True)
    out["same_predictions"] = len({tuple(d) for d in digests.values()}) == 1
    s = out["settings"]  # type: ignore[assignment]
    out["worker_over_dask_default_wall"] = s["worker"]["wall_seconds"] / s["dask-default"]["wall_seconds"]
    out["load_average_after"] = os.getloadavg()
    OUT.write_text(json.dumps(out, indent=1) + "\n")
    print(json.dumps({k: v for k, v in out.items() if k != "settings"}, indent=1))


if __name__ == "__main__":
    main()
