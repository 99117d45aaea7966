"""The numba SMO solver against scikit-learn's SVC and cvxopt's generic QP solver."""

import inspect
import os
import subprocess
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest
from sklearn.exceptions import ConvergenceWarning
from sklearn.svm import SVC

from bci_universum.solvers import smo_solve
from bci_universum.solvers.kernels import KERNEL_CODES, kernel_matrix
from bci_universum.solvers.smo import _kernel_points

from ._reference import cvxopt_objective, usvm_dual

ROOT = Path(__file__).resolve().parents[3]


@pytest.mark.parametrize("kernel", ["linear", "rbf", "poly"])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_plain_svm_matches_sklearn_svc(kernel, seed):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(120, 5))
    y = np.where(X[:, 0] - X[:, 1] + 0.8 * rng.normal(size=120) > 0, 1.0, -1.0)
    params = {"gamma": 0.3, "degree": 3, "coef0": 1.0}
    res = smo_solve(y, -np.ones(120), np.full(120, 2.0), X, kernel=kernel, tol=1e-7, **params)
    svc = SVC(C=2.0, kernel=kernel, tol=1e-7, **params).fit(X, y)
    X_test = rng.normal(size=(60, 5))
    f = kernel_matrix(X_test, X, kernel, **params) @ (y * res.alpha) + res.intercept
    f_ref = svc.decision_function(X_test)
    assert res.converged
    np.testing.assert_allclose(f, f_ref, atol=1e-5 * np.abs(f_ref).max())


