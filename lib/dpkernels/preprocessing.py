"""Feature maps that cost no privacy: per-record transformations with public constants.

A scaler fitted on the private data (``StandardScaler``, ``MinMaxScaler``) reads statistics of it (means, variances,
ranges) that no guarantee covers.  :class:`PublicBoundsScaler` instead maps every row through constants the user states
before seeing the data (documented ranges of each measurement, domain knowledge), so neighbouring data sets get the
same map and the mechanisms' norm bound (``data_norm``) holds by construction.
"""

from __future__ import annotations

import math
import warnings
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray
from sklearn.base import BaseEstimator, OneToOneFeatureMixin, TransformerMixin
from sklearn.utils.validation import check_is_fitted

from dpkernels._validation import ClippingWarning, check_positive, diagnostics_enabled, validate_data

__all__ = ["PublicBoundsScaler"]


class PublicBoundsScaler(OneToOneFeatureMixin, TransformerMixin, BaseEstimator):
    """Map each feature from public bounds [lower_j, upper_j] to [-1, 1], then rows into the ball of radius ``norm``.

    x_j -> (2 x_j - (lower_j + upper_j)) / (upper_j - lower_j), clipped to [-1, 1], then the row is divided by
    sqrt(d) / ``norm``, so ||x|| <= ``norm`` for every possible input: pass the same ``norm`` as the mechanism's
    ``data_norm``.  Clipping is silent: how many values lie outside their bounds is a statistic of the private rows,
    which a log must not carry (inside :func:`dpkernels.nonprivate_diagnostics` a :class:`~dpkernels.ClippingWarning`
    counts them).

    ``fit`` reads only the number of columns (public) and the column names of a DataFrame, never a statistic of the
    rows, so the transformation is the same on neighbouring data sets and costs no privacy.  The output keeps the
    input's feature names (``get_feature_names_out``; ``set_output(transform="pandas")`` works).

    Parameters
    ----------
    lower, upper : array-like of shape (n_features,) or float, default=0.0 and 1.0
        Public bounds of every feature, fixed before the data are seen (documented ranges, domain knowledge).
    norm : float, default 1
        The radius of the ball the rows are mapped into.

    Attributes
    ----------
    n_features_in_ : int
        The number of input features.
    feature_names_in_ : ndarray of shape (`n_features_in_`,)
        The column names of a DataFrame ``X`` at fit (public: the schema).
    scale_ : float
        The row scaling ``norm / sqrt(d)``.

    Examples
    --------
    >>> import numpy as np
    >>> from dpkernels.preprocessing import PublicBoundsScaler
    >>> X = np.array([[0.0, 10.0], [5.0, 30.0]])
    >>> Z = PublicBoundsScaler(lower=[0, 0], upper=[10, 40]).fit_transform(X)
    >>> bool(np.all(np.linalg.norm(Z, axis=1) <= 1))
    True
    """

    def __init__(self, lower: ArrayLike = 0.0, upper: ArrayLike = 1.0, *, norm: float = 1.0) -> None:
        self.lower = lower
        self.upper = upper
        self.norm = norm

    def _bounds(self, d: int) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
        lo = np.broadcast_to(np.asarray(self.lower, dtype=np.float64), (d,))
        hi = np.broadcast_to(np.asarray(self.upper, dtype=np.float64), (d,))
        if not (np.all(np.isfinite(lo)) and np.all(np.isfinite(hi)) and np.all(hi > lo)):
            raise ValueError("lower and upper must be finite public bounds with upper > lower for every feature")
        return lo, hi

    def fit(self, X: ArrayLike, y: Any = None) -> "PublicBoundsScaler":
        """Check the public bounds and set the row scaling; only the number of columns of X is read.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Only its number of columns is used.
        y : None
            Ignored.

        Returns
        -------
        self
        """
        X = validate_data(self, X, reset=True, dtype=np.float64)
        self._bounds(X.shape[1])
        self.scale_ = check_positive(self.norm, "norm") / math.sqrt(X.shape[1])
        return self

    def transform(self, X: ArrayLike) -> NDArray[np.float64]:
        """Map every row from the public bounds into the ball of radius ``norm`` (a per-record map).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        ndarray of shape (n_samples, n_features)
            Rows of norm <= ``norm``; values outside the bounds are clipped (silently, see the class docstring).
        """
        check_is_fitted(self, "scale_")
        X = validate_data(self, X, reset=False, dtype=np.float64)
        lo, hi = self._bounds(X.shape[1])
        Z = (2.0 * X - (lo + hi)) / (hi - lo)
        outside = np.abs(Z) > 1.0
        if np.any(outside):
            if diagnostics_enabled():
                warnings.warn(f"{int(outside.sum())} values lie outside their public bounds and were clipped "
                              "[nonprivate_diagnostics]", ClippingWarning, stacklevel=2)
            np.clip(Z, -1.0, 1.0, out=Z)
        return Z * self.scale_
