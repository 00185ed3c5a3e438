"""Privacy accounting through Google's ``dp-accounting`` library: Gaussian calibrations and composition.

* :func:`gaussian_sigma`: the noise standard deviation of the Gaussian mechanism for (epsilon, delta) and an L2
  sensitivity, under three named calibrations:

  ``"analytic"`` (default)
      the exact (analytic) calibration of Balle and Wang (2018), computed by ``dp_accounting.get_sigma_gaussian``:
      the smallest sigma whose exact privacy curve meets (epsilon, delta), for every epsilon > 0;
  ``"classical"``
      sigma = Delta sqrt(2 ln(1.25 / delta)) / epsilon (Dwork and Roth 2014, Theorem A.1), proven for epsilon < 1
      only (above it, it can fail: :func:`gaussian_delta` measures by how much);
  ``"hall"``
      Hall et al. (2013), Proposition 1.1: variance c = 2 log(2 / delta) Delta^2 / epsilon^2.

* :func:`gaussian_delta`: the exact delta(epsilon) of the Gaussian mechanism (the privacy curve), through
  ``dp_accounting``'s privacy-loss distribution of the Gaussian mechanism.
* :func:`compose`: the (epsilon, delta) of a composition of Laplace, Gaussian and pure-epsilon events (PLD
  accountant), for end-to-end accounting.
* :func:`compose_guarantees` and :class:`Accountant`: composition of fitted estimators' ``guarantee_`` objects
  (sequential composition on the same data; each (epsilon, delta) as a black-box mechanism).  The Accountant books
  releases only (``guarantee_.status == "release"``: a seeded fit is a reproduction, a ``keep_nonprivate=True`` fit
  an evaluation), takes a fitted estimator, a :class:`~dpkernels.Guarantee`, a scikit-learn ``Pipeline`` (unwrapped
  to its private steps) or a fitted ``GridSearchCV`` / ``RandomizedSearchCV`` (every fit it made), and books the
  mechanisms' floating-point deltas (``Guarantee.fp_delta``) against an explicit ``fp_delta_allowance`` only.
* :func:`search_cost`: what a fitted search spent on the private data (every candidate x fold fit and the refit), and
  what no guarantee covers (the selection).
* :func:`split_budget`: the per-release (epsilon, delta) of k releases on the same data whose composition stays
  within a total (epsilon, delta).
"""

from __future__ import annotations

import functools
import math
import warnings
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from dpkernels._validation import PrivacyLeakWarning, check_delta, check_epsilon, check_positive

__all__ = ["CALIBRATIONS", "gaussian_sigma", "gaussian_delta", "gaussian_epsilon", "compose", "compose_guarantees",
           "split_budget", "Accountant", "SearchCost", "search_cost", "private_steps", "PUBLIC_STEPS"]

CALIBRATIONS = ("analytic", "classical", "hall")


def gaussian_sigma(epsilon: float, delta: float, sensitivity: float = 1.0, calibration: str = "analytic") -> float:
    """Noise standard deviation of the Gaussian mechanism with L2 ``sensitivity`` at (epsilon, delta).

    Parameters
    ----------
    epsilon : float
        The privacy level epsilon (> 0).
    delta : float
        The privacy level delta, in (0, 1).
    sensitivity : float, default=1.0
        The L2 sensitivity Delta of the released vector.
    calibration : {"analytic", "classical", "hall"}, default="analytic"
        ``"analytic"``: the smallest sigma whose exact privacy curve meets (epsilon, delta) (Balle and Wang 2018,
        ``dp_accounting.get_sigma_gaussian``); ``"classical"``: Delta sqrt(2 ln(1.25 / delta)) / epsilon (Dwork and
        Roth 2014, Theorem A.1; proven for epsilon < 1 only); ``"hall"``: Delta sqrt(2 log(2 / delta)) / epsilon
        (Hall et al. 2013, Proposition 1.1; falls short at large epsilon).

    Returns
    -------
    float
        sigma, the standard deviation of the noise N(0, sigma^2 I).

    See Also
    --------
    gaussian_delta : the exact delta(epsilon) of a given sigma.

    Examples
    --------
    >>> from dpkernels.accounting import gaussian_delta, gaussian_sigma
    >>> sigma = gaussian_sigma(1.0, 1e-5)
    >>> round(sigma, 2), round(gaussian_sigma(1.0, 1e-5, calibration="classical"), 2)
    (3.73, 4.84)
    >>> gaussian_delta(1.0, sigma) <= 1e-5 * (1 + 1e-9)
    True
    """
    epsilon = check_epsilon(epsilon)
    delta = check_delta(delta)
    sensitivity = check_positive(sensitivity, "sensitivity")
    if calibration == "analytic":
        return sensitivity * _analytic_sigma(epsilon, delta)
    if calibration == "classical":
        return sensitivity * math.sqrt(2.0 * math.log(1.25 / delta)) / epsilon
    if calibration == "hall":
        return sensitivity * math.sqrt(2.0 * math.log(2.0 / delta)) / epsilon
    raise ValueError(f"calibration must be one of {CALIBRATIONS}, got {calibration!r}")