@pytest.mark.slow(seconds=15)
@pytest.mark.parametrize("kernel", ["rbf", "poly"])
def test_defaults_are_libsvm_s(kernel):
    """Without options: the RBF kernel, gamma 1 and libsvm's defaults (tol 1e-3, degree 3,
    coef0 0, shrinking, 200 MB): SVC's decision function to what that tolerance leaves (both
    solutions stop ~1e-3 from the optimum; a changed default moves it by 10 % or more)."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(60, 3))
    y = np.where(X[:, 0] - X[:, 1] + 0.8 * rng.normal(size=60) > 0, 1.0, -1.0)
    options = {"kernel": "poly"} if kernel == "poly" else {}  # rbf: the default
    res = smo_solve(y, -np.ones(60), np.full(60, 2.0), X, **options)
    svc = SVC(C=2.0, kernel=kernel, gamma=1.0).fit(X, y)
    X_test = rng.normal(size=(40, 3))
    f = kernel_matrix(X_test, X, kernel, gamma=1.0) @ (y * res.alpha) + res.intercept
    f_ref = svc.decision_function(X_test)
    assert res.converged
    np.testing.assert_allclose(f, f_ref, atol=0.02 * np.abs(f_ref).max())


@pytest.mark.parametrize("kernel", ["linear", "rbf"])
@pytest.mark.parametrize("weighted", [False, True])
def test_offset_with_every_variable_at_a_bound_matches_sklearn_svc(kernel, weighted):
    """Small C (as in a grid search) leaves no free variable: the offset then comes from the
    bounds of the feasible interval, and must still be libsvm's, sign included. Points far on
    their side (linear kernel) stay at 0; a zero sample weight (upper 0) fixes a variable,
    which then bounds nothing (libsvm drops the sample)."""
    rng = np.random.default_rng(0)
    y = np.repeat([-1.0, 1.0], 22)
    X = rng.normal(size=(44, 3))
    X[:, 0] += 0.6 * y + 2.0  # off-centre classes: an offset clearly away from 0
    X[[0, 1, -2, -1], 0] = 40.0 * y[[0, 1, -2, -1]]
    w = np.ones(44)
    if weighted:
        w[[3, 6, 25, 28]] = 0.0  # as many per class: the others, at C, stay balanced
    C = 0.01
    res = smo_solve(y, -np.ones(44), C * w, X, kernel=kernel, gamma=0.3, tol=1e-7)
    assert not ((res.alpha > 0) & (res.alpha < C * w)).any()
    if kernel == "linear":
        assert np.all(res.alpha[[0, 1, -2, -1]] == 0.0)
    svc = SVC(C=C, kernel=kernel, gamma=0.3, tol=1e-7).fit(X, y, sample_weight=w)
    assert abs(svc.intercept_[0]) > 1e-3
    assert res.intercept == pytest.approx(svc.intercept_[0], abs=1e-7)
    X_test = rng.normal(size=(30, 3))
    f = kernel_matrix(X_test, X, kernel, gamma=0.3) @ (y * res.alpha) + res.intercept
    np.testing.assert_allclose(f, svc.decision_function(X_test), atol=1e-7)


@pytest.mark.parametrize("seed", range(12))
def test_universum_dual_matches_cvxopt_and_kkt_holds(seed):
    points, y, p, upper, index, eps = usvm_dual(seed)
    kernel = "rbf" if seed % 2 else "linear"
    equality = seed % 3 != 0
    res = smo_solve(
        y, p, upper, points, index=index, kernel=kernel, gamma=0.5, tol=1e-9, equality=equality
    )
    K = kernel_matrix(points, kernel=kernel, gamma=0.5)[np.ix_(index, index)]
    ref = cvxopt_objective(K, y, p, upper, equality)
    assert abs(res.objective - ref) <= 1e-6 * abs(ref)
    alpha = res.alpha
    assert np.all(alpha >= 0) and np.all(alpha <= upper)
    if equality:
        assert abs(y @ alpha) < 1e-10 * alpha.sum()
    else:
        assert res.intercept == 0.0

    # decision values on the kernel points
    m = int(np.sum(p < 0))
    q = (len(y) - m) // 2
    Kp = kernel_matrix(points, kernel=kernel, gamma=0.5)
    coef = np.zeros(len(points))
    np.add.at(coef, index, y * alpha)
    f = Kp @ coef + res.intercept
    tol, C = 1e-6, upper[0]
    margin = y[:m] * f[:m]
    a_l = alpha[:m]
    assert np.all(margin[a_l <= 0] >= 1 - tol)
    assert np.all(margin[a_l >= C] <= 1 + tol)
    free = (a_l > 0) & (a_l < C)
    assert np.all(np.abs(margin[free] - 1) <= tol)
    # universum points (notes §4): inside the tube both copies are 0, outside one is at C_U
    fz, a_plus, a_minus, C_u = f[m:], alpha[m : m + q], alpha[m + q :], upper[m]
    inside = np.abs(fz) < eps - tol
    assert np.all(a_plus[inside] == 0) and np.all(a_minus[inside] == 0)
    above, below = fz > eps + tol, fz < -eps - tol
    assert np.all(a_minus[above] == C_u) and np.all(a_plus[above] == 0)
    assert np.all(a_plus[below] == C_u) and np.all(a_minus[below] == 0)
    if eps > 0:
        assert np.all(np.minimum(a_plus, a_minus) == 0)


def test_cache_shrinking_precomputed_and_callable_give_the_same_solution():
    points, y, p, upper, index, _ = usvm_dual(3, m=80, q=30)
    kw = {"index": index, "gamma": 0.4, "tol": 1e-9}
    ref = smo_solve(y, p, upper, points, kernel="rbf", **kw)
    K = kernel_matrix(points, kernel="rbf", gamma=0.4)
    variants = [
        smo_solve(y, p, upper, points, kernel="rbf", shrinking=False, **kw),
        smo_solve(y, p, upper, K, kernel="precomputed", **kw),
        smo_solve(y, p, upper, points, kernel=lambda A, B: A @ B.T, **kw),
    ]
    for res in variants[:2]:
        assert abs(res.objective - ref.objective) <= 1e-9 * abs(ref.objective)
        assert abs(res.intercept - ref.intercept) <= 1e-6
    lin = smo_solve(y, p, upper, points, kernel="linear", **kw)
    assert abs(variants[2].objective - lin.objective) <= 1e-9 * abs(lin.objective)


@pytest.mark.parametrize("kernel", ["rbf", "linear", "poly"])
@pytest.mark.parametrize("seed", [0, 1])
def test_small_cache_matches_cvxopt(kernel, seed):
    """A cache smaller than the kernel matrix: LRU evictions, rows cut to the active points
    after shrinking and extended when they grow back. At this tolerance rows stay float64:
    the optimum is the full cache's and cvxopt's to 1e-9."""
    points, y, p, upper, index, _ = usvm_dual(seed, m=120, q=40)
    kw = {"index": index, "kernel": kernel, "gamma": 0.4, "coef0": 1.0, "tol": 1e-9}
    K = kernel_matrix(points, kernel=kernel, gamma=0.4, coef0=1.0)[np.ix_(index, index)]
    ref = cvxopt_objective(K, y, p, upper, True)
    full = smo_solve(y, p, upper, points, **kw)
    small = smo_solve(y, p, upper, points, cache_size=0.02, **kw)  # 20 of 200 rows
    assert small.converged
    assert abs(full.objective - ref) <= 1e-9 * abs(ref)
    assert abs(small.objective - ref) <= 1e-9 * abs(ref)
    np.testing.assert_allclose(small.alpha, full.alpha, atol=1e-7 * upper.max())


def test_offset_is_zero_when_every_variable_is_fixed():
    """Zero weight on every sample (upper 0) leaves no variable to bound the offset: the
    machine is the zero function, its offset included, not an arbitrary constant."""
    X = np.random.default_rng(0).normal(size=(4, 2))
    res = smo_solve(np.array([1.0, -1.0, 1.0, -1.0]), -np.ones(4), np.zeros(4), X)
    assert res.converged
    np.testing.assert_array_equal(res.alpha, 0.0)
    assert res.intercept == 0.0


@pytest.mark.parametrize(("seed", "m"), [(7, 60), (5, 120)])
def test_rows_carried_over_after_a_full_unshrink_match_cvxopt(seed, m):
    """Linear rows in a cache of a fifth of them, at tol 1e-6: rows computed over the short
    prefix of an early point order are carried over to an order set after the run made every
    point active again, whose first points include ones past that prefix (each row keeps only
    its entries up to the first such point). The optimum is cvxopt's to 1e-9."""
    points, y, p, upper, index, _ = usvm_dual(seed, m=m, q=20)
    ref = cvxopt_objective(
        kernel_matrix(points, kernel="linear")[np.ix_(index, index)], y, p, upper, True
    )
    res = smo_solve(y, p, upper, points, index=index, kernel="linear", tol=1e-6, cache_size=0.02)
    assert res.converged
    assert abs(res.objective - ref) <= 1e-9 * abs(ref)


