"""Interior point for linear box duals against cvxopt, SMO, and the solver choice by shape."""

import inspect
import itertools
import warnings

import numpy as np
import pytest
from sklearn.exceptions import ConvergenceWarning
from sklearn.preprocessing import StandardScaler
from sklearn.svm import SVC

from bci_universum import UNIVERSUM
from bci_universum.classifiers import UniversumSVC
from bci_universum.datasets import load_eegmmidb
from bci_universum.features.tangent_space import TangentSpace
from bci_universum.solvers import interior_point, ipm_solve, linear_solver, smo_solve
from bci_universum.solvers.crammer_singer import cs_solve
from tests.guide_data import fingers_data

from ._cs_reference import cvxopt_cs_dual, mu_svm_dual, mu_svm_problem
from ._reference import cvxopt_objective, usvm_dual


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
    points, y, p, upper, index, _ = usvm_dual(seed, d=d)
    res = ipm_solve(y, p, upper, points, index=index, equality=equality, tol=1e-9)
    K = (points @ points.T)[np.ix_(index, index)]
    ref = cvxopt_objective(K, y, p, upper, equality)
    assert res.converged
    assert abs(res.objective - ref) <= 1e-9 * abs(ref)
    assert np.all(res.alpha >= 0) and np.all(res.alpha <= upper)
    if equality:
        assert abs(y @ res.alpha) <= 1e-10 * res.alpha.sum()


def _separable():
    """Two separable clouds of 20 points: a hard-margin problem."""
    rng = np.random.default_rng(3)
    X = np.concatenate([rng.normal(size=(20, 2)) + 3, rng.normal(size=(20, 2)) - 3])
    return X, np.r_[np.ones(20), -np.ones(20)]


def test_ipm_hard_margin_and_fixed_variables():
    """Infinite upper bounds and variables fixed at 0 (upper = 0)."""
    X, y = _separable()
    upper = np.full(40, np.inf)
    upper[:3] = 0.0
    res = ipm_solve(y, -np.ones(40), upper, X, tol=1e-9)
    ref = smo_solve(y, -np.ones(40), upper, X, kernel="linear", tol=1e-9)
    assert np.all(res.alpha[:3] == 0.0)
    assert abs(res.objective - ref.objective) <= 1e-9 * abs(ref.objective)


def _ipm_problem(name):
    """``(U, y, p, upper)`` of the interior point: ``Q = UUᵀ``."""
    if name == "hard margin":
        X, y = _separable()
        return y[:, None] * X, y, -np.ones(40), np.full(40, np.inf)
    if name == "unbalanced":
        # 60 against 10 in a narrow box, p large: yᵀα = 0 is the last condition met
        X = np.random.default_rng(1).normal(size=(70, 4))
        y = np.r_[np.ones(60), -np.ones(10)]
        return y[:, None] * X, y, np.full(70, -1e4), np.full(70, 0.1)
    seed, d, scale = {"low rank": (0, 4, 1.0), "d=30": (1, 30, 1.0), "dense": (2, 200, 1.0),
                      "tiny": (0, 4, 1e-6), "large": (0, 4, 1e3), "zero point": (3, 4, 1.0),
                      "small p": (0, 4, 1.0), "small box": (0, 4, 1e3),
                      "small box, p < 1": (0, 4, 1e3)}[name]  # fmt: skip
    points, y, p, upper, index, _ = usvm_dual(seed, d=d)
    if name == "zero point":
        # a universum trial at the origin with epsilon = 0: its two variables do not enter
        # the objective, and their Newton steps vanish at the start
        points[40] = 0.0
        p[index == 40] = 0.0
    if name == "small p":
        p *= 1e-3  # the residuals' scale 1 + max|p| is then about 1
    if name == "small box, p < 1":
        p *= 0.3  # and the residuals' scale 1 + max|p| below 2
    if name.startswith("small box"):
        # Q times 1000 and the box 1000 times narrower: the dual residual is met last
        return np.sqrt(scale) * y[:, None] * points[index], y, p, upper / scale
    # Q and p scaled alike: the same optimum α, the objective times scale
    return np.sqrt(scale) * y[:, None] * points[index], y, scale * p, upper


