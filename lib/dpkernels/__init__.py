"""dpkernels: reference implementations of differentially private kernel and SVM learning.

The package reproduces five papers (Rubinstein et al. 2012, Chaudhuri et al. 2011, Hall et al. 2013,
Bassily et al. 2022, Park 2022).  Every estimator and warning is importable from here
(``from dpkernels import PrivateSVM, ObjectivePerturbation, PrivacyLeakWarning``); mechanisms live in
:mod:`dpkernels.mechanisms`, theorem-bound calculators in :mod:`dpkernels.bounds`, empirical sensitivity and
privacy audits in :mod:`dpkernels.audit`, data loaders in :mod:`dpkernels.datasets`.

=====================  ==============================================================================================
paper                  estimators (scikit-learn API) and functions
=====================  ==============================================================================================
Rubinstein et al.      :class:`PrivateSVMFinite`, :class:`PrivateSVM`
Chaudhuri et al.       :class:`OutputPerturbation`, :class:`ObjectivePerturbation`, :class:`PrivateKernelERM`,
                       :class:`PrivateTuning`
Hall et al.            :func:`gaussian_mechanism`, :class:`GaussianProcessRelease`, :class:`PrivateKDE`,
                       :class:`PrivateKernelMachine`
Bassily et al.         :class:`PrivateMarginClassifier`, :class:`PrivateKernelMarginClassifier`,
                       :class:`ExponentialMarginClassifier`, :class:`PrivateMarginSelection`
Park                   :class:`PrivateSVDD`, :class:`EquilibriumPointClassifier`
gradient methods       :class:`NoisyGradientDescent`, :class:`DPSGD`, :class:`ApproximateMinimaPerturbation`,
                       :class:`OutputPerturbedSGD` (Bassily et al. 2014, Abadi et al. 2016, Iyengar et al. 2019, Wu et al.
                       2017: the field's later methods, on the original features)
multi-class            :class:`PrivateOneVsRest` (any binary mechanism, one budget)
selection              :class:`PrivateSelection` (Algorithm 4 of Chaudhuri et al. generalised: any private candidates)
which mechanism?       :func:`recommend` (read from the committed frontier results)
feature maps           :class:`RandomFourierFeatures`, :class:`RademacherJL`, :class:`GaussianJL`, :class:`SparseJL`,
                       :class:`SRHT`, :class:`PublicBoundsScaler` (public bounds: rows into the ball ``data_norm``);
                       the frontier's public maps :class:`AdultFeatures`, :class:`KDDCup99Features`,
                       :class:`SatimageFeatures`, :class:`ShuttleFeatures`
=====================  ==============================================================================================

Every mechanism takes its privacy level, its label set and its norm bounds as public parameters (never read from
the data), states its guarantee in the fitted ``guarantee_`` (:class:`Guarantee`: epsilon, delta, the replace-one
neighbouring relation, what is released, the assumptions, and ``status``: whether the object is a release; a seeded
fit is a reproduction) and exports what may be published with ``release()``.  :class:`SecretKey` makes a fit
reproducible for its holder and private for everyone else; :func:`nonprivate_diagnostics` lets logs carry statistics
of the rows, explicitly.
Privacy accounting (composition, budgets, Gaussian calibration) is in :mod:`dpkernels.accounting`.

Names and submodules are imported on first use (PEP 562 ``__getattr__``): ``import dpkernels`` loads none of
numpy, scikit-learn, cvxpy, pandas or dp-accounting, and an estimator loads only what its module needs.

Examples
--------
>>> from dpkernels import PrivateSVM
>>> PrivateSVM(epsilon=0.5, classes=[0, 1])
PrivateSVM(classes=[0, 1], epsilon=0.5)
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

__version__ = "0.2.0"

#: Public name -> the module that defines it (every name of :mod:`dpkernels.mechanisms` is here too).
_EXPORTS: dict[str, str] = {
    "PrivacyLeakWarning": "dpkernels._validation",
    "ClippingWarning": "dpkernels._validation",
    "UnsafeNoiseWarning": "dpkernels._validation",
    "UtilityWarning": "dpkernels._validation",
    "SecretKey": "dpkernels._validation",
    "nonprivate_diagnostics": "dpkernels._validation",
    "LargeDeltaWarning": "dpkernels.argmin_release",
    **{name: "dpkernels.mechanisms" for name in (
        "Guarantee",
        "PrivateSVM",
        "PrivateSVMFinite",
        "OutputPerturbation",
        "ObjectivePerturbation",
        "PrivateKernelERM",
        "PrivateTuning",
        "gaussian_mechanism",
        "GaussianProcessRelease",
        "PrivateKDE",
        "PrivateKernelMachine",
        "CalibrationWarning",
        "PrivateMarginClassifier",
        "PrivateKernelMarginClassifier",
        "ExponentialMarginClassifier",
        "PrivateMarginSelection",
        "PrivateSVDD",
        "EquilibriumPointClassifier",
        "PrivateOneVsRest",
        "NoisyGradientDescent",
        "DPSGD",
        "ApproximateMinimaPerturbation",
        "OutputPerturbedSGD",
    )},
    "RandomFourierFeatures": "dpkernels.random_features",
    "PrivateSelection": "dpkernels.selection",
    "recommend": "dpkernels.recommendation",
    **{name: "dpkernels.feature_maps" for name in (
        "AdultFeatures", "KDDCup99Features", "SatimageFeatures", "ShuttleFeatures")},
    "PublicBoundsScaler": "dpkernels.preprocessing",
    "RademacherJL": "dpkernels.jl",
    "GaussianJL": "dpkernels.jl",
    "SparseJL": "dpkernels.jl",
    "SRHT": "dpkernels.jl",
}

#: Submodules reachable as attributes after ``import dpkernels`` (``dpkernels.datasets.load_adult()``).
_SUBMODULES = (
    "accounting", "argmin_release", "audit", "bounds", "cache", "cli", "datasets", "defaults", "experiments",
    "feature_maps", "jl", "kernels", "lattice", "losses", "mechanisms", "noise", "notebooks", "preprocessing", "profiles",
    "prose", "random_features", "recommendation", "reference", "report", "runner", "scale_runs", "selection", "site",
    "solvers", "sweep", "testing", "verdicts", "workbook",
)

__all__ = [*_EXPORTS, "__version__"]

if TYPE_CHECKING:  # what static checkers see; tests/test_imports.py checks it against _EXPORTS
    from dpkernels._validation import (
        ClippingWarning,
        PrivacyLeakWarning,
        SecretKey,
        UnsafeNoiseWarning,
        UtilityWarning,
        nonprivate_diagnostics,
    )
    from dpkernels.feature_maps import AdultFeatures, KDDCup99Features, SatimageFeatures, ShuttleFeatures
    from dpkernels.argmin_release import LargeDeltaWarning
    from dpkernels.jl import SRHT, GaussianJL, RademacherJL, SparseJL
    from dpkernels.mechanisms import (
        DPSGD,
        ApproximateMinimaPerturbation,
        CalibrationWarning,
        EquilibriumPointClassifier,
        ExponentialMarginClassifier,
        GaussianProcessRelease,
        Guarantee,
        NoisyGradientDescent,
        ObjectivePerturbation,
        OutputPerturbation,
        OutputPerturbedSGD,
        PrivateKDE,
        PrivateKernelERM,
        PrivateKernelMachine,
        PrivateKernelMarginClassifier,
        PrivateMarginClassifier,
        PrivateMarginSelection,
        PrivateOneVsRest,
        PrivateSVDD,
        PrivateSVM,
        PrivateSVMFinite,
        PrivateTuning,
        gaussian_mechanism,
    )
    from dpkernels.preprocessing import PublicBoundsScaler
    from dpkernels.random_features import RandomFourierFeatures
    from dpkernels.recommendation import recommend
    from dpkernels.selection import PrivateSelection


def __getattr__(name: str) -> Any:
    if name in _EXPORTS:
        value = getattr(importlib.import_module(_EXPORTS[name]), name)
    elif name in _SUBMODULES:
        value = importlib.import_module(f"{__name__}.{name}")
    else:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__) | set(_SUBMODULES))
