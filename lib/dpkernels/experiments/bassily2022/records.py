"""The verdicts of the Bassily, Mohri and Suresh (2022) notebook: each ``record_*`` function turns an experiment's results
into rows of ``checks.csv`` through the three-valued rules of :mod:`dpkernels.verdicts` (holds = confirmed, violated =
refuted, inconclusive = neither; a NaN is never a hold), with the criterion in the row's ``detail``.

Kinds: ``measured`` rows check a statement of the paper against a measurement; rows that test our substitutes (the
DP-ERM step standing in for the unrecovered Algorithm 4, our JL transforms, our private choice of rho) or restate a
formula are ``consistency`` or ``analytic``; our own goals are ``target``; statements that cannot be checked (the
algorithm or its premise out of reach) are ``skipped`` rows with the reason.  The statements are quoted in
``docs/statements/bassily2022.md``.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
import pandas as pd

from dpkernels import verdicts
from dpkernels.bounds import bassily as B
from dpkernels.report import Checks
from dpkernels.verdicts import Outcome

from .statements import ABLATION

__all__ = [
    "BETA",
    "DIM_REL_MARGIN",
    "MIN_GROWTH",
    "FREE_SHARE",
    "exact_outcome",
    "mean_difference",
    "theorem_5_1_parts",
    "record_conditions",
    "record_theorem_5_1",
    "record_out_of_scope",
    "record_polynomial",
    "record_jl",
    "record_alg2_audits",
    "record_alg1_audit",
    "record_theorem_3_2",
    "record_epsilon_free",
    "record_dimension",
    "record_theorem_4_1",
    "record_theorem_4_2",
    "record_rho_selection",
]

#: The theorems' confidence parameter (the failure probability a rate check tests).
BETA = 0.05
#: Dimension independence: the error at the largest d minus the error at the smallest d > eps m, inside
#: +-DIM_REL_MARGIN x the error at that d (TOST; ours: a change of a quarter of the error).  A fixed +-0.05 was larger
#: than the errors it tested (0.035-0.041), so it could not fail.
DIM_REL_MARGIN = 0.25
#: The growth a "the error grows with d" check is meant to see (its power is stated against it).
MIN_GROWTH = 0.1
#: "Privacy beyond epsilon = 1 essentially for free": at every epsilon > 1, private minus non-private error inside
#: +-FREE_SHARE times that difference at epsilon = 1 (TOST).  A margin smaller than the cost it must tell apart: the
#: fixed +-0.02 used before was larger than the cost at epsilon = 1 itself (0.0075), so the check could not fail on
#: the claim (issue 28's review).
FREE_SHARE = 0.25


def exact_outcome(ok: bool, criterion: str, estimate: float = math.nan) -> Outcome:
    """An exact computation (no sampling error): holds when ``ok``, violated otherwise."""
    return Outcome(verdicts.verdict(bool(ok), not ok), criterion, float(estimate))


def mean_difference(a: Sequence[float], b: Sequence[float]) -> tuple[float, float, int]:
    """mean(b) - mean(a) of two independent samples, its standard error and Welch's degrees of freedom."""
    a, b = np.asarray(a, float), np.asarray(b, float)
    va, vb = a.var(ddof=1) / len(a), b.var(ddof=1) / len(b)
    se = math.sqrt(va + vb)
    df = (va + vb) ** 2 / (va**2 / (len(a) - 1) + vb**2 / (len(b) - 1)) if va + vb > 0 else math.inf
    return float(b.mean() - a.mean()), se, df


