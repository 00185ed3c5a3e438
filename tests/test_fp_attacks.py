"""Issues 18 and 26's attacks as tests.  Each attack first wins against the release path that shipped before the fix
(commit eeac753 at its default settings, pinned in ``tests/broken_controls/eeac753.py`` and checked to reproduce that
commit's releases bit for bit), which shows its power, then is run against the current public estimators.

1. The floating-point argmin attack on objective perturbation (ObjectivePerturbation with 1-d Huber and 5-d logistic,
   PrivateKernelERM, PrivateTuning at its default learner).  The attacker knows D and D' and the solver.  From the
   release f it inverts the first-order condition with one data set's rows (unit noise u = -n beta grad(J + (Delta/2)
   ||.||^2)(f)), rounds u to the unit-noise lattice, re-solves, and refines u by the re-solve's own inversion error
   (u <- u + (u(f) - u(f_u)): a fixed-point / Newton iteration on the solver's map, needed at the default tolerance,
   where the solve stops well before the exact minimiser).  It says "D" when a re-solve reproduces the release: bit
   for bit, or in the release's own cell when the estimator publishes the grid it rounds to (``release_grid_``).
2. The generator-rewind attack: a fitted object that holds the generator which drew its noise, anywhere inside it
   (sub-estimators, lists, dicts, dataclasses), can be rewound to the start of the fit and replayed on D and D'.
   eeac753's EquilibriumPointClassifier kept it in ``svdd_.random_state`` with the default ``random_state=None``.
3. Data-derived bounds and label sets: default constructors release only public constants (identical on D and D');
   control: ``data_norm="data"`` / ``classes="data"`` (then the guarantee says "not private").

Each attack's lower bound on epsilon is a 95% Clopper-Pearson bound: log(lower(P[say D | D]) / upper(P[say D | D'])),
where P[say D | D'] is measured, by the symmetry of the attack, as the rate at which D''s rows reproduce releases of D.
The releases of the current estimators are drawn from operating-system entropy (``random_state=None``).
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

from broken_controls import eeac753
from dpkernels.audit import clopper_pearson
from dpkernels.bounds.chaudhuri import theorem_9_parameters
from dpkernels.losses import MarginLoss, make_loss
from dpkernels.mechanisms import (
    EquilibriumPointClassifier,
    ExponentialMarginClassifier,
    ObjectivePerturbation,
    PrivateKernelERM,
    PrivateMarginClassifier,
    PrivateSVMFinite,
    PrivateTuning,
)
from dpkernels.mechanisms.base import ReleaseMixin

Array = np.ndarray


def epsilon_lower_bound(hits_d: int, hits_dprime: int, trials: int) -> float:
    """95% lower confidence bound on epsilon from "say D" counts under D and under D' (0 when nothing is shown)."""
    lo, _ = clopper_pearson(hits_d, trials, 0.1)
    _, hi = clopper_pearson(hits_dprime, trials, 0.1)
    return max(0.0, math.log(lo / hi)) if lo > 0 else 0.0


# ----------------------------------------------------------------------------------------------
# 1. the argmin attack
# ----------------------------------------------------------------------------------------------
#: Fixed-point refinements of the inverted noise (eeac753 at its default tolerance needs 1-2; 0 misses most draws).
REFINEMENTS = 4


@dataclasses.dataclass(frozen=True)
class Problem:
    """What the attacker knows: one candidate data set (features and labels in {-1, +1}) and the public constants."""

    X: Array
    y: Array
    loss: MarginLoss
    alpha: float
    params: Any  #: Theorem 9's ObjectivePerturbationParameters
    data_norm: float

    def unit_noise(self, f: Array) -> Array:
        """The unit noise u (b = u / beta) for which f is the exact minimiser with these rows."""
        A = self.X * self.y[:, None]
        n = A.shape[0]
        _, der = eeac753._loss_parts(self.loss, (A @ f)[:, None])
        grad = A.T @ der[:, 0] / n + (self.alpha + self.params.Delta) * f
        return -n * self.params.beta * grad

    def resolve(self, unit: Array) -> Array:
        """The float64 solve the attacker replays (eeac753's, at its default tolerance)."""
        return eeac753.objective_releases(self.X, self.y, self.loss, self.alpha, self.params, unit[None, :],
                                          self.data_norm)[0]


