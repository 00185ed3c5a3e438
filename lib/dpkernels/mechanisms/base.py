"""What every mechanism states: its privacy guarantee and the assumptions it relies on."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

__all__ = ["Guarantee", "REPLACE_ONE", "require_certified", "split_intercept"]

#: The neighbouring relation of all five papers' replacement-style definitions.
REPLACE_ONE = "replace-one: D and D' have the same n and differ in one example (x_i, y_i)"


@dataclass(frozen=True)
class Guarantee:
    """A mechanism's privacy statement.

    ``epsilon``/``delta``: the level the calibration targets; ``epsilon_solver``: the level that holds
    when the non-private minimiser is only certified to within the solver tolerance (see
    :mod:`dpkernels.solvers`); ``released``: exactly what is published.
    """

    epsilon: float
    delta: float
    neighbouring: str
    released: str
    statement: str
    assumptions: tuple[str, ...] = field(default_factory=tuple)
    epsilon_solver: float | None = None

    def __str__(self) -> str:
        lines = [
            f"({self.epsilon:g}, {self.delta:g})-differential privacy [{self.statement}]",
            f"  neighbouring: {self.neighbouring}",
            f"  released: {self.released}",
        ]
        if self.epsilon_solver is not None:
            lines.append(f"  with the certified solver tolerance: epsilon <= {self.epsilon_solver:.6g}")
        lines += [f"  assumes: {a}" for a in self.assumptions]
        return "\n".join(lines)


def require_certified(distance_bound: float, tol: float, what: str = "||w - w*||") -> None:
    """Refuse to release unless the solver certified ``what`` <= tol (= solver_tol x the sensitivity): every
    mechanism's privacy proof assumes the exact minimiser, and a solver error eta adds up to 2 eta to the sensitivity."""
    if not distance_bound <= tol:
        raise RuntimeError(
            f"the solver certified {what} <= {distance_bound:.3g}, above solver_tol x sensitivity = {tol:.3g}; "
            "refusing to release (the guarantee assumes the exact minimiser)"
        )


def split_intercept(w: np.ndarray, fit_intercept: bool, intercept_scaling: float) -> tuple[np.ndarray, float]:
    """(coef, intercept) of a weight vector whose last entry multiplies the constant feature ``intercept_scaling``."""
    if fit_intercept:
        return w[:-1], float(w[-1] * intercept_scaling)
    return w, 0.0
