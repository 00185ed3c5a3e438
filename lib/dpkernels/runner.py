"""Execute the notebooks with papermill and refresh the report (``dpkernels reproduce``).

For each paper the jupytext percent script ``notebooks/<paper>.py`` is the source: it is converted to
a notebook, executed by papermill with the profile's parameters into ``build/<profile>/<paper>.ipynb``
(not committed), and the executed notebook, minus papermill's injected-parameters cell and run
metadata, replaces ``notebooks/<paper>.ipynb`` so that the paired notebook shows the last run's outputs.
"""

from __future__ import annotations

import os
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from joblib import Parallel, delayed

from dpkernels.report import REPO_ROOT, build_report

__all__ = ["NOTEBOOK_DIR", "BUILD_DIR", "available_papers", "run_notebook", "reproduce", "KERNEL_NAME"]

NOTEBOOK_DIR = REPO_ROOT / "notebooks"
BUILD_DIR = REPO_ROOT / "build"
KERNEL_NAME = "dpkernels"
#: Cell metadata written by papermill / nbclient that must not reach the paired notebook.
RUN_METADATA = ("papermill", "execution", "ExecuteTime")


def available_papers() -> list[str]:
    """Papers with a paired notebook (``notebooks/<paper>.py`` percent script)."""
    return sorted(p.stem for p in NOTEBOOK_DIR.glob("*.py") if (NOTEBOOK_DIR / f"{p.stem}.ipynb").exists())


def _kernel_name() -> str:
    from jupyter_client.kernelspec import KernelSpecManager

    return KERNEL_NAME if KERNEL_NAME in KernelSpecManager().find_kernel_specs() else "python3"


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
    update_notebook: bool = True,
    notebook_dir: Path = NOTEBOOK_DIR,
    build_dir: Path = BUILD_DIR,
) -> RunResult:
    """Execute one notebook; returns its outcome (never raises for a failing notebook)."""
    import jupytext
    import nbformat
    import papermill as pm

    out_dir = Path(build_dir) / profile
    out_dir.mkdir(parents=True, exist_ok=True)
    notebook_dir = Path(notebook_dir)
    src = notebook_dir / f"{paper}.py"
    nb = jupytext.read(src)
    kernel = _kernel_name()
    nb.metadata["kernelspec"] = {"name": kernel, "display_name": "Python (dpkernels)", "language": "python"}
    input_path = out_dir / f"{paper}.input.ipynb"
    output_path = out_dir / f"{paper}.ipynb"
    nbformat.write(nb, input_path)
    start = time.perf_counter()
    env_before = os.environ.get("DPKERNELS_PROFILE")
    os.environ["DPKERNELS_PROFILE"] = profile
    try:
        pm.execute_notebook(str(input_path), str(output_path), parameters={"profile": profile},
                            kernel_name=kernel, cwd=str(notebook_dir), progress_bar=False, log_output=False)
    except Exception as exc:  # papermill raises PapermillExecutionError with the cell's traceback
        return RunResult(paper, False, time.perf_counter() - start, output_path, f"{type(exc).__name__}: {exc}")
    finally:
        if env_before is None:
            os.environ.pop("DPKERNELS_PROFILE", None)
        else:
            os.environ["DPKERNELS_PROFILE"] = env_before
    seconds = time.perf_counter() - start
    if update_notebook:
        executed = nbformat.read(output_path, as_version=4)
        executed.cells = [c for c in executed.cells if "injected-parameters" not in c.metadata.get("tags", [])]
        for cell in executed.cells:
            for key in RUN_METADATA:
                cell.metadata.pop(key, None)
        for key in RUN_METADATA:
            executed.metadata.pop(key, None)
        executed.metadata["kernelspec"] = {"name": KERNEL_NAME, "display_name": "Python (dpkernels)", "language": "python"}
        executed.metadata["jupytext"] = {"formats": "ipynb,py:percent"}
        nbformat.write(executed, notebook_dir / f"{paper}.ipynb")
    return RunResult(paper, True, seconds, output_path)


def reproduce(profile: str = "quick", papers: list[str] | None = None, jobs: int = 1, update_notebooks: bool = True) -> int:
    """Run the notebooks, print a progress line per notebook, rebuild REPORT.md; returns an exit code."""
    todo = papers or available_papers()
    unknown = sorted(set(todo) - set(available_papers()))
    if unknown:
        print(f"unknown paper(s) {unknown}; available: {available_papers()}", file=sys.stderr)
        return 2
    print(f"dpkernels reproduce: profile={profile}, {len(todo)} notebook(s), jobs={jobs}", flush=True)
    if jobs > 1 and len(todo) > 1:
        results = Parallel(n_jobs=jobs, backend="loky")(delayed(run_notebook)(p, profile, update_notebooks) for p in todo)
        for i, r in enumerate(results, 1):
            print(f"[{i}/{len(todo)}] {r.paper}: {'ok' if r.ok else 'FAILED'} in {r.seconds:.1f} s -> {r.output}", flush=True)
    else:
        results = []
        for i, paper in enumerate(todo, 1):
            print(f"[{i}/{len(todo)}] {paper}: running ({profile}) ...", flush=True)
            r = run_notebook(paper, profile, update_notebooks)
            results.append(r)
            print(f"[{i}/{len(todo)}] {paper}: {'ok' if r.ok else 'FAILED'} in {r.seconds:.1f} s -> {r.output}", flush=True)
    for r in results:
        if not r.ok:
            print(f"{r.paper} failed: {r.error[:2000]}", file=sys.stderr)
    report = build_report()
    print(f"report: {report}", flush=True)
    return 0 if all(r.ok for r in results) else 1
