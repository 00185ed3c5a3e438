"""The scale profile's whole runs, their times and timed checks, read from their outputs (ERRATA F1 and F2 quote them).

Two tables, each written from files, never typed:

* ``benchmarks/results/scale_runs.csv``: one row per whole ``make reproduce PROFILE=scale`` run (both notebooks):
  its times and timed checks, and from the runs that recorded them the fits' CPU seconds, the machine's busy and
  stolen CPU seconds over the sweep, the fits' wall over CPU seconds beside Yu et al.'s notebook and after it
  (:func:`beside`), the slopes of CPU seconds against n (:func:`cpu_slopes`) and the outcomes of H-F1-contention
  and H-F1-wait (:func:`contention`, :func:`wait_outcome`); added by :func:`dpkernels.reference.update_reference`
  when it copies such a run into the reference (:func:`add_run`, from the build folder, which is not kept: the rows of earlier runs stay as they were read; a run
  that was not copied can be added with ``python -m dpkernels.scale_runs --build DIR``).
* ``benchmarks/results/scale_references.csv``: one row per committed scale reference of the frontier
  (``python -m dpkernels.scale_runs --history``, after the reference's commit), read from the repository's history:
  every commit that changed ``paper_figures/frontier/checks.csv`` with an hour's ``F-time`` target, its ``F-time`` row
  (the notebook's seconds, the sweep's wall and fit seconds, in its detail), the whole run's wall seconds
  (``timings_scale.csv``'s, where that commit changed them: a run of the frontier alone keeps the last whole run's),
  the fits' CPU seconds where its ``run.csv`` has them, the log-log slopes of rubinstein-rff's and bassily-alg3's
  fit seconds against n (rows ``F-slope-*``) and objective perturbation's fit time against diffprivlib's (row
  ``F-objective-vs-diffprivlib``, with the two medians of its detail).

Both read the same layout: a build folder's ``scale/`` and the repository's tree at a commit hold
``paper_figures/frontier/{checks,run,runs}.csv`` and ``benchmarks/results/timings_scale.csv``.

    python -m dpkernels.scale_runs --build /tmp/clone/build [--note TEXT]
    python -m dpkernels.scale_runs --history
"""

from __future__ import annotations

import argparse
import io
import json
import math
import re
import subprocess
from collections.abc import Callable
from pathlib import Path

import pandas as pd

__all__ = ["RUNS", "REFERENCES", "SLOPES", "HOUR", "CONTENTION_GAP", "ALONE_RATIO", "STEAL_SHARE", "contention",
           "WAIT_BESIDE", "WAIT_AFTER", "CPU_STABLE", "CPU_RUN", "wait_outcome", "beside", "cpu_slopes", "run_row",
           "add_run", "reference_row", "history", "main"]

#: The tables, relative to the workbook.
RUNS = Path("benchmarks") / "results" / "scale_runs.csv"
REFERENCES = Path("benchmarks") / "results" / "scale_references.csv"
#: The mechanisms whose fit-time slope the tables keep (ERRATA F2).
SLOPES = {"rubinstein_rff": "F-slope-rubinstein-rff", "bassily_alg3": "F-slope-bassily-alg3"}
#: The hour target of the scale profile's F-time row (earlier scale runs had another, with fewer fits).
HOUR = 3600.0

Reader = Callable[[str], "str | None"]


def _csv(read: Reader, path: str) -> pd.DataFrame | None:
    text = read(path)
    return None if text is None else pd.read_csv(io.StringIO(text))


def _check(checks: pd.DataFrame, check_id: str) -> pd.Series:
    row = checks[checks["id"] == check_id]
    if len(row) != 1:
        raise ValueError(f"{len(row)} rows {check_id!r} in checks.csv")
    return row.iloc[0]


def _slopes(checks: pd.DataFrame) -> dict[str, object]:
    out: dict[str, object] = {}
    for name, check_id in SLOPES.items():
        row = _check(checks, check_id)
        out[f"slope_{name}"], out[f"status_{name}"] = float(row["measured"]), row["status"]
    return out


