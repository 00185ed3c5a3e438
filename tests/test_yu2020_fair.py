"""The frontier's fair protocol at Yu et al.'s setting (:mod:`dpkernels.experiments.yu2020.fair`): the public
per-row map, the recommended row asked inside the committed grid, fits that state the asked budget, and the target
check, which fails on a row that misses the published accuracy or overspends."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from dpkernels.datasets import ADULT_COLUMNS as F_COLUMNS
from dpkernels.datasets import ADULT_NUMERIC as F_NUMERIC
from dpkernels.experiments.yu2020 import fair as F
from dpkernels.experiments.yu2020.protocol import Split
from dpkernels.experiments.yu2020.readings import PUBLISHED_TABLE_2
from dpkernels.report import Checks


def test_frontier_split_is_iyengars_split_under_the_frontiers_map():
    """The same rows, labels, order and cut as Iyengar et al.'s split; the features are the frontier's public map
    (AdultFeatures: 105 columns, the constant 0.5, rows in the unit ball), which reads nothing from the rows: mapping
    the test rows alone gives the same features."""
    from dpkernels.experiments.yu2020.protocol import iyengar_adult, iyengar_adult_records
    from dpkernels.feature_maps import AdultFeatures

    ours, theirs = F.frontier_split("adult"), iyengar_adult()
    assert (ours.n_train, ours.d) == (theirs.n_train, 105)
    np.testing.assert_array_equal(ours.y_train, theirs.y_train)
    np.testing.assert_array_equal(ours.y_test, theirs.y_test)
    assert np.all(np.linalg.norm(ours.X_train, axis=1) <= 1.0 + 1e-12) and np.all(ours.X_train[:, -1] == 0.5)
    # the first test row is record order[36176] of the file: mapped alone, it has the same features
    order = np.random.RandomState(F.SPLIT_SEED).permutation(45220)
    rec = pd.DataFrame(iyengar_adult_records()[[order[36176]]], columns=F_COLUMNS).apply(lambda c: c.str.strip())
    rec[F_NUMERIC] = rec[F_NUMERIC].apply(pd.to_numeric)
    np.testing.assert_allclose(AdultFeatures().fit_transform(rec)[0], ours.X_test[0])
    # Iyengar et al.'s own columns are divided by maxima over all rows (test rows included): not the frontier's map
    assert theirs.d == 104 and not np.allclose(np.linalg.norm(theirs.X_train, axis=1), 1.0)


def test_frontier_rows_and_their_labels():
    rows = F.frontier_rows(["DP-GD", "AMP"], ["rule", "selected"])
    assert rows == ["noisy-gd", "noisy-gd-selected", "amp", "amp-selected"]
    assert F._method_protocol("noisy-gd-selected") == ("DP-GD", "selected")
    assert F._method_protocol("chaudhuri-objective-huber") == ("chaudhuri-objective-huber", "rule")


def test_frontier_answer_is_asked_inside_the_committed_grid():
    """Adult's 36,176 training rows are beyond the frontier's largest Adult size: the answer is recommend's at that
    size (the frontier does not extrapolate), read from the committed results; inside the grid it is asked at n."""
    from dpkernels.recommendation import default_results, recommend

    sizes = pd.read_csv(default_results() / "summary.csv", usecols=["dataset", "n_train"])
    largest = int(sizes.loc[sizes.dataset == "adult", "n_train"].max())
    row, at = F.frontier_answer("adult", largest + 3_176, 104)
    assert at == largest
    assert row == recommend("binary", largest, 104, 0.1, 1.0 / (largest + 3_176) ** 2, like="adult").mechanism
    with pytest.raises(LookupError):  # what the helper avoids
        recommend("binary", largest + 3_176, 104, 0.1, 1.0 / (largest + 3_176) ** 2, like="adult")
    assert F.frontier_answer("adult", 20_000, 104)[1] == 20_000


@pytest.fixture(scope="module")
def small_split() -> Split:
    rng = np.random.default_rng(3)
    X = rng.normal(size=(1_200, 6))
    w = np.array([1.0, -1.0, 0.5, 0.0, 0.0, 0.0])
    y = np.where(X @ w + 0.3 * rng.normal(size=1_200) >= 0, 1.0, -1.0)
    X = X / np.maximum(1.0, np.linalg.norm(X, axis=1))[:, None]
    return Split("adult", X[:1_000], y[:1_000], X[1_000:], y[1_000:])


def test_fair_runs_state_the_asked_budget(small_split):
    runs = F.fair_runs(small_split, ["noisy-gd", "amp-selected"], n_runs=2, seed=1)
    assert len(runs) == 4 and set(runs.protocol) == {"rule", "selected"}
    assert np.allclose(runs.delta_asked, 1.0 / 1_000**2) and runs.yu_delta.all()
    assert (runs.epsilon_spent <= 0.1).all() and (runs.delta_spent <= runs.delta_asked).all()
    assert runs.selected_scale.notna().tolist() == [False, False, True, True]
    other = F.fair_runs(small_split, ["noisy-gd"], n_runs=2, seed=1, delta=1e-7)
    assert not other.yu_delta.any() and (other.delta_spent <= 1e-7).all()
    # the same seed reproduces; another delta is another run
    again = F.fair_runs(small_split, ["noisy-gd"], n_runs=2, seed=1)
    np.testing.assert_array_equal(again.accuracy, runs.accuracy[:2])
    table = F.fair_table(pd.concat([runs, other], ignore_index=True), answers={"adult": ("noisy-gd", 1_000)})
    assert len(table) == 3 and table.within_budget.all()
    assert table.loc[table.frontier_row == "noisy-gd", "yu_delta"].tolist() == [True, False]
    assert table.recommended.tolist() == [True, False, True]
    # a fit that stated more than it was asked for: the row is over budget (epsilon or delta)
    over = runs.copy()
    over.loc[0, "epsilon_spent"] = 0.1 * (1 + 1e-9)
    assert not F.fair_table(over).set_index("frontier_row").loc["noisy-gd", "within_budget"]
    over = runs.copy()
    over.loc[3, "delta_spent"] = 2e-6
    assert not F.fair_table(over).set_index("frontier_row").loc["amp-selected", "within_budget"]
    # the budget is the one each fit was asked for, not Yu et al.'s epsilon
    assert F.fair_table(F.fair_runs(small_split, ["noisy-gd"], n_runs=1, seed=1, epsilon=0.5)).within_budget.all()
    # rows outside the unit ball are refused (the frontier's rules assume ||x|| <= 1)
    far = Split("adult", small_split.X_train * 3, small_split.y_train, small_split.X_test, small_split.y_test)
    with pytest.raises(ValueError, match="unit ball"):
        F.fair_runs(far, ["noisy-gd"], n_runs=1)


def _table(error: float, se: float, within: bool = True, yu_delta: bool = True) -> pd.DataFrame:
    return pd.DataFrame([{"dataset": "adult", "method": "DP-GD", "protocol": "rule", "frontier_row": "noisy-gd",
                          "accuracy": 100 * (1 - error), "se": 100 * se, "n_runs": 20, "error": error,
                          "epsilon_spent_max": 0.1 if within else 0.2, "delta_spent_max": 1e-9, "delta_asked": 1e-9,
                          "yu_delta": yu_delta, "within_budget": within, "published": 80.9,
                          "tuned_on_test": 81.4}])


@pytest.mark.parametrize("error, within, status", [(0.180, True, "holds"), (0.201, True, "violated"),
                                                    (0.191, True, "inconclusive"), (0.180, False, "violated")])
def test_record_fair_target(error, within, status):
    """The target is the published DP-GD error (0.191 on Adult): a row clearly below it holds, one clearly above is
    violated, one at it cannot tell, and a row whose fits overspent is violated whatever its error."""
    assert math.isclose(1 - PUBLISHED_TABLE_2[("adult", "DP-GD")] / 100, 0.191)
    checks = Checks("yu2020")
    (v,) = F.record_fair(checks, _table(error, 0.0015, within), {"adult": ("noisy-gd", 33_000)})
    assert v.status == status and v.kind == "target"


def test_record_fair_reads_only_the_rows_at_yus_delta():
    checks = Checks("yu2020")
    (v,) = F.record_fair(checks, _table(0.180, 0.0015, yu_delta=False), {"adult": ("noisy-gd", 33_000)})
    assert v.status == "skipped"
    (v,) = F.record_fair(checks, _table(0.180, 0.0015), {"adult": ("", 33_000)})  # nothing learns there
    assert v.status == "skipped" and "names no mechanism" in v.detail


def test_committed_fair_table_is_within_budget_and_matches_its_checks():
    """The committed scale run: every fit of every row stated at most the (epsilon, delta) it was asked for, each data
    set has exactly one recommended row at Yu et al.'s delta, and the target rows measure its error."""
    from dpkernels.report import REPO_ROOT

    out = REPO_ROOT / "paper_figures" / "yu2020"
    table = pd.read_csv(out / "fair_protocol.csv")
    checks = pd.read_csv(out / "checks.csv").set_index("id")
    assert table.within_budget.all() and (table.epsilon_spent_max <= 0.1).all()
    assert (table.delta_spent_max <= table.delta_asked).all()
    for ds, g in table[table.recommended & table.yu_delta].groupby("dataset"):
        assert len(g) == 1
        assert checks.loc[f"fair-{ds}", "measured"] == pytest.approx(g.error.iloc[0], rel=1e-5)
        assert g.frontier_row.iloc[0] in checks.loc[f"fair-{ds}", "claim"]


