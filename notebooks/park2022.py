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
# # Park (2022): DP SVDD and multi-class classification with equilibrium points
#
# *Differentially private multi-class classification using kernel supports and equilibrium points*, M.S.
# thesis, Seoul National University, 2022.  The method: (I) an SVDD centre in a random Fourier feature space
# made private by Laplace noise (Algorithm 1, Theorem 4.3); (II) equilibrium points (EPs) of the gradient
# dynamics on the private support function; (III) basins labelled by noisy majority votes; released either as
# the support function with labelled EPs or as EPs for kNN.  Baselines: one-against-all SVM WEIGHT
# (Rubinstein et al.'s PrivateSVM), SVM SEMI and SVM OUTPUT (Jain and Thakurta 2013).
#
# This notebook regenerates Tables 7.1-7.3 and Figures 5.1, 7.1, 7.2, checks Corollary 4.2 and Theorems 4.3
# and 4.4, tests the claims of Sections 5 and 7, and states what each method releases and its total privacy
# cost.  The statements it tests are quoted, with their numbering, in `docs/statements/park2022.md`.
#
# Every check prints its verdict right after the cell that makes it, with the criterion beside it.  A verdict has
# three values: **holds** (the data confirm the claim: a one-sided bound on the claimed side, an equivalence inside
# a stated margin, an audit whose negative control caught its leak), **violated** (the data refute it) or
# **inconclusive** (neither).  Each row has a *kind*: `measured` rows test the thesis's own statements and are the
# only confirmations; `analytic` rows compare formulas, `consistency` rows test our own substitutes (the corrected
# variant, the grid release) or are true by construction, `target` rows are our own requirements.  Published
# numbers are compared with ours through the standard error of the difference and classed `agrees`,
# `inconclusive (too noisy)`, `consistent with X` (only when hypothesis X's own test accepts that data set:
# `hypotheses.csv`), `differs, unexplained`, `fitted` (numbers a reading rule was chosen on), `not comparable`
# (timings) or `input` (settings we chose to match).
# The author's public code (GitHub JinseongP/DP-SVDD) is a second reading of the protocol; where it and the thesis
# differ we follow the thesis and say so; where the thesis is silent, the reading is a parameter chosen by a stated
# rule.

# %% tags=["parameters"]
profile = "quick"
seed = 2022
sizes = None

# %%
import math

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import seaborn as sns

from dpkernels import profiles
from dpkernels.datasets import make_five_gaussians, make_three_moons
from dpkernels.experiments import park2022 as E
from dpkernels.experiments.park2022 import variants as PV
from dpkernels.mechanisms import EquilibriumPointClassifier, PrivateSVDD
from dpkernels.report import Checks, compare_table, output_dir, stable_text, write_hypotheses, write_table
from dpkernels.verdicts import Outcome, audit_verdict, bound_verdict, difference_verdict, rate_verdict

P = profiles.load("park2022", profile, sizes)
OUT = output_dir("park2022", profile)
checks = Checks("park2022")
sns.set_theme(style="whitegrid", context="notebook")
pd.set_option("display.width", 160)
pd.set_option("display.max_columns", 30)
pd.set_option("display.precision", 3)
print(f"profile={profile}, seed={seed}, output={OUT.name}/")


def save(fig, name):
    fig.savefig(OUT / f"{name}.png", dpi=130, bbox_inches="tight")
    plt.show()


# %% [markdown]
# ## Table 7.1: data sets and hyperparameters
#
# The published sizes next to what the loaders give with an 80/20 split.  Shuttle is grouped into three
# classes (Rad.Flow, High, the rest) and sub-sampled (seeded) to the thesis's 30,450 rows; vowel is the
# 528-row training set with its 10 acoustic features (*The Elements of Statistical Learning*'s `vowel.train`;
# mlbench's copy lacks one of them).  Numbers we set to match the table (our generators' sizes, shuttle's
# sub-sampled size and grouping) are *inputs*, not agreements.  How the features are scaled is a reading
# (Section "Readings" below).

# %%
t71 = E.table_7_1(random_state=seed)
write_table(t71, "table_7_1", "park2022")
t71.pivot_table(index="dataset", columns=["column", "source"], values="value", aggfunc="first").reindex(E.DATASETS)

# %%
# NBVAL_CHECK_OUTPUT
cmp71 = compare_table(t71, E.hypotheses(t71, pd.DataFrame(columns=["dataset"])))
print(cmp71[["dataset", "column", "published", "reproduced", "class"]].to_string(index=False))

# %%
real = cmp71[cmp71["class"] != "input"]
wrong = real[real["class"] != "agrees"]
checks.record("Table 7.1", "the description of the public data sets (dims, classes, 80/20 sizes) against the data",
              Outcome("violated" if len(wrong) else "holds", f"exact counts: {len(real) - len(wrong)} of {len(real)} compared "
                      "numbers agree; " + "; ".join(f"{r.dataset} {r.column}: published {r.published:g}, data {r.reproduced:g}"
                                                   for r in wrong.itertuples())),
              kind="measured", bound=f"{len(real)} of {len(real)}", measured=f"{len(real) - len(wrong)} of {len(real)}",
              id="table-7-1", detail="ERRATA P1")
checks.show_new()

# %% [markdown]
# ## Readings: what the thesis does not say, and the rule that chooses
#
# The thesis does not say how the features are scaled, and heads its SVM columns "$C/n$".  Both matter: with the
# min-max scaling of the author's code (which has no code for the baselines), the thesis's kernel
# $\exp(-0.1\|x - y\|^2)$ on shuttle's 9 features takes values only in $[e^{-0.9}, 1] = [0.41, 1]$ and the
# one-against-all SVMs predict the largest class.  A baseline at the majority class is a defect of our experiment,
# not a finding, so the reading is a parameter (`E.Reading`): the scaling (min-max, standardised, raw) and the SVMs'
# box (Table 7.1's number as the dual box $C/n$, or times $n$).  The SVDD's box is not in doubt (the author's code
# passes the number as the box of the dual with $\sum_i \beta_i = 1$).
#
# **The rule, fixed before any private number is computed:** run every candidate reading without noise on Table
# 7.3's shuttle samplings; for each published non-private number (4 methods x 2 samplings) take the distance
# $|\text{ours} - \text{published}|$ in accuracy; choose the reading with the smallest largest distance (ties: the
# smallest mean distance); $z$ through the standard error of the difference is shown beside it.  (A first version of
# the rule ranked readings by $|z|$; on a quick run it chose raw features, whose SVMs score 0.53, below the majority
# class, because their runs spread so widely that every $z$ is small.  A rule on $|z|$ rewards noise, so the distance
# decides.)  The private columns are then run under the chosen reading only, and the other readings' non-private
# numbers are reported beside it.  The reading applies to shuttle (Table 7.3 and Figure 7.1's shuttle panel); the
# other data sets have no published number to judge a reading on and keep the author's code's min-max scaling.
# The screen fits the SVMs with liblinear (the same objective, at most 100 passes, not certified); the chosen
# reading then runs through the certified pipeline.  The large-box fits (box times $n$) do not converge in 100
# passes: on min-max features at 30% they scored 0.969 with 200 passes and about 0.94 with 100, a shift smaller than
# the rule's margin (the chosen reading's largest distance is about 0.01, the next one's above 0.05).

