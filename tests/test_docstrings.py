"""The public API's docstrings (issue 19, item 3): numpydoc sections that name every parameter and fitted attribute,
a privacy statement on every mechanism, and examples that run.

* Every example (``>>>``) in the docstrings of the public modules runs as a doctest and prints what it shows, without
  a warning (an example that warns teaches a configuration that should not be copied).
* Every public estimator's docstring parses with numpydoc into a summary, Parameters naming every ``__init__``
  parameter, Attributes naming every fitted attribute (the release attributes, ``classes_``, ``n_features_in_``,
  ``guarantee_``, ``nonprivate_``; checked against what a fit actually sets), Examples, and for the private
  mechanisms Notes that state the guarantee (replace-one, what to publish: ``release()``).
* The public functions of the accounting, argmin-release, testing, JL and random-feature modules have Parameters
  naming every parameter, Returns and Examples.
* Every public method the exported classes define (fit, predict, decision_function, transform, release, ...) has a
  docstring that numpydoc parses.
"""

from __future__ import annotations

import doctest
import importlib
import inspect
import warnings

import numpy as np
import pytest
from numpydoc.docscrape import ClassDoc, FunctionDoc
from sklearn.base import BaseEstimator, ClassifierMixin, is_classifier

import dpkernels
from dpkernels.mechanisms.base import ReleaseMixin

#: Modules whose docstring examples must run.
MODULES = (
    "dpkernels",
    "dpkernels.mechanisms",
    "dpkernels.mechanisms.base",
    "dpkernels.mechanisms.rubinstein",
    "dpkernels.mechanisms.chaudhuri",
    "dpkernels.mechanisms.hall",
    "dpkernels.mechanisms.bassily",
    "dpkernels.mechanisms.park",
    "dpkernels.mechanisms.multiclass",
    "dpkernels.mechanisms.gradient",
    "dpkernels.accounting",
    "dpkernels.argmin_release",
    "dpkernels.testing",
    "dpkernels.random_features",
    "dpkernels.jl",
    "dpkernels.preprocessing",
    "dpkernels._validation",
    "dpkernels.selection",
    "dpkernels.feature_maps",
)

#: Every public estimator (scikit-learn API) exported by ``dpkernels``.
ESTIMATORS = sorted(
    (obj for obj in (getattr(dpkernels, name) for name in dpkernels._EXPORTS)
     if isinstance(obj, type) and issubclass(obj, BaseEstimator)),
    key=lambda cls: cls.__name__,
)

#: Public functions (and non-estimator classes) that need Parameters, Returns and Examples.
FUNCTIONS = (
    "dpkernels.mechanisms.hall:gaussian_mechanism",
    "dpkernels.accounting:gaussian_sigma",
    "dpkernels.accounting:gaussian_delta",
    "dpkernels.accounting:gaussian_epsilon",
    "dpkernels.accounting:compose",
    "dpkernels.accounting:compose_guarantees",
    "dpkernels.accounting:split_budget",
    "dpkernels.accounting:search_cost",
    "dpkernels.mechanisms.base:settle",
    "dpkernels.argmin_release:plan_argmin_release",
    "dpkernels.argmin_release:objective_perturbation_plan",
    "dpkernels.argmin_release:radius_target_for",
    "dpkernels.testing:check_configurations",
    "dpkernels.testing:expected_failed_checks",
    "dpkernels.random_features:rff_paired",
    "dpkernels.jl:fwht",
    "dpkernels.jl:hadamard_block",
    "dpkernels.jl:make_jl",
)

#: Public classes that are not estimators: a summary, Parameters naming every ``__init__`` parameter, and Examples.
CLASSES = (
    "dpkernels.mechanisms.base:Guarantee",
    "dpkernels.mechanisms.hall:GaussianProcessRelease",
    "dpkernels.accounting:Accountant",
    "dpkernels._validation:SecretKey",
)


def _resolve(spec: str) -> object:
    module, name = spec.split(":")
    return getattr(importlib.import_module(module), name)


def _names(section: list) -> set[str]:
    """The names a numpydoc Parameters/Attributes section documents (``a, b : type`` documents both)."""
    return {part.strip() for p in section for part in p.name.split(",") if part.strip()}


