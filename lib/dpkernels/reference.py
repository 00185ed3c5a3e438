"""The committed reference, a run compared with it, and the one command that updates it.

The reference is what the repository tracks: ``paper_figures/`` (tables, checks, figures, ``REPORT.md``), the
executed notebooks ``notebooks/<paper>.ipynb``, the run times ``benchmarks/results/timings_<profile>.csv`` and the
prose rendered from them (``README.md``, ``ERRATA.md``).  A run (``dpkernels reproduce``, ``dpkernels run``)
writes the same layout under ``build/<profile>/`` and never touches the reference; it ends with
:func:`compare_outputs`, which says which numbers of the run reproduce the reference.  Only
:func:`update_reference` (``dpkernels update-reference``, ``make update-reference``) copies a run into the
reference.

How numbers are compared (:func:`compare_outputs`):

* *which*: every cell of every CSV under ``paper_figures/<output>/`` of the run's outputs, rows of our results
  only (a ``source = published`` row holds the paper's number, an input).  ``REPORT.md`` and ``totals.csv`` are
  derived from these files and not compared again; figures are drawn from the tables.
* *not compared*: run times and other machine-dependent cells: columns named like
  :data:`MACHINE_COLUMNS` (``fit_seconds``, ``peak_mb``, ...) and check rows about run time or memory
  (:data:`MACHINE_CHECKS`); the uncertainty of a number (``se``, ``sd``, ``ci95``, ...), which enters its
  comparison instead of being compared itself.
* *pairing*: a check by its ``id``; a table row by position when the run's table has as many rows as the
  reference's, else by its text columns when they identify the rows.  A reference row without a partner has moved.
* *a number with a standard error* (``value`` and the columns equal to it with the row's ``se``; a column ``c``
  with ``se_c`` or ``c_se``): reproduces when ``|z| <= verdicts.Z_AGREE``, z = (run - reference) /
  sqrt(se_run^2 + se_reference^2), the rule the report uses for published numbers.
* *a number without one* (an exact calculator, or a seeded computation whose every draw the run repeats):
  reproduces when it agrees to :data:`RTOL` relative (:data:`ATOL` absolute).
* *text* (a check's status, a text result such as a recommended mechanism): reproduces when identical; counted
  apart from numbers.

At the quick profile the run's sizes differ from the reference's (the full profile), so its simulated numbers
differ by design: only the checks of kind ``analytic`` (the paper's formulas against our derivation, which no
profile size enters) are compared, and the summary says so.
"""

from __future__ import annotations

import json
import math
import re
import shutil
from dataclasses import dataclass
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pandas as pd

from dpkernels import verdicts
from dpkernels.notebooks import notebook_problems
from dpkernels.prose import Gap, Source, UnresolvedReference, render_prose, render_texts
from dpkernels.report import build_report
from dpkernels.workbook import find_root

__all__ = [
    "RTOL",
    "ATOL",
    "MACHINE_COLUMNS",
    "MACHINE_CHECKS",
    "UNCERTAINTY_COLUMNS",
    "ReferenceCheck",
    "compare_outputs",
    "update_reference",
    "regenerate_derived",
    "REFERENCE_PROFILE",
    "REFERENCE_PROFILES",
    "reference_profile",
]

#: The profile of the committed reference.
REFERENCE_PROFILE = "full"
#: Outputs (and papers) whose reference comes from another profile: the frontier's from ``scale`` (a thousand rows
#: to the full data, on a Dask cluster); ``full`` runs a small frontier that is compared only by its analytic checks.
#: Yu et al.'s Table 2 protocol (yu2020) runs complete only at ``scale``; its ``full`` profile is a reduced grid.
REFERENCE_PROFILES = {"frontier": "scale", "yu2020": "scale"}


def reference_profile(name: str) -> str:
    """The profile whose run is the reference of paper or output folder ``name`` (:data:`REFERENCE_PROFILES`)."""
    return REFERENCE_PROFILES.get(name, REFERENCE_PROFILE)


