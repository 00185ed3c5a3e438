"""The hinge-loss SVM without bias (Rubinstein et al. Eq. 1), solved with a certificate.

liblinear's dual coordinate descent (scikit-learn ``LinearSVC``) gives a warm start; the dual restricted to the
points near its margin is solved exactly (Clarabel), then a primal-dual active-set polish solves the KKT system of
the dual exactly; the duality gap is computed as a sum of non-negative complementarity terms (no cancellation),
and ||w(alpha) - w*||^2 <= 2 gap / Lambda.  :func:`solve_hinge_dual_cvxpy` is the exact cvxpy reference (also for
kernels given only through a Gram matrix) and :func:`solve_hinge_dual_gram` the fast exact solver of small problems given
through a Gram matrix (Clarabel called directly, with the same certificate).

One class.  The minimiser exists whatever the labels (the problem only involves the rows a_i = y_i x_i), and a
mechanism whose label set is public must handle a data set in which only one label occurs exactly as any other:
liblinear refuses such data, so its warm start is computed on the rows s_i a_i with labels s_i (alternating signs),
the same problem in a form liblinear accepts.
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass

import clarabel
import numpy as np
from numpy.typing import NDArray
from scipy import sparse
from scipy.linalg import LinAlgError, cho_factor, cho_solve
from scipy.optimize import lsq_linear
from sklearn.exceptions import ConvergenceWarning
from sklearn.svm import LinearSVC

from dpkernels._validation import check_positive
from dpkernels.solvers.common import Array, ERMSolution, clarabel_qp

__all__ = ["solve_hinge_primal", "solve_hinge_dual_cvxpy", "solve_hinge_dual_gram", "hinge_duality_gap", "HINGE_GAP_RTOL"]

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
#: Margin half-widths ``|m - 1| <= width`` of the working sets whose dual is solved exactly (Clarabel), tried in turn
#: right after the warm start (small sets only, ``DENSE_DUAL_MAX``) and after the active-set polish (any size).
FAST_WORKING_SET_WIDTHS = (3e-4, 1e-3)
WORKING_SET_WIDTHS = (1e-4, 1e-3, 1e-2)
#: The working-set QP is skipped when more points than this lie in the set.
WORKING_SET_MAX = 8_000
#: Working sets up to this size use the Gram-matrix form of the restricted dual, larger ones the lifted form.
DENSE_DUAL_MAX = 400
#: The hinge solver's last stage solves the whole dual (Clarabel, lifted form) when n x F is at most this (its
#: constraints hold about n F + 2 n non-zeros, the dense copy of the signed rows n F floats); beyond, a solve the
#: earlier stages cannot certify is refused.
FULL_DUAL_MAX_ENTRIES = 20_000_000
#: The hinge solver falls back to cvxpy when the polish fails and n is at most this.
CVXPY_FALLBACK_MAX_N = 5000


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
    x = clarabel_qp(P, q, cons, rhs, cones)
    return None if x is None else np.clip(x[:m], 0.0, upper)


def _working_set_qp(
    A: _SignedRows, upper: float, margins: Array, width: float, max_size: int = WORKING_SET_MAX, max_rounds: int = 3
) -> tuple[Array, Array, Array, int, bool] | None:
    """Duals from the dual QP restricted to the points near the margin, ``|m_i - 1|`` <= width (:func:`_restricted_dual`);
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


