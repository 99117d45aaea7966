"""The Crammer–Singer sequential dual solver: LIBLINEAR, cvxopt, KKT, kernels, no-JIT, errors."""

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from sklearn.exceptions import ConvergenceWarning
from sklearn.svm import LinearSVC

from bci_universum.solvers.crammer_singer import cs_solve
from bci_universum.solvers.kernels import kernel_matrix

from ._cs_reference import cvxopt_cs_dual, mu_svm_problem

ROOT = Path(__file__).resolve().parents[3]


def _violations(alpha, y, e, upper, scores_rows):
    g = scores_rows + e
    u = np.zeros_like(alpha)
    u[np.arange(len(y)), y] = upper
    movable = alpha < u
    g_min = np.where(movable, g, np.inf).min(axis=1)
    return np.where(np.isfinite(g_min), g.max(axis=1) - g_min, 0.0)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_plain_crammer_singer_is_liblinear(seed):
    """e = 1 − δ, C_i = C: the W of LinearSVC(crammer_singer, no intercept) to ~1e-8."""
    y, e, upper, points, _ = mu_svm_problem(seed, m=0, c=0.7)
    result = cs_solve(y, e, upper, points, tol=1e-10, max_iter=100_000, seed=seed)
    assert result.converged
    W = result.coef.T @ points
    ref = LinearSVC(
        multi_class="crammer_singer", fit_intercept=False, C=0.7, tol=1e-10, max_iter=1_000_000
    ).fit(points, y)
    np.testing.assert_allclose(W, ref.coef_, atol=1e-7 * np.abs(ref.coef_).max())


@pytest.mark.parametrize("kernel", ["linear", "rbf", "precomputed"])
@pytest.mark.parametrize("seed", [3, 4])
def test_dual_matches_cvxopt_with_universum_copies(kernel, seed):
    y, e, upper, points, index = mu_svm_problem(seed)
    # a zero point exercises the linear (A = 0) branch of the subproblem
    points[3] = 0.0 if kernel != "rbf" else points[3]
    K = kernel_matrix(points, None, "linear" if kernel == "precomputed" else kernel, gamma=0.1)
    given = K if kernel == "precomputed" else points
    result = cs_solve(
        y, e, upper, given, index=index, kernel=kernel, gamma=0.1, tol=1e-10, max_iter=100_000
    )
    alpha_ref, obj_ref = cvxopt_cs_dual(K[np.ix_(index, index)], y, e, upper)
    assert result.converged
    assert abs(result.objective - obj_ref) <= 1e-7 * max(1.0, abs(obj_ref))
    # the scores are unique even where α is not
    coef_ref = np.zeros((points.shape[0], e.shape[1]))
    np.add.at(coef_ref, index, alpha_ref)
    f_ref = K @ coef_ref
    np.testing.assert_allclose(result.scores, f_ref, atol=1e-5)
    np.testing.assert_allclose(result.scores, K @ result.coef, atol=1e-9)


@pytest.mark.parametrize("kernel", ["linear", "rbf"])
def test_kkt_conditions_hold(kernel):
    y, e, upper, points, index = mu_svm_problem(5, delta=0.0, c_u=2.0)
    tol = 1e-6
    result = cs_solve(
        y, e, upper, points, index=index, kernel=kernel, gamma=0.2, tol=tol, max_iter=100_000
    )
    assert result.converged
    alpha = result.alpha
    rows = np.arange(len(y))
    np.testing.assert_allclose(alpha.sum(axis=1), 0.0, atol=1e-12)
    own = alpha[rows, y]
    # the solver's clipping is exact; the row sums are rebalanced to zero, leaving rounding
    rounding = 1e-13 * upper.max()
    assert np.all(own >= -rounding) and np.all(own <= upper + rounding)
    others = alpha.copy()
    others[rows, y] = 0.0
    assert np.all(others <= rounding)
    assert np.any(own[y.size - 15 :] > 0), "some universum copies must be active"
    v = _violations(alpha, y, e, upper, result.scores[index])
    assert v.max() <= tol
    # the reported violation is that of the final state, not a bound from the last pass
    assert result.violation == pytest.approx(v.max(), rel=1e-6, abs=1e-12)


