"""What every mechanism states and keeps: its guarantee, its release, and nothing else.

* :class:`Guarantee`: epsilon, delta, the neighbouring relation, the statement it implements, what is released
  (``attributes``: every fitted attribute the release consists of), the assumptions, and how the noise was drawn.
* :class:`ReleaseMixin`: the release hygiene of every fitted estimator.

  - A fitted object is a release.  It holds only what its guarantee covers: the attributes named in
    ``_release_attributes`` (plus scikit-learn's public metadata ``n_features_in_``, ``classes_`` and the
    ``guarantee_``).  The non-private solution is kept only with ``keep_nonprivate=True`` (evaluation and
    audits), and the guarantee then says that the object is not a release.
  - Its pickle holds the same and never the seed or the state of the generator that drew the noise:
    ``random_state`` is stored as ``None`` (a seed plus a release recovers the non-private output).
  - :func:`sklearn.base.clone` gives every clone its own noise stream: an int seed becomes a child
    ``SeedSequence`` (a different spawn key per clone), a ``Generator`` or ``SeedSequence`` is spawned.  Without
    this, ``GridSearchCV`` or cross-validation would add the *same* noise to models fitted on different data.

* :func:`resolve_classes`: the label set is a public parameter; inferring it from the data warns.
* :func:`noise_release`: every noisy release goes through here (``noise="lattice"`` by default: exactly
  rounded to a grid, see :mod:`dpkernels.lattice`; ``noise="continuous"``: the papers' float64 samplers, which a
  floating-point attack defeats, kept to reproduce the papers' numbers and warned about).
"""

from __future__ import annotations

import copy
import numbers
import warnings
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np
from numpy.typing import ArrayLike, NDArray
from sklearn.base import clone
from sklearn.utils.multiclass import type_of_target
from sklearn.utils.validation import column_or_1d

from dpkernels._validation import PrivacyLeakWarning, UnsafeNoiseWarning, check_positive, check_random_state
from dpkernels import lattice
from dpkernels.noise import gamma_norm_vector, gaussian_vector, laplace_vector

__all__ = [
    "Guarantee",
    "REPLACE_ONE",
    "NOISE_MODES",
    "ReleaseMixin",
    "require_certified",
    "split_intercept",
    "resolve_classes",
    "noise_release",
    "randomness_note",
]

#: The neighbouring relation of all five papers' replacement-style definitions.
REPLACE_ONE = "replace-one: D and D' have the same n and differ in one example (x_i, y_i)"
NOISE_MODES = ("lattice", "continuous")
#: Attributes scikit-learn's API needs that carry no information about the data beyond the stated assumptions.
PUBLIC_METADATA = ("n_features_in_", "classes_", "guarantee_", "feature_names_in_")


@dataclass(frozen=True)
class Guarantee:
    """A mechanism's privacy statement.

    ``epsilon``/``delta``: the level the calibration targets; ``epsilon_solver``: the level that holds when the
    non-private minimiser is only certified to within the solver tolerance (see :mod:`dpkernels.solvers`);
    ``released``: what is published, in words; ``attributes``: the fitted attributes that hold it; ``noise``: how
    the noise was drawn; ``notes``: anything else a user must know (seeding, evaluation mode).
    """

    epsilon: float
    delta: float
    neighbouring: str
    released: str
    statement: str
    assumptions: tuple[str, ...] = field(default_factory=tuple)
    epsilon_solver: float | None = None
    attributes: tuple[str, ...] = field(default_factory=tuple)
    noise: str = ""
    notes: tuple[str, ...] = field(default_factory=tuple)
    private: bool = True

    def __str__(self) -> str:
        head = f"({self.epsilon:g}, {self.delta:g})-differential privacy [{self.statement}]"
        if not self.private:
            head = "NOT PRIVATE: " + head
        lines = [head, f"  neighbouring: {self.neighbouring}", f"  released: {self.released}"]
        if self.attributes:
            lines.append(f"  attributes: {', '.join(self.attributes)}")
        if self.noise:
            lines.append(f"  noise: {self.noise}")
        if self.epsilon_solver is not None:
            lines.append(f"  with the certified solver tolerance: epsilon <= {self.epsilon_solver:.6g}")
        lines += [f"  assumes: {a}" for a in self.assumptions]
        lines += [f"  note: {n}" for n in self.notes]
        return "\n".join(lines)


