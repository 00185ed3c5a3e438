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
# # Chaudhuri, Monteleoni and Sarwate (2011): differentially private ERM
#
# *Differentially Private Empirical Risk Minimization*, JMLR 12:1069-1109, 2011 (JMLR numbering
# throughout; our copy of the paper lost its formulas, which `../shared/papers/chaudhuri2011-formulas.md`
# restores; they are checked numerically here like everything else).
#
# Two mechanisms for regularised ERM, J(f, D) = (1/n) sum_i l(y_i f'x_i) + (Lambda/2)||f||^2 with ||x_i|| <= 1:
# **output perturbation** (Algorithm 1, add noise with density ~ exp(-beta ||b||) to the minimiser) and
# **objective perturbation** (Algorithm 2, add b'f/n to the objective), random features for kernels
# (Algorithm 3) and private tuning (Algorithm 4).  This notebook regenerates Tables 1-2 and Figures 2-5
# next to the published values, turns the theorems into calculators (`dpkernels.bounds.chaudhuri`), checks
# them by simulation, audits both algorithms statistically, and compares our objective perturbation with
# IBM's diffprivlib, which implements Algorithm 2 for logistic regression, holding diffprivlib's release
# to the same standard.

# %% tags=["parameters"]
profile = "quick"
seed = 2011
sizes = None

# %%
import math
import warnings

import matplotlib.pyplot as plt
from matplotlib.ticker import FuncFormatter
import numpy as np
import pandas as pd
import seaborn as sns

from dpkernels import profiles
from dpkernels.bounds import chaudhuri as B
from dpkernels.datasets import DatasetUnavailable
from dpkernels.experiments import chaudhuri2011 as E
from dpkernels.losses import make_loss
from dpkernels.mechanisms import ObjectivePerturbation, OutputPerturbation
from dpkernels.report import Checks, output_dir, write_table

P = profiles.load("chaudhuri2011", profile, sizes)
OUT = output_dir("chaudhuri2011")
checks = Checks("chaudhuri2011")
sns.set_theme(style="whitegrid", context="notebook")
pd.set_option("display.width", 160)
pd.set_option("display.max_columns", 24)
pd.set_option("display.precision", 4)
LOSSES = ("logistic", "huber")  # the paper's "LR" and "SVM" (Huber loss, h = 0.5)
print(f"profile={profile}, seed={seed}, output={OUT.name}/")


def save(fig, name):
    fig.savefig(OUT / f"{name}.png", dpi=130, bbox_inches="tight")
    plt.show()


# %% [markdown]
# ## Data (Section 7.1)
#
# Adult: rows with a missing value dropped, categoricals one-hot with the vocabularies of `adult.names`
# (105 columns, as in the paper), columns scaled to maximum 1, rows projected onto the unit ball.
# KDDCup99: the 10 percent file (the full 5 million-row file is not available), a seeded 70,000-row
# subset, the paper's task (denial-of-service attack or not; +1 = not DoS), 118 columns (the paper: 119).

# %%
adult = E.chaudhuri_data("adult")
try:
    kdd = E.chaudhuri_data("kddcup99", random_state=seed)
    kdd_reason = ""
except DatasetUnavailable as exc:
    kdd, kdd_reason = None, str(exc)
print(f"adult: {adult.X.shape}, positive fraction {np.mean(adult.y == 1):.4f}")
print(f"kddcup99: {kdd.X.shape}, positive fraction {np.mean(kdd.y == 1):.4f}" if kdd is not None else f"kddcup99 unavailable: {kdd_reason}")

# %%
# NBVAL_CHECK_OUTPUT
print("adult shape", adult.X.shape, "max row norm <= 1:", bool(np.linalg.norm(adult.X, axis=1).max() <= 1 + 1e-12))
print("dropped for missing values:", adult.meta["rows_dropped_missing"], "(paper: 45,220 rows remain; here 45,222)")

# %% [markdown]
# ## Algorithms 1 and 2, their calibration (Theorems 6 and 9, Corollaries 8, 11-13)
#
# Output perturbation draws ||b|| ~ Gamma(d, 2/(n Lambda eps_p)) (Corollary 8's sensitivity 2/(n Lambda));
# objective perturbation spends eps_p - eps' = 2 log(1 + c/(n Lambda)) on the Jacobian and eps' on the noise
# (beta = eps'/2), or, when that leaves nothing (eps' <= 0), regularises more (Delta) and takes
# eps' = eps_p/2.  The second branch's effective regulariser c / (n (e^{eps_p/4} - 1)) does not depend on
# Lambda.  Every estimator states its guarantee:

# %%
n_adult = 40698  # training-fold size of 10-fold cross-validation on 45,222 rows
for loss in LOSSES:
    c = make_loss(loss).curvature
    print(f"{loss}: c = {c}; Delta > 0 branch for Lambda < {B.delta_branch_threshold(0.1, n_adult, c):.3g} at eps_p = 0.1")
demo = ObjectivePerturbation(epsilon=0.1, Lambda=10**-2.5, loss="logistic", random_state=seed).fit(adult.X[:n_adult], adult.y[:n_adult])
print(demo.guarantee_)

# %%
# NBVAL_CHECK_OUTPUT
rows = []
for e in E.LAMBDA_EXPONENTS["adult"]:
    for loss in LOSSES:
        p = B.theorem_9_parameters(0.1, n_adult, 10.0**e, make_loss(loss).curvature)
        rows.append({"loss": loss, "log10_Lambda": e, "branch": p.branch, "eps_prime": round(p.epsilon_prime, 6),
                     "Lambda_plus_Delta": float(f"{10.0**e + p.Delta:.6g}")})
print(pd.DataFrame(rows).to_string(index=False))

# %% [markdown]
# ### Corollary 8: the sensitivity, measured
#
# max ||f*(D) - f*(D')||_2 over random and adversarially searched neighbours (d = 2, n = 30, rows in the
# unit ball) for each loss, against 2/(n Lambda).

# %%
sens = E.sensitivity_experiment(["logistic", "huber", "smoothed_hinge"], [0.01, 0.1], n_random=P["sens_random"],
                                n_adv=P["sens_adv"], maxiter=P["sens_maxiter"], random_state=seed)
