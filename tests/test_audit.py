"""The audit machinery: Clopper-Pearson intervals, the epsilon lower bound, sensitivity search."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from dpkernels.audit import (
    adversarial_neighbour_sensitivity,
    clopper_pearson,
    epsilon_lower_bound,
    laplace_llr_statistic,
    random_neighbour_sensitivity,
)


def test_clopper_pearson_matches_scipy():
    lo, hi = clopper_pearson(7, 50)
    ci = stats.binomtest(7, 50).proportion_ci(method="exact")
    assert (lo, hi) == pytest.approx((ci.low, ci.high))
    assert clopper_pearson(0, 10)[0] == 0.0 and clopper_pearson(10, 10)[1] == 1.0


@pytest.mark.parametrize("eps", [0.5, 2.0])
def test_lower_bound_is_valid_and_tight_for_scalar_laplace(eps):
    rng = np.random.default_rng(0)
    a = rng.laplace(0, 1 / eps, 100000)[:, None]
    b = 1 + rng.laplace(0, 1 / eps, 100000)[:, None]
    res = epsilon_lower_bound(laplace_llr_statistic(a, np.zeros(1), np.ones(1)), laplace_llr_statistic(b, np.zeros(1), np.ones(1)))
    assert 0.85 * eps <= res.epsilon_lb <= eps


def test_no_false_detection_between_identical_mechanisms():
    rng = np.random.default_rng(1)
    a, b = rng.normal(size=50000), rng.normal(size=50000)
    assert epsilon_lower_bound(a, b).epsilon_lb < 0.05


def test_sensitivity_search_on_a_mean():
    """A(D) = mean of rows in the unit ball: sensitivity 2/n, reached by antipodal replacement."""
    rng = np.random.default_rng(2)
    X = rng.normal(size=(10, 2))
    X /= np.linalg.norm(X, axis=1, keepdims=True)
    y = np.ones(10)
    fit = lambda A, b: A.mean(axis=0)  # noqa: E731
    sample = lambda r: (v := r.normal(size=2)) / np.linalg.norm(v)  # noqa: E731
    proj = lambda x: x / max(1.0, np.linalg.norm(x))  # noqa: E731
    rand = random_neighbour_sensitivity(fit, X, y, sample, n_neighbours=50, random_state=3)
    adv = adversarial_neighbour_sensitivity(fit, X, y, sample, proj, n_random=20, n_refine=2, maxiter=100, random_state=3)
    assert rand.l2 <= 0.2 + 1e-12
    assert adv.l2 >= rand.l2 and adv.l2 == pytest.approx(0.2, rel=1e-3)


def test_delta_lowers_the_bound_and_zero_delta_is_the_pure_dp_bound():
    """P_D(S) <= e^eps P_D'(S) + delta: subtracting delta can only lower the bound, delta = 0 is the pure-DP bound
    (same split, same thresholds), and a delta above every P_D(S) leaves nothing to detect."""
    from dpkernels.audit import epsilon_lower_bound

    rng = np.random.default_rng(0)
    a, b = rng.standard_normal(20_000) + 1.0, rng.standard_normal(20_000)
    pure = epsilon_lower_bound(a, b, random_state=1)
    assert epsilon_lower_bound(a, b, random_state=1, delta=0.0) == pure and pure.epsilon_lb > 0.5
    assert epsilon_lower_bound(a, b, random_state=1, delta=0.05).epsilon_lb < pure.epsilon_lb
    assert epsilon_lower_bound(a, b, random_state=1, delta=0.999).epsilon_lb == 0.0
    with pytest.raises(ValueError, match="delta"):
        epsilon_lower_bound(a, b, delta=1.0)
