"""Hypotheses registered before they are run (issue 28, item 4): each paper's ``registry.yaml`` lists, per hypothesis
about its published numbers, the cell family it bears on, its scope (:func:`dpkernels.report.in_scope`), the
statement, the test that decides it, the alternative its power is measured against, and whether it was run.

Error control across the search.  A hypothesis is accepted only when its own test does not reject it at
:data:`ALPHA_HYPOTHESIS` and its false-acceptance rate (measured on data simulated without its effect) is at most
:data:`MAX_FALSE_ACCEPTANCE` / m, m the number of hypotheses registered for its family (:func:`family_size`, run or
not: the search that was planned): by Bonferroni the chance that a family gets any false explanation is at most
:data:`MAX_FALSE_ACCEPTANCE`.  Families may overlap (a published number in the scope of hypotheses of several
families): the chance of a false explanation of one number is then at most :data:`MAX_FALSE_ACCEPTANCE` times the
number of families that cover it.  A search over the values of a constant inside one hypothesis (Chaudhuri's C11, C12)
accepts when some value is not rejected, and its false acceptance is bounded by the sum over the values.

The joint test most hypotheses use (:func:`joint_mean_test`): the published numbers of the cells a hypothesis bears on
against the law of the protocol repeated under the hypothesis (its replicates: folds, permutations, splits or
samples), with the published number the mean of as many replicates as the paper averaged.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import yaml
from numpy.typing import NDArray

from dpkernels import verdicts

__all__ = ["ALPHA_HYPOTHESIS", "MAX_FALSE_ACCEPTANCE", "Registry", "registered", "family_size", "registry_table",
           "joint_mean_test", "separation_shrink", "joint_test_row", "load_committed"]

Array = NDArray[np.float64]

#: Level of a hypothesis's own test (it is rejected when its p-value is below this).
ALPHA_HYPOTHESIS = 0.05
#: Family-wise rate of a false explanation per cell family (Bonferroni over the hypotheses registered for it).
MAX_FALSE_ACCEPTANCE = 0.2


@lru_cache(maxsize=None)
def _load(path: str) -> dict[str, Any]:
    return yaml.safe_load(Path(path).read_text())


def registered(path: Path) -> dict[str, dict[str, Any]]:
    """Every hypothesis of the registry at ``path`` by id (family, scope, statement, test, alternative, status)."""
    return dict(_load(str(path))["hypotheses"])


def family_size(hypothesis: str, path: Path) -> int:
    """m: the number of hypotheses registered for ``hypothesis``'s family."""
    reg = registered(path)
    fam = reg[hypothesis]["family"]
    return sum(1 for h in reg.values() if h["family"] == fam)


def registry_table(path: Path) -> pd.DataFrame:
    """The registry as a table (one row per hypothesis: family, m, status, statement), for a notebook."""
    reg = registered(path)
    return pd.DataFrame([{"hypothesis": k, "family": v["family"], "m": family_size(k, path), "status": v["status"],
                          "statement": v["statement"]} for k, v in reg.items()])


@dataclass(frozen=True)
class Registry:
    """One paper's registry file (``path``), with :func:`registered`, :func:`family_size` and
    :func:`registry_table` bound to it: what each paper's ``registry`` module exposes."""

    path: Path

    def registered(self) -> dict[str, dict[str, Any]]:
        """Every registered hypothesis by id."""
        return registered(self.path)

    def family_size(self, hypothesis: str) -> int:
        """m: the hypotheses registered for ``hypothesis``'s family."""
        return family_size(hypothesis, self.path)

    def registry_table(self) -> pd.DataFrame:
        """The registry as a table."""
        return registry_table(self.path)


