"""The dpkernels CLI, the papermill runner and the report, end to end on small inputs."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import jupytext
import nbformat
import pandas as pd
import pytest

from dpkernels import cli
from dpkernels.prose import render_template
from dpkernels.report import REPO_ROOT, Checks, build_report, compare_table, stable_text, write_table
from dpkernels.notebooks import clean_notebook, is_progress_output, notebook_problems
from dpkernels.runner import run_notebook, section_timings, sync_notebook

TINY = '''# %% tags=["parameters"]
profile = "quick"

# %%
print("profile is", profile)
'''

NOISY = '''# %% tags=["parameters"]
profile = "quick"
n = 3

# %%
import time
import warnings

from tqdm import tqdm

for i in tqdm(range(n), desc="inner loop"):
    time.sleep(0.01)
print("n is", n)

# %%
warnings.warn("a stray warning")
print("/home/someone/data.csv")
'''


def _outputs(nb):
    return [o for c in nb.cells for o in c.get("outputs", [])]


def test_runner_writes_a_clean_notebook_under_build_and_progress_to_the_log(tmp_path):
    nbdir = tmp_path / "notebooks"
    nbdir.mkdir()
    (nbdir / "noisy.py").write_text(NOISY)
    result = run_notebook("noisy", "quick", {"n": 5}, notebook_dir=nbdir, out_dir=tmp_path / "build" / "quick")
    assert result.ok, result.error
    assert result.output == tmp_path / "build" / "quick" / "notebooks" / "noisy.ipynb"
    assert sorted(p.name for p in nbdir.iterdir()) == ["noisy.py"]  # nothing written beside the source
    nb = nbformat.read(result.output, as_version=4)
    assert any("n is 5" in o.get("text", "") for o in _outputs(nb))
    assert not any("inner loop" in o.get("text", "") for o in _outputs(nb))  # no progress frame stored
    log = (tmp_path / "build" / "quick" / "papermill" / "noisy.kernel.log").read_text()
    assert "inner loop" in log and "5/5" in log  # the progress went to the kernel log
    # the parameters that produced it are in the metadata, not in an injected cell; the cells are the source's
    assert nb.metadata["papermill"] == {"parameters": {"profile": "quick", "n": 5}}
    assert [c.source for c in nb.cells] == [c.source for c in jupytext.read(nbdir / "noisy.py").cells]
    assert not any(k in c.metadata for c in nb.cells for k in ("papermill", "execution"))
    timings = section_timings(tmp_path / "build" / "quick" / "papermill" / "noisy.ipynb", "noisy")
    assert timings["cells"].sum() == 4 and (timings["seconds"] >= 0).all()  # papermill times the injected cell too
    # the stray warning and the absolute path are reported, not hidden
    assert any("stderr output" in p and "a stray warning" in p for p in result.problems)
    assert any("absolute path '/home/someone" in p for p in result.problems)
    # a second run of the same source gives the same cell ids (diffs show outputs only)
    ids = [c.id for c in nb.cells]
    assert run_notebook("noisy", "quick", {"n": 5}, notebook_dir=nbdir, out_dir=tmp_path / "b2").ok
    assert [c.id for c in nbformat.read(tmp_path / "b2" / "notebooks" / "noisy.ipynb", as_version=4).cells] == ids


def test_clean_notebook_removes_progress_frames_and_the_injected_cell():
    nb = nbformat.v4.new_notebook()
    injected = nbformat.v4.new_code_cell('# Parameters\nprofile = "full"\nseed = 7\n', metadata={"tags": ["injected-parameters"]})
    frames = [nbformat.v4.new_output("stream", name="stderr", text="\rfolds:   0%|          | 0/20 [00:00<?, ?it/s]"),
              nbformat.v4.new_output("stream", name="stderr", text="\rfolds:  50%|#####     | 10/20 [00:01<00:01,  9.1it/s]\n"),
              nbformat.v4.new_output("stream", name="stderr", text="\rsettings: 12it [00:03,  3.93it/s]"),
              nbformat.v4.new_output("stream", name="stderr", text="\n")]
    warning = nbformat.v4.new_output("stream", name="stderr", text="x.py:3: UserWarning: careful\n")
    code = nbformat.v4.new_code_cell("run()", outputs=frames + [warning, nbformat.v4.new_output("stream", name="stdout", text="ok\n")],
                                     metadata={"papermill": {"duration": 1.0}, "execution": {}})
    nb.cells = [nbformat.v4.new_code_cell('profile = "quick"', metadata={"tags": ["parameters"]}), injected, code]
    nb.metadata["papermill"] = {"parameters": {"profile": "full"}, "input_path": "/tmp/x.ipynb", "start_time": "t"}
    assert len(notebook_problems(nb)) == 6  # 4 progress outputs, 1 warning, 1 absolute path in the metadata
    clean_notebook(nb, source="x.py")
    assert [c.source for c in nb.cells] == ['profile = "quick"', "run()"]
    assert [o.get("text") for o in nb.cells[1].outputs] == ["x.py:3: UserWarning: careful\n", "ok\n"]
    # papermill's record wins; the injected cell adds what an older notebook recorded only there
    assert nb.metadata["papermill"] == {"parameters": {"profile": "full", "seed": 7}} and nb.metadata["dpkernels"]["source"] == "x.py"
    assert nb.cells[1].metadata == {}
    assert notebook_problems(nb) == ["cell 1 (%s): stderr output: 'x.py:3: UserWarning: careful'" % nb.cells[1].id]
    assert not is_progress_output(warning) and all(is_progress_output(o) for o in frames)


def test_sync_updates_inputs_keeps_outputs_and_round_trips_with_jupytext(tmp_path):
    nbdir = tmp_path / "notebooks"
    nbdir.mkdir()
    (nbdir / "tiny.py").write_text(TINY)
    result = run_notebook("tiny", "full", notebook_dir=nbdir, out_dir=tmp_path / "build")
    assert result.ok, result.error
    shutil.copy(result.output, nbdir / "tiny.ipynb")
    (nbdir / "tiny.py").write_text(TINY + "\n# %% [markdown]\n# a new note\n")
    sync_notebook("tiny", nbdir)
    nb = nbformat.read(nbdir / "tiny.ipynb", as_version=4)
    assert any("profile is full" in o.get("text", "") for o in _outputs(nb))
    assert nb.cells[-1].source == "a new note" and nb.metadata["papermill"]["parameters"] == {"profile": "full"}
    assert not any("injected-parameters" in c.metadata.get("tags", []) for c in nb.cells)
    # what jupytext writes from the reference notebook is its source, cell for cell
    assert jupytext.writes(nb, fmt="py:percent").split("# %%", 1)[1] == (nbdir / "tiny.py").read_text().split("# %%", 1)[1]


def test_runner_reports_a_failing_notebook(tmp_path):
    nbdir = tmp_path / "nb"
    nbdir.mkdir()
    (nbdir / "bad.py").write_text(TINY + "\n# %%\nraise RuntimeError('boom')\n")
    result = run_notebook("bad", "quick", notebook_dir=nbdir, out_dir=tmp_path / "build")
    assert not result.ok and "boom" in result.error


def test_output_dir_is_under_build_unless_told(monkeypatch, tmp_path):
    from dpkernels import report

    monkeypatch.delenv("DPKERNELS_OUTPUT", raising=False)
    monkeypatch.delenv("DPKERNELS_PROFILE", raising=False)
    monkeypatch.delenv("DPKERNELS_PROFILE_OVERRIDE", raising=False)
    monkeypatch.setattr(report, "BUILD_DIR", tmp_path / "build")
    monkeypatch.setattr(report, "_session_profile", None)
    assert report.output_dir("demo") == tmp_path / "build" / "quick" / "paper_figures" / "demo"
    assert report.output_dir("demo", "full") == tmp_path / "build" / "full" / "paper_figures" / "demo"
    assert report.output_dir("other") == tmp_path / "build" / "full" / "paper_figures" / "other"  # the session's profile
    monkeypatch.setenv("DPKERNELS_OUTPUT", str(tmp_path / "elsewhere"))
    assert report.output_dir("demo") == tmp_path / "elsewhere" / "demo"
    assert not (report.REPO_ROOT / "paper_figures" / "demo").exists()


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
                          "errata": [None, None, None, None, None, "C3", None, None], "min_effect": 0.01})
    write_table(table, "table_1", "demo", out=tmp_path / "demo")
    with pytest.raises(ValueError, match="source"):
        write_table(table.assign(source="guess"), "table_x", "demo", out=tmp_path / "demo")
    with pytest.raises(ValueError, match="se"):
        write_table(table.drop(columns="se"), "table_y", "demo", out=tmp_path / "demo")
    paired = compare_table(table)  # C3 is only a candidate: no hypotheses.csv accepts it (tests/test_report_counting.py)
    assert paired["class"].tolist() == ["differs, unexplained", "agrees", "differs, unexplained"]
    text = build_report(tmp_path).read_text()
    # 1 measured claim; the consistency and target rows are counted apart; 3 published numbers paired (d is not
    # published, e is not reproduced)
    assert "method=a" in text.split("## Differences we cannot explain")[1].split("\n## ")[0]
    totals = pd.read_csv(tmp_path / "totals.csv")  # the same totals, as the README quotes them
    assert totals.set_index("paper").loc["demo", ["measured", "measured holds", "consistency", "target",
                                             "published numbers paired", "agree", "differ, unexplained",
                                             "published numbers not reproduced"]].tolist() == [1, 1, 1, 1, 3, 1, 2, 1]


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
    assert cli.main(["datasets"]) == 1  # KDDCup99 is missing: not ready
    out, err = capsys.readouterr()
    assert "kddcup99" in out and "unavailable" in out and "adult" in out
    assert "not ready: kddcup99 (unavailable)" in err
    Checks("demo").write(tmp_path / "figs" / "demo")
    assert cli.main(["report", "--figures", str(tmp_path / "figs")]) == 0
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


def _reference_pair(tmp_path):
    """A reference and a run of one output folder: checks and a table with and without standard errors."""
    ref, run = tmp_path / "ref", tmp_path / "run"
    for root in (ref, run):
        (root / "demo").mkdir(parents=True)
    checks = pd.DataFrame({"paper": "demo", "id": ["a", "b", "t", "gone"], "claim": ["Lemma 1", "Lemma 2", "Run time", "Lemma 3"],
                           "check": ["x", "y", "wall seconds", "z"], "kind": ["analytic", "measured", "target", "measured"],
                           "bound": ["1", "2", "60", "1"], "measured": ["0.5", "1.5", "30.2", "0.1"],
                           "status": ["holds", "holds", "holds", "holds"], "detail": ""})
    checks.to_csv(ref / "demo" / "checks.csv", index=False)
    moved = checks.iloc[:3].copy()
    moved.loc[1, ["measured", "status"]] = ["2.5", "violated"]  # a measured check moves and flips
    moved.loc[2, "measured"] = "55.0"  # a run time: not compared
    moved.to_csv(run / "demo" / "checks.csv", index=False)
    table = pd.DataFrame({"eps": [0.1, 1.0, 0.1], "source": ["reproduced", "reproduced", "published"],
                          "value": [0.30, 0.20, 0.5], "se": [0.01, 0.0, None], "fit_seconds": [1.0, 2.0, None],
                          "label": ["a", "b", "a"]})
    table.to_csv(ref / "demo" / "table_1.csv", index=False)
    # 0.32 with se 0.01 each: z = 1.4 (reproduces); the exact 0.2 moves to 0.2001; a published row is not ours
    table.assign(value=[0.32, 0.2001, 0.9], fit_seconds=[9.0, 9.0, None]).to_csv(run / "demo" / "table_1.csv", index=False)
    return ref, run


def test_reference_check_uses_the_standard_error_and_names_what_moved(tmp_path):
    from dpkernels.reference import compare_outputs

    ref, run = _reference_pair(tmp_path)
    check = compare_outputs(run, ref, profile="full")
    t = check.table.set_index(["file", "row", "column"])
    assert t.loc[("table_1.csv", "0", "value"), "reproduces"] and abs(t.loc[("table_1.csv", "0", "value"), "z"] - 1.414) < 1e-3
    assert not t.loc[("table_1.csv", "1", "value"), "reproduces"]  # no SE: agreement to 1e-6 relative
    assert ("table_1.csv", "2", "value") not in t.index  # the published row
    assert not any("seconds" in c or c == "se" for c in check.table["column"])  # run times and SEs not compared
    assert ("checks.csv", "t", "measured") not in t.index  # a run-time check
    assert t.loc[("checks.csv", "gone", "measured"), "rule"] == "row not in the run"
    text = check.summary()
    # numbers: checks a, b and gone (bound, measured), table eps x2, value x2; b.measured, gone's two and the
    # exact value moved
    assert "6 of 10 numbers reproduce the reference; these moved: " in text
    assert "demo/checks.csv [b] measured: 1.5 -> 2.5" in text and "demo/table_1.csv [1] value: 0.2 -> 0.2001" in text
    assert "3 of 5 verdicts and text results are unchanged" in text and "[b] status: 'holds' -> 'violated'" in text
    assert "[gone] status: 'holds' -> (missing)" in text


def test_reference_check_names_the_rows_of_a_table_the_run_left_empty(tmp_path):
    """A run whose table has no rows (a step that found nothing) is a difference to name, not a crash: every
    reference row is "not in the run"."""
    from dpkernels.reference import compare_outputs

    ref, run = _reference_pair(tmp_path)
    pd.read_csv(ref / "demo" / "table_1.csv").iloc[:0].to_csv(run / "demo" / "table_1.csv", index=False)
    t = compare_outputs(run, ref, profile="full").table
    gone = t[(t["file"] == "table_1.csv")]
    assert set(gone["row"]) == {"0", "1"} and (gone["rule"] == "row not in the run").all()


def test_reference_check_at_the_quick_profile_compares_analytic_checks_only(tmp_path):
    from dpkernels.reference import compare_outputs

    ref, run = _reference_pair(tmp_path)
    check = compare_outputs(run, ref, profile="quick")
    assert set(check.table["row"]) == {"a"} and check.table["reproduces"].all()
    assert check.summary().startswith("quick profile: only the analytic checks are compared")
    assert "2 of 2 numbers reproduce the reference." in check.summary()


def test_update_reference_copies_a_clean_run_and_refuses_a_dirty_one(tmp_path):
    import json

    from dpkernels.reference import update_reference

    repo, build = tmp_path / "repo", tmp_path / "build"
    (repo / "paper_figures" / "demo").mkdir(parents=True)
    (repo / "paper_figures" / "demo" / "stale.csv").write_text("x\n1\n")
    (repo / "notebooks").mkdir()
    run = build / "full"
    (run / "paper_figures" / "demo").mkdir(parents=True)
    Checks("demo").write(run / "paper_figures" / "demo")
    (run / "notebooks").mkdir()
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell("1", outputs=[nbformat.v4.new_output("stream", name="stdout", text="1\n")])]
    nbformat.write(nb, run / "notebooks" / "demo.ipynb")
    (run / "benchmarks" / "results").mkdir(parents=True)
    pd.DataFrame({"paper": ["demo", "(all)"], "section": ["(notebook total)", "(wall time)"], "seconds": [3.0, 4.0]}).to_csv(
        run / "benchmarks" / "results" / "timings_full.csv", index=False)
    manifest = {"ok": {"demo": True}, "outputs": ["demo"], "complete": True}
    (run / "run.json").write_text(json.dumps(manifest))
    written = update_reference("full", build_dir=build, repo=repo, log=lambda *a: None)
    assert (repo / "notebooks" / "demo.ipynb").exists() and (repo / "paper_figures" / "demo" / "checks.csv").exists()
    assert not (repo / "paper_figures" / "demo" / "stale.csv").exists()  # the folder is the run's
    assert (repo / "paper_figures" / "REPORT.md") in written
    assert pd.read_csv(repo / "benchmarks" / "results" / "timings_full.csv")["seconds"].tolist() == [3.0, 4.0]
    nb.cells[0].outputs.append(nbformat.v4.new_output("stream", name="stderr", text="UserWarning: stray\n"))
    nbformat.write(nb, run / "notebooks" / "demo.ipynb")
    with pytest.raises(RuntimeError, match="not clean"):
        update_reference("full", build_dir=build, repo=repo, log=lambda *a: None)
    (run / "run.json").write_text(json.dumps({**manifest, "ok": {"demo": False}}))
    with pytest.raises(RuntimeError, match="failed"):
        update_reference("full", build_dir=build, repo=repo, log=lambda *a: None)


def test_update_reference_copies_each_output_from_its_reference_profile(tmp_path):
    """The frontier's reference is the scale run: a full run (which runs a small frontier) leaves it alone, and a
    scale run replaces only it."""
    import json

    from dpkernels.reference import reference_profile, update_reference

    assert reference_profile("frontier") == "scale" and reference_profile("demo") == "full"
    repo, build = tmp_path / "repo", tmp_path / "build"
    (repo / "notebooks").mkdir(parents=True)
    for profile in ("full", "scale"):
        run = build / profile
        papers = ["demo", "frontier"] if profile == "full" else ["frontier"]
        (run / "notebooks").mkdir(parents=True)
        for paper in papers:
            c = Checks(paper)
            c.at_most("Lemma 1", f"{profile} run", kind="analytic", bound=1.0, measured=0.5, id="l1")
            c.write(run / "paper_figures" / paper)
            nbformat.write(nbformat.v4.new_notebook(), run / "notebooks" / f"{paper}.ipynb")
        (run / "run.json").write_text(json.dumps({"ok": {p: True for p in papers}, "outputs": papers, "complete": True}))
    update_reference("full", build_dir=build, repo=repo, log=lambda *a: None)
    assert (repo / "paper_figures" / "demo" / "checks.csv").exists() and (repo / "notebooks" / "demo.ipynb").exists()
    assert not (repo / "paper_figures" / "frontier").exists() and not (repo / "notebooks" / "frontier.ipynb").exists()
    update_reference("scale", build_dir=build, repo=repo, log=lambda *a: None)
    assert "scale run" in (repo / "paper_figures" / "frontier" / "checks.csv").read_text()
    assert (repo / "notebooks" / "frontier.ipynb").exists()


def test_update_reference_leaves_another_profiles_values_to_its_update(tmp_path):
    """The prose quotes both references: a full update renders the frontier's values (written only at scale) as n/a
    and says which update fills them, a scale update fills them; a value of the update's own outputs that is missing
    is refused, nothing written."""
    import json

    from dpkernels.reference import reference_source_profile, update_reference

    assert [reference_source_profile(r) for r in ("frontier:F-x.status", "paper_figures/frontier/q.csv?id=a#b",
                                                  "paper_figures/totals.csv?paper=yu2020#agree", "demo:l1.bound",
                                                  "paper_figures/totals.csv?paper=demo#agree",
                                                  "benchmarks/results/x.json#y")] == [
        "scale", "scale", "scale", "full", "full", "full"]
    repo, build = tmp_path / "repo", tmp_path / "build"
    (repo / "notebooks").mkdir(parents=True)
    (repo / "docs").mkdir()
    (repo / "docs" / "README.md").write_text("demo {{ demo:l1.status }}, frontier {{ frontier:l1.status }}\n")
    for profile, papers in (("full", ["demo"]), ("scale", ["frontier"])):
        run = build / profile
        (run / "notebooks").mkdir(parents=True)
        for paper in papers:
            c = Checks(paper)
            c.at_most("Lemma 1", f"{profile} run", kind="analytic", bound=1.0, measured=0.5, id="l1")
            c.write(run / "paper_figures" / paper)
            nbformat.write(nbformat.v4.new_notebook(), run / "notebooks" / f"{paper}.ipynb")
        (run / "run.json").write_text(json.dumps({"ok": {p: True for p in papers}, "outputs": papers, "complete": True}))
    logged: list[str] = []
    with pytest.warns(UserWarning, match="rendered as n/a"):
        update_reference("full", build_dir=build, repo=repo, log=logged.append)
    assert (repo / "README.md").read_text() == "demo holds, frontier n/a\n"
    assert any("n/a until `dpkernels update-reference --profile scale`" in m for m in logged)
    update_reference("scale", build_dir=build, repo=repo, log=lambda *a: None)
    assert (repo / "README.md").read_text() == "demo holds, frontier holds\n"
    (repo / "docs" / "README.md").write_text("{{ demo:l2.status }}\n")  # the full run's own value is missing
    with pytest.raises(RuntimeError, match="the prose would quote a value this run does not have"):
        update_reference("full", build_dir=build, repo=repo, log=lambda *a: None)
    assert (repo / "README.md").read_text() == "demo holds, frontier holds\n"


def test_update_reference_copies_only_the_papers_named(tmp_path):
    """``papers_only``: one paper of a run whose other notebook is not clean is copied, the other is not, and the
    unclean one still refuses; a paper the run does not hold is refused."""
    import json

    from dpkernels.reference import update_reference

    repo, build = tmp_path / "repo", tmp_path / "build"
    (repo / "notebooks").mkdir(parents=True)
    run = build / "scale"
    (run / "notebooks").mkdir(parents=True)
    for paper in ("frontier", "yu2020"):
        c = Checks(paper)
        c.at_most("Lemma 1", "scale run", kind="analytic", bound=1.0, measured=0.5, id="l1")
        c.write(run / "paper_figures" / paper)
        nb = nbformat.v4.new_notebook()
        if paper == "yu2020":  # stray stderr output: not clean
            cell = nbformat.v4.new_code_cell("1")
            cell.outputs = [nbformat.v4.new_output("stream", name="stderr", text="UserWarning: a worker stopped\n")]
            nb.cells = [cell]
        nbformat.write(nb, run / "notebooks" / f"{paper}.ipynb")
    (run / "run.json").write_text(json.dumps({"ok": {"frontier": True, "yu2020": True}, "outputs": ["frontier", "yu2020"],
                                              "complete": True}))
    with pytest.raises(RuntimeError, match="not clean"):
        update_reference("scale", build_dir=build, repo=repo, log=lambda *a: None)
    assert not (repo / "paper_figures").exists()
    with pytest.raises(RuntimeError, match="has no paper"):
        update_reference("scale", build_dir=build, repo=repo, log=lambda *a: None, papers_only=["hall2013"])
    update_reference("scale", build_dir=build, repo=repo, log=lambda *a: None, papers_only=["frontier"])
    assert (repo / "paper_figures" / "frontier" / "checks.csv").exists() and (repo / "notebooks" / "frontier.ipynb").exists()
    assert not (repo / "paper_figures" / "yu2020").exists() and not (repo / "notebooks" / "yu2020.ipynb").exists()
    with pytest.raises(RuntimeError, match="not clean"):
        update_reference("scale", build_dir=build, repo=repo, log=lambda *a: None, papers_only=["yu2020"])


def test_a_scale_update_rederives_what_reads_the_frontier(tmp_path, monkeypatch):
    """After a scale run's frontier results are copied, update-reference rewrites what is derived from them (ba45845's
    fresh-clone make test caught three such files stale): in a workbook holding the committed frontier results and
    stale derived files, :func:`regenerate_derived` writes offgrid.csv and interval_coverage.csv equal to the committed
    ones and the utility table from the results (its configurations cut to six for time; a threshold other than the
    constant is logged, not changed); a full update does not call it, a scale update does."""
    import json

    from dpkernels import reference
    from dpkernels._validation import UTILITY_RATIO_THRESHOLD
    from dpkernels.experiments import utility_calibration as U
    from dpkernels.recommendation import COVERAGE_FILE

    repo = tmp_path / "repo"
    committed = REPO_ROOT / "paper_figures"
    (repo / "paper_figures" / "frontier").mkdir(parents=True)
    for path in (committed / "frontier").glob("*.csv"):
        (repo / "paper_figures" / "frontier" / path.name).symlink_to(path)
    rec = repo / "paper_figures" / "recommend"
    rec.mkdir()
    shutil.copy(committed / "recommend" / "offgrid_runs.csv", rec)
    (rec / "offgrid.csv").write_text("stale\n")
    (rec / COVERAGE_FILE).write_text("stale\n")
    data = repo / "lib" / "dpkernels" / "data"
    data.mkdir(parents=True)
    (data / U.CALIBRATION_FILE).write_text("stale\n")
    real = U.calibration_table

    def six(summary: pd.DataFrame, dims: dict) -> pd.DataFrame:  # three configurations that learned, three not
        rows = summary[summary.mechanism.isin(U.RATIO_MECHANISMS)]
        learned = rows.beats_majority == "holds"
        return real(pd.concat([rows[learned].head(3), rows[~learned].head(3)]), dims)

    monkeypatch.setattr(U, "calibration_table", six)
    logged: list[str] = []
    written = reference.regenerate_derived(repo, log=logged.append)
    assert set(written) == {data / U.CALIBRATION_FILE, rec / "offgrid.csv", rec / COVERAGE_FILE}
    for name in ("offgrid.csv", COVERAGE_FILE):
        pd.testing.assert_frame_equal(pd.read_csv(rec / name), pd.read_csv(committed / "recommend" / name))
    table = pd.read_csv(data / U.CALIBRATION_FILE)
    keys = ["dataset", "mechanism", "n_train", "epsilon"]
    assert len(table) == 6
    pd.testing.assert_frame_equal(table, U.committed_table().merge(table[keys], on=keys)[table.columns]
                                  .sort_values(["ratio", "dataset", "mechanism"]).reset_index(drop=True))
    assert any("calibrated threshold is now" in m for m in logged) == (U.threshold(table) != UTILITY_RATIO_THRESHOLD)
    (rec / "offgrid_runs.csv").write_text(pd.read_csv(rec / "offgrid_runs.csv").assign(mechanism="amp").to_csv(index=False))
    logged.clear()
    reference.regenerate_derived(repo, log=logged.append)
    assert any(m.startswith("not derived") and "rerun the off-grid points" in m for m in logged)
    pd.testing.assert_frame_equal(pd.read_csv(rec / "offgrid.csv"), pd.read_csv(committed / "recommend" / "offgrid.csv"))

    calls: list[Path] = []
    monkeypatch.setattr(reference, "regenerate_derived", lambda repo, log: calls.append(repo) or [])
    repo2, build = tmp_path / "repo2", tmp_path / "build"
    (repo2 / "notebooks").mkdir(parents=True)
    for profile, papers in (("full", ["demo", "frontier"]), ("scale", ["frontier", "yu2020"])):
        run = build / profile
        (run / "notebooks").mkdir(parents=True)
        for paper in papers:
            Checks(paper).write(run / "paper_figures" / paper)
            nbformat.write(nbformat.v4.new_notebook(), run / "notebooks" / f"{paper}.ipynb")
        (run / "run.json").write_text(json.dumps({"ok": {p: True for p in papers}, "outputs": papers, "complete": True}))
    reference.update_reference("full", build_dir=build, repo=repo2, log=lambda *a: None)  # copies demo, not frontier
    assert (repo2 / "paper_figures" / "demo").exists() and calls == []
    reference.update_reference("scale", build_dir=build, repo=repo2, log=lambda *a: None, papers_only=["yu2020"])
    assert calls == []
    reference.update_reference("scale", build_dir=build, repo=repo2, log=lambda *a: None)
    assert calls == [repo2]


def test_cli_version_list_and_parameters(capsys):
    with pytest.raises(SystemExit) as exc:
        cli.main(["--version"])
    assert exc.value.code == 0 and capsys.readouterr().out.startswith("dpkernels ")
    assert cli.main(["list"]) == 0
    out = capsys.readouterr().out
    for paper in ("rubinstein2012", "chaudhuri2011", "hall2013", "bassily2022", "park2022", "frontier"):
        assert f"{paper}: " in out and f"notebooks/{paper}.py" in out
    assert "calib_mc_draws" in out and "1000000" in out  # a size with its quick and full values
    assert cli.parse_parameters(["seed=7", "sizes={audit_releases: 1000}", "eps=[0.1, 1]"]) == {
        "seed": 7, "sizes": {"audit_releases": 1000}, "eps": [0.1, 1]}
    assert cli.main(["run", "hall2013", "-p", "no equals sign"]) == 2
    assert cli.main(["run", "no-such-paper"]) == 2


@pytest.mark.parametrize("paper", sorted(p.stem for p in (REPO_ROOT / "notebooks").glob("*.ipynb")))
def test_reference_notebooks_hold_no_progress_frames_stray_output_or_absolute_paths(paper):
    from dpkernels.reference import reference_profile

    nb = nbformat.read(REPO_ROOT / "notebooks" / f"{paper}.ipynb", as_version=4)
    problems = notebook_problems(nb, (str(REPO_ROOT), str(Path.home())))
    assert not problems, "\n".join(problems)
    assert not any("injected-parameters" in c.metadata.get("tags", []) for c in nb.cells)
    # the papers' reference is the full profile, the frontier's the scale profile
    assert nb.metadata.get("papermill", {}).get("parameters", {}).get("profile") == reference_profile(paper)


def test_timings_of_a_partial_run_replace_their_papers_rows_in_place(tmp_path):
    from dpkernels.reference import _merge_timings

    old = pd.DataFrame({"paper": ["a", "a", "b", "a", "b", "(all)"],
                        "section": ["s1", "s2", "s1", "(notebook total)", "(notebook total)", "(wall time)"],
                        "cells": ["1", "2", "3", "", "", ""], "seconds": ["1.0", "2.0", "3.0", "3.5", "3.1", "7.0"],
                        "jobs": ["", "", "", "", "", "2"]})
    old.to_csv(tmp_path / "old.csv", index=False)
    new = pd.DataFrame({"paper": ["a", "a", "(all)"], "section": ["s1", "(notebook total)", "(wall time)"],
                        "cells": ["4", "", ""], "seconds": ["9.0", "9.5", "9.6"], "jobs": ["", "", "1"]})
    new.to_csv(tmp_path / "new.csv", index=False)
    _merge_timings(tmp_path / "new.csv", tmp_path / "old.csv", ["a"], complete=False)
    merged = pd.read_csv(tmp_path / "old.csv", dtype=str, keep_default_na=False)
    assert merged["paper"].tolist() == ["a", "b", "a", "b", "(all)"]
    assert merged["seconds"].tolist() == ["9.0", "3.0", "9.5", "3.1", "7.0"]  # the old wall time stays
    assert merged["cells"].tolist()[:2] == ["4", "3"]  # counts stay integers


CHECKED = '''# %% tags=["parameters"]
profile = "quick"

# %%
import pandas as pd
from dpkernels.report import Checks, output_dir, write_table

checks = Checks("demo")
checks.at_most("Lemma 1", "a bound", kind="analytic", bound=1.0, measured=0.5, id="l1")
checks.at_most("Lemma 2", "a simulation", kind="measured", bound=1.0, measured=0.25 if profile == "full" else 0.75, id="l2")
checks.write()
write_table(pd.DataFrame({"k": ["x"], "source": ["reproduced"], "value": [0.5], "se": [0.0]}), "table_1", "demo")
print(output_dir("demo").name)
'''


def test_reproduce_writes_only_under_build_and_ends_with_the_reference_check(tmp_path, capsys):
    from dpkernels.runner import reproduce

    nbdir, repo = tmp_path / "notebooks", tmp_path / "repo"
    nbdir.mkdir()
    (nbdir / "demo.py").write_text(CHECKED)
    (nbdir / "demo.ipynb").write_text("{}")  # a paper is a .py with its executed reference
    ref = repo / "paper_figures" / "demo"
    ref.mkdir(parents=True)
    c = Checks("demo")
    c.at_most("Lemma 1", "a bound", kind="analytic", bound=1.0, measured=0.5, id="l1")
    c.at_most("Lemma 2", "a simulation", kind="measured", bound=1.0, measured=0.25, id="l2")
    c.write(ref)
    pd.DataFrame({"k": ["x"], "source": ["reproduced"], "value": [0.5], "se": [0.0]}).to_csv(ref / "table_1.csv", index=False)
    before = {p: p.read_bytes() for p in tmp_path.rglob("*") if p.is_file()}
    assert reproduce("full", jobs=1, progress=False, notebook_dir=nbdir, build_dir=tmp_path / "build", reference=repo) == 0
    out = capsys.readouterr().out
    assert "5 of 5 numbers reproduce the reference." in out and "3 of 3 verdicts and text results are unchanged" in out  # statuses, the key "x"
    after = {p: p.read_bytes() for p in tmp_path.rglob("*") if p.is_file() and "build" not in p.relative_to(tmp_path).parts}
    assert after == before  # nothing outside build/ was written
    run = tmp_path / "build" / "full"
    assert (run / "paper_figures" / "demo" / "checks.csv").exists() and (run / "notebooks" / "demo.ipynb").exists()
    assert pd.read_csv(run / "reference_check.csv")["reproduces"].all()
    timings = pd.read_csv(run / "benchmarks" / "results" / "timings_full.csv")
    wall = timings[timings["section"] == "(wall time)"].iloc[0]  # the run time is stated with the machine's load
    assert wall["jobs"] == 1 and wall["load_start"] >= 0 and wall["load_end"] >= 0
    # the quick profile compares only the analytic check (its simulation runs another size)
    assert reproduce("quick", jobs=1, progress=False, notebook_dir=nbdir, build_dir=tmp_path / "build", reference=repo) == 0
    out = capsys.readouterr().out
    assert "only the analytic checks are compared" in out and "2 of 2 numbers reproduce the reference." in out


def test_reference_check_skips_our_timings_of_not_comparable_rows(tmp_path):
    """A published timing typed 'not comparable' (another machine) makes our timing of that row machine-dependent
    too: it is not compared (Park's Table 7.2)."""
    import pandas as pd

    from dpkernels.reference import compare_outputs

    def table(ours):
        return pd.DataFrame([
            {"method": "A", "source": "published", "value": 4.7, "class_override": "not comparable", "note": "machine"},
            {"method": "A", "source": "reproduced", "value": ours, "class_override": "", "note": ""},
            {"method": "B", "source": "published", "value": 0.9, "class_override": "", "note": ""},
            {"method": "B", "source": "reproduced", "value": 0.91, "class_override": "", "note": ""},
        ])

    for root, ours in ((tmp_path / "ref", 0.15), (tmp_path / "run", 0.25)):
        (root / "p").mkdir(parents=True)
        table(ours).to_csv(root / "p" / "table_7_2.csv", index=False)
    check = compare_outputs(tmp_path / "run", tmp_path / "ref", ["p"])
    numbers = check.numbers
    assert len(numbers) == 1 and bool(numbers["reproduces"].all())  # only row B's value, which agrees


def test_reference_check_leaves_out_checks_about_time_and_memory():
    """A check whose claim is a fit time, run time, wall time or memory is machine-dependent: never compared."""
    from dpkernels.reference import MACHINE_CHECKS

    for text in ("median fit time in this run, ours / diffprivlib's", "Run time (full profile)", "wall seconds",
                 "peak memory against the training matrix"):
        assert MACHINE_CHECKS.search(text), text
    assert not MACHINE_CHECKS.search("Theorem 18's excess risk at this time step count")  # 'time' alone is not enough
    from dpkernels.reference import MACHINE_COLUMNS

    assert all(MACHINE_COLUMNS.search(c) for c in ("fit_seconds", "peak_mb", "load_start", "load_end", "wall_time"))
    assert not any(MACHINE_COLUMNS.search(c) for c in ("error", "n_train", "download", "epsilon"))


BLANK_AT_QUICK = '''# %% tags=["parameters"]
profile = "quick"

# %%
import pandas as pd
from dpkernels.report import Checks, output_dir, write_table

checks = Checks("{paper}")
checks.at_most("Lemma 1", "a bound", kind="analytic", bound=1.0, measured={measured}, id="l1")
checks.write()
# like Park's Table 7.3 at the quick profile: a standard error left blank
pd.DataFrame({{"k": ["x"], "se": ["" if profile == "quick" else "0.5"]}}).to_csv(output_dir("{paper}") / "t.csv", index=False)
'''


def _workbook(tmp_path):
    """A repository with two papers, their reference and a prose template quoting both."""
    nbdir, repo = tmp_path / "notebooks", tmp_path / "repo"
    nbdir.mkdir()
    (repo / "docs").mkdir(parents=True)
    for paper, measured in (("a", 0.25), ("b", 0.5)):
        (nbdir / f"{paper}.py").write_text(BLANK_AT_QUICK.format(paper=paper, measured=measured))
        (nbdir / f"{paper}.ipynb").write_text("{}")
        c = Checks(paper)
        c.at_most("Lemma 1", "a bound", kind="analytic", bound=1.0, measured=measured, id="l1")
        c.write(repo / "paper_figures" / paper)
        pd.DataFrame({"k": ["x"], "se": ["0.5"]}).to_csv(repo / "paper_figures" / paper / "t.csv", index=False)
    (repo / "docs" / "README.md").write_text("a {{ a:l1.measured }} se {{ paper_figures/a/t.csv?k=x#se | .3f }}\n"
                                             "b {{ b:l1.measured }} se {{ paper_figures/b/t.csv?k=x#se | .3f }}\n")
    return nbdir, repo


def test_a_run_renders_blank_values_as_na_and_only_from_its_own_outputs(tmp_path, capsys):
    """Issue 25: `dpkernels run park2022` died rendering a blank value, and so did a later `dpkernels run hall2013`
    (it read park2022's stale folder in the same build)."""
    import json

    from dpkernels.runner import reproduce

    nbdir, repo = _workbook(tmp_path)
    build = tmp_path / "build"
    assert reproduce("quick", ["a"], progress=False, notebook_dir=nbdir, build_dir=build, reference=repo) == 0
    out = capsys.readouterr().out
    assert (build / "quick" / "README.md").read_text() == "a 0.25 se n/a\nb 0.5 se 0.500\n"
    assert "prose: 1 reference(s) have no value in this run and read n/a" in out and "docs/README.md:1:" in out
    assert json.loads((build / "quick" / "run.json").read_text())["prose_gaps"] == [
        "docs/README.md:1: {{ paper_figures/a/t.csv?k=x#se | .3f }} is blank in paper_figures/a/t.csv "
        f"(under {build / 'quick'})"]
    (build / "quick" / "paper_figures" / "a" / "checks.csv").write_text("stale, unreadable")  # an older version's
    assert reproduce("quick", ["b"], progress=False, notebook_dir=nbdir, build_dir=build, reference=repo) == 0
    assert (build / "quick" / "README.md").read_text() == "a 0.25 se 0.500\nb 0.5 se n/a\n"  # a: the reference's
    report = (build / "quick" / "paper_figures" / "REPORT.md").read_text()
    assert "\n## b\n" in report and "\n## a\n" not in report  # the report is this run's
    assert pd.read_csv(build / "quick" / "paper_figures" / "totals.csv")["paper"].tolist() == ["b"]


def test_update_reference_refuses_a_run_whose_prose_has_a_gap(tmp_path):
    import json

    from dpkernels.reference import update_reference
    from dpkernels.runner import reproduce

    nbdir, repo = _workbook(tmp_path)
    (repo / "notebooks").mkdir()
    build = tmp_path / "build"
    (nbdir / "a.py").write_text((nbdir / "a.py").read_text().replace('profile == "quick"', "True"))  # blank at full too
    assert reproduce("full", ["a"], progress=False, notebook_dir=nbdir, build_dir=build, reference=repo) == 0
    assert json.loads((build / "full" / "run.json").read_text())["prose_gaps"]
    before = {p: p.read_bytes() for p in repo.rglob("*") if p.is_file()}
    with pytest.raises(RuntimeError, match=r"the prose would quote a value this run does not have.*docs/README.md:1: "
                                           r"\{\{ paper_figures/a/t.csv\?k=x#se \| \.3f \}\} is blank"):
        update_reference("full", build_dir=build, repo=repo, log=lambda *a: None)
    assert {p: p.read_bytes() for p in repo.rglob("*") if p.is_file()} == before  # nothing written


def test_cli_finds_the_workbook_by_option_environment_or_directory(tmp_path, monkeypatch, capsys):
    from dpkernels import workbook

    monkeypatch.delenv(workbook.ROOT_ENV, raising=False)
    monkeypatch.setattr(workbook, "_PACKAGE_CHECKOUT", tmp_path / "site-packages")  # as a wheel: no checkout
    monkeypatch.chdir(tmp_path)
    assert cli.main(["list"]) == 2  # a non-editable install outside a clone: a clear message, not an empty list
    err = capsys.readouterr().err
    assert "dpkernels list: no dpkernels workbook found" in err and "--root PATH" in err and "DPKERNELS_ROOT" in err
    assert cli.main(["run", "hall2013"]) == 2 and "no dpkernels workbook found" in capsys.readouterr().err
    assert cli.main(["list", "--root", str(tmp_path)]) == 2 and "is not a dpkernels workbook" in capsys.readouterr().err
    for argv, env, cwd in ((["list", "--root", str(REPO_ROOT)], None, tmp_path),
                           (["--root", str(REPO_ROOT), "list"], None, tmp_path),
                           (["list"], str(REPO_ROOT), tmp_path),
                           (["list"], None, REPO_ROOT / "notebooks")):  # the nearest parent that is a workbook
        if env:
            monkeypatch.setenv(workbook.ROOT_ENV, env)
        monkeypatch.chdir(cwd)
        assert cli.main(argv) == 0, argv
        out = capsys.readouterr().out
        assert f"workbook: {REPO_ROOT}" in out and out.count("  notebook: notebooks/") == len(list((REPO_ROOT / "notebooks").glob("*.py"))), argv
        monkeypatch.delenv(workbook.ROOT_ENV, raising=False)


def test_cli_names_the_extras_a_command_needs(monkeypatch, capsys):
    """`dpkernels site` from a wheel without the docs extra: what to install, not a ModuleNotFoundError."""
    monkeypatch.setitem(sys.modules, "nbformat", None)  # import nbformat now raises ModuleNotFoundError
    monkeypatch.setitem(sys.modules, "sphinx", None)
    assert cli.main(["site", "--root", str(REPO_ROOT), "--out", "/nonexistent/never-written"]) == 1
    err = capsys.readouterr().err
    assert "dpkernels site needs the Python package" in err and 'pip install "dpkernels[docs,notebooks]"' in err


def test_cli_report_refuses_prose_with_a_gap(tmp_path, capsys):
    """The repository's prose allows no n/a: `dpkernels report` names the template line and writes nothing."""
    (tmp_path / "notebooks").mkdir()
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "dpkernels"\n')
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "README.md").write_text("fine {{ demo:l1.bound }}\nblank {{ demo:l1.measured | .2f }}\n")
    (tmp_path / "paper_figures" / "demo").mkdir(parents=True)
    pd.DataFrame({"paper": ["demo"], "id": ["l1"], "kind": ["analytic"], "bound": ["1"], "measured": [""],
                  "status": ["skipped"]}).to_csv(tmp_path / "paper_figures" / "demo" / "checks.csv", index=False)
    assert cli.main(["report", "--root", str(tmp_path)]) == 1
    assert "prose not rendered: docs/README.md:2: {{ demo:l1.measured | .2f }} is blank" in capsys.readouterr().err
    assert not (tmp_path / "README.md").exists()