# ----------------------------------------------------------------------------------------------
# the statements as formulas
# ----------------------------------------------------------------------------------------------
def record_conditions(checks: Checks, broken: list[str]) -> None:
    """theorem-4-2-conditions: Theorem 4.2's "any eps > 0, delta in (0, 1)" against Algorithm 2's conditions (B1)."""
    checks.record("Theorem 4.2 (privacy conditions)", "Algorithm 3 is (eps, delta)-DP for any eps > 0, delta in (0, 1), although it "
                  "runs Algorithm 2 (Lemma 3.1: delta < 1/m, eps <= log(1/delta))",
                  exact_outcome(not broken, "exact: no condition of Lemma 3.1 is broken at eps = 2, delta = 0.5, m = 100"),
                  kind="analytic", bound="no condition", measured=f"eps = 2, delta = 0.5, m = 100 breaks {len(broken)} of "
                  "Lemma 3.1's conditions", detail="; ".join(broken) + " (our estimators enforce the conditions); ERRATA B1",
                  id="theorem-4-2-conditions")


def theorem_5_1_parts(Ls: Sequence[int] = (1, 2, 3), N: int = 100, rho: float = 0.1, m: int = 10**6) -> pd.DataFrame:
    """Theorem 5.1's two versions (constant 1, r = Lambda = 1, eps = 1, beta = 0.05) and the part of their ratio that is
    legible in both texts: the main text's formula with its log factor Upsilon replaced by the COLT note's L (so that
    only (2 Lambda)^L against Lambda^L in the first term differs), against the reconstructed log factor."""
    rows = []
    for L in Ls:
        colt = B.theorem_5_1_bound(0, 1, 1, L, N, rho, 1, m, BETA)
        seed = B.theorem_5_1_bound(0, 1, 1, L, N, rho, 1, m, BETA, variant="seed")
        legible = (2.0**L * math.sqrt(N * L) / (rho * math.sqrt(m)) + 4.0**L * N * L / (rho * rho * m))
        rows.append({"L": L, "colt22": colt, "main_text": seed, "ratio": seed / colt, "ratio_legible": legible / colt,
                     "ratio_log_factor": seed / legible})
    return pd.DataFrame(rows)


def record_theorem_5_1(checks: Checks, t51: pd.DataFrame) -> None:
    """theorem-5-1-versions: the main text's bound against the COLT 2022 restatement (B2)."""
    worst = t51.loc[t51.ratio.idxmax()]
    checks.record("Theorem 5.1 (two versions)", "the main text's bound equals the COLT22 restatement (r = Lambda = 1, N = 100, "
                  "rho = 0.1, eps = 1, m = 1e6, L = 1..3, constant 1)", exact_outcome(bool(np.allclose(t51.ratio, 1.0)),
                                                                                     "exact: ratio 1 at every L"),
                  kind="analytic", bound="ratio 1", measured=round(float(worst.ratio), 3),
                  detail="; ".join(f"L = {r.L}: ratio {r.ratio:.3g} = {r.ratio_legible:.3g} (2^L in the first term, legible in "
                                   f"both texts) x {r.ratio_log_factor:.3g} (the reconstructed log factor)" for r in t51.itertuples())
                  + "; ERRATA B2", id="theorem-5-1-versions")


