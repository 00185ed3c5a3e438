"""Privacy audits of Bassily, Mohri and Suresh (2022)'s Algorithms 1 and 2 on adversarial pairs (k = 1), each next to
the pair's exact privacy loss and a negative control (too little noise) that the audit must catch; the (epsilon, delta)
lower-bound criterion :func:`audit_lower_bound_delta`."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from dpkernels.accounting import gaussian_epsilon
from dpkernels.audit import AuditResult, clopper_pearson, epsilon_lower_bound
from dpkernels.mechanisms.bassily import ExponentialMarginClassifier, PrivateMarginClassifier, gradient_sensitivity

Array = NDArray[np.float64]


def audit_lower_bound_delta(scores_d: Array, scores_dprime: Array, delta: float, alpha: float = 0.05,
                            random_state: object = 0) -> AuditResult:
    """:func:`dpkernels.audit.epsilon_lower_bound` for an (epsilon, delta) claim: P_D(S) <= e^eps P_D'(S) + delta gives
    eps >= log((p_lower - delta) / q_upper) on the evaluation half (the threshold is chosen on the other half as there)."""
    res = epsilon_lower_bound(scores_d, scores_dprime, alpha=alpha, random_state=random_state)
    n = res.n_eval
    k1, k2 = int(round(res.p_hat * n)), int(round(res.q_hat * n))
    p_lo, _ = clopper_pearson(k1, n, alpha)
    _, q_hi = clopper_pearson(k2, n, alpha)
    lb = math.log((p_lo - delta) / q_hi) if p_lo - delta > 0 else 0.0
    return AuditResult(max(0.0, lb), res.epsilon_hat, res.threshold, res.direction, res.p_hat, res.q_hat, n, alpha)




# ----------------------------------------------------------------------------------------------
# privacy audits
# ----------------------------------------------------------------------------------------------
def _adversarial_point(projection, d: int, r: float) -> Array:
    """The unit-norm direction (times r) that the JL map stretches most: r times the top right singular vector of
    Phi, so that ||Phi x|| is as large as possible (the projection onto B^k(2r) then binds)."""
    Phi = projection.adjoint(np.eye(int(projection.n_components)))  # (k, d) rows of Phi
    _, _, Vt = np.linalg.svd(np.atleast_2d(Phi), full_matrices=False)
    return r * Vt[0]


def audit_algorithm_2(n_releases: int, epsilon: float = 1.0, delta: float = 1e-5, n_iter: int = 1, m: int = 20,
                      d: int = 16, r: float = 1.0, rho: float = 0.5, Lambda: float = 1.0, alpha: float = 0.05,
                      random_state: int = 0) -> pd.DataFrame:
    """A statistical privacy audit of :class:`PrivateMarginClassifier` on an adversarial pair, with k = 1.

    Pair: D = {(x*, +1)} plus m - 1 rows x = 0 (label +1; their subgradients vanish), D' flips the first label.  x* is
    r times the top right singular vector of Phi (public: data-independent), so Phi x* is projected to norm exactly 2r
    and the averaged gradients differ by 2L/m, the calibrated sensitivity.  With a learning rate small enough that
    ``|w_t z*|`` stays far below rho (all T steps in the linear regime), the released w-tilde is Gaussian and the pair's
    exact privacy loss at delta is that of ``N(mean shift eta (T + 1) / 2 * ``|g_D - g_D'|``, (eta sigma)^2 (T + 1)(2T + 1)
    / (6T))`` (the average of the iterates).  Rows: the mechanism as calibrated and the negative control with sigma / 2
    (the same pair; must be detected above epsilon)."""
    probe = PrivateMarginClassifier(epsilon=epsilon, delta=delta, rho=rho, weight_bound=Lambda, data_norm=r, n_components=1,
                                    n_iter=n_iter, keep_nonprivate=True, random_state=random_state)
    probe.fit(np.vstack([np.eye(d)[:2], np.zeros((m - 2, d))]) * r, np.r_[1.0, -1.0, np.ones(m - 2)])
    x_star = _adversarial_point(probe.nonprivate_.projection, d, r)
    X = np.vstack([x_star, np.zeros((m - 1, d))])
    y1, y2 = np.ones(m), np.r_[-1.0, np.ones(m - 1)]
    sigma, T = probe.noise_sigma_, probe.n_iter_
    L = 2 * r / rho
    # a learning rate keeping 6 standard deviations of |w_T| 2r below rho (linear regime; see the docstring)
    eta = rho / (2 * r * 6 * (sigma * math.sqrt(T) + T * 2 * L / m))
    fits = [PrivateMarginClassifier(epsilon=epsilon, delta=delta, rho=rho, weight_bound=Lambda, data_norm=r, n_components=1,
                                    n_iter=n_iter, learning_rate=eta, keep_nonprivate=True, random_state=random_state).fit(X, y)
            for y in (y1, y2)]
    s1, s2 = fits[0].nonprivate_, fits[1].nonprivate_
    if not np.array_equal(s1.projection.components_, probe.nonprivate_.projection.components_):
        raise RuntimeError("the audited pair does not share the JL map")
    z_star = float(s1.Z[0, 0])
    g_diff = abs(2 * z_star / (rho * m))
    shift = eta * g_diff * (T + 1) / 2.0
    spread = math.sqrt((T + 1) * (2 * T + 1) / (6.0 * T))
    rows = []
    rng = np.random.default_rng(random_state + 1)
    for label, sig in (("as calibrated", sigma), ("negative control: sigma / 2", sigma / 2)):
        a = s1.sample_releases(n_releases, rng, sigma=sig)[:, 0] * math.copysign(1.0, z_star)
        b = s2.sample_releases(n_releases, rng, sigma=sig)[:, 0] * math.copysign(1.0, z_star)
        res = audit_lower_bound_delta(a, b, delta, alpha=alpha, random_state=random_state)
        max_abs = float(max(np.abs(a).max(), np.abs(b).max()) * 2 * r)
        rows.append({"mechanism": label, "n_iter": T, "sigma": sig, "epsilon_claimed": epsilon, "delta": delta,
                     "epsilon_accounted": fits[0].epsilon_accounted_ if sig == sigma else gaussian_epsilon(sig, delta, math.sqrt(T) * gradient_sensitivity(L, m)),
                     "epsilon_pair_exact": gaussian_epsilon(eta * sig * spread, delta, shift),
                     "epsilon_lb": res.epsilon_lb, "epsilon_hat": res.epsilon_hat, "n_releases": n_releases,
                     "pair_sensitivity_ratio": g_diff / gradient_sensitivity(L, m), "linear_regime": max_abs < rho,
                     "max_abs_margin": max_abs})
    return pd.DataFrame(rows)


def audit_algorithm_1(n_releases: int, epsilon: float = 1.0, m: int = 20, d: int = 16, r: float = 1.0,
                      rho: float = 0.5, Lambda: float = 1.0, n_support: int = 3, alpha: float = 0.05,
                      random_state: int = 0) -> pd.DataFrame:
    """A statistical privacy audit of :class:`ExponentialMarginClassifier` (k = 1) with the exact privacy loss of the pair.

    Pair: D = {(x*, +1)} plus ``n_support`` copies of (x*, +1) plus zero rows; D' flips the first label (x* as in
    :func:`audit_algorithm_2`).  The copies make the cover points with c <x*> < -rho' unlikely under D', where the
    flipped row lowers their count: the log-ratio approaches epsilon there.  The exact loss is the largest
    ``|log P_D(c) - log P_D'(c)|`` over the cover (enumeration); the audit draws releases with the mechanism's own exact
    sampler.  Negative control: the same pair sampled with 2 epsilon (half the Gumbel noise), claimed epsilon."""
    def mk() -> ExponentialMarginClassifier:
        return ExponentialMarginClassifier(epsilon=epsilon, rho=rho, weight_bound=Lambda, data_norm=r, n_components=1,
                                           keep_nonprivate=True, random_state=random_state)

    probe = mk().fit(np.vstack([np.eye(d)[:2], np.zeros((m - 2, d))]) * r, np.r_[1.0, -1.0, np.ones(m - 2)])
    proj = probe.nonprivate_.projection  # data-independent: the same Phi for every data set under this seed
    x_star = _adversarial_point(proj, d, r)
    X = np.vstack([np.repeat(x_star[None], 1 + n_support, axis=0), np.zeros((m - 1 - n_support, d))])
    y1 = np.ones(m)
    y2 = y1.copy()
    y2[0] = -1.0
    f1, f2 = mk().fit(X, y1), mk().fit(X, y2)
    c1, c2 = f1.nonprivate_, f2.nonprivate_
    z_star = float(proj.transform(x_star[None])[0, 0])
    rows = []
    rng = np.random.default_rng(random_state + 1)
    for label, eps_run in (("as calibrated", epsilon), ("negative control: 2 epsilon (half the noise)", 2 * epsilon)):
        s1 = type(c1)(c1.cover, c1.counts, eps_run, c1.projection)
        s2 = type(c2)(c2.cover, c2.counts, eps_run, c2.projection)
        exact = float(np.abs(s1.log_probabilities() - s2.log_probabilities()).max())
        a = s1.cover[s1.sample_indices(n_releases, rng), 0] * z_star
        b = s2.cover[s2.sample_indices(n_releases, rng), 0] * z_star
        res = epsilon_lower_bound(a, b, alpha=alpha, random_state=random_state)
        rows.append({"mechanism": label, "epsilon_claimed": epsilon, "epsilon_pair_exact": exact, "epsilon_lb": res.epsilon_lb,
                     "epsilon_hat": res.epsilon_hat, "n_releases": n_releases, "cover_size": len(c1.cover)})
    return pd.DataFrame(rows)


