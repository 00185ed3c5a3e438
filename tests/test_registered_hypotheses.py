"""The registered hypotheses run by the variants commands (issue 28, item 4): the joint mean test behind them, the KDD
variants as readings, the tests computed from the committed runs, the cells an accepted hypothesis explains, and
Park's P18/P19 (each rule with a case where it must hold and one where it must fail)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from dpkernels.datasets import DatasetUnavailable
from dpkernels.experiments import chaudhuri2011 as E
from dpkernels.experiments import park2022 as PE
from dpkernels.experiments.chaudhuri2011 import variants as V
from dpkernels.experiments.park2022 import variants as PV
from dpkernels.experiments.registry import ALPHA_HYPOTHESIS, joint_mean_test
from dpkernels.report import compare_table


# ----------------------------------------------------------------------------------------------
# the joint mean test
# ----------------------------------------------------------------------------------------------
def _replicates(n: int, k: int, mean: float = 0.2, sd: float = 0.01, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    common = rng.standard_normal((n, 1))
    return mean + sd * (0.6 * common + 0.8 * rng.standard_normal((n, k)))


def test_joint_mean_test_accepts_the_mean_of_its_own_law_and_rejects_a_shift():
    M = _replicates(10, 8)
    rng = np.random.default_rng(1)
    # the published vector is the mean of 10 replicates of the same law: not rejected, p roughly uniform
    p = [joint_mean_test(M.mean(axis=0) + 0.01 * rng.standard_normal(8) / np.sqrt(10), M, n_published=10, n_sim=200,
                         random_state=s)["p_value"] for s in range(10)]
    assert np.mean(np.array(p) < ALPHA_HYPOTHESIS) <= 0.2
    # must fail: one cell moved by 6 of the published mean's spreads (0.01 sqrt(1/10 + 1/10))
    shifted = M.mean(axis=0).copy()
    shifted[3] += 6 * 0.01 * np.sqrt(0.2)
    assert joint_mean_test(shifted, M, n_published=10, n_sim=500)["p_value"] < ALPHA_HYPOTHESIS


def test_joint_mean_test_uses_the_published_numbers_replicate_count():
    # a shift of 1.5 replicate sds is nothing for one draw of the law (C5) and far off for a mean of 10 (a fold mean)
    M = _replicates(20, 6, seed=2)
    pub = M.mean(axis=0) + 1.5 * 0.01
    assert joint_mean_test(pub, M, n_published=1, n_sim=500)["p_value"] >= ALPHA_HYPOTHESIS
    assert joint_mean_test(pub, M, n_published=10, n_sim=500)["p_value"] < ALPHA_HYPOTHESIS


def test_joint_mean_test_false_acceptance_is_measured_against_the_alternative():
    M = _replicates(10, 8, seed=3)
    # an alternative with the hypothesis's own law cannot be told apart: it is accepted at about 1 - alpha (the same
    # replicates), and still often when the same law is estimated from other replicates
    same = joint_mean_test(M.mean(axis=0), M, n_published=10, alternative=M, n_sim=400)
    assert 0.85 < same["false_acceptance"] < 0.99
    other = joint_mean_test(M.mean(axis=0), M, n_published=10, alternative=_replicates(10, 8, seed=4), n_sim=400)
    assert other["false_acceptance"] > 0.3
    # an alternative 3 sds away in every cell is never accepted: the test has power against it
    far = joint_mean_test(M.mean(axis=0), M, n_published=10, alternative=_replicates(10, 8, mean=0.23, seed=4), n_sim=400)
    assert far["false_acceptance"] < 0.02


def _stated_and_true(n: int, k: int, c: float, n_pub: int, seeds: int, paired: bool = True) -> tuple[float, float]:
    """Mean stated and mean true false acceptance over ``seeds`` designs: n replicates of k cells (correlation 0.36),
    the alternative shifted by c published-size spreads (noncentrality about 8 c^2) and, paired, ours plus 0.3 of our
    spread of its own, else independent replicates of its law; the truth: published vectors of the alternative's
    law, each tested against that M at the test's cut (the statistic recomputed here)."""
    from sklearn.covariance import ledoit_wolf

    rng0 = np.random.default_rng(12345 + k)
    sd = 0.01 * np.exp(rng0.uniform(-0.7, 0.7, k))
    L = np.linalg.cholesky((0.36 * np.ones((k, k)) + 0.64 * np.eye(k)) * np.outer(sd, sd))
    delta = c * sd * np.sqrt(1 / n + 1 / n_pub) * rng0.choice([-1, 1], k) * np.sqrt(8 / k)
    scale = np.sqrt(1 / n + 1 / n_pub)
    stated, true = [], []
    for s in range(seeds):
        r = np.random.default_rng([s, n, k, 1])
        M = r.standard_normal((n, k)) @ L.T
        A = M + delta + 0.3 * r.standard_normal((n, k)) @ L.T if paired else delta + r.standard_normal((n, k)) @ L.T
        j = joint_mean_test(M.mean(axis=0), M, n_published=n_pub, alternative=A, paired=paired, n_sim=200,
                            random_state=s)
        spread = np.sqrt((1.09 if paired else 1.0) / n_pub)
        P = delta + spread * np.random.default_rng([s, 99]).standard_normal((2000, k)) @ L.T
        mu, sdm = M.mean(axis=0), M.std(axis=0, ddof=1)
        dev = (P - mu) / (sdm * scale)
        T = np.einsum("ij,ij->i", dev, np.linalg.solve(ledoit_wolf((M - mu) / sdm)[0], dev.T).T)
        stated.append(j["false_acceptance"])
        true.append(np.mean(T <= j["critical"]))
    return float(np.mean(stated)), float(np.mean(true))


def test_joint_mean_test_false_acceptance_counts_the_alternatives_estimated_mean_as_noisy():
    # an alternative with the hypothesis's own law: centred at its estimated mean it looked apart by the two estimates'
    # noise, and the rate came out at about 0.5 where the test accepts 0.95 of such vectors.  Documented now: where the
    # truth is large, at most 0.3 below it unpaired (0.82 for 0.95 here), and not below it paired (0.94 for 0.83)
    stated, true = _stated_and_true(10, 8, 0.0, 10, seeds=12, paired=False)
    assert true > 0.9 and stated > true - 0.3
    stated, true = _stated_and_true(5, 49, 0.0, 10, seeds=8)
    assert true > 0.8 and stated > true - 0.05
    # paired rows (the same folds and draws, the variant a small perturbation of ours): the separation's noise is the
    # pairs' difference's, far below two independent means'
    M = _replicates(10, 8, seed=7)
    A = M + 0.01 + 0.002 * np.random.default_rng(8).standard_normal(M.shape)
    paired = joint_mean_test(M.mean(axis=0), M, n_published=10, alternative=A, paired=True, n_sim=50)
    unpaired = joint_mean_test(M.mean(axis=0), M, n_published=10, alternative=A, n_sim=50)
    assert paired["separation"] == unpaired["separation"]
    assert paired["separation_noise"] < 0.1 * unpaired["separation_noise"] and paired["shrink"] > unpaired["shrink"]
    with pytest.raises(ValueError, match="paired"):
        joint_mean_test(M.mean(axis=0), M, n_published=10, alternative=M[:5], paired=True, n_sim=10)
    with pytest.raises(ValueError, match="two replicates"):
        joint_mean_test(M.mean(axis=0), M, n_published=10, alternative=M[:1], n_sim=10)


def test_joint_mean_test_false_acceptance_with_few_replicates_of_many_cells():
    # Chaudhuri's variants: 5 folds of 49 cells, the variant paired with ours.  Averaged over re-drawn replicate sets
    # with the alternative's offset unscaled, their re-estimated spreads stretch it a second time: the rate came out
    # at 0.003 where the test accepts 0.06 of such vectors.  It must be near the truth, not below it
    stated, true = _stated_and_true(5, 49, 3.0, 5, seeds=8)
    assert 0.02 < true < 0.2
    assert true <= stated < true + 0.15


def test_joint_mean_test_false_acceptance_at_parks_design_is_near_the_truth():
    # Park's P18 / P19: 20 splits, paired; where acceptance would be decided (a truth of a few per cent) the stated
    # rate must be within 0.03 of it on average, both ways
    stated, true = _stated_and_true(20, 24, 2.0, 5, seeds=8)
    assert 0.005 < true < 0.1
    assert abs(stated - true) < 0.03


def test_c5_is_the_joint_mean_test_with_one_published_set():
    M = _replicates(24, 10, seed=5)
    pub = M.mean(axis=0) + 0.01
    a = E.shared_draws_joint_test(pub, M, n_sim=200, random_state=7)
    b = joint_mean_test(pub, M, n_published=1, n_sim=200, random_state=7)
    assert a == b


# ----------------------------------------------------------------------------------------------
# the KDD variants as readings
# ----------------------------------------------------------------------------------------------
def test_variant_readings_are_named_and_validated():
    for v in E.VARIANTS:
        r = E.KDDReading("attack", "full file", "max", v)
        assert E.reading_from_label(r.label) == r and r.label.endswith(v)
    assert E.KDDReading("attack", "full file", "max").label == "attack, full file, max"  # the readings keep their names
    with pytest.raises(ValueError):
        E.KDDReading("attack", "full file", "max", "K-unknown")


def test_kdd_variants_change_only_their_step():
    base = E.KDDReading("attack", "full file", "max")
    try:
        d0 = E.kdd_data(base, rows=20000, random_state=1)
    except DatasetUnavailable:
        pytest.skip("KDDCup99 file unavailable")
    var = {v: E.kdd_data(E.KDDReading("attack", "full file", "max", v), rows=20000, random_state=1) for v in E.VARIANTS}
    # K-119: zero columns appended, the rest bit for bit ours
    assert var["K-119"].X.shape[1] == 119 and np.array_equal(var["K-119"].X[:, :d0.X.shape[1]], d0.X)
    assert not np.any(var["K-119"].X[:, d0.X.shape[1]:])
    # the feature variants keep the rows and labels; the sampling variants change the rows
    for v in ("K-scale-file", "K-minmax", "K-log-bytes"):
        assert np.array_equal(var[v].y, d0.y) and var[v].X.shape == d0.X.shape and not np.array_equal(var[v].X, d0.X)
    i = d0.feature_names.index("src_bytes")
    assert var["K-scale-file"].X[:, i].max() < d0.X[:, i].max()  # divided by the full file's maximum
    assert var["K-replace"].meta["labels"] == d0.meta["labels"] and not np.array_equal(var["K-replace"].X, d0.X)
    share = E.KDD_FULL_DISTINCT["normal"] / sum(E.KDD_FULL_DISTINCT.values())
    assert np.mean(var["K-dedup"].y == 1) == pytest.approx(share, abs=1e-4)  # normal rows in the distinct proportion
    impl = var["K-implementations"]
    assert impl.X.shape[1] == 38 and np.abs(impl.X).sum(axis=1).max() <= 1 + 1e-12
    for v, d in var.items():
        assert np.linalg.norm(d.X, axis=1).max() <= 1 + 1e-12, v


