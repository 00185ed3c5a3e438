"""The statements of Rubinstein, Bartlett, Huang and Taft (2012) against solves, searches and Monte Carlo; used by
``notebooks/rubinstein2012.py`` (the verdicts are :mod:`~dpkernels.experiments.rubinstein2012.records`'s)."""

from __future__ import annotations

import hashlib
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd
from joblib import Parallel, delayed
from numpy.typing import NDArray
from threadpoolctl import threadpool_limits
from tqdm import tqdm

from dpkernels import verdicts
from dpkernels.audit import adversarial_neighbour_sensitivity, clopper_pearson, random_neighbour_sensitivity
from dpkernels.bounds import rubinstein as R
from dpkernels.cache import memory
from dpkernels.kernels import RBFKernel, TranslationInvariantKernel
from dpkernels.losses import make_loss
from dpkernels.mechanisms.rubinstein import PrivateSVMFinite
from dpkernels.random_features import RandomFourierFeatures, rff_paired
from dpkernels.solvers import solve_erm
from dpkernels.solvers.hinge import solve_hinge_dual_gram

Array = NDArray[np.float64]


#: One BLAS thread for the experiments that loop over small matrix products (tens of rows): a second thread only
#: synchronises, and on a shared machine its spin-waiting made Lemma 18's sweep 20 times slower (measured with both
#: cores busy).  The loops that run in joblib workers set the same limit inside the worker.
_small_blas = threadpool_limits.wrap(limits=1, user_api="blas")



# ----------------------------------------------------------------------------------------------
# Lemma 9: empirical sensitivity
# ----------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class SensitivitySetting:
    """One sensitivity experiment: loss, feature map (linear on the unit ball or RFF), C, n, d, d-hat."""

    loss: str
    features: str  # "linear" or "rff"
    C: float
    n: int = 40
    d: int = 2
    d_hat: int = 10
    sigma: float = 0.5

    @property
    def label(self) -> str:
        feat = "linear" if self.features == "linear" else f"RFF d-hat={self.d_hat}"
        return f"{self.loss}, {feat}, C={self.C:g}, n={self.n}"


def _unit_ball_point(d: int) -> Callable[[np.random.Generator], Array]:
    def sample(rng: np.random.Generator) -> Array:
        v = rng.standard_normal(d)
        return v / np.linalg.norm(v) * rng.uniform(0.5, 1.0) ** (1 / d)

    return sample


def _project_ball(x: Array) -> Array:
    nrm = np.linalg.norm(x)
    return x / nrm if nrm > 1 else x


def sensitivity_problem(s: SensitivitySetting, rng: np.random.Generator) -> tuple[Array, Array, Callable[[Array, Array], Array], Callable, Callable, float, int]:
    X = np.array([_unit_ball_point(s.d)(rng) for _ in range(s.n)])
    y = np.where(X[:, 0] + 0.3 * rng.standard_normal(s.n) > 0, 1.0, -1.0)
    loss = make_loss(s.loss)
    if s.features == "linear":
        def fit(Xa: Array, ya: Array) -> Array:
            return solve_erm(Xa, ya, loss, s.C).coef
        return X, y, fit, _unit_ball_point(s.d), _project_ball, 1.0, s.d
    freqs = RandomFourierFeatures(n_components=s.d_hat, sigma=s.sigma, random_state=rng).fit(X).frequencies_

    def fit_rff(Xa: Array, ya: Array) -> Array:
        return solve_erm(rff_paired(Xa, freqs), ya, loss, s.C).coef

    return X, y, fit_rff, _unit_ball_point(s.d), (lambda x: np.clip(x, -2.0, 2.0)), 1.0, 2 * s.d_hat


class _Memo:
    """A fit function that solves each distinct data set once (the searches revisit data sets: the adversarial
    search's best neighbour is solved again to report it, label flips of a row repeat a random candidate)."""

    def __init__(self, fit: Callable[[Array, Array], Array]) -> None:
        self.fit = fit
        self.solved: dict[bytes, Array] = {}
        self.calls = 0

    def __call__(self, X: Array, y: Array) -> Array:
        self.calls += 1
        key = hashlib.sha1(np.ascontiguousarray(X).tobytes() + np.ascontiguousarray(y).tobytes()).digest()
        if key not in self.solved:
            self.solved[key] = self.fit(X, y)
        return self.solved[key]


def _one_setting(s: SensitivitySetting, n_random: int, n_adv: int, maxiter: int, seed: int) -> list[dict[str, object]]:
    rng = np.random.default_rng(seed)
    X, y, fit, sample, project, kappa, F = sensitivity_problem(s, rng)
    fit = _Memo(fit)
    w_d = fit(X, y)
    l2_bound, l1_bound = R.lemma_9_sensitivity(1.0, s.C, kappa, s.n, F)
    tight = R.sensitivity_strong_convexity(1.0, s.C, kappa, s.n)
    rand = random_neighbour_sensitivity(fit, X, y, sample, n_neighbours=n_random, random_state=rng, w_d=w_d)
    adv = adversarial_neighbour_sensitivity(fit, X, y, sample, project, n_random=n_adv, n_refine=3, maxiter=maxiter,
                                            random_state=rng, w_d=w_d)
    out = []
    for method, res in (("random neighbours", rand), ("adversarial search", adv)):
        out.append({"setting": s.label, "loss": s.loss, "features": s.features, "C": s.C, "n": s.n, "F": F,
                    "method": method, "l2": res.l2, "l1": res.l1, "lemma9_l2": l2_bound, "lemma9_l1": l1_bound,
                    "tight_l2": tight, "evaluations": res.n_evaluated, "solves": len(fit.solved), "fit_calls": fit.calls})
    return out


