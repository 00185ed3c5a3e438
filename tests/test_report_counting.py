"""The report's counting: explanations only through tested hypotheses per data set, typed classes, too-noisy
comparisons, and totals that add up (issue 21, contract items 3-4)."""

from __future__ import annotations

import pandas as pd
import pytest

from dpkernels.report import (
    CLASS_COLUMNS,
    CLASSES,
    KINDS,
    NUMBER_KINDS,
    STATUSES,
    Checks,
    accepted_explanations,
    build_report,
    in_scope,
    number_kind,
    check_counts,
    compare_table,
    read_hypotheses,
    write_hypotheses,
    write_table,
)


def _table() -> pd.DataFrame:
    """Published against reproduced numbers on two data sets; 'x' differs on both, named explained by H1."""
    rows = []
    for ds, pub, rep, errata in (("a", 0.90, 0.70, "H1"), ("b", 0.90, 0.70, "H1"), ("a", 0.50, 0.501, None)):
        key = {"dataset": ds, "entry": "x" if errata else "y"}
        rows.append({**key, "source": "published", "value": pub, "n_runs": 5, "errata": errata})
        rows.append({**key, "source": "reproduced", "value": rep, "se": 0.01, "sd": 0.02, "n_runs": 5,
                     "min_effect": 0.2})
    return pd.DataFrame(rows)


def _hyp(accepted_a: bool, accepted_b: bool) -> pd.DataFrame:
    def outcome(accepted: bool) -> str:
        return "accepted" if accepted else "rejected"

    return pd.DataFrame([
        {"hypothesis": "H1", "dataset": "a", "test": "max |z| of the variant", "statistic": 1.2, "accepted": accepted_a,
         "outcome": outcome(accepted_a), "detail": ""},
        {"hypothesis": "H1", "dataset": "b", "test": "max |z| of the variant", "statistic": 7.5, "accepted": accepted_b,
         "outcome": outcome(accepted_b), "detail": ""},
    ])


def test_an_explanation_rejected_for_the_rows_data_set_leaves_it_unexplained():
    cls = compare_table(_table(), _hyp(True, False)).set_index(["dataset", "entry"])["class"]
    assert cls[("a", "x")] == "consistent with H1"
    assert cls[("b", "x")] == "differs, unexplained"  # the failing case: H1 rejected for b
    assert cls[("a", "y")] == "agrees"
    # no hypotheses at all: a named ERRATA id is only a candidate
    none = compare_table(_table()).set_index(["dataset", "entry"])
    assert none.loc[("a", "x"), "class"] == "differs, unexplained" and none.loc[("a", "x"), "candidate"] == "H1"


def test_one_rejecting_test_rejects_the_hypothesis_for_that_data_set():
    h = pd.concat([_hyp(True, True), _hyp(False, True).iloc[[0]]], ignore_index=True)
    assert accepted_explanations(h) == {("H1", "b")}
    assert accepted_explanations(None) == set()


def test_a_table_without_a_dataset_column_explains_nothing():
    t = _table().drop(columns="dataset").assign(entry=lambda d: d.entry + d.index.astype(str).str[0])
    t["entry"] = ["x1", "x1", "x2", "x2", "y", "y"]
    assert not compare_table(t, _hyp(True, True))["class"].str.startswith("consistent with").any()


def test_class_overrides_need_a_reason_and_are_neither_agreement_nor_explanation():
    t = _table()
    t.loc[t.entry == "y", "class_override"] = "input"
    with pytest.raises(ValueError, match="note"):
        compare_table(t)
    t.loc[(t.entry == "y") & (t.source == "published"), "note"] = "generator default"
    t.loc[(t.dataset == "b") & (t.source == "published"), ["class_override", "note"]] = ["not comparable", "another machine"]
    cls = compare_table(t, _hyp(True, True)).set_index(["dataset", "entry"])["class"]
    assert cls[("a", "y")] == "input" and cls[("b", "x")] == "not comparable" and cls[("a", "x")] == "consistent with H1"
    t.loc[t.entry == "y", "class_override"] = "agrees"
    with pytest.raises(ValueError, match="class_override"):
        compare_table(t)


