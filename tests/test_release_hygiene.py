"""Issues 12 and 18's rule for every mechanism: a fitted object is a release, and what is published holds nothing more.

Each paper's test module lists its estimators in ``RELEASE_CASES``: tuples ``(name, factory, X, y)`` where
``factory(**overrides)`` builds an unfitted estimator (it must accept ``random_state`` and ``keep_nonprivate``).
For every case:

* the pickle of ``release()`` (what may be published) holds no training row, no un-noised statistic (the
  ``nonprivate_`` attributes an evaluation-mode fit exposes) and no seed;
* the fitted object holds nothing but its parameters, the released attributes its ``guarantee_`` names, and
  scikit-learn's public metadata; walked attribute by attribute (sub-estimators included), it holds no numpy
  ``Generator``, ``BitGenerator``, ``RandomState`` or ``SeedSequence``, whether it was seeded or not;
* a seeded fit draws its noise from the seed, the estimator's parameters and the training data: it reproduces itself
  and never reuses its noise on other data (spied on ``noise_generator``);
* issue 26.1-2: every guarantee in the object (sub-estimators included) and in its export states what the object is:
  a seeded fit and its export are reproductions, a ``keep_nonprivate=True`` fit an evaluation, an unseeded fit or a
  ``SecretKey`` fit a release; the mechanism's (epsilon, delta) are stated whatever the status; the Accountant books
  releases only;
* every estimator class exported by ``dpkernels.mechanisms`` has a case.
"""

from __future__ import annotations

import dataclasses
import importlib
import math
import pickle
import warnings
from pathlib import Path

import numpy as np
import pytest
from sklearn.base import BaseEstimator

import dpkernels.mechanisms as M
from dpkernels import SecretKey
from dpkernels.accounting import Accountant
from dpkernels.mechanisms import base as mech_base
from dpkernels.mechanisms.base import PUBLIC_METADATA, ReleaseMixin, noise_generator

HERE = Path(__file__).parent
RANDOM_TYPES = (np.random.Generator, np.random.BitGenerator, np.random.RandomState, np.random.SeedSequence)


def _cases() -> list[tuple]:
    out = []
    for path in sorted(HERE.glob("test_*.py")):
        if path.stem == "test_release_hygiene" or "\nRELEASE_CASES = " not in path.read_text():
            continue  # modules that use CASES import this one
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


def random_objects(obj, path="obj", seen=None):
    """(path, object) of every generator-like object reachable from ``obj``: attributes, dataclass fields, list,
    tuple and dict items, recursively (the walk an attacker with the object in memory can do)."""
    seen = set() if seen is None else seen
    if id(obj) in seen or isinstance(obj, (str, bytes, int, float, bool, type(None), np.ndarray, type)):
        return
    seen.add(id(obj))
    if isinstance(obj, RANDOM_TYPES):
        yield path, obj
        return
    if isinstance(obj, dict):
        for k, v in obj.items():
            yield from random_objects(v, f"{path}[{k!r}]", seen)
    elif isinstance(obj, (list, tuple, set)):
        for i, v in enumerate(obj):
            yield from random_objects(v, f"{path}[{i}]", seen)
    elif hasattr(obj, "__dict__") or hasattr(obj, "__slots__"):
        names = list(getattr(obj, "__dict__", {}))
        names += [s for s in getattr(type(obj), "__slots__", ()) if hasattr(obj, s)]
        for k in names:
            yield from random_objects(getattr(obj, k), f"{path}.{k}", seen)


def guarantees(obj, path="obj", seen=None):
    """(path, guarantee) of every fitted estimator reachable from ``obj`` (attributes, list and tuple items,
    recursively): what a user who takes a sub-estimator out of a wrapper reads."""
    seen = set() if seen is None else seen
    if id(obj) in seen or isinstance(obj, (str, bytes, int, float, bool, type(None), np.ndarray, type)):
        return
    seen.add(id(obj))
    if isinstance(obj, ReleaseMixin) and hasattr(obj, "guarantee_"):
        yield path, obj.guarantee_
    if isinstance(obj, (list, tuple)):
        for i, v in enumerate(obj):
            yield from guarantees(v, f"{path}[{i}]", seen)
    elif hasattr(obj, "__dict__") and not isinstance(obj, np.random.Generator):
        for k, v in vars(obj).items():
            yield from guarantees(v, f"{path}.{k}", seen)


