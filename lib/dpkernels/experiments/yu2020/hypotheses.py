"""Explanations of the gaps between our numbers and Yu et al.'s Table 2, registered before they were run
(:mod:`~dpkernels.experiments.yu2020.registry`, ``registry.yaml``: statements, families, history), what each changes in the protocol
(:data:`VARIANTS`) and the one test that decides them all (:func:`joint_test`).

A hypothesis is a statement about what Yu et al. computed (their accountant, their inputs, their selection, their runs).
Its variant reruns the protocol with that one change over the complete published grids (the published selection: the
best grid point by mean test accuracy) on every data set and method its scope names, or recomputes the numbers from our
runs when the change is in the reading of the runs (Y8, Y11, Y15); a configuration another hypothesis already draws is
read from its draws, not drawn again (``Variant.drawn_by``: Y20's AMP is Y14's). The test is joint over all the numbers
the hypothesis names (a statement about their code predicts every one of them): Bonferroni over the per-number t
statistics at :data:`~dpkernels.experiments.registry.ALPHA_HYPOTHESIS`. A hypothesis is accepted only when that test
does not reject it and its false-acceptance rate (the probability of not rejecting when the published numbers are draws
of our own protocol's, computed exactly) is at most :data:`~dpkernels.experiments.registry.MAX_FALSE_ACCEPTANCE` / m, m
the hypotheses registered for its family: a hypothesis whose variant cannot be told from our protocol cannot explain a
gap, whatever its p-value.

The variants' noise calibrations are NOT the estimators' guarantee (replace-one, exact accounting): most of them
state a weaker privacy level than (0.1, 1/n^2) under replace-one, and exist only to test what Yu et al. may have run.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace

import numpy as np
import pandas as pd
from scipy import stats

from dpkernels import verdicts
from dpkernels.experiments.registry import separation_shrink
from dpkernels.mechanisms.bassily import calibrate_noisy_gd, gradient_sensitivity
from dpkernels.mechanisms.gradient import (
    AMPCalibration,
    calibrate_dp_sgd,
    clip_bound,
    dp_sgd_record_bound,
    poisson_rate,
)

from . import protocol as P
from .registry import ALPHA_HYPOTHESIS, MAX_FALSE_ACCEPTANCE, family_size, registered

__all__ = ["NOISE_CALIBRATIONS", "TF_PRIVACY_ORDERS", "Variant", "VARIANTS", "scope", "needs_runs", "drawn_methods",
           "rdp_noise_multiplier", "tf_rdp_epsilon", "tf_rdp_noise_multiplier", "iyengar_noise_std",
           "variant_gd_sigma", "variant_sgd_noise", "iyengar_amp_calibration", "iyengar_psgd_sigma", "variant_split",
           "split_seeds", "hypothesis_configs", "per_run_best", "variant_numbers", "joint_test", "hypothesis_rows",
           "candidates"]

#: Noise calibrations of DP-GD and DP-SGD a hypothesis may ask :func:`~.protocol.run_point` for.
NOISE_CALIBRATIONS = ("add_remove", "rdp", "rdp_replace", "tf_rdp", "tf_rdp_replace", "iyengar")
#: The RDP orders of TensorFlow Privacy's ``compute_dp_sgd_privacy`` (2019), which Y5 and Y6 read as Yu et al.'s.
TF_PRIVACY_ORDERS = (1.25, 1.5, 1.75, 2.0, 2.25, 2.5, 3.0, 3.5, 4.0, 4.5, *map(float, range(5, 64)), 128.0, 256.0, 512.0)
#: The published number of runs (Yu et al., Sec. 4).
PUBLISHED_RUNS = 20


@dataclass(frozen=True)
class Variant:
    """What a hypothesis changes in the protocol (each field at its default is our protocol)."""

    #: DP-GD / DP-SGD calibration (:data:`NOISE_CALIBRATIONS`), ``"iyengar_amp"`` (AMP) or ``"iyengar_benchmark"``
    #: (AMP as ``"iyengar_amp"``, output-perturbed SGD as :func:`iyengar_psgd_sigma`, every grid point kept)
    noise: str = "ours"
    row_norm: float | None = None  #: rows clipped to this norm before training (Iyengar et al.'s sample clipping)
    column_max: bool = False  #: the trailing numeric columns divided by their maximum over all rows
    alpha_factor: float = 1.0  #: the regulariser times this
    delta_rows: str = "train"  #: delta = 1 / N^2 with N the training rows (``"train"``) or all rows (``"all"``)
    selection: str = "best_mean"  #: ``"per_run_best"``: each run's best grid point, averaged
    published_runs: int = PUBLISHED_RUNS  #: the runs behind each published mean (its se)
    splits: int = 0  #: other splits to run (seeds after Iyengar et al.'s)
    sgd_steps_per_t: float = 1.0  #: DP-SGD's steps per unit of the grid's T (1 / q: T counted in epochs)
    #: (method, hypothesis) pairs: this method's configuration is the other hypothesis's, read from its draws
    drawn_by: tuple[tuple[str, str], ...] = ()


#: Hypothesis id -> its variant (``registry.yaml`` states each).
VARIANTS: dict[str, Variant] = {
    "Y1": Variant(noise="add_remove"),
    "Y2": Variant(noise="rdp"),
    "Y3": Variant(noise="rdp_replace"),
    "Y4": Variant(row_norm=P.CLIP_NORM),
    "Y5": Variant(noise="tf_rdp"),
    "Y6": Variant(noise="tf_rdp_replace"),
    "Y7": Variant(noise="iyengar"),
    "Y8": Variant(selection="per_run_best"),
    "Y9": Variant(delta_rows="all"),
    "Y10": Variant(alpha_factor=2.0),
    "Y11": Variant(published_runs=10),
    "Y12": Variant(splits=8),
    "Y13": Variant(column_max=True),
    "Y14": Variant(noise="iyengar_amp"),
    "Y15": Variant(published_runs=10),
    "Y16": Variant(column_max=True),
    "Y17": Variant(noise="iyengar_amp", column_max=True),
    "Y18": Variant(noise="iyengar", column_max=True),
    "Y19": Variant(sgd_steps_per_t=1.0 / P.SAMPLING_RATE),
    "Y20": Variant(noise="iyengar_benchmark", published_runs=10, drawn_by=(("AMP", "Y14"),)),
}
#: The data sets whose prepared numeric columns already have maximum 1 over all rows (Iyengar et al.'s Adult script
#: divides them by it), where ``column_max`` leaves every row as it is (tested).
COLUMN_MAX_NOOP = ("adult",)


def scope(hypothesis: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """(methods, data sets) a registered hypothesis's test covers: its ``scope``'s ``method=`` values less those of its
    ``untested`` (the methods it bears on that its test left out), and its ``datasets``."""
    h = registered()[hypothesis]
    untested = _methods(h.get("untested", ""))
    return tuple(m for m in _methods(h["scope"]) if m not in untested), tuple(h["datasets"])


def _methods(scope_text: str) -> tuple[str, ...]:
    """The ``method=`` values of a registry scope."""
    for cond in str(scope_text).split(";"):
        col, _, values = cond.partition("=")
        if col.strip() == "method":
            return tuple(v.strip() for v in values.split("|"))
    return ()


def needs_runs(hypothesis: str) -> bool:
    """Whether the hypothesis's variant reruns the protocol: it changes what a run computes (else its numbers come
    from our runs: a change of the selection or of the published number's runs alone)."""
    v = VARIANTS[hypothesis]
    return v.selection == "best_mean" and replace(v, published_runs=PUBLISHED_RUNS, drawn_by=()) != Variant()


