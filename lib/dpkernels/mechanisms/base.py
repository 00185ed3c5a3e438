"""What every mechanism states and keeps: its guarantee, its release, and nothing else.

* :class:`Guarantee`: epsilon, delta (the level the mechanism provides, everything included), the neighbouring
  relation, the statement it implements, what is released (``attributes``: every fitted attribute the release consists
  of), the assumptions (numerical ones included), how the noise was drawn, and ``status``: whether this object is a
  release (:data:`STATUSES`).
* :class:`ReleaseMixin`: the release hygiene of every fitted estimator.

  - A fitted object holds only what its guarantee covers: the attributes named in ``_release_attributes`` (plus
    scikit-learn's public metadata ``n_features_in_``, ``classes_`` and the ``guarantee_``) and its parameters.  The
    non-private solution is kept only with ``keep_nonprivate=True`` (evaluation and audits), and the guarantee then
    says ``status="evaluation"``.  No generator, bit generator, ``RandomState`` or ``SeedSequence`` is created and
    kept by a fit, sub-estimators included; one the user passes as ``random_state`` stays in the parameters, as in
    scikit-learn (and makes the fit a reproduction).
  - Randomness and status.  ``random_state=None`` (the default) draws the noise from operating-system entropy:
    nothing in the object lets anyone replay it, and the fit is a release (``status="release"``).  A
    :class:`~dpkernels.SecretKey` (>= 128 bits from :mod:`secrets`) is a release too: reproducible for its holder,
    out of reach of enumeration.  An int seed, a ``SeedSequence`` or a ``Generator`` makes the fit a reproduction
    (``status="reproduction"``, ``private`` False): the release is a deterministic function of the seed, the
    parameters and the data, so whoever knows or guesses the seed (an int from a small range is guessed by trying
    them) recomputes it on candidate data sets and tells them apart.  Its ``epsilon`` and ``delta`` still state the
    mechanism's, so that experiments account what they ran.  The noise stream of a seeded (or keyed) fit is derived
    from the seed *and* a SHA-256 digest of the estimator's class and other parameters and of the training data
    (:func:`noise_generator`): a clone fitted on the same data with the same parameters reproduces the same release
    (reruns, ``GridSearchCV(n_jobs=2)`` = ``n_jobs=1``), while different data (cross-validation folds) or different
    parameters (grid candidates) get independent noise.  A ``Generator`` passed as ``random_state`` is used as is
    (scikit-learn's convention).
  - Every fit ends in :meth:`ReleaseMixin._settle_guarantee` (wrapped around each subclass's ``fit``): the status,
    the randomness note, the numerical assumptions and the noise-to-solution ratio are written into ``guarantee_``
    from the object itself, sub-estimators included, and a :class:`~dpkernels.UtilityWarning` is raised once per
    outermost fit (a wrapper's inner fits do not warn).
  - :meth:`ReleaseMixin.release` exports what may be published: a copy with the release, the public metadata and
    ``random_state=None`` (no seed, no generator, no non-private state).  Publish that, not the fitted object; the
    export of a seeded fit is still a reproduction and says so.

* :func:`resolve_classes`: the label set is a public parameter; it is never read from the data.
* :func:`noise_release`: every noisy release goes through here (``noise="lattice"`` by default: exactly
  rounded to a grid, see :mod:`dpkernels.lattice`; ``noise="idealized"``: the papers' float64 samplers, correct in
  idealized (exact real) arithmetic only, which a floating-point attack defeats: an explicit opt-in for reproducing the
  papers' numbers, warned about, whose guarantee says ``status="idealized"``; ``"continuous"`` is its former name).
"""

from __future__ import annotations

import contextvars
import copy
import dataclasses
import functools
import hashlib
import math
import numbers
import types
import warnings
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np
from numpy.typing import ArrayLike, NDArray
from sklearn.base import BaseEstimator
from sklearn.utils.multiclass import type_of_target
from sklearn.utils.validation import column_or_1d

from dpkernels._validation import (
    DATA_BOUND,
    UTILITY_RATIO_THRESHOLD,
    PrivacyLeakWarning,
    SecretKey,
    UnsafeNoiseWarning,
    check_positive,
    check_random_state,
    diagnostics_enabled,
    utility_warning,
)
from dpkernels import lattice
from dpkernels.noise import gamma_norm_vector, gaussian_vector, laplace_vector

