"""Sequential minimal optimisation (SMO) for box-constrained kernel duals, in numba.

:func:`smo_solve` minimises ``½ αᵀQα + pᵀα`` subject to ``0 ≤ α_i ≤ upper_i`` and, when
``equality`` is true, ``yᵀα = 0``, where ``Q_ij = y_i y_j k(points[index[i]], points[index[j]])``.
This one problem covers the soft-margin SVM (``p = −1``, ``upper = C``), the hinge-loss
universum SVM (universum copies with ``p = ε`` and ``upper = C_U``), per-sample costs and
no-offset machines (``equality=False``).

Algorithm
---------
* With the equality: pairs chosen by the second-order working-set selection of Fan, Chen & Lin
  (2005, "WSS 2" of libsvm); the pair moves along ``y_i e_i − y_j e_j`` with an exact clipped
  line search. Stops when ``max_{I_up} −y_iG_i − min_{I_low} −y_jG_j < tol``.
* Without it: single coordinates chosen by the largest exact decrease of a clipped Newton step;
  stops when the largest projected-gradient magnitude is below ``tol``.
* Shrinking as in libsvm: bounded variables whose gradient keeps them out of any working set are
  set aside, the gradient of the set-aside ones is rebuilt from ``G_bar`` (the contribution of
  variables at their upper bound) once the violation is within ``10·tol`` and at the end.
* Kernel rows are computed in numba per *point* (the index map lets variables share rows) and
  kept in a least-recently-used cache of ``cache_size`` megabytes; with ``kernel="precomputed"``
  (and for callables, whose Gram matrix is computed first) rows are read from the matrix.
* The offset follows libsvm: the mean of ``−y_iG_i`` over free variables, or the middle of the
  feasible interval when no variable is free.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable

import numpy as np
from numba import njit
from sklearn.exceptions import ConvergenceWarning

from ._box_qp import BoxQPResult, check_box_qp
from .kernels import KERNEL_CODES, check_kernel, kernel_matrix, kernel_row

_TAU = 1e-12
_PRECOMPUTED = KERNEL_CODES["precomputed"]


@njit(cache=True)
def _get_row(point, kc):
    """Kernel row of ``point``: from ``K``, from the LRU cache, or computed into the cache.

    ``kc`` packs the kernel state: ``(X, sq_norms, K, cache, slot_of, owner, stamp, clock,
    kernel_code, gamma, degree, coef0)``.
    """
    X, sq, K, cache, slot_of, owner, stamp, clock, kcode, gamma, degree, coef0 = kc
    if kcode == _PRECOMPUTED:
        return K[point]
    clock[0] += 1
    s = slot_of[point]
    if s < 0:
        s = 0
        oldest = stamp[0]
        for c in range(1, stamp.shape[0]):
            if stamp[c] < oldest:
                oldest = stamp[c]
                s = c
        if owner[s] >= 0:
            slot_of[owner[s]] = -1
        owner[s] = point
        slot_of[point] = s
        kernel_row(point, X, sq, kcode, gamma, degree, coef0, cache[s])
    stamp[s] = clock[0]
    return cache[s]


@njit(cache=True)
def _in_up(t, y, alpha, upper):
    if y[t] > 0:
        return alpha[t] < upper[t]
    return alpha[t] > 0.0


@njit(cache=True)
def _in_low(t, y, alpha, upper):
    if y[t] > 0:
        return alpha[t] > 0.0
    return alpha[t] < upper[t]


@njit(cache=True)
def _smo_core(
    y,
    p,
    upper,
    index,
    alpha,
    X,
    K,
    kcode,
    gamma,
    degree,
    coef0,
    equality,
    tol,
    max_iter,
    n_slots,
    shrinking,
):
    """Run SMO in place on ``alpha``; return ``(gradient, n_iter, converged)``."""
    n = y.shape[0]
    n_points = X.shape[0] if kcode != _PRECOMPUTED else K.shape[0]
    sq = np.empty(n_points)
    diag = np.empty(n_points)
    if kcode != _PRECOMPUTED:
        for a in range(n_points):
            sq[a] = np.dot(X[a], X[a])
        cache = np.empty((n_slots, n_points))
    else:
        cache = np.empty((0, 0))
    slot_of = -np.ones(n_points, dtype=np.int64)
    owner = -np.ones(max(n_slots, 1), dtype=np.int64)
    stamp = np.zeros(max(n_slots, 1), dtype=np.int64)
    clock = np.zeros(1, dtype=np.int64)
    kc = (X, sq, K, cache, slot_of, owner, stamp, clock, kcode, gamma, degree, coef0)
    if kcode == _PRECOMPUTED:
        for a in range(n_points):
            diag[a] = K[a, a]
    elif kcode == 1:
        diag[:] = 1.0
    else:
        one = np.empty(1)
        for a in range(n_points):
            kernel_row(0, X[a : a + 1], sq[a : a + 1], kcode, gamma, degree, coef0, one)
            diag[a] = one[0]

    # gradient G = Qα + p and G_bar = Σ_{α_j = upper_j} upper_j Q_:j
    G = p.copy()
    G_bar = np.zeros(n)
    for j in range(n):
        if alpha[j] > 0.0:
            row = _get_row(index[j], kc)
            at_up = alpha[j] >= upper[j]
            for t in range(n):
                q = y[t] * y[j] * row[index[t]]
                G[t] += q * alpha[j]
                if at_up:
                    G_bar[t] += q * upper[j]

    active = np.arange(n)
    n_active = n
    unshrunk = False
    counter = min(n, 1000) + 1
    n_iter = 0
    converged = False
    while n_iter < max_iter:
        if shrinking:
            counter -= 1
            if counter == 0:
                counter = min(n, 1000)
                n_active, unshrunk = _shrink(
                    y,
                    alpha,
                    upper,
                    G,
                    G_bar,
                    p,
                    index,
                    active,
                    n_active,
                    unshrunk,
                    equality,
                    tol,
                    kc,
                )
        i, j, stop = _select(
            y,
            alpha,
            upper,
            G,
            diag,
            index,
            active,
            n_active,
            equality,
            tol,
            kc,
        )
        if stop:
            if n_active < n:
                _reconstruct_gradient(
                    y,
                    alpha,
                    upper,
                    G,
                    G_bar,
                    p,
                    index,
                    active,
                    n_active,
                    kc,
                )
                n_active = n
                for t in range(n):
                    active[t] = t
                i, j, stop = _select(
                    y,
                    alpha,
                    upper,
                    G,
                    diag,
                    index,
                    active,
                    n_active,
                    equality,
                    tol,
                    kc,
                )
                counter = 1
            if stop:
                converged = True
                break
        n_iter += 1
        row_i = _get_row(index[i], kc)
        old_i = alpha[i]
        if equality:
            row_j = _get_row(index[j], kc)
            old_j = alpha[j]
            # move t ≥ 0 along y_i e_i − y_j e_j, exact line search clipped to the box
            curv = diag[index[i]] + diag[index[j]] - 2.0 * row_i[index[j]]
            if curv <= 0.0:
                curv = _TAU
            lim_i = upper[i] - old_i if y[i] > 0 else old_i
            lim_j = old_j if y[j] > 0 else upper[j] - old_j
            step = min((-y[i] * G[i] + y[j] * G[j]) / curv, lim_i, lim_j)
            alpha[i] = old_i + y[i] * step
            alpha[j] = old_j - y[j] * step
            if step == lim_i:
                alpha[i] = upper[i] if y[i] > 0 else 0.0
            if step == lim_j:
                alpha[j] = 0.0 if y[j] > 0 else upper[j]
            d_i = alpha[i] - old_i
            d_j = alpha[j] - old_j
            for k in range(n_active):
                t = active[k]
                a = index[t]
                G[t] += y[t] * (y[i] * row_i[a] * d_i + y[j] * row_j[a] * d_j)
            _update_g_bar(y, upper, index, G_bar, i, old_i, alpha[i], row_i)
            _update_g_bar(y, upper, index, G_bar, j, old_j, alpha[j], row_j)
        else:
            qd = diag[index[i]] if diag[index[i]] > 0.0 else _TAU
            alpha[i] = min(max(old_i - G[i] / qd, 0.0), upper[i])
            d_i = alpha[i] - old_i
            for k in range(n_active):
                t = active[k]
                G[t] += y[t] * y[i] * row_i[index[t]] * d_i
            _update_g_bar(y, upper, index, G_bar, i, old_i, alpha[i], row_i)
    if n_active < n:
        _reconstruct_gradient(
            y,
            alpha,
            upper,
            G,
            G_bar,
            p,
            index,
            active,
            n_active,
            kc,
        )
    return G, n_iter, converged


@njit(cache=True)
def _update_g_bar(y, upper, index, G_bar, i, old, new, row_i):
    was_up = old >= upper[i]
    is_up = new >= upper[i]
    if was_up == is_up:
        return
    sign = 1.0 if is_up else -1.0
    coef = sign * upper[i] * y[i]
    for t in range(y.shape[0]):
        G_bar[t] += coef * y[t] * row_i[index[t]]


@njit(cache=True)
def _select(
    y,
    alpha,
    upper,
    G,
    diag,
    index,
    active,
    n_active,
    equality,
    tol,
    kc,
):
    """Working set: ``(i, j, stop)``; ``j`` is −1 without the equality."""
    if not equality:
        best = -1.0
        i = -1
        viol = 0.0
        for k in range(n_active):
            t = active[k]
            if upper[t] <= 0.0:
                continue
            g = G[t]
            if alpha[t] <= 0.0:
                pg = min(g, 0.0)
            elif alpha[t] >= upper[t]:
                pg = max(g, 0.0)
            else:
                pg = g
            if pg == 0.0:
                continue
            viol = max(viol, abs(pg))
            qd = diag[index[t]] if diag[index[t]] > 0.0 else _TAU
            d = min(max(alpha[t] - g / qd, 0.0), upper[t]) - alpha[t]
            gain = -(g * d + 0.5 * qd * d * d)
            if gain > best:
                best = gain
                i = t
        return i, -1, viol < tol or i < 0
    g_max = -np.inf
    i = -1
    for k in range(n_active):
        t = active[k]
        if _in_up(t, y, alpha, upper):
            v = -y[t] * G[t]
            if v >= g_max:
                g_max = v
                i = t
    if i < 0:
        return -1, -1, True
    row_i = _get_row(index[i], kc)
    d_i = diag[index[i]]
    g_max2 = -np.inf
    best = np.inf
    j = -1
    for k in range(n_active):
        t = active[k]
        if _in_low(t, y, alpha, upper):
            v = y[t] * G[t]
            if v > g_max2:
                g_max2 = v
            b = g_max + v
            if b > 0.0:
                a = index[t]
                curv = d_i + diag[a] - 2.0 * row_i[a]
                if curv <= 0.0:
                    curv = _TAU
                obj = -b * b / curv
                if obj <= best:
                    best = obj
                    j = t
    return i, j, g_max + g_max2 < tol or j < 0


@njit(cache=True)
def _shrink(
    y,
    alpha,
    upper,
    G,
    G_bar,
    p,
    index,
    active,
    n_active,
    unshrunk,
    equality,
    tol,
    kc,
):
    """Set aside bounded variables that cannot enter a working set; return the new active size."""
    n = y.shape[0]
    g1 = -np.inf  # equality: max_{I_up} −yG; otherwise max |projected gradient|
    g2 = -np.inf  # equality: max_{I_low} yG
    for k in range(n_active):
        t = active[k]
        if equality:
            if _in_up(t, y, alpha, upper):
                g1 = max(g1, -y[t] * G[t])
            if _in_low(t, y, alpha, upper):
                g2 = max(g2, y[t] * G[t])
        elif upper[t] > 0.0:
            if alpha[t] <= 0.0:
                pg = -min(G[t], 0.0)
            elif alpha[t] >= upper[t]:
                pg = max(G[t], 0.0)
            else:
                pg = abs(G[t])
            g1 = max(g1, pg)
    gap = g1 + g2 if equality else g1
    if not unshrunk and gap <= 10.0 * tol:
        unshrunk = True
        _reconstruct_gradient(
            y,
            alpha,
            upper,
            G,
            G_bar,
            p,
            index,
            active,
            n_active,
            kc,
        )
        n_active = n
        for t in range(n):
            active[t] = t
    k = 0
    while k < n_active:
        t = active[k]
        out = False
        at_up = alpha[t] >= upper[t]
        at_low = alpha[t] <= 0.0
        if equality:
            if at_up:
                out = -G[t] > g1 if y[t] > 0 else -G[t] > g2
            elif at_low:
                out = G[t] > g2 if y[t] > 0 else G[t] > g1
        elif at_low and upper[t] > 0.0:
            out = G[t] > g1
        elif at_up:
            out = G[t] < -g1
        if out:
            n_active -= 1
            active[k] = active[n_active]
            active[n_active] = t
        else:
            k += 1
    return n_active, unshrunk


@njit(cache=True)
def _reconstruct_gradient(
    y,
    alpha,
    upper,
    G,
    G_bar,
    p,
    index,
    active,
    n_active,
    kc,
):
    """Recompute ``G`` of the set-aside variables from ``G_bar`` and the free variables."""
    n = y.shape[0]
    if n_active == n:
        return
    for k in range(n_active, n):
        t = active[k]
        G[t] = G_bar[t] + p[t]
    n_free = 0
    for k in range(n_active):
        t = active[k]
        if 0.0 < alpha[t] < upper[t]:
            n_free += 1
    if n_free * n > 2 * n_active * (n - n_active):
        # fewer rows: one per set-aside variable
        for k in range(n_active, n):
            t = active[k]
            row = _get_row(index[t], kc)
            acc = 0.0
            for kk in range(n_active):
                f = active[kk]
                if 0.0 < alpha[f] < upper[f]:
                    acc += y[f] * alpha[f] * row[index[f]]
            G[t] += y[t] * acc
    else:
        for kk in range(n_active):
            f = active[kk]
            if 0.0 < alpha[f] < upper[f]:
                row = _get_row(
                    index[f],
                    kc,
                )
                c = y[f] * alpha[f]
                for k in range(n_active, n):
                    t = active[k]
                    G[t] += y[t] * c * row[index[t]]


def _intercept(y: np.ndarray, alpha: np.ndarray, upper: np.ndarray, G: np.ndarray) -> float:
    """libsvm's offset: mean of −y_iG_i over free variables, else the middle of the interval."""
    yg = y * G
    free = (alpha > 0) & (alpha < upper)
    if free.any():
        return float(-yg[free].mean())
    at_up = alpha >= upper
    at_low = alpha <= 0
    # −b must lie in [lb, ub]
    ub_mask = (at_up & (y < 0)) | (at_low & (y > 0))
    lb_mask = (at_up & (y > 0)) | (at_low & (y < 0))
    ub = yg[ub_mask].min() if ub_mask.any() else np.inf
    lb = yg[lb_mask].max() if lb_mask.any() else -np.inf
    if np.isfinite(ub) and np.isfinite(lb):
        return float(-(ub + lb) / 2)
    return float(-(ub if np.isfinite(ub) else lb if np.isfinite(lb) else 0.0))


