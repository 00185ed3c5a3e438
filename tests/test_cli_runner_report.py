"""The dpkernels CLI, the papermill runner and the report, end to end on small inputs."""

from __future__ import annotations

import subprocess
import sys

import jupytext
import nbformat
import pandas as pd
import pytest

from dpkernels import cli
from dpkernels.report import Checks, build_report, compare_table, render_template, stable_text, write_table
from dpkernels.runner import run_notebook, section_timings, sync_notebook

TINY = '''# %% tags=["parameters"]
profile = "quick"

# %%
print("profile is", profile)
'''


def test_runner_executes_with_profile_and_updates_paired_notebook(tmp_path):
    nbdir = tmp_path / "notebooks"
    nbdir.mkdir()
    (nbdir / "tiny.py").write_text(TINY)
    result = run_notebook("tiny", "full", notebook_dir=nbdir, build_dir=tmp_path / "build", figures_dir=tmp_path / "figs")
    assert result.ok, result.error
    executed = nbformat.read(tmp_path / "build" / "full" / "tiny.ipynb", as_version=4)
    assert any("profile is full" in "".join(o.get("text", "")) for c in executed.cells for o in c.get("outputs", []))
    updated = nbformat.read(nbdir / "tiny.ipynb", as_version=4)
    injected = [c for c in updated.cells if "injected-parameters" in c.metadata.get("tags", [])]
    assert len(injected) == 1 and 'profile = "full"' in injected[0].source  # the parameters that produced it
    assert not any("papermill" in c.metadata for c in updated.cells)
    updated.cells = [c for c in updated.cells if c not in injected]
    assert jupytext.writes(updated, fmt="py:percent").strip().endswith(TINY.strip())
    # a second run of the same source gives the same cell ids (diffs show outputs only)
    ids = [c.id for c in nbformat.read(nbdir / "tiny.ipynb", as_version=4).cells]
    assert run_notebook("tiny", "full", notebook_dir=nbdir, build_dir=tmp_path / "build", figures_dir=tmp_path / "figs").ok
    assert [c.id for c in nbformat.read(nbdir / "tiny.ipynb", as_version=4).cells] == ids


def test_quick_runs_leave_tracked_notebooks_alone(tmp_path):
    nbdir = tmp_path / "notebooks"
    nbdir.mkdir()
    (nbdir / "tiny.py").write_text(TINY)
    result = run_notebook("tiny", "quick", notebook_dir=nbdir, build_dir=tmp_path / "build")
    assert result.ok, result.error
    assert not (nbdir / "tiny.ipynb").exists()
    assert (tmp_path / "build" / "quick" / "tiny.ipynb").exists()
    timings = section_timings(tmp_path / "build" / "quick" / "tiny.ipynb", "tiny")
    assert timings["cells"].sum() == 3 and (timings["seconds"] >= 0).all()


def test_sync_keeps_outputs_and_the_injected_cell(tmp_path):
    nbdir = tmp_path / "notebooks"
    nbdir.mkdir()
    (nbdir / "tiny.py").write_text(TINY)
    assert run_notebook("tiny", "full", notebook_dir=nbdir, build_dir=tmp_path / "build", figures_dir=tmp_path / "f").ok
    (nbdir / "tiny.py").write_text(TINY + "\n# %% [markdown]\n# a new note\n")
    sync_notebook("tiny", nbdir)
    nb = nbformat.read(nbdir / "tiny.ipynb", as_version=4)
    assert any("injected-parameters" in c.metadata.get("tags", []) for c in nb.cells)
    assert any("profile is full" in "".join(o.get("text", "")) for c in nb.cells for o in c.get("outputs", []))
    assert nb.cells[-1].source == "a new note"


def test_runner_reports_a_failing_notebook(tmp_path):
    nbdir = tmp_path / "nb"
    nbdir.mkdir()
    (nbdir / "bad.py").write_text(TINY + "\n# %%\nraise RuntimeError('boom')\n")
    result = run_notebook("bad", "quick", notebook_dir=nbdir, build_dir=tmp_path / "build", update_notebook=False)
    assert not result.ok and "boom" in result.error


def test_checks_kinds_statuses_ids_and_csv(tmp_path):
    c = Checks("demo")
    assert c.at_most("Lemma 9", "sensitivity", kind="measured", bound=1.0, measured=0.5) == "holds"
    v = c.at_most("Lemma 10", "sensitivity", kind="measured", bound=1.0, measured=1.5, id="lemma10")
    assert v.status == "violated" and "VIOLATED" in str(v)
    assert c.at_least("Lemma 22", "separation", kind="analytic", bound=2.0, measured=2.5) == "holds"
    assert c.skip("Table 2", "KDD", "file unavailable") == "skipped"
    with pytest.raises(ValueError, match="status"):
        c.add("x", "y", kind="measured", bound=1, measured=1, status="fine")
    with pytest.raises(ValueError, match="kind"):
        c.add("x", "y", kind="hopeful", bound=1, measured=1, status="holds")
    path = c.write(tmp_path / "demo")
    df = pd.read_csv(path)
    assert list(df.columns) == ["paper", "id", "claim", "check", "kind", "bound", "measured", "status", "detail"]
    assert df["status"].tolist() == ["holds", "violated", "holds", "skipped"]
    assert "lemma10" in df["id"].tolist() and df["id"].is_unique


