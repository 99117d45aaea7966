"""Biased regularisation toward a prior classifier (BiasedSVC, BiasedLeastSquaresSVC)."""

import pickle
import warnings

import cvxopt
import numpy as np
import pytest
from sklearn.base import clone
from sklearn.exceptions import NotFittedError
from sklearn.frozen import FrozenEstimator
from sklearn.linear_model import LogisticRegression
from sklearn.metrics.pairwise import linear_kernel, rbf_kernel
from sklearn.model_selection import StratifiedKFold, cross_val_score
from sklearn.pipeline import FeatureUnion, make_pipeline
from sklearn.preprocessing import FunctionTransformer, StandardScaler
from sklearn.svm import SVC

from bci_universum import UNIVERSUM
from bci_universum.classifiers import (
    BiasedLeastSquaresSVC,
    BiasedSVC,
    LeastSquaresUniversumSVC,
    PriorDecision,
    UniversumSVC,
)
from bci_universum.online import OnlineDecoder, offline_decisions


def _sessions(seed, n_old=120, n_new=24, n_u=10, d=5, angle=0.6):
    """An old session and a new one whose class direction is rotated by ``angle`` radians."""
    rng = np.random.default_rng(seed)
    w_old = np.zeros(d)
    w_old[0] = 1.0
    w_new = np.cos(angle) * w_old
    w_new[1] = np.sin(angle)
    X_old = rng.normal(size=(n_old, d))
    y_old = (X_old @ w_old + 0.3 * rng.normal(size=n_old) > 0).astype(int)
    X_new = rng.normal(size=(n_new, d))
    y_new = (X_new @ w_new + 0.3 * rng.normal(size=n_new) > 0).astype(int)
    Z = 0.3 * rng.normal(size=(n_u, d))
    prior = FrozenEstimator(LogisticRegression().fit(X_old, y_old))
    return X_new, y_new, Z, prior


def _with_universum(X, y, Z):
    return np.vstack([X, Z]), np.concatenate([y, np.full(len(Z), UNIVERSUM)])


@pytest.mark.parametrize("kernel", ["linear", "rbf"])
def test_zero_weight_is_the_plain_svm(kernel):
    X, y, Z, prior = _sessions(0)
    params = {"kernel": kernel, "C": 2.0, "tol": 1e-8}
    biased = BiasedSVC(prior=prior, prior_weight=0.0, **params).fit(X, y)
    svc = SVC(**params).fit(X, y)
    np.testing.assert_allclose(biased.decision_function(X), svc.decision_function(X), atol=1e-5)
    np.testing.assert_array_equal(biased.predict(X), svc.predict(X))
    # with a universum, λ = 0 and no prior give the U-SVM itself
    Xu, yu = _with_universum(X, y, Z)
    usvm = UniversumSVC(C_universum=0.5, **params).fit(Xu, yu)
    for prior_, weight in [(prior, 0.0), (None, 1.0)]:
        model = BiasedSVC(prior=prior_, prior_weight=weight, C_universum=0.5, **params)
        np.testing.assert_allclose(
            model.fit(Xu, yu).decision_function(X), usvm.decision_function(X), atol=1e-10
        )


def _reference_dual(X, y, Z, f0_x, f0_z, weight, C, C_u, eps, kernel):
    """The biased (universum) SVM dual written out independently of the package."""
    points = np.vstack([X, Z])
    labels = np.concatenate([np.where(y == 1, 1.0, -1.0), np.ones(len(Z)), -np.ones(len(Z))])
    index = np.concatenate([np.arange(len(X)), *[len(X) + np.arange(len(Z))] * 2])
    K = kernel(points)[np.ix_(index, index)]
    Q = labels[:, None] * labels[None, :] * K
    f0 = np.concatenate([f0_x, f0_z])[index]
    target = np.concatenate([np.ones(len(X)), -eps * np.ones(2 * len(Z))])
    p = -target + weight * labels * f0
    upper = np.concatenate([np.full(len(X), C), np.full(2 * len(Z), C_u)])
    return Q, p, upper, labels


