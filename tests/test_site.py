"""The documentation site, built from the committed reference and opened in headless Chromium.

Checks that Sphinx builds it without a single warning; that every notebook page shows its figures (every image
loads, one per figure the notebook holds), typesets its formulas (MathJax, shipped with the site) and wraps its
text outputs (no verdict line cut at the cell's edge); that the dashboard shows every claim's verdict and the link
to the cell that shows it first, on screen at 1280 and 1920 px, and that its filter and every link work; that the
API reference lists the estimators under ``dpkernels`` with readable signatures and documents every module once,
the workbook's apart; and that no page points outside the repository.  Needs Debian's ``chromium`` and
``chromium-driver`` (``.ci/run`` installs them).
"""

from __future__ import annotations

import os
import pkgutil
import re
import shutil
import tempfile
from urllib.parse import urldefrag, urlparse

import nbformat
import pandas as pd
import pytest

import dpkernels
from dpkernels.report import REPO_ROOT, STATUSES
from dpkernels.site import ANCHOR_KEY, DASHBOARD_DIR, build_site, claim_links

CHROMIUM, CHROMEDRIVER = shutil.which("chromium"), shutil.which("chromedriver")
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync"]
PAPERS = sorted(p.stem for p in (REPO_ROOT / "notebooks").glob("*.ipynb"))
OUTPUTS = sorted(p.parent.name for p in (REPO_ROOT / "paper_figures").glob("*/checks.csv"))
#: The API reference's modules that run the workbook rather than the mechanisms: documented apart (internals.html).
INTERNALS = ("cli", "runner", "reference", "scale_runs", "report", "prose", "workbook", "notebooks", "profiles", "sweep",
             "cache", "site", "experiments")


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    out = tmp_path_factory.mktemp("site")
    index = build_site(out)
    return index.parent


@pytest.fixture(scope="module")
def browser():
    if not (CHROMIUM and CHROMEDRIVER):
        pytest.fail("chromium and chromedriver are needed (apt-get install chromium chromium-driver; .ci/run does)")
    os.environ.setdefault("SE_OFFLINE", "true")  # selenium never downloads a driver or a browser
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    profile = tempfile.mkdtemp(prefix="dpkernels-chromium-")
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for flag in FLAGS + [f"--user-data-dir={profile}", "--window-size=1280,900"]:
        options.add_argument(flag)
    driver = webdriver.Chrome(service=Service(CHROMEDRIVER), options=options)
    driver.set_page_load_timeout(60)
    yield driver
    driver.quit()
    shutil.rmtree(profile, ignore_errors=True)


def _open(driver, url):
    from selenium.webdriver.support.ui import WebDriverWait

    driver.get(url)
    WebDriverWait(driver, 30).until(lambda d: d.execute_script("return document.readyState") == "complete")


def _width(driver, width):
    """Make the page's viewport ``width`` CSS pixels wide (the window's frame added)."""
    driver.set_window_size(width, 900)
    frame = driver.execute_script("return window.outerWidth - window.innerWidth")
    if frame:
        driver.set_window_size(width + frame, 900)
    assert driver.execute_script("return window.innerWidth") == width


def _figures_in(paper):
    nb = nbformat.read(REPO_ROOT / "notebooks" / f"{paper}.ipynb", as_version=4)
    return sum("image/png" in o.get("data", {}) for c in nb.cells for o in c.get("outputs", []))


def test_sphinx_builds_the_site_without_a_warning(site):
    log = (site.parent / "sphinx-warnings.log").read_text().strip()
    lines = log.splitlines()
    assert not lines, f"{len(lines)} lines of Sphinx warnings, e.g.\n" + "\n".join(lines[:20])