def record_out_of_scope(checks: Checks, m: int = 500, lam_r_over_rho: float = 2.0) -> None:
    """The statements no measurement can check here, as ``skipped`` rows with the reason (numbers from the calculators)."""
    k = B.theorem_3_1_k(lam_r_over_rho, 1.0, 1.0, m, BETA)
    cover = B.algorithm_1_log10_cover_size(lam_r_over_rho, 1.0, 1.0, k)
    checks.skip("Theorem 3.1 (utility of Algorithm 1)", "R_D(w^Priv) <= min_w {R-hat^rho_S(w) + O(sqrt(R-hat Gamma) + Gamma)}",
                f"Algorithm 1 enumerates a cover of B^k(2 Lambda) with up to 10^{cover:.0f} points at the theorem's k = {k} "
                f"(Lambda r / rho = {lam_r_over_rho:g}, m = {m}, constant 1); only k <= 3 can run, which is not the "
                "theorem's algorithm (its privacy is audited below); the bound's log factors are lost", kind="measured",
                id="theorem-3-1-utility")
    checks.skip("Lemma 3.1 (Algorithm 4)", "Algorithm 4 is (eps, delta)-DP for delta < 1/m, eps <= log(1/delta); its excess "
                "empirical risk bound; O(m log(m) log(1/beta)) gradient computations",
                "Algorithm 4 (the paper's DP-ERM, appendix B.2) and the right-hand side of its bound were not recovered; our "
                "substitute (noisy projected GD) is checked as ours (rows our-dp-erm-*, alg2-audit-*); the conditions are "
                "row theorem-4-2-conditions (B1)", kind="measured", id="lemma-3-1")
    k5 = B.theorem_5_1_k(1.0, 1.0, 2, 0.1, 10**4, BETA)
    checks.skip("Theorem 5.1 (networks)", "an eps-DP L-layer network with R_D <= min R-hat^rho_S + O(...), by the exponential "
                "mechanism over a cover of the compressed weights",
                f"the cover's dimension is (L - 1) k N + k with k = {k5} per layer already at L = 2, rho = 0.1, m = 1e4 (constant "
                "1): no cover can be enumerated; the two printed forms of the bound are compared in row theorem-5-1-versions",
                kind="measured", id="theorem-5-1")
    checks.skip("Theorems 3.2, 4.2, Lemma 3.1 (running times)", "O(md log max(d, m) + eps m^2 log(m) log^{3/2}(1/delta)) for "
                "Algorithm 2, O~(m^3 d) for Algorithm 3, O(m log(m) log(1/beta)) gradients for Algorithm 4",
                "operation counts of Algorithm 4 and of Lemma A.4's fast JL, neither recovered; our substitutes' costs follow "
                "from their construction (O(m d log d) for the SRHT, O(T m k) for the DP-ERM step) and wall times on this shared "
                "machine cannot confirm an exponent (benchmarks/bench_bassily2022.py times the JL maps)", kind="measured",
                id="running-times")


def record_polynomial(checks: Checks, pf: pd.DataFrame) -> None:
    """polynomial-kernel-radius: Section 4's "the same bound with r replaced by r^p" against the feature map's radius
    (r^2 + c)^(p/2) of K_p = (<x, x'> + c)^p (B3)."""
    bad = pf[~np.isclose(pf.feature_norm, pf.claimed)]
    worst = pf.loc[(pf.feature_norm / pf.claimed).idxmax()]
    checks.record("Section 4 (polynomial kernels: r replaced by r^p)", "sup over B^d(r) of ||Phi_p(x)|| = sqrt(K_p(x, x)) "
                  "equals r^p for K_p(x, x') = (<x, x'> + c)^p", exact_outcome(bad.empty, "exact: (r^2 + c)^(p/2) = r^p at every "
                                                                               "(p, c)"),
                  kind="analytic", bound=f"r^p = {worst.claimed:g}", measured=float(worst.feature_norm),
                  detail=f"r = {worst.r:g}; equal only for c = 0; largest ratio at p = {worst.p}, c = {worst.c:g}; ERRATA B3",
                  id="polynomial-kernel-radius")


