"""What every mechanism states and keeps: its guarantee, its release, and nothing else.

* :class:`Guarantee`: epsilon, delta (the level that holds, everything included), the neighbouring relation, the
  statement it implements, what is released (``attributes``: every fitted attribute the release consists of), the
  assumptions, and how the noise was drawn.
* :class:`ReleaseMixin`: the release hygiene of every fitted estimator.

  - A fitted object is a release.  It holds only what its guarantee covers: the attributes named in
    ``_release_attributes`` (plus scikit-learn's public metadata ``n_features_in_``, ``classes_`` and the
    ``guarantee_``) and its parameters.  The non-private solution is kept only with ``keep_nonprivate=True``
    (evaluation and audits), and the guarantee then says that the object is not a release.  No generator, bit
    generator, ``RandomState`` or ``SeedSequence`` is ever kept by a fit, sub-estimators included.
  - Randomness.  ``random_state=None`` (the default) draws the noise from operating-system entropy: nothing in the
    object lets anyone replay it.  An int seed (or a ``SeedSequence``) is a reproduction tool and stays in the
    parameters, as in scikit-learn: the object and its pickle hold the seed, and anyone with the seed can subtract
    the noise.  The noise stream of a seeded fit is derived from the seed *and* a SHA-256 digest of the estimator's
    class and other parameters and of the training data (:func:`noise_generator`): a clone fitted on the same data
    with the same parameters reproduces the same release (reruns, ``GridSearchCV(n_jobs=2)`` = ``n_jobs=1``), while
    different data (cross-validation folds) or different parameters (grid candidates) get independent noise, so a
    seed is never reused across releases that differ.  A ``Generator`` passed as ``random_state`` is used as is
    (scikit-learn's convention) and stays in the parameters.
  - :meth:`ReleaseMixin.release` exports what may be published: a copy with the release, the public metadata and
    ``random_state=None`` (no seed, no generator, no non-private state).  Publish that, not the fitted object.

* :func:`resolve_classes`: the label set is a public parameter; it is never read from the data.
* :func:`noise_release`: every noisy release goes through here (``noise="lattice"`` by default: exactly
  rounded to a grid, see :mod:`dpkernels.lattice`; ``noise="continuous"``: the papers' float64 samplers, which a
  floating-point attack defeats, kept to reproduce the papers' numbers and warned about).
"""

from __future__ import annotations

import copy
import dataclasses
import hashlib
import math
import numbers
import warnings
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np
from numpy.typing import ArrayLike, NDArray
from sklearn.base import BaseEstimator
from sklearn.utils.multiclass import type_of_target
from sklearn.utils.validation import column_or_1d

from dpkernels._validation import DATA_BOUND, PrivacyLeakWarning, UnsafeNoiseWarning, check_positive, check_random_state
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
    "noise_generator",
    "void_guarantee",
    "UNSAFE_NOISE_MESSAGE",
]

#: The neighbouring relation of all five papers' replacement-style definitions.
REPLACE_ONE = "replace-one: D and D' have the same n and differ in one example (x_i, y_i)"
NOISE_MODES = ("lattice", "continuous")
#: Attributes scikit-learn's API needs that carry no information about the data beyond the stated assumptions.
PUBLIC_METADATA = ("n_features_in_", "classes_", "guarantee_", "feature_names_in_")


