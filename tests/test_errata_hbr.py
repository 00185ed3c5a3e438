"""Every violated row of the Hall, Bassily and Rubinstein checks is named in ERRATA (template docs/ERRATA.md), and every
check id the statements files name exists (issue 21: ERRATA complete, statements quoted in the repository)."""

from __future__ import annotations

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
