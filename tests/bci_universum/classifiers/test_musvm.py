"""MulticlassUniversumSVC (MU-SVM): limiting cases of the notes (§5), KKT, duality, sklearn API."""

import itertools
import pickle
import warnings

import numpy as np
import pytest
from cvxopt import matrix, solvers
from sklearn.base import clone
from sklearn.exceptions import ConvergenceWarning
from sklearn.model_selection import GridSearchCV
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.svm import LinearSVC
from sklearn.utils.estimator_checks import parametrize_with_checks

from bci_universum import UNIVERSUM
from bci_universum.classifiers import UniversumSVC
from bci_universum.classifiers.musvm import MulticlassUniversumSVC
from bci_universum.model_selection import UniversumStratifiedKFold, universum_scorer
from bci_universum.solvers.kernels import kernel_matrix
from tests.guide_data import fingers_data

TIGHT = {"tol": 1e-10, "max_iter": 200_000, "random_state": 0}


def _data(seed, L=3, n_per=10, d=30, m=12):
    """HDLSS-like classes (labels 0..L−1) and universum trials near the origin."""
    rng = np.random.default_rng(seed)
    y = np.repeat(np.arange(L), n_per)
    X = rng.normal(size=(y.size, d)) + 1.5 * np.eye(d)[y]
    Z = 0.8 * rng.normal(size=(m, d))
    X_all = np.concatenate([X, Z])
    y_all = np.concatenate([y, np.full(m, UNIVERSUM)])
    return X_all, y_all, rng.normal(size=(25, d)) + 1.5 * np.eye(d)[rng.integers(0, L, 25)]


def _crammer_singer(X, y, C):
    return LinearSVC(
        multi_class="crammer_singer", fit_intercept=False, C=C, tol=1e-10, max_iter=1_000_000
    ).fit(X, y)


@pytest.mark.parametrize("seed", [0, 1])
@pytest.mark.parametrize(
    "params", [{"C_universum": 0.0, "delta": 0.1}, {"C_universum": "auto", "delta": 1e3}]
)
def test_reduces_to_liblinear_crammer_singer(seed, params):
    """C* = 0 or a huge Δ: LinearSVC(crammer_singer, fit_intercept=False, same C) to ~1e-6.

    LinearSVC's primal is ½Σ‖w_l‖² + C Σ_i ξ_i with the C&S constraints — the paper's (1) —
    when ``fit_intercept=False`` (with an intercept it would add a regularised constant
    feature, which the MU-SVM does not have).
    """
    X, y, X_test = _data(seed)
    lab = y != UNIVERSUM
    ref = _crammer_singer(X[lab], y[lab], C=0.3)
    clf = MulticlassUniversumSVC(C=0.3, **params, **TIGHT).fit(X, y)
    scale = np.abs(ref.decision_function(X_test)).max()
    np.testing.assert_allclose(
        clf.decision_function(X_test), ref.decision_function(X_test), atol=1e-6 * scale
    )
    np.testing.assert_allclose(clf.coef_, ref.coef_, atol=1e-7)
    if params["C_universum"] == 0.0:
        assert clf.alpha_.shape[0] == lab.sum()  # no universum copies at all
    else:
        np.testing.assert_allclose(clf.alpha_[lab.sum() :], 0.0, atol=1e-12)


@pytest.mark.parametrize(("delta", "c_u"), [(0.0, 0.4), (0.1, 0.25), (0.3, 2.0)])
def test_two_classes_is_the_no_offset_binary_usvm(delta, c_u):
    """L = 2: w_1 = −w_0 and f_1 − f_0 is the U-SVM without offset with C_bin = 2C,
    C_U = 2C*, ε = Δ (notes T5)."""
    X, y, X_test = _data(2, L=2)
    C = 0.35
    mu = MulticlassUniversumSVC(C=C, C_universum=c_u, delta=delta, **TIGHT).fit(X, y)
    usvm = UniversumSVC(
        kernel="linear",
        fit_intercept=False,
        C=2 * C,
        C_universum=2 * c_u,
        epsilon=delta,
        tol=1e-10,
    ).fit(X, y)
    np.testing.assert_allclose(mu.coef_.sum(axis=0), 0.0, atol=1e-12)
    ref = usvm.decision_function(X_test)
    np.testing.assert_allclose(mu.decision_function(X_test), ref, atol=1e-6 * np.abs(ref).max())
    np.testing.assert_array_equal(mu.predict(X_test), usvm.predict(X_test))


