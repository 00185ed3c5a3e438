"""The frontier's verdicts, recommendation map and cost curves, from the results of :mod:`.frontier`'s sweep.

Every comparison is **paired by seed**: for a given seed all mechanisms see the same training rows (nested prefixes,
one per size) and the same test set, so the unit of a test is the seed, and a difference is taken seed by seed before
its mean and standard error (t quantiles with seeds - 1 degrees of freedom).  The verdicts are the three-valued ones
of :mod:`dpkernels.verdicts`:

* **beats the majority class** (:func:`summarise`): the per-seed excess of the majority-class error (of the same test
  set) over the mechanism's error is positive with one-sided 95% confidence (:func:`~dpkernels.verdicts.
  difference_verdict`);
* **budgets as stated** (:func:`summarise`): a run is *within budget* when the (epsilon, delta) its fitted object
  states is at most the cell's target (epsilon, :func:`~dpkernels.experiments.frontier.cell_delta`), with delta = 0
  for a pure row; a mechanism with a run over budget is left out of its cell's comparison (``over_budget``);
* **the recommendation** (:func:`recommendation_map`), per (data set, n, epsilon): among the *contenders*
  (:func:`set_aside`: not a paper's setting tuned on these data, not an implementation cross-check) within budget that
  beat the majority class, the one with the lowest mean error (none where none does: "collect more rows or spend
  more budget"); the set statistically *equivalent* to it (paired TOST, :func:`~dpkernels.verdicts.
  equivalence_verdict`, within :func:`equivalence_margin`: :data:`REL_MARGIN` times the winner's mean error, at most
  :data:`GAP_MARGIN` times its gap to the non-private reference), the mechanisms it *beats* and those left
  *undecided*; the advice names only the winner and the equivalent mechanisms that also beat the majority class; the
  rows set aside are listed with their errors as references (``set_aside``);
* **claims** (:data:`CLAIMS`, the papers' own comparative sentences, quoted), tested only in the cells where either
  mechanism beats the majority class (:func:`claim_cells`): the mean over those cells of each cell's mean paired
  difference, every cell weighted alike, with a standard error clustered by seed (:func:`stratified_difference`; the
  largest sizes run fewer seeds, so a per-seed mean would weight the small cells more), one-sided at level
  0.05 / (number of claim tests) (Bonferroni over the family), with the power to detect :data:`MIN_EFFECT` stated;
* **the ablation** (:func:`ablation`): each public rule rerun with its constant times 0.1 and 10; per cell, the
  winner with all constants scaled alike, the mechanisms that win under *some* combination of the constants, and
  whether the rule's winner stays the winner under every combination (on mean errors);
* **cost curves** (:func:`cost_curves`, :func:`cost_slopes`): median fit time (untraced runs) and peak traced memory
  (the traced runs, :func:`~dpkernels.experiments.frontier.traced`, at one epsilon) per size, the least-squares
  log-log slope over every run of the grid and its standard error.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from dpkernels import verdicts
from dpkernels.experiments.frontier import DATASETS, DELTA, MECHANISMS, SCALES

__all__ = [
    "REL_MARGIN",
    "GAP_MARGIN",
    "MARGIN_FLOOR",
    "equivalence_margin",
    "MIN_EFFECT",
    "Claim",
    "CLAIMS",
    "QUESTIONS",
    "stratified_difference",
    "summarise",
    "recommendation_map",
    "set_aside",
    "first_sizes",
    "claim_verdicts",
    "claim_cells",
    "reference_verdicts",
    "cost_curves",
    "cost_slopes",
    "paired_class",
    "beaten_alpha",
    "ablation",
    "selection_pairs",
    "within_budget",
    "BudgetCheck",
    "budget_checks",
    "states_a_guarantee",
    "ADVICE_NONE",
]

#: Equivalence margin of the recommendation map, relative to the winner's mean test error: a mechanism is
#: "equivalent" when its paired difference from the winner lies within +-10% of the winner's error (0.016 at an
#: error of 0.16, 0.0004 at 0.004), and within :func:`equivalence_margin`'s share of the winner's privacy gap.
REL_MARGIN = 0.1
#: The share of the winner's privacy gap (its error above the best non-private reference of the same size) the
#: equivalence margin may not exceed: equivalent mechanisms pay at most 1.25 times the winner's price for privacy
#: (referee D3: at Adult, 33,000 rows, eps = 8, 10% of 0.162 admitted 0.177, twice the winner's gap of 0.014).
GAP_MARGIN = 0.25
#: The equivalence margin's floor where the winner's gap is tiny (the reference as good as the winner): 0.1 percentage
#: point, itself capped by :data:`REL_MARGIN` times the winner's error.
MARGIN_FLOOR = 0.001
#: The smallest difference in test error a claim's test should detect (its power is stated against it).
MIN_EFFECT = 0.01
#: The advice of a cell where no private mechanism beats the majority class.
ADVICE_NONE = "collect more rows or spend more budget"


@dataclass(frozen=True)
class Claim:
    """A paper's own comparative statement: ``a`` beats ``b`` (lower test error), quoted with its place."""

    id: str
    paper: str
    where: str
    quote: str
    a: str
    b: str
    datasets: tuple[str, ...]


