"""Constants of the frontier's public rules derived from public data the frontier does not use (issue 29).

A public hyper-parameter rule is only as public as its constants: a constant read off the frontier's own data sets
(as ``CHAUDHURI_NORM_BOUND = 100`` once was, to reproduce Chaudhuri et al.'s Section 7 choices on Adult and
KDDCup99) favours the mechanism it belongs to on exactly those data.  :func:`norm_bound` derives the norm of the
comparator f0 of Chaudhuri et al.'s Theorems 15 and 18 (``dpkernels.defaults.CHAUDHURI_NORM_BOUND``) from six public
data sets outside the frontier: scikit-learn's breast cancer and digits (bundled with scikit-learn), iris and wine,
Statlog segment and Deterding's vowel (bundled with dpkernels).  Being public, these data may be scaled by their own
ranges; rows are mapped into the unit ball with the frontier's constant feature, each class against the rest is one
binary task, and the norm of the non-private logistic regression whose Lambda 5-fold cross-validation picks from
:data:`dpkernels.defaults.NONPRIVATE_LAMBDAS` is f0's (a good comparator, as the theorems' f0 is).  The constant is
the median over data sets of each data set's median norm, rounded to one significant figure.
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from dpkernels.feature_maps import INTERCEPT_FEATURE

__all__ = ["PROXY_DATASETS", "proxy_data", "norm_bound"]

#: The public data sets of the calibration (none is a frontier data set).
PROXY_DATASETS = ("breast_cancer", "digits", "iris", "wine", "segment", "vowel")


def _unit_ball_rows(X: NDArray[np.float64]) -> NDArray[np.float64]:
    """Each column scaled by its range to [-1, 1], rows divided by sqrt(d), shrunk by sqrt(1 - c^2), and the constant
    feature c appended (the frontier's convention for satimage and shuttle)."""
    lo, hi = X.min(axis=0), X.max(axis=0)
    Z = (2.0 * (X - lo) / np.where(hi > lo, hi - lo, 1.0) - 1.0) / math.sqrt(X.shape[1])
    c = INTERCEPT_FEATURE
    return np.hstack([Z * math.sqrt(1.0 - c * c), np.full((len(Z), 1), c)])


def proxy_data(name: str) -> tuple[NDArray[np.float64], NDArray[np.int64]]:
    """A calibration data set, mapped into the unit ball with the constant feature, and its labels."""
    from sklearn import datasets as S

    from dpkernels import datasets as D

    if name == "breast_cancer":
        X, y = S.load_breast_cancer(return_X_y=True)
    elif name == "digits":
        X, y = S.load_digits(return_X_y=True)
    elif name in ("iris", "wine", "segment", "vowel"):
        ds = {"iris": D.load_iris, "wine": D.load_wine, "segment": D.load_segment, "vowel": D.load_vowel}[name]()
        X, y = ds.X, ds.y
    else:
        raise ValueError(f"unknown calibration data set {name!r}; known: {list(PROXY_DATASETS)}")
    return _unit_ball_rows(np.asarray(X, dtype=np.float64)), np.asarray(y)


def norm_bound(datasets: tuple[str, ...] = PROXY_DATASETS) -> tuple[float, pd.DataFrame]:
    """The derived ||f0|| (module docstring) and the per-task table it comes from.

    Returns
    -------
    value : float
        The median over ``datasets`` of each one's median norm, rounded to one significant figure.
    table : DataFrame
        One row per (data set, task): the chosen Lambda and the norm of the solution.
    """
    from sklearn.linear_model import LogisticRegression
    from sklearn.model_selection import GridSearchCV, StratifiedKFold

    from dpkernels.defaults import NONPRIVATE_LAMBDAS, sklearn_C

    rows = []
    for name in datasets:
        X, y = proxy_data(name)
        classes = np.unique(y)
        for c in classes[1:] if len(classes) == 2 else classes:
            t = np.where(y == c, 1, -1)
            grid = {"C": [sklearn_C(len(t), lam) for lam in NONPRIVATE_LAMBDAS]}
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # convergence notes at the smallest Lambda
                search = GridSearchCV(LogisticRegression(fit_intercept=False, solver="newton-cg", max_iter=10_000),
                                      grid, cv=StratifiedKFold(5, shuffle=True, random_state=0)).fit(X, t)
            rows.append({"dataset": name, "task": str(c), "n": len(t), "d": X.shape[1],
                         "Lambda": 1.0 / (len(t) * search.best_params_["C"]),
                         "norm": float(np.linalg.norm(search.best_estimator_.coef_))})
    table = pd.DataFrame(rows)
    median = float(table.groupby("dataset")["norm"].median().median())
    digits = -int(math.floor(math.log10(median)))
    return float(round(median, digits)), table
