"""Embarrassingly parallel sweeps with a resumable, content-addressed result store, on one machine or a Dask cluster.

A sweep is a list of configurations (JSON-serialisable dicts) and a task function ``task(config) -> dict`` (a
module-level function, importable wherever it runs).  :func:`run_sweep`

* keys each configuration by a hash of its canonical JSON and of the library's source
  (:func:`dpkernels.cache.source_hash`), so a changed library never reuses an old result;
* skips configurations whose result is already in the store, so a rerun computes only what is missing;
* writes each result as soon as it arrives (atomically: a temporary file renamed into place), so an interrupted
  sweep loses nothing that finished;
* runs the rest, most expensive first when a ``cost`` is given (a shorter tail), either through joblib's loky
  processes (``scheduler=None``, ``n_jobs`` of them) or on a Dask cluster (:mod:`distributed`): ``scheduler="local"``
  starts a ``LocalCluster`` of ``n_jobs`` worker *processes* with one thread each for the duration of the sweep; any
  other value is the address of a running scheduler (also from ``dpkernels reproduce --scheduler ADDRESS`` or the
  ``DPKERNELS_SCHEDULER`` environment variable).  Results travel back to the caller, which alone writes the store:
  workers need the package and the data, not the store's file system; on Dask, cheap configurations (a ``cost``
  below ``batch_below``) run several to a task (:func:`batches`);
* checks before it computes anything (``preflight``): each named check (one per mechanism, say: a fit on a tiny
  public problem) runs once in the caller, and the first that fails stops the sweep at once with
  :class:`PreflightError`, naming it, the fix and the versions found; a broken dependency (diffprivlib under a SciPy
  it does not support) then costs seconds, not the work in flight of a long sweep;
* fails fast: the first task that raises cancels the rest and re-raises its error with the configuration; every
  result that finished is in the store, so a rerun resumes;
* recomputes a store entry it cannot read (a file truncated by a full disk or a killed process), with a
  ``RuntimeWarning`` naming the file.

:func:`machine_cpu_seconds` reads the machine's busy, idle and stolen CPU seconds (a caller records their difference
over a sweep: how busy the machine was, and whether a virtual machine's host took cores away).

Inside a task, nested parallelism runs serially (:func:`call_serially`): one BLAS thread and joblib's sequential
backend.  Without it a library that calls ``joblib.Parallel`` itself (diffprivlib's ``LogisticRegression.fit``)
would, on a Dask worker, submit nested tasks to the cluster while every worker thread waits for them: a deadlock.

The store is a folder of ``<hash>.json`` files (default ``$DPKERNELS_CACHE/sweeps/<name>``); deleting it only costs
recomputation.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import math
import os
import sys
import tempfile
import warnings
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import pandas as pd
from joblib import Parallel, delayed, parallel_config
from tqdm import tqdm  # text bars: tqdm.auto warns "IProgress not found" in kernels without ipywidgets

from dpkernels.cache import source_hash

__all__ = ["config_key", "ResultStore", "run_sweep", "scheduler_address", "call_serially", "call_batch", "batches",
           "preflight", "restored_environ", "machine_cpu_seconds", "SweepError", "PreflightError", "SCHEDULER_ENV",
           "LOCAL", "PREFLIGHT_FIX", "WORKER_MALLOC_ENV"]

SCHEDULER_ENV = "DPKERNELS_SCHEDULER"
#: ``scheduler`` value that starts a Dask LocalCluster of worker processes (one thread each) for one sweep.
LOCAL = "local"

Task = Callable[[dict[str, Any]], dict[str, Any]]
#: What a failed preflight tells the user to do.
PREFLIGHT_FIX = ('install the supported versions: pip install "dpkernels[compare]" (README, Install), or leave the '
                 "mechanism out of the sweep")
#: The distributions whose versions a failed preflight reports.
_VERSIONS_OF = ("numpy", "scipy", "scikit-learn", "cvxpy", "diffprivlib")


def config_key(config: dict[str, Any]) -> str:
    """SHA-1 of the configuration's canonical JSON and the library's source hash."""
    text = json.dumps(config, sort_keys=True, default=str)
    return hashlib.sha1(f"{source_hash()}\n{text}".encode()).hexdigest()


class ResultStore:
    """A folder of results, one JSON file per configuration key."""

    def __init__(self, root: Path | str) -> None:
        self.root = Path(root)
        self.root.mkdir(parents=True, exist_ok=True)

    @classmethod
    def default(cls, name: str) -> "ResultStore":
        from dpkernels.datasets import _cache_dir

        return cls(Path(os.environ.get("DPKERNELS_SWEEPS") or _cache_dir() / "sweeps") / name)

    def path(self, key: str) -> Path:
        return self.root / f"{key}.json"

    def get(self, config: dict[str, Any]) -> dict[str, Any] | None:
        """The stored result of ``config``; None when there is none, or when its file cannot be read (truncated,
        not JSON, no result): then a ``RuntimeWarning`` names the file and the sweep recomputes it."""
        p = self.path(config_key(config))
        if not p.exists():
            return None
        try:
            result = json.loads(p.read_text())["result"]
            if not isinstance(result, dict):
                raise TypeError("the result is not a mapping")
            return result
        except (OSError, UnicodeDecodeError, ValueError, KeyError, TypeError) as exc:
            warnings.warn(f"unreadable sweep result {p} ({type(exc).__name__}): recomputing it", RuntimeWarning,
                          stacklevel=2)
            return None

    def put(self, config: dict[str, Any], result: dict[str, Any]) -> None:
        key = config_key(config)
        fd, tmp = tempfile.mkstemp(dir=self.root, suffix=".tmp")
        with os.fdopen(fd, "w") as fh:
            json.dump({"config": config, "result": result}, fh, default=float)
        os.replace(tmp, self.path(key))


def scheduler_address(scheduler: str | None = None) -> str | None:
    """The Dask scheduler to use: the argument, else ``$DPKERNELS_SCHEDULER``, else None (local joblib processes).
    ``"local"`` (:data:`LOCAL`) means a LocalCluster started for the sweep."""
    return scheduler or os.environ.get(SCHEDULER_ENV) or None


_CONTROLLER: tuple[int, Any] | None = None


def _thread_controller() -> Any:
    """This process's ``threadpoolctl.ThreadpoolController``, scanned again only when the number of modules in
    ``sys.modules`` has changed since the last scan (an import that may have loaded another BLAS or OpenMP library): a
    scan of the loaded libraries costs about 2 ms, which a sweep of many small tasks would pay on every task.  A
    library loaded without a new Python module (``ctypes``, a lazily loaded threading layer) is not seen until the
    next import, as ``threadpool_limits`` does not see one loaded during its block."""
    global _CONTROLLER
    from threadpoolctl import ThreadpoolController

    n_modules = len(sys.modules)
    if _CONTROLLER is None or _CONTROLLER[0] != n_modules:
        _CONTROLLER = (n_modules, ThreadpoolController())
    return _CONTROLLER[1]


def call_serially(task: Task, config: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """``(config, task(config))`` with nested parallelism made serial: one BLAS / OpenMP thread and joblib's
    sequential backend for any ``joblib.Parallel`` the task calls (whatever backend the caller or a Dask worker set)."""
    with _thread_controller().limit(limits=1), parallel_config(backend="sequential"):
        try:
            return config, task(config)
        except Exception as exc:
            raise SweepError(f"task failed for {json.dumps(config, sort_keys=True, default=str)}: "
                             f"{type(exc).__name__}: {exc}") from exc


class SweepError(RuntimeError):
    """A task of a sweep failed; the message names its configuration and the task's error."""


