"""Issue 12's rule for every mechanism: a fitted object is a release.

Each paper's test module lists its estimators in ``RELEASE_CASES``: tuples ``(name, factory, X, y)`` where
``factory(**overrides)`` builds an unfitted estimator (it must accept ``random_state`` and ``keep_nonprivate``).
For every case:

* the pickle of a default fit holds no training row and no un-noised statistic (the ``nonprivate_`` attributes an
  evaluation-mode fit exposes), and not the seed;
* the fitted object holds nothing but its parameters, the released attributes its ``guarantee_`` names, and
  scikit-learn's public metadata;
* two clones of one seeded estimator add different noise;
* every estimator class exported by ``dpkernels.mechanisms`` has a case.
"""

from __future__ import annotations

import importlib
import pickle
from pathlib import Path

import numpy as np
import pytest
from sklearn.base import BaseEstimator, clone

import dpkernels.mechanisms as M
from dpkernels.mechanisms.base import PUBLIC_METADATA

HERE = Path(__file__).parent


def _cases() -> list[tuple]:
    out = []
    for path in sorted(HERE.glob("test_*.py")):
        if path.stem == "test_release_hygiene":
            continue
        mod = importlib.import_module(path.stem)
        out += list(getattr(mod, "RELEASE_CASES", []))
    return out


CASES = _cases()
IDS = [c[0] for c in CASES]


def _arrays(obj, depth=0):
    """Every numpy array reachable from an object's attributes (the secrets an evaluation fit exposes)."""
    if depth > 3:
        return
    if isinstance(obj, np.ndarray) and obj.dtype.kind == "f" and obj.size >= 1:
        yield obj
    elif isinstance(obj, (list, tuple)):
        for v in obj:
            yield from _arrays(v, depth + 1)
    elif hasattr(obj, "__dict__") and not isinstance(obj, type):
        for v in vars(obj).values():
            yield from _arrays(v, depth + 1)


def _contains(blob: bytes, arr: np.ndarray) -> bool:
    a = np.ascontiguousarray(arr, dtype=np.float64).ravel()
    if a.size == 0 or not np.any(a):
        return False
    if a.tobytes() in blob:
        return True
    head = a[: min(a.size, 4)]
    # a prefix says something only when it is not a run of one value (zeros occur in every pickle)
    return a.size > 1 and len(np.unique(head)) > 1 and head.tobytes() in blob


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_pickle_holds_no_training_row_no_unnoised_statistic_no_seed(case):
    name, factory, X, y = case
    est = factory(random_state=12345).fit(X, y)
    blob = pickle.dumps(est)
    X = np.asarray(X, dtype=np.float64)
    rows = [X[i] for i in range(min(len(X), 50)) if np.any(X[i])]
    assert not any(_contains(blob, r) for r in rows), f"{name}: a training row is inside the pickle"
    assert pickle.loads(blob).get_params()["random_state"] is None, f"{name}: the seed is inside the pickle"
    ev = factory(random_state=12345, keep_nonprivate=True).fit(X, y)
    secrets = [a for attr in type(ev)._nonprivate_attributes if hasattr(ev, attr) for a in _arrays(getattr(ev, attr))]
    assert secrets, f"{name}: keep_nonprivate=True exposes no non-private state to compare with"
    assert not any(_contains(blob, s) for s in secrets), f"{name}: an un-noised statistic is inside the pickle"


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_fitted_object_holds_only_its_release(case):
    name, factory, X, y = case
    est = factory(random_state=7).fit(X, y)
    allowed = set(est.get_params(deep=False)) | set(type(est)._release_attributes) | set(PUBLIC_METADATA)
    allowed |= {"_sklearn_version", "_clone_counter"}
    extra = sorted(set(vars(est)) - allowed)
    assert not extra, f"{name} holds {extra} beyond its release"
    public = sorted(k for k in vars(est) if k.endswith("_") and not k.startswith("_") and k not in PUBLIC_METADATA)
    named = set(est.guarantee_.attributes)
    assert set(public) <= named, f"{name}: guarantee_ does not name {sorted(set(public) - named)}"


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_clones_add_independent_noise(case):
    name, factory, X, y = case
    base = factory(random_state=3)
    a, b = clone(base).fit(X, y), clone(base).fit(X, y)
    rel = [k for k in type(a)._release_attributes if isinstance(getattr(a, k, None), np.ndarray)
           and getattr(a, k).dtype.kind == "f"]
    assert rel, f"{name}: no numeric released attribute"
    assert any(not np.array_equal(getattr(a, k), getattr(b, k)) for k in rel), f"{name}: clones share their noise"


def test_every_exported_estimator_has_a_case():
    exported = {n for n in M.__all__ if isinstance(getattr(M, n), type) and issubclass(getattr(M, n), BaseEstimator)}
    covered = {type(c[1]()).__name__ for c in CASES}
    assert exported <= covered, f"no RELEASE_CASES for {sorted(exported - covered)}"
