"""The ``dpkernels`` command: run the papers' notebooks, compare a run with the committed reference, update the
reference, build the documentation site, inspect the datasets.

A run writes only under ``build/<profile>/``; only ``dpkernels update-reference`` rewrites tracked files.  Every
command but ``datasets`` works on a workbook, a clone of the repository: ``--root PATH``, else ``$DPKERNELS_ROOT``,
else the current directory or its nearest parent holding one (see ``dpkernels.workbook``).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

__all__ = ["main", "parse_parameters"]

#: The extras each command needs beyond the library (``pip install "dpkernels[<extras>]"``).
COMMAND_EXTRAS = {"reproduce": "notebooks", "run": "notebooks", "sync": "notebooks", "update-reference": "notebooks",
                  "site": "docs,notebooks"}


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
                     scheduler=args.scheduler, reference=args.root, build_dir=args.build_dir)


def _cmd_run(args: argparse.Namespace) -> int:
    from dpkernels.runner import run_one

    try:
        params = parse_parameters(args.parameter)
    except argparse.ArgumentTypeError as exc:
        print(exc, file=sys.stderr)
        return 2
    profile = params.pop("profile", args.profile)
    return run_one(args.paper, profile, params, progress=not args.no_progress, root=args.root)


def _cmd_update_reference(args: argparse.Namespace) -> int:
    from dpkernels.prose import UnresolvedReference
    from dpkernels.reference import update_reference

    try:
        update_reference(args.profile, repo=args.root, papers_only=args.paper)
    except (FileNotFoundError, RuntimeError, UnresolvedReference) as exc:
        print(exc, file=sys.stderr)
        return 1
    return 0


def _cmd_list(args: argparse.Namespace) -> int:
    from dpkernels import profiles
    from dpkernels.report import PAPER_TITLES
    from dpkernels.runner import available_papers

    papers = available_papers(args.root / "notebooks")
    if not papers:
        print(f"no notebooks in {args.root / 'notebooks'} (a notebooks/<paper>.py with its executed .ipynb)",
              file=sys.stderr)
        return 1
    print(f"workbook: {args.root}")
    for paper in papers:
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
    from dpkernels.prose import UnresolvedReference, render_prose
    from dpkernels.report import build_report

    print(build_report(args.root / "paper_figures" if args.figures is None else Path(args.figures)))
    if args.figures is None:
        try:
            for path in render_prose(args.root):
                print(path)
        except UnresolvedReference as exc:
            print(f"prose not rendered: {exc}", file=sys.stderr)
            return 1
    return 0


def _cmd_sync(args: argparse.Namespace) -> int:
    from dpkernels.runner import available_papers, sync_notebook

    for paper in args.paper or available_papers(args.root / "notebooks"):
        print(sync_notebook(paper, args.root / "notebooks"))
    return 0


def _cmd_site(args: argparse.Namespace) -> int:
    from dpkernels.site import build_site

    index = build_site(out=args.out or args.root / "build" / "site", repo=args.root)
    print(f"site: {index}")
    return 0


def _cmd_datasets(args: argparse.Namespace) -> int:
    from dpkernels.datasets import status

    rows = status(download=args.fetch)
    width = max(len(r["dataset"]) for r in rows)
    bad = []
    for r in rows:
        print(f"{r['dataset']:<{width}}  {r['status']:<17} {r['file']:<38} {r['origin']:<17} sha256 {r['sha256']}")
        if r["status"] != "ok":
            bad.append(f"{r['dataset']} ({r['status']})")
            print(f"{'':<{width}}  -> {r['location']}")
        else:
            print(f"{'':<{width}}  at {r['location']}")
    if bad:
        print(f"not ready: {', '.join(bad)}; the results that need them are marked skipped (`dpkernels datasets "
              "--fetch` downloads what has a canonical URL; or point DPKERNELS_DATA at a folder holding the files)",
              file=sys.stderr)
    return 1 if bad else 0


def _cmd_recommend(args: argparse.Namespace) -> int:
    from dpkernels.recommendation import recommend

    try:
        print(recommend(args.task, args.n, args.d, args.epsilon, args.delta, n_classes=args.n_classes, like=args.like,
                        results=args.results))
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


def _missing_extra(command: str, exc: ModuleNotFoundError) -> str | None:
    """What to install when ``command`` failed to import a third-party package (None: not a missing extra)."""
    top = (exc.name or "").split(".")[0]
    if not top or top == "dpkernels" or command not in COMMAND_EXTRAS:
        return None
    extras = COMMAND_EXTRAS[command]
    return (f"dpkernels {command} needs the Python package {top!r}, which is not installed: it comes with the extras "
            f"{extras!r}: pip install \"dpkernels[{extras}]\" (in a clone: pip install \".[{extras}]\")")


def main(argv: list[str] | None = None) -> int:
    from dpkernels.workbook import WorkbookNotFound, find_root

    parser = argparse.ArgumentParser(prog="dpkernels", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--version", action="version", version=f"dpkernels {_version()}")
    root_help = ("the workbook, a clone of the repository (default: $DPKERNELS_ROOT, else the current directory or "
                 "its nearest parent holding notebooks/ and dpkernels' pyproject.toml)")
    parser.add_argument("--root", default=None, metavar="PATH", help=root_help)
    sub = parser.add_subparsers(dest="command", required=True)
    # --root after the command too (a subparser's own default would overwrite the main parser's value: suppressed)
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--root", default=argparse.SUPPRESS, metavar="PATH", help=root_help)
    p = sub.add_parser("list", parents=[common], help="the papers, their notebooks, profiles and parameters")
    p.set_defaults(func=_cmd_list)
    p = sub.add_parser("reproduce", parents=[common],
                       help="execute the notebooks into build/<profile>/ and compare with the reference")
    p.add_argument("--profile", choices=("quick", "full", "scale"), default="full",
                   help="full (default): each paper's protocol, the reference's profile (budget: 15 minutes on 2 "
                   "cores with --jobs 2); quick: a first look; scale: the frontier from a thousand rows to the full "
                   "data on a Dask LocalCluster (or --scheduler), the frontier's reference")
    p.add_argument("--paper", nargs="+", metavar="NAME", help="only these papers (default: all)")
    p.add_argument("--jobs", type=int, default=2, help="notebooks run in parallel (default 2)")
    p.add_argument("--no-progress", action="store_true", help="no progress bars")
    p.add_argument("--scheduler", default=None, metavar="ADDRESS",
                   help="run the notebooks' sweeps on this Dask scheduler (default: $DPKERNELS_SCHEDULER, else locally)")
    p.add_argument("--build-dir", default=None, type=Path, metavar="PATH",
                   help="write the run into PATH/<profile>/ (default: the workbook's build/)")
    p.set_defaults(func=_cmd_reproduce)
    p = sub.add_parser("run", parents=[common],
                       help="run one paper's notebook with papermill parameters (outputs in build/)")
    p.add_argument("paper", metavar="PAPER")
    p.add_argument("-p", "--parameter", action="append", metavar="NAME=VALUE",
                   help="a papermill parameter, value read as YAML; repeatable (e.g. -p seed=7 "
                   "-p 'sizes={audit_releases: 1000}'); profile=full selects the profile")
    p.add_argument("--profile", choices=("quick", "full", "scale"), default="quick", help="default quick")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    p.set_defaults(func=_cmd_run)
    p = sub.add_parser("update-reference", parents=[common],
                       help="copy the last run (build/<profile>/) into the tracked reference: paper_figures/, "
                       "notebooks/*.ipynb, run times, README.md, ERRATA.md")
    p.add_argument("--profile", choices=("quick", "full", "scale"), default="full",
                   help="full (default): the papers' reference; scale: the frontier's; quick: only "
                   "benchmarks/results/timings_quick.csv and the prose")
    p.add_argument("--paper", nargs="+", metavar="NAME", default=None,
                   help="copy only these papers' notebooks and outputs from the run (their run times; the "
                   "wall-time row is kept)")
    p.set_defaults(func=_cmd_update_reference)
    p = sub.add_parser("site", parents=[common], help="build the documentation site (build/site/html/index.html)")
    p.add_argument("--out", default=None, help="output folder (default build/site)")
    p.set_defaults(func=_cmd_site)
    p = sub.add_parser("report", parents=[common],
                       help="rebuild paper_figures/REPORT.md and the prose that quotes it (README.md, "
                       "ERRATA.md) from the tracked files, e.g. after editing a template in docs/")
    p.add_argument("--figures", default=None, metavar="PATH",
                   help="only rebuild REPORT.md of this folder holding <paper>/checks.csv (default: the workbook's "
                   "paper_figures, then the prose)")
    p.set_defaults(func=_cmd_report)
    p = sub.add_parser("sync", parents=[common],
                       help="update the inputs of notebooks/*.ipynb from their .py sources, keeping outputs")
    p.add_argument("--paper", nargs="+", metavar="NAME", help="only these papers (default: all)")
    p.set_defaults(func=_cmd_sync)
    p = sub.add_parser("datasets", help="where each dataset was found and whether its checksum is valid; exit 1 when one "
                       "is missing or corrupt")
    p.add_argument("--fetch", action="store_true", help="download missing files from their canonical URLs")
    p.set_defaults(func=_cmd_datasets)
    p = sub.add_parser("recommend", help="which mechanism for a task, n rows of d features and (epsilon, delta): read "
                       "from the committed frontier results (no data touched)")
    p.add_argument("task", choices=("binary", "multiclass"))
    p.add_argument("n", type=int, help="training rows")
    p.add_argument("d", type=int, help="features after the public map (constant feature included)")
    p.add_argument("epsilon", type=float)
    p.add_argument("delta", type=float, help="0 for pure epsilon-DP; at most 1/(10 n)")
    p.add_argument("--n-classes", type=int, default=None, help="number of classes of a multiclass task (labels 0..K-1; "
                   "required there)")
    p.add_argument("--like", default=None, help="the frontier data set to rest on (default: nearest d)")
    p.add_argument("--results", default=None, help="folder of summary.csv / recommendation.csv (default: "
                   "paper_figures/frontier)")
    p.set_defaults(func=_cmd_recommend)
    args = parser.parse_args(argv)
    if args.command != "datasets":
        try:
            args.root = find_root(args.root)
        except WorkbookNotFound as exc:
            print(f"dpkernels {args.command}: {exc}", file=sys.stderr)
            return 2
    try:
        return int(args.func(args))
    except ModuleNotFoundError as exc:
        message = _missing_extra(args.command, exc)
        if message is None:
            raise
        print(message, file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