def test_option_defaults_are_svcs():
    """The defaults the docstring calls libsvm's are scikit-learn SVC's."""
    defaults = inspect.signature(smo_solve).parameters
    svc = SVC()
    for name in ("tol", "degree", "coef0", "shrinking", "cache_size", "max_iter"):
        assert defaults[name].default == getattr(svc, name), name


def test_precomputed_kernel_with_a_small_cache_matches_cvxopt():
    """A precomputed Gram matrix is read in place, whatever the cache size: its rows are in
    the points' own order, which therefore never changes (no re-layout) even when a row per
    point would not fit in the cache. The optimum is cvxopt's to 1e-9."""
    points, y, p, upper, index, _ = usvm_dual(0, m=120, q=40)
    K = kernel_matrix(points, kernel="rbf", gamma=0.4)
    ref = cvxopt_objective(K[np.ix_(index, index)], y, p, upper, True)
    kw = {"index": index, "kernel": "precomputed", "tol": 1e-9, "cache_size": 0.02}
    res = smo_solve(y, p, upper, K, **kw)
    assert res.converged
    assert abs(res.objective - ref) <= 1e-9 * abs(ref)


@pytest.mark.parametrize(("seed", "offset"), [(0, 0.0), (2, 1000.0)])
def test_float32_rows_leave_the_solution_exact(seed, offset):
    """RBF rows in float32 (tol ≥ 1e-4; here with a small cache too): the gradient accumulates
    their rounding (~1e-6, first order in the objective computed from it) but the solution is
    that of float64 rows (tol just below 1e-4): its exact objective agrees to 1e-10, second
    order in that drift. The rows come from centred points: data far from the origin (squared
    norms ~1e6, float32 distances off by ~0.1 otherwise) changes nothing."""
    points, y, p, upper, index, _ = usvm_dual(seed, m=120, q=40)
    points = points + offset
    kw = {"index": index, "kernel": "rbf", "gamma": 0.4}
    # the reference kernel from centred points too (translation invariant): accurate to ~1e-15
    K = kernel_matrix(points - points.mean(axis=0), kernel="rbf", gamma=0.4)
    Q = np.outer(y, y) * K[np.ix_(index, index)]
    full = smo_solve(y, p, upper, points, tol=0.99e-4, **kw)
    small = smo_solve(y, p, upper, points, tol=1e-4, cache_size=0.02, **kw)
    exact = [0.5 * r.alpha @ Q @ r.alpha + p @ r.alpha for r in (full, small)]
    drift = np.abs(Q @ small.alpha + p - small.gradient).max()
    assert 1e-9 < drift < 1e-5  # float32 rows were used (float64 ones drift ~1e-14)
    assert np.abs(Q @ full.alpha + p - full.gradient).max() < 1e-12  # and float64 ones here
    assert abs(exact[1] - exact[0]) <= 1e-10 * abs(exact[0])
    assert abs(small.objective - exact[1]) <= 1e-7 * abs(exact[1])