#: The papers' own comparative statements about mechanisms of this workbook (no other sentence of the five papers
#: compares two of them), each tested under both hyper-parameter protocols: the public rules, and private selection
#: (ids ending in "-selected").
_CLAIMS_RULE: tuple[Claim, ...] = (
    Claim("F-claim-objective-output-logistic", "Chaudhuri et al. (2011)", "abstract; Section 7 (Figures 2-3)",
          "Our results show that both theoretically and empirically, objective perturbation is superior to the "
          "previous state-of-the-art, output perturbation, in managing the inherent tradeoff between privacy and "
          "learning performance.", "chaudhuri-objective-logistic", "chaudhuri-output-logistic", ("adult", "kddcup99")),
    Claim("F-claim-objective-output-huber", "Chaudhuri et al. (2011)", "abstract; Section 7 (Figures 2-3, Huber SVM)",
          "Our results show that both theoretically and empirically, objective perturbation is superior to the "
          "previous state-of-the-art, output perturbation, in managing the inherent tradeoff between privacy and "
          "learning performance.", "chaudhuri-objective-huber", "chaudhuri-output-huber", ("adult", "kddcup99")),
    Claim("F-claim-park-ova", "Park (2022)", "Section 7.4 (SVM WEIGHT = Rubinstein et al.'s PrivateSVM with random "
          "features, one-against-all, Section 7.3)",
          "In general, the proposed method shows higher accuracy than SVM WEIGHT and SVM SEMI in all datasets and shows "
          "almost close performance to SVM OUTPUT.", "park-epc", "rubinstein-rff", ("satimage", "shuttle")),
)
CLAIMS: tuple[Claim, ...] = _CLAIMS_RULE + tuple(
    Claim(f"{c.id}-selected", c.paper, c.where + "; both under private selection", c.quote, f"{c.a}-selected",
          f"{c.b}-selected", c.datasets) for c in _CLAIMS_RULE)

#: Our questions (no paper states them): (a, b, what is asked).  Shown with the same paired statistics, not as claims.
QUESTIONS: tuple[tuple[str, str, str], ...] = (
    ("chaudhuri-objective-logistic-selected", "chaudhuri-objective-logistic",
     "does Algorithm 4's private choice of Lambda beat the public rule?"),
    ("bassily-alg2-selected", "bassily-alg2", "does the private choice of rho beat the public rule?"),
    ("park-epc", "park-table-7.1", "Park's public rule against the thesis's setting tuned on these data"),
    ("chaudhuri-objective-logistic", "diffprivlib-lr", "our objective perturbation against diffprivlib's (the same mechanism)"),
    ("bassily-alg2", "chaudhuri-objective-logistic", "Bassily's Algorithm 2 against objective perturbation"),
    ("chaudhuri-kernel", "rubinstein-rff", "random-feature ERM: objective perturbation against output perturbation"),
    ("hall-nystrom", "rubinstein-rff", "Hall's kernel machine against Rubinstein's PrivateSVM"),
    ("noisy-gd", "chaudhuri-objective-logistic",
     "noisy gradient descent (DP-GD) against objective perturbation (Yu et al.: gradient perturbation is underrated)"),
    ("noisy-gd-selected", "chaudhuri-objective-logistic-selected",
     "DP-GD against objective perturbation, both under private selection"),
)


def selection_pairs() -> tuple[tuple[str, str, str], ...]:
    """(selected row, rule row, question) for every mechanism with a private-selection row."""
    return tuple((f"{m.name}-selected", m.name, f"does private selection beat the public rule for {m.name}?")
                 for m in MECHANISMS.values() if m.select)


def _eps_key(eps: object) -> float:
    return -1.0 if eps is None or (isinstance(eps, float) and math.isnan(eps)) else float(eps)


def stratified_difference(df: pd.DataFrame, a: str, b: str, cells: Sequence[tuple[str, int, float]]
                          ) -> tuple[float, float, int | None, int]:
    """The mean over ``cells`` ((dataset, n, epsilon)) of each cell's mean paired difference error(b) - error(a)
    (positive: a is better), every cell weighted alike, and its standard error clustered by seed.

    The cells' seeds are unbalanced (the largest sizes run fewer seeds), and one seed's runs in different cells share
    its draws (issue 29, D11).  With k_c seeds in cell c, C cells and S seeds, the estimate is
    theta = (1/C) sum_c dbar_c = sum_s u_s with u_s = sum_{c run by s} d_sc / (C k_c), a sum over independent seeds;
    its variance is estimated from the seeds' centred terms v_s = sum_c (d_sc - dbar_c) / (C k_c) as
    S / (S - 1) sum_s v_s^2 (the cluster-robust estimator with its small-sample factor), with S - 1 degrees of freedom.
    With every seed in every cell this is exactly the paired t-test on the seeds' means over the cells.  A cell run by
    fewer than two seeds carries no spread and is left out.

    Returns
    -------
    (theta, se, dof, S)
        NaN, NaN, None, 0 when no cell has two seeds; se NaN and dof None with a single seed.
    """
    if not cells:
        return math.nan, math.nan, None, 0
    sel = df.assign(_e=df["epsilon"].map(_eps_key))
    keys = pd.MultiIndex.from_tuples([(d, int(n), _eps_key(e)) for d, n, e in cells], names=["dataset", "n_train", "_e"])
    err = {}
    for m in (a, b):
        s = sel[sel["mechanism"] == m].set_index(["dataset", "n_train", "_e", "seed"])["error"]
        err[m] = s[s.index.droplevel("seed").isin(keys)]
    wide = (err[b] - err[a]).dropna().unstack(["dataset", "n_train", "_e"])  # seeds x cells
    k = wide.notna().sum(axis=0)
    wide = wide.loc[:, k >= 2]
    wide = wide.loc[wide.notna().any(axis=1)]
    if wide.shape[1] == 0:
        return math.nan, math.nan, None, 0
    k, C, S = wide.notna().sum(axis=0), wide.shape[1], wide.shape[0]
    means = wide.mean(axis=0)
    theta = float(means.mean())
    if S < 2:
        return theta, math.nan, None, S
    v = ((wide - means) / (C * k)).sum(axis=1)  # NaN (a cell the seed did not run) adds nothing
    return theta, float(math.sqrt(S / (S - 1) * float((v ** 2).sum()))), S - 1, S


