"""Checks, tables, the paper-against-reproduction report, and prose that quotes outputs.

Checks.  Every notebook records its numeric checks with :class:`Checks` (one ``checks.csv`` per paper, columns
``paper, id, claim, check, kind, bound, measured, status, detail``).  ``status`` is ``holds`` (confirmed),
``violated`` (refuted), ``inconclusive`` (neither) or ``skipped`` (could not run), computed by a criterion of
:mod:`dpkernels.verdicts` whose text is kept in ``detail``.  ``kind`` says what the row is worth:

* ``measured``: a simulation, a solve or an audit set against a claim (the only kind that confirms a claim);
* ``analytic``: a derivation from the paper's own formulas (a calculator against a calculator);
* ``consistency``: true by construction (a closed form's slope, a norm after clipping, identical errors under
  common random numbers); never counted as a confirmation;
* ``target``: our own speed or quality targets, not a claim of the paper.

Tables.  :func:`write_table` writes long tables with a ``source`` column (``published`` or ``reproduced``), a
``value`` column and, for reproduced means, ``se`` (standard error), ``sd`` (per-run standard deviation) and
``n_runs``; a published row may carry ``n_runs`` (the paper's number of runs) or ``se``.  Either row may carry:

* ``errata``: an ERRATA id that is a *candidate* explanation of a difference.  It explains the number only when the
  paper's ``hypotheses.csv`` (:func:`write_hypotheses`) has that id accepted for the row's data set (the table's
  ``dataset`` column; a table without one has no data set and nothing in it is explained);
* ``class_override``: ``not comparable`` (e.g. a timing from another machine), ``input`` (a size, a generator
  default: something we set to match, not a result) or ``fitted`` (a number a reading rule was chosen on: its
  agreement is what the rule selected for, not evidence), with the reason in ``note``; none counts as an agreement or
  an explanation;
* ``min_effect``: the smallest difference the comparison must be able to see (its power against it, by
  :func:`dpkernels.verdicts.compare`, at least 0.8, else ``inconclusive (too noisy)``), the paper's own where it
  states one, else ours (the table's note says which).

:func:`compare_table` pairs them and classifies each published number (:data:`CLASSES`).  :func:`build_report` turns
``paper_figures/`` into ``paper_figures/REPORT.md`` and ``paper_figures/totals.csv``: per paper the verdicts of its
checks by kind (:func:`check_counts`) and its published numbers by class, and every unexplained number with the
hypotheses tried for its data set.

Prose.  ``ERRATA.md`` and ``README.md`` quote these files through references rendered by :mod:`dpkernels.prose`.
"""

from __future__ import annotations

import hashlib
import math
import numbers
import os
import re
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from dpkernels import verdicts

__all__ = [
    "CHECK_COLUMNS",
    "STATUSES",
    "KINDS",
    "CLASSES",
    "HYPOTHESIS_COLUMNS",
    "HYPOTHESIS_OPTIONAL",
    "NUMBER_KINDS",
    "BELOW_MIN_EFFECT",
    "BELOW_MIN_EFFECT_NOTABLE",
    "NOTABLE_RELATIVE",
    "relative_difference",
    "FITTED_DIFFERS",
    "REPEATED",
    "REPEAT_KEYS",
    "repeated_numbers",
    "below_min_effect",
    "number_kind",
    "in_scope",
    "Checks",
    "Verdict",
    "check_counts",
    "output_dir",
    "BUILD_DIR",
    "write_table",
    "write_hypotheses",
    "read_hypotheses",
    "accepted_explanations",
    "compare_table",
    "build_report",
    "stable_text",
    "PAPER_TITLES",
]

