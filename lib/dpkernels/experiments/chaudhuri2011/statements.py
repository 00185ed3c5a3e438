"""Checks of the paper's lemmas, theorems and corollaries (Sections 3-6) by simulation or exact computation."""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
import pandas as pd
from numpy.typing import NDArray
from scipy import stats

from dpkernels.audit import adversarial_neighbour_sensitivity, clopper_pearson, random_neighbour_sensitivity
from dpkernels.bounds import chaudhuri as B
from dpkernels.losses import MarginLoss, make_loss
from dpkernels.mechanisms.chaudhuri import objective_releases, unit_gamma_noise
from dpkernels.noise import gamma_norm_vector
from dpkernels.solvers.smooth import Design, solve_smooth_erm, solve_smooth_erm_batch

Array = NDArray[np.float64]

# ----------------------------------------------------------------------------------------------
# Corollary 8 and Lemma 7: the sensitivity, measured
# ----------------------------------------------------------------------------------------------
def sensitivity_experiment(losses: Sequence[str], Lambdas: Sequence[float], n: int = 30, d: int = 2, n_random: int = 100,
                           n_adv: int = 32, maxiter: int = 120, random_state: int = 0) -> pd.DataFrame:
    """max ||f*(D) - f*(D')||_2 over random and adversarially searched neighbours against Corollary 8's 2/(n Lambda)."""
    rng = np.random.default_rng(random_state)

    def ball(r: np.random.Generator) -> Array:
        v = r.standard_normal(d)
        return v / np.linalg.norm(v) * r.uniform(0.3, 1.0) ** (1 / d)

    proj = lambda x: x / max(1.0, float(np.linalg.norm(x)))  # noqa: E731
    rows = []
    for loss in losses:
        for lam in Lambdas:
            X = np.array([ball(rng) for _ in range(n)])
            y = np.where(X[:, 0] + 0.3 * rng.standard_normal(n) > 0, 1.0, -1.0)
            L = make_loss(loss)
            fit = lambda A, b, L=L, lam=lam: solve_smooth_erm(A, b, L, lam).coef  # noqa: E731
            w_d = fit(X, y)
            rand = random_neighbour_sensitivity(fit, X, y, ball, n_neighbours=n_random, random_state=rng, w_d=w_d)
            adv = adversarial_neighbour_sensitivity(fit, X, y, ball, proj, n_random=n_adv, n_refine=3, maxiter=maxiter,
                                                    random_state=rng, w_d=w_d)
            bound = B.corollary_8_sensitivity(n, lam)
            for method, res in (("random neighbours", rand), ("adversarial search", adv)):
                rows.append({"loss": loss, "Lambda": lam, "n": n, "method": method, "l2": res.l2, "bound": bound,
                             "ratio": res.l2 / bound})
    return pd.DataFrame(rows)


def lemma_7_experiment(cases: Sequence[tuple[str, float]], draws: int, n: int = 200, d: int = 5,
                       random_state: int = 0) -> pd.DataFrame:
    """Lemma 7 with G = J(., D) (Lambda-strongly convex) and g(f) = b'f / n (so max ||grad g|| = ||b|| / n):
    ||argmin (G + g) - argmin G|| <= ||b|| / (n Lambda), over ``draws`` noise vectors of growing size (solved
    together) -- the step behind Corollary 8 and Lemma 19."""
    rng = np.random.default_rng(random_state)
    X, y = _toy(n, d, rng)
    rows = []
    for loss, lam in cases:
        L = make_loss(loss)
        f0 = solve_smooth_erm(X, y, L, lam, gtol=1e-12).coef
        Bm = gamma_norm_vector(1.0, d, n=draws, random_state=rng, idealized=True) * np.logspace(-2, 3, draws)[:, None]
        sol = solve_smooth_erm_batch(X, y, L, lam, Bm, center=f0, gtol=1e-12)
        moved = np.linalg.norm(sol.coef - f0, axis=1)
        bound = np.linalg.norm(Bm, axis=1) / (n * lam)
        slack = sol.distance_bound + 1e-12 / lam  # the two solves' certified distances
        rows.append({"loss": loss, "Lambda": lam, "draws": draws, "max_ratio": float(np.max((moved - slack) / bound)),
                     "median_ratio": float(np.median(moved / bound))})
    return pd.DataFrame(rows)