# ----------------------------------------------------------------------------------------------
# JL transforms (ours, against the JL lemma) and the audits
# ----------------------------------------------------------------------------------------------
def record_jl(checks: Checks, jl: pd.DataFrame) -> None:
    """JL rows: our dense transforms against the JL lemma's failure probability (a rate check: holds only with power 0.8
    to see 2 beta) and the k^-1/2 rate (an equivalence of the fitted slope), our SRHT against the dense bound (target).
    These test our JL code against a known theorem (Achlioptas 2003), not a statement of the paper: consistency."""
    for kind in ("rademacher", "gaussian", "sparse (1/3)"):
        for inp in ("dense", "one-hot"):
            d = jl[(jl.projection == kind) & (jl.vectors == inp) & np.isfinite(jl.bound)]
            fails, trials = int(d.failures.sum()), int(d.reps.sum())
            checks.record("JL lemma (Achlioptas 2003; Section 3.1)", f"P(max norm distortion > bound) <= beta, {kind}, {inp} "
                          f"inputs, k in {d.k.tolist()}", verdicts.rate_verdict(fails, trials, BETA), kind="consistency",
                          bound=f"<= {BETA}", measured=f"{fails}/{trials}", detail="failures over draws of Phi; our transform")
    for kind in ("rademacher", "gaussian", "sparse (1/3)"):
        d = jl[(jl.projection == kind) & (jl.vectors == "dense")]
        s, se, df = verdicts.slope_with_se(d.k, d.median_norm_distortion)
        checks.record("JL rate", f"slope of log median distortion against log k, {kind}, dense inputs",
                      verdicts.exponent_verdict(s, se, -0.5, 0.1, df=df), kind="consistency", bound="-0.5 +- 0.1",
                      detail=f"{len(d)} values of k")
    d = jl[(jl.projection == "srht") & np.isfinite(jl.bound)]
    fails, trials = int(d.failures.sum()), int(d.reps.sum())
    checks.record("SRHT (our Lemma A.4 substitute)", "P(max norm distortion > dense JL bound) <= beta on dense and one-hot inputs",
                  verdicts.rate_verdict(fails, trials, BETA), kind="target", bound=f"<= {BETA}", measured=f"{fails}/{trials}",
                  detail="the paper's fast JL (Lemma A.4) is not recovered; this is our transform against the dense bound")


def record_alg2_audits(checks: Checks, audits2: pd.DataFrame, pld: float, T: int) -> None:
    """alg2-audit-T* (our DP-ERM step: consistency, holds only with its negative control caught), alg2-negative-T*
    (the controls, target) and the two accountants of Algorithm 2's composition (consistency)."""
    for T_, g in audits2.groupby("n_iter"):
        ok = g[g.mechanism == "as calibrated"].iloc[0]
        ctrl = g[g.mechanism != "as calibrated"].iloc[0]
        checks.record("Theorem 3.2 (privacy, our DP-ERM)", f"95% audit lower bound on eps, adversarial pair, T = {T_}",
                      verdicts.audit_verdict(ok.epsilon_lb, ok.epsilon_claimed, control_lb=ctrl.epsilon_lb), kind="consistency",
                      bound=ok.epsilon_claimed, measured=round(ok.epsilon_lb, 4),
                      detail=f"{ok.n_releases} releases per data set; the pair's exact loss {ok.epsilon_pair_exact:.4f}, the "
                      f"accounting's {ok.epsilon_accounted:.4f} at delta = {ok.delta:g}; tests our DP-ERM substitute, not the "
                      "paper's Algorithm 4", id=f"alg2-audit-T{T_}")
        checks.record("audit (negative control)", f"Algorithm 2 with sigma / 2 on the same pair (T = {T_}) is detected above the "
                      "claimed eps", exact_outcome(verdicts.audit_detects(ctrl.epsilon_lb, ctrl.epsilon_claimed),
                                                   f"lower bound {ctrl.epsilon_lb:.4g} > {ctrl.epsilon_claimed:g}"),
                      kind="target", bound=ctrl.epsilon_claimed, measured=round(ctrl.epsilon_lb, 4),
                      detail=f"exact loss {ctrl.epsilon_pair_exact:.4f}; shows the audit's power", id=f"alg2-negative-T{T_}")
    checks.record("Algorithm 2 accounting", f"PLD composition of the T = {T} steps (dp-accounting) against the Gaussian-DP "
                  "calibration", exact_outcome(abs(pld - 1.0) < 0.01, "two accountants agree within 0.01"), kind="consistency",
                  bound=1.0, measured=round(pld, 4), detail="two accountants of the same composition")