def test_min_effect_makes_a_noisy_agreement_inconclusive():
    t = pd.DataFrame([{"dataset": "a", "source": "published", "value": 0.892, "n_runs": 5},
                      {"dataset": "a", "source": "reproduced", "value": 0.674, "se": 0.131, "sd": 0.294, "n_runs": 5}])
    # |t| = 1.2 at 4 df: the band spans most of the accuracy scale; with no minimum effect stated the comparison has
    # no power at all, so it is never an agreement (it was "agrees" before a stated minimum effect was required)
    assert compare_table(t)["class"].item() == "inconclusive (too noisy)"
    assert compare_table(t)["df"].item() == 4
    exact = pd.DataFrame([{"dataset": "a", "source": "published", "value": 142.0},
                          {"dataset": "a", "source": "reproduced", "value": 142.0, "se": 0.0}])
    assert compare_table(exact)["class"].item() == "agrees"  # a count, standard error 0: sees any difference
    assert compare_table(t, min_effect=0.05)["class"].item() == "inconclusive (too noisy)"
    assert compare_table(t.assign(min_effect=0.05))["class"].item() == "inconclusive (too noisy)"
    # a precise agreement stays an agreement under the same minimum effect
    t2 = t.assign(value=[0.50, 0.501], se=[None, 0.002], sd=[None, 0.004])
    assert compare_table(t2, min_effect=0.05)["class"].item() == "agrees"


def test_hypotheses_file_is_validated():
    with pytest.raises(ValueError, match="columns"):
        write_hypotheses(pd.DataFrame({"hypothesis": ["H1"]}), "demo")
    with pytest.raises(ValueError, match="accepted"):
        write_hypotheses(_hyp(True, True).assign(accepted=["yes", "no"]), "demo")
    with pytest.raises(ValueError, match="outcome"):  # not accepted, yet said to be
        write_hypotheses(_hyp(True, False).assign(outcome=["accepted", "accepted"]), "demo")
    with pytest.raises(ValueError, match="outcome"):
        write_hypotheses(_hyp(True, False).assign(outcome=["accepted", "refuted"]), "demo")


def test_report_counts_add_up_and_list_every_unexplained_number(tmp_path):
    c = Checks("demo")
    c.add("Theorem 1", "bound", kind="measured", bound=1, measured=0.5, status="holds")
    c.add("Theorem 2", "bound", kind="measured", bound=1, measured=1.5, status="violated")
    c.add("Theorem 3", "bound", kind="measured", bound=1, measured=0.99, status="inconclusive")
    c.add("Ours", "substitute", kind="consistency", bound=1, measured=0.5, status="holds")
    c.skip("Table 9", "data absent", "no file", kind="analytic")
    c.write(tmp_path / "demo")
    counts = c.counts()
    assert counts.loc["measured"].tolist() == [1, 1, 1, 0] and int(counts.values.sum()) == len(c.rows)
    t = _table()
    t.loc[(t.entry == "y") & (t.source == "published"), ["class_override", "note"]] = ["input", "size we set"]
    write_table(t, "table_1", "demo", out=tmp_path / "demo")
    write_hypotheses(_hyp(True, False), "demo", out=tmp_path / "demo")
    text = build_report(tmp_path).read_text()
    tot = pd.read_csv(tmp_path / "totals.csv").set_index("paper").loc["demo"]
    assert [tot[f"measured {s}"] for s in STATUSES] == [1, 1, 1, 0]
    assert tot["analytic skipped"] == 1 and tot["consistency holds"] == 1
    assert sum(tot[k] for k in KINDS) == 5
    assert sum(tot[f"{k} {s}"] for k in KINDS for s in STATUSES) == 5
    assert tot["published numbers paired"] == 3 == sum(tot[CLASS_COLUMNS[c]] for c in CLASSES)
    assert (tot["consistent with a hypothesis"], tot["differ, unexplained"], tot["input"]) == (1, 1, 1)
    assert 0 <= tot["differ, unexplained, below the minimum effect"] <= tot["differ, unexplained"]
    # the input is no comparison: left out of the per-kind paired counts (they read 3, the input included)
    assert sum(tot[f"paired {k}"] for k in NUMBER_KINDS) == 2 and tot["agree other"] == 0
    unexplained = text.split("## Differences we cannot explain")[1].split("\n## ")[0]
    assert "dataset=b, entry=x" in unexplained and "H1 rejected (max \\|z\\| of the variant: 7.5)" in unexplained
    assert "dataset=a, entry=x" not in unexplained
    assert "Hypotheses tested (2)" in text
    assert read_hypotheses(tmp_path / "demo" / "hypotheses.csv").shape[0] == 2


