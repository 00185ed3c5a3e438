# ---
# jupyter:
#   jupytext:
#     formats: ipynb,py:percent
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
# and 4.4, and, above all, states what each method releases and its total privacy cost.  The author's public
# code (GitHub JinseongP/DP-SVDD) is a second reading of the protocol; where it and the thesis differ we follow
# the thesis and say so.

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
from dpkernels.mechanisms.baselines import guarantees
from dpkernels.mechanisms.park import EquilibriumPointClassifier, PrivateSVDD, corollary_4_2_sensitivity
from dpkernels.report import Checks, output_dir, write_table

P = profiles.load("park2022", profile, sizes)
OUT = output_dir("park2022")
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
# 528-row training set.  Discrepancies: iris and wine have their dims and classes swapped in the table; iris
# (150 rows) and segment (2,310) are larger than the table's 100 and 1,540 rows; vowel has 9 acoustic features
# in our copy (the table: 10, presumably counting the speaker id).  Features are min-max scaled with the
# training part's range, as in the author's code (the thesis does not say); that range is itself computed from
# the private data and would have to be released with the model.

# %%
t71 = E.table_7_1(random_state=seed)
write_table(t71, "table_7_1", "park2022")
t71.pivot_table(index="dataset", columns=["column", "source"], values="value", aggfunc="first").reindex(E.DATASETS)

# %%
# NBVAL_CHECK_OUTPUT
flags = t71[(t71.source == "reproduced") & t71.note.fillna("").ne("")]
print(flags[["dataset", "column", "value", "note"]].to_string(index=False))

# %%
checks.add("Table 7.1", "data set sizes and shapes from the loaders against the published table", bound="8 data sets as printed",
           measured=f"{flags.dataset.nunique()} data sets differ", status="violated" if len(flags) else "holds",
           detail="; ".join(f"{r.dataset} {r.column} {r.value} ({r.note})" for _, r in flags.iterrows()))

# %% [markdown]
# Differences between the thesis and the author's code (the thesis is followed): the code scales the gradient
# of the dynamics by (1/d)/2 instead of the feature map's 1/sqrt(D) (equivalent to another learning rate), uses
# gamma = 10 for shuttle and lr = 0.001 for vowel (Table 7.1: 1 and 0.1), other hypercube sizes, a kNN (k = 1)
# inference for its reported numbers, and splits eps in half between the SVDD noise and the votes
# (Laplace(2/eps) per count).
#
# ## Algorithm 1: private SVDD (Corollary 4.2, Theorems 4.3 and 4.4)
#
# The SVDD dual over the capped simplex {0 <= beta <= C/n, sum beta = 1} is solved matrix-free through the
# feature matrix, certified by the Frank-Wolfe gap (cross-checked against cvxpy in the tests).  Noise:
# Laplace(2 C kappa sqrt(F) / (n eps)); the centre is then clipped to norm 1.
#
# Corollary 4.2 rests on Lemma 4.1 (Zhang's leave-one-out bound), stated for problems without the SVDD's
# equality constraint sum beta = 1.  We measure the sensitivity over random and adversarially searched
# neighbours (n = 40 in [0, 1]^2, F = 40, several boxes).

# %%
sens = E.sensitivity_experiment(P["sens_boxes"], n_random=P["sens_random"], n_adv=P["sens_adv"], maxiter=P["sens_maxiter"], random_state=seed)
sens

# %%
for box, g in sens.groupby("box"):
    r = g.loc[g.l2.idxmax()]
    checks.at_most("Corollary 4.2", f"max ||a_D - a_D'||_2 over random + adversarial neighbours, C/n = {box:g}", bound=r.bound_l2,
                   measured=r.l2, detail=f"{r.method}; ratio {r.ratio_l2:.3f}")
    checks.at_most("Corollary 4.2", f"max ||a_D - a_D'||_1, C/n = {box:g} (F = {int(r.F)})", bound=r.bound_l1, measured=float(g.l1.max()),
                   detail=f"ratio {float(g.l1.max()) / r.bound_l1:.3f}")

# %%
audit = E.svdd_audit(1.0, P["audit_releases"], n_adv=P["sens_adv"], maxiter=P["sens_maxiter"], random_state=seed)
checks.at_most("Theorem 4.3", "95% Clopper-Pearson lower bound on epsilon of Algorithm 1 on an adversarial neighbour (eps = 1)",
               bound=1.0, measured=audit["epsilon_lb"],
               detail=f"{audit['n_releases']} releases per database; this pair's exact privacy loss {audit['pair_epsilon']:.3f} "
               f"(pair L1 change {audit['pair_l1']:.3g} vs Corollary 4.2's {audit['bound_l1']:.3g})")