def _primal_18(clf, X, y):
    """Primal (18) at the fitted W: ½Σ‖w_l‖² + Σ_i C_i max_l(f_l(x_i) + e_il − f_{y_i}(x_i))."""
    F = X @ clf.coef_.T
    rows = clf.augmented_trials_
    k = clf.augmented_classes_
    n = int(np.sum(y != UNIVERSUM))
    L = clf.classes_.size
    e = 1.0 - np.eye(L)[k]
    e[n:] *= -clf.delta
    Fr = F[rows]
    slack = np.max(Fr + e, axis=1) - Fr[np.arange(len(k)), k]
    return 0.5 * np.sum(clf.coef_**2) + np.sum(clf.augmented_costs_ * slack)


@pytest.mark.parametrize("delta", [0.0, 0.05])
def test_strong_duality_and_kkt(delta):
    X, y, _ = _data(3)
    clf = MulticlassUniversumSVC(C=0.5, delta=delta, **TIGHT).fit(X, y)
    primal = _primal_18(clf, X, y)
    assert abs(primal + clf.objective_) <= 1e-7 * abs(primal)
    alpha, k = clf.alpha_, clf.augmented_classes_
    rows = np.arange(len(k))
    np.testing.assert_allclose(alpha.sum(axis=1), 0.0, atol=1e-12)
    own = alpha[rows, k]
    assert np.all(own >= -1e-12) and np.all(own <= clf.augmented_costs_ + 1e-12)
    n = int(np.sum(y != UNIVERSUM))
    assert np.any(own[n:] > 1e-8), "the universum copies must matter in this problem"
    # a Type-1 labelled SV sits exactly on the margin against every class it is active for
    F = (X @ clf.coef_.T)[clf.augmented_trials_]
    free = np.flatnonzero((own[:n] > 1e-6) & (own[:n] < 0.5 - 1e-6))
    assert free.size > 0
    for i in free:
        active = np.flatnonzero(alpha[i] < -1e-9)
        np.testing.assert_allclose(F[i, k[i]] - F[i, active], 1.0, atol=1e-7)


def test_universum_pulls_scores_together():
    """More universum cost shrinks the spread of the universum scores (the aim of the loss)."""
    X, y, _ = _data(4)
    U = X[y == UNIVERSUM]
    spreads = []
    for c_u in [0.0, 0.05, 0.5, 5.0]:
        clf = MulticlassUniversumSVC(C=1.0, C_universum=c_u, delta=0.0, **TIGHT).fit(X, y)
        s = clf.decision_function(U)
        spreads.append(float(np.sum(s.max(axis=1) - s.min(axis=1))))
    assert all(b <= a + 1e-9 for a, b in itertools.pairwise(spreads))
    assert spreads[-1] < 0.2 * spreads[0]


def test_auto_universum_cost_is_paper_ratio():
    X, y, _ = _data(5)
    clf = MulticlassUniversumSVC(C=2.0).fit(X, y)
    n, m = np.sum(y != UNIVERSUM), np.sum(y == UNIVERSUM)
    assert clf.C_universum_ == pytest.approx(2.0 * n / (m * 3))
    assert MulticlassUniversumSVC().fit(X[y != UNIVERSUM], y[y != UNIVERSUM]).C_universum_ == 0


@pytest.mark.parametrize("kernel", ["rbf", "poly"])
def test_builtin_kernel_equals_precomputed_gram(kernel):
    X, y, X_test = _data(6)
    params = {"C": 1.0, "delta": 0.05, "kernel": kernel, "gamma": 0.02, "coef0": 1.0, **TIGHT}
    clf = MulticlassUniversumSVC(**params).fit(X, y)
    K = kernel_matrix(X, None, kernel, gamma=0.02, coef0=1.0)
    pre = MulticlassUniversumSVC(**{**params, "kernel": "precomputed"}).fit(K, y)
    K_test = kernel_matrix(X_test, X, kernel, gamma=0.02, coef0=1.0)
    np.testing.assert_allclose(
        clf.decision_function(X_test), pre.decision_function(K_test), atol=1e-7
    )
    # the online decoder's unvalidated single-trial path equals the batch path
    for model, rows in ((clf, X_test), (pre, K_test)):
        np.testing.assert_allclose(
            np.array([model.decision_trial(r) for r in rows]),
            model.decision_function(rows),
            atol=1e-10,
        )
    with pytest.raises(AttributeError, match="linear kernel"):
        _ = clf.coef_


