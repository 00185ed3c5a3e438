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
# # Rubinstein, Bartlett, Huang and Taft (2012): private SVMs in a large function space
#
# *Learning in a Large Function Space: Privacy-Preserving Mechanisms for SVM Learning*, Journal of
# Privacy and Confidentiality 4(1), 2012.  This notebook follows the paper section by section:
# every mechanism is run from `dpkernels.mechanisms`, every numbered statement becomes a calculator in
# `dpkernels.bounds.rubinstein`, and every claim is checked against numbers, either as a bound next to
# the quantity it bounds (measured over random and adversarially searched neighbours, by Monte Carlo, or
# by a statistical privacy audit) or by recomputing the paper's constructions with a QP solver.
# Each check becomes a row of `paper_figures/rubinstein2012/checks.csv`; whatever disagrees with the
# paper is reported as `violated` here and explained in `ERRATA.md`.
#
# Run it with `make reproduce` (quick profile) or `make reproduce PROFILE=full` (paper scale).
# Notation: the paper's privacy level is **beta** (`epsilon` in the estimators), and **(eps, delta)**
# is its *usefulness*: P(sup_M |f-hat - f| <= eps) >= 1 - delta.

# %% tags=["parameters"]
profile = "quick"
seed = 2012
sizes = None

# %%
import math
import warnings

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import seaborn as sns

from dpkernels import profiles
from dpkernels.audit import clopper_pearson
from dpkernels.bounds import rubinstein as R
from dpkernels.experiments import rubinstein2012 as E
from dpkernels.kernels import CauchyKernel, LaplacianKernel, RBFKernel
from dpkernels.mechanisms import PrivateSVM, PrivateSVMFinite
from dpkernels.report import Checks, output_dir, write_table

P = profiles.load("rubinstein2012", profile, sizes)
OUT = output_dir("rubinstein2012")
checks = Checks("rubinstein2012")
sns.set_theme(style="whitegrid", context="notebook")
pd.set_option("display.width", 160)
pd.set_option("display.max_columns", 20)
pd.set_option("display.precision", 4)
print(f"profile={profile}, seed={seed}, output={OUT.name}/")


def save(fig, name):
    fig.savefig(OUT / f"{name}.png", dpi=130, bbox_inches="tight")
    plt.show()


# %% [markdown]
# ## 2. Background: the SVM, usefulness and Tables 1-2
#
# The SVM primal is (1/2)||w||^2 + (C/n) sum_i l(y_i, <w, phi(x_i)>), **without a bias term**; the
# dual for the hinge loss is Eq. (1) with box constraints 0 <= alpha_i <= C/n.  Remark 1: for
# universal consistency C should grow like sqrt(n); we use that scaling when we evaluate the paper's
# asymptotic statements (Section 5 and 6 below).
#
# **Tables 1 and 2** list three translation-invariant kernels g(x - y), and Table 2 their Fourier
# transforms p, the law the random features are sampled from.  For Algorithm 3 to work, p must be a
# probability density and g(0) = 1 (so that k-hat(x, x) = 1 = k(x, x)); then sampling w ~ p gives
# E cos<w, D> = g(D) (Bochner).  We verify each printed pair three ways: the mass of p (quadrature),
# g(0), and a Monte-Carlo estimate of E cos<w, D> against g(D) at five differences D (d = 2),
# within five standard errors.  RBF is checked at sigma = 1 and sigma = 2: the printed p has no sigma.

# %%
table1, table2 = E.kernel_tables(n_freq=P["table_freqs"], random_state=seed)
write_table(table1, "table_1", "rubinstein2012")
write_table(table2.drop(columns=["consistent", "mc_error", "mc_5se", "p_mass", "g0"]), "table_2", "rubinstein2012")
table2[["kernel", "source", "value", "verification"]]

# %%
# NBVAL_CHECK_OUTPUT
print(table2[["kernel", "source", "p_mass", "g0", "consistent"]].round(6).to_string(index=False))

# %%
for _, row in table2[table2.source == "published"].iterrows():
    ok = bool(row.consistent)
    detail = row.verification + ("" if ok else " -> the printed pair is inconsistent (see ERRATA)")
    checks.agrees("Table 2", f"{row.kernel}: p is a probability law, g(0) = 1, E_p cos<w,D> = g(D)",
                  expected="all three hold", measured="hold" if ok else "fail", ok=ok, detail=detail)
ours_ok = bool(table2[table2.source == "reproduced"].consistent.all())
checks.agrees("Table 1", "normalised kernels of dpkernels.kernels (sigma-scaled, g(0) = 1) pass the same Monte-Carlo test",
              expected="all rows", measured="all rows" if ours_ok else "some rows fail", ok=ours_ok,
              detail="RBF sigma in {1, 2}, Laplacian, Cauchy; reproduced rows of table_2.csv")
# Algorithm 3 defines p(w) = 2^{-1} int exp(-j<w, x>) g(x) dx; at w = 0 for the 1-d RBF kernel the
# integral is sqrt(2 pi), and p(0) must be the N(0, 1) density 1/sqrt(2 pi).
integral_at_0 = math.sqrt(2 * math.pi)
p0_printed = R.fourier_transform_normalisation(1, paper=True) * integral_at_0
p0_true = R.fourier_transform_normalisation(1) * integral_at_0
checks.agrees("Algorithm 3", "normalisation of the Fourier transform p (1-d RBF, p(0))", expected=1 / math.sqrt(2 * math.pi),
              measured=p0_printed, ok=math.isclose(p0_printed, 1 / math.sqrt(2 * math.pi)),
              detail=f"printed 2^-1 gives p(0) = {p0_printed:.4f}; (2 pi)^-d gives {p0_true:.4f} = N(0,1) density")
