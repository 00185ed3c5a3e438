"""Execute the notebooks with papermill into ``build/<profile>/`` (``dpkernels reproduce``, ``dpkernels run``).

For each paper the jupytext percent script ``notebooks/<paper>.py`` is the source.  It is converted to a notebook
with stable cell ids and executed by papermill with the profile's parameters.  A run writes only under
``build/<profile>/``, in the layout of the reference it is compared with (:mod:`dpkernels.reference`):

* ``paper_figures/<output>/``: figures, tables and checks (and ``REPORT.md``, ``totals.csv``);
* ``notebooks/<paper>.ipynb``: the executed notebook, clean (:func:`dpkernels.notebooks.clean_notebook`);
* ``benchmarks/results/timings_<profile>.csv``: seconds per notebook section (papermill times every cell), per
  notebook, and the run's wall time with the machine's one-minute load average at its start and end;
* ``README.md``, ``ERRATA.md``: the prose templates ``docs/*.md`` rendered with this run's numbers
  (:mod:`dpkernels.prose`): from this run's own outputs only (never an earlier run's folder left in the same build),
  the reference for what the run does not produce; a value the run leaves blank renders as ``n/a`` with a warning,
  listed in ``run.json``, and the prose step never aborts a run;
* ``paper_figures/REPORT.md`` and ``totals.csv``: the report of this run's own outputs;
* ``reference_check.csv``: every number compared with the reference; ``run.json``: what the run was;
* ``papermill/``: papermill's raw input and output notebooks and each kernel's log
  (``<paper>.kernel.log``), where the notebooks' progress bars go (``tail -f`` it to watch a long run).

Nothing tracked by git changes: ``dpkernels update-reference`` (:func:`dpkernels.reference.update_reference`)
copies a run into the reference.  ``dpkernels run PAPER -p name=value`` runs one notebook with papermill
parameters of the user's choice into ``build/<profile>/runs/<paper>-<parameters>/``.  The notebooks, the reference
and ``build/`` are the workbook's (:func:`dpkernels.workbook.find_root`), unless given.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd
from joblib import Parallel, delayed

from dpkernels.notebooks import clean_notebook, notebook_problems, stable_cell_ids
from dpkernels.prose import Gap, Source, render_prose
from dpkernels.reference import compare_outputs
from dpkernels.report import build_report
from dpkernels.sweep import restored_environ
from dpkernels.workbook import find_root

__all__ = ["available_papers", "longest_first", "run_notebook", "reproduce", "run_one", "KERNEL_NAME",
           "stable_cell_ids", "section_timings", "sync_notebook", "RunResult"]

KERNEL_NAME = "dpkernels"
#: Arguments of every kernel the runner starts: quiet logging; low-level output (fd 2) stays in the kernel log
#: instead of being captured into cells; tqdm bars go to that log (dpkernels.notebooks' IPython extension).
KERNEL_ARGUMENTS = ["--IPKernelApp.log_level=ERROR", "--IPKernelApp.capture_fd_output=False",
                    "--IPKernelApp.extensions=dpkernels.notebooks"]


def _notebook_dir(notebook_dir: Path | None) -> Path:
    return find_root() / "notebooks" if notebook_dir is None else Path(notebook_dir)


def available_papers(notebook_dir: Path | None = None, profile: str | None = None) -> list[str]:
    """Papers with a notebook (``notebooks/<paper>.py`` percent script with its executed ``.ipynb``; default: the
    workbook's), and with an entry for ``profile`` in the profiles file when one is given and the paper has entries
    there (only the frontier has ``scale``)."""
    notebook_dir = _notebook_dir(notebook_dir)
    papers = sorted(p.stem for p in notebook_dir.glob("*.py") if (notebook_dir / f"{p.stem}.ipynb").exists())
    if profile is None:
        return papers
    from dpkernels.profiles import _read

    data = _read()
    return [p for p in papers if p not in data or profile in data[p]]


def _kernel_name() -> str:
    from jupyter_client.kernelspec import KernelSpecManager

    return KERNEL_NAME if KERNEL_NAME in KernelSpecManager().find_kernel_specs() else "python3"


def _kernel_manager_logging_to(log: Path) -> type:
    """A kernel manager whose kernel writes its stderr to ``log`` instead of the user's terminal: progress bars,
    asyncio's "Task was destroyed but it is pending!" at kernel shutdown and the like.  Cell errors and cell
    output still reach the notebook through the kernel's messages."""
    from jupyter_client.manager import AsyncKernelManager

    class KernelManager(AsyncKernelManager):
        async def _async_launch_kernel(self, kernel_cmd: list[str], **kw: object) -> None:
            with open(log, "ab") as fh:  # the child keeps its own copy of the descriptor
                kw["stderr"] = fh
                await super()._async_launch_kernel(kernel_cmd, **kw)

    return KernelManager


@dataclass
class RunResult:
    paper: str
    ok: bool
    seconds: float
    output: Path
    error: str = ""
    problems: tuple[str, ...] = ()


def run_notebook(
    paper: str,
    profile: str,
    parameters: dict[str, Any] | None = None,
    notebook_dir: Path | None = None,
    out_dir: Path | None = None,
    progress: bool | dict = False,
) -> RunResult:
    """Execute one notebook of ``notebook_dir`` (default: the workbook's) into ``out_dir`` (default
    ``build/<profile>`` beside it); never raises for a failing notebook.

    Writes ``out_dir/papermill/<paper>.ipynb`` (papermill's output, with cell times), the clean executed notebook
    ``out_dir/notebooks/<paper>.ipynb`` and the figures and tables under ``out_dir/paper_figures/``.
    ``parameters``: papermill parameters besides ``profile``.  The result lists what the executed notebook must
    not hold (:func:`dpkernels.notebooks.notebook_problems`).
    """
    import jupytext
    import nbformat
    import papermill as pm

    notebook_dir = _notebook_dir(notebook_dir).resolve()
    # absolute: the kernel runs in notebook_dir, and writes its figures to DPKERNELS_OUTPUT
    out_dir = Path(out_dir).resolve() if out_dir is not None else notebook_dir.parent / "build" / profile
    raw_dir, nb_dir, figures_dir = out_dir / "papermill", out_dir / "notebooks", out_dir / "paper_figures"
    for d in (raw_dir, nb_dir, figures_dir):
        d.mkdir(parents=True, exist_ok=True)
    nb = jupytext.read(notebook_dir / f"{paper}.py")
    stable_cell_ids(nb)
    kernel = _kernel_name()
    nb.metadata["kernelspec"] = {"name": kernel, "display_name": "Python (dpkernels)", "language": "python"}
    nb.metadata.pop("jupytext", None)
    input_path = raw_dir / f"{paper}.input.ipynb"
    output_path = raw_dir / f"{paper}.ipynb"
    log = raw_dir / f"{paper}.kernel.log"
    log.write_bytes(b"")
    nbformat.write(nb, input_path)
    start = time.perf_counter()
    env = {"DPKERNELS_PROFILE": profile, "DPKERNELS_OUTPUT": str(figures_dir), "PYDEVD_DISABLE_FILE_VALIDATION": "1"}
    with restored_environ():
        os.environ.update(env)  # the kernel inherits them (PYDEVD_...: the debugger's frozen-modules warning)
        try:
            pm.execute_notebook(str(input_path), str(output_path), parameters={"profile": profile, **(parameters or {})},
                                kernel_name=kernel, cwd=str(notebook_dir), progress_bar=progress, log_output=False,
                                extra_arguments=KERNEL_ARGUMENTS, kernel_manager_class=_kernel_manager_logging_to(log))
        except Exception as exc:  # papermill raises PapermillExecutionError with the cell's traceback
            return RunResult(paper, False, time.perf_counter() - start, output_path, f"{type(exc).__name__}: {exc}")
    seconds = time.perf_counter() - start
    executed = clean_notebook(nbformat.read(output_path, as_version=4), source=f"{paper}.py")
    executed.metadata["kernelspec"] = {"name": KERNEL_NAME, "display_name": "Python (dpkernels)", "language": "python"}
    clean_path = nb_dir / f"{paper}.ipynb"
    nbformat.write(executed, clean_path)
    problems = tuple(notebook_problems(executed, (str(notebook_dir.resolve().parent), str(Path.home()))))
    return RunResult(paper, True, seconds, clean_path, problems=problems)


def section_timings(executed_notebook: Path, paper: str) -> pd.DataFrame:
    """Seconds per section (the cells under each markdown heading) of an executed notebook (papermill durations)."""
    import nbformat

    nb = nbformat.read(executed_notebook, as_version=4)
    rows: dict[str, list[float]] = {}
    order: list[str] = []
    section = "(set-up)"
    for cell in nb.cells:
        if cell.cell_type == "markdown":
            m = re.search(r"^#{1,3}\s+(.+)$", cell.source, flags=re.M)
            if m:
                section = m.group(1).strip()
            continue
        dur = cell.metadata.get("papermill", {}).get("duration")
        if dur is None:
            continue
        if section not in rows:
            rows[section] = []
            order.append(section)
        rows[section].append(float(dur))
    return pd.DataFrame([{"paper": paper, "section": s, "cells": len(rows[s]), "seconds": round(sum(rows[s]), 2)}
                         for s in order])


def sync_notebook(paper: str, notebook_dir: Path | None = None) -> Path:
    """Update the inputs of the reference ``notebooks/<paper>.ipynb`` (default: the workbook's) from its ``.py``
    source, keeping the outputs of unchanged cells (``dpkernels sync``); the result is clean
    (:func:`dpkernels.notebooks.clean_notebook`)."""
    import jupytext
    import nbformat
    from jupytext.combine import combine_inputs_with_outputs

    notebook_dir = _notebook_dir(notebook_dir)
    ipynb = notebook_dir / f"{paper}.ipynb"
    source = jupytext.read(notebook_dir / f"{paper}.py")
    old = nbformat.read(ipynb, as_version=4) if ipynb.exists() else nbformat.v4.new_notebook()
    clean_notebook(old)  # drops an injected-parameters cell, keeping its parameters in the metadata
    combined = combine_inputs_with_outputs(source, old, fmt="py:percent")
    combined.metadata["papermill"] = old.metadata.get("papermill", {})
    if not combined.metadata["papermill"]:
        combined.metadata.pop("papermill")
    clean_notebook(combined, source=f"{paper}.py")
    combined.metadata["kernelspec"] = {"name": KERNEL_NAME, "display_name": "Python (dpkernels)", "language": "python"}
    nbformat.write(combined, ipynb)
    return ipynb


def _git_commit(root: Path) -> str:
    try:
        out = subprocess.run(["git", "-C", str(root), "rev-parse", "--short", "HEAD"], capture_output=True,
                             text=True, timeout=10)
        dirty = subprocess.run(["git", "-C", str(root), "status", "--porcelain", "--untracked-files=no"],
                               capture_output=True, text=True, timeout=30)
        return out.stdout.strip() + ("+changes" if dirty.stdout.strip() else "")
    except (OSError, subprocess.SubprocessError):
        return "unknown"


def _snapshot(figures: Path) -> dict[str, dict[str, int]]:
    """Every output folder of ``figures`` with the modification time (ns) of each of its files."""
    if not figures.exists():
        return {}
    return {d.name: {f.name: f.stat().st_mtime_ns for f in d.iterdir()} for d in figures.iterdir() if d.is_dir()}


def _outputs_written(figures: Path, before: dict[str, dict[str, int]]) -> list[str]:
    """The output folders of ``figures`` that are new or hold a new or rewritten file since the snapshot ``before``."""
    return sorted(name for name, files in _snapshot(figures).items() if files != before.get(name))


def _parameters_slug(parameters: dict[str, Any]) -> str:
    text = json.dumps(parameters, sort_keys=True, default=str)
    readable = re.sub(r"[^A-Za-z0-9.=_-]+", "_", ",".join(f"{k}={v}" for k, v in sorted(parameters.items())))[:40]
    return f"{readable.strip('_')}-{hashlib.sha1(text.encode()).hexdigest()[:8]}"


def run_one(paper: str, profile: str = "quick", parameters: dict[str, Any] | None = None, progress: bool = True,
            root: Path | None = None, build_dir: Path | None = None) -> int:
    """``dpkernels run PAPER [-p name=value ...]``: one notebook of the workbook ``root`` (default:
    :func:`dpkernels.workbook.find_root`) at one setting.

    Without parameters this is ``reproduce`` for one paper (``build/<profile>/``, compared with the reference);
    with parameters the outputs go to ``build/<profile>/runs/<paper>-<parameters>/`` and are not compared (the
    reference holds the profile's own setting).
    """
    root = find_root() if root is None else Path(root).resolve()
    build_dir = root / "build" if build_dir is None else Path(build_dir).resolve()
    papers = available_papers(root / "notebooks")
    if paper not in papers:
        print(f"unknown paper {paper!r}; available: {papers}", file=sys.stderr)
        return 2
    if not parameters:
        return reproduce(profile, [paper], jobs=1, progress=progress, build_dir=build_dir, reference=root)
    out = build_dir / profile / "runs" / f"{paper}-{_parameters_slug(parameters)}"
    if out.exists():
        shutil.rmtree(out)
    print(f"dpkernels run: {paper}, profile={profile}, parameters {parameters}; outputs in {_rel(out, root)}/", flush=True)
    bar = {"desc": f"{paper:<15}"} if progress else False
    r = run_notebook(paper, profile, parameters, notebook_dir=root / "notebooks", out_dir=out, progress=bar)
    (out / "parameters.json").write_text(json.dumps({"paper": paper, "profile": profile, **parameters}, indent=1, default=str))
    if not r.ok:
        print(f"{paper} failed: {r.error[:2000]}", file=sys.stderr)
        return 1
    print(f"{paper}: ok in {r.seconds:.1f} s -> {_rel(r.output, root)}; figures and tables in "
          f"{_rel(out / 'paper_figures', root)}/")
    for p in r.problems:
        print(f"  notebook hygiene: {p}")
    return 0


def _load() -> float | None:
    """The machine's one-minute load average (None where the platform has none)."""
    try:
        return round(os.getloadavg()[0], 2)
    except (AttributeError, OSError):
        return None


def longest_first(papers: list[str], reference: Path, profile: str) -> list[str]:
    """``papers`` in the order a run dispatches them: by the committed notebook time of ``profile``
    (``benchmarks/results/timings_<profile>.csv``, its ``(notebook total)`` rows), longest first, and a paper with no
    committed time before them (its cost is unknown); ties alphabetically.  With two slots this is Graham's
    longest-processing-time rule: the longest notebook starts at once instead of after the alphabet's earlier ones
    (the full profile's chaudhuri2011, about half the total time, used to start beside bassily2022 and leave the
    other five queued behind it in one slot)."""
    path = reference / "benchmarks" / "results" / f"timings_{profile}.csv"
    seconds: dict[str, float] = {}
    if path.exists():
        t = pd.read_csv(path)
        t = t[t["section"] == "(notebook total)"]
        seconds = {str(p): float(s) for p, s in zip(t["paper"], t["seconds"]) if pd.notna(s)}
    return sorted(papers, key=lambda p: (p in seconds, -seconds.get(p, 0.0), p))


def _rel(path: Path, root: Path) -> str:
    path = Path(path)
    return str(path.relative_to(root)) if path.is_relative_to(root) else str(path)


def _report_of(figures: Path, outputs: list[str]) -> Path:
    """``REPORT.md`` and ``totals.csv`` of ``figures`` built from ``outputs`` only (a run's own folders; an earlier
    run's folders in the same build are left out): :func:`dpkernels.report.build_report` over a folder of links."""
    if sorted(outputs) == sorted(d.name for d in figures.iterdir() if d.is_dir()):
        return build_report(figures)
    with tempfile.TemporaryDirectory(dir=figures.parent, prefix=".report-") as tmp:
        for name in outputs:
            try:
                (Path(tmp) / name).symlink_to((figures / name).resolve(), target_is_directory=True)
            except OSError:  # no symbolic links on this file system
                shutil.copytree(figures / name, Path(tmp) / name)
        build_report(Path(tmp))
        for name in ("REPORT.md", "totals.csv"):
            shutil.move(Path(tmp) / name, figures / name)
    return figures / "REPORT.md"


def reproduce(profile: str = "quick", papers: list[str] | None = None, jobs: int = 1, progress: bool = True,
              scheduler: str | None = None, compare: bool = True, notebook_dir: Path | None = None,
              build_dir: Path | None = None, reference: Path | None = None) -> int:
    """Run the notebooks into ``build/<profile>/`` (module docstring), then compare the run with the reference;
    returns an exit code: 2 for an unknown paper, 1 when a notebook failed or the report or the prose could not be
    built (the run still ends with its reference check), else 0.

    ``scheduler``: a Dask scheduler address; the notebooks' sweeps (:mod:`dpkernels.sweep`) then run on that
    cluster (passed to the kernels as ``DPKERNELS_SCHEDULER``).  ``reference``: the repository holding the
    reference and the prose templates; ``notebook_dir``, ``build_dir``: the sources and the build folder (defaults:
    the workbook, :func:`dpkernels.workbook.find_root`, its ``notebooks/`` and ``build/``).
    """
    reference = find_root() if reference is None else Path(reference).resolve()
    notebook_dir = reference / "notebooks" if notebook_dir is None else Path(notebook_dir).resolve()
    build_dir = reference / "build" if build_dir is None else Path(build_dir).resolve()
    if scheduler:
        from dpkernels.sweep import SCHEDULER_ENV

        os.environ[SCHEDULER_ENV] = scheduler
    known = available_papers(notebook_dir, profile)
    todo = papers or known
    unknown = sorted(set(todo) - set(known))
    if unknown:
        print(f"unknown paper(s) {unknown} for profile {profile}; available: {known}", file=sys.stderr)
        return 2
    out = build_dir / profile
    figures = out / "paper_figures"
    if papers is None and figures.exists():
        shutil.rmtree(figures)
    for p in todo:
        shutil.rmtree(figures / p, ignore_errors=True)
    print(f"dpkernels reproduce: profile={profile}, {len(todo)} notebook(s), jobs={jobs}; outputs in "
          f"{_rel(out, reference)}/ (progress inside each notebook: {_rel(out / 'papermill', reference)}/<paper>.kernel.log)",
          flush=True)
    before, start, load_start = _snapshot(figures), time.perf_counter(), _load()
    order = longest_first(list(todo), reference, profile)

    def bar(i: int) -> bool | dict:
        return {"desc": f"{order[i]:<15}", "position": i if jobs > 1 else 0, "leave": True} if progress else False

    if jobs > 1 and len(order) > 1:
        done = Parallel(n_jobs=jobs, backend="loky")(
            delayed(run_notebook)(p, profile, notebook_dir=notebook_dir, out_dir=out, progress=bar(i))
            for i, p in enumerate(order))
    else:
        done = [run_notebook(p, profile, notebook_dir=notebook_dir, out_dir=out, progress=bar(i))
                for i, p in enumerate(order)]
    by_paper = {r.paper: r for r in done}
    results = [by_paper[p] for p in todo]  # reported in the usual order
    wall = time.perf_counter() - start
    for i, r in enumerate(results, 1):
        print(f"[{i}/{len(todo)}] {r.paper}: {'ok' if r.ok else 'FAILED'} in {r.seconds:.1f} s -> {_rel(r.output, reference)}",
              flush=True)
        for p in r.problems:
            print(f"    notebook hygiene: {p}", flush=True)
    for r in results:
        if not r.ok:
            print(f"{r.paper} failed: {r.error[:2000]}", file=sys.stderr)
    frames = [section_timings(out / "papermill" / f"{r.paper}.ipynb", r.paper) for r in results if r.ok]
    if frames:
        totals = pd.DataFrame([{"paper": r.paper, "section": "(notebook total)", "cells": None, "seconds": round(r.seconds, 1)}
                               for r in results if r.ok] + [{"paper": "(all)", "section": "(wall time)", "cells": None,
                                                             "seconds": round(wall, 1), "jobs": jobs,
                                                             "load_start": load_start, "load_end": _load()}])
        timings = out / "benchmarks" / "results" / f"timings_{profile}.csv"
        timings.parent.mkdir(parents=True, exist_ok=True)
        pd.concat(frames + [totals], ignore_index=True).to_csv(timings, index=False)
    outputs = _outputs_written(figures, before)
    manifest = {"profile": profile, "papers": todo, "complete": papers is None, "ok": {r.paper: r.ok for r in results},
                "outputs": outputs, "commit": _git_commit(reference), "wall_seconds": round(wall, 1), "jobs": jobs,
                "notebook_problems": {r.paper: list(r.problems) for r in results if r.problems}}
    failed_steps = []
    # the report and the prose never abort a run: a failure is printed, and the run goes on to its reference check
    try:
        report = _report_of(figures, outputs) if outputs else None
        if report is not None:
            print(f"report: {_rel(report, reference)} (wall time {wall:.0f} s)", flush=True)
    except Exception as exc:  # reported, never raised
        failed_steps.append(f"report not built: {type(exc).__name__}: {exc}")
    gaps: list[Gap] = []
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)  # each gap is listed below, once
            written = render_prose(out, [Source(out, frozenset(outputs)), Source(reference)], templates=reference, gaps=gaps)
        for path in written:
            print(f"rendered {_rel(path, reference)} (this run's numbers; the reference's where the run has none)", flush=True)
        if gaps:
            print(f"prose: {len(gaps)} reference(s) have no value in this run and read n/a:\n  "
                  + "\n  ".join(map(str, gaps)), flush=True)
    except Exception as exc:  # reported, never raised
        failed_steps.append(f"prose not rendered: {type(exc).__name__}: {exc}")
    manifest["prose_gaps"] = [str(g) for g in gaps]
    manifest["failed_steps"] = failed_steps
    (out / "run.json").write_text(json.dumps(manifest, indent=1))
    for line in failed_steps:
        print(line, file=sys.stderr, flush=True)
    if compare:
        check = compare_outputs(figures, reference / "paper_figures", outputs, profile)
        check.table.to_csv(out / "reference_check.csv", index=False)
        print(f"reference check ({_rel(out / 'reference_check.csv', reference)}):\n{check.summary()}", flush=True)
    if profile in ("full", "scale"):
        flag = "" if profile == "full" else f" --profile {profile}"
        print(f"the reference is unchanged; `dpkernels update-reference{flag}` (make update-reference"
              f"{' PROFILE=' + profile if flag else ''}) copies this run into it", flush=True)
    else:
        print("the reference is unchanged", flush=True)
    return 0 if all(r.ok for r in results) and not failed_steps else 1