t44 = E.theorem_4_4_experiment([(0.5, 0.1), (1.0, 0.05), (2.0, 0.01)], draws=P["t44_draws"], random_state=seed)
for _, r in t44.iterrows():
    checks.at_most("Theorem 4.4", f"P(sup_x |f-hat - f| > nu), nu = {r.nu}, tau = {r.tau}, lambda = nu/(8 kappa (F + ln 1/tau))",
                   bound=r.tau, measured=r.p_hat, detail=f"{r.failures}/{r.draws}, CP upper {r.cp_high:.3g}; median sup / nu {r.median_sup_over_nu:.3g}")
pd.DataFrame([audit]), t44

# %%
Xn = E.split_scale(E.park_dataset("satimage"), seed)[0]
norms = []
for eps in (None, 0.1, 1.0, 100.0):
    m = PrivateSVDD(epsilon=eps, box=0.05, gamma=0.1, random_state=seed).fit(Xn)
    norms.append(np.linalg.norm(m.nonprivate_solution.coef))
    norms.append(np.linalg.norm(m.center_))
checks.at_most("Section 4.2 (||a|| <= kappa)", "max norm of the non-private and of the released (clipped) centres, satimage", bound=1.0,
               measured=float(max(norms)), detail=f"non-private ||a*|| = {norms[0]:.4f} (a convex combination of unit vectors)")

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
# With Table 7.1's learning rates and iteration counts (lr = 0.001, 10-20 iterations), the dynamics hardly move
# the training points, so the thesis's released equilibrium points are, up to the 0.05 merge grid, the training
# points themselves. Where the learning rate is 0.1 (wine, vowel) the points do travel to minima of the private
# support function; there the release still depends on the data without noise through which basins are occupied
# (and labelled). The table shows how far the training points move:

# %%
disp = pd.DataFrame([E.ep_displacement(name, seed) for name in P["displacement_datasets"]])
disp

# %%
checks.add("Section 5.2 (Phase II privacy)", "EPs reached from training points are private by parallel composition",
           bound="EPs independent of any single training point",
           measured=f"{int((disp['share_within_0.05'] >= 0.99).sum())} of {len(disp)} data sets: >= 99% of the training points "
           "move by <= 0.05", status="violated",
           detail="where the points stay put (" + ", ".join(disp.dataset[disp['share_within_0.05'] >= 0.99]) + ") a released EP "
           "is its starting row rounded to the merge grid; elsewhere (" + (", ".join(disp.dataset[disp['share_within_0.05'] < 0.99]) or "none")
           + ") which basins are occupied and labelled depends on the data without noise: not DP at any eps (ERRATA P3); "
           "the corrected variant starts from data-independent points")
checks.add("Eq. (5.5) (vote privacy)", "Laplace(1/eps) on each count gives eps-DP for the labels", bound="eps",
           measured="2 eps (replace-one)", status="violated",
           detail="a replaced row lowers one count and raises another (same or two basins); report-noisy-max with Laplace(1/eps) "
           "is eps-DP only for add/remove neighbours; the corrected variant adds Laplace(2/eps) to the full histogram")

# %% [markdown]
# ## Figure 7.1: test accuracy against eps on the 8 data sets
#
# 80/20 splits, runs as the profile says (the thesis: 5), eps in {0.01, 0.1, 1, 5, 10, 100} (quick: fewer); the thesis's
# per-component eps (left) and one total eps per method (right).  Non-private solutions are reused across eps.

# %%
EPS = P["epsilons"]
results = []
for name in E.DATASETS:
    results.append(E.evaluate(name, [None] + EPS, range(P["runs"]), shuttle_rows=P["shuttle_rows"], n_starts=P["n_starts"]))
res = pd.concat(results, ignore_index=True)
summary = res.groupby(["dataset", "method", "accounting", "epsilon"]).accuracy.agg(["mean", "std"]).reset_index()
write_table(summary.rename(columns={"mean": "value", "std": "std"}).assign(source="reproduced", n_runs=P["runs"]), "figure_7_1", "park2022")
summary.pivot_table(index=["dataset", "method", "accounting"], columns="epsilon", values="mean").round(3)