@pytest.mark.parametrize("tol", [1e-4, 0.99e-4])
@pytest.mark.parametrize("rows", [2, 10**4])
def test_float32_rows_exactly_from_tol_1e_4_whatever_the_cache(tol, rows):
    """RBF rows go float32 at tol ≥ 1e-4, as in libsvm, and stay float64 below, whether the
    cache holds two float64 rows or ten thousand times every row. The gradient tells which:
    its drift from Qα + p is float64 rounding (~1e-15) or float32's (~1e-7)."""
    points, y, p, upper, index, _ = usvm_dual(0, m=24, q=8)
    n = len(points)
    res = smo_solve(
        y, p, upper, points, index=index, gamma=0.4, tol=tol, cache_size=rows * 8 * n / 2**20
    )
    Q = np.outer(y, y) * kernel_matrix(points, kernel="rbf", gamma=0.4)[np.ix_(index, index)]
    drift = np.abs(Q @ res.alpha + p - res.gradient).max()
    assert drift > 1e-9 if tol >= 1e-4 else drift < 1e-12


@pytest.mark.parametrize(
    ("kernel", "tol", "itemsize"), [("rbf", 1e-3, 4), ("rbf", 1e-5, 8), ("linear", 1e-3, 8)]
)
def test_cache_size_is_megabytes_of_rows(kernel, tol, itemsize):
    """``cache_size`` megabytes (2²⁰ bytes) hold as many entries as rows of the cache's dtype
    fit in them: float32 RBF rows at tol ≥ 1e-4 take twice as many as float64 ones."""
    _, _, empty, entries = _kernel_points(np.zeros((5, 3)), KERNEL_CODES[kernel], 1.5, tol)
    assert empty.itemsize == itemsize
    assert entries == int(1.5 * 2**20) // itemsize


def test_fit_does_not_depend_on_blas_threads():
    """Kernel rows are numba loops, never BLAS calls: one and two BLAS threads give the same
    bits (each setting in its own process, as BLAS reads it at start-up)."""
    script = (
        "import sys, numpy as np\n"
        "sys.path.insert(0, 'tests/bci_universum/solvers')\n"
        "from _reference import usvm_dual\n"
        "from bci_universum.solvers import smo_solve\n"
        "points, y, p, upper, index, _ = usvm_dual(7, m=150, q=60, d=20)\n"
        "out = []\n"
        "for cache in (200.0, 0.05):\n"
        "    r = smo_solve(y, p, upper, points, index=index, gamma=0.1, cache_size=cache)\n"
        "    out += [r.alpha.tobytes().hex(), repr(r.intercept)]\n"
        "print(' '.join(out))\n"
    )
    runs = []
    for threads in ["1", "2"]:
        env = {**os.environ, "OPENBLAS_NUM_THREADS": threads, "OMP_NUM_THREADS": threads}
        env["PYTHONPATH"] = str(ROOT)
        proc = subprocess.run(
            [sys.executable, "-c", script],
            cwd=ROOT,
            env=env,
            capture_output=True,
            text=True,
            timeout=300,
            check=True,
        )
        runs.append(proc.stdout.strip().splitlines()[-1])
    assert runs[0] == runs[1]


@pytest.mark.parametrize("kernel", ["rbf", "linear"])
def test_warm_start_and_gradient(kernel):
    """A warm start at the optimum stops at once, its gradient Qα + p built from alpha0 (by
    rows, or for the linear kernel from w = Σ y_j α_j x_j)."""
    points, y, p, upper, index, _ = usvm_dual(4)
    kw = {"index": index, "kernel": kernel, "gamma": 0.5, "tol": 1e-9}
    res = smo_solve(y, p, upper, points, **kw)
    again = smo_solve(y, p, upper, points, alpha0=res.alpha, **kw)
    assert again.n_iter <= 2
    assert abs(again.objective - res.objective) <= 1e-12 * abs(res.objective)
    Q = np.outer(y, y) * kernel_matrix(points, kernel=kernel, gamma=0.5)[np.ix_(index, index)]
    for r in (res, again):
        np.testing.assert_allclose(r.gradient, Q @ r.alpha + p, atol=1e-10)


@pytest.mark.parametrize("max_iter", [0, 3, 200])
def test_iteration_cap_warns(max_iter):
    """Stopped by the cap (the run needs ~300 updates): a warning, and the gradient returned is
    still Qα + p, also when shrinking has set variables aside (after 71 updates) and the
    small cache kept it on the active points only."""
    points, y, p, upper, index, _ = usvm_dual(5)
    kw = {"index": index, "max_iter": max_iter, "tol": 1e-9, "cache_size": 0.005}
    with pytest.warns(ConvergenceWarning, match=f"max_iter={max_iter} "):
        res = smo_solve(y, p, upper, points, **kw)
    assert not res.converged and res.n_iter == max_iter
    Q = np.outer(y, y) * kernel_matrix(points, kernel="rbf")[np.ix_(index, index)]
    np.testing.assert_allclose(res.gradient, Q @ res.alpha + p, atol=1e-10)


