"""A content-addressed cache for work that re-runs repeat (``joblib.Memory``), outside the repository.

Results are keyed by the function's code and its arguments (joblib hashes numpy arrays by content, so a data set
is keyed by its bytes, not its name), under a folder named after a hash of the whole ``dpkernels`` source: any
change to the library starts a fresh cache, so a cached result never outlives the code that computed it (joblib
alone would not notice a change in a function the cached one calls).  The cache lives in
``$DPKERNELS_CACHE/joblib/<source hash>`` (default: the user cache directory, ``~/.cache/dpkernels`` on Linux), is
safe to delete at any time, and is switched off by ``DPKERNELS_NO_CACHE=1`` (``make test`` computes everything).
Cache only deterministic, non-private computations whose inputs are all arguments (a non-private solve, a
sensitivity search with a fixed seed), never a release.
"""

from __future__ import annotations

import hashlib
import os
from functools import lru_cache
from pathlib import Path

from joblib import Memory

__all__ = ["memory", "cache_dir", "source_hash"]


@lru_cache(maxsize=1)
def source_hash() -> str:
    """SHA-1 (12 hex digits) of every Python file of the installed ``dpkernels`` package."""
    root = Path(__file__).resolve().parent
    h = hashlib.sha1()
    for path in sorted(root.rglob("*.py")):
        h.update(str(path.relative_to(root)).encode())
        h.update(path.read_bytes())
    return h.hexdigest()[:12]


def cache_dir() -> Path:
    """``$DPKERNELS_CACHE/joblib/<source hash>`` (the same root the data loaders use)."""
    from dpkernels.datasets import _cache_dir

    return _cache_dir() / "joblib" / source_hash()


@lru_cache(maxsize=None)
def _memory(location: str | None) -> Memory:
    return Memory(location, verbose=0)


def memory() -> Memory:
    """The project's ``joblib.Memory`` (a no-op when ``DPKERNELS_NO_CACHE`` is set)."""
    if os.environ.get("DPKERNELS_NO_CACHE"):
        return _memory(None)
    return _memory(str(cache_dir()))