@dataclass(frozen=True)
class Guarantee:
    """A mechanism's privacy statement: every fitted mechanism of :mod:`dpkernels` carries one as ``guarantee_``.

    The statement reads: releasing ``attributes`` (described by ``released``) is (``epsilon``, ``delta``)-differentially
    private for the ``neighbouring`` relation, by ``statement`` (the paper's theorem), provided the ``assumptions``
    hold.  ``str(guarantee)`` prints it in full.

    Parameters
    ----------
    epsilon : float
        The epsilon that holds for the released object, everything included (the solver's certified slack, the
        floating-point argument of an argmin release); ``inf`` when the object is not private.
    delta : float
        The delta that holds with ``epsilon`` (0 for pure differential privacy).
    neighbouring : str
        The neighbouring relation (all five papers: replace-one, :data:`REPLACE_ONE`).
    released : str
        What is published, in words.
    statement : str
        The theorem (or composition) the guarantee implements, with the paper's numbering.
    assumptions : tuple of str, default ()
        What the guarantee assumes (public label set, norm bounds, solver certification, ...).
    epsilon_calibrated : float or None, default None
        The epsilon the noise formula was evaluated at when it differs from ``epsilon`` (e.g. eps / (1 + 2 solver_tol)
        for output perturbation, whose centre is certified to within solver_tol x the sensitivity only, so that
        ``epsilon`` is the level the user asked for).
    attributes : tuple of str, default ()
        The fitted attributes that hold the release.
    noise : str, default ""
        How the noise was drawn (floating-point safe lattice or the paper's float sampler).
    notes : tuple of str, default ()
        Anything else a user must know (seeding, evaluation mode).
    private : bool, default True
        False when the object is not a release (non-private state kept with ``keep_nonprivate=True``, or a bound or
        the label set read from the data).

    Examples
    --------
    >>> from dpkernels import Guarantee
    >>> g = Guarantee(epsilon=1.0, delta=0.0, neighbouring="replace-one", released="a noisy count",
    ...               statement="Laplace mechanism", assumptions=("counts have sensitivity 1",))
    >>> print(g)
    (1, 0)-differential privacy [Laplace mechanism]
      neighbouring: replace-one
      released: a noisy count
      assumes: counts have sensitivity 1
    """

    epsilon: float
    delta: float
    neighbouring: str
    released: str
    statement: str
    assumptions: tuple[str, ...] = field(default_factory=tuple)
    epsilon_calibrated: float | None = None
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
        if self.epsilon_calibrated is not None:
            lines.append(f"  noise calibrated at epsilon = {self.epsilon_calibrated:.6g} (the rest covers the certified "
                         "solver slack)")
        lines += [f"  assumes: {a}" for a in self.assumptions]
        lines += [f"  note: {n}" for n in self.notes]
        return "\n".join(lines)


def void_guarantee(g: Guarantee, why: str) -> Guarantee:
    """The guarantee of a fit that is not private (e.g. a bound read from the data): epsilon infinite, private False."""
    return dataclasses.replace(g, epsilon=math.inf, private=False, notes=g.notes + (why,))


def randomness_note(random_state: object) -> str:
    """What a user must know about the source of the noise."""
    if random_state is None:
        return "noise drawn from operating-system entropy (random_state=None): nothing in the object replays it"
    return ("SEEDED noise (random_state given): for reproduction only. The seed stays in the parameters (scikit-learn's "
            "convention) and in a pickle of this object; anyone who knows it can subtract the noise. Publish "
            "release(), which holds no seed.")


#: Parameters that do not enter a seeded fit's noise stream: the seed itself, and the evaluation switch that keeps the
#: non-private solution beside the same release.
_UNSEEDED_PARAMETERS = ("random_state", "keep_nonprivate")


def _digest_update(h: "hashlib._Hash", obj: object) -> None:
    """Feed a canonical serialisation of ``obj`` (arrays by their bytes, estimators by class and parameters)."""
    if isinstance(obj, np.ndarray):
        a = np.ascontiguousarray(obj)
        h.update(f"ndarray{a.dtype.str}{a.shape}".encode())
        h.update(memoryview(a).cast("B") if a.size else b"")
    elif hasattr(obj, "tocsr") and hasattr(obj, "indptr"):  # scipy sparse
        m = obj.tocsr()
        h.update(f"csr{m.shape}".encode())
        for part in (m.data, m.indices, m.indptr):
            _digest_update(h, np.asarray(part))
    elif isinstance(obj, BaseEstimator):
        h.update(type(obj).__qualname__.encode())
        for k, v in sorted(obj.get_params(deep=False).items()):
            if k not in _UNSEEDED_PARAMETERS:
                h.update(k.encode())
                _digest_update(h, v)
    elif isinstance(obj, (list, tuple)):
        h.update(f"{type(obj).__name__}{len(obj)}".encode())
        for v in obj:
            _digest_update(h, v)
    elif isinstance(obj, dict):
        for k in sorted(obj, key=repr):
            h.update(repr(k).encode())
            _digest_update(h, obj[k])
    else:
        h.update(f"{type(obj).__name__}:{obj!r}".encode())