def _mean_se(x: pd.Series | np.ndarray) -> tuple[float, float, int]:
    x = np.asarray(x, dtype=float)
    n = len(x)
    if n == 0:
        return math.nan, math.nan, 0
    if n == 1:
        return float(x[0]), math.nan, 1
    return float(x.mean()), float(x.std(ddof=1) / math.sqrt(n)), n


def _detectable(se: float, dof: int | None, alpha: float = verdicts.ALPHA) -> float:
    """The smallest paired difference a one-sided test at ``alpha`` (default 5%) detects with 80% power (t quantile
    with ``dof``)."""
    from scipy import stats

    if dof is None or not math.isfinite(se):
        return math.nan
    return float((stats.t.ppf(1 - alpha, dof) + stats.norm.ppf(verdicts.POWER_TARGET)) * se)


def _beats(excess: pd.Series) -> verdicts.Outcome:
    m, se, k = _mean_se(excess)
    return verdicts.difference_verdict(m, se, min_effect=MIN_EFFECT, df=k - 1 if k > 1 else None)


def _cell_delta(df: pd.DataFrame, delta: float | None) -> pd.Series | float:
    """Each run's target delta: ``delta`` if given, else the run's own (its configuration's ``delta`` column), else
    :data:`~dpkernels.experiments.frontier.DELTA`."""
    if delta is not None:
        return float(delta)
    return df["delta"].astype(float) if "delta" in df else DELTA


def within_budget(df: pd.DataFrame, delta: float | None = None) -> pd.Series:
    """Per run: whether the (epsilon, delta) its fitted object states is within the cell's target (the run's epsilon
    and delta, or ``delta``; a pure row: delta exactly 0).  A refused run spent nothing."""
    pure = df["mechanism"].map(lambda m: MECHANISMS[m].privacy == "pure")
    ok_eps = df["epsilon_spent"] <= df["epsilon"]
    ok_delta = (df["delta_spent"] <= _cell_delta(df, delta)) & (~pure | (df["delta_spent"] == 0.0))
    return (ok_eps & ok_delta) | df["error"].isna()


@dataclass(frozen=True)
class BudgetCheck:
    """One of the frontier's budget checks, computed from what the fitted objects stated (:func:`budget_checks`)."""

    id: str
    claim: str
    check: str
    measured: float  #: the largest excess (epsilon) or value (delta) over the runs it covers
    bound: float
    runs: int  #: the runs it covers
    over: tuple[str, ...]  #: the mechanisms with a run beyond the bound


def budget_checks(df: pd.DataFrame, delta: float | None = None) -> list[BudgetCheck]:
    """The budget checks of the frontier, read from every run's *stated* (epsilon, delta) (``epsilon_spent``,
    ``delta_spent``: the composition of every fitted part's ``guarantee_``,
    :func:`~dpkernels.experiments.frontier.stated`), never from a mechanism's declared kind:

    * ``F-budget``: no private run states more epsilon than its cell's (largest stated epsilon minus the cell's);
    * ``F-budget-delta``: no private run, whatever its declared kind, states more delta than its cell's (the run's
      ``delta``, or ``delta`` if given; the measured value is the largest ratio of stated to allowed delta, the bound
      1);
    * ``F-budget-pure``: every run of a row declared pure (delta = 0: :attr:`~dpkernels.experiments.frontier.
      Mechanism.privacy`) states delta = 0 exactly, so that a row labelled pure is pure (objective perturbation's
      floating-point-safe release states a delta of about 1e-30, so its rows are (epsilon, delta) rows).

    A refused run (no release) states nothing and is left out, and so are diffprivlib's runs
    (:func:`states_a_guarantee`): its estimator reads the label set from the training data, so what its accountant
    books is not a guarantee and a run of it cannot show that a row is pure."""
    priv = df[(df["mechanism"].map(lambda m: MECHANISMS[m].privacy) != "none") & df["error"].notna()
              & df["mechanism"].map(states_a_guarantee)]
    pure = priv[priv["mechanism"].map(lambda m: MECHANISMS[m].privacy) == "pure"]

    def over(frame: pd.DataFrame, mask: pd.Series) -> tuple[str, ...]:
        return tuple(sorted(set(frame.loc[mask, "mechanism"])))

    excess = priv["epsilon_spent"] - priv["epsilon"]
    ratio = priv["delta_spent"] / _cell_delta(priv, delta)
    return [
        BudgetCheck("F-budget", "equal total privacy cost, as stated",
                    "largest stated epsilon (certified-solver factors and one-against-all composition included) minus "
                    "the cell's epsilon, over every private run", float(excess.max()) if len(priv) else math.nan, 0.0,
                    len(priv), over(priv, excess > 0.0)),
        BudgetCheck("F-budget-delta", "equal total privacy cost (delta), as stated",
                    "largest ratio of the delta stated by a private run (any declared kind) to its cell's delta "
                    "(1e-6, or 1 / (10 n) above 100,000 rows)", float(ratio.max()) if len(priv) else math.nan, 1.0,
                    len(priv), over(priv, ratio > 1.0)),
        BudgetCheck("F-budget-pure", "pure rows are pure", "largest delta stated by a run of a row declared pure "
                    "epsilon-DP", float(pure["delta_spent"].max()) if len(pure) else math.nan, 0.0, len(pure),
                    over(pure, pure["delta_spent"] > 0.0)),
    ]


def states_a_guarantee(mechanism: str) -> bool:
    """Whether a run of ``mechanism`` states a privacy guarantee the budget checks can read: every row but
    diffprivlib's, whose estimator reads the label set from the training data (see :func:`set_aside`)."""
    return MECHANISMS[mechanism].paper != "diffprivlib"


