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
  bound) at the end, and the run goes on if any of them then violates. Like libsvm it is also
  rebuilt once the violation is within ``10·tol``, but only when every full row fits in the
  cache: otherwise that costs a full row per free point (a fifth of the kernel entries of a
  16000 + 8000 RBF U-SVM fit) and changed neither the number of updates nor the optimum
  there, while on small degenerate problems it saves updates.
* The gradient is kept per *point*, ``F = Σ_j y_j α_j k(·, x_index[j])``, with
  ``G_t = y_t F[index_t] + p_t``: both copies of a universum trial share one update and one
  kernel row. ``F`` is stored in the point order of the cache (below), so that the update by
  two rows is a contiguous loop; the working-set selection reads it through each variable's
  position and is branch-free (see :func:`_select`).
* Kernel rows are computed per *point* in numba loops (never BLAS calls, so the speed does not
  depend on the BLAS thread pool) from a transposed copy of the points kept in the point
  order, so that a row streams through memory, and kept in a least-recently-used cache of
  ``cache_size`` megabytes, restricted to the active set as in libsvm: the points of active
  variables are moved to the front of the point order when shrinking has cut them by a
  tenth, rows cover only that prefix (so more of them fit) and are extended when the active
  set grows. RBF rows are float32 when ``tol ≥ 1e-4`` (libsvm's choice; see
  :func:`_kernel_points`). With ``kernel="precomputed"`` (and for callables, whose Gram
  matrix is computed first) rows are read from the matrix.
* The offset follows libsvm: the mean of ``−y_iG_i`` over free variables, or the middle of the
  feasible interval when no variable is free.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable

import numpy as np
from numba import njit
from numba.typed import List
from sklearn.exceptions import ConvergenceWarning

from ._box_qp import BoxQPResult, check_box_qp
from .kernels import (
    KERNEL_CODES,
    _kernel_value,
    check_kernel,
    kernel_matrix,
    kernel_row,
    row_dot,
    squared_norms,
)

_TAU = 1e-12
_PRECOMPUTED = KERNEL_CODES["precomputed"]
_RELAYOUT = 0.9  # re-lay the cache out when the active points fall below this share
_SINGLE_MIN_TOL = 1e-4  # float32 rows only from this stopping tolerance on
_TILE_BYTES = 2**18  # transposed points per tile when rebuilding the gradient (_unshrink)


@njit(cache=True)
def _fill(point, lo, out, kc):
    """``out[k] = k(point, order[lo + k])`` for a built-in kernel, from the transposed points
    kept in the point order (``kc[15]``, with their squared norms ``kc[16]``)."""
    X, sq, pos = kc[0], kc[1], kc[6]
    kcode, gamma, degree, coef0 = kc[11:15]
    own = pos[point] - lo
    kernel_row(X[point], sq[point], kc[15], kc[16], lo, own, kcode, gamma, degree, coef0, out)


@njit(cache=True)
def _unlink(links, a):
    links[1, links[0, a]] = links[1, a]
    links[0, links[1, a]] = links[0, a]


@njit(cache=True)
def _link_front(links, a):
    head = links.shape[1] - 1
    links[0, a] = head
    links[1, a] = links[1, head]
    links[0, links[1, head]] = a
    links[1, head] = a


