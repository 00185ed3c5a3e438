"""Checks, tables, the paper-against-reproduction report, and prose that quotes outputs.

Checks.  Every notebook records its numeric checks with :class:`Checks` (one ``checks.csv`` per paper, columns
``paper, id, claim, check, kind, bound, measured, status, detail``).  ``status`` is ``holds``, ``violated`` or
``skipped``, computed by a criterion of :mod:`dpkernels.verdicts`.  ``kind`` says what the row is worth:

* ``measured``: a simulation, a solve or an audit set against a claim (the only kind that confirms a claim);
* ``analytic``: a derivation from the paper's own formulas (a calculator against a calculator);
* ``consistency``: true by construction (a closed form's slope, a norm after clipping, identical errors under
  common random numbers); never counted as a confirmation;
* ``target``: our own speed or quality targets, not a claim of the paper.

Tables.  :func:`write_table` writes long tables with a ``source`` column (``published`` or ``reproduced``), a
``value`` column and, for reproduced means, ``se`` (standard error), ``sd`` (per-run standard deviation) and
``n_runs``; a published row may carry ``n_runs`` (the paper's number of runs) or ``se``, and either row an
``errata`` id that explains a difference.  :func:`compare_table` pairs them and classifies each published number
(:mod:`dpkernels.verdicts`).  :func:`build_report` turns ``paper_figures/`` into ``paper_figures/REPORT.md``.

Prose.  ``ERRATA.md`` and ``README.md`` are rendered from ``docs/*.md`` templates by :func:`render_template`:
every number they quote is a reference to an output file (see :func:`resolve_reference`), so it cannot go stale;
``tests/test_prose.py`` fails when a rendered file differs from its template's rendering.
"""

from __future__ import annotations

import hashlib
import json
import math
import numbers
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Sequence

import numpy as np
import pandas as pd

from dpkernels import verdicts

__all__ = [
    "CHECK_COLUMNS",
    "STATUSES",
    "KINDS",
    "Checks",
    "Verdict",
    "output_dir",
    "BUILD_DIR",
    "write_table",
    "compare_table",
    "build_report",
    "render_template",
    "resolve_reference",
    "stable_text",
    "PAPER_TITLES",
]

CHECK_COLUMNS = ["paper", "id", "claim", "check", "kind", "bound", "measured", "status", "detail"]
STATUSES = verdicts.STATUSES
KINDS = ("measured", "analytic", "consistency", "target")
TABLE_SOURCES = ("published", "reproduced")
#: Columns of a table CSV that are not keys when pairing published with reproduced rows.
VALUE_COLUMNS = ("source", "value", "se", "sd", "n_runs", "note", "errata")
REPO_ROOT = Path(__file__).resolve().parents[2]

PAPER_TITLES = {
    "rubinstein2012": "Rubinstein, Bartlett, Huang, Taft (2012): Learning in a large function space",
    "chaudhuri2011": "Chaudhuri, Monteleoni, Sarwate (2011): Differentially private ERM",
    "park2022": "Park (2022): DP multi-class classification with kernel supports and equilibrium points",
    "hall2013": "Hall, Rinaldo, Wasserman (2013): Differential privacy for functions",
    "bassily2022": "Bassily, Mohri, Suresh (2022): DP learning with margin guarantees",
    "frontier": "Which mechanism? A cross-paper privacy-utility frontier at equal end-to-end privacy cost",
    "diffprivlib": "diffprivlib 0.6.6, the maintained peer (findings about it, not about a paper; from notebooks/chaudhuri2011)",
}


BUILD_DIR = REPO_ROOT / "build"
_session_profile: str | None = None