def lemma_10_experiment(dims: Sequence[int], draws: int, random_state: int = 0) -> pd.DataFrame:
    """Lemma 10: for a full-rank A and E of rank <= 2, det(A + E) / det(A) - 1 = lambda_1 + lambda_2 + lambda_1 lambda_2,
    the two non-zero eigenvalues of A^{-1} E; and Theorem 9's use of it: with A = n(Lambda + Delta) I + the curvature
    matrix and E the rank-2 change of one row (``|l''| <= c``, ``||x|| <= 1``),
    ``|lambda_1| + |lambda_2| <= 2c / (n(Lambda + Delta))``."""
    rng = np.random.default_rng(random_state)
    rows = []
    for d in dims:
        worst_id, worst_bound = 0.0, 0.0
        for _ in range(draws):
            M = rng.standard_normal((d, d))
            A = M @ M.T + d * np.eye(d)
            u, v, s, t = (rng.standard_normal(d) for _ in range(4))
            E = np.outer(u, v) + np.outer(s, t)
            lam = np.linalg.eigvals(np.linalg.solve(A, E))
            lam = lam[np.argsort(-np.abs(lam))][:2]
            lhs = np.linalg.det(A + E) / np.linalg.det(A) - 1.0
            rhs = (lam[0] + lam[1] + lam[0] * lam[1]).real
            worst_id = max(worst_id, abs(lhs - rhs) / max(1.0, abs(lhs)))
            # Theorem 9's setting: curvature c in [0, 1/4], rows in the unit ball, n(Lambda + Delta) = nl
            c, nl = 0.25, float(rng.uniform(0.5, 50))
            X = rng.standard_normal((6, d))
            X /= np.maximum(1.0, np.linalg.norm(X, axis=1))[:, None]
            curv = rng.uniform(0, c, 6)
            A2 = nl * np.eye(d) + (X * curv[:, None]).T @ X
            x_new = rng.standard_normal(d)
            x_new /= np.linalg.norm(x_new)
            E2 = curv[5] * np.outer(X[5], X[5]) - rng.uniform(0, c) * np.outer(x_new, x_new)
            mu = np.linalg.eigvals(np.linalg.solve(A2, E2))
            mu = mu[np.argsort(-np.abs(mu))][:2]
            worst_bound = max(worst_bound, float(np.sum(np.abs(mu))) / (2 * c / nl))
        rows.append({"d": d, "draws": draws, "max_identity_error": worst_id, "max_eigen_sum_over_bound": worst_bound})
    return pd.DataFrame(rows)


# ----------------------------------------------------------------------------------------------
# the noise sampler, Lemmas 16, 17, 19 and Theorem 27
# ----------------------------------------------------------------------------------------------
def noise_sampler_tests(dims: Sequence[int], beta: float, draws: int, random_state: int = 0) -> pd.DataFrame:
    """Eq. (4)'s law as the mechanisms draw it (``lattice``: exact rounding to the grid; ``continuous``: the float
    sampler): the Kolmogorov distance (and KS p-value) of ||b|| to Gamma(d, 1/beta) and of each direction's first
    coordinate to its law under a uniform direction ((u_1 + 1)/2 ~ Beta((d-1)/2, (d-1)/2); for d = 1 the direction is
    a sign, +-1 with probability 1/2 each, at distance ``|share of -1 - 1/2|``, with a binomial test); the rank
    correlation of norm and direction (independence)."""
    rng = np.random.default_rng(random_state)
    rows = []
    for noise in ("lattice", "continuous"):
        for d in dims:
            b = unit_gamma_noise(draws, d, noise, rng) / beta
            r = np.linalg.norm(b, axis=1)
            u1 = b[:, 0] / r
            ks_norm = stats.kstest(r, stats.gamma(a=d, scale=1 / beta).cdf)
            if d > 1:
                ks_dir = stats.kstest((u1 + 1) / 2, stats.beta((d - 1) / 2, (d - 1) / 2).cdf)
                dist_dir, p_dir = float(ks_dir.statistic), float(ks_dir.pvalue)
            else:
                negative = int(np.sum(u1 < 0))
                dist_dir, p_dir = abs(negative / draws - 0.5), float(stats.binomtest(negative, draws).pvalue)
            rows.append({"noise": noise, "d": d, "beta": beta, "draws": draws, "ks_norm": float(ks_norm.statistic),
                         "p_norm_gamma": float(ks_norm.pvalue), "ks_direction": dist_dir, "p_direction_uniform": p_dir,
                         "spearman_norm_direction": stats.spearmanr(r, u1).statistic})
    return pd.DataFrame(rows)


