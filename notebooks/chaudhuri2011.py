# ---
# jupyter:
#   jupytext:
#     formats: ../build/notebooks//ipynb,py:percent
#     text_representation:
#       extension: .py
#       format_name: percent
#       format_version: '1.3'
#       jupytext_version: 1.19.6
#   kernelspec:
#     display_name: Python (dpkernels)
#     language: python
#     name: dpkernels
# ---

# %% [markdown]
# # Chaudhuri, Monteleoni and Sarwate (2011): differentially private ERM
#
# *Differentially Private Empirical Risk Minimization*, JMLR 12:1069-1109, 2011 (JMLR numbering throughout; our
# copy of the paper lost its formulas, which `../shared/papers/chaudhuri2011-formulas.md` restores; they are checked
# numerically here like everything else).
#
# The paper privatises regularised ERM, J(f, D) = (1/n) sum_i l(y_i f'x_i) + (Lambda/2)||f||^2 with ||x_i|| <= 1,
# in two ways: **output perturbation** (Algorithm 1: noise with density ~ exp(-beta ||b||) added to the minimiser)
# and **objective perturbation** (Algorithm 2: a random linear term b'f/n added to the objective).  Random features
# extend both to kernels (Algorithm 3) and the exponential mechanism tunes Lambda privately (Algorithm 4).
#
# This companion follows the paper's order.  Every statement becomes a check (a calculator from
# `dpkernels.bounds.chaudhuri` against a measurement); the verdict is shown right after it, and the complete check
# table closes the notebook.  The experiments are run by `dpkernels.experiments.chaudhuri2011` (the driver and its
# verdict criteria); this notebook shows their results next to the published ones.

# %% tags=["parameters"]
profile = "quick"
seed = 2011
sizes = None

# %%
import time

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import seaborn as sns
from matplotlib.ticker import FuncFormatter

from dpkernels import profiles
from dpkernels.bounds import chaudhuri as B
from dpkernels.datasets import DatasetUnavailable
from dpkernels.experiments import chaudhuri2011 as E
from dpkernels.losses import make_loss
from dpkernels.mechanisms import ObjectivePerturbation
from dpkernels.report import Checks, output_dir, stable_text, write_table

START = time.perf_counter()
P = profiles.load("chaudhuri2011", profile, sizes)
OUT = output_dir("chaudhuri2011", profile)
checks = Checks("chaudhuri2011")
peer = Checks("diffprivlib")  # findings about diffprivlib (ERRATA D1-D2), kept apart from the paper's checks
sns.set_theme(style="whitegrid", context="notebook")
pd.set_option("display.width", 160)
pd.set_option("display.max_columns", 24)
pd.set_option("display.max_rows", 120)
LOSSES = ("logistic", "huber")  # the paper's "LR" and "SVM" (Huber loss, h = 0.5)
COLORS = {"output": "tab:green", "objective": "tab:blue", "non-private": "tab:red"}
LABELS = {"output": "Sensitivity (Alg. 1)", "objective": "Objective (Alg. 2)", "non-private": "Non-private"}
print(f"profile={profile}, seed={seed}, output={OUT.name}/")


def save(fig, name):
    fig.savefig(OUT / f"{name}.png", dpi=130, bbox_inches="tight")
    plt.show()


# %% [markdown]
# ## Data (Section 7.1)
#
# **Adult**: rows with a missing value dropped, categoricals one-hot with the vocabularies of `adult.names` (105
# columns, as in the paper), columns scaled to maximum 1, rows projected onto the unit ball.
#
# **KDDCup99**: the paper draws 70,000 connections from the full 4.9-million-row file, which we do not have.  The 10
# percent file we have is not a uniform sample of it: it holds a tenth of the frequent labels but *every* row of the
# rare ones (back, teardrop, pod, ...), which are therefore ten times more frequent in it.  We draw the 70,000 rows
# from the 10 percent file with the label composition of the full file (`composition="full file"`; the full file's
# label counts are public), the paper's task (denial of service or not; +1 = not DoS); the one-hot encoding then has
# fewer columns than the paper's 119.  The uniform sample of the 10 percent file is kept as an alternative reading
# below (ERRATA C4).