CHECK_COLUMNS = ["paper", "id", "claim", "check", "kind", "bound", "measured", "status", "detail"]
STATUSES = verdicts.STATUSES
KINDS = ("measured", "analytic", "consistency", "target")
TABLE_SOURCES = ("published", "reproduced")
#: Columns of a table CSV that are not keys when pairing published with reproduced rows.
VALUE_COLUMNS = ("source", "value", "se", "sd", "n_runs", "note", "errata", "class_override", "min_effect")
#: The class of a difference a tested hypothesis accounts for, without its id (written ``consistent with <id>``).
CONSISTENT = "consistent with a hypothesis"
#: Classes of a published number.
CLASSES = ("agrees", verdicts.TOO_NOISY, "fitted", CONSISTENT, "differs, unexplained", "not comparable", "input")
#: Classes a table row may impose (with its reason in ``note``): neither an agreement nor an explanation.
OVERRIDE_CLASSES = ("not comparable", "input", "fitted")
#: What a published number measures (:func:`number_kind`): informative agreements are counted per kind.
NUMBER_KINDS = ("non-private", "private, eps <= 0.1", "private, eps > 0.1", "other")
#: Largest epsilon counted as "small" in :data:`NUMBER_KINDS`.
EPS_SMALL = 0.1
#: Columns of ``hypotheses.csv``: an ERRATA id, the data set it was tested on, what was tested (in words), the number
#: the test produced (e.g. ``max |z|``), whether the test accepts the hypothesis for that data set, what it concluded
#: (:data:`dpkernels.verdicts.HYPOTHESIS_OUTCOMES`: a hypothesis not accepted is rejected only where its test rejects
#: it) and details.
HYPOTHESIS_COLUMNS = ["hypothesis", "dataset", "test", "statistic", "accepted", "outcome", "detail"]
#: Optional columns of ``hypotheses.csv``: ``scope`` (which published numbers the hypothesis bears on, see
#: :func:`in_scope`; empty: every number of its data set), ``power`` (of its test against the stated alternative),
#: ``false_acceptance`` (its acceptance rate on data simulated without the effect), ``untested`` (a scope of the
#: numbers it bears on that its test left out, empty: none; REPORT says so beside them) and ``known`` (a scope of the
#: numbers whose fit under the hypothesis was known when it was registered: its acceptance is no evidence for them, so
#: it explains none of them, :func:`compare_table`; REPORT says so beside them).
HYPOTHESIS_OPTIONAL = ["scope", "power", "false_acceptance", "untested", "known"]
REPO_ROOT = Path(__file__).resolve().parents[2]