def lemma_17_grid(ks: Sequence[int], deltas: Sequence[float]) -> pd.DataFrame:
    """Lemma 17 exactly: P(X < k theta log(k/delta)) for X ~ Gamma(k, theta) (theta cancels) against 1 - delta."""
    rows = []
    for k in ks:
        for delta in deltas:
            p = stats.gamma(a=k).cdf(B.lemma_17_quantile(k, 1.0, delta))
            rows.append({"k": k, "delta": delta, "probability": p, "required": 1 - delta, "margin": p - (1 - delta)})
    return pd.DataFrame(rows)


def _toy(n: int, d: int, rng: np.random.Generator) -> tuple[Array, Array]:
    X = rng.standard_normal((n, d))
    X /= np.maximum(1.0, np.linalg.norm(X, axis=1))[:, None]
    y = np.where(X[:, 0] + 0.5 * rng.standard_normal(n) > 0, 1.0, -1.0)
    return X, y


def _objective(X: Array, y: Array, loss: MarginLoss, lam: float, W: Array, block: int = 2048) -> Array:
    """J(w) for every row w of W, ``block`` rows at a time: each J is computed with the same float operations as
    all at once (its own column of margins, summed over the rows in order), without the rows x draws temporaries
    (200,000 draws of 500 rows: 800 MB each)."""
    out = np.empty(len(W))
    for a in range(0, len(W), block):
        Wb = W[a:a + block]
        out[a:a + block] = np.mean(loss.value(y[:, None] * (X @ Wb.T)), axis=0) + 0.5 * lam * np.sum(Wb * Wb, axis=1)
    return out


def lemma_16_experiment(cases: Sequence[tuple[str, float, float, float]], draws: int, n: int = 500, d: int = 5,
                        random_state: int = 0) -> pd.DataFrame:
    """Lemma 16 (Algorithm 1): P(J(f_priv) - J(f*) > 2 d^2 (c + Lambda) log^2(d/delta) / (Lambda^2 n^2 eps^2)) against
    delta.  Cases are (loss, Lambda, eps, delta); eta = 1 for N = ||f||^2 / 2."""
    rng = np.random.default_rng(random_state)
    X, y = _toy(n, d, rng)
    rows = []
    for loss_name, lam, eps, delta in cases:
        loss = make_loss(loss_name)
        f = solve_smooth_erm(X, y, loss, lam).coef
        W = f + unit_gamma_noise(draws, d, "lattice", rng) / B.theorem_6_beta(eps, n, lam)
        excess = _objective(X, y, loss, lam, W) - _objective(X, y, loss, lam, f[None])[0]
        bound = B.lemma_16_excess_risk(d, loss.curvature, lam, 1.0, n, eps, delta)
        k = int(np.sum(excess > bound))
        lo, hi = clopper_pearson(k, draws)
        rows.append({"loss": loss_name, "Lambda": lam, "eps": eps, "delta": delta, "bound": bound,
                     "median_excess": float(np.median(excess)), "failures": k, "draws": draws, "p_hat": k / draws,
                     "cp_low": lo, "cp_high": hi})
    return pd.DataFrame(rows)