def test_check_counts_refuses_unknown_kinds():
    df = pd.DataFrame({"kind": ["measured", "guess"], "status": ["holds", "holds"]})
    with pytest.raises(ValueError, match="kinds"):
        check_counts(df)


def test_power_limit_is_what_unlimited_replicates_of_ours_would_give():
    """``power_limit``: the power against the minimum effect with our standard error 0 and the normal law, so it tells
    a comparison that more of our replicates can decide (limit >= 0.8) from one the published number's own spread
    keeps too noisy (limit < 0.8)."""
    from dpkernels import verdicts

    # published a mean of 5 runs, ours of 10: se_published = sd / sqrt(5)
    t = pd.DataFrame([{"dataset": "a", "source": "published", "value": 0.332, "n_runs": 5},
                      {"dataset": "a", "source": "reproduced", "value": 0.333, "se": 0.0059, "sd": 0.0187, "n_runs": 10}])
    row = compare_table(t, min_effect=0.05).iloc[0]
    assert row["class"] == "inconclusive (too noisy)" and row["power"] < 0.8
    assert row["power_limit"] == pytest.approx(verdicts.comparison_power(0.05, 0.0187 / 5**0.5))
    assert row["power_limit"] > 0.95  # more of our runs would decide it
    # must fail: a published number with a wide spread of its own stays blind whatever we run
    wide = compare_table(t.assign(sd=[None, 0.3]), min_effect=0.05).iloc[0]
    assert wide["power"] <= wide["power_limit"] < 0.2
    # no minimum effect or no spread of ours: no limit to state
    assert pd.isna(compare_table(t).iloc[0]["power_limit"])
    assert pd.isna(compare_table(t.assign(se=[None, None]), min_effect=0.05).iloc[0]["power_limit"])


def test_the_t_of_a_published_number_uses_the_degrees_of_freedom_of_our_spread():
    # 10 folds: t = 4.2 differs as a z but not at 9 degrees of freedom (cut 4.09 at 0.0027 two-sided)
    t = pd.DataFrame([{"dataset": "a", "source": "published", "value": 0.500, "n_runs": 10},
                      {"dataset": "a", "source": "reproduced", "value": 0.5237, "se": 0.004, "sd": 0.004 * 10**0.5, "n_runs": 10}])
    row = compare_table(t).iloc[0]
    assert row["df"] == 9 and 4.1 < abs(row["z"]) < 4.3 and row["class"] == "differs, unexplained"
    row = compare_table(t.assign(value=[0.500, 0.5227], min_effect=0.05)).iloc[0]
    assert abs(row["z"]) > 3 and row["class"] == "agrees"  # |t| = 4.0 <= 4.09: the old |z| <= 3 rule called it a difference


def test_fitted_numbers_are_their_own_class_and_never_agreements():
    t = _table()
    t.loc[(t.entry == "y") & (t.source == "published"), ["class_override", "note"]] = ["fitted", "the reading rule's column"]
    cls = compare_table(t).set_index(["dataset", "entry"])["class"]
    assert cls[("a", "y")] == "fitted"  # the same numbers agree without the mark (the failing case)
    assert compare_table(_table()).set_index(["dataset", "entry"])["class"][("a", "y")] == "agrees"


def test_number_kinds_and_scopes():
    assert number_kind({"epsilon": "nan"}) == number_kind({"epsilon": "non-private"}) == "non-private"
    assert number_kind({"method": "non-private", "loss": "x"}) == "non-private"
    assert number_kind({"epsilon": "0.1"}) == "private, eps <= 0.1" and number_kind({"epsilon": "0.5"}) == "private, eps > 0.1"
    assert number_kind({"column": "train"}) == "other"
    key = {"dataset": "kddcup99", "method": "output", "epsilon": "0.1"}
    assert in_scope("", "table_2", key) and in_scope(None, "table_2", key)
    assert in_scope("method=output|objective; epsilon=0.10", "figure_3", key)
    assert not in_scope("method=objective", "figure_3", key)
    assert not in_scope("table=figure_4_5", "figure_3", key)
    assert not in_scope("size=60000", "figure_3", key)  # the number has no such column
    # alternatives: a hypothesis that bears on one cell of another table besides its own (C11's Huber entry)
    assert in_scope("table=table_1; method=objective || table=figure_3; method=output", "figure_3", key)
    assert not in_scope("table=table_1; method=output || table=figure_3; method=objective", "figure_3", key)


