"""Which mechanism should I use?  The frontier's answer for a task, a size and a budget, read from committed results.

:func:`recommend` answers "binary, n = 20,000, d = 104, epsilon = 0.5, delta = 1e-6" with the estimator to
construct (under the frontier's hyper-parameter protocol, evaluated at *your* n, d, epsilon and delta; printed as a
call you can copy), the test error to expect and the frontier cells the answer rests on.  It reads only the committed
results of the frontier (``paper_figures/frontier/summary.csv``, ``recommendation.csv`` and ``runs.csv``, or a folder
you pass): no private data are touched.

* The frontier data set it rests on is the one of your task whose feature dimension is nearest yours (``like``
  overrides); without ``like``, every other data set of the task whose dimension is within ``NEAR_D_FACTOR`` of
  yours is answered too, in a note (d alone does not say which data your rows resemble).  Your rows must be mapped
  into the unit ball with a public constant feature, as the frontier's are (:mod:`dpkernels.feature_maps`,
  :class:`dpkernels.PublicBoundsScaler`); a multi-class task names its number of
  classes (labels 0, ..., K - 1).
* delta must be at most 1/(10 n) (:class:`ValueError` otherwise, as the library's fits: a delta near 1/n allows
  releasing a whole row with that probability).  The committed cells ran at their own delta (1e-6 on the grid);
  where yours differs the answer says so: errors and intervals are read at the cells' delta, the estimator is built
  at yours.
* n and epsilon must lie within the committed grid: the mean test error of each mechanism is *read* at a committed
  cell, or *interpolated* linearly in (log n, log epsilon) between the two or four committed cells around yours.
* The 95% interval is for the frontier's mean test error over seeds at your (n, epsilon) on the data set it rests on.
  At a committed cell it is the cell's t interval (mean +- t quantile x standard error).  Between cells the cells'
  half-widths are interpolated and widened by an interpolation-error term: per axis (n, epsilon) that is
  interpolated, a factor times the difference between the two bracketing cells' means along that axis, added in
  quadrature.  The factor is estimated by leave-one-out on the committed grid (:func:`loo_residuals`,
  :func:`interpolation_factors`): every interior n or epsilon cell of every private row is interpolated from its two
  neighbours, and the factor is the 95% quantile, per (data set, axis), of what each held-out mean needs to be
  covered (the axis pooled over data sets where a data set has fewer than :data:`MIN_RESIDUALS` held-out cells).
  Held out one mechanism at a time (its factor estimated from the other mechanisms, :func:`loo_coverage`), the
  share of the committed grid's held-out means the interval covers is in
  ``paper_figures/recommend/interval_coverage.csv`` (:func:`coverage_table`; about 95% by construction, the cells'
  sampling interval alone far less; rewritten by ``update-reference``, recomputed by tests/test_recommendation.py,
  quoted in README).  Leave-one-out interpolates across twice the spacing an answer between neighbouring cells
  does, so the term is conservative there.  A single release varies around
  that mean far more than the mean does: its standard deviation over the cells' seeds is stated separately
  (``spread``; ``release_interval`` adds 1.96 of it to each end).  It is an estimate on the frontier's data, not a
  guarantee for yours.
* Only *contenders* are candidates (:func:`dpkernels.experiments.frontier_analysis.set_aside`): never a row whose
  hyper-parameters a paper tuned on the frontier's data (protocol ``"paper"``: every candidate follows one protocol,
  issue 29), never diffprivlib's cross-check of objective perturbation (its estimator reads the label set from the
  training data).  A contender qualifies when, in every cell it rests on, its runs stayed within the cell's budget and
  the delta its fits stated is at most yours (delta = 0: only pure epsilon-DP rows); it *learns* when the committed
  paired test says it beats the majority class (``beats_majority`` "holds", as the map reads it) in every one of
  those cells.  Among those that learn, the one with the lowest interpolated error is recommended; where none does
  the answer is to collect more rows or spend more budget.  At a committed cell this is the map's winner.  The other
  contenders that learn are classed against it as the map classes a cell's (:func:`_versus`): equivalent within the
  map's margin, beaten, or undecided (the committed seeds do not separate them); the answer names the equivalent and
  the undecided ones, so a lowest mean that the seeds cannot tell from others is not read as a clear winner.
* A missing file, an unknown data set, a size or epsilon outside the grid, or a missing cell raises
  :class:`LookupError` naming what is missing.
"""

from __future__ import annotations

import functools
import inspect
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from dpkernels._validation import delta_ceiling

__all__ = ["Recommendation", "recommend", "default_results", "loo_residuals", "interpolation_factors", "loo_coverage",
           "coverage_table", "COVERAGE_FILE", "MIN_RESIDUALS"]

#: Held-out cells a (data set, axis) needs for its own interpolation-error factor; with fewer, the axis's factor
#: pooled over the data sets is used.
MIN_RESIDUALS = 30
#: Without ``like``, another data set of the task whose d is within this factor of yours is answered too (in a note).
NEAR_D_FACTOR = 2.0
_LEVEL = 0.95  #: the intervals' coverage target
_Z = 1.959963984540054  #: the standard normal's 97.5% quantile (a single release's range)