def smo_solve(
    y: np.ndarray,
    p: np.ndarray,
    upper: np.ndarray,
    points: np.ndarray,
    *,
    index: np.ndarray | None = None,
    kernel: str | Callable = "rbf",
    gamma: float = 1.0,
    degree: int = 3,
    coef0: float = 0.0,
    equality: bool = True,
    tol: float = 1e-3,
    max_iter: int = -1,
    cache_size: float = 200.0,
    shrinking: bool = True,
    alpha0: np.ndarray | None = None,
) -> BoxQPResult:
    """Solve ``min ½αᵀQα + pᵀα, 0 ≤ α ≤ upper (, yᵀα = 0)`` by SMO.

    Parameters
    ----------
    y : ndarray of shape (n_variables,)
        Labels ±1 of the variables.
    p : ndarray of shape (n_variables,)
        Linear term (−1 for a labelled SVM point, ``ε`` for a U-SVM universum copy).
    upper : ndarray of shape (n_variables,)
        Upper bounds (``C``, ``C_U``; ``np.inf`` allowed, ``0`` fixes a variable at 0).
    points : ndarray of shape (n_points, n_features) or (n_points, n_points)
        Kernel points; with ``kernel="precomputed"`` the square Gram matrix of the points.
    index : ndarray of int of shape (n_variables,) or None
        Point of each variable (``None``: variable ``i`` is point ``i``).
    kernel : {"linear", "rbf", "poly", "sigmoid", "precomputed"} or callable
        See :mod:`bci_universum.solvers.kernels`; a callable's Gram matrix is formed first.
    gamma, degree, coef0 : float, int, float
        Kernel parameters (``gamma`` numeric).
    equality : bool
        Enforce ``yᵀα = 0`` (a machine with an offset ``b``).
    tol : float
        Stopping tolerance on the KKT violation (as libsvm's ``eps``).
    max_iter : int
        Cap on updates; ``-1`` means libsvm's safeguard ``max(10⁷, 100·n_variables)``.
        Reaching the cap emits a :class:`~sklearn.exceptions.ConvergenceWarning`.
    cache_size : float
        Kernel-row cache in megabytes (built-in kernels; at least two rows are kept).
    shrinking : bool
        Use the shrinking heuristic.
    alpha0 : ndarray of shape (n_variables,) or None
        Feasible warm start (zeros by default).

    Returns
    -------
    result : BoxQPResult
        ``alpha``, ``intercept`` (0 without the equality), ``objective``, ``n_iter``,
        ``converged`` and ``gradient``.
    """
    check_kernel(kernel)
    if not tol > 0:
        raise ValueError(f"tol must be positive, got {tol}.")
    if callable(kernel):
        points = kernel_matrix(points, kernel=kernel)
        kernel = "precomputed"
    points = np.ascontiguousarray(points, dtype=np.float64)
    if points.ndim != 2:
        raise ValueError(f"points must be a 2-D array, got shape {points.shape}.")
    if kernel == "precomputed" and points.shape[0] != points.shape[1]:
        raise ValueError(f"A precomputed kernel must be square, got shape {points.shape}.")
    n_points = points.shape[0]
    y, p, upper, index, alpha = check_box_qp(y, p, upper, n_points, index, alpha0, equality)
    n = y.shape[0]
    if max_iter is None or max_iter < 0:
        max_iter = max(10_000_000, 100 * n)
    kcode = KERNEL_CODES[kernel]
    if kcode == _PRECOMPUTED:
        X, K, n_slots = np.empty((0, 1)), points, 0
    else:
        X, K = points, np.empty((0, 0))
        n_slots = int(min(n_points, max(2, cache_size * 2**20 // (8 * max(n_points, 1)))))
    G, n_iter, converged = _smo_core(
        y,
        p,
        upper,
        index,
        alpha,
        X,
        K,
        kcode,
        float(gamma),
        float(degree),
        float(coef0),
        bool(equality),
        float(tol),
        int(max_iter),
        n_slots,
        bool(shrinking),
    )
    if not converged:
        warnings.warn(
            f"SMO stopped after max_iter={max_iter} updates without reaching tol={tol}; "
            "increase max_iter or tol.",
            ConvergenceWarning,
            stacklevel=2,
        )
    intercept = _intercept(y, alpha, upper, G) if equality else 0.0
    objective = 0.5 * float(alpha @ (G + p))
    return BoxQPResult(alpha, intercept, objective, int(n_iter), bool(converged), gradient=G)
