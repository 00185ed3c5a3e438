"""The frontier's public feature maps as scikit-learn transformers: per-record maps with public constants only.

Every transformer maps one raw record to a row in the unit ball followed by a public constant feature (a penalised
intercept for the linear mechanisms), using only constants fixed before any data are seen: published vocabularies,
census top codes, documented ranges and stated round caps.  ``fit`` reads the number and names of the columns (public),
never a statistic of the rows, so neighbouring data sets (replace-one) get the same map and a mechanism's norm bound
``data_norm = 1`` holds by construction: the map costs no privacy.  These are the maps of
:mod:`dpkernels.experiments.frontier`; a practitioner whose data look like one of its data sets applies the same map
before any mechanism (``make_pipeline(AdultFeatures(), ObjectivePerturbation(...))``), and
:func:`dpkernels.recommend` answers for data mapped this way.

===========================  ===========================================================================================
transformer                  map
===========================  ===========================================================================================
:class:`AdultFeatures`       Adult's numeric columns divided by public caps (census top codes: age 90, capital gain
                             99,999, hours 99; the 16 education levels of adult.names; a stated round cap of 5,000 for
                             capital loss) and clipped; the 8 categoricals one-hot with adult.names' vocabularies
                             (:data:`ADULT_VOCABULARIES`); fnlwgt (a sampling weight, not an attribute) dropped.
:class:`KDDCup99Features`    KDDCup99's ``*_rate`` columns (rates in [0, 1] by definition) clipped; every other counter
                             through log1p(x) / log1p(cap) (cap 1e9 for durations and byte counts, 1e3 otherwise),
                             clipped; protocol, service and flag through a data-independent hash into
                             :data:`KDD_HASH_BUCKETS` buckets, one-hot.
:class:`SatimageFeatures`    pixels divided by 255 (their public range), centred at the midpoint, divided by sqrt(d).
:class:`ShuttleFeatures`     the nine sensor readings clipped to +-``cap`` (a stated round cap, 256), divided by cap and
                             by sqrt(d).
===========================  ===========================================================================================

Then rows are scaled into the unit ball (Adult, KDDCup99: divided by max(1, ||x||), a per-record operation), shrunk by
sqrt(1 - c^2) and the constant feature c = ``intercept`` (0.5) is appended: ||x|| <= 1 for every possible record.
"""

from __future__ import annotations

import hashlib
import math
from typing import Any

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike, NDArray
from sklearn.base import BaseEstimator, TransformerMixin
from sklearn.utils.validation import check_is_fitted

__all__ = [
    "ADULT_CAPS",
    "ADULT_VOCABULARIES",
    "KDD_BIG",
    "KDD_HASH_BUCKETS",
    "SHUTTLE_CAP",
    "INTERCEPT_FEATURE",
    "AdultFeatures",
    "KDDCup99Features",
    "SatimageFeatures",
    "ShuttleFeatures",
    "FEATURE_MAPS",
]

Array = NDArray[np.float64]

