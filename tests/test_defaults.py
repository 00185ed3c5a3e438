"""Public hyper-parameter rules (dpkernels.defaults): their sources' numbers and their shapes."""

from __future__ import annotations

import math

import pytest

from dpkernels import defaults as D

#: Chaudhuri et al. (2011), Section 7: the Lambda each row of Tables 1-2 found best at epsilon = 0.1 (10-fold CV:
#: training folds of 40,698 Adult rows, d = 105, and 63,000 KDDCup99 rows, d = 119).
PAPER = [
    (40698, 105, "objective", "logistic", 10**-2.5), (40698, 105, "output", "logistic", 1e-2),
    (40698, 105, "objective", "huber", 10**-2.5), (40698, 105, "output", "huber", 1e-2),
    (63000, 119, "objective", "logistic", 10**-2.5), (63000, 119, "output", "logistic", 1e-2),
    (63000, 119, "output", "huber", 1e-2),
]


@pytest.mark.parametrize("n,d,algorithm,loss,published", PAPER)
def test_chaudhuri_rule_reproduces_section_7_choices(n, d, algorithm, loss, published):
    """With ||f0|| = 100 (read off Adult and KDDCup99, hence not the frontier's default) the rule gives Section 7's
    choices."""
    B = D.CHAUDHURI_SECTION_7_NORM_BOUND
    ratio = D.chaudhuri_lambda(n, d, 0.1, algorithm=algorithm, loss=loss, norm_bound=B) / published
    assert 1 / 2.2 <= ratio <= 2.2


def test_chaudhuri_rule_eighth_row_is_the_stated_exception():
    ratio = D.chaudhuri_lambda(63000, 119, 0.1, algorithm="objective", loss="huber",
                               norm_bound=D.CHAUDHURI_SECTION_7_NORM_BOUND) / 1e-2
    assert 1 / 10 < ratio < 1 / 2.2  # stated in CHAUDHURI_SECTION_7_NORM_BOUND's comment


@pytest.mark.slow
def test_norm_bound_is_derived_from_public_data_outside_the_frontier():
    """CHAUDHURI_NORM_BOUND is the calibration's value on six public data sets none of which the frontier uses."""
    from dpkernels.experiments import frontier as F
    from dpkernels.experiments.frontier_calibration import PROXY_DATASETS, norm_bound

    assert not set(PROXY_DATASETS) & set(F.DATASETS)
    value, table = norm_bound()
    assert value == D.CHAUDHURI_NORM_BOUND
    assert set(table["dataset"]) == set(PROXY_DATASETS) and (table["norm"] > 0).all()


def test_chaudhuri_rule_shapes():
    # objective, privacy-dominated regime: Lambda proportional to d log(d / beta) / (n eps)
    a, b = D.chaudhuri_lambda(10_000, 100, 0.1), D.chaudhuri_lambda(20_000, 100, 0.1)
    assert b == pytest.approx(a / 2)
    assert D.chaudhuri_lambda(10_000, 100, 0.2) == pytest.approx(a / 2)
    # large n eps: the statistical term sqrt(log(1/beta) / n) / B takes over and no longer depends on eps
    assert D.chaudhuri_lambda(10**7, 100, 10.0) == D.chaudhuri_lambda(10**7, 100, 100.0)
    # output perturbation regularises more than objective perturbation at the same (n, d, eps) (Theorem 15's 2/3 power)
    assert D.chaudhuri_lambda(10_000, 100, 1.0, algorithm="output") > D.chaudhuri_lambda(10_000, 100, 1.0)
    # the objective rule keeps n Lambda eps >= c: Algorithm 2's Delta = 0 branch when eps is not tiny
    for n in (1000, 10**5):
        for eps in (0.1, 1.0, 10.0):
            assert n * D.chaudhuri_lambda(n, 50, eps) * eps >= 0.25
    grid = D.chaudhuri_lambda_grid(5000, 20, 1.0)
    assert len(grid) == 5 and grid[2] == D.chaudhuri_lambda(5000, 20, 1.0)
    assert grid[0] == pytest.approx(grid[2] / 10) and grid[-1] == pytest.approx(grid[2] * 10)


