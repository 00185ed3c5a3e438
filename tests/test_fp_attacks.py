"""Issue 18's attacks as tests, each with a negative control that shows its power on a deliberately broken variant.

1. The floating-point argmin attack on objective perturbation (ObjectivePerturbation with 1-d Huber and 5-d logistic,
   PrivateKernelERM, PrivateTuning at its default learner).  The attacker knows D and D', inverts the first-order
   condition at the release with D's rows (b = -n grad(J + Delta/2 ||.||^2)), rounds b to the noise grid the old
   release drew it on, re-solves with the library's own solver and declares "D" when the re-solve reproduces the
   release bit for bit; a variant compares after the release's own rounding (its offset is the release modulo the
   grid).  Broken variant: the pre-issue-18 release (noise on the 2^-16 lattice, the float64 argmin released as is):
   D's releases are reproduced every time, D''s never.
2. The generator-rewind attack: a fitted object that holds the generator which drew its noise can be rewound to the
   start of the fit and replayed on D and D'.  Broken variant: EquilibriumPointClassifier given a Generator as
   random_state (the object keeps it, as scikit-learn keeps any parameter).  The release holds none
   (random_state=None, or ``release()``).
3. Data-derived bounds and label sets: default constructors release only public constants (identical on D and D');
   broken variant: ``data_norm="data"`` / ``classes="data"`` (then the guarantee says "not private").

Every attack's lower bound on epsilon is a 95% Clopper-Pearson bound: log(lower(P[say D | D]) / upper(P[say D | D'])).
"""

from __future__ import annotations

import math
from types import SimpleNamespace

import numpy as np
import pytest

from dpkernels import lattice
from dpkernels.audit import clopper_pearson
from dpkernels.mechanisms import (
    EquilibriumPointClassifier,
    ExponentialMarginClassifier,
    ObjectivePerturbation,
    PrivateKernelERM,
    PrivateMarginClassifier,
    PrivateSVMFinite,
    PrivateTuning,
)
from dpkernels.mechanisms import chaudhuri as C
from dpkernels.mechanisms.base import ReleaseMixin
from dpkernels.solvers.smooth import Design, _loss_parts


def epsilon_lower_bound(hits_d: int, hits_dprime: int, trials: int) -> float:
    """95% lower confidence bound on epsilon from "say D" counts under D and under D' (0 when nothing is shown)."""
    lo, _ = clopper_pearson(hits_d, trials, 0.1)
    _, hi = clopper_pearson(hits_dprime, trials, 0.1)
    return max(0.0, math.log(lo / hi)) if lo > 0 else 0.0


# ----------------------------------------------------------------------------------------------
# 1. the argmin attack
# ----------------------------------------------------------------------------------------------
#: The legacy release solved to a tight gradient (a careful user's ``tol``): the attacker's inversion of the first-order
#: condition is then exact to far below the noise lattice (with the default tolerance it needs Newton refinement).
LEGACY_TOL = 1e-13


def legacy_releases(design, loss, Lambda, params, m, rng, *, data_norm, center=None):
    """The pre-issue-18 objective perturbation: unit noise on the 2^-16 lattice, the float64 argmin released as is."""
    unit = C.unit_gamma_noise(int(m), design.d, "lattice", rng)
    f = C.objective_releases(design, loss, Lambda, params, unit, data_norm=data_norm, solver_tol=1e-3,
                             center=np.zeros(design.d) if center is None else center, tol=LEGACY_TOL)
    return f, SimpleNamespace(grid=0.0, delta0=0.0, gradient_targets=(0.0,), delta=lambda eps: 0.0)


def _resolve(design, loss, Lambda, params, R, release):
    """The attacker's re-solve: b from the first-order condition at the release, rounded to the unit-noise lattice,
    solved again exactly as the legacy mechanism does."""
    n = design.n_examples
    lam = Lambda + params.Delta
    _, v = _loss_parts(loss, design.matvec(release))
    grad = design.rmatvec(design.weighted(v)) / n + lam * release
    unit_hat = -n * grad * params.beta
    step = lattice.grid_for(1.0)
    unit = np.round(unit_hat / step) * step
    return C.objective_releases(design, loss, Lambda, params, unit[None, :], data_norm=R, solver_tol=1e-3,
                                center=np.zeros(design.d), tol=LEGACY_TOL)[0]


def says_d(release, design, loss, Lambda, params, R, grid=None) -> bool:
    """The attack's decision: the re-solve with D's rows reproduces the release (bitwise, or after the release's own
    rounding when ``grid`` is given: the offset is the release modulo the grid)."""
    f = _resolve(design, loss, Lambda, params, R, release)
    if grid is None:
        return bool(np.array_equal(f, release))
    off = np.mod(release, grid)
    return bool(np.array_equal(np.round((f - off) / grid) * grid + off, release))


