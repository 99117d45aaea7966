"""Version-space samplers of the Bayes point machine (notes bayes-point-machine.md §7)."""

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from cvxopt import matrix, solvers

from bci_universum.solvers import billiard as bl


def _toy(seed, m=10, d=3):
    """The paper's 3-D toy: uniform points in [-1, 1]^d, labels of a rule through the origin."""
    rng = np.random.default_rng(seed)
    X = rng.uniform(-1, 1, (m, d))
    y = np.sign(X @ rng.standard_normal(d))
    return X, y, rng


def _hard_svm_no_bias(X, y):
    """Hard-margin SVM without bias by cvxopt: min ½‖w‖² s.t. y_i ⟨w, x_i⟩ ≥ 1."""
    d = X.shape[1]
    solvers.options["show_progress"] = False
    sol = solvers.qp(
        matrix(np.eye(d)),
        matrix(np.zeros(d)),
        matrix(-(y[:, None] * X)),
        matrix(-np.ones(X.shape[0])),
    )
    return np.array(sol["x"]).ravel()


def _unit(w):
    return w / np.linalg.norm(w)


def _angle(u, v):
    return np.degrees(np.arccos(np.clip(_unit(u) @ _unit(v), -1, 1)))


def test_oplus_properties():
    rng = np.random.default_rng(0)
    for k in range(2000):
        s, t = _unit(rng.standard_normal(5)), _unit(rng.standard_normal(5))
        if k % 3 == 1:  # p near +1
            t = _unit(s + 1e-3 * rng.standard_normal(5))
        elif k % 3 == 2:  # p near −1
            t = _unit(-s + 1e-2 * rng.standard_normal(5))
        mu = rng.uniform()
        p = s @ t
        r1, r2 = bl.rho1(p, mu), bl.rho2(p, mu)
        r = r1 * s + r2 * t
        assert r1 >= 0 and r2 >= -1e-12
        assert abs(np.linalg.norm(r) - 1) < 1e-9
        assert abs(np.linalg.norm(t - r) - mu * np.linalg.norm(t - s)) < 1e-9
    s, t = _unit(np.ones(3)), _unit(np.arange(3.0))
    p = s @ t
    assert bl.rho1(p, 0.0) == 0 and bl.rho2(p, 0.0) == 1
    np.testing.assert_allclose([bl.rho1(p, 1.0), bl.rho2(p, 1.0)], [1, 0], atol=1e-12)


def test_perceptron_separates_within_novikoff_bound():
    X, y, rng = _toy(1, m=200, d=6)
    G = np.ascontiguousarray(X @ X.T)
    perm = rng.permutation(200)
    alpha, n_updates, converged = bl.perceptron(G, y, perm, 10_000)
    assert converged
    assert np.all(y * (G @ alpha) > 0)
    w = _hard_svm_no_bias(X, y)
    radius, margin = np.linalg.norm(X, axis=1).max(), 1 / np.linalg.norm(w)
    assert n_updates <= (radius / margin) ** 2
    again, _, _ = bl.perceptron(G, y, perm, 10_000)
    np.testing.assert_array_equal(alpha, again)
    other, _, _ = bl.perceptron(G, y, rng.permutation(200), 10_000)
    assert not np.array_equal(alpha, other)


def test_perceptron_non_separable_hard_fails_soft_converges():
    X, y, rng = _toy(2, m=30)
    y[:3] *= -1  # flipped labels: no separator through the origin
    G = np.ascontiguousarray(X @ X.T)
    assert not bl.perceptron(G, y, rng.permutation(30), 200)[2]
    G_soft = G + 1.0 * np.eye(30)
    alpha, _, converged = bl.perceptron(G_soft, y, rng.permutation(30), 10_000)
    assert converged and np.all(y * (G_soft @ alpha) > 0)


def test_billiard_invariants_after_every_bounce():
    X, y, rng = _toy(3, m=12)
    G = np.ascontiguousarray(X @ X.T + 0.05 * np.eye(12))
    alpha0, _, _ = bl.perceptron(G, y, rng.permutation(12), 1000)
    gamma, beta, alpha, d, v, a, state = bl.billiard_start(G, alpha0, rng.standard_normal(12))
    normals = rng.standard_normal((4096, 12))
    used = 0
    for bounce in range(1, 300):
        beta_old, redraws_old = beta.copy(), state[bl.S_REDRAWS]
        status, n = bl.billiard_run(
            G, y, gamma, beta, alpha, d, v, a, state, normals[used:], 0.0, bounce
        )
        used += n
        assert status == bl.STATUS_BUDGET and state[bl.S_BOUNCES] == bounce
        c = int(state[bl.S_LAST])
        for u, cache in ((gamma, d), (beta, v), (alpha, a)):
            np.testing.assert_allclose(cache, G @ u, atol=1e-8)
            assert abs(u @ G @ u - 1) < 1e-9
        assert np.all(y * (G @ gamma) >= -1e-9)
        assert abs((G @ gamma)[c]) < 1e-8
        assert np.all(y * (G @ alpha) > 0)  # the centre stays inside the convex cone
        if state[bl.S_REDRAWS] == redraws_old:
            np.testing.assert_allclose((G @ beta)[c], -(G @ beta_old)[c], atol=1e-9)


