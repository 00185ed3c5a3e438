"""The SRHT (dpkernels.jl.SRHT): the pruned transform equals the matrix it defines, costs at most the fast transform."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import sparse
from scipy.linalg import hadamard

from dpkernels import jl


def _matrix(s: jl.SRHT, d: int) -> np.ndarray:
    n, k = s.n_padded_, len(s.rows_)
    return math.sqrt(n / k) * (hadamard(n) / math.sqrt(n))[s.rows_][:, :d] * s.signs_


@pytest.mark.parametrize("d,k", [(1, 1), (5, 3), (100, 7), (128, 128), (300, 200), (1000, 64), (4096, 1024),
                                 (4096, 4096), (2048, 2000)])
def test_transform_and_adjoint_equal_the_matrix(d, k):
    rng = np.random.default_rng(d + k)
    X = rng.standard_normal((9, d))
    s = jl.SRHT(n_components=k, random_state=k).fit(X)
    Phi = _matrix(s, d)
    np.testing.assert_allclose(s.transform(X), X @ Phi.T, atol=1e-11)
    np.testing.assert_allclose(s.transform(sparse.csr_matrix(X)), X @ Phi.T, atol=1e-11)
    W = rng.standard_normal((4, k))
    np.testing.assert_allclose(s.adjoint(W), W @ Phi, atol=1e-11)
    np.testing.assert_allclose(s.adjoint(W[0]), W[0] @ Phi, atol=1e-11)


def test_both_plans_are_exercised_and_agree():
    """k small: the pruned transform; k = n: the full fast transform.  Both give the same Phi x for the same draw."""
    X = np.random.default_rng(0).standard_normal((3, 4096))
    small = jl.SRHT(n_components=64, random_state=1).fit(X)
    assert small._plan() is not None
    full = jl.SRHT(n_components=4096, random_state=1).fit(X)
    assert full._plan() is None
    pruned = jl.SRHT(n_components=64, random_state=1).fit(X)
    pruned.rows_ = full.rows_[:64].copy()
    pruned.signs_ = full.signs_
    np.testing.assert_allclose(pruned.transform(X), full.transform(X)[:, :64] * math.sqrt(4096 / 64), atol=1e-10)


@pytest.mark.parametrize("n", [2**p for p in range(1, 18)])
def test_cost_per_row_is_at_most_the_fast_transform(n):
    for k in sorted({1, 2, 7, 64, n // 4, n // 2, n} - {0}):
        chosen = min(jl._pruned_cost(n, k), jl._full_cost(n))
        assert chosen <= jl._full_cost(n)
        assert jl._full_cost(n) <= n * (jl._HADAMARD_BLOCK + 2 * math.log2(n))  # O(n log n)


def test_hadamard_rows():
    H = hadamard(64)
    rows = np.array([0, 5, 63, 17])
    np.testing.assert_array_equal(jl._hadamard_rows(rows, 64), H[rows])
