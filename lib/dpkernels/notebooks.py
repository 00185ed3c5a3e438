"""Executed notebooks as a reader gets them: clean, reproducible, and checked for noise.

An executed notebook in the reference (``notebooks/<paper>.ipynb``) is what the runner executed with papermill,
minus everything that depends on the machine or the moment of the run:

* no progress-bar frames: in a kernel started by the runner, tqdm writes to the kernel's own stderr (the file
  ``build/<profile>/papermill/<paper>.kernel.log``), not into cell outputs (:func:`route_progress`, loaded as an
  IPython extension); frames already stored are removed by :func:`clean_notebook`;
* no papermill run metadata (start and end times, absolute input and output paths, durations); the parameters
  that produced the notebook stay in ``metadata.papermill.parameters``, and papermill's injected-parameters cell
  is dropped, so that the notebook's cells are exactly those of its ``.py`` source;
* cell ids derived from each cell's source (:func:`stable_cell_ids`), so that two runs of the same source
  differ only in their outputs.

:func:`notebook_problems` lists what a clean executed notebook must not hold: stored stderr output (a stray
warning, or progress that reached the notebook), error outputs, and absolute paths of this machine.
"""

from __future__ import annotations

import functools
import hashlib
import re
import sys
from typing import Any, TextIO

__all__ = [
    "REFERENCE_METADATA_KEY",
    "RUN_METADATA",
    "is_progress_output",
    "clean_notebook",
    "notebook_problems",
    "stable_cell_ids",
    "route_progress",
    "load_ipython_extension",
]

#: Cell and notebook metadata written by papermill / nbclient / Jupyter that must not reach the reference.
RUN_METADATA = ("papermill", "execution", "ExecuteTime")
#: Notebook metadata key naming the notebook's source and the commands that update it.
REFERENCE_METADATA_KEY = "dpkernels"

# a tqdm frame: "desc:  40%|####      | 4/10 [00:01<00:02,  2.50it/s]" or, without a total, "desc: 12it [00:01, 9.9it/s]"
_TQDM_FRAME = re.compile(r"(\d+%\|.*\|\s*\d+(\.\d+)?[kMG]?/\d+(\.\d+)?[kMG]?\s*\[.*\]|\d+(\.\d+)?[kMG]?it\s*\[.*(it/s|s/it)\])\s*$")
# absolute paths of a POSIX or Windows machine (a URL's path follows a host name, so it is not matched)
_ABSOLUTE_PATH = re.compile(r"(?<![\w.:/~-])(/(home|work|tmp|usr|opt|root|Users|var|mnt|srv|private|scratch)/[\w.@+-]+"
                            r"|[A-Za-z]:\\[\w.]+\\)")


def is_progress_output(output: dict[str, Any]) -> bool:
    """Whether a cell output is progress-bar noise: a stderr stream whose every line is a tqdm frame or blank."""
    if output.get("output_type") != "stream" or output.get("name") != "stderr":
        return False
    text = output.get("text", "")
    text = "".join(text) if isinstance(text, list) else text
    pieces = [p for p in re.split(r"[\r\n]", text) if p.strip()]
    return all(_TQDM_FRAME.search(p) for p in pieces)


def stable_cell_ids(nb: Any) -> None:
    """Give every cell an id derived from its type and source (numbered when two cells are identical)."""
    seen: dict[str, int] = {}
    for cell in nb.cells:
        base = hashlib.sha1(f"{cell.cell_type}\n{cell.source}".encode()).hexdigest()[:12]
        k = seen.get(base, 0)
        seen[base] = k + 1
        cell["id"] = base if k == 0 else f"{base}-{k}"


def _assignments(source: str) -> dict[str, Any]:
    """``name = <literal>`` statements of papermill's injected cell, as a mapping."""
    import ast

    out = {}
    for node in ast.parse(source).body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            try:
                out[node.targets[0].id] = ast.literal_eval(node.value)
            except ValueError:
                continue
    return out