# %%
shuttle73 = {frac: E.park_dataset("shuttle", seed, shuttle_rows=int(E.SHUTTLE_ROWS * frac)) for frac in P["t73_fractions"]}
screen = E.screen_readings(shuttle73, range(P["reading_runs"]), E.SETTINGS["shuttle"], n_jobs=P["n_jobs"])
published_np = {(frac, m): v[-1] for (frac, m), v in E.PUBLISHED_TABLE_7_3.items()}
scores = E.reading_scores(screen, published_np, E.THESIS_RUNS)
READING, ranking = E.choose_reading(scores)
READINGS = {name: E.AUTHOR_READING for name in E.DATASETS} | {"shuttle": READING}
write_table(scores.assign(source="reproduced", value=scores.reproduced), "table_7_3_readings", "park2022")
print(f"chosen reading: {READING.label} ({P['reading_runs']} runs per reading)")
ranking

# %%
scores.pivot_table(index=["scaling", "svm_box", "method"], columns="sampling", values=["published", "reproduced", "diff", "z"]).round(3)

# %%
fig, ax = plt.subplots(figsize=(11, 4.5))
lab = scores.assign(reading=scores.scaling + ", " + scores.svm_box, cell=scores.method + " " + (100 * scores.sampling).round().astype(int).astype(str) + "%")
sns.scatterplot(data=lab, x="cell", y="reproduced", hue="reading", style="reading", s=70, ax=ax)
ax.scatter(lab.cell, lab.published, marker="_", s=400, color="k", label="Table 7.3 (published)")
ax.scatter(lab.cell, lab.majority, marker="x", s=40, color="grey", label="majority class")
ax.set(xlabel="method and sampling (non-private)", ylabel="test accuracy",
       title=f"Readings of the protocol against Table 7.3's non-private column (chosen: {READING.label})")
ax.tick_params(axis="x", rotation=30)
ax.legend(fontsize=7, bbox_to_anchor=(1.01, 1), loc="upper left")
save(fig, "table_7_3_readings")

# %% [markdown]
# Differences between the thesis and the author's code (the thesis is followed): the code scales the gradient
# of the dynamics by $(1/d)/2$ instead of the feature map's $1/\sqrt{D}$ (equivalent to another learning rate),
# uses $\gamma = 10$ for shuttle and lr = 0.001 for vowel (Table 7.1: 1 and 0.1), other hypercube sizes, a kNN
# ($k = 1$) inference for its reported numbers, and splits $\epsilon$ in half between the SVDD noise and the votes
# ($\mathrm{Lap}(2/\epsilon)$ per count).  It scales features with scikit-learn's `MinMaxScaler` (it also imports
# `StandardScaler`, unused); it contains no code for the SVM baselines.
#
# ## Algorithm 1: private SVDD
#
# Algorithm 1 defines the spectral density of the kernel as $p(\omega) = 2^{-1} \int e^{-j\langle \omega, x\rangle}
# g(x)\,dx$ (copied from Rubinstein et al.'s Algorithm 3).  For $p$ to be a probability density the constant must be
# $(2\pi)^{-d}$: the printed one gives the 1-d RBF kernel a density of total mass $\pi$ (quadrature below).  Our
# random features use the normalised law.

# %%
# NBVAL_CHECK_OUTPUT
mass = {"printed 2^-1": E.fourier_mass(paper=True), "(2 pi)^-1": E.fourier_mass(paper=False)}
print(stable_text(pd.Series(mass, name="total mass of p (1-d RBF)"), 6))

# %%
checks.record("Algorithm 1 (Fourier transform)", "total mass of the printed spectral density of the 1-d RBF kernel (quadrature)",
              Outcome("holds" if abs(mass["printed 2^-1"] - 1.0) < 1e-6 else "violated",
                      f"a density has mass 1 (to 1e-6): {mass['printed 2^-1']:.6f}", mass["printed 2^-1"]),
              kind="analytic", bound=1.0, id="p2", detail=f"(2 pi)^-d gives {mass['(2 pi)^-1']:.6f}; ERRATA P2 (as Rubinstein et al.'s R3)")
checks.show_new()

# %% [markdown]
# ### Corollary 4.2: sensitivity of the centre
#
# $\|a_D - a_{D'}\|_1 \le 2 C \kappa \sqrt{F} / n$ (and $\|a_D - a_{D'}\|_2 \le 2 C \kappa / n$ in the proof).  The SVDD
# dual over the capped simplex $\{0 \le \beta_i \le C/n,\ \sum_i \beta_i = 1\}$ is solved through the feature matrix and
# certified by its Frank-Wolfe gap (cross-checked against cvxpy in the tests).  Corollary 4.2 rests on Lemma 4.1
# (Zhang's leave-one-out bound), stated for problems without the SVDD's equality constraint (ERRATA P6).  We
# measure the sensitivity over random and adversarially searched neighbours ($n = 40$ in $[0, 1]^2$, $F = 40$,
# several boxes).  The solves are exact (certified), so the verdict compares numbers; a search can refute the
# bound, and finding no counterexample supports it without proving it.

# %%
sens = E.sensitivity_experiment(P["sens_boxes"], n_random=P["sens_random"], n_adv=P["sens_adv"], maxiter=P["sens_maxiter"],
                                random_state=seed, n_jobs=P["n_jobs"])
sens

# %%
for box, g in sens.groupby("box"):
    r = g.loc[g.l2.idxmax()]
    checks.record("Corollary 4.2", f"max ||a_D - a_D'||_2 over random + adversarial neighbours, C/n = {box:g}",
                  bound_verdict(r.l2, r.bound_l2), kind="measured", bound=r.bound_l2, id=f"cor-4-2-l2-{box:g}",
                  detail=f"largest from the {r.method}; ratio {r.ratio_l2:.3f}")
    checks.record("Corollary 4.2", f"max ||a_D - a_D'||_1, C/n = {box:g} (F = {int(r.F)})", bound_verdict(float(g.l1.max()), r.bound_l1),
                  kind="measured", bound=r.bound_l1, id=f"cor-4-2-l1-{box:g}", detail=f"ratio {float(g.l1.max()) / r.bound_l1:.3f}")
checks.show_new()

# %% [markdown]
# ### Theorem 4.3: privacy audits of the released centre
#
# A neighbouring pair found by an adversarial search; the centre in $F = 4$ features (two frequencies), where the
# Laplace likelihood-ratio test reaches the pair's privacy loss with probability about $2^{-F}$, so that the audit
# has power.  The release is the library's default (exact rounding of the Laplace mechanism to a grid).  The
# audit's 95% lower bound must stay below the claimed $\epsilon = 1$; it *confirms* the claim only if the negative
# control (the same audit with half the noise, a mechanism that is not 1-DP on this pair) is caught above
# $\epsilon$.  Then the floating-point attack (Mironov 2012): numpy's float64 Laplace sampler, the thesis's, can only
# produce doubles reachable from the centre it was given, which tells the neighbours apart whatever $\epsilon$ says;
# the grid release (ours, a `consistency` row) is reachable from neither, and the attack's success on the thesis's
# sampler is its negative control.

# %%
pair = E.audit_pair(n_adv=P["sens_adv"], maxiter=P["sens_maxiter"], random_state=seed)
audit = E.svdd_audit(pair, 1.0, P["audit_releases"], random_state=seed)
control = E.svdd_audit(pair, 1.0, P["audit_releases"], noise_factor=0.5, random_state=seed + 1)
attack = {noise: E.float_attack(pair, 1.0, P["attack_releases"], noise, random_state=seed) for noise in ("continuous", "lattice")}
audits = pd.DataFrame([{"audit": "grid release", **audit}, {"audit": "negative control (half the noise)", **control},
                       *[{"audit": f"floating-point attack, {k} sampler", **v} for k, v in attack.items()]])
