"""Input validation shared by every mechanism.

Privacy guarantees hold only under stated assumptions (bounded row norms, labels in {-1, +1},
finite inputs, valid privacy parameters).  The helpers here turn a broken assumption into a clear
``ValueError`` or, where a mechanism offers it, an explicit clipping step.  Randomness always comes from a
:class:`numpy.random.Generator` (or a :class:`SecretKey`, from which each fit derives its own).

Logs are outputs.  A warning or an error raised during a fit is read by whoever reads the log, so by default none
carries a count, a value or a norm computed from the private rows: the text is the same on neighbouring data sets
(``tests/test_data_independent_logs.py`` fits neighbours and compares).  Clipping with ``clip=True`` is silent (it is
the documented per-record map), a row above a norm bound is refused without saying which, how many or by how much,
and a malformed ``X`` is refused before scikit-learn's validation could quote its values.
:func:`nonprivate_diagnostics` switches the statistics on, explicitly, for debugging on data one may look at.
"""

from __future__ import annotations

import contextlib
import contextvars
import math
import numbers
import secrets
import warnings
from collections.abc import Iterator
from typing import Any

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
    "UTILITY_RATIO_THRESHOLD",
    "noise_dominance",
    "SecretKey",
    "nonprivate_diagnostics",
    "diagnostics_enabled",
    "check_input_shape",
    "validate_data",
    "check_random_state",
    "check_positive",
    "check_epsilon",
    "check_delta",
    "check_probability",
    "DELTA_N_FACTOR",
    "delta_ceiling",
    "check_delta_far_below_inverse_n",
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
    """Inputs were clipped onto a public bound, with how many (raised only inside :func:`nonprivate_diagnostics`:
    by default clipping is a documented per-record map whose count, a statistic of the private rows, is not logged)."""


class UnsafeNoiseWarning(RuntimeWarning):
    """A release uses a paper's continuous float64 sampler, which a floating-point attack defeats."""


class UtilityWarning(UserWarning):
    """The calibrated noise is so large against the non-private solution's largest possible norm (a ratio of public
    bounds, :data:`UTILITY_RATIO_THRESHOLD`) that no fit of the frontier's scale run at such a ratio beat always
    predicting the majority class: the release is likely mostly noise."""


#: The noise-to-solution ratio above which :class:`UtilityWarning` fires, calibrated on the frontier's committed scale
#: run (``paper_figures/frontier/summary.csv``): the ratio of every configuration of a mechanism that reports one was
#: computed from its public parameters (n, d, epsilon and the frontier's rules) by fitting the same estimator on
#: synthetic rows of the same shape (the ratio reads no data), and the threshold is the largest ratio at which some
#: configuration beat the majority class (paired one-sided test at 95%), rounded up to a power of two
#: (``lib/dpkernels/data/utility_calibration.csv``, written by ``python -m dpkernels.experiments.utility_calibration``; checked by
#: ``tests/test_utility_warning.py``).
UTILITY_RATIO_THRESHOLD = 8.0

def noise_dominance(noise_norm: float, solution_bound: float, what: str) -> float:
    """The ratio of the noise's expected norm to the largest norm the non-private solution can have (both public:
    functions of n, d, epsilon and the parameters).

    The estimator keeps it as ``noise_to_solution_``; when the outermost fit ends, its ``guarantee_`` states it and
    one :class:`UtilityWarning` is raised if it exceeds :data:`UTILITY_RATIO_THRESHOLD`
    (:meth:`dpkernels.mechanisms.base.ReleaseMixin._settle_guarantee`), however many inner fits a wrapper runs.
    ``what`` names the estimator (kept for the callers' readability)."""
    return float(noise_norm) / float(solution_bound)


def utility_warning(ratio: float, what: str, stacklevel: int = 3) -> None:
    """Raise the :class:`UtilityWarning` of a fit whose noise-to-solution ratio exceeds the calibrated threshold."""
    if ratio > UTILITY_RATIO_THRESHOLD:
        warnings.warn(f"{what}: the noise-to-solution ratio is {ratio:.3g} (the noise's expected effect against the "
                      "largest norm the non-private solution can have, both public bounds), above "
                      f"{UTILITY_RATIO_THRESHOLD:g}, beyond which no fit of the frontier's scale run beat the majority "
                      "class: the release is likely mostly noise. Use more rows, a larger epsilon or a larger "
                      "regulariser", UtilityWarning, stacklevel=stacklevel)


