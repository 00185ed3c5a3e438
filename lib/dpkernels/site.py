"""The documentation site (``dpkernels site``, ``make site``): the executed notebooks, the API reference and the
report as a dashboard, built with Sphinx (PyData theme, numpydoc, myst-nb) into ``build/site/html/``.

The site is built from the committed reference and never executes a notebook: the sources in ``docs/site/``
(``api.rst``: the library, by topic; ``internals.rst``: the modules that run the workbook) are copied to
``build/site/src/`` together with

* ``notebooks/<paper>.ipynb``: the reference notebooks, each code cell that prints a check's verdict marked
  with the anchor ``check-<id>`` and each cell that shows a figure with ``figure-<n>`` (cell metadata read by the
  small Sphinx extension in ``docs/site/conf.py``, which gives the cell's HTML element those ids);
* ``dashboard.md``: from every ``paper_figures/<output>/checks.csv``, the verdict counts per paper (measured
  claims apart from analytic, consistency and target rows), each count linking to its rows; and
  ``dashboard/<output>.md``: every check of one output folder, its verdict and the links to the cell that shows it
  and to the figures of the same notebook section first (:func:`claim_links`), filterable by verdict, kind and text
  (``docs/site/_static/dashboard.js``);
* ``docs/statements/<paper>.md``: the statements each paper's checks test (the notebooks link to them there);
* ``errata.md``: the rendered ``ERRATA.md``.

Sphinx's warnings go to ``sphinx-warnings.log`` beside the pages; the site's test requires none.
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

__all__ = ["SITE_SOURCES", "ANCHOR_KEY", "CLAIM_COLUMNS", "DASHBOARD_DIR", "STATEMENTS_DIR", "CellLinks", "claim_links",
           "dashboard", "build_site"]

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
    :class:`dpkernels.report.Verdict`), else by the first displayed table with a row holding the check's id and its
    verdict (a notebook's summary table); its figures are those of the notebook section (the cells under the same
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
    rows = [_table_rows(c) if c.cell_type == "code" else [] for c in nb.cells]
    for _, row in checks.iterrows():
        key = f"{row['claim']} ({row['kind']}): {row['check']}"
        found = next((i for i, text in enumerate(texts) if key in text), None)
        if found is None and "status" in row:  # else the first table whose row holds the id and the verdict
            cells = (f"<td>{html.escape(str(row['id']))}</td>", f"<td>{html.escape(str(row['status']))}</td>")
            found = next((i for i, trs in enumerate(rows) if any(all(c in tr for c in cells) for tr in trs)), None)
        if found is not None:
            anchor = f"check-{row['id']}"
            _mark(nb.cells[found], anchor)
            links.verdict_cell[row["id"]] = anchor
            links.figures[row["id"]] = figures_in.get(section_of[found], [])
            links.sections[row["id"]] = section_of[found]
    return links


def _table_rows(cell: Any) -> list[str]:
    """The ``<tr>`` elements of a code cell's HTML outputs (a displayed data frame)."""
    out = []
    for o in cell.get("outputs", []):
        v = o.get("data", {}).get("text/html")
        if v:
            out += re.findall(r"<tr.*?</tr>", "".join(v) if isinstance(v, list) else v, re.S)
    return out


def _counts(checks: pd.DataFrame) -> dict[str, int]:
    meas = checks[checks["kind"] == "measured"]["status"]
    out = {"measured claims": int(len(meas))}
    out.update({s: int((meas == s).sum()) for s in STATUSES})
    out.update({k: int((checks["kind"] == k).sum()) for k in KINDS if k != "measured"})
    return out


def _e(text: object) -> str:
    return html.escape(str(text))


#: Columns of a paper's claims table, in order: a reader sees the verdict and the link to it first.
CLAIM_COLUMNS = ("verdict", "links", "claim", "check", "kind", "bound", "measured")
#: Folder (under the site's sources) of the dashboard's per-paper pages.
DASHBOARD_DIR = "dashboard"
#: Folder (under the site's sources) of ``docs/statements``: the notebooks' relative links to them resolve there.
STATEMENTS_DIR = "docs/statements"


