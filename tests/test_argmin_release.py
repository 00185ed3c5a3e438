"""The floating-point-safe argmin release (dpkernels.argmin_release) and its certificate (dpkernels.solvers.certify).

Each bound the privacy argument rests on is checked against exact arithmetic (mpmath at 60 digits, Fractions):
numpy's exp accuracy (the one assumption), the gradient's componentwise error bound, the noise enclosure, the
certified distance to the exact minimiser, the exact rounding to the shifted grid, and the public constants.
"""

from __future__ import annotations

import math
from fractions import Fraction

import mpmath
import numpy as np
import pytest
from scipy import sparse, stats

from dpkernels import lattice
from dpkernels.argmin_release import ENCLOSURE_REL, TIER_SURVIVAL, plan_argmin_release, shifted_grid_round
from dpkernels.losses import make_loss
from dpkernels.solvers.certify import EXP_REL, certified_gradient_norm, gradient_with_bound, tree_sum
from dpkernels.solvers.smooth import Design

mpmath.mp.dps = 60


def test_numpy_exp_is_as_accurate_as_assumed():
    """The certificate assumes numpy's float64 exp within EXP_REL (2^-48) relative; measured: within 4 ulp (2^-50)."""
    rng = np.random.default_rng(0)
    x = np.concatenate([-rng.exponential(5.0, 20000), -rng.uniform(0, 745, 2000), -np.abs(rng.normal(0, 1e-3, 2000))])
    got = np.exp(x)
    normal = got >= 2.0**-1022
    worst = max(abs(mpmath.mpf(float(g)) / mpmath.exp(mpmath.mpf(float(v))) - 1) for v, g in zip(x[normal], got[normal]))
    assert float(worst) <= 4 * 2.0**-52 <= EXP_REL
    # subnormal results: an absolute error of at most one subnormal ulp (the certificate adds 2^-1070 absolute)
    worst_abs = max(abs(mpmath.mpf(float(g)) - mpmath.exp(mpmath.mpf(float(v)))) for v, g in zip(x[~normal], got[~normal]))
    assert float(worst_abs) <= 2.0**-1074


def test_tree_sum_error_is_within_gamma_height():
    rng = np.random.default_rng(1)
    for m in (1, 2, 3, 7, 100, 1023, 1025):
        P = rng.normal(size=(m, 3)) * np.exp(rng.normal(0, 5, size=(m, 1)))  # wide dynamic range
        exact = [math.fsum(P[:, j]) for j in range(3)]
        S, h = tree_sum(P.copy())
        assert h == (math.ceil(math.log2(m)) if m > 1 else 0)
        bound = h * 2.0**-53 / (1 - h * 2.0**-53) * np.abs(P).sum(axis=0)
        assert np.all(np.abs(S - exact) <= bound)


def _exact_gradient(A, y, w_row, loss, lam, lin, W):
    """The exact real gradient at the float point W (mpmath, 60 digits)."""
    n = float(np.sum(w_row))
    out = []
    for k in range(W.shape[1]):
        g = [mpmath.mpf(0)] * A.shape[1]
        for i in range(A.shape[0]):
            z = mpmath.fsum(mpmath.mpf(float(A[i, j])) * mpmath.mpf(float(W[j, k])) for j in range(A.shape[1]))
            if loss.name == "logistic":
                v = -1 / (1 + mpmath.exp(z))
            elif loss.name == "huber":
                h = mpmath.mpf(loss.h)
                v = mpmath.mpf(0) if z > 1 + h else (mpmath.mpf(-1) if z < 1 - h else -(1 + h - z) / (2 * h))
            else:
                h, u = mpmath.mpf(loss.h), 1 - z
                v = mpmath.mpf(0) if z > 1 + h else (mpmath.mpf(-1) if z < 1 - h else u**3 / (4 * h**3) - 3 * u / (4 * h) - mpmath.mpf(1) / 2)
            for j in range(A.shape[1]):
                g[j] += mpmath.mpf(float(w_row[i])) * v * mpmath.mpf(float(A[i, j]))
        out.append([g[j] / n + mpmath.mpf(lam) * mpmath.mpf(float(W[j, k])) + mpmath.mpf(float(lin[j, k]))
                    for j in range(A.shape[1])])
    return np.array([[float(v) for v in col] for col in out]).T, out