__all__ = [
    "Guarantee",
    "STATUSES",
    "REPLACE_ONE",
    "NOISE_MODES",
    "NUMERICAL_ASSUMPTIONS",
    "settle",
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
#: The values of ``noise``: "lattice" (floating-point safe, the default) and "idealized" (the papers' float64 samplers,
#: correct in exact real arithmetic only).  "continuous", the former name of "idealized", is still accepted.
NOISE_MODES = ("lattice", "idealized")
#: The names that select the idealized samplers.
IDEALIZED = ("idealized", "continuous")
#: What a fitted object is, from a release to not private at all (in increasing order of severity; ``status`` is the
#: most severe that applies, ``notes`` list every one):
#:
#: * ``"release"``: private as published (noise from operating-system entropy or a SecretKey);
#: * ``"reproduction"``: seeded (int, SeedSequence or Generator): whoever knows or guesses the seed recomputes the
#:   release from candidate data sets, so it is not private; epsilon and delta are the mechanism's;
#: * ``"idealized"``: noise drawn by a float64 sampler whose guarantee holds in exact real arithmetic only
#:   (``noise="idealized"``); a floating-point attack tells neighbours apart;
#: * ``"curator"``: the object holds the private data to answer further queries (``curator=True``): never publish it;
#: * ``"evaluation"``: the object holds non-private state (``keep_nonprivate=True``);
#: * ``"not private"``: a bound or the label set was read from the data, or a part is released without noise
#:   (epsilon infinite).
STATUSES = ("release", "reproduction", "idealized", "curator", "evaluation", "not private")
#: Attributes scikit-learn's API needs that carry no information about the data beyond the stated assumptions.
PUBLIC_METADATA = ("n_features_in_", "classes_", "guarantee_", "feature_names_in_")


#: The numerical assumptions of the privacy proofs, as the guarantees state them (each is measured by a test).
NUMERICAL_ASSUMPTIONS = {
    "random bits": "random bits: numpy's PCG64, seeded with >= 128 bits, taken as uniform and independent (the "
                   "assumption every DP library makes of its source; PCG64 is not a cryptographic generator)",
    "lattice": "lattice noise: float64 +, -, *, /, sqrt correctly rounded (IEEE 754, round to nearest) and numpy's "
               "float64 log, cos, sin within 2^-44 relative (dpkernels.lattice's error radii; tests/test_lattice.py "
               "measures them against mpmath); integers below 2^51 exact",
    "exp": "certified argmin: numpy's float64 exp within 2^-48 relative (dpkernels.solvers.certify.EXP_REL, 4 x the "
           "4 ulp (2^-50) numpy documents; tests/test_argmin_release.py::test_numpy_exp_is_as_accurate_as_assumed measures "
           "it against mpmath), the margins' float error bounded as dpkernels.argmin_release states",
    "idealized": "IDEALIZED NUMERICS: the noise is drawn by float64 samplers whose guarantee holds in exact real "
                 "arithmetic only; in float64 a floating-point attack tells neighbours apart (Mironov 2012; "
                 "noise='lattice' is the floating-point-safe release)",
}

#: The head of ``str(guarantee)`` for each status other than "release".
_STATUS_HEADS = {
    "reproduction": "REPRODUCTION (seeded: not private as published): ",
    "idealized": "IDEALIZED NUMERICS (not private in floating point): ",
    "curator": "CURATOR (holds the private data: never publish it): ",
    "evaluation": "EVALUATION (holds non-private state: not a release): ",
    "not private": "NOT PRIVATE: ",
}


@dataclass(frozen=True)
class Guarantee:
    """A mechanism's privacy statement: every fitted mechanism of :mod:`dpkernels` carries one as ``guarantee_``.

    The statement reads: the mechanism that released ``attributes`` (described by ``released``) is (``epsilon``,
    ``delta``)-differentially private for the ``neighbouring`` relation, by ``statement`` (the paper's theorem),
    provided the ``assumptions`` hold; ``status`` says whether *this object* is a release, i.e. whether the statement
    holds for it as published.  ``str(guarantee)`` prints it in full.

    Parameters
    ----------
    epsilon : float
        The epsilon the mechanism provides, everything included (the solver's certified slack, the floating-point
        argument of an argmin release); ``inf`` when the object is not private at all (``status="not private"``).  A
        seeded or evaluation fit keeps the mechanism's epsilon: what an experiment ran and accounts.
    delta : float
        The delta that holds with ``epsilon`` (0 for pure differential privacy).
    neighbouring : str
        The neighbouring relation (all five papers: replace-one, :data:`REPLACE_ONE`).
    released : str
        What is published, in words.
    statement : str
        The theorem (or composition) the guarantee implements, with the paper's numbering.
    assumptions : tuple of str, default ()
        What the guarantee assumes (public label set, norm bounds, solver certification, the numerical assumptions of
        :data:`NUMERICAL_ASSUMPTIONS`, ...).
    epsilon_calibrated : float or None, default None
        The epsilon the noise formula was evaluated at when it differs from ``epsilon`` (e.g. eps / (1 + 2 solver_tol)
        for output perturbation, whose centre is certified to within solver_tol x the sensitivity only, so that
        ``epsilon`` is the level the user asked for).
    attributes : tuple of str, default ()
        The fitted attributes that hold the release.
    noise : str, default ""
        How the noise was drawn (floating-point safe lattice or the paper's float sampler).
    notes : tuple of str, default ()
        Anything else a user must know (seeding, evaluation mode, the noise-to-solution ratio).
    private : bool, default True
        Whether this object is a release: True exactly when ``status == "release"``.  Passing ``private=False``
        without a ``status`` means ``status="not private"``.
    status : str, default ""
        What the object is, one of :data:`STATUSES`: ``"release"``, ``"reproduction"`` (seeded), ``"idealized"``
        (float-unsafe noise), ``"curator"``, ``"evaluation"`` (non-private state kept) or ``"not private"``.  Empty:
        derived from ``private``.  Fitted estimators set it at the end of ``fit``; :class:`~dpkernels.accounting.Accountant`
        books only releases.
    randomness : str, default ""
        Where the noise came from: ``"entropy"`` (operating-system entropy, ``random_state=None``), ``"key"`` (a
        :class:`~dpkernels.SecretKey`), ``"seed"`` (an int, SeedSequence or Generator) or ``""`` (not stated).
    fp_delta : float, default 0.0
        The part of ``delta`` that only the floating-point argument adds: a mechanism that is pure epsilon-DP in exact
        arithmetic and states a small delta for its float64 implementation (objective perturbation's argmin release)
        has ``fp_delta == delta``.  :class:`~dpkernels.accounting.Accountant` books it against an explicit
        ``fp_delta_allowance``, so that a pure budget is never silently turned approximate.

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
    >>> g.status, g.private
    ('release', True)
    >>> settle(g, random_state=0).status
    'reproduction'
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
    status: str = ""
    randomness: str = ""
    fp_delta: float = 0.0

    def __post_init__(self) -> None:
        status = self.status or ("release" if self.private else "not private")
        if status not in STATUSES:
            raise ValueError(f"status must be one of {STATUSES}, got {self.status!r}")
        if not self.private and status == "release":  # private=False always wins; the status says why
            status = "not private"
        if self.randomness not in ("", "entropy", "key", "seed"):
            raise ValueError(f"randomness must be 'entropy', 'key', 'seed' or '', got {self.randomness!r}")
        if not 0.0 <= self.fp_delta <= self.delta:
            raise ValueError(f"fp_delta must lie in [0, delta = {self.delta:g}], got {self.fp_delta!r}")
        object.__setattr__(self, "status", status)
        object.__setattr__(self, "private", status == "release")

    def __str__(self) -> str:
        head = _STATUS_HEADS.get(self.status, "") + f"({self.epsilon:g}, {self.delta:g})-differential privacy [{self.statement}]"
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
    """The guarantee of a fit that is not private (e.g. a bound read from the data): epsilon infinite, status
    "not private"."""
    return dataclasses.replace(g, epsilon=math.inf, private=False, status="not private", notes=g.notes + (why,))


def randomness_kind(random_state: object) -> str:
    """``"entropy"`` (None), ``"key"`` (a :class:`~dpkernels.SecretKey`) or ``"seed"`` (an int, a SeedSequence or a
    Generator: the caller can replay it)."""
    if random_state is None:
        return "entropy"
    if isinstance(random_state, SecretKey):
        return "key"
    return "seed"


#: The randomness notes, by kind (:func:`randomness_note`); a note starting with one of these is replaced on settling.
_RANDOMNESS_NOTES = {
    "entropy": "noise drawn from operating-system entropy (random_state=None): nothing in the object replays it",
    "key": ("KEYED noise (random_state=SecretKey): derived from the key, the parameters and the data; the key stays in "
            "the parameters and in a pickle of this object, so keep those as secret as the data, and publish "
            "release(), which holds no key"),
    "seed": ("SEEDED noise (random_state given): for REPRODUCTION only, not a release. The release is a deterministic "
             "function of the seed, the parameters and the data: whoever knows or guesses the seed (an int from a "
             "small range is found by trying them) recomputes it on candidate data sets and tells them apart. The seed "
             "stays in the parameters (scikit-learn's convention) and in a pickle of this object. For a release, fit "
             "with random_state=None or a SecretKey"),
}
_EXPORT_NOTES = {
    "entropy": "exported by release(): noise drawn from operating-system entropy",
    "key": "exported by release(): noise keyed by a SecretKey, which this export does not hold",
    "seed": ("exported by release() from a SEEDED fit: this export holds no seed, but whoever knows or guesses it "
             "recomputes the release from candidate data sets: a reproduction, NOT a release"),
}
_REPLACED_NOTES = tuple(_RANDOMNESS_NOTES.values()) + tuple(_EXPORT_NOTES.values())


def randomness_note(random_state: object) -> str:
    """What a user must know about the source of the noise."""
    return _RANDOMNESS_NOTES[randomness_kind(random_state)]


def settle(g: Guarantee, *, random_state: object = None, randomness: str | None = None, noise: str | None = None,
           reasons: set[str] | frozenset[str] = frozenset(), assumptions: Sequence[str] = ()) -> Guarantee:
    """``g`` with its status, randomness note and numerical assumptions written from how the release was made.

    Parameters
    ----------
    g : Guarantee
        The mechanism's statement.
    random_state : object, default None
        Where the noise came from (ignored when ``randomness`` is given).
    randomness : {"entropy", "key", "seed"} or None
        The kind of randomness, when it is not the ``random_state`` given (a sub-estimator fitted with its wrapper's
        stream, an export).
    noise : str or None
        The noise option used (``"idealized"`` / ``"continuous"`` make the status at least "idealized").
    reasons : set of str
        Further statuses that apply ("evaluation", "curator", "idealized", "not private").
    assumptions : sequence of str
        Numerical assumptions to state (keys of :data:`NUMERICAL_ASSUMPTIONS` or texts), added once each.

    Returns
    -------
    Guarantee
        With ``status`` the most severe of :data:`STATUSES` that applies.

    Examples
    --------
    >>> from dpkernels import Guarantee, SecretKey
    >>> g = Guarantee(1.0, 0.0, "replace-one", "a count", "Laplace")
    >>> settle(g, random_state=None).status, settle(g, random_state=SecretKey()).status
    ('release', 'release')
    >>> s = settle(g, random_state=7)
    >>> s.status, s.private, s.epsilon
    ('reproduction', False, 1.0)
    """
    kind = randomness or randomness_kind(random_state)
    found = set(reasons)
    if g.status == "not private" or not math.isfinite(g.epsilon):
        found.add("not private")
    if kind == "seed":
        found.add("reproduction")
    if isinstance(noise, str) and noise in IDEALIZED:
        found.add("idealized")
    status = max(found | {"release"}, key=STATUSES.index)
    keys = ("random bits", *assumptions) + (("lattice",) if noise == "lattice" else ())
    texts = [NUMERICAL_ASSUMPTIONS.get(a, a) for a in keys]
    if "idealized" in found:
        texts.append(NUMERICAL_ASSUMPTIONS["idealized"])
    extra = tuple(t for i, t in enumerate(texts) if t not in g.assumptions and t not in texts[:i])
    notes = tuple(n for n in g.notes if not n.startswith(_REPLACED_NOTES))
    return dataclasses.replace(g, status=status, private=status == "release", randomness=kind,
                               assumptions=g.assumptions + extra, notes=(_RANDOMNESS_NOTES[kind],) + notes)


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
    * a :class:`~dpkernels.SecretKey`: as an int seed, from the key's >= 128 bits.
    """
    if random_state is None or isinstance(random_state, np.random.Generator):
        return check_random_state(random_state)
    if isinstance(random_state, (numbers.Integral, np.integer)):
        ss = np.random.SeedSequence(int(random_state))
    elif isinstance(random_state, np.random.SeedSequence):
        ss = random_state
    elif isinstance(random_state, SecretKey):
        ss = random_state.seed_sequence()
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
    return ("IDEALIZED NUMERICS: the paper's float64 sampler (NOT floating-point safe: a floating-point attack can tell "
            "neighbours apart whatever epsilon says; for reproducing the paper's numbers only)")


#: What noise='idealized' costs, in numbers (tests/test_release_hygiene.py runs these attacks as negative controls).
UNSAFE_NOISE_MESSAGE = (
    "noise='idealized' uses the paper's float64 sampler and solve, whose guarantee holds in idealized (exact real) "
    "arithmetic only and not in floating point: a floating-point attack that knows the two neighbouring data sets "
    "tells them apart in every trial (Mironov 2012 for Laplace sampling; the argmin attack for objective perturbation), "
    "i.e. a 95% lower bound on epsilon above 3 whatever epsilon the guarantee states (our tests: 1500/1500 against "
    "0/1500 at a claimed epsilon of 1). The fit's guarantee says status='idealized' (not private). Use noise='lattice' "
    "(the default) for a release; 'idealized' is for reproducing the papers' numbers")


def check_noise(noise: object, *, warn: bool = True) -> str:
    """Validate a ``noise`` option: ``"lattice"``, ``"idealized"`` or its former name ``"continuous"``.

    Anything else raises ``ValueError`` (a typo never falls back to a float sampler).  The idealized samplers warn with
    :data:`UNSAFE_NOISE_MESSAGE` (``warn=False`` for helpers that a validated fit calls); the fit's guarantee then says
    ``status="idealized"``.  Returns ``noise`` unchanged.
    """
    if not isinstance(noise, str) or noise not in NOISE_MODES + ("continuous",):
        raise ValueError(f"noise must be one of {NOISE_MODES} ('continuous' is the former name of 'idealized'), got "
                         f"{noise!r}")
    if noise in IDEALIZED and warn:
        former = (" ('continuous' is the former name of noise='idealized', the honest one: the guarantee holds in "
                  "exact arithmetic only)" if noise == "continuous" else "")
        warnings.warn(UNSAFE_NOISE_MESSAGE + former, UnsafeNoiseWarning, stacklevel=3)
    return noise


def noise_release(center: ArrayLike, kind: str, scale: float, *, noise: str, random_state: object) -> NDArray[np.float64]:
    """``center`` plus noise of the given ``kind`` (``"laplace"``: i.i.d. Laplace(scale); ``"gamma_norm"``: density
    proportional to exp(-||b|| / scale) (Chaudhuri et al.'s beta = 1 / scale); ``"gaussian"``: i.i.d. N(0, scale^2)),
    drawn as ``noise`` says (validated here without a warning: the fit that calls this has warned)."""
    check_noise(noise, warn=False)
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
    else:
        if kind == "laplace":
            return center + laplace_vector(scale, center.shape, rng, idealized=True)
        if kind == "gamma_norm":
            if center.ndim == 1:
                return center + gamma_norm_vector(1.0 / scale, center.shape[0], random_state=rng, idealized=True)
            return center + gamma_norm_vector(1.0 / scale, center.shape[1], n=center.shape[0], random_state=rng,
                                              idealized=True)
        if kind == "gaussian":
            return center + gaussian_vector(scale, center.shape, rng, idealized=True)
    raise ValueError(f"unknown noise kind {kind!r}")


def require_certified(distance_bound: float, tol: float, what: str = "||w - w*||") -> None:
    """Refuse to release unless the solver certified ``what`` <= tol (= solver_tol x the sensitivity): every
    mechanism's privacy proof assumes the exact minimiser, and a solver error eta adds up to 2 eta to the sensitivity."""
    if not distance_bound <= tol:
        got = f" [nonprivate_diagnostics: certified {distance_bound:.3g}]" if diagnostics_enabled() else ""
        raise RuntimeError(
            f"the solver could not certify {what} <= solver_tol x sensitivity = {tol:.3g}; refusing to release (the "
            f"guarantee assumes the exact minimiser; what it reached is a statistic of the data, not shown){got}"
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
    Binary estimators need exactly two classes; index 0 maps to -1 and index 1 to +1.  With ``classes=None`` every
    label vector that is not -1/+1 is refused with the same text (not "multiclass" for three labels and "continuous"
    for real ones: a neighbouring data set's error would then say how many labels, or which kind, the data hold);
    only ``classes="data"`` says what is wrong with the labels (scikit-learn's wording).
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
    read = isinstance(classes, str) and classes == DATA_BOUND
    if arr.dtype.kind == "f" and read and np.any(arr != np.round(arr)):
        raise ValueError(f"Unknown label type: {type_of_target(arr)} (a classifier needs class labels, e.g. -1/+1)")
    if read:  # the label set is read from the data anyway: say what is wrong with the labels
        kind = type_of_target(arr)
        if kind not in ("binary", "multiclass"):
            raise ValueError(f"Unknown label type: {kind} (a classifier needs class labels)")
    if isinstance(classes, str) and classes == DATA_BOUND:
        cls = np.unique(arr)
        warnings.warn(f"classes={DATA_BOUND!r}: the label set is read from the private data, so this fit is NOT "
                      "differentially private (its guarantee_ says status='not private', epsilon=inf)",
                      PrivacyLeakWarning, stacklevel=3)
    elif classes is None:
        numeric = arr.dtype.kind in "biuf"
        if numeric and np.all(np.isin(arr, (-1, 1))):
            cls = np.array([-1, 1])  # the papers' convention, data-independent
        else:
            found = f" ({np.unique(arr).tolist()[:10]} [nonprivate_diagnostics])" if diagnostics_enabled() else ""
            raise ValueError(
                f"classes is not given and the labels{found} are not the public binary convention -1/+1: pass "
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
        bad = f" {np.unique(arr[~ok])[:5].tolist()} [nonprivate_diagnostics]" if diagnostics_enabled() else ""
        raise ValueError(f"some labels{bad} are not in classes {cls.tolist()} (the public label set; the labels found "
                         "in the data are not shown)")
    return cls, order[pos]


#: Depth of nested estimator fits in progress (a wrapper's inner fits run at depth > 1).
_FIT_DEPTH: contextvars.ContextVar[int] = contextvars.ContextVar("dpkernels_fit_depth", default=0)


def _settling(fit: Any) -> Any:
    """Wrap a subclass's ``fit`` so that :meth:`ReleaseMixin._settle_guarantee` runs when it returns."""

    @functools.wraps(fit)
    def fit_and_settle(self: "ReleaseMixin", *args: Any, **kwargs: Any) -> Any:
        depth = _FIT_DEPTH.get()
        token = _FIT_DEPTH.set(depth + 1)
        try:
            out = fit(self, *args, **kwargs)
            if hasattr(self, "guarantee_"):
                self._settle_guarantee(outer=depth == 0)
            return out
        finally:
            _FIT_DEPTH.reset(token)

    fit_and_settle._settles = True  # type: ignore[attr-defined]
    return fit_and_settle


class ReleaseMixin:
    """Release hygiene for the DP estimators (see the module docstring).

    Subclasses list their released fitted attributes in ``_release_attributes`` and their non-private evaluation
    state (kept only with ``keep_nonprivate=True``) in ``_nonprivate_attributes``; ``_numerics`` names the keys of
    :data:`NUMERICAL_ASSUMPTIONS` their proof uses beyond the random bits and the lattice noise.

    Every subclass's ``fit`` is wrapped (``__init_subclass__``) so that, when it returns, the guarantee states what the
    object is (:meth:`_settle_guarantee`); and a public subclass that inherits ``__init__`` from a private base gets
    its own copy, so that an error about a keyword names the public class.
    """

    _release_attributes: ClassVar[tuple[str, ...]] = ()
    _nonprivate_attributes: ClassVar[tuple[str, ...]] = ("nonprivate_",)
    _numerics: ClassVar[tuple[str, ...]] = ()
    #: True for mechanisms that are pure epsilon-DP in exact arithmetic: any delta they state is floating point's.
    _pure_in_exact_arithmetic: ClassVar[bool] = False

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        fit = cls.__dict__.get("fit")
        if fit is not None and not getattr(fit, "_settles", False):
            cls.fit = _settling(fit)
        init = cls.__init__
        if "__init__" not in cls.__dict__ and not cls.__name__.startswith("_") and init is not object.__init__ \
                and init.__qualname__.split(".")[0].startswith("_"):
            own = types.FunctionType(init.__code__, init.__globals__, "__init__", init.__defaults__, init.__closure__)
            own.__kwdefaults__ = init.__kwdefaults__
            own.__annotations__ = init.__annotations__
            own.__doc__ = init.__doc__
            own.__qualname__ = f"{cls.__name__}.__init__"
            own.__module__ = cls.__module__
            cls.__init__ = own  # type: ignore[misc]

    def __sklearn_tags__(self) -> Any:
        tags = super().__sklearn_tags__()  # type: ignore[misc]
        tags.input_tags.sparse = True  # one rule for every estimator: accepted and densified (_validation.validate_data)
        return tags

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

    # what the object is ------------------------------------------------------------------------
    def _sub_releases(self) -> list["ReleaseMixin"]:
        """The fitted sub-estimators this object's release consists of (e.g. ``estimators_``, ``best_estimator_``)."""
        out: list[ReleaseMixin] = []
        for k in self._release_attributes:
            v = getattr(self, k, None)
            for item in (v if isinstance(v, (list, tuple)) else [v]):
                if isinstance(item, ReleaseMixin) and hasattr(item, "guarantee_"):
                    out.append(item)
        return out

    def _own_reasons(self) -> set[str]:
        """The statuses that apply to this object by its own parameters and state (its randomness apart)."""
        reasons: set[str] = set()
        if getattr(self, "keep_nonprivate", False) or any(hasattr(self, a) for a in self._nonprivate_attributes):
            reasons.add("evaluation")
        if getattr(self, "curator", False) and getattr(self, "_curator", None) is not None:
            reasons.add("curator")
        noise = getattr(self, "noise", None)
        if isinstance(noise, str) and noise in IDEALIZED:
            reasons.add("idealized")
        g = getattr(self, "guarantee_", None)
        if g is not None and (g.status == "not private" or not math.isfinite(g.epsilon)):
            reasons.add("not private")
        for sub in self._sub_releases():
            reasons |= sub._own_reasons()
        return reasons

    def _randomness(self, inherited: str | None = None) -> str:
        """The kind of this fit's randomness: its own ``random_state``'s, or (a sub-estimator fitted with its
        wrapper's stream: a Generator or None) the wrapper's."""
        rs = getattr(self, "random_state", None)
        if inherited is not None and (rs is None or isinstance(rs, np.random.Generator)):
            return inherited
        kind = randomness_kind(rs)
        for sub in self._sub_releases():  # a pre-fitted sub-estimator seeded by the user makes this a reproduction
            if sub._randomness(kind) == "seed":
                return "seed"
        return kind

    def _numerical_assumptions(self) -> tuple[str, ...]:
        g = self.guarantee_
        noise = getattr(self, "noise", None)
        keys = list(self._numerics) if not (isinstance(noise, str) and noise in IDEALIZED) else []
        if noise == "lattice" or "dpkernels.lattice" in g.noise or "exact" in g.noise.lower():
            keys.append("lattice")
        texts = [NUMERICAL_ASSUMPTIONS[k] for k in keys]
        for sub in self._sub_releases():  # a wrapper's proof uses its parts'
            texts += [a for a in sub.guarantee_.assumptions if a in NUMERICAL_ASSUMPTIONS.values()]
        return tuple(texts)

    def _noise_to_solution(self) -> float | None:
        """The fit's noise-to-solution ratio: its own ``noise_to_solution_``, else the largest of its parts' (None for
        a mechanism that computes none)."""
        own = getattr(self, "noise_to_solution_", None)
        if own is not None:
            return float(own)
        parts = [r for r in (sub._noise_to_solution() for sub in self._sub_releases()) if r is not None]
        return max(parts) if parts else None

    def _fp_delta(self) -> float:
        """The floating-point part of the stated delta: all of it for a mechanism pure in exact arithmetic, or for a
        wrapper given no delta of its own whose parts' deltas are all floating point's; else 0."""
        g = self.guarantee_
        if self._pure_in_exact_arithmetic:
            return g.delta
        subs = self._sub_releases()
        if subs and not getattr(self, "delta", 0.0) and all(s.guarantee_.fp_delta == s.guarantee_.delta for s in subs):
            return g.delta
        return 0.0

    def _settle_guarantee(self, *, outer: bool = True, inherited: str | None = None) -> None:
        """Write into ``guarantee_`` what this fitted object is (run when every ``fit`` returns).

        * ``status``: "not private" when a bound or the label set was read from the data (:meth:`_void_if_data_derived`)
          or a part is released without noise; "evaluation" with non-private state kept; "curator" when the object
          holds the data to answer queries; "idealized" with float-unsafe noise; "reproduction" when the noise was
          seeded (an int, SeedSequence or Generator as ``random_state``, here or in a part); else "release".
        * the randomness note and ``randomness``; the numerical assumptions of the proof; the noise-to-solution ratio.
        * sub-estimators: the same, with the wrapper's randomness (they were fitted with its stream).
        * the outermost fit raises one :class:`~dpkernels.UtilityWarning` when the ratio exceeds the calibrated
          threshold (:data:`dpkernels._validation.UTILITY_RATIO_THRESHOLD`), unless the fit is not private at all
          (``status="not private"``, e.g. :mod:`dpkernels.testing`'s configurations, which read the label set from the
          data): the warning is about whether a release is worth publishing.
        """
        self._void_if_data_derived()
        kind = self._randomness(inherited)
        for sub in self._sub_releases():
            sub._settle_guarantee(outer=False, inherited=kind)
        g = settle(self.guarantee_, randomness=kind, reasons=self._own_reasons(),
                   assumptions=self._numerical_assumptions())
        if math.isfinite(g.delta):
            g = dataclasses.replace(g, fp_delta=self._fp_delta())
        ratio = self._noise_to_solution()
        if ratio is not None:
            note = (f"noise-to-solution ratio {ratio:.3g} (public bounds; a UtilityWarning fires above "
                    f"{UTILITY_RATIO_THRESHOLD:g}, where no fit of the frontier's scale run beat the majority class)")
            g = dataclasses.replace(g, notes=tuple(n for n in g.notes if not n.startswith("noise-to-solution ratio"))
                                    + (note,))
        self.guarantee_ = g
        if outer and ratio is not None and g.status != "not private":  # a fit that is no release at all needs none
            utility_warning(ratio, type(self).__name__, stacklevel=4)

    def release(self) -> Any:
        """What may be published: a copy holding the release and nothing else.

        The copy holds the attributes its ``guarantee_`` names, the public metadata (``n_features_in_``,
        ``classes_``, ``guarantee_``) and the parameters, with ``random_state=None`` and ``keep_nonprivate=False``:
        no seed, no key, no generator, no non-private state.  Predictions are unchanged.

        Returns
        -------
        estimator
            A new fitted estimator of the same class.  Its ``guarantee_.status`` is "release" when the noise came from
            operating-system entropy or a :class:`~dpkernels.SecretKey`; an export of a seeded fit stays a
            "reproduction" (dropping the seed does not stop whoever knows or guesses it from recomputing the release),
            and float-unsafe noise stays "idealized".

        Raises
        ------
        AttributeError
            If the estimator is not fitted.
        ValueError
            If the fit is not private (a bound or the label set read from the data, a part released without noise).
        """
        if not hasattr(self, "guarantee_"):
            raise AttributeError(f"{type(self).__name__} is not fitted: there is nothing to release")
        if self.guarantee_.status == "not private":
            raise ValueError(f"{type(self).__name__}'s fit is not private ({self.guarantee_.statement}): nothing of it "
                             "may be released")
        kind = self.guarantee_.randomness or randomness_kind(getattr(self, "random_state", None))
        params = self.get_params(deep=False)
        params["random_state"] = None
        if "keep_nonprivate" in params:
            params["keep_nonprivate"] = False
        out = type(self)(**{k: (v.release() if isinstance(v, ReleaseMixin) and hasattr(v, "guarantee_") else v)
                            for k, v in params.items()})
        for k in set(self._release_attributes) | set(PUBLIC_METADATA):
            if hasattr(self, k):
                v = getattr(self, k)
                if isinstance(v, (list, tuple)) and any(isinstance(e, ReleaseMixin) for e in v):
                    v = type(v)(e.release() if isinstance(e, ReleaseMixin) else copy.deepcopy(e) for e in v)
                else:
                    v = v.release() if isinstance(v, ReleaseMixin) else copy.deepcopy(v)
                setattr(out, k, v)
        out._stamp_export(kind)
        return out

    def _stamp_export(self, kind: str) -> None:
        """State an export's status: its randomness is the fit's; it holds no non-private state."""
        for sub in self._sub_releases():
            sub._stamp_export(kind)
        reasons = self._own_reasons() - {"evaluation", "curator"}
        g = settle(self.guarantee_, randomness=kind, reasons=reasons)
        notes = tuple(n for n in g.notes if not n.startswith(_REPLACED_NOTES + ("keep_nonprivate=True",)))
        self.guarantee_ = dataclasses.replace(g, notes=(_EXPORT_NOTES[kind],) + notes)

    def _void_if_data_derived(self) -> None:
        """Make ``guarantee_`` say "not private" (epsilon infinite) when a bound or the label set was read from the
        data on request (``data_norm="data"``, ``classes="data"``)."""
        read = [p for p in ("classes", "data_norm") if isinstance(getattr(self, p, None), str)
                and getattr(self, p) == DATA_BOUND]
        if read and self.guarantee_.status != "not private":
            self.guarantee_ = void_guarantee(self.guarantee_, f"{', '.join(p + '=' + repr(DATA_BOUND) for p in read)}: "
                                             "read from the private data, so this fit is NOT differentially private")

    # helpers -----------------------------------------------------------------------------------
    def _notes(self) -> tuple[str, ...]:
        notes = [randomness_note(self.random_state)]
        if getattr(self, "keep_nonprivate", False):
            notes.append("keep_nonprivate=True: this object also holds the NON-PRIVATE solution (nonprivate_) for "
                         "evaluation and audits; it is not a release")
        return tuple(notes)