worst = sens.loc[sens.groupby(["loss", "Lambda"])["l2"].idxmax()]
worst

# %%
for _, r in worst.iterrows():
    checks.at_most("Corollary 8", f"max ||f*(D) - f*(D')||_2, {r.loss}, Lambda = {r.Lambda:g}, n = {r.n}", bound=r.bound,
                   measured=r.l2, detail=f"{r.method}; ratio {r.ratio:.3f}")

# %% [markdown]
# ### The noise sampler (Eq. 4)
#
# The density exp(-beta ||b||) is radially symmetric, so ||b|| ~ Gamma(d, 1/beta) with a uniform, independent
# direction.  Kolmogorov-Smirnov tests of the norm and of the first coordinate of the direction
# ((u_1 + 1)/2 ~ Beta((d-1)/2, (d-1)/2)), and the rank correlation of norm and direction.

# %%
sampler = E.noise_sampler_tests([1, 2, 10, 105], beta=0.05, draws=P["sampler_draws"], random_state=seed)
sampler

# %%
for _, r in sampler.iterrows():
    ok = r.p_norm_gamma > 1e-3 and (r.d == 1 or r.p_direction_uniform > 1e-3)
    checks.agrees("Eq. (4)", f"sampler for density ~ exp(-beta ||b||), d = {int(r.d)}: KS p-values (norm; direction)",
                  expected="both > 1e-3", measured=f"{r.p_norm_gamma:.3g}; {r.p_direction_uniform:.3g}", ok=ok,
                  detail=f"{int(r.draws)} draws; Spearman(norm, u_1) = {r.spearman_norm_direction:.3f}")

# %% [markdown]
# ## Tables 1 and 2: error against Lambda at eps_p = 0.1
#
# Each entry: 10-fold cross-validation (the quick profile runs fewer folds), non-private error per fold,
# private errors over folds x noise runs.  Noise draws share their random numbers across Lambda, so in
# Algorithm 2's Delta > 0 branch the entries are identical, as in the published tables.

# %%
Lambdas = {name: [10.0**e for e in E.LAMBDA_EXPONENTS[name]] for name in ("adult", "kddcup99")}
tables = {}
for name, data in (("adult", adult), ("kddcup99", kdd)):
    if data is None:
        continue
    tables[name] = E.error_grid(data, Lambdas[name], LOSSES, [0.1], n_folds=10, n_runs=P["table_runs"],
                                folds_used=P["table_folds"], random_state=seed, n_jobs=P["n_jobs"])

summaries = {}
for name, df in tables.items():
    df = df.assign(log10_Lambda=np.round(np.log10(df.Lambda), 2))
    s = df.groupby(["loss", "method", "log10_Lambda"]).error.agg(value="mean", std="std", n_runs="count").reset_index()
    summaries[name] = s
    pub = E.published_table_frame(name)
    rep = s.assign(source="reproduced")
    write_table(pd.concat([pub, rep], ignore_index=True), "table_1" if name == "adult" else "table_2", "chaudhuri2011")
if "kddcup99" not in summaries:  # KDDCup99 unavailable: the published values alone
    write_table(E.published_table_frame("kddcup99"), "table_2", "chaudhuri2011")
summaries["adult"].pivot_table(index=["loss", "method"], columns="log10_Lambda", values="value")

# %%
for name, label in (("adult", "Table 1"), ("kddcup99", "Table 2")):
    if name not in tables:
        checks.skip(label, "test error against Lambda at eps_p = 0.1 (KDDCup99 70,000-row subset)", kdd_reason)
        continue
    df = tables[name].assign(log10_Lambda=np.round(np.log10(tables[name].Lambda), 2))
    n_ok, n_all, worst_gap = 0, 0, []
    for (loss, method), values in E.PUBLISHED_TABLES[name].items():
        for e, pub in zip(E.LAMBDA_EXPONENTS[name], values):
            errs = df[(df.loss == loss) & (df.method == method) & (df.log10_Lambda == round(e, 2))].error
            ok, lo, hi = E.within_spread(pub, errs)
            n_ok += ok
            n_all += 1
            worst_gap.append((abs(errs.mean() - pub), loss, method, e, pub, errs.mean()))
    gap = max(worst_gap)
    checks.add(label, "published entries inside the central 95% of the reproduced runs (or the fold range)",
               bound=n_all, measured=n_ok, status="holds" if n_ok == n_all else "violated",
               detail=f"largest |mean - published| = {gap[0]:.4f} ({gap[1]} {gap[2]}, Lambda = 1e{gap[3]}: published {gap[4]}, "
               f"reproduced {gap[5]:.4f}); {P['table_folds']} of 10 folds x {P['table_runs']} runs")

# %% [markdown]
# ### The Delta > 0 branch and the published anomalies
#
# In the second branch all Lambda below the threshold give the same effective regulariser and the same
# noise law, hence (with the same noise draws) the same errors: the repeated 0.8248 (Adult LR) and
# 0.2585 / 0.0191 / 0.2084 entries.  KDDCup99's isolated 0.1827 (Huber, Lambda = 10^-3.5) sits just above the
# threshold, where eps' = eps_p - 2 log(1 + c/(n Lambda)) is almost 0 and beta = eps'/2 makes the noise enormous.

# %%
branch_rows = []
for name in tables:
    n_tr = int(tables[name].n_train.iloc[0])
    for loss in LOSSES:
        c = make_loss(loss).curvature
        for e in E.LAMBDA_EXPONENTS[name]:
            p = B.theorem_9_parameters(0.1, n_tr, 10.0**e, c)
            errs = tables[name][(tables[name].loss == loss) & (tables[name].method == "objective") & np.isclose(tables[name].Lambda, 10.0**e)].error
            branch_rows.append({"data": name, "loss": loss, "log10_Lambda": e, "branch": p.branch, "eps_prime": p.epsilon_prime,
                                "reproduced": errs.mean(), "published": E.PUBLISHED_TABLES[name][(loss, "objective")][E.LAMBDA_EXPONENTS[name].index(e)]})
branches = pd.DataFrame(branch_rows)
branches

