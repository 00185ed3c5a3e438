"""Private hyper-parameter selection for any private estimator: Chaudhuri et al.'s Algorithm 4, generalised.

Chaudhuri, Monteleoni and Sarwate (2011), Section 6, Algorithm 4 and Theorem 26, choose the regulariser of output or
objective perturbation privately: split the data (by a data-independent permutation) into m + 1 disjoint parts, train
candidate i on part i with the whole budget, count each candidate's mistakes z_i on the last part, and draw index i
with probability proportional to exp(-eps z_i / 2) (the exponential mechanism; a count has sensitivity 1).
Nothing in the argument is specific to their two learners: :class:`PrivateSelection` runs it over *any* list of
candidate estimators that state their guarantee (``guarantee_``), e.g. one private mechanism at a grid of its
hyper-parameters, or a one-against-all composite on a multi-class task.  It is the frontier's one selector for every
mechanism (:mod:`dpkernels.experiments.frontier`, issue 29): the same end-to-end budget, the same protocol.

Privacy (replace-one, n public).  A replaced row lies in exactly one part.  In training part i it changes candidate i
only, whose release is (eps_i, delta_i)-DP; the other candidates and the validation counts' inputs are unchanged, and
the selection is post-processing.  In the validation part it changes no candidate and each count by at most 1: the
exponential mechanism is eps-DP.  Hence the output (the selected release and its index) is (max(eps, max_i eps_i),
max_i delta_i)-DP: parallel composition, as in Theorem 26.  The split is drawn without the data.

Cost.  The candidates see n / (m + 1) rows each: m fits on disjoint parts cost about one fit on all the rows (plus m
fixed costs), the price of the selection being statistical (fewer rows per candidate), not computational.  Other
selectors (Liu and Talwar, STOC 2019; Papernot and Steinke, ICLR 2022) train every repetition on all the rows at a
fraction of the budget (2 to 3 times less epsilon each) and repeat a random number of times: more computation, and
for (epsilon, delta) candidates a more delicate accounting.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Any, ClassVar

import numpy as np
from numpy.typing import ArrayLike, NDArray
from sklearn.base import BaseEstimator, ClassifierMixin, clone
from sklearn.utils.validation import check_is_fitted

from dpkernels import lattice
from dpkernels._validation import check_epsilon, validate_data
from dpkernels.mechanisms.base import NUMERICAL_ASSUMPTIONS, Guarantee, ReleaseMixin

__all__ = ["PrivateSelection", "SelectionEvaluation", "stated_guarantee"]


def stated_guarantee(estimator: Any) -> Guarantee:
    """The ``guarantee_`` a fitted estimator states (a scikit-learn ``Pipeline``: its last step's, the steps before it
    being public per-record maps).

    Raises
    ------
    ValueError
        If the estimator states no guarantee.
    """
    est = estimator[-1] if hasattr(estimator, "steps") else estimator
    g = getattr(est, "guarantee_", None)
    if g is None:
        raise ValueError(f"{type(est).__name__} states no guarantee_: it cannot be a candidate of a private selection")
    return g


def _set_random_state(estimator: Any, rng: np.random.Generator | None) -> Any:
    """Give an (unfitted, cloned) candidate the selection's generator, or take it away again after the fit (None):
    no fitted object keeps a generator (a Pipeline: its last step)."""
    if hasattr(estimator, "steps"):
        name = estimator.steps[-1][0]
        if "random_state" in estimator.steps[-1][1].get_params(deep=False):
            estimator.set_params(**{f"{name}__random_state": rng})
    elif "random_state" in estimator.get_params(deep=False):
        estimator.set_params(random_state=rng)
    return estimator


@dataclasses.dataclass(frozen=True)
class SelectionEvaluation:
    """Evaluation-only state of a selection (NOT private): every candidate's validation mistakes, the unselected
    fitted candidates (in order) and the validation part's size."""

    mistakes: NDArray[np.float64]
    candidates: list[Any]
    n_validation: int