def test_report_lists_only_the_hypotheses_that_bear_on_a_number(tmp_path):
    c = Checks("demo")
    c.add("Theorem 1", "bound", kind="measured", bound=1, measured=0.5, status="holds")
    c.write(tmp_path / "demo")
    write_table(_table(), "table_1", "demo", out=tmp_path / "demo")
    h = pd.concat([_hyp(True, False), pd.DataFrame([{"hypothesis": "H2", "dataset": "b", "test": "other cells",
                                                      "statistic": 0.1, "accepted": True, "outcome": "accepted",
                                                      "detail": "", "scope": "entry=y"}])])
    write_hypotheses(h, "demo", out=tmp_path / "demo")
    text = build_report(tmp_path).read_text()
    unexplained = text.split("## Differences we cannot explain")[1].split("\n## ")[0]
    assert "dataset=b, entry=x" in unexplained and "H1 rejected" in unexplained and "H2" not in unexplained
    assert "left out of its test" not in unexplained
    # a hypothesis whose test left this number out says so (it bears on it, it was not tried on it)
    write_hypotheses(h.assign(untested=["", "entry=x", ""]), "demo", out=tmp_path / "demo")
    unexplained = build_report(tmp_path).read_text().split("## Differences we cannot explain")[1].split("\n## ")[0]
    assert "H1 rejected on the other numbers it bears on, this one left out of its test" in unexplained


def test_report_says_rejected_only_where_the_test_rejected(tmp_path):
    """A hypothesis its test did not reject but could not accept (too little power against the protocol's own law) is
    "not rejected, too little power" in REPORT, never "rejected"."""
    from dpkernels.verdicts import hypothesis_outcome

    assert hypothesis_outcome(False, True) == "not rejected, too little power"
    assert hypothesis_outcome(False, False) == "rejected" and hypothesis_outcome(True, True) == "accepted"
    assert hypothesis_outcome(False, False, tested=False) == "not tested"
    assert hypothesis_outcome(False, False, void=True) == "void"  # the variant is ours: not "not tested"
    with pytest.raises(ValueError, match="void"):
        hypothesis_outcome(True, True, void=True)
    with pytest.raises(ValueError, match="cannot be accepted"):
        hypothesis_outcome(True, False)
    c = Checks("demo")
    c.add("Theorem 1", "bound", kind="measured", bound=1, measured=0.5, status="holds")
    c.write(tmp_path / "demo")
    write_table(_table(), "table_1", "demo", out=tmp_path / "demo")
    write_hypotheses(_hyp(True, False).assign(outcome=["accepted", hypothesis_outcome(False, True)]), "demo",
                     out=tmp_path / "demo")
    unexplained = build_report(tmp_path).read_text().split("## Differences we cannot explain")[1].split("\n## ")[0]
    assert "dataset=b, entry=x" in unexplained and "H1 not rejected, too little power (" in unexplained
    assert "H1 rejected" not in unexplained


