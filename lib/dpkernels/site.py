"""The documentation site (``dpkernels site``, ``make site``): the executed notebooks, the API reference and the
report as a dashboard, built with Sphinx (PyData theme, numpydoc, myst-nb) into ``build/site/html/``.

The site is built from the committed reference and never executes a notebook: the sources in ``docs/site/``
are copied to ``build/site/src/`` together with

* ``notebooks/<paper>.ipynb``: the reference notebooks, each code cell that prints a check's verdict marked
  with the anchor ``check-<id>`` and each cell that shows a figure with ``figure-<n>`` (cell metadata read by the
  small Sphinx extension in ``docs/site/conf.py``, which gives the cell's HTML element those ids);
* ``dashboard.md``: from every ``paper_figures/<output>/checks.csv``, the verdict counts per paper (measured
  claims apart from analytic, consistency and target rows) and every check with links to the cell that shows
  its verdict and to the figures of the same notebook section (:func:`claim_links`);
* ``errata.md``: the rendered ``ERRATA.md``.
"""

from __future__ import annotations

import html
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from dpkernels.report import BUILD_DIR, KINDS, PAPER_TITLES, REPO_ROOT, STATUSES

__all__ = ["SITE_SOURCES", "ANCHOR_KEY", "CellLinks", "claim_links", "dashboard", "build_site"]

SITE_SOURCES = REPO_ROOT / "docs" / "site"
#: Cell metadata key holding the HTML ids a notebook cell gets on the site.
ANCHOR_KEY = "dpkernels_anchors"
_HEADING = re.compile(r"^(#{1,3})\s+(.+)$", re.M)


@dataclass
class CellLinks:
    """Where a notebook shows each check's verdict and its figures (:func:`claim_links`)."""

    verdict_cell: dict[str, str] = field(default_factory=dict)  # check id -> anchor of the verdict's cell
    figures: dict[str, list[str]] = field(default_factory=dict)  # check id -> anchors of the section's figures
    sections: dict[str, str] = field(default_factory=dict)  # check id -> section title


def _texts(cell: Any) -> str:
    parts = []
    for o in cell.get("outputs", []):
        if o.get("output_type") == "stream":
            parts.append(o.get("text", ""))
        for mime in ("text/plain", "text/markdown"):
            v = o.get("data", {}).get(mime)
            if v:
                parts.append("".join(v) if isinstance(v, list) else v)
    return "\n".join(parts)


def _has_figure(cell: Any) -> bool:
    return any("image/png" in o.get("data", {}) for o in cell.get("outputs", []))


def _mark(cell: Any, anchor: str) -> None:
    anchors = cell.metadata.setdefault(ANCHOR_KEY, [])
    if anchor not in anchors:
        anchors.append(anchor)


def claim_links(nb: Any, checks: pd.DataFrame) -> CellLinks:
    """Mark, in place, the cells of ``nb`` that show a check's verdict (``check-<id>``) or a figure
    (``figure-<n>``) with their anchors (cell metadata :data:`ANCHOR_KEY`), and return the links of every check
    of ``checks`` the notebook shows.

    Marks accumulate over calls (one notebook may show the checks of several output folders).  A check's verdict
    is shown by the first code cell whose output holds ``<claim> (<kind>): <check>`` (the text of
    :class:`dpkernels.report.Verdict`); its figures are those of the notebook section (the cells under the same
    markdown heading) that holds the verdict.
    """
    links = CellLinks()
    section, n_fig = "", 0
    section_of: list[str] = []
    figures_in: dict[str, list[str]] = {}
    for cell in nb.cells:
        if cell.cell_type == "markdown":
            m = _HEADING.search(cell.source)
            section = m.group(2).strip() if m else section
        section_of.append(section)
        if cell.cell_type == "code" and _has_figure(cell):
            n_fig += 1
            _mark(cell, f"figure-{n_fig}")
            figures_in.setdefault(section, []).append(f"figure-{n_fig}")
    texts = [_texts(c) if c.cell_type == "code" else "" for c in nb.cells]
    for _, row in checks.iterrows():
        key = f"{row['claim']} ({row['kind']}): {row['check']}"
        for i, text in enumerate(texts):
            if key in text:
                anchor = f"check-{row['id']}"
                _mark(nb.cells[i], anchor)
                links.verdict_cell[row["id"]] = anchor
                links.figures[row["id"]] = figures_in.get(section_of[i], [])
                links.sections[row["id"]] = section_of[i]
                break
    return links


def _counts(checks: pd.DataFrame) -> dict[str, int]:
    meas = checks[checks["kind"] == "measured"]["status"]
    out = {"measured claims": int(len(meas))}
    out.update({s: int((meas == s).sum()) for s in STATUSES})
    out.update({k: int((checks["kind"] == k).sum()) for k in KINDS if k != "measured"})
    return out


def _e(text: object) -> str:
    return html.escape(str(text))