# %%
for (name, loss), g in branches.groupby(["data", "loss"]):
    d_branch = g[g.branch == "Delta > 0"]
    if len(d_branch) >= 2:
        errs = tables[name][(tables[name].loss == loss) & (tables[name].method == "objective")]
        by_lambda = [errs[np.isclose(errs.Lambda, 10.0**e)].error.to_numpy() for e in d_branch.log10_Lambda]
        same = all(np.array_equal(by_lambda[0], v) for v in by_lambda[1:])
        checks.agrees("Algorithm 2 (Delta > 0 branch)", f"{name} {loss}: identical errors for every Lambda below the threshold "
                      f"({', '.join(f'1e{e:g}' for e in d_branch.log10_Lambda)})", expected="identical (same noise draws)",
                      measured="identical" if same else "differ", ok=same,
                      detail=f"published {d_branch.published.iloc[0]}, reproduced {d_branch.reproduced.iloc[0]:.4f}")
if "kddcup99" in tables:
    spike = branches[(branches.data == "kddcup99") & (branches.loss == "huber") & (branches.log10_Lambda == -3.5)].iloc[0]
    near = branches[(branches.data == "kddcup99") & (branches.loss == "huber") & (branches.log10_Lambda.isin([-5, -3]))]
    checks.add("Table 2 (0.1827 anomaly)", "KDD Huber objective at Lambda = 1e-3.5: eps' and the error spike against its neighbours",
               bound=f"eps' ~ 0.002 (published error 0.1827)", measured=f"eps' = {spike.eps_prime:.4f}, error {spike.reproduced:.4f}",
               status="holds" if spike.eps_prime < 0.01 and spike.reproduced > near.reproduced.max() else "violated",
               detail=f"neighbours 1e-5 / 1e-3: {near.reproduced.round(4).tolist()}")
adult_lr = branches[(branches.data == "adult") & (branches.loss == "logistic") & (branches.branch == "Delta > 0")]
checks.add("Table 1 (0.8248 anomaly)", "Adult LR objective in the Delta > 0 branch (Lambda <= 1e-4): error level",
           bound=0.8248, measured=round(float(adult_lr.reproduced.mean()), 4),
           status="holds" if abs(adult_lr.reproduced.mean() - 0.8248) < 0.05 else "violated",
           detail="identical across Lambda as published, but at a different level: an error above 0.5 means the classifier is "
           "anti-correlated with the labels, which a noise vector with a symmetric law cannot produce on average (ERRATA)")

# %% [markdown]
# ## Figures 2 and 3: error against eps_p
#
# Lambda fixed per curve at the value the tables mark in bold, as the paper does.

# %%
eps_grid = P["figure_epsilons"]
curves = {}
for name, data in (("adult", adult), ("kddcup99", kdd)):
    if data is None:
        continue
    parts = []
    for (loss, method), e in E.CHOSEN_LAMBDA[name].items():
        if method == "non-private":
            continue
        df = E.error_grid(data, [10.0**e], [loss], eps_grid, n_folds=10, n_runs=P["figure_runs"], methods=(method,),
                          folds_used=P["figure_folds"], random_state=seed, n_jobs=P["n_jobs"])
        parts.append(df)
    np_rows = E.error_grid(data, [10.0**E.CHOSEN_LAMBDA[name][("logistic", "non-private")]], ["logistic"], [0.1], n_folds=10,
                           n_runs=1, methods=("non-private",), folds_used=P["figure_folds"], random_state=seed)
    np_rows_h = E.error_grid(data, [10.0**E.CHOSEN_LAMBDA[name][("huber", "non-private")]], ["huber"], [0.1], n_folds=10,
                             n_runs=1, methods=("non-private",), folds_used=P["figure_folds"], random_state=seed)
    curves[name] = pd.concat(parts + [np_rows, np_rows_h], ignore_index=True)

for name, fig_no in (("adult", 2), ("kddcup99", 3)):
    pub_rows = [{"loss": loss, "method": method, "epsilon": eps, "source": "published", "value": v}
                for (loss, method), pts in E.PUBLISHED_FIGURES_2_3[name].items() for eps, v in pts.items()]
    frame = pd.DataFrame(pub_rows)
    if name in curves:
        c = curves[name]
        rep = c[c.method != "non-private"].groupby(["loss", "method", "epsilon"]).error.agg(value="mean", std="std", n_runs="count").reset_index()
        npv = c[c.method == "non-private"].groupby("loss").error.mean()
        rep_np = pd.DataFrame([{"loss": l, "method": "non-private", "epsilon": e, "value": npv[l], "n_runs": int((c.method == "non-private").sum() / 2)}
                               for l in LOSSES for e in eps_grid])
        frame = pd.concat([frame, rep.assign(source="reproduced"), rep_np.assign(source="reproduced")], ignore_index=True)
    write_table(frame, f"figure_{fig_no}", "chaudhuri2011")

# %%
colors = {"output": "tab:green", "objective": "tab:blue", "non-private": "tab:red"}
labels = {"output": "Sensitivity (Alg. 1)", "objective": "Objective (Alg. 2)", "non-private": "Non-private"}
for name, fig_no in (("adult", 2), ("kddcup99", 3)):
    if name not in curves:
        continue
    fig, axes = plt.subplots(1, 2, figsize=(12, 4.2))
    for ax, loss, title in ((axes[0], "logistic", "(a) regularised logistic regression"), (axes[1], "huber", "(b) Huber SVM (h = 0.5)")):
        c = curves[name]
        for method in ("output", "objective"):
            g = c[(c.loss == loss) & (c.method == method)].groupby("epsilon").error
            ax.errorbar(g.mean().index, g.mean(), yerr=g.std(), marker="o", capsize=3, color=colors[method], label=f"{labels[method]}, reproduced")
            pub = E.PUBLISHED_FIGURES_2_3[name][(loss, method)]
            ax.plot(list(pub), list(pub.values()), ls="--", marker="x", color=colors[method], alpha=0.7, label=f"{labels[method]}, published")
        npe = c[(c.loss == loss) & (c.method == "non-private")].error.mean()
        ax.axhline(npe, color=colors["non-private"], label=f"Non-private, reproduced ({npe:.4f})")
        ax.axhline(list(E.PUBLISHED_FIGURES_2_3[name][(loss, "non-private")].values())[0], color=colors["non-private"], ls="--", alpha=0.6, label="Non-private, published")
        ax.set(xlabel="privacy parameter eps_p", ylabel="misclassification error rate", title=title)
        if name == "kddcup99":
            ax.set_ylim(0, 0.06 if loss == "logistic" else 0.03)
        ax.legend(fontsize=7)
    fig.suptitle(f"Figure {fig_no}: {name} (error bars: std over folds x runs)", y=1.02)
    save(fig, f"figure_{fig_no}")

