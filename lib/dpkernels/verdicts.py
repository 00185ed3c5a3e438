"""The criteria behind every verdict, in one place (each unit-tested with a case where it must fail).

Published against reproduced.  A published number is the mean of the paper's runs; ours is the mean of ours.
They are compared through the standard error of the *difference*,

    z = (reproduced - published) / sqrt(se_reproduced^2 + se_published^2),

never through the spread of single runs (a published mean inside the central 95% of single runs can be many
standard errors away).  When the paper does not report its spread, ``se_published`` is computed from ours under
the stated assumption that the paper's runs had our per-run spread: se_published = sd_reproduced / sqrt(n_published)
(:func:`published_se`).  Each published number is then classified (:func:`classify`) as ``agrees`` (|z| <= 3),
``differs, explained (ERRATA id)`` or ``differs, unexplained``.

Claims.  A claimed upper bound holds when the measurement is at most the bound (:func:`at_most`), a lower bound
when at least (:func:`at_least`); a privacy audit refutes epsilon when its lower confidence bound exceeds it
(:func:`audit_refutes`), and a negative control shows the audit's power when the audit catches a mechanism with
too little noise (:func:`audit_detects`); a claimed rate holds when the fitted log-log slope is within a stated
tolerance of the claimed exponent (:func:`slope_agrees`); a failure probability holds when the Clopper-Pearson
lower bound of the observed rate does not exceed the claimed delta (:func:`rate_at_most`).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike

__all__ = [
    "Z_AGREE",
    "holm",
    "Comparison",
    "published_se",
    "compare",
    "classify",
    "at_most",
    "at_least",
    "audit_refutes",
    "audit_detects",
    "slope",
    "slope_agrees",
    "rate_at_most",
    "status",
]

#: |z| up to this many standard errors of the difference counts as agreement.
Z_AGREE = 3.0


@dataclass(frozen=True)
class Comparison:
    """A published number against its reproduction."""

    published: float
    reproduced: float
    se_reproduced: float
    se_published: float
    z: float
    cls: str  #: "agrees", "differs, explained (<id>)" or "differs, unexplained"


def published_se(sd_reproduced: float, n_published: float | None) -> float:
    """The standard error of a published mean of ``n_published`` runs, assuming the paper's runs had our per-run
    standard deviation.  ``n_published`` unknown (None): 0, i.e. the published number is treated as exact (which
    can only make differences look larger)."""
    if n_published is None or not np.isfinite(n_published) or n_published <= 0:
        return 0.0
    return float(sd_reproduced) / math.sqrt(float(n_published))


def classify(z: float, explained: str | None = None, threshold: float = Z_AGREE) -> str:
    """``agrees`` when |z| <= threshold; otherwise ``differs, explained (<explained>)`` when an ERRATA id explains
    the difference, else ``differs, unexplained``.  A non-finite z (zero standard error and a difference) differs."""
    if np.isfinite(z) and abs(z) <= threshold:
        return "agrees"
    if explained:
        return f"differs, explained ({explained})"
    return "differs, unexplained"


def compare(published: float, reproduced: float, se_reproduced: float, se_published: float = 0.0,
            explained: str | None = None, threshold: float = Z_AGREE) -> Comparison:
    """z of the difference and its class (see the module docstring)."""
    se = math.hypot(float(se_reproduced), float(se_published))
    diff = float(reproduced) - float(published)
    if se > 0:
        z = diff / se
    else:
        z = 0.0 if diff == 0 else math.copysign(math.inf, diff)
    return Comparison(float(published), float(reproduced), float(se_reproduced), float(se_published), z,
                      classify(z, explained, threshold))


def at_most(measured: float, bound: float, rtol: float = 0.0) -> bool:
    """A claimed upper bound holds: measured <= bound (1 + rtol), for finite measurements."""
    return bool(np.isfinite(measured)) and float(measured) <= float(bound) * (1.0 + rtol)


def at_least(measured: float, bound: float) -> bool:
    """A claimed lower bound (or separation) holds: measured >= bound, for finite measurements."""
    return bool(np.isfinite(measured)) and float(measured) >= float(bound)


def audit_refutes(epsilon_lb: float, epsilon_claimed: float) -> bool:
    """A (1 - alpha)-confidence lower bound on epsilon above the claimed epsilon refutes the claim."""
    return float(epsilon_lb) > float(epsilon_claimed)


def audit_detects(epsilon_lb: float, epsilon_claimed: float) -> bool:
    """Negative control: an audit of a mechanism with too little noise (true epsilon above the claim) has power
    when its lower bound exceeds the claimed epsilon."""
    return audit_refutes(epsilon_lb, epsilon_claimed)


def slope(x: ArrayLike, y: ArrayLike) -> float:
    """Least-squares slope of log y against log x."""
    lx, ly = np.log(np.asarray(x, dtype=float)), np.log(np.asarray(y, dtype=float))
    return float(np.polyfit(lx, ly, 1)[0])


def slope_agrees(measured_slope: float, claimed_exponent: float, tolerance: float) -> bool:
    """A claimed rate x^claimed holds when the fitted slope is within ``tolerance`` of the exponent."""
    return bool(np.isfinite(measured_slope)) and abs(float(measured_slope) - float(claimed_exponent)) <= float(tolerance)


def rate_at_most(failures: int, trials: int, delta: float, alpha: float = 0.05) -> bool:
    """A claimed failure probability delta holds unless the Clopper-Pearson (1 - alpha) lower bound of the
    observed rate exceeds it (the data then refute the claim at level alpha)."""
    from dpkernels.audit import clopper_pearson

    lo, _ = clopper_pearson(int(failures), int(trials), alpha)
    return lo <= float(delta)


def status(ok: bool) -> str:
    """``holds`` or ``violated``."""
    return "holds" if ok else "violated"


def holm(pvalues: Sequence[float], alpha: float = 0.05) -> list[bool]:
    """Holm's step-down procedure: which of a family of hypotheses are rejected at family-wise error ``alpha`` (a NaN
    p-value is never rejected).  The i-th smallest p-value is compared with alpha / (m - i); rejection stops at the
    first that fails."""
    p = np.asarray(pvalues, dtype=float)
    m = len(p)
    out = [False] * m
    for rank, i in enumerate(np.argsort(np.where(np.isnan(p), np.inf, p), kind="stable")):
        if not (p[i] <= alpha / (m - rank)):
            break
        out[int(i)] = True
    return out
