"""Loaders: shapes, class counts, checksums, and the unavailable and corrupt-file paths."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import numpy as np
import pytest

from dpkernels import datasets as ds

SHARED = Path(os.environ.get("DPKERNELS_DATA", Path(__file__).resolve().parents[2] / "shared" / "datasets"))


def kdd_available() -> bool:
    try:
        ds.locate("kddcup99", download=False)
        return True
    except (ds.DatasetUnavailable, ds.ChecksumMismatch):
        return False


@pytest.mark.parametrize(
    "name, shape, counts",
    [
        ("iris", (150, 4), [50, 50, 50]),
        ("wine", (178, 13), [59, 71, 48]),
        ("vowel", (528, 10), [48] * 11),
        ("satimage", (4435, 36), [479, 415, 961, 1072, 470, 1038]),
        ("segment", (2310, 19), [330] * 7),
        ("shuttle", (58000, 9), [45586, 8903, 3511]),
        ("three_moons", (400, 2), [134, 133, 133]),
        ("five_gaussians", (1000, 2), [200] * 5),
    ],
)
def test_multiclass_shapes_and_counts(name, shape, counts):
    d = ds.load(name)
    assert d.X.shape == shape
    assert sorted(d.class_counts().values()) == sorted(counts)
    assert np.all(np.isfinite(d.X))


def test_adult_chaudhuri_preprocessing():
    d = ds.load_adult()
    # 48,842 rows, 3,620 with a missing value; adult.names vocabularies give 6 + 99 = 105 columns
    assert d.X.shape == (45222, 105)
    assert d.meta["rows_dropped_missing"] == 48842 - 45222
    assert d.class_counts() == {"<=50K": 34014, ">50K": 11208}
    assert set(np.unique(d.y)) == {-1, 1}
    assert np.linalg.norm(d.X, axis=1).max() <= 1 + 1e-12
    assert d.X.min() >= 0


def test_adult_max_row_normalisation_keeps_directions():
    a = ds.load_adult(row_normalization="project")
    b = ds.load_adult(row_normalization="max")
    assert np.isclose(np.linalg.norm(b.X, axis=1).max(), 1.0)
    cos = np.sum(a.X * b.X, axis=1) / (np.linalg.norm(a.X, axis=1) * np.linalg.norm(b.X, axis=1))
    assert np.allclose(cos, 1.0)


def test_synthetic_sets_are_seeded():
    a, b = ds.make_three_moons(random_state=3), ds.make_three_moons(random_state=3)
    assert np.array_equal(a.X, b.X)
    assert not np.array_equal(a.X, ds.make_three_moons(random_state=4).X)


def test_vendored_checksums_verified():
    for key, f in ds.FILES.items():
        if f.vendored:
            loc_path = ds.REPO_DATA / f.vendored
            assert ds.sha256_of(loc_path) == f.vendored_sha256, key


@pytest.mark.skipif(not SHARED.is_dir(), reason="the shared datasets directory is not present")
def test_shared_directory_files_match_manifest(monkeypatch):
    monkeypatch.setenv("DPKERNELS_DATA", str(SHARED))
    for key in ds.FILES:
        loc = ds.locate(key, download=False)
        assert loc.origin == "DPKERNELS_DATA"


def test_kddcup99_unavailable_names_where_it_looked(offline_empty_data):
    with pytest.raises(ds.DatasetUnavailable) as exc:
        ds.load_kddcup99()
    msg = str(exc.value)
    assert "kddcup.data_10_percent.gz" in msg
    assert str(offline_empty_data) in msg and "DPKERNELS_OFFLINE" in msg
    rows = [r for r in ds.status() if r["dataset"] == "kddcup99"]
    assert rows and rows[0]["status"] == "unavailable"


def test_corrupt_file_is_refused(offline_empty_data):
    target = offline_empty_data / "elemstatlearn" / "vowel.train"
    target.parent.mkdir(parents=True)
    target.write_bytes(b"not the vowel data")
    with pytest.raises(ds.ChecksumMismatch, match="does not match"):
        ds.load_vowel()


def test_vowel_has_all_ten_features_and_matches_mlbench_on_the_nine_it_keeps():
    """ESL's vowel.train (provenance: data/SOURCES.md) adds x.2, which mlbench's copy lacks; the other 9 features and
    the classes equal mlbench's first 528 rows (speakers 0-7) exactly."""
    import pandas as pd

    v = ds.load_vowel()
    assert v.X.shape == (528, 10) and v.feature_names == [f"x.{i}" for i in range(1, 11)]
    mb = pd.read_csv(ds._open_text(ds.locate("vowel")))
    mb = mb[mb["V1"] <= 7].reset_index(drop=True)
    np.testing.assert_array_equal(v.X[:, [0] + list(range(2, 10))], mb[[f"V{i}" for i in range(2, 11)]].to_numpy())
    assert [v.target_names[k] for k in v.y] == mb["Class"].tolist()
    assert not any(np.allclose(v.X[:, 1], mb[f"V{i}"]) for i in range(2, 11))  # x.2 is the feature mlbench drops
    with pytest.raises(ValueError, match="x.2"):
        ds.load_vowel(subset="all")


@pytest.mark.skipif(not kdd_available(), reason="KDDCup99 file not available (set DPKERNELS_DATA)")
def test_kddcup99_loads_and_subsamples():
    full = ds.load_kddcup99(target="dos", preprocess=None)
    assert full.X.shape == (494021, 38)
    assert full.class_counts() == {"dos": 391458, "not-dos": 102563}
    sub = ds.load_kddcup99(subsample=70000, random_state=7)
    again = ds.load_kddcup99(subsample=70000, random_state=7)
    assert sub.X.shape[0] == 70000 and np.array_equal(sub.X, again.X)
    assert np.linalg.norm(sub.X, axis=1).max() <= 1 + 1e-12


def test_unknown_dataset():
    with pytest.raises(ValueError, match="unknown dataset"):
        ds.load("mnist")


def test_cache_lookup(offline_empty_data):
    """A file placed in the user cache is found there (after DPKERNELS_DATA and the vendored copy)."""
    src = SHARED / ds.FILES["kddcup99"].path
    if not src.is_file():
        pytest.skip("KDDCup99 file not available to copy into the cache")
    cache = Path(os.environ["DPKERNELS_CACHE"]) / "kddcup99"
    cache.mkdir(parents=True)
    shutil.copy(src, cache / "kddcup.data_10_percent.gz")
    assert ds.locate("kddcup99", download=False).origin == "cache"
