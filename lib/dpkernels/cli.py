"""The ``dpkernels`` command: run the papers' notebooks, compare a run with the committed reference, update the
reference, build the documentation site, inspect the datasets.

A run writes only under ``build/<profile>/``; only ``dpkernels update-reference`` rewrites tracked files.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

__all__ = ["main", "parse_parameters"]


def parse_parameters(items: list[str] | None) -> dict[str, Any]:
    """``name=value`` pairs of ``-p``; each value is read as YAML (``1000``, ``0.5``, ``[0.1, 1]``, ``null``,
    ``{audit_releases: 1000}``), so it reaches the notebook with its type."""
    import yaml

    out: dict[str, Any] = {}
    for item in items or []:
        name, sep, value = item.partition("=")
        if not sep or not name.strip().isidentifier():
            raise argparse.ArgumentTypeError(f"parameter {item!r} is not name=value")
        out[name.strip()] = yaml.safe_load(value)
    return out


def _cmd_reproduce(args: argparse.Namespace) -> int:
    from dpkernels.runner import reproduce

    return reproduce(profile=args.profile, papers=args.paper, jobs=args.jobs, progress=not args.no_progress,
                     scheduler=args.scheduler)


def _cmd_run(args: argparse.Namespace) -> int:
    from dpkernels.runner import run_one

    try:
        params = parse_parameters(args.parameter)
    except argparse.ArgumentTypeError as exc:
        print(exc, file=sys.stderr)
        return 2
    profile = params.pop("profile", args.profile)
    return run_one(args.paper, profile, params, progress=not args.no_progress)


def _cmd_update_reference(args: argparse.Namespace) -> int:
    from dpkernels.reference import update_reference

    try:
        update_reference(args.profile)
    except (FileNotFoundError, RuntimeError) as exc:
        print(exc, file=sys.stderr)
        return 1
    return 0


def _cmd_list(args: argparse.Namespace) -> int:
    from dpkernels import profiles
    from dpkernels.report import PAPER_TITLES
    from dpkernels.runner import available_papers

    for paper in available_papers():
        print(f"{paper}: {PAPER_TITLES.get(paper, '')}")
        print(f"  notebook: notebooks/{paper}.py (source), notebooks/{paper}.ipynb (executed reference)")
        print(f"  papermill parameters: profile ({', '.join(profiles.PROFILE_NAMES)}; default quick), seed, sizes "
              "(a mapping overriding the profile's values below)")
        if paper in profiles.papers():
            quick, full = profiles.load(paper, "quick"), profiles.load(paper, "full")
            print(f"  {'size':<24} {'quick':<28} full")
            for key in quick:
                print(f"  {key:<24} {str(quick[key]):<28} {full[key]}")
    return 0


def _cmd_report(args: argparse.Namespace) -> int:
    from dpkernels.report import build_report
    from dpkernels.runner import render_prose

    print(build_report(args.root))
    if args.root is None:
        for path in render_prose():
            print(path)
    return 0


def _cmd_sync(args: argparse.Namespace) -> int:
    from dpkernels.runner import available_papers, sync_notebook

    for paper in args.paper or available_papers():
        print(sync_notebook(paper))
    return 0


def _cmd_site(args: argparse.Namespace) -> int:
    from dpkernels.site import build_site

    index = build_site(out=args.out)
    print(f"site: {index}")
    return 0


def _cmd_datasets(args: argparse.Namespace) -> int:
    from dpkernels.datasets import status

    rows = status(download=args.fetch)
    width = max(len(r["dataset"]) for r in rows)
    bad = 0
    for r in rows:
        print(f"{r['dataset']:<{width}}  {r['status']:<17} {r['file']:<38} {r['origin']:<17} sha256 {r['sha256']}")
        if r["status"] != "ok":
            bad += r["status"] == "checksum mismatch"
            print(f"{'':<{width}}  -> {r['location']}")
        else:
            print(f"{'':<{width}}  at {r['location']}")
    return 1 if bad else 0


def _cmd_recommend(args: argparse.Namespace) -> int:
    from dpkernels.recommendation import recommend

    try:
        print(recommend(args.task, args.n, args.d, args.epsilon, args.delta, like=args.like, results=args.results))
    except (LookupError, ValueError) as exc:
        print(exc, file=sys.stderr)
        return 1
    return 0


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("dpkernels")
    except PackageNotFoundError:
        return "unknown (not installed)"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="dpkernels", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--version", action="version", version=f"dpkernels {_version()}")
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("list", help="the papers, their notebooks, profiles and parameters")
    p.set_defaults(func=_cmd_list)
    p = sub.add_parser("reproduce", help="execute the notebooks into build/<profile>/ and compare with the reference")
    p.add_argument("--profile", choices=("quick", "full", "scale"), default="full",
                   help="full (default): each paper's protocol, the reference's profile (budget: 15 minutes on 2 "
                   "cores with --jobs 2); quick: a first look; scale: the frontier from a thousand rows to the full "
                   "data on a Dask LocalCluster (or --scheduler), the frontier's reference")
    p.add_argument("--paper", nargs="+", metavar="NAME", help="only these papers (default: all)")
    p.add_argument("--jobs", type=int, default=2, help="notebooks run in parallel (default 2)")
    p.add_argument("--no-progress", action="store_true", help="no progress bars")
    p.add_argument("--scheduler", default=None, metavar="ADDRESS",
                   help="run the notebooks' sweeps on this Dask scheduler (default: $DPKERNELS_SCHEDULER, else locally)")
    p.set_defaults(func=_cmd_reproduce)
    p = sub.add_parser("run", help="run one paper's notebook with papermill parameters (outputs in build/)")
    p.add_argument("paper", metavar="PAPER")
    p.add_argument("-p", "--parameter", action="append", metavar="NAME=VALUE",
                   help="a papermill parameter, value read as YAML; repeatable (e.g. -p seed=7 "
                   "-p 'sizes={audit_releases: 1000}'); profile=full selects the profile")
    p.add_argument("--profile", choices=("quick", "full", "scale"), default="quick", help="default quick")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    p.set_defaults(func=_cmd_run)
    p = sub.add_parser("update-reference",
                       help="copy the last run (build/<profile>/) into the tracked reference: paper_figures/, "
                       "notebooks/*.ipynb, run times, README.md, ERRATA.md")
    p.add_argument("--profile", choices=("quick", "full", "scale"), default="full",
                   help="full (default): the papers' reference; scale: the frontier's; quick: only "
                   "benchmarks/results/timings_quick.csv and the prose")
    p.set_defaults(func=_cmd_update_reference)
    p = sub.add_parser("site", help="build the documentation site (build/site/html/index.html)")
    p.add_argument("--out", default=None, help="output folder (default build/site)")
    p.set_defaults(func=_cmd_site)
    p = sub.add_parser("report", help="rebuild paper_figures/REPORT.md and the prose that quotes it (README.md, "
                       "ERRATA.md) from the tracked files, e.g. after editing a template in docs/")
    p.add_argument("--root", default=None, help="folder holding <paper>/checks.csv (default: paper_figures)")
    p.set_defaults(func=_cmd_report)
    p = sub.add_parser("sync", help="update the inputs of notebooks/*.ipynb from their .py sources, keeping outputs")
    p.add_argument("--paper", nargs="+", metavar="NAME", help="only these papers (default: all)")
    p.set_defaults(func=_cmd_sync)
    p = sub.add_parser("datasets", help="where each dataset was found and whether its checksum is valid")
    p.add_argument("--fetch", action="store_true", help="download missing files from their canonical URLs")
    p.set_defaults(func=_cmd_datasets)
    p = sub.add_parser("recommend", help="which mechanism for a task, n rows of d features and (epsilon, delta): read "
                       "from the committed frontier results (no data touched)")
    p.add_argument("task", choices=("binary", "multiclass"))
    p.add_argument("n", type=int, help="training rows")
    p.add_argument("d", type=int, help="features after the public map (constant feature included)")
    p.add_argument("epsilon", type=float)
    p.add_argument("delta", type=float, help="0 for pure epsilon-DP")
    p.add_argument("--like", default=None, help="the frontier data set to rest on (default: nearest d)")
    p.add_argument("--results", default=None, help="folder of summary.csv / recommendation.csv (default: "
                   "paper_figures/frontier)")
    p.set_defaults(func=_cmd_recommend)
    args = parser.parse_args(argv)
    return int(args.func(args))


if __name__ == "__main__":
    sys.exit(main())