def drawn_methods(hypothesis: str) -> tuple[str, ...]:
    """The methods of the hypothesis's scope whose configuration it draws itself (not those of ``drawn_by``)."""
    others = dict(VARIANTS[hypothesis].drawn_by)
    return tuple(m for m in scope(hypothesis)[0] if m not in others)


def effective_variant(hypothesis: str, dataset: str) -> Variant:
    """The hypothesis's variant as it acts on ``dataset``: ``column_max`` dropped where it changes nothing
    (:data:`COLUMN_MAX_NOOP`)."""
    v = VARIANTS[hypothesis]
    return replace(v, column_max=False) if dataset in COLUMN_MAX_NOOP else v


def same_configuration(hypothesis: str, dataset: str) -> list[str]:
    """The registered hypotheses whose runs on ``dataset`` are draws of the same configuration as ``hypothesis``'s
    (equal :func:`effective_variant`, each rerunning the protocol on the published split), ``hypothesis`` first: on
    Adult Y7 and Y18, Y14 and Y17 (Y13's scaling changes nothing there).  :func:`variant_numbers` pools their runs:
    with two draws of one configuration, taking either alone would let the choice of draw decide a test."""
    v = effective_variant(hypothesis, dataset)
    if not needs_runs(hypothesis) or v.splits:
        return [hypothesis]
    return [hypothesis, *(h for h in VARIANTS if h != hypothesis and needs_runs(h) and not VARIANTS[h].splits
                          and dataset in scope(h)[1] and effective_variant(h, dataset) == v)]