class PrivateSelection(ReleaseMixin, ClassifierMixin, BaseEstimator):
    """Choose one of several private estimators privately: disjoint parts, validation mistakes, exponential mechanism.

    Chaudhuri et al. (2011) Algorithm 4 with any candidates (module docstring): the rows are split by a
    data-independent permutation into m = len(candidates) training parts of equal size and a validation part of
    ``validation_size`` rows; candidate i is fitted on part i; z_i is its number of mistakes on the validation part;
    index i is drawn with probability proportional to exp(-epsilon z_i / 2), exactly
    (:func:`dpkernels.lattice.exponential_mechanism_exact`).

    Parameters
    ----------
    candidates : sequence of estimators
        Unfitted private estimators (e.g. one mechanism at a grid of hyper-parameters), each with its own budget and
        its public label set; each states its guarantee when fitted (``guarantee_``, or its last step's for a
        ``Pipeline``).  Cloned at fit; their ``random_state`` is replaced by the selection's generator.  The grid must
        be chosen without the private data.
    epsilon : float, default=1.0
        The exponential mechanism's epsilon (Chaudhuri et al. use the learners' eps_p for both).
    validation_size : int or None, default=None
        Rows of the validation part; None: n // (m + 1) (Theorem 26's equal parts).
    keep_nonprivate : bool, default=False
        Keep every candidate's validation mistakes and the unselected candidates as ``nonprivate_`` (evaluation only;
        the object is then not a release).
    random_state : None, int, SeedSequence or numpy.random.Generator, default=None
        Source of the split (data-independent), the candidates' noise and the selection.  None draws from
        operating-system entropy; a seed is for reproduction only.

    Attributes
    ----------
    best_estimator_ : estimator
        The selected candidate, fitted on its part (itself a release).
    selected_ : int
        Its index in ``candidates``.
    classes_ : ndarray
        The public label set (the selected candidate's).
    n_features_in_ : int
        The number of input features.
    guarantee_ : Guarantee
        (max(epsilon, max_i eps_i), max_i delta_i) for the replace-one relation (parallel composition).
    nonprivate_ : SelectionEvaluation
        Every candidate's validation mistakes and the unselected fitted candidates (``keep_nonprivate=True`` only;
        NOT private).

    See Also
    --------
    dpkernels.PrivateTuning : Algorithm 4 for Chaudhuri et al.'s own learners over a grid of Lambda.

    Notes
    -----
    Privacy: (max(epsilon, max_i eps_i), max_i delta_i)-differential privacy for the replace-one neighbouring
    relation (n public), by parallel composition over the disjoint parts and the exponential mechanism (module
    docstring; Chaudhuri et al.'s Theorem 26 for any candidates).  Released: the selected candidate and its index;
    nothing about the others.  Assumptions: the candidates are chosen without the private data; each states its own
    guarantee.  Publish :meth:`release`, which holds no seed and no non-private state.

    Examples
    --------
    >>> import numpy as np
    >>> from dpkernels import ObjectivePerturbation
    >>> from dpkernels.selection import PrivateSelection
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(600, 3))
    >>> X /= np.maximum(1.0, np.linalg.norm(X, axis=1, keepdims=True))
    >>> y = np.where(X[:, 0] + 0.5 * X[:, 1] > 0, 1, -1)
    >>> grid = [ObjectivePerturbation(epsilon=1.0, alpha=a, classes=[-1, 1]) for a in (0.01, 0.1, 1.0)]
    >>> sel = PrivateSelection(grid, epsilon=1.0, random_state=0).fit(X, y)
    >>> sel.selected_ in (0, 1, 2), sel.guarantee_.epsilon
    (True, 1.0)
    """

    _release_attributes: ClassVar[tuple[str, ...]] = ("best_estimator_", "selected_")

    def __init__(self, candidates: Sequence[Any], *, epsilon: float = 1.0, validation_size: int | None = None,
                 keep_nonprivate: bool = False, random_state: object = None) -> None:
        self.candidates = candidates
        self.epsilon = epsilon
        self.validation_size = validation_size
        self.keep_nonprivate = keep_nonprivate
        self.random_state = random_state

    def fit(self, X: ArrayLike, y: ArrayLike) -> "PrivateSelection":
        """Fit every candidate on its own part and select one privately.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            The training rows (the private data).
        y : array-like of shape (n_samples,)
            The labels, in the candidates' public label set.

        Returns
        -------
        self
        """
        X, y = validate_data(self, X, y, dtype=None, ensure_all_finite=True)
        epsilon = check_epsilon(self.epsilon)
        m = len(self.candidates)
        if m < 1:
            raise ValueError("candidates must not be empty")
        n = X.shape[0]
        n_val = n // (m + 1) if self.validation_size is None else int(self.validation_size)
        n_part = (n - n_val) // m
        if n_part < 1 or n_val < 1:
            raise ValueError(f"not enough rows (n_samples = {n}) for {m} parts and a validation part")
        order = self._public_rng(n).permutation(n)  # a data-independent split
        val = order[m * n_part:m * n_part + n_val]
        rng = self._noise_rng(X, y)
        models, mistakes = [], []
        for i, cand in enumerate(self.candidates):
            part = order[i * n_part:(i + 1) * n_part]
            est = _set_random_state(clone(cand), rng).fit(X[part], y[part])
            models.append(_set_random_state(est, None))  # the shared generator is not part of any release
            mistakes.append(int(np.sum(est.predict(X[val]) != y[val])))
        guarantees = [stated_guarantee(est) for est in models]
        if len({g.neighbouring for g in guarantees}) > 1:
            raise ValueError("the candidates state different neighbouring relations")
        classes = [np.asarray(getattr(est, "classes_", [])).tolist() for est in models]
        if any(c != classes[0] for c in classes):
            raise ValueError("the candidates must share one public label set")
        self.selected_ = lattice.exponential_mechanism_exact(-np.asarray(mistakes, dtype=np.float64), epsilon, 1.0, rng)
        self.best_estimator_ = models[self.selected_]
        self.classes_ = np.asarray(classes[0])
        if self.keep_nonprivate:
            self.nonprivate_ = SelectionEvaluation(np.asarray(mistakes, dtype=np.float64),
                                                   [mdl for i, mdl in enumerate(models) if i != self.selected_], n_val)
        self.guarantee_ = Guarantee(
            epsilon=max([epsilon] + [g.epsilon for g in guarantees]), delta=max(g.delta for g in guarantees),
            neighbouring=guarantees[0].neighbouring,
            statement="Chaudhuri et al. (2011) Algorithm 4 / Theorem 26, generalised to any candidates: parallel "
                      "composition over disjoint parts and the exponential mechanism",
            released="the selected candidate's release and its index (nothing about the other candidates)",
            assumptions=("the candidates (their hyper-parameters) do not depend on the private data",
                         "each candidate is (eps_i, delta_i)-DP on its part, as its guarantee states (the maximum is "
                         "stated)",
                         "mistake counts have sensitivity 1 (one row of the validation part)", "n is public"),
            attributes=self._release_attributes,
            noise="exponential mechanism sampled exactly (Gumbel-max over exact reals); the candidates' own noise",
            notes=self._notes())
        # what every candidate run passes on (the unselected ones are not kept): float-unsafe noise (stated as an
        # assumption, read back by _own_reasons) and a fit that is not private (the epsilon stated is kept, as
        # ReleaseMixin keeps it; an infinite one is the maximum already); the randomness (this selection's stream)
        # and the evaluation state are this object's own, settled when fit returns (ReleaseMixin)
        if any(g.status == "idealized" or NUMERICAL_ASSUMPTIONS["idealized"] in g.assumptions for g in guarantees):
            self.guarantee_ = dataclasses.replace(
                self.guarantee_, assumptions=self.guarantee_.assumptions + (NUMERICAL_ASSUMPTIONS["idealized"],))
        if any(g.status == "not private" for g in guarantees):
            self.guarantee_ = dataclasses.replace(self.guarantee_, private=False, status="not private",
                                                  notes=self.guarantee_.notes + ("a candidate's fit is not private",))
        return self

    def _own_reasons(self) -> set[str]:
        """The base's reasons, and "idealized" when a candidate's noise was (the unselected candidates are not kept:
        the guarantee's assumptions say it)."""
        reasons = super()._own_reasons()
        if NUMERICAL_ASSUMPTIONS["idealized"] in self.guarantee_.assumptions:
            reasons.add("idealized")
        return reasons

    def predict(self, X: ArrayLike) -> NDArray[Any]:
        """The selected candidate's predictions (post-processing of the release).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        ndarray of shape (n_samples,)
        """
        check_is_fitted(self, "best_estimator_")
        return self.best_estimator_.predict(X)

    def decision_function(self, X: ArrayLike) -> NDArray[np.float64]:
        """The selected candidate's decision function (post-processing of the release).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        ndarray
        """
        check_is_fitted(self, "best_estimator_")
        return self.best_estimator_.decision_function(X)