@njit(cache=True)
def _get_row(point, length, kc):
    """Kernel row of ``point`` over the points ``order[:length]``: cached, computed, or read
    from ``K`` when precomputed.

    ``kc`` packs the kernel state ``(X, sq_norms, K, rows, links, order, pos, state, scratch,
    layout_of, layouts, kernel_code, gamma, degree, coef0, XT, sqT)``, where ``XT[:, k]`` is
    point ``order[k]`` and ``sqT[k]`` its squared norm. As in libsvm's cache,
    ``rows[a]`` holds the row of point ``a`` over a prefix of the point order, an empty array
    when not cached; a shorter row is extended by the missing entries only. The order changes
    when the active points are moved to its front (:func:`_relayout`): a row keeps the number
    ``layout_of[a]`` of the order it was computed in (``layouts[e]`` is that order's ``pos``)
    and is carried over to the current one when next used. ``links`` is the doubly linked LRU
    list of the cached points (node ``n_points`` is the head); ``state`` is ``(n_layout, used,
    budget, layout)``: the active points are ``order[:n_layout]``, rows take at most
    ``budget`` entries in all (least recently used rows are dropped first).
    """
    if kc[11] == _PRECOMPUTED:
        return kc[2][point]  # the point order stays the identity (see _relayout)
    rows, links, order, state, layout_of, layouts = kc[3], kc[4], kc[5], kc[7], kc[9], kc[10]
    row = rows[point]
    have = row.shape[0]
    if have > 0:
        _unlink(links, point)
        if have >= length and layout_of[point] == state[3]:
            _link_front(links, point)
            return row
        state[1] -= have
    head = links.shape[1] - 1
    while state[1] + length > state[2] and links[0, head] != head:
        old = links[0, head]
        _unlink(links, old)
        state[1] -= rows[old].shape[0]
        rows[old] = np.empty(0, dtype=row.dtype)
    if have > 0 and layout_of[point] != state[3]:
        # carry the row over to the current order: the prefix of it that the row covers
        old_pos = layouts[layout_of[point]]
        valid = 0
        while valid < have and old_pos[order[valid]] < have:
            valid += 1
        new = np.empty(max(valid, length), dtype=row.dtype)
        for k in range(valid):
            new[k] = row[old_pos[order[k]]]
        have = valid
    else:
        new = np.empty(length, dtype=row.dtype)
        new[:have] = row
    _fill(point, have, new[have:length], kc)
    rows[point] = new
    layout_of[point] = state[3]
    state[1] += new.shape[0]
    _link_front(links, point)
    return new


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
def _sides(t, y, alpha, upper):
    """Bit 1: variable ``t`` is in ``I_up``; bit 2: in ``I_low``."""
    return np.uint8(_in_up(t, y, alpha, upper) + 2 * _in_low(t, y, alpha, upper))


