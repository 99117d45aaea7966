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
    for mu in (0.3, 0.9):
        # p ≤ −1 (t = −s, no arc between them) is clamped (finite weights); p > 1 (round-off
        # of ⟨s, t⟩) counts as 1
        assert np.isfinite([bl.rho1(-1.0, mu), bl.rho2(-1.0, mu)]).all()
        assert bl.rho1(-1.5, mu) == bl.rho1(-1.0, mu) and bl.rho2(-1.5, mu) == bl.rho2(-1.0, mu)
        assert bl.rho1(1.0 + 1e-9, mu) == bl.rho1(1.0, mu)
        assert bl.rho2(1.0 + 1e-9, mu) == bl.rho2(1.0, mu)


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


def test_perceptron_by_hand():
    """Two points at 60°, both positive: the first visited is a mistake (output 0 ≤ 0), the
    second is then already right (output ½ > 0), and the next pass makes no mistake."""
    G, y = np.array([[1.0, 0.5], [0.5, 1.0]]), np.ones(2)
    for perm in ([0, 1], [1, 0]):
        alpha, n_updates, converged = bl.perceptron(G, y, np.array(perm), 10)
        np.testing.assert_array_equal(alpha, np.eye(2)[perm[0]])
        assert n_updates == 1 and converged


def test_perceptron_counts_its_updates():
    X, y, rng = _toy(6, m=40)
    G = np.ascontiguousarray(X @ X.T)
    alpha, n_updates, converged = bl.perceptron(G, y, rng.permutation(40), 1000)
    # every update adds y_i to α_i: |α_i| mistakes on point i
    assert converged and n_updates == np.abs(alpha).sum() > 1


def _perceptron_average_reference(G, y, perms, max_epochs):
    total, n_failed = np.zeros(len(y)), 0
    for perm in perms:
        alpha, _, converged = bl.perceptron(G, y, perm, max_epochs)
        if converged:
            total += alpha / np.sqrt(alpha @ G @ alpha)
        n_failed += not converged
    return total, n_failed


def test_perceptron_average_of_normalised_solutions():
    X, y, rng = _toy(7, m=10)
    G = np.ascontiguousarray(X @ X.T)
    # two passes: a permutation converges only when its first pass separates the data
    perms = np.stack([rng.permutation(10) for _ in range(40)])
    total, n_failed = _perceptron_average_reference(G, y, perms, 2)
    assert 0 < n_failed < 40
    alpha, failed = bl.perceptron_average(G, y, perms, 2)
    assert failed == n_failed
    np.testing.assert_allclose(alpha, total / np.sqrt(total @ G @ total), atol=1e-12)
    # none converges: no estimate, every permutation counted
    y[:3] *= -1
    alpha, failed = bl.perceptron_average(G, y, perms[:5], 2)
    assert failed == 5 and np.all(alpha == 0)


def test_dual_norm():
    G = np.array([[2.0, 0.5], [0.5, 1.0]])
    alpha = np.array([0.01, -0.02])
    assert bl.dual_norm(G, alpha) == pytest.approx(np.sqrt(alpha @ G @ alpha), rel=1e-12)
    # an indefinite kernel (sigmoid) can give αᵀGα < 0: no norm, not NaN
    assert bl.dual_norm(np.diag([1.0, -1.0]), np.array([0.0, 1.0])) == 0.0


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
        normal = 1e-3 * rng.standard_normal(10)  # its scale must not matter
        for sign in (1.0, -1.0):
            bl._new_direction(G, y, sign * normal, last, beta, v)
            assert y[last] * (G @ beta)[last] > 0  # eq. (22)
            np.testing.assert_allclose(v, G @ beta, atol=1e-12)
            assert abs(beta @ G @ beta - 1) < 1e-12
            np.testing.assert_allclose(np.abs(beta), np.abs(normal) / np.sqrt(normal @ G @ normal))
    for sign in (1.0, -1.0):  # before the first bounce (no wall yet) any direction goes
        bl._new_direction(G, y, sign * normal, -1, beta, v)
        np.testing.assert_allclose(beta, sign * normal / np.sqrt(normal @ G @ normal))