def test_totals_are_recomputed_from_the_committed_csvs():
    """The committed totals.csv is what the committed tables give (classes, kinds), recomputed here from the CSVs: each
    class from first principles (scipy's t and noncentral t for the power, not the library's), and each explanation
    from hypotheses.csv itself (every row of the candidate's data set accepted, the number outside its ``known``
    scope), so that a library accepting every candidate would fail here."""
    import math

    import numpy as np
    from scipy import stats

    from dpkernels.report import REPO_ROOT, _class_of, in_scope, read_hypotheses

    root = REPO_ROOT / "paper_figures"
    tot = pd.read_csv(root / "totals.csv").set_index("paper")
    for paper in tot.index:
        hyp = read_hypotheses(root / paper / "hypotheses.csv")
        accepted: dict[tuple[str, str], bool] = {}
        known: dict[tuple[str, str], list[str]] = {}
        for r in hyp.to_dict("records"):
            key = (str(r["hypothesis"]), str(r["dataset"]))
            accepted[key] = accepted.get(key, True) and str(r["accepted"]).strip() == "True"
            if str(r.get("known", "")).strip():
                known.setdefault(key, []).append(str(r["known"]))
        counts = {c: 0 for c in CLASS_COLUMNS.values()}
        kinds = {k: [0, 0] for k in NUMBER_KINDS}
        small = 0  # differences without an explanation smaller than the comparison's minimum effect
        small_notable = 0  # of those, by at least 10% of the published number (referee M5)
        fitted_differs = 0  # fitted numbers beyond the cut
        for f in sorted((root / paper).glob("*.csv")):
            if f.name in ("checks.csv", "hypotheses.csv"):
                continue
            df = pd.read_csv(f, keep_default_na=False, na_values=[""])
            if "source" not in df.columns or "value" not in df.columns or not (df["source"] == "published").any():
                continue
            paired = compare_table(df, hyp, table=f.stem)
            keys = list(paired.columns[: list(paired.columns).index("published")])
            for _, r in paired.iterrows():  # each class again from first principles (scipy's t)
                got = r["class"]
                cut = stats.t.isf(0.0027 / 2, r.df) if np.isfinite(r.df) else stats.norm.isf(0.0027 / 2)
                if got == "fitted":
                    fitted_differs += int(np.isfinite(r.z) and abs(r.z) > cut)
                if got in ("fitted", "input", "not comparable"):
                    continue
                se = math.hypot(r.se_reproduced, r.se_published)
                if not np.isfinite(r.z) and np.isnan(r.z):
                    want = "inconclusive (too noisy)"
                elif abs(r.z) <= cut:
                    # an exact comparison (standard error 0) sees any difference
                    exact = np.isnan(r.min_effect) and se == 0
                    if np.isnan(r.min_effect):
                        power = 1.0 if exact else 0.0  # with a spread and no minimum effect, no stated power
                    elif se == 0:
                        power = 1.0
                    else:
                        nc = r.min_effect / se
                        d = r.df if np.isfinite(r.df) else None
                        # scipy's noncentral t returns NaN far in the tail (P(T < -cut) at a large noncentrality): 0
                        power = (stats.norm.sf(cut - nc) + stats.norm.cdf(-cut - nc) if d is None
                                 else np.nan_to_num(stats.nct.sf(cut, d, nc), nan=float(nc > cut))
                                 + np.nan_to_num(stats.nct.cdf(-cut, d, nc), nan=0.0))
                    want = "agrees" if power >= 0.8 else "inconclusive (too noisy)"
                else:
                    dataset = str(r["dataset"]) if "dataset" in keys else None
                    keyd = {k: r[k] for k in keys}
                    cands = [c for c in str(r["candidate"] if isinstance(r["candidate"], str) else "").split("|") if c]
                    why = next((c for c in cands if dataset is not None and accepted.get((c, dataset), False)
                                and not any(in_scope(k, f.stem, keyd) for k in known.get((c, dataset), []))), None)
                    want = f"consistent with {why}" if why else "differs, unexplained"
                assert got == want, (paper, f.name, dict(r))
            diff = (paired.reproduced.astype(float) - paired.published.astype(float)).abs()
            small += int(((paired["class"] == "differs, unexplained") & (diff < paired.min_effect.astype(float))).sum())
            small_notable += int(((paired["class"] == "differs, unexplained") & (diff < paired.min_effect.astype(float))
                                  & (diff >= 0.1 * paired.published.astype(float).abs())).sum())
            for cls, kind in zip(paired["class"], paired["kind"]):
                counts[CLASS_COLUMNS[_class_of(cls)]] += 1
                kinds[kind][0] += int(cls not in ("not comparable", "input"))
                kinds[kind][1] += int(cls == "agrees")
        for col, n in counts.items():
            if col in tot.columns:
                assert tot.loc[paper, col] == n, (paper, col)
        assert tot.loc[paper, "differ, unexplained, below the minimum effect"] == small, paper
        assert tot.loc[paper, "differ, unexplained, below the minimum effect, by >= 10% of the published number"] \
            == small_notable, paper
        assert tot.loc[paper, "fitted, significantly different"] == fitted_differs, paper
        for k, (paired_n, agree_n) in kinds.items():
            if f"paired {k}" in tot.columns:
                assert (tot.loc[paper, f"paired {k}"], tot.loc[paper, f"agree {k}"]) == (paired_n, agree_n), (paper, k)