def sensitivity_experiment(
    settings: Sequence[SensitivitySetting], n_random: int = 100, n_adv: int = 48, maxiter: int = 120,
    random_state: int = 0, n_jobs: int = 1,
) -> pd.DataFrame:
    """Largest measured ||w_D - w_D'|| (L2 and L1) over random and adversarial neighbours, per setting.

    Each setting is deterministic given its seed and non-private, so it is cached (:func:`dpkernels.cache.memory`);
    within a setting each distinct neighbour is solved once.
    """
    seeds = np.random.SeedSequence(random_state).generate_state(len(settings))
    one = memory().cache(_one_setting)
    rows = Parallel(n_jobs=n_jobs)(delayed(one)(s, n_random, n_adv, maxiter, int(sd))
                                   for s, sd in tqdm(list(zip(settings, seeds)), desc="Lemma 9 sensitivity", leave=False))
    df = pd.DataFrame([r for block in rows for r in block])
    df["ratio_l2"] = df["l2"] / df["lemma9_l2"]
    df["ratio_l1"] = df["l1"] / df["lemma9_l1"]
    return df


# ----------------------------------------------------------------------------------------------
# Lemma 22 / Theorem 23 and Lemma 25 / Theorem 26: the constructions against a QP solver
# ----------------------------------------------------------------------------------------------
def _linear_svm(X: Array, y: Array, C: float) -> float:
    """The one-dimensional linear SVM's w* from its exact dual (Clarabel on the Gram matrix X X')."""
    sol = solve_hinge_dual_gram(y, C, X @ X.T)
    return float(X[:, 0] @ (sol.alpha * y))


def lemma_22_experiment(ns: Sequence[int], Cs: Sequence[float]) -> pd.DataFrame:
    """Lemma 22's databases: closed-form w1*, w2* against the exact dual (Clarabel), the separation, the sensitivity."""
    rows = []
    for n in ns:
        for C in Cs:
            db = R.lemma_22_databases(n, C)
            w1c, w2c, cond = R.lemma_22_closed_form(n, C, db.M, db.m)
            w1, w2 = _linear_svm(db.X1, db.y1, C), _linear_svm(db.X2, db.y2, C)
            # the largest eps the proof's condition 1/M > C(Mn - m)/n allows: eps^2 < C / (2n(2n - 1))
            eps_max = 0.999 * math.sqrt(C / (2 * n * (2 * n - 1)))
            db_s = R.lemma_22_databases(n, C, eps=eps_max)
            w_s = [_linear_svm(XX, yy, C) for XX, yy in ((db_s.X1, db_s.y1), (db_s.X2, db_s.y2))]
            rows.append({
                "n": n, "C": C, "M": db.M, "m": db.m, "condition": cond,
                "separation_closed": abs(w2c - w1c), "eps_strict": eps_max, "separation_strict_qp": abs(w_s[1] - w_s[0]),
                "w1_closed": w1c, "w1_qp": w1, "w2_closed": w2c, "w2_qp": w2,
                "max_abs_diff": max(abs(w1 - w1c), abs(w2 - w2c)),
                "separation_at_1": abs(w1 - w2), "claimed_separation": R.lemma_22_separation(C, n),
                "lemma9_l2": R.lemma_9_sensitivity(1.0, C, db.M, n)[0], "tight_l2": R.sensitivity_strong_convexity(1.0, C, db.M, n),
            })
    return pd.DataFrame(rows)


def _rbf_svm(X: Array, y: Array, C: float, sigma: float) -> Array:
    return solve_hinge_dual_gram(y, C, RBFKernel(sigma)(X)).alpha


def lemma_25_experiment(ns: Sequence[int], Cs: Sequence[float], sigmas: Sequence[float], grid: int = 201) -> pd.DataFrame:
    """Lemma 25's N databases: the duals (QP vs the proof's cases), the neighbour kernel value, the separation."""
    rows = []
    g = np.linspace(-1.6, 1.6, grid)
    G = np.array(np.meshgrid(g, g)).reshape(2, -1).T
    for n in ns:
        for C in Cs:
            if not n > C:
                continue
            for sigma in sigmas:
                db = R.lemma_25_databases(n, sigma)
                gamma = math.exp(-1 / (2 * sigma**2))
                a1_th, an_th, case = R.lemma_25_duals(n, C, gamma)
                printed_a1 = (1 + C * gamma / n) / (n - 1) ** 2 if case == "alpha_n at C/n" else a1_th
                kern = RBFKernel(sigma)
                fs, alphas = [], []
                for X in db.X:
                    a = _rbf_svm(X, db.y, C, sigma)
                    alphas.append(a)
                    fs.append(np.r_[kern(G, X) @ (a * db.y), kern(np.array([x[-1] for x in db.X]), X) @ (a * db.y)])
                F = np.array(fs)
                sep = min(np.max(np.abs(F[i] - F[j])) for i in range(db.N) for j in range(i + 1, db.N))
                a = alphas[0]
                rows.append({
                    "n": n, "C": C, "sigma": sigma, "N": db.N, "gamma": gamma, "case": case,
                    "alpha_1_qp": float(np.mean(a[:-1])), "alpha_1_proof": a1_th, "alpha_1_printed": printed_a1,
                    "alpha_n_qp": float(a[-1]), "alpha_n_proof": an_th,
                    "duals_equal_across_databases": float(np.max(np.abs(np.array(alphas) - a))),
                    "neighbour_k": R.lemma_25_neighbour_kernel(sigma, db.N), "neighbour_k_printed": R.lemma_25_neighbour_kernel_paper(sigma, db.N),
                    "min_pairwise_sup": sep, "claimed_separation": C / (2 * n),
                    "proof_separation": R.lemma_25_separation(C, n, sigma, db.N),
                })
    return pd.DataFrame(rows)


