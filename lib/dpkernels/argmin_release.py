"""Floating-point-safe release of a perturbed minimiser (objective perturbation), with its cost in delta.

The problem.  Objective perturbation releases f(b, D) = argmin_f F_b(f) = J(f, D) + b'f / n + (Delta/2)||f||^2 for
noise b with density ~ exp(-beta ||b||).  Its privacy proof (Chaudhuri et al. 2011, Theorem 9) is about exact reals.
A float64 solve is a deterministic function of (b, D) onto a countable set of doubles: an adversary who knows D and
D' inverts the first-order condition b = -n grad(J + Delta/2 ||.||^2)(f) with D's rows and re-solves; D's releases
are reproduced bit for bit and D''s never (issue 18: epsilon lower bounds of 3-4 at a claimed 1).

The construction (all constants public: n, d, R, the loss, lam = Lambda + Delta, beta, epsilon):

1. b* is an exact real draw of the noise law; :func:`dpkernels.lattice.gamma_norm_enclosure` gives a float vector
   b~ with ||b~ - b*|| <= rho (a rigorous enclosure of the same random bits), and rho <= ``radius_target`` except with
   probability ``tail`` (a Gamma(d) quantile; the fit raises then, data-independently).
2. The float solve f~ of F_{b~} is certified in floating point (:mod:`dpkernels.solvers.certify`):
   ||grad F_{b~}(f~)|| <= ``gradient_target``, so ||f~ - f(b~, D)|| <= gradient_target / lam; and lam-strong
   convexity gives ||f(b~, D) - f(b*, D)|| <= rho / (n lam).  Together ||f~ - f(b*, D)|| <= eta.
3. A public grid of spacing g (a power of two, ``GRID_FRACTION`` of the noise's per-coordinate scale in f) is shifted
   by an offset o drawn uniformly from the 2^52 multiples of g 2^-52 in [0, g), independently of everything else, and
   the release is k = round((f~ - o) / g) (computed exactly), published as o + g k.

Why it is private.  Let M(D) = (o, round((f(b*, D) - o) / g)): a post-processing of the exact mechanism f(b*, D),
hence eps-DP (Theorem 9).  The release equals M(D) unless some coordinate of f(b*, D) lies within
``|f~_j - f_j(b*, D)|`` of a cell boundary; for fixed f~ and f(b*, D) (o is drawn after them) that has probability at
most ``sum_j |f~_j - f_j| / g + d 2^-52 <= sqrt(d) eta / g + d 2^-52``.  So the release differs from an eps-DP
mechanism with probability at most delta0 = sqrt(d) eta / g + d 2^-52 + tail on every data set, and is
(eps, (1 + e^eps) delta0)-DP:
P[Y in S | D] <= P[M(D) in S] + delta0 <= e^eps P[M(D') in S] + delta0 <= e^eps P[Y in S | D'] + (1 + e^eps) delta0.

What it costs.  Utility: the rounding adds a uniform error on [-g/2, g/2) per coordinate (subtractive dither,
independent of f), about 0.5% of the noise's standard deviation.  Privacy: delta (typically 1e-9 to 1e-6; it grows
with n because a float64 gradient of n rows is certain only to about n u).  The solve must be certified to the
public target (else the fit raises, as every certified mechanism does).  Time: one rigorous gradient evaluation.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction

import numpy as np
from numpy.typing import NDArray

from dpkernels._validation import check_positive, check_random_state
from dpkernels.losses import MarginLoss
from dpkernels.solvers.certify import EXP_REL, U, gamma

__all__ = ["GRID_FRACTION", "TAIL", "TIER_SURVIVAL", "SAFETY", "OFFSET_BITS", "ENCLOSURE_REL", "ArgminReleasePlan",
           "plan_argmin_release", "shifted_grid_round", "radius_target_for"]

Array = NDArray[np.float64]
#: The release grid is the largest power of two <= GRID_FRACTION x sqrt(d + 1) / (beta n lam), the root-mean-square
#: per-coordinate noise in f when the loss is flat (smaller where it curves; see the module docstring).
GRID_FRACTION = 2.0**-6
#: Probability of the Gamma(d) radius exceeding the quantile used for the public bounds.
TAIL = 2.0**-60
#: Margin of the public gradient target over the worst-case float error the certificate can have.
SAFETY = 2.0
#: The offset is a uniform multiple of g 2^-OFFSET_BITS.
OFFSET_BITS = 52
#: The noise enclosure's radius must satisfy ||b~ - b*|| <= ENCLOSURE_REL (beta ||b||_max + 1) / beta, checked at
#: run time (its own radius is about 2^-41 ||b||; ``tests/test_argmin_release.py`` measures it).
ENCLOSURE_REL = 2.0**-39


def radius_target_for(q: float, beta: float) -> float:
    """The public bound on the enclosure radius ||b~ - b*|| for draws with beta ||b*|| <= q.

    Parameters
    ----------
    q : float
        The upper end of beta ||b*|| (a Gamma(d) quantile: a tier of :class:`ArgminReleasePlan`).
    beta : float
        The noise density's rate (density proportional to exp(-beta ||b||)).

    Returns
    -------
    float
        ``ENCLOSURE_REL`` (q + 1) / beta.

    Examples
    --------
    >>> from dpkernels.argmin_release import ENCLOSURE_REL, radius_target_for
    >>> radius_target_for(10.0, 0.5) == ENCLOSURE_REL * 11.0 / 0.5
    True
    """
    return ENCLOSURE_REL * (q + 1.0) / beta


#: Survival probabilities of Gamma(d) at which the noise norm is cut into tiers (the last one is ``TAIL``).
TIER_SURVIVAL = (0.5, 1e-2, 1e-4, 1e-6, 1e-9, 1e-12, TAIL)


@dataclass(frozen=True)
class ArgminReleasePlan:
    """The public constants of one floating-point-safe argmin release (see the module docstring).

    The gradient target depends on a public bound of ||f||, which depends on ||b||: draws are sorted into tiers by
    an upper bound of beta ||b*|| (the quantiles ``tier_quantiles`` of Gamma(d)); tier k's target holds whenever
    beta ||b*|| <= tier_quantiles[k], and delta0 averages the tiers' bounds over the noise law (the tier of a draw
    depends on the noise only).  Built by :func:`plan_argmin_release`.

    Parameters
    ----------
    grid : float
        g, the release grid's spacing (a power of two).
    tier_quantiles : tuple of float
        The upper ends of beta ||b|| per tier.
    gradient_targets : tuple of float
        Per tier, the bound ||grad F_b~(f~)|| the certificate must show.
    radius_targets : tuple of float
        Per tier, the bound ||b~ - b*|| the noise enclosure must show.
    etas : tuple of float
        Per tier, the resulting bound on ||f~ - f(b*, D)||.
    delta0 : float
        The probability that the release differs from the eps-DP rounded exact mechanism.
    beta : float
        The noise density's rate.

    Examples
    --------
    >>> from dpkernels.argmin_release import plan_argmin_release
    >>> from dpkernels.losses import make_loss
    >>> plan = plan_argmin_release(1000, 5, 1.0, make_loss("logistic"), lam=0.01, beta=0.5)
    >>> plan.grid  # 2^-8
    0.00390625
    >>> plan.delta(1.0) < 1e-7
    True
    """

    grid: float  #: g
    tier_quantiles: tuple[float, ...]  #: upper ends of beta ||b|| per tier
    gradient_targets: tuple[float, ...]  #: the certificate must show ||grad F_b~(f~)|| <= this, per tier
    radius_targets: tuple[float, ...]  #: the enclosure must show ||b~ - b*|| <= this, per tier
    etas: tuple[float, ...]  #: ||f~ - f(b*, D)|| <= eta, per tier
    delta0: float  #: probability that the release differs from the eps-DP rounded exact mechanism
    beta: float

    def tier(self, b_norm_upper: Array) -> NDArray[np.intp]:
        """The tier of draws whose exact norm ||b*|| is at most ``b_norm_upper``."""
        t = np.searchsorted(np.asarray(self.tier_quantiles), np.asarray(b_norm_upper) * self.beta * (1.0 + 2.0**-40))
        if np.any(t >= len(self.tier_quantiles)):
            raise RuntimeError("a noise draw beyond the 1 - 2^-60 quantile of its norm (data-independent): refit")
        return t

    def gradient_target(self, b_norm_upper: Array) -> Array:
        """The public gradient target of draws whose ||b*|| is at most ``b_norm_upper`` (their tier's)."""
        return np.asarray(self.gradient_targets)[self.tier(b_norm_upper)]

    def radius_target(self, b_norm_upper: Array) -> Array:
        """The public bound on the enclosure radius of draws whose ||b*|| is at most ``b_norm_upper``."""
        return np.asarray(self.radius_targets)[self.tier(b_norm_upper)]

    def delta(self, epsilon: float) -> float:
        """The delta of the (epsilon, delta) guarantee: (1 + e^epsilon) delta0."""
        return float(min(1.0, (1.0 + math.exp(min(float(epsilon), 700.0))) * self.delta0))


def plan_argmin_release(n: float, d: int, data_norm: float, loss: MarginLoss, lam: float, beta: float
                        ) -> ArgminReleasePlan:
    """The public constants of a floating-point-safe release of argmin J(f, D) + b'f / n + (Delta/2)||f||^2.

    Per tier, the gradient target is ``SAFETY`` times the worst case of
    :func:`dpkernels.solvers.certify.gradient_with_bound` over every data set of this shape: R (gamma_{ceil(log2 n)
    + 2} + the loss's rounding + c gamma_{ceil(log2 d) + 2} R ||f||) + 4u (lam ||f|| + ||b|| / n + R), with
    ||f|| <= (B + sqrt(B^2 + 2 lam l(0))) / lam, B = ||b|| / n at the tier's upper end (from F(f) <= F(0)).  Every
    input is public, so the plan leaks nothing.

    Parameters
    ----------
    n : float
        The number of examples.
    d : int
        The number of coordinates (intercept column included).
    data_norm : float
        R, the bound on the rows' norms (of the design, intercept column included).
    loss : MarginLoss
        The smooth loss (:func:`dpkernels.losses.make_loss`).
    lam : float
        The total regulariser Lambda + Delta.
    beta : float
        The noise density's rate: density proportional to exp(-beta ||b||).

    Returns
    -------
    ArgminReleasePlan
        The grid, the per-tier targets and delta0; ``plan.delta(epsilon)`` is the guarantee's delta.

    Examples
    --------
    >>> from dpkernels.argmin_release import plan_argmin_release
    >>> from dpkernels.losses import make_loss
    >>> plan = plan_argmin_release(1000, 5, 1.0, make_loss("logistic"), lam=0.01, beta=0.5)
    >>> plan.delta0 < 1e-8, plan.delta(1.0) < 1e-7
    (True, True)
    """
    from scipy import stats

    n = float(check_positive(n, "n"))
    d = int(d)
    R = check_positive(data_norm, "data_norm")
    lam = check_positive(lam, "lam")
    beta = check_positive(beta, "beta")
    l0 = float(np.asarray(loss.value(np.zeros(1)))[0])
    c = loss.curvature
    h_n = math.ceil(math.log2(max(n, 2.0))) + 2
    h_d = (math.ceil(math.log2(d)) if d > 1 else 0) + 2
    rounding = {"logistic": EXP_REL + 4.0 * U}.get(loss.name, 2.0**-47 + 4.0 * c * U * (2.0 + 3.0 * getattr(loss, "h", 1.0)))
    scale = math.sqrt(d + 1.0) / (beta * n * lam)
    grid = math.ldexp(1.0, math.floor(math.log2(GRID_FRACTION * scale)))
    quantiles = tuple(float(stats.gamma.isf(p, d)) for p in TIER_SURVIVAL)
    targets, radii, etas, bounds = [], [], [], []
    for q in quantiles:
        radii.append(radius_target_for(q, beta))
        B = q / beta / n
        w_bound = (B + math.sqrt(B * B + 2.0 * lam * l0)) / lam
        worst = R * (gamma(h_n) + rounding + c * gamma(h_d) * R * w_bound) + 4.0 * U * (lam * w_bound + B + R)
        targets.append(SAFETY * worst)
        etas.append(SAFETY * worst / lam + radii[-1] / (n * lam))
        bounds.append(math.sqrt(d) * etas[-1] / grid)
    # E[bound of the draw's tier] <= bound_0 + sum_k P[tier >= k] (bound_k - bound_{k-1}); a draw reaches tier k only
    # if beta ||b*|| > q_{k-1} - 2 beta radius_target (its upper bound exceeded q_{k-1})
    delta0 = bounds[0]
    for k in range(1, len(quantiles)):
        p_k = float(stats.gamma.sf(quantiles[k - 1] - 2.0 * beta * radii[k - 1], d))
        delta0 += p_k * (bounds[k] - bounds[k - 1])
    delta0 += d * 2.0**-OFFSET_BITS + TAIL
    return ArgminReleasePlan(grid, quantiles, tuple(targets), tuple(radii), tuple(etas), min(1.0, delta0), beta)


def _exact_floor_half(a: Array, b: Array) -> NDArray[np.int64]:
    """floor(a - b + 1/2) for float arrays a, b, exactly (float fast path, exact rationals where it is close)."""
    s = a - b
    k = np.floor(s + 0.5)
    frac = (s + 0.5) - k
    close = (frac < 2.0**-20) | (frac > 1.0 - 2.0**-20) | ~np.isfinite(k)
    out = k.astype(np.int64)
    for i in zip(*np.nonzero(close)):
        x = Fraction(float(a[i])) - Fraction(float(b[i])) + Fraction(1, 2)
        out[i] = math.floor(x)
    return out


def shifted_grid_round(F: Array, grid: float, random_state: object = None) -> Array:
    """Round every entry of ``F`` to the grid g Z + o with a fresh uniform offset o per entry, exactly.

    o is a uniform multiple of g 2^-52 in [0, g); k = floor((F - o) / g + 1/2) is computed exactly and the result is
    o + g k (float64): a subtractive dither, within g / 2 of ``F``.

    Parameters
    ----------
    F : array-like
        The values to round.
    grid : float
        g, a power of two.
    random_state : None, int, SeedSequence or numpy.random.Generator, default=None
        The source of the offsets.

    Returns
    -------
    ndarray
        The rounded values, of the shape of ``F``.

    Raises
    ------
    ValueError
        If ``grid`` is not a power of two or a value lies more than 2^50 grid steps from zero.

    Examples
    --------
    >>> import numpy as np
    >>> from dpkernels.argmin_release import shifted_grid_round
    >>> F = np.array([0.1, -0.37])
    >>> out = shifted_grid_round(F, 2.0**-10, random_state=0)
    >>> bool(np.all(np.abs(out - F) <= 2.0**-11))
    True
    """
    F = np.asarray(F, dtype=np.float64)
    g = check_positive(grid, "grid")
    if math.frexp(g)[0] != 0.5:
        raise ValueError(f"the grid must be a power of two, got {g!r}")
    rng = check_random_state(random_state)
    k_off = rng.integers(0, 2**OFFSET_BITS, size=F.shape, dtype=np.int64)
    off_units = k_off.astype(np.float64) * 2.0**-OFFSET_BITS  # exact: an integer below 2^52 times a power of two
    a = F / g  # exact: division by a power of two (no overflow or underflow for released magnitudes)
    if not np.all(np.isfinite(a)) or np.any(np.abs(a) >= 2.0**50):
        raise ValueError("a released value is too far from zero for its grid (more than 2^50 grid steps)")
    k = _exact_floor_half(a, off_units)
    return (k.astype(np.float64) + off_units) * g
