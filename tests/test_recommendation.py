"""dpkernels.recommend: the frontier's answer read (or interpolated) from committed results, never from data, and a
clear LookupError where a cell or a file is missing (a small committed fixture: tests/data/frontier_fixture)."""

from __future__ import annotations

import math
import shutil
from pathlib import Path

import pandas as pd
import pytest

from dpkernels import ObjectivePerturbation, OutputPerturbation, recommend
from dpkernels.cli import main

FIXTURE = Path(__file__).parent / "data" / "frontier_fixture"


def test_read_at_a_committed_cell():
    rec = recommend("binary", 10_000, 104, 1.0, 1e-6, results=FIXTURE)
    # rubinstein-finite has the lowest error but stated delta 1e-3 (over budget): never recommended
    assert rec.mechanism == "chaudhuri-objective-logistic" and rec.like == "adult"
    assert rec.how == "read at the committed cell" and rec.error == pytest.approx(0.18)
    lo, hi = rec.interval
    assert lo < 0.18 < hi and hi - lo < 0.01
    assert "rubinstein-finite" not in set(rec.alternatives["mechanism"])
    est = rec.build()
    assert isinstance(est, ObjectivePerturbation) and est.epsilon == 1.0 and est.random_state is None
    assert "ObjectivePerturbation(" in rec.estimator and "Use chaudhuri-objective-logistic" in str(rec)


def test_interpolated_between_four_cells():
    """n = 20,000 and epsilon = 0.5 lie between the committed sizes 10,000 / 30,000 and epsilons 0.3 / 1: bilinear
    in (log n, log epsilon)."""
    rec = recommend("binary", 20_000, 104, 0.5, 1e-6, results=FIXTURE)
    tn = math.log(20_000 / 10_000) / math.log(3.0)
    te = math.log(0.5 / 0.3) / math.log(1.0 / 0.3)
    expected = ((1 - tn) * ((1 - te) * 0.20 + te * 0.18) + tn * ((1 - te) * 0.17 + te * 0.16))
    assert rec.error == pytest.approx(expected, abs=1e-12)
    assert rec.how.startswith("interpolated") and len(rec.cells) == 4
    assert rec.cells["weight"].sum() == pytest.approx(1.0)


def test_pure_dp_asks_for_pure_rows_and_a_small_delta_for_small_deltas():
    rec = recommend("binary", 20_000, 104, 0.5, 0.0, results=FIXTURE)
    assert rec.mechanism == "chaudhuri-output-logistic" and isinstance(rec.build(), OutputPerturbation)
    assert recommend("binary", 20_000, 104, 0.5, 1e-8, results=FIXTURE).mechanism == "chaudhuri-output-logistic"


def test_it_degrades_clearly(tmp_path):
    with pytest.raises(LookupError, match="outside the committed grid"):
        recommend("binary", 500, 104, 0.5, 1e-6, results=FIXTURE)
    with pytest.raises(LookupError, match="outside the committed grid"):
        recommend("binary", 20_000, 104, 8.0, 1e-6, results=FIXTURE)
    with pytest.raises(LookupError, match="no multiclass data set"):
        recommend("multiclass", 20_000, 36, 0.5, 1e-6, results=FIXTURE)
    with pytest.raises(LookupError, match="no committed frontier results"):
        recommend("binary", 20_000, 104, 0.5, 1e-6, results=tmp_path)
    holey = tmp_path / "holey"
    shutil.copytree(FIXTURE, holey)
    rec = pd.read_csv(holey / "recommendation.csv")
    rec[~((rec["n_train"] == 30_000) & (rec["epsilon"] == 1.0))].to_csv(holey / "recommendation.csv", index=False)
    with pytest.raises(LookupError, match="no adult cell at n = 30,000, epsilon = 1"):
        recommend("binary", 20_000, 104, 0.5, 1e-6, results=holey)
    with pytest.raises(ValueError):
        recommend("regression", 20_000, 104, 0.5, 1e-6, results=FIXTURE)


def test_nothing_learns_is_an_answer(tmp_path):
    flat = tmp_path / "flat"
    shutil.copytree(FIXTURE, flat)
    s = pd.read_csv(flat / "summary.csv")
    s.loc[s["privacy"] != "none", "error"] = 0.26  # every private mechanism at or above the majority error
    s.to_csv(flat / "summary.csv", index=False)
    rec = recommend("binary", 20_000, 104, 0.5, 1e-6, results=flat)
    assert rec.mechanism == "" and "collect more rows or spend more budget" in str(rec)
    with pytest.raises(LookupError):
        rec.build()


def test_the_cli(capsys):
    assert main(["recommend", "binary", "20000", "104", "0.5", "1e-6", "--results", str(FIXTURE)]) == 0
    assert "Use chaudhuri-objective-logistic" in capsys.readouterr().out
    assert main(["recommend", "binary", "50", "104", "0.5", "1e-6", "--results", str(FIXTURE)]) == 1
    assert "outside the committed grid" in capsys.readouterr().err
