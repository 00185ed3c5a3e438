"""Issue 26.3 and 25.8: a fit's logs are outputs, so their text never depends on the private rows.

For every estimator of the release cases (``RELEASE_CASES`` of each paper's test module, as in
``tests/test_release_hygiene.py``) and for :class:`~dpkernels.PublicBoundsScaler`:

* neighbouring data sets, with no row over the public bound, one row over it, and two rows over it (a replaced row
  each time), fitted with the same seed, log the same warnings (category and text); with ``clip=False`` the two data
  sets with rows over the bound raise the same error text (the third does not raise: a refusal is the data holder's,
  not a release);
* a 1-d ``X``, an ``X`` holding a string, and labels outside the public set are refused without quoting a value;
* :func:`dpkernels.nonprivate_diagnostics` switches the statistics on (the counts and norms show), explicitly;
* one sparse-input rule for every exported estimator: a scipy sparse ``X`` is accepted and gives the release of the
  dense ``X``;
* an unknown keyword names the public class (never ``_ChaudhuriERM``).
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from scipy import sparse

import dpkernels as dk
from dpkernels import PublicBoundsScaler, nonprivate_diagnostics
from test_release_hygiene import CASES, IDS

#: Values planted in malformed inputs; no message may quote them.
MARKER = 987.654321
MARKER_TEXT = "987.654"


def _domain(est) -> str:
    """How a row breaks the estimator's public bound: "ball" (a norm bound), "box" (Hall's KDE: [0, 1]^d) or
    "none" (a feature map bounded for every input: nothing to break)."""
    if type(est).__name__ == "PrivateKDE":
        return "box"
    if _clip_keys(est) or any(k.split("__")[-1] == "data_norm" for part in _parts(est) for k in part.get_params()):
        return "ball"
    return "none"


def _parts(est) -> list:
    """The estimator and a selector's candidates (PrivateSelection's ``candidates`` is a list, which
    ``get_params(deep=True)`` does not enter)."""
    return [est, *est.get_params(deep=False).get("candidates", ())]


def _clip_keys(est) -> list[str]:
    """The ``clip`` parameters of an estimator and of its inner estimators (``estimator__clip``, a candidate's
    ``clip``)."""
    return [k for part in _parts(est) for k in part.get_params() if k.split("__")[-1] == "clip"]


def _clipping(factory, **kw):
    est = factory(**kw)
    for part in _parts(est):
        part.set_params(**{k: True for k in part.get_params() if k.split("__")[-1] == "clip"})
    return est


def _neighbours(X: np.ndarray, domain: str) -> list[np.ndarray]:
    """D0 (every row inside the bound), D1 (row 0 replaced by one outside), D2 (rows 0 and 1 outside)."""
    X = np.asarray(X, dtype=np.float64)
    if domain == "box":
        D0 = np.clip(X, 0.05, 0.95)
        far = np.full(X.shape[1], 1.5)
    else:
        D0 = 0.5 * X / np.maximum(1.0, np.linalg.norm(X, axis=1))[:, None]
        far = np.zeros(X.shape[1])
        far[0] = 5.0
    D1, D2 = D0.copy(), D0.copy()
    D1[0] = far
    D2[0], D2[1] = far, 0.8 * far
    return [D0, D1, D2]


def _log(fit) -> tuple[list[tuple[str, str]], str | None]:
    """(warnings as (category, text), the error text or None) of a call."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            fit()
            err = None
        except (ValueError, RuntimeError) as exc:
            err = f"{type(exc).__name__}: {exc}"
    return [(w.category.__name__, str(w.message)) for w in caught], err


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_neighbours_log_the_same_text(case):
    name, factory, X, y = case
    est = factory(random_state=3)
    domain = _domain(est)
    D0, D1, D2 = _neighbours(X, domain)
    logs = [_log(lambda D=D: _clipping(factory, random_state=3).fit(D, y)) for D in (D0, D1, D2)]
    assert logs[0][1] is None, f"{name}: {logs[0][1]}"
    assert logs[0] == logs[1] == logs[2], f"{name}: the logs differ between neighbours:\n{logs}"
    if domain == "none":
        return
    refusals = [_log(lambda D=D: factory(random_state=3).fit(D, y)) for D in (D1, D2)]
    if _clip_keys(est) or domain == "box":
        assert refusals[0][1] is not None, f"{name}: a row outside the bound was not refused"
    assert refusals[0] == refusals[1], f"{name}: the refusals differ between neighbours:\n{refusals}"
    assert "5" not in (refusals[0][1] or "").replace("1e-05", ""), f"{name}: the refusal quotes a norm"


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_diagnostics_show_the_statistics_explicitly(case):
    """The broken variant as an option: inside nonprivate_diagnostics() the neighbours' logs differ (the count)."""
    name, factory, X, y = case
    est = factory(random_state=3)
    if not _clip_keys(est):
        pytest.skip(f"{name} has no clip option")
    _, D1, D2 = _neighbours(X, _domain(est))
    with nonprivate_diagnostics():
        logs = [_log(lambda D=D: _clipping(factory, random_state=3).fit(D, y)) for D in (D1, D2)]
        errors = [_log(lambda D=D: factory(random_state=3).fit(D, y))[1] for D in (D1, D2)]
    assert logs[0] != logs[1] and any("nonprivate_diagnostics" in t for _, t in logs[0][0]), name
    assert errors[0] != errors[1] and "nonprivate_diagnostics" in errors[0], name


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_malformed_inputs_are_refused_without_their_values(case):
    name, factory, X, y = case
    X = np.asarray(X, dtype=np.float64).copy()
    X[0, 0] = MARKER / 1000.0 if _domain(factory()) != "none" else MARKER
    one_d = X[:, 0].copy()
    one_d[0] = MARKER
    with pytest.raises(ValueError) as exc:
        factory(random_state=0).fit(one_d, y)
    assert "Reshape" in str(exc.value) and MARKER_TEXT not in str(exc.value), f"{name}: {exc.value}"
    strings = X.astype(object)
    strings[1, 0] = "secret-value-17"
    with pytest.raises(ValueError) as exc:
        factory(random_state=0).fit(strings, y)
    assert "secret-value-17" not in str(exc.value) and "number" in str(exc.value), f"{name}: {exc.value}"
    if y is not None:
        bad = np.asarray(y).copy()
        bad[0] = 77
        with pytest.raises(ValueError) as exc:
            factory(random_state=0).fit(X, bad)
        assert "77" not in str(exc.value), f"{name}: {exc.value}"


