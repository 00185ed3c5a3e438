"""Johnson-Lindenstrauss transforms as scikit-learn transformers (Bassily, Mohri and Suresh 2022, Sections 3.1-3.2).

Every transform is a random k x d matrix Phi, drawn from ``random_state`` and the input dimension only
(data-independent: fitting reads nothing but ``X.shape[1]``, so releasing Phi or anything computed from it costs no
privacy), with E||Phi x||^2 = ||x||^2 for every x.  Each offers ``transform`` (x -> Phi x, row-wise) and ``adjoint``
(w -> Phi^T w, row-wise), which Bassily et al.'s Algorithms 1-2 use to release w^Priv = Phi^T w-tilde.

=======================  =====================================================  =================================
class                    Phi                                                    cost per row / memory
=======================  =====================================================  =================================
:class:`RademacherJL`    i.i.d. +-1/sqrt(k) (Algorithm 1, step 2; Achlioptas    O(d k) / k d floats
                         2003)
:class:`SparseJL`        scikit-learn's ``SparseRandomProjection``: entries     O(nnz) / density k d entries
                         +-sqrt(1/(density k)) with probability density / 2,
                         else 0 (Achlioptas 2003; Li, Hastie, Church 2006)
:class:`GaussianJL`      scikit-learn's ``GaussianRandomProjection``:           O(d k) / k d floats
                         i.i.d. N(0, 1/k)
:class:`SRHT`            subsampled randomised Hadamard transform               O(d log d) / d signs + k indices
                         sqrt(n/k) P H D (Ailon and Chazelle 2006; Tropp
                         2011)
=======================  =====================================================  =================================

The SRHT is **our** choice for the fast transform of Algorithm 2: the paper's construction (its Lemma A.4, citing
[KW11, AL09, AC06]) was not recovered.  Here x is zero-padded to n = 2^ceil(log2 d), its signs flipped by a random
diagonal D, multiplied by the orthonormal Walsh-Hadamard matrix H, and k of the n coordinates are kept (P: uniformly,
without replacement) and scaled by sqrt(n/k); only those k outputs are computed (a pruned transform, :class:`SRHT`),
or all of them by the fast transform :func:`fwht` when that is cheaper.

Very sparse projections (density ~ 1/sqrt(d), scikit-learn's ``"auto"``) need inputs whose mass is spread over many
coordinates; on spiky inputs (one-hot columns, x = e_1) their norm distortion is large.  The Hadamard rotation of
the SRHT spreads any input first.  ``notebooks/bassily2022`` measures the distortion of each against k.
"""

from __future__ import annotations

import math
import numbers

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy import sparse
from sklearn.base import BaseEstimator, ClassNamePrefixFeaturesOutMixin, TransformerMixin
from sklearn.random_projection import GaussianRandomProjection, SparseRandomProjection
from sklearn.utils.validation import check_is_fitted, validate_data

from dpkernels._validation import check_random_state

__all__ = ["fwht", "hadamard_block", "RademacherJL", "SparseJL", "GaussianJL", "SRHT", "make_jl", "JL_TRANSFORMS"]

Array = NDArray[np.float64]

#: Rows of the Hadamard block applied by one matrix product in :func:`fwht` (the remaining levels are butterflies).
_HADAMARD_BLOCK = 64
#: Bytes of one row block of :func:`fwht` (the butterflies run on blocks that stay in cache).
_BLOCK_BYTES = 1 << 23
#: Bytes of one (zero-padded) row block of :meth:`SRHT.transform` (measured best on a 2-core VM: 2 MB).
_SRHT_BLOCK_BYTES = 1 << 21


def hadamard_block(n: int) -> Array:
    """The unnormalised Sylvester-Hadamard matrix H_n (entries +-1), n a power of two.

    Parameters
    ----------
    n : int
        The order, a power of two.

    Returns
    -------
    ndarray of shape (n, n)
        H_n, built by the recursion H_2n = [[H_n, H_n], [H_n, -H_n]].

    Examples
    --------
    >>> from dpkernels.jl import hadamard_block
    >>> hadamard_block(2)
    array([[ 1.,  1.],
           [ 1., -1.]])
    """
    if n < 1 or n & (n - 1):
        raise ValueError(f"n must be a power of two, got {n}")
    H = np.ones((1, 1))
    while H.shape[0] < n:
        H = np.block([[H, H], [H, -H]])
    return H


