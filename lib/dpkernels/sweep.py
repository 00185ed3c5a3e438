"""Embarrassingly parallel sweeps with a resumable, content-addressed result store, on one machine or a cluster.

A sweep is a list of configurations (JSON-serialisable dicts) and a task function ``task(config) -> dict`` (a
module-level function, importable wherever it runs).  :func:`run_sweep`

* keys each configuration by a hash of its canonical JSON and of the library's source
  (:func:`dpkernels.cache.source_hash`), so a changed library never reuses an old result;
* skips configurations whose result is already in the store, so a rerun computes only what is missing;
* writes each result as soon as it arrives (atomically: a temporary file renamed into place), so an interrupted
  sweep loses nothing that finished;
* runs the rest through joblib: locally (``n_jobs`` processes) or, when a Dask scheduler address is given (the
  ``scheduler`` argument, ``dpkernels reproduce --scheduler ADDRESS`` or the ``DPKERNELS_SCHEDULER`` environment
  variable), on that Dask cluster through joblib's ``dask`` backend.  Results travel back to the caller, which alone
  writes the store: workers need the package, not the store's file system.

The store is a folder of ``<hash>.json`` files (default ``$DPKERNELS_CACHE/sweeps/<name>``); deleting it only costs
recomputation.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from collections.abc import Callable, Sequence
from contextlib import nullcontext
from pathlib import Path
from typing import Any

import pandas as pd
from joblib import Parallel, delayed, parallel_config
from tqdm import tqdm  # text bars: tqdm.auto warns "IProgress not found" in kernels without ipywidgets

from dpkernels.cache import source_hash

__all__ = ["config_key", "ResultStore", "run_sweep", "scheduler_address", "SCHEDULER_ENV"]

SCHEDULER_ENV = "DPKERNELS_SCHEDULER"


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
        p = self.path(config_key(config))
        if not p.exists():
            return None
        return json.loads(p.read_text())["result"]

    def put(self, config: dict[str, Any], result: dict[str, Any]) -> None:
        key = config_key(config)
        fd, tmp = tempfile.mkstemp(dir=self.root, suffix=".tmp")
        with os.fdopen(fd, "w") as fh:
            json.dump({"config": config, "result": result}, fh, default=float)
        os.replace(tmp, self.path(key))


def scheduler_address(scheduler: str | None = None) -> str | None:
    """The Dask scheduler to use: the argument, else ``$DPKERNELS_SCHEDULER``, else None (local joblib)."""
    return scheduler or os.environ.get(SCHEDULER_ENV) or None


def _call(task: Callable[[dict[str, Any]], dict[str, Any]], config: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    return config, task(config)


def run_sweep(task: Callable[[dict[str, Any]], dict[str, Any]], configs: Sequence[dict[str, Any]], store: ResultStore, *,
              n_jobs: int = 1, scheduler: str | None = None, progress: bool = True, desc: str = "sweep") -> pd.DataFrame:
    """Run ``task`` on every configuration missing from ``store``; return all results (config columns + result
    columns), in the order of ``configs``."""
    todo = [c for c in configs if store.get(c) is None]
    address = scheduler_address(scheduler)
    if todo:
        client = None
        if address:
            from distributed import Client

            client = Client(address)
        ctx = parallel_config(backend="dask") if address else nullcontext()
        try:
            with ctx:
                jobs = Parallel(n_jobs=-1 if address else n_jobs, return_as="generator_unordered")(
                    delayed(_call)(task, c) for c in todo)
                for config, result in tqdm(jobs, total=len(todo), desc=desc, disable=not progress):
                    store.put(config, result)
        finally:
            if client is not None:
                client.close()
    rows = []
    for c in configs:
        r = store.get(c)
        if r is None:  # pragma: no cover - a task that returned nothing
            raise RuntimeError(f"no result for {c}")
        rows.append({**c, **r})
    return pd.DataFrame(rows)