# ----------------------------------------------------------------------------------------------
# the noise of each reading of Yu et al.'s accounting
# ----------------------------------------------------------------------------------------------
def _quiet_absl() -> tuple[logging.Logger, int]:
    absl = logging.getLogger("absl")
    level = absl.level
    absl.setLevel(logging.ERROR)  # orders whose series does not converge at small z are dropped (a warning each)
    return absl, level


def _bisect(eps: object, epsilon: float) -> float:
    """The smallest z (to 0.1%) with eps(z) <= epsilon (eps decreasing in z)."""
    hi = 1.0
    while eps(hi) > epsilon:
        hi *= 2.0
    lo = hi / 2.0
    while lo > 1e-3 and eps(lo) <= epsilon:
        hi, lo = lo, lo / 2.0
    while hi / lo > 1.001:
        mid = math.sqrt(lo * hi)
        if eps(mid) <= epsilon:
            hi = mid
        else:
            lo = mid
    return hi


def _rdp(z: float, sampling_rate: float, n_iter: int, orders: Sequence[float] | None) -> object:
    import dp_accounting
    from dp_accounting.rdp import rdp_privacy_accountant as rdp

    kw = {} if orders is None else {"orders": list(orders)}
    acc = rdp.RdpAccountant(neighboring_relation=dp_accounting.NeighboringRelation.ADD_OR_REMOVE_ONE, **kw)
    ev = dp_accounting.GaussianDpEvent(z)
    if sampling_rate < 1.0:
        ev = dp_accounting.PoissonSampledDpEvent(sampling_rate, ev)
    absl, level = _quiet_absl()
    try:
        acc.compose(ev, int(n_iter))
    finally:
        absl.setLevel(level)
    return acc


def rdp_noise_multiplier(epsilon: float, delta: float, sampling_rate: float, n_iter: int) -> float:
    """The smallest noise multiplier (to 0.1%) whose ``n_iter`` (Poisson-subsampled, rate q; q = 1: plain) Gaussian
    steps dp-accounting's RDP accountant (``ADD_OR_REMOVE_ONE``, its orders and its conversion) puts at epsilon <=
    ``epsilon`` at ``delta`` (Y2, Y3)."""
    return _bisect(lambda z: float(_rdp(z, sampling_rate, n_iter, None).get_epsilon(delta)), epsilon)


def tf_rdp_epsilon(noise_multiplier: float, delta: float, sampling_rate: float, n_iter: int) -> float:
    """Epsilon of ``n_iter`` (sampled) Gaussian steps as TensorFlow Privacy's 2019 accountant reported it: RDP at
    :data:`TF_PRIVACY_ORDERS` (the add/remove sampled Gaussian, dp-accounting's computation of it) and the classical
    conversion min over orders of RDP - log(delta) / (order - 1) (Mironov 2017, Prop. 3)."""
    acc = _rdp(noise_multiplier, sampling_rate, n_iter, TF_PRIVACY_ORDERS)
    orders, rdp = np.asarray(acc.orders, dtype=float), np.asarray(acc.rdp, dtype=float)
    return float(np.min(rdp - math.log(delta) / (orders - 1.0)))


def tf_rdp_noise_multiplier(epsilon: float, delta: float, sampling_rate: float, n_iter: int) -> float:
    """The smallest noise multiplier (to 0.1%) with :func:`tf_rdp_epsilon` <= ``epsilon`` (Y5, Y6)."""
    return _bisect(lambda z: tf_rdp_epsilon(z, delta, sampling_rate, n_iter), epsilon)