def test_new_direction_points_into_version_space():
    X, y, rng = _toy(4)
    G = np.ascontiguousarray(X @ X.T)
    beta, v = np.empty(10), np.empty(10)
    for last in range(10):
        bl._new_direction(G, y, rng.standard_normal(10), last, beta, v)
        assert y[last] * (G @ beta)[last] > 0  # eq. (22)
        np.testing.assert_allclose(v, G @ beta, atol=1e-12)
        assert abs(beta @ G @ beta - 1) < 1e-12


def test_billiard_start_must_be_inside_version_space():
    X, y, rng = _toy(5)
    G = np.ascontiguousarray(X @ X.T)
    with pytest.raises(ValueError, match="not inside version space"):
        bl.kernel_billiard(G, y, -y, rng)


def test_degenerate_version_space_redraws_within_their_budget():
    """Two orthogonal trials of opposite classes: version space is a quarter circle, and from
    either wall the other lies at infinite flight time, so directions are redrawn there; the
    redraws have a budget, and the estimate tends to the arc's centre of mass, its midpoint."""
    G, y = np.eye(2), np.array([-1.0, 1.0])
    gamma0 = np.array([-0.9, 0.1])
    alpha, info = bl.kernel_billiard(G, y, gamma0, np.random.default_rng(0), max_bounces=50)
    assert info["stopped_by"] == "max_bounces" and info["n_redraws"] == 50
    assert np.all(y * (G @ alpha) > 0)
    alpha, info = bl.kernel_billiard(G, y, gamma0, np.random.default_rng(0), tol=1e-3)
    assert info["stopped_by"] == "tol"
    np.testing.assert_allclose(alpha, np.array([-1.0, 1.0]) / np.sqrt(2.0), atol=0.01)


def test_billiard_reaches_monte_carlo_centre_of_mass():
    """Notes §7 test 8: angle to a rejection-sampling centre of mass < 4° on every seed."""
    billiard_angles, perceptron_angles, svm_angles = [], [], []
    for seed in range(12):
        X, y, rng = _toy(seed)
        G = np.ascontiguousarray(X @ X.T)
        alpha0, _, _ = bl.perceptron(G, y, rng.permutation(10), 1000)
        alpha, info = bl.kernel_billiard(G, y, alpha0, rng, tol=1e-4, max_bounces=400_000)
        assert info["stopped_by"] == "tol"
        assert np.all(np.sign(G @ alpha) == y)
        perms = np.stack([rng.permutation(10) for _ in range(100)])
        alpha_p, n_failed = bl.perceptron_average(G, y, perms, 1000)
        assert n_failed == 0 and np.all(np.sign(G @ alpha_p) == y)

        W = rng.standard_normal((400_000, 3))
        W /= np.linalg.norm(W, axis=1, keepdims=True)
        inside = np.all((W @ X.T) * y > 0, axis=1)
        centre = W[inside].mean(axis=0)
        billiard_angles.append(_angle(X.T @ alpha, centre))
        perceptron_angles.append(_angle(X.T @ alpha_p, centre))
        svm_angles.append(_angle(_hard_svm_no_bias(X, y), centre))
    assert max(billiard_angles) < 4.0
    assert np.mean(billiard_angles) < np.mean(perceptron_angles)
    assert np.mean(billiard_angles) < np.mean(svm_angles)


_SCRIPT = """
import json, numpy as np
from bci_universum.classifiers.bpm import BayesPointMachine
rng = np.random.default_rng(0)
X = rng.standard_normal((14, 3)); y = (X[:, 0] + 0.3 * X[:, 1] > 0).astype(int)
out = {}
for method in ("billiard", "perceptron"):
    bpm = BayesPointMachine(method=method, n_perceptrons=5, max_bounces=300, random_state=1)
    bpm.fit(X, y)
    out[method] = [bpm.dual_coef_.tolist(), bpm.n_bounces_]
print(json.dumps(out))
"""


def test_disabling_jit_gives_identical_results():
    root = Path(__file__).resolve().parents[3]
    results = []
    for disable in ("0", "1"):
        env = {**os.environ, "NUMBA_DISABLE_JIT": disable, "PYTHONPATH": str(root)}
        proc = subprocess.run(
            [sys.executable, "-c", _SCRIPT],
            env=env,
            capture_output=True,
            text=True,
            timeout=300,
            check=True,
        )
        results.append(json.loads(proc.stdout))
    jit, nojit = results
    for method in ("billiard", "perceptron"):
        assert jit[method][1] == nojit[method][1]
        np.testing.assert_allclose(jit[method][0], nojit[method][0], rtol=0, atol=1e-12)
