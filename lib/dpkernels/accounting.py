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
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from dpkernels._validation import check_delta, check_epsilon, check_positive

__all__ = ["CALIBRATIONS", "gaussian_sigma", "gaussian_delta", "gaussian_epsilon", "compose"]

CALIBRATIONS = ("analytic", "classical", "hall")


def gaussian_sigma(epsilon: float, delta: float, sensitivity: float = 1.0, calibration: str = "analytic") -> float:
    """Noise standard deviation of the Gaussian mechanism with L2 ``sensitivity`` at (epsilon, delta)."""
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
    """Exact delta(epsilon) of the Gaussian mechanism N(v, sigma^2 I) when ||v_D - v_D'||_2 <= sensitivity:
    Phi(Delta/(2 sigma) - eps sigma/Delta) - e^eps Phi(-Delta/(2 sigma) - eps sigma/Delta)."""
    check_positive(sigma, "sigma")
    check_positive(sensitivity, "sensitivity")
    if epsilon < 0:
        raise ValueError(f"epsilon must be >= 0, got {epsilon!r}")
    from dp_accounting.pld import privacy_loss_mechanism as plm

    return float(plm.GaussianPrivacyLoss(standard_deviation=sigma, sensitivity=sensitivity).get_delta_for_epsilon(epsilon))


def gaussian_epsilon(sigma: float, delta: float, sensitivity: float = 1.0) -> float:
    """The smallest epsilon with delta(epsilon) <= delta for N(v, sigma^2 I) at L2 ``sensitivity``."""
    check_delta(delta)
    import dp_accounting

    return float(dp_accounting.get_epsilon_gaussian(check_positive(sigma, "sigma") / check_positive(sensitivity, "sensitivity"), delta))


def compose(events: Sequence[tuple], delta: float, value_discretization_interval: float = 1e-4) -> float:
    """Epsilon at ``delta`` of the sequential composition of ``events``, through ``dp_accounting``'s privacy-loss
    distributions (pessimistic estimates).  Each event is ``("laplace", scale, l1_sensitivity)``,
    ``("gaussian", sigma, l2_sensitivity)`` or ``("dp", epsilon, delta)`` (any (epsilon, delta)-DP mechanism:
    its worst-case privacy-loss distribution)."""
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
