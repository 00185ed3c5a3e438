"""PublicBoundsScaler: a per-record map with public constants (issue 19: meet data_norm without a leak)."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest
from sklearn.pipeline import make_pipeline

from dpkernels import ClippingWarning, PublicBoundsScaler, nonprivate_diagnostics


def test_rows_land_in_the_ball_and_the_map_ignores_the_data():
    rng = np.random.default_rng(0)
    X = rng.uniform(-5, 5, size=(50, 4))
    s = PublicBoundsScaler(lower=-5, upper=5, norm=1.0).fit(X)
    Z = s.transform(X)
    assert np.all(np.linalg.norm(Z, axis=1) <= 1.0 + 1e-12)
    # a neighbouring data set (one row changed) gets the same map: the transformation reads no statistic of the rows
    X2 = X.copy()
    X2[0] = 4.9
    np.testing.assert_array_equal(PublicBoundsScaler(lower=-5, upper=5).fit(X2).transform(X[1:]), Z[1:])
    np.testing.assert_allclose(Z[:, 0], X[:, 0] / 5 / 2)  # [-5, 5] -> [-1, 1], then / sqrt(4)


def test_values_outside_the_public_bounds_are_clipped_silently_unless_diagnostics():
    """Issue 26.3: how many values lie outside their bounds is a statistic of the private rows: clipping is silent by
    default (a neighbour with one more outlier logs the same: nothing), counted only inside nonprivate_diagnostics()."""
    X = np.array([[0.0, 100.0]])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        Z = PublicBoundsScaler(lower=[0, 0], upper=[1, 10]).fit_transform(X)
        PublicBoundsScaler(lower=[0, 0], upper=[1, 10]).fit_transform(np.array([[5.0, 100.0]]))
    assert Z[0, 1] == pytest.approx(1 / np.sqrt(2))
    with nonprivate_diagnostics(), pytest.warns(ClippingWarning, match="1 values"):
        PublicBoundsScaler(lower=[0, 0], upper=[1, 10]).fit_transform(X)
    with pytest.raises(ValueError, match="upper > lower"):
        PublicBoundsScaler(lower=[0, 1], upper=[1, 1]).fit(X)


def test_feature_names_and_pandas_output():
    """Issue 25.8: scikit-learn's get_feature_names_out and set_output on the public map (one output per input)."""
    frame = pd.DataFrame({"age": [20.0, 80.0], "hours": [10.0, 60.0]})
    s = PublicBoundsScaler(lower=[0, 0], upper=[100, 100]).fit(frame)
    assert s.get_feature_names_out().tolist() == ["age", "hours"]
    out = PublicBoundsScaler(lower=[0, 0], upper=[100, 100]).set_output(transform="pandas").fit_transform(frame)
    assert isinstance(out, pd.DataFrame) and out.columns.tolist() == ["age", "hours"]
    np.testing.assert_allclose(out.to_numpy(), s.transform(frame))
    assert PublicBoundsScaler().fit(np.zeros((3, 2))).get_feature_names_out().tolist() == ["x0", "x1"]
    pipe = make_pipeline(PublicBoundsScaler(lower=[0, 0], upper=[100, 100])).set_output(transform="pandas")
    assert pipe.fit_transform(frame).columns.tolist() == ["age", "hours"]


@pytest.mark.parametrize("name", ["RandomFourierFeatures", "RademacherJL", "GaussianJL", "SparseJL", "SRHT"])
def test_the_data_independent_feature_maps_name_their_outputs(name):
    """Issue 25.8: every exported transformer supports get_feature_names_out and set_output(transform="pandas")."""
    import dpkernels

    X = pd.DataFrame(np.random.default_rng(0).uniform(size=(6, 5)), columns=list("abcde"))
    est = getattr(dpkernels, name)(n_components=4, random_state=0)
    out = est.set_output(transform="pandas").fit_transform(X)
    names = est.get_feature_names_out().tolist()
    assert isinstance(out, pd.DataFrame) and out.columns.tolist() == names
    assert len(names) == out.shape[1] and names[0] == f"{name.lower()}0"
    np.testing.assert_allclose(out.to_numpy(), est.set_output(transform="default").transform(X))