def _objective(checks: pd.DataFrame) -> dict[str, object]:
    """Row ``F-objective-vs-diffprivlib``: the ratio of fit times, its status and the two medians of its detail."""
    if "F-objective-vs-diffprivlib" not in set(checks["id"]):
        return {}
    row = _check(checks, "F-objective-vs-diffprivlib")
    medians = _search(r"medians ([\d.]+) s vs ([\d.]+) s", row)
    return {"objective_vs_diffprivlib": float(row["measured"]), "status_objective_vs_diffprivlib": row["status"],
            "objective_median_seconds": float(medians.group(1)), "diffprivlib_median_seconds": float(medians.group(2))}


def _search(pattern: str, row: pd.Series) -> re.Match[str]:
    found = re.search(pattern, str(row["detail"]))
    if found is None:
        raise ValueError(f"the detail of check {row['id']!r} no longer reads {pattern!r}: {row['detail']!r}")
    return found


def _timing(timings: pd.DataFrame | None, paper: str, section: str) -> pd.Series | None:
    if timings is None:
        return None
    row = timings[(timings["paper"] == paper) & (timings["section"] == section)]
    return row.iloc[0] if len(row) == 1 else None


def _ratio(a: float, b: float) -> float:
    return a / b if b > 0 else math.nan  # NaN > 0 is False: NaN in, NaN out


def _get(row: object, key: str) -> float:
    """``row[key]`` as a float (a dict or a Series), NaN where it has no such key."""
    return float(row.get(key, math.nan))  # type: ignore[attr-defined]


def _decide(names: tuple[str, ...], met: tuple[bool, ...] | None) -> dict[str, object]:
    """A registered hypothesis's outcome: each prediction ``"met"`` or ``"not met"`` and ``"holds"`` when all are met,
    ``"rejected"`` when one is not; ``met`` None (an input was NaN or missing): NaN predictions, ``"untested"``."""
    if met is None:
        return {**dict.fromkeys(names, math.nan), "outcome": "untested"}
    return {**{k: "met" if m else "not met" for k, m in zip(names, met)},
            "outcome": "holds" if all(met) else "rejected"}


def _cpu(run: pd.Series) -> dict[str, float]:
    """The sweep's CPU accounting from its ``run.csv`` row (NaN for a run before the frontier recorded it): the fits'
    CPU seconds, their wall seconds over them, the machine's busy and stolen CPU seconds over the sweep, and the share
    of the machine's busy CPU that went to the fits."""
    cpu, busy, steal = (_get(run, k) for k in ("fit_cpu_seconds", "machine_busy_seconds", "machine_steal_seconds"))
    return {"fit_cpu_seconds": cpu, "fit_wall_over_cpu": _ratio(_get(run, "fit_seconds"), cpu), "machine_busy_seconds": busy,
            "machine_steal_seconds": steal, "fit_share_of_busy": _ratio(cpu, busy)}


def beside(runs: pd.DataFrame, start_time: float, seconds: float) -> dict[str, float]:
    """Among the fits that started within ``seconds`` of ``start_time`` (the frontier notebook's start: while Yu et
    al.'s notebook, started with it, still ran beside the sweep) and among those that started later: the fits' wall
    seconds over their CPU seconds, the share of their wall seconds they waited on a run queue for a core, and the
    share of their wall seconds by which CPU plus wait exceed them (``excess_share``: a fit's thread runs, waits or
    sleeps, so an excess is CPU time of the worker's other threads, which the process's CPU seconds count) (sums;
    the wait from the runs that recorded it).  NaN where a run has no CPU seconds (or waits), no start time, or a part
    no fits.  The two parts hold different fits (the sweep runs its most expensive tasks first): a difference between
    them is the machine's and the fits' together."""
    out = dict.fromkeys([f"fit_{m}_{part}_yu2020" for m in ("wall_over_cpu", "wait_share", "excess_share")
                         for part in ("beside", "after")] + ["fits_beside_yu2020", "fits_after_yu2020"], math.nan)
    if "fit_cpu_seconds" not in runs.columns or "fit_start_time" not in runs.columns or math.isnan(start_time):
        return out
    timed = runs[runs["fit_cpu_seconds"].notna()]
    early = timed["fit_start_time"] < start_time + seconds
    for part, d in (("beside", timed[early]), ("after", timed[~early])):
        wall, out[f"fits_{part}_yu2020"] = float(d["fit_seconds"].sum()), len(d)
        out[f"fit_wall_over_cpu_{part}_yu2020"] = _ratio(wall, float(d["fit_cpu_seconds"].sum()))
        if "fit_wait_seconds" in d.columns and d["fit_wait_seconds"].notna().all():
            wait = float(d["fit_wait_seconds"].sum())
            out[f"fit_wait_share_{part}_yu2020"] = _ratio(wait, wall)
            out[f"fit_excess_share_{part}_yu2020"] = _ratio(float(d["fit_cpu_seconds"].sum()) + wait - wall, wall)
    return out