# %%
adult = E.chaudhuri_data("adult")
try:
    kdd = E.chaudhuri_data("kddcup99", random_state=seed, composition="full file")
    kdd_reason = ""
except DatasetUnavailable as exc:
    kdd, kdd_reason = None, str(exc)
print(f"adult: {adult.X.shape}, positive fraction {np.mean(adult.y == 1):.4f}")
print(f"kddcup99: {kdd.X.shape}, positive fraction {np.mean(kdd.y == 1):.4f}" if kdd is not None else f"kddcup99 unavailable: {kdd_reason}")

# %%
# NBVAL_CHECK_OUTPUT
print("adult shape", adult.X.shape, "max row norm <= 1:", bool(np.linalg.norm(adult.X, axis=1).max() <= 1 + 1e-12))
print("dropped for missing values:", adult.meta["rows_dropped_missing"], "(paper: 45,220 rows remain; here 45,222)")

# %%
E.record_data(checks, adult)

# %% [markdown]
# ## Algorithms 1 and 2 and their calibration (Theorems 6 and 9, Corollaries 8, 11-13)
#
# Output perturbation draws ||b|| ~ Gamma(d, 2/(n Lambda eps_p)) (Corollary 8's sensitivity 2/(n Lambda)).
# Objective perturbation spends eps_p - eps' = 2 log(1 + c/(n Lambda)) on the Jacobian of the map b -> f_priv and eps'
# on the noise (beta = eps'/2), or, when that leaves nothing (eps' <= 0), adds Delta to the regulariser and takes
# eps' = eps_p/2.  The second branch's effective regulariser c / (n (e^{eps_p/4} - 1)) does not depend on Lambda.
# Every estimator states its guarantee, including what it releases and how the noise is drawn (exactly rounded to a
# public grid: the floating-point-safe default).

# %%
n_adult = 40698  # training-fold size of 10-fold cross-validation on 45,222 rows
demo = ObjectivePerturbation(epsilon=0.1, Lambda=10**-2.5, loss="logistic", random_state=seed).fit(adult.X[:n_adult], adult.y[:n_adult])
print(demo.guarantee_)

# %%
# NBVAL_CHECK_OUTPUT
branches = pd.DataFrame([{"loss": loss, "log10_Lambda": e, **vars(B.theorem_9_parameters(0.1, n_adult, 10.0**e, make_loss(loss).curvature))}
                         for loss in LOSSES for e in E.LAMBDA_EXPONENTS["adult"]])
print(stable_text(branches.assign(Lambda_plus_Delta=10.0**branches.log10_Lambda + branches.Delta)
                  [["loss", "log10_Lambda", "branch", "epsilon_prime", "Lambda_plus_Delta"]], digits=4))

# %% [markdown]
# ### Corollary 8 and Lemma 7: the sensitivity, measured
#
# Lemma 7 bounds how far the minimiser of a Lambda-strongly convex G moves when g is added: by max ||grad g|| / Lambda.
# Corollary 8 applies it to the change of one example (||grad g|| <= 2/n).  We measure the change of f* over random and
# adversarially searched neighbours (d = 2, n = 30) against 2/(n Lambda), and Lemma 7 itself with g(f) = b'f/n for
# noise vectors b over five orders of magnitude.

# %%
sens = E.sensitivity_experiment(["logistic", "huber", "smoothed_hinge"], [0.01, 0.1], n_random=P["sens_random"],
                                n_adv=P["sens_adv"], maxiter=P["sens_maxiter"], random_state=seed)
E.record_corollary_8(checks, sens)

# %% [markdown]
# Lemma 10 (the determinant of a rank-2 update) carries the Jacobian step of Theorem 9: the ratio of the release
# densities under neighbours is det(A + E)/det(A) = 1 + l1 + l2 + l1 l2 with |l1| + |l2| <= 2c/(n(Lambda + Delta)).

# %%
l7 = E.lemma_7_experiment([("logistic", 0.01), ("huber", 0.01), ("logistic", 1.0)], draws=P["lemma7_draws"], random_state=seed)
l10 = E.lemma_10_experiment([2, 5, 20], draws=P["lemma10_draws"], random_state=seed)
E.record_lemmas_7_10(checks, l7, l10)

