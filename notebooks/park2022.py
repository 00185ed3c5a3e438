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
# cost.  Every check prints its verdict right after it (claim, bound, measurement, verdict, and its *kind*:
# `measured` rows are the only confirmations; `analytic` rows compare formulas, `consistency` rows are true by
# construction, `target` rows are our own goals).  The author's public code (GitHub JinseongP/DP-SVDD) is a
# second reading of the protocol; where it and the thesis differ we follow the thesis and say so.

# %% tags=["parameters"]
profile = "quick"
seed = 2022
sizes = None

# %%
import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import seaborn as sns

from dpkernels import profiles
from dpkernels.datasets import make_five_gaussians, make_three_moons
from dpkernels.experiments import park2022 as E
from dpkernels.mechanisms import EquilibriumPointClassifier, PrivateSVDD
from dpkernels.report import Checks, compare_table, output_dir, stable_text, write_table
from dpkernels.verdicts import audit_detects, audit_refutes, compare, published_se

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


def status(verdict):
    """holds unless the measurement refutes the claim (confirmed and inconclusive both hold; the detail says which)."""
    return "violated" if verdict == "refuted" else "holds"


# %% [markdown]
# ## Table 7.1: data sets and hyperparameters
#
# The published sizes next to what the loaders give with an 80/20 split.  Shuttle is grouped into three
# classes (Rad.Flow, High, the rest) and sub-sampled (seeded) to the thesis's 30,450 rows; vowel is the
# 528-row training set with its 10 acoustic features (*The Elements of Statistical Learning*'s `vowel.train`;
# mlbench's copy lacks one of them).  Features are min-max scaled with the training part's range, as in the
# author's code (the thesis does not say); that range is itself computed from the private data and would have to
# be released with the model.

# %%
t71 = E.table_7_1(random_state=seed)
write_table(t71, "table_7_1", "park2022")
t71.pivot_table(index="dataset", columns=["column", "source"], values="value", aggfunc="first").reindex(E.DATASETS)

# %%
# NBVAL_CHECK_OUTPUT
flags = t71[(t71.source == "reproduced") & t71.note.fillna("").ne("")]
print(flags[["dataset", "column", "value", "note"]].to_string(index=False))

# %%
checks.add("Table 7.1", "data set sizes and shapes from the loaders against the published table", kind="measured",
           bound="8 data sets as printed", measured=f"{flags.dataset.nunique()} data sets differ", id="table-7-1",
           status="violated" if len(flags) else "holds",
           detail="; ".join(f"{r.dataset} {r.column} {r.value} ({r.note})" for _, r in flags.iterrows()))

# %% [markdown]
# Differences between the thesis and the author's code (the thesis is followed): the code scales the gradient
# of the dynamics by (1/d)/2 instead of the feature map's 1/sqrt(D) (equivalent to another learning rate), uses
# gamma = 10 for shuttle and lr = 0.001 for vowel (Table 7.1: 1 and 0.1), other hypercube sizes, a kNN (k = 1)
# inference for its reported numbers, and splits eps in half between the SVDD noise and the votes
# (Laplace(2/eps) per count).
#
# ## Algorithm 1: private SVDD
#
# Algorithm 1 defines the spectral density of the kernel as p(w) = 2^-1 int exp(-j<w, x>) g(x) dx (copied
# from Rubinstein et al.'s Algorithm 3).  For that p to be a probability density the constant must be
# (2 pi)^-d: the printed one gives the 1-d RBF kernel a density of total mass pi (quadrature below).  Our random
# features use the normalised law.

# %%
# NBVAL_CHECK_OUTPUT
mass = {"printed 2^-1": E.fourier_mass(paper=True), "(2 pi)^-1": E.fourier_mass(paper=False)}
print(stable_text(pd.Series(mass, name="total mass of p (1-d RBF)"), 6))

# %%
checks.agrees("Algorithm 1 (Fourier transform)", "total mass of the printed spectral density of the 1-d RBF kernel (quadrature)",
              kind="analytic", expected=1.0, measured=mass["printed 2^-1"], ok=abs(mass["printed 2^-1"] - 1.0) < 1e-6, id="p2",
              detail=f"(2 pi)^-d gives {mass['(2 pi)^-1']:.6f}; ERRATA P2 (as Rubinstein et al.'s R3)")

