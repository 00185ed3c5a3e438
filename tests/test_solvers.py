"""The fast solvers against cvxpy (the exact reference), and their certificates."""

from __future__ import annotations

import cvxpy as cp
import numpy as np
import pytest

from dpkernels.losses import Huber, Logistic, SmoothedHinge, make_loss
from dpkernels.random_features import RandomFourierFeatures
from dpkernels.solvers import SMOOTH_GTOL, solve_erm, solve_hinge_dual_cvxpy, solve_hinge_primal, solve_smooth_erm


def problem(n: int = 250, d: int = 4, D: int = 40, seed: int = 0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    y = np.where(X[:, 0] + 0.5 * rng.normal(size=n) > 0, 1.0, -1.0)
    F = RandomFourierFeatures(n_components=D, sigma=1.0, random_state=seed).fit_transform(X)
    return F, y


@pytest.mark.parametrize("C", [0.1, 3.0, 100.0, 1e4])
def test_hinge_primal_matches_cvxpy_dual(C):
    F, y = problem()
    fast = solve_hinge_primal(F, y, C)
    ref = solve_hinge_dual_cvxpy(y, C, X=F)
    assert fast.converged
    # both certified: the distance is within the sum of the two certificates (plus round-off)
    assert np.linalg.norm(fast.coef - ref.coef) <= fast.distance_bound + ref.distance_bound + 1e-9 * (1 + np.linalg.norm(ref.coef))
    assert fast.distance_bound <= 1e-4 * max(1.0, np.linalg.norm(fast.coef))
    assert np.all((fast.alpha >= 0) & (fast.alpha <= C / len(y)))


def test_hinge_dual_with_gram_matrix_equals_feature_form():
    F, y = problem(n=80)
    a = solve_hinge_dual_cvxpy(y, 5.0, X=F)
    b = solve_hinge_dual_cvxpy(y, 5.0, K=F @ F.T)
    assert np.allclose(F.T @ (b.alpha * y), a.coef, atol=1e-6)


def huber_cvxpy(F, y, h, lam):
    """Chaudhuri's Huber loss as an infimal convolution: l(z) = min_v [v^2 + 4h (1 + h - z - v)_+] / (4h)."""
    n, p = F.shape
    w, v = cp.Variable(p), cp.Variable(n)
    z = cp.multiply(y, F @ w)
    obj = cp.sum(cp.square(v) + 4 * h * cp.pos(1 + h - z - v)) / (4 * h * n) + lam / 2 * cp.sum_squares(w)
    cp.Problem(cp.Minimize(obj)).solve(solver="CLARABEL", tol_gap_abs=1e-12, tol_gap_rel=1e-12, tol_feas=1e-12)
    return w.value


def logistic_cvxpy(F, y, lam):
    w = cp.Variable(F.shape[1])
    obj = cp.sum(cp.logistic(-cp.multiply(y, F @ w))) / len(y) + lam / 2 * cp.sum_squares(w)
    cp.Problem(cp.Minimize(obj)).solve(solver="CLARABEL", tol_gap_abs=1e-12, tol_gap_rel=1e-12, tol_feas=1e-12)
    return w.value


@pytest.mark.parametrize("lam", [1e-3, 1e-1])
def test_newton_logistic_matches_cvxpy(lam):
    F, y = problem()
    sol = solve_smooth_erm(F, y, Logistic(), lam)
    assert sol.converged and sol.distance_bound <= SMOOTH_GTOL / lam
    assert np.linalg.norm(sol.coef - logistic_cvxpy(F, y, lam)) < 1e-5


@pytest.mark.parametrize("lam", [1e-3, 1e-1])
def test_newton_huber_matches_cvxpy(lam):
    F, y = problem()
    sol = solve_smooth_erm(F, y, Huber(0.5), lam)
    assert sol.converged
    assert np.linalg.norm(sol.coef - huber_cvxpy(F, y, 0.5, lam)) < 1e-5


def test_newton_cg_path_agrees_with_dense_path():
    F, y = problem(n=400, D=300)  # 600 columns > the dense threshold
    a = solve_smooth_erm(F, y, SmoothedHinge(0.5), 1e-2)
    b = solve_smooth_erm(F[:, :500], y, SmoothedHinge(0.5), 1e-2)
    assert a.converged and b.converged
    assert a.distance_bound < 1e-7


def test_objective_perturbation_term_shifts_minimiser():
    """grad J + b/n = 0 at the perturbed minimiser (Chaudhuri et al. Eq. 6 stationarity)."""
    F, y = problem()
    b = np.random.default_rng(1).normal(size=F.shape[1])
    sol = solve_smooth_erm(F, y, Logistic(), 0.05, b=b)
    z = y * (F @ sol.coef)
    grad = F.T @ (y * Logistic().derivative(z)) / len(y) + 0.05 * sol.coef + b / len(y)
    assert np.linalg.norm(grad) < 1e-9


def test_solve_erm_dispatches_on_loss():
    F, y = problem(n=60)
    assert solve_erm(F, y, make_loss("hinge"), 2.0).method.startswith(("liblinear", "cvxpy"))
    assert solve_erm(F, y, make_loss("logistic"), 2.0).method == "newton"


def test_smooth_solver_refuses_hinge():
    F, y = problem(n=30)
    with pytest.raises(ValueError, match="differentiable"):
        solve_smooth_erm(F, y, make_loss("hinge"), 1.0)


@pytest.mark.parametrize("C", [10.0, 1000.0])
def test_hinge_certifies_on_duplicated_rows(C):
    """One-hot data (Adult) repeats rows, so many margins tie at 1 and the duals are not unique; the
    solver must still certify its solution (and agree with cvxpy)."""
    rng = np.random.default_rng(4)
    base = rng.integers(0, 2, size=(150, 6)).astype(float)
    X = base[rng.integers(0, 150, size=1500)]
    X /= np.maximum(1.0, np.linalg.norm(X, axis=1))[:, None]
    y = np.where(X @ rng.normal(size=6) + 0.3 * rng.normal(size=1500) > 0, 1.0, -1.0)
    F = RandomFourierFeatures(n_components=30, sigma=0.7, random_state=1).fit_transform(X)
    fast = solve_hinge_primal(F, y, C)
    ref = solve_hinge_dual_cvxpy(y, C, X=F)
    assert fast.converged and fast.method == "liblinear+active-set"
    assert fast.distance_bound <= 1e-3 * 4 * C / len(y)
    assert np.linalg.norm(fast.coef - ref.coef) <= fast.distance_bound + ref.distance_bound + 1e-8


def test_working_set_qp_certifies_and_distance_tol_is_honoured(monkeypatch):
    """The working-set QP of the hinge solver: with every point in the set it is the full dual (gap ~ 0 from a
    poor guess), in both its Gram-matrix and lifted forms; solve_hinge_primal only reports convergence within
    ``distance_tol``."""
    from dpkernels.solvers import hinge as solvers
    from dpkernels.solvers.hinge import _SignedRows, _working_set_qp, hinge_duality_gap

    rng = np.random.default_rng(5)
    X = rng.normal(size=(400, 20))
    X /= np.linalg.norm(X, axis=1, keepdims=True)
    y = np.where(X[:, 0] + 0.3 * rng.normal(size=400) > 0, 1.0, -1.0)
    upper = 100.0 / 400
    A = _SignedRows(X, y)
    rough = A.margins(0.5 * A.combine(np.full(400, 1 / 400)))
    solutions = []
    for dense_max in (400, 10):  # all 400 points in the Gram form, then in the lifted form
        monkeypatch.setattr(solvers, "DENSE_DUAL_MAX", dense_max)
        alpha, w, margins, _, _ = _working_set_qp(A, upper, rough, width=1e6)
        assert np.all((alpha >= 0) & (alpha <= upper))
        assert hinge_duality_gap(margins, alpha, upper) < 1e-8
        solutions.append(w)
    assert np.linalg.norm(solutions[0] - solutions[1]) < 1e-4
    assert _working_set_qp(A, upper, rough, width=-1.0) is None  # empty set
    assert _working_set_qp(A, upper, rough, width=1e6, max_size=399) is None  # too large
    sol = solve_hinge_primal(X, y, 100.0, distance_tol=1e-7)
    assert sol.converged and sol.distance_bound <= 1e-7


@pytest.mark.parametrize("C", [10.0, 1000.0])
def test_hinge_fast_path_needs_one_warm_start(C, monkeypatch):
    """On random features the exact dual of the points near the warm start's margin certifies the solution: one
    liblinear run at LinearSVC's tolerance, a Gram-form working set, no tighter warm start (what keeps
    PrivateSVM.fit within 1.5x of LinearSVC, benchmarks/bench_rubinstein2012.py)."""
    from sklearn.svm import LinearSVC

    from dpkernels.solvers import hinge as solvers

    tols, sizes = [], []

    class CountingSVC(LinearSVC):
        def fit(self, X, y):
            tols.append(self.tol)
            return super().fit(X, y)

    working_set_qp = solvers._working_set_qp

    def counting_working_set_qp(*args, **kwargs):
        sizes.append(kwargs["max_size"])
        return working_set_qp(*args, **kwargs)

    monkeypatch.setattr(solvers, "LinearSVC", CountingSVC)
    monkeypatch.setattr(solvers, "_working_set_qp", counting_working_set_qp)
    rng = np.random.default_rng(7)
    X = rng.normal(size=(6000, 8))
    X /= np.maximum(1.0, np.linalg.norm(X, axis=1))[:, None]
    y = np.where(np.sin(3 * X[:, 0]) + X[:, 1] + 0.3 * rng.normal(size=6000) > 0, 1.0, -1.0)
    F = RandomFourierFeatures(n_components=60, sigma=0.7, random_state=3).fit_transform(X)
    tol = 1e-3 * 4 * C / 6000
    sol = solve_hinge_primal(F, y, C, distance_tol=tol)
    assert sol.converged and sol.distance_bound <= tol
    assert tols == [pytest.approx(1e-4)]
    assert sizes and all(size == solvers.DENSE_DUAL_MAX for size in sizes)
    ref = solve_hinge_dual_cvxpy(y, C, X=F)
    assert np.linalg.norm(sol.coef - ref.coef) <= sol.distance_bound + ref.distance_bound + 1e-8


# ----------------------------------------------------------------------------------------------
# many noise draws at once (objective perturbation), designs
# ----------------------------------------------------------------------------------------------
def _one_hot_problem(n=3000, seed=0):
    """Sparse one-hot rows plus two numeric columns, with duplicated rows (like Adult / KDDCup99)."""
    from dpkernels.solvers.smooth import Design  # noqa: F401

    rng = np.random.default_rng(seed)
    cats = rng.integers(0, 4, size=(n, 3))
    X = np.zeros((n, 38))
    for j in range(3):
        X[np.arange(n), 12 * j + cats[:, j]] = 1.0
    X[:, 36:] = rng.integers(0, 3, size=(n, 2)) / 2.0
    X /= np.linalg.norm(X, axis=1)[:, None]
    y = np.where(cats[:, 0] + rng.normal(size=n) > 1.5, 1.0, -1.0)
    return X, y


@pytest.mark.parametrize("loss", ["logistic", "huber", "smoothed_hinge"])
@pytest.mark.parametrize("lam", [1e-4, 1e-2])
def test_batched_draws_are_each_certified_and_match_newton(loss, lam):
    """Every draw of the batched solver meets its gtol (its own certificate), and agrees with a Newton solve of the
    same perturbed problem within the sum of the two certified distances."""
    from dpkernels.solvers.smooth import solve_smooth_erm_batch

    X, y = _one_hot_problem()
    L = make_loss(loss)
    B = np.random.default_rng(1).normal(size=(7, X.shape[1])) * np.array([[1.0], [10.0], [100.0], [1e3], [1.0], [0.0], [3e3]])
    gtol = 1e-9
    sol = solve_smooth_erm_batch(X, y, L, lam, B, gtol=gtol)
    assert sol.converged.all() and np.all(sol.grad_norm <= gtol)
    for k in range(len(B)):
        ref = solve_smooth_erm(X, y, L, lam, b=B[k])
        z = y * (X @ sol.coef[k])
        grad = X.T @ (y * L.derivative(z)) / len(y) + lam * sol.coef[k] + B[k] / len(y)
        assert np.linalg.norm(grad) == pytest.approx(sol.grad_norm[k], rel=1e-6, abs=1e-15)
        assert np.linalg.norm(sol.coef[k] - ref.coef) <= sol.distance_bound[k] + ref.distance_bound + 1e-12


def test_batched_solver_falls_back_to_newton():
    from dpkernels.solvers.smooth import solve_smooth_erm_batch

    X, y = _one_hot_problem(n=500)
    B = np.random.default_rng(2).normal(size=(3, X.shape[1])) * 50
    sol = solve_smooth_erm_batch(X, y, Logistic(), 1e-3, B, gtol=1e-10, max_iter=1)
    assert sol.n_newton > 0 and sol.converged.all()


@pytest.mark.parametrize("sparse_mode", [False, True])
def test_hessian_factor_woodbury_solves_the_hessian_it_never_forms(sparse_mode):
    """With fewer curved rows than features the factor takes the Woodbury form (k x k), and solves H V = R to
    rounding, H formed here for the comparison only; with more rows it is the d x d Cholesky factor."""
    from dpkernels.solvers.smooth import Design

    rng = np.random.default_rng(3)
    for n, d, woodbury in ((30, 80, True), (300, 20, False)):
        X = rng.normal(size=(n, d)) * (rng.random((n, d)) < 0.3)
        D = Design(X, np.where(rng.random(n) < 0.5, -1.0, 1.0), sparse_mode=sparse_mode)
        curv = rng.random(D.n_rows) * (rng.random(D.n_rows) < 0.8)  # some rows flat (c = 0)
        fac = D.hessian_factor(curv, 1e-3)
        assert (fac.B is not None) == woodbury
        V = rng.normal(size=(d, 3))
        H = D.hessian(curv, 1e-3)
        assert np.linalg.norm(H @ fac.solve(V) - V) <= 1e-8 * np.linalg.norm(V) * np.linalg.cond(H) ** 0.5


def test_batched_solver_in_high_dimension_stays_certified():
    """d = 20,000 features and 100 rows (Bassily's dimension experiment reaches d = 100,000): the batched draws
    are certified without a d x d Hessian (3.2 GB here; 75 GB at d = 100,000)."""
    from dpkernels.solvers.smooth import solve_smooth_erm_batch

    rng = np.random.default_rng(4)
    X = rng.normal(size=(100, 20_000))
    X /= np.linalg.norm(X, axis=1)[:, None]
    y = np.sign(X[:, 0] + 1e-3)
    sol = solve_smooth_erm_batch(X, y, Logistic(), 1e-2, rng.normal(size=(2, 20_000)), gtol=1e-8)
    assert sol.converged.all() and np.all(sol.grad_norm <= 1e-8)


def test_designs_compressed_sparse_and_dense_give_the_same_problem():
    """Merging duplicate rows into weights and holding X as CSR change the arithmetic, not the objective."""
    from dpkernels.solvers.smooth import Design

    X, y = _one_hot_problem()
    dense = Design(X, y, sparse_mode=False)
    packed = Design(X, y, compress=True)
    assert packed.is_sparse and packed.n_rows < len(y) / 2 and packed.n_examples == len(y)
    b = np.random.default_rng(3).normal(size=X.shape[1]) * 10
    a = solve_smooth_erm(dense, None, Huber(0.5), 1e-3, b=b)
    c = solve_smooth_erm(packed, None, Huber(0.5), 1e-3, b=b)
    assert np.linalg.norm(a.coef - c.coef) <= a.distance_bound + c.distance_bound + 1e-12
    assert abs(a.objective - c.objective) < 1e-12


def test_blas_is_serial_for_small_work():
    from threadpoolctl import threadpool_info

    from dpkernels.solvers.smooth import blas_threads

    with blas_threads(1e6):
        assert all(p["num_threads"] == 1 for p in threadpool_info() if p["user_api"] == "blas")

@pytest.mark.parametrize("label", [1.0, -1.0])
def test_hinge_single_class_is_solved_and_certified(label):
    """The SVM minimiser exists when only one label occurs (a public label set allows such data sets); liblinear
    refuses them, so the solver must not reach it with one class, and must still certify its solution."""
    F, _ = problem(n=120)
    y = np.full(120, label)
    for C in (0.5, 50.0):
        fast = solve_hinge_primal(F, y, C, distance_tol=1e-3 * 4 * C / 120)
        ref = solve_hinge_dual_cvxpy(y, C, X=F)
        assert fast.converged and fast.distance_bound <= 1e-3 * 4 * C / 120
        assert np.linalg.norm(fast.coef - ref.coef) <= fast.distance_bound + ref.distance_bound + 1e-9


@pytest.mark.parametrize("scale, C", [(1.0, 2.0), (0.1, 0.5), (0.0, 1.0)])
def test_hinge_one_row_closed_form(scale, C):
    x = scale * np.array([[0.3, -0.4, 1.2]])
    sol = solve_hinge_primal(x, np.array([1.0]), C)
    assert sol.converged and sol.gap <= 1e-15
    if scale:
        assert np.allclose(sol.coef, solve_hinge_dual_cvxpy(np.array([1.0]), C, X=x).coef, atol=1e-9)
    else:
        assert not np.any(sol.coef)


def test_gram_dual_matches_cvxpy_and_certifies():
    from dpkernels.kernels import RBFKernel
    from dpkernels.solvers.hinge import solve_hinge_dual_gram

    rng = np.random.default_rng(2)
    X = rng.uniform(size=(30, 2))
    y = np.where(np.sin(6 * X[:, 0]) + X[:, 1] - 0.5 > 0, 1.0, -1.0)
    K = RBFKernel(0.3)(X)
    for C in (0.3, 5.0, 200.0):
        fast = solve_hinge_dual_gram(y, C, K)
        ref = solve_hinge_dual_cvxpy(y, C, K=K)
        assert fast.converged and fast.gap < 1e-9
        assert np.all((fast.alpha >= 0) & (fast.alpha <= C / 30))
        # the functions agree (the duals need not be unique, f = K (alpha * y) is)
        assert np.max(np.abs(K @ (fast.alpha * y) - K @ (ref.alpha * y))) < 1e-5


# ----------------------------------------------------------------------------------------------
# the fused evaluation and the certified solve (issue 27)
# ----------------------------------------------------------------------------------------------
@pytest.mark.parametrize("layout", ["dense", "sparse", "compressed"])
def test_fused_loss_gradient_is_the_loss_and_its_gradient(layout, monkeypatch):
    """Design.loss_gradient (blocks of rows, signs applied to the margins and the derivatives, weights) gives the mean
    loss and its gradient of the signed rows, one column or several; matvec / rmatvec act on the signed rows."""
    from dpkernels.solvers import smooth
    from dpkernels.solvers.smooth import Design

    monkeypatch.setattr(smooth, "BLOCK_ROWS", 256)
    X, y = _one_hot_problem()
    D = Design(X, y, sparse_mode=layout == "sparse", compress=layout == "compressed")
    assert len(D.blocks()) > 1
    A = X * y[:, None]
    W = np.random.default_rng(5).normal(size=(X.shape[1], 3))
    for loss in (Logistic(), Huber(0.5), SmoothedHinge(0.5)):
        F, G = D.loss_gradient(loss, W)
        Z = A @ W
        assert np.allclose(F, loss.value(Z).mean(axis=0), rtol=1e-13)
        assert np.allclose(G, A.T @ loss.derivative(Z) / len(y), rtol=1e-12, atol=1e-15)
        F1, G1 = D.loss_gradient(loss, W[:, 0])
        assert np.allclose(G1, G[:, 0], rtol=1e-13, atol=1e-16) and F1 == pytest.approx(F[0], rel=1e-14)
    assert np.allclose(D.rmatvec(D.weighted(D.matvec(W[:, 0]))), A.T @ (A @ W[:, 0]), rtol=1e-12)


@pytest.mark.parametrize("loss", [Logistic(), Huber(0.5), SmoothedHinge(0.5)])
@pytest.mark.parametrize("layout", ["dense", "sparse", "compressed"])
def test_certified_solve_meets_its_target_and_agrees_with_newton(loss, layout):
    """certified_solve stops at a certified ||grad|| <= target, and its point is within the two certificates of an
    independent Newton solve of the same perturbed problem (one-hot rows with duplicates; CSR; merged rows)."""
    from dpkernels.solvers.certify import certified_solve
    from dpkernels.solvers.smooth import Design

    X, y = _one_hot_problem()
    lam = 1e-3
    b = np.random.default_rng(6).normal(size=X.shape[1]) * 40
    D = Design(X, y, sparse_mode=layout == "sparse", compress=layout == "compressed")
    sol = certified_solve(D, loss, lam, b / len(y), 1e-11, 1.0)
    assert sol.certified and sol.certificate <= 1e-11
    ref = solve_smooth_erm(X, y, loss, lam, b=b, gtol=1e-12)
    assert np.linalg.norm(sol.coef - ref.coef) <= (sol.certificate + ref.grad_norm * (1 + 1e-6)) / lam + 1e-12


def test_certified_solve_starts_from_a_subsample_at_scale_and_in_high_dimension():
    """Designs of at least MULTILEVEL_ROWS rows are first solved on every 16th row (fewer passes over every row than
    from 0); d > rows preconditions through the Woodbury form (no d x d Hessian)."""
    from dpkernels.solvers import certify
    from dpkernels.solvers.smooth import Design

    rng = np.random.default_rng(7)
    n, d = certify.MULTILEVEL_ROWS + 5000, 20
    X = rng.normal(size=(n, d))
    X /= np.maximum(1.0, np.linalg.norm(X, axis=1))[:, None]
    y = np.where(X @ rng.normal(size=d) + 0.3 * rng.normal(size=n) > 0, 1.0, -1.0)
    D, lin = Design(X, y), rng.normal(size=d) * 1e-3
    multi = certify.certified_solve(D, Logistic(), 1e-4, lin, 1e-11, 1.0)
    cold = certify.certified_solve(D, Logistic(), 1e-4, lin, 1e-11, 1.0, w0=np.zeros(d))
    assert multi.certified and cold.certified and multi.n_subsample_evaluations > 0
    assert multi.n_evaluations < cold.n_evaluations
    Xh = rng.normal(size=(100, 3000))
    Xh /= np.linalg.norm(Xh, axis=1)[:, None]
    high = certify.certified_solve(Design(Xh, np.sign(Xh[:, 0] + 1e-3)), Logistic(), 1e-2, np.zeros(3000), 1e-10, 1.0)
    assert high.certified


def test_sampled_hessian_preconditions_like_the_hessian():
    """The float32 Hessian of a systematic row sample, reweighted to the total, is within a few percent of the full
    Hessian in the preconditioned norm (|| H_s^{-1} H - I || small) on rows in random order."""
    from scipy.linalg import cho_solve

    from dpkernels.solvers.smooth import Design, _curvature

    rng = np.random.default_rng(8)
    n, d, lam = 200_000, 10, 1e-4
    X = rng.normal(size=(n, d))
    X /= np.maximum(1.0, np.linalg.norm(X, axis=1))[:, None]
    y = np.where(X[:, 0] > 0, 1.0, -1.0)
    D, w = Design(X, y), rng.normal(size=d)
    fac = D.sampled_hessian_factor(Logistic(), w, lam, 20_000)
    H = D.hessian(_curvature(Logistic(), D.matvec(w)), lam)
    assert np.linalg.norm(cho_solve(fac.chol, H) - np.eye(d), 2) < 0.1


def test_hinge_keeps_solving_where_every_partial_stage_fails(monkeypatch):
    """Above the cvxpy fallback's size, a solve whose working sets, active-set polish and dual recovery all fail (as
    on shuttle's one-against-all parts, whose margins crowd 10,000 of 50,000 points within 1e-4) is finished by the
    exact solve of the whole dual and certified, instead of being refused: a refusal would publish a fact about
    the data (ERRATA F3)."""
    from dpkernels.solvers import hinge as solvers

    def stalled_pdas(A, upper, upper_set, lower_set, max_iter=10):
        alpha = np.where(upper_set, upper, 0.0)
        w = A.combine(alpha)
        return alpha, w, A.margins(w), 1, False

    monkeypatch.setattr(solvers, "_working_set_qp", lambda *a, **k: None)
    monkeypatch.setattr(solvers, "_pdas", stalled_pdas)
    monkeypatch.setattr(solvers, "_recover_duals", lambda *a, **k: None)
    rng = np.random.default_rng(11)
    X = rng.normal(size=(solvers.CVXPY_FALLBACK_MAX_N + 1000, 6))
    X /= np.maximum(1.0, np.linalg.norm(X, axis=1))[:, None]
    y = np.where(X[:, 0] + 0.5 * rng.normal(size=len(X)) > 0, 1.0, -1.0)
    sol = solve_hinge_primal(X, y, 10.0, distance_tol=1e-5)
    assert sol.converged and sol.distance_bound <= 1e-5