def _count_newton_steps(monkeypatch):
    """The Newton systems the interior point factorises (one per step), as ``Q is None``."""
    steps = []
    solver = interior_point._solver

    def counting(U, Q, D):
        steps.append(Q is None)
        return solver(U, Q, D)

    monkeypatch.setattr(interior_point, "_solver", counting)
    return steps


_REL_TOL = inspect.signature(interior_point._interior_point).parameters["rel_tol"].default


def _stopping_rule(U, y, p, upper, equality, a, z, w, rel_tol=_REL_TOL):
    """The interior point's rule at ``(α, z, w)`` by the definitions: dual residual, primal
    residual and duality gap within ``rel_tol`` of the scale of ``p``, ``α``, the objective."""
    fin = np.isfinite(upper)
    Q = U @ U.T
    gradient = Q @ a + p - z + w
    # the multiplier of yᵀα = 0 is not returned: the least-squares one stands in for it (the
    # best in the 2-norm, not in the largest |residual| that the rule bounds)
    nu = -(y @ gradient) / (y @ y) if equality else 0.0
    objective = 0.5 * a @ Q @ a + p @ a
    gap = a @ z + (upper[fin] - a[fin]) @ w[fin]
    return (
        np.abs(gradient + nu * y).max() <= rel_tol * (1.0 + np.abs(p).max())
        and (not equality or abs(y @ a) <= rel_tol * (1.0 + a.max()))
        and gap <= rel_tol * (1.0 + abs(objective))
    )


_IPM_PROBLEMS = ["low rank", "d=30", "dense", "hard margin", "tiny", "large", "zero point"]
# problems on which the gap, the dual or the primal residual is the last condition met
# ("d=30": bounds at C carry much of the objective, |½αᵀQα + pᵀα| is twice |1.5αᵀQα + pᵀα|:
# a wrong objective in the gap's scale 1 + |objective| shows)
_IPM_PROBLEMS_BY_LAST_CONDITION = ["low rank", "d=30", "dense", "hard margin", "large",
                                   "small p", "small box", "small box, p < 1",
                                   "unbalanced"]  # fmt: skip


@pytest.mark.parametrize("equality", [True, False])
@pytest.mark.parametrize("name", _IPM_PROBLEMS)
def test_interior_point_stops_at_a_kkt_point(name, equality, monkeypatch):
    """The returned point meets the stopping rule (residuals and duality gap by their
    definitions) after a few Newton steps, and has cvxopt's objective."""
    U, y, p, upper = _ipm_problem(name)
    steps = _count_newton_steps(monkeypatch)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        a, z, w = interior_point._box_interior_point(U, y, p, upper, equality)
    # Mehrotra's method needs a few dozen steps on any problem; these need fewer
    assert 0 < len(steps) <= 25
    fin = np.isfinite(upper)
    assert np.all(a > 0) and np.all(a[fin] < upper[fin]) and np.all(z > 0)
    assert np.all(w[fin] > 0) and np.all(w[~fin] == 0)  # no multiplier on an infinite bound
    assert _stopping_rule(U, y, p, upper, equality, a, z, w)
    K = np.outer(y, y) * (U @ U.T)  # the kernel matrix: y = ±1
    reference = cvxopt_objective(K, y, p, np.where(fin, upper, 1e6), equality)
    # the duality gap bounds the distance to the optimum: absolute below |objective| = 1
    objective = 0.5 * (U.T @ a) @ (U.T @ a) + p @ a
    assert abs(objective - reference) <= 1e-9 * (1.0 + abs(reference))


@pytest.mark.parametrize("equality", [True, False])
@pytest.mark.parametrize("name", _IPM_PROBLEMS_BY_LAST_CONDITION)
def test_stops_at_the_first_point_meeting_any_tolerance(name, equality, monkeypatch):
    """Over a range of ``rel_tol`` (which changes the step it stops at) it stops at the first
    iterate meeting the rule: the one before (the same steps, one fewer) does not."""
    U, y, p, upper = _ipm_problem(name)
    _check_stops_at_the_first_point(
        U, y, p, upper, equality, np.logspace(-3, -10, 29), monkeypatch
    )


