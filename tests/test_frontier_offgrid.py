"""Issue 29 D5: recommend's stated interval against its recommendation measured at off-grid points
(:mod:`dpkernels.experiments.frontier_offgrid`), recomputed from the committed runs."""

from __future__ import annotations

from types import SimpleNamespace

import pandas as pd
import pytest

from dpkernels.experiments import frontier_offgrid as O
from dpkernels.report import REPO_ROOT

COMMITTED = REPO_ROOT / "paper_figures" / "recommend"


def _committed() -> tuple[pd.DataFrame, pd.DataFrame]:
    return pd.read_csv(COMMITTED / "offgrid_runs.csv"), pd.read_csv(COMMITTED / "offgrid.csv")


def test_the_committed_checks_are_recomputed_from_the_committed_runs():
    """Every point of :data:`POINTS` ran, with the seeds planned from the committed spread and the mechanism recommend
    names now, and offgrid.csv is what the runs give against the committed results (nothing typed in)."""
    runs, table = _committed()
    assert sorted(map(tuple, table[["dataset", "n_train", "epsilon"]].to_numpy().tolist())) == sorted(
        (d, n, float(e)) for d, n, e in O.POINTS)
    for (ds, n, eps), g in runs.groupby(["dataset", "n_train", "epsilon"]):
        rec = O.point_recommendation(ds, n, eps)
        assert set(g["seed"]) == set(range(O.FIRST_SEED, O.FIRST_SEED + O.seeds_needed(rec)))
        assert (g["epsilon_spent"] <= eps * (1 + 1e-9)).all() and (g["refused"].fillna("") == "").all()
    again = O.offgrid_checks(runs)
    pd.testing.assert_frame_equal(again.reset_index(drop=True), table, check_dtype=False, rtol=1e-9)


def test_the_check_can_fail_and_can_hold():
    """The same runs moved so that their mean lies one interval width above each stated interval are violated
    everywhere; moved onto the stated interval's centre, with the measured spread, they hold everywhere (the seeds
    were planned for it): the check is not a formality."""
    runs, _ = _committed()
    above, centred = [], []
    for (ds, n, eps), g in runs.groupby(["dataset", "n_train", "epsilon"], sort=False):
        lo, hi = O.point_recommendation(ds, n, eps).interval
        above.append(g.assign(error=g["error"] - g["error"].mean() + hi + (hi - lo)))
        centred.append(g.assign(error=g["error"] - g["error"].mean() + (lo + hi) / 2))
    assert set(O.offgrid_checks(pd.concat(above))["status"]) == {"violated"}
    assert set(O.offgrid_checks(pd.concat(centred))["status"]) == {"holds"}


def test_runs_of_another_mechanism_are_refused():
    runs, _ = _committed()
    with pytest.raises(ValueError, match="rerun the off-grid points"):
        O.offgrid_checks(runs.assign(mechanism="amp"))


def test_seeds_are_planned_from_the_stated_spread():
    narrow = SimpleNamespace(interval=(0.10, 0.20), spread=0.0)
    wide = SimpleNamespace(interval=(0.10, 0.1001), spread=0.5)
    assert O.seeds_needed(narrow) == O.MIN_SEEDS and O.seeds_needed(wide) == O.MAX_SEEDS
    mid = SimpleNamespace(interval=(0.10, 0.14), spread=0.05)
    S = O.seeds_needed(mid)
    assert O.MIN_SEEDS < S < O.MAX_SEEDS
    assert O.seeds_needed(SimpleNamespace(interval=(0.10, 0.14), spread=0.06)) > S