def reference_source_profile(reference: str) -> str:
    """The profile whose run writes what a prose reference quotes: ``<output>:<check id>.<field>`` and
    ``paper_figures/<output>/...`` belong to the output's profile, ``paper_figures/totals.csv?paper=<p>`` (derived)
    to paper ``p``'s, anything else (e.g. ``benchmarks/results/...``) to the papers' reference profile."""
    ref = reference.strip()
    if not ref.startswith("paper_figures/") and ":" in ref.split("?")[0]:
        return reference_profile(ref.split(":", 1)[0])
    parts = ref.split("?")[0].split("#")[0].split("/")
    if len(parts) >= 3 and parts[0] == "paper_figures":
        return reference_profile(parts[1])
    paper = re.search(r"[?&]paper=([^&#]+)", ref)
    return reference_profile(paper.group(1).strip()) if paper else REFERENCE_PROFILE


def _other_profiles_gaps(gaps: list[Gap], profile: str) -> list[Gap]:
    """Raise for a gap of ``profile``'s own outputs (at the quick profile, which copies none: for any gap); return
    the others (their profile's update fills them)."""
    own = [g for g in gaps if profile == "quick" or reference_source_profile(g.reference) == profile]
    if own:
        raise UnresolvedReference(own[0].reference, own[0].reason, f"{own[0].template}:{own[0].line}")
    return gaps
RTOL = 1e-6
ATOL = 1e-12
#: Columns holding run times, memory or the machine's load: never compared.
MACHINE_COLUMNS = re.compile(r"(seconds|(^|_)time($|_)|duration|elapsed|peak_mb|memory|(^|_)mb$|(^|_)load(_|$))", re.I)
#: Check rows about run time or memory (our speed targets): never compared.
MACHINE_CHECKS = re.compile(r"\b(run[ -]time|fit[ -]time|wall|seconds|memory)\b", re.I)
#: Columns that state the uncertainty of another number: they enter its comparison, and are not compared.
UNCERTAINTY_COLUMNS = re.compile(r"^(se|sd|std|ci95|ci|cp_low|cp_high|se_.+|.+_se|sd_.+|.+_sd|.+_ci95)$", re.I)
#: Files of paper_figures derived from the others.
DERIVED_FILES = ("REPORT.md", "totals.csv")
RESULT_COLUMNS = ["output", "file", "row", "column", "reference", "reproduced", "se_reference", "se_reproduced", "z",
                  "rule", "kind", "reproduces"]


def _number(x: object) -> float | None:
    if isinstance(x, (bool, np.bool_)):
        return None
    try:
        v = float(x)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return None
    return v


def _blank(x: object) -> bool:
    return x is None or (isinstance(x, float) and math.isnan(x)) or (isinstance(x, str) and x.strip() == "")


def _close(a: float, b: float) -> bool:
    if math.isnan(a) or math.isnan(b):
        return math.isnan(a) and math.isnan(b)
    if math.isinf(a) or math.isinf(b):
        return a == b
    return abs(a - b) <= RTOL * max(abs(a), abs(b)) + ATOL


@dataclass
class ReferenceCheck:
    """The outcome of :func:`compare_outputs`: one row per compared cell (``table``), and what was left out."""

    table: pd.DataFrame
    profile: str
    scope: str
    excluded: int
    new_rows: int

    @property
    def numbers(self) -> pd.DataFrame:
        return self.table[self.table["kind"] == "number"]

    @property
    def texts(self) -> pd.DataFrame:
        return self.table[self.table["kind"] == "text"]

    def moved(self) -> pd.DataFrame:
        return self.table[~self.table["reproduces"].astype(bool)]

    def summary(self, limit: int = 15) -> str:
        """The lines a run ends with: ``N of M numbers reproduce the reference; these moved: ...``."""
        nums, texts = self.numbers, self.texts
        lines = []
        if self.scope == "analytic":
            lines.append(f"{self.profile} profile: only the analytic checks are compared with the reference (the "
                         f"{REFERENCE_PROFILE} profile); this profile's simulations run other sizes, so their numbers "
                         "differ by design.")
        elif self.scope == "mixed":
            others = ", ".join(f"{k} ({v})" for k, v in sorted(REFERENCE_PROFILES.items()))
            lines.append(f"{self.profile} profile: outputs whose reference comes from another profile ({others}) are "
                         "compared only by their analytic checks; their simulations run other sizes by design.")
        n_ok = int(nums["reproduces"].sum())
        moved = nums[~nums["reproduces"].astype(bool)]
        head = f"{n_ok} of {len(nums)} numbers reproduce the reference"
        lines.append(head + ("." if moved.empty else "; these moved: " + _describe(moved, limit)))
        t_ok = int(texts["reproduces"].sum())
        changed = texts[~texts["reproduces"].astype(bool)]
        lines.append(f"{t_ok} of {len(texts)} verdicts and text results are unchanged"
                     + ("." if changed.empty else "; these changed: " + _describe(changed, limit)))
        notes = []
        if self.excluded:
            notes.append(f"{self.excluded} run-time, memory and uncertainty cells not compared")
        if self.new_rows:
            notes.append(f"{self.new_rows} rows of the run are not in the reference")
        if notes:
            lines.append("(" + "; ".join(notes) + ".)")
        return "\n".join(lines)


