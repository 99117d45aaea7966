"""UniversumSVC: limiting cases, identities of the notes (§19), sklearn integration, errors."""

import itertools
import json
import os
import pickle
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from cvxopt import matrix, solvers
from sklearn.base import clone
from sklearn.exceptions import ConvergenceWarning
from sklearn.metrics.pairwise import rbf_kernel
from sklearn.model_selection import GridSearchCV
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.svm import SVC

from bci_universum import UNIVERSUM
from bci_universum.classifiers import UniversumSVC
from bci_universum.solvers import linear_solver
from bci_universum.solvers.kernels import kernel_matrix

ROOT = Path(__file__).resolve().parents[3]


def _data(seed, m=60, q=25, d=4):
    """Two overlapping classes (labels 0/1) and universum trials between them."""
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 2, m)
    X = rng.normal(size=(m, d)) + 0.8 * (2 * y[:, None] - 1) * np.eye(d)[0]
    Z = 0.6 * rng.normal(size=(q, d))
    X_all = np.concatenate([X, Z])
    y_all = np.concatenate([y, np.full(q, UNIVERSUM)])
    return X_all, y_all, rng.normal(size=(40, d))


@pytest.mark.parametrize("kernel", ["linear", "rbf", "poly"])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_zero_universum_cost_is_sklearn_svc(kernel, seed):
    """The positive semi-definite kernels of the documented claim (the sigmoid kernel is not
    one: the solver may stop at another stationary point than libsvm's)."""
    X, y, X_test = _data(seed)
    lab = y != UNIVERSUM
    svc = SVC(C=2.0, kernel=kernel, gamma="scale", tol=1e-6).fit(X[lab], y[lab])
    usvc = UniversumSVC(C=2.0, C_universum=0.0, kernel=kernel, tol=1e-6).fit(X, y)
    ref = svc.decision_function(X_test)
    np.testing.assert_allclose(usvc.decision_function(X_test), ref, rtol=1e-4, atol=1e-4 * 1e-2)
    np.testing.assert_array_equal(usvc.predict(X_test), svc.predict(X_test))
    # without universum trials at all it is the same plain SVM
    plain = UniversumSVC(C=2.0, kernel=kernel, tol=1e-6).fit(X[lab], y[lab])
    np.testing.assert_allclose(plain.decision_function(X_test), ref, rtol=1e-4, atol=1e-6)
    assert plain.universum_dual_coef_.shape == (1, 0)


def test_fitted_attributes_and_expansion():
    X, y, X_test = _data(3)
    clf = UniversumSVC(kernel="linear", C_universum=1.0, epsilon=0.1, tol=1e-8).fit(X, y)
    lab = np.flatnonzero(y != UNIVERSUM)
    uni = np.flatnonzero(y == UNIVERSUM)
    assert set(clf.support_) <= set(lab) and set(clf.universum_support_) <= set(uni)
    assert clf.universum_support_.size > 0
    np.testing.assert_array_equal(clf.support_vectors_, X[clf.support_])
    assert np.all(np.abs(clf.dual_coef_) <= 1.0 + 1e-12)
    assert np.all(np.abs(clf.universum_dual_coef_) <= 1.0 + 1e-12)
    # Σ y α over labelled and universum coefficients is 0 (the dual equality)
    assert abs(clf.dual_coef_.sum() + clf.universum_dual_coef_.sum()) < 1e-8
    w = clf.dual_coef_ @ X[clf.support_] + clf.universum_dual_coef_ @ X[clf.universum_support_]
    np.testing.assert_allclose(clf.coef_, w, atol=1e-12)
    np.testing.assert_allclose(
        clf.decision_function(X_test), X_test @ w[0] + clf.intercept_[0], atol=1e-10
    )
    assert clf.n_support_.sum() == clf.support_.size
    with pytest.raises(AttributeError, match="linear kernel"):
        _ = UniversumSVC().fit(X, y).coef_