@pytest.mark.parametrize("kernel", ["rbf", "linear"])
def test_capped_run_resumes_to_the_optimum(kernel):
    """A run stopped by the cap, resumed from its α with a small cache: the warm start's part
    of the gradient from the variables at their bound (rebuilt from it once shrinking has cut
    the cache to the active points) is right, and the run ends at cvxopt's optimum."""
    points, y, p, upper, index, _ = usvm_dual(5)
    kw = {"index": index, "kernel": kernel, "tol": 1e-9, "cache_size": 0.005}
    with pytest.warns(ConvergenceWarning):
        capped = smo_solve(y, p, upper, points, max_iter=40, **kw)
    assert np.any(capped.alpha == upper)
    res = smo_solve(y, p, upper, points, alpha0=capped.alpha, **kw)
    K = kernel_matrix(points, kernel=kernel)[np.ix_(index, index)]
    ref = cvxopt_objective(K, y, p, upper, True)
    assert res.converged and res.n_iter > 71  # shrinking has run
    assert abs(res.objective - ref) <= 1e-9 * abs(ref)
    np.testing.assert_allclose(res.gradient, np.outer(y, y) * K @ res.alpha + p, atol=1e-10)


def test_gradient_rebuilt_past_a_short_prefix_counts_each_bound_variable_once():
    """Many labelled variables at their upper bound while a small cache has cut the point
    order to the active prefix: rebuilding the gradient past it adds the free variables'
    rows to ``Fbar``, which already holds those at the bound (counting them again moves the
    run to another problem's optimum). The optimum is cvxopt's to 1e-9."""
    for seed in (2, 3):
        points, y, p, upper, index, _ = usvm_dual(
            seed, m=120, q=40, noise=1.5, costs=(0.1, 0.5, 0.2)
        )
        K = kernel_matrix(points, kernel="linear")[np.ix_(index, index)]
        ref = cvxopt_objective(K, y, p, upper, True)
        kw = {"index": index, "kernel": "linear", "tol": 1e-6, "cache_size": 0.02}
        res = smo_solve(y, p, upper, points, **kw)
        assert res.converged and np.sum(res.alpha >= upper) >= 100
        assert abs(res.objective - ref) <= 1e-9 * abs(ref)


@pytest.mark.parametrize(
    ("alpha_a", "g_a", "g_b"),
    [
        (0.5, 2.0, -1.5),  # b's unclipped step decreases more than a's step clipped at 0
        (0.1, 2.0, -0.5),  # a's short clipped step decreases more than b's unclipped one
    ],
)
def test_without_the_equality_an_update_takes_the_largest_decrease(alpha_a, g_a, g_b):
    """Without the equality one update moves the single variable whose Newton step, clipped
    to its box, decreases the objective most, to that point. Two variables with Q = I, from
    a warm start with gradients ``g_a`` (a free variable stepping down to 0) and ``g_b`` (one
    at 0): the decreases are evaluated on the objective itself."""
    alpha0 = np.array([alpha_a, 0.0])
    upper = np.array([1.0, 10.0])
    p = np.array([g_a - alpha_a, g_b])  # g = Qα + p
    target = np.clip(alpha0 - (alpha0 + p), 0.0, upper)  # the Newton steps, clipped
    steps = alpha0 + np.diag(target - alpha0)  # row t: variable t moved
    decrease = (0.5 * alpha0 @ alpha0 + p @ alpha0) - (0.5 * np.sum(steps**2, 1) + steps @ p)
    assert abs(decrease[0] - decrease[1]) > 0.05
    with pytest.warns(ConvergenceWarning):
        res = smo_solve(
            np.ones(2), p, upper, np.eye(2), kernel="linear", equality=False, max_iter=1,
            alpha0=alpha0,
        )  # fmt: skip
    np.testing.assert_allclose(res.alpha, steps[np.argmax(decrease)], atol=1e-15)


