"""The box-constrained dual QP shared by the SMO and dual-coordinate-descent solvers.

Both solvers minimise over ``alpha`` (one entry per *variable*)::

    ½ αᵀQα + pᵀα   subject to   0 ≤ α_i ≤ upper_i   (and yᵀα = 0 when ``equality``)

with ``Q_ij = y_i y_j k(points[index[i]], points[index[j]])``. The index map lets several
variables share one kernel point: the U-SVM's two copies of a universum trial (labels +1 and −1)
point at the same row, so the kernel matrix is never doubled.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass
class BoxQPResult:
    """Solution of the box-constrained dual.

    Attributes
    ----------
    alpha : ndarray of shape (n_variables,)
        The dual variables.
    intercept : float
        The offset ``b`` of ``f(x) = Σ_i y_i α_i k(x_i, x) + b`` (0 without the equality).
    objective : float
        ``½ αᵀQα + pᵀα`` at ``alpha``.
    n_iter : int
        Iterations done (SMO: pair/coordinate updates; DCD: passes over the variables).
    converged : bool
        Whether the KKT violation fell below ``tol`` before ``max_iter``.
    gradient : ndarray of shape (n_variables,) or None
        ``Qα + p`` (SMO and linear DCD).
    coef : ndarray of shape (n_features,) or None
        The primal weights ``w = Σ_i y_i α_i x_i`` (linear DCD only).
    """

    alpha: np.ndarray
    intercept: float
    objective: float
    n_iter: int
    converged: bool
    gradient: np.ndarray | None = None
    coef: np.ndarray | None = None


def check_box_qp(y, p, upper, n_points: int, index=None, alpha0=None, equality: bool = True):
    """Validate the arrays of a box QP; return contiguous float64/int64 copies.

    Returns
    -------
    y, p, upper : ndarray of float64, shape (n_variables,)
    index : ndarray of int64, shape (n_variables,)
    alpha : ndarray of float64, shape (n_variables,)
        ``alpha0`` (checked for feasibility) or zeros.
    """
    y = np.ascontiguousarray(y, dtype=np.float64)
    n = y.shape[0]
    p = np.ascontiguousarray(p, dtype=np.float64)
    upper = np.ascontiguousarray(upper, dtype=np.float64)
    if y.ndim != 1 or p.shape != (n,) or upper.shape != (n,):
        raise ValueError(
            f"y, p and upper must be 1-D of the same length; got shapes {y.shape}, {p.shape}, "
            f"{upper.shape}."
        )
    if not np.all(np.abs(y) == 1.0):
        raise ValueError("y must contain only -1 and +1.")
    if not np.all(np.isfinite(p)):
        raise ValueError("The linear term p must be finite.")
    if np.any(np.isnan(upper)) or np.any(upper < 0):
        raise ValueError("The upper bounds must be >= 0 (np.inf allowed).")
    if index is None:
        if n != n_points:
            raise ValueError(
                f"Without an index map there must be one variable per point; got {n} variables "
                f"and {n_points} points."
            )
        index = np.arange(n, dtype=np.int64)
    else:
        index = np.ascontiguousarray(index, dtype=np.int64)
        if index.shape != (n,):
            raise ValueError(f"index must have shape ({n},), got {index.shape}.")
        if n and (index.min() < 0 or index.max() >= n_points):
            raise ValueError(f"index values must lie in [0, {n_points}).")
    if alpha0 is None:
        alpha = np.zeros(n)
    else:
        alpha = np.array(alpha0, dtype=np.float64)
        # a NaN fails every comparison: refused with the out-of-box values
        if alpha.shape != (n,) or not np.all((alpha >= 0) & (alpha <= upper)):
            raise ValueError("alpha0 must have one entry per variable within [0, upper].")
        scale = max(1.0, float(np.abs(alpha).max(initial=0.0)))
        if equality and abs(float(y @ alpha)) > 1e-10 * scale * max(n, 1):
            raise ValueError("alpha0 must satisfy y @ alpha0 == 0 when equality=True.")
    return y, p, upper, index, alpha


# a Newton step of the interior point costs about n_variables · n_features² operations
_IPM_MAX_COST = 5e8
_DCD_MIN_VARIABLES = 10_000


def linear_solver(n_variables: int, n_features: int) -> str:
    """Fastest solver of a linear-kernel box dual by its shape: ``"ipm"``, ``"dcd"`` or ``"smo"``.

    With more variables than features, ``Q`` is rank-deficient and coordinate methods (SMO,
    DCD) crawl (10⁵–10⁶ updates on 10 labelled + 90 universum trials in 20–100 features); the
    interior point's cost does not depend on the conditioning, and it is used while a Newton
    step costs at most ``5·10⁸`` operations, ``n_variables · n_features²``. With at least as
    many features as variables (e.g. tangent-space features of 10 + 90 trials), SMO converges
    in a few hundred updates and beats the interior point's fixed cost. Beyond, dual coordinate
    descent for ≥ 10 000 variables, else SMO.
    """
    if n_features < n_variables and n_variables * n_features**2 <= _IPM_MAX_COST:
        return "ipm"
    return "dcd" if n_variables >= _DCD_MIN_VARIABLES else "smo"