#: The public constant feature appended to every row (an intercept, penalised like the weights).
INTERCEPT_FEATURE = 0.5
#: Adult's numeric columns with public caps (values above are clipped): census top codes (age 90, capital gain
#: 99,999, hours 99), the 16 education levels of adult.names, and a stated round cap of 5,000 for capital loss.
ADULT_CAPS = {"age": 90.0, "education-num": 16.0, "capital-gain": 99999.0, "capital-loss": 5000.0, "hours-per-week": 99.0}
#: The vocabularies of Adult's categorical columns as published in adult.names (UCI), in its order; a test checks them
#: against the file.
ADULT_VOCABULARIES: dict[str, tuple[str, ...]] = {
    "workclass": ("Private", "Self-emp-not-inc", "Self-emp-inc", "Federal-gov", "Local-gov", "State-gov", "Without-pay",
                  "Never-worked"),
    "education": ("Bachelors", "Some-college", "11th", "HS-grad", "Prof-school", "Assoc-acdm", "Assoc-voc", "9th",
                  "7th-8th", "12th", "Masters", "1st-4th", "10th", "Doctorate", "5th-6th", "Preschool"),
    "marital-status": ("Married-civ-spouse", "Divorced", "Never-married", "Separated", "Widowed",
                       "Married-spouse-absent", "Married-AF-spouse"),
    "occupation": ("Tech-support", "Craft-repair", "Other-service", "Sales", "Exec-managerial", "Prof-specialty",
                   "Handlers-cleaners", "Machine-op-inspct", "Adm-clerical", "Farming-fishing", "Transport-moving",
                   "Priv-house-serv", "Protective-serv", "Armed-Forces"),
    "relationship": ("Wife", "Own-child", "Husband", "Not-in-family", "Other-relative", "Unmarried"),
    "race": ("White", "Asian-Pac-Islander", "Amer-Indian-Eskimo", "Other", "Black"),
    "sex": ("Female", "Male"),
    "native-country": ("United-States", "Cambodia", "England", "Puerto-Rico", "Canada", "Germany",
                       "Outlying-US(Guam-USVI-etc)", "India", "Japan", "Greece", "South", "China", "Cuba", "Iran",
                       "Honduras", "Philippines", "Italy", "Poland", "Jamaica", "Vietnam", "Mexico", "Portugal",
                       "Ireland", "France", "Dominican-Republic", "Laos", "Ecuador", "Taiwan", "Haiti", "Columbia",
                       "Hungary", "Guatemala", "Nicaragua", "Scotland", "Thailand", "Yugoslavia", "El-Salvador",
                       "Trinadad&Tobago", "Peru", "Hong", "Holand-Netherlands"),
}
#: KDDCup99's counters with the large public cap 1e9 (durations and byte counts); the others use 1e3.
KDD_BIG = ("duration", "src_bytes", "dst_bytes")
#: Buckets of the data-independent hash of each KDDCup99 categorical column.
KDD_HASH_BUCKETS = 16
#: shuttle's sensor readings are clipped to [-cap, cap] and divided by cap (a stated round cap, not read from the data).
SHUTTLE_CAP = 256.0


def _unit_ball(X: Array) -> Array:
    return X / np.maximum(np.linalg.norm(X, axis=1), 1.0)[:, None]


def _with_constant(X: Array, c: float | None) -> Array:
    """Rows of norm <= 1 shrunk by sqrt(1 - c^2), with the public constant feature c appended (rows stay in the unit
    ball); ``c = None``: the rows unchanged."""
    if c is None:
        return X
    return np.hstack([X * math.sqrt(1.0 - c * c), np.full((X.shape[0], 1), c)])


def _hash_bucket(value: str, column: str, buckets: int) -> int:
    """A data-independent bucket of a categorical value (SHA-1 of ``column=value``)."""
    return int(hashlib.sha1(f"{column}={value}".encode()).hexdigest(), 16) % buckets


class _PublicMap(TransformerMixin, BaseEstimator):
    """A per-record map with public constants: ``fit`` checks the columns and learns nothing from the rows."""

    _columns: tuple[str, ...] = ()  #: required columns of a DataFrame input (named maps); () for numeric arrays
    _n_columns: int | None = None  #: required number of columns of a numeric input

    def __init__(self, *, intercept: float | None = INTERCEPT_FEATURE) -> None:
        self.intercept = intercept

    def _check(self, X: Any) -> Any:
        if self._columns:
            if not isinstance(X, pd.DataFrame):
                raise TypeError(f"{type(self).__name__} takes a pandas DataFrame with the columns {list(self._columns)}")
            missing = [c for c in self._columns if c not in X.columns]
            if missing:
                raise ValueError(f"{type(self).__name__}: missing columns {missing}")
            return X
        A = np.asarray(X, dtype=np.float64)
        if A.ndim != 2 or A.shape[1] != self._n_columns:
            raise ValueError(f"{type(self).__name__} takes {self._n_columns} numeric columns, got shape {A.shape}")
        return A

    def fit(self, X: ArrayLike, y: ArrayLike | None = None) -> "_PublicMap":
        """Check the columns (public); nothing is read from the rows.

        Parameters
        ----------
        X : DataFrame or array-like
            Raw records.
        y : ignored

        Returns
        -------
        self
        """
        c = self.intercept
        if c is not None and not (0.0 <= float(c) < 1.0):
            raise ValueError(f"intercept must lie in [0, 1) or be None, got {c!r}")
        X = self._check(X)
        self.n_features_in_ = len(self._columns) if self._columns else int(X.shape[1])
        return self

    def transform(self, X: ArrayLike) -> Array:
        """Map every record (independently of the others) into the unit ball, then append the constant feature.

        Parameters
        ----------
        X : DataFrame or array-like
            Raw records.

        Returns
        -------
        ndarray of shape (n_samples, n_features_out)
            Rows of Euclidean norm at most 1.
        """
        check_is_fitted(self, "n_features_in_")
        return _with_constant(self._map(self._check(X)), self.intercept)

    def _map(self, X: Any) -> Array:  # pragma: no cover - every subclass defines it
        raise NotImplementedError