# %%
for name, label in (("adult", "Figure 2"), ("kddcup99", "Figure 3")):
    if name not in curves:
        checks.skip(label, "error against eps_p (KDDCup99)", kdd_reason)
        continue
    c = curves[name]
    n_ok = n_all = 0
    gaps = []
    for (loss, method), pts in E.PUBLISHED_FIGURES_2_3[name].items():
        if method == "non-private":
            continue
        for eps, pub in pts.items():
            errs = c[(c.loss == loss) & (c.method == method) & np.isclose(c.epsilon, eps)].error
            if errs.empty:
                continue
            ok, lo, hi = E.within_spread(pub, errs)
            n_ok += ok
            n_all += 1
            gaps.append((abs(errs.mean() - pub), loss, method, eps, pub, errs.mean()))
    g = max(gaps)
    checks.add(label, "published points inside the central 95% of the reproduced runs", bound=n_all, measured=n_ok,
               status="holds" if n_ok == n_all else "violated",
               detail=f"largest gap {g[0]:.4f} ({g[1]} {g[2]} at eps {g[3]}: published {g[4]}, reproduced {g[5]:.4f})")
    obj_better = all(c[(c.loss == l) & (c.method == "objective") & np.isclose(c.epsilon, e)].error.mean()
                     <= c[(c.loss == l) & (c.method == "output") & np.isclose(c.epsilon, e)].error.mean() + 1e-9
                     for l in LOSSES for e in eps_grid if e <= 0.25)
    checks.agrees(f"{label} (reading)", "objective perturbation beats output perturbation at every eps_p <= 0.25",
                  expected="objective <= output", measured="yes" if obj_better else "no", ok=obj_better, detail="the paper's main empirical claim")

# %% [markdown]
# ## Figures 4 and 5: learning curves with private tuning (Algorithm 4, KDDCup99)
#
# Five candidate Lambdas (not listed in the paper: we use 10^-3 ... 10^-1, so that objective perturbation,
# restricted like the paper's to the eps' > 0 regime, has candidates at our smaller n), five training parts of n rows,
# a 25,000-row validation and a 25,000-row test part.  The paper's parts have 60,000-120,000 rows and were
# drawn from the full 5-million-row file; the 10 percent file allows at most (494,021 - 50,000)/5 = 88,804
# rows per part, so **the sizes are scaled down** (quick: smaller still) and the published curves are shown
# for reference only.

# %%
LC_LAMBDAS = [1e-3, 10**-2.5, 1e-2, 10**-1.5, 1e-1]
if kdd is not None:
    from dpkernels.datasets import load_kddcup99

    kdd_full = load_kddcup99(target="dos", subsample=None)
    lc = E.learning_curves(kdd_full, P["lc_sizes"], LC_LAMBDAS, LOSSES, [0.05, 0.01], n_perms=P["lc_perms"], n_runs=P["lc_runs"],
                           random_state=seed, n_jobs=P["n_jobs"])
    lc_summary = lc.groupby(["loss", "epsilon", "method", "size"], dropna=False).error.agg(["mean", "std", "count"]).reset_index()
    pub = [{"figure": 4 if l == "logistic" else 5, "loss": l, "epsilon": e, "method": m, "size": s, "source": "published", "value": v}
           for (l, e, m), vals in E.PUBLISHED_FIGURES_4_5.items() for s, v in zip(E.PUBLISHED_FIGURES_4_5_SIZES, vals)]
    rep = [{"figure": 4 if r.loss == "logistic" else 5, "loss": r.loss, "epsilon": r.epsilon, "method": r.method, "size": int(r["size"]),
            "source": "reproduced", "value": r["mean"], "std": r["std"], "n_runs": int(r["count"])} for _, r in lc_summary.iterrows()]
    write_table(pd.DataFrame(pub + rep), "figure_4_5", "chaudhuri2011")
    lc_summary
else:
    checks.skip("Figures 4-5", "learning curves with Algorithm 4 on KDDCup99", kdd_reason)

# %%
if kdd is not None:
    for loss, fig_no in (("logistic", 4), ("huber", 5)):
        fig, axes = plt.subplots(1, 2, figsize=(12, 4.2))
        for ax, eps in zip(axes, (0.05, 0.01)):
            for method in ("output", "objective"):
                g = lc[(lc.loss == loss) & (lc.method == method) & np.isclose(lc.epsilon, eps)].groupby("size").error
                ax.errorbar(g.mean().index, g.mean(), yerr=g.std(), marker="o", capsize=3, color=colors[method], label=f"{labels[method]}, reproduced")
                ax.plot(E.PUBLISHED_FIGURES_4_5_SIZES, E.PUBLISHED_FIGURES_4_5[(loss, eps, method)], ls="--", marker="x", color=colors[method],
                        alpha=0.6, label=f"{labels[method]}, published (60k-120k rows per part)")
            npe = lc[(lc.loss == loss) & (lc.method == "non-private")].groupby("size").error.mean()
            ax.plot(npe.index, npe.values, color=colors["non-private"], marker="s", label="Non-private (union of parts), reproduced")
            ax.axhline(E.PUBLISHED_FIGURES_4_5_NONPRIVATE[loss], color=colors["non-private"], ls="--", alpha=0.6, label="Non-private, published")
            ax.set(xlabel="rows per training part (k = thousand)", ylabel="misclassification error rate",
                   title=f"({'a' if eps == 0.05 else 'b'}) eps_p = {eps}")
            ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v / 1000:g}k"))
            ax.legend(fontsize=7)
        fig.suptitle(f"Figure {fig_no}: {'logistic regression' if loss == 'logistic' else 'Huber SVM'}, Algorithm 4 over 5 Lambdas "
                     "(sizes scaled down to the 10% KDD file)", y=1.02)
        save(fig, f"figure_{fig_no}")
    falls = all(lc[(lc.method == m) & (lc.loss == l) & np.isclose(lc.epsilon, 0.01)].groupby("size").error.mean().iloc[-1]
                <= lc[(lc.method == m) & (lc.loss == l) & np.isclose(lc.epsilon, 0.01)].groupby("size").error.mean().iloc[0]
                for m in ("output", "objective") for l in LOSSES)
    obj_wins = all(lc[(lc.method == "objective") & (lc.loss == l) & np.isclose(lc.epsilon, e)].error.mean()
                   <= lc[(lc.method == "output") & (lc.loss == l) & np.isclose(lc.epsilon, e)].error.mean() for l in LOSSES for e in (0.05, 0.01))
    checks.agrees("Figures 4-5 (reading)", "private errors fall with n (eps_p = 0.01) and objective beats output perturbation",
                  expected="both", measured=f"falls: {falls}; objective better: {obj_wins}", ok=falls and obj_wins,
                  detail=f"sizes {P['lc_sizes']} per part (scaled down), {P['lc_perms']} permutations x {P['lc_runs']} runs")

