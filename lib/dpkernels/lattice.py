"""Floating-point-safe noise: exact rounding of a continuous mechanism's output to a grid.

Why.  ``w + lambda * log(2U)`` in double precision is not the Laplace mechanism: the set of doubles it can
reach depends on ``w``, and a test of reachability tells neighbouring data sets apart whatever epsilon says
(Mironov 2012, "On significance of the least significant bits for differential privacy").

Construction.  Let ``M(D) = c_D + N`` be a continuous mechanism (Laplace, Chaudhuri et al.'s Gamma-norm noise,
Gaussian, Gaussian with a covariance ``sigma^2 A A'``) computed in exact real arithmetic, and ``g = 2^j`` a grid
spacing fixed from public quantities only (the noise scale).  The release is

    k = round((c_D + N) / g)  (an integer vector),  released as  g * k  (float64).

``k`` is a deterministic function of the exact real output, so it inherits the continuous mechanism's
(epsilon, delta) guarantee *exactly* (post-processing); ``g * k`` is a function of ``k``.  No epsilon is spent
on the construction and every calibration of the papers applies unchanged.  The cost is the rounding, at most
g / 2 per coordinate, with g about 2^-16 times the noise scale.

Computing ``k`` exactly.  Every noise variable is a real function of uniform random reals U; each U is
represented by random 64-bit words (U lies in [k 2^-64, (k + 1) 2^-64) given the first word; further words
narrow it).  The real output is enclosed in a ball (mid, rad) computed in float64 with rigorous error radii
(:class:`_Ball`: every operation adds a bound on its rounding error, generously above the accuracy of numpy's
float64 ``log``, ``sqrt``, ``cos``, ``sin``, which ``tests/test_lattice.py`` measures against mpmath).  When a
ball lies inside one grid cell, ``k`` is determined.  When it straddles a cell boundary (probability about
2^-18 per coordinate), more random words are drawn for the uniforms involved and the value is recomputed in
mpmath's rigorous interval arithmetic at growing precision until the cell is determined.  The law of ``k`` is
therefore exactly the law of the rounded continuous mechanism, up to the quality of the pseudo-random bits
(the assumption every DP library makes about its random source).

Assumptions stated by the releases: the center ``c_D`` is the float64 vector the mechanism computes (its
sensitivity is the mechanism's business); ``|c_D| / g < 2^51`` (else ``ValueError``: the integers would not
be exact).

Timing (Jin et al., IEEE S&P 2022, recovered discrete noise from the running time of samplers that loop longer for
larger outputs).  No sampler here loops on the value it returns: the float path does the same vectorised work for
every draw (``benchmarks/lattice_timing.py``: 10^5 draws per sampler, median time per decile of ``|noise|`` within 0.2%,
Spearman correlation of time and ``|noise|`` below 0.002).  The one value-dependent branch is the refinement: a coordinate
whose float ball straddles a cell boundary is recomputed in mpmath (a one-coordinate Laplace release then takes about
2.5 times as long).  Its probability is about 2 rad / g with rad ~ 2^-46 ``|c + N|`` + 2^-44 ``|N|``, until the uniform's
2^-64 resolution dominates in the far tail (a Laplace noise beyond about 20 scales; always beyond 44 scales, or a
Gaussian radius beyond 9.4): averaged over the noise, about 1e-8 per coordinate for a centre near 0, 2e-7 at 100
noise scales, 2e-5 at 10^4 (``benchmarks/results/lattice_timing.json``).  So a release's running time shows which
coordinates refined, which depends weakly on the noise's magnitude: with its running time, a release is
(epsilon, delta + (1 + e^epsilon) P[any refinement])-DP, P[any refinement] at most the sum over its coordinates.  Not
constant time: do not expose the timing of a release when that sum is not far below 1/n (millions of coordinates,
e.g. a long noisy gradient descent, approach 1e-2).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from fractions import Fraction

import numpy as np
from numpy.typing import ArrayLike, NDArray

from dpkernels._validation import check_positive, check_random_state

__all__ = [
    "GRID_BITS",
    "grid_for",
    "laplace_lattice",
    "gamma_norm_lattice",
    "gamma_norm_enclosure",
    "gaussian_lattice",
    "ExactNormals",
    "affine_gaussian_lattice",
    "exact_noisy_argmax",
    "exponential_mechanism_exact",
]

Array = NDArray[np.float64]

#: The grid spacing is the largest power of two <= scale * 2^-GRID_BITS.
GRID_BITS = 16
#: Relative error radius added after a correctly rounded float64 operation (+, -, *, /, sqrt): 2^-46 is 128
#: times the 2^-53 bound of IEEE 754 round-to-nearest.
_REL_BASIC = 2.0**-46
#: Relative (and, for cos/sin, absolute) radius after numpy's float64 log, cos, sin: 2^-44 is 64 times the
#: 4-ulp bound (4 x 2^-52 = 2^-50) numpy documents for its SIMD paths (measured: about 1 ulp).
_REL_TRANS = 2.0**-44
#: Absolute floor of every radius (covers subnormal results).
_ABS_FLOOR = 2.0**-1000
_FSUM_MIN = 64  #: sums at least this long are computed with math.fsum (see _Ball.sum)
#: Largest ``|k|`` accepted, so that g * k and k +- 1/2 are exact in float64.
_K_MAX = 2.0**51
_WORD = 2**64


def grid_for(scale: float) -> float:
    """The grid spacing of a release whose noise has the given scale: 2^floor(log2(scale)) * 2^-GRID_BITS."""
    scale = check_positive(scale, "noise scale")
    return math.ldexp(1.0, math.floor(math.log2(scale)) - GRID_BITS)


# ----------------------------------------------------------------------------------------------
# random uniforms with lazily extended precision
# ----------------------------------------------------------------------------------------------
class _Uniforms:
    """Uniform reals on (0, 1), each known through its first 64-bit word and, on demand, further words."""

    def __init__(self, rng: np.random.Generator, n: int = 0) -> None:
        self.rng = rng
        self.words = np.empty(0, dtype=np.uint64)
        self.ext: dict[int, list[int]] = {}
        if n:
            self.draw(n)

    def draw(self, n: int) -> NDArray[np.int64]:
        """Append ``n`` uniforms; returns their indices."""
        start = len(self.words)
        new = self.rng.integers(0, np.iinfo(np.uint64).max, size=int(n), dtype=np.uint64, endpoint=True)
        self.words = np.concatenate([self.words, new])
        return np.arange(start, start + int(n))

    def __len__(self) -> int:
        return len(self.words)

    def ball(self, idx: NDArray[np.int64] | slice | None = None) -> "_Ball":
        """Float64 balls containing the uniforms (from their first word)."""
        k = self.words if idx is None else self.words[idx]
        small = k < np.uint64(2**53)
        top = (k >> np.uint64(11)).astype(np.float64)  # exact: < 2^53
        kf = np.where(small, k, 0).astype(np.float64)  # exact where small
        lo = np.where(small, kf * 2.0**-64, top * 2.0**-53)
        hi = np.where(small, (kf + 1.0) * 2.0**-64, (top + 1.0) * 2.0**-53)
        # (lo + hi) / 2 may round by half an ulp of a number below 1: a radius of hi - lo covers it
        return _Ball(0.5 * (lo + hi), (hi - lo) + _ABS_FLOOR)

    def interval(self, i: int, level: int, iv: object) -> object:
        """The mpmath interval of uniform ``i`` from ``level + 1`` words (drawing the extra words if needed)."""
        ext = self.ext.setdefault(int(i), [])
        while len(ext) < level:
            ext.append(int(self.rng.integers(0, np.iinfo(np.uint64).max, dtype=np.uint64, endpoint=True)))
        num = int(self.words[i])
        for w in ext[:level]:
            num = num * _WORD + w
        den = _WORD ** (level + 1)
        # exact: den is a power of two and the caller's precision exceeds the numerator's bits
        return iv.mpf([iv.mpf(num) / den, iv.mpf(num + 1) / den])


# ----------------------------------------------------------------------------------------------
# float64 ball arithmetic with rigorous radii
# ----------------------------------------------------------------------------------------------
@dataclass
class _Ball:
    """Arrays ``mid`` and ``rad``: the true value lies in [mid - rad, mid + rad]."""

    mid: Array
    rad: Array

    @staticmethod
    def exact(x: ArrayLike) -> "_Ball":
        x = np.asarray(x, dtype=np.float64)
        return _Ball(x, np.zeros_like(x))

    def _round(self, mid: Array, rad: Array, rel: float = _REL_BASIC) -> "_Ball":
        return _Ball(mid, rad + np.abs(mid) * rel + _ABS_FLOOR)

    def __add__(self, o: "_Ball") -> "_Ball":
        return self._round(self.mid + o.mid, self.rad + o.rad)

    def __sub__(self, o: "_Ball") -> "_Ball":
        return self._round(self.mid - o.mid, self.rad + o.rad)

    def __mul__(self, o: "_Ball") -> "_Ball":
        return self._round(self.mid * o.mid, np.abs(self.mid) * o.rad + np.abs(o.mid) * self.rad + self.rad * o.rad)

    def scale(self, c: float) -> "_Ball":
        """c * self for an exact float c."""
        return self._round(c * self.mid, abs(c) * self.rad)

    def __truediv__(self, o: "_Ball") -> "_Ball":
        """``|a/b - m_a/m_b|`` <= (``|m_a|`` r_b + ``|m_b|`` r_a) / (``|m_b|`` (``|m_b|`` - r_b)); infinite when 0 is in the divisor."""
        low = np.abs(o.mid) - o.rad
        with np.errstate(divide="ignore", invalid="ignore"):
            rad = (np.abs(self.mid) * o.rad + np.abs(o.mid) * self.rad) / (np.abs(o.mid) * low)
            mid = self.mid / o.mid
        return self._round(mid, np.where(low > 0, rad * (1.0 + 2.0**-40), np.inf))

    def neg_log(self) -> "_Ball":
        """-log(x) for x in (0, 1]; ``|d/dx|`` = 1/x <= 1/(mid - rad)."""
        low = self.mid - self.rad
        with np.errstate(divide="ignore", invalid="ignore"):
            lip = np.where(low > 0, 1.0 / low, np.inf)
            mid = -np.log(self.mid)
        return _Ball(mid, lip * self.rad * (1.0 + 2.0**-40) + np.abs(mid) * _REL_TRANS + 2.0**-70 + _ABS_FLOOR)

    def sqrt(self) -> "_Ball":
        low = self.mid - self.rad
        with np.errstate(divide="ignore", invalid="ignore"):
            mid = np.sqrt(self.mid)
            lip = np.where(low > 0, 0.5 / np.sqrt(np.maximum(low, 0.0)), np.inf)
        # near zero the Lipschitz bound fails: bound |sqrt(x) - sqrt(m)| <= sqrt(rad) there
        rad = np.minimum(lip * self.rad * (1.0 + 2.0**-40), np.sqrt(self.rad) * (1.0 + 2.0**-40) + 2.0**-500)
        return self._round(mid, rad)

    def cos_2pi(self) -> "_Ball":
        """cos(2 pi x): 2 pi is not a double, so the angle carries a radius of its own."""
        ang = 2.0 * math.pi * self.mid
        rad_ang = 2.0 * math.pi * self.rad * (1.0 + 2.0**-40) + np.abs(ang) * 2.0**-50 + _ABS_FLOOR
        return _Ball(np.cos(ang), rad_ang + _REL_TRANS)

    def sin_2pi(self) -> "_Ball":
        ang = 2.0 * math.pi * self.mid
        rad_ang = 2.0 * math.pi * self.rad * (1.0 + 2.0**-40) + np.abs(ang) * 2.0**-50 + _ABS_FLOOR
        return _Ball(np.sin(ang), rad_ang + _REL_TRANS)

    def sum(self, axis: int) -> "_Ball":
        """Sum along ``axis``.  Short sums: numpy's, with the recursive-summation error bound gamma_n sum ``|x_i|``.
        Long ones (n >= ``_FSUM_MIN``): ``math.fsum``, correctly rounded (error <= 2^-53 ``|sum|``), so that the radius
        does not grow with n (at d = 100,000 the gamma_n bound made almost every Gamma-norm release ambiguous and
        sent it to the mpmath refinement)."""
        n = self.mid.shape[axis]
        gamma = (n + 1) * 2.0**-53 / (1.0 - (n + 1) * 2.0**-53)
        if n >= _FSUM_MIN:
            mid = np.apply_along_axis(math.fsum, axis, self.mid)
            rad_sum = self.rad.sum(axis=axis) * (1.0 + 2.0 * gamma)  # a float sum of non-negative terms, as an upper bound
            rad = (rad_sum + 2.0**-53 * np.abs(mid)) * (1.0 + 2.0**-50) + _ABS_FLOOR
        else:
            mid = self.mid.sum(axis=axis)
            rad = self.rad.sum(axis=axis) * (1.0 + 2.0**-40) + gamma * 2.0**6 * np.abs(self.mid).sum(axis=axis) + _ABS_FLOOR
        return _Ball(mid, rad)

    def take(self, idx: object) -> "_Ball":
        return _Ball(self.mid[idx], self.rad[idx])


# ----------------------------------------------------------------------------------------------
# rounding to the grid, with rigorous refinement
# ----------------------------------------------------------------------------------------------
def _cells(lo_over_g: Array, hi_over_g: Array) -> tuple[NDArray[np.int64], NDArray[np.bool_]]:
    """k = round(x / g) when [lo, hi] lies strictly inside one cell [k - 1/2, k + 1/2); else undetermined."""
    with np.errstate(invalid="ignore"):
        k = np.rint(0.5 * (lo_over_g + hi_over_g))
        ok = np.isfinite(k) & (k - 0.5 < lo_over_g) & (hi_over_g < k + 0.5)
    return np.where(ok, k, 0).astype(np.int64), ok


def _check_range(center: Array, grid: float) -> None:
    big = np.abs(center) / grid
    if np.any(big >= _K_MAX / 2):  # the message names only public constants: the value is (a function of) the data
        raise ValueError(
            f"a released value is 2^49 or more grid steps from 0 (grid {grid:.3g}); the exact release needs fewer than "
            f"2^50 (values more than about 2^34 noise scales from zero cannot be released on the grid)"
        )


def _refine_round(value_interval: Callable[[int, object], object], grid: float, max_level: int = 8) -> int:
    """round(x / g) for a real x given by ``value_interval(level, iv)`` (mpmath interval from level + 1 words)."""
    from mpmath import iv

    g = iv.mpf(grid)
    for level in range(1, max_level + 1):
        iv.prec = 64 * (level + 1) + 128
        x = value_interval(level, iv) / g
        lo, hi = float(x.a), float(x.b)
        # the float endpoints locate x to within a rounding: every cell they allow is a candidate (one below the
        # lower end's included: float(x.a) may round up onto a boundary k - 1/2 that x.a lies below), and the cell is
        # decided by exact mpmath comparisons with its boundaries (cells [k - 1/2, k + 1/2), as round() = floor(. + 1/2))
        for k in range(math.floor(lo + 0.5) - 1, math.floor(hi + 0.5) + 2):
            if x.a >= iv.mpf(k) - 0.5 and x.b < iv.mpf(k) + 0.5:
                return int(k)
    raise RuntimeError("could not determine the grid cell of a release (more than 512 random bits per uniform)")


def _release(center: Array, noise: _Ball, grid: float, refine: Callable[[int], int]) -> Array:
    """g * round((center + noise) / g) with refinement of undetermined coordinates (``refine(i)`` returns k_i)."""
    c = _Ball.exact(center)
    total = c + noise
    k, ok = _cells((total.mid - total.rad) / grid, (total.mid + total.rad) / grid)
    for i in np.flatnonzero(~ok):
        k[i] = refine(int(i))
    return grid * k.astype(np.float64)


def laplace_lattice(center: ArrayLike, scale: float, random_state: object = None, grid: float | None = None) -> Array:
    """``center`` + i.i.d. Laplace(0, scale), exactly rounded to the grid (default :func:`grid_for` (scale)).

    Each coordinate is s * E with a random sign s and E = -scale * log(U).  Guarantee: exactly that of the
    continuous Laplace mechanism (post-processing).  Any shape; returns float64 multiples of the grid.
    """
    scale = check_positive(scale, "scale")
    rng = check_random_state(random_state)
    center = np.asarray(center, dtype=np.float64)
    grid = grid_for(scale) if grid is None else check_positive(grid, "grid")
    _check_range(center, grid)
    flat = center.ravel()
    n = flat.size
    u = _Uniforms(rng, n)
    sign = np.where(rng.integers(0, 2, size=n) == 1, 1.0, -1.0)
    e = u.ball().neg_log().scale(scale)
    noise = _Ball(sign * e.mid, e.rad)

    def refine(i: int) -> int:
        return _refine_round(lambda level, iv: iv.mpf(float(flat[i])) - float(sign[i]) * scale * iv.log(u.interval(i, level, iv)), grid)

    return _release(flat, noise, grid, refine).reshape(center.shape)


def gamma_norm_lattice(center: ArrayLike, beta: float, random_state: object = None, grid: float | None = None) -> Array:
    """``center`` + b with density proportional to exp(-beta ||b||_2) (Chaudhuri et al. Eq. 4), exactly rounded.

    ``center`` of shape (d,) or (m, d) (m independent releases).  ||b|| = (1/beta) sum_{j<=d} -log U_j
    (Gamma(d, 1/beta)), the direction is g / ||g|| with g standard normal (Box-Muller).  Guarantee: that of the
    continuous mechanism (post-processing).  Default grid: :func:`grid_for` (1 / beta).
    """
    beta = check_positive(beta, "beta")
    rng = check_random_state(random_state)
    center = np.asarray(center, dtype=np.float64)
    single = center.ndim == 1
    C = np.atleast_2d(center)
    if C.ndim != 2:
        raise ValueError("center must have shape (d,) or (m, d)")
    m, d = C.shape
    grid = grid_for(1.0 / beta) if grid is None else check_positive(grid, "grid")
    _check_range(C, grid)
    pairs = (d + 1) // 2
    u = _Uniforms(rng, m * (d + 2 * pairs))
    ub = u.ball()
    rad_u = ub.take(np.s_[: m * d])
    radius = _Ball(rad_u.mid.reshape(m, d), rad_u.rad.reshape(m, d)).neg_log().sum(axis=1).scale(1.0 / beta)
    z = _box_muller(ub.take(np.s_[m * d:]), m, pairs)  # (m, 2 * pairs)
    z = _Ball(z.mid[:, :d], z.rad[:, :d])
    norm = (z * z).sum(axis=1).sqrt()
    r_over_norm = radius / norm
    noise = z * _Ball(np.repeat(r_over_norm.mid[:, None], d, axis=1), np.repeat(r_over_norm.rad[:, None], d, axis=1))
    total = _Ball.exact(C) + noise
    k, ok = _cells((total.mid - total.rad) / grid, (total.mid + total.rad) / grid)
    for row in np.flatnonzero(~ok.all(axis=1)):
        todo = np.flatnonzero(~ok[row])
        k[row, todo] = _refine_gamma_row(u, C[row], beta, grid, row, m, d, pairs, todo)
    out = grid * k.astype(np.float64)
    return out[0] if single else out


def gamma_norm_enclosure(m: int, d: int, beta: float, random_state: object = None,
                         rel_tol: float = 2.0**-40) -> tuple[Array, Array]:
    """``m`` draws b (rows) with density proportional to exp(-beta ||b||_2), as float64 balls: ``(mid, rad)`` with the
    exact real draw within ``rad`` of ``mid`` componentwise.

    The draws are the same real functions of random bits as in :func:`gamma_norm_lattice` (Gamma(d, 1/beta) radius,
    Box-Muller direction); nothing is rounded to a grid.  A row whose float enclosure is wider than ``rel_tol`` x
    (||mid|| + 1/beta) (a normal near 0 makes the direction's radius large; d = 1 shows it) is recomputed in mpmath's
    interval arithmetic from more random bits of the same uniforms, so every row meets that width and the law of the
    draws is unchanged.  A mechanism that feeds ``mid`` to a deterministic float computation couples its output to
    that of the exact real mechanism within a computable distance (see :mod:`dpkernels.argmin_release`).
    """
    beta = check_positive(beta, "beta")
    m, d = int(m), int(d)
    if m < 1 or d < 1:
        raise ValueError(f"need m >= 1 and d >= 1, got m={m}, d={d}")
    rng = check_random_state(random_state)
    pairs = (d + 1) // 2
    u = _Uniforms(rng, m * (d + 2 * pairs))
    ub = u.ball()
    rad_u = ub.take(np.s_[: m * d])
    radius = _Ball(rad_u.mid.reshape(m, d), rad_u.rad.reshape(m, d)).neg_log().sum(axis=1).scale(1.0 / beta)
    z = _box_muller(ub.take(np.s_[m * d:]), m, pairs)
    z = _Ball(z.mid[:, :d], z.rad[:, :d])
    norm = (z * z).sum(axis=1).sqrt()
    r_over_norm = radius / norm
    noise = z * _Ball(np.repeat(r_over_norm.mid[:, None], d, axis=1), np.repeat(r_over_norm.rad[:, None], d, axis=1))
    mid, rad = noise.mid.copy(), noise.rad.copy()
    with np.errstate(invalid="ignore"):
        wide = ~(np.linalg.norm(rad, axis=1) <= rel_tol * (np.linalg.norm(mid, axis=1) + 1.0 / beta))
    for row in np.flatnonzero(wide):
        mid[row], rad[row] = _refine_gamma_enclosure(u, beta, row, m, d, pairs, rel_tol)
    return mid, rad


def _refine_gamma_enclosure(u: _Uniforms, beta: float, row: int, m: int, d: int, pairs: int, rel_tol: float
                            ) -> tuple[Array, Array]:
    """One row of :func:`gamma_norm_enclosure` in mpmath intervals, at growing precision until narrow enough."""
    from mpmath import iv

    for level in range(1, 9):
        iv.prec = 64 * (level + 1) + 128
        radius = sum((-iv.log(u.interval(row * d + j, level, iv)) for j in range(d)), iv.mpf(0)) / beta
        z = _mp_normals(u, m * d + row * 2 * pairs, d, level, iv)
        norm = iv.sqrt(sum((zj * zj for zj in z), iv.mpf(0)))
        vals = [radius * zj / norm for zj in z]
        mid = np.array([float(v.mid) for v in vals])
        # the float midpoint is within half an ulp of the interval's midpoint: add it to the radius
        rad = np.array([float(v.delta) / 2 for v in vals]) * (1.0 + 2.0**-40) + np.abs(mid) * 2.0**-52 + _ABS_FLOOR
        if np.linalg.norm(rad) <= rel_tol * (np.linalg.norm(mid) + 1.0 / beta):
            return mid, rad
    raise RuntimeError("could not enclose a Gamma-norm draw (more than 512 random bits per uniform)")


def _box_muller(ub: _Ball, m: int, pairs: int) -> _Ball:
    """Standard normals from ``m * 2 * pairs`` uniforms laid out as (m, pairs, 2): R cos, R sin."""
    mid = ub.mid.reshape(m, pairs, 2)
    rad = ub.rad.reshape(m, pairs, 2)
    r = _Ball(mid[:, :, 0], rad[:, :, 0]).neg_log().scale(2.0).sqrt()
    th = _Ball(mid[:, :, 1], rad[:, :, 1])
    z1, z2 = r * th.cos_2pi(), r * th.sin_2pi()
    return _Ball(np.stack([z1.mid, z2.mid], axis=2).reshape(m, 2 * pairs), np.stack([z1.rad, z2.rad], axis=2).reshape(m, 2 * pairs))


def _mp_normals(u: _Uniforms, first: int, count: int, level: int, iv: object) -> list[object]:
    """``count`` standard normals as mpmath intervals from the uniforms starting at index ``first`` (pairs)."""
    out = []
    for p in range((count + 1) // 2):
        u1 = u.interval(first + 2 * p, level, iv)
        u2 = u.interval(first + 2 * p + 1, level, iv)
        r = iv.sqrt(-2 * iv.log(u1))
        th = 2 * iv.pi * u2
        out += [r * iv.cos(th), r * iv.sin(th)]
    return out[:count]


def _refine_gamma_row(u: _Uniforms, c: Array, beta: float, grid: float, row: int, m: int, d: int, pairs: int,
                      todo: NDArray[np.intp]) -> NDArray[np.int64]:
    """The cells of coordinates ``todo`` of one Gamma-norm release (the others were decided by the float balls); the
    radius and the norm need every coordinate in interval arithmetic."""
    from mpmath import iv

    for level in range(1, 9):
        iv.prec = 64 * (level + 1) + 128
        radius = sum((-iv.log(u.interval(row * d + j, level, iv)) for j in range(d)), iv.mpf(0)) / beta
        z = _mp_normals(u, m * d + row * 2 * pairs, d, level, iv)
        norm = iv.sqrt(sum((zj * zj for zj in z), iv.mpf(0)))
        g = iv.mpf(grid)
        ks, ok = [], True
        for j in todo:
            x = (iv.mpf(float(c[j])) + radius * z[j] / norm) / g
            kj = math.floor(float(x.a) + 0.5)
            if not (x.a >= iv.mpf(kj) - 0.5 and x.b < iv.mpf(kj) + 0.5):
                ok = False
                break
            ks.append(kj)
        if ok:
            return np.array(ks, dtype=np.int64)
    raise RuntimeError("could not determine the grid cell of a release")


def gaussian_lattice(center: ArrayLike, sigma: float, random_state: object = None, grid: float | None = None) -> Array:
    """``center`` + i.i.d. N(0, sigma^2), exactly rounded to the grid (default :func:`grid_for` (sigma)).

    Guarantee: that of the continuous Gaussian mechanism (post-processing).  Any shape.
    """
    sigma = check_positive(sigma, "sigma")
    rng = check_random_state(random_state)
    center = np.asarray(center, dtype=np.float64)
    normals = ExactNormals(rng)
    normals.draw(center.size)
    A = None  # identity
    return affine_gaussian_lattice(center.ravel(), A, sigma, normals, np.arange(center.size), grid=grid).reshape(center.shape)


class ExactNormals:
    """A growing vector z of i.i.d. N(0, 1) variables, each an exact real function of random bits (Box-Muller).

    ``draw(n)`` appends n variables; :meth:`ball` encloses them in float64 balls; :meth:`interval` gives an
    mpmath interval at higher precision (drawing further random bits when needed, always the same real).
    A holder of an ``ExactNormals`` holds the noise itself: it must never be released (see
    :class:`dpkernels.mechanisms.base.ReleaseMixin`).
    """

    def __init__(self, random_state: object = None) -> None:
        self._u = _Uniforms(check_random_state(random_state))
        self._n = 0
        self._ball: _Ball | None = None
        self._blocks: list[tuple[int, int, int]] = []  # (first variable, first uniform, count)

    def __len__(self) -> int:
        return self._n

    def draw(self, n: int) -> NDArray[np.int64]:
        """Append ``n`` variables; returns their indices."""
        n = int(n)
        pairs = (n + 1) // 2
        start_u = len(self._u)
        self._u.draw(2 * pairs)
        ub = self._u.ball(np.arange(start_u, start_u + 2 * pairs))
        z = _box_muller(ub, 1, pairs)
        new = _Ball(z.mid[0, :n], z.rad[0, :n])
        self._blocks.append((self._n, start_u, n))
        self._ball = new if self._ball is None else _Ball(np.concatenate([self._ball.mid, new.mid]), np.concatenate([self._ball.rad, new.rad]))
        idx = np.arange(self._n, self._n + n)
        self._n += n
        return idx

    def ball(self) -> _Ball:
        if self._ball is None:
            return _Ball(np.empty(0), np.empty(0))
        return self._ball

    def interval(self, i: int, level: int, iv: object) -> object:
        for first, start_u, count in self._blocks:
            if first <= i < first + count:
                j = i - first
                return _mp_normals(self._u, start_u + 2 * (j // 2), 2, level, iv)[j % 2]
        raise IndexError(i)


def affine_gaussian_lattice(center: ArrayLike, A: Array | None, sigma: float, normals: ExactNormals,
                            cols: NDArray[np.int64], grid: float | None = None) -> Array:
    """round((center + sigma * A z[cols]) / g) * g for the exact normals z (A = None: the identity).

    The Gaussian release N(center, sigma^2 A A'), exactly rounded: a correlated noise (e.g. a Gaussian process
    on a finite set of points through a Cholesky factor A) is rounded after it is added, so the guarantee is
    that of the continuous mechanism with covariance sigma^2 A A' (A taken as the exact real matrix it holds).
    Float error of the product A z is bounded componentwise by ``gamma_m |A| |z|`` (any summation order).
    """
    sigma = check_positive(sigma, "sigma")
    center = np.asarray(center, dtype=np.float64)
    grid = grid_for(sigma) if grid is None else check_positive(grid, "grid")
    _check_range(center, grid)
    zb = normals.ball().take(cols)
    if A is None:
        if len(cols) != center.shape[0]:
            raise ValueError("identity covariance needs one normal per coordinate")
        noise = zb.scale(sigma)
        Arows = None
    else:
        A = np.asarray(A, dtype=np.float64)
        m = A.shape[1]
        mid = A @ zb.mid
        gamma = (m + 2) * 2.0**-53 / (1.0 - (m + 2) * 2.0**-53)
        absA = np.abs(A)
        rad = absA @ zb.rad * (1.0 + 2.0**-40) + gamma * 2.0**6 * (absA @ (np.abs(zb.mid) + zb.rad)) + _ABS_FLOOR
        noise = _Ball(mid, rad).scale(sigma)
        Arows = A

    def refine(i: int) -> int:
        def value(level: int, iv: object) -> object:
            if Arows is None:
                return iv.mpf(float(center[i])) + sigma * normals.interval(int(cols[i]), level, iv)
            acc = iv.mpf(0)
            for j in np.flatnonzero(Arows[i]):
                acc += iv.mpf(float(Arows[i, j])) * normals.interval(int(cols[j]), level, iv)
            return iv.mpf(float(center[i])) + sigma * acc

        return _refine_round(value, grid)

    return _release(center, noise, grid, refine)


# ----------------------------------------------------------------------------------------------
# selection: argmax of exactly perturbed scores (report noisy max, exponential mechanism)
# ----------------------------------------------------------------------------------------------
def exact_noisy_argmax(scores: ArrayLike, noise: str, scale: float, random_state: object = None,
                       score_multiplier: float = 1.0) -> int:
    """argmax_i (c * s_i + N_i) computed exactly, with N_i i.i.d. ``"gumbel"`` (scale) or ``"laplace"`` (scale).

    ``c * s_i`` is enclosed as a real product of the two doubles.  The argmax of the exact reals is returned:
    when float balls cannot separate the leader from a runner-up, the contenders are refined in mpmath.
    Gumbel noise with scale 1 and c = eps / (2 Delta) is the exponential mechanism (McSherry and Talwar 2007);
    Laplace noise is report-noisy-max.
    """
    s = np.asarray(scores, dtype=np.float64)
    if s.ndim != 1 or s.size == 0 or not np.all(np.isfinite(s)):
        raise ValueError("scores must be a non-empty 1-d array of finite values")
    scale = check_positive(scale, "scale")
    if noise not in ("gumbel", "laplace"):
        raise ValueError("noise must be 'gumbel' or 'laplace'")
    rng = check_random_state(random_state)
    n = s.size
    u = _Uniforms(rng, n)
    sign = np.where(rng.integers(0, 2, size=n) == 1, 1.0, -1.0) if noise == "laplace" else None
    base = _Ball.exact(s).scale(float(score_multiplier))
    e = u.ball().neg_log()
    if noise == "gumbel":
        nb = e.neg_log().scale(scale)  # -log(-log U)
    else:
        es = e.scale(scale)
        nb = _Ball(sign * es.mid, es.rad)
    tot = base + nb
    lo, hi = tot.mid - tot.rad, tot.mid + tot.rad
    lead = int(np.argmax(lo))
    contenders = np.flatnonzero(hi >= lo[lead])
    if len(contenders) == 1:
        return lead
    from mpmath import iv

    for level in range(1, 9):
        iv.prec = 64 * (level + 1) + 128
        vals = {}
        for i in contenders:
            ui = u.interval(int(i), level, iv)
            x = -iv.log(-iv.log(ui)) * scale if noise == "gumbel" else -float(sign[i]) * scale * iv.log(ui)
            vals[int(i)] = iv.mpf(float(s[i])) * float(score_multiplier) + x
        best = max(vals, key=lambda i: vals[i].a)
        if all(vals[best].a > vals[j].b for j in vals if j != best):
            return best
        contenders = np.array([j for j in vals if vals[j].b >= vals[best].a])
    raise RuntimeError("could not separate the noisy maximum")


def exponential_mechanism_exact(utilities: ArrayLike, epsilon: float, sensitivity: float = 1.0,
                                random_state: object = None) -> int:
    """The exponential mechanism (P(i) proportional to exp(eps u_i / (2 Delta))), sampled exactly: the argmax of
    eps u_i / (2 Delta) + Gumbel_i over exact reals (Gumbel-max trick).  Pure eps-DP for utilities of sensitivity
    Delta, with no floating-point loss."""
    epsilon = check_positive(epsilon, "epsilon")
    sensitivity = check_positive(sensitivity, "sensitivity")
    u = np.asarray(utilities, dtype=np.float64)
    # the realised multiplier is the double c; it must not exceed eps / (2 Delta) as a real number
    c = epsilon / (2.0 * sensitivity)
    while Fraction(c) * 2 * Fraction(sensitivity) > Fraction(epsilon):
        c = float(np.nextafter(c, 0.0))
    return exact_noisy_argmax(u, "gumbel", 1.0, random_state, score_multiplier=c)