def test_a_relative_build_dir_is_the_callers_not_the_kernels(tmp_path, monkeypatch):
    """`dpkernels reproduce --build-dir build/ci` (make test): the kernel runs in notebooks/, so a relative output
    folder handed to it would land in notebooks/build/."""
    from dpkernels.runner import reproduce

    nbdir, repo = _workbook(tmp_path)
    monkeypatch.chdir(tmp_path)
    assert reproduce("quick", ["a"], progress=False, notebook_dir=nbdir, build_dir=Path("build/ci"), reference=repo) == 0
    assert (tmp_path / "build" / "ci" / "quick" / "paper_figures" / "a" / "t.csv").exists()
    assert not (nbdir / "build").exists()


def test_a_run_starts_the_longest_notebooks_first(tmp_path):
    """Two slots, notebooks dispatched alphabetically: the full profile's chaudhuri2011 (about half the total time)
    started beside bassily2022 and the other five queued in one slot.  A run now dispatches by the committed notebook
    times, longest first (Graham's rule), a notebook without a committed time before them."""
    from dpkernels.runner import longest_first

    results = tmp_path / "benchmarks" / "results"
    results.mkdir(parents=True)
    pd.DataFrame({"paper": ["bassily2022", "chaudhuri2011", "hall2013", "park2022", "(all)"],
                  "section": ["(notebook total)"] * 4 + ["(wall time)"],
                  "seconds": [136.0, 1018.0, 58.0, 478.0, 1028.0]}).to_csv(results / "timings_full.csv", index=False)
    papers = ["bassily2022", "chaudhuri2011", "hall2013", "new2026", "park2022"]
    assert longest_first(papers, tmp_path, "full") == ["new2026", "chaudhuri2011", "park2022", "bassily2022",
                                                        "hall2013"]
    assert longest_first(papers, tmp_path, "quick") == sorted(papers)  # no committed times: alphabetical
