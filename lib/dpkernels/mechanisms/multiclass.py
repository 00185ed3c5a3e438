"""Multi-class classification from a binary mechanism, with the composition accounted.

:class:`PrivateOneVsRest` fits one binary release per class of a public label set ("class k" against "the rest") on
the same rows.  K releases on the same data compose: the total (epsilon, delta) is split with
:func:`dpkernels.accounting.split_budget` (epsilon / K each for a pure budget; dp-accounting's composition when
delta > 0), and the fitted ``guarantee_`` is the composition of the K releases' own guarantees
(:func:`dpkernels.accounting.compose_guarantees`), slack included.  This is what scikit-learn's
``OneVsRestClassifier`` around a private estimator does *not* do: it spends K times the budget and says nothing.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, ClassVar

import numpy as np
from numpy.typing import ArrayLike, NDArray
from sklearn.base import BaseEstimator, ClassifierMixin, clone
from sklearn.utils.validation import check_is_fitted, validate_data

from dpkernels._validation import check_epsilon
from dpkernels.accounting import compose_guarantees, split_budget
from dpkernels.mechanisms.base import REPLACE_ONE, Guarantee, ReleaseMixin, resolve_classes

__all__ = ["PrivateOneVsRest"]


class PrivateOneVsRest(ReleaseMixin, ClassifierMixin, BaseEstimator):
    """One-against-all with a binary private estimator, within a total privacy budget.

    Parameters
    ----------
    estimator : a binary dpkernels estimator
        Cloned once per class; it must take ``epsilon`` and ``classes`` (and ``delta`` when ``delta > 0`` is to be
        passed on).  Its other parameters are kept.
    epsilon : float
        The total epsilon of all K releases together.
    delta : float, default 0
        The total delta (0: a pure budget, split as epsilon / K; the estimators' own small deltas, e.g. objective
        perturbation's floating-point one, add up and are stated).
    classes : sequence
        The public label set (K >= 2 labels; never read from the data).
    keep_nonprivate : bool, default False
        Evaluation only: keep the binary fits' non-private states in ``nonprivate_`` (the object is then not a
        release; :meth:`release` drops them).
    random_state : int, SeedSequence, Generator or None
        Passed to every binary estimator (each derives its own noise stream from it and its data).

    Attributes
    ----------
    estimators_ : list of the K binary releases (each a release of class k against the rest; one release of classes_[1]
        against classes_[0] when K = 2)
    classes_ : the public label set
    epsilon_per_class_, delta_per_class_ : what each binary release was given
    guarantee_ : the composition of the K releases' guarantees

    Examples
    --------
    >>> import numpy as np
    >>> from dpkernels import ObjectivePerturbation, PrivateOneVsRest
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(300, 4)); X /= np.maximum(1, np.linalg.norm(X, axis=1))[:, None]
    >>> y = np.argmax(X[:, :3], axis=1)
    >>> ovr = PrivateOneVsRest(ObjectivePerturbation(Lambda=0.01), epsilon=3.0, classes=[0, 1, 2]).fit(X, y)
    >>> ovr.epsilon_per_class_
    1.0
    >>> round(ovr.guarantee_.epsilon, 6)
    3.0
    """

    _release_attributes: ClassVar[tuple[str, ...]] = ("estimators_", "epsilon_per_class_", "delta_per_class_")

    def __init__(self, estimator: BaseEstimator | None = None, *, epsilon: float = 1.0, delta: float = 0.0,
                 classes: Sequence[Any] | None = None, keep_nonprivate: bool = False, random_state: object = None
                 ) -> None:
        self.estimator = estimator
        self.epsilon = epsilon
        self.delta = delta
        self.classes = classes
        self.keep_nonprivate = keep_nonprivate
        self.random_state = random_state

    def fit(self, X: ArrayLike, y: ArrayLike) -> "PrivateOneVsRest":
        if self.estimator is None:
            raise ValueError("estimator is required: a binary dpkernels estimator")
        if self.classes is None:
            raise ValueError("classes is required: the public label set (it is never read from the private data; "
                             "classes='data' does that explicitly and voids the guarantee)")
        X, y = validate_data(self, X, y, reset=True, accept_sparse=True, dtype=np.float64)
        classes, idx = resolve_classes(y, self.classes, binary=False, n_samples=X.shape[0])
        K = len(classes)
        epsilon = check_epsilon(self.epsilon)
        params = self.estimator.get_params()
        if "delta" in params and self.delta == 0:
            raise ValueError(f"{type(self.estimator).__name__} is (epsilon, delta)-DP: give PrivateOneVsRest a delta > 0")
        # two classes need one release (class 1 against class 0) on the whole budget; K > 2 need K releases
        n_fits = 1 if K == 2 else K
        eps_k, delta_k = split_budget(epsilon, float(self.delta), n_fits)
        self.estimators_ = []
        for k in range(n_fits):
            est = clone(self.estimator).set_params(epsilon=eps_k, classes=[-1, 1], random_state=self.random_state,
                                                   keep_nonprivate=self.keep_nonprivate)
            if "delta" in params:
                est.set_params(delta=delta_k)
            fitted = est.fit(X, np.where(idx == (1 if K == 2 else k), 1, -1))
            if "random_state" in fitted.get_params():
                fitted.set_params(random_state=None)  # the seed stays in this object's parameters only
            self.estimators_.append(fitted)
        self.classes_ = classes
        self.epsilon_per_class_, self.delta_per_class_ = eps_k, delta_k
        if self.keep_nonprivate:  # evaluation only: the binary fits' non-private states, beside the release
            self.nonprivate_ = [e.__dict__.pop("nonprivate_") for e in self.estimators_]
            for e in self.estimators_:
                e.set_params(keep_nonprivate=False)
        gs = [e.guarantee_ for e in self.estimators_]
        eps, dlt = compose_guarantees(gs, float(self.delta) if self.delta > 0 else None)
        self.guarantee_ = Guarantee(
            epsilon=eps, delta=dlt, neighbouring=REPLACE_ONE, private=all(g.private for g in gs),
            statement=f"sequential composition of {K} one-against-all releases of {gs[0].statement}",
            released=f"{K} binary releases, class k against the rest (estimators_)",
            assumptions=(f"labels in the public set classes = {classes.tolist()}",
                         f"each binary release: ({eps_k:.6g}, {delta_k:.3g}) asked, "
                         f"({max(g.epsilon for g in gs):.6g}, {max(g.delta for g in gs):.3g}) at most stated",
                         *gs[0].assumptions[1:]),
            attributes=self._release_attributes, noise=gs[0].noise,
            notes=self._notes() + ("composition by dpkernels.accounting (dp-accounting's privacy-loss distributions "
                                   "when delta > 0, else the sum)",))
        self._void_if_data_derived()
        return self

    def __sklearn_tags__(self) -> Any:
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        return tags

    def decision_function(self, X: ArrayLike) -> NDArray[np.float64]:
        """Two classes: the binary release's score (positive: classes_[1]); K > 2: one column per class."""
        check_is_fitted(self, "estimators_")
        if len(self.estimators_) == 1:
            return self.estimators_[0].decision_function(X)
        return np.column_stack([e.decision_function(X) for e in self.estimators_])

    def predict(self, X: ArrayLike) -> NDArray[Any]:
        scores = self.decision_function(X)
        if scores.ndim == 1:
            return self.classes_[(scores >= 0).astype(np.intp)]
        return self.classes_[np.argmax(scores, axis=1)]