print(f"p(0) with the printed 2^-1: {p0_printed:.4f}; with (2 pi)^-1: {p0_true:.4f}; N(0,1) density at 0: {1 / math.sqrt(2 * math.pi):.4f}")

# %% [markdown]
# The printed RBF transform is that of sigma = 1 only (for bandwidth sigma the law is N(0, sigma^-2 I)),
# the Cauchy row is unnormalised (g(0) = 2^d and p integrates to 2^d; it is also written in terms of
# D rather than w), and Algorithm 3's normalising constant 2^-1 should be (2 pi)^-d.  The Laplacian
# row is right.  `dpkernels.kernels` uses the normalised, bandwidth-scaled forms of the reproduced rows.
#
# ## 3. PrivateSVM-Finite (Algorithm 2)
#
# Algorithm 2 solves the SVM and releases w-hat = w-tilde + Laplace(lambda)^F.  Lemma 9 bounds the
# replace-one sensitivity of w by 4 L C kappa / n in L2 and 4 L C kappa sqrt(F) / n in L1; Theorem 10
# calibrates lambda = 4 L C kappa sqrt(F) / (beta n).  A small example: the estimator states its
# guarantee and the assumptions it relies on.

# %%
rng = np.random.default_rng(seed)
X_toy = rng.normal(size=(300, 2))
X_toy /= np.maximum(1.0, np.linalg.norm(X_toy, axis=1))[:, None]
y_toy = np.where(X_toy[:, 0] + 0.4 * X_toy[:, 1] > 0, 1, -1)
finite = PrivateSVMFinite(epsilon=1.0, C=10.0, data_norm=1.0, random_state=seed).fit(X_toy, y_toy)
print(finite.guarantee_)
print(f"lambda = {finite.noise_scale_:.4g} = Theorem 10's {R.theorem_10_noise_scale(1.0, 1, 10.0, 1.0, 2, 300):.4g}; "
      f"train accuracy {finite.score(X_toy, y_toy):.3f} (non-private {np.mean(np.sign(finite.nonprivate_decision_function(X_toy)) == y_toy):.3f})")

# %% [markdown]
# ### Lemma 9: the sensitivity, measured
#
# For each loss (hinge, Huber with h = 0.5, logistic; all 1-Lipschitz) and two feature maps (the linear
# map on the unit ball, kappa = 1; random Fourier features with d-hat = 10, kappa = 1) we measure
# max ||w_D - w_D'|| over random neighbours (a random row replaced by a random point of the domain with
# a random label) and over an adversarial search (random starts including label flips of every row,
# then Nelder-Mead on the replacement point).  Every solve is certified by the solver to within
# 1e-3 of the sensitivity.

# %%
settings = [E.SensitivitySetting(loss, feat, C, n=P["sens_n"]) for loss in ("hinge", "huber", "logistic")
            for feat in ("linear", "rff") for C in (1.0, 10.0)]
sens = E.sensitivity_experiment(settings, n_random=P["sens_random"], n_adv=P["sens_adv"], maxiter=P["sens_maxiter"],
                                random_state=seed, n_jobs=P["n_jobs"])
best = sens.loc[sens.groupby("setting")["l2"].idxmax()]
best[["setting", "method", "l2", "lemma9_l2", "tight_l2", "ratio_l2", "l1", "lemma9_l1", "ratio_l1"]]

# %%
fig, ax = plt.subplots(figsize=(9, 4.5))
plot = sens.assign(ratio=sens["l2"] / sens["lemma9_l2"])
sns.barplot(data=plot, y="setting", x="ratio", hue="method", ax=ax, orient="h")
ax.axvline(1.0, color="crimson", lw=2, label="Lemma 9 (4LC kappa / n)")
ax.axvline(0.5, color="k", ls="--", lw=1.5, label="2LC kappa / n")
ax.set_xlabel("largest measured ||w_D - w_D'||_2 / Lemma 9's bound (unitless)")
ax.set_ylabel("")
ax.legend(loc="lower right", fontsize=8)
ax.set_title("Lemma 9: measured replace-one sensitivity against the bound")
save(fig, "lemma_9_sensitivity")

# %%
for _, r in best.iterrows():
    checks.at_most("Lemma 9", f"max ||w_D - w_D'||_2, {r.setting}", bound=r.lemma9_l2, measured=r.l2,
                   detail=f"{r.method}; ratio {r.ratio_l2:.3f}; 2LC kappa/n = {r.tight_l2:.4g}")
    l1_best = sens[sens.setting == r.setting]["l1"].max()
    checks.at_most("Lemma 9", f"max ||w_D - w_D'||_1, {r.setting}", bound=r.lemma9_l1, measured=l1_best,
                   detail=f"ratio {l1_best / r.lemma9_l1:.3f} (F = {r.F})")
checks.at_most("Lemma 9 (tight constant)", "largest measured L2 change / (2 L C kappa / n), all settings", bound=1.0,
               measured=float((sens.l2 / sens.tight_l2).max()), rtol=1e-6,
               detail="the strong-convexity bound 2LC kappa/n is attained (to round-off and the certified solver error) "
               "but never exceeded; Lemma 9's 4LC kappa/n is loose by 2 (ERRATA)")

# %% [markdown]
# The measured sensitivity never exceeds Lemma 9's bound, and it never exceeds **half** of it: the
# replace-one sensitivity of a 1-strongly convex regularised minimiser is at most 2 L C kappa / n
# (the argument of Chaudhuri et al.'s Corollary 8 with Lambda = 1/C).  The paper's own Lemma 22
# database approaches that value (below), so Lemma 9's constant is loose by exactly 2 and
# PrivateSVM-Finite adds twice the noise it needs.  This is not an error in the privacy claim.
#
# ### Theorem 11: utility of PrivateSVM-Finite
#
# With lambda <= eps / (2 Phi (F + ln 1/delta)) the release is (eps, delta)-useful.  On the linear map
# over the unit ball (|x_i| <= Phi = 1) the sup over M of |<mu, x>| is exactly ||mu||_2, so the failure
# probability can be sampled exactly.

