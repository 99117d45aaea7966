"""Universum-indifference LR and LDA against scikit-learn and a generic optimiser (scipy)."""

import warnings

import numpy as np
import pytest
import scipy.linalg
from scipy.optimize import brentq, minimize
from scipy.special import expit
from sklearn.covariance import ledoit_wolf_shrinkage
from sklearn.discriminant_analysis import LinearDiscriminantAnalysis
from sklearn.exceptions import ConvergenceWarning
from sklearn.linear_model import LogisticRegression
from sklearn.utils.estimator_checks import parametrize_with_checks

from bci_universum import UNIVERSUM
from bci_universum.classifiers import UniversumLDA, UniversumLogisticRegression
from bci_universum.classifiers.indifference import (
    _ledoit_wolf_gram,
    _newton,
    universum_logistic_objective,
)


def _problem(seed=0, m=40, q=30, d=5):
    rng = np.random.default_rng(seed)
    y = np.where(np.arange(m) % 2 == 0, 1, -1)
    X = rng.normal(size=(m, d)) + 0.8 * y[:, None] * np.eye(d)[0]
    # The universum varies along a nuisance direction that also separates the classes a bit.
    Z = rng.normal(scale=0.5, size=(q, d)) + rng.normal(scale=2.0, size=(q, 1)) * np.eye(d)[1]
    X[:, 1] += 0.3 * y + rng.normal(scale=2.0, size=m)
    return X, y, Z


def _with_universum(X, y, Z):
    return np.vstack([X, Z]), np.concatenate([y, np.full(len(Z), UNIVERSUM)])


@pytest.mark.parametrize("penalty", ["decision", "covariance"])
def test_lr_matches_scipy_minimiser(penalty):
    X, y, Z = _problem()
    C, C_u = 2.0, 0.5
    clf = UniversumLogisticRegression(C=C, C_universum=C_u, penalty=penalty)
    clf.fit(*_with_universum(X, y, Z))

    def f(theta):
        return universum_logistic_objective(theta[:-1], theta[-1], X, y, Z, C, C_u, penalty)

    ref = minimize(f, np.zeros(X.shape[1] + 1), method="BFGS", options={"gtol": 1e-10})
    np.testing.assert_allclose(clf.coef_[0], ref.x[:-1], atol=1e-5)
    assert clf.intercept_[0] == pytest.approx(ref.x[-1], abs=1e-5)
    assert f(np.r_[clf.coef_[0], clf.intercept_]) <= ref.fun + 1e-9
    assert clf.n_universum_ == len(Z)


@pytest.mark.parametrize("scale", [1.0, 1e-3])
def test_lr_without_universum_is_sklearn_logistic_regression(scale):
    """Also on features of small scale (powers in V², say): the span keeps every direction."""
    X, y, Z = _problem(seed=1)
    X, Z, C = scale * X, scale * Z, 0.3 / scale**2
    ours = UniversumLogisticRegression(C=C, C_universum=0.0).fit(*_with_universum(X, y, Z))
    ref = LogisticRegression(C=C, solver="newton-cholesky", tol=1e-12, max_iter=1000).fit(X, y)
    np.testing.assert_allclose(ours.coef_ * scale, ref.coef_ * scale, atol=1e-6)
    np.testing.assert_allclose(ours.intercept_, ref.intercept_, atol=1e-6)
    assert ours.n_universum_ == 0
    np.testing.assert_allclose(ours.predict_proba(X), ref.predict_proba(X), atol=1e-8)
    np.testing.assert_allclose(ours.predict_log_proba(X), ref.predict_log_proba(X), atol=1e-8)


def test_lr_high_dimensional_span_solution_matches_scipy():
    """More features than trials (tangent space of many channels): solved in the trials' span."""
    X, y, Z = _problem(seed=2, m=12, q=8, d=60)
    clf = UniversumLogisticRegression(C=1.0, C_universum=2.0).fit(*_with_universum(X, y, Z))

    def f(theta):
        return universum_logistic_objective(theta[:-1], theta[-1], X, y, Z, 1.0, 2.0)

    ref = minimize(f, np.zeros(61), method="L-BFGS-B", options={"gtol": 1e-12, "ftol": 1e-15})
    assert f(np.r_[clf.coef_[0], clf.intercept_]) <= ref.fun + 1e-9
    np.testing.assert_allclose(clf.coef_[0], ref.x[:-1], atol=1e-4)


