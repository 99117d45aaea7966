"""Primal–dual interior point for linear-kernel box duals, finished by SMO.

:func:`ipm_solve` solves the problem of :func:`bci_universum.solvers.smo.smo_solve` with the
linear kernel, ``min ½αᵀQα + pᵀα, 0 ≤ α ≤ upper (, yᵀα = 0)``, ``Q = UUᵀ`` with
``U = diag(y) X[index]``. Coordinate methods (SMO, DCD) need very many steps on such problems
when ``Q`` is ill-conditioned: a low rank (more variables than features), or universum trials
on a much larger scale than the labelled ones. Mehrotra's predictor–corrector method needs a
few dozen Newton steps whatever the conditioning; each solves ``(Q + D) x = r`` with ``D``
diagonal, by the Woodbury identity through an ``r × r`` matrix, ``r = n_features``, when there
are more variables than features (as in Ferris & Munson, "Interior-point methods for massive
support vector machines", SIAM J. Optim. 2002), else by a dense Cholesky factorisation.

The interior solution is then snapped to its bounds (by complementarity) and handed to SMO as a
warm start, so that the result has SMO's exact bounds, offset and stopping rule.

:func:`cs_warm_start` does the same for the Crammer–Singer-type dual of
:func:`bci_universum.solvers.crammer_singer.cs_solve` with the linear kernel, whose sequential
dual passes crawl for the same reason (tens of thousands of passes with a universum in few
features). In the slack ``v = u − α ≥ 0`` its constraints are ``v ≥ 0`` and one sum per sample,
``Σ_l v_il = C_i``; its Hessian is ``I_L ⊗ X[index] X[index]ᵀ``, of rank at most
``n_classes · n_features``. A Newton step solves the per-sample sums in closed form and adds
the Hessian by the Woodbury identity through an ``(n_classes · n_features)``-square matrix.
"""

from __future__ import annotations

import numpy as np
from scipy.linalg import cho_factor, cho_solve
from threadpoolctl import threadpool_limits

from ._box_qp import _IPM_MAX_COST, BoxQPResult, check_box_qp
from .smo import smo_solve

_STEP = 0.995  # fraction of the step to the boundary of the positive orthant
_TINY = np.finfo(np.float64).tiny


def _solver(U: np.ndarray, Q: np.ndarray | None, D: np.ndarray):
    """``x ↦ (UUᵀ + diag D)⁻¹ x``: by Woodbury through ``r × r`` when ``Q = UUᵀ`` was not
    formed (``U`` tall), else by a dense factorisation of ``Q + diag D``."""
    if Q is None:
        V = U / D[:, None]
        factor = cho_factor(np.eye(U.shape[1]) + U.T @ V)
        return lambda x: x / D - V @ cho_solve(factor, V.T @ x)
    H = Q.copy()
    H[np.diag_indices_from(H)] += D
    factor = cho_factor(H)
    return lambda x: cho_solve(factor, x)


def _direction(state, solve, rd, rp, rc_z, rc_w):
    """Newton direction ``(dα, dz, dw, dν)`` for the complementarity targets ``rc_z, rc_w``."""
    a, s, z, w, fin = state
    da, dnu = solve(-rd + rc_z / a - np.where(fin, rc_w / s, 0.0), rp)
    dz = (rc_z - z * da) / a
    dw = np.where(fin, (rc_w + w * da) / s, 0.0)
    return da, dz, dw, dnu


def _max_step(state, da, dz, dw) -> float:
    """Largest step in [0, 1] keeping α, the upper slacks and the multipliers non-negative."""
    a, s, z, w, fin = state
    t = 1.0
    for v, dv in ((a, da), (z, dz), (s[fin], -da[fin]), (w[fin], dw[fin])):
        neg = dv < 0
        if neg.any():
            t = min(t, float(np.min(-v[neg] / dv[neg])))
    return t


