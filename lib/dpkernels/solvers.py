"""Solvers for the papers' regularised ERM problems, each with a certified optimality tolerance.

Conventions.  All linear problems are written in Chaudhuri et al.'s form

    J(w) = (1/n) sum_i l(y_i <w, x_i>) + (Lambda/2) ||w||^2 + (1/n) <b, w>,

which is Lambda-strongly convex.  Rubinstein et al.'s SVM primal (1/2)||w||^2 + (C/n) sum_i l(...)
equals C J(w) with Lambda = 1/C (and b = 0), so the same minimiser.

Why certificates.  The privacy proofs (Rubinstein et al. Lemma 9, Chaudhuri et al. Corollary 8,
Park Corollary 4.2) bound the sensitivity of the *exact* minimiser w*.  A solver returning w with
||w - w*|| <= eta adds at most 2 eta to the L2 sensitivity.  Every solver here therefore returns
``distance_bound``, a certified upper bound on ||w - w*||_2:

* smooth losses (:func:`solve_smooth_erm`): damped Newton (exact Hessian for d <= 512, conjugate
  gradients beyond), stopped when ||grad J(w)|| <= ``gtol``; strong convexity gives
  ||w - w*|| <= ||grad J(w)|| / Lambda.
* hinge loss (:func:`solve_hinge_primal`): liblinear's dual coordinate descent (scikit-learn
  ``LinearSVC``) for a warm start, the dual restricted to the points near its margin solved exactly
  (Clarabel), then a primal-dual active-set polish that solves the KKT system of the dual exactly; the
  duality gap is computed as a sum of non-negative complementarity terms (no cancellation), and
  ||w(alpha) - w*||^2 <= 2 gap / Lambda.
* :func:`solve_hinge_dual_cvxpy`: the dual QP (Rubinstein et al. Eq. 1) with cvxpy / Clarabel, the
  exact reference for small n (and for kernels given only through a Gram matrix).
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass, field

import clarabel
import cvxpy as cp
import numpy as np
from numpy.typing import NDArray
from scipy import sparse
from scipy.linalg import LinAlgError, cho_factor, cho_solve
from scipy.optimize import lsq_linear
from scipy.sparse.linalg import LinearOperator, cg
from sklearn.exceptions import ConvergenceWarning
from sklearn.svm import LinearSVC, OneClassSVM

from dpkernels._validation import check_positive
from dpkernels.losses import Hinge, MarginLoss

__all__ = [
    "ERMSolution",
    "erm_objective",
    "solve_smooth_erm",
    "solve_hinge_primal",
    "solve_hinge_dual_cvxpy",
    "hinge_duality_gap",
    "solve_erm",
    "project_capped_simplex",
    "solve_svdd",
    "solve_svdd_cvxpy",
]

Array = NDArray[np.float64]

#: Default gradient-norm tolerance of the smooth solver (absolute, on J).
SMOOTH_GTOL = 1e-10
#: Default relative duality-gap tolerance of the hinge solver.
HINGE_GAP_RTOL = 1e-10
#: Free-set thresholds tried by the hinge active-set polish, in order, relative to the warm start's tolerance.
POLISH_THRESHOLD_FACTORS = (10.0, 1.0, 100.0)
#: liblinear tolerances tried in turn for the warm start (the first is ``liblinear_tol``'s default, LinearSVC's
#: own: on Adult its run costs what LinearSVC's does, as copying the data into liblinear dominates).
LIBLINEAR_TOLS = (1e-4, 1e-6, 1e-10)
#: Iterations of each active-set polish from a warm start (it converges in 1-3 when it converges at all; a
#: cycling polish hands over to the larger working sets).
PDAS_MAX_ITER = 5
#: Margin half-widths |m - 1| <= width of the working sets whose dual is solved exactly (Clarabel), tried in turn
#: right after the warm start (small sets only, ``DENSE_DUAL_MAX``) and after the active-set polish (any size).
FAST_WORKING_SET_WIDTHS = (3e-4, 1e-3)
WORKING_SET_WIDTHS = (1e-4, 1e-3, 1e-2)
#: The working-set QP is skipped when more points than this lie in the set.
WORKING_SET_MAX = 8_000
#: Working sets up to this size use the Gram-matrix form of the restricted dual, larger ones the lifted form.
DENSE_DUAL_MAX = 400
#: The hinge solver falls back to cvxpy when the polish fails and n is at most this.
CVXPY_FALLBACK_MAX_N = 5000
#: Once ||grad|| < 1e-6, Newton stops when the gradient norm has not fallen by 10% for this many iterations
#: (cycling between the pieces of a piecewise-quadratic loss; the certificate ||grad|| / lambda is reported).
STALL_ITERATIONS = 15
#: Dense Newton up to this many features, Newton-CG beyond.
DENSE_NEWTON_MAX_DIM = 512


@dataclass
class ERMSolution:
    """A minimiser with its optimality certificate."""

    coef: Array
    objective: float
    distance_bound: float  #: certified upper bound on ||coef - w*||_2
    method: str
    n_iter: int
    converged: bool
    intercept: float = 0.0
    alpha: Array | None = field(default=None, repr=False)  #: dual variables (hinge, Rubinstein's scaling)
    gap: float | None = None
    grad_norm: float | None = None


def erm_objective(
    w: Array,
    X: Array,
    y: Array,
    loss: MarginLoss,
    lam: float,
    b: Array | None = None,
    intercept: float = 0.0,
) -> float:
    """J(w) = (1/n) sum l(y_i (<w, x_i> + intercept)) + (lam/2)||w||^2 + (1/n)<b, w>."""
    n = X.shape[0]
    val = float(np.mean(loss.value(y * (X @ w + intercept)))) + 0.5 * lam * float(w @ w)
    if b is not None:
        val += float(b @ w) / n
    return val


def solve_smooth_erm(
    X: Array,
    y: Array,
    loss: MarginLoss,
    lam: float,
    *,
    b: Array | None = None,
    fit_intercept: bool = False,
    gtol: float = SMOOTH_GTOL,
    max_iter: int = 500,
    w0: Array | None = None,
) -> ERMSolution:
    """Minimise J for a differentiable loss by damped Newton with Armijo backtracking.

    ``b`` is Chaudhuri et al.'s objective-perturbation vector (term (1/n)<b, w>).  With
    ``fit_intercept`` an unpenalised intercept is appended; the certificate
    ||w - w*|| <= ||grad|| / lam then covers the weights only approximately (the intercept direction is
    not strongly convex), which is recorded by ``distance_bound = nan`` unless the gradient is zero.
    """
    lam = check_positive(lam, "lam (regularisation)")
    if not loss.smooth:
        raise ValueError(f"solve_smooth_erm needs a differentiable loss, got {loss.name}")
    n, d = X.shape
    Xa = np.hstack([X, np.ones((n, 1))]) if fit_intercept else X
    p = Xa.shape[1]
    reg = np.full(p, lam)
    if fit_intercept:
        reg[-1] = 0.0
    lin = np.zeros(p)
    if b is not None:
        lin[:d] = np.asarray(b, dtype=np.float64) / n
    theta = np.zeros(p) if w0 is None else np.array(w0, dtype=np.float64)
    if fit_intercept and theta.shape[0] == d:
        theta = np.append(theta, 0.0)

    def fun(t: Array) -> tuple[float, Array, Array]:
        z = y * (Xa @ t)
        f = float(np.mean(loss.value(z))) + 0.5 * float(reg @ (t * t)) + float(lin @ t)
        g = Xa.T @ (y * loss.derivative(z)) / n + reg * t + lin
        return f, g, z

    f, g, z = fun(theta)
    gnorm = float(np.linalg.norm(g))
    it = 0
    Xa32: NDArray[np.float32] | None = None
    # float32 Hessians pay off on large problems; with a tiny regulariser the Hessian's condition number
    # (up to ~ curvature / lam) would swamp float32's 1e-7 relative precision
    single = Xa.shape[0] * p >= 1_000_000 and lam >= 1e-5
    best_gnorm, best_it, best_theta = gnorm, 0, theta
    factor: tuple[Array, bool] | None = None
    factor64 = False
    last_step = math.inf
    while gnorm > gtol and it < max_iter:
        it += 1
        curv = loss.second_derivative(z)
        if (p <= DENSE_NEWTON_MAX_DIM and factor is not None and factor64 and gnorm <= 1e-6
                and last_step <= 1e-6 * (1.0 + float(np.linalg.norm(theta)))):
            # near the solution the last (float64) factorisation still contracts the gradient by orders of magnitude
            step = -cho_solve(factor, g)
        elif p <= DENSE_NEWTON_MAX_DIM:
            # The Hessian only steers the step (the stopping rule uses the float64 gradient), so on large
            # problems it is accumulated in float32 (half the memory traffic); an ill-conditioned Hessian
            # (Cholesky failure or a poor step) switches this solve back to float64.
            step = None
            for use32 in ((True, False) if single and gnorm > 1e-6 else (False,)):
                if use32:
                    if Xa32 is None:
                        Xa32 = Xa.astype(np.float32)
                    H = ((Xa32 * curv[:, None].astype(np.float32)).T @ Xa32).astype(np.float64) / n
                else:
                    H = (Xa * curv[:, None]).T @ Xa / n
                H[np.diag_indices(p)] += reg + 1e-15 * (reg == 0)
                try:
                    factor, factor64 = cho_factor(H), not use32
                    step = -cho_solve(factor, g)
                    if not use32 and gnorm <= 1e-6:  # ill-conditioned end game: one step of iterative refinement
                        step -= cho_solve(factor, H @ step + g)
                    break
                except LinAlgError:
                    factor = None
                    single = False
            if step is None:
                step = -np.linalg.lstsq(H, g, rcond=None)[0]
        else:
            op = LinearOperator((p, p), matvec=lambda v, c=curv: Xa.T @ (c * (Xa @ v)) / n + reg * v, dtype=np.float64)
            step, _ = cg(op, -g, rtol=min(0.5, math.sqrt(gnorm)), maxiter=200)
        accepted = False
        flat = False
        for direction in (step, -g):  # the Newton step, else steepest descent (e.g. a singular Hessian)
            slope = float(g @ direction)
            if slope >= 0:  # not a descent direction (numerical trouble)
                continue
            flat = abs(slope) <= 1e-12 * max(1.0, abs(f))  # predicted decrease below the round-off of f
            t = 1.0
            while t >= 1e-10:
                f_new, g_new, z_new = fun(theta + t * direction)
                if f_new <= f + 1e-4 * t * slope or (flat and np.linalg.norm(g_new) < gnorm):
                    accepted = True
                    break
                t *= 0.5
            if accepted:
                step = direction
                break
        if not accepted:  # no decrease along any descent direction: flat to round-off
            break
        theta = theta + t * step
        last_step = t * float(np.linalg.norm(step))
        f, g, z = f_new, g_new, z_new
        if t < 1e-3:  # a poor Newton direction: no more float32 Hessians in this solve
            single = False
        gnorm = float(np.linalg.norm(g))
        if gnorm < best_gnorm:
            if gnorm < 0.9 * best_gnorm:
                best_it = it
            best_gnorm, best_theta = gnorm, theta
        if gnorm < 1e-6 and it - best_it >= STALL_ITERATIONS:  # end game cycling between pieces of a piecewise-quadratic loss
            break
    theta, gnorm = best_theta, best_gnorm  # the iterate with the smallest gradient carries the certificate
    f = fun(theta)[0]
    converged = gnorm <= gtol
    w = theta[:d]
    intercept = float(theta[d]) if fit_intercept else 0.0
    bound = gnorm / lam if not fit_intercept else (0.0 if gnorm == 0 else float("nan"))
    return ERMSolution(
        coef=w, intercept=intercept, objective=f, distance_bound=bound, method="newton",
        n_iter=it, converged=converged, grad_norm=gnorm,
    )


def hinge_duality_gap(margins: Array, alpha: Array, upper: float) -> float:
    """Duality gap of Rubinstein et al.'s primal/dual pair at (w(alpha), alpha), without cancellation.

    With P(w) = (1/2)||w||^2 + u sum (1 - m_i)_+ (u = C/n), D(alpha) = sum alpha_i - (1/2)||w(alpha)||^2,
    w(alpha) = sum alpha_i y_i x_i and m_i = y_i <w(alpha), x_i>, one has ||w||^2 = sum alpha_i m_i, so
    P - D = sum_i [alpha_i (m_i - 1)_+ + (u - alpha_i)(1 - m_i)_+], a sum of non-negative terms.
    """
    return float(np.sum(alpha * np.maximum(margins - 1.0, 0.0) + (upper - alpha) * np.maximum(1.0 - margins, 0.0)))


@dataclass(frozen=True)
class _SignedRows:
    """The rows a_i = y_i x_i of the hinge dual, kept as (X, y): forming y * X would copy the whole design."""

    X: Array
    y: Array

    @property
    def n_features(self) -> int:
        return self.X.shape[1]

    def margins(self, w: Array) -> Array:
        """m_i = <a_i, w>."""
        return self.y * (self.X @ w)

    def combine(self, coef: Array) -> Array:
        """sum_i coef_i a_i."""
        return (coef * self.y) @ self.X

    def rows(self, mask: NDArray[np.bool_]) -> Array:
        """The rows a_i with mask_i, as an array."""
        return self.X[mask] * self.y[mask, None]


def _pdas(
    A: _SignedRows, upper: float, upper_set: NDArray[np.bool_], lower_set: NDArray[np.bool_], max_iter: int = 10
) -> tuple[Array, Array, Array, int, bool]:
    """Primal-dual active-set method for the dual min (1/2) a'AA'a - 1'a, 0 <= a <= upper (rows of A: y_i x_i).

    Starts from a guessed partition (alpha = upper / alpha = 0 / free); each step solves the KKT system
    on the free set exactly.  Returns (alpha, w, margins, iterations, converged); on convergence the
    partition is self-consistent, i.e. the KKT conditions hold up to round-off.
    """
    max_free = max(A.n_features, 50)
    best: tuple[float, Array, Array, Array] | None = None
    for it in range(1, max_iter + 1):
        free = ~(upper_set | lower_set)
        if free.sum() > max_free:  # far from the optimum (generically <= F free duals): give up
            break
        b = A.combine(np.where(upper_set, upper, 0.0))
        alpha = np.where(upper_set, upper, 0.0)
        if np.any(free):
            Af = A.rows(free)
            rhs = 1.0 - Af @ b
            G = Af @ Af.T
            try:
                a_free = cho_solve(cho_factor(G), rhs)
            except LinAlgError:  # duplicated margin points: the duals are not unique, w is; a tiny ridge picks one
                # (the iterate is certified by the duality gap of its clipped duals, so the ridge costs no validity)
                ridge = 1e-12 * max(float(np.trace(G)) / len(G), 1e-300)
                a_free = cho_solve(cho_factor(G + ridge * np.eye(len(G))), rhs)
            alpha[free] = a_free
            w = b + Af.T @ a_free
        else:
            w = b
        margins = A.margins(w)
        trial = alpha - (margins - 1.0)
        new_upper = trial > upper
        new_lower = trial < 0.0
        feasible = np.clip(alpha, 0.0, upper)
        if np.array_equal(new_upper, upper_set) and np.array_equal(new_lower, lower_set):
            return feasible, w, margins, it, True
        # an infeasible iterate is certified through its clipped duals
        w_f = A.combine(feasible) if not np.array_equal(feasible, alpha) else w
        m_f = A.margins(w_f) if w_f is not w else margins
        gap = hinge_duality_gap(m_f, feasible, upper)
        if best is None or gap < best[0]:
            best = (gap, feasible, w_f, m_f)
        upper_set, lower_set = new_upper, new_lower
    if best is None:
        alpha = np.where(upper_set, upper, 0.0)
        w = A.combine(alpha)
        best = (0.0, alpha, w, A.margins(w))
    return best[1], best[2], best[3], it, False


def _recover_duals(A: _SignedRows, upper: float, w: Array, tau: float, max_near: int = 1000) -> Array | None:
    """Duals consistent with an approximate primal w: alpha = upper where m < 1 - tau, 0 where m > 1 + tau, and on
    the near-margin set the bounded least-squares fit of sum_i alpha_i a_i = w (scipy ``lsq_linear``, BVLS).
    ``None`` when more than ``max_near`` points are near the margin.  Any feasible alpha certifies w(alpha)
    through the duality gap; the recovered partition also seeds :func:`_pdas`.
    """
    margins = A.margins(w)
    upper_set = margins < 1.0 - tau
    near = np.abs(margins - 1.0) <= tau
    if near.sum() > max_near:
        return None
    alpha = np.where(upper_set, upper, 0.0)
    if np.any(near):
        b = A.combine(np.where(upper_set, upper, 0.0))
        alpha[near] = lsq_linear(A.rows(near).T, w - b, bounds=(0.0, upper), method="bvls", tol=1e-14).x
    return alpha


def _restricted_dual(AW: Array, offset: Array, upper: float) -> Array | None:
    """argmin of (1/2)||offset + AW' a||^2 - 1'a over 0 <= a <= upper, with Clarabel (tolerances 1e-12).

    Up to ``DENSE_DUAL_MAX`` rows the quadratic form is the Gram matrix AW AW' (a dense m x m block, fast for
    small m); beyond, the lifted form with v = AW' a keeps the KKT system's size linear in m.
    ``None`` when Clarabel does not report a solution.
    """
    m, F = AW.shape
    q = AW @ offset - 1.0
    box = sparse.vstack([sparse.eye(m), -sparse.eye(m)])
    bounds = np.concatenate([np.full(m, upper), np.zeros(m)])
    if m <= DENSE_DUAL_MAX:
        P = sparse.csc_matrix(np.triu(AW @ AW.T))
        cons, rhs, cones = box.tocsc(), bounds, [clarabel.NonnegativeConeT(2 * m)]
    else:
        P = sparse.block_diag([sparse.csc_matrix((m, m)), sparse.eye(F)]).tocsc()
        q = np.concatenate([q, np.zeros(F)])
        cons = sparse.vstack([sparse.hstack([sparse.csc_matrix(AW.T), -sparse.eye(F)]),
                              sparse.hstack([box, sparse.csc_matrix((2 * m, F))])]).tocsc()
        rhs = np.concatenate([np.zeros(F), bounds])
        cones = [clarabel.ZeroConeT(F), clarabel.NonnegativeConeT(2 * m)]
    settings = clarabel.DefaultSettings()
    settings.verbose = False
    settings.tol_gap_abs = settings.tol_gap_rel = settings.tol_feas = 1e-12
    sol = clarabel.DefaultSolver(P, q, cons, rhs, cones, settings).solve()
    if sol.status not in (clarabel.SolverStatus.Solved, clarabel.SolverStatus.AlmostSolved):
        return None
    return np.clip(np.asarray(sol.x[:m], dtype=np.float64), 0.0, upper)


def _working_set_qp(
    A: _SignedRows, upper: float, margins: Array, width: float, max_size: int = WORKING_SET_MAX, max_rounds: int = 3
) -> tuple[Array, Array, Array, int, bool] | None:
    """Duals from the dual QP restricted to the points near the margin, |m_i - 1| <= width (:func:`_restricted_dual`);
    the others are fixed at the bound their margin suggests (upper below the margin, 0 above).  Points whose
    fixed bound the solution contradicts (margin on the wrong side of 1) join the set and the QP is solved
    again, up to ``max_rounds`` times.  Any feasible alpha is certified by the full duality gap, so a wrong
    guess outside the set costs accuracy, never validity.  ``None`` when the set is empty or larger than
    ``max_size`` from the start, or Clarabel fails; a later round that would exceed ``max_size`` is not run.
    """
    W = np.abs(margins - 1.0) <= width
    below = margins < 1.0 - width
    result = None
    for rounds in range(1, max_rounds + 1):
        m = int(W.sum())
        if m == 0 or m > max_size:
            return result
        b = A.combine(np.where(below, upper, 0.0))
        AW = A.rows(W)
        a = _restricted_dual(AW, b, upper)
        if a is None:
            return result
        alpha = np.where(below, upper, 0.0)
        alpha[W] = a
        w = b + AW.T @ a
        new_margins = A.margins(w)
        result = (alpha, w, new_margins, rounds, False)
        wrong = (below & (new_margins > 1.0)) | (~below & ~W & (new_margins < 1.0))
        if not wrong.any():
            return result
        W |= wrong
        below &= ~W
    return result


def solve_hinge_primal(
    X: Array,
    y: Array,
    C: float,
    *,
    gap_rtol: float = HINGE_GAP_RTOL,
    distance_tol: float | None = None,
    liblinear_tol: float = 1e-4,
    max_iter: int = 100_000,
) -> ERMSolution:
    """Hinge-loss SVM without bias, min (1/2)||w||^2 + (C/n) sum (1 - y_i <w, x_i>)_+ (Rubinstein Eq. 1).

    liblinear (scikit-learn ``LinearSVC``, C_liblinear = C/n, LinearSVC's tolerance, fixed shuffling seed) gives
    a warm start; the dual restricted to the points near its margin (``FAST_WORKING_SET_WIDTHS``, at most
    ``DENSE_DUAL_MAX`` points) is solved exactly with Clarabel, the others held at the bound their margin
    suggests, and a primal-dual active-set step polishes the result.  When that fails the active-set method is
    seeded by the warm start's margins, then larger working sets are tried (``WORKING_SET_WIDTHS``, up to
    ``WORKING_SET_MAX`` points), then duals are recovered by bounded least squares, and only then is the warm
    start recomputed at a tighter tolerance (``LIBLINEAR_TOLS``).  ``alpha`` are the duals of Eq. (1)
    (0 <= alpha_i <= C/n), ``gap`` the duality gap, ``distance_bound = sqrt(2 gap)`` certifies
    ||w - w*||_2.  The solution is accepted (``converged``) when gap <= gap_rtol * max(1, P(w)) and, if
    ``distance_tol`` is given (a mechanism's solver_tol x sensitivity), sqrt(2 gap) <= distance_tol.
    """
    C = check_positive(C, "C")
    n = X.shape[0]
    upper = C / n
    A = _SignedRows(X, y)
    best: tuple[float, Array, Array, Array, int, bool] | None = None
    n_iter = 0

    def consider(result: tuple[Array, Array, Array, int, bool]) -> bool:
        nonlocal best
        alpha, w, margins, it, ok = result
        gap = hinge_duality_gap(margins, alpha, upper)
        if best is None or gap < best[0]:
            best = (gap, alpha, w, margins, it, ok)
        return ok

    def primal(w: Array, margins: Array) -> float:
        return 0.5 * float(w @ w) + upper * float(np.sum(np.maximum(0.0, 1.0 - margins)))

    def accept(gap: float, w: Array, margins: Array) -> bool:
        within_distance = distance_tol is None or math.sqrt(2.0 * max(gap, 0.0)) <= distance_tol
        return gap <= gap_rtol * max(1.0, primal(w, margins)) and within_distance

    def certified() -> bool:
        gap, _, w, margins, _, _ = best
        return accept(gap, w, margins)

    # The warm start's margins say which duals sit at a bound; the few points within a narrow band of the margin
    # are ambiguous, so their restricted dual is solved exactly (Adult: 15-350 points in the band), then
    # polished by the active-set method.  Near-duplicate points (one-hot data) or features of low effective rank
    # crowd the band; the fallbacks below are tried in order of cost.
    rel = 1e-6 * upper

    def working_sets(widths: tuple[float, ...], max_size: int) -> bool:
        for width in widths:
            if width in solved:  # the same set from the same warm start: the same answer
                continue
            ws = _working_set_qp(A, upper, margins0, width, max_size=max_size)
            if ws is None:
                continue
            solved.add(width)
            consider(ws)
            if certified():
                return True
            consider(_pdas(A, upper, ws[0] > upper - rel, ws[0] < rel, max_iter=PDAS_MAX_ITER))
            if certified():
                return True
        return False

    for tol in LIBLINEAR_TOLS:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            tol = tol * liblinear_tol / LIBLINEAR_TOLS[0]
            svc = LinearSVC(C=upper, loss="hinge", fit_intercept=False, dual=True, tol=tol, max_iter=max_iter,
                            random_state=0).fit(X, y)
        n_iter += int(svc.n_iter_)
        w0 = svc.coef_.ravel().astype(np.float64)
        margins0 = A.margins(w0)
        solved: set[float] = set()
        if working_sets(FAST_WORKING_SET_WIDTHS, DENSE_DUAL_MAX):
            break
        for tau in (factor * tol for factor in POLISH_THRESHOLD_FACTORS):
            consider(_pdas(A, upper, margins0 < 1.0 - tau, margins0 > 1.0 + tau, max_iter=PDAS_MAX_ITER))
            if certified():
                break
        if certified() or working_sets(WORKING_SET_WIDTHS, WORKING_SET_MAX):
            break
        # last resort: duals recovered from the warm start by bounded least squares on a small near-margin set
        alpha_r = _recover_duals(A, upper, w0, 1e-4)
        if alpha_r is not None:
            w_r = A.combine(alpha_r)
            consider((alpha_r, w_r, A.margins(w_r), 0, False))
            consider(_pdas(A, upper, alpha_r > upper - rel, alpha_r < rel))
        if certified():
            break
    gap, alpha, w, margins, it, ok = best
    if not accept(gap, w, margins) and n <= CVXPY_FALLBACK_MAX_N:
        ref = solve_hinge_dual_cvxpy(y, C, X=X)
        if ref.gap is not None and ref.gap < gap:
            ref.n_iter += n_iter
            return ref
    converged = accept(gap, w, margins)
    return ERMSolution(
        coef=w, objective=primal(w, margins) / C, distance_bound=math.sqrt(2.0 * max(gap, 0.0)),
        method="liblinear+active-set", n_iter=n_iter + it, converged=converged, alpha=alpha, gap=gap,
    )


def solve_hinge_dual_cvxpy(
    y: Array,
    C: float,
    *,
    X: Array | None = None,
    K: Array | None = None,
    solver: str = "CLARABEL",
    eps: float = 1e-10,
) -> ERMSolution:
    """Rubinstein et al.'s dual (Eq. 1): max sum a - (1/2) a'(yy' * K)a, 0 <= a <= C/n, with cvxpy.

    Give either features ``X`` (the quadratic term is ||X'(a * y)||^2) or a Gram matrix ``K`` (factored
    by an eigendecomposition, negative round-off eigenvalues clipped).  Returns the duals; ``coef`` is
    the primal w = X'(a * y) when X is given (empty otherwise).  The certificate is the duality gap
    computed from the returned duals.
    """
    C = check_positive(C, "C")
    n = y.shape[0]
    upper = C / n
    if (X is None) == (K is None):
        raise ValueError("give exactly one of X (features) or K (Gram matrix)")
    if X is not None:
        factor = X * y[:, None]
    else:
        vals, vecs = np.linalg.eigh(0.5 * (K + K.T))
        keep = vals > max(vals.max(), 1.0) * 1e-13
        factor = (vecs[:, keep] * np.sqrt(vals[keep])) * y[:, None]
    a = cp.Variable(n)
    prob = cp.Problem(cp.Maximize(cp.sum(a) - 0.5 * cp.sum_squares(factor.T @ a)), [a >= 0, a <= upper])
    opts = {"tol_gap_abs": eps, "tol_gap_rel": eps, "tol_feas": eps} if solver == "CLARABEL" else {}
    prob.solve(solver=solver, **opts)
    if a.value is None:
        raise RuntimeError(f"cvxpy ({solver}) failed on the SVM dual: status {prob.status}")
    alpha = np.clip(np.asarray(a.value, dtype=np.float64), 0.0, upper)
    v = factor.T @ alpha
    margins = factor @ v
    gap = hinge_duality_gap(margins, alpha, upper)
    coef = X.T @ (alpha * y) if X is not None else np.empty(0)
    primal = 0.5 * float(v @ v) + upper * float(np.sum(np.maximum(0.0, 1.0 - margins)))
    return ERMSolution(
        coef=coef, objective=primal / C, distance_bound=math.sqrt(2.0 * gap), method=f"cvxpy-{solver.lower()}",
        n_iter=int(prob.solver_stats.num_iters or 0), converged=prob.status == cp.OPTIMAL, alpha=alpha, gap=gap,
    )


def solve_erm(X: Array, y: Array, loss: MarginLoss, C: float, *, distance_tol: float | None = None) -> ERMSolution:
    """Rubinstein et al.'s primal (1/2)||w||^2 + (C/n) sum l(y_i <w, x_i>) for any supported loss.

    ``distance_tol``: the certified ||w - w*|| the caller needs (hinge: through the duality gap; smooth losses:
    ||grad|| / lambda with lambda = 1/C, so the gradient tolerance is tightened to distance_tol / C).
    """
    C = check_positive(C, "C")
    if isinstance(loss, Hinge):
        return solve_hinge_primal(X, y, C, distance_tol=distance_tol)
    gtol = SMOOTH_GTOL if distance_tol is None else min(SMOOTH_GTOL, distance_tol / C)
    return solve_smooth_erm(X, y, loss, 1.0 / C, gtol=gtol)


# ----------------------------------------------------------------------------------------------
# SVDD (Park 2022, Eq. 4.2) in a finite feature space: min ||Phi' beta||^2 over the capped simplex
# ----------------------------------------------------------------------------------------------
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