def _check_stops_at_the_first_point(U, y, p, upper, equality, rel_tols, monkeypatch):
    steps = _count_newton_steps(monkeypatch)
    for rel_tol in rel_tols:
        steps.clear()
        point = interior_point._box_interior_point(U, y, p, upper, equality, rel_tol=rel_tol)
        assert _stopping_rule(U, y, p, upper, equality, *point, rel_tol=rel_tol)
        if steps:
            before = interior_point._box_interior_point(
                U, y, p, upper, equality, max_iter=len(steps) - 1, rel_tol=rel_tol
            )
            assert not _stopping_rule(U, y, p, upper, equality, *before, rel_tol=rel_tol)


def test_primal_residual_decides_at_the_start(monkeypatch):
    """On the unbalanced problem the start's primal residual ``|yᵀα| / (1 + max α)`` exceeds
    its dual residual and its gap: over rel_tols from half to 1.2 times it, ``yᵀα = 0`` decides
    whether the start is returned or which step is the first to meet the rule."""
    U, y, p, upper = _ipm_problem("unbalanced")
    start = interior_point._box_interior_point(U, y, p, upper, True, max_iter=0)
    primal = abs(y @ start[0]) / (1.0 + start[0].max())
    rel_tols = np.geomspace(0.5 * primal, 1.2 * primal, 16)
    for rel_tol in rel_tols:  # the case this test is about: only yᵀα = 0 fails at the start
        assert _stopping_rule(U, y, p, upper, True, *start, rel_tol=rel_tol) == (rel_tol >= primal)
    _check_stops_at_the_first_point(U, y, p, upper, True, rel_tols, monkeypatch)


def test_solve_that_lost_its_accuracy_stops_the_interior_point(monkeypatch):
    """``(Q + D)`` is positive definite, so ``yᵀ(Q + D)⁻¹y ≤ 0`` means the solve lost its
    accuracy: the interior point stops at that step (no division by it) and SMO finishes to
    cvxopt's optimum. Here the fourth step's solve returns zeros: ``yᵀ(Q + D)⁻¹y = 0``."""
    points, y, p, upper, index, _ = usvm_dual(0)
    steps = []
    solver = interior_point._solver

    def failing(U, Q, D):
        steps.append(True)
        return solver(U, Q, D) if len(steps) < 4 else np.zeros_like

    monkeypatch.setattr(interior_point, "_solver", failing)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        res = ipm_solve(y, p, upper, points, index=index, tol=1e-9)
    assert len(steps) == 4
    ref = cvxopt_objective((points @ points.T)[np.ix_(index, index)], y, p, upper, True)
    assert res.converged
    assert abs(res.objective - ref) <= 1e-9 * abs(ref)


@pytest.mark.parametrize("equality", [True, False])
@pytest.mark.parametrize("name", _IPM_PROBLEMS)
def test_steps_shrink_the_linear_residuals_by_a_common_factor(name, equality):
    """Each step goes the fraction ``t ∈ (0, 1]`` of Newton's direction for the linear
    equations: the residual ``Qα + p − z + w`` (``yᵀα`` with the equality, whose multiplier is
    not returned) is the previous one times ``1 − t``, until it reaches rounding level."""
    U, y, p, upper = _ipm_problem(name)
    Q = U @ U.T
    residuals = []
    for n_steps in range(26):
        point = interior_point._box_interior_point(U, y, p, upper, equality, max_iter=n_steps)
        a, z, w = point
        residuals.append(np.array([y @ a]) if equality else Q @ a + p - z + w)
        if _stopping_rule(U, y, p, upper, equality, *point):
            break
    checked = 0
    for previous, residual in itertools.pairwise(residuals):
        size = np.abs(previous).max()
        if size <= 1e-5 * (1.0 + np.abs(residuals[0]).max()):
            continue  # near rounding level
        i = np.argmax(np.abs(previous))
        factor = residual[i] / previous[i]
        assert 0.0 <= factor < 1.0
        assert np.abs(residual - factor * previous).max() <= 1e-6 * size
        checked += 1
    assert checked >= 1 or (equality and name == "hard margin")  # yᵀα = 0 at its start