@njit(cache=True)
def _kernel_state(X, sq, K, kcode, gamma, degree, coef0, empty_row, budget):
    """The packed kernel state of :func:`_get_row` (nothing cached) and the kernel diagonal."""
    n_points = X.shape[0] if kcode != _PRECOMPUTED else K.shape[0]
    diag = np.empty(n_points)
    rows = List()
    for a in range(n_points):
        if kcode == _PRECOMPUTED:
            diag[a] = K[a, a]
        else:
            diag[a] = _kernel_value(sq[a], sq[a], sq[a], kcode, gamma, degree, coef0)
        rows.append(empty_row.copy())
    links = np.empty((2, n_points + 1), dtype=np.int64)
    links[:, n_points] = n_points
    state = np.array([n_points, 0, max(budget, 2 * n_points), 0], dtype=np.int64)
    order = np.arange(n_points)
    layouts = List()
    layouts.append(order.copy())
    kc = (X, sq, K, rows, links, order, order.copy(), state, np.empty(n_points))
    kc = (*kc, np.zeros(n_points, dtype=np.int64), layouts, kcode, gamma, degree, coef0)
    return (*kc, np.ascontiguousarray(X.T), sq.copy()), diag


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
    empty_row,
    budget,
    shrinking,
):
    """Run SMO on ``alpha`` (in place); return ``(gradient, n_iter, converged)``.

    The gradient is kept per *point*: ``F[a] = Σ_j y_j α_j k(a, index_j)`` (the decision value
    without offset), so that ``G_t = y_t F[index_t] + p_t`` and both copies of a universum
    trial are updated at once. ``Fbar`` is the part of ``F`` from variables at their upper
    bound (libsvm's ``G_bar``). As in libsvm, variables are permuted so that the active ones
    form a prefix (``perm`` maps back), and points so that theirs form a prefix of the point
    order (the cache's columns); ``F`` is kept up to date on that prefix only. ``F`` and
    ``Fbar`` are indexed by position in the point order (``F[k]`` is the value at point
    ``order[k]``; variable ``t`` reads position ``vpos[t]``), and move with it.
    """
    n = y.shape[0]
    kc, diag = _kernel_state(X, sq, K, kcode, gamma, degree, coef0, empty_row, budget)
    n_points = diag.shape[0]
    pos, state = kc[6], kc[7]
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
                row = _get_row(index[j], n_points, kc)
                c = y[j] * alpha[j]
                cbar = y[j] * upper[j] if alpha[j] >= upper[j] else 0.0
                for k in range(n_points):
                    F[k] += c * row[k]
                    Fbar[k] += cbar * row[k]
    # working copies, permuted as variables are set aside; the selection reads the last four
    # only (contiguous and compact): vpos[t] = pos[index[t]], qd[t] = diag[index[t]],
    # yp[t] = y[t]·p[t] and side[t] (see _sides)
    v = (y.copy(), p.copy(), upper.copy(), index.copy(), alpha.copy(), np.arange(n))
    side = np.empty(n, dtype=np.uint8)
    for t in range(n):
        side[t] = _sides(t, y, alpha, upper)
    v = (*v, pos[index].astype(np.int32), diag[index], y * p, side)
    y, p, upper, index, alpha_w, perm, vpos, qd, _, side = v
    n_active = n
    scratch = (np.empty(n), np.empty(n))
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
        i, j, stop = _select(v, F, n_active, equality, tol, kc, scratch)
        if stop:
            if n_active < n:
                n_active = _unshrink(v, F, Fbar, n_active, kc)
                i, j, stop = _select(v, F, n_active, equality, tol, kc, scratch)
                counter = 1
            if stop:
                converged = True
                break
        n_iter += 1
        m = state[0]
        row_i = _get_row(index[i], m, kc)
        old_i = alpha_w[i]
        G_i = y[i] * F[vpos[i]] + p[i]
        c_j = 0.0
        row_j = row_i
        if equality:
            row_j = _get_row(index[j], m, kc)
            old_j = alpha_w[j]
            G_j = y[j] * F[vpos[j]] + p[j]
            # move t ≥ 0 along y_i e_i − y_j e_j, exact line search clipped to the box
            curv = qd[i] + qd[j] - 2.0 * row_i[vpos[j]]
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
            side[j] = _sides(j, y, alpha_w, upper)
        else:
            qd_i = qd[i] if qd[i] > 0.0 else _TAU
            alpha_w[i] = min(max(old_i - G_i / qd_i, 0.0), upper[i])
        c_i = y[i] * (alpha_w[i] - old_i)
        side[i] = _sides(i, y, alpha_w, upper)
        for k in range(m):
            F[k] += c_i * row_i[k] + c_j * row_j[k]
        if equality:
            _update_f_bar(v, Fbar, j, old_j, row_j, kc)
        _update_f_bar(v, Fbar, i, old_i, row_i, kc)
    if n_active < n:
        _unshrink(v, F, Fbar, n_active, kc)
    G = np.empty(n)
    for t in range(n):
        alpha[perm[t]] = alpha_w[t]
        G[perm[t]] = y[t] * F[vpos[t]] + p[t]
    return G, n_iter, converged


@njit(cache=True)
def _update_f_bar(v, Fbar, i, old, row, kc):
    """Add or remove variable ``i``'s bound contribution to ``Fbar`` when it reaches/leaves it.

    ``row`` is the (possibly shorter) cached row of ``i``'s point; the entries past it are
    computed into scratch space rather than stored, so the cache keeps rows of active points.
    """
    y, _, upper, index, alpha = v[:5]
    was_up = old >= upper[i]
    is_up = alpha[i] >= upper[i]
    if was_up == is_up:
        return
    rest = kc[8]
    coef = (1.0 if is_up else -1.0) * upper[i] * y[i]
    have = row.shape[0]
    n_points = Fbar.shape[0]
    for k in range(have):
        Fbar[k] += coef * row[k]
    if have < n_points:
        _fill(index[i], have, rest[have:], kc)
        for k in range(have, n_points):
            Fbar[k] += coef * rest[k]


