"""PrivateOneVsRest and the accounting of guarantees (issue 19): a K-class model within one budget."""

from __future__ import annotations

import math

import numpy as np
import pytest
from sklearn.multiclass import OneVsRestClassifier

from dpkernels import ObjectivePerturbation, OutputPerturbation, PrivateMarginClassifier, PrivateOneVsRest
from dpkernels.accounting import Accountant, compose, compose_guarantees, split_budget


def _data(n=300, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 4))
    X /= np.maximum(1.0, np.linalg.norm(X, axis=1))[:, None]
    return X, np.argmax(X[:, :3] + 0.1 * rng.normal(size=(n, 3)), axis=1)


_X, _Y = _data(120, 1)
RELEASE_CASES = [
    ("PrivateOneVsRest", lambda **kw: PrivateOneVsRest(OutputPerturbation(alpha=0.05),
                                                       **{"epsilon": 3.0, "classes": [0, 1, 2], **kw}), _X, _Y),
]


def test_pure_budget_is_split_and_composed():
    X, y = _data()
    ovr = PrivateOneVsRest(OutputPerturbation(alpha=0.01), epsilon=3.0, classes=[0, 1, 2], random_state=0).fit(X, y)
    assert ovr.epsilon_per_class_ == pytest.approx(1.0) and ovr.delta_per_class_ == 0.0
    assert [e.guarantee_.epsilon for e in ovr.estimators_] == pytest.approx([1.0] * 3)
    assert ovr.guarantee_.epsilon == pytest.approx(3.0) and ovr.guarantee_.delta == 0.0
    # seeded: a reproduction, the wrapper and each binary release alike (the mechanism's epsilon still stated)
    assert {ovr.guarantee_.status} | {e.guarantee_.status for e in ovr.estimators_} == {"reproduction"}
    assert np.mean(ovr.predict(X) == y) > 0.5  # learns at eps = 3 on 300 rows
    # the objective-perturbation learners carry their floating-point delta: it adds up and is stated
    obj = PrivateOneVsRest(ObjectivePerturbation(alpha=0.01), epsilon=3.0, classes=[0, 1, 2]).fit(X, y)
    assert obj.guarantee_.delta > 0 and obj.guarantee_.private
    assert obj.guarantee_.delta == pytest.approx(sum(e.guarantee_.delta for e in obj.estimators_))
    assert obj.guarantee_.fp_delta == obj.guarantee_.delta  # all of it is the argmin releases' floating-point delta
    # scikit-learn's wrapper spends K times the budget and states nothing: what this class is for
    skl = OneVsRestClassifier(OutputPerturbation(epsilon=3.0, alpha=0.01, classes=[0, 1])).fit(X, y)
    assert sum(e.guarantee_.epsilon for e in skl.estimators_) == pytest.approx(9.0) and not hasattr(skl, "guarantee_")


def test_approximate_budget_through_dp_accounting():
    X, y = _data()
    ovr = PrivateOneVsRest(PrivateMarginClassifier(rho=0.3, n_components=8), epsilon=2.0, delta=1e-5,
                           classes=[0, 1, 2], random_state=0).fit(X, y)
    assert ovr.epsilon_per_class_ >= 2.0 / 3 * (1 - 1e-12)  # never worse than basic composition
    assert ovr.guarantee_.epsilon <= 2.0 * (1 + 1e-9) and ovr.guarantee_.delta <= 1e-5
    with pytest.raises(ValueError, match="delta > 0"):
        PrivateOneVsRest(PrivateMarginClassifier(), epsilon=2.0, classes=[0, 1, 2]).fit(X, y)
    with pytest.raises(ValueError, match="classes is required"):
        PrivateOneVsRest(OutputPerturbation(), epsilon=2.0).fit(X, y)
    # the total delta is checked against 1/(10 n), not only each part's share (3/n split three ways passed each part;
    # 0.5/n, near 1/n, passed the total's check before privacy audit F4)
    for delta in (3.0 / len(X), 0.5 / len(X)):
        with pytest.raises(ValueError, match=r"must be at most 1/\(10 n\)"):
            PrivateOneVsRest(PrivateMarginClassifier(rho=0.3, n_components=8), epsilon=2.0, delta=delta,
                             classes=[0, 1, 2], random_state=0).fit(X, y)


def test_split_budget_and_composition_agree():
    assert split_budget(3.0, 0.0, 3) == (1.0, 0.0)
    e, d = split_budget(1.0, 1e-6, 100)  # many releases: better than basic composition's 0.01 each
    step = min(1e-4, e / 200)  # the discretisation split_budget uses
    assert d == pytest.approx(5e-9) and e > 0.015
    assert compose([("dp", e, d)] * 100, 5e-7, value_discretization_interval=step) <= 1.0 + 1e-9
    # and it is the largest (to the bisection's precision)
    assert compose([("dp", e * 1.05, d)] * 100, 5e-7, value_discretization_interval=step) > 1.0


def test_accountant_and_compose_guarantees():
    X, y = _data()
    m1 = OutputPerturbation(epsilon=0.5, classes=[-1, 1]).fit(X, np.where(y == 0, 1, -1))
    m2 = OutputPerturbation(epsilon=0.7, classes=[-1, 1]).fit(X, np.where(y == 1, 1, -1))
    assert compose_guarantees([m1.guarantee_, m2.guarantee_]) == pytest.approx((1.2, 0.0))
    acc = Accountant(epsilon=1.0)
    acc.spend(m1)
    with pytest.raises(ValueError, match="beyond the budget"):
        acc.spend(m2)
    assert acc.total() == pytest.approx((0.5, 0.0)) and acc.remaining() == pytest.approx((0.5, 0.0))
    leaky = OutputPerturbation(epsilon=0.5, classes="data")
    with pytest.warns(Warning):
        leaky.fit(X, np.where(y == 0, 1, -1))
    assert compose_guarantees([m1.guarantee_, leaky.guarantee_])[0] == math.inf


def test_predict_proba_for_the_logistic_loss_only():
    X, y = _data()
    yb = np.where(y == 0, 1, -1)
    m = ObjectivePerturbation(epsilon=2.0, alpha=0.01, classes=[-1, 1]).fit(X, yb)
    P = m.predict_proba(X)
    assert P.shape == (len(X), 2) and np.allclose(P.sum(axis=1), 1.0)
    np.testing.assert_array_equal(m.classes_[np.argmax(P, axis=1)], m.predict(X))
    assert not hasattr(ObjectivePerturbation(loss="huber"), "predict_proba")