@functools.lru_cache(maxsize=1024)
def _analytic_sigma(epsilon: float, delta: float) -> float:
    """``dp_accounting.get_sigma_gaussian(epsilon, delta)`` (unit sensitivity), kept per process: a root search of
    about 2 ms on public parameters, which a sweep asks for again and again."""
    import dp_accounting

    return float(dp_accounting.get_sigma_gaussian(epsilon, delta))


def gaussian_delta(epsilon: float, sigma: float, sensitivity: float = 1.0) -> float:
    """Exact delta(epsilon) of the Gaussian mechanism N(v, sigma^2 I) when ||v_D - v_D'||_2 <= sensitivity.

    delta(eps) = Phi(Delta/(2 sigma) - eps sigma/Delta) - e^eps Phi(-Delta/(2 sigma) - eps sigma/Delta) (Balle and
    Wang 2018), evaluated by ``dp_accounting``'s privacy-loss distribution of the Gaussian mechanism.

    Parameters
    ----------
    epsilon : float
        The epsilon (>= 0) at which the privacy curve is evaluated.
    sigma : float
        The noise standard deviation.
    sensitivity : float, default=1.0
        The L2 sensitivity Delta.

    Returns
    -------
    float
        The smallest delta for which the mechanism is (epsilon, delta)-DP.

    Examples
    --------
    >>> from dpkernels.accounting import gaussian_delta
    >>> round(gaussian_delta(1.0, sigma=1.0), 3)
    0.127
    """
    check_positive(sigma, "sigma")
    check_positive(sensitivity, "sensitivity")
    if epsilon < 0:
        raise ValueError(f"epsilon must be >= 0, got {epsilon!r}")
    from dp_accounting.pld import privacy_loss_mechanism as plm

    return float(plm.GaussianPrivacyLoss(standard_deviation=sigma, sensitivity=sensitivity).get_delta_for_epsilon(epsilon))


def gaussian_epsilon(sigma: float, delta: float, sensitivity: float = 1.0) -> float:
    """The smallest epsilon with delta(epsilon) <= delta for N(v, sigma^2 I) at L2 ``sensitivity``.

    Parameters
    ----------
    sigma : float
        The noise standard deviation.
    delta : float
        The privacy level delta, in (0, 1).
    sensitivity : float, default=1.0
        The L2 sensitivity Delta.

    Returns
    -------
    float
        epsilon (``dp_accounting.get_epsilon_gaussian`` of sigma / Delta).

    Examples
    --------
    >>> from dpkernels.accounting import gaussian_epsilon, gaussian_sigma
    >>> round(gaussian_epsilon(gaussian_sigma(1.0, 1e-5), 1e-5), 3)
    1.0
    """
    check_delta(delta)
    import dp_accounting

    return float(dp_accounting.get_epsilon_gaussian(check_positive(sigma, "sigma") / check_positive(sensitivity, "sensitivity"), delta))