# %% [markdown]
# ### Corollary 4.2: sensitivity of the centre
#
# The SVDD dual over the capped simplex {0 <= beta <= C/n, sum beta = 1} is solved through the feature matrix
# and certified by its Frank-Wolfe gap (cross-checked against cvxpy in the tests).  Corollary 4.2 rests on
# Lemma 4.1 (Zhang's leave-one-out bound), stated for problems without the SVDD's equality constraint
# sum beta = 1 (ERRATA P6).  We measure the sensitivity over random and adversarially searched neighbours
# (n = 40 in [0, 1]^2, F = 40, several boxes).

# %%
sens = E.sensitivity_experiment(P["sens_boxes"], n_random=P["sens_random"], n_adv=P["sens_adv"], maxiter=P["sens_maxiter"],
                                random_state=seed, n_jobs=P["n_jobs"])
sens

# %%
for box, g in sens.groupby("box"):
    r = g.loc[g.l2.idxmax()]
    print(checks.at_most("Corollary 4.2", f"max ||a_D - a_D'||_2 over random + adversarial neighbours, C/n = {box:g}", kind="measured",
                         bound=r.bound_l2, measured=r.l2, detail=f"{r.method}; ratio {r.ratio_l2:.3f}", id=f"cor-4-2-l2-{box:g}"))
    print(checks.at_most("Corollary 4.2", f"max ||a_D - a_D'||_1, C/n = {box:g} (F = {int(r.F)})", kind="measured", bound=r.bound_l1,
                         measured=float(g.l1.max()), detail=f"ratio {float(g.l1.max()) / r.bound_l1:.3f}", id=f"cor-4-2-l1-{box:g}"))

# %% [markdown]
# ### Theorem 4.3: privacy audits of the released centre
#
# A neighbouring pair found by an adversarial search; the centre in F = 4 features (two frequencies), where the
# Laplace likelihood-ratio test reaches the pair's privacy loss with probability about 2^-F, so that the audit
# has power.  The release is the library's default (exact rounding of the Laplace mechanism to a grid).  The
# audit's 95% lower bound must stay below the claimed eps = 1 (and below the pair's exact loss, shown beside it);
# the negative control halves the noise on the same pair and must be caught above eps.  Then the floating-point
# attack (Mironov 2012): numpy's float64 Laplace sampler, the thesis's, can only produce doubles reachable from
# the centre it was given, which tells the neighbours apart whatever eps says; the grid release is reachable from
# neither.

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
print(checks.add("Theorem 4.3", "95% Clopper-Pearson lower bound on epsilon of Algorithm 1 (grid release) on an adversarial neighbour",
                 kind="measured", bound=1.0, measured=audit["epsilon_lb"], id="thm-4-3-audit",
                 status="violated" if audit_refutes(audit["epsilon_lb"], 1.0) else "holds",
                 detail=f"{audit['n_releases']} releases per data set; this pair's exact privacy loss {audit['pair_epsilon']:.3f} "
                 f"(pair L1 change {audit['pair_l1']:.3g} against Corollary 4.2's {audit['bound_l1']:.3g})"))
print(checks.add("Theorem 4.3 (negative control)", "the same audit with half the noise detects a loss above the claimed eps = 1",
                 kind="target", bound="> 1", measured=control["epsilon_lb"], id="thm-4-3-control",
                 status="holds" if audit_detects(control["epsilon_lb"], 1.0) else "violated",
                 detail=f"exact loss of the pair at half the noise {control['pair_epsilon']:.3f}: the audit has the power to "
                 "see a mechanism with too little noise"))
print(checks.add("Theorem 4.3 (floating point)", "Algorithm 1 with the thesis's float64 Laplace sampler is eps-DP: lower bound of the "
                 "floating-point attack", kind="measured", bound=1.0, measured=attack["continuous"]["epsilon_lb"], id="thm-4-3-float",
                 status="violated" if audit_refutes(attack["continuous"]["epsilon_lb"], 1.0) else "holds",
                 detail=f"{P['attack_releases']} releases per data set; the grid release gives {attack['lattice']['epsilon_lb']:.3f} "
                 "(ERRATA P11)"))
print(checks.add("Theorem 4.3 (grid release)", "the library's default release stays private against the floating-point attack",
                 kind="measured", bound=1.0, measured=attack["lattice"]["epsilon_lb"], id="thm-4-3-grid",
                 status="violated" if audit_refutes(attack["lattice"]["epsilon_lb"], 1.0) else "holds",
                 detail="outputs rounded to a grid are reachable from neither centre: the attack's statistic carries no information"))

# %% [markdown]
# ### Theorem 4.4: utility of the private support function
#
# With lambda = nu / (8 kappa (F + ln 1/tau)), P(sup_x |f-hat(x) - f(x)| > nu) <= tau.  Monte Carlo over draws of
# the noise; a claim of probability at most tau is refuted only when the Clopper-Pearson lower bound of the
# observed rate exceeds tau.

