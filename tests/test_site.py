"""The documentation site, built from the committed reference and opened in headless Chromium.

Checks that every notebook page shows its figures (every image loads, one per figure the notebook holds), that
formulas are typeset (MathJax, shipped with the site), and that every link of the dashboard resolves: the target
page loads and holds the anchor.  Needs Debian's ``chromium`` and ``chromium-driver`` (``.ci/run`` installs them).
"""

from __future__ import annotations

import os
import shutil
import tempfile
from urllib.parse import urldefrag, urlparse

import nbformat
import pandas as pd
import pytest

from dpkernels.report import REPO_ROOT
from dpkernels.site import ANCHOR_KEY, build_site, claim_links

CHROMIUM, CHROMEDRIVER = shutil.which("chromium"), shutil.which("chromedriver")
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync"]
PAPERS = sorted(p.stem for p in (REPO_ROOT / "notebooks").glob("*.ipynb"))


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
    for flag in FLAGS + [f"--user-data-dir={profile}"]:
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


def _figures_in(paper):
    nb = nbformat.read(REPO_ROOT / "notebooks" / f"{paper}.ipynb", as_version=4)
    return sum("image/png" in o.get("data", {}) for c in nb.cells for o in c.get("outputs", []))


@pytest.mark.parametrize("paper", PAPERS)
def test_notebook_page_shows_its_figures_and_formulas(site, browser, paper):
    from selenium.webdriver.support.ui import WebDriverWait

    _open(browser, (site / "notebooks" / f"{paper}.html").as_uri())
    WebDriverWait(browser, 30).until(lambda d: d.execute_script(
        "return Array.from(document.images).every(i => i.complete)"))
    images = browser.execute_script(
        "return Array.from(document.querySelectorAll('main img')).map(i => [i.getAttribute('src'), i.naturalWidth])")
    broken = [src for src, width in images if not width]
    assert not broken, f"{paper}: images that do not load: {broken}"
    assert len(images) >= _figures_in(paper) > 0
    if paper in ("rubinstein2012", "hall2013", "bassily2022"):  # their prose is in LaTeX
        WebDriverWait(browser, 30).until(lambda d: d.execute_script(
            "return document.querySelectorAll('mjx-container').length > 0"))
        errors = browser.execute_script("return document.querySelectorAll('mjx-merror').length")
        assert errors == 0, f"{paper}: {errors} formulas MathJax could not typeset"


def test_every_dashboard_link_resolves(site, browser):
    _open(browser, (site / "dashboard.html").as_uri())
    hrefs = browser.execute_script(
        "return Array.from(document.querySelectorAll('main a[href]')).map(a => a.href)")
    internal = sorted({h for h in hrefs if urlparse(h).scheme == "file"})
    verdict_links = browser.execute_script("return document.querySelectorAll('a.verdict-link').length")
    figure_links = browser.execute_script("return document.querySelectorAll('a.figure-link').length")
    assert verdict_links > 100 and figure_links > 10  # a claim's cell and its section's figures
    pages: dict[str, set[str]] = {}
    missing = []
    for href in internal:
        page, anchor = urldefrag(href)
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
    assert len(pages) >= len(PAPERS)


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
