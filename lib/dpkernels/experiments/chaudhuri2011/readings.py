"""Readings of the KDDCup99 protocol the paper leaves open (the data it sampled from, the task, the row
normalisation) as explicit parameters."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd
from tqdm import tqdm

from dpkernels.datasets import Dataset, load_adult, load_kddcup99

from .protocol import Request, run_protocol, summarise

#: ipsweep, portsweep and nmap but every row of the rarer labels (back, teardrop, pod, warezclient, ...), so those
#: are ten times more frequent in it than in the paper's population.
KDD_FULL_COUNTS = {
    "smurf": 2807886, "neptune": 1072017, "normal": 972781, "satan": 15892, "ipsweep": 12481, "portsweep": 10413,
    "nmap": 2316, "back": 2203, "warezclient": 1020, "teardrop": 979, "pod": 264, "guess_passwd": 53,
    "buffer_overflow": 30, "land": 21, "warezmaster": 20, "imap": 12, "rootkit": 10, "loadmodule": 9, "ftp_write": 8,
    "multihop": 7, "phf": 4, "perl": 3, "spy": 2,
}


def _kdd_full_composition(rows: int, random_state: int, target: str, row_normalization: str) -> Dataset:
    """A ``rows``-row sample of the 10 percent file whose labels follow the full file's composition: each row is drawn
    with probability proportional to (full count / 10-percent count) of its label, without replacement (a rare
    label's rows can then appear at most once each, as in a sample of the full file of this size)."""
    from dpkernels.datasets import KDD_CATEGORICAL, KDD_COLUMNS, KDD_DOS, _kdd_frame, chaudhuri_preprocess

    df = _kdd_frame()
    counts = df["label"].value_counts()
    w = df["label"].map(lambda lab: KDD_FULL_COUNTS[lab] / counts[lab]).to_numpy(dtype=float)
    rng = np.random.default_rng(random_state)
    # weighted sampling without replacement by exponential keys (Efraimidis-Spirakis)
    keys = rng.exponential(size=len(df)) / w
    df = df.iloc[np.sort(np.argpartition(keys, rows)[:rows])]
    y = np.where(df["label"].isin(KDD_DOS), -1, 1) if target == "dos" else np.where(df["label"] == "normal", 1, -1)
    numeric = [c for c in KDD_COLUMNS[:-1] if c not in KDD_CATEGORICAL]
    X, names = chaudhuri_preprocess(df[numeric], df[KDD_CATEGORICAL], None, row_normalization)
    return Dataset("kddcup99", X, y, names, ["dos", "not-dos"] if target == "dos" else ["attack", "normal"],
                   {"composition": "full file", "subsample": rows, "labels": df["label"].value_counts().to_dict()})


def chaudhuri_data(name: str, random_state: int = 0, kdd_rows: int = 70000, target: str = "dos",
                   row_normalization: str = "project", composition: str = "10 percent") -> Dataset:
    """Adult (45,222 x 105) or the seeded 70,000-row KDDCup99 subset (DoS task, +1 = not DoS), preprocessed as in
    Section 7.1.  ``target``, ``row_normalization`` and ``composition`` select readings of the KDD protocol:
    ``composition="10 percent"`` is a uniform sample of the file we have, ``"full file"`` a sample with the label
    composition of the 4.9-million-row file the paper sampled from (:data:`KDD_FULL_COUNTS`)."""
    if name == "adult":
        return load_adult(row_normalization=row_normalization)
    if name == "kddcup99":
        if composition == "full file":
            return _kdd_full_composition(kdd_rows, random_state, target, row_normalization)
        if composition != "10 percent":
            raise ValueError(f"composition must be '10 percent' or 'full file', got {composition!r}")
        return load_kddcup99(target=target, subsample=kdd_rows, random_state=random_state, row_normalization=row_normalization)
    raise ValueError(f"unknown dataset {name!r}")




def kdd_settings_sweep(settings: Sequence[dict[str, object]], exponents: Sequence[float], losses: Sequence[str],
                       n_folds: int = 10, folds_used: int | None = None, random_state: int = 0, n_jobs: int = 1,
                       progress: bool = True, ours: tuple[dict[str, object], pd.DataFrame] | None = None) -> pd.DataFrame:
    """Table 2's non-private column under alternative readings of the KDD protocol (``settings``: keyword arguments
    of :func:`chaudhuri_data`, e.g. the attack-vs-normal task or division by the largest row norm)."""
    parts = []
    if ours is not None:  # the main reading's non-private column, already computed by the protocol
        setting, df = ours
        np_rows = df[(df.method == "non-private") & df.log10_Lambda.isin(list(exponents))]
        parts.append(summarise(np_rows, ["loss", "log10_Lambda"]).assign(setting=", ".join(f"{k}={v}" for k, v in setting.items())))
        settings = [s for s in settings if s != setting]
    for s in tqdm(settings, desc="KDD settings", disable=not progress, leave=False):
        data = chaudhuri_data("kddcup99", random_state=random_state, **s)
        req = [Request(loss, "non-private", e, None) for loss in losses for e in exponents]
        df = run_protocol(data, req, 1, n_folds=n_folds, folds_used=folds_used, random_state=random_state, n_jobs=n_jobs,
                          progress=False)
        parts.append(summarise(df, ["loss", "log10_Lambda"]).assign(setting=", ".join(f"{k}={v}" for k, v in s.items())
                                                                    or "uniform sample of the 10 percent file"))
    return pd.concat(parts, ignore_index=True)