def iyengar_noise_std(epsilon: float, delta: float, clip_norm: float, n: int, n_iter: int) -> float:
    """Iyengar et al.'s private gradient descent noise (their benchmark's algorithms/gradient_descent.py): standard
    deviation 4 C sqrt(T log(1 / delta)) / (n epsilon) on the mean gradient of each step or batch (Y7)."""
    return 4.0 * clip_norm * math.sqrt(n_iter * math.log(1.0 / delta)) / (n * epsilon)


def variant_gd_sigma(calibration: str, epsilon: float, delta: float, clip_norm: float, n: int, d: int, T: int) -> float:
    """DP-GD's per-step sigma (on the mean gradient) under a hypothesis's calibration (:data:`NOISE_CALIBRATIONS`):
    ``"add_remove"`` (sensitivity C/n, exact Gaussian composition, Y1), ``"rdp"`` (dp-accounting's RDP, multiplier
    times C/n, Y2), ``"rdp_replace"`` (the same times 2C/n, Y3), ``"tf_rdp"`` / ``"tf_rdp_replace"`` (TensorFlow
    Privacy 2019, times C/n or 2C/n, Y5, Y6), ``"iyengar"`` (Y7)."""
    half = gradient_sensitivity(clip_bound(clip_norm, d), n) / 2.0
    if calibration == "add_remove":
        return calibrate_noisy_gd(epsilon, delta, half, T)
    if calibration in ("rdp", "rdp_replace"):
        return rdp_noise_multiplier(epsilon, delta, 1.0, T) * half * (2.0 if calibration == "rdp_replace" else 1.0)
    if calibration in ("tf_rdp", "tf_rdp_replace"):
        return tf_rdp_noise_multiplier(epsilon, delta, 1.0, T) * half * (2.0 if calibration == "tf_rdp_replace" else 1.0)
    if calibration == "iyengar":
        return iyengar_noise_std(epsilon, delta, clip_norm, n, T)
    raise ValueError(f"unknown calibration {calibration!r}")


def variant_sgd_noise(calibration: str, epsilon: float, delta: float, clip_norm: float, n: int, d: int, T: int,
                      sampling_rate: float = P.SAMPLING_RATE) -> float:
    """DP-SGD's noise standard deviation on the batch sum under a hypothesis's calibration: ``"add_remove"`` (PLD,
    ``ADD_OR_REMOVE_ONE``, Y1), ``"rdp"`` (dp-accounting's RDP, add/remove, Y2), ``"tf_rdp"`` / ``"tf_rdp_replace"``
    (TensorFlow Privacy 2019, multiplier times C or 2C, Y5, Y6), times the per-record bound; ``"iyengar"``: Y7's
    standard deviation on the batch mean times the expected batch size q n."""
    q = poisson_rate(sampling_rate)
    record = dp_sgd_record_bound(clip_norm, d, n)
    if calibration == "add_remove":
        return calibrate_dp_sgd(epsilon, delta, q, T, relation="add_remove") * record
    if calibration == "rdp":
        return rdp_noise_multiplier(epsilon, delta, q, T) * record
    if calibration in ("tf_rdp", "tf_rdp_replace"):
        return tf_rdp_noise_multiplier(epsilon, delta, q, T) * record * (2.0 if calibration == "tf_rdp_replace" else 1.0)
    if calibration == "iyengar":
        return iyengar_noise_std(epsilon, delta, clip_norm, n, T) * q * n
    raise ValueError(f"unknown calibration {calibration!r} for DP-SGD")


