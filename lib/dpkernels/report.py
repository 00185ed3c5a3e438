"""Checks, tables and the paper-against-reproduction report.

Every notebook records its numeric checks with :class:`Checks` (one ``checks.csv`` per paper, columns
``paper, claim, check, bound, measured, status, detail``; status is ``holds``, ``violated`` or
``skipped``) and writes its tables with :func:`write_table` (long format with a ``source`` column,
``published`` or ``reproduced``, and a ``value`` column).  :func:`build_report` turns
``paper_figures/`` into ``paper_figures/REPORT.md``.
"""

from __future__ import annotations

import math
import numbers
import os
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

__all__ = [
    "CHECK_COLUMNS",
    "STATUSES",
    "Checks",
    "output_dir",
    "write_table",
    "build_report",
    "PAPER_TITLES",
]

CHECK_COLUMNS = ["paper", "claim", "check", "bound", "measured", "status", "detail"]
STATUSES = ("holds", "violated", "skipped")
TABLE_SOURCES = ("published", "reproduced")
#: Columns of a table CSV that are not keys when pairing published with reproduced rows.
VALUE_COLUMNS = ("source", "value", "std", "n_runs", "note")
REPO_ROOT = Path(__file__).resolve().parents[2]

PAPER_TITLES = {
    "rubinstein2012": "Rubinstein, Bartlett, Huang, Taft (2012): Learning in a large function space",
    "chaudhuri2011": "Chaudhuri, Monteleoni, Sarwate (2011): Differentially private ERM",
    "park2022": "Park (2022): DP multi-class classification with kernel supports and equilibrium points",
    "hall2013": "Hall, Rinaldo, Wasserman (2013): Differential privacy for functions",
    "bassily2022": "Bassily, Mohri, Suresh (2022): DP learning with margin guarantees",
}


def output_dir(paper: str) -> Path:
    """Where a notebook writes its figures and tables: ``$DPKERNELS_OUTPUT/<paper>`` or ``paper_figures/<paper>``."""
    base = Path(os.environ["DPKERNELS_OUTPUT"]) if os.environ.get("DPKERNELS_OUTPUT") else REPO_ROOT / "paper_figures"
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


@dataclass
class Checks:
    """The numeric checks of one paper, written to ``checks.csv``."""

    paper: str
    rows: list[dict[str, str]] = field(default_factory=list)

    def add(self, claim: str, check: str, *, bound: object, measured: object, status: str, detail: str = "") -> str:
        """Record a check with an explicit status (``holds``, ``violated`` or ``skipped``)."""
        if status not in STATUSES:
            raise ValueError(f"status must be one of {STATUSES}, got {status!r}")
        self.rows = [r for r in self.rows if not (r["claim"] == claim and r["check"] == check)]
        self.rows.append({"paper": self.paper, "claim": claim, "check": check, "bound": _fmt(bound),
                          "measured": _fmt(measured), "status": status, "detail": detail})
        return status

    def at_most(self, claim: str, check: str, *, bound: float, measured: float, detail: str = "", rtol: float = 0.0) -> str:
        """``holds`` when measured <= bound (a claimed upper bound), else ``violated``.

        ``rtol`` admits measured <= bound (1 + rtol) for bounds that are attained exactly, where the
        measurement carries floating-point or certified solver error; the caller states it in ``detail``.
        """
        ok = bool(np.isfinite(measured)) and measured <= bound * (1.0 + rtol)
        return self.add(claim, check, bound=bound, measured=measured, status="holds" if ok else "violated", detail=detail)

    def at_least(self, claim: str, check: str, *, bound: float, measured: float, detail: str = "") -> str:
        """``holds`` when measured >= bound (a claimed lower bound or separation), else ``violated``."""
        ok = bool(np.isfinite(measured)) and measured >= bound
        return self.add(claim, check, bound=bound, measured=measured, status="holds" if ok else "violated", detail=detail)

    def agrees(self, claim: str, check: str, *, expected: object, measured: object, ok: bool, detail: str = "") -> str:
        """``holds`` when ``ok`` (a comparison the caller made, e.g. within a stated tolerance)."""
        return self.add(claim, check, bound=expected, measured=measured, status="holds" if ok else "violated", detail=detail)

    def skip(self, claim: str, check: str, reason: str) -> str:
        return self.add(claim, check, bound="", measured="", status="skipped", detail=reason)

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
    out = output_dir(paper) if out is None else Path(out)
    path = out / f"{name}.csv"
    df.to_csv(path, index=False)
    return path


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
        lines.append("| " + " | ".join(esc("" if (isinstance(v, float) and math.isnan(v)) else v) for v in row) + " |")
    return "\n".join(lines) + "\n"


