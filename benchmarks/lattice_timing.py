"""Running time of the lattice samplers against the magnitude of the noise they return (issue 26.5).

Jin, Weber, Goldberg, Papernot et al. ("Are we there yet? Timing side-channel attacks on discrete differential privacy
samplers", IEEE S&P 2022) recovered discrete Laplace and Gaussian noise from the running time of rejection and
geometric samplers, whose loops run longer for larger outputs.  :mod:`dpkernels.lattice` has no such loop: a release
computes float64 balls around the exact real noise in vectorised numpy, and only when a ball straddles a cell of the
release grid does it draw more random words and recompute the cells in mpmath ("refinement", the slow path).

Two measurements:

1. **Timing** (``--draws`` single-coordinate releases per sampler, one generator, samplers interleaved in chunks, the
   machine's load recorded before and after): per call the wall time (``perf_counter_ns``), the magnitude of the
   returned noise in units of its scale (|x| / scale; ||b|| beta for the Gamma-norm noise; the selected candidate for
   the exponential mechanism) and whether the call refined (calls of ``_Uniforms.interval``, which every refinement
   and only a refinement makes).  Reported: Spearman's correlation of time and magnitude on the fast path, the median
   time per magnitude decile (fast path), the refinement count and the slow path's median time.
2. **Refinement probability against the magnitude** (exact, no timing): for a noise value of magnitude t and a centre
   c, the release refines iff the float ball of c + noise (the library's own ball arithmetic, from the random words
   that give that t) comes within its radius of a cell boundary; for the fractional position of c + noise in its cell
   uniform, that happens with probability min(1, 2 rad / g).  Tabulated for t up to 40 and c / scale in {0, 1e2, 1e4},
   and averaged over the noise law (the chance that a release takes the slow path at all).  The slow path's own cost
   is timed on releases around a centre so far from 0 that about half of them refine.

Run: ``python benchmarks/lattice_timing.py [--draws N]``; writes ``benchmarks/results/lattice_timing.json`` and
``benchmarks/results/lattice_timing.csv`` (the deciles) and prints the statement.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pandas as pd
from scipy import stats

from dpkernels import lattice as L

RESULTS = Path(__file__).parent / "results"
CHUNK = 2_000
CENTRES = (0.0, 1e2, 1e4)
MAGNITUDES = (0.01, 0.5, 1.0, 2.0, 5.0, 10.0, 15.0, 20.0, 25.0, 30.0, 35.0, 40.0)


class RefinementCounter:
    """Counts calls of ``_Uniforms.interval`` (made by every refinement, and only by one)."""

    def __init__(self) -> None:
        self.calls = 0
        self._orig = L._Uniforms.interval

    def __enter__(self) -> "RefinementCounter":
        orig = self._orig

        def counted(u: object, i: int, level: int, iv: object) -> object:
            self.calls += 1
            return orig(u, i, level, iv)

        L._Uniforms.interval = counted
        return self

    def __exit__(self, *exc: object) -> None:
        L._Uniforms.interval = self._orig


UTILITIES = np.arange(10, dtype=np.float64)  # the exponential mechanism's candidates (public scores 0..9)
SAMPLERS: dict[str, Callable[[np.random.Generator], float]] = {
    "laplace_lattice": lambda rng: abs(float(L.laplace_lattice(np.zeros(1), 1.0, rng)[0])),
    "gaussian_lattice": lambda rng: abs(float(L.gaussian_lattice(np.zeros(1), 1.0, rng)[0])),
    "gamma_norm_lattice (d=5)": lambda rng: float(np.linalg.norm(L.gamma_norm_lattice(np.zeros(5), 1.0, rng))),
    "gamma_norm_enclosure (d=5)": lambda rng: float(np.linalg.norm(L.gamma_norm_enclosure(1, 5, 1.0, rng)[0])),
    "exponential_mechanism_exact (10)": lambda rng: float(L.exponential_mechanism_exact(UTILITIES, 1.0, 1.0, rng)),
}


def time_samplers(draws: int, seed: int) -> dict[str, pd.DataFrame]:
    rng = np.random.default_rng(seed)
    rows: dict[str, list[tuple[int, float, int]]] = {k: [] for k in SAMPLERS}
    with RefinementCounter() as counter:
        for name, fn in SAMPLERS.items():  # warm-up (imports, caches)
            for _ in range(200):
                fn(rng)
        for _ in range(0, draws, CHUNK):
            for name, fn in SAMPLERS.items():
                out = rows[name]
                for _ in range(CHUNK):
                    before = counter.calls
                    t0 = time.perf_counter_ns()
                    mag = fn(rng)
                    t1 = time.perf_counter_ns()
                    out.append((t1 - t0, mag, counter.calls - before))
    return {k: pd.DataFrame(v, columns=["ns", "magnitude", "interval_calls"]) for k, v in rows.items()}


def slow_path_timing(draws: int, seed: int) -> dict[str, float]:
    """The slow path's cost: Laplace releases around a centre 2^44 grid steps from 0 (c = 2^28 scales), where the
    float ball of c + noise is about a cell wide, so that about half of the calls refine."""
    rng = np.random.default_rng(seed)
    centre = np.full(1, 2.0**44 * L.grid_for(1.0))
    ns, refined = [], []
    with RefinementCounter() as counter:
        for _ in range(draws):
            before = counter.calls
            t0 = time.perf_counter_ns()
            L.laplace_lattice(centre, 1.0, rng)
            ns.append(time.perf_counter_ns() - t0)
            refined.append(counter.calls > before)
    ns_a, ref = np.array(ns), np.array(refined)
    return {"calls": draws, "refined": int(ref.sum()), "fast_median_us": float(np.median(ns_a[~ref]) / 1e3),
            "slow_median_us": float(np.median(ns_a[ref]) / 1e3),
            "slow_over_fast": float(np.median(ns_a[ref]) / np.median(ns_a[~ref]))}


def summarise(name: str, df: pd.DataFrame) -> tuple[dict[str, object], pd.DataFrame]:
    fast = df[df.interval_calls == 0]
    slow = df[df.interval_calls > 0]
    rho, p = stats.spearmanr(fast.ns, fast.magnitude)
    if name.startswith("exponential"):
        bins = fast.assign(bin=fast.magnitude.astype(int))
    else:
        bins = fast.assign(bin=pd.qcut(fast.magnitude, 10, labels=False, duplicates="drop"))
    table = bins.groupby("bin").agg(magnitude_low=("magnitude", "min"), magnitude_high=("magnitude", "max"),
                                    calls=("ns", "size"), median_us=("ns", lambda s: s.median() / 1e3),
                                    p90_us=("ns", lambda s: s.quantile(0.9) / 1e3)).reset_index()
    table.insert(0, "sampler", name)
    med = table.median_us.to_numpy()
    summary = {
        "draws": int(len(df)), "fast_calls": int(len(fast)), "refined_calls": int(len(slow)),
        "fast_median_us": float(fast.ns.median() / 1e3),
        "slow_median_us": float(slow.ns.median() / 1e3) if len(slow) else None,
        "spearman_time_magnitude_fast": float(rho), "spearman_p": float(p),
        "decile_median_us_min": float(med.min()), "decile_median_us_max": float(med.max()),
        "top_over_bottom_decile_median": float(med[-1] / med[0]),
        "refined_magnitudes": [float(x) for x in slow.magnitude.head(20)],
    }
    return summary, table


def _uniform_ball(U: np.ndarray) -> L._Ball:
    """The library's float ball of uniforms whose first random word is floor(U 2^64)."""
    u = L._Uniforms(np.random.default_rng(0), 0)
    u.words = np.minimum(np.floor(np.asarray(U) * 2.0**64), 2.0**64 - 2048).astype(np.uint64)
    return u.ball()