def iyengar_amp_calibration(epsilon: float, delta: float, n: int, data_norm: float, *, out_fraction: float,
                            noise_fraction: float) -> AMPCalibration:
    """AMP's constants as Iyengar et al.'s implementation sets them (their algorithms/approximate_minima_perturbation.py,
    read, not copied; Y14), in the units of :func:`~dpkernels.mechanisms.gradient.amp_releases` (J_b = (1/n) sum l +
    (lambda/2) ||w||^2 + b'w / n): beta = L^2, Lambda = r beta / (eps_obj - eps_p) with r = 2, lambda = Lambda / n;
    b's sd n (2L / n)(1 + sqrt(2 log(1 / delta_obj))) / eps_p; the output noise's sd (n gamma / Lambda)(1 + sqrt(2
    log(1 / delta_out))) / eps_out with gamma = 1 / n^2.  Its epsilon fields are the budget split as they state it,
    not an argument of ours."""
    L = float(data_norm)
    eps_out, delta_out = out_fraction * epsilon, out_fraction * delta
    eps_obj, delta_obj = epsilon - eps_out, delta - delta_out
    eps_p = noise_fraction * eps_obj
    big_lambda = 2.0 * L * L / (eps_obj - eps_p)
    lam = big_lambda / n
    gamma = 1.0 / (float(n) * n)
    sigma_obj = 2.0 * L * (1.0 + math.sqrt(2.0 * math.log(1.0 / delta_obj))) / eps_p
    sens_out = n * gamma / big_lambda
    sigma_out = sens_out * (1.0 + math.sqrt(2.0 * math.log(1.0 / delta_out))) / eps_out
    return AMPCalibration(eps_p, eps_obj - eps_p, eps_out, delta_obj, delta_out, lam, lam, sigma_obj, 2.0 * L, gamma,
                          sigma_out, sens_out)


def iyengar_psgd_sigma(epsilon: float, delta: float, data_norm: float, learning_rate: float, n_passes: int,
                       batch_size: int) -> tuple[float, float]:
    """(sigma, sensitivity) of output-perturbed SGD as Iyengar et al.'s benchmark sets them (their algorithms/psgd.py,
    the convex permutation SGD with a constant rate, read, not copied; Y20): the sensitivity 2 k L eta / b (Wu et
    al.'s bound, used whatever eta; it holds only for eta <= 2 / beta) and the classical Gaussian sigma
    sqrt(2 log(2 / delta)) x sensitivity / epsilon (ours: the analytic Gaussian of the sensitivity plus the float64
    drift, about 1.29x smaller at (0.1, 1 / n^2))."""
    sens = 2.0 * int(n_passes) * float(data_norm) * float(learning_rate) / int(batch_size)
    return math.sqrt(2.0 * math.log(2.0 / delta)) * sens / float(epsilon), sens


# ----------------------------------------------------------------------------------------------
# the variants' data and runs
# ----------------------------------------------------------------------------------------------
def variant_split(split: P.Split, variant: Variant) -> P.Split:
    """``split`` with the variant's change of inputs: rows clipped to ``row_norm`` (training and test rows alike, as
    Iyengar et al.'s gridsearch.py does; a positive rescaling of a test row does not change its prediction), or the
    trailing ``meta["numeric"]`` columns divided by their maximum over all rows (all-zero columns left at zero)."""
    Xtr, Xte = split.X_train, split.X_test
    if variant.column_max:
        k = int(split.meta["numeric"])
        top = np.maximum(Xtr[:, -k:].max(axis=0), Xte[:, -k:].max(axis=0))
        scale = np.where(top > 0, top, 1.0)
        Xtr, Xte = Xtr.copy(), Xte.copy()
        Xtr[:, -k:] /= scale
        Xte[:, -k:] /= scale
    if variant.row_norm is not None:
        Xtr, Xte = P._clip_rows(Xtr, variant.row_norm), P._clip_rows(Xte, variant.row_norm)
    if Xtr is split.X_train and Xte is split.X_test:
        return split
    return P.Split(split.name, Xtr, split.y_train, Xte, split.y_test, dict(split.meta))


def split_seeds(variant: Variant) -> list[int]:
    """The seeds of the other splits (Y12): the ``splits`` integers after Iyengar et al.'s."""
    return [P.SPLIT_SEED + 1 + k for k in range(int(variant.splits))]