def says_d(release: Array, problem: Problem, grid: float | None) -> bool:
    """The attack's decision: a re-solve with ``problem``'s rows reproduces ``release`` (bit for bit; with a public
    release grid: in the release's cell, |f - release| < grid / 2 in every coordinate)."""
    target = problem.unit_noise(release)
    u = target.copy()
    for _ in range(REFINEMENTS + 1):
        f = problem.resolve(np.round(u / eeac753.UNIT_GRID) * eeac753.UNIT_GRID)
        if np.array_equal(f, release) if grid is None else bool(np.all(np.abs(f - release) < grid / 2.0)):
            return True
        u = u + (target - problem.unit_noise(f))
    return False


def neighbours(n: int, d: int, seed: int) -> tuple[tuple[Array, Array], tuple[Array, Array]]:
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    X /= np.maximum(1.0, np.linalg.norm(X, axis=1))[:, None]
    y = np.where(X[:, 0] + 0.5 * rng.normal(size=n) > 0, 1.0, -1.0)
    X2, y2 = X.copy(), y.copy()
    X2[0] = -X[0] * 0.9
    y2[0] = -y[0]
    return (X, y), (X2, y2)


Release = tuple[Array, Problem, Problem, float | None]


def count_hits(draw: Callable[[int], Release], trials: int) -> list[int]:
    """"Say D" counts with D's rows and with D''s rows over ``trials`` releases of D."""
    hits = [0, 0]
    for t in range(trials):
        release, on_d, on_dprime, grid = draw(t)
        hits[0] += says_d(release, on_d, grid)
        hits[1] += says_d(release, on_dprime, grid)
    return hits


def assert_attack_wins_on_eeac753(draw_eeac753: Callable[[int], Release], eps: float, trials: int = 40) -> None:
    """The control: against eeac753's release path the attack says "D" on every release of D and never with D''s
    rows, a lower bound above the claimed epsilon."""
    hits = count_hits(draw_eeac753, trials)
    assert hits == [trials, 0] and epsilon_lower_bound(*hits, trials) > eps, (hits, epsilon_lower_bound(*hits, trials))


def assert_attack_loses(draw_current: Callable[[int], Release], eps: float, trials: int = 60) -> None:
    hits = count_hits(draw_current, trials)
    assert epsilon_lower_bound(*hits, trials) <= eps, (hits, epsilon_lower_bound(*hits, trials))


@pytest.mark.parametrize("loss, d, eps", [("huber", 1, 1.0), ("logistic", 5, 1.0), ("logistic", 5, 0.1)],
                         ids=["huber-1d", "logistic-5d-eps1", "logistic-5d-eps0.1"])
def test_argmin_attack_on_objective_perturbation(loss, d, eps):
    (X, y), (X2, y2) = neighbours(30, d, 0)
    lossf, alpha = make_loss(loss), 0.05

    def eeac753_release(t: int) -> Release:
        f, params = eeac753.objective_release(X, y, epsilon=eps, alpha=alpha, loss=loss,
                                              random_state=np.random.default_rng(1000 + t))
        return f, Problem(X, y, lossf, alpha, params, 1.0), Problem(X2, y2, lossf, alpha, params, 1.0), None

    def current_release(t: int) -> Release:
        est = ObjectivePerturbation(epsilon=eps, alpha=alpha, loss=loss).fit(X, y)
        on = [Problem(XX, yy, lossf, float(est.alpha_), est.params_, float(est.data_norm))
              for XX, yy in ((X, y), (X2, y2))]
        return est.coef_, on[0], on[1], getattr(est, "release_grid_", None)

    assert_attack_wins_on_eeac753(eeac753_release, eps)
    assert_attack_loses(current_release, eps)


def test_argmin_attack_on_private_kernel_erm():
    (X, y), (X2, y2) = neighbours(30, 3, 1)
    lossf, alpha, eps = make_loss("logistic"), 0.05, 1.0
    make = lambda: PrivateKernelERM(epsilon=eps, alpha=alpha, n_components=6)  # noqa: E731

    def problems(est: PrivateKernelERM) -> tuple[Problem, Problem]:
        """The public feature map (frequencies and phases are released) and Theorem 9's public constants."""
        R = float(est.feature_norm_)
        params = theorem_9_parameters(eps, len(y), alpha, lossf.curvature, R)
        return (Problem(est._features(X), y, lossf, alpha, params, R),
                Problem(est._features(X2), y2, lossf, alpha, params, R))

    public_map = make().fit(X, y)  # eeac753 drew its features the same way: data-independent, then Algorithm 2

    def eeac753_release(t: int) -> Release:
        on_d, on_dprime = problems(public_map)
        f, _ = eeac753.objective_release(on_d.X, y, epsilon=eps, alpha=alpha, data_norm=on_d.data_norm,
                                         random_state=np.random.default_rng(2000 + t))
        return f, on_d, on_dprime, None

    def current_release(t: int) -> Release:
        est = make().fit(X, y)
        return (est.coef_, *problems(est), getattr(est, "release_grid_", None))

    assert_attack_wins_on_eeac753(eeac753_release, eps)
    assert_attack_loses(current_release, eps)


