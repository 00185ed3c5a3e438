"""Execute the notebooks with papermill and refresh the report (``dpkernels reproduce``).

For each paper the jupytext percent script ``notebooks/<paper>.py`` is the source.  It is converted to a notebook
with stable cell ids (a hash of each cell's source, so that two runs of the same source differ only in outputs),
and executed by papermill with the profile's parameters into ``build/<profile>/<paper>.ipynb``.

* ``quick`` (CI, a first look): figures, tables and ``REPORT.md`` go to ``build/quick/paper_figures/``; nothing
  tracked by git changes.
* ``full`` (paper scale): figures and tables go to ``paper_figures/``, and the executed notebook, with papermill's
  injected-parameters cell (so that it shows the parameters that produced it) and without run metadata, replaces
  ``notebooks/<paper>.ipynb``; the prose templates (``docs/*.md``) are rendered into ``ERRATA.md`` and ``README.md``.
* ``scale`` (only the frontier has it: a thousand rows to the full data, on a Dask cluster): the frontier's reference
  profile (:data:`REFERENCE_PROFILES`), so it writes ``paper_figures/frontier`` and ``notebooks/frontier.ipynb`` the
  way ``full`` does for the papers, while ``full`` runs a small frontier into ``build/full/``.

Each run writes a per-notebook, per-section timing table (papermill records every cell's duration) to
``build/<profile>/timings.csv`` and, for the full profile, ``benchmarks/results/timings_full.csv``.
"""

from __future__ import annotations

import hashlib
import os
import re
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import pandas as pd
from joblib import Parallel, delayed

from dpkernels.report import REPO_ROOT, build_report

__all__ = ["NOTEBOOK_DIR", "BUILD_DIR", "available_papers", "run_notebook", "reproduce", "KERNEL_NAME",
           "stable_cell_ids", "section_timings", "render_prose", "sync_notebook", "PROSE_TEMPLATES", "REFERENCE_PROFILES",
           "reference_profile"]

NOTEBOOK_DIR = REPO_ROOT / "notebooks"
BUILD_DIR = REPO_ROOT / "build"
KERNEL_NAME = "dpkernels"
#: Cell metadata written by papermill / nbclient that must not reach the paired notebook.
RUN_METADATA = ("papermill", "execution", "ExecuteTime")
#: Prose rendered from templates after a full run: template -> output (both relative to the repository).
PROSE_TEMPLATES = {"docs/ERRATA.md": "ERRATA.md", "docs/README.md": "README.md"}
#: The profile whose run is a paper's reference (``paper_figures/<paper>``, ``notebooks/<paper>.ipynb``); "full" else.
REFERENCE_PROFILES = {"frontier": "scale"}


def reference_profile(paper: str) -> str:
    """The profile that writes ``paper``'s reference outputs (:data:`REFERENCE_PROFILES`, default "full")."""
    return REFERENCE_PROFILES.get(paper, "full")


def available_papers(notebook_dir: Path = NOTEBOOK_DIR, profile: str | None = None) -> list[str]:
    """Papers with a paired notebook (``notebooks/<paper>.py`` percent script), and with an entry for ``profile`` in
    ``notebooks/profiles.yaml`` when one is given."""
    papers = sorted(p.stem for p in Path(notebook_dir).glob("*.py") if (Path(notebook_dir) / f"{p.stem}.ipynb").exists())
    if profile is None:
        return papers
    from dpkernels.profiles import _read

    data = _read()
    return [p for p in papers if profile in data.get(p, {})]


def _kernel_name() -> str:
    from jupyter_client.kernelspec import KernelSpecManager

    return KERNEL_NAME if KERNEL_NAME in KernelSpecManager().find_kernel_specs() else "python3"


def stable_cell_ids(nb: object) -> None:
    """Give every cell an id derived from its type and source (numbered when two cells are identical)."""
    seen: dict[str, int] = {}
    for cell in nb.cells:
        base = hashlib.sha1(f"{cell.cell_type}\n{cell.source}".encode()).hexdigest()[:12]
        k = seen.get(base, 0)
        seen[base] = k + 1
        cell["id"] = base if k == 0 else f"{base}-{k}"


def _kernel_manager_logging_to(log: Path) -> type:
    """A kernel manager whose kernel writes its stderr to ``log`` (``build/<profile>/<paper>.kernel.log``) instead of
    the user's terminal: asyncio's "Task was destroyed but it is pending!" at kernel shutdown and the like.  Cell
    errors and cell output still reach the notebook through the kernel's messages."""
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


