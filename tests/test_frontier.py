"""The cross-paper frontier (issue 11): resumable sweep, a Dask cluster, the accounting of one-against-all and of
private tuning, and refusal of invalid configurations."""

from __future__ import annotations

import math

import numpy as np
import pytest

from dpkernels.experiments import frontier as F
from dpkernels.sweep import ResultStore

SMALL = {"n_train": 300, "n_test": 200}


def _configs(mechanisms=("chaudhuri-objective-logistic", "rubinstein-finite", "nonprivate-logistic"), eps=(0.5,), seeds=2):
    return F.make_configs(["satimage"], list(mechanisms), list(eps), seeds, {"satimage": SMALL["n_train"]}, SMALL["n_test"])


def test_sweep_resumes_and_computes_nothing_new(tmp_path, monkeypatch):
    store = ResultStore(tmp_path / "s")
    configs = _configs()
    first = F.run_frontier(configs, store=store, progress=False)
    assert len(first) == len(configs) and (first.skipped == "").all()
    calls = []
    monkeypatch.setattr(F, "run_task", lambda c: calls.append(c) or {"error": -1.0})
    again = F.run_frontier(configs, store=store, progress=False)
    assert calls == []  # nothing recomputed
    assert again["error"].tolist() == first["error"].tolist()


def test_sweep_runs_on_a_dask_cluster(tmp_path):
    distributed = pytest.importorskip("distributed")
    configs = _configs(mechanisms=("chaudhuri-objective-logistic",), seeds=2)
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=False, dashboard_address=None) as cluster:
        out = F.run_frontier(configs, store=ResultStore(tmp_path / "d"), scheduler=cluster.scheduler_address, progress=False)
    local = F.run_frontier(configs, store=ResultStore(tmp_path / "l"), progress=False)
    assert out["error"].tolist() == local["error"].tolist()  # same seed, same result wherever it runs


def test_task_records_accounted_privacy_at_most_the_target():
    for m in ("rubinstein-finite", "bassily-alg2", "chaudhuri-tuned"):
        c = {"dataset": "satimage", "task": "multiclass", "mechanism": m, "epsilon": 0.5, "delta": 1e-5, "seed": 0, **SMALL}
        r = F.run_task(c)
        assert r["n_parts"] == 6  # one-against-all: 6 binary fits
        assert r["epsilon_spent"] <= 0.5 and r["delta_spent"] <= 1e-5
        assert 0.0 <= r["error"] <= 1.0 and r["fit_seconds"] > 0 and r["peak_mb"] > 0


def test_one_against_all_accounting():
    # pure: epsilon / K each, the sum is the target
    e, d = F.split_budget(1.0, 0.0, 6)
    assert d == 0.0 and F.accounted_epsilon([(e, d)] * 6, 1e-5) == pytest.approx(1.0)
    # (eps, delta): PLD composition of the split stays within the target and uses most of it
    e, d = F.split_budget(1.0, 1e-5, 30)
    total = F.accounted_epsilon([(e, d)] * 30, 1e-5)
    assert total <= 1.0 and e > 1.0 / 30  # better than basic composition at 30 parts
    assert 30 * d <= 1e-5
    # a larger per-part epsilon would exceed the target
    assert F.accounted_epsilon([(e * 1.05, d)] * 30, 1e-5) > 1.0
    # more parts than the delta allows: no finite epsilon
    assert math.isinf(F.accounted_epsilon([(0.1, 1e-5)] * 3, 1e-5))


def test_tuning_composition_is_within_budget():
    """Algorithm 4 (Theorem 26): disjoint parts and a disjoint validation part, so the total is epsilon, as the
    fitted guarantee states; a sequential tune-then-fit on the same rows composes to the sum."""
    X, y, _, _ = F.load_task_data("satimage", "binary", 400, 10, 0)
    est = F.MECHANISMS["chaudhuri-tuned"].factory(0.7, 0.0, {"n": 400, "d": X.shape[1], "K": 2},
                                                  np.random.default_rng(0)).fit(X, y)
    # objective perturbation's floating-point-safe release costs a small delta (dpkernels.argmin_release)
    assert est.guarantee_.epsilon == 0.7 and 0.0 < est.guarantee_.delta < 1e-6
    assert F.accounted_epsilon([(0.2, 0.0), (0.5, 0.0)], 1e-5) == pytest.approx(0.7)
    assert F.accounted_epsilon([(0.2, 0.0), (0.5, 4e-6)], 1e-5) <= 0.7 + 1e-12


