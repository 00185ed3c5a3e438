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


GRID = [(n, d, eps, delta) for n in (250, 1000, 33_000, 135_000) for d in (10, 105)
        for eps, delta in ((0.1, 1e-6), (1.0, 1e-6), (8.0, 1e-6), (0.1 / 7, 1e-6 / 14))]


@pytest.mark.parametrize("n,d,eps,delta", GRID)
def test_noisy_gd_rule_balances_the_bound(n, d, eps, delta):
    """T is where the optimisation term beta B^2 / T of Bubeck's Theorem 6.3 meets its noise term B sqrt(2d) Delta / mu
    (below the compute cap), and the step is the theorem's 1 / (beta + sigma_T sqrt(T/2) / B) at T's noise."""
    p = D.noisy_gd_settings(n, d, eps, delta)
    B, beta, mu, sens = D.CHAUDHURI_NORM_BOUND, 0.25, D.gaussian_mu(eps, delta), 2.0 / n
    noise_term = B * math.sqrt(2 * d) * sens / mu
    T = p["n_iter"]
    assert 1 <= T <= D.GRADIENT_MAX_STEPS and p["clip_norm"] == 1.0 and p["alpha"] == 0.0
    if T == 1:  # T* <= 1: one step
        assert beta * B**2 <= noise_term
    elif T < D.GRADIENT_MAX_STEPS:  # T = ceil(T*)
        assert beta * B**2 / T <= noise_term < beta * B**2 / (T - 1)
    else:  # capped: the optimisation term still dominates
        assert beta * B**2 / (T - 1) > noise_term
    sigma_T = math.sqrt(d) * math.sqrt(T) * sens / mu
    assert p["learning_rate"] == pytest.approx(1 / (beta + sigma_T * math.sqrt(T / 2) / B))
    assert p["learning_rate"] <= 1 / beta  # never beyond the smoothness step


def test_gradient_rules_grow_with_n_and_epsilon_and_scale_with_the_norm_bound():
    small, big = D.noisy_gd_settings(1000, 105, 0.1, 1e-6), D.noisy_gd_settings(4000, 105, 0.1, 1e-6)
    assert big["n_iter"] == pytest.approx(4 * small["n_iter"], abs=1)  # T* is proportional to n mu
    assert D.noisy_gd_settings(1000, 105, 0.1, 1e-6, norm_bound=5.0)["n_iter"] < small["n_iter"]
    assert D.noisy_gd_settings(10**6, 105, 8.0, 1e-6)["n_iter"] == D.GRADIENT_MAX_STEPS  # the compute cap
    b1, b10 = D.output_sgd_settings(33_000, 1.0, 1e-6), D.output_sgd_settings(33_000, 1.0, 1e-6, norm_bound=500.0)
    assert b10["batch_size"] < b1["batch_size"] and b1["n_passes"] == b10["n_passes"] == 1
    a1, a10 = D.amp_settings(33_000, 105, 1.0, 1e-6), D.amp_settings(33_000, 105, 1.0, 1e-6, norm_bound=500.0)
    assert a10["alpha"] < a1["alpha"]


@pytest.mark.parametrize("n,d,eps,delta", GRID[::3])
def test_dp_sgd_rule_keeps_the_noise_multiplier_in_the_gaussian_regime(n, d, eps, delta):
    """The sampling rate is the smallest whose calibrated noise multiplier is at least 4 (dp-accounting, replace-one):
    the calibration at that rate gives z ~ 4, and a smaller rate (within the cap of 1/2) gives z below 4."""
    from dpkernels.mechanisms.gradient import calibrate_dp_sgd, poisson_rate

    p = D.dp_sgd_settings(n, d, eps, delta)
    base = D.noisy_gd_settings(n, d, eps, delta)
    assert {k: p[k] for k in base} == base and p["schedule"] == "constant"
    z = calibrate_dp_sgd(eps, delta, poisson_rate(p["sampling_rate"]), p["n_iter"])
    if p["sampling_rate"] < 0.5:
        assert 3.7 <= z <= 4.4
        assert calibrate_dp_sgd(eps, delta, poisson_rate(p["sampling_rate"] / 2), p["n_iter"]) < 3.7
    else:
        assert z < 4.4


@pytest.mark.parametrize("n,d,eps,delta", GRID)
def test_amp_rule_is_accepted_and_spends_the_whole_budget(n, d, eps, delta):
    """The rule's lambda is at least what its noise_fraction leaves the Jacobian (the estimator's check), and the
    budget split wastes nothing: the stated epsilon is the target within the rule's 1e-6 relative margin."""
    from dpkernels.mechanisms.gradient import amp_calibration

    p = D.amp_settings(n, d, eps, delta)
    R = 1.0 + 2e-9  # the estimator's slack on the public row bound
    cal = amp_calibration(eps, delta, n, R, 0.25, out_fraction=p["out_fraction"], noise_fraction=p["noise_fraction"],
                          alpha=p["alpha"])
    assert cal.lam == p["alpha"] >= cal.lam_min
    assert eps * (1 - 1e-5) <= cal.epsilon <= eps
    assert 0.5 * (1 - 1e-5) <= p["noise_fraction"] < 1 and 0 < p["out_fraction"] <= 0.5  # the Jacobian: at most half
    assert p["alpha"] >= math.sqrt(math.log(1 / D.CONFIDENCE) / n) / D.CHAUDHURI_NORM_BOUND


@pytest.mark.parametrize("n,eps", [(250, 1.0), (1000, 0.1), (33_000, 1.0), (135_000, 8.0)])
def test_output_sgd_rule_is_one_pass_at_the_bound_optimum(n, eps):
    """The largest batch whose optimal tau* stays at most 1 / beta, one pass, the step tau* (Wu et al.'s eta <= 2 /
    beta holds)."""
    p = D.output_sgd_settings(n, eps, 1e-6)
    B, mu = D.CHAUDHURI_NORM_BOUND, D.gaussian_mu(eps, 1e-6)
    b = p["batch_size"]
    tau = b * B * math.sqrt(mu / (4 * n))
    assert p["n_passes"] == 1 and p["alpha"] == 0.0 and 1 <= b <= n
    assert p["learning_rate"] == pytest.approx(min(4.0, tau)) and p["learning_rate"] <= 4.0
    if 1 < b < n:
        assert tau <= 4.0 < (b + 1) * B * math.sqrt(mu / (4 * n))  # one more row: the optimal step would exceed 1 / beta
