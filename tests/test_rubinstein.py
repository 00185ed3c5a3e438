"""PrivateSVM-Finite / PrivateSVM (Rubinstein et al. 2012) and the bound calculators."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
from scipy import stats
from sklearn.base import clone

from dpkernels import ClippingWarning, PrivacyLeakWarning
from dpkernels.audit import epsilon_lower_bound, laplace_llr_statistic
from dpkernels.bounds import rubinstein as R
from dpkernels.mechanisms import PrivateSVM, PrivateSVMFinite
from dpkernels.solvers import solve_hinge_dual_cvxpy


def data(n=120, d=3, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    X /= np.maximum(1.0, np.linalg.norm(X, axis=1))[:, None]
    y = np.where(X[:, 0] > 0, 1, -1)
    return X, y


def test_finite_noise_scale_is_theorem_10_and_noise_is_laplace():
    X, y = data()
    m = PrivateSVMFinite(epsilon=0.7, C=3.0, data_norm=1.0, random_state=1).fit(X, y)
    assert m.noise_scale_ == pytest.approx(R.theorem_10_noise_scale(0.7, 1.0, 3.0, 1.0, 3, 120))
    assert m.sensitivity_l2_ == pytest.approx(4 * 3.0 / 120)
    assert m.guarantee_.epsilon == pytest.approx(0.7)
    noise = (m.sample_releases(20000, 2) - m.nonprivate_solution.coef).ravel()
    assert stats.kstest(noise, stats.laplace(scale=m.noise_scale_).cdf).pvalue > 1e-3


def test_private_svm_noise_is_corollary_12_and_release_has_frequencies():
    X, y = data()
    m = PrivateSVM(epsilon=2.0, C=5.0, n_components=25, sigma=0.8, random_state=3).fit(X, y)
    assert m.noise_scale_ == pytest.approx(R.corollary_12_noise_scale(2.0, 1.0, 5.0, 25, 120))
    assert m.coef_.shape == (50,) and m.frequencies_.shape == (25, 3)
    assert np.allclose(np.linalg.norm(m.rff_.transform(X), axis=1), 1.0)
    assert set(np.unique(m.predict(X))) <= {-1, 1}


def test_same_seed_same_release_and_clone():
    X, y = data()
    a = PrivateSVM(epsilon=1.0, n_components=10, random_state=5).fit(X, y).coef_
    b = PrivateSVM(epsilon=1.0, n_components=10, random_state=5).fit(X, y).coef_
    assert np.array_equal(a, b)
    est = PrivateSVMFinite(epsilon=0.3, C=2.0, data_norm=1.0)
    assert clone(est).get_params() == est.get_params()


@pytest.mark.parametrize("loss", ["hinge", "huber", "logistic"])
def test_nonprivate_solution_is_certified(loss):
    X, y = data()
    m = PrivateSVMFinite(epsilon=1.0, C=10.0, data_norm=1.0, loss=loss, random_state=0).fit(X, y)
    assert m.solver_distance_bound_ <= 1e-3 * m.sensitivity_l2_


@pytest.mark.parametrize(
    "kwargs, X_fix, y_fix, match",
    [
        ({"epsilon": 0.0}, None, None, "epsilon"),
        ({"epsilon": -1.0}, None, None, "epsilon"),
        ({"C": 0.0}, None, None, "C must be positive"),
        ({}, None, np.r_[np.zeros(60), np.ones(60)], "labels must be -1 or \\+1"),
        ({}, "nan", None, "NaN"),
    ],
)
def test_invalid_inputs_raise(kwargs, X_fix, y_fix, match):
    X, y = data()
    if X_fix == "nan":
        X = X.copy()
        X[0, 0] = np.nan
    if y_fix is not None:
        y = y_fix
    with pytest.raises(ValueError, match=match):
        PrivateSVMFinite(data_norm=1.0, **{"epsilon": 1.0, **kwargs}).fit(X, y)


def test_norm_bound_refused_or_clipped():
    X, y = data()
    X = X * 2.0
    with pytest.raises(ValueError, match="exceed the bound"):
        PrivateSVMFinite(epsilon=1.0, data_norm=1.0).fit(X, y)
    with pytest.warns(ClippingWarning):
        m = PrivateSVMFinite(epsilon=1.0, data_norm=1.0, clip=True, random_state=0).fit(X, y)
    assert m.kappa_ == 1.0


def test_inferred_norm_warns_of_leak():
    X, y = data()
    with pytest.warns(PrivacyLeakWarning):
        PrivateSVMFinite(epsilon=1.0, random_state=0).fit(X, y)


def test_intercept_enlarges_kappa():
    X, y = data()
    m = PrivateSVMFinite(epsilon=1.0, data_norm=1.0, fit_intercept=True, intercept_scaling=2.0, random_state=0).fit(X, y)
    assert m.kappa_ == pytest.approx(math.sqrt(5.0))
    assert m.noise_scale_ == pytest.approx(R.theorem_10_noise_scale(1.0, 1.0, 1.0, math.sqrt(5.0), 4, 120))


def test_audit_stays_below_epsilon_on_near_worst_case_pair():
    """A small privacy audit (the notebook runs the large one): the 95% lower bound must stay <= epsilon."""
    pair = R.lemma_22_databases(20, 0.5, M=1.0, m=0.01)
    fit = lambda X, y: PrivateSVMFinite(epsilon=1.0, C=0.5, data_norm=1.0, random_state=0).fit(X, y)  # noqa: E731
    a, b = fit(pair.X1, pair.y1), fit(pair.X2, pair.y2)
    c, cp = a.nonprivate_solution.coef, b.nonprivate_solution.coef
    res = epsilon_lower_bound(laplace_llr_statistic(a.sample_releases(50000, 1), c, cp),
                              laplace_llr_statistic(b.sample_releases(50000, 2), c, cp))
    assert res.epsilon_lb <= 1.0
    assert res.epsilon_lb > 0.3  # the pair's exact privacy loss is 0.495: the audit has power


def test_lemma_22_closed_form_matches_qp():
    for n, C in ((5, 0.3), (12, 4.0)):
        db = R.lemma_22_databases(n, C)
        w1, w2, cond = R.lemma_22_closed_form(n, C, db.M, db.m)
        assert cond
        assert solve_hinge_dual_cvxpy(db.y1, C, X=db.X1).coef[0] == pytest.approx(w1, abs=1e-6)
        assert solve_hinge_dual_cvxpy(db.y2, C, X=db.X2).coef[0] == pytest.approx(w2, abs=1e-6)
        assert abs(w1 - w2) == pytest.approx(R.lemma_22_separation(C, n))


def test_lemma_25_duals_match_qp():
    from dpkernels.kernels import RBFKernel

    n, C, sigma = 12, 4.0, 0.4
    db = R.lemma_25_databases(n, sigma)
    alpha = solve_hinge_dual_cvxpy(db.y, C, K=RBFKernel(sigma)(db.X[0])).alpha
    a1, an, _ = R.lemma_25_duals(n, C, math.exp(-1 / (2 * sigma**2)))
    assert np.allclose(alpha[:-1], a1, atol=1e-6) and alpha[-1] == pytest.approx(an, abs=1e-6)


def test_calculator_values():
    assert R.lemma_9_sensitivity(1, 2.0, 1.0, 100, 9) == pytest.approx((0.08, 0.24))
    assert R.corollary_12_noise_scale(1.0, 1, 1.0, 8, 10) == pytest.approx(R.theorem_10_noise_scale(1.0, 1, 1.0, 1.0, 16, 10))
    assert R.corollary_20_theta(0.5, 1.0) <= R.theorem_13_theta(0.5, 1.0, 1.0, 1.0)
    assert R.theorem_23_beta_lower(0.1) == pytest.approx(math.log(9))
    assert R.lemma_25_N(0.5) == 6
    assert R.theorem_11_tail_bound(1.0, R.theorem_11_max_noise_scale(1.0, 0.05, 1.0, 4), 1.0, 4) <= 0.05
    assert R.corollary_15_tail_bound(1.0, R.corollary_15_max_noise_scale(1.0, 0.1, 50), 50) <= 0.05
    assert R.lemma_18_failure_probability(0.1, math.ceil(R.lemma_18_d_hat(0.1, 0.1, 2, 1.4, 1.0)), 2, 1.4, 1.0) <= 0.1
    with pytest.raises(ValueError):
        R.theorem_23_beta_lower(1.5)


@pytest.mark.parametrize("estimator", [PrivateSVMFinite(epsilon=1.0, C=10.0, data_norm=1.0, random_state=0),
                                       PrivateSVM(epsilon=1.0, C=10.0, n_components=5, random_state=0)],
                         ids=["finite", "rff"])
def test_uncertified_solve_is_refused(estimator, monkeypatch):
    """The guarantee assumes the exact minimiser: a solution certified only beyond solver_tol x the sensitivity
    (here 1.0, far above 1e-3 x 4LC kappa / n) is refused, not released with noise."""
    import dataclasses

    from dpkernels.mechanisms import rubinstein
    from dpkernels.solvers import solve_erm

    monkeypatch.setattr(rubinstein, "solve_erm",
                        lambda *args, **kwargs: dataclasses.replace(solve_erm(*args, **kwargs), distance_bound=1.0))
    rng = np.random.default_rng(1)
    X = rng.normal(size=(80, 3))
    X /= np.maximum(1.0, np.linalg.norm(X, axis=1))[:, None]
    y = np.where(X[:, 0] > 0, 1, -1)
    model = clone(estimator)
    with pytest.raises(RuntimeError, match="refusing to release"):
        model.fit(X, y)
    assert not hasattr(model, "coef_")  # nothing noisy was computed from the uncertified solution