# %%
t11 = E.theorem_11_experiment([(0.5, 0.1, 2), (1.0, 0.05, 10), (0.2, 0.01, 50)], draws=P["theorem11_draws"], random_state=seed)
t11

# %%
for _, r in t11.iterrows():
    checks.at_most("Theorem 11", f"P(sup_M |f-hat - f| > eps), eps={r.eps:g}, delta={r.delta:g}, F={r.F}", bound=r.delta,
                   measured=r.p_hat, detail=f"{r.failures}/{r.draws} failures, 95% CP [{r.cp_low:.2g}, {r.cp_high:.2g}]; lambda = {r.lam:.4g}")

# %% [markdown]
# ## 4. PrivateSVM (Algorithm 3): translation-invariant kernels
#
# Algorithm 3 learns in the random feature space of Eq. (6), where ||phi-hat(x)|| = 1 exactly, and
# releases the noisy weights together with the frequencies.  Corollary 12: lambda = 2^2.5 L C sqrt(d-hat)
# / (beta n) (Theorem 10 with F = 2 d-hat and kappa = 1).

# %%
svm = PrivateSVM(epsilon=1.0, C=10.0, kernel="rbf", sigma=0.5, n_components=50, random_state=seed).fit(X_toy, y_toy)
print(svm.guarantee_)
print(f"released: coef_ {svm.coef_.shape}, frequencies_ {svm.frequencies_.shape}; lambda = {svm.noise_scale_:.4g} "
      f"= Corollary 12's {R.corollary_12_noise_scale(1.0, 1, 10.0, 50, 300):.4g}")

# %% [markdown]
# ### Lemma 18 (Rahimi and Recht): uniform kernel approximation
#
# sup over M of |k-hat - k| depends only on differences D = x - y, so we take the sup over a grid of
# M - M for M = [0, 1]^2 (diam sqrt 2).  At Lemma 18's d-hat for eps = 0.1, delta = 0.1 we count how often
# the sup reaches eps; along a sweep of d-hat we show the median sup error.  The Laplacian kernel's
# spectral law (Cauchy) has no second moment, so sigma_p = inf and Lemma 18 gives no finite d-hat.

# %%
kernels = [RBFKernel(1.0), CauchyKernel(1.0), LaplacianKernel(1.0)]
l18 = E.lemma_18_experiment(kernels, eps=0.1, delta=0.1, draws=P["lemma18_draws"], d_hats=P["lemma18_sweep"],
                            grid=P["lemma18_grid"], random_state=seed)
l18[["kernel", "kind", "d_hat", "lemma_d_hat", "draws", "failures", "median_sup", "max_sup", "cp_high"]]

# %%
fig, ax = plt.subplots(figsize=(7, 4))
sns.lineplot(data=l18[l18.kind == "sweep"], x="d_hat", y="median_sup", hue="kernel", marker="o", ax=ax)
for _, r in l18[l18.kind == "lemma"].iterrows():
    ax.scatter([r.d_hat], [r.median_sup], marker="*", s=180, zorder=5, label=f"{r.kernel} at Lemma 18's d-hat")
ax.axhline(0.1, color="crimson", ls="--", label="eps = 0.1")
ax.set(xscale="log", yscale="log", xlabel="d-hat (number of frequencies)", ylabel="median sup_D |k-hat(D) - k(D)|",
       title="Lemma 18: uniform approximation error on M = [0, 1]^2")
ax.legend(fontsize=8)
save(fig, "lemma_18_uniform_error")

# %%
for _, r in l18[l18.kind == "lemma"].iterrows():
    checks.at_most("Lemma 18", f"P(sup_M |k-hat - k| >= 0.1) at d-hat = {r.d_hat} ({r.kernel})", bound=r.delta,
                   measured=r.p_hat, detail=f"{r.failures}/{r.draws}, 95% CP upper {r.cp_high:.3g}; median sup {r.median_sup:.3g}, "
                   "grid sup (a lower estimate of the true sup)")
lap = l18[(l18.kernel == "laplacian")]
checks.skip("Lemma 18", "Laplacian kernel (Table 1): sigma_p^2 = E||w||^2 is infinite for the Cauchy spectral law",
            f"the lemma (and Theorem 13) give no finite d-hat; measured median sup error still falls with d-hat: "
            + ", ".join(f"{int(a)}: {b:.3g}" for a, b in zip(lap.d_hat, lap.median_sup)))

# %% [markdown]
# ### Lemma 16 and Lemma 17: from kernel closeness to classifier closeness
#
# Lemma 16 (strong convexity turns small excess risk into small distance) is checked on the hinge SVM
# primal at random points around the certified minimiser.  Lemma 17's proof shows
# ||f* - g*||_inf <= eps' Lambda + 2 sqrt((CL + Lambda/2) Lambda eps') when ||k - k-hat||_inf <= eps'; we
# compute the exact RBF-kernel SVM f* (cvxpy dual) and the random-feature SVM g*, measure both sup norms
# on grids, and compare.

# %%
l16 = E.lemma_16_experiment(n_points=P["lemma16_points"], random_state=seed)
checks.at_most("Lemma 16", "max ||w - w*|| / sqrt(2 (R[w] - R[w*])) over random w (hinge SVM, a = 1)", bound=1.0,
               measured=float(l16.ratio.max()), rtol=1e-6,
               detail=f"{len(l16)} points, excess risk from {l16.excess_risk.min():.2g} to {l16.excess_risk.max():.2g}; equality is "
               "attained where the hinge terms are locally flat (round-off allowance 1e-6)")