def test_argmin_attack_on_private_tuning_default_learner(monkeypatch):
    """The split is public by assumption (the attacker is given it); the noise is the operating system's."""
    (X, y), (X2, y2) = neighbours(40, 4, 2)
    split_seed, lossf, alpha, eps = 102, make_loss("logistic"), 0.05, 1.0

    def known_split(self, *public):
        return np.random.default_rng(split_seed)

    monkeypatch.setattr(ReleaseMixin, "_public_rng", known_split)
    part = np.random.default_rng(split_seed).permutation(40)[:20]  # one candidate: parts of 20 rows, validation 20
    assert 0 in part  # the changed row is in the training part the attacker attacks

    def eeac753_release(t: int) -> Release:
        f, params = eeac753.objective_release(X[part], y[part], epsilon=eps, alpha=alpha,
                                              random_state=np.random.default_rng(3000 + t))
        return (f, Problem(X[part], y[part], lossf, alpha, params, 1.0),
                Problem(X2[part], y2[part], lossf, alpha, params, 1.0), None)

    def current_release(t: int) -> Release:
        inner = PrivateTuning(alphas=(alpha,), epsilon=eps).fit(X, y).best_estimator_
        on = [Problem(XX[part], yy[part], lossf, float(inner.alpha_), inner.params_, float(inner.data_norm))
              for XX, yy in ((X, y), (X2, y2))]
        return inner.coef_, on[0], on[1], getattr(inner, "release_grid_", None)

    assert_attack_wins_on_eeac753(eeac753_release, eps)
    assert_attack_loses(current_release, eps)


def test_release_delta_is_stated_and_small():
    (X, y), _ = neighbours(150, 5, 3)
    g = ObjectivePerturbation(epsilon=1.0, alpha=0.05).fit(X, y).guarantee_
    assert g.private and g.epsilon == 1.0 and 0.0 < g.delta < 1e-6
    assert any("floating-point" in a for a in g.assumptions)


# ----------------------------------------------------------------------------------------------
# 2. the generator-rewind attack
# ----------------------------------------------------------------------------------------------
def random_objects(obj: object) -> list[tuple[str, object]]:
    """(path, object) of every generator, bit generator, RandomState or SeedSequence reachable in ``obj``
    (attributes, dataclass fields, list, tuple and dict items, recursively: ``obj.svdd_.random_state``)."""
    from test_release_hygiene import random_objects as walk  # imported late: that module imports this one

    return list(walk(obj))


def _draws_consumed(fit: Callable[[np.random.Generator], object], seed: int) -> int:
    """How many 64-bit outputs a fit consumes from a PCG64 stream (counted by stepping a copy to the end state)."""
    g = np.random.default_rng(seed)
    start = g.bit_generator.state
    fit(g)
    end = g.bit_generator.state["state"]
    probe = np.random.PCG64()
    probe.state = start
    for k in range(1, 2_000_000):
        probe.advance(1)
        if probe.state["state"] == end:
            return k
    raise AssertionError("the fit consumed more than 2e6 draws")


def _rewound(held: np.random.Generator, k: int) -> np.random.Generator:
    bg = np.random.PCG64()
    bg.state = held.bit_generator.state
    bg.advance(2**128 - k)  # back k outputs (the period is 2^128)
    st = bg.state
    st["has_uint32"], st["uinteger"] = 0, 0  # a fresh generator holds no buffered half-word
    bg.state = st
    return np.random.Generator(bg)


def rewind_attack(est, make, X, X2, y, y2, window: range) -> tuple[bool, bool]:
    """Rewind every PCG64 generator held anywhere in the fitted object by each count in ``window`` (the fit's
    consumption varies a little: bounded integers are drawn with rejection), replay the fit on D and on D', and say
    which data set reproduces the release and ends at the held generator's state."""
    held = [g for _, g in random_objects(est) if isinstance(g, np.random.Generator)]
    out = [False, False]
    for gen in held:
        end = gen.bit_generator.state
        for j, (XX, yy) in enumerate(((X, y), (X2, y2))):
            for k in window:
                g = _rewound(gen, k)
                replay = make(g).fit(XX, yy)
                if g.bit_generator.state == end and np.array_equal(replay.svdd_.center_, est.svdd_.center_) \
                        and np.array_equal(replay.ep_labels_, est.ep_labels_):
                    out[j] = True
                    break
    return out[0], out[1]