def test_report_counts_only_measured_claims_and_classifies_published_numbers(tmp_path):
    c = Checks("demo")
    c.at_most("Theorem 1", "bound", kind="measured", bound=2.0, measured=1.0)
    c.at_most("Theorem 2", "closed form", kind="consistency", bound=2.0, measured=1.0)
    c.add("speed", "fit time", kind="target", bound=1, measured=0.5, status="holds")
    c.write(tmp_path / "demo")
    table = pd.DataFrame({"method": ["a", "a", "b", "b", "c", "c", "d", "e"],
                          "source": ["published", "reproduced"] * 3 + ["reproduced", "published"],
                          "value": [0.5, 0.45, 0.30, 0.301, 0.8, 0.28, 0.3, 0.2],
                          "se": [None, 0.01, None, 0.002, None, 0.01, 0.01, None],
                          "errata": [None, None, None, None, None, "C3", None, None]})
    write_table(table, "table_1", "demo", out=tmp_path / "demo")
    with pytest.raises(ValueError, match="source"):
        write_table(table.assign(source="guess"), "table_x", "demo", out=tmp_path / "demo")
    with pytest.raises(ValueError, match="se"):
        write_table(table.drop(columns="se"), "table_y", "demo", out=tmp_path / "demo")
    paired = compare_table(table)
    assert paired["class"].tolist() == ["differs, unexplained", "agrees", "differs, explained (C3)"]
    text = build_report(tmp_path).read_text()
    # 1 measured claim; the consistency and target rows are counted apart; 3 published numbers paired (d is not
    # published, e is not reproduced)
    assert "| demo | 1 | 1 | 0 | 0 | 0 | 1 | 1 | 3 | 1 | 1 | 1 | 1 | 0 |" in text
    assert "method=a" in text.split("## Differences we cannot explain")[1].split("##")[0]
    totals = pd.read_csv(tmp_path / "totals.csv")  # the same totals, as the README quotes them
    assert totals.set_index("paper").loc["demo", ["claims measured", "consistency", "published numbers paired",
                                             "published numbers not reproduced"]].tolist() == [1, 1, 3, 1]


def test_prose_templates_quote_output_files(tmp_path):
    c = Checks("demo")
    c.at_most("Lemma 9", "sensitivity", kind="measured", bound=1.0, measured=0.49512, id="lemma9")
    c.write(tmp_path / "paper_figures" / "demo")
    pd.DataFrame({"k": ["x", "y"], "source": "reproduced", "value": [0.25, 0.75], "se": 0.0}).to_csv(
        tmp_path / "paper_figures" / "demo" / "t.csv", index=False)
    (tmp_path / "r.json").write_text('{"a": {"b": [1.5, 2.25]}}')
    text = ("loss {{ demo:lemma9.measured | .3f }} of {{ demo:lemma9.bound }}; y = "
            "{{ paper_figures/demo/t.csv?k=y#value | .2f }}; b = {{ r.json#a.b.1 }}")
    assert render_template(text, tmp_path) == "loss 0.495 of 1; y = 0.75; b = 2.25"
    with pytest.raises(KeyError):
        render_template("{{ demo:nope.measured }}", tmp_path)


def test_stable_text_has_no_signed_zeros_or_last_digits():
    df = pd.DataFrame({"a": [-0.0, -1e-12, 0.123456789], "b": ["x", "y", "z"], "n": [1, 2, 3]})
    assert stable_text(df.round(2)) == stable_text(pd.DataFrame({"a": [0.0, 0.0, 0.12], "b": ["x", "y", "z"], "n": [1, 2, 3]}))
    assert "-0" not in stable_text(df, digits=2)


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


def test_every_profile_of_a_paper_sets_the_same_parameters():
    """A key in one profile and not the other breaks that profile's notebook (a KeyError at paper scale that the
    quick-profile CI never sees)."""
    from dpkernels import profiles

    for paper in profiles.papers():
        keys = {name: set(profiles.load(paper, name)) for name in profiles.PROFILE_NAMES if name in profiles._read()[paper]}
        assert keys["quick"] == keys["full"], f"{paper}: {keys['quick'] ^ keys['full']}"
        assert all(k == keys["full"] for k in keys.values()), f"{paper}: {keys}"


def test_show_new_prints_each_verdict_once(capsys):
    c = Checks("demo")
    c.at_most("Lemma 1", "a", kind="measured", bound=1.0, measured=0.5)
    c.show_new()
    c.at_least("Lemma 2", "b", kind="measured", bound=1.0, measured=0.5)
    c.show_new()
    c.show_new()
    out = capsys.readouterr().out
    assert out.count("Lemma 1") == 1 and out.count("[VIOLATED] Lemma 2") == 1