def test_label_flip_antisymmetry_and_string_labels():
    X, y, X_test = _data(4)
    a = UniversumSVC(tol=1e-8).fit(X, y)
    y_flip = np.where(y == UNIVERSUM, UNIVERSUM, 1 - y)
    b = UniversumSVC(tol=1e-8).fit(X, y_flip)
    np.testing.assert_allclose(
        a.decision_function(X_test), -b.decision_function(X_test), atol=1e-6
    )
    names = np.where(y == UNIVERSUM, "universum", np.where(y == 1, "right", "left")).astype(object)
    c = UniversumSVC(tol=1e-8).fit(X, names)
    assert c.classes_.tolist() == ["left", "right"]
    np.testing.assert_allclose(
        c.decision_function(X_test), a.decision_function(X_test), atol=1e-10
    )
    assert c.score(X, names) == a.score(X, y)
    custom = np.where(y == UNIVERSUM, 9, y)
    d = UniversumSVC(tol=1e-8, universum_label=9).fit(X, custom)
    np.testing.assert_allclose(
        d.decision_function(X_test), a.decision_function(X_test), atol=1e-10
    )


def test_x_universum_argument_equals_sentinel_route():
    X, y, X_test = _data(5)
    lab = y != UNIVERSUM
    a = UniversumSVC(tol=1e-8).fit(X, y)
    b = UniversumSVC(tol=1e-8).fit(X[lab], y[lab], X_universum=X[~lab])
    np.testing.assert_allclose(
        a.decision_function(X_test), b.decision_function(X_test), atol=1e-10
    )
    assert np.all(b.universum_support_ >= lab.sum())


def test_precomputed_and_callable_kernels_equal_linear():
    X, y, X_test = _data(6)
    ref = UniversumSVC(kernel="linear", tol=1e-8).fit(X, y)
    pre = UniversumSVC(kernel="precomputed", tol=1e-8).fit(X @ X.T, y)
    call = UniversumSVC(kernel=lambda A, B: A @ B.T, tol=1e-8).fit(X, y)
    f = ref.decision_function(X_test)
    np.testing.assert_allclose(pre.decision_function(X_test @ X.T), f, atol=1e-7)
    np.testing.assert_allclose(call.decision_function(X_test), f, atol=1e-7)
    assert pre.score(X @ X.T, y) == ref.score(X, y)
    # the online decoder's unvalidated single-trial path equals the batch path
    for clf, rows in ((ref, X_test), (pre, X_test @ X.T), (call, X_test)):
        np.testing.assert_allclose([clf.decision_trial(r) for r in rows], f, atol=1e-7)
    rbf = UniversumSVC(kernel="rbf", gamma=0.3).fit(X, y)
    np.testing.assert_allclose(
        [rbf.decision_trial(r) for r in X_test], rbf.decision_function(X_test), atol=1e-12
    )


def test_universum_kkt_and_monotone_tube_loss():
    """Notes §19 B13–B14: tube KKT per universum point; tube loss non-increasing in C_U."""
    X, y, _ = _data(7)
    Z = X[y == UNIVERSUM]
    losses = []
    for c_u in [0.0, 0.1, 1.0, 10.0, 100.0]:
        clf = UniversumSVC(C=1.0, C_universum=c_u, epsilon=0.1, tol=1e-9).fit(X, y)
        fz = clf.decision_function(Z)
        losses.append(np.maximum(0, np.abs(fz) - 0.1).sum())
        beta = np.zeros(len(Z))
        beta[clf.universum_support_ - np.flatnonzero(y == UNIVERSUM)[0]] = (
            clf.universum_dual_coef_[0]
        )
        inside = np.abs(fz) < 0.1 - 1e-6
        assert np.all(beta[inside] == 0)
        np.testing.assert_allclose(beta[fz > 0.1 + 1e-6], -c_u)
        np.testing.assert_allclose(beta[fz < -0.1 - 1e-6], c_u)
    assert all(a >= b - 1e-6 for a, b in itertools.pairwise(losses))
    assert losses[-1] < 0.05 * losses[0]


def test_strong_duality():
    """Notes §19 A11: the primal value at the solution equals minus the dual objective."""
    X, y, _ = _data(8)
    C, C_u, eps = 1.5, 0.7, 0.05
    clf = UniversumSVC(C=C, C_universum=C_u, epsilon=eps, tol=1e-10).fit(X, y)
    lab = y != UNIVERSUM
    coef = np.concatenate([clf.dual_coef_[0], clf.universum_dual_coef_[0]])
    pts = np.concatenate([X[clf.support_], X[clf.universum_support_]])
    K = kernel_matrix(pts, kernel="rbf", gamma=clf.gamma_)
    f_lab = clf.decision_function(X[lab])
    f_u = clf.decision_function(X[~lab])
    y_pm = np.where(y[lab] == 1, 1.0, -1.0)
    primal = (
        0.5 * coef @ K @ coef
        + C * np.maximum(0, 1 - y_pm * f_lab).sum()
        + C_u * np.maximum(0, np.abs(f_u) - eps).sum()
    )
    assert abs(primal + clf.objective_) <= 1e-6 * abs(primal)


