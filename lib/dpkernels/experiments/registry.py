"""Hypotheses registered before they are run (issue 28, item 4): each paper's ``registry.yaml`` lists, per hypothesis
about its published numbers, the cell family it bears on, its scope (:func:`dpkernels.report.in_scope`), the
statement, the test that decides it, the alternative its power is measured against, and whether it was run.

Error control across the search.  A hypothesis is accepted only when its own test does not reject it at
:data:`ALPHA_HYPOTHESIS` and its false-acceptance rate (measured on data simulated without its effect) is at most
:data:`MAX_FALSE_ACCEPTANCE` / m, m the number of hypotheses registered for its family (:func:`family_size`, run or
not: the search that was planned): by Bonferroni the chance that a family gets any false explanation is at most
:data:`MAX_FALSE_ACCEPTANCE`.
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path
from typing import Any

import pandas as pd
import yaml

__all__ = ["ALPHA_HYPOTHESIS", "MAX_FALSE_ACCEPTANCE", "registered", "family_size", "registry_table"]

#: Level of a hypothesis's own test (it is rejected when its p-value is below this).
ALPHA_HYPOTHESIS = 0.05
#: Family-wise rate of a false explanation per cell family (Bonferroni over the hypotheses registered for it).
MAX_FALSE_ACCEPTANCE = 0.2


@lru_cache(maxsize=None)
def _load(path: str) -> dict[str, Any]:
    return yaml.safe_load(Path(path).read_text())


def registered(path: Path) -> dict[str, dict[str, Any]]:
    """Every hypothesis of the registry at ``path`` by id (family, scope, statement, test, alternative, status)."""
    return dict(_load(str(path))["hypotheses"])


def family_size(hypothesis: str, path: Path) -> int:
    """m: the number of hypotheses registered for ``hypothesis``'s family."""
    reg = registered(path)
    fam = reg[hypothesis]["family"]
    return sum(1 for h in reg.values() if h["family"] == fam)


def registry_table(path: Path) -> pd.DataFrame:
    """The registry as a table (one row per hypothesis: family, m, status, statement), for a notebook."""
    reg = registered(path)
    return pd.DataFrame([{"hypothesis": k, "family": v["family"], "m": family_size(k, path), "status": v["status"],
                          "statement": v["statement"]} for k, v in reg.items()])
