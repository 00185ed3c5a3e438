"""Private SVDD, equilibrium points, the one-against-all baselines and the verdict criteria (Park 2022)."""

from __future__ import annotations

import math
import pickle
import warnings

import numpy as np
import pytest
from sklearn.base import clone

from dpkernels import PrivacyLeakWarning, UnsafeNoiseWarning
from dpkernels.accounting import gaussian_delta
from dpkernels.experiments import park2022 as E
from dpkernels.mechanisms import EquilibriumPointClassifier, PrivateSVDD
from dpkernels.mechanisms.baselines import fit_one_vs_all, guarantees, semi_operator, semi_sigma
from dpkernels.mechanisms.park import corollary_4_2_sensitivity
from dpkernels.random_features import RandomFourierFeatures, rff_paired
from dpkernels.solvers import project_capped_simplex, solve_svdd, solve_svdd_cvxpy


def blobs(n=120, seed=0):
    rng = np.random.default_rng(seed)
    centres = np.array([[0.25, 0.25], [0.75, 0.3], [0.5, 0.8]])
    y = rng.integers(0, 3, n)
    return np.clip(centres[y] + 0.07 * rng.normal(size=(n, 2)), 0, 1), y


_X, _Y = blobs(90, seed=5)

RELEASE_CASES = [
    ("PrivateSVDD", lambda **kw: PrivateSVDD(**{"epsilon": 1.0, "sigma": math.sqrt(0.1), "n_components": 30, **kw}), _X, None),
    ("EquilibriumPointClassifier", lambda **kw: EquilibriumPointClassifier(
        **{"classes": [0, 1, 2], "sigma": math.sqrt(0.1), "n_components": 30, "n_starts": 200, **kw}), _X, _Y),
]


# ----------------------------------------------------------------------------------------------
# the SVDD solver
# ----------------------------------------------------------------------------------------------
def test_capped_simplex_projection_kkt():
    rng = np.random.default_rng(1)
    for n, u in ((40, 0.05), (3000, 0.001)):
        v = rng.normal(size=n)
        p = project_capped_simplex(v, u)
        assert p.sum() == pytest.approx(1.0) and p.min() >= 0 and p.max() <= u + 1e-15
        free = (p > 1e-12) & (p < u - 1e-12)
        if free.sum() > 1:  # free coordinates share one shift t: v_i - p_i constant
            assert np.ptp((v - p)[free]) < 1e-10


@pytest.mark.parametrize("box", [0.05, 0.2])
def test_svdd_solver_matches_cvxpy(box):
    X, _ = blobs()
    Phi = RandomFourierFeatures(n_components=30, sigma=0.3, random_state=2).fit_transform(X)
    sol = solve_svdd(Phi, box)
    ref = Phi.T @ solve_svdd_cvxpy(box, Phi=Phi)
    assert sol.distance_bound < 1e-6
    assert np.linalg.norm(sol.coef - ref) < 1e-5 + sol.distance_bound
    assert np.linalg.norm(sol.coef) <= 1.0


def test_svdd_gap_is_the_frank_wolfe_gap():
    """The non-negative form of the certificate equals grad'(beta - s) for the minimising vertex s."""
    from dpkernels.solvers.svdd import svdd_duality_gap

    rng = np.random.default_rng(3)
    Phi = RandomFourierFeatures(n_components=20, sigma=0.4, random_state=0).fit_transform(rng.uniform(size=(100, 2)))
    b = project_capped_simplex(rng.uniform(size=100), 0.05)
    g = 2.0 * Phi @ (Phi.T @ b)
    s = np.zeros(100)
    s[np.argsort(g)[:20]] = 0.05
    assert svdd_duality_gap(Phi @ (Phi.T @ b), b, 0.05) == pytest.approx(g @ (b - s), rel=1e-12)


def test_infeasible_box_refused_and_box_one_over_n_is_the_uniform_point():
    Phi = RandomFourierFeatures(n_components=5, random_state=0).fit_transform(np.random.default_rng(0).uniform(size=(20, 2)))
    with pytest.raises(ValueError, match="infeasible"):
        solve_svdd(Phi[:10], 0.05)
    sol = solve_svdd(Phi, 0.05)  # n * box = 1: the only feasible point (libsvm crashed here)
    assert sol.converged and np.allclose(sol.alpha, 1 / 20)
    with pytest.raises(ValueError, match="needs at least 20 rows"):
        PrivateSVDD(epsilon=1.0).fit(np.zeros((19, 2)))
    assert PrivateSVDD(epsilon=1.0, random_state=0).fit(np.random.default_rng(1).uniform(size=(20, 2))).center_.shape == (400,)


