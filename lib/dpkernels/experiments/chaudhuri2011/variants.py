"""Registered hypotheses that need protocol runs of their own, run outside the full profile (issue 28, item 4).

``python -m dpkernels.experiments.chaudhuri2011 [--out DIR] [--jobs N] [--quick] [--only PART ...]`` runs, at a reduced
protocol stated per hypothesis in ``registry.yaml`` (5 folds x 10 noise runs unless said otherwise, the notebook's
seed and folds), every hypothesis of that registry marked "(variants command)", and the KDD readings side by side
(C4's detail), and writes into ``DIR`` (default ``build/registered/chaudhuri2011``):

* ``registered_runs.csv`` (:data:`RUN_COLUMNS`): per hypothesis, arm (the variant, ``ours`` = the chosen reading at
  the same protocol, a value of the varied constant, a sample, or C15's ``grid`` of Lambdas), published cell and
  replicate (fold, or sample),
  the replicate's mean error over its noise runs, and the published number;
* ``kdd_readings_runs.csv``: per candidate reading, the reproduced rows of Table 2, Figure 3 and Figures 4-5 at the
  readings' smaller protocol and the Lambda grid its own non-private learning curve chose;
* ``adult_repeated_cv.csv`` (not a hypothesis): repetitions of Adult's complete protocol with new splits and noise,
  the replicates through which Table 1's and Figure 2's published numbers are compared (:func:`repeated_cv`);
* ``kdd_repeated_cv.csv`` (not a hypothesis): the same for KDDCup99's Table 2 and Figure 3 under the chosen reading
  (column ``reading``), each repetition on a new 70,000-row sample of the file (``--only kdd-cv``);
* ``kdd_lc_permutations.csv`` (not a hypothesis): Figures 4-5's learning curves at the full profile's sizes with more
  permutations, the replicates of their published points (:func:`lc_permutations`, ``--only kdd-lc``).

All are committed under ``paper_figures/chaudhuri2011/`` (``--out paper_figures/chaudhuri2011`` regenerates them;
about an hour on 2 cores for the hypotheses, and on 2 cores about 20 minutes for the Adult repetitions, 19 for the
KDD repetitions and 7 for the permutations) and read by
``notebooks/chaudhuri2011.py``, which runs the tests (:func:`variant_hypotheses`) and copies the files into its own
output.  What a replicate is in the hypotheses' tests: a cross-validation fold (its mean over the noise runs), a
permutation (Figures 4-5) or an independent 70,000-row sample (K-subsets); the
published number is the mean of the paper's 10 folds (5 permutations), and the tests take that into account
(:func:`dpkernels.experiments.registry.joint_mean_test`).  Every solve here is a non-private solve or
a release of the protocol's own mechanisms (no privacy claim is made for these runs: they reproduce numbers).
"""

from __future__ import annotations

import argparse
import dataclasses
import math
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path

import numpy as np
import pandas as pd
from joblib import Parallel, delayed
from sklearn.model_selection import KFold
from tqdm import tqdm

from dpkernels import verdicts
from dpkernels.bounds import chaudhuri as B
from dpkernels.datasets import Dataset
from dpkernels.experiments.registry import load_committed as _load_committed
from dpkernels.losses import make_loss
from dpkernels.mechanisms.chaudhuri import unit_gamma_noise
from dpkernels.solvers.smooth import Design

from .hypotheses import ALPHA_HYPOTHESIS, MAX_FALSE_ACCEPTANCE, joint_mean_test
from .protocol import (
    CHOSEN_LAMBDA,
    Request,
    LAMBDA_EXPONENTS,
    PUBLISHED_FIGURES_2_3,
    PUBLISHED_FIGURES_4_5,
    PUBLISHED_FIGURES_4_5_SIZES,
    PUBLISHED_N_RUNS,
    PUBLISHED_TABLES,
    _errors,
    _fold_path,
    learning_curve_frame,
    objective_batch,
    permutation_means,
    protocol_requests,
    run_protocol,
    table_frame,
    figure_2_3_frame,
)
from .readings import (
    CANDIDATES,
    VARIANTS,
    KDDReading,
    chaudhuri_data,
    figures_4_5_runs,
    kdd_data,
    nonprivate_columns,
    rank_grids,
    rank_readings,
)
from .registry import family_size, registered

__all__ = ["RUN_COLUMNS", "Scale", "REGISTERED", "QUICK", "KAPPA_EXPONENTS", "C12_CURVATURES", "C13_EPSILONS", "FIGURE_EPSILONS",
           "ADULT_DELTA_LR", "C14_KDD_CELL", "calibration_n_runs", "lambda_selection_runs", "selected_lambda",
           "published_cells", "cell_fold_means", "repeated_cv", "kdd_samples", "lc_permutations", "LC_VARIANTS",
           "lc_variant_runs", "variant_hypotheses", "reading_frames", "load_committed", "main"]

LOSSES = ("logistic", "huber")


@dataclasses.dataclass(frozen=True)
class Scale:
    """The sizes of the command's runs: the registered ones (:data:`REGISTERED`) and a smoke-test size (``QUICK``)."""

    folds: int = 5  #: folds used of the 10-fold split (the reduced protocol)
    runs: int = 10  #: noise runs per fold
    samples: int = 8  #: K-subsets: further 70,000-row samples (seeds seed + 1, ...)
    c12_folds: int = 10  #: C12 runs the paper's protocol
    c12_runs: int = 50
    lc_rows: int = 475000  #: the readings side by side, Figures 4-5 at the smallest size
    lc_sizes: tuple[int, ...] = (60000,)  #: the readings side by side's sizes
    #: the sizes of the ``K-lc-*`` tests: every size of Figures 4-5 (60,000 alone until 2026-11-28, ``registry.yaml``)
    lc_variant_sizes: tuple[int, ...] = (60000, 70000, 80000)
    lc_perms: int = 5
    lc_runs: int = 10
    kdd_rows: int = 70000
    rule_folds: int = 10  #: folds of the reading rule (Table 2's non-private column)
    cv_repeats: int = 20  #: repetitions of the protocol, new split and noise (KDDCup99: and sample) each (issue 28.1)
    cv_runs: int = 50  #: noise runs per fold in those repetitions (the paper's)
    lc_more_perms: int = 20  #: permutations of Figures 4-5's learning curves (issue 28.1), at ``lc_profile``'s sizes
    lc_profile: str = "full"  #: the notebook profile whose learning curves those permutations extend


#: The sizes registered in ``registry.yaml``.
REGISTERED = Scale()
QUICK = Scale(folds=2, runs=2, samples=2, c12_folds=2, c12_runs=4, lc_rows=150000, lc_sizes=(15000,),
              lc_variant_sizes=(15000, 20000), lc_perms=2, lc_runs=2, rule_folds=2, cv_repeats=2, cv_runs=2,
              lc_more_perms=3, lc_profile="quick")
