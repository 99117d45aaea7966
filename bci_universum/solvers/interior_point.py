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
"""

from __future__ import annotations

import numpy as np
from scipy.linalg import cho_factor, cho_solve
from threadpoolctl import threadpool_limits

from ._box_qp import BoxQPResult, check_box_qp
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


def _direction(state, solve, H_y, rd, rp, rc_z, rc_w):
    """Newton direction ``(dα, dz, dw, dν)`` for the complementarity targets ``rc_z, rc_w``."""
    a, s, z, w, y, fin = state
    da = solve(-rd + rc_z / a - np.where(fin, rc_w / s, 0.0))
    dnu = 0.0
    if H_y is not None:
        dnu = (y @ da + rp) / (y @ H_y)
        da = da - H_y * dnu
    dz = (rc_z - z * da) / a
    dw = np.where(fin, (rc_w + w * da) / s, 0.0)
    return da, dz, dw, dnu


def _max_step(state, da, dz, dw) -> float:
    """Largest step in [0, 1] keeping α, the upper slacks and the multipliers non-negative."""
    a, s, z, w, _, fin = state
    t = 1.0
    for v, dv in ((a, da), (z, dz), (s[fin], -da[fin]), (w[fin], dw[fin])):
        neg = dv < 0
        if neg.any():
            t = min(t, float(np.min(-v[neg] / dv[neg])))
    return t


def _interior_point(U, y, p, upper, equality, max_iter=100, rel_tol=1e-10):
    """Mehrotra predictor–corrector; returns ``(alpha, z, w)`` (``z``, ``w``: multipliers of
    the lower and upper bounds)."""
    n = y.shape[0]
    fin = np.isfinite(upper)
    u = np.where(fin, upper, 0.0)
    a = np.where(fin, u / 2, 1.0)
    s = np.where(fin, u - a, 1.0)  # slack of the upper bound (unused where it is infinite)
    z = np.ones(n)
    w = np.where(fin, 1.0, 0.0)
    nu = 0.0
    n_pairs = n + int(fin.sum())
    scale = 1.0 + np.abs(p).max(initial=0.0)
    Q = U @ U.T if U.shape[1] >= n else None
    for _ in range(max_iter):
        Qa = U @ (U.T @ a) if Q is None else Q @ a
        rd = Qa + p - z + w + (nu * y if equality else 0.0)
        rp = float(y @ a) if equality else 0.0
        mu = (a @ z + s[fin] @ w[fin]) / n_pairs
        objective = 0.5 * a @ Qa + p @ a
        if (
            np.abs(rd).max() <= rel_tol * scale
            and abs(rp) <= rel_tol * (1.0 + np.abs(a).max())
            and n_pairs * mu <= rel_tol * (1.0 + abs(objective))
        ):
            break
        state = (a, s, z, w, y, fin)
        try:
            solve = _solver(U, Q, z / a + np.where(fin, w / s, 0.0))
        except np.linalg.LinAlgError:
            break  # lost to rounding near the end: SMO finishes from here
        H_y = solve(y) if equality else None
        # (Q + D) is positive definite: yᵀ(Q + D)⁻¹y ≤ 0 means the solve lost its accuracy
        if H_y is not None and not y @ H_y > 0:
            break
        step = (state, solve, H_y, rd, rp)
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
        nu += t * dnu
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
        U = y[live, None] * X[index[live]]
        with threadpool_limits(1):  # small dense products: keep the caller's pool untouched
            a, z, w = _interior_point(U, y[live], p[live], upper[live], equality)
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
