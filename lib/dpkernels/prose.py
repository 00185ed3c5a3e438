"""Prose that quotes outputs: ``README.md`` and ``ERRATA.md`` rendered from their templates (:data:`PROSE_TEMPLATES`).

Every number the prose quotes is a reference ``{{ <source> | <format> }}`` to an output file (see
:func:`resolve_reference`), so it cannot go stale; ``tests/test_prose.py`` fails when a rendered file differs from
its template's rendering.

Where a reference is read.  An ordered list of :class:`Source` folders laid out like the repository: the first that
has the file, the row and the column gives the value.  The repository's own prose reads the repository; a run's
prose (``build/<profile>/README.md``, :mod:`dpkernels.runner`) reads the run's own outputs first, then the reference
for what the run does not produce (another profile's row, a paper it did not run).  A source restricted to some
outputs (``Source(root, outputs)``) offers only those folders of ``paper_figures/`` and, in a table of
``paper_figures/`` with a ``paper`` column (``totals.csv``), only their rows: a run renders from its own outputs,
never from an earlier run's folder left in the same build.

Gaps.  A reference without a value (a blank cell, a file, row or column that no source has, a text where the format
wants a number) is a gap.  The repository's prose has none: :func:`render_template` raises
:class:`UnresolvedReference` naming the template line (``dpkernels report``, ``dpkernels update-reference`` and the
tests render this way).  A run's prose renders a gap as ``n/a`` (:data:`NA`) with a warning naming the template
line, and the run lists it (``prose_gaps`` in its ``run.json``): a quick profile leaves some values blank by
design, and a missing value must never abort a run.
"""

from __future__ import annotations

import json
import math
import re
import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from dpkernels.workbook import find_root

__all__ = ["PROSE_TEMPLATES", "NA", "Source", "Gap", "UnresolvedReference", "resolve_reference",
           "render_template", "render_texts", "render_prose"]

#: Prose rendered from templates: template -> output (both relative to the repository, or to a run's folder).
PROSE_TEMPLATES = {"docs/ERRATA.md": "ERRATA.md", "docs/README.md": "README.md"}
#: What a gap renders as in a run's prose.
NA = "n/a"
_REF = re.compile(r"\{\{\s*([^{}]+?)\s*\}\}")


class UnresolvedReference(KeyError):
    """A reference of a template has no value; ``reason`` says why, ``where`` names the template line."""

    def __init__(self, reference: str, reason: str, where: str = "") -> None:
        super().__init__(reference, reason)
        self.reference, self.reason, self.where = reference, reason, where

    def __str__(self) -> str:
        return f"{self.where + ': ' if self.where else ''}{{{{ {self.reference} }}}} {self.reason}"


@dataclass(frozen=True)
class Source:
    """A folder laid out like the repository; ``outputs``: the only ``paper_figures/`` folders (and rows of
    ``paper_figures/*.csv`` whose ``paper`` is one of them) it offers (None: everything)."""

    root: Path
    outputs: frozenset[str] | None = None


@dataclass(frozen=True)
class Gap:
    """A reference rendered as ``n/a``: where it is and why."""

    template: str
    line: int
    reference: str
    reason: str

    def __str__(self) -> str:
        return f"{self.template}:{self.line}: {{{{ {self.reference} }}}} {self.reason}"


class _Absent(LookupError):
    """The file, row or column is not in this source: the next source may have it."""


def _source_file(body: str) -> str:
    """The file a reference's source reads, relative to a root."""
    if ".csv" in body:
        return body.partition("?")[0]
    if ".json" in body:
        return body.partition("#")[0]
    if ":" in body:
        return f"paper_figures/{body.split(':', 1)[0]}/checks.csv"
    raise UnresolvedReference(body, "is not a reference (<paper>:<id>.<column>, <file>.csv?...#<column> or <file>.json#<key>)")


def _offers(source: Source, path: str) -> bool:
    parts = Path(path).parts
    if source.outputs is None or parts[0] != "paper_figures" or len(parts) < 3:
        return (source.root / path).exists()
    return parts[1] in source.outputs and (source.root / path).exists()


def _one_row(df: pd.DataFrame, what: str, body: str) -> pd.Series:
    if len(df) == 0:
        raise _Absent(f"no row {what}")
    if len(df) > 1:
        raise UnresolvedReference(body, f"matches {len(df)} rows ({what}): a reference must name one")
    return df.iloc[0]


def _lookup(body: str, source: Source, path: str) -> object:
    if path.endswith(".json"):
        value = json.loads((source.root / path).read_text())
        for k in body.partition("#")[2].split("."):
            try:
                value = value[int(k)] if isinstance(value, list) else value[k]
            except (KeyError, IndexError, ValueError, TypeError):
                raise _Absent(f"no key {k!r}") from None
        return value
    df = pd.read_csv(source.root / path, dtype=str, keep_default_na=False)
    parts = Path(path).parts
    if source.outputs is not None and len(parts) == 2 and parts[0] == "paper_figures" and "paper" in df.columns:
        df = df[df["paper"].isin(source.outputs)]
    if ".csv" in body:
        sel, _, col = body.partition("?")[2].rpartition("#")
        for cond in filter(None, sel.split("&")):
            k, _, v = cond.partition("=")
            if k not in df.columns:
                raise _Absent(f"no column {k!r}")
            df = df[df[k] == v]
        row = _one_row(df, f"{sel}", body)
    else:
        rid, _, col = body.split(":", 1)[1].rpartition(".")
        row = _one_row(df[df["id"] == rid], f"with id {rid!r}", body)
    if col not in row.index:
        raise _Absent(f"no column {col!r}")
    return row[col]