def default_results() -> Path:
    """The committed frontier results of this checkout: ``paper_figures/frontier``."""
    from dpkernels.report import REPO_ROOT

    return REPO_ROOT / "paper_figures" / "frontier"


@dataclass(frozen=True)
class Recommendation:
    """The frontier's answer (:func:`recommend`).

    ``mechanism`` is the frontier row to use ("" when nothing learns in the cells); ``estimator`` what it builds at the
    asked (n, d, epsilon, delta, n_classes) and ``call`` the Python line that builds it from the committed results
    (without ``results=``: asked of another folder, the line builds what the committed frontier answers); ``error``
    and ``interval`` the expected mean test error on the frontier data set ``like`` and its 95% interval (module
    docstring), ``spread`` the standard deviation of a single release's error around that mean and
    ``release_interval`` the range a single release's error falls in about 95% of the time; ``how`` whether they were
    read or interpolated, ``cells`` the committed cells they rest on and ``alternatives`` the qualifying contenders
    with their expected errors (column ``versus``: how each other one that learns stands against the recommended one,
    as the map classes a cell's contenders: :func:`_versus`); ``equivalent`` those equivalent to it within the map's
    margin and ``undecided`` those neither equivalent nor shown worse (both ``None`` where the results hold no
    per-seed runs)."""

    task: str
    n: int
    d: int
    epsilon: float
    delta: float
    n_classes: int
    like: str
    mechanism: str
    label: str
    estimator: str
    call: str
    error: float
    interval: tuple[float, float]
    spread: float
    release_interval: tuple[float, float]
    how: str
    cells: pd.DataFrame = field(repr=False)
    alternatives: pd.DataFrame = field(repr=False)
    notes: tuple[str, ...] = ()
    equivalent: tuple[str, ...] | None = None
    undecided: tuple[str, ...] | None = None

    def build(self) -> Any:
        """The unfitted estimator (noise from operating-system entropy), built by the frontier's registry at the asked
        (n, d, epsilon, delta) and, for a multi-class task, ``n_classes`` (classes 0, ..., K - 1)."""
        if not self.mechanism:
            raise LookupError("nothing to build: no mechanism learns in these cells (collect more rows or spend more "
                              "budget)")
        return _build(self.mechanism, self.task, self.n, self.d, self.epsilon, self.delta, self.n_classes)

    def __str__(self) -> str:
        if not self.mechanism:
            head = (f"No private mechanism is shown to beat the majority class on {self.like} near n = {self.n:,}, "
                    f"epsilon = {self.epsilon:g}: collect more rows or spend more budget.")
        else:
            lo, hi = self.interval
            rlo, rhi = self.release_interval
            head = (f"Use {self.mechanism} ({self.label}): {self.estimator}\n  {self.call}\n"
                    f"Expected mean test error on {self.like}-like data: {self.error:.3f} (95% interval {lo:.3f} to "
                    f"{hi:.3f}), {self.how}; an estimate, not a guarantee.\n"
                    f"A single release varies around that mean: standard deviation {self.spread:.3f} over the cells' "
                    f"seeds, its error about {rlo:.3f} to {rhi:.3f}.")
        def cell(r: Any) -> str:  # the recommended mechanism's own error there, then the map's best if it differs
            own = f"{self.mechanism} {r.chosen_error:.3f}" if self.mechanism and np.isfinite(r.chosen_error) else ""
            best = r.best or "nothing learns"
            if not own:
                return best
            return own if best == self.mechanism else f"{own} (the map's best at the cells' delta: {best})"

        cells = "; ".join(f"n={int(r.n_train):,} eps={r.epsilon:g}: {cell(r)}" for r in self.cells.itertuples())
        lines = [head, f"Rests on the committed frontier cells ({self.like}): {cells}."]
        if self.mechanism and self.equivalent is not None and self.undecided is not None:
            errors = self.alternatives.set_index("mechanism")["error"]
            said = {c: ", ".join(f"{m} {errors[m]:.3f}" for m in ms)
                    for c, ms in (("equivalent", self.equivalent), ("undecided", self.undecided))}
            if said["equivalent"]:
                lines.append(f"Equivalent to {self.mechanism} within the map's margin (paired TOST of the per-seed "
                             f"differences, interpolated between the cells): {said['equivalent']}.")
            if said["undecided"]:
                lines.append(f"Neither equivalent to {self.mechanism} nor shown worse (the committed seeds do not "
                             f"separate them): {said['undecided']}.")
            if not said["equivalent"] and not said["undecided"]:
                lines.append(f"{self.mechanism} is shown to beat every other qualifying contender that learns here "
                             "(one-sided paired tests of the per-seed differences, interpolated between the cells, "
                             "at 5% over the number of the other contenders it was picked among).")
        return "\n".join([*lines, *self.notes])