l17 = E.lemma_17_experiment(P["lemma17_d_hats"], draws=P["lemma17_draws"], random_state=seed)
l17.groupby("d_hat")[["eps_prime", "sup_f_minus_g", "bound", "ratio"]].median()

# %%
fig, ax = plt.subplots(figsize=(6.5, 4))
ax.scatter(l17.eps_prime, l17.sup_f_minus_g, label="measured ||f* - g*||_inf on M", s=18)
e = np.linspace(max(l17.eps_prime.min() * 0.8, 1e-4), l17.eps_prime.max() * 1.2, 100)
ax.plot(e, [R.lemma_17_sup_distance(x, l17.Lambda.max(), 2.0) for x in e], color="crimson", label="Lemma 17's proof bound")
ax.set(xscale="log", yscale="log", xlabel="eps' = measured sup |k - k-hat| on M - M", ylabel="sup_M |f*(x) - g*(x)|",
       title="Lemma 17: RBF SVM against its random-feature approximation")
ax.legend(fontsize=8)
save(fig, "lemma_17_function_distance")
checks.at_most("Lemma 17", "max over draws of ||f* - g*||_inf / (eps' Lambda + 2 sqrt((C L + Lambda/2) Lambda eps'))", bound=1.0,
               measured=float(l17.ratio.max()), detail=f"{len(l17)} draws, d-hat in {sorted(set(l17.d_hat))}; median ratio {l17.ratio.median():.3g}")

# %% [markdown]
# ### Corollary 15 and Theorem 13: utility of PrivateSVM
#
# Corollary 15 bounds the noise's effect; Theorem 13 combines it with Lemmas 17 and 18 and requires
# d-hat >= 4(d+2)/theta(eps) ln(2^9 (sigma_p diam M)^2 / (delta theta(eps))).  For any non-vacuous eps
# (smaller than ||f*||_inf, so that the zero function is *not* useful) theta(eps) is tiny and the
# required d-hat runs into the hundreds of millions.  We therefore (i) sample Corollary 15 exactly (using
# the over-all-x bound d-hat^-1/2 sum_j ||(mu_2j-1, mu_2j)||, which over-counts failures) and (ii) run
# the end-to-end failure probability of Theorem 13 at affordable d-hat with the theorem's lambda.

# %%
c15 = E.corollary_15_experiment([(0.5, 0.1, 10), (1.0, 0.05, 100), (0.2, 0.01, 500)], draws=P["corollary15_draws"], random_state=seed)
for _, r in c15.iterrows():
    checks.at_most("Corollary 15", f"P(||f-hat* - f-tilde||_inf > eps/2), eps={r.eps:g}, delta={2 * r.delta:g}, d-hat={r.d_hat}",
                   bound=r.delta, measured=r.p_hat, detail=f"{r.failures}/{r.draws}, CP upper {r.cp_high:.2g}; bound over all x (conservative)")
t13 = E.theorem_13_experiment(P["theorem13_d_hats"], draws=P["theorem13_draws"], random_state=seed)
t13[["d_hat", "lam", "eps", "f_star_sup", "theorem_d_hat", "draws", "failures", "median_sup", "cp_high"]]

# %%
worst = t13.iloc[-1]
checks.at_most("Theorem 13", f"P(||f* - f-hat*||_inf > eps) with the theorem's lambda, d-hat = {int(worst.d_hat)} (d = 1, RBF)",
               bound=worst.delta, measured=worst.p_hat,
               detail=f"{int(worst.failures)}/{int(worst.draws)}, CP upper {worst.cp_high:.2g}; eps = ||f*||/2 = {worst.eps:.3g}; "
               f"the d-hat the theorem requires is {worst.theorem_d_hat:.3g} (too large to sample; failures by d-hat: "
               + ", ".join(f"{int(a)}: {int(b)}" for a, b in zip(t13.d_hat, t13.failures)) + ")")

# %% [markdown]
# ## 5. Hinge loss: upper bounds on the optimal differential privacy
#
# **Corollary 19** combines Theorems 10 and 11.  Theorem 11's Chernoff step needs
# lambda <= eps / (2 Phi (F ln 2 + ln 1/delta)) and Theorem 10 needs beta >= 4 L C kappa sqrt(F) / (lambda n),
# so the combination is 8 kappa Phi C L sqrt(F) (F ln 2 + ln 1/delta) / (n eps): the printed corollary lacks
# the sqrt(F).  The asymptotic O(C/(eps n) log 1/delta) is unaffected for fixed F.
#
# **Corollary 20** specialises Theorem 13 to the hinge loss with theta(eps) = min{1, eps^4 / (2^12 C^4)},
# claimed to lower-bound Theorem 13's theta with Lambda = C, L = 1.
#
# **Theorem 21** claims beta* = O(C / (eps^3 n) log^1.5 (C / (delta eps))).  Its proof drops the C^4 of
# Corollary 20's d-hat and reads Corollary 15's lambda <= eps / (2^4 ln(2) sqrt(d-hat)) as
# eps / (2^4 ln(2 sqrt(d-hat))).  Computing the bound from the stated constants gives
# beta = 2^2.5 C sqrt(d-hat) / (lambda n) = 2^6.5 ln 2 C d-hat / (eps n) = O(C^5 / (eps^5 n) log(C / (delta eps))).