def summarise(df: pd.DataFrame) -> pd.DataFrame:
    """Per (data set, n, mechanism, epsilon): mean test error and its standard error over the seeds it released on
    (``refused``: the seeds whose certified solver refused to release), the majority-class error, whether the mechanism
    beats it (three-valued, paired by seed), median fit seconds and peak memory (NaN in a cell with no traced run:
    :func:`~dpkernels.experiments.frontier.traced`), the largest (epsilon, delta) its fits stated and whether every
    run stayed within the cell's budget (:func:`within_budget`)."""
    rows = []
    key = df.assign(_e=df["epsilon"].map(_eps_key), _ok=within_budget(df) if len(df) else [])
    for (ds, n, m, e), g in key.groupby(["dataset", "n_train", "mechanism", "_e"], sort=True):
        refused = int(g["error"].isna().sum())
        ok = bool(g["_ok"].all())
        g = g[g["error"].notna()]
        mean, se, k = _mean_se(g["error"])
        beat = _beats(g["base_error"] - g["error"])
        mech = MECHANISMS[m]
        rows.append({"dataset": ds, "task": DATASETS[ds].task, "n_train": int(n), "mechanism": m,
                     "epsilon": math.nan if e < 0 else e, "label": mech.label, "paper": mech.paper,
                     "privacy": mech.privacy, "family": mech.family, "protocol": mech.protocol, "error": mean,
                     "se": se, "n_seeds": k, "refused": refused,
                     "base_error": float(g["base_error"].mean()) if k else math.nan,
                     "beats_majority": beat.status,
                     "fit_seconds": float(_timed(g).median()) if k else math.nan,
                     "peak_mb": float(g["peak_mb"].median()) if g["peak_mb"].notna().any() else math.nan,
                     "epsilon_spent_max": float(g["epsilon_spent"].max()) if k else math.nan,
                     "delta_spent_max": float(g["delta_spent"].max()) if k else math.nan,
                     "within_budget": ok if mech.privacy != "none" else True})
    return pd.DataFrame(rows)


_BEATS = {True: "beats the majority class", False: "not shown to beat the majority class"}


def set_aside(mechanism: str) -> str:
    """Why the recommendation map and :func:`dpkernels.recommend` never name ``mechanism`` as a winner, an equivalent
    or a candidate ("" when they may).  Two kinds of row are set aside, and kept visible as labelled references:

    * a row whose :attr:`~dpkernels.experiments.frontier.Mechanism.protocol` is ``"paper"`` (Park's Table 7.1, tuned
      by the thesis on satimage and shuttle): issue 29 asks that every mechanism's hyper-parameters come from the same
      protocol (a public rule or private selection); a setting tuned on the frontier's own data is not one of them;
    * diffprivlib's rows (:attr:`~dpkernels.experiments.frontier.Mechanism.paper` ``"diffprivlib"``): an
      implementation cross-check of objective perturbation (the same mechanism; :data:`QUESTIONS` compares the two),
      whose estimator reads the label set from the training data (diffprivlib 0.6.6; its errors quote the class), so
      it cannot be the advice of a workbook whose label sets are public.  The same reason holds for the map and for
      :func:`dpkernels.recommend`: the map's ``best`` is the advice."""
    mech = MECHANISMS[mechanism]
    if mech.protocol == "paper":
        return "a paper's setting tuned on the frontier's own data sets (a labelled reference, not a contender)"
    if mech.paper == "diffprivlib":
        return "an implementation cross-check that reads the label set from the training data"
    return ""


def equivalence_margin(winner_error: float, reference_error: float, rel_margin: float = REL_MARGIN) -> float:
    """The recommendation map's equivalence margin: ``rel_margin`` times the winner's error, and at most
    :data:`GAP_MARGIN` times its privacy gap (winner minus the non-private reference), but not below
    :data:`MARGIN_FLOOR` unless the first cap is smaller; ``rel_margin`` times the error where no reference ran.

    >>> round(equivalence_margin(0.162, 0.148), 4)  # referee D3's cell: 0.177 is not within 0.0035 of 0.162
    0.0035
    >>> round(equivalence_margin(0.0041, 0.0005), 5)  # a small error: 10% of it binds
    0.00041
    """
    rel = rel_margin * float(winner_error)
    if not math.isfinite(float(reference_error)):
        return rel
    return min(rel, max(GAP_MARGIN * (float(winner_error) - float(reference_error)), MARGIN_FLOOR))


def paired_class(mean: float, se: float, k: int, margin: float, rivals: int = 1) -> str:
    """How a contender stands against a cell's winner from the mean and standard error of their ``k`` paired per-seed
    differences of test error (contender minus winner): ``"equivalent"`` when the paired TOST within ``margin`` holds
    (:func:`dpkernels.verdicts.equivalence_verdict`), else ``"beaten"`` when the one-sided paired test says the winner
    is better (:func:`dpkernels.verdicts.difference_verdict`) at level alpha / ``rivals``, else ``"undecided"``; t
    with k - 1 degrees of freedom (normal with fewer than two).

    The winner is picked on the same seeds (the lowest mean), which favours it.  ``rivals`` is the number of the
    cell's other contenders, any of which could have been picked: if the contender were truly the best, the test
    against whichever rival was picked rejects with probability at most the sum over the rivals of alpha / ``rivals``,
    i.e. alpha (Bonferroni over the possible winners, :func:`beaten_alpha`), so "beaten" keeps its level whatever the
    pick.  Equivalence is not corrected: where the contender is truly no better than the winner, the pick pulls the
    winner's mean down and makes equivalence harder to show, not easier; where the pick was wrong (the contender truly
    better), it pulls their difference towards 0 and can make them look equivalent, which names the better one in
    the advice all the same."""
    dof = k - 1 if k > 1 else None
    if verdicts.equivalence_verdict(mean, se, margin=margin, df=dof).status == "holds":
        return "equivalent"
    if verdicts.difference_verdict(mean, se, min_effect=margin, df=dof, alpha=beaten_alpha(rivals)).status == "holds":
        return "beaten"
    return "undecided"


