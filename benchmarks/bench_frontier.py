"""Fit time of the frontier's linear mechanisms at the full KDDCup99 size, diffprivlib's LogisticRegression beside ours.

For each mechanism: the frontier's own task (:func:`dpkernels.experiments.frontier.run_task`: the public rule's
hyper-parameters, one BLAS thread, the fit alone timed) at ``--n`` training rows and epsilon ``--epsilon``, median of
``--repeats`` runs (seeds 0, 1, ...) that alternate the order of the mechanisms.  Target (issue 22, measured in the
frontier notebook on the scale profile's runs as well): objective-perturbation logistic regression at most half of
diffprivlib's fit time.  Single timings on a shared 2-core VM vary: the ratio within one run is the result; the
machine's load is recorded.  Needs the KDDCup99 file (DPKERNELS_DATA).

Writes benchmarks/results/frontier.json.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
from pathlib import Path

from dpkernels.experiments import frontier as F
from dpkernels.sweep import call_serially

MECHANISMS = ("chaudhuri-objective-logistic", "diffprivlib-lr", "chaudhuri-output-logistic", "chaudhuri-objective-huber")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--n", type=int, default=F.DATASETS["kddcup99"].n_full)
    parser.add_argument("--epsilon", type=float, default=1.0)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    if F.available("kddcup99"):
        print(f"skipped: {F.available('kddcup99')}")
        return
    load_before = os.getloadavg()
    times: dict[str, list[float]] = {m: [] for m in MECHANISMS}
    for rep in range(args.repeats):
        order = MECHANISMS if rep % 2 == 0 else MECHANISMS[::-1]
        for m in order:
            config = {"dataset": "kddcup99", "mechanism": m, "n_train": args.n, "n_test": F.DATASETS["kddcup99"].n_test,
                      "epsilon": args.epsilon, "delta": F.DELTA, "seed": rep}
            _, result = call_serially(F.run_task, config)
            times[m].append(result["fit_seconds"])
            print(m, rep, round(result["fit_seconds"], 3), flush=True)
    med = {m: statistics.median(v) for m, v in times.items()}
    ratio = med["chaudhuri-objective-logistic"] / med["diffprivlib-lr"]
    out = {"n": args.n, "epsilon": args.epsilon, "repeats": args.repeats, "median_fit_seconds": med,
           "ratio_objective_over_diffprivlib": ratio, "target_ratio_at_most": 0.5, "target_met": ratio <= 0.5,
           "load_average_before": load_before, "load_average_after": os.getloadavg(), "cpu_count": os.cpu_count()}
    path = Path(__file__).parent / "results" / "frontier.json"
    path.write_text(json.dumps(out, indent=2) + "\n")
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
