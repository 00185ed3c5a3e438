"""The scale profile's run records (:mod:`dpkernels.scale_runs`) are read from outputs, not typed: ERRATA F1 and F2
quote them."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import nbformat
import pandas as pd
import pytest

from dpkernels import scale_runs as S
from dpkernels.report import REPO_ROOT, Checks

RUN_FILES = ("benchmarks/results/timings_scale.csv", "paper_figures/frontier/run.csv",
             "paper_figures/frontier/runs.csv", "paper_figures/frontier/checks.csv")


def _history_available() -> bool:
    if shutil.which("git") is None or not (REPO_ROOT / ".git").exists():
        return False
    out = subprocess.run(["git", "-C", str(REPO_ROOT), "rev-parse", "--is-shallow-repository"], capture_output=True,
                         text=True)
    return out.returncode == 0 and out.stdout.strip() == "false"


def _same(a: object, b: object) -> bool:
    if isinstance(a, str) or isinstance(b, str):
        return a == b
    return (pd.isna(a) and pd.isna(b)) or abs(float(a) - float(b)) <= 1e-9  # type: ignore[arg-type]


def _build(root: Path) -> Path:
    """A build folder's ``scale/`` holding the committed reference's run files."""
    run_dir = root / "build" / "scale"
    for name in RUN_FILES:
        (run_dir / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(REPO_ROOT / name, run_dir / name)
    return run_dir


def test_a_whole_run_is_recorded_from_its_build_folder(tmp_path):
    """add_run reads the row from the build's files (the committed reference's run here: its notebook totals, the
    sweep's seconds and fits, the shuttle cell, the load and the timed checks), replaces the row of the same commit
    instead of adding another, and refuses a run without yu2020's notebook (a frontier-only run)."""
    run_dir, repo = _build(tmp_path), tmp_path / "repo"
    (repo / S.RUNS).parent.mkdir(parents=True)
    out = S.add_run(run_dir, repo, "abc1234", "first")
    row = pd.read_csv(out, dtype={"commit": str}).iloc[-1]
    timings = pd.read_csv(REPO_ROOT / RUN_FILES[0]).set_index(["paper", "section"])["seconds"]
    run = pd.read_csv(REPO_ROOT / RUN_FILES[1]).iloc[0]
    runs = pd.read_csv(REPO_ROOT / RUN_FILES[2])
    checks = pd.read_csv(REPO_ROOT / RUN_FILES[3]).set_index("id")
    assert row["commit"] == "abc1234" and row["whole_run_seconds"] == timings[("(all)", "(wall time)")]
    assert row["yu2020_seconds"] == timings[("yu2020", "(notebook total)")]
    assert row["fit_seconds"] == run["fit_seconds"] and row["fits"] == len(runs)
    assert row["slope_rubinstein_rff"] == checks.loc["F-slope-rubinstein-rff", "measured"]
    # the CPU accounting: the split at yu2020's end (not the frontier's), its outcome, the shuttle cell's CPU
    split = S.beside(runs, run["start_time"], timings[("yu2020", "(notebook total)")])
    assert row["fit_cpu_seconds"] == run["fit_cpu_seconds"] and row["machine_steal_seconds"] == run["machine_steal_seconds"]
    assert row["fit_wall_over_cpu_beside_yu2020"] == pytest.approx(split["fit_wall_over_cpu_beside_yu2020"])
    assert row["fit_wall_over_cpu_after_yu2020"] == pytest.approx(split["fit_wall_over_cpu_after_yu2020"])
    assert row["h_f1_contention"] == S.contention(row)["h_f1_contention"] != "untested"
    assert row["shuttle_50000_fit_cpu_seconds"] == pytest.approx(
        runs.loc[(runs["dataset"] == "shuttle") & (runs["n_train"] == 50_000), "fit_cpu_seconds"].sum())
    S.add_run(run_dir, repo, "abc1234", "again")
    table = pd.read_csv(out, dtype={"commit": str})
    assert len(table) == 1 and table["note"].tolist() == ["again"]
    t = pd.read_csv(run_dir / RUN_FILES[0])
    t.assign(jobs=1.0).to_csv(run_dir / RUN_FILES[0], index=False)  # the notebooks one after another: nothing beside
    alone = S.run_row(lambda path: (run_dir / path).read_text(), "def5678", "")
    assert pd.isna(alone["fit_wall_over_cpu_beside_yu2020"]) and alone["h_f1_contention"] == "untested"
    t[t["paper"] != "yu2020"].to_csv(run_dir / RUN_FILES[0], index=False)
    with pytest.raises(ValueError, match="not a whole scale run"):
        S.add_run(run_dir, repo, "def5678", "")


