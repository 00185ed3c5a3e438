"""Theorem-bound calculators, one module per paper, one function per statement.

Each function is a small pure function of explicit inputs and names the statement it implements
(e.g. :func:`dpkernels.bounds.rubinstein.theorem_10_noise_scale`).  Where a paper's statement and what
its own ingredients imply differ, both are given (the ``*_derived`` functions) and the difference is
recorded in ``ERRATA.md``.
"""

from dpkernels.bounds import bassily, chaudhuri, hall, rubinstein

__all__ = ["bassily", "chaudhuri", "hall", "rubinstein"]