def _box_newton(U, Q, y, equality):
    """Newton systems of the box dual (``Q = UUᵀ``, ``None`` when not formed): ``D ↦ solve``,
    ``solve(r, rp)`` giving ``(dα, dν)`` with ``(Q + diag D) dα + y dν = r``, ``yᵀdα = −rp``
    (no ``dν`` without the equality)."""

    def factor(D):
        solve = _solver(U, Q, D)
        if not equality:
            return lambda r, rp: (solve(r), 0.0)
        H_y = solve(y)
        # (Q + D) is positive definite: yᵀ(Q + D)⁻¹y ≤ 0 means the solve lost its accuracy
        if not y @ H_y > 0:
            raise np.linalg.LinAlgError("the Newton system lost its accuracy")

        def solve_kkt(r, rp):
            da = solve(r)
            dnu = (y @ da + rp) / (y @ H_y)
            return da - H_y * dnu, dnu

        return solve_kkt

    return factor


def _box_interior_point(U, y, p, upper, equality, **kwargs):
    """:func:`_interior_point` on the box dual, ``Q = UUᵀ`` (formed only when ``U`` is not
    tall), with the equality ``yᵀα = 0`` when ``equality``."""
    Q = U @ U.T if U.shape[1] >= U.shape[0] else None
    hess = (lambda a: U @ (U.T @ a)) if Q is None else (lambda a: Q @ a)
    cons = (0.0 if equality else None, lambda a: y @ a, lambda nu: nu * y)
    return _interior_point(hess, cons, _box_newton(U, Q, y, equality), p, upper, **kwargs)


def _interior_point(hess, cons, newton, p, upper, max_iter=100, rel_tol=1e-10):
    """Mehrotra predictor–corrector for ``min ½αᵀHα + pᵀα``, ``Aα = b``, ``0 ≤ α ≤ upper``;
    returns ``(alpha, z, w)`` (``z``, ``w``: multipliers of the lower and upper bounds).

    ``hess(α) = Hα``; ``cons = (b, A·, Aᵀ·)`` with ``b`` ``None`` for no equality; ``newton(D)``
    factors the Newton system and returns ``solve(r, rp) = (dα, dν)``,
    ``(H + diag D) dα + Aᵀdν = r``, ``A dα = −rp`` (raising ``LinAlgError`` when it cannot).
    """
    b, amul, atmul = cons
    n = p.shape[0]
    fin = np.isfinite(upper)
    u = np.where(fin, upper, 0.0)
    a = np.where(fin, u / 2, 1.0)
    s = np.where(fin, u - a, 1.0)  # slack of the upper bound (unused where it is infinite)
    z = np.ones(n)
    w = np.where(fin, 1.0, 0.0)
    nu = 0.0 if b is None else np.zeros_like(b)
    n_pairs = n + int(fin.sum())
    scale = 1.0 + np.abs(p).max(initial=0.0)
    for _ in range(max_iter):
        Ha = hess(a)
        rd = Ha + p - z + w + (0.0 if b is None else atmul(nu))
        rp = 0.0 if b is None else amul(a) - b
        mu = (a @ z + s[fin] @ w[fin]) / n_pairs
        objective = 0.5 * a @ Ha + p @ a
        if (
            np.abs(rd).max() <= rel_tol * scale
            and np.max(np.abs(rp)) <= rel_tol * (1.0 + np.abs(a).max())
            and n_pairs * mu <= rel_tol * (1.0 + abs(objective))
        ):
            break
        state = (a, s, z, w, fin)
        try:
            solve = newton(z / a + np.where(fin, w / s, 0.0))
        except np.linalg.LinAlgError:
            break  # lost to rounding near the end: the coordinate solver finishes from here
        step = (state, solve, rd, rp)
        da, dz, dw, _ = _direction(*step, -a * z, np.where(fin, -s * w, 0.0))
        t = _max_step(state, da, dz, dw)
        mu_aff = ((a + t * da) @ (z + t * dz) + (s - t * da)[fin] @ (w + t * dw)[fin]) / n_pairs
        sigma = (mu_aff / mu) ** 3
        rc_z = sigma * mu - a * z - da * dz
        rc_w = np.where(fin, sigma * mu - s * w + da * dw, 0.0)
        da, dz, dw, dnu = _direction(*step, rc_z, rc_w)
        t = min(1.0, _STEP * _max_step(state, da, dz, dw))
        # the steps keep every factor positive up to rounding
        a = np.maximum(a + t * da, _TINY)
        s = np.where(fin, np.maximum(s - t * da, _TINY), 1.0)
        z = np.maximum(z + t * dz, _TINY)
        w = np.where(fin, np.maximum(w + t * dw, _TINY), 0.0)
        nu = nu + t * dnu
    return a, z, w