def run_notebook(
    paper: str,
    profile: str,
    update_notebook: bool | None = None,
    notebook_dir: Path = NOTEBOOK_DIR,
    build_dir: Path = BUILD_DIR,
    figures_dir: Path | None = None,
    progress: bool | dict = False,
) -> RunResult:
    """Execute one notebook; returns its outcome (never raises for a failing notebook).

    ``update_notebook`` (default: only for the paper's reference profile, :func:`reference_profile`) copies the
    executed notebook to ``notebooks/<paper>.ipynb``; ``figures_dir`` (default: ``paper_figures/`` for the reference
    profile, ``build/<profile>/paper_figures`` otherwise) receives the figures and tables.
    """
    import jupytext
    import nbformat
    import papermill as pm

    reference = profile == reference_profile(paper)
    if update_notebook is None:
        update_notebook = reference
    out_dir = Path(build_dir) / profile
    out_dir.mkdir(parents=True, exist_ok=True)
    notebook_dir = Path(notebook_dir)
    if figures_dir is None:
        figures_dir = REPO_ROOT / "paper_figures" if reference else out_dir / "paper_figures"
    nb = jupytext.read(notebook_dir / f"{paper}.py")
    stable_cell_ids(nb)
    kernel = _kernel_name()
    nb.metadata["kernelspec"] = {"name": kernel, "display_name": "Python (dpkernels)", "language": "python"}
    input_path = out_dir / f"{paper}.input.ipynb"
    output_path = out_dir / f"{paper}.ipynb"
    nbformat.write(nb, input_path)
    start = time.perf_counter()
    saved = {k: os.environ.get(k) for k in ("DPKERNELS_PROFILE", "DPKERNELS_OUTPUT", "PYDEVD_DISABLE_FILE_VALIDATION")}
    os.environ["DPKERNELS_PROFILE"] = profile
    os.environ["DPKERNELS_OUTPUT"] = str(figures_dir)
    os.environ["PYDEVD_DISABLE_FILE_VALIDATION"] = "1"  # the debugger's frozen-modules warning on every kernel start
    try:
        pm.execute_notebook(str(input_path), str(output_path), parameters={"profile": profile},
                            kernel_name=kernel, cwd=str(notebook_dir), progress_bar=progress, log_output=False,
                            extra_arguments=["--IPKernelApp.log_level=ERROR"],
                            kernel_manager_class=_kernel_manager_logging_to(out_dir / f"{paper}.kernel.log"))
    except Exception as exc:  # papermill raises PapermillExecutionError with the cell's traceback
        return RunResult(paper, False, time.perf_counter() - start, output_path, f"{type(exc).__name__}: {exc}")
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
    seconds = time.perf_counter() - start
    if update_notebook:
        executed = nbformat.read(output_path, as_version=4)
        stable_cell_ids(executed)
        for cell in executed.cells:
            for key in RUN_METADATA:
                cell.metadata.pop(key, None)
        for key in RUN_METADATA:
            executed.metadata.pop(key, None)
        executed.metadata["kernelspec"] = {"name": KERNEL_NAME, "display_name": "Python (dpkernels)", "language": "python"}
        executed.metadata["jupytext"] = {"formats": "ipynb,py:percent"}
        nbformat.write(executed, notebook_dir / f"{paper}.ipynb")
    return RunResult(paper, True, seconds, output_path)


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


def render_prose(root: Path = REPO_ROOT) -> list[Path]:
    """Render ``docs/*.md`` templates into the files that quote outputs (:func:`dpkernels.report.render_template`)."""
    from dpkernels.report import render_template

    written = []
    for src, dst in PROSE_TEMPLATES.items():
        template = Path(root) / src
        if template.exists():
            (Path(root) / dst).write_text(render_template(template.read_text(), root))
            written.append(Path(root) / dst)
    return written


