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

Layout: :mod:`~dpkernels.solvers.common` (the solution type), :mod:`~dpkernels.solvers.smooth` (Newton),
:mod:`~dpkernels.solvers.hinge` (the hinge SVM), :mod:`~dpkernels.solvers.svdd` (Park's SVDD).
"""

from __future__ import annotations

from dpkernels._validation import check_positive
from dpkernels.losses import Hinge, MarginLoss
from dpkernels.solvers.common import Array, ERMSolution, erm_objective
from dpkernels.solvers.hinge import HINGE_GAP_RTOL, hinge_duality_gap, solve_hinge_dual_cvxpy, solve_hinge_primal
from dpkernels.solvers.smooth import SMOOTH_GTOL, solve_smooth_erm
from dpkernels.solvers.svdd import project_capped_simplex, solve_svdd, solve_svdd_cvxpy

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
    "SMOOTH_GTOL",
    "HINGE_GAP_RTOL",
]


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
