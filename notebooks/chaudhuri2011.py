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
# *Differentially Private Empirical Risk Minimization*, JMLR 12:1069-1109, 2011 (JMLR numbering throughout).  The
# statements every check below tests are quoted, in our words and with their numbers, in
# [`docs/statements/chaudhuri2011.md`](../docs/statements/chaudhuri2011.md), each with the ids of the checks that test
# it.
#
# The paper privatises regularised ERM,
# $$J(f, D) = \frac{1}{n}\sum_{i=1}^n \ell(y_i f^\top x_i) + \frac{\Lambda}{2}\|f\|^2, \qquad \|x_i\| \le 1,$$
# in two ways: **output perturbation** (Algorithm 1: noise with density $\propto e^{-\beta\|b\|}$ added to the
# minimiser) and **objective perturbation** (Algorithm 2: a random linear term $b^\top f / n$ added to the
# objective).  Random features extend both to kernels (Algorithm 3) and the exponential mechanism tunes $\Lambda$
# privately (Algorithm 4).
#
# This companion follows the paper's order.  Every statement becomes a check with a three-valued verdict (**holds**:
# confirmed, with its power or margin stated; **violated**: refuted; **inconclusive**: neither), printed right after
# the cell that makes it with the criterion that produced it; the complete check table closes the notebook.  The
# experiments are run by `dpkernels.experiments.chaudhuri2011` (protocol, readings, hypotheses, statements, audits,
# comparison, records); this notebook shows their results next to the published ones.

# %% tags=["parameters"]
profile = "quick"
seed = 2011
sizes = None

# %%
import time
import warnings

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import seaborn as sns
from matplotlib.ticker import FuncFormatter

from dpkernels import UtilityWarning, profiles
from dpkernels.bounds import chaudhuri as B
from dpkernels.datasets import DatasetUnavailable
from dpkernels.experiments import chaudhuri2011 as E
from dpkernels.losses import make_loss
from dpkernels.mechanisms import ObjectivePerturbation
from dpkernels.report import Checks, compare_table, output_dir, stable_text, write_table
from dpkernels.verdicts import STATUSES

START = time.perf_counter()
P = profiles.load("chaudhuri2011", profile, sizes)
OUT = output_dir("chaudhuri2011", profile)
checks = Checks("chaudhuri2011")
peer = Checks("diffprivlib")  # findings about diffprivlib (ERRATA D1-D2), kept apart from the paper's checks
hypotheses = []  # tested explanations (ERRATA ids), written to hypotheses.csv
sns.set_theme(style="whitegrid", context="notebook")
pd.set_option("display.width", 160)
pd.set_option("display.max_columns", 24)
pd.set_option("display.max_rows", 120)
# A release warns when its noise is expected to swamp the solution; here that is by design (privacy audits on 5-row
# pairs, the paper's smallest eps_p), and every experiment measures the utility it warns about.
warnings.filterwarnings("ignore", category=UtilityWarning)
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
# rare ones (back, teardrop, pod, ...).  We draw every sample with the label composition of the full file (its label
# counts are public): each label gets its share of the rows, drawn uniformly among that label's rows.  The paper
# leaves the task and the row normalisation open; both are explicit parameters (`E.KDDReading`), and a rule stated
# below, before any private result, chooses among them (ERRATA C4).

# %%
adult = E.chaudhuri_data("adult")
try:
    kdd_text = E.kdd_data(E.TEXT_READING, random_state=seed)
    kdd_reason = ""
except DatasetUnavailable as exc:
    kdd_text, kdd_reason = None, str(exc)
print(f"adult: {adult.X.shape}, positive fraction {np.mean(adult.y == 1):.4f}")
print(f"kddcup99 ({E.TEXT_READING.label}): {kdd_text.X.shape}, positive fraction {np.mean(kdd_text.y == 1):.4f}"
      if kdd_text is not None else f"kddcup99 unavailable: {kdd_reason}")

# %%
# NBVAL_CHECK_OUTPUT
print("adult shape", adult.X.shape, "max row norm <= 1:", bool(np.linalg.norm(adult.X, axis=1).max() <= 1 + 1e-12))
print("dropped for missing values:", adult.meta["rows_dropped_missing"], "(paper: 45,220 rows remain; here 45,222)")
print("KDD rows per label in a 70,000-row sample with the full file's composition:",
      {k: v for k, v in E.stratified_counts(70000).items() if v >= 10})

# %%
E.record_data(checks, adult)
checks.show_new()

# %% [markdown]
# ## Algorithms 1 and 2 and their calibration (Theorems 6 and 9, Corollaries 8, 11-13)
#
# Output perturbation draws $\|b\| \sim \Gamma(d, 2/(n\Lambda\varepsilon_p))$ (Corollary 8's sensitivity
# $2/(n\Lambda)$).  Objective perturbation spends $\varepsilon_p - \varepsilon'_p = 2\log(1 + c/(n\Lambda))$ on the
# Jacobian of the map $b \mapsto f_{priv}$ and $\varepsilon'_p$ on the noise ($\beta = \varepsilon'_p/2$), or, when
# that leaves nothing ($\varepsilon'_p \le 0$), adds $\Delta$ to the regulariser and takes
# $\varepsilon'_p = \varepsilon_p/2$.  The second branch's effective regulariser
# $\Lambda + \Delta = c / (n(e^{\varepsilon_p/4} - 1))$ does not depend on $\Lambda$.  Every estimator states its
# guarantee, including what it releases and how the noise is drawn (exactly rounded to a public grid: the
# floating-point-safe default).