@pytest.mark.parametrize("sign", [1.0, -1.0])
def test_ties_in_the_working_set_go_to_the_last_variable(sign):
    """As libsvm's selection (``>=`` and ``<=`` in its scans), the working set takes the last
    of tied variables. From α = 0, −yG = 1 for every positive variable, and variables 1 and 3
    are one point given twice. With labels +−+− they tie for ``j`` (``i`` = 2, the last of the
    positives 0 and 2); with labels −+−+ they tie for ``i`` (``j`` = 2, nearer to them than 0).
    Either way one update moves α₂ = α₃ to the closed-form step min(C, 2 / (k₂₂ + k₃₃ − 2k₂₃))
    (to float32 rounding: the rows are float32 at the default tol)."""
    X = np.array([[0.0, 1.0], [1.0, 0.0], [0.3, 0.2], [1.0, 0.0]])
    y = sign * np.array([1.0, -1.0, 1.0, -1.0])
    K = kernel_matrix(X, kernel="rbf", gamma=0.5)
    step = min(10.0, 2.0 / (K[2, 2] + K[3, 3] - 2.0 * K[2, 3]))
    with pytest.warns(ConvergenceWarning):
        res = smo_solve(y, -np.ones(4), np.full(4, 10.0), X, gamma=0.5, max_iter=1)
    np.testing.assert_allclose(res.alpha, [0.0, 0.0, step, step], rtol=1e-6)


def test_infinite_bounds_hard_margin():
    """C = ∞ on separable data gives the hard-margin SVM (all margins ≥ 1, SVs at 1)."""
    rng = np.random.default_rng(6)
    X = np.concatenate([rng.normal(size=(20, 2)) + 4, rng.normal(size=(20, 2)) - 4])
    y = np.r_[np.ones(20), -np.ones(20)]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        res = smo_solve(y, -np.ones(40), np.full(40, np.inf), X, kernel="linear", tol=1e-9)
    f = X @ (X.T @ (y * res.alpha)) + res.intercept
    assert np.all(y * f >= 1 - 1e-6)
    np.testing.assert_allclose(y[res.alpha > 0] * f[res.alpha > 0], 1.0, atol=1e-6)


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"y": np.array([1.0, 0.0])}, "only -1 and \\+1"),
        ({"p": np.array([-1.0])}, "same length"),
        ({"upper": np.array([1.0, -1.0])}, "upper bounds"),
        ({"p": np.array([-1.0, np.nan])}, "finite"),
        ({"index": np.array([0, 5])}, "index values"),
        ({"tol": 0.0}, "tol must be positive"),
        ({"kernel": "cosine"}, "Unknown kernel"),
        ({"alpha0": np.array([1.0, 0.0])}, "y @ alpha0"),
        ({"points": np.ones((2, 3)), "kernel": "precomputed"}, "square"),
        ({"points": np.ones(2)}, "2-D"),
    ],
)
def test_bad_input(kwargs, match):
    args = {
        "y": np.array([1.0, -1.0]),
        "p": -np.ones(2),
        "upper": np.ones(2),
        "points": np.eye(2),
    }
    args.update(kwargs)
    with pytest.raises(ValueError, match=match):
        smo_solve(args.pop("y"), args.pop("p"), args.pop("upper"), args.pop("points"), **args)


def test_gradient_rebuilt_over_several_tiles_is_exact():
    """Separable classes in 512 dimensions: shrinking sets aside 60–80 points, more than a tile
    of the gradient rebuild holds (64 points of 512 float64 coordinates), so growing them back
    crosses tiles; the solution is that of the QP solver and of a run without shrinking."""
    rng = np.random.default_rng(0)
    m, q, d = 400, 40, 512
    y_lab = np.where(np.arange(m) % 2 == 0, 1.0, -1.0)
    X = rng.normal(size=(m, d))
    X[:, :8] += 1.5 * y_lab[:, None]
    points = np.concatenate([X, 0.5 * rng.normal(size=(q, d))])
    y = np.concatenate([y_lab, np.ones(q), -np.ones(q)])
    p = np.concatenate([-np.ones(m), np.full(2 * q, 0.1)])
    upper = np.concatenate([np.ones(m), np.full(2 * q, 0.5)])
    index = np.concatenate([np.arange(m), np.arange(m, m + q), np.arange(m, m + q)])
    kw = {"index": index, "kernel": "rbf", "gamma": 1 / d, "tol": 1e-6, "cache_size": 0.5}
    shrunk = smo_solve(y, p, upper, points, **kw)
    plain = smo_solve(y, p, upper, points, shrinking=False, **kw)
    K = kernel_matrix(points, kernel="rbf", gamma=1 / d)[np.ix_(index, index)]
    ref = cvxopt_objective(K, y, p, upper, True)
    assert shrunk.converged
    assert abs(shrunk.objective - ref) <= 1e-8 * abs(ref)
    np.testing.assert_allclose(shrunk.alpha, plain.alpha, atol=1e-5)