def output_dir(paper: str, profile: str | None = None) -> Path:
    """Where a notebook writes its figures and tables: ``$DPKERNELS_OUTPUT/<paper>`` when set (the runner and
    ``make test`` set it), else ``build/<profile>/paper_figures/<paper>``: never the committed reference
    ``paper_figures/``, which only ``dpkernels update-reference`` rewrites.

    ``profile``: the notebook's profile parameter; a call without one uses ``$DPKERNELS_PROFILE_OVERRIDE``,
    ``$DPKERNELS_PROFILE``, the profile of an earlier call in this session (a notebook passes it once, then
    :func:`write_table` and :meth:`Checks.write` follow), else ``quick`` (the notebooks' default).
    """
    global _session_profile
    if profile is not None:
        _session_profile = profile
    if os.environ.get("DPKERNELS_OUTPUT"):
        base = Path(os.environ["DPKERNELS_OUTPUT"])
    else:
        name = (profile or os.environ.get("DPKERNELS_PROFILE_OVERRIDE") or os.environ.get("DPKERNELS_PROFILE")
                or _session_profile or "quick")
        base = BUILD_DIR / name / "paper_figures"
    out = base / paper
    out.mkdir(parents=True, exist_ok=True)
    return out


def _fmt(x: object) -> str:
    if x is None:
        return ""
    if isinstance(x, (bool, np.bool_)):
        return str(bool(x))
    if isinstance(x, numbers.Integral):
        return str(int(x))
    if isinstance(x, numbers.Real):
        v = float(x)
        if math.isnan(v):
            return "nan"
        if math.isinf(v):
            return "inf" if v > 0 else "-inf"
        return f"{v:.6g}"
    return str(x)


def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")


@dataclass(frozen=True)
class Verdict:
    """One check as the reader sees it right after the cell that made it."""

    claim: str
    check: str
    kind: str
    bound: str
    measured: str
    status: str
    detail: str = ""

    def __str__(self) -> str:
        mark = {"holds": "HOLDS", "violated": "VIOLATED", "inconclusive": "INCONCLUSIVE", "skipped": "SKIPPED"}[self.status]
        text = f"[{mark}] {self.claim} ({self.kind}): {self.check}\n    bound {self.bound} | measured {self.measured}"
        return text + (f"\n    {self.detail}" if self.detail else "")

    __repr__ = __str__

    def _repr_markdown_(self) -> str:
        mark = {"holds": "**holds**", "violated": "**VIOLATED**", "inconclusive": "*inconclusive*", "skipped": "*skipped*"}[self.status]
        detail = f"<br>{self.detail}" if self.detail else ""
        return (f"{mark} &nbsp; {self.claim} ({self.kind}): {self.check}<br>bound `{self.bound}` &nbsp; measured "
                f"`{self.measured}`{detail}")

    def __eq__(self, other: object) -> bool:  # compares with a status string as well
        if isinstance(other, str):
            return self.status == other
        return super().__eq__(other)

    __hash__ = object.__hash__


