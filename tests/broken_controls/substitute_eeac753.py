"""Demonstration plugin (never loaded by ``make test``): the current estimators with eeac753's leaking release paths
substituted, to show that ``tests/test_fp_attacks.py`` fails on them::

    PYTHONPATH=tests .venv/bin/python -m pytest -p broken_controls.substitute_eeac753 tests/test_fp_attacks.py

ObjectivePerturbation (and so PrivateKernelERM's and PrivateTuning's default learners) releases eeac753's float64
argmin (:func:`broken_controls.eeac753.releasing_the_float_argmin`); EquilibriumPointClassifier keeps the generator
that drew its noise in ``svdd_.random_state`` (:func:`broken_controls.eeac753.keeping_the_generator`).
"""

from __future__ import annotations

from typing import Any

from broken_controls import eeac753
from dpkernels.mechanisms import chaudhuri, park


def pytest_configure(config: Any) -> None:
    chaudhuri.ObjectivePerturbation.fit = eeac753.releasing_the_float_argmin(chaudhuri.ObjectivePerturbation.fit)
    park.EquilibriumPointClassifier.fit = eeac753.keeping_the_generator(park.EquilibriumPointClassifier.fit)