def test_repeated_point_with_both_labels_matches_sklearn_svc():
    """A point given with both labels: the pair has zero curvature (Q_ii + Q_jj − 2Q_ij = 0)
    and the step takes libsvm's τ for it."""
    rng = np.random.default_rng(8)
    X = rng.normal(size=(30, 3))
    y = np.where(X[:, 0] + 0.5 * rng.normal(size=30) > 0, 1.0, -1.0)
    X = np.concatenate([X, X[y > 0][-1:]])  # the last +1 point again, labelled -1
    y = np.append(y, -1.0)
    res = smo_solve(y, -np.ones(31), np.full(31, 1.5), X, kernel="linear", tol=1e-9)
    svc = SVC(C=1.5, kernel="linear", tol=1e-9).fit(X, y)
    assert res.converged
    np.testing.assert_allclose(
        X @ (X.T @ (y * res.alpha)) + res.intercept, svc.decision_function(X), atol=1e-6
    )


def test_variables_fixed_at_zero_without_equality_match_cvxopt():
    """``upper = 0`` fixes a variable: without the equality the coordinate selection skips it
    (its gradient pulls it up: counted as a violation it would never stop) and the rest is the
    optimum of the problem without it."""
    points, y, p, upper, index, _ = usvm_dual(9)
    upper[::4] = 0.0
    res = smo_solve(
        y, p, upper, points, index=index, kernel="rbf", gamma=0.5, tol=1e-9, equality=False
    )
    assert res.converged
    assert np.all(res.alpha[::4] == 0.0)
    keep = upper > 0
    K = kernel_matrix(points, kernel="rbf", gamma=0.5)[np.ix_(index[keep], index[keep])]
    ref = cvxopt_objective(K, y[keep], p[keep], upper[keep], False)
    assert abs(res.objective - ref) <= 1e-6 * abs(ref)


@pytest.mark.parametrize("label", [1.0, -1.0])
def test_offset_of_a_single_class_is_the_end_of_its_kkt_interval(label):
    """One class only: the equality forces α = 0, f = b, and the margins y·b ≥ 1 bound the
    offset on one side only; it is the finite end, b = y."""
    X = np.random.default_rng(10).normal(size=(6, 2))
    y = np.full(6, label)
    res = smo_solve(y, -np.ones(6), np.ones(6), X, kernel="linear")
    np.testing.assert_array_equal(res.alpha, 0.0)
    assert res.intercept == label


@pytest.mark.parametrize("equality", [True, False])
def test_zero_curvature_steps_to_the_bound_at_once(equality):
    """Along a direction of zero curvature the objective is linear: the exact line search goes
    to the box in one update. With the equality, one point with both labels (Q = k·[[1, −1],
    [−1, 1]], the pair's curvature 0); without it, the origin under the linear kernel
    (Q_ii = 0). Either way α = C is the closed-form optimum (the objective is −Σα there), and
    τ stands for the curvature: no division by zero."""
    if equality:
        y, X = np.array([1.0, -1.0]), np.ones((2, 3))
    else:
        y, X = np.array([1.0]), np.zeros((1, 3))
    n = len(y)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        res = smo_solve(y, -np.ones(n), np.full(n, 5.0), X, kernel="linear", equality=equality)
    np.testing.assert_array_equal(res.alpha, 5.0)
    assert res.n_iter == 1 and res.converged


@pytest.mark.parametrize("equality", [True, False])
def test_a_violation_of_exactly_tol_takes_a_step(equality):
    """As libsvm, the run stops when the largest KKT violation is *below* ``tol``: at α = 0 the
    violation is exactly ``tol`` (a power of two, so every sum is exact), and one update goes
    to the closed-form optimum. With the equality, α₁ = α₂ = a on two points with k = [[1, 0],
    [0, 0]] (objective ½a² − tol·a); without it, one point with k = 1 (½α² − tol·α): a = tol
    either way."""
    tol = 2.0**-10
    if equality:
        y, X = np.array([1.0, -1.0]), np.array([[1.0], [0.0]])
    else:
        y, X = np.array([1.0]), np.array([[1.0]])
    n = len(y)
    p = np.full(n, -tol / n)
    res = smo_solve(y, p, np.ones(n), X, kernel="linear", equality=equality, tol=tol)
    np.testing.assert_array_equal(res.alpha, tol)
    assert res.n_iter == 1 and res.converged


def test_a_warm_start_at_the_upper_bound_moves_to_the_optimum():
    """Without the equality, ½α² on [0, 1] from the warm start α = 1 (projected gradient
    exactly 1): one update reaches the closed-form minimiser α = 0."""
    one = np.ones(1)
    res = smo_solve(
        one, np.zeros(1), one, np.ones((1, 1)), kernel="linear", equality=False, alpha0=one
    )
    np.testing.assert_array_equal(res.alpha, 0.0)
    assert res.n_iter == 1 and res.converged


def test_options_are_keyword_only():
    with pytest.raises(TypeError):
        smo_solve(np.array([1.0, -1.0]), -np.ones(2), np.ones(2), np.eye(2), None)


