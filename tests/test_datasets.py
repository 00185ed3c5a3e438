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
    d = ds.load_adult(preprocess="chaudhuri")
    # 48,842 rows, 3,620 with a missing value; adult.names vocabularies give 6 + 99 = 105 columns
    assert d.X.shape == (45222, 105)
    assert d.meta["rows_dropped_missing"] == 48842 - 45222
    assert d.class_counts() == {"<=50K": 34014, ">50K": 11208}
    assert set(np.unique(d.y)) == {-1, 1}
    assert np.linalg.norm(d.X, axis=1).max() <= 1 + 1e-12
    assert d.X.min() >= 0


def test_adult_max_row_normalisation_keeps_directions():
    a = ds.load_adult(preprocess="chaudhuri", row_normalization="project")
    b = ds.load_adult(preprocess="chaudhuri", row_normalization="max")
    assert np.isclose(np.linalg.norm(b.X, axis=1).max(), 1.0)
    cos = np.sum(a.X * b.X, axis=1) / (np.linalg.norm(a.X, axis=1) * np.linalg.norm(b.X, axis=1))
    assert np.allclose(cos, 1.0)


def test_synthetic_sets_are_seeded():
    a, b = ds.make_three_moons(random_state=3), ds.make_three_moons(random_state=3)
    assert np.array_equal(a.X, b.X)
    assert not np.array_equal(a.X, ds.make_three_moons(random_state=4).X)


def test_package_data_checksums_verified():
    vendored = {key: f for key, f in ds.FILES.items() if f.vendored}
    assert set(vendored) == set(ds.FILES) - {"kddcup99"}  # every file but KDDCup99 ships with the package
    for key, f in vendored.items():
        path = ds._packaged(f.vendored)
        assert path is not None, f"{f.vendored} is missing from the package data"
        assert ds.sha256_of(path) == f.vendored_sha256, key


def test_package_data_is_found_without_a_data_directory(offline_empty_data):
    for key, f in ds.FILES.items():
        if f.vendored:
            assert ds.locate(key, download=False).origin == "package data", key
    assert ds.load_adult().X.shape == (45222, 104)


def _adult_frame():
    import pandas as pd

    frames = [pd.read_csv(ds._open_text(ds.locate(key)), header=None, names=ds.ADULT_COLUMNS, skiprows=skip,
                          skipinitialspace=True, na_values="?", keep_default_na=False)
              for key, skip in (("adult.data", 0), ("adult.test", 1))]
    df = pd.concat(frames, ignore_index=True)
    return df[df[ds.ADULT_COLUMNS].notna().all(axis=1)].reset_index(drop=True)


def test_adult_default_map_reads_no_private_maximum():
    """Issue 25.8: load_adult() maps each row through public constants (caps, adult.names): a neighbouring data set
    (one row replaced by one with the largest capital gain the census allows) gets the same map for every other row,
    whereas Chaudhuri et al.'s preprocessing (preprocess="chaudhuri") divides by the rows' column maxima and changes
    every row (the broken variant: the old default)."""
    frame = _adult_frame().iloc[:500].copy()
    d = ds.load_adult()
    X, names = ds.adult_public_features(frame)
    np.testing.assert_array_equal(X, d.X[:500])  # the loader's default is the public map
    assert len(names) == X.shape[1] == 104 and np.linalg.norm(d.X, axis=1).max() <= 1 + 1e-12
    neighbour = frame.copy()
    neighbour.loc[0, "capital-gain"] = 99999
    assert frame["capital-gain"].max() < 99999
    X2, _ = ds.adult_public_features(neighbour)
    np.testing.assert_array_equal(X2[1:], X[1:])
    numeric, cat = frame[ds.ADULT_NUMERIC], frame[ds.ADULT_CATEGORICAL]
    old, _ = ds.chaudhuri_preprocess(numeric, cat, None)
    old2, _ = ds.chaudhuri_preprocess(neighbour[ds.ADULT_NUMERIC], cat, None)
    assert not np.array_equal(old2[1:], old[1:])  # the paper's map reads the private maximum
    assert ds.load_adult().meta["preprocess"] == "public"
    with pytest.raises(ValueError, match="preprocess must be one of"):
        ds.load_adult(preprocess="max")


