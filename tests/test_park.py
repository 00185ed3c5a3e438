"""Private SVDD, equilibrium points and the one-against-all baselines (Park 2022)."""

from __future__ import annotations

import numpy as np
import pytest

from dpkernels.mechanisms.baselines import fit_one_vs_all, guarantees
from dpkernels.mechanisms.park import EquilibriumPointClassifier, PrivateSVDD, corollary_4_2_sensitivity
from dpkernels.random_features import RandomFourierFeatures
from dpkernels.solvers import project_capped_simplex, solve_svdd, solve_svdd_cvxpy


def blobs(n=120, seed=0):
    rng = np.random.default_rng(seed)
    centres = np.array([[0.25, 0.25], [0.75, 0.3], [0.5, 0.8]])
    y = rng.integers(0, 3, n)
    return np.clip(centres[y] + 0.07 * rng.normal(size=(n, 2)), 0, 1), y


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
    assert np.linalg.norm(sol.coef - ref) < 1e-6 + sol.distance_bound
    assert np.linalg.norm(sol.coef) <= 1.0


def test_infeasible_box_refused():
    Phi = RandomFourierFeatures(n_components=5, random_state=0).fit_transform(np.zeros((10, 2)))
    with pytest.raises(ValueError, match="infeasible"):
        solve_svdd(Phi, 0.05)


def test_private_svdd_noise_scale_and_clipping():
    X, _ = blobs()
    m = PrivateSVDD(epsilon=0.5, box=0.05, gamma=5.0, n_components=100, random_state=0).fit(X)
    l2, l1 = corollary_4_2_sensitivity(0.05, 200)
    assert m.noise_scale(0.5) == pytest.approx(l1 / 0.5)
    assert np.linalg.norm(m.center_) <= 1.0 + 1e-12
    assert m.guarantee_.epsilon == 0.5


def test_gradient_matches_finite_differences():
    X, _ = blobs()
    m = PrivateSVDD(epsilon=None, box=0.05, gamma=5.0, n_components=50, random_state=0).fit(X)
    x = np.array([[0.4, 0.6]])
    e = 1e-6
    num = [(m.support_function(x + e * d) - m.support_function(x - e * d))[0] / (2 * e) for d in np.eye(2)]
    assert np.allclose(num, m.gradient(x)[0], atol=1e-6)


@pytest.mark.parametrize("variant", ["paper", "corrected"])
def test_classifier_non_private_is_accurate(variant):
    X, y = blobs(300)
    clf = EquilibriumPointClassifier(epsilon_svdd=None, epsilon_vote=None, box=0.05, gamma=5.0, lr=0.01, n_iter=50,
                                     variant=variant, n_starts=500, random_state=0).fit(X, y)
    assert np.mean(clf.predict(X) == y) > 0.9
    assert clf.privacy()["epsilon_replace_one"] == (np.inf if variant == "paper" else 0.0)


def test_corrected_variant_labels_every_basin_and_states_total_epsilon():
    X, y = blobs(300)
    clf = EquilibriumPointClassifier(epsilon_svdd=0.5, epsilon_vote=0.5, box=0.05, gamma=5.0, variant="corrected",
                                     n_starts=300, random_state=0).fit(X, y)
    assert len(clf.labelled_points_) == len(clf.equilibrium_points_)
    assert clf.privacy()["epsilon_replace_one"] == pytest.approx(1.0)


def test_one_vs_all_baselines():
    X, y = blobs(300)
    ova = fit_one_vs_all(X, y, 0.05, 5.0, d_hat=50, random_state=0)
    Phi = ova.features(X)
    assert np.mean(ova.classes[ova.scores(Phi).argmax(1)] == y) > 0.9
    for S in (ova.weight(Phi, 1.0, 1), ova.output(Phi, 1.0, 1), ova.semi(Phi, 1.0, 1 / 300, 1)):
        assert S.shape == (300, 3)
    g = guarantees(3, 50, 0.5, 1e-3)
    assert g["SVM WEIGHT"]["total_epsilon"] == 1.5 and g["SVM OUTPUT"]["total_epsilon"] == 75.0


def test_setting_effect_grouping_and_validation():
    """Coarser hypercubes (Eq. 5.6) can only merge cells; Table 7.1's setting is the {} row; unknown keys refused."""
    from dpkernels.experiments.park2022 import setting_effect

    df = setting_effect("three_moons", [{}, {"r_max": 0.5}, {"r_max": None}], [0])
    cells = df.set_index("setting").n_cells
    assert cells["r_max = 0.5"] <= cells["r_max = None"]
    assert df.set_index("setting").loc["Table 7.1", "lr"] == 0.001
    with pytest.raises(ValueError, match="overrides"):
        setting_effect("three_moons", [{"gamma": 1.0}], [0])


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
        fit_one_vs_all(X, y, box=0.05, gamma=5.0, random_state=0)