@pytest.mark.parametrize("paper", PAPERS)
def test_notebook_page_shows_its_figures_formulas_and_whole_outputs(site, browser, paper):
    from selenium.webdriver.support.ui import WebDriverWait

    _width(browser, 1280)
    _open(browser, (site / "notebooks" / f"{paper}.html").as_uri())
    WebDriverWait(browser, 30).until(lambda d: d.execute_script(
        "return Array.from(document.images).every(i => i.complete)"))
    images = browser.execute_script(
        "return Array.from(document.querySelectorAll('main img')).map(i => [i.getAttribute('src'), i.naturalWidth])")
    broken = [src for src, width in images if not width]
    assert not broken, f"{paper}: images that do not load: {broken}"
    assert len(images) >= _figures_in(paper) > 0
    outputs = browser.execute_script(
        "return Array.from(document.querySelectorAll('main div.cell_output pre'))"
        ".map(p => [p.scrollWidth > p.clientWidth + 1, p.textContent.split('\\n')[0]])")
    cut = [first for overflows, first in outputs if overflows]
    assert outputs and not cut, f"{paper}: {len(cut)} of {len(outputs)} text outputs cut at the cell's edge: {cut[:3]}"
    if paper in ("rubinstein2012", "hall2013", "bassily2022"):  # their prose is in LaTeX
        WebDriverWait(browser, 30).until(lambda d: d.execute_script(
            "return document.querySelectorAll('mjx-container').length > 0"))
        errors = browser.execute_script("return document.querySelectorAll('mjx-merror').length")
        assert errors == 0, f"{paper}: {errors} formulas MathJax could not typeset"


#: For each claim row of a dashboard page: its verdict, whether it links to a cell, whether the verdict's cell and
#: that link are the two leftmost cells, and whether each is on screen (scrolled to vertically only, the element at
#: its centre is itself, not a clipping container nor nothing).
_CLAIM_ROWS = """
const statuses = arguments[0];
const out = [];
for (const row of document.querySelectorAll('main table tbody tr')) {
  const cells = Array.from(row.cells);
  const verdict = cells.find(c => statuses.includes(c.textContent.trim()));
  const link = row.querySelector('a.verdict-link');
  const lefts = cells.map(c => c.getBoundingClientRect().left).sort((a, b) => a - b);
  const visible = (el) => {
    if (!el) return false;
    window.scrollTo(0, el.getBoundingClientRect().top + window.scrollY - 200);
    const r = el.getBoundingClientRect();
    const hit = document.elementFromPoint(r.left + r.width / 2, r.top + r.height / 2);
    return hit !== null && el.contains(hit);
  };
  const linkCell = link ? link.closest('td') : null;
  out.push({id: row.id, verdict: verdict ? verdict.textContent.trim() : null, linked: link !== null,
            first: verdict !== undefined && linkCell !== null
                   && verdict.getBoundingClientRect().left === lefts[0]
                   && linkCell.getBoundingClientRect().left === lefts[1],
            verdict_visible: visible(verdict), link_visible: visible(link)});
}
window.scrollTo(0, 0);
return out;
"""


@pytest.mark.parametrize("width", [1280, 1920])
def test_dashboard_shows_each_claims_verdict_and_link_first(site, browser, width):
    _width(browser, width)
    problems = []
    for out in OUTPUTS:
        checks = pd.read_csv(REPO_ROOT / "paper_figures" / out / "checks.csv", dtype=str, keep_default_na=False)
        _open(browser, (site / DASHBOARD_DIR / f"{out}.html").as_uri())
        rows = browser.execute_script(_CLAIM_ROWS, list(STATUSES))
        overflow = browser.execute_script("return document.documentElement.scrollWidth - window.innerWidth")
        if overflow > 0:
            problems.append(f"{out}: the page is {overflow} px wider than the screen")
        if [r["verdict"] for r in rows] != list(checks["status"]):
            problems.append(f"{out}: {len(rows)} rows shown, verdicts differ from checks.csv's {len(checks)}")
        for r in rows:
            what = [k for k in ("linked", "first", "verdict_visible", "link_visible") if not r[k]]
            if what:
                problems.append(f"{out} {r['id']}: not {', not '.join(what)}")
    assert not problems, f"at {width} px:\n" + "\n".join(problems[:20])