def cpu_slopes(runs: pd.DataFrame) -> dict[str, float]:
    """The log-log slopes of :data:`SLOPES`' mechanisms' fit *CPU* seconds against n, computed as the ``F-slope-*``
    rows compute theirs from the wall seconds (:func:`dpkernels.experiments.frontier_analysis.cost_slopes`, the
    untraced runs at the rules' own constants, over the data set with the largest training size), with their standard
    errors; NaN for a run that recorded no CPU seconds."""
    from dpkernels.experiments.frontier_analysis import cost_slopes

    names = [f"slope_cpu_{name}{tail}" for name in SLOPES for tail in ("", "_se")]
    if "fit_cpu_seconds" not in runs.columns or runs["fit_cpu_seconds"].isna().all():
        return dict.fromkeys(names, math.nan)
    base = runs[runs["scale"] == 1.0]
    widest = base.loc[base["n_train"].idxmax(), "dataset"]
    slopes = cost_slopes(base[base["dataset"] == widest].assign(fit_seconds=lambda d: d["fit_cpu_seconds"]))
    out: dict[str, float] = {}
    for name, check_id in SLOPES.items():
        row = slopes[slopes["mechanism"] == check_id.removeprefix("F-slope-")]
        out[f"slope_cpu_{name}"] = float(row["time_slope"].iloc[0]) if len(row) else math.nan
        out[f"slope_cpu_{name}_se"] = float(row["time_slope_se"].iloc[0]) if len(row) else math.nan
    return out


#: H-F1-contention's predictions, registered in ERRATA F1 (commit 7ca42f0) before any run recorded CPU seconds: the
#: fits' wall over CPU beside yu2020 at least this much above the ratio after it, ...
CONTENTION_GAP = 0.2
#: ... the ratio after yu2020 at most this, ...
ALONE_RATIO = 1.15
#: ... and the machine's stolen CPU below this share of its busy CPU over the sweep.
STEAL_SHARE = 0.01


def contention(row: dict[str, object]) -> dict[str, object]:
    """H-F1-contention's outcome in one whole run's row (:func:`run_row`'s columns): each prediction (``"met"`` or
    ``"not met"``: ``prediction_gap``, ``prediction_after``, ``prediction_steal``, the stolen CPU as a share of the
    busy CPU, as registered) and ``h_f1_contention``, ``"holds"`` when all three are met, ``"rejected"`` when one is
    not, ``"untested"`` when the run recorded no CPU seconds (a NaN is never a hold).  One run speaks for that run's
    machine only, and prediction (a) compares different fits (:func:`beside`)."""
    beside_, after, steal, busy = (_get(row, k) for k in ("fit_wall_over_cpu_beside_yu2020",
                                                          "fit_wall_over_cpu_after_yu2020", "machine_steal_seconds",
                                                          "machine_busy_seconds"))
    share = _ratio(steal, busy)  # as registered: a share of the busy CPU
    untested = any(math.isnan(v) for v in (beside_, after, steal, busy))
    out = _decide(("prediction_gap", "prediction_after", "prediction_steal"), None if untested else
                  (beside_ >= after + CONTENTION_GAP, after <= ALONE_RATIO, share < STEAL_SHARE))
    outcome = out.pop("outcome")
    return {**out, "steal_share": math.nan if untested else share, "h_f1_contention": outcome}


#: H-F1-wait's predictions, registered in ERRATA F1 before any run recorded the fits' run-queue wait: the fits that
#: start beside yu2020 wait at least this share of their wall seconds, ...
WAIT_BESIDE = 0.2
#: ... those after it at most this share, ...
WAIT_AFTER = 0.05
#: ... and the fits' CPU seconds are within this fraction of the first run that recorded them (:data:`CPU_RUN`).
CPU_STABLE = 0.1
CPU_RUN = "7ca42f0"