@pytest.mark.parametrize("n, d", [(150, 8), (600, 6)])
def test_svdd_default_gamma_on_spread_out_data_is_certified(n, d):
    """Near-orthogonal features (default gamma on unscaled data of 5+ dims): the solve is certified (this took
    50-100 s with a first-order fallback; the working set / Clarabel path takes about a second)."""
    rng = np.random.default_rng(0)
    X = 3.0 * rng.normal(size=(n, d))
    m = PrivateSVDD(epsilon=1.0, keep_nonprivate=True, random_state=0).fit(X)
    assert m.nonprivate_.distance_bound <= 1e-3 * 2 * 0.05
    Phi = rff_paired(X, m.frequencies_)  # the release's (public) frequencies
    assert np.linalg.norm(m.nonprivate_.coef - Phi.T @ solve_svdd_cvxpy(0.05, Phi=Phi)) < 1e-4


# ----------------------------------------------------------------------------------------------
# PrivateSVDD
# ----------------------------------------------------------------------------------------------
def test_private_svdd_noise_scale_clipping_and_guarantee():
    X, _ = blobs()
    m = PrivateSVDD(epsilon=0.5, box=0.05, sigma=math.sqrt(0.1), n_components=100, random_state=0).fit(X)
    l2, l1 = corollary_4_2_sensitivity(0.05, 200)
    # Theorem 4.3's lambda, evaluated at eps / (1 + 2 solver_tol) so that eps = 0.5 holds with the solver slack
    assert m.noise_scale(0.5) == pytest.approx(l1 / 0.5) and m.noise_scale_ == pytest.approx(l1 * 1.002 / 0.5)
    assert np.linalg.norm(m.center_) <= 1.0 + 1e-12
    g = m.guarantee_
    assert g.epsilon == 0.5 and g.status == "reproduction" and set(g.attributes) == {"center_", "frequencies_", "noise_scale_"}
    assert "lattice" in g.noise or "grid" in g.noise
    assert not hasattr(m, "nonprivate_")
    with pytest.raises(AttributeError, match="keep_nonprivate"):
        m.sample_centers(3)
    baseline = PrivateSVDD(epsilon=None, box=0.05, sigma=math.sqrt(0.1), n_components=100, random_state=0).fit(X)
    assert not baseline.guarantee_.private and "NOT PRIVATE" in str(baseline.guarantee_)


def test_private_svdd_continuous_noise_warns():
    X, _ = blobs()
    with pytest.warns(UnsafeNoiseWarning):
        PrivateSVDD(epsilon=1.0, sigma=math.sqrt(0.1), n_components=20, noise="continuous", random_state=0).fit(X)
    with pytest.raises(ValueError, match="noise"):
        PrivateSVDD(epsilon=1.0, noise="gaussian").fit(X)


def test_private_svdd_score_and_grid_search():
    from sklearn.model_selection import GridSearchCV

    X, _ = blobs(200)
    m = PrivateSVDD(epsilon=None, sigma=math.sqrt(0.1), n_components=50, random_state=0).fit(X)
    assert m.score(X) == pytest.approx(-np.mean(m.support_function(X)))
    far = np.full((5, 2), 5.0)  # far from the data: f-hat near 1 + ||a||^2, the largest value
    assert m.score(far) < m.score(X)
    gs = GridSearchCV(PrivateSVDD(epsilon=5.0, sigma=math.sqrt(0.1), n_components=30, random_state=0), {"box": [0.05, 0.2]}, cv=3).fit(X)
    assert gs.best_params_["box"] in (0.05, 0.2)


def test_resample_is_a_release_at_the_new_epsilon():
    X, _ = blobs()
    base = PrivateSVDD(epsilon=None, sigma=math.sqrt(0.1), n_components=40, clip_center=False, keep_nonprivate=True, random_state=0).fit(X)
    rel = base.resample(2.0, random_state=1)
    assert rel.guarantee_.epsilon == 2.0 and not hasattr(rel, "nonprivate_") and rel.get_params()["random_state"] is None
    np.testing.assert_array_equal(rel.frequencies_, base.frequencies_)
    draws = base.sample_centers(4000, random_state=2, epsilon=2.0)
    # every row has the law of a fresh release: Laplace(lambda) around a*, rounded to the lattice (clip_center=False)
    noise = draws - base.nonprivate_.coef
    assert abs(np.mean(np.abs(noise)) / base.noise_scale(2.0) - 1.0) < 0.02