@functools.lru_cache(maxsize=16)
def _read_cached(path: str, stamp: tuple[int, int], usecols: tuple[str, ...] | None) -> pd.DataFrame:
    if usecols is None:
        return pd.read_csv(path, keep_default_na=False, na_values=[""])
    return pd.read_csv(path, usecols=lambda c: c in usecols)


def _read(results: Path, name: str, usecols: tuple[str, ...] | None = None) -> pd.DataFrame:
    """A committed results file (a copy; read once per file version)."""
    path = results / name
    if not path.is_file():
        raise LookupError(f"no committed frontier results at {path}: run the frontier's scale profile and "
                          "update-reference, or pass results=<a folder holding summary.csv and recommendation.csv>")
    st = path.stat()
    return _read_cached(str(path), (st.st_mtime_ns, st.st_size), usecols).copy()


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


def _n_classes(task: str, n_classes: int | None) -> int:
    if task == "binary":
        if n_classes not in (None, 2):
            raise ValueError(f"a binary task has 2 classes, got n_classes = {n_classes!r}")
        return 2
    if n_classes is None or int(n_classes) != n_classes or n_classes < 3:
        raise ValueError(f"a multi-class task needs n_classes, an integer of at least 3 (labels 0, ..., K - 1), got "
                         f"{n_classes!r}")
    return int(n_classes)


def _build(mechanism: str, task: str, n: int, d: int, epsilon: float, delta: float, n_classes: int) -> Any:
    from dpkernels.experiments import frontier as F

    if mechanism not in F.MECHANISMS:
        raise LookupError(f"{mechanism!r} is a row of the committed results that this version of the frontier no "
                          f"longer defines; known: {sorted(F.MECHANISMS)}")
    K = _n_classes(task, n_classes)
    info = {"n": int(n), "d": int(d), "K": K, "dataset": "", "task": task, "delta": float(delta), "scale": 1.0,
            "classes": list(range(K))}
    est, _ = F.task_estimator(F.MECHANISMS[mechanism], float(epsilon), float(delta), info, np.random.default_rng())
    return _unseeded(est)


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


def _describe(est: Any, top: bool = True) -> str:
    """What an estimator is, in one line: its structure (pipeline steps, one-against-all parts, private-selection
    candidates) and, for a plain estimator, its scalar hyper-parameters."""
    from sklearn.pipeline import Pipeline

    from dpkernels.experiments.frontier import OneVsAll
    from dpkernels.selection import PrivateSelection

    if isinstance(est, Pipeline):
        return " then ".join(_describe(step, False) for _, step in est.steps)
    if isinstance(est, OneVsAll):
        return f"OneVsAll over classes {_labels(est.classes)}, each part {_describe(est.estimators[0], top)}"
    if isinstance(est, PrivateSelection):
        return (f"PrivateSelection (epsilon {est.epsilon:g}) among {len(est.candidates)} candidates, the first "
                f"{_describe(est.candidates[0], False)}")
    name = type(est).__name__
    if not top or not hasattr(est, "get_params"):
        return name
    defaults = {k: p.default for k, p in inspect.signature(type(est).__init__).parameters.items()}
    scalars = {k: v for k, v in est.get_params(deep=False).items()
               if isinstance(v, (bool, int, float, str)) and k != "random_state" and v != defaults.get(k, not v)}
    return name + "(" + ", ".join(f"{k}={v:.4g}" if isinstance(v, float) else f"{k}={v!r}"
                                  for k, v in scalars.items()) + ")"


def _labels(classes: Any) -> str:
    c = list(classes)
    return f"[{c[0]}, ..., {c[-1]}]" if len(c) > 3 else str(c)


def _cell_half(c: Any) -> float:
    """A committed cell's 95% t half-width for its mean over seeds (inf with fewer than two seeds)."""
    from scipy import stats

    k = int(c["n_seeds"])
    if k < 2 or pd.isna(c["se"]):
        return math.inf
    return float(stats.t.ppf(0.5 + _LEVEL / 2, k - 1)) * float(c["se"])


def _interpolate(cells: dict[tuple[float, float], Any], ns: list[float], es: list[float], wn: list[float],
                 we: list[float]) -> dict[str, float]:
    """One mechanism's interpolation between its committed cells (``cells[(n, epsilon)]``, rows of summary.csv):
    the mean error, the interpolated sampling half-width, the single-release standard deviation, the majority error
    and, per axis, the weighted absolute difference between the bracketing cells (``gap_n``, ``gap_e``: 0 on an axis
    read at a committed value)."""
    w = {(a, b): x * y for a, x in zip(ns, wn) for b, y in zip(es, we)}
    err = {k: float(c["error"]) for k, c in cells.items()}
    out = {"error": sum(w[k] * err[k] for k in w),
           "half": sum(w[k] * _cell_half(cells[k]) for k in w),
           "spread": sum(w[k] * float(cells[k]["se"]) * math.sqrt(int(cells[k]["n_seeds"])) for k in w),
           "majority_error": sum(w[k] * float(cells[k]["base_error"]) for k in w)}
    out["gap_n"] = sum(y * abs(err[(ns[1], b)] - err[(ns[0], b)]) for b, y in zip(es, we)) if len(ns) == 2 else 0.0
    out["gap_e"] = sum(x * abs(err[(a, es[1])] - err[(a, es[0])]) for a, x in zip(ns, wn)) if len(es) == 2 else 0.0
    return out