def test_lr_universum_pulls_its_decision_values_to_zero():
    X, y, Z = _problem(seed=3)
    values = [
        np.abs(UniversumLogisticRegression(C_universum=c).fit(*_with_universum(X, y, Z))
               .decision_function(Z)).mean()
        for c in (0.0, 0.1, 10.0)
    ]  # fmt: skip
    assert values[0] > values[1] > values[2]


def test_lda_without_universum_is_sklearn_lda():
    X, y, Z = _problem(seed=4)
    keep = (y > 0) | (np.arange(len(y)) < 20)  # 20 vs 10 trials: the priors enter the threshold
    X, y = X[keep], y[keep]
    for shrinkage in ("auto", 0.3, None):
        ours = UniversumLDA(C_universum=0.0, shrinkage=shrinkage).fit(*_with_universum(X, y, Z))
        ref = LinearDiscriminantAnalysis(solver="lsqr", shrinkage=shrinkage).fit(X, y)
        np.testing.assert_allclose(ours.coef_, ref.coef_, rtol=1e-8, atol=1e-10)
        np.testing.assert_allclose(ours.intercept_, ref.intercept_, rtol=1e-8, atol=1e-10)
        np.testing.assert_allclose(ours.decision_function(X), ref.decision_function(X), atol=1e-8)
        np.testing.assert_allclose(ours.predict_proba(X), ref.predict_proba(X), atol=1e-8)
        np.testing.assert_allclose(ours.predict_log_proba(X), ref.predict_log_proba(X), atol=1e-8)


def test_lda_direction_maximises_generalised_rayleigh_quotient():
    """Closed form vs a generic optimiser of (wᵀΔμ)² / wᵀ(Σ_W + C_U Σ_U)w."""
    X, y, Z = _problem(seed=5)
    C_u = 0.7
    clf = UniversumLDA(C_universum=C_u, shrinkage=None).fit(*_with_universum(X, y, Z))
    diff = X[y == 1].mean(0) - X[y == -1].mean(0)
    S = 0.5 * np.cov(X[y == 1].T, bias=True) + 0.5 * np.cov(X[y == -1].T, bias=True)
    S += C_u * np.cov(Z.T, bias=True)

    def neg_quotient(w):
        return -((w @ diff) ** 2) / (w @ S @ w)

    ref = minimize(neg_quotient, np.ones(X.shape[1]), method="BFGS", options={"gtol": 1e-12})
    w, r = clf.coef_[0], ref.x
    cosine = abs(w @ r) / np.linalg.norm(w) / np.linalg.norm(r)
    assert cosine == pytest.approx(1.0, abs=1e-6)
    assert neg_quotient(w) <= ref.fun + 1e-9
    # Threshold halfway between the projected class means (equal priors here).
    means = [X[y == c].mean(0) @ w for c in (-1, 1)]
    assert clf.intercept_[0] == pytest.approx(-0.5 * sum(means))


def test_lda_universum_damps_the_nuisance_direction():
    X, y, Z = _problem(seed=6)
    plain = UniversumLDA(C_universum=0.0).fit(*_with_universum(X, y, Z))
    damped = UniversumLDA(C_universum=5.0).fit(*_with_universum(X, y, Z))
    share = [abs(m.coef_[0, 1]) / np.linalg.norm(m.coef_[0]) for m in (plain, damped)]
    assert share[1] < share[0]


@pytest.mark.parametrize("cls", [UniversumLogisticRegression, UniversumLDA])
def test_string_labels_and_predict(cls):
    X, y, Z = _problem(seed=7)
    labels = np.where(y > 0, "right", "left").astype(object)
    X_all = np.vstack([X, Z])
    y_all = np.concatenate([labels, np.full(len(Z), "universum", dtype=object)])
    clf = cls().fit(X_all, y_all)
    assert list(clf.classes_) == ["left", "right"]
    scores = clf.decision_function(X)
    np.testing.assert_array_equal(clf.predict(X), np.where(scores > 0, "right", "left"))
    assert clf.decision_trial(X[0]) == pytest.approx(scores[0])
    assert 0.5 < clf.score(X_all, y_all) <= 1.0