@pytest.mark.parametrize(("n_features", "woodbury"), [(4, True), (69, True), (70, False)])
def test_newton_systems_by_shape(n_features, woodbury, monkeypatch):
    """Woodbury through ``n_features × n_features`` when there are more variables (70) than
    features, else a dense factorisation of ``Q + D``."""
    points, y, p, upper, index, _ = usvm_dual(0, d=n_features)
    steps = _count_newton_steps(monkeypatch)
    interior_point._box_interior_point(y[:, None] * points[index], y, p, upper, True)
    assert steps and set(steps) == {woodbury}


@pytest.mark.parametrize("seed", [2, 7])
def test_factorisation_lost_to_rounding_is_finished_by_smo(monkeypatch, seed):
    """Near the optimum the Newton system may no longer be numerically positive definite:
    the interior point stops there and SMO finishes to cvxopt's optimum.

    Whether rounding loses the factorisation depends on the machine's BLAS kernels (seed 2
    loses it on some CPUs, seed 7 on others), so the loss is also provoked: the factorisations
    of a full run are counted, then the last two of them raise ``LinAlgError`` as rounding
    does.
    """
    points, y, p, upper, index, _ = usvm_dual(seed, m=10, q=20, d=30)
    ref = cvxopt_objective((points @ points.T)[np.ix_(index, index)], y, p, upper, True)
    calls, failures, fail_from = [], [], [np.inf]
    factor = interior_point.cho_factor

    def failing(*args, **kwargs):
        calls.append(True)
        try:
            if len(calls) >= fail_from[0]:
                raise np.linalg.LinAlgError("provoked")
            return factor(*args, **kwargs)
        except np.linalg.LinAlgError:
            failures.append(len(calls))
            raise

    monkeypatch.setattr(interior_point, "cho_factor", failing)
    for provoked in (False, True):
        if provoked:
            fail_from[0], calls[:], failures[:] = len(calls) - 1, [], []
        res = ipm_solve(y, p, upper, points, index=index, tol=1e-9)
        assert res.converged
        assert abs(res.objective - ref) <= 1e-9 * abs(ref)
    assert failures == [fail_from[0]] and len(calls) == fail_from[0]  # stopped at the first


def _snap_case(name):
    """``(alpha, z, w, y, upper)`` as the interior point leaves them, and the variables that
    the multipliers mark as active at 0 and at the upper bound."""
    y = np.array([1.0, 1.0, -1.0, -1.0, 1.0, -1.0])
    upper = np.array([2.0, 2.0, 2.0, 2.0, np.inf, 2.0])
    if name == "large":
        upper = np.where(np.isfinite(upper), 1e3, np.inf)
    at_zero = np.array([True, False, False, False, False, False])
    at_upper = np.array([False, True, False, False, False, False])
    rng = np.random.default_rng(0)
    alpha = np.where(at_zero, 1e-7, np.where(at_upper, upper - 1e-7, 0.3 * upper))
    alpha[4] = 0.5 * upper[0]
    alpha[~at_zero & ~at_upper] *= rng.uniform(0.8, 1.2, size=4)
    z = np.where(at_zero, 1e-3, 1e-9)
    w = np.where(at_upper, 1e-3, np.where(np.isfinite(upper), 1e-9, 0.0))
    return alpha, z, w, y, upper, at_zero, at_upper


@pytest.mark.parametrize("name", ["unit", "large"])
def test_snap_puts_active_variables_on_their_bounds(name):
    """Active bounds exactly, ``yᵀα = 0`` kept by one common shift of the free variables."""
    alpha, z, w, y, upper, at_zero, at_upper = _snap_case(name)
    snapped = interior_point._snap(alpha.copy(), z, w, y, upper, True)
    free = ~at_zero & ~at_upper
    assert np.all(snapped[at_zero] == 0.0) and np.all(snapped[at_upper] == upper[at_upper])
    shift = y[free] * (snapped[free] - alpha[free])
    np.testing.assert_allclose(shift, shift[0], rtol=1e-12)
    assert abs(y @ snapped) <= 1e-12 * snapped.max()
    no_equality = interior_point._snap(alpha.copy(), z, w, y, upper, False)
    np.testing.assert_array_equal(no_equality[free], alpha[free])