# %% [markdown]
# ## Section 4: generalisation (Lemmas 16, 17, 19; Theorems 15, 18; Corollaries 20, 21)
#
# Lemma 17 (Gamma tail) is checked exactly; Lemma 16 (Algorithm 1) and Lemma 19 (Algorithm 2) by Monte
# Carlo over the noise.  Lemma 19's proof takes ||b|| ~ Gamma(d, 2/eps_p), but Algorithm 2 draws
# ||b|| ~ Gamma(d, 2/eps'), larger whenever eps' < eps_p: we test the statement with the noise the algorithm
# really adds, including a case where c/(n Lambda) is not small.

# %%
l17 = E.lemma_17_grid([1, 2, 5, 10, 50, 105, 1000], [0.5, 0.1, 0.05, 0.01, 1e-3, 1e-6])
checks.at_least("Lemma 17", "min over k in {1..1000}, delta in {1e-6..0.5} of P(X < k theta log(k/delta)) - (1 - delta)", bound=-1e-12,
                measured=float(l17.margin.min()), detail="exact Gamma cdf; equality (up to round-off) at k = 1, "
                f"smallest margin for k > 1: {l17[l17.k > 1].margin.min():.3g}")
l16 = E.lemma_16_experiment([("logistic", 0.01, 0.5, 0.1), ("huber", 0.01, 0.5, 0.1), ("logistic", 0.1, 0.1, 0.05)],
                            draws=P["lemma16_draws"], random_state=seed)
l19 = E.lemma_19_experiment([("logistic", 0.01, 1.0, 0.1), ("logistic", 0.002, 1.0, 0.1), ("huber", 0.01, 2.0, 0.1)],
                            draws=P["lemma19_draws"], random_state=seed)
pd.concat([l16.assign(lemma="16"), l19.assign(lemma="19")], ignore_index=True)

# %%
for _, r in l16.iterrows():
    checks.at_most("Lemma 16", f"P(J(f_priv) - J(f*) > bound), {r.loss}, Lambda = {r.Lambda:g}, eps = {r.eps:g}, delta = {r.delta:g}",
                   bound=r.delta, measured=r.p_hat, detail=f"{r.failures}/{r.draws}, CP upper {r.cp_high:.3g}; median excess / bound = {r.median_excess / r.bound:.3g}")
for _, r in l19.iterrows():
    status = "violated" if r.cp_low > r.delta else "holds"
    checks.add("Lemma 19", f"P(J(f_priv) - J(f*) > 4d^2 log^2(d/delta)/(Lambda n^2 eps_p^2)), {r.loss}, Lambda = {r.Lambda:g}, eps_p = {r.eps:g} (eps' = {r.eps_prime:.3g})",
               bound=r.delta, measured=r.p_hat, status=status,
               detail=f"{r.failures}/{r.draws}, CP [{r.cp_low:.3g}, {r.cp_high:.3g}]; with eps' in place of eps_p: {r.failures_eps_prime} failures")

# %%
eps_g = np.logspace(-3, -1, 9)
t15 = np.array([B.theorem_15_terms(e, 0.1, 0.05, 10, 5.0, 1.0) for e in eps_g])
t18 = np.array([B.theorem_18_terms(e, 0.1, 0.05, 10, 5.0, 1.0) for e in eps_g])
slope15 = np.polyfit(np.log(eps_g), np.log(t15[:, 1:].max(axis=1)), 1)[0]
slope18 = np.polyfit(np.log(eps_g), np.log(t18[:, 1:].max(axis=1)), 1)[0]
checks.agrees("Theorems 15 and 18", "the privacy terms of objective perturbation scale better in 1/eps_g (||f0|| = 5, d = 10, eps_p = 0.1)",
              expected="slope(Thm 18) > slope(Thm 15) in eps_g", measured=f"{slope18:.2f} vs {slope15:.2f}", ok=slope18 > slope15,
              detail="log-log slopes of the largest privacy-dependent term: Theorem 15's ||f0||^2 / eps_g^1.5, Theorem 18's "
              "||f0||^2 / eps_g (the paper's message); the constants C are unspecified, so only rates are compared")
print(f"log-log slopes in eps_g of the privacy terms: Theorem 15 {slope15:.2f}, Theorem 18 {slope18:.2f}")

# %% [markdown]
# ## Section 6: private tuning, Theorem 27
#
# The exponential mechanism's selection satisfies z <= z_min + (2/eps_p) log(m/delta) with probability
# >= 1 - delta; the exact failure probability is computable from Algorithm 4's probabilities.

# %%
t27 = E.theorem_27_experiment([([100, 103, 110, 150, 300], 0.05, 0.1), ([40, 41, 42, 43, 44], 0.5, 0.05), (list(range(0, 200, 10)), 0.1, 0.01)],
                              draws=P["theorem27_draws"], random_state=seed)
