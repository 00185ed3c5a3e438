"""The criteria behind every verdict, in one place (each unit-tested with a case where it must fail).

Published against reproduced.  A published number is the mean of the paper's runs; ours is the mean of ours.
They are compared through the standard error of the *difference*,

    t = (reproduced - published) / sqrt(se_reproduced^2 + se_published^2),

never through the spread of single runs (a published mean inside the central 95% of single runs can be many
standard errors away).  When the paper does not report its spread, ``se_published`` is computed from ours under
the stated assumption that the paper's runs had our per-run spread: se_published = sd_reproduced / sqrt(n_published)
(:func:`published_se`).  Both standard errors then rest on our own sd, estimated from our n_r replicates, so the
statistic is a t statistic with n_r - 1 degrees of freedom (9 for ten folds, 4 for five runs), not a normal z: it is
referred to its t distribution (:func:`compare`, ``df``) at the two-sided per-number false-positive rate
:data:`ALPHA_COMPARE` (0.0027, the nominal rate of "3 standard errors" under a normal law; the cut is 4.09 at 9
degrees of freedom and 6.62 at 4).  A comparison that does not reject is an *agreement* only when it could have seen
the paper's (or our stated) minimum effect: its power against a true difference of ``min_effect`` (noncentral t,
:func:`comparison_power`) is at least :data:`POWER_TARGET`; otherwise it is ``inconclusive (too noisy)``, with that
power.  A rejection is ``differs, unexplained`` unless a hypothesis accepted by its own joint test (with its power
stated) names the number: then ``consistent with <id>`` (:func:`classify`).

Claims.  A claimed upper bound holds when the measurement is at most the bound (:func:`at_most`), a lower bound
when at least (:func:`at_least`); a privacy audit refutes epsilon when its lower confidence bound exceeds it
(:func:`audit_refutes`), and a negative control shows the audit's power when the audit catches a mechanism with
too little noise (:func:`audit_detects`); a claimed rate holds when the fitted log-log slope is within a stated
tolerance of the claimed exponent (:func:`slope_agrees`); a failure probability holds when the Clopper-Pearson
lower bound of the observed rate does not exceed the claimed delta (:func:`rate_at_most`).

Three-valued verdicts.  A verdict is ``holds`` (the data *confirm* the claim: a one-sided confidence bound on the
right side of the claimed bound, an equivalence test inside a stated margin, or a test with its stated power),
``violated`` (the data *refute* it) or ``inconclusive`` (neither: too few runs, too much noise, a NaN).  A NaN is
never a hold.  Each function below returns an :class:`Outcome`: the status, the criterion in words (shown beside the
verdict in the notebooks and in ``checks.csv``) and the numbers it used.

* :func:`bound_verdict`: a measured quantity (with its Monte Carlo standard error, 0 for an exact computation)
  against a claimed upper or lower bound.
* :func:`difference_verdict`: a claimed sign of a mean (paired) difference, "A beats B": holds when the one-sided
  (1 - alpha) lower confidence bound is above 0, violated when the upper one is below ``refute_below`` (0 by default:
  significantly the other way), inconclusive otherwise; the power to detect ``min_effect`` is stated.
* :func:`equivalence_verdict`: two one-sided tests (TOST) with a stated ``margin``: holds when the (1 - 2 alpha)
  interval of the difference lies inside (-margin, margin), violated when it lies wholly outside, inconclusive
  otherwise.
* :func:`rate_verdict`: a claimed failure probability delta: violated when the Clopper-Pearson lower bound exceeds
  delta; holds only when the check has power >= ``power_target`` to detect ``power_ratio`` x delta; otherwise
  inconclusive (with the number of trials it would need).
* :func:`audit_verdict`: a privacy audit: violated when its lower confidence bound exceeds the claimed epsilon; holds
  only when its negative control (the same audit of a mechanism with too little noise) detected the leak, i.e. the
  audit had power; otherwise inconclusive.
* :func:`exponent_verdict`: a claimed rate exponent, by equivalence of the fitted slope within a tolerance.
* :func:`compare`: a published number against ours (t with its degrees of freedom, at :data:`ALPHA_COMPARE`, power
  against ``min_effect``), see above.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike

__all__ = [
    "Z_AGREE",
    "ALPHA_COMPARE",
    "TOO_NOISY",
    "CONSISTENT",
    "HYPOTHESIS_OUTCOMES",
    "hypothesis_outcome",
    "comparison_cut",
    "comparison_power",
    "STATUSES",
    "ALPHA",
    "POWER_TARGET",
    "Outcome",
    "verdict",
    "bound_verdict",
    "audit_strength",
    "difference_verdict",
    "equivalence_verdict",
    "rate_verdict",
    "rate_power",
    "trials_for_power",
    "audit_verdict",
    "exponent_verdict",
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
    "slope_with_se",
    "slope_agrees",
    "rate_at_most",
    "status",
    "dkw_radius",
    "law_verdict",
]

#: ``|z|`` up to this many standard errors: the cut of the rules that rank readings and of the reference check (both
#: compare a run with a run of the same protocol, on many replicates); published numbers are compared by :func:`compare`.
Z_AGREE = 3.0
#: Two-sided false-positive rate of one comparison of a published number with ours (:func:`compare`): the nominal rate
#: of ``|z|`` > 3 under a normal law, now referred to t with the degrees of freedom of our spread.
ALPHA_COMPARE = 0.0027
#: The three verdicts, and ``skipped`` for a check that could not run (data absent), with its reason.
STATUSES = ("holds", "violated", "inconclusive", "skipped")
#: One-sided error level of every confidence bound behind a verdict.
ALPHA = 0.05
#: Power a check must have (to detect the stated effect) before "not refuted" may count as a hold.
POWER_TARGET = 0.8
#: Classes of a published number that are neither agreements nor differences.
TOO_NOISY = "inconclusive (too noisy)"
#: Prefix of the class of a difference that a hypothesis accepted by its own test accounts for (``consistent with C5``).
CONSISTENT = "consistent with"
#: What a hypothesis's own test concluded (the ``outcome`` of ``hypotheses.csv``, :func:`hypothesis_outcome`).
HYPOTHESIS_OUTCOMES = ("accepted", "rejected", "not rejected, too little power", "not tested", "void")


def hypothesis_outcome(accepted: bool, not_rejected: bool, tested: bool = True, void: bool = False) -> str:
    """The outcome of a hypothesis's test (:data:`HYPOTHESIS_OUTCOMES`): ``accepted``; ``rejected`` (its test rejects
    it); ``not rejected, too little power`` (not rejected, but the test accepts too often without the hypothesis's
    effect for its family's error control: not accepted, and no evidence against it either); ``not tested`` (no test
    could run: e.g. one split, no standard error); ``void`` (the variant, as the data chose it, is our own reading, so
    its test would compare our numbers with themselves: it bears on no number, and nothing of the hypothesis was
    learned; a different variant of the same idea might not be void)."""
    if void:
        if accepted:
            raise ValueError("a void hypothesis (its variant is our reading) cannot be accepted")
        return "void"
    if not tested:
        return "not tested"
    if accepted and not not_rejected:
        raise ValueError("a hypothesis its test rejects cannot be accepted")
    return "accepted" if accepted else ("not rejected, too little power" if not_rejected else "rejected")


@dataclass(frozen=True)
class Comparison:
    """A published number against its reproduction (:func:`compare`)."""

    published: float
    reproduced: float
    se_reproduced: float
    se_published: float
    z: float  #: the t statistic (reproduced - published) / se of the difference
    cls: str  #: "agrees", "inconclusive (too noisy)", "consistent with <id>" or "differs, unexplained"
    df: float = math.inf  #: degrees of freedom of the spread behind the standard errors (inf: known or exact)
    p_value: float = math.nan  #: two-sided p-value of t under "no difference"
    cut: float = math.nan  #: ``|t|`` above which the difference is significant at ``alpha``
    power: float = math.nan  #: probability of rejecting when the true difference is +-``min_effect``
    min_effect: float = math.nan


def published_se(sd_reproduced: float, n_published: float | None) -> float:
    """The standard error of a published mean of ``n_published`` runs, assuming the paper's runs had our per-run
    standard deviation.  ``n_published`` unknown (None): 0, i.e. the published number is treated as exact (which
    can only make differences look larger)."""
    if n_published is None or not np.isfinite(n_published) or n_published <= 0:
        return 0.0
    return float(sd_reproduced) / math.sqrt(float(n_published))


def _df(df: float | None) -> float:
    return math.inf if df is None or not np.isfinite(df) else float(df)


def comparison_cut(df: float | None = None, alpha: float = ALPHA_COMPARE) -> float:
    """``|t|`` above which a difference is significant at the two-sided level ``alpha`` (t with ``df`` degrees of freedom,
    the normal law when ``df`` is None or infinite): 3.0 for the normal law at 0.0027, 4.09 at 9, 6.62 at 4."""
    from scipy import stats

    d = _df(df)
    return float(stats.norm.isf(alpha / 2)) if math.isinf(d) else float(stats.t.isf(alpha / 2, d))


def comparison_power(effect: float, se: float, df: float | None = None, alpha: float = ALPHA_COMPARE) -> float:
    """Probability that :func:`compare` rejects "no difference" when the true difference is +-``effect``: P(``|T|`` > cut)
    with T noncentral t (``df``, noncentrality effect / se); normal when ``df`` is None.  An exact number (se = 0) has
    power 1 against any positive effect; a NaN standard error has power 0."""
    from scipy import stats

    if not _finite(effect, se) or float(se) < 0:
        return 0.0
    e, s = abs(float(effect)), float(se)
    if s == 0:
        return 1.0 if e > 0 else 0.0
    c, d, nc = comparison_cut(df, alpha), _df(df), e / s
    if math.isinf(d):
        return float(stats.norm.sf(c - nc) + stats.norm.cdf(-c - nc))
    # the far tail (P(T < -cut), about 0 for a large noncentrality) can come back NaN from scipy: read it as 0
    upper, lower = float(stats.nct.sf(c, d, nc)), float(stats.nct.sf(c, d, -nc))
    return min(1.0, (upper if np.isfinite(upper) else 1.0 if nc > c else 0.0) + (lower if np.isfinite(lower) else 0.0))


def classify(z: float, explained: str | None = None, *, df: float | None = None, alpha: float = ALPHA_COMPARE,
             power: float | None = None, power_target: float = POWER_TARGET) -> str:
    """The class of a published number from its t statistic ``z``: ``agrees`` when ``|z|`` is within the cut of t with
    ``df`` at ``alpha`` (:func:`comparison_cut`) and, when ``power`` (against the minimum effect) is given, it is at least
    ``power_target``, else ``inconclusive (too noisy)`` (the comparison could not have seen a difference of that
    size); beyond the cut ``consistent with <explained>`` when a hypothesis accepted by its own test names the number,
    else ``differs, unexplained``.  A non-finite z (zero standard error and a difference) differs; a NaN z (a
    missing number, or one run: no spread) is ``inconclusive (too noisy)``."""
    if isinstance(z, float) and math.isnan(z):
        return TOO_NOISY
    if np.isfinite(z) and abs(z) <= comparison_cut(df, alpha):
        if power is not None and not float(power) >= power_target:
            return TOO_NOISY
        return "agrees"
    if explained:
        return f"{CONSISTENT} {explained}"
    return "differs, unexplained"


def compare(published: float, reproduced: float, se_reproduced: float, se_published: float = 0.0,
            explained: str | None = None, *, df: float | None = None, alpha: float = ALPHA_COMPARE,
            min_effect: float | None = None) -> Comparison:
    """t of the difference, its p-value against ``df`` degrees of freedom, the power against ``min_effect`` and the
    class (see the module docstring and :func:`classify`)."""
    from scipy import stats

    se = math.hypot(float(se_reproduced), float(se_published))
    diff = float(reproduced) - float(published)
    if math.isnan(diff) or math.isnan(se):
        z = math.nan
    elif se > 0:
        z = diff / se
    else:
        z = 0.0 if diff == 0 else math.copysign(math.inf, diff)
    d = _df(df)
    p = math.nan if math.isnan(z) else float(2 * (stats.norm.sf(abs(z)) if math.isinf(d) else stats.t.sf(abs(z), d)))
    power = None if min_effect is None else comparison_power(float(min_effect), se, df, alpha)
    return Comparison(float(published), float(reproduced), float(se_reproduced), float(se_published), z,
                      classify(z, explained, df=df, alpha=alpha, power=power), d, p, comparison_cut(df, alpha),
                      math.nan if power is None else power, math.nan if min_effect is None else float(min_effect))


def at_most(measured: float, bound: float, rtol: float = 0.0) -> bool:
    """A claimed upper bound holds: measured <= bound (1 + rtol), for finite measurements."""
    return bool(np.isfinite(measured)) and float(measured) <= float(bound) * (1.0 + rtol)


def at_least(measured: float, bound: float) -> bool:
    """A claimed lower bound (or separation) holds: measured >= bound, for finite measurements."""
    return bool(np.isfinite(measured)) and float(measured) >= float(bound)


def audit_refutes(epsilon_lb: float, epsilon_claimed: float) -> bool:
    """A (1 - alpha)-confidence lower bound on epsilon above the claimed epsilon refutes the claim."""
    return float(epsilon_lb) > float(epsilon_claimed)


def audit_strength(exact_loss: float, epsilon: float, basis: str = "the proof") -> str:
    """What an audit on a pair can refute, for a row's "strength:" note: the share of ``epsilon`` the pair's exact
    privacy loss reaches, and so how far beyond what ``basis`` allows a mechanism must leak before the audit can
    refute ``epsilon`` on that pair."""
    return (f"this pair leaks {exact_loss / epsilon:.2f} of eps, so the audit refutes eps only if the mechanism leaks "
            f"more than {epsilon / max(exact_loss, 1e-12):.2g}x what {basis} allows here")


def audit_detects(epsilon_lb: float, epsilon_claimed: float) -> bool:
    """Negative control: an audit of a mechanism with too little noise (true epsilon above the claim) has power
    when its lower bound exceeds the claimed epsilon."""
    return audit_refutes(epsilon_lb, epsilon_claimed)


def slope(x: ArrayLike, y: ArrayLike) -> float:
    """Least-squares slope of log y against log x."""
    lx, ly = np.log(np.asarray(x, dtype=float)), np.log(np.asarray(y, dtype=float))
    return float(np.polyfit(lx, ly, 1)[0])


def slope_with_se(x: ArrayLike, y: ArrayLike) -> tuple[float, float, int]:
    """Least-squares slope of log y against log x, its standard error and residual degrees of freedom (n - 2)."""
    from scipy import stats

    lx, ly = np.log(np.asarray(x, dtype=float)), np.log(np.asarray(y, dtype=float))
    if lx.size < 3:
        return float(np.polyfit(lx, ly, 1)[0]), math.nan, 0
    res = stats.linregress(lx, ly)
    return float(res.slope), float(res.stderr), int(lx.size - 2)


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


# ----------------------------------------------------------------------------------------------
# three-valued verdicts
# ----------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Outcome:
    """A three-valued verdict with the criterion that produced it (shown beside the verdict)."""

    status: str  #: "holds", "violated" or "inconclusive"
    criterion: str  #: the rule, in words, with the numbers it used
    estimate: float = math.nan
    lower: float = math.nan  #: lower confidence bound used by the rule (nan when none)
    upper: float = math.nan  #: upper confidence bound used by the rule (nan when none)
    power: float = math.nan  #: power of the check against its stated alternative (nan when not applicable)

    def __post_init__(self) -> None:
        if self.status not in ("holds", "violated", "inconclusive"):
            raise ValueError(f"status must be holds, violated or inconclusive, got {self.status!r}")

    @property
    def holds(self) -> bool:
        return self.status == "holds"

    def __str__(self) -> str:
        return f"{self.status}: {self.criterion}"


def verdict(confirmed: bool, refuted: bool) -> str:
    """``holds`` when confirmed, ``violated`` when refuted, ``inconclusive`` when neither (both is an error)."""
    if confirmed and refuted:
        raise ValueError("a check cannot both confirm and refute its claim")
    return "holds" if confirmed else ("violated" if refuted else "inconclusive")


def _finite(*xs: float) -> bool:
    return all(x is not None and np.isfinite(float(x)) for x in xs)


def _quantile(alpha: float, df: float | None) -> float:
    from scipy import stats

    return float(stats.norm.ppf(1.0 - alpha)) if df is None or not np.isfinite(df) else float(stats.t.ppf(1.0 - alpha, df))


def bound_verdict(measured: float, bound: float, *, se: float = 0.0, direction: str = "at_most", alpha: float = ALPHA,
                  rtol: float = 0.0, df: float | None = None) -> Outcome:
    """A claimed bound: ``direction="at_most"`` (the claim is measured <= bound) or ``"at_least"``.

    ``se`` is the Monte Carlo standard error of ``measured`` (0 for an exact computation: then the verdict is holds or
    violated).  holds when the one-sided (1 - alpha) confidence bound is on the claimed side of ``bound`` (x (1 +
    rtol) for at_most, a stated relative slack for round-off), violated when the opposite bound is beyond it,
    inconclusive otherwise or when anything is NaN."""
    if direction not in ("at_most", "at_least"):
        raise ValueError(f"direction must be 'at_most' or 'at_least', got {direction!r}")
    if not _finite(measured, bound, se) or float(se) < 0:
        return Outcome("inconclusive", f"measured {measured} against bound {bound}: not a finite measurement")
    m, b, s = float(measured), float(bound), float(se)
    q = _quantile(alpha, df) if s > 0 else 0.0
    lo, hi = m - q * s, m + q * s
    level = f"{100 * (1 - alpha):g}%"
    if direction == "at_most":
        b = b * (1.0 + rtol) if b >= 0 else b * (1.0 - rtol)
        status = verdict(hi <= b, lo > b)
        # the criterion states the comparison as it came out, never the holding side alone (an inconclusive check
        # must not read "1.112 <= 1.1")
        rule = (f"measured {'<=' if m <= b else '>'} bound" if s == 0 else
                f"upper {level} bound {hi:.4g} <= {b:.4g}" if status == "holds" else
                f"lower {level} bound {lo:.4g} > {b:.4g}" if status == "violated" else
                f"upper {level} bound {hi:.4g} > {b:.4g} and lower {lo:.4g} <= {b:.4g}: neither side confirmed")
    else:
        status = verdict(lo >= b, hi < b)
        rule = (f"measured {'>=' if m >= b else '<'} bound" if s == 0 else
                f"lower {level} bound {lo:.4g} >= {b:.4g}" if status == "holds" else
                f"upper {level} bound {hi:.4g} < {b:.4g}" if status == "violated" else
                f"lower {level} bound {lo:.4g} < {b:.4g} and upper {hi:.4g} >= {b:.4g}: neither side confirmed")
    return Outcome(status, f"{rule} (measured {m:.4g}" + (f", se {s:.2g})" if s > 0 else ")"), m, lo, hi)


def difference_verdict(mean: float, se: float, *, min_effect: float, df: float | None = None, alpha: float = ALPHA,
                       refute_below: float = 0.0, power_target: float = POWER_TARGET) -> Outcome:
    """A claim that a (paired) mean difference is positive ("A beats B", the difference oriented so that the claim is
    ``mean > 0``): holds when the one-sided (1 - alpha) lower confidence bound is above 0; violated when the upper
    bound is below ``refute_below`` (0: significantly the other way; a positive value states the smallest advantage
    the claim implies); inconclusive otherwise.  The power to detect a true difference of ``min_effect`` is stated: the
    probability that the lower bound clears 0, P(T > q) with T noncentral t (``df``, noncentrality min_effect / se),
    normal when ``df`` is None (never below ``alpha``, the rate at no effect)."""
    from scipy import stats

    if not _finite(mean, se) or float(se) < 0:
        return Outcome("inconclusive", f"difference {mean} (se {se}): not a finite measurement")
    m, s = float(mean), float(se)
    q = _quantile(alpha, df)
    lo, hi = m - q * s, m + q * s
    d, nc = _df(df), float(min_effect) / s if s > 0 else math.inf
    power = (1.0 if s == 0 else float(stats.norm.sf(q - nc)) if math.isinf(d) else float(stats.nct.sf(q, d, nc)))
    status = verdict(lo > 0, hi < refute_below)
    crit = (f"one-sided {100 * (1 - alpha):g}% bounds of the difference [{lo:.4g}, {hi:.4g}]: holds if the lower > 0, "
            f"violated if the upper < {refute_below:g}; power {power:.2f} to detect {min_effect:g}")
    if status == "inconclusive" and power < power_target:
        crit += f" (below {power_target:g}: too few runs to tell)"
    return Outcome(status, crit, m, lo, hi, power)


def equivalence_verdict(mean: float, se: float, *, margin: float, df: float | None = None, alpha: float = ALPHA
                        ) -> Outcome:
    """Two one-sided tests (TOST) of ``|difference|`` < ``margin``: holds when the (1 - 2 alpha) interval lies inside
    (-margin, margin), violated when it lies wholly outside [-margin, margin], inconclusive otherwise."""
    if not _finite(mean, se, margin) or float(se) < 0:
        return Outcome("inconclusive", f"difference {mean} (se {se}): not a finite measurement")
    m, s, mg = float(mean), float(se), float(margin)
    q = _quantile(alpha, df)
    lo, hi = m - q * s, m + q * s
    status = verdict(lo > -mg and hi < mg, lo > mg or hi < -mg)
    return Outcome(status, f"{100 * (1 - 2 * alpha):g}% interval [{lo:.4g}, {hi:.4g}] against the margin +-{mg:g}",
                   m, lo, hi)


def _refuting_count(trials: int, delta: float, alpha: float) -> int | None:
    """The smallest number of failures whose Clopper-Pearson lower bound exceeds delta (None: none can)."""
    from dpkernels.audit import clopper_pearson

    lo_k, hi_k = 0, int(trials)
    if clopper_pearson(hi_k, trials, alpha)[0] <= delta:
        return None
    while lo_k < hi_k:  # the lower bound increases with k
        mid = (lo_k + hi_k) // 2
        if clopper_pearson(mid, trials, alpha)[0] > delta:
            hi_k = mid
        else:
            lo_k = mid + 1
    return lo_k


def rate_power(trials: int, delta: float, *, power_ratio: float = 2.0, alpha: float = ALPHA) -> float:
    """Probability that :func:`rate_verdict` refutes delta when the true failure rate is ``power_ratio`` x delta."""
    from scipy import stats

    k = _refuting_count(int(trials), float(delta), alpha)
    if k is None:
        return 0.0
    return float(stats.binom.sf(k - 1, int(trials), min(1.0, power_ratio * float(delta))))


def trials_for_power(delta: float, *, power_ratio: float = 2.0, power_target: float = POWER_TARGET,
                     alpha: float = ALPHA, max_trials: int = 10**7) -> int:
    """The fewest trials giving :func:`rate_power` >= ``power_target`` (doubling, then bisection)."""
    hi = 8
    while rate_power(hi, delta, power_ratio=power_ratio, alpha=alpha) < power_target:
        hi *= 2
        if hi > max_trials:
            raise ValueError(f"more than {max_trials} trials needed")
    lo = hi // 2
    while lo + 1 < hi:  # power is not monotone in the trials by a little (discreteness): report a working count
        mid = (lo + hi) // 2
        if rate_power(mid, delta, power_ratio=power_ratio, alpha=alpha) >= power_target:
            hi = mid
        else:
            lo = mid
    return hi


def rate_verdict(failures: int, trials: int, delta: float, *, alpha: float = ALPHA, power_ratio: float = 2.0,
                 power_target: float = POWER_TARGET) -> Outcome:
    """A claimed failure probability ``delta``: violated when the Clopper-Pearson (two-sided 1 - alpha) lower bound of
    failures / trials exceeds delta; holds when not refuted *and* the check has power >= ``power_target`` to refute a
    true rate of ``power_ratio`` x delta; inconclusive otherwise (the criterion says how many trials would do)."""
    from dpkernels.audit import clopper_pearson

    k, t, dl = int(failures), int(trials), float(delta)
    if t <= 0:
        return Outcome("inconclusive", "no trials")
    lo, hi = clopper_pearson(k, t, alpha)
    power = rate_power(t, dl, power_ratio=power_ratio, alpha=alpha)
    status = verdict(lo <= dl and power >= power_target, lo > dl)
    crit = (f"{k}/{t} failures, Clopper-Pearson lower bound {lo:.3g} against delta {dl:g}; power {power:.2f} to detect "
            f"{power_ratio:g} x delta")
    if status == "inconclusive":
        crit += f" (below {power_target:g}; {trials_for_power(dl, power_ratio=power_ratio, alpha=alpha)} trials would do)"
    return Outcome(status, crit, k / t, lo, hi, power)


def audit_verdict(epsilon_lb: float, epsilon_claimed: float, *, control_lb: float | None = None,
                  control_claimed: float | None = None) -> Outcome:
    """A privacy audit: violated when its lower confidence bound exceeds the claimed epsilon; holds when it does not
    *and* the negative control (the same audit of a mechanism with too little noise, claiming ``control_claimed``,
    default the same epsilon) caught its leak (``control_lb`` above that claim), which shows the audit had power;
    inconclusive otherwise (no control, or a control it did not catch)."""
    if not _finite(epsilon_lb, epsilon_claimed):
        return Outcome("inconclusive", f"audit bound {epsilon_lb} against {epsilon_claimed}: not finite")
    lb, eps = float(epsilon_lb), float(epsilon_claimed)
    c_eps = eps if control_claimed is None else float(control_claimed)
    powered = control_lb is not None and _finite(control_lb) and float(control_lb) > c_eps
    status = verdict(lb <= eps and powered, lb > eps)
    ctrl = ("no negative control" if control_lb is None else
            f"negative control {float(control_lb):.3g} {'>' if powered else '<='} {c_eps:g}")
    return Outcome(status, f"audit lower bound {lb:.3g} against epsilon {eps:g}; {ctrl}", lb, lb)


def exponent_verdict(measured_slope: float, se: float, claimed_exponent: float, tolerance: float, *,
                     df: float | None = None, alpha: float = ALPHA) -> Outcome:
    """A claimed rate n^claimed: equivalence (:func:`equivalence_verdict`) of the fitted log-log slope with the
    claimed exponent within ``tolerance``."""
    out = equivalence_verdict(float(measured_slope) - float(claimed_exponent), se, margin=tolerance, df=df, alpha=alpha)
    return Outcome(out.status, f"slope {measured_slope:.3g} (se {se:.2g}) against exponent {claimed_exponent:g}: "
                   + out.criterion, float(measured_slope), out.lower + claimed_exponent, out.upper + claimed_exponent)


# ----------------------------------------------------------------------------------------------
# added for issue 21 (Chaudhuri's sampler rows): a sampled law against the law it claims
# ----------------------------------------------------------------------------------------------
def dkw_radius(n: int, alpha: float = ALPHA) -> float:
    """Radius of the (1 - alpha) Dvoretzky-Kiefer-Wolfowitz band (Massart's constant): sup_x ``|F_n(x) - F(x)|`` <= it with
    probability >= 1 - alpha for n draws of any law F."""
    return math.sqrt(math.log(2.0 / alpha) / (2.0 * int(n)))


def law_verdict(distance: float, n: int, *, margin: float, alpha: float = ALPHA) -> Outcome:
    """A sampler against the law it claims, by the Kolmogorov distance D_n = sup_x ``|F_n(x) - F(x)|`` of ``n`` draws to
    the claimed law F: the true distance of the sampler's law lies within D_n +- :func:`dkw_radius` with probability
    >= 1 - alpha, so the sampler is confirmed within ``margin`` when D_n + radius < margin (holds), refuted when
    D_n - radius > margin (violated), and inconclusive otherwise (too few draws, or NaN)."""
    if not _finite(distance, margin) or int(n) <= 0:
        return Outcome("inconclusive", f"Kolmogorov distance {distance} from {n} draws: not a finite measurement")
    dist, r = float(distance), dkw_radius(n, alpha)
    status = verdict(dist + r < margin, dist - r > margin)
    return Outcome(status, f"Kolmogorov distance {dist:.3g} +- {r:.3g} ({100 * (1 - alpha):g}% DKW band, {int(n)} draws) "
                   f"against the margin {margin:g}", dist, max(0.0, dist - r), dist + r)
