"""Experiments for Rubinstein, Bartlett, Huang and Taft (2012), by role; used by ``notebooks/rubinstein2012.py``.

* :mod:`~dpkernels.experiments.rubinstein2012.protocol`: the paper's Tables 1-2 (printed against reproduced, with a verification of each pair) and the
  Adult illustration (the paper has no experiments);
* :mod:`~dpkernels.experiments.rubinstein2012.statements`: the lemmas, theorems and corollaries against solves, searches and Monte Carlo (Lemma 9, 16-18,
  22, 25, Theorems 11, 13, 23, 26, Corollary 15, Proposition 27, the rates);
* :mod:`~dpkernels.experiments.rubinstein2012.audits`: privacy audits of both mechanisms (each with a negative control) and Mironov's floating-point attack;
* :mod:`~dpkernels.experiments.rubinstein2012.records`: the three-valued criteria behind the verdicts.

The statements the checks test are quoted in ``docs/statements/rubinstein2012.md``.
"""

from .audits import (
    audit_with_control,
    floating_point_audit,
    floating_point_pair,
    lemma_22_audit_models,
    privacy_audit,
    rff_audit_models,
)
from .protocol import PUBLISHED_TABLE_1, PUBLISHED_TABLE_2, REPRODUCED_TABLE_2, adult_privacy_utility, adult_summary, kernel_tables
from .records import *  # noqa: F401,F403
from .records import __all__ as _records_all
from .statements import (
    SensitivitySetting,
    appendix_a_construction,
    corollary_15_experiment,
    lemma_16_experiment,
    lemma_17_experiment,
    lemma_18_experiment,
    lemma_22_experiment,
    lemma_25_experiment,
    rate_table,
    sensitivity_experiment,
    sensitivity_problem,
    theorem_11_experiment,
    theorem_13_experiment,
    theorem_13_premise_experiment,
    theorem_23_experiment,
    theorem_26_experiment,
)

__all__ = [
    "audit_with_control",
    "floating_point_audit",
    "floating_point_pair",
    "lemma_22_audit_models",
    "privacy_audit",
    "rff_audit_models",
    "PUBLISHED_TABLE_1",
    "PUBLISHED_TABLE_2",
    "REPRODUCED_TABLE_2",
    "adult_privacy_utility",
    "adult_summary",
    "kernel_tables",
    "SensitivitySetting",
    "appendix_a_construction",
    "corollary_15_experiment",
    "lemma_16_experiment",
    "lemma_17_experiment",
    "lemma_18_experiment",
    "lemma_22_experiment",
    "lemma_25_experiment",
    "rate_table",
    "sensitivity_experiment",
    "sensitivity_problem",
    "theorem_11_experiment",
    "theorem_13_experiment",
    "theorem_13_premise_experiment",
    "theorem_23_experiment",
    "theorem_26_experiment",
    *_records_all,
]