def test_snap_whose_shift_leaves_the_box_starts_cold():
    """A shift restoring ``yᵀα = 0`` would push a free variable below 0: clipped back it breaks
    the equality again, so SMO starts from zero (never from outside the box)."""
    y = np.array([1.0, 1.0, -1.0])
    upper = np.ones(3)
    alpha = np.array([0.9, 0.05, 0.1])  # all free, yᵀα = 0.85: shifts of ∓0.283
    snapped = interior_point._snap(
        alpha.copy(), np.full(3, 1e-9), np.full(3, 1e-9), y, upper, True
    )
    np.testing.assert_array_equal(snapped, np.zeros(3))


@pytest.mark.parametrize("offset", [0.8e-12, 1e-12, 1.5e-12])
def test_snap_without_free_variables_keeps_the_equality_or_starts_cold(offset):
    """All variables on a bound: the snap is kept when it meets ``yᵀα = 0`` to 1e-12 (absolute
    while α ≤ 1), else SMO starts from zero."""
    y = np.array([1.0, -1.0, 1.0])
    upper = np.array([0.5, 0.5, offset])
    alpha = upper.copy()  # all at upper: yᵀα = offset exactly
    z = np.full(3, 1e-20)  # below every α: none at 0
    w = np.full(3, 1e-3)
    snapped = interior_point._snap(alpha.copy(), z, w, y, upper, True)
    expected = alpha if offset <= 1e-12 else np.zeros(3)
    np.testing.assert_array_equal(snapped, expected)


@pytest.mark.parametrize("tol", [0.0, -0.5])
def test_tol_must_be_positive(tol):
    points, y, p, upper, index, _ = usvm_dual(0)
    with pytest.raises(ValueError, match="tol must be positive"):
        ipm_solve(y, p, upper, points, index=index, tol=tol)


def test_interior_point_runs_on_one_blas_thread(monkeypatch):
    """The caller's BLAS pool is limited to one thread during the interior point only."""
    from threadpoolctl import threadpool_info, threadpool_limits

    def blas_threads():
        return [pool["num_threads"] for pool in threadpool_info() if pool["user_api"] == "blas"]

    seen = []
    run = interior_point._interior_point

    def recording(*args, **kwargs):
        seen.extend(blas_threads())
        return run(*args, **kwargs)

    monkeypatch.setattr(interior_point, "_interior_point", recording)
    points, y, p, upper, index, _ = usvm_dual(0)
    with threadpool_limits(2, user_api="blas"):
        before = blas_threads()
        ipm_solve(y, p, upper, points, index=index)
        assert blas_threads() == before
    assert max(before) == 2  # else this test tells nothing
    assert seen and set(seen) == {1}


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
        1, path=data_dir, band=(7.0, 30.0), universum=("rest", "baseline", "task"), verbose="error"
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
    ref = cvxopt_objective((X @ X.T)[np.ix_(index, index)], y_var, p, upper, True)
    assert abs(auto.objective_ - ref) <= 1e-8 * abs(ref)


def _cs_objective(alpha, e, points, index):
    coef = np.zeros((points.shape[0], e.shape[1]))
    np.add.at(coef, index, alpha)
    w = coef.T @ points
    return 0.5 * np.sum(w * w) + np.sum(alpha * e)


def _cs_feasible(alpha, y, upper):
    own = alpha[np.arange(len(y)), y]
    others = alpha.copy()
    others[np.arange(len(y)), y] = 0.0
    scale = 1e-12 * max(1.0, np.abs(alpha).max())
    return (
        np.all(own >= -scale)
        and np.all(own <= upper + scale)
        and np.all(others <= scale)
        and np.all(np.abs(alpha.sum(axis=1)) <= scale)
    )


@pytest.mark.parametrize(("seed", "d", "L"), [(0, 6, 3), (1, 4, 4), (2, 40, 3)])
def test_cs_interior_point_matches_cvxopt(seed, d, L):
    """The warm start alone is feasible and near the optimum (the snap to the bounds moves
    it by the interior point's last complementarity); the passes from it stop at once at the
    default tolerance and end at cvxopt's optimum at a tight one (low rank, d > points)."""
    y, e, upper, points, index = mu_svm_problem(seed, d=d, L=L)
    _, ref = cvxopt_cs_dual((points @ points.T)[np.ix_(index, index)], y, e, upper)
    start = interior_point.cs_warm_start(y, e, upper, points, index)
    assert _cs_feasible(start, y, upper)
    assert abs(_cs_objective(start, e, points, index) - ref) <= 1e-6 * abs(ref)
    res = cs_solve(y, e, upper, points, index=index, solver="ipm")
    assert res.converged and res.n_iter <= 2
    res = cs_solve(y, e, upper, points, index=index, solver="ipm", tol=1e-9)
    assert _cs_feasible(res.alpha, y, upper)
    assert abs(res.objective - ref) <= 1e-9 * abs(ref)