def test_the_fits_wall_over_cpu_is_split_at_yu2020s_end():
    """beside() sums the fits' wall and CPU seconds on each side of the frontier's start + yu2020's seconds (a fit
    that starts at the boundary is after it), leaves out refused fits (NaN CPU) and gives NaN for a run that recorded
    no CPU seconds; _cpu() reads run.csv's accounting and gives NaN, not an error, where a column is missing or 0."""
    runs = pd.DataFrame({"fit_start_time": [100.0, 150.0, 199.0, 200.0, 250.0, 260.0],
                         "fit_seconds": [4.0, 2.0, 2.0, 1.1, 2.2, float("nan")],
                         "fit_cpu_seconds": [2.0, 1.0, 1.0, 1.0, 2.0, float("nan")]})
    out = S.beside(runs, start_time=100.0, seconds=100.0)
    assert out["fit_wall_over_cpu_beside_yu2020"] == 2.0 and out["fit_wall_over_cpu_after_yu2020"] == pytest.approx(1.1)
    assert (out["fits_beside_yu2020"], out["fits_after_yu2020"]) == (3, 2)
    assert pd.isna(out["fit_wait_share_beside_yu2020"])  # no waits recorded
    waited = S.beside(runs.assign(fit_wait_seconds=[2.0, 0.0, 1.0, 0.0, 0.33, float("nan")]), 100.0, 100.0)
    assert waited["fit_wait_share_beside_yu2020"] == pytest.approx(3.0 / 8.0)
    assert waited["fit_wait_share_after_yu2020"] == pytest.approx(0.1)
    assert waited["fit_excess_share_beside_yu2020"] == pytest.approx((4.0 + 3.0 - 8.0) / 8.0)  # CPU + wait - wall
    assert waited["fit_excess_share_after_yu2020"] == pytest.approx((3.0 + 0.33 - 3.3) / 3.3)
    assert pd.isna(out["fit_excess_share_after_yu2020"])  # no waits recorded
    assert all(pd.isna(v) for v in S.beside(runs.drop(columns="fit_cpu_seconds"), 100.0, 100.0).values())
    assert all(pd.isna(v) for v in S.beside(runs, float("nan"), 100.0).values())
    run = pd.Series({"fit_seconds": 30.0, "fit_cpu_seconds": 20.0, "machine_busy_seconds": 40.0,
                     "machine_steal_seconds": 0.5})
    assert S._cpu(run) == {"fit_cpu_seconds": 20.0, "fit_wall_over_cpu": 1.5, "machine_busy_seconds": 40.0,
                           "machine_steal_seconds": 0.5, "fit_share_of_busy": 0.5}
    assert all(pd.isna(v) for v in S._cpu(pd.Series({"fit_seconds": 30.0})).values())
    assert pd.isna(S._cpu(run.replace({20.0: 0.0}))["fit_wall_over_cpu"])


