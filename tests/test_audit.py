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


# ----------------------------------------------------------------------------------------------
# the one-run audit (Steinke, Nasr and Jagielski 2023)
# ----------------------------------------------------------------------------------------------
def test_one_run_bound_is_valid_and_near_tight_for_randomized_response():
    """m canaries through randomized response at eps0 (each O_i = S_i with probability e^eps0 / (1 + e^eps0), exactly
    eps0-DP in every coordinate of S): over 300 runs the 95% bound exceeds eps0 in at most 10% of them (expected
    <= 5%; the test's false-alarm rate is < 1e-3), and its median is within 0.15 of eps0 (the Binomial domination is
    tight for randomized response)."""
    from dpkernels.audit import one_run_epsilon_lower_bound

    rng = np.random.default_rng(3)
    eps0, m, runs = 1.0, 1000, 300
    q = np.exp(eps0) / (1.0 + np.exp(eps0))
    lbs = []
    for _ in range(runs):
        S = rng.random(m) < 0.5
        O = np.where(rng.random(m) < q, S, ~S)
        lbs.append(one_run_epsilon_lower_bound(m, m, int(np.sum(O == S))))
    lbs = np.array(lbs)
    assert np.mean(lbs > eps0) <= 0.10
    assert eps0 - 0.15 <= np.median(lbs) <= eps0


def test_one_run_p_value_pure_and_approximate():
    """delta = 0: the Binomial(r, e^eps / (1 + e^eps)) tail; delta > 0 adds 2 m delta max_i P[v-i <= Bin < v] / i
    (computed here term by term), so a larger delta gives a lower bound, down to nothing."""
    from dpkernels.audit import one_run_epsilon_lower_bound, one_run_p_value

    m, r, v, eps, delta = 200, 60, 52, 1.2, 1e-4
    q = 1.0 / (1.0 + np.exp(-eps))
    assert one_run_p_value(eps, m, r, v) == pytest.approx(stats.binom.sf(v - 1, r, q), rel=1e-12)
    alpha = max(sum(stats.binom.pmf(v - j, r, q) for j in range(1, i + 1)) / i for i in range(1, v + 1))
    assert one_run_p_value(eps, m, r, v, delta) == pytest.approx(stats.binom.sf(v - 1, r, q) + 2 * m * delta * alpha)
    pure = one_run_epsilon_lower_bound(m, r, v)
    bounds = [one_run_epsilon_lower_bound(m, r, v, delta=dl) for dl in (delta, 1e-3, 1e-2)]
    assert pure > bounds[0] > bounds[1] > bounds[2] == 0.0  # 2 m delta = 4: nothing left
    assert one_run_p_value(pure, m, r, v) < 0.05 <= one_run_p_value(pure + 1e-5, m, r, v)
    assert one_run_epsilon_lower_bound(m, r, r // 2) == 0.0  # chance level shows nothing
    with pytest.raises(ValueError):
        one_run_p_value(1.0, 10, 11, 5)


def test_one_run_guesses_and_audit():
    """Guesses: the k highest scores +1, the k lowest -1, ties by position; the audit takes the best of its guess
    counts at beta / (number of counts), detects a blatant leak and shows nothing on scores independent of S."""
    from dpkernels.audit import one_run_audit, one_run_epsilon_lower_bound, one_run_guesses

    assert one_run_guesses([1.0, 1.0, 0.0, 1.0], 2, 1).tolist() == [0, 1, -1, 1]
    with pytest.raises(ValueError):
        one_run_guesses([1.0, 2.0], 2, 1)
    rng = np.random.default_rng(5)
    S = rng.random(400) < 0.5
    leak = one_run_audit(np.where(S, 1.0, -1.0) + 0.01 * rng.standard_normal(400), S, guess_counts=[(20, 20), (50, 50)])
    assert leak.k == (50, 50) and (leak.guesses, leak.correct) == (100, 100)
    assert leak.epsilon_lb == pytest.approx(one_run_epsilon_lower_bound(400, 100, 100, beta=0.025), abs=1e-5)
    null = one_run_audit(rng.standard_normal(400), S, guess_counts=[(20, 20), (50, 50)])
    assert null.epsilon_lb == 0.0 and set(null.per_k) == {(20, 20), (50, 50)}