# ----------------------------------------------------------------------------------------------
# the tests computed from the committed runs
# ----------------------------------------------------------------------------------------------
def _runs(variant_shift: float, ours_shift: float, folds: int = 5, seed: int = 0) -> pd.DataFrame:
    """Synthetic registered runs: published = the cells' true means; the variant's folds centred ``variant_shift``
    away from them, ours ``ours_shift`` away."""
    cells = V.published_cells("kddcup99").head(12)
    rng = np.random.default_rng(seed)
    rows = []
    for arm, hyp, shift in (("ours", "ours", ours_shift), ("variant", "K-log-bytes", variant_shift)):
        common = rng.standard_normal(folds)
        for j, c in enumerate(cells.itertuples()):
            for f in range(folds):
                rows.append({"hypothesis": hyp, "arm": arm, "dataset": "kddcup99", "table": c.table, "loss": c.loss,
                             "method": c.method, "log10_Lambda": c.log10_Lambda, "epsilon": c.epsilon, "replicate": f,
                             "error": c.published + shift + 0.002 * (0.5 * common[f] + rng.standard_normal()),
                             "published": c.published})
    return pd.DataFrame(rows, columns=V.RUN_COLUMNS)


def test_a_variant_is_accepted_only_when_it_fits_and_ours_would_not():
    ok = V.variant_hypotheses(_runs(0.0, 0.01), n_sim=400)
    assert len(ok) == 1 and ok[0]["hypothesis"] == "K-log-bytes" and ok[0]["accepted"]
    assert ok[0]["false_acceptance"] <= 0.2 / E.family_size("K-log-bytes")
    # must fail: the variant is off by what ours is off by (not rejected would be luck; it is rejected)
    bad = V.variant_hypotheses(_runs(0.01, 0.01), n_sim=400)
    assert not bad[0]["accepted"] and bad[0]["statistic"] < ALPHA_HYPOTHESIS
    # must fail: the variant fits, but so would ours: no power, not an explanation
    weak = V.variant_hypotheses(_runs(0.0, 0.0), n_sim=400)
    assert not weak[0]["accepted"] and weak[0]["false_acceptance"] > 0.2


def test_accepted_hypotheses_name_the_cells_their_test_covered():
    ex = E.explanations(pd.DataFrame([{"hypothesis": "K-dedup", "dataset": "kddcup99", "accepted": True},
                                      {"hypothesis": "C13", "dataset": "adult", "accepted": True},
                                      {"hypothesis": "K-log-bytes", "dataset": "kddcup99", "accepted": False}]))
    t2 = E.table_frame("kddcup99", None, ex)
    named = t2[t2.errata == "K-dedup"]
    assert set(named.method) == {"output", "objective"} and len(named) == 29  # C8's three 0.2084 cells are not covered
    assert t2[(t2.loss == "logistic") & (t2.method == "objective") & (t2.log10_Lambda <= -5)].errata.isna().all()
    f2 = E.figure_2_3_frame("adult", None, ex)
    assert set(f2[f2.errata == "C13"][["loss", "method"]].itertuples(index=False)) == {("huber", "objective")}
    assert (E.figure_2_3_frame("kddcup99", None, ex).errata == "K-dedup").sum() == 24


def test_a_candidate_list_explains_with_the_first_accepted_id():
    frame = pd.DataFrame([
        {"dataset": "shuttle 10%", "method": "SVM SEMI", "epsilon": "0.1", "source": "published", "value": 0.5,
         "n_runs": 5, "errata": "P18|P19"},
        {"dataset": "shuttle 10%", "method": "SVM SEMI", "epsilon": "0.1", "source": "reproduced", "value": 0.3,
         "se": 0.001, "sd": 0.003, "n_runs": 10}])
    hyp = pd.DataFrame([{"hypothesis": "P18", "dataset": "shuttle 10%", "test": "", "statistic": "", "accepted": "False",
                         "detail": ""},
                        {"hypothesis": "P19", "dataset": "shuttle 10%", "test": "", "statistic": "", "accepted": "True",
                         "detail": ""}])
    assert compare_table(frame, hyp)["class"].iloc[0] == "consistent with P19"
    assert compare_table(frame, hyp.assign(accepted="False"))["class"].iloc[0] == "differs, unexplained"


def test_a_hypothesis_explains_no_number_whose_fit_was_known_when_it_was_registered():
    """``known`` (hypotheses.csv): the numbers whose fit under the hypothesis was known at registration.  An accepted
    hypothesis explains the others, never those (Y20 was registered knowing its fit to both AMP numbers)."""
    from dpkernels.report import _hypotheses_bearing

    frame = pd.DataFrame([
        {"dataset": "kddcup99", "method": m, "epsilon": "0.1", "source": src, "value": v, "n_runs": 20,
         **({"se": 0.01, "sd": 0.045, "errata": "Y20"} if src == "reproduced" else {})}
        for m in ("AMP", "Out-SGD") for src, v in (("published", 97.5), ("reproduced", 98.0))])
    hyp = pd.DataFrame([{"hypothesis": "Y20", "dataset": "kddcup99", "test": "t", "statistic": "1", "accepted": "True",
                         "outcome": "accepted", "detail": "", "scope": "method=AMP|Out-SGD", "known": "method=AMP"}])
    cls = compare_table(frame, hyp, min_effect=1.0).set_index("method")["class"]
    assert cls["AMP"] == "differs, unexplained" and cls["Out-SGD"] == "consistent with Y20"
    assert (compare_table(frame, hyp.assign(known=""), min_effect=1.0)["class"] == "consistent with Y20").all()
    said = _hypotheses_bearing(hyp, "kddcup99", "table_2", {"method": "AMP", "dataset": "kddcup99"})
    assert "known when it was registered" in said
    assert "known" not in _hypotheses_bearing(hyp, "kddcup99", "table_2", {"method": "Out-SGD", "dataset": "kddcup99"})


def test_yu_y20_is_known_to_fit_the_amp_numbers():
    """Y20's registration worked its AMP half out from Y14's numbers (registry.yaml): its committed rows say so, and
    Table 2's AMP numbers are not counted as explained by it."""
    from dpkernels.experiments.yu2020.hypotheses import registered
    from dpkernels.report import REPO_ROOT, read_hypotheses

    assert registered()["Y20"]["known"] == "method=AMP"
    hyp = read_hypotheses(REPO_ROOT / "paper_figures" / "yu2020" / "hypotheses.csv")
    assert (hyp[hyp.hypothesis == "Y20"]["known"] == "method=AMP").all()
    t2 = pd.read_csv(REPO_ROOT / "paper_figures" / "yu2020" / "table_2.csv", keep_default_na=False, na_values=[""])
    cls = compare_table(t2, hyp, table="table_2")
    assert not cls[cls.method == "AMP"]["class"].str.contains("Y20").any()


def test_grid_per_loss_is_void_when_each_loss_keeps_the_one_grid():
    ranking = pd.DataFrame({"rank": [1, 2], "grid": [-3.5, -3.0], "logistic_z": [0.5, 2.0], "huber_z": [-0.1, 3.0],
                            "sum_z2": [0.26, 13.0]})
    r = E.grid_per_loss_hypothesis(pd.DataFrame(), ranking)
    assert not r["accepted"] and r["detail"].startswith("void")
    assert r["outcome"] == "void"  # a void test says nothing of the hypothesis: not "rejected", nor "not tested"


