"""Numba solvers: module-level ``@njit(cache=True)`` kernels on contiguous float64 arrays."""
