"""SVDD (Park 2022, Eq. 4.2) in a finite feature space: min ||Phi' beta||^2 over the capped simplex, certified.

The problem.  With unit-norm features (random Fourier features: K_jj = 1), Eq. (4.2)'s dual
max sum_j beta_j K_jj - ||Phi' beta||^2 over {0 <= beta <= u, sum beta = 1} (u = C/n) is
min_beta ||Phi' beta||^2, the one-class SVM dual with nu = 1/(n u) and a linear kernel on the features
(Tax and Duin's equivalence).  The centre a = Phi' beta is unique (||a||^2 is strictly convex in a); beta is not
when n > F.

The certificate.  With m = Phi a and rho the threshold at which the capped simplex's Frank-Wolfe vertex fills
(the ceil(1/u)-th smallest m_i), the Frank-Wolfe gap is

    G = 2 sum_i [beta_i (m_i - rho)_+ + (u - beta_i)(rho - m_i)_+]  >=  f(beta) - f*  >=  ||a - a*||^2

(a sum of non-negative terms: no cancellation; :func:`svdd_duality_gap`), so ``distance_bound`` = sqrt(G).

The method (:func:`solve_svdd`).  libsvm (scikit-learn ``OneClassSVM``) gives a warm start; a primal-dual
active-set step solves the KKT system on its free set exactly (when at most F + 1 duals are free, the generic
size of the free set at the optimum); if that does not certify, the dual restricted to the points whose m_i lies
near the threshold is solved exactly by Clarabel (the others held at the bound their side of the threshold
implies), points whose bound the solution contradicts join, and the step repeats; the whole problem goes to
Clarabel only when the working set would exceed half the data.  Near-orthogonal features with n > F (a large
gamma on spread-out data) make the optimum degenerate (0 can lie in the capped hull of the features: many
optimal beta, many points on the threshold); the working set handles that case in about a second where
first-order methods need minutes.  ``n u = 1`` leaves one feasible point, beta = 1/n (libsvm fails there).
"""

from __future__ import annotations

import math
import warnings

import clarabel
import numpy as np
from scipy import sparse
from scipy.linalg import LinAlgError, cho_factor, cho_solve
from sklearn.exceptions import ConvergenceWarning
from sklearn.svm import OneClassSVM

from dpkernels.solvers.common import Array, ERMSolution, clarabel_qp

__all__ = ["project_capped_simplex", "svdd_duality_gap", "solve_svdd", "solve_svdd_cvxpy"]

#: libsvm's tolerance for the warm start.
LIBSVM_TOL = 1e-6
#: Half-widths ``|m_i - rho| <= width * (spread of m)`` of the working sets solved exactly, tried in turn.
WORKING_SET_WIDTHS = (1e-3, 1e-2, 1e-1)
#: Working sets up to this size use the Gram form of the restricted dual, larger ones the lifted form.
DENSE_DUAL_MAX = 400
#: Growth rounds of one working set.
WORKING_SET_ROUNDS = 6


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


def _threshold(m: Array, upper: float) -> float:
    """rho: the m_i at which the Frank-Wolfe vertex of the capped simplex (u on the smallest m) fills up."""
    full = min(int(math.floor(1.0 / upper + 1e-12)), m.shape[0] - 1)
    return float(np.partition(m, full)[full])


def svdd_duality_gap(m: Array, beta: Array, upper: float) -> float:
    """The Frank-Wolfe gap of the SVDD dual at beta (m = Phi Phi' beta), as a sum of non-negative terms.

    G = 2 sum_i [beta_i (m_i - rho)_+ + (u - beta_i)(rho - m_i)_+] equals grad f(beta)'(beta - s) for the
    minimising vertex s (it uses sum beta = 1 and ||a||^2 = beta'm); G >= f(beta) - f* >= ||a - a*||^2.
    """
    rho = _threshold(m, upper)
    return 2.0 * float(np.sum(beta * np.maximum(m - rho, 0.0) + (upper - beta) * np.maximum(rho - m, 0.0)))


