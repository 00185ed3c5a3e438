"""SVDD (Park 2022, Eq. 4.2) in a finite feature space: min ||Phi' beta||^2 over the capped simplex, certified."""

from __future__ import annotations

import math
import warnings

import cvxpy as cp
import numpy as np
from sklearn.exceptions import ConvergenceWarning
from sklearn.svm import OneClassSVM

from dpkernels.solvers.common import Array, ERMSolution

__all__ = ["project_capped_simplex", "solve_svdd", "solve_svdd_cvxpy"]


def project_capped_simplex(v: Array, upper: float) -> Array:
    """Euclidean projection of v onto {b : 0 <= b_i <= upper, sum_i b_i = 1}, exactly, in O(n log n).

    The projection is clip(v - t, 0, upper) for the t with h(t) = sum_i clip(v_i - t, 0, upper) = 1; h is
    piecewise linear and non-increasing with breakpoints v_i and v_i - upper, so it is evaluated at all
    breakpoints with prefix sums of the sorted v and interpolated on the crossing segment.
    """
    n = v.shape[0]
    if upper * n < 1.0 - 1e-12:
        raise ValueError(f"the capped simplex is empty: n * upper = {n * upper:g} < 1")
    vs = np.sort(v)
    csum = np.concatenate([[0.0], np.cumsum(vs)])

    def h(t: Array) -> Array:
        hi = np.searchsorted(vs, t + upper, side="left")  # v_i < t + upper  (below the cap)
        lo = np.searchsorted(vs, t, side="right")  # v_i <= t             (at zero)
        capped = n - hi
        partial_sum = csum[hi] - csum[lo]
        return upper * capped + partial_sum - t * (hi - lo)

    bps = np.unique(np.concatenate([vs, vs - upper]))
    hv = h(bps)
    k = int(np.searchsorted(-hv, -1.0, side="left"))  # first breakpoint with h <= 1
    if k == 0:
        t = float(bps[0])
    elif k >= len(bps):
        t = float(bps[-1])
    else:
        t0, t1, h0, h1 = bps[k - 1], bps[k], hv[k - 1], hv[k]
        t = float(t0 + (h0 - 1.0) * (t1 - t0) / (h0 - h1)) if h0 != h1 else float(t1)
    return np.clip(v - t, 0.0, upper)


def _svdd_fw_gap(grad: Array, beta: Array, upper: float) -> float:
    """Frank-Wolfe gap grad'(beta - s), s the capped-simplex vertex minimising grad's' (an upper bound on f(beta) - f*)."""
    order = np.argsort(grad)
    s = np.zeros_like(beta)
    full = int(math.floor(1.0 / upper + 1e-12))
    s[order[:full]] = upper
    rest = 1.0 - upper * full
    if rest > 1e-15 and full < len(s):
        s[order[full]] = rest
    return float(grad @ (beta - s))


def _svdd_pdas(Phi: Array, upper: float, beta: Array, max_iter: int = 8) -> tuple[Array, bool]:
    """Active-set polish of the capped-simplex QP from the partition of ``beta``: each step solves the KKT system
    on the free set exactly; returns the iterate with the smallest Frank-Wolfe gap and whether the partition
    became self-consistent (KKT up to round-off)."""
    rel = 1e-7 * upper
    up = beta > upper - rel
    lo = beta < rel
    best, best_gap = beta, _svdd_fw_gap(2.0 * (Phi @ (Phi.T @ beta)), beta, upper)
    for _ in range(max_iter):
        free = ~(up | lo)
        nf = int(free.sum())
        if nf == 0 or nf > 2 * Phi.shape[1] + 2:
            break
        b = upper * (up.astype(np.float64) @ Phi)
        Pf = Phi[free]
        M = np.zeros((nf + 1, nf + 1))
        M[:nf, :nf] = 2.0 * (Pf @ Pf.T)
        M[:nf, nf] = -1.0
        M[nf, :nf] = 1.0
        rhs = np.concatenate([-2.0 * (Pf @ b), [1.0 - upper * up.sum()]])
        sol = np.linalg.lstsq(M, rhs, rcond=None)[0]
        new = np.where(up, upper, 0.0)
        new[free] = sol[:nf]
        nu = sol[nf]
        feasible = np.clip(new, 0.0, upper)
        feasible /= feasible.sum()  # stays within the caps up to round-off
        grad = 2.0 * (Phi @ (Phi.T @ feasible))
        gap = _svdd_fw_gap(grad, feasible, upper)
        if gap < best_gap:
            best, best_gap = feasible, gap
        slack = 1e-12 * max(1.0, float(np.abs(grad).max()))
        trial = new - (grad - nu) * upper
        new_up = trial > upper + slack * upper
        new_lo = trial < -slack * upper
        if (np.array_equal(new_up, up) and np.array_equal(new_lo, lo)) or gap <= 1e-16:
            return best, True
        up, lo = new_up, new_lo
    return best, False