def noise_generator(random_state: object, estimator: object, *data: object) -> np.random.Generator:
    """The generator of a fit's noise.

    * ``None``: a fresh generator from operating-system entropy.
    * an int or a ``SeedSequence``: a generator seeded with that seed *and* the SHA-256 digest of the estimator (its
      class and parameters other than ``random_state`` and ``keep_nonprivate``) and of ``data`` (the training
      arrays), as the spawn key:
      identical seeds, parameters and data reproduce the same noise; anything different draws independent noise
      (a seed is never reused across releases that differ).
    * a ``Generator``: used as is (the caller's stream).
    """
    if random_state is None or isinstance(random_state, np.random.Generator):
        return check_random_state(random_state)
    if isinstance(random_state, (numbers.Integral, np.integer)):
        ss = np.random.SeedSequence(int(random_state))
    elif isinstance(random_state, np.random.SeedSequence):
        ss = random_state
    else:
        return check_random_state(random_state)  # raises with the accepted types
    h = hashlib.sha256()
    _digest_update(h, estimator)
    for arr in data:
        _digest_update(h, arr)
    words = np.frombuffer(h.digest(), dtype="<u4").tolist()
    return np.random.default_rng(np.random.SeedSequence(ss.entropy, spawn_key=tuple(ss.spawn_key) + tuple(words)))


def noise_description(noise: str) -> str:
    if noise == "lattice":
        return ("exact rounding of the continuous mechanism to a public grid (dpkernels.lattice): floating-point safe, "
                "no privacy cost")
    return ("continuous float64 sampler of the paper (NOT floating-point safe: a floating-point attack can tell "
            "neighbours apart whatever epsilon says; for reproducing the paper's numbers only)")


#: What noise='continuous' costs, in numbers (tests/test_release_hygiene.py runs these attacks as negative controls).
UNSAFE_NOISE_MESSAGE = (
    "noise='continuous' uses the paper's float64 sampler and solve, which are not differentially private in floating "
    "point: a floating-point attack that knows the two neighbouring data sets tells them apart in every trial "
    "(Mironov 2012 for Laplace sampling; the argmin attack for objective perturbation), i.e. a 95% lower bound on "
    "epsilon above 3 whatever epsilon the guarantee states (our tests: 1500/1500 against 0/1500 at a claimed epsilon "
    "of 1). Use noise='lattice' (the default) for a release; 'continuous' is for reproducing the papers' numbers")


