"""BROKEN CONTROL: the release paths of commit eeac753 (before issue 18), pinned.  Never use them to release.

* :func:`objective_release`: ``ObjectivePerturbation.fit`` of eeac753 at its shipped defaults (``noise="lattice"``,
  ``solver_tol=1e-3``, ``tol=None``, no intercept, started at 0): unit noise exactly rounded to the 2^-16 lattice,
  b = unit / beta, and the float64 minimiser of J(f, D) + b'f / n + (Delta/2)||f||^2 released as is, stopped at the
  gradient norm ``0.5 solver_tol 2R / n``.  The solve is eeac753's ``solve_smooth_erm_batch`` on a small dense problem
  (n d^2 <= 4096 rows x coordinates^2: its batched damped Newton ``_small_batch``, copied with the logistic and Huber
  parts it evaluates), so the pinned path is independent of later changes to :mod:`dpkernels.solvers`.  A float
  argmin is a deterministic function of (b, D) onto a countable set of doubles: the argmin attack of
  ``tests/test_fp_attacks.py`` identifies the data set (issue 18).
* :func:`releasing_the_float_argmin`: ``ObjectivePerturbation.fit`` wrapped so that its release is eeac753's (for the
  demonstration that the attack tests fail on eeac753, :mod:`broken_controls.substitute_eeac753`).
* :class:`EquilibriumPointClassifier` (:func:`keeping_the_generator`): eeac753's Park classifier behaviour: one
  generator (fresh operating-system entropy when ``random_state=None``) drew the frequencies, the centre's noise,
  the starts and the votes, and the SVDD sub-release kept it as its ``random_state`` (``svdd_.random_state``), so a
  default fit held the generator that drew its noise (the generator-rewind attack).  Modelled on the current
  classifier (the same draws from one generator, the same release), not a copy of the old code.

Checked once against eeac753 itself (a worktree of that commit on PYTHONPATH): :func:`objective_release` reproduced
eeac753's ``ObjectivePerturbation(epsilon, Lambda=0.05, loss).fit(X, y).coef_`` bit for bit in 100 of 100 fits
(Huber d = 1, logistic d = 5 at epsilon 1 and 0.1, logistic d = 6; n = 30; 25 seeded generators each).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

import numpy as np
from numpy.typing import NDArray

from dpkernels import lattice
from dpkernels._validation import check_random_state
from dpkernels.bounds.chaudhuri import ObjectivePerturbationParameters, theorem_9_parameters
from dpkernels.losses import Huber, Logistic, MarginLoss, make_loss
from dpkernels.mechanisms import park

Array = NDArray[np.float64]

#: eeac753's defaults of ObjectivePerturbation.
SOLVER_TOL = 1e-3
GTOL_SAFETY = 0.5
SMALL_PROBLEM = 4096
MAX_ITER = 100
UNIT_GRID = 2.0**-16  # the lattice of the unit noise (grid_for(1.0) at eeac753)
_BLOCK = 2048


def certified_gtol(n: float, data_norm: float, solver_tol: float = SOLVER_TOL) -> float:
    """eeac753's stopping rule: ||grad|| <= GTOL_SAFETY x solver_tol x 2R / n."""
    return GTOL_SAFETY * solver_tol * 2.0 * data_norm / n


def _huber_parts(z: Array, h: float) -> tuple[Array, Array]:
    der = np.empty_like(z)
    val = np.empty_like(z)
    tmp = np.empty_like(z[:_BLOCK])
    for a in range(0, z.shape[0], _BLOCK):
        zb, g = z[a:a + _BLOCK], der[a:a + _BLOCK]
        t = tmp[: zb.shape[0]]
        np.subtract(1.0 + h, zb, out=t)
        np.clip(t, 0.0, 2.0 * h, out=g)
        v = val[a:a + _BLOCK]
        t -= 2.0 * h
        np.maximum(t, 0.0, out=t)
        np.multiply(g, g, out=v)
        v *= 1.0 / (4.0 * h)
        v += t
        g *= -1.0 / (2.0 * h)
    return val, der


