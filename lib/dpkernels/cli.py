"""The ``dpkernels`` command: reproduce the papers, build the report, inspect the datasets."""

from __future__ import annotations

import argparse
import sys

__all__ = ["main"]


def _cmd_reproduce(args: argparse.Namespace) -> int:
    from dpkernels.runner import reproduce

    return reproduce(profile=args.profile, papers=args.paper, jobs=args.jobs,
                     update_notebooks=False if args.no_update else None, progress=not args.no_progress,
                     scheduler=args.scheduler)


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


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="dpkernels", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("reproduce", help="execute the notebooks and regenerate paper_figures/")
    p.add_argument("--profile", choices=("quick", "full", "scale"), default="full",
                   help="full (default): each paper's protocol (budget: 15 minutes on 2 cores with --jobs 2); quick: a first "
                   "look, outputs in build/quick/; scale: the frontier from a thousand rows to the full data on a Dask "
                   "LocalCluster (or --scheduler), its reference outputs")
    p.add_argument("--paper", nargs="+", metavar="NAME", help="only these papers (default: all)")
    p.add_argument("--jobs", type=int, default=2, help="notebooks run in parallel (default 2)")
    p.add_argument("--no-update", action="store_true", help="full profile: do not copy executed outputs into notebooks/*.ipynb")
    p.add_argument("--no-progress", action="store_true", help="no progress bars")
    p.add_argument("--scheduler", default=None, metavar="ADDRESS",
                   help="run the notebooks' sweeps on this Dask scheduler (default: $DPKERNELS_SCHEDULER, else locally)")
    p.set_defaults(func=_cmd_reproduce)
    p = sub.add_parser("report", help="rebuild paper_figures/REPORT.md and the prose that quotes outputs (ERRATA.md, README.md)")
    p.add_argument("--root", default=None, help="folder holding <paper>/checks.csv (default: paper_figures)")
    p.set_defaults(func=_cmd_report)
    p = sub.add_parser("sync", help="update notebooks/*.ipynb inputs from their .py sources, keeping outputs")
    p.add_argument("--paper", nargs="+", metavar="NAME", help="only these papers (default: all)")
    p.set_defaults(func=_cmd_sync)
    p = sub.add_parser("datasets", help="where each dataset was found and whether its checksum is valid")
    p.add_argument("--fetch", action="store_true", help="download missing files from their canonical URLs")
    p.set_defaults(func=_cmd_datasets)
    args = parser.parse_args(argv)
    return int(args.func(args))


if __name__ == "__main__":
    sys.exit(main())