def _half_width(part: dict[str, float], factor_n: float, factor_e: float) -> float:
    """The widened half-width: the sampling half-width and each axis's interpolation term, in quadrature."""
    return math.sqrt(part["half"] ** 2 + (factor_n * part["gap_n"]) ** 2 + (factor_e * part["gap_e"]) ** 2)


def loo_residuals(summary: pd.DataFrame) -> pd.DataFrame:
    """Leave-one-out on the committed grid: for every private row with a mean error at three consecutive committed
    sizes (at one epsilon) or three consecutive epsilons (at one size) of its data set, the middle cell's mean
    (``held``) against its interpolation from the two outer cells (:func:`_interpolate`, ``interp``), with the
    interpolated sampling half-width (``half``), the difference between the outer cells (``gap``) and the factor
    of the gap the held-out mean needs to be covered (``need``: sqrt(max(residual^2 - half^2, 0)) / gap; 0 when the
    sampling interval covers it, inf when it does not and the gap is 0)."""
    s = summary[(summary["privacy"] != "none") & summary["error"].notna()]
    rows = []
    for (ds, m), g in s.groupby(["dataset", "mechanism"], sort=True):
        cells = {(float(r["n_train"]), float(r["epsilon"])): r for r in g.to_dict("records")}
        ns = sorted({k[0] for k in cells})
        es = sorted({k[1] for k in cells})
        for axis, grid, other in (("n", ns, es), ("epsilon", es, ns)):
            for o in other:
                for i in range(1, len(grid) - 1):
                    key = [(grid[j], o) if axis == "n" else (o, grid[j]) for j in (i - 1, i, i + 1)]
                    if not all(k in cells for k in key):
                        continue
                    if axis == "n":
                        part = _interpolate(cells, [grid[i - 1], grid[i + 1]], [o],
                                            _weights([grid[i - 1], grid[i + 1]], grid[i]), [1.0])
                    else:
                        part = _interpolate(cells, [o], [grid[i - 1], grid[i + 1]], [1.0],
                                            _weights([grid[i - 1], grid[i + 1]], grid[i]))
                    held = float(cells[key[1]]["error"])
                    gap = part["gap_n"] + part["gap_e"]
                    excess = max((held - part["error"]) ** 2 - part["half"] ** 2, 0.0)
                    need = math.sqrt(excess) / gap if gap > 0 else (0.0 if excess == 0 else math.inf)
                    rows.append({"dataset": ds, "mechanism": m, "axis": axis, "n_train": key[1][0],
                                 "epsilon": key[1][1], "held": held, "interp": part["error"], "half": part["half"],
                                 "gap": gap, "need": need})
    return pd.DataFrame(rows, columns=["dataset", "mechanism", "axis", "n_train", "epsilon", "held", "interp", "half",
                                       "gap", "need"])


def interpolation_factors(residuals: pd.DataFrame) -> dict[tuple[str | None, str], float]:
    """The interpolation-error factor per (data set, axis) from :func:`loo_residuals`: the 95% quantile (the next
    higher observation) of ``need``, so that the widened interval covers at least 95% of the held-out means; a (data
    set, axis) with fewer than :data:`MIN_RESIDUALS` held-out cells is left out and the axis's factor pooled over the
    data sets (key ``(None, axis)``) stands in for it."""
    out: dict[tuple[str | None, str], float] = {}
    for axis, g in residuals.groupby("axis"):
        out[(None, str(axis))] = float(np.quantile(g["need"], _LEVEL, method="higher"))
        for ds, h in g.groupby("dataset"):
            if len(h) >= MIN_RESIDUALS:
                out[(str(ds), str(axis))] = float(np.quantile(h["need"], _LEVEL, method="higher"))
    return out


def _factor(factors: dict[tuple[str | None, str], float], dataset: str, axis: str) -> float | None:
    return factors.get((dataset, axis), factors.get((None, axis)))


def loo_coverage(summary: pd.DataFrame) -> dict[str, float]:
    """How often the widened interval covers a held-out committed mean (:func:`loo_residuals`), each mechanism's
    held-out cells judged with factors estimated from the other mechanisms' (so that no held-out mean sets its own
    interval): ``coverage`` of the widened interval, ``sampling_only`` of the cells' interpolated sampling interval
    alone (the interval before the interpolation term), ``cells`` the number of held-out means."""
    r = loo_residuals(summary)
    covered = []
    for m, g in r.groupby("mechanism"):
        factors = interpolation_factors(r[r["mechanism"] != m])
        for row in g.itertuples():
            f = _factor(factors, row.dataset, row.axis)
            half = math.hypot(row.half, (f if f is not None else 0.0) * row.gap)
            covered.append(abs(row.held - row.interp) <= half)
    return {"coverage": float(np.mean(covered)) if covered else math.nan,
            "sampling_only": float(np.mean(np.abs(r["held"] - r["interp"]) <= r["half"])) if len(r) else math.nan,
            "cells": float(len(r))}