def lemma_19_experiment(cases: Sequence[tuple[str, float, float, float]], draws: int, n: int = 200, d: int = 5,
                        random_state: int = 0) -> pd.DataFrame:
    """Lemma 19 (Algorithm 2, eps' > 0): P(J(f_priv) - J(f*) > 4 d^2 log^2(d/delta) / (Lambda n^2 eps_p^2)) against delta,
    with the noise Algorithm 2 really adds (beta = eps'/2), all draws solved together; also the bound with eps' in
    place of eps_p."""
    rng = np.random.default_rng(random_state)
    X, y = _toy(n, d, rng)
    rows = []
    for loss_name, lam, eps, delta in cases:
        loss = make_loss(loss_name)
        params = B.theorem_9_parameters(eps, n, lam, loss.curvature)
        if params.branch != "eps' > 0":
            raise ValueError("Lemma 19 assumes the eps' > 0 branch")
        f = solve_smooth_erm(X, y, loss, lam, gtol=1e-12).coef
        W = objective_releases(Design(X, y), loss, lam, params, unit_gamma_noise(draws, d, "lattice", rng), data_norm=1.0,
                               solver_tol=1e-6, center=f)
        excess = _objective(X, y, loss, lam, W) - _objective(X, y, loss, lam, f[None])[0]
        bound = B.lemma_19_excess_risk(d, lam, n, eps, delta)
        bound_prime = B.lemma_19_excess_risk_derived(d, lam, n, params.epsilon_prime, delta)
        k = int(np.sum(excess > bound))
        lo, hi = clopper_pearson(k, draws)
        rows.append({"loss": loss_name, "Lambda": lam, "eps": eps, "eps_prime": params.epsilon_prime, "delta": delta,
                     "bound": bound, "bound_with_eps_prime": bound_prime, "q_1_minus_delta": float(np.quantile(excess, 1 - delta)),
                     "failures": k, "failures_eps_prime": int(np.sum(excess > bound_prime)), "draws": draws,
                     "p_hat": k / draws, "cp_low": lo, "cp_high": hi})
    return pd.DataFrame(rows)


def theorem_27_experiment(cases: Sequence[tuple[Sequence[int], float, float]], draws: int, random_state: int = 0) -> pd.DataFrame:
    """Theorem 27: P(z > z_min + (2/eps) log(m/delta)) for Algorithm 4's selection, exactly (its probabilities) and by
    simulation (vectorised Gumbel-max draws of the same law)."""
    rng = np.random.default_rng(random_state)
    rows = []
    for mistakes, eps, delta in cases:
        z = np.asarray(mistakes, dtype=float)
        bound = B.theorem_27_mistake_bound(z.min(), eps, len(z), delta)
        q = B.algorithm_4_probabilities(z, eps)
        exact = float(q[z > bound].sum())
        picks = np.argmax(-eps * z / 2 + rng.gumbel(size=(draws, len(z))), axis=1)
        k = int(np.sum(z[picks] > bound))
        rows.append({"m": len(z), "eps": eps, "delta": delta, "bound": bound, "exact_probability": exact,
                     "simulated": k / draws, "cp_high": clopper_pearson(k, draws)[1], "draws": draws})
    return pd.DataFrame(rows)


def corollaries_20_21(eps_g: float = 0.5, eps_p: float = 0.1, delta: float = 0.05, d: int = 2, f0_norm: float = 20.0,
                      h: float = 0.5) -> pd.DataFrame:
    """Corollaries 20-21 as specialisations of Theorems 15 and 18 (constants C = 1): logistic c = 1/4 (c^{1/2} folded
    into the constant), Huber c = 1/(2h) with l' 1/(2h)-Lipschitz; Corollary 21 part 2 as printed ("c = 1/4", E7)
    against c = 1/(2h).  The defaults make the c-dependent term the largest, so the constants show."""
    out20, obj20 = B.corollary_20_sample_sizes(eps_g, eps_p, delta, d, f0_norm)
    out21, obj21 = B.corollary_21_sample_sizes(eps_g, eps_p, delta, d, f0_norm, h)
    rows = [
        {"statement": "Corollary 20, Algorithm 1", "corollary": out20,
         "theorem": B.theorem_15_sample_size(eps_g, eps_p, delta, d, f0_norm, 1.0), "note": "Theorem 15 with c^(1/2) -> 1"},
        {"statement": "Corollary 20, Algorithm 2", "corollary": obj20,
         "theorem": B.theorem_18_sample_size(eps_g, eps_p, delta, d, f0_norm, 1.0), "note": "Theorem 18 with c -> 1"},
        {"statement": "Corollary 21, Algorithm 1", "corollary": out21,
         "theorem": B.theorem_15_sample_size(eps_g, eps_p, delta, d, f0_norm, 1.0 / h), "note": "Theorem 15 with c^(1/2) = h^(-1/2)"},
        {"statement": "Corollary 21, Algorithm 2", "corollary": obj21,
         "theorem": B.theorem_18_sample_size(eps_g, eps_p, delta, d, f0_norm, 1.0 / h), "note": "Theorem 18 with c = 1/h"},
        {"statement": "Corollary 21, Algorithm 2 as printed (c = 1/4)", "corollary": obj21,
         "theorem": B.theorem_18_sample_size(eps_g, eps_p, delta, d, f0_norm, 0.25), "note": "the printed constant"},
    ]
    df = pd.DataFrame(rows)
    df["ratio"] = df["corollary"] / df["theorem"]
    return df


