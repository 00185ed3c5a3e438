"""Park (2022): differentially private SVDD and multi-class classification with equilibrium points.

* :class:`PrivateSVDD` (Algorithm 1): the SVDD centre a* = Phi' beta* in the random Fourier feature space of
  the RBF kernel exp(-gamma ||x - y||^2) (Eq. 4.5, F features), plus i.i.d. Laplace(lambda) noise with
  lambda = 2 C kappa sqrt(F) / (n eps) (Corollary 4.2, Theorem 4.3; C/n is the dual box bound, Table 7.1's
  "C/n"), then clipped to norm kappa = 1 (post-processing).
* :func:`find_equilibrium_points` (Phase II): gradient dynamics dx/dt = -grad f-hat(x) on the private support
  function f-hat(x) = ||phi(x) - a-hat||^2 (Eq. 5.2), learning-rate decay by 1/5 after 80% of the iterations,
  converged points merged on a grid of side ``merge_tol``.
* :class:`EquilibriumPointClassifier` (Phases I-III): basins labelled by noisy majority votes (Eq. 5.5),
  hypercubes of side r_max for d > 2 (Eq. 5.6), and the two releases of Section 6 (the support function with
  labelled equilibrium points; equilibrium points with kNN inference).

Privacy accounting (replace-one neighbours).  ``variant="paper"`` runs the dynamics from the training points,
as the thesis does: the released equilibrium points then sit next to training points without any noise, so
the release is **not** differentially private whatever eps is (the thesis's appeal to parallel composition in
Phase II does not apply); the votes add Laplace(1/eps_vote) to each count of the occupied basins, which is
eps_vote-DP for add/remove neighbours but 2 eps_vote for replacement.  ``variant="corrected"`` starts the
dynamics from data-independent points (a seeded uniform sample of the domain), so the equilibrium points
are post-processing of a-hat, and releases a label for every basin from the whole (basin x class) histogram
with Laplace(2/eps_vote) noise (L1 sensitivity 2 under replacement): eps_svdd + eps_vote in total.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy.spatial import cKDTree
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.utils.validation import check_is_fitted

from dpkernels._validation import check_epsilon, check_finite_array, check_positive, check_random_state
from dpkernels.mechanisms.base import REPLACE_ONE, Guarantee, require_certified
from dpkernels.noise import laplace_vector
from dpkernels.random_features import RandomFourierFeatures
from dpkernels.solvers import ERMSolution, solve_svdd

__all__ = [
    "PrivateSVDD",
    "EquilibriumPoints",
    "find_equilibrium_points",
    "EquilibriumPointClassifier",
    "corollary_4_2_sensitivity",
]

Array = NDArray[np.float64]


def corollary_4_2_sensitivity(box: float, F: int, kappa: float = 1.0) -> tuple[float, float]:
    """Corollary 4.2: ||a_D - a_D'||_F <= 2 C kappa / n (L2) and ||.||_1 <= 2 C kappa sqrt(F) / n, with C/n = ``box``."""
    l2 = 2.0 * box * kappa
    return l2, l2 * math.sqrt(F)