#: The leave-one-out coverage of the committed grid, beside the off-grid checks (``paper_figures/recommend/``).
COVERAGE_FILE = "interval_coverage.csv"


def coverage_table(summary: pd.DataFrame) -> pd.DataFrame:
    """:func:`loo_coverage` of ``summary`` as a one-row table (``coverage``, ``sampling_only``, ``cells``)."""
    cov = loo_coverage(summary)
    return pd.DataFrame([{"coverage": cov["coverage"], "sampling_only": cov["sampling_only"],
                          "cells": int(cov["cells"])}])


@functools.lru_cache(maxsize=4)
def _factors_cached(path: str, stamp: tuple[int, int]) -> dict[tuple[str | None, str], float]:
    return interpolation_factors(loo_residuals(_read(Path(path).parent, Path(path).name)))


def _committed_factors(root: Path) -> dict[tuple[str | None, str], float]:
    """:func:`interpolation_factors` of the committed summary.csv at ``root`` (computed once per file version)."""
    st = (root / "summary.csv").stat()
    return dict(_factors_cached(str(root / "summary.csv"), (st.st_mtime_ns, st.st_size)))


def _cell_deltas(root: Path, like: str, ns: list[float]) -> dict[int, float]:
    """The delta the committed cells ran at, per bracketing size: runs.csv's ``delta`` (the largest at that size),
    else the frontier's rule (:func:`~dpkernels.experiments.frontier.cell_delta`)."""
    from dpkernels.experiments.frontier import cell_delta

    runs = _runs_info(root)
    out = {int(x): cell_delta(int(x)) for x in ns}
    if "delta" in runs:
        for x in out:
            d = runs[(runs["dataset"] == like) & (runs["n_train"] == x)]["delta"]
            if len(d):
                out[x] = float(d.max())
    return out


def _runs_info(root: Path) -> pd.DataFrame:
    if not (root / "runs.csv").is_file():
        return pd.DataFrame(columns=["dataset", "n_train", "d"])
    return _read(root, "runs.csv", ("dataset", "n_train", "d", "delta"))