def test_bad_parameters_named():
    X, y, _ = _problem()
    with pytest.raises(ValueError, match="max_iter"):
        UniversumLogisticRegression(max_iter=0).fit(X, y)
    with pytest.raises(ValueError, match="C_universum"):
        UniversumLogisticRegression(C_universum=-1).fit(X, y)
    with pytest.raises(ValueError, match="penalty"):
        UniversumLogisticRegression(penalty="l1").fit(X, y)
    with pytest.raises(ValueError, match="shrinkage"):
        UniversumLDA(shrinkage=2.0).fit(X, y)
    with pytest.raises(ValueError, match="shrinkage"):
        UniversumLDA(shrinkage=-0.5).fit(X, y)
    with pytest.raises(ValueError, match="online_universum"):
        UniversumLogisticRegression(online_universum=-1).fit(X, y)


@parametrize_with_checks([UniversumLogisticRegression(), UniversumLDA()])
def test_sklearn_compatible(estimator, check):
    check(estimator)


def test_lr_reports_hitting_the_iteration_cap():
    """``n_iter_`` Newton steps reach the optimum: a cap of ``n_iter_`` does not warn, one
    step fewer does and leaves the objective higher."""
    X, y, Z = _problem(seed=4)
    with pytest.warns(ConvergenceWarning, match="max_iter=1 "):
        capped = UniversumLogisticRegression(max_iter=1).fit(*_with_universum(X, y, Z))
    assert capped.n_iter_ == 1
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        converged = UniversumLogisticRegression().fit(*_with_universum(X, y, Z))
        k = converged.n_iter_
        assert 1 < k < 100
        exact = UniversumLogisticRegression(max_iter=k).fit(*_with_universum(X, y, Z))
    np.testing.assert_array_equal(exact.coef_, converged.coef_)
    with pytest.warns(ConvergenceWarning, match=f"max_iter={k - 1} "):
        short = UniversumLogisticRegression(max_iter=k - 1).fit(*_with_universum(X, y, Z))
    assert short.n_iter_ == k - 1

    def f(model):
        return universum_logistic_objective(model.coef_[0], model.intercept_[0], X, y, Z, 1, 1)

    assert f(short) > f(converged)


@pytest.mark.parametrize(("C", "penalty"), [(1.0, "decision"), (10.0, "covariance")])
def test_lr_first_iteration_is_one_damped_newton_step(C, penalty):
    """``max_iter=1`` is one Newton step from 0 on the objective's gradient and Hessian
    (closed forms of the logistic loss at 0, where every σ is ½), with the documented
    backtracking: the largest of 1, ½, ¼, ... that decreases f by 10⁻⁴ of the prediction."""
    X, y, Z = _problem(seed=12)
    C_u = 0.5
    U = Z if penalty == "decision" else Z - Z.mean(axis=0)
    A = np.hstack([X, np.ones((len(X), 1))])
    Au = np.hstack([U, np.full((len(U), 1), float(penalty == "decision"))])
    grad = -0.5 * C * A.T @ y
    hessian = np.diag(np.r_[np.ones(X.shape[1]), 0.0]) + 0.25 * C * A.T @ A
    hessian += 2.0 * C_u * Au.T @ Au
    step = np.linalg.solve(hessian, grad)

    def f(theta):
        return universum_logistic_objective(theta[:-1], theta[-1], X, y, Z, C, C_u, penalty)

    t = 1.0
    while f(-t * step) > f(0 * step) - 1e-4 * t * (grad @ step):
        t /= 2
    model = UniversumLogisticRegression(C=C, C_universum=C_u, penalty=penalty, max_iter=1)
    with pytest.warns(ConvergenceWarning):
        model.fit(*_with_universum(X, y, Z))
    np.testing.assert_allclose(np.r_[model.coef_[0], model.intercept_], -t * step, rtol=1e-9)
    assert model.n_iter_ == 1