@pytest.mark.parametrize("loss_name", ["logistic", "huber", "smoothed_hinge"])
@pytest.mark.parametrize("layout", ["dense", "weighted", "sparse"])
def test_gradient_bound_covers_the_exact_gradient(loss_name, layout):
    rng = np.random.default_rng(2)
    n, d, K = 40, 5, 3
    X = rng.normal(size=(n, d))
    X /= np.linalg.norm(X, axis=1)[:, None]
    X[rng.uniform(size=X.shape) < 0.3] = 0.0
    y = np.where(rng.uniform(size=n) < 0.5, 1.0, -1.0)
    weights = rng.integers(1, 5, size=n).astype(float) if layout == "weighted" else None
    design = Design(sparse.csr_matrix(X) if layout == "sparse" else X, y, weights,
                    sparse_mode=layout == "sparse")
    loss = make_loss(loss_name, 0.5)
    W = rng.normal(0, 3, size=(d, K)) * 10.0 ** rng.integers(-3, 2, size=(1, K))
    lin = rng.normal(0, 1e-2, size=(d, K))
    G, E = gradient_with_bound(design, loss, 0.01, lin, W)
    A = X * y[:, None]
    exact, _ = _exact_gradient(A, y, np.ones(n) if weights is None else weights, loss, 0.01, lin, W)
    assert np.all(np.abs(G - exact) <= E), np.max(np.abs(G - exact) / E)
    assert np.all(E < 1e-12)  # and the bound is not vacuous


def test_certificate_bounds_the_distance_to_the_exact_minimiser():
    """||f~ - f*(b~)|| <= ||grad||_upper / lam for a float64 solve, against a 60-digit Newton solve."""
    from dpkernels.solvers.smooth import solve_smooth_erm_batch

    rng = np.random.default_rng(3)
    n, d, lam = 25, 2, 0.05
    X = rng.normal(size=(n, d))
    X /= np.maximum(1, np.linalg.norm(X, axis=1))[:, None]
    y = np.where(X[:, 0] > 0, 1.0, -1.0)
    design = Design(X, y)
    loss = make_loss("logistic")
    b = rng.normal(0, 3, size=(1, d))
    sol = solve_smooth_erm_batch(design, None, loss, lam, b, gtol=1e-14)
    W = sol.coef.T
    cert = certified_gradient_norm(design, loss, lam, b.T / n, W)[0]
    A = [[mpmath.mpf(float(v)) for v in row] for row in X * y[:, None]]
    bb = [mpmath.mpf(float(v)) for v in (b[0] / n)]

    def grad(f):
        g = [mpmath.mpf(0)] * d
        for row in A:
            z = mpmath.fsum(a * fj for a, fj in zip(row, f))
            v = -1 / (1 + mpmath.exp(z))
            g = [gj + v * a / n for gj, a in zip(g, row)]
        return [gj + lam * fj + bj for gj, fj, bj in zip(g, f, bb)]

    f = mpmath.findroot(lambda *f: grad(list(f)), [mpmath.mpf(float(v)) for v in W[:, 0]])
    dist = float(mpmath.sqrt(mpmath.fsum((mpmath.mpf(float(W[j, 0])) - f[j]) ** 2 for j in range(d))))
    assert dist <= cert / lam
    assert cert < 1e-14  # the solve reaches the float64 floor


