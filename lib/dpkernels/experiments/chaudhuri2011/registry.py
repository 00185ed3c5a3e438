"""The hypotheses about this paper's published numbers, registered before they are run (``registry.yaml``), and the
error control across the search (:mod:`dpkernels.experiments.registry`)."""

from __future__ import annotations

from pathlib import Path

from dpkernels.experiments.registry import ALPHA_HYPOTHESIS, MAX_FALSE_ACCEPTANCE, Registry, joint_mean_test, joint_test_row

__all__ = ["REGISTRY", "ALPHA_HYPOTHESIS", "MAX_FALSE_ACCEPTANCE", "joint_mean_test", "joint_test_row", "registered", "family_size",
           "registry_table"]

REGISTRY = Path(__file__).with_name("registry.yaml")
_REGISTRY = Registry(REGISTRY)
registered, family_size, registry_table = _REGISTRY.registered, _REGISTRY.family_size, _REGISTRY.registry_table