def _independent(seed, L=3):
    """Samples at mutually orthogonal points (no two interact): labelled ones, MU-SVM copies
    with margins Δ > 0 and Δ = 0, and one without cost, as (y, e, upper, points)."""
    rng = np.random.default_rng(seed)
    kinds = ["labelled"] * 6 + ["copy"] * 3 + ["flat copy"] * 2 + ["no cost"]
    n = len(kinds)
    y = rng.integers(0, L, n)
    other = 1.0 - np.eye(L)[y]
    e = np.array(
        [{"labelled": 1.0, "copy": -0.3, "flat copy": 0.0, "no cost": 1.0}[k] for k in kinds]
    )
    upper = np.array(
        [{"labelled": 0.8, "copy": 0.5, "flat copy": 0.5, "no cost": 0.0}[k] for k in kinds]
    )
    points = np.diag(rng.uniform(0.5, 2.0, n))
    return y, e[:, None] * other, upper, points


@pytest.mark.parametrize("seed", range(4))
def test_one_pass_solves_independent_samples(seed):
    """A pass solves each visited sample's block exactly and visits every sample once: when no
    two samples interact, one pass reaches cvxopt's optimum (unique: each block is strictly
    convex). At max_iter the final state is checked: converged, violation 0 up to rounding."""
    y, e, upper, points = _independent(seed)
    K = points @ points.T
    alpha_ref, _ = cvxopt_cs_dual(K, y, e, upper)
    for kernel, given in [("linear", points), ("precomputed", K)]:
        result = cs_solve(y, e, upper, given, kernel=kernel, max_iter=1, seed=seed)
        assert result.n_iter == 1 and result.converged and result.violation <= 1e-12
        np.testing.assert_allclose(result.alpha, alpha_ref, atol=1e-5)


@pytest.mark.parametrize("seed", range(3))
def test_passes_follow_liblinear_on_independent_samples(seed):
    """When no two samples interact the visiting order does not matter, so the passes are
    LIBLINEAR's: as many as LinearSVC(crammer_singer) takes, its W. With margins Δ < 1 (the
    problem of LinearSVC at C/Δ, scaled by Δ) the first pass's largest violation Δ is below
    the first shrinking threshold max(10 tol, 1): the second pass is the converged one."""
    y, e, upper, points = _independent(seed)
    y, e, upper, points = y[:6], e[:6], upper[:6], points[:6, :6]
    for tol in (1e-1, 1e-3):
        ref = LinearSVC(multi_class="crammer_singer", fit_intercept=False, C=0.8, tol=tol)
        ref.fit(points, y)
        # margins shifted by a constant per sample: the same problem (rows of α sum to 0)
        for shift in (0.0, -10.0):
            result = cs_solve(y, e + shift, upper, points, tol=tol, seed=seed)
            assert result.converged and result.n_iter == ref.n_iter_
            np.testing.assert_allclose(result.coef.T @ points, ref.coef_, atol=1e-12)
        ref.set_params(C=0.8 / 0.5).fit(points, y)
        result = cs_solve(y, 0.5 * e, upper, points, tol=tol * 0.01, seed=seed)
        assert result.converged and result.n_iter == 2
        np.testing.assert_allclose(result.coef.T @ points, 0.5 * ref.coef_, atol=1e-12)


def test_no_samples():
    """An empty problem: nothing to solve, converged at the first pass with violation 0."""
    result = cs_solve(np.zeros(0, int), np.zeros((0, 3)), np.zeros(0), np.zeros((0, 2)))
    assert result.converged and result.n_iter == 1 and result.violation == 0.0
    assert result.alpha.shape == (0, 3) and result.objective == 0.0


def test_samples_without_cost_stay_at_zero():
    """C_i = 0 pins α_i at 0 (no coordinate can move, violation 0): cvxopt's optimum."""
    y, e, upper, points, index = mu_svm_problem(8)
    upper[::4] = 0.0
    result = cs_solve(y, e, upper, points, index=index, tol=1e-9, max_iter=100_000)
    assert result.converged
    np.testing.assert_array_equal(result.alpha[::4], 0.0)
    K = kernel_matrix(points, None, "linear")
    _, obj_ref = cvxopt_cs_dual(K[np.ix_(index, index)], y, e, upper)
    assert abs(result.objective - obj_ref) <= 1e-7 * max(1.0, abs(obj_ref))
    v = _violations(result.alpha, y, e, upper, result.scores[index])
    assert v.max() <= 1e-9 and result.violation == pytest.approx(v.max(), abs=1e-12)


