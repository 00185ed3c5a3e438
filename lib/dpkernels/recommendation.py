"""Which mechanism should I use?  The frontier's answer for a task, a size and a budget, read from committed results.

:func:`recommend` answers "binary, n = 20,000, d = 104, epsilon = 0.5, delta = 1e-6" with the estimator to
construct (under the frontier's hyper-parameter protocol, evaluated at *your* n, d, epsilon and delta), the test error
to expect and the frontier cells the answer rests on.  It reads only the committed results of the frontier
(``paper_figures/frontier/summary.csv`` and ``recommendation.csv``, or a folder you pass): no private data are touched.

* The frontier data set it rests on is the one of your task whose feature dimension is nearest yours (``like``
  overrides).  Your rows must be mapped into the unit ball with a public constant feature, as the frontier's are
  (:mod:`dpkernels.feature_maps`, :class:`dpkernels.PublicBoundsScaler`).
* n and epsilon must lie within the committed grid: the error of each mechanism is *read* at a committed cell, or
  *interpolated* linearly in (log n, log epsilon) between the two or four committed cells around yours, with its 95%
  interval (mean +- t quantile x standard error over seeds at each cell) interpolated the same way.  It is an
  estimate on the frontier's data, not a guarantee for yours.
* A mechanism qualifies when, in every cell it rests on, its runs stayed within the cell's budget and the delta its
  fits stated is at most yours (delta = 0: only pure epsilon-DP rows); among those whose interpolated 95% interval
  lies below the interpolated majority-class error, the one with the lowest interpolated error is recommended.  Where
  none is shown to beat the majority class the answer is to collect more rows or spend more budget.
* A missing file, an unknown data set, a size or epsilon outside the grid, or a missing cell raises
  :class:`LookupError` naming what is missing.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

__all__ = ["Recommendation", "recommend", "default_results"]


def default_results() -> Path:
    """The committed frontier results of this checkout: ``paper_figures/frontier``."""
    from dpkernels.report import REPO_ROOT

    return REPO_ROOT / "paper_figures" / "frontier"


@dataclass(frozen=True)
class Recommendation:
    """The frontier's answer (:func:`recommend`).

    ``mechanism`` is the frontier row to use ("" when nothing learns in the cells), ``estimator`` the constructor call
    it stands for at the asked (n, d, epsilon, delta), ``error`` and ``interval`` the expected test error and its 95%
    interval on the frontier data set ``like``, ``how`` whether they were read or interpolated, ``cells`` the
    committed cells they rest on and ``alternatives`` the other qualifying mechanisms with their expected errors."""

    task: str
    n: int
    d: int
    epsilon: float
    delta: float
    like: str
    mechanism: str
    label: str
    estimator: str
    error: float
    interval: tuple[float, float]
    how: str
    cells: pd.DataFrame = field(repr=False)
    alternatives: pd.DataFrame = field(repr=False)
    notes: tuple[str, ...] = ()

    def build(self, n_classes: int | None = None) -> Any:
        """The unfitted estimator (noise from operating-system entropy), built by the frontier's registry at the asked
        (n, d, epsilon, delta); a multi-class task needs ``n_classes`` (classes 0..K-1)."""
        if not self.mechanism:
            raise LookupError("nothing to build: no mechanism learns in these cells (collect more rows or spend more "
                              "budget)")
        return _build(self.mechanism, self.task, self.n, self.d, self.epsilon, self.delta, n_classes)[0]

    def __str__(self) -> str:
        if not self.mechanism:
            head = (f"No private mechanism is shown to beat the majority class on {self.like} near n = {self.n:,}, "
                    f"epsilon = {self.epsilon:g}: collect more rows or spend more budget.")
        else:
            lo, hi = self.interval
            head = (f"Use {self.mechanism} ({self.label}):\n  {self.estimator}\n"
                    f"Expected test error on {self.like}-like data: {self.error:.3f} (95% interval {lo:.3f} to "
                    f"{hi:.3f}), {self.how}; an estimate, not a guarantee.")
        cells = "; ".join(f"n={int(r.n_train):,} eps={r.epsilon:g}: {r.best or 'nothing learns'}"
                          for r in self.cells.itertuples())
        return "\n".join([head, f"Rests on the committed frontier cells ({self.like}): {cells}.", *self.notes])


def _read(results: Path, name: str) -> pd.DataFrame:
    path = results / name
    if not path.is_file():
        raise LookupError(f"no committed frontier results at {path}: run the frontier's scale profile and "
                          "update-reference, or pass results=<a folder holding summary.csv and recommendation.csv>")
    return pd.read_csv(path, keep_default_na=False, na_values=[""])


def _bracket(grid: list[float], x: float, what: str) -> list[float]:
    """The committed grid values around x (one if x is on the grid); LookupError outside it."""
    if not grid:
        raise LookupError(f"no committed {what}")
    if x < grid[0] or x > grid[-1]:
        raise LookupError(f"{what} {x:g} is outside the committed grid {grid[0]:g}..{grid[-1]:g} ({grid}): the "
                          "frontier does not extrapolate")
    for g in grid:
        if math.isclose(g, x, rel_tol=1e-9):
            return [g]
    lo = max(g for g in grid if g < x)
    return [lo, min(g for g in grid if g > x)]


def _weights(values: list[float], x: float) -> list[float]:
    """Linear interpolation weights in log space."""
    if len(values) == 1:
        return [1.0]
    a, b = math.log(values[0]), math.log(values[1])
    t = (math.log(x) - a) / (b - a)
    return [1.0 - t, t]


def _build(mechanism: str, task: str, n: int, d: int, epsilon: float, delta: float,
           n_classes: int | None) -> tuple[Any, dict[str, Any]]:
    from dpkernels.experiments import frontier as F

    if mechanism not in F.MECHANISMS:
        raise LookupError(f"{mechanism!r} is a row of the committed results that this version of the frontier no "
                          f"longer defines; known: {sorted(F.MECHANISMS)}")
    if task == "multiclass" and not n_classes:
        raise ValueError("a multi-class task needs n_classes")
    K = 2 if task == "binary" else int(n_classes)  # type: ignore[arg-type]
    mech = F.MECHANISMS[mechanism]
    info = {"n": int(n), "d": int(d), "K": K, "dataset": "", "task": task, "delta": float(delta), "scale": 1.0,
            "classes": list(range(K))}
    est, params = F.task_estimator(mech, float(epsilon), float(delta), info, np.random.default_rng())
    return _unseeded(est), params


def _unseeded(est: Any) -> Any:
    """The estimator (and every estimator inside it) with ``random_state=None``: noise from operating-system
    entropy (the frontier's factories hand them its generator)."""
    if hasattr(est, "steps"):
        for _, step in est.steps:
            _unseeded(step)
        return est
    params = est.get_params(deep=False) if hasattr(est, "get_params") else {}
    if "random_state" in params:
        est.set_params(random_state=None)
    for key in ("candidates", "estimators"):
        for inner in params.get(key, []) or []:
            _unseeded(inner)
    return est


def recommend(task: str, n: int, d: int, epsilon: float, delta: float, *, like: str | None = None,
              results: str | Path | None = None) -> Recommendation:
    """The frontier's recommendation for ``n`` rows of ``d`` features (constant feature included) at a total budget
    (``epsilon``, ``delta``) (module docstring).

    Parameters
    ----------
    task : {"binary", "multiclass"}
    n : int
        Training rows (public).
    d : int
        Features after the public map (the frontier's Adult has 105, KDDCup99 87, satimage 37, shuttle 10).
    epsilon, delta : float
        The total budget; delta = 0 asks for pure epsilon-DP.
    like : str or None
        The frontier data set to rest on (default: the one of ``task`` with the nearest d).
    results : path or None
        A folder with the frontier's ``summary.csv`` and ``recommendation.csv`` (default: :func:`default_results`).

    Returns
    -------
    Recommendation

    Raises
    ------
    LookupError
        Missing results, an unknown data set, n or epsilon outside the committed grid, or a missing cell.

    Examples
    --------
    >>> from dpkernels import recommend
    >>> rec = recommend("binary", 20_000, 104, 0.5, 1e-6)  # doctest: +SKIP
    >>> print(rec)  # doctest: +SKIP
    """
    from dpkernels.experiments.frontier import DATASETS, MECHANISMS

    if task not in ("binary", "multiclass"):
        raise ValueError(f"task must be 'binary' or 'multiclass', got {task!r}")
    if int(n) != n or n < 1 or int(d) != d or d < 1:
        raise ValueError(f"n and d must be positive integers, got n = {n!r}, d = {d!r}")
    if not (math.isfinite(epsilon) and epsilon > 0) or not (0.0 <= delta < 1.0):
        raise ValueError(f"need epsilon > 0 and 0 <= delta < 1, got ({epsilon!r}, {delta!r})")
    root = Path(results) if results is not None else default_results()
    summary, rec = _read(root, "summary.csv"), _read(root, "recommendation.csv")
    present = [ds for ds in summary["dataset"].unique() if ds in DATASETS and DATASETS[ds].task == task]
    if like is None:
        dims = _dimensions(root, present)
        if not dims:
            raise LookupError(f"the committed results at {root} hold no {task} data set")
        like = min(dims, key=lambda ds: (abs(math.log(d / dims[ds])), ds))
    elif like not in present:
        raise LookupError(f"{like!r} is not a {task} data set of the committed results at {root} ({present})")
    s = summary[(summary["dataset"] == like) & (summary["privacy"] != "none")]
    ns = _bracket(sorted(float(x) for x in s["n_train"].unique()), float(n), "training size n")
    es = _bracket(sorted(float(x) for x in s["epsilon"].unique()), float(epsilon), "epsilon")
    cells = [(int(a), b) for a in ns for b in es]
    weights = {(int(a), b): wa * wb for a, wa in zip(ns, _weights(ns, n)) for b, wb in zip(es, _weights(es, epsilon))}
    r = rec[rec["dataset"] == like]
    cell_rows = []
    for nn, ee in cells:
        row = r[(r["n_train"] == nn) & np.isclose(r["epsilon"], ee)]
        if row.empty:
            raise LookupError(f"the committed results at {root} have no {like} cell at n = {nn:,}, epsilon = {ee:g}")
        cell_rows.append(row.iloc[0])
    cells_df = pd.DataFrame(cell_rows)[["dataset", "n_train", "epsilon", "best", "error", "se", "advice"]]
    cells_df["best"] = cells_df["best"].fillna("")
    cells_df["weight"] = [weights[c] for c in cells]
    how = ("read at the committed cell" if len(cells) == 1 else
           f"interpolated in (log n, log epsilon) between {len(cells)} committed cells")
    alternatives = _qualifying(s, cells, weights, delta)
    notes = [f"Rows must lie in the unit ball with a public constant feature (dpkernels.feature_maps); the frontier's "
             f"{like} has d = {_dimensions(root, [like]).get(like, 0)}, yours {d}.",
             "Hyper-parameters follow the frontier's protocol evaluated at your n, d, epsilon and delta; labels -1 / +1 "
             "(set classes=... for others)."]
    if "delta_spent_max" not in s.columns or "within_budget" not in s.columns:
        notes.append("These results predate stated budgets (no delta_spent_max / within_budget): each row's delta is "
                     "taken from its privacy kind, which may understate it.")
    if delta < 1e-6 and delta > 0:
        notes.append("Your delta is below the frontier's 1e-6: only mechanisms whose fits stated at most your delta "
                     "qualify.")
    if alternatives.empty or not bool(alternatives["learns"].iloc[0]):
        if not alternatives.empty:
            notes.append(f"Lowest expected error: {alternatives['mechanism'].iloc[0]} "
                         f"({alternatives['error'].iloc[0]:.3f}), not shown to beat the majority class "
                         f"({alternatives['majority_error'].iloc[0]:.3f}) here.")
        return Recommendation(task, int(n), int(d), float(epsilon), float(delta), like, "", "", "", math.nan,
                              (math.nan, math.nan), how, cells_df, alternatives, tuple(notes))
    top = alternatives.iloc[0]
    mech = MECHANISMS.get(top["mechanism"])
    try:
        from dpkernels.experiments.frontier import OneVsAll

        est, _ = _build(top["mechanism"], task, n, d, epsilon, delta, 2 if task == "binary" else 3)
        text = repr(est) if not isinstance(est, OneVsAll) else (
            f"one-against-all (dpkernels.experiments.frontier.OneVsAll), per class {est.estimators[0]!r} at 3 "
            "classes; Recommendation.build(n_classes=K) splits the budget over yours")
    except (LookupError, ValueError) as exc:
        text = f"(not constructible here: {exc})"
    return Recommendation(task, int(n), int(d), float(epsilon), float(delta), like, str(top["mechanism"]),
                          mech.label if mech else str(top["mechanism"]), text, float(top["error"]),
                          (float(top["lo"]), float(top["hi"])), how, cells_df, alternatives, tuple(notes))


def _dimensions(root: Path, datasets: list[str]) -> dict[str, int]:
    """Each data set's feature dimension (runs.csv's ``d``; else the public map's output)."""
    runs = root / "runs.csv"
    out: dict[str, int] = {}
    if runs.is_file():
        d = pd.read_csv(runs, usecols=["dataset", "d"]).drop_duplicates("dataset").set_index("dataset")["d"]
        out = {ds: int(d[ds]) for ds in datasets if ds in d.index}
    fallback = {"adult": 105, "kddcup99": 87, "satimage": 37, "shuttle": 10}
    return {ds: out.get(ds, fallback.get(ds, 0)) for ds in datasets if out.get(ds, fallback.get(ds))}


def _qualifying(s: pd.DataFrame, cells: list[tuple[int, float]], weights: dict[tuple[int, float], float],
                delta: float) -> pd.DataFrame:
    """Mechanisms run within budget in every cell, whose fits stated at most ``delta``, with their interpolated error,
    95% interval and majority-class error, and whether the interval lies below the majority error (``learns``);
    those that learn first, then by error."""
    from scipy import stats

    from dpkernels.experiments.frontier import DELTA, MECHANISMS

    rows = []
    for m, g in s.groupby("mechanism"):
        parts = []
        for nn, ee in cells:
            c = g[(g["n_train"] == nn) & np.isclose(g["epsilon"], ee)]
            if c.empty:
                break
            c = c.iloc[0]
            stated_delta = float(c["delta_spent_max"]) if "delta_spent_max" in c and pd.notna(c["delta_spent_max"]) \
                else (0.0 if c["privacy"] == "pure" else DELTA)
            if not (bool(c.get("within_budget", True)) and stated_delta <= delta and pd.notna(c["error"])):
                break
            k = int(c["n_seeds"])
            q = float(stats.t.ppf(0.975, k - 1)) if k > 1 else math.inf
            se = float(c["se"]) if pd.notna(c["se"]) else math.inf
            e = float(c["error"])
            parts.append((weights[(nn, ee)], e, e - q * se, e + q * se, float(c["base_error"])))
        else:
            error, lo, hi, base = (sum(w * p[i] for w, *p in [(q[0], *q[1:]) for q in parts]) for i in range(4))
            rows.append({"mechanism": m, "label": MECHANISMS[m].label if m in MECHANISMS else m, "error": error,
                         "lo": max(0.0, lo), "hi": min(1.0, hi), "majority_error": base, "learns": hi < base})
    out = pd.DataFrame(rows, columns=["mechanism", "label", "error", "lo", "hi", "majority_error", "learns"])
    return out.sort_values(["learns", "error", "mechanism"], ascending=[False, True, True]).reset_index(drop=True)
