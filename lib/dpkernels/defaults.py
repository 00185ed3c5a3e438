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
    "GRADIENT_MAX_STEPS",
    "DPSGD_MIN_NOISE_MULTIPLIER",
    "AMP_OUTPUT_NOISE_SHARE",
    "gaussian_mu",
    "noisy_gd_settings",
    "dp_sgd_settings",
    "amp_settings",
    "output_sgd_settings",
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


# ----------------------------------------------------------------------------------------------
# gradient perturbation and its peers (dpkernels.mechanisms.gradient): rules from first principles
# ----------------------------------------------------------------------------------------------
# Yu et al. (2020) and Iyengar et al. (2019) tune these methods on grids whose best points were chosen on a benchmark
# that includes Adult and KDDCup99 (two of the frontier's data sets): the frontier cannot use those values (issue 29
# item 3b).  The rules below use only the public quantities (n, d, epsilon, delta), the row bound R = 1 and the
# logistic loss's constants (|l'| <= 1, l'' <= c = 1/4), the comparator norm ||f0|| = CHAUDHURI_NORM_BOUND (derived
# from six public data sets outside the frontier) and three stated constants of cost or of approximation quality
# (GRADIENT_MAX_STEPS, DPSGD_MIN_NOISE_MULTIPLIER, AMP_OUTPUT_NOISE_SHARE), none read off any data.

#: The most noisy full-batch gradient steps (DP-GD) or noisy batch steps (DP-SGD) a rule gives: a compute cap, set
#: by the frontier's time budget (60 minutes on 2 cores for every mechanism at every size, epsilon and seed), not by
#: any data.  Below it the rule's T (:func:`noisy_gd_settings`) is the point where the optimisation term of the
#: convergence bound falls below its noise term; above it more steps change the bound by less than a factor 2.
GRADIENT_MAX_STEPS = 200
#: DP-SGD's smallest noise multiplier z (noise standard deviation over the clip norm on the batch sum): at z >= 4 one
#: Poisson-subsampled replace-one step's privacy loss is close to Gaussian (e^(4/z^2) - 1 is within 14% of 4/z^2), so
#: T steps at rate q cost about what T full-batch steps of the same noise per mean gradient cost (the central limit
#: regime of Dong, Roth and Su 2022, Theorem 6): the sampling rate is the smallest that keeps z there.
DPSGD_MIN_NOISE_MULTIPLIER = 4.0
#: AMP's output noise (which covers the solver's approximation) at most this share of the objective noise's effect on
#: the minimiser, in standard deviation (so at most 1% of its variance).
AMP_OUTPUT_NOISE_SHARE = 0.1


def gaussian_mu(epsilon: float, delta: float) -> float:
    """mu of the mu-GDP Gaussian mechanism that is exactly (epsilon, delta)-DP: sensitivity over the analytic
    Gaussian sigma (Balle and Wang 2018; Dong, Roth and Su 2022, Corollary 1), i.e. 1 /
    :func:`dpkernels.accounting.gaussian_sigma` (epsilon, delta, 1).  T adaptive Gaussian steps of sensitivity Delta
    and noise sigma compose to mu = sqrt(T) Delta / sigma exactly."""
    from dpkernels.accounting import gaussian_sigma

    return 1.0 / gaussian_sigma(check_epsilon(epsilon), delta, 1.0)


def _logistic_smoothness(radius: float) -> float:
    """beta = c R^2 with c = 1/4 (the logistic loss's sup ``|l''|``) for rows in the ball of radius R."""
    return loss_curvature("logistic") * check_positive(radius, "radius") ** 2