@dataclass
class Checks:
    """The numeric checks of one paper, written to ``checks.csv``.

    Every method needs ``kind`` (see the module docstring) and returns a :class:`Verdict`, which a notebook cell
    shows.  ``id`` is the row's stable name for references from ERRATA.md (default: a slug of the claim plus a
    hash of the check's text).
    """

    paper: str
    rows: list[dict[str, str]] = field(default_factory=list)
    _shown: int = field(default=0, repr=False)

    def show_new(self) -> None:
        """Print the verdict of every row recorded since the last call: a notebook shows each verdict right after
        the cells that made it."""
        for r in self.rows[self._shown:]:
            print(Verdict(r["claim"], r["check"], r["kind"], r["bound"], r["measured"], r["status"], r["detail"]))
        self._shown = len(self.rows)

    def add(self, claim: str, check: str, *, kind: str, bound: object, measured: object, status: str,
            detail: str = "", id: str | None = None) -> Verdict:
        """Record a check with an explicit status (``holds``, ``violated``, ``inconclusive`` or ``skipped``)."""
        if status not in STATUSES:
            raise ValueError(f"status must be one of {STATUSES}, got {status!r}")
        if kind not in KINDS:
            raise ValueError(f"kind must be one of {KINDS}, got {kind!r}")
        rid = id or f"{_slug(claim)}-{hashlib.sha1(check.encode()).hexdigest()[:6]}"
        self.rows = [r for r in self.rows if r["id"] != rid and not (r["claim"] == claim and r["check"] == check)]
        row = {"paper": self.paper, "id": rid, "claim": claim, "check": check, "kind": kind, "bound": _fmt(bound),
               "measured": _fmt(measured), "status": status, "detail": detail}
        self.rows.append(row)
        return Verdict(claim, check, kind, row["bound"], row["measured"], status, detail)

    def at_most(self, claim: str, check: str, *, kind: str, bound: float, measured: float, detail: str = "",
                rtol: float = 0.0, id: str | None = None) -> Verdict:
        """``holds`` when measured <= bound (1 + rtol) (:func:`dpkernels.verdicts.at_most`).

        ``rtol`` admits bounds that are attained exactly, where the measurement carries floating-point or certified
        solver error; the caller states it in ``detail``.
        """
        return self.add(claim, check, kind=kind, bound=bound, measured=measured,
                        status=verdicts.status(verdicts.at_most(measured, bound, rtol)), detail=detail, id=id)

    def at_least(self, claim: str, check: str, *, kind: str, bound: float, measured: float, detail: str = "",
                 id: str | None = None) -> Verdict:
        """``holds`` when measured >= bound (:func:`dpkernels.verdicts.at_least`)."""
        return self.add(claim, check, kind=kind, bound=bound, measured=measured,
                        status=verdicts.status(verdicts.at_least(measured, bound)), detail=detail, id=id)

    def agrees(self, claim: str, check: str, *, kind: str, expected: object, measured: object, ok: bool,
               detail: str = "", id: str | None = None) -> Verdict:
        """``holds`` when ``ok``, a comparison computed by a criterion of :mod:`dpkernels.verdicts` or the caller's
        stated tolerance."""
        return self.add(claim, check, kind=kind, bound=expected, measured=measured, status=verdicts.status(bool(ok)),
                        detail=detail, id=id)

    def record(self, claim: str, check: str, outcome: verdicts.Outcome, *, kind: str, bound: object,
               measured: object = None, detail: str = "", id: str | None = None) -> Verdict:
        """Record a three-valued verdict (:class:`dpkernels.verdicts.Outcome`); its criterion, with the numbers it
        used, goes into ``detail`` so that the reader sees it beside the verdict.  ``measured`` defaults to the
        outcome's estimate."""
        measured = outcome.estimate if measured is None else measured
        text = outcome.criterion + (f"; {detail}" if detail else "")
        return self.add(claim, check, kind=kind, bound=bound, measured=measured, status=outcome.status, detail=text,
                        id=id)

    def skip(self, claim: str, check: str, reason: str, *, kind: str = "measured", id: str | None = None) -> Verdict:
        return self.add(claim, check, kind=kind, bound="", measured="", status="skipped", detail=reason, id=id)

    def frame(self) -> pd.DataFrame:
        return pd.DataFrame(self.rows, columns=CHECK_COLUMNS)

    def summary(self) -> dict[str, int]:
        counts = {s: 0 for s in STATUSES}
        for r in self.rows:
            counts[r["status"]] += 1
        return counts

    def write(self, out: Path | None = None) -> Path:
        out = output_dir(self.paper) if out is None else Path(out)
        out.mkdir(parents=True, exist_ok=True)
        path = out / "checks.csv"
        ids = [r["id"] for r in self.rows]
        dup = sorted({i for i in ids if ids.count(i) > 1})
        if dup:
            raise ValueError(f"duplicate check ids: {dup}")
        self.frame().to_csv(path, index=False)
        return path


def write_table(df: pd.DataFrame, name: str, paper: str, out: Path | None = None) -> Path:
    """Write a table CSV named after the paper's numbering, requiring ``source`` and ``value`` columns."""
    missing = {"source", "value"} - set(df.columns)
    if missing:
        raise ValueError(f"table {name} lacks the columns {sorted(missing)}")
    bad = set(df["source"]) - set(TABLE_SOURCES)
    if bad:
        raise ValueError(f"table {name}: source must be one of {TABLE_SOURCES}, found {sorted(bad)}")
    rep = df[df["source"] == "reproduced"]
    if len(rep) and "se" not in df.columns:
        raise ValueError(f"table {name}: reproduced values need an 'se' column (standard error; 0 for exact numbers)")
    out = output_dir(paper) if out is None else Path(out)
    path = out / f"{name}.csv"
    df.to_csv(path, index=False)
    return path