def hypothesis_configs(hypothesis: str, datasets: Sequence[str], grids: Mapping[str, Mapping[str, Sequence]],
                       n_runs: int, seed: int) -> list[dict]:
    """The sweep configurations (:func:`~.protocol.protocol_configs`, labelled with the hypothesis id; ``"<id>@<seed>"``
    on Y12's other splits) of the variant on every data set of ``datasets`` and method its scope names, over
    ``grids``; none when the hypothesis needs no runs (its numbers come from ours)."""
    if not needs_runs(hypothesis):
        return []
    v = VARIANTS[hypothesis]
    methods, names = drawn_methods(hypothesis), scope(hypothesis)[1]
    names = [d for d in names if d in datasets]
    if v.sgd_steps_per_t != 1.0:  # Y19: the grid's T in epochs, so T / q steps
        grids = {**grids, "DP-SGD": {**grids["DP-SGD"], "n_iter": tuple(int(round(t * v.sgd_steps_per_t))
                                                                         for t in grids["DP-SGD"]["n_iter"])}}
    if not v.splits:
        return P.protocol_configs(names, methods, grids, n_runs, seed, label=hypothesis)
    return [c for s in split_seeds(v)
            for c in P.protocol_configs(names, methods, grids, n_runs, seed, label=f"{hypothesis}@{s}", split_seed=s)]


def per_run_best(runs: pd.DataFrame) -> pd.DataFrame:
    """Per (data set, method): every run's best grid point (runs paired by their index), averaged (Y8): ``mean``,
    ``sd`` over runs, ``n_runs``."""
    keys = ["dataset", "method"]
    out = []
    for key, g in runs.groupby(keys, sort=False):
        best = g.groupby("run")["accuracy"].max()
        out.append({**dict(zip(keys, key)), "mean": float(best.mean()), "sd": float(best.std()), "n_runs": int(len(best))})
    return pd.DataFrame(out)


def variant_numbers(hypothesis: str, ours_runs: pd.DataFrame, variant_runs: pd.DataFrame | None = None) -> pd.DataFrame:
    """The numbers (%) the hypothesis predicts for the published ones in its scope, with their standard error (``se``),
    the published number's standard error under the hypothesis (``se_published``) and the degrees of freedom (``df``):
    from the variant's runs (best grid point by mean; the runs of every hypothesis that drew the same configuration on
    the data set pooled, :func:`same_configuration`), or from ours (Y8: each run's best; Y11, Y15: ours with the
    published se at 10 runs), or over Y12's splits (the mean of the splits' best-grid means; se_published
    sqrt(sd_split^2 + sd_run^2 / 20), the spread of one other split's number)."""
    v = VARIANTS[hypothesis]
    methods, datasets = scope(hypothesis)
    ours = ours_runs[ours_runs["calibration"] == "ours"]
    if v.selection == "per_run_best":
        base = per_run_best(ours)
    elif not needs_runs(hypothesis):
        base = P.best_points(ours)
    elif v.splits:
        vr = variant_runs[variant_runs["calibration"].str.startswith(f"{hypothesis}@")] if variant_runs is not None else None
        if vr is None or vr.empty:
            return pd.DataFrame()
        per = P.best_points(vr)
        rows = []
        for (ds, method), g in per.groupby(["dataset", "method"], sort=False):
            sd_split, sd_run = float(g["mean"].std()), float(np.sqrt(np.mean(g["sd"] ** 2)))
            rows.append({"dataset": ds, "method": method, "value": 100 * float(g["mean"].mean()),
                         "se": 100 * sd_split / math.sqrt(len(g)),
                         "se_published": 100 * math.sqrt(sd_split**2 + sd_run**2 / PUBLISHED_RUNS),
                         "df": len(g) - 1, "detail": f"{len(g)} splits, sd between them {100 * sd_split:.2f}"})
        return _in_scope(pd.DataFrame(rows), methods, datasets)
    else:
        if variant_runs is None or variant_runs.empty:
            return pd.DataFrame()
        owner = dict(v.drawn_by)  # a method whose configuration another hypothesis draws: that one's pool
        pooled = []
        for ds in datasets:
            for method in methods:
                labels = same_configuration(owner.get(method, hypothesis), ds)
                pooled.append(variant_runs[variant_runs["calibration"].isin(labels) & (variant_runs["dataset"] == ds)
                                           & (variant_runs["method"] == method)])
        runs = pd.concat(pooled, ignore_index=True)
        if runs.empty:
            return pd.DataFrame()
        drawn = {k: [h for h in same_configuration(owner.get(k[1], hypothesis), k[0]) if h in set(g["calibration"])]
                 for k, g in runs.groupby(["dataset", "method"], sort=False)}
        base = P.best_points(runs.assign(calibration=hypothesis))
        cells = zip(base["dataset"], base["method"])
        base["detail"] = [f"{n} runs: the draws of {' and '.join(drawn[k])}, one configuration on {k[0]}"
                          if len(drawn[k]) > 1 else f"{n} runs: {drawn[k][0]}'s draws" if drawn[k] != [hypothesis]
                          else "" for k, n in zip(cells, base["n_runs"])]
    if "detail" not in base:
        base["detail"] = ""
    base = base.assign(value=100 * base["mean"], se=100 * base["sd"] / np.sqrt(base["n_runs"]),
                       se_published=100 * base["sd"] / math.sqrt(v.published_runs), df=base["n_runs"] - 1)
    return _in_scope(base[["dataset", "method", "value", "se", "se_published", "df", "detail"]], methods, datasets)