# %% [markdown]
# ### The noise law (Eq. 4)
#
# The density exp(-beta ||b||) is radially symmetric, so ||b|| ~ Gamma(d, 1/beta) with a uniform, independent
# direction.  Both samplers are tested: the exact rounding to the grid that every release uses, and the paper's float
# sampler (`noise="continuous"`).

# %%
sampler = E.noise_sampler_tests([1, 2, 10, 105], beta=0.05, draws=P["sampler_draws"], random_state=seed)
E.record_sampler(checks, sampler)

# %% [markdown]
# ## Privacy audits (Theorems 6, 9, 26, Corollary 13)
#
# For each mechanism a neighbouring pair, many releases from each side and the exact log-likelihood ratio as the test
# statistic give a 95% Clopper-Pearson lower bound on epsilon.  Next to it: the pair's exact privacy loss, and a
# negative control (the same pair with less noise, not eps-DP) that the audit must catch.  The objective-perturbation
# releases are solved together by the batched certified solver; the selections use the exact sampler of
# `PrivateTuning`.
#
# * Algorithm 1 on its worst case (Huber loss in its linear piece, the changed row flipping sides): the pair's loss is
#   exactly eps.
# * Algorithm 2 with the logistic loss (Theorem 9) and with the Huber loss, whose second derivative jumps (Corollary
#   13: the "SVM" of every figure): the changed row carries all the curvature.
# * Algorithm 4's selection on worst-case mistake counts, and `PrivateTuning` end to end (learners included).

# %%
audits = {
    "theorem-6": ("Theorem 6", E.audit_output_perturbation(1.0, P["audit_releases"], random_state=seed)),
    "theorem-9": ("Theorem 9", E.audit_objective_perturbation("logistic", 1.0, P["audit_obj_releases"], random_state=seed)),
    "corollary-13": ("Corollary 13", E.audit_objective_perturbation("huber", 1.0, P["audit_obj_releases"], random_state=seed)),
    "theorem-26-selection": ("Theorem 26", E.audit_selection(1.0, P["audit_sel_releases"], random_state=seed)),
    "theorem-26-end-to-end": ("Theorem 26", E.audit_private_tuning(1.0, P["audit_sel_releases"], random_state=seed)),
}
pd.DataFrame([res.row() for _, res in audits.values()]).round(4)

# %%
E.Verdicts(v for key, (claim, res) in audits.items() for v in E.record_audit(checks, claim, res, key))

# %% [markdown]
# ## Tables 1 and 2: error against Lambda at eps_p = 0.1 (Section 7.2)
#
# The protocol of the paper: 10-fold cross-validation; the non-private error per fold, private errors over 10 folds x
# 50 noise runs (the quick profile runs fewer).  Each fold solves the non-private problem once per Lambda; every
# output-perturbation release comes from that solve, the objective-perturbation releases of a fold are solved
# together.  Noise draws are common across Lambda and eps_p within a fold, so Algorithm 2's Delta > 0 entries coincide
# as in the paper.  The same run gives Figures 2-3 (their eps_p = 0.1 points are the tables' bold entries).
#
# Published against reproduced: z of the difference, with the standard error of each side from the spread of the
# fold means (the noise runs of a fold share its data); the paper reports no spread, so we assume its fold means had
# ours.

# %%
print(E.RUNS_ASSUMPTION)
runs, solutions = {}, {}
for name, data in (("adult", adult), ("kddcup99", kdd)):
    if data is None:
        continue
    requests = E.protocol_requests(name, LOSSES, 0.1, P["figure_epsilons"])
    runs[name], solutions[name] = E.run_protocol(data, requests, P["table_runs"], folds_used=P["table_folds"],
                                                 random_state=seed, n_jobs=P["n_jobs"], return_solutions=True)
n_train = {name: int(df.n_train.iloc[0]) for name, df in runs.items()}
{name: f"{len(df)} errors, {df.fold.nunique()} folds, {P['table_runs']} runs" for name, df in runs.items()}