def test_newton_backtracks_from_a_saturated_start():
    """Far on the wrong side, every σ(−m) rounds to 1 and p(1 − p) to 0: the offset's Hessian
    is the tiny ridge alone, the full Newton step overshoots (the loss is linear there) and is
    halved, and Newton still ends at the optimum (scipy's). A step that does not decrease f
    is halved too."""
    Z = np.array([[1.0, 0.0], [-1.0, 0.0]])
    y = np.array([1.0, -1.0])
    C, none = 100.0, np.zeros((0, 2))

    def f(theta):
        return universum_logistic_objective(theta[:-1], theta[-1], Z, y, none, C, 0.0)

    start = np.array([-50.0, 0.0, 0.0])  # margins −50: σ(50) is 1.0 in floating point
    # gradient (−50 − 2C, 0, 0), Hessian diag(1, 1, 0): the Newton step goes to v₁ = 2C
    full, half = np.array([2 * C, 0.0, 0.0]), np.array([C - 25.0, 0.0, 0.0])
    assert f(full) > f(start) and f(half) < f(start)
    with pytest.warns(ConvergenceWarning):
        v, b, n_iter = _newton(Z, y, none, C, 0.0, True, 1e-8, 1, start)
    np.testing.assert_allclose(np.r_[v, b], half, rtol=1e-12)
    assert n_iter == 1
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        v, b, _ = _newton(Z, y, none, C, 0.0, True, 1e-8, 100, start)
    ref = minimize(f, np.zeros(3), method="BFGS", options={"gtol": 1e-10})
    np.testing.assert_allclose(np.r_[v, b], ref.x, atol=1e-6)
    # Along v₁ (offset 0 and v₂ = 0 by symmetry) f is g(v) = ½v² + 2C log(1 + e^{−v}).

    def g(v):
        return f(np.array([v, 0.0, 0.0]))

    def newton_step(v):  # g'(v) / g''(v) and the predicted decrease g'(v)² / g''(v)
        curvature = 1 + 2 * C * expit(v) * expit(-v)
        step = (v - 2 * C * expit(-v)) / curvature
        return step, step**2 * curvature

    def one_iteration(v):
        with pytest.warns(ConvergenceWarning):
            v, b, _ = _newton(Z, y, none, C, 0.0, True, 1e-8, 1, np.array([v, 0.0, 0.0]))
        return np.r_[v, b]

    # The offset's Hessian is the 1e-12 ridge alone: its step is the rounding of its gradient
    # magnified 1e12, zero by symmetry up to ~1e-8 depending on the machine's BLAS kernels.
    # From v₀, the full step leaves g unchanged: it is not taken either, the halved one is.
    v0 = brentq(lambda v: g(v - newton_step(v)[0]) - g(v), -50.0, 0.0)
    expected = [v0 - newton_step(v0)[0] / 2, 0, 0]
    np.testing.assert_allclose(one_iteration(v0), expected, rtol=1e-9, atol=1e-6)
    # From v₁, the halved step decreases g by 10⁻⁴ of the full step's prediction: twice the
    # 10⁻⁴ · ½ asked of it, so it is taken (not halved again).
    v1 = brentq(lambda v: g(v - newton_step(v)[0] / 2) - g(v) + 1e-4 * newton_step(v)[1], -50, -10)
    assert g(v1 - newton_step(v1)[0]) > g(v1)
    expected = [v1 - newton_step(v1)[0] / 2, 0, 0]
    np.testing.assert_allclose(one_iteration(v1), expected, rtol=1e-9, atol=1e-6)