write_table(audits.assign(source="reproduced", value=audits.epsilon_lb, se=0.0), "theorem_4_3_audits", "park2022")
audits

# %%
checks.record("Theorem 4.3", "95% Clopper-Pearson lower bound on epsilon of Algorithm 1 (grid release) on an adversarial neighbour",
              audit_verdict(audit["epsilon_lb"], 1.0, control_lb=control["epsilon_lb"], control_claimed=1.0), kind="measured",
              bound=1.0, id="thm-4-3-audit",
              detail=f"{audit['n_releases']} releases per data set; this pair's exact privacy loss {audit['pair_epsilon']:.3f} "
              f"(strength: {audit['pair_epsilon']:.2f} of eps, so the audit refutes eps only if the release leaks "
              f"{1 / audit['pair_epsilon']:.2g}x what the proof allows on this pair) "
              f"(pair L1 change {audit['pair_l1']:.3g} against Corollary 4.2's {audit['bound_l1']:.3g}); the control's exact loss "
              f"{control['pair_epsilon']:.3f}")
checks.record("Theorem 4.3 (floating point)", "Algorithm 1 with the thesis's float64 Laplace sampler is eps-DP: lower bound of the "
              "floating-point attack", audit_verdict(attack["continuous"]["epsilon_lb"], 1.0), kind="measured", bound=1.0,
              id="thm-4-3-float", detail=f"{P['attack_releases']} releases per data set; ERRATA P11")
checks.record("Theorem 4.3 (grid release)", "our default release stays private against the floating-point attack",
              audit_verdict(attack["lattice"]["epsilon_lb"], 1.0, control_lb=attack["continuous"]["epsilon_lb"], control_claimed=1.0),
              kind="consistency", bound=1.0, id="thm-4-3-grid",
              detail="our substitute: outputs rounded to a grid are reachable from neither centre; the control is the same attack "
              "on the thesis's sampler")
checks.show_new()

# %% [markdown]
# ### Theorem 4.4: utility of the private support function
#
# With $\lambda = \nu / (8 \kappa (F + \ln(1/\tau)))$, $P(\sup_x |\hat f(x) - f(x)| > \nu) \le \tau$.  Monte Carlo over
# draws of the noise: the claim is refuted when the Clopper-Pearson lower bound of the observed failure rate exceeds
# $\tau$, and confirmed only when the number of draws gives power $\ge 0.8$ to see a rate of $2\tau$.

# %%
t44 = E.theorem_4_4_experiment([(0.5, 0.1), (1.0, 0.05), (2.0, 0.01)], draws=P["t44_draws"], random_state=seed)
for _, r in t44.iterrows():
    checks.record("Theorem 4.4", f"P(sup_x |f-hat - f| > nu), nu = {r.nu}, tau = {r.tau}, lambda = nu/(8 kappa (F + ln 1/tau))",
                  rate_verdict(int(r.failures), int(r.draws), r.tau), kind="measured", bound=r.tau, id=f"thm-4-4-{r.nu:g}",
                  detail=f"median sup / nu {r.median_sup_over_nu:.3g}: the bound is {1 / r.median_sup_over_nu:.0f}x loose, so the "
                  "check could fail only if the sup exceeded nu, hundreds of times its typical size, in 2 tau of draws")
checks.show_new()
t44

# %%
Xn = E.split_scale(E.park_dataset("satimage"), seed)[0]
a_star = PrivateSVDD(epsilon=None, box=0.05, sigma=math.sqrt(5.0), keep_nonprivate=True, random_state=seed).fit(Xn).nonprivate_.coef  # gamma = 0.1
checks.record("Section 4.2 (||a|| <= kappa)", "norm of the non-private SVDD centre, satimage",
              bound_verdict(float(np.linalg.norm(a_star)), 1.0, rtol=1e-12), kind="consistency", bound=1.0, id="a-norm",
              detail="a convex combination of unit vectors: true by construction (the released centre is clipped to 1)")
checks.show_new()

# %% [markdown]
# ## What each method releases, and its privacy
#
# | method | released | per-component $\epsilon$ (the thesis) | end to end, replace-one neighbours |
# |---|---|---|---|
# | Proposed (thesis) | noisy centre, frequencies, EPs reached **from the training points**, labels of occupied basins | $\epsilon$ (SVDD), $\mathrm{Lap}(1/\epsilon)$ votes | not DP: the EPs are computed from the training points without noise (below) |
# | Proposed (corrected) | noisy centre, frequencies, EPs from data-independent starts, labels of all basins | $\epsilon/2 + \epsilon/2$ | $\epsilon$ |
# | SVM WEIGHT | $K$ noisy weight vectors, frequencies | $\epsilon$ per class | $K\epsilon$ |
# | SVM SEMI | $K$ refitted weight vectors (needs the test set) | $(\epsilon, 1/n)$ per class | $(K\epsilon, K/n)$ |
# | SVM OUTPUT | noisy scores for each test point and class | $\epsilon$ per answer | $mK\epsilon$ ($m$ test points) |
#
# The thesis compares the methods "under privacy budgets $\epsilon$", but its $\epsilon$ is spent per component
# (ERRATA P5).  For shuttle ($K = 3$ classes, $m = 6{,}090$ test points) at $\epsilon = 1$:

# %%
# NBVAL_CHECK_OUTPUT
acct = E.accounting_table(3, 6090, 1.0)
print(stable_text(acct[["method", "per_component", "total_epsilon"]]))

# %%
checks.record("Section 7 (privacy budgets)", "the methods of Figure 7.1 and Table 7.3 are compared at one privacy budget eps (shuttle, eps = 1)",
              Outcome(E.equal_budget_status(acct, 1.0), "every method spends eps end to end (basic composition of the thesis's "
                      "per-component budgets)"), kind="analytic", bound="every method eps end to end", id="p5",
              measured="; ".join(f"{r.method} {r.total_epsilon:g}" for _, r in acct.iterrows()),
              detail="ERRATA P5; the notebook reports both accountings")
checks.show_new()

# %% [markdown]
# ### Section 5.2: are the equilibrium points private?
#
# The thesis: Phase II is $\epsilon$-DP "with the parallel composition of Properties 3 because every data point
# converges to an EP".  With Table 7.1's learning rates and iteration counts (lr = 0.001, 10-20 iterations) the
# dynamics hardly move the training points, so the released EPs are, up to the 0.05 merge grid, the training points
# (each data set with the scaling of its reading, below):

# %%
disp = pd.DataFrame([E.ep_displacement(name, seed, scaling=READINGS[name].scaling) for name in P["displacement_datasets"]])
write_table(disp.assign(source="reproduced", value=disp.median_move, se=0.0), "section_5_2_displacement", "park2022")
disp

# %% [markdown]
# The audit: $D'$ replaces one training row of three moons by the point of the domain farthest from the data; each
# release draws a fresh private centre ($\epsilon = 1$) and runs Phase II.  The event "an EP within 0.1 of the new row"
# happens in every release from $D'$ and in none from $D$, which no 1-DP mechanism allows; the corrected variant
# (dynamics from data-independent starts: our substitute, a `consistency` row, whose control is the thesis's
# variant caught by the same audit) shows no such separation.

# %%
ph2 = {v: E.phase2_audit(1.0, P["phase2_releases"], variant=v, seed=seed, n_jobs=P["n_jobs"]) for v in ("paper", "corrected")}
ph2_table = pd.DataFrame(ph2.values()).drop(columns="x_replacement")
write_table(ph2_table.assign(source="reproduced", value=ph2_table.epsilon_lb, se=0.0), "section_5_2_audit", "park2022")
ph2_table

