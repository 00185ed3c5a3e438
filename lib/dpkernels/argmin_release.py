"""Floating-point-safe release of a perturbed minimiser (objective perturbation): a certified solve, smoothed.

The problem.  Objective perturbation releases f(b, D) = argmin_f F_b(f) = J(f, D) + b'f / n + (Delta/2)||f||^2 for
noise b with density ~ exp(-beta ||b||).  Its privacy proof (Chaudhuri et al. 2011, Theorem 9) is about exact reals.
A float64 solve is a deterministic function of (b, D) onto a countable set of doubles: an adversary who knows D and
D' inverts the first-order condition b = -n grad(J + Delta/2 ||.||^2)(f) with D's rows and re-solves; D's releases
are reproduced bit for bit and D''s never (issue 18: epsilon lower bounds of 3-4 at a claimed 1).

The construction.  Public constants: n, d, R (the rows' norm bound), the loss (``|l'|`` <= 1, ``|l''|`` <= c), lam = Lambda +
Delta, Theorem 9's noise rate beta (so that its level is eps = 2 R beta + J, J the Jacobian term, Corollaries 11-13),
and this module's ``FP_SHARE``, ``SMOOTHING_FRACTION`` and ``TAIL``.  :func:`plan_argmin_release` fixes, from these
only: eps_fp, beta_r = beta - eps_fp / (2R), s = ``SMOOTHING_FRACTION`` / (beta n lam), eta = eps_fp s / 2, a noise
quantile q (beta_r ||b|| > q has probability ``TAIL``), an enclosure radius rho, a gradient target T = lam eta - rho / n
and a grid g (a power of two).

1. Noise.  b* is an exact real draw of the density ~ exp(-beta_r ||b||) (the rate beta_r < beta keeps eps_fp of
   Theorem 9's budget for step 4); :func:`dpkernels.lattice.gamma_norm_enclosure` gives a float64 vector b~ with
   ||b~ - b*|| <= rho.  If the enclosure's upper bound of beta_r ||b*|| exceeds q, or the enclosure is wider than
   rho, the fit raises: an event of the noise alone.
2. Certified solve.  The float64 point f~ (a solve of F_b~ started anywhere) is certified in floating point
   (:mod:`dpkernels.solvers.certify`): the exact gradient at f~ has ||grad F_b~(f~)|| <= T, so by lam-strong convexity
   ||f~ - f(b~, D)|| <= T / lam, and the minimiser moves by at most ||b~ - b*|| / (n lam) with the noise.  Hence
   ||f~ - f(b*, D)|| <= T / lam + rho / (n lam) = eta, on every data set.  A solve that cannot be certified to T
   raises (T is at least ``SAFETY`` times the certificate's worst-case rounding error at the public bound on ||f||,
   so a certifiable point always exists).
3. Smoothing.  V has density q_s(v) ~ exp(-||v|| / s) (independent of everything else; ||V|| ~ Gamma(d, s)); the
   release is Y = g round((f~ + V) / g), computed exactly from the exact real f~ + V by
   :func:`dpkernels.lattice.gamma_norm_lattice` (a post-processing of f~ + V).

Why it is private.  Fix D and write f* = f(b*, D), the exact mechanism (Theorem 9 at the rate beta_r: eps_0-DP with
eps_0 = 2R beta_r + J = eps - eps_fp).  Given the noise bits, f~ + V has density q_s(z - f~), and by the triangle
inequality q_s(z - f~) <= e^{||f~ - f*|| / s} q_s(z - f*) <= e^{eta / s} q_s(z - f*), and q_s(z - f*) <=
e^{eta / s} q_s(z - f~).  Let Omega be the event of step 1 that the fit does not raise (the noise's alone, so of equal
probability on every data set) and, for a set S of releases, phi(f) = P[g round((f + V) / g) in S], a measurable
function with values in [0, 1].  Then

    P[Y in S | D] = E[1_Omega phi_~(D)] <= e^{eta/s} E[phi(f*_D)] <= e^{eta/s + eps_0} E[phi(f*_D')]
                  <= e^{2 eta/s + eps_0} P[Y in S | D'] + e^{eta/s + eps_0} P(not Omega),

where phi_~(D) is the same probability about f~; the middle step is the eps_0-DP of the exact mechanism applied to
the function phi in [0, 1] (Theorem 9 bounds the ratio of the densities of f*_D and f*_D', Corollary 13 the
probability of every set for the Huber loss; either gives E phi(f*_D) <= e^{eps_0} E phi(f*_D') by the layer-cake
formula).  The plan makes 2 eta / s <= eps_fp, so the release is (eps, delta)-DP with eps = Theorem 9's level at beta
(the requested one) and delta = e^eps P(not Omega) <= e^eps ``TAIL``-level: about 1e-26 at eps = 10.  The refusal
itself has the probability P(not Omega) on every data set.  A fit that raises and is re-run draws again: the release
is then drawn from the law conditioned on Omega, whose delta is P(not Omega) / P(Omega) times the above (included).

The epsilon accounting, in words: a share ``FP_SHARE`` of Theorem 9's noise budget eps' = 2R beta pays for the
floating-point error; the certificate must be precise enough that the error moves the smoothed release's density by
at most that factor.  With s = ``SMOOTHING_FRACTION`` / (beta n lam) that asks ||grad F|| <= T ~ FP_SHARE x
SMOOTHING_FRACTION x R / n, about 1.5e-5 R / n by default (3.1e-11 at n = 494,021, d = 100: 5 to 50 times the float64
certificate's worst-case rounding at the public bound on ||f||, by loss and regulariser); where the certificate's
rounding needs more (it grows like (2048 + log2 n) u R: beyond about 10^7 rows), the plan takes a larger share (up to
half; beyond, the release cannot be served and the plan raises).  The exact rounding of step 3 is taken as exact, as
for every lattice release of the library (:mod:`dpkernels.lattice` refines an undecided cell to 512 random bits per
uniform and raises only beyond).

What it costs.  Utility: the noise is drawn at beta_r = beta (1 - ``FP_SHARE``) (0.4% more noise by default) and the
smoothing adds V, ||V|| about d s = ``SMOOTHING_FRACTION`` d / (beta n lam): 1/256 of the noise's norm in a flat
direction, the size of the uniform dither the previous construction rounded to.  Privacy: delta ~ e^eps 2^-100, no
epsilon beyond the requested one.  Time: the solve to T, certified at no extra cost (:func:`certified_solve`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache

import numpy as np
from numpy.typing import NDArray

from dpkernels._validation import check_epsilon, check_positive
from dpkernels.losses import MarginLoss

__all__ = ["FP_SHARE", "SMOOTHING_FRACTION", "TAIL", "SAFETY", "ENCLOSURE_REL", "MAX_FP_SHARE", "ArgminReleasePlan",
           "plan_argmin_release", "objective_perturbation_plan", "radius_target_for", "LargeDeltaWarning"]

Array = NDArray[np.float64]
#: The share of Theorem 9's noise budget eps' = 2R beta spent on floating point (at least; more where the
#: certificate's rounding needs it).
FP_SHARE = 2.0**-8
#: The smoothing noise's scale s in units of 1 / (beta n lam), the noise's per-unit-norm scale in a flat direction.
SMOOTHING_FRACTION = 2.0**-8
#: Survival probability of Gamma(d) at the noise quantile beyond which a fit raises (data-independently).
TAIL = 2.0**-100
#: Margin of the public gradient target over the certificate's worst-case rounding error.
SAFETY = 2.0
#: The largest share of eps' a plan may spend on floating point before it refuses the setting.
MAX_FP_SHARE = 0.5
#: The noise enclosure's radius must satisfy ||b~ - b*|| <= ENCLOSURE_REL (beta ||b||_max + 1) / beta, checked at
#: run time (its own radius is about 2^-41 ||b||; ``tests/test_argmin_release.py`` measures it).
ENCLOSURE_REL = 2.0**-39
#: Bits of headroom of the release grid: ``|f~|`` / g stays below 2^RANGE_BITS (the exact rounding needs < 2^50).
_RANGE_BITS = 48


class LargeDeltaWarning(RuntimeWarning):
    """A release states a delta above 1/n (computed from public constants only)."""


def radius_target_for(q: float, beta: float) -> float:
    """The public bound on the enclosure radius ||b~ - b*|| for draws with beta ||b*|| <= q.

    Parameters
    ----------
    q : float
        The upper end of beta ||b*|| (the plan's noise quantile).
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


@dataclass(frozen=True)
class ArgminReleasePlan:
    """The public constants of one floating-point-safe argmin release (see the module docstring).

    Built by :func:`plan_argmin_release` from n, d, R, the loss, lam and Theorem 9's beta only.

    Parameters
    ----------
    beta : float
        Theorem 9's noise rate (its privacy level is stated unchanged).
    beta_release : float
        beta_r < beta, the rate of the exact noise the release draws.
    epsilon_fp : float
        2R (beta - beta_r): the part of Theorem 9's epsilon that pays for floating point.
    smoothing_scale : float
        s: the smoothing noise has density ~ exp(-||v|| / s).
    eta : float
        The certified bound on ||f~ - f(b*, D)||; 2 eta / s <= ``epsilon_fp``.
    gradient_target : float
        T: the certificate must show ||grad F_b~(f~)|| <= T.
    radius_target : float
        rho: the noise enclosure must show ||b~ - b*|| <= rho.
    noise_quantile : float
        q: draws with beta_r ||b*|| possibly above q make the fit raise.
    solution_bound : float
        ||f(b, D)|| <= this whenever beta_r ||b|| <= q, on every data set.
    grid : float
        g, the spacing of the grid the smoothed minimiser is exactly rounded to (a power of two).
    tail : float
        An upper bound of the probability that a fit raises (the noise's alone).

    Examples
    --------
    >>> from dpkernels.argmin_release import plan_argmin_release
    >>> from dpkernels.losses import make_loss
    >>> plan = plan_argmin_release(1000, 5, 1.0, make_loss("logistic"), lam=0.01, beta=0.5)
    >>> plan.beta_release == 0.5 * (1 - 2**-8), 2 * plan.eta / plan.smoothing_scale <= plan.epsilon_fp
    (True, True)
    >>> plan.delta(10.0) < 1e-20
    True
    """

    beta: float
    beta_release: float
    epsilon_fp: float
    smoothing_scale: float
    eta: float
    gradient_target: float
    radius_target: float
    noise_quantile: float
    solution_bound: float
    grid: float
    tail: float

    def delta(self, epsilon: float) -> float:
        """The delta of the (epsilon, delta) guarantee at Theorem 9's epsilon: e^epsilon P(refusal) / P(no refusal)."""
        return float(min(1.0, math.exp(min(float(epsilon), 700.0)) * self.tail / (1.0 - self.tail)))

    def check_noise(self, b_norm_upper: Array, radius: Array) -> None:
        """Raise (data-independently) unless every draw's beta_r ||b*|| is at most q and its enclosure within rho."""
        if np.any(np.asarray(b_norm_upper) * self.beta_release > self.noise_quantile):
            raise RuntimeError("a noise draw beyond the public quantile of its norm (data-independent, probability "
                               "below 2^-100): refit")
        if np.any(np.asarray(radius) > self.radius_target):
            raise RuntimeError("the noise enclosure is wider than its public bound (data-independent): refit")


def _worst_error(n: float, d: int, data_norm: float, loss: MarginLoss, lam: float, w_norm: float, lin_norm: float) -> float:
    """The certificate's rounding error bound at every point of norm <= w_norm of every data set of this shape."""
    from dpkernels.solvers.certify import gradient_error_bound

    return float(gradient_error_bound(int(math.ceil(n)), d, data_norm, loss, lam, w_norm, data_norm * (1.0 + 2.0**-20),
                                      lin_norm))


@lru_cache(maxsize=512)
def plan_argmin_release(n: float, d: int, data_norm: float, loss: MarginLoss, lam: float, beta: float
                        ) -> ArgminReleasePlan:
    """The public constants of a floating-point-safe release of argmin J(f, D) + b'f / n + (lam - Lambda)/2 ||f||^2.

    eps_fp starts at ``FP_SHARE`` x 2R beta; s = ``SMOOTHING_FRACTION`` / (beta n lam), eta = eps_fp s / 2, q the
    1 - ``TAIL`` quantile of Gamma(d) (the law of beta_r ||b||), rho = :func:`radius_target_for` (q, beta_r), the
    solution bound ||f|| <= (B + sqrt(B^2 + 2 lam l(0))) / lam with B = q / (beta_r n) (from F(f) <= F(0)), and
    T = lam eta - rho / n.  If T is below ``SAFETY`` times the certificate's worst-case rounding error
    (:func:`dpkernels.solvers.certify.gradient_error_bound` at ||f|| <= the solution bound + eta), eps_fp grows until it
    is not (refused beyond ``MAX_FP_SHARE`` of 2R beta).  Every input is public, so the plan leaks nothing.

    Parameters
    ----------
    n : float
        The number of examples.
    d : int
        The number of coordinates (intercept column included).
    data_norm : float
        R, the bound on the rows' norms (of the design, intercept column included), as in Theorem 9's beta = eps'/(2R).
    loss : MarginLoss
        The smooth loss (:func:`dpkernels.losses.make_loss`).
    lam : float
        The total regulariser Lambda + Delta.
    beta : float
        Theorem 9's noise rate: density proportional to exp(-beta ||b||).

    Returns
    -------
    ArgminReleasePlan
        ``plan.delta(epsilon)`` is the guarantee's delta at Theorem 9's epsilon.

    Raises
    ------
    ValueError
        If the certificate's rounding would need more than ``MAX_FP_SHARE`` of the noise budget (far beyond any
        size the workbook runs: it grows like n u).

    Examples
    --------
    >>> from dpkernels.argmin_release import plan_argmin_release
    >>> from dpkernels.losses import make_loss
    >>> plan = plan_argmin_release(494_021, 100, 1.0, make_loss("logistic"), lam=1e-4, beta=0.5)
    >>> 1e-11 < plan.gradient_target < 1e-10, plan.delta(1.0) < 1e-29
    (True, True)
    """
    from scipy import stats

    n = float(check_positive(n, "n"))
    d = int(d)
    R = check_positive(data_norm, "data_norm")
    lam = check_positive(lam, "lam")
    beta = check_positive(beta, "beta")
    l0 = float(np.asarray(loss.value(np.zeros(1)))[0])
    q = float(stats.gamma.isf(TAIL, d))
    s = SMOOTHING_FRACTION / (beta * n * lam)
    eps_fp = FP_SHARE * 2.0 * R * beta
    for _ in range(60):
        beta_r = beta - eps_fp / (2.0 * R)
        if not beta_r >= (1.0 - MAX_FP_SHARE) * beta:
            raise ValueError(
                f"a floating-point-safe release at n = {n:.0f}, d = {d} and lam = {lam:.3g} would spend more than "
                f"{MAX_FP_SHARE:g} of the noise budget on the float64 certificate's rounding")
        rho = radius_target_for(q, beta_r)
        B = q / (beta_r * n)
        w_bound = (B + math.sqrt(B * B + 2.0 * lam * l0)) / lam
        eta = eps_fp * s / 2.0
        target = lam * eta - rho / n
        worst = _worst_error(n, d, R, loss, lam, w_bound + eta, B * (1.0 + 2.0**-40))
        if target >= SAFETY * worst:
            break
        eps_fp = 2.0 * (SAFETY * worst + rho / n) / lam / s * (1.0 + 2.0**-10)
    else:  # pragma: no cover - the iteration is monotone and settles in a few steps
        raise RuntimeError("the floating-point plan did not settle")
    tail = 2.0 * float(stats.gamma.sf(q - 2.0 * beta_r * rho, d))
    grid = max(math.ldexp(1.0, math.floor(math.log2(s)) - 16),
               math.ldexp(1.0, math.ceil(math.log2((w_bound + eta) * 2.0**-_RANGE_BITS))))
    return ArgminReleasePlan(beta, beta_r, eps_fp, s, eta, target, rho, q, w_bound, grid, tail)


def objective_perturbation_plan(epsilon: float, n: int, d: int, loss: MarginLoss, Lambda: float,
                                data_norm: float = 1.0) -> tuple[object, ArgminReleasePlan]:
    """Theorem 9's parameters and the release plan of :class:`~dpkernels.mechanisms.ObjectivePerturbation` at these
    public constants: what a fit with ``noise="lattice"`` states (``guarantee_.epsilon`` = epsilon,
    ``guarantee_.delta`` = ``plan.delta(epsilon)``), without the data.

    Parameters
    ----------
    epsilon : float
        eps_p.
    n : int
        Training rows.
    d : int
        Coordinates of the design (the intercept column included when one is fitted).
    loss : MarginLoss
        The smooth loss.
    Lambda : float
        The regulariser (``alpha_``).
    data_norm : float, default=1.0
        R of the design (sqrt(R^2 + s^2) with an intercept column s).

    Returns
    -------
    params : ObjectivePerturbationParameters
        Theorem 9's eps', Delta, beta and branch at epsilon.
    plan : ArgminReleasePlan
        The release's constants; ``plan.delta(epsilon)`` is the stated delta.

    Examples
    --------
    >>> from dpkernels.argmin_release import objective_perturbation_plan
    >>> from dpkernels.losses import make_loss
    >>> params, plan = objective_perturbation_plan(10.0, 494_021, 100, make_loss("huber"), 1e-4)
    >>> plan.delta(10.0) <= 1 / (10 * 494_021)
    True
    """
    from dpkernels.bounds.chaudhuri import theorem_9_parameters

    epsilon = check_epsilon(epsilon)
    params = theorem_9_parameters(epsilon, n, Lambda, loss.curvature, data_norm)
    return params, plan_argmin_release(n, d, data_norm, loss, Lambda + params.Delta, params.beta)
