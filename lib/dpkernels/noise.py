"""Noise samplers and selection mechanisms in float64, *idealized*: their laws hold in exact real arithmetic, not in
floating point (Mironov 2012: a float Laplace sample betrays its centre; a Gumbel argmax is not exactly the
exponential mechanism).  Every function takes a ``random_state``, and each warns with
:class:`~dpkernels.UnsafeNoiseWarning` unless the caller passes ``idealized=True`` (an explicit opt-in: Monte Carlo of
a law, or a mechanism fitted with ``noise="idealized"``, which has warned already).  For a release use the
floating-point-safe samplers of :mod:`dpkernels.lattice` (:func:`~dpkernels.lattice.laplace_lattice`,
:func:`~dpkernels.lattice.gamma_norm_lattice`, :func:`~dpkernels.lattice.gaussian_lattice`,
:func:`~dpkernels.lattice.exponential_mechanism_exact`, :func:`~dpkernels.lattice.exact_noisy_argmax`).

* :func:`laplace_vector`: i.i.d. Laplace(0, scale) coordinates (Rubinstein et al. Algorithms 2-3,
  Park Algorithm 1); density ``prod_i exp(-|b_i| / scale) / (2 scale)``.
* :func:`gamma_norm_vector`: Chaudhuri et al.'s Eq. (4), density proportional to exp(-beta ||b||_2).
  In polar coordinates the density of r = ||b|| is proportional to r^{d-1} exp(-beta r), i.e.
  r ~ Gamma(shape d, scale 1/beta), and the direction is uniform on the sphere, independent of r.
* :func:`gaussian_vector`: i.i.d. N(0, sigma^2).
* :func:`exponential_mechanism` (McSherry and Talwar 2007): pick i with probability proportional
  to exp(epsilon u_i / (2 sensitivity)); sampled with the Gumbel-max trick (exact in real arithmetic).
* :func:`report_noisy_max`: argmax_i (c_i + Laplace(scale)).
"""

from __future__ import annotations

import warnings

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy.special import logsumexp

from dpkernels._validation import UnsafeNoiseWarning, check_positive, check_random_state

__all__ = [
    "UNSAFE_SAMPLER_MESSAGE",
    "laplace_vector",
    "gamma_norm_vector",
    "uniform_direction",
    "gaussian_vector",
    "exponential_mechanism_probabilities",
    "exponential_mechanism",
    "report_noisy_max",
]


#: The warning of a float64 sampler called without ``idealized=True``.
UNSAFE_SAMPLER_MESSAGE = (
    "dpkernels.noise.{name} samples in float64: its law holds in exact arithmetic only, and a floating-point attack "
    "can tell neighbouring inputs apart (Mironov 2012), so its output is not a release.  Use dpkernels.lattice.{safe} "
    "for a release, or pass idealized=True where the idealized law is what you want (Monte Carlo, reproduction)")


def _warn_unless(idealized: bool, name: str, safe: str) -> None:
    if not idealized:
        warnings.warn(UNSAFE_SAMPLER_MESSAGE.format(name=name, safe=safe), UnsafeNoiseWarning, stacklevel=3)


def _shape(size: int | tuple[int, ...]) -> tuple[int, ...]:
    return (int(size),) if np.isscalar(size) else tuple(int(s) for s in size)


def laplace_vector(scale: float, size: int | tuple[int, ...], random_state: object = None, *,
                   idealized: bool = False) -> NDArray[np.float64]:
    """I.i.d. zero-mean Laplace noise with the given scale (std = sqrt(2) scale); idealized (module docstring: warns
    unless ``idealized=True``)."""
    _warn_unless(idealized, "laplace_vector", "laplace_lattice")
    scale = check_positive(scale, "scale")
    return check_random_state(random_state).laplace(0.0, scale, size=_shape(size))


def uniform_direction(d: int, n: int | None = None, random_state: object = None) -> NDArray[np.float64]:
    """Unit vectors uniform on the sphere S^{d-1} (normalised standard Gaussians)."""
    rng = check_random_state(random_state)
    g = rng.standard_normal((1 if n is None else n, d))
    norms = np.linalg.norm(g, axis=1, keepdims=True)
    while np.any(norms == 0):  # probability zero; kept for exactness
        bad = norms[:, 0] == 0
        g[bad] = rng.standard_normal((int(bad.sum()), d))
        norms = np.linalg.norm(g, axis=1, keepdims=True)
    u = g / norms
    return u[0] if n is None else u


