"""Smooth regularised ERM (logistic, Huber, smoothed hinge): damped Newton with a certificate.

J(w) = (1/n) sum_i l(y_i <w, x_i>) + (lam/2) ||w||^2 + (1/n) <b, w> is lam-strongly convex, so
||w - w*|| <= ||grad J(w)|| / lam certifies the distance to the exact minimiser.
"""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import NDArray
from scipy.linalg import LinAlgError, cho_factor, cho_solve
from scipy.sparse.linalg import LinearOperator, cg

from dpkernels._validation import check_positive
from dpkernels.losses import MarginLoss
from dpkernels.solvers.common import Array, ERMSolution

__all__ = ["solve_smooth_erm", "SMOOTH_GTOL"]

#: Default gradient-norm tolerance of the smooth solver (absolute, on J).
SMOOTH_GTOL = 1e-10
#: Once ||grad|| < 1e-6, Newton stops when the gradient norm has not fallen by 10% for this many iterations
#: (cycling between the pieces of a piecewise-quadratic loss; the certificate ||grad|| / lambda is reported).
STALL_ITERATIONS = 15
#: Dense Newton up to this many features, Newton-CG beyond.
DENSE_NEWTON_MAX_DIM = 512


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
