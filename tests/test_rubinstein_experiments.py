"""Rubinstein, Bartlett, Huang and Taft (2012): the experiment driver (:mod:`dpkernels.experiments.rubinstein2012`) and
the three-valued criteria behind the notebook's verdicts, each with a case where it must fail."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from dpkernels.bounds import rubinstein as R
from dpkernels.experiments import rubinstein2012 as E
from dpkernels.experiments.rubinstein2012.statements import _grid_kernel_error, _two_variable_dual


def test_grid_kernel_error_equals_the_direct_sum():
    from dpkernels.kernels import CauchyKernel, RBFKernel

    axis = np.linspace(-1, 1, 15)
    D = np.array(np.meshgrid(axis, axis)).reshape(2, -1).T
    for kern in (RBFKernel(0.7), CauchyKernel(1.0)):
        f = kern.sample_frequencies(500, 2, np.random.default_rng(1))
        direct = np.max(np.abs(np.cos(D @ f.T).mean(axis=1) - kern.g(D)))
        assert _grid_kernel_error(kern, f, axis) == pytest.approx(direct, abs=1e-12)


@pytest.mark.parametrize("n, C, gamma", [(10, 5.0, 0.13), (10, 5.0, -0.6), (40, 1.0, 0.3), (6, 30.0, 0.2), (10, 5.0, 0.999)])
def test_two_variable_dual_is_the_n_point_dual(n, C, gamma):
    """Lemma 25's reduction: n - 1 equal rows and one other, any kernel value gamma (random features can make it
    negative); the two-variable solution is the n-variable dual's."""
    from dpkernels.solvers.hinge import solve_hinge_dual_gram

    K = np.ones((n, n))
    K[-1, :] = K[:, -1] = gamma
    K[-1, -1] = 1.0
    y = np.r_[-np.ones(n - 1), 1.0]
    a1, an = _two_variable_dual(n, C, gamma)
    ref = solve_hinge_dual_gram(y, C, K).alpha
    assert ref[:-1].mean() == pytest.approx(a1, abs=1e-7) and ref[-1] == pytest.approx(an, abs=1e-7)


def test_theorem_23_and_26_experiments_respect_their_bounds():
    t23, info = E.theorem_23_experiment([1, 4], 4000, random_state=1)
    assert info["separation"] > info["two_eps_u"] and E.lower_bound_respected(t23)
    t26, info26 = E.theorem_26_experiment([4, 16], 10, d_hat=500, random_state=1)
    assert info26["N"] == R.lemma_25_N(0.5) and E.lower_bound_respected(t26)


def test_verdict_criteria_fail_where_they_must():
    # Table 2: the printed Cauchy pair (mass 4, g(0) = 4) and the printed RBF law at sigma = 2 (error 0.45 >> the margin)
    assert E.kernel_pair_outcome(1.0, 1.0, 0.002, 0.001).status == "holds"
    assert E.kernel_pair_outcome(4.0, 4.0, 0.002, 0.001).status == "violated"
    assert E.kernel_pair_outcome(1.0, 1.0, 0.45, 0.003).status == "violated"
    assert E.kernel_pair_outcome(1.0, 1.0, 0.009, 0.003).status == "inconclusive"
    # rates: Theorem 21's explicit bound over its claimed rate has slope -1.9 in eps
    assert E.rate_holds(0.1) and not E.rate_holds(-1.9)
    # usefulness: 50 failures in 100 draws refute delta = 0.1; 0 in 20 cannot confirm it; 2 in 300 confirm it
    assert E.usefulness_outcome(50, 100, 0.1).status == "violated"
    assert E.usefulness_outcome(0, 20, 0.1).status == "inconclusive"
    assert E.usefulness_outcome(2, 300, 0.1).status == "holds"
    # lower bounds (Theorems 23, 26): one noise level below the bound fails the check
    frame = pd.DataFrame({"pair_loss": [3.0, 1.0], "theorem_bound": [2.0, 2.0]})
    assert not E.lower_bound_respected(frame) and E.lower_bound_respected(frame.iloc[:1])
    assert not E.lower_bound_respected(frame.iloc[:0])
    assert E.lower_bound_outcome(frame).status == "violated" and E.lower_bound_outcome(frame.iloc[:1]).status == "holds"
    # audits need their control
    assert E.audit_outcome(0.5, 1.0, 1.5).status == "holds" and E.audit_outcome(0.5, 1.0, 0.9).status == "inconclusive"
    assert E.audit_outcome(1.2, 1.0, 1.5).status == "violated"
    # Adult target: 0.77 +- 0.01 does not beat a majority of 0.76 by a one-sided 95% bound, 0.80 does
    assert E.useful_on_data(0.80, 0.01, 0.76).status == "holds" and E.useful_on_data(0.77, 0.01, 0.76).status == "inconclusive"
    assert E.useful_on_data(0.70, 0.01, 0.76).status == "violated"