# ----------------------------------------------------------------------------------------------
# Park: P18 and P19
# ----------------------------------------------------------------------------------------------
def _res73(semi_shift: float, variant_shift: float, runs: int = 10, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    rows = []
    for frac in (0.1, 0.3):
        for eps_i, eps in enumerate((0.01, 0.1, 1.0, 5.0)):
            pub = PE.PUBLISHED_TABLE_7_3[(frac, "SVM SEMI")][eps_i]
            for r in range(runs):
                for method, shift in (("SVM SEMI", semi_shift), (PE.SEMI_P18, variant_shift)):
                    rows.append({"sampling": frac, "method": method, "accounting": "per-component", "epsilon": eps,
                                 "run": r, "accuracy": pub + shift + 0.02 * rng.standard_normal()})
    return pd.DataFrame(rows)


def test_p18_is_one_joint_test_written_per_sampling():
    rows = PE.records._p18(_res73(-0.2, 0.0), n_sim=400)
    assert [r["dataset"] for r in rows] == ["shuttle 10%", "shuttle 30%"] and all(r["accepted"] for r in rows)
    rows = PE.records._p18(_res73(-0.2, -0.2), n_sim=400)  # must fail: the variant misses as ours does
    assert not any(r["accepted"] for r in rows)
    assert PE.records._p18(_res73(0.0, 0.0).query("method == 'SVM SEMI'")) == []  # no variant run: no row


def test_p19_chooses_each_baselines_setting_on_its_own_numbers():
    # a screen whose accuracy rises with C/n and gamma: each baseline takes the setting closest to its own two
    # published non-private numbers (0.912 / 0.948 WEIGHT, 0.930 / 0.947 SEMI, 0.926 / 0.946 OUTPUT)
    screen = pd.DataFrame([{"sampling": frac, "run": 0, "C/n": c, "gamma": g, "accuracy": 0.9 + 0.08 * c + 0.004 * g}
                           for c, g in PV.P19_GRID for frac in (0.1, 0.3)])
    mean = screen.groupby(["C/n", "gamma", "sampling"]).accuracy.mean()
    choice = PV.p19_choose(screen)
    for m, (c, g) in choice.items():
        target = {f: PE.PUBLISHED_TABLE_7_3[(f, m)][-1] for f in (0.1, 0.3)}
        dist = {s: max(abs(mean[(*s, f)] - v) for f, v in target.items()) for s in PV.P19_GRID}
        assert dist[(c, g)] == pytest.approx(min(dist.values()))
    # each baseline is judged on its own numbers: a table where WEIGHT alone is met at (0.5, 1) moves WEIGHT only
    met = screen.assign(accuracy=[PE.PUBLISHED_TABLE_7_3[(f, "SVM WEIGHT")][-1] if (c, g) == (0.5, 1.0) else a
                                  for f, c, g, a in zip(screen.sampling, screen["C/n"], screen.gamma, screen.accuracy)])
    assert PV.p19_choose(met)["SVM WEIGHT"] == (0.5, 1.0) and PV.p19_choose(met)["SVM SEMI"] == choice["SVM SEMI"]


def test_p19_runs_on_the_full_profiles_table_7_3_splits():
    """P19's registered scale is the full profile's Table 7.3 design (its splits and samplings), and the committed runs
    are that scale's: every (arm, method, sampling, epsilon) has runs 0 .. t73_runs - 1 (issue 28 item 1: the splits
    went from 10 to 20 when one number was too noisy at 10)."""
    from dpkernels import profiles

    full = profiles.load("park2022", "full")
    assert PV.REGISTERED.runs == full["t73_runs"] and list(PV.REGISTERED.fractions) == list(full["t73_fractions"])
    runs = PV.load_committed("registered_runs.csv")
    assert runs is not None, "paper_figures/park2022/registered_runs.csv is missing"
    per_cell = runs.groupby(["arm", "method", "sampling", "epsilon"]).run.agg(["nunique", "min", "max"])
    assert (per_cell["nunique"] == full["t73_runs"]).all() and (per_cell["min"] == 0).all()
    assert (per_cell["max"] == full["t73_runs"] - 1).all()


def test_p19_is_void_when_every_baseline_keeps_table_7_1s_setting():
    """P19 is void when each baseline's own setting is Table 7.1's: the variant is our shared fit with other noise
    draws, so its test compares ours with ours; its outcome is ``void`` (it was "rejected", and REPORT printed
    "P19 rejected" beside eight unexplained numbers; then "not tested", as if no one had tried it).  A variant with settings of its own is tested as registered."""
    runs = PV.load_committed("registered_runs.csv")
    assert runs is not None
    rows = PV.p19_hypothesis(runs, n_sim=50)
    assert rows and all("void" in r["detail"] for r in rows)
    assert all(r["outcome"] == "void" and not r["accepted"] for r in rows)
    own = runs.assign(setting=np.where(runs.arm == "variant", "C/n = 0.1, gamma = 1", runs.setting))
    assert all(r["outcome"] not in ("not tested", "void") and "void" not in r["detail"] for r in PV.p19_hypothesis(own, n_sim=50))


# ----------------------------------------------------------------------------------------------
# Adult's published numbers through repetitions of the protocol
# ----------------------------------------------------------------------------------------------
def _cells() -> list[tuple[str, str, float, float, float]]:
    """(loss, method, log10_Lambda, epsilon, published) of Table 1 (private at eps 0.1) and of Figure 2's curves at
    their bold Lambda (the flat non-private line is a Table 1 cell)."""
    cells = {}
    for (loss, method), vals in E.PUBLISHED_TABLES["adult"].items():
        for e, v in zip(E.LAMBDA_EXPONENTS["adult"], vals):
            cells[(loss, method, float(e), np.nan if method == "non-private" else 0.1)] = v
    for (loss, method), pts in E.PUBLISHED_FIGURES_2_3["adult"].items():
        if method != "non-private":
            for eps, v in pts.items():
                cells.setdefault((loss, method, float(E.CHOSEN_LAMBDA["adult"][(loss, method)]), eps), v)
    return [(*k, v) for k, v in cells.items()]


def _cv(spread: float, repeats: int = 20, seed: int = 0) -> pd.DataFrame:
    """Repetitions of the protocol whose repetition means spread by ``spread`` around the published numbers (each
    fold's mean error the repetition's mean plus a fold effect that sums to zero over the folds)."""
    rng = np.random.default_rng(seed)
    rows = []
    for loss, method, e, eps, v in _cells():
        for r in range(repeats):
            fold = rng.normal(0, 0.006, 10)
            mean = v + spread * rng.standard_normal()
            rows += [{"dataset": "adult", "loss": loss, "method": method, "log10_Lambda": e, "epsilon": eps,
                      "repeat": r, "fold": k, "error": mean + fold[k] - fold.mean(), "n_runs": 50} for k in range(10)]
    return pd.DataFrame(rows)


def _protocol_run() -> pd.DataFrame:
    """One run of the protocol (every cell of :func:`_cells` at error 0.23, 10 folds)."""
    return pd.DataFrame([{"loss": loss, "method": method, "log10_Lambda": e, "epsilon": eps, "fold": k, "run": 0,
                          "error": 0.23} for loss, method, e, eps, _ in _cells() for k in range(10)])


def test_repeated_protocol_compares_every_published_number_through_the_repetitions_spread():
    runs, cv = _protocol_run(), _cv(0.0002)
    for frame_of, n in ((E.table_frame, 48), (E.figure_2_3_frame, 34)):
        frame = E.with_repeated_cv(frame_of("adult", runs), cv, "adult")
        assert (frame[frame.source == "published"].n_runs == 1).all()
        assert (frame[frame.source == "reproduced"].n_runs == 20).all()
        cmp = compare_table(frame)
        assert len(cmp) == n and (cmp.power > 0.99).all()  # se ~ 0.0002: the minimum effect 0.01 is always seen
        assert (cmp["class"] == "agrees").mean() > 0.8  # the published numbers are the repetitions' own mean here
        # must fail: the same repetitions 0.003 off (15 of their spreads) differ; one run's 10 folds could not see it
        off = E.with_repeated_cv(frame_of("adult", runs), cv.assign(error=lambda d: d.error + 0.003), "adult")
        assert (compare_table(off)["class"] == "differs, unexplained").all()
        assert E.with_repeated_cv(frame_of("adult", runs), None, "adult").equals(frame_of("adult", runs))


def test_repeated_protocol_summary_is_the_spread_of_repetition_means():
    cv = _cv(0.004, repeats=30, seed=1)
    s = E.repeated_cv_summary(cv)
    assert len(s) == len(_cells()) and (s.n_runs == 30).all()
    assert s.sd.median() == pytest.approx(0.004, rel=0.2)  # not the folds' spread (0.006 / sqrt(10) per fold mean)
    assert np.allclose(s.se, s.sd / np.sqrt(30))  # the se of the mean over repetitions
    assert s[s.method == "non-private"].epsilon.isna().all() and (s[s.method != "non-private"].epsilon > 0).all()


def test_committed_repetitions_are_the_registered_protocol():
    """The committed ``adult_repeated_cv.csv`` is the command's output at the registered scale: every cell of Table 1
    and Figure 2 (the full profile's epsilons), 10 folds per repetition, the paper's noise runs per fold."""
    from dpkernels.report import REPO_ROOT

    cv = pd.read_csv(REPO_ROOT / "paper_figures" / "chaudhuri2011" / "adult_repeated_cv.csv")
    assert cv.repeat.nunique() == V.REGISTERED.cv_repeats and (cv.groupby("repeat").fold.nunique() == 10).all()
    private = cv.method != "non-private"
    assert set(cv[private].n_runs) == {V.REGISTERED.cv_runs} and set(cv[~private].n_runs) == {1}
    cells = {(loss, m, float(e), round(float(x), 6) if x == x else -1.0) for loss, m, e, x, _ in _cells()}
    have = {(r.loss, r.method, float(r.log10_Lambda), round(float(r.epsilon), 6) if r.epsilon == r.epsilon else -1.0)
            for r in cv.drop_duplicates(["loss", "method", "log10_Lambda", "epsilon"]).itertuples()}
    assert cells <= have


def test_committed_kdd_repetitions_are_the_registered_protocol():
    """The committed ``kdd_repeated_cv.csv`` is the command's ``kdd-cv`` output at the registered scale: every cell of
    Table 2 and Figure 3 (the full profile's epsilons), 10 folds per repetition, the paper's noise runs per fold; and
    the repetitions' samples differ (their non-private fold errors are not one repetition's)."""
    from dpkernels.report import REPO_ROOT

    cv = pd.read_csv(REPO_ROOT / "paper_figures" / "chaudhuri2011" / "kdd_repeated_cv.csv")
    assert set(cv.dataset) == {"kddcup99"}
    assert cv.repeat.nunique() == V.REGISTERED.cv_repeats and (cv.groupby("repeat").fold.nunique() == 10).all()
    private = cv.method != "non-private"
    assert set(cv[private].n_runs) == {V.REGISTERED.cv_runs} and set(cv[~private].n_runs) == {1}
    need = {(loss, m, float(e), round(float(x), 6) if x == x else -1.0)
            for (loss, m), vals in E.PUBLISHED_TABLES["kddcup99"].items() for e in E.LAMBDA_EXPONENTS["kddcup99"]
            for x in ([np.nan] if m == "non-private" else [0.1])}
    need |= {(loss, m, float(E.CHOSEN_LAMBDA["kddcup99"][(loss, m)]), round(float(x), 6))
             for (loss, m) in E.CHOSEN_LAMBDA["kddcup99"] if m != "non-private" for x in V.FIGURE_EPSILONS}
    have = {(r.loss, r.method, float(r.log10_Lambda), round(float(r.epsilon), 6) if r.epsilon == r.epsilon else -1.0)
            for r in cv.drop_duplicates(["loss", "method", "log10_Lambda", "epsilon"]).itertuples()}
    assert need <= have
    npr = cv[~private].pivot_table(index=["loss", "log10_Lambda", "fold"], columns="repeat", values="error")
    assert npr.T.drop_duplicates().shape[0] == V.REGISTERED.cv_repeats  # a new sample and split per repetition


def test_repeated_cv_draws_each_repetitions_data_at_its_own_seed(monkeypatch):
    """KDDCup99's repetitions (``data`` a function of the seed): repetition r's rows are drawn at the seed its split
    uses (:func:`variants._cv_split_seed`), repetition 0 at the notebook's; Adult's (a data set) split the same rows."""
    drawn, used = [], []

    def fake_protocol(data, req, n_runs, random_state, n_jobs, progress):
        used.append((data, random_state))
        return pd.DataFrame([{"loss": "logistic", "method": "objective", "log10_Lambda": -2.0, "epsilon": 0.1,
                              "fold": 0, "error": 0.1}])

    def draw(s):
        drawn.append(s)
        return f"sample {s}"

    monkeypatch.setattr(V, "run_protocol", fake_protocol)
    out = V.repeated_cv(draw, "kddcup99", 4, 2011, 3)
    seeds = [V._cv_split_seed(2011, r) for r in range(4)]
    assert drawn == seeds and seeds[0] == 2011 and len(set(seeds)) == 4
    # must fail: one sample for every repetition, or a sample at another seed than its split's
    assert used == [(f"sample {s}", s) for s in seeds]
    assert list(out.repeat) == [0, 1, 2, 3] and set(out.dataset) == {"kddcup99"}
    used.clear()
    V.repeated_cv("adult rows", "adult", 2, 2011, 3)
    assert used == [("adult rows", s) for s in seeds[:2]]


def test_repetitions_state_what_each_data_set_draws_anew():
    runs, cv = _protocol_run(), _cv(0.0002)
    assert "new split and noise each" in E.repeats_assumption(cv)
    kdd = cv.assign(dataset="kddcup99")
    assert "new 70,000-row sample of the file, split and noise each" in E.repeats_assumption(kdd)
    with pytest.raises(ValueError, match="one data set"):
        E.repeats_assumption(pd.concat([cv, kdd]))
    out = E.with_repeated_cv(E.table_frame("adult", runs), cv, "adult")
    assert out[out.source == "published"].note.str.endswith(E.REPEATS_NOTE["adult"]).all()


def test_kdd_repetitions_carry_their_own_note_and_hint():
    cell = {"loss": "logistic", "method": "objective", "log10_Lambda": -3.0, "epsilon": 0.1}
    cv = pd.DataFrame([{"dataset": "kddcup99", **cell, "repeat": r, "fold": k, "error": 0.013 + 0.001 * r, "n_runs": 50}
                       for r in range(3) for k in range(10)])
    frame = E.table_frame("kddcup99", None)
    out = E.with_repeated_cv(frame, cv, "kddcup99")
    hit = (out.loss == "logistic") & (out.method == "objective") & np.isclose(out.log10_Lambda, -3.0)
    assert out[hit].note.str.endswith(E.REPEATS_NOTE["kddcup99"]).all() and (out[hit].n_runs == 1).all()
    assert not out[~hit].note.astype(str).str.contains("replicate:").any()
    reproduced = pd.DataFrame([{**cell, "dataset": "kddcup99", "source": "reproduced", "value": 0.01, "n_runs": 10},
                               {**cell, "log10_Lambda": -2.5, "dataset": "kddcup99", "source": "reproduced",
                                "value": 0.01, "n_runs": 10}])
    with pytest.raises(ValueError, match="kdd-cv part"):
        E.with_repeated_cv(pd.concat([frame, reproduced], ignore_index=True), cv, "kddcup99")


def test_lc_permutations_and_kdd_samples_run_the_notebooks_design(monkeypatch):
    """``kdd-lc`` runs the profile's learning curves (its rows, sizes and runs) with the registered permutations,
    through the notebook's own :func:`figures_4_5_runs` (non-private baseline first, at the smallest size, one run;
    then the private curves at LC_EPSILONS with no baseline); ``kdd-cv`` draws each repetition's sample at its seed."""
    from dpkernels import profiles
    from dpkernels.experiments.chaudhuri2011 import readings as R

    P = profiles.load("chaudhuri2011", V.REGISTERED.lc_profile)
    seen = {}

    def fake_runs(data, sizes, n_perms, n_runs, losses, *, random_state, n_jobs=1, progress=True):
        seen.update(data=data, sizes=list(sizes), n_perms=n_perms, n_runs=n_runs, seed=random_state)
        return _lc_rows(2)

    monkeypatch.setattr(V, "kdd_data", lambda reading, rows, random_state: ("sample", reading, rows, random_state))
    monkeypatch.setattr(V, "figures_4_5_runs", fake_runs)
    out = V.lc_permutations("chosen", 2011, V.REGISTERED)
    assert seen == {"data": ("sample", "chosen", P["lc_rows"], 2011), "sizes": list(P["lc_sizes"]),
                    "n_perms": V.REGISTERED.lc_more_perms, "n_runs": P["lc_runs"], "seed": 2011}
    assert out.equals(E.permutation_means(_lc_rows(2)))
    assert V.kdd_samples("chosen", 70000)(1234) == ("sample", "chosen", 70000, 1234)

    calls = []

    def fake_curves(data, sizes, grids, losses, epsilons, n_perms, n_runs, **kw):
        calls.append({"epsilons": list(epsilons), "n_runs": n_runs, "n_perms": n_perms, "grids": grids,
                      "nonprivate_sizes": kw.get("nonprivate_sizes"), "seed": kw["random_state"]})
        return pd.DataFrame({"method": ["non-private" if not epsilons else "output"]})

    monkeypatch.setattr(R, "learning_curves", fake_curves)
    lc = R.figures_4_5_runs("data", [60000, 70000], 20, 50, ("logistic",), random_state=7)
    assert list(lc.method) == ["non-private", "output"]
    assert calls == [{"epsilons": [], "n_runs": 1, "n_perms": 20, "grids": E.LC_GRIDS, "nonprivate_sizes": None, "seed": 7},
                     {"epsilons": list(E.LC_EPSILONS), "n_runs": 50, "n_perms": 20, "grids": E.LC_GRIDS,
                      "nonprivate_sizes": (), "seed": 7}]


def test_errata_states_the_kdd_familys_bound():
    from dpkernels.experiments.chaudhuri2011.registry import family_size
    from dpkernels.report import REPO_ROOT

    m = family_size("K-lc-119")
    assert m == family_size("K-scale-file") == 17
    assert f"family's {m} hypotheses" in (REPO_ROOT / "docs" / "ERRATA.md").read_text().replace("\n  ", " ")
    assert f"0.2 / {m} = {0.2 / m:.4g}" in (REPO_ROOT / "docs" / "ERRATA.md").read_text().replace("\n  ", " ")


def test_errata_k_lc_is_what_hypotheses_csv_holds():
    """ERRATA C9 on K-lc-*: the five that differ from ours rejected, the first four's false acceptance 0.5 or more;
    the implementations' preprocessing releases nothing for Huber objective perturbation at eps_p = 0.01; min-max
    scaling void (its numbers are ours: outcome "void") (from the committed files)."""
    from dpkernels.report import REPO_ROOT

    h = pd.read_csv(REPO_ROOT / "paper_figures" / "chaudhuri2011" / "hypotheses.csv").set_index("hypothesis")
    void = h.loc["K-lc-minmax"]
    assert void.outcome == "void" and not bool(void.accepted) and void.detail.startswith("void")
    k = h.loc[[v for v in V.LC_VARIANTS if v != "K-lc-minmax"]]
    assert (~k.accepted.astype(bool)).all() and (k.statistic < ALPHA_HYPOTHESIS).all()
    assert (k.drop("K-lc-implementations").false_acceptance >= 0.5).all()
    assert "releases nothing at huber objective eps 0.01" in k.loc["K-lc-implementations", "detail"]
    assert (k.scope == "table=figure_4_5; method=output|objective").all()


def test_lc_cells_pair_each_permutation_with_the_published_point_of_its_size():
    rows = _lc_rows(3).assign(method=lambda d: d.method.where(d.method == "non-private", d.method))
    cells = V._lc_cells(rows[rows.grid == -4.0])
    assert len(cells) == 3 * 4 and set(cells.table) == {"figure_4_5"} and cells.log10_Lambda.isna().all()
    obj = cells[(cells.method == "objective") & np.isclose(cells.epsilon, 0.05)]
    assert (obj.published == E.PUBLISHED_FIGURES_4_5[("logistic", 0.05, "objective")][0]).all()  # 60,000 rows
    assert sorted(obj.replicate) == [0, 1, 2]
    at_15k = V._lc_cells(rows[rows.grid == -4.0].assign(size=15000))
    assert at_15k.published.isna().all()  # a size the paper did not run: nothing to pair
    # every size of the figures is a cell of its own, paired with the published point of that size (M6: 60,000 rows
    # alone before)
    both = V._lc_cells(pd.concat([rows, rows.assign(size=70000)])[lambda d: d.grid == -4.0])
    assert len(both) == 2 * len(cells) and sorted(set(both["size"])) == [60000.0, 70000.0]
    obj70 = both[(both.method == "objective") & np.isclose(both.epsilon, 0.05) & (both["size"] == 70000)]
    assert (obj70.published == E.PUBLISHED_FIGURES_4_5[("logistic", 0.05, "objective")][1]).all()
    P, M, keys = V._matrix(both.assign(hypothesis="K-lc-119", arm="ours", dataset="kddcup99"))
    assert M.shape == (3, 8) and len(set(keys)) == 8  # one column per (cell, size)


def test_runs_are_tagged_strictly_and_a_missing_error_is_refused():
    """A frame without a size (a table's cells) is tagged with NaN sizes; a frame missing another column raises
    instead of becoming NaN rows; and a run without an error is refused by the tests' matrix, so that a missing value
    can never read as "the variant releases nothing there" (which is a cell without rows)."""
    rows = _lc_rows(3)
    cells = V._lc_cells(rows[rows.grid == -4.0])
    table = cells.drop(columns="size")
    tagged = V._tag(table, "K-119", "ours", "kddcup99")
    assert list(tagged.columns) == V.RUN_COLUMNS and tagged["size"].isna().all()
    with pytest.raises(KeyError):
        V._tag(table.drop(columns="published"), "K-119", "ours", "kddcup99")
    broken = V._tag(cells, "K-lc-119", "ours", "kddcup99")
    broken.loc[broken.index[0], "error"] = np.nan
    with pytest.raises(ValueError, match="missing error"):
        V._matrix(broken)


def test_lc_variant_runs_run_each_variant_beside_ours_at_its_own_grid(monkeypatch):
    drawn = []

    def fake_data(reading, rows, random_state):
        drawn.append((reading.variant, rows, random_state))
        return reading

    def fake_runs(data, sizes, n_perms, n_runs, losses, *, random_state, n_jobs=1, progress=True):
        # the variant's non-private curve is best at grid -3.5 (ours at -4.0): each arm takes its own grid
        assert tuple(sizes) == V.REGISTERED.lc_variant_sizes == (60000, 70000, 80000)  # every size of the figures
        lc = _lc_rows(n_perms, seed=len(drawn))
        best = -3.5 if data.variant else -4.0
        npr = lc.method == "non-private"
        lc.loc[npr, "error"] = np.where(lc.loc[npr, "grid"] == best, 0.0035, 0.02)
        lc.loc[~npr & (lc.grid == best), "error"] += 0.5 if data.variant else 0.25
        return lc

    monkeypatch.setattr(V, "kdd_data", fake_data)
    monkeypatch.setattr(V, "figures_4_5_runs", fake_runs)
    chosen = E.reading_from_label("attack, full file, max")
    runs = V.lc_variant_runs(chosen, 2011, V.REGISTERED, progress=False)
    assert list(dict.fromkeys(runs.hypothesis)) == list(V.LC_VARIANTS)
    assert [d[0] for d in drawn] == ["", *V.LC_VARIANTS.values()]  # ours once, then each variant of the chosen reading
    assert {d[1] for d in drawn} == {V.REGISTERED.lc_rows} and {d[2] for d in drawn} == {2011}
    assert runs[runs.arm == "ours"].error.between(0.25, 0.3).all() and runs[runs.arm == "variant"].error.between(0.5, 0.55).all()
    # the test: the permutations as replicates, the published point a mean of 5 permutations
    rows = V.variant_hypotheses(runs[runs.hypothesis == "K-lc-119"], n_sim=100)
    assert len(rows) == 1 and f"over {V.REGISTERED.lc_perms} permutations" in rows[0]["test"]
    assert rows[0]["accepted"] is False  # published 0.01-0.02, the variant 0.5: rejected


def test_lc_variant_test_takes_the_published_point_as_a_mean_of_five_permutations():
    """Published exactly at the variant's mean plus 2.5 of the variant's per-permutation sd in one cell: a mean of 5
    permutations (the paper's) is not that far off with 20 replicates, a mean of 10 (the folds') would be further."""
    rng = np.random.default_rng(0)
    cells = [("logistic", "output", 0.05), ("logistic", "objective", 0.05), ("huber", "output", 0.01)]
    rows = []
    for arm, shift in (("variant", 0.0), ("ours", 0.01)):
        for r in range(20):
            for loss, method, eps in cells:
                rows.append({"hypothesis": "K-lc-119", "arm": arm, "dataset": "kddcup99", "table": "figure_4_5",
                             "loss": loss, "method": method, "log10_Lambda": np.nan, "epsilon": eps, "replicate": r,
                             "error": 0.02 + shift + 0.002 * rng.standard_normal(), "published": np.nan})
    runs = pd.DataFrame(rows)
    var = runs[runs.arm == "variant"]
    m = var.groupby(["loss", "method"]).error.mean()
    pub = {k: v for k, v in m.items()}
    pub[("logistic", "output")] += 2.5 * 0.002 * np.sqrt(1 / 20 + 1 / 5)
    runs["published"] = [pub[(a, b)] for a, b in zip(runs.loss, runs.method)]
    row = V.variant_hypotheses(runs, n_sim=400)[0]
    P, M, _ = V._matrix(runs[runs.arm == "variant"])
    _, M0, _ = V._matrix(runs[runs.arm == "ours"])
    expect = joint_mean_test(P, M, n_published=5, alternative=M0, n_sim=400, random_state=0)
    assert row["statistic"] == round(expect["p_value"], 4)
    # must fail: the folds' 10 (a tighter published spread) gives another statistic
    other = joint_mean_test(P, M, n_published=10, alternative=M0, n_sim=400, random_state=0)
    assert round(other["p_value"], 4) != row["statistic"] or other["T"] != expect["T"]
    # a cell where the variant releases nothing (Algorithm 2 has no Lambda of its grid in the eps' > 0 regime): the
    # test runs on the cells both arms have, and says which one the variant cannot produce
    lacking = runs[~((runs.arm == "variant") & (runs.loss == "huber"))]
    row = V.variant_hypotheses(lacking, n_sim=400)[0]
    P2, M2, _ = V._matrix(lacking[lacking.arm == "variant"])
    expect2 = joint_mean_test(P2, M2, n_published=5, alternative=M0[:, 1:], n_sim=400, random_state=0)
    assert row["statistic"] == round(expect2["p_value"], 4) and "releases nothing at huber output eps 0.01" in row["detail"]
    with pytest.raises(ValueError, match="cells ours lacks"):
        V.variant_hypotheses(runs[~((runs.arm == "ours") & (runs.loss == "huber"))], n_sim=50)


def test_record_replication_records_the_match_under_the_data_sets_row():
    from dpkernels.report import Checks

    runs = _protocol_run()
    own = (runs.groupby(["loss", "method", "log10_Lambda", "epsilon", "fold"], dropna=False).error
           .agg(error="mean", n_runs="count").reset_index().assign(repeat=0, dataset="kddcup99"))
    checks = Checks("chaudhuri2011")
    rep = E.record_replication(checks, "kddcup99", runs, own, "kdd_repeated_cv.csv")
    row = checks.rows[-1]
    assert rep.cv is own and row["id"] == "kdd-repeats-match" and row["status"] == "holds"
    assert row["claim"] == "Table 2 (repeated protocol)" and "70,000-row sample, split and noise" in row["check"]
    # must fail: another repetition 0 is recorded as violated and leaves the run's folds
    rep = E.record_replication(checks, "kddcup99", runs, own.assign(error=own.error + 1e-9), "kdd_repeated_cv.csv")
    assert rep.cv is None and len(checks.rows) == 1 and checks.rows[-1]["status"] == "violated"
    # no repetitions: no row
    assert E.record_replication(checks, "kddcup99", runs, None, "kdd_repeated_cv.csv") == E.Replication()
    assert len(checks.rows) == 1
    # the repetitions' reading: this run's is compared; another reading's (a smaller profile's rule can choose another)
    # or none recorded is skipped and leaves the run's folds
    named = own.assign(reading="attack, full file, max")
    rep = E.record_replication(checks, "kddcup99", runs, named, "kdd_repeated_cv.csv", reading="attack, full file, max")
    assert rep.cv is named and checks.rows[-1]["status"] == "holds"
    for cv in (named, own):
        rep = E.record_replication(checks, "kddcup99", runs, cv, "kdd_repeated_cv.csv", reading="attack, full file, project")
        assert rep == E.Replication() and checks.rows[-1]["status"] == "skipped" and len(checks.rows) == 1


def _lc_rows(n_perms: int, seed: int = 0) -> pd.DataFrame:
    """Learning-curve rows (as :func:`learning_curves` gives them) of two grids, one size, ``n_perms`` permutations:
    3 noise runs per private point, one non-private run."""
    rng = np.random.default_rng(seed)
    rows = []
    for grid in (-4.0, -3.5):
        for p in range(n_perms):
            rows += [{"size": 60000, "perm": p, "loss": "logistic", "epsilon": np.nan, "method": "non-private",
                      "grid": grid, "run": 0, "error": float(rng.uniform(0.002, 0.004))}]
            rows += [{"size": 60000, "perm": p, "loss": "logistic", "epsilon": eps, "method": m, "grid": grid, "run": r,
                      "error": float(rng.uniform(0.005, 0.05))}
                     for eps in (0.05, 0.01) for m in ("output", "objective") for r in range(3)]
    return pd.DataFrame(rows)


def test_more_permutations_replace_the_runs_only_when_they_begin_with_it():
    from dpkernels.report import Checks

    more = _lc_rows(8)
    run = more[more.perm < 3]
    perms = E.permutation_means(more)
    assert len(perms) == 2 * 8 * 5 and set(perms[perms.method != "non-private"].n_runs) == {3}
    assert E.first_permutations_match(run, perms) == (True, 30, 30)
    # the frame from the permutation means is the frame from the rows (value = mean over runs; spread over permutations)
    a, b = E.learning_curve_frame(more, -4.0), E.learning_curve_frame(perms, -4.0)
    assert np.allclose(a.value, b.value, rtol=0, atol=1e-15) and np.allclose(a.se.fillna(-1), b.se.fillna(-1))
    checks = Checks("chaudhuri2011")
    assert E.record_permutations(checks, run, perms, "kdd_lc_permutations.csv") is perms
    assert checks.rows[-1]["id"] == "kdd-lc-perms-match" and checks.rows[-1]["status"] == "holds"
    rep = E.learning_curve_frame(perms, -4.0)
    assert set(rep[rep.source == "reproduced"].n_runs) == {8}  # the comparison's replicates: 8 permutations
    # must fail: one permutation mean off by 1e-12, another run's noise (another seed), or fewer runs per permutation
    off = perms.assign(error=perms.error + np.where(perms.perm == 1, 1e-12, 0.0))
    assert E.first_permutations_match(run, off)[0] is False
    assert E.record_permutations(checks, run, off, "kdd_lc_permutations.csv") is None
    assert checks.rows[-1]["status"] == "violated" and len(checks.rows) == 1
    assert E.first_permutations_match(run, E.permutation_means(_lc_rows(8, seed=1)))[0] is False
    fewer = E.permutation_means(more[more.run < 2])
    assert E.first_permutations_match(run, fewer)[:2] == (False, 6)  # only the non-private means have as many runs
    assert E.record_permutations(checks, run, None, "kdd_lc_permutations.csv") is None and len(checks.rows) == 1
    # another profile's design (other sizes, or other runs per permutation): not this run's, skipped (neither a
    # violation nor a hold)
    for other in (E.permutation_means(more.assign(size=15000)), fewer):
        assert not E.same_lc_design(run, other)
        assert E.record_permutations(checks, run, other, "kdd_lc_permutations.csv") is None
        assert checks.rows[-1]["status"] == "skipped" and len(checks.rows) == 1
    assert E.same_lc_design(run, perms) and E.same_lc_design(run, off)


def test_committed_lc_permutations_are_the_registered_protocol():
    """The committed ``kdd_lc_permutations.csv`` is the command's ``kdd-lc`` output at the registered scale: the full
    profile's sizes and noise runs, every candidate grid, ``lc_more_perms`` permutations per point."""
    from dpkernels import profiles
    from dpkernels.report import REPO_ROOT

    P = profiles.load("chaudhuri2011", V.REGISTERED.lc_profile)
    perms = pd.read_csv(REPO_ROOT / "paper_figures" / "chaudhuri2011" / "kdd_lc_permutations.csv")
    private = perms.method != "non-private"
    assert set(perms[private]["size"]) == set(P["lc_sizes"]) and set(perms[private].n_runs) == {P["lc_runs"]}
    assert set(perms.grid) == set(E.LC_GRIDS) and set(perms[private].epsilon) == set(E.LC_EPSILONS)
    assert (perms.groupby(["size", "loss", "epsilon", "method", "grid"], dropna=False).perm.nunique()
            == V.REGISTERED.lc_more_perms).all()


def test_errata_c3_objective_pattern_is_what_figure_2_holds():
    """ERRATA C3's reading of the repeated protocol: on Figure 2, ours is above the published objective-perturbation
    curve at every eps_p <= 0.25 on both losses, and both curves agree at 0.5 (from the committed figure_2.csv)."""
    from dpkernels.report import REPO_ROOT

    fig = pd.read_csv(REPO_ROOT / "paper_figures" / "chaudhuri2011" / "figure_2.csv")
    cmp = compare_table(fig)
    obj = cmp[cmp.method == "objective"].assign(epsilon=lambda d: d.epsilon.astype(float))
    small = obj[obj.epsilon <= 0.25]
    assert len(small) == 14 and (small.reproduced > small.published).all()
    assert (obj[obj.epsilon == 0.5]["class"] == "agrees").all() and (obj.epsilon == 0.5).sum() == 2
    # and none of Table 1's and Figure 2's comparisons is "too noisy": each has the power to see the minimum effect, or
    # differs by more than it
    for name in ("table_1", "figure_2"):
        c = compare_table(pd.read_csv(REPO_ROOT / "paper_figures" / "chaudhuri2011" / f"{name}.csv"))
        weak = c[c.power < 0.8]
        assert (c["class"] != "inconclusive (too noisy)").all() and (c.df == 19).all()
        assert ((weak.reproduced - weak.published).abs() > weak.min_effect).all()
        assert (weak["class"] == "differs, unexplained").all()


def test_errata_kdd_replicates_are_what_the_committed_tables_hold():
    """ERRATA C4's and C9's reading of the KDD replicates, from the committed table_2.csv, figure_3.csv and
    figure_4_5.csv: every comparison has 19 degrees of freedom; "too noisy" are exactly Table 2's output perturbation
    at LR Lambda <= 10^-3.5 and Huber <= 10^-2.5, Figure 3's LR output point at 0.05 and Table 2's Huber objective at
    10^-3.5 (and Figures 4-5's LR output point at 0.05, 60,000 rows); on Figures 4-5 every private point of ours is
    above the published one and all the others differ."""
    from dpkernels.report import REPO_ROOT

    hyp = pd.read_csv(REPO_ROOT / "paper_figures" / "chaudhuri2011" / "hypotheses.csv")
    read = {n: compare_table(pd.read_csv(REPO_ROOT / "paper_figures" / "chaudhuri2011" / f"{n}.csv"), hyp)
            for n in ("table_2", "figure_3", "figure_4_5")}
    assert all((c.df == 19).all() for c in read.values())
    t2 = read["table_2"]
    noisy = {(r.loss, r.method, float(r.log10_Lambda)) for r in t2[t2["class"] == "inconclusive (too noisy)"].itertuples()}
    assert noisy == ({("logistic", "output", e) for e in (-9.0, -7.0, -5.0, -3.5)}
                     | {("huber", "output", e) for e in (-9.0, -7.0, -5.0, -3.5, -3.0, -2.5)} | {("huber", "objective", -3.5)})
    f3 = read["figure_3"]
    assert {(r.loss, r.method, float(r.epsilon)) for r in f3[f3["class"] == "inconclusive (too noisy)"].itertuples()} == {
        ("logistic", "output", 0.05)}
    lc = read["figure_4_5"]
    lc_noisy = lc[lc["class"] == "inconclusive (too noisy)"]
    assert [(r.loss, r.method, float(r.epsilon), float(r.size)) for r in lc_noisy.itertuples()] == [
        ("logistic", "output", 0.05, 60000.0)]
    private = lc[lc.method != "non-private"]
    assert len(private) == 24 and (private.reproduced > private.published).all()
    rest = private[~((private.loss == "logistic") & (private.method == "output")
                     & np.isclose(private.epsilon.astype(float), 0.05) & np.isclose(private["size"].astype(float), 60000))]
    assert len(rest) == 23 and (rest["class"] == "differs, unexplained").all()
    # and none of those left "too noisy" would be decided by more replicates of ours (ERRATA C4, C9): the published
    # number's own spread is the limit
    noisy_all = pd.concat([c[c["class"] == "inconclusive (too noisy)"] for c in read.values()])
    assert len(noisy_all) == 13 and (noisy_all.power_limit < 0.8).all()
    t2_lr3 = t2[(t2.loss == "logistic") & (t2.method == "objective") & np.isclose(t2.log10_Lambda.astype(float), -3.0)]
    assert t2_lr3["class"].item() == "differs, unexplained" and abs(t2_lr3.reproduced.item() - 0.0118) < 0.005


def test_repeated_protocol_keeps_the_frame_and_refuses_a_cell_it_lacks():
    runs, cv = _protocol_run(), _cv(0.0002)
    for frame_of in (E.table_frame, E.figure_2_3_frame):
        frame = frame_of("adult", runs)
        out = E.with_repeated_cv(frame, cv, "adult")
        keys = [c for c in frame.columns if c not in ("value", "se", "sd", "n_runs", "note")]
        assert out[keys].astype(str).equals(frame[keys].astype(str))  # same rows, same order
        # must fail: a cell missing from the repetitions is an error, not a row left on the folds' spread
        lacking = cv[~((cv.method == "objective") & np.isclose(cv.epsilon.fillna(-1), 0.1))]
        with pytest.raises(ValueError, match="no cell in the repetitions"):
            E.with_repeated_cv(frame, lacking, "adult")


def test_first_repetition_matches_only_this_run():
    rng = np.random.default_rng(3)
    runs = pd.DataFrame([{"loss": "logistic", "method": m, "log10_Lambda": -2.0, "epsilon": e, "fold": k, "run": r,
                          "error": float(rng.uniform(0.2, 0.3))}
                         for m, e, n in (("non-private", np.nan, 1), ("objective", 0.1, 4)) for k in range(3)
                         for r in range(n)])
    cv = (runs.groupby(["loss", "method", "log10_Lambda", "epsilon", "fold"], dropna=False).error
          .agg(error="mean", n_runs="count").reset_index().assign(repeat=0))
    assert E.first_repetition_matches(runs, cv) == (True, 6, 6)
    # fewer noise runs than the repetitions: only the non-private folds are compared (not all: not this run)
    assert E.first_repetition_matches(runs[runs.run < 2], cv) == (True, 3, 6)
    # must fail: one fold mean off by 1e-12, or another repetition as repetition 0
    off = cv.assign(error=cv.error + np.where(cv.fold == 2, 1e-12, 0.0))
    assert E.first_repetition_matches(runs, off)[0] is False
    assert E.first_repetition_matches(runs, cv.assign(repeat=1))[0] is False


def test_replication_uses_the_repetitions_only_when_this_run_is_their_first():
    runs, cv = _protocol_run(), _cv(0.0002)
    own = (runs.groupby(["loss", "method", "log10_Lambda", "epsilon", "fold"], dropna=False).error
           .agg(error="mean", n_runs="count").reset_index().assign(repeat=0, dataset="adult"))
    first = pd.concat([own, cv[cv.repeat > 0].assign(n_runs=1)], ignore_index=True)
    rep, match = E.Replication.of_run(runs, first)
    assert match == (True, len(own), len(own)) and rep.cv is first and rep.unit == "repetitions"
    assert rep.assumption == E.repeats_assumption(first)
    assert rep.frame(E.table_frame("adult", runs), "adult").equals(E.with_repeated_cv(E.table_frame("adult", runs), first, "adult"))
    # must fail: repetitions whose first is not this run leave the run's own folds
    other, match = E.Replication.of_run(runs, cv)
    assert match[0] is False and other.cv is None and other.unit == "folds" and other.assumption == E.RUNS_ASSUMPTION
    assert other.frame(E.table_frame("adult", runs), "adult").equals(E.table_frame("adult", runs))
    # must fail: identical where compared, but not every fold mean compared (a smaller profile's fewer noise runs)
    partial, match = E.Replication.of_run(runs, first.assign(n_runs=np.where(first.method == "non-private", 1, 50)))
    assert match[0] is True and match[1] < match[2] and partial.cv is None
    assert E.Replication.of_run(runs, None) == (E.Replication(), None)


# ----------------------------------------------------------------------------------------------
# C14 (Algorithms 1-2 calibrated with the data set's n) and C15 (each eps_p's best Lambda)
# ----------------------------------------------------------------------------------------------
def _toy(n: int = 900, seed: int = 3):
    from dpkernels.datasets import Dataset

    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 4))
    X /= np.maximum(1.0, np.linalg.norm(X, axis=1))[:, None]
    y = np.where(X[:, 0] + 0.3 * rng.normal(size=n) > 0, 1, -1)
    return Dataset("toy", X, y, ["a", "b", "c", "d"], ["neg", "pos"], {"binary_pm1": True})