class PreflightError(RuntimeError):
    """A check run before a sweep failed: the message names it, the error, the fix and the versions found."""


def _versions() -> str:
    import platform
    from importlib.metadata import PackageNotFoundError, version

    found = [f"Python {platform.python_version()}"]
    for dist in _VERSIONS_OF:
        try:
            found.append(f"{dist} {version(dist)}")
        except PackageNotFoundError:
            found.append(f"{dist} not installed")
    return ", ".join(found)


def preflight(checks: Mapping[str, Callable[[], object]], fix: str = PREFLIGHT_FIX, desc: str = "sweep") -> None:
    """Run each named check once, in order; raise :class:`PreflightError` for the first that raises, naming it, its
    error, ``fix`` and the versions of the libraries the mechanisms rest on (:data:`_VERSIONS_OF`)."""
    for name, check in checks.items():
        try:
            check()
        except Exception as exc:
            raise PreflightError(f"{desc}: {name} cannot run here, nothing was computed: it failed on a tiny public "
                                 f"problem with {type(exc).__name__}: {exc}. Fix: {fix}. Found: {_versions()}.") from exc


def _run_joblib(task: Task, todo: list[dict[str, Any]], n_jobs: int) -> Any:
    yield from Parallel(n_jobs=n_jobs, return_as="generator_unordered")(delayed(call_serially)(task, c) for c in todo)