def wait_outcome(row: dict[str, object], reference_cpu: float) -> dict[str, object]:
    """H-F1-wait's outcome in one whole run's row: ``wait_prediction_beside``, ``wait_prediction_after`` and
    ``cpu_prediction_stable`` (``"met"`` / ``"not met"``; the last against ``reference_cpu``, :data:`CPU_RUN`'s fit CPU
    seconds) and ``h_f1_wait``: ``"holds"``, ``"rejected"``, or ``"untested"`` when the run recorded no waits, or is
    :data:`CPU_RUN`'s own (a NaN is never a hold)."""
    beside_, after, cpu = (_get(row, k) for k in ("fit_wait_share_beside_yu2020", "fit_wait_share_after_yu2020",
                                                  "fit_cpu_seconds"))
    untested = any(math.isnan(v) for v in (beside_, after, cpu, reference_cpu)) or row.get("commit") == CPU_RUN
    out = _decide(("wait_prediction_beside", "wait_prediction_after", "cpu_prediction_stable"), None if untested else
                  (beside_ >= WAIT_BESIDE, after <= WAIT_AFTER, abs(cpu / reference_cpu - 1.0) <= CPU_STABLE))
    outcome = out.pop("outcome")
    return {**out, "h_f1_wait": outcome}


def run_row(read: Reader, commit: str, note: str) -> dict[str, object]:
    """One row of ``scale_runs.csv`` from a whole run's outputs (``read(path)``: a file's text under the run's
    folder, ``None`` when it has none).  Raises ``ValueError`` for a run that is not a whole scale run (no whole-run
    wall time or a notebook missing)."""
    timings = _csv(read, "benchmarks/results/timings_scale.csv")
    run, runs = _csv(read, "paper_figures/frontier/run.csv"), _csv(read, "paper_figures/frontier/runs.csv")
    checks = _csv(read, "paper_figures/frontier/checks.csv")
    if timings is None or run is None or runs is None or checks is None:
        raise ValueError("a scale run's timings_scale.csv and frontier run.csv, runs.csv, checks.csv are needed")
    totals = {p: _timing(timings, p, "(notebook total)") for p in ("frontier", "yu2020")}
    wall, run = _timing(timings, "(all)", "(wall time)"), run.iloc[0]
    if wall is None or any(t is None for t in totals.values()):
        raise ValueError("not a whole scale run: timings_scale.csv lacks the whole-run wall time or a notebook's total")
    shuttle = runs[(runs["dataset"] == "shuttle") & (runs["n_train"] == 50_000)]
    # yu2020 ran beside the sweep only when the runner ran two notebooks at once, and the CPU seconds are one fit's
    # only on the local cluster's one-thread workers
    together = float(wall.get("jobs", math.nan)) >= 2 and run.get("scheduler") == "local"
    start = float(run.get("start_time", math.nan)) if together else math.nan
    row = {"commit": commit, "whole_run_seconds": float(wall["seconds"]),
            **{f"{p}_seconds": float(t["seconds"]) for p, t in totals.items()},  # type: ignore[index]
            "sweep_seconds": float(run["sweep_seconds"]), "fit_seconds": float(run["fit_seconds"]), "fits": len(runs),
            "shuttle_50000_fits": len(shuttle), "shuttle_50000_fit_seconds": float(shuttle["fit_seconds"].sum()),
            "shuttle_50000_fit_cpu_seconds": float(shuttle["fit_cpu_seconds"].sum())
            if "fit_cpu_seconds" in shuttle.columns else math.nan,
            "load_start": float(run["load_start"]), "load_end": float(run["load_end"]), **_cpu(run),
            **beside(runs, start, float(totals["yu2020"]["seconds"])),  # type: ignore[index]
            "note": note, **_slopes(checks), **cpu_slopes(runs)}
    return {**row, **contention(row)}


