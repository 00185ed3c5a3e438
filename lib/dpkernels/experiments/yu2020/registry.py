"""The hypotheses about Yu et al. (2020)'s Table 2 numbers, registered before they are run (``registry.yaml``), and
the error control across the search (:mod:`dpkernels.experiments.registry`)."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from dpkernels.experiments import registry as _r
from dpkernels.experiments.registry import ALPHA_HYPOTHESIS, MAX_FALSE_ACCEPTANCE

__all__ = ["REGISTRY", "ALPHA_HYPOTHESIS", "MAX_FALSE_ACCEPTANCE", "registered", "family_size", "registry_table"]

REGISTRY = Path(__file__).with_name("registry.yaml")


def registered() -> dict[str, dict[str, object]]:
    """Every registered hypothesis by id."""
    return _r.registered(REGISTRY)


def family_size(hypothesis: str) -> int:
    """m: the hypotheses registered for ``hypothesis``'s family."""
    return _r.family_size(hypothesis, REGISTRY)


def registry_table() -> pd.DataFrame:
    """The registry as a table."""
    return _r.registry_table(REGISTRY)