def test_hard_margin_universum_equals_projected_kernel_svm():
    """Lemmas 2.1/2.2 (notes §9): C_U → ∞, ε = 0, b = 0 ≡ no-offset SVM with k^⊥."""
    X, y, X_test = _data(9, m=40, q=8)
    lab = y != UNIVERSUM
    Xl, Z = X[lab], X[~lab]
    y_pm = np.where(y[lab] == 1, 1.0, -1.0)
    gamma, C = 0.3, 1.0
    clf = UniversumSVC(
        C=C, C_universum=np.inf, epsilon=0.0, gamma=gamma, fit_intercept=False, tol=1e-10
    ).fit(X, y)

    def k(A, B):
        return kernel_matrix(A, B, "rbf", gamma)

    K_uu_inv = np.linalg.inv(k(Z, Z))

    def k_perp(A, B):
        return k(A, B) - k(A, Z) @ K_uu_inv @ k(Z, B)

    # independent reference: cvxopt on the no-offset dual with the projected kernel
    Q = np.outer(y_pm, y_pm) * k_perp(Xl, Xl)
    m = len(y_pm)
    solvers.options.update(show_progress=False, abstol=1e-12, reltol=1e-12, feastol=1e-12)
    sol = solvers.qp(
        matrix(Q),
        matrix(-np.ones(m)),
        matrix(np.vstack([-np.eye(m), np.eye(m)])),
        matrix(np.concatenate([np.zeros(m), np.full(m, C)])),
    )
    alpha = np.array(sol["x"]).ravel()
    f_ref = k_perp(X_test, Xl) @ (y_pm * alpha)
    f = clf.decision_function(X_test)
    assert clf.intercept_[0] == 0.0
    np.testing.assert_allclose(f, f_ref, atol=1e-4 * np.abs(f_ref).max())
    assert np.abs(clf.decision_function(Z)).max() <= 1e-4


def test_cone_universum():
    """Notes §8: with RBF U_c-SVM(ρ) ≡ U-SVM(ε = ρ); with a linear kernel they differ."""
    X, y, X_test = _data(10)
    X[y == UNIVERSUM] *= 3.0  # universum norms vary, so √k(z, z) matters for the linear kernel
    kw = {"C_universum": 1.0, "epsilon": 0.2, "tol": 1e-9}
    rbf_cone = UniversumSVC(kernel="rbf", cone=True, **kw).fit(X, y)
    rbf_tube = UniversumSVC(kernel="rbf", **kw).fit(X, y)
    np.testing.assert_allclose(
        rbf_cone.decision_function(X_test), rbf_tube.decision_function(X_test), atol=1e-8
    )
    lin_cone = UniversumSVC(kernel="linear", cone=True, **kw).fit(X, y)
    lin_tube = UniversumSVC(kernel="linear", **kw).fit(X, y)
    gap = np.abs(lin_cone.decision_function(X_test) - lin_tube.decision_function(X_test)).max()
    assert gap > 1e-2
    # the cone's per-trial tube: |f(z)| ≤ ρ‖z‖ wherever β = 0 with some slack
    Z = X[y == UNIVERSUM]
    fz = lin_cone.decision_function(Z)
    free = np.ones(len(Z), bool)
    free[lin_cone.universum_support_ - np.flatnonzero(y == UNIVERSUM)[0]] = False
    assert np.all(np.abs(fz[free]) <= 0.2 * np.linalg.norm(Z[free], axis=1) + 1e-6)


def test_dcd_solver_agrees_with_smo():
    """Linear DCD (offset optimised over b) vs SMO; decision values to 1e-3 of their scale."""
    rng = np.random.default_rng(11)
    X = rng.normal(size=(50, 30))
    y = np.where(X[:, 0] + 0.5 * rng.normal(size=50) > 0, 1, 0)
    X = np.concatenate([X, 0.5 * rng.normal(size=(15, 30))])
    y = np.concatenate([y, np.full(15, UNIVERSUM)])
    X_test = rng.normal(size=(30, 30))
    smo = UniversumSVC(kernel="linear", solver="smo", tol=1e-10).fit(X, y)
    dcd = UniversumSVC(
        kernel="linear", solver="dcd", tol=1e-8, max_iter=20000, random_state=0
    ).fit(X, y)
    assert smo.solver_ == "smo" and dcd.solver_ == "dcd"
    f = smo.decision_function(X_test)
    np.testing.assert_allclose(dcd.decision_function(X_test), f, atol=1e-3 * np.abs(f).max())


