"""Resumable sweeps: a content-addressed store, local joblib processes and a Dask cluster (distributed.LocalCluster)."""

from __future__ import annotations

import json
import time

import pytest

from dpkernels.sweep import LOCAL, ResultStore, SweepError, config_key, run_sweep


def square(config):
    if config.get("fail"):
        raise RuntimeError("interrupted")
    return {"y": config["x"] ** 2}


def nested(config):
    """A task that parallelises inside itself, as diffprivlib's LogisticRegression.fit does."""
    from joblib import Parallel, delayed
    from joblib.parallel import get_active_backend

    backend, _ = get_active_backend()
    return {"y": sum(Parallel(n_jobs=2)(delayed(abs)(-i) for i in range(config["x"]))),
            "backend": type(backend).__name__}


def slow_or_fail(config):
    if config.get("fail"):
        raise ValueError("no data on this worker")
    time.sleep(config["sleep"])
    return {"y": 1}


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


def test_cost_orders_the_work_most_expensive_first(tmp_path):
    seen = []

    def record(config):
        seen.append(config["x"])
        return {"y": 0}

    run_sweep(record, [{"x": i} for i in (3, 1, 4, 2)], ResultStore(tmp_path / "c"), progress=False, cost=lambda c: c["x"])
    assert seen == [4, 3, 2, 1]


def test_sweep_runs_on_a_dask_cluster(tmp_path):
    distributed = pytest.importorskip("distributed")
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=False, dashboard_address=None) as cluster:
        out = run_sweep(square, [{"x": i} for i in range(6)], ResultStore(tmp_path / "d"), scheduler=cluster.scheduler_address,
                        progress=False)
    assert out["y"].tolist() == [0, 1, 4, 9, 16, 25]


def test_nested_parallelism_runs_serially_on_worker_processes(tmp_path):
    """One worker process with one thread: a task calling joblib.Parallel must not wait for a second slot (the
    deadlock of diffprivlib under joblib's dask backend)."""
    pytest.importorskip("distributed")
    start = time.perf_counter()
    out = run_sweep(nested, [{"x": i} for i in range(4)], ResultStore(tmp_path / "n"), scheduler=LOCAL, n_jobs=1,
                    progress=False)
    assert out["y"].tolist() == [0, 0, 1, 3]
    assert set(out["backend"]) == {"SequentialBackend"}
    assert time.perf_counter() - start < 120
    local = run_sweep(nested, [{"x": i} for i in range(4)], ResultStore(tmp_path / "m"), n_jobs=2, progress=False)
    assert local["y"].tolist() == out["y"].tolist() and set(local["backend"]) == {"SequentialBackend"}


def test_a_failing_task_fails_the_sweep_fast_and_names_its_configuration(tmp_path):
    pytest.importorskip("distributed")
    configs = [{"fail": True, "sleep": 0}] + [{"sleep": 30, "i": i} for i in range(4)]
    start = time.perf_counter()
    with pytest.raises(SweepError, match=r"no data on this worker") as err:
        run_sweep(slow_or_fail, configs, ResultStore(tmp_path / "f"), scheduler=LOCAL, n_jobs=2, progress=False,
                  cost=lambda c: 0 if c.get("fail") is None else 1)
    assert '"fail": true' in str(err.value)
    assert time.perf_counter() - start < 60  # the four 30 s tasks were cancelled, not awaited