def _oplus_weights(p, mu):
    """(ρ₁, ρ₂) of s ⊕_μ t from the arc: the point of the arc from t to s whose chord to t is μ
    times ‖t − s‖ (notes §3.2), by spherical interpolation instead of the paper's formula."""
    phi = np.arccos(np.clip(p, -1.0, 1.0))
    phi_r = 2.0 * np.arcsin(mu * np.sin(phi / 2.0))  # angle from t
    if phi < 1e-9:
        return mu, 1.0 - mu
    return np.sin(phi_r) / np.sin(phi), np.sin(phi - phi_r) / np.sin(phi)


def _reference_run(G, y, gamma, beta, alpha, state, normals, tol, max_bounces):
    """The notes' O(m²) billiard (§3.2, corrected pseudo-code; no caches): the kernel's
    arguments after a call, its status and the number of normal vectors used."""
    unit = lambda u: u / np.sqrt(u @ G @ u)  # noqa: E731
    m, state, used = len(y), state.copy(), 0
    xi_sum, xi_max, p_min, last, n_bounces, n_redraws = state
    last = int(last)
    while True:
        mu_bar = 0.0 if xi_sum + xi_max == 0 else xi_sum / (xi_sum + xi_max)
        if _oplus_weights(p_min, mu_bar)[1] <= tol:
            status = bl.STATUS_TOL
            break
        if n_bounces >= max_bounces or n_redraws >= max_bounces:
            status = bl.STATUS_BUDGET
            break
        d, v = G @ gamma, G @ beta
        with np.errstate(divide="ignore", invalid="ignore"):
            tau = -d / v
        valid = (v != 0) & (tau > 1e-12) & (np.arange(m) != last)
        c = int(np.flatnonzero(valid)[np.argmin(tau[valid])]) if valid.any() else -1
        t = tau[c] if c >= 0 else np.inf
        if not (t < 1e3 and (gamma + t * beta) @ G @ (gamma + t * beta) > 1e-12):
            if used == len(normals):
                status = bl.STATUS_NEED_RANDOM
                break
            beta = unit(normals[used])
            used += 1
            n_redraws += 1
            if last >= 0 and y[last] * (G @ beta)[last] < 0:  # eq. (22)
                beta = -beta
            continue
        gamma_new = unit(gamma + t * beta)  # eq. (23)
        beta = beta.copy()
        beta[c] -= 2 * (G @ beta)[c] / G[c, c]  # eq. (24)
        beta = unit(beta)
        zeta = unit(gamma + gamma_new)
        xi = np.sqrt(max((gamma - gamma_new) @ G @ (gamma - gamma_new), 0.0))
        p = zeta @ G @ alpha
        if n_bounces == 0:
            alpha = zeta  # α = 0 before: the first midpoint
        else:
            r1, r2 = _oplus_weights(p, xi_sum / (xi_sum + xi))
            alpha = r1 * alpha + r2 * zeta
            p_min = min(p_min, p)  # the first bounce's p = 0 says nothing
        xi_max, xi_sum, gamma, last = max(xi_max, xi), xi_sum + xi, gamma_new, c
        n_bounces += 1
    state[:] = [xi_sum, xi_max, p_min, last, n_bounces, n_redraws]
    return (gamma, beta, alpha, state), status, used


