"""The solution type and objective shared by every solver (see :mod:`dpkernels.solvers`)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import clarabel
import numpy as np
from numpy.typing import NDArray

from dpkernels.losses import MarginLoss

__all__ = ["ERMSolution", "erm_objective", "clarabel_qp", "Array"]

Array = NDArray[np.float64]


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


def clarabel_qp(P: Any, q: Array, cons: Any, rhs: Array, cones: list[Any]) -> Array | None:
    """Solve min x'Px/2 + q'x s.t. rhs - cons x in cones with Clarabel at tolerance 1e-12 (the working-set duals of
    the hinge and SVDD solvers, certified afterwards by their duality gaps); None when Clarabel does not solve it."""
    settings = clarabel.DefaultSettings()
    settings.verbose = False
    settings.tol_gap_abs = settings.tol_gap_rel = settings.tol_feas = 1e-12
    sol = clarabel.DefaultSolver(P, q, cons, rhs, cones, settings).solve()
    if sol.status not in (clarabel.SolverStatus.Solved, clarabel.SolverStatus.AlmostSolved):
        return None
    return np.asarray(sol.x, dtype=np.float64)