def _in_scope(df: pd.DataFrame, methods: Sequence[str], datasets: Sequence[str]) -> pd.DataFrame:
    if df.empty:
        return df
    return df[df["method"].isin(methods) & df["dataset"].isin(datasets)].reset_index(drop=True)


# ----------------------------------------------------------------------------------------------
# the test
# ----------------------------------------------------------------------------------------------
def joint_test(numbers: pd.DataFrame, n_family: int) -> dict[str, object]:
    """The registry's test of one hypothesis over its K numbers.

    ``numbers``: one row per published number with ``published``, the variant's ``value``, ``se``, ``se_published``,
    ``df``, and our protocol's ``ours``, ``se_ours``, ``sd_ours`` (all in %).  t_k = (published - value) / sqrt(se^2 +
    se_published^2); rejected when some ``|t_k|`` > t_df(1 - alpha / (2K)) (Bonferroni at
    :data:`ALPHA_HYPOTHESIS`); p = min(1, K min p_k).  False acceptance: the probability of no rejection when each
    published number is drawn from our protocol's law (the effect absent), the product over the numbers of the normal
    probability of the acceptance interval, the variant's interval given.  The law: centred at value + s (ours -
    value), s = sqrt(max(0, 1 - se_ours^2 / (ours - value)^2)) (the squared separation less the noise of our
    estimate, floored at 0: centred at ``ours`` itself, a variant of our protocol's own law would look apart from it
    by that noise, and its false acceptance came out at 0.86 where 0.96 is right), with spread sqrt(se_ours^2 +
    (sd_ours / sqrt(20))^2) (the published mean's spread and the uncertainty of that centre: without the latter a
    separation estimated too large states the false acceptance too low where acceptance is decided, the tail).  The
    variant's runs and ours share the split but not the noise draws, so given the variant's mean our mean's noise is
    se_ours (Y8, Y11 and Y15 re-read our own runs: there it is smaller, and the shrinkage errs large).
    Accepted when not rejected and the false acceptance is at most :data:`MAX_FALSE_ACCEPTANCE` / ``n_family``."""
    K = len(numbers)
    if K == 0:
        return {"k": 0, "max_abs_t": math.nan, "p_value": math.nan, "not_rejected": False, "false_acceptance": math.nan,
                "bound": MAX_FALSE_ACCEPTANCE / max(int(n_family), 1), "accepted": False, "t": []}
    pub, val = numbers["published"].to_numpy(float), numbers["value"].to_numpy(float)
    S = np.hypot(numbers["se"].to_numpy(float), numbers["se_published"].to_numpy(float))
    dof = numbers["df"].to_numpy(float)
    t = (pub - val) / S
    crit = stats.t.ppf(1.0 - ALPHA_HYPOTHESIS / (2 * K), dof)
    p_each = 2.0 * stats.t.sf(np.abs(t), dof)
    p = float(min(1.0, K * p_each.min()))
    not_rejected = bool(np.all(np.abs(t) <= crit))
    sep, se_o = numbers["ours"].to_numpy(float) - val, numbers["se_ours"].to_numpy(float)
    tau = np.hypot(se_o, numbers["sd_ours"].to_numpy(float) / math.sqrt(PUBLISHED_RUNS))
    o = val + separation_shrink(sep**2, se_o**2) * sep
    fa = float(np.prod(stats.norm.cdf((val + crit * S - o) / tau) - stats.norm.cdf((val - crit * S - o) / tau)))
    bound = MAX_FALSE_ACCEPTANCE / max(int(n_family), 1)
    return {"k": K, "max_abs_t": float(np.max(np.abs(t))), "p_value": p, "not_rejected": not_rejected,
            "false_acceptance": fa, "bound": bound, "accepted": bool(not_rejected and fa <= bound), "t": t.tolist(),
            "crit": crit.tolist()}


