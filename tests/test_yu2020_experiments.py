"""Yu et al. (2020)'s protocol (:mod:`dpkernels.experiments.yu2020`): Iyengar et al.'s preparation, runs that are the
estimators' fits, the selection, the comparison table and hypotheses, and the privacy audits with their controls."""

from __future__ import annotations


import numpy as np
import pandas as pd
import pytest

from dpkernels import DPSGD, NoisyGradientDescent, OutputPerturbedSGD
from dpkernels.experiments import yu2020 as E
from dpkernels.experiments.yu2020 import audits as A
from dpkernels.experiments.yu2020 import hypotheses as H
from dpkernels.experiments.yu2020 import records as R
from dpkernels.experiments.yu2020.readings import PUBLISHED_N_RUNS, PUBLISHED_TABLE_2
from dpkernels.report import Checks, compare_table


@pytest.fixture(scope="module")
def adult() -> E.Split:
    return E.iyengar_adult()


def test_iyengar_adult_preparation(adult):
    """45,220 rows (their reader drops each file's last record), d = 104 (8 categoricals one-hot over the values
    present + 6 numeric columns scaled to max 1), 80/20 in the order their seed's shuffle gives, labels +-1."""
    assert adult.meta["rows"] == 45220 and adult.d == 104 and adult.n_train == 36176
    X = np.vstack([adult.X_train, adult.X_test])
    assert X[:, -6:].max() == 1.0 and X[:, -6:].min() >= 0.0
    np.testing.assert_array_equal(X[:, :-6].sum(axis=1), 8.0)
    assert set(np.unique(adult.y_train)) == {-1.0, 1.0}
    again = E.iyengar_adult()
    np.testing.assert_array_equal(again.X_test, adult.X_test)
    # the shuffle is numpy's legacy stream of seed 10000019: the first test row is the file's row order[36176]
    order = np.random.RandomState(E.SPLIT_SEED).permutation(45220)
    assert order[36176] == np.random.RandomState(10000019).permutation(45220)[36176]
    assert E.delta_for(adult) == 1.0 / 36176**2


def test_runs_are_the_estimators_fits(adult):
    """A run of the protocol with a generator is the estimator's fit with that generator (the same path functions and
    calibrations): DP-GD (rows merged only when it saves a fifth, not on Adult) and DP-SGD on a slice of Adult."""
    small = E.Split("adult-slice", adult.X_train[:3000], adult.y_train[:3000], adult.X_test[:500], adult.y_test[:500])
    for method, est in (("DP-GD", NoisyGradientDescent(epsilon=0.1, delta=E.delta_for(small), n_iter=5, learning_rate=1.0)),
                        ("DP-SGD", DPSGD(epsilon=0.1, delta=E.delta_for(small), n_iter=5, learning_rate=2.0))):
        res = E.run_point(method, small, {"n_iter": 5, "learning_rate": est.learning_rate}, 1, np.random.default_rng(7))
        est.set_params(random_state=np.random.default_rng(7)).fit(small.X_train, small.y_train)
        acc = float(np.mean(np.where(small.X_test @ est.coef_ >= 0, 1.0, -1.0) == small.y_test))
        assert res["accuracy"][0] == acc, method
        assert res["noise_sigma"] == est.noise_sigma_


def test_grid_selection_and_table(adult):
    """best_points picks the largest mean; the table pairs every published number that has a reproduction, with the
    stated minimum effect, and names a candidate only where given."""
    runs = pd.DataFrame({"dataset": "adult", "method": "DP-GD", "calibration": "ours", "n_iter": [50] * 4 + [200] * 4,
                         "learning_rate": 1.0, "run": list(range(4)) * 2,
                         "accuracy": [0.80, 0.81, 0.80, 0.81, 0.82, 0.81, 0.82, 0.81]})
    best = E.best_points(runs)
    assert best.n_iter.iloc[0] == 200 and best["mean"].iloc[0] == pytest.approx(0.815) and best.grid_points.iloc[0] == 2
    table = R.table_2_frame(best, {"adult": (0.845, 9044)}, {("adult", "DP-GD"): "Y3"})
    paired = compare_table(table)
    assert set(paired.method) == {"non-private", "DP-GD"}
    row = paired[paired.method == "DP-GD"].iloc[0]
    assert row.published == 80.9 and row.reproduced == pytest.approx(81.5) and row.candidate == "Y3"
    assert not row["class"].startswith("differs, explained")  # Y3 named, but no hypothesis accepted: nothing explained
    assert "NOT privately" in table[table.source == "reproduced"].note.iloc[-1]