#: C11: the factors kappa = 10^k on Algorithm 2's Delta > 0 regulariser (k = 0 is ours).
KAPPA_EXPONENTS = tuple(k / 2 for k in range(-4, 11) if k != 0)
#: C12: the curvature constants of the Huber loss tried (ours: 1/(2h) = 1).
C12_CURVATURES = (0.5, 0.25)
#: Figures 2-3's epsilons (the full profile's).
FIGURE_EPSILONS = (0.02, 0.025, 0.05, 0.075, 0.1, 0.175, 0.25, 0.5)
RUN_COLUMNS = ["hypothesis", "arm", "dataset", "table", "loss", "method", "log10_Lambda", "epsilon", "size", "replicate",
               "error", "published"]
CELL_KEYS = ["table", "loss", "method", "log10_Lambda", "epsilon"]


# ----------------------------------------------------------------------------------------------
# published cells and the replicates of a run
# ----------------------------------------------------------------------------------------------
def published_cells(dataset: str, *, private_only: bool = True, exclude_delta_lr: bool = True) -> pd.DataFrame:
    """The published numbers of Table 1-2 and Figure 2-3 of ``dataset`` as cells (:data:`CELL_KEYS`, ``published``):
    a figure's point that is a table's entry (eps = 0.1 at the bold Lambda; the non-private line) once, under its
    table.  ``private_only`` drops the non-private column; ``exclude_delta_lr`` drops Table 2's objective LR entries at
    Lambda <= 1e-5 (0.2084: C8's cells, the delta-branch family), as the KDD variant test does."""
    table = "table_1" if dataset == "adult" else "table_2"
    figure = "figure_2" if dataset == "adult" else "figure_3"
    rows = []
    for (loss, method), vals in PUBLISHED_TABLES[dataset].items():
        for e, v in zip(LAMBDA_EXPONENTS[dataset], vals):
            rows.append((table, loss, method, float(e), math.nan if method == "non-private" else 0.1, v))
    for (loss, method), pts in PUBLISHED_FIGURES_2_3[dataset].items():
        lam = float(CHOSEN_LAMBDA[dataset][(loss, method)])
        items = [(math.nan, pts)] if method == "non-private" else list(pts.items())
        for eps, v in items:
            dup = method == "non-private" or math.isclose(eps, 0.1)
            if not dup:
                rows.append((figure, loss, method, lam, float(eps), v))
    out = pd.DataFrame(rows, columns=CELL_KEYS + ["published"])
    if private_only:
        out = out[out.method != "non-private"]
    if exclude_delta_lr and dataset == "kddcup99":
        out = out[~((out.table == table) & (out.loss == "logistic") & (out.method == "objective") & (out.log10_Lambda <= -5))]
    return out.reset_index(drop=True)


def cell_fold_means(df: pd.DataFrame, cells: pd.DataFrame) -> pd.DataFrame:
    """Per published cell (``cells``, :func:`published_cells`) and fold of a :func:`run_protocol` result, the fold's
    mean error over its noise runs (columns :data:`CELL_KEYS`, replicate, error, published)."""
    m = df.groupby(["loss", "method", "log10_Lambda", "epsilon", "fold"], dropna=False).error.mean().reset_index()
    m["eps_key"] = m.epsilon.fillna(-1.0).round(6)
    c = cells.assign(eps_key=cells.epsilon.fillna(-1.0).round(6))
    out = c.merge(m.drop(columns="epsilon"), on=["loss", "method", "log10_Lambda", "eps_key"], how="left")
    if out.error.isna().any():
        missing = out[out.error.isna()][CELL_KEYS].drop_duplicates().values.tolist()
        raise ValueError(f"the run lacks cells {missing}")
    return out.rename(columns={"fold": "replicate"})[CELL_KEYS + ["replicate", "error", "published"]]


def _run_cells(data: Dataset, dataset: str, cells: pd.DataFrame, folds: int, runs: int, seed: int, n_jobs: int,
               epsilons: Sequence[float] = FIGURE_EPSILONS, calibration_rows: int | None = None,
               requests: Sequence[Request] | None = None) -> pd.DataFrame:
    """Table 1-2 / Figure 2-3's protocol on ``data`` at ``folds`` x ``runs``, as fold means per cell; ``requests``:
    the protocol's cells to run (by default all of Tables 1-2 and Figures 2-3, the figures at ``epsilons``; given
    requests are run as they are), ``calibration_rows``: :func:`run_protocol`'s."""
    req = protocol_requests(dataset, LOSSES, 0.1, list(epsilons)) if requests is None else list(requests)
    df = run_protocol(data, req, runs, folds_used=folds, random_state=seed, n_jobs=n_jobs, progress=False,
                      calibration_rows=calibration_rows)
    return cell_fold_means(df, cells)


# ----------------------------------------------------------------------------------------------
# the hypotheses' runs
# ----------------------------------------------------------------------------------------------
def _with_size(frame: pd.DataFrame) -> pd.DataFrame:
    """``frame`` with a ``size`` column (NaN: a table's or Figures 2-3's cell, which has no part size)."""
    return frame if "size" in frame.columns else frame.assign(size=math.nan)


def _tag(frame: pd.DataFrame, hypothesis: str, arm: str, dataset: str) -> pd.DataFrame:
    return _with_size(frame).assign(hypothesis=hypothesis, arm=arm, dataset=dataset)[RUN_COLUMNS]


def kdd_variant_runs(chosen: KDDReading, seed: int, scale: Scale = REGISTERED, n_jobs: int = 1,
                     progress: bool = True) -> pd.DataFrame:
    """The KDD variant test's runs (``registry.yaml``'s header): the chosen reading (hypothesis and arm ``ours``) and
    each registered variant of it (:data:`~.readings.VARIANTS`, arm ``variant``), Table 2 and Figure 3 at the reduced
    protocol; and K-subsets' further samples (arm ``sample <seed>``)."""
    cells = published_cells("kddcup99")

    def run(reading: KDDReading, sample_seed: int) -> pd.DataFrame:
        data = kdd_data(reading, rows=scale.kdd_rows, random_state=sample_seed)
        return _run_cells(data, "kddcup99", cells, scale.folds, scale.runs, seed, n_jobs)

    parts = [_tag(run(chosen, seed), "ours", "ours", "kddcup99")]
    for v in tqdm(VARIANTS, desc="KDD variants", disable=not progress):
        parts.append(_tag(run(dataclasses.replace(chosen, variant=v), seed), v, "variant", "kddcup99"))
    for s in tqdm(range(1, scale.samples + 1), desc="K-subsets", disable=not progress):
        parts.append(_tag(run(chosen, seed + s), "K-subsets", f"sample {seed + s}", "kddcup99"))
    return pd.concat(parts, ignore_index=True)


def _delta_fold(Xtr: np.ndarray, ytr: np.ndarray, Xte: np.ndarray, yte: np.ndarray, loss: str, kappas: Sequence[float],
                n_runs: int, seed: Sequence[int], compress: bool) -> list[tuple[float, float]]:
    """One fold of C11: Algorithm 2's Delta > 0 release at eps = 0.1 with the effective regulariser kappa x
    c / (n (e^{eps/4} - 1)) (eps' = eps / 2, beta = eps' / 2), common unit noise across kappa."""
    n, d = Xtr.shape
    L = make_loss(loss)
    base = B.theorem_9_parameters(0.1, n, 1e-12, L.curvature)  # the Delta > 0 branch: Lambda + Delta, eps', beta
    lam0 = 1e-12 + base.Delta
    unit = unit_gamma_noise(n_runs, d, "lattice", np.random.default_rng([*seed, 2]))
    design = Design(Xtr, ytr, compress=compress)

    out = []
    for kappa in kappas:
        lam = kappa * lam0
        path = _fold_path(Xtr, ytr, loss, [Request(loss, "non-private", math.log10(lam), None)], compress, 1e-3, design)
        params = dataclasses.replace(base, Delta=lam - 1e-12)
        W = objective_batch(design, L, 1e-12, params, unit, solver_tol=1e-3, center=path[10.0 ** math.log10(lam)])
        out.append((kappa, float(np.mean(_errors(Xte, yte, W)))))
    return out


