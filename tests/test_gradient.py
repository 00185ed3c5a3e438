"""The gradient estimators (issue 29): DP-GD, DP-SGD, AMP and output-perturbed SGD: their sensitivities measured
against the calibrated bounds, their accounting against exact pairs, their API (the audits with negative controls are
in tests/test_yu2020_experiments.py)."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
from scipy import stats

from dpkernels import (
    DPSGD,
    ApproximateMinimaPerturbation,
    NoisyGradientDescent,
    OutputPerturbedSGD,
    PrivacyLeakWarning,
    PrivateOneVsRest,
    UnsafeNoiseWarning,
)
from dpkernels.accounting import compose, gaussian_epsilon, gaussian_sigma
from dpkernels.experiments.yu2020.audits import replace_pair_delta
from dpkernels.losses import make_loss
from dpkernels.mechanisms import gradient as G
from dpkernels.mechanisms.bassily import gradient_sensitivity

RNG = np.random.default_rng(29)
_X = RNG.normal(size=(300, 4))
_Y = np.where(_X[:, 0] + 0.5 * RNG.normal(size=300) > 0, 1.0, -1.0)
_XN = _X / np.maximum(1.0, np.linalg.norm(_X, axis=1, keepdims=True))

RELEASE_CASES = [
    ("gradient-dp-gd", lambda **kw: NoisyGradientDescent(epsilon=1.0, delta=1e-5, n_iter=5, **kw), _X, _Y),
    ("gradient-dp-sgd", lambda **kw: DPSGD(epsilon=1.0, delta=1e-5, n_iter=5, **kw), _X, _Y),
    ("gradient-amp", lambda **kw: ApproximateMinimaPerturbation(epsilon=1.0, delta=1e-5, **kw), _XN, _Y),
    ("gradient-output-sgd", lambda **kw: OutputPerturbedSGD(epsilon=1.0, delta=1e-5, learning_rate=0.1, **kw), _XN, _Y),
]


# ----------------------------------------------------------------------------------------------
# sensitivities, measured
# ----------------------------------------------------------------------------------------------
def test_clipped_mean_gradient_sensitivity_bounds_and_reaches_2c_over_n(rng):
    """Replacing one row moves the clipped mean gradient by at most 2C/n (gradient_sensitivity with float rounding),
    whatever w, and a label flip of a large row reaches it: an add/remove calibration (C/n) would be exceeded."""
    n, d, C = 50, 6, 1.0
    loss = make_loss("logistic")
    bound = gradient_sensitivity(G.clip_bound(C, d), n)
    worst = 0.0
    for trial in range(300):
        A = rng.normal(size=(n, d)) * rng.uniform(0.1, 5.0)
        W = rng.normal(size=(d, 1)) * rng.uniform(0, 2)
        A2 = A.copy()
        i = rng.integers(n)
        A2[i] = -A[i] * rng.uniform(1, 50) if trial % 2 else rng.normal(size=d) * 10
        diff = G.clipped_mean_gradient(A, W, loss, C) - G.clipped_mean_gradient(A2, W, loss, C)
        worst = max(worst, float(np.linalg.norm(diff)))
    assert worst <= bound
    assert worst > 1.9 * C / n  # far above the add/remove sensitivity C/n


def test_merged_duplicates_give_the_same_gradient(rng):
    A = rng.normal(size=(40, 3))
    A = np.vstack([A, A[:25], A[:5]])
    rows, counts = np.unique(A, axis=0, return_counts=True)
    W = rng.normal(size=(3, 2))
    loss = make_loss("logistic")
    np.testing.assert_allclose(G.clipped_mean_gradient(rows, W, loss, 0.5, counts=counts),
                               G.clipped_mean_gradient(A, W, loss, 0.5), rtol=1e-12, atol=1e-15)


def test_output_sgd_pair_attains_its_sensitivity():
    """Wu et al.'s bound 2 k eta L / b: for the Huber pair (l' = -1 in the linear regime) the non-private outputs of
    two neighbours under the same permutation differ by exactly that (half of it would be exceeded)."""
    m, b, k, eta = 20, 5, 3, 0.5
    X = np.zeros((m, 1))
    X[0, 0] = 1.0
    y1 = np.ones(m)
    y2 = y1.copy()
    y2[0] = -1.0
    loss = make_loss("huber", 0.5)
    outs = [G.permutation_sgd_path(X * y[:, None], loss=loss, alpha=0.0, batch_size=b, learning_rate=eta, n_passes=k,
                                   random_state=4)[0, 0] for y in (y1, y2)]
    sens = G.output_sgd_sensitivity(1.0, eta, k, b)
    assert abs(outs[0] - outs[1]) == pytest.approx(sens, rel=1e-12)


def test_output_sgd_random_neighbours_stay_within_the_bound(rng):
    m, d, b, k, eta, R = 60, 3, 6, 4, 1.0, 1.0
    loss = make_loss("logistic")
    beta = loss.curvature * R * R
    _, bound, _ = G.output_sgd_calibration(1.0, 1e-5, m, d, R, beta, 0.0, eta, k, b)
    worst = 0.0
    for seed in range(60):
        X = rng.normal(size=(m, d))
        X /= np.maximum(1.0, np.linalg.norm(X, axis=1, keepdims=True))
        y = rng.choice([-1.0, 1.0], m)
        X2, y2 = X.copy(), y.copy()
        i = rng.integers(m)
        X2[i] = rng.normal(size=d)
        X2[i] /= np.linalg.norm(X2[i])
        y2[i] = -y2[i]
        w1, w2 = (G.permutation_sgd_path(Z * yy[:, None], loss=loss, alpha=0.0, batch_size=b, learning_rate=eta,
                                         n_passes=k, random_state=seed)[0] for Z, yy in ((X, y), (X2, y2)))
        worst = max(worst, float(np.linalg.norm(w1 - w2)))
    assert 0 < worst <= bound


def test_amp_certified_distance_to_the_exact_minimiser(rng):
    """The released centre lies within gamma / lambda of the exact perturbed minimiser (solved to 1e-13 here)."""
    X = rng.normal(size=(200, 3))
    X /= np.maximum(1.0, np.linalg.norm(X, axis=1, keepdims=True))
    y = np.where(X[:, 0] > 0, 1.0, -1.0)
    loss = make_loss("logistic")
    cal = G.amp_calibration(1.0, 1e-5, 200, 1.0, 0.25, gamma=1e-4)
    cal0 = G.AMPCalibration(**{**cal.__dict__, "sigma_out": 1e-300})  # the centre itself (output noise negligible)
    from dpkernels.solvers.smooth import Design, solve_smooth_erm

    design = Design(X, y)
    rs = np.random.default_rng(3)
    theta = G.amp_releases(design, loss, cal0, 1, random_state=rs, noise="continuous")[0]
    # the same b, exactly: the generator's first draws (ExactNormals' midpoints are within 2^-46 of the exact reals)
    from dpkernels import lattice

    z = lattice.ExactNormals(np.random.default_rng(3))
    z.draw(3)
    b = z.ball().mid * cal.sigma_objective
    exact = solve_smooth_erm(design, None, loss, cal.lam, b=b, gtol=1e-13).coef
    assert np.linalg.norm(theta - exact) <= cal.gamma / cal.lam


def test_amp_jacobian_ratio_within_the_charged_share(rng):
    """|log det(sum l'' x x' + n lambda I) - log det(...)'| over random neighbours and points <= log(1 + c R^2 / (n
    lambda)), half the 2 log(1 + ...) AMP charges."""
    n, d, lam = 30, 4, 0.02
    worst = 0.0
    for _ in range(200):
        X = rng.normal(size=(n, d))
        X /= np.linalg.norm(X, axis=1, keepdims=True)
        X2 = X.copy()
        v = rng.normal(size=d)
        X2[rng.integers(n)] = v / np.linalg.norm(v) * rng.uniform(0.5, 1.0)  # ||x'|| <= R = 1
        w = rng.normal(size=d) * 3
        ld = []
        for Z in (X, X2):
            z = Z @ w
            curv = np.exp(-np.abs(z)) / (1 + np.exp(-np.abs(z))) ** 2
            ld.append(np.linalg.slogdet(Z.T @ (curv[:, None] * Z) + n * lam * np.eye(d))[1])
        worst = max(worst, abs(ld[0] - ld[1]))
    assert worst <= math.log1p(0.25 / (n * lam))
    assert 2 * math.log1p(0.25 / (n * lam)) == pytest.approx(G.amp_calibration(10.0, 1e-5, n, 1.0, 0.25, alpha=lam)
                                                             .epsilon_jacobian)


def test_amp_noise_bound_holds_for_shifts_in_a_plane(rng):
    """The noise part's privacy loss <b, v> / s^2 + ||v||^2 / (2 s^2), for shifts v in a fixed plane chosen after b
    (the worst direction there), exceeds amp_noise_epsilon with probability <= delta (chi with 2 degrees of freedom):
    Monte Carlo at delta = 0.02.  A one-dimensional Gaussian tail (t = z_{1 - delta}) would be exceeded."""
    delta, sens, sigma, d = 0.02, 2.0, 5.0, 6
    eps = G.amp_noise_epsilon(sigma, delta, sens)
    b = rng.normal(size=(200_000, d)) * sigma
    worst_loss = sens * np.linalg.norm(b[:, :2], axis=1) / sigma**2 + sens**2 / (2 * sigma**2)
    rate = float(np.mean(worst_loss > eps))
    lo, hi = stats.binomtest(int(rate * len(b)), len(b)).proportion_ci(0.999)
    assert lo <= delta <= hi  # tight: the chi_2 tail is exactly exp(-t^2 / 2)
    t1 = stats.norm.isf(delta)
    eps_1d = sens * t1 / sigma + sens**2 / (2 * sigma**2)
    assert np.mean(worst_loss > eps_1d) > 1.5 * delta
    assert G.amp_noise_epsilon(G.amp_noise_sigma(0.3, 1e-6, 2.0), 1e-6, 2.0) <= 0.3


# ----------------------------------------------------------------------------------------------
# accounting
# ----------------------------------------------------------------------------------------------
def test_dp_gd_noise_is_the_exact_gaussian_composition():
    est = NoisyGradientDescent(epsilon=0.7, delta=1e-6, n_iter=25, random_state=0).fit(_X, _Y)
    sens = gradient_sensitivity(G.clip_bound(1.0, 4), 300)
    assert est.sensitivity_ == sens
    assert est.noise_sigma_ == pytest.approx(gaussian_sigma(0.7, 1e-6, 5 * sens))
    assert est.epsilon_accounted_ == pytest.approx(0.7, rel=1e-3)
    assert compose([("gaussian", est.noise_sigma_, sens)] * 25, 1e-6) == pytest.approx(0.7, abs=0.01)  # independent PLD
    assert est.guarantee_.epsilon == 0.7 and est.guarantee_.delta == 1e-6


def test_dp_sgd_accounts_the_replace_one_pair():
    """One step: the estimator's epsilon_accounted_ is the exact replace pair's epsilon (numerical integration of
    q N(-1) + (1 - q) N(0) against q N(+1) + (1 - q) N(0) at its noise multiplier); with q = 1 it is the Gaussian
    mechanism at sensitivity 2 (google/differential-privacy issue 378: the multiplier is relative to C, not 2C)."""
    # delta at most 1/(10 n), n = 300
    est = DPSGD(epsilon=1.0, delta=2e-4, n_iter=1, sampling_rate=0.3, random_state=0).fit(_X, _Y)
    z, q = est.noise_multiplier_, est.sampling_rate_
    assert replace_pair_delta(z, q, est.guarantee_.epsilon) <= 2e-4 * (1 + 1e-3)  # the stated guarantee holds exactly
    assert est.epsilon_accounted_ <= est.guarantee_.epsilon
    assert replace_pair_delta(z, q, est.epsilon_accounted_) <= 2e-4 * (1 + 1e-3)
    assert replace_pair_delta(z, q, 0.97 * est.epsilon_accounted_) > 2e-4  # and not loose
    assert G.dp_sgd_epsilon(3.0, 1.0, 1, 1e-5) == pytest.approx(gaussian_epsilon(3.0, 1e-5, 2.0), abs=2e-3)
    assert G.dp_sgd_epsilon(3.0, 0.1, 10, 1e-5, relation="add_remove") < G.dp_sgd_epsilon(3.0, 0.1, 10, 1e-5)


def test_dp_sgd_calibration_is_the_smallest_multiplier():
    z = G.calibrate_dp_sgd(0.5, 1e-6, 0.05, 40)
    assert G.dp_sgd_epsilon(z, 0.05, 40, 1e-6, discretization=G.accounting_discretization(0.5)) <= 0.5
    assert G.dp_sgd_epsilon(z / 1.01, 0.05, 40, 1e-6, discretization=G.accounting_discretization(0.5)) > 0.5


def test_dp_sgd_epsilon_checks_its_arguments_whatever_its_cache_holds():
    G.dp_sgd_epsilon(1.0, 0.1, 10, 1e-5)  # cached
    for bad in (True, 0.0, -1.0, float("nan")):
        with pytest.raises(ValueError, match="noise_multiplier"):
            G.dp_sgd_epsilon(bad, 0.1, 10, 1e-5)
    with pytest.raises(ValueError, match="relation"):
        G.dp_sgd_epsilon(1.0, 0.1, 10, 1e-5, relation="replace_one")
    assert G.poisson_rate(0.1) >= 0.1 and G.poisson_rate(0.1) - 0.1 < 2.0**-52


def test_one_step_dp_gd_release_is_gaussian():
    """T = 1 from w = 0: w_1 = -eta (g + N(0, sigma^2)); KS test of sample_releases against that law."""
    est = NoisyGradientDescent(epsilon=1.0, delta=1e-5, n_iter=1, alpha=0.0, learning_rate=0.1, keep_nonprivate=True,
                               random_state=1).fit(_X[:, :1], _Y)
    g = G.clipped_mean_gradient(est.nonprivate_.A, np.zeros((1, 1)), make_loss("logistic"), 1.0)[0, 0]
    draws = est.sample_releases(20000, random_state=2)[:, 0]
    assert stats.kstest(draws, stats.norm(-0.1 * g, 0.1 * est.noise_sigma_).cdf).pvalue > 1e-3


# ----------------------------------------------------------------------------------------------
# the estimators' API
# ----------------------------------------------------------------------------------------------
@pytest.mark.parametrize("make, X", [(lambda **kw: NoisyGradientDescent(n_iter=5, **kw), _X),
                                     (lambda **kw: DPSGD(n_iter=5, **kw), _X),
                                     (lambda **kw: ApproximateMinimaPerturbation(**kw), _XN),
                                     (lambda **kw: OutputPerturbedSGD(learning_rate=0.1, **kw), _XN)])
def test_common_behaviour(make, X):
    labels = np.where(_Y > 0, "yes", "no")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        est = make(classes=["no", "yes"], random_state=3).fit(X, labels)
    assert set(est.predict(X)) <= {"no", "yes"} and est.coef_.shape == (X.shape[1],)
    again = make(classes=["no", "yes"], random_state=3).fit(X, labels)
    np.testing.assert_array_equal(est.coef_, again.coef_)
    assert est.guarantee_.private is not None and est.guarantee_.delta <= 1e-6 + 1e-18
    for delta in (0.01, 0.5 / len(X)):  # 0.5/n: near 1/n, a release before privacy audit F4
        with pytest.raises(ValueError, match=r"must be at most 1/\(10 n\)"):
            make(delta=delta).fit(X, _Y)
    with pytest.raises(ValueError, match="classes is not given"):
        make().fit(X, (_Y + 1) / 2)
    with pytest.warns(PrivacyLeakWarning):
        leaky = make(classes="data").fit(X, (_Y + 1) / 2)
    assert not leaky.guarantee_.private and leaky.guarantee_.epsilon == math.inf
    with pytest.warns(UnsafeNoiseWarning):
        make(noise="continuous").fit(X, _Y)
    assert hasattr(est, "predict_proba")
    ovr = PrivateOneVsRest(make(), epsilon=3.0, delta=1e-6, classes=[0, 1, 2]).fit(X, np.argmax(X[:, :3], axis=1))
    assert ovr.guarantee_.epsilon <= 3.0 * (1 + 1e-9) and ovr.guarantee_.delta <= 1e-6


def test_parameter_checks():
    with pytest.raises(ValueError, match="2 / \\(beta \\+ alpha\\)"):
        OutputPerturbedSGD(learning_rate=9.0).fit(_XN, _Y)
    with pytest.raises(ValueError, match="exceed the bound"):
        OutputPerturbedSGD().fit(_X * 3, _Y)
    with pytest.raises(ValueError, match="below the regulariser"):
        ApproximateMinimaPerturbation(alpha=1e-6).fit(_XN, _Y)
    with pytest.raises(ValueError, match="loss must be one of"):
        ApproximateMinimaPerturbation(loss="huber").fit(_XN, _Y)
    with pytest.raises(ValueError, match="schedule"):
        DPSGD(schedule="cosine").fit(_X, _Y)
    with pytest.raises(ValueError, match="n_iter"):
        NoisyGradientDescent(n_iter=0).fit(_X, _Y)
    assert not hasattr(NoisyGradientDescent(loss="huber"), "predict_proba")


def test_amp_guarantee_sums_its_three_parts():
    est = ApproximateMinimaPerturbation(epsilon=0.8, delta=1e-6, out_fraction=0.05, noise_fraction=0.95,
                                        random_state=0).fit(_XN, _Y)
    cal = est.calibration_
    assert est.guarantee_.epsilon == pytest.approx(cal.epsilon_noise + cal.epsilon_jacobian + cal.epsilon_out)
    assert est.guarantee_.epsilon <= 0.8 * (1 + 1e-9) and est.guarantee_.delta == pytest.approx(1e-6)
    assert cal.lam >= cal.lam_min and cal.sensitivity_out == pytest.approx(2 * cal.gamma / cal.lam)
    assert cal.gamma == pytest.approx(1 / 300**2)


def test_dp_sgd_batches_are_poisson(rng):
    """With many chains on few rows (the masked path) and with gathered batches, the mean batch sum of clipped
    gradients at w = 0 equals q times the full sum: both samplers include each row with probability q."""
    A = rng.normal(size=(30, 2)) * 10
    loss = make_loss("logistic")
    full = G.clipped_mean_gradient(A, np.zeros((2, 1)), loss, 1.0)[:, 0] * 30
    W = G.dp_sgd_path(A, loss=loss, alpha=0.0, clip_norm=1.0, sampling_rate=0.25, noise_std=1e-12, learning_rate=1.0,
                      n_iter=1, noise="continuous", random_state=0, n_chains=40000)
    np.testing.assert_allclose(-W.mean(axis=0) * 0.25 * 30, 0.25 * full, atol=0.05)


def test_amp_keeps_solving_where_its_first_solve_and_polish_stall(rng, monkeypatch):
    """A refusal would depend on the data (ERRATA F3): where the batched solve and the Newton polish stall (simulated
    here: both return their starting point), the damped-Newton end game still certifies the centre, and the release
    lies within gamma / lambda of the exact perturbed minimiser."""
    from dpkernels import lattice
    from dpkernels.solvers.smooth import Design, solve_smooth_erm

    X = rng.normal(size=(300, 4))
    X /= np.maximum(1.0, np.linalg.norm(X, axis=1, keepdims=True))
    y = np.where(X[:, 0] + 0.3 * X[:, 1] > 0, 1.0, -1.0)
    loss = make_loss("huber")
    cal = G.amp_calibration(1.0, 1e-5, 300, 1.0, loss.curvature, gamma=1e-4)
    cal0 = G.AMPCalibration(**{**cal.__dict__, "sigma_out": 1e-300})
    monkeypatch.setattr(G, "solve_smooth_erm_batch",
                        lambda design, _, loss, lam, B, **k: type("S", (), {"coef": np.zeros_like(B)})())
    monkeypatch.setattr(G, "_newton_polish", lambda design, loss, lam, lin, w: w)
    design = Design(X, y)
    theta = G.amp_releases(design, loss, cal0, 1, random_state=np.random.default_rng(5), noise="continuous")[0]
    z = lattice.ExactNormals(np.random.default_rng(5))
    z.draw(4)
    exact = solve_smooth_erm(design, None, loss, cal.lam, b=z.ball().mid * cal.sigma_objective, gtol=1e-13).coef
    assert np.linalg.norm(theta - exact) <= cal.gamma / cal.lam