class SecretKey:
    """A high-entropy secret key for ``random_state``: reproducible for whoever holds it, private for everyone else.

    ``SecretKey()`` draws ``bits`` (at least 128; default 256) from the operating system's cryptographic source
    (:mod:`secrets`).  An estimator fitted with ``random_state=SecretKey()`` derives its noise from the key, its
    parameters and the training data (as it would from a seed), so the key's holder can refit and get the same
    release, while the release stays a release (``guarantee_.status == "release"``): nobody can enumerate 2^128 keys,
    unlike an int seed.  The key never appears in a ``repr`` or in :meth:`release`'s export (which holds
    ``random_state=None``); it does stay in the fitted object's parameters and its pickle, which must then be kept as
    secret as the data.  Keep a key you want to reuse with :mod:`pickle`, never by printing it.  A function entry
    point (e.g. :func:`dpkernels.gaussian_mechanism`) refuses a key, since it would reuse one noise stream across
    calls.

    Parameters
    ----------
    bits : int, default=256
        The key's entropy in bits (>= 128).

    Examples
    --------
    >>> from dpkernels import SecretKey
    >>> key = SecretKey()
    >>> key
    SecretKey(<256 bits, hidden>)
    """

    __slots__ = ("_entropy", "_bits")

    #: The least entropy a key may have.
    MIN_BITS = 128

    def __init__(self, bits: int = 256) -> None:
        if isinstance(bits, bool) or not isinstance(bits, numbers.Integral) or bits < self.MIN_BITS:
            raise ValueError(f"a SecretKey needs at least {self.MIN_BITS} bits of entropy, got {bits!r}")
        self._bits = int(bits)
        self._entropy = secrets.randbits(self._bits) | (1 << (self._bits - 1))  # exactly `bits` bits

    def __repr__(self) -> str:
        return f"SecretKey(<{self._bits} bits, hidden>)"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, SecretKey) and secrets.compare_digest(self._entropy.to_bytes(64, "little"),
                                                                       other._entropy.to_bytes(64, "little"))

    def __hash__(self) -> int:
        return hash((SecretKey, self._bits))

    def seed_sequence(self) -> np.random.SeedSequence:
        """The key as a :class:`numpy.random.SeedSequence` (what the estimators' noise streams are derived from)."""
        return np.random.SeedSequence(self._entropy)


#: Whether warnings and errors may carry statistics of the private rows (see :func:`nonprivate_diagnostics`).
_DIAGNOSTICS: contextvars.ContextVar[bool] = contextvars.ContextVar("dpkernels_nonprivate_diagnostics", default=False)


@contextlib.contextmanager
def nonprivate_diagnostics() -> Iterator[None]:
    """Let warnings and errors raised inside the block carry statistics of the private rows: NOT private.

    By default a fit's logs say the same on neighbouring data sets: clipping with ``clip=True`` is silent, a row
    above a norm bound is refused without a count or a norm, a malformed ``X`` or a label outside the public set
    without its values.  Inside this block they say how many rows were clipped or refused and the largest norm,
    :class:`~dpkernels.PublicBoundsScaler` counts the values outside their bounds, and scikit-learn's own messages
    (which may quote the data) pass unchanged.  For debugging on data you may look at; never around a fit whose log
    is published.  The switch holds in the current thread (a :mod:`contextvars` variable), not in worker processes.

    Examples
    --------
    >>> import numpy as np, warnings
    >>> from dpkernels import OutputPerturbation, nonprivate_diagnostics
    >>> X, y = np.array([[3.0, 0.0], [0.0, 0.5]]), np.array([1, -1])
    >>> with nonprivate_diagnostics(), warnings.catch_warnings(record=True) as log:
    ...     warnings.simplefilter("always")
    ...     _ = OutputPerturbation(clip=True).fit(X, y)
    >>> [str(w.message) for w in log if "clipped" in str(w.message)]
    ['clipped 1 of 2 rows to row L2 norms ||x|| (data_norm = 1) <= 1 (largest was 3) [nonprivate_diagnostics]']
    """
    token = _DIAGNOSTICS.set(True)
    try:
        yield
    finally:
        _DIAGNOSTICS.reset(token)


