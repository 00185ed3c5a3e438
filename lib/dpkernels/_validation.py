"""Input validation shared by every mechanism.

Privacy guarantees hold only under stated assumptions (bounded row norms, labels in {-1, +1},
finite inputs, valid privacy parameters).  The helpers here turn a broken assumption into a clear
``ValueError`` or, where a mechanism offers it, an explicit clipping step with a
:class:`ClippingWarning`.  Randomness always comes from a :class:`numpy.random.Generator`.
"""

from __future__ import annotations

import math
import numbers
import warnings

import numpy as np
from numpy.typing import ArrayLike, NDArray

__all__ = [
    "DATA_BOUND",
    "DEFAULT_DATA_NORM",
    "public_bound",
    "PrivacyLeakWarning",
    "ClippingWarning",
    "UnsafeNoiseWarning",
    "UtilityWarning",
    "noise_dominance",
    "check_random_state",
    "check_positive",
    "check_epsilon",
    "check_delta",
    "check_probability",
    "check_finite_array",
    "check_binary_labels",
    "check_row_norms",
    "MAX_ABS_INPUT",
]

#: Relative slack when comparing a row norm with its bound (floating point round-off only).
NORM_RTOL = 1e-9


class PrivacyLeakWarning(RuntimeWarning):
    """A bound the guarantee relies on was inferred from the private data itself."""


class ClippingWarning(RuntimeWarning):
    """Inputs were clipped to satisfy a mechanism's assumption (documented, never silent)."""


class UnsafeNoiseWarning(RuntimeWarning):
    """A release uses a paper's continuous float64 sampler, which a floating-point attack defeats."""


class UtilityWarning(UserWarning):
    """The calibrated noise can move the solution further than the non-private solution's largest possible norm (a
    comparison of public bounds): the release may be mostly noise."""


def noise_dominance(noise_norm: float, solution_bound: float, what: str) -> float:
    """The ratio of the noise's expected norm to the largest norm the non-private solution can have (both public:
    functions of n, d, epsilon and the parameters), with a :class:`UtilityWarning` when it exceeds 1."""
    ratio = float(noise_norm) / float(solution_bound)
    if ratio > 1.0:
        warnings.warn(f"{what}: the noise's expected effect ({noise_norm:.3g}, an upper bound) exceeds the largest norm the "
                      f"non-private solution can have ({solution_bound:.3g}) by {ratio:.3g}x: the release may be mostly "
                      "noise. Use more rows, a larger epsilon or a larger regulariser", UtilityWarning, stacklevel=3)
    return ratio


def check_random_state(random_state: object) -> np.random.Generator:
    """Return a :class:`numpy.random.Generator` for ``random_state``.

    Accepts a ``Generator`` (used as is), an ``int`` or ``SeedSequence`` (seeds a new PCG64
    generator) or ``None`` (fresh OS entropy).  The legacy global ``RandomState`` is refused: noise
    must never come from the global RNG.
    """
    if isinstance(random_state, np.random.Generator):
        return random_state
    if random_state is None or isinstance(random_state, (numbers.Integral, np.random.SeedSequence)):
        return np.random.default_rng(random_state)
    raise ValueError(
        "random_state must be a numpy.random.Generator, an int seed, a SeedSequence or None; "
        f"got {type(random_state).__name__} (the legacy RandomState / global RNG is not allowed)"
    )


def check_positive(value: float, name: str, *, allow_inf: bool = False) -> float:
    """Validate a strictly positive real parameter and return it as ``float``."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise ValueError(f"{name} must be a real number, got {value!r}")
    value = float(value)
    if math.isnan(value) or value <= 0 or (math.isinf(value) and not allow_inf):
        raise ValueError(f"{name} must be positive and finite, got {value!r}")
    return value


def check_epsilon(epsilon: float, name: str = "epsilon") -> float:
    """Validate a privacy level epsilon > 0 (finite)."""
    return check_positive(epsilon, name)


def check_probability(value: float, name: str) -> float:
    """Validate a probability in the open interval (0, 1)."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise ValueError(f"{name} must be a real number in (0, 1), got {value!r}")
    value = float(value)
    if not 0.0 < value < 1.0:
        raise ValueError(f"{name} must lie in (0, 1), got {value!r}")
    return value


def check_delta(delta: float, name: str = "delta") -> float:
    """Validate a failure probability / approximate-DP delta in (0, 1)."""
    return check_probability(delta, name)


#: The input domain of every mechanism is bounded by this magnitude per entry (documented in the guarantees): larger
#: values overflow the feature maps (x'w of random features, squared norms) in float64.
MAX_ABS_INPUT = 1e100