def _pdas(Phi: Array, upper: float, beta: Array, max_iter: int = 8) -> Array:
    """Active-set polish of the capped-simplex QP from the partition of ``beta``: each step solves the KKT system
    on the free set exactly (Cholesky of the free Gram matrix, bordered by the equality constraint); it stops
    when the partition is self-consistent or more than F + 1 duals would be free (where the free Gram matrix is
    singular and the optimum is degenerate).  Returns the iterate with the smallest gap."""
    n, F = Phi.shape
    rel = 1e-7 * upper
    up, lo = beta > upper - rel, beta < rel
    best, best_gap = beta, svdd_duality_gap(Phi @ (Phi.T @ beta), beta, upper)
    for _ in range(max_iter):
        free = ~(up | lo)
        nf = int(free.sum())
        if nf == 0 or nf > F + 1:
            break
        b = upper * (up.astype(np.float64) @ Phi)
        Pf = Phi[free]
        G = Pf @ Pf.T
        s = 1.0 - upper * up.sum()
        # min ||b + Pf' x||^2 s.t. 1'x = s:  G x = -Pf b + nu/2 1, 1'x = s
        try:
            fac = cho_factor(G + 1e-14 * np.trace(G) / nf * np.eye(nf))
            x0, x1 = cho_solve(fac, -(Pf @ b)), cho_solve(fac, np.ones(nf))
        except LinAlgError:
            break
        half_nu = (s - x0.sum()) / x1.sum()
        new = np.where(up, upper, 0.0)
        new[free] = x0 + half_nu * x1
        feasible = project_capped_simplex(new, upper)
        m = Phi @ (Phi.T @ feasible)
        gap = svdd_duality_gap(m, feasible, upper)
        if gap < best_gap:
            best, best_gap = feasible, gap
        grad_dev = m - half_nu  # (grad f)/2 - nu/2: < 0 should be at the cap, > 0 at zero
        new_up = (new > upper) | (up & (grad_dev < 0))
        new_lo = (new < 0) | (lo & (grad_dev > 0))
        new_up &= ~new_lo
        if (np.array_equal(new_up, up) and np.array_equal(new_lo, lo)) or gap <= 1e-16:
            break
        up, lo = new_up, new_lo
    return best


def _restricted_dual(PW: Array, offset: Array, total: float, upper: float) -> Array | None:
    """argmin ||offset + PW' x||^2 over {0 <= x <= upper, sum x = total}, with Clarabel (tolerances 1e-12).

    Up to ``DENSE_DUAL_MAX`` rows the quadratic form is the Gram matrix PW PW'; beyond, the lifted form with
    z = offset + PW' x keeps the KKT system linear in the number of rows.  ``None`` when Clarabel does not solve.
    """
    m, F = PW.shape
    box = sparse.vstack([sparse.eye(m), -sparse.eye(m)])
    bounds = np.concatenate([np.full(m, upper), np.zeros(m)])
    ones = sparse.csc_matrix(np.ones((1, m)))
    if m <= DENSE_DUAL_MAX:
        P = sparse.csc_matrix(np.triu(2.0 * (PW @ PW.T)))
        q = 2.0 * (PW @ offset)
        cons = sparse.vstack([ones, box]).tocsc()
        rhs = np.concatenate([[total], bounds])
        cones = [clarabel.ZeroConeT(1), clarabel.NonnegativeConeT(2 * m)]
    else:
        P = sparse.block_diag([sparse.csc_matrix((m, m)), 2.0 * sparse.eye(F)]).tocsc()
        q = np.zeros(m + F)
        cons = sparse.vstack([sparse.hstack([sparse.csc_matrix(-PW.T), sparse.eye(F)]),
                              sparse.hstack([ones, sparse.csc_matrix((1, F))]),
                              sparse.hstack([box, sparse.csc_matrix((2 * m, F))])]).tocsc()
        rhs = np.concatenate([offset, [total], bounds])
        cones = [clarabel.ZeroConeT(F + 1), clarabel.NonnegativeConeT(2 * m)]
    x = clarabel_qp(P, q, cons, rhs, cones)
    return None if x is None else x[:m]


