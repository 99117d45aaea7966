"""Crammer–Singer (MU-SVM) dual problems and an independent reference (cvxopt) shared by the
solvers' tests."""

import numpy as np
from cvxopt import matrix, solvers


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