def _logistic_parts(z: Array) -> tuple[Array, Array]:
    der = np.empty_like(z)
    val = np.empty_like(z)
    tmp = np.empty_like(z[:_BLOCK])
    for a in range(0, z.shape[0], _BLOCK):
        zb, g = z[a:a + _BLOCK], der[a:a + _BLOCK]
        t = tmp[: zb.shape[0]]
        np.abs(zb, out=g)
        np.negative(g, out=g)
        np.exp(g, out=g)
        v = val[a:a + _BLOCK]
        np.log1p(g, out=v)
        np.maximum(zb, 0.0, out=t)
        t -= zb
        v += t
        np.add(g, 1.0, out=t)
        np.divide(1.0, t, out=t)
        np.multiply(g, t, out=g)
        np.copyto(g, t, where=zb < 0)
        np.negative(g, out=g)
    return val, der


def _loss_parts(loss: MarginLoss, z: Array) -> tuple[Array, Array]:
    if isinstance(loss, Logistic):
        return _logistic_parts(z)
    if isinstance(loss, Huber):
        return _huber_parts(z, loss.h)
    return loss.value(z), loss.derivative(z)


def small_batch_solve(A: Array, loss: MarginLoss, lam: float, B: Array, gtol: float, center: Array | None = None
                      ) -> tuple[Array, Array]:
    """eeac753's ``solve_smooth_erm_batch`` on a small dense problem: argmin_w mean l(A w) + (lam/2)||w||^2 + <b_k, w>/n
    for every row b_k of ``B`` by batched damped Newton from ``center`` (default 0), stopped at ||grad|| <= ``gtol``.
    ``A`` holds the signed rows y_i x_i.  Returns the minimisers (K, d) and their gradient norms (K,)."""
    n_rows, d = A.shape
    if n_rows * d * d > SMALL_PROBLEM:
        raise ValueError("the pinned eeac753 path covers only the small dense problems (n d^2 <= 4096) of the tests")
    n = float(n_rows)
    B = np.atleast_2d(np.asarray(B, dtype=np.float64))
    Lin = B.T / n
    K = Lin.shape[1]
    w = np.ones(n_rows)
    center = np.zeros(d) if center is None else np.asarray(center, dtype=np.float64)

    def evaluate(W: Array) -> tuple[Array, Array, Array]:
        Z = A @ W
        val, der = _loss_parts(loss, Z)
        F = (w @ val) / n + 0.5 * lam * np.einsum("ij,ij->j", W, W) + np.einsum("ij,ij->j", Lin, W)
        G = A.T @ (w[:, None] * der) / n + lam * W + Lin
        return F, G, Z

    W = np.repeat(center[:, None], K, axis=1)
    F, G, Z = evaluate(W)
    gn = np.linalg.norm(G, axis=0)
    it = 0
    while it < MAX_ITER and np.any(gn > gtol):
        it += 1
        act = np.flatnonzero(gn > gtol)
        C = (w[:, None] * loss.second_derivative(Z[:, act])) / n
        H = np.einsum("ik,ij,il->kjl", C, A, A) + lam * np.eye(d)
        P = -np.linalg.solve(H, G[:, act].T[:, :, None])[:, :, 0].T
        slope = np.einsum("ij,ij->j", G[:, act], P)
        t = np.ones(act.size)
        Wn = W[:, act] + P
        Lsub = Lin[:, act]
        for _ in range(60):
            Zn = A @ Wn
            val, der = _loss_parts(loss, Zn)
            Fn = (w @ val) / n + 0.5 * lam * np.einsum("ij,ij->j", Wn, Wn) + np.einsum("ij,ij->j", Lsub, Wn)
            fail = (Fn > F[act] + 1e-4 * t * slope) & (np.abs(slope) > 1e-14 * np.maximum(1.0, np.abs(F[act])))
            if not fail.any():
                break
            t[fail] *= 0.5
            Wn[:, fail] = W[:, act[fail]] + t[fail] * P[:, fail]
        W[:, act] = Wn
        F[act] = Fn
        G[:, act] = A.T @ (w[:, None] * der) / n + lam * Wn + Lsub
        Z[:, act] = Zn
        gn[act] = np.linalg.norm(G[:, act], axis=0)
    return W.T.copy(), gn