# %%
F, kappa, Phi, delta = 10, 1.0, 1.0, 0.05
printed = R.corollary_19_beta_upper(0.1, delta, 10.0, 10_000, F, kappa, Phi)
derived = R.corollary_19_beta_upper_derived(0.1, delta, 10.0, 10_000, F, kappa, Phi)
lam11 = R.theorem_11_max_noise_scale(0.1, delta, Phi, F) * (F + math.log(1 / delta)) / (F * math.log(2) + math.log(1 / delta))
beta_mech = R.theorem_10_noise_scale(1.0, 1, 10.0, kappa, F, 10_000) / lam11
checks.agrees("Corollary 19", "beta bound implied by Theorems 10 + 11 (F = 10, eps = 0.1, delta = 0.05, C = 10, n = 1e4)",
              expected=printed, measured=derived, ok=math.isclose(printed, derived),
              detail=f"PrivateSVM-Finite at Theorem 11's largest lambda ({lam11:.3g}) is only {beta_mech:.4g}-DP: "
              f"sqrt(F) = {math.sqrt(F):.3g} times the printed bound")
th20 = R.corollary_20_theta(0.3, 2.0)
th13 = R.theorem_13_theta(0.3, 2.0, 2.0, 1.0)
checks.at_most("Corollary 20", "stated theta(eps) <= Theorem 13's theta with Lambda = C, L = 1 (eps = 0.3, C = 2)", bound=th13, measured=th20,
               detail=f"2^12 = 4096 >= 2^4 (1 + sqrt 6)^4 = {2**4 * (1 + math.sqrt(6))**4:.1f}")
rates = E.rate_table()
rates

# %%
# NBVAL_CHECK_OUTPUT
print(rates.round(2).to_string(index=False))

# %%
TOL = 0.25  # a claimed O(.) rate holds when log(explicit / claimed) has slope within 0.25 of 0
for _, r in rates.iterrows():
    holds = abs(r.slope_explicit_over_claimed) <= TOL
    claim = r.statement if r.statement.startswith(("Corollary", "Theorem")) else r.statement.split(" (")[0]
    checks.add(claim, f"{r.statement}: log-log slope in {r.variable} over {r.range}",
               bound=f"claimed exponent {r.claimed_exponent:g}", measured=round(r.slope_explicit, 3),
               status="holds" if holds else "violated",
               detail=f"slope of explicit/claimed = {r.slope_explicit_over_claimed:.3f} (tolerance {TOL})")

# %%
fig, axes = plt.subplots(1, 2, figsize=(11, 4))
eps_grid = np.logspace(-3, -1, 30)
sp = math.sqrt(2.0)
axes[0].loglog(eps_grid, [R.theorem_21_beta_upper_derived(e, 0.05, 1.0, 1e4, 2, sp, 2.0) for e in eps_grid], label="explicit (stated constants)")
axes[0].loglog(eps_grid, [R.theorem_21_beta_paper_proof(e, 0.05, 1.0, 1e4, 2, sp, 2.0) for e in eps_grid], ls="--", label="the proof's lambda (misread)")
axes[0].loglog(eps_grid, [R.theorem_21_claimed_rate(e, 0.05, 1.0, 1e4) * 1e6 for e in eps_grid], ls=":", label="claimed rate (x 1e6)")
axes[0].set(xlabel="usefulness eps", ylabel="upper bound on beta*", title="Theorem 21 (C = 1, n = 1e4)")
axes[0].legend(fontsize=8)
n_grid = np.logspace(3, 7, 30)
axes[1].loglog(n_grid, [R.theorem_21_beta_upper_derived(R.remark_1_C(n) / (4 * n), 0.05, R.remark_1_C(n), n, 2, sp, 2.0) for n in n_grid], label="explicit, eps = C/(4n)")
axes[1].loglog(n_grid, [n * math.log(n / 0.05) ** 1.5 * 1e9 for n in n_grid], ls=":", label="claimed O(n log^1.5(n/delta)) (x 1e9)")
axes[1].set(xlabel="n (C = sqrt n, Remark 1)", ylabel="upper bound on beta*", title="after Theorem 26")
axes[1].legend(fontsize=8)
save(fig, "rates_theorem_21")

# %% [markdown]
# ## 6.1 Lower bound for the linear kernel: Lemma 22, Figure 1, Theorem 23
#
# Lemma 22 builds two neighbouring databases on the line whose SVMs differ by 2 eps at x = 1.  We solve
# both with the cvxpy dual and compare with the proof's closed forms w1* = C(M(n-2)+m)/n and
# w2* = C(Mn-m)/n, across n and C.  With the proof's choice eps = sqrt(C)/(2n) the separation is
# *exactly* sqrt(C)/n, so the strict ">" of the statement needs a slightly larger eps (allowed up to
# sqrt(C / (2n(2n-1)))).

# %%
l22 = E.lemma_22_experiment([3, 10, 101], [0.1, 1.0, 10.0])
l22

# %%
# NBVAL_CHECK_OUTPUT
print(l22[["n", "C", "condition", "w1_closed", "w2_closed", "separation_closed", "claimed_separation"]].round(6).to_string(index=False))
print("max |closed form - QP| =", f"{l22.max_abs_diff.max():.1e}" if l22.max_abs_diff.max() > 1e-7 else "< 1e-7")

# %%
checks.at_most("Lemma 22", "closed-form w1*, w2* against the QP (9 databases: n in {3, 10, 101}, C in {0.1, 1, 10})",
               bound=1e-6, measured=float(l22.max_abs_diff.max()), detail="cvxpy/Clarabel dual, tolerance 1e-10")
checks.at_least("Lemma 22", "min over the 9 databases of ||f1* - f2*||_inf / (sqrt(C)/n) (QP, eps just below sqrt(C/(2n(2n-1))))",
                bound=1.0, measured=float((l22.separation_strict_qp / l22.claimed_separation).min()),
                detail="the statement's strict '>' holds for eps in (sqrt(C)/(2n), sqrt(C/(2n(2n-1))))")
