"""Public hyper-parameter rules: functions of the public quantities (n, d, epsilon, a stated norm bound) only.

A private mechanism's hyper-parameters are part of its release protocol: a value read from the data (tuned on the
training rows, a data-dependent scale) costs privacy that no guarantee accounts for.  Each rule below is fixed before
any data are seen and states its source: a paper's theorem, its experiments, or a documented default.  Where a paper
offers a *private* selection instead (Chaudhuri et al.'s Algorithm 4, :class:`~dpkernels.mechanisms.PrivateTuning`;
Bassily et al.'s choice of rho, :class:`~dpkernels.mechanisms.PrivateMarginSelection`), :func:`chaudhuri_lambda_grid`
and :func:`bassily_rho_grid` give the public candidate grids around the rule.

Parameterisations.  Chaudhuri et al. (2011) minimise J(f) = (1/n) sum l + (Lambda / 2) ||f||^2; Rubinstein et al.
(2012) (1/2) ||w||^2 + (C / n) sum l, i.e. Lambda = 1 / C; Hall et al. (2013) (1/n) sum l + lam ||f||_H^2, i.e.
lam = Lambda / 2; scikit-learn's C is 1 / (n Lambda) (:func:`sklearn_C`).

The rules assume rows in the ball of radius ``r`` (1 unless stated), which a public per-record map guarantees.
"""

from __future__ import annotations

import math

from dpkernels._validation import check_epsilon, check_positive

__all__ = [
    "CONFIDENCE",
    "CHAUDHURI_NORM_BOUND",
    "CHAUDHURI_SECTION_7_NORM_BOUND",
    "CHAUDHURI_GRID_DECADES",
    "chaudhuri_excess_risk",
    "chaudhuri_lambda",
    "chaudhuri_lambda_grid",
    "loss_curvature",
    "rubinstein_C",
    "hall_lam",
    "rbf_gamma",
    "bassily_rho",
    "bassily_rho_grid",
    "bassily_k",
    "bassily_iterations",
    "BASSILY_LAMBDA",
    "BASSILY_EXCESS",
    "PARK_TABLE_7_1",
    "PARK_FRONTIER_DATASETS",
    "park_settings",
    "park_public_settings",
    "park_gamma",
    "NONPRIVATE_LAMBDAS",
    "sklearn_C",
]

#: Confidence parameter (the delta of the generalisation bounds, not a privacy parameter) of Theorems 15 and 18.
CONFIDENCE = 0.05
#: Norm of the comparator f0 in Chaudhuri et al.'s Theorems 15 and 18 (||f0||), a public assumption about the task,
#: derived from public data outside the frontier (issue 29): the median, over six public data sets none of which the
#: frontier uses (scikit-learn's breast cancer and digits, iris, wine, Statlog segment, Deterding's vowel), of the
#: median norm of the validation-tuned non-private logistic regression (Lambda in :data:`NONPRIVATE_LAMBDAS`, 5-fold
#: cross-validation, one task per class against the rest) on rows mapped into the unit ball with a constant feature,
#: the frontier's convention: 50.25, rounded to 50 (:func:`dpkernels.experiments.frontier_calibration.norm_bound`
#: recomputes it; ``tests/test_defaults.py`` checks).  An earlier value, 100, was chosen so that the rule reproduces
#: the Lambda that Chaudhuri et al.'s Section 7 picked on Adult and KDDCup99, two of the frontier's own data sets
#: (:data:`CHAUDHURI_SECTION_7_NORM_BOUND`).
CHAUDHURI_NORM_BOUND = 50.0
#: The ||f0|| with which :func:`chaudhuri_lambda` gives the Lambda that Section 7 found best at epsilon = 0.1
#: (Tables 1 and 2: Adult, n = 40,698, d = 105; KDDCup99, n = 63,000, d = 119) within a factor of 2.2 in seven of the
#: eight (data set, algorithm, loss) rows; in the eighth (KDDCup99, Huber, objective) the paper's pick 10^-2 is 6.8
#: times the rule.  Not the frontier's default: it was read off the frontier's own data sets.
CHAUDHURI_SECTION_7_NORM_BOUND = 100.0
#: Private tuning (Algorithm 4) candidates: the rule times 10^k for these k (five values, as Section 7's Figures 4-5).
CHAUDHURI_GRID_DECADES = (-1.0, -0.5, 0.0, 0.5, 1.0)
#: Bassily et al.'s norm bound Lambda: "we can set Lambda = 1 and optimize only with respect to rho" (footnote 1).
BASSILY_LAMBDA = 1.0
#: The excess error that :func:`bassily_rho` allows the privacy term of Theorem 3.2's bound.
BASSILY_EXCESS = 0.1
#: Non-private references: the regulariser grid a validation split chooses from (Chaudhuri et al.'s Table 1 spans
#: 1e-10 to 10^-1.5; below 1e-7 their non-private errors no longer change).
NONPRIVATE_LAMBDAS = (1e-7, 1e-6, 1e-5, 1e-4, 1e-3, 1e-2)


