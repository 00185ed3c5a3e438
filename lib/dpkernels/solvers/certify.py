"""Rigorous floating-point bounds on the gradient of a smooth ERM objective at a float64 point, and the certified solve.

For F_b(w) = (1/n) sum_i s_i l(a_i'w) + (lam/2) ||w||^2 + lin'w (signed rows a_i = y_i x_i with ||x_i|| <= R, integer
weights s_i summing to n, a smooth margin loss l with ``|l'|`` <= 1 and ``|l''|`` <= c, lin = b / n as a float64 vector),
:func:`certified_gradient` returns the float64 gradient G that :meth:`dpkernels.solvers.smooth.Design.loss_gradient`
computes and an upper bound of the exact real gradient's norm ||grad F_b(w)|| at the float point w.  With lam-strong
convexity, ||w - argmin F_b|| <= ||grad F_b(w)|| / lam: a certificate that holds in floating point, the premise of
:mod:`dpkernels.argmin_release`.  The bound costs nothing beyond the gradient itself (a handful of norms of d-vectors),
so the solver certifies every iterate it evaluates (:func:`certified_solve`) and stops at the first that meets the
public target.

The error bound (:func:`gradient_error_bound`; u = 2^-53, gamma_k = k u / (1 - k u); Higham, "Accuracy and Stability
of Numerical Algorithms", 2nd ed., Eq. (3.5) and Lemma 3.3): a dot product of k terms computed in ANY order of
float64 multiplications and additions (or fused multiply-adds), as BLAS computes it, errs by at most gamma_k ``|x|``'``|y|``.
The gradient is computed in blocks of at most m = ``BLOCK_ROWS`` rows, and the N = ceil(n_rows / m) block sums are
added by a balanced tree of height h = ceil(log2 N).  Then, for every iterate w (W >= ||w||):

1. margins z_i = y_i fl(x_i'w) (the sign is exact): ``|z_i - a_i'w|`` <= gamma_d ``|x_i|``'``|w|`` <= gamma_d R W;
2. the derivative v_i = fl(l'(z_i)) as :func:`dpkernels.solvers.smooth._loss_parts` (or, for the logistic loss, the
   signed derivative as :func:`dpkernels.solvers.smooth.logistic_signed_derivative`) evaluates it:
   ``|v_i - l'(a_i'w)|`` <= rho_l + c gamma_d R W =: dv, with rho_l = :func:`derivative_rounding` (the rounding of each
   loss's own formula, numpy's ``exp`` taken within ``EXP_REL``) and c the Lipschitz constant of l';
3. the signed, weighted derivatives q_i = fl(y_i v_i s_i) (the sign is exact; the logistic path computes y_i v_i
   directly, within step 2's bound): ``|q_i - y_i s_i l'(a_i'w)|`` <= s_i (dv + u ``|v_i|``), and ``|v_i|`` <= 1 + rho_l;
4. block products fl(X_b' q_b) (m terms) and their tree sum (height h): the componentwise error is at most
   gamma_{m + h} sum_i ``|x_i|`` ``|q_i|`` (gamma_a + gamma_b + gamma_a gamma_b <= gamma_{a + b}); by the triangle inequality
   the norm of sum_i ``|q_i|`` ``|x_i|`` is at most R sum_i ``|q_i|`` <= R n (1 + rho_l)(1 + u);
5. the division by n (an integer, exact in float64) adds u / (1 - u) ||G_data||, and
   G = fl(fl(G_data + fl(lam w)) + lin) adds u lam W (1 + u) + gamma_2 (||G_data|| + lam W (1 + u) + ||lin||).

So ||G - grad F_b(w)|| <= E = R (gamma_{m + h} (1 + rho_l)(1 + u) + dv + u (1 + rho_l)) + u / (1 - u) ||G_data||
+ u (1 + u) lam W + gamma_2 (||G_data|| + lam W (1 + u) + ||lin||), and ||grad F_b(w)|| <= ||G|| + E.  Norms of d-vectors
computed in float64 are within gamma_{d + 2} of the exact ones; every computed bound is enlarged by 2^-40 relative,
far above the rounding of its own few operations.  The row-norm bound R is the public one, with the slack
``NORM_RTOL`` of the input check (:func:`dpkernels._validation.check_row_norms`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray
from scipy.linalg import LinAlgError, cho_factor

from dpkernels._validation import NORM_RTOL, check_positive
from dpkernels.losses import Huber, Logistic, MarginLoss, SmoothedHinge
from dpkernels.solvers import smooth
from dpkernels.solvers.smooth import (
    LBFGS_MEMORY,
    Design,
    HessianFactor,
    _lbfgs_direction,
    blas_threads,
)

__all__ = ["U", "EXP_REL", "gamma", "derivative_rounding", "gradient_error_bound", "certified_gradient",
           "CertifiedSolution", "certified_solve", "newton_end_game", "MULTILEVEL_ROWS", "SUBSAMPLE_STEP",
           "HESSIAN_ROWS", "END_GAME_MAX_ITER"]

Array = NDArray[np.float64]
U = 2.0**-53
#: Relative accuracy assumed of numpy's float64 ``exp``: 4 x the 4 ulp it documents (4 x 2^-52 = 2^-50; measured: <= 1 ulp).
EXP_REL = 2.0**-48
#: Relative enlargement of every computed bound (covers the rounding of the bound's own arithmetic).
_MARGIN = 1.0 + 2.0**-40
#: A design with at least this many rows is first solved on a systematic subsample of every ``SUBSAMPLE_STEP``-th row
#: (recursively), whose minimiser starts the solve on every row.
MULTILEVEL_ROWS = 1 << 15
SUBSAMPLE_STEP = 16
#: Rows of the (systematically subsampled) Hessian that preconditions the limited-memory BFGS iterations on every row
#: (an eighth of that on a subsample, whose passes are cheap).
HESSIAN_ROWS = 1 << 16
#: Damped Newton iterations of :func:`newton_end_game` (a handful where a quasi-Newton solve of the Huber loss
#: stalled, tests/test_frontier.py's refused cells; the limit only bounds the time of a pathological case).
END_GAME_MAX_ITER = 500


def gamma(k: int) -> float:
    """gamma_k = k u / (1 - k u)."""
    return k * U / (1.0 - k * U)


def derivative_rounding(loss: MarginLoss) -> float:
    """An upper bound, over every float64 margin z, of ``|fl(l'(z)) - l'(z)|`` for l'(z) evaluated by
    :func:`dpkernels.solvers.smooth._loss_parts` (the margin taken as exact).

    * logistic: -(e or 1) / (1 + e) with e = exp(-``|z|``) within ``EXP_REL``, then three correctly rounded operations:
      (EXP_REL + 4u) ``|l'|`` (``|d l' / d e|`` <= ``|l'|`` / e), and ``|l'|`` <= 1; subnormal e adds 2^-1070 absolute.  The fused
      passes compute y l'(y z) = sigma(z) - (1 + y) / 2 instead
      (:func:`~dpkernels.solvers.smooth.logistic_signed_derivative`): (EXP_REL + 2u) sigma + u, with 2^-1020 absolute
      where e^{-z} overflows (then sigma < 2^-1020 is computed as 0); both within (EXP_REL + 4u) + 2^-1020;
    * Huber (width h): t = fl(fl(1 + h) - z) errs by e_t <= u (1 + h) + u ``|t|`` with ``|t|`` <= 2h + e_t where the clip is
      not constant, then the product by fl(-1 / (2h)): e_t / (2h) (1 + 4u) + 2u ``|l'|``;
    * smoothed hinge: each of the three terms u^3 / (4h^3), 3u / (4h), 1/2 within 2^-49 of its value where
      ``|u|`` <= h (+ 4u (1 + h)), plus the rounding of u = 1 - z and of the branch ends 1 +- h through the Lipschitz
      constant c: 2^-48 + c (u ``|u|`` + 2u (1 + h)).

    Parameters
    ----------
    loss : MarginLoss
        Logistic, Huber or smoothed hinge.

    Returns
    -------
    float
        rho_l.

    Examples
    --------
    >>> from dpkernels.losses import make_loss
    >>> from dpkernels.solvers.certify import EXP_REL, derivative_rounding
    >>> derivative_rounding(make_loss("logistic")) > EXP_REL
    True
    """
    if isinstance(loss, Logistic):
        return (EXP_REL + 4.0 * U) * _MARGIN + 2.0**-1020
    if isinstance(loss, Huber):
        h = loss.h
        e_t = U * (1.0 + h) + U * (2.0 * h + 2.0 * U * (1.0 + 3.0 * h))
        return (e_t / (2.0 * h) * (1.0 + 4.0 * U) + 2.0 * U * (1.0 + e_t / (2.0 * h))) * _MARGIN + 2.0**-1000
    if isinstance(loss, SmoothedHinge):
        h, c = loss.h, loss.curvature
        u_max = h + 4.0 * U * (1.0 + h)
        return (2.0**-48 + c * (U * u_max + 2.0 * U * (1.0 + h))) * _MARGIN + 2.0**-1000
    raise ValueError(f"no rounding bound for the loss {loss.name}")


def gradient_error_bound(n_rows: int, d: int, data_norm: float, loss: MarginLoss, lam: float, w_norm: Array | float,
                         data_gradient_norm: Array | float, lin_norm: Array | float) -> Array | float:
    """E >= ||G - grad F_b(w)||_2 for G computed by :meth:`~dpkernels.solvers.smooth.Design.loss_gradient` plus
    lam w + lin (the module docstring's steps 1-5).

    Parameters
    ----------
    n_rows : int
        Rows of the design (the blocks' sums have at most ``BLOCK_ROWS`` terms, and are summed by a tree of height
        ceil(log2(ceil(n_rows / BLOCK_ROWS)))).
    d : int
        Coordinates (the margins' dot products have d terms).
    data_norm : float
        R, the public bound on ||x_i|| (the input check's slack ``NORM_RTOL`` is added here).
    loss : MarginLoss
        The smooth loss.
    lam : float
        The regulariser of F_b.
    w_norm, data_gradient_norm, lin_norm : float or ndarray
        Upper bounds of ||w||, of the computed data gradient's norm and of ||lin|| (one per column).

    Returns
    -------
    float or ndarray
        E (one per column).

    Examples
    --------
    >>> from dpkernels.losses import make_loss
    >>> from dpkernels.solvers.certify import gradient_error_bound
    >>> e = gradient_error_bound(494_021, 100, 1.0, make_loss("logistic"), 1e-4, 30.0, 0.5, 1e-3)
    >>> 1e-13 < e < 1e-12
    True
    """
    R = data_norm * (1.0 + NORM_RTOL) * _MARGIN
    m = min(int(n_rows), smooth.BLOCK_ROWS)
    blocks = -(-int(n_rows) // smooth.BLOCK_ROWS)
    height = math.ceil(math.log2(blocks)) if blocks > 1 else 0
    rho = derivative_rounding(loss)
    dv = rho + loss.curvature * gamma(int(d)) * R * np.asarray(w_norm)
    e_data = R * (gamma(m + height) * (1.0 + rho) * (1.0 + U) + dv + U * (1.0 + rho)) + U / (1.0 - U) * np.asarray(data_gradient_norm)
    lw = lam * np.asarray(w_norm) * (1.0 + U)
    e = (e_data + U * lw + gamma(2) * (np.asarray(data_gradient_norm) + lw + np.asarray(lin_norm))) * _MARGIN
    return e if np.ndim(e) else float(e)


def _norm_upper(V: Array, axis: int = 0) -> Array:
    """Upper bounds of the exact 2-norms of the columns of V (float64 norms are within gamma_{d+2})."""
    return np.linalg.norm(V, axis=axis) * (1.0 + gamma(V.shape[axis] + 3)) * _MARGIN


def _certificate(design: Design, loss: MarginLoss, lam: float, data_norm: float, W: Array, G: Array, G_data: Array,
                 lin: Array) -> Array:
    """||G|| + E per column: an upper bound of the exact ||grad F_b(w)|| at the float points W."""
    E = gradient_error_bound(design.n_rows, design.d, data_norm, loss, lam, _norm_upper(W), _norm_upper(G_data),
                             _norm_upper(lin))
    return (_norm_upper(G) + E) * _MARGIN


def certified_gradient(design: Design, loss: MarginLoss, lam: float, lin: Array, W: Array, data_norm: float
                       ) -> tuple[Array, Array]:
    """The gradient G of F_b at the columns of ``W`` (shape (d, K)) with ``lin`` = b / n as the solver holds it
    (shape (d, K)), and per column an upper bound of the exact ||grad F_b(w)||.

    Parameters
    ----------
    design : Design
        The rows; every ||x_i|| must be at most ``data_norm`` (1 + ``NORM_RTOL``) (the input check's promise).
    loss : MarginLoss
        The smooth loss.
    lam : float
        The regulariser.
    lin : ndarray of shape (d, K)
        The linear term (the float64 quotients b / n).
    W : ndarray of shape (d, K)
        The points.
    data_norm : float
        R.

    Returns
    -------
    G : ndarray of shape (d, K)
        The computed gradients.
    bound : ndarray of shape (K,)
        Upper bounds of ||grad F_b(w_k)||_2 (exact real gradients at the float points).

    Examples
    --------
    >>> import numpy as np
    >>> from dpkernels.losses import make_loss
    >>> from dpkernels.solvers.smooth import Design
    >>> from dpkernels.solvers.certify import certified_gradient
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(50, 3)) / 2; X /= np.maximum(1, np.linalg.norm(X, axis=1))[:, None]
    >>> G, bound = certified_gradient(Design(X, np.sign(X[:, 0])), make_loss("logistic"), 0.1, np.zeros((3, 1)),
    ...                               np.zeros((3, 1)), 1.0)
    >>> bool(bound[0] >= np.linalg.norm(G))
    True
    """
    W = np.asarray(W, dtype=np.float64)
    lin = np.asarray(lin, dtype=np.float64).reshape(W.shape)
    _, G_data = design.loss_gradient(loss, W, value=False)
    G = G_data + lam * W + lin
    return G, _certificate(design, loss, lam, data_norm, W, G, G_data, lin)


@dataclass
class CertifiedSolution:
    """A float64 point w with an upper bound of the exact ||grad F_b(w)|| (:func:`certified_solve`)."""

    coef: Array
    certificate: float  #: upper bound of ||grad F_b(coef)||_2 (exact real gradient at the float point)
    certified: bool  #: certificate <= the target
    n_evaluations: int  #: passes over every row (loss and gradient), the certifying one included
    n_subsample_evaluations: int  #: passes over the subsamples of the multilevel start


def _preconditioner(design: Design, loss: MarginLoss, lam: float, w: Array, rows: int) -> HessianFactor:
    """The Hessian at w of about ``rows`` sampled rows (:meth:`~dpkernels.solvers.smooth.Design.sampled_hessian_factor`),
    or lam I where even that cannot be factored."""
    try:
        return design.sampled_hessian_factor(loss, w, lam, rows)
    except LinAlgError:
        return HessianFactor(cho_factor(np.eye(design.d) * lam), None, lam)


def _lbfgs(design: Design, loss: MarginLoss, lam: float, lin: Array, w: Array, done: object, max_evaluations: int,
           values: bool = True, hessian_rows: int | None = None) -> tuple[Array, Array, Array, int, bool]:
    """Limited-memory BFGS with the sampled Hessian as its initial matrix (refreshed when progress stalls), from w
    until ``done(w, G, G_data)``; returns (w, G, G_data, evaluations, done).

    Step acceptance: Armijo on F with ``values``; without (the passes then skip the loss's values), a step is taken
    when it lowers ||grad F||, which the unit quasi-Newton step does near the minimiser, and the search switches to
    Armijo for good after a step that needed more than two halvings."""
    d = design.d
    hessian_rows = HESSIAN_ROWS if hessian_rows is None else hessian_rows

    def evaluate(w: Array) -> tuple[float, Array, Array]:
        F, G_data = design.loss_gradient(loss, w, value=values)
        F = float(F) + 0.5 * lam * float(w @ w) + float(lin @ w) if values else math.nan
        return F, G_data, G_data + lam * w + lin

    F, G_data, G = evaluate(w)
    evals = 1
    if done(w, G, G_data):
        return w, G, G_data, evals, True
    factor = _preconditioner(design, loss, lam, w, hessian_rows)
    S, Y = np.zeros((LBFGS_MEMORY, d, 1)), np.zeros((LBFGS_MEMORY, d, 1))
    RHO, mem = np.zeros((LBFGS_MEMORY, 1)), np.zeros(1, dtype=np.int64)
    gn = float(np.linalg.norm(G))
    best, since = gn, 0
    while evals < max_evaluations:
        P = _lbfgs_direction(G[:, None], S, Y, RHO, mem, factor, {})[:, 0]
        slope = float(G @ P)
        if not slope < 0:  # not a descent direction: the preconditioned gradient, memory cleared
            mem[:] = 0
            P = -factor.solve(G)
            slope = float(G @ P)
        t, halvings = 1.0, 0
        while True:
            wn = w + t * P
            Fn, Gd_n, Gn = evaluate(wn)
            evals += 1
            gn_new = float(np.linalg.norm(Gn))
            if values:
                flat = abs(t * slope) <= 1e-13 * max(1.0, abs(F))  # the predicted decrease is below F's round-off
                ok = Fn <= F + 1e-4 * t * slope or (flat and gn_new < gn)
            else:
                ok = gn_new < gn
            if ok or evals >= max_evaluations:
                break
            t *= 0.5
            halvings += 1
        if not values and halvings > 2:  # the gradient norm is a poor guide here: Armijo from the next step on
            values = True
            Fn, Gd_n, Gn = evaluate(wn)  # the same point, with its value
            evals += 1
        s, yv = wn - w, Gn - G
        sy = float(s @ yv)
        if sy > 1e-12 * float(np.linalg.norm(s) * np.linalg.norm(yv)):
            if mem[0] == LBFGS_MEMORY:
                S[:-1], Y[:-1], RHO[:-1] = S[1:].copy(), Y[1:].copy(), RHO[1:].copy()
                mem[0] -= 1
            S[mem[0], :, 0], Y[mem[0], :, 0], RHO[mem[0], 0] = s, yv, 1.0 / sy
            mem[0] += 1
        w, F, G, G_data, gn = wn, Fn, Gn, Gd_n, gn_new
        if done(w, G, G_data):
            return w, G, G_data, evals, True
        since = 0 if gn < 0.1 * best else since + 1
        best = min(best, gn)
        if since >= 4:  # stalled: the sampled Hessian at this iterate, memory cleared
            factor = _preconditioner(design, loss, lam, w, hessian_rows)
            mem[:] = 0
            since = 0
    return w, G, G_data, evals, False


def certified_solve(design: Design, loss: MarginLoss, lam: float, lin: Array, target: float, data_norm: float, *,
                    w0: Array | None = None, max_evaluations: int = 200) -> CertifiedSolution:
    """Minimise F_b(w) = (1/n) sum_i s_i l(a_i'w) + (lam/2)||w||^2 + lin'w until the exact gradient's norm is certified
    below ``target`` (:func:`certified_gradient`, computed from every evaluation at no extra cost).

    Multilevel start: a design of at least ``MULTILEVEL_ROWS`` rows is first solved on every ``SUBSAMPLE_STEP``-th row
    (recursively, to a gradient norm of about a hundredth of the subsample's statistical error R / sqrt(rows)), whose
    minimiser is within that statistical error of the full one; then limited-memory BFGS preconditioned by the
    Hessian of ``HESSIAN_ROWS`` sampled rows (the curvature of the loss on every row is too costly to form: n d^2
    operations against n d per pass) on every row, one fused pass per evaluation
    (:meth:`~dpkernels.solvers.smooth.Design.loss_gradient`).  The starting point changes the speed only: the
    certificate alone decides.

    Parameters
    ----------
    design : Design
        The rows (||x_i|| <= ``data_norm`` (1 + ``NORM_RTOL``)).
    loss : MarginLoss
        The smooth loss.
    lam : float
        The regulariser (lam-strong convexity).
    lin : ndarray of shape (d,)
        The linear term b / n.
    target : float
        The certificate must show ||grad F_b(w)|| <= target.
    data_norm : float
        R.
    w0 : ndarray of shape (d,) or None, default=None
        A starting point (None: the multilevel start, or 0 on small designs).
    max_evaluations : int, default=200
        Passes over every row before giving up (``certified`` is then False).

    Returns
    -------
    CertifiedSolution

    Examples
    --------
    >>> import numpy as np
    >>> from dpkernels.losses import make_loss
    >>> from dpkernels.solvers.smooth import Design
    >>> from dpkernels.solvers.certify import certified_solve
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(500, 4)); X /= np.maximum(1, np.linalg.norm(X, axis=1))[:, None]
    >>> sol = certified_solve(Design(X, np.sign(X[:, 0] + 0.1)), make_loss("logistic"), 0.01, np.full(4, 1e-3), 1e-10, 1.0)
    >>> sol.certified, sol.certificate <= 1e-10
    (True, True)
    """
    lam = check_positive(lam, "lam")
    lin = np.asarray(lin, dtype=np.float64)
    sub_evals = 0
    with blas_threads(2.0 * design.n_rows * design.d * 8):
        if w0 is None:
            w0, sub_evals = _multilevel_start(design, loss, lam, lin, data_norm)
        w = np.array(w0, dtype=np.float64)
        state = {"cert": math.inf}

        def done(w: Array, G: Array, G_data: Array) -> bool:
            state["cert"] = float(_certificate(design, loss, lam, data_norm, w[:, None], G[:, None], G_data[:, None],
                                               lin[:, None])[0])
            return state["cert"] <= target

        w, _, _, evals, ok = _lbfgs(design, loss, lam, lin, w, done, max_evaluations, values=False)
    return CertifiedSolution(w, state["cert"], ok, evals, sub_evals)


def _multilevel_start(design: Design, loss: MarginLoss, lam: float, lin: Array, data_norm: float) -> tuple[Array, int]:
    """The minimiser of F_b on every ``SUBSAMPLE_STEP``-th row (itself started the same way), solved to a gradient norm
    of 1e-2 R / sqrt(rows of the subsample) (a hundredth of its statistical distance from the full problem's, about
    R / sqrt(rows)), with an eighth of ``HESSIAN_ROWS`` in its preconditioner; 0 for designs below ``MULTILEVEL_ROWS``
    rows.  Returns it and the
    subsample passes it took (in units of a pass over the subsample's rows)."""
    if design.n_rows < MULTILEVEL_ROWS:
        return np.zeros(design.d), 0
    sub = design.subsample(SUBSAMPLE_STEP)
    w0, inner = _multilevel_start(sub, loss, lam, lin, data_norm)
    tol = 1e-2 * data_norm / math.sqrt(sub.n_rows)
    w, _, _, evals, _ = _lbfgs(sub, loss, lam, lin, w0, lambda w, G, Gd: float(np.linalg.norm(G)) <= tol, 100,
                               values=False, hessian_rows=HESSIAN_ROWS // 8)
    return w, evals + inner


def newton_end_game(design: Design, loss: MarginLoss, lam: float, b: Array, w: Array, target: float, data_norm: float
                    ) -> tuple[Array, float]:
    """Damped Newton with Armijo backtracking (:func:`~dpkernels.solvers.smooth.solve_smooth_erm`: the Hessian only
    steers, in float32 on large dense designs, and the float64 gradient decides) from ``w`` on F_b (linear term ``b``
    / n), to a computed gradient norm of ``target`` / 4, then certified (:func:`certified_gradient`).  Returns (w,
    certificate).

    The end game of a release whose first solve stopped above its public target.  Whether a solve certifies depends on
    the data, so a mechanism that refused there would publish a fact about the data that its guarantee does not cover;
    instead it keeps solving.  Damped Newton converges globally on the strongly convex F_b, also where the loss's second
    derivative jumps (Huber), on which limited-memory BFGS and undamped Newton steps can stall or cycle.  The caller
    still refuses if even this cannot certify (``END_GAME_MAX_ITER`` iterations, or a target below the rounding
    error)."""
    b = np.asarray(b, dtype=np.float64)
    sol = smooth.solve_smooth_erm(design, None, loss, lam, b=b, gtol=target / 4.0, max_iter=END_GAME_MAX_ITER, w0=w)
    W = sol.coef[:, None]
    _, cert = certified_gradient(design, loss, lam, (b / design.n_examples)[:, None], W, data_norm)
    return sol.coef, float(cert[0])

