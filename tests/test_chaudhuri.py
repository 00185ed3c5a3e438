"""Output / objective perturbation (Chaudhuri et al. 2011) and the calculators."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from dpkernels import ClippingWarning
from dpkernels.bounds import chaudhuri as B
from dpkernels.experiments.chaudhuri2011 import ObjectiveMechanism, exact_objective_llr
from dpkernels.losses import make_loss
from dpkernels.mechanisms import ObjectivePerturbation, OutputPerturbation, PrivateKernelERM, PrivateTuning


def data(n=300, d=4, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    X /= np.maximum(1.0, np.linalg.norm(X, axis=1))[:, None]
    y = np.where(X[:, 0] + 0.3 * rng.normal(size=n) > 0, 1, -1)
    return X, y


def test_output_perturbation_noise_law():
    """||b|| ~ Gamma(d, 2/(n Lambda eps)) around the certified minimiser (Theorem 6, Corollary 8)."""
    X, y = data()
    m = OutputPerturbation(epsilon=0.5, Lambda=0.01, random_state=1).fit(X, y)
    assert m.sensitivity_ == pytest.approx(2 / (300 * 0.01))
    assert m.beta_ == pytest.approx(B.theorem_6_beta(0.5, 300, 0.01))
    b = m.sample_releases(20000, 2) - m.nonprivate_solution.coef
    p = stats.kstest(np.linalg.norm(b, axis=1), stats.gamma(a=4, scale=1 / m.beta_).cdf).pvalue
    assert p > 1e-3


@pytest.mark.parametrize("eps, Lambda, branch", [(1.0, 0.1, "eps' > 0"), (0.1, 1e-6, "Delta > 0")])
def test_theorem_9_branches(eps, Lambda, branch):
    p = B.theorem_9_parameters(eps, 1000, Lambda, 0.25)
    assert p.branch == branch
    if branch == "eps' > 0":
        assert p.epsilon_prime == pytest.approx(eps - 2 * math.log(1 + 0.25 / (1000 * Lambda)))
        assert p.Delta == 0.0
    else:
        assert p.epsilon_prime == pytest.approx(eps / 2)
        assert Lambda + p.Delta == pytest.approx(0.25 / (1000 * math.expm1(eps / 4)))
    assert p.beta == pytest.approx(p.epsilon_prime / 2)


def test_data_norm_generalisation_reduces_to_paper():
    a = B.theorem_9_parameters(0.3, 500, 1e-3, 0.25, data_norm=1.0)
    b = B.theorem_9_parameters(0.3, 500, 1e-3, 0.25)
    assert a == b
    c = B.theorem_9_parameters(0.3, 500, 1e-3, 0.25, data_norm=3.0)
    assert c.beta == pytest.approx(c.epsilon_prime / 6)


def test_objective_perturbation_stationarity_and_same_seed():
    X, y = data()
    m = ObjectivePerturbation(epsilon=1.0, Lambda=0.01, loss="huber", random_state=3).fit(X, y)
    again = ObjectivePerturbation(epsilon=1.0, Lambda=0.01, loss="huber", random_state=3).fit(X, y)
    assert np.array_equal(m.coef_, again.coef_)
    assert m.solver_distance_bound_ < 1e-6
    assert "Corollary 13" in m.guarantee_.statement


def test_exact_objective_llr_is_bounded_by_epsilon_on_a_pair():
    """Theorem 9 on a 1-d pair: sup over releases of |log p_D - log p_D'| <= eps (exact, on a grid)."""
    X1 = np.array([[0.0], [0.0], [1.0]])
    X2 = np.array([[0.0], [0.0], [0.0]])
    y = np.array([1.0, -1.0, 1.0])
    for eps, lam in ((1.0, 0.05), (0.5, 0.3)):
        p = B.theorem_9_parameters(eps, 3, lam, 0.25)
        llr = exact_objective_llr(np.linspace(-50, 50, 20001)[:, None], X1, y, X2, y, make_loss("logistic"),
                                  ObjectiveMechanism(lam, p.Delta, p.beta, False))
        assert np.max(np.abs(llr)) <= eps + 1e-9


@pytest.mark.parametrize("cls", [OutputPerturbation, ObjectivePerturbation])
def test_norm_bound_and_labels_enforced(cls):
    X, y = data()
    with pytest.raises(ValueError, match="exceed the bound"):
        cls(epsilon=1.0).fit(3 * X, y)
    with pytest.warns(ClippingWarning):
        cls(epsilon=1.0, clip=True, random_state=0).fit(3 * X, y)
    with pytest.raises(ValueError, match="labels"):
        cls(epsilon=1.0).fit(X, (y + 1) // 2)
    with pytest.raises(ValueError, match="loss must be"):
        cls(epsilon=1.0, loss="hinge").fit(X, y)
    with pytest.raises(ValueError, match="epsilon"):
        cls(epsilon=-1.0).fit(X, y)


def test_kernel_features_respect_unit_norm():
    X, y = data(n=200, d=2)
    m = PrivateKernelERM(epsilon=1.0, Lambda=0.01, n_components=50, random_state=0).fit(X, y)
    assert np.linalg.norm(m.rff_.transform(X), axis=1).max() <= 1 + 1e-12
    assert m.frequencies_.shape == (50, 2) and m.phases_.shape == (50,)
    paper = PrivateKernelERM(epsilon=1.0, Lambda=0.01, n_components=2, feature_scale="paper", random_state=0).fit(X, y)
    assert paper.model_.data_norm == pytest.approx(math.sqrt(2))


def test_private_tuning_selects_by_exponential_mechanism():
    X, y = data(n=1200)
    t = PrivateTuning(OutputPerturbation(), [1e-3, 1e-2, 1e-1], epsilon=1.0, random_state=0).fit(X, y)
    assert t.selected_ in (0, 1, 2) and len(t.mistakes_) == 3
    assert set(np.unique(t.predict(X))) <= {-1, 1}


def test_calculators():
    assert B.corollary_8_sensitivity(100, 0.1) == pytest.approx(0.2)
    assert B.lemma_17_quantile(1, 2.0, 0.05) == pytest.approx(2.0 * math.log(20))
    assert B.theorem_27_mistake_bound(10, 0.5, 5, 0.1) == pytest.approx(10 + 4 * math.log(50))
    q = B.algorithm_4_probabilities([0, 1, 2], 2.0)
    assert q.sum() == pytest.approx(1) and q[0] > q[1] > q[2]
    assert B.delta_branch_threshold(0.1, 40698, 0.25) == pytest.approx(0.25 / (40698 * math.expm1(0.05)))
    out, obj = B.corollary_21_sample_sizes(0.1, 0.1, 0.05, 10, 2.0, 0.5)
    assert out > 0 and obj > 0
