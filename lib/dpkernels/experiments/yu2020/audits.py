"""Privacy audits of the four gradient estimators on adversarial one-dimensional pairs, each next to a negative control
(too little noise) that the audit must catch, and, where the pair attains the calibrated sensitivity, the pair's
exact epsilon.

Pair (DP-GD, DP-SGD and output-SGD): D holds (x*, +1) and m - 1 rows x = 0 (label +1; their loss gradients vanish), D' flips the first
label.  Releases are drawn with the estimators' own ``sample_releases`` (keep_nonprivate fits: the same code path as
``fit``), the statistic is the released weight (large values favour D in every pair: the audit's rejection regions
are {score > t} for D and {score <= t} for D'), and
:func:`~dpkernels.experiments.bassily2022.audits.audit_lower_bound_delta` turns the counts into a 95% lower bound on
epsilon for an (epsilon, delta) claim.

* DP-GD: x* = 100, C = 1: the clipped gradient of the first row is exactly -C y while ``|w x*|`` stays below 4.6 (``|l'|`` >= 1/100),
  so the steps differ by exactly 2C/m and, with a small step, the last iterate is Gaussian: the pair is tight.
* DP-SGD, one step: the batch sum is 0 or -C (D) against 0 or +C (D'): exactly dp-accounting's REPLACE_ONE pair.
* Output-perturbed SGD, Huber loss (l' = -1 below 1 - h): the non-private outputs differ by exactly 2 k eta R / b.
* AMP, in the plane (issue 29, D12): a flipped label moves b's shift by ``|l'(z) + l'(-z)|`` R = R only, half the 2R the
  calibration charges; a row whose two versions are mirror images, (-u, s) and (-u, -s), both misclassified by a
  minimiser that m - 1 rows (1, 0) pin along the first axis, moves it by 2 s ``|l'(z)|``, close to 2R.  The statistic is
  the released weight's second coordinate; the pair's epsilon at the non-private minimiser's shift (the Gaussian
  mechanism at that shift, linearised: the shift varies little near the minimiser, and the Jacobian terms of the two
  versions are equal by symmetry) says how much of eps it can show.  The control scales both noises by 1/8.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from dpkernels.experiments.bassily2022.audits import audit_lower_bound_delta
from dpkernels.mechanisms.gradient import (
    DPSGD,
    ApproximateMinimaPerturbation,
    NoisyGradientDescent,
    OutputPerturbedSGD,
    dp_sgd_epsilon,
)
from dpkernels.accounting import gaussian_epsilon

__all__ = ["audit_pair", "amp_plane_pair", "audit_dp_gd", "audit_dp_sgd", "audit_output_sgd", "audit_amp", "run_audits"]

Array = NDArray[np.float64]


def audit_pair(m: int, x_star: float) -> tuple[Array, Array, Array]:
    """(X, y_D, y_D'): the first row x* (one feature), m - 1 zero rows, labels +1; D' flips the first label."""
    X = np.zeros((m, 1))
    X[0, 0] = x_star
    y = np.ones(m)
    y2 = y.copy()
    y2[0] = -1.0
    return X, y, y2


def _row(label: str, claimed: float, delta: float, a: Array, b: Array, alpha: float, seed: int, **extra: object
         ) -> dict[str, object]:
    res = audit_lower_bound_delta(a, b, delta, alpha=alpha, random_state=seed)
    return {"mechanism": label, "epsilon_claimed": claimed, "delta": delta, "epsilon_lb": res.epsilon_lb,
            "epsilon_hat": res.epsilon_hat, "n_releases": len(a), **extra}


def audit_dp_gd(n_releases: int, epsilon: float = 1.0, delta: float = 1e-5, n_iter: int = 3, m: int = 20,
                alpha: float = 0.05, random_state: int = 0) -> pd.DataFrame:
    """:class:`NoisyGradientDescent` on the pair (x* = 100): as calibrated, and the control with sigma / 2.  The step
    eta keeps 6 standard deviations of ``|w_t x*|`` below 4.6 (the linear regime); ``epsilon_pair_exact`` is the exact
    epsilon of the two Gaussians N(-+eta T 2/m, eta^2 T sigma^2) at delta."""
    X, y1, y2 = audit_pair(m, 100.0)
    probe = NoisyGradientDescent(epsilon=epsilon, delta=delta, n_iter=n_iter, alpha=0.0).fit(X, y1)
    sigma, T = probe.noise_sigma_, n_iter
    eta = 4.6 / (100.0 * (6.0 * sigma * math.sqrt(T) + T * 2.0 / m))
    fits = [NoisyGradientDescent(epsilon=epsilon, delta=delta, n_iter=n_iter, alpha=0.0, learning_rate=eta,
                                 keep_nonprivate=True).fit(X, y) for y in (y1, y2)]
    rng = np.random.default_rng(random_state + 1)
    rows = []
    for label, sig in (("as calibrated", sigma), ("negative control: sigma / 2", sigma / 2)):
        a = fits[0].sample_releases(n_releases, rng, sigma=sig)[:, 0]
        b = fits[1].sample_releases(n_releases, rng, sigma=sig)[:, 0]
        exact = gaussian_epsilon(eta * sig * math.sqrt(T), delta, eta * T * 2.0 / m)
        rows.append(_row(label, epsilon, delta, a, b, alpha, random_state, epsilon_pair_exact=exact, sigma=sig,
                         linear_regime=bool(100.0 * max(np.abs(a).max(), np.abs(b).max()) < 4.6)))
    return pd.DataFrame(rows)


def audit_dp_sgd(n_releases: int, epsilon: float = 1.0, delta: float = 1e-5, sampling_rate: float = 0.5, m: int = 20,
                 alpha: float = 0.05, random_state: int = 0) -> pd.DataFrame:
    """:class:`DPSGD`, one step, on the pair (x* = 100): the release is -eta (S + N(0, s^2)) / (q m) with S in {0, -1}
    under D and {0, +1} under D' (each with probability q of the first row): dp-accounting's REPLACE_ONE pair, whose
    epsilon at delta is ``epsilon_pair_exact``.  Control: half the noise."""
    X, y1, y2 = audit_pair(m, 100.0)
    fits = [DPSGD(epsilon=epsilon, delta=delta, n_iter=1, sampling_rate=sampling_rate, alpha=0.0, schedule="constant",
                  learning_rate=1.0, keep_nonprivate=True).fit(X, y) for y in (y1, y2)]
    sd, z, q = fits[0].noise_sigma_, fits[0].noise_multiplier_, fits[0].sampling_rate_
    rng = np.random.default_rng(random_state + 1)
    rows = []
    for label, s in (("as calibrated", sd), ("negative control: half the noise", sd / 2)):
        a = fits[0].sample_releases(n_releases, rng, noise_std=s)[:, 0]
        b = fits[1].sample_releases(n_releases, rng, noise_std=s)[:, 0]
        exact = dp_sgd_epsilon(z * s / sd, q, 1, delta)
        rows.append(_row(label, epsilon, delta, a, b, alpha, random_state, epsilon_pair_exact=exact, noise_std=s))
    return pd.DataFrame(rows)


def audit_output_sgd(n_releases: int, epsilon: float = 1.0, delta: float = 1e-5, m: int = 20, batch_size: int = 5,
                     n_passes: int = 2, alpha: float = 0.05, random_state: int = 0) -> pd.DataFrame:
    """:class:`OutputPerturbedSGD` (Huber, h = 0.5, R = 1) on the pair (x* = 1): every pass moves w by +eta / b (D) or
    -eta / b (D') while ``|w|`` < 1/2, so the outputs differ by exactly 2 k eta / b and the release is Gaussian: the pair is
    tight.  Control: sigma / 2."""
    X, y1, y2 = audit_pair(m, 1.0)
    eta = 0.4 * batch_size / n_passes  # k eta / b = 0.4 < 1/2: the linear regime
    fits = [OutputPerturbedSGD(epsilon=epsilon, delta=delta, loss="huber", learning_rate=min(eta, 1.0),
                               batch_size=batch_size, n_passes=n_passes, keep_nonprivate=True).fit(X, y)
            for y in (y1, y2)]
    sigma, sens = fits[0].noise_sigma_, fits[0].sensitivity_
    shift = 2.0 * n_passes * min(eta, 1.0) / batch_size
    rng = np.random.default_rng(random_state + 1)
    rows = []
    for label, s in (("as calibrated", sigma), ("negative control: sigma / 2", sigma / 2)):
        a = fits[0].sample_releases(n_releases, rng, sigma=s)[:, 0]
        b = fits[1].sample_releases(n_releases, rng, sigma=s)[:, 0]
        rows.append(_row(label, epsilon, delta, a, b, alpha, random_state, epsilon_pair_exact=gaussian_epsilon(s, delta, shift),
                         sigma=s, pair_sensitivity_ratio=shift / sens))
    return pd.DataFrame(rows)


def amp_plane_pair(m: int, u: float = 0.5) -> tuple[Array, Array, Array]:
    """(X_D, X_D', y): m - 1 rows (1, 0) and a first row (-u, s) in D, its mirror image (-u, -s) in D' (s = sqrt(1 -
    u^2), ||x|| = 1); every label +1."""
    s = math.sqrt(1.0 - u * u)
    X = np.zeros((m, 2))
    X[1:, 0] = 1.0
    X[0] = (-u, s)
    X2 = X.copy()
    X2[0] = (-u, -s)
    return X, X2, np.ones(m)


def audit_amp(n_releases: int, epsilon: float = 1.0, delta: float = 1e-5, m: int = 200, u: float = 0.5,
              alpha: float = 0.05, random_state: int = 0) -> pd.DataFrame:
    """:class:`ApproximateMinimaPerturbation` on the plane pair (:func:`amp_plane_pair`, R = 1): as calibrated, and the
    control with both noise scales divided by 8.  gamma = 1e-6 (public) keeps the output noise small, so that the audit
    sees the objective perturbation.  ``b_shift`` is the pair's shift of b at the minimiser of D's objective with its
    noise scaled by 1e-4, ``epsilon_pair_linear`` the Gaussian mechanism's epsilon at that shift and the calibrated
    sigma (module docstring); the pair's exact epsilon is not computed."""
    from dpkernels.accounting import gaussian_epsilon

    XD, XD2, y = amp_plane_pair(m, u)
    fits = [ApproximateMinimaPerturbation(epsilon=epsilon, delta=delta, gamma=1e-6, classes=[-1, 1],
                                          keep_nonprivate=True).fit(Z, y) for Z in (XD, XD2)]
    cal = fits[0].calibration_
    w0 = fits[0].sample_releases(1, np.random.default_rng([random_state, 7]), sigma_scale=1e-4)[0]
    lp = [-1.0 / (1.0 + math.exp(float(x @ w0))) for x in (XD[0], XD2[0])]  # l'(z) of the logistic loss
    shift = float(np.linalg.norm(lp[0] * XD[0] - lp[1] * XD2[0]))
    rng = np.random.default_rng(random_state + 1)
    rows = []
    for label, s in (("as calibrated", 1.0), ("negative control: both sigmas / 8", 0.125)):
        a = fits[0].sample_releases(n_releases, rng, sigma_scale=s)[:, 1]
        b = fits[1].sample_releases(n_releases, rng, sigma_scale=s)[:, 1]
        linear = gaussian_epsilon(cal.sigma_objective * s, delta, shift) if s == 1.0 else math.nan
        rows.append(_row(label, fits[0].guarantee_.epsilon, delta, a, b, alpha, random_state, epsilon_pair_exact=math.nan,
                         epsilon_pair_linear=linear, b_shift=shift, sigma_objective=cal.sigma_objective * s,
                         pair="plane"))
    return pd.DataFrame(rows)


def run_audits(n_releases: int, amp_releases: int | None = None, random_state: int = 0) -> pd.DataFrame:
    """Every audit, ``n_releases`` per data set (``amp_releases`` for AMP, whose draws each need a solve)."""
    parts = [("DP-GD", audit_dp_gd(n_releases, random_state=random_state)),
             ("DP-SGD", audit_dp_sgd(n_releases, random_state=random_state)),
             ("Out-SGD", audit_output_sgd(n_releases, random_state=random_state)),
             ("AMP", audit_amp(n_releases if amp_releases is None else amp_releases, random_state=random_state))]
    return pd.concat([df.assign(estimator=name) for name, df in parts], ignore_index=True)


def replace_pair_delta(noise_multiplier: float, sampling_rate: float, epsilon: float) -> float:
    """The exact delta(epsilon) of one Poisson-subsampled Gaussian step under replace-one, by numerical integration:
    sup over the two directions of integral (p - e^eps q)_+ for p = q N(-1, z^2) + (1 - q) N(0, z^2) and
    q' = q N(+1, z^2) + (1 - q) N(0, z^2) (the pair a replaced record with clipped gradient of norm 1 gives, in one
    dimension).  An accountant given the wrong relation shows as a delta below this."""
    from scipy import integrate, stats

    z, q = float(noise_multiplier), float(sampling_rate)
    n = stats.norm(scale=z)

    def mix(x: float, s: float) -> float:
        return q * n.pdf(x - s) + (1.0 - q) * n.pdf(x)

    lim = 40.0 * z + 2.0
    f = lambda x: max(0.0, mix(x, -1.0) - math.exp(epsilon) * mix(x, 1.0))  # noqa: E731
    val, _ = integrate.quad(f, -lim, lim, points=[-1.0, 0.0, 1.0], limit=400, epsabs=1e-14)
    return float(val)  # the pair is symmetric (x -> -x swaps it): one direction suffices