def test_newton_from_a_saturated_start_with_unbalanced_classes():
    """Saturated as above, with two trials of one class and one of the other: the offset's
    gradient is −C, held by the 1e-12 ridge alone, so the Newton step moves it by 1e14; the
    step is halved until it decreases f (about 47 times) and Newton ends at scipy's optimum."""
    Z = np.array([[1.0, 0.0], [1.0, 0.0], [-1.0, 0.0]])
    y = np.array([1.0, 1.0, -1.0])
    C, none = 100.0, np.zeros((0, 2))

    def f(theta):
        return universum_logistic_objective(theta[:-1], theta[-1], Z, y, none, C, 0.0)

    start = np.array([-50.0, 0.0, 0.0])
    with pytest.warns(ConvergenceWarning):
        v, b, _ = _newton(Z, y, none, C, 0.0, True, 1e-8, 1, start)
    assert f(np.r_[v, b]) < f(start)
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        v, b, _ = _newton(Z, y, none, C, 0.0, True, 1e-8, 100, start)
    ref = minimize(f, np.zeros(3), method="BFGS", options={"gtol": 1e-10})
    np.testing.assert_allclose(np.r_[v, b], ref.x, atol=1e-6)


@pytest.mark.parametrize(("penalty", "online_universum"), [("decision", 1), ("covariance", 2)])
def test_lr_update_is_the_fit_with_the_newest_windows_in_the_universum(penalty, online_universum):
    """``update(x)`` = ``fit`` with the newest ``online_universum`` windows added to the
    universum (the warm start changes the path, not the optimum)."""
    X, y, Z = _problem(seed=13)
    rest = np.random.default_rng(13).normal(size=(3, X.shape[1])) + 3.0 * np.eye(5)[2]
    params = {"C_universum": 1.0, "penalty": penalty}
    assert not hasattr(UniversumLogisticRegression(**params), "update")
    model = UniversumLogisticRegression(online_universum=online_universum, **params)
    model.fit(*_with_universum(X, y, Z))
    assert model.universum_online_.shape == (0, X.shape[1])
    for k in range(len(rest)):
        model.update(rest[k])
        newest = rest[max(0, k + 1 - online_universum) : k + 1]
        scratch = UniversumLogisticRegression(**params).fit(
            *_with_universum(X, y, np.vstack([Z, newest]))
        )
        np.testing.assert_array_equal(model.universum_online_, newest)
        assert model.n_universum_ == scratch.n_universum_ == len(Z) + len(newest)
        np.testing.assert_allclose(model.coef_, scratch.coef_, atol=1e-7)
        np.testing.assert_allclose(model.intercept_, scratch.intercept_, atol=1e-7)
    with pytest.raises(ValueError, match=r"shape \(5,\)"):
        model.update(rest[0, :4])
    with pytest.raises(ValueError, match="finite"):
        model.update(np.full(5, np.nan))
    np.testing.assert_array_equal(model.universum_online_, newest)  # rejected: unchanged


def test_lr_stops_at_machine_precision_not_at_the_cap():
    """A gradient tolerance below the rounding floor (as tol=1e-8 is on tangent-space
    features with C = 1–10) ends at the Newton decrement's floor in a few iterations."""
    from sklearn.exceptions import ConvergenceWarning

    X, y, Z = _problem(seed=5)
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        model = UniversumLogisticRegression(C=10.0, tol=1e-300).fit(*_with_universum(X, y, Z))
    assert model.n_iter_ < 20
    reference = UniversumLogisticRegression(C=10.0).fit(*_with_universum(X, y, Z))
    np.testing.assert_allclose(model.coef_, reference.coef_, rtol=1e-9)