def _snap(alpha, z, w, y, upper, equality):
    """Put variables on the bound their multiplier marks as active; keep ``yᵀα = 0``."""
    alpha = np.clip(alpha, 0.0, upper)
    alpha[z > alpha] = 0.0
    at_up = np.isfinite(upper) & (w > upper - alpha)
    alpha[at_up] = upper[at_up]
    if equality:
        free = (alpha > 0) & (alpha < upper)
        if free.any():
            alpha[free] -= y[free] * float(y @ alpha) / free.sum()
            alpha = np.clip(alpha, 0.0, upper)
        if abs(float(y @ alpha)) > 1e-12 * max(1.0, float(alpha.max(initial=0.0))):
            return np.zeros_like(alpha)  # no feasible snap: SMO starts cold
    return alpha


def ipm_solve(
    y: np.ndarray,
    p: np.ndarray,
    upper: np.ndarray,
    points: np.ndarray,
    *,
    index: np.ndarray | None = None,
    equality: bool = True,
    tol: float = 1e-3,
    max_iter: int = -1,
    shrinking: bool = True,
) -> BoxQPResult:
    """Solve the linear-kernel box dual by an interior point method, finished by SMO.

    Parameters
    ----------
    y, p, upper, index, equality, tol, shrinking :
        As in :func:`bci_universum.solvers.smo.smo_solve` (``tol``: SMO's stopping tolerance).
    points : ndarray of shape (n_points, n_features)
        Feature vectors (linear kernel).
    max_iter : int
        Cap on the SMO updates of the finish (``-1``: SMO's default).

    Returns
    -------
    result : BoxQPResult
        SMO's result from the interior point warm start (``n_iter`` counts SMO updates).
    """
    if not tol > 0:
        raise ValueError(f"tol must be positive, got {tol}.")
    X = np.ascontiguousarray(points, dtype=np.float64)
    if X.ndim != 2:
        raise ValueError(f"points must be a 2-D array, got shape {X.shape}.")
    y, p, upper, index, alpha = check_box_qp(y, p, upper, X.shape[0], index, None, equality)
    live = upper > 0  # variables fixed at 0 stay out of the interior
    if live.any():
        with threadpool_limits(1):  # small dense products: keep the caller's pool untouched
            a, z, w = _box_interior_point(
                y[live, None] * X[index[live]], y[live], p[live], upper[live], equality
            )
        alpha[live] = _snap(a, z, w, y[live], upper[live], equality)
    return smo_solve(
        y,
        p,
        upper,
        X,
        index=index,
        kernel="linear",
        equality=equality,
        tol=tol,
        max_iter=max_iter,
        shrinking=shrinking,
        alpha0=alpha,
    )


def _cs_newton(X, index, n_classes):
    """Newton systems of the Crammer–Singer dual in the slack ``v`` (flattened, sample-major):
    ``D ↦ solve``, ``solve(r, rp)`` giving ``(dv, dν)`` with ``(H + diag D) dv + Aᵀdν = r``,
    ``A dv = −rp``, ``A`` the per-sample sums, ``H = VVᵀ``, ``V = I_L ⊗ X[index]``."""
    L = n_classes
    n_points, d = X.shape
    Xi = X[index]

    def factor(D):
        dinv = 1.0 / D.reshape(-1, L)
        total = dinv.sum(axis=1)

        def sums_solve(r, rp):
            """``[diag D, Aᵀ; A, 0]`` sample by sample."""
            nu = ((dinv * r).sum(axis=1) + rp) / total
            return dinv * (r - nu[:, None]), nu

        # Vᵀ P V, P the per-sample blocks diag(dinv) − dinv dinvᵀ / Σ dinv summed per point
        P = -dinv[:, :, None] * dinv[:, None, :] / total[:, None, None]
        P[:, range(L), range(L)] += dinv
        per_point = np.zeros((n_points, L, L))
        np.add.at(per_point, index, P)
        M = np.empty((L, d, L, d))
        for k in range(L):
            rows = X.T @ (per_point[:, k, k:, None] * X[:, None, :]).reshape(n_points, -1)
            rows = rows.reshape(d, L - k, d)
            for m in range(k, L):
                M[k, :, m] = rows[:, m - k]
                M[m, :, k] = rows[:, m - k].T
        M = M.reshape(L * d, L * d)
        M[np.diag_indices_from(M)] += 1.0
        woodbury = cho_factor(M)

        def solve(r, rp):
            dv, dnu = sums_solve(r.reshape(-1, L), rp)
            c = cho_solve(woodbury, (dv.T @ Xi).ravel()).reshape(L, d)
            cv, cnu = sums_solve(Xi @ c.T, 0.0)
            return (dv - cv).ravel(), dnu - cnu

        return solve

    return factor


