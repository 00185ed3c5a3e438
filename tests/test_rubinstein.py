"""PrivateSVM-Finite / PrivateSVM (Rubinstein et al. 2012) and the bound calculators."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
from scipy import stats
from sklearn.base import clone

from dpkernels import ClippingWarning, PrivacyLeakWarning, nonprivate_diagnostics
from dpkernels.audit import epsilon_lower_bound, laplace_llr_statistic
from dpkernels.bounds import rubinstein as R
from dpkernels.experiments import rubinstein2012 as E
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
    m = PrivateSVMFinite(epsilon=0.7, alpha=1.0 / 3.0, data_norm=1.0, random_state=1).fit(X, y)
    # calibrated at eps / (1 + 2 solver_tol): the certified centre's sensitivity is (1 + 2 solver_tol) x Lemma 9's
    assert m.noise_scale_ == pytest.approx(R.theorem_10_noise_scale(0.7 / 1.002, 1.0, 3.0, 1.0, 3, 120))
    assert m.sensitivity_l2_ == pytest.approx(4 * 3.0 / 120)
    assert m.guarantee_.epsilon == pytest.approx(0.7)  # the level that holds, solver slack included
    assert m.sensitivity_l1_ * 1.002 / m.noise_scale_ == pytest.approx(0.7)
    assert not hasattr(m, "nonprivate_")
    with pytest.raises(AttributeError, match="keep_nonprivate=True"):
        m.sample_releases(10, 2)
    ev = PrivateSVMFinite(epsilon=0.7, alpha=1.0 / 3.0, data_norm=1.0, keep_nonprivate=True, random_state=1).fit(X, y)
    for noise in ("lattice", "continuous"):
        ev.set_params(noise=noise)
        draws = ev.sample_releases(20000, 2)
        assert stats.kstest((draws - ev.nonprivate_.coef).ravel(), stats.laplace(scale=ev.noise_scale_).cdf).pvalue > 1e-3
    grid = 2.0 ** (np.floor(np.log2(ev.noise_scale_)) - 16)
    ev.set_params(noise="lattice")
    assert np.all(np.mod(ev.sample_releases(100, 3), grid) == 0)  # the lattice release lies on its public grid


def test_private_svm_noise_is_corollary_12_and_release_has_frequencies():
    X, y = data()
    m = PrivateSVM(epsilon=2.0, alpha=0.2, n_components=25, sigma=0.8, random_state=3).fit(X, y)
    assert m.noise_scale_ == pytest.approx(R.corollary_12_noise_scale(2.0 / 1.002, 1.0, 5.0, 25, 120))
    assert m.guarantee_.epsilon == pytest.approx(2.0)
    assert m.coef_.shape == (50,) and m.frequencies_.shape == (25, 3)
    assert np.allclose(np.linalg.norm(m.rff_.transform(X), axis=1), 1.0)
    assert set(np.unique(m.predict(X))) <= {-1, 1}
    assert m.rff_.get_params()["random_state"] is None  # the released feature map holds no generator
    assert {"coef_", "frequencies_", "rff_", "noise_scale_", "kappa_"} <= set(m.guarantee_.attributes)


def test_same_seed_same_release_and_clone():
    X, y = data()
    a = PrivateSVM(epsilon=1.0, n_components=10, random_state=5).fit(X, y).coef_
    b = PrivateSVM(epsilon=1.0, n_components=10, random_state=5).fit(X, y).coef_
    assert np.array_equal(a, b)
    est = PrivateSVMFinite(epsilon=0.3, alpha=0.5, data_norm=1.0)
    assert clone(est).get_params() == est.get_params()


@pytest.mark.parametrize("loss", ["hinge", "huber", "logistic"])
def test_nonprivate_solution_is_certified(loss):
    X, y = data()
    m = PrivateSVMFinite(epsilon=1.0, alpha=0.1, data_norm=1.0, loss=loss, keep_nonprivate=True, random_state=0).fit(X, y)
    assert m.nonprivate_.distance_bound <= 1e-3 * m.sensitivity_l2_
    # the guarantee's solver allowance is the refusal threshold, not the data-dependent certificate: the headline
    # epsilon holds with it, the noise formula is evaluated at eps / (1 + 2 solver_tol)
    assert m.guarantee_.epsilon == pytest.approx(1.0) and m.guarantee_.epsilon_calibrated == pytest.approx(1.0 / 1.002)


@pytest.mark.parametrize(
    "kwargs, X_fix, y_fix, match",
    [
        ({"epsilon": 0.0}, None, None, "epsilon"),
        ({"epsilon": -1.0}, None, None, "epsilon"),
        ({"alpha": 0.0}, None, None, "alpha must be positive"),
        ({"classes": [-1, 1]}, None, np.r_[np.zeros(60), np.ones(60)], "not in classes"),
        ({}, None, np.r_[np.zeros(40), np.ones(40), 2 * np.ones(40)], "classes is not given"),  # one text (F7)
        ({"classes": "data"}, None, np.r_[np.zeros(40), np.ones(40), 2 * np.ones(40)], "Only binary classification"),
        ({"noise": "exact"}, None, None, "noise must be one of"),
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
    with nonprivate_diagnostics(), pytest.warns(ClippingWarning):  # silent by default (issue 26.3)
        m = PrivateSVMFinite(epsilon=1.0, data_norm=1.0, clip=True, random_state=0).fit(X, y)
    assert m.kappa_ == 1.0


def test_bounds_are_public_by_construction():
    """Issue 18: the default bound is public (1, documented) and rows above it are refused, never read from the data;
    reading it from the data is explicit and voids the guarantee."""
    X, y = data()
    m = PrivateSVMFinite(epsilon=1.0, random_state=0).fit(X, y)  # rows in the unit ball: the public default
    assert m.kappa_ == 1.0 and m.guarantee_.status == "reproduction" and m.guarantee_.epsilon == pytest.approx(1.0)
    with pytest.raises(ValueError, match="data_norm = 1"):
        PrivateSVMFinite(epsilon=1.0, random_state=0).fit(3 * X, y)
    with pytest.warns(PrivacyLeakWarning):
        leaky = PrivateSVMFinite(epsilon=1.0, data_norm="data", random_state=0).fit(3 * X, y)
    assert not leaky.guarantee_.private and leaky.guarantee_.epsilon == math.inf
    assert leaky.kappa_ == pytest.approx(3 * np.linalg.norm(X, axis=1).max())
    with pytest.raises(ValueError, match="not private"):
        leaky.release()


def test_intercept_enlarges_kappa():
    X, y = data()
    m = PrivateSVMFinite(epsilon=1.0, alpha=1.0, data_norm=1.0, fit_intercept=True, intercept_scaling=2.0,
                         random_state=0).fit(X, y)
    assert m.kappa_ == pytest.approx(math.sqrt(5.0))
    assert m.noise_scale_ == pytest.approx(R.theorem_10_noise_scale(1.0 / 1.002, 1.0, 1.0, math.sqrt(5.0), 4, 120))


def test_audit_stays_below_epsilon_on_near_worst_case_pair():
    """A small privacy audit (the notebook runs the large one): the 95% lower bound must stay <= epsilon."""
    pair = R.lemma_22_databases(20, 0.5, M=1.0, m=0.01)
    fit = lambda X, y: PrivateSVMFinite(epsilon=1.0, alpha=2.0, data_norm=1.0, keep_nonprivate=True,  # noqa: E731
                                        random_state=0).fit(X, y)
    a, b = fit(pair.X1, pair.y1), fit(pair.X2, pair.y2)
    c, cp = a.nonprivate_.coef, b.nonprivate_.coef
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


@pytest.mark.parametrize("estimator", [PrivateSVMFinite(epsilon=1.0, alpha=0.1, data_norm=1.0, random_state=0),
                                       PrivateSVM(epsilon=1.0, alpha=0.1, n_components=5, random_state=0)],
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


# ----------------------------------------------------------------------------------------------
# issue 12: release hygiene
# ----------------------------------------------------------------------------------------------
def finite(**kw):
    return PrivateSVMFinite(**{"epsilon": 1.0, "alpha": 2.0, "data_norm": 1.0, **kw})


def rff(**kw):
    return PrivateSVM(**{"epsilon": 1.0, "alpha": 2.0, "n_components": 3, "sigma": 1.0, **kw})


def _hygiene_data():
    X, y = data(n=60, d=2, seed=3)
    return X, y


RELEASE_CASES = [
    ("PrivateSVMFinite", lambda **kw: PrivateSVMFinite(**{"epsilon": 1.0, "alpha": 0.5, "data_norm": 1.0, **kw}), *_hygiene_data()),
    ("PrivateSVM", lambda **kw: PrivateSVM(**{"epsilon": 1.0, "alpha": 0.5, "n_components": 8, "sigma": 0.7, **kw}), *_hygiene_data()),
]


@pytest.mark.parametrize("make", [finite, rff], ids=["finite", "rff"])
@pytest.mark.parametrize("noise", ["continuous", "lattice"])
def test_floating_point_attack(make, noise):
    """Mironov's attack (reachability of the released doubles from each centre), 20,000 releases per data set: it
    refutes the paper's continuous sampler and gives a lower bound <= the claimed epsilon for the lattice default."""
    from dpkernels import UnsafeNoiseWarning
    from dpkernels.audit import reachability_statistic

    X, y, y2 = E.floating_point_pair()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UnsafeNoiseWarning)
        a = make(noise=noise, keep_nonprivate=True, random_state=1).fit(X, y)
        b = make(noise=noise, keep_nonprivate=True, random_state=1).fit(X, y2)  # same seed: same frequencies
    c, cp = a.nonprivate_.coef, b.nonprivate_.coef
    assert not np.array_equal(c, cp)
    lam = a.noise_scale_
    res = epsilon_lower_bound(reachability_statistic(a.sample_releases(20000, 11), c, cp, lam),
                              reachability_statistic(b.sample_releases(20000, 12), c, cp, lam))
    if noise == "continuous":
        assert res.epsilon_lb > a.guarantee_.epsilon
    else:
        assert res.epsilon_lb <= a.guarantee_.epsilon