# %%
n_adult = 40698  # training-fold size of 10-fold cross-validation on 45,222 rows
demo = ObjectivePerturbation(epsilon=0.1, alpha=10**-2.5, loss="logistic", random_state=seed).fit(adult.X[:n_adult], adult.y[:n_adult])
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
# Lemma 7 bounds how far the minimiser of a $\lambda$-strongly convex $G$ moves when $g$ is added:
# $\|f_1 - f_2\| \le \max_f \|\nabla g(f)\| / \lambda$.  Corollary 8 applies it to the change of one example
# ($\|\nabla g\| \le 2/n$), giving the sensitivity $2/(n\Lambda)$.  We measure the change of $f^*$ over random and
# adversarially searched neighbours ($d = 2$, $n = 30$) against $2/(n\Lambda)$, and Lemma 7 itself with
# $g(f) = b^\top f/n$ for noise vectors $b$ over five orders of magnitude.  These are exact solves: a verdict is a
# comparison of numbers, with no sampling error.

# %%
sens = E.sensitivity_experiment(["logistic", "huber", "smoothed_hinge"], [0.01, 0.1], n_random=P["sens_random"],
                                n_adv=P["sens_adv"], maxiter=P["sens_maxiter"], random_state=seed)
E.record_corollary_8(checks, sens)
checks.show_new()

# %% [markdown]
# Lemma 10 (the determinant of a rank-2 update) carries the Jacobian step of Theorem 9: the ratio of the release
# densities under neighbours is $\det(A + E)/\det A = 1 + \lambda_1 + \lambda_2 + \lambda_1\lambda_2$ with
# $|\lambda_1| + |\lambda_2| \le 2c/(n(\Lambda + \Delta))$.

# %%
l7 = E.lemma_7_experiment([("logistic", 0.01), ("huber", 0.01), ("logistic", 1.0)], draws=P["lemma7_draws"], random_state=seed)
l10 = E.lemma_10_experiment([2, 5, 20], draws=P["lemma10_draws"], random_state=seed)
E.record_lemmas_7_10(checks, l7, l10)
checks.show_new()

# %% [markdown]
# ### The noise law (Eq. 4)
#
# The density $\nu(b) \propto e^{-\beta\|b\|}$ is radially symmetric, so $\|b\| \sim \Gamma(d, 1/\beta)$ with a
# uniform, independent direction.  Both samplers are tested: the exact rounding to the grid that every release uses,
# and the paper's float sampler (`noise="continuous"`).  A sampler is confirmed when the Kolmogorov distance of its
# draws to the claimed law, plus the radius of the 95% Dvoretzky-Kiefer-Wolfowitz band, stays below a margin of 0.02
# (for the norm and for the direction; in $d = 1$ the direction is a sign, $\pm 1$ with probability $1/2$ each): our
# target, since these rows test our code, not the paper.

# %%
sampler = E.noise_sampler_tests([1, 2, 10, 105], beta=0.05, draws=P["sampler_draws"], random_state=seed)
E.record_sampler(checks, sampler)
checks.show_new()

# %% [markdown]
# ## Privacy audits (Theorems 6, 9, 26, Corollary 13)
#
# For each mechanism a neighbouring pair, many releases from each side and the exact log-likelihood ratio as the test
# statistic give a 95% Clopper-Pearson lower bound on $\varepsilon$.  Next to it: the pair's exact privacy loss, and
# a negative control (the same pair with less noise, not $\varepsilon$-DP) that the audit must catch.  An audit
# **holds** only when its bound stays below $\varepsilon$ *and* its control was caught (the audit had the power to
# see a leak); a bound above $\varepsilon$ refutes the claim.  The objective-perturbation releases are solved together
# by the batched certified solver; the selections use the exact sampler of `PrivateTuning`.
#
# * Algorithm 1 on its worst case (Huber loss in its linear piece, the changed row flipping sides): the pair's loss is
#   exactly $\varepsilon$.
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
for key, (claim, res) in audits.items():
    E.record_audit(checks, claim, res, key)
checks.show_new()

# %% [markdown]
# ## Tables 1 and 2: error against $\Lambda$ at $\varepsilon_p = 0.1$ (Section 7.2)
#
# The protocol of the paper: 10-fold cross-validation; the non-private error per fold, private errors over 10 folds x
# 50 noise runs (the quick profile runs fewer).  Each fold solves the non-private problem once per $\Lambda$; every
# output-perturbation release comes from that solve, the objective-perturbation releases of a fold are solved
# together.  Noise draws are common across $\Lambda$ and $\varepsilon_p$ within a fold, so Algorithm 2's
# $\Delta > 0$ entries coincide as in the paper.  The same run gives Figures 2-3 (their $\varepsilon_p = 0.1$ points
# are the tables' bold entries).
#
# Published against reproduced: $t$ of the difference.  KDDCup99: the standard error of each side from the spread of
# the fold means (the noise runs of a fold share its data); the paper reports no spread, so we assume its fold means
# had ours.  Adult: through repetitions of the whole protocol (below).