# %% [markdown]
# ### Investigations: what explains the published numbers we do not reproduce
#
# **Output perturbation where the noise dominates (C5).**  At tiny Lambda the release is a uniformly random direction,
# whose expected error is exactly 1/2; the paper prints 0.5318 (Adult) and 0.5245 (KDD), and every noise-dominated
# output entry of Table 1 and Figure 2 lies about 0.04 above ours.  The tables also print identical values for LR and
# Huber, which only common noise draws across losses produce.  If the paper's 500 runs reused one set of 50 noise
# directions in every fold (and for every Lambda, eps_p and loss), its means share one random effect, whose size we
# measure by repeating the whole protocol with independent sets of directions:

# %%
shared = {name: E.shared_draws_output(data, solutions[name], P["shared_sets"], P["table_runs"], random_state=seed)
          for name, data in (("adult", adult), ("kddcup99", kdd)) if data is not None}
explanations = {}
shared_verdicts = E.Verdicts()
for name, sh in shared.items():
    v, ex = E.record_shared_draws(checks, sh, name)
    shared_verdicts.append(v)
    explanations.update(ex)
shared_verdicts

# %% [markdown]
# **Table 2's objective LR at 0.2084 (C8).**  The three Delta > 0 entries equal the error of the constant classifier
# that calls every connection a DoS attack (the share of non-DoS rows); Algorithm 2, whose noise has a continuous law,
# releases such a classifier with probability 0.  Ours are far below.  **Table 1's objective LR at 0.8248 (C3)** is
# worse than both constant classifiers (0.25 and 0.75); we have no explanation and list it as such.

# %%
if kdd is not None:
    v, ex = E.record_constant_classifier(checks, kdd)
    explanations.update(ex)
    display(v)
    display(E.record_spike(checks, runs["kddcup99"], n_train["kddcup99"]))
E.Verdicts(E.record_delta_branch(checks, df, name, n_train[name]) for name, df in runs.items())

# %%
tables = {}
for name, label in (("adult", "Table 1"), ("kddcup99", "Table 2")):
    frame = E.table_frame(name, runs.get(name), explanations)
    write_table(frame, "table_1" if name == "adult" else "table_2", "chaudhuri2011")
    tables[name] = frame
    if name in runs:
        display(E.record_published(checks, label, frame, id=label.lower().replace(" ", "-")))
    else:
        display(checks.skip(label, "test error against Lambda at eps_p = 0.1 (KDDCup99)", kdd_reason, id="table-2"))
E.comparison_view(tables["adult"])

# %%
E.comparison_view(tables["kddcup99"]) if "kddcup99" in runs else None

# %% [markdown]
# **KDD's non-private column (C4).**  Our non-private errors do not match Table 2's at every Lambda; the reading of
# the data matters most.  Table 2's non-private column under our reading (the DoS task the text describes, the full
# file's label composition), the uniform sample of the 10 percent file, the attack-versus-normal task and division by
# the largest row norm:

# %%
if kdd is not None:
    readings = [{"composition": "full file"}, {}, {"composition": "full file", "target": "attack"},
                {"composition": "full file", "row_normalization": "max"}][: P["sweep_readings"]]
    sweep = E.kdd_settings_sweep(readings, E.LAMBDA_EXPONENTS["kddcup99"], LOSSES, folds_used=P["sweep_folds"],
                                 random_state=seed, n_jobs=P["n_jobs"], ours=(readings[0], runs["kddcup99"]))
    display(E.record_kdd_sweep(checks, sweep))
    display(sweep.pivot_table(index=["loss", "log10_Lambda"], columns="setting", values="value").round(4))

# %% [markdown]
# **Before and after the solver change.**  The batched certified solver, the lattice noise and the paper's 50 runs per
# fold replaced a per-draw Newton solve, the float sampler and 20 runs: Table 1 must not move beyond its Monte Carlo
# error (Table 2's data reading changed as well, so it is not compared).

# %%
ba = E.before_after(tables["adult"], "../benchmarks/results/chaudhuri2011_tables_before.csv", "table_1")
E.record_before_after(checks, ba, "Table 1")

# %% [markdown]
# ## Figures 2 and 3: error against eps_p
#
# Lambda is fixed per curve at the value the tables mark in bold, as the paper does.  Error bars: +- 1 standard
# error of the mean over the folds (n = number of folds in the legend).

