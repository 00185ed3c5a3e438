"""Privacy audits: every mechanism on a neighbouring pair, its exact privacy loss and a negative control."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from dpkernels import lattice, verdicts
from dpkernels.audit import epsilon_lower_bound
from dpkernels.bounds import chaudhuri as B
from dpkernels.losses import MarginLoss, make_loss
from dpkernels.mechanisms.chaudhuri import ObjectivePerturbation, OutputPerturbation, objective_releases, unit_gamma_noise

from .statements import _toy

Array = NDArray[np.float64]

# ----------------------------------------------------------------------------------------------
# privacy audits: every mechanism on a neighbouring pair, its exact privacy loss, a negative control
# ----------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class AuditResult:
    """A (1 - alpha) Clopper-Pearson lower bound on epsilon from releases of a neighbouring pair, next to the pair's
    exact privacy loss; the negative control is the same pair with less noise (``control_factor`` x the noise
    scale), whose exact loss exceeds the claim and which the audit must detect."""

    mechanism: str
    epsilon: float
    epsilon_lb: float
    exact_loss: float
    n_releases: int
    control_factor: float
    control_lb: float
    control_exact_loss: float
    notes: str = ""

    def outcome(self) -> verdicts.Outcome:
        """The audit's verdict (:func:`dpkernels.verdicts.audit_verdict`): violated when the lower bound exceeds
        epsilon, holds only when it does not and the negative control was caught above epsilon (the audit had power),
        inconclusive otherwise (no control, or a control it missed)."""
        control = None if np.isnan(self.control_lb) else self.control_lb
        return verdicts.audit_verdict(self.epsilon_lb, self.epsilon, control_lb=control, control_claimed=self.epsilon)

    def row(self) -> dict[str, object]:
        return {"mechanism": self.mechanism, "epsilon": self.epsilon, "exact_loss": self.exact_loss,
                "epsilon_lb": self.epsilon_lb, "n_releases": self.n_releases, "control_noise": self.control_factor,
                "control_exact_loss": self.control_exact_loss, "control_lb": self.control_lb}


def _gamma_llr(outputs: Array, c: Array, cp: Array, beta: float) -> Array:
    """beta (||o - c'|| - ||o - c||): Algorithm 1's log-likelihood ratio, rounded against floating-point ties."""
    o = np.atleast_2d(outputs)
    stat = beta * (np.linalg.norm(o - cp, axis=1) - np.linalg.norm(o - c, axis=1))
    return np.round(stat, 9)


def audit_output_perturbation(epsilon: float, n_releases: int, Lambda: float = 1.0, n: int = 5,
                              random_state: int = 0) -> AuditResult:
    """Algorithm 1 on its worst case (Theorem 6 is tight here): Huber loss, every margin in the linear piece (so
    f* = sum y_i x_i / (n Lambda) exactly), and the changed row at the unit sphere flipping sides (x_n = 1 against
    x_n' = -1, d = 1): ||f*(D) - f*(D')|| = 2 / (n Lambda) = the sensitivity, so the pair's exact loss is eps.
    Releases from :class:`OutputPerturbation` itself (lattice noise); negative control: half the noise scale."""
    X1 = np.zeros((n, 1))
    X1[-1, 0] = 1.0
    X2 = -X1
    y = np.where(np.arange(n) % 2 == 0, 1.0, -1.0)
    y[-1] = 1.0
    rng = np.random.default_rng(random_state)
    kw = dict(epsilon=epsilon, alpha=Lambda, loss="huber", keep_nonprivate=True)
    m1 = OutputPerturbation(**kw, random_state=rng).fit(X1, y)
    m2 = OutputPerturbation(**kw, random_state=rng).fit(X2, y)
    c, cp = m1.nonprivate_solution.coef, m2.nonprivate_solution.coef
    exact = m1.beta_ * float(np.linalg.norm(c - cp))

    def audit(eps: float) -> float:
        a, b = m1.sample_releases(n_releases, rng, epsilon=eps), m2.sample_releases(n_releases, rng, epsilon=eps)
        beta = eps / m1.sensitivity_
        return epsilon_lower_bound(_gamma_llr(a, c, cp, beta), _gamma_llr(b, c, cp, beta), random_state=rng).epsilon_lb

    return AuditResult("Algorithm 1 (Theorem 6)", epsilon, audit(epsilon), exact, n_releases, 0.5, audit(2 * epsilon), 2 * exact,
                       f"Huber, n = {n}, Lambda = {Lambda:g}, d = 1; ||f*(D) - f*(D')|| = {float(np.linalg.norm(c - cp)):.6g}, "
                       f"sensitivity {m1.sensitivity_:.6g}")


@dataclass(frozen=True)
class ObjectiveMechanism:
    """The constants an objective-perturbation release uses (ours or diffprivlib's)."""

    Lambda: float  #: regulariser of the weights (per example, as in J)
    Delta: float  #: extra regulariser of every coordinate (diffprivlib: including the intercept)
    beta: float  #: noise density ~ exp(-beta ||b||)
    intercept: bool  #: an unpenalised intercept coordinate (diffprivlib's fit_intercept)


def exact_objective_llr(theta: Array, X1: Array, y1: Array, X2: Array, y2: Array, loss: MarginLoss,
                        mech: ObjectiveMechanism) -> Array:
    """log p_D(theta) - log p_D'(theta) for objective-perturbation releases theta (rows), exactly and vectorised.

    theta = argmin J(t) + b't/n + (Delta/2)||t||^2 gives b = -n (grad J(theta) + Delta theta), a bijection, so the
    release density is ``nu(b(theta)) |det db/dtheta|`` with nu ~ exp(-beta ||b||) and db/dtheta = -n (hess J + Delta I).
    With an intercept, theta = (w, b0), the features are (x, 1) and only w carries Lambda.  For the Huber loss the
    formula holds off the measure-zero set where a margin sits at a kink (Corollary 13).
    """
    theta = np.atleast_2d(np.asarray(theta, dtype=np.float64))

    def log_density(X: Array, y: Array) -> Array:
        n = X.shape[0]
        Xa = np.hstack([X, np.ones((n, 1))]) if mech.intercept else X
        reg = np.full(Xa.shape[1], mech.Lambda + mech.Delta)
        if mech.intercept:
            reg[-1] = mech.Delta
        Z = (theta @ Xa.T) * y  # (m, n)
        grad = (loss.derivative(Z) * y) @ Xa / n + reg * theta
        H = np.einsum("mi,ij,ik->mjk", loss.second_derivative(Z), Xa, Xa) / n + np.diag(reg)
        sign, logdet = np.linalg.slogdet(H)
        return -mech.beta * n * np.linalg.norm(grad, axis=1) + np.where(sign > 0, logdet, -np.inf)

    return log_density(X1, y1) - log_density(X2, y2)


def objective_pair_loss(X1: Array, y1: Array, X2: Array, y2: Array, loss: MarginLoss, mech: ObjectiveMechanism,
                        radius: float, points: int = 40001) -> float:
    """sup over releases ``|log p_D - log p_D'|`` on a grid of ``|theta| <= radius`` (d = 1, or d = 2 without intercept)."""
    g = np.linspace(-radius, radius, points)
    return float(np.max(np.abs(exact_objective_llr(g[:, None], X1, y1, X2, y2, loss, mech))))


def _objective_pair(loss: str) -> tuple[Array, Array, Array, Array]:
    """A pair for Algorithm 2 whose changed row carries all the curvature: n = 5, d = 1, rows at the origin except the
    last, which is at the unit sphere (D) or at the origin (D')."""
    X1 = np.zeros((5, 1))
    X1[-1, 0] = 1.0
    X2 = np.zeros((5, 1))
    y = np.array([1.0, -1.0, 1.0, -1.0, 1.0])
    return X1, y, X2, y


def audit_objective_perturbation(loss: str, epsilon: float, n_releases: int, Lambda: float = 0.05,
                                 data_norm: float = 1.0, random_state: int = 0) -> AuditResult:
    """Algorithm 2 (logistic: Theorem 9; Huber: Corollary 13) on :func:`_objective_pair` (scaled to ``data_norm``):
    releases of :meth:`ObjectivePerturbation.sample_releases` (every draw a certified solve, all solved together),
    the exact log-likelihood ratio as test statistic, the pair's exact loss (sup over a grid), and a negative control
    with the noise scale divided by the first of 2, 4, 8 that makes the pair's exact loss exceed 1.5 eps."""
    X1, y1, X2, y2 = _objective_pair(loss)
    X1 = X1 * data_norm
    L = make_loss(loss)
    rng = np.random.default_rng(random_state)
    kw = dict(epsilon=epsilon, alpha=Lambda, loss=loss, data_norm=data_norm, keep_nonprivate=True)
    m1 = ObjectivePerturbation(**kw, random_state=rng).fit(X1, y1)
    m2 = ObjectivePerturbation(**kw, random_state=rng).fit(X2, y2)
    p = m1.params_
    mech = ObjectiveMechanism(Lambda, p.Delta, p.beta, False)
    radius = 60.0 / (p.beta * 5 * (Lambda + p.Delta))  # 60 noise scales of the release
    exact = objective_pair_loss(X1, y1, X2, y2, L, mech, radius)

    def releases(model: ObjectivePerturbation, factor: float) -> Array:
        ev = model.nonprivate_
        q = type(p)(p.epsilon_prime, p.Delta, p.beta / factor, p.branch)
        unit = unit_gamma_noise(n_releases, 1, "lattice", rng)
        return objective_releases(ev.design, L, Lambda, q, unit, data_norm=data_norm, solver_tol=1e-6, center=ev.solution.coef)

    def audit(factor: float) -> float:
        m = ObjectiveMechanism(Lambda, p.Delta, p.beta / factor, False)
        s1 = exact_objective_llr(releases(m1, factor), X1, y1, X2, y2, L, m)
        s2 = exact_objective_llr(releases(m2, factor), X1, y1, X2, y2, L, m)
        return epsilon_lower_bound(np.round(s1, 9), np.round(s2, 9), random_state=rng).epsilon_lb

    factor, control_exact = 0.5, exact
    for factor in (0.5, 0.25, 0.125):
        control_exact = objective_pair_loss(X1, y1, X2, y2, L, ObjectiveMechanism(Lambda, p.Delta, p.beta / factor, False),
                                            radius * factor)
        if control_exact > 1.5 * epsilon:
            break
    name = "Algorithm 2 (Theorem 9, logistic)" if loss == "logistic" else f"Algorithm 2 (Corollary 13, {loss})"
    if data_norm != 1.0:
        name += f", data_norm = {data_norm:g}"
    return AuditResult(name, epsilon, audit(1.0), exact, n_releases, factor, audit(factor), control_exact,
                       f"n = 5, d = 1, Lambda = {Lambda:g}, branch {p.branch}, eps' = {p.epsilon_prime:.4g}, Delta = {p.Delta:.4g}")


def _selection_probabilities(z: Array, epsilon: float) -> Array:
    return B.algorithm_4_probabilities(z, epsilon)


def audit_selection(epsilon: float, n_releases: int, m: int = 5, random_state: int = 0) -> AuditResult:
    """Algorithm 4's selection (Theorem 26's exponential mechanism) on worst-case neighbouring mistake counts: a
    validation row that the first candidate classifies correctly and the others wrongly has its label flipped, so
    z = (0, 1, ..., 1) becomes z' = (1, 0, ..., 0).  Exact loss ``max_i |log q_i(z) - log q_i(z')|``; draws from
    :func:`dpkernels.lattice.exponential_mechanism_exact` (the sampler PrivateTuning uses), the selected index as the
    statistic; negative control: the selection at 2 eps (exp(-eps z) instead of exp(-eps z / 2), the factor 2 of the
    exponential mechanism forgotten)."""
    z = np.ones(m)
    z[0] = 0.0
    zp = 1.0 - z
    rng = np.random.default_rng(random_state)

    def exact(eps: float) -> float:
        return float(np.max(np.abs(np.log(_selection_probabilities(z, eps)) - np.log(_selection_probabilities(zp, eps)))))

    def audit(eps: float) -> float:
        a = np.array([lattice.exponential_mechanism_exact(-z, eps, 1.0, rng) for _ in range(n_releases)], dtype=float)
        b = np.array([lattice.exponential_mechanism_exact(-zp, eps, 1.0, rng) for _ in range(n_releases)], dtype=float)
        return _index_lb(a, b, rng)

    return AuditResult("Algorithm 4 selection (Theorem 26)", epsilon, audit(epsilon), exact(epsilon), n_releases, 0.5,
                       audit(2 * epsilon), exact(2 * epsilon), f"m = {m} candidates, z = (0, 1, ..., 1) against z' = (1, 0, ..., 0)")


def _index_lb(a: Array, b: Array, rng: np.random.Generator, alpha: float = 0.05) -> float:
    """Lower bound on epsilon from selected indices under D (``a``) and D' (``b``): the audit's events are index sets
    {i <= t} or {i > t} in either direction, so both orientations are tried at alpha/2 each (Bonferroni)."""
    return max(epsilon_lower_bound(a, b, alpha=alpha / 2, random_state=rng).epsilon_lb,
               epsilon_lower_bound(-a, -b, alpha=alpha / 2, random_state=rng).epsilon_lb)


def audit_private_tuning(epsilon: float, n_releases: int, n_part: int = 500, Lambda: float = 0.1, m: int = 3,
                         random_state: int = 0) -> AuditResult:
    """Algorithm 4 end to end (Theorem 26) with :class:`PrivateTuning`'s pieces: m learners (Algorithm 1, Huber) on
    disjoint parts and the exact exponential mechanism over their validation mistakes.  The pair: part 0 is labelled
    sign(x_1), the other parts -sign(x_1), so learner 0 and the others disagree on x0 = (0.9, 0); the validation part
    is x0 alone, labelled +1 in D and -1 in D' (one row replaced).  The learners' laws are the same under D and D', so
    each run draws them once (one non-private solve per part, the noise vectorised) and scores them on both.
    Statistic: the selected index; exact loss of that release: ``max_i |log E q_i(z) - log E q_i(z')|`` (E over the
    learners' noise, by Monte Carlo over the same runs); negative control: the selection at 2 eps."""
    rng = np.random.default_rng(random_state)
    d = 2
    x0 = np.array([[0.9, 0.0]])
    Z1 = np.empty((n_releases, m))
    Z2 = np.empty((n_releases, m))
    for i in range(m):
        Xp, _ = _toy(n_part, d, rng)
        yp = np.where(Xp[:, 0] > 0, 1.0, -1.0) * (1.0 if i == 0 else -1.0)
        mdl = OutputPerturbation(epsilon=epsilon, alpha=Lambda, loss="huber", keep_nonprivate=True, random_state=rng).fit(Xp, yp)
        pred = np.where(mdl.sample_releases(n_releases, rng) @ x0[0] >= 0, 1.0, -1.0)
        Z1[:, i] = pred != 1.0
        Z2[:, i] = pred != -1.0

    def exact(eps: float) -> float:
        q1 = np.mean([_selection_probabilities(z, eps) for z in Z1], axis=0)
        q2 = np.mean([_selection_probabilities(z, eps) for z in Z2], axis=0)
        return float(np.max(np.abs(np.log(q1) - np.log(q2))))

    def audit(eps: float) -> float:
        a = np.array([lattice.exponential_mechanism_exact(-z, eps, 1.0, rng) for z in Z1], dtype=float)
        b = np.array([lattice.exponential_mechanism_exact(-z, eps, 1.0, rng) for z in Z2], dtype=float)
        return _index_lb(a, b, rng)

    flips = float(np.mean(Z1[:, 0] != Z1[0, 0]))
    return AuditResult("PrivateTuning end to end (Theorem 26)", epsilon, audit(epsilon), exact(epsilon), n_releases, 0.5,
                       audit(2 * epsilon), exact(2 * epsilon),
                       f"m = {m} Algorithm-1 learners (Huber, Lambda = {Lambda:g}) on {n_part}-row parts, the validation "
                       f"row's label flipped; learner 0's prediction on it varies in {flips:.1%} of the runs")