def _cvxopt_minimum(Q, p, upper, labels, equality):
    n = len(p)
    G = np.vstack([-np.eye(n), np.eye(n)])
    h = np.concatenate([np.zeros(n), upper])
    m = cvxopt.matrix
    args = [m(Q), m(p), m(G), m(h)]
    if equality:
        args += [m(labels[None, :]), m(0.0)]
    opts = {"show_progress": False, "abstol": 1e-12, "reltol": 1e-12, "feastol": 1e-12}
    sol = cvxopt.solvers.qp(*args, options=opts)
    return float(sol["primal objective"])


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("with_universum", [False, True])
@pytest.mark.parametrize("fit_intercept", [True, False])
def test_dual_matches_a_generic_qp_solver(seed, with_universum, fit_intercept):
    X, y, Z, prior = _sessions(seed, n_new=30, n_u=12 if with_universum else 0)
    weight, C, C_u, eps = 0.8, 1.5, 0.7, 0.1
    kernel = "linear" if seed % 2 == 0 else "rbf"
    model = BiasedSVC(
        prior=prior,
        prior_weight=weight,
        C=C,
        C_universum=C_u,
        epsilon=eps,
        kernel=kernel,
        gamma=0.2,
        fit_intercept=fit_intercept,
        tol=1e-9,
    )
    Xu, yu = _with_universum(X, y, Z)
    model.fit(Xu, yu)
    ref_kernel = linear_kernel if kernel == "linear" else lambda A: rbf_kernel(A, gamma=0.2)
    f0_x, f0_z = prior.decision_function(X), prior.decision_function(Z) if len(Z) else []
    Q, p, upper, labels = _reference_dual(
        X, y, Z, f0_x, np.asarray(f0_z), weight, C, C_u, eps, ref_kernel
    )
    reference = _cvxopt_minimum(Q, p, upper, labels, fit_intercept)
    assert abs(model.objective_ - reference) <= 1e-6 * abs(reference)

    # strong duality: the primal objective of the fitted f equals minus the dual minimum
    coef = np.concatenate([model.dual_coef_[0], model.universum_dual_coef_[0]])
    sv = np.vstack([model.support_vectors_, model.universum_support_vectors_])
    norm2 = coef @ ref_kernel(sv) @ coef
    f_x, f_z = model.decision_function(X), model.decision_function(Z) if len(Z) else []
    hinge = np.maximum(0.0, 1.0 - np.where(y == 1, 1.0, -1.0) * f_x).sum()
    tube = np.maximum(0.0, np.abs(np.asarray(f_z)) - eps).sum()
    primal = 0.5 * norm2 + C * hinge + C_u * tube
    assert primal == pytest.approx(-reference, rel=1e-5)


def test_biased_least_squares_matches_a_direct_primal_solve():
    X, y, Z, prior = _sessions(3)
    weight, C, C_u = 0.7, 3.0, 0.5
    Xu, yu = _with_universum(X, y, Z)
    model = BiasedLeastSquaresSVC(
        prior=prior, prior_weight=weight, C=C, C_universum=C_u, kernel="linear"
    ).fit(Xu, yu)
    # min ½‖w‖² + C/2 Σ (y − w·x − b − λf0)² + C_U/2 Σ (w·z + b + λf0)², normal equations
    A = np.vstack(
        [
            np.sqrt(C) * np.column_stack([X, np.ones(len(X))]),
            np.sqrt(C_u) * np.column_stack([Z, np.ones(len(Z))]),
        ]
    )
    t = np.concatenate(
        [
            np.sqrt(C) * (np.where(y == 1, 1.0, -1.0) - weight * prior.decision_function(X)),
            -np.sqrt(C_u) * weight * prior.decision_function(Z),
        ]
    )
    penalty = np.eye(A.shape[1])
    penalty[-1, -1] = 0.0
    theta = np.linalg.solve(A.T @ A + penalty, A.T @ t)
    np.testing.assert_allclose(model.coef_[0], theta[:-1], rtol=1e-8, atol=1e-10)
    assert model.intercept_[0] == pytest.approx(theta[-1], rel=1e-8, abs=1e-10)
    expected = X @ theta[:-1] + theta[-1] + weight * prior.decision_function(X)
    np.testing.assert_allclose(model.decision_function(X), expected, rtol=1e-8, atol=1e-10)
    # λ = 0 gives the U_ls-SVM
    plain = LeastSquaresUniversumSVC(C=C, C_universum=C_u, kernel="linear").fit(Xu, yu)
    zero = BiasedLeastSquaresSVC(prior=prior, prior_weight=0.0, C=C, C_universum=C_u)
    np.testing.assert_allclose(
        zero.set_params(kernel="linear").fit(Xu, yu).decision_function(X),
        plain.decision_function(X),
        atol=1e-10,
    )