class AdultFeatures(_PublicMap):
    """UCI Adult's public per-record map: 104 features and a constant one, rows in the unit ball.

    The five numeric columns are divided by public caps (:data:`ADULT_CAPS`: census top codes and a stated round cap)
    and clipped to [0, 1]; the eight categoricals are one-hot with adult.names' vocabularies
    (:data:`ADULT_VOCABULARIES`; a value outside them raises); fnlwgt is dropped.  Each row is divided by
    max(1, ||x||), shrunk by sqrt(1 - c^2) and the constant c = ``intercept`` appended.  Nothing is read from the
    rows: the map costs no privacy.

    Parameters
    ----------
    intercept : float or None, default=0.5
        The public constant feature appended to every row (None: none).

    Attributes
    ----------
    n_features_in_ : int
        The number of raw columns the map reads (13).

    Examples
    --------
    >>> import pandas as pd
    >>> from dpkernels.feature_maps import AdultFeatures
    >>> row = pd.DataFrame([{"age": 39, "workclass": "State-gov", "fnlwgt": 77516, "education": "Bachelors",
    ...     "education-num": 13, "marital-status": "Never-married", "occupation": "Adm-clerical",
    ...     "relationship": "Not-in-family", "race": "White", "sex": "Male", "capital-gain": 2174,
    ...     "capital-loss": 0, "hours-per-week": 40, "native-country": "United-States"}])
    >>> X = AdultFeatures().fit_transform(row)
    >>> X.shape, bool(abs(X[0, -1] - 0.5) < 1e-12), bool((X ** 2).sum() <= 1.0)
    ((1, 105), True, True)
    """

    _columns = (*ADULT_CAPS, *ADULT_VOCABULARIES)

    def _map(self, frame: pd.DataFrame) -> Array:
        blocks = [np.clip(frame[c].to_numpy(np.float64) / cap, 0.0, 1.0)[:, None] for c, cap in ADULT_CAPS.items()]
        for col, values in ADULT_VOCABULARIES.items():
            codes = pd.Index(values).get_indexer(frame[col].to_numpy())
            if np.any(codes < 0):
                raise ValueError(f"Adult column {col!r} has values outside adult.names")
            blocks.append(np.eye(len(values))[codes])
        return _unit_ball(np.hstack(blocks))


class KDDCup99Features(_PublicMap):
    """KDD Cup 1999's public per-record map: 86 features and a constant one, rows in the unit ball.

    The ``*_rate`` columns (rates in [0, 1] by definition) are clipped; every other counter goes through
    log1p(x) / log1p(cap) with a public cap (1e9 for durations and byte counts, :data:`KDD_BIG`; 1e3 otherwise),
    clipped; protocol, service and flag through a data-independent hash into :data:`KDD_HASH_BUCKETS` buckets,
    one-hot.  Each row is divided by max(1, ||x||), shrunk by sqrt(1 - c^2) and the constant c = ``intercept``
    appended.  Nothing is read from the rows: the map costs no privacy.

    Parameters
    ----------
    intercept : float or None, default=0.5
        The public constant feature appended to every row (None: none).

    Attributes
    ----------
    n_features_in_ : int
        The number of raw columns the map reads (41).

    Examples
    --------
    >>> import pandas as pd
    >>> from dpkernels.feature_maps import KDDCup99Features
    >>> row = {c: 0.0 for c in KDDCup99Features._numeric}
    >>> row.update(protocol_type="tcp", service="http", flag="SF", src_bytes=181.0, count=8.0)
    >>> X = KDDCup99Features().fit_transform(pd.DataFrame([row]))
    >>> X.shape, bool((X ** 2).sum() <= 1.0)
    ((1, 87), True)
    """

    _numeric = ("duration", "src_bytes", "dst_bytes", "land", "wrong_fragment", "urgent", "hot", "num_failed_logins",
                "logged_in", "num_compromised", "root_shell", "su_attempted", "num_root", "num_file_creations",
                "num_shells", "num_access_files", "num_outbound_cmds", "is_host_login", "is_guest_login", "count",
                "srv_count", "serror_rate", "srv_serror_rate", "rerror_rate", "srv_rerror_rate", "same_srv_rate",
                "diff_srv_rate", "srv_diff_host_rate", "dst_host_count", "dst_host_srv_count",
                "dst_host_same_srv_rate", "dst_host_diff_srv_rate", "dst_host_same_src_port_rate",
                "dst_host_srv_diff_host_rate", "dst_host_serror_rate", "dst_host_srv_serror_rate",
                "dst_host_rerror_rate", "dst_host_srv_rerror_rate")
    _categorical = ("protocol_type", "service", "flag")
    _columns = (*_numeric, *_categorical)

    def _map(self, frame: pd.DataFrame) -> Array:
        blocks = []
        for c in self._numeric:
            x = np.maximum(frame[c].to_numpy(np.float64), 0.0)
            if c.endswith("_rate"):
                blocks.append(np.clip(x, 0.0, 1.0)[:, None])
            else:
                cap = 1e9 if c in KDD_BIG else 1e3
                blocks.append(np.clip(np.log1p(x) / math.log1p(cap), 0.0, 1.0)[:, None])
        for col in self._categorical:
            values = frame[col].astype(str)
            idx = values.map({v: _hash_bucket(v, col, KDD_HASH_BUCKETS) for v in values.unique()}).to_numpy()
            blocks.append(np.eye(KDD_HASH_BUCKETS)[idx])
        return _unit_ball(np.hstack(blocks))