# %%
order = ["Proposed", "Proposed (corrected)", "SVM WEIGHT", "SVM SEMI", "SVM OUTPUT"]
for accounting in ("per-component", "total"):
    fig, axes = plt.subplots(2, 4, figsize=(18, 9), sharey=True, layout="constrained")
    for ax, name in zip(axes.ravel(), E.DATASETS):
        d = res[(res.dataset == name) & (res.accounting == accounting) & (res.epsilon != "non-private")].copy()
        d["epsilon"] = d.epsilon.astype(float)
        for method in order:
            g = d[d.method == method].groupby("epsilon").accuracy
            if g.size().empty:
                continue
            ax.errorbar(g.mean().index, g.mean(), yerr=g.std().fillna(0), marker="o", capsize=3, label=method)
        npv = res[(res.dataset == name) & (res.epsilon == "non-private") & (res.method == "Proposed")].accuracy.mean()
        ax.axhline(npv, color="k", ls=":", lw=1, label="Proposed, non-private")
        ax.set(xscale="log", title=name, xlabel="eps (log scale)", ylabel="test accuracy")
    axes[0, 0].legend(fontsize=7)
    fig.suptitle(f"Figure 7.1 ({accounting} epsilon{'; the thesis' if accounting == 'per-component' else '; one eps per method end to end'})")
    save(fig, "figure_7_1" if accounting == "per-component" else "figure_7_1_total_epsilon")

# %%
small = summary[(summary.accounting == "per-component") & summary.epsilon.isin([e for e in (0.01, 0.1) if e in EPS])]
best = small.loc[small.groupby(["dataset", "epsilon"])["mean"].idxmax()]
wins = int((best.method == "Proposed").sum())
checks.add("Section 7.4 (reading)", "the proposed method is the most accurate method at the smallest eps (per-component eps; SVM OUTPUT included)",
           bound=f"{len(best)} of {len(best)} (data set, eps)", measured=f"{wins} of {len(best)}",
           status="holds" if wins == len(best) else "violated",
           detail="; ".join(f"{r.dataset}@{r.epsilon}: {r.method} {r['mean']:.3f}" for _, r in best.iterrows()))
np_rows = summary[summary.epsilon == "non-private"].pivot_table(index="dataset", columns="method", values="mean")
np_rows

# %% [markdown]
# ## Table 7.2: training and inference time
#
# Training plus inference time of one run per method and data set (ours: one core per process, non-private
# solve included), next to the thesis's.  The target: every method trains on shuttle in under 10 s.

# %%
tim = res[(res.run == 0) & (res.epsilon == 1.0) & (res.accounting == "per-component")]
tim = tim.assign(total_s=tim.train_s + tim.infer_s)
rows = []
for method, pub in E.PUBLISHED_TABLE_7_2.items():
    for name, p in zip(E.DATASETS, pub):
        ours = tim[(tim.dataset == name) & (tim.method == method)].total_s
        rows.append({"method": method, "dataset": name, "source": "published", "value": p})
        if len(ours):
            rows.append({"method": method, "dataset": name, "source": "reproduced", "value": float(ours.iloc[0]),
                         "note": f"speed-up {p / float(ours.iloc[0]):.0f}x"})
t72 = pd.DataFrame(rows)
write_table(t72, "table_7_2", "park2022")
t72.pivot_table(index="method", columns=["dataset", "source"], values="value").round(2)

# %%
shuttle_train = tim[tim.dataset == "shuttle"].groupby("method").train_s.max()
checks.at_most("Table 7.2 (speed target)", "slowest method's training time on shuttle (s)", bound=10.0, measured=float(shuttle_train.max()),
               detail="; ".join(f"{k}: {v:.2f} s" for k, v in shuttle_train.items()) + f"; {int(tim[tim.dataset == 'shuttle'].n_train.iloc[0])} training rows")

# %% [markdown]
# ## Table 7.3: shuttle sub-sampled to 10% and 30%
#
# The whole shuttle set (58,000 rows) sub-sampled (seeded) to 10% and 30%, then the same protocol;
# per-component eps as in the thesis; mean and standard deviation over the runs.

# %%
t73_rows = []
for frac in P["t73_fractions"]:
    data = E.park_dataset("shuttle", seed, shuttle_rows=int(58000 * frac))
    df = E.evaluate("shuttle", E.TABLE_7_3_EPSILONS, range(P["t73_runs"]), methods=("Proposed", "SVM WEIGHT", "SVM SEMI", "SVM OUTPUT"),
                    data=data, n_starts=P["n_starts"])
    df = df[df.accounting == "per-component"]
    for (method, eps), g in df.groupby(["method", "epsilon"]):
        key = E.TABLE_7_3_EPSILONS.index(None if eps == "non-private" else eps)
        t73_rows.append({"sampling": frac, "method": method, "epsilon": eps, "source": "published", "value": E.PUBLISHED_TABLE_7_3[(frac, method)][key]})
        t73_rows.append({"sampling": frac, "method": method, "epsilon": eps, "source": "reproduced", "value": g.accuracy.mean(),
                         "std": g.accuracy.std(), "n_runs": len(g)})