def test_strong_prior_weight_and_small_cost_follow_the_prior():
    X, y, _, prior = _sessions(4)
    model = BiasedSVC(prior=prior, prior_weight=2.0, C=1e-6, kernel="linear").fit(X, y)
    shifted = model.decision_function(X) - 2.0 * prior.decision_function(X)
    assert np.ptp(shifted) < 1e-4  # only the offset is left to the data


@pytest.mark.parametrize("Estimator", [BiasedSVC, BiasedLeastSquaresSVC])
def test_last_column_and_pipeline_equal_the_estimator_prior(Estimator):
    X, y, Z, prior = _sessions(5)
    Xu, yu = _with_universum(X, y, Z)
    direct = Estimator(prior=prior, kernel="linear").fit(Xu, yu)
    column = np.column_stack([Xu, prior.decision_function(Xu)])
    by_column = Estimator(prior="last_column", kernel="linear").fit(column, yu)
    np.testing.assert_allclose(
        by_column.decision_function(column[: len(X)]), direct.decision_function(X), atol=1e-8
    )
    # the prior sees raw X, the model sees scaled X: the FeatureUnion appends the prior's score
    features = FeatureUnion([("scale", StandardScaler()), ("prior", PriorDecision(prior))])
    pipe = make_pipeline(features, Estimator(prior="last_column", kernel="linear")).fit(Xu, yu)
    scaler = StandardScaler().fit(Xu)
    by_hand = Estimator(prior="last_column", kernel="linear").fit(
        np.column_stack([scaler.transform(Xu), prior.decision_function(Xu)]), yu
    )
    expected = by_hand.decision_function(
        np.column_stack([scaler.transform(X), prior.decision_function(X)])
    )
    np.testing.assert_allclose(pipe.decision_function(X), expected, atol=1e-10)


@pytest.mark.parametrize("Estimator", [BiasedSVC, BiasedLeastSquaresSVC])
@pytest.mark.parametrize("kind", ["estimator", "last_column"])
def test_single_trial_path_includes_the_prior(Estimator, kind):
    """The online decoder's ``decision_trial`` must equal ``decision_function``."""
    X, y, Z, prior = _sessions(6)
    Xu, yu = _with_universum(X, y, Z)
    if kind == "last_column":
        Xu = np.column_stack([Xu, prior.decision_function(Xu[:, :5])])
        X = Xu[: len(X)]
    clf = Estimator(prior=prior if kind == "estimator" else kind, kernel="linear").fit(Xu, yu)
    expected = clf.decision_function(X)
    assert np.ptp(expected) > 0
    np.testing.assert_allclose([clf.decision_trial(x) for x in X], expected, atol=1e-10)