checks.at_least("Lemma 22 (proof)", "separation / (sqrt(C)/n) with the proof's choice eps = sqrt(C)/(2n), closed form", bound=1.0 + 1e-12,
                measured=float((l22.separation_closed / l22.claimed_separation).max()),
                detail="the proof's eps gives exactly sqrt(C)/n, not the strict '>' it concludes (harmless, see ERRATA)")
tight = float((l22.separation_at_1 / l22.lemma9_l2).max())
checks.at_most("Lemma 9", "Lemma 22's databases: |w1* - w2*| / Lemma 9's L2 bound (kappa = M)", bound=1.0, measured=tight,
               detail=f"= (M - m)/(2M) = 1/4 with the proof's m = M/2; m -> 0 approaches 1/2 (see the privacy audit)")

# %%
def lemma22_rhs(w, n, C, M, m, label):
    base = np.where(w < 1 / M, C * M * (n - 1) / n, 0.0)
    if label == 1:
        return base + C * (m - M) / n
    return base + np.where(w < 1 / (M - m), C * (M - m) / n, 0.0)


n22, C22 = 10, 1.0
db = R.lemma_22_databases(n22, C22)
w1c, w2c, _ = R.lemma_22_closed_form(n22, C22, db.M, db.m)
fig, axes = plt.subplots(1, 2, figsize=(11, 4), sharey=True)
w = np.linspace(0, 2.3 / db.M, 2000)
for ax, label, wstar in ((axes[0], 1, w1c), (axes[1], 2, w2c)):
    ax.plot(w, lemma22_rhs(w, n22, C22, db.M, db.m, label), label="y = w - subgradient (RHS of the KKT condition)")
    ax.plot(w, w, color="k", lw=1, label="y = w")
    ax.scatter([wstar], [wstar], color="crimson", zorder=5, s=60, label=f"w{label}* = {wstar:.3f} (QP and closed form)")
    ax.axvline(1 / db.M, color="grey", ls=":", lw=1)
    ax.set(xlabel="w", title=f"D{label}: x_n = M - m, y_n = {'-1' if label == 1 else '+1'} (n = {n22}, C = {C22:g})")
    ax.legend(fontsize=8, loc="upper right")
axes[0].set_ylabel("y")
fig.suptitle("Figure 1: the SVM solution on Lemma 22's databases is where the step function meets the diagonal", y=1.03)
save(fig, "figure_1")

# %% [markdown]
# **Theorem 23** turns the separation into beta* >= ln((1 - delta)/delta) for eps < sqrt(C)/(2n).
# **Remark 24** restates it as "either eps >= sqrt(C)/(2n) or delta >= exp(-beta)", but solving
# beta >= ln((1-delta)/delta) for delta gives delta >= 1/(1 + e^beta), which is smaller: the remark is not
# equivalent to the theorem (it claims more than the theorem proves).  As a consistency check the
# upper bound of Corollary 19 (as derived) must exceed Theorem 23's lower bound inside its eps range.

# %%
betas = np.array([0.1, 1.0, 3.0, 10.0])
gap24 = np.max(np.array([R.remark_24_min_delta(b) for b in betas]) - np.array([R.theorem_23_min_delta(b) for b in betas]))
checks.agrees("Remark 24", "'delta >= exp(-beta)' is equivalent to Theorem 23's beta >= ln((1-delta)/delta)",
              expected="equal delta thresholds", measured=f"differ by up to {gap24:.3g}", ok=gap24 < 1e-12,
              detail="Theorem 23 gives delta >= 1/(1 + e^beta); e.g. beta = 1: 0.269 vs exp(-1) = 0.368")
n23, C23, d23 = 100, 10.0, 0.05
eps23 = 0.99 * R.theorem_23_max_epsilon(C23, n23)
upper23 = R.corollary_19_beta_upper_derived(eps23, d23, C23, n23, 1, 1.0, 1.0)
checks.at_least("Theorem 23", "Corollary 19 (derived, F = 1) upper bound >= Theorem 23 lower bound inside eps < sqrt(C)/(2n)",
                bound=R.theorem_23_beta_lower(d23), measured=upper23, detail=f"n = {n23}, C = {C23:g}, eps = {eps23:.3g}, delta = {d23}")

# %% [markdown]
# ## 6.2 Lower bound for the RBF kernel: Lemma 25 and Theorem 26
#
# Lemma 25 places n-1 negatives at the origin and one positive on the unit circle at angle 2 pi i / N.
# The SVM duals do not depend on i.  Solving the n-variable dual with cvxpy shows: the proof's case
# analysis is right except that its fourth case prints alpha_1 = (1 + C gamma / n)/(n-1)^2 where the
# stationary point is (1 + C gamma / n)/(n-1); the nearest-neighbour kernel value is printed as
# gamma^4 exp(sin^2(pi/N)) where it is exp(-2 sin^2(pi/N) / sigma^2); and for sigma in
# (0.68, 0.85) the proof's "N > 4" fails (N = 4), although gamma < 1/2, which is what the argument
# needs, still holds.  The separation C/(2n) holds in every case.

# %%
l25 = E.lemma_25_experiment([10, 40], [1.0, 5.0], [0.3, 0.5, 0.8])
l25[["n", "C", "sigma", "N", "case", "alpha_1_qp", "alpha_1_proof", "alpha_1_printed", "alpha_n_qp", "neighbour_k", "neighbour_k_printed", "min_pairwise_sup", "claimed_separation"]]

# %%
# NBVAL_CHECK_OUTPUT
print(l25[["n", "C", "sigma", "N", "case", "alpha_1_proof", "alpha_1_printed", "neighbour_k", "neighbour_k_printed"]].round(5).to_string(index=False))

