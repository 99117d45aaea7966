"""Dual coordinate descent for linear box-constrained duals (Hsieh et al., ICML 2008), in numba.

:func:`dcd_solve` solves the same problem as :func:`bci_universum.solvers.smo.smo_solve` for the
linear kernel, ``min ½αᵀQα + pᵀα, 0 ≤ α ≤ upper (, yᵀα = 0)`` with
``Q_ij = y_i y_j ⟨x_index[i], x_index[j]⟩``, but keeps the primal ``w = Σ_i y_i α_i x_index[i]``
so that one coordinate update costs O(n_features) and never touches a kernel row.

Coordinates are visited in a random order each pass, with liblinear-style shrinking; a pass
stops the solve when ``max PG − min PG ≤ tol`` (projected gradient, over all variables).

The offset is exact, not the augmented-feature approximation of liblinear: for a fixed offset
``b`` the primal ``g(b) = min_w ½‖w‖² + Σ_i upper_i·max(0, −p_i − y_i(⟨w, x_i⟩ + b))`` has the
dual above *without* the equality and with ``p_i + y_i b`` as linear term; ``g`` is convex in
``b`` with derivative ``−Σ_i y_i α_i(b)`` (Danskin). The offset is bracketed by the sign of that
derivative, then ``g`` is minimised over the bracket by Brent's bounded method, each inner solve
warm-started from the previous ``α``. The minimiser ``(w, b)`` is the optimum of the problem with
the equality, so the result agrees with SMO to the accuracy of the inner solves. Near the optimal
``b`` the fixed-offset problems can be degenerate (many more variables than features) and need
many passes at tight tolerances; SMO is then the better choice.
"""

from __future__ import annotations

import warnings

import numpy as np
from numba import njit
from scipy.optimize import minimize_scalar
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils import check_random_state

from ._box_qp import BoxQPResult, check_box_qp
from ._shuffle import LCG_M, shuffle


@njit(cache=True)
def _dcd_core(y, p, upper, index, X, sq, alpha, w, tol, max_epochs, shrinking, seed):
    """DCD without the equality, in place on ``alpha`` and ``w``; returns (epochs, converged)."""
    n = y.shape[0]
    active = np.arange(n)
    n_active = n
    pg_max_old = np.inf
    pg_min_old = -np.inf
    state = seed
    converged = False
    epoch = 0
    while epoch < max_epochs:
        epoch += 1
        state = shuffle(active[:n_active], state)
        pg_max = -np.inf
        pg_min = np.inf
        k = 0
        while k < n_active:
            t = active[k]
            if upper[t] <= 0.0:
                k += 1
                continue
            x = X[index[t]]
            g = y[t] * np.dot(w, x) + p[t]
            pg = 0.0
            if alpha[t] <= 0.0:
                if shrinking and g > pg_max_old:
                    n_active -= 1
                    active[k] = active[n_active]
                    active[n_active] = t
                    continue
                if g < 0.0:
                    pg = g
            elif alpha[t] >= upper[t]:
                if shrinking and g < pg_min_old:
                    n_active -= 1
                    active[k] = active[n_active]
                    active[n_active] = t
                    continue
                if g > 0.0:
                    pg = g
            else:
                pg = g
            pg_max = max(pg_max, pg)
            pg_min = min(pg_min, pg)
            if pg != 0.0 and sq[index[t]] > 0.0:
                old = alpha[t]
                alpha[t] = min(max(old - g / sq[index[t]], 0.0), upper[t])
                d = (alpha[t] - old) * y[t]
                for f in range(w.shape[0]):
                    w[f] += d * x[f]
            elif pg != 0.0:
                # a zero point: the objective is linear in alpha[t], least at a bound; w is
                # unchanged (as in liblinear, where g / 0 = ±inf is clipped to the box)
                alpha[t] = upper[t] if g < 0.0 else 0.0
            k += 1
        if pg_max - pg_min <= tol:
            if n_active == n:
                converged = True
                break
            n_active = n
            pg_max_old = np.inf
            pg_min_old = -np.inf
            continue
        pg_max_old = pg_max if pg_max > 0.0 else np.inf
        pg_min_old = pg_min if pg_min < 0.0 else -np.inf
    return epoch, converged


def _solve_at(b, y, p, upper, index, X, sq, alpha, w, tol, max_epochs, shrinking, seed):
    """Inner solve at a fixed offset ``b``; returns ``(Σ y α, epochs, converged)``."""
    epochs, converged = _dcd_core(
        y, p + y * b, upper, index, X, sq, alpha, w, tol, max_epochs, shrinking, seed
    )
    return float(y @ alpha), epochs, converged