def delta_branch_runs(data: Dataset, dataset: str, seed: int, scale: Scale = REGISTERED, n_jobs: int = 1) -> pd.DataFrame:
    """C11's runs on one data set: the Delta > 0 cells (LR and Huber, Lambda below the threshold) under every kappa of
    :data:`KAPPA_EXPONENTS` and kappa = 1 (arm ``ours``), at the reduced protocol."""
    X, y = data.X, data.y.astype(float)
    splits = list(KFold(n_splits=10, shuffle=True, random_state=seed).split(X))[: scale.folds]
    kappas = (1.0, *(10.0**k for k in KAPPA_EXPONENTS))
    tasks = [(loss, k, tr, te) for loss in LOSSES for k, (tr, te) in enumerate(splits)]
    res = Parallel(n_jobs=n_jobs)(delayed(_delta_fold)(X[tr], y[tr], X[te], y[te], loss, kappas, scale.runs, (seed, k),
                                                       dataset == "kddcup99") for loss, k, tr, te in tasks)
    table = "table_1" if dataset == "adult" else "table_2"
    lam = float(LAMBDA_EXPONENTS[dataset][0])  # the published Delta > 0 entries are equal: one cell per loss
    rows = []
    for (loss, k, _, _), block in zip(tasks, res):
        pub = PUBLISHED_TABLES[dataset][(loss, "objective")][0]
        for kappa, err in block:
            arm = "ours" if kappa == 1.0 else f"kappa=1e{math.log10(kappa):g}"
            rows.append({"hypothesis": "C11", "arm": arm, "dataset": dataset, "table": table, "loss": loss,
                         "method": "objective", "log10_Lambda": lam, "epsilon": 0.1, "replicate": k, "error": err,
                         "published": pub})
    return pd.DataFrame(rows, columns=RUN_COLUMNS)


def huber_curvature_runs(adult: Dataset, seed: int, scale: Scale = REGISTERED, n_jobs: int = 1) -> pd.DataFrame:
    """C12's runs: Figure 2's Huber objective curve (Lambda = 10^-2.5, every eps) with the curvature constant c of
    Algorithm 2 set to each of :data:`C12_CURVATURES` and to ours (arm ``ours``), at the paper's protocol (10 folds x
    50 runs), the notebook's folds and noise draws."""
    X, y = adult.X, adult.y.astype(float)
    splits = list(KFold(n_splits=10, shuffle=True, random_state=seed).split(X))[: scale.c12_folds]
    curvatures = (make_loss("huber").curvature, *C12_CURVATURES)
    lam_e = float(CHOSEN_LAMBDA["adult"][("huber", "objective")])
    res = Parallel(n_jobs=n_jobs)(delayed(_curvature_fold)(X[tr], y[tr], X[te], y[te], lam_e, curvatures, scale.c12_runs,
                                                           (seed, k)) for k, (tr, te) in enumerate(splits))
    pts = PUBLISHED_FIGURES_2_3["adult"][("huber", "objective")]
    rows = []
    for k, block in enumerate(res):
        for c, eps, err in block:
            rows.append({"hypothesis": "C12", "arm": "ours" if c == curvatures[0] else f"c={c:g}", "dataset": "adult",
                         "table": "figure_2", "loss": "huber", "method": "objective", "log10_Lambda": lam_e,
                         "epsilon": eps, "replicate": k, "error": err, "published": pts[eps]})
    return pd.DataFrame(rows, columns=RUN_COLUMNS)


def _curvature_fold(Xtr: np.ndarray, ytr: np.ndarray, Xte: np.ndarray, yte: np.ndarray, lam_e: float,
                    curvatures: Sequence[float], n_runs: int, seed: Sequence[int]) -> list[tuple[float, float, float]]:
    """One fold of C12: Algorithm 2 (Huber) at Lambda = 10^lam_e and every eps of Figure 2 with each curvature
    constant, the protocol's unit noise draws (common across c and eps, as in the notebook)."""
    n, d = Xtr.shape
    L = make_loss("huber")
    lam = 10.0**lam_e
    unit = unit_gamma_noise(n_runs, d, "lattice", np.random.default_rng([*seed, 2]))
    design = Design(Xtr, ytr)
    out = []
    for c in curvatures:
        params = {eps: B.theorem_9_parameters(eps, n, lam, c) for eps in FIGURE_EPSILONS}
        lams = sorted({lam + p.Delta for p in params.values()})
        path = _fold_path(Xtr, ytr, "huber", [Request("huber", "non-private", math.log10(v), None) for v in lams], False,
                          1e-3, design)
        for eps, p in params.items():
            W = objective_batch(design, L, lam, p, unit, solver_tol=1e-3, center=path[10.0 ** math.log10(lam + p.Delta)])
            out.append((c, eps, float(np.mean(_errors(Xte, yte, W)))))
    return out


#: C13: the points of Figure 2's Huber objective curve taken from Algorithm 2's Delta > 0 branch.
C13_EPSILONS = (0.02, 0.025)


def huber_branch_runs(adult: Dataset, seed: int, scale: Scale = REGISTERED, n_jobs: int = 1) -> pd.DataFrame:
    """C13's runs: Figure 2's Huber objective points at :data:`C13_EPSILONS` from Algorithm 2's Delta > 0 branch
    (eps' = eps/2, beta = eps/4, Lambda + Delta = c / (n (e^{eps/4} - 1))) at the paper's protocol, the notebook's
    folds and noise draws (arm ``delta-branch``); the curve's other points are C12's arm ``ours`` (the same runs)."""
    X, y = adult.X, adult.y.astype(float)
    splits = list(KFold(n_splits=10, shuffle=True, random_state=seed).split(X))[: scale.c12_folds]
    lam_e = float(CHOSEN_LAMBDA["adult"][("huber", "objective")])
    res = Parallel(n_jobs=n_jobs)(delayed(_branch_fold)(X[tr], y[tr], X[te], y[te], lam_e, scale.c12_runs, (seed, k))
                                  for k, (tr, te) in enumerate(splits))
    pts = PUBLISHED_FIGURES_2_3["adult"][("huber", "objective")]
    rows = [{"hypothesis": "C13", "arm": "delta-branch", "dataset": "adult", "table": "figure_2", "loss": "huber",
             "method": "objective", "log10_Lambda": lam_e, "epsilon": eps, "replicate": k, "error": err,
             "published": pts[eps]} for k, block in enumerate(res) for eps, err in block]
    return pd.DataFrame(rows, columns=RUN_COLUMNS)