def test_gradient_matches_finite_differences():
    X, _ = blobs()
    m = PrivateSVDD(epsilon=None, box=0.05, sigma=math.sqrt(0.1), n_components=50, random_state=0).fit(X)
    x = np.array([[0.4, 0.6]])
    e = 1e-5
    num = [(m.support_function(x + e * d) - m.support_function(x - e * d))[0] / (2 * e) for d in np.eye(2)]
    assert np.allclose(num, m.gradient(x)[0], atol=1e-4)


def test_float_attack_refutes_continuous_noise_and_not_the_lattice():
    """Mironov's attack on the SVDD centre: the continuous sampler's outputs are reachable only from their own
    centre (lower bound far above eps = 1); the lattice release is reachable from neither (bound 0 <= eps)."""
    pair = E.audit_pair(n=30, n_adv=4, maxiter=10, random_state=0)
    cont = E.float_attack(pair, 1.0, 2000, "continuous", random_state=1)
    latt = E.float_attack(pair, 1.0, 2000, "lattice", random_state=1)
    assert cont["epsilon_lb"] > 3.0
    assert latt["epsilon_lb"] <= 1.0


def test_svdd_audit_negative_control_has_power():
    """The audit's lower bound stays below the pair's exact loss at the claimed noise and catches half the noise."""
    pair = E.audit_pair(n_adv=8, maxiter=30, random_state=2022)
    ok = E.svdd_audit(pair, 1.0, 100_000, random_state=3)
    half = E.svdd_audit(pair, 1.0, 100_000, noise_factor=0.5, random_state=3)
    assert ok["epsilon_lb"] <= ok["pair_epsilon"] <= 1.0
    assert half["pair_epsilon"] == pytest.approx(2 * ok["pair_epsilon"])
    assert ok["pair_epsilon"] > 0.5 and half["epsilon_lb"] > 1.0  # half the noise is caught above the claimed eps


# ----------------------------------------------------------------------------------------------
# EquilibriumPointClassifier
# ----------------------------------------------------------------------------------------------
@pytest.mark.parametrize("variant", ["paper", "corrected"])
def test_classifier_non_private_is_accurate(variant):
    X, y = blobs(300)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PrivacyLeakWarning)
        clf = EquilibriumPointClassifier(epsilon_svdd=None, epsilon_vote=None, classes=[0, 1, 2], sigma=math.sqrt(0.1), learning_rate=0.01,
                                         n_iter=50, variant=variant, n_starts=500, random_state=0).fit(X, y)
    assert np.mean(clf.predict(X) == y) > 0.9
    assert not clf.guarantee_.private and clf.guarantee_.epsilon == math.inf


def test_default_is_the_private_corrected_variant_and_the_paper_variant_warns():
    X, y = blobs(300)
    clf = EquilibriumPointClassifier(classes=[0, 1, 2], sigma=math.sqrt(0.1), n_starts=300, random_state=0).fit(X, y)
    assert clf.variant == "corrected" and clf.guarantee_.status == "reproduction" and clf.guarantee_.epsilon == pytest.approx(1.0)
    assert len(clf.labelled_points_) == len(clf.equilibrium_points_)  # every basin is labelled
    with pytest.warns(PrivacyLeakWarning, match="NOT differentially private"):
        paper = EquilibriumPointClassifier(variant="paper", classes=[0, 1, 2], sigma=math.sqrt(0.1), random_state=0).fit(X, y)
    assert not paper.guarantee_.private and "NOT PRIVATE" in str(paper.guarantee_)


def test_noiseless_votes_are_not_reported_as_private():
    X, y = blobs(200)
    clf = EquilibriumPointClassifier(epsilon_vote=None, classes=[0, 1, 2], sigma=math.sqrt(0.1), n_starts=200, random_state=0).fit(X, y)
    assert not clf.guarantee_.private and clf.guarantee_.epsilon == math.inf
    assert any("without noise" in n for n in clf.guarantee_.notes)


