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
  (sequential composition on the same data; each (epsilon, delta) as a black-box mechanism).
* :func:`split_budget`: the per-release (epsilon, delta) of k releases on the same data whose composition stays
  within a total (epsilon, delta).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from dpkernels._validation import check_delta, check_epsilon, check_positive

__all__ = ["CALIBRATIONS", "gaussian_sigma", "gaussian_delta", "gaussian_epsilon", "compose", "compose_guarantees",
           "split_budget", "Accountant"]

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
        import dp_accounting

        return sensitivity * float(dp_accounting.get_sigma_gaussian(epsilon, delta))
    if calibration == "classical":
        return sensitivity * math.sqrt(2.0 * math.log(1.25 / delta)) / epsilon
    if calibration == "hall":
        return sensitivity * math.sqrt(2.0 * math.log(2.0 / delta)) / epsilon
    raise ValueError(f"calibration must be one of {CALIBRATIONS}, got {calibration!r}")


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
    composition, discretised pessimistically).  A guarantee that is not private (``private=False``) makes the
    composition infinite.

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
    if any(not g.private or not math.isfinite(g.epsilon) for g in gs):
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


class Accountant:
    """A running total of the releases made on one data set (like diffprivlib's ``BudgetAccountant``).

    :meth:`spend` records a release (a fitted estimator or its ``guarantee_``), refusing one that would exceed the
    budget; :meth:`total` is the composed (epsilon, delta) of everything spent (:func:`compose_guarantees`).

    Parameters
    ----------
    epsilon : float, default=inf
        The total epsilon budget.
    delta : float, default=0.0
        The total delta budget (0: basic composition of pure releases; > 0: composition at that delta).

    Attributes
    ----------
    spent : list of Guarantee
        The guarantees of the releases recorded so far.

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
    """

    def __init__(self, epsilon: float = math.inf, delta: float = 0.0) -> None:
        self.epsilon = epsilon
        self.delta = delta
        self.spent: list[object] = []

    def total(self, delta: float | None = None) -> tuple[float, float]:
        """The composed (epsilon, delta) of the releases spent so far (at ``delta``, default the budget's delta)."""
        return compose_guarantees(self.spent, self.delta if delta is None and self.delta > 0 else delta)

    def spend(self, release: object) -> tuple[float, float]:
        """Record ``release`` (a fitted estimator or a :class:`~dpkernels.Guarantee`) and return the new total;
        ``ValueError`` if it would exceed the budget (nothing is recorded then)."""
        g = getattr(release, "guarantee_", release)
        eps, dlt = compose_guarantees(self.spent + [g], self.delta if self.delta > 0 else None)
        if eps > self.epsilon * (1.0 + 1e-12) or dlt > self.delta * (1.0 + 1e-12):
            raise ValueError(f"spending ({g.epsilon:g}, {g.delta:g}) would reach ({eps:g}, {dlt:g}), beyond the budget "
                             f"({self.epsilon:g}, {self.delta:g})")
        self.spent.append(g)
        return eps, dlt

    def remaining(self, k: int = 1) -> tuple[float, float]:
        """What ``k`` further equal releases may each spend (basic composition of the rest)."""
        eps, dlt = self.total()
        return max(0.0, self.epsilon - eps) / k, max(0.0, self.delta - dlt) / k
