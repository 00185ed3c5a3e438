"""Hall, Rinaldo and Wasserman (2013): calculators, the Gaussian and Gaussian-process releases, the private KDE and
kernel machine (the experiment driver's tests are in tests/test_hall_experiments.py)."""

from __future__ import annotations

import math
import pickle
import warnings

import numpy as np
import pytest
from scipy import integrate

from dpkernels._validation import ClippingWarning, UnsafeNoiseWarning, delta_ceiling, nonprivate_diagnostics
from dpkernels.accounting import gaussian_delta
from dpkernels.bounds import hall as HB
from dpkernels.mechanisms.hall import (
    CalibrationWarning,
    GaussianKernel,
    GaussianProcessRelease,
    PrivateKDE,
    PrivateKernelMachine,
    expansion_error,
    float_margins,
    gaussian_mechanism,
    kernel_expansion,
    solve_kernel_machine,
)
from dpkernels.solvers import solve_hinge_dual_cvxpy


def _unit_data(n=40, d=2, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.uniform(0.05, 0.95, size=(n, d))
    y = np.where(X[:, 0] + 0.1 * rng.standard_normal(n) > 0.5, 1, -1)
    return X, y


_GRID2 = np.array(np.meshgrid(np.linspace(0, 1, 5), np.linspace(0, 1, 5))).reshape(2, -1).T
_TEST2 = np.random.default_rng(99).uniform(size=(15, 2))
_X2, _Y2 = _unit_data()

RELEASE_CASES = [
    ("PrivateKDE", lambda **kw: PrivateKDE(epsilon=1.0, delta=1e-5, sigma=0.2, grid_size=9, **kw), _X2, None),
    ("PrivateKernelMachine-exact", lambda **kw: PrivateKernelMachine(epsilon=1.0, delta=1e-5, alpha=0.1, sigma=0.5,
                                                                     points=_TEST2, **kw), _X2, _Y2),
    ("PrivateKernelMachine-nystrom", lambda **kw: PrivateKernelMachine(epsilon=1.0, delta=1e-5, alpha=0.1, sigma=0.5,
                                                                       solver="nystrom", landmarks=_GRID2, **kw), _X2, _Y2),
]


# ----------------------------------------------------------------------------------------------
# calculators
# ----------------------------------------------------------------------------------------------
def test_proposition_1_1_constants():
    assert HB.proposition_1_1_c(0.5, 1e-3, 2.0) == pytest.approx(2 * math.log(2e3) * 4 / 0.25)
    assert HB.proposition_1_1_sigma(1.0, 1e-5, 1.0) == pytest.approx(math.sqrt(2 * math.log(2e5)))
    assert HB.jmlr_gaussian_mechanism_scale(1.0, 1e-5, 1.0) == pytest.approx(HB.proposition_1_1_sigma(1.0, 1e-5, 1.0))
    with pytest.raises(ValueError):
        HB.jmlr_gaussian_mechanism_scale(1.0, 1e-5, 1.0, c_beta=1.0)


@pytest.mark.parametrize("eps,delta", [(0.1, 1e-5), (1.0, 1e-2), (5.0, 1e-8), (10.0, 1e-2), (20.0, 1e-10)])
def test_exact_delta_closed_form_matches_dp_accounting(eps, delta):
    s = HB.proposition_1_1_sigma(eps, delta, 1.0)
    assert HB.proposition_1_1_exact_delta(eps, delta) == pytest.approx(gaussian_delta(eps, s, 1.0), rel=1e-6, abs=1e-300)


def test_proposition_1_1_max_epsilon_is_the_boundary():
    for beta in (1e-2, 1e-6):
        a = HB.proposition_1_1_max_epsilon(beta)
        assert 5 < a < 20
        assert HB.proposition_1_1_exact_delta(a * 0.99, beta) <= beta < HB.proposition_1_1_exact_delta(a * 1.01, beta)


def test_kde_sensitivity_conventions():
    n, s, d = 100, 0.1, 2
    seed, jmlr = HB.kde_sensitivity(n, s, d, "seed"), HB.kde_sensitivity(n, s, d, "jmlr")
    assert seed / jmlr == pytest.approx(math.sqrt(2))
    assert HB.kde_sensitivity_exact(n, s, d) <= jmlr
    # the journal's constant in the unnormalised RKHS is the normalised one times sqrt(k0): the same released noise
    k0 = HB.gaussian_kernel_sup(s, d)
    assert HB.kde_sensitivity_jmlr_form(n, s, d) == pytest.approx(jmlr * math.sqrt(k0))
    # the seed's privacy error, written out (formula sheet 4.2)
    assert HB.kde_privacy_error(n, s, d, 1.0, 1e-5, "seed") == pytest.approx(8 * math.log(2e5) / (n**2 * (2 * math.pi * s * s) ** d))
    with pytest.raises(ValueError):
        HB.kde_sensitivity(n, s, d, "other")


def test_kernel_machine_constants():
    assert HB.kernel_machine_sensitivity(1.0, 1.0, 100, 0.01) == pytest.approx(1.0)
    assert HB.kernel_machine_sensitivity_half_regulariser(1.0, 1.0, 100, 0.01) == pytest.approx(2.0)
    assert HB.squared_loss_lipschitz(1.0, 0.25) == pytest.approx(6.0)


def test_kde_risk_against_quadrature():
    """The closed-form MISE on [0, 1] against numerical integration of the bias and variance (d = 1)."""
    mix = HB.bimodal_mixture(1, sd=0.1)
    n, s = 50, 0.07

    def g(x):  # E f^(x)
        return sum(w * math.exp(-(x - m[0]) ** 2 / (2 * (v * v + s * s))) / math.sqrt(2 * math.pi * (v * v + s * s))
                   for w, m, v in zip(mix.weights, mix.means, mix.sds))

    def h(x):  # E K(x - X)^2
        return sum(w * integrate.quad(lambda t: (math.exp(-(x - t) ** 2 / (2 * s * s)) / math.sqrt(2 * math.pi * s * s)) ** 2
                                      * math.exp(-(t - m[0]) ** 2 / (2 * v * v)) / math.sqrt(2 * math.pi * v * v),
                                      -1, 2, points=[m[0]])[0] for w, m, v in zip(mix.weights, mix.means, mix.sds))

    f = lambda x: float(mix.pdf(np.array([[x]]))[0])  # noqa: E731
    bias = integrate.quad(lambda x: (g(x) - f(x)) ** 2, 0, 1, limit=200)[0]
    var = integrate.quad(lambda x: (h(x) - g(x) ** 2) / n, 0, 1, limit=200)[0]
    r = HB.kde_risk(mix, n, s, noise_sd=0.3)
    assert r.bias_sq == pytest.approx(bias, rel=1e-6)
    assert r.variance == pytest.approx(var, rel=1e-5)
    assert r.privacy == pytest.approx(0.09 * HB.gaussian_kernel_sup(s, 1))


def test_optimal_bandwidth_exponent_of_the_exact_risk():
    """Non-private: the minimiser of the exact MISE scales like n^(-1/(d+4)) for large n (d = 2), not n^(-1/(1+4d))."""
    mix = HB.bimodal_mixture(2)
    ns = np.array([1e9, 1e10, 1e11])
    sig = [HB.optimal_bandwidth(mix, int(n)) for n in ns]
    slope = np.polyfit(np.log(ns), np.log(sig), 1)[0]
    assert slope == pytest.approx(HB.optimal_bandwidth_exponent(2), abs=0.005)
    assert abs(slope - HB.claimed_optimal_bandwidth_exponent(2)) > 0.05
    assert HB.privacy_to_sampling_exponent(2) == pytest.approx(-2 / 3)


def test_mixture_sampling_stays_in_the_box():
    mix = HB.bimodal_mixture(3)
    X = mix.sample(2000, np.random.default_rng(0))
    assert X.shape == (2000, 3) and X.min() >= 0 and X.max() <= 1
    assert mix.mass_outside() < 1e-6


# ----------------------------------------------------------------------------------------------
# floating point: kernel sums, factorisation margins
# ----------------------------------------------------------------------------------------------
def test_kernel_expansion_error_bound():
    rng = np.random.default_rng(0)
    n, d = 3000, 2
    X = rng.uniform(size=(n, d))
    P = rng.uniform(size=(40, d))
    kern = GaussianKernel(0.05, normalised=True)
    got = kernel_expansion(kern, P, X, 1.0 / n)
    Xl, Pl = X.astype(np.longdouble), P.astype(np.longdouble)
    r2 = ((Pl[:, None, :] - Xl[None, :, :]) ** 2).sum(-1)
    k0 = np.longdouble(2 * math.pi) ** -1 * np.longdouble(0.05) ** -2
    ref = (k0 * np.exp(-r2 / (2 * np.longdouble(0.05) ** 2))).sum(1) / n
    err = np.abs(got - ref.astype(np.float64)).max()
    assert err <= expansion_error(kern, d, n, 1.0)
    assert err > 0  # the comparison is not vacuous


def test_incremental_factor_dominates_the_gram_matrix():
    """A A' - K >= tau_eff I for a factor built in several blocks (K evaluated in extended precision)."""
    rng = np.random.default_rng(1)
    kern = GaussianKernel(0.1, normalised=True)
    margins = float_margins(kern, 1, 300, 1e-6, 0.0)
    gp = GaussianProcessRelease(lambda Q: np.zeros(len(Q)), kern, 1, 1.0, tau=margins.tau, max_points=300, random_state=0)
    pts = rng.uniform(size=(300, 1))
    for block in np.array_split(pts, 5):
        gp.evaluate(block)
    A = gp._L[:300, :300].astype(np.longdouble)
    P = gp.points.astype(np.longdouble)
    K = np.longdouble(kern.k0(1)) * np.exp(-((P - P.T) ** 2) / (2 * np.longdouble(0.1) ** 2))
    R = (A @ A.T - K).astype(np.float64)
    assert np.linalg.eigvalsh(0.5 * (R + R.T)).min() >= margins.tau_eff * (1 - 1e-6)


def test_jitter_too_small_for_max_points_is_refused():
    kern = GaussianKernel(0.1)
    with pytest.raises(ValueError, match="too small"):
        float_margins(kern, 1, 100_000, 1e-9, 0.0)


# ----------------------------------------------------------------------------------------------
# Proposition 1.1
# ----------------------------------------------------------------------------------------------
def test_gaussian_mechanism_lattice_and_guarantee():
    r = gaussian_mechanism(np.array([0.3, 1.7]), epsilon=1.0, delta=1e-5, sensitivity=0.5, random_state=0)
    k = r.value / r.grid
    assert np.all(k == np.round(k))
    assert "analytic" in r.guarantee.statement and r.guarantee.delta == 1e-5
    A = np.array([[1.0, 0.0], [0.5, 2.0]])
    r2 = gaussian_mechanism([0.3, 1.7], epsilon=1.0, delta=1e-5, sensitivity=0.5, covariance_factor=A, random_state=0)
    assert np.all(r2.value / r2.grid == np.round(r2.value / r2.grid))


def test_gaussian_mechanism_hall_calibration_fails_at_large_epsilon():
    with pytest.warns(CalibrationWarning, match="does not hold"):
        r = gaussian_mechanism([0.0], epsilon=20.0, delta=1e-2, sensitivity=1.0, calibration="hall", random_state=0)
    assert r.guarantee.delta > 0.3  # the exact delta is reported, not the target
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        ok = gaussian_mechanism([0.0], epsilon=1.0, delta=1e-5, sensitivity=1.0, calibration="hall", random_state=0)
    assert ok.guarantee.delta == 1e-5
    with pytest.warns(UnsafeNoiseWarning):
        gaussian_mechanism([0.0], epsilon=1.0, delta=1e-5, sensitivity=1.0, noise="continuous", random_state=0)


# ----------------------------------------------------------------------------------------------
# Proposition 2.1: the released function is one sample path
# ----------------------------------------------------------------------------------------------
def test_repeated_and_permuted_queries_return_the_same_values():
    X = HB.bimodal_mixture(1).sample(200, np.random.default_rng(0))
    kde = PrivateKDE(epsilon=1.0, delta=1e-5, sigma=0.05, points=np.empty((0, 1)), curator=True, random_state=3).fit(X)
    P = np.array([[0.1], [0.35], [0.6], [0.9]])
    v = kde.density(P)
    assert np.array_equal(kde.density(P), v)
    perm = np.array([2, 0, 3, 1])
    assert np.array_equal(kde.density(P[perm]), v[perm])
    both = kde.density(np.array([[0.35], [0.36], [0.1]]))
    assert both[0] == v[1] and both[2] == v[0]
    assert len(kde._curator.values) == 5 and len(kde.released_values_) == 0  # answered, not released


def test_max_points_is_enforced():
    X = np.random.default_rng(0).uniform(size=(30, 1))
    kde = PrivateKDE(epsilon=1.0, delta=1e-5, sigma=0.1, points=np.empty((0, 1)), curator=True, max_points=5,
                     random_state=0).fit(X)
    kde.density(np.linspace(0, 1, 5)[:, None])
    with pytest.raises(ValueError, match="max_points"):
        kde.density([[0.123]])


# ----------------------------------------------------------------------------------------------
# PrivateKDE
# ----------------------------------------------------------------------------------------------
def test_kde_domain_and_clipping():
    X = np.array([[0.2], [1.3], [0.5]])
    with pytest.raises(ValueError, match="outside"):
        PrivateKDE(random_state=0).fit(X)
    with nonprivate_diagnostics(), pytest.warns(ClippingWarning):  # silent by default (issue 26.3)
        kde = PrivateKDE(clip=True, grid_size=5, random_state=0).fit(X)
    assert kde.n_samples_ == 3
    with pytest.raises(ValueError, match="convention"):
        PrivateKDE(convention="x").fit(X[:1])
    with pytest.raises(ValueError, match="calibration"):
        PrivateKDE(calibration="classical").fit(X[:1])


@pytest.mark.parametrize("name, make, X, y", RELEASE_CASES, ids=[c[0] for c in RELEASE_CASES])
def test_delta_not_far_below_one_over_n_is_refused(name, make, X, y):
    """A delta near 1/n allows releasing a row in the clear: every Hall estimator (KDE, exact and Nystrom machines)
    refuses a delta above 1/(10 n) at fit, as the gradient estimators do (privacy audit F4: 0.9/n used to be a
    release), and the message names only delta, n and the public 1/(10 n)."""
    n = X.shape[0]
    for delta in (0.9 / n, 1.0 / n, 0.5):
        with pytest.raises(ValueError) as err:
            make().set_params(delta=delta).fit(X, y)
        assert str(err.value) == (f"delta = {delta:g} must be at most 1/(10 n) = {delta_ceiling(n):.3g} for n = {n} "
                                  "rows: a delta near 1/n allows releasing a row in the clear with that probability")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UnsafeNoiseWarning)
        ok = make().set_params(delta=delta_ceiling(n)).fit(X, y)  # at 1/(10 n): a release (operating-system entropy)
    assert ok.guarantee_.delta == delta_ceiling(n) and ok.guarantee_.status == "release"
    assert ok.release().guarantee_.private


