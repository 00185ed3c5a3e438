"""Every verdict criterion, with a case where it must hold and one where it must fail."""

from __future__ import annotations

import math

import pytest

from dpkernels import verdicts as V


def test_compare_uses_the_standard_error_of_the_difference():
    # a published mean inside the spread of single runs (sd 0.05) but 10 standard errors away at 400 runs
    c = V.compare(published=0.30, reproduced=0.325, se_reproduced=0.05 / 20, se_published=V.published_se(0.05, 100))
    assert abs(c.z) > 3 and c.cls == "differs, unexplained"
    assert V.compare(0.30, 0.301, 0.002, 0.0).cls == "agrees"
    assert V.compare(0.8248, 0.2853, 0.01, explained="C3").cls == "differs, explained (C3)"
    assert V.compare(0.5, 0.5, 0.0).z == 0.0 and math.isinf(V.compare(0.5, 0.6, 0.0).z)
    assert V.published_se(0.05, None) == 0.0 and V.published_se(0.05, 25) == pytest.approx(0.01)


def test_bounds_audits_rates_and_slopes():
    assert V.at_most(0.5, 1.0) and not V.at_most(1.5, 1.0) and not V.at_most(float("nan"), 1.0)
    assert V.at_most(1.0 + 1e-9, 1.0, rtol=1e-6)
    assert V.at_least(2.5, 2.0) and not V.at_least(1.5, 2.0)
    assert V.audit_refutes(1.2, 1.0) and not V.audit_refutes(0.9, 1.0)
    assert V.audit_detects(2.5, 1.0) and not V.audit_detects(0.3, 1.0)
    assert V.slope([1, 10, 100], [1, 100, 10000]) == pytest.approx(2.0)
    assert V.slope_agrees(-1.05, -1, 0.25) and not V.slope_agrees(-5.1, -3, 0.25)
    assert V.rate_at_most(3, 1000, 0.01) and not V.rate_at_most(50, 1000, 0.01)
    assert V.status(True) == "holds" and V.status(False) == "violated"


def test_holm_controls_the_family_and_stops_at_the_first_failure():
    from dpkernels.verdicts import holm

    # 0.01 <= 0.05/4, 0.012 <= 0.05/3, 0.04 > 0.05/2: the last two fail although 0.04 < 0.05 alone
    assert holm([0.04, 0.01, 0.012, 0.03]) == [False, True, True, False]
    assert holm([0.001, float("nan")]) == [True, False]
    assert holm([0.2, 0.3]) == [False, False]