def beaten_alpha(rivals: int) -> float:
    """The level of :func:`paired_class`'s "beaten" test: 5% over the number of the other contenders the winner was
    picked among (at least one)."""
    return verdicts.ALPHA / max(int(rivals), 1)


def recommendation_map(df: pd.DataFrame, summary: pd.DataFrame, rel_margin: float = REL_MARGIN) -> pd.DataFrame:
    """Per (data set, n, epsilon), among the private contenders (:func:`set_aside`) whose runs stayed within the cell's
    budget (the others are listed in ``over_budget``): the winner, i.e. the lowest mean test error among those that
    beat the majority class (``best`` is empty where none does); the contenders equivalent to it (paired TOST within
    :func:`equivalence_margin` with ``rel_margin``, the ``margin`` column), those it beats (one-sided paired test,
    Bonferroni over the cell's other contenders since the winner is picked on the same seeds: :func:`paired_class`)
    and the undecided rest, with the median over those comparisons of the smallest difference the seeds detect with
    80% power (``detectable``); the lowest mean error of any contender (``lowest``, for the record); the rows set
    aside that ran within budget, each with its mean error and whether it beats the majority class (``set_aside``,
    references only);
    the best non-private reference at that size; and the advice, which names the winner and the equivalent
    mechanisms that also beat the majority class, or :data:`ADVICE_NONE`.  A cell without a contender is left out."""
    priv = summary[summary["privacy"] != "none"]
    refs = summary[summary["privacy"] == "none"]
    # per cell, the errors by seed (rows) and mechanism (columns): the paired differences of one cell
    runs = {key: g.pivot_table(index="seed", columns="mechanism", values="error", aggfunc="first")
            for key, g in df[df["epsilon"].notna()].groupby(["dataset", "n_train", "epsilon"], sort=False)}
    rows = []
    for (ds, n, e), g in priv.groupby(["dataset", "n_train", "epsilon"], sort=True):
        refused = g[g["refused"] > 0]["mechanism"].tolist()
        over = g[~g["within_budget"].astype(bool)]["mechanism"].tolist()
        g = g[g["error"].notna() & g["within_budget"].astype(bool)].sort_values(["error", "mechanism"])
        aside = g[g["mechanism"].map(lambda m: bool(set_aside(m)))]
        g = g[~g["mechanism"].isin(aside["mechanism"])]
        if g.empty:
            continue
        beating = g[g["beats_majority"] == "holds"]
        learns = not beating.empty
        best = (beating if learns else g).iloc[0]
        r = refs[(refs["dataset"] == ds) & (refs["n_train"] == n)].sort_values("error")
        margin = equivalence_margin(float(best["error"]), float(r["error"].iloc[0]) if len(r) else math.nan, rel_margin)
        equivalent, beaten, undecided, mdes = [], [], [], []
        if learns:
            for m in g["mechanism"]:
                if m == best["mechanism"]:
                    continue
                errors = runs[(ds, n, e)]
                mean, se, k = _mean_se((errors[m] - errors[best["mechanism"]]).dropna())
                mdes.append(_detectable(se, k - 1 if k > 1 else None, beaten_alpha(len(g) - 1)))
                {"equivalent": equivalent, "beaten": beaten, "undecided": undecided}[
                    paired_class(mean, se, k, margin, rivals=len(g) - 1)].append(m)
        named = [best["mechanism"], *[m for m in equivalent if m in set(beating["mechanism"])]] if learns else []
        rows.append({
            "dataset": ds, "task": best["task"], "n_train": int(n), "epsilon": float(e),
            "best": best["mechanism"] if learns else "", "best_label": best["label"] if learns else "",
            "error": float(best["error"]) if learns else math.nan, "se": float(best["se"]) if learns else math.nan,
            "n_seeds": int(best["n_seeds"]), "margin": margin if learns else math.nan,
            "detectable": float(np.nanmedian(mdes)) if mdes and not all(math.isnan(x) for x in mdes) else math.nan,
            "lowest": g.iloc[0]["mechanism"], "lowest_error": float(g.iloc[0]["error"]),
            "base_error": float(best["base_error"]), "beats_majority": best["beats_majority"],
            "equivalent": ";".join(equivalent), "beaten": ";".join(beaten), "undecided": ";".join(undecided),
            "n_mechanisms": len(g), "refused": ";".join(refused), "over_budget": ";".join(over),
            "set_aside": ";".join(f"{a.mechanism}={a.error:.4g} ({_BEATS[a.beats_majority == 'holds']})"
                                  for a in aside.itertuples()),
            "any_beats_majority": learns, "beating_majority": ";".join(beating["mechanism"]),
            "reference": r["mechanism"].iloc[0] if len(r) else "",
            "reference_error": float(r["error"].iloc[0]) if len(r) else math.nan,
            "advice": " or ".join(named) if learns else ADVICE_NONE,
        })
    return pd.DataFrame(rows)