# %%
figures = {}
for name, fig_no in (("adult", 2), ("kddcup99", 3)):
    frame = E.figure_2_3_frame(name, runs.get(name), explanations)
    write_table(frame, f"figure_{fig_no}", "chaudhuri2011")
    figures[name] = frame
    if name not in runs:
        continue
    rep, pub = frame[frame.source == "reproduced"], frame[frame.source == "published"]
    fig, axes = plt.subplots(1, 2, figsize=(12, 4.2))
    for ax, loss, title in ((axes[0], "logistic", "(a) regularised logistic regression"), (axes[1], "huber", "(b) Huber SVM (h = 0.5)")):
        for method in ("output", "objective"):
            r = rep[(rep.loss == loss) & (rep.method == method)].sort_values("epsilon")
            ax.errorbar(r.epsilon, r.value, yerr=r.se, marker="o", capsize=3, color=COLORS[method],
                        label=f"{LABELS[method]}, ours (n = {int(r.n_runs.max())} folds)")
            p = pub[(pub.loss == loss) & (pub.method == method)].sort_values("epsilon")
            ax.plot(p.epsilon, p.value, ls="--", marker="x", color=COLORS[method], alpha=0.7, label=f"{LABELS[method]}, published")
        npr = rep[(rep.loss == loss) & (rep.method == "non-private")].value.iloc[0]
        ax.axhline(npr, color=COLORS["non-private"], label=f"Non-private, ours ({npr:.4f})")
        ax.axhline(pub[(pub.loss == loss) & (pub.method == "non-private")].value.iloc[0], color=COLORS["non-private"], ls="--",
                   alpha=0.6, label="Non-private, published")
        ax.set(xlabel="privacy parameter eps_p", ylabel="misclassification error rate", title=title)
        if name == "kddcup99":
            ax.set_ylim(0, 0.06 if loss == "logistic" else 0.03)
        ax.legend(fontsize=7)
    fig.suptitle(f"Figure {fig_no}: {name} (error bars: standard errors over folds)", y=1.02)
    save(fig, f"figure_{fig_no}")

# %%
E.Verdicts(E.record_published(checks, label, figures[name], id=label.lower().replace(" ", "-")) for name, label in
           (("adult", "Figure 2"), ("kddcup99", "Figure 3")) if name in runs)

# %%
E.Verdicts(E.record_reading(checks, runs[name], name, label) for name, label in (("adult", "Figure 2"), ("kddcup99", "Figure 3"))
           if name in runs)

# %%
E.comparison_view(figures["adult"])

# %% [markdown]
# ## Figures 4 and 5: learning curves with private tuning (Algorithm 4, KDDCup99)
#
# Five candidate Lambdas (the paper does not list its five; we use 10^-3 ... 10^-1, so that objective perturbation,
# restricted like the paper's to the eps' > 0 regime, has candidates at our sizes), five training parts of n rows, a
# 25,000-row validation and a 25,000-row test part, 5 permutations x 50 noise runs.  The paper's parts have
# 60,000-120,000 rows drawn from the full file; from the 10 percent file (resampled to the full file's composition,
# which at 475,000 rows leaves the rare labels about 3 times too frequent instead of 10) at most about 85,000 rows
# per part are available, so the full profile runs **the paper's three smallest sizes** (60,000, 70,000 and 80,000
# rows per part), which pair with published points; the published points at 90,000-120,000 rows stay unpaired
# (counted in REPORT.md as published numbers without a reproduction).  The quick profile's sizes are smaller still.

# %%
LC_LAMBDAS = [1e-3, 10**-2.5, 1e-2, 10**-1.5, 1e-1]
if kdd is not None:
    kdd_all = E.chaudhuri_data("kddcup99", random_state=seed, kdd_rows=P["lc_rows"], composition="full file")
    lc = E.learning_curves(kdd_all, P["lc_sizes"], LC_LAMBDAS, LOSSES, [0.05, 0.01], n_perms=P["lc_perms"],
                           n_runs=P["lc_runs"], random_state=seed, n_jobs=P["n_jobs"])
    lc_frame = E.learning_curve_frame(lc, explanations)
    write_table(lc_frame, "figure_4_5", "chaudhuri2011")
    display(E.record_published(checks, "Figures 4-5", lc_frame, id="figures-4-5"))
    display(E.record_learning_curves(checks, lc))
