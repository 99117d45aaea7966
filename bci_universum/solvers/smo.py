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
  set aside (the variables are permuted so that the active ones form a prefix); the gradient of
  the set-aside ones is rebuilt from ``G_bar`` (the contribution of variables at their upper
  bound) once the violation is within ``10·tol`` and at the end.
* The gradient is kept per *point*, ``F = Σ_j y_j α_j k(·, x_index[j])``, with
  ``G_t = y_t F[index_t] + p_t``: both copies of a universum trial share one update.
* Kernel rows are computed per *point* in numba loops (never BLAS calls, so the speed does not
  depend on the BLAS thread pool) and kept in a least-recently-used cache of ``cache_size``
  megabytes. When a float64 row per point fits, every row is computed once in full; otherwise
  RBF rows are stored in float32 (libsvm's choice, computed in single precision from centred
  points: ~1e-7 relative) and rows are computed for the active points only, completed when a
  bound change needs them in full. With ``kernel="precomputed"`` (and for callables, whose Gram
  matrix is computed first) rows are read from the matrix.
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
from .kernels import (
    KERNEL_CODES,
    check_kernel,
    kernel_matrix,
    kernel_row,
    row_dot,
    squared_norms,
)

_TAU = 1e-12
_PRECOMPUTED = KERNEL_CODES["precomputed"]
_FULL = -1  # coverage of a cache row computed for every point
_STAYED = np.iinfo(np.int64).max  # ``gone`` of a point active since the last growth


@njit(cache=True)
def _get_row(point, full, kc):
    """Kernel row of ``point``: from ``K``, from the LRU cache, or computed into the cache.

    Entries are guaranteed for the active points only, or for every point when ``full``; when
    the cache holds a row per point, rows are always computed in full (each is computed once).
    ``kc`` packs the kernel state ``(X, sq_norms, K, cache, slot_of, owner, cover, links, state,
    act_pts, all_pts, gone, scratch, kernel_code, gamma, degree, coef0)``. ``state`` is
    ``(last_growth, n_active_points, n_used_slots, step)``: ``step`` counts the changes of the
    active set, ``last_growth`` is the step at which it last grew (between growths it only
    shrinks). ``cover[s]`` is ``_FULL`` or the step at which slot ``s`` was filled for the
    active points only; ``gone[a]`` the step at which point ``a`` left the active set since the
    last growth, so that such a row is completed by the points gone by its step. ``links`` is
    the doubly linked LRU list (prev, next; node ``n_slots`` is the head).
    """
    X, sq, K, cache, slot_of, owner, cover, links, state, act_pts, all_pts, gone, tmp = kc[:13]
    kcode, gamma, degree, coef0 = kc[13:]
    if kcode == _PRECOMPUTED:
        return K[point]
    head = cache.shape[0]
    s = slot_of[point]
    if s >= 0:
        # unlink, to be re-inserted at the front
        links[1, links[0, s]] = links[1, s]
        links[0, links[1, s]] = links[0, s]
        partial = cover[s] != _FULL and cover[s] >= state[0]
        valid = cover[s] == _FULL or (partial and not full)
    else:
        partial = valid = False
        if state[2] < head:
            s = state[2]
            state[2] += 1
        else:
            s = links[0, head]  # least recently used
            links[1, links[0, s]] = head
            links[0, head] = links[0, s]
            slot_of[owner[s]] = -1
        owner[s] = point
        slot_of[point] = s
    links[0, s] = head
    links[1, s] = links[1, head]
    links[0, links[1, head]] = s
    links[1, head] = s
    if not valid:
        n_points = X.shape[0]
        if partial:
            # complete: the points that left the active set by the row's step
            m = 0
            for a in range(n_points):
                if gone[a] <= cover[s]:
                    tmp[m] = a
                    m += 1
            kernel_row(point, X, sq, kcode, gamma, degree, coef0, tmp, m, cache[s])
            cover[s] = _FULL
        elif full or state[1] == n_points or head == n_points:
            kernel_row(point, X, sq, kcode, gamma, degree, coef0, all_pts, n_points, cache[s])
            cover[s] = _FULL
        else:
            kernel_row(point, X, sq, kcode, gamma, degree, coef0, act_pts, state[1], cache[s])
            cover[s] = state[3]
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
def _kernel_state(X, sq, K, kcode, gamma, degree, coef0, cache):
    """The packed kernel state of :func:`_get_row` and the kernel diagonal."""
    n_points = X.shape[0] if kcode != _PRECOMPUTED else K.shape[0]
    n_slots = cache.shape[0]
    diag = np.empty(n_points)
    all_pts = np.arange(n_points)
    for a in range(n_points):
        if kcode == _PRECOMPUTED:
            diag[a] = K[a, a]
        else:
            one = np.empty(1)
            kernel_row(
                0, X[a : a + 1], sq[a : a + 1], kcode, gamma, degree, coef0, all_pts, 1, one
            )
            diag[a] = one[0]
    links = np.empty((2, n_slots + 1), dtype=np.int64)
    links[:, n_slots] = n_slots
    state = np.array([0, n_points, 0, 0], dtype=np.int64)
    slot_of = -np.ones(n_points, dtype=np.int64)
    owner = -np.ones(n_slots, dtype=np.int64)
    cover = np.zeros(n_slots, dtype=np.int64)
    gone = np.full(n_points, _STAYED)
    scratch = np.empty(n_points, dtype=np.int64)
    kc = (X, sq, K, cache, slot_of, owner, cover, links, state, all_pts.copy(), all_pts)
    kc = (*kc, gone, scratch)
    return (*kc, kcode, gamma, degree, coef0), diag