# %%
t44 = E.theorem_4_4_experiment([(0.5, 0.1), (1.0, 0.05), (2.0, 0.01)], draws=P["t44_draws"], random_state=seed)
for _, r in t44.iterrows():
    print(checks.add("Theorem 4.4", f"P(sup_x |f-hat - f| > nu), nu = {r.nu}, tau = {r.tau}, lambda = nu/(8 kappa (F + ln 1/tau))",
                     kind="measured", bound=r.tau, measured=r.p_hat, status="violated" if r.cp_low > r.tau else "holds",
                     detail=f"{int(r.failures)}/{int(r.draws)} failures, Clopper-Pearson [{r.cp_low:.3g}, {r.cp_high:.3g}]; median sup / nu "
                     f"{r.median_sup_over_nu:.3g} (the bound is loose)", id=f"thm-4-4-{r.nu:g}"))
t44

# %%
Xn = E.split_scale(E.park_dataset("satimage"), seed)[0]
a_star = PrivateSVDD(epsilon=None, box=0.05, gamma=0.1, keep_nonprivate=True, random_state=seed).fit(Xn).nonprivate_.coef
checks.at_most("Section 4.2 (||a|| <= kappa)", "norm of the non-private SVDD centre, satimage", kind="consistency", bound=1.0,
               measured=float(np.linalg.norm(a_star)), rtol=1e-12, id="a-norm",
               detail="a convex combination of unit vectors: true by construction (the released centre is clipped to 1)")

# %% [markdown]
# ## What each method releases, and its privacy
#
# | method | released | per-component eps (the thesis) | end to end, replace-one neighbours |
# |---|---|---|---|
# | Proposed (thesis) | noisy centre, frequencies, EPs reached **from the training points**, labels of occupied basins | eps (SVDD), Laplace(1/eps) votes | not DP: the EPs are computed from the training points without noise (below) |
# | Proposed (corrected) | noisy centre, frequencies, EPs from data-independent starts, labels of all basins | eps/2 + eps/2 | eps |
# | SVM WEIGHT | K noisy weight vectors, frequencies | eps per class | K eps |
# | SVM SEMI | K refitted weight vectors (needs the test set) | (eps, 1/n) per class | (K eps, K/n) |
# | SVM OUTPUT | noisy scores for each test point and class | eps per answer | m K eps (m test points) |
#
# The thesis compares the methods "under privacy budgets eps", but its eps is spent per component (ERRATA P5).
# For shuttle (K = 3 classes, m = 6,090 test points) at eps = 1:

# %%
# NBVAL_CHECK_OUTPUT
acct = E.accounting_table(3, 6090, 1.0)
print(stable_text(acct[["method", "per_component", "total_epsilon"]]))

# %%
checks.add("Section 7 (privacy budgets)", "the methods of Figure 7.1 and Table 7.3 are compared at one privacy budget eps (shuttle, eps = 1)",
           kind="analytic", bound="every method eps end to end", id="p5", status=E.equal_budget_status(acct, 1.0),
           measured="; ".join(f"{r.method} {r.total_epsilon:g}" for _, r in acct.iterrows()),
           detail="end-to-end epsilon by basic composition of the thesis's per-component budgets (ERRATA P5); the notebook reports "
           "both accountings")

# %% [markdown]
# ### Section 5.2: are the equilibrium points private?
#
# The thesis: Phase II is eps-DP "with the parallel composition of Properties 3 because every data point converges
# to an EP".  With Table 7.1's learning rates and iteration counts (lr = 0.001, 10-20 iterations) the dynamics
# hardly move the training points, so the released EPs are, up to the 0.05 merge grid, the training points:

# %%
disp = pd.DataFrame([E.ep_displacement(name, seed) for name in P["displacement_datasets"]])
write_table(disp.assign(source="reproduced", value=disp.median_move, se=0.0), "section_5_2_displacement", "park2022")
disp

# %% [markdown]
# The audit: D' replaces one training row of three moons by the point of the domain farthest from the data; each
# release draws a fresh private centre (eps = 1) and runs Phase II.  The event "an EP within 0.1 of the new row"
# happens in every release from D' and in none from D, which no eps-DP mechanism with eps = 1 allows; the corrected
# variant (dynamics from data-independent starts) shows no such separation.