def joint_mean_test(published: Array, replicates: Array, *, n_published: float = 1.0, alternative: Array | None = None,
                    paired: bool = False, n_sim: int = 1000, alpha: float = ALPHA_HYPOTHESIS,
                    random_state: int = 0) -> dict[str, float]:
    """A joint test that ``published`` (k numbers) is the mean of ``n_published`` replicates of the law whose
    replicates are the rows of ``replicates`` (n x k: the protocol repeated under the hypothesis; its folds,
    permutations, splits, samples or sets of noise directions).

    Statistic: T = z' R^-1 z, z the published numbers' deviations from the replicates' mean in units of each cell's
    sd sqrt(1/n + 1/n_published) and R the Ledoit-Wolf estimate of the replicates' correlation.  Its law under the
    hypothesis is simulated with the estimation included (each replicate of the bootstrap draws n replicates and one
    published vector, the mean of ``n_published`` draws, from N(m, S), re-estimates, computes T): p-value = share of
    replicates with T above the published one; rejected when it is below ``alpha``.  Cells whose replicates do not
    vary (sd 0) are left out (``cells`` counts those kept).

    False acceptance (1 minus it is the power): the share of the same bootstrap replicates in which a published vector
    drawn from the alternative instead is not rejected (T against that replicate's re-estimated sets at most the
    (1 - alpha) point of the null's).  The alternative: ``alternative`` (rows: replicates of the alternative's law, e.g.
    our reading at the same protocol; the published vector the mean of ``n_published`` draws from it), or by default m
    plus the observed deviations ``|published - m|`` under independent random signs (a difference of the observed size
    with no shared effect: C5's alternative).

    With ``alternative`` its mean is estimated, and its separation d = m_alt - m from the hypothesis's carries the
    noise of both estimates: ||d||_W^2 (W the test's metric, each cell's spread and R, from ``replicates``) is on
    average ||delta||_W^2 + N, N = tr(W Cov(d)); placing the alternative at m_alt itself states its false acceptance
    too low (two replicate sets of one law came out at 0.51 where 0.95 is right).  Its vectors are m + lam s d +
    (its own law's spread), s = sqrt(max(0, 1 - N / ||d||_W^2)) (the squared separation less its noise, floored at
    0), with lam chosen in each bootstrap replicate so that lam s d has, in that replicate's re-estimated metric,
    the length s d has in W: unscaled, the re-estimated spreads stretch it a second time, and at 5 replicates of 49
    cells the rate came out at 0.006 where the test accepts 0.06-0.12 of such vectors.  Cov(d) = Cov(alternative -
    replicates) / n when ``paired`` (row i of both is the same fold, split or permutation: unbiased whenever the
    rows are matched, and smaller when they share draws), else Cov(alternative) / n_alt + Cov(replicates) / n.  The
    rate is an estimate from the replicates at hand; in simulations at 5 to 20 replicates of 8 to 76 cells, paired
    or not (two of them are tests), its mean was within 0.08 of the truth's where the truth is small (0.01 to 0.13:
    above it in most designs, 0.08 for 0.12 at 10 unpaired replicates of 40 cells), and well below it only where the
    truth is large (0.36 for 0.65 at 5 unpaired replicates of 40 cells).  ``separation`` (||d||_W^2),
    ``separation_noise`` (N) and ``shrink`` (s) are returned."""
    P, M = np.asarray(published, float), np.asarray(replicates, float)
    keep = M.std(axis=0, ddof=1) > 0
    P, M = P[keep], M[:, keep]
    A = None if alternative is None else np.asarray(alternative, float)[:, keep]
    n, k = M.shape
    if n < 2 or k == 0:
        raise ValueError(f"a joint test needs two replicates or more of at least one varying cell (got {n} x {k})")
    scale = math.sqrt(1.0 / n + 1.0 / float(n_published))
    rng = np.random.default_rng([random_state, 5])

    def stats_of(xs: Array, sets: Array) -> Array:
        """T of each row of ``xs`` against the law estimated from ``sets``: deviations in units of each cell's spread,
        and one Ledoit-Wolf fit of the standardised sets (shrinkage towards the identity on the correlation scale:
        shrinking the raw covariance towards its mean variance would let a cell of small variance hide a large
        deviation)."""
        mu, sd = sets.mean(axis=0), sets.std(axis=0, ddof=1)
        dev = (np.atleast_2d(xs) - mu) / (sd * scale)
        corr = _ledoit_wolf((sets - mu) / sd)
        try:
            sol = np.linalg.solve(corr, dev.T).T
        except np.linalg.LinAlgError:  # a singular estimate (very few replicates): the pseudo-inverse
            sol = (np.linalg.pinv(corr) @ dev.T).T
        return np.einsum("ij,ij->i", dev, sol)

    def chol(R: Array) -> Array:
        mean, sd = R.mean(axis=0), R.std(axis=0, ddof=1)
        sd = np.where(sd > 0, sd, 0.0)
        S = _ledoit_wolf((R - mean) / np.where(sd > 0, sd, 1.0)) * np.outer(sd, sd)  # own variances, shrunk correlation
        try:
            return np.linalg.cholesky(S + 1e-15 * max(np.trace(S), 1e-300) / R.shape[1] * np.eye(R.shape[1]))
        except np.linalg.LinAlgError:  # positive semi-definite (very few replicates): a symmetric square root
            w, V = np.linalg.eigh(S)
            return V * np.sqrt(np.clip(w, 0.0, None))

    m = M.mean(axis=0)
    L = chol(M)
    t_pub = float(stats_of(P, M)[0])
    root = 1.0 / math.sqrt(float(n_published))
    shrink = separation = noise = math.nan
    if A is not None:
        if A.shape[0] < 2:
            raise ValueError(f"the alternative needs two replicates or more (got {A.shape[0]})")
        L_alt = chol(A)
        d = A.mean(axis=0) - m
        C_d = _separation_cov(A, M, paired=paired)
        sd = M.std(axis=0, ddof=1)
        W = np.linalg.pinv(_ledoit_wolf((M - m) / sd)) / np.outer(sd * scale, sd * scale)  # T = (x - m)' W (x - m)
        separation, noise = float(d @ W @ d), float(np.trace(W @ C_d))
        if not (np.isfinite(separation) and np.isfinite(noise)):
            raise ValueError("the separation of the alternative from the hypothesis is not finite")
        shrink = float(separation_shrink(separation, noise))
        offset = shrink * d  # its squared length in the observed metric: shrink^2 separation
    dev = np.abs(P - m)
    null, alt = np.empty(n_sim), np.empty(n_sim)
    for i in range(n_sim):
        sets = m + rng.standard_normal((n, k)) @ L.T
        x_null = m + root * (L @ rng.standard_normal(k))
        if A is None:
            null[i], alt[i] = stats_of(np.vstack([x_null, m + rng.choice([-1.0, 1.0], size=k) * dev]), sets)
            continue
        # the alternative's vector m + lam offset + z against this replicate's sets (mean mu, metric W*): T = a'W*a +
        # 2 lam a'W*offset + lam^2 offset'W*offset, a = m + z - mu, lam such that lam^2 offset'W*offset is the
        # offset's squared length in the observed metric (the re-estimated spreads must not stretch it a second time)
        z = root * (L_alt @ rng.standard_normal(k))
        t_null, t_a, t_ao, t_o = stats_of(np.vstack([x_null, m + z, m + z + offset, sets.mean(axis=0) + offset]), sets)
        length = shrink**2 * separation
        lam = math.sqrt(length / t_o) if t_o > 0 else 0.0
        null[i], alt[i] = t_null, t_a + lam * (t_ao - t_a - t_o) + length
    crit = float(np.quantile(null, 1 - alpha))
    return {"T": t_pub, "p_value": float((1 + np.sum(null >= t_pub)) / (n_sim + 1)), "critical": crit,
            "false_acceptance": float(np.mean(alt <= crit)), "cells": k, "sets": n, "shrink": shrink,
            "separation": separation, "separation_noise": noise}