def test_calibration_rows_is_the_n_of_algorithms_1_and_2_and_defaults_to_the_fold(monkeypatch):
    from dpkernels.bounds import chaudhuri as B
    from dpkernels.experiments.chaudhuri2011 import protocol as EP

    seen = []
    batch = EP.objective_batch

    def recording(*args, **kwargs):
        seen.append(kwargs.get("noise_rows"))
        return batch(*args, **kwargs)

    monkeypatch.setattr(EP, "objective_batch", recording)  # n_jobs = 1 runs the folds in this process
    data = _toy()
    req = [E.Request("logistic", "objective", -1.5, 0.5), E.Request("logistic", "output", -1.5, 0.5),
           E.Request("logistic", "non-private", -1.5, None),
           E.Request("logistic", "objective", -10.0, 0.5)]  # Algorithm 2's Delta > 0 branch: Delta follows the n too
    kw = dict(folds_used=2, random_state=7, progress=False)
    base = E.run_protocol(data, req, 4, **kw)
    same = E.run_protocol(data, req, 4, calibration_rows=int(len(data.y) * 9 // 10), **kw)
    # the default is the training fold's size (810 of 900 rows): naming it changes nothing, bit for bit
    assert (base.n_train == 810).all() and np.array_equal(base.error.to_numpy(), same.error.to_numpy())
    assert set(seen) == {810}
    seen.clear()
    big = E.run_protocol(data, req, 4, calibration_rows=90_000, **kw)
    assert set(seen) == {90_000}  # the noise term b'f / n of Algorithm 2 with the n given (objective_batch's test)
    assert (big.calibration_rows == 90_000).all() and "calibration_rows" not in base  # C14's rows say so
    assert set(big[big.method == "objective"].branch) == {"eps' > 0", "Delta > 0"}
    big = big[big.log10_Lambda == -1.5]
    base = base[base.log10_Lambda == -1.5]
    obj = big[big.method == "objective"]
    # eps' follows the n it is given (must fail if the fold's n were still used: eps' 0.5 - 2 log(1 + 0.25/(810 x 0.0316)))
    assert np.allclose(obj.epsilon_prime, B.theorem_9_parameters(0.5, 90_000, 10 ** -1.5, 0.25).epsilon_prime)
    assert not np.allclose(obj.epsilon_prime, base[base.method == "objective"].epsilon_prime)
    # a hundred times the rows: a hundredth of the noise, so the private releases approach the non-private one
    np_err = base[base.method == "non-private"].groupby("fold").error.first()
    for m in ("output", "objective"):
        far = (base[base.method == m].groupby("fold").error.mean() - np_err).abs().sum()
        near = (big[big.method == m].groupby("fold").error.mean() - np_err).abs().sum()
        assert near < far, m


def _c14_runs(adult_shift: float, kdd_shift: float, ours_shift: float, folds: int = 5, seed: int = 0) -> pd.DataFrame:
    """Synthetic C14 runs: Adult's first 12 private cells and KDD's one cell, the variant's folds centred the given
    shift away from the published numbers, ours ``ours_shift`` away."""
    adult = V.published_cells("adult").head(12)
    kdd = V.published_cells("kddcup99")
    kdd = kdd[(kdd.table == "table_2") & (kdd.loss == "huber") & (kdd.method == "objective") & (kdd.log10_Lambda == -3.5)]
    rng = np.random.default_rng(seed)
    rows = []
    for dataset, cells, shift in (("adult", adult, adult_shift), ("kddcup99", kdd, kdd_shift)):
        for arm, s in (("ours", ours_shift), ("variant", shift)):
            common = rng.standard_normal(folds)
            for c in cells.itertuples():
                for f in range(folds):
                    rows.append({"hypothesis": "C14", "arm": arm, "dataset": dataset, "table": c.table, "loss": c.loss,
                                 "method": c.method, "log10_Lambda": c.log10_Lambda, "epsilon": c.epsilon,
                                 "replicate": f, "published": c.published,
                                 "error": c.published + s + 0.002 * (0.5 * common[f] + rng.standard_normal())})
    return pd.DataFrame(rows, columns=V.RUN_COLUMNS)


def test_c14_is_one_decision_for_both_data_sets():
    ok = V.variant_hypotheses(_c14_runs(0.0, 0.0, 0.01), n_sim=400)
    assert [r["dataset"] for r in ok] == ["adult", "kddcup99"] and all(r["accepted"] for r in ok)
    # must fail: the variant fits Adult but not KDDCup99's cell, so it is rejected for Adult too
    half = V.variant_hypotheses(_c14_runs(0.0, 0.02, 0.01), n_sim=400)
    assert not any(r["accepted"] for r in half) and half[1]["statistic"] < ALPHA_HYPOTHESIS / 2
    assert half[0]["statistic"] >= ALPHA_HYPOTHESIS / 2 and "rejected" in half[0]["detail"]


def test_c14_decision_is_bonferroni_over_the_two_tests_with_the_smaller_false_acceptance(monkeypatch):
    """The decision from given test results (the joint mean tests replaced by their outcomes): each test at 0.025, and
    the decision's false acceptance the smaller of the two (both tests must fail to reject)."""
    outcomes, levels = [], []

    def fake(P, M, *, n_published, alternative, paired, n_sim, alpha, random_state):
        levels.append(alpha)
        p, fa = outcomes[len(levels) - 1]
        return {"p_value": p, "false_acceptance": fa, "T": 1.0, "critical": 2.0, "cells": M.shape[1], "sets": M.shape[0]}

    monkeypatch.setattr(V, "joint_mean_test", fake)
    runs = _c14_runs(0.0, 0.0, 0.01)
    # KDD's p between 0.025 and 0.05 is not a rejection at 0.025 (must fail at 0.05); Adult's false acceptance 0.9 is
    # not the decision's (must fail if the larger were taken)
    outcomes[:] = [(0.5, 0.9), (0.03, 0.01)]
    rows = V.variant_hypotheses(runs, n_sim=10)
    assert levels == [0.025, 0.025] and all(r["accepted"] for r in rows)
    assert [r["false_acceptance"] for r in rows] == [0.9, 0.01] and "decision's false acceptance 0.010" in rows[0]["detail"]
    levels.clear()
    outcomes[:] = [(0.5, 0.01), (0.02, 0.01)]
    rows = V.variant_hypotheses(runs, n_sim=10)
    assert not any(r["accepted"] for r in rows) and rows[0]["detail"].startswith("rejected by kddcup99")
    assert rows[1]["scope"] == "table=table_2; loss=huber; method=objective; log10_Lambda=-3.5"


def test_c15_takes_each_points_best_lambda_and_tests_it_against_the_bold_one():
    cells = V.published_cells("adult")
    cells = cells[(cells.table == "figure_2")]
    rng = np.random.default_rng(4)
    rows = []
    for c in cells.itertuples():
        bold = float(E.CHOSEN_LAMBDA["adult"][(c.loss, c.method)])
        best = -1.5 if c.epsilon < 0.1 else -3.0  # each eps_p its own best Lambda (one per curve would not do)
        for e in E.LAMBDA_EXPONENTS["adult"]:
            # the published point is the error at the eps_p's best Lambda; the bold Lambda's is 0.01 higher
            centre = c.published + (0.0 if e == best else 0.01 if e == bold else 0.03)
            for f in range(5):
                rows.append({"hypothesis": "C15", "arm": "grid", "dataset": "adult", "table": "figure_2", "loss": c.loss,
                             "method": c.method, "log10_Lambda": float(e), "epsilon": c.epsilon, "replicate": f,
                             "error": centre + 0.002 * rng.standard_normal(), "published": c.published})
    grid = pd.DataFrame(rows, columns=V.RUN_COLUMNS)
    ours, variant, choice = V.selected_lambda(grid)
    assert len(choice) == len(cells)
    assert (choice.selected == np.where(choice.eps_key < 0.1, -1.5, -3.0)).all()
    assert len(ours) == len(variant) == 5 * len(cells) and (variant.log10_Lambda == ours.log10_Lambda).all()
    assert (variant.error.to_numpy() < ours.error.to_numpy()).mean() > 0.95
    [row] = V.variant_hypotheses(grid, n_sim=400)
    assert row["hypothesis"] == "C15" and row["accepted"] and "moved at 28 of 28 points" in row["detail"]
    # must fail: where the bold Lambda is the best the variant is ours, and a shifted published curve rejects it
    [bad] = V.variant_hypotheses(grid.assign(published=grid.published - 0.02), n_sim=400)
    assert not bad["accepted"] and bad["statistic"] < ALPHA_HYPOTHESIS


def test_c14_and_c15_name_the_cells_their_tests_covered():
    ex = E.explanations(pd.DataFrame([{"hypothesis": "C14", "dataset": "adult", "accepted": True},
                                      {"hypothesis": "C14", "dataset": "kddcup99", "accepted": True}]))
    t1 = E.table_frame("adult", None, ex)
    named = t1[t1.errata == "C14"]
    assert set(named.method) == {"output", "objective"} and len(named) == 29  # the three 0.8248 entries are not covered
    t2 = E.table_frame("kddcup99", None, ex)
    assert t2[t2.errata == "C14"][["loss", "method", "log10_Lambda"]].values.tolist() == [["huber", "objective", -3.5]]
    ex15 = E.explanations(pd.DataFrame([{"hypothesis": "C15", "dataset": "adult", "accepted": True}]))
    f2 = E.figure_2_3_frame("adult", None, ex15)
    assert set(f2[f2.errata == "C15"].method) == {"output", "objective"}
    assert f2[np.isclose(f2.epsilon.astype(float), 0.1) & (f2.source == "published")].errata.isna().all()
    assert E.table_frame("adult", None, ex15).errata.isna().all()


def test_objective_batch_noise_term_is_divided_by_the_rows_it_is_given():
    """Algorithm 2's release minimises J(f) + b'f / N + (Lambda + Delta) ||f||^2 / 2: its gradient vanishes with the N
    given (C14's reading), and with the design's own n by default."""
    from dpkernels.bounds import chaudhuri as B
    from dpkernels.losses import make_loss
    from dpkernels.mechanisms.chaudhuri import unit_gamma_noise
    from dpkernels.solvers.smooth import Design

    data = _toy(400)
    X, y = data.X, data.y.astype(float)
    L = make_loss("logistic")
    p = B.theorem_9_parameters(1.0, 400, 0.05, L.curvature)
    unit = unit_gamma_noise(3, X.shape[1], "lattice", np.random.default_rng(1))
    lam = 0.05 + p.Delta

    def gradient(W: np.ndarray, rows: int) -> np.ndarray:
        m = y[None, :] * (W @ X.T)
        g = -((y[None, :] / (1.0 + np.exp(m))) @ X) / len(y)
        return g + lam * W + (unit / p.beta) / rows

    for rows in (None, 4000):
        W = E.objective_batch(Design(X, y), L, 0.05, p, unit, solver_tol=1e-6, center=np.zeros(X.shape[1]),
                              noise_rows=rows)
        assert np.abs(gradient(W, rows or 400)).max() < 1e-6
        assert np.abs(gradient(W, 400 if rows else 4000)).max() > 1e-3  # must fail with the other n


def test_errata_prose_eps_prime_numbers_are_algorithm_2s():
    """ERRATA C3's hand-written eps' values (Huber, c = 1/(2h)) follow from Algorithm 2 at the sizes they name:
    Figure 2's curve at Lambda = 10^-2.5 on Adult's training folds (9/10 of 45,222 rows), and C14's KDD entry at
    Lambda = 10^-3.5 on the fold's 63,000 rows and on all 70,000."""
    from dpkernels.bounds import chaudhuri as B
    from dpkernels.losses import make_loss
    from dpkernels.report import REPO_ROOT

    text = " ".join((REPO_ROOT / "docs" / "ERRATA.md").read_text().split())
    c = make_loss("huber").curvature

    def eps_prime(eps: float, n: int, log10_lam: float) -> float:
        return B.theorem_9_parameters(eps, n, 10.0 ** log10_lam, c).epsilon_prime

    adult = [f"{eps_prime(e, 45_222 * 9 // 10, -2.5):.4f}" for e in (0.02, 0.025)]
    assert f"eps' = {adult[0]} and {adult[1]} there" in text  # must fail at another n, Lambda or curvature
    kdd = [f"{eps_prime(0.1, n, -3.5):.3f}" for n in (70_000 * 9 // 10, 70_000)]
    assert f"eps' = {kdd[0]} at the fold's 63,000 rows, {kdd[1]} at 70,000" in text
    assert round(1 - (45_222 * 9 // 10) / 45_222, 2) == 0.1 and "a tenth less noise" in text


def test_hypotheses_file_names_what_each_test_left_out(tmp_path):
    """hypotheses.csv carries each hypothesis's registered `untested` part of its scope (REPORT names those numbers
    "left out of its test"): K-lc-implementations's test without the Huber objective point at eps_p = 0.01 and 60,000
    rows, where it releases nothing (the K-lc-* tests ran at 60,000 rows only until M6, now at every size), the K-*
    tests without C8's three cells, C14's without the 0.8248 entries, C11's without Table 1's Huber entry at Lambda =
    10^-3.5; C13 bears only on the two points its variant changes."""
    from dpkernels.report import in_scope

    hs = ("K-lc-119", "K-lc-implementations", "K-119", "C4")
    rows = [{"hypothesis": h, "dataset": "kddcup99", "test": "t", "statistic": 1.0, "accepted": False,
             "outcome": "rejected", "detail": "", "scope": E.registered()[h]["scope"]} for h in hs]
    df = pd.read_csv(E.write_hypotheses(rows, tmp_path), keep_default_na=False).set_index("hypothesis")
    assert df.loc["K-lc-119", "untested"] == "" and df.loc["C4", "untested"] == ""
    lc = {"figure": "5", "loss": "huber", "epsilon": "0.01", "method": "objective"}
    assert in_scope(df.loc["K-lc-implementations", "untested"], "figure_4_5", {**lc, "size": "60000"})
    assert not in_scope(df.loc["K-lc-implementations", "untested"], "figure_4_5", {**lc, "size": "70000"})
    c8 = {"dataset": "kddcup99", "loss": "logistic", "method": "objective", "log10_Lambda": "-9", "epsilon": "0.1"}
    assert in_scope(df.loc["K-119", "scope"], "table_2", c8) and in_scope(df.loc["K-119", "untested"], "table_2", c8)
    reg = E.registered()
    huber = {"dataset": "adult", "loss": "huber", "method": "objective", "log10_Lambda": "-3.5", "epsilon": "0.1"}
    assert in_scope(reg["C11"]["scope"], "table_1", huber) and in_scope(reg["C11"]["untested"], "table_1", huber)
    assert not in_scope(reg["C11"]["scope"], "table_1", {**huber, "loss": "logistic"})  # LR at 10^-3.5: Delta = 0
    lr0 = {"dataset": "adult", "loss": "logistic", "method": "objective", "log10_Lambda": "-7", "epsilon": "0.1"}
    assert in_scope(reg["C14"]["untested"], "table_1", lr0) and not in_scope(reg["C14"]["untested"], "table_1", huber)
    fig2 = {"dataset": "adult", "loss": "huber", "method": "objective"}
    assert in_scope(reg["C13"]["scope"], "figure_2", {**fig2, "epsilon": "0.025"})
    assert not in_scope(reg["C13"]["scope"], "figure_2", {**fig2, "epsilon": "0.05"})


def test_k_lc_untested_is_what_each_test_left_out():
    """M6: every paired published point of Figures 4-5 (the sizes we reproduce) in a K-lc-* scope is tested (its cell
    and size among the variant's runs) or named in the registry's `untested`, and never both (from the committed
    registered_runs.csv)."""
    from dpkernels.report import REPO_ROOT, in_scope

    root = REPO_ROOT / "paper_figures" / "chaudhuri2011"
    runs = pd.read_csv(root / "registered_runs.csv")
    fig = pd.read_csv(root / "figure_4_5.csv", keep_default_na=False, na_values=[""])
    reproduced = fig[fig.source == "reproduced"]
    paired = fig[(fig.source == "published") & fig["size"].isin(reproduced["size"].dropna())]
    assert len(paired) == 24
    reg = E.registered()
    wrong = {}
    for h in V.LC_VARIANTS:
        variant = runs[(runs.hypothesis == h) & (runs.arm == "variant")]
        cells = {(r.loss, r.method, round(float(r.epsilon), 6), float(r.size)) for r in variant.itertuples()}
        for r in paired.itertuples():
            key = {"figure": str(r.figure), "loss": r.loss, "epsilon": f"{r.epsilon:g}", "method": r.method,
                   "size": f"{r.size:.0f}"}
            if not in_scope(reg[h]["scope"], "figure_4_5", key):
                continue
            tested = (r.loss, r.method, round(float(r.epsilon), 6), float(r.size)) in cells
            marked = bool(reg[h].get("untested")) and in_scope(reg[h]["untested"], "figure_4_5", key)
            if tested == marked:
                wrong.setdefault(h, []).append((r.loss, r.method, r.epsilon, r.size, tested))
    assert not wrong, wrong


def _published_numbers(dataset: str):
    """(table, key, value) of every published number of Tables 1-2 and Figures 2-3 of ``dataset`` (committed CSVs)."""
    from dpkernels.report import REPO_ROOT, VALUE_COLUMNS

    out = []
    for table in (("table_1", "figure_2") if dataset == "adult" else ("table_2", "figure_3")):
        df = pd.read_csv(REPO_ROOT / "paper_figures" / "chaudhuri2011" / f"{table}.csv", keep_default_na=False,
                         na_values=[""])
        pub = df[(df.source == "published") & (df.dataset == dataset)]
        keys = [c for c in df.columns if c not in VALUE_COLUMNS]
        out += [(table, {k: str(getattr(r, k)) for k in keys}, float(r.value)) for r in pub.itertuples()]
    return out


def test_untested_is_what_each_registered_test_left_out():
    """For every hypothesis with runs in registered_runs.csv on Tables 1-2 and Figures 2-3: a published number in its
    scope is tested when its cell is among the runs or it repeats a tested number (the same value printed again for
    the same loss and method: Table 1's Delta > 0 entries, Figure 3's eps = 0.1 points that are Table 2's bold
    entries); the registry's `untested` covers exactly the others."""
    from dpkernels.report import REPO_ROOT, in_scope

    runs = pd.read_csv(REPO_ROOT / "paper_figures" / "chaudhuri2011" / "registered_runs.csv")
    reg = E.registered()

    def cell(table, loss, method, lam, eps):
        """A number's or a run's cell: a figure's point has no Lambda, a table's non-private entry no epsilon."""
        return (table, loss, method, None if table.startswith("figure") or pd.isna(lam) else round(float(lam), 6),
                None if pd.isna(eps) or method == "non-private" and table.startswith("table") else round(float(eps), 6))

    def of(t, k):
        return cell(t, k["loss"], k["method"], float(k.get("log10_Lambda", "nan")), float(k.get("epsilon", "nan")))

    wrong = {}
    for h in sorted(set(runs.hypothesis) - {"ours"}):
        g = runs[runs.hypothesis == h]
        if not set(g.table) <= {"table_1", "table_2", "figure_2", "figure_3"}:
            continue
        for ds, gd in g.groupby("dataset"):
            cells = {cell(r.table, r.loss, r.method, r.log10_Lambda, r.epsilon) for r in gd.itertuples()}
            nums = _published_numbers(ds)
            tested_values = {(k["loss"], k["method"], v) for t, k, v in nums if of(t, k) in cells}
            for t, k, v in nums:
                if not in_scope(reg[h]["scope"], t, k):
                    continue
                tested = of(t, k) in cells or (k["loss"], k["method"], v) in tested_values
                marked = bool(reg[h].get("untested")) and in_scope(reg[h]["untested"], t, k)
                if tested == marked:
                    wrong.setdefault(h, []).append((t, k.get("loss"), k.get("method"), k.get("log10_Lambda"),
                                                    k.get("epsilon"), "tested" if tested else "not tested"))
    assert len(set(runs.hypothesis)) >= 20
    assert not wrong, wrong
