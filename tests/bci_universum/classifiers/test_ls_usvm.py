"""LeastSquaresUniversumSVC against closed forms and independent dense solves."""

import pickle
import warnings

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.exceptions import ConvergenceWarning
from sklearn.metrics.pairwise import rbf_kernel
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from bci_universum import UNIVERSUM
from bci_universum.classifiers.ls_usvm import LeastSquaresUniversumSVC, solve_ls_usvm


def _problem(seed=0, m=30, q=20, d=4):
    rng = np.random.default_rng(seed)
    y = np.where(np.arange(m) % 2 == 0, 1, -1)
    X = rng.normal(size=(m, d)) + 1.2 * y[:, None] * np.eye(d)[0]
    Z = rng.normal(scale=0.7, size=(q, d))
    return X, y, Z


def _with_universum(X, y, Z):
    return np.vstack([X, Z]), np.concatenate([y, np.full(len(Z), UNIVERSUM)])


def _ls_svm_reference(K, y, C):
    """Plain LS-SVM: numpy solve of [0 1ᵀ; 1 K + I/C] [b; α] = [0; y]."""
    n = len(y)
    A = np.zeros((n + 1, n + 1))
    A[0, 1:] = A[1:, 0] = 1.0
    A[1:, 1:] = K + np.eye(n) / C
    sol = np.linalg.solve(A, np.concatenate([[0.0], y]))
    return sol[1:], sol[0]


@pytest.mark.parametrize("kernel", ["linear", "rbf", "poly"])
def test_optimality_identities(kernel):
    X, y, Z = _problem()
    C, C_u = 3.0, 0.7
    clf = LeastSquaresUniversumSVC(C=C, C_universum=C_u, kernel=kernel, gamma=0.3)
    clf.fit(*_with_universum(X, y, Z))
    alpha = clf.dual_coef_[0]
    m = len(X)
    assert alpha.shape == (m + len(Z),)
    np.testing.assert_allclose(alpha[:m], C * (y - clf.decision_function(X)), atol=1e-10)
    np.testing.assert_allclose(alpha[m:], -C_u * clf.decision_function(Z), atol=1e-10)
    assert abs(alpha.sum()) < 1e-10


def test_matches_dense_bordered_solve_rbf():
    X, y, Z = _problem(seed=1)
    C, C_u, gamma = 10.0, 2.0, 0.2
    clf = LeastSquaresUniversumSVC(C=C, C_universum=C_u, gamma=gamma)
    clf.fit(*_with_universum(X, y, Z))
    P = np.vstack([X, Z])
    n, m = len(P), len(X)
    A = np.zeros((n + 1, n + 1))
    A[0, 1:] = A[1:, 0] = 1.0
    A[1:, 1:] = rbf_kernel(P, gamma=gamma) + np.diag(
        np.r_[np.full(m, 1 / C), np.full(n - m, 1 / C_u)]
    )
    sol = np.linalg.solve(A, np.concatenate([[0.0], y, np.zeros(n - m)]))
    np.testing.assert_allclose(clf.dual_coef_[0], sol[1:], atol=1e-8)
    assert clf.intercept_[0] == pytest.approx(sol[0], abs=1e-8)


def test_linear_kernel_equals_primal_ridge_solve():
    """Closed form (2.20) vs the primal (2.17) solved by its normal equations."""
    X, y, Z = _problem(seed=2, d=6)
    C, C_u = 5.0, 1.5
    clf = LeastSquaresUniversumSVC(C=C, C_universum=C_u, kernel="linear")
    clf.fit(*_with_universum(X, y, Z))
    Phi = np.hstack([np.vstack([X, Z]), np.ones((len(X) + len(Z), 1))])
    W = np.diag(np.r_[np.full(len(X), C), np.full(len(Z), C_u)])
    R = np.eye(Phi.shape[1])
    R[-1, -1] = 0.0  # the offset is not regularised
    t = np.r_[y, np.zeros(len(Z))]
    theta = np.linalg.solve(R + Phi.T @ W @ Phi, Phi.T @ W @ t)
    np.testing.assert_allclose(clf.coef_[0], theta[:-1], atol=1e-8)
    assert clf.intercept_[0] == pytest.approx(theta[-1], abs=1e-8)
    Xt = np.random.default_rng(9).normal(size=(15, X.shape[1]))
    np.testing.assert_allclose(clf.decision_function(Xt), Xt @ theta[:-1] + theta[-1], atol=1e-8)