def compare_table(df: pd.DataFrame) -> pd.DataFrame:
    """Published numbers with their reproduction, z and class (keyed on every non-value column).

    se of the published mean: its ``se`` column if given, else :func:`dpkernels.verdicts.published_se` from the
    reproduced ``sd`` and the published ``n_runs`` (the stated assumption), else 0.  Only published numbers with a
    paired reproduction appear.
    """
    keys = [c for c in df.columns if c not in VALUE_COLUMNS]
    df = df.copy()
    for k in keys:
        df[k] = df[k].astype(str)
    for c in ("se", "sd", "n_runs", "errata"):
        if c not in df.columns:
            df[c] = np.nan
    pub = df[df["source"] == "published"].set_index(keys)
    rep = df[df["source"] == "reproduced"].set_index(keys)
    common = pub.index.intersection(rep.index)
    rows = []
    for key in common:
        p, r = pub.loc[key], rep.loc[key]
        if isinstance(p, pd.DataFrame) or isinstance(r, pd.DataFrame):
            raise ValueError(f"duplicate table key {key}")
        try:
            pv, rv = float(p["value"]), float(r["value"])
        except (TypeError, ValueError):
            continue
        if not (np.isfinite(pv) and np.isfinite(rv)):
            continue
        se_r = float(r["se"]) if pd.notna(r["se"]) else 0.0
        if pd.notna(p["se"]):
            se_p = float(p["se"])
        else:
            sd = float(r["sd"]) if pd.notna(r["sd"]) else float("nan")
            n_p = float(p["n_runs"]) if pd.notna(p["n_runs"]) else None
            se_p = verdicts.published_se(sd, n_p) if np.isfinite(sd) else 0.0
        errata = next((str(v) for v in (r["errata"], p["errata"]) if isinstance(v, str) and v), None)
        c = verdicts.compare(pv, rv, se_r, se_p, explained=errata)
        rows.append({**dict(zip(keys, key if isinstance(key, tuple) else (key,))), "published": pv, "reproduced": rv,
                     "se_reproduced": se_r, "se_published": se_p, "z": c.z, "class": c.cls})
    return pd.DataFrame(rows, columns=keys + ["published", "reproduced", "se_reproduced", "se_published", "z", "class"])


def stable_text(df: pd.DataFrame | pd.Series, digits: int = 3) -> str:
    """Text of a table that is identical on any machine and BLAS: numbers rounded to ``digits`` significant
    digits, no signed zeros.  For ``# NBVAL_CHECK_OUTPUT`` cells (quantities that are exact to far more than
    ``digits`` digits; a Monte Carlo number never belongs in such a cell)."""

    def fmt(v: object) -> str:
        if isinstance(v, (bool, np.bool_)):
            return str(bool(v))
        if isinstance(v, numbers.Integral):
            return str(int(v))
        if isinstance(v, numbers.Real):
            x = float(v)
            if not np.isfinite(x):
                return str(x)
            out = f"{x:.{digits}g}"
            return "0" if float(out) == 0.0 else out
        return str(v)

    frame = df.to_frame() if isinstance(df, pd.Series) else df
    return frame.map(fmt).to_string(index=False)