def _fmt(v: object) -> str:
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return "(missing)"
    x = _number(v)
    return f"{x:.6g}" if x is not None else repr(v)


def _describe(rows: pd.DataFrame, limit: int) -> str:
    parts = []
    for _, r in rows.head(limit).iterrows():
        z = f", z = {r['z']:.1f}" if isinstance(r["z"], float) and np.isfinite(r["z"]) else ""
        parts.append(f"{r['output']}/{r['file']} [{r['row']}] {r['column']}: {_fmt(r['reference'])} -> "
                     f"{_fmt(r['reproduced'])}{z}")
    more = f"; and {len(rows) - limit} more" if len(rows) > limit else ""
    return "; ".join(parts) + more


class _Collector:
    def __init__(self) -> None:
        self.rows: list[dict[str, object]] = []
        self.excluded = 0
        self.new_rows = 0

    def add(self, output: str, file: str, row: str, column: str, ref: object, run: object, se_ref: float | None = None,
            se_run: float | None = None) -> None:
        a, b = _number(ref), _number(run)
        if a is not None and b is not None and not (_blank(ref) and _blank(run)):
            if se_ref is not None and se_run is not None and se_ref > 0 and se_run > 0 and np.isfinite(a + b):
                z = (b - a) / math.sqrt(se_ref ** 2 + se_run ** 2)
                ok, rule = abs(z) <= verdicts.Z_AGREE, f"|z| <= {verdicts.Z_AGREE:g}"
            else:
                z, ok, rule = float("nan"), _close(a, b), f"relative {RTOL:g}"
            kind = "number"
        elif _blank(ref) and _blank(run):
            return
        elif a is not None or b is not None:  # a number on one side only
            z, ok, rule, kind = float("nan"), False, f"relative {RTOL:g}", "number"
        else:
            z, ok, rule, kind = float("nan"), str(ref) == str(run), "identical", "text"
        self.rows.append({"output": output, "file": file, "row": row, "column": column, "reference": ref,
                          "reproduced": run, "se_reference": se_ref, "se_reproduced": se_run, "z": z, "rule": rule,
                          "kind": kind, "reproduces": bool(ok)})

    def missing(self, output: str, file: str, row: str, ref_row: pd.Series, columns: list[str]) -> None:
        for c in columns:
            if not _blank(ref_row[c]):
                kind = "number" if _number(ref_row[c]) is not None else "text"
                self.rows.append({"output": output, "file": file, "row": row, "column": c, "reference": ref_row[c],
                                  "reproduced": None, "se_reference": None, "se_reproduced": None, "z": float("nan"),
                                  "rule": "row not in the run", "kind": kind, "reproduces": False})


def _read(path: Path) -> pd.DataFrame:
    return pd.read_csv(path, dtype=str, keep_default_na=False)


def _compare_checks(col: _Collector, output: str, ref: pd.DataFrame, run: pd.DataFrame, scope: str) -> None:
    if scope == "analytic":
        ref = ref[ref["kind"] == "analytic"]
    run_by_id = {r["id"]: r for _, r in run.iterrows()}
    for _, r in ref.iterrows():
        if MACHINE_CHECKS.search(f"{r['claim']} {r['check']}"):
            col.excluded += 3
            continue
        other = run_by_id.get(r["id"])
        if other is None:
            col.missing(output, "checks.csv", r["id"], r, ["bound", "measured", "status"])
            continue
        for c in ("bound", "measured", "status"):
            col.add(output, "checks.csv", r["id"], c, r[c], other[c])
    if scope == "all":
        col.new_rows += len(set(run_by_id) - set(ref["id"]))