def check_finite_array(X: ArrayLike, name: str = "X", *, ndim: int = 2) -> NDArray[np.float64]:
    """Return ``X`` as a float64 array of the given dimension, refusing NaN, inf and entries above
    ``MAX_ABS_INPUT`` in magnitude (outside every mechanism's input domain).  A scipy sparse matrix is densified
    (the mechanisms' solvers and feature maps work on dense arrays)."""
    from scipy import sparse

    if sparse.issparse(X):
        X = X.toarray()
    raw = np.asarray(X) if not isinstance(X, np.ndarray) else X
    if raw.dtype.kind == "c":
        raise ValueError(f"Complex data not supported: {name} must be real")
    try:
        arr = np.asarray(raw, dtype=np.float64)
    except TypeError as exc:  # e.g. a dict inside an object array: scikit-learn's convention is a TypeError
        raise TypeError(f"{name} must be a numeric {ndim}-d array: {exc}") from exc
    except ValueError as exc:
        raise ValueError(f"{name} must be a numeric {ndim}-d array: {exc}") from exc
    if arr.ndim != ndim:
        hint = " Reshape your data (e.g. X.reshape(-1, 1) for one feature, X.reshape(1, -1) for one sample)." if arr.ndim == 1 else ""
        raise ValueError(f"{name} must be a {ndim}-d array, got shape {arr.shape}.{hint}")
    if arr.size == 0:
        raise ValueError(f"{name} is empty: found array with shape {arr.shape} ({arr.shape[-1]} feature(s) (shape={arr.shape}) "
                         "while a minimum of 1 is required)")
    # two reductions and no temporary: max and min propagate NaN and infinity, and bound every |entry|
    hi, lo = float(np.max(arr)), float(np.min(arr))
    if not (math.isfinite(hi) and math.isfinite(lo)):
        raise ValueError(f"{name} contains NaN or infinite values; the privacy analysis needs finite inputs")
    if max(abs(hi), abs(lo)) > MAX_ABS_INPUT:
        raise ValueError(f"{name} has entries above {MAX_ABS_INPUT:g} in magnitude, outside the mechanisms' input domain")
    return arr


def check_binary_labels(y: ArrayLike, n_samples: int | None = None) -> NDArray[np.float64]:
    """Return labels as float array, requiring every label to be -1 or +1.

    The papers' neighbouring relation and sensitivity bounds assume ``y`` in {-1, +1}; other
    encodings (0/1, strings) are refused rather than silently re-mapped, because inferring the label
    set from the data would itself depend on the private data.
    """
    arr = np.asarray(y)
    if arr.ndim != 1:
        raise ValueError(f"y must be 1-d, got shape {arr.shape}")
    if n_samples is not None and arr.shape[0] != n_samples:
        raise ValueError(f"X has {n_samples} rows but y has {arr.shape[0]} labels")
    try:
        arr = arr.astype(np.float64)
    except (TypeError, ValueError) as exc:
        raise ValueError("labels must be -1 or +1 (numeric)") from exc
    bad = ~np.isin(arr, (-1.0, 1.0))
    if np.any(bad):
        found = np.unique(arr[bad])[:5]
        raise ValueError(f"labels must be -1 or +1 (the mechanisms' label set); found {found.tolist()}")
    return arr


#: The value of a bound parameter (``data_norm``) that explicitly asks for the bound to be read from the data.
DATA_BOUND = "data"
#: The documented public default of a norm bound where an estimator offers one (rows scaled into the unit ball).
DEFAULT_DATA_NORM = 1.0


def public_bound(value: object, norms: NDArray[np.float64], name: str = "data_norm") -> tuple[float, bool]:
    """(bound, private) for a norm-bound parameter.

    A positive number is a public bound: ``(value, True)``.  The string ``"data"`` reads the largest of ``norms``
    from the private data, explicitly: ``(max, False)`` with a :class:`PrivacyLeakWarning`, and the caller's
    guarantee must say that the fit is not private.  Anything else raises ``ValueError`` naming the parameter.
    """
    if isinstance(value, str):
        if value != DATA_BOUND:
            raise ValueError(f"{name} must be a positive number (a public bound over all possible inputs) or "
                             f"{DATA_BOUND!r}; got {value!r}")
        bound = float(np.max(norms)) if np.size(norms) else 0.0
        warnings.warn(f"{name}={DATA_BOUND!r}: the bound is read from the private data, so this fit is NOT "
                      "differentially private (its guarantee_ says private=False, epsilon=inf)",
                      PrivacyLeakWarning, stacklevel=3)
        return (bound if bound > 0 else 1.0), False
    if value is None:
        raise ValueError(f"{name} is required: a public bound on the row norms over all possible inputs (it is never "
                         f"read from the data; {name}={DATA_BOUND!r} does that explicitly and voids the guarantee)")
    return check_positive(value, name), True


def check_row_norms(
    X: NDArray[np.float64],
    bound: float,
    *,
    clip: bool,
    what: str = "row L2 norms",
    norms: NDArray[np.float64] | None = None,
) -> NDArray[np.float64]:
    """Enforce ``||x_i||_2 <= bound`` for every row.

    With ``clip=False`` a violating row raises ``ValueError``; with ``clip=True`` violating rows are
    rescaled onto the ball of radius ``bound`` and a :class:`ClippingWarning` says how many.
    ``norms`` may carry precomputed row norms.
    """
    bound = check_positive(bound, "norm bound")
    if norms is None:
        from sklearn.utils.extmath import row_norms

        norms = row_norms(X, squared=False)
    over = norms > bound * (1.0 + NORM_RTOL)
    if not np.any(over):
        return X
    if not clip:
        raise ValueError(
            f"{int(over.sum())} of {len(X)} {what} exceed the bound {bound:g} (largest {norms.max():.6g}); "
            "the privacy guarantee assumes the bound. Rescale the data or pass clip=True to clip "
            "rows onto the ball explicitly."
        )
    warnings.warn(
        f"clipped {int(over.sum())} of {len(X)} rows to {what} <= {bound:g} (largest was {norms.max():.6g})",
        ClippingWarning,
        stacklevel=3,
    )
    scale = np.ones_like(norms)
    scale[over] = bound / norms[over]
    return X * scale[:, None]