def first_sizes(summary: pd.DataFrame) -> pd.DataFrame:
    """Per (data set, epsilon, private mechanism): the smallest training size of the grid from which on it beats the
    majority class at every larger size of the grid (NaN: at no size, or not from some size on), and the largest size
    it was run at."""
    rows = []
    priv = summary[summary["privacy"] != "none"]
    for (ds, e, m), g in priv.groupby(["dataset", "epsilon", "mechanism"], sort=True):
        g = g.sort_values("n_train")
        ok = (g["beats_majority"] == "holds").to_numpy()
        first = math.nan
        for i in range(len(ok)):
            if ok[i:].all():
                first = int(g["n_train"].iloc[i])
                break
        rows.append({"dataset": ds, "epsilon": float(e), "mechanism": m, "label": MECHANISMS[m].label,
                     "first_n": first, "largest_n": int(g["n_train"].max()),
                     "error_at_largest": float(g["error"].iloc[-1])})
    return pd.DataFrame(rows)


def claim_cells(summary: pd.DataFrame, a: str, b: str, dataset: str) -> list[tuple[str, int, float]]:
    """The (data set, n, epsilon) cells where both ``a`` and ``b`` ran within the cell's budget and at least one of them
    beats the majority class.  A comparison of two classifiers that learn nothing says nothing; where one learns and
    the other does not, it does (leaving those cells out would make a claim against a mechanism that never learns
    untestable by construction)."""
    s = summary[(summary["dataset"] == dataset) & summary["mechanism"].isin([a, b])]
    s = s.assign(beats_majority=s["beats_majority"].where(s["within_budget"].astype(bool), "over budget"))
    both = s.pivot_table(index=["n_train", "epsilon"], columns="mechanism", values="beats_majority", aggfunc="first")
    if a not in both or b not in both:
        return []
    valid = (both[a] != "over budget") & (both[b] != "over budget") & both[a].notna() & both[b].notna()
    ok = both[valid & ((both[a] == "holds") | (both[b] == "holds"))]
    return [(dataset, int(n), float(e)) for n, e in ok.index]


def never_learns(summary: pd.DataFrame, a: str, b: str, dataset: str) -> list[str]:
    """Those of ``a`` and ``b`` that beat the majority class in no (n, epsilon) cell of ``dataset`` within their
    budget: a claim that one beats the other is untestable when either never learns (issue 29: PrivateSVM at C =
    sqrt(n) never beats the majority class on satimage or shuttle)."""
    s = summary[(summary["dataset"] == dataset) & summary["within_budget"].astype(bool)]
    return [m for m in (a, b) if not (s.loc[s["mechanism"] == m, "beats_majority"] == "holds").any()]


def claim_verdicts(df: pd.DataFrame, summary: pd.DataFrame, claims: Sequence[Claim] = CLAIMS,
                   pairs: Sequence[tuple[str, str, str]] | None = None) -> pd.DataFrame:
    """One verdict per (claim, data set): "a beats b" on the cells' mean paired difference, the cells where either
    beats the majority class (:func:`claim_cells`) weighted alike, its standard error clustered by seed
    (:func:`stratified_difference`), one-sided at 0.05 / (number of tests) (Bonferroni); inconclusive,
    with the reason, when no cell qualifies or when either mechanism never beats the majority class
    (:func:`never_learns`: untestable), and "skipped", with the reason, out of the Bonferroni count, where either row
    does not run on the data set (a profile that leaves it out).  ``pairs`` (a, b, question) runs the same
    statistics on our questions over every data set where both rows run ("not applicable" elsewhere, left out of the
    Bonferroni count: diffprivlib's row runs on the binary sets only, Park's on the multi-class ones)."""
    items = [(c.id, c.a, c.b, ds, c.quote) for c in claims for ds in c.datasets] if pairs is None else \
        [(f"Q-{a}-vs-{b}", a, b, ds, q) for a, b, q in pairs for ds in sorted(DATASETS)]
    ran = {ds: set(g["mechanism"]) for ds, g in summary.groupby("dataset")}
    missing = {i: [m for m in item[1:3] if m not in ran.get(item[3], set())] for i, item in enumerate(items)}
    alpha = verdicts.ALPHA / max(1, sum(not v for v in missing.values()))
    rows = []
    for i, (cid, a, b, ds, text) in enumerate(items):
        if missing[i]:  # about a row this data set does not run: no test, and out of the Bonferroni count
            rows.append({"id": f"{cid}-{ds}", "dataset": ds, "a": a, "b": b, "text": text, "cells": 0, "cell_list": "",
                         "n_seeds": 0, "mean_diff": math.nan, "se": math.nan, "alpha": math.nan,
                         "status": "not applicable" if pairs is not None else "skipped",
                         "criterion": f"not tested: {' and '.join(missing[i])} "
                                      f"{'does' if len(missing[i]) == 1 else 'do'} not run on {ds}",
                         "power": math.nan})
            continue
        cells = claim_cells(summary, a, b, ds)
        mean, se, dof, k = stratified_difference(df, a, b, cells)
        never = never_learns(summary, a, b, ds)
        if not cells:
            out = verdicts.Outcome("inconclusive", "no (n, epsilon) cell where either mechanism beats the majority class")
        elif never:
            out = verdicts.Outcome("inconclusive", f"untestable here: {' and '.join(never)} beats the majority class "
                                   "in no cell within its budget, so 'beating' it is beating a classifier that learns "
                                   "nothing")
        else:
            out = verdicts.difference_verdict(mean, se, min_effect=MIN_EFFECT, df=dof, alpha=alpha)
        rows.append({"id": f"{cid}-{ds}", "dataset": ds, "a": a, "b": b, "text": text, "cells": len(cells),
                     "cell_list": "; ".join(f"n={n} eps={e:g}" for _, n, e in cells), "n_seeds": k,
                     "mean_diff": mean, "se": se, "alpha": alpha, "status": out.status, "criterion": out.criterion,
                     "power": out.power})
    return pd.DataFrame(rows)