def noisy_gd_settings(n: int, d: int, epsilon: float, delta: float, *, norm_bound: float = CHAUDHURI_NORM_BOUND,
                      radius: float = 1.0, max_steps: int = GRADIENT_MAX_STEPS) -> dict[str, float | int]:
    """Public rule of noisy full-batch gradient descent (:class:`~dpkernels.NoisyGradientDescent`, logistic loss):
    ``n_iter``, ``learning_rate``, ``clip_norm`` and ``alpha`` from (n, d, epsilon, delta) and first principles.

    * clip_norm C = R: ``|l'|`` <= 1 and ||x|| <= R bound every per-example gradient by R, so nothing is clipped and the
      replace-one sensitivity of the mean gradient is Delta = 2R / n.
    * alpha = 0: the comparator argument below needs no regulariser (stopping at T regularises).
    * T steps of noise sigma are mu-GDP with mu = sqrt(T) Delta / sigma (:func:`gaussian_mu`), so the per-step noise
      is sigma = sqrt(T) Delta / mu(epsilon, delta) and its norm sigma_T = sqrt(d) sigma.  Bubeck (2015), Convex
      Optimization: Algorithms and Complexity, Theorem 6.3 (stochastic gradient descent on a convex beta-smooth
      function with gradient noise of variance sigma_T^2, comparator norm B): with the step 1 / (beta + 1/eta),
      eta = (B / sigma_T) sqrt(2 / T), the averaged iterate's excess risk is at most B sigma_T sqrt(2 / T) + beta
      B^2 / T.  The noise term B sqrt(2 d) Delta / mu does not depend on T; the optimisation term beta B^2 / T falls
      below it from T* = beta B mu / (sqrt(2 d) Delta) = beta B mu n / (2 sqrt(2 d) R) on.  The rule takes
      T = min(ceil(T*), ``max_steps``) (:data:`GRADIENT_MAX_STEPS`, a compute cap) and that step.
    * beta = R^2 / 4 (logistic), B = ``norm_bound`` (||f0||, the constant the frontier's selection and ablation scale).

    We release the last iterate (the estimator's), not the average the theorem bounds, and do not project onto the
    ball of radius B (the theorem's domain)."""
    n, d = _checked(n, d)
    B = check_positive(norm_bound, "norm_bound")
    R = check_positive(radius, "radius")
    beta = _logistic_smoothness(R)
    mu = gaussian_mu(epsilon, delta)
    sens = 2.0 * R / n
    t_star = beta * B * mu / (math.sqrt(2.0 * d) * sens)
    T = int(min(max(1, math.ceil(t_star)), int(max_steps)))
    sigma_total = math.sqrt(d) * math.sqrt(T) * sens / mu
    step = 1.0 / (beta + sigma_total * math.sqrt(T / 2.0) / B)
    return {"n_iter": T, "learning_rate": step, "clip_norm": R, "alpha": 0.0}


def dp_sgd_settings(n: int, d: int, epsilon: float, delta: float, *, norm_bound: float = CHAUDHURI_NORM_BOUND,
                    radius: float = 1.0, max_steps: int = GRADIENT_MAX_STEPS,
                    min_noise_multiplier: float = DPSGD_MIN_NOISE_MULTIPLIER) -> dict[str, float | int | str]:
    """Public rule of DP-SGD with Poisson subsampling (:class:`~dpkernels.DPSGD`, logistic loss): T, the step, C and
    alpha of :func:`noisy_gd_settings`, a constant schedule, and the sampling rate q.

    With z >= ``min_noise_multiplier`` T Poisson-subsampled replace-one steps at rate q are about mu-GDP with
    mu = 2 q sqrt(T) / z (central limit regime; :data:`DPSGD_MIN_NOISE_MULTIPLIER`), so the noise on the mean gradient,
    z R / (q n) = 2 R sqrt(T) / (n mu), is full-batch DP-GD's at the same T: the same T and step, at q times the
    gradient evaluations.  q is the smallest rate whose calibrated z stays in that regime, q = z_min mu / (2 sqrt(T)),
    at most 1/2; the extra sampling variance (about R^2 / (q n) on the mean gradient) is then at most about
    4 / (z_min^2 d) of the injected noise's.  Abadi et al. (2016) Algorithm 1; the accounting is dp-accounting's
    (:func:`dpkernels.mechanisms.gradient.dp_sgd_epsilon`), whatever q."""
    base = noisy_gd_settings(n, d, epsilon, delta, norm_bound=norm_bound, radius=radius, max_steps=max_steps)
    mu = gaussian_mu(epsilon, delta)
    z = check_positive(min_noise_multiplier, "min_noise_multiplier")
    q = min(0.5, z * mu / (2.0 * math.sqrt(base["n_iter"])))
    return {**base, "sampling_rate": q, "schedule": "constant"}