@pytest.mark.parametrize("bad", [{"n": 0}, {"d": 0}, {"epsilon": 0.0}, {"epsilon": math.inf}, {"algorithm": "x"},
                                 {"loss": "hinge"}, {"n": 1.5}])
def test_invalid_inputs_are_refused(bad):
    args = {"n": 100, "d": 5, "epsilon": 1.0, **bad}
    kw = {k: args.pop(k) for k in ("algorithm", "loss") if k in args}
    with pytest.raises(ValueError):
        D.chaudhuri_lambda(args["n"], args["d"], args["epsilon"], **kw)


def test_rubinstein_hall_gamma():
    assert D.rubinstein_C(10_000) == 100.0
    assert D.hall_lam(10_000) == pytest.approx(1 / 200)
    assert D.rbf_gamma() == 1.0 and D.rbf_gamma(2.0) == 0.25
    assert D.sklearn_C(1000, 1e-3) == pytest.approx(1.0)


def test_bassily_rho():
    # the privacy term Lambda r / (rho sqrt(min(1, eps) n)) equals the stated excess at the rule's rho
    n, eps = 40_000, 0.5
    rho = D.bassily_rho(n, eps)
    assert 1.0 / (rho * math.sqrt(eps * n)) == pytest.approx(D.BASSILY_EXCESS)
    assert D.bassily_rho(50, 0.1) == 1.0  # capped at Lambda r
    assert D.bassily_rho(10_000, 5.0) == D.bassily_rho(10_000, 1.0)  # min(1, eps)
    grid = D.bassily_rho_grid(n, eps)
    assert rho in grid and max(grid) <= 1.0 and grid == tuple(sorted(set(grid)))
    assert D.bassily_rho_grid(50, 0.1) == (0.25, 0.5, 1.0)


def test_bassily_iterations_and_k():
    assert D.bassily_iterations(484_000) == 40 and D.bassily_iterations(1000) == 21
    assert D.bassily_k(1000, 5, 1.0, 1e-6) == 5  # at most d
    assert 1 <= D.bassily_k(1000, 10_000, 1.0, 1e-6) < 1000  # the paper's k, O(eps m)


def test_park_settings_are_table_7_1():
    assert D.park_settings("satimage") == {"box": 0.05, "gamma": 0.1, "lr": 0.001, "n_iter": 20, "r_max": 1.0}
    assert D.park_settings("three moons") == {"box": 0.05, "gamma": 5.0, "lr": 0.001, "n_iter": 20}
    with pytest.raises(ValueError):
        D.park_settings("adult")


def test_park_public_rule_leaves_the_frontier_rows_out():
    """The medians of Table 7.1 over its six data sets outside the frontier; the frontier's rows do not move it."""
    rule = D.park_public_settings(36)
    assert rule == {"box": 0.05, "gamma": 4 / 36, "lr": 0.001, "n_iter": 20, "r_max": 0.5}
    assert D.park_public_settings(9, scale=10.0)["box"] == pytest.approx(0.5)
    assert D.park_public_settings(9, 150, scale=0.1)["box"] == 1 / 150  # n * box >= 1
    assert D.park_public_settings(9, 150, scale=100.0)["box"] == 1.0
    assert D.park_gamma(9) == pytest.approx(4 / 9)
    for name in D.PARK_FRONTIER_DATASETS:  # a frontier row changed to anything leaves the rule as it is
        saved = D.PARK_TABLE_7_1[name]
        try:
            D.PARK_TABLE_7_1[name] = {"box": 9.0, "gamma": 9.0, "lr": 9.0, "n_iter": 900, "r_max": 9.0}
            assert D.park_public_settings(36) == rule
        finally:
            D.PARK_TABLE_7_1[name] = saved