else:
    checks.skip("Figures 4-5", "learning curves with Algorithm 4 on KDDCup99", kdd_reason, id="figures-4-5")

# %%
if kdd is not None:
    rep = lc_frame[lc_frame.source == "reproduced"]
    for loss, fig_no in (("logistic", 4), ("huber", 5)):
        fig, axes = plt.subplots(1, 2, figsize=(12, 4.2))
        for ax, eps in zip(axes, (0.05, 0.01)):
            for method in ("output", "objective"):
                r = rep[(rep.loss == loss) & (rep.method == method) & np.isclose(rep.epsilon, eps)].sort_values("size")
                ax.errorbar(r["size"], r.value, yerr=r.se, marker="o", capsize=3, color=COLORS[method],
                            label=f"{LABELS[method]}, ours (n = {int(r.n_runs.max())} permutations)")
                ax.plot(E.PUBLISHED_FIGURES_4_5_SIZES, E.PUBLISHED_FIGURES_4_5[(loss, eps, method)], ls="--", marker="x",
                        color=COLORS[method], alpha=0.6, label=f"{LABELS[method]}, published")
            npr = rep[(rep.loss == loss) & (rep.method == "non-private")].value.iloc[0]
            ax.axhline(npr, color=COLORS["non-private"], label=f"Non-private (union of parts), ours ({npr:.4f})")
            ax.axhline(E.PUBLISHED_FIGURES_4_5_NONPRIVATE[loss], color=COLORS["non-private"], ls="--", alpha=0.6,
                       label="Non-private, published")
            ax.set(xlabel="rows per training part (k = thousand)", ylabel="misclassification error rate",
                   title=f"({'a' if eps == 0.05 else 'b'}) eps_p = {eps}")
            ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v / 1000:g}k"))
            ax.legend(fontsize=7)
        fig.suptitle(f"Figure {fig_no}: {'logistic regression' if loss == 'logistic' else 'Huber SVM'}, Algorithm 4 over 5 "
                     "Lambdas (sizes scaled down to the 10% KDD file)", y=1.02)
        save(fig, f"figure_{fig_no}")
    display(E.comparison_view(lc_frame))

# %% [markdown]
# ## Section 4: generalisation (Lemmas 16, 17, 19; Theorems 15, 18; Corollaries 20, 21)
#
# Lemma 17 (a Gamma tail) is computed exactly; Lemma 16 (Algorithm 1) and Lemma 19 (Algorithm 2) are checked by Monte
# Carlo over the noise.  Lemma 19's proof takes ||b|| ~ Gamma(d, 2/eps_p), but Algorithm 2 draws ||b|| ~ Gamma(d,
# 2/eps'), larger whenever eps' < eps_p: we test the statement with the noise the algorithm really adds, including a
# case where c/(n Lambda) is not small (ERRATA C2).

# %%
l17 = E.lemma_17_grid([1, 2, 5, 10, 50, 105, 1000], [0.5, 0.1, 0.05, 0.01, 1e-3, 1e-6])
l16 = E.lemma_16_experiment([("logistic", 0.01, 0.5, 0.1), ("huber", 0.01, 0.5, 0.1), ("logistic", 0.1, 0.1, 0.05)],
                            draws=P["lemma16_draws"], random_state=seed)
l19 = E.lemma_19_experiment([("logistic", 0.01, 1.0, 0.1), ("logistic", 0.002, 1.0, 0.1), ("huber", 0.01, 2.0, 0.1)],
                            draws=P["lemma19_draws"], random_state=seed)
E.record_section_4(checks, l16, l17, l19)

# %% [markdown]
# Theorems 15 and 18 and Corollaries 20-21 are sample-size statements with unspecified constants: a finite experiment
# can neither confirm nor refute them.  We check what can be checked: that the corollaries are the theorems with the
# losses' constants (analytic), the rates the paper reads from them (a property of the formulas), and Corollary 21's
# printed constant for Algorithm 2 (c = 1/4, a typo for 1/(2h): ERRATA C7).

# %%
c2021 = E.corollaries_20_21()
display(E.record_theorems_15_18(checks))
E.record_corollaries_20_21(checks, c2021)