def test_compressed_model_equals_augmented_expansion():
    """Notes T9: n + m coefficient vectors predict exactly as the full augmented α."""
    X, y, X_test = _data(7)
    clf = MulticlassUniversumSVC(kernel="rbf", gamma=0.03, delta=0.05, **TIGHT).fit(X, y)
    K = kernel_matrix(X_test, X[clf.augmented_trials_], "rbf", gamma=0.03)
    np.testing.assert_allclose(clf.decision_function(X_test), K @ clf.alpha_, atol=1e-12)
    n_unique = np.unique(clf.augmented_trials_).size
    assert clf.dual_coef_.shape[1] <= n_unique < clf.alpha_.shape[0]


def test_invariance_to_trial_order_and_class_names():
    """Notes T8: permuting trials, or renaming classes, leaves the predictions unchanged."""
    X, y, X_test = _data(8)
    ref = MulticlassUniversumSVC(delta=0.05, **TIGHT).fit(X, y)
    perm = np.random.default_rng(0).permutation(len(y))
    permuted = MulticlassUniversumSVC(delta=0.05, **TIGHT).fit(X[perm], y[perm])
    np.testing.assert_allclose(
        permuted.decision_function(X_test), ref.decision_function(X_test), atol=1e-6
    )
    names = np.array(["left", "right", "feet"])
    y_str = np.where(y == UNIVERSUM, "universum", names[np.clip(y, 0, 2)]).astype(object)
    renamed = MulticlassUniversumSVC(delta=0.05, **TIGHT).fit(X, y_str)
    np.testing.assert_array_equal(renamed.predict(X_test), names[ref.predict(X_test)])


def test_ties_go_to_the_first_class():
    X, y, _ = _data(9)
    clf = MulticlassUniversumSVC().fit(X, y)
    zero = np.zeros((1, X.shape[1]))  # no intercept: every score is exactly 0
    assert np.all(clf.decision_function(zero) == 0.0)
    assert clf.predict(zero)[0] == clf.classes_[0]


def test_pipeline_grid_search_clone_pickle():
    X, y, X_test = _data(10)
    pipe = make_pipeline(StandardScaler(), MulticlassUniversumSVC(delta=0.05, random_state=0))
    search = GridSearchCV(
        pipe,
        {"multiclassuniversumsvc__C": [0.01, 1.0], "multiclassuniversumsvc__delta": [0.0, 0.1]},
        cv=UniversumStratifiedKFold(3),
        scoring=universum_scorer("accuracy"),
    ).fit(X, y)
    assert set(search.best_estimator_.classes_) == {0, 1, 2}
    # the best score is the mean accuracy over the folds' labelled test trials (the universum
    # never scored), recomputed by hand, and above the 1/3 chance of three classes
    folds = []
    for train, test in UniversumStratifiedKFold(3).split(X, y):
        labelled = test[y[test] != UNIVERSUM]
        fitted_fold = clone(search.best_estimator_).fit(X[train], y[train])
        folds.append(np.mean(fitted_fold.predict(X[labelled]) == y[labelled]))
    assert search.best_score_ == pytest.approx(np.mean(folds))
    assert search.best_score_ > 1 / 3
    fitted = MulticlassUniversumSVC(C=0.7, delta=0.05).fit(X, y)
    assert clone(fitted).get_params() == fitted.get_params()
    assert not hasattr(clone(fitted), "alpha_")
    restored = pickle.loads(pickle.dumps(fitted))
    np.testing.assert_array_equal(
        restored.decision_function(X_test), fitted.decision_function(X_test)
    )
    # score ignores the universum trials
    lab = y != UNIVERSUM
    assert fitted.score(X, y) == fitted.score(X[lab], y[lab])


