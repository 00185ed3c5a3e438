"""Privacy audits of Park (2022)'s releases: Algorithm 1's centre (Theorem 4.3; a statistical audit with a negative
control, and Mironov's floating-point attack) and Phase II's equilibrium points (Section 5.2).

Each audit returns a (1 - alpha) Clopper-Pearson lower bound on epsilon (:func:`dpkernels.audit.epsilon_lower_bound`);
the verdict (:func:`dpkernels.verdicts.audit_verdict`) is ``violated`` when it exceeds the claimed epsilon and
``holds`` only when a negative control (the same audit of a release with too little noise, or a leaking variant)
shows the audit had the power to see a leak.
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass

import numpy as np
from joblib import Parallel, delayed
from numpy.typing import NDArray
from threadpoolctl import threadpool_limits

from dpkernels._validation import UnsafeNoiseWarning
from dpkernels.audit import (
    adversarial_neighbour_sensitivity,
    epsilon_lower_bound,
    laplace_llr_statistic,
    reachability_statistic,
)
from dpkernels.experiments.park2022.protocol import SETTINGS, park_dataset
from dpkernels.experiments.park2022.readings import split_scale
from dpkernels.mechanisms.park import PrivateSVDD, find_equilibrium_points
from dpkernels.random_features import rff_paired
from dpkernels.solvers import solve_svdd

Array = NDArray[np.float64]

__all__ = ["AuditPair", "audit_pair", "svdd_audit", "float_attack", "phase2_audit", "svdd_center"]


def svdd_center(X: Array, freqs: Array, box: float) -> Array:
    """The exact SVDD centre of X in the paired random features of ``freqs`` (the function the audits and the
    sensitivity search perturb)."""
    return solve_svdd(rff_paired(X, freqs), box).coef


# ----------------------------------------------------------------------------------------------
# Section 5.2: an audit of Phase II (the released equilibrium points)
# ----------------------------------------------------------------------------------------------
def _phase2_hits(X: Array, x_new: Array, epsilon: float, n_releases: int, variant: str, name: str, radius: float, n_starts: int,
                 seed: int, stream: int) -> Array:
    """For each of ``n_releases`` releases of Phase II on data set X: whether an EP lies within ``radius`` of x_new."""
    s = SETTINGS[name]
    rng = np.random.default_rng([seed, stream])
    with threadpool_limits(1):
        model = PrivateSVDD(epsilon=epsilon, box=s.proposed[0], sigma=math.sqrt(0.5 / s.proposed[1]), keep_nonprivate=True, random_state=seed).fit(X)
        centres = model.sample_centers(n_releases, rng)
        hits = np.zeros(n_releases)
        for r in range(n_releases):
            starts = X if variant == "paper" else rng.uniform(0.0, 1.0, size=(n_starts, X.shape[1]))
            pts = find_equilibrium_points(model, starts, s.lr, s.n_iter, center=centres[r]).points
            hits[r] = float(np.min(np.linalg.norm(pts - x_new, axis=1)) <= radius)
    return hits


def phase2_audit(epsilon: float, n_releases: int, variant: str = "paper", name: str = "three_moons", radius: float = 0.1,
                 n_starts: int = 500, seed: int = 0, n_jobs: int = 1) -> dict[str, object]:
    """Audit of the released equilibrium points on a neighbouring pair: D' replaces one training row by x', the
    point of the domain farthest from the training data; the event "an EP within ``radius`` of x'" is counted over
    ``n_releases`` releases from each data set (a fresh noisy centre at ``epsilon`` per release, from each data
    set's own SVDD solution; Table 7.1's lr and iterations).  Returns the Clopper-Pearson lower bound on epsilon.
    ``variant="paper"`` starts the dynamics from the training points (the thesis); ``"corrected"`` from
    ``n_starts`` uniform points (drawn afresh per release, independent of the data)."""
    Xtr, _, _, _ = split_scale(park_dataset(name), 0)
    g = np.linspace(0.0, 1.0, 41)
    if Xtr.shape[1] <= 3:
        grid = np.array(np.meshgrid(*[g] * Xtr.shape[1])).reshape(Xtr.shape[1], -1).T
    else:
        grid = np.random.default_rng(seed).uniform(size=(4000, Xtr.shape[1]))
    dist = np.min(np.linalg.norm(grid[:, None, :] - Xtr[None, :, :], axis=2), axis=1)
    x_new = grid[int(np.argmax(dist))]
    X2 = Xtr.copy()
    X2[0] = x_new
    hits_d, hits_dp = Parallel(n_jobs=n_jobs)(
        delayed(_phase2_hits)(X, x_new, epsilon, n_releases, variant, name, radius, n_starts, seed, k) for k, X in enumerate((Xtr, X2)))
    res = epsilon_lower_bound(hits_dp, hits_d, random_state=seed)  # large values favour D'
    return {"variant": variant, "epsilon": epsilon, "epsilon_lb": res.epsilon_lb, "p_event_D": float(hits_d.mean()),
            "p_event_Dprime": float(hits_dp.mean()), "n_releases": n_releases, "x_replacement": x_new.tolist(),
            "min_distance_to_data": float(dist.max()), "dataset": name}


@dataclass
class AuditPair:
    """A neighbouring pair for Algorithm 1's audits: the fitted model on D (evaluation mode) and both centres."""

    model: PrivateSVDD
    a_d: Array
    a_dprime: Array