def refinement_probability(sampler: str, t: np.ndarray, centre: float) -> np.ndarray:
    """min(1, 2 rad / g) for a release of noise magnitude ``t`` (scale 1) around ``centre``: the chance it refines
    when the fractional position of centre + noise in its cell is uniform (Laplace: U = e^-t; Gaussian: the
    Box-Muller radius sqrt(-2 log U1) = t at angle 0; Gamma-norm (d = 5): five equal -log U_j = t / 5 and the
    direction of the first axis)."""
    g = L.grid_for(1.0)
    t = np.asarray(t, dtype=np.float64)
    c = L._Ball.exact(np.full(t.shape, centre))
    if sampler == "laplace":
        noise = _uniform_ball(np.exp(-t)).neg_log()
    elif sampler == "gaussian":
        U1 = _uniform_ball(np.exp(-t * t / 2.0))
        r = U1.neg_log().scale(2.0).sqrt()
        noise = r * _uniform_ball(np.full(t.shape, 2.0**-60)).cos_2pi()
    elif sampler == "gamma_norm":
        d = 5
        U = _uniform_ball(np.repeat(np.exp(-t / d)[:, None], d, axis=1).ravel())
        radius = L._Ball(U.mid.reshape(-1, d), U.rad.reshape(-1, d)).neg_log().sum(axis=1)
        z = L._Ball(np.ones_like(t), np.zeros_like(t))  # the direction (1, 0, ..., 0) exactly: the norm's share
        noise = radius * z
    else:
        raise ValueError(sampler)
    total = c + noise
    return np.minimum(1.0, 2.0 * total.rad / g)