# %%
ph2 = {v: E.phase2_audit(1.0, P["phase2_releases"], variant=v, seed=seed, n_jobs=P["n_jobs"]) for v in ("paper", "corrected")}
ph2_table = pd.DataFrame(ph2.values()).drop(columns="x_replacement")
write_table(ph2_table.assign(source="reproduced", value=ph2_table.epsilon_lb, se=0.0), "section_5_2_audit", "park2022")
ph2_table

# %%
r = ph2["paper"]
print(checks.add("Section 5.2 (Phase II privacy)", "the EPs reached from the training points are eps-DP (eps = 1): 95% lower bound of an "
                 "audit of the released EPs", kind="measured", bound=1.0, measured=r["epsilon_lb"], id="phase-2",
                 status="violated" if audit_refutes(r["epsilon_lb"], 1.0) else "holds",
                 detail=f"P(EP within 0.1 of the replaced row) = {r['p_event_Dprime']:.3f} from D', {r['p_event_D']:.3f} from D "
                 f"({r['n_releases']} releases each; the lower bound is limited by the number of releases); ERRATA P3"))
r = ph2["corrected"]
print(checks.add("Section 5.2 (corrected variant)", "the EPs from data-independent starts: 95% lower bound of the same audit", kind="measured",
                 bound=1.0, measured=r["epsilon_lb"], id="phase-2-corrected",
                 status="violated" if audit_refutes(r["epsilon_lb"], 1.0) else "holds",
                 detail=f"event probability {r['p_event_Dprime']:.3f} from D', {r['p_event_D']:.3f} from D; the EPs are post-processing "
                 "of the private centre"))

# %% [markdown]
# ### Eq. (5.5): the privacy of the votes
#
# Each basin's label is the noisy argmax of its class counts with Laplace(1/eps) per count, "as the sensitivity of
# the count is always 1".  Under the thesis's own definition (a sample is modified), a replaced row lowers one count
# and raises another.  The exact privacy loss of the released labels (the noisy-argmax probabilities by quadrature)
# on neighbouring data sets: iris with Table 7.1's settings, D' relabelling one row, every row and label tried.

# %%
votes = E.vote_privacy_experiment(1.0, "iris", seed=seed)
pd.DataFrame([votes])

# %%
print(checks.at_most("Eq. (5.5) (vote privacy)", "exact privacy loss of the labels with Laplace(1/eps) per count on neighbouring data "
                     "sets (iris, eps = 1)", kind="measured", bound=1.0, measured=votes["loss_paper"], rtol=1e-9, id="eq-5-5",
                     detail=f"worst pair: counts {votes['counts_d']} -> {votes['counts_dprime']} of one cell ({votes['pairs_tried']} "
                     "relabellings tried); report-noisy-max with Laplace(1/eps) is eps-DP for add/remove neighbours only (ERRATA P4)"))
print(checks.at_most("Eq. (5.5) (corrected)", "the same pair with Laplace(2/eps) per count (the corrected variant)", kind="measured",
                     bound=1.0, measured=votes["loss_corrected"], rtol=1e-9, id="eq-5-5-corrected",
                     detail="L1 sensitivity 2 of the histogram under replacement"))

# %% [markdown]
# ### Properties 1 and SVM SEMI: the Gaussian calibration
#
# The thesis's Gaussian mechanism, sigma = Delta sqrt(2 ln(1.25/delta)) / eps, is Dwork and Roth's calibration,
# proven for eps < 1 only; SVM SEMI uses it at every eps of Figure 7.1, with delta = 1/n.  The exact delta(eps)
# of the Gaussian mechanism (dp-accounting's privacy curve), for shuttle's delta = 1/24,360:

# %%
# NBVAL_CHECK_OUTPUT
cal = E.semi_calibration([0.01, 0.1, 1.0, 5.0, 10.0, 100.0], 1.0 / 24360)
write_table(cal.assign(source="reproduced", value=cal.exact_delta, se=0.0), "properties_1_gaussian", "park2022")
print(stable_text(cal.pivot_table(index="epsilon", columns="calibration", values="exact_delta").reset_index()))

# %%
cl = cal[cal.calibration == "classical"].set_index("epsilon").exact_delta
print(checks.at_most("Properties 1 (Gaussian mechanism)", "largest exact delta of the classical calibration over Figure 7.1's eps "
                     "(delta = 1/n, shuttle)", kind="analytic", bound=1.0 / 24360, measured=float(cl.max()), rtol=1e-6, id="gauss-classical",
                     detail="; ".join(f"eps {e:g}: {d:.3g}" for e, d in cl.items()) + "; SVM SEMI here uses the analytic calibration "
                     "(ERRATA P10)"))
