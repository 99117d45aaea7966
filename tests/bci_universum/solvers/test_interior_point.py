"""Interior point for linear box duals against cvxopt, SMO, and the solver choice by shape."""

import warnings

import numpy as np
import pytest

from bci_universum import UNIVERSUM
from bci_universum.classifiers import UniversumSVC
from bci_universum.solvers import ipm_solve, linear_solver, smo_solve

from .test_smo import _cvxopt_objective, _problem


def _few_labelled(seed=20, d=20, scale=10.0):
    """10 labelled + 90 universum trials, the universum on ``scale`` times the labelled scale
    (tangent-space features standardised on ten labelled trials look like this): SMO needs
    ~10⁵ updates on it."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(10, d))
    y = np.repeat([1, 0], 5)
    X[:, 0] += np.where(y == 1, 1.0, -1.0)
    Z = scale * rng.normal(size=(90, d))
    return np.concatenate([X, Z]), np.concatenate([y, np.full(90, UNIVERSUM)])


@pytest.mark.parametrize("equality", [True, False])
@pytest.mark.parametrize(("seed", "d"), [(0, 4), (1, 30), (2, 200)])
def test_ipm_matches_cvxopt(seed, d, equality):
    """Low rank (Woodbury, d < variables) and full rank (dense) Newton systems."""
    points, y, p, upper, index, _ = _problem(seed, d=d)
    res = ipm_solve(y, p, upper, points, index=index, equality=equality, tol=1e-9)
    K = (points @ points.T)[np.ix_(index, index)]
    ref = _cvxopt_objective(K, y, p, upper, equality)
    assert res.converged
    assert abs(res.objective - ref) <= 1e-9 * abs(ref)
    assert np.all(res.alpha >= 0) and np.all(res.alpha <= upper)
    if equality:
        assert abs(y @ res.alpha) <= 1e-10 * res.alpha.sum()


def test_ipm_hard_margin_and_fixed_variables():
    """Infinite upper bounds and variables fixed at 0 (upper = 0)."""
    rng = np.random.default_rng(3)
    X = np.concatenate([rng.normal(size=(20, 2)) + 3, rng.normal(size=(20, 2)) - 3])
    y = np.r_[np.ones(20), -np.ones(20)]
    upper = np.full(40, np.inf)
    upper[:3] = 0.0
    res = ipm_solve(y, -np.ones(40), upper, X, tol=1e-9)
    ref = smo_solve(y, -np.ones(40), upper, X, kernel="linear", tol=1e-9)
    assert np.all(res.alpha[:3] == 0.0)
    assert abs(res.objective - ref.objective) <= 1e-9 * abs(ref.objective)


def test_ill_conditioned_few_labelled_problem():
    """The 10 + 90 case: the interior point lands where SMO needs ~10⁵ updates from zero."""
    X, y = _few_labelled()
    kw = {"kernel": "linear", "C_universum": 0.5, "epsilon": 0.05, "tol": 1e-6}
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        auto = UniversumSVC(**kw).fit(X, y)
    assert auto.solver_ == "ipm"
    assert auto.n_iter_ <= 100  # SMO updates after the warm start
    smo = UniversumSVC(solver="smo", **kw).fit(X, y)
    assert smo.n_iter_ > 10_000
    # both optima of the same problem, to the stopping tolerance
    assert abs(auto.objective_ - smo.objective_) <= 1e-5 * abs(smo.objective_)
    np.testing.assert_allclose(
        auto.decision_function(X), smo.decision_function(X), atol=1e-3 * np.abs(X).max()
    )


@pytest.mark.parametrize(
    ("n_variables", "n_features", "expected"),
    [
        (190, 20, "ipm"),  # 10 labelled + 90 universum
        (190, 2080, "ipm"),  # tangent space of 64 channels: dense, n_variables²·n_variables
        (8000, 64, "ipm"),  # 4000 + 2000 universum
        (3000, 2080, "smo"),
        (40000, 2080, "dcd"),
    ],
)
def test_linear_solver_by_shape(n_variables, n_features, expected):
    assert linear_solver(n_variables, n_features) == expected