def call_batch(task: Task, configs: list[dict[str, Any]]
               ) -> tuple[list[tuple[dict[str, Any], dict[str, Any]]], SweepError | None]:
    """:func:`call_serially` on each of ``configs`` in turn, in one call (one Dask task for several cheap ones): the
    ``(config, result)`` pairs that finished, and the :class:`SweepError` of the first that failed (None when none
    did; the configurations after it do not run)."""
    done = []
    for c in configs:
        try:
            done.append(call_serially(task, c))
        except SweepError as exc:
            return done, exc
    return done, None


def _batch_key(group: list[dict[str, Any]]) -> str:
    """The Dask key of a group: its one configuration's, or a hash of all its members' (distinct groups never share
    a key, also on a scheduler other clients use)."""
    if len(group) == 1:
        return f"sweep-{config_key(group[0])}"
    return "sweep-batch-" + hashlib.sha256("".join(config_key(c) for c in group).encode()).hexdigest()[:32]


def batches(todo: list[dict[str, Any]], cost: Callable[[dict[str, Any]], float] | None, batch_below: float | None,
            batch_size: int) -> list[list[dict[str, Any]]]:
    """``todo`` (in its order) as the groups one Dask task each runs: a configuration alone, or up to ``batch_size``
    consecutive configurations whose ``cost`` is below ``batch_below`` (none without a cost or a threshold)."""
    if batch_size < 1 or int(batch_size) != batch_size:
        raise ValueError(f"batch_size must be a positive integer, got {batch_size!r}")
    groups: list[list[dict[str, Any]]] = []
    open_group: list[dict[str, Any]] = []
    for c in todo:
        if cost is None or batch_below is None or cost(c) >= batch_below:
            groups.append([c])
            continue
        open_group.append(c)
        if len(open_group) == batch_size:
            groups.append(open_group)
            open_group = []
    if open_group:
        groups.append(open_group)
    return groups


#: glibc allocator settings of a local cluster's worker processes: freed memory stays in the worker's heap (no
#: ``mmap`` for blocks below 4 GiB, no trimming below 64 GiB free at the top, one arena) instead of going back to the
#: kernel.  Dask's default worker environment trims the heap above 64 KiB (``distributed.nanny.pre-spawn-environ``),
#: glibc maps large blocks apart, and a task runs on the worker's executor thread, whose arena glibc caps at 64 MiB
#: per heap and maps anything larger apart whatever the threshold (one arena, ``MALLOC_ARENA_MAX=1``, lifts that: a
#: worker runs one task at a time).  Without them a large fit's arrays (a 135,000 x 201 feature matrix, liblinear's
#: copy of it) came back from the kernel as fresh pages, faulted in and zeroed again for every task
#: (``benchmarks/bench_worker_malloc.py``: the frontier's largest tasks on a thread of one process under each
#: setting).  The cost is memory: each worker keeps its largest footprint until the sweep ends and the cluster with
#: it.  The results are the same bytes.
WORKER_MALLOC_ENV = {"MALLOC_MMAP_THRESHOLD_": str(4 * 2**30), "MALLOC_TRIM_THRESHOLD_": str(64 * 2**30),
                     "MALLOC_ARENA_MAX": "1"}


def machine_cpu_seconds() -> dict[str, float]:
    """The machine's CPU seconds since boot, summed over its cores (``psutil.cpu_times``): ``busy`` (user, nice,
    system, interrupts), ``idle`` (idle and I/O wait) and ``steal`` (time a virtual machine's cores waited for the
    host; 0 where the platform has none).  The difference of two readings says how busy the machine was between
    them, and whether the host took cores away.  NaN for each without ``psutil`` (installed with the notebooks)."""
    try:
        import psutil
    except ImportError:
        return {"busy": math.nan, "idle": math.nan, "steal": math.nan}
    t = psutil.cpu_times()
    part = lambda *names: float(sum(getattr(t, k, 0.0) for k in names))  # noqa: E731
    return {"busy": part("user", "nice", "system", "irq", "softirq"), "idle": part("idle", "iowait"),
            "steal": part("steal")}


@contextlib.contextmanager
def restored_environ() -> Iterator[None]:
    """On exit, ``os.environ`` as it was on entry: every variable the block set, changed or removed is put back."""
    saved = dict(os.environ)
    try:
        yield
    finally:
        for k in set(os.environ) - set(saved):
            del os.environ[k]
        for k, v in saved.items():
            if os.environ.get(k) != v:
                os.environ[k] = v