@njit(cache=True)
def _smo_core(
    y,
    p,
    upper,
    index,
    alpha,
    X,
    sq,
    K,
    kcode,
    gamma,
    degree,
    coef0,
    equality,
    tol,
    max_iter,
    cache,
    shrinking,
):
    """Run SMO on ``alpha`` (in place); return ``(gradient, n_iter, converged)``.

    The gradient is kept per *point*: ``F[a] = Σ_j y_j α_j k(a, index_j)`` (the decision value
    without offset), so that ``G_t = y_t F[index_t] + p_t`` and both copies of a universum
    trial are updated at once. ``Fbar`` is the part of ``F`` from variables at their upper
    bound (libsvm's ``G_bar``). As in libsvm, variables are permuted so that the active ones
    form a prefix (``perm`` maps back); only the points of active variables are kept up to
    date.
    """
    n = y.shape[0]
    kc, diag = _kernel_state(X, sq, K, kcode, gamma, degree, coef0, cache)
    n_points = diag.shape[0]
    F = np.zeros(n_points)
    Fbar = np.zeros(n_points)
    if kcode == 0:
        # linear warm start: F = X w, without a row per non-zero variable
        w = np.zeros(X.shape[1])
        w_bar = np.zeros(X.shape[1])
        for j in range(n):
            if alpha[j] > 0.0:
                at_up = alpha[j] >= upper[j]
                for f in range(X.shape[1]):
                    w[f] += y[j] * alpha[j] * X[index[j], f]
                    if at_up:
                        w_bar[f] += y[j] * upper[j] * X[index[j], f]
        for a in range(n_points):
            F[a] = row_dot(X[a], w)
            Fbar[a] = row_dot(X[a], w_bar)
    else:
        for j in range(n):
            if alpha[j] > 0.0:
                row = _get_row(index[j], True, kc)
                c = y[j] * alpha[j]
                cbar = y[j] * upper[j] if alpha[j] >= upper[j] else 0.0
                for a in range(n_points):
                    F[a] += c * row[a]
                    Fbar[a] += cbar * row[a]
    # working copies, permuted as variables are set aside
    v = (y.copy(), p.copy(), upper.copy(), index.copy(), alpha.copy(), np.arange(n))
    y, p, upper, index, alpha_w, perm = v
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
                n_active, unshrunk = _shrink(v, F, Fbar, n_active, unshrunk, equality, tol, kc)
        i, j, stop = _select(v, F, diag, n_active, equality, tol, kc)
        if stop:
            if n_active < n:
                n_active = _unshrink(v, F, Fbar, n_active, kc)
                i, j, stop = _select(v, F, diag, n_active, equality, tol, kc)
                counter = 1
            if stop:
                converged = True
                break
        n_iter += 1
        row_i = _get_row(index[i], False, kc)
        old_i = alpha_w[i]
        G_i = y[i] * F[index[i]] + p[i]
        c_j = 0.0
        row_j = row_i
        if equality:
            row_j = _get_row(index[j], False, kc)
            old_j = alpha_w[j]
            G_j = y[j] * F[index[j]] + p[j]
            # move t ≥ 0 along y_i e_i − y_j e_j, exact line search clipped to the box
            curv = diag[index[i]] + diag[index[j]] - 2.0 * row_i[index[j]]
            if curv <= 0.0:
                curv = _TAU
            lim_i = upper[i] - old_i if y[i] > 0 else old_i
            lim_j = old_j if y[j] > 0 else upper[j] - old_j
            step = min((-y[i] * G_i + y[j] * G_j) / curv, lim_i, lim_j)
            alpha_w[i] = old_i + y[i] * step
            alpha_w[j] = old_j - y[j] * step
            if step == lim_i:
                alpha_w[i] = upper[i] if y[i] > 0 else 0.0
            if step == lim_j:
                alpha_w[j] = 0.0 if y[j] > 0 else upper[j]
            c_j = y[j] * (alpha_w[j] - old_j)
        else:
            qd = diag[index[i]] if diag[index[i]] > 0.0 else _TAU
            alpha_w[i] = min(max(old_i - G_i / qd, 0.0), upper[i])
        c_i = y[i] * (alpha_w[i] - old_i)
        state, act_pts = kc[8], kc[9]
        if state[1] == n_points:
            for a in range(n_points):
                F[a] += c_i * row_i[a] + c_j * row_j[a]
        else:
            for k in range(state[1]):
                a = act_pts[k]
                F[a] += c_i * row_i[a] + c_j * row_j[a]
        if equality:
            _update_f_bar(v, Fbar, j, old_j, kc)
        _update_f_bar(v, Fbar, i, old_i, kc)
    if n_active < n:
        _unshrink(v, F, Fbar, n_active, kc)
    G = np.empty(n)
    for t in range(n):
        alpha[perm[t]] = alpha_w[t]
        G[perm[t]] = y[t] * F[index[t]] + p[t]
    return G, n_iter, converged


