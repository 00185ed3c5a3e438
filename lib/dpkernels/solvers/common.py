"""The solution type and objective shared by every solver (see :mod:`dpkernels.solvers`)."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from numpy.typing import NDArray

from dpkernels.losses import MarginLoss

__all__ = ["ERMSolution", "erm_objective", "Array"]

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