def _statuses(est) -> dict[str, str]:
    return {p: g.status for p, g in guarantees(est)}


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
def test_release_export_holds_no_training_row_no_unnoised_statistic_no_seed(case):
    name, factory, X, y = case
    est = factory(random_state=12345).fit(X, y)
    exported = est.release()
    blob = pickle.dumps(exported)
    X = np.asarray(X, dtype=np.float64)
    rows = [X[i] for i in range(min(len(X), 50)) if np.any(X[i])]
    assert not any(_contains(blob, r) for r in rows), f"{name}: a training row is inside the release"
    back = pickle.loads(blob)
    assert back.get_params()["random_state"] is None, f"{name}: the seed is inside the release"
    assert b"12345" not in blob and not list(random_objects(back)), f"{name}: a seed or generator is in the release"
    if y is not None:
        try:
            expected = est.predict(X)
        except ValueError:  # a function release answers at its released points only (Hall)
            expected = None
        if expected is not None:
            np.testing.assert_array_equal(back.predict(X), expected)
    ev = factory(random_state=12345, keep_nonprivate=True).fit(X, y)
    secrets = [a for attr in type(ev)._nonprivate_attributes if hasattr(ev, attr) for a in _arrays(getattr(ev, attr))]
    assert secrets, f"{name}: keep_nonprivate=True exposes no non-private state to compare with"
    ev_blob = pickle.dumps(ev.release())
    assert not any(_contains(ev_blob, s) for s in secrets), f"{name}: an un-noised statistic is in the release"


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_every_guarantee_states_what_the_object_is(case):
    """Issue 26.1-2, walked through every fitted estimator in the object and its export (sub-estimators included):

    * an int seed, a SeedSequence or a Generator: "reproduction" (private False), in the fit and in its release();
    * keep_nonprivate=True: "evaluation" (seeded or not); the export of an unseeded evaluation fit is a release;
    * random_state=None or a SecretKey: "release", in the fit and its export; the key is in no repr and no export;
    * whatever the status, epsilon and delta are the mechanism's (those of the unseeded fit): experiments account
      what they ran;
    * Accountant.spend refuses reproductions and evaluations, naming the fix, and books releases."""
    name, factory, X, y = case
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        released = factory(random_state=None).fit(X, y)
        eps, delta = released.guarantee_.epsilon, released.guarantee_.delta
        assert math.isfinite(eps), name
        for rs in (12345, np.random.SeedSequence(5), np.random.default_rng(5)):
            seeded = factory(random_state=rs).fit(X, y)
            for obj in (seeded, seeded.release()):
                assert set(_statuses(obj).values()) == {"reproduction"}, f"{name} {rs!r}: {_statuses(obj)}"
                assert not obj.guarantee_.private and obj.guarantee_.randomness == "seed"
                assert (obj.guarantee_.epsilon, obj.guarantee_.delta) == pytest.approx((eps, delta), rel=1e-9, abs=1e-300)
        for rs in (12345, None):
            ev = factory(random_state=rs, keep_nonprivate=True).fit(X, y)
            assert ev.guarantee_.status == "evaluation" and not ev.guarantee_.private, name
            assert ev.guarantee_.epsilon == pytest.approx(eps) and "EVALUATION" in str(ev.guarantee_)
        assert set(_statuses(ev.release()).values()) == {"release"}, f"{name}: {_statuses(ev.release())}"
        key = SecretKey()
        keyed = factory(random_state=key).fit(X, y)
    for obj in (released, released.release(), keyed, keyed.release()):
        assert set(_statuses(obj).values()) == {"release"} and obj.guarantee_.private, f"{name}: {_statuses(obj)}"
    assert keyed.guarantee_.randomness == "key" and "hidden" in repr(keyed)
    assert key.seed_sequence().entropy.to_bytes(32, "little") not in pickle.dumps(keyed.release())
    acc = Accountant(fp_delta_allowance=1e-3, delta=1e-3)
    for obj, fix in ((seeded, "random_state=None"), (ev, r"release\(\)")):
        with pytest.raises(ValueError, match=fix):
            acc.spend(obj)
    assert acc.spend(released) == pytest.approx((eps, delta)) and acc.spend(ev.release())[0] <= 2 * eps * (1 + 1e-9)
    assert len(acc.spent) == 2


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_fitted_object_holds_only_its_release(case):
    name, factory, X, y = case
    est = factory(random_state=7).fit(X, y)
    allowed = set(est.get_params(deep=False)) | set(type(est)._release_attributes) | set(PUBLIC_METADATA)
    allowed |= {"_sklearn_version"}
    extra = sorted(set(vars(est)) - allowed)
    assert not extra, f"{name} holds {extra} beyond its release"
    public = sorted(k for k in vars(est) if k.endswith("_") and not k.startswith("_") and k not in PUBLIC_METADATA)
    named = set(est.guarantee_.attributes)
    assert set(public) <= named, f"{name}: guarantee_ does not name {sorted(set(public) - named)}"