for _, r in t27.iterrows():
    checks.at_most("Theorem 27", f"P(z > z_min + (2/eps) log(m/delta)), m = {r.m}, eps = {r.eps}, delta = {r.delta}", bound=r.delta,
                   measured=r.exact_probability, detail=f"exact; simulated {r.simulated:.4f} over {r.draws} draws")
t27

# %% [markdown]
# ## Privacy audits of Algorithms 1 and 2
#
# On neighbouring pairs we draw many releases and use the exact log-likelihood ratio of the release as the
# test statistic (for Algorithm 2 it is computable: b = -n(grad J(f) + Delta f) is a bijection and the
# release density is nu(b) |det db/df|), then a 95% Clopper-Pearson lower bound on epsilon.
#
# * Algorithm 1: the worst neighbour of the sensitivity search (logistic, Lambda = 0.01).
# * Algorithm 2: a pair built to stress the Jacobian term (one row at the boundary of the unit ball
#   replaced by the origin, the other rows at the origin, so that the changed row carries all the curvature).

# %%
eps_a = 1.0
Xp = np.zeros((5, 1))
Xp[-1, 0] = 1.0  # D: the changed row at the boundary of the unit ball
yp = np.array([1.0, -1.0, 1.0, -1.0, 1.0])
Xq = Xp.copy()
Xq[-1, 0] = -1.0  # Algorithm 1's D': the antipodal row
Xz = Xp.copy()
Xz[-1, 0] = 0.0  # Algorithm 2's D': the row at the origin (no curvature)
audit_out = E.audit_output_perturbation(Xp, yp, Xq, yp, eps_a, 0.05, "logistic", P["audit_releases"], random_state=seed)
lam_obj = 0.05
obj1 = ObjectivePerturbation(epsilon=eps_a, Lambda=lam_obj, loss="logistic", random_state=seed).fit(Xp, yp)
obj2 = ObjectivePerturbation(epsilon=eps_a, Lambda=lam_obj, loss="logistic", random_state=seed).fit(Xz, yp)
mech = E.ObjectiveMechanism(lam_obj, obj1.params_.Delta, obj1.params_.beta, False)
rel1 = obj1.sample_releases(P["audit_obj_releases"], np.random.default_rng([seed, 1]))
rel2 = obj2.sample_releases(P["audit_obj_releases"], np.random.default_rng([seed, 2]))
audit_obj = E.audit_objective_perturbation(rel1, rel2, Xp, yp, Xz, yp, "logistic", mech, eps_a, random_state=seed)
grid = np.linspace(-60, 60, 24001)[:, None]
sup_ours = float(np.max(np.abs(E.exact_objective_llr(grid, Xp, yp, Xz, yp, make_loss("logistic"), mech))))
pd.DataFrame([dict(algorithm="1 (output)", **audit_out), dict(algorithm="2 (objective)", sup_exact_llr=sup_ours, **audit_obj)])

# %%
checks.at_most("Theorem 6", "95% CP lower bound on epsilon, Algorithm 1 (logistic, Lambda = 0.05, d = 1, n = 5)", bound=eps_a,
               measured=audit_out["epsilon_lb"], detail=f"{audit_out['n_releases']} releases each; pair privacy loss {audit_out['pair_privacy_loss']:.3f}")
checks.at_most("Theorem 9", "95% CP lower bound on epsilon, Algorithm 2 (logistic, Lambda = 0.05, d = 1, n = 5)", bound=eps_a,
               measured=audit_obj["epsilon_lb"], detail=f"{audit_obj['n_releases']} releases each, exact-LLR statistic")
checks.at_most("Theorem 9", "sup over releases of the exact privacy loss |log p_D(f) - log p_D'(f)| on the same pair (grid |f| <= 60)", bound=eps_a,
               measured=sup_ours, detail=f"branch {obj1.params_.branch}, eps' = {obj1.params_.epsilon_prime:.3g}, Delta = {obj1.params_.Delta:.3g}")

# %% [markdown]
# ## Side by side with diffprivlib
#
# IBM diffprivlib's `LogisticRegression` implements Algorithm 2 (its `mechanisms/vector.py`).  With the
# same preprocessing, the same Lambda (diffprivlib's C = 1/(n Lambda)) and the same epsilon grid we compare
# test error and fit time, with its intercept off (Algorithm 2 as published) and on (its default).

# %%
dpl_ok, dpl_version = E.diffprivlib_available()
print("diffprivlib:", dpl_version)
if dpl_ok:
    cmp = E.diffprivlib_comparison(adult, P["dpl_epsilons"], 10**-2.5, range(P["dpl_seeds"]), random_state=seed)
    cmp_summary = cmp.groupby(["implementation", "epsilon"]).agg(error=("error", "mean"), error_sd=("error", "std"), fit_s=("fit_s", "median")).reset_index()
    write_table(cmp_summary.rename(columns={"error": "value", "error_sd": "std"}).assign(source="reproduced"), "diffprivlib_comparison", "chaudhuri2011")
    cmp_summary
else:
    checks.skip("diffprivlib comparison", "objective-perturbation LR against diffprivlib", dpl_version)

# %%
if dpl_ok:
    fig, axes = plt.subplots(1, 2, figsize=(12, 4))
    sns.lineplot(data=cmp, x="epsilon", y="error", hue="implementation", marker="o", errorbar="sd", ax=axes[0])
    axes[0].set(xscale="log", xlabel="eps_p", ylabel="test error (Adult)", title="objective-perturbation LR, Lambda = 10^-2.5")
    sns.barplot(data=cmp, x="implementation", y="fit_s", ax=axes[1], errorbar=None)
    axes[1].set(ylabel="fit time (s, median)", xlabel="", title="fit time")
    axes[1].tick_params(axis="x", labelsize=7)
    save(fig, "diffprivlib_comparison")
    ours = cmp[cmp.implementation == "dpkernels"].groupby("epsilon").error.mean()
    theirs = cmp[cmp.implementation == "diffprivlib (no intercept)"].groupby("epsilon").error.mean()
    sd = cmp[cmp.implementation == "dpkernels"].groupby("epsilon").error.std().fillna(0)
    t_ours = cmp[cmp.implementation == "dpkernels"].fit_s.median()
    t_theirs = cmp[cmp.implementation == "diffprivlib (no intercept)"].fit_s.median()
    checks.add("diffprivlib comparison", "our objective-perturbation LR error no worse than diffprivlib's (same Lambda, eps grid)",
               bound="<= diffprivlib + 2 sd", measured=f"max diff {float((ours - theirs).max()):+.4f}",
               status="holds" if bool(((ours - theirs) <= 2 * sd + 1e-9).all()) else "violated",
               detail=f"{P['dpl_seeds']} seeds per eps; mean errors ours {ours.round(4).tolist()}, diffprivlib {theirs.round(4).tolist()}")
    checks.add("diffprivlib comparison", "fit time no slower than diffprivlib", bound=round(float(t_theirs), 3), measured=round(float(t_ours), 3),
               status="holds" if t_ours <= t_theirs else "violated",
               detail="median seconds per fit on ~36,000 rows; ours solves to ||grad|| <= 1e-10, diffprivlib's L-BFGS stops at tol 1e-4 / 100 iterations")