@pytest.mark.parametrize("name, make, X, y", RELEASE_CASES, ids=[c[0] for c in RELEASE_CASES])
def test_a_stated_delta_not_far_below_one_over_n_is_no_release(name, make, X, y):
    """calibration="hall" beyond Proposition 1.1's range states the calibration's exact delta, above the one asked
    for: above 1/(10 n) the fit is not a release (status "not private", the note says why), with fresh randomness
    too."""
    n = X.shape[0]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # CalibrationWarning (the point), UnsafeNoiseWarning
        loose = make().set_params(epsilon=40.0, delta=0.05 / n, calibration="hall").fit(X, y)
        ok = make().set_params(epsilon=40.0, delta=0.05 / n, calibration="analytic").fit(X, y)
    assert loose.guarantee_.delta > delta_ceiling(n) and loose.guarantee_.status == "not private"
    assert loose.guarantee_.epsilon == float("inf")  # as every guarantee of a fit that is not private
    assert any("above 1/(10 n)" in note for note in loose.guarantee_.notes)
    with pytest.raises(ValueError, match="not private"):
        loose.release()  # nothing of it may be published
    assert ok.guarantee_.delta == 0.05 / n and ok.guarantee_.status == "release"


def test_kde_release_mode_answers_only_released_points():
    X = np.random.default_rng(0).uniform(size=(50, 2))
    kde = PrivateKDE(sigma=0.2, grid_size=5, random_state=0).fit(X)
    assert kde.released_points_.shape == (25, 2)
    assert np.array_equal(kde.density(kde.released_points_[3:6]), kde.released_values_[3:6])
    with pytest.raises(ValueError, match="not released"):
        kde.density([[0.3, 0.3]])
    assert not hasattr(kde, "_curator")
    assert "jmlr" in kde.guarantee_.statement and "analytic" in kde.guarantee_.statement