def test_generator_rewind_attack_needs_a_generator_the_release_never_holds(monkeypatch):
    """The control's operating-system entropy is replaced by seeds 1000, 1001, ... (a deterministic test)."""
    seeds = iter(range(1000, 2000))
    monkeypatch.setattr(eeac753, "operating_system_generator", lambda: np.random.default_rng(next(seeds)))
    rng = np.random.default_rng(0)
    X = rng.uniform(size=(60, 2))
    y = (X[:, 0] > 0.5).astype(int) + (X[:, 1] > 0.5).astype(int)
    X2, y2 = X.copy(), y.copy()
    X2[0], y2[0] = X[0] + 3.0, (y[0] + 1) % 3  # an outlier: the centre moves (in ~99% of feature draws)
    kw = dict(classes=[0, 1, 2], sigma=math.sqrt(0.1), n_components=10, n_starts=40, n_iter=30)  # epsilon 0.5 + 0.5
    make_old = lambda rs: eeac753.EquilibriumPointClassifier(**kw, random_state=rs)  # noqa: E731
    counts = [_draws_consumed(lambda g: make_old(g).fit(X, y), s) for s in range(10)]
    window = range(min(counts) - 15, max(counts) + 15)  # 40 seeds consumed 283-310 outputs
    trials, hits = 12, [0, 0]
    for _ in range(trials):  # control: eeac753's default fit (random_state=None) kept its generator in svdd_
        victim = make_old(None).fit(X, y)
        assert [p for p, _ in random_objects(victim)] == ["obj.svdd_.random_state"]
        a, b = rewind_attack(victim, make_old, X, X2, y, y2, window)
        hits[0] += a
        hits[1] += b
    assert hits == [trials, 0] and epsilon_lower_bound(*hits, trials) > victim.guarantee_.epsilon
    make = lambda rs: EquilibriumPointClassifier(**kw, random_state=rs)  # noqa: E731
    for est in (make(None).fit(X, y), make(None).fit(X, y).release()):  # the default and its export hold none
        assert rewind_attack(est, make, X, X2, y, y2, window) == (False, False)
        assert random_objects(est) == []


# ----------------------------------------------------------------------------------------------
# 3. bounds and label sets read from the data
# ----------------------------------------------------------------------------------------------
def test_default_constructors_release_no_data_derived_bound_or_label_set():
    (X, y), _ = neighbours(80, 6, 4)
    X = 0.5 * X
    X2 = X.copy()
    X2[0] = X[0] / np.linalg.norm(X[0]) * 0.95  # the largest row norm differs between D and D'
    assert np.linalg.norm(X2, axis=1).max() > np.linalg.norm(X, axis=1).max()
    public = {
        PrivateSVMFinite: ("kappa_",),
        PrivateMarginClassifier: ("data_norm_",),
        ExponentialMarginClassifier: ("data_norm_",),
    }
    for cls, attrs in public.items():
        a, b = cls().fit(X, y), cls().fit(X2, y)  # defaults: no raise on either
        for attr in attrs:
            assert getattr(a, attr) == getattr(b, attr), f"{cls.__name__}.{attr} depends on the data"
        assert a.guarantee_.private and math.isfinite(a.guarantee_.epsilon)
        with pytest.warns(Warning):  # control: the bound read from the data tells D from D' every time
            la, lb = cls(data_norm="data").fit(X, y), cls(data_norm="data").fit(X2, y)
        assert getattr(la, attrs[0]) != getattr(lb, attrs[0])
        assert not la.guarantee_.private and la.guarantee_.epsilon == math.inf
    # label sets: a class present in D and absent from D'
    yk = np.arange(80) % 3
    yk2 = yk.copy()
    yk2[yk2 == 2] = 1
    kw = dict(sigma=math.sqrt(0.1), n_components=10, n_starts=30)
    a = EquilibriumPointClassifier(classes=[0, 1, 2], **kw).fit(X, yk)
    b = EquilibriumPointClassifier(classes=[0, 1, 2], **kw).fit(X, yk2)
    assert a.classes_.tolist() == b.classes_.tolist()
    with pytest.raises(ValueError, match="classes is not given"):
        EquilibriumPointClassifier(sigma=math.sqrt(0.1)).fit(X, yk)
    with pytest.warns(Warning):
        la = EquilibriumPointClassifier(classes="data", **kw).fit(X, yk)
        lb = EquilibriumPointClassifier(classes="data", **kw).fit(X, yk2)
    assert la.classes_.tolist() != lb.classes_.tolist() and not la.guarantee_.private