def _fingers():
    """The user guide's MU-SVM data as the dual cs_solve gets from
    MulticlassUniversumSVC(C=1, delta=0.1) (C* = C·n/(mL) = 0.8)."""
    X, y = fingers_data()
    lab = y != UNIVERSUM
    return mu_svm_dual(X[lab], y[lab], X[~lab], 0.1, 1.0, 80 / 100)


def test_cs_interior_point_where_the_passes_crawl():
    """More samples than features: the passes need > 10 000 (the default cap) from zero, one
    or two from the interior point, to the same optimum."""
    y, e, upper, X, index = _fingers()
    with pytest.warns(ConvergenceWarning):
        capped = cs_solve(y, e, upper, X, index=index, max_iter=10_000)
    assert capped.n_iter == 10_000
    cd = cs_solve(y, e, upper, X, index=index, max_iter=10**6, tol=1e-6)
    assert cd.n_iter > 10_000
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        res = cs_solve(y, e, upper, X, index=index, solver="ipm", tol=1e-6)
    assert res.n_iter <= 2
    assert abs(res.objective - cd.objective) <= 1e-8 * abs(cd.objective)


def test_cs_interior_point_skips_samples_without_cost(monkeypatch):
    """Samples with C_i = 0 stay out of the interior point (their slack would be pinned at 0,
    which no interior iterate reaches) and start at zero."""
    sizes = []
    run = interior_point._interior_point

    def recording(hess, cons, newton, p, upper, **kwargs):
        sizes.append(p.size)
        return run(hess, cons, newton, p, upper, **kwargs)

    monkeypatch.setattr(interior_point, "_interior_point", recording)
    y, e, upper, points, index = mu_svm_problem(3)
    upper[[0, 5, -1]] = 0.0
    start = interior_point.cs_warm_start(y, e, upper, points, index)
    assert sizes == [(y.size - 3) * e.shape[1]]
    assert np.all(start[[0, 5, -1]] == 0.0)
    _, ref = cvxopt_cs_dual((points @ points.T)[np.ix_(index, index)], y, e, upper)
    assert abs(_cs_objective(start, e, points, index) - ref) <= 1e-6 * abs(ref)
    assert not interior_point.cs_warm_start(y, e, 0.0 * upper, points, index).any()


@pytest.mark.filterwarnings("error")  # a row without free entries divides nothing by zero
def test_cs_snap_restores_rows_or_starts_them_at_zero():
    upper = np.array([[1.0, 0.0, 0.0], [0.0, 2.0, 0.0], [0.5, 0.0, 0.0]])
    alpha = np.array([[0.9, -0.5, -0.4 + 3e-9], [-1e-9, 1.999, -2.0], [0.5, -0.2, -0.2]])
    v = upper - alpha
    z = np.array([[0.01, 0.01, 0.01], [1.0, 0.01, 0.01], [1.0, 1.0, 1.0]])
    snapped = interior_point._snap_rows(alpha, v, z, upper)
    # row 0: nothing active, the sum's 3e-9 taken off each entry equally
    np.testing.assert_allclose(snapped[0], alpha[0] - 1e-9, rtol=0, atol=1e-15)
    # row 1: entries 0 and 1 marked active (z > v) go to their bounds 0 and 2, entry 2
    # absorbs the sum
    np.testing.assert_array_equal(snapped[1], [0.0, 2.0, -2.0])
    # row 2: every entry at its bound sums to 0.5: no free entry can restore it
    assert np.all(snapped[2] == 0.0)
    # an entry pushed above its bound by the shift: the row starts at zero
    over = interior_point._snap_rows(
        np.array([[0.2, -0.5, -0.1]]), np.ones((1, 3)), np.zeros((1, 3)), upper[:1]
    )
    assert np.all(over == 0.0)


