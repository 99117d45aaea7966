"""Numba solvers: module-level ``@njit(cache=True)`` kernels on contiguous float64 arrays.

* :func:`smo_solve` — SMO (WSS 2, shrinking, kernel-row cache) for box-constrained kernel duals.
* :func:`dcd_solve` — dual coordinate descent on ``w`` for the same duals with a linear kernel.
* :func:`ipm_solve` — interior point for the linear-kernel duals, finished by SMO; the same
  method warm-starts the Crammer–Singer passes of :mod:`.crammer_singer`.
* :func:`linear_solver` — which of the three suits a linear-kernel dual of a given shape.
"""

import lazy_loader as _lazy

# submodules load on first use: a test or script that needs one estimator does not pay for
# the whole package (and its mne/pylsl/numba imports)
__getattr__, __dir__, __all__ = _lazy.attach(
    __name__,
    submod_attrs={
        "_box_qp": ["BoxQPResult", "linear_solver"],
        "interior_point": ["ipm_solve"],
        "linear_dcd": ["dcd_solve"],
        "smo": ["smo_solve"],
    },
)
