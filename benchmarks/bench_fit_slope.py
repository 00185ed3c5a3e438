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
    out["rubinstein_rff_C"] = held_C(args.dataset, args.seeds)
    out["load_average_after"] = os.getloadavg()
    OUT.write_text(json.dumps(out, indent=1) + "\n")
    print(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