def _local_cluster(n_jobs: int) -> Any:
    """A ``LocalCluster`` of ``n_jobs`` worker processes with one thread each, silent, started with
    :data:`WORKER_MALLOC_ENV` in the workers' environment (Dask's ``pre-spawn-environ``, which it also writes into
    this process's ``os.environ`` before it spawns them, with ``PYTHONHASHSEED``: restored here once they run; a
    worker the Nanny restarts later writes them again).  Dask gives a variable already in this process's environment
    precedence over its config, so :data:`WORKER_MALLOC_ENV`'s names are removed from it while the workers start."""
    import dask
    from distributed import LocalCluster

    environ = {**dask.config.get("distributed.nanny.pre-spawn-environ", default={}), **WORKER_MALLOC_ENV}
    # workers log (at ERROR) a failed heartbeat when the scheduler closes first at the end: task errors reach the
    # caller as exceptions, so the cluster's own logs are silenced
    with restored_environ(), warnings.catch_warnings(), \
            dask.config.set({"distributed.nanny.pre-spawn-environ": environ}):
        for k in WORKER_MALLOC_ENV:  # Dask lets this process's variables win over its config: a cluster started here
            os.environ.pop(k, None)  # before (its Nanny wrote 65536 into os.environ) would override ours
        # another cluster on the default HTTP port: the scheduler picks a free one
        warnings.filterwarnings("ignore", message="Port .* is already in use", category=UserWarning)
        return LocalCluster(n_workers=max(1, int(n_jobs)), threads_per_worker=1, processes=True,
                            dashboard_address=None, silence_logs=logging.CRITICAL)


def _run_dask(task: Task, groups: list[list[dict[str, Any]]], address: str, n_jobs: int,
              priorities: list[float]) -> Any:
    from distributed import Client, as_completed

    cluster = _local_cluster(n_jobs) if address == LOCAL else None
    client = Client(cluster if cluster is not None else address)
    try:
        futures = [client.submit(call_batch, task, group, key=_batch_key(group), pure=False, priority=prio,
                                 retries=0) for group, prio in zip(groups, priorities)]
        yielded = set()
        for fut in as_completed(futures):
            failure = fut.exception() if fut.status != "finished" else None
            if failure is None:
                yielded.add(fut.key)
                done, failure = fut.result()
                yield from done  # a failed batch's members before its failure are kept too
            if failure is not None:  # the first failure cancels the rest and is raised here
                client.cancel([f for f in futures if f.status != "finished"])
                for f in futures:  # what finished meanwhile is kept
                    if f.status == "finished" and f.key not in yielded:
                        yield from f.result()[0]
                raise failure
    finally:
        client.close()
        if cluster is not None:
            cluster.close()


def run_sweep(task: Task, configs: Sequence[dict[str, Any]], store: ResultStore, *, n_jobs: int = 1,
              scheduler: str | None = None, progress: bool = True, desc: str = "sweep",
              cost: Callable[[dict[str, Any]], float] | None = None,
              preflight_checks: Mapping[str, Callable[[], object]] | None = None,
              batch_below: float | None = None, batch_size: int = 8) -> pd.DataFrame:
    """Run ``task`` on every configuration missing from ``store``; return all results (config columns + result
    columns), in the order of ``configs``.  ``cost(config)`` orders the work, most expensive first.
    ``preflight_checks``: named checks run once (:func:`preflight`) when anything is left to compute, before it is.
    On Dask, configurations whose ``cost`` is below ``batch_below`` run ``batch_size`` to a task (:func:`batches`:
    the scheduler's per-task cost spread over several cheap tasks; when one fails, the members before it are stored
    and those after it are not run); joblib batches cheap tasks itself."""
    todo = [c for c in configs if store.get(c) is None]
    if cost is not None:
        todo.sort(key=cost, reverse=True)
    address = scheduler_address(scheduler)
    if todo and preflight_checks:
        preflight(preflight_checks, desc=desc)
    if todo:
        if address:
            groups = batches(todo, cost, batch_below, batch_size)
            prios = [math.fsum(float(cost(c)) for c in g) if cost is not None else 0.0 for g in groups]
            stream = _run_dask(task, groups, address, n_jobs, prios)
        else:
            stream = _run_joblib(task, todo, n_jobs)
        for config, result in tqdm(stream, total=len(todo), desc=desc, disable=not progress, mininterval=2.0):
            store.put(config, result)
    rows = []
    for c in configs:
        r = store.get(c)
        if r is None:  # pragma: no cover - a task that returned nothing
            raise RuntimeError(f"no result for {c}")
        rows.append({**c, **r})
    return pd.DataFrame(rows)