def _branch_fold(Xtr: np.ndarray, ytr: np.ndarray, Xte: np.ndarray, yte: np.ndarray, lam_e: float, n_runs: int,
                 seed: Sequence[int]) -> list[tuple[float, float]]:
    """One fold of C13 (:func:`huber_branch_runs`)."""
    n, d = Xtr.shape
    L = make_loss("huber")
    lam, c = 10.0**lam_e, L.curvature
    unit = unit_gamma_noise(n_runs, d, "lattice", np.random.default_rng([*seed, 2]))
    design = Design(Xtr, ytr)
    out = []
    for eps in C13_EPSILONS:
        p = B.ObjectivePerturbationParameters(eps / 2.0, c / (n * math.expm1(eps / 4.0)) - lam, eps / 4.0, "Delta > 0")
        path = _fold_path(Xtr, ytr, "huber", [Request("huber", "non-private", math.log10(lam + p.Delta), None)], False,
                          1e-3, design)
        W = objective_batch(design, L, lam, p, unit, solver_tol=1e-3, center=path[10.0 ** math.log10(lam + p.Delta)])
        out.append((eps, float(np.mean(_errors(Xte, yte, W)))))
    return out


def adult_row_max_runs(seed: int, scale: Scale = REGISTERED, n_jobs: int = 1) -> pd.DataFrame:
    """A-row-max's runs: Table 1 and Figure 2 (every cell, non-private included) with Adult's rows divided by the
    largest row norm (arm ``variant``) and projected onto the unit ball (``ours``), at the reduced protocol."""
    from dpkernels.datasets import load_adult

    cells = published_cells("adult", private_only=False)
    parts = [_tag(_run_cells(data, "adult", cells, scale.folds, scale.runs, seed, n_jobs), "A-row-max", arm, "adult")
             for arm, data in (("ours", chaudhuri_data("adult")),
                               ("variant", load_adult(preprocess="chaudhuri", row_normalization="max")))]
    return pd.concat(parts, ignore_index=True)


#: Adult's Delta > 0 LR entries (0.8248 in Table 1; the delta-branch family's): left out of C14's test, as C8's cells
#: are out of the KDD variants' (no change of n moves Algorithm 2's Delta > 0 release to 0.8248).
ADULT_DELTA_LR = (-10.0, -7.0, -4.0)
#: C14's KDDCup99 cell: Table 2's isolated Huber objective entry (0.1827), where the fold's n puts eps' at 0.002.
C14_KDD_CELL = ("table_2", "huber", "objective", -3.5)


def calibration_n_runs(chosen: KDDReading, seed: int, scale: Scale = REGISTERED, n_jobs: int = 1) -> pd.DataFrame:
    """C14's runs at the reduced protocol, the variant (arm ``variant``: Algorithms 1-2 calibrated with the data set's
    size) and ours (arm ``ours``: the training fold's) on the same folds and noise draws: Adult's private numbers of
    Table 1 and Figure 2 without :data:`ADULT_DELTA_LR`, and KDDCup99's :data:`C14_KDD_CELL` under the ``chosen``
    reading."""
    adult = chaudhuri_data("adult")
    cells = published_cells("adult")
    cells = cells[~((cells.table == "table_1") & (cells.loss == "logistic") & (cells.method == "objective")
                    & cells.log10_Lambda.isin(ADULT_DELTA_LR))]
    kdd = kdd_data(chosen, rows=scale.kdd_rows, random_state=seed)
    kcells = published_cells("kddcup99")
    table, loss, method, lam = C14_KDD_CELL
    kcells = kcells[(kcells.table == table) & (kcells.loss == loss) & (kcells.method == method) & (kcells.log10_Lambda == lam)]
    parts = []
    for name, data, c, req in (("adult", adult, cells, None), ("kddcup99", kdd, kcells, [Request(loss, method, lam, 0.1)])):
        for arm, rows in (("ours", None), ("variant", data.X.shape[0])):
            parts.append(_tag(_run_cells(data, name, c, scale.folds, scale.runs, seed, n_jobs, calibration_rows=rows,
                                         requests=req), "C14", arm, name))
    return pd.concat(parts, ignore_index=True)


def lambda_selection_runs(adult: Dataset, seed: int, scale: Scale = REGISTERED, n_jobs: int = 1) -> pd.DataFrame:
    """C15's runs: Figure 2's private curves (output and objective, both losses) at every Lambda of Table 1's grid and
    every eps_p of the figure but 0.1 (a table entry), at the reduced protocol (the notebook's folds and noise draws);
    arm ``grid``, ``log10_Lambda`` the Lambda run, ``published`` the figure's point at that eps_p.  The test
    (:func:`selected_lambda`) takes the bold Lambda's rows as ours and each eps_p's best Lambda as the variant."""
    figure = published_cells("adult")
    figure = figure[figure.table == "figure_2"]
    epsilons = sorted({float(e) for e in figure.epsilon})
    req = [Request(loss, method, float(e), eps) for loss in LOSSES for method in ("output", "objective")
           for e in LAMBDA_EXPONENTS["adult"] for eps in epsilons]
    df = run_protocol(adult, req, scale.runs, folds_used=scale.folds, random_state=seed, n_jobs=n_jobs, progress=False)
    m = df.groupby(["loss", "method", "log10_Lambda", "epsilon", "fold"]).error.mean().reset_index()
    pub = figure.assign(eps_key=figure.epsilon.round(6))[["loss", "method", "eps_key", "published"]]
    m = m.assign(eps_key=m.epsilon.round(6)).merge(pub, on=["loss", "method", "eps_key"], how="inner")
    out = m.assign(hypothesis="C15", arm="grid", dataset="adult", table="figure_2").rename(columns={"fold": "replicate"})
    return out[RUN_COLUMNS]