t73 = pd.DataFrame(t73_rows)
write_table(t73, "table_7_3", "park2022")
t73.pivot_table(index=["sampling", "method"], columns=["epsilon", "source"], values="value").round(3)

# %%
rep73 = t73[t73.source == "reproduced"].set_index(["sampling", "method", "epsilon"]).value
pub73 = t73[t73.source == "published"].set_index(["sampling", "method", "epsilon"]).value
gap = (rep73 - pub73).abs()
np73 = gap[[e == "non-private" for e in gap.index.get_level_values(2)]]
checks.at_most("Table 7.3", "largest |reproduced - published| non-private accuracy (shuttle 10% / 30%)", bound=0.05, measured=float(np73.max()),
               detail="; ".join(f"{s} {m}: {v:.3f}" for (s, m, _), v in np73.items()))
order_small = [(rep73[(s, "Proposed", 0.01)] > max(rep73[(s, m, 0.01)] for m in ("SVM WEIGHT", "SVM SEMI"))) for s in P["t73_fractions"]]
checks.agrees("Table 7.3 (ordering)", "at eps = 0.01 the proposed method beats SVM WEIGHT and SVM SEMI", expected="every sampling ratio",
              measured=f"{sum(order_small)} of {len(order_small)}", ok=all(order_small), detail="the thesis's ordering at small eps")

# %% [markdown]
# Why the proposed method's non-private accuracy falls short of the thesis's on shuttle: the hypercube grouping of
# Eq. (5.6).  Table 7.1 prints r_max = 0.5 for shuttle; the author's code uses 0.1 (`round_sep`).  One majority
# vote per cube of side 0.5 in [0, 1]^9 merges basins of different classes; smaller cubes, or no grouping, recover
# the thesis's 0.987 (non-private, shuttle at the 10% sampling, the same runs as above).  Likewise Table 7.1's
# learning rate for vowel (0.1; the author's code: 0.001) sends every point into one basin, where the thesis calls
# vowel "an easy dataset" on which the proposed method beats SVM OUTPUT (Section 7.4).  Table 7.3 and Figure 7.1
# keep Table 7.1's values; ERRATA P8 and P9.

# %%
settings = pd.concat([
    E.setting_effect("shuttle", [{}, {"r_max": 0.1}, {"r_max": 0.25}, {"r_max": 1.0}, {"r_max": None}], range(P["t73_runs"]),
                     data=E.park_dataset("shuttle", seed, shuttle_rows=int(58000 * P["t73_fractions"][0]))),
    E.setting_effect("vowel", [{}, {"lr": 0.01}, {"lr": 0.001}, {"lr": 0.001, "r_max": None}], range(P["runs"])),
], ignore_index=True)
write_table(settings.rename(columns={"accuracy": "value"}).assign(source="reproduced"), "table_7_1_settings", "park2022")
settings_summary = settings.groupby(["dataset", "setting"], sort=False)[["accuracy", "n_cells"]].mean()
settings_summary

# %%
acc = settings_summary.accuracy
bar = summary[(summary.dataset == "vowel") & (summary.method == "SVM OUTPUT") & (summary.epsilon == "non-private")]["mean"].iloc[0]
checks.agrees("Table 7.1 / 7.3 (r_max)", "non-private proposed accuracy on shuttle 10% with r_max = 0.1 (the author's code) within "
              "0.02 of Table 7.3's 0.987", expected="within 0.02", measured=f"{acc['shuttle', 'r_max = 0.1']:.3f} (Table 7.1's "
              f"r_max = 0.5: {acc['shuttle', 'Table 7.1']:.3f})", ok=abs(acc["shuttle", "r_max = 0.1"] - 0.987) <= 0.02,
              detail="Table 7.1's r_max for shuttle, not the method, explains the non-private gap (ERRATA P8)")
checks.agrees("Table 7.1 (vowel lr)", "Table 7.1's lr = 0.1 makes vowel 'an easy dataset' (Section 7.4): non-private accuracy "
              "above SVM OUTPUT's", expected="above the best baseline", measured=f"{acc['vowel', 'Table 7.1']:.3f} in "
              f"{settings_summary.n_cells['vowel', 'Table 7.1']:.0f} cell(s); lr = 0.001 (the author's code): {acc['vowel', 'lr = 0.001']:.3f}",
              ok=bool(acc["vowel", "Table 7.1"] > bar), detail=f"bar: non-private SVM OUTPUT on vowel, {bar:.3f} (Figure 7.1 above); with "
              "lr = 0.1 the dynamics send every training point into one basin (ERRATA P9)")

