"""Numba solvers: module-level ``@njit(cache=True)`` kernels on contiguous float64 arrays.

* :func:`smo_solve` — SMO (WSS 2, shrinking, kernel-row cache) for box-constrained kernel duals.
* :func:`dcd_solve` — dual coordinate descent on ``w`` for the same duals with a linear kernel.
* :func:`ipm_solve` — interior point for the linear-kernel duals, finished by SMO.
* :func:`linear_solver` — which of the three suits a linear-kernel dual of a given shape.
"""

from ._box_qp import BoxQPResult, linear_solver
from .interior_point import ipm_solve
from .linear_dcd import dcd_solve
from .smo import smo_solve

__all__ = ["BoxQPResult", "dcd_solve", "ipm_solve", "linear_solver", "smo_solve"]