def test_label_set_is_public_and_nan_labels_are_refused():
    X, y = blobs(200)
    y = np.where(y == 2, 1, y)  # class 2 absent from this data set
    clf = EquilibriumPointClassifier(classes=[0, 1, 2], sigma=math.sqrt(0.1), n_starts=200, random_state=0).fit(X, y)
    assert clf.classes_.tolist() == [0, 1, 2]  # the public set, whatever the data hold
    with pytest.raises(ValueError, match="classes is not given"):
        EquilibriumPointClassifier(sigma=math.sqrt(0.1), n_starts=100, random_state=0).fit(X, y)
    with pytest.warns(PrivacyLeakWarning, match="classes"):
        leaky = EquilibriumPointClassifier(sigma=math.sqrt(0.1), n_starts=100, classes="data", random_state=0).fit(X, y)
    assert leaky.classes_.tolist() == [0, 1] and not leaky.guarantee_.private
    yn = y.astype(float)
    yn[3] = np.nan
    with pytest.raises(ValueError):
        EquilibriumPointClassifier(classes=[0, 1, 2], sigma=math.sqrt(0.1), random_state=0).fit(X, yn)
    with pytest.raises(ValueError, match="not in classes"):
        EquilibriumPointClassifier(classes=[0, 1], sigma=math.sqrt(0.1), random_state=0).fit(X, blobs(200)[1])


def test_class_set_attack_sees_nothing():
    """A class present in D and absent from D' no longer shows in classes_ (it did with the inferred set)."""
    X, y = blobs(100)
    y2 = y.copy()
    y2[y2 == 2] = 1
    a = EquilibriumPointClassifier(classes=[0, 1, 2], sigma=math.sqrt(0.1), n_starts=100, random_state=0).fit(X, y)
    b = EquilibriumPointClassifier(classes=[0, 1, 2], sigma=math.sqrt(0.1), n_starts=100, random_state=0).fit(X, y2)
    assert a.classes_.tolist() == b.classes_.tolist()


def test_epc_pickle_and_clone():
    X, y = blobs(150)
    clf = EquilibriumPointClassifier(classes=[0, 1, 2], sigma=math.sqrt(0.1), n_starts=200, random_state=4).fit(X, y)
    back = pickle.loads(pickle.dumps(clf.release()))
    np.testing.assert_array_equal(back.predict(X[:20]), clf.predict(X[:20]))
    assert back.get_params()["random_state"] is None and not hasattr(back.svdd_, "nonprivate_")
    assert back.svdd_.get_params()["random_state"] is None
    # a seeded specification reproduces (scikit-learn semantics); other data draw other noise (test_release_hygiene)
    a, b = clone(clf).fit(X, y), pickle.loads(pickle.dumps(clone(clf))).fit(X, y)
    np.testing.assert_array_equal(a.svdd_.center_, b.svdd_.center_)


# ----------------------------------------------------------------------------------------------
# the SVM baselines
# ----------------------------------------------------------------------------------------------
def test_one_vs_all_baselines():
    X, y = blobs(300)
    ova = fit_one_vs_all(X, y, 0.05, 5.0, d_hat=50, random_state=0, classes=[0, 1, 2])
    Phi = ova.features(X)
    assert np.mean(ova.classes[ova.scores(Phi).argmax(1)] == y) > 0.9
    for S in (ova.weight(Phi, 1.0, 1), ova.output(Phi, 1.0, 1), ova.semi(Phi, 1.0, 1e-4, 1),
              ova.semi(Phi, 1.0, 1 / 300, 1, reproduce_thesis=True)):
        assert S.shape == (300, 3)
    with pytest.warns(UnsafeNoiseWarning):
        ova.weight(Phi, 1.0, 1, noise="continuous")
    g = guarantees(3, 50, 0.5, 1e-3)
    assert g["SVM WEIGHT"]["total_epsilon"] == 1.5 and g["SVM OUTPUT"]["total_epsilon"] == 75.0