an = cal[cal.calibration == "analytic"].exact_delta
print(checks.at_most("SVM SEMI (analytic calibration)", "largest exact delta of our calibration over the same eps", kind="consistency",
                     bound=1.0 / 24360, measured=float(an.max()), rtol=1e-6, id="gauss-analytic",
                     detail="dp-accounting's exact calibration: true by construction"))

# %% [markdown]
# SVM SEMI releases the weights that fit the noisy test predictions.  The thesis's choice w* + Phi_Z^+ mu (the
# smallest change of w*) keeps the part of w* outside the row space of the test features Phi_Z without noise; when
# there are fewer test points than features (iris: 30 < 400) that part is large.  We release Phi_Z^+ (f(Z) + mu),
# post-processing of the noisy predictions, which predicts identically on Z.

# %%
leak = E.semi_null_space(seed)
print(checks.at_most("Section 6.3 (SVM SEMI)", "share of ||w*|| released without noise by w* + Phi_Z^+ mu (iris, one class)",
                     kind="measured", bound=0.0, measured=leak["share"], id="semi-null", detail=f"{leak['m_test']} test points, "
                     f"rank of Phi_Z {leak['rank']} < F = {leak['F']}: ||(I - Phi^+ Phi) w*|| / ||w*||; ERRATA P12"))

# %% [markdown]
# ## Figure 7.1, Tables 7.2-7.3, Figure 7.2: the accuracy sweep
#
# 80/20 splits, runs as the profile says (the thesis: 5), eps in {0.01, 0.1, 1, 5, 10, 100} (quick: fewer).  One
# pool of (data set, run) tasks (two workers); each task solves the SVDD and the one-against-all SVMs once and
# draws every eps's noise from them.  Table 7.3 adds shuttle sub-sampled to 10% and 30%, with the thesis's
# method also run as the author's code does (eps/2 for the centre, Laplace(2/eps) votes, r_max = 0.1).  Figure
# 7.2's kNN release of the equilibrium points reuses the three-moons and vowel fits.

# %%
EPS = P["epsilons"]
tasks = []
for name in E.DATASETS:
    tasks += E.tasks_for(name, [None] + EPS, range(P["runs"]), shuttle_rows=P["shuttle_rows"], n_starts=P["n_starts"],
                         knn=(1, 3, 5, 7, 9) if name in ("three_moons", "vowel") else (), seed=seed, labels={"sampling": 0.0})
for frac in P["t73_fractions"]:
    tasks += E.tasks_for("shuttle", E.TABLE_7_3_EPSILONS, range(P["t73_runs"]), n_starts=P["n_starts"], seed=seed,
                         methods=("Proposed", E.AUTHOR_CODE, "SVM WEIGHT", "SVM SEMI", "SVM OUTPUT"),
                         data=E.park_dataset("shuttle", seed, shuttle_rows=int(E.SHUTTLE_ROWS * frac)), labels={"sampling": frac})
allres = E.sweep(tasks, n_jobs=P["n_jobs"], desc="Figure 7.1 / Table 7.3 runs")
res = allres[(allres.sampling == 0.0) & ~allres.method.str.contains("NN")].drop(columns="sampling")
knn = allres[(allres.sampling == 0.0) & allres.method.str.startswith("Proposed")].drop(columns="sampling")
res73 = allres[allres.sampling > 0]
print(f"{len(tasks)} tasks, {len(allres)} rows")

# %% [markdown]
# ### Figure 7.1
#
# Mean test accuracy with standard errors over the runs; the thesis's per-component eps (left) and one total eps
# per method (right).  The thesis gives Figure 7.1 as a plot only, so there is no published number to pair here.

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
        ax.set(xscale="log", title=name, xlabel="eps (log scale)", ylabel="test accuracy")
    axes[0, 0].legend(fontsize=7)
    fig.suptitle(f"Figure 7.1 ({accounting} epsilon{'; the thesis' if accounting == 'per-component' else '; one eps per method end to end'}); "
                 f"mean +- standard error over {P['runs']} runs")
    save(fig, "figure_7_1" if accounting == "per-component" else "figure_7_1_total_epsilon")

# %% [markdown]
# ### Section 7.4's claims, tested
#
# "In general, the proposed method shows higher accuracy than SVM WEIGHT and SVM SEMI in all datasets and shows
# almost close performance to SVM OUTPUT.  In Vowel and Segment datasets, the proposed method shows even better
# performance."  Per data set, the paired difference (same splits) of test accuracy, averaged over the private eps
# of the sweep (per-component, as in the thesis), with its standard error over the runs.  A claim of "higher" is
# refuted when the difference is more than 3 standard errors below zero, confirmed when more than 3 above; "almost
# close" is read as at most 0.05 below SVM OUTPUT.