def appendix_a_construction(C: float = 1e4) -> dict[str, object]:
    """Proposition 27 / Figure 2: a separable set where moving the positive support vector changes which
    positives are support vectors, while moving a non-support vector leaves w unchanged.

    SVM with a (penalised) bias via a constant feature of 1 and a large C (close to hard margin).
    """
    neg = np.c_[np.linspace(-1.0, 1.0, 9), np.full(9, -0.5)]
    pos = np.array([[-0.6, 0.45], [0.0, 0.55], [0.6, 0.65]])

    def fit(P: Array) -> tuple[Array, Array]:
        """Weights (w_1, w_2, b) and the support-vector mask (examples on or inside the margin)."""
        X = np.c_[np.vstack([neg, P]), np.ones(len(neg) + len(P))]
        y = np.r_[-np.ones(len(neg)), np.ones(len(P))]
        w = solve_erm(X, y, make_loss("hinge"), C).coef
        return w, y * (X @ w) <= 1.0 + 1e-6

    w0, sv0 = fit(pos)
    moved_sv = pos.copy()
    moved_sv[0] = [-0.6, 0.9]  # move the positive support vector away from the negatives
    w1, sv1 = fit(moved_sv)
    moved_non_sv = pos.copy()
    moved_non_sv[2] = [0.6, 0.8]  # move a non-support vector further out
    w2, _ = fit(moved_non_sv)
    return {
        "neg": neg, "pos": pos, "pos_moved_sv": moved_sv, "pos_moved_non_sv": moved_non_sv,
        "w": w0, "w_moved_sv": w1, "w_moved_non_sv": w2,
        "sv": sv0, "sv_moved": sv1,
        "change_moved_sv": float(np.linalg.norm(w1 - w0)), "change_moved_non_sv": float(np.linalg.norm(w2 - w0)),
    }


# ----------------------------------------------------------------------------------------------
# Utility: Theorem 11, Corollary 15, Lemmas 16-18, Theorem 13
# ----------------------------------------------------------------------------------------------
def _prob_row(claim: str, failures: int, draws: int, delta: float, **extra: object) -> dict[str, object]:
    lo, hi = clopper_pearson(failures, draws)
    return {"claim": claim, "failures": failures, "draws": draws, "p_hat": failures / draws, "cp_low": lo, "cp_high": hi,
            "delta": delta, "violated": lo > delta, **extra}


