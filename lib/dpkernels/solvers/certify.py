"""Rigorous floating-point bounds on the gradient of a smooth ERM objective at a float64 point.

For F_b(w) = (1/n) sum_i s_i l(a_i'w) + (lam/2) ||w||^2 + b'w / n (signed rows a_i = y_i x_i, integer weights s_i,
a smooth margin loss l), :func:`gradient_with_bound` returns the float64 gradient g computed here and a componentwise
bound E with ``|grad F_b(w) - g| <= E``, where grad F_b(w) is the exact real gradient at the float point w.  With
lam-strong convexity, ||w - argmin F_b|| <= (||g|| + ||E||) / lam: a certificate that holds in floating point, the
premise of :mod:`dpkernels.argmin_release`.

How the bound is kept rigorous (u = 2^-53, gamma_k = k u / (1 - k u), Higham's "Accuracy and Stability of Numerical
Algorithms", Sec. 3.1 and 4.2):

* every sum is a balanced binary tree of float additions, computed here (not by BLAS, whose order is unknown): a tree
  of height h has error at most ``gamma_h sum |terms|``; a product of floats errs by at most ``u |product|``;
* margins z_i = a_i'w (tree over the d coordinates): ``|dz_i| <= gamma_{h_d + 1} |a_i|'|w|``;
* the derivative l'(z_i) as :func:`dpkernels.solvers.smooth._loss_parts` evaluates it: a bound per loss for its own
  rounding (numpy's float64 ``exp`` taken to be accurate to ``EXP_REL``, 16 times the 4 ulp numpy documents;
  ``tests/test_certify.py`` measures it against mpmath) plus the propagated margin error (Lipschitz constant of l' on
  [z - dz, z + dz]);
* the data term (1/n) sum_i s_i v_i a_i (tree over the rows, in chunks), then lam w and b/n added;
* the bounds themselves are sums of non-negative terms computed in float64 (BLAS allowed): a computed bound T~ of a
  true T satisfies T <= T~ / (1 - gamma_m), applied with m the number of terms.
"""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import NDArray

from dpkernels.losses import Huber, Logistic, MarginLoss, SmoothedHinge
from dpkernels.solvers.smooth import Design, _loss_parts

__all__ = ["U", "EXP_REL", "gamma", "tree_sum", "margins_with_bound", "derivative_with_bound", "gradient_with_bound",
           "certified_gradient_norm", "derivative_rounding_bound"]

Array = NDArray[np.float64]
U = 2.0**-53
#: Relative accuracy assumed of numpy's float64 ``exp``: 16 x the 4 ulp it documents (measured: <= 1 ulp).
EXP_REL = 2.0**-48
#: Products per chunk of the tree sums (bounds the temporary memory to about 64 MB).
_CHUNK_ELEMENTS = 1 << 23


def gamma(k: int) -> float:
    """gamma_k = k u / (1 - k u)."""
    return k * U / (1.0 - k * U)


def _upper(x: Array | float, terms: int) -> Array | float:
    """An upper bound of a true sum of ``terms`` non-negative terms from its float computation."""
    return x / (1.0 - gamma(terms + 2))


def tree_sum(P: Array, axis: int = 0) -> tuple[Array, int]:
    """Sum along ``axis`` by a balanced binary tree of float additions, in place (``P`` is overwritten); returns
    (sum, height).  Level by level, element i is added to element i + half; an odd last element moves down."""
    V = np.moveaxis(P, axis, 0)
    m, h = V.shape[0], 0
    while m > 1:
        half = m // 2
        V[:half] += V[half:2 * half]
        if m % 2:
            V[half] = V[2 * half]
        m = half + (m % 2)
        h += 1
    return V[0].copy(), h


def _dense_rows(design: Design, a: int, b: int) -> Array:
    """Rows a:b as a dense array (a view of a dense design: callers must not write into it)."""
    X = design.X[a:b]
    return X.toarray() if hasattr(X, "toarray") else X