def dashboard(outputs: dict[str, tuple[pd.DataFrame, str | None, CellLinks]]) -> str:
    """The dashboard page (MyST markdown holding an HTML block): ``outputs`` maps each output folder of
    ``paper_figures`` to its checks, the notebook that shows them (``None``: none) and their links."""
    lines = ["# Dashboard: the papers' claims and their verdicts", "",
             "Every row of every `paper_figures/<paper>/checks.csv` of the committed reference. Only `measured` rows "
             "(a simulation, a solve or an audit set against a claim) count as checks of a claim; `analytic` rows set "
             "the paper's formulas against our derivation, `consistency` rows are true by construction (never a "
             "confirmation), `target` rows are our own goals. Each claim links to the notebook cell that shows its "
             "verdict, with its criterion, and to the figures of that notebook section. Violated rows are explained "
             "in the [errata](errata.md).", ""]
    head = ["paper", "measured claims", *STATUSES, *[k for k in KINDS if k != "measured"], "claims linked to a cell"]
    rows = []
    for out, (checks, paper, links) in outputs.items():
        c = _counts(checks)
        linked = f"{len(links.verdict_cell)} of {len(checks)}"
        rows.append([f'<a href="#{_e(out)}">{_e(out)}</a>', *[c[h] for h in head[1:-1]], linked])
    table = ["<table class=\"table dashboard-totals\"><thead><tr>" + "".join(f"<th>{_e(h)}</th>" for h in head)
             + "</tr></thead><tbody>"]
    table += ["<tr>" + "".join(f"<td>{v}</td>" for v in r) + "</tr>" for r in rows]
    table.append("</tbody></table>")
    lines += ["```{raw} html", *table, "```", ""]
    for out, (checks, paper, links) in outputs.items():
        lines += [f"({out})=", f"## {PAPER_TITLES.get(out, out)}", ""]
        nb_note = f"notebook `notebooks/{paper}`" if paper else "no notebook shows these checks"
        lines += [f"`paper_figures/{out}/checks.csv`, {len(checks)} rows; {nb_note}.", ""]
        body = ["<table class=\"table dashboard-claims\"><thead><tr><th>verdict</th><th>kind</th><th>claim</th>"
                "<th>check</th><th>bound</th><th>measured</th><th>links</th></tr></thead><tbody>"]
        for _, r in checks.iterrows():
            cell = links.verdict_cell.get(r["id"])
            parts = []
            if cell and paper:
                parts.append(f'<a class="verdict-link" href="notebooks/{_e(paper)}.html#{_e(cell)}">cell</a>')
                parts += [f'<a class="figure-link" href="notebooks/{_e(paper)}.html#{_e(f)}">{_e(f.replace("-", " "))}</a>'
                          for f in links.figures.get(r["id"], [])]
            else:
                parts.append("(no cell shows this verdict)")
            body.append(f'<tr class="status-{_e(r["status"])}"><td><b>{_e(r["status"])}</b></td><td>{_e(r["kind"])}</td>'
                        f"<td>{_e(r['claim'])}</td><td>{_e(r['check'])}</td><td>{_e(r['bound'])}</td>"
                        f"<td>{_e(r['measured'])}</td><td>{' '.join(parts)}</td></tr>")
        body.append("</tbody></table>")
        lines += ["```{raw} html", *body, "```", ""]
    return "\n".join(lines)


def _notebook_of(output: str, notebooks: dict[str, Any], checks: pd.DataFrame) -> str | None:
    """The notebook that shows an output folder's checks: the one of the same name, else the one showing most."""
    if output in notebooks:
        return output
    best, hits = None, 0
    for paper, nb in notebooks.items():
        text = "\n".join(_texts(c) for c in nb.cells if c.cell_type == "code")
        n = sum(f"{r['claim']} ({r['kind']}): {r['check']}" in text for _, r in checks.iterrows())
        if n > hits:
            best, hits = paper, n
    return best


def build_site(out: Path | str | None = None, repo: Path = REPO_ROOT, quiet: bool = True) -> Path:
    """Build the site into ``out`` (default ``build/site``): sources in ``out/src``, pages in ``out/html``,
    Sphinx's warnings in ``out/sphinx-warnings.log``; returns ``out/html/index.html``."""
    import nbformat

    out = BUILD_DIR / "site" if out is None else Path(out)
    src, html_dir = out / "src", out / "html"
    if src.exists():
        shutil.rmtree(src)
    shutil.copytree(Path(repo) / "docs" / "site", src)
    (src / "notebooks").mkdir(exist_ok=True)
    papers = sorted(p.stem for p in (Path(repo) / "notebooks").glob("*.ipynb"))
    notebooks = {p: nbformat.read(Path(repo) / "notebooks" / f"{p}.ipynb", as_version=4) for p in papers}
    figures = Path(repo) / "paper_figures"
    outputs: dict[str, tuple[pd.DataFrame, str | None, CellLinks]] = {}
    for d in sorted(p for p in figures.iterdir() if (p / "checks.csv").exists()):
        checks = pd.read_csv(d / "checks.csv", dtype=str, keep_default_na=False)
        paper = _notebook_of(d.name, notebooks, checks)
        links = claim_links(notebooks[paper], checks) if paper else CellLinks()
        outputs[d.name] = (checks, paper, links)
    for p in papers:
        if p not in {paper for _, paper, _ in outputs.values()}:
            claim_links(notebooks[p], pd.DataFrame(columns=["id", "claim", "kind", "check"]))
    for p, nb in notebooks.items():
        nbformat.write(nb, src / "notebooks" / f"{p}.ipynb")
    (src / "notebooks" / "index.md").write_text(
        "# Notebooks\n\nThe executed reference notebooks (full profile), as committed; nothing here is re-executed.\n\n"
        "```{toctree}\n:maxdepth: 1\n\n" + "\n".join(papers) + "\n```\n")
    (src / "dashboard.md").write_text(dashboard(outputs))
    errata = Path(repo) / "ERRATA.md"
    if errata.exists():
        (src / "errata.md").write_text(errata.read_text())
    cmd = [sys.executable, "-m", "sphinx", "-b", "html", "-w", str(out / "sphinx-warnings.log"), str(src), str(html_dir)]
    if quiet:
        cmd.insert(3, "-q")
    proc = subprocess.run(cmd, capture_output=quiet, text=True)
    if proc.returncode != 0:
        raise RuntimeError(f"sphinx-build failed ({proc.returncode}): {(proc.stderr or '')[-3000:]}")
    return html_dir / "index.html"