def _blank(value: object) -> bool:
    return value is None or (isinstance(value, float) and math.isnan(value)) or (isinstance(value, str) and not value.strip())


def _sources(sources: Path | str | Source | Sequence[Path | str | Source] | None) -> list[Source]:
    if sources is None:
        return [Source(find_root())]
    if isinstance(sources, (str, Path, Source)):
        sources = [sources]
    return [s if isinstance(s, Source) else Source(Path(s)) for s in sources]


def resolve_reference(ref: str, sources: Path | Source | Sequence[Path | Source] | None = None) -> str:
    """The text of one reference ``{{ <source> | <format> }}`` of a prose template (the format is optional).

    Sources:

    * ``<paper>:<check id>.<column>``: a cell of ``paper_figures/<paper>/checks.csv``;
    * ``<path>.csv?<col>=<value>&...#<column>``: a cell of any CSV under the repository, selected by equality on
      columns (exactly one row must match);
    * ``<path>.json#<key>.<key>...``: a value of a JSON file.

    ``sources``: the folder the paths are relative to (default: the workbook, :func:`dpkernels.workbook.find_root`),
    or a list of folders or :class:`Source` searched in order (a run's ``build/<profile>/`` first, then the
    repository for what the run did not produce: a file or a row it lacks).  The format is a Python format spec
    (e.g. ``.3f``); numbers stored as text are converted first.  Raises :class:`UnresolvedReference` for a gap: a
    blank value, a reference no source has, a text the format cannot take.
    """
    body, _, fmt = (part.strip() for part in ref.partition("|"))
    path = _source_file(body)
    absent = []
    for source in _sources(sources):
        if not _offers(source, path):
            continue
        try:
            value = _lookup(body, source, path)
        except _Absent as exc:
            absent.append(f"{exc} in {path} (under {source.root})")
            continue
        if _blank(value):
            raise UnresolvedReference(ref, f"is blank in {path} (under {source.root})")
        if not fmt:
            return str(value)
        try:
            return format(float(value), fmt)  # type: ignore[arg-type]
        except (TypeError, ValueError):
            try:
                return format(value, fmt)
            except (TypeError, ValueError):
                raise UnresolvedReference(ref, f"holds {str(value)[:40]!r}, which format {fmt!r} cannot take") from None
    raise UnresolvedReference(ref, "; ".join(absent) if absent else f"has no source: {path} is missing")


def render_template(text: str, sources: Path | Source | Sequence[Path | Source] | None = None,
                    gaps: list[Gap] | None = None, template: str = "<template>") -> str:
    """Replace every ``{{ reference }}`` of ``text`` (:func:`resolve_reference` over ``sources``).

    ``gaps=None`` (the repository's prose): a gap raises :class:`UnresolvedReference` naming ``template`` and the
    line.  A list (a run's prose): a gap renders as ``n/a``, is appended to the list and warned about (a
    ``UserWarning``)."""
    srcs = _sources(sources)

    def one(m: re.Match[str]) -> str:
        try:
            return resolve_reference(m.group(1), srcs)
        except UnresolvedReference as exc:
            line = text.count("\n", 0, m.start()) + 1
            if gaps is None:
                raise UnresolvedReference(exc.reference, exc.reason, f"{template}:{line}") from None
            gap = Gap(template, line, exc.reference, exc.reason)
            gaps.append(gap)
            warnings.warn(f"{gap}; rendered as {NA}", UserWarning, stacklevel=4)
            return NA

    return _REF.sub(one, text)


def render_texts(sources: Path | Source | Sequence[Path | Source] | None = None, templates: Path | None = None,
                 gaps: list[Gap] | None = None) -> dict[str, str]:
    """Every prose file (:data:`PROSE_TEMPLATES`: output name -> text) rendered from the templates under
    ``templates`` (default: the workbook); ``gaps`` as in :func:`render_template`."""
    templates = find_root() if templates is None else Path(templates)
    return {dst: render_template((templates / src).read_text(), sources, gaps, template=src)
            for src, dst in PROSE_TEMPLATES.items() if (templates / src).exists()}


def render_prose(out: Path | None = None, sources: Path | Source | Sequence[Path | Source] | None = None,
                 templates: Path | None = None, gaps: list[Gap] | None = None) -> list[Path]:
    """Render the templates into ``out`` (default: the workbook's ``README.md`` and ``ERRATA.md``); returns the
    files written.  ``sources`` default to ``[out]``; nothing is written when a gap raises (``gaps=None``)."""
    out = find_root() if out is None else Path(out)
    texts = render_texts(out if sources is None else sources, out if templates is None else templates, gaps)
    written = []
    for name, text in texts.items():
        (out / name).write_text(text)
        written.append(out / name)
    return written