def reference_verdicts(summary: pd.DataFrame, df: pd.DataFrame, factor: float = 0.8) -> pd.DataFrame:
    """The protocol's sanity check: at each data set's full size every non-private reference that reaches it errs
    clearly below the majority class, i.e. its mean error is at most ``factor`` x the majority error with one-sided
    95% confidence (a degenerate setting is a bug of the experiment, not a finding)."""
    rows = []
    for ds, spec in DATASETS.items():
        s = summary[(summary["dataset"] == ds) & (summary["privacy"] == "none")]
        if s.empty:
            continue
        n = int(s["n_train"].max())
        for m in s[s["n_train"] == n]["mechanism"]:
            g = df[(df["dataset"] == ds) & (df["mechanism"] == m) & (df["n_train"] == n)]
            mean, se, k = _mean_se(g["error"] - factor * g["base_error"])
            out = verdicts.bound_verdict(mean, 0.0, se=0.0 if k < 2 else se, df=k - 1 if k > 1 else None)
            rows.append({"dataset": ds, "mechanism": m, "n_train": n, "full": n == spec.n_full,
                         "error": float(g["error"].mean()), "base_error": float(g["base_error"].mean()),
                         "bound": factor * float(g["base_error"].mean()), "status": out.status,
                         "criterion": f"error - {factor:g} x majority error: " + out.criterion})
    return pd.DataFrame(rows)


def ablation(df: pd.DataFrame) -> pd.DataFrame:
    """How much the rule rows' ranking depends on the rules' constants, per (data set, n, epsilon) cell of the
    ablation grid: the contenders (:func:`set_aside`) of protocol "rule" with a constant, run at every scale of
    :data:`~dpkernels.experiments.frontier.SCALES`, on the seeds every one of those runs has (the scale-1 rows run
    more seeds than the ablation's: only the common ones enter a mean or a test, so that every mean is over the same
    seeds).

    A (mechanism, scale) *learns* when the one-sided paired test over those seeds says it beats the majority class
    (its runs' ``base_error``), as the map reads a cell.  Columns: ``seeds``; the winner at each common scale (all
    constants times s, the lowest mean among those that learn, "" where none learns: descriptive) and Kendall's tau
    between the mean errors at scale 1 and at each other common scale; ``possible_winners``, the mechanisms that win
    under *some* combination of per-mechanism scales (one that learns at some scale, below every other at a scale where
    that other is worse or does not learn).

    The robustness claim is about the rules' winner, ``winner``: chosen as the map chooses (the lowest mean error among
    the mechanisms shown to learn at scale 1) on the scale-1 rows' *other* seeds (``chosen_on`` "other seeds", their
    count ``choice_seeds``), so that the seeds it is tested on did not pick it; where no other seeds ran it is chosen on
    the tested seeds and ``chosen_on`` says "tested seeds" (then its robustness is never "holds": the pick favours
    it).  ``robust``, on the means of the tested seeds: the winner learns at every scale and its worst mean is below
    every other (mechanism, scale)'s that learns (only those can win under the map's rule: it wins under every
    combination).  ``robust_test``, the claim tested: "holds" when the winner learns at each of its scales and every
    one-sided paired test of the winner at each of its scales against every other (mechanism, scale) -- whether or
    not that one learns, so that a cell where nothing else learns is not a vacuous hold -- shows the winner better (an
    intersection-union test, at 5% without a correction); "violated" when some other (mechanism, scale) that learns is
    shown better than the winner at one of its scales (one-sided paired tests, Holm over the family at 5%);
    "inconclusive" otherwise; "" where no mechanism is shown to learn at scale 1 on the seeds the winner is chosen
    on."""
    from scipy import stats
    from scipy.stats import kendalltau

    rule = [m for m, mech in MECHANISMS.items()
            if mech.protocol == "rule" and mech.constant and mech.privacy != "none" and not set_aside(m)]
    d = df[df["mechanism"].isin(rule) & df["error"].notna()]
    rows = []
    for (ds, n, e), cell in d.groupby(["dataset", "n_train", "epsilon"], sort=True):
        every = cell.pivot_table(index="seed", columns=["mechanism", "scale"], values="error", aggfunc="first")
        mechs = [m for m in every.columns.get_level_values("mechanism").unique()
                 if all((m, sc) in every.columns for sc in SCALES)]
        err = every[[(m, sc) for m in mechs for sc in SCALES]].dropna()
        if len(mechs) < 2 or len(err) < 2:
            continue
        seed_base = cell.groupby("seed")["base_error"].first()
        base = seed_base.reindex(err.index)

        def shown(diff: pd.Series) -> tuple[bool, float]:  # one-sided paired test that diff > 0, and its p-value
            mean, se, k = _mean_se(diff)
            held = verdicts.difference_verdict(mean, se, min_effect=0.0, df=k - 1).status == "holds"
            return held, (float(stats.t.sf(mean / se, k - 1)) if se > 0 else float(mean <= 0))

        learns = {key: shown(base - err[key])[0] for key in err.columns}
        g = err.mean().unstack("scale")[list(SCALES)]
        ok = pd.DataFrame({sc: [learns[(m, sc)] for m in g.index] for sc in SCALES}, index=g.index)
        lose = g.where(ok, np.inf)  # a scale where a mechanism does not learn cannot win
        worst_other = {m: lose.drop(m).max(axis=1).min() if len(g) > 1 else np.inf for m in g.index}
        possible = [m for m in g.index if (g.loc[m].where(ok.loc[m], np.inf) < worst_other[m]).any()]

        def winner(sc: float) -> str:
            at = g[sc].where(ok[sc])
            return str(at.idxmin()) if at.notna().any() else ""

        choice = every[[(m, 1.0) for m in mechs]].drop(index=err.index).dropna()
        chosen_on = "other seeds" if len(choice) >= 2 else "tested seeds"
        if chosen_on == "tested seeds":
            choice = err[[(m, 1.0) for m in mechs]]
        choice_base = seed_base.reindex(choice.index)
        at1 = choice.mean().where([shown(choice_base - choice[key])[0] for key in choice.columns])
        w1 = str(at1.idxmin()[0]) if at1.notna().any() else ""
        row = {"dataset": ds, "n_train": int(n), "epsilon": float(e), "mechanisms": len(g), "seeds": len(err),
               "possible_winners": ";".join(sorted(possible)), "n_possible": len(possible), "winner": w1,
               "chosen_on": chosen_on, "choice_seeds": len(choice)}
        if w1:
            others = [(m, sc) for m in g.index if m != w1 for sc in SCALES]
            rivals = [o for o in others if learns[o]]  # only these can win under the map's rule
            row["robust"] = bool(ok.loc[w1].all() and g.loc[w1].max() < min((g.loc[o] for o in rivals), default=np.inf))
            better = [shown(err[o] - err[(w1, sc)])[0] for sc in SCALES for o in others]
            worse = [shown(err[(w1, sc)] - err[o])[1] for sc in SCALES for o in rivals]
            held = ok.loc[w1].all() and all(better)
            row["robust_test"] = ("holds" if held and chosen_on == "other seeds" else
                                  "violated" if any(verdicts.holm(worse)) else "inconclusive")
        else:
            row["robust"], row["robust_test"] = False, ""
        for sc in SCALES:
            row[f"winner_x{sc:g}"] = winner(sc)
            if sc != 1.0:
                row[f"tau_x{sc:g}"] = float(kendalltau(g[1.0], g[sc]).statistic)
        rows.append(row)
    return pd.DataFrame(rows)