@pytest.mark.parametrize("penalty", ["decision", "covariance"])
def test_lr_fit_grid_matches_scipy_at_every_grid_point(penalty):
    """Warm-started, span-sharing fits of a grid = the scipy minimiser point by point."""
    X, y, Z = _problem(seed=8)
    grid = [{"C": C, "C_universum": c} for C in (0.1, 10.0) for c in (0.0, 0.01, 1.0)]
    models = UniversumLogisticRegression(penalty=penalty).fit_grid(*_with_universum(X, y, Z), grid)
    for model, point in zip(models, grid, strict=True):
        assert (model.C, model.C_universum) == (point["C"], point["C_universum"])

        def f(theta, C=point["C"], c=point["C_universum"]):
            return universum_logistic_objective(theta[:-1], theta[-1], X, y, Z, C, c, penalty)

        ref = minimize(f, np.zeros(X.shape[1] + 1), method="BFGS", options={"gtol": 1e-10})
        assert f(np.r_[model.coef_[0], model.intercept_]) <= ref.fun + 1e-9
        np.testing.assert_allclose(model.coef_[0], ref.x[:-1], atol=1e-5)
        alone = UniversumLogisticRegression(penalty=penalty, **point)
        alone.fit(*_with_universum(X, y, Z))
        np.testing.assert_allclose(model.coef_, alone.coef_, rtol=1e-7, atol=1e-9)
        np.testing.assert_array_equal(model.predict(X), alone.predict(X))
        assert model.n_features_in_ == alone.n_features_in_
        assert model.n_universum_ == (len(Z) if point["C_universum"] else 0)
    # warm starts: later points of a path need fewer Newton steps than a cold start
    cold = UniversumLogisticRegression(penalty=penalty, C=10.0, C_universum=1.0)
    assert models[-1].n_iter_ < cold.fit(*_with_universum(X, y, Z)).n_iter_


def test_lr_fit_grid_with_and_without_universum_in_high_dimension():
    """More features than trials: the models with a universum (one trial is enough) are
    solved in the span of all trials, the one without in the labelled trials' span; each is
    the scipy minimiser."""
    X, y, Z = _problem(seed=14, m=12, q=1, d=30)
    grid = [{"C_universum": 0.0}, {"C_universum": 2.0}]
    models = UniversumLogisticRegression().fit_grid(*_with_universum(X, y, Z), grid)
    for model, point in zip(models, grid, strict=True):

        def f(theta, c=point["C_universum"]):
            return universum_logistic_objective(theta[:-1], theta[-1], X, y, Z, 1.0, c)

        ref = minimize(f, np.zeros(31), method="L-BFGS-B", options={"gtol": 1e-12, "ftol": 1e-15})
        assert f(np.r_[model.coef_[0], model.intercept_]) <= ref.fun + 1e-9
        np.testing.assert_allclose(model.coef_[0], ref.x[:-1], atol=1e-4)


def _lda_reference(X, y, Z, weights, shrinkage):
    """scikit-learn's LDA and the direction (Σ_W + c Σ_U)⁻¹Δμ for each weight c, with Σ_W the
    LDA's covariance, solved densely."""
    sk = LinearDiscriminantAnalysis(solver="lsqr", shrinkage=shrinkage, store_covariance=True)
    S_W = sk.fit(X, y).covariance_
    diff = X[y == 1].mean(0) - X[y == -1].mean(0)
    return sk, [np.linalg.solve(S_W + c * np.cov(Z.T, bias=True), diff) for c in weights]