# %%
c74 = E.section_7_4_claims(res)
c74.pivot_table(index="dataset", columns="claim", values="verdict", aggfunc="first")

# %%
for claim, g in c74.groupby("claim", sort=False):
    counts = g.verdict.value_counts()
    print(checks.add("Section 7.4", f"the proposed method (thesis) is {claim} on every data set (per-component eps, mean over eps)",
                     kind="measured", bound="no data set refutes it", id=f"sec-7-4-{g.id.iloc[0]}",
                     measured=f"{counts.get('refuted', 0)} refuted, {counts.get('confirmed', 0)} confirmed, {counts.get('inconclusive', 0)} "
                     f"inconclusive of {len(g)}", status="violated" if (g.verdict == "refuted").any() else "holds",
                     detail="; ".join(f"{r.dataset} {r['diff']:+.3f} (se {r.se:.3f})" for _, r in g.iterrows())))
c74.round(4)

# %% [markdown]
# ### Wine: accuracy that is not monotone in eps
#
# On wine the thesis's method is more accurate with moderate noise than without.  Wine's Table 7.1 setting
# (lr = 0.1 for 100 iterations, cubes of side r_max = 1) moves the training points far (median displacement in the
# table of Section 5.2) into very few cells, which cannot separate three classes; moderate noise adds local minima,
# hence more cells (a finer partition); very small eps swamps the votes, very large eps (little noise) leaves few
# cells again.  Accuracy and mean number of cells per eps, and the non-private method with the grouping removed or
# the author's smaller learning rate (the same splits):

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
print(checks.add("Figure 7.1 (wine, investigation)", "without the coarse grouping the non-private method is at least as accurate as the "
                 "best private eps: the non-monotone curve comes from the number of cells", kind="measured",
                 bound=f">= {peak.value:.3f} (eps = {peak.epsilon}, {peak.n_cells:.0f} cells)", id="wine-cells",
                 measured=f"{fine.value:.3f} (se {fine.se:.3f}, {fine.n_cells:.0f} cells)",
                 status="violated" if E.higher_verdict(fine.value - peak.value, float(np.hypot(fine.se, peak.se))) == "refuted" else "holds",
                 detail=f"Table 7.1's setting without noise: {nop.value:.3f} in {nop.n_cells:.1f} cells; with eps = {peak.epsilon}: "
                 f"{peak.value:.3f} in {peak.n_cells:.1f} cells (ERRATA P15)"))

# %% [markdown]
# ## Table 7.2: training and inference time
#
# Training plus inference time per method and data set (mean over the runs; per-component eps = 1; non-private
# solves included; two workers share two cores), next to the thesis's, which come from another machine and
# implementation (ERRATA P13).  Timings here come from a busy sweep; speed is measured on its own in
# `benchmarks/bench_park2022.py` (`benchmarks/results/park2022.json`).

# %%
t72 = E.table_7_2(res)
write_table(t72, "table_7_2", "park2022")
t72.pivot_table(index="method", columns=["dataset", "source"], values="value").round(2)

# %% [markdown]
# ## Table 7.3: shuttle sub-sampled to 10% and 30%
#
# The whole shuttle set (58,000 rows) sub-sampled (seeded) to 10% and 30%, then the same protocol, per-component
# eps as in the thesis.  Each published number (the mean of the thesis's 5 runs; its standard error assumed to be
# our per-run sd / sqrt(5)) against ours, through the standard error of the difference: z and a class.  A
# difference is "explained" only where a measurement supports the explanation: P14 when the author's-code variant
# of the method reproduces the number, P7 when an SVM baseline's reproduction sits at its own non-private level.

# %%
t73 = E.table_7_3(res73)
write_table(t73, "table_7_3", "park2022")
cmp73 = compare_table(t73)
cmp73

# %%
t73[t73.method != E.AUTHOR_CODE].pivot_table(index=["sampling", "method"], columns=["epsilon", "source"], values="value").round(3)

# %%
n_cls = cmp73["class"].str.replace(r" \(.*", "", regex=True).value_counts()
print(checks.add("Table 7.3", "published accuracies reproduced (|z| <= 3, thesis's 5 runs against ours)", kind="measured",
                 bound=f"{len(cmp73)} of {len(cmp73)}", measured=f"{int((cmp73['class'] == 'agrees').sum())} of {len(cmp73)}", id="table-7-3",
                 status="holds" if (cmp73["class"] == "agrees").all() else "violated",
                 detail="; ".join(f"{k}: {v}" for k, v in n_cls.items()) + "; differences explained by ERRATA P7 / P14 where a measurement "
                 "supports it, the rest listed as unexplained in REPORT.md"))