@pytest.mark.parametrize("with_universum", [True, False])
def test_zero_universum_weight_is_plain_ls_svm(with_universum):
    X, y, Z = _problem(seed=3)
    gamma, C = 0.25, 4.0
    clf = LeastSquaresUniversumSVC(C=C, C_universum=0.0 if with_universum else 1.0, gamma=gamma)
    clf.fit(*(_with_universum(X, y, Z) if with_universum else (X, y)))
    alpha, b = _ls_svm_reference(rbf_kernel(X, gamma=gamma), y, C)
    np.testing.assert_allclose(clf.dual_coef_[0], alpha, atol=1e-10)
    assert clf.intercept_[0] == pytest.approx(b, abs=1e-10)
    assert clf.n_universum_ == 0
    np.testing.assert_array_equal(clf.support_vectors_, X)


def test_converges_to_ls_svm_as_universum_weight_vanishes():
    X, y, Z = _problem(seed=4, d=5)
    C = 2.0
    w_ls = LeastSquaresUniversumSVC(C=C, C_universum=0.0, kernel="linear").fit(X, y).coef_[0]
    gaps = []
    for C_u in (1e-3, 1e-6, 1e-9):
        clf = LeastSquaresUniversumSVC(C=C, C_universum=C_u, kernel="linear")
        gaps.append(np.linalg.norm(clf.fit(*_with_universum(X, y, Z)).coef_[0] - w_ls))
    # ‖w − w_LS‖ shrinks in proportion to C_U (notes §5: 1.4e−4, 1.4e−7, 1.4e−10).
    assert gaps[0] > 0
    assert gaps[1] < 1e-2 * gaps[0] and gaps[2] < 1e-2 * gaps[1]
    assert gaps[2] < 1e-8


def test_universum_pulls_decision_values_towards_zero():
    X, y, Z = _problem(seed=5)
    Xy = _with_universum(X, y, Z)
    mean_abs = [
        np.abs(
            LeastSquaresUniversumSVC(C=1.0, C_universum=c_u).fit(*Xy).decision_function(Z)
        ).mean()
        for c_u in (0.0, 1.0, 100.0)
    ]
    assert mean_abs[0] > mean_abs[1] > mean_abs[2]


def test_non_psd_kernel_still_solves_the_system():
    X, y, Z = _problem(seed=6)
    C, C_u = 50.0, 50.0
    clf = LeastSquaresUniversumSVC(C=C, C_universum=C_u, kernel=lambda A, B: -(A @ B.T))
    clf.fit(*_with_universum(X, y, Z))
    alpha = clf.dual_coef_[0]
    np.testing.assert_allclose(alpha[: len(X)], C * (y - clf.decision_function(X)), atol=1e-8)
    np.testing.assert_allclose(alpha[len(X) :], -C_u * clf.decision_function(Z), atol=1e-8)


def test_singular_system_is_rejected():
    """K + I/C = diag(1, −1): 1ᵀ(K + I/C)⁻¹1 = 0, the offset's equation has no solution."""
    K = np.diag([0.0, -2.0])
    with pytest.raises(ValueError, match="system is singular"):
        LeastSquaresUniversumSVC(C=1.0, kernel="precomputed").fit(K, [0, 1])
    # Singular up to one rounding: K + diag(ridge) = s·diag(1, −(1 + 2⁻⁵²)), for which
    # 1ᵀ(K + D)⁻¹1 / Σ|(K + D)⁻¹1| = 2⁻⁵³ (round-off), is rejected whatever the scale s.
    for scale in (2.0**-20, 1.0, 2.0**20):
        K = scale * np.diag([0.0, -1.5 - 2.0**-52])
        with pytest.raises(ValueError, match="system is singular"):
            solve_ls_usvm(K, np.array([-1.0, 1.0]), scale * np.array([1.0, 0.5]))