@pytest.mark.parametrize("shrinkage", ["auto", 0.3, None])
def test_lda_fit_grid_is_a_direct_solve_per_weight(shrinkage):
    """One factorisation for the grid = (Σ_W + c Σ_U)⁻¹Δμ solved directly for each c, with
    Σ_W scikit-learn's LDA covariance."""
    X, y, Z = _problem(seed=9)
    weights = [0.0, 0.01, 0.1, 1.0, 100.0]
    models = UniversumLDA(shrinkage=shrinkage).fit_grid(
        *_with_universum(X, y, Z), [{"C_universum": c} for c in weights]
    )
    sk, directions = _lda_reference(X, y, Z, weights, shrinkage)
    for model, c, w in zip(models, weights, directions, strict=True):
        np.testing.assert_allclose(model.coef_[0], w, rtol=1e-9, atol=1e-12)
        alone = UniversumLDA(C_universum=c, shrinkage=shrinkage).fit(*_with_universum(X, y, Z))
        np.testing.assert_allclose(model.decision_function(X), alone.decision_function(X))
        np.testing.assert_array_equal(model.predict(X), alone.predict(X))
        assert model.n_universum_ == alone.n_universum_ == (len(Z) if c else 0)
    np.testing.assert_allclose(models[0].coef_, sk.coef_, rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize(("n", "d"), [(15, 120), (50, 5)])
def test_ledoit_wolf_from_the_gram_matrix_is_sklearns(n, d):
    from sklearn.covariance import ledoit_wolf_shrinkage

    from bci_universum.classifiers.indifference import _ledoit_wolf_gram

    rng = np.random.default_rng(n)
    Z = rng.normal(size=(n, d)) * rng.uniform(0.5, 3.0, size=d)
    Z -= Z.mean(axis=0)
    alpha, mu = _ledoit_wolf_gram(Z)
    assert 0 < alpha < 1
    assert alpha == pytest.approx(ledoit_wolf_shrinkage(Z), rel=1e-10)
    assert mu == pytest.approx(np.trace(np.cov(Z.T, bias=True)) / d, rel=1e-12)


def test_ledoit_wolf_of_constant_trials_is_sklearns():
    """A class of one trial (or of equal trials) centres to zeros: no shrinkage, as in
    scikit-learn, not 0/0."""
    zeros = np.zeros((3, 4))
    assert _ledoit_wolf_gram(zeros) == (ledoit_wolf_shrinkage(zeros), 0.0)


@pytest.mark.parametrize("shrinkage", ["auto", 0.3])
def test_lda_more_features_than_trials_is_a_direct_solve_per_weight(shrinkage):
    """Tangent space of many channels: Σ_W + c Σ_U solved as diagonal + low rank (Woodbury)
    equals the dense solve with scikit-learn's LDA covariance, and scikit-learn's LDA at 0."""
    X, y, Z = _problem(seed=11, m=24, q=16, d=5)
    rng = np.random.default_rng(11)
    # 150 features: the 5 informative ones and 145 of noise, some constant in a class
    X = np.hstack([X, rng.normal(size=(24, 145))])
    X[y == 1, -1] = 2.0
    Z = np.hstack([Z, rng.normal(size=(16, 145))])
    assert len(X) + len(Z) < X.shape[1]
    weights = [0.0, 0.1, 10.0]
    models = UniversumLDA(shrinkage=shrinkage).fit_grid(
        *_with_universum(X, y, Z), [{"C_universum": c} for c in weights]
    )
    sk, directions = _lda_reference(X, y, Z, weights, shrinkage)
    for model, w in zip(models, directions, strict=True):
        np.testing.assert_allclose(model.coef_[0], w, rtol=1e-8, atol=1e-10 * np.abs(w).max())
    np.testing.assert_allclose(models[0].coef_, sk.coef_, rtol=1e-8, atol=1e-10)
    np.testing.assert_allclose(models[0].intercept_, sk.intercept_, rtol=1e-8)


def test_lda_singular_scatter_gets_the_minimum_norm_solution():
    """More features than trials without shrinkage: scikit-learn's lsqr (least squares)."""
    X, y, Z = _problem(seed=10, m=10, q=6, d=30)
    models = UniversumLDA(shrinkage=None).fit_grid(
        *_with_universum(X, y, Z), [{"C_universum": 0.0}, {"C_universum": 0.5}]
    )
    ref = LinearDiscriminantAnalysis(solver="lsqr").fit(X, y)
    np.testing.assert_allclose(models[0].coef_, ref.coef_, rtol=1e-8, atol=1e-10)
    S = 0.5 * np.cov(X[y == 1].T, bias=True) + 0.5 * np.cov(X[y == -1].T, bias=True)
    S += 0.5 * np.cov(Z.T, bias=True)
    diff = X[y == 1].mean(0) - X[y == -1].mean(0)
    np.testing.assert_allclose(models[1].coef_[0], np.linalg.pinv(S) @ diff, atol=1e-8)


@pytest.mark.parametrize("spread", [0.0, 1.0])
def test_lda_wide_without_shrinkage_is_sklearns_least_squares(spread):
    """More features than trials, no shrinkage, a within-class scatter of rank ≤ 1: each class
    one repeated trial (spread 0), or its trials spread as (1, 1, 1, −3) along every feature
    (skewed). scikit-learn's least-squares answer, not a division by the zero diagonal of the
    low-rank solver."""
    rng = np.random.default_rng(15)
    X = np.repeat(rng.normal(size=(2, 20)), 4, axis=0)
    X += spread * np.tile([1.0, 1.0, 1.0, -3.0], 2)[:, None] * rng.uniform(0.5, 2.0, size=20)
    y = np.repeat([-1, 1], 4)
    model = UniversumLDA(C_universum=0.0, shrinkage=None).fit(X, y)
    ref = LinearDiscriminantAnalysis(solver="lsqr").fit(X, y)
    np.testing.assert_allclose(model.coef_, ref.coef_, atol=1e-10 * (1 + np.abs(ref.coef_).max()))
    np.testing.assert_allclose(model.intercept_, ref.intercept_, atol=1e-10)


def test_lda_one_trial_per_class_needs_a_universum_covariance():
    """One labelled trial per class leaves no within-class covariance: scikit-learn's LDA
    refuses, and so does UniversumLDA without a universum covariance to stand in (it returned
    w = 0, predicting one class for every trial). With distinct universum trials and
    ``C_universum > 0`` the direction is ``(C_U Σ_U)⁺ Δμ``."""
    X, y = np.array([[0.0, 0.0], [1.0, 1.0]]), np.array([0, 1])
    with pytest.raises(ValueError, match="number of samples must be more"):
        LinearDiscriminantAnalysis(solver="lsqr", shrinkage="auto").fit(X, y)
    Z = np.random.default_rng(16).normal(size=(6, 2))
    for C_u, universum in [(1.0, Z[:0]), (0.0, Z), (1.0, np.repeat(Z[:1], 3, axis=0))]:
        with pytest.raises(ValueError, match=r"one labelled trial per class.*C_universum > 0"):
            UniversumLDA(C_universum=C_u).fit(*_with_universum(X, y, universum))
    with pytest.raises(ValueError, match="one labelled trial per class"):
        UniversumLDA().fit_grid(*_with_universum(X, y, Z), [{"C_universum": c} for c in (0, 1)])
    model = UniversumLDA(C_universum=2.0).fit(*_with_universum(X, y, Z))
    expected = np.linalg.pinv(2.0 * np.cov(Z.T, bias=True)) @ (X[1] - X[0])
    np.testing.assert_allclose(model.coef_[0], expected, rtol=1e-10)
    np.testing.assert_array_equal(model.predict(X), y)


@pytest.mark.parametrize("scale", [1e-20, 1.0, 1e20])
def test_lda_scatter_singular_to_working_precision_in_any_unit(scale):
    """A feature constant up to rounding-size noise: its variance (10⁻¹⁷ of the others') is
    below the precision of the scatter, whose Cholesky factor exists nonetheless. In any
    unit, the discriminant is scikit-learn's least-squares one, not the factor's solution
    (which would put a weight ~10⁷ on the noise)."""
    X, y, Z = _problem(seed=12)
    rng = np.random.default_rng(12)
    X[:, 2] = 1.0 + 3e-9 * rng.normal(size=len(X))
    X, Z = scale * X, scale * Z
    model = UniversumLDA(C_universum=0.0, shrinkage=None).fit(*_with_universum(X, y, Z))
    ref = LinearDiscriminantAnalysis(solver="lsqr", store_covariance=True).fit(X, y)
    scipy.linalg.cho_factor(ref.covariance_)  # succeeds: its pivots must flag the rank
    np.testing.assert_allclose(model.coef_, ref.coef_, rtol=1e-9, atol=1e-9 * abs(ref.coef_).max())
    np.testing.assert_allclose(model.intercept_, ref.intercept_, rtol=1e-9)


def test_fit_grid_rejects_a_varying_universum_label():
    X, y, Z = _problem()
    with pytest.raises(ValueError, match="universum_label"):
        UniversumLDA().fit_grid(*_with_universum(X, y, Z), [{"universum_label": -3}])


@pytest.mark.parametrize("cls", [UniversumLogisticRegression, UniversumLDA])
def test_fit_grid_validates_every_grid_point(cls):
    X, y, Z = _problem()
    with pytest.raises(ValueError, match="C_universum"):
        cls().fit_grid(*_with_universum(X, y, Z), [{"C_universum": 1.0}, {"C_universum": -1.0}])