def check_noise(noise: object) -> str:
    """Validate a ``noise`` option ("lattice" or "continuous"); "continuous" warns with :data:`UNSAFE_NOISE_MESSAGE`."""
    if not isinstance(noise, str) or noise not in NOISE_MODES:
        raise ValueError(f"noise must be one of {NOISE_MODES}, got {noise!r}")
    if noise == "continuous":
        warnings.warn(UNSAFE_NOISE_MESSAGE, UnsafeNoiseWarning, stacklevel=3)
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
    convention, data-independent); any other labels raise ``ValueError`` asking for
    ``classes`` (the set of labels present is a fact about the private data, never read from it by default).
    ``classes="data"`` reads it from the data explicitly, with a :class:`~dpkernels.PrivacyLeakWarning`; the
    estimator's guarantee then says it is not private (:meth:`ReleaseMixin._void_if_data_derived`).
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
    if classes is None or (isinstance(classes, str) and classes == DATA_BOUND):
        kind = type_of_target(arr)
        if kind not in ("binary", "multiclass"):
            raise ValueError(f"Unknown label type: {kind} (a classifier needs class labels)")
    if isinstance(classes, str) and classes == DATA_BOUND:
        cls = np.unique(arr)
        warnings.warn(f"classes={DATA_BOUND!r}: the label set {cls.tolist()[:10]} is read from the private data, so this "
                      "fit is NOT differentially private (its guarantee_ says private=False, epsilon=inf)",
                      PrivacyLeakWarning, stacklevel=3)
    elif classes is None:
        numeric = arr.dtype.kind in "biuf"
        if numeric and np.all(np.isin(arr, (-1, 1))):
            cls = np.array([-1, 1])  # the papers' convention, data-independent
        else:
            found = np.unique(arr).tolist()[:10]
            raise ValueError(
                f"classes is not given and the labels ({found}) are not the public binary convention -1/+1: pass "
                "classes=[...] (the public label set). Reading the label set from the private data would release a "
                "fact about it (a class present in one data set and absent from its neighbour shows); "
                f"classes={DATA_BOUND!r} does that explicitly and voids the guarantee")
    else:
        cls = np.asarray(list(classes))
        if cls.ndim != 1 or len(np.unique(cls)) != len(cls):
            raise ValueError(f"classes must be a sequence of distinct labels, got {classes!r}")
    if binary and len(cls) != 2:
        raise ValueError(f"Only binary classification is supported: a binary mechanism needs exactly two classes, got "
                         f"{len(cls)} class{'' if len(cls) == 1 else 'es'}: {cls.tolist()[:10]} (K classes "
                         "one-against-all are K releases: compose them)")
    if not binary and len(cls) < 2:
        raise ValueError(f"need at least two classes, got {len(cls)} class")
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

    def _noise_rng(self, *data: object) -> np.random.Generator:
        """The generator this fit draws its noise from (:func:`noise_generator` of ``random_state``, this estimator
        and the training data)."""
        return noise_generator(self.random_state, self, "noise", *data)

    def _public_rng(self, *public: object) -> np.random.Generator:
        """The generator of this fit's data-independent randomness (feature maps, projections, splits), derived from
        ``random_state`` and public quantities only (e.g. the input dimension), not the parameters: neighbouring data
        sets and other parameter values share it, as the papers' analyses assume (it is released anyway).  With ``random_state=None`` it is fresh entropy; with a
        ``Generator`` it is that generator."""
        return noise_generator(self.random_state, "public", *public)

    def release(self) -> Any:
        """What may be published: a copy holding the release and nothing else.

        The copy holds the attributes its ``guarantee_`` names, the public metadata (``n_features_in_``,
        ``classes_``, ``guarantee_``) and the parameters, with ``random_state=None`` and ``keep_nonprivate=False``:
        no seed, no generator, no non-private state.  Predictions are unchanged.

        Returns
        -------
        estimator
            A new fitted estimator of the same class; its ``guarantee_.private`` is True.

        Raises
        ------
        AttributeError
            If the estimator is not fitted.
        ValueError
            If the fit is not private for another reason than ``keep_nonprivate=True`` (a bound or the label set
            read from the data, a part released without noise).
        """
        if not hasattr(self, "guarantee_"):
            raise AttributeError(f"{type(self).__name__} is not fitted: there is nothing to release")
        if not self.guarantee_.private and not getattr(self, "keep_nonprivate", False):
            raise ValueError(f"{type(self).__name__}'s fit is not private ({self.guarantee_.statement}): nothing of it "
                             "may be released")
        params = self.get_params(deep=False)
        params["random_state"] = None
        if "keep_nonprivate" in params:
            params["keep_nonprivate"] = False
        out = type(self)(**{k: (v.release() if isinstance(v, ReleaseMixin) and hasattr(v, "guarantee_") else v)
                            for k, v in params.items()})
        for k in set(self._release_attributes) | set(PUBLIC_METADATA):
            if hasattr(self, k):
                v = getattr(self, k)
                setattr(out, k, v.release() if isinstance(v, ReleaseMixin) else copy.deepcopy(v))
        g = self.guarantee_
        notes = tuple(n for n in g.notes if not n.startswith(("SEEDED", "noise drawn from", "keep_nonprivate=True")))
        seeded = self.random_state is not None
        out.guarantee_ = dataclasses.replace(
            g, private=True, notes=(("noise was seeded for reproduction; this export holds no seed" if seeded else
                                     "noise drawn from operating-system entropy"),) + notes)
        return out

    def _void_if_data_derived(self) -> None:
        """Make ``guarantee_`` say "not private" (epsilon infinite) when a bound or the label set was read from the
        data on request (``data_norm="data"``, ``classes="data"``)."""
        read = [p for p in ("classes", "data_norm") if isinstance(getattr(self, p, None), str)
                and getattr(self, p) == DATA_BOUND]
        if read and self.guarantee_.private:
            self.guarantee_ = void_guarantee(self.guarantee_, f"{', '.join(p + '=' + repr(DATA_BOUND) for p in read)}: "
                                             "read from the private data, so this fit is NOT differentially private")

    # helpers -----------------------------------------------------------------------------------
    def _notes(self) -> tuple[str, ...]:
        notes = [randomness_note(self.random_state)]
        if getattr(self, "keep_nonprivate", False):
            notes.append("keep_nonprivate=True: this object also holds the NON-PRIVATE solution (nonprivate_) for "
                         "evaluation and audits; it is not a release")
        return tuple(notes)