@njit(cache=True)
def _update_f_bar(v, Fbar, i, old, kc):
    """Add or remove variable ``i``'s bound contribution to ``Fbar`` when it reaches/leaves it."""
    y, _, upper, index, alpha = v[:5]
    was_up = old >= upper[i]
    is_up = alpha[i] >= upper[i]
    if was_up == is_up:
        return
    row = _get_row(index[i], True, kc)
    coef = (1.0 if is_up else -1.0) * upper[i] * y[i]
    for a in range(Fbar.shape[0]):
        Fbar[a] += coef * row[a]


@njit(cache=True)
def _select(v, F, diag, n_active, equality, tol, kc):
    """Working set among the first ``n_active`` variables: ``(i, j, stop)``; ``j = −1``
    without the equality."""
    y, p, upper, index, alpha = v[:5]
    if not equality:
        best = -1.0
        i = -1
        viol = 0.0
        for t in range(n_active):
            if upper[t] <= 0.0:
                continue
            g = y[t] * F[index[t]] + p[t]
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
    for t in range(n_active):
        if _in_up(t, y, alpha, upper):
            val = -F[index[t]] - y[t] * p[t]
            if val >= g_max:
                g_max = val
                i = t
    if i < 0:
        return -1, -1, True
    row_i = _get_row(index[i], False, kc)
    d_i = diag[index[i]]
    g_max2 = -np.inf
    best = np.inf
    j = -1
    for t in range(n_active):
        if _in_low(t, y, alpha, upper):
            val = F[index[t]] + y[t] * p[t]
            if val > g_max2:
                g_max2 = val
            b = g_max + val
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
def _swap(v, a, b):
    """Exchange variables ``a`` and ``b`` in every working array."""
    y, p, upper, index, alpha, perm = v
    y[a], y[b] = y[b], y[a]
    p[a], p[b] = p[b], p[a]
    upper[a], upper[b] = upper[b], upper[a]
    index[a], index[b] = index[b], index[a]
    alpha[a], alpha[b] = alpha[b], alpha[a]
    perm[a], perm[b] = perm[b], perm[a]