def test_curator_pickle_holds_only_the_release():
    X = np.random.default_rng(0).uniform(size=(60, 1))
    kde = PrivateKDE(sigma=0.1, points=np.array([[0.5]]), curator=True, random_state=12345).fit(X)
    v = kde.density([[0.25], [0.5]])
    blob = pickle.dumps(kde)
    assert not any(X[i].tobytes() in blob for i in range(len(X)))
    back = pickle.loads(blob)
    assert not hasattr(back, "_curator")
    assert pickle.loads(pickle.dumps(kde.release())).get_params()["random_state"] is None
    assert np.array_equal(back.density([[0.5]]), v[1:])  # released at fit: answered on the same sample path
    with pytest.raises(ValueError, match="not released"):
        back.density([[0.25]])  # asked of the curator after fit: not in the release
    assert any("curator" in note for note in kde.guarantee_.notes)


def test_a_curators_queries_never_enter_its_release():
    """A curator asked about private rows (a selection's validation rows) must not export them: release() and the
    pickle hold only the points released at fit.  (The curator used to append every queried point to
    released_points_, so release() published private rows in the clear.)"""
    rng = np.random.default_rng(0)
    X = rng.uniform(size=(80, 2))
    kde = PrivateKDE(sigma=0.2, grid_size=3, curator=True, random_state=1).fit(X)
    kde.density(X[:5])
    out = kde.release()
    assert out.released_points_.shape == (9, 2)
    assert not any((out.released_points_ == row).all(axis=1).any() for row in X)
    assert not any(X[i].tobytes() in pickle.dumps(kde) for i in range(len(X)))


