"""Release hygiene shared by every mechanism (dpkernels.mechanisms.base) and the accounting helpers."""

from __future__ import annotations

import pickle
import warnings

import numpy as np
import pytest
from sklearn.base import BaseEstimator, clone

from dpkernels import PrivacyLeakWarning, UnsafeNoiseWarning
from dpkernels.accounting import compose, gaussian_delta, gaussian_epsilon, gaussian_sigma
from dpkernels.mechanisms.base import Guarantee, ReleaseMixin, check_noise, noise_release, randomness_note, resolve_classes


class Toy(ReleaseMixin, BaseEstimator):
    _release_attributes = ("coef_",)
    # the toy has no guarantee of its own; tests set one where they need it

    def __init__(self, *, scale=1.0, keep_nonprivate=False, random_state=None):
        self.scale = scale
        self.keep_nonprivate = keep_nonprivate
        self.random_state = random_state

    def fit(self, X, y=None):
        secret = np.asarray(X, dtype=float).mean(axis=0)
        self.coef_ = noise_release(secret, "laplace", self.scale, noise="lattice", random_state=self._noise_rng(X))
        self._scratch = np.asarray(X)  # not released: must not survive pickling
        if self.keep_nonprivate:
            self.nonprivate_ = secret
        return self


def test_release_export_holds_the_release_only_and_never_the_seed():
    X = np.arange(12.0).reshape(4, 3)
    m = Toy(random_state=7).fit(X)
    m.guarantee_ = Guarantee(1.0, 0.0, "replace-one", "the mean", "toy", notes=(randomness_note(7),))
    out = pickle.loads(pickle.dumps(m.release()))
    assert out.random_state is None and not hasattr(out, "_scratch") and not hasattr(out, "nonprivate_")
    np.testing.assert_array_equal(out.coef_, m.coef_)
    assert not any(n.startswith("SEEDED") for n in out.guarantee_.notes)
    # the fitted object itself is an ordinary scikit-learn estimator: its pickle keeps its parameters, seed included
    assert pickle.loads(pickle.dumps(Toy(random_state=7))).random_state == 7


def test_seeded_estimators_reproduce_under_clone_and_pickle():
    """Issue 19: scikit-learn semantics for specifications (clone and pickle keep the seed), while the noise stream
    depends on the data, so clones fitted on other data (CV folds) never share noise."""
    X = np.zeros((5, 4))
    base = Toy(random_state=3)
    assert clone(base).get_params() == base.get_params()
    a, b = clone(base).fit(X), pickle.loads(pickle.dumps(base)).fit(X)
    np.testing.assert_array_equal(a.coef_, b.coef_)
    c = clone(base).fit(X + 1.0)
    assert not np.array_equal(c.coef_ - 1.0, a.coef_)  # other data: other noise
    with pytest.raises(ValueError, match="random_state"):
        Toy(random_state=np.random.RandomState(0)).fit(X)


def test_resolve_classes_public_sets_and_explicit_inference():
    cls, idx = resolve_classes([1, -1, 1], None, binary=True)
    assert cls.tolist() == [-1, 1] and idx.tolist() == [1, 0, 1]
    cls, idx = resolve_classes([1, 1, 1], None, binary=True)  # one class present: the label set is still public
    assert cls.tolist() == [-1, 1]
    with pytest.raises(ValueError, match="classes is not given"):
        resolve_classes(["b", "a", "b"], None, binary=True)
    with pytest.raises(ValueError, match="classes is not given"):
        resolve_classes([0, 1, 1], None, binary=True)  # 0/1 is not the convention: a one-label neighbour would differ
    with pytest.warns(PrivacyLeakWarning):
        cls, idx = resolve_classes(["b", "a", "b"], "data", binary=True)
    assert cls.tolist() == ["a", "b"] and idx.tolist() == [1, 0, 1]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        cls, idx = resolve_classes([0, 0, 0], (0, 1), binary=True)
    assert idx.tolist() == [0, 0, 0]
    with pytest.raises(ValueError, match="not in classes"):
        resolve_classes([0, 2], (0, 1), binary=True)
    with pytest.raises(ValueError, match="NaN"):
        resolve_classes([0.0, np.nan], (0, 1), binary=True)
    with pytest.raises(ValueError, match="exactly two"):
        resolve_classes([0, 1, 2], (0, 1, 2), binary=True)


def test_continuous_noise_warns_in_numbers_and_typos_raise():
    with pytest.warns(UnsafeNoiseWarning, match="1500/1500"):
        check_noise("continuous")
    for bad in ("float", "Lattice", None, 3):
        with pytest.raises(ValueError, match="noise must be one of"):
            check_noise(bad)


def test_gaussian_calibrations_against_the_exact_privacy_curve():
    for eps, delta in [(0.1, 1e-5), (1.0, 1e-6), (10.0, 1e-3)]:
        s = gaussian_sigma(eps, delta, 2.0)
        assert gaussian_delta(eps, s, 2.0) == pytest.approx(delta, rel=1e-3)
        assert gaussian_epsilon(s, delta, 2.0) == pytest.approx(eps, rel=1e-3)
    # the classical calibration fails above eps = 1 (Park's SVM SEMI at eps = 10)
    assert gaussian_delta(10.0, gaussian_sigma(10.0, 1e-3, calibration="classical")) > 1e-3
    assert compose([("laplace", 1.0, 1.0)] * 2, 1e-9) == pytest.approx(2.0, abs=1e-3)


def test_cache_is_content_addressed_and_can_be_switched_off(tmp_path, monkeypatch):
    from dpkernels import cache

    monkeypatch.setenv("DPKERNELS_CACHE", str(tmp_path))
    monkeypatch.delenv("DPKERNELS_NO_CACHE", raising=False)
    calls = []

    def work(a):
        calls.append(1)
        return float(a.sum())

    f = cache.memory().cache(work)
    assert f(np.arange(3.0)) == f(np.arange(3.0)) == 3.0 and len(calls) == 1
    assert f(np.arange(4.0)) == 6.0 and len(calls) == 2
    assert (tmp_path / "joblib" / cache.source_hash()).exists()
    monkeypatch.setenv("DPKERNELS_NO_CACHE", "1")
    g = cache.memory().cache(work)
    g(np.arange(3.0))
    assert len(calls) == 3


def test_utility_warning_compares_public_bounds_only():
    """The warning's inputs are public (n, d, epsilon, Lambda): the same on every data set of the shape."""
    from dpkernels import ObjectivePerturbation, UtilityWarning

    rng = np.random.default_rng(0)
    X = rng.normal(size=(200, 10))
    X /= np.maximum(1, np.linalg.norm(X, axis=1))[:, None]
    y = np.where(X[:, 0] > 0, 1, -1)
    with pytest.warns(UtilityWarning, match="mostly noise"):
        a = ObjectivePerturbation(epsilon=0.02, alpha=1e-3, random_state=0).fit(X, y)
    b = ObjectivePerturbation(epsilon=0.02, alpha=1e-3, random_state=0).fit(-X[::-1], y)
    assert a.noise_to_solution_ == b.noise_to_solution_ > 1
    with warnings.catch_warnings():
        warnings.simplefilter("error", UtilityWarning)
        assert ObjectivePerturbation(epsilon=5.0, alpha=0.1, random_state=0).fit(X, y).noise_to_solution_ < 1