def _ledoit_wolf(X: Array) -> Array:
    """The Ledoit-Wolf estimate of the covariance of X's rows (:func:`sklearn.covariance.ledoit_wolf`), without
    scikit-learn's validation of its parameters (the same computation; in the bootstrap of :func:`joint_mean_test`,
    thousands of fits of a few rows, the validation took a third of the time).  X is still checked for finiteness."""
    from sklearn import config_context
    from sklearn.covariance import ledoit_wolf

    with config_context(skip_parameter_validation=True):
        return ledoit_wolf(X)[0]


def separation_shrink(separation: Array | float, noise: Array | float) -> Array:
    """s = sqrt(max(0, 1 - noise / separation)), 0 where the separation is 0: the factor that shrinks an estimated
    separation (squared length ``separation``, of which ``noise`` is on average the estimates' noise) to the squared
    length less its noise, floored at 0.  Used by :func:`joint_mean_test` and Yu et al.'s per-number test."""
    sep, noise = np.asarray(separation, float), np.asarray(noise, float)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.sqrt(np.clip(1.0 - np.where(sep > 0, noise / sep, np.inf), 0.0, None))


def _separation_cov(A: Array, M: Array, *, paired: bool) -> Array:
    """Cov(d) of the separation d of the alternative's mean (rows ``A``) from the hypothesis's (rows ``M``): Cov(A -
    M) / n for paired rows, Cov(A) / n_A + Cov(M) / n otherwise."""
    k = M.shape[1]
    if paired:
        if A.shape != M.shape:
            raise ValueError(f"paired replicates need one row of each per replicate (got {A.shape} and {M.shape})")
        return np.cov(A - M, rowvar=False, ddof=1).reshape(k, k) / M.shape[0]
    return (np.cov(A, rowvar=False, ddof=1).reshape(k, k) / A.shape[0]
            + np.cov(M, rowvar=False, ddof=1).reshape(k, k) / M.shape[0])


