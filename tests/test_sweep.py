"""Resumable sweeps: a content-addressed store, local joblib processes and a Dask cluster (distributed.LocalCluster)."""

from __future__ import annotations

import json
import re
import time

import pytest

from dpkernels.sweep import LOCAL, PreflightError, ResultStore, SweepError, config_key, preflight, run_sweep


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


def sleep_then(config):
    time.sleep(config.get("sleep", 0))
    if config.get("fail"):
        raise ValueError("broken")
    return {"y": config["x"]}


def test_a_truncated_store_entry_is_recomputed_with_a_warning_naming_its_file(tmp_path):
    """Issue 25: one truncated JSON file made every later run die with a bare JSONDecodeError."""
    store = ResultStore(tmp_path / "t")
    configs = [{"x": i} for i in range(3)]
    run_sweep(square, configs, store, progress=False)
    path = store.path(config_key({"x": 1}))
    path.write_text(path.read_text()[:10])  # a killed process, a full disk
    store.path(config_key({"x": 2})).write_text('{"config": {"x": 2}}')  # valid JSON without a result
    calls = []

    def counted(config):
        calls.append(config["x"])
        return square(config)

    with pytest.warns(RuntimeWarning) as record:
        out = run_sweep(counted, configs, store, progress=False)
    assert sorted(calls) == [1, 2] and out["y"].tolist() == [0, 1, 4]
    assert re.fullmatch(rf"unreadable sweep result {re.escape(str(path))} \(JSONDecodeError\): recomputing it",
                        str(record[0].message))
    assert json.loads(path.read_text())["result"] == {"y": 1}  # rewritten whole
    assert run_sweep(counted, configs, store, progress=False)["y"].tolist() == [0, 1, 4] and len(calls) == 2


def test_a_failing_preflight_stops_the_sweep_before_any_work_and_names_the_fix(tmp_path):
    store = ResultStore(tmp_path / "p")
    run_sweep(square, [{"x": 1}], store, progress=False)  # an earlier result
    calls = []

    def counted(config):
        calls.append(config["x"])
        return square(config)

    def broken():
        raise TypeError("fmin_l_bfgs_b() got an unexpected keyword argument 'iprint'")

    checks = {"mechanism 'ours'": lambda: None, "mechanism 'diffprivlib-lr'": broken}
    with pytest.raises(PreflightError, match=r"^frontier: mechanism 'diffprivlib-lr' cannot run here, nothing was "
                       r"computed: it failed on a tiny public problem with TypeError: fmin_l_bfgs_b\(\) got .*'iprint'\. "
                       r'Fix: install the supported versions: pip install "dpkernels\[compare\]".*Found: Python 3\.\d+'
                       r".*, scipy \d"):
        run_sweep(counted, [{"x": i} for i in range(4)], store, progress=False, desc="frontier", preflight_checks=checks)
    assert calls == [] and store.get({"x": 1}) == {"y": 1}  # nothing ran, nothing was lost
    out = run_sweep(counted, [{"x": 1}], store, progress=False, preflight_checks=checks)  # nothing to compute: no check
    assert out["y"].tolist() == [1] and calls == []
    preflight({"a": lambda: None})  # passing checks return quietly


@pytest.mark.smoke
@pytest.mark.parametrize("name", sorted(__import__("dpkernels.experiments.frontier", fromlist=["_"]).MECHANISMS))
def test_every_frontier_mechanism_passes_its_preflight(name):
    """Each mechanism of the frontier fits a tiny public problem here (diffprivlib's LogisticRegression included):
    run under every supported Python by tests/test_install.py."""
    from dpkernels.experiments import frontier

    frontier.preflight_fit(name)


