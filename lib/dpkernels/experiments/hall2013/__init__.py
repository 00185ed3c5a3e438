"""Experiments for Hall, Rinaldo and Wasserman (2013), by role; used by ``notebooks/hall2013.py``.

* :mod:`~dpkernels.experiments.hall2013.statements`: the paper's statements against measurements and exact computations;
* :mod:`~dpkernels.experiments.hall2013.audits`: privacy audits of the releases (each with a negative control) and the floating-point grid;
* :mod:`~dpkernels.experiments.hall2013.protocol`: the kernel machine on data (against the other papers' private SVMs, at large n) and Adult's KDE;
* :mod:`~dpkernels.experiments.hall2013.records`: the verdicts (three-valued, :mod:`dpkernels.verdicts`) that turn results into ``checks.csv`` rows.

The statements the checks test are quoted in ``docs/statements/hall2013.md``.
"""

from .audits import (
    kde_pair_audit,
    kernel_machine_pair_audit,
    lattice_grid_check,
)
from .protocol import adult_kde_data, classification_data, kernel_machine_comparison, nystrom_demo
from .records import *  # noqa: F401,F403
from .records import __all__ as _records_all
from .statements import (
    bandwidth_exponent_monte_carlo,
    bandwidth_exponents,
    calibration_map,
    calibration_monte_carlo,
    conditional_sampling_experiment,
    evaluation_bound_experiment,
    kde_sensitivity_experiment,
    kernel_machine_rate_experiment,
    kernel_machine_sensitivity_experiment,
    mercer_basis_check,
    mise_curves,
    mise_monte_carlo,
    noise_error_experiment,
    privacy_order_experiment,
    proposition_2_1_beyond_boundary,
    sampling_order_slopes,
    whitened_covariance_test,
)

__all__ = [
    "kde_pair_audit",
    "kernel_machine_pair_audit",
    "lattice_grid_check",
    "adult_kde_data",
    "classification_data",
    "kernel_machine_comparison",
    "nystrom_demo",
    "bandwidth_exponent_monte_carlo",
    "bandwidth_exponents",
    "calibration_map",
    "calibration_monte_carlo",
    "conditional_sampling_experiment",
    "evaluation_bound_experiment",
    "kde_sensitivity_experiment",
    "kernel_machine_rate_experiment",
    "kernel_machine_sensitivity_experiment",
    "mercer_basis_check",
    "mise_curves",
    "mise_monte_carlo",
    "noise_error_experiment",
    "privacy_order_experiment",
    "proposition_2_1_beyond_boundary",
    "sampling_order_slopes",
    "whitened_covariance_test",
    *_records_all,
]