# %%
print(E.RUNS_ASSUMPTION)
requests = {name: E.protocol_requests(name, LOSSES, 0.1, P["figure_epsilons"]) for name in ("adult", "kddcup99")}
runs, solutions = {}, {}
runs["adult"], solutions["adult"] = E.run_protocol(adult, requests["adult"], P["table_runs"], folds_used=P["table_folds"],
                                                   random_state=seed, n_jobs=P["n_jobs"], return_solutions=True)
n_train = {"adult": int(runs["adult"].n_train.iloc[0])}
f"adult: {len(runs['adult'])} errors, {runs['adult'].fold.nunique()} folds, {P['table_runs']} runs"

# %% [markdown]
# **More replicates (issue 28).**  With one run of the protocol, a published number is compared through the spread
# of our 10 fold means, which share rows and so misstate the spread of a 10-fold mean, with 9 degrees of freedom: the
# comparison has power below 0.8 against our minimum effect (one point of error) for most of Adult's numbers, and
# could only conclude "too noisy".  A replicate of a published number is one run of the protocol: the paper ran it
# once on (nearly) these rows (10 folds, 50 noise runs each), so its number is one draw of that mean, and a new split
# with new noise is a new draw.  The variants command repeats the protocol (`adult_repeated_cv.csv`, committed: fold
# means per cell and repetition; the first repetition is this notebook's run, checked below); when this run is that
# repetition (every fold mean identical: the full profile), Table 1's and Figure 2's numbers are compared through the
# repetitions (t with repetitions - 1 degrees of freedom, the published number one repetition); otherwise (a smaller
# profile) through this run's folds.  KDDCup99 is treated the same way below (`kdd_repeated_cv.csv`), with a new
# 70,000-row sample of the file in each repetition: the paper's number is one run on its own sample.

# %%
adult_cv = E.load_committed("adult_repeated_cv.csv", OUT)
replication = {"adult": E.record_replication(checks, "adult", runs["adult"], adult_cv, "adult_repeated_cv.csv"),
               "kddcup99": E.Replication()}  # KDDCup99: after its run, below
checks.show_new()

# %% [markdown]
# ### KDDCup99: readings of the protocol and the rule that chooses one (ERRATA C4)
#
# The text states the task ("a denial-of-service attack or not") and that rows are "normalised to norm at most 1";
# Table 2's non-private column fits another task (any attack against normal traffic) better, and "normalised" can
# mean projecting each row onto the unit ball or dividing every row by the largest row norm.  The candidate readings
# are these two tasks times these two normalisations, each on a 70,000-row sample with the full file's label
# composition.  **The rule, fixed here before any private KDD column is computed**, uses the one column that involves
# no noise:

# %%
print(E.READING_RULE)
print(E.GRID_RULE)
print("candidates:", [r.label for r in E.CANDIDATES])

# %%
if kdd_text is not None:
    kdd_sets = {r.label: kdd_text if r == E.TEXT_READING else E.kdd_data(r, random_state=seed) for r in E.CANDIDATES}
    np_columns = E.nonprivate_columns(kdd_sets, LOSSES, folds_used=P["table_folds"], random_state=seed, n_jobs=P["n_jobs"])
    ranking = E.rank_readings(np_columns)
    chosen = E.reading_from_label(ranking.reading.iloc[0])
    print(f"chosen reading: {chosen.label}")
    display(ranking.round(1))
    published_np = pd.DataFrame([{"loss": loss, "log10_Lambda": float(e), "published": v}
                                 for (loss, m), vals in E.PUBLISHED_TABLES["kddcup99"].items() if m == "non-private"
                                 for e, v in zip(E.LAMBDA_EXPONENTS["kddcup99"], vals)])
    display(np_columns.pivot_table(index=["loss", "log10_Lambda"], columns="reading", values="value")
            .join(published_np.set_index(["loss", "log10_Lambda"])).round(4))

# %% [markdown]
# The chosen reading then runs the private columns of Table 2 and Figure 3 with the paper's 10 folds x 50 noise runs.
# The other readings' private columns (C4's side by side, below) and every registered variant of the protocol are run
# once, at a smaller protocol (5 folds x 10 noise runs), by `python -m dpkernels.experiments.chaudhuri2011`,
# whose outputs are committed (`kdd_readings_runs.csv`, `registered_runs.csv`) and read here: they are not recomputed
# by every run of this notebook.

# %%
if kdd_text is not None:
    kdd = kdd_sets[chosen.label]
    runs["kddcup99"], solutions["kddcup99"] = E.run_protocol(kdd, requests["kddcup99"], P["table_runs"],
                                                             folds_used=P["table_folds"], random_state=seed,
                                                             n_jobs=P["n_jobs"], return_solutions=True)
    n_train["kddcup99"] = int(runs["kddcup99"].n_train.iloc[0])
    kdd_cv = E.load_committed("kdd_repeated_cv.csv", OUT)
    replication["kddcup99"] = E.record_replication(checks, "kddcup99", runs["kddcup99"], kdd_cv, "kdd_repeated_cv.csv",
                                                   reading=chosen.label)
    checks.show_new()