def sync_notebook(paper: str, notebook_dir: Path = NOTEBOOK_DIR) -> Path:
    """Update the inputs of ``notebooks/<paper>.ipynb`` from its ``.py`` source, keeping the outputs of unchanged
    cells and the injected-parameters cell of the last run (``make sync``)."""
    import jupytext
    import nbformat
    from jupytext.combine import combine_inputs_with_outputs

    notebook_dir = Path(notebook_dir)
    ipynb = notebook_dir / f"{paper}.ipynb"
    source = jupytext.read(notebook_dir / f"{paper}.py")
    old = nbformat.read(ipynb, as_version=4) if ipynb.exists() else nbformat.v4.new_notebook()
    injected = [(i, c) for i, c in enumerate(old.cells) if "injected-parameters" in c.metadata.get("tags", [])]
    old.cells = [c for c in old.cells if "injected-parameters" not in c.metadata.get("tags", [])]
    combined = combine_inputs_with_outputs(source, old, fmt="py:percent")
    for i, cell in injected:
        combined.cells.insert(i, cell)
    stable_cell_ids(combined)
    combined.metadata["kernelspec"] = {"name": KERNEL_NAME, "display_name": "Python (dpkernels)", "language": "python"}
    combined.metadata["jupytext"] = {"formats": "ipynb,py:percent"}
    nbformat.write(combined, ipynb)
    return ipynb


def reproduce(profile: str = "quick", papers: list[str] | None = None, jobs: int = 1, update_notebooks: bool | None = None,
              progress: bool = True, scheduler: str | None = None) -> int:
    """Run the notebooks (a progress bar each), rebuild REPORT.md and the timing table; returns an exit code.

    ``scheduler``: a Dask scheduler address; the notebooks' sweeps (:mod:`dpkernels.sweep`) then run on that
    cluster (passed to the kernels as ``DPKERNELS_SCHEDULER``).
    """
    if scheduler:
        from dpkernels.sweep import SCHEDULER_ENV

        os.environ[SCHEDULER_ENV] = scheduler
    todo = papers or available_papers(profile=profile)
    unknown = sorted(set(todo) - set(available_papers(profile=profile)))
    if unknown:
        print(f"unknown paper(s) {unknown} for profile {profile}; available: {available_papers(profile=profile)}",
              file=sys.stderr)
        return 2
    reference = any(reference_profile(p) == profile for p in todo)
    figures = REPO_ROOT / "paper_figures" if reference else BUILD_DIR / profile / "paper_figures"
    where = f"{figures.relative_to(REPO_ROOT)}/" if figures.is_relative_to(REPO_ROOT) else str(figures)
    print(f"dpkernels reproduce: profile={profile}, {len(todo)} notebook(s), jobs={jobs}; outputs in {where}", flush=True)
    start = time.perf_counter()

    def bar(i: int) -> bool | dict:
        return {"desc": f"{todo[i]:<15}", "position": i if jobs > 1 else 0, "leave": True} if progress else False

    if jobs > 1 and len(todo) > 1:
        results = Parallel(n_jobs=jobs, backend="loky")(
            delayed(run_notebook)(p, profile, update_notebooks, progress=bar(i)) for i, p in enumerate(todo))
    else:
        results = [run_notebook(p, profile, update_notebooks, progress=bar(i)) for i, p in enumerate(todo)]
    wall = time.perf_counter() - start
    for i, r in enumerate(results, 1):
        print(f"[{i}/{len(todo)}] {r.paper}: {'ok' if r.ok else 'FAILED'} in {r.seconds:.1f} s -> {r.output}", flush=True)
    for r in results:
        if not r.ok:
            print(f"{r.paper} failed: {r.error[:2000]}", file=sys.stderr)
    frames = [section_timings(r.output, r.paper) for r in results if r.ok]
    if frames:
        timings = pd.concat(frames, ignore_index=True)
        totals = pd.DataFrame([{"paper": r.paper, "section": "(notebook total)", "cells": None, "seconds": round(r.seconds, 1)}
                               for r in results if r.ok] + [{"paper": "(all)", "section": "(wall time)", "cells": None,
                                                             "seconds": round(wall, 1), "jobs": jobs}])
        timings = pd.concat([timings, totals], ignore_index=True)
        timings.to_csv(BUILD_DIR / profile / "timings.csv", index=False)
        if profile in ("full", "scale") and papers is None:
            timings.to_csv(REPO_ROOT / "benchmarks" / "results" / f"timings_{profile}.csv", index=False)
    report = build_report(figures)
    print(f"report: {report} (wall time {wall:.0f} s)", flush=True)
    if reference and all(r.ok for r in results):
        for path in render_prose():
            print(f"rendered {path.relative_to(REPO_ROOT)}", flush=True)
    return 0 if all(r.ok for r in results) else 1