def neighbours(n, d, seed):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    X /= np.maximum(1.0, np.linalg.norm(X, axis=1))[:, None]
    y = np.where(X[:, 0] + 0.5 * rng.normal(size=n) > 0, 1.0, -1.0)
    X2, y2 = X.copy(), y.copy()
    X2[0] = -X[0] * 0.9
    y2[0] = -y[0]
    return (X, y), (X2, y2)


def _attack_estimator(make, pair, trials, variant, monkeypatch, design_of, grid_of=None):
    """Run ``trials`` releases on D (each from a fresh fit) and count the attack's "D" on D and on D'."""
    if variant == "broken":
        monkeypatch.setattr(C, "fp_safe_objective_releases", legacy_releases)
    (X, y), (X2, y2) = pair
    hits = [0, 0]
    for _ in range(trials):
        est = make().fit(X, y)
        release, design_d, design_dp, loss, Lambda, params, R = design_of(est, (X, y), (X2, y2))
        grid = None if grid_of is None else grid_of(est)
        hits[0] += says_d(release, design_d, loss, Lambda, params, R, grid)
        hits[1] += says_d(release, design_dp, loss, Lambda, params, R, grid)
    return hits


def _linear_design(est, d_pair, dp_pair):
    from dpkernels.losses import make_loss

    loss = make_loss(est.loss, est.h)
    return (est.coef_, Design(*d_pair), Design(*dp_pair), loss, float(est.alpha), est.params_, float(est.data_norm))


@pytest.mark.parametrize("loss, d, eps", [("huber", 1, 1.0), ("logistic", 5, 1.0), ("logistic", 5, 0.1)],
                         ids=["huber-1d", "logistic-5d-eps1", "logistic-5d-eps0.1"])
def test_argmin_attack_on_objective_perturbation(loss, d, eps, monkeypatch):
    pair = neighbours(30, d, 0)
    make = lambda: ObjectivePerturbation(epsilon=eps, alpha=0.05, loss=loss)  # noqa: E731
    trials = 150
    safe = _attack_estimator(make, pair, trials, "safe", monkeypatch, _linear_design)
    rounded = _attack_estimator(make, pair, trials, "safe", monkeypatch, _linear_design, lambda est: est.release_grid_)
    assert epsilon_lower_bound(*safe, trials) <= eps and epsilon_lower_bound(*rounded, trials) <= eps
    broken = _attack_estimator(make, pair, trials, "broken", monkeypatch, _linear_design)
    assert broken == [trials, 0] and epsilon_lower_bound(*broken, trials) > 3 * eps  # the control shows the power


def _kernel_design(est, d_pair, dp_pair):
    from dpkernels.losses import make_loss

    feats = lambda X: est._features(X)  # noqa: E731  (public: the released frequencies and phases)
    (X, y), (X2, y2) = d_pair, dp_pair
    R = est.feature_norm_
    return (est.coef_, Design(feats(X), y), Design(feats(X2), y2), make_loss(est.loss, est.h), float(est.alpha),
            C.theorem_9_parameters(float(est.epsilon), len(y), float(est.alpha), make_loss(est.loss, est.h).curvature, R),
            R)


def test_argmin_attack_on_private_kernel_erm(monkeypatch):
    pair = neighbours(30, 3, 1)
    make = lambda: PrivateKernelERM(epsilon=1.0, alpha=0.05, n_components=6)  # noqa: E731
    trials = 100
    safe = _attack_estimator(make, pair, trials, "safe", monkeypatch, _kernel_design)
    assert epsilon_lower_bound(*safe, trials) <= 1.0
    broken = _attack_estimator(make, pair, trials, "broken", monkeypatch, _kernel_design)
    assert broken == [trials, 0] and epsilon_lower_bound(*broken, trials) > 3.0


def test_argmin_attack_on_private_tuning_default_learner(monkeypatch):
    """The split is public by assumption (the attacker is given it); the noise is the operating system's."""
    pair = neighbours(40, 4, 2)
    split_seed = 102

    def known_split(self, *public):
        return np.random.default_rng(split_seed)

    monkeypatch.setattr(ReleaseMixin, "_public_rng", known_split)
    order = np.random.default_rng(split_seed).permutation(40)
    part = order[:20]  # one candidate: parts of (40 - 40 // 2) rows, validation 40 // 2
    assert 0 in part  # the changed row is in the training part the attacker attacks

    def design_of(est, d_pair, dp_pair):
        inner = est.best_estimator_
        (X, y), (X2, y2) = d_pair, dp_pair
        return (inner.coef_, Design(X[part], y[part]), Design(X2[part], y2[part]), C.make_loss(inner.loss, inner.h),
                float(inner.alpha), inner.params_, float(inner.data_norm))

    make = lambda: PrivateTuning(alphas=(0.05,), epsilon=1.0)  # noqa: E731
    trials = 100
    safe = _attack_estimator(make, pair, trials, "safe", monkeypatch, design_of)
    assert epsilon_lower_bound(*safe, trials) <= 1.0
    broken = _attack_estimator(make, pair, trials, "broken", monkeypatch, design_of)
    assert broken == [trials, 0] and epsilon_lower_bound(*broken, trials) > 3.0