def compose(events: Sequence[tuple], delta: float, value_discretization_interval: float = 1e-4) -> float:
    """Epsilon at ``delta`` of the sequential composition of ``events`` (dp-accounting's privacy-loss distributions).

    The privacy-loss distributions are discretised pessimistically, so the result is an upper bound on the exact
    composed epsilon.

    Parameters
    ----------
    events : sequence of tuple
        Each ``("laplace", scale, l1_sensitivity)``, ``("gaussian", sigma, l2_sensitivity)`` or
        ``("dp", epsilon, delta)`` (any (epsilon, delta)-DP mechanism: its worst-case privacy-loss distribution).
    delta : float
        The delta at which the composed epsilon is read.
    value_discretization_interval : float, default=1e-4
        The discretisation of the privacy loss (smaller: tighter and slower).

    Returns
    -------
    float
        The composed epsilon at ``delta`` (0.0 for no events).

    See Also
    --------
    compose_guarantees : the same for fitted estimators' ``guarantee_`` objects.

    Examples
    --------
    >>> from dpkernels.accounting import compose
    >>> round(compose([("laplace", 1.0, 1.0)] * 2, delta=1e-6), 3)  # two Laplace(1) releases of a count
    2.0
    """
    from dp_accounting.pld import common, privacy_loss_distribution as pld

    check_delta(delta)
    total = None
    for ev in events:
        kind = ev[0]
        if kind == "laplace":
            d = pld.from_laplace_mechanism(ev[1], sensitivity=ev[2], value_discretization_interval=value_discretization_interval)
        elif kind == "gaussian":
            d = pld.from_gaussian_mechanism(ev[1], sensitivity=ev[2], value_discretization_interval=value_discretization_interval)
        elif kind == "dp":
            d = pld.from_privacy_parameters(common.DifferentialPrivacyParameters(check_epsilon(ev[1]), float(ev[2])),
                                            value_discretization_interval=value_discretization_interval)
        else:
            raise ValueError(f"unknown event kind {kind!r}")
        total = d if total is None else total.compose(d)
    if total is None:
        return 0.0
    return float(total.get_epsilon_for_delta(delta))


def compose_guarantees(guarantees: Sequence[object], delta: float | None = None) -> tuple[float, float]:
    """The (epsilon, delta) of releasing every fitted object whose ``guarantee_`` is listed, on the same data.

    Sequential composition; the neighbouring relations must agree.  Without ``delta``: basic composition, (sum of
    epsilons, sum of deltas), exact for pure-DP releases.  With ``delta`` (at least the sum of the releases'
    deltas): the smaller of that and the epsilon at ``delta`` of the composition of the releases as black-box
    (epsilon_i, delta_i) mechanisms (dp-accounting's privacy-loss distributions; Kairouz et al.'s optimal
    composition, discretised pessimistically).  This composes the mechanisms' statements, whatever the objects'
    ``status`` (an experiment's seeded fits compose as the mechanisms they ran; :class:`Accountant` is what books
    releases only); a guarantee with ``status="not private"`` (epsilon infinite) makes the composition infinite.

    Parameters
    ----------
    guarantees : sequence of Guarantee
        The releases' guarantees (``estimator.guarantee_``).
    delta : float or None, default=None
        The total delta to compose at (None: basic composition).

    Returns
    -------
    epsilon : float
        The composed epsilon (``inf`` if a release is not private).
    delta : float
        The composed delta.

    Raises
    ------
    ValueError
        If the neighbouring relations differ, or ``delta`` is below the releases' own deltas.

    Examples
    --------
    >>> from dpkernels import Guarantee
    >>> from dpkernels.accounting import compose_guarantees
    >>> g = Guarantee(epsilon=0.5, delta=0.0, neighbouring="replace-one", released="a count", statement="Laplace")
    >>> compose_guarantees([g, g])
    (1.0, 0.0)
    >>> eps, delta = compose_guarantees([g] * 10, delta=1e-5)  # advanced composition beats the sum 5.0
    >>> eps < 5.0, delta
    (True, 1e-05)
    """
    gs = list(guarantees)
    if not gs:
        return 0.0, 0.0
    if len({g.neighbouring for g in gs}) > 1:
        raise ValueError("the guarantees use different neighbouring relations; they do not compose as stated")
    if any(g.status == "not private" or not math.isfinite(g.epsilon) for g in gs):
        return math.inf, max(g.delta for g in gs)
    eps_basic = math.fsum(g.epsilon for g in gs)
    delta_basic = math.fsum(g.delta for g in gs)
    if delta is None or len(gs) == 1:
        return eps_basic, delta_basic
    delta = check_delta(delta)
    if delta < delta_basic:
        raise ValueError(f"delta = {delta:g} is below the releases' own deltas ({delta_basic:g})")
    eps_pld = compose([("dp", g.epsilon, g.delta) for g in gs], delta - delta_basic) if delta > delta_basic else math.inf
    return (min(eps_basic, eps_pld), delta) if eps_pld < eps_basic else (eps_basic, delta_basic)


