"""Differentially private mechanisms, one module per paper, as scikit-learn-style estimators."""

from dpkernels.mechanisms.base import Guarantee
from dpkernels.mechanisms.chaudhuri import ObjectivePerturbation, OutputPerturbation, PrivateKernelERM, PrivateTuning
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
    "PrivateSVDD",
    "EquilibriumPointClassifier",
]