class PrivateSVDD(BaseEstimator):
    """Algorithm 1 (Private SVDD): Laplace perturbation of the SVDD centre in a random Fourier feature space.

    Parameters
    ----------
    epsilon : float or None, keyword-only
        Privacy level of the centre; None releases the non-private centre (a baseline, not private).
    box : float
        The dual box bound C/n (Table 7.1's "C/n"); needs n * box >= 1.
    gamma : float
        RBF kernel exp(-gamma ||x - y||^2).
    n_components : int
        Frequencies; F = 2 n_components features (Park: F = 400).
    clip : bool
        Clip the noisy centre to norm kappa = 1 (post-processing; the thesis does).
    solver_tol : float
        The release is refused unless the solver certifies ||a - a*|| <= solver_tol * 2 box.
    random_state : numpy.random.Generator, int or None
    """

    def __init__(self, *, epsilon: float | None = 1.0, box: float = 0.05, gamma: float = 1.0, n_components: int = 200,
                 clip: bool = True, solver_tol: float = 1e-3, random_state: object = None) -> None:
        self.epsilon = epsilon
        self.box = box
        self.gamma = gamma
        self.n_components = n_components
        self.clip = clip
        self.solver_tol = solver_tol
        self.random_state = random_state

    def fit(self, X: ArrayLike, y: ArrayLike | None = None) -> "PrivateSVDD":
        X = check_finite_array(X)
        box = check_positive(self.box, "box (C/n)")
        if self.epsilon is not None:
            check_epsilon(self.epsilon)
        rng = check_random_state(self.random_state)
        self.rff_ = RandomFourierFeatures("rbf", math.sqrt(1.0 / (2.0 * check_positive(self.gamma, "gamma"))),
                                          self.n_components, random_state=rng).fit(X)
        Phi = self.rff_.transform(X)
        sol = solve_svdd(Phi, box)
        F = Phi.shape[1]
        self.sensitivity_l2_, self.sensitivity_l1_ = corollary_4_2_sensitivity(box, F)
        require_certified(sol.distance_bound, check_positive(self.solver_tol, "solver_tol") * self.sensitivity_l2_,
                          "||a - a*|| (SVDD centre)")
        self._nonprivate = sol
        self.n_features_in_ = X.shape[1]
        self.frequencies_ = self.rff_.frequencies_
        self._rng = rng
        self.center_ = self._release(sol.coef, self.epsilon, rng)
        if self.epsilon is None:
            self.guarantee_ = None
        else:
            self.guarantee_ = Guarantee(
                epsilon=float(self.epsilon), delta=0.0, neighbouring=REPLACE_ONE, statement="Park (2022) Theorem 4.3",
                released="the noisy (clipped) centre a-hat and the frequencies",
                assumptions=("RBF kernel (kappa = 1)", f"dual box C/n = {box:g}", "Corollary 4.2's sensitivity 2 C kappa sqrt(F)/n",
                             "the exact SVDD minimiser (certified to the solver tolerance)"),
            )
        return self

    def noise_scale(self, epsilon: float) -> float:
        """lambda = 2 C kappa sqrt(F) / (n eps) (Theorem 4.3)."""
        return self.sensitivity_l1_ / check_epsilon(epsilon)

    def _release(self, a: Array, epsilon: float | None, rng: np.random.Generator) -> Array:
        if epsilon is None:
            return a.copy()
        out = a + laplace_vector(self.noise_scale(epsilon), a.shape[0], rng)
        if self.clip:
            nrm = np.linalg.norm(out)
            out = out / max(1.0, nrm)
        return out

    def sample_centers(self, n_draws: int, random_state: object = None, epsilon: float | None = None) -> Array:
        """Further released centres from the cached non-private solution (recalibrated to ``epsilon`` if given)."""
        check_is_fitted(self, "center_")
        rng = check_random_state(random_state)
        eps = self.epsilon if epsilon is None else epsilon
        return np.array([self._release(self._nonprivate.coef, eps, rng) for _ in range(int(n_draws))])

    @property
    def nonprivate_solution(self) -> ERMSolution:
        check_is_fitted(self, "center_")
        return self._nonprivate

    def support_function(self, X: ArrayLike, center: Array | None = None) -> Array:
        """f(x) = ||phi(x) - a||^2 = 1 - 2 phi(x)'a + ||a||^2 (Eq. 4.6)."""
        check_is_fitted(self, "center_")
        a = self.center_ if center is None else center
        return 1.0 - 2.0 * self.rff_.transform(check_finite_array(X)) @ a + float(a @ a)

    def gradient(self, X: Array, center: Array | None = None) -> Array:
        """grad_x f(x) = -2 (d phi / dx)' a for the paired map phi = D^{-1/2} [cos(Wx), sin(Wx)] (interleaved)."""
        a = self.center_ if center is None else center
        W = self.frequencies_
        D = W.shape[0]
        # the dynamics only need the direction of descent: float32 trigonometry (several times faster) is
        # ample for steps merged on a 0.05 grid
        W32 = W.astype(np.float32)
        Z = np.asarray(X, dtype=np.float32) @ W32.T
        a_cos, a_sin = a[0::2].astype(np.float32), a[1::2].astype(np.float32)
        coeff = (np.cos(Z) * a_sin - np.sin(Z) * a_cos) / np.float32(math.sqrt(D))
        return (-2.0 * (coeff @ W32)).astype(np.float64)


@dataclass
class EquilibriumPoints:
    """Converged points of the dynamics, merged into equilibrium points (EPs)."""

    points: Array  #: the EPs, one row each
    assignment: NDArray[np.int64]  #: for each start, the index of its EP
    finals: Array  #: the converged point of each start


