"""Numba solvers: module-level ``@njit(cache=True)`` kernels on contiguous float64 arrays.

* :func:`smo_solve` — SMO (WSS 2, shrinking, kernel-row cache) for box-constrained kernel duals.
* :func:`dcd_solve` — dual coordinate descent on ``w`` for the same duals with a linear kernel.
"""

from ._box_qp import BoxQPResult
from .linear_dcd import dcd_solve
from .smo import smo_solve

__all__ = ["BoxQPResult", "dcd_solve", "smo_solve"]