def test_kde_released_values_match_the_nonprivate_mean_in_law():
    X = HB.bimodal_mixture(1).sample(500, np.random.default_rng(0))
    P = np.linspace(0, 1, 9)[:, None]
    kde = PrivateKDE(sigma=0.05, points=P, keep_nonprivate=True, random_state=0).fit(X)
    draws = kde.sample_releases(P, 400, random_state=1)
    z = (draws - kde.nonprivate_function(P)) / (kde.noise_multiplier_ * math.sqrt(HB.gaussian_kernel_sup(0.05, 1)))
    assert abs(z.mean()) < 4 / math.sqrt(z.size) * 3 and abs(z.std() - 1) < 0.05
    with pytest.raises(ValueError, match="keep_nonprivate"):
        PrivateKDE(sigma=0.05, points=P, random_state=0).fit(X).sample_releases(P, 2)


# ----------------------------------------------------------------------------------------------
# the kernel machine
# ----------------------------------------------------------------------------------------------
def _rkhs_dist(kern, X, a, b):
    q = a - b
    return math.sqrt(max(float(q @ kern(X, X) @ q), 0.0))


def test_hinge_machine_matches_cvxpy_within_its_certificate():
    X, y = _unit_data(60)
    y = y.astype(float)
    kern, lam = GaussianKernel(0.4), 0.02
    K = kern(X, X)
    sol = solve_kernel_machine(K, y, "hinge", lam, distance_tol=1e-6)
    ref = solve_hinge_dual_cvxpy(y, 1.0 / (2 * lam), K=K)
    assert sol.distance_bound < 1e-6
    assert _rkhs_dist(kern, X, sol.coef, ref.alpha * y) <= sol.distance_bound + ref.distance_bound + 1e-7
    assert np.sum(np.abs(sol.coef)) <= 1 / (2 * lam) * (1 + 1e-12)