@pytest.mark.parametrize(
    ("params", "match"),
    [
        ({"C": -1.0}, "'C' parameter of MulticlassUniversumSVC must be a float in the range \\(0"),
        ({"C": 0.0}, "'C' parameter"),
        ({"C_universum": -0.5}, "'C_universum' parameter"),
        ({"C_universum": "half"}, "'C_universum' parameter .* or a str among \\{'auto'\\}"),
        ({"delta": -0.1}, "'delta' parameter"),
        ({"delta": np.inf}, "'delta' parameter .* Got inf"),
        ({"tol": 0}, "'tol' parameter"),
        ({"max_iter": 0}, "'max_iter' parameter"),
        ({"kernel": "cosine"}, "'kernel' parameter"),
        ({"solver": "smo"}, "'solver' parameter .* among"),
        ({"solver": "ipm", "kernel": "rbf"}, "solver='ipm' needs kernel='linear', got"),
    ],
)
def test_bad_parameters(params, match):
    X, y, _ = _data(11)
    with pytest.raises(ValueError, match=match):
        MulticlassUniversumSVC(**params).fit(X, y)


def test_bad_data():
    X, y, _ = _data(12)
    one_class = np.where(y == UNIVERSUM, UNIVERSUM, 0)
    with pytest.raises(ValueError, match="at least two"):
        MulticlassUniversumSVC().fit(X, one_class)
    with pytest.raises(ValueError, match="at least two"):
        MulticlassUniversumSVC().fit(X, np.full(len(y), UNIVERSUM))
    with pytest.raises(ValueError, match="precomputed kernel must be square"):
        MulticlassUniversumSVC(kernel="precomputed").fit(X, y)
    with pytest.raises(ValueError, match="Unknown label type"):
        MulticlassUniversumSVC().fit(X, np.linspace(0, 1, len(y)))


# Some checks fit random labels on trials centred at 100 without an intercept, a problem on
# which LinearSVC(multi_class="crammer_singer") stops at its max_iter too.
@pytest.mark.filterwarnings(
    "ignore:The Crammer–Singer solver stopped:sklearn.exceptions.ConvergenceWarning"
)
@parametrize_with_checks([MulticlassUniversumSVC()])
def test_sklearn_compatible(estimator, check):
    check(estimator)


def _primal_2_cvxopt(X, y, U, L, C, C_u, delta):
    """The paper's motivating primal (2) (one slack per universum trial) by cvxopt."""
    n, d = X.shape
    m = U.shape[0]
    nv = L * d + n + m
    P = np.zeros((nv, nv))
    P[: L * d, : L * d] = np.eye(L * d)
    q = np.concatenate([np.zeros(L * d), np.full(n, C), np.full(m, C_u)])
    rows, rhs = [], []
    for i in range(n):
        for c in range(L):
            if c != y[i]:
                r = np.zeros(nv)  # −(w_y − w_c)·x_i − ξ_i ≤ −1
                r[y[i] * d : (y[i] + 1) * d] -= X[i]
                r[c * d : (c + 1) * d] += X[i]
                r[L * d + i] = -1.0
                rows.append(r)
                rhs.append(-1.0)
    for j in range(m):
        for k in range(L):
            for c in range(L):
                if c != k:
                    r = np.zeros(nv)  # (w_k − w_c)·z_j − ζ_j ≤ Δ
                    r[k * d : (k + 1) * d] += U[j]
                    r[c * d : (c + 1) * d] -= U[j]
                    r[L * d + n + j] = -1.0
                    rows.append(r)
                    rhs.append(delta)
    slack = np.zeros((n + m, nv))
    slack[:, L * d :] = -np.eye(n + m)
    G = np.vstack([np.array(rows), slack])
    h = np.concatenate([rhs, np.zeros(n + m)])
    solvers.options.update({"show_progress": False, "abstol": 1e-11, "reltol": 1e-11})
    sol = solvers.qp(matrix(P), matrix(q), matrix(G), matrix(h))
    return np.array(sol["x"]).ravel()[: L * d].reshape(L, d)


@pytest.mark.parametrize("L", [2, 3])
def test_formulation_18_versus_motivating_primal_2(L):
    """Notes §2.4/T6: the implemented (18) equals the paper's (2) for two classes and differs
    from it for three (a sum over the universum copies instead of one max per trial)."""
    X, y, _ = _data(13, L=L, n_per=6, d=8, m=6)
    lab = y != UNIVERSUM
    C, C_u, delta = 1.0, 0.5, 0.0
    clf = MulticlassUniversumSVC(C=C, C_universum=C_u, delta=delta, **TIGHT).fit(X, y)
    W2 = _primal_2_cvxopt(X[lab], y[lab], X[~lab], L, C, C_u, delta)
    gap = np.abs(clf.coef_ - W2).max()
    if L == 2:
        assert gap <= 1e-5 * np.abs(W2).max()
    else:
        assert gap >= 1e-3 * np.abs(W2).max()