@njit(cache=True, fastmath={"nnan"})
def _select(v, F, n_active, equality, tol, kc, scratch):
    """Working set among the first ``n_active`` variables: ``(i, j, stop)``; ``j = −1``
    without the equality.

    With the equality, each pass is branch-free (a value per variable into the scratch arrays
    ``u``, ``w``, masked by ``±inf``, and a reduction) and reads compact arrays (``side``
    rather than ``y``, ``alpha`` and ``upper``): unpredictable branches made it several times
    slower, and it streams through every active variable. The index is then the last one
    reaching the extreme, as in a scan that keeps ties.
    """
    y, p, upper, index, alpha, _, vpos, qd, yp, side = v
    u, w = scratch
    if not equality:
        best = -1.0
        i = -1
        viol = 0.0
        for t in range(n_active):
            if upper[t] <= 0.0:
                continue
            g = y[t] * F[vpos[t]] + p[t]
            if alpha[t] <= 0.0:
                pg = min(g, 0.0)
            elif alpha[t] >= upper[t]:
                pg = max(g, 0.0)
            else:
                pg = g
            if pg == 0.0:
                continue
            viol = max(viol, abs(pg))
            qd_t = qd[t] if qd[t] > 0.0 else _TAU
            d = min(max(alpha[t] - g / qd_t, 0.0), upper[t]) - alpha[t]
            gain = -(g * d + 0.5 * qd_t * d * d)
            if gain > best:
                best = gain
                i = t
        return i, -1, viol < tol or i < 0
    # i: the maximum of −y_tG_t over I_up
    g_max = -np.inf
    for t in range(n_active):
        u[t] = -F[vpos[t]] - yp[t]
        g_max = max(g_max, u[t] if side[t] & 1 else -np.inf)
    if g_max == -np.inf:
        return -1, -1, True
    i = n_active - 1
    while u[i] != g_max or not side[i] & 1:
        i -= 1
    row_i = _get_row(index[i], kc[7][0], kc)
    d_i = qd[i]
    # j: the largest second-order decrease with i among the violating pairs of I_low
    g_max2 = -np.inf
    best = np.inf
    for t in range(n_active):
        low = side[t] & 2 != 0
        val = -u[t]  # F[vpos[t]] + yp[t], exactly
        g_max2 = max(g_max2, val if low else -np.inf)
        b = g_max + val
        curv = d_i + qd[t] - 2.0 * row_i[vpos[t]]
        curv = curv if curv > 0.0 else _TAU
        obj = -b * b / curv
        w[t] = obj if low & (b > 0.0) else np.inf
        best = min(best, w[t])
    if best == np.inf:
        return i, -1, True
    j = n_active - 1
    while w[j] != best:
        j -= 1
    return i, j, g_max + g_max2 < tol


@njit(cache=True)
def _swap(v, a, b):
    """Exchange variables ``a`` and ``b`` in every working array."""
    y, p, upper, index, alpha, perm, vpos, qd, yp, side = v
    y[a], y[b] = y[b], y[a]
    p[a], p[b] = p[b], p[a]
    upper[a], upper[b] = upper[b], upper[a]
    index[a], index[b] = index[b], index[a]
    alpha[a], alpha[b] = alpha[b], alpha[a]
    perm[a], perm[b] = perm[b], perm[a]
    vpos[a], vpos[b] = vpos[b], vpos[a]
    qd[a], qd[b] = qd[b], qd[a]
    yp[a], yp[b] = yp[b], yp[a]
    side[a], side[b] = side[b], side[a]