def lemma_23_experiment(D_values: Sequence[int], Cbound: float, gamma: float, n_points: int, draws: int,
                        random_state: int = 0) -> pd.DataFrame:
    """The approximation step of Lemma 23 (and Theorems 24-25): f0(x) = E_theta[a0(theta) phi(x; theta)] with
    ``|a0| <= C`` is matched by f_p = (1/D) sum_j a0(theta_j) phi(x; theta_j) (D random features) to sup error
    O(C sqrt(log(1/delta) / D)) with ||f_p||^2 <= C^2 / D in the random-feature coordinates.  Measured, per draw of the
    D features: the sup error over ``n_points`` inputs in the unit ball (f0 computed with 2e5 features), whose decay in
    D the lemma's D = O(C^2 log(1/delta) / eps_g^2) needs to be D^(-1/2), and the norm ratio ||f_p||^2 D / C^2 <= 1.
    Columns: D, draw, sup_error, norm_ratio."""
    rng = np.random.default_rng(random_state)
    d = 3
    Xq = rng.standard_normal((n_points, d))
    Xq /= np.maximum(1.0, np.linalg.norm(Xq, axis=1))[:, None]

    def a0(om: Array, ps: Array) -> Array:  # a bounded coefficient function |a0| <= C
        return Cbound * np.cos(om[:, 0] + ps)

    def features(n_feat: int, r: np.random.Generator) -> tuple[Array, Array]:
        return r.normal(0, math.sqrt(2 * gamma), (n_feat, d)), r.uniform(-math.pi, math.pi, n_feat)

    om_ref, ps_ref = features(200_000, rng)
    f0 = np.zeros(n_points)
    for a in range(0, len(ps_ref), 20000):
        o, p = om_ref[a:a + 20000], ps_ref[a:a + 20000]
        f0 += np.cos(Xq @ o.T + p) @ a0(o, p)
    f0 /= len(ps_ref)
    rows = []
    for D in D_values:
        for k in range(draws):
            o, p = features(D, rng)
            coef = a0(o, p)
            fp = np.cos(Xq @ o.T + p) @ coef / D
            rows.append({"D": D, "draw": k, "sup_error": float(np.max(np.abs(fp - f0))),
                         "norm_ratio": float(coef @ coef) / D**2 * D / Cbound**2})
    return pd.DataFrame(rows)
# ----------------------------------------------------------------------------------------------
# Section 5: random features (Algorithm 3)
# ----------------------------------------------------------------------------------------------
# ----------------------------------------------------------------------------------------------
# Section 5: random features (Algorithm 3)
# ----------------------------------------------------------------------------------------------
def kernel_feature_norms(D_values: Sequence[int], gamma: float, n_points: int = 20000, random_state: int = 0) -> pd.DataFrame:
    """ERRATA C1 (E10): max ||v(x)|| of Algorithm 3's map sqrt(2/D) cos(w'x + psi) over random inputs, per D."""
    from dpkernels.random_features import RandomFourierFeatures

    rng = np.random.default_rng(random_state)
    X = rng.uniform(-1, 1, size=(n_points, 3)) / math.sqrt(3)
    rows = []
    for D in D_values:
        v = RandomFourierFeatures("rbf", math.sqrt(1 / (2 * gamma)), D, variant="phase", random_state=rng).fit_transform(X)
        nrm = np.linalg.norm(v, axis=1)
        rows.append({"D": D, "max_norm": float(nrm.max()), "share_above_1": float(np.mean(nrm > 1.0)), "bound_sqrt2": math.sqrt(2)})
    return pd.DataFrame(rows)
