"""The runs of the registered hypotheses' variants (``registered_runs.csv``), as a command of their own.

``python -m dpkernels.experiments.yu2020 [--profile scale] [--out DIR] [--jobs N] [--only ID ...]`` runs every
hypothesis of the profile's ``hypotheses`` whose variant reruns the protocol
(:func:`~dpkernels.experiments.yu2020.hypotheses.needs_runs`) over the profile's grids, ``n_runs`` runs per point, on
the data sets it bears on, and writes their runs (the columns of
:func:`~dpkernels.experiments.yu2020.protocol.run_protocol`, ``calibration`` the hypothesis id, ``<id>@<seed>`` on
another split) to ``DIR/registered_runs.csv``.  ``--out paper_figures/yu2020`` regenerates the committed file.
``--only``: run only these hypotheses and keep the others' runs from the file already in ``DIR`` (:func:`merge_runs`;
e.g. newly registered hypotheses added to the committed file without rerunning the rest).

A profile whose ``variants`` is ``committed`` (the ``scale`` profile) reads that file in the notebook instead of
rerunning the variants with every run, as the Chaudhuri and Park notebooks read theirs
(:func:`dpkernels.experiments.registry.load_committed`): the variants cost about 1,900 CPU seconds, three quarters
of the notebook's, and their runs depend only on their configurations (each draws from a generator seeded by its
seed, label, data set and method), so a rerun reproduces the file exactly.  :func:`check_runs` refuses a file that is not
the output of the profile's configurations (another grid, number of runs, hypothesis or data set).
"""

from __future__ import annotations

import argparse
from collections.abc import Mapping, Sequence
from pathlib import Path

import pandas as pd

from dpkernels.experiments.registry import load_committed as _load_committed

from . import hypotheses as H
from . import protocol as P

__all__ = ["FILE", "SEED", "variant_configs", "check_runs", "merge_runs", "load_committed", "main"]

#: The file the command writes, committed in ``paper_figures/yu2020``.
FILE = "registered_runs.csv"
#: The command's default seed: the ``seed`` parameter of the yu2020 notebook.
SEED = 2020


def variant_configs(hypotheses: Sequence[str], datasets: Sequence[str], grids: Mapping[str, Mapping[str, Sequence]],
                    n_runs: int, seed: int) -> list[dict]:
    """The sweep configurations (:func:`~dpkernels.experiments.yu2020.hypotheses.hypothesis_configs`) of every hypothesis in ``hypotheses`` that
    needs runs of its own, on ``datasets``."""
    return [c for h in hypotheses for c in H.hypothesis_configs(h, list(datasets), grids, n_runs, seed)]


def check_runs(runs: pd.DataFrame, configs: Sequence[dict]) -> None:
    """Raise ValueError unless ``runs`` holds, for every configuration, exactly its grid's valid points with runs
    0 to ``n_runs - 1`` each, and nothing else."""
    want: dict[tuple[str, str, str], tuple[list[str], set[tuple]]] = {}
    for c in configs:
        cal = "ours" if c["label"] == "ours" else H.VARIANTS[_hypothesis(c["label"])].noise
        points = [p for p in P.grid_points(c["method"], P.config_grid(c)) if P._valid(c["method"], p, cal)]
        keys = list(c["grid"])
        want[(c["label"], c["dataset"], c["method"])] = (keys, {(*(float(p[k]) for k in keys), r)
                                                                for p in points for r in range(int(c["n_runs"]))})
    rerun = "rerun python -m dpkernels.experiments.yu2020 --out paper_figures/yu2020"
    have = set(zip(runs.calibration, runs.dataset, runs.method)) if len(runs) else set()
    if have != set(want):
        missing, extra = sorted(set(want) - have), sorted(have - set(want))
        raise ValueError(f"{FILE} is not the output of these configurations: missing {missing[:4]}"
                         f"{' ...' if len(missing) > 4 else ''}, unexpected {extra[:4]}"
                         f"{' ...' if len(extra) > 4 else ''} ({rerun})")
    for (label, ds, method), (keys, points) in want.items():
        g = runs[(runs.calibration == label) & (runs.dataset == ds) & (runs.method == method)]
        got = {(*(float(v) for v in row[:-1]), int(row[-1])) for row in g[[*keys, "run"]].itertuples(index=False)}
        if got != points or len(g) != len(points):
            raise ValueError(f"{FILE}: the runs of {label} on {ds} ({method}) are not the configured grid x runs "
                             f"({len(g)} rows, {len(points)} configured; {rerun})")