def split_budget(epsilon: float, delta: float, k: int) -> tuple[float, float]:
    """The per-release (epsilon_k, delta_k) of ``k`` releases on the same data whose composition is within budget.

    ``delta = 0``: epsilon / k each (basic composition, exact for pure DP).  ``delta > 0``: delta_k = delta / (2k)
    and the largest epsilon_k (bisection, 40 steps) whose k-fold composition, computed by dp-accounting at the
    remaining delta / 2, is at most ``epsilon`` (never below epsilon / k).

    Parameters
    ----------
    epsilon : float
        The total epsilon.
    delta : float
        The total delta (0 for a pure budget).
    k : int
        The number of releases.

    Returns
    -------
    epsilon_k : float
        The epsilon of each release.
    delta_k : float
        The delta of each release.

    Examples
    --------
    >>> from dpkernels.accounting import split_budget
    >>> split_budget(1.0, 0.0, 4)
    (0.25, 0.0)
    >>> eps_k, delta_k = split_budget(8.0, 1e-5, 100)  # many releases: advanced composition gives more than 8 / 100
    >>> eps_k > 0.08, round(delta_k, 12)
    (True, 5e-08)
    """
    epsilon = check_epsilon(epsilon)
    k = int(k)
    if k < 1:
        raise ValueError(f"k must be a positive integer, got {k!r}")
    if delta == 0 or k == 1:
        return epsilon / k, (delta / k if k > 1 else float(delta))
    delta = check_delta(delta)
    dk = delta / (2.0 * k)
    lo, hi = epsilon / k, epsilon
    for _ in range(40):
        mid = 0.5 * (lo + hi)
        if compose([("dp", mid, dk)] * k, delta / 2.0, value_discretization_interval=min(1e-4, mid / 200.0)) <= epsilon:
            lo = mid
        else:
            hi = mid
    return lo, dk


#: Pipeline steps that read no statistic of the rows: public per-record maps and data-independent feature maps (their
#: ``fit`` reads the number of columns at most).
PUBLIC_STEPS = ("PublicBoundsScaler", "RandomFourierFeatures", "RademacherJL", "GaussianJL", "SparseJL", "SRHT",
                "FunctionTransformer")


def private_steps(model: Any) -> tuple[list[Any], list[str]]:
    """The fitted private estimators a model consists of, and what in it no guarantee covers.

    A dpkernels estimator is itself; a scikit-learn ``Pipeline`` is unwrapped (recursively) to its steps: a
    dpkernels estimator is private, a step of :data:`PUBLIC_STEPS` (or ``"passthrough"``) costs nothing, and any other
    fitted step (a ``StandardScaler``, a ``PCA``) read statistics of the private rows that no guarantee covers: it is
    listed as unaccounted.

    Parameters
    ----------
    model : estimator or Pipeline
        A fitted model.

    Returns
    -------
    steps : list of estimators
        The fitted dpkernels estimators (each with a ``guarantee_``).
    unaccounted : list of str
        What was fitted on the private rows outside any guarantee, in words.
    """
    if hasattr(model, "guarantee_"):
        return [model], []
    steps = getattr(model, "steps", None)
    if steps is None:
        return [], [f"{type(model).__name__} is not a dpkernels estimator: it states no guarantee"]
    found: list[Any] = []
    unaccounted: list[str] = []
    for name, step in steps:
        if step is None or (isinstance(step, str) and step == "passthrough"):
            continue
        if type(step).__name__ in PUBLIC_STEPS:
            continue
        inner, missing = private_steps(step)
        found += inner
        unaccounted += [f"Pipeline step {name!r}: {m}" if not m.startswith("Pipeline") else m for m in missing]
    if not found:
        unaccounted.append(f"{type(model).__name__} holds no dpkernels estimator")
    return found, unaccounted