def selected_lambda(grid: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    """From C15's ``grid`` rows: (ours, variant, choice).  Ours: the rows at each curve's bold Lambda
    (:data:`CHOSEN_LAMBDA`); variant: at each (loss, method, eps_p) the Lambda with the lowest mean over the
    replicates, its rows relabelled with the bold Lambda (the published cell's key); choice: one row per point with
    ``bold`` and ``selected`` (log10 Lambda).  The selection uses the replicates the test then uses, as the
    hypothesis says the paper did (its published points would be the best of its own folds' means)."""
    g = grid.assign(eps_key=grid.epsilon.round(6))
    bold = g.apply(lambda r: float(CHOSEN_LAMBDA["adult"][(r.loss, r.method)]), axis=1)
    g = g.assign(bold=bold)
    means = g.groupby(["loss", "method", "eps_key", "log10_Lambda"]).error.mean().reset_index()
    best = means.loc[means.groupby(["loss", "method", "eps_key"]).error.idxmin()][["loss", "method", "eps_key", "log10_Lambda"]]
    choice = best.rename(columns={"log10_Lambda": "selected"}).merge(
        g[["loss", "method", "eps_key", "bold"]].drop_duplicates(), on=["loss", "method", "eps_key"])
    ours = g[g.log10_Lambda == g.bold]
    variant = g.merge(best, on=["loss", "method", "eps_key", "log10_Lambda"])
    variant = variant.assign(log10_Lambda=variant.bold)
    cols = [c for c in RUN_COLUMNS if c in g.columns]
    return ours[cols].reset_index(drop=True), variant[cols].reset_index(drop=True), choice.reset_index(drop=True)


def _cv_split_seed(seed: int, repeat: int) -> int:
    """The KFold seed of repeat ``repeat`` of the cross-validation: the notebook's own split first (``seed``), then
    seeds drawn from (seed, repeat)."""
    return seed if repeat == 0 else int(np.random.default_rng([seed, repeat]).integers(2**31 - 1))


def repeated_cv(data: Dataset | Callable[[int], Dataset], dataset: str, n_repeats: int, seed: int, n_runs: int,
                epsilons: Sequence[float] = FIGURE_EPSILONS, n_jobs: int = 1) -> pd.DataFrame:
    """Tables 1-2 and Figures 2-3 by ``n_repeats`` repetitions of the paper's protocol (10-fold cross-validation,
    ``n_runs`` noise runs per fold) with a new split and new noise each (:func:`run_protocol` at the seed
    :func:`_cv_split_seed` gives; the first repetition is the notebook's own run): one row per (loss, method, Lambda,
    epsilon, repeat, fold) with the fold's mean test error over its noise runs (the non-private error: its one fit)
    and ``n_runs``.  ``data`` is the data set (Adult: every repetition splits the same rows) or a function of the
    repetition's seed that draws it (KDDCup99: a new 70,000-row sample each under the chosen reading, :func:`kdd_data`).

    A replicate of a published number is one repetition's mean: the paper ran the protocol once on (nearly) these
    rows (KDDCup99: on one sample of the file), so its number is one draw of that mean, and the spread of the mean
    across repetitions (new splits, new noise, and for KDDCup99 a new sample) is its spread under our protocol; the
    spread of the folds of one repetition is not (they share rows)."""
    req = protocol_requests(dataset, LOSSES, 0.1, list(epsilons))
    keys = ["loss", "method", "log10_Lambda", "epsilon", "fold"]
    parts = []
    for r in tqdm(range(n_repeats), desc=f"{dataset} repetitions", mininterval=5):
        r_seed = _cv_split_seed(seed, r)
        rows = data(r_seed) if callable(data) else data
        df = run_protocol(rows, req, n_runs, random_state=r_seed, n_jobs=n_jobs, progress=False)
        g = df.groupby(keys, dropna=False).error.agg(error="mean", n_runs="count").reset_index()
        parts.append(g.assign(dataset=dataset, repeat=r))
    return pd.concat(parts, ignore_index=True)[["dataset", "loss", "method", "log10_Lambda", "epsilon", "repeat", "fold",
                                                "error", "n_runs"]]


def lc_permutations(chosen: KDDReading, seed: int, scale: Scale = REGISTERED, n_jobs: int = 1) -> pd.DataFrame:
    """Figures 4-5 with ``scale.lc_more_perms`` permutations: the notebook's learning curves (``scale.lc_profile``'s
    rows, sizes and runs, every candidate grid, the non-private baseline first) with more permutations, as
    :func:`permutation_means` rows.  Permutation p draws its parts and noise from (seed, size, p) alone, so the first
    ones are the notebook's (checked there, row ``kdd-lc-perms-match``).

    A replicate of a published point is one permutation: the paper's point is the mean of 5 permutations x 50 runs, its
    spread that of a mean of 5 permutation means; 5 of ours leave the comparison 4 degrees of freedom."""
    from dpkernels import profiles

    P = profiles.load("chaudhuri2011", scale.lc_profile)
    data = kdd_data(chosen, rows=P["lc_rows"], random_state=seed)
    return permutation_means(figures_4_5_runs(data, P["lc_sizes"], scale.lc_more_perms, P["lc_runs"], LOSSES,
                                              random_state=seed, n_jobs=n_jobs))


#: ``K-lc-*`` (``registry.yaml``): the KDD variants run on Figures 4-5, hypothesis -> the variant of the chosen
#: reading.
LC_VARIANTS = {"K-lc-scale-file": "K-scale-file", "K-lc-log-bytes": "K-log-bytes", "K-lc-replace": "K-replace",
               "K-lc-119": "K-119", "K-lc-implementations": "K-implementations", "K-lc-minmax": "K-minmax"}


def _lc_cells(lc: pd.DataFrame) -> pd.DataFrame:
    """Figures 4-5's private points of learning-curve runs at their chosen grid as :data:`RUN_COLUMNS`' cells (one per
    loss, epsilon, method and part size), one row per permutation (``replicate``), with the published point of that
    size."""
    m = permutation_means(lc[lc.method != "non-private"])
    published = [PUBLISHED_FIGURES_4_5[(r.loss, r.epsilon, r.method)][PUBLISHED_FIGURES_4_5_SIZES.index(int(r.size))]
                 if int(r.size) in PUBLISHED_FIGURES_4_5_SIZES else math.nan for r in m.itertuples()]  # NaN: --quick
    return pd.DataFrame({"table": "figure_4_5", "loss": m["loss"], "method": m["method"], "log10_Lambda": math.nan,
                         "epsilon": m["epsilon"].astype(float), "size": m["size"].astype(float), "replicate": m["perm"],
                         "error": m["error"], "published": published})


def lc_variant_runs(chosen: KDDReading, seed: int, scale: Scale = REGISTERED, n_jobs: int = 1,
                    progress: bool = True, only: Iterable[str] | None = None) -> pd.DataFrame:
    """The runs of ``K-lc-*`` (``registry.yaml``; ``only``: these of them): per hypothesis, the variant of the chosen
    reading (arm ``variant``) and the chosen reading (arm ``ours``), Figures 4-5's private points at the readings side
    by side's protocol at every size of the figures (``scale.lc_variant_sizes``, ``scale.lc_perms`` permutations x
    ``scale.lc_runs`` noise runs, the notebook's seed), each arm's Lambda grid chosen by the grid rule
    (:func:`rank_grids`) on its own non-private curves; replicate = the permutation."""
    def run(reading: KDDReading) -> pd.DataFrame:
        lc, grid = _lc_at_own_grid(reading, seed, scale, n_jobs, scale.lc_variant_sizes)
        return _lc_cells(lc[np.isclose(lc.grid, grid)])

    ours = run(chosen)
    parts = []
    names = list(LC_VARIANTS) if only is None else list(only)
    for hid, v in tqdm([(h, LC_VARIANTS[h]) for h in names], desc="K-lc variants", disable=not progress):
        parts += [_tag(ours, hid, "ours", "kddcup99"), _tag(run(dataclasses.replace(chosen, variant=v)), hid, "variant",
                                                           "kddcup99")]
    return pd.concat(parts, ignore_index=True)


def kdd_samples(reading: KDDReading, rows: int) -> Callable[[int], Dataset]:
    """The data of KDDCup99's repetitions (:func:`repeated_cv`): the seed's ``rows``-row sample under ``reading``."""
    return lambda seed: kdd_data(reading, rows=rows, random_state=seed)


def reading_side_by_side(seed: int, scale: Scale = REGISTERED, n_jobs: int = 1, progress: bool = True
                         ) -> tuple[pd.DataFrame, KDDReading]:
    """C4's side by side at the readings' smaller protocol: every candidate reading's Table 2 / Figure 3 at 5 folds x
    10 runs and Figures 4-5 at the smallest size (its own grid rule first), as reproduced rows (columns reading, frame,
    grid, and the frame's); and the reading the rule chooses (Table 2's non-private column, 10 folds)."""
    sets, chosen = _rule_choice(seed, scale, n_jobs, progress)
    req = protocol_requests("kddcup99", LOSSES, 0.1, list(FIGURE_EPSILONS))
    parts = []
    for r in tqdm(CANDIDATES, desc="readings side by side", disable=not progress):
        df = run_protocol(sets[r.label], req, scale.runs, folds_used=scale.folds, random_state=seed, n_jobs=n_jobs,
                          progress=False)
        lc, grid = _lc_at_own_grid(r, seed, scale, n_jobs)
        for name, frame in (("table_2", table_frame("kddcup99", df)), ("figure_3", figure_2_3_frame("kddcup99", df)),
                            ("figures_4_5", learning_curve_frame(lc, grid))):
            parts.append(frame[frame.source == "reproduced"].assign(reading=r.label, frame=name, grid=grid))
    return pd.concat(parts, ignore_index=True), chosen


def _rule_choice(seed: int, scale: Scale, n_jobs: int, progress: bool = False) -> tuple[dict[str, Dataset], KDDReading]:
    """Every candidate reading's 70,000-row sample at the notebook's seed, and the reading the rule chooses on them
    (:data:`~.readings.READING_RULE`: Table 2's non-private column over ``scale.rule_folds`` folds)."""
    sets = {r.label: kdd_data(r, rows=scale.kdd_rows, random_state=seed) for r in CANDIDATES}
    ranking = rank_readings(nonprivate_columns(sets, LOSSES, folds_used=scale.rule_folds, random_state=seed,
                                               n_jobs=n_jobs, progress=progress))
    return sets, next(r for r in CANDIDATES if r.label == ranking.reading.iloc[0])


def _lc_at_own_grid(reading: KDDReading, seed: int, scale: Scale, n_jobs: int,
                    sizes: Sequence[int] | None = None) -> tuple[pd.DataFrame, float]:
    """Figures 4-5's runs under ``reading`` at the readings' smaller protocol (``scale.lc_rows``, ``sizes`` (default
    ``lc_sizes``), ``lc_perms``, ``lc_runs``; :func:`figures_4_5_runs`) and the Lambda grid its own non-private curves
    choose (:func:`rank_grids`)."""
    data = kdd_data(reading, rows=scale.lc_rows, random_state=seed)
    lc = figures_4_5_runs(data, scale.lc_sizes if sizes is None else tuple(sizes), scale.lc_perms, scale.lc_runs,
                          LOSSES, random_state=seed, n_jobs=n_jobs, progress=False)
    return lc, float(rank_grids(lc[lc.method == "non-private"]).grid.iloc[0])


def reading_frames(side: pd.DataFrame) -> dict[str, dict[str, pd.DataFrame]]:
    """The readings' frames for :func:`dpkernels.experiments.chaudhuri2011.records.readings_table` from
    ``kdd_readings_runs.csv``: the published rows (no explanation applied) with each reading's reproduced rows."""
    published = {"table_2": table_frame("kddcup99", None), "figure_3": figure_2_3_frame("kddcup99", None),
                 "figures_4_5": learning_curve_frame(None)}
    out: dict[str, dict[str, pd.DataFrame]] = {}
    for (reading, name), g in side.groupby(["reading", "frame"], sort=False):
        pub = published[name]
        rep = g.drop(columns=["reading", "frame", "grid"]).dropna(axis=1, how="all")
        rep = rep[[c for c in rep.columns if c in pub.columns or c in ("se", "sd", "n_runs", "value", "source")]]
        for c in ("log10_Lambda", "epsilon", "size", "figure"):
            if c in rep.columns and c in pub.columns:
                rep[c] = rep[c].astype(float)
                pub = pub.assign(**{c: pub[c].astype(float)})
        out.setdefault(str(reading), {})[str(name)] = pd.concat([pub, rep], ignore_index=True)
    return out


def load_committed(name: str, out: Path | None = None) -> pd.DataFrame | None:
    """The committed output ``name`` of this command, copied into the notebook's output folder
    (:func:`dpkernels.experiments.registry.load_committed`)."""
    return _load_committed("chaudhuri2011", name, out)


# ----------------------------------------------------------------------------------------------
# the tests (run by the notebook on the committed runs)
# ----------------------------------------------------------------------------------------------
def _matrix(runs: pd.DataFrame) -> tuple[np.ndarray, np.ndarray, list[tuple]]:
    """(published vector, replicates x cells matrix, cell keys) of one arm's runs.  A missing error is refused: a cell
    the variant cannot produce has no rows (``variant_hypotheses`` names it), never a NaN row."""
    if runs["error"].isna().any():
        raise ValueError("runs with a missing error: a cell without a release has no rows")
    size = runs["size"].astype(float) if "size" in runs.columns else pd.Series(math.nan, index=runs.index)
    r = runs.assign(eps_key=runs.epsilon.fillna(-1.0).round(6), lam_key=runs.log10_Lambda.astype(float).fillna(-99.0),
                    size_key=size.fillna(0.0))
    # Figures 4-5's cells have no Lambda (NaN), the tables' and Figures 2-3's no size (NaN)
    keys = ["table", "loss", "method", "lam_key", "eps_key", "size_key"]
    piv = r.pivot_table(index="replicate", columns=keys, values="error", aggfunc="mean")
    pub = r.groupby(keys).published.first().reindex(piv.columns)
    return pub.to_numpy(float), piv.to_numpy(float), list(piv.columns)


def _row(hid: str, dataset: str, test: str, p: float, accepted: bool, not_rejected: bool, detail: str, fa: float,
         scope: str, void: bool = False) -> dict[str, object]:
    """A row of ``hypotheses.csv``: the decision (``accepted``; ``not_rejected``: the test did not reject it), the
    row's own p-value ``p`` and false acceptance ``fa``; ``void`` for a variant whose numbers are ours (its test says
    nothing of the hypothesis: outcome ``void``)."""
    return {"hypothesis": hid, "dataset": dataset, "test": test, "statistic": round(float(p), 4), "accepted": bool(accepted),
            "outcome": verdicts.hypothesis_outcome(bool(accepted), bool(not_rejected), void=void),
            "detail": detail, "scope": scope, "power": round(1 - fa, 4) if np.isfinite(fa) else math.nan,
            "false_acceptance": round(float(fa), 4) if np.isfinite(fa) else math.nan}


def variant_hypotheses(runs: pd.DataFrame, *, n_sim: int = 1000, random_state: int = 0) -> list[dict[str, object]]:
    """The rows of ``hypotheses.csv`` for every hypothesis in ``runs`` (``registered_runs.csv``), each by its
    registered test (``registry.yaml``), with the error control of :mod:`~dpkernels.experiments.chaudhuri2011.registry` (accepted only when not rejected
    at :data:`ALPHA_HYPOTHESIS` and the false acceptance is at most :data:`MAX_FALSE_ACCEPTANCE` / m).  A search over a
    constant (C11's kappa, C12's c) accepts when some value is not rejected; its false acceptance is bounded by the
    sum over the values (Bonferroni)."""
    reg = registered()
    rows: list[dict[str, object]] = []
    for hid in [h for h in reg if h in set(runs.hypothesis)]:
        h = runs[runs.hypothesis == hid]
        bound = MAX_FALSE_ACCEPTANCE / family_size(hid)
        scope = reg[hid]["scope"]
        if hid == "C14":
            rows += _calibration_n_rows(h, bound, scope, n_sim, random_state)
            continue
        for dataset, g in h.groupby("dataset", sort=False):
            ours = g[g.arm == "ours"]
            note = ""
            if hid == "K-subsets":
                sub = pd.concat([runs[(runs.hypothesis == "ours") & (runs.dataset == dataset)], g])
                means = (sub.assign(sample=sub.arm).groupby(["sample", *[c for c in CELL_KEYS]], dropna=False)
                         .agg(error=("error", "mean"), published=("published", "first")).reset_index()
                         .rename(columns={"sample": "replicate"}))
                P, M, cells = _matrix(means)
                j = joint_mean_test(P, M, n_published=1.0, n_sim=n_sim, random_state=random_state)
                arms = [("samples", j)]
            elif hid == "C13":  # the curve with the Delta > 0 points replacing C12's arm ours at those eps
                base = runs[(runs.hypothesis == "C12") & (runs.arm == "ours") & (runs.dataset == dataset)]
                if base.empty:
                    continue
                swap = base.epsilon.round(6).isin([round(e, 6) for e in C13_EPSILONS])
                variant = pd.concat([base[~swap], g[g.arm == "delta-branch"]])
                P, M, cells = _matrix(variant)
                _, M0, cells0 = _matrix(base)
                if cells != cells0:
                    raise ValueError("C13: the branch's cells and C12's arm ours differ")
                arms = [("delta-branch", joint_mean_test(P, M, n_published=PUBLISHED_N_RUNS["folds"], alternative=M0,
                                                         paired=True, n_sim=n_sim, random_state=random_state))]
            elif hid == "C15":  # ours: the bold Lambda's rows; the variant: each point's best Lambda
                ours15, variant15, choice = selected_lambda(g)
                P, M, cells = _matrix(variant15)
                _, M0, cells0 = _matrix(ours15)
                if cells != cells0:
                    raise ValueError("C15: the selected and the bold cells differ")
                moved = choice[choice.selected != choice.bold]
                note = f"; Lambda moved at {len(moved)} of {len(choice)} points: " + ", ".join(
                    f"{r.loss} {r.method} eps {r.eps_key:g} 1e{r.bold:g} -> 1e{r.selected:g}" for r in moved.itertuples())
                arms = [("variant", joint_mean_test(P, M, n_published=PUBLISHED_N_RUNS["folds"], alternative=M0,
                                                    paired=True, n_sim=n_sim, random_state=random_state))]
            elif hid in ("C11", "C12"):
                P0, M0, _ = _matrix(ours)
                arms = []
                for arm, a in g[g.arm != "ours"].groupby("arm", sort=False):
                    P, M, cells = _matrix(a)
                    arms.append((arm, joint_mean_test(P, M, n_published=PUBLISHED_N_RUNS["folds"], alternative=M0,
                                                      paired=True, n_sim=n_sim, random_state=random_state)))
            else:
                base = runs[(runs.hypothesis == "ours") & (runs.dataset == dataset)] if ours.empty else ours
                P0, M0, cells0 = _matrix(base)
                P, M, cells = _matrix(g[g.arm == "variant"])
                lacking = [c for c in cells0 if c not in cells]
                if lacking:  # the variant releases nothing there: tested on the cells both have, and said so
                    keep0 = [cells0.index(c) for c in cells0 if c in cells]
                    P0, M0 = P0[keep0], M0[:, keep0]
                    where = ", ".join(f"{c[1]} {c[2]} eps {c[4]:g}" + (f" at {c[5]:,.0f} rows" if c[5] else "")
                                      for c in lacking)
                    note = (f"; the variant releases nothing at {where} (where the paper shows a number; tested on "
                            "the others)")
                if cells != [c for c in cells0 if c in cells]:
                    raise ValueError(f"{hid}: the variant has cells ours lacks")
                if hid in ("K-minmax", "K-lc-minmax") and np.array_equal(M, M0):
                    rows.append(_row(hid, dataset, "exact: the variant's numbers equal ours", 1.0, False, False,
                                     "void: the variant gives our numbers exactly", 1.0, scope, void=True))
                    continue
                n_published = PUBLISHED_N_RUNS["permutations" if hid in LC_VARIANTS else "folds"]
                arms = [("variant", joint_mean_test(P, M, n_published=n_published, alternative=M0, paired=True,
                                                    n_sim=n_sim, random_state=random_state))]
            best = max(arms, key=lambda a: a[1]["p_value"])
            fa = min(1.0, sum(a[1]["false_acceptance"] for a in arms))
            not_rejected = best[1]["p_value"] >= ALPHA_HYPOTHESIS
            per_arm = "; ".join(f"{a}: T = {j['T']:.1f} (95% point {j['critical']:.1f}), p = {j['p_value']:.3f}, "
                                f"false acceptance {j['false_acceptance']:.3f}" for a, j in arms)
            replicates = "samples" if hid == "K-subsets" else "permutations" if hid in LC_VARIANTS else "folds"
            test = (f"joint mean test of {best[1]['cells']} published numbers against the "
                    f"{'law of 70,000-row samples' if hid == 'K-subsets' else 'variant'} over {best[1]['sets']} "
                    f"{replicates} (Ledoit-Wolf correlation, parametric bootstrap); accepted when p >= {ALPHA_HYPOTHESIS:g} "
                    f"and the false-acceptance rate <= {bound:.3g}")
            rows.append(_row(hid, dataset, test, best[1]["p_value"], not_rejected and fa <= bound, not_rejected,
                             f"{'not rejected' if not_rejected else 'rejected'} ({best[0]} best); {per_arm}{note}", fa, scope))
    return rows


def _calibration_n_rows(runs: pd.DataFrame, bound: float, scope: str, n_sim: int, random_state: int) -> list[dict[str, object]]:
    """C14's rows (one per data set, one decision): the joint mean test of each data set's cells against the variant,
    each at half :data:`ALPHA_HYPOTHESIS` (Bonferroni over the two); accepted when neither rejects and the false
    acceptance, at most the smaller of the two tests' (both must fail to reject), is within ``bound``.  Each row's
    statistic, power and false acceptance are its own data set's test's; ``accepted`` is the one decision."""
    datasets = list(dict.fromkeys(runs.dataset))
    level = ALPHA_HYPOTHESIS / len(datasets)
    tests = {}
    for dataset in datasets:
        g = runs[runs.dataset == dataset]
        P, M, _ = _matrix(g[g.arm == "variant"])
        _, M0, _ = _matrix(g[g.arm == "ours"])
        tests[dataset] = joint_mean_test(P, M, n_published=PUBLISHED_N_RUNS["folds"], alternative=M0,
                                         paired=True, n_sim=n_sim, alpha=level, random_state=random_state)
    rejecting = [d for d, j in tests.items() if j["p_value"] < level]
    fa = min(j["false_acceptance"] for j in tests.values())
    detail = "; ".join(f"{d}: T = {j['T']:.1f} over {j['cells']} cells ({100 * (1 - level):g}% point {j['critical']:.1f}), "
                       f"p = {j['p_value']:.3f}, false acceptance {j['false_acceptance']:.3f}" for d, j in tests.items())
    verdict = (f"{'rejected by ' + ' and '.join(rejecting) if rejecting else 'not rejected'}; the decision's false "
               f"acceptance {fa:.3f}; {detail}")
    table, loss, method, lam = C14_KDD_CELL
    scopes = {"adult": scope, "kddcup99": f"table={table}; loss={loss}; method={method}; log10_Lambda={lam:g}"}
    parts = ", ".join(f"{e}: {t['cells']} number{'' if t['cells'] == 1 else 's'}" for e, t in tests.items())
    rows = []
    for d, j in tests.items():
        test = (f"one decision from {len(tests)} joint mean tests ({parts}; "
                f"the variant over {j['sets']} folds), each at {level:g} (Bonferroni): rejected when either rejects, "
                f"accepted otherwise when the decision's false acceptance (the smaller of the two) <= {bound:.3g}; "
                f"the statistic, power and false acceptance here are {d}'s test's")
        rows.append(_row("C14", d, test, j["p_value"], not rejecting and fa <= bound, not rejecting, verdict,
                         j["false_acceptance"], scopes[d]))
    return rows


# ----------------------------------------------------------------------------------------------
# the command
# ----------------------------------------------------------------------------------------------
#: The command's parts that run registered hypotheses (rows of registered_runs.csv, or the readings side by side) and
#: those that run replicates of the published numbers (files of their own).
HYPOTHESIS_PARTS = ("readings", "kdd", "c11", "c12", "c13", "adult", "c14", "c15", "kdd-lc-variants")
REPLICATE_PARTS = ("adult-cv", "kdd-cv", "kdd-lc")


def main(argv: list[str] | None = None) -> int:
    """The command (module docstring)."""
    from dpkernels.report import REPO_ROOT

    ap = argparse.ArgumentParser(prog="python -m dpkernels.experiments.chaudhuri2011",
                                 description="Run the registered hypotheses of Chaudhuri et al. (2011) that need runs of their own.")
    ap.add_argument("--out", type=Path, default=REPO_ROOT / "build" / "registered" / "chaudhuri2011",
                    help="output folder (paper_figures/chaudhuri2011 regenerates the committed files)")
    ap.add_argument("--seed", type=int, default=2011, help="the notebook's seed (default 2011)")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--quick", action="store_true", help="a smoke-test size (not the registered protocol)")
    ap.add_argument("--only", nargs="*", default=None,
                    choices=(*HYPOTHESIS_PARTS, *REPLICATE_PARTS),
                    help="run only these parts (the others' rows are kept from an earlier run in --out)")
    ap.add_argument("--lc-variants", nargs="*", default=None, choices=tuple(LC_VARIANTS),
                    help="with kdd-lc-variants: run only these K-lc hypotheses (the others' rows are kept)")
    args = ap.parse_args(argv)
    scale = QUICK if args.quick else REGISTERED
    args.out.mkdir(parents=True, exist_ok=True)
    parts = set(args.only or (*HYPOTHESIS_PARTS, *REPLICATE_PARTS))
    out = args.out / "registered_runs.csv"
    runs = pd.read_csv(out) if out.exists() else pd.DataFrame(columns=RUN_COLUMNS)

    def save(new: pd.DataFrame, names: list[str]) -> None:
        nonlocal runs
        kept = _with_size(runs)[~runs.hypothesis.isin(names)]
        runs = pd.concat([kept, _with_size(new)], ignore_index=True)[RUN_COLUMNS]
        runs.to_csv(out, index=False)

    if "adult-cv" in parts:  # not a hypothesis: the replicates of Adult's published numbers
        repeated_cv(chaudhuri_data("adult"), "adult", scale.cv_repeats, args.seed, scale.cv_runs, n_jobs=args.jobs).to_csv(
            args.out / "adult_repeated_cv.csv", index=False)
    chosen = None
    if "readings" in parts:
        side, chosen = reading_side_by_side(args.seed, scale, args.jobs)
        side.to_csv(args.out / "kdd_readings_runs.csv", index=False)
    elif parts & {"kdd", "c11", "c14", "kdd-cv", "kdd-lc", "kdd-lc-variants"}:  # the reading the KDD variants change
        chosen = _rule_choice(args.seed, scale, args.jobs, progress=True)[1]
    if "kdd-cv" in parts:  # not a hypothesis: the replicates of Table 2's and Figure 3's published numbers
        cv = repeated_cv(kdd_samples(chosen, scale.kdd_rows), "kddcup99", scale.cv_repeats, args.seed, scale.cv_runs,
                         n_jobs=args.jobs)
        cv.insert(1, "reading", chosen.label)
        cv.to_csv(args.out / "kdd_repeated_cv.csv", index=False)
    if "kdd-lc" in parts:  # not a hypothesis: the replicates of Figures 4-5's published points
        lc_permutations(chosen, args.seed, scale, args.jobs).to_csv(args.out / "kdd_lc_permutations.csv", index=False)
    if not parts.intersection(HYPOTHESIS_PARTS):  # only replicates were asked for: registered_runs.csv is left as it is
        return 0
    if "kdd" in parts:
        save(kdd_variant_runs(chosen, args.seed, scale, args.jobs), ["ours", "K-subsets", *VARIANTS])
    if "c11" in parts:
        c11 = [delta_branch_runs(chaudhuri_data("adult"), "adult", args.seed, scale, args.jobs),
               delta_branch_runs(kdd_data(chosen, rows=scale.kdd_rows, random_state=args.seed), "kddcup99", args.seed,
                                 scale, args.jobs)]
        save(pd.concat(c11, ignore_index=True), ["C11"])
    if "c12" in parts:
        save(huber_curvature_runs(chaudhuri_data("adult"), args.seed, scale, args.jobs), ["C12"])
    if "c13" in parts:
        save(huber_branch_runs(chaudhuri_data("adult"), args.seed, scale, args.jobs), ["C13"])
    if "adult" in parts:
        save(adult_row_max_runs(args.seed, scale, args.jobs), ["A-row-max"])
    if "c14" in parts:
        save(calibration_n_runs(chosen, args.seed, scale, args.jobs), ["C14"])
    if "c15" in parts:
        save(lambda_selection_runs(chaudhuri_data("adult"), args.seed, scale, args.jobs), ["C15"])
    if "kdd-lc-variants" in parts:
        names = list(args.lc_variants or LC_VARIANTS)
        save(lc_variant_runs(chosen, args.seed, scale, args.jobs, only=names), names)
    print(f"wrote {out} ({len(runs)} rows" + (f"; chosen reading {chosen.label})" if chosen else ")"))
    return 0