def _check_against_reference(G, y, start, normals, tol, max_bounces):
    """Run the kernel from ``start`` (billiard_start's output) and compare with the reference."""
    gamma, beta, alpha, d, v, a, state = (u.copy() for u in start)
    ref, ref_status, ref_used = _reference_run(
        G, y, gamma, beta, alpha, state, normals, tol, max_bounces
    )
    status, n_used = bl.billiard_run(
        G, y, gamma, beta, alpha, d, v, a, state, normals, tol, max_bounces
    )
    assert (status, n_used) == (ref_status, ref_used)
    for got, want in zip((gamma, beta, alpha, state), ref, strict=True):
        np.testing.assert_allclose(got, want, rtol=1e-9, atol=1e-9)
    for u, cache in ((gamma, d), (beta, v), (alpha, a)):
        np.testing.assert_allclose(cache, G @ u, atol=1e-9)
    return gamma, beta, alpha, d, v, a, state


def test_billiard_start_state():
    """Notes §3.2: γ and β normalised, α = 0, Ξ = ξ_max = 0, p_min = 1, no wall hit yet."""
    G = np.array([[2.0, 0.3], [0.3, 1.0]])
    gamma, beta, alpha, d, v, a, state = bl.billiard_start(G, np.array([1.0, 2.0]), np.ones(2))
    for u, cache in ((gamma, d), (beta, v)):
        np.testing.assert_allclose(cache, G @ u)
        assert u @ G @ u == pytest.approx(1.0)
    np.testing.assert_allclose(gamma, [1.0, 2.0] / np.sqrt(np.array([1.0, 2.0]) @ G @ [1, 2]))
    assert np.all(alpha == 0) and np.all(a == 0)
    assert state.shape == (bl.STATE_SIZE,)
    expected = {bl.S_XI_SUM: 0, bl.S_XI_MAX: 0, bl.S_P_MIN: 1, bl.S_LAST: -1}
    expected |= {bl.S_BOUNCES: 0, bl.S_REDRAWS: 0}
    assert len(expected) == bl.STATE_SIZE  # one slot each
    assert all(state[k] == value for k, value in expected.items())


def test_billiard_bounces_match_the_reference():
    """Every bounce against the notes' O(m²) algorithm, from the kernel's state before it (the
    billiard is chaotic: round-off differences grow over many bounces), and the stopping rule at
    its bound."""
    X, y, rng = _toy(3, m=12)
    G = np.ascontiguousarray(X @ X.T + 0.05 * np.eye(12))
    alpha0, _, _ = bl.perceptron(G, y, rng.permutation(12), 1000)
    current = bl.billiard_start(G, alpha0, rng.standard_normal(12))
    normals = rng.standard_normal((50, 12))
    for bounce in range(1, 60):
        current = _check_against_reference(G, y, current, normals, 0.0, bounce)
        state = current[-1]
        assert state[bl.S_BOUNCES] == bounce
        xi_sum, xi_max, p_min = state[[bl.S_XI_SUM, bl.S_XI_MAX, bl.S_P_MIN]]
        mu_bar = xi_sum / (xi_sum + xi_max)
        bound = _oplus_weights(p_min, mu_bar)[1]
        # the run stops when the bound "falls to tol or below": at, above and below it
        gamma, beta, alpha, d, v, a, state = (u.copy() for u in current)
        args = (G, y, gamma, beta, alpha, d, v, a, state, normals)
        assert bl.billiard_run(*args, bl.rho2(p_min, mu_bar), 10**6) == (bl.STATUS_TOL, 0)
        np.testing.assert_array_equal(state, current[-1])
        _check_against_reference(G, y, current, normals, bound * (1 + 1e-7), 10**6)
        _check_against_reference(G, y, current, normals, bound * (1 - 1e-7), bounce)