def test_zero_points_with_distinct_margins():
    """At φ(x_p) = 0 a sample's part of the dual is linear in α_i (the class of largest
    margin against its own, when that is smaller): cvxopt's optimum. A precomputed kernel with
    k(x_p, x_p) = 0 but other entries non-zero (indefinite) still gives scores K @ coef."""
    y, e, upper, points, _ = mu_svm_problem(10, m=0)
    zero = [2, 9, 17, 20]
    points[zero] = 0.0
    # labels 0, 1, 2, 2; the largest other margin first, last or between, or below its own
    e[zero] = [[0.1, 0.3, 0.8], [0.8, 0.1, 0.3], [0.8, 0.3, 0.1], [0.1, 0.3, 0.8]]
    result = cs_solve(y, e, upper, points, tol=1e-10)
    K = kernel_matrix(points, None, "linear")
    _, obj_ref = cvxopt_cs_dual(K, y, e, upper)
    assert result.converged
    assert abs(result.objective - obj_ref) <= 1e-7 * max(1.0, abs(obj_ref))
    K[zero, zero] = 0.0
    K[zero, 0] = K[0, zero] = 0.3
    result = cs_solve(y, e, upper, K, kernel="precomputed", tol=1e-6)
    assert np.abs(result.alpha[zero]).max() > 0
    np.testing.assert_allclose(result.scores, K @ result.coef, atol=1e-9)
    # a warm start whose zero-point rows are feasible but not their optimum
    start = result.alpha.copy()
    start[zero] = 0.0
    start[zero, y[zero]] = 0.5 * upper[zero]
    start[zero, (y[zero] + 1) % 3] = -0.5 * upper[zero]
    warm = cs_solve(y, e, upper, K, kernel="precomputed", tol=1e-6, alpha0=start)
    np.testing.assert_array_equal(warm.alpha[zero], result.alpha[zero])
    np.testing.assert_allclose(warm.scores, K @ warm.coef, atol=1e-9)


def test_margins_shifted_by_a_constant_per_sample():
    """Each row of α sums to 0, so adding a constant to a sample's margins changes nothing:
    the same solution in about as many passes (the optimality test compares margins, not
    their level)."""
    y, e, upper, points, index = mu_svm_problem(13, n_per=4, m=2)
    shift = np.random.default_rng(13).uniform(5.0, 10.0, (len(y), 1))
    a = cs_solve(y, e, upper, points, index=index, tol=1e-6, max_iter=100_000, seed=13)
    b = cs_solve(
        y, e + shift, upper, points, index=index, tol=1e-6, max_iter=2 * a.n_iter, seed=13
    )
    assert a.converged and b.converged
    np.testing.assert_allclose(b.scores, a.scores, atol=1e-9)
    assert b.objective == pytest.approx(a.objective, rel=1e-9)


def test_warm_start_and_seed_reach_the_same_scores():
    y, e, upper, points, index = mu_svm_problem(6)
    a = cs_solve(y, e, upper, points, index=index, tol=1e-10, max_iter=100_000, seed=1)
    b = cs_solve(y, e, upper, points, index=index, tol=1e-10, max_iter=100_000, seed=99)
    np.testing.assert_allclose(a.scores, b.scores, atol=1e-7)
    # a start 100 times within the tolerance stays within it after one pass's small updates
    warm = cs_solve(y, e, upper, points, index=index, tol=100 * a.violation, alpha0=a.alpha)
    assert warm.converged and warm.n_iter == 1
    np.testing.assert_allclose(warm.scores, a.scores, atol=1e-12)
    # a start already within tol (violations between 1e-12 and tol, large margins) also
    # needs one pass
    e *= 5.0
    a = cs_solve(y, e, upper, points, index=index, tol=1e-6, max_iter=100_000)
    assert a.violation > 1e-12
    assert cs_solve(y, e, upper, points, index=index, tol=1e-3, alpha0=a.alpha).n_iter == 1