@njit(cache=True)
def _shrink(v, F, Fbar, n_active, unshrunk, equality, tol, kc):
    """Set aside bounded variables that cannot enter a working set; return the new active size."""
    y, p, upper, index, alpha = v[:5]
    g1 = -np.inf  # equality: max_{I_up} −yG; otherwise max |projected gradient|
    g2 = -np.inf  # equality: max_{I_low} yG
    for t in range(n_active):
        G_t = y[t] * F[index[t]] + p[t]
        if equality:
            if _in_up(t, y, alpha, upper):
                g1 = max(g1, -y[t] * G_t)
            if _in_low(t, y, alpha, upper):
                g2 = max(g2, y[t] * G_t)
        elif upper[t] > 0.0:
            if alpha[t] <= 0.0:
                pg = -min(G_t, 0.0)
            elif alpha[t] >= upper[t]:
                pg = max(G_t, 0.0)
            else:
                pg = abs(G_t)
            g1 = max(g1, pg)
    gap = g1 + g2 if equality else g1
    if not unshrunk and gap <= 10.0 * tol:
        unshrunk = True
        n_active = _unshrink(v, F, Fbar, n_active, kc)
    t = 0
    while t < n_active:
        G_t = y[t] * F[index[t]] + p[t]
        out = False
        at_up = alpha[t] >= upper[t]
        at_low = alpha[t] <= 0.0
        if equality:
            if at_up:
                out = -G_t > g1 if y[t] > 0 else -G_t > g2
            elif at_low:
                out = G_t > g2 if y[t] > 0 else G_t > g1
        elif at_low and upper[t] > 0.0:
            out = G_t > g1
        elif at_up:
            out = G_t < -g1
        if out:
            n_active -= 1
            _swap(v, t, n_active)
        else:
            t += 1
    _set_active_points(index, n_active, kc)
    return n_active, unshrunk


@njit(cache=True)
def _set_active_points(index, n_active, kc):
    """Store the points of the active variables in the kernel state (``act_pts``, ``gone``)."""
    state, act_pts, gone = kc[8], kc[9], kc[11]
    n_points = act_pts.shape[0]
    state[3] += 1
    mark = np.zeros(n_points, dtype=np.bool_)
    for t in range(n_active):
        mark[index[t]] = True
    m = 0
    for a in range(n_points):
        if mark[a]:
            act_pts[m] = a
            m += 1
    grew = m > state[1]
    if grew:
        state[0] = state[3]  # rows filled for the old active set are incomplete
    for a in range(n_points):
        if mark[a]:
            if grew:
                gone[a] = _STAYED
        elif grew or gone[a] == _STAYED:
            gone[a] = state[3]
    state[1] = m