# %%
r, rc = ph2["paper"], ph2["corrected"]
checks.record("Section 5.2 (Phase II privacy)", "the EPs reached from the training points are eps-DP (eps = 1): 95% lower bound of an "
              "audit of the released EPs", audit_verdict(r["epsilon_lb"], 1.0), kind="measured", bound=1.0, id="phase-2",
              detail=f"P(EP within 0.1 of the replaced row) = {r['p_event_Dprime']:.3f} from D', {r['p_event_D']:.3f} from D "
              f"({r['n_releases']} releases each; the lower bound is limited by the number of releases); ERRATA P3")
checks.record("Section 5.2 (corrected variant)", "the EPs from data-independent starts: 95% lower bound of the same audit",
              audit_verdict(rc["epsilon_lb"], 1.0, control_lb=r["epsilon_lb"], control_claimed=1.0), kind="consistency", bound=1.0,
              id="phase-2-corrected",
              detail=f"our substitute; event probability {rc['p_event_Dprime']:.3f} from D', {rc['p_event_D']:.3f} from D; the EPs are "
              "post-processing of the private centre")
checks.show_new()

# %% [markdown]
# ### Eq. (5.5): the privacy of the votes
#
# Each basin's label is the noisy argmax of its class counts with $\mathrm{Lap}(1/\epsilon)$ per count, "as the
# sensitivity of the count is always 1".  Under the thesis's own definition (a sample is modified), a replaced row
# lowers one count and raises another.  The exact privacy loss of the released labels (the noisy-argmax probabilities
# by quadrature) on neighbouring data sets: iris with Table 7.1's settings, $D'$ relabelling one row, every row and
# label tried.

# %%
votes = E.vote_privacy_experiment(1.0, "iris", seed=seed)
pd.DataFrame([votes])

# %%
checks.record("Eq. (5.5) (vote privacy)", "exact privacy loss of the labels with Laplace(1/eps) per count on neighbouring data sets "
              "(iris, eps = 1)", bound_verdict(votes["loss_paper"], 1.0, rtol=1e-9), kind="measured", bound=1.0, id="eq-5-5",
              detail=f"worst pair: counts {votes['counts_d']} -> {votes['counts_dprime']} of one cell ({votes['pairs_tried']} "
              "relabellings tried); report-noisy-max with Laplace(1/eps) is eps-DP for add/remove neighbours only (ERRATA P4)")
checks.record("Eq. (5.5) (corrected)", "the same pair with Laplace(2/eps) per count (the corrected variant)",
              bound_verdict(votes["loss_corrected"], 1.0, rtol=1e-9), kind="consistency", bound=1.0, id="eq-5-5-corrected",
              detail="our substitute: L1 sensitivity 2 of the histogram under replacement")
checks.show_new()

# %% [markdown]
# ### Properties 1 and SVM SEMI: the Gaussian calibration
#
# The thesis's Gaussian mechanism, $\sigma = \Delta \sqrt{2 \ln(1.25/\delta)} / \epsilon$, is Dwork and Roth's
# calibration, proven for $\epsilon < 1$ only; SVM SEMI uses it at every $\epsilon$ of Figure 7.1, with $\delta = 1/n$.
# The exact $\delta(\epsilon)$ of the Gaussian mechanism (dp-accounting's privacy curve), for shuttle's
# $\delta = 1/24{,}360$:

# %%
# NBVAL_CHECK_OUTPUT
cal = E.semi_calibration([0.01, 0.1, 1.0, 5.0, 10.0, 100.0], 1.0 / 24360)
write_table(cal.assign(source="reproduced", value=cal.exact_delta, se=0.0), "properties_1_gaussian", "park2022")
print(stable_text(cal.pivot_table(index="epsilon", columns="calibration", values="exact_delta").reset_index()))

# %%
cl = cal[cal.calibration == "classical"].set_index("epsilon").exact_delta
an = cal[cal.calibration == "analytic"].exact_delta
checks.record("Properties 1 (Gaussian mechanism)", "largest exact delta of the classical calibration over Figure 7.1's eps "
              "(delta = 1/n, shuttle)", bound_verdict(float(cl.max()), 1.0 / 24360, rtol=1e-6), kind="analytic", bound=1.0 / 24360,
              id="gauss-classical", detail="; ".join(f"eps {e:g}: {d:.3g}" for e, d in cl.items()) + "; SVM SEMI here uses the "
              "analytic calibration (ERRATA P10)")
checks.record("SVM SEMI (analytic calibration)", "largest exact delta of our calibration over the same eps",
              bound_verdict(float(an.max()), 1.0 / 24360, rtol=1e-6), kind="consistency", bound=1.0 / 24360, id="gauss-analytic",
              detail="dp-accounting's exact calibration: true by construction")
checks.show_new()

# %% [markdown]
# SVM SEMI releases the weights that fit the noisy test predictions.  The thesis's choice $w^* + \Phi_Z^+ \mu$ (the
# smallest change of $w^*$) keeps the part of $w^*$ outside the row space of the test features $\Phi_Z$ without
# noise; when there are fewer test points than features (iris: 30 < 400) that part is large.  We release
# $\Phi_Z^+ (f(Z) + \mu)$, post-processing of the noisy predictions, which predicts identically on $Z$.

# %%
leak = E.semi_null_space(seed)
checks.record("Section 6.3 (SVM SEMI)", "share of ||w*|| released without noise by w* + Phi_Z^+ mu (iris, one class)",
              bound_verdict(leak["share"], 0.0), kind="measured", bound=0.0, id="semi-null",
              detail=f"{leak['m_test']} test points, rank of Phi_Z {leak['rank']} < F = {leak['F']}: ||(I - Phi^+ Phi) w*|| / ||w*||; "
              "ERRATA P12")
checks.show_new()

# %% [markdown]
# ## Figure 7.1, Tables 7.2-7.3, Figure 7.2: the accuracy sweep
#
# 80/20 splits, runs as the profile says (the thesis: 5), $\epsilon \in \{0.01, 0.1, 1, 5, 10, 100\}$ (quick: fewer).
# One pool of (data set, run) tasks (two workers); each task solves the SVDD and the one-against-all SVMs once and
# draws every $\epsilon$'s noise from them.  Table 7.3 adds shuttle sub-sampled to 10% and 30%, with the thesis's
# method also run as the author's code does (min-max scaling, $\epsilon/2$ for the centre, $\mathrm{Lap}(2/\epsilon)$
# votes, $r_{max} = 0.1$), and SVM SEMI also with its noise calibrated without $\|\Phi_Z\|_2$ (hypothesis P18: the same
# fits, its own noise stream).  Figure 7.2's kNN release of the equilibrium points reuses the three-moons and vowel
# fits.  Shuttle runs under the chosen reading, the other data sets under min-max scaling.

# %%
EPS = P["epsilons"]
tasks = []
for name in E.DATASETS:
    tasks += E.tasks_for(name, [None] + EPS, range(P["runs"]), shuttle_rows=P["shuttle_rows"], n_starts=P["n_starts"],
                         knn=(1, 3, 5, 7, 9) if name in ("three_moons", "vowel") else (), seed=seed, labels={"sampling": 0.0},
                         reading=READINGS[name])
for frac in P["t73_fractions"]:
    tasks += E.tasks_for("shuttle", E.TABLE_7_3_EPSILONS, range(P["t73_runs"]), n_starts=P["n_starts"], seed=seed,
                         methods=("Proposed", E.AUTHOR_CODE, "SVM WEIGHT", "SVM SEMI", "SVM OUTPUT", E.SEMI_P18), data=shuttle73[frac],
                         labels={"sampling": frac}, reading=READING)
