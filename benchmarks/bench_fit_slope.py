"""Fit time against n on KDDCup99 with nothing else running (ERRATA F2: is the F-slope excess the load's?).

The frontier's ``F-slope-<mechanism>`` rows fit the log-log slope of the sweep's untraced fit seconds against n over
KDDCup99's three sizes of the scale profile.  In the sweep, the largest cells run first, while Yu et al.'s notebook
shares the two cores; the smaller ones run after it.  This benchmark runs the same configurations (the scale
profile's, untraced seeds ``--seeds``, every epsilon of the profile), one after another in one process
(:func:`dpkernels.sweep.call_serially`, as a worker calls them), the three sizes interleaved in a seeded order, and
judges the slope as the notebook does (:func:`dpkernels.verdicts.bound_verdict` at 1.1 with the slope's standard
error): if it holds here and not in the sweep, the sweep's excess is the load's.

Writes ``benchmarks/results/fit_slope.json`` with the machine's load before and after (a measurement on a loaded
machine does not test the hypothesis).

    python benchmarks/bench_fit_slope.py [--mechanisms rubinstein-rff bassily-alg3] [--seeds 1 2 3 4]
"""

from __future__ import annotations

import argparse
import json
import os
import random
from pathlib import Path

import numpy as np

from dpkernels import profiles, verdicts
from dpkernels.experiments import frontier as F
from dpkernels.sweep import call_serially

OUT = Path(__file__).resolve().parent / "results" / "fit_slope.json"
BOUND = 1.1


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--mechanisms", nargs="+", default=["rubinstein-rff", "bassily-alg3"])
    parser.add_argument("--seeds", nargs="+", type=int, default=[1, 2, 3, 4])
    parser.add_argument("--dataset", default="kddcup99")
    args = parser.parse_args()
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
    out["load_average_after"] = os.getloadavg()
    OUT.write_text(json.dumps(out, indent=1) + "\n")
    print(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