# ----------------------------------------------------------------------------------------------
# REPORT.md
# ----------------------------------------------------------------------------------------------
def _md_table(df: pd.DataFrame) -> str:
    if df.empty:
        return "_(none)_\n"
    cols = list(df.columns)
    esc = lambda v: str(v).replace("|", "\\|").replace("\n", " ")  # noqa: E731
    lines = ["| " + " | ".join(map(esc, cols)) + " |", "|" + "---|" * len(cols)]
    for _, row in df.iterrows():
        cells = []
        for v in row:
            if isinstance(v, float):
                cells.append("" if math.isnan(v) else _fmt(v))
            else:
                cells.append(esc(v))
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def build_report(root: Path | None = None) -> Path:
    """Write ``REPORT.md``: totals, unexplained differences, then per paper every check and every published number;
    and ``totals.csv``, the totals table alone (quoted by the README)."""
    root = REPO_ROOT / "paper_figures" if root is None else Path(root)
    papers = sorted(p for p in root.iterdir() if p.is_dir() and (p / "checks.csv").exists()) if root.exists() else []
    totals, sections, unexplained = [], [], []
    for pdir in papers:
        checks = pd.read_csv(pdir / "checks.csv", dtype=str, keep_default_na=False)
        if "kind" not in checks.columns:
            raise ValueError(f"{pdir / 'checks.csv'} has no 'kind' column")
        meas = checks[checks["kind"] == "measured"]["status"].value_counts()
        other = {k: int((checks["kind"] == k).sum()) for k in ("analytic", "consistency", "target")}
        tables = sorted(t for t in pdir.glob("*.csv") if t.name != "checks.csv")
        n_pairs, n_unpaired, classes = 0, 0, {"agrees": 0, "explained": 0, "unexplained": 0}
        body = [f"## {PAPER_TITLES.get(pdir.name, pdir.name)}\n"]
        for kind in KINDS:
            part = checks[checks["kind"] == kind]
            if part.empty:
                continue
            body.append(f"### Checks: {kind} ({len(part)})\n")
            body.append(_md_table(part.drop(columns=["paper", "kind"])))
        for t in tables:
            df = pd.read_csv(t, keep_default_na=False, na_values=[""])
            if "source" not in df.columns or "value" not in df.columns or not (df["source"] == "published").any():
                continue
            paired = compare_table(df)
            published = pd.to_numeric(df.loc[df["source"] == "published", "value"], errors="coerce")
            n_unpaired += int(np.isfinite(published).sum()) - len(paired)
            if paired.empty:
                continue
            n_pairs += len(paired)
            classes["agrees"] += int((paired["class"] == "agrees").sum())
            classes["explained"] += int(paired["class"].str.startswith("differs, explained").sum())
            bad = paired[paired["class"] == "differs, unexplained"]
            classes["unexplained"] += len(bad)
            for _, r in bad.iterrows():
                keys = ", ".join(f"{k}={r[k]}" for k in paired.columns[: list(paired.columns).index("published")])
                unexplained.append({"paper": pdir.name, "table": t.stem, "entry": keys, "published": r["published"],
                                    "reproduced": r["reproduced"], "z": r["z"]})
            body.append(f"### {t.stem}: {len(paired)} published numbers with their reproduction\n")
            body.append(_md_table(paired))
        figs = sorted(f.name for f in pdir.glob("*.png"))
        if figs:
            body.append("### Figures\n")
            body.append("\n".join(f"- [{f}]({pdir.name}/{f})" for f in figs) + "\n")
        totals.append({"paper": pdir.name, "claims measured": int(meas.sum()), "hold": int(meas.get("holds", 0)),
                       "violated": int(meas.get("violated", 0)), "skipped": int(meas.get("skipped", 0)),
                       "analytic": other["analytic"], "consistency": other["consistency"], "targets": other["target"],
                       "published numbers paired": n_pairs, "agree": classes["agrees"],
                       "differ, explained": classes["explained"], "differ, unexplained": classes["unexplained"],
                       "published numbers not reproduced": n_unpaired, "figures": len(figs)})
        sections.append("\n".join(body))
    tot = pd.DataFrame(totals)
    head = ["# Paper against reproduction\n",
            "Generated by `dpkernels report` from the files in this folder. Only `measured` checks (a simulation, a "
            "solve or an audit set against a claim) count as checks of a claim; `analytic` rows compare the paper's "
            "formulas with our derivation, `consistency` rows are true by construction, `targets` are our own. A "
            "check is `violated` when the measurement contradicts the claim; each is explained in ../ERRATA.md. "
            "Published numbers are compared with their reproduction through the standard error of the difference "
            f"(|z| <= {verdicts.Z_AGREE:g}: agrees; see `dpkernels.verdicts`).\n",
            "## Totals\n", _md_table(tot)]
    if not tot.empty:
        head.append(f"\nAll papers: {int(tot['claims measured'].sum())} measured checks of claims "
                    f"({int(tot['hold'].sum())} hold, {int(tot['violated'].sum())} violated, {int(tot['skipped'].sum())} skipped); "
                    f"{int(tot['analytic'].sum())} analytic, {int(tot['consistency'].sum())} consistency, "
                    f"{int(tot['targets'].sum())} target rows; {int(tot['published numbers paired'].sum())} published numbers "
                    f"paired with a reproduction ({int(tot['agree'].sum())} agree, {int(tot['differ, explained'].sum())} differ "
                    f"with an explanation, {int(tot['differ, unexplained'].sum())} differ without one); "
                    f"{int(tot['published numbers not reproduced'].sum())} published numbers have no reproduction (a setting "
                    "the profile does not run, or data we do not have: each notebook says which).\n")
    head.append("## Differences we cannot explain\n")
    head.append(_md_table(pd.DataFrame(unexplained, columns=["paper", "table", "entry", "published", "reproduced", "z"])))
    text = "\n".join(head) + "\n" + "\n\n".join(sections)
    path = root / "REPORT.md"
    root.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    tot.to_csv(root / "totals.csv", index=False)  # the totals the README quotes
    return path