def test_pipeline_grid_search_clone_pickle():
    X, y, X_test = _data(12)
    X = X * 10 + 5  # universum trials go through the scaler with the labelled ones
    pipe = make_pipeline(StandardScaler(), UniversumSVC(tol=1e-6))
    pipe.fit(X, y)
    scaler = StandardScaler().fit(X)
    direct = UniversumSVC(tol=1e-6).fit(scaler.transform(X), y)
    np.testing.assert_allclose(
        pipe.decision_function(X_test), direct.decision_function(scaler.transform(X_test))
    )
    assert 0.5 < pipe.score(X, y) <= 1.0  # universum trials are ignored by score
    search = GridSearchCV(
        make_pipeline(StandardScaler(), UniversumSVC()),
        {"universumsvc__C_universum": [0.0, 1.0], "universumsvc__C": [0.5, 2.0]},
        cv=3,
    ).fit(X, y)
    assert search.best_estimator_[-1].classes_.tolist() == [0, 1]
    assert np.isfinite(search.cv_results_["mean_test_score"]).all()
    fitted = UniversumSVC(C=3.0, epsilon=0.2).fit(X, y)
    cloned = clone(fitted)
    assert cloned.get_params() == fitted.get_params() and not hasattr(cloned, "support_")
    restored = pickle.loads(pickle.dumps(fitted))
    np.testing.assert_array_equal(
        restored.decision_function(X_test), fitted.decision_function(X_test)
    )


def test_same_results_without_jit():
    """NUMBA_DISABLE_JIT=1 (pure Python solvers) gives the jitted results."""
    script = (
        "import json, numpy as np\n"
        "from bci_universum.classifiers import UniversumSVC\n"
        "rng = np.random.default_rng(0)\n"
        "X = rng.normal(size=(30, 3)); y = (X[:, 0] > 0).astype(int); y[-8:] = -2\n"
        "out = {}\n"
        "for solver, kernel in [('smo', 'rbf'), ('smo', 'linear'), ('dcd', 'linear')]:\n"
        "    c = UniversumSVC(kernel=kernel, solver=solver, tol=1e-8, max_iter=100000,\n"
        "                     random_state=0).fit(X, y)\n"
        "    out[solver + kernel] = c.decision_function(X).tolist()\n"
        "print(json.dumps(out))\n"
    )
    runs = []
    for disable in ["0", "1"]:
        env = dict(os.environ, NUMBA_DISABLE_JIT=disable)
        proc = subprocess.run(
            [sys.executable, "-c", script],
            cwd=ROOT,
            env=env,
            capture_output=True,
            text=True,
            timeout=300,
            check=True,
        )
        runs.append(json.loads(proc.stdout.strip().splitlines()[-1]))
    for key in runs[0]:
        # rounding differs (BLAS vs Python dot products); the solution agrees within tol
        np.testing.assert_allclose(runs[1][key], runs[0][key], atol=1e-7)


@pytest.mark.parametrize(
    ("params", "match"),
    [
        ({"C": -1.0}, "'C' parameter of UniversumSVC"),
        ({"C": 0.0}, "'C' parameter"),
        ({"C_universum": -0.5}, "'C_universum' parameter"),
        ({"epsilon": -0.1}, "'epsilon' parameter"),
        ({"kernel": "laplacian"}, "'kernel' parameter"),
        ({"gamma": -2.0}, "'gamma' parameter"),
        ({"tol": 0}, "'tol' parameter"),
        ({"solver": "newton"}, "'solver' parameter"),
        ({"solver": "dcd", "kernel": "rbf"}, "needs kernel='linear'"),
        ({"max_iter": 0}, "'max_iter' parameter"),
    ],
)
def test_bad_parameters(params, match):
    X, y, _ = _data(13)
    with pytest.raises(ValueError, match=match):
        UniversumSVC(**params).fit(X, y)


