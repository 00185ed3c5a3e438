"""Noise samplers and selection mechanisms.  Every function takes a ``random_state``.

* :func:`laplace_vector`: i.i.d. Laplace(0, scale) coordinates (Rubinstein et al. Algorithms 2-3,
  Park Algorithm 1); density ``prod_i exp(-|b_i| / scale) / (2 scale)``.
* :func:`gamma_norm_vector`: Chaudhuri et al.'s Eq. (4), density proportional to exp(-beta ||b||_2).
  In polar coordinates the density of r = ||b|| is proportional to r^{d-1} exp(-beta r), i.e.
  r ~ Gamma(shape d, scale 1/beta), and the direction is uniform on the sphere, independent of r.
* :func:`gaussian_vector`: i.i.d. N(0, sigma^2).
* :func:`exponential_mechanism` (McSherry and Talwar 2007): pick i with probability proportional
  to exp(epsilon u_i / (2 sensitivity)); sampled exactly with the Gumbel-max trick.
* :func:`report_noisy_max`: argmax_i (c_i + Laplace(scale)).
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy.special import logsumexp

from dpkernels._validation import check_positive, check_random_state

__all__ = [
    "laplace_vector",
    "gamma_norm_vector",
    "uniform_direction",
    "gaussian_vector",
    "exponential_mechanism_probabilities",
    "exponential_mechanism",
    "report_noisy_max",
]


def _shape(size: int | tuple[int, ...]) -> tuple[int, ...]:
    return (int(size),) if np.isscalar(size) else tuple(int(s) for s in size)


def laplace_vector(scale: float, size: int | tuple[int, ...], random_state: object = None) -> NDArray[np.float64]:
    """I.i.d. zero-mean Laplace noise with the given scale (std = sqrt(2) scale)."""
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


def gamma_norm_vector(beta: float, d: int, n: int | None = None, random_state: object = None) -> NDArray[np.float64]:
    """Draw b in R^d with density proportional to exp(-beta ||b||_2) (Chaudhuri et al. Eq. 4).

    ``||b|| ~ Gamma(d, 1/beta)`` and ``b / ||b||`` is uniform on the sphere.  With ``n`` given,
    returns ``n`` independent draws as rows.
    """
    beta = check_positive(beta, "beta")
    if int(d) < 1:
        raise ValueError(f"dimension d must be >= 1, got {d!r}")
    rng = check_random_state(random_state)
    m = 1 if n is None else int(n)
    radius = rng.gamma(shape=int(d), scale=1.0 / beta, size=(m, 1))
    b = radius * uniform_direction(int(d), m, rng)
    return b[0] if n is None else b


def gaussian_vector(sigma: float, size: int | tuple[int, ...], random_state: object = None) -> NDArray[np.float64]:
    """I.i.d. N(0, sigma^2) noise."""
    sigma = check_positive(sigma, "sigma")
    return sigma * check_random_state(random_state).standard_normal(_shape(size))


def exponential_mechanism_probabilities(utilities: ArrayLike, epsilon: float, sensitivity: float = 1.0) -> NDArray[np.float64]:
    """Selection probabilities exp(eps u_i / (2 Delta)) / sum_j exp(eps u_j / (2 Delta))."""
    u = np.asarray(utilities, dtype=np.float64)
    if u.ndim != 1 or u.size == 0 or not np.all(np.isfinite(u)):
        raise ValueError("utilities must be a non-empty 1-d array of finite values")
    logits = check_positive(epsilon, "epsilon") * u / (2.0 * check_positive(sensitivity, "sensitivity"))
    return np.exp(logits - logsumexp(logits))


def exponential_mechanism(utilities: ArrayLike, epsilon: float, sensitivity: float = 1.0, random_state: object = None) -> int:
    """Sample an index with the exponential mechanism (epsilon-DP when u has the given sensitivity).

    Uses the Gumbel-max trick: argmax_i (eps u_i / (2 Delta) + G_i), G_i i.i.d. standard Gumbel,
    which has exactly the exponential mechanism's distribution.
    """
    u = np.asarray(utilities, dtype=np.float64)
    exponential_mechanism_probabilities(u, epsilon, sensitivity)  # validates arguments
    rng = check_random_state(random_state)
    logits = epsilon * u / (2.0 * sensitivity)
    return int(np.argmax(logits + rng.gumbel(size=u.shape)))


def report_noisy_max(counts: ArrayLike, scale: float, random_state: object = None, axis: int = -1) -> NDArray[np.intp] | int:
    """argmax of counts + i.i.d. Laplace(scale) noise along ``axis``.

    With counts of sensitivity 1 under add/remove-one neighbours and ``scale = 1/epsilon`` this is
    epsilon-DP (Dwork and Roth 2014, Claim 3.9); under replace-one neighbours a record can raise one
    count and lower another, and the guarantee is 2 epsilon.
    """
    c = np.asarray(counts, dtype=np.float64)
    noisy = c + laplace_vector(scale, c.shape, random_state)
    out = np.argmax(noisy, axis=axis)
    return int(out) if np.ndim(out) == 0 else out