# %% [markdown]
# ## Section 5: kernels (Algorithm 3; Theorem 22, Lemma 23, Theorems 24-25)
#
# Algorithm 3 maps x to v(x) = sqrt(2/D) cos(w'x + psi), whose norm can exceed 1 (up to sqrt 2; ERRATA C1), breaking
# the ||x|| <= 1 assumption of Theorems 6 and 9 that Theorem 22 relies on.  `PrivateKernelERM` divides the map by
# sqrt 2 so that ||v(x)|| <= 1 for every input.  Lemma 23 (and with it Theorems 24-25) rests on approximating f0 by D
# random features with error O(C sqrt(log(1/delta)/D)); we measure that rate.

# %%
norms = E.kernel_feature_norms([1, 2, 10, 100, 1000], gamma=1.0, random_state=seed)
l23 = E.lemma_23_experiment(P["lemma23_D"], Cbound=2.0, gamma=1.0, n_points=500, draws=P["lemma23_draws"], random_state=seed)
E.record_section_5(checks, norms, l23)

# %% [markdown]
# The paper runs no kernel experiment.  Algorithm 3 with objective perturbation on Adult, against the linear model:

# %%
kern = E.kernel_experiment(adult, P["kernel_D"], P["kernel_epsilons"], Lambda=1e-3, gamma=P["kernel_gamma"],
                           seeds=range(P["kernel_seeds"]), n_rows=P["kernel_rows"], random_state=seed)
ks = E.summarise(kern.assign(fold=kern.seed), ["model", "D", "epsilon"]).drop(columns="n_draws")
write_table(ks.assign(source="reproduced"), "kernel_experiment", "chaudhuri2011")
fig, ax = plt.subplots(figsize=(6.5, 4))
for (model, D), g in ks.groupby(["model", "D"]):
    ax.errorbar(g.epsilon, g.value, yerr=g.se, marker="o", capsize=3, label="linear" if model == "linear" else f"RFF D = {D}")
ax.set(xscale="log", xlabel="eps_p (log scale)", ylabel="test error (Adult)",
       title=f"Algorithm 3 (objective, Lambda = 1e-3), {P['kernel_seeds']} seeds, error bars: standard errors")
ax.legend(title="features")
save(fig, "kernel_experiment")

# %% [markdown]
# ## Section 6: private tuning, Theorem 27
#
# The exponential mechanism's selection satisfies z <= z_min + (2/eps_p) log(m/delta) with probability >= 1 - delta;
# the exact failure probability follows from Algorithm 4's probabilities, the simulated one from its draws.
# (Theorem 26, the privacy of Algorithm 4, is audited above.)

# %%
t27 = E.theorem_27_experiment([([100, 103, 110, 150, 300], 0.05, 0.1), ([40, 41, 42, 43, 44], 0.5, 0.05), (list(range(0, 200, 10)), 0.1, 0.01)],
                              draws=P["theorem27_draws"], random_state=seed)
E.record_theorem_27(checks, t27)

# %% [markdown]
# ## Side by side with diffprivlib
#
# IBM diffprivlib's `LogisticRegression` implements Algorithm 2 (its `mechanisms/vector.py`).  With the same
# preprocessing, the same Lambda (diffprivlib's C = 1/(n Lambda)) and the same epsilon grid we compare test error and
# fit time, with its intercept off (Algorithm 2 as published) and on (its default).  Our fit certifies its minimiser;
# diffprivlib's L-BFGS stops at tol 1e-4.  The speed comparison proper, with BLAS threads controlled, is
# `benchmarks/bench_chaudhuri2011.py`.

# %%
dpl_ok, dpl_version = E.diffprivlib_available()
print("diffprivlib:", dpl_version)
if dpl_ok:
    cmp = E.diffprivlib_comparison(adult, P["dpl_epsilons"], 10**-2.5, range(P["dpl_seeds"]), random_state=seed)
    cmp_summary = E.summarise(cmp.assign(fold=cmp.seed), ["implementation", "epsilon"]).drop(columns="n_draws")
    write_table(cmp_summary.assign(source="reproduced"), "diffprivlib_comparison", "chaudhuri2011")
    display(E.record_diffprivlib_comparison(checks, cmp))
    fig, ax = plt.subplots(figsize=(6.5, 4))
    for impl, g in cmp_summary.groupby("implementation"):
        ax.errorbar(g.epsilon, g.value, yerr=g.se, marker="o", capsize=3, label=impl)
    ax.set(xscale="log", xlabel="eps_p", ylabel="test error (Adult)",
           title=f"objective-perturbation LR, Lambda = 10^-2.5, {P['dpl_seeds']} seeds (error bars: se)")
    ax.legend(fontsize=8)
    save(fig, "diffprivlib_comparison")
