"""Empirical sensitivity and statistical privacy audits.

Sensitivity.  A mechanism's noise is calibrated to a *bound* on how far the non-private output
moves between neighbouring databases (replace-one relation, n fixed).  Here that movement is
measured: :func:`random_neighbour_sensitivity` replaces random rows by random points of the domain,
:func:`adversarial_neighbour_sensitivity` searches the replaced example (row, point and label) to
maximise ||A(D) - A(D')||_p (random search, then Nelder-Mead refinement in input space).

Privacy audit.  For a neighbouring pair (D, D') the auditor draws many releases from each, scores them
with a test statistic (by default the log-likelihood-ratio statistic of the Laplace mechanism), and
turns the counts of a rejection region S into a lower bound on the privacy loss:
epsilon >= log(P_D(S) / P_D'(S)).  With Clopper-Pearson intervals (each at level 1 - alpha/2, so
jointly 1 - alpha) on both probabilities, and the threshold picked on a separate half of the samples,
``epsilon_lb = log(p_lower / q_upper)`` is a (1 - alpha)-confidence lower bound on the true epsilon.
A bound above the claimed epsilon refutes the claim; a bound below it is consistent with it and
shows how close the claim is to tight.

One-run audit (Steinke, Nasr and Jagielski, "Privacy auditing with one (1) training run", NeurIPS 2023).  m canaries
are each put into the data independently with probability 1/2 (S_i = +1) or left out (S_i = -1), the mechanism
runs once, and the auditor guesses S_i from a score of the output: +1 for the ``k_positive`` highest scores, -1 for
the ``k_negative`` lowest, and abstains on the rest (:func:`one_run_guesses`).  Viewed as a function of S, an
(epsilon, delta)-DP mechanism is (epsilon, delta)-DP in each coordinate of S, so the number W of correct guesses
among r is stochastically dominated by Binomial(r, e^eps / (1 + e^eps)) when delta = 0 (their main theorem), and
for delta > 0 obeys P[W >= v] <= P[Binomial(r, q) >= v] + 2 m delta max_{1<=i<=v} P[v - i <= Binomial(r, q) < v] / i
(the bound their Appendix D computes, :func:`one_run_p_value`).  The largest epsilon that a count v still rejects at
level beta is the (1 - beta)-confidence lower bound (:func:`one_run_epsilon_lower_bound`).  The paper's inclusion
is add/remove; under the replace-one relation of this package a canary left out is replaced by its own
"absent" row (D always has n rows), and flipping S_i is a replace-one change: the same domination holds.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np
from joblib import Parallel, delayed
from numpy.typing import ArrayLike, NDArray
from scipy.optimize import minimize
from scipy.stats import beta as beta_dist

from dpkernels._validation import check_probability, check_random_state

__all__ = [
    "clopper_pearson",
    "AuditResult",
    "epsilon_lower_bound",
    "laplace_llr_statistic",
    "SensitivityResult",
    "random_neighbour_sensitivity",
    "adversarial_neighbour_sensitivity",
    "replace_row",
    "laplace_float_reachable",
    "reachability_statistic",
    "one_run_p_value",
    "one_run_epsilon_lower_bound",
    "one_run_guesses",
    "OneRunAudit",
    "one_run_audit",
]

Array = NDArray[np.float64]
FitFn = Callable[[Array, Array], Array]


def clopper_pearson(k: int, n: int, alpha: float = 0.05) -> tuple[float, float]:
    """Exact two-sided (1 - alpha) Clopper-Pearson interval for a binomial proportion k / n."""
    if n <= 0 or not 0 <= k <= n:
        raise ValueError(f"need 0 <= k <= n and n > 0, got k={k}, n={n}")
    lo = 0.0 if k == 0 else float(beta_dist.ppf(alpha / 2, k, n - k + 1))
    hi = 1.0 if k == n else float(beta_dist.ppf(1 - alpha / 2, k + 1, n - k))
    return lo, hi


@dataclass
class AuditResult:
    """Outcome of :func:`epsilon_lower_bound`."""

    epsilon_lb: float  #: (1 - alpha)-confidence lower bound on epsilon (0 when nothing is detected)
    epsilon_hat: float  #: plug-in estimate log((p_hat - delta) / q_hat) on the evaluation half
    threshold: float
    direction: str  #: "D>D'" (S = {score > t} more likely under D) or "D'>D"
    p_hat: float
    q_hat: float
    n_eval: int
    alpha: float


def _one_sided_lb(k1: int, k2: int, n: int, alpha: float, delta: float = 0.0) -> float:
    p_lo, _ = clopper_pearson(k1, n, alpha)  # two-sided alpha/2 each side -> lower at alpha/2
    _, q_hi = clopper_pearson(k2, n, alpha)
    if p_lo - delta <= 0.0:
        return 0.0
    return max(0.0, math.log((p_lo - delta) / q_hi))


def epsilon_lower_bound(
    scores_d: Array,
    scores_dprime: Array,
    alpha: float = 0.05,
    n_thresholds: int = 200,
    random_state: object = 0,
    delta: float = 0.0,
) -> AuditResult:
    """Lower-bound epsilon from test-statistic samples of M(D) and M(D').

    Half of each sample selects the threshold t and direction maximising the Clopper-Pearson bound;
    the other half evaluates it.  Both intervals are two-sided at level alpha/2 each (Bonferroni),
    so the returned ``epsilon_lb`` holds with probability >= 1 - alpha.  For an (epsilon, ``delta``)-DP claim,
    P_D(S) <= e^eps P_D'(S) + delta gives eps >= log((P_D(S) - delta) / P_D'(S)); ``delta = 0`` is pure DP.
    """
    check_probability(alpha, "alpha")
    if not 0.0 <= delta < 1.0:
        raise ValueError(f"delta must be in [0, 1), got {delta!r}")
    rng = check_random_state(random_state)
    a = rng.permutation(np.asarray(scores_d, dtype=np.float64))
    b = rng.permutation(np.asarray(scores_dprime, dtype=np.float64))
    n = min(len(a), len(b))
    if n < 20:
        raise ValueError("need at least 20 samples from each database")
    half = n // 2
    sel_a, ev_a, sel_b, ev_b = a[:half], a[half:n], b[:half], b[half:n]
    pooled = np.concatenate([sel_a, sel_b])
    cands = np.unique(np.quantile(pooled, np.linspace(0.0, 1.0, n_thresholds)))
    sa, sb = np.sort(sel_a), np.sort(sel_b)
    best = (-1.0, 0.0, "D>D'")
    for t in cands:
        ka = half - int(np.searchsorted(sa, t, side="right"))  # #{score > t}
        kb = half - int(np.searchsorted(sb, t, side="right"))
        # S = {score > t} more likely under D, or S = {score <= t} more likely under D'
        for k1, k2, direction in ((ka, kb, "D>D'"), (half - kb, half - ka, "D'>D")):
            lb = _one_sided_lb(k1, k2, half, alpha, delta)
            if lb > best[0]:
                best = (lb, float(t), direction)
    _, t, direction = best
    m = len(ev_a)
    if direction == "D>D'":
        k1, k2 = int(np.sum(ev_a > t)), int(np.sum(ev_b > t))
    else:
        k1, k2 = int(np.sum(ev_b <= t)), int(np.sum(ev_a <= t))
    lb = _one_sided_lb(k1, k2, m, alpha, delta)
    p_hat, q_hat = k1 / m, k2 / m
    p_eff = p_hat - delta
    eps_hat = math.log(p_eff / q_hat) if p_eff > 0 and q_hat > 0 else (math.inf if p_eff > 0 else 0.0)
    return AuditResult(lb, eps_hat, t, direction, p_hat, q_hat, m, alpha)


def laplace_llr_statistic(outputs: Array, center_d: Array, center_dprime: Array) -> Array:
    """``||o - c'||_1 - ||o - c||_1`` for each row o: the Laplace mechanism's log-likelihood ratio times lambda.

    Large values favour D (centre c); the statistic lies in [-||c - c'||_1, ||c - c'||_1].
    The statistic has atoms at both ends; it is rounded to a grid of 1e-9 ||c - c'||_1 so that
    floating-point noise at the atoms (which differs between samples centred at c and at c') cannot
    masquerade as a distinguishing event.
    """
    o = np.atleast_2d(outputs)
    stat = np.abs(o - center_dprime).sum(axis=1) - np.abs(o - center_d).sum(axis=1)
    grid = 1e-9 * max(float(np.abs(np.asarray(center_d) - np.asarray(center_dprime)).sum()), 1e-300)
    return np.round(stat / grid) * grid


# ----------------------------------------------------------------------------------------------
# empirical sensitivity
# ----------------------------------------------------------------------------------------------
@dataclass
class SensitivityResult:
    """Largest measured ||A(D) - A(D')||_1 and _2 and the neighbour that achieved it."""

    l2: float
    l1: float
    index: int
    x_replacement: Array
    y_replacement: float
    n_evaluated: int
    history: list[float] = field(default_factory=list, repr=False)


def replace_row(X: Array, y: Array, i: int, x_new: Array, y_new: float) -> tuple[Array, Array]:
    """D' = D with row i replaced by (x_new, y_new)."""
    X2 = X.copy()
    y2 = y.copy()
    X2[i] = x_new
    y2[i] = y_new
    return X2, y2


def _diff(fit: FitFn, w_d: Array, X: Array, y: Array, i: int, x_new: Array, y_new: float) -> tuple[float, float]:
    w2 = fit(*replace_row(X, y, i, x_new, y_new))
    delta = w_d - w2
    return float(np.linalg.norm(delta)), float(np.abs(delta).sum())


def random_neighbour_sensitivity(
    fit: FitFn,
    X: Array,
    y: Array,
    sample_point: Callable[[np.random.Generator], Array],
    n_neighbours: int = 100,
    labels: Sequence[float] = (-1.0, 1.0),
    random_state: object = 0,
    n_jobs: int = 1,
    w_d: Array | None = None,
) -> SensitivityResult:
    """Max over random neighbours (random row, random domain point, random label) of ||A(D) - A(D')||."""
    rng = check_random_state(random_state)
    w_d = fit(X, y) if w_d is None else w_d
    cands = [(int(rng.integers(len(y))), sample_point(rng), float(rng.choice(labels))) for _ in range(n_neighbours)]
    vals = Parallel(n_jobs=n_jobs)(delayed(_diff)(fit, w_d, X, y, i, x, lab) for i, x, lab in cands)
    l2s = np.array([v[0] for v in vals])
    l1s = np.array([v[1] for v in vals])
    k = int(np.argmax(l2s))
    return SensitivityResult(float(l2s[k]), float(l1s.max()), cands[k][0], cands[k][1], cands[k][2], n_neighbours, l2s.tolist())


def adversarial_neighbour_sensitivity(
    fit: FitFn,
    X: Array,
    y: Array,
    sample_point: Callable[[np.random.Generator], Array],
    project: Callable[[Array], Array] = lambda x: x,
    rows: Sequence[int] | None = None,
    n_random: int = 64,
    n_refine: int = 4,
    maxiter: int = 150,
    norm: int = 2,
    labels: Sequence[float] = (-1.0, 1.0),
    random_state: object = 0,
    n_jobs: int = 1,
    w_d: Array | None = None,
) -> SensitivityResult:
    """Search the replaced example to maximise ||A(D) - A(D')||_norm.

    Stage 1 evaluates ``n_random`` random candidates (row from ``rows`` or all rows, point from
    ``sample_point``, label from ``labels``) and also each candidate row replaced by its own point with
    the opposite label.  Stage 2 refines the ``n_refine`` best with Nelder-Mead over the replacement
    point (``project`` maps a proposal into the domain, e.g. onto the unit ball).
    """
    rng = check_random_state(random_state)
    w_d = fit(X, y) if w_d is None else w_d
    pool = list(range(len(y))) if rows is None else list(rows)
    cands = []
    for _ in range(n_random):
        i = int(rng.choice(pool))
        cands.append((i, project(sample_point(rng)), float(rng.choice(labels))))
    for i in pool[: min(len(pool), n_random)]:
        cands.append((i, X[i].copy(), -float(y[i])))  # label flip of an existing row
    idx = 0 if norm == 2 else 1
    vals = Parallel(n_jobs=n_jobs)(delayed(_diff)(fit, w_d, X, y, i, x, lab) for i, x, lab in cands)
    scores = np.array([v[idx] for v in vals])
    history = scores.tolist()
    order = np.argsort(-scores)[:n_refine]

    def refine(c: tuple[int, Array, float]) -> tuple[float, Array, list[float]]:
        i, x0, lab = c
        hist: list[float] = []

        def negobj(z: Array) -> float:
            v = _diff(fit, w_d, X, y, i, project(z), lab)[idx]
            hist.append(v)
            return -v

        res = minimize(negobj, x0, method="Nelder-Mead", options={"maxiter": maxiter, "xatol": 1e-6, "fatol": 1e-12})
        return -float(res.fun), project(res.x), hist

    refined = Parallel(n_jobs=n_jobs)(delayed(refine)(cands[k]) for k in order)
    best_val, best_c = float(scores[order[0]]), cands[order[0]]
    for (val, x, hist), k in zip(refined, order):
        history += hist
        if val > best_val:
            best_val, best_c = val, (cands[k][0], x, cands[k][2])
    l2, l1 = _diff(fit, w_d, X, y, *best_c)
    return SensitivityResult(l2, l1, best_c[0], best_c[1], best_c[2], len(history), history)


# ----------------------------------------------------------------------------------------------
# the floating-point attack (Mironov 2012) on numpy's Laplace sampler
# ----------------------------------------------------------------------------------------------
def laplace_float_reachable(outputs: Array, center: Array, scale: float, window: int = 3) -> NDArray[np.bool_]:
    """Whether each output row could have come from ``center + Generator.laplace(0, scale)`` in float64.

    numpy draws U = k 2^-53 and returns ``0 + scale * log(2U)`` (U < 1/2) or ``0 - scale * log(2 - 2U)``, so every
    noise value is +-fl(scale * fl(log(j 2^-52))) for an integer j.  An output o is reachable from c when some such
    noise x has fl(c + x) = o: the j near ``exp(-|o - c| / scale) 2^52`` (``window`` either side) are tried, for both
    signs and for the doubles next to o - c.  A row is reachable when all its coordinates are.  The set of
    reachable doubles depends on c, which is the floating-point attack: outputs of the continuous sampler are
    always reachable from their own centre and often not from a neighbour's.  Releases rounded to a grid
    (:mod:`dpkernels.lattice`) are reachable from neither, so the test carries no information about them.
    """
    o = np.atleast_2d(np.asarray(outputs, dtype=np.float64))
    c = np.broadcast_to(np.asarray(center, dtype=np.float64), o.shape)
    diff = o - c
    ok = np.zeros(o.shape, dtype=bool)
    for nudge in (-1, 0, 1):
        d = diff.copy()
        for _ in range(abs(nudge)):
            d = np.nextafter(d, np.inf if nudge > 0 else -np.inf)
        mag = np.abs(d)
        base = np.rint(np.exp(-mag / scale) * 2.0**52)
        for off in range(-window, window + 1):
            j = np.clip(base + off, 1.0, 2.0**52)
            x = scale * np.log(j * 2.0**-52)  # <= 0
            for signed in (x, -x):
                ok |= (c + signed) == o
    return ok.all(axis=1)


def reachability_statistic(outputs: Array, center_d: Array, center_dprime: Array, scale: float) -> Array:
    """1[reachable from D's centre] - 1[reachable from D''s]: the attack's test statistic for
    :func:`epsilon_lower_bound` (large values favour D)."""
    return (laplace_float_reachable(outputs, center_d, scale).astype(np.float64)
            - laplace_float_reachable(outputs, center_dprime, scale).astype(np.float64))


# ----------------------------------------------------------------------------------------------
# the one-run audit (Steinke, Nasr and Jagielski 2023)
# ----------------------------------------------------------------------------------------------
def _check_counts(m: int, r: int, v: int) -> tuple[int, int, int]:
    m, r, v = int(m), int(r), int(v)
    if not 0 <= v <= r <= m or m < 1:
        raise ValueError(f"need 0 <= v <= r <= m and m >= 1, got m={m}, r={r}, v={v}")
    return m, r, v


def one_run_p_value(epsilon: float, m: int, r: int, v: int, delta: float = 0.0) -> float:
    """The p-value of ``v`` correct guesses among ``r`` (``m`` canaries) under the null "(epsilon, delta)-DP".

    Steinke, Nasr and Jagielski (2023, arXiv:2305.08846): for delta = 0, W is dominated by Binomial(r, q),
    q = e^eps / (1 + e^eps) (their main theorem), so the p-value is P[Binomial(r, q) >= v]; for delta > 0 their
    approximate-DP bound (as computed in their Appendix D) adds
    2 m delta max_{1<=i<=v} P[v - i <= Binomial(r, q) < v] / i.

    Parameters
    ----------
    epsilon : float
        The null hypothesis' epsilon (>= 0).
    m : int
        The number of canaries (each included independently with probability 1/2).
    r : int
        The number of guesses (abstentions excluded).
    v : int
        The number of correct guesses.
    delta : float, default=0.0
        The null hypothesis' delta, in [0, 1].

    Returns
    -------
    float
        min(1, the bound on P[W >= v]).

    Examples
    --------
    >>> from dpkernels.audit import one_run_p_value
    >>> round(one_run_p_value(0.0, m=10, r=10, v=10), 6)  # ten coin flips all right
    0.000977
    >>> one_run_p_value(1.0, 100, 20, 20, delta=1e-5) > one_run_p_value(1.0, 100, 20, 20)
    True
    """
    from scipy.stats import binom

    m, r, v = _check_counts(m, r, v)
    if not float(epsilon) >= 0.0:
        raise ValueError(f"epsilon must be >= 0, got {epsilon!r}")
    if not 0.0 <= float(delta) <= 1.0:
        raise ValueError(f"delta must lie in [0, 1], got {delta!r}")
    q = 1.0 / (1.0 + math.exp(-float(epsilon)))
    tail = float(binom.sf(v - 1, r, q))
    if delta == 0.0 or v == 0:
        return min(1.0, tail)
    below = binom.pmf(np.arange(v - 1, -1, -1), r, q)  # P[Bin = v - 1], P[Bin = v - 2], ..., P[Bin = 0]
    alpha = float(np.max(np.cumsum(below) / np.arange(1, v + 1)))
    return min(1.0, tail + 2.0 * m * float(delta) * alpha)


def one_run_epsilon_lower_bound(m: int, r: int, v: int, delta: float = 0.0, beta: float = 0.05,
                                tol: float = 1e-6) -> float:
    """The (1 - beta)-confidence lower bound on epsilon from ``v`` correct guesses among ``r``: the largest epsilon
    whose null :func:`one_run_p_value` rejects at level ``beta`` (0 when even epsilon = 0 is not rejected).

    The p-value grows with epsilon, so the bound is found by bisection to within ``tol``, from below (the returned
    value is still rejected).

    Parameters
    ----------
    m, r, v : int
        Canaries, guesses and correct guesses (:func:`one_run_p_value`).
    delta : float, default=0.0
        The delta of the claim being audited.
    beta : float, default=0.05
        The significance level.
    tol : float, default=1e-6
        The bisection's resolution.

    Returns
    -------
    float
        The lower bound (>= 0).

    Examples
    --------
    >>> from dpkernels.audit import one_run_epsilon_lower_bound
    >>> round(one_run_epsilon_lower_bound(100, 20, 20), 3)  # 20 guesses, all right
    1.823
    >>> one_run_epsilon_lower_bound(100, 20, 10)  # chance level
    0.0
    """
    check_probability(beta, "beta")
    m, r, v = _check_counts(m, r, v)
    if one_run_p_value(0.0, m, r, v, delta) >= beta:
        return 0.0
    lo, hi = 0.0, 1.0
    while one_run_p_value(hi, m, r, v, delta) < beta:
        lo, hi = hi, 2.0 * hi
    while hi - lo > tol:
        mid = 0.5 * (lo + hi)
        if one_run_p_value(mid, m, r, v, delta) < beta:
            lo = mid
        else:
            hi = mid
    return lo


def one_run_guesses(scores: ArrayLike, k_positive: int, k_negative: int) -> NDArray[np.int8]:
    """The auditor's guesses from per-canary scores: +1 ("included") for the ``k_positive`` highest, -1 for the
    ``k_negative`` lowest, 0 (abstain) for the rest; ties are broken by position, never by the data.

    Examples
    --------
    >>> from dpkernels.audit import one_run_guesses
    >>> one_run_guesses([0.3, -2.0, 5.0, 0.1], 1, 1).tolist()
    [0, -1, 1, 0]
    """
    s = np.asarray(scores, dtype=np.float64).ravel()
    kp, kn = int(k_positive), int(k_negative)
    if kp < 0 or kn < 0 or kp + kn > s.size:
        raise ValueError(f"need 0 <= k_positive + k_negative <= {s.size}, got {kp} and {kn}")
    if not np.all(np.isfinite(s)):
        raise ValueError("scores must be finite")
    order = np.argsort(s, kind="stable")
    out = np.zeros(s.size, dtype=np.int8)
    out[order[:kn]] = -1
    if kp:
        out[order[s.size - kp:]] = 1
    return out


@dataclass
class OneRunAudit:
    """Outcome of :func:`one_run_audit`."""

    epsilon_lb: float  #: the (1 - beta)-confidence lower bound (the best over the guess counts, Bonferroni-corrected)
    m: int  #: canaries
    guesses: int  #: r of the best guess count
    correct: int  #: v of the best guess count
    delta: float
    beta: float
    k: tuple[int, int]  #: (k_positive, k_negative) of the best guess count
    per_k: dict[tuple[int, int], tuple[int, int, float]] = field(default_factory=dict)  #: k -> (r, v, bound)


def one_run_audit(scores: ArrayLike, included: ArrayLike, *, delta: float = 0.0, beta: float = 0.05,
                  guess_counts: Sequence[tuple[int, int]] = ((10, 10),)) -> OneRunAudit:
    """Lower-bound epsilon from one run: the canaries' scores and which canaries were included.

    For each (k_positive, k_negative) of ``guess_counts`` (fixed before the run), the guesses of
    :func:`one_run_guesses` are scored against ``included`` and turned into a lower bound at level
    beta / len(guess_counts) (Bonferroni over the guess counts, so the best of them holds at level beta).

    Parameters
    ----------
    scores : array-like of shape (m,)
        One score per canary, computed from the mechanism's output only (higher: more likely included).
    included : array-like of bool, shape (m,)
        S_i = +1 (True) where canary i was put into the data, each independently with probability 1/2.
    delta : float, default=0.0
        The delta of the claim being audited.
    beta : float, default=0.05
        The significance level.
    guess_counts : sequence of (int, int), default=((10, 10),)
        The guess counts to try.

    Returns
    -------
    OneRunAudit
        The lower bound and the counts it came from.

    Examples
    --------
    >>> import numpy as np
    >>> from dpkernels.audit import one_run_audit
    >>> S = np.random.default_rng(0).random(200) < 0.5
    >>> one_run_audit(np.where(S, 1.0, -1.0), S, guess_counts=[(20, 20)]).epsilon_lb > 2  # a blatant leak
    True
    """
    inc = np.asarray(included, dtype=bool).ravel()
    s = np.asarray(scores, dtype=np.float64).ravel()
    if s.shape != inc.shape:
        raise ValueError(f"scores and included must have the same length, got {s.shape} and {inc.shape}")
    counts = [(int(a), int(b)) for a, b in guess_counts]
    if not counts:
        raise ValueError("guess_counts must not be empty")
    level = check_probability(beta, "beta") / len(counts)
    truth = np.where(inc, 1, -1)
    per_k: dict[tuple[int, int], tuple[int, int, float]] = {}
    for k in counts:
        T = one_run_guesses(s, *k)
        r, v = int(np.count_nonzero(T)), int(np.count_nonzero(T == truth))
        per_k[k] = (r, v, one_run_epsilon_lower_bound(s.size, r, v, delta, level))
    best = max(counts, key=lambda k: per_k[k][2])
    r, v, lb = per_k[best]
    return OneRunAudit(lb, s.size, r, v, float(delta), float(beta), best, per_k)