def test_default_cache_is_the_platform_user_cache(monkeypatch, tmp_path):
    """Without DPKERNELS_CACHE the cache is pooch's (platformdirs') user cache directory, which honours
    XDG_CACHE_HOME on Linux."""
    import pooch

    monkeypatch.delenv("DPKERNELS_CACHE", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert ds._cache_dir() == pooch.os_cache("dpkernels")
    if os.name == "posix" and os.uname().sysname == "Linux":
        assert ds._cache_dir() == tmp_path / "xdg" / "dpkernels"


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
    """ESL's vowel.train (provenance: lib/dpkernels/data/SOURCES.md) adds x.2, which mlbench's copy lacks; the other 9
    features and the classes equal mlbench's first 528 rows (speakers 0-7) exactly."""
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
    assert sub.X.shape == (70000, 86) and np.array_equal(sub.X, again.X)
    assert np.linalg.norm(sub.X, axis=1).max() <= 1 + 1e-12
    # the default is the public per-record map: a row's features do not depend on the other rows
    one = ds.load_kddcup99(subsample=1000, random_state=7)
    np.testing.assert_array_equal(one.X, ds.kddcup99_public_features(ds._kdd_frame().iloc[
        np.sort(np.random.default_rng(7).choice(494021, size=1000, replace=False))])[0])
    # the paper's map one-hot encodes the categorical values present in the rows loaded: 114 here, 118 on the full file
    assert ds.load_kddcup99(subsample=70000, random_state=7, preprocess="chaudhuri").X.shape == (70000, 114)


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


@pytest.fixture
def http_server(tmp_path, monkeypatch):
    """A local HTTP server over ``tmp_path / "www"``: the download path is tested without the network."""
    import functools
    import http.server
    import threading

    root = tmp_path / "www"
    root.mkdir()
    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(root))
    handler.log_message = lambda *args: None
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    monkeypatch.setenv("NO_PROXY", "127.0.0.1")
    yield root, f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


def test_download_verifies_the_checksum_and_caches(http_server, tmp_path, monkeypatch):
    """A URL serving other bytes is skipped (nothing kept), the next URL's verified file lands in the cache, and the
    next lookup finds it there without a download."""
    import hashlib

    root, url = http_server
    payload = b"the real bytes\n"
    (root / "good.txt").write_bytes(payload)
    (root / "bad.txt").write_bytes(b"tampered bytes\n")
    sha = hashlib.sha256(payload).hexdigest()
    monkeypatch.setitem(ds.FILES, "tiny", ds.DataFile("tiny/tiny.txt", sha, urls=(f"{url}/bad.txt", f"{url}/missing.txt",
                                                                                  f"{url}/good.txt")))
    monkeypatch.setenv("DPKERNELS_DATA", str(tmp_path / "nodata"))
    monkeypatch.setenv("DPKERNELS_CACHE", str(tmp_path / "cache"))
    monkeypatch.delenv("DPKERNELS_OFFLINE", raising=False)
    loc = ds.locate("tiny")
    assert loc.origin == "downloaded" and loc.path == tmp_path / "cache" / "tiny" / "tiny.txt"
    assert loc.path.read_bytes() == payload
    assert sorted(p.name for p in loc.path.parent.iterdir()) == ["tiny.txt"]  # the tampered download left nothing
    assert ds.locate("tiny").origin == "cache"


def test_download_with_no_matching_url_names_each_attempt(http_server, tmp_path, monkeypatch):
    root, url = http_server
    (root / "bad.txt").write_bytes(b"tampered bytes\n")
    monkeypatch.setitem(ds.FILES, "tiny", ds.DataFile("tiny/tiny.txt", "0" * 64, urls=(f"{url}/bad.txt", f"{url}/missing.txt")))
    monkeypatch.setenv("DPKERNELS_DATA", str(tmp_path / "nodata"))
    monkeypatch.setenv("DPKERNELS_CACHE", str(tmp_path / "cache"))
    monkeypatch.delenv("DPKERNELS_OFFLINE", raising=False)
    with pytest.raises(ds.DatasetUnavailable) as exc:
        ds.locate("tiny")
    msg = str(exc.value)
    assert f"{url}/bad.txt (downloaded, checksum mismatch: discarded)" in msg
    assert f"{url}/missing.txt (HTTPError" in msg
    assert not (tmp_path / "cache" / "tiny" / "tiny.txt").exists()