def _svdd_fista(Phi: Array, upper: float, beta0: Array, gap_stop: float, max_iter: int) -> tuple[Array, int]:
    """Accelerated projected gradient on ||Phi' beta||^2 over the capped simplex (a small working set)."""
    v = np.ones(Phi.shape[1]) / math.sqrt(Phi.shape[1])
    for _ in range(30):
        v = Phi.T @ (Phi @ v)
        v /= np.linalg.norm(v)
    Lip = 2.0 * float(np.linalg.norm(Phi @ v)) ** 2 * 1.01
    beta, z, t = beta0.copy(), beta0.copy(), 1.0
    it = 0
    for it in range(1, max_iter + 1):
        beta_new = project_capped_simplex(z - 2.0 * (Phi @ (Phi.T @ z)) / Lip, upper)
        t_new = 0.5 * (1.0 + math.sqrt(1.0 + 4.0 * t * t))
        z = beta_new + ((t - 1.0) / t_new) * (beta_new - beta)
        beta, t = beta_new, t_new
        if it % 20 == 0 and _svdd_fw_gap(2.0 * (Phi @ (Phi.T @ beta)), beta, upper) <= gap_stop:
            break
    return beta, it


def solve_svdd(Phi: Array, upper: float, *, gap_tol: float = 1e-14, libsvm_tol: float = 1e-9, max_rounds: int = 20) -> ERMSolution:
    """SVDD centre in a finite feature space: a = Phi' beta, beta = argmin ||Phi' beta||^2 over 0 <= beta <= upper,
    sum beta = 1 (Park 2022, Eq. 4.2, whose objective sum beta_j K_jj - ||a||^2 has K_jj = 1 for random Fourier
    features, so only ||a||^2 matters).

    This is the one-class SVM dual with nu = 1/(n upper) and a linear kernel on the features (Tax and Duin's
    equivalence), which libsvm (scikit-learn ``OneClassSVM``) solves fast; an active-set polish then solves the
    KKT system exactly.  If that does not certify ``gap_tol``, a matrix-free working-set method takes over:
    the points with the smallest gradients 2 phi_i'a are solved exactly (FISTA with the exact capped-simplex
    projection, then the polish), violators of the KKT threshold join, and the step repeats.  The Frank-Wolfe
    gap G of the full problem certifies ||a - a*||^2 <= f(beta) - f* <= G (||a||^2 is 2-strongly convex in a);
    ``distance_bound`` = sqrt(G).  ``alpha`` holds beta, ``coef`` the centre a.
    """
    n, F = Phi.shape
    if upper * n < 1.0 - 1e-12:
        raise ValueError(f"infeasible SVDD: n * (C/n) = {n * upper:g} < 1 (the duals must sum to 1)")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        oc = OneClassSVM(kernel="linear", nu=min(1.0, 1.0 / (n * upper)), tol=libsvm_tol, cache_size=500).fit(Phi)
    beta = np.zeros(n)
    beta[oc.support_] = np.clip(oc.dual_coef_.ravel() * upper, 0.0, upper)
    beta /= beta.sum()
    beta, _ = _svdd_pdas(Phi, upper, beta)
    a = Phi.T @ beta
    gap = max(_svdd_fw_gap(2.0 * (Phi @ a), beta, upper), 0.0)
    method, total_it = "libsvm+active-set", 0
    if gap > gap_tol:
        ws = _svdd_working_set(Phi, upper, a, max_rounds)
        ws_gap = max(_svdd_fw_gap(2.0 * (Phi @ (Phi.T @ ws[0])), ws[0], upper), 0.0)
        if ws_gap < gap:
            beta, total_it, gap, method = ws[0], ws[1], ws_gap, "working-set fista+active-set"
            a = Phi.T @ beta
    return ERMSolution(coef=a, objective=float(a @ a), distance_bound=math.sqrt(gap), method=method,
                       n_iter=total_it, converged=gap <= gap_tol, alpha=beta, gap=gap)


