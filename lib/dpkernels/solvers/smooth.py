"""Smooth regularised ERM (logistic, Huber, smoothed hinge) with a certificate, one problem or many noise draws.

J_b(w) = (1/n) sum_i l(y_i <w, x_i>) + (lam/2) ||w||^2 + (1/n) <b, w> is lam-strongly convex, so
||w - w_b*|| <= ||grad J_b(w)|| / lam certifies the distance to the exact minimiser (Chaudhuri et al.'s Lemma 7
with g = J_b - J_b(w) linearised; the bound every mechanism checks before it releases).

* :func:`solve_smooth_erm`: one problem, damped Newton with Armijo backtracking (exact Hessian for d <= 512,
  conjugate gradients beyond).
* :func:`solve_smooth_erm_batch`: K problems that differ only in b (objective perturbation's noise draws), solved
  together: one pass over the data serves every draw (``X @ W`` and ``X' R`` with W of shape (d, K)), every draw
  starts from the first-order prediction w* - H*^{-1} b / n at the non-private minimiser w* and is preconditioned
  by the exact Hessian H* there (limited-memory BFGS with initial matrix H*^{-1}); a draw whose convergence stalls
  gets a Hessian of its own; a draw that still fails goes to Newton.  Each draw is certified separately.

Work is sized to the data: a design with few non-zeros (one-hot columns) is held as a CSR matrix (products cost
the non-zeros), rows with identical (x, y) can be merged into one weighted row (:class:`Design`, ``compress``:
KDDCup99's 70,000 rows have 26,050 distinct ones), Hessians are accumulated over the rows with non-zero
curvature only, and BLAS runs on one thread (:func:`blas_threads`): these problems are too small for a second
thread to pay, and an oversubscribed thread pool is what makes a solve collapse when another process loads a core.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray
from scipy import sparse
from scipy.linalg import LinAlgError, cho_factor, cho_solve
from scipy.sparse.linalg import LinearOperator, cg
from threadpoolctl import ThreadpoolController

from dpkernels._validation import check_positive
from dpkernels.losses import Huber, Logistic, MarginLoss
from dpkernels.solvers.common import Array, ERMSolution

__all__ = ["solve_smooth_erm", "solve_smooth_erm_batch", "BatchSolution", "Design", "SMOOTH_GTOL", "BLOCK_ROWS",
           "blas_threads", "tree_sum", "logistic_signed_derivative"]

#: Default gradient-norm tolerance of the smooth solver (absolute, on J).
SMOOTH_GTOL = 1e-10
#: Once ||grad|| < 1e-6, Newton stops when the gradient norm has not fallen by 10% for this many iterations
#: (cycling between the pieces of a piecewise-quadratic loss; the certificate ||grad|| / lambda is reported).
STALL_ITERATIONS = 15
#: Dense Newton up to this many features, Newton-CG beyond.
DENSE_NEWTON_MAX_DIM = 512
#: A design with at most this share of non-zeros (and enough entries to matter) is held as CSR.
SPARSE_DENSITY = 0.3
#: Floating-point operations below which BLAS gets one thread (a d x d Hessian of 40,000 rows is ~4e8).
BLAS_SERIAL_FLOPS = 2e9
#: Rows with curvature l'' below this share of the loss's bound c leave the Hessian (it only steers the step).
CURVATURE_FLOOR = 1e-12
#: L-BFGS memory of the batched solver.
LBFGS_MEMORY = 12
#: A draw whose gradient has not fallen below this share of its value at the last refresh gets its own Hessian.
REFRESH_PROGRESS = 1e-2
#: Problems with rows x d^2 at most this are solved by the vectorised small-problem Newton (audits).
SMALL_PROBLEM = 4096
#: Rows of a subsampled (preconditioning) Hessian.
HESSIAN_SAMPLE = 4096

#: Rows per block of :meth:`Design.loss_gradient` (its certificate's float sums have at most this many terms).
BLOCK_ROWS = 2048

_CONTROLLER: ThreadpoolController | None = None
#: Rows per block of the fused loss evaluation.
_BLOCK = 2048


@contextmanager
def blas_threads(flops: float) -> Iterator[None]:
    """Limit BLAS to one thread for work below ``BLAS_SERIAL_FLOPS`` (the thread pool's start-up and an
    oversubscribed core cost more than a second thread gains there); larger work keeps the default."""
    global _CONTROLLER
    if flops >= BLAS_SERIAL_FLOPS:
        yield
        return
    if _CONTROLLER is None:
        _CONTROLLER = ThreadpoolController()
    with _CONTROLLER.limit(limits=1, user_api="blas"):
        yield


# ----------------------------------------------------------------------------------------------
# the design matrix
# ----------------------------------------------------------------------------------------------
class Design:
    """The rows (x_i, y_i) of an ERM problem with labels y_i in {-1, +1} and optional integer weights (merged
    duplicates); the problem is stated on the signed rows a_i = y_i x_i (margins A w, data gradient A' l'(A w)).

    ``n`` is the number of examples (the sum of the weights): J averages over it.  ``sparse``: ``"auto"`` holds X
    as CSR when at most ``SPARSE_DENSITY`` of it is non-zero.  ``compress=True`` merges rows with identical
    (x, y) into one row of weight = their count (exactly the same J; the sum runs in another order, so results
    agree to round-off).  A dense float64 X is held as given, without a copy (the labels' signs are applied to the
    margins and to the weights of the gradient's sum, which is exact): callers must not write into it.
    """

    def __init__(self, X: Array | sparse.spmatrix, y: Array, sample_weight: Array | None = None, *,
                 sparse_mode: str | bool = "auto", compress: bool = False) -> None:
        y = np.asarray(y, dtype=np.float64)
        if sparse.issparse(X):
            X = X.toarray()
        X = np.asarray(X, dtype=np.float64)
        w = None if sample_weight is None else np.asarray(sample_weight, dtype=np.float64)
        self.n_examples = float(len(y) if w is None else w.sum())
        if compress:
            M = np.empty((X.shape[0], X.shape[1] + 1), order="F")  # columns contiguous: hashed without a copy
            M[:, :-1], M[:, -1] = X, y
            first, inverse = _distinct_rows(M)
            del M
            counts = np.bincount(inverse, weights=w, minlength=len(first))
            X, y, w = X[first], y[first], counts
        self.y = y
        self.weight = w  # None: every row counts once
        self.shape = X.shape
        use_sparse = (X.size >= 20_000 and _density(X) <= SPARSE_DENSITY) if sparse_mode == "auto" else bool(sparse_mode)
        if use_sparse:
            self.X = sparse.csr_matrix(X)
        else:
            self.X = np.ascontiguousarray(X)
        self.is_sparse = use_sparse
        self._set_signed()
        self._X32: NDArray[np.float32] | None = None
        self._blocks: list[tuple[int, int, Any]] | None = None

    @property
    def n_rows(self) -> int:
        return self.shape[0]

    @property
    def d(self) -> int:
        return self.shape[1]

    def _set_signed(self) -> None:
        """A sparse design's signed rows A = diag(y) X as CSR (``A``), its transpose as CSR (``AT``, for vectors)
        and as a CSC view (``_A_T``, for matrices; made once, not at every product), for the products of
        :meth:`matvec` and :meth:`rmatvec`; a dense design's signed weights y_i w_i (``_signed_weight``).  Signs are
        exact in floating point (rounding to nearest is symmetric), so a product with A is bit for bit the product
        with X with the signs applied after (or before) it, without a pass over the n_rows x K result."""
        self.A = self.AT = self._A_T = None
        self._signed_weight = self.y if self.weight is None else self.y * self.weight
        if self.is_sparse:
            self.A = self.X.copy()
            self.A.data *= np.repeat(self.y, np.diff(self.A.indptr))
            self.AT = self.A.T.tocsr()
            self._A_T = self.A.T

    def matvec(self, W: Array) -> Array:
        """The margins A @ W (a_i = y_i x_i) for W of shape (d,) or (d, K)."""
        if self.is_sparse:
            return self.A @ W
        Z = self.X @ W
        Z *= self.y if Z.ndim == 1 else self.y[:, None]
        return Z

    def rmatvec(self, R: Array) -> Array:
        """A' R for R of shape (n_rows,) or (n_rows, K) (the weights are applied by the caller)."""
        if self.is_sparse:
            return self.AT @ R if R.ndim == 1 else self._A_T @ R  # (R' A)' as scipy computes it
        return self.X.T @ (R * (self.y if R.ndim == 1 else self.y[:, None]))

    def weighted_rmatvec(self, R: Array, overwrite: bool = False) -> Array:
        """A' diag(w) R, as ``rmatvec(weighted(R))`` bit for bit (a dense design applies y_i w_i in one pass);
        ``overwrite``: R may be overwritten (no new n_rows x K array)."""
        if self.is_sparse:
            return self.rmatvec(self.weighted(R, overwrite))
        sw = self._signed_weight if R.ndim == 1 else self._signed_weight[:, None]
        return self.X.T @ (np.multiply(R, sw, out=R) if overwrite else R * sw)

    def signed_rows(self, rows: NDArray[np.intp] | slice | None = None) -> Array:
        """The signed rows a_i = y_i x_i (dense; a copy), all of them or ``rows``."""
        sel = slice(None) if rows is None else rows
        Xr = self.X[sel]
        Xr = Xr.toarray() if self.is_sparse else np.array(Xr)
        return Xr * self.y[sel][:, None]

    def subsample(self, step: int) -> "Design":
        """Every ``step``-th row (with its label and weight) as a Design of its own (its n is the sum of its weights),
        without re-validation: a systematic sample, unbiased for data in any order.  The rows are copied (1/step of
        the design): passes over a contiguous copy take a third of the time of passes over a strided view."""
        sub = object.__new__(Design)
        sub.X = self.X[::step] if self.is_sparse else np.ascontiguousarray(self.X[::step])
        sub.y = self.y[::step]
        sub.weight = None if self.weight is None else self.weight[::step]
        sub.n_examples = float(len(sub.y) if sub.weight is None else sub.weight.sum())
        sub.shape = sub.X.shape
        sub.is_sparse = self.is_sparse
        sub._set_signed()
        sub._X32 = None
        sub._blocks = None
        return sub

    def blocks(self) -> list[tuple[int, int, Any]]:
        """The rows in consecutive blocks of at most ``BLOCK_ROWS``: (start, stop, rows) with the rows a dense view or
        a CSR slice (computed once).  The fused evaluations sum each block by BLAS and the blocks' sums in order, so
        that every float sum has at most ``BLOCK_ROWS`` or ``ceil(n_rows / BLOCK_ROWS)`` terms."""
        if self._blocks is None:
            self._blocks = [(a, min(self.n_rows, a + BLOCK_ROWS), self.X[a:a + BLOCK_ROWS])
                            for a in range(0, self.n_rows, BLOCK_ROWS)]
        return self._blocks

    def loss_gradient(self, loss: MarginLoss, W: Array, *, value: bool = True) -> tuple[Array | None, Array]:
        """The data term of J and its gradient at the columns of W (shape (d,) or (d, K)), in one pass over the rows:
        ((1/n) sum_i s_i l(a_i'w) or None, (1/n) sum_i s_i l'(a_i'w) a_i).

        Block by block (:meth:`blocks`): margins X_b W by BLAS, the signed and weighted derivatives q_b (the logistic
        loss without its value: :func:`logistic_signed_derivative`, from the unsigned margins; otherwise the loss's
        value and derivative at the signed margins y_i x_i'w, times y_i), and X_b' q_b by BLAS, read while the block
        is in cache (about half the time of the two whole-matrix products); the blocks' sums are added pairwise
        (:func:`tree_sum`).  :mod:`dpkernels.solvers.certify` bounds the rounding error of exactly this computation.
        """
        one = W.ndim == 1
        blocks = self.blocks()
        P = np.empty((len(blocks),) + W.shape)
        F = np.zeros(() if one else W.shape[1]) if value else None
        signed = isinstance(loss, Logistic) and not value
        positive = (self.y > 0).astype(np.float64) if signed else None
        buffer = None if self.is_sparse else np.empty((min(self.n_rows, BLOCK_ROWS),) + W.shape[1:])
        with np.errstate(over="ignore"):  # e^{-z} overflows where sigma(z) < 2^-1020 (logistic_signed_derivative)
            for k, (a, b, Xb) in enumerate(blocks):
                Z = Xb @ W if buffer is None else np.matmul(Xb, W, out=buffer[: b - a])
                yb = self.y[a:b] if one else self.y[a:b, None]
                if signed:
                    der = logistic_signed_derivative(Z, positive[a:b] if one else positive[a:b, None])
                else:
                    Z *= yb
                    val, der = _loss_parts(loss, Z, value)
                    der *= yb
                if self.weight is not None:
                    sb = self.weight[a:b] if one else self.weight[a:b, None]
                    der *= sb
                    if value:
                        val *= sb
                if buffer is None:
                    P[k] = Xb.T @ der
                else:
                    np.matmul(Xb.T, der, out=P[k])
                if value:
                    F += val.sum(axis=0)
        G = tree_sum(P) / self.n_examples
        if value:
            F /= self.n_examples
        return F, G

    def weighted(self, R: Array, overwrite: bool = False) -> Array:
        """diag(w) R (R itself when every row counts once; ``overwrite``: computed in R)."""
        if self.weight is None:
            return R
        w = self.weight if R.ndim == 1 else self.weight[:, None]
        return np.multiply(R, w, out=R) if overwrite else R * w

    def mean(self, V: Array, overwrite: bool = False) -> Array:
        """(1/n) sum_i w_i V_i along the rows (``overwrite``: V may be overwritten)."""
        return self.weighted(V, overwrite).sum(axis=0) / self.n_examples

    def sample(self) -> NDArray[np.intp]:
        """Every k-th row, at least ``HESSIAN_SAMPLE`` rows: the rows of a preconditioner's Hessian."""
        step = max(1, self.n_rows // HESSIAN_SAMPLE)
        return np.arange(0, self.n_rows, step)

    def hessian(self, curv: Array, lam: float, single: bool = False, rows: NDArray[np.intp] | None = None) -> Array:
        """X' diag(w c) X / n + lam I over the rows with c > 0 (``single``: accumulate in float32).

        ``rows``: only these rows, reweighted to the total (a subsampled Hessian: an unbiased estimate, for
        preconditioning only); ``curv`` is then given for those rows.
        """
        act, scale = self._curvature_rows(curv, rows)
        d = self.d
        if act.size == 0:
            H = np.zeros((d, d))
        elif self.is_sparse:
            Xa = self.X[act]
            H = (Xa.T @ Xa.multiply(scale[:, None]).tocsr()).toarray()
        elif single:
            if self._X32 is None:
                self._X32 = self.X.astype(np.float32)
            Xa = self._X32[act]
            H = ((Xa * scale[:, None].astype(np.float32)).T @ Xa).astype(np.float64)
        else:
            Xa = self.X[act]
            H = (Xa * scale[:, None]).T @ Xa
        H[np.diag_indices(d)] += lam
        return H

    def _curvature_rows(self, curv: Array, rows: NDArray[np.intp] | None) -> tuple[NDArray[np.intp], Array]:
        """(rows with c > 0, their weights w c / n) of the Hessian X' diag(w c) X / n (see :meth:`hessian`)."""
        wc = self.weighted(curv) if rows is None else curv * (1.0 if self.weight is None else self.weight[rows])
        if rows is not None:
            wc = wc * (self.n_examples / (len(rows) if self.weight is None else float(self.weight[rows].sum())))
        act = np.flatnonzero(curv > 0)
        scale = wc[act] / self.n_examples
        if rows is not None:
            act = rows[act]
        return act, scale

    def sampled_hessian_factor(self, loss: MarginLoss, w: Array, lam: float, rows: int) -> "HessianFactor":
        """The factored Hessian at w of a systematic sample of about ``rows`` rows (every k-th row), reweighted to the
        total (an unbiased estimate: a preconditioner).  Dense rows are scaled and accumulated in float32 (half the
        time; the preconditioner tolerates its 1e-7 relative error), falling back to float64 where that factor fails;
        sparse rows and samples with fewer curved rows than coordinates go through :meth:`hessian_factor`."""
        step = max(1, self.n_rows // max(1, int(rows)))
        Xs = self.X[::step]
        z = Xs @ w
        z *= self.y[::step]
        curv = _curvature(loss, z)
        sw = None if self.weight is None else self.weight[::step]
        scale = (curv if sw is None else curv * sw) / (len(z) if sw is None else float(sw.sum()))
        sample = np.arange(0, self.n_rows, step)
        if self.is_sparse or np.count_nonzero(scale) < self.d:
            return self.hessian_factor(curv, lam, rows=sample)
        A = np.empty(Xs.shape, dtype=np.float32)
        np.multiply(Xs, np.sqrt(scale)[:, None], out=A, casting="same_kind")  # scaled and rounded in one pass
        H = (A.T @ A).astype(np.float64)
        H[np.diag_indices(self.d)] += lam
        try:
            return HessianFactor(cho_factor(H), None, lam)
        except LinAlgError:
            return self.hessian_factor(curv, lam, rows=sample)

    def hessian_factor(self, curv: Array, lam: float, rows: NDArray[np.intp] | None = None) -> "HessianFactor":
        """A factorisation of :meth:`hessian` (same arguments) for preconditioning: the d x d Cholesky factor when
        the active rows are at least d, else the Woodbury form, which never forms the d x d matrix."""
        act, scale = self._curvature_rows(curv, rows)
        if act.size >= self.d:
            return HessianFactor(cho_factor(self.hessian(curv, lam, rows=rows)), None, lam)
        Xa = self.X[act]
        Bm = Xa.multiply(np.sqrt(scale)[:, None]).tocsr() if self.is_sparse else Xa * np.sqrt(scale)[:, None]
        M = Bm @ Bm.T
        M = M.toarray() if self.is_sparse else M
        M[np.diag_indices(act.size)] += lam
        return HessianFactor(cho_factor(M), Bm, lam)


@dataclass
class HessianFactor:
    """H = B'B + lam I, B = diag(sqrt(w c / n)) X_active: ``chol`` is the Cholesky factor of H itself (``B`` None)
    or, when B has fewer rows k than columns d, of lam I_k + B B', and H^{-1} V = (V - B' (lam I + B B')^{-1} B V) / lam
    (Woodbury): k x k work instead of d x d (d = 100,000 features would need a 75 GB Hessian)."""

    chol: tuple[Array, bool]
    B: Array | None
    lam: float

    def solve(self, V: Array) -> Array:
        """H^{-1} V."""
        if self.B is None:
            return cho_solve(self.chol, V)
        return (V - self.B.T @ cho_solve(self.chol, self.B @ V)) / self.lam


def _distinct_rows(M: Array) -> tuple[NDArray[np.intp], NDArray[np.intp]]:
    """(index of the first occurrence of each distinct row, the distinct row of every row): rows are grouped by a
    64-bit hash of their bytes (pandas), and the grouping is verified exactly (a collision falls back to a sort)."""
    import pandas as pd

    h = pd.util.hash_pandas_object(pd.DataFrame(M, copy=False), index=False).to_numpy()
    _, first, inverse = np.unique(h, return_index=True, return_inverse=True)
    rep = first[inverse]
    if not all(np.array_equal(M[a:a + _BLOCK], M[rep[a:a + _BLOCK]]) for a in range(0, len(M), _BLOCK)):
        # a hash collision: exact (slower) grouping
        row = np.ascontiguousarray(M).view(np.dtype((np.void, M.dtype.itemsize * M.shape[1]))).ravel()
        _, first, inverse = np.unique(row, return_index=True, return_inverse=True)
    return first, inverse.ravel()


def tree_sum(P: Array) -> Array:
    """The sum of ``P`` along its first axis by a balanced binary tree of float additions, in place (``P`` is
    overwritten): level by level, entry i is added to entry i + half; an odd last entry moves down.  A tree over N
    terms has height ceil(log2 N): each sum errs by at most gamma_height times the sum of the terms' magnitudes."""
    m = P.shape[0]
    while m > 1:
        half = m // 2
        P[:half] += P[half:2 * half]
        if m % 2:
            P[half] = P[2 * half]
        m = half + (m % 2)
    return P[0].copy()


def _density(X: Array) -> float:
    """The share of non-zero entries; a large matrix whose systematic sample of 4,096 rows is clearly dense (twice
    ``SPARSE_DENSITY``) is not counted in full."""
    if X.shape[0] > 2 * HESSIAN_SAMPLE:
        probe = X[:: X.shape[0] // HESSIAN_SAMPLE]
        share = np.count_nonzero(probe) / max(1, probe.size)
        if share > 2.0 * SPARSE_DENSITY:
            return share
    return np.count_nonzero(X) / max(1, X.size)


def _as_design(X: Array | Design, y: Array | None) -> Design:
    if isinstance(X, Design):
        return X
    if y is None:
        raise ValueError("y is required unless X is a Design")
    return Design(X, y)


# ----------------------------------------------------------------------------------------------
# losses: value, derivative and curvature from one pass
# ----------------------------------------------------------------------------------------------
def _loss_parts(loss: MarginLoss, z: Array, value: bool = True, *, der: Array | None = None,
                val: Array | None = None) -> tuple[Array | None, Array]:
    """(l(z) or None, l'(z)); the logistic loss shares one exponential between them and runs in row blocks that
    stay in cache (four times faster than whole-array temporaries on 40,000 x 50 margins).  ``der`` and ``val``:
    arrays of z's shape to write into (``der`` may be ``z`` itself: the derivative then overwrites the margins),
    instead of new ones (a new array of this size costs its page faults on every evaluation)."""
    if isinstance(loss, Logistic):
        return _logistic_parts(z, value, der, val)
    if isinstance(loss, Huber):
        return _huber_parts(z, loss.h, value, der, val)
    v = loss.value(z) if value else None
    g = loss.derivative(z)
    if val is not None and v is not None:
        val[...] = v
        v = val
    if der is not None:
        der[...] = g
        g = der
    return v, g


def logistic_signed_derivative(Z: Array, positive: Array) -> Array:
    """y l'(y z) for the logistic loss from the unsigned margins Z = x'w and ``positive`` = (1 + y) / 2, in place:
    y l'(y z) = -y / (1 + e^{y z}) = sigma(z) - (1 + y) / 2 with sigma(z) = 1 / (1 + e^{-z}) (four ufuncs on the block,
    no sign products).  Its rounding (:func:`dpkernels.solvers.certify.derivative_rounding`): e^{-z} within
    ``EXP_REL`` (or infinite when sigma(z) < 2^-1020, then sigma = 0), 1 + e and 1 / (1 + e) each within u relative,
    and the subtraction of 0 or 1 within u of its result (exact by Sterbenz's lemma where sigma >= 1/2)."""
    np.negative(Z, out=Z)
    np.exp(Z, out=Z)  # inf where sigma(z) < 2^-1020 (the caller silences the overflow warning)
    Z += 1.0
    np.reciprocal(Z, out=Z)
    Z -= positive
    return Z


def _huber_parts(z: Array, h: float, value: bool, der: Array | None = None, val: Array | None = None
                 ) -> tuple[Array | None, Array]:
    """With u = 1 + h - z and v = clip(u, 0, 2h): l = v^2 / (4h) + max(u - 2h, 0), l' = -v / (2h) (Eq. 7).
    ``der``, ``val``: as :func:`_loss_parts`."""
    der = np.empty_like(z) if der is None else der
    val = (np.empty_like(z) if val is None else val) if value else None
    tmp = np.empty_like(z[:_BLOCK])
    for a in range(0, z.shape[0], _BLOCK):
        zb, g = z[a:a + _BLOCK], der[a:a + _BLOCK]
        t = tmp[: zb.shape[0]]
        np.subtract(1.0 + h, zb, out=t)  # u (the last read of the block's margins: g may be zb)
        np.clip(t, 0.0, 2.0 * h, out=g)  # v
        if val is not None:
            v = val[a:a + _BLOCK]
            t -= 2.0 * h
            np.maximum(t, 0.0, out=t)
            np.multiply(g, g, out=v)
            v *= 1.0 / (4.0 * h)
            v += t
        g *= -1.0 / (2.0 * h)
    return val, der


def _logistic_parts(z: Array, value: bool, der: Array | None = None, val: Array | None = None
                    ) -> tuple[Array | None, Array]:
    """log(1 + e^{-z}) = log1p(e) - min(z, 0) and -1/(1 + e^z) = (e or 1) x (-1/(1 + e)) with e = exp(-``|z|``):
    "e or 1" is max(e, [z < 0]) (e <= 1), and every float operation is the one of log1p(e) + (max(z, 0) - z) and
    -((e or 1) / (1 + e)) (a sign is exact), so the results are those bit for bit.  ``der``, ``val``: as
    :func:`_loss_parts`."""
    der = np.empty_like(z) if der is None else der
    val = (np.empty_like(z) if val is None else val) if value else None
    tmp = np.empty_like(z[:_BLOCK])
    negative = np.empty(tmp.shape, dtype=bool)
    for a in range(0, z.shape[0], _BLOCK):
        zb, g = z[a:a + _BLOCK], der[a:a + _BLOCK]
        t, neg = tmp[: zb.shape[0]], negative[: zb.shape[0]]
        np.less(zb, 0.0, out=neg)
        if val is not None:
            np.minimum(zb, 0.0, out=t)
        np.abs(zb, out=g)  # the last read of the block's margins: g may be zb
        np.negative(g, out=g)
        np.exp(g, out=g)  # e
        if val is not None:
            v = val[a:a + _BLOCK]
            np.log1p(g, out=v)
            v -= t  # + max(-z, 0)
        np.add(g, 1.0, out=t)
        np.divide(-1.0, t, out=t)  # -1 / (1 + e)
        np.maximum(g, neg, out=g)  # e, or 1 where z < 0
        np.multiply(g, t, out=g)
    return val, der


def _curvature(loss: MarginLoss, z: Array) -> Array:
    """l''(z) with rows below ``CURVATURE_FLOOR`` x c set to 0 (they leave the Hessian)."""
    if isinstance(loss, Logistic):
        e = np.exp(-np.abs(z))
        c = e / (1.0 + e) ** 2
    elif isinstance(loss, Huber):
        c = np.where(np.abs(1.0 - z) <= loss.h, loss.curvature, 0.0)
    else:
        c = loss.second_derivative(z)
    return np.where(c > CURVATURE_FLOOR * loss.curvature, c, 0.0)


# ----------------------------------------------------------------------------------------------
# one problem: damped Newton
# ----------------------------------------------------------------------------------------------
def solve_smooth_erm(
    X: Array | Design,
    y: Array | None,
    loss: MarginLoss,
    lam: float,
    *,
    b: Array | None = None,
    fit_intercept: bool = False,
    gtol: float = SMOOTH_GTOL,
    max_iter: int = 500,
    w0: Array | None = None,
) -> ERMSolution:
    """Minimise J for a differentiable loss by damped Newton with Armijo backtracking.

    ``X`` may be a :class:`Design` (then ``y`` is ignored).  ``b`` is Chaudhuri et al.'s objective-perturbation
    vector (term (1/n)<b, w>).  With ``fit_intercept`` an unpenalised intercept is appended; the certificate
    ||w - w*|| <= ||grad|| / lam then covers the weights only approximately (the intercept direction is not
    strongly convex), which is recorded by ``distance_bound = nan`` unless the gradient is zero.
    """
    lam = check_positive(lam, "lam (regularisation)")
    if not loss.smooth:
        raise ValueError(f"solve_smooth_erm needs a differentiable loss, got {loss.name}")
    if fit_intercept:
        if isinstance(X, Design):
            raise ValueError("fit_intercept needs a dense X, not a Design")
        X = np.hstack([np.asarray(X, dtype=np.float64), np.ones((len(y), 1))])
    D = _as_design(X, y)
    p = D.d
    d = p - int(fit_intercept)
    with blas_threads(2.0 * D.n_rows * p * p):
        return _newton(D, loss, lam, b, fit_intercept, d, gtol, max_iter, w0)


def _newton(D: Design, loss: MarginLoss, lam: float, b: Array | None, fit_intercept: bool, d: int, gtol: float,
            max_iter: int, w0: Array | None) -> ERMSolution:
    p, n = D.d, D.n_examples
    reg = np.full(p, lam)
    if fit_intercept:
        reg[-1] = 0.0
    lin = np.zeros(p)
    if b is not None:
        lin[:d] = np.asarray(b, dtype=np.float64) / n
    theta = np.zeros(p) if w0 is None else np.array(w0, dtype=np.float64)
    if fit_intercept and theta.shape[0] == d:
        theta = np.append(theta, 0.0)

    def fun(t: Array) -> tuple[float, Array, Array]:
        z = D.matvec(t)
        val, der = _loss_parts(loss, z)
        f = float(D.mean(val)) + 0.5 * float(reg @ (t * t)) + float(lin @ t)
        g = D.weighted_rmatvec(der) / n + reg * t + lin
        return f, g, z

    f, g, z = fun(theta)
    gnorm = float(np.linalg.norm(g))
    it = 0
    # float32 Hessians pay off on large dense problems; with a tiny regulariser the Hessian's condition number
    # (up to ~ curvature / lam) would swamp float32's 1e-7 relative precision
    single = not D.is_sparse and D.n_rows * p >= 1_000_000 and lam >= 1e-5
    best_gnorm, best_it, best_theta = gnorm, 0, theta
    factor: tuple[Array, bool] | None = None
    factor64 = False
    last_step = math.inf
    while gnorm > gtol and it < max_iter:
        it += 1
        curv = _curvature(loss, z)
        if (p <= DENSE_NEWTON_MAX_DIM and factor is not None and factor64 and gnorm <= 1e-6
                and last_step <= 1e-6 * (1.0 + float(np.linalg.norm(theta)))):
            # near the solution the last (float64) factorisation still contracts the gradient by orders of magnitude
            step = -cho_solve(factor, g)
        elif p <= DENSE_NEWTON_MAX_DIM:
            # The Hessian only steers the step (the stopping rule uses the float64 gradient), so on large dense
            # problems it is accumulated in float32; an ill-conditioned Hessian (Cholesky failure or a poor step)
            # switches this solve back to float64.
            step = None
            for use32 in ((True, False) if single and gnorm > 1e-6 else (False,)):
                H = D.hessian(curv, 0.0, single=use32)
                H[np.diag_indices(p)] += reg + 1e-15 * (reg == 0)
                try:
                    factor, factor64 = cho_factor(H), not use32
                    step = -cho_solve(factor, g)
                    if not use32 and gnorm <= 1e-6:  # ill-conditioned end game: one step of iterative refinement
                        step -= cho_solve(factor, H @ step + g)
                    break
                except LinAlgError:
                    factor = None
                    single = False
            if step is None:
                step = -np.linalg.lstsq(H, g, rcond=None)[0]
        else:
            wc = D.weighted(curv)
            op = LinearOperator((p, p), matvec=lambda v, c=wc: D.rmatvec(c * D.matvec(v)) / n + reg * v, dtype=np.float64)
            step, _ = cg(op, -g, rtol=min(0.5, math.sqrt(gnorm)), maxiter=200)
        accepted = False
        flat = False
        for direction in (step, -g):  # the Newton step, else steepest descent (e.g. a singular Hessian)
            slope = float(g @ direction)
            if slope >= 0:  # not a descent direction (numerical trouble)
                continue
            flat = abs(slope) <= 1e-12 * max(1.0, abs(f))  # predicted decrease below the round-off of f
            t = 1.0
            while t >= 1e-10:
                f_new, g_new, z_new = fun(theta + t * direction)
                if f_new <= f + 1e-4 * t * slope or (flat and np.linalg.norm(g_new) < gnorm):
                    accepted = True
                    break
                t *= 0.5
            if accepted:
                step = direction
                break
        if not accepted:  # no decrease along any descent direction: flat to round-off
            break
        theta = theta + t * step
        last_step = t * float(np.linalg.norm(step))
        f, g, z = f_new, g_new, z_new
        if t < 1e-3:  # a poor Newton direction: no more float32 Hessians in this solve
            single = False
        gnorm = float(np.linalg.norm(g))
        if gnorm < best_gnorm:
            if gnorm < 0.9 * best_gnorm:
                best_it = it
            best_gnorm, best_theta = gnorm, theta
        if gnorm < 1e-6 and it - best_it >= STALL_ITERATIONS:  # end game cycling between pieces of a piecewise-quadratic loss
            break
    theta, gnorm = best_theta, best_gnorm  # the iterate with the smallest gradient carries the certificate
    f = fun(theta)[0]
    converged = gnorm <= gtol
    w = theta[:d]
    intercept = float(theta[d]) if fit_intercept else 0.0
    bound = gnorm / lam if not fit_intercept else (0.0 if gnorm == 0 else float("nan"))
    return ERMSolution(
        coef=w, intercept=intercept, objective=f, distance_bound=bound, method="newton",
        n_iter=it, converged=converged, grad_norm=gnorm,
    )


# ----------------------------------------------------------------------------------------------
# many draws of b: preconditioned limited-memory BFGS over a shared data pass
# ----------------------------------------------------------------------------------------------
@dataclass
class BatchSolution:
    """Minimisers of J_b for K draws of b (rows of ``coef``), each with its own certificate."""

    coef: Array  #: (K, d)
    grad_norm: Array  #: (K,) ||grad J_b(w_k)||
    distance_bound: Array  #: (K,) certified ||w_k - w_k*|| = grad_norm / lam
    n_iter: int  #: iterations of the batched loop (data passes, line-search re-evaluations excluded)
    n_hessians: int  #: Hessians formed (the shared one, per-draw refreshes, Newton fallbacks)
    n_newton: int  #: draws that fell back to :func:`solve_smooth_erm`
    converged: NDArray[np.bool_]


def solve_smooth_erm_batch(
    X: Array | Design,
    y: Array | None,
    loss: MarginLoss,
    lam: float,
    B: Array,
    *,
    center: Array | None = None,
    gtol: float = SMOOTH_GTOL,
    max_iter: int = 100,
    refresh_after: int = 3,
) -> BatchSolution:
    """argmin_w J(w) + (lam/2)||w||^2 + <b_k, w>/n for every row b_k of ``B`` (shape (K, d)), certified per draw.

    ``center``: the minimiser of the unperturbed problem (b = 0) at the same ``lam``, e.g. the non-private
    solution; computed when not given.  Every draw starts at center - H^{-1} b_k / n (the first-order response,
    H the Hessian at the centre) and runs L-BFGS with initial inverse Hessian H^{-1}; a draw whose gradient has
    not fallen 100-fold in ``refresh_after`` iterations gets the Hessian at its own iterate instead (and its
    memory is cleared); a draw not certified after ``max_iter`` iterations is finished by Newton (:func:`solve_smooth_erm`,
    which handles the flat, piecewise-quadratic problems of a tiny regulariser better).
    Each draw stops at ||grad|| <= ``gtol`` (certified distance gtol / lam).
    """
    lam = check_positive(lam, "lam (regularisation)")
    if not loss.smooth:
        raise ValueError(f"solve_smooth_erm_batch needs a differentiable loss, got {loss.name}")
    D = _as_design(X, y)
    B = np.atleast_2d(np.asarray(B, dtype=np.float64))
    K, d = B.shape
    if d != D.d:
        raise ValueError(f"B has {d} columns, X has {D.d}")
    n = D.n_examples
    with blas_threads(2.0 * D.n_rows * d * max(d, K)):
        if center is None:
            center = _newton(D, loss, lam, None, False, d, min(gtol, SMOOTH_GTOL), 500, None).coef
        center = np.asarray(center, dtype=np.float64)
        Lin = B.T / n  # (d, K)
        if not D.is_sparse and D.n_rows * d * d <= SMALL_PROBLEM:
            return _small_batch(D, loss, lam, Lin, center, gtol, max_iter)

        # preconditioners from a row sample (cheap, unbiased; every row would cost more than the iterations it saves)
        # at the start, and at a refresh the Hessian of that sample at the draw's iterate: only the sample's margins
        # are kept between iterations (storing every row's would copy n_rows x K floats per iteration)
        sample = D.sample()
        values = np.empty(D.n_rows * K)  # the loss values of every evaluation (one buffer: no page faults)

        def evaluate(W: Array, cols: NDArray[np.intp]) -> tuple[Array, Array, Array]:
            Z = D.matvec(W)
            Zs = Z[sample]
            val, der = _loss_parts(loss, Z, der=Z, val=values[: Z.size].reshape(Z.shape))  # der overwrites Z
            F = (D.mean(val, overwrite=True) + 0.5 * lam * np.einsum("ij,ij->j", W, W)
                 + np.einsum("ij,ij->j", Lin[:, cols], W))
            G = D.weighted_rmatvec(der, overwrite=True) / n + lam * W + Lin[:, cols]
            return F, G, Zs

        z0 = D.matvec(center)
        shared = D.hessian_factor(_curvature(loss, z0[sample]), lam, rows=sample)
        n_hess = 1
        W = center[:, None] - shared.solve(Lin)
        allc = np.arange(K)
        F, G, Zs = evaluate(W, allc)  # Zs: the sample's margins
        # the draws' curvature differs from the centre's when the noise moves them far: precondition with the
        # Hessian of the curvature averaged over the draws at their starting points (one Hessian for all)
        shared = D.hessian_factor(_curvature(loss, Zs).mean(axis=1), lam, rows=sample)
        n_hess += 1
        gn = np.linalg.norm(G, axis=0)
        own: dict[int, HessianFactor] = {}  # per-draw preconditioners after a refresh
        S = np.zeros((LBFGS_MEMORY, d, K))
        Y = np.zeros((LBFGS_MEMORY, d, K))
        RHO = np.zeros((LBFGS_MEMORY, K))
        mem = np.zeros(K, dtype=np.int64)  # pairs stored per draw (most recent last)
        last_refresh = np.zeros(K, dtype=np.int64)
        gn_at_refresh = gn.copy()
        it = 0
        active = np.flatnonzero(gn > gtol)
        while active.size and it < max_iter:
            it += 1
            # refresh stalled draws with the Hessian at their own iterate
            stalled = active[(it - last_refresh[active] >= refresh_after) & (gn[active] > REFRESH_PROGRESS * gn_at_refresh[active])]
            for k in stalled:
                n_hess += 1
                try:
                    own[int(k)] = D.hessian_factor(_curvature(loss, Zs[:, k]), lam, rows=sample)
                except LinAlgError:
                    continue
                mem[k] = 0
                last_refresh[k] = it
                gn_at_refresh[k] = gn[k]
            P = _lbfgs_direction(G[:, active], S[:, :, active], Y[:, :, active], RHO[:, active], mem[active], shared,
                                 {j: own[int(k)] for j, k in enumerate(active) if int(k) in own})
            slope = np.einsum("ij,ij->j", G[:, active], P)
            bad = slope >= 0
            if bad.any():  # not a descent direction: fall back to the preconditioned gradient
                P[:, bad] = -shared.solve(G[:, active][:, bad])
                slope[bad] = np.einsum("ij,ij->j", G[:, active][:, bad], P[:, bad])
                mem[active[bad]] = 0
            t = np.ones(active.size)
            Wn = W[:, active] + P
            Fn, Gn, Zsn = evaluate(Wn, active)
            for _ in range(40):
                fail = (Fn > F[active] + 1e-4 * t * slope) & ~(np.abs(slope) <= 1e-13 * np.maximum(1.0, np.abs(F[active])))
                if not fail.any():
                    break
                t[fail] *= 0.5
                Wn[:, fail] = W[:, active[fail]] + t[fail] * P[:, fail]
                Fb, Gb, Zb = evaluate(Wn[:, fail], active[fail])
                Fn[fail], Gn[:, fail], Zsn[:, fail] = Fb, Gb, Zb
            s_new = Wn - W[:, active]
            y_new = Gn - G[:, active]
            sy = np.einsum("ij,ij->j", s_new, y_new)
            keep = sy > 1e-12 * np.linalg.norm(s_new, axis=0) * np.linalg.norm(y_new, axis=0)
            for j in np.flatnonzero(keep):
                k = active[j]
                if mem[k] == LBFGS_MEMORY:
                    S[:-1, :, k], Y[:-1, :, k], RHO[:-1, k] = S[1:, :, k], Y[1:, :, k], RHO[1:, k]
                    mem[k] -= 1
                S[mem[k], :, k], Y[mem[k], :, k], RHO[mem[k], k] = s_new[:, j], y_new[:, j], 1.0 / sy[j]
                mem[k] += 1
            W[:, active], F[active], G[:, active], Zs[:, active] = Wn, Fn, Gn, Zsn
            gn[active] = np.linalg.norm(Gn, axis=0)
            active = active[gn[active] > gtol]
        n_newton = 0
        for k in active:  # not certified by the batched loop: Newton from where it stopped
            sol = _newton(D, loss, lam, B[k], False, d, gtol, 500, W[:, k])
            W[:, k], gn[k] = sol.coef, sol.grad_norm
            n_newton += 1
            n_hess += sol.n_iter
    return BatchSolution(coef=W.T.copy(), grad_norm=gn, distance_bound=gn / lam, n_iter=it, n_hessians=n_hess,
                         n_newton=n_newton, converged=gn <= gtol)


def _small_batch(D: Design, loss: MarginLoss, lam: float, Lin: Array, center: Array, gtol: float,
                 max_iter: int) -> BatchSolution:
    """Tiny problems (audits: a few rows and coordinates, 10^4-10^6 draws): Newton for every draw at once, with
    its own exact Hessian (an einsum over rows), batched solves and a vectorised Armijo search."""
    A = D.signed_rows()
    n, d, K = D.n_examples, D.d, Lin.shape[1]
    w = np.ones(D.n_rows) if D.weight is None else D.weight

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
    while it < max_iter and np.any(gn > gtol):
        it += 1
        act = np.flatnonzero(gn > gtol)
        C = (w[:, None] * loss.second_derivative(Z[:, act])) / n  # (rows, k)
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
    return BatchSolution(coef=W.T.copy(), grad_norm=gn, distance_bound=gn / lam, n_iter=it, n_hessians=it * K,
                         n_newton=0, converged=gn <= gtol)


def _lbfgs_direction(G: Array, S: Array, Y: Array, RHO: Array, mem: NDArray[np.int64], shared: HessianFactor,
                     own: dict[int, HessianFactor]) -> Array:
    """-H_k G for every column with the two-loop recursion (memory ``mem[k]``, initial matrix P_k^{-1})."""
    Q = G.copy()
    m = S.shape[0]
    alpha = np.zeros((m, G.shape[1]))
    for i in range(m - 1, -1, -1):
        on = i < mem
        if not on.any():
            continue
        a = RHO[i] * np.einsum("ij,ij->j", S[i], Q) * on
        alpha[i] = a
        Q -= a * Y[i]
    R = shared.solve(Q)
    for j, fac in own.items():
        R[:, j] = fac.solve(Q[:, j])
    for i in range(m):
        on = i < mem
        if not on.any():
            continue
        beta = RHO[i] * np.einsum("ij,ij->j", Y[i], R) * on
        R += (alpha[i] - beta) * S[i]
    return -R
