"""Margin losses l(z), z = y f(x), with the constants the privacy proofs need.

Each loss exposes its value, first and second derivative in z, its Lipschitz constant ``lipschitz``
(Rubinstein et al.'s L; Chaudhuri et al. require ``|l'| <= 1``) and its curvature bound ``curvature``
(Chaudhuri et al.'s ``c >= |l''|``), plus whether it is twice differentiable everywhere (Theorem 9 of
Chaudhuri et al. needs that; Huber is only piecewise C^2, hence their Corollary 13).

==================  =====================================================  =====  ============
loss                l(z)                                                   L      c
==================  =====================================================  =====  ============
hinge               max(0, 1 - z)                                          1      (not smooth)
logistic            log(1 + exp(-z))                                       1      1/4
huber (h)           0, (1+h-z)^2/(4h), 1-z  (Chaudhuri et al. Eq. 7)       1      1/(2h)
smoothed hinge (h)  Chapelle (2007) quartic smoothing (Chaudhuri Sec 3.4)  1      3/(4h)
==================  =====================================================  =====  ============
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import ClassVar

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy.special import expit

from dpkernels._validation import check_positive

__all__ = ["MarginLoss", "Hinge", "Logistic", "Huber", "SmoothedHinge", "make_loss", "LOSSES"]

Array = NDArray[np.float64]


@dataclass(frozen=True)
class MarginLoss(ABC):
    """A convex loss of the margin z = y f(x)."""

    name: ClassVar[str] = "abstract"
    lipschitz: ClassVar[float] = 1.0
    twice_differentiable: ClassVar[bool] = False

    @property
    def curvature(self) -> float:
        """Upper bound c on ``|l''(z)|`` (``inf`` for a non-smooth loss)."""
        return float("inf")

    @property
    def smooth(self) -> bool:
        """True when l is differentiable with a Lipschitz derivative (c < inf)."""
        return np.isfinite(self.curvature)

    @abstractmethod
    def value(self, z: ArrayLike) -> Array: ...

    @abstractmethod
    def derivative(self, z: ArrayLike) -> Array:
        """l'(z); for the hinge loss the subgradient -1[z < 1]."""

    def second_derivative(self, z: ArrayLike) -> Array:
        raise NotImplementedError(f"the {self.name} loss is not twice differentiable")


@dataclass(frozen=True)
class Hinge(MarginLoss):
    """Hinge loss max(0, 1 - z): convex, 1-Lipschitz, not differentiable at z = 1."""

    name: ClassVar[str] = "hinge"

    def value(self, z: ArrayLike) -> Array:
        return np.maximum(0.0, 1.0 - np.asarray(z, dtype=np.float64))

    def derivative(self, z: ArrayLike) -> Array:
        return -(np.asarray(z, dtype=np.float64) < 1.0).astype(np.float64)


@dataclass(frozen=True)
class Logistic(MarginLoss):
    """Logistic loss log(1 + exp(-z)); ``|l'| <= 1``, ``0 < l'' <= 1/4`` (Chaudhuri et al. Sec 3.4.1)."""

    name: ClassVar[str] = "logistic"
    twice_differentiable: ClassVar[bool] = True

    @property
    def curvature(self) -> float:
        return 0.25

    def value(self, z: ArrayLike) -> Array:
        return np.logaddexp(0.0, -np.asarray(z, dtype=np.float64))

    def derivative(self, z: ArrayLike) -> Array:
        return -expit(-np.asarray(z, dtype=np.float64))

    def second_derivative(self, z: ArrayLike) -> Array:
        z = np.asarray(z, dtype=np.float64)
        return expit(z) * expit(-z)


@dataclass(frozen=True)
class Huber(MarginLoss):
    """Huber loss of Chaudhuri et al. Eq. (7): 0 (z > 1+h), (1+h-z)^2/(4h) (``|1-z| <= h``), 1-z (z < 1-h).

    Differentiable with l' in [-1, 0], piecewise twice differentiable with ``|l''| <= c = 1/(2h)``.
    """

    h: float = 0.5
    name: ClassVar[str] = "huber"

    def __post_init__(self) -> None:
        check_positive(self.h, "h (Huber smoothing width)")

    @property
    def curvature(self) -> float:
        return 1.0 / (2.0 * self.h)

    def value(self, z: ArrayLike) -> Array:
        z = np.asarray(z, dtype=np.float64)
        h = self.h
        mid = (1.0 + h - z) ** 2 / (4.0 * h)
        return np.where(z > 1.0 + h, 0.0, np.where(z < 1.0 - h, 1.0 - z, mid))

    def derivative(self, z: ArrayLike) -> Array:
        z = np.asarray(z, dtype=np.float64)
        h = self.h
        return np.where(z > 1.0 + h, 0.0, np.where(z < 1.0 - h, -1.0, -(1.0 + h - z) / (2.0 * h)))

    def second_derivative(self, z: ArrayLike) -> Array:
        z = np.asarray(z, dtype=np.float64)
        return np.where(np.abs(1.0 - z) <= self.h, 1.0 / (2.0 * self.h), 0.0)


@dataclass(frozen=True)
class SmoothedHinge(MarginLoss):
    """Chapelle's smoothed hinge l_s (Chaudhuri et al. Sec 3.4.2): twice differentiable, c = 3/(4h)."""

    h: float = 0.5
    name: ClassVar[str] = "smoothed_hinge"
    twice_differentiable: ClassVar[bool] = True

    def __post_init__(self) -> None:
        check_positive(self.h, "h (smoothing width)")

    @property
    def curvature(self) -> float:
        return 3.0 / (4.0 * self.h)

    def value(self, z: ArrayLike) -> Array:
        z = np.asarray(z, dtype=np.float64)
        h, u = self.h, 1.0 - np.asarray(z, dtype=np.float64)
        mid = -(u**4) / (16 * h**3) + 3 * u**2 / (8 * h) + u / 2 + 3 * h / 16
        return np.where(z > 1.0 + h, 0.0, np.where(z < 1.0 - h, u, mid))

    def derivative(self, z: ArrayLike) -> Array:
        z = np.asarray(z, dtype=np.float64)
        h, u = self.h, 1.0 - z
        mid = u**3 / (4 * h**3) - 3 * u / (4 * h) - 0.5
        return np.where(z > 1.0 + h, 0.0, np.where(z < 1.0 - h, -1.0, mid))

    def second_derivative(self, z: ArrayLike) -> Array:
        z = np.asarray(z, dtype=np.float64)
        h, u = self.h, 1.0 - z
        mid = -3 * u**2 / (4 * h**3) + 3 / (4 * h)
        return np.where(np.abs(u) <= h, mid, 0.0)


LOSSES: dict[str, type[MarginLoss]] = {
    "hinge": Hinge,
    "logistic": Logistic,
    "huber": Huber,
    "smoothed_hinge": SmoothedHinge,
}


def make_loss(loss: str | MarginLoss, h: float = 0.5) -> MarginLoss:
    """Return a loss object from a name; ``h`` is the smoothing width of huber / smoothed_hinge."""
    if isinstance(loss, MarginLoss):
        return loss
    key = str(loss).lower()
    if key not in LOSSES:
        raise ValueError(f"unknown loss {loss!r}; choose one of {sorted(LOSSES)}")
    cls = LOSSES[key]
    return cls(h=h) if key in ("huber", "smoothed_hinge") else cls()