def test_one_support_vector_against_the_closed_form():
    """Two trials on a line, ``x₀ = (1, 0)`` of class 0 and ``x₁ = (−4, 0)`` of class 1: with
    ``w₁ = −w₀`` the margin constraint of ``x₀`` alone is active, ``w₀ = x₀ / 2``, so
    ``f₁ − f₀ = −x·x₀`` and ``x₁`` (margin 4) is no support vector."""
    X = np.array([[1.0, 0.0], [-4.0, 0.0]])
    clf = MulticlassUniversumSVC(C=100.0, **TIGHT).fit(X, [0, 1])
    np.testing.assert_array_equal(clf.support_, [0])
    X_test = np.random.default_rng(0).normal(size=(5, 2))
    np.testing.assert_allclose(clf.decision_function(X_test), -X_test[:, 0], atol=1e-12)
    np.testing.assert_allclose([clf.decision_trial(x) for x in X_test], -X_test[:, 0])


def test_a_single_pass_is_allowed():
    X, y, _ = _data(24)
    with pytest.warns(ConvergenceWarning, match="max_iter=1 passes"):
        clf = MulticlassUniversumSVC(max_iter=1, solver="cd").fit(X, y)
    assert clf.n_iter_ == 1


def test_solver_auto_takes_the_interior_point_where_the_passes_crawl():
    """More trials than features: from zero the passes exceed the default cap; ``"auto"``
    starts them from the interior point and converges at the defaults, to the same model."""
    X, y = fingers_data()
    with pytest.warns(ConvergenceWarning):
        MulticlassUniversumSVC(delta=0.1, solver="cd").fit(X, y)
    cd = MulticlassUniversumSVC(delta=0.1, solver="cd", **TIGHT).fit(X, y)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        auto = MulticlassUniversumSVC(delta=0.1).fit(X, y)
    assert auto.solver_ == "ipm" and cd.solver_ == "cd"
    assert auto.n_iter_ <= 2 and cd.n_iter_ > 10_000
    assert abs(auto.objective_ - cd.objective_) <= 1e-6 * abs(cd.objective_)
    np.testing.assert_allclose(auto.coef_, cd.coef_, atol=1e-3)
    # the universum trials' scores are within Δ of each other by design: compare the labelled
    assert np.array_equal(auto.predict(X[:80]), cd.predict(X[:80]))


@pytest.mark.parametrize(
    ("kernel", "d", "params", "expected"),
    [
        ("linear", 6, {}, "ipm"),
        ("rbf", 6, {}, "cd"),
        ("linear", 200, {}, "cd"),  # fewer samples than features
        ("linear", 6, {"C_universum": 0.0}, "cd"),  # no universum: the passes are fast
    ],
)
def test_solver_auto_by_kernel_shape_and_universum(kernel, d, params, expected):
    X, y, _ = _data(13, d=d)
    assert MulticlassUniversumSVC(kernel=kernel, **params).fit(X, y).solver_ == expected
    lab = y != UNIVERSUM
    assert MulticlassUniversumSVC(kernel=kernel).fit(X[lab], y[lab]).solver_ == "cd"
    one = [*np.flatnonzero(lab), np.flatnonzero(~lab)[0]]
    solver = MulticlassUniversumSVC(kernel=kernel, **params).fit(X[one], y[one]).solver_
    assert solver == expected  # a single universum trial counts


def test_solver_auto_asks_with_the_augmented_shape(monkeypatch):
    """The shape rule gets (augmented samples, points, classes, features)."""
    import bci_universum.classifiers.musvm as musvm

    asked = []
    monkeypatch.setattr(musvm, "cs_uses_interior_point", lambda *shape: asked.append(shape))
    X, y, _ = _data(14, L=3, n_per=10, d=7, m=12)
    assert MulticlassUniversumSVC().fit(X, y).solver_ == "cd"  # the rule said None
    assert asked == [(30 + 12 * 3, 30 + 12, 3, 7)]