def test_the_frontier_sweep_runs_its_preflight_before_any_fit(tmp_path, monkeypatch):
    """A mechanism that cannot run here (diffprivlib under SciPy 1.18 fails in every fit) stops the frontier's sweep
    at once, by name, before any task (issue 25: the scale sweep lost the work in flight of 2,549 fits)."""
    pytest.importorskip("diffprivlib")
    import diffprivlib.models

    from dpkernels.experiments import frontier

    def fit(self, X, y, sample_weight=None):
        raise TypeError("fmin_l_bfgs_b() got an unexpected keyword argument 'iprint'")

    monkeypatch.setattr(diffprivlib.models.LogisticRegression, "fit", fit)
    monkeypatch.setattr(frontier, "run_task", lambda config: pytest.fail("a task ran before the preflight failed"))
    configs = frontier.make_configs(["satimage", "adult"], ["diffprivlib-lr", "chaudhuri-output-logistic", "park-epc"],
                                    [1.0], 1, {"adult": [1000], "satimage": [1000]})
    store = ResultStore(tmp_path / "f")
    with pytest.raises(PreflightError, match="frontier: mechanism 'diffprivlib-lr' cannot run here"):
        frontier.run_frontier(configs, store=store, progress=False)
    assert list(store.root.iterdir()) == []


def test_a_failing_sweep_on_dask_keeps_what_finished_and_a_rerun_computes_only_the_rest(tmp_path):
    distributed = pytest.importorskip("distributed")
    store = ResultStore(tmp_path / "k")
    configs = [{"x": i} for i in range(4)] + [{"x": 9, "fail": True, "sleep": 1.0}]
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=False, dashboard_address=None) as cluster:
        with pytest.raises(SweepError, match="broken"):
            run_sweep(sleep_then, configs, store, scheduler=cluster.scheduler_address, progress=False)
    assert sorted(json.loads(p.read_text())["config"]["x"] for p in store.root.glob("*.json")) == [0, 1, 2, 3]
    calls = []

    def counted(config):
        calls.append(config["x"])
        return sleep_then({**config, "fail": False})

    out = run_sweep(counted, configs, store, progress=False)
    assert calls == [9] and out["y"].tolist() == [0, 1, 2, 3, 9]


def test_cheap_configurations_are_batched_in_cost_order_and_expensive_ones_run_alone():
    from dpkernels.sweep import batches

    todo = [{"x": x} for x in (50, 40, 9, 8, 7, 30, 6, 5, 4, 3, 2)]
    groups = batches(todo, lambda c: c["x"], 10, 3)
    assert [[c["x"] for c in g] for g in groups] == [[50], [40], [9, 8, 7], [30], [6, 5, 4], [3, 2]]
    assert [c for g in groups for c in g] == todo  # nothing lost, nothing repeated, the order kept
    assert all(len(g) == 1 for g in batches(todo, None, 10, 3))  # no cost: no batches
    assert all(len(g) == 1 for g in batches(todo, lambda c: c["x"], None, 3))
    with pytest.raises(ValueError, match="batch_size"):
        batches(todo, lambda c: c["x"], 10, 0)


def keyed(config):
    """The Dask key of the task running this configuration (members of one batch share it)."""
    from distributed import get_worker

    time.sleep(config.get("sleep", 0))
    if config.get("fail"):
        raise ValueError("broken")
    return {"y": config["x"] ** 2, "key": get_worker().get_current_task()}


def test_batched_tasks_on_dask_return_every_result_and_a_failure_keeps_what_finished(tmp_path):
    distributed = pytest.importorskip("distributed")
    configs = [{"x": i} for i in range(10)]
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=False, dashboard_address=None) as cluster:
        out = run_sweep(keyed, configs, ResultStore(tmp_path / "b"), scheduler=cluster.scheduler_address,
                        progress=False, cost=lambda c: c["x"], batch_below=7, batch_size=3)
        assert out["y"].tolist() == [i * i for i in range(10)]
        by_key = out.groupby("key")["x"].apply(sorted).tolist()
        assert sorted(by_key) == [[0], [1, 2, 3], [4, 5, 6], [7], [8], [9]]  # 6 Dask tasks for 10 configurations
        store = ResultStore(tmp_path / "bf")
        failing = [{"x": 9}, {"x": 3}, {"x": 2, "fail": True, "sleep": 1.0}, {"x": 1}]
        with pytest.raises(SweepError, match="broken"):
            run_sweep(keyed, failing, store, scheduler=cluster.scheduler_address, progress=False,
                      cost=lambda c: c["x"], batch_below=5, batch_size=3)
    kept = sorted(json.loads(p.read_text())["config"]["x"] for p in store.root.glob("*.json"))
    assert kept == [3, 9]  # the batch's member before its failure is kept, the one after it never ran; the task that
    # ran alone finished during the failing member's second