# %%
small = E.paired_difference(res73.rename(columns={"sampling": "frac"}), "Proposed", "SVM WEIGHT", ["frac"], epsilons=[0.01])
small_semi = E.paired_difference(res73.rename(columns={"sampling": "frac"}), "Proposed", "SVM SEMI", ["frac"], epsilons=[0.01])
order_small = pd.concat([small, small_semi], ignore_index=True).assign(verdict=lambda d: [E.higher_verdict(a, b) for a, b in zip(d["diff"], d.se)])
print(checks.add("Section 7.5 (Table 7.3 ordering)", "at eps = 0.01 the proposed method is more accurate than SVM WEIGHT and SVM SEMI "
                 "(paired over runs)", kind="measured", bound="no comparison refuted", id="table-7-3-order",
                 measured=f"{int((order_small.verdict == 'confirmed').sum())} confirmed, {int((order_small.verdict == 'refuted').sum())} refuted "
                 f"of {len(order_small)}", status="violated" if (order_small.verdict == "refuted").any() else "holds",
                 detail="; ".join(f"{r.comparison} at {r.frac:g}: {r['diff']:+.3f} (se {r.se:.3f})" for _, r in order_small.iterrows())))
order_small

# %% [markdown]
# Why the thesis's private numbers for the proposed method are lower than ours at small eps: its author's code
# (the second reading of the protocol) spends eps/2 on the centre and Laplace(2/eps) on the votes, and groups the
# shuttle EPs in cubes of side 0.1 instead of Table 7.1's 0.5; smaller cubes hold fewer votes each, which the noise
# of small eps swamps.  The author's-code variant is beside the thesis's numbers in the table above (P14 marks the
# numbers it reproduces).
#
# Why the proposed method's non-private accuracy falls short of the thesis's: the hypercube grouping of Eq. (5.6).
# Table 7.1 prints r_max = 0.5 for shuttle; the author's code uses 0.1 (`round_sep`).  Likewise Table 7.1's
# learning rate for vowel (0.1; the author's code: 0.001).  Table 7.3 and Figure 7.1 keep Table 7.1's values;
# ERRATA P8 and P9; non-private accuracy, the same splits:

# %%
settings = pd.concat([
    *[E.setting_effect("shuttle", [{}, {"r_max": 0.1}, {"r_max": 0.25}, {"r_max": 1.0}, {"r_max": None}], range(P["t73_runs"]),
                       data=E.park_dataset("shuttle", seed, shuttle_rows=int(E.SHUTTLE_ROWS * frac)), n_jobs=P["n_jobs"]).assign(sampling=frac)
      for frac in P["t73_fractions"]],
    E.setting_effect("vowel", [{}, {"lr": 0.01}, {"lr": 0.001}, {"lr": 0.001, "r_max": None}], range(P["runs"]), n_jobs=P["n_jobs"]),
], ignore_index=True)
settings["sampling"] = settings.sampling.fillna(1.0)
set_summary = E.summarise(settings, ["dataset", "sampling", "setting"])
set_summary = set_summary.merge(settings.groupby(["dataset", "sampling", "setting"], sort=False).n_cells.mean().reset_index(),
                                on=["dataset", "sampling", "setting"])
write_table(set_summary.assign(source="reproduced"), "table_7_1_settings", "park2022")
set_summary

# %%
acc = set_summary.set_index(["dataset", "sampling", "setting"])
zs = {}
for frac in P["t73_fractions"]:
    r05, pub = acc.loc[("shuttle", frac, "Table 7.1")], E.PUBLISHED_TABLE_7_3[(frac, "Proposed")][-1]
    zs[frac] = compare(pub, r05.value, r05.se, published_se(r05.sd, E.THESIS_RUNS)).z
print(checks.add("Table 7.1 / 7.3 (r_max)", "Table 7.1's r_max = 0.5 gives Table 7.3's non-private accuracy of the proposed method (|z| <= 3)",
                 kind="measured", bound="|z| <= 3 at every sampling", id="rmax", status="violated" if max(map(abs, zs.values())) > 3 else "holds",
                 measured="; ".join(f"{f:g}: {acc.loc[('shuttle', f, 'Table 7.1')].value:.3f} (z = {z:.1f})" for f, z in zs.items()),
                 detail="; ".join(f"{f:g}: published {E.PUBLISHED_TABLE_7_3[(f, 'Proposed')][-1]}, r_max = 0.1 (the author's code) "
                                  f"{acc.loc[('shuttle', f, 'r_max = 0.1')].value:.3f}" for f in zs) + "; ERRATA P8"))
