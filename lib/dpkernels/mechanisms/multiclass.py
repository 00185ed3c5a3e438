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
from sklearn.utils.validation import check_is_fitted

from dpkernels._validation import check_delta_far_below_inverse_n, check_epsilon, validate_data
from dpkernels.accounting import compose_guarantees, split_budget
from dpkernels.mechanisms.base import REPLACE_ONE, Guarantee, ReleaseMixin, resolve_classes

__all__ = ["PrivateOneVsRest"]


class PrivateOneVsRest(ReleaseMixin, ClassifierMixin, BaseEstimator):
    """One-against-all classification with a binary private estimator, within a total privacy budget.

    For K > 2 public classes, one binary release per class ("class k" against "the rest") is fitted on the same rows,
    each with its share of the budget (:func:`dpkernels.accounting.split_budget`: epsilon / K each for a pure budget;
    dp-accounting's composition when delta > 0); two classes need one release on the whole budget.  The fitted
    ``guarantee_`` composes the releases' own guarantees (:func:`dpkernels.accounting.compose_guarantees`), slack
    included.  scikit-learn's ``OneVsRestClassifier`` around a private estimator spends K times the budget and says
    nothing.

    Parameters
    ----------
    estimator : BaseEstimator or None, default=None
        A binary dpkernels estimator, cloned once per class; it must take ``epsilon`` and ``classes`` (and ``delta``
        when it is (epsilon, delta)-DP).  Its other parameters are kept.  Required (None raises at fit).
    epsilon : float, default=1.0
        The total epsilon of all releases together.
    delta : float, default=0.0
        The total delta.  0: a pure budget, split as epsilon / K (the estimators' own small deltas, e.g. objective
        perturbation's floating-point one, add up and are stated).  An (epsilon, delta)-DP estimator needs delta > 0.
    classes : sequence or "data", default=None
        The public label set (K >= 2 labels); required: it is never read from the data (``"data"`` does that
        explicitly and voids the guarantee).
    keep_nonprivate : bool, default=False
        Evaluation only: keep the binary fits' non-private states in ``nonprivate_`` (the object is then not a
        release; :meth:`release` drops them).
    random_state : None, int, SeedSequence, numpy.random.Generator or SecretKey, default=None
        Passed to every binary estimator (each derives its own noise stream from it and its data).  None draws from
        operating-system entropy; a seed makes this fit and every binary release a reproduction
        (``guarantee_.status``), a :class:`~dpkernels.SecretKey` keeps them releases.

    Attributes
    ----------
    estimators_ : list of estimators
        The binary releases: one per class (class k against the rest), or one release of ``classes_[1]`` against
        ``classes_[0]`` when K = 2.
    epsilon_per_class_ : float
        The epsilon each binary release was given.
    delta_per_class_ : float
        The delta each binary release was given.
    classes_ : ndarray of shape (n_classes,)
        The public label set.
    n_features_in_ : int
        The number of input features.
    guarantee_ : Guarantee
        The composition of the releases' guarantees (:class:`~dpkernels.mechanisms.base.Guarantee`).
    nonprivate_ : list
        The binary fits' non-private states (``keep_nonprivate=True`` only; NOT private).

    See Also
    --------
    dpkernels.accounting.split_budget : the per-release budget.
    dpkernels.accounting.Accountant : a running total of releases on one data set.
    EquilibriumPointClassifier : Park's natively multi-class mechanism.

    Notes
    -----
    Privacy: sequential composition of the binary releases on the same data, for the replace-one neighbouring
    relation: ``guarantee_`` states the (epsilon, delta) that holds for all of them together (at most the budget,
    plus the releases' own floating-point deltas when the budget is pure, stated as ``guarantee_.fp_delta``), and its
    ``status`` is that of the binary releases and of this object's randomness (one UtilityWarning at most per fit).  Released: ``estimators_`` (each a
    release).  Assumptions: the label set ``classes`` is public; each binary estimator's own assumptions.  Publish
    :meth:`release`, which holds no seed and no non-private state.

    Examples
    --------
    >>> import numpy as np
    >>> from dpkernels import ObjectivePerturbation, PrivateOneVsRest
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(300, 4)); X /= np.maximum(1, np.linalg.norm(X, axis=1))[:, None]
    >>> y = np.argmax(X[:, :3], axis=1)
    >>> ovr = PrivateOneVsRest(ObjectivePerturbation(alpha=0.01), epsilon=3.0, classes=[0, 1, 2]).fit(X, y)
    >>> ovr.epsilon_per_class_
    1.0
    >>> round(ovr.guarantee_.epsilon, 6)
    3.0
    >>> ovr.predict(X[:5]).shape
    (5,)
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
        """Fit the binary releases within the total budget.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            The training rows (the private data).
        y : array-like of shape (n_samples,)
            The labels, in the public set ``classes``.

        Returns
        -------
        self
            The fitted estimator: a release whose ``guarantee_`` states the privacy level that holds.
        """
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
        if self.delta > 0:  # the composition states the total: each part's share passing its own check is not enough
            check_delta_far_below_inverse_n(float(self.delta), X.shape[0])
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
            epsilon=eps, delta=dlt, neighbouring=REPLACE_ONE,
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
        """The binary releases' scores.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            The rows to score.

        Returns
        -------
        ndarray of shape (n_samples,) or (n_samples, n_classes)
            Two classes: the binary release's score (positive: ``classes_[1]``); K > 2: one column per class.
        """
        check_is_fitted(self, "estimators_")
        if len(self.estimators_) == 1:
            return self.estimators_[0].decision_function(X)
        return np.column_stack([e.decision_function(X) for e in self.estimators_])

    def predict(self, X: ArrayLike) -> NDArray[Any]:
        """The class with the largest score (two classes: ``classes_[1]`` where the score is >= 0).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            The rows to classify.

        Returns
        -------
        ndarray of shape (n_samples,)
            Labels from ``classes_``.
        """
        scores = self.decision_function(X)
        if scores.ndim == 1:
            return self.classes_[(scores >= 0).astype(np.intp)]
        return self.classes_[np.argmax(scores, axis=1)]