def _se(row: pd.Series, column: str, value_column: str = "value") -> float | None:
    for name in (f"se_{column}", f"{column}_se"):
        if name in row.index:
            return _number(row[name])
    if "se" in row.index and column != "se":
        if column == value_column:
            return _number(row["se"])
        a, b = _number(row[column]), _number(row.get(value_column))
        if a is not None and b is not None and a == b:  # an alias of the value (mean, measured, error, ...)
            return _number(row["se"])
    return None


def _not_comparable_keys(table: pd.DataFrame) -> set[str]:
    """The keys of published rows typed ``not comparable`` (timings of another machine): their reproduced partners
    are machine-dependent too (our run times), so they are not compared either."""
    if "class_override" not in table.columns or "source" not in table.columns:
        return set()
    keys = [c for c in table.columns if c not in _VALUE_LIKE and not MACHINE_COLUMNS.search(c)]
    pub = table[(table["source"] == "published") & (table["class_override"] == "not comparable")]
    return set(pub[keys].astype(str).agg("|".join, axis=1)) if keys and len(pub) else set()


#: Columns of a paper table that hold values, not keys (report.VALUE_COLUMNS plus the typing columns).
_VALUE_LIKE = ("source", "value", "se", "sd", "n_runs", "note", "errata", "class_override", "min_effect")


def _drop_not_comparable(table: pd.DataFrame, not_comparable: set[str]) -> tuple[pd.DataFrame, int]:
    if not not_comparable:
        return table, 0
    keys = [c for c in table.columns if c not in _VALUE_LIKE and not MACHINE_COLUMNS.search(c)]
    hit = table[keys].astype(str).agg("|".join, axis=1).isin(not_comparable)
    return table[~hit].reset_index(drop=True), int(hit.sum())


def _row_keys(df: pd.DataFrame, keys: list[str]) -> pd.Series:
    """Each row's text key (its ``keys`` columns joined), a Series even for a table without rows."""
    return pd.Series(["|".join(map(str, row)) for row in df[keys].itertuples(index=False)], dtype=str)


def _compare_table(col: _Collector, output: str, name: str, ref: pd.DataFrame, run: pd.DataFrame) -> None:
    nc = _not_comparable_keys(ref)
    if "source" in ref.columns:
        ref = ref[ref["source"] != "published"].reset_index(drop=True)
    if "source" in run.columns:
        run = run[run["source"] != "published"].reset_index(drop=True)
    ref, dropped = _drop_not_comparable(ref, nc)
    run, _ = _drop_not_comparable(run, nc)
    col.excluded += dropped * max(1, len(ref.columns))
    compared = [c for c in ref.columns if c != "source"]
    skipped = [c for c in compared if MACHINE_COLUMNS.search(c) or UNCERTAINTY_COLUMNS.match(c)]
    compared = [c for c in compared if c not in skipped]
    col.excluded += len(skipped) * len(ref)
    if len(ref) == len(run):
        pairs = [(i, ref.iloc[i], run.iloc[i]) for i in range(len(ref))]
        unpaired: list[int] = []
    else:
        keys = [c for c in compared if c in run.columns and all(_number(v) is None for v in ref[c] if not _blank(v))]
        ref_keys, run_keys = _row_keys(ref, keys), _row_keys(run, keys)
        if keys and ref_keys.is_unique and run_keys.is_unique:
            where = {k: j for j, k in enumerate(run_keys)}
            pairs = [(i, ref.iloc[i], run.iloc[where[k]]) for i, k in enumerate(ref_keys) if k in where]
            unpaired = [i for i, k in enumerate(ref_keys) if k not in where]
            col.new_rows += len(set(run_keys) - set(ref_keys))
        else:
            pairs, unpaired = [], list(range(len(ref)))
            col.new_rows += len(run)
    for i in unpaired:
        col.missing(output, name, str(i), ref.iloc[i], compared)
    for i, a, b in pairs:
        for c in compared:
            if c not in run.columns:
                col.missing(output, name, str(i), a, [c])
                continue
            col.add(output, name, str(i), c, a[c], b[c], _se(a, c), _se(b, c))