def run_dynamics(svdd: PrivateSVDD, starts: Array, lr: float, n_iter: int, center: Array | None = None,
                 decay_at: float = 0.8, decay: float = 0.2) -> Array:
    """Gradient descent x <- x - lr grad f-hat(x) from every start at once (Eq. 5.2), lr * decay after decay_at."""
    x = np.array(starts, dtype=np.float64, copy=True)
    switch = int(math.floor(decay_at * n_iter))
    for it in range(int(n_iter)):
        step = lr * (decay if it >= switch else 1.0)
        x -= step * svdd.gradient(x, center)
    return x


def find_equilibrium_points(svdd: PrivateSVDD, starts: Array, lr: float, n_iter: int, merge_tol: float = 0.05,
                            center: Array | None = None) -> EquilibriumPoints:
    """Phase II: run the dynamics from ``starts`` and merge converged points on a grid of side ``merge_tol``."""
    finals = run_dynamics(svdd, starts, lr, n_iter, center)
    keys = np.round(finals / merge_tol).astype(np.int64)
    uniq, first, inverse = np.unique(keys, axis=0, return_index=True, return_inverse=True)
    return EquilibriumPoints(points=finals[first], assignment=inverse.ravel(), finals=finals)


class EquilibriumPointClassifier(ClassifierMixin, BaseEstimator):
    """Park (2022) Phases I-III: private SVDD, equilibrium points, noisy labels; multi-class.

    Parameters
    ----------
    epsilon_svdd, epsilon_vote : float or None, keyword-only
        Privacy levels of the centre and of the votes (None: no noise, the non-private baseline).
    box, gamma, n_components : SVDD parameters (Table 7.1).
    lr, n_iter : the dynamics' initial learning rate and iterations (Table 7.1; decay 1/5 after 80%).
    r_max : float or None
        Hypercube side for grouping EPs (Eq. 5.6); None groups by the EPs themselves.
    merge_tol : float
        Converged points closer than this grid are one EP.
    variant : {"paper", "corrected"}
        See the module docstring.
    n_starts : int
        Data-independent starts of the corrected variant (uniform on ``domain``).
    domain : (low, high)
        The public box of the inputs (after min-max scaling: [0, 1]^d).
    inference : {"dynamics", "knn"}
        Release mode of Section 6.1 (support function + labelled EPs) or 6.2 (EPs + kNN).
    n_neighbors : int
        k of the kNN release.
    random_state : numpy.random.Generator, int or None
    """

    def __init__(self, *, epsilon_svdd: float | None = 1.0, epsilon_vote: float | None = 1.0, box: float = 0.05,
                 gamma: float = 1.0, n_components: int = 200, lr: float = 1e-3, n_iter: int = 20, r_max: float | None = None,
                 merge_tol: float = 0.05, variant: str = "paper", n_starts: int = 2000, domain: tuple[float, float] = (0.0, 1.0),
                 inference: str = "dynamics", n_neighbors: int = 1, random_state: object = None) -> None:
        self.epsilon_svdd = epsilon_svdd
        self.epsilon_vote = epsilon_vote
        self.box = box
        self.gamma = gamma
        self.n_components = n_components
        self.lr = lr
        self.n_iter = n_iter
        self.r_max = r_max
        self.merge_tol = merge_tol
        self.variant = variant
        self.n_starts = n_starts
        self.domain = domain
        self.inference = inference
        self.n_neighbors = n_neighbors
        self.random_state = random_state

    # ------------------------------------------------------------------------------------------
    def fit(self, X: ArrayLike, y: ArrayLike, svdd: PrivateSVDD | None = None, center: Array | None = None) -> "EquilibriumPointClassifier":
        """Fit; ``svdd`` (a fitted :class:`PrivateSVDD`) and ``center`` let a sweep reuse one SVDD solve."""
        X = check_finite_array(X)
        y = np.asarray(y)
        if y.ndim != 1 or len(y) != len(X):
            raise ValueError("y must be a 1-d array of class labels, one per row of X")
        if self.variant not in ("paper", "corrected"):
            raise ValueError(f"variant must be 'paper' or 'corrected', got {self.variant!r}")
        if self.inference not in ("dynamics", "knn"):
            raise ValueError(f"inference must be 'dynamics' or 'knn', got {self.inference!r}")
        rng = check_random_state(self.random_state)
        self.classes_, y_idx = np.unique(y, return_inverse=True)  # the class set is assumed public
        if svdd is None:
            svdd = PrivateSVDD(epsilon=self.epsilon_svdd, box=self.box, gamma=self.gamma, n_components=self.n_components,
                               random_state=rng).fit(X)
        self.svdd_ = svdd
        self.center_ = svdd.center_ if center is None else center
        self.n_features_in_ = X.shape[1]
        if self.variant == "paper":
            eps_pts = find_equilibrium_points(svdd, X, self.lr, self.n_iter, self.merge_tol, self.center_)
            train_ep = eps_pts.assignment
        else:
            lo, hi = self.domain
            starts = rng.uniform(lo, hi, size=(int(self.n_starts), X.shape[1]))
            eps_pts = find_equilibrium_points(svdd, starts, self.lr, self.n_iter, self.merge_tol, self.center_)
            finals = run_dynamics(svdd, X, self.lr, self.n_iter, self.center_)
            train_ep = self._nearest(finals, eps_pts.points)
        self.equilibrium_points_ = eps_pts.points
        cells, cell_of_ep = self._cells(eps_pts.points)
        counts = np.zeros((len(cells), len(self.classes_)))
        np.add.at(counts, (cell_of_ep[train_ep], y_idx), 1.0)
        if self.epsilon_vote is None:
            noisy = counts
        elif self.variant == "paper":  # Eq. (5.5): Laplace(1/eps) on each count of the occupied cells
            noisy = counts + laplace_vector(1.0 / check_epsilon(self.epsilon_vote), counts.shape, rng)
        else:  # the whole histogram, Laplace(2/eps): eps-DP for replace-one neighbours
            noisy = counts + laplace_vector(2.0 / check_epsilon(self.epsilon_vote), counts.shape, rng)
        labels = np.argmax(noisy, axis=1)
        keep = np.ones(len(eps_pts.points), dtype=bool)
        if self.variant == "paper":
            keep = counts[cell_of_ep].sum(axis=1) > 0  # only basins that training points reached are labelled
        self.ep_labels_ = labels[cell_of_ep][keep]
        self.labelled_points_ = eps_pts.points[keep]
        self.n_cells_ = len(cells)
        return self

    def _cells(self, points: Array) -> tuple[Array, NDArray[np.int64]]:
        if self.r_max is None:
            return points, np.arange(len(points))
        keys = np.round(points / self.r_max).astype(np.int64)  # cubes of side r_max centred on multiples of r_max
        uniq, inverse = np.unique(keys, axis=0, return_inverse=True)
        return uniq.astype(np.float64), inverse.ravel()

    @staticmethod
    def _nearest(A: Array, B: Array) -> NDArray[np.int64]:
        return cKDTree(B).query(A, k=1)[1].astype(np.int64)

    def predict(self, X: ArrayLike) -> NDArray:
        check_is_fitted(self, "ep_labels_")
        X = check_finite_array(X)
        if len(self.labelled_points_) == 0:
            raise RuntimeError("no labelled equilibrium point")
        if self.inference == "dynamics":  # Section 6.1: run the dynamics, take the nearest labelled EP
            finals = run_dynamics(self.svdd_, X, self.lr, self.n_iter, self.center_)
            return self.classes_[self.ep_labels_[self._nearest(finals, self.labelled_points_)]]
        k = min(int(self.n_neighbors), len(self.labelled_points_))  # Section 6.2: kNN on the labelled EPs
        nn = cKDTree(self.labelled_points_).query(X, k=k)[1].reshape(len(X), k)
        votes = np.zeros((len(X), len(self.classes_)))
        np.add.at(votes, (np.repeat(np.arange(len(X)), k), self.ep_labels_[nn].ravel()), 1.0)
        return self.classes_[votes.argmax(axis=1)]

    def privacy(self) -> dict[str, object]:
        """The end-to-end guarantee of what this classifier releases (replace-one neighbours)."""
        e1 = self.epsilon_svdd or 0.0
        e2 = self.epsilon_vote or 0.0
        if self.variant == "paper":
            return {"claimed_epsilon": max(e1, e2), "epsilon_replace_one": math.inf,
                    "why": "equilibrium points are reached from the training points without noise (and only occupied basins "
                           f"are labelled); the centre is {e1:g}-DP and the votes are {2 * e2:g}-DP under replacement"}
        return {"claimed_epsilon": e1 + e2, "epsilon_replace_one": e1 + e2,
                "why": "EPs from data-independent starts (post-processing of a-hat); the full (basin x class) histogram with "
                       "Laplace(2/eps_vote)"}