def _hypothesis(label: str) -> str:
    return label.partition("@")[0]


def merge_runs(kept: pd.DataFrame, new: pd.DataFrame, configs: Sequence[dict], only: Sequence[str]) -> pd.DataFrame:
    """The runs of ``configs``: ``new`` for the hypotheses in ``only``, ``kept`` (a previous output) for the others, in
    the order of ``configs`` and with the columns a complete run writes.  Sound because a configuration's runs depend
    on it alone (each draws from a generator seeded by its seed, label, data set and method), so keeping a previous
    run's rows is what rerunning them would give; :func:`check_runs` still checks the result against ``configs``."""
    kept = kept[~kept["calibration"].map(_hypothesis).isin(list(only))]
    runs = pd.concat([kept, new], ignore_index=True)
    order = {(c["label"], c["dataset"], c["method"]): i for i, c in enumerate(configs)}
    key = [order.get(k, len(order)) for k in zip(runs["calibration"], runs["dataset"], runs["method"])]
    runs = runs.assign(_order=key).sort_values("_order", kind="stable").drop(columns="_order").reset_index(drop=True)
    fixed, last = ["dataset", "method", "calibration"], ["run", "accuracy"]
    return runs[[*fixed, *(c for c in runs.columns if c not in fixed + last), *last]]


def load_committed(out: Path | None = None) -> pd.DataFrame | None:
    """The committed ``registered_runs.csv``, copied into the notebook's output folder ``out``; None when absent."""
    return _load_committed(P.PAPER, FILE, out)


def main(argv: list[str] | None = None) -> int:
    """The command (module docstring)."""
    from dpkernels import profiles
    from dpkernels.datasets import DatasetUnavailable
    from dpkernels.report import REPO_ROOT

    ap = argparse.ArgumentParser(prog="python -m dpkernels.experiments.yu2020",
                                 description="Run the registered hypotheses of Yu et al. (2020) whose variants rerun "
                                             "the protocol.")
    ap.add_argument("--profile", default="scale", help="the profile whose grids, runs and hypotheses to use (scale)")
    ap.add_argument("--out", type=Path, default=REPO_ROOT / "build" / "registered" / P.PAPER,
                    help="output folder (paper_figures/yu2020 regenerates the committed file)")
    ap.add_argument("--seed", type=int, default=SEED, help=f"the notebook's seed (default {SEED})")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--no-progress", action="store_true")
    ap.add_argument("--only", nargs="+", metavar="ID",
                    help="run only these hypotheses; keep the others' runs from the file already in --out")
    args = ap.parse_args(argv)
    prof = profiles.load(P.PAPER, args.profile)
    datasets = []
    for name in prof["datasets"]:
        try:
            P.load_split(name)
            datasets.append(name)
        except DatasetUnavailable as exc:
            print(f"{name}: skipped ({exc})")
    configs = variant_configs(prof["hypotheses"], datasets, prof["grids"], prof["n_runs"], args.seed)
    todo = configs
    if args.only:
        unknown = sorted(set(args.only) - set(prof["hypotheses"]))
        if unknown:
            ap.error(f"--only: {unknown} are not hypotheses of the {args.profile} profile")
        if not (args.out / FILE).exists():
            ap.error(f"--only keeps the other hypotheses' runs from {args.out / FILE}, which is missing")
        todo = [c for c in configs if _hypothesis(c["label"]) in args.only]
    runs = P.run_protocol(todo, n_jobs=args.jobs, progress=not args.no_progress) if todo else pd.DataFrame()
    if args.only:
        runs = merge_runs(pd.read_csv(args.out / FILE), runs, configs, args.only)
    check_runs(runs, configs)
    args.out.mkdir(parents=True, exist_ok=True)
    runs.to_csv(args.out / FILE, index=False)
    print(f"{len(configs)} grids, {len(runs):,} runs -> {args.out / FILE}")
    return 0