def gamma_norm_vector(beta: float, d: int, n: int | None = None, random_state: object = None, *,
                      idealized: bool = False) -> NDArray[np.float64]:
    """Draw b in R^d with density proportional to exp(-beta ||b||_2) (Chaudhuri et al. Eq. 4).

    ``||b|| ~ Gamma(d, 1/beta)`` and ``b / ||b||`` is uniform on the sphere.  With ``n`` given,
    returns ``n`` independent draws as rows.  Idealized (module docstring: warns unless ``idealized=True``).
    """
    _warn_unless(idealized, "gamma_norm_vector", "gamma_norm_lattice")
    beta = check_positive(beta, "beta")
    if int(d) < 1:
        raise ValueError(f"dimension d must be >= 1, got {d!r}")
    rng = check_random_state(random_state)
    m = 1 if n is None else int(n)
    radius = rng.gamma(shape=int(d), scale=1.0 / beta, size=(m, 1))
    b = radius * uniform_direction(int(d), m, rng)
    return b[0] if n is None else b


def gaussian_vector(sigma: float, size: int | tuple[int, ...], random_state: object = None, *,
                    idealized: bool = False) -> NDArray[np.float64]:
    """I.i.d. N(0, sigma^2) noise; idealized (module docstring: warns unless ``idealized=True``)."""
    _warn_unless(idealized, "gaussian_vector", "gaussian_lattice")
    sigma = check_positive(sigma, "sigma")
    return sigma * check_random_state(random_state).standard_normal(_shape(size))


def exponential_mechanism_probabilities(utilities: ArrayLike, epsilon: float, sensitivity: float = 1.0) -> NDArray[np.float64]:
    """Selection probabilities exp(eps u_i / (2 Delta)) / sum_j exp(eps u_j / (2 Delta))."""
    u = np.asarray(utilities, dtype=np.float64)
    if u.ndim != 1 or u.size == 0 or not np.all(np.isfinite(u)):
        raise ValueError("utilities must be a non-empty 1-d array of finite values")
    logits = check_positive(epsilon, "epsilon") * u / (2.0 * check_positive(sensitivity, "sensitivity"))
    return np.exp(logits - logsumexp(logits))


def exponential_mechanism(utilities: ArrayLike, epsilon: float, sensitivity: float = 1.0, random_state: object = None,
                          *, idealized: bool = False) -> int:
    """Sample an index with the exponential mechanism (epsilon-DP when u has the given sensitivity, in exact
    arithmetic).

    Uses the Gumbel-max trick: argmax_i (eps u_i / (2 Delta) + G_i), G_i i.i.d. standard Gumbel, whose law is the
    exponential mechanism's in real arithmetic; float64 Gumbel draws are not (module docstring: warns unless
    ``idealized=True``; :func:`dpkernels.lattice.exponential_mechanism_exact` samples it exactly).
    """
    _warn_unless(idealized, "exponential_mechanism", "exponential_mechanism_exact")
    u = np.asarray(utilities, dtype=np.float64)
    exponential_mechanism_probabilities(u, epsilon, sensitivity)  # validates arguments
    rng = check_random_state(random_state)
    logits = epsilon * u / (2.0 * sensitivity)
    return int(np.argmax(logits + rng.gumbel(size=u.shape)))


def report_noisy_max(counts: ArrayLike, scale: float, random_state: object = None, axis: int = -1, *,
                     idealized: bool = False) -> NDArray[np.intp] | int:
    """argmax of counts + i.i.d. Laplace(scale) noise along ``axis``.

    With counts of sensitivity 1 under add/remove-one neighbours and ``scale = 1/epsilon`` this is
    epsilon-DP (Dwork and Roth 2014, Claim 3.9) in exact arithmetic; under replace-one neighbours a record can raise
    one count and lower another, and the guarantee is 2 epsilon.  Idealized (module docstring: warns unless
    ``idealized=True``; :func:`dpkernels.lattice.exact_noisy_argmax` is the floating-point-safe one).
    """
    _warn_unless(idealized, "report_noisy_max", "exact_noisy_argmax")
    c = np.asarray(counts, dtype=np.float64)
    noisy = c + laplace_vector(scale, c.shape, random_state, idealized=True)
    out = np.argmax(noisy, axis=axis)
    return int(out) if np.ndim(out) == 0 else out
