"""Validation of the box QP shared by the solvers, at the edges of what it accepts."""

import numpy as np
import pytest

from bci_universum.solvers._box_qp import check_box_qp

ONES = np.ones(4)
Y = np.array([1, -1, 1, -1])


def test_returns_contiguous_float_copies_and_defaults():
    y_in = [1, -1, 1, -1]
    y, p, upper, index, alpha = check_box_qp(y_in, [-1] * 4, [2] * 4, 4)
    for array in (y, p, upper, alpha):
        assert array.dtype == np.float64 and array.flags.c_contiguous
    assert index.dtype == np.int64 and index.tolist() == [0, 1, 2, 3]
    assert alpha.tolist() == [0.0] * 4
    y, _, _, index, alpha = check_box_qp([], [], [], 0, index=[], equality=True)
    assert y.size == index.size == alpha.size == 0


def test_bounds_zero_and_infinite_are_allowed_negative_and_nan_are_not():
    _, _, upper, _, _ = check_box_qp(Y, -ONES, [0.0, np.inf, 1.0, 0.0], 4)
    assert upper.tolist() == [0.0, np.inf, 1.0, 0.0]
    for bad in (-1e-300, np.nan):
        with pytest.raises(ValueError, match="upper bounds must be >= 0"):
            check_box_qp(Y, -ONES, [1.0, bad, 1.0, 1.0], 4)
    for bad in (np.inf, np.nan):
        with pytest.raises(ValueError, match="p must be finite"):
            check_box_qp(Y, [-1.0, bad, -1.0, -1.0], ONES, 4)
    with pytest.raises(ValueError, match="only -1 and \\+1"):
        check_box_qp([1.0, -1.0, 0.5, 1.0], -ONES, ONES, 4)
    with pytest.raises(ValueError, match="same length"):
        check_box_qp(Y, -ONES[:3], ONES, 4)


def test_index_values_lie_among_the_points():
    _, _, _, index, _ = check_box_qp(Y, -ONES, ONES, 2, index=[0, 1, 1, 0])
    assert index.tolist() == [0, 1, 1, 0]
    for bad in ([0, 1, 2, 0], [-1, 1, 1, 0]):
        with pytest.raises(ValueError, match=r"index values must lie in \[0, 2\)"):
            check_box_qp(Y, -ONES, ONES, 2, index=bad)
    with pytest.raises(ValueError, match=r"index must have shape \(4,\)"):
        check_box_qp(Y, -ONES, ONES, 2, index=[0, 1])
    with pytest.raises(ValueError, match="one variable per point; got 4 variables and 3"):
        check_box_qp(Y, -ONES, ONES, 3)


def test_warm_start_within_the_box_and_on_the_equality():
    upper = np.array([5.0, 5.0, 1.0, 1.0])
    alpha0 = np.array([5.0, 5.0, 0.0, 0.0])  # on the bounds, y @ alpha0 == 0
    np.testing.assert_array_equal(check_box_qp(Y, -ONES, upper, 4, alpha0=alpha0)[4], alpha0)
    for bad in (
        [5.0 + 1e-12, 5.0, 0.0, 0.0],
        [-1e-12, 0.0, 0.0, 0.0],
        [np.nan, 0, 0, 0],
        [1.0, 1.0],
    ):
        with pytest.raises(ValueError, match=r"within \[0, upper\]"):
            check_box_qp(Y, -ONES, upper, 4, alpha0=bad)
    # |y @ alpha0| is allowed up to 1e-10 · max(1, max|alpha0|) · n_variables
    tol = 1e-10 * 5.0 * 4
    for alpha, ok in (([5.0, 5.0 - 0.9 * tol, 0, 0], True), ([5.0, 5.0 - 1.1 * tol, 0, 0], False)):
        _check_equality(Y, upper, alpha, ok)
    tol = 1e-10 * 1.0 * 4  # max|alpha0| < 1: scale 1
    for alpha, ok in (([0.5, 0.5 - 0.9 * tol, 0, 0], True), ([0.5, 0.5 - 1.1 * tol, 0, 0], False)):
        _check_equality(Y, upper, alpha, ok)
    _check_equality([1.0], [1.0], [0.9e-10], True)  # one variable: n counts as 1
    _check_equality([1.0], [1.0], [1e-10], True)  # the tolerance itself is accepted
    _check_equality([1.0], [1.0], [1.1e-10], False)
    # without the equality any point of the box is a warm start
    alpha = check_box_qp(Y, -ONES, upper, 4, alpha0=[1.0, 0.0, 0.0, 0.0], equality=False)[4]
    assert alpha.tolist() == [1.0, 0.0, 0.0, 0.0]


def _check_equality(y, upper, alpha, ok):
    n = len(y)
    if ok:
        check_box_qp(y, -np.ones(n), upper, n, alpha0=alpha)
    else:
        with pytest.raises(ValueError, match="y @ alpha0 == 0"):
            check_box_qp(y, -np.ones(n), upper, n, alpha0=alpha)


def test_linear_solver_choice_follows_its_documented_thresholds():
    """Interior point with fewer features than variables while n_variables · n_features² ≤
    5·10⁸, else DCD from 10 000 variables on, else SMO."""
    from bci_universum.solvers._box_qp import linear_solver

    assert linear_solver(50_000, 100) == "ipm"  # exactly 5e8
    assert linear_solver(50_001, 100) == "dcd"
    assert linear_solver(500_000_000, 1) == "ipm"  # exactly 5e8 again, one feature
    assert linear_solver(500_000_001, 1) == "dcd"  # one operation over
    assert linear_solver(10_000, 300) == "dcd"  # 9e8
    assert linear_solver(9_999, 300) == "smo"
    assert linear_solver(790, 789) == "ipm"  # fewer features than variables: 4.9e8
    assert linear_solver(790, 790) == "smo"  # full rank
    assert linear_solver(790, 10**6) == "smo"
