"""dpkernels: reference implementations of differentially private kernel and SVM learning.

The package reproduces five papers (Rubinstein et al. 2012, Chaudhuri et al. 2011, Hall et al. 2013,
Bassily et al. 2022, Park 2022).  Mechanisms live in :mod:`dpkernels.mechanisms`, theorem-bound
calculators in :mod:`dpkernels.bounds`, empirical sensitivity and privacy audits in
:mod:`dpkernels.audit`, data loaders in :mod:`dpkernels.datasets`.
"""

from dpkernels._validation import ClippingWarning, PrivacyLeakWarning, UnsafeNoiseWarning

__version__ = "0.1.0"

__all__ = ["PrivacyLeakWarning", "ClippingWarning", "UnsafeNoiseWarning", "__version__"]