def test_dashboard_filter_shows_the_rows_asked_for(site, browser):
    _width(browser, 1280)
    counts = {out: pd.read_csv(REPO_ROOT / "paper_figures" / out / "checks.csv", dtype=str, keep_default_na=False)
              for out in OUTPUTS}
    out = max(OUTPUTS, key=lambda o: ((counts[o]["status"] == "violated") & (counts[o]["kind"] == "measured")).sum())
    checks = counts[out]
    want = checks[(checks["status"] == "violated") & (checks["kind"] == "measured")]
    assert 0 < len(want) < len(checks)
    _open(browser, (site / DASHBOARD_DIR / f"{out}.html").as_uri() + "?kind=measured&verdict=violated")
    shown = browser.execute_script(
        "return Array.from(document.querySelectorAll('main table tbody tr'))"
        ".filter(r => r.getClientRects().length > 0).map(r => r.id)")
    assert shown == [f"claim-{i}" for i in want["id"]]
    one = next(i for i in want["id"] if not any(i in j for j in checks["id"] if j != i))  # no other id contains it
    browser.find_element("css selector", "form.dashboard-filter input[name=text]").send_keys(one)
    shown = browser.execute_script(
        "return Array.from(document.querySelectorAll('main table tbody tr'))"
        ".filter(r => r.getClientRects().length > 0).map(r => r.id)")
    assert shown == [f"claim-{one}"]


def test_every_dashboard_link_resolves(site, browser):
    hrefs: set[str] = set()
    for page in [site / "dashboard.html", *[site / DASHBOARD_DIR / f"{out}.html" for out in OUTPUTS]]:
        _open(browser, page.as_uri())
        hrefs |= set(browser.execute_script(
            "return Array.from(document.querySelectorAll('main a[href]')).map(a => a.href)"))
    internal = sorted(h for h in hrefs if urlparse(h).scheme == "file")
    figure_links = [h for h in internal if "#figure-" in h]
    assert len(figure_links) > 10  # a claim's section's figures
    pages: dict[str, set[str]] = {}
    missing = []
    for href in internal:
        page, anchor = urldefrag(href)
        page = page.split("?")[0]  # a dashboard count's link preselects the filter of its page
        if page not in pages:
            _open(browser, page)
            ok = browser.execute_script("return document.querySelector('main') !== null")
            pages[page] = set(browser.execute_script(
                "return Array.from(document.querySelectorAll('[id]')).map(e => e.id)")) if ok else set()
            if not ok:
                missing.append(f"{page}: no page")
        if anchor and anchor not in pages[page]:
            missing.append(f"{href}: no element with id {anchor!r}")
    assert not missing, "\n".join(missing[:30])
    assert {urlparse(p).path.rsplit("/", 1)[-1] for p in pages} >= {f"{p}.html" for p in PAPERS}


def _api_links(site, page):
    """The API pages a reference page links to, by the name each documents (``dpkernels.ObjectivePerturbation``)."""
    text = (site / page).read_text()
    article = text[text.index("<article"):text.index("</article>")]  # not the navigation around it
    return set(re.findall(r'href="generated/([\w.]+)\.html[#"]', article))


def _public_modules():
    return sorted(m.name for m in pkgutil.walk_packages(dpkernels.__path__, "dpkernels.")
                  if not any(part.startswith("_") for part in m.name.split(".")))


def test_api_reference_lists_the_estimators_under_dpkernels(site):
    api = _api_links(site, "api.html")
    exported = [n for n in dpkernels.__all__ if n != "__version__"]
    missing = [n for n in exported if f"dpkernels.{n}" not in api]
    assert not missing, f"api.html does not list {missing}"
    for name in exported:
        page = (site / "generated" / f"dpkernels.{name}.html").read_text()
        assert f'id="dpkernels.{name}"' in page, f"generated/dpkernels.{name}.html documents no dpkernels.{name}"
    for module in ("accounting", "testing", "datasets", "bounds", "audit"):
        assert f"dpkernels.{module}" in api
    estimator = (site / "generated" / "dpkernels.ObjectivePerturbation.html").read_text()
    for method in ("fit", "predict", "decision_function", "release"):  # its own and the inherited ones
        assert f'id="dpkernels.ObjectivePerturbation.{method}"' in estimator


def test_api_reference_documents_every_module_the_workbooks_apart(site):
    api, internals = _api_links(site, "api.html"), _api_links(site, "internals.html")
    generated = {p.stem for p in (site / "generated").glob("*.html")}
    problems = []
    for module in _public_modules():
        internal = module.split(".")[1] in INTERNALS
        if module not in generated:
            problems.append(f"{module}: no page (list it in docs/site/{'internals' if internal else 'api'}.rst)")
        elif internal and module in api:
            problems.append(f"{module}: a workbook module listed in the library's reference")
        elif not internal and module.count(".") == 1 and module not in api:
            problems.append(f"{module}: not listed in api.rst")
        elif internal and module.count(".") == 1 and module not in internals:
            problems.append(f"{module}: not listed in internals.rst")
    assert not problems, "\n".join(problems)