def clean_notebook(nb: Any, source: str | None = None) -> Any:
    """Make an executed notebook fit for the reference, in place (and return it).

    Removes progress-bar outputs (:func:`is_progress_output`), papermill's injected-parameters cell (its parameters
    are kept in ``metadata.papermill.parameters``), run metadata (:data:`RUN_METADATA`: times, durations, absolute
    paths) and gives stable cell ids.  ``source``: the name of the ``.py`` the notebook is executed from, recorded
    with the commands that update the notebook in ``metadata.dpkernels``.
    """
    parameters = dict(nb.metadata.get("papermill", {}).get("parameters", {}) or {})
    keep = []
    for cell in nb.cells:
        if "injected-parameters" in cell.metadata.get("tags", []):
            parameters = {**_assignments(cell.source), **parameters}
            continue
        if cell.cell_type == "code":
            cell.outputs = [o for o in cell.outputs if not is_progress_output(o)]
        for key in RUN_METADATA:
            cell.metadata.pop(key, None)
        keep.append(cell)
    nb.cells = keep
    for key in RUN_METADATA:
        nb.metadata.pop(key, None)
    if parameters:
        nb.metadata["papermill"] = {"parameters": parameters}
        for cell in keep:  # the parameters cell keeps its source (the defaults); its output says what this run used
            if cell.cell_type == "code" and "parameters" in cell.metadata.get("tags", []):
                text = "this run: " + ", ".join(f"{k} = {v!r}" for k, v in parameters.items()) + "\n"
                from nbformat.v4 import new_output

                cell.outputs = [new_output("stream", name="stdout", text=text)]
    nb.metadata.pop("jupytext", None)  # the reference is not paired: `dpkernels sync` updates its inputs
    if source is not None:
        nb.metadata[REFERENCE_METADATA_KEY] = {
            "source": source,
            "inputs": "dpkernels sync (from the .py source, keeping outputs)",
            "outputs": "make reproduce, then make update-reference",
        }
    stable_cell_ids(nb)
    return nb


def _output_texts(output: dict[str, Any]) -> list[str]:
    if output.get("output_type") == "stream":
        text = output.get("text", "")
        return ["".join(text) if isinstance(text, list) else text]
    if output.get("output_type") == "error":
        return ["\n".join(output.get("traceback", [])), str(output.get("evalue", ""))]
    texts = []
    for mime, value in output.get("data", {}).items():
        if mime.startswith("text/") or mime.endswith("json"):
            texts.append("".join(value) if isinstance(value, list) else str(value))
    return texts


def notebook_problems(nb: Any, extra_paths: tuple[str, ...] = ()) -> list[str]:
    """What an executed reference notebook must not hold, one line each: stored stderr output (progress frames,
    warnings), error outputs, absolute paths (in outputs or metadata).  ``extra_paths``: further strings that
    must not appear (e.g. the repository's absolute path)."""
    import json

    problems = []
    needles = tuple(p for p in extra_paths if p)
    for i, cell in enumerate(nb.cells):
        where = f"cell {i} ({cell.get('id', '?')})"
        for o in cell.get("outputs", []):
            kind = o.get("output_type")
            if kind == "stream" and o.get("name") == "stderr":
                text = _output_texts(o)[0]
                what = "progress-bar frames" if is_progress_output(o) else "stderr output"
                problems.append(f"{where}: {what}: {text.strip()[:160]!r}")
            elif kind == "error":
                problems.append(f"{where}: error output {o.get('ename', '')}: {str(o.get('evalue', ''))[:160]}")
            for text in _output_texts(o):
                m = _ABSOLUTE_PATH.search(text)
                hit = m.group(0) if m else next((p for p in needles if p in text), None)
                if hit:
                    problems.append(f"{where}: absolute path {hit!r} in an output")
    meta = json.dumps(dict(nb.metadata))
    m = _ABSOLUTE_PATH.search(meta)
    if m:
        problems.append(f"notebook metadata: absolute path {m.group(0)!r}")
    return problems


def route_progress(stream: TextIO) -> None:
    """Make every tqdm bar created from now on write to ``stream`` unless given a ``file``.

    In a kernel the runner starts, ``stream`` is the kernel's own stderr (the kernel log), so progress stays
    visible there (``tail -f``) and never becomes a cell output; a notebook run by hand is left alone.
    """
    import tqdm.std

    init = tqdm.std.tqdm.__init__
    if getattr(init, "__dpkernels_stream__", None) is stream:
        return
    original = getattr(init, "__wrapped__", init)

    @functools.wraps(original)
    def __init__(self: Any, *args: Any, file: TextIO | None = None, **kwargs: Any) -> None:
        original(self, *args, file=stream if file is None else file, **kwargs)

    __init__.__dpkernels_stream__ = stream  # type: ignore[attr-defined]
    tqdm.std.tqdm.__init__ = __init__  # type: ignore[method-assign]


def load_ipython_extension(ipython: Any) -> None:
    """IPython extension loaded by the runner's kernels (``--IPKernelApp.extensions=dpkernels.notebooks``): progress
    bars go to the kernel's stderr file descriptor, which the runner sends to the kernel log."""
    route_progress(sys.__stderr__)