@njit(cache=True)
def _unshrink(v, F, Fbar, n_active, kc):
    """Make every variable active again, first rebuilding ``F`` at the set-aside points.

    ``F = Fbar + Σ_free y_j α_j k(·, index_j)``: free variables are all active (only bounded
    ones are set aside), so their rows or the rows of the set-aside points suffice. Returns
    the new active size (all variables).
    """
    y, _, upper, index, alpha = v[:5]
    n = y.shape[0]
    state, act_pts = kc[8], kc[9]
    n_points = F.shape[0]
    n_act_pts = state[1]
    if n_act_pts < n_points:
        inactive = np.ones(n_points, dtype=np.bool_)
        for k in range(n_act_pts):
            inactive[act_pts[k]] = False
        free = np.zeros(n_points)  # Σ over free variables of y_j α_j, per point
        for f in range(n_active):
            if 0.0 < alpha[f] < upper[f]:
                free[index[f]] += y[f] * alpha[f]
        for a in range(n_points):
            if inactive[a]:
                F[a] = Fbar[a]
        # cost of each way in kernel evaluations (d per uncached entry, 1 per cached one)
        X, slot_of, cover = kc[0], kc[4], kc[6]
        d = X.shape[1] if X.shape[1] > 0 else 1
        n_inactive = n_points - n_act_pts
        by_free = 0
        by_inactive = 0
        for a in range(n_points):
            s = slot_of[a]
            if free[a] != 0.0:
                by_free += n_inactive if s >= 0 and cover[s] == _FULL else n_points * d
            if inactive[a]:
                valid = s >= 0 and (cover[s] == _FULL or cover[s] >= state[0])
                by_inactive += n_act_pts if valid else n_act_pts * d
        if by_free <= by_inactive:
            # one full row per free point
            for b in range(n_points):
                if free[b] != 0.0:
                    row = _get_row(b, True, kc)
                    for a in range(n_points):
                        if inactive[a]:
                            F[a] += free[b] * row[a]
        else:
            # one row per set-aside point, over the active points (the free ones among them)
            for a in range(n_points):
                if inactive[a]:
                    row = _get_row(a, False, kc)
                    acc = 0.0
                    for k in range(n_act_pts):
                        b = act_pts[k]
                        acc += free[b] * row[b]
                    F[a] += acc
    _set_active_points(index, n, kc)
    return n


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


def _kernel_points(points: np.ndarray, kcode: int, cache_size: float):
    """Points, squared norms and row cache of the solver: ``(X, sq_norms, cache)``.

    The cache holds ``cache_size`` MB of rows, float64 except for the RBF kernel when a row
    per point does not fit: then float32 (libsvm's choice: twice the rows; the gradient is
    still accumulated in float64), computed in single precision from centred points (the
    kernel is translation invariant and bounded by 1, so the rows are accurate to ~1e-7).
    """
    if kcode == _PRECOMPUTED:
        return np.empty((0, 1)), np.empty(0), np.empty((0, 0))
    n_points = max(points.shape[0], 1)
    budget = cache_size * 2**20
    rbf = kcode == KERNEL_CODES["rbf"]
    single = rbf and 8 * n_points * n_points > budget
    dtype = np.float32 if single else np.float64
    n_slots = int(min(n_points, max(2, budget // (np.dtype(dtype).itemsize * n_points))))
    cache = np.empty((n_slots, n_points), dtype=dtype)
    X = np.ascontiguousarray(points - points.mean(axis=0)) if rbf else points
    sq = squared_norms(X)
    return (X.astype(np.float32) if single else X), sq, cache


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
    X, sq, cache = _kernel_points(points, kcode, cache_size)
    K = points if kcode == _PRECOMPUTED else np.empty((0, 0), dtype=cache.dtype)
    G, n_iter, converged = _smo_core(
        y,
        p,
        upper,
        index,
        alpha,
        X,
        sq,
        K,
        kcode,
        float(gamma),
        float(degree),
        float(coef0),
        bool(equality),
        float(tol),
        int(max_iter),
        cache,
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