class SatimageFeatures(_PublicMap):
    """Statlog Landsat satellite (satimage)'s public per-record map: 36 features and a constant one.

    The 36 pixel values are divided by 255 (their public range), clipped, centred at the midpoint and divided by
    sqrt(36), so every row lies in the unit ball; it is shrunk by sqrt(1 - c^2) and the constant c = ``intercept``
    appended.  Nothing is read from the rows: the map costs no privacy.

    Parameters
    ----------
    intercept : float or None, default=0.5
        The public constant feature appended to every row (None: none).

    Attributes
    ----------
    n_features_in_ : int
        The number of raw columns (36).

    Examples
    --------
    >>> import numpy as np
    >>> from dpkernels.feature_maps import SatimageFeatures
    >>> X = SatimageFeatures().fit_transform(np.full((2, 36), 255.0))
    >>> X.shape, bool(np.all((X ** 2).sum(axis=1) <= 1.0))
    ((2, 37), True)
    """

    _n_columns = 36

    def _map(self, V: Array) -> Array:
        return (2.0 * np.clip(V / 255.0, 0.0, 1.0) - 1.0) / math.sqrt(V.shape[1])


class ShuttleFeatures(_PublicMap):
    """Statlog shuttle's public per-record map: 9 features and a constant one.

    The nine sensor readings are clipped to [-cap, cap] (a stated round cap, :data:`SHUTTLE_CAP`, not read from the
    data), divided by cap and by sqrt(9), so every row lies in the unit ball; it is shrunk by sqrt(1 - c^2) and the
    constant c = ``intercept`` appended.  Nothing is read from the rows: the map costs no privacy.

    Parameters
    ----------
    cap : float, default=256
        The stated round cap of the readings.
    intercept : float or None, default=0.5
        The public constant feature appended to every row (None: none).

    Attributes
    ----------
    n_features_in_ : int
        The number of raw columns (9).

    Examples
    --------
    >>> import numpy as np
    >>> from dpkernels.feature_maps import ShuttleFeatures
    >>> X = ShuttleFeatures().fit_transform(np.array([[1e6, -1e6, 0, 0, 0, 0, 0, 0, 0]]))
    >>> X.shape, bool((X ** 2).sum() <= 1.0)
    ((1, 10), True)
    """

    _n_columns = 9

    def __init__(self, *, cap: float = SHUTTLE_CAP, intercept: float | None = INTERCEPT_FEATURE) -> None:
        self.cap = cap
        super().__init__(intercept=intercept)

    def _map(self, V: Array) -> Array:
        if not (math.isfinite(self.cap) and self.cap > 0):
            raise ValueError(f"cap must be a finite number > 0, got {self.cap!r}")
        return np.clip(V / self.cap, -1.0, 1.0) / math.sqrt(V.shape[1])


#: The frontier's data sets and their maps.
FEATURE_MAPS: dict[str, type[_PublicMap]] = {"adult": AdultFeatures, "kddcup99": KDDCup99Features,
                                             "satimage": SatimageFeatures, "shuttle": ShuttleFeatures}