def _liblinear_problem(X: Array, y: Array) -> tuple[Array, Array]:
    """(X, y) in a form liblinear accepts: as given when both labels occur; with a single label, the rows
    s_i y_i x_i with labels s_i = +1, -1, +1, ... (the dual only involves y_i x_i, so the problem is the same)."""
    if np.any(y != y[0]):
        return X, y
    s = np.where(np.arange(len(y)) % 2 == 0, 1.0, -1.0)
    return X * (s * y)[:, None], s


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
    start recomputed at a tighter tolerance (``LIBLINEAR_TOLS``); last, the whole dual is solved exactly (cvxpy
    up to ``CVXPY_FALLBACK_MAX_N`` rows, Clarabel's lifted form beyond, up to ``FULL_DUAL_MAX_ENTRIES``: shuttle's
    one-against-all parts crowd many points close to the margin, where every smaller stage fails).
    ``alpha`` are the duals of Eq. (1) (0 <= alpha_i <= C/n), ``gap`` the duality gap, ``distance_bound =
    sqrt(2 gap)`` certifies ||w - w*||_2.  The solution is accepted (``converged``) when gap <= gap_rtol *
    max(1, P(w)) and, if ``distance_tol`` is given (a mechanism's solver_tol x sensitivity), sqrt(2 gap) <=
    distance_tol.  Any labels in {-1, +1} are accepted, a single class included (see the module docstring); one
    row is solved in closed form.
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

    if n == 1:  # one row: the dual is one-dimensional, alpha = min(C/n, 1/||x||^2), exactly
        sq = float(X[0] @ X[0])
        alpha = np.array([upper if sq * upper <= 1.0 else 1.0 / sq])
        w = A.combine(alpha)
        margins = A.margins(w)
        gap = hinge_duality_gap(margins, alpha, upper)
        return ERMSolution(coef=w, objective=primal(w, margins) / C, distance_bound=math.sqrt(2.0 * max(gap, 0.0)),
                           method="closed form (n = 1)", n_iter=0, converged=accept(gap, w, margins), alpha=alpha, gap=gap)
    X_ll, y_ll = _liblinear_problem(X, y)
    for tol in LIBLINEAR_TOLS:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            tol = tol * liblinear_tol / LIBLINEAR_TOLS[0]
            svc = LinearSVC(C=upper, loss="hinge", fit_intercept=False, dual=True, tol=tol, max_iter=max_iter,
                            random_state=0).fit(X_ll, y_ll)
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
    if not certified() and CVXPY_FALLBACK_MAX_N < n and n * A.n_features <= FULL_DUAL_MAX_ENTRIES:
        # keep solving (whether a solve certifies is a fact about the data, which a refusal would publish): the whole
        # dual exactly, then the working sets around its margins, which are now accurate
        alpha_f = _restricted_dual(A.rows(np.ones(n, dtype=bool)), np.zeros(A.n_features), upper)
        if alpha_f is not None:
            w_f = A.combine(alpha_f)
            margins0, solved = A.margins(w_f), set()
            consider((alpha_f, w_f, margins0, 0, False))
            if not certified():
                working_sets(WORKING_SET_WIDTHS, WORKING_SET_MAX)
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
    import cvxpy as cp

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


def solve_hinge_dual_gram(y: Array, C: float, K: Array) -> ERMSolution:
    """Rubinstein et al.'s dual (Eq. 1) for a kernel given through its Gram matrix ``K``, solved exactly by Clarabel
    (called directly: the cvxpy reference :func:`solve_hinge_dual_cvxpy` costs tens of milliseconds of modelling per
    call, this one about one on the small problems of the experiments, e.g. a random-feature SVM redrawn thousands of
    times).  K is factored by an eigendecomposition (negative round-off eigenvalues clipped), so n should be small
    (hundreds).  Returns the duals, the duality gap of the returned duals as the certificate (``distance_bound`` =
    sqrt(2 gap) bounds the RKHS distance to the minimiser), and an empty ``coef``.
    """
    C = check_positive(C, "C")
    y = np.asarray(y, dtype=np.float64)
    n = y.shape[0]
    upper = C / n
    vals, vecs = np.linalg.eigh(0.5 * (K + K.T))
    keep = vals > max(float(vals.max()), 1.0) * 1e-13
    A = (vecs[:, keep] * np.sqrt(vals[keep])) * y[:, None]  # rows a_i with <a_i, a_j> = y_i y_j K_ij
    alpha = _restricted_dual(A, np.zeros(A.shape[1]), upper)
    if alpha is None:
        raise RuntimeError("Clarabel failed on the SVM dual")
    margins = A @ (A.T @ alpha)
    gap = hinge_duality_gap(margins, alpha, upper)
    primal = 0.5 * float(alpha @ margins) + upper * float(np.sum(np.maximum(0.0, 1.0 - margins)))
    return ERMSolution(coef=np.empty(0), objective=primal / C, distance_bound=math.sqrt(2.0 * max(gap, 0.0)),
                       method="clarabel-gram", n_iter=0, converged=gap <= HINGE_GAP_RTOL * max(1.0, primal) + 1e-14,
                       alpha=alpha, gap=gap)