def test_an_inaccurate_solve_at_a_huge_cost_is_reported():
    """A linear kernel over many more trials than features is rank-deficient: with C = 1e13
    only the ridge 1e-13 holds the system together and double precision loses the
    coefficients (checked against the primal ridge regression). A ConvergenceWarning names
    the cost; at C = 1e6 the solve is exact and silent."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(80, 3))
    y = (X[:, 0] > 0).astype(int)

    def primal(C):  # min ½‖w‖² + (C/2) Σ (t − wᵀx − b)²: normal equations in (w, b)
        A = np.c_[X, np.ones(len(X))]
        H = C * A.T @ A
        H[:3, :3] += np.eye(3)
        return np.linalg.solve(H, C * A.T @ (2.0 * y - 1.0))

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        exact = LeastSquaresUniversumSVC(kernel="linear", C=1e6, C_universum=0).fit(X, y)
    np.testing.assert_allclose(exact.coef_[0], primal(1e6)[:3], rtol=1e-6)
    with warnings.catch_warnings():  # relative residual ~2e-5: below the 1e-4 that warns
        warnings.simplefilter("error")
        close = LeastSquaresUniversumSVC(kernel="linear", C=1e10, C_universum=0).fit(X, y)
    np.testing.assert_allclose(close.coef_[0], primal(1e10)[:3], atol=1e-4)
    with pytest.warns(ConvergenceWarning, match=r"max\(C, C_universum\) = 1e\+13.*Lower C"):
        huge = LeastSquaresUniversumSVC(kernel="linear", C=1e13, C_universum=0).fit(X, y)
    assert np.abs(huge.coef_[0] - primal(1e13)[:3]).max() > 1e-3


def test_string_labels_and_universum_forms_agree():
    X, y, Z = _problem(seed=7)
    names = np.where(y > 0, "right", "left")
    y_str = np.concatenate([names, np.full(len(Z), "universum")]).astype(object)
    via_label = LeastSquaresUniversumSVC().fit(np.vstack([X, Z]), y_str)
    via_argument = LeastSquaresUniversumSVC().fit(X, names, X_universum=Z)
    custom = LeastSquaresUniversumSVC(universum_label="rest")
    custom.fit(np.vstack([X, Z]), np.concatenate([names, np.full(len(Z), "rest")]))
    assert list(via_label.classes_) == ["left", "right"]
    Xt = np.random.default_rng(1).normal(size=(10, X.shape[1]))
    for other in (via_argument, custom):
        np.testing.assert_allclose(other.decision_function(Xt), via_label.decision_function(Xt))
    scores = via_label.decision_function(X)
    np.testing.assert_array_equal(via_label.predict(X), np.where(scores > 0, "right", "left"))
    assert via_label.support_[-1] == len(X) + len(Z) - 1
    assert (via_argument.support_[len(X) :] == -1).all()


def test_precomputed_kernel_matches_rbf():
    X, y, Z = _problem(seed=8)
    Xy = _with_universum(X, y, Z)
    order = np.random.default_rng(0).permutation(len(Xy[1]))
    P, labels = Xy[0][order], Xy[1][order]
    Xt = np.random.default_rng(2).normal(size=(12, X.shape[1]))
    rbf = LeastSquaresUniversumSVC(C=3.0, C_universum=2.0, gamma=0.4).fit(P, labels)
    pre = LeastSquaresUniversumSVC(C=3.0, C_universum=2.0, kernel="precomputed")
    pre.fit(rbf_kernel(P, gamma=0.4), labels)
    K_test = rbf_kernel(Xt, P, gamma=0.4)
    np.testing.assert_allclose(
        pre.decision_function(K_test), rbf.decision_function(Xt), atol=1e-10
    )
    # the single-trial path of the online decoder, on kernel rows and on raw trials
    np.testing.assert_allclose([pre.decision_trial(k) for k in K_test], rbf.decision_function(Xt))
    np.testing.assert_allclose([rbf.decision_trial(x) for x in Xt], rbf.decision_function(Xt))


def test_clone_pickle_pipeline():
    X, y, Z = _problem(seed=9)
    Xy = _with_universum(X, y, Z)
    clf = LeastSquaresUniversumSVC(C=2.0, C_universum=0.5).fit(*Xy)
    restored = pickle.loads(pickle.dumps(clf))
    np.testing.assert_array_equal(restored.decision_function(X), clf.decision_function(X))
    fresh = clone(clf)
    assert fresh.get_params() == clf.get_params() and not hasattr(fresh, "dual_coef_")
    pipe = make_pipeline(StandardScaler(), LeastSquaresUniversumSVC(C=2.0, C_universum=0.5))
    pipe.fit(*Xy)
    assert pipe.score(*Xy) == pipe.score(X, y)  # universum trials are not scored
    assert pipe.score(X, y) > 0.8


def _bad_input_cases():
    X, y, Z = _problem()
    Xu, yu = _with_universum(X, y, Z)
    X_nan = Xu.copy()
    X_nan[3, 1] = np.nan
    X_inf = Xu.copy()
    X_inf[0, 0] = np.inf
    three = yu.copy()
    three[:3] = 7
    return [
        ({}, X_nan, yu, "NaN"),
        ({}, X_inf, yu, "infinity"),
        ({}, Xu[:, 0], yu, "2D array"),
        ({}, Xu, yu[:-1], "inconsistent numbers of samples"),
        ({}, Xu, np.where(yu == UNIVERSUM, UNIVERSUM, 1), "(single|one) class"),
        ({}, Xu, np.full(len(yu), UNIVERSUM), "universum label"),
        ({}, Xu, three, "Only binary classification is supported"),
        ({"C": -1.0}, Xu, yu, "'C' parameter of LeastSquaresUniversumSVC"),
        ({"C": 0}, Xu, yu, "'C' parameter"),
        ({"C_universum": -0.5}, Xu, yu, "'C_universum' parameter"),
        ({"C_universum": np.inf}, Xu, yu, "'C_universum' parameter .* Got inf"),
        ({"kernel": "laplacian"}, Xu, yu, "'kernel' parameter .* Got 'laplacian'"),
        ({"gamma": -1.0}, Xu, yu, "'gamma' parameter"),
        ({"kernel": "precomputed"}, Xu, yu, "square kernel matrix"),
    ]


@pytest.mark.parametrize(("params", "X", "y", "match"), _bad_input_cases())
def test_bad_input_is_rejected(params, X, y, match):
    with pytest.raises(ValueError, match=match):
        LeastSquaresUniversumSVC(**params).fit(X, y)


def test_bad_predict_input_is_rejected():
    X, y, Z = _problem()
    clf = LeastSquaresUniversumSVC().fit(*_with_universum(X, y, Z))
    with pytest.raises(ValueError, match="features"):
        clf.decision_function(X[:, :2])
    with pytest.raises(ValueError, match="NaN"):
        clf.predict(np.full((2, X.shape[1]), np.nan))
    with pytest.raises(ValueError, match="X_universum cannot be used"):
        LeastSquaresUniversumSVC(kernel="precomputed").fit(X @ X.T, y, X_universum=Z)


def test_scale_gamma_uses_labelled_trials_only():
    X, y, Z = _problem(seed=10)
    Z = 5.0 * Z  # a universum with another variance must not change the kernel
    clf = LeastSquaresUniversumSVC(C_universum=0.0).fit(*_with_universum(X, y, Z))
    assert clf.gamma_ == pytest.approx(1.0 / (X.shape[1] * X.var()))
    plain = LeastSquaresUniversumSVC().fit(X, y)
    np.testing.assert_allclose(clf.decision_function(Z), plain.decision_function(Z), atol=1e-12)