def test_bad_data():
    X, y, _ = _data(14)
    bad = X.copy()
    bad[3, 1] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        UniversumSVC().fit(bad, y)
    bad[3, 1] = np.inf
    with pytest.raises(ValueError, match="infinity"):
        UniversumSVC().fit(bad, y)
    with pytest.raises(ValueError, match="inconsistent numbers of samples"):
        UniversumSVC().fit(X, y[:-1])
    with pytest.raises(ValueError, match="only one class"):
        UniversumSVC().fit(X, np.where(y == UNIVERSUM, UNIVERSUM, 1))
    with pytest.raises(ValueError, match="All trials carry the universum label"):
        UniversumSVC().fit(X, np.full(len(y), UNIVERSUM))
    three = np.where(y == UNIVERSUM, UNIVERSUM, np.arange(len(y)) % 3)
    with pytest.raises(ValueError, match="Only binary classification is supported"):
        UniversumSVC().fit(X, three)
    with pytest.raises(ValueError, match="X_universum cannot be used"):
        UniversumSVC(kernel="precomputed").fit(X @ X.T, y, X_universum=X[:2])
    with pytest.raises(ValueError, match="precomputed kernel must be square"):
        UniversumSVC(kernel="precomputed").fit(X, y)
    clf = UniversumSVC().fit(X, y)
    with pytest.raises(ValueError, match="features"):
        clf.decision_function(X[:, :2])
    with pytest.raises(ValueError, match="features"):
        UniversumSVC().fit(X, y, X_universum=X[:3, :2])
    with pytest.raises(ValueError, match="only universum trials"):
        clf.score(X[y == UNIVERSUM], y[y == UNIVERSUM])


@pytest.mark.parametrize("kernel", ["linear", "precomputed"])
def test_support_attributes_equal_sklearn_svc(kernel):
    """Without universum trials, the fitted attributes are those of ``sklearn.svm.SVC``: the same
    support vectors (only α > 0), their count per class, their coefficients and offset, and
    the empty vectors of a precomputed kernel."""
    X, y, _ = _data(15)
    lab = y != UNIVERSUM
    X, y = X[lab], y[lab]
    data = X @ X.T if kernel == "precomputed" else X
    clf = UniversumSVC(kernel=kernel, C=0.5, tol=1e-10).fit(data, y)
    svc = SVC(kernel=kernel, C=0.5, tol=1e-10).fit(data, y)
    # in SVC's order, class by class, so that SVC's idioms hold
    np.testing.assert_array_equal(clf.support_, svc.support_)
    np.testing.assert_array_equal(clf.n_support_, svc.n_support_)
    assert np.all(y[clf.support_[: clf.n_support_[0]]] == clf.classes_[0])
    np.testing.assert_allclose(clf.dual_coef_, svc.dual_coef_, atol=1e-6)
    np.testing.assert_allclose(clf.intercept_, svc.intercept_, atol=1e-6)
    assert clf.support_vectors_.shape == svc.support_vectors_.shape
    if kernel == "linear":
        np.testing.assert_array_equal(clf.support_vectors_, svc.support_vectors_)
    assert clf.universum_support_vectors_.shape == (0, 0 if kernel == "precomputed" else 4)
    # scikit-learn tells a kernel matrix (sliced on both axes by cross-validation) by this tag
    assert clf.__sklearn_tags__().input_tags.pairwise == svc.__sklearn_tags__().input_tags.pairwise


def test_universum_support_vectors_make_the_decision():
    """``f(x) = Σ dual_coef_ k(sv, x) + Σ universum_dual_coef_ k(usv, x) + b`` (scikit-learn's
    kernel), with the universum vectors those of the trials ``universum_support_`` names."""
    X, y, X_test = _data(16)
    clf = UniversumSVC(kernel="rbf", gamma=0.5, C_universum=2.0, tol=1e-8).fit(X, y)
    assert clf.universum_support_.size > 0
    np.testing.assert_array_equal(clf.universum_support_vectors_, X[clf.universum_support_])
    np.testing.assert_array_equal(clf.support_vectors_, X[clf.support_])
    expected = (
        rbf_kernel(X_test, clf.support_vectors_, gamma=0.5) @ clf.dual_coef_[0]
        + rbf_kernel(X_test, clf.universum_support_vectors_, gamma=0.5)
        @ clf.universum_dual_coef_[0]
        + clf.intercept_[0]
    )
    np.testing.assert_allclose(clf.decision_function(X_test), expected, atol=1e-12)