def _exponential_chunks(rng: np.random.Generator, draws: int, width: int, budget: int = 4_000_000):
    """Blocks of i.i.d. standard exponentials with ``width`` columns and ``draws`` rows in all (at most ``budget``
    numbers at a time).  ``|Laplace(0, lambda)|`` = lambda E with E standard exponential: every experiment below needs
    only the absolute values of the noise, so this draws exactly their law at a third of numpy's Laplace cost."""
    per = max(1, budget // max(width, 1))
    done = 0
    while done < draws:
        m = min(per, draws - done)
        yield rng.standard_exponential((m, width))
        done += m


def theorem_11_experiment(cases: Sequence[tuple[float, float, int]], draws: int, random_state: int = 0) -> pd.DataFrame:
    """Theorem 11 on the linear map over the unit ball M (``|x_i| <= Phi = 1``): ``sup_M |<mu, x>| = ||mu||_2`` exactly.

    For each (eps, delta, F): lambda = the largest allowed value; the failure event ||f-hat - f||_inf > eps.
    ``||mu||_2`` depends on ``|mu|`` only, so the noise is drawn as lambda times standard exponentials (the same law).
    """
    rng = np.random.default_rng(random_state)
    rows = []
    for eps, delta, F in cases:
        lam = R.theorem_11_max_noise_scale(eps, delta, 1.0, F)
        sup = np.concatenate([lam * np.sqrt(np.einsum("ij,ij->i", E, E)) for E in _exponential_chunks(rng, draws, F)])
        rows.append(_prob_row("Theorem 11", int(np.sum(sup > eps)), draws, delta, eps=eps, F=F, lam=lam,
                              quantile_1_minus_delta=float(np.quantile(sup, 1 - delta))))
    return pd.DataFrame(rows)


def corollary_15_experiment(cases: Sequence[tuple[float, float, int]], draws: int, random_state: int = 0) -> pd.DataFrame:
    """Corollary 15: P(||f-hat* - f-tilde||_inf > eps/2) <= delta/2 at the largest allowed lambda.

    Uses the exact bound ``sup_x |<mu, phi-hat(x)>| <= d-hat^{-1/2} sum_j ||(mu_{2j-1}, mu_{2j})||_2``, attained
    when the phases rho_j x can be chosen freely; a failure of this bound is conservative (over-counted).
    The bound depends on ``|mu|`` only (drawn as lambda times standard exponentials, the same law).
    """
    rng = np.random.default_rng(random_state)
    rows = []
    for eps, delta, d_hat in cases:
        lam = R.corollary_15_max_noise_scale(eps, delta, d_hat)
        sup = np.concatenate([lam * np.hypot(E[:, 0::2], E[:, 1::2]).sum(axis=1) / math.sqrt(d_hat)
                              for E in _exponential_chunks(rng, draws, 2 * d_hat)])
        rows.append(_prob_row("Corollary 15", int(np.sum(sup > eps / 2)), draws, delta / 2, eps=eps, d_hat=d_hat, lam=lam,
                              median_sup_over_half_eps=float(np.median(sup) / (eps / 2))))
    return pd.DataFrame(rows)


def lemma_16_experiment(n_points: int = 2000, random_state: int = 0) -> pd.DataFrame:
    """Lemma 16 on the SVM primal R[w] = (1/2)||w||^2 + (C/n) sum hinge (1-strongly convex, a = 1).

    At random w around the certified minimiser w_s (duality gap g, so R[w_s] <= R[w*] + g and
    ||w_s - w*|| <= sqrt(2 g)): Lemma 16 gives ||w - w*|| <= sqrt(2 (R[w] - R[w*])) <= sqrt(2 (R[w] - R[w_s] + g)),
    hence ||w - w_s|| <= sqrt(2 (R[w] - R[w_s] + g)) + sqrt(2 g), which is what is checked.
    """
    rng = np.random.default_rng(random_state)
    X = rng.normal(size=(80, 3))
    X /= np.maximum(1.0, np.linalg.norm(X, axis=1))[:, None]
    y = np.where(X[:, 0] + 0.3 * rng.normal(size=80) > 0, 1.0, -1.0)
    C = 5.0
    loss = make_loss("hinge")
    sol = solve_erm(X, y, loss, C)
    gap = float(sol.gap or 0.0)
    r_s = 0.5 * float(sol.coef @ sol.coef) + C / len(y) * float(np.sum(loss.value(y * (X @ sol.coef))))
    scales = 10 ** rng.uniform(-3, 1, n_points)
    W = sol.coef + scales[:, None] * rng.normal(size=(n_points, 3))
    risks = 0.5 * np.einsum("ij,ij->i", W, W) + C / len(y) * loss.value(y[:, None] * (X @ W.T)).sum(axis=0)
    excess = risks - r_s
    dist = np.linalg.norm(W - sol.coef, axis=1)
    bound = np.sqrt(2 * (excess + gap)) + math.sqrt(2 * gap)
    return pd.DataFrame({"excess_risk": excess, "distance": dist, "bound": bound, "ratio": dist / bound})


def _cos_sin(theta: Array) -> tuple[Array, Array]:
    """cos and sin of an array of angles from one tangent of the half angle (numpy's float64 tan is vectorised, its cos
    and sin are not; the same identity as :func:`~dpkernels.random_features.rff_paired`)."""
    t = np.tan(0.5 * theta)
    den = 2.0 / (1.0 + t * t)
    return den - 1.0, t * den


def _grid_kernel_error(kernel: TranslationInvariantKernel, freqs: Array, axis: Array) -> float:
    """max over the product grid D in axis x axis (d = 2) of ``|k-hat(D) - k(D)|``, ``k-hat(D) = mean_m cos <rho_m, D>``.

    cos(a + b) = cos a cos b - sin a sin b, so the len(axis)^2 x d-hat cosines are one matrix product of two
    len(axis) x 2 d-hat blocks: 2 len(axis) d-hat trigonometric evaluations instead of len(axis)^2 d-hat (41 times
    fewer on a 41 x 41 grid), the same numbers to round-off.
    """
    a = np.asarray(axis, dtype=np.float64)
    c1, s1 = _cos_sin(np.outer(a, freqs[:, 0]))
    c2, s2 = _cos_sin(np.outer(a, freqs[:, 1]))
    est = np.hstack([c1, s1]) @ np.hstack([c2, -s2]).T / freqs.shape[0]
    D = np.stack(np.meshgrid(a, a, indexing="ij"), axis=-1)
    return float(np.max(np.abs(est - kernel.g(D))))


def _lemma_18_sups(kern: TranslationInvariantKernel, d_hat: int, n_draws: int, axis: Array, seed: np.random.SeedSequence) -> Array:
    rng = np.random.default_rng(seed)
    with threadpool_limits(limits=1, user_api="blas"):
        return np.array([_grid_kernel_error(kern, kern.sample_frequencies(d_hat, 2, rng), axis) for _ in range(n_draws)])


def lemma_18_experiment(kernels: Sequence[TranslationInvariantKernel], eps: float, delta: float, draws: int,
                        d_hats: Sequence[int] = (), grid: int = 41, random_state: int = 0, n_jobs: int = 1) -> pd.DataFrame:
    """Lemma 18 on M = [0, 1]^2 (diam sqrt 2): measured sup over D in M - M of ``|k-hat(D) - k(D)|`` (grid).

    For each kernel: at Lemma 18's d-hat (when finite) the failure frequency of {sup >= eps} against
    delta; and the mean sup error (with its standard error) along ``d_hats``.  The grid sup is a lower estimate of
    the true sup.  Each (kernel, d-hat) has its own seed (a child of ``random_state``), so the numbers do not depend
    on ``n_jobs``.
    """
    d, diam = 2, math.sqrt(2.0)
    axis = np.linspace(-1.0, 1.0, grid)
    plan = []
    for kern in kernels:
        sigma_p = math.sqrt(kern.second_moment(d))
        need = R.lemma_18_d_hat(eps, delta, d, sigma_p, diam)
        plan += [(kern, sigma_p, need, "lemma", int(math.ceil(need)))] if math.isfinite(need) else []
        plan += [(kern, sigma_p, need, "sweep", int(k)) for k in d_hats]
    seeds = np.random.SeedSequence(random_state).spawn(len(plan))
    n_draws = [draws if kind == "lemma" else max(5, draws // 4) for _, _, _, kind, _ in plan]
    order = sorted(range(len(plan)), key=lambda i: -plan[i][4] * n_draws[i])  # the largest first
    sups = dict(zip(order, Parallel(n_jobs=n_jobs)(
        delayed(_lemma_18_sups)(plan[i][0], plan[i][4], n_draws[i], axis, seeds[i])
        for i in tqdm(order, desc="Lemma 18", leave=False))))
    rows = []
    for i, (kern, sigma_p, need, kind, d_hat) in enumerate(plan):
        x = sups[i]
        rows.append(_prob_row("Lemma 18", int(np.sum(x >= eps)), n_draws[i], delta, kernel=kern.name, sigma=kern.sigma,
                              sigma_p=sigma_p, d_hat=d_hat, kind=kind, lemma_d_hat=need, median_sup=float(np.median(x)),
                              mean_sup=float(x.mean()), se_sup=float(x.std(ddof=1) / math.sqrt(n_draws[i])),
                              max_sup=float(x.max()), eps=eps))
    return pd.DataFrame(rows)


def _toy_problem(n: int, d: int, random_state: np.random.Generator) -> tuple[Array, Array]:
    X = random_state.uniform(0.0, 1.0, size=(n, d))
    y = np.where(np.sin(6.0 * X[:, 0]) + (X[:, 1] - 0.5 if d > 1 else 0.0) > 0, 1.0, -1.0)
    return X, y


@_small_blas
def lemma_17_experiment(d_hats: Sequence[int], draws: int, n: int = 40, C: float = 2.0, sigma: float = 0.4,
                        grid: int = 31, random_state: int = 0) -> pd.DataFrame:
    """Lemma 17's inequality ||f* - g*||_inf <= eps' Lambda + 2 sqrt((CL + Lambda/2) Lambda eps') with eps' = ||k - k-hat||_inf.

    f*: exact RBF-kernel SVM; g*: the SVM in the random feature space (both duals solved exactly,
    :func:`~dpkernels.solvers.hinge.solve_hinge_dual_gram`); both sup norms on a grid of M = [0, 1]^2 (and of M - M
    for the kernel error); Lambda = max of the two duals' L1 norms.
    """
    rng = np.random.default_rng(random_state)
    X, y = _toy_problem(n, 2, rng)
    kern = RBFKernel(sigma)
    a_star = solve_hinge_dual_gram(y, C, kern(X)).alpha
    g = np.linspace(0.0, 1.0, grid)
    G = np.array(np.meshgrid(g, g)).reshape(2, -1).T
    gd = np.linspace(-1.0, 1.0, grid)
    f_star = kern(G, X) @ (a_star * y)
    rows = []
    for d_hat in tqdm(list(d_hats), desc="Lemma 17", leave=False):
        for _ in range(draws):
            freqs = kern.sample_frequencies(d_hat, 2, rng)
            ZX, ZG = rff_paired(X, freqs), rff_paired(G, freqs)
            b_star = solve_hinge_dual_gram(y, C, ZX @ ZX.T).alpha
            g_star = ZG @ (ZX.T @ (b_star * y))
            eps_prime = _grid_kernel_error(kern, freqs, gd)
            Lam = max(a_star.sum(), b_star.sum())
            sup = float(np.max(np.abs(f_star - g_star)))
            rows.append({"d_hat": d_hat, "eps_prime": eps_prime, "Lambda": Lam, "sup_f_minus_g": sup,
                         "bound": R.lemma_17_sup_distance(eps_prime, Lam, C)})
    df = pd.DataFrame(rows)
    df["ratio"] = df["sup_f_minus_g"] / df["bound"]
    return df


def _theorem_13_sups(X: Array, y: Array, G: Array, f_star: Array, kern: RBFKernel, C: float, d_hat: int, lam: float,
                     draws: int, seed: np.random.SeedSequence) -> Array:
    rng = np.random.default_rng(seed)
    sups = np.empty(draws)
    with threadpool_limits(limits=1, user_api="blas"):
        for k in range(draws):
            freqs = kern.sample_frequencies(d_hat, X.shape[1], rng)
            ZX, ZG = rff_paired(X, freqs), rff_paired(G, freqs)
            b = solve_hinge_dual_gram(y, C, ZX @ ZX.T).alpha
            w_hat = ZX.T @ (b * y) + rng.laplace(0.0, lam, size=2 * d_hat)
            sups[k] = float(np.max(np.abs(f_star - ZG @ w_hat)))
    return sups


def theorem_13_experiment(d_hats: Sequence[int], draws: int, eps_fraction: float = 0.5, delta: float = 0.1,
                          n: int = 20, C: float = 1.0, sigma: float = 0.3, grid: int = 201, random_state: int = 0,
                          n_jobs: int = 1) -> pd.DataFrame:
    """Theorem 13's failure event in d = 1 on M = [0, 1], *below* its premise: ``P(||f* - f-hat*||_inf > eps)`` at d-hat
    far smaller than the theorem requires (an illustration of how conservative the premise is, not a check of it).

    eps = eps_fraction * ||f*||_inf (so the zero function is not useful); for each d-hat (its own child seed), lambda
    is the largest value Theorem 13 allows; f-hat* = <w-tilde + mu, phi-hat> with w-tilde the RFF SVM.
    ``theorem_d_hat`` is the d-hat the theorem requires (Lambda = C, the hinge box bound).
    """
    rng = np.random.default_rng(random_state)
    X, y = _toy_problem(n, 1, rng)
    kern = RBFKernel(sigma)
    a_star = solve_hinge_dual_gram(y, C, kern(X)).alpha
    G = np.linspace(0.0, 1.0, grid)[:, None]
    f_star = kern(G, X) @ (a_star * y)
    eps = eps_fraction * float(np.max(np.abs(f_star)))
    need = R.theorem_13_d_hat(eps, delta, 1, 1.0 / sigma, 1.0, C, C)
    d_hats = [int(k) for k in d_hats]
    lams = [R.theorem_13_max_noise_scale(eps, delta, k) for k in d_hats]
    seeds = np.random.SeedSequence(random_state).spawn(len(d_hats))
    all_sups = Parallel(n_jobs=n_jobs)(delayed(_theorem_13_sups)(X, y, G, f_star, kern, C, k, lam, draws, sd)
                                       for k, lam, sd in tqdm(list(zip(d_hats, lams, seeds))[::-1],
                                                              desc="Theorem 13 (below the premise)", leave=False))[::-1]
    rows = []
    for d_hat, lam, sups in zip(d_hats, lams, all_sups):
        rows.append(_prob_row("Theorem 13", int(np.sum(sups > eps)), draws, delta, d_hat=d_hat, lam=lam, eps=eps,
                              theorem_d_hat=need, median_sup=float(np.median(sups)), f_star_sup=float(np.max(np.abs(f_star))),
                              Lambda_measured=float(a_star.sum())))
    return pd.DataFrame(rows)


def _premise_sups(X: Array, y: Array, G: Array, f_star: Array, kern: RBFKernel, C: float, d_hat: int, lam: float,
                  draws: int, chunk: int, seed: np.random.SeedSequence) -> Array:
    rng = np.random.default_rng(seed)
    n, grid = len(y), len(G)
    sups = np.empty(draws)
    with threadpool_limits(limits=1, user_api="blas"):
        for k in range(draws):
            K = np.zeros((n, n))
            KG = np.zeros((grid, n))
            noise = np.zeros(grid)
            for start in range(0, d_hat, chunk):
                m = min(chunk, d_hat - start)
                freqs = kern.sample_frequencies(m, 1, rng)
                scale = math.sqrt(m / d_hat)  # rff_paired scales a block by 1/sqrt(m); the map needs 1/sqrt(d-hat)
                ZX, ZG = scale * rff_paired(X, freqs), scale * rff_paired(G, freqs)
                K += ZX @ ZX.T
                KG += ZG @ ZX.T
                noise += ZG @ rng.laplace(0.0, lam, size=2 * m)
            b = solve_hinge_dual_gram(y, C, K).alpha
            sups[k] = float(np.max(np.abs(f_star - KG @ (b * y) - noise)))
    return sups


def theorem_13_premise_experiment(draws: int, n: int = 10, C: float = 0.5, sigma: float = 1.0, width: float = 0.1,
                                  eps_fraction: float = 0.9, delta: float = 0.2, grid: int = 21, chunk: int = 50_000,
                                  random_state: int = 0, n_jobs: int = 1) -> dict[str, object]:
    """Theorem 13 at a d-hat that meets its premise, end to end (RBF kernel, d = 1).

    The premise d-hat >= 4 (d+2)/theta ln(2^9 (sigma_p diam M)^2 / (delta theta)) with
    theta = eps^4 / (2^4 H^4), H = Lambda + 2 sqrt((C + Lambda/2) Lambda), can be sampled only where the constants are
    most favourable: ``||f*||_inf <= Lambda <= C`` (``|k| <= 1``, 0 <= alpha <= C/n), so a non-vacuous eps (below ``||f*||``,
    where the zero function is not useful) has eps / H < 1 / (1 + 2 sqrt(3/2)) = 0.29, reached by one cluster of
    one class (every dual at C/n, ||f*|| close to Lambda = C).  Here: n points uniform on M = [0, width], labels +1,
    eps = eps_fraction ||f*||_inf, Lambda = C.  For each draw: frequencies, the random-feature SVM (exact dual), Laplace
    noise at the largest lambda Theorem 13 allows, and ``sup_M |f* - f-hat*|`` on a grid; the features are accumulated
    over blocks of ``chunk`` frequencies.  The draws run in ``n_jobs`` blocks with child seeds of ``random_state``
    (two blocks whatever ``n_jobs``, so the numbers do not depend on it).
    """
    rng = np.random.default_rng(random_state)
    X = rng.uniform(0.0, width, size=(n, 1))
    y = np.ones(n)
    kern = RBFKernel(sigma)
    a_star = solve_hinge_dual_gram(y, C, kern(X)).alpha
    G = np.linspace(0.0, width, grid)[:, None]
    f_star = kern(G, X) @ (a_star * y)
    f_sup = float(np.max(np.abs(f_star)))
    eps = eps_fraction * f_sup
    d_hat = int(math.ceil(R.theorem_13_d_hat(eps, delta, 1, 1.0 / sigma, width, C, C)))
    lam = R.theorem_13_max_noise_scale(eps, delta, d_hat)
    blocks = [draws // 2 + draws % 2, draws // 2]
    seeds = np.random.SeedSequence(random_state).spawn(2)
    sups = np.concatenate(Parallel(n_jobs=n_jobs)(delayed(_premise_sups)(X, y, G, f_star, kern, C, d_hat, lam, m, chunk, sd)
                                                  for m, sd in zip(blocks, seeds) if m > 0))
    lo, hi = clopper_pearson(int(np.sum(sups > eps)), draws)
    return {"n": n, "C": C, "sigma": sigma, "width": width, "Lambda": C, "Lambda_measured": float(a_star.sum()),
            "f_star_sup": f_sup, "eps": eps, "delta": delta, "theta": R.theorem_13_theta(eps, C, C), "d_hat": d_hat,
            "lam": lam, "draws": draws, "failures": int(np.sum(sups > eps)), "p_hat": float(np.mean(sups > eps)),
            "cp_low": lo, "cp_high": hi, "median_sup": float(np.median(sups)), "max_sup": float(sups.max())}


# ----------------------------------------------------------------------------------------------
# Theorems 23 and 26 against their constructions
# ----------------------------------------------------------------------------------------------
def theorem_23_experiment(ratios: Sequence[float], n_releases: int, n: int = 10, C: float = 1.0, usefulness: float = 0.9,
                          random_state: int = 0) -> tuple[pd.DataFrame, dict[str, float]]:
    """Theorem 23 measured on Lemma 22's databases: PrivateSVM-Finite's privacy against the theorem's lower bound.

    The databases of the proof (eps = sqrt(C)/(2n)), the usefulness level eps_u = ``usefulness`` sqrt(C)/(2n) inside
    the theorem's range, and M = [-R, R] with R = max(1, M) (it contains the data and x = 1, where the proof
    measures).  For each lambda = eps_u / (ratio R), ``n_releases`` releases of PrivateSVM-Finite from each database
    (the non-private solutions solved once): the usefulness failure ``delta-hat = max_i P(sup_M |f-hat_i - f_i*| > eps_u)``
    (Clopper-Pearson upper bound), the exact privacy loss of the pair ``|w1* - w2*| / lambda`` (Laplace in one dimension;
    a lower bound on the mechanism's beta), and Theorem 23's bound ln((1 - delta)/delta) at the upper confidence
    bound of delta.  The theorem predicts loss >= bound for every lambda; a separation below 2 eps_u (Lemma 22
    failing) would let a small lambda be useful at a smaller loss.
    """
    rng = np.random.default_rng(random_state)
    db = R.lemma_22_databases(n, C)
    eps = usefulness * R.theorem_23_max_epsilon(C, n)
    radius = max(1.0, db.M)
    fit = lambda X, y: PrivateSVMFinite(epsilon=1.0, alpha=1.0 / C, data_norm=db.M, keep_nonprivate=True,  # noqa: E731
                                        random_state=rng).fit(X, y)
    m1, m2 = fit(db.X1, db.y1), fit(db.X2, db.y2)
    w1, w2 = float(m1.nonprivate_.coef[0]), float(m2.nonprivate_.coef[0])
    rows = []
    for ratio in ratios:
        lam = eps / (ratio * radius)
        fails = [int(np.sum(np.abs(m.sample_releases(n_releases, rng, noise_scale=lam)[:, 0] - w) * radius > eps))
                 for m, w in ((m1, w1), (m2, w2))]
        worst = max(fails)
        hi = clopper_pearson(worst, n_releases)[1]
        loss = abs(w1 - w2) / lam
        bound = R.theorem_23_beta_lower(hi) if hi < 1 else -math.inf
        rows.append({"ratio": ratio, "lam": lam, "failures_D1": fails[0], "failures_D2": fails[1], "n_releases": n_releases,
                     "delta_hat": worst / n_releases, "delta_cp_high": hi,
                     "delta_exact": math.exp(-eps / (lam * radius)), "pair_loss": loss, "theorem_bound": bound,
                     "margin": loss - bound})
    info = {"n": n, "C": C, "M": db.M, "m": db.m, "eps_u": eps, "radius": radius, "w1": w1, "w2": w2,
            "separation": abs(w1 - w2) * radius, "two_eps_u": 2 * eps}
    return pd.DataFrame(rows), info


def _two_variable_dual(n: int, C: float, gamma: float) -> tuple[float, float]:
    """The exact maximiser of Lemma 25's reduced dual (n-1) a1 + a2 - (1/2)[(n-1)^2 a1^2 - 2 gamma (n-1) a1 a2 + a2^2]
    over 0 <= a1, a2 <= C/n, for any gamma in [-1, 1] (a random-feature kernel value may be negative): the interior
    stationary point when feasible, else the best of the optima along the four edges (a concave quadratic on a box
    attains its maximum at one of these)."""
    u = C / n
    q11, q12, q22 = (n - 1) ** 2, -gamma * (n - 1), 1.0
    c1, c2 = float(n - 1), 1.0

    def obj(a1: float, a2: float) -> float:
        return c1 * a1 + c2 * a2 - 0.5 * (q11 * a1 * a1 + 2 * q12 * a1 * a2 + q22 * a2 * a2)

    cands = []
    det = q11 * q22 - q12 * q12
    if det > 1e-300:
        a1 = (c1 * q22 - c2 * q12) / det
        a2 = (c2 * q11 - c1 * q12) / det
        if 0 <= a1 <= u and 0 <= a2 <= u:
            return a1, a2
    for fixed in (0.0, u):
        cands.append((fixed, min(max((c2 - q12 * fixed) / q22, 0.0), u)))  # a1 fixed, best a2
        cands.append((min(max((c1 - q12 * fixed) / q11, 0.0), u), fixed))  # a2 fixed, best a1
    return max(cands, key=lambda a: obj(*a))


def _disk_grid(n_radii: int, n_angles: int) -> Array:
    """Points of the closed unit disk: the centre and ``n_angles`` angles on each of ``n_radii`` circles."""
    r = np.linspace(0.0, 1.0, n_radii + 1)[1:]
    th = np.linspace(0.0, 2 * math.pi, n_angles, endpoint=False)
    pts = (r[:, None, None] * np.stack([np.cos(th), np.sin(th)], axis=-1)[None]).reshape(-1, 2)
    return np.vstack([np.zeros((1, 2)), pts])


def _theorem_26_block(n: int, C: float, kern: RBFKernel, pos: Array, G: Array, f_star: Array, lams: Array, eps: float,
                      d_hat: int, draws: int, seed: np.random.SeedSequence) -> tuple[NDArray[np.int64], float, Array]:
    """Failures per (lambda, database), the largest pairwise L1 change and the noiseless sup distance, over ``draws``."""
    rng = np.random.default_rng(seed)
    N = len(pos)
    fails = np.zeros((len(lams), N), dtype=np.int64)
    max_l1 = 0.0
    approx = np.empty(draws)
    with threadpool_limits(limits=1, user_api="blas"):
        for k in range(draws):
            freqs = kern.sample_frequencies(d_hat, 2, rng)
            z0 = rff_paired(np.zeros((1, 2)), freqs)[0]
            Z = rff_paired(pos, freqs)
            ZG = rff_paired(G, freqs)
            W = np.empty((N, 2 * d_hat))
            for i in range(N):
                b1, bn = _two_variable_dual(n, C, float(z0 @ Z[i]))
                W[i] = -(n - 1) * b1 * z0 + bn * Z[i]
            base = W @ ZG.T - f_star  # (N, grid): g_i* - f_i*
            noise = rng.laplace(0.0, 1.0, size=(N, 2 * d_hat)) @ ZG.T
            approx[k] = float(np.max(np.abs(base)))
            sup = np.max(np.abs(base[None] + lams[:, None, None] * noise[None]), axis=2)  # (lambdas, N)
            fails += sup > eps
            max_l1 = max(max_l1, float(np.abs(W[:, None, :] - W[None, :, :]).sum(axis=2).max()))
    return fails, max_l1, approx


def theorem_26_experiment(ratios: Sequence[float], draws: int, n: int = 10, C: float = 5.0, sigma: float = 0.5,
                          d_hat: int = 2000, usefulness: float = 0.9, n_radii: int = 8, n_angles: int = 48,
                          random_state: int = 0, n_jobs: int = 1) -> tuple[pd.DataFrame, dict[str, float]]:
    """Theorem 26 measured on Lemma 25's N databases: PrivateSVM's privacy against the theorem's lower bound.

    The N pairwise-neighbouring databases (n - 1 negatives at 0, the positive at angle 2 pi i / N on the unit
    circle), usefulness eps_u = ``usefulness`` C/(4n) inside the theorem's range, M = the unit disk (a polar grid plus
    the N data points; a grid sup under-estimates the sup, which can only make delta-hat smaller and the bound larger).
    Each draw: frequencies (d-hat), the random-feature SVM on every D_i (its n - 1 equal rows reduce the dual to
    Lemma 25's two variables with gamma-hat_i = k-hat(0, x_i), solved exactly), standard Laplace vectors L_i (common
    to all lambda).  For lambda = eps_u / ratio: ``delta-hat = max_i P(sup_M |<w_i + lambda L_i, phi> - f_i*| > eps_u)``
    and the privacy loss max_{i != j} ||w_i - w_j||_1 / lambda (Laplace; the largest over the draws, a lower estimate of
    the mechanism's beta, whose frequencies are released).  Theorem 26 predicts loss >= ln((1 - delta)(N - 1)/delta).
    The draws run in two blocks with child seeds of ``random_state`` (the numbers do not depend on ``n_jobs``).
    """
    db = R.lemma_25_databases(n, sigma)
    N = db.N
    eps = usefulness * C / (4 * n)
    kern = RBFKernel(sigma)
    a1, an = _two_variable_dual(n, C, math.exp(-1.0 / (2 * sigma**2)))
    pos = np.array([X[-1] for X in db.X])
    G = np.vstack([_disk_grid(n_radii, n_angles), pos])
    f_star = -(n - 1) * a1 * kern(G, np.zeros((1, 2)))[:, 0][None, :] + an * kern(G, pos).T  # (N, grid)
    ratios = np.asarray(ratios, dtype=np.float64)
    lams = eps / ratios
    blocks = [draws // 2 + draws % 2, draws // 2]
    seeds = np.random.SeedSequence(random_state).spawn(2)
    out = Parallel(n_jobs=n_jobs)(delayed(_theorem_26_block)(n, C, kern, pos, G, f_star, lams, eps, d_hat, m, sd)
                                  for m, sd in zip(blocks, seeds) if m > 0)
    fails = sum(o[0] for o in out)
    max_l1 = max(o[1] for o in out)
    approx = np.concatenate([o[2] for o in out])
    rows = []
    for r, lam, f in zip(ratios, lams, fails):
        worst = int(f.max())
        hi = clopper_pearson(worst, draws)[1]
        bound = R.theorem_26_beta_lower(hi, sigma) if hi < 1 else -math.inf
        rows.append({"ratio": float(r), "lam": float(lam), "draws": draws, "worst_failures": worst,
                     "delta_hat": worst / draws, "delta_cp_high": hi, "pair_loss": max_l1 / lam, "theorem_bound": bound,
                     "margin": max_l1 / lam - bound})
    info = {"n": n, "C": C, "sigma": sigma, "N": N, "d_hat": d_hat, "eps_u": eps, "grid_points": len(G),
            "max_l1_change": max_l1, "median_sup_approx": float(np.median(approx)), "max_sup_approx": float(approx.max())}
    return pd.DataFrame(rows), info


# ----------------------------------------------------------------------------------------------
# asymptotic rates
# ----------------------------------------------------------------------------------------------
def rate_table(d: int = 2, sigma: float = 1.0, diam: float = 2.0) -> pd.DataFrame:
    """Explicit bounds from the stated constants against the claimed rates, as log-log slopes.

    Each row: the statement, the variable swept, the measured slope of the explicit bound, the claimed
    exponent, and the slope of explicit/claimed (0 when the claimed rate is right up to constants).
    """
    sp = math.sqrt(d) / sigma
    rows = []

    def add(statement: str, variable: str, xs: Array, explicit: Callable[[float], float], claimed: Callable[[float], float], exponent: float) -> None:
        e = np.array([explicit(x) for x in xs])
        c = np.array([claimed(x) for x in xs])
        rows.append({"statement": statement, "variable": variable, "range": f"{xs[0]:.3g}..{xs[-1]:.3g}",
                     "slope_explicit": verdicts.slope(xs, e), "claimed_exponent": exponent,
                     "slope_explicit_over_claimed": verdicts.slope(xs, e / c)})

    eps_grid = np.logspace(-3, -1, 9)
    n_grid = np.logspace(3, 7, 9)
    C_grid = np.logspace(0, 3, 9)
    F, delta = 10, 0.05
    cor19 = lambda eps, n, C: R.corollary_19_beta_upper_derived(eps, delta, C, n, F, 1.0, 1.0)  # noqa: E731
    add("Corollary 19", "eps", eps_grid, lambda e: cor19(e, 1e4, 10.0), lambda e: 1 / e, -1.0)
    add("Corollary 19", "n", n_grid, lambda n: cor19(0.1, n, 10.0), lambda n: 1 / n, -1.0)
    add("Corollary 19", "C", C_grid, lambda C: cor19(0.1, 1e4, C), lambda C: C, 1.0)
    t21 = lambda eps, n, C: R.theorem_21_beta_upper_derived(eps, delta, C, n, d, sp, diam)  # noqa: E731
    claim21 = lambda eps, n, C: R.theorem_21_claimed_rate(eps, delta, C, n)  # noqa: E731
    add("Theorem 21", "eps", eps_grid, lambda e: t21(e, 1e4, 1.0), lambda e: claim21(e, 1e4, 1.0), -3.0)
    add("Theorem 21", "n", n_grid, lambda n: t21(0.1, n, 1.0), lambda n: claim21(0.1, n, 1.0), -1.0)
    add("Theorem 21", "C", C_grid, lambda C: t21(0.1, 1e4, C), lambda C: claim21(0.1, 1e4, C), 1.0)
    # the rates after Theorem 23 (C = sqrt(n), Remark 1)
    add("rates after Theorem 23 (upper, C = sqrt n)", "n", n_grid,
        lambda n: cor19(0.1, n, R.remark_1_C(n)), lambda n: n**-0.5, -0.5)
    add("rates after Theorem 23 (upper at eps = sqrt(C)/(2n), C = sqrt n)", "n", n_grid,
        lambda n: cor19(R.theorem_23_max_epsilon(R.remark_1_C(n), n), n, R.remark_1_C(n)), lambda n: n**0.25, 0.25)
    add("rates after Theorem 23 (lower bound's eps range, C = sqrt n)", "n", n_grid,
        lambda n: R.theorem_23_max_epsilon(R.remark_1_C(n), n), lambda n: n**-0.75, -0.75)
    # the rates after Theorem 26 (C = sqrt(n))
    add("rates after Theorem 26 (upper, C = sqrt n)", "n", n_grid,
        lambda n: t21(0.01, n, R.remark_1_C(n)), lambda n: n**-0.5 * math.log(math.sqrt(n) / (0.01 * delta)) ** 1.5, -0.5)
    add("rates after Theorem 26 (upper at eps = C/(4n), C = sqrt n)", "n", n_grid,
        lambda n: t21(R.remark_1_C(n) / (4 * n), n, R.remark_1_C(n)),
        lambda n: n * math.log(n / delta) ** 1.5, 1.0)
    return pd.DataFrame(rows)