def dcd_solve(
    y: np.ndarray,
    p: np.ndarray,
    upper: np.ndarray,
    points: np.ndarray,
    *,
    index: np.ndarray | None = None,
    equality: bool = True,
    tol: float = 1e-3,
    max_iter: int = 1000,
    shrinking: bool = True,
    alpha0: np.ndarray | None = None,
    random_state=None,
) -> BoxQPResult:
    """Solve the linear-kernel box dual by dual coordinate descent.

    Parameters
    ----------
    y, p, upper, index, alpha0 :
        As in :func:`bci_universum.solvers.smo.smo_solve`. ``upper`` must be finite wherever
        ``p < 0`` for the problem to be bounded.
    points : ndarray of shape (n_points, n_features)
        Feature vectors (linear kernel).
    equality : bool
        Enforce ``yᵀα = 0``: the offset is then found exactly by a root search (module docstring).
    tol : float
        Stopping tolerance on ``max PG − min PG`` of each inner solve.
    max_iter : int
        Cap on passes over the variables per inner solve; hitting it emits a
        :class:`~sklearn.exceptions.ConvergenceWarning`.
    shrinking : bool
        Use liblinear-style shrinking.
    random_state : int, RandomState or None
        Seed of the visiting order.

    Returns
    -------
    result : BoxQPResult
        With ``coef`` = ``w``; ``n_iter`` counts passes summed over the inner solves.
    """
    if not tol > 0:
        raise ValueError(f"tol must be positive, got {tol}.")
    if not max_iter > 0:
        raise ValueError(f"max_iter must be positive, got {max_iter}.")
    X = np.ascontiguousarray(points, dtype=np.float64)
    if X.ndim != 2:
        raise ValueError(f"points must be a 2-D array, got shape {X.shape}.")
    y, p, upper, index, alpha = check_box_qp(y, p, upper, X.shape[0], index, alpha0, equality)
    sq = np.einsum("ij,ij->i", X, X)
    w = np.zeros(X.shape[1])
    for t in np.flatnonzero(alpha):
        w += y[t] * alpha[t] * X[index[t]]
    seed = int(check_random_state(random_state).randint(LCG_M))
    args = (y, p, upper, index, X, sq, alpha, w, float(tol), int(max_iter), bool(shrinking), seed)
    if not equality:
        _, epochs, converged = _solve_at(0.0, *args)
        b = 0.0
    else:
        b, epochs, converged = _root_offset(args)
    if not converged:
        warnings.warn(
            f"Dual coordinate descent reached max_iter={max_iter} passes without reaching "
            f"tol={tol}; increase max_iter or tol.",
            ConvergenceWarning,
            stacklevel=2,
        )
    margins = X[index] @ w
    gradient = y * margins + p
    objective = 0.5 * float(w @ w) + float(p @ alpha)
    return BoxQPResult(alpha, b, objective, epochs, converged, gradient=gradient, coef=w)


def _root_offset(args, max_outer: int = 200):
    """Offset minimising the primal over ``b``: bracket by the sign of ``Σ y α(b)``, then Brent.

    The optimal value ``g(b)`` is convex with derivative ``−Σ y α(b)``. Signs are used only to
    bracket the minimum; inside the bracket the primal value at ``(w(b), b)`` is minimised, which
    stays reliable where ``α(b)`` is not unique (a kink of ``g`` at the optimum).
    """
    y, p, upper, index, X, _, alpha, w = args[:8]
    total = 0
    ok = True
    best = {"value": np.inf}

    def solve(b):
        nonlocal total, ok
        value, epochs, converged = _solve_at(b, *args)
        total += epochs
        ok = ok and converged
        hinge = np.maximum(0.0, -(p + y * b) - y * (X[index] @ w))
        primal = 0.5 * float(w @ w) + float(np.sum(upper[upper < np.inf] * hinge[upper < np.inf]))
        if primal < best["value"]:
            best.update(value=primal, b=b, alpha=alpha.copy(), w=w.copy())
        return value, primal

    h_lo = solve(0.0)[0]
    lo = 0.0
    if h_lo != 0.0:
        # Σ y α(b) is non-increasing in b: step towards the sign change
        step = 1.0 if h_lo > 0 else -1.0
        hi, h_hi = lo + step, solve(lo + step)[0]
        while h_hi * h_lo > 0 and abs(step) < 1e12:
            lo, h_lo = hi, h_hi
            step *= 2.0
            hi, h_hi = lo + step, solve(lo + step)[0]
        a, c = min(lo, hi), max(lo, hi)
        minimize_scalar(
            lambda b: solve(b)[1],
            bounds=(a, c),
            method="bounded",
            options={"xatol": 1e-10 * (1.0 + max(abs(a), abs(c))), "maxiter": max_outer},
        )
    alpha[:] = best["alpha"]
    w[:] = best["w"]
    return best["b"], total, ok