# %%
err_proof = float(np.max(np.abs(l25.alpha_1_qp - l25.alpha_1_proof)) + np.max(np.abs(l25.alpha_n_qp - l25.alpha_n_proof)))
checks.at_most("Lemma 25", "duals of the proof's case analysis (case-4 stationary point corrected) against the QP", bound=1e-6,
               measured=err_proof, detail="n in {10, 40}, C in {1, 5}, sigma in {0.3, 0.5, 0.8}")
err_printed = float(np.max(np.abs(l25.alpha_1_qp - l25.alpha_1_printed)))
checks.at_most("Lemma 25", "case 4 as printed: alpha_1 = (1 + C gamma/n)/(n-1)^2 against the QP", bound=1e-6, measured=err_printed,
               detail="the printed value is (n - 1) times too small; the stationary point is (1 + C gamma/n)/(n-1)")
err_k = float(np.max(np.abs(l25.neighbour_k - l25.neighbour_k_printed)))
checks.at_most("Lemma 25", "nearest-neighbour kernel value 'gamma^4 exp(sin^2(pi/N))' against exp(-2 sin^2(pi/N)/sigma^2)", bound=1e-9,
               measured=err_k, detail="a typo in the proof; the bound 1 - k >= 1/2 it feeds still holds for the true value")
N_small = l25[l25.sigma == 0.8].N.min()
checks.at_least("Lemma 25", "N = floor((2/sigma) sqrt(2/ln 2)) > 4 for sigma < sqrt(1/(2 ln 2)) (sigma = 0.8)", bound=5, measured=int(N_small),
                detail="N = 4 for sigma in (0.679, 0.849); gamma < 1/2 holds anyway, so the separation survives")
checks.at_least("Lemma 25", "min over pairs of ||f_i - f_j||_inf / (C/(2n)) (grid + data points)", bound=1.0,
                measured=float((l25.min_pairwise_sup / l25.claimed_separation).min()), detail="12 configurations")
checks.at_least("Theorem 26", "Theorem 21 (explicit) upper bound >= Theorem 26 lower bound (sigma = 0.5, n = 100, C = 10, eps = C/(8n))",
                bound=R.theorem_26_beta_lower(0.05, 0.5),
                measured=R.theorem_21_beta_upper_derived(10.0 / 800, 0.05, 10.0, 100, 2, math.sqrt(2) / 0.5, 2.0),
                detail=f"N = {R.lemma_25_N(0.5)}")

# %% [markdown]
# ## Appendix A, Figure 2: the SVM is not a sum over the data
#
# Proposition 27: moving the positive support vector changes which positives are support vectors and
# moves w, while moving a non-support vector leaves w unchanged, so w cannot be a sum of a fixed
# function over the examples.  (A bias is included here through a constant feature; C = 1e4.)

# %%
a = E.appendix_a_construction()
fig, axes = plt.subplots(1, 2, figsize=(11, 4.2), sharey=True)
for ax, pos, wv, sv, title in ((axes[0], a["pos"], a["w"], a["sv"], "original database D"),
                               (axes[1], a["pos_moved_sv"], a["w_moved_sv"], a["sv_moved"], "D': the positive support vector moved")):
    neg = a["neg"]
    ax.scatter(neg[:, 0], neg[:, 1], marker="_", s=120, color="tab:blue", label="negative")
    ax.scatter(pos[:, 0], pos[:, 1], marker="+", s=120, color="tab:red", label="positive")
    allx = np.vstack([neg, pos])
    ax.scatter(allx[sv, 0], allx[sv, 1], s=260, facecolors="none", edgecolors="k", label="support vector")
    xs = np.linspace(-1.2, 1.2, 10)
    for level, style in ((0, "-"), (1, "--"), (-1, "--")):
        ax.plot(xs, (level - wv[2] - wv[0] * xs) / wv[1], "k" + style, lw=1)
    ax.set(xlim=(-1.3, 1.3), ylim=(-1.0, 1.2), xlabel="x_1", title=title)
axes[0].set_ylabel("x_2")
axes[0].legend(fontsize=8, loc="lower left")
fig.suptitle(f"Figure 2: ||w' - w|| = {a['change_moved_sv']:.3f} after moving a support vector; "
             f"{a['change_moved_non_sv']:.1e} after moving a non-support vector", y=1.03)
save(fig, "figure_2")
checks.at_least("Proposition 27", "||w(D') - w(D)|| when the positive support vector moves", bound=1e-6, measured=a["change_moved_sv"],
                detail=f"moving a non-support vector changes w by {a['change_moved_non_sv']:.1e}; the support set changes")

# %% [markdown]
# ## Privacy audit of both mechanisms
#
# A statistical test of the privacy claim itself: on a neighbouring pair we draw many releases from
# each database (the non-private solution is computed once per database), score them with the Laplace
# log-likelihood ratio and compute a 95% Clopper-Pearson lower bound on epsilon (threshold chosen on one
# half of the samples, evaluated on the other).  A bound above the claimed epsilon would refute the
# claim.
#
# * PrivateSVM-Finite, linear kernel, d = 1: Lemma 22's construction with M = 1 and m = 0.01, the
#   pair that nearly attains the tight sensitivity 2C/n, calibrated with Theorem 10.
# * PrivateSVM (RBF, d-hat = 10, F = 20): the neighbour found by the adversarial search.
# * A negative control: a mechanism claiming epsilon with half the noise the tight sensitivity needs;
#   the audit must catch it.