def test_h_f1_contention_is_decided_by_its_registered_predictions():
    """contention() holds only when all three registered predictions do (each moved across its threshold rejects it)
    and is untested, never held, for a run without CPU seconds."""
    ok = {"fit_wall_over_cpu_beside_yu2020": 1.6, "fit_wall_over_cpu_after_yu2020": 1.05,
          "machine_busy_seconds": 7000.0, "machine_steal_seconds": 10.0}
    assert S.contention(ok)["h_f1_contention"] == "holds" and S.contention(ok)["prediction_steal"] == "met"
    assert set(S.contention(ok)) == {"prediction_gap", "prediction_after", "prediction_steal", "steal_share",
                                     "h_f1_contention"}
    for key, value in (("fit_wall_over_cpu_beside_yu2020", 1.05 + S.CONTENTION_GAP - 0.01),
                       ("fit_wall_over_cpu_after_yu2020", S.ALONE_RATIO + 0.01),
                       ("machine_steal_seconds", 7000.0 * S.STEAL_SHARE * 1.1)):
        out = S.contention({**ok, key: value})
        assert out["h_f1_contention"] == "rejected" and list(out.values()).count("not met") == 1, key
    assert S.contention({**ok, "fit_wall_over_cpu_after_yu2020": float("nan")})["h_f1_contention"] == "untested"


def test_the_cpu_slopes_are_read_from_the_cpu_seconds():
    """cpu_slopes fits log CPU seconds (not the wall seconds) against n over the widest data set, at the rules' own
    constants (scale 1): CPU seconds linear in n and wall seconds quadratic give a slope of 1; NaN without CPU."""
    import numpy as np

    rows = []
    for m in ("rubinstein-rff", "bassily-alg3"):
        for n in (1_000, 10_000, 100_000):
            for seed in range(3):
                cpu = 1e-4 * n * (1 + 0.01 * seed)
                rows.append({"dataset": "kddcup99", "mechanism": m, "n_train": n, "scale": 1.0, "seed": seed,
                             "epsilon": 1.0, "traced": False, "peak_mb": np.nan, "fit_cpu_seconds": cpu,
                             "fit_seconds": cpu * n / 1_000})
    runs = pd.DataFrame(rows)
    runs = pd.concat([runs, runs.assign(dataset="adult", n_train=runs["n_train"] // 10,
                                        fit_cpu_seconds=runs["fit_cpu_seconds"] * runs["n_train"]),
                      runs.assign(scale=10.0, fit_cpu_seconds=runs["fit_cpu_seconds"] * runs["n_train"])], ignore_index=True)
    out = S.cpu_slopes(runs)
    assert out["slope_cpu_rubinstein_rff"] == pytest.approx(1.0) and out["slope_cpu_bassily_alg3"] == pytest.approx(1.0)
    assert all(pd.isna(v) for v in S.cpu_slopes(runs.drop(columns="fit_cpu_seconds")).values())


def test_h_f1_wait_is_decided_by_its_registered_predictions(tmp_path):
    """wait_outcome holds only when the three registered predictions are met (each moved across its threshold
    rejects it), is untested without waits or for the run its CPU prediction compares with, and add_run decides it
    against the table's row of that run."""
    ok = {"commit": "abc1234", "fit_wait_share_beside_yu2020": 0.4, "fit_wait_share_after_yu2020": 0.02,
          "fit_cpu_seconds": 4400.0}
    assert S.wait_outcome(ok, 4388.7)["h_f1_wait"] == "holds"
    assert set(S.wait_outcome(ok, 4388.7)) == {"wait_prediction_beside", "wait_prediction_after",
                                               "cpu_prediction_stable", "h_f1_wait"}
    for key, value in (("fit_wait_share_beside_yu2020", S.WAIT_BESIDE - 0.01),
                       ("fit_wait_share_after_yu2020", S.WAIT_AFTER + 0.01),
                       ("fit_cpu_seconds", 4388.7 * (1 + S.CPU_STABLE) + 1.0)):
        out = S.wait_outcome({**ok, key: value}, 4388.7)
        assert out["h_f1_wait"] == "rejected" and list(out.values()).count("not met") == 1, key
    assert S.wait_outcome({**ok, "fit_wait_share_after_yu2020": float("nan")}, 4388.7)["h_f1_wait"] == "untested"
    assert S.wait_outcome({**ok, "commit": S.CPU_RUN}, 4388.7)["h_f1_wait"] == "untested"
    assert S.wait_outcome(ok, float("nan"))["h_f1_wait"] == "untested"