@dataclass(frozen=True)
class SearchCost:
    """What a fitted search (``GridSearchCV``, ``RandomizedSearchCV``) spent on the private data.

    Attributes
    ----------
    epsilon, delta : float
        The basic composition of the fits that touch the worst-placed row: every candidate fitted on each training
        fold that contains it, and the refit on all rows (a row outside a fold's training part changes only that
        fold's score, i.e. the selection).
    fp_delta : float
        The floating-point part of ``delta`` (:attr:`~dpkernels.Guarantee.fp_delta`).
    n_fits : int
        Every fit the search made (candidates x folds, plus the refit).
    guarantees : tuple of Guarantee
        The guarantees of the fits that touch the worst-placed row (what :class:`Accountant` books).
    unaccounted : tuple of str
        What no guarantee covers: the selection itself (the candidates' scores on held-out private rows), and any
        non-public pipeline step.
    """

    epsilon: float
    delta: float
    fp_delta: float
    n_fits: int
    guarantees: tuple[Any, ...] = field(repr=False)
    unaccounted: tuple[str, ...]


def _public_rows(n: int, X: Any, y: Any) -> tuple[Any, Any]:
    """Rows of the shape of ``X[:n]`` that are no one's data: zeros (inside every public bound and norm ball), and
    labels cycling through the public label set (the guarantee of every dpkernels fit depends on public quantities
    only: n, d and the parameters)."""
    import numpy as np

    Z = np.zeros((n, np.shape(X)[1]))
    if y is None:
        return Z, None
    labels = np.unique(np.asarray(y))
    return Z, labels[np.arange(n) % len(labels)]