def hypothesis_rows(hypothesis: str, ours_runs: pd.DataFrame, published: Mapping[tuple[str, str], float],
                    variant_runs: pd.DataFrame | None = None) -> pd.DataFrame:
    """The rows of ``hypotheses.csv`` for one registered hypothesis: one per data set it was tested on (the joint
    decision on every row; ``statistic`` the largest ``|t|`` on that data set), with ``scope``, ``power`` (1 - false
    acceptance) and ``false_acceptance``.  Empty when it has no number to test (not run, or no data)."""
    reg = registered()[hypothesis]
    nums = variant_numbers(hypothesis, ours_runs, variant_runs)
    if nums.empty:
        return pd.DataFrame()
    ours = P.best_points(ours_runs[ours_runs["calibration"] == "ours"]).set_index(["dataset", "method"])
    nums = nums[[(r.dataset, r.method) in published and (r.dataset, r.method) in ours.index
                 for r in nums.itertuples()]].reset_index(drop=True)
    o = ours.loc[list(zip(nums["dataset"], nums["method"]))]
    nums = nums.assign(published=[published[(r.dataset, r.method)] for r in nums.itertuples()],
                       ours=100 * o["mean"].to_numpy(), sd_ours=100 * o["sd"].to_numpy(),
                       se_ours=100 * (o["sd"] / np.sqrt(o["n_runs"])).to_numpy())
    m = family_size(hypothesis)
    res = joint_test(nums, m)
    nums = nums.assign(t=res["t"])
    names = ", ".join(f"{r.dataset} {r.method}" for r in nums.itertuples())
    test = (f"{reg['test']}: t of each number (variant against published), Bonferroni over {res['k']} ({names}) at "
            f"{ALPHA_HYPOTHESIS:g}; accepted when not rejected and the false acceptance <= {MAX_FALSE_ACCEPTANCE:g} / "
            f"{m} = {res['bound']:.3g}")
    joint = (f"joint: p = {res['p_value']:.3g} ({'not rejected' if res['not_rejected'] else 'rejected'}), false "
             f"acceptance {res['false_acceptance']:.3g} (bound {res['bound']:.3g})")
    rows = []
    for ds, g in nums.groupby("dataset", sort=False):
        each = "; ".join(f"{r.method}: variant {r.value:.2f}% (se {r.se:.2f}{', ' + r.detail if r.detail else ''}), "
                         f"published {r.published:.1f} (se {r.se_published:.2f}), ours {r.ours:.2f}: t {r.t:.2f}"
                         for r in g.itertuples())
        rows.append({"hypothesis": hypothesis, "dataset": ds, "test": test,
                     "statistic": round(float(np.max(np.abs(g["t"]))), 4), "accepted": res["accepted"],
                     "outcome": verdicts.hypothesis_outcome(res["accepted"], res["not_rejected"]),
                     "detail": f"{each}; {joint}", "scope": reg["scope"], "untested": reg.get("untested", ""),
                     "known": reg.get("known", ""),
                     "power": round(1.0 - res["false_acceptance"], 4), "false_acceptance": round(res["false_acceptance"], 4)})
    return pd.DataFrame(rows)


def candidates(hypotheses: pd.DataFrame) -> dict[tuple[str, str], str]:
    """(data set, method) -> the accepted hypothesis that names it (its scope's methods on the data sets it was
    accepted on): the ``errata`` candidates of :func:`~.records.table_2_frame`."""
    out: dict[tuple[str, str], str] = {}
    if hypotheses.empty:
        return out
    for r in hypotheses[hypotheses["accepted"].astype(bool)].itertuples():
        for method in scope(r.hypothesis)[0]:
            out.setdefault((r.dataset, method), r.hypothesis)
    return out