def recommend(task: str, n: int, d: int, epsilon: float, delta: float, *, n_classes: int | None = None,
              like: str | None = None, results: str | Path | None = None) -> Recommendation:
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
        The total budget; delta = 0 asks for pure epsilon-DP; delta must be at most 1 / (10 n).
    n_classes : int or None
        The number of classes of a multi-class task (labels 0, ..., K - 1; required there); None or 2 for a binary
        task (labels -1 / +1).
    like : str or None
        The frontier data set to rest on (default: the one of ``task`` with the nearest d).
    results : path or None
        A folder with the frontier's ``summary.csv`` and ``recommendation.csv`` (and ``runs.csv``: dimensions and the
        cells' delta) (default: :func:`default_results`).

    Returns
    -------
    Recommendation

    Raises
    ------
    ValueError
        An unknown task, a bad n, d, epsilon or n_classes, or delta above 1 / (10 n).
    LookupError
        Missing results, an unknown data set, n or epsilon outside the committed grid, or a missing cell.

    Examples
    --------
    >>> from dpkernels import recommend
    >>> rec = recommend("binary", 20_000, 104, 0.5, 1e-6)  # doctest: +SKIP
    >>> print(rec)  # doctest: +SKIP
    """
    from dpkernels.experiments.frontier import DATASETS, MECHANISMS, PROTOCOLS

    if task not in ("binary", "multiclass"):
        raise ValueError(f"task must be 'binary' or 'multiclass', got {task!r}")
    if int(n) != n or n < 1 or int(d) != d or d < 1:
        raise ValueError(f"n and d must be positive integers, got n = {n!r}, d = {d!r}")
    if not (math.isfinite(epsilon) and epsilon > 0) or not (0.0 <= delta < 1.0):
        raise ValueError(f"need epsilon > 0 and 0 <= delta < 1, got ({epsilon!r}, {delta!r})")
    if delta > delta_ceiling(n):
        raise ValueError(f"delta = {delta:g} is above 1/(10 n) = {delta_ceiling(n):g}: a delta near 1/n allows "
                         "releasing a whole row with that probability (the frontier runs at delta = 1e-6, at most "
                         "1/(10 n)), and the library's fits refuse it; choose delta far below 1/n")
    K = _n_classes(task, n_classes)
    root = Path(results) if results is not None else default_results()
    summary, rec = _read(root, "summary.csv"), _read(root, "recommendation.csv")
    present = [ds for ds in summary["dataset"].unique() if ds in DATASETS and DATASETS[ds].task == task]
    given_like, near = like, []
    if like is None:
        dims = _dimensions(root, present)
        if not dims:
            raise LookupError(f"the committed results at {root} hold no {task} data set")
        like = min(dims, key=lambda ds: (abs(math.log(d / dims[ds])), ds))
        near = [ds for ds in sorted(dims) if ds != like and abs(math.log(d / dims[ds])) <= math.log(NEAR_D_FACTOR)]
    elif like not in present:
        raise LookupError(f"{like!r} is not a {task} data set of the committed results at {root} ({present})")
    s = summary[(summary["dataset"] == like) & (summary["privacy"] != "none")]
    ns = _bracket(sorted(float(x) for x in s["n_train"].unique()), float(n), "training size n")
    es = _bracket(sorted(float(x) for x in s["epsilon"].unique()), float(epsilon), "epsilon")
    wn, we = _weights(ns, n), _weights(es, epsilon)
    cells = [(int(a), b) for a in ns for b in es]
    weights = {(int(a), b): x * y for a, x in zip(ns, wn) for b, y in zip(es, we)}
    r = rec[rec["dataset"] == like]
    cell_rows = []
    for nn, ee in cells:
        row = r[(r["n_train"] == nn) & np.isclose(r["epsilon"], ee)]
        if row.empty:
            raise LookupError(f"the committed results at {root} have no {like} cell at n = {nn:,}, epsilon = {ee:g}")
        cell_rows.append(row.iloc[0])
    cells_df = pd.DataFrame(cell_rows)[["dataset", "n_train", "epsilon", "best", "error", "se", "advice"]]
    cells_df["best"] = [b if isinstance(b, str) else "" for b in cells_df["best"]]
    cells_df["weight"] = [weights[c] for c in cells]
    cells_df["chosen_error"] = math.nan  # the recommended mechanism's error in each cell (below, once it is chosen)
    factors = _committed_factors(root)
    f_n = _factor(factors, like, "n") if len(ns) == 2 else 0.0
    f_e = _factor(factors, like, "epsilon") if len(es) == 2 else 0.0
    how = ("read at the committed cell" if len(cells) == 1 else
           f"interpolated in (log n, log epsilon) between {len(cells)} committed cells")
    deltas = _cell_deltas(root, like, ns)
    cells_delta = max(deltas.values())
    ran_at = (f"{cells_delta:g}" if len(set(deltas.values())) == 1 else
              " and ".join(f"{v:g} (n = {k:,})" for k, v in deltas.items()))
    alternatives = _qualifying(s, ns, es, wn, we, delta, cells_delta, f_n or 0.0, f_e or 0.0)
    notes = [("The interval is the cell's t interval for the frontier's mean error over seeds." if len(cells) == 1
              else "The interval is for the frontier's mean error over seeds at your n and epsilon: the cells' "
              "sampling interval widened by the interpolation error measured by leave-one-out on the committed grid."),
             f"Rows must lie in the unit ball with a public constant feature (dpkernels.feature_maps); the frontier's "
             f"{like} has d = {_dimensions(root, [like]).get(like, 0)}, yours {d}."]
    if f_n is None or f_e is None:
        notes.append("The committed grid has no interior cell to measure the interpolation error by leave-one-out: the "
                     "interval covers the cells' sampling error only.")
    if task == "multiclass" and like in DATASETS and len(DATASETS[like].classes) != K:
        notes.append(f"The frontier's {like} has {len(DATASETS[like].classes)} classes, yours {K}: the errors are read "
                     f"at {len(DATASETS[like].classes)} classes.")
    for other in near:  # d alone does not say which data your rows resemble: the other near answer, side by side
        try:
            alt = recommend(task, n, d, epsilon, delta, n_classes=n_classes, like=other, results=results)
            said = (f"{alt.mechanism} at {alt.error:.3f} (95% interval {alt.interval[0]:.3f} to {alt.interval[1]:.3f})"
                    if alt.mechanism else "no private mechanism shown to beat the majority class")
        except LookupError as exc:
            said = f"no answer ({exc})"
        notes.append(f"Your d = {d} is also within a factor {NEAR_D_FACTOR:g} of {other}'s "
                     f"({_dimensions(root, [other]).get(other, 0)}); resting on {other} the answer is {said}. The "
                     f"nearest d chose {like}: pass like= to name the data set your rows resemble.")
    if "delta_spent_max" not in s.columns or "within_budget" not in s.columns:
        notes.append("These results predate stated budgets (no delta_spent_max / within_budget): each row's delta is "
                     "taken from its privacy kind, which may understate it.")
    if delta == 0.0:
        notes.append("delta = 0 asks for pure epsilon-DP: only rows whose fits stated delta = 0 qualify (the cells "
                     f"ran at delta = {ran_at}, which does not enter a pure row's noise).")
    elif not math.isclose(delta, cells_delta, rel_tol=1e-9):
        notes.append(f"Your delta ({delta:g}) differs from the delta the committed cells ran at ({ran_at}): the "
                     "errors and the interval are read at the cells' delta; the estimator is built at yours"
                     + (". A row calibrated to a delta runs at yours with more noise than the cells', so its error "
                        "here is optimistic; a row whose delta is its own (a floating-point delta) qualifies where "
                        "that is at most yours." if delta < cells_delta else "."))
    if alternatives.empty or not bool(alternatives["learns"].iloc[0]):
        if not alternatives.empty:
            notes.append(f"Lowest expected error: {alternatives['mechanism'].iloc[0]} "
                         f"({alternatives['error'].iloc[0]:.3f}), not shown to beat the majority class "
                         f"({alternatives['majority_error'].iloc[0]:.3f}) in every cell it rests on.")
        return Recommendation(task, int(n), int(d), float(epsilon), float(delta), K, like, "", "", "", "", math.nan,
                              (math.nan, math.nan), math.nan, (math.nan, math.nan), how, cells_df, alternatives,
                              tuple(notes))
    top = alternatives.iloc[0]
    mech = MECHANISMS[top["mechanism"]]
    rivals = alternatives[alternatives["learns"] & (alternatives["mechanism"] != top["mechanism"])]["mechanism"]
    versus = _versus(root, summary, like, weights, str(top["mechanism"]), list(rivals), len(alternatives) - 1)
    alternatives["versus"] = alternatives["mechanism"].map(lambda m: (versus or {}).get(m, ""))
    tied = None if versus is None else {c: tuple(m for m in rivals if versus[m] == c) for c in ("equivalent", "undecided")}
    own = s[s["mechanism"] == top["mechanism"]]
    cells_df["chosen_error"] = [next((float(r.error) for r in own.itertuples()
                                      if r.n_train == nn and math.isclose(r.epsilon, ee)), math.nan)
                                for nn, ee in cells]
    args = [repr(task), f"{int(n)}", f"{int(d)}", repr(float(epsilon)), repr(float(delta))]
    if task == "multiclass":
        args.append(f"n_classes={K}")
    if given_like is not None:
        args.append(f"like={like!r}")
    # no results=: the line reads the committed frontier (a folder's path is this machine's, and an executed
    # notebook's output must not carry it)
    call = f"estimator = dpkernels.recommend({', '.join(args)}).build()"
    try:
        text = _describe(_build(top["mechanism"], task, n, d, epsilon, delta, K))
    except (LookupError, ValueError) as exc:
        text = f"(not constructible here: {exc})"
    notes.append(f"Hyper-parameters: {mech.source}" + (f" ({PROTOCOLS['rule']})" if mech.protocol == "rule" else "")
                 + "; evaluated at your n, d, epsilon and delta.")
    notes.append("Labels -1 / +1 (classes=[-1, 1])." if task == "binary" else
                 f"Labels 0, ..., {K - 1} (the {K} classes of your public label set, in that order).")
    spread = float(top["spread"])
    lo, hi = float(top["lo"]), float(top["hi"])
    return Recommendation(task, int(n), int(d), float(epsilon), float(delta), K, like, str(top["mechanism"]),
                          mech.label, text, call, float(top["error"]), (lo, hi), spread,
                          (max(0.0, lo - _Z * spread), min(1.0, hi + _Z * spread)), how, cells_df, alternatives,
                          tuple(notes), None if tied is None else tied["equivalent"],
                          None if tied is None else tied["undecided"])


def _versus(root: Path, summary: pd.DataFrame, like: str, weights: dict[tuple[int, float], float], top: str,
            rivals: list[str], contenders: int) -> dict[str, str] | None:
    """How each of ``rivals`` stands against ``top`` at the asked (n, epsilon), as the map
    (:func:`~dpkernels.experiments.frontier_analysis.recommendation_map`) classes a cell's contenders against its
    winner (:func:`~dpkernels.experiments.frontier_analysis.paired_class`: ``"equivalent"``, ``"beaten"`` or
    ``"undecided"``): per committed cell the answer rests on (the keys of ``weights``), the mean and standard error of
    the paired per-seed differences of test error (rival minus ``top``, the runs at the rules' own constants) and the
    map's equivalence margin (:func:`~dpkernels.experiments.frontier_analysis.equivalence_margin` of ``top``'s error
    and the cell's best non-private reference), interpolated with the answer's weights (the standard errors in
    quadrature, as if the cells' differences were independent: they share seeds, whose differences are nearly
    uncorrelated between neighbouring cells of the committed grid, but not exactly; the fewest seeds give the degrees
    of freedom; "beaten" at alpha over ``contenders``, the number of other contenders ``top`` was picked among).  At a
    committed cell this is the map's own class.  No
    interpolation-error term enters: it states what the committed seeds separate.  ``None`` when ``root`` holds no
    per-seed runs."""
    from dpkernels.experiments.frontier_analysis import _mean_se, equivalence_margin, paired_class

    if not rivals:
        return {}
    if not (root / "runs.csv").is_file():
        return None
    runs = _read(root, "runs.csv", ("dataset", "mechanism", "n_train", "epsilon", "seed", "scale", "error"))
    if not {"mechanism", "epsilon", "seed", "error"} <= set(runs.columns):
        return None
    runs = runs[(runs["dataset"] == like) & runs["mechanism"].isin([top, *rivals])]
    if "scale" in runs:
        runs = runs[runs["scale"] == 1.0]
    s = summary[summary["dataset"] == like]
    margin, parts = 0.0, {m: [] for m in rivals}
    for (nn, ee), w in weights.items():
        own = s[(s["mechanism"] == top) & (s["n_train"] == nn) & np.isclose(s["epsilon"], ee)]["error"]
        refs = s[(s["privacy"] == "none") & (s["n_train"] == nn)]["error"]
        margin += w * equivalence_margin(float(own.iloc[0]), float(refs.min()) if len(refs) else math.nan)
        c = runs[(runs["n_train"] == nn) & np.isclose(runs["epsilon"], ee)]
        errors = c.pivot_table(index="seed", columns="mechanism", values="error", aggfunc="first")
        for m in rivals:
            diff = (errors[m] - errors[top]).dropna() if m in errors and top in errors else pd.Series(dtype=float)
            parts[m].append((w, *_mean_se(diff)))
    out = {}
    for m in rivals:
        mean = sum(w * d for w, d, _, _ in parts[m])
        se = math.sqrt(sum((w * e) ** 2 for w, _, e, _ in parts[m]))
        out[m] = paired_class(mean, se, min(k for _, _, _, k in parts[m]), margin, rivals=contenders)
    return out


def _dimensions(root: Path, datasets: list[str]) -> dict[str, int]:
    """Each data set's feature dimension (runs.csv's ``d``; else the public map's output)."""
    runs = _runs_info(root)
    out: dict[str, int] = {}
    if "d" in runs and len(runs):
        d = runs[["dataset", "d"]].drop_duplicates("dataset").set_index("dataset")["d"]
        out = {ds: int(d[ds]) for ds in datasets if ds in d.index}
    fallback = {"adult": 105, "kddcup99": 87, "satimage": 37, "shuttle": 10}
    return {ds: out.get(ds, fallback.get(ds, 0)) for ds in datasets if out.get(ds, fallback.get(ds))}


def _qualifying(s: pd.DataFrame, ns: list[float], es: list[float], wn: list[float], we: list[float], delta: float,
                cells_delta: float, factor_n: float, factor_e: float) -> pd.DataFrame:
    """Contenders (:func:`~dpkernels.experiments.frontier_analysis.set_aside`) run within budget in every cell,
    whose fits stated at most ``delta`` or, for a row calibrated to a delta budget (``takes_delta``: built at the
    asked delta, so its stated delta follows it) and a positive ``delta``, at most the cells' (``cells_delta``; referee
    D9: at 0.99 times the cells' delta such rows dropped out and the answer jumped to another mechanism), with their
    interpolated error, widened 95% interval (:func:`_half_width`), single-release standard deviation and
    majority-class error, and whether the committed paired test says they beat the majority class in every cell
    (``learns``); those that learn first, then by error."""
    from dpkernels.experiments.frontier import DELTA, MECHANISMS
    from dpkernels.experiments.frontier_analysis import set_aside

    rows = []
    for m, g in s.groupby("mechanism"):
        if m not in MECHANISMS or set_aside(m):
            continue
        cells, learns = {}, True
        allowed = max(delta, cells_delta) if delta > 0 and MECHANISMS[m].takes_delta else delta
        for nn in ns:
            for ee in es:
                c = g[(g["n_train"] == nn) & np.isclose(g["epsilon"], ee)]
                if c.empty:
                    break
                c = c.iloc[0]
                stated_delta = float(c["delta_spent_max"]) if "delta_spent_max" in c and \
                    pd.notna(c["delta_spent_max"]) else (0.0 if c["privacy"] == "pure" else DELTA)
                if not (bool(c.get("within_budget", True)) and stated_delta <= allowed and pd.notna(c["error"])):
                    break
                cells[(nn, ee)] = c
                learns = learns and c["beats_majority"] == "holds"
        if len(cells) < len(ns) * len(es):
            continue
        part = _interpolate(cells, ns, es, wn, we)
        half = _half_width(part, factor_n, factor_e)
        rows.append({"mechanism": m, "label": MECHANISMS[m].label, "error": part["error"],
                     "lo": max(0.0, part["error"] - half), "hi": min(1.0, part["error"] + half),
                     "spread": part["spread"], "majority_error": part["majority_error"], "learns": learns})
    out = pd.DataFrame(rows, columns=["mechanism", "label", "error", "lo", "hi", "spread", "majority_error", "learns"])
    return out.sort_values(["learns", "error", "mechanism"], ascending=[False, True, True]).reset_index(drop=True)
