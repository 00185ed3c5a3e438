"""PublicBoundsScaler: a per-record map with public constants (issue 19: meet data_norm without a leak)."""

from __future__ import annotations

import numpy as np
import pytest

from dpkernels import ClippingWarning, PublicBoundsScaler


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


def test_values_outside_the_public_bounds_are_clipped_with_a_warning():
    X = np.array([[0.0, 100.0]])
    with pytest.warns(ClippingWarning, match="1 values"):
        Z = PublicBoundsScaler(lower=[0, 0], upper=[1, 10]).fit_transform(X)
    assert Z[0, 1] == pytest.approx(1 / np.sqrt(2))
    with pytest.raises(ValueError, match="upper > lower"):
        PublicBoundsScaler(lower=[0, 1], upper=[1, 1]).fit(X)
