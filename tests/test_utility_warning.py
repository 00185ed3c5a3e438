"""Issue 25.7: a UtilityWarning that means something.

* calibrated on the frontier's committed scale run: ``UTILITY_RATIO_THRESHOLD`` is what
  :mod:`dpkernels.experiments.utility_calibration` derives from the committed table, the table covers every
  configuration of the frontier's mechanisms that compute a ratio, its ratios are recomputed here (a sample), and above
  the threshold no configuration beat the majority class;
* the README's example raises none; a noise-dominated fit raises one;
* once per wrapper: a one-against-all fit, a private tuning and a kernel fit raise one warning, however many inner fits
  they run; the ratio is in ``guarantee_``'s text;
* silenced in :mod:`dpkernels.testing`'s configurations (fits that are not private at all).
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest

from dpkernels import (
    ObjectivePerturbation,
    OutputPerturbation,
    PrivateKernelERM,
    PrivateOneVsRest,
    PrivateTuning,
    PublicBoundsScaler,
    UtilityWarning,
)
from dpkernels._validation import UTILITY_RATIO_THRESHOLD
from dpkernels.experiments import utility_calibration as U
from dpkernels.report import REPO_ROOT


def _utility_warnings(fit) -> list[str]:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        fit()
    return [str(w.message) for w in caught if issubclass(w.category, UtilityWarning)]


def test_threshold_is_the_committed_calibration():
    table = U.committed_table()
    assert UTILITY_RATIO_THRESHOLD == U.threshold(table) == 8.0
    holds = table[table.beats_majority == "holds"]
    assert holds.ratio.max() <= UTILITY_RATIO_THRESHOLD < 2 * holds.ratio.max()
    above = table[table.ratio > UTILITY_RATIO_THRESHOLD]
    assert len(above) > 0 and not (above.beats_majority == "holds").any()
    summary = pd.read_csv(REPO_ROOT / "paper_figures" / "frontier" / "summary.csv")
    expected = summary[summary.mechanism.isin(U.RATIO_MECHANISMS)]
    assert len(table) == len(expected)
    merged = table.merge(expected, on=["dataset", "mechanism", "n_train", "epsilon"], suffixes=("", "_summary"))
    assert len(merged) == len(table) and (merged.beats_majority == merged.beats_majority_summary).all()


def test_committed_ratios_recompute_from_public_parameters():
    table = U.committed_table()
    sample = table[table.n_train <= 3000].groupby("mechanism").head(2)
    assert set(sample.mechanism) == set(U.RATIO_MECHANISMS)
    for r in sample.itertuples():
        assert U.public_ratio(r.mechanism, r.dataset, r.n_train, r.d, r.epsilon) == pytest.approx(r.ratio, rel=1e-12)


def _readme_data():
    from sklearn.datasets import load_breast_cancer
    from sklearn.model_selection import train_test_split

    from dpkernels.datasets import breast_cancer_ranges

    X, y = load_breast_cancer(return_X_y=True)
    X, _, y, _ = train_test_split(X, y, random_state=0)
    return X, y, breast_cancer_ranges()


def test_the_readme_example_raises_none_and_a_noise_dominated_fit_does():
    from sklearn.pipeline import make_pipeline

    X, y, (lower, upper) = _readme_data()
    model = make_pipeline(PublicBoundsScaler(lower, upper), ObjectivePerturbation(epsilon=1.0, classes=[0, 1]))
    assert _utility_warnings(lambda: model.fit(X, y)) == []
    assert model[-1].noise_to_solution_ < UTILITY_RATIO_THRESHOLD
    noisy = make_pipeline(PublicBoundsScaler(lower, upper), ObjectivePerturbation(epsilon=0.02, classes=[0, 1]))
    (msg,) = _utility_warnings(lambda: noisy.fit(X, y))
    assert f"{noisy[-1].noise_to_solution_:.3g}" in msg and "frontier" in msg
    assert any(n.startswith(f"noise-to-solution ratio {noisy[-1].noise_to_solution_:.3g}")
               for n in noisy[-1].guarantee_.notes)


def test_one_warning_per_wrapper():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(150, 4))
    X /= np.maximum(1, np.linalg.norm(X, axis=1))[:, None]
    y3 = np.argmax(X[:, :3], axis=1)
    y = np.where(X[:, 0] > 0, 1, -1)
    ovr = PrivateOneVsRest(OutputPerturbation(alpha=1e-3), epsilon=0.3, classes=[0, 1, 2])
    assert len(_utility_warnings(lambda: ovr.fit(X, y3))) == 1
    assert all(e.noise_to_solution_ > UTILITY_RATIO_THRESHOLD for e in ovr.estimators_)  # three noisy parts, one warning
    tuned = PrivateTuning(ObjectivePerturbation(), [1e-4, 1e-3], epsilon=0.02)
    assert len(_utility_warnings(lambda: tuned.fit(X, y))) == 1
    kernel = PrivateKernelERM(epsilon=0.1, alpha=1e-3, n_components=20)
    (msg,) = _utility_warnings(lambda: kernel.fit(X, y))
    assert msg.startswith("PrivateKernelERM") and kernel.noise_to_solution_ > UTILITY_RATIO_THRESHOLD
    assert "noise-to-solution ratio" in str(kernel.guarantee_)


def test_silenced_in_the_testing_configuration():
    from dpkernels.testing import check_configurations

    rng = np.random.default_rng(1)
    X = rng.normal(size=(30, 3))
    y = np.where(X[:, 0] > 0, 1, 0)
    for est in check_configurations():
        if type(est).__name__ in ("PrivateKDE", "PrivateSVDD"):
            continue
        assert _utility_warnings(lambda est=est: est.fit(X, y)) == [], type(est).__name__