# %%
eps_audit = 1.0
audit_finite = E.audit_lemma_22_pair(eps_audit, P["audit_releases"], random_state=seed)
audit_rff = E.audit_rff_adversarial_pair(eps_audit, P["audit_releases"], n_adv=P["sens_adv"], maxiter=P["sens_maxiter"], random_state=seed)
# negative control: calibrated to half of this pair's actual sensitivity (the true epsilon is 2)
half_noise = audit_finite["pair_l1"] / (2 * eps_audit)
audit_cheat = E.audit_lemma_22_pair(eps_audit, P["audit_releases"], noise_scale=half_noise, random_state=seed)
audits = pd.DataFrame([dict(mechanism="PrivateSVM-Finite (Lemma 22 pair)", **audit_finite),
                       dict(mechanism="PrivateSVM (adversarial pair)", **audit_rff),
                       {"mechanism": "negative control: half the needed noise", **audit_cheat, "epsilon_claimed": eps_audit}])
audits[["mechanism", "epsilon_claimed", "epsilon_lb", "epsilon_hat", "epsilon_pair_exact", "pair_l1", "lemma9_l1", "n_releases"]]

# %%
checks.at_most("Theorem 10", "95% Clopper-Pearson lower bound on epsilon, PrivateSVM-Finite on Lemma 22's pair (M = 1, m = 0.01)",
               bound=eps_audit, measured=audit_finite["epsilon_lb"],
               detail=f"{audit_finite['n_releases']} releases per database; exact privacy loss of this pair "
               f"{audit_finite['epsilon_pair_exact']:.3f} (= Delta_pair / lambda: Lemma 9 is loose by 2)")
checks.at_most("Corollary 12", "95% Clopper-Pearson lower bound on epsilon, PrivateSVM (RBF, d-hat = 10) on the adversarial pair",
               bound=eps_audit, measured=audit_rff["epsilon_lb"],
               detail=f"pair L1 change {audit_rff['pair_l1']:.3g} vs Lemma 9 L1 bound {audit_rff['lemma9_l1']:.3g}")
checks.add("audit (negative control)", "the audit detects a mechanism with half the noise needed (true epsilon 2)",
           bound=f"> {eps_audit}", measured=audit_cheat["epsilon_lb"], status="holds" if audit_cheat["epsilon_lb"] > eps_audit else "violated",
           detail="validates the audit's power; not a claim of the paper")

# %% [markdown]
# The audit's lower bounds stay below the claimed epsilon = 1.  On the near-worst-case linear pair
# the bound approaches the pair's exact privacy loss of about 0.5, the factor 2 of Lemma 9's constant.
# In the random-feature space the sensitivity is spread over 20 coordinates and the L1 change is far
# below sqrt(F) times the L2 bound, so the mechanism is much more private than claimed.  The negative
# control is caught.
#
# ## Privacy and utility on Adult (RBF kernel)
#
# PrivateSVM with an RBF kernel (sigma = 0.5) on Adult (Chaudhuri et al.'s preprocessing, 80/20 split):
# test accuracy and the sup-norm distance to the non-private random-feature SVM (over the test points)
# against epsilon and d-hat, several seeds.  C = 1000 (smaller C makes the bias-free SVM predict the
# majority class).  Baselines: the non-private random-feature SVM and the majority class.

# %%
adult = E.adult_privacy_utility([0.1, 0.3, 1, 3, 10, 30, 100], P["adult_d_hats"], range(P["adult_seeds"]), C=1000.0, sigma=0.5,
                                n_rows=P["adult_rows"], n_draws=P["adult_draws"], random_state=seed)
private = adult[adult.method == "PrivateSVM"]
summary = private.groupby(["d_hat", "epsilon"]).agg(accuracy=("accuracy", "mean"), accuracy_sd=("accuracy", "std"),
                                                    sup_distance=("sup_distance", "median")).reset_index()
summary

# %%
fig, axes = plt.subplots(1, 2, figsize=(12, 4.2))
sns.lineplot(data=private, x="epsilon", y="accuracy", hue="d_hat", marker="o", errorbar="sd", ax=axes[0], palette="viridis")
for d_hat, grp in adult[adult.method != "PrivateSVM"].groupby("d_hat"):
    axes[0].axhline(grp.accuracy.mean(), ls="--", lw=1, color="grey")
axes[0].axhline(adult.majority.iloc[0], color="crimson", ls=":", label="majority class")
axes[0].set(xscale="log", xlabel="epsilon (beta)", ylabel="test accuracy", title="PrivateSVM on Adult (dashed: non-private RFF SVM)")
axes[0].legend(title="d-hat", fontsize=8)
sns.lineplot(data=private, x="epsilon", y="sup_distance", hue="d_hat", marker="o", estimator="median", errorbar=("pi", 80), ax=axes[1], palette="viridis")
axes[1].set(xscale="log", yscale="log", xlabel="epsilon (beta)", ylabel="max over test points |f-hat(x) - f-tilde(x)|",
            title="distance to the non-private SVM")
save(fig, "adult_privacy_utility")
n_train = int(adult.n_train.iloc[0])
best_acc = summary[summary.epsilon == 100].accuracy.max()
checks.add("Section 4 (utility on data)", f"PrivateSVM on Adult (n_train = {n_train}): accuracy at epsilon = 100 vs non-private",
           bound=round(float(adult[adult.method != "PrivateSVM"].accuracy.mean()), 4), measured=round(float(best_acc), 4), status="holds"
           if best_acc >= adult.majority.iloc[0] else "violated",
           detail="illustration (the paper has no experiments): useful only for large epsilon at this n")

# %% [markdown]
# ## Summary
#
# All checks of this notebook, as written to `paper_figures/rubinstein2012/checks.csv`.  Violated
# rows are explained in `ERRATA.md`.

# %%
path = checks.write(OUT)
result = checks.frame()
print(checks.summary())
result[["claim", "check", "bound", "measured", "status"]]