def record_alg1_audit(checks: Checks, audit1: pd.DataFrame) -> None:
    """alg1-audit (holds only with its negative control caught), alg1-exact (the pair's exact loss by enumeration) and
    alg1-negative (the control, target)."""
    r1, r1n = audit1.iloc[0], audit1.iloc[1]
    checks.record("Theorem 3.1 (privacy)", "95% audit lower bound on eps of Algorithm 1 (k = 1), adversarial pair",
                  verdicts.audit_verdict(r1.epsilon_lb, r1.epsilon_claimed, control_lb=r1n.epsilon_lb), kind="measured",
                  bound=r1.epsilon_claimed, measured=round(r1.epsilon_lb, 4),
                  detail=f"{r1.n_releases} releases per data set; the pair's exact loss {r1.epsilon_pair_exact:.4f}; "
                  f"|C| = {r1.cover_size}", id="alg1-audit")
    checks.record("Theorem 3.1 (privacy, exact)", "the pair's exact privacy loss by enumeration of the cover",
                  verdicts.bound_verdict(r1.epsilon_pair_exact, r1.epsilon_claimed, rtol=1e-9), kind="measured",
                  bound=r1.epsilon_claimed, measured=round(r1.epsilon_pair_exact, 6),
                  detail="exact (relative round-off allowance 1e-9)", id="alg1-exact")
    checks.record("audit (negative control)", "Algorithm 1 sampled at 2 eps on the same pair is detected above eps",
                  exact_outcome(verdicts.audit_detects(r1n.epsilon_lb, r1.epsilon_claimed),
                                f"lower bound {r1n.epsilon_lb:.4g} > {r1.epsilon_claimed:g}"),
                  kind="target", bound=r1.epsilon_claimed, measured=round(r1n.epsilon_lb, 4),
                  detail=f"exact loss {r1n.epsilon_pair_exact:.4f}", id="alg1-negative")


# ----------------------------------------------------------------------------------------------
# utility
# ----------------------------------------------------------------------------------------------
def record_theorem_3_2(checks: Checks, t32: pd.DataFrame, ms: Sequence[int]) -> None:
    """theorem-3-2 (a rate check: P(error > bound) <= beta, holds only with power to see 2 beta) and our-dp-erm-* (the
    substitute's own excess-risk bound, one-sided 95% bound over the seeds; consistency)."""
    fails = int((t32.error > t32.bound).sum())
    checks.record("Theorem 3.2", "P(population error > min L-hat^rho_S + Lambda r sqrt(log(m/beta)) / (rho sqrt(min(1, eps) m))) "
                  f"<= beta, m in {list(ms)}", verdicts.rate_verdict(fails, len(t32), BETA), kind="measured",
                  bound=f"<= {BETA}", measured=f"{fails}/{len(t32)}",
                  detail="runs per m " + ", ".join(f"{int(m)}: {c}" for m, c in t32.groupby("m").size().items())
                  + " (independent trials, pooled: the power is against a failure rate of 2 beta at every m); "
                  "constant 1 and the log factor are ours (the O~ is lost); largest implied constant "
                  f"{t32.implied_constant.max():.3g}; error / bound: median {(t32.error / t32.bound).median():.3g} (how "
                  f"loose the bound typically is), largest {(t32.error / t32.bound).max():.4g}; d = 1000, margin 0.5",
                  id="theorem-3-2")
    for m, g in t32.groupby("m"):
        mean, se = float(g.hinge_loss_compressed.mean()), float(g.hinge_loss_compressed.std(ddof=1) / math.sqrt(len(g)))
        bound = float(g.hinge_bound_substitute.mean())
        checks.record("our DP-ERM (noisy projected GD)", f"mean empirical rho-hinge loss on S_Phi <= the substitute's expected "
                      f"excess-risk bound, m = {int(m)}", verdicts.bound_verdict(mean, bound, se=se, df=len(g) - 1),
                      kind="consistency", bound=round(bound, 4), measured=round(mean, 4),
                      detail=f"k = {int(g.k.iloc[0])}, T = {int(g.n_iter.iloc[0])}, {len(g)} seeds; not the paper's Lemma 3.1")


