"""The scale profile's run records (``benchmarks/scale_runs.py``) are read from outputs, not typed: ERRATA F1 and F2
quote them."""

from __future__ import annotations

import importlib.util
import shutil
import subprocess

import pandas as pd
import pytest

from dpkernels.report import REPO_ROOT

_spec = importlib.util.spec_from_file_location("scale_runs", REPO_ROOT / "benchmarks" / "scale_runs.py")
S = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(S)  # type: ignore[union-attr]


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


def _read_repo(path: str) -> str | None:
    return (REPO_ROOT / path).read_text() if (REPO_ROOT / path).exists() else None


def test_the_committed_reference_is_one_of_the_recorded_runs():
    """The committed scale reference's times, fit counts and timed checks, read as from a build folder, are a row of
    scale_runs.csv (its note aside); a reference whose run was not recorded fails, and so does a row read wrongly
    (the fit seconds one second off)."""
    row = S.run_row(_read_repo, "?", "")
    table = pd.read_csv(S.RUNS)
    cols = [c for c in row if c not in ("commit", "note")]

    def recorded(r: dict) -> bool:
        return any(all(_same(v, r[c]) for c, v in zip(cols, rec)) for rec in table[cols].itertuples(index=False))

    assert recorded(row)
    assert not recorded({**row, "fit_seconds": row["fit_seconds"] + 1.0})


@pytest.mark.skipif(not _history_available(), reason="needs the repository's full git history")
def test_the_reference_history_is_read_from_git():
    """Each row of scale_references.csv is what the repository's history gives for its commit (the F-time row, its
    detail's sweep and fit seconds, the whole run's wall time where that commit wrote it, the slopes and the
    objective-against-diffprivlib row), and the committed reference's own row matches the checks on disk."""
    table = pd.read_csv(S.REFERENCES, dtype={"reference_commit": str})
    assert len(table) >= 9
    for rec in table.to_dict("records"):
        again = S.reference_row(rec["reference_commit"])
        assert again is not None and set(again) == set(rec)
        assert all(_same(v, rec[k]) for k, v in again.items()), rec["reference_commit"]
    checks = pd.read_csv(REPO_ROOT / "paper_figures" / "frontier" / "checks.csv").set_index("id")
    last = table.iloc[-1]
    assert last["slope_rubinstein_rff"] == checks.loc["F-slope-rubinstein-rff", "measured"]
    assert last["frontier_seconds"] == checks.loc["F-time", "measured"]