def _svdd_working_set(Phi: Array, upper: float, a: Array, max_rounds: int) -> tuple[Array, int]:
    """The fallback of :func:`solve_svdd`: working set of the smallest gradients, solved exactly, grown by violators."""
    n, F = Phi.shape
    m = min(n, max(4 * (F + 1), int(math.ceil(2.0 / upper))))
    work = np.zeros(n, dtype=bool)
    work[np.argsort(Phi @ a)[:m]] = True
    beta = np.zeros(n)
    total_it = 0
    for _ in range(max_rounds):
        idx = np.flatnonzero(work)
        Pw = Phi[idx]
        bw = beta[idx] if beta[idx].sum() > 0.5 else np.full(len(idx), 1.0 / len(idx))
        bw = project_capped_simplex(bw, upper)
        for gap_stop in (1e-6, 1e-8, 1e-10):  # solve the working set just well enough for the polish to land
            bw, it = _svdd_fista(Pw, upper, bw, gap_stop, 20000)
            total_it += it
            polished, ok = _svdd_pdas(Pw, upper, bw)
            if ok:
                bw = polished
                break
        beta = np.zeros(n)
        beta[idx] = bw
        a = Phi.T @ beta
        grad = 2.0 * (Phi @ a)
        inside = bw > 1e-9 * upper
        nu = float(grad[idx][inside].max()) if inside.any() else float(grad.min())  # KKT threshold
        viol = (~work) & (grad < nu - 1e-12)
        if not viol.any():
            break
        add = np.flatnonzero(viol)
        add = add[np.argsort(grad[add])[: max(m // 2, 50)]]
        work[add] = True
    return beta, total_it


def solve_svdd_cvxpy(upper: float, *, Phi: Array | None = None, K: Array | None = None, eps: float = 1e-10) -> Array:
    """Reference: the SVDD dual (Park 2022, Eq. 4.2) with cvxpy/Clarabel, from features or a Gram matrix; returns beta."""
    if (Phi is None) == (K is None):
        raise ValueError("give exactly one of Phi or K")
    if Phi is None:
        vals, vecs = np.linalg.eigh(0.5 * (K + K.T))
        keep = vals > max(vals.max(), 1.0) * 1e-13
        factor = vecs[:, keep] * np.sqrt(vals[keep])
        diag = np.diag(K)
    else:
        factor, diag = Phi, np.sum(Phi * Phi, axis=1)
    n = factor.shape[0]
    b = cp.Variable(n)
    prob = cp.Problem(cp.Maximize(diag @ b - cp.sum_squares(factor.T @ b)), [b >= 0, b <= upper, cp.sum(b) == 1])
    prob.solve(solver="CLARABEL", tol_gap_abs=eps, tol_gap_rel=eps, tol_feas=eps)
    if b.value is None:
        raise RuntimeError(f"cvxpy failed on the SVDD dual: {prob.status}")
    return np.clip(np.asarray(b.value, dtype=np.float64), 0.0, upper)