def diagnostics_enabled() -> bool:
    """True inside :func:`nonprivate_diagnostics`."""
    return _DIAGNOSTICS.get()


def check_random_state(random_state: object) -> np.random.Generator:
    """Return a :class:`numpy.random.Generator` for ``random_state``.

    Accepts a ``Generator`` (used as is), an ``int`` or ``SeedSequence`` (seeds a new PCG64
    generator) or ``None`` (fresh OS entropy).  The legacy global ``RandomState`` is refused: noise
    must never come from the global RNG.  A :class:`SecretKey` is refused here: it keys an estimator's fit, whose
    stream is derived from the key, the parameters and the data (:func:`dpkernels.mechanisms.base.noise_generator`);
    a function called twice with one key would reuse its noise.
    """
    if isinstance(random_state, np.random.Generator):
        return random_state
    if isinstance(random_state, SecretKey):
        raise ValueError("a SecretKey keys an estimator's fit (each fit derives its own stream from the key, its "
                         "parameters and its data); here it would reuse one noise stream on every call: pass "
                         "random_state=None (operating-system entropy)")
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


#: A fit on n rows accepts a delta of at most 1 / (DELTA_N_FACTOR n): "far below 1/n", not merely below it.
DELTA_N_FACTOR = 10


def delta_ceiling(n: int) -> float:
    """The largest approximate-DP ``delta`` a fit on ``n`` rows accepts: 1 / (:data:`DELTA_N_FACTOR` n).

    A mechanism that releases one of n rows in the clear with probability delta is (0, delta)-DP, so a delta near
    1/n promises nothing useful (with delta = 1/n one row is expected in the clear over a single run); the library asks
    for delta at least ten times smaller.  ``n`` is public (the replace-one relation fixes it).

    Examples
    --------
    >>> from dpkernels._validation import delta_ceiling
    >>> delta_ceiling(100_000)
    1e-06
    """
    return 1.0 / (DELTA_N_FACTOR * float(int(n)))


def check_delta_far_below_inverse_n(delta: float, n: int) -> None:
    """Refuse an approximate-DP ``delta`` above :func:`delta_ceiling` (n) = 1/(10 n) for a fit on ``n`` rows
    (``ValueError``).

    The message may state n and 1/(10 n) (public); it names nothing else of the data.
    """
    if delta > delta_ceiling(n):
        raise ValueError(f"delta = {delta:g} must be at most 1/({DELTA_N_FACTOR} n) = {delta_ceiling(n):.3g} for "
                         f"n = {int(n)} rows: a delta near 1/n allows releasing a row in the clear with that "
                         "probability")


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
        raise TypeError(f"{name} must be a numeric {ndim}-d array: {exc}") from exc  # numpy names the type only
    except ValueError as exc:
        if diagnostics_enabled():
            raise ValueError(f"{name} must be a numeric {ndim}-d array: {exc} [nonprivate_diagnostics]") from exc
        raise ValueError(f"{name} must be a numeric {ndim}-d array of numbers (a value could not be converted; it is "
                         "a private row's, not shown)") from None
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
    set from the data would itself depend on the private data.  The error names no label found in the data
    (:func:`nonprivate_diagnostics` adds them).
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
        found = f": found {np.unique(arr[bad])[:5].tolist()} [nonprivate_diagnostics]" if diagnostics_enabled() else ""
        raise ValueError(f"labels must be -1 or +1 (the mechanisms' label set){found}")
    return arr