side = E.load_committed("kdd_readings_runs.csv", OUT)  # the readings side by side (C4)
registered_runs = E.load_committed("registered_runs.csv", OUT)  # the variants' runs
print("committed runs:", "kdd_readings_runs.csv" if side is not None else "no readings side by side",
      f"and registered_runs.csv ({sorted(set(registered_runs.hypothesis) - {'ours'})})" if registered_runs is not None
      else "; no registered_runs.csv (the variants' hypotheses are not run)")

# %% [markdown]
# ### Explanations are tested hypotheses, per data set
#
# A published number that differs from ours is *explained* only by an ERRATA hypothesis whose own test accepts it
# for that number's data set as a whole; every test lands in `hypotheses.csv`.
#
# **Output perturbation where the noise dominates (C5).**  At tiny $\Lambda$ the release is a uniformly random
# direction, whose expected error is exactly 1/2; the paper prints 0.5318 (Adult) and 0.5245 (KDD), and its tables
# print identical values for LR and Huber, which only common noise draws across losses produce.  If the paper's 500
# runs reused one set of 50 noise directions in every fold (and for every $\Lambda$, $\varepsilon_p$ and loss), its
# means share one random effect, whose size we measure by repeating the whole protocol with independent sets of
# directions; the test is joint (below).
#
# **Table 2's objective LR at 0.2084 (C8).**  The three $\Delta > 0$ entries look like the error of the constant
# classifier that predicts the majority class for every connection; Algorithm 2, whose noise has a continuous law,
# releases such a classifier with probability 0.  Tested under the chosen reading's task.  **Table 1's objective LR
# at 0.8248 (C3)** is worse than both constant classifiers (0.25 and 0.75); C11 (another effective regulariser in
# Algorithm 2's $\Delta > 0$ branch) is the one hypothesis registered for it.
#
#
# **Every hypothesis is registered before it is run** (`registry.yaml` of `dpkernels.experiments.chaudhuri2011`: its
# cell family, scope, test and the alternative its power is measured against); those not run are listed with the
# reason and leave their numbers unexplained.  Those that need protocol runs of their own (the KDD variants K-*, on
# Table 2 and Figure 3 and, as K-lc-*, on Figures 4-5; the samples of K-subsets, C11, C12, C13, A-row-max, C14, C15)
# were run once by `python -m dpkernels.experiments.chaudhuri2011`
# (committed `registered_runs.csv`); their tests run here (`E.variant_hypotheses`): the joint mean test of the cells a
# hypothesis bears on against its law over the replicates, the published number the mean of the paper's 10 folds,
# with the false acceptance measured on published vectors drawn from the chosen reading's law at the same protocol.
# Searching many hypotheses invites false explanations, so a hypothesis
# is accepted only when its own (joint) test does not reject it at 0.05 *and* its false-acceptance rate on data
# simulated without its effect is at most 0.2 / m, m the hypotheses registered for its family (Bonferroni: at most a
# 0.2 chance that a family gets any false explanation).  C5's test is joint (one shared set of directions moves every
# output cell together): the Mahalanobis distance of the published output numbers from the shared-draw law, with
# its p-value by a parametric bootstrap, and its false acceptance measured on the same deviations with random signs.
# **C10 (the task).**  The text says "denial of service"; the rule chose attack against normal traffic.  The paper's
# own class-balance numbers (Table 2's 0.2084, and the printed 0.20 and 0.19 for one quantity) are tested against
# both tasks' minority shares.

# %%
display(E.registry_table())
shared = {name: E.shared_draws_output(data, solutions[name], P["shared_sets"], P["table_runs"], random_state=seed)
          for name, data in (("adult", adult), ("kddcup99", kdd if kdd_text is not None else None)) if data is not None}
hypotheses += [E.shared_draws_hypothesis(sh, name, E.family_size("C5"), random_state=seed) for name, sh in shared.items()]
if kdd_text is not None:
    np_obj = runs["kddcup99"][(runs["kddcup99"].loss == "logistic") & (runs["kddcup99"].method == "objective")
                              & np.isclose(runs["kddcup99"].log10_Lambda, -9) & np.isclose(runs["kddcup99"].epsilon, 0.1)]
    fm = np_obj.groupby("fold").error.mean()
    se_obj = float(fm.std(ddof=1) * np.sqrt(1 / len(fm) + 1 / 10)) if len(fm) > 1 else float("nan")
    hypotheses.append(E.constant_classifier_hypothesis(chosen.task, float(fm.mean()), se_obj, E.family_size("C8")))
    hypotheses.append(E.task_hypothesis(chosen.task, E.family_size("C10"), random_state=seed))
if registered_runs is not None:  # every hypothesis the variants command ran, by its registered test
    hypotheses += E.variant_hypotheses(registered_runs, random_state=seed)
tested = pd.DataFrame(hypotheses, columns=E.HYPOTHESIS_COLUMNS)
explanations = E.explanations(tested)
tested[["hypothesis", "dataset", "statistic", "outcome", "power", "detail"]]