@njit(cache=True)
def _shrink(v, F, Fbar, n_active, unshrunk, equality, tol, kc):
    """Set aside bounded variables that cannot enter a working set; return the new active size."""
    y, p, upper, _, alpha = v[:5]
    g1 = -np.inf  # equality: max_{I_up} −yG; otherwise max |projected gradient|
    g2 = -np.inf  # equality: max_{I_low} yG
    vpos = v[6]
    for t in range(n_active):
        G_t = y[t] * F[vpos[t]] + p[t]
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
        if _every_row_fits(kc):  # else a full row per free point
            n_active = _unshrink(v, F, Fbar, n_active, kc)
    t = 0
    while t < n_active:
        G_t = y[t] * F[vpos[t]] + p[t]
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
    _relayout(v, F, Fbar, n_active, kc)
    return n_active, unshrunk


@njit(cache=True)
def _every_row_fits(kc):
    """Whether the cache holds a full row of every point (or the kernel is precomputed)."""
    n_points = kc[5].shape[0]
    return kc[11] == _PRECOMPUTED or kc[7][2] >= n_points * n_points


@njit(cache=True)
def _relayout(v, F, Fbar, n_active, kc):
    """Move the points of the first ``n_active`` variables to the front of the point order.

    Done once they are at most ``_RELAYOUT`` of the current prefix (libsvm swaps the cache's
    columns on every shrink): a new order is recorded, and cached rows are carried over to it
    only when next used. Rows computed from then on cover the shorter prefix, so the cache
    holds more of them; longer rows keep their entries (a full row of a free point is what
    rebuilding the gradient needs). Never when every full row fits in the cache (or the
    kernel is precomputed): carrying rows over would then cost more than it saves. ``F``,
    ``Fbar`` and the variables' positions ``vpos`` follow the new order.
    """
    index, vpos = v[3], v[6]
    order, pos, state, layouts = kc[5], kc[6], kc[7], kc[10]
    if _every_row_fits(kc):
        return
    m_old = state[0]
    mark = np.zeros(order.shape[0], dtype=np.bool_)
    for t in range(n_active):
        mark[index[t]] = True
    m_new = 0
    for k in range(m_old):
        m_new += mark[order[k]]
    if m_new > _RELAYOUT * m_old:
        return
    new_order = np.empty(m_old, dtype=np.int64)
    c = 0
    for k in range(m_old):
        if mark[order[k]]:
            new_order[c] = order[k]
            c += 1
    for k in range(m_old):
        if not mark[order[k]]:
            new_order[c] = order[k]
            c += 1
    X, sq, XT, sqT = kc[0], kc[1], kc[15], kc[16]
    F_old, Fbar_old = F[:m_old].copy(), Fbar[:m_old].copy()
    for k in range(m_old):
        F[k] = F_old[pos[new_order[k]]]
        Fbar[k] = Fbar_old[pos[new_order[k]]]
    for k in range(m_old):
        order[k] = new_order[k]
        pos[new_order[k]] = k
        sqT[k] = sq[new_order[k]]
    for t in range(index.shape[0]):
        vpos[t] = pos[index[t]]
    for f in range(XT.shape[0]):
        for k in range(m_old):
            XT[f, k] = X[new_order[k], f]
    layouts.append(pos.copy())
    state[3] += 1
    state[0] = m_new


