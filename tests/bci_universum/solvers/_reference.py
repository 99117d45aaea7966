"""Box QP and Crammer–Singer problems and independent references (cvxopt) shared by the
solvers' tests."""

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


def mu_svm_dual(X, y, Z, delta, c, c_u):
    """The dual :func:`~bci_universum.solvers.crammer_singer.cs_solve` gets from the MU-SVM:
    labelled trials ``X`` (classes ``y`` in 0 … L−1) plus, per universum trial of ``Z``, one
    copy per class with margin ``−delta``; as ``(y, e, upper, points, index)``."""
    L = int(y.max()) + 1
    n, m = y.size, len(Z)
    copies = np.tile(np.arange(L), m)
    y_aug = np.concatenate([y, copies])
    e = np.concatenate([1 - np.eye(L)[y], -delta * (1 - np.eye(L)[copies])])
    upper = np.concatenate([np.full(n, c), np.full(m * L, c_u)])
    index = np.concatenate([np.arange(n), n + np.repeat(np.arange(m), L)])
    return y_aug, e, upper, np.concatenate([X, Z]), index


def mu_svm_problem(seed, n_per=8, d=6, L=3, m=5, delta=0.1, c=1.0, c_u=0.4):
    """Labelled samples plus MU-SVM universum copies, as (y, e, upper, points, index)."""
    rng = np.random.default_rng(seed)
    y_lab = np.repeat(np.arange(L), n_per)
    X = rng.normal(size=(L * n_per, d)) + 1.2 * np.eye(d)[y_lab]
    Z = 0.7 * rng.normal(size=(m, d))
    return mu_svm_dual(X, y_lab, Z, delta, c, c_u)


def cvxopt_cs_dual(K_aug, y, e, upper):
    """Reference: the Crammer–Singer-type dual as a generic QP in vec(α) (sample-major)."""
    N, L = e.shape
    P = np.kron(K_aug, np.eye(L))
    A = np.kron(np.eye(N), np.ones((1, L)))
    u = np.zeros((N, L))
    u[np.arange(N), y] = upper
    solvers.options.update({"show_progress": False, "abstol": 1e-11, "reltol": 1e-11})
    solvers.options["feastol"] = 1e-11
    sol = solvers.qp(
        matrix(P),
        matrix(e.ravel()),
        matrix(np.eye(N * L)),
        matrix(u.ravel()),
        matrix(A),
        matrix(np.zeros(N)),
    )
    alpha = np.array(sol["x"]).reshape(N, L)
    return alpha, 0.5 * alpha.ravel() @ P @ alpha.ravel() + e.ravel() @ alpha.ravel()
