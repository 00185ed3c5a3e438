"""The dpkernels CLI, the papermill runner and the report, end to end on small inputs."""

from __future__ import annotations

import subprocess
import sys

import jupytext
import nbformat
import pandas as pd
import pytest

from dpkernels import cli
from dpkernels.report import Checks, build_report, write_table
from dpkernels.runner import run_notebook

TINY = '''# %% tags=["parameters"]
profile = "quick"

# %%
print("profile is", profile)
'''


def test_runner_executes_with_profile_and_updates_paired_notebook(tmp_path):
    nbdir = tmp_path / "notebooks"
    nbdir.mkdir()
    (nbdir / "tiny.py").write_text(TINY)
    result = run_notebook("tiny", "full", notebook_dir=nbdir, build_dir=tmp_path / "build")
    assert result.ok, result.error
    executed = nbformat.read(tmp_path / "build" / "full" / "tiny.ipynb", as_version=4)
    assert any("profile is full" in "".join(o.get("text", "")) for c in executed.cells for o in c.get("outputs", []))
    updated = nbformat.read(nbdir / "tiny.ipynb", as_version=4)
    assert not any("injected-parameters" in c.metadata.get("tags", []) for c in updated.cells)
    assert jupytext.writes(updated, fmt="py:percent").strip().endswith(TINY.strip())


def test_runner_reports_a_failing_notebook(tmp_path):
    nbdir = tmp_path / "nb"
    nbdir.mkdir()
    (nbdir / "bad.py").write_text(TINY + "\n# %%\nraise RuntimeError('boom')\n")
    result = run_notebook("bad", "quick", notebook_dir=nbdir, build_dir=tmp_path / "build", update_notebook=False)
    assert not result.ok and "boom" in result.error


def test_checks_statuses_and_csv(tmp_path):
    c = Checks("demo")
    assert c.at_most("Lemma 9", "sensitivity", bound=1.0, measured=0.5) == "holds"
    assert c.at_most("Lemma 10", "sensitivity", bound=1.0, measured=1.5) == "violated"
    assert c.at_least("Lemma 22", "separation", bound=2.0, measured=2.5) == "holds"
    assert c.skip("Table 2", "KDD", "file unavailable") == "skipped"
    with pytest.raises(ValueError):
        c.add("x", "y", bound=1, measured=1, status="fine")
    path = c.write(tmp_path / "demo")
    df = pd.read_csv(path)
    assert list(df.columns) == ["paper", "claim", "check", "bound", "measured", "status", "detail"]
    assert df["status"].tolist() == ["holds", "violated", "holds", "skipped"]


def test_report_pairs_published_and_reproduced(tmp_path):
    c = Checks("demo")
    c.at_most("Theorem 1", "bound", bound=2.0, measured=1.0)
    c.write(tmp_path / "demo")
    table = pd.DataFrame({"method": ["a", "a", "b"], "source": ["published", "reproduced", "reproduced"],
                          "value": [0.5, 0.45, 0.3]})
    write_table(table, "table_1", "demo", out=tmp_path / "demo")
    with pytest.raises(ValueError, match="source"):
        write_table(table.assign(source="guess"), "table_x", "demo", out=tmp_path / "demo")
    text = build_report(tmp_path).read_text()
    assert "| demo | 1 | 1 | 0 | 0 | 1 |" in text
    assert "| a | 0.5 | 0.45 |" in text and "-0.05" in text


def test_cli_datasets_and_report(tmp_path, capsys, offline_empty_data):
    assert cli.main(["datasets"]) == 0
    out = capsys.readouterr().out
    assert "kddcup99" in out and "unavailable" in out and "adult" in out
    Checks("demo").write(tmp_path / "figs" / "demo")
    assert cli.main(["report", "--root", str(tmp_path / "figs")]) == 0
    assert (tmp_path / "figs" / "REPORT.md").exists()


def test_cli_unknown_paper_is_an_error():
    assert cli.main(["reproduce", "--paper", "no-such-paper"]) == 2


def test_console_script_is_installed():
    proc = subprocess.run([sys.executable, "-m", "dpkernels.cli", "--help"], capture_output=True, text=True)
    assert proc.returncode == 0 and "reproduce" in proc.stdout