def test_continuous_noise_warns_and_guarantee_says_so():
    from dpkernels import UnsafeNoiseWarning

    X, y = data()
    with pytest.warns(UnsafeNoiseWarning):
        m = finite(noise="continuous", random_state=0).fit(X, y)
    assert "NOT floating-point safe" in m.guarantee_.noise
    assert "floating-point safe" in finite(random_state=0).fit(X, y).guarantee_.noise


@pytest.mark.parametrize("make", [finite, rff], ids=["finite", "rff"])
def test_labels_from_public_classes(make):
    X, y = data()
    y01 = (y == 1).astype(int)
    ystr = np.where(y == 1, "yes", "no")
    for labels, classes in ((y01, [0, 1]), (ystr, ["no", "yes"])):
        with warnings.catch_warnings():
            warnings.simplefilter("error", PrivacyLeakWarning)
            m = make(classes=classes, random_state=4).fit(X, labels)
        assert set(m.predict(X)) <= set(classes)
        with pytest.raises(ValueError, match="classes is not given"):
            make(random_state=4).fit(X, labels)
        with pytest.warns(PrivacyLeakWarning):
            leaky = make(classes="data", random_state=4).fit(X, labels)
        assert not leaky.guarantee_.private


@pytest.mark.parametrize("make", [finite, rff], ids=["finite", "rff"])
def test_one_class_data_is_released_like_its_neighbour(make):
    """With a public label set a data set with one label is an ordinary data set: it is fitted (no error that its
    two-class neighbour would not raise), its non-private solution is the certified minimiser."""
    X, y = data(n=40)
    one = np.ones(40)
    neighbour = one.copy()
    neighbour[0] = -1.0
    for labels in (one, -one, neighbour):
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            m = make(keep_nonprivate=True, random_state=0).fit(X, labels)
        assert m.nonprivate_.converged and np.all(np.isfinite(m.coef_))
    strings = make(classes=["a", "b"], random_state=0).fit(X, np.full(40, "b"))
    assert set(strings.predict(X)) <= {"a", "b"}
    m = finite(keep_nonprivate=True, random_state=0).fit(X, one)
    ref = solve_hinge_dual_cvxpy(one, 0.5, X=X)
    assert np.linalg.norm(m.nonprivate_.coef - ref.coef) <= m.nonprivate_.distance_bound + ref.distance_bound + 1e-9