def joint_test_row(hypothesis: str, j: dict[str, float], n_family: int, what: str, alternative: str, detail: str,
                   scope: str) -> dict[str, object]:
    """A row of ``hypotheses.csv`` (without its data set) from a :func:`joint_mean_test` result ``j``: accepted when
    not rejected at :data:`ALPHA_HYPOTHESIS` and the false acceptance is at most :data:`MAX_FALSE_ACCEPTANCE` /
    ``n_family``.  ``what``: the published numbers and the law they are tested against; ``alternative``: where the
    false acceptance was measured; ``detail``: what else the row should say."""
    bound = MAX_FALSE_ACCEPTANCE / max(int(n_family), 1)
    not_rejected = bool(j["p_value"] >= ALPHA_HYPOTHESIS)
    accepted = bool(not_rejected and j["false_acceptance"] <= bound)
    return {"hypothesis": hypothesis,
            "test": f"joint mean test of {what} over {j['sets']} replicates (Ledoit-Wolf correlation, parametric "
                    f"bootstrap); accepted when p >= {ALPHA_HYPOTHESIS:g} and the false-acceptance rate <= {bound:.3g}",
            "statistic": round(j["p_value"], 4), "accepted": accepted,
            "outcome": verdicts.hypothesis_outcome(accepted, not_rejected),
            "detail": f"T = {j['T']:.1f} against the 95% point {j['critical']:.1f} (p = {j['p_value']:.3f}: "
                      f"{'not rejected' if not_rejected else 'rejected'}); false acceptance {j['false_acceptance']:.3f} on "
                      f"{alternative}" + (f"; {detail}" if detail else ""),
            "scope": scope, "power": round(1 - j["false_acceptance"], 4),
            "false_acceptance": round(j["false_acceptance"], 4)}


def load_committed(paper: str, name: str, out: Path | None = None) -> pd.DataFrame | None:
    """The committed output ``name`` of a paper's variants command (``paper_figures/<paper>/<name>``), copied into
    the notebook's output folder ``out`` (``dpkernels update-reference`` replaces that folder with the run's, so the
    run must carry the file); None when it is absent (the hypotheses it holds are then not run)."""
    import shutil

    from dpkernels.report import REPO_ROOT

    src = REPO_ROOT / "paper_figures" / paper / name
    if not src.exists():
        return None
    if out is not None and Path(out).resolve() != src.parent.resolve():
        shutil.copyfile(src, Path(out) / name)
    return pd.read_csv(src)
