"""Differentially private mechanisms, one module per paper, as scikit-learn-style estimators."""

from dpkernels.mechanisms.base import Guarantee
from dpkernels.mechanisms.bassily import (
    ExponentialMarginClassifier,
    PrivateKernelMarginClassifier,
    PrivateMarginClassifier,
    PrivateMarginSelection,
)
from dpkernels.mechanisms.chaudhuri import ObjectivePerturbation, OutputPerturbation, PrivateKernelERM, PrivateTuning
from dpkernels.mechanisms.hall import GaussianProcessRelease, PrivateKDE, PrivateKernelMachine, gaussian_mechanism
from dpkernels.mechanisms.park import EquilibriumPointClassifier, PrivateSVDD
from dpkernels.mechanisms.rubinstein import PrivateSVM, PrivateSVMFinite

__all__ = [
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
    "PrivateMarginClassifier",
    "PrivateKernelMarginClassifier",
    "ExponentialMarginClassifier",
    "PrivateMarginSelection",
    "PrivateSVDD",
    "EquilibriumPointClassifier",
]