def _timed(df: pd.DataFrame) -> pd.Series:
    """Per run, its fit seconds where they count for the cost curves: the untraced runs' (``traced`` False; tracing
    slows allocation-heavy code), or every run's in a (data set, mechanism, n) that has no untraced run; NaN
    otherwise."""
    if "traced" not in df:
        return df["fit_seconds"]
    traced = df["traced"].fillna(False).astype(bool)
    untraced = (~traced & df["fit_seconds"].notna()).groupby([df["dataset"], df["mechanism"], df["n_train"]]) \
        .transform("any")
    return df["fit_seconds"].where(~traced | ~untraced)


def _curve_memory(df: pd.DataFrame) -> pd.Series:
    """Per run, its peak memory where it draws the memory curves: the traced runs at :data:`~dpkernels.experiments.
    frontier.TRACED_EPSILON` (a non-private reference's at any), so that every size's point is at the same epsilon
    (from 100,000 rows every epsilon is traced, :func:`~dpkernels.experiments.frontier.traced`); NaN otherwise."""
    from dpkernels.experiments.frontier import TRACED_EPSILON

    eps = df["epsilon"].astype(float)
    return df["peak_mb"].where(eps.isna() | (eps == TRACED_EPSILON))


def cost_curves(df: pd.DataFrame) -> pd.DataFrame:
    """Per (data set, mechanism, n): median fit seconds (over the untraced runs, :func:`_timed`), the peak traced
    memory at one epsilon (:func:`_curve_memory`; ``peak_mb``) and the largest over every traced run
    (``peak_mb_max``), the training matrix's size and the largest peak's ratio to it."""
    d = df[df["fit_seconds"].notna()].assign(_time=lambda x: _timed(x), _memory=lambda x: _curve_memory(x))
    g = d.groupby(["dataset", "mechanism", "n_train"], sort=True)
    out = g.agg(fit_seconds=("_time", "median"), peak_mb=("_memory", "median"), peak_mb_max=("peak_mb", "max"),
                train_mb=("train_mb", "first"), runs=("_time", "count"), traced_runs=("peak_mb", "count")).reset_index()
    out["memory_ratio_max"] = out["peak_mb_max"] / out["train_mb"]
    out["label"] = out["mechanism"].map(lambda m: MECHANISMS[m].label)
    out["family"] = out["mechanism"].map(lambda m: MECHANISMS[m].family)
    return out


def cost_slopes(df: pd.DataFrame) -> pd.DataFrame:
    """Per (data set, mechanism): the least-squares slope of log fit time (the untraced runs', :func:`_timed`) and of
    log peak memory (the traced runs' at one epsilon, :func:`_curve_memory`) against log n over every run of the grid,
    with the standard error and degrees of freedom of the time slope (needs three sizes)."""
    cols = ["dataset", "mechanism", "label", "family", "sizes", "n_min", "n_max", "time_slope", "time_slope_se",
            "time_slope_df", "memory_slope"]
    rows = []
    d = df[df["fit_seconds"].notna()].assign(_time=lambda x: _timed(x))
    for (ds, m), g in d.groupby(["dataset", "mechanism"], sort=True):
        sizes = g["n_train"].nunique()
        if sizes < 3:
            continue
        t = g[g["_time"].notna()]
        s, se, dof = verdicts.slope_with_se(t["n_train"], t["_time"])
        p = g.assign(peak_mb=_curve_memory(g))
        p = p[p["peak_mb"].notna()]
        sm = verdicts.slope(p["n_train"], np.maximum(p["peak_mb"], 1e-3)) if p["n_train"].nunique() > 1 else math.nan
        rows.append({"dataset": ds, "mechanism": m, "label": MECHANISMS[m].label, "family": MECHANISMS[m].family,
                     "sizes": sizes, "n_min": int(g["n_train"].min()), "n_max": int(g["n_train"].max()),
                     "time_slope": s, "time_slope_se": se, "time_slope_df": dof, "memory_slope": sm})
    return pd.DataFrame(rows, columns=cols)