def test_warm_start_at_a_large_scale():
    """Margins and costs scaled by s scale the solution by s: the scaled solution, whose rows
    sum to 0 only up to rounding at that scale, is a feasible warm start that needs one pass."""
    y, e, upper, points, index = mu_svm_problem(12)
    a = cs_solve(y, e, upper, points, index=index, tol=1e-9, max_iter=100_000)
    s = 1e4 / 3
    start = s * a.alpha
    assert np.abs(start.sum(axis=1)).max() > 0
    warm = cs_solve(y, s * e, s * upper, points, index=index, tol=1e-6 * s, alpha0=start)
    assert warm.converged and warm.n_iter == 1
    np.testing.assert_allclose(warm.scores, s * a.scores, atol=1e-8 * s)


def test_stop_rule_includes_tol():
    """The stop rule is violation <= tol. One sample at x = 1 with margins (0, 1): the
    optimum is α = (1/2, -1/2); a start 2⁻⁴² off it has the violation 2⁻⁴¹ exactly (binary
    fractions), which passes leave alone (below 1e-12): the solve stops at once for tol = 2⁻⁴¹.
    So it does at max_iter = 1 beside an independent copy of the sample starting at α = 0: the
    pass solves it exactly (violation 0) but saw its violation 1, and the final state decides."""
    y, e, upper, points = np.array([0]), np.array([[0.0, 1.0]]), np.array([1.0]), np.ones((1, 1))
    a = 0.5 - 2.0**-42
    start = np.array([[a, -a]])
    result = cs_solve(y, e, upper, points, tol=2.0**-41, alpha0=start)
    assert result.converged and result.n_iter == 1 and result.violation == 2.0**-41
    np.testing.assert_array_equal(result.alpha, start)
    y, e, upper = np.r_[y, y], np.r_[e, e], np.r_[upper, upper]
    start = np.r_[start, [[0.0, 0.0]]]
    result = cs_solve(y, e, upper, np.eye(2), tol=2.0**-41, alpha0=start, max_iter=1)
    assert result.converged and result.violation == 2.0**-41
    np.testing.assert_array_equal(result.alpha, [[a, -a], [0.5, -0.5]])


def test_one_class_has_no_dual():
    """L = 1: Σ_l α_il = 0 leaves α = 0, at zero points too."""
    y, e, upper, points, _ = mu_svm_problem(11, n_per=4, L=1, m=0)
    points[1] = 0.0
    result = cs_solve(y, e, upper, points, tol=1e-9)
    assert result.converged and np.all(result.alpha == 0) and result.objective == 0


def test_stops_at_max_iter_with_a_warning():
    y, e, upper, points, index = mu_svm_problem(7)
    with pytest.warns(ConvergenceWarning, match="max_iter=1"):
        result = cs_solve(y, e, upper, points, index=index, tol=1e-12, max_iter=1)
    assert not result.converged and result.n_iter == 1
    # the violation reported is that of the final state, not the largest one the pass saw
    v = _violations(result.alpha, y, e, upper, result.scores[index])
    assert result.violation == pytest.approx(v.max(), rel=1e-6)


def test_defaults_are_the_documented_ones():
    y, e, upper, points, index = mu_svm_problem(9, n_per=3, m=1)
    documented = {"gamma": 1.0, "degree": 3, "coef0": 0.0, "tol": 1e-3, "seed": 0}
    for kernel in ("linear", "poly"):
        a = cs_solve(y, e, upper, points, index=index, kernel=kernel)
        b = cs_solve(y, e, upper, points, index=index, kernel=kernel, **documented)
        np.testing.assert_array_equal(a.alpha, b.alpha)
        assert a.n_iter == b.n_iter and a.converged
    # the seed sets the visiting order: another seed, other iterates within tol
    a, c = (cs_solve(y, e, upper, points, index=index, seed=seed) for seed in (0, 1))
    assert not np.array_equal(a.alpha, c.alpha)
    with pytest.warns(ConvergenceWarning, match="max_iter=1000"):
        d = cs_solve(y[:6], e[:6], upper[:6], points[:6], tol=1e-300)
    assert d.n_iter == 1000 and not d.converged
    with pytest.raises(TypeError):  # keyword-only options
        cs_solve(y, e, upper, points, index)