@pytest.mark.parametrize("make", [finite, rff], ids=["finite", "rff"])
def test_sparse_and_huge_inputs(make):
    from scipy import sparse

    X, y = data()
    dense = make(random_state=2).fit(X, y)
    sp = make(random_state=2).fit(sparse.csr_matrix(X), y)
    assert np.array_equal(dense.coef_, sp.coef_)
    assert np.array_equal(dense.predict(X), sp.predict(sparse.csr_matrix(X)))
    big = X.copy()
    big[3, 1] = 1e101
    with pytest.raises(ValueError, match="input domain"):
        make(random_state=2).fit(big, y)
    with pytest.raises(ValueError, match="input domain"):
        dense.predict(big)


def test_feature_map_sharing_the_noise_generator_is_refused():
    from dpkernels.random_features import RandomFourierFeatures

    X, y = data()
    rng = np.random.default_rng(0)
    fm = RandomFourierFeatures(n_components=5, random_state=rng).fit(X)
    with pytest.raises(ValueError, match="rewound"):
        PrivateSVMFinite(epsilon=1.0, feature_map=fm, random_state=rng).fit(X, y)
    PrivateSVMFinite(epsilon=1.0, feature_map=fm, random_state=np.random.default_rng(1)).fit(X, y)


def test_auto_regulariser_is_one_over_sqrt_n():
    """alpha="auto": the paper's C = sqrt(n) (Remark 1), stated in the guarantee as chosen without the data."""
    X, y = data()
    m = PrivateSVMFinite(epsilon=1.0, data_norm=1.0, random_state=0).fit(X, y)
    assert m.alpha_ == pytest.approx(1.0 / math.sqrt(len(y)))
    assert any("C = sqrt(n)" in s and "chosen without the data" in s for s in m.guarantee_.assumptions)
    assert PrivateSVMFinite(epsilon=1.0, alpha=0.3, data_norm=1.0, random_state=0).fit(X, y).alpha_ == 0.3


def test_lemma_17_as_stated_follows_from_its_proofs_bound():
    """Lemma 17's stated tolerance min{1, eps^2 / (2^2 H^2)} makes the proof's bound at most eps/2 (equality at
    eps = 2H); the first printed tolerance, min{1, eps^2 / (1 + eps^2)}, does not (the row `lemma-17-stated`)."""
    grid = [(e, lam, c, L) for e in np.geomspace(1e-3, 10, 9) for lam in np.geomspace(1e-4, 10, 7)
            for c in np.geomspace(0.01, 100, 5) for L in (0.5, 2.0)]
    assert max(R.lemma_17_stated_slack(*g) for g in grid) <= 1.0 + 1e-9
    H = 0.1 + 2 * np.sqrt((2.0 * 1.0 + 0.05) * 0.1)
    assert R.lemma_17_stated_slack(2 * H, 0.1, 2.0, 1.0) == pytest.approx(1.0)
    first = lambda e, lam, c, L: min(1.0, e**2 / (1 + e**2))  # noqa: E731
    assert max(R.lemma_17_stated_slack(*g, tolerance=first) for g in grid) > 10