def fwht(A: ArrayLike, normalize: bool = True) -> Array:
    """The Walsh-Hadamard transform of every row of ``A`` (length n, a power of two): A H_n (/ sqrt(n)).

    O(n log n) per row: H_n = H_{n / b} (x) H_b (Sylvester), so the last log2(b) levels are one matrix product with
    the b x b block H_b on each contiguous run of b entries, and the first log2(n / b) levels are in-place butterflies
    on contiguous chunks, over row blocks that fit in cache.  ``normalize`` divides by sqrt(n) (H_n / sqrt(n) is
    orthogonal and symmetric, so this transform is its own inverse).

    Parameters
    ----------
    A : array-like of shape (n,) or (rows, n)
        The rows to transform; n must be a power of two.
    normalize : bool, default=True
        Divide by sqrt(n) (the orthonormal transform).

    Returns
    -------
    ndarray of shape (rows, n)
        A new float64 array (a 1-d input gives one row).

    Examples
    --------
    >>> import numpy as np
    >>> from dpkernels.jl import fwht
    >>> fwht(np.array([1.0, 2.0, 3.0, 4.0]), normalize=False)
    array([[10., -2., -4.,  0.]])
    >>> bool(np.allclose(fwht(fwht(np.arange(8.0))), np.arange(8.0)))  # its own inverse
    True
    """
    A = np.array(A, dtype=np.float64, ndmin=2, copy=True)
    if A.ndim != 2:
        raise ValueError(f"A must be 1-d or 2-d, got {A.ndim} dimensions")
    rows, n = A.shape
    if n < 1 or n & (n - 1):
        raise ValueError(f"row length must be a power of two, got {n}")
    b = min(n, _HADAMARD_BLOCK)
    Hb = hadamard_block(b)
    step = max(1, _BLOCK_BYTES // (8 * n))
    for start in range(0, rows, step):
        blk = A[start:start + step]
        r = blk.shape[0]
        blk[...] = (blk.reshape(-1, b) @ Hb).reshape(r, n)  # a 2-d product (BLAS)
        h = b
        while h < n:
            v = blk.reshape(r, n // (2 * h), 2, h)
            lo, hi = v[:, :, 0, :], v[:, :, 1, :]
            diff = lo - hi
            lo += hi
            hi[...] = diff
            h *= 2
    if normalize:
        A *= 1.0 / math.sqrt(n)
    return A


def _check_components(n_components: object, n_features: int | None = None) -> int:
    if isinstance(n_components, bool) or not isinstance(n_components, numbers.Integral) or n_components < 1:
        raise ValueError(f"n_components must be a positive integer, got {n_components!r}")
    return int(n_components)


def _sklearn_seed(random_state: object) -> int:
    """An int seed for scikit-learn's random projections, drawn from our Generator (never the global RNG)."""
    return int(check_random_state(random_state).integers(0, 2**31 - 1))


class _JLBase(ClassNamePrefixFeaturesOutMixin, TransformerMixin, BaseEstimator):
    """Shared API: ``transform`` (Phi x), ``adjoint`` (Phi^T w), ``n_components``; scikit-learn's
    ``get_feature_names_out`` / ``set_output`` (names ``<class>0``, ...)."""

    @property
    def _n_features_out(self) -> int:
        return int(self.n_components)

    def __init__(self, n_components: int = 100, random_state: object = None) -> None:
        self.n_components = n_components
        self.random_state = random_state

    def fit(self, X: ArrayLike, y: ArrayLike | None = None) -> "_JLBase":
        """Draw Phi for inputs of dimension ``X.shape[1]`` (nothing else of ``X`` is read); returns self."""
        X = validate_data(self, X, accept_sparse=("csr", "csc"), reset=True)
        self._draw(X.shape[1], _check_components(self.n_components), check_random_state(self.random_state))
        return self

    def _draw(self, d: int, k: int, rng: np.random.Generator) -> None:
        raise NotImplementedError

    def _check_rows(self, W: ArrayLike) -> tuple[Array, bool]:
        W = np.asarray(W, dtype=np.float64)
        single = W.ndim == 1
        W = np.atleast_2d(W)
        if W.ndim != 2 or W.shape[1] != int(self.n_components):
            raise ValueError(f"adjoint needs vectors of length n_components = {self.n_components}, got shape {W.shape}")
        return W, single

    def adjoint(self, W: ArrayLike) -> Array:
        """Phi^T w: the map back to the input space.

        Parameters
        ----------
        W : array-like of shape (n_components,) or (c, n_components)
            A vector w in R^k, or one per row.

        Returns
        -------
        ndarray of shape (n_features,) or (c, n_features)
            Phi^T w (one row per row of W).
        """
        raise NotImplementedError


class RademacherJL(_JLBase):
    """Dense Rademacher projection: Phi_ij = +-1/sqrt(k), i.i.d. uniform signs.

    Bassily et al.'s Algorithm 1, step 2, with the 1/sqrt(k) normalisation reconstructed (Achlioptas 2003).
    Data-independent: :meth:`fit` reads only the input dimension.

    Parameters
    ----------
    n_components : int, default=100
        k, the output dimension.
    random_state : None, int, SeedSequence or numpy.random.Generator, default=None
        The source of Phi (never the global generator).

    Attributes
    ----------
    components_ : ndarray of shape (n_components, n_features)
        The matrix Phi.
    n_features_in_ : int
        d, the input dimension.

    Examples
    --------
    >>> import numpy as np
    >>> X = np.random.default_rng(0).normal(size=(5, 100))
    >>> from dpkernels import RademacherJL
    >>> jl = RademacherJL(n_components=20, random_state=0).fit(X)
    >>> jl.transform(X).shape, jl.adjoint(np.ones(20)).shape
    ((5, 20), (100,))
    """

    def _draw(self, d: int, k: int, rng: np.random.Generator) -> None:
        signs = rng.integers(0, 2, size=(k, d), dtype=np.int8)
        self.components_ = (2.0 * signs - 1.0) / math.sqrt(k)

    def transform(self, X: ArrayLike) -> Array:
        """Phi x for every row of X.

        Parameters
        ----------
        X : array-like or sparse matrix of shape (n_samples, n_features)

        Returns
        -------
        ndarray of shape (n_samples, n_components)
        """
        check_is_fitted(self, "components_")
        X = validate_data(self, X, accept_sparse=("csr", "csc"), reset=False)
        out = X @ self.components_.T
        return np.asarray(out, dtype=np.float64)

    def adjoint(self, W: ArrayLike) -> Array:
        check_is_fitted(self, "components_")
        W, single = self._check_rows(W)
        out = W @ self.components_
        return out[0] if single else out


class _SklearnJL(_JLBase):
    """A scikit-learn random projection seeded from our Generator."""

    def _make(self, seed: int) -> object:
        raise NotImplementedError

    def _draw(self, d: int, k: int, rng: np.random.Generator) -> None:
        proj = self._make(_sklearn_seed(rng))
        proj.fit(sparse.csr_matrix((1, d)))  # only the shape is read
        self.components_ = proj.components_

    def transform(self, X: ArrayLike) -> Array:
        """Phi x for every row of X.

        Parameters
        ----------
        X : array-like or sparse matrix of shape (n_samples, n_features)

        Returns
        -------
        ndarray of shape (n_samples, n_components)
        """
        check_is_fitted(self, "components_")
        X = validate_data(self, X, accept_sparse=("csr", "csc"), reset=False)
        out = X @ self.components_.T
        return np.asarray(out.toarray() if sparse.issparse(out) else out, dtype=np.float64)

    def adjoint(self, W: ArrayLike) -> Array:
        check_is_fitted(self, "components_")
        W, single = self._check_rows(W)
        out = np.asarray((self.components_.T @ W.T).T, dtype=np.float64)
        return out[0] if single else out


class SparseJL(_SklearnJL):
    """Sparse random projection (scikit-learn's ``SparseRandomProjection``, seeded from ``random_state``).

    Entries +-sqrt(1/(density k)) with probability density / 2 each, else 0 (Achlioptas 2003; Li, Hastie and Church
    2006).  Data-independent: :meth:`fit` reads only the input dimension.

    Parameters
    ----------
    n_components : int, default=100
        k, the output dimension.
    density : float or "auto", default=1/3
        The fraction of non-zero entries; ``"auto"`` is 1/sqrt(d) (Li et al. 2006), 1/3 is Achlioptas'
        database-friendly projection.
    random_state : None, int, SeedSequence or numpy.random.Generator, default=None
        The source of Phi (never the global generator).

    Attributes
    ----------
    components_ : scipy.sparse matrix of shape (n_components, n_features)
        The matrix Phi.
    n_features_in_ : int
        d, the input dimension.

    Examples
    --------
    >>> import numpy as np
    >>> X = np.random.default_rng(0).normal(size=(5, 100))
    >>> from dpkernels import SparseJL
    >>> jl = SparseJL(n_components=20, random_state=0).fit(X)
    >>> jl.transform(X).shape, jl.adjoint(np.ones(20)).shape
    ((5, 20), (100,))
    """

    def __init__(self, n_components: int = 100, density: float | str = 1.0 / 3.0, random_state: object = None) -> None:
        self.n_components = n_components
        self.density = density
        self.random_state = random_state

    def _make(self, seed: int) -> object:
        return SparseRandomProjection(n_components=int(self.n_components), density=self.density, random_state=seed)


class GaussianJL(_SklearnJL):
    """Gaussian random projection: Phi_ij i.i.d. N(0, 1/k).

    scikit-learn's ``GaussianRandomProjection``, seeded from ``random_state``.  Data-independent: :meth:`fit` reads
    only the input dimension.

    Parameters
    ----------
    n_components : int, default=100
        k, the output dimension.
    random_state : None, int, SeedSequence or numpy.random.Generator, default=None
        The source of Phi (never the global generator).

    Attributes
    ----------
    components_ : ndarray of shape (n_components, n_features)
        The matrix Phi.
    n_features_in_ : int
        d, the input dimension.

    Examples
    --------
    >>> import numpy as np
    >>> X = np.random.default_rng(0).normal(size=(5, 100))
    >>> from dpkernels import GaussianJL
    >>> jl = GaussianJL(n_components=20, random_state=0).fit(X)
    >>> jl.transform(X).shape, jl.adjoint(np.ones(20)).shape
    ((5, 20), (100,))
    """

    def _make(self, seed: int) -> object:
        return GaussianRandomProjection(n_components=int(self.n_components), random_state=seed)


def _hadamard_rows(rows: NDArray[np.intp], n: int) -> Array:
    """Rows ``rows`` of the unnormalised Sylvester-Hadamard matrix H_n: H_n[r, j] = (-1)^popcount(r & j)."""
    bits = np.bitwise_count(np.bitwise_and(np.asarray(rows, dtype=np.int64)[:, None], np.arange(n, dtype=np.int64)[None, :]))
    return 1.0 - 2.0 * (bits & 1).astype(np.float64)


def _split(n: int, k: int) -> int:
    """The inner block b of the pruned transform (:class:`SRHT`): a power of two near sqrt(k), at most n."""
    return min(n, 1 << max(0, round(math.log2(max(1, k)) / 2)))


def _pruned_cost(n: int, k: int) -> float:
    """Operations per row of the pruned transform with b = _split(n, k): n min(b, k) + (n / b) k."""
    b = _split(n, k)
    return n * min(b, k) + (n // b) * k


def _full_cost(n: int) -> float:
    """Operations per row of :func:`fwht`: a product with the block H_64, then the butterflies."""
    b = min(n, _HADAMARD_BLOCK)
    return n * b + 2 * n * math.log2(n // b)


class SRHT(_JLBase):
    """Subsampled randomised Hadamard transform Phi = sqrt(n / k) P H D (our fast JL for Algorithm 2; see the
    module docstring), memory O(d + k), cost per row O(d log d).

    Only the k sampled outputs of the Hadamard transform are computed (a pruned transform): with n = a b and
    H_n = H_a (x) H_b (Sylvester), output r = r1 b + r2 is sum_j1 H_a[r1, j1] (H_b x_j1)[r2], x_j1 the j1-th run of b
    entries.  So all rows are transformed at once by one product with the (at most min(b, k)) rows of H_b that are
    needed, then one product per needed r2 with the rows of H_a that are needed: n min(b, k) + a k operations per row,
    which b ~ sqrt(k) makes about 2 n sqrt(k).  When that exceeds the full fast transform's cost (:func:`fwht`,
    O(n log n)), the full transform is used and k of its outputs kept; either way the cost per row is at most the
    fast transform's.  The adjoint prunes the same way (its input has k non-zeros).

    Requires k <= n = 2^ceil(log2 d) (k coordinates are sampled without replacement).  Data-independent: :meth:`fit`
    reads only the input dimension.

    Parameters
    ----------
    n_components : int, default=100
        k, the output dimension.
    random_state : None, int, SeedSequence or numpy.random.Generator, default=None
        The source of Phi (never the global generator).

    Attributes
    ----------
    signs_ : ndarray of shape (n_features,)
        The diagonal of D (+-1).
    rows_ : ndarray of shape (n_components,)
        The kept coordinates of the transform (sorted).
    n_padded_ : int
        n = 2^ceil(log2 d).
    n_features_in_ : int
        d, the input dimension.

    Examples
    --------
    >>> import numpy as np
    >>> X = np.random.default_rng(0).normal(size=(5, 100))
    >>> from dpkernels import SRHT
    >>> jl = SRHT(n_components=20, random_state=0).fit(X)
    >>> jl.n_padded_, jl.transform(X).shape, jl.adjoint(np.ones(20)).shape
    (128, (5, 20), (100,))
    """

    def _draw(self, d: int, k: int, rng: np.random.Generator) -> None:
        n = 1 << max(0, (d - 1).bit_length())
        if k > n:
            raise ValueError(f"SRHT keeps k <= n = {n} coordinates (d = {d}); got n_components = {k}")
        self.n_padded_ = n
        self.signs_ = np.where(rng.integers(0, 2, size=d) == 1, 1.0, -1.0)
        self.rows_ = np.sort(rng.choice(n, size=k, replace=False))

    def _plan(self) -> tuple[int, list[tuple[int, NDArray[np.intp], Array]], Array] | None:
        """(b, [(r2, positions in rows_, rows of H_a)], rows of H_b) of the pruned transform, or None when the full
        transform is cheaper."""
        n, k = self.n_padded_, len(self.rows_)
        if _pruned_cost(n, k) >= _full_cost(n):
            return None
        b = _split(n, k)
        r1, r2 = self.rows_ // b, self.rows_ % b
        needed = np.unique(r2)
        groups = [(int(u), np.flatnonzero(r2 == u), _hadamard_rows(r1[r2 == u], n // b)) for u in needed]
        return b, groups, _hadamard_rows(needed, b)

    def transform(self, X: ArrayLike) -> Array:
        """Phi x for every row of X.

        Parameters
        ----------
        X : array-like or sparse matrix of shape (n_samples, n_features)

        Returns
        -------
        ndarray of shape (n_samples, n_components)
        """
        check_is_fitted(self, "rows_")
        X = validate_data(self, X, accept_sparse=("csr", "csc"), reset=False)
        if sparse.issparse(X):
            X = X.toarray()
        m, d = X.shape
        n, k = self.n_padded_, len(self.rows_)
        out = np.empty((m, k))
        scale = math.sqrt(n / k) / math.sqrt(n)  # sqrt(n / k) P (H_n / sqrt(n)) D
        plan = self._plan()
        step = max(1, _SRHT_BLOCK_BYTES // (8 * n))
        for start in range(0, m, step):
            rows = min(step, m - start)
            blk = np.zeros((rows, n))
            np.multiply(X[start:start + rows], self.signs_, out=blk[:, :d])
            if plan is None:
                out[start:start + rows] = fwht(blk, normalize=False)[:, self.rows_] * scale
                continue
            b, groups, hb = plan
            a = n // b
            # H_b on every run of b entries, needed rows only; one contiguous (rows, a) slab per needed r2
            inner = (hb @ blk.reshape(rows * a, b).T).reshape(len(groups), rows, a)
            for g, (_, pos, ha) in enumerate(groups):
                out[start:start + rows, pos] = (inner[g] @ ha.T) * scale
        return out

    def adjoint(self, W: ArrayLike) -> Array:
        check_is_fitted(self, "rows_")
        W, single = self._check_rows(W)
        n, k, d = self.n_padded_, len(self.rows_), len(self.signs_)
        scale = math.sqrt(n / k) / math.sqrt(n)
        plan = self._plan()
        if plan is None:
            full = np.zeros((W.shape[0], n))
            full[:, self.rows_] = W
            out = fwht(full, normalize=False)[:, :d] * (self.signs_ * scale)
        else:  # H_n z for z with k non-zeros: H_a over the sampled r1 of each r2, then H_b over the needed r2
            b, groups, hb = plan
            T = np.stack([W[:, pos] @ ha for _, pos, ha in groups], axis=2)  # (c, a, |r2|)
            out = (T @ hb).reshape(W.shape[0], n)[:, :d] * (self.signs_ * scale)
        return out[0] if single else out


JL_TRANSFORMS = {"rademacher": RademacherJL, "sparse": SparseJL, "gaussian": GaussianJL, "srht": SRHT}


def make_jl(kind: str, n_components: int, random_state: object = None) -> _JLBase:
    """An unfitted JL transform by name.

    Parameters
    ----------
    kind : {"rademacher", "sparse", "gaussian", "srht"}
        The transform (:data:`JL_TRANSFORMS`).
    n_components : int
        k, the output dimension.
    random_state : None, int, SeedSequence or numpy.random.Generator, default=None
        The source of Phi.

    Returns
    -------
    RademacherJL, SparseJL, GaussianJL or SRHT
        The unfitted transform.

    Examples
    --------
    >>> from dpkernels.jl import make_jl
    >>> make_jl("srht", 8, random_state=0)
    SRHT(n_components=8, random_state=0)
    """
    if kind not in JL_TRANSFORMS:
        raise ValueError(f"projection must be one of {sorted(JL_TRANSFORMS)}, got {kind!r}")
    return JL_TRANSFORMS[kind](n_components=n_components, random_state=random_state)