# %%
tables = {}
for name, label in (("adult", "Table 1"), ("kddcup99", "Table 2")):
    frame = replication[name].frame(E.table_frame(name, runs.get(name), explanations), name)
    write_table(frame, "table_1" if name == "adult" else "table_2", "chaudhuri2011")
    tables[name] = frame
    if name in runs:
        E.record_published(checks, label, frame, id=label.lower().replace(" ", "-"),
                           detail=f"KDD reading: {chosen.label}" if name == "kddcup99" else "", hypotheses=tested,
                           assumption=replication[name].assumption)
    else:
        checks.skip(label, "test error against Lambda at eps_p = 0.1 (KDDCup99)", kdd_reason, id="table-2")
if "kddcup99" in runs:
    E.record_spike(checks, runs["kddcup99"], n_train["kddcup99"])
for name, df in runs.items():
    E.record_delta_branch(checks, df, name, n_train[name])
checks.show_new()

# %%
E.comparison_view(tables["adult"], tested)

# %%
E.comparison_view(tables["kddcup99"], tested) if "kddcup99" in runs else None

# %% [markdown]
# **Before and after the solver change.**  The batched certified solver, the lattice noise and the paper's 50 runs per
# fold replaced a per-draw Newton solve, the float sampler and 20 runs: Table 1 must not move beyond its Monte Carlo
# error (Table 2's data reading changed as well, so it is not compared).  Compared: this run of the protocol (the kind
# of number the earlier run was), not the mean over the repetitions.

# %%
ba = E.before_after(E.table_frame("adult", runs["adult"]), "../benchmarks/results/chaudhuri2011_tables_before.csv", "table_1")
E.record_before_after(checks, ba, "Table 1")
checks.show_new()

# %% [markdown]
# ## Figures 2 and 3: error against $\varepsilon_p$
#
# $\Lambda$ is fixed per curve at the value the tables mark in bold, as the paper does.  Error bars: $\pm 1$ standard
# error of the mean over the repetitions of the protocol (or, in a smaller profile, over the folds; n in the legend).  The
# paper's reading, "objective perturbation beats output perturbation", is tested on the fold-paired differences (output minus objective) at
# $\varepsilon_p \le 0.25$: violated if objective is significantly worse at some point (one-sided $t$ tests, Holm over
# the points), holds if not and the average difference has a one-sided 95% lower bound above 0.

# %%
figures = {}
for name, fig_no in (("adult", 2), ("kddcup99", 3)):
    frame = replication[name].frame(E.figure_2_3_frame(name, runs.get(name), explanations), name)
    write_table(frame, f"figure_{fig_no}", "chaudhuri2011")
    figures[name] = frame
    if name not in runs:
        continue
    rep, pub = frame[frame.source == "reproduced"], frame[frame.source == "published"]
    unit = replication[name].unit
    fig, axes = plt.subplots(1, 2, figsize=(12, 4.2))
    for ax, loss, title in ((axes[0], "logistic", "(a) regularised logistic regression"), (axes[1], "huber", "(b) Huber SVM (h = 0.5)")):
        for method in ("output", "objective"):
            r = rep[(rep.loss == loss) & (rep.method == method)].sort_values("epsilon")
            ax.errorbar(r.epsilon, r.value, yerr=r.se, marker="o", capsize=3, color=COLORS[method],
                        label=f"{LABELS[method]}, ours (n = {int(r.n_runs.max())} {unit})")
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
    reading = f", reading: {chosen.label}" if name == "kddcup99" else ""
    fig.suptitle(f"Figure {fig_no}: {name} (error bars: standard errors over {unit}{reading})", y=1.02)
    save(fig, f"figure_{fig_no}")

# %%
for name, label in (("adult", "Figure 2"), ("kddcup99", "Figure 3")):
    if name in runs:
        E.record_published(checks, label, figures[name], id=label.lower().replace(" ", "-"),
                           detail=f"KDD reading: {chosen.label}" if name == "kddcup99" else "", hypotheses=tested,
                           assumption=replication[name].assumption)
        E.record_reading(checks, runs[name], name, label)
checks.show_new()

# %%
E.comparison_view(figures["adult"], tested)

# %% [markdown]
# ## Figures 4 and 5: learning curves with private tuning (Algorithm 4, KDDCup99)
#
# Algorithm 4 with five candidate $\Lambda$s, five training parts of $n$ rows, a 25,000-row validation and a 25,000-row
# test part, 5 permutations x 50 noise runs; objective perturbation restricted, like the paper's, to the
# $\varepsilon'_p > 0$ regime.  The paper does not list its five $\Lambda$s: the candidate grids are five
# half-decades from $10^{-5}, 10^{-4.5}, \dots, 10^{-3}$ upwards, and the grid is chosen by the rule printed above
# (the non-private learning curve, which involves no noise), under each reading separately (the chosen one here).  One run serves every
# grid: the $\Lambda$s of all grids are sorted and $\Lambda$ number $i$ trains on part $i \bmod 5$, so each grid uses
# each part once and a learner serves every grid that contains its $\Lambda$.
#
# The paper's parts have 60,000-120,000 rows drawn from the full file; from the 10 percent file (resampled to the full
# file's label composition, which allows at most about 489,000 rows) at most about 85,000 rows per part are
# available, so the full profile runs **the paper's three smallest sizes** (60,000, 70,000 and 80,000 rows per part);
# the published points at 90,000-120,000 rows stay unpaired.  The non-private line trains on the union of the five
# parts of the smallest size (300,000 rows, the paper's smallest non-private training set).  The chosen reading runs
# this protocol; the others ran the smallest size with 10 noise runs in the variants command (C4's side by side).
#
# **More replicates (issue 28).**  A replicate of a published point is one permutation (the paper's point is the mean
# of its 5): with our 5 the comparison has 4 degrees of freedom and little power.  The variants command runs the same
# learning curves with 20 permutations (`kdd_lc_permutations.csv`, committed; permutation $p$ draws its parts and noise
# from the seed, the size and $p$ alone, so its first 5 are this run's, checked below); when they are, the published
# points are compared through the 20 (t with 19 degrees of freedom, the published point a mean of 5).