allres = E.sweep(tasks, n_jobs=P["n_jobs"], desc="Figure 7.1 / Table 7.3 runs")
res = allres[(allres.sampling == 0.0) & ~allres.method.str.contains("NN")].drop(columns="sampling")
knn = allres[(allres.sampling == 0.0) & allres.method.str.startswith("Proposed")].drop(columns="sampling")
res73 = allres[allres.sampling > 0]
print(f"{len(tasks)} tasks, {len(allres)} rows")

# %% [markdown]
# ### Figure 7.1
#
# Mean test accuracy with standard errors over the runs; the thesis's per-component $\epsilon$ (left) and one total
# $\epsilon$ per method (right).  The thesis gives Figure 7.1 as a plot only, so there is no published number to pair
# here.  First the requirement every comparison rests on: each non-private baseline must beat the majority class
# (a constant predictor) on its data set.

# %%
floor = E.baseline_floor(res)
below = "; ".join(f"{r.dataset} {r.method} {r.accuracy:.3f} vs {r.majority:.3f}" for r in floor[~floor.beats].itertuples())
checks.record("Protocol (baselines)", "every non-private SVM baseline beats the majority class of its test sets (Figure 7.1's data sets)",
              Outcome("holds" if floor.beats.all() else "violated", f"one-sided 95% lower bound of (accuracy - majority share) > 0 "
                      f"on each of the {len(floor)} (data set, baseline) pairs" + (f"; not on: {below}" if below else "")),
              kind="target", bound="all beat the majority class", measured=f"{int(floor.beats.sum())} of {len(floor)}", id="baselines-floor",
              detail="a baseline that does not is a defect of the experiment; Section 7.4's comparisons with it are at most inconclusive")
checks.show_new()
floor.round(3)

# %% [markdown]
# **P20 (registered): the other data sets under the chosen scaling.**  The reading rule chose its scaling on shuttle
# only; the other data sets keep min-max scaling, under which some baselines fall to the majority class.  The
# variants command (`python -m dpkernels.experiments.park2022`, outputs committed and read here) reran Figure 7.1's
# baselines on every data set but shuttle under the chosen scaling.  Figure 7.1 is a plot, so P20 explains no
# published number: it checks how far the scaling explanation (ERRATA P7) reaches.

# %%
std71 = PV.load_committed("figure_7_1_standardised.csv", OUT)
if std71 is not None:
    floor_std = E.baseline_floor(std71.assign(epsilon=std71.epsilon.astype(str).replace({"nan": "non-private"})))
    below_std = "; ".join(f"{r.dataset} {r.method} {r.accuracy:.3f} vs {r.majority:.3f}" for r in floor_std[~floor_std.beats].itertuples())
    checks.record("Protocol (baselines), P20", "under the chosen scaling every non-private SVM baseline beats the majority class on "
                  "Figure 7.1's data sets other than shuttle (the reach of ERRATA P7)",
                  Outcome("holds" if floor_std.beats.all() else "violated", "one-sided 95% lower bound of (accuracy - majority "
                          f"share) > 0 on each of the {len(floor_std)} (data set, baseline) pairs" + (f"; not on: {below_std}" if below_std else "")),
                  kind="consistency", bound="all beat the majority class", measured=f"{int(floor_std.beats.sum())} of {len(floor_std)}",
                  id="p20-floor", detail=f"{READING.label}; the variants command's runs (figure_7_1_standardised.csv); hypothesis P20")
    checks.show_new()
    display(floor_std.round(3))

# %%
fig71 = E.summarise(res, ["dataset", "method", "accounting", "epsilon"])
write_table(fig71.assign(source="reproduced"), "figure_7_1", "park2022")
fig71.pivot_table(index=["dataset", "method", "accounting"], columns="epsilon", values="value").round(3)

# %%
order = ["Proposed", "Proposed (corrected)", "SVM WEIGHT", "SVM SEMI", "SVM OUTPUT"]
for accounting in ("per-component", "total"):
    fig, axes = plt.subplots(2, 4, figsize=(18, 9), sharey=True, layout="constrained")
    for ax, name in zip(axes.ravel(), E.DATASETS):
        d = fig71[(fig71.dataset == name) & (fig71.accounting == accounting) & (fig71.epsilon != "non-private")]
        for method in order:
            g = d[d.method == method]
            if g.empty:
                continue
            ax.errorbar(g.epsilon.astype(float), g.value, yerr=g.se, marker="o", capsize=3, label=method)
        npv = fig71[(fig71.dataset == name) & (fig71.epsilon == "non-private") & (fig71.method == "Proposed")].value
        ax.axhline(float(npv.iloc[0]), color="k", ls=":", lw=1, label="Proposed, non-private")
        ax.axhline(float(floor[floor.dataset == name].majority.iloc[0]), color="grey", ls="--", lw=1, label="majority class")
        ax.set(xscale="log", title=f"{name} ({READINGS[name].scaling})", xlabel="eps (log scale)", ylabel="test accuracy")
    axes[0, 0].legend(fontsize=7)
    fig.suptitle(f"Figure 7.1 ({accounting} epsilon{'; the thesis' if accounting == 'per-component' else '; one eps per method end to end'}); "
                 f"mean +- standard error over {P['runs']} runs")
    save(fig, "figure_7_1" if accounting == "per-component" else "figure_7_1_total_epsilon")

# %% [markdown]
# ### Section 7.4's claims, tested
#
# "In general, the proposed method shows higher accuracy than SVM WEIGHT and SVM SEMI in all datasets and shows
# almost close performance to SVM OUTPUT.  In Vowel and Segment datasets, the proposed method shows even better
# performance."  Per data set, the paired difference (same splits) of test accuracy, averaged over the private
# $\epsilon$ of the sweep (per-component, as in the thesis), with its standard error over the runs.  "Higher" holds on a
# data set when the one-sided 95% lower bound of the difference is above 0 (t with runs - 1 degrees of freedom; the
# power to detect 0.05 is stated); "almost close" is read as at most 0.05 below SVM OUTPUT (the same test on the
# difference + 0.05).  "In all datasets" holds when every data set confirms it, is violated when one refutes it at
# $0.05/m$ (Bonferroni over the $m$ data sets), and is inconclusive otherwise.  A comparison with a baseline at the
# majority class confirms nothing.

# %%
c74 = E.section_7_4_claims(res, floor=floor)
c74.pivot_table(index="dataset", columns="claim", values="status", aggfunc="first")

# %%
for cid, g in c74.groupby("id", sort=False):
    checks.record("Section 7.4", f"the proposed method (thesis) is {g.claim.iloc[0]} on every data set (per-component eps, mean over eps)",
                  E.every(g), kind="measured", bound="every data set confirms it", id=f"sec-7-4-{cid}",
                  measured=", ".join(f"{k} {v}" for k, v in g.status.value_counts().items()))
checks.show_new()
c74[["claim", "dataset", "diff", "se", "n_runs", "status", "power"]].round(4)

# %% [markdown]
# Section 7.1 states the baselines' order too: "Under strong assumption, SVM OUTPUT shows higher accuracy than SVM
# WEIGHT and SVM SEMI" (it keeps the training data for inference).  The same test of "higher", per data set, on SVM
# OUTPUT's paired difference against each.

# %%
c71 = E.section_7_1_output_claim(res, floor=floor)
for cid, g in c71.groupby("id", sort=False):
    checks.record("Section 7.1", f"{g.claim.iloc[0]} on every data set (per-component eps, mean over eps)", E.every(g),
                  kind="measured", bound="every data set confirms it", id=f"sec-7-1-{cid}",
                  measured=", ".join(f"{k} {v}" for k, v in g.status.value_counts().items()))