def test_cs_interior_point_runs_on_one_blas_thread(monkeypatch):
    from threadpoolctl import threadpool_info, threadpool_limits

    seen = []
    run = interior_point._interior_point

    def recording(*args, **kwargs):
        seen.extend(p["num_threads"] for p in threadpool_info() if p["user_api"] == "blas")
        return run(*args, **kwargs)

    monkeypatch.setattr(interior_point, "_interior_point", recording)
    y, e, upper, points, index = mu_svm_problem(0)
    with threadpool_limits(2, user_api="blas"):
        interior_point.cs_warm_start(y, e, upper, points, index)
    assert seen and set(seen) == {1}


@pytest.mark.parametrize(
    ("shape", "expected"),
    [
        ((180, 100, 5, 6), True),  # the guide's data
        ((4275, 1797, 8, 64), True),  # digits 0-7 + 8-9 universum: 3.1e8 operations
        ((100, 100, 3, 2080), False),  # tangent space of 64 channels: fewer samples
        ((100, 100, 3, 100), False),  # as many features as samples
        ((100, 99, 3, 99), True),
        ((20000, 20000, 8, 64), False),  # 1.2e10 operations a step
        ((4275, 1797, 10, 64), True),  # 4.9e8
        ((4275, 1797, 11, 64), False),  # 6.0e8
    ],
)
def test_cs_solver_choice_by_shape(shape, expected, monkeypatch):
    assert interior_point.cs_uses_interior_point(*shape) is expected
    # a Newton step of exactly the limit's cost is still taken
    monkeypatch.setattr(
        interior_point, "_IPM_MAX_COST", interior_point.cs_interior_point_cost(*shape[1:])
    )
    assert interior_point.cs_uses_interior_point(*shape) is (shape[3] < shape[0])


def test_cs_newton_step_cost():
    assert interior_point.cs_interior_point_cost(10, 3, 4) == 10 * 6 * 16 + 12**3 / 3


@pytest.mark.parametrize(("seed", "d", "L"), [(0, 6, 3), (1, 40, 4)])
def test_cs_newton_system_against_a_dense_solve(seed, d, L):
    """The Newton system of the slack form, ``[H + diag D, Aᵀ; A, 0] (dv, dν) = (r, −rp)``
    with ``H = I_L ⊗ X[index] X[index]ᵀ`` (sample-major) and ``A`` the per-sample sums,
    solved by the closed form and Woodbury equals numpy's dense solve."""
    y, _, _, points, index = mu_svm_problem(seed, d=d, L=L)
    n = y.size
    rng = np.random.default_rng(seed)
    D, r, rp = rng.uniform(0.1, 10.0, n * L), rng.normal(size=n * L), rng.normal(size=n)
    K = points[index] @ points[index].T
    H = np.einsum("ij,lm->iljm", K, np.eye(L)).reshape(n * L, n * L)
    A = np.kron(np.eye(n), np.ones((1, L)))
    kkt = np.block([[H + np.diag(D), A.T], [A, np.zeros((n, n))]])
    expected = np.linalg.solve(kkt, np.concatenate([r, -rp]))
    dv, dnu = interior_point._cs_newton(points, index, L)(D)(r, rp)
    np.testing.assert_allclose(dv, expected[: n * L], rtol=1e-8, atol=1e-10)
    np.testing.assert_allclose(dnu, expected[n * L :], rtol=1e-8, atol=1e-10)


@pytest.mark.parametrize(("seed", "d", "L"), [(0, 6, 3), (1, 4, 4), (2, 40, 3), (4, 5, 4)])
def test_cs_interior_point_takes_few_newton_steps(seed, d, L, monkeypatch):
    """The interior point meets its stopping rule (not its cap of 100 steps) in a few dozen
    Newton steps, as Mehrotra's method does whatever the conditioning."""
    factorised = []
    newton = interior_point._cs_newton

    def counting(*args):
        factor = newton(*args)
        return lambda D: factorised.append(1) or factor(D)

    monkeypatch.setattr(interior_point, "_cs_newton", counting)
    y, e, upper, points, index = mu_svm_problem(seed, d=d, L=L)
    interior_point.cs_warm_start(y, e, upper, points, index)
    assert 5 <= len(factorised) <= 30