def test_billiard_in_narrow_and_wide_version_spaces_matches_the_reference():
    """Two trials: version space is an arc (a quarter circle, or 163° wide) whose walls cannot
    be reached from each other, so every bounce needs redraws; directions along a kernel axis
    included. The run stops when the buffer of normal vectors runs out."""
    rng = np.random.default_rng(8)
    wide = np.array([[1.0, 0.0], [np.cos(0.3), np.sin(0.3)]])
    cases = [(np.eye(2), np.array([-1.0, 1.0])), (wide @ wide.T, np.ones(2))]
    for G, y in cases:
        start = np.linalg.solve(G, 0.1 * y + 0.2)  # G γ = 0.1 y + 0.2 > 0 inside
        for first in (np.array([1.0, 0.0]), rng.standard_normal(2)):
            current = bl.billiard_start(G, start, first)
            normals = np.vstack([np.eye(2), rng.standard_normal((40, 2))])
            _check_against_reference(G, y, current, normals, 0.0, 30)
            _check_against_reference(G, y, current, normals, 1e-9, 10**6)


def test_billiard_start_must_be_inside_version_space():
    X, y, rng = _toy(5)
    G = np.ascontiguousarray(X @ X.T)
    with pytest.raises(ValueError, match="not inside version space"):
        bl.kernel_billiard(G, y, -y, rng)
    with pytest.raises(ValueError, match="not inside version space"):  # on a wall
        bl.kernel_billiard(np.eye(2), np.ones(2), np.array([1.0, 0.0]), rng)
    alpha0, _, _ = bl.perceptron(G, y, rng.permutation(10), 1000)
    small = 1e-3 * alpha0 / np.abs(G @ alpha0).max()  # any scale is inside
    alpha, _ = bl.kernel_billiard(G, y, small, rng, max_bounces=5)
    assert np.all(y * (G @ alpha) > 0)


def test_flights_longer_than_tau_max_are_redrawn():
    """A quarter circle (two orthogonal positive trials): from (0.6, 0.8), a direction reaching
    the wall of the second trial after a flight of T; T ≤ TAU_MAX = 1e3 bounces, longer redraws."""
    G, y = np.eye(2), np.ones(2)
    for flight, bounces in ((0.9995e3, 1), (1.0005e3, 0)):
        b1 = -0.8 / flight
        start = bl.billiard_start(G, np.array([0.6, 0.8]), np.array([np.sqrt(1 - b1**2), b1]))
        gamma, beta, alpha, d, v, a, state = start
        normals = np.ones((1, 2))
        bl.billiard_run(G, y, gamma, beta, alpha, d, v, a, state, normals, 0.0, 1)
        assert state[bl.S_BOUNCES] == bounces and state[bl.S_REDRAWS] == 1 - bounces
        if bounces:
            np.testing.assert_allclose(gamma, [1.0, 0.0], atol=1e-12)


def test_directions_along_a_kernel_axis_reach_their_wall():
    """G = I: from (0.6 y₀, 0.8 y₁) the direction −y₀e₀ (Gβ = ±1 and 0, exactly) meets the wall
    of the first trial after a flight of 0.6, at (0, y₁)."""
    G = np.eye(2)
    for y in (np.ones(2), np.array([-1.0, 1.0])):
        start = np.array([0.6 * y[0], 0.8 * y[1]])
        gamma, beta, alpha, d, v, a, state = bl.billiard_start(G, start, -y[0] * np.eye(2)[0])
        bl.billiard_run(G, y, gamma, beta, alpha, d, v, a, state, np.ones((1, 2)), 0.0, 1)
        assert state[bl.S_BOUNCES] == 1 and state[bl.S_LAST] == 0
        np.testing.assert_allclose(gamma, [0.0, y[1]], atol=1e-15)


def test_a_grazing_departure_does_not_hit_the_wall_just_left():
    """The ball sits on wall 0 of the positive octant (1e-14 outside, by round-off) and leaves
    it at a grazing angle (v_0 = 1e-4): the wall it left is not hit again 1e-10 later; the
    flight ends on wall 2 at γ ∝ γ + (4/3)β, a chord of length √0.8 on the unit sphere."""
    G, y = np.eye(3), np.ones(3)
    start = bl.billiard_start(G, np.array([-1e-14, 0.6, 0.8]), np.array([1e-4, 0.8, -0.6]))
    gamma, beta, alpha, d, v, a, state = start
    state[bl.S_LAST] = 0
    bl.billiard_run(G, y, gamma, beta, alpha, d, v, a, state, np.ones((1, 3)), 0.0, 1)
    assert state[bl.S_BOUNCES] == 1 and state[bl.S_LAST] == 2
    assert state[bl.S_XI_SUM] == pytest.approx(np.sqrt(0.8), rel=1e-6)