def loss_curvature(loss: str, h: float = 0.5) -> float:
    """``c = sup |l''|`` (Chaudhuri et al. Section 3.4): logistic 1/4, Huber 1/(2h), smoothed hinge 3/(4h).  For the
    output-perturbation bound (Theorem 15) the same c is the Lipschitz constant of l'."""
    h = check_positive(h, "h")
    table = {"logistic": 0.25, "huber": 1.0 / (2.0 * h), "smoothed_hinge": 3.0 / (4.0 * h)}
    if loss not in table:
        raise ValueError(f"loss must be one of {sorted(table)}, got {loss!r}")
    return table[loss]


def _checked(n: int, d: int) -> tuple[int, int]:
    if isinstance(n, bool) or int(n) != n or n < 1:
        raise ValueError(f"n must be a positive integer, got {n!r}")
    if isinstance(d, bool) or int(d) != d or d < 1:
        raise ValueError(f"d must be a positive integer, got {d!r}")
    return int(n), int(d)


def chaudhuri_excess_risk(n: int, d: int, epsilon: float, *, algorithm: str = "objective", loss: str = "logistic",
                          h: float = 0.5, norm_bound: float = CHAUDHURI_NORM_BOUND, confidence: float = CONFIDENCE) -> float:
    """The smallest excess risk eps_g for which n satisfies the sample condition of Chaudhuri et al. (2011), all
    absolute constants set to 1 (the paper leaves them unspecified), with B = ``norm_bound`` = ||f0|| and
    beta = ``confidence``:

    * Theorem 18 (Algorithm 2, objective): n >= max{B^2 log(1/beta) / eps_g^2, c B^2 / (eps_g eps),
      d log(d/beta) B / (eps_g eps)}, so eps_g = max{B sqrt(log(1/beta) / n), c B^2 / (n eps), d log(d/beta) B / (n eps)};
    * Theorem 15 (Algorithm 1, output): n >= max{B^2 log(1/beta) / eps_g^2, d log(d/beta) B / (eps_g eps),
      d log(d/beta) c^(1/2) B^2 / (eps_g^(3/2) eps)}, so the third term gives eps_g = (d log(d/beta) c^(1/2) B^2 /
      (n eps))^(2/3).

    c is :func:`loss_curvature` (for Theorem 15 the Lipschitz constant of l', the same number)."""
    n, d = _checked(n, d)
    eps = check_epsilon(epsilon)
    B = check_positive(norm_bound, "norm_bound")
    beta = check_positive(confidence, "confidence")
    c = loss_curvature(loss, h)
    lg = d * math.log(d / beta)
    statistical = B * math.sqrt(math.log(1.0 / beta) / n)
    if algorithm == "objective":
        return max(statistical, c * B * B / (n * eps), lg * B / (n * eps))
    if algorithm == "output":
        return max(statistical, lg * B / (n * eps), (lg * math.sqrt(c) * B * B / (n * eps)) ** (2.0 / 3.0))
    raise ValueError(f"algorithm must be 'objective' or 'output', got {algorithm!r}")


def chaudhuri_lambda(n: int, d: int, epsilon: float, *, algorithm: str = "objective", loss: str = "logistic",
                     h: float = 0.5, norm_bound: float = CHAUDHURI_NORM_BOUND, confidence: float = CONFIDENCE) -> float:
    """Lambda = eps_g / ||f0||^2, the choice in the proofs of Chaudhuri et al.'s Theorems 15 and 18, at the smallest
    eps_g their sample conditions allow for this n (:func:`chaudhuri_excess_risk`).  Also used for the kernel version
    (Algorithm 3) with d the number of random features, for diffprivlib's LogisticRegression (the same objective
    perturbation, C = 1 / (n Lambda)) and for the linear PrivateSVM-Finite of Rubinstein et al. through
    :func:`rubinstein_C` when asked."""
    B = check_positive(norm_bound, "norm_bound")
    return chaudhuri_excess_risk(n, d, epsilon, algorithm=algorithm, loss=loss, h=h, norm_bound=B,
                                 confidence=confidence) / (B * B)


