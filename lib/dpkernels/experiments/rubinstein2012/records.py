"""The criteria behind the verdicts of the Rubinstein et al. (2012) notebook, three-valued through
:mod:`dpkernels.verdicts` (holds = confirmed, violated = refuted, inconclusive = neither; a NaN is never a hold): each
returns an :class:`~dpkernels.verdicts.Outcome` whose criterion the notebook records beside the verdict
(``Checks.record``).  Exact computations (solves, searches, closed forms) are two-valued; Monte Carlo frequencies are
rate checks that hold only with power 0.8 to see twice the claimed failure probability; audits hold only when their
negative control was caught.  Each criterion is unit-tested with a case where it must fail
(``tests/test_rubinstein_experiments.py``).  The statements are quoted in ``docs/statements/rubinstein2012.md``.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from dpkernels import verdicts
from dpkernels.verdicts import Outcome

__all__ = [
    "RATE_TOL",
    "KERNEL_MC_SE",
    "KERNEL_MC_MARGIN",
    "MIN_USEFUL",
    "kernel_pair_consistent",
    "kernel_pair_outcome",
    "rate_holds",
    "usefulness_outcome",
    "lower_bound_respected",
    "lower_bound_outcome",
    "audit_outcome",
    "useful_on_data",
]

#: A claimed O(.) rate holds when log(explicit bound / claimed rate) has a log-log slope within this of 0.
RATE_TOL = 0.25
#: Monte-Carlo agreement of E cos<w, D> with g(D) reported in Table 2's verification text: this many standard errors.
KERNEL_MC_SE = 5.0
#: Table 2: a printed (g, p) pair reproduces g when the largest Monte Carlo error is below this (one-sided 95% bound).
KERNEL_MC_MARGIN = 0.01
#: Our Adult target: the private classifier beats the majority class by at least this much accuracy (power stated).
MIN_USEFUL = 0.02


def kernel_pair_consistent(p_mass: float, g0: float, mc_error: float, mc_se: float) -> bool:
    """Table 2 (the verification column): mass 1, g(0) = 1 and the Monte Carlo error within ``KERNEL_MC_SE`` standard
    errors (not a confirmation: :func:`kernel_pair_outcome` is the verdict)."""
    return abs(p_mass - 1.0) < 1e-6 and abs(g0 - 1.0) < 1e-12 and mc_error <= KERNEL_MC_SE * mc_se + 1e-9


def kernel_pair_outcome(p_mass: float, g0: float, mc_error: float, mc_se: float, margin: float = KERNEL_MC_MARGIN) -> Outcome:
    """Table 2: a printed (g, p) pair is usable by Algorithm 3 when p is a probability law (mass 1, exact), g(0) = 1
    (exact) and sampling p reproduces g: the largest Monte Carlo error ``|E cos<w, D> - g(D)|`` has an upper 95% bound
    below ``margin`` (violated when its lower bound is above it)."""
    if abs(p_mass - 1.0) >= 1e-6 or abs(g0 - 1.0) >= 1e-12:
        return Outcome("violated", f"exact: mass of p {p_mass:.4g}, g(0) = {g0:.4g} (both must be 1)", float(mc_error))
    out = verdicts.bound_verdict(mc_error, margin, se=mc_se)
    return Outcome(out.status, "mass 1 and g(0) = 1 (exact); Monte Carlo error: " + out.criterion, out.estimate, out.lower,
                   out.upper)


def rate_holds(slope_explicit_over_claimed: float, tol: float = RATE_TOL) -> bool:
    """A claimed rate holds up to constants when the explicit bound over the claimed rate has a flat log-log slope
    (exact slopes of closed forms: two-valued)."""
    return verdicts.slope_agrees(slope_explicit_over_claimed, 0.0, tol)


def usefulness_outcome(failures: int, draws: int, delta: float) -> Outcome:
    """A usefulness claim P(failure) <= delta: :func:`dpkernels.verdicts.rate_verdict` (violated when the Clopper-Pearson
    lower bound exceeds delta; holds only with power 0.8 to see 2 delta)."""
    return verdicts.rate_verdict(int(failures), int(draws), float(delta))


def lower_bound_respected(frame: pd.DataFrame) -> bool:
    """Theorems 23 / 26 measured: for every noise level the mechanism's privacy loss on the construction is at least
    the theorem's lower bound at the measured usefulness (upper confidence bound of delta)."""
    return bool(len(frame)) and bool(np.all(frame["pair_loss"] >= frame["theorem_bound"]))


def lower_bound_outcome(frame: pd.DataFrame) -> Outcome:
    """:func:`lower_bound_respected` as a verdict: the losses are exact, delta enters through its Clopper-Pearson upper
    bound (the bound is then the smallest the data allow), so the comparison is two-valued."""
    ok = lower_bound_respected(frame)
    return Outcome(verdicts.verdict(ok, not ok), f"exact losses against ln-bounds at the upper 97.5% Clopper-Pearson delta, "
                   f"{len(frame)} noise levels: every loss >= its bound", float((frame.pair_loss - frame.theorem_bound).min())
                   if len(frame) else math.nan)


def audit_outcome(epsilon_lb: float, epsilon: float, control_lb: float) -> Outcome:
    """A privacy audit: :func:`dpkernels.verdicts.audit_verdict` (holds only when its negative control was caught)."""
    return verdicts.audit_verdict(epsilon_lb, epsilon, control_lb=control_lb)


def useful_on_data(accuracy: float, se: float, majority: float, df: float | None = None) -> Outcome:
    """Our target for the Adult illustration: the private classifier beats the majority class (one-sided 95% bound of
    accuracy - majority above 0; power stated against :data:`MIN_USEFUL`)."""
    return verdicts.difference_verdict(float(accuracy) - float(majority), float(se), min_effect=MIN_USEFUL, df=df)