def test_distinct_batches_get_distinct_dask_keys():
    from dpkernels.sweep import _batch_key

    a, b, c = {"x": 1}, {"x": 2}, {"x": 3}
    assert _batch_key([a, b]) != _batch_key([a, c])  # same first member, same length
    assert _batch_key([a, b]) == _batch_key([a, b]) and _batch_key([a]) == f"sweep-{config_key(a)}"


def test_the_thread_limit_is_scanned_once_per_set_of_modules_and_still_applies():
    import sys
    import types

    from threadpoolctl import threadpool_info

    from dpkernels import sweep

    first = sweep._thread_controller()
    assert sweep._thread_controller() is first  # no new scan while no module was imported
    sys.modules["_dpkernels_test_new_module"] = types.ModuleType("_dpkernels_test_new_module")
    try:
        assert sweep._thread_controller() is not first  # an import may have loaded a library: scanned again
    finally:
        del sys.modules["_dpkernels_test_new_module"]

    def threads(config):
        return {"blas": [p["num_threads"] for p in threadpool_info() if p["user_api"] in ("blas", "openmp")]}

    _, result = sweep.call_serially(threads, {})
    assert result["blas"] and set(result["blas"]) == {1}


def _exec_environ():
    """The environment this process started with (what glibc read), not os.environ as changed since."""
    from pathlib import Path

    raw = Path("/proc/self/environ").read_bytes().split(b"\0")
    env = dict(item.decode().split("=", 1) for item in raw if b"=" in item)
    return {k: env.get(k) for k in ("MALLOC_MMAP_THRESHOLD_", "MALLOC_TRIM_THRESHOLD_", "MALLOC_ARENA_MAX",
                                    "OMP_NUM_THREADS")}


@pytest.mark.skipif(not __import__("sys").platform.startswith("linux"), reason="reads /proc/self/environ")
def test_a_local_clusters_workers_keep_freed_memory_and_the_caller_keeps_its_environment(monkeypatch):
    """The local cluster's worker processes start with WORKER_MALLOC_ENV in the environment they were executed with
    (Dask's own default trims the heap above 64 KiB, so a large fit's arrays are faulted in afresh for every task),
    Dask's other pre-spawn settings kept, and the caller's environment is as it was (Dask writes its pre-spawn
    variables, PYTHONHASHSEED among them, into the caller's before it spawns a worker)."""
    import os

    from dpkernels.sweep import WORKER_MALLOC_ENV, _local_cluster

    monkeypatch.delenv("PYTHONHASHSEED", raising=False)
    monkeypatch.delenv("MALLOC_ARENA_MAX", raising=False)
    monkeypatch.delenv("MALLOC_MMAP_THRESHOLD_", raising=False)
    monkeypatch.setenv("MALLOC_TRIM_THRESHOLD_", "65536")  # what an earlier cluster's Nanny leaves in os.environ
    before = dict(os.environ)
    cluster = _local_cluster(1)
    try:
        import distributed

        with distributed.Client(cluster) as client:
            (seen,) = client.run(_exec_environ).values()
    finally:
        cluster.close()
    assert seen["MALLOC_MMAP_THRESHOLD_"] == WORKER_MALLOC_ENV["MALLOC_MMAP_THRESHOLD_"] == str(4 * 2**30)
    assert seen["MALLOC_TRIM_THRESHOLD_"] == WORKER_MALLOC_ENV["MALLOC_TRIM_THRESHOLD_"] == str(64 * 2**30)
    assert seen["MALLOC_ARENA_MAX"] == WORKER_MALLOC_ENV["MALLOC_ARENA_MAX"] == "1"
    assert seen["OMP_NUM_THREADS"] == "1"  # Dask's own pre-spawn setting survives
    assert dict(os.environ) == before