# %%
if kdd_text is not None:
    data = E.kdd_data(chosen, rows=P["lc_rows"], random_state=seed)
    lc = E.figures_4_5_runs(data, P["lc_sizes"], P["lc_perms"], P["lc_runs"], LOSSES, random_state=seed,
                            n_jobs=P["n_jobs"])
    lc_ranking = E.rank_grids(lc[lc.method == "non-private"])  # the grid rule reads the non-private curves alone
    lc_grid = float(lc_ranking.grid.iloc[0])
    del data
    print(f"grid of the chosen reading: five half-decades from 1e{lc_grid:g}")
    display(lc_ranking.round(4))

# %% [markdown]
# **K-grid-per-loss.**  The grid rule sums the two losses' squared z; if the paper chose the five $\Lambda$s per loss
# (one grid per figure), each loss takes the grid with its own smallest $|z|$.  Every grid comes from the same runs,
# so the registered test (the joint mean test of Figures 4-5's private points, permutations as replicates, false
# acceptance on the one-grid law) costs no solve.

# %%
if kdd_text is not None:
    hypotheses.append(E.grid_per_loss_hypothesis(lc, lc_ranking, E.family_size("K-grid-per-loss"), random_state=seed))
    tested = pd.DataFrame(hypotheses, columns=E.HYPOTHESIS_COLUMNS)
    explanations = E.explanations(tested)
    display(tested[tested.hypothesis == "K-grid-per-loss"][["hypothesis", "statistic", "outcome", "power", "detail"]])

# %%
if kdd_text is not None:
    lc_chosen = lc[np.isclose(lc.grid, lc_grid)]
    lc_more = E.record_permutations(checks, lc, E.load_committed("kdd_lc_permutations.csv", OUT), "kdd_lc_permutations.csv")
    lc_perms = lc_chosen.perm.nunique() if lc_more is None else lc_more.perm.nunique()
    lc_frame = E.learning_curve_frame(lc_chosen if lc_more is None else lc_more, lc_grid, explanations=explanations)
    write_table(lc_frame, "figure_4_5", "chaudhuri2011")
    E.record_published(checks, "Figures 4-5", lc_frame, id="figures-4-5",
                       detail=f"KDD reading: {chosen.label}; Lambda grid from 1e{lc_grid:g}; {lc_perms} permutations",
                       hypotheses=tested)
    E.record_learning_curves(checks, lc_chosen)
else:
    checks.skip("Figures 4-5", "learning curves with Algorithm 4 on KDDCup99", kdd_reason, id="figures-4-5")
checks.show_new()

# %%
if kdd_text is not None:
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
                     f"Lambdas from 1e{lc_grid:g} (reading: {chosen.label})", y=1.02)
        save(fig, f"figure_{fig_no}")
    display(E.comparison_view(lc_frame, tested))

# %% [markdown]
# ### The readings side by side (C4)
#
# For every candidate reading: its rank under the rule, the published non-private entries of Table 2 it reproduces
# (10 folds), and the published numbers of Table 2, Figure 3 and Figures 4-5 within 3 standard errors of ours under it
# (no explanation applied), every reading at the same smaller protocol (column `protocol`), with the grid its own
# non-private learning curve chose.  C4's test counts the published KDD numbers that still differ without an accepted
# explanation under the chosen reading at the paper's protocol (`table_2.csv`, `figure_3.csv`, `figure_4_5.csv`).

# %%
if kdd_text is not None:
    if side is not None:
        grids = side.groupby("reading").grid.first().to_dict()
        protocols = {r: "5 folds x 10 runs; Figures 4-5: sizes [60000], 5 permutations x 10 runs (the variants command)"
                     for r in grids}
        readings = E.readings_table(ranking, E.reading_frames(side), grids, protocols)
        readings.to_csv(OUT / "kdd_readings.csv", index=False)
    else:
        readings = ranking.assign(chosen=ranking["rank"] == 1)[["reading", "rank", "chosen"]]
    kdd_classes = pd.concat([compare_table(f, tested)["class"] for f in (tables["kddcup99"], figures["kddcup99"], lc_frame)])
    hypotheses.append(E.readings_hypothesis(readings, int((kdd_classes == "differs, unexplained").sum()),
                                            int((kdd_classes == "inconclusive (too noisy)").sum())))
    display(readings.drop(columns="protocol").round(1))
E.write_hypotheses(hypotheses, OUT)
pd.DataFrame(hypotheses, columns=E.HYPOTHESIS_COLUMNS)[["hypothesis", "dataset", "statistic", "outcome"]]