def _row_cache(budget):
    """The kernel-row cache of five RBF points holding ``budget`` entries, and their kernel."""
    from bci_universum.solvers.kernels import KERNEL_CODES
    from bci_universum.solvers.smo import _kernel_points, _kernel_state

    points = np.random.default_rng(11).normal(size=(5, 3))
    X, sq, empty, _ = _kernel_points(points, KERNEL_CODES["rbf"], 200.0, 1e-9)
    kc, diag = _kernel_state(
        X, sq, np.empty((0, 0)), KERNEL_CODES["rbf"], 0.5, 3.0, 0.0, empty, budget
    )
    np.testing.assert_allclose(diag, 1.0)
    return kc, kernel_matrix(points, kernel="rbf", gamma=0.5)


@pytest.mark.parametrize(
    ("budget", "accesses"),
    [
        # no budget: the minimum, two rows
        (0, [(0, {0}), (1, {0, 1}), (2, {1, 2}), (1, {1, 2}), (3, {1, 3}), (0, {0, 3}),
             (3, {0, 3}), (4, {3, 4})]),
        # three rows: a hit moves a row from the middle of the list to its front
        (15, [(0, {0}), (1, {0, 1}), (2, {0, 1, 2}), (0, {0, 1, 2}), (3, {0, 2, 3}),
              (2, {0, 2, 3}), (4, {2, 3, 4}), (1, {1, 2, 4}), (0, {0, 1, 4})]),
    ],
)  # fmt: skip
def test_row_cache_drops_the_least_recently_used_row(budget, accesses):
    """Each row is the kernel's, a hit is not recomputed, and a miss in a full cache drops
    the row used longest ago."""
    from bci_universum.solvers.smo import _get_row

    kc, K = _row_cache(budget)
    rows, state = kc[3], kc[7]
    for point, cached in accesses:
        before = rows[point]
        row = _get_row(point, 5, kc)
        np.testing.assert_allclose(row, K[point], atol=1e-12)
        assert np.shares_memory(row, before) == (before.shape[0] > 0)  # a hit: no copy
        assert {a for a in range(5) if rows[a].shape[0]} == cached
        assert state[1] == 5 * len(cached) <= state[2]


def test_row_over_a_prefix_of_the_point_order_is_extended():
    """A row over a prefix of the point order (as after shrinking) is extended by the missing
    entries when a longer one is asked for."""
    from bci_universum.solvers.smo import _get_row

    kc, K = _row_cache(0)
    rows, state = kc[3], kc[7]
    _get_row(3, 5, kc)
    _get_row(4, 5, kc)
    for length, used in [(3, 5 + 3), (5, 5 + 5)]:
        np.testing.assert_allclose(_get_row(1, length, kc), K[1, :length], atol=1e-12)
        assert {a for a in range(5) if rows[a].shape[0]} == {1, 4}
        assert rows[1].shape[0] == length and state[1] == used


@pytest.mark.parametrize("have", [1, 3])
def test_row_over_a_prefix_is_a_hit_then_carried_over_to_a_new_order(have):
    """A row over a prefix of ``have`` points (one when a single point is left active) is
    returned from the cache while the order stays; once the active points are moved to the
    front of the order (:func:`_relayout`, after a shrink), it keeps only the entries of the
    points still in its prefix, and the others are computed."""
    from bci_universum.solvers.smo import _get_row, _relayout

    kc, K = _row_cache(0)
    rows, order, state = kc[3], kc[5], kc[7]
    row = _get_row(2, have, kc)
    np.testing.assert_allclose(row, K[2, :have], atol=1e-12)
    assert np.shares_memory(_get_row(2, have, kc), row) and state[1] == have
    # the variables still active are those of points 1 and 3
    index = np.array([1, 3])
    vpos, ones = index.copy(), np.ones(2)
    v = (ones, ones, ones, index, ones, index.copy(), vpos, ones, ones, np.ones(2, np.uint8))
    F, Fbar = np.arange(5.0), 10 * np.arange(5.0)
    _relayout(v, F, Fbar, 2, kc)
    np.testing.assert_array_equal(order, [1, 3, 0, 2, 4])
    np.testing.assert_array_equal(F, order)  # F and Fbar follow the points
    np.testing.assert_array_equal(Fbar, 10 * order)
    np.testing.assert_array_equal(vpos, [0, 1])
    assert state[0] == 2 and state[3] == 1
    np.testing.assert_allclose(_get_row(2, 2, kc), K[2, [1, 3]], atol=1e-12)
    assert rows[2].shape[0] == 2 and state[1] == 2