def search_cost(search: Any, X: Any, y: Any = None, *, groups: Any = None) -> SearchCost:
    """The total privacy cost of a fitted ``GridSearchCV`` / ``RandomizedSearchCV`` of dpkernels estimators.

    Every candidate fitted on every training fold is a release on private rows, and so is the refit.  A row is in the
    training part of some folds only; the cost is the basic composition of the fits that contain the worst-placed row
    (for k-fold: each candidate on k - 1 folds, plus the refit).  Each fit's guarantee is obtained exactly as the
    search's fit stated it, by fitting the candidate on rows of the fold's size that are no one's data (the guarantee
    of every dpkernels estimator is a function of n, d and its parameters only); the data are used for their shape and
    the splitter's folds only.  The selection (the candidates' scores on held-out private rows) is covered by no
    guarantee and is listed in ``unaccounted``: choose privately with :class:`~dpkernels.PrivateTuning` or
    :class:`~dpkernels.PrivateMarginSelection` instead.

    Parameters
    ----------
    search : fitted GridSearchCV or RandomizedSearchCV
        The search (its ``cv_results_`` and ``cv``).
    X, y : array-like
        The data the search was fitted on (shape and folds only).
    groups : array-like, optional
        The groups passed to the search, if any.

    Returns
    -------
    SearchCost

    Raises
    ------
    ValueError
        If ``search`` is not a fitted search, or its estimator holds no dpkernels estimator.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.model_selection import GridSearchCV
    >>> from dpkernels import OutputPerturbation
    >>> from dpkernels.accounting import search_cost
    >>> rng = np.random.default_rng(0)
    >>> X = rng.uniform(-0.5, 0.5, size=(120, 3)); y = np.where(X[:, 0] > 0, 1, -1)
    >>> gs = GridSearchCV(OutputPerturbation(epsilon=0.5), {"alpha": [0.01, 0.1]}, cv=3).fit(X, y)
    >>> cost = search_cost(gs, X, y)
    >>> cost.n_fits, round(cost.epsilon, 6)  # 2 candidates x 3 folds + the refit; a row is in 2 of 3 training parts
    (7, 2.5)
    """
    import numpy as np
    from sklearn.base import clone, is_classifier
    from sklearn.model_selection import check_cv

    if not (hasattr(search, "cv_results_") and hasattr(search, "estimator")):
        raise ValueError(f"{type(search).__name__} is not a fitted search (GridSearchCV or RandomizedSearchCV)")
    n = int(np.shape(X)[0])
    cv = check_cv(search.cv, y, classifier=is_classifier(search.estimator))
    splits = [np.asarray(train) for train, _ in cv.split(np.zeros((n, 1)), y, groups)]
    candidates = list(search.cv_results_["params"])
    fits: list[tuple[Any, int, int | None]] = []  # (estimator, rows, split index or None for all rows)
    for params in candidates:
        for j, train in enumerate(splits):
            fits.append((clone(search.estimator).set_params(**params), len(train), j))
    if getattr(search, "refit", False):
        fits.append((clone(search.estimator).set_params(**search.best_params_), n, None))
    guarantees: list[list[Any]] = []
    unaccounted: list[str] = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for est, rows, _ in fits:
            Z, yz = _public_rows(rows, X, y)
            steps, missing = private_steps(est.fit(Z, yz) if yz is not None else est.fit(Z))
            if not steps:
                raise ValueError(f"{type(search.estimator).__name__} holds no dpkernels estimator: nothing to account")
            guarantees.append([s.guarantee_ for s in steps])
            unaccounted += [m for m in missing if m not in unaccounted]
    # the worst-placed row: among the patterns of training parts that contain a row, the costliest
    member = np.zeros((n, len(splits)), dtype=bool)
    for j, train in enumerate(splits):
        member[train, j] = True
    worst: list[Any] = []
    worst_eps = -1.0
    for pattern in np.unique(member, axis=0):
        gs = [g for (_, _, j), gl in zip(fits, guarantees) if j is None or pattern[j] for g in gl]
        eps, _ = compose_guarantees(gs)
        if eps > worst_eps:
            worst, worst_eps = gs, eps
    eps, dlt = compose_guarantees(worst)
    unaccounted.insert(0, f"the selection of {type(search).__name__} (best_params_, chosen on {len(candidates)} "
                          f"candidates' scores on held-out private rows) is covered by no guarantee")
    return SearchCost(eps, dlt, math.fsum(g.fp_delta for g in worst), len(fits), tuple(worst), tuple(unaccounted))


#: Why an object that is not a release is refused, and the fix (by ``Guarantee.status``).
_REFUSALS = {
    "reproduction": ("its noise was seeded (random_state an int, SeedSequence or Generator): a reproduction, not a "
                     "release; whoever knows or guesses the seed recomputes it. Refit with fresh entropy "
                     "(random_state=None) or a dpkernels.SecretKey, and spend that fit or its release()"),
    "evaluation": ("it holds non-private state (keep_nonprivate=True): spend its release(), which drops it, or refit "
                   "without keep_nonprivate"),
    "curator": "it is the curator (curator=True, it holds the private data): spend its release()",
    "idealized": ("its noise is idealized (noise='idealized' or 'continuous'): the guarantee holds in exact arithmetic "
                  "only, and a floating-point attack tells neighbours apart. Refit with noise='lattice'"),
    "not private": ("it is not private at all (epsilon infinite: a bound or the label set read from the data, or a "
                    "part released without noise)"),
}