# %% [markdown]
# ### diffprivlib held to the same standard
#
# Theorem 9's proof bounds the Jacobian ratio by (1 + c/(n(Lambda + Delta)))^2 because the rank-2 change
# has eigenvalues up to c ||x||^2 <= c.  With rows of norm up to R the eigenvalues reach c R^2, so eps'
# and Delta must use c R^2; the noise needs beta = eps'/(2R) since ||b - b'|| <= 2R.  An intercept needs
# strong convexity in its coordinate too (the bound uses lambda_min of the Hessian >= n(Lambda + Delta)).
# diffprivlib 0.6.6 uses c R (not c R^2) with R' = sqrt(R^2 + 1) when it fits an intercept, and leaves the
# intercept unregularised when Delta = 0.

# %%
const_rows = []
for R, fi in ((1.0, False), (1.0, True), (10.0, False), (30.0, False)):
    cst = E.diffprivlib_constants(1.0, 5, 0.2, R, fi)
    const_rows.append({"data_norm": R, "fit_intercept": fi, **{k: (round(v, 4) if isinstance(v, float) else v) for k, v in cst.items()}})
constants = pd.DataFrame(const_rows)
constants

# %%
# NBVAL_CHECK_OUTPUT
print(constants[["data_norm", "fit_intercept", "R", "dpl_eps_prime", "dpl_Delta", "required_eps_prime", "required_Delta"]].to_string(index=False))

# %% [markdown]
# **Exact privacy loss and a statistical audit of diffprivlib.**  A pair with data_norm R = 30 (n = 5,
# d = 1, C = 1, eps = 1, no intercept): four rows at the origin and one at x = 30 (D) or x = 0 (D').  The
# exact log-likelihood ratio of diffprivlib's release, computed with the constants it uses, peaks above
# eps; releases drawn from diffprivlib itself then give the Clopper-Pearson lower bound.  The same pair
# through our `ObjectivePerturbation(data_norm=30)` stays within eps.

# %%
R_a, n_a, lam_a = 30.0, 5, 0.2
XA = np.zeros((n_a, 1))
XA[-1, 0] = R_a
XB = np.zeros((n_a, 1))
yA = np.array([1.0, -1.0, 1.0, -1.0, 1.0])
cst = E.diffprivlib_constants(eps_a, n_a, lam_a, R_a, False)
mech_dpl = E.ObjectiveMechanism(lam_a, cst["dpl_Delta"], cst["dpl_beta"], False)
grid = np.linspace(-40, 40, 40001)[:, None]
sup_dpl = float(np.max(np.abs(E.exact_objective_llr(grid, XA, yA, XB, yA, make_loss("logistic"), mech_dpl))))
ours_a = ObjectivePerturbation(epsilon=eps_a, Lambda=lam_a, loss="logistic", data_norm=R_a, random_state=seed).fit(XA, yA)
mech_ours = E.ObjectiveMechanism(lam_a, ours_a.params_.Delta, ours_a.params_.beta, False)
sup_ours_a = float(np.max(np.abs(E.exact_objective_llr(grid, XA, yA, XB, yA, make_loss("logistic"), mech_ours))))
print(f"sup exact privacy loss: diffprivlib {sup_dpl:.3f}, dpkernels {sup_ours_a:.3f} (claimed eps = {eps_a})")
checks.at_most("Theorem 9 (diffprivlib, data_norm = 30)", "sup over releases of diffprivlib's exact privacy loss on the pair (eps = 1)",
               bound=eps_a, measured=sup_dpl, detail="diffprivlib uses c R where the Jacobian needs c R^2 (finding about the peer)")
checks.at_most("Theorem 9 (data_norm = 30)", "sup over releases of our exact privacy loss on the same pair (c R^2 calibration)",
               bound=eps_a, measured=sup_ours_a, detail=f"Delta = {ours_a.params_.Delta:.4g}")
if dpl_ok:
    N = P["dpl_audit_releases"]
    relA = np.array([E.diffprivlib_release(XA, yA, eps_a, lam_a, R_a, False, s) for s in range(N)])
    relB = np.array([E.diffprivlib_release(XB, yA, eps_a, lam_a, R_a, False, 10**7 + s) for s in range(N)])
    audit_dpl = E.audit_objective_perturbation(relA, relB, XA, yA, XB, yA, "logistic", mech_dpl, eps_a, random_state=seed)
    oA = ours_a.sample_releases(N, np.random.default_rng([seed, 5]))
    ours_b = ObjectivePerturbation(epsilon=eps_a, Lambda=lam_a, loss="logistic", data_norm=R_a, random_state=seed).fit(XB, yA)
    oB = ours_b.sample_releases(N, np.random.default_rng([seed, 6]))
    audit_ours_a = E.audit_objective_perturbation(oA, oB, XA, yA, XB, yA, "logistic", mech_ours, eps_a, random_state=seed)
    checks.add("Theorem 9 (diffprivlib, data_norm = 30)", "95% CP lower bound on epsilon from diffprivlib's own releases (eps = 1)",
               bound=eps_a, measured=audit_dpl["epsilon_lb"], status="violated" if audit_dpl["epsilon_lb"] > eps_a else "holds",
               detail=f"{N} releases per database; 'violated' means diffprivlib's release is not {eps_a}-DP (finding about the peer)")
    checks.at_most("Theorem 9 (data_norm = 30)", "95% CP lower bound on epsilon from our releases on the same pair", bound=eps_a,
                   measured=audit_ours_a["epsilon_lb"], detail=f"{N} releases per database")
    pd.DataFrame([dict(implementation="diffprivlib", sup_exact=sup_dpl, **audit_dpl), dict(implementation="dpkernels", sup_exact=sup_ours_a, **audit_ours_a)])

