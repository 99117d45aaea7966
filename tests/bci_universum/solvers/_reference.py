"""Box QP problems and an independent reference (cvxopt) shared by the solvers' tests."""

import numpy as np
from cvxopt import matrix, solvers


def usvm_dual(seed, m=40, q=15, d=4, noise=0.7, costs=None):
    """Two overlapping classes plus universum points; the U-SVM box dual over m + 2q variables.

    ``costs`` fixes ``(C, C_u, eps)``; ``None`` draws them (after the points, which stay the
    same either way)."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(m, d))
    y = np.where(X[:, 0] + noise * rng.normal(size=m) > 0, 1.0, -1.0)
    Z = 0.5 * rng.normal(size=(q, d))
    points = np.concatenate([X, Z])
    if costs is None:
        costs = rng.uniform(0.5, 5.0), rng.uniform(0.1, 2.0), rng.uniform(0.0, 0.3)
    C, C_u, eps = costs
    y_var = np.concatenate([y, np.ones(q), -np.ones(q)])
    p = np.concatenate([-np.ones(m), np.full(2 * q, eps)])
    upper = np.concatenate([np.full(m, C), np.full(2 * q, C_u)])
    index = np.concatenate([np.arange(m), np.arange(m, m + q), np.arange(m, m + q)])
    return points, y_var, p, upper, index, eps


def cvxopt_objective(K, y, p, upper, equality):
    """The optimum of ``½αᵀQα + pᵀα``, ``0 ≤ α ≤ upper`` (and ``yᵀα = 0``), ``Q = yyᵀ ∘ K``, by
    cvxopt's generic QP solver."""
    Q = np.outer(y, y) * K
    n = len(y)
    solvers.options.update(
        show_progress=False, abstol=1e-12, reltol=1e-12, feastol=1e-12, maxiters=200
    )
    G = matrix(np.vstack([-np.eye(n), np.eye(n)]))
    h = matrix(np.concatenate([np.zeros(n), upper]))
    A, b = (matrix(y[None, :]), matrix(0.0)) if equality else (None, None)
    sol = solvers.qp(matrix(Q), matrix(p), G, h, A, b)
    a = np.array(sol["x"]).ravel()
    return 0.5 * a @ Q @ a + p @ a