def compare_outputs(run_root: Path, ref_root: Path | None = None, outputs: list[str] | None = None,
                    profile: str = REFERENCE_PROFILE) -> ReferenceCheck:
    """Compare a run's ``paper_figures`` folder (``run_root``) with the reference's (default: the workbook's
    ``paper_figures/``, :func:`dpkernels.workbook.find_root`).

    ``outputs``: the output folders to compare (default: every folder of the run).  At a profile other than the
    reference's only analytic checks are compared (module docstring); an output's reference profile is
    :func:`reference_profile` (the frontier's is ``scale``).
    """
    run_root = Path(run_root)
    ref_root = find_root() / "paper_figures" if ref_root is None else Path(ref_root)
    if outputs is None:
        outputs = sorted(p.name for p in run_root.iterdir() if p.is_dir()) if run_root.exists() else []
    scopes = {out: "all" if profile == reference_profile(out) else "analytic" for out in outputs}
    scope = "all" if scopes and all(s == "all" for s in scopes.values()) else (
        "analytic" if all(s == "analytic" for s in scopes.values()) else "mixed")
    col = _Collector()
    for out in outputs:
        ref_dir, run_dir = ref_root / out, run_root / out
        if not ref_dir.exists():
            continue
        if (ref_dir / "checks.csv").exists():
            run_checks = _read(run_dir / "checks.csv") if (run_dir / "checks.csv").exists() else _read(ref_dir / "checks.csv").iloc[:0]
            _compare_checks(col, out, _read(ref_dir / "checks.csv"), run_checks, scopes[out])
        if scopes[out] != "all":
            continue
        for table in sorted(ref_dir.glob("*.csv")):
            if table.name == "checks.csv" or table.name in DERIVED_FILES:
                continue
            run_table = run_dir / table.name
            ref_df = _read(table)
            run_df = _read(run_table) if run_table.exists() else ref_df.iloc[:0]
            _compare_table(col, out, table.name, ref_df, run_df)
    frame = pd.DataFrame(col.rows, columns=RESULT_COLUMNS)
    return ReferenceCheck(frame, profile, scope, col.excluded, col.new_rows)


# ----------------------------------------------------------------------------------------------
# update
# ----------------------------------------------------------------------------------------------
MANIFEST = "run.json"


def _merge_timings(src: Path, dst: Path, papers: list[str], complete: bool) -> None:
    """Write the run's timings into ``dst``: all of them for a run of every paper; else, in each block of the
    table (sections, notebook totals), the run's papers' rows in place of their old rows (order kept), and the
    old wall-time row unchanged."""
    new = pd.read_csv(src, dtype=str, keep_default_na=False)  # text as written: no float-converted counts
    if dst.exists() and not complete:
        old = pd.read_csv(dst, dtype=str, keep_default_na=False)

        def block(df: pd.DataFrame, which: str) -> pd.DataFrame:
            total, wall = df["section"] == "(notebook total)", df["paper"] == "(all)"
            return df[{"sections": ~total & ~wall, "totals": total, "wall": wall}[which]]

        parts = []
        for which in ("sections", "totals"):
            o, n = block(old, which), block(new, which)
            for paper in o["paper"].drop_duplicates():
                parts.append(n[n["paper"] == paper] if paper in papers else o[o["paper"] == paper])
            parts.append(n[n["paper"].isin(papers) & ~n["paper"].isin(o["paper"])])
        new = pd.concat(parts + [block(old, "wall")], ignore_index=True)
    dst.parent.mkdir(parents=True, exist_ok=True)
    new.to_csv(dst, index=False)


