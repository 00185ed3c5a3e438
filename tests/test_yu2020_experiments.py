"""Yu et al. (2020)'s protocol (:mod:`dpkernels.experiments.yu2020`): Iyengar et al.'s preparation, runs that are the
estimators' fits, the selection, the comparison table and hypotheses, and the privacy audits with their controls."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from dpkernels import DPSGD, NoisyGradientDescent, OutputPerturbedSGD
from dpkernels.experiments import yu2020 as E
from dpkernels.experiments.registry import ALPHA_HYPOTHESIS
from dpkernels.experiments.yu2020 import audits as A
from dpkernels.experiments.yu2020 import hypotheses as H
from dpkernels.experiments.yu2020 import records as R
from dpkernels.experiments.yu2020 import registry as R_registry
from dpkernels.experiments.yu2020.readings import PUBLISHED_TABLE_2
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
    assert dict(zip(paired.method, paired.kind)) == {"non-private": "non-private", "DP-GD": "private, eps <= 0.1"}
    row = paired[paired.method == "DP-GD"].iloc[0]
    assert row.published == 80.9 and row.reproduced == pytest.approx(81.5) and row.candidate == "Y3"
    assert not row["class"].startswith("differs, explained")  # Y3 named, but no hypothesis accepted: nothing explained
    assert "NOT privately" in table[table.source == "reproduced"].note.iloc[-1]


def _runs(label: str, accs: dict[tuple[str, str], list[float]], dataset: str = "adult") -> pd.DataFrame:
    rows = []
    for (method, T), a in accs.items():
        rows += [{"dataset": dataset, "method": method, "calibration": label, "n_iter": T, "learning_rate": 1.0,
                  "run": r, "accuracy": v} for r, v in enumerate(a)]
    return pd.DataFrame(rows)


def _spread(center: float, n: int = 20, sd: float = 0.004) -> list[float]:
    z = np.linspace(-1.6, 1.6, n)
    return list(center + sd * z / z.std(ddof=1))


def test_joint_test_accepts_only_a_variant_that_matches_and_differs_from_ours():
    """Y1's variant at the published numbers (Adult DP-GD 80.9, DP-SGD 80.4) and ours 0.8 points above: accepted
    (not rejected, false acceptance tiny); a variant equal to ours: rejected; a 'variant' with ours' numbers but a
    published se at 10 runs (Y11): not rejected here only if close, and never accepted (its false acceptance is ~1)."""
    ours = _runs("ours", {("DP-GD", 200): _spread(0.817), ("DP-GD", 50): _spread(0.80),
                          ("DP-SGD", 200): _spread(0.812), ("DP-SGD", 50): _spread(0.79)})
    good = _runs("Y1", {("DP-GD", 200): _spread(0.809), ("DP-SGD", 200): _spread(0.804)})
    rows = H.hypothesis_rows("Y1", ours, PUBLISHED_TABLE_2, pd.concat([ours, good])).set_index("dataset")
    assert rows.loc["adult", "accepted"] and rows.loc["adult", "false_acceptance"] < 0.2 / 14
    assert rows.loc["adult", "scope"] == "method=DP-GD|DP-SGD"
    same = _runs("Y1", {("DP-GD", 200): _spread(0.817), ("DP-SGD", 200): _spread(0.812)})
    assert not H.hypothesis_rows("Y1", ours, PUBLISHED_TABLE_2, pd.concat([ours, same])).accepted.any()
    # a variant that sits at ours: the joint test cannot tell it from our protocol, whatever the published numbers
    near = _runs("ours", {("DP-GD", 200): _spread(0.8095), ("DP-SGD", 200): _spread(0.8045)})
    res = H.hypothesis_rows("Y11", near, PUBLISHED_TABLE_2)
    assert not res.accepted.any() and (res.false_acceptance > 0.9).all()
    assert H.candidates(rows.reset_index()) == {("adult", "DP-GD"): "Y1", ("adult", "DP-SGD"): "Y1"}


def test_joint_test_false_acceptance_is_the_normal_probability():
    """One number, variant = published: the false acceptance is P(|N(c - v, tau)| <= crit S), c = v + s (o - v) the
    separation less its noise, tau the published mean's spread with our mean's se, checked by simulation."""
    nums = pd.DataFrame([{"published": 80.9, "value": 80.9, "se": 0.08, "se_published": 0.08, "df": 19, "ours": 81.2,
                          "se_ours": 0.08, "sd_ours": 0.36}])
    res = H.joint_test(nums, n_family=1)
    rng = np.random.default_rng(0)
    tau = np.hypot(0.08, 0.36 / np.sqrt(20))
    sim = 80.9 + np.sqrt(0.3**2 - 0.08**2) + tau * rng.standard_normal(400_000)
    crit = res["crit"][0]
    assert res["false_acceptance"] == pytest.approx(np.mean(np.abs(sim - 80.9) <= crit * np.hypot(0.08, 0.08)), abs=3e-3)
    assert res["not_rejected"] and res["bound"] == pytest.approx(0.2)


def _false_acceptance_draws(shift: float, n: int = 2000) -> tuple[np.ndarray, np.ndarray]:
    """Stated and true false acceptance of one number whose variant is published-centred and whose alternative (our
    protocol's law) sits ``shift`` published-size spreads away, both means estimated from 20 runs (sd 0.36)."""
    rng = np.random.default_rng(1)
    sd, se = 0.36, 0.36 / np.sqrt(20)
    crit, S = stats.t.ppf(1 - ALPHA_HYPOTHESIS / 2, 19), np.hypot(se, se)
    stated, true = [], []
    for _ in range(n):
        v, o = 80.9 + se * rng.standard_normal(), 80.9 + shift * se + se * rng.standard_normal()
        number = pd.DataFrame([{"published": 80.9, "value": v, "se": se, "se_published": se, "df": 19, "ours": o,
                                "se_ours": se, "sd_ours": sd}])
        stated.append(H.joint_test(number, n_family=1)["false_acceptance"])
        mu = 80.9 + shift * se
        true.append(stats.norm.cdf((v + crit * S - mu) / se) - stats.norm.cdf((v - crit * S - mu) / se))
    return np.array(stated), np.array(true)


def test_joint_test_false_acceptance_is_not_biased_low_by_our_estimated_mean():
    """The variant is our protocol's law: the test accepts it as often as a published number of that law falls in the
    acceptance interval (0.965 here).  Centred at our estimate the false acceptance came out at 0.86 on average; with
    the separation less its noise, 0.89."""
    stated, true = _false_acceptance_draws(0.0)
    assert true.mean() > 0.95 and stated.mean() > 0.88


def test_joint_test_false_acceptance_is_not_stated_too_low_in_the_tail():
    """Where acceptance is decided (a true false acceptance near the bound), a centre estimated from 20 runs must not
    state a false acceptance <= 0.02 where the truth is above it too often: 4% of the draws with the centre's
    uncertainty in the spread, 11% without it (the separation less its noise alone)."""
    stated, true = _false_acceptance_draws(5.0)
    assert 0.03 < true.mean() < 0.1
    assert np.mean((stated <= 0.02) & (true > 0.02)) < 0.06


def test_registry_and_variants_agree():
    """Every registered hypothesis has a variant and a scope of real methods and data sets; m per family counts them
    all; the variants that need no runs are exactly those that re-read ours (Y8, Y11, Y15)."""
    reg = H.registered()
    assert set(reg) == set(H.VARIANTS)
    for h in reg:
        methods, datasets = H.scope(h)
        assert methods and set(methods) <= set(E.METHODS) and set(datasets) <= {"adult", "kddcup99"}
    assert {h for h in reg if not H.needs_runs(h)} == {"Y8", "Y11", "Y15"}
    assert R_registry.family_size("Y4") == sum(v["family"] == "gradient" for v in reg.values()) == 15
    assert R_registry.family_size("Y14") == sum(v["family"] == "amp" for v in reg.values()) == 5
    assert len(H.split_seeds(H.VARIANTS["Y12"])) == 8 and H.split_seeds(H.VARIANTS["Y12"])[0] == E.SPLIT_SEED + 1


def test_what_each_test_ran_on_is_its_scope_less_untested():
    """A scope is what a statement bears on; `untested` the part its test left out (Y12: another split bears on every
    number, its test ran DP-GD's).  Derived from the committed runs: each hypothesis that reruns the protocol drew
    exactly the methods of its scope less its untested ones (and those of another hypothesis's draws)."""
    root = Path(__file__).resolve().parents[1] / "paper_figures" / "yu2020"
    runs = pd.read_csv(root / "registered_runs.csv")
    reg = H.registered()
    for h in reg:
        untested = set(H._methods(reg[h].get("untested", "")))
        assert set(H._methods(reg[h]["scope"])) == set(H.scope(h)[0]) | untested and not set(H.scope(h)[0]) & untested
        if H.needs_runs(h):
            ran = set(runs.loc[runs.calibration.str.split("@").str[0] == h, "method"])
            assert ran == set(H.drawn_methods(h)), h
    assert set(H._methods(reg["Y12"]["scope"])) == set(E.METHODS) and H.scope("Y12")[0] == ("DP-GD",)
    hyp = pd.read_csv(root / "hypotheses.csv", keep_default_na=False).set_index(["hypothesis", "dataset"])
    assert hyp.loc[("Y12", "adult"), "untested"] == reg["Y12"]["untested"]
    # Y12 was not rejected (p 0.0505) but cannot be accepted (false acceptance 1): REPORT must not call it rejected
    assert hyp.loc[("Y12", "adult"), "outcome"] == "not rejected, too little power"


def test_variant_calibrations_order():
    """Add/remove halves DP-GD's sensitivity (half the noise); Renyi accounting at the same relation needs more noise
    than the exact composition, TensorFlow Privacy's classical conversion more still; the replace-one readings are
    twice their add/remove ones; Iyengar et al.'s 4 C sqrt(T log(1/delta)) / (n eps) is the most."""
    n, d, T = 36176, 104, 200
    delta = 1 / n**2
    ours, _ = E.protocol.dp_gd_calibration(0.1, delta, 1.0, n, d, T)
    s = {c: H.variant_gd_sigma(c, 0.1, delta, 1.0, n, d, T) for c in H.NOISE_CALIBRATIONS}
    assert s["add_remove"] == pytest.approx(ours / 2, rel=1e-9)
    assert s["add_remove"] < s["rdp"] < s["tf_rdp"] < ours < s["rdp_replace"] < s["tf_rdp_replace"] < s["iyengar"]
    assert s["rdp_replace"] == pytest.approx(2 * s["rdp"]) and s["tf_rdp_replace"] == pytest.approx(2 * s["tf_rdp"])
    assert s["iyengar"] == pytest.approx(4 * np.sqrt(T * np.log(n**2)) / (n * 0.1))
    # TF Privacy's accountant at its own noise meets the budget, 1% less noise does not
    z = H.tf_rdp_noise_multiplier(0.1, delta, 0.1, 50)
    assert H.tf_rdp_epsilon(z, delta, 0.1, 50) <= 0.1 < H.tf_rdp_epsilon(0.99 * z, delta, 0.1, 50)


def test_iyengar_amp_constants():
    """Y14: Iyengar et al.'s regulariser is 4x ours (beta = L^2 against L^2 / 4) and their objective noise about 1.15x."""
    n, delta = 36176, 1 / 36176**2
    ours = E.protocol.amp_calibration(0.1, delta, n, 1.0, 0.25, out_fraction=0.01, noise_fraction=0.9)
    theirs = H.iyengar_amp_calibration(0.1, delta, n, 1.0, out_fraction=0.01, noise_fraction=0.9)
    assert theirs.lam == pytest.approx(2 / (n * 0.099 * 0.1)) and theirs.lam / ours.lam == pytest.approx(4.0, rel=0.01)
    assert 1.1 < theirs.sigma_objective / ours.sigma_objective < 1.2 and theirs.gamma == 1 / n**2


def test_variant_splits():
    """Y4 clips every row to norm 1 (train and test); Y13 scales the numeric columns to a maximum of 1 and leaves an
    all-zero column at zero; our protocol's split is returned unchanged."""
    X = np.array([[1.0, 0.0, 3.0, 0.0], [0.0, 1.0, 0.5, 0.0], [1.0, 0.0, 6.0, 0.0]])
    s = E.Split("toy", X[:2], np.array([1.0, -1.0]), X[2:], np.array([1.0]), {"numeric": 2, "rows": 3})
    assert H.variant_split(s, H.VARIANTS["Y1"]) is s
    r = H.variant_split(s, H.VARIANTS["Y4"])
    assert np.all(np.linalg.norm(np.vstack([r.X_train, r.X_test]), axis=1) <= 1 + 1e-12)
    c = H.variant_split(s, H.VARIANTS["Y13"])
    np.testing.assert_allclose(c.X_train[:, 2], [0.5, 0.5 / 6]) and np.testing.assert_allclose(c.X_test[:, 2], [1.0])
    assert np.all(c.X_train[:, 3] == 0) and np.all(c.X_train[:, :2] == X[:2, :2])


def test_run_task_is_reproducible_and_applies_the_variant(adult, monkeypatch):
    """A sweep configuration gives the same runs twice; a hypothesis's label applies its variant to what the runs get
    (Y10: twice the regulariser; Y9: delta of all 45,220 rows; Y7: Iyengar et al.'s noise; Y4: rows of norm <= 1);
    Y8 needs no runs, Y12 runs on its other splits."""
    small = {"DP-GD": {"n_iter": [5], "learning_rate": [1.0, 5.0]}, "DP-SGD": {"n_iter": [5], "learning_rate": [2.0]}}
    cfg = E.protocol_configs(["adult"], ["DP-GD"], small, 2, 7)[0]
    a, b = E.run_task(cfg), E.run_task(cfg)
    assert a == b and len(a["runs"]) == 4 and {r["n_iter"] for r in a["runs"]} == {5}
    y10 = H.hypothesis_configs("Y10", ["adult"], small, 2, 7)
    assert [(c["label"], c["method"]) for c in y10] == [("Y10", "DP-GD"), ("Y10", "DP-SGD")]
    seen = {}
    real = E.protocol.run_grid

    def spy(method, split, n_runs, rng, **kw):
        seen[kw["label"]] = (split, kw)
        return real(method, split, n_runs, rng, **kw)

    monkeypatch.setattr(E.protocol, "run_grid", spy)
    for h in ("Y10", "Y9", "Y7", "Y4"):
        E.run_task(H.hypothesis_configs(h, ["adult"], small, 2, 7)[0])
    E.run_task(cfg)
    assert seen["ours"][1].get("calibration", "ours") == "ours" and seen["ours"][1].get("alpha", E.ALPHA) == E.ALPHA
    assert seen["Y10"][1]["alpha"] == 2 * E.ALPHA
    assert seen["Y9"][1]["delta"] == 1 / 45220**2 and seen["Y10"][1]["delta"] is None
    assert seen["Y7"][1]["calibration"] == "iyengar"
    assert np.linalg.norm(seen["Y4"][0].X_train, axis=1).max() <= 1 + 1e-12
    assert np.linalg.norm(seen["ours"][0].X_train, axis=1).min() > 2
    assert H.hypothesis_configs("Y8", ["adult"], small, 2, 7) == []
    assert [c["split_seed"] for c in H.hypothesis_configs("Y12", ["adult"], small, 2, 7)] == H.split_seeds(H.VARIANTS["Y12"])


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


def test_amp_audit_in_the_plane_shifts_b_by_nearly_the_2r_charged():
    """Issue 29 D12: the flipped label shifted AMP's b by R (|l'(z) + l'(-z)| = 1), half the 2R the calibration
    charges; the mirror-image pair in the plane, both versions misclassified, shifts it by more than 1.3 R, so the
    audit can show a larger share of eps (the lower bound was 0.024 of 1 on the old pair).  The calibrated mechanism
    is not refuted and the control (noises / 8) is caught."""
    amp = A.audit_amp(20_000, random_state=3).set_index("mechanism")
    ok = amp.loc["as calibrated"]
    assert 1.3 < ok.b_shift <= 2.0 and 0.3 < ok.epsilon_pair_linear < 1.0
    assert ok.epsilon_lb <= 1.0 < amp.loc["negative control: both sigmas / 8", "epsilon_lb"]
    X, X2, y = A.amp_plane_pair(200)
    assert np.allclose(np.linalg.norm(X, axis=1), 1.0) and np.array_equal(X[1:], X2[1:])
    assert np.allclose(X[0] * [1, -1], X2[0])  # mirror images: the same loss at w* up to the sign of w*'s second entry


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
    assert "the negative control was not caught" in frame.loc["audit-dp-gd", "detail"]
    caught = Checks("yu2020")
    R.record_audits(caught, audits.assign(epsilon_lb=[0.4, 1.43]))
    row = caught.frame().set_index("id").loc["audit-dp-gd"]
    # a holds whose lower bound is 0.4 of the claim: the claim is exact on the pair, so the note says what the audit
    # could detect (its control), not that the bound is "loose" (the report's ratio note is for bounds, not audits)
    assert row.status == "holds" and "strength: this pair leaks 1.00 of eps" in row.detail
    assert "caught at 1.43 > 1" in row.detail
    from dpkernels.report import _slack
    assert _slack(row.status, row.kind, row.bound, row.measured, row.detail) == ""


def test_out_sgd_grid_leaves_out_points_that_break_the_step_condition():
    pts = [p for p in E.grid_points("Out-SGD") if E.protocol._valid("Out-SGD", p)]
    assert len(E.grid_points("Out-SGD")) == 27 and len(pts) == 24
    assert all(p["learning_rate"] <= 2.0 / (0.25 * p["data_norm"] ** 2) for p in pts)
    with pytest.raises(ValueError, match="2 / \\(beta"):
        OutputPerturbedSGD(learning_rate=0.1, data_norm=10.0, batch_size=1, classes=[0, 1]).fit(np.eye(3), [0, 1, 0])


def test_record_table_2():
    """table-2 is violated while a number differs without an accepted explanation, and holds once the hypothesis that
    names it is accepted for its data set."""
    best = pd.DataFrame([{"dataset": "adult", "method": "DP-GD", "calibration": "ours", "n_iter": 200,
                          "learning_rate": 1.0, "mean": 0.8154, "sd": 0.0037, "n_runs": 20, "grid_points": 9}])
    hyp = pd.DataFrame([{"hypothesis": "Y4", "dataset": "adult", "test": "t", "statistic": 0.5, "accepted": True,
                         "detail": "", "scope": "method=DP-GD|DP-SGD", "power": 1.0, "false_acceptance": 0.0}])
    plain = Checks("yu2020")
    R.record_table_2(plain, R.table_2_frame(best, {}))
    row = plain.frame().set_index("id").loc["table-2"]
    assert row.status == "violated" and "differs, unexplained" in row.detail
    named = Checks("yu2020")
    R.record_table_2(named, R.table_2_frame(best, {}, H.candidates(hyp)), hyp)
    assert named.frame().set_index("id").loc["table-2", "status"] == "holds"


def _table(configs: list[dict]) -> pd.DataFrame:
    """The runs table a configuration list asks for (accuracy 0.5), without running anything."""
    rows = []
    for c in configs:
        cal = "ours" if c["label"] == "ours" else H.VARIANTS[c["label"].partition("@")[0]].noise
        for p in E.grid_points(c["method"], E.protocol.config_grid(c)):
            if E.protocol._valid(c["method"], p, cal):
                rows += [{"dataset": c["dataset"], "method": c["method"], "calibration": c["label"], **p, "run": r,
                          "accuracy": 0.5} for r in range(c["n_runs"])]
    return pd.DataFrame(rows)


def test_variant_runs_are_checked_against_their_configurations():
    """check_runs accepts exactly the configured grid x runs of every hypothesis that needs runs, and refuses a file
    with a run missing, a hypothesis missing, another number of runs or a stray hypothesis."""
    from dpkernels.experiments.yu2020 import variants as V

    small = {"DP-GD": {"n_iter": [5], "learning_rate": [1.0, 5.0]}, "DP-SGD": {"n_iter": [5], "learning_rate": [2.0]},
             "AMP": {"data_norm": [1.0], "noise_fraction": [0.9], "out_fraction": [0.01]}}
    configs = V.variant_configs(["Y8", "Y10", "Y14"], ["adult"], small, 3, 7)
    assert [(c["label"], c["method"]) for c in configs] == [("Y10", "DP-GD"), ("Y10", "DP-SGD"), ("Y14", "AMP")]
    runs = _table(configs)
    V.check_runs(runs, configs)
    for broken in (runs.iloc[1:], runs[runs.calibration != "Y14"], runs[runs.run < 2],
                   pd.concat([runs, runs.assign(calibration="Y1")]), runs.assign(learning_rate=runs.learning_rate * 2)):
        with pytest.raises(ValueError, match="registered_runs.csv"):
            V.check_runs(broken, configs)
    with pytest.raises(ValueError, match=r"missing \[\('Y1', 'adult'"):
        V.check_runs(runs, configs + V.variant_configs(["Y1"], ["adult"], small, 3, 7))


def test_the_command_writes_the_runs_the_notebook_reads(adult, tmp_path):
    """The variants' runs through the sweep (a small grid) pass their own check; the scale profile reads the committed
    file, which is the output of its configurations at the notebook's seed."""
    import re
    from pathlib import Path

    from dpkernels import profiles
    from dpkernels.experiments.yu2020 import variants as V
    from dpkernels.sweep import ResultStore

    small = {"DP-GD": {"n_iter": [5], "learning_rate": [1.0]}, "DP-SGD": {"n_iter": [5], "learning_rate": [2.0]}}
    configs = V.variant_configs(["Y3", "Y8"], ["adult"], small, 2, 7)
    runs = E.run_protocol(configs, n_jobs=1, store=ResultStore(tmp_path))
    V.check_runs(runs, configs)
    assert set(runs.calibration) == {"Y3"} and len(runs) == 2
    nb = (Path(__file__).resolve().parents[1] / "notebooks" / "yu2020.py").read_text()
    assert re.search(rf"^seed = {V.SEED}$", nb, flags=re.M), "the command's default seed must be the notebook's"
    scale = profiles.load("yu2020", "scale")
    assert scale["variants"] == "committed"
    committed = V.load_committed()
    assert committed is not None, "paper_figures/yu2020/registered_runs.csv is missing"
    V.check_runs(committed, V.variant_configs(scale["hypotheses"], scale["datasets"], scale["grids"], scale["n_runs"],
                                              V.SEED))


def test_combined_variants_apply_both_changes(adult, monkeypatch):
    """Y16-Y18 combine Y13's scaled columns with a calibration: Y16 our AMP and output-SGD calibrations, Y17 Iyengar et
    al.'s AMP constants (Y14's), Y18 Iyengar et al.'s gradient noise (Y7's).  Every run gets both changes; on Adult the
    scaling leaves the rows exactly as they are (its numeric columns already have maximum 1), so the combinations
    predict Adult's numbers as Y7 and Y14 alone do."""
    assert H.variant_split(adult, H.VARIANTS["Y13"]) is not adult
    np.testing.assert_array_equal(H.variant_split(adult, H.VARIANTS["Y17"]).X_train, adult.X_train)
    np.testing.assert_array_equal(H.variant_split(adult, H.VARIANTS["Y18"]).X_test, adult.X_test)
    X = np.array([[1.0, 0.0, 30.0], [0.0, 1.0, 5.0], [1.0, 0.0, 60.0]])
    toy = E.Split("kddcup99", X[:2], np.array([1.0, -1.0]), X[2:], np.array([1.0]), {"numeric": 1, "rows": 3})
    seen = {}

    def spy(method, split, n_runs, rng, **kw):
        seen[(kw["label"], method)] = (split, kw)
        return pd.DataFrame(columns=["dataset", "method", "calibration"])

    monkeypatch.setattr(E.protocol, "run_grid", spy)
    monkeypatch.setattr(E.protocol, "_cached_split", lambda name, seed: toy)
    grids = {"DP-GD": {"n_iter": [5], "learning_rate": [1.0]}, "DP-SGD": {"n_iter": [5], "learning_rate": [2.0]},
             "AMP": {"data_norm": [1.0], "noise_fraction": [0.9], "out_fraction": [0.01]},
             "Out-SGD": {"data_norm": [1.0], "learning_rate": [0.1], "n_passes": [5]}}
    for h in ("Y16", "Y17", "Y18"):
        for cfg in H.hypothesis_configs(h, ["kddcup99"], grids, 2, 7):
            E.run_task(cfg)
    assert sorted(seen) == [("Y16", "AMP"), ("Y16", "Out-SGD"), ("Y17", "AMP"), ("Y18", "DP-GD"), ("Y18", "DP-SGD")]
    for (label, method), (split, kw) in seen.items():
        np.testing.assert_allclose(split.X_train[:, -1], [0.5, 5.0 / 60.0])
        want = {"Y16": "ours", "Y17": "iyengar_amp", "Y18": "iyengar"}[label]
        assert kw["calibration"] == want, (label, method)


def test_y19_counts_dp_sgds_t_in_epochs():
    """Y19: DP-SGD alone, on both data sets, at T / q steps (q = 0.1) of the grid's T, with our calibration and our
    data (ours at the same grid otherwise)."""
    grids = {"DP-SGD": {"n_iter": (50, 200, 800), "learning_rate": (0.2, 2.0, 10.0)}}
    cfgs = H.hypothesis_configs("Y19", ["adult", "kddcup99"], grids, 20, 7)
    assert sorted((c["dataset"], c["method"]) for c in cfgs) == [("adult", "DP-SGD"), ("kddcup99", "DP-SGD")]
    assert all(c["grid"]["n_iter"] == [500.0, 2000.0, 8000.0] and c["grid"]["learning_rate"] == [0.2, 2.0, 10.0]
               for c in cfgs)
    v = H.VARIANTS["Y19"]
    assert v.noise == "ours" and not v.column_max and v.row_norm is None and v.alpha_factor == 1.0
    assert grids["DP-SGD"]["n_iter"] == (50, 200, 800)  # the caller's grid is left as it was


def test_only_reruns_the_named_hypotheses_and_keeps_the_rest(adult, tmp_path):
    """merge_runs (the command's --only): the named hypotheses' rows come from the new run (a stale copy in the old
    file is dropped), the others' from the old file; the result is what a complete run writes (order and columns), and
    an old file that lacks another hypothesis's runs fails the check."""
    from dpkernels.experiments.yu2020 import variants as V
    from dpkernels.sweep import ResultStore

    small = {"DP-GD": {"n_iter": [5], "learning_rate": [1.0]}, "DP-SGD": {"n_iter": [5], "learning_rate": [2.0]}}
    configs = V.variant_configs(["Y3", "Y10"], ["adult"], small, 2, 7)
    store = ResultStore(tmp_path)
    full = E.run_protocol(configs, n_jobs=1, store=store)
    new = E.run_protocol([c for c in configs if c["label"] == "Y3"], n_jobs=1, store=store)
    stale = full.assign(accuracy=np.where(full.calibration == "Y3", -1.0, full.accuracy))
    old = pd.concat([stale[stale.calibration == "Y3"], stale[stale.calibration != "Y3"]], ignore_index=True)
    merged = V.merge_runs(old, new, configs, ["Y3"])
    pd.testing.assert_frame_equal(merged, full)
    V.check_runs(merged, configs)
    with pytest.raises(ValueError, match="registered_runs.csv"):
        V.check_runs(V.merge_runs(old[old.calibration == "Y3"], new, configs, ["Y3"]), configs)


def test_two_draws_of_one_configuration_are_pooled():
    """On Adult, Y18's variant is Y7's (Y13's scaling changes nothing there): the two hypotheses' runs are two draws of
    one configuration, and each hypothesis's Adult numbers pool both (40 runs, 39 degrees of freedom), so the choice of
    draw cannot decide its test; on KDDCup99 Y18 has its own configuration and only its own runs."""
    assert H.same_configuration("Y18", "adult") == ["Y18", "Y7"] and H.same_configuration("Y7", "adult") == ["Y7", "Y18"]
    assert H.same_configuration("Y17", "adult") == ["Y17", "Y14"] and H.same_configuration("Y18", "kddcup99") == ["Y18"]
    assert H.same_configuration("Y12", "adult") == ["Y12"] and H.same_configuration("Y8", "adult") == ["Y8"]
    ours = _runs("ours", {("DP-GD", 200): _spread(0.814), ("DP-SGD", 200): _spread(0.814)})
    y7 = _runs("Y7", {("DP-GD", 200): _spread(0.802), ("DP-SGD", 200): _spread(0.803)})
    y18 = pd.concat([_runs("Y18", {("DP-GD", 200): _spread(0.806), ("DP-SGD", 200): _spread(0.805)}),
                     _runs("Y18", {("DP-GD", 200): _spread(0.987), ("DP-SGD", 200): _spread(0.987)}, "kddcup99")])
    nums = H.variant_numbers("Y18", ours, pd.concat([ours, y7, y18])).set_index(["dataset", "method"])
    assert nums.loc[("adult", "DP-GD"), "value"] == pytest.approx(80.4) and nums.loc[("adult", "DP-GD"), "df"] == 39
    sd = 100 * np.std(_spread(0.802) + _spread(0.806), ddof=1)  # the pooled runs' spread
    assert nums.loc[("adult", "DP-GD"), "se"] == pytest.approx(sd / np.sqrt(40))
    assert nums.loc[("adult", "DP-GD"), "se_published"] == pytest.approx(sd / np.sqrt(20))  # Yu et al.'s 20 runs
    assert H.same_configuration("Y13", "kddcup99") == ["Y13", "Y16"]  # one variant, no method in common
    assert "the draws of Y18 and Y7" in nums.loc[("adult", "DP-SGD"), "detail"]
    assert nums.loc[("kddcup99", "DP-GD"), "value"] == pytest.approx(98.7) and nums.loc[("kddcup99", "DP-GD"), "df"] == 19
    assert nums.loc[("kddcup99", "DP-GD"), "detail"] == ""


def test_y20_is_iyengar_et_al_s_gridsearch_for_both_baselines(adult):
    """Y20: output-perturbed SGD with Iyengar et al.'s constants (the classical Gaussian with 2 / delta, Wu et al.'s
    2 k L eta / b, every grid point kept, ours leaving out the three that break the step condition), AMP read from
    Y14's draws (with Y17's on Adult: one configuration), each published number the mean of 10 runs; it draws only
    output-SGD itself."""
    sigma, sens = H.iyengar_psgd_sigma(0.1, 1e-8, 10.0, 0.1, 5, 50)
    assert sens == pytest.approx(2 * 5 * 10.0 * 0.1 / 50)
    assert sigma == pytest.approx(np.sqrt(2 * np.log(2 / 1e-8)) * sens / 0.1)
    n = adult.n_train
    ours_sigma, ours_sens, _ = E.protocol.output_sgd_calibration(0.1, 1 / n**2, n, adult.d, 1.0, 0.25, 0.0, 0.01, 5, 50)
    iy_sigma, iy_sens = H.iyengar_psgd_sigma(0.1, 1 / n**2, 1.0, 0.01, 5, 50)
    assert iy_sens == pytest.approx(ours_sens, rel=1e-4)  # ours adds twice the float64 drift (5e-6 relative here)
    assert 1.25 < iy_sigma / ours_sigma < 1.33
    pts = E.grid_points("Out-SGD")
    assert sum(E.protocol._valid("Out-SGD", p, "iyengar_benchmark") for p in pts) == 27
    assert sum(E.protocol._valid("Out-SGD", p) for p in pts) == 24
    grids = {"AMP": {"data_norm": [1.0], "noise_fraction": [0.9], "out_fraction": [0.01]},
             "Out-SGD": {"data_norm": [10.0], "learning_rate": [0.1], "n_passes": [5]}}
    cfgs = H.hypothesis_configs("Y20", ["adult", "kddcup99"], grids, 2, 7)
    assert sorted((c["dataset"], c["method"]) for c in cfgs) == [("adult", "Out-SGD"), ("kddcup99", "Out-SGD")]
    assert H.needs_runs("Y20") and H.drawn_methods("Y20") == ("Out-SGD",)
    out = E.protocol.run_point("Out-SGD", adult, {"data_norm": 10.0, "learning_rate": 0.1, "n_passes": 1}, 2, 0,
                               calibration="iyengar_benchmark")
    assert out["noise_sigma"] == pytest.approx(H.iyengar_psgd_sigma(0.1, 1 / n**2, 10.0, 0.1, 1, 50)[0])
    with pytest.raises(ValueError, match="2 / \\(beta"):
        E.protocol.run_point("Out-SGD", adult, {"data_norm": 10.0, "learning_rate": 0.1, "n_passes": 1}, 2, 0)
    with pytest.raises(ValueError, match="no calibration 'iyengar'"):
        E.protocol.run_point("Out-SGD", adult, {"data_norm": 1.0, "learning_rate": 0.1, "n_passes": 1}, 2, 0,
                             calibration="iyengar")


def test_y20_reads_amp_from_y14s_draws_and_output_sgd_from_its_own():
    """Y20's AMP numbers pool Y14's and Y17's Adult draws (40 runs) and Y14's KDDCup99 draws (20), its output-SGD
    numbers its own; every published se is the 10-run one; Y14's own numbers do not take Y20's runs."""
    ours = pd.concat([_runs("ours", {("AMP", 1): _spread(0.793), ("Out-SGD", 1): _spread(0.777)}),
                      _runs("ours", {("AMP", 1): _spread(0.980), ("Out-SGD", 1): _spread(0.975)}, "kddcup99")])
    y14 = pd.concat([_runs("Y14", {("AMP", 1): _spread(0.788)}), _runs("Y14", {("AMP", 1): _spread(0.971)}, "kddcup99")])
    y17 = pd.concat([_runs("Y17", {("AMP", 1): _spread(0.790)}), _runs("Y17", {("AMP", 1): _spread(0.984)}, "kddcup99")])
    # stray AMP rows under Y20's label (Y20 draws no AMP): neither Y20 nor Y14 may read them
    y20 = pd.concat([_runs("Y20", {("Out-SGD", 1): _spread(0.770), ("AMP", 1): _spread(0.5)}),
                     _runs("Y20", {("Out-SGD", 1): _spread(0.972), ("AMP", 1): _spread(0.5)}, "kddcup99")])
    nums = H.variant_numbers("Y20", ours, pd.concat([ours, y14, y17, y20])).set_index(["dataset", "method"])
    assert sorted(nums.index) == [("adult", "AMP"), ("adult", "Out-SGD"), ("kddcup99", "AMP"), ("kddcup99", "Out-SGD")]
    assert nums.loc[("adult", "AMP"), "value"] == pytest.approx(78.9) and nums.loc[("adult", "AMP"), "df"] == 39
    assert "the draws of Y14 and Y17" in nums.loc[("adult", "AMP"), "detail"]
    assert nums.loc[("kddcup99", "AMP"), "value"] == pytest.approx(97.1) and nums.loc[("kddcup99", "AMP"), "df"] == 19
    assert nums.loc[("kddcup99", "AMP"), "detail"] == "20 runs: Y14's draws"
    assert nums.loc[("adult", "Out-SGD"), "value"] == pytest.approx(77.0) and nums.loc[("adult", "Out-SGD"), "detail"] == ""
    sd = 100 * np.std(_spread(0.970), ddof=1)
    assert nums.loc[("kddcup99", "Out-SGD"), "se_published"] == pytest.approx(sd / np.sqrt(10))
    y14_nums = H.variant_numbers("Y14", ours, pd.concat([ours, y14, y17, y20])).set_index(["dataset", "method"])
    assert y14_nums.loc[("adult", "AMP"), "df"] == 39 and y14_nums.loc[("kddcup99", "AMP"), "df"] == 19
    assert y14_nums.loc[("kddcup99", "AMP"), "value"] == pytest.approx(97.1)
    assert "Y20" not in H.same_configuration("Y14", "adult") and "Y20" not in H.same_configuration("Y14", "kddcup99")



def test_non_private_numbers_are_compared_with_the_minimum_effect():
    """Table 2's non-private numbers are one liblinear fit each (binomial se over the test rows): with the one-point
    minimum effect Adult's 84.48 against 84.8 (se 0.38) cannot see it (power about 0.35: too noisy, not an agreement,
    and more replicates of a deterministic fit do not exist), KDDCup99's 99.04 against 99.1 (se 0.08) can (agrees)."""
    from dpkernels.report import compare_table

    best = pd.DataFrame(columns=["dataset", "method", "calibration", "mean", "sd", "n_runs"])
    table = R.table_2_frame(best, {"adult": (0.844759, 9044), "kddcup99": (0.990357, 14000)})
    assert (table.loc[table.source == "reproduced", "min_effect"] == R.MIN_EFFECT).all()
    paired = compare_table(table).set_index("dataset")
    assert paired.loc["adult", "class"] == "inconclusive (too noisy)" and 0.3 < paired.loc["adult", "power"] < 0.4
    assert paired.loc["kddcup99", "class"] == "agrees" and paired.loc["kddcup99", "power"] > 0.99


def test_y20s_acceptance_rests_on_the_kdd_amp_number_not_on_the_10_runs():
    """ERRATA Y1's reading of Y20, from the committed runs: accepted with the 10-run published se and with the paper's
    20 runs alike; without KDDCup99's AMP number its three other numbers cannot tell it from our protocol (false
    acceptance near 1), with it the false acceptance is below the bound."""
    from dataclasses import replace
    from pathlib import Path

    root = Path(__file__).resolve().parents[1] / "paper_figures" / "yu2020"
    runs = pd.read_csv(root / "runs.csv")
    runs = runs[runs["accuracy"].notna()].drop(columns=[c for c in ("source", "value", "se", "n_runs") if c in runs])
    variant_runs = pd.read_csv(root / "registered_runs.csv")
    t2 = pd.read_csv(root / "table_2.csv")
    published = {(r.dataset, r.method): float(r.value) for r in t2[t2.source == "published"].itertuples()}
    for n in (10, 20):
        with pytest.MonkeyPatch.context() as mp:
            mp.setitem(H.VARIANTS, "Y20", replace(H.VARIANTS["Y20"], published_runs=n))
            rows = H.hypothesis_rows("Y20", runs, published, variant_runs)
        assert rows["accepted"].all() and (rows["false_acceptance"] < 0.04).all(), (n, rows)
    nums = H.variant_numbers("Y20", runs, variant_runs)
    ours = E.best_points(runs[runs["calibration"] == "ours"]).set_index(["dataset", "method"])
    o = ours.loc[list(zip(nums["dataset"], nums["method"]))]
    nums = nums.assign(published=[published[(r.dataset, r.method)] for r in nums.itertuples()],
                       ours=100 * o["mean"].to_numpy(), sd_ours=100 * o["sd"].to_numpy(),
                       se_ours=100 * (o["sd"] / np.sqrt(o["n_runs"])).to_numpy())
    kdd_amp = (nums["dataset"] == "kddcup99") & (nums["method"] == "AMP")
    assert H.joint_test(nums, 5)["false_acceptance"] < 0.01
    assert H.joint_test(nums[~kdd_amp], 5)["false_acceptance"] > 0.5


def test_gridsearch_s_unmodelled_selection_moves_y20_up():
    """ERRATA Y1 on what Y20 leaves out of gridsearch.py: reporting the best of 10-run means (output-SGD: each point
    run twice, as a regulariser its convex SGD ignores) rather than the best 20-run mean moves each of Y20's four
    numbers up (a bootstrap from the committed runs): towards the published number for both AMP numbers and KDDCup99's
    output-SGD, away from it for Adult's output-SGD (77.4, below the variant)."""
    from pathlib import Path

    runs = pd.read_csv(Path(__file__).resolve().parents[1] / "paper_figures" / "yu2020" / "registered_runs.csv")
    rng = np.random.default_rng(2020)
    grids = {"AMP": ["data_norm", "noise_fraction", "out_fraction"], "Out-SGD": ["data_norm", "learning_rate", "n_passes"]}
    for (ds, method), want in {("adult", "AMP"): 1, ("kddcup99", "AMP"): 1, ("kddcup99", "Out-SGD"): 1,
                               ("adult", "Out-SGD"): -1}.items():
        labels = H.same_configuration("Y14", ds) if method == "AMP" else ["Y20"]
        g = runs[runs.calibration.isin(labels) & (runs.dataset == ds) & (runs.method == method)]
        acc = [a.to_numpy() for _, a in g.groupby(grids[method])["accuracy"]]
        best = max(a.mean() for a in acc)
        reps = 2 if method == "Out-SGD" else 1
        draws = np.stack([rng.choice(a, size=(400, reps, 10)).mean(axis=2).max(axis=1) for a in acc]).max(axis=0)
        published = PUBLISHED_TABLE_2[(ds, method)] / 100
        assert draws.mean() > best + 0.001, (ds, method, best, draws.mean())
        assert np.sign(published - best) * np.sign(draws.mean() - best) == want, (ds, method)