@pytest.mark.parametrize("loss", ["logistic", "squared"])
def test_smooth_machines_are_certified_minimisers(loss):
    X, y = _unit_data(50)
    y = y.astype(float)
    kern, lam = GaussianKernel(0.4), 0.05
    K = kern(X, X)
    sol = solve_kernel_machine(K, y, loss, lam, distance_tol=1e-8)
    assert sol.distance_bound < 1e-8
    if loss == "squared":  # closed form: (K + n lam I) a = y
        ref = np.linalg.solve(K + len(y) * lam * np.eye(len(y)), y)
        assert _rkhs_dist(kern, X, sol.coef, ref) < 1e-7
    L = 1.0 if loss == "logistic" else HB.squared_loss_lipschitz(1.0, lam)
    assert np.sum(np.abs(sol.coef)) <= L / (2 * lam) * (1 + 1e-12)


def test_machine_labels_classes_and_prediction():
    X, y = _unit_data(80)
    labels = np.where(y > 0, "yes", "no")
    km = PrivateKernelMachine(epsilon=50.0, alpha=0.1, sigma=0.5, classes=["no", "yes"], points=X, random_state=0).fit(X, labels)
    assert set(km.predict(X)) <= {"no", "yes"} and km.score(X, labels) > 0.8
    with pytest.raises(ValueError, match="not in classes"):
        PrivateKernelMachine(classes=["no", "yes"], points=X).fit(X, y)
    with pytest.raises(ValueError, match="points"):
        PrivateKernelMachine(alpha=0.1).fit(X, y)
    nys = PrivateKernelMachine(epsilon=50.0, alpha=0.1, sigma=0.5, solver="nystrom", landmarks=_GRID2, random_state=0).fit(X, y)
    assert nys.score(X, y) > 0.8 and nys.coef_.shape == (25,)
    with pytest.raises(ValueError, match="landmarks"):
        PrivateKernelMachine(solver="nystrom").fit(X, y)


def test_uncertified_machine_is_refused(monkeypatch):
    import dpkernels.mechanisms.hall as H

    real = H.solve_kernel_machine

    def loose(*args, **kwargs):
        sol = real(*args, **kwargs)
        sol.distance_bound = 1.0
        return sol

    monkeypatch.setattr(H, "solve_kernel_machine", loose)
    X, y = _unit_data(30)
    with pytest.raises(RuntimeError, match="refusing to release"):
        PrivateKernelMachine(points=X, random_state=0).fit(X, y)
