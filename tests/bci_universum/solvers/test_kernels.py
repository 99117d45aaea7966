"""Kernels against their closed forms and scikit-learn; the online single-vector path."""

import numpy as np
import pytest
from sklearn.metrics.pairwise import (
    linear_kernel,
    pairwise_kernels,
    polynomial_kernel,
    rbf_kernel,
    sigmoid_kernel,
)
from sklearn.svm import SVC

from bci_universum.solvers.kernels import (
    KERNEL_CODES,
    KERNELS,
    _exp_single,
    check_finite_kernel,
    check_kernel,
    check_kernel_range,
    kernel_diagonal,
    kernel_matrix,
    kernel_row,
    kernel_vector,
    resolve_gamma,
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


def _closed_form(kernel, A, B, gamma, degree, coef0):
    dots = A @ B.T
    if kernel == "linear":
        return dots
    if kernel == "rbf":
        d2 = ((A[:, None, :] - B[None, :, :]) ** 2).sum(-1)
        return np.exp(-gamma * d2)
    if kernel == "poly":
        return (gamma * dots + coef0) ** degree
    return np.tanh(gamma * dots + coef0)


@pytest.mark.parametrize("kernel", ["linear", "rbf", "poly", "sigmoid"])
def test_kernels_equal_closed_forms_and_sklearn(kernel):
    """Matrix, numba rows and diagonal against the textbook formulas and scikit-learn."""
    rng = np.random.default_rng(1)
    A, B = rng.standard_normal((7, 5)), rng.standard_normal((9, 5))
    args = {"gamma": 0.3, "degree": 2, "coef0": 0.7}
    ref = _closed_form(kernel, A, B, **args)
    K = kernel_matrix(A, B, kernel, **args)
    assert K.flags.c_contiguous and K.dtype == np.float64
    np.testing.assert_allclose(K, ref, rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(
        kernel_matrix(A, None, kernel, **args), kernel_matrix(A, A, kernel, **args)
    )
    sk_params = {"linear": {}, "rbf": {"gamma": 0.3}, "sigmoid": {"gamma": 0.3, "coef0": 0.7}}
    sk_params["poly"] = {"gamma": 0.3, "degree": 2, "coef0": 0.7}
    np.testing.assert_allclose(
        K, pairwise_kernels(A, B, metric=kernel, **sk_params[kernel]), rtol=1e-12
    )
    # the numba row of the solvers, one point against all, and the diagonal
    X = np.ascontiguousarray(np.vstack([A, B]))
    full = _closed_form(kernel, X, X, **args)
    XT, sq = np.ascontiguousarray(X.T), squared_norms(X)
    row = np.empty(len(X))
    for point in (0, 8, len(X) - 1):
        code = KERNEL_CODES[kernel]
        kernel_row(X[point], sq[point], XT, sq, 0, point, code, 0.3, 2.0, 0.7, row)
        np.testing.assert_allclose(row, full[point], rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(kernel_diagonal(X, kernel, **args), np.diag(full), rtol=1e-12)


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.int64])
@pytest.mark.parametrize("kernel", ["linear", "rbf", "poly", "sigmoid"])
def test_kernels_are_computed_in_double_precision_whatever_the_input_dtype(kernel, dtype):
    """Matrix and diagonal equal scikit-learn's kernel function of that name evaluated in
    float64 on the same values, for float64, float32 and integer inputs."""
    rng = np.random.default_rng(4)
    A = (4 * rng.standard_normal((6, 5))).astype(dtype)
    B = (4 * rng.standard_normal((8, 5))).astype(dtype)
    A64, B64 = A.astype(np.float64), B.astype(np.float64)
    args = {"gamma": 0.02, "degree": 3, "coef0": 0.7}
    reference = {
        "linear": lambda P, Q: linear_kernel(P, Q),
        "rbf": lambda P, Q: rbf_kernel(P, Q, gamma=0.02),
        "poly": lambda P, Q: polynomial_kernel(P, Q, degree=3, gamma=0.02, coef0=0.7),
        "sigmoid": lambda P, Q: sigmoid_kernel(P, Q, gamma=0.02, coef0=0.7),
    }[kernel]
    K = kernel_matrix(A, B, kernel, **args)
    assert K.dtype == np.float64 and K.flags.c_contiguous
    np.testing.assert_allclose(K, reference(A64, B64), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(kernel_matrix(A, None, kernel, **args), reference(A64, A64),
                               rtol=1e-12, atol=1e-12)  # fmt: skip
    diagonal = kernel_diagonal(A, kernel, **args)
    assert diagonal.dtype == np.float64
    np.testing.assert_allclose(diagonal, np.diag(reference(A64, A64)), rtol=1e-12, atol=1e-12)


def test_precomputed_and_callable_kernels():
    rng = np.random.default_rng(2)
    X = rng.standard_normal((6, 3))
    gram = X @ X.T
    np.testing.assert_array_equal(kernel_matrix(gram, kernel="precomputed"), gram)
    np.testing.assert_array_equal(kernel_diagonal(gram, "precomputed"), np.diag(gram))
    np.testing.assert_allclose(kernel_matrix(X, kernel=_square), gram**2)
    np.testing.assert_allclose(kernel_diagonal(X, _square), np.diag(gram) ** 2)


def test_gamma_as_scikit_learn_resolves_it():
    rng = np.random.default_rng(3)
    X = rng.standard_normal((40, 6))
    y = np.repeat([0, 1], 20)
    for scale in (3.0, 0.3):  # a variance above and below 1
        for gamma in ("scale", "auto", 0.25):
            svc = SVC(gamma=gamma).fit(scale * X, y)
            assert resolve_gamma(gamma, scale * X) == pytest.approx(svc._gamma, rel=1e-12)
    assert resolve_gamma("scale", np.ones((4, 3))) == 1.0  # zero variance: no division by 0
    for bad, match in ((0.0, "gamma must be positive"), (-1, "positive"), ("wide", "'scale'")):
        with pytest.raises(ValueError, match=match):
            resolve_gamma(bad, X)
    with pytest.raises(ValueError, match="Unknown kernel 'cosine'"):
        check_kernel("cosine")
    with pytest.raises(ValueError, match="Unknown kernel"):
        kernel_matrix(X, kernel="laplacian")


@pytest.mark.parametrize("kernel", ["linear", "rbf", "poly", "sigmoid"])
@pytest.mark.parametrize("d", [16, 13, 7])
def test_kernel_row_equals_kernel_matrix(kernel, d):
    """The solvers' rows (numba loops over a range of transposed points kept in any order;
    features in blocks of eight and a remainder, or fewer than eight) equal the kernel matrix,
    with the point itself inside the row, just past its end or absent (``own = -1``); RBF rows
    from centred float32 points (the float32 cache) to 1e-6 of the kernel's scale."""
    rng = np.random.default_rng(1)
    X = rng.standard_normal((40, d)) + 3.0
    args = {"gamma": 0.05, "degree": 3, "coef0": 0.5}
    K = kernel_matrix(X, kernel=kernel, **args)
    code = KERNEL_CODES[kernel]
    order = rng.permutation(40)  # the cache's point order, point 7 at column 20
    own = int(np.flatnonzero(order == 7)[0])
    order[[own, 20]], own, lo = order[[20, own]], 20, 5  # the point among the row's columns
    XT, sq = np.ascontiguousarray(X[order].T), squared_norms(X[order])
    out = np.full(31, np.nan)
    kernel_row(X[7], sq[own], XT, sq, lo, own - lo, code, 0.05, 3.0, 0.5, out[:30])
    np.testing.assert_allclose(out[:30], K[7, order[lo : lo + 30]], rtol=1e-12)
    assert np.isnan(out[30])  # entry k is column lo + k's: nothing past the row is written
    assert kernel != "rbf" or out[own - lo] == 1.0
    # the point itself is column `own`, one past a row of the columns before it
    out[:] = np.nan
    kernel_row(X[7], sq[own], XT, sq, 0, own, code, 0.05, 3.0, 0.5, out[:own])
    np.testing.assert_allclose(out[:own], K[7, order[:own]], rtol=1e-12)
    assert np.isnan(out[own])
    # the point absent from the row (own = −1): every entry is another point's
    kernel_row(X[7], sq[own], XT, sq, own + 1, -1, code, 0.05, 3.0, 0.5, out[:19])
    np.testing.assert_allclose(out[:19], K[7, order[own + 1 :]], rtol=1e-12)
    if kernel == "rbf":
        Xc = X - X.mean(axis=0)
        out32 = np.empty(40, dtype=np.float32)
        XT32 = np.ascontiguousarray(Xc.T.astype(np.float32))
        for sq_c in (squared_norms(Xc), squared_norms(Xc).astype(np.float32)):
            kernel_row(Xc[7].astype(np.float32), sq_c[7], XT32, sq_c, 0, 7, code, 0.05, 3.0,
                       0.5, out32)  # fmt: skip
            np.testing.assert_allclose(out32, K[7], atol=1e-6)


def test_single_precision_exponential_is_within_an_ulp_of_numpy():
    """The vectorised float32 ``exp`` of the RBF rows against float64 ``np.exp``: within
    ~1 ulp of float32 over the whole range of arguments (0 down to underflow)."""
    values = -np.concatenate([np.linspace(0.0, 87.0, 20001), [1e-30, 1e-7, 0.5, 1.0, 80.0]])
    values = np.concatenate([values, [-87.5, -88.0, -100.0, -1e4]]).astype(np.float32)
    # arguments below −87 give exp(−87), the smallest normal float32 range (never 0)
    expected = np.exp(np.maximum(values.astype(np.float64), -87.0))
    out = values.copy()
    _exp_single(out, np.empty(out.size, dtype=np.int32))
    assert out.dtype == np.float32 and out[0] == 1.0
    np.testing.assert_allclose(out, expected, rtol=1.5 * np.finfo(np.float32).eps, atol=0)
    assert np.all(np.diff(out[:20001]) <= 0)  # monotone, as exp
    assert np.all(out[-4:] == out[20000])


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_rbf_rows_never_exceed_one(dtype):
    """Rounding makes the squared distance of a point to itself or to a copy of itself a small
    nonzero value of either sign (in float32, and in float64 with large norms): an RBF value
    exp(−γ·d²) still never exceeds 1 (negative d² clipped) and the point's own entry is exactly
    1, wherever it is in the row."""
    rng = np.random.default_rng(5)
    P = 30.0 * rng.standard_normal((10, 12))
    X = np.vstack([P, P]).astype(dtype)  # each point twice
    sq = squared_norms(X.astype(np.float64)).astype(dtype)
    for i in range(10):
        columns = np.roll(np.arange(20), -i)  # point i at column 0, its copy at column 10
        XT = np.ascontiguousarray(X[columns].T)
        out = np.empty(20, dtype=dtype)
        for own in (0, -1):
            kernel_row(X[i], sq[i], XT, sq[columns], 0, own, KERNEL_CODES["rbf"], 0.05, 3.0, 0.0,
                       out)  # fmt: skip
            assert out.max() <= 1.0
            assert out[0] == 1.0 or own == -1
            assert out[10] == pytest.approx(1.0, abs=1e-3)  # the copy: 1 up to rounding


@pytest.mark.parametrize("kernel", ["linear", "rbf", "poly", "sigmoid"])
def test_default_kernel_parameters_agree_across_functions_and_with_scikit_learn(kernel):
    """Matrix, single-vector row and diagonal share their defaults: gamma = 1 and scikit-learn
    SVC's degree and coef0."""
    rng = np.random.default_rng(6)
    A, B = 0.5 * rng.standard_normal((4, 3)), 0.5 * rng.standard_normal((6, 3))
    svc = SVC()
    params = {"rbf": {"gamma": 1.0}, "sigmoid": {"gamma": 1.0, "coef0": svc.coef0}}
    params["poly"] = {"gamma": 1.0, "degree": svc.degree, "coef0": svc.coef0}
    K = kernel_matrix(A, B, kernel)
    np.testing.assert_allclose(K, pairwise_kernels(A, B, metric=kernel, **params.get(kernel, {})))
    for i in range(len(A)):
        np.testing.assert_allclose(kernel_vector(A[i], B, kernel), K[i], rtol=1e-12)
    np.testing.assert_allclose(
        kernel_diagonal(A, kernel), np.diag(kernel_matrix(A, None, kernel)), rtol=1e-12
    )


def test_kernel_codes_tell_the_kernels_apart():
    """The solvers dispatch on these codes ("precomputed" and "rbf" by equality)."""
    assert sorted(KERNEL_CODES) == sorted(KERNELS)
    assert len(set(KERNEL_CODES.values())) == len(KERNELS)


def _my_kernel(A, B):
    return A @ B.T


def test_a_kernel_with_values_that_are_not_finite_is_named():
    """The message names the kernel as the user gave it: a callable by its name, a built-in
    one by its string."""
    K = np.ones((3, 3))
    check_finite_kernel(K, "linear")
    K[1, 2] = np.nan
    with pytest.raises(ValueError, match=r"kernel=<callable _my_kernel> gives values that are"):
        check_finite_kernel(K, _my_kernel)
    with pytest.raises(ValueError, match=r"kernel='poly' gives values that are not finite"):
        check_finite_kernel(K, "poly")


def test_kernel_range_bounds_the_products_the_solvers_form():
    """``k(x, y)²`` bounded by Cauchy–Schwarz over the points: refused when it overflows,
    whatever the kernel's parameters make of ``max ‖x‖²``; callables and precomputed
    kernels are checked where formed, rbf and sigmoid values lie in [-1, 1]."""
    huge = np.full((1, 1), 1e50)  # ‖x‖² = 1e100: a linear value of 1e100, squared 1e200
    check_kernel_range(huge, "linear", 1.0, 3, 0.0)
    with pytest.raises(ValueError, match=r"kernel='linear' gives values up to 1e\+200, whose"):
        check_kernel_range(huge * 1e50, "linear", 1.0, 3, 0.0)  # one point is enough
    with pytest.raises(ValueError, match="kernel='linear' gives values that are not finite"):
        check_kernel_range(huge * 1e150, "linear", 1.0, 3, 0.0)  # ‖x‖² overflows
    # poly: (γ‖x‖² + |c0|)^degree
    with pytest.raises(ValueError, match=r"values up to 1e\+200"):
        check_kernel_range(huge, "poly", 1.0, 2, 0.0)
    check_kernel_range(huge, "poly", 1e-100, 2, 0.0)  # γ‖x‖² = 1
    with pytest.raises(ValueError, match=r"values up to 1e\+300"):  # |c0|, not its sign
        check_kernel_range(np.ones((2, 1)), "poly", 1.0, 3, -1e100)
    for kernel in ("rbf", "sigmoid"):
        check_kernel_range(huge * 1e50, kernel, 1.0, 3, 0.0)
        with pytest.raises(ValueError, match="values that are not finite"):  # ‖x‖² overflows
            check_kernel_range(huge * 1e150, kernel, 1.0, 3, 0.0)
    for kernel in (_my_kernel, "precomputed"):
        check_kernel_range(huge * 1e150, kernel, 1.0, 3, 0.0)
    check_kernel_range(np.empty((0, 4)), "linear", 1.0, 3, 0.0)  # no points, nothing to bound
