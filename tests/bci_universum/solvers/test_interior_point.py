"""Interior point for linear box duals against cvxopt, SMO, and the solver choice by shape."""

import warnings

import numpy as np
import pytest
from sklearn.preprocessing import StandardScaler
from sklearn.svm import SVC

from bci_universum import UNIVERSUM
from bci_universum.classifiers import UniversumSVC
from bci_universum.datasets import load_eegmmidb
from bci_universum.features.tangent_space import TangentSpace
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
        (190, 20, "ipm"),  # 10 labelled + 90 universum: rank-deficient
        (190, 100, "ipm"),
        (190, 190, "smo"),  # full rank: SMO needs a few hundred updates
        (190, 2080, "smo"),  # tangent space of 64 channels
        (8000, 64, "ipm"),  # 4000 + 2000 universum
        (3000, 2080, "smo"),
        (40000, 2080, "dcd"),
    ],
)
def test_linear_solver_by_shape(n_variables, n_features, expected):
    assert linear_solver(n_variables, n_features) == expected


# CSP features of one inner fold on S001 (labelled only): the interior point ran on past its
# optimum until the Woodbury solve lost its accuracy (yᵀ(Q + D)⁻¹y < 0, then NaN).
_FOLD = np.array(
    [
        [-0.6427084883000609, -0.948566539354578],
        [-0.12030498828069924, -1.0651819387232138],
        [-0.42828797045282335, -1.2566871152182169],
        [-0.0011065347451594415, -1.843477178654534],
        [-1.5821922757870408, -0.3653279214123827],
        [-1.5846332738461608, -0.21032387584016285],
        [-1.4747458784265939, -0.28008837670693293],
        [-1.7227017260347282, -0.7863423444754356],
        [-1.251597918014998, 0.170215619415254],
        [-0.7335032959614474, -1.1733405687177887],
        [-0.4346169409363122, -1.4641685497347503],
        [0.05704219128689094, -1.257630852374152],
        [-0.2573372522486167, -1.210370010736653],
        [-0.3147192088546549, -1.433188357533436],
        [-0.3961840749563648, -1.4776982839171642],
        [-1.3594251149148115, -0.7512087719605876],
        [-1.4963387832959347, -0.40971576542131216],
        [-1.2110347637862735, -0.6164349407719548],
        [-1.1606741963950467, 0.08265258777732608],
        [-1.2992180688289983, -0.4125527923020959],
        [-1.0892799564223468, -0.4965849487189277],
    ]
)
_FOLD_Y = np.array([0, 0, 0, 0, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1])


def test_ipm_stops_before_losing_accuracy():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        model = UniversumSVC(kernel="linear", C=10, C_universum=0, solver="ipm").fit(
            _FOLD, _FOLD_Y
        )
    reference = SVC(kernel="linear", C=10, tol=1e-10).fit(_FOLD, _FOLD_Y)
    np.testing.assert_allclose(
        model.decision_function(_FOLD), reference.decision_function(_FOLD), atol=1e-5
    )


@pytest.mark.data
def test_full_rank_few_labelled_problem_stays_on_smo(data_dir):
    """Real 10 + 90 tangent-space features of S001 (2080 features, 190 variables): SMO
    converges in a few hundred updates, so ``auto`` keeps it; same optimum as the interior
    point and cvxopt."""
    trials = load_eegmmidb(
        1, path=data_dir, band=(7.0, 30.0), universum=("rest", "baseline", "task"), verbose=False
    )
    y = np.asarray(trials.y)
    rng = np.random.default_rng(0)
    pick = [rng.choice(np.flatnonzero(y == c), n, replace=False) for c, n in
            (("left", 5), ("right", 5), ("universum", 90))]  # fmt: skip
    pick = np.concatenate(pick)
    features = TangentSpace().fit(trials.X[pick], y[pick]).transform(trials.X[pick])
    X = StandardScaler().fit(features[:10]).transform(features)
    kw = {"kernel": "linear", "C_universum": 0.5, "epsilon": 0.05, "tol": 1e-8}
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        auto = UniversumSVC(**kw).fit(X, y[pick])
    assert auto.solver_ == "smo"
    assert auto.n_iter_ <= 1000
    ipm = UniversumSVC(solver="ipm", **kw).fit(X, y[pick])
    assert ipm.solver_ == "ipm"
    assert abs(auto.objective_ - ipm.objective_) <= 1e-8 * abs(ipm.objective_)
    # the dual over 10 labelled variables and both copies of each universum trial
    index = np.r_[np.arange(10), np.arange(10, 100), np.arange(10, 100)]
    y_var = np.r_[np.where(y[pick][:10] == auto.classes_[1], 1.0, -1.0), np.ones(90), -np.ones(90)]
    p = np.r_[-np.ones(10), np.full(180, 0.05)]
    upper = np.r_[np.ones(10), np.full(180, 0.5)]
    ref = _cvxopt_objective((X @ X.T)[np.ix_(index, index)], y_var, p, upper, True)
    assert abs(auto.objective_ - ref) <= 1e-8 * abs(ref)