def add_run(run_dir: Path, repo: Path, commit: str, note: str) -> Path:
    """Add (or replace) the row of ``commit``'s whole scale run, read from ``run_dir`` (a build's ``scale/``), to
    ``repo``'s ``scale_runs.csv``, with H-F1-wait's outcome against the table's :data:`CPU_RUN` row
    (:func:`wait_outcome`); returns its path."""
    run_dir, out = Path(run_dir), Path(repo) / RUNS

    def read(path: str) -> str | None:
        return (run_dir / path).read_text() if (run_dir / path).exists() else None

    record = run_row(read, commit, note)
    table = pd.read_csv(out, dtype={"commit": str}) if out.exists() else pd.DataFrame(columns=["commit"])
    first = table.loc[table["commit"] == CPU_RUN, "fit_cpu_seconds"] if "fit_cpu_seconds" in table else []
    row = pd.DataFrame([{**record, **wait_outcome(record, float(first.iloc[0]) if len(first) else math.nan)}])
    if table.empty:
        table = row.iloc[:0]
    table = pd.concat([table[table["commit"] != commit], row], ignore_index=True)[list(row.columns)]
    table.to_csv(out, index=False)
    return out


def _git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True, text=True).stdout


def _show(repo: Path, commit: str, path: str) -> str | None:
    try:
        return _git(repo, "show", f"{commit}:{path}")
    except subprocess.CalledProcessError:
        return None


def reference_row(repo: Path, commit: str) -> dict[str, object] | None:
    """The row of the scale reference committed at ``commit`` of ``repo``, or ``None`` when its F-time target is not
    the hour (an earlier, smaller scale profile, or the full profile's frontier)."""
    checks = _csv(lambda path: _show(repo, commit, path), "paper_figures/frontier/checks.csv")
    if checks is None or "F-time" not in set(checks["id"]):
        return None
    ftime = _check(checks, "F-time")
    if float(ftime["bound"]) != HOUR:
        return None
    sweep = _search(r"sweep ([\d.]+) s wall, ([\d.]+) s of fits", ftime)
    timings = "benchmarks/results/timings_scale.csv"
    wall = _timing(_csv(lambda path: _show(repo, commit, path), timings), "(all)", "(wall time)")
    before = _timing(_csv(lambda path: _show(repo, f"{commit}~1", path), timings), "(all)", "(wall time)")
    if wall is not None and before is not None and wall["seconds"] == before["seconds"]:
        wall = None  # a run of the frontier alone keeps the last whole run's row
    run = _csv(lambda path: _show(repo, commit, path), "paper_figures/frontier/run.csv")
    cpu = _cpu(run.iloc[0]) if run is not None and len(run) == 1 else _cpu(pd.Series(dtype=float))
    return {"reference_commit": commit, "date": _git(repo, "log", "-1", "--format=%cs", commit).strip(),
            "frontier_seconds": float(ftime["measured"]), "f_time_status": ftime["status"],
            "sweep_seconds": float(sweep.group(1)), "fit_seconds": float(sweep.group(2)),
            "whole_run_seconds": float(wall["seconds"]) if wall is not None else float("nan"),
            "fit_cpu_seconds": cpu["fit_cpu_seconds"], "fit_wall_over_cpu": cpu["fit_wall_over_cpu"],
            **_slopes(checks), **_objective(checks)}


def history(repo: Path) -> pd.DataFrame:
    """Every scale reference committed in ``repo``'s history (:func:`reference_row`), oldest first, written to its
    ``scale_references.csv``."""
    commits = _git(repo, "log", "--format=%h", "--abbrev=7", "--reverse", "--",
                   "paper_figures/frontier/checks.csv").split()
    table = pd.DataFrame([r for c in commits if (r := reference_row(repo, c)) is not None])
    table.to_csv(Path(repo) / REFERENCES, index=False)
    return table


def main(argv: list[str] | None = None) -> int:
    from dpkernels.workbook import find_root

    parser = argparse.ArgumentParser(prog="python -m dpkernels.scale_runs", description=__doc__.split("\n\n")[0])
    parser.add_argument("--build", type=Path, help="a whole scale run's build folder (holding scale/run.json)")
    parser.add_argument("--note", default="", help="what the run was (with --build)")
    parser.add_argument("--history", action="store_true", help="rewrite scale_references.csv from git history")
    args = parser.parse_args(argv)
    if args.build is None and not args.history:
        parser.error("give --build or --history")
    repo = find_root()
    if args.build is not None:
        run_dir = args.build / "scale"
        commit = json.loads((run_dir / "run.json").read_text())["commit"]
        print(pd.read_csv(add_run(run_dir, repo, commit, args.note)).tail(3).to_string(index=False))
    if args.history:
        print(history(repo).to_string(index=False))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