def chaudhuri_lambda_grid(n: int, d: int, epsilon: float, *, decades: tuple[float, ...] = CHAUDHURI_GRID_DECADES,
                          **kwargs: object) -> tuple[float, ...]:
    """Candidates for Algorithm 4 (private tuning, Section 6): :func:`chaudhuri_lambda` at the size of one training part
    ``n`` times 10^k for k in ``decades`` (data-independent, as Theorem 26 requires)."""
    base = chaudhuri_lambda(n, d, epsilon, **kwargs)  # type: ignore[arg-type]
    return tuple(base * 10.0**k for k in decades)


def rubinstein_C(n: int) -> float:
    """C = sqrt(n): Rubinstein et al. (2012), Remark 1 ("for universal consistency, the SVM's parameter C should grow
    like sqrt(n)") and the discussion after Corollary 19 ("if we set C = sqrt(n) ... the error due to preserving
    privacy is on the same order as the error in estimating the 'true' parameter")."""
    n, _ = _checked(n, 1)
    return math.sqrt(n)


def hall_lam(n: int) -> float:
    """lam of Hall et al.'s kernel machine (1/n) sum l + lam ||f||_H^2.  The paper states no rule (Section 3 only
    notes that the noise "does not interfere with the optimal rate"); we use the same SVM's consistency rule as
    Rubinstein et al. (:func:`rubinstein_C`): lam = 1 / (2 C) = 1 / (2 sqrt(n))."""
    return 1.0 / (2.0 * rubinstein_C(n))


def rbf_gamma(radius: float = 1.0) -> float:
    """gamma of the RBF kernel exp(-gamma ||x - y||^2): scikit-learn's documented default gamma="scale" =
    1 / (n_features Var(X)) with the data's variance replaced by its public bound (n_features Var(X) <= E||x||^2 <=
    r^2 for rows in the ball of radius r), i.e. 1 / r^2.  Reading the variance from the data would leak."""
    r = check_positive(radius, "radius")
    return 1.0 / (r * r)


def bassily_rho(n: int, epsilon: float, *, Lambda: float = BASSILY_LAMBDA, radius: float = 1.0,
                excess: float = BASSILY_EXCESS) -> float:
    """rho at which the privacy term of Bassily et al.'s Theorem 3.2, Lambda r / (rho sqrt(min(1, eps) n)) (COLT'22
    restatement, eq. 2; logarithmic factors and constants set to 1), equals ``excess``; capped at Lambda r (the
    algorithm's range).  The paper picks rho privately (its Appendix F, not recovered: see :func:`bassily_rho_grid`);
    this rule is ours, built from the theorem's shape."""
    n, _ = _checked(n, 1)
    eps = check_epsilon(epsilon)
    top = check_positive(Lambda, "Lambda") * check_positive(radius, "radius")
    return min(top, top / (check_positive(excess, "excess") * math.sqrt(min(1.0, eps) * n)))


def bassily_k(n: int, d: int, epsilon: float, delta: float, *, confidence: float = CONFIDENCE) -> int:
    """The JL dimension k of Bassily et al.'s Algorithm 2: the paper's k = eps m sqrt(log(m/beta)) / (log^(3/2)(1/delta)
    log(1/beta)) (step 1, "k is chosen to be O(m eps)"; :func:`dpkernels.bounds.bassily.algorithm_2_k`), capped at d:
    the JL step reduces the dimension (the paper assumes d > eps m, Section 3.2); mapping d features to k > d
    coordinates costs k / d times the time and memory and gains nothing."""
    from dpkernels.bounds.bassily import algorithm_2_k

    n, d = _checked(n, d)
    return int(min(algorithm_2_k(check_epsilon(epsilon), delta, n, confidence), d))


def bassily_iterations(n: int, *, confidence: float = CONFIDENCE) -> int:
    """The number of full-batch gradient steps of our DP-ERM substitute in Bassily et al.'s Algorithm 2: as many
    gradient computations as the paper's Algorithm 4 uses, O(m log(m) log(1/beta)) (Lemma 3.1, constant 1), i.e.
    T = ceil(ln(m) ln(1/beta)) passes over the m rows (40 at m = 484,000; 21 at m = 1,000).  Passed as ``max_iter``:
    the mechanism's own balance m^2 / (4 k s^2) decides when it is smaller."""
    n, _ = _checked(n, 1)
    return max(1, math.ceil(math.log(n) * math.log(1.0 / check_positive(confidence, "confidence"))))