def test_clone_pickle_and_cross_validation_keep_a_frozen_prior():
    X, y, _, prior = _sessions(6)
    model = BiasedSVC(prior=prior, kernel="linear").fit(X, y)
    again = pickle.loads(pickle.dumps(model))
    np.testing.assert_array_equal(again.decision_function(X), model.decision_function(X))
    cloned = clone(model)
    assert cloned.prior is prior
    np.testing.assert_allclose(cloned.fit(X, y).decision_function(X), model.decision_function(X))
    # cross-validation refits clones that keep the prior: the same scores as refitting by hand
    folds = StratifiedKFold(3).split(X, y)
    by_hand = [clone(model).fit(X[tr], y[tr]).score(X[te], y[te]) for tr, te in folds]
    np.testing.assert_array_equal(cross_val_score(model, X, y, cv=3), by_hand)


def test_prior_helps_with_few_trials_of_a_related_session():
    """Rotated class direction (0.6 rad): a prior from 120 old trials beats 6 new trials alone."""
    gains = []
    for seed in range(10):
        X, y, _, prior = _sessions(seed, n_new=400)
        train = np.concatenate([np.flatnonzero(y == c)[:3] for c in (0, 1)])
        test = np.setdiff1d(np.arange(len(y)), train)
        alone = BiasedSVC(kernel="linear").fit(X[train], y[train]).score(X[test], y[test])
        biased = BiasedSVC(prior=prior, kernel="linear").fit(X[train], y[train])
        gains.append(biased.score(X[test], y[test]) - alone)
    assert np.mean(gains) > 0


def _unfitted_or_bad():
    rng = np.random.default_rng(0)
    X3 = rng.normal(size=(20, 3))
    y3 = np.array([0, 1] * 10)
    return {
        "unfitted": SVC(kernel="linear"),
        "wrong_features": SVC(kernel="linear").fit(X3, y3),
        "wrong_classes": SVC(kernel="linear").fit(rng.normal(size=(20, 5)), y3 + 5),
        "multiclass": SVC(kernel="linear", decision_function_shape="ovr").fit(
            rng.normal(size=(30, 5)), np.repeat([0, 1, 2], 10)
        ),
    }


@pytest.mark.parametrize("Estimator", [BiasedSVC, BiasedLeastSquaresSVC])
@pytest.mark.parametrize(
    "params, error, match",
    [
        ({"prior": "unfitted"}, NotFittedError, "prior SVC is not fitted.*FrozenEstimator"),
        ({"prior": "wrong_features"}, ValueError, "fitted on 3 features but X has 5"),
        # the classes read as plain lists, not numpy scalar reprs (np.int64(5))
        ({"prior": "wrong_classes"}, ValueError, r"prior's classes \[5, 6\] differ .* \[0, 1\]"),
        ({"prior": "multiclass"}, ValueError, r"prior's classes \[0, 1, 2\] differ"),
        ({"prior": object()}, ValueError, "'prior' parameter .* implementing 'decision_function'"),
        ({"prior": "first_column"}, ValueError, "'last_column'"),
        ({"prior_weight": -0.5}, ValueError, "'prior_weight' parameter"),
        ({"prior_weight": np.nan}, ValueError, "prior_weight"),
        ({"kernel": "precomputed"}, ValueError, "kernel='precomputed' is not supported"),
    ],
)
def test_bad_input_errors(Estimator, params, error, match):
    X, y, _, _ = _sessions(7)
    priors = _unfitted_or_bad()
    if isinstance(params.get("prior"), str) and params["prior"] in priors:
        params = {**params, "prior": priors[params["prior"]]}
    with pytest.raises(error, match=match):
        Estimator(**params).fit(X, y)


@pytest.mark.parametrize("Estimator", [BiasedSVC, BiasedLeastSquaresSVC])
@pytest.mark.parametrize("weight", [0.0, 2.0])
def test_a_prior_weight_without_a_prior_warns(Estimator, weight):
    """``prior_weight`` only scales the prior: set without one it would be silently idle."""
    X, y, _, prior = _sessions(7)
    with pytest.warns(UserWarning, match=rf"prior_weight={weight} has no effect without a prior"):
        model = Estimator(prior_weight=weight).fit(X, y)
    reference = Estimator().fit(X, y)
    np.testing.assert_allclose(model.decision_function(X), reference.decision_function(X))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        Estimator(prior=prior, prior_weight=weight).fit(X, y)


