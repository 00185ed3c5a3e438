"""Private selection over any candidates (dpkernels.selection.PrivateSelection): disjoint, data-independent parts,
the stated guarantee (parallel composition), the exponential mechanism's choice, release hygiene."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from sklearn.base import BaseEstimator, ClassifierMixin

from dpkernels import ObjectivePerturbation
from dpkernels.mechanisms.base import REPLACE_ONE, Guarantee
from dpkernels.selection import PrivateSelection, stated_guarantee


class Spy(ClassifierMixin, BaseEstimator):
    """A candidate that records the rows it was fitted on and predicts a constant label."""

    def __init__(self, label=1, epsilon=1.0, delta=0.0, random_state=None):
        self.label, self.epsilon, self.delta, self.random_state = label, epsilon, delta, random_state

    def fit(self, X, y):
        self.rows_ = np.asarray(X)[:, 0].copy()
        self.classes_ = np.array([-1, 1])
        self.guarantee_ = Guarantee(epsilon=self.epsilon, delta=self.delta, neighbouring=REPLACE_ONE,
                                    released="a constant", statement="test")
        return self

    def predict(self, X):
        return np.full(len(X), self.label)


def _release_case_data():
    rng = np.random.default_rng(5)
    X = rng.normal(size=(240, 3))
    X /= np.maximum(1.0, np.linalg.norm(X, axis=1, keepdims=True))
    return X, np.where(X[:, 0] > 0, 1, -1)


#: The release-hygiene cases of tests/test_release_hygiene.py (no generator, seed or non-private state in a release).
RELEASE_CASES = [
    ("PrivateSelection",
     lambda **kw: PrivateSelection([ObjectivePerturbation(epsilon=1.0, alpha=a, classes=[-1, 1]) for a in (0.1, 1.0)],
                                   epsilon=1.0, **kw),
     *_release_case_data()),
]


def _data(n=400, seed=0):
    rng = np.random.default_rng(seed)
    X = np.column_stack([np.arange(n, dtype=float), rng.normal(size=n)])
    y = np.where(rng.random(n) < 0.8, 1, -1)  # +1 is right on 80% of the rows
    return X, y


def _in_order(sel):
    """The fitted candidates in the order of ``candidates`` (the unselected ones are kept with keep_nonprivate)."""
    out = list(sel.nonprivate_.candidates)
    out.insert(sel.selected_, sel.best_estimator_)
    return out


def test_parts_are_disjoint_and_equal_and_leave_a_validation_part():
    X, y = _data(403)
    sel = PrivateSelection([Spy(), Spy(), Spy()], epsilon=1.0, keep_nonprivate=True, random_state=0).fit(X, y)
    parts = [c.rows_ for c in _in_order(sel)]
    assert [len(p) for p in parts] == [101, 101, 101] and sel.nonprivate_.n_validation == 100  # 403 // 4
    seen = np.concatenate(parts)
    assert len(np.unique(seen)) == 303  # disjoint


def test_the_split_does_not_depend_on_the_data():
    """Neighbouring data sets (one row replaced) get the same split: the replaced row changes one candidate's rows or
    the validation part, never the assignment of the others."""
    X, y = _data()
    X2, y2 = X.copy(), y.copy()
    X2[17, 1], y2[17] = 99.0, -y2[17]
    a = PrivateSelection([Spy(), Spy()], epsilon=1.0, keep_nonprivate=True, random_state=3).fit(X, y)
    b = PrivateSelection([Spy(), Spy()], epsilon=1.0, keep_nonprivate=True, random_state=3).fit(X2, y2)
    for ca, cb in zip(_in_order(a), _in_order(b)):
        np.testing.assert_array_equal(ca.rows_, cb.rows_)


def test_guarantee_is_the_parallel_composition():
    X, y = _data()
    sel = PrivateSelection([Spy(epsilon=0.5, delta=1e-9), Spy(epsilon=0.7, delta=1e-8)], epsilon=0.6,
                           random_state=0).fit(X, y)
    assert sel.guarantee_.epsilon == 0.7 and sel.guarantee_.delta == 1e-8
    assert sel.guarantee_.neighbouring == REPLACE_ONE and stated_guarantee(sel) is sel.guarantee_
    sel = PrivateSelection([Spy(epsilon=0.5)], epsilon=0.9, random_state=0).fit(X, y)
    assert sel.guarantee_.epsilon == 0.9 and sel.guarantee_.delta == 0.0


def test_the_exponential_mechanism_prefers_fewer_mistakes():
    """Validation mistakes: about 20 (always +1) against about 80 (always -1): at epsilon = 1 the good candidate is
    chosen with probability 1 - exp(-30) or so; at a tiny epsilon the choice is close to uniform."""
    X, y = _data()
    picks = [PrivateSelection([Spy(label=-1), Spy(label=1)], epsilon=1.0, random_state=s).fit(X, y).selected_
             for s in range(20)]
    assert picks == [1] * 20
    picks = [PrivateSelection([Spy(label=-1), Spy(label=1)], epsilon=1e-4, random_state=s).fit(X, y).selected_
             for s in range(200)]
    assert 60 < sum(picks) < 140


def test_a_real_mechanism_and_its_release():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(900, 3))
    X /= np.maximum(1.0, np.linalg.norm(X, axis=1, keepdims=True))
    y = np.where(X[:, 0] > 0, 1, -1)
    grid = [ObjectivePerturbation(epsilon=1.0, alpha=a, classes=[-1, 1]) for a in (1e-3, 1e-2, 1e-1)]
    sel = PrivateSelection(grid, epsilon=1.0, random_state=0).fit(X, y)
    assert sel.guarantee_.epsilon == 1.0 and 0.0 < sel.guarantee_.delta < 1e-3  # objective's floating-point delta
    assert np.mean(sel.predict(X) == y) > 0.8 and sel.decision_function(X[:3]).shape == (3,)
    rel = sel.release()
    assert rel.random_state is None and np.array_equal(rel.predict(X), sel.predict(X))
    assert grid[0].random_state is None  # the candidates given are left unchanged (cloned at fit)


def test_refusals():
    X, y = _data(20)
    with pytest.raises(ValueError, match="empty"):
        PrivateSelection([], random_state=0).fit(X, y)
    with pytest.raises(ValueError, match="not enough rows"):
        PrivateSelection([Spy()] * 30, random_state=0).fit(X, y)

    class Silent(Spy):
        def fit(self, X, y):
            self.classes_ = np.array([-1, 1])
            return self

    with pytest.raises(ValueError, match="states no guarantee"):
        PrivateSelection([Silent(), Spy()], random_state=0).fit(X, y)


def test_the_selection_states_what_every_candidate_passes_on():
    """A candidate run with float-unsafe noise makes the selection (and its export) idealized, one that is not private
    voids it, even when another candidate is selected: every candidate's mistakes enter the choice.  Honest candidates
    leave a release (random_state=None) or a reproduction (a seed): the candidates' inner, generator-seeded fits do
    not void the selection."""

    class Stated(Spy):
        def __init__(self, label=1, status="", random_state=None):
            self.label, self.status, self.random_state = label, status, random_state
            self.epsilon, self.delta = 1.0, 0.0

        def fit(self, X, y):
            super().fit(X, y)
            self.guarantee_ = dataclasses.replace(self.guarantee_, status=self.status or "release")
            return self

    X, y = _data()
    for status, rs, expected in (("idealized", None, "idealized"), ("idealized", 0, "idealized"),
                                 ("not private", None, "not private"), ("", None, "release"), ("", 0, "reproduction")):
        sel = PrivateSelection([Stated(label=1), Stated(label=-1, status=status)], epsilon=1.0, random_state=rs)
        sel.fit(X, y)
        assert sel.selected_ == 0 and sel.guarantee_.status == expected, (status, rs, sel.guarantee_.status)
        if expected != "not private":
            assert sel.release().guarantee_.status == expected
    grid = [ObjectivePerturbation(epsilon=1.0, alpha=a, classes=[-1, 1]) for a in (0.1, 1.0)]
    for rs, expected in ((None, "release"), (0, "reproduction")):
        sel = PrivateSelection(grid, epsilon=1.0, random_state=rs).fit(*_release_case_data())
        assert sel.guarantee_.status == sel.best_estimator_.guarantee_.status == expected