def test_api_signatures_are_readable(site):
    """A signature names numpy's ArrayLike rather than expanding its union into a screenful."""
    expanded = ("_NestedSequence", "_SupportsArray", "TypeAliasForwardRef")
    unreadable = []
    for page in sorted((site / "generated").glob("*.html")):
        for sig in re.findall(r'<dt class="sig sig-object py"[^>]*>(.*?)</dt>', page.read_text(), re.S):
            text = re.sub(r"<[^>]+>", "", sig)
            if any(e in text for e in expanded):
                unreadable.append(f"{page.name}: {text.strip()[:120]}")
    assert not unreadable, f"{len(unreadable)} signatures expand an alias, e.g.\n" + "\n".join(unreadable[:5])
    estimator = (site / "generated" / "dpkernels.ObjectivePerturbation.html").read_text()
    assert "ArrayLike" in re.sub(r"<[^>]+>", "", estimator)  # the alias the check above looks for, by its name


def test_no_page_points_outside_the_repository(site):
    outside = re.compile(r"shared/papers|-formulas\.md")  # the papers and our formula notes lie outside it
    hits = [f"{p.relative_to(site)}: {m.group(0)}" for p in sorted(site.rglob("*.html"))
            for m in outside.finditer(p.read_text())]
    assert not hits, "\n".join(hits[:20])


def test_claim_links_fall_back_to_a_summary_table_row_with_the_id_and_verdict():
    """A check whose verdict line no cell prints links to the first displayed table with a row holding its id and its
    verdict; a row with the id but another verdict, or no such row, links nothing."""
    def table(rows):
        body = "".join(f"<tr><th>{i}</th><td>{cid}</td><td>{st}</td></tr>" for i, (cid, st) in enumerate(rows))
        return nbformat.v4.new_output("execute_result", data={"text/html": f"<table><tbody>{body}</tbody></table>",
                                                              "text/plain": "df"}, execution_count=1)

    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_markdown_cell("## Run"), nbformat.v4.new_code_cell("x", outputs=[table([("time", "violated")])]),
                nbformat.v4.new_markdown_cell("## Summary"),
                nbformat.v4.new_code_cell("result", outputs=[table([("a", "holds"), ("time", "holds")])])]
    checks = pd.DataFrame({"id": ["time", "other"], "claim": ["run time", "x"], "kind": ["target", "measured"],
                           "check": ["wall seconds", "y"], "status": ["holds", "holds"]})
    links = claim_links(nb, checks)
    assert links.verdict_cell == {"time": "check-time"} and links.sections == {"time": "Summary"}
    assert nb.cells[3].metadata[ANCHOR_KEY] == ["check-time"] and ANCHOR_KEY not in nb.cells[1].metadata


def test_claim_links_mark_the_verdict_cell_and_the_section_figures():
    nb = nbformat.v4.new_notebook()
    figure = nbformat.v4.new_output("display_data", data={"image/png": "iVBORw0KGgo=", "text/plain": "<Figure>"})
    nb.cells = [nbformat.v4.new_markdown_cell("## Lemma 9"),
                nbformat.v4.new_code_cell("plot()", outputs=[figure]),
                nbformat.v4.new_code_cell("checks.show_new()", outputs=[nbformat.v4.new_output(
                    "stream", name="stdout", text="[HOLDS] Lemma 9 (measured): sensitivity <= bound\n    bound 1 | measured 0.5\n")]),
                nbformat.v4.new_markdown_cell("## Lemma 10"),
                nbformat.v4.new_code_cell("1")]
    checks = pd.DataFrame({"id": ["l9", "l10"], "claim": ["Lemma 9", "Lemma 10"], "kind": ["measured", "measured"],
                           "check": ["sensitivity <= bound", "x"]})
    links = claim_links(nb, checks)
    assert links.verdict_cell == {"l9": "check-l9"} and links.figures == {"l9": ["figure-1"]}
    assert nb.cells[1].metadata[ANCHOR_KEY] == ["figure-1"] and nb.cells[2].metadata[ANCHOR_KEY] == ["check-l9"]