def audit_pair(n: int = 40, box: float = 0.05, gamma: float = 5.0, n_components: int = 2, n_adv: int = 24,
               maxiter: int = 100, random_state: int = 0) -> AuditPair:
    """An adversarially searched neighbour (largest L1 change of the centre).  Few features (F = 2 n_components)
    make the Laplace audit powerful: its likelihood-ratio statistic reaches the pair's loss with probability
    about 2^-F."""
    rng = np.random.default_rng(random_state)
    X = rng.uniform(0, 1, size=(n, 2))
    model = PrivateSVDD(epsilon=1.0, box=box, sigma=math.sqrt(0.5 / gamma), n_components=n_components, clip_center=False, keep_nonprivate=True,
                        random_state=rng).fit(X)
    freqs = model.frequencies_
    fit = lambda A, _y: svdd_center(A, freqs, box)  # noqa: E731
    a_d = model.nonprivate_.coef
    adv = adversarial_neighbour_sensitivity(fit, X, np.zeros(n), lambda r: r.uniform(-0.5, 1.5, size=2), lambda x: np.clip(x, -3.0, 4.0),
                                            n_random=n_adv, n_refine=2, maxiter=maxiter, norm=1, labels=(0.0,), random_state=rng, w_d=a_d)
    X2 = X.copy()
    X2[adv.index] = adv.x_replacement
    return AuditPair(model, a_d, fit(X2, None))


def _releases(pair: AuditPair, epsilon: float, n_releases: int, noise_factor: float, noise: str,
              rng: np.random.Generator) -> tuple[Array, Array, float]:
    """Releases of Algorithm 1 (unclipped: clipping is post-processing) on D and D' at ``epsilon``, with the noise
    scale multiplied by ``noise_factor`` (0.5: the negative control); returns them and lambda."""
    lam = pair.model.noise_scale(epsilon) * noise_factor
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UnsafeNoiseWarning)
        from dpkernels.mechanisms.base import noise_release

        A = noise_release(np.tile(pair.a_d, (n_releases, 1)), "laplace", lam, noise=noise, random_state=rng)
        B = noise_release(np.tile(pair.a_dprime, (n_releases, 1)), "laplace", lam, noise=noise, random_state=rng)
    return A, B, lam


def svdd_audit(pair: AuditPair, epsilon: float, n_releases: int, noise_factor: float = 1.0, random_state: int = 0) -> dict[str, float]:
    """Statistical audit of Algorithm 1's default (lattice) release on ``pair`` with the Laplace likelihood-ratio
    statistic; ``noise_factor=0.5`` is the negative control (half the noise: the pair's loss doubles)."""
    rng = np.random.default_rng(random_state)
    A, B, lam = _releases(pair, epsilon, n_releases, noise_factor, "lattice", rng)
    res = epsilon_lower_bound(laplace_llr_statistic(A, pair.a_d, pair.a_dprime), laplace_llr_statistic(B, pair.a_d, pair.a_dprime),
                              random_state=rng)
    l1 = float(np.abs(pair.a_d - pair.a_dprime).sum())
    return {"epsilon": epsilon, "noise_factor": noise_factor, "epsilon_lb": res.epsilon_lb, "epsilon_hat": res.epsilon_hat,
            "pair_l1": l1, "bound_l1": pair.model.sensitivity()[1], "pair_epsilon": l1 / lam, "n_releases": n_releases}


def float_attack(pair: AuditPair, epsilon: float, n_releases: int, noise: str, random_state: int = 0) -> dict[str, object]:
    """Mironov's floating-point attack on Algorithm 1's release: the reachability statistic (can the output be
    produced by numpy's Laplace sampler from this centre?) separates D from D' for the continuous sampler; the
    lattice release is reachable from neither."""
    rng = np.random.default_rng(random_state)
    A, B, lam = _releases(pair, epsilon, n_releases, 1.0, noise, rng)
    res = epsilon_lower_bound(reachability_statistic(A, pair.a_d, pair.a_dprime, lam),
                              reachability_statistic(B, pair.a_d, pair.a_dprime, lam), random_state=rng)
    return {"noise": noise, "epsilon": epsilon, "epsilon_lb": res.epsilon_lb, "n_releases": n_releases,
            "pair_epsilon": float(np.abs(pair.a_d - pair.a_dprime).sum()) / lam}
