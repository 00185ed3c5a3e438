"""Execute the notebooks with papermill into ``build/<profile>/`` (``dpkernels reproduce``, ``dpkernels run``).

For each paper the jupytext percent script ``notebooks/<paper>.py`` is the source.  It is converted to a notebook
with stable cell ids and executed by papermill with the profile's parameters.  A run writes only under
``build/<profile>/``, in the layout of the reference it is compared with (:mod:`dpkernels.reference`):

* ``paper_figures/<output>/``: figures, tables and checks (and ``REPORT.md``, ``totals.csv``);
* ``notebooks/<paper>.ipynb``: the executed notebook, clean (:func:`dpkernels.notebooks.clean_notebook`);
* ``benchmarks/results/timings_<profile>.csv``: seconds per notebook section (papermill times every cell), per
  notebook, and the run's wall time;
* ``README.md``, ``ERRATA.md``: the prose templates ``docs/*.md`` rendered with this run's numbers (files the run
  did not produce are read from the reference);
* ``reference_check.csv``: every number compared with the reference; ``run.json``: what the run was;
* ``papermill/``: papermill's raw input and output notebooks and each kernel's log
  (``<paper>.kernel.log``), where the notebooks' progress bars go (``tail -f`` it to watch a long run).

Nothing tracked by git changes: ``dpkernels update-reference`` (:func:`dpkernels.reference.update_reference`)
copies a run into the reference.  ``dpkernels run PAPER -p name=value`` runs one notebook with papermill
parameters of the user's choice into ``build/<profile>/runs/<paper>-<parameters>/``.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd
from joblib import Parallel, delayed

from dpkernels.notebooks import clean_notebook, notebook_problems, stable_cell_ids
from dpkernels.report import BUILD_DIR, REPO_ROOT, build_report

__all__ = ["NOTEBOOK_DIR", "BUILD_DIR", "available_papers", "run_notebook", "reproduce", "run_one", "KERNEL_NAME",
           "stable_cell_ids", "section_timings", "render_prose", "sync_notebook", "PROSE_TEMPLATES", "RunResult"]

NOTEBOOK_DIR = REPO_ROOT / "notebooks"
KERNEL_NAME = "dpkernels"
#: Prose rendered from templates: template -> output (both relative to the repository, or to a run's folder).
PROSE_TEMPLATES = {"docs/ERRATA.md": "ERRATA.md", "docs/README.md": "README.md"}
#: Arguments of every kernel the runner starts: quiet logging; low-level output (fd 2) stays in the kernel log
#: instead of being captured into cells; tqdm bars go to that log (dpkernels.notebooks' IPython extension).
KERNEL_ARGUMENTS = ["--IPKernelApp.log_level=ERROR", "--IPKernelApp.capture_fd_output=False",
                    "--IPKernelApp.extensions=dpkernels.notebooks"]


def available_papers(notebook_dir: Path = NOTEBOOK_DIR, profile: str | None = None) -> list[str]:
    """Papers with a notebook (``notebooks/<paper>.py`` percent script with its executed ``.ipynb``), and with an
    entry for ``profile`` in the profiles file when one is given and the paper has entries there (only the frontier
    has ``scale``)."""
    papers = sorted(p.stem for p in Path(notebook_dir).glob("*.py") if (Path(notebook_dir) / f"{p.stem}.ipynb").exists())
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
    notebook_dir: Path = NOTEBOOK_DIR,
    out_dir: Path | None = None,
    progress: bool | dict = False,
) -> RunResult:
    """Execute one notebook into ``out_dir`` (default ``build/<profile>``); never raises for a failing notebook.

    Writes ``out_dir/papermill/<paper>.ipynb`` (papermill's output, with cell times), the clean executed notebook
    ``out_dir/notebooks/<paper>.ipynb`` and the figures and tables under ``out_dir/paper_figures/``.
    ``parameters``: papermill parameters besides ``profile``.  The result lists what the executed notebook must
    not hold (:func:`dpkernels.notebooks.notebook_problems`).
    """
    import jupytext
    import nbformat
    import papermill as pm

    out_dir = Path(out_dir) if out_dir is not None else BUILD_DIR / profile
    raw_dir, nb_dir, figures_dir = out_dir / "papermill", out_dir / "notebooks", out_dir / "paper_figures"
    for d in (raw_dir, nb_dir, figures_dir):
        d.mkdir(parents=True, exist_ok=True)
    notebook_dir = Path(notebook_dir)
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
    saved = {k: os.environ.get(k) for k in env}
    os.environ.update(env)  # the kernel inherits them (PYDEVD_...: the debugger's frozen-modules warning)
    try:
        pm.execute_notebook(str(input_path), str(output_path), parameters={"profile": profile, **(parameters or {})},
                            kernel_name=kernel, cwd=str(notebook_dir), progress_bar=progress, log_output=False,
                            extra_arguments=KERNEL_ARGUMENTS, kernel_manager_class=_kernel_manager_logging_to(log))
    except Exception as exc:  # papermill raises PapermillExecutionError with the cell's traceback
        return RunResult(paper, False, time.perf_counter() - start, output_path, f"{type(exc).__name__}: {exc}")
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
    seconds = time.perf_counter() - start
    executed = clean_notebook(nbformat.read(output_path, as_version=4), source=f"{paper}.py")
    executed.metadata["kernelspec"] = {"name": KERNEL_NAME, "display_name": "Python (dpkernels)", "language": "python"}
    clean_path = nb_dir / f"{paper}.ipynb"
    nbformat.write(executed, clean_path)
    problems = tuple(notebook_problems(executed, (str(REPO_ROOT), str(Path.home()))))
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


def render_prose(out: Path = REPO_ROOT, sources: list[Path] | None = None, templates: Path = REPO_ROOT) -> list[Path]:
    """Render the templates ``templates/docs/*.md`` (:data:`PROSE_TEMPLATES`) into ``out`` (default: the
    repository's ``README.md`` and ``ERRATA.md``).  ``sources``: the folders the templates' references are read
    from, in order (default: ``[out]``; a run renders from its own outputs, then the reference)."""
    from dpkernels.report import render_template

    written = []
    for src, dst in PROSE_TEMPLATES.items():
        template = Path(templates) / src
        if template.exists():
            path = Path(out) / dst
            path.write_text(render_template(template.read_text(), sources or [Path(out)]))
            written.append(path)
    return written


def sync_notebook(paper: str, notebook_dir: Path = NOTEBOOK_DIR) -> Path:
    """Update the inputs of the reference ``notebooks/<paper>.ipynb`` from its ``.py`` source, keeping the outputs
    of unchanged cells (``dpkernels sync``); the result is clean (:func:`dpkernels.notebooks.clean_notebook`)."""
    import jupytext
    import nbformat
    from jupytext.combine import combine_inputs_with_outputs

    notebook_dir = Path(notebook_dir)
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


def _git_commit() -> str:
    try:
        out = subprocess.run(["git", "-C", str(REPO_ROOT), "rev-parse", "--short", "HEAD"], capture_output=True,
                             text=True, timeout=10)
        dirty = subprocess.run(["git", "-C", str(REPO_ROOT), "status", "--porcelain", "--untracked-files=no"],
                               capture_output=True, text=True, timeout=30)
        return out.stdout.strip() + ("+changes" if dirty.stdout.strip() else "")
    except (OSError, subprocess.SubprocessError):
        return "unknown"


def _outputs_written_since(figures: Path, since: float) -> list[str]:
    return sorted(d.name for d in figures.iterdir()
                  if d.is_dir() and any(f.stat().st_mtime >= since for f in d.iterdir())) if figures.exists() else []


def _parameters_slug(parameters: dict[str, Any]) -> str:
    text = json.dumps(parameters, sort_keys=True, default=str)
    readable = re.sub(r"[^A-Za-z0-9.=_-]+", "_", ",".join(f"{k}={v}" for k, v in sorted(parameters.items())))[:40]
    return f"{readable.strip('_')}-{hashlib.sha1(text.encode()).hexdigest()[:8]}"


def run_one(paper: str, profile: str = "quick", parameters: dict[str, Any] | None = None, progress: bool = True) -> int:
    """``dpkernels run PAPER [-p name=value ...]``: one notebook at one setting.

    Without parameters this is ``reproduce`` for one paper (``build/<profile>/``, compared with the reference);
    with parameters the outputs go to ``build/<profile>/runs/<paper>-<parameters>/`` and are not compared (the
    reference holds the profile's own setting).
    """
    if paper not in available_papers():
        print(f"unknown paper {paper!r}; available: {available_papers()}", file=sys.stderr)
        return 2
    if not parameters:
        return reproduce(profile, [paper], jobs=1, progress=progress)
    out = BUILD_DIR / profile / "runs" / f"{paper}-{_parameters_slug(parameters)}"
    if out.exists():
        shutil.rmtree(out)
    print(f"dpkernels run: {paper}, profile={profile}, parameters {parameters}; outputs in {_rel(out)}/", flush=True)
    bar = {"desc": f"{paper:<15}"} if progress else False
    r = run_notebook(paper, profile, parameters, out_dir=out, progress=bar)
    (out / "parameters.json").write_text(json.dumps({"paper": paper, "profile": profile, **parameters}, indent=1, default=str))
    if not r.ok:
        print(f"{paper} failed: {r.error[:2000]}", file=sys.stderr)
        return 1
    print(f"{paper}: ok in {r.seconds:.1f} s -> {_rel(r.output)}; figures and tables in {_rel(out / 'paper_figures')}/")
    for p in r.problems:
        print(f"  notebook hygiene: {p}")
    return 0


def _rel(path: Path) -> str:
    path = Path(path)
    return str(path.relative_to(REPO_ROOT)) if path.is_relative_to(REPO_ROOT) else str(path)


def reproduce(profile: str = "quick", papers: list[str] | None = None, jobs: int = 1, progress: bool = True,
              scheduler: str | None = None, compare: bool = True, notebook_dir: Path = NOTEBOOK_DIR,
              build_dir: Path = BUILD_DIR, reference: Path = REPO_ROOT) -> int:
    """Run the notebooks into ``build/<profile>/`` (module docstring), then compare the run with the reference;
    returns an exit code (1 when a notebook failed).

    ``scheduler``: a Dask scheduler address; the notebooks' sweeps (:mod:`dpkernels.sweep`) then run on that
    cluster (passed to the kernels as ``DPKERNELS_SCHEDULER``).  ``notebook_dir``, ``build_dir``, ``reference``:
    the sources, the build folder and the repository holding the reference (defaults: this repository's).
    """
    from dpkernels.reference import compare_outputs

    if scheduler:
        from dpkernels.sweep import SCHEDULER_ENV

        os.environ[SCHEDULER_ENV] = scheduler
    todo = papers or available_papers(notebook_dir, profile)
    unknown = sorted(set(todo) - set(available_papers(notebook_dir, profile)))
    if unknown:
        print(f"unknown paper(s) {unknown} for profile {profile}; available: {available_papers(notebook_dir, profile)}",
              file=sys.stderr)
        return 2
    out = Path(build_dir) / profile
    figures = out / "paper_figures"
    if papers is None and figures.exists():
        shutil.rmtree(figures)
    for p in todo:
        shutil.rmtree(figures / p, ignore_errors=True)
    print(f"dpkernels reproduce: profile={profile}, {len(todo)} notebook(s), jobs={jobs}; outputs in {_rel(out)}/ "
          f"(progress inside each notebook: {_rel(out / 'papermill')}/<paper>.kernel.log)", flush=True)
    start_clock, start = time.time(), time.perf_counter()

    def bar(i: int) -> bool | dict:
        return {"desc": f"{todo[i]:<15}", "position": i if jobs > 1 else 0, "leave": True} if progress else False

    if jobs > 1 and len(todo) > 1:
        results = Parallel(n_jobs=jobs, backend="loky")(
            delayed(run_notebook)(p, profile, notebook_dir=notebook_dir, out_dir=out, progress=bar(i))
            for i, p in enumerate(todo))
    else:
        results = [run_notebook(p, profile, notebook_dir=notebook_dir, out_dir=out, progress=bar(i)) for i, p in enumerate(todo)]
    wall = time.perf_counter() - start
    for i, r in enumerate(results, 1):
        print(f"[{i}/{len(todo)}] {r.paper}: {'ok' if r.ok else 'FAILED'} in {r.seconds:.1f} s -> {_rel(r.output)}", flush=True)
        for p in r.problems:
            print(f"    notebook hygiene: {p}", flush=True)
    for r in results:
        if not r.ok:
            print(f"{r.paper} failed: {r.error[:2000]}", file=sys.stderr)
    frames = [section_timings(out / "papermill" / f"{r.paper}.ipynb", r.paper) for r in results if r.ok]
    if frames:
        totals = pd.DataFrame([{"paper": r.paper, "section": "(notebook total)", "cells": None, "seconds": round(r.seconds, 1)}
                               for r in results if r.ok] + [{"paper": "(all)", "section": "(wall time)", "cells": None,
                                                             "seconds": round(wall, 1), "jobs": jobs}])
        timings = out / "benchmarks" / "results" / f"timings_{profile}.csv"
        timings.parent.mkdir(parents=True, exist_ok=True)
        pd.concat(frames + [totals], ignore_index=True).to_csv(timings, index=False)
    outputs = _outputs_written_since(figures, start_clock - 1)
    manifest = {"profile": profile, "papers": todo, "complete": papers is None, "ok": {r.paper: r.ok for r in results},
                "outputs": outputs, "commit": _git_commit(), "wall_seconds": round(wall, 1), "jobs": jobs,
                "notebook_problems": {r.paper: list(r.problems) for r in results if r.problems}}
    (out / "run.json").write_text(json.dumps(manifest, indent=1))
    report = build_report(figures)
    print(f"report: {_rel(report)} (wall time {wall:.0f} s)", flush=True)
    try:
        for path in render_prose(out, [out, Path(reference)], templates=Path(reference)):
            print(f"rendered {_rel(path)} (this run's numbers; the reference's where the run has none)", flush=True)
    except (KeyError, FileNotFoundError) as exc:  # a reference to an output this run did not produce
        print(f"prose not rendered: {exc}", flush=True)
    if compare:
        check = compare_outputs(figures, Path(reference) / "paper_figures", outputs, profile)
        check.table.to_csv(out / "reference_check.csv", index=False)
        print(f"reference check ({_rel(out / 'reference_check.csv')}):\n{check.summary()}", flush=True)
    if profile in ("full", "scale"):
        flag = "" if profile == "full" else f" --profile {profile}"
        print(f"the reference is unchanged; `dpkernels update-reference{flag}` (make update-reference"
              f"{' PROFILE=' + profile if flag else ''}) copies this run into it", flush=True)
    else:
        print("the reference is unchanged", flush=True)
    return 0 if all(r.ok for r in results) else 1