def amp_settings(n: int, d: int, epsilon: float, delta: float, *, norm_bound: float = CHAUDHURI_NORM_BOUND,
                 radius: float = 1.0, confidence: float = CONFIDENCE,
                 output_share: float = AMP_OUTPUT_NOISE_SHARE) -> dict[str, float]:
    """Public rule of approximate minima perturbation (:class:`~dpkernels.ApproximateMinimaPerturbation`, logistic
    loss, its default gradient target gamma = 1/n^2): ``alpha`` (lambda), ``noise_fraction`` and ``out_fraction``.

    * lambda: objective perturbation's excess risk is at most lambda B^2 / 2 + ||b||^2 / (n^2 lambda) (the
      perturbation b / n moves the lambda-strongly convex minimiser by at most ||b|| / (n lambda); Chaudhuri et al.
      2011, proof of Theorem 18), minimised at lambda = sqrt(2) ||b|| / (n B) with ||b|| ~ sqrt(d) sigma_1 and sigma_1
      AMP's objective noise at the whole objective budget (:func:`~dpkernels.mechanisms.gradient.amp_noise_sigma`);
      at least Theorem 18's statistical term sqrt(log(1/beta) / n) / B, and at least the lambda whose Jacobian share
      2 log(1 + c R^2 / (n lambda)) is half the objective budget.
    * noise_fraction: all of the objective budget that the Jacobian share at this lambda leaves (a larger share for
      the Jacobian than lambda needs would be spent on nothing).
    * out_fraction: the output noise (sensitivity 2 gamma / lambda) is at most ``output_share`` of the objective
      noise's effect sigma_1 / (n lambda) on the minimiser; with gamma = 1/n^2 their ratio is about 1 / (n
      out_fraction R), so out_fraction = 1 / (``output_share`` n R), at most 1/2.

    B = ``norm_bound`` is the constant the frontier's selection and ablation scale.  Iyengar et al. (2019) Algorithm
    1; the privacy argument is the estimator's."""
    from dpkernels.mechanisms.gradient import amp_noise_sigma

    n, d = _checked(n, d)
    eps = check_epsilon(epsilon)
    B, R = check_positive(norm_bound, "norm_bound"), check_positive(radius, "radius")
    c = loss_curvature("logistic")
    fo = min(0.5, 1.0 / (check_positive(output_share, "output_share") * n * R))
    e_obj, d_obj = (1.0 - fo) * eps, (1.0 - fo) * delta
    sigma_1 = amp_noise_sigma(e_obj, d_obj, 2.0 * R)
    lam_noise = math.sqrt(2.0 * d) * sigma_1 / (n * B)
    lam_stat = math.sqrt(math.log(1.0 / check_positive(confidence, "confidence")) / n) / B
    lam_half = c * R * R / (n * math.expm1(e_obj / 4.0))
    lam = max(lam_noise, lam_stat, lam_half)
    # the Jacobian share this lambda needs, with a relative margin for the estimator's float64 slack on R
    e_reg = 2.0 * math.log1p(c * R * R / (n * lam)) * (1.0 + 1e-6)
    return {"alpha": lam, "noise_fraction": 1.0 - e_reg / e_obj, "out_fraction": fo}


def output_sgd_settings(n: int, epsilon: float, delta: float, *, norm_bound: float = CHAUDHURI_NORM_BOUND,
                        radius: float = 1.0) -> dict[str, float | int]:
    """Public rule of output-perturbed permutation SGD (:class:`~dpkernels.OutputPerturbedSGD`, logistic loss):
    ``learning_rate``, ``n_passes``, ``batch_size`` and ``alpha``.

    After k passes of batches of b rows with step eta (tau = k eta) the optimisation error is about B^2 b / (2 tau n)
    (the deterministic bound of gradient descent over T = k n / b steps) and the output noise, of standard deviation
    (2 tau L / b) / mu(epsilon, delta) (Wu et al. 2017, Theorem 6 with mini-batches: sensitivity 2 k eta L / b,
    L = R), costs at most R times it (a Lipschitz loss).  Their sum is smallest at tau* = b B sqrt(mu / (4 n L R)),
    where it is 2 B sqrt(L R / (n mu)) whatever b and k: the cheapest (k, b) attaining it is one pass (k = 1) with
    the largest batch whose step tau* stays at most 1 / beta (beta = R^2 / 4, smoothness; Wu et al. require
    eta <= 2 / beta): b = floor(sqrt(4 n L R / mu) / (beta B)), within [1, n], and eta = min(1 / beta, tau*).
    alpha = 0.  B = ``norm_bound`` is the constant the frontier's selection and ablation scale."""
    n, _ = _checked(n, 1)
    B, R = check_positive(norm_bound, "norm_bound"), check_positive(radius, "radius")
    beta = _logistic_smoothness(R)
    mu = gaussian_mu(epsilon, delta)
    L = R
    b = int(min(n, max(1, math.floor(math.sqrt(4.0 * n * L * R / mu) / (beta * B)))))
    step = min(1.0 / beta, b * B * math.sqrt(mu / (4.0 * n * L * R)))
    return {"learning_rate": step, "n_passes": 1, "batch_size": b, "alpha": 0.0}