def randomness_note(random_state: object) -> str:
    """What a user must know about the source of the noise."""
    if random_state is None:
        return "noise drawn from operating-system entropy (random_state=None)"
    return ("SEEDED noise (random_state given): for reproduction only. Anyone who knows the seed or the generator's "
            "state can subtract the noise; keep it secret and use it once. A pickle of this object does not hold it.")


def noise_description(noise: str) -> str:
    if noise == "lattice":
        return ("exact rounding of the continuous mechanism to a public grid (dpkernels.lattice): floating-point safe, "
                "no privacy cost")
    return ("continuous float64 sampler of the paper (NOT floating-point safe: a floating-point attack can tell "
            "neighbours apart whatever epsilon says; for reproducing the paper's numbers only)")


def check_noise(noise: str) -> str:
    if noise not in NOISE_MODES:
        raise ValueError(f"noise must be one of {NOISE_MODES}, got {noise!r}")
    if noise == "continuous":
        warnings.warn(
            "noise='continuous' uses the paper's float64 sampler, which is not differentially private in floating "
            "point (Mironov 2012); use noise='lattice' for a release",
            UnsafeNoiseWarning,
            stacklevel=3,
        )
    return noise


def noise_release(center: ArrayLike, kind: str, scale: float, *, noise: str, random_state: object) -> NDArray[np.float64]:
    """``center`` plus noise of the given ``kind`` (``"laplace"``: i.i.d. Laplace(scale); ``"gamma_norm"``: density
    proportional to exp(-||b|| / scale) (Chaudhuri et al.'s beta = 1 / scale); ``"gaussian"``: i.i.d. N(0, scale^2)),
    drawn as ``noise`` says.  ``noise`` must already be validated (:func:`check_noise`)."""
    center = np.asarray(center, dtype=np.float64)
    rng = check_random_state(random_state)
    scale = check_positive(scale, "noise scale")
    if noise == "lattice":
        if kind == "laplace":
            return lattice.laplace_lattice(center, scale, rng)
        if kind == "gamma_norm":
            return lattice.gamma_norm_lattice(center, 1.0 / scale, rng)
        if kind == "gaussian":
            return lattice.gaussian_lattice(center, scale, rng)
    elif noise == "continuous":
        if kind == "laplace":
            return center + laplace_vector(scale, center.shape, rng)
        if kind == "gamma_norm":
            if center.ndim == 1:
                return center + gamma_norm_vector(1.0 / scale, center.shape[0], random_state=rng)
            return center + gamma_norm_vector(1.0 / scale, center.shape[1], n=center.shape[0], random_state=rng)
        if kind == "gaussian":
            return center + gaussian_vector(scale, center.shape, rng)
    raise ValueError(f"unknown noise {noise!r} or kind {kind!r}")


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