checks.show_new()
c71[["claim", "dataset", "diff", "se", "n_runs", "status", "power"]].round(4)

# %% [markdown]
# ### Wine: accuracy that is not monotone in $\epsilon$
#
# On wine the thesis's method is more accurate with moderate noise than without.  Wine's Table 7.1 setting
# (lr = 0.1 for 100 iterations, cubes of side $r_{max} = 1$) moves the training points far (median displacement in
# the table of Section 5.2) into very few cells, which cannot separate three classes; moderate noise adds local
# minima, hence more cells (a finer partition); very small $\epsilon$ swamps the votes, very large $\epsilon$ (little
# noise) leaves few cells again.  Accuracy and mean number of cells per $\epsilon$, and the non-private method with the
# grouping removed or the author's smaller learning rate (the same splits).  This tests our explanation, not a
# statement of the thesis: a `consistency` row.

# %%
wine = res[(res.dataset == "wine") & (res.method == "Proposed")]
wine_cells = E.summarise(wine, ["epsilon"]).merge(wine.groupby("epsilon", sort=False).n_cells.mean().reset_index(), on="epsilon")
wine_set = E.setting_effect("wine", [{}, {"r_max": None}, {"lr": 0.001}], range(P["runs"]), n_jobs=P["n_jobs"])
wine_set = E.summarise(wine_set, ["setting"]).merge(wine_set.groupby("setting", sort=False).n_cells.mean().reset_index(), on="setting")
wine_cells, wine_set

# %%
peak = wine_cells[wine_cells.epsilon != "non-private"].sort_values("value").iloc[-1]
nop = wine_cells[wine_cells.epsilon == "non-private"].iloc[0]
fine = wine_set.set_index("setting").loc["r_max = None"]
checks.record("Figure 7.1 (wine, investigation)", "without the coarse grouping the non-private method is at least as accurate as the "
              "best private eps: the non-monotone curve comes from the number of cells",
              difference_verdict(fine.value - peak.value, float(np.hypot(fine.se, peak.se)), min_effect=E.MIN_EFFECT,
                                 df=max(P["runs"] - 1, 1), refute_below=0.0) if P["runs"] > 1 else
              Outcome("inconclusive", "one run: no standard error"),
              kind="consistency", bound=f">= {peak.value:.3f} (eps = {peak.epsilon}, {peak.n_cells:.0f} cells)", id="wine-cells",
              measured=f"{fine.value:.3f} (se {fine.se:.3f}, {fine.n_cells:.0f} cells)",
              detail=f"Table 7.1's setting without noise: {nop.value:.3f} in {nop.n_cells:.1f} cells; with eps = {peak.epsilon}: "
              f"{peak.value:.3f} in {peak.n_cells:.1f} cells (ERRATA P15)")
checks.show_new()

# %% [markdown]
# ## Table 7.2: training and inference time
#
# Training plus inference time per method and data set (mean over the runs; per-component $\epsilon = 1$; non-private
# solves included; two workers share two cores), next to the thesis's.  The thesis's timings come from another
# machine and implementation: they are `not comparable`, neither agreements nor differences.  Speed is measured on
# its own in `benchmarks/bench_park2022.py` (`benchmarks/results/park2022.json`).

# %%
t72 = E.table_7_2(res)
write_table(t72, "table_7_2", "park2022")
t72.pivot_table(index="method", columns=["dataset", "source"], values="value").round(2)

# %% [markdown]
# ## Table 7.3: shuttle sub-sampled to 10% and 30%
#
# The whole shuttle set (58,000 rows) sub-sampled (seeded) to 10% and 30% (two data sets, `shuttle 10%` and
# `shuttle 30%`), then the same protocol under the chosen reading, per-component $\epsilon$ as in the thesis.  Each
# published number (the mean of the thesis's 5 runs) against ours through the standard error of the difference,
# $z = (\text{ours} - \text{published}) / \sqrt{se_{ours}^2 + se_{pub}^2}$ with $se_{pub} = sd_{ours}/\sqrt{5}$ (the
# thesis's runs assumed to spread as ours).  Both standard errors rest on our per-run sd, so $z$ is a $t$ statistic with
# our runs $- 1$ degrees of freedom, referred to that $t$ law at a two-sided false-positive rate of 0.0027 per number.
# At small $\epsilon$ the runs are bimodal (the noise flips the argmax in some runs: per-run sd up to 0.4), and the
# band can span half the accuracy scale; so a comparison agrees only when it had power $\ge 0.8$ against a difference
# of 0.05 in accuracy (our minimum effect: the thesis states none), and is `inconclusive (too noisy)`, with its
# power, otherwise.  A replicate is a new random 80/20 split with new noise, the thesis's unit ("evaluated over 5
# runs"), so our spread estimates the spread of its means; the full profile runs more of them than the thesis (the
# profile's `t73_runs`) so that the comparisons have the power to see 0.05.  The non-private column is `fitted`: the
# reading rule was chosen on it.  A difference is explained only by a hypothesis registered before it was run
# (`registry.yaml`, below) and accepted by its own test with its false-acceptance rate stated (`hypotheses.csv`).

# %%
t73 = E.table_7_3(res73, reading=f"reading: {READING.label}")
write_table(t73, "table_7_3", "park2022")
p19_runs = PV.load_committed("registered_runs.csv", OUT)  # P19: the variants command's runs and its screen
p19_screen = PV.load_committed("p19_screen.csv", OUT)
hyp = E.hypotheses(t71, t73, res73, extra=PV.p19_hypothesis(p19_runs, random_state=seed) if p19_runs is not None else [])
write_hypotheses(hyp, "park2022")
display(E.registry_table())
hyp

# %%
cmp73 = compare_table(t73, hyp)
cmp73.drop(columns="note")

# %%
t73[~t73.method.isin([E.AUTHOR_CODE, E.SEMI_P18])].pivot_table(index=["sampling", "method"], columns=["epsilon", "source"], values="value").round(3)

# %%
checks.record("Table 7.3", "published accuracies reproduced (thesis's 5 runs against ours; t at 0.0027, power >= 0.8 against 0.05, ours)",
              E.table_outcome(cmp73),
              kind="measured", bound=f"{len(cmp73)} of {len(cmp73)} agree", id="table-7-3",
              measured=f"{int((cmp73['class'] == 'agrees').sum())} of {len(cmp73)} agree",
              detail=f"reading {READING.label}; explanations only where hypotheses.csv accepts the data set; the rest are listed in REPORT.md")
checks.show_new()

# %% [markdown]
# Section 7.5: "even if the non-private accuracy of each model is similar, the proposed method shows high accuracy
# under a small privacy budget $\epsilon$": at $\epsilon = 0.01$ the proposed method against SVM WEIGHT and SVM SEMI,
# paired over runs, at both samplings (every comparison must confirm it).

# %%
rows = E.table_7_3_order(res73)
checks.record("Section 7.5 (Table 7.3 ordering)", "at eps = 0.01 the proposed method is more accurate than SVM WEIGHT and SVM SEMI "
              "(paired over runs, both samplings)", E.every(rows), kind="measured", bound="every comparison confirms it",
              id="table-7-3-order", measured=", ".join(f"{k} {v}" for k, v in rows.status.value_counts().items()))
checks.show_new()
rows[["dataset", "diff", "se", "n_runs", "status"]].round(4)