def cs_interior_point_cost(n_points: int, n_classes: int, n_features: int) -> float:
    """Operations of one Newton step of :func:`cs_warm_start` (the ``Vᵀ P V`` blocks and their
    Cholesky factorisation)."""
    size = n_classes * n_features
    return n_points * n_classes * (n_classes + 1) / 2 * n_features**2 + size**3 / 3


def cs_uses_interior_point(n_samples: int, n_points: int, n_classes: int, n_features: int) -> bool:
    """Whether :func:`cs_warm_start` suits a linear Crammer–Singer dual with universum copies
    of this shape: more samples than features (a rank-deficient Hessian) and a Newton step of
    at most the box duals' ``5·10⁸`` operations.

    With universum copies the passes from zero take thousands to tens of thousands of passes
    on such problems, the interior point a few dozen Newton steps and one or two passes
    (``benchmarks/bench_multiclass_digits.py``); without them the passes are faster.
    """
    cost = cs_interior_point_cost(n_points, n_classes, n_features)
    return n_features < n_samples and cost <= _IPM_MAX_COST


def _snap_rows(alpha, v, z, upper):
    """Put entries on the upper bound their multiplier marks as active; restore each row's zero
    sum on its free entries; a row that cannot be restored starts at zero (with no free entry
    a row sums to its cost ``C_i > 0``)."""
    at_upper = z > v
    alpha = np.where(at_upper, upper, np.minimum(alpha, upper))
    free = (~at_upper).sum(axis=1)
    alpha -= np.where(
        at_upper, 0.0, alpha.sum(axis=1, keepdims=True) / np.maximum(free, 1)[:, None]
    )
    alpha[(free == 0) | np.any(alpha > upper, axis=1)] = 0.0
    return alpha


def cs_warm_start(
    y: np.ndarray, e: np.ndarray, upper: np.ndarray, X: np.ndarray, index: np.ndarray
) -> np.ndarray:
    """A feasible ``α`` near the optimum of the linear Crammer–Singer-type dual of
    :func:`~bci_universum.solvers.crammer_singer.cs_solve` (validated arguments), by the
    interior point; samples without cost stay at zero."""
    n, L = e.shape
    bound = np.zeros((n, L))
    bound[np.arange(n), y] = upper
    alpha = np.zeros((n, L))
    live = upper > 0
    if not live.any():
        return alpha
    ix, u, e_live = index[live], bound[live], e[live]
    Xi = X[ix]

    def hess(v):
        v = v.reshape(-1, L)
        return (Xi @ (v.T @ Xi).T).ravel()

    p = -(hess(u.ravel()) + e_live.ravel())
    cons = (upper[live], lambda v: v.reshape(-1, L).sum(axis=1), lambda nu: np.repeat(nu, L))
    with threadpool_limits(1):  # as in ipm_solve
        v, z, _ = _interior_point(hess, cons, _cs_newton(X, ix, L), p, np.full(p.shape, np.inf))
    alpha[live] = _snap_rows(u - v.reshape(-1, L), v.reshape(-1, L), z.reshape(-1, L), u)
    return alpha