def resolve_classes(y: ArrayLike, classes: Sequence[Any] | None, *, binary: bool, n_samples: int | None = None
                    ) -> tuple[NDArray[Any], NDArray[np.intp]]:
    """The public label set and the index of each label in it.

    ``classes`` given: every label must be one of them (``ValueError`` otherwise); a class absent from ``y`` is
    fine (the label set is public, not learned).  ``classes=None``: labels in {-1, +1} use that set (the papers'
    convention, data-independent); any other labels are inferred with ``np.unique`` and a
    :class:`~dpkernels.PrivacyLeakWarning` (the set of labels present is a fact about the private data).
    Binary estimators need exactly two classes; index 0 maps to -1 and index 1 to +1.
    """
    if y is None:
        raise ValueError("this estimator requires y to be passed, but the target y is None")
    arr = np.asarray(y)
    if arr.ndim == 2 and arr.shape[1] == 1:
        arr = column_or_1d(arr, warn=True)  # a column vector: DataConversionWarning, as scikit-learn does
    if arr.ndim != 1:
        raise ValueError(f"y must be 1-d, got shape {arr.shape}")
    if n_samples is not None and arr.shape[0] != n_samples:
        raise ValueError(f"X has {n_samples} rows but y has {arr.shape[0]} labels")
    if arr.size == 0:
        raise ValueError("y is empty")
    if arr.dtype.kind == "f" and np.any(~np.isfinite(arr)):
        raise ValueError("y contains NaN or infinite labels")
    if arr.dtype.kind == "O" and any(v is None or (isinstance(v, float) and not np.isfinite(v)) for v in arr):
        raise ValueError("y contains missing labels")
    if arr.dtype.kind == "f" and classes is None and np.any(arr != np.round(arr)):
        raise ValueError(f"Unknown label type: {type_of_target(arr)} (a classifier needs class labels, e.g. -1/+1)")
    if classes is None:
        numeric = arr.dtype.kind in "biuf"
        if numeric and np.all(np.isin(arr, (-1, 1))):
            cls = np.array([-1, 1])
        else:
            cls = np.unique(arr)
            warnings.warn(
                f"classes not given: using the labels found in y ({cls.tolist()[:10]}). The label set of the private "
                "data is itself private (a class present in one data set and absent from its neighbour shows); pass "
                "classes=... (the public label set)",
                PrivacyLeakWarning,
                stacklevel=3,
            )
    else:
        cls = np.asarray(list(classes))
        if cls.ndim != 1 or len(np.unique(cls)) != len(cls):
            raise ValueError(f"classes must be a sequence of distinct labels, got {classes!r}")
    if binary and len(cls) != 2:
        raise ValueError(f"Only binary classification is supported: a binary mechanism needs exactly two classes, got "
                         f"{len(cls)}: {cls.tolist()[:10]} (K classes one-against-all are K releases: compose them)")
    if not binary and len(cls) < 2:
        raise ValueError("need at least two classes")
    order = np.argsort(cls, kind="stable")
    sorted_cls = cls[order]
    try:
        pos = np.searchsorted(sorted_cls, arr)
        pos = np.clip(pos, 0, len(cls) - 1)
        ok = sorted_cls[pos] == arr
    except TypeError as exc:
        raise ValueError(f"labels cannot be compared with classes {cls.tolist()}") from exc
    if not np.all(ok):
        bad = np.unique(arr[~ok])[:5]
        raise ValueError(f"labels {bad.tolist()} are not in classes {cls.tolist()} (the public label set)")
    return cls, order[pos]


class ReleaseMixin:
    """Release hygiene for the DP estimators (see the module docstring).

    Subclasses list their released fitted attributes in ``_release_attributes`` and their non-private evaluation
    state (kept only with ``keep_nonprivate=True``) in ``_nonprivate_attributes``.
    """

    _release_attributes: ClassVar[tuple[str, ...]] = ()
    _nonprivate_attributes: ClassVar[tuple[str, ...]] = ("nonprivate_",)
    _clone_counter: int = 0

    # pickling ----------------------------------------------------------------------------------
    def __getstate__(self) -> dict[str, Any]:
        state = dict(self.__dict__)
        params = set(self.get_params(deep=False))
        allowed = params | set(self._release_attributes) | set(PUBLIC_METADATA)
        if getattr(self, "keep_nonprivate", False):
            allowed |= set(self._nonprivate_attributes)
        kept = {k: v for k, v in state.items() if k in allowed}
        if "random_state" in kept:
            kept["random_state"] = None  # never the seed or the generator's state
        kept["_sklearn_version"] = state.get("_sklearn_version")
        return kept

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)

    # cloning -----------------------------------------------------------------------------------
    def __sklearn_clone__(self) -> Any:
        params = self.get_params(deep=False)
        new = {k: (clone(v, safe=False) if k != "random_state" else self._child_random_state(v)) for k, v in params.items()}
        return type(self)(**new)

    def _child_random_state(self, rs: object) -> object:
        """An independent noise stream for a clone (deterministic given the parent's seed, distinct per clone)."""
        if rs is None:
            return None
        if isinstance(rs, (numbers.Integral, np.integer)):
            k = self._clone_counter
            self._clone_counter = k + 1
            return np.random.SeedSequence(entropy=int(rs), spawn_key=(k,))
        if isinstance(rs, np.random.SeedSequence):
            return rs.spawn(1)[0]
        if isinstance(rs, np.random.Generator):
            try:
                return rs.spawn(1)[0]
            except (TypeError, ValueError, AttributeError):  # a generator without a seed sequence
                return np.random.default_rng(rs.integers(0, 2**63, size=4))
        return copy.deepcopy(rs)

    # helpers -----------------------------------------------------------------------------------
    def _notes(self) -> tuple[str, ...]:
        notes = [randomness_note(self.random_state)]
        if getattr(self, "keep_nonprivate", False):
            notes.append("keep_nonprivate=True: this object also holds the NON-PRIVATE solution (nonprivate_) for "
                         "evaluation and audits; it is not a release")
        return tuple(notes)
