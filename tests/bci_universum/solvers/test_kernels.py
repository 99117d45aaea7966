"""The online single-vector kernel evaluation equals the kernel matrix rows."""

import numpy as np
import pytest

from bci_universum.solvers.kernels import (
    KERNEL_CODES,
    kernel_matrix,
    kernel_row,
    kernel_vector,
    squared_norms,
)


def _square(A, B):
    return (A @ B.T) ** 2


@pytest.mark.parametrize("kernel", ["linear", "rbf", "poly", "sigmoid", _square])
def test_kernel_vector_equals_kernel_matrix_row(kernel):
    rng = np.random.default_rng(0)
    Y = rng.standard_normal((30, 12))
    X = rng.standard_normal((5, 12))
    args = {"gamma": 0.07, "degree": 3, "coef0": 0.5}
    K = kernel_matrix(X, Y, kernel, **args)
    sq = np.einsum("ij,ij->i", Y, Y)
    for i in range(len(X)):
        np.testing.assert_allclose(kernel_vector(X[i], Y, kernel, **args), K[i], rtol=1e-12)
        np.testing.assert_allclose(
            kernel_vector(X[i], Y, kernel, Y_sq_norms=sq, **args), K[i], rtol=1e-12
        )
    # a vector in Y has distance 0 to itself (clipped, never negative)
    assert kernel_vector(Y[3], Y, "rbf", gamma=0.07)[3] == pytest.approx(1.0, abs=1e-13)


@pytest.mark.parametrize("kernel", ["linear", "rbf", "poly", "sigmoid"])
def test_kernel_row_equals_kernel_matrix(kernel):
    """The solvers' rows (numba loops, any subset of targets) equal the kernel matrix; RBF rows
    from centred float32 points (the float32 cache) to 1e-6 of the kernel's scale."""
    rng = np.random.default_rng(1)
    X = rng.standard_normal((40, 16)) + 3.0
    args = {"gamma": 0.05, "degree": 3, "coef0": 0.5}
    K = kernel_matrix(X, kernel=kernel, **args)
    code = KERNEL_CODES[kernel]
    targets = np.arange(0, 40, 3)
    out = np.full(40, np.nan)
    kernel_row(7, X, squared_norms(X), code, 0.05, 3.0, 0.5, targets, targets.size, out)
    np.testing.assert_allclose(out[targets], K[7, targets], rtol=1e-12)
    assert np.isnan(np.delete(out, np.r_[targets, 7])).all()  # only the targets are written
    if kernel == "rbf":
        Xc = X - X.mean(axis=0)
        out32 = np.empty(40, dtype=np.float32)
        all_points = np.arange(40)
        kernel_row(7, Xc.astype(np.float32), squared_norms(Xc), code, 0.05, 3.0, 0.5,
                   all_points, 40, out32)  # fmt: skip
        np.testing.assert_allclose(out32, K[7], atol=1e-6)