# %% [markdown]
# **The unregularised intercept.**  With `fit_intercept=True` (diffprivlib's default) and eps' > 0, the
# intercept carries no regularisation: the perturbed objective has no minimiser whenever the noise's
# intercept coordinate exceeds what the logistic gradient can balance (|b_0| >= the number of rows of the
# opposite class), and the released intercept is wherever L-BFGS stops.  On a 5-row data set the release
# then changes with diffprivlib's `max_iter`, which Algorithm 2's proof cannot cover (it needs the argmin).

# %%
Xi = np.array([[0.1], [0.2], [-0.1], [0.3], [-0.2]])
yi = np.array([1.0, 1.0, 1.0, -1.0, -1.0])
ci = E.diffprivlib_constants(1.0, 5, 0.2, 1.0, True)
rows = []
for s in range(P["dpl_intercept_seeds"]):
    b = E.diffprivlib_noise(s, 2, ci["dpl_eps_prime"], ci["R"])  # (b_w, b_0) as diffprivlib draws them for this seed
    unbounded = not (-2 <= b[1] <= 3)  # intercept slope at infinity: #neg + b_0 (b_0 -> +inf) and #pos - b_0 (b_0 -> -inf)
    rel = E.diffprivlib_release(Xi, yi, 1.0, 0.2, 1.0, True, s) if dpl_ok else np.full(2, np.nan)
    rows.append({"seed": s, "b_w": b[0], "b_0": b[1], "no_minimiser": unbounded, "released_w": rel[0], "released_intercept": rel[1]})
intercepts = pd.DataFrame(rows)
share = float(intercepts.no_minimiser.mean())
if dpl_ok:
    garbage = intercepts[intercepts.no_minimiser].released_intercept.abs()
    print(f"{share:.0%} of seeds give a perturbed objective without a minimiser; there diffprivlib releases |intercept| "
          f"from {garbage.min():.3g} to {garbage.max():.3g}")
    checks.add("Algorithm 2 (diffprivlib intercept)", "diffprivlib releases the argmin Algorithm 2 assumes (fit_intercept=True, n = 5, eps = 1, C = 1)",
               bound="an argmin exists for every noise draw", measured=f"none for {share:.0%} of seeds; released |intercept| >= {garbage.min():.2g}",
               status="violated" if share > 0 else "holds",
               detail="eps' > 0 so Delta = 0 and the intercept is unregularised; when |b_0| exceeds what the logistic gradient can balance "
               "L-BFGS diverges and its iterate is released (finding about the peer; noise replicated from diffprivlib's RandomState)")
intercepts.head(8)

# %% [markdown]
# ## Section 5: kernels (Algorithm 3)
#
# Algorithm 3 maps x to v(x) = sqrt(2/D) cos(w'x + psi), whose norm can exceed 1 (up to sqrt 2; notes E10),
# breaking the ||x|| <= 1 assumption of Theorems 6 and 9.  `PrivateKernelERM` scales the map by 1/sqrt 2 so
# that ||v(x)|| <= 1 always holds (or, with `feature_scale="paper"`, keeps it and calibrates with R = sqrt 2).
# The paper runs no kernel experiment; here Algorithm 3 with objective perturbation on Adult (and KDDCup99):
# error against epsilon and D next to the linear model.

# %%
norms = E.kernel_feature_norms([1, 2, 10, 100, 1000], gamma=1.0, random_state=seed)
checks.at_most("Theorem 22 / Algorithm 3 (E10)", "max ||v(x)|| of sqrt(2/D) cos(w'x + psi) against the ||x|| <= 1 the proofs need",
               bound=1.0, measured=float(norms.max_norm.max()),
               detail="; ".join(f"D={int(r.D)}: max {r.max_norm:.3f}, {r.share_above_1:.0%} of points above 1" for _, r in norms.iterrows()))
norms

# %%
kern_parts = []
for name, data in (("adult", adult), ("kddcup99", kdd)):
    if data is None:
        checks.skip("Section 5 (kernel experiment)", "Algorithm 3 on KDDCup99", kdd_reason)
        continue
    ke = E.kernel_experiment(data, P["kernel_D"], P["kernel_epsilons"], Lambda=1e-3, gamma=P["kernel_gamma"], seeds=range(P["kernel_seeds"]),
                             n_rows=P["kernel_rows"], random_state=seed)
    kern_parts.append(ke.assign(data=name))
kern = pd.concat(kern_parts, ignore_index=True)
ks = kern.groupby(["data", "model", "D", "epsilon"]).error.agg(value="mean", std="std", n_runs="count").reset_index()
write_table(ks.assign(source="reproduced"), "kernel_experiment", "chaudhuri2011")
fig, axes = plt.subplots(1, len(kern_parts), figsize=(6 * len(kern_parts), 4), squeeze=False)
for ax, (name, g) in zip(axes[0], kern.groupby("data")):
    sns.lineplot(data=g.assign(label=np.where(g.model == "linear", "linear", "RFF D=" + g.D.astype(str))), x="epsilon", y="error", hue="label",
                 marker="o", errorbar="sd", ax=ax)
    ax.set(xscale="log", xlabel="eps_p (log scale)", ylabel="test error", title=f"Algorithm 3 (objective, Lambda = 1e-3) on {name}")
    ax.legend(title="features")
save(fig, "kernel_experiment")
ks

# %% [markdown]
# ## Summary
#
# Every check of this notebook (`paper_figures/chaudhuri2011/checks.csv`); violated rows are explained in
# `ERRATA.md` (findings about diffprivlib are marked as such).

# %%
checks.write(OUT)
print(checks.summary())
checks.frame()[["claim", "check", "bound", "measured", "status"]]