def test_accuracy_on_unseen_test_rows_leaves_out_the_repeated_ones(small_split):
    """Issue 29 (KDDCup99's duplicates): the fair protocol keeps Yu et al.'s split, whose test rows can repeat training
    rows; ``accuracy_unseen`` is the accuracy on the others.  Here the first 100 test rows are copies of training
    rows: they are marked seen, the share unseen is 100 / 200, and the accuracy on the unseen rows is the mean over
    those rows alone (not the accuracy over all)."""
    X_te = small_split.X_test.copy()
    X_te[:100] = small_split.X_train[:100]
    y_te = small_split.y_test.copy()
    y_te[:100] = small_split.y_train[:100]
    split = Split("adult", small_split.X_train, small_split.y_train, X_te, y_te)
    unseen = F.unseen_test_rows(split)
    assert not unseen[:100].any() and unseen[100:].all()
    runs = F.fair_runs(split, ["noisy-gd"], n_runs=2, seed=1)
    assert (runs["unseen_share"] == 0.5).all()
    one = F._fit(split, "noisy-gd", 0, 1, 0.1, F.delta_for(split), unseen)
    again = F._fit(Split("adult", split.X_train, split.y_train, X_te[100:], y_te[100:]), "noisy-gd", 0, 1, 0.1,
                   F.delta_for(split), np.ones(100, dtype=bool))
    assert one["accuracy_unseen"] == again["accuracy"]  # the same fit (same seed and training rows), unseen rows only
    table = F.fair_table(runs)
    assert table["accuracy_unseen"].iloc[0] == pytest.approx(100 * runs["accuracy_unseen"].mean())
    assert table["se_unseen"].iloc[0] == pytest.approx(100 * runs["accuracy_unseen"].std(ddof=1) / np.sqrt(2))
    # with the source records' keys, a copy is the same record, not the same features: the 100 copied rows now come
    # from records of their own (keys 10,000 on), and rows 150-159 copy training records with other features
    keys_tr = np.arange(1_000, dtype=np.uint64)
    keys_te = np.arange(10_000, 10_200, dtype=np.uint64)
    keys_te[150:160] = keys_tr[:10]
    keyed = Split("adult", split.X_train, split.y_train, X_te, y_te, records_train=keys_tr, records_test=keys_te)
    by_record = F.unseen_test_rows(keyed)
    assert by_record.sum() == 190 and not by_record[150:160].any() and by_record[:100].all()