def record_epsilon_free(checks: Checks, ep: pd.DataFrame) -> None:
    """epsilon-beyond-1: "privacy for eps > 1 essentially for free" (the min(1, eps) of Theorem 3.2): at every eps > 1
    the paired difference d = private - non-private error (the same JL map, T and learning rate, no noise) lies
    inside +-:data:`FREE_SHARE` times that difference at eps = 1: beyond 1 privacy costs at most a quarter of what it
    costs at 1.  The margin is measured on the same seeds, so the test is paired over seeds and carries its
    uncertainty: with c = FREE_SHARE x d(eps = 1) per seed, the two one-sided tests of c - d(eps) > 0 and
    c + d(eps) > 0 (:func:`dpkernels.verdicts.difference_verdict`, t with seeds - 1 degrees of freedom) both hold for
    "holds", either refuted is "violated".  Inconclusive without a positive cost at eps = 1."""
    one = ep[ep.epsilon == 1].assign(d1=lambda x: x.error_private - x.error_nonprivate).set_index("seed")["d1"]
    cost = float(one.mean()) if len(one) else math.nan
    outs = []
    for eps, g in ep[ep.epsilon > 1].groupby("epsilon"):
        d = (g.error_private - g.error_nonprivate).set_axis(g.seed)
        if not cost > 0:
            outs.append((eps, Outcome("inconclusive", f"no positive cost at eps = 1 ({cost:.3g})", float(d.mean()))))
            continue
        c = FREE_SHARE * one.reindex(d.index)
        sides = []
        for x in (c - d, c + d):
            x = x.dropna()
            sides.append(verdicts.difference_verdict(float(x.mean()), float(x.std(ddof=1) / math.sqrt(len(x))),
                                                     min_effect=0.0, df=len(x) - 1))
        st = [o.status for o in sides]
        status = "violated" if "violated" in st else ("holds" if all(x == "holds" for x in st) else "inconclusive")
        outs.append((eps, Outcome(status, f"mean {d.mean():.3g} against +-{FREE_SHARE:g} x {one.mean():.3g}; one-sided "
                                  f"95% lower bounds of {FREE_SHARE:g} d(1) -+ d: {sides[0].lower:.3g}, {sides[1].lower:.3g} "
                                  "(holds if both > 0, violated if an upper bound < 0)", float(d.mean()))))
    st = [o.status for _, o in outs]
    status = "violated" if "violated" in st else ("holds" if st and all(s == "holds" for s in st) else "inconclusive")
    checks.record("Section 1 / Theorem 3.2 (privacy for eps > 1 essentially for free)", "Algorithm 2's error at eps > 1 equals "
                  f"its non-private counterpart's within +-{FREE_SHARE:g} x the difference at eps = 1 (paired over seeds)",
                  Outcome(status, "; ".join(f"eps = {e:g}: {o.criterion}" for e, o in outs), max(abs(o.estimate) for _, o in outs)),
                  kind="measured", bound=f"+-{FREE_SHARE:g} x {cost:.3g}",
                  detail=f"paper's k (grows with eps: {', '.join(str(int(k)) for k in ep.groupby('epsilon').k.first())}); "
                  f"{ep.seed.nunique()} seeds; at eps = 1 the difference is {cost:.3g} (the margin's scale, measured on the "
                  "same seeds and paired with them)", id="epsilon-beyond-1")