def objective_releases(X: Array, y: Array, loss: MarginLoss, alpha: float, params: ObjectivePerturbationParameters,
                       unit: Array, data_norm: float) -> Array:
    """eeac753's ``objective_releases`` at the shipped defaults: the float64 argmins for b = unit / beta (rows),
    certified to solver_tol x the sensitivity 2R / (n (Lambda + Delta)) (``RuntimeError`` otherwise)."""
    A = np.asarray(X, dtype=np.float64) * np.asarray(y, dtype=np.float64)[:, None]
    n = float(A.shape[0])
    lam = alpha + params.Delta
    coef, gn = small_batch_solve(A, loss, lam, np.atleast_2d(unit) / params.beta, certified_gtol(n, data_norm))
    if not float(np.max(gn / lam)) <= SOLVER_TOL * 2.0 * data_norm / (n * lam):
        raise RuntimeError("the pinned eeac753 solve was not certified")
    return coef


def objective_release(X: Array, y: Array, *, epsilon: float, alpha: float, loss: str = "logistic", h: float = 0.5,
                      data_norm: float = 1.0, random_state: object = None
                      ) -> tuple[Array, ObjectivePerturbationParameters]:
    """eeac753's ``ObjectivePerturbation(epsilon, Lambda=alpha, loss, h, data_norm).fit(X, y).coef_`` (labels y in
    {-1, +1}, rows already in the ball of radius ``data_norm``) and its public parameters."""
    X = np.asarray(X, dtype=np.float64)
    n, d = X.shape
    lossf = make_loss(loss, h)
    params = theorem_9_parameters(epsilon, n, alpha, lossf.curvature, data_norm)
    unit = lattice.gamma_norm_lattice(np.zeros((1, d)), 1.0, check_random_state(random_state))
    if not np.array_equal(np.round(unit / UNIT_GRID) * UNIT_GRID, unit):
        raise AssertionError("the unit noise is no longer on eeac753's 2^-16 lattice")
    return objective_releases(X, y, lossf, alpha, params, unit, data_norm)[0], params


def operating_system_generator() -> np.random.Generator:
    """What eeac753's ``check_random_state(None)`` returned: a generator seeded from operating-system entropy (a test
    may replace this function to make the control deterministic)."""
    return np.random.default_rng()


def keeping_the_generator(fit: Callable[..., Any]) -> Callable[..., Any]:
    """An EquilibriumPointClassifier ``fit`` with eeac753's behaviour: one generator for the whole fit, kept by the
    SVDD sub-release as ``svdd_.random_state`` even when ``random_state=None``."""

    def eeac753_fit(self: Any, X: Any, y: Any, svdd: Any = None) -> Any:
        given = self.random_state
        rng = operating_system_generator() if given is None else check_random_state(given)
        self.random_state = rng  # a Generator: the current classifier draws everything from it
        try:
            fit(self, X, y, svdd)
        finally:
            self.random_state = given
        self.svdd_.random_state = rng  # what eeac753's PrivateSVDD(random_state=rng) kept
        return self

    return eeac753_fit


class EquilibriumPointClassifier(park.EquilibriumPointClassifier):
    """eeac753's :class:`~dpkernels.EquilibriumPointClassifier` behaviour (:func:`keeping_the_generator`)."""

    fit = keeping_the_generator(park.EquilibriumPointClassifier.fit)


def releasing_the_float_argmin(fit: Callable[..., Any]) -> Callable[..., Any]:
    """An ObjectivePerturbation ``fit`` whose release is eeac753's (:func:`objective_release`, no intercept): the
    current fit validates and states its constants, then ``coef_`` is replaced by eeac753's float64 argmin for fresh
    noise (``random_state`` as eeac753 read it), with no release grid and delta 0 (what eeac753 stated)."""

    def eeac753_fit(self: Any, X: Any, y: Any) -> Any:
        fit(self, X, y)
        ypm = np.where(np.asarray(y) == self.classes_[1], 1.0, -1.0)
        self.coef_, self.params_ = objective_release(
            np.asarray(X, dtype=np.float64), ypm, epsilon=self.epsilon, alpha=float(self.alpha_), loss=self.loss,
            h=self.h, data_norm=float(self.data_norm), random_state=check_random_state(self.random_state))
        self.release_grid_ = None
        self.guarantee_ = dataclasses.replace(self.guarantee_, delta=0.0, fp_delta=0.0)
        return self

    return eeac753_fit
