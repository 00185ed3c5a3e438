"""Hall, Rinaldo and Wasserman (2013): the experiment driver (:mod:`dpkernels.experiments.hall2013`) and the criteria
behind the notebook's verdicts, each with a case where it must fail."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from dpkernels.accounting import gaussian_sigma
from dpkernels.experiments import hall2013 as E
from dpkernels.report import Checks


def test_conditional_sampling_law_and_negative_control():
    """Adaptive queries reproduce N(f, s^2 (K + tau I)) at the union of the points; fresh noise per call is rejected."""
    res = E.conditional_sampling_experiment(250, random_state=5)
    assert res["repeated_and_permuted_identical"]
    assert res["released"]["p_covariance"] > 1e-3 and res["released"]["z_max"] < 5
    assert res["independent_per_call"]["p_covariance"] < 1e-6


def test_machine_sensitivity_search_stays_below_the_bound():
    df = E.kernel_machine_sensitivity_experiment([("hinge", 0.05, 0.5)], n=20, d=2, n_random=10, n_adv=4, maxiter=20)
    r = df.iloc[0]
    assert 0.3 < r.ratio <= 1.0 + r.max_certified_error / r.bound


def test_epsilon_delta_lower_bound_detects_too_little_noise_and_not_enough():
    from dpkernels.audit import epsilon_lower_bound

    rng = np.random.default_rng(0)
    mu = 1.0
    s = gaussian_sigma(1.0, 1e-5, mu)
    a, b = s * rng.standard_normal(200_000), mu + s * rng.standard_normal(200_000)
    assert epsilon_lower_bound(-a, -b, n_thresholds=400, delta=1e-5).epsilon_lb <= 1.0
    a2, b2 = a / 3, mu + (b - mu) / 3  # a third of the noise: true epsilon about 4
    assert epsilon_lower_bound(-a2, -b2, n_thresholds=400, delta=1e-5).epsilon_lb > 1.0


def test_whitened_covariance_test_rejects_a_wrong_covariance():
    rng = np.random.default_rng(0)
    Z = rng.standard_normal((500, 4))
    assert E.whitened_covariance_test(Z)["p_covariance"] > 1e-3
    W = Z.copy()
    W[:, 1] = 0.6 * Z[:, 0] + 0.8 * Z[:, 1]  # unit variance, correlation 0.6
    assert E.whitened_covariance_test(W)["p_covariance"] < 1e-6


def test_kde_pair_audit_with_its_negative_control():
    ok = E.kde_pair_audit(1, 20, 0.05, 1.0, 1e-5, 30_000, random_state=1)
    assert ok["releases_on_grid"] and ok["epsilon_lb"] <= 1.0 and ok["pair_epsilon_exact"] <= 1.0 + 1e-9
    bad = E.kde_pair_audit(1, 20, 0.05, 1.0, 1e-5, 30_000, noise_factor=0.4, random_state=1)
    assert bad["epsilon_lb"] > 1.0


def test_kernel_machine_audit_is_near_its_pair_and_its_control_is_caught():
    ok = E.kernel_machine_pair_audit(20, 1.0, 0.05, 1.0, 1e-5, 30_000, random_state=1)
    assert ok["nonprivate_change"] == pytest.approx(ok["rkhs_sensitivity"], rel=1e-2)  # the bound is attained
    assert ok["epsilon_lb"] <= 1.0 and ok["pair_epsilon_exact"] <= 1.0 + 1e-9
    bad = E.kernel_machine_pair_audit(20, 1.0, 0.05, 1.0, 1e-5, 100_000, noise_factor=0.4, random_state=1)
    assert bad["epsilon_lb"] > 1.0


def test_proposition_2_1_fails_where_proposition_1_1_does():
    pb = E.proposition_2_1_beyond_boundary([1.0, 20.0], 1e-2)
    assert pb.exact_delta.iloc[0] <= 1e-2 < pb.exact_delta.iloc[1]
    assert np.allclose(pb.pair_mahalanobis, pb.sensitivity_calibrated, rtol=1e-6)


def test_kernel_machine_rate_excess_risks_are_exact_and_ordered():
    _, kr = E.kernel_machine_rate_experiment([100, 200], 3, random_state=1)
    assert (kr.excess_private >= 0).all() and (kr.excess_nonprivate >= 0).all()
    assert (kr.excess_private <= 0.8).all() and (kr.privacy_error > 0).all()
    s, se = E.km_rate_slope(kr)
    assert np.isfinite(s) and se > 0


def test_goodness_of_fit_needs_a_rejected_control():
    assert E.goodness_of_fit(0.5, 1e-9).status == "holds"
    assert E.goodness_of_fit(1e-5, 1e-9).status == "violated"
    assert E.goodness_of_fit(0.5, 0.2).status == "inconclusive"  # the test showed no power
    assert E.goodness_of_fit(float("nan"), 1e-9).status == "inconclusive"


def test_relative_equivalence_holds_violated_inconclusive():
    assert E.relative_equivalence(1.01, 0.01, 1.0).status == "holds"
    assert E.relative_equivalence(1.5, 0.01, 1.0).status == "violated"
    assert E.relative_equivalence(1.05, 0.1, 1.0).status == "inconclusive"


def test_monte_carlo_delta_without_positive_terms_uses_clopper_pearson():
    mc = pd.DataFrame([E.calibration_monte_carlo(1.0, 1e-5, 400_000, random_state=0)])
    assert int(mc.n_positive.iloc[0]) == 0
    checks = Checks("hall2013")
    E.record_calibration_mc(checks, mc)
    assert checks.rows[-1]["status"] == "holds"  # 0 of 400,000: P(term > 0) <= 9.2e-6 < 1e-5
    mc2 = pd.DataFrame([E.calibration_monte_carlo(1.0, 1e-5, 100_000, random_state=0)])
    E.record_calibration_mc(checks, mc2)
    assert checks.rows[-1]["status"] == "inconclusive"  # 0 of 100,000 cannot confirm 1e-5


def test_record_km_rate_flags_a_growing_ratio():
    kr = pd.DataFrame({"n": [100, 400, 1600], "risk_ratio": [1.0, 4.0, 16.0], "risk_ratio_se": [0.05, 0.2, 0.8],
                       "excess_nonprivate": [0.1, 0.05, 0.02], "privacy_error": [1.0, 1.0, 1.0],
                       "sampling_variance": [1.0, 1.0, 1.0]})
    checks = Checks("hall2013")
    E.record_km_rate(checks, kr)
    assert checks.rows[-1]["status"] == "violated"
    E.record_km_rate(checks, kr.assign(risk_ratio=[2.0, 1.5, 1.0], risk_ratio_se=[0.1, 0.1, 0.1]))
    assert checks.rows[-1]["status"] == "holds"