def record_dimension(checks: Checks, dim: pd.DataFrame, best: pd.DataFrame, baselines: Sequence[str], m: int,
                     epsilon: float) -> None:
    """The dimension figure's checks, on the per-seed errors: dimension independence of Algorithm 2 between the smallest
    d above eps m (the regime the paper states for Algorithm 2: "assuming d > eps m"; below it the JL map is no
    compression) and the largest d (TOST within +-:data:`DIM_REL_MARGIN` x the error), growth of the other papers' mechanisms from the
    smallest to the largest d (each at its best grid value per d; a one-sided test, power stated against
    :data:`MIN_GROWTH`), Algorithm 2 (k = 100) below them at the largest d, and the JL ablation (the same noisy GD in
    R^d) against Algorithm 2 at the largest d (consistency: our benchmark's attribution of the difference to the JL
    step)."""
    dmin, dmax = int(dim.d.min()), int(dim.d.max())
    dreg = int(dim.d[dim.d > epsilon * m].min())
    hp = best.set_index(["method", "d"])["hyperparameter"]

    def errors(method: str, d: int) -> np.ndarray:
        g = dim[(dim.method == method) & (dim.d == d)]
        if g.value.notna().any():
            g = g[g.value == hp[(method, d)]]
        return g.sort_values("seed").error.to_numpy()

    for method in sorted(dim.method.unique()):
        lo, hi = errors(method, dmin), errors(method, dmax)
        diff, se, df = mean_difference(lo, hi)
        text = f"{lo.mean():.3f} -> {hi.mean():.3f}"
        if method.startswith("Algorithm 2"):
            lo2 = errors(method, dreg)
            diff2, se2, df2 = mean_difference(lo2, hi)
            margin = DIM_REL_MARGIN * float(lo2.mean())
            checks.record("Theorem 3.2 (dimension independence)", f"{method}: error at d = {dmax} equals the error at d = {dreg} "
                          f"(the smallest d > eps m = {epsilon * m:g}) within +-{DIM_REL_MARGIN:g} x that error",
                          verdicts.equivalence_verdict(diff2, se2, margin=margin, df=df2), kind="measured",
                          bound=f"+-{margin:.4g}", measured=f"{lo2.mean():.3f} -> {hi.mean():.3f}",
                          detail=f"at d = {dmin} (no compression: d <= k) the error is {lo.mean():.3f}; margin ours (a quarter "
                          "of the error: smaller than the effect it tests)",
                          id="dimension-k100" if "100" in method else "dimension-paper-k")
        elif method == ABLATION:
            continue
        else:
            checks.record("Section 1 (DP-ERM pays sqrt(d)/m)", f"{method}: error grows from d = {dmin} to d = {dmax}",
                          verdicts.difference_verdict(diff, se, min_effect=MIN_GROWTH, df=df), kind="consistency",
                          bound="difference > 0", measured=text,
                          detail="each at its best grid value per d, chosen on the test error (an oracle-tuned baseline: our "
                          "construct, not the paper's protocol, so a consistency row)")
    a2 = errors("Algorithm 2 (k = 100)", dmax)
    for method in baselines:
        diff, se, df = mean_difference(a2, errors(method, dmax))
        checks.record("Theorem 3.2 vs DP-ERM in high dimension", f"Algorithm 2 (k = 100, ours) below {method} at d = {dmax}",
                      verdicts.difference_verdict(diff, se, min_effect=MIN_GROWTH, df=df), kind="consistency",
                      bound="difference > 0", measured=f"{a2.mean():.3f} vs {errors(method, dmax).mean():.3f}",
                      detail="k's constant is lost; the paper's k with constant 1 is in the figure; the baselines are "
                      "oracle-tuned (best grid value on the test error): our construct, a consistency row")
    ab = errors(ABLATION, dmax)
    for method in ("Algorithm 2 (paper's k)", "Algorithm 2 (k = 100)"):
        a = errors(method, dmax)
        diff, se, df = mean_difference(a, ab)
        checks.record("JL ablation (ours): the JL step is what keeps Algorithm 2 flat in d", f"{method} below the same noisy GD "
                      f"run in R^d without JL, at d = {dmax}", verdicts.difference_verdict(diff, se, min_effect=MIN_GROWTH, df=df),
                      kind="consistency", bound="difference > 0", measured=f"{a.mean():.3f} vs {ab.mean():.3f}",
                      detail=f"ablation at d = {dmin}: {errors(ABLATION, dmin).mean():.3f}; ERRATA B4",
                      id="jl-ablation-k100" if "100" in method else "jl-ablation-paper-k")


