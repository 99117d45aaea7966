"""Sequential dual solver for Crammer–Singer duals with per-sample margins and costs, in numba.

:func:`cs_solve` minimises over ``α`` of shape (n_samples, n_classes)::

    ½ Σ_l ‖Σ_i α_il φ(x_index[i])‖² + Σ_{i,l} α_il e_il
    subject to   Σ_l α_il = 0,   α_il ≤ u_il,   u_il = C_i if l = y_i else 0

which is the negative of the MU-SVM dual (19) of Dhar et al. (notes
``multiclass-universum-svm.md`` §2.5). With ``e_il = 1 − δ(l, y_i)`` and ``C_i = C`` it is the
Crammer–Singer dual solved by LIBLINEAR; MU-SVM adds, per universum trial and class ``k``, a copy
with label ``k``, margin vector ``e = 0`` at ``k`` and ``−Δ`` elsewhere, and ``C_i = C*``. The
index map lets the copies share one kernel point. This dual has one equality per sample instead
of the single ``yᵀα = 0`` of :func:`~bci_universum.solvers.smo.smo_solve`, hence its own solver.

Algorithm (block coordinate descent over one sample's ``L``-vector ``α_i``, Crammer & Singer
2001; Keerthi et al. 2008): with ``g_il = f_l(x_i) + e_il`` and ``A = k(x_i, x_i)`` the
subproblem ``min (A/2)‖α_i‖² + Bᵀα_i, Σ_l α_il = 0, α_il ≤ u_il`` (``B = g_i − Aα_i``) has the
exact solution ``α_il = min(u_il, (β − B_l)/A)``; the threshold ``β`` comes from sorting
``D = B + A·u``. Samples are visited in a random order each pass (a small LCG, identical with and
without the JIT), with LIBLINEAR's shrinking of class entries and samples. The solve stops
when every sample satisfies the optimality test
``max_l g_il − min_{l: α_il < u_il} g_il ≤ tol`` (LIBLINEAR's rule), checked on the final state
after a pass that looked converged, and after the last of ``max_iter`` passes.

Linear kernel: the weights ``W`` (n_classes × n_features) are kept, one update costs
O(n_classes·n_features). Other kernels: the Gram matrix over the *points* and the scores ``F``
(n_points × n_classes) are kept, one update costs O(n_points·n_classes).
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from numba import njit
from sklearn.exceptions import ConvergenceWarning

from ._shuffle import LCG_M, shuffle
from .interior_point import cs_warm_start
from .kernels import check_kernel, kernel_matrix


@dataclass
class CSResult:
    """Solution of the Crammer–Singer-type dual.

    Attributes
    ----------
    alpha : ndarray of shape (n_samples, n_classes)
        Dual variables; row ``i`` sums to 0, ``α_{i,y_i} ∈ [0, C_i]``, the other entries ≤ 0.
    coef : ndarray of shape (n_points, n_classes)
        Compressed expansion ``a_p = Σ_{i: index[i] = p} α_i``: ``f(x) = Σ_p a_p k(x_p, x)``.
    scores : ndarray of shape (n_points, n_classes)
        ``f_l(x_p)`` at every point.
    objective : float
        ``½ Σ_l ‖w_l‖² + Σ α∘e`` (minimisation form; the MU-SVM dual (19) is its negative).
    violation : float
        Largest per-sample optimality violation of the final state.
    n_iter : int
        Passes over the samples.
    converged : bool
        Whether that violation is at most ``tol`` (within ``max_iter`` passes).
    """

    alpha: np.ndarray
    coef: np.ndarray
    scores: np.ndarray
    objective: float
    violation: float
    n_iter: int
    converged: bool


@njit(cache=True)
def _solve_subproblem(A, B, u, total, out, D):
    """Exact minimiser of ``(A/2)‖a‖² + Bᵀa`` s.t. ``Σ a = total``, ``a ≤ u`` (A > 0).

    ``D`` is a work array of the same length (no allocation per call).
    """
    k = B.shape[0]
    target = A * total
    rest = 0.0
    for c in range(k):
        D[c] = B[c] + A * u[c]
        target += B[c]
        rest += D[c]
    # insertion sort, descending (k is the number of classes: small)
    for c in range(1, k):
        value = D[c]
        j = c - 1
        while j >= 0 and D[j] < value:
            D[j + 1] = D[j]
            j -= 1
        D[j + 1] = value
    beta = 0.0
    for r in range(1, k + 1):
        rest -= D[r - 1]
        beta = (target - rest) / r
        if r == k or beta >= D[r]:
            break
    for c in range(k):
        value = (beta - B[c]) / A
        out[c] = u[c] if value > u[c] else value


@njit(cache=True)
def _solve_zero_point(e_i, y_i, c_i, out):
    """Optimum for ``φ(x_i) = 0``: a linear programme in ``e_i`` alone (scores stay 0)."""
    L = e_i.shape[0]
    best = -1
    for c in range(L):
        if c != y_i and (best < 0 or e_i[c] > e_i[best]):
            best = c
    out[:] = 0.0
    if best >= 0 and e_i[y_i] < e_i[best]:
        out[y_i] = c_i
        out[best] = -c_i


@njit(cache=True)
def _violation(g, alpha_i, y_i, c_i):
    """``max_c g_c − min_{c: α_c < u_c} g_c`` (0 when no coordinate can increase)."""
    L = g.shape[0]
    g_max = -np.inf
    g_min = np.inf
    for c in range(L):
        if g[c] > g_max:
            g_max = g[c]
        upper = c_i if c == y_i else 0.0
        if alpha_i[c] < upper and g[c] < g_min:
            g_min = g[c]
    if g_min == np.inf:
        return 0.0
    return g_max - g_min


@njit(cache=True)
def _point_score(p, c, X, state_mat, linear):
    """``f_c(x_p)``."""
    if linear:
        w = state_mat[c]
        x = X[p]
        total = 0.0
        for j in range(x.shape[0]):
            total += w[j] * x[j]
        return total
    return state_mat[p, c]


@njit(cache=True)
def _update(p, c, delta, X, G, state_mat, linear):
    """Add ``delta·φ(x_p)`` to class ``c`` (``W`` row, or the scores ``F[:, c]``)."""
    if linear:
        w = state_mat[c]
        x = X[p]
        for j in range(x.shape[0]):
            w[j] += delta * x[j]
    else:
        col = G[p]
        for q in range(state_mat.shape[0]):
            state_mat[q, c] += col[q] * delta


@njit(cache=True)
def _cs_core(y, e, upper, index, alpha, X, G, linear, tol, max_iter, seed):
    """Sequential dual passes in place on ``alpha``; returns (W or F, passes, violation, ok).

    ``linear``: ``X`` holds the points (n_points × n_features) and ``W`` (n_classes ×
    n_features) is kept. Otherwise ``G`` is the Gram matrix of the points and the scores ``F``
    (n_points × n_classes) are kept. Shrinking as in LIBLINEAR's Crammer–Singer solver: a class
    entry at its upper bound whose score is below every movable entry's is set aside, a sample
    with at most one entry left is set aside; everything is restored when the violation over
    the active part falls below a threshold that halves down to ``tol``.
    """
    n, L = alpha.shape
    if linear:
        n_points = X.shape[0]
        state_mat = np.zeros((L, X.shape[1]))
        diag = np.empty(n_points)
        for p in range(n_points):
            diag[p] = np.dot(X[p], X[p])
    else:
        n_points = G.shape[0]
        state_mat = np.zeros((n_points, L))
        diag = np.empty(n_points)
        for p in range(n_points):
            diag[p] = G[p, p]
    for i in range(n):
        for c in range(L):
            if alpha[i, c] != 0.0:
                _update(index[i], c, alpha[i, c], X, G, state_mat, linear)
    # samples at a zero point have a fixed optimum and never enter the passes
    active = np.empty(n, dtype=np.int64)
    n_live = 0
    old = np.empty(L)
    for i in range(n):
        if diag[index[i]] > 1e-300:
            active[n_live] = i
            n_live += 1
        else:
            old[:] = alpha[i]
            _solve_zero_point(e[i], y[i], upper[i], alpha[i])
            for c in range(L):
                if alpha[i, c] != old[c]:
                    _update(index[i], c, alpha[i, c] - old[c], X, G, state_mat, linear)
    classes = np.empty((n, L), dtype=np.int64)
    for i in range(n):
        for c in range(L):
            classes[i, c] = c
    n_classes = np.full(n, L, dtype=np.int64)
    g = np.empty(L)
    B = np.empty(L)
    u = np.empty(L)
    new = np.empty(L)
    work = np.empty(L)
    active_size = n_live
    eps_shrink = max(10.0 * tol, 1.0)
    start_from_all = True
    state = seed
    converged = False
    n_iter = 0
    while n_iter < max_iter:
        n_iter += 1
        state = shuffle(active[:active_size], state)
        stopping = 0.0
        s = 0
        while s < active_size:
            i = active[s]
            p = index[i]
            row = classes[i]
            k = n_classes[i]
            g_min = np.inf
            g_max = -np.inf
            for a in range(k):
                c = row[a]
                g[a] = _point_score(p, c, X, state_mat, linear) + e[i, c]
                u[a] = upper[i] if c == y[i] else 0.0
                if alpha[i, c] < u[a] and g[a] < g_min:
                    g_min = g[a]
                if g[a] > g_max:
                    g_max = g[a]
            a = 0
            while a < k:
                if alpha[i, row[a]] >= u[a] and g[a] < g_min:
                    k -= 1
                    row[a], row[k] = row[k], row[a]
                    g[a], g[k] = g[k], g[a]
                    u[a], u[k] = u[k], u[a]
                else:
                    a += 1
            n_classes[i] = k
            if k <= 1:
                active_size -= 1
                active[s], active[active_size] = active[active_size], active[s]
                continue
            s += 1
            if g_max - g_min <= 1e-12:
                continue
            if g_max - g_min > stopping:
                stopping = g_max - g_min
            A = diag[p]
            total = 0.0
            for a in range(k):
                B[a] = g[a] - A * alpha[i, row[a]]
                total += alpha[i, row[a]]
            _solve_subproblem(A, B[:k], u[:k], total, new[:k], work[:k])
            for a in range(k):
                c = row[a]
                delta = new[a] - alpha[i, c]
                if delta != 0.0:
                    alpha[i, c] = new[a]
                    _update(p, c, delta, X, G, state_mat, linear)
        if stopping < eps_shrink:
            if stopping < tol and start_from_all:
                # the pass saw each sample before later updates moved it: check the final state
                worst = _max_violation(y, e, upper, index, alpha, X, state_mat, linear, g)
                if worst <= tol:
                    converged = True
                    break
            active_size = n_live
            n_classes[:] = L
            eps_shrink = max(eps_shrink / 2.0, tol)
            start_from_all = True
        else:
            start_from_all = False
    if not converged:
        # max_iter passes: the final state decides (the passes saw samples before later updates)
        worst = _max_violation(y, e, upper, index, alpha, X, state_mat, linear, g)
        converged = worst <= tol
    return state_mat, n_iter, worst, converged


@njit(cache=True)
def _max_violation(y, e, upper, index, alpha, X, state_mat, linear, g):
    worst = 0.0
    L = alpha.shape[1]
    for i in range(y.shape[0]):
        for c in range(L):
            g[c] = _point_score(index[i], c, X, state_mat, linear) + e[i, c]
        v = _violation(g, alpha[i], y[i], upper[i])
        if v > worst:
            worst = v
    return worst


def cs_solve(
    y: np.ndarray,
    e: np.ndarray,
    upper: np.ndarray,
    points: np.ndarray,
    *,
    index: np.ndarray | None = None,
    kernel: str | Callable = "linear",
    gamma: float = 1.0,
    degree: int = 3,
    coef0: float = 0.0,
    tol: float = 1e-3,
    max_iter: int = 1000,
    seed: int = 0,
    alpha0: np.ndarray | None = None,
    solver: str = "cd",
) -> CSResult:
    """Solve the Crammer–Singer-type dual with per-sample margins ``e`` and costs ``upper``.

    Parameters
    ----------
    y : ndarray of int of shape (n_samples,)
        Class index ``0 … n_classes − 1`` of every sample (the coordinate with the box ``C_i``).
    e : ndarray of shape (n_samples, n_classes)
        Margin vectors (``1 − δ(l, y_i)`` for Crammer–Singer; ``0`` at ``y_i`` and ``−Δ``
        elsewhere for an MU-SVM universum copy).
    upper : ndarray of shape (n_samples,)
        Costs ``C_i ≥ 0`` (finite).
    points : ndarray of shape (n_points, n_features) or (n_points, n_points)
        Kernel points; with ``kernel="precomputed"`` their square Gram matrix.
    index : ndarray of int of shape (n_samples,) or None
        Point of each sample (``None``: sample ``i`` is point ``i``).
    kernel : {"linear", "rbf", "poly", "sigmoid", "precomputed"} or callable
        See :mod:`bci_universum.solvers.kernels`. Non-linear kernels form the Gram matrix of the
        points first.
    gamma, degree, coef0 : float, int, float
        Kernel parameters (``gamma`` numeric).
    tol : float
        Stopping tolerance on the per-sample optimality violation.
    max_iter : int
        Cap on passes over the samples; reaching it emits a
        :class:`~sklearn.exceptions.ConvergenceWarning`.
    seed : int
        Seed of the visiting order.
    alpha0 : ndarray of shape (n_samples, n_classes) or None
        Feasible warm start (zeros by default).
    solver : {"cd", "ipm"}
        ``"ipm"`` (linear kernel, no ``alpha0``): start the passes from the interior point's
        solution (:func:`~bci_universum.solvers.interior_point.cs_warm_start`), for
        rank-deficient problems on which the passes alone crawl.

    Returns
    -------
    result : CSResult
    """
    check_kernel(kernel)
    if solver not in ("cd", "ipm"):
        raise ValueError(f"solver must be 'cd' or 'ipm', got {solver!r}.")
    if solver == "ipm" and (kernel != "linear" or alpha0 is not None):
        raise ValueError("solver='ipm' needs kernel='linear' and sets the warm start itself.")
    if not tol > 0:
        raise ValueError(f"tol must be positive, got {tol}.")
    if int(max_iter) < 1:
        raise ValueError(f"max_iter must be a positive integer, got {max_iter}.")
    points = np.ascontiguousarray(points, dtype=np.float64)
    if points.ndim != 2:
        raise ValueError(f"points must be a 2-D array, got shape {points.shape}.")
    e = np.ascontiguousarray(e, dtype=np.float64)
    y = np.ascontiguousarray(y, dtype=np.int64)
    upper = np.ascontiguousarray(upper, dtype=np.float64)
    n = y.shape[0]
    if e.ndim != 2 or e.shape[0] != n or upper.shape != (n,) or y.ndim != 1:
        raise ValueError(
            "y, e and upper must have shapes (n,), (n, n_classes) and (n,); got "
            f"{y.shape}, {e.shape}, {upper.shape}."
        )
    L = e.shape[1]
    if n and (y.min() < 0 or y.max() >= L):
        raise ValueError(f"y must hold class indices in [0, {L}).")
    if not np.all(np.isfinite(e)):
        raise ValueError("The margin vectors e must be finite.")
    if not np.all(np.isfinite(upper)) or np.any(upper < 0):
        raise ValueError("The costs upper must be finite and >= 0.")
    if callable(kernel):
        points = kernel_matrix(points, kernel=kernel)
        kernel = "precomputed"
    if kernel == "precomputed" and points.shape[0] != points.shape[1]:
        raise ValueError(f"A precomputed kernel must be square, got shape {points.shape}.")
    n_points = points.shape[0]
    if index is None:
        if n != n_points:
            raise ValueError(
                f"Without an index map there must be one sample per point; got {n} samples "
                f"and {n_points} points."
            )
        index = np.arange(n, dtype=np.int64)
    index = np.ascontiguousarray(index, dtype=np.int64)
    if index.shape != (n,) or (n and (index.min() < 0 or index.max() >= n_points)):
        raise ValueError(f"index must have shape ({n},) with values in [0, {n_points}).")
    if solver == "ipm":
        alpha = cs_warm_start(y, e, upper, points, index)
    elif alpha0 is None:
        alpha = np.zeros((n, L))
    else:
        alpha = np.array(alpha0, dtype=np.float64, order="C")
        if alpha.shape != (n, L):
            raise ValueError(f"alpha0 must have shape ({n}, {L}), got {alpha.shape}.")
        # rounding of earlier solves leaves |errors| ~ 1e-16 · scale
        slack = 1e-12 * max(1.0, float(np.abs(alpha).max(initial=0.0)))
        rows = np.arange(n)
        own = alpha[rows, y]
        others = alpha.copy()
        others[rows, y] = 0.0
        ok = np.all(own >= -slack) and np.all(own <= upper + slack)
        ok = ok and np.all(others <= slack) and np.all(np.abs(alpha.sum(axis=1)) <= slack)
        if not ok:
            raise ValueError(
                "alpha0 must be feasible: rows sum to 0, 0 <= α_iy <= C_i, else <= 0."
            )
    linear = kernel == "linear"
    if linear:
        X, G = points, np.empty((0, 0))
    else:
        G = (
            points
            if kernel == "precomputed"
            else kernel_matrix(points, None, kernel, gamma, degree, coef0)
        )
        X = np.empty((0, 1))
    state_mat, n_iter, worst, converged = _cs_core(
        y,
        e,
        upper,
        index,
        alpha,
        X,
        G,
        linear,
        float(tol),
        int(max_iter),
        int(seed) % LCG_M,
    )
    if not converged:
        warnings.warn(
            f"The Crammer–Singer solver stopped after max_iter={max_iter} passes with a "
            f"violation of {worst:.3g} > tol={tol}; increase max_iter or tol.",
            ConvergenceWarning,
            stacklevel=2,
        )
    coef = np.zeros((n_points, L))
    np.add.at(coef, index, alpha)
    scores = points @ state_mat.T if linear else state_mat
    quad = float(np.sum(state_mat * state_mat)) if linear else float(np.sum(coef * scores))
    objective = 0.5 * quad + float(np.sum(alpha * e))
    return CSResult(alpha, coef, scores, objective, float(worst), int(n_iter), bool(converged))