def _filter_form(table_id: str, checks: pd.DataFrame) -> str:
    """The filter above a claims table (``_static/dashboard.js``: verdict, kind, text; ``?verdict=&kind=`` in the
    page's address preselects them)."""
    def select(name: str, values: list[str]) -> str:
        options = "".join(f'<option value="{_e(v)}">{_e(v)}</option>' for v in values)
        return f'<label>{name} <select name="{name}"><option value="">all</option>{options}</select></label>'

    present = set(checks["status"]) | set(checks["kind"])
    return (f'<form class="dashboard-filter" data-table="{_e(table_id)}" role="search">'
            + select("verdict", [s for s in STATUSES if s in present])
            + select("kind", [k for k in KINDS if k in present])
            + '<label>text <input type="search" name="text" placeholder="claim, check or id"></label>'
            + '<span class="dashboard-count" aria-live="polite"></span></form>')


def _claims_table(table_id: str, checks: pd.DataFrame, paper: str | None, links: CellLinks) -> list[str]:
    """The HTML rows of one output folder's claims table (columns :data:`CLAIM_COLUMNS`; pages under
    :data:`DASHBOARD_DIR`, so links to notebooks go one folder up)."""
    body = [f'<table class="table dashboard-claims" id="{_e(table_id)}"><thead><tr>'
            + "".join(f'<th class="col-{c}">{c}</th>' for c in CLAIM_COLUMNS) + "</tr></thead><tbody>"]
    for _, r in checks.iterrows():
        cell = links.verdict_cell.get(r["id"])
        if cell and paper:
            nb = f"../notebooks/{_e(paper)}.html"
            parts = [f'<a class="verdict-link" href="{nb}#{_e(cell)}" title="the notebook cell that shows this '
                     f'verdict and its criterion">verdict cell</a>']
            parts += [f'<a class="figure-link" href="{nb}#{_e(f)}">{_e(f.replace("figure-", "fig. "))}</a>'
                      for f in links.figures.get(r["id"], [])]
        else:
            parts = ["(no cell shows this verdict)"]
        cells = {
            "verdict": f'<span class="verdict">{_e(r["status"])}</span>',
            "links": " ".join(parts),
            "claim": f'{_e(r["claim"])}<div class="claim-id">{_e(r["id"])}</div>',
            "check": f'{_e(r["check"])}<div class="detail">{_e(r["detail"])}</div>' if r.get("detail") else _e(r["check"]),
            "kind": _e(r["kind"]), "bound": _e(r["bound"]), "measured": _e(r["measured"]),
        }
        body.append(f'<tr id="claim-{_e(r["id"])}" class="status-{_e(r["status"])}" data-verdict="{_e(r["status"])}" '
                    f'data-kind="{_e(r["kind"])}">' + "".join(f'<td class="col-{c}">{cells[c]}</td>'
                                                              for c in CLAIM_COLUMNS) + "</tr>")
    body.append("</tbody></table>")
    return body


def _count_link(page: str, n: int, query: str) -> str:
    """A count of the dashboard's totals, linking to its rows (``page`` with its filter preselected by ``query``)."""
    return f'<a href="{page}?{query}">{n}</a>' if n else "0"