def regenerate_derived(repo: Path, log: object = print) -> list[Path]:
    """Rewrite what ``repo`` derives from its committed frontier results (``paper_figures/frontier/``), after
    :func:`update_reference` has copied a scale run there; returns what was written.  Each file is rewritten where
    ``repo`` has one (its absence is logged):

    * ``lib/dpkernels/data/utility_calibration.csv``
      (:func:`dpkernels.experiments.utility_calibration.write_table`); a threshold other than
      :data:`dpkernels._validation.UTILITY_RATIO_THRESHOLD` is logged (the constant is a decision: change it by
      hand; ``tests/test_utility_warning.py`` fails until then);
    * ``paper_figures/recommend/offgrid.csv`` (:func:`dpkernels.experiments.frontier_offgrid.write_checks`, the
      committed off-grid runs against the new results); where recommend now names another mechanism it is logged
      and left as it was (rerun ``python -m dpkernels.experiments.frontier_offgrid``);
    * ``paper_figures/recommend/interval_coverage.csv`` (:func:`dpkernels.recommendation.coverage_table`).

    A step that fails on the new results (``ValueError``, ``LookupError``) is logged and leaves its file as it was;
    the other steps run (the copy is done by then: the tests fail on what stays stale).
    """
    from dpkernels._validation import UTILITY_RATIO_THRESHOLD
    from dpkernels.experiments import frontier_offgrid, utility_calibration
    from dpkernels.recommendation import COVERAGE_FILE, coverage_table

    repo = Path(repo)
    written: list[Path] = []
    calibration = repo / "lib" / "dpkernels" / "data" / utility_calibration.CALIBRATION_FILE
    folder = repo / "paper_figures" / "recommend"

    def calibrate() -> Path:
        _, threshold = utility_calibration.write_table(repo)
        if threshold != UTILITY_RATIO_THRESHOLD:
            log(f"the utility warning's calibrated threshold is now {threshold:g}, the constant "
                f"_validation.UTILITY_RATIO_THRESHOLD {UTILITY_RATIO_THRESHOLD:g}: decide and change it by hand")
        return calibration

    def coverage() -> Path:
        summary = pd.read_csv(repo / "paper_figures" / "frontier" / "summary.csv")
        coverage_table(summary).to_csv(folder / COVERAGE_FILE, index=False)
        return folder / COVERAGE_FILE

    steps = ((calibration, calibrate), (folder / "offgrid_runs.csv", lambda: frontier_offgrid.write_checks(repo)),
             (folder / COVERAGE_FILE, coverage))
    for needs, step in steps:
        if not needs.exists():  # a workbook without it (e.g. a test's) derives nothing there
            log(f"{needs.relative_to(repo)} is missing: not derived")
            continue
        try:
            written.append(step())
        except (ValueError, LookupError) as exc:  # logged, the rest derived: tests fail on what stays stale
            log(f"not derived (stale until fixed) from {needs.relative_to(repo)}: {exc}")
    return written