def _working_set(Phi: Array, upper: float, m: Array, width: float) -> Array | None:
    """Duals from the SVDD dual restricted to the points with ``|m_i - rho| <= width``, the others held at u (below
    the threshold) or 0 (above); points whose bound the solution contradicts join and the QP is solved again.
    Any feasible beta is certified by the full gap, so a wrong guess costs accuracy, never validity.  ``None``
    when Clarabel fails or the set exceeds half the data."""
    n = Phi.shape[0]
    rho = _threshold(m, upper)
    W = np.abs(m - rho) <= width
    below = (m < rho) & ~W
    beta = None
    for _ in range(WORKING_SET_ROUNDS):
        if 2 * W.sum() > n or upper * below.sum() >= 1.0:
            return beta
        b = upper * (below.astype(np.float64) @ Phi)
        x = _restricted_dual(Phi[W], b, 1.0 - upper * below.sum(), upper)
        if x is None:
            return beta
        new = np.where(below, upper, 0.0)
        new[W] = x
        beta = project_capped_simplex(new, upper)
        m = Phi @ (Phi.T @ beta)
        rho = _threshold(m, upper)
        wrong = (below & (m > rho)) | (~below & ~W & (m < rho))
        if not wrong.any():
            return beta
        W |= wrong
        below &= ~W
    return beta


def solve_svdd(Phi: Array, upper: float, *, gap_tol: float = 1e-14, distance_tol: float | None = None) -> ERMSolution:
    """SVDD centre in a finite feature space: a = Phi' beta, beta = argmin ||Phi' beta||^2 over 0 <= beta <= upper,
    sum beta = 1 (Park 2022, Eq. 4.2; see the module docstring for the method and the certificate).

    The solution is accepted when the gap G <= ``gap_tol`` or, if ``distance_tol`` is given (a mechanism's
    solver_tol x sensitivity), when sqrt(G) <= distance_tol.  ``distance_bound`` = sqrt(G) certifies ||a - a*||;
    ``alpha`` holds beta, ``coef`` the centre a, ``converged`` whether the target was met.
    """
    n, F = Phi.shape
    if upper * n < 1.0 - 1e-12:
        raise ValueError(f"infeasible SVDD: n * (C/n) = {n * upper:g} < 1 (the duals must sum to 1)")
    target = gap_tol if distance_tol is None else max(gap_tol, float(distance_tol) ** 2)

    def result(beta: Array, method: str) -> ERMSolution:
        a = Phi.T @ beta
        gap = svdd_duality_gap(Phi @ a, beta, upper)
        return ERMSolution(coef=a, objective=float(a @ a), distance_bound=math.sqrt(gap), method=method, n_iter=0,
                           converged=gap <= target, alpha=beta, gap=gap)

    if upper * n <= 1.0 + 1e-12:  # the only feasible point
        return result(np.full(n, 1.0 / n), "uniform (n C/n = 1)")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        oc = OneClassSVM(kernel="linear", nu=1.0 / (n * upper), tol=LIBSVM_TOL, cache_size=500).fit(Phi)
    beta = np.zeros(n)
    beta[oc.support_] = oc.dual_coef_.ravel() * upper
    beta = project_capped_simplex(beta, upper)
    best = result(_pdas(Phi, upper, beta), "libsvm+active-set")
    if best.converged:
        return best
    m = Phi @ best.coef
    spread = float(np.ptp(m)) or 1.0
    for width in WORKING_SET_WIDTHS:
        ws = _working_set(Phi, upper, m, width * spread)
        if ws is None:
            continue
        cand = result(_pdas(Phi, upper, ws), f"working set |m - rho| <= {width:g} (Clarabel)+active-set")
        if cand.gap < best.gap:
            best = cand
        if best.converged:
            return best
        m = Phi @ best.coef
    x = _restricted_dual(Phi, np.zeros(F), 1.0, upper)  # the whole problem
    if x is not None:
        cand = result(project_capped_simplex(x, upper), "Clarabel (whole problem)")
        if cand.gap < best.gap:
            best = cand
    return best


def solve_svdd_cvxpy(upper: float, *, Phi: Array | None = None, K: Array | None = None, eps: float = 1e-10) -> Array:
    """Reference: the SVDD dual (Park 2022, Eq. 4.2) with cvxpy/Clarabel, from features or a Gram matrix; returns beta."""
    import cvxpy as cp

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