def bassily_rho_grid(n: int, epsilon: float, *, factors: tuple[float, ...] = (0.25, 0.5, 1.0, 2.0, 4.0),
                     **kwargs: float) -> tuple[float, ...]:
    """Candidates for the private choice of rho (:class:`~dpkernels.mechanisms.PrivateMarginSelection`):
    :func:`bassily_rho` times ``factors``, capped at Lambda r, without duplicates (data-independent)."""
    top = kwargs.get("Lambda", BASSILY_LAMBDA) * kwargs.get("radius", 1.0)
    base = bassily_rho(n, epsilon, **kwargs)
    return tuple(sorted({min(top, base * f) for f in factors}))


#: Park (2022), Table 7.1, the "Proposed" column: the thesis's settings of its method per data set (C/n, gamma,
#: learning rate, iterations, r_max; None where the table gives "-"), chosen by the author on those data: published
#: values, used as public knowledge.  shuttle: the thesis's 3-class setting, applied here to the 7 original classes.
PARK_TABLE_7_1: dict[str, dict[str, float | None]] = {
    "three moons": {"box": 0.05, "gamma": 5.0, "lr": 0.001, "n_iter": 20, "r_max": None},
    "five gaussians": {"box": 0.1, "gamma": 5.0, "lr": 0.001, "n_iter": 20, "r_max": None},
    "iris": {"box": 0.05, "gamma": 1.0, "lr": 0.001, "n_iter": 10, "r_max": 0.5},
    "wine": {"box": 0.05, "gamma": 0.1, "lr": 0.1, "n_iter": 100, "r_max": 1.0},
    "vowel": {"box": 0.05, "gamma": 1.0, "lr": 0.1, "n_iter": 30, "r_max": 0.5},
    "satimage": {"box": 0.05, "gamma": 0.1, "lr": 0.001, "n_iter": 20, "r_max": 1.0},
    "segment": {"box": 0.5, "gamma": 1.0, "lr": 0.001, "n_iter": 20, "r_max": 0.5},
    "shuttle": {"box": 0.01, "gamma": 1.0, "lr": 0.001, "n_iter": 20, "r_max": 0.5},
}
#: The data sets of Table 7.1 that the cross-paper frontier also uses: Park's public rule leaves their rows out.
PARK_FRONTIER_DATASETS = ("satimage", "shuttle")


def park_settings(dataset: str) -> dict[str, float]:
    """Park's published setting for ``dataset`` (:data:`PARK_TABLE_7_1`): the paper's tuned setting, not a rule (the
    thesis gives none in n or epsilon)."""
    if dataset not in PARK_TABLE_7_1:
        raise ValueError(f"Park (2022) Table 7.1 has no setting for {dataset!r}; known: {sorted(PARK_TABLE_7_1)}")
    return {k: v for k, v in PARK_TABLE_7_1[dataset].items() if v is not None}  # type: ignore[misc]


def park_gamma(n_features: int) -> float:
    """gamma of Park's RBF kernel exp(-gamma ||x - y||^2) on the box [0, 1]^d: scikit-learn's documented
    gamma="scale" = 1 / (d Var(X)) with the variance replaced by its public bound 1/4 on [0, 1], i.e. 4 / d (the
    same reading as :func:`rbf_gamma` on the unit ball)."""
    _, d = _checked(1, n_features)
    return 4.0 / d


def park_public_settings(n_features: int, n: int | None = None, *, scale: float = 1.0) -> dict[str, float]:
    """Park's method under a public rule whose constants were not set on the frontier's data sets: C/n, learning
    rate, iterations and r_max are the medians of Table 7.1's "Proposed" settings over its six data sets outside the
    frontier (:data:`PARK_FRONTIER_DATASETS` left out; r_max over the four that give one): 0.05, 0.001, 20 and 0.5;
    gamma by :func:`park_gamma`.  ``scale`` multiplies C/n (the constant the frontier's ablation and private
    selection vary); given the (public) number of rows ``n``, C/n is at least 1/n (the SVDD's duals sum to 1) and at
    most 1."""
    import statistics

    rows = [r for name, r in PARK_TABLE_7_1.items() if name not in PARK_FRONTIER_DATASETS]

    def med(key: str) -> float:
        return float(statistics.median(r[key] for r in rows if r[key] is not None))  # type: ignore[type-var]

    box = med("box") * check_positive(scale, "scale")
    if n is not None:
        box = min(1.0, max(box, 1.0 / _checked(n, 1)[0]))
    return {"box": box, "gamma": park_gamma(n_features), "lr": med("lr"), "n_iter": int(med("n_iter")),
            "r_max": med("r_max")}


def sklearn_C(n: int, Lambda: float) -> float:
    """scikit-learn's (and diffprivlib's) C for the objective (1/n) sum l + (Lambda / 2) ||f||^2: C = 1 / (n Lambda)."""
    n, _ = _checked(n, 1)
    return 1.0 / (n * check_positive(Lambda, "Lambda"))