def dashboard(outputs: dict[str, tuple[pd.DataFrame, str | None, CellLinks]]) -> dict[str, str]:
    """The dashboard's pages (MyST markdown holding HTML blocks), by path under the site's sources: ``dashboard.md``
    (the verdict counts of every output folder, each count linking to its rows) and, per output folder of
    ``paper_figures``, ``dashboard/<output>.md`` (its claims, filterable, verdict and link first).  ``outputs`` maps
    each output folder to its checks, the notebook that shows them (``None``: none) and their links."""
    lines = ["# Dashboard: the papers' claims and their verdicts", "",
             "Every row of every `paper_figures/<paper>/checks.csv` of the committed reference, one page per paper "
             "(follow a paper's name, or a count to see its rows). Only `measured` rows (a simulation, a solve or an "
             "audit set against a claim) count as checks of a claim; `analytic` rows set the paper's formulas against "
             "our derivation, `consistency` rows are true by construction (never a confirmation), `target` rows are "
             "our own goals. Each claim links to the notebook cell that shows its verdict, with its criterion, and to "
             "the figures of that notebook section. Violated rows are explained in the [errata](errata.md).", ""]
    head = ["paper", "measured claims", *STATUSES, *[k for k in KINDS if k != "measured"], "claims linked to a cell"]
    table = ['<table class="table dashboard-totals"><thead><tr>' + "".join(f"<th>{_e(h)}</th>" for h in head)
             + "</tr></thead><tbody>"]
    for out, (checks, paper, links) in outputs.items():
        page = f"{DASHBOARD_DIR}/{_e(out)}.html"
        c = _counts(checks)
        cells = [f'<a href="{page}">{_e(out)}</a>', _count_link(page, c["measured claims"], "kind=measured"),
                 *[_count_link(page, c[s], f"kind=measured&amp;verdict={s}") for s in STATUSES],
                 *[_count_link(page, c[k], f"kind={k}") for k in KINDS if k != "measured"],
                 f"{len(links.verdict_cell)} of {len(checks)}"]
        table.append("<tr>" + "".join(f"<td>{v}</td>" for v in cells) + "</tr>")
    table.append("</tbody></table>")
    lines += ["```{raw} html", *table, "```", "", "```{toctree}", ":hidden:", "",
              *[f"{DASHBOARD_DIR}/{out}" for out in outputs], "```", ""]
    pages = {"dashboard.md": "\n".join(lines)}
    for out, (checks, paper, links) in outputs.items():
        nb_note = f"shown in the notebook [{paper}](../notebooks/{paper}.ipynb)" if paper else "no notebook shows them"
        text = [f"# {PAPER_TITLES.get(out, out)}", "",
                f"The {len(checks)} rows of `paper_figures/{out}/checks.csv`, {nb_note}. Back to the "
                "[dashboard](../dashboard.md).", "", "```{raw} html", _filter_form(f"claims-{out}", checks),
                *_claims_table(f"claims-{out}", checks, paper, links), "```", ""]
        pages[f"{DASHBOARD_DIR}/{out}.md"] = "\n".join(text)
    return pages


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
    Sphinx's warnings in ``out/sphinx-warnings.log`` (every source is read afresh, so the log is the whole build's);
    returns ``out/html/index.html``."""
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
    for path, text in dashboard(outputs).items():
        (src / path).parent.mkdir(parents=True, exist_ok=True)
        (src / path).write_text(text)
    errata = Path(repo) / "ERRATA.md"
    if errata.exists():
        (src / "errata.md").write_text(errata.read_text())
    statements = sorted((Path(repo) / "docs" / "statements").glob("*.md"))
    (src / STATEMENTS_DIR).mkdir(parents=True)
    for f in statements:
        shutil.copy(f, src / STATEMENTS_DIR / f.name)
    (src / STATEMENTS_DIR / "index.md").write_text(
        "# Statements\n\nEach paper's statements that our checks test, restated with the paper's numbering and the "
        "ids of the checks (rows of the [dashboard](../../dashboard.md)) that test them.\n\n```{toctree}\n:maxdepth: 1\n\n"
        + "\n".join(f.stem for f in statements) + "\n```\n")
    # -E: read every source afresh, so that the log holds every warning of the build, not only those of changed files
    cmd = [sys.executable, "-m", "sphinx", "-b", "html", "-E", "-w", str(out / "sphinx-warnings.log"), str(src),
           str(html_dir)]
    if quiet:
        cmd.insert(3, "-q")
    proc = subprocess.run(cmd, capture_output=quiet, text=True)
    if proc.returncode != 0:
        raise RuntimeError(f"sphinx-build failed ({proc.returncode}): {(proc.stderr or '')[-3000:]}")
    return html_dir / "index.html"