def test_label_errors_quote_labels_only_inside_diagnostics():
    from dpkernels.mechanisms.base import resolve_classes

    for call in (lambda: resolve_classes([0, 77, 0], (0, 1), binary=True),
                 lambda: resolve_classes([0, 77, 0], None, binary=True)):
        with pytest.raises(ValueError) as exc:
            call()
        assert "77" not in str(exc.value)
        with nonprivate_diagnostics(), pytest.raises(ValueError, match="77"):
            call()


def test_scikit_learn_messages_would_quote_the_rows():
    """The control: scikit-learn's own validation quotes a 1-d X's values, which is why the project's check runs
    first."""
    from sklearn.linear_model import LogisticRegression

    with pytest.raises(ValueError, match=MARKER_TEXT):
        LogisticRegression().fit(np.array([MARKER, 1.0, 2.0]), np.array([0, 1, 0]))


def test_public_bounds_scaler_logs_nothing_about_the_rows():
    X = np.random.default_rng(0).uniform(0.1, 0.9, size=(20, 3))
    X1, X2 = X.copy(), X.copy()
    X1[0, 0] = 7.0
    X2[0, 0], X2[1, 1] = 7.0, -3.0
    logs = [_log(lambda D=D: PublicBoundsScaler(lower=0, upper=1).fit_transform(D)) for D in (X, X1, X2)]
    assert logs[0] == logs[1] == logs[2] == ([], None)
    with pytest.raises(ValueError) as exc:
        PublicBoundsScaler().fit(np.array([MARKER, 1.0]))
    assert MARKER_TEXT not in str(exc.value)


EXPORTED = sorted(n for n in dk.mechanisms.__all__ if isinstance(getattr(dk, n), type)
                  and hasattr(getattr(dk, n), "fit"))


@pytest.mark.parametrize("name", EXPORTED)
def test_an_unknown_keyword_names_the_public_class(name):
    with pytest.raises(TypeError, match=rf"^{name}\.__init__\(\) got an unexpected keyword argument 'bogus'"):
        getattr(dk, name)(bogus=1)


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_one_sparse_input_rule_accept_and_densify(case):
    """Issue 25.8: every estimator accepts scipy sparse X and releases what the dense X gives (same seed)."""
    name, factory, X, y = case
    X = np.asarray(X, dtype=np.float64)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        dense = factory(random_state=4).fit(X, y)
        for fmt in ("csr", "csc"):
            sp = factory(random_state=4).fit(sparse.csr_matrix(X).asformat(fmt), y)
            for attr in type(dense)._release_attributes:
                a, b = getattr(dense, attr, None), getattr(sp, attr, None)
                if isinstance(a, np.ndarray):
                    np.testing.assert_array_equal(a, b, err_msg=f"{name}.{attr} ({fmt})")
            if y is not None and "points" not in sp.get_params():  # Hall's exact release answers at its points only
                np.testing.assert_array_equal(sp.predict(sparse.csr_matrix(X)), dense.predict(X))
        assert sp.__sklearn_tags__().input_tags.sparse, name


@pytest.mark.parametrize("factory", [
    lambda: dk.ObjectivePerturbation(epsilon=1.0, random_state=0),
    lambda: dk.OutputPerturbation(epsilon=1.0, random_state=0),
    lambda: dk.NoisyGradientDescent(epsilon=1.0, delta=1e-5, random_state=0),
    lambda: dk.PrivateSVMFinite(epsilon=1.0, random_state=0),
    lambda: dk.PrivateMarginClassifier(epsilon=1.0, delta=1e-5, rho=0.1, random_state=0),
], ids=["objective", "output", "noisy-gd", "svm-finite", "margin"])
def test_without_classes_every_unconventional_label_vector_gets_one_text(factory):
    """Privacy audit F7: with ``classes=None`` the refusal of labels that are not -1/+1 read "classes is not given"
    for {0, 1} but "only binary classification is supported" once a neighbour's row carried a third label, so the
    error told how many labels the private data hold.  Now neighbours (one label replaced) and other kinds of labels
    get one text."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(40, 3)) / 4
    y01 = np.where(X[:, 0] > 0, 1, 0)
    variants = {"0/1": y01, "a third label": np.r_[2, y01[1:]], "real": y01 + 0.5, "strings": np.where(y01, "a", "b")}
    texts = {}
    for what, y in variants.items():
        with pytest.raises(ValueError) as exc:
            factory().fit(X, y)
        texts[what] = str(exc.value)
    assert len(set(texts.values())) == 1, texts