def test_enclosure_contains_the_exact_draw_and_meets_its_public_width():
    """The enclosure contains the exact real draw of the same random bits (recomputed here in mpmath), and every
    row's width is within the public bound for its tier (d = 1 exercises the mpmath refinement)."""
    for d in (1, 3):
        m, beta = 400, 0.7
        mid, rad = lattice.gamma_norm_enclosure(m, d, beta, np.random.default_rng(10 + d))
        width = np.linalg.norm(rad, axis=1)
        assert np.all(width <= 2.0**-40 * (np.linalg.norm(mid, axis=1) + 1 / beta))
        q = stats.gamma.isf(TIER_SURVIVAL[-1], d)
        assert np.all(width <= ENCLOSURE_REL * (q + 1) / beta)
        u = lattice._Uniforms(np.random.default_rng(10 + d), m * (d + 2 * ((d + 1) // 2)))
        pairs = (d + 1) // 2
        for row in range(0, m, 40):
            radius = sum(-mpmath.log(mpmath.mpf(int(u.words[row * d + j]) + 0.5) / 2**64) for j in range(d)) / beta
            z = []
            for p in range(pairs):
                u1 = mpmath.mpf(int(u.words[m * d + row * 2 * pairs + 2 * p]) + 0.5) / 2**64
                u2 = mpmath.mpf(int(u.words[m * d + row * 2 * pairs + 2 * p + 1]) + 0.5) / 2**64
                r = mpmath.sqrt(-2 * mpmath.log(u1))
                z += [r * mpmath.cos(2 * mpmath.pi * u2), r * mpmath.sin(2 * mpmath.pi * u2)]
            z = z[:d]
            norm = mpmath.sqrt(mpmath.fsum(v * v for v in z))
            exact = np.array([float(radius * v / norm) for v in z])
            # the words' midpoints stand for the exact uniforms; an unrefined row's ball covers every extension
            assert np.all(np.abs(exact - mid[row]) <= rad[row] + 1e-300) or width[row] < 1e-30


def test_shifted_grid_round_is_exact_and_a_uniform_dither():
    rng = np.random.default_rng(4)
    g = 2.0**-5
    F = np.concatenate([rng.normal(0, 3, 20000), (np.arange(200) + 0.5) * g])  # exact half-grid points included
    out = shifted_grid_round(F, g, np.random.default_rng(5))
    off_units = np.random.default_rng(5).integers(0, 2**52, size=F.shape, dtype=np.int64).astype(float) * 2.0**-52
    for i in list(range(0, 20000, 997)) + list(range(20000, 20200)):
        k = math.floor(Fraction(float(F[i])) / Fraction(g) - Fraction(float(off_units[i])) + Fraction(1, 2))
        assert out[i] == (k + off_units[i]) * g
    dither = (out - F) / g
    assert np.all((dither >= -0.5) & (dither <= 0.5))
    assert stats.kstest(dither[:20000], stats.uniform(loc=-0.5, scale=1).cdf).pvalue > 1e-3
    with pytest.raises(ValueError, match="power of two"):
        shifted_grid_round(F, 0.3)


def test_plan_constants_are_public_and_ordered():
    loss = make_loss("logistic")
    p = plan_argmin_release(5000, 20, 1.0, loss, 1e-3, 0.5)
    assert list(p.gradient_targets) == sorted(p.gradient_targets) and list(p.etas) == sorted(p.etas)
    assert 0 < p.delta0 < 1e-6 and p.delta(1.0) == pytest.approx((1 + math.e) * p.delta0)
    assert math.frexp(p.grid)[0] == 0.5  # a power of two
    scale = math.sqrt(21) / (0.5 * 5000 * 1e-3)
    assert scale / 128 < p.grid <= scale / 64
    # delta grows with n (a float64 gradient of n rows is certain to about n u) and shrinks with a larger grid
    assert plan_argmin_release(50000, 20, 1.0, loss, 1e-4, 0.5).delta0 > p.delta0
    with pytest.raises(RuntimeError, match="quantile"):
        p.tier(np.array([1e9]))