# ----------------------------------------------------------------------------------------------
# prose that quotes outputs
# ----------------------------------------------------------------------------------------------
_REF = re.compile(r"\{\{\s*([^{}]+?)\s*\}\}")


def _source_file(body: str) -> str:
    """The file a reference's source reads, relative to a root."""
    if ".csv" in body:
        return body.partition("?")[0]
    if ".json" in body:
        return body.partition("#")[0]
    if ":" in body:
        return f"paper_figures/{body.split(':', 1)[0]}/checks.csv"
    raise KeyError(f"cannot resolve {body!r}")


def _lookup(body: str, root: Path) -> object:
    if ".csv" in body:
        path, _, rest = body.partition("?")
        sel, _, col = rest.rpartition("#")
        df = pd.read_csv(root / path, dtype=str, keep_default_na=False)
        for cond in filter(None, sel.split("&")):
            k, _, v = cond.partition("=")
            df = df[df[k] == v]
        if len(df) != 1:
            raise KeyError(f"{path}?{sel} matches {len(df)} rows")
        return df.iloc[0][col]
    if ".json" in body:
        path, _, keys = body.partition("#")
        value = json.loads((root / path).read_text())
        for k in keys.split("."):
            value = value[int(k)] if isinstance(value, list) else value[k]
        return value
    paper, rest = body.split(":", 1)
    rid, _, col = rest.rpartition(".")
    df = pd.read_csv(root / "paper_figures" / paper / "checks.csv", dtype=str, keep_default_na=False)
    hit = df[df["id"] == rid]
    if len(hit) != 1:
        raise KeyError(f"{paper}/checks.csv has {len(hit)} rows with id {rid!r}")
    return hit.iloc[0][col]


def _roots(root: Path | Sequence[Path] | None) -> list[Path]:
    if root is None:
        return [REPO_ROOT]
    if isinstance(root, (str, Path)):
        return [Path(root)]
    return [Path(r) for r in root]


def resolve_reference(ref: str, root: Path | Sequence[Path] | None = None) -> str:
    """The text of one reference ``{{ <source> | <format> }}`` of a prose template (the format is optional).

    Sources:

    * ``<paper>:<check id>.<column>``: a cell of ``paper_figures/<paper>/checks.csv``;
    * ``<path>.csv?<col>=<value>&...#<column>``: a cell of any CSV under the repository, selected by equality on
      columns (exactly one row must match);
    * ``<path>.json#<key>.<key>...``: a value of a JSON file.

    ``root``: the folder the paths are relative to (default: the repository), or a list of such folders searched
    in order (a run's ``build/<profile>/`` first, then the repository for what the run did not produce: a file
    or a row it lacks).  The format is a Python format spec (e.g. ``.3f``); numbers stored as text are converted first.
    """
    roots = _roots(root)
    body, _, fmt = (part.strip() for part in ref.partition("|"))
    found = [r for r in roots if (r / _source_file(body)).exists()] or roots[-1:]
    for i, r in enumerate(found):
        try:
            value = _lookup(body, r)
            break
        except KeyError:  # not in this root: the next one (a run's outputs, then the reference)
            if i == len(found) - 1:
                raise
    if fmt:
        try:
            return format(float(value), fmt)
        except (TypeError, ValueError):
            return format(value, fmt)
    return str(value)


def render_template(text: str, root: Path | Sequence[Path] | None = None) -> str:
    """Replace every ``{{ reference }}`` (:func:`resolve_reference`) in ``text``."""
    return _REF.sub(lambda m: resolve_reference(m.group(1), root), text)
