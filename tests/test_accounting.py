"""Issue 25.6 and 26.1-2: accounting that follows a workflow, and books releases only.

* ``Accountant.spend`` refuses what is not a release (a seeded fit, an evaluation fit, a curator, idealized noise, a
  fit that is not private), naming the reason and the fix;
* floating-point deltas need an explicit ``fp_delta_allowance``: a pure budget is never silently turned approximate,
  and a mechanism's own (non-floating-point) delta is never booked against the allowance;
* a Pipeline is unwrapped to its private steps (public maps cost nothing; a step fitted on the private rows is listed
  as unaccounted, with a warning);
* a fitted GridSearchCV costs every candidate x fold fit plus the refit (:func:`search_cost`), computed from fits on
  rows that are no one's data: exact because every estimator's guarantee depends on n, d and its parameters only
  (checked on every release case); the selection is listed as unaccounted;
* ``compose_guarantees`` composes the mechanisms' statements whatever the status (experiments account their seeded
  runs).
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
from sklearn.model_selection import GridSearchCV, KFold
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from dpkernels import (
    Guarantee,
    ObjectivePerturbation,
    OutputPerturbation,
    PrivacyLeakWarning,
    PrivateKernelMachine,
    PrivateMarginClassifier,
    PublicBoundsScaler,
)
from dpkernels.accounting import Accountant, compose_guarantees, search_cost
from test_release_hygiene import CASES, IDS


def _data(n: int = 240, d: int = 4, seed: int = 0):
    rng = np.random.default_rng(seed)
    X = rng.uniform(-0.5, 0.5, size=(n, d))
    return X, np.where(X[:, 0] + 0.2 * rng.normal(size=n) > 0, 1, -1)


def _quiet(fit):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return fit()


def test_only_releases_are_booked_and_the_refusal_names_the_fix():
    X, y = _data()
    acc = Accountant(epsilon=10.0, delta=1e-4, fp_delta_allowance=1e-3)
    refusals = {
        "random_state=None": OutputPerturbation(random_state=0),
        r"release\(\)": OutputPerturbation(keep_nonprivate=True),
        "noise='lattice'": OutputPerturbation(noise="idealized"),
    }
    for fix, est in refusals.items():
        _quiet(lambda est=est: est.fit(X, y))
        with pytest.raises(ValueError, match=fix):
            acc.spend(est)
    leaky = _quiet(lambda: OutputPerturbation(classes="data").fit(X, y))
    with pytest.raises(ValueError, match="not private at all"):
        acc.spend(leaky)
    curator = _quiet(lambda: PrivateKernelMachine(delta=1e-5, curator=True, points=X[:3]).fit(X, y))
    assert curator.guarantee_.status == "curator"
    with pytest.raises(ValueError, match=r"curator.*release\(\)"):
        acc.spend(curator)
    assert acc.spent == []
    acc.spend(curator.release())
    acc.spend(_quiet(lambda: OutputPerturbation(keep_nonprivate=True).fit(X, y)).release())
    assert len(acc.spent) == 2


def test_floating_point_deltas_need_an_explicit_allowance():
    X, y = _data()
    obj = _quiet(lambda: ObjectivePerturbation(epsilon=1.0).fit(X, y))
    g = obj.guarantee_
    assert 0 < g.delta == g.fp_delta < 1e-6  # objective perturbation is pure in exact arithmetic
    with pytest.raises(ValueError, match="fp_delta_allowance=1e-6"):
        Accountant(epsilon=2.0).spend(obj)  # a pure budget, not silently turned approximate
    acc = Accountant(epsilon=2.0, fp_delta_allowance=1e-6)
    assert acc.spend(obj) == pytest.approx((1.0, g.delta))
    assert acc.spend(obj) == pytest.approx((2.0, 2 * g.delta)) and acc.remaining() == pytest.approx((0.0, 0.0))
    with pytest.raises(ValueError, match="beyond the budget"):
        acc.spend(obj)
    tight = Accountant(epsilon=10.0, fp_delta_allowance=1.5 * g.delta)
    tight.spend(obj)
    with pytest.raises(ValueError, match="floating-point deltas"):
        tight.spend(obj)
    # a mechanism's own delta (Gaussian noise) is not floating point's: the allowance never books it
    margin = _quiet(lambda: PrivateMarginClassifier(epsilon=1.0, delta=1e-6, rho=0.4, n_components=4).fit(X, y))
    assert margin.guarantee_.fp_delta == 0.0
    with pytest.raises(ValueError, match="beyond the budget"):
        Accountant(epsilon=2.0, fp_delta_allowance=1e-3).spend(margin)
    assert Accountant(epsilon=2.0, delta=1e-5).spend(margin) == pytest.approx((1.0, 1e-6))


def test_pipelines_are_unwrapped_to_their_private_steps():
    X, y = _data()
    public = make_pipeline(PublicBoundsScaler(-0.5, 0.5), OutputPerturbation(epsilon=0.5)).fit(X, y)
    acc = Accountant(epsilon=1.0)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert acc.spend(public) == pytest.approx((0.5, 0.0))
    scaled = _quiet(lambda: make_pipeline(StandardScaler(), OutputPerturbation(epsilon=0.5, clip=True)).fit(X, y))
    with pytest.warns(PrivacyLeakWarning, match="standardscaler"):
        assert acc.spend(scaled) == pytest.approx((1.0, 0.0))
    assert acc.unaccounted and "StandardScaler" in acc.unaccounted[0]
    with pytest.raises(ValueError, match="no dpkernels estimator"):
        Accountant().spend(make_pipeline(StandardScaler()).fit(X))


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_a_guarantee_depends_on_public_quantities_only(case):
    """What search_cost relies on: the guarantee of a fit on zero rows (no one's data) of the same shape states the
    (epsilon, delta, fp_delta) of the fit on the private rows."""
    name, factory, X, y = case
    X = np.asarray(X, dtype=np.float64)
    real = _quiet(lambda: factory().fit(X, y)).guarantee_
    labels = None if y is None else np.unique(y)[np.arange(len(X)) % len(np.unique(y))]
    zero = _quiet(lambda: factory().fit(np.zeros_like(X), labels)).guarantee_
    assert (zero.epsilon, zero.delta, zero.fp_delta) == (real.epsilon, real.delta, real.fp_delta), name


def test_a_search_costs_every_candidate_and_fold_and_its_selection_is_unaccounted():
    X, y = _data()
    grid = {"alpha": [0.01, 0.1, 1.0]}
    search = _quiet(lambda: GridSearchCV(ObjectivePerturbation(epsilon=0.5), grid, cv=KFold(4)).fit(X, y))
    cost = search_cost(search, X, y)
    assert cost.n_fits == 3 * 4 + 1
    # a row lies in 3 of the 4 training parts: 3 candidates x 3 folds, and the refit
    assert len(cost.guarantees) == 3 * 3 + 1 and cost.epsilon == pytest.approx(10 * 0.5)
    # each fold fit's delta is the one a fit on that fold states (n = 180 rows)
    fold = _quiet(lambda: ObjectivePerturbation(epsilon=0.5, alpha=0.01).fit(X[60:], y[60:])).guarantee_
    assert fold.delta in {g.delta for g in cost.guarantees}
    assert cost.delta == pytest.approx(math.fsum(g.delta for g in cost.guarantees)) == cost.fp_delta
    assert "selection" in cost.unaccounted[0]
    acc = Accountant(epsilon=6.0, fp_delta_allowance=1e-5)
    with pytest.raises(ValueError, match="pass the data"):
        acc.spend(search)
    with pytest.warns(PrivacyLeakWarning, match="selection"):
        assert acc.spend(search, X, y)[0] == pytest.approx(5.0)
    assert len(acc.spent) == 10
    seeded = _quiet(lambda: GridSearchCV(OutputPerturbation(random_state=0), grid, cv=3).fit(X, y))
    with pytest.raises(ValueError, match="seeded"):
        Accountant().spend(seeded, X, y)


def test_compose_guarantees_composes_the_mechanisms_whatever_the_status():
    X, y = _data()
    seeded = [_quiet(lambda s=s: OutputPerturbation(epsilon=0.5, random_state=s).fit(X, y)) for s in (1, 2)]
    assert {m.guarantee_.status for m in seeded} == {"reproduction"}
    assert compose_guarantees([m.guarantee_ for m in seeded]) == pytest.approx((1.0, 0.0))
    void = Guarantee(1.0, 0.0, "replace-one", "x", "y", private=False)
    assert void.status == "not private" and compose_guarantees([void])[0] == math.inf