# %% [markdown]
# ## Section 4: generalisation (Lemmas 16, 17, 19; Theorems 15, 18; Corollaries 20, 21)
#
# Lemma 17 (a Gamma tail) is computed exactly; Lemma 16 (Algorithm 1) and Lemma 19 (Algorithm 2) are checked by Monte
# Carlo over the noise, as failure rates: a claimed failure probability $\delta$ is refuted when the Clopper-Pearson
# lower bound of the observed rate exceeds it, and confirmed only when the check had the power (at least 0.8) to
# refute a true rate of $2\delta$.  Lemma 19's proof takes $\|b\| \sim \Gamma(d, 2/\varepsilon_p)$, but Algorithm 2
# draws $\|b\| \sim \Gamma(d, 2/\varepsilon'_p)$, larger whenever $\varepsilon'_p < \varepsilon_p$: we test the
# statement with the noise the algorithm really adds, including a case where $c/(n\Lambda)$ is not small (ERRATA C2).

# %%
l17 = E.lemma_17_grid([1, 2, 5, 10, 50, 105, 1000], [0.5, 0.1, 0.05, 0.01, 1e-3, 1e-6])
l16 = E.lemma_16_experiment([("logistic", 0.01, 0.5, 0.1), ("huber", 0.01, 0.5, 0.1), ("logistic", 0.1, 0.1, 0.05)],
                            draws=P["lemma16_draws"], random_state=seed)
l19 = E.lemma_19_experiment([("logistic", 0.01, 1.0, 0.1), ("logistic", 0.002, 1.0, 0.1), ("huber", 0.01, 2.0, 0.1)],
                            draws=P["lemma19_draws"], random_state=seed)
E.record_section_4(checks, l16, l17, l19)
checks.show_new()

# %% [markdown]
# Theorems 15 and 18 and Corollaries 20-21 are sample-size statements with unspecified constants: a finite experiment
# can neither confirm nor refute them.  We check what can be checked: that the corollaries are the theorems with the
# losses' constants (analytic), the rates the paper reads from them (a property of the formulas), and Corollary 21's
# printed constant for Algorithm 2 ($c = 1/4$, a typo for $1/(2h)$: ERRATA C7).

# %%
c2021 = E.corollaries_20_21()
E.record_theorems_15_18(checks)
E.record_corollaries_20_21(checks, c2021)
checks.show_new()

# %% [markdown]
# ## Section 5: kernels (Algorithm 3; Theorem 22, Lemma 23, Theorems 24-25)
#
# Algorithm 3 maps $x$ to $v(x) = \sqrt{2/D}\,[\cos(\omega_j^\top x + \psi_j)]_j$, whose norm can exceed 1 (up to
# $\sqrt 2$; ERRATA C1), breaking the $\|x\| \le 1$ assumption of Theorems 6 and 9 that Theorem 22 relies on.
# `PrivateKernelERM` divides the map by $\sqrt 2$ so that $\|v(x)\| \le 1$ for every input.  Lemma 23 (and with it
# Theorems 24-25) rests on approximating $f_0$ by $D$ random features with error $O(C\sqrt{\log(1/\delta)/D})$; we
# measure that rate (the slope of log error in $\log D$ over every draw, equivalent to $-1/2$ within 0.15).

# %%
norms = E.kernel_feature_norms([1, 2, 10, 100, 1000], gamma=1.0, random_state=seed)
l23 = E.lemma_23_experiment(P["lemma23_D"], Cbound=2.0, gamma=1.0, n_points=500, draws=P["lemma23_draws"], random_state=seed)
E.record_section_5(checks, norms, l23)
checks.show_new()

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
# The exponential mechanism's selection satisfies $z \le z_{min} + (2/\varepsilon_p)\log(m/\delta)$ with probability
# at least $1 - \delta$; the exact failure probability follows from Algorithm 4's probabilities, the simulated one
# from its draws (a failure rate, as in Section 4).  (Theorem 26, the privacy of Algorithm 4, is audited above.)

# %%
t27 = E.theorem_27_experiment([([100, 103, 110, 150, 300], 0.05, 0.1), ([40, 41, 42, 43, 44], 0.5, 0.05), (list(range(0, 200, 10)), 0.1, 0.01)],
                              draws=P["theorem27_draws"], random_state=seed)
E.record_theorem_27(checks, t27)
checks.show_new()

# %% [markdown]
# ## Side by side with diffprivlib
#
# IBM diffprivlib's `LogisticRegression` implements Algorithm 2 (its `mechanisms/vector.py`).  With the same
# preprocessing, the same $\Lambda$ (diffprivlib's $C = 1/(n\Lambda)$) and the same $\varepsilon$ grid we compare
# test error and fit time, with its intercept off (Algorithm 2 as published) and on (its default).  Our fit certifies
# its minimiser; diffprivlib's L-BFGS stops at tol 1e-4.  The speed comparison proper, with BLAS threads controlled,
# is `benchmarks/bench_chaudhuri2011.py`.