def record_theorem_4_1(checks: Checks, t41: pd.DataFrame, big_m: int) -> None:
    """theorem-4-1-norm (consistency), theorem-4-1 (a rate check with power) and its D^-1/2 rate (equivalence)."""
    checks.record("Theorem 4.1 (norm)", "max over x and draws of | ||psi(x)|| - r |",
                  verdicts.bound_verdict(float(t41.max_norm_error.max()), 1e-12), kind="consistency", bound=1e-12,
                  detail="cos^2 + sin^2 = 1: true by construction (float64 rounding)")
    fails, trials = int(t41.failures.sum()), int(t41.reps.sum())
    checks.record("Theorem 4.1", "P(max_{i != j} |<psi_i, psi_j> - K_ij| > 2 r^2 sqrt(log(2m/beta)/D)) <= beta over all (m, D)",
                  verdicts.rate_verdict(fails, trials, BETA), kind="measured", bound=f"<= {BETA}", measured=f"{fails}/{trials}",
                  detail=f"largest deviation / bound {float((t41.max_dev / t41.bound).max()):.3f}; the bound's form is reconstructed",
                  id="theorem-4-1")
    g = t41[t41.m == big_m]
    s, se, df = verdicts.slope_with_se(g.D, g.median_dev)
    checks.record("Theorem 4.1 (rate in D)", f"slope of log median deviation against log D, m = {big_m}",
                  verdicts.exponent_verdict(s, se, -0.5, 0.1, df=df), kind="measured", bound="-0.5 +- 0.1",
                  detail=f"{len(g)} values of D")


def record_theorem_4_2(checks: Checks, t42: pd.DataFrame, m: int, Ds: Sequence[int]) -> None:
    """theorem-4-2: skipped as stated (the premise D = m^2 log(2m/beta) is out of reach where the bound is not vacuous);
    the D-sweep below the premise stays a figure."""
    D_thm = int(t42.theorem_D.iloc[0])
    fails = int((t42.error > t42.bound).sum())
    checks.skip("Theorem 4.2", "P(test error > min L-hat^rho_S + Lambda r sqrt(log(m/beta)) / (rho sqrt(min(1, eps) m))) <= beta",
                f"the premise D = m^2 log(2m/beta) = {D_thm} at m = {m} is out of reach (a {2 * D_thm * m * 8 / 1e9:.0f} GB feature "
                f"matrix), and at an m where that D fits the bound is vacuous (>= 1); below the premise (D in {list(Ds)}) "
                f"{fails} of {len(t42)} runs exceed the bound (constant 1, bound {float(t42.bound.iloc[0]):.3f}): an "
                "illustration, not a check of the theorem", kind="measured", id="theorem-4-2")


def record_rho_selection(checks: Checks, sel: pd.DataFrame, G: int) -> None:
    """private-choice-of-rho: the two accountants of our private choice of rho (consistency)."""
    worst = float((sel.epsilon_accounted_pld - 1.0).abs().max())
    checks.record("private choice of rho (ours): accounting", "PLD composition of the G candidates' T-step Gaussian mechanisms "
                  "against the Gaussian-DP calibration, eps = 1", exact_outcome(worst < 0.01, "two accountants agree within 0.01"),
                  kind="consistency", bound=1.0, measured=round(float(sel.epsilon_accounted_pld.iloc[0]), 4),
                  detail=f"G = {G} margins; two accountants of the same composition")