# %% [markdown]
# ## Figure 5.1: decision regions, equilibrium points and contours
#
# Non-private and private (eps = 1 for the centre and the votes) on five gaussians and three moons, with
# Table 7.1's settings; EPs as stars, the support function's contours in red.

# %%
fig, axes = plt.subplots(2, 2, figsize=(12, 11))
for row, (name, data) in enumerate((("five_gaussians", make_five_gaussians(random_state=seed)), ("three_moons", make_three_moons(random_state=seed)))):
    Xtr, Xte, ytr, yte = E.split_scale(data, seed)
    s = E.SETTINGS[name]
    for col, eps in enumerate((None, 1.0)):
        clf = EquilibriumPointClassifier(epsilon_svdd=eps, epsilon_vote=eps, box=s.proposed[0], gamma=s.proposed[1], lr=s.lr, n_iter=s.n_iter,
                                         random_state=seed).fit(Xtr, ytr)
        g = np.linspace(-0.05, 1.05, 120)
        G = np.array(np.meshgrid(g, g)).reshape(2, -1).T
        ax = axes[row, col]
        ax.contourf(g, g, clf.predict(G).reshape(len(g), len(g)), alpha=0.25, cmap="tab10", levels=np.arange(-0.5, data.n_classes))
        ax.contour(g, g, clf.svdd_.support_function(G, clf.center_).reshape(len(g), len(g)), colors="red", linewidths=0.6, levels=8)
        ax.scatter(Xtr[:, 0], Xtr[:, 1], c=ytr, cmap="tab10", s=8, vmin=0, vmax=9)
        ax.scatter(clf.labelled_points_[:, 0], clf.labelled_points_[:, 1], marker="*", s=40, c="k", label="equilibrium points")
        ax.set(title=f"{name}, {'non-private' if eps is None else f'eps = {eps:g}'} (test acc {np.mean(clf.predict(Xte) == yte):.3f})",
               xlabel="x1 (min-max scaled)", ylabel="x2")
        ax.legend(fontsize=7, loc="lower right")
fig.suptitle("Figure 5.1: classification regions, equilibrium points (stars) and support-function contours", y=1.0)
save(fig, "figure_5_1")

# %% [markdown]
# ## Figure 7.2: releasing equilibrium points, kNN inference
#
# Accuracy of the EP release with kNN against k, on three moons and vowel, next to the support-function release.

# %%
knn_rows = []
for name in ("three_moons", "vowel"):
    df = E.evaluate(name, [None, 1.0, 10.0], range(P["runs"]), methods=("Proposed",), knn=(1, 3, 5, 7, 9))
    knn_rows.append(df)
knn = pd.concat(knn_rows, ignore_index=True)
knn["k"] = knn["k"].fillna(0).astype(int)
k_summary = knn.groupby(["dataset", "epsilon", "k"]).accuracy.mean().reset_index()
write_table(k_summary.rename(columns={"accuracy": "value"}).assign(source="reproduced"), "figure_7_2", "park2022")
fig, axes = plt.subplots(1, 2, figsize=(11, 4), sharey=True)
for ax, name in zip(axes, ("three_moons", "vowel")):
    for eps, g in k_summary[(k_summary.dataset == name) & (k_summary.k > 0)].groupby("epsilon"):
        ax.plot(g.k, g.accuracy, marker="o", label=f"EP release, eps = {eps}")
    sf = k_summary[(k_summary.dataset == name) & (k_summary.k == 0)]
    for _, r in sf.iterrows():
        ax.axhline(r.accuracy, ls=":", lw=1, color="grey")
    ax.set(title=name, xlabel="k (neighbours in kNN)", ylabel="test accuracy")
    ax.legend(fontsize=7)
fig.suptitle("Figure 7.2: equilibrium-point release with kNN (dotted: support-function release)", y=1.02)
save(fig, "figure_7_2")
k_summary.pivot_table(index=["dataset", "epsilon"], columns="k", values="accuracy").round(3)

# %% [markdown]
# ## Summary
#
# All checks (`paper_figures/park2022/checks.csv`); the violated ones are explained in `ERRATA.md`.

# %%
checks.write(OUT)
print(checks.summary())
checks.frame()[["claim", "check", "bound", "measured", "status"]]
