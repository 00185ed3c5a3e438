"""Every violated row of the Hall, Bassily and Rubinstein checks is named in ERRATA (template docs/ERRATA.md), and every
check id the statements files name exists (issue 21: ERRATA complete, statements quoted in the repository)."""

from __future__ import annotations

import fnmatch
import re

import pandas as pd
import pytest

from dpkernels.report import REPO_ROOT

PAPERS = ("hall2013", "bassily2022", "rubinstein2012")


@pytest.mark.parametrize("paper", PAPERS)
def test_every_violated_row_is_named_in_errata(paper):
    errata = (REPO_ROOT / "docs" / "ERRATA.md").read_text()
    checks = pd.read_csv(REPO_ROOT / "paper_figures" / paper / "checks.csv")
    missing = [i for i in checks.loc[checks.status == "violated", "id"] if i not in errata]
    assert not missing, f"violated rows of {paper} without an ERRATA entry: {missing}"


@pytest.mark.parametrize("paper", (*PAPERS, "yu2020"))
def test_statement_files_name_existing_checks(paper):
    text = (REPO_ROOT / "docs" / "statements" / f"{paper}.md").read_text()
    ids = set(pd.read_csv(REPO_ROOT / "paper_figures" / paper / "checks.csv").id)
    named = {m for m in re.findall(r"`([a-zA-Z0-9-]+)(?:\*|-\*)?`", text) if "-" in m}
    exact = [n for n in named if not n.endswith("-") and n in ids]
    prefixes = [n for n in named if n not in ids]
    unknown = [n for n in prefixes if not any(i.startswith(n) for i in ids)]
    assert exact, f"docs/statements/{paper}.md names no check id"
    assert not unknown, f"docs/statements/{paper}.md names ids that no row of checks.csv has: {unknown}"


@pytest.mark.parametrize("paper", (*PAPERS, "yu2020", "chaudhuri2011", "park2022"))
def test_every_check_id_is_named_in_its_statements_file(paper):
    """The other direction (issue 28, referee L5: about 20 check ids had no place in docs/statements): every row of the
    paper's checks.csv is named in docs/statements/<paper>.md, by its id, by its family (the id without the six-hex
    suffix of a parametrised row) or by a backticked pattern such as `lemma-9-*` or `H-rate-d*`."""
    text = (REPO_ROOT / "docs" / "statements" / f"{paper}.md").read_text()
    patterns = re.findall(r"`([^`\s]*\*[^`\s]*)`", text)
    ids = pd.read_csv(REPO_ROOT / "paper_figures" / paper / "checks.csv").id.dropna().unique()
    missing = [i for i in ids if i not in text and re.sub(r"-[0-9a-f]{6}$", "", i) not in text
               and not any(fnmatch.fnmatchcase(i, g) for g in patterns)]
    assert not missing, f"check ids of {paper} that docs/statements/{paper}.md does not name: {missing}"


def test_statement_files_cite_existing_errata_entries():
    """Every ERRATA entry a statements file cites ("ERRATA C3, C4", "ERRATA H3") is a heading of docs/ERRATA.md."""
    entries = set(re.findall(r"^### ([A-Z]\d+)\.", (REPO_ROOT / "docs" / "ERRATA.md").read_text(), flags=re.M))
    cited = {}
    for f in sorted((REPO_ROOT / "docs" / "statements").glob("*.md")):
        for group in re.findall(r"ERRATA((?:[\s,]+(?:and\s+)?[A-Z]\d+\b)+)", f.read_text()):
            for entry in re.findall(r"[A-Z]\d+", group):
                cited.setdefault(entry, f.name)
    assert len(cited) >= 20, sorted(cited)
    unknown = {e: f for e, f in cited.items() if e not in entries}
    assert not unknown, f"statements cite ERRATA entries that do not exist: {unknown}"


def test_frontier_rows_named_in_the_statements_exist():
    """The papers' statements files also name rows of the frontier's checks.csv (its tests of the papers' claims),
    written with brace alternatives (`F-claim-park-ova-{satimage,shuttle}`), which the tests above skip: each name,
    expanded, is a row of paper_figures/frontier/checks.csv (issue 28's review of this session's statements)."""
    ids = set(pd.read_csv(REPO_ROOT / "paper_figures" / "frontier" / "checks.csv").id)
    named = []
    for path in sorted((REPO_ROOT / "docs" / "statements").glob("*.md")):
        for token in re.findall(r"`(F-[A-Za-z0-9.{},-]+)`", path.read_text()):
            head, _, rest = token.partition("{")
            alts, _, tail = rest.partition("}")
            named += [(path.name, f"{head}{a}{tail}") for a in alts.split(",")] if rest else [(path.name, token)]
    assert named, "no frontier row is named in docs/statements"
    unknown = [(f, n) for f, n in named if n not in ids]
    assert not unknown, f"frontier rows named in docs/statements that checks.csv lacks: {unknown}"
