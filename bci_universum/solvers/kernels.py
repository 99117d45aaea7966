"""Kernel functions shared by every kernel machine of the project.

The parameters follow scikit-learn's ``SVC``: ``kernel`` in {"linear", "rbf", "poly", "sigmoid",
"precomputed"} or a callable ``kernel(X, Y) -> (n_X, n_Y)`` matrix; ``gamma`` in {"scale",
"auto"} or a positive float; ``degree`` and ``coef0`` for "poly" and "sigmoid".
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from numba import njit
from sklearn.metrics.pairwise import pairwise_kernels

KERNELS = ("linear", "rbf", "poly", "sigmoid", "precomputed")


def check_kernel(kernel) -> None:
    """Raise ``ValueError`` unless ``kernel`` is a known kernel name or a callable."""
    if callable(kernel):
        return
    if kernel not in KERNELS:
        raise ValueError(f"Unknown kernel {kernel!r}; expected one of {KERNELS} or a callable.")


def resolve_gamma(gamma, X: np.ndarray) -> float:
    """Return the numeric ``gamma`` for data ``X`` (``"scale"``: 1 / (n_features · Var X))."""
    if isinstance(gamma, str):
        if gamma == "scale":
            var = float(np.asarray(X, dtype=float).var())
            return 1.0 / (X.shape[1] * var) if var > 0 else 1.0
        if gamma == "auto":
            return 1.0 / X.shape[1]
        raise ValueError(f"gamma must be 'scale', 'auto' or a positive float, got {gamma!r}.")
    gamma = float(gamma)
    if not gamma > 0:
        raise ValueError(f"gamma must be positive, got {gamma}.")
    return gamma


def _shown(kernel) -> str:
    name = getattr(kernel, "__name__", None) if callable(kernel) else None
    return f"<callable {name}>" if name else repr(kernel)


def _kernel_error(kernel, problem: str) -> ValueError:
    return ValueError(
        f"kernel={_shown(kernel)} gives {problem} on these trials. A callable kernel must "
        "return finite values; with a built-in kernel, scale the features (e.g. "
        "StandardScaler) so that the kernel values stay within float64."
    )


def check_finite_kernel(K: np.ndarray, kernel: str | Callable) -> None:
    """Raise ``ValueError`` naming ``kernel`` unless every value of ``K`` is finite.

    A NaN or infinite kernel value (a callable returning NaN, a polynomial kernel overflowing
    on large inputs) would otherwise leave a solver at a meaningless stationary point.
    """
    if not np.all(np.isfinite(K)):
        raise _kernel_error(kernel, "values that are not finite (NaN or inf)")


def check_kernel_range(
    X: np.ndarray, kernel: str | Callable, gamma: float, degree: int, coef0: float
) -> None:
    """Check a built-in kernel over the rows of ``X`` without forming the kernel matrix.

    For the solvers that evaluate kernel rows themselves (SMO, dual coordinate descent, the
    interior point method): they multiply kernel values (second-order working-set selection,
    Newton steps), so ``k(x, y)²`` must be finite. It is bounded by Cauchy–Schwarz
    (``|x·y| ≤ max ‖x‖²``). A callable or precomputed kernel is checked where its matrix is
    formed (:func:`kernel_matrix`) or validated.

    Parameters
    ----------
    X : ndarray of shape (n_points, n_features)
        The points of the solver.
    kernel, gamma, degree, coef0
        As in :func:`kernel_matrix` (``gamma`` numeric).

    Raises
    ------
    ValueError
        Naming the kernel, when the bound is not finite.
    """
    if callable(kernel) or kernel == "precomputed" or X.shape[0] == 0:
        return
    with np.errstate(over="ignore", invalid="ignore"):
        sq_max = np.einsum("ij,ij->i", X, X).max()  # numpy scalars overflow to inf
        bound = {
            "linear": sq_max,
            "poly": (gamma * sq_max + abs(coef0)) ** degree,
        }.get(kernel, 1.0)  # rbf and sigmoid values lie in [-1, 1]
        square = bound * bound
    if not (np.isfinite(sq_max) and np.isfinite(bound)):
        raise _kernel_error(kernel, "values that are not finite (NaN or inf)")
    if not np.isfinite(square):
        raise _kernel_error(
            kernel, f"values up to {bound:.3g}, whose products (formed by the solver) overflow"
        )


def kernel_matrix(
    X: np.ndarray,
    Y: np.ndarray | None = None,
    kernel: str | Callable = "rbf",
    gamma: float = 1.0,
    degree: int = 3,
    coef0: float = 0.0,
) -> np.ndarray:
    """Kernel matrix ``k(X_i, Y_j)`` as a C-contiguous float64 array.

    Parameters
    ----------
    X : ndarray of shape (n_X, n_features)
    Y : ndarray of shape (n_Y, n_features) or None
        ``None`` means ``Y = X``.
    kernel : str or callable
        See the module docstring. With ``"precomputed"``, ``X`` already is the kernel matrix and
        is returned as it is.
    gamma : float
        Numeric kernel width (see :func:`resolve_gamma`).
    degree, coef0 : int, float
        Parameters of the polynomial and sigmoid kernels.

    Returns
    -------
    K : ndarray of shape (n_X, n_Y)
        Computed in float64 whatever the dtype of ``X`` and ``Y`` (scikit-learn alone would
        compute a float32 pair in float32).

    Raises
    ------
    ValueError
        When a value of ``K`` is not finite (see :func:`check_finite_kernel`).
    """
    check_kernel(kernel)
    if kernel == "precomputed":
        return np.ascontiguousarray(X, dtype=np.float64)
    if callable(kernel):
        K = _callable_matrix(kernel, X, X if Y is None else Y)
    else:
        X = np.asarray(X, dtype=np.float64)
        Y = None if Y is None else np.asarray(Y, dtype=np.float64)
        params = {
            "linear": {},
            "rbf": {"gamma": gamma},
            "poly": {"gamma": gamma, "degree": degree, "coef0": coef0},
            "sigmoid": {"gamma": gamma, "coef0": coef0},
        }[kernel]
        K = pairwise_kernels(X, Y, metric=kernel, **params)
    K = np.ascontiguousarray(K, dtype=np.float64)
    check_finite_kernel(K, kernel)
    return K


def _callable_matrix(kernel: Callable, X, Y) -> np.ndarray:
    """``kernel(X, Y)``, refused naming the kernel unless it is an (n_X, n_Y) matrix."""
    K = np.asarray(kernel(X, Y))
    expected = (len(X), len(Y))
    if K.shape != expected:
        raise ValueError(
            f"kernel={_shown(kernel)} returned an array of shape {K.shape} for {expected[0]} "
            f"and {expected[1]} trials; a callable kernel(X, Y) must return the "
            f"{expected[0]} x {expected[1]} matrix of k(X[i], Y[j])."
        )
    return K


# Integer codes of the built-in kernels for the numba solvers (``kernel_row``).
KERNEL_CODES = {"linear": 0, "rbf": 1, "poly": 2, "sigmoid": 3, "precomputed": 4}


@njit(cache=True)
def _kernel_value(dot, x_sq, y_sq, kernel_code, gamma, degree, coef0):
    """``k(x, y)`` from ``dot = x · y`` and the squared norms (numba); ``x_sq``/``y_sq``: "rbf"."""
    if kernel_code == 0:
        return dot
    if kernel_code == 1:
        d2 = x_sq + y_sq - 2.0 * dot
        return np.exp(-gamma * (d2 if d2 > 0.0 else 0.0))
    if kernel_code == 2:
        return (gamma * dot + coef0) ** degree
    return np.tanh(gamma * dot + coef0)


@njit(cache=True)
def _kernel_from_dots(dots, x_sq, sq_norms, kernel_code, gamma, degree, coef0, out) -> None:
    """Write ``k(x, X_t)`` into ``out`` from the dot products ``dots[t] = x · X_t`` (numba).

    ``x_sq`` is ``x · x`` and ``sq_norms`` the squared row norms of ``X`` (both used by "rbf"
    only); ``kernel_code`` is one of :data:`KERNEL_CODES` except "precomputed".
    """
    for t in range(dots.shape[0]):
        out[t] = _kernel_value(dots[t], x_sq, sq_norms[t], kernel_code, gamma, degree, coef0)


@njit(cache=True, fastmath={"reassoc", "contract"})
def row_dot(a, b) -> float:
    """``a · b`` as a plain loop in the precision of ``a`` (numba; vectorised, never BLAS)."""
    s = a[:0].sum()  # a zero of a's dtype
    for f in range(a.shape[0]):
        s += a[f] * b[f]
    return s


@njit(cache=True)
def squared_norms(X):
    """Squared row norms of ``X`` by :func:`row_dot` (numba)."""
    sq = np.empty(X.shape[0])
    for a in range(X.shape[0]):
        sq[a] = row_dot(X[a], X[a])
    return sq


@njit(cache=True, fastmath={"contract"})
def _exp_single(values, bits) -> None:
    """Replace the float32 ``values ≤ 0`` by their exponentials, in place (numba; vectorised).

    Cephes' ``expf``: ``exp(x) = 2ⁿ·exp(r)`` with ``n = round(x / ln 2)``, ``|r| ≤ ln 2 / 2``
    and a degree-7 polynomial for ``exp(r)``, within ~1 ulp of float32 (as ``np.exp``);
    ``2ⁿ`` is built in the exponent bits (``bits``, int32 scratch space), so that, unlike a
    call to ``expf``, the loop is vectorised. Arguments below −87 give ``exp(−87)`` (~1e-38).
    """
    for k in range(values.shape[0]):
        x = max(values[k], np.float32(-87.0))
        n = np.floor(x * np.float32(1.4426950408889634) + np.float32(0.5))
        r = x - n * np.float32(0.693359375) + n * np.float32(2.12194440e-4)  # ln 2 in two
        q = np.float32(1.9875691500e-4)
        q = q * r + np.float32(1.3981999507e-3)
        q = q * r + np.float32(8.3334519073e-3)
        q = q * r + np.float32(4.1665795894e-2)
        q = q * r + np.float32(1.6666665459e-1)
        q = q * r + np.float32(5.0000001201e-1)
        values[k] = q * r * r + r + np.float32(1.0)
        bits[k] = (np.int32(n) + np.int32(127)) << np.int32(23)
    scale = bits.view(np.float32)
    for k in range(values.shape[0]):
        values[k] *= scale[k]


@njit(cache=True, fastmath={"contract"})
def _column_dots(x, XT, lo, out) -> None:
    """``out[k] = x · XT[:, lo + k]`` in the precision of ``XT`` (numba; vectorised, never BLAS).

    One pass over eight features at a time, each adding to the whole of ``out``: the loads of
    every column are contiguous and the loop over ``k`` is vectorised without the horizontal
    sums of a dot product per column (about twice the speed of :func:`row_dot` per column).
    """
    n = out.shape[0]
    hi = lo + n
    d = XT.shape[0]
    out[:] = 0.0
    f = 0
    while f + 8 <= d:
        a0, a1, a2, a3 = x[f], x[f + 1], x[f + 2], x[f + 3]
        a4, a5, a6, a7 = x[f + 4], x[f + 5], x[f + 6], x[f + 7]
        s0, s1, s2, s3 = XT[f, lo:hi], XT[f + 1, lo:hi], XT[f + 2, lo:hi], XT[f + 3, lo:hi]
        s4, s5, s6, s7 = XT[f + 4, lo:hi], XT[f + 5, lo:hi], XT[f + 6, lo:hi], XT[f + 7, lo:hi]
        for k in range(n):
            out[k] += ((a0 * s0[k] + a1 * s1[k]) + (a2 * s2[k] + a3 * s3[k])) + (
                (a4 * s4[k] + a5 * s5[k]) + (a6 * s6[k] + a7 * s7[k])
            )
        f += 8
    while f < d:
        a0 = x[f]
        s0 = XT[f, lo:hi]
        for k in range(n):
            out[k] += a0 * s0[k]
        f += 1


@njit(cache=True)
def kernel_row(
    x: np.ndarray,
    x_sq: float,
    XT: np.ndarray,
    sq_norms: np.ndarray,
    lo: int,
    own: int,
    kernel_code: int,
    gamma: float,
    degree: float,
    coef0: float,
    out: np.ndarray,
) -> None:
    """Write ``k(x, XT[:, lo + k])`` into ``out[k]`` for ``k < out.size`` (numba).

    The points are the *columns* of ``XT`` (the solvers keep them transposed, in the order of
    their kernel cache, so that a row over a range of columns streams through memory);
    ``sq_norms[c]`` is the squared norm of column ``c`` and ``x_sq`` that of ``x`` (used by
    "rbf"); ``kernel_code`` is one of :data:`KERNEL_CODES` except "precomputed". The dot
    products are loops in the calling thread (:func:`_column_dots`), not BLAS calls, so the
    cost of a row does not depend on the BLAS thread pool; they are turned into kernel values
    in a second loop, which the compiler vectorises. Values equal :func:`kernel_matrix` to
    rounding; with a float32 ``XT`` (single-precision rows of a solver's float32 cache;
    "rbf" only, on centred data, squared distances in float32 when ``sq_norms`` is float32,
    exponentials by :func:`_exp_single`) to about 1e-7. ``own`` is the entry of ``x`` itself
    (or −1): an RBF entry set to exactly 1, as on the diagonal.
    """
    n = out.shape[0]
    _column_dots(x, XT, lo, out)
    if kernel_code == 1 and XT.itemsize == 4:
        # single precision throughout (twice the lanes) when sq_norms is float32
        x_sq32, zero, gamma32 = np.float32(x_sq), np.float32(0.0), np.float32(gamma)
        for k in range(n):
            d2 = x_sq32 + sq_norms[lo + k] - (out[k] + out[k])
            out[k] = -gamma32 * max(d2, zero)
        _exp_single(out, np.empty(n, dtype=np.int32))
    else:
        for k in range(n):
            out[k] = _kernel_value(
                out[k], x_sq, sq_norms[lo + k], kernel_code, gamma, degree, coef0
            )
    if kernel_code == 1 and 0 <= own < n:
        out[own] = 1.0


def kernel_vector(
    x: np.ndarray,
    Y: np.ndarray,
    kernel: str | Callable = "rbf",
    gamma: float = 1.0,
    degree: int = 3,
    coef0: float = 0.0,
    Y_sq_norms: np.ndarray | None = None,
) -> np.ndarray:
    """``k(x, Y_t)`` for one feature vector against every row of ``Y``, without input checks.

    The online single-trial path of the kernel machines: the row of :func:`kernel_matrix` for
    ``x`` (to rounding; the formulas of :func:`kernel_row`) without scikit-learn's validation
    of ``Y`` on every call.

    Parameters
    ----------
    x : ndarray of shape (n_features,)
        Float64, finite.
    Y : ndarray of shape (n_Y, n_features)
    kernel, gamma, degree, coef0
        As in :func:`kernel_matrix`, except "precomputed".
    Y_sq_norms : ndarray of shape (n_Y,) or None
        Squared row norms of ``Y`` (used by "rbf"; computed when ``None``).

    Returns
    -------
    k : ndarray of shape (n_Y,)
    """
    if callable(kernel):
        return np.asarray(_callable_matrix(kernel, x[np.newaxis], Y), dtype=np.float64)[0]
    code = KERNEL_CODES[kernel]
    if code == 1 and Y_sq_norms is None:
        Y_sq_norms = np.einsum("ij,ij->i", Y, Y)
    dots = Y @ x
    out = np.empty_like(dots)
    norms = dots if Y_sq_norms is None else Y_sq_norms  # unused unless "rbf"
    _kernel_from_dots(
        dots, float(x @ x), norms, code, float(gamma), float(degree), float(coef0), out
    )
    return out


def kernel_diagonal(
    X: np.ndarray,
    kernel: str | Callable = "rbf",
    gamma: float = 1.0,
    degree: int = 3,
    coef0: float = 0.0,
) -> np.ndarray:
    """The diagonal ``k(X_i, X_i)`` without forming the kernel matrix.

    Parameters are those of :func:`kernel_matrix`; with ``"precomputed"``, ``X`` is the square
    kernel matrix and its diagonal is returned.
    """
    check_kernel(kernel)
    X = np.asarray(X, dtype=np.float64)
    if kernel == "precomputed":
        return np.ascontiguousarray(np.diag(X))
    if callable(kernel):
        return np.array([float(_callable_matrix(kernel, x[None], x[None])[0, 0]) for x in X])
    sq = np.einsum("ij,ij->i", X, X)
    if kernel == "linear":
        return sq
    if kernel == "rbf":
        return np.ones(X.shape[0])
    if kernel == "poly":
        return (gamma * sq + coef0) ** degree
    return np.tanh(gamma * sq + coef0)