def test_the_machines_cpu_seconds_only_grow():
    """machine_cpu_seconds reads the machine's busy, idle and stolen CPU seconds since boot: finite, non-negative,
    and none smaller in a later reading."""
    pytest.importorskip("psutil")
    from dpkernels.sweep import machine_cpu_seconds

    a = machine_cpu_seconds()
    sum(i * i for i in range(200_000))
    b = machine_cpu_seconds()
    assert set(a) == {"busy", "idle", "steal"} and all(0.0 <= a[k] <= b[k] < float("inf") for k in a)


def test_a_detail_that_no_longer_reads_is_refused():
    """The medians read from F-objective-vs-diffprivlib's detail: a reworded detail raises instead of giving NaN."""
    checks = pd.read_csv(REPO_ROOT / RUN_FILES[3])
    assert S._objective(checks)["objective_median_seconds"] > 0
    checks.loc[checks["id"] == "F-objective-vs-diffprivlib", "detail"] = "reworded"
    with pytest.raises(ValueError, match="no longer reads"):
        S._objective(checks)


def test_update_reference_records_a_whole_scale_run(tmp_path, monkeypatch):
    """update-reference adds the row of a whole scale run (its manifest's commit) and not of a partial one."""
    from dpkernels import reference

    calls: list[tuple[str, str]] = []
    monkeypatch.setattr(S, "add_run", lambda run_dir, repo, commit, note: calls.append((commit, note)) or Path(repo))
    monkeypatch.setattr(reference, "regenerate_derived", lambda repo, log: [])
    repo, build = tmp_path / "repo", tmp_path / "build"
    (repo / "notebooks").mkdir(parents=True)
    run = build / "scale"
    (run / "notebooks").mkdir(parents=True)
    for paper in ("frontier", "yu2020"):
        Checks(paper).write(run / "paper_figures" / paper)
        nbformat.write(nbformat.v4.new_notebook(), run / "notebooks" / f"{paper}.ipynb")
    manifest = {"ok": {"frontier": True, "yu2020": True}, "outputs": ["frontier", "yu2020"], "commit": "abc1234"}
    (run / "run.json").write_text(json.dumps({**manifest, "complete": False}))
    reference.update_reference("scale", build_dir=build, repo=repo, log=lambda *a: None)
    assert calls == []
    (run / "run.json").write_text(json.dumps({**manifest, "complete": True}))
    reference.update_reference("scale", build_dir=build, repo=repo, log=lambda *a: None, papers_only=["frontier"])
    assert calls == []
    reference.update_reference("scale", build_dir=build, repo=repo, log=lambda *a: None)
    assert calls == [("abc1234", "copied by update-reference")]


@pytest.mark.skipif(not _history_available(), reason="needs the repository's full git history")
def test_the_reference_history_is_read_from_git():
    """Each row of scale_references.csv is what the repository's history gives for its commit (the F-time row, its
    detail's sweep and fit seconds, the whole run's wall time where that commit wrote it, the slopes and the
    objective-against-diffprivlib row; fails on a value moved by 0.1)."""
    table = pd.read_csv(REPO_ROOT / S.REFERENCES, dtype={"reference_commit": str})
    assert len(table) >= 9
    for rec in table.to_dict("records"):
        again = S.reference_row(REPO_ROOT, rec["reference_commit"])
        assert again is not None and set(again) == set(rec)
        assert all(_same(v, rec[k]) for k, v in again.items()), rec["reference_commit"]
