"""The SRHT (our fast JL for Bassily et al.'s Algorithm 2) against a dense Rademacher projection, in time.

For m rows of dimension d and several k: wall time of drawing Phi and computing Phi x for every row (``fit`` +
``transform`` of :mod:`dpkernels.jl`), median of ``--repeats`` runs that alternate which transform goes first, with
``--threads`` BLAS threads (default 1: the sweeps run one BLAS thread per task).  The SRHT computes only its k sampled
outputs (a pruned Hadamard transform, about 2 d sqrt(k) operations per row) or, when cheaper, the full fast transform
(O(d log d)); the dense matrix costs O(d k) per row and k d memory.  Target: the SRHT no slower than the dense
projection for k >= 64 at d = 32,768.  Also PrivateMarginClassifier.fit end to end
(projection="srht" and "rademacher") on data of margin 0.3.  Single timings on a shared 2-core VM vary: the
ratios within one run are the result; the machine's load is recorded.

Writes benchmarks/results/bassily2022.json.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import time
from pathlib import Path

import numpy as np
from threadpoolctl import threadpool_limits

from dpkernels.experiments.bassily2022 import margin_data
from dpkernels.jl import make_jl
from dpkernels.mechanisms import PrivateMarginClassifier


def _time(fn) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--m", type=int, default=500)
    parser.add_argument("--d", type=int, nargs="+", default=[4096, 32768])
    parser.add_argument("--k", type=int, nargs="+", default=[32, 64, 128, 512, 1024])
    parser.add_argument("--threads", type=int, default=1)
    args = parser.parse_args()
    with threadpool_limits(args.threads):
        run(args)


def run(args: argparse.Namespace) -> None:
    rng = np.random.default_rng(0)
    load_before = os.getloadavg()
    rows = []
    for d in args.d:
        X = rng.standard_normal((args.m, d))
        for k in args.k:
            times: dict[str, list[float]] = {"srht": [], "rademacher": []}
            for rep in range(args.repeats):
                order = ("srht", "rademacher") if rep % 2 == 0 else ("rademacher", "srht")
                for kind in order:
                    times[kind].append(_time(lambda: make_jl(kind, k, rep).fit(X[:1]).transform(X)))
            med = {kind: statistics.median(v) for kind, v in times.items()}
            plan = "pruned" if make_jl("srht", k, 0).fit(X[:1])._plan() is not None else "full fast transform"
            rows.append({"d": d, "m": args.m, "k": k, "srht_s": med["srht"], "rademacher_s": med["rademacher"],
                         "ratio_srht_over_dense": med["srht"] / med["rademacher"], "srht_plan": plan})
            print(rows[-1], flush=True)
    fits = []
    data = margin_data(args.m, max(args.d), 0.3, random_state=0)
    for kind in ("srht", "rademacher"):
        t = [_time(lambda: PrivateMarginClassifier(rho=0.3, data_norm=1.0, n_components=256, projection=kind,
                                                   random_state=rep).fit(data.X, data.y)) for rep in range(args.repeats)]
        fits.append({"projection": kind, "d": max(args.d), "m": args.m, "k": 256, "fit_s": statistics.median(t)})
        print(fits[-1], flush=True)
    target = [r for r in rows if r["d"] == 32768 and r["k"] >= 64]
    out = {"transforms": rows, "fit": fits, "repeats": args.repeats, "threads": args.threads,
           "target_srht_not_slower_for_k_ge_64_at_d_32768": bool(target) and all(r["ratio_srht_over_dense"] <= 1.0 for r in target),
           "load_average_before": load_before,
           "load_average_after": os.getloadavg(), "cpu_count": os.cpu_count()}
    path = Path(__file__).parent / "results" / "bassily2022.json"
    path.write_text(json.dumps(out, indent=2) + "\n")
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