bar = fig71[(fig71.dataset == "vowel") & (fig71.method == "SVM OUTPUT") & (fig71.epsilon == "non-private")].iloc[0]
v = acc.loc[("vowel", 1.0, "Table 7.1")]
print(checks.add("Table 7.1 (vowel lr)", "Table 7.1's lr = 0.1 makes vowel 'an easy dataset' (Section 7.4): non-private accuracy above "
                 "SVM OUTPUT's", kind="measured", bound=f"> {bar.value:.3f}", measured=f"{v.value:.3f} (se {v.se:.3f}) in {v.n_cells:.0f} cell(s)",
                 id="vowel-lr", status="violated" if E.higher_verdict(v.value - bar.value, float(np.hypot(v.se, bar.se))) == "refuted" else "holds",
                 detail=f"lr = 0.001 (the author's code): {acc.loc[('vowel', 1.0, 'lr = 0.001')].value:.3f}; SVM OUTPUT non-private "
                 f"{bar.value:.3f} (se {bar.se:.3f}); ERRATA P9"))

# %% [markdown]
# ## Figure 5.1: decision regions, equilibrium points and contours
#
# The thesis's variant, non-private and private (eps = 1 for the centre and the votes), on five gaussians and three
# moons with Table 7.1's settings; EPs as stars, the private support function's contours in red.

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
                                             gamma=s.proposed[1], lr=s.lr, n_iter=s.n_iter, variant="paper", random_state=seed).fit(Xtr, ytr)
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
# Accuracy of the thesis's EP release with kNN against k (mean +- standard error over the runs), on three moons and
# vowel, next to the support-function release (k = 0 in the table, dotted in the plot).  The thesis: "for vowel, an
# easy dataset, 1-NN and 3-NN show compatible results with the publishing support function.  It shows similar
# results to the method of publishing support function for three moons and vowel".

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
    print(checks.add("Section 7.6 (Figure 7.2)", f"1-NN and 3-NN EP releases are similar to the support-function release on {name} "
                     f"(|difference| <= {E.CLOSE_TOL:g}, mean over eps)", kind="measured", bound=E.CLOSE_TOL, id=f"fig-7-2-{name}",
                     measured="; ".join(f"{r.k}-NN {r['diff']:+.3f} (se {r.se:.3f}): {r.verdict}" for _, r in g.iterrows()),
                     status="violated" if (g.verdict == "refuted").any() else "holds",
                     detail="Table 7.1's settings; ERRATA P16" if name == "vowel" else "Table 7.1's settings"))
c72.round(4)

# %% [markdown]
# On vowel, Table 7.1's learning rate (0.1) collapses the dynamics (ERRATA P9) and the two releases part; with the
# author's code's lr = 0.001 the claim is tested again (same eps, same runs):

# %%
v_lr = E.ep_release_effect("vowel", {"lr": 0.001}, [None] + EPS, range(P["runs"]), seed=seed, n_jobs=P["n_jobs"])
c72b = E.figure_7_2_claims(v_lr)
print(checks.add("Section 7.6 (Figure 7.2, vowel, lr = 0.001)", f"1-NN and 3-NN EP releases are similar to the support-function "
                 f"release on vowel with the author's lr (|difference| <= {E.CLOSE_TOL:g}, mean over eps)", kind="measured",
                 bound=E.CLOSE_TOL, id="fig-7-2-vowel-lr",
                 measured="; ".join(f"{r.k}-NN {r['diff']:+.3f} (se {r.se:.3f}): {r.verdict}" for _, r in c72b.iterrows()),
                 status="violated" if (c72b.verdict == "refuted").any() else "holds", detail="ERRATA P16"))
E.summarise(v_lr, ["epsilon", "k"]).pivot_table(index="epsilon", columns="k", values="value").round(3)

# %% [markdown]
# ## Summary
#
# Every check (`paper_figures/park2022/checks.csv`), with its kind; violated rows are explained in `ERRATA.md`.

# %%
checks.write(OUT)
print(checks.summary())
with pd.option_context("display.max_rows", None, "display.max_colwidth", 80):
    display(checks.frame()[["id", "claim", "kind", "bound", "measured", "status"]])