def test_hypothesis_rows_accept_only_a_variant_that_matches():
    best = pd.DataFrame([
        {"dataset": "adult", "method": "DP-GD", "calibration": "ours", "mean": 0.8154, "sd": 0.004, "n_runs": 20},
        {"dataset": "adult", "method": "DP-GD", "calibration": "rdp_replace", "mean": 0.8092, "sd": 0.004, "n_runs": 20},
        {"dataset": "adult", "method": "DP-GD", "calibration": "add_remove", "mean": 0.8190, "sd": 0.004, "n_runs": 20},
    ])
    rows = H.hypothesis_rows(best, PUBLISHED_TABLE_2, PUBLISHED_N_RUNS).set_index("hypothesis")
    assert rows.loc["Y3", "accepted"] and not rows.loc["Y1", "accepted"]


def test_variant_calibrations_order():
    """Add/remove halves DP-GD's sensitivity (half the noise); Renyi accounting at the same relation needs more noise
    than the exact composition; Y3 (Renyi, replace-one) the most."""
    n, d, T = 36176, 104, 200
    ours, _ = E.protocol.dp_gd_calibration(0.1, 1 / n**2, 1.0, n, d, T)
    ar = H.variant_gd_sigma("add_remove", 0.1, 1 / n**2, 1.0, n, d, T)
    rdp = H.variant_gd_sigma("rdp", 0.1, 1 / n**2, 1.0, n, d, T)
    rdp_rep = H.variant_gd_sigma("rdp_replace", 0.1, 1 / n**2, 1.0, n, d, T)
    assert ar == pytest.approx(ours / 2, rel=1e-9)
    assert ar < rdp < ours < rdp_rep and rdp_rep == pytest.approx(2 * rdp)


def test_audits_catch_their_controls():
    """DP-GD and output-SGD (tight pairs): the calibrated mechanism is not refuted and the control with half the noise
    is caught; the pairs' exact epsilon is the claim."""
    gd = A.audit_dp_gd(100_000, random_state=3).set_index("mechanism")
    assert gd.loc["as calibrated", "epsilon_lb"] <= 1.0 < gd.loc["negative control: sigma / 2", "epsilon_lb"]
    assert gd.loc["as calibrated", "epsilon_pair_exact"] == pytest.approx(1.0, rel=1e-3)
    assert gd.linear_regime.all()
    osgd = A.audit_output_sgd(100_000, random_state=3).set_index("mechanism")
    assert osgd.loc["as calibrated", "epsilon_lb"] <= 1.0 < osgd.loc["negative control: sigma / 2", "epsilon_lb"]
    assert osgd.loc["as calibrated", "pair_sensitivity_ratio"] == pytest.approx(1.0, rel=1e-6)


def test_dp_sgd_audit_pair_is_the_accountants():
    sgd = A.audit_dp_sgd(100_000, random_state=3).set_index("mechanism")
    assert sgd.loc["as calibrated", "epsilon_pair_exact"] <= 1.0 + 1e-9
    assert sgd.loc["as calibrated", "epsilon_lb"] <= 1.0 < sgd.loc["negative control: half the noise", "epsilon_lb"]


def test_record_accounting_and_audits():
    checks = Checks("yu2020")
    deltas = R.record_accounting(checks).set_index("relation")["delta"]
    assert deltas["dp-accounting REPLACE_ONE"] == pytest.approx(deltas["exact replace pair (integration)"], rel=1e-2)
    assert deltas["dp-accounting ADD_OR_REMOVE_ONE"] < 0.5 * deltas["exact replace pair (integration)"]
    audits = pd.DataFrame([
        {"estimator": "DP-GD", "mechanism": "as calibrated", "epsilon_claimed": 1.0, "epsilon_lb": 0.5,
         "epsilon_pair_exact": 1.0, "n_releases": 10},
        {"estimator": "DP-GD", "mechanism": "negative control: sigma / 2", "epsilon_claimed": 1.0, "epsilon_lb": 0.9,
         "epsilon_pair_exact": 2.1, "n_releases": 10},
    ])
    R.record_audits(checks, audits)
    frame = checks.frame().set_index("id")
    assert frame.loc["accounting-replace-one", "status"] == "holds"
    assert frame.loc["audit-dp-gd", "status"] == "inconclusive"  # the control was not caught: no power shown


def test_out_sgd_grid_leaves_out_points_that_break_the_step_condition():
    pts = [p for p in E.grid_points("Out-SGD") if E.protocol._valid("Out-SGD", p)]
    assert len(E.grid_points("Out-SGD")) == 27 and len(pts) == 24
    assert all(p["learning_rate"] <= 2.0 / (0.25 * p["data_norm"] ** 2) for p in pts)
    with pytest.raises(ValueError, match="2 / \\(beta"):
        OutputPerturbedSGD(learning_rate=0.1, data_norm=10.0, batch_size=1, classes=[0, 1]).fit(np.eye(3), [0, 1, 0])