def _parse(obj: object) -> ClassDoc | FunctionDoc:
    """numpydoc's parse; its warnings (unknown sections, malformed entries) are failures."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        if isinstance(obj, type):
            return ClassDoc(obj, config={"show_class_members": False})
        return FunctionDoc(obj)


def _init_parameters(cls: type) -> list[str]:
    return [p for p in inspect.signature(cls.__init__).parameters if p != "self"]


def _doctests() -> list[doctest.DocTest]:
    finder = doctest.DocTestFinder()
    tests = []
    for name in MODULES:
        module = importlib.import_module(name)
        tests += [t for t in finder.find(module, name) if t.examples]
    return sorted(tests, key=lambda t: t.name)


DOCTESTS = _doctests()


@pytest.mark.parametrize("test", DOCTESTS, ids=[t.name for t in DOCTESTS])
def test_docstring_examples_run(test):
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    report: list[str] = []
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = runner.run(test, out=report.append)
    assert result.failed == 0, "".join(report)
    assert not caught, [f"{w.category.__name__}: {w.message}" for w in caught]


def test_doctests_cover_every_estimator_and_function():
    """The doctest collection sees the examples of every estimator, function and class checked below (a docstring
    built at run time, or a module missing from MODULES, would be skipped silently)."""
    names = {t.name.rsplit(".", 1)[-1] for t in DOCTESTS}
    wanted = {cls.__name__ for cls in ESTIMATORS} | {spec.split(":")[1] for spec in FUNCTIONS + CLASSES}
    assert wanted - names == set()


@pytest.mark.parametrize("cls", ESTIMATORS, ids=lambda c: c.__name__)
def test_estimator_docstring_sections(cls):
    assert cls.__doc__, f"{cls.__name__}.__doc__ is empty"
    doc = _parse(cls)
    assert doc["Summary"], "no one-line summary"
    assert doc["Extended Summary"], "no extended summary"
    missing = set(_init_parameters(cls)) - _names(doc["Parameters"])
    assert not missing, f"Parameters does not document {sorted(missing)}"
    extra = _names(doc["Parameters"]) - set(_init_parameters(cls))
    assert not extra, f"Parameters documents {sorted(extra)}, which __init__ does not take"
    expected = set(getattr(cls, "_release_attributes", ())) | {"n_features_in_"}
    if issubclass(cls, ReleaseMixin):
        expected |= {"guarantee_"}
    if issubclass(cls, ClassifierMixin):
        expected |= {"classes_"}
    if "keep_nonprivate" in _init_parameters(cls):
        expected |= {"nonprivate_"}
    missing = expected - _names(doc["Attributes"])
    assert not missing, f"Attributes does not document {sorted(missing)}"
    assert all(p.desc for p in doc["Parameters"] + doc["Attributes"]), "an entry without a description"
    assert any(">>>" in line for line in doc["Examples"]), "no runnable example"
    if issubclass(cls, ReleaseMixin):
        notes = " ".join(doc["Notes"])
        assert "replace-one" in notes and "release()" in notes.replace(":meth:`release`", "release()"), \
            "Notes do not state the neighbouring relation and that release() is what to publish"


@pytest.mark.parametrize("spec", FUNCTIONS, ids=lambda s: s.split(":")[1])
def test_function_docstring_sections(spec):
    func = _resolve(spec)
    doc = _parse(func)
    assert doc["Summary"], "no one-line summary"
    params = [p for p in inspect.signature(func).parameters]
    missing = set(params) - _names(doc["Parameters"])
    assert not missing, f"Parameters does not document {sorted(missing)}"
    assert doc["Returns"], "no Returns section"
    assert any(">>>" in line for line in doc["Examples"]), "no runnable example"


@pytest.mark.parametrize("spec", CLASSES, ids=lambda s: s.split(":")[1])
def test_class_docstring_sections(spec):
    cls = _resolve(spec)
    doc = _parse(cls)
    assert doc["Summary"], "no one-line summary"
    missing = set(_init_parameters(cls)) - _names(doc["Parameters"])
    assert not missing, f"Parameters does not document {sorted(missing)}"
    assert any(">>>" in line for line in doc["Examples"]), "no runnable example"


def test_every_fitted_attribute_is_documented():
    """What a fit actually sets (with ``keep_nonprivate=True`` where offered), in the configuration scikit-learn's
    checks use (:func:`dpkernels.testing.check_configurations`), is named in the class's Attributes."""
    rng = np.random.default_rng(0)
    X = rng.uniform(0.0, 1.0, size=(120, 2))
    y = np.where(X[:, 0] > 0.5, 1, -1)
    undocumented = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the configurations read bounds and labels from the data, and warn so
        for est in dpkernels.testing.check_configurations():
            if "keep_nonprivate" in est.get_params():
                est.set_params(keep_nonprivate=True)
            est.fit(X, y) if is_classifier(est) else est.fit(X)
            fitted = {k for k in vars(est) if k.endswith("_") and not k.startswith("_")}
            missing = fitted - _names(_parse(type(est))["Attributes"])
            if missing:
                undocumented[type(est).__name__] = sorted(missing)
    assert not undocumented


def _public_methods() -> list[tuple[str, object]]:
    """(Class.name, function) for every public method and property the exported classes define in dpkernels."""
    out = {}
    for name in dpkernels._EXPORTS:
        cls = getattr(dpkernels, name)
        if not isinstance(cls, type):
            continue
        for attr, member in inspect.getmembers(cls):
            func = member.fget if isinstance(member, property) else member
            if attr.startswith("_") or not callable(func):
                continue
            if not (getattr(func, "__module__", None) or "").startswith("dpkernels"):
                continue  # scikit-learn's own (get_params, score, set_*_request, ...)
            out.setdefault(func, f"{cls.__name__}.{attr}")
    return sorted(((label, func) for func, label in out.items()), key=lambda t: t[0])


METHODS = _public_methods()


@pytest.mark.parametrize("label, func", METHODS, ids=[label for label, _ in METHODS])
def test_public_methods_have_docstrings(label, func):
    """Every public method (fit, predict, decision_function, transform, release, ...) says what it does, in a
    docstring numpydoc parses without a warning (an inherited docstring counts, as on the site)."""
    assert inspect.getdoc(func), f"{label} has no docstring"
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        FunctionDoc(func)