# %% [markdown]
# Why the thesis's private numbers for the proposed method can differ from ours: its author's code (the second
# reading of the protocol) min-max scales the data, spends $\epsilon/2$ on the centre and $\mathrm{Lap}(2/\epsilon)$ on
# the votes, and groups the shuttle EPs in cubes of side 0.1 instead of Table 7.1's 0.5; smaller cubes hold fewer
# votes each, which the noise of small $\epsilon$ swamps.  That is hypothesis P14, tested per data set above (row
# "Proposed (author's code)" of the table): it explains a number only if the author's code reproduces every private
# number of the proposed method that the thesis's algorithm misses on that data set.
#
# The hypercube grouping of Eq. (5.6) and the learning rate: Table 7.1 prints $r_{max} = 0.5$ for shuttle (the author's
# code: 0.1, `round_sep`) and lr = 0.1 for vowel (the author's code: 0.001).  Table 7.3 and Figure 7.1 keep Table
# 7.1's values; non-private accuracy of the other values on the same splits (shuttle under its reading):

# %%
settings = pd.concat([
    *[E.setting_effect("shuttle", [{}, {"r_max": 0.1}, {"r_max": 0.25}, {"r_max": 1.0}, {"r_max": None}], range(P["t73_runs"]),
                       data=shuttle73[frac], n_jobs=P["n_jobs"], scaling=READING.scaling).assign(sampling=frac)
      for frac in P["t73_fractions"]],
    E.setting_effect("vowel", [{}, {"lr": 0.01}, {"lr": 0.001}, {"lr": 0.001, "r_max": None}], range(P["runs"]), n_jobs=P["n_jobs"]),
], ignore_index=True)
settings["sampling"] = settings.sampling.fillna(1.0)
set_summary = E.summarise(settings, ["dataset", "scaling", "sampling", "setting"])
set_summary = set_summary.merge(settings.groupby(["dataset", "scaling", "sampling", "setting"], sort=False).n_cells.mean().reset_index(),
                                on=["dataset", "scaling", "sampling", "setting"])
write_table(set_summary.assign(source="reproduced"), "table_7_1_settings", "park2022")
set_summary

# %%
acc = set_summary.set_index(["dataset", "sampling", "setting"])
rmax = {f"{frac:g}": E.reproduces(E.PUBLISHED_TABLE_7_3[(frac, "Proposed")][-1], acc.loc[("shuttle", frac, "Table 7.1")].value,
                                  acc.loc[("shuttle", frac, "Table 7.1")].se, acc.loc[("shuttle", frac, "Table 7.1")].sd,
                                  n_runs=int(acc.loc[("shuttle", frac, "Table 7.1")].n_runs))
        for frac in P["t73_fractions"]}
checks.record("Table 7.1 / 7.3 (r_max)", "Table 7.1's r_max = 0.5 gives Table 7.3's non-private accuracy of the proposed method",
              E.jointly(rmax), kind="consistency", bound="agrees at every sampling", id="rmax",
              measured="; ".join(f"{f}: {acc.loc[('shuttle', float(f), 'Table 7.1')].value:.3f}" for f in rmax),
              detail="consistency, not a confirmation: the reading (scaling, box) was chosen on these two published "
                     f"numbers among Table 7.3's non-private column (fitted); shuttle {READING.scaling}; " + "; ".join(
                  f"{f:g}: r_max = 0.1 (the author's code) {acc.loc[('shuttle', f, 'r_max = 0.1')].value:.3f}" for f in P["t73_fractions"])
              + "; ERRATA P8")
bar = fig71[(fig71.dataset == "vowel") & (fig71.method == "SVM OUTPUT") & (fig71.epsilon == "non-private")].iloc[0]
v = acc.loc[("vowel", 1.0, "Table 7.1")]
checks.record("Table 7.1 (vowel lr)", "Table 7.1's lr = 0.1 makes vowel 'an easy dataset' (Section 7.4): non-private accuracy above "
              "SVM OUTPUT's", difference_verdict(v.value - bar.value, float(np.hypot(v.se, bar.se)), min_effect=E.MIN_EFFECT,
                                                 df=max(P["runs"] - 1, 1)) if P["runs"] > 1 else Outcome("inconclusive", "one run"),
              kind="measured", bound=f"> {bar.value:.3f}", measured=f"{v.value:.3f} (se {v.se:.3f}) in {v.n_cells:.0f} cell(s)",
              id="vowel-lr", detail=f"lr = 0.001 (the author's code): {acc.loc[('vowel', 1.0, 'lr = 0.001')].value:.3f}; SVM OUTPUT "
              f"non-private {bar.value:.3f} (se {bar.se:.3f}); min-max scaling (the author's reading); ERRATA P9")
checks.show_new()

# %% [markdown]
# The same claim under the scaling the reading rule chose on shuttle (ERRATA P7 calls min-max a defect there): the
# thesis's method at Table 7.1's lr on vowel's same splits under that scaling, against SVM OUTPUT's non-private
# accuracy under it (P20's runs, `figure_7_1_standardised.csv`, unpaired).  Both readings are reported; neither replaces the other.

# %%
if std71 is not None:
    v_std = E.summarise(E.setting_effect("vowel", [{}, {"lr": 0.001}], range(P["runs"]), n_jobs=P["n_jobs"],
                                         scaling=READING.scaling), ["setting"]).set_index("setting")
    bar_std = std71[(std71.dataset == "vowel") & (std71.method == "SVM OUTPUT") & (std71.epsilon.astype(str) == "non-private")].accuracy
    vs = v_std.loc["Table 7.1"]
    se_bar = float(bar_std.std(ddof=1) / np.sqrt(len(bar_std))) if len(bar_std) > 1 else float("nan")
    checks.record("Table 7.1 (vowel lr), chosen scaling", "Table 7.1's lr = 0.1 makes vowel 'an easy dataset' (Section 7.4) under "
                  "the chosen scaling: non-private accuracy above SVM OUTPUT's", difference_verdict(
                      vs.value - bar_std.mean(), float(np.hypot(vs.se, se_bar)), min_effect=E.MIN_EFFECT,
                      df=max(min(P["runs"], len(bar_std)) - 1, 1)) if P["runs"] > 1 and len(bar_std) > 1 else Outcome("inconclusive", "one run"),
                  kind="measured", bound=f"> {bar_std.mean():.3f}", measured=f"{vs.value:.3f} (se {vs.se:.3f})", id="vowel-lr-chosen-scaling",
                  detail=f"{READING.label}; lr = 0.001 (the author's code): {v_std.loc['lr = 0.001'].value:.3f}; SVM OUTPUT non-private "
                         f"{bar_std.mean():.3f} over {len(bar_std)} runs (P20's; unpaired, df the smaller count - 1); ERRATA P9")
    checks.show_new()
    display(v_std.round(3))

# %% [markdown]
# ## Figure 5.1: decision regions, equilibrium points and contours
#
# The thesis's variant, non-private and private ($\epsilon = 1$ for the centre and the votes), on five gaussians and
# three moons with Table 7.1's settings (min-max scaled); EPs as stars, the private support function's contours in red.

# %%
import warnings

from dpkernels import PrivacyLeakWarning