@pytest.mark.parametrize("case", CASES, ids=IDS)
@pytest.mark.parametrize("seed", [None, 11])
def test_no_generator_or_seed_sequence_anywhere_in_a_fitted_object(case, seed):
    """Issue 18: EquilibriumPointClassifier kept the generator that drew all its noise in ``svdd_.random_state``; a
    rewind of that generator replays the fit.  With random_state=None nothing replays the noise; with an int seed the
    seed is a parameter (an int, by scikit-learn's convention), never a generator object."""
    name, factory, X, y = case
    est = factory(random_state=seed).fit(X, y)
    found = list(random_objects(est))
    assert not found, f"{name} holds {[p for p, _ in found]}"
    assert not list(random_objects(pickle.loads(pickle.dumps(est))))


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_seeded_noise_depends_on_seed_parameters_and_data(case, monkeypatch):
    """Every fit draws its noise from ``noise_generator(seed, estimator, "noise", *training data)``: a seeded refit
    reproduces the release, and the training data enter the noise stream (so other data get other noise)."""
    name, factory, X, y = case
    calls = []
    real = mech_base.noise_generator

    def spy(random_state, *args):
        calls.append(args)
        return real(random_state, *args)

    monkeypatch.setattr(mech_base, "noise_generator", spy)
    a = factory(random_state=5).fit(X, y)
    noise_calls = [c for c in calls if len(c) >= 2 and c[1] == "noise"]
    assert noise_calls, f"{name}: the fit does not draw from a noise stream of its data"
    n = np.asarray(X).shape[0]
    assert any(any(np.shape(arr)[:1] == (n,) for arr in c[2:]) for c in noise_calls), \
        f"{name}: the training rows are not part of the noise seed"
    b = factory(random_state=5).fit(X, y)
    rel_a = [arr for k in type(a)._release_attributes for arr in _arrays(getattr(a, k, None))]
    rel_b = [arr for k in type(b)._release_attributes for arr in _arrays(getattr(b, k, None))]
    assert rel_a and len(rel_a) == len(rel_b), f"{name}: no numeric release"
    assert all(np.array_equal(u, v) for u, v in zip(rel_a, rel_b)), f"{name}: a seeded refit differs"


def test_noise_generator_reproduces_and_separates():
    X = np.arange(12.0).reshape(4, 3)
    est = M.OutputPerturbation(alpha=0.1)
    draw = lambda rs, e, *d: noise_generator(rs, e, "noise", *d).integers(0, 2**62, size=4)  # noqa: E731
    assert np.array_equal(draw(3, est, X), draw(3, est, X.copy()))
    X2 = X.copy()
    X2[0, 0] += 1e-12
    assert not np.array_equal(draw(3, est, X), draw(3, est, X2))  # one changed bit of one row
    assert not np.array_equal(draw(3, est, X), draw(3, M.OutputPerturbation(alpha=0.2), X))  # another candidate
    assert not np.array_equal(draw(3, est, X), draw(4, est, X))
    assert not np.array_equal(draw(None, est, X), draw(None, est, X))  # OS entropy
    g = np.random.default_rng(0)
    assert noise_generator(g, est, "noise", X) is g
    # large arrays are hashed by their bytes, not their (summarised) repr
    big, big2 = np.zeros(5000), np.zeros(5000)
    big2[2500] = 1.0
    assert not np.array_equal(draw(1, est, big), draw(1, est, big2))


