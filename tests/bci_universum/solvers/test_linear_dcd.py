"""Linear dual coordinate descent against the SMO solver and cvxopt."""

import numpy as np
import pytest
from cvxopt import matrix, solvers
from sklearn.exceptions import ConvergenceWarning

from bci_universum.solvers import dcd_solve, linear_dcd, smo_solve


def _problem(seed, m=50, q=15, d=30):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(m, d))
    y = np.where(X[:, 0] + 0.5 * rng.normal(size=m) > 0, 1.0, -1.0)
    Z = 0.5 * rng.normal(size=(q, d))
    points = np.concatenate([X, Z])
    y_var = np.concatenate([y, np.ones(q), -np.ones(q)])
    p = np.concatenate([-np.ones(m), np.full(2 * q, 0.1)])
    upper = np.concatenate([np.full(m, 1.0), np.full(2 * q, 0.5)])
    index = np.concatenate([np.arange(m), np.arange(m, m + q), np.arange(m, m + q)])
    return points, y_var, p, upper, index


@pytest.mark.parametrize("equality", [True, False])
@pytest.mark.parametrize("seed", [0, 1, 2, 3])
def test_dcd_agrees_with_smo(seed, equality):
    points, y, p, upper, index = _problem(seed)
    ref = smo_solve(
        y, p, upper, points, index=index, kernel="linear", tol=1e-10, equality=equality
    )
    res = dcd_solve(
        y,
        p,
        upper,
        points,
        index=index,
        tol=1e-8,
        max_iter=20000,
        equality=equality,
        random_state=seed,
    )
    assert res.converged
    w_ref = points[index].T @ (y * ref.alpha)
    f_ref = points @ w_ref + ref.intercept
    f = points @ res.coef + res.intercept
    # the offset is optimised (not the augmented-feature approximation): decision values agree
    # to 1e-3 of their scale with it, 1e-5 without it
    rel = 1e-3 if equality else 1e-5
    np.testing.assert_allclose(f, f_ref, atol=rel * np.abs(f_ref).max())
    np.testing.assert_allclose(res.coef, points[index].T @ (y * res.alpha), atol=1e-12)
    # the gradient and objective reported are those of the returned α, by their definitions
    Q = np.outer(y, y) * (points @ points.T)[np.ix_(index, index)]
    gradient = Q @ res.alpha + p
    np.testing.assert_allclose(res.gradient, gradient, atol=1e-12 * np.abs(Q).sum(axis=1).max())
    assert res.objective == pytest.approx(0.5 * res.alpha @ (gradient + p), rel=1e-12)
    if equality:
        assert abs(res.intercept - ref.intercept) < 1e-3
        # yᵀα = 0 up to the accuracy of the offset search, and SMO's optimum to that accuracy
        assert abs(y @ res.alpha) <= 1e-3 * res.alpha.sum()
        assert abs(res.objective - ref.objective) <= 1e-5 * abs(ref.objective)
    else:
        assert res.intercept == 0.0
        assert abs(res.objective - ref.objective) <= 1e-8 * abs(ref.objective)


def test_dcd_without_offset_matches_cvxopt():
    points, y, p, upper, index = _problem(7)
    K = (points @ points.T)[np.ix_(index, index)]
    Q = np.outer(y, y) * K
    n = len(y)
    solvers.options.update(show_progress=False, abstol=1e-12, reltol=1e-12, feastol=1e-12)
    sol = solvers.qp(
        matrix(Q),
        matrix(p),
        matrix(np.vstack([-np.eye(n), np.eye(n)])),
        matrix(np.concatenate([np.zeros(n), upper])),
    )
    a = np.array(sol["x"]).ravel()
    ref = 0.5 * a @ Q @ a + p @ a
    res = dcd_solve(y, p, upper, points, index=index, tol=1e-9, max_iter=20000, equality=False)
    assert abs(res.objective - ref) <= 1e-7 * abs(ref)


def test_visiting_order_does_not_change_the_solution():
    points, y, p, upper, index = _problem(8)
    kw = {"index": index, "tol": 1e-9, "max_iter": 20000}
    a = dcd_solve(y, p, upper, points, random_state=0, **kw)
    b = dcd_solve(y, p, upper, points, random_state=1, shrinking=False, **kw)
    np.testing.assert_allclose(a.coef, b.coef, atol=1e-4)
    assert abs(a.intercept - b.intercept) < 1e-4


def test_cap_warns():
    points, y, p, upper, index = _problem(9)
    with pytest.warns(ConvergenceWarning, match="max_iter=1 passes"):
        res = dcd_solve(y, p, upper, points, index=index, tol=1e-9, max_iter=1, equality=False)
    assert not res.converged and res.n_iter == 1


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"tol": -1.0}, "tol must be positive"),
        ({"max_iter": 0}, "max_iter must be positive"),
        ({"points": np.ones(3)}, "2-D"),
        ({"upper": np.array([1.0, -2.0])}, "upper bounds"),
    ],
)
def test_bad_input(kwargs, match):
    args = {"y": np.array([1.0, -1.0]), "p": -np.ones(2), "upper": np.ones(2)}
    args["points"] = kwargs.pop("points", np.eye(2))
    args.update(kwargs)
    with pytest.raises(ValueError, match=match):
        dcd_solve(args.pop("y"), args.pop("p"), args.pop("upper"), args.pop("points"), **args)


def test_zero_point_and_pinned_variables_agree_with_smo():
    """A zero feature vector makes its variable's objective linear (it goes to a bound, never
    stalling the solve); ``upper = 0`` pins a variable at 0 whatever its gradient."""
    points, y, p, upper, index = _problem(0)
    points[4] = 0.0  # a labelled trial with p = -1: its variable goes to its upper bound
    upper[[7, 60]] = 0.0  # a labelled trial and a universum variable, both pinned
    ref = smo_solve(y, p, upper, points, index=index, kernel="linear", tol=1e-10, equality=False)
    res = dcd_solve(y, p, upper, points, index=index, tol=1e-8, max_iter=20000, equality=False)
    assert res.converged
    assert res.alpha[4] == upper[4] and res.alpha[7] == 0.0 and res.alpha[60] == 0.0
    assert abs(res.objective - ref.objective) <= 1e-8 * abs(ref.objective)
    np.testing.assert_allclose(res.alpha, ref.alpha, atol=1e-5)


def test_cap_with_the_offset_warns_and_counts_every_inner_pass(monkeypatch):
    """With the equality every inner solve of the offset search hits the cap: not converged,
    and ``n_iter`` is the sum of the inner solves' passes."""
    points, y, p, upper, index = _problem(9)
    passes = []
    solve_at = linear_dcd._solve_at

    def counting(*args):
        value, epochs, converged = solve_at(*args)
        passes.append(epochs)
        return value, epochs, converged

    monkeypatch.setattr(linear_dcd, "_solve_at", counting)
    with pytest.warns(ConvergenceWarning, match="max_iter=1 passes"):
        res = dcd_solve(y, p, upper, points, index=index, tol=1e-9, max_iter=1)
    assert not res.converged
    assert len(passes) > 1 and res.n_iter == sum(passes)
