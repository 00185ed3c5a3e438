"""Resumable sweeps: a content-addressed store, local joblib and a Dask cluster (distributed.LocalCluster)."""

from __future__ import annotations

import json

import pytest

from dpkernels.sweep import ResultStore, config_key, run_sweep


def square(config):
    if config.get("fail"):
        raise RuntimeError("interrupted")
    return {"y": config["x"] ** 2}


def test_store_resumes_and_keys_by_content(tmp_path):
    store = ResultStore(tmp_path / "s")
    configs = [{"x": i} for i in range(5)]
    with pytest.raises(RuntimeError, match="interrupted"):  # an interrupted sweep keeps what finished
        run_sweep(square, configs[:3] + [{"x": 9, "fail": True}], store, progress=False)
    done = {json.loads(p.read_text())["config"]["x"] for p in (tmp_path / "s").glob("*.json")}
    assert done <= {0, 1, 2} and done
    calls = []

    def counted(config):
        calls.append(config["x"])
        return square(config)

    out = run_sweep(counted, configs, store, progress=False)
    assert out["y"].tolist() == [0, 1, 4, 9, 16]
    assert sorted(calls) == sorted(set(range(5)) - done)  # only what was missing
    assert config_key({"a": 1, "b": 2}) == config_key({"b": 2, "a": 1}) != config_key({"a": 1, "b": 3})


def test_sweep_runs_on_a_dask_cluster(tmp_path):
    distributed = pytest.importorskip("distributed")
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=False, dashboard_address=None) as cluster:
        out = run_sweep(square, [{"x": i} for i in range(6)], ResultStore(tmp_path / "d"), scheduler=cluster.scheduler_address,
                        progress=False)
    assert out["y"].tolist() == [0, 1, 4, 9, 16, 25]