@njit(cache=True)
def _unshrink(v, F, Fbar, n_active, kc):
    """Make every variable active again, first rebuilding ``F`` past the point prefix.

    ``F = Fbar + Σ_free y_j α_j k(·, index_j)``: free variables are all active (only bounded
    ones are set aside), so their points lie in the prefix; the entries of their rows past it
    are computed (libsvm's ``reconstruct_gradient``). Unlike libsvm, not through the cache:
    by tiles of the points past the prefix (``_TILE_BYTES`` of transposed points, which stay
    in the CPU cache while every free point's entries on them are computed, instead of
    streaming all points once per free row), and without evicting the cached rows of the
    active set. The entries and the order of the sums are those of the rows, so ``F`` is the
    same. Returns the new active size (all variables).
    """
    y, _, upper, _, alpha, _, vpos = v[:7]
    n = y.shape[0]
    order, state = kc[5], kc[7]
    n_points = F.shape[0]
    m = state[0]
    if m < n_points:
        free = np.zeros(n_points)  # Σ over free variables of y_j α_j, per point position
        for f in range(n_active):
            if 0.0 < alpha[f] < upper[f]:
                free[vpos[f]] += y[f] * alpha[f]
        for k in range(m, n_points):
            F[k] = Fbar[k]
        XT = kc[15]
        tile = max(64, _TILE_BYTES // (XT.shape[0] * XT.itemsize))
        for lo in range(m, n_points, tile):
            hi = min(lo + tile, n_points)
            entries = np.empty_like(kc[16][lo:hi])  # the rows' dtype
            for kb in range(m):
                if free[kb] != 0.0:
                    _fill(order[kb], lo, entries, kc)
                    for k in range(lo, hi):
                        F[k] += free[kb] * entries[k - lo]
        state[0] = n_points
    return n


def _intercept(y: np.ndarray, alpha: np.ndarray, upper: np.ndarray, G: np.ndarray) -> float:
    """libsvm's offset: mean of −y_iG_i over free variables, else the middle of the interval
    that the bounded ones allow."""
    yg = y * G
    free = (alpha > 0) & (alpha < upper)
    if free.any():
        return float(-yg[free].mean())
    # a variable fixed at 0 (upper 0) bounds the offset on neither side: libsvm drops it
    fixed = upper <= 0
    at_up = (alpha >= upper) & ~fixed
    at_low = (alpha <= 0) & ~fixed
    # −b must lie in [lb, ub]
    ub_mask = (at_up & (y < 0)) | (at_low & (y > 0))
    lb_mask = (at_up & (y > 0)) | (at_low & (y < 0))
    ub = yg[ub_mask].min() if ub_mask.any() else np.inf
    lb = yg[lb_mask].max() if lb_mask.any() else -np.inf
    if np.isfinite(ub) and np.isfinite(lb):
        return float(-(ub + lb) / 2)
    return float(-(ub if np.isfinite(ub) else lb if np.isfinite(lb) else 0.0))


def _kernel_points(points: np.ndarray, kcode: int, cache_size: float, tol: float):
    """Points, squared norms, an empty row of the cache's dtype and the cache's size in entries.

    The cache holds ``cache_size`` MB of rows, float64 except for the RBF kernel when
    ``tol ≥ _SINGLE_MIN_TOL``: then float32 (libsvm's choice), computed in single precision
    from centred points (the kernel is translation invariant and bounded by 1, so the rows are
    accurate to ~1e-7). They take half the memory and about half the fit time, even when every
    float64 row would fit: computing a row, updating the gradient by two rows and the
    working-set selection all stream rows. The gradient is accumulated in float64, but from
    the rounded rows: it drifts by ~1e-6 over a run. The solution is unaffected (the objective
    is second order in that drift), while the stopping test and the objective computed from
    the gradient are not; tighter tolerances therefore keep float64 rows.
    """
    budget = cache_size * 2**20
    rbf = kcode == KERNEL_CODES["rbf"]
    single = rbf and tol >= _SINGLE_MIN_TOL
    dtype = np.float32 if single else np.float64
    entries = int(budget // np.dtype(dtype).itemsize)
    if kcode == _PRECOMPUTED:
        return np.empty((0, 1)), np.empty(0), np.empty(0), entries
    X = np.ascontiguousarray(points - points.mean(axis=0)) if rbf else points
    sq = squared_norms(X)
    return X.astype(dtype), sq.astype(dtype), np.empty(0, dtype=dtype), entries


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
    X, sq, empty_row, budget = _kernel_points(points, kcode, cache_size, tol)
    K = points if kcode == _PRECOMPUTED else np.empty((0, 0), dtype=empty_row.dtype)
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
        empty_row,
        budget,
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