def test_a_confirmed_upper_bound_states_how_loose_it_is():
    c = Checks("demo")
    loose = c.at_most("Lemma", "a bound 100x above the measurement", kind="measured", bound=1.0, measured=0.01)
    assert "measured / bound = 0.01" in loose.detail and "loose: 100x" in loose.detail
    tight = c.at_most("Lemma", "a bound met closely", kind="measured", bound=1.0, measured=0.9)
    assert tight.detail == "measured / bound = 0.9 (it would fail at 1.11x what was measured)"
    closest = c.at_most("Lemma", "met to 0.3%", kind="measured", bound=1.0, measured=0.997)
    assert closest.detail == "measured / bound = 0.997 (it would fail at 1.0030x what was measured)"  # not "1x"
    # no note on a violation, on a lower bound, on our own constructs, or where the row states its own strength
    assert c.at_most("Lemma", "violated", kind="measured", bound=1.0, measured=2.0).detail == ""
    assert c.at_least("Lemma", "lower", kind="measured", bound=1.0, measured=1.5).detail == ""  # either kind: no note
    room = c.at_least("Theorem 26", "a lower bound met 514.7x", kind="measured", bound=1.0, measured=514.7).detail
    assert room == ("measured / bound = 515 (loose lower bound: the check could only fail if the truth were below "
                    "1/515 of what was measured)")  # referee L4
    assert c.at_most("Ours", "ours", kind="consistency", bound=1.0, measured=0.01).detail == ""
    assert "measured / bound" not in c.at_most("Audit", "x", kind="measured", bound=1.0, measured=0.2, detail="strength: y").detail


def test_a_large_relative_difference_is_not_read_as_negligible():
    """Referee M5: an absolute minimum effect (0.05 in accuracy) read a KDDCup99 error of 0.0068 against the paper's
    0.0092 as "below the minimum effect", though ours is 26% lower.  The listing now says so, and totals count them."""
    from dpkernels.report import _below_text, relative_difference

    paired = pd.DataFrame({"published": [0.0092, 0.80, 0.0], "reproduced": [0.0068, 0.79, 0.001]})
    rel = relative_difference(paired)
    assert rel[0] == pytest.approx(0.2609, abs=1e-4) and rel[1] == pytest.approx(0.0125) and pd.isna(rel[2])
    assert _below_text(True, rel[0]) == "yes in absolute terms, but 26% of the published number"
    assert _below_text(True, rel[1]) == "yes" and _below_text(False, rel[0]) == "no"



def test_numbers_printed_twice_are_counted_once_on_the_shared_keys():
    """Referee L1: a figure's point that is a table's entry is paired and classed in both; totals.csv counts such
    repeats (the same value and the same data set, loss, method and epsilon; two non-private numbers have no epsilon),
    and a number equal in value only is no repeat.  The committed totals are what the committed tables give."""
    from dpkernels.report import REPEATED, REPO_ROOT, repeated_numbers

    nan = float("nan")
    table = pd.DataFrame({"dataset": ["adult"] * 3, "loss": ["logistic", "logistic", "logistic"],
                          "method": ["objective", "output", "non-private"], "epsilon": [0.1, 0.1, nan],
                          "source": "published", "value": [0.2161, 0.30, 0.1533]})
    figure = pd.DataFrame({"dataset": ["adult"] * 4, "loss": ["logistic", "huber", "logistic", "logistic"],
                           "method": ["objective", "output", "non-private", "objective"],
                           "epsilon": [0.1, 0.1, nan, 0.2], "source": "published", "value": [0.2161, 0.30, 0.1533, 0.2161]})
    assert repeated_numbers({"table_1": table, "figure_2": figure}) == 2
    # sharing only the data set, every equal value repeats
    assert repeated_numbers({"table_1": table, "figure_2": figure.drop(columns=["loss", "method", "epsilon"])}) == 4
    assert repeated_numbers({"table_1": table}) == 0
    root = REPO_ROOT / "paper_figures"
    totals = pd.read_csv(root / "totals.csv").set_index("paper")
    for paper in totals.index:
        tables = {}
        for t in sorted((root / paper).glob("*.csv")):
            if t.name in ("checks.csv", "hypotheses.csv"):
                continue
            df = pd.read_csv(t, keep_default_na=False, na_values=[""])
            if {"source", "value"} <= set(df.columns) and (df["source"] == "published").any():
                tables[t.stem] = df
        assert totals.loc[paper, REPEATED] == repeated_numbers(tables), paper
    assert totals.loc["chaudhuri2011", REPEATED] == 7