PAPER_TITLES = {
    "rubinstein2012": "Rubinstein, Bartlett, Huang, Taft (2012): Learning in a large function space",
    "chaudhuri2011": "Chaudhuri, Monteleoni, Sarwate (2011): Differentially private ERM",
    "park2022": "Park (2022): DP multi-class classification with kernel supports and equilibrium points",
    "hall2013": "Hall, Rinaldo, Wasserman (2013): Differential privacy for functions",
    "bassily2022": "Bassily, Mohri, Suresh (2022): DP learning with margin guarantees",
    "frontier": "Which mechanism? A cross-paper privacy-utility frontier at equal end-to-end privacy cost",
    "yu2020": "Yu, Zhang, Chen, Yin, Liu (2020): Gradient perturbation is underrated (Table 2, with our gradient estimators)",
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
        detail = detail + _slack(status, kind, bound, measured, detail)
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
        """Rows per status (all kinds)."""
        counts = {s: 0 for s in STATUSES}
        for r in self.rows:
            counts[r["status"]] += 1
        return counts

    def counts(self) -> pd.DataFrame:
        """Rows per kind (index) and status (columns), as ``totals.csv`` and the README count them
        (:func:`check_counts`)."""
        c = check_counts(self.frame())
        return pd.DataFrame([[c[f"{k} {s}"] for s in STATUSES] for k in KINDS], index=list(KINDS), columns=list(STATUSES))

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


def _factor(x: float) -> str:
    """A factor above 1 in 3 significant digits, or to 4 decimals where those would round it to 1."""
    return f"{x:.3g}" if f"{x:.3g}" != "1" else f"{x:.4f}"


def _slack(status: str, kind: str, bound: object, measured: object, detail: str) -> str:
    """How loose a confirmed bound is (issue 28, item 5): for a ``holds`` of a measured or analytic check whose
    bound and measurement are numbers with 0 <= measured <= bound, the ratio measured / bound and what the check could
    detect: below 1/2 a note that it could only have failed by a violation of bound / measured times what was
    measured ("loose"), from 1/2 up the same factor as the smallest violation that would show.  A ``holds`` with
    measured at least twice a positive bound is a lower bound met with room (an upper bound cannot hold there: the
    largest relative tolerance of an upper-bound check is 1e-6), and says so ("loose lower bound", referee L4:
    Theorem 26's 514.7 against 1); between 1 and 2 times the bound the row may be either kind and gets no note."""
    if status != "holds" or kind not in ("measured", "analytic") or "measured / bound" in detail or "strength:" in detail:
        return ""
    try:
        b, m = float(bound), float(measured)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return ""
    if not (np.isfinite(b) and np.isfinite(m)) or b <= 0 or m < 0:
        return ""
    if m > b:
        r = m / b
        return "" if r < 2 else (f"{'; ' if detail else ''}measured / bound = {r:.3g} (loose lower bound: the check "
                                 f"could only fail if the truth were below 1/{r:.3g} of what was measured)")
    r = m / b
    note = (f" (loose: {1 / r:.3g}x; the check could only fail if the truth were that far beyond what was measured)"
            if 0 < r < 0.5 else f" (it would fail at {_factor(1 / r)}x what was measured)" if 0.5 <= r < 1
            else " (nothing observed against the bound: the criterion says what the check could detect)" if r == 0
            else " (measured at the bound)")
    return f"{'; ' if detail else ''}measured / bound = {r:.3g}{note}"


def check_counts(checks: pd.DataFrame) -> dict[str, int]:
    """Rows of a ``checks.csv`` frame per kind and status, keyed ``"<kind> <status>"`` (every pair present, 0 when
    none), plus ``"<kind>"`` totals."""
    out: dict[str, int] = {}
    for k in KINDS:
        part = checks[checks["kind"] == k]
        out[k] = len(part)
        for st in STATUSES:
            out[f"{k} {st}"] = int((part["status"] == st).sum())
    unknown = set(checks["kind"]) - set(KINDS)
    if unknown:
        raise ValueError(f"unknown kinds in checks: {sorted(unknown)}")
    return out


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


def write_hypotheses(df: pd.DataFrame, paper: str, out: Path | None = None) -> Path:
    """Write ``hypotheses.csv``: every tested explanation (an ERRATA id) per data set, with its test, statistic and
    whether it is accepted (:data:`HYPOTHESIS_COLUMNS`).  A published number names an ERRATA id as a candidate;
    :func:`compare_table` counts it explained only when this file accepts that id for the number's data set."""
    missing = set(HYPOTHESIS_COLUMNS) - set(df.columns)
    if missing:
        raise ValueError(f"hypotheses lack the columns {sorted(missing)}")
    acc = df["accepted"]
    if not acc.map(lambda v: isinstance(v, (bool, np.bool_))).all():
        raise ValueError("hypotheses: 'accepted' must be True or False (the outcome of the hypothesis's own test)")
    bad = ~df["outcome"].isin(verdicts.HYPOTHESIS_OUTCOMES) | (acc.astype(bool) != (df["outcome"] == "accepted"))
    if bad.any():
        raise ValueError(f"hypotheses: 'outcome' must be one of {verdicts.HYPOTHESIS_OUTCOMES} and 'accepted' exactly "
                         f"when it is accepted (rows {df.index[bad].tolist()})")
    out = output_dir(paper) if out is None else Path(out)
    path = out / "hypotheses.csv"
    df[HYPOTHESIS_COLUMNS + [c for c in HYPOTHESIS_OPTIONAL if c in df.columns]].to_csv(path, index=False)
    return path


def read_hypotheses(path: Path) -> pd.DataFrame:
    """A paper's ``hypotheses.csv`` (an empty frame when the file does not exist)."""
    path = Path(path)
    if not path.exists():
        return pd.DataFrame(columns=HYPOTHESIS_COLUMNS)
    df = pd.read_csv(path, dtype=str, keep_default_na=False)
    missing = set(HYPOTHESIS_COLUMNS) - set(df.columns)
    if missing:
        raise ValueError(f"{path} lacks the columns {sorted(missing)}")
    return df


def accepted_explanations(hypotheses: pd.DataFrame | None) -> set[tuple[str, str]]:
    """The (ERRATA id, data set) pairs whose tests accept the hypothesis: every row of the pair accepted (one
    rejecting test of a hypothesis on a data set rejects it for that data set)."""
    if hypotheses is None or hypotheses.empty:
        return set()
    ok = hypotheses["accepted"].map(lambda v: str(v).strip().lower() == "true")
    by = ok.groupby([hypotheses["hypothesis"].astype(str), hypotheses["dataset"].astype(str)]).all()
    return {key for key, v in by.items() if v}


def known_scopes(hypotheses: pd.DataFrame | None) -> dict[tuple[str, str], list[str]]:
    """(ERRATA id, data set) -> the ``known`` scopes of its rows: the numbers whose fit under the hypothesis was known
    when it was registered (a hypothesis formed knowing how it fits a number cannot be evidence about that number)."""
    if hypotheses is None or hypotheses.empty or "known" not in hypotheses.columns:
        return {}
    out: dict[tuple[str, str], list[str]] = {}
    for r in hypotheses.itertuples():
        k = getattr(r, "known")
        if isinstance(k, str) and k.strip():
            out.setdefault((str(r.hypothesis), str(r.dataset)), []).append(k)
    return out


def _cell(row: pd.Series, col: str) -> str | None:
    v = row.get(col)
    return str(v).strip() if isinstance(v, str) and str(v).strip() else None


def number_kind(key: dict[str, object]) -> str:
    """What a published number measures, from its key columns: ``non-private`` (an ``epsilon`` that is empty, NaN or
    "non-private", or a ``method`` "non-private"), ``private, eps <= 0.1`` or ``private, eps > 0.1`` (a numeric
    ``epsilon``), else ``other`` (a data description, a timing)."""
    eps = key.get("epsilon")
    if eps is not None:
        text = str(eps).strip().lower()
        if text in ("", "nan", "none", "non-private"):
            return NUMBER_KINDS[0]
        try:
            return NUMBER_KINDS[1] if float(text) <= EPS_SMALL else NUMBER_KINDS[2]
        except ValueError:
            return NUMBER_KINDS[3]
    if str(key.get("method", "")).strip().lower() == "non-private":
        return NUMBER_KINDS[0]
    return NUMBER_KINDS[3]


def _same(a: object, b: str) -> bool:
    try:
        return math.isclose(float(str(a)), float(b), rel_tol=1e-9, abs_tol=1e-12)
    except ValueError:
        return str(a).strip() == b.strip()


def in_scope(scope: object, table: str, key: dict[str, object]) -> bool:
    """Whether a hypothesis whose ``scope`` is this text bears on the published number ``key`` of ``table``.  A scope
    is ``;``-separated conditions ``column=value|value...`` on the number's key columns, or on ``table`` (the table's
    file name), all of which must hold; numbers compare as numbers; alternatives separated by ``||`` cover what any of
    them covers.  A number lacking a column a condition names is out of that alternative; an empty scope covers every
    number of the hypothesis's data set."""
    text = "" if scope is None or (isinstance(scope, float) and math.isnan(scope)) else str(scope).strip()
    return any(_all_hold(alt, table, key) for alt in text.split("||"))


def _all_hold(conditions: str, table: str, key: dict[str, object]) -> bool:
    for cond in filter(None, (c.strip() for c in conditions.split(";"))):
        col, _, values = cond.partition("=")
        col = col.strip()
        have = table if col == "table" else key.get(col)
        if have is None or not any(_same(have, v) for v in values.split("|")):
            return False
    return True


def compare_table(df: pd.DataFrame, hypotheses: pd.DataFrame | None = None, *, min_effect: float | None = None,
                  table: str = "") -> pd.DataFrame:
    """Published numbers with their reproduction, t and class (keyed on every non-value column).

    se of the published mean: its ``se`` column if given, else :func:`dpkernels.verdicts.published_se` from the
    reproduced ``sd`` and the published ``n_runs`` (the stated assumption), else 0.  Both rest on our spread, so t has
    the reproduced ``n_runs`` - 1 degrees of freedom (:func:`dpkernels.verdicts.compare`; normal when ``n_runs`` is
    missing).  A reproduced number without a standard error (a single run; 0 is an exact number) gives a NaN z:
    ``inconclusive (too noisy)``.  Only published numbers with a paired reproduction appear.  The class
    (:data:`CLASSES`): a row's ``class_override`` (``not comparable``, ``input`` or ``fitted``, whose reason must be in
    ``note``) wins; otherwise :func:`dpkernels.verdicts.compare` with the row's ``min_effect`` (else the
    ``min_effect`` argument; a number with neither and a positive standard error cannot agree: without a minimum
    effect the comparison has no stated power, so within the cut it is ``inconclusive (too noisy)``; an exact
    comparison, standard error 0, sees any difference), and a difference is ``consistent with X`` only when the row's
    candidate ``errata`` X is accepted for the row's ``dataset`` by ``hypotheses`` (:func:`accepted_explanations`;
    ``errata`` may name several candidates, ``X|Y``: the first accepted one explains), and the number is not in X's
    ``known`` scope (:func:`known_scopes`: its fit under X was known when X was registered; ``table`` is the table's
    file name for scopes that name one).  Columns: the keys,
    ``published``, ``reproduced``, ``se_reproduced``, ``se_published``, ``z`` (the t statistic), ``df``, ``p_value``,
    ``power`` (against ``min_effect``), ``power_limit`` (the power unlimited replicates of ours would give: our
    standard error 0, the normal law; below 0.8 where the published number's own spread, not too few replicates of
    ours, keeps the comparison from seeing the minimum effect), ``min_effect``, ``class``, ``kind``
    (:func:`number_kind`), ``candidate`` (the ERRATA id named) and ``note``.
    """
    keys = [c for c in df.columns if c not in VALUE_COLUMNS]
    accepted, known = accepted_explanations(hypotheses), known_scopes(hypotheses)
    df = df.copy()
    for k in keys:
        df[k] = df[k].astype(str)
    for c in ("se", "sd", "n_runs", "errata", "class_override", "min_effect", "note"):
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
        se_r = float(r["se"]) if pd.notna(r["se"]) else math.nan  # no standard error (one run): nothing can agree or differ
        if pd.notna(p["se"]):
            se_p = float(p["se"])
        else:
            sd = float(r["sd"]) if pd.notna(r["sd"]) else float("nan")
            n_p = float(p["n_runs"]) if pd.notna(p["n_runs"]) else None
            se_p = verdicts.published_se(sd, n_p) if np.isfinite(sd) else 0.0
        n_r = float(r["n_runs"]) if pd.notna(r["n_runs"]) else math.nan
        dof = n_r - 1 if np.isfinite(n_r) and n_r > 1 and se_r > 0 else None
        keyd = dict(zip(keys, key if isinstance(key, tuple) else (key,)))
        errata = _cell(r, "errata") or _cell(p, "errata")
        note = "; ".join(dict.fromkeys(n for n in (_cell(p, "note"), _cell(r, "note")) if n))
        override = _cell(p, "class_override") or _cell(r, "class_override")
        me = next((float(v) for v in (p["min_effect"], r["min_effect"]) if pd.notna(v) and str(v) != ""), min_effect)
        dataset = keyd.get("dataset")
        explained = next((c for c in (errata or "").split("|") if dataset is not None and (c, dataset) in accepted
                          and not any(in_scope(k, table, keyd) for k in known.get((c, dataset), []))), None)
        c = verdicts.compare(pv, rv, se_r, se_p, explained=explained, df=dof, min_effect=me)
        # without a minimum effect a comparison with any spread has no stated power: not an agreement (an exact one,
        # standard error 0, sees every difference)
        cls = verdicts.TOO_NOISY if me is None and c.cls == "agrees" and math.hypot(se_r, se_p) > 0 else c.cls
        if override is not None:
            if override not in OVERRIDE_CLASSES:
                raise ValueError(f"class_override must be one of {OVERRIDE_CLASSES}, got {override!r} at {keyd}")
            if not note:
                raise ValueError(f"class_override {override!r} at {keyd} needs its reason in 'note'")
            cls = override
        limit = math.nan if me is None or not np.isfinite(se_r) else verdicts.comparison_power(me, se_p)
        rows.append({**keyd, "published": pv, "reproduced": rv, "se_reproduced": se_r, "se_published": se_p, "z": c.z,
                     "df": c.df, "p_value": c.p_value, "power": c.power, "power_limit": limit,
                     "min_effect": c.min_effect, "class": cls, "kind": number_kind(keyd), "candidate": errata or "",
                     "note": note})
    return pd.DataFrame(rows, columns=keys + ["published", "reproduced", "se_reproduced", "se_published", "z", "df",
                                              "p_value", "power", "power_limit", "min_effect", "class", "kind",
                                              "candidate", "note"])


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


#: Columns of ``totals.csv`` for the published numbers, in the order of :data:`CLASSES`.
CLASS_COLUMNS = {"agrees": "agree", verdicts.TOO_NOISY: "inconclusive (too noisy)", "fitted": "fitted",
                 CONSISTENT: "consistent with a hypothesis", "differs, unexplained": "differ, unexplained",
                 "not comparable": "not comparable", "input": "input"}


#: Column of ``totals.csv``: the ``differ, unexplained`` numbers whose difference is smaller than the comparison's
#: minimum effect (significant, but smaller than what the comparison was set up to see; still a difference).
BELOW_MIN_EFFECT = "differ, unexplained, below the minimum effect"
#: A relative difference that is not negligible, whatever the minimum effect says: an absolute minimum effect (0.05 in
#: accuracy) reads a KDDCup99 error of 0.0068 against the paper's 0.0092 (26%) as small (referee M5).
NOTABLE_RELATIVE = 0.1
#: Column of ``totals.csv``: the :data:`BELOW_MIN_EFFECT` numbers that differ by at least :data:`NOTABLE_RELATIVE` of
#: the published number.
BELOW_MIN_EFFECT_NOTABLE = "differ, unexplained, below the minimum effect, by >= 10% of the published number"
#: Column of ``totals.csv``: the ``fitted`` numbers (a reading rule was chosen on them) that still differ significantly
#: from ours (``|t|`` beyond the cut): the chosen reading does not reproduce them either, which ``fitted`` alone hides.
FITTED_DIFFERS = "fitted, significantly different"
#: Column of ``totals.csv``: the published numbers that repeat one of another table of the same paper (a figure's point
#: that is a table's entry), counted once here; both occurrences are paired and classed, so the class counts hold them
#: twice (referee L1).
REPEATED = "published numbers printed twice (counted in both tables)"
#: The columns on which two tables' published numbers are the same entry (those of them both tables have).
REPEAT_KEYS = ("dataset", "loss", "method", "epsilon")
#: Classes that are no comparison at all (timings from another machine, settings we set to match): left out of the
#: per-kind ``paired`` counts, whose agreements they could never be.
UNCOMPARED = ("not comparable", "input")


def repeated_numbers(tables: dict[str, pd.DataFrame]) -> int:
    """How many published numbers of ``tables`` (name -> a table with ``source`` and ``value``) repeat a published
    number of a table later in name order: the same value and the same entries in the :data:`REPEAT_KEYS` both tables
    have (two missing epsilons, non-private numbers, are the same), each counted once.  Tables that share none of
    those columns repeat nothing."""
    def keys(df: pd.DataFrame, cols: list[str]) -> list[tuple]:
        pub = df[df["source"] == "published"]
        value = pd.to_numeric(pub["value"], errors="coerce")
        return [tuple("" if pd.isna(r[c]) else str(r[c]) for c in cols) + (float(v),)
                for (_, r), v in zip(pub.iterrows(), value) if np.isfinite(v)]

    names = sorted(tables)
    out = 0
    for i, a in enumerate(names):
        repeats = np.zeros(len(keys(tables[a], [])), dtype=bool)
        for b in names[i + 1:]:
            cols = [c for c in REPEAT_KEYS if c in tables[a].columns and c in tables[b].columns]
            if cols:
                theirs = set(keys(tables[b], cols))
                repeats |= np.array([k in theirs for k in keys(tables[a], cols)], dtype=bool)
        out += int(repeats.sum())
    return out


def below_min_effect(paired: pd.DataFrame) -> pd.Series:
    """Per row of :func:`compare_table`: the absolute difference is smaller than the row's ``min_effect`` (False where
    it states none)."""
    diff = (pd.to_numeric(paired["reproduced"]) - pd.to_numeric(paired["published"])).abs()
    return diff < pd.to_numeric(paired["min_effect"])


def relative_difference(paired: pd.DataFrame) -> pd.Series:
    """Per row of :func:`compare_table`: ``|reproduced - published| / |published|`` (NaN where the published number is
    0)."""
    pub = pd.to_numeric(paired["published"]).astype(float)
    diff = (pd.to_numeric(paired["reproduced"]).astype(float) - pub).abs()
    return diff / pub.abs().where(pub != 0)


def _below_text(small: bool, relative: float) -> str:
    """The unexplained listing's "below the minimum effect" cell: "no", "yes", or, where the relative difference is at
    least :data:`NOTABLE_RELATIVE`, a "yes" that says so (an absolute cut is no sign of a negligible difference)."""
    if not small:
        return "no"
    if np.isfinite(relative) and relative >= NOTABLE_RELATIVE:
        return f"yes in absolute terms, but {100 * relative:.0f}% of the published number"
    return "yes"


def _class_of(cls: str) -> str:
    """The class without its ERRATA id (``consistent with P14`` -> ``consistent with a hypothesis``)."""
    return CONSISTENT if cls.startswith(verdicts.CONSISTENT) else cls


def _hypotheses_bearing(hyp: pd.DataFrame, dataset: str | None, table: str, key: dict[str, object]) -> str:
    """The hypotheses tested on ``dataset`` whose scope covers this number (:func:`in_scope`), with their results; one
    whose test left the number out (its ``untested`` scope covers it) is named as such."""
    if dataset is None:
        return "(no dataset column: no explanation can apply)"
    part = hyp[hyp["dataset"].astype(str) == dataset] if not hyp.empty else hyp
    if "scope" in part.columns:
        part = part[[in_scope(sc, table, key) for sc in part["scope"]]]
    if part.empty:
        return "none that bears on this number"

    def extra(r: pd.Series) -> str:
        bits = [f"{c.replace('_', ' ')} {r[c]}" for c in ("power", "false_acceptance") if c in r and str(r[c]) not in ("", "nan")]
        return f"; {', '.join(bits)}" if bits else ""

    def outcome(r: pd.Series) -> str:
        verdict = str(r["outcome"])
        untested, known = r.get("untested"), r.get("known")
        if isinstance(untested, str) and untested.strip() and in_scope(untested, table, key):
            return f"{verdict} on the other numbers it bears on, this one left out of its test"
        if isinstance(known, str) and known.strip() and in_scope(known, table, key):
            return f"{verdict}, but its fit to this number was known when it was registered: no evidence for it"
        return verdict

    return "; ".join(f"{r['hypothesis']} {outcome(r)} ({r['test']}: {r['statistic']}{extra(r)})"
                     for _, r in part.iterrows())


def build_report(root: Path | None = None) -> Path:
    """Write ``REPORT.md`` and ``totals.csv`` from the papers' folders under ``root`` (default ``paper_figures/``).

    Per paper: the checks' verdicts per kind (holds / violated / inconclusive / skipped, :func:`check_counts`), the
    published numbers per class (:data:`CLASSES`, through :func:`compare_table` with the paper's
    ``hypotheses.csv``), the numbers no reproduction pairs, the figures.  REPORT.md lists every ``differs,
    unexplained`` number with the hypotheses that bear on it (:func:`in_scope`) and their statistics, then per paper its
    hypotheses, every check and every published number.  ``totals.csv`` is the totals table alone (the README quotes
    it): columns ``paper``, ``<kind> <status>`` for every kind and status, ``<kind>`` totals, ``published numbers
    paired``, one column per class (:data:`CLASS_COLUMNS`), :data:`BELOW_MIN_EFFECT` (:func:`below_min_effect`),
    ``published numbers not reproduced``, ``paired <number
    kind>`` and ``agree <number kind>`` for every :data:`NUMBER_KINDS` (the informative agreements), ``figures``.
    """
    root = REPO_ROOT / "paper_figures" if root is None else Path(root)
    papers = sorted(p for p in root.iterdir() if p.is_dir() and (p / "checks.csv").exists()) if root.exists() else []
    totals, sections, unexplained = [], [], []
    for pdir in papers:
        checks = pd.read_csv(pdir / "checks.csv", dtype=str, keep_default_na=False)
        if "kind" not in checks.columns:
            raise ValueError(f"{pdir / 'checks.csv'} has no 'kind' column")
        counts = check_counts(checks)
        hyp = read_hypotheses(pdir / "hypotheses.csv")
        tables = sorted(t for t in pdir.glob("*.csv") if t.name not in ("checks.csv", "hypotheses.csv"))
        n_pairs, n_unpaired, n_small, n_small_notable, n_fitted_differs = 0, 0, 0, 0, 0
        published_tables: dict[str, pd.DataFrame] = {}
        classes = {c: 0 for c in CLASSES}
        by_kind = {f"{what} {k}": 0 for k in NUMBER_KINDS for what in ("paired", "agree")}
        body = [f"## {PAPER_TITLES.get(pdir.name, pdir.name)}\n"]
        for kind in KINDS:
            part = checks[checks["kind"] == kind]
            if part.empty:
                continue
            body.append(f"### Checks: {kind} ({len(part)})\n")
            body.append(_md_table(part.drop(columns=["paper", "kind"])))
        if not hyp.empty:
            body.append(f"### Hypotheses tested ({len(hyp)}): an ERRATA id explains a number only where accepted for its data set\n")
            body.append(_md_table(hyp[HYPOTHESIS_COLUMNS + [c for c in HYPOTHESIS_OPTIONAL if c in hyp.columns]]))
        for t in tables:
            df = pd.read_csv(t, keep_default_na=False, na_values=[""])
            if "source" not in df.columns or "value" not in df.columns or not (df["source"] == "published").any():
                continue
            published_tables[t.stem] = df
            paired = compare_table(df, hyp, table=t.stem)
            published = pd.to_numeric(df.loc[df["source"] == "published", "value"], errors="coerce")
            n_unpaired += int(np.isfinite(published).sum()) - len(paired)
            if paired.empty:
                continue
            n_pairs += len(paired)
            for cls, kind in zip(paired["class"], paired["kind"]):
                classes[_class_of(cls)] += 1
                by_kind[f"paired {kind}"] += int(cls not in UNCOMPARED)
                by_kind[f"agree {kind}"] += int(cls == "agrees")
            keys = list(paired.columns[: list(paired.columns).index("published")])
            small = below_min_effect(paired)
            rel = relative_difference(paired)
            n_small += int((small & (paired["class"] == "differs, unexplained")).sum())
            n_small_notable += int((small & (rel >= NOTABLE_RELATIVE)
                                    & (paired["class"] == "differs, unexplained")).sum())
            n_fitted_differs += int(((paired["class"] == "fitted")
                                     & (pd.to_numeric(paired["p_value"]) < verdicts.ALPHA_COMPARE)).sum())
            for i, r in paired[paired["class"] == "differs, unexplained"].iterrows():
                dataset = str(r["dataset"]) if "dataset" in keys else None
                keyd = {k: r[k] for k in keys}
                unexplained.append({"paper": pdir.name, "table": t.stem, "entry": ", ".join(f"{k}={r[k]}" for k in keys),
                                    "published": r["published"], "reproduced": r["reproduced"], "t": r["z"], "df": r["df"],
                                    "below the minimum effect": _below_text(bool(small[i]), float(rel[i]))
                                    if pd.notna(r["min_effect"]) else "(none stated)",
                                    "candidate": r["candidate"],
                                    "hypotheses that bear on it": _hypotheses_bearing(hyp, dataset, t.stem, keyd)})
            body.append(f"### {t.stem}: {len(paired)} published numbers with their reproduction\n")
            body.append(_md_table(paired))
        figs = sorted(f.name for f in pdir.glob("*.png"))
        if figs:
            body.append("### Figures\n")
            body.append("\n".join(f"- [{f}]({pdir.name}/{f})" for f in figs) + "\n")
        totals.append({"paper": pdir.name, **counts, "published numbers paired": n_pairs,
                       **{CLASS_COLUMNS[c]: classes[c] for c in CLASSES}, BELOW_MIN_EFFECT: n_small,
                       BELOW_MIN_EFFECT_NOTABLE: n_small_notable,
                       FITTED_DIFFERS: n_fitted_differs,
                       "published numbers not reproduced": n_unpaired,
                       REPEATED: repeated_numbers(published_tables),
                       **by_kind, "figures": len(figs)})
        sections.append("\n".join(body))
    tot = pd.DataFrame(totals)
    head = ["# Paper against reproduction\n",
            "Generated by `dpkernels report` from the files in this folder. Each check has a kind: `measured` (a "
            "simulation, a solve or an audit set against the paper's own statement; the only kind that counts as a check "
            "of a claim), `analytic` (the paper's formula against our derivation), `consistency` (our own substitute, or "
            "true by construction: never a confirmation of the paper) or `target` (our own goal). A verdict is `holds` "
            "(the data confirm the claim: a one-sided bound on the claimed side, an equivalence inside a stated margin, "
            "or a test with its stated power), `violated` (the data refute it; each has an entry in ../ERRATA.md), "
            "`inconclusive` (neither) or `skipped` (could not run); the criterion is beside each verdict. Published "
            "numbers are compared with their reproduction through the standard error of the difference, a t statistic "
            "with the degrees of freedom of our spread (replicates - 1), at a two-sided false-positive rate of "
            f"{verdicts.ALPHA_COMPARE:g} per number: not significant and with power >= {verdicts.POWER_TARGET:g} against "
            "the stated minimum effect (the paper's, or ours where it states none): `agrees`; not significant but "
            "underpowered: `inconclusive (too noisy)`, with its power and `power_limit` (the power with unlimited "
            "replicates of ours: below the target, the published number's own spread is what keeps it too noisy); "
            "significant: `consistent with X` only when "
            "hypothesis X, accepted by its own test with its power stated (`hypotheses.csv`), names the number, else "
            "`differs, unexplained`. Numbers a reading rule was chosen on are `fitted` (not agreements), timings from "
            "other machines `not comparable`, sizes and generator settings we set to match `input`. Agreements are "
            "counted per kind of number (non-private; private at eps <= 0.1; private at eps > 0.1; other). See "
            "`dpkernels.verdicts`.\n",
            "## Totals\n"]
    if not tot.empty:
        verdict_cols = ["paper"] + [f"{k} {st}" for k in KINDS for st in STATUSES]
        short = tot[verdict_cols].rename(columns=lambda c: c.replace("inconclusive", "inc.").replace("consistency", "cons."))
        head += ["### Checks: verdicts per kind\n", _md_table(short),
                 "### Published numbers: classes\n",
                 _md_table(tot[["paper", "published numbers paired", *CLASS_COLUMNS.values(), BELOW_MIN_EFFECT,
                                BELOW_MIN_EFFECT_NOTABLE, FITTED_DIFFERS, "published numbers not reproduced",
                                REPEATED]]),
                 "### Informative agreements per kind of number (agree / paired; the paired count includes fitted "
                 "numbers, never agreements, and leaves out the numbers that are not comparable and the inputs)\n",
                 _md_table(pd.DataFrame({"paper": tot["paper"], **{k: [f"{a} / {p}" for a, p in zip(tot[f"agree {k}"], tot[f"paired {k}"])]
                                                                      for k in NUMBER_KINDS}}))]
        m = {st: int(tot[f"measured {st}"].sum()) for st in STATUSES}
        other = {k: int(tot[k].sum()) for k in ("analytic", "consistency", "target")}
        cls = {c: int(tot[c].sum()) for c in CLASS_COLUMNS.values()}
        head.append(f"\nAll papers: {int(tot['measured'].sum())} measured checks of claims ({m['holds']} hold, "
                    f"{m['violated']} violated, {m['inconclusive']} inconclusive, {m['skipped']} skipped); "
                    f"{other['analytic']} analytic, {other['consistency']} consistency, {other['target']} target rows; "
                    f"{int(tot['published numbers paired'].sum())} published numbers paired with a reproduction "
                    f"({cls['agree']} agree, {cls['inconclusive (too noisy)']} inconclusive (too noisy), {cls['fitted']} "
                    f"fitted ({int(tot[FITTED_DIFFERS].sum())} of them still significantly different from ours), "
                    f"{cls['consistent with a hypothesis']} consistent with a tested hypothesis, "
                    f"{cls['differ, unexplained']} differ without one ({int(tot[BELOW_MIN_EFFECT].sum())} of them by less "
                    f"than the comparison's minimum effect, {int(tot[BELOW_MIN_EFFECT_NOTABLE].sum())} of those by 10% "
                    f"or more of the published number), {cls['not comparable']} not comparable, "
                    f"{cls['input']} inputs; {int(tot[REPEATED].sum())} of the paired numbers are printed twice, a "
                    "figure's point that is a table's entry, and are counted in both tables); "
                    f"{int(tot['published numbers not reproduced'].sum())} published numbers have "
                    "no reproduction (a setting the profile does not run, or data we do not have: each notebook says which).\n")
    else:
        head.append("_(no papers)_\n")
    head.append("## Differences we cannot explain\n")
    head.append("Every published number that differs from its reproduction without an accepted explanation, with its t "
                "and degrees of freedom, whether the difference is smaller than the comparison's minimum effect "
                "(significant, yet smaller than what the comparison was set up to see: still a difference), the ERRATA "
                "id it names as a candidate (if any) and the hypotheses tested that bear on it (their scope covers the "
                "number), with their results.\n")
    head.append(_md_table(pd.DataFrame(unexplained, columns=["paper", "table", "entry", "published", "reproduced", "t", "df",
                                                             "below the minimum effect", "candidate",
                                                             "hypotheses that bear on it"])))
    text = "\n".join(head) + "\n" + "\n\n".join(sections)
    path = root / "REPORT.md"
    root.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    tot.to_csv(root / "totals.csv", index=False)  # the totals the README quotes
    return path