def check_input_shape(X: Any, name: str = "X") -> None:
    """Refuse an ``X`` that is not a real 2-d array with messages that quote none of its values.

    Run before :func:`sklearn.utils.validation.validate_data`, whose messages for a 1-d or 0-d array or complex
    data print the array (its values are private rows).  Sparse matrices and 2-d containers pass through.
    """
    from scipy import sparse

    if sparse.issparse(X) or isinstance(X, str):
        return
    ndim = getattr(X, "ndim", None)
    if ndim is None:
        try:
            ndim = np.asarray(X).ndim  # through __array__ (not np.ndim: array-likes may refuse array functions)
        except ValueError:  # ragged nested lists: numpy refuses to guess a shape
            raise ValueError(f"{name} must be a 2-d array of numbers; got a ragged nested sequence") from None
    if ndim != 2:
        hint = ("Expected 2D array, got 1D array instead. Reshape your data either using array.reshape(-1, 1) if your "
                "data has a single feature or array.reshape(1, -1) if it contains a single sample."
                if ndim == 1 else f"Expected 2D array, got {'scalar array' if ndim == 0 else f'{ndim}-d array'} instead.")
        raise ValueError(f"{name}: {hint} (The array's values are not shown: they are private rows.)")
    dtype = getattr(X, "dtype", None)
    if dtype is not None and getattr(dtype, "kind", "") == "c":
        raise ValueError(f"Complex data not supported: {name} must be real (its values are not shown)")


def validate_data(estimator: Any, X: Any = "no_validation", y: Any = "no_validation", **kwargs: Any) -> Any:
    """scikit-learn's :func:`~sklearn.utils.validation.validate_data` behind the library's two rules.

    * Logs: :func:`check_input_shape` runs first, and a conversion error (a string in ``X``: numpy's message quotes it)
      is re-raised without the value, unless :func:`nonprivate_diagnostics` is on.
    * Sparse input: every estimator accepts scipy sparse matrices and densifies them (their solvers and feature maps
      work on dense arrays; a sparse matrix too large to densify does not fit in memory either): ``accept_sparse`` is
      set here, and the caller's is overridden.
    """
    from scipy import sparse
    from sklearn.utils.validation import validate_data as _sklearn_validate_data

    no_x = isinstance(X, str) and X == "no_validation"
    if not no_x:
        check_input_shape(X)
    kwargs["accept_sparse"] = ("csr", "csc", "coo")
    try:
        out = _sklearn_validate_data(estimator, X, y, **kwargs)
    except ValueError as exc:
        if diagnostics_enabled() or not str(exc).startswith(("could not convert", "invalid literal")):
            raise
        raise ValueError(f"{type(estimator).__name__}: X must hold numbers only ({str(exc).split(':')[0]}; the "
                         "offending value is not shown: it is a private row's)") from None
    if no_x:
        return out
    if isinstance(out, tuple):
        Xv = out[0]
        return ((Xv.toarray() if sparse.issparse(Xv) else Xv),) + out[1:]
    return out.toarray() if sparse.issparse(out) else out


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
    rescaled onto the ball of radius ``bound``, silently: how many rows were over the bound, and by how much, are
    statistics of the private data, which neither the error nor a warning reports (the texts are the same on
    neighbouring data sets).  Inside :func:`nonprivate_diagnostics` the error says how many and the largest norm, and
    clipping raises a :class:`ClippingWarning` that says the same.  ``norms`` may carry precomputed row norms.
    """
    bound = check_positive(bound, "norm bound")
    if norms is None:
        from sklearn.utils.extmath import row_norms

        norms = row_norms(X, squared=False)
    over = norms > bound * (1.0 + NORM_RTOL)
    if not np.any(over):
        return X
    stats = (f"{int(over.sum())} of {len(X)} rows, largest {norms.max():.6g}" if diagnostics_enabled() else "")
    if not clip:
        raise ValueError(
            f"{what} exceed the bound {bound:g} in at least one row; the privacy guarantee assumes the bound. Rescale "
            "the data with public bounds (dpkernels.PublicBoundsScaler) or pass clip=True to clip rows onto the ball "
            "explicitly. " + (f"[nonprivate_diagnostics: {stats}]" if stats else
                              "(Which rows, how many and by how much are statistics of the private data: not shown; "
                              "dpkernels.nonprivate_diagnostics() shows them.)")
        )
    if stats:
        warnings.warn(f"clipped {int(over.sum())} of {len(X)} rows to {what} <= {bound:g} (largest was "
                      f"{norms.max():.6g}) [nonprivate_diagnostics]", ClippingWarning, stacklevel=3)
    scale = np.ones_like(norms)
    scale[over] = bound / norms[over]
    return X * scale[:, None]