def _chunk(design: Design, K: int) -> int:
    rows = max(1, _CHUNK_ELEMENTS // max(1, design.d * K))
    return 1 << max(0, int(math.floor(math.log2(rows))))


def _height(m: int) -> int:
    return max(0, math.ceil(math.log2(m))) if m > 1 else 0


def margins_with_bound(design: Design, W: Array) -> tuple[Array, Array]:
    """Z = A W (shape (rows, K)) by a tree over the coordinates, and a rigorous componentwise bound dZ on its error."""
    K = W.shape[1]
    rows, d = design.shape
    g = gamma(_height(d) + 1)
    Z = np.empty((rows, K))
    dZ = np.empty((rows, K))
    absW = np.abs(W)
    step = _chunk(design, K)
    buf = np.empty((min(step, rows), d))
    for a in range(0, rows, step):
        A = _dense_rows(design, a, min(rows, a + step))
        b = a + A.shape[0]
        for k in range(K):
            P = A * W[:, k]  # products, each within u of the exact one
            Z[a:b, k], _ = tree_sum(P, axis=1)
        absA = np.abs(A, out=buf[: A.shape[0]])
        dZ[a:b] = absA @ absW
    dZ *= g / (1.0 - gamma(d + 2))
    return Z, dZ


def derivative_rounding_bound(loss: MarginLoss, Z: Array, V: Array) -> Array:
    """A bound on ``|l'(Z) - V|`` for V computed from Z by :func:`dpkernels.solvers.smooth._loss_parts` (the margin Z
    taken as exact): the rounding of each loss's own formula."""
    if isinstance(loss, Logistic):
        # e = exp(-|z|) (EXP_REL), 1 + e, 1 / (1 + e), e * t: |dv| <= (EXP_REL + 4u) |v| (|d v / d e| <= |v| / e)
        return (EXP_REL + 4.0 * U) * np.abs(V) * (1.0 + 2.0**-40) + 2.0**-1070  # subnormal e: absolute ulps
    if isinstance(loss, Huber):
        h = loss.h
        t = (1.0 + h) - Z  # as computed by _huber_parts
        e_t = U * (1.0 + h) + U * np.abs(t)
        inside = (t >= -e_t) & (t <= 2.0 * h + e_t)  # outside, both clip to the same end
        return np.where(inside, e_t / (2.0 * h), 0.0) * (1.0 + 4.0 * U) + 2.0 * U * np.abs(V) + 2.0**-1000
    if isinstance(loss, SmoothedHinge):
        h, c = loss.h, loss.curvature
        u = 1.0 - Z
        in_mid = np.abs(u) <= h + 4.0 * U * (1.0 + h)
        # u^3/(4h^3) - 3u/(4h) - 0.5: each of the three terms within 2^-49 of its value (<= 1/4, 3/4, 1/2) when
        # |u| <= h, plus the rounding of u = 1 - z (Lipschitz c) and of the branch limits 1 +- h
        mid_err = 2.0**-48 + c * (U * np.abs(u) + 2.0 * U * (1.0 + h))
        return np.where(in_mid, mid_err, c * 2.0 * U * (1.0 + h)) + 2.0**-1000
    raise ValueError(f"no rounding bound for the loss {loss.name}")


def _curvature_bound(loss: MarginLoss, Z: Array, dZ: Array) -> Array:
    """An upper bound of |l''| on [Z - dZ, Z + dZ]."""
    if isinstance(loss, Logistic):  # l''(t) = s(t) s(-t) <= min(1/4, e^{-|t|})
        far = np.maximum(np.abs(Z) - dZ, 0.0)
        return np.minimum(0.25, np.exp(-far) * (1.0 + 2.0**-40))
    return np.full_like(Z, loss.curvature)


def derivative_with_bound(loss: MarginLoss, Z: Array, dZ: Array) -> tuple[Array, Array]:
    """V = l'(Z) as the solver computes it, and ``dV >= |l'(z_exact) - V|`` for the exact margins ``|z_exact - Z| <= dZ``."""
    _, V = _loss_parts(loss, Z, value=False)
    dV = derivative_rounding_bound(loss, Z, V) + _curvature_bound(loss, Z, dZ) * dZ * (1.0 + 2.0**-40)
    return V, dV


def gradient_with_bound(design: Design, loss: MarginLoss, lam: float, lin: Array, W: Array) -> tuple[Array, Array]:
    """The gradient G of F_b at the columns of ``W`` (shape (d, K)) with ``lin`` = b / n as the solver holds it
    (shape (d, K), the float64 quotients), and ``E >= |exact gradient - G|`` componentwise (both (d, K)).

    ``lin`` is the float the solver used; the exact objective's b / n differs from it by at most ``u |lin|``, which E
    covers (see :mod:`dpkernels.argmin_release`)."""
    W = np.atleast_2d(np.asarray(W, dtype=np.float64))
    if W.shape[0] != design.d:
        W = W.T
    lin = np.asarray(lin, dtype=np.float64).reshape(W.shape)
    rows, d = design.shape
    K = W.shape[1]
    n = design.n_examples
    Z, dZ = margins_with_bound(design, W)
    V, dV = derivative_with_bound(loss, Z, dZ)
    if design.weight is None:
        Q, dQ = V, dV
    else:  # q_i = s_i v_i within u |q_i|
        Q = V * design.weight[:, None]
        dQ = dV * design.weight[:, None] + U * np.abs(Q)
    step = _chunk(design, K)
    partial, height = [], 0
    T = np.zeros((d, 2 * K))  # sum_i |a_ij| |q_i| and sum_i |a_ij| dq_i
    buf = np.empty((min(step, rows), d))
    for a in range(0, rows, step):
        A = _dense_rows(design, a, min(rows, a + step))
        b = a + A.shape[0]
        for k in range(K):
            P = A * Q[a:b, k:k + 1]  # (chunk, d): products, each within u
            S, h = tree_sum(P, axis=0)
            partial.append(S)
            height = max(height, h)
        absA = np.abs(A, out=buf[: A.shape[0]])
        T += absA.T @ np.hstack([np.abs(Q[a:b]), dQ[a:b]])
    S, h_top = tree_sum(np.stack(partial).reshape(-1, K, d), axis=0)
    height += h_top
    T /= 1.0 - gamma(rows + 2)
    g_tree = gamma(height + 1)  # the products' u and the tree's gamma_height
    E_data = (g_tree * T[:, :K] + T[:, K:] * (1.0 + g_tree)) / n * (1.0 + 2.0 * U)
    G_data = S.T / n
    E_data = E_data + U * np.abs(G_data)
    LW = lam * W
    G = G_data + LW + lin
    E = (E_data + U * np.abs(LW) + U * np.abs(lin) + gamma(2) * (np.abs(G_data) + np.abs(LW) + np.abs(lin)))
    return G, E * (1.0 + 2.0**-40)


def certified_gradient_norm(design: Design, loss: MarginLoss, lam: float, lin: Array, W: Array) -> Array:
    """Upper bounds (one per column of ``W``) of the exact gradient norm ||grad F_b(w)||_2 at the float points W."""
    G, E = gradient_with_bound(design, loss, lam, lin, W)
    return (np.linalg.norm(G, axis=0) + np.linalg.norm(E, axis=0)) * (1.0 + 2.0**-40)
