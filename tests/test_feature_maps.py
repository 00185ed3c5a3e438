"""The frontier's public feature maps as transformers (dpkernels.feature_maps): per record, public constants only,
rows in the unit ball, the published vocabularies, and the frontier reads its features through them."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from sklearn.base import clone
from sklearn.pipeline import make_pipeline

from dpkernels import datasets as D
from dpkernels import feature_maps as FM


def _adult_rows() -> pd.DataFrame:
    base = {"age": 39, "workclass": "State-gov", "fnlwgt": 77516, "education": "Bachelors", "education-num": 13,
            "marital-status": "Never-married", "occupation": "Adm-clerical", "relationship": "Not-in-family",
            "race": "White", "sex": "Male", "capital-gain": 2174, "capital-loss": 0, "hours-per-week": 40,
            "native-country": "United-States"}
    wild = {**base, "age": 500, "capital-gain": 10**9, "capital-loss": 10**7, "hours-per-week": 1000}
    return pd.DataFrame([base, wild])


def test_adult_vocabularies_are_adult_names():
    try:
        D.locate("adult.names", download=False)
    except D.DatasetUnavailable:  # pragma: no cover - the file ships with the data
        pytest.skip("adult.names not available")
    parsed = D._adult_vocabularies()
    assert list(parsed) == list(FM.ADULT_VOCABULARIES)  # the order fixes the columns
    assert {k: tuple(v) for k, v in parsed.items()} == FM.ADULT_VOCABULARIES


def test_kdd_columns_follow_the_published_order():
    numeric = [c for c in D.KDD_COLUMNS[:-1] if c not in D.KDD_CATEGORICAL]
    assert list(FM.KDDCup99Features._numeric) == numeric
    assert list(FM.KDDCup99Features._categorical) == D.KDD_CATEGORICAL


def test_rows_lie_in_the_unit_ball_whatever_the_values():
    X = FM.AdultFeatures().fit_transform(_adult_rows())
    assert X.shape == (2, 105) and np.all(np.linalg.norm(X, axis=1) <= 1.0 + 1e-12)
    assert np.allclose(X[:, -1], FM.INTERCEPT_FEATURE)
    rng = np.random.default_rng(0)
    for cls, d in ((FM.SatimageFeatures, 36), (FM.ShuttleFeatures, 9)):
        V = rng.normal(scale=1e6, size=(50, d))
        Z = cls().fit_transform(V)
        assert Z.shape == (50, d + 1) and np.all(np.linalg.norm(Z, axis=1) <= 1.0 + 1e-12)
        assert cls(intercept=None).fit_transform(V).shape == (50, d)


def test_maps_are_per_record_and_fit_learns_nothing():
    """Mapping a row alone or among others gives the same row; fitting on other rows gives the same map."""
    rows = _adult_rows()
    m = FM.AdultFeatures().fit(rows)
    np.testing.assert_array_equal(m.transform(rows.iloc[:1]), m.transform(rows)[:1])
    np.testing.assert_array_equal(FM.AdultFeatures().fit(rows.iloc[1:]).transform(rows), m.transform(rows))
    V = np.random.default_rng(1).uniform(0, 255, size=(20, 36))
    s = FM.SatimageFeatures().fit(V[:3])
    np.testing.assert_array_equal(s.transform(V[:5]), FM.SatimageFeatures().fit(V[10:]).transform(V[:5]))
    assert clone(FM.ShuttleFeatures(cap=100.0)).get_params()["cap"] == 100.0


def test_inputs_are_checked():
    with pytest.raises(TypeError):
        FM.AdultFeatures().fit(np.zeros((2, 14)))
    with pytest.raises(ValueError, match="missing columns"):
        FM.AdultFeatures().fit(_adult_rows().drop(columns=["sex"]))
    bad = _adult_rows()
    bad.loc[0, "sex"] = "unknown"
    with pytest.raises(ValueError, match="outside adult.names"):
        FM.AdultFeatures().fit_transform(bad)
    with pytest.raises(ValueError):
        FM.ShuttleFeatures().fit(np.zeros((3, 8)))
    with pytest.raises(ValueError):
        FM.SatimageFeatures(intercept=1.5).fit(np.zeros((3, 36)))


def test_a_pipeline_with_a_mechanism():
    from dpkernels import ObjectivePerturbation

    rng = np.random.default_rng(2)
    V = rng.integers(-300, 300, size=(300, 9)).astype(float)
    y = np.where(V[:, 0] > 0, 1, -1)
    pipe = make_pipeline(FM.ShuttleFeatures(), ObjectivePerturbation(epsilon=1.0, alpha=0.01, classes=[-1, 1],
                                                                     random_state=0)).fit(V, y)
    assert pipe.predict(V[:4]).shape == (4,)


def test_the_frontier_reads_its_features_through_the_maps():
    from dpkernels.experiments import frontier as F

    raw = pd.DataFrame(np.full((3, 36), 255.0))
    np.testing.assert_array_equal(F.public_features("satimage", raw), FM.SatimageFeatures().fit_transform(raw))
    with pytest.raises(ValueError, match="unknown data set"):
        F.public_features("mnist", raw)