# %%
dpl_ok, dpl_version = E.diffprivlib_available()
print("diffprivlib:", dpl_version)
if dpl_ok:
    cmp = E.diffprivlib_comparison(adult, P["dpl_epsilons"], 10**-2.5, range(P["dpl_seeds"]), random_state=seed)
    cmp_summary = E.summarise(cmp.assign(fold=cmp.seed), ["implementation", "epsilon"]).drop(columns="n_draws")
    write_table(cmp_summary.assign(source="reproduced"), "diffprivlib_comparison", "chaudhuri2011")
    E.record_diffprivlib_comparison(checks, cmp)
    fig, ax = plt.subplots(figsize=(6.5, 4))
    for impl, g in cmp_summary.groupby("implementation"):
        ax.errorbar(g.epsilon, g.value, yerr=g.se, marker="o", capsize=3, label=impl)
    ax.set(xscale="log", xlabel="eps_p", ylabel="test error (Adult)",
           title=f"objective-perturbation LR, Lambda = 10^-2.5, {P['dpl_seeds']} seeds (error bars: se)")
    ax.legend(fontsize=8)
    save(fig, "diffprivlib_comparison")
else:
    checks.skip("diffprivlib comparison", "objective-perturbation LR against diffprivlib", dpl_version, kind="target")
checks.show_new()

# %% [markdown]
# ### diffprivlib held to the same standard
#
# Theorem 9's proof bounds the Jacobian ratio by $(1 + c/(n(\Lambda + \Delta)))^2$ because the rank-2 change has
# eigenvalues up to $c\|x\|^2 \le c$.  With rows of norm up to $R$ the eigenvalues reach $cR^2$, so $\varepsilon'_p$
# and $\Delta$ must use $cR^2$; the noise needs $\beta = \varepsilon'_p/(2R)$ since $\|b - b'\| \le 2R$.  diffprivlib
# 0.6.6 uses $cR$ (ERRATA D1), and with its default intercept leaves the intercept unregularised when $\Delta = 0$
# (D2).

# %%
# NBVAL_CHECK_OUTPUT
constants = pd.DataFrame([{"data_norm": R, "fit_intercept": fi, **E.diffprivlib_constants(1.0, 5, 0.2, R, fi)}
                          for R, fi in ((1.0, False), (1.0, True), (10.0, False), (30.0, False))])
print(stable_text(constants[["data_norm", "fit_intercept", "R", "dpl_eps_prime", "dpl_Delta", "required_eps_prime", "required_Delta"]], digits=4))

# %% [markdown]
# A pair with data_norm $R = 30$ ($n = 5$, $d = 1$, $C = 1$, $\varepsilon = 1$, no intercept): four rows at the origin
# and one at $x = 30$ ($D$) or $x = 0$ ($D'$).  The exact privacy loss of diffprivlib's release (computed with the
# constants it uses) and an audit of diffprivlib's own releases, next to ours on the same pair (which is Theorem 9's
# audit in other units: rows and data_norm scaled together leave our mechanism unchanged, a consistency check).

# %%
theirs, ours = E.diffprivlib_audit(1.0, P["dpl_audit_releases"], P["audit_obj_releases"], n_jobs=P["n_jobs"],
                                    random_state=seed) if dpl_ok else (None, None)
if dpl_ok:
    display(pd.DataFrame([theirs.row(), ours.row()]).round(4))
    E.record_diffprivlib_audit(checks, peer, theirs, ours, audits["theorem-9"][1])
peer.show_new()
checks.show_new()

# %% [markdown]
# **The unregularised intercept (D2).**  With `fit_intercept=True` and $\varepsilon'_p > 0$ the perturbed objective
# has no minimiser whenever the noise's intercept coordinate exceeds what the logistic gradient can balance, and the
# released intercept is wherever L-BFGS stops (noise replicated from diffprivlib's RandomState).

# %%
intercepts = E.diffprivlib_intercept(P["dpl_intercept_seeds"], dpl_ok)
if dpl_ok:
    E.record_diffprivlib_intercept(peer, intercepts)
peer.show_new()
intercepts.head()

# %% [markdown]
# ## Run time
#
# The paper's protocol (10 folds x 50 noise runs, 5 permutations x 50 runs) within our own budget: the full profile
# should take at most 6 minutes on 2 idle cores (issue 14).  The KDD readings the rule does not choose and the
# registered variants run once, outside this notebook (`python -m dpkernels.experiments.chaudhuri2011`).

# %%
E.record_run_time(checks, time.perf_counter() - START, profile)
checks.show_new()

# %% [markdown]
# ## Summary
#
# Every check of this notebook (`paper_figures/chaudhuri2011/checks.csv`); `kind` says what a row is worth (only
# `measured` rows check a claim of the paper; the README and `paper_figures/REPORT.md` count them, with the other kinds
# apart); violated rows are explained in `ERRATA.md`; findings about diffprivlib are in
# `paper_figures/diffprivlib/checks.csv`, apart from the paper's; the tested explanations are in `hypotheses.csv`;
# and `paper_figures/REPORT.md` lists the published numbers that differ without an accepted explanation.

# %%
checks.write(OUT)
peer.write(output_dir("diffprivlib"))
counts = checks.frame().groupby(["kind", "status"]).size().unstack(fill_value=0).reindex(columns=list(STATUSES), fill_value=0)
print(counts.assign(total=counts.sum(axis=1)).to_string())
checks.frame()[["id", "kind", "bound", "measured", "status"]]