def expected_refinement(sampler: str, centre: float, n: int = 400_000, seed: int = 1) -> float:
    """The probability that a release takes the slow path at all, averaged over the noise law (Monte Carlo over t)."""
    rng = np.random.default_rng(seed)
    if sampler == "laplace":
        t = rng.exponential(size=n)
    elif sampler == "gaussian":
        t = np.sqrt(rng.chisquare(2, size=n))  # the Box-Muller radius
    else:
        t = rng.gamma(5, size=n)
    return float(refinement_probability(sampler, t, centre).mean())


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--draws", type=int, default=100_000)
    ap.add_argument("--seed", type=int, default=20261127)
    args = ap.parse_args()
    out: dict[str, object] = {"load_average_before": list(os.getloadavg()), "cpus": os.cpu_count(),
                              "python": sys.version.split()[0], "numpy": np.__version__, "draws": args.draws}
    t0 = time.time()
    frames = time_samplers(args.draws, args.seed)
    out["timing_wall_s"] = time.time() - t0
    out["load_average_after"] = list(os.getloadavg())
    summaries, tables = {}, []
    for name, df in frames.items():
        summaries[name], table = summarise(name, df)
        tables.append(table)
        s = summaries[name]
        print(f"{name:34s} fast median {s['fast_median_us']:7.1f} us, deciles {s['decile_median_us_min']:.1f}-"
              f"{s['decile_median_us_max']:.1f} us (top/bottom {s['top_over_bottom_decile_median']:.3f}), Spearman "
              f"{s['spearman_time_magnitude_fast']:+.4f} (p {s['spearman_p']:.2g}); refined {s['refined_calls']} of "
              f"{s['draws']}" + (f", slow median {s['slow_median_us']:.0f} us" if s["slow_median_us"] else ""),
              flush=True)
    out["timing"] = summaries
    out["slow_path"] = slow = slow_path_timing(2_000, args.seed + 1)
    print(f"slow path (Laplace, centre 2^44 grid steps): {slow['refined']} of {slow['calls']} refined, median "
          f"{slow['slow_median_us']:.0f} us against {slow['fast_median_us']:.0f} us ({slow['slow_over_fast']:.0f}x)",
          flush=True)
    curves = {}
    for sampler in ("laplace", "gaussian", "gamma_norm"):
        curves[sampler] = {
            f"centre/scale={c:g}": {
                "by_magnitude": dict(zip(map(str, MAGNITUDES),
                                         refinement_probability(sampler, np.array(MAGNITUDES), c).tolist())),
                "expected_over_noise": expected_refinement(sampler, c)}
            for c in CENTRES}
        for c in CENTRES:
            row = curves[sampler][f"centre/scale={c:g}"]
            print(f"refinement probability {sampler:10s} centre {c:>7g}: expected {row['expected_over_noise']:.2e}; "
                  + ", ".join(f"t={k}: {v:.1e}" for k, v in row["by_magnitude"].items()), flush=True)
    out["refinement_probability"] = curves
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "lattice_timing.json").write_text(json.dumps(out, indent=2) + "\n")
    pd.concat(tables).to_csv(RESULTS / "lattice_timing.csv", index=False, float_format="%.6g")
    print(f"load average {out['load_average_before']} -> {out['load_average_after']}; "
          f"wrote {RESULTS / 'lattice_timing.json'} and lattice_timing.csv")


if __name__ == "__main__":
    main()