def test_same_results_without_jit():
    """NUMBA_DISABLE_JIT=1 runs the same algorithm in Python (same visiting order)."""
    script = (
        "import json, numpy as np\n"
        "from bci_universum.solvers.crammer_singer import cs_solve\n"
        "rng = np.random.default_rng(0)\n"
        "X = rng.normal(size=(12, 3)); y = np.arange(12) % 3\n"
        "e = 1 - np.eye(3)[y]; e[-3:] = -0.1 * (1 - np.eye(3)[y[-3:]])\n"
        "up = np.r_[np.full(9, 1.0), np.full(3, 0.5)]\n"
        "out = {}\n"
        "for k in ['linear', 'rbf']:\n"
        "    r = cs_solve(y, e, up, X, kernel=k, gamma=0.5, tol=1e-9, max_iter=10000, seed=3)\n"
        "    out[k] = [r.alpha.tolist(), r.n_iter]\n"
        "print(json.dumps(out))\n"
    )
    runs = []
    for disable in ["0", "1"]:
        env = {**os.environ, "NUMBA_DISABLE_JIT": disable, "PYTHONPATH": str(ROOT)}
        proc = subprocess.run(
            [sys.executable, "-c", script],
            cwd=ROOT,
            env=env,
            capture_output=True,
            text=True,
            timeout=300,
            check=True,
        )
        runs.append(json.loads(proc.stdout.strip().splitlines()[-1]))
    for key in runs[0]:
        assert runs[0][key][1] == runs[1][key][1]
        np.testing.assert_allclose(runs[1][key][0], runs[0][key][0], atol=1e-9)


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"y": np.array([0, 3])}, "class indices"),
        ({"y": np.array([-1, 0])}, "class indices"),
        ({"y": np.array([0, 2])}, "class indices"),
        ({"upper": np.array([1.0, -1.0])}, "finite and >= 0"),
        ({"upper": np.array([1.0, np.inf])}, "finite and >= 0"),
        ({"e": np.ones((3, 2))}, "shapes"),
        ({"e": np.array([[0, np.nan], [1, 0]])}, "finite"),
        ({"index": np.array([0, 5])}, "index"),
        ({"tol": 0.0}, "tol must be positive"),
        ({"max_iter": 0}, "max_iter"),
        ({"kernel": "cosine"}, "Unknown kernel"),
        ({"alpha0": np.array([[1.0, 0.0], [0.0, 0.0]])}, "alpha0 must be feasible"),
        ({"alpha0": np.array([[2.0, -2.0], [0.0, 0.0]])}, "alpha0 must be feasible"),
        ({"alpha0": np.zeros((2, 3))}, "alpha0 must have shape"),
        ({"points": np.ones(2)}, "2-D"),
        ({"points": np.eye(3)}, "one sample per point"),
        ({"kernel": "precomputed", "points": np.ones((2, 3))}, "square"),
        ({"upper": np.ones(3)}, "shapes"),
        ({"y": np.array([[0], [1]])}, "shapes"),
        ({"e": np.ones((2, 2, 1))}, "shapes"),
        ({"index": np.array([0])}, "index"),
        ({"index": np.array([-1, 0])}, "index"),
        ({"index": np.array([0, 2])}, "index"),
        ({"solver": "smo"}, "solver must be 'cd' or 'ipm'"),
        ({"solver": "ipm", "kernel": "rbf"}, "solver='ipm' needs kernel='linear'"),
        ({"solver": "ipm", "alpha0": np.zeros((2, 2))}, "sets the warm start itself"),
    ],
)
def test_bad_input(kwargs, match):
    args = {
        "y": np.array([0, 1]),
        "e": np.array([[0.0, 1.0], [1.0, 0.0]]),
        "upper": np.array([1.0, 1.0]),
        "points": np.eye(2),
    }
    args.update(kwargs)
    with pytest.raises(ValueError, match=match):
        cs_solve(args.pop("y"), args.pop("e"), args.pop("upper"), args.pop("points"), **args)
