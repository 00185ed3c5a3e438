"""Privacy audits of PrivateSVM-Finite and PrivateSVM (Rubinstein et al. 2012) on neighbouring pairs, each with its
negative control, and Mironov's floating-point attack on the paper's float64 sampler."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
from joblib import Parallel, delayed
from numpy.typing import NDArray

from dpkernels._validation import UnsafeNoiseWarning
from dpkernels.audit import (
    adversarial_neighbour_sensitivity,
    epsilon_lower_bound,
    laplace_llr_statistic,
    reachability_statistic,
)
from dpkernels.bounds import rubinstein as R
from dpkernels.cache import memory
from dpkernels.losses import make_loss
from dpkernels.mechanisms.rubinstein import PrivateSVM, PrivateSVMFinite
from dpkernels.random_features import RandomFourierFeatures, rff_paired
from dpkernels.solvers import solve_erm

from .statements import _Memo, _unit_ball_point

Array = NDArray[np.float64]


# ----------------------------------------------------------------------------------------------
# privacy audits
# ----------------------------------------------------------------------------------------------
def privacy_audit(model_d: PrivateSVMFinite | PrivateSVM, model_dprime: PrivateSVMFinite | PrivateSVM,
                  n_releases: int, random_state: int = 0, alpha: float = 0.05,
                  noise_scale: float | None = None) -> dict[str, float]:
    """Statistical audit of a fitted mechanism (``keep_nonprivate=True``) on a neighbouring pair.

    Draws ``n_releases`` releases from each (the default lattice release, reusing each non-private solution), scores
    them with the Laplace log-likelihood-ratio statistic and returns the (1 - alpha) Clopper-Pearson lower bound on
    epsilon next to the exact privacy loss of the pair, ||w_D - w_D'||_1 / lambda (the largest log-density ratio of
    the two release laws; no audit of this pair can exceed it).  With ``noise_scale`` the releases are drawn at that
    lambda (a mis-calibrated mechanism: the audit's negative control).
    """
    rng = np.random.default_rng(random_state)
    lam = model_d.noise_scale_ if noise_scale is None else noise_scale
    a = model_d.sample_releases(n_releases, rng, noise_scale=lam)
    b = model_dprime.sample_releases(n_releases, rng, noise_scale=lam)
    c, cp = model_d.nonprivate_.coef, model_dprime.nonprivate_.coef
    res = epsilon_lower_bound(laplace_llr_statistic(a, c, cp), laplace_llr_statistic(b, c, cp), alpha=alpha, random_state=rng)
    delta_l1 = float(np.abs(c - cp).sum())
    return {"epsilon_claimed": model_d.guarantee_.epsilon, "epsilon_lb": res.epsilon_lb, "epsilon_hat": res.epsilon_hat,
            "pair_l1": delta_l1, "lemma9_l1": model_d.sensitivity_l1_, "noise_scale": lam,
            "epsilon_pair_exact": delta_l1 / lam, "p_hat": res.p_hat, "q_hat": res.q_hat, "n_releases": n_releases}


def audit_with_control(model_d: PrivateSVMFinite | PrivateSVM, model_dprime: PrivateSVMFinite | PrivateSVM, n_releases: int,
                       random_state: int = 0, n_jobs: int = 1) -> dict[str, dict[str, float]]:
    """The audit of the mechanism as calibrated and its negative control: the same pair with half the noise this pair
    needs for the claimed epsilon (lambda = ||w_D - w_D'||_1 / (2 epsilon): exact privacy loss 2 epsilon), which
    the audit must detect (lower bound above epsilon) to show its power.  The two run side by side (``n_jobs``)."""
    pair_l1 = float(np.abs(model_d.nonprivate_.coef - model_dprime.nonprivate_.coef).sum())
    half = pair_l1 / (2.0 * model_d.guarantee_.epsilon)
    audit, control = Parallel(n_jobs=n_jobs)(
        delayed(privacy_audit)(model_d, model_dprime, n_releases, random_state=seed, noise_scale=scale)
        for seed, scale in ((random_state, None), (random_state + 1, half)))
    return {"audit": audit, "control": {**control, "epsilon_claimed": model_d.guarantee_.epsilon}}


def lemma_22_audit_models(epsilon: float, n: int = 20, C: float = 0.5, M: float = 1.0, m: float = 0.01,
                          random_state: int = 0) -> tuple[PrivateSVMFinite, PrivateSVMFinite]:
    """PrivateSVM-Finite (linear, d = 1) fitted on Lemma 22's databases with x_n = M - m (near-worst case as m -> 0),
    keeping the non-private solutions for the audit."""
    pair = R.lemma_22_databases(n, C, M=M, m=m)
    fit = lambda X, y: PrivateSVMFinite(epsilon=epsilon, alpha=1.0 / C, data_norm=M, keep_nonprivate=True,  # noqa: E731
                                        random_state=random_state).fit(X, y)
    return fit(pair.X1, pair.y1), fit(pair.X2, pair.y2)


def _rff_adversarial_neighbour(n: int, C: float, sigma: float, d_hat: int, n_adv: int, maxiter: int,
                               random_state: int) -> tuple[Array, Array, Array, Array, float]:
    """The adversarial search's neighbour for the RFF SVM with the frequencies PrivateSVM draws from
    ``default_rng([random_state, 1])`` (deterministic, non-private: cached)."""
    rng = np.random.default_rng(random_state)
    X = np.array([_unit_ball_point(2)(rng) for _ in range(n)])
    y = np.where(X[:, 0] + 0.3 * rng.standard_normal(n) > 0, 1.0, -1.0)
    freqs = RandomFourierFeatures(n_components=d_hat, sigma=sigma, random_state=np.random.default_rng([random_state, 1])).fit(X).frequencies_
    hinge = make_loss("hinge")
    fit = _Memo(lambda Xa, ya: solve_erm(rff_paired(Xa, freqs), ya, hinge, C).coef)
    adv = adversarial_neighbour_sensitivity(fit, X, y, _unit_ball_point(2), lambda x: np.clip(x, -2.0, 2.0), n_random=n_adv,
                                            n_refine=2, maxiter=maxiter, random_state=rng)
    Xb, yb = X.copy(), y.copy()
    Xb[adv.index], yb[adv.index] = adv.x_replacement, adv.y_replacement
    return X, y, Xb, yb, adv.l2


def rff_audit_models(epsilon: float, n: int = 40, C: float = 1.0, sigma: float = 0.5, d_hat: int = 10, n_adv: int = 16,
                     maxiter: int = 60, random_state: int = 0) -> tuple[PrivateSVM, PrivateSVM, float]:
    """PrivateSVM (RBF) fitted on the neighbouring pair found by the adversarial search for its own frequencies
    (both fits draw the same data-independent frequencies from the same seed).  Returns the two models and the
    pair's L2 change."""
    X, y, Xb, yb, l2 = memory().cache(_rff_adversarial_neighbour)(n, C, sigma, d_hat, n_adv, maxiter, random_state)
    make = lambda Xa, ya: PrivateSVM(epsilon=epsilon, alpha=1.0 / C, sigma=sigma, n_components=d_hat, keep_nonprivate=True,  # noqa: E731
                                     random_state=np.random.default_rng([random_state, 1])).fit(Xa, ya)
    first, second = make(X, y), make(Xb, yb)
    if not np.array_equal(first.frequencies_, second.frequencies_):
        raise RuntimeError("the two fits must share their frequencies")
    return first, second, l2


def floating_point_pair() -> tuple[Array, Array, Array]:
    """Issue 12's minimal case for the floating-point attack: X = 1 except X[0] = 0 (d = 1), labels +1 except the
    first; the neighbour flips the last label."""
    X = np.ones((10, 1))
    X[0] = 0.0
    y = np.ones(10)
    y[0] = -1.0
    y2 = y.copy()
    y2[-1] = -1.0
    return X, y, y2


def floating_point_audit(n_releases: int, random_state: int = 0) -> pd.DataFrame:
    """Mironov's floating-point attack on both mechanisms, with the paper's float64 sampler (``noise="continuous"``,
    the attack's positive control) and with the default lattice release, on :func:`floating_point_pair`
    (C = 0.5, data_norm = 1; PrivateSVM with d-hat = 3, sigma = 1, the same frequencies on both data sets).
    The statistic is whether a release is reachable in float64 from each centre
    (:func:`~dpkernels.audit.reachability_statistic`); each row has the Clopper-Pearson lower bound on epsilon next
    to the claimed epsilon and the exact privacy loss of the pair (what the continuous mechanism in exact arithmetic
    would have)."""
    X, y, y2 = floating_point_pair()
    makers = {
        "PrivateSVM-Finite": lambda **kw: PrivateSVMFinite(epsilon=1.0, alpha=2.0, data_norm=1.0, **kw),
        "PrivateSVM": lambda **kw: PrivateSVM(epsilon=1.0, alpha=2.0, n_components=3, sigma=1.0, **kw),
    }
    rows = []
    for k, (name, make) in enumerate(makers.items()):
        for noise in ("continuous", "lattice"):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", UnsafeNoiseWarning)  # the point of the positive control
                a = make(noise=noise, keep_nonprivate=True, random_state=random_state + k).fit(X, y)
                b = make(noise=noise, keep_nonprivate=True, random_state=random_state + k).fit(X, y2)
            c, cp = a.nonprivate_.coef, b.nonprivate_.coef
            lam = a.noise_scale_
            rng = np.random.default_rng([random_state, k])
            ra, rb = a.sample_releases(n_releases, rng), b.sample_releases(n_releases, rng)
            res = epsilon_lower_bound(reachability_statistic(ra, c, cp, lam), reachability_statistic(rb, c, cp, lam),
                                      random_state=rng)
            rows.append({"mechanism": name, "noise": noise, "epsilon_claimed": a.guarantee_.epsilon,
                         "epsilon_lb": res.epsilon_lb, "epsilon_pair_exact": float(np.abs(c - cp).sum()) / lam,
                         "reachable_own": float(np.mean(reachability_statistic(ra, c, cp, lam) > 0)),
                         "n_releases": n_releases})
    return pd.DataFrame(rows)