@pytest.mark.parametrize("bad", [
    {"mechanism": "nope"},
    {"dataset": "mnist"},
    {"epsilon": 0.0},
    {"epsilon": float("inf")},
    {"epsilon": None},
    {"delta": 1e-2},  # above 1 / n_train
    {"task": "multiclass", "dataset": "adult"},
    {"mechanism": "park-epc", "task": "binary"},
    {"mechanism": "nonprivate-svc", "epsilon": 1.0},
    {"n_train": 5},
])
def test_invalid_configs_are_refused(bad):
    c = {"dataset": "satimage", "task": "binary", "mechanism": "bassily-alg2", "epsilon": 1.0, "delta": 1e-5, "seed": 0,
         **SMALL, **bad}
    with pytest.raises(ValueError):
        F.run_task(c)
    with pytest.raises(ValueError):
        F.split_budget(1.0, 1e-5, 0)


def test_public_features_are_per_record_and_in_the_unit_ball():
    X, y, Xte, _ = F.load_task_data("satimage", "binary", 200, 50, 1)
    assert np.all(np.linalg.norm(X, axis=1) <= 1.0 + 1e-12)
    assert set(np.unique(y)) <= {-1, 1}
    import pandas as pd

    raw = pd.DataFrame(np.full((3, 36), 255.0))
    one = F.public_features("satimage", raw.iloc[:1])
    assert np.array_equal(F.public_features("satimage", raw)[:1], one)  # no dependence on the other rows


def _results(errors_a, errors_b, eps=0.1):
    import pandas as pd

    rows = []
    for m, errs in (("bassily-alg2", errors_a), ("chaudhuri-objective-logistic", errors_b)):
        for s, e in enumerate(errs):
            rows.append({"dataset": "adult", "task": "binary", "mechanism": m, "epsilon": eps, "seed": s, "error": e,
                         "n_train": 100, "d": 5, "fit_seconds": 0.1, "peak_mb": 1.0, "epsilon_spent": eps,
                         "base_error": 0.25, "skipped": ""})
    return pd.DataFrame(rows)


def test_recommendation_separates_only_when_intervals_do_not_overlap():
    sep = _results([0.10, 0.11, 0.10, 0.12, 0.11], [0.20, 0.21, 0.19, 0.20, 0.22])
    rec = F.recommendation(F.summarise(sep), sep)
    assert rec.mechanism.tolist() == ["bassily-alg2"] and rec.verdict.tolist() == ["separated"]
    assert rec.paired_p.iloc[0] < 0.01 and bool(rec.beats_majority.iloc[0])
    tie = _results([0.10, 0.30, 0.12, 0.28, 0.11], [0.12, 0.29, 0.15, 0.27, 0.16])
    rec = F.recommendation(F.summarise(tie), tie)
    assert rec.verdict.tolist() == ["tie"] and not bool(rec.beats_majority.iloc[0])
    assert F.paired_claim(tie, "adult", "binary", "chaudhuri-objective-logistic", "bassily-alg2", [0.1])["holds"] is False


def test_a_privacy_leak_warning_fails_the_task(monkeypatch):
    """A mechanism that takes a bound from the data warns (PrivacyLeakWarning); the sweep must not pass it by."""
    from dpkernels.mechanisms import PrivateSVMFinite

    leaky = F.Mechanism("rubinstein-finite", "leaky", "test", "pure", False,
                        lambda e, d, info, r: PrivateSVMFinite(epsilon=e, data_norm="data", classes=[-1, 1], random_state=r))
    monkeypatch.setitem(F.MECHANISMS, "rubinstein-finite", leaky)
    c = {"dataset": "satimage", "task": "binary", "mechanism": "rubinstein-finite", "epsilon": 1.0, "delta": 1e-5,
         "seed": 0, **SMALL}
    from dpkernels._validation import PrivacyLeakWarning

    with pytest.raises(PrivacyLeakWarning):
        F.run_task(c)


def test_paired_claim_takes_seeds_as_the_units():
    """Two epsilons per seed are one unit: the test counts seeds, and a difference that is large at one epsilon and
    opposite at the other, seed by seed, is averaged before the test."""
    import pandas as pd

    rows = []
    for s in range(6):
        for eps, (ea, eb) in ((0.05, (0.10, 0.30)), (0.1, (0.30, 0.10))):
            rows += [{"dataset": "adult", "task": "binary", "mechanism": m, "epsilon": eps, "seed": s, "error": e + 0.001 * s,
                      "skipped": ""} for m, e in (("a", ea), ("b", eb))]
    t = F.paired_claim(pd.DataFrame(rows), "adult", "binary", "a", "b", [0.05, 0.1])
    assert t["n_seeds"] == 6 and t["mean_diff"] == pytest.approx(0.0, abs=1e-12) and t["holds"] is False