class Accountant:
    """A running total of the releases made on one data set (like diffprivlib's ``BudgetAccountant``).

    :meth:`spend` records a release, refusing one that would exceed the budget or that is not a release;
    :meth:`total` is the composed (epsilon, delta) of everything spent (:func:`compose_guarantees`).

    What it books.  Only releases (``guarantee_.status == "release"``): a seeded fit (a reproduction), an evaluation fit
    (``keep_nonprivate=True``), a curator, float-unsafe noise (``noise="idealized"``) and a fit that is not private are
    refused with the reason and the fix.  :meth:`spend` takes a fitted dpkernels estimator, a
    :class:`~dpkernels.Guarantee`, a scikit-learn ``Pipeline`` (its dpkernels steps; public per-record maps such as
    :class:`~dpkernels.PublicBoundsScaler` cost nothing) or a fitted ``GridSearchCV`` / ``RandomizedSearchCV`` (every
    fit it made, :func:`search_cost`: pass the data it was fitted on).  What no guarantee covers (a search's selection, a
    pipeline step fitted on the private rows such as a ``StandardScaler``) is booked nowhere: it is listed in
    :attr:`unaccounted`, with a :class:`~dpkernels.PrivacyLeakWarning`.

    Floating-point deltas.  A mechanism that is pure epsilon-DP in exact arithmetic may state a small delta for its
    float64 implementation (objective perturbation: ``Guarantee.fp_delta``).  A pure budget (``delta=0``) refuses it
    unless ``fp_delta_allowance`` admits it explicitly: the floating-point deltas are summed against the allowance, the
    other deltas against ``delta``, and :meth:`total` states the sum of both (never a pure budget silently turned
    approximate).

    Parameters
    ----------
    epsilon : float, default=inf
        The total epsilon budget.
    delta : float, default=0.0
        The total delta budget of the releases' own (non-floating-point) deltas (0: basic composition of pure
        releases; > 0: composition at that delta plus the floating-point deltas).
    fp_delta_allowance : float, default=0.0
        The total floating-point delta admitted (e.g. 1e-6, far below 1/n): an explicit opt-in.

    Attributes
    ----------
    spent : list of Guarantee
        The guarantees of the releases recorded so far.
    unaccounted : list of str
        What was spent on the data outside any guarantee (a search's selection, a non-public pipeline step).

    Examples
    --------
    >>> from dpkernels import Guarantee
    >>> from dpkernels.accounting import Accountant
    >>> g = Guarantee(epsilon=0.5, delta=0.0, neighbouring="replace-one", released="a count", statement="Laplace")
    >>> acc = Accountant(epsilon=1.0)
    >>> acc.spend(g), acc.spend(g)
    ((0.5, 0.0), (1.0, 0.0))
    >>> acc.remaining()
    (0.0, 0.0)
    >>> fp = Guarantee(0.5, 2e-7, "replace-one", "an argmin", "objective perturbation", fp_delta=2e-7)
    >>> Accountant(epsilon=1.0, fp_delta_allowance=1e-6).spend(fp)
    (0.5, 2e-07)
    """

    def __init__(self, epsilon: float = math.inf, delta: float = 0.0, *, fp_delta_allowance: float = 0.0) -> None:
        self.epsilon = epsilon
        self.delta = delta
        self.fp_delta_allowance = fp_delta_allowance
        self.spent: list[Any] = []
        self.unaccounted: list[str] = []

    def _compose(self, gs: Sequence[Any]) -> tuple[float, float, float]:
        """(epsilon, delta, floating-point delta) of ``gs``: basic composition for a pure budget, else composition at
        the budget's delta plus the floating-point deltas."""
        fp = math.fsum(g.fp_delta for g in gs)
        if self.delta > 0 and len(gs) > 1:
            own = math.fsum(g.delta for g in gs) - fp
            if own > self.delta:
                eps, dlt = compose_guarantees(gs)
            else:
                eps, dlt = compose_guarantees(gs, self.delta + fp)
        else:
            eps, dlt = compose_guarantees(gs)
        return eps, dlt, fp

    def total(self, delta: float | None = None) -> tuple[float, float]:
        """The composed (epsilon, delta) of the releases spent so far (at ``delta`` when given; else as the budget
        composes them), floating-point deltas included."""
        if delta is not None:
            return compose_guarantees(self.spent, delta)
        eps, dlt, _ = self._compose(self.spent)
        return eps, dlt

    def _guarantees(self, release: Any, X: Any, y: Any) -> tuple[list[Any], list[str]]:
        if hasattr(release, "cv_results_") and hasattr(release, "estimator"):
            if X is None:
                raise ValueError(f"a fitted {type(release).__name__}'s cost depends on its folds: pass the data it was "
                                 "fitted on, spend(search, X, y) (only their shape and the splitter's folds are used)")
            cost = search_cost(release, X, y)
            return list(cost.guarantees), list(cost.unaccounted)
        if hasattr(release, "epsilon") and hasattr(release, "neighbouring") and hasattr(release, "status"):
            return [release], []  # a Guarantee
        steps, unaccounted = private_steps(release)
        if not steps:
            raise ValueError(f"{type(release).__name__} holds no dpkernels estimator: there is no guarantee to book "
                             f"({'; '.join(unaccounted)})")
        return [s.guarantee_ for s in steps], unaccounted

    def spend(self, release: Any, X: Any = None, y: Any = None) -> tuple[float, float]:
        """Record ``release`` and return the new total (epsilon, delta), floating-point deltas included.

        Parameters
        ----------
        release : estimator, Guarantee, Pipeline or fitted search
            What was published (or fitted on the data): a fitted dpkernels estimator, its ``guarantee_``, a
            ``Pipeline`` holding dpkernels estimators, or a fitted ``GridSearchCV`` / ``RandomizedSearchCV``.
        X, y : array-like, optional
            For a search only: the data it was fitted on (:func:`search_cost`).

        Returns
        -------
        tuple of float
            The composed (epsilon, delta) of everything spent.

        Raises
        ------
        ValueError
            If ``release`` is not a release (seeded, evaluation, curator, idealized noise, not private: the message
            says why and names the fix), or it would exceed the budget (nothing is recorded then).
        """
        gs, unaccounted = self._guarantees(release, X, y)
        name = type(release).__name__
        for g in gs:
            if g.status != "release":
                raise ValueError(f"{name} cannot be booked as a release: {_REFUSALS[g.status]}")
        eps, dlt, fp = self._compose(self.spent + gs)
        if fp > self.fp_delta_allowance * (1.0 + 1e-12):
            raise ValueError(
                f"spending {name} would bring the mechanisms' floating-point deltas to {fp:g}, above "
                f"fp_delta_allowance = {self.fp_delta_allowance:g} (a mechanism pure in exact arithmetic states a small "
                "delta for its float64 implementation). Admit it explicitly, e.g. "
                f"Accountant(epsilon={self.epsilon:g}, delta={self.delta:g}, fp_delta_allowance=1e-6) (far below 1/n), "
                "or budget a delta")
        own = dlt - fp
        if eps > self.epsilon * (1.0 + 1e-12) or own > self.delta * (1.0 + 1e-12) + 1e-300:
            g = gs[0] if len(gs) == 1 else None
            what = f"({g.epsilon:g}, {g.delta:g})" if g is not None else f"{len(gs)} releases"
            raise ValueError(f"spending {what} would reach ({eps:g}, {dlt:g}) (floating-point delta {fp:g} of it), "
                             f"beyond the budget ({self.epsilon:g}, {self.delta:g}"
                             f"{f' + fp_delta_allowance {self.fp_delta_allowance:g}' if self.fp_delta_allowance else ''})")
        self.spent += gs
        if unaccounted:
            warnings.warn(f"{name}: booked {len(gs)} release(s); not covered by any guarantee: "
                          f"{'; '.join(unaccounted)}", PrivacyLeakWarning, stacklevel=2)
            self.unaccounted += unaccounted
        return eps, dlt

    def remaining(self, k: int = 1) -> tuple[float, float]:
        """What ``k`` further equal releases may each spend (basic composition of the rest; the delta is the budget's
        own, the floating-point allowance apart)."""
        eps, dlt, fp = self._compose(self.spent)
        return max(0.0, self.epsilon - eps) / k, max(0.0, self.delta - (dlt - fp)) / k