@pytest.mark.parametrize("Estimator", [BiasedSVC, BiasedLeastSquaresSVC])
def test_decision_function_names_a_wrong_number_of_features(Estimator):
    """The estimator's own check, before the prior sees the data; the fit is left as it was."""
    X, y, _, prior = _sessions(8)
    clf = Estimator(prior=prior, kernel="linear").fit(X, y)
    name = Estimator.__name__
    with pytest.raises(ValueError, match=f"X has 4 features, but {name} is expecting 5"):
        clf.decision_function(X[:, :4])
    assert clf.n_features_in_ == 5


def test_last_column_needs_a_feature_besides_the_prior():
    with pytest.raises(ValueError, match="at least one feature besides"):
        BiasedSVC(prior="last_column").fit(np.arange(6.0)[:, None], [0, 1] * 3)
    # one feature and the prior is enough
    X = np.random.default_rng(0).standard_normal((20, 2))
    assert BiasedSVC(prior="last_column").fit(X, [0, 1] * 10).n_features_in_ == 2


def test_prior_decision_checks_its_estimator():
    with pytest.raises(NotFittedError, match="estimator SVC is not fitted"):
        PriorDecision(SVC()).fit(np.zeros((2, 2)))
    multi = LogisticRegression().fit(np.eye(3), [0, 1, 2])
    with pytest.raises(ValueError, match="must be binary"):
        PriorDecision(multi).fit().transform(np.eye(3))


def _log_var(X):
    return np.log(np.var(X, axis=-1))


def test_transfer_pipeline_runs_in_the_online_decoder():
    """A new session's pipeline biased toward the last session's one decodes chunk by chunk."""
    rng = np.random.default_rng(0)
    n_ch, sfreq = 6, 128.0

    def epochs(n, gain):
        X = rng.standard_normal((n, n_ch, 128))
        y = np.repeat([0, 1], n // 2)
        X[y == 1, 0] *= gain
        return X, y

    X_old, y_old = epochs(60, 2.0)
    last_session = make_pipeline(FunctionTransformer(_log_var), SVC(kernel="linear"))
    prior = FrozenEstimator(last_session.fit(X_old, y_old))
    X_new, y_new = epochs(6, 1.6)
    features = FeatureUnion(
        [("logvar", FunctionTransformer(_log_var)), ("prior", PriorDecision(prior))]
    )
    new_session = make_pipeline(features, BiasedSVC(prior="last_column", kernel="linear"))
    new_session.fit(X_new, y_new)

    decoder = OnlineDecoder(new_session, sfreq, n_ch, window=1.0, update_rate=8, band=(8, 30))
    stream = rng.standard_normal((1024, n_ch))
    online = [d for start in range(0, 1024, 50) for d in decoder.push(stream[start : start + 50])]
    index, values = offline_decisions(decoder, stream)
    assert len(online) == len(index) > 20
    np.testing.assert_allclose([d.value for d in online], values, atol=1e-9)


@pytest.mark.parametrize(
    ("biased", "host"),
    [(BiasedSVC, UniversumSVC), (BiasedLeastSquaresSVC, LeastSquaresUniversumSVC)],
)
def test_biased_parameters_are_the_host_parameters_plus_the_prior(biased, host):
    names = biased._get_param_names()
    assert sorted(names) == sorted([*host._get_param_names(), "prior", "prior_weight"])
    defaults = host().get_params()
    assert {k: biased().get_params()[k] for k in defaults} == defaults
    model = biased(prior="last_column", prior_weight=0.25, C=3.0)
    assert (model.prior, model.prior_weight, model.C) == ("last_column", 0.25, 3.0)
    assert clone(model).get_params() == model.get_params()
    with pytest.raises(TypeError):
        biased(None, 1.0, 3.0)  # the host's parameters are keyword-only
