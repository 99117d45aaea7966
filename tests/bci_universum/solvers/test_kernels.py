"""The online single-vector kernel evaluation equals the kernel matrix rows."""

import numpy as np
import pytest

from bci_universum.solvers.kernels import kernel_matrix, kernel_vector


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