fig, axes = plt.subplots(2, 2, figsize=(12, 11))
for row, (name, data) in enumerate((("five_gaussians", make_five_gaussians(random_state=seed)), ("three_moons", make_three_moons(random_state=seed)))):
    Xtr, Xte, ytr, yte = E.split_scale(data, seed)
    s = E.SETTINGS[name]
    for col, eps in enumerate((None, 1.0)):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", PrivacyLeakWarning)
            clf = EquilibriumPointClassifier(epsilon_svdd=eps, epsilon_vote=eps, classes=np.arange(data.n_classes), box=s.proposed[0],
                                             sigma=math.sqrt(0.5 / s.proposed[1]), learning_rate=s.lr, n_iter=s.n_iter,
                                             variant="paper", random_state=seed).fit(Xtr, ytr)
        g = np.linspace(-0.05, 1.05, 120)
        G = np.array(np.meshgrid(g, g)).reshape(2, -1).T
        ax = axes[row, col]
        ax.contourf(g, g, clf.predict(G).reshape(len(g), len(g)), alpha=0.25, cmap="tab10", levels=np.arange(-0.5, data.n_classes))
        ax.contour(g, g, clf.svdd_.support_function(G).reshape(len(g), len(g)), colors="red", linewidths=0.6, levels=8)
        ax.scatter(Xtr[:, 0], Xtr[:, 1], c=ytr, cmap="tab10", s=8, vmin=0, vmax=9)
        ax.scatter(clf.labelled_points_[:, 0], clf.labelled_points_[:, 1], marker="*", s=40, c="k", label="equilibrium points")
        ax.set(title=f"{name}, {'non-private' if eps is None else f'eps = {eps:g}'} (test acc {np.mean(clf.predict(Xte) == yte):.3f})",
               xlabel="x1 (min-max scaled)", ylabel="x2 (min-max scaled)")
        ax.legend(fontsize=7, loc="lower right")
fig.suptitle("Figure 5.1: classification regions, equilibrium points (stars) and support-function contours", y=1.0)
save(fig, "figure_5_1")

# %% [markdown]
# ## Figure 7.2: releasing equilibrium points, kNN inference
#
# Accuracy of the thesis's EP release with kNN against $k$ (mean $\pm$ standard error over the runs), on three moons and
# vowel, next to the support-function release ($k = 0$ in the table, dotted in the plot).  The thesis: "for vowel, an
# easy dataset, 1-NN and 3-NN show compatible results with the publishing support function.  It shows similar
# results to the method of publishing support function for three moons and vowel".  Read as equivalence within
# $\pm 0.05$ (two one-sided tests, 90% interval), per data set for 1-NN and 3-NN.

# %%
knn = knn.assign(k=knn.k.fillna(0).astype(int))
k_summary = E.summarise(knn[knn.dataset.isin(["three_moons", "vowel"])], ["dataset", "epsilon", "k"])
write_table(k_summary.assign(source="reproduced"), "figure_7_2", "park2022")
fig, axes = plt.subplots(1, 2, figsize=(12, 4.5), sharey=True)
for ax, name in zip(axes, ("three_moons", "vowel")):
    d = k_summary[k_summary.dataset == name]
    for eps in [e for e in d.epsilon.unique() if e in ("non-private", 1.0, 100.0) or e == min(EPS)]:
        g = d[(d.epsilon == eps) & (d.k > 0)]
        line = ax.errorbar(g.k, g.value, yerr=g.se, marker="o", capsize=3, label=f"EP release, eps = {eps}")
        sf = d[(d.epsilon == eps) & (d.k == 0)].value
        ax.axhline(float(sf.iloc[0]), ls=":", lw=1, color=line[0].get_color())
    ax.set(title=name, xlabel="k (neighbours in kNN)", ylabel="test accuracy")
    ax.legend(fontsize=7)
fig.suptitle(f"Figure 7.2: equilibrium-point release with kNN (dotted: support-function release); mean +- se over {P['runs']} runs", y=1.02)
save(fig, "figure_7_2")
k_summary.pivot_table(index=["dataset", "epsilon"], columns="k", values="value").round(3)

# %%
c72 = E.figure_7_2_claims(knn[knn.dataset.isin(["three_moons", "vowel"])])
for name, g in c72.groupby("dataset"):
    checks.record("Section 7.6 (Figure 7.2)", f"1-NN and 3-NN EP releases are similar to the support-function release on {name} "
                  f"(within {E.CLOSE_TOL:g}, mean over eps)", E.every(g, "unit"), kind="measured", bound=f"+-{E.CLOSE_TOL:g}",
                  id=f"fig-7-2-{name}", measured="; ".join(f"{r.k}-NN {r.diff:+.3f}" for r in g.itertuples()),
                  detail="Table 7.1's settings; ERRATA P16" if name == "vowel" else "Table 7.1's settings")
checks.show_new()
c72[["dataset", "k", "diff", "se", "n_runs", "status"]].round(4)

# %% [markdown]
# On vowel, Table 7.1's learning rate (0.1) collapses the dynamics (ERRATA P9) and the two releases part; with the
# author's code's lr = 0.001 the claim is tested again (same $\epsilon$, same runs):

# %%
v_lr = E.ep_release_effect("vowel", {"lr": 0.001}, [None] + EPS, range(P["runs"]), seed=seed, n_jobs=P["n_jobs"])
c72b = E.figure_7_2_claims(v_lr)
checks.record("Section 7.6 (Figure 7.2, vowel, lr = 0.001)", f"1-NN and 3-NN EP releases are similar to the support-function release "
              f"on vowel with the author's lr (within {E.CLOSE_TOL:g}, mean over eps)", E.every(c72b, "unit"), kind="consistency",
              bound=f"+-{E.CLOSE_TOL:g}", id="fig-7-2-vowel-lr", measured="; ".join(f"{r.k}-NN {r.diff:+.3f}" for r in c72b.itertuples()),
              detail="ERRATA P16; the author's lr, not Table 7.1's: a test of our explanation, a consistency row")
checks.show_new()
E.summarise(v_lr, ["epsilon", "k"]).pivot_table(index="epsilon", columns="k", values="value").round(3)

# %% [markdown]
# And with Table 7.1's lr under the scaling the reading rule chose on shuttle (ERRATA P7): is the parting of the two
# releases on vowel a property of min-max scaling?

# %%
v_std72 = E.ep_release_effect("vowel", {}, [None] + EPS, range(P["runs"]), seed=seed, n_jobs=P["n_jobs"], scaling=READING.scaling)
c72s = E.figure_7_2_claims(v_std72)
checks.record("Section 7.6 (Figure 7.2, vowel, chosen scaling)", f"1-NN and 3-NN EP releases are similar to the support-function release "
              f"on vowel under the chosen scaling (within {E.CLOSE_TOL:g}, mean over eps)", E.every(c72s, "unit"), kind="measured",
              bound=f"+-{E.CLOSE_TOL:g}", id="fig-7-2-vowel-chosen-scaling", measured="; ".join(f"{r.k}-NN {r.diff:+.3f}" for r in c72s.itertuples()),
              detail=f"Table 7.1's settings, {READING.label}; ERRATA P16")
checks.show_new()
E.summarise(v_std72, ["epsilon", "k"]).pivot_table(index="epsilon", columns="k", values="value").round(3)

# %% [markdown]
# ## Summary
#
# Every check (`paper_figures/park2022/checks.csv`) by kind and verdict (the same counts as the README and
# `paper_figures/totals.csv`), and every published number by class (the same as REPORT.md); violated rows are
# explained in `ERRATA.md`, unexplained numbers are listed in `paper_figures/REPORT.md` with the hypotheses tried.

# %%
checks.write(OUT)
print(checks.counts())
classes = pd.concat([cmp71, compare_table(t72), cmp73])["class"].str.replace(r" \(.*", "", regex=True).value_counts()
print(classes.to_string())
with pd.option_context("display.max_rows", None, "display.max_colwidth", 80):
    display(checks.frame()[["id", "claim", "kind", "bound", "measured", "status"]])
