"""Differentially private mechanisms, one module per paper, as scikit-learn-style estimators.

The names below are imported on first use (PEP 562 ``__getattr__``): ``import dpkernels.mechanisms`` is cheap, and
``from dpkernels.mechanisms import PrivateSVM`` loads only what that estimator's module needs.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

#: Public name -> the module of this package that defines it.
_EXPORTS: dict[str, str] = {
    "Guarantee": "base",
    "PrivateSVM": "rubinstein",
    "PrivateSVMFinite": "rubinstein",
    "OutputPerturbation": "chaudhuri",
    "ObjectivePerturbation": "chaudhuri",
    "PrivateKernelERM": "chaudhuri",
    "PrivateTuning": "chaudhuri",
    "gaussian_mechanism": "hall",
    "GaussianProcessRelease": "hall",
    "PrivateKDE": "hall",
    "PrivateKernelMachine": "hall",
    "CalibrationWarning": "hall",
    "PrivateMarginClassifier": "bassily",
    "PrivateKernelMarginClassifier": "bassily",
    "ExponentialMarginClassifier": "bassily",
    "PrivateMarginSelection": "bassily",
    "PrivateSVDD": "park",
    "EquilibriumPointClassifier": "park",
    "PrivateOneVsRest": "multiclass",
    "NoisyGradientDescent": "gradient",
    "DPSGD": "gradient",
    "ApproximateMinimaPerturbation": "gradient",
    "OutputPerturbedSGD": "gradient",
}

__all__ = list(_EXPORTS)

if TYPE_CHECKING:  # what static checkers see; tests/test_imports.py checks it against _EXPORTS
    from dpkernels.mechanisms.base import Guarantee
    from dpkernels.mechanisms.bassily import (
        ExponentialMarginClassifier,
        PrivateKernelMarginClassifier,
        PrivateMarginClassifier,
        PrivateMarginSelection,
    )
    from dpkernels.mechanisms.chaudhuri import ObjectivePerturbation, OutputPerturbation, PrivateKernelERM, PrivateTuning
    from dpkernels.mechanisms.gradient import DPSGD, ApproximateMinimaPerturbation, NoisyGradientDescent, OutputPerturbedSGD
    from dpkernels.mechanisms.hall import (
        CalibrationWarning,
        GaussianProcessRelease,
        PrivateKDE,
        PrivateKernelMachine,
        gaussian_mechanism,
    )
    from dpkernels.mechanisms.multiclass import PrivateOneVsRest
    from dpkernels.mechanisms.park import EquilibriumPointClassifier, PrivateSVDD
    from dpkernels.mechanisms.rubinstein import PrivateSVM, PrivateSVMFinite


def __getattr__(name: str) -> Any:
    if name not in _EXPORTS:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{_EXPORTS[name]}"), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
