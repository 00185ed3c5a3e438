"""ERRATA.md and README.md quote numbers from output files: they must equal the rendering of their templates, every
reference must resolve against a quick build, and a value a run leaves blank renders as n/a, never as a crash."""

from __future__ import annotations

import os
import re
import warnings
from pathlib import Path

import pandas as pd
import pytest

from dpkernels.prose import NA, PROSE_TEMPLATES, Source, UnresolvedReference, render_template, resolve_reference
from dpkernels.report import REPO_ROOT, build_report

#: A folder laid out like ``paper_figures/`` holding every paper's outputs at the quick profile: ``make test`` points
#: it at what nbval's run of every notebook wrote (build/nbval-figures).
QUICK_BUILD_ENV = "DPKERNELS_QUICK_BUILD"


@pytest.mark.parametrize("template,rendered", sorted(PROSE_TEMPLATES.items()))
def test_prose_is_the_rendering_of_its_template(template, rendered):
    text = render_template((REPO_ROOT / template).read_text(), REPO_ROOT, template=template)
    assert (REPO_ROOT / rendered).read_text() == text, f"{rendered} is stale or edited by hand: edit {template}, run 'dpkernels report'"


def _folder(root: Path, paper: str, **tables: pd.DataFrame) -> None:
    (root / "paper_figures" / paper).mkdir(parents=True, exist_ok=True)
    for name, df in tables.items():
        df.to_csv(root / "paper_figures" / paper / f"{name}.csv", index=False)


def test_a_gap_renders_na_in_a_run_and_raises_in_the_reference(tmp_path):
    """The quick-profile crash of issue 25: a blank cell under a numeric format ('Unknown format code 'f' for object
    of type 'str'')."""
    run, ref = tmp_path / "run", tmp_path / "ref"
    _folder(run, "p", t=pd.DataFrame({"k": ["a", "b"], "se": ["", "0.25"], "word": ["holds", "x"]}))
    _folder(ref, "p", t=pd.DataFrame({"k": ["a", "b", "c"], "se": ["0.5", "0.5", "0.125"], "word": ["holds", "x", "y"]}))
    text = ("a {{ paper_figures/p/t.csv?k=a#se | .3f }}\nb {{ paper_figures/p/t.csv?k=b#se | .2f }}\n"
            "c {{ paper_figures/p/t.csv?k=c#se | .3f }}\nw {{ paper_figures/p/t.csv?k=a#word | .3f }}\n"
            "z {{ paper_figures/p/t.csv?k=z#se }}")
    gaps = []
    with pytest.warns(UserWarning) as record:
        out = render_template(text, [run, ref], gaps=gaps, template="x.md")
    assert [str(w.message) for w in record] == [f"{g}; rendered as {NA}" for g in gaps]
    assert re.match(r"x\.md:1: \{\{ paper_figures/p/t\.csv\?k=a#se \| \.3f \}\} is blank in paper_figures/p/t\.csv",
                    str(record[0].message))
    # a's blank is the run's own: n/a, not the reference's 0.5; c is not in the run: the reference's; a word under a
    # numeric format and a row no source has are gaps too
    assert out == f"a {NA}\nb 0.25\nc 0.125\nw {NA}\nz {NA}"
    assert [(g.line, g.reason.split(" ")[0]) for g in gaps] == [(1, "is"), (4, "holds"), (5, "no")]
    with pytest.raises(UnresolvedReference, match=r"x\.md:1: .* is blank"):  # the repository's prose allows no gap
        render_template(text, [run, ref], template="x.md")
    with pytest.raises(UnresolvedReference, match="matches 3 rows"):
        resolve_reference("paper_figures/p/t.csv?#se", ref)


def test_a_source_restricted_to_its_outputs_leaves_other_folders_and_rows_to_the_next(tmp_path):
    run, ref = tmp_path / "run", tmp_path / "ref"
    for root, value in ((run, "stale"), (ref, "reference")):
        _folder(root, "old", checks=pd.DataFrame({"id": ["x"], "measured": [value]}))
        _folder(root, "new", checks=pd.DataFrame({"id": ["x"], "measured": [f"{value} new"]}))
        pd.DataFrame({"paper": ["old", "new"], "n": [f"{value} old n", f"{value} new n"]}).to_csv(
            root / "paper_figures" / "totals.csv", index=False)
    sources = [Source(run, frozenset({"new"})), Source(ref)]
    assert resolve_reference("old:x.measured", sources) == "reference"  # an earlier run's folder is not this run's
    assert resolve_reference("new:x.measured", sources) == "stale new"
    assert resolve_reference("paper_figures/totals.csv?paper=old#n", sources) == "reference old n"
    assert resolve_reference("paper_figures/totals.csv?paper=new#n", sources) == "stale new n"
    assert resolve_reference("old:x.measured", [run, ref]) == "stale"  # unrestricted: everything of the folder


def _references(text: str) -> list[str]:
    return re.findall(r"\{\{\s*([^{}]+?)\s*\}\}", text)


@pytest.mark.skipif(not os.environ.get(QUICK_BUILD_ENV),
                    reason=f"needs a quick build of every notebook in ${QUICK_BUILD_ENV} (make test runs it after nbval)")
def test_every_template_reference_resolves_against_a_quick_build(tmp_path):
    """Every reference of docs/README.md and docs/ERRATA.md, rendered as a quick run renders its prose (its own
    outputs first, the reference for what it does not produce): nothing raises, and a gap is only a value the quick
    profile leaves blank in a file and row the notebook writes (never a file, row or column that does not exist)."""
    figures = Path(os.environ[QUICK_BUILD_ENV])
    outputs = sorted(p.name for p in figures.iterdir() if (p / "checks.csv").exists())
    assert {"rubinstein2012", "chaudhuri2011", "hall2013", "bassily2022", "park2022", "frontier"} <= set(outputs)
    build = tmp_path / "build"
    (build / "paper_figures").mkdir(parents=True)
    for name in outputs:
        (build / "paper_figures" / name).symlink_to(figures / name, target_is_directory=True)
    build_report(build / "paper_figures")
    gaps, counted = [], 0
    for template in PROSE_TEMPLATES:
        text = (REPO_ROOT / template).read_text()
        counted += len(_references(text))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)
            render_template(text, [Source(build, frozenset(outputs)), Source(REPO_ROOT)], gaps=gaps, template=template)
    assert counted > 500
    not_blank = [str(g) for g in gaps if not (g.reason.startswith("is blank in ") and g.reason.endswith(f"(under {build})"))]
    assert not_blank == [], "\n".join(not_blank)