def test_every_exported_estimator_has_a_case():
    exported = {n for n in M.__all__ if isinstance(getattr(M, n), type) and issubclass(getattr(M, n), BaseEstimator)}
    covered = {type(c[1]()).__name__ for c in CASES}
    assert exported <= covered, f"no RELEASE_CASES for {sorted(exported - covered)}"


def test_random_objects_walk_finds_a_generator_kept_anywhere():
    """The walker's power: a generator hidden in a sub-estimator's parameters or a dataclass field is found."""

    @dataclasses.dataclass
    class Box:
        inner: object

    est = M.OutputPerturbation(random_state=np.random.default_rng(1))
    holder = Box([{"svdd_": est}])
    assert [p for p, _ in random_objects(holder)] == ["obj.inner[0]['svdd_'].random_state"]
    assert list(random_objects(np.random.SeedSequence(3)))


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_every_noise_option_is_validated_and_continuous_warns(case):
    """Issue 18.4: a typo in ``noise`` raises (it never falls back to a float64 sampler); "continuous" warns."""
    from dpkernels import UnsafeNoiseWarning

    name, factory, X, y = case
    est = factory(random_state=0)
    if "noise" not in est.get_params():
        pytest.skip(f"{name} has no noise option")
    for typo in ("Lattice", "float", None):
        with pytest.raises(ValueError, match="noise must be one of"):
            factory(random_state=0, noise=typo).fit(X, y)
    with pytest.warns(UnsafeNoiseWarning):
        factory(random_state=0, noise="continuous").fit(X, y)


def test_function_entry_points_validate_noise():
    from dpkernels.mechanisms.hall import GaussianKernel, GaussianProcessRelease, gaussian_mechanism

    for typo in ("Lattice", "exact"):
        with pytest.raises(ValueError, match="noise must be one of"):
            gaussian_mechanism([1.0, 2.0], epsilon=1.0, delta=1e-5, sensitivity=1.0, noise=typo)
        with pytest.raises(ValueError, match="noise must be one of"):
            GaussianProcessRelease(lambda P: np.zeros(len(P)), GaussianKernel(0.5), 1, 1.0, tau=1e-8, max_points=10,
                                   noise=typo)


def test_seeded_model_selection_reproduces_under_scikit_learn_parallelism():
    """Issue 19: GridSearchCV(n_jobs=2) with a seed equals n_jobs=1 and a rerun; cross_val_score twice agrees."""
    from sklearn.model_selection import GridSearchCV, cross_val_score

    rng = np.random.default_rng(0)
    X = rng.normal(size=(160, 4))
    X /= np.maximum(1, np.linalg.norm(X, axis=1))[:, None]
    y = np.where(X[:, 0] + 0.3 * rng.normal(size=160) > 0, 1, -1)
    est = M.OutputPerturbation(epsilon=2.0, random_state=0)
    a = cross_val_score(est, X, y, cv=4)
    np.testing.assert_array_equal(a, cross_val_score(est, X, y, cv=4))
    grid = {"alpha": [0.01, 0.1]}
    one = GridSearchCV(est, grid, cv=3, n_jobs=1).fit(X, y).cv_results_["mean_test_score"]
    two = GridSearchCV(est, grid, cv=3, n_jobs=2).fit(X, y).cv_results_["mean_test_score"]
    again = GridSearchCV(est, grid, cv=3, n_jobs=2).fit(X, y).cv_results_["mean_test_score"]
    np.testing.assert_array_equal(one, two)
    np.testing.assert_array_equal(two, again)