def update_reference(profile: str = REFERENCE_PROFILE, build_dir: Path | None = None, repo: Path | None = None,
                     log: object = print, papers_only: Sequence[str] | None = None) -> list[Path]:
    """Copy the last run at ``profile`` (``build/<profile>/``) into the tracked reference of ``repo`` (default: the
    workbook, :func:`dpkernels.workbook.find_root`); returns what was written.

    Full profile: each output folder the run wrote replaces ``paper_figures/<output>/``, each executed notebook
    replaces ``notebooks/<paper>.ipynb``, the run times are merged into ``benchmarks/results/timings_full.csv``
    (the wall-time row only from a run of every paper), what is derived from the frontier's results when they moved
    (:func:`regenerate_derived`) and, for a whole scale run, its row of ``benchmarks/results/scale_runs.csv``
    (:func:`dpkernels.scale_runs.add_run`), then ``paper_figures/REPORT.md`` and the prose
    (``README.md``, ``ERRATA.md``) are rebuilt from the tracked files.  Only the papers and outputs whose reference
    profile (:func:`reference_profile`) is ``profile`` are copied: ``scale`` copies the frontier, ``full`` the
    others.  Quick profile: only
    ``timings_quick.csv`` and the prose.  Refuses, before writing anything, a run that failed, whose notebooks hold
    progress frames, stray output or absolute paths (:func:`dpkernels.notebooks.notebook_problems`), or after which
    the prose would quote a blank or missing value (:class:`dpkernels.prose.UnresolvedReference`).
    ``papers_only``: copy only these papers' notebooks, their same-named output folders and run times (the old
    wall-time row kept), and check only their notebooks (e.g. one paper of a run whose other notebook is not clean).
    """
    import nbformat

    repo = find_root() if repo is None else Path(repo)
    build_dir = repo / "build" if build_dir is None else Path(build_dir)
    run_dir = build_dir / profile
    manifest_path = run_dir / MANIFEST
    if not manifest_path.exists():
        raise FileNotFoundError(f"no run to copy: {manifest_path} is missing (run `dpkernels reproduce --profile {profile}` first)")
    manifest = json.loads(manifest_path.read_text())
    failed = [p for p, ok in manifest["ok"].items() if not ok]
    if failed:
        raise RuntimeError(f"the run at {run_dir} has failed notebooks {failed}; the reference is not updated")
    papers = sorted(p for p in manifest["ok"] if reference_profile(p) == profile)
    outputs = [o for o in manifest["outputs"] if reference_profile(o) == profile]
    if papers_only is not None:  # only these papers' notebooks and same-named outputs; the wall-time row is kept
        unknown = sorted(set(papers_only) - set(papers))
        if unknown:
            raise RuntimeError(f"the run at {run_dir} has no paper {unknown} of profile {profile}; it ran {papers}")
        papers = sorted(papers_only)
        outputs = [o for o in outputs if o in papers]
    written: list[Path] = []
    if papers:
        problems = []
        for paper in papers:
            nb = nbformat.read(run_dir / "notebooks" / f"{paper}.ipynb", as_version=4)
            problems += [f"{paper}: {p}" for p in notebook_problems(nb, (str(repo), str(Path.home())))]
        if problems:
            raise RuntimeError("executed notebooks are not clean; the reference is not updated:\n  " + "\n  ".join(problems))
    # the prose as it will read: the copied outputs and the run's timings, the rest of the reference; a value only
    # another profile's run writes (e.g. the frontier's, at scale) may be missing: it reads n/a until that update,
    # and tests/test_prose.py fails until then
    try:
        gaps: list[Gap] = []
        render_texts([Source(run_dir, frozenset(outputs)), Source(repo)], templates=repo, gaps=gaps)
        _other_profiles_gaps(gaps, profile)
    except UnresolvedReference as exc:
        raise RuntimeError(f"the prose would quote a value this run does not have; the reference is not updated: {exc}") from None
    if papers:
        for out in outputs:
            src, dst = run_dir / "paper_figures" / out, repo / "paper_figures" / out
            if dst.exists():
                shutil.rmtree(dst)
            shutil.copytree(src, dst)
            written.append(dst)
        for paper in papers:
            dst = repo / "notebooks" / f"{paper}.ipynb"
            shutil.copyfile(run_dir / "notebooks" / f"{paper}.ipynb", dst)
            written.append(dst)
    timings = run_dir / "benchmarks" / "results" / f"timings_{profile}.csv"
    if timings.exists():
        dst = repo / "benchmarks" / "results" / f"timings_{profile}.csv"
        _merge_timings(timings, dst, sorted(manifest["ok"]) if papers_only is None else papers,
                       manifest.get("complete", False) and papers_only is None)
        written.append(dst)
    if papers and "frontier" in outputs:
        written += regenerate_derived(repo, log=log)
    if profile == "scale" and papers_only is None and manifest.get("complete", False):  # a whole scale run
        from dpkernels.scale_runs import add_run

        try:
            written.append(add_run(run_dir, repo, str(manifest.get("commit", "")), "copied by update-reference"))
        except ValueError as exc:
            log(f"benchmarks/results/scale_runs.csv: this run is not recorded: {exc}")
    if papers:
        written.append(build_report(repo / "paper_figures"))
    gaps = []
    written += render_prose(repo, gaps=gaps)
    for gap in _other_profiles_gaps(gaps, profile):
        log(f"n/a until `dpkernels update-reference --profile {reference_source_profile(gap.reference)}`: {gap}")
    for path in written:
        log(f"updated {Path(path).relative_to(repo)}")
    return written
