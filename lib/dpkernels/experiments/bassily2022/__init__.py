"""Experiments for Bassily, Mohri and Suresh (2022), by role; used by ``notebooks/bassily2022.py``.

* :mod:`~dpkernels.experiments.bassily2022.statements`: the paper's statements against measurements (data with a known margin and their exact
  population error, the calculators, Theorems 3.2, 4.1, 4.2, the JL transforms, the dimension experiment and its JL
  ablation, "epsilon > 1 for free", the polynomial-kernel radius);
* :mod:`~dpkernels.experiments.bassily2022.audits`: privacy audits of Algorithms 1 and 2 (each with a negative control);
* :mod:`~dpkernels.experiments.bassily2022.protocol`: Adult and KDDCup99 (margin curves next to the other papers' mechanisms; our private choice of rho);
* :mod:`~dpkernels.experiments.bassily2022.records`: the verdicts (three-valued, :mod:`dpkernels.verdicts`) that turn results into ``checks.csv`` rows.

The statements the checks test are quoted in ``docs/statements/bassily2022.md``.
"""

from .audits import audit_algorithm_1, audit_algorithm_2, audit_lower_bound_delta
from .protocol import margin_curves, real_data, rho_selection_experiment
from .records import *  # noqa: F401,F403
from .records import __all__ as _records_all
from .statements import (
    ABLATION,
    KernelMarginData,
    MarginData,
    calculator_table,
    dimension_experiment,
    epsilon_experiment,
    jl_distortion_experiment,
    jl_timing,
    k_experiment,
    kernel_margin_data,
    make_baselines,
    margin_data,
    noisy_gd_without_jl,
    polynomial_feature_norms,
    population_error,
    projected_gd,
    theorem_3_2_experiment,
    theorem_4_1_experiment,
    theorem_4_2_experiment,
)

__all__ = [
    "audit_algorithm_1",
    "audit_algorithm_2",
    "audit_lower_bound_delta",
    "margin_curves",
    "real_data",
    "rho_selection_experiment",
    "ABLATION",
    "KernelMarginData",
    "MarginData",
    "calculator_table",
    "dimension_experiment",
    "epsilon_experiment",
    "jl_distortion_experiment",
    "jl_timing",
    "k_experiment",
    "kernel_margin_data",
    "make_baselines",
    "margin_data",
    "noisy_gd_without_jl",
    "polynomial_feature_norms",
    "population_error",
    "projected_gd",
    "theorem_3_2_experiment",
    "theorem_4_1_experiment",
    "theorem_4_2_experiment",
    *_records_all,
]