else:
    checks.skip("diffprivlib comparison", "objective-perturbation LR against diffprivlib", dpl_version, kind="target")

# %% [markdown]
# ### diffprivlib held to the same standard
#
# Theorem 9's proof bounds the Jacobian ratio by (1 + c/(n(Lambda + Delta)))^2 because the rank-2 change has
# eigenvalues up to c ||x||^2 <= c.  With rows of norm up to R the eigenvalues reach c R^2, so eps' and Delta must use
# c R^2; the noise needs beta = eps'/(2R) since ||b - b'|| <= 2R.  diffprivlib 0.6.6 uses c R (ERRATA D1), and with
# its default intercept leaves the intercept unregularised when Delta = 0 (D2).

# %%
# NBVAL_CHECK_OUTPUT
constants = pd.DataFrame([{"data_norm": R, "fit_intercept": fi, **E.diffprivlib_constants(1.0, 5, 0.2, R, fi)}
                          for R, fi in ((1.0, False), (1.0, True), (10.0, False), (30.0, False))])
print(stable_text(constants[["data_norm", "fit_intercept", "R", "dpl_eps_prime", "dpl_Delta", "required_eps_prime", "required_Delta"]], digits=4))

# %% [markdown]
# A pair with data_norm R = 30 (n = 5, d = 1, C = 1, eps = 1, no intercept): four rows at the origin and one at x = 30
# (D) or x = 0 (D').  The exact privacy loss of diffprivlib's release (computed with the constants it uses) and an
# audit of diffprivlib's own releases, next to ours on the same pair.

# %%
theirs, ours = E.diffprivlib_audit(1.0, P["dpl_audit_releases"], P["audit_obj_releases"], n_jobs=P["n_jobs"],
                                    random_state=seed) if dpl_ok else (None, None)
if dpl_ok:
    display(pd.DataFrame([theirs.row(), ours.row()]).round(4))
    display(E.record_diffprivlib_audit(checks, peer, theirs, ours))

# %% [markdown]
# **The unregularised intercept (D2).**  With `fit_intercept=True` and eps' > 0 the perturbed objective has no
# minimiser whenever the noise's intercept coordinate exceeds what the logistic gradient can balance, and the released
# intercept is wherever L-BFGS stops (noise replicated from diffprivlib's RandomState).

# %%
intercepts = E.diffprivlib_intercept(P["dpl_intercept_seeds"], dpl_ok)
E.record_diffprivlib_intercept(peer, intercepts) if dpl_ok else intercepts.head()

# %% [markdown]
# ## Run time
#
# The paper's protocol (10 folds x 50 noise runs, 5 permutations x 50 runs) within our own budget: the full profile
# must take at most 6 minutes on 2 idle cores (issue 14).

# %%
elapsed = time.perf_counter() - START
checks.at_most("Run time (full profile)", "wall time of this notebook, seconds (budget 6 min on 2 idle cores)", kind="target",
               bound=360, measured=round(elapsed, 1), id="run-time", detail=f"profile {profile}; not a claim of the paper")

# %% [markdown]
# ## Summary
#
# Every check of this notebook (`paper_figures/chaudhuri2011/checks.csv`); `kind` says what a row is worth (only
# `measured` rows confirm a claim); violated rows are explained in `ERRATA.md`; findings about diffprivlib are in
# `paper_figures/diffprivlib/checks.csv`, apart from the paper's; and `paper_figures/REPORT.md` lists the published numbers that differ without an explanation.

# %%
checks.write(OUT)
peer.write(output_dir("diffprivlib"))
print(checks.summary(), peer.summary())
checks.frame()[["claim", "check", "kind", "bound", "measured", "status"]]