@pytest.mark.parametrize("with_universum", [False, True])
def test_zero_universum_cost_leaves_the_universum_out_of_the_dual(with_universum):
    """``C_universum=0`` is the plain SVM on the labelled trials (sklearn's ``SVC``), with or
    without universum trials: they add no variable, so ``solver="auto"`` chooses by the
    labelled dual alone (10 variables in 20 features: SMO)."""
    X, y, _ = _data(17, m=10, q=90, d=20)
    lab = y != UNIVERSUM
    data = (X, y) if with_universum else (X[lab], y[lab])
    clf = UniversumSVC(kernel="linear", C_universum=0.0, tol=1e-8).fit(*data)
    assert clf.solver_ == linear_solver(10, 20) == "smo"
    svc = SVC(kernel="linear", tol=1e-8).fit(X[lab], y[lab])
    # support_ indexes the trials of fit: SVC's support vectors, class by class
    np.testing.assert_array_equal(clf.support_, np.flatnonzero(lab)[svc.support_])
    np.testing.assert_allclose(clf.dual_coef_, svc.dual_coef_, atol=1e-6)
    assert clf.universum_support_.size == 0


def test_auto_solver_chooses_by_the_number_of_features():
    """40 labelled trials in 4 features: fewer features than variables, the interior point."""
    X, y, _ = _data(18, m=40, q=0, d=4)
    clf = UniversumSVC(kernel="linear").fit(X, y)
    assert clf.solver_ == linear_solver(40, 4) == "ipm"


@pytest.mark.parametrize("norm", [0.0, 0.5, 2.0])
def test_cone_tube_of_one_universum_trial_is_epsilon_times_its_norm(norm):
    """U_c-SVM: the tube of a universum trial ``z`` is ``ε √k(z, z)``; with one trial it is
    the plain U-SVM with ``ε‖z‖`` (linear kernel), including a trial at the origin (k = 0)."""
    X, y, X_test = _data(19, q=0)
    direction = np.linalg.lstsq(X, 2.0 * y - 1.0, rcond=None)[0]
    z = norm * direction / np.linalg.norm(direction)
    X_all = np.concatenate([X, z[None]])
    y_all = np.concatenate([y, [UNIVERSUM]])
    kw = {"kernel": "linear", "C_universum": 50.0, "tol": 1e-10}
    cone = UniversumSVC(cone=True, epsilon=0.3, **kw).fit(X_all, y_all)
    tube = UniversumSVC(epsilon=0.3 * norm, **kw).fit(X_all, y_all)
    np.testing.assert_allclose(
        cone.decision_function(X_test), tube.decision_function(X_test), atol=1e-7
    )


def test_cone_needs_a_non_negative_kernel_diagonal():
    X, y, _ = _data(20)
    with pytest.raises(ValueError, match=r"cone=True needs k\(z, z\) >= 0"):
        UniversumSVC(kernel="sigmoid", coef0=-3.0, gamma=0.01, cone=True).fit(X, y)


def test_dcd_default_cap_is_1000_passes():
    """``max_iter=-1`` caps DCD at 1000 passes (documented), reached on an ill-conditioned
    10 + 90 problem at a tolerance it cannot meet."""
    rng = np.random.default_rng(21)
    X = np.concatenate([rng.normal(size=(10, 20)), 10.0 * rng.normal(size=(90, 20))])
    y = np.concatenate([np.repeat([0, 1], 5), np.full(90, UNIVERSUM)])
    X[:10, 0] += 2.0 * y[:10] - 1.0
    clf = UniversumSVC(
        kernel="linear", solver="dcd", fit_intercept=False, tol=1e-12, random_state=0
    )
    with pytest.warns(ConvergenceWarning, match="max_iter=1000 passes"):
        clf.fit(X, y)
    assert clf.n_iter_ == 1000


def test_verbose_prints_the_solver_run(capsys):
    X, y, _ = _data(22)
    UniversumSVC(kernel="linear", solver="smo").fit(X, y)
    assert capsys.readouterr().out == ""
    with pytest.warns(ConvergenceWarning):
        clf = UniversumSVC(kernel="linear", solver="smo", max_iter=1, verbose=True).fit(X, y)
    assert clf.n_iter_ == 1
    out = capsys.readouterr().out
    assert out.startswith("UniversumSVC[smo]: 60 labelled, 25 universum trials, 1 iterations")
    assert out.rstrip().endswith("NOT converged")
    UniversumSVC(kernel="linear", solver="smo", verbose=True).fit(X, y)
    assert capsys.readouterr().out.rstrip().endswith(", converged")