def test_release_delta_is_stated_and_small():
    (X, y), _ = neighbours(200, 5, 3)
    g = ObjectivePerturbation(epsilon=1.0, alpha=0.05).fit(X, y).guarantee_
    assert g.private and g.epsilon == 1.0 and 0.0 < g.delta < 1e-6
    assert any("floating-point safe" in a for a in g.assumptions)


# ----------------------------------------------------------------------------------------------
# 2. the generator-rewind attack
# ----------------------------------------------------------------------------------------------
def _draws_consumed(fit, seed: int) -> int:
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
    """Rewind the generator the fitted object holds by each count in ``window`` (the fit's consumption varies a little:
    bounded integers are drawn with rejection), replay the fit on D and on D', and say which data set reproduces the
    release and ends at the held generator's state."""
    held = [v for v in vars(est).values() if isinstance(v, np.random.Generator)]
    if not held:
        return False, False
    end = held[0].bit_generator.state
    out = []
    for XX, yy in ((X, y), (X2, y2)):
        found = False
        for k in window:
            g = _rewound(held[0], k)
            replay = make(g).fit(XX, yy)
            if g.bit_generator.state == end and np.array_equal(replay.svdd_.center_, est.svdd_.center_) \
                    and np.array_equal(replay.ep_labels_, est.ep_labels_):
                found = True
                break
        out.append(found)
    return out[0], out[1]


def test_generator_rewind_attack_needs_a_generator_the_release_never_holds():
    rng = np.random.default_rng(0)
    X = rng.uniform(size=(60, 2))
    y = (X[:, 0] > 0.5).astype(int) + (X[:, 1] > 0.5).astype(int)
    X2, y2 = X.copy(), y.copy()
    X2[0], y2[0] = X[0] + 3.0, (y[0] + 1) % 3  # an outlier: a support vector of the SVDD, so the centre moves
    kw = dict(classes=[0, 1, 2], sigma=math.sqrt(0.1), n_components=10, n_starts=40, n_iter=30, epsilon_svdd=1.0, epsilon_vote=1.0)
    make = lambda rs: EquilibriumPointClassifier(**kw, random_state=rs)  # noqa: E731
    counts = [_draws_consumed(lambda g: make(g).fit(X, y), s) for s in range(5)]
    window = range(min(counts) - 40, max(counts) + 40)
    trials, hits = 12, [0, 0]
    for t in range(trials):  # broken variant: a Generator passed as random_state stays in the object
        victim = make(np.random.default_rng(1000 + t)).fit(X, y)
        a, b = rewind_attack(victim, make, X, X2, y, y2, window)
        hits[0] += a
        hits[1] += b
    assert hits == [trials, 0] and epsilon_lower_bound(*hits, trials) > 1.0
    for est in (make(None).fit(X, y), make(7).fit(X, y).release()):  # the default and the export hold none
        assert rewind_attack(est, make, X, X2, y, y2, window) == (False, False)


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
        a, b = cls(random_state=0).fit(X, y), cls(random_state=0).fit(X2, y)  # defaults: no raise on either
        for attr in attrs:
            assert getattr(a, attr) == getattr(b, attr), f"{cls.__name__}.{attr} depends on the data"
        assert a.guarantee_.status == "reproduction" and math.isfinite(a.guarantee_.epsilon)  # seeded, not data-derived
        with pytest.warns(Warning):  # broken variant: the bound read from the data tells D from D' every time
            la, lb = cls(data_norm="data", random_state=0).fit(X, y), cls(data_norm="data", random_state=0).fit(X2, y)
        assert getattr(la, attrs[0]) != getattr(lb, attrs[0])
        assert not la.guarantee_.private and la.guarantee_.epsilon == math.inf
    # label sets: a class present in D and absent from D'
    yk = np.arange(80) % 3
    yk2 = yk.copy()
    yk2[yk2 == 2] = 1
    a = EquilibriumPointClassifier(classes=[0, 1, 2], sigma=math.sqrt(0.1), n_components=10, n_starts=30, random_state=0).fit(X, yk)
    b = EquilibriumPointClassifier(classes=[0, 1, 2], sigma=math.sqrt(0.1), n_components=10, n_starts=30, random_state=0).fit(X, yk2)
    assert a.classes_.tolist() == b.classes_.tolist()
    with pytest.raises(ValueError, match="classes is not given"):
        EquilibriumPointClassifier(sigma=math.sqrt(0.1)).fit(X, yk)
    with pytest.warns(Warning):
        la = EquilibriumPointClassifier(classes="data", sigma=math.sqrt(0.1), n_components=10, n_starts=30).fit(X, yk)
        lb = EquilibriumPointClassifier(classes="data", sigma=math.sqrt(0.1), n_components=10, n_starts=30).fit(X, yk2)
    assert la.classes_.tolist() != lb.classes_.tolist() and not la.guarantee_.private