def _pair_table(df: pd.DataFrame) -> pd.DataFrame:
    """Published and reproduced values side by side, keyed on every non-value column."""
    keys = [c for c in df.columns if c not in VALUE_COLUMNS]
    df = df.copy()
    for k in keys:
        df[k] = df[k].astype(str)
    pub = df[df["source"] == "published"].set_index(keys)["value"].rename("published")
    rep_cols = df[df["source"] == "reproduced"].set_index(keys)
    rep = rep_cols["value"].rename("reproduced")
    out = pd.concat([pub, rep], axis=1)
    if "std" in rep_cols.columns:
        out["std"] = rep_cols["std"]
    out = out[out["published"].notna()]
    if out.empty:
        return out.reset_index()

    def diff(row: pd.Series) -> str:
        try:
            return _fmt(float(row["reproduced"]) - float(row["published"]))
        except (TypeError, ValueError):
            return ""

    out["reproduced - published"] = out.apply(diff, axis=1)
    return out.reset_index()


def build_report(root: Path | None = None) -> Path:
    """Write ``REPORT.md``: totals, then per paper every check and every published-vs-reproduced number."""
    root = REPO_ROOT / "paper_figures" if root is None else Path(root)
    papers = sorted(p for p in root.iterdir() if p.is_dir() and (p / "checks.csv").exists()) if root.exists() else []
    totals = []
    sections = []
    for pdir in papers:
        checks = pd.read_csv(pdir / "checks.csv", dtype=str, keep_default_na=False)
        counts = checks["status"].value_counts()
        tables = sorted(t for t in pdir.glob("*.csv") if t.name != "checks.csv")
        n_pairs = 0
        body = [f"## {PAPER_TITLES.get(pdir.name, pdir.name)}\n", f"### Checks ({len(checks)})\n",
                _md_table(checks.drop(columns=["paper"]))]
        for t in tables:
            df = pd.read_csv(t, keep_default_na=False, na_values=[""])
            if "source" not in df.columns or "value" not in df.columns:
                continue
            paired = _pair_table(df)
            n_pairs += len(paired)
            n_rep = int((df["source"] == "reproduced").sum())
            body.append(f"### {t.stem} ({len(paired)} published numbers with their reproduction; {n_rep} reproduced rows in `{t.name}`)\n")
            body.append(_md_table(paired))
        figs = sorted(f.name for f in pdir.glob("*.png"))
        if figs:
            body.append("### Figures\n")
            body.append("\n".join(f"- [{f}]({pdir.name}/{f})" for f in figs) + "\n")
        totals.append({"paper": pdir.name, "checks": len(checks), "holds": int(counts.get("holds", 0)),
                       "violated": int(counts.get("violated", 0)), "skipped": int(counts.get("skipped", 0)),
                       "published numbers compared": n_pairs, "figures": len(figs)})
        sections.append("\n".join(body))
    tot = pd.DataFrame(totals)
    head = ["# Paper against reproduction\n",
            "Generated by `dpkernels report` from the files in this folder. A check is `violated` when the "
            "measured number contradicts the paper's claim; each one is explained in ../ERRATA.md.\n",
            "## Totals\n", _md_table(tot)]
    if not tot.empty:
        head.append(f"\nAll papers: {int(tot['checks'].sum())} checks, {int(tot['holds'].sum())} hold, "
                    f"{int(tot['violated'].sum())} violated, {int(tot['skipped'].sum())} skipped; "
                    f"{int(tot['published numbers compared'].sum())} published numbers compared.\n")
    text = "\n".join(head) + "\n" + "\n\n".join(sections)
    path = root / "REPORT.md"
    root.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path