def test_the_baselines_read_nothing_from_the_data_and_refuse_a_delta_of_one_over_n():
    """Privacy audit F9: ``fit_one_vs_all`` read its label set from the data (a neighbour with a new label added a
    class), and SVM SEMI accepted delta = 1/n.  The label set is now a required argument, and delta >= 1/n is refused
    unless the thesis's own setting is being reproduced (``reproduce_thesis=True``, ERRATA P10)."""
    X, y = blobs(300)
    with pytest.raises(TypeError, match="classes"):
        fit_one_vs_all(X, y, 0.05, 5.0, d_hat=50, random_state=0)
    ova = fit_one_vs_all(X, y, 0.05, 5.0, d_hat=50, random_state=0, classes=[0, 1, 2, 3])
    assert ova.classes.tolist() == [0, 1, 2, 3]  # the public set, a class absent from y included
    Phi = ova.features(X)
    for delta in (1 / 300, 0.5 / 300):  # 0.5/n, near 1/n, passed before privacy audit F4
        with pytest.raises(ValueError, match=r"must be at most 1/\(10 n\)"):
            ova.semi(Phi, 1.0, delta, 1)
    assert ova.semi(Phi, 1.0, 1 / 300, 1, reproduce_thesis=True).shape == (300, 4)


@pytest.mark.parametrize("eps", [0.5, 10.0, 100.0])
def test_semi_calibration_is_exact_at_every_epsilon(eps):
    """The analytic sigma meets (eps, delta) exactly; the thesis's classical sigma fails above eps = 1."""
    delta = 1e-3
    sigma = semi_sigma(eps, delta, 0.05, 2.0)
    sens = 2.0 * 4 * 0.05
    assert gaussian_delta(eps, sigma, sens) <= delta * (1 + 1e-6)
    classical = semi_sigma(eps, delta, 0.05, 2.0, calibration="classical")
    if eps >= 10:
        assert gaussian_delta(eps, classical, sens) > 3 * delta


def test_semi_release_is_post_processing_of_noisy_predictions():
    """w-hat = Phi^+ (f(Z) + mu): with a rank-deficient Phi_Z the thesis's w* + Phi^+ mu would keep w*'s component
    outside the row space of Phi_Z; ours has none."""
    X, y = blobs(200)
    ova = fit_one_vs_all(X, y, 0.05, 5.0, d_hat=50, random_state=0, classes=[0, 1, 2])
    Z = ova.features(X[:20])  # 20 test points < 100 features: rank-deficient
    pinv, _ = semi_operator(Z)
    S = ova.semi(Z, 1.0, 1e-4, 0, operator=(pinv, np.linalg.norm(Z, 2)))  # delta at most 1/(10 n), n = 200
    assert np.allclose(S, Z @ (pinv @ S))  # scores are the projection of noisy predictions


def test_one_vs_all_refuses_an_uncertified_solve(monkeypatch):
    """SVM WEIGHT's noise assumes the exact minimiser: a solve the solver cannot certify is refused."""
    import dataclasses

    from dpkernels.mechanisms import baselines
    from dpkernels.solvers import solve_erm

    def loose(*args, **kwargs):
        return dataclasses.replace(solve_erm(*args, **kwargs), distance_bound=1.0)

    monkeypatch.setattr(baselines, "solve_erm", loose)
    rng = np.random.default_rng(0)
    X, y = rng.uniform(size=(60, 2)), np.repeat([0, 1, 2], 20)
    with pytest.raises(RuntimeError, match="refusing to release"):
        fit_one_vs_all(X, y, box=0.05, gamma=5.0, random_state=0, classes=[0, 1, 2])


def test_a_seeded_svdd_export_keeps_the_classifier_a_reproduction():
    """An export of a seeded PrivateSVDD (random_state None, randomness "seed") passed as ``svdd=`` must not turn the
    classifier, or the SVDD inside it, into a release that the accountant books (an outside privacy audit: both said
    "release" and spend() booked 2 eps)."""
    from dpkernels.accounting import Accountant

    rng = np.random.default_rng(0)
    X, y = rng.uniform(size=(60, 2)), np.repeat([0, 1, 2], 20)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for sv in (PrivateSVDD(epsilon=1.0, random_state=0).fit(X).release(),
                   PrivateSVDD(epsilon=1.0, keep_nonprivate=True).fit(X).resample(1.0, random_state=7)):
            assert sv.guarantee_.status == "reproduction"
            clf = EquilibriumPointClassifier(epsilon_svdd=1.0, epsilon_vote=1.0, classes=[0, 1, 2], n_starts=50,
                                             n_iter=5).fit(X, y, svdd=sv)
            assert clf.guarantee_.status == clf.svdd_.guarantee_.status == "reproduction"
            with pytest.raises(ValueError, match="reproduction"):
                Accountant(epsilon=10).spend(clf)