def test_a_first_chord_rounded_to_zero_length_gives_the_midpoint():
    """A start 1e-10 from a wall, flying into it: the chord's length rounds to 0 (Ξ + ξ = 0),
    and the estimate after that one bounce is still the segment's midpoint, on the sphere."""
    G, y = np.eye(2), np.ones(2)
    start = bl.billiard_start(G, np.array([1e-10, 1.0]), np.array([-1.0, 0.0]))
    gamma, beta, alpha, d, v, a, state = start
    bl.billiard_run(G, y, gamma, beta, alpha, d, v, a, state, np.ones((1, 2)), 0.0, 1)
    assert state[bl.S_BOUNCES] == 1 and state[bl.S_XI_SUM] == 0.0
    np.testing.assert_allclose(alpha, [0.0, 1.0], atol=1e-9)
    assert alpha @ G @ alpha == pytest.approx(1.0)
    # a rotated, anisotropic kernel, 6e-11 from the wall: ‖γ − γ'‖² = 2 − 2γᵀGγ' rounds below 0
    R = np.array([[np.cos(0.7), -np.sin(0.7)], [np.sin(0.7), np.cos(0.7)]])
    G = np.ascontiguousarray(R @ np.diag([1.0, 2.0]) @ R.T)
    start = np.linalg.solve(G, [6e-11, 1.0])
    gamma, beta, alpha, d, v, a, state = bl.billiard_start(G, start, np.linalg.solve(G, [-1, 0.0]))
    first = gamma.copy()
    bl.billiard_run(G, y, gamma, beta, alpha, d, v, a, state, np.ones((1, 2)), 0.0, 1)
    assert state[bl.S_BOUNCES] == 1 and state[bl.S_XI_SUM] == 0.0
    np.testing.assert_allclose(alpha, first, atol=1e-9)


def test_kernel_billiard_draws_one_stream_and_defaults():
    """The estimate does not depend on how the normal vectors are buffered (one stream of
    draws); the documented default tolerance is 1e-3."""
    G, y, gamma0 = np.eye(2), np.array([-1.0, 1.0]), np.array([-0.9, 0.1])
    runs = [
        bl.kernel_billiard(G, y, gamma0, np.random.default_rng(0), **kwargs)
        for kwargs in ({}, {"tol": 1e-3, "buffer_size": 1}, {"tol": 1e-3, "buffer_size": 7})
    ]
    assert runs[0][1]["n_redraws"] > 7
    for alpha, info in runs[1:]:
        np.testing.assert_array_equal(alpha, runs[0][0])
        assert info == runs[0][1]
    # different tolerances stop at different bounces
    assert bl.kernel_billiard(G, y, gamma0, np.random.default_rng(0), tol=2e-3)[1] != runs[0][1]


def test_stopping_before_the_first_bounce_returns_the_start_point():
    """tol = 1 is met at the start (the bound is ρ₂(1, 0) = 1): no segment, the estimate is the
    normalised start point (it was NaN, 0/0)."""
    X, y, rng = _toy(9)
    G = np.ascontiguousarray(X @ X.T)
    alpha0, _, _ = bl.perceptron(G, y, rng.permutation(10), 1000)
    alpha, info = bl.kernel_billiard(G, y, alpha0, rng, tol=1.0)
    assert info == {"n_bounces": 0, "n_redraws": 0, "stopped_by": "tol"}
    np.testing.assert_allclose(alpha, alpha0 / np.sqrt(alpha0 @ G @ alpha0), rtol=1e-12)


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
