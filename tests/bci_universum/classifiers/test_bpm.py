"""BayesPointMachine: estimator contract, hard/soft boundaries, margins, rejection, errors."""

import pickle

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.datasets import load_breast_cancer
from sklearn.exceptions import NotFittedError
from sklearn.metrics.pairwise import rbf_kernel
from sklearn.model_selection import train_test_split
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.svm import SVC
from sklearn.utils.estimator_checks import parametrize_with_checks

from bci_universum import UNIVERSUM
from bci_universum.classifiers.bpm import BayesPointMachine


def _separable(seed=0, m=40, d=4):
    """Labels of a linear rule through the origin (separable without bias)."""
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((m, d))
    y = (X @ rng.standard_normal(d) > 0).astype(int)
    return X, y


@pytest.fixture(scope="module")
def cancer():
    data = load_breast_cancer()
    X_train, X_test, y_train, y_test = train_test_split(
        data.data, data.target, test_size=0.4, random_state=0
    )
    scaler = StandardScaler().fit(X_train)
    return scaler.transform(X_train), scaler.transform(X_test), y_train, y_test


@parametrize_with_checks(
    [
        BayesPointMachine(random_state=0, max_bounces=2000),
        BayesPointMachine(method="perceptron", n_perceptrons=5, random_state=0),
    ]
)
def test_sklearn_compatible(estimator, check):
    check(estimator)


@pytest.mark.parametrize("method", ["billiard", "perceptron"])
@pytest.mark.parametrize("kernel", ["linear", "rbf"])
def test_zero_training_error_on_separable_data(method, kernel):
    X, y = _separable()
    bpm = BayesPointMachine(kernel=kernel, softness=0.0, method=method, random_state=0)
    bpm.fit(X, y)
    np.testing.assert_array_equal(bpm.predict(X), y)
    assert bpm.dual_coef_.shape == (40,)
    assert np.count_nonzero(bpm.dual_coef_) > 0.9 * 40  # dense, unlike the SVM (notes §7.7)


def test_margin_of_hard_svm_is_at_least_that_of_bpm(cancer):
    """Notes §7 test 6: γ(w_SVM) ≥ γ(w_BPM); SVC's bias only enlarges the SVM's margin."""
    X_train, _, y_train, _ = cancer
    gamma = 1 / (2 * 3.0**2)
    svm = SVC(kernel="rbf", gamma=gamma, C=1e6).fit(X_train, y_train)
    K_sv = rbf_kernel(svm.support_vectors_, gamma=gamma)
    signs = np.where(y_train == 1, 1.0, -1.0)
    svm_margin = np.min(signs * svm.decision_function(X_train)) / np.sqrt(
        (svm.dual_coef_ @ K_sv @ svm.dual_coef_.T).item()
    )
    bpm = BayesPointMachine(gamma=gamma, softness=0.0, random_state=0).fit(X_train, y_train)
    G = rbf_kernel(X_train, gamma=gamma)
    assert abs(bpm.dual_coef_ @ G @ bpm.dual_coef_ - 1) < 1e-8  # ‖w‖ = 1
    bpm_margin = np.min(signs * bpm.decision_function(X_train))
    assert 0 < bpm_margin < svm_margin


def test_linear_margin_against_linear_svc():
    X, y = _separable(3)
    svm = SVC(kernel="linear", C=1e6).fit(X, y)
    signs = 2.0 * y - 1
    svm_margin = np.min(signs * svm.decision_function(X)) / np.linalg.norm(svm.coef_)
    bpm = BayesPointMachine(kernel="linear", softness=0.0, random_state=0).fit(X, y)
    w = bpm.support_vectors_.T @ bpm.dual_coef_
    bpm_margin = np.min(signs * (X @ w)) / np.linalg.norm(w)
    assert 0 < bpm_margin < svm_margin


def test_soft_boundaries_constraints_and_original_kernel_at_test_time():
    """Notes §7 test 5: y ⊙ (G + λI)α > 0; decision_function uses the original G."""
    X, y = _separable(1, m=60)
    y[:6] = 1 - y[:6]  # flipped labels: not separable without softness
    with pytest.raises(ValueError, match="not separable"):
        BayesPointMachine(kernel="linear", softness=0.0, max_epochs=200).fit(X, y)
    bpm = BayesPointMachine(kernel="linear", softness=1.0, random_state=0).fit(X, y)
    G = X @ X.T
    signs = 2.0 * y - 1
    alpha = bpm.dual_coef_
    assert np.all(signs * ((G + np.eye(60)) @ alpha) > 0)
    np.testing.assert_allclose(bpm.decision_function(X), G @ alpha, rtol=1e-10, atol=1e-12)
    assert abs(alpha @ (G + np.eye(60)) @ alpha - 1) < 1e-8


def test_universum_trials_are_ignored_and_counted():
    X, y = _separable(2)
    rng = np.random.default_rng(5)
    X_all = np.vstack([X, rng.standard_normal((7, 4))])
    y_all = np.concatenate([y, np.full(7, UNIVERSUM)])
    with_u = BayesPointMachine(random_state=3).fit(X_all, y_all)
    without = BayesPointMachine(random_state=3).fit(X, y)
    assert with_u.n_universum_ignored_ == 7 and without.n_universum_ignored_ == 0
    np.testing.assert_array_equal(with_u.classes_, [0, 1])
    np.testing.assert_allclose(with_u.dual_coef_, without.dual_coef_)
    names = np.where(y_all == UNIVERSUM, "universum", np.where(y_all == 1, "right", "left"))
    strings = BayesPointMachine(random_state=3).fit(X_all, names)
    np.testing.assert_array_equal(strings.classes_, ["left", "right"])
    assert strings.n_universum_ignored_ == 7


def test_precomputed_kernel_matches_rbf(cancer):
    X_train, X_test, y_train, _ = cancer
    gamma = 0.05
    rbf = BayesPointMachine(gamma=gamma, random_state=0).fit(X_train, y_train)
    pre = BayesPointMachine(kernel="precomputed", random_state=0)
    pre.fit(rbf_kernel(X_train, gamma=gamma), y_train)
    K_test = rbf_kernel(X_test, X_train, gamma=gamma)
    np.testing.assert_allclose(pre.decision_function(K_test), rbf.decision_function(X_test))
    np.testing.assert_allclose(
        pre.confidence(K_test, kernel_diag=np.ones(len(X_test))), rbf.confidence(X_test)
    )
    with pytest.raises(ValueError, match="kernel_diag"):
        pre.confidence(K_test)


def test_anytime_budget_and_tolerance():
    X, y = _separable(4)
    capped = BayesPointMachine(softness=0.0, max_bounces=50, tol=1e-6, random_state=0)
    capped.fit(X, y)
    assert capped.n_bounces_ == 50 and capped.stopped_by_ == "max_bounces"
    loose = BayesPointMachine(softness=0.0, tol=1e-1, random_state=0).fit(X, y)
    tight = BayesPointMachine(softness=0.0, tol=1e-3, random_state=0).fit(X, y)
    assert loose.stopped_by_ == tight.stopped_by_ == "tol"
    assert loose.n_bounces_ < tight.n_bounces_
    same = BayesPointMachine(softness=0.0, tol=1e-3, random_state=0).fit(X, y)
    np.testing.assert_array_equal(same.dual_coef_, tight.dual_coef_)


def test_confidence_is_normalised_output():
    X, y = _separable(6)
    bpm = BayesPointMachine(kernel="poly", degree=2, coef0=1.0, gamma=0.5, random_state=0)
    bpm.fit(X, y)
    diag = (0.5 * np.sum(X**2, axis=1) + 1.0) ** 2
    conf = bpm.confidence(X)
    np.testing.assert_allclose(conf, np.abs(bpm.decision_function(X)) / np.sqrt(diag))
    assert np.all((conf >= 0) & (conf <= 1 + 1e-12))


def test_predict_with_rejection_drops_least_confident(cancer):
    X_train, X_test, y_train, _ = cancer
    bpm = BayesPointMachine(random_state=0).fit(X_train, y_train)
    conf = bpm.confidence(X_test)
    y_all, accepted_all = bpm.predict_with_rejection(X_test, 0.0)
    assert accepted_all.all()
    np.testing.assert_array_equal(y_all, bpm.predict(X_test))
    y_pred, accepted = bpm.predict_with_rejection(X_test, 0.25)
    np.testing.assert_array_equal(y_pred, y_all)
    assert (~accepted).sum() == int(np.floor(0.25 * len(X_test)))
    assert conf[~accepted].max() <= conf[accepted].min()


def test_clone_pickle_and_pipeline(cancer):
    X_train, X_test, y_train, _ = cancer
    pipe = make_pipeline(StandardScaler(), BayesPointMachine(random_state=0))
    pipe.fit(X_train, y_train)
    restored = pickle.loads(pickle.dumps(pipe))
    np.testing.assert_array_equal(
        restored.decision_function(X_test), pipe.decision_function(X_test)
    )
    scaler = StandardScaler().fit(X_train)
    manual = BayesPointMachine(random_state=0).fit(scaler.transform(X_train), y_train)
    np.testing.assert_allclose(
        pipe.decision_function(X_test), manual.decision_function(scaler.transform(X_test))
    )
    fresh = clone(pipe)
    assert not hasattr(fresh[-1], "dual_coef_")
    np.testing.assert_array_equal(
        fresh.fit(X_train, y_train).decision_function(X_test), pipe.decision_function(X_test)
    )


@pytest.mark.parametrize(
    ("params", "match"),
    [
        ({"method": "gibbs"}, "'method' parameter of BayesPointMachine"),
        ({"softness": -1.0}, "'softness' parameter"),
        ({"softness": np.inf}, "'softness' parameter"),
        ({"tol": 0.0}, "'tol' parameter .* range \\(0.0, 1.0\\]"),
        ({"max_bounces": 0}, "'max_bounces' parameter"),
        ({"n_perceptrons": 2.5}, "'n_perceptrons' parameter"),
        ({"max_epochs": -3}, "'max_epochs' parameter"),
        ({"kernel": "laplace"}, "'kernel' parameter"),
        ({"gamma": -1.0}, "'gamma' parameter"),
    ],
)
def test_bad_parameters(params, match):
    X, y = _separable()
    with pytest.raises(ValueError, match=match):
        BayesPointMachine(**params).fit(X, y)


def test_bad_inputs():
    X, y = _separable()
    bpm = BayesPointMachine(random_state=0)
    with pytest.raises(NotFittedError):
        bpm.predict(X)
    with pytest.raises(ValueError, match=r"Only binary classification.*: \[0, 1, 2\]\.$"):
        bpm.fit(X, np.arange(40) % 3)
    with pytest.raises(ValueError, match=r"got 1 class: \['a'\]\.$"):
        bpm.fit(X, np.full(40, "a"))
    with pytest.raises(ValueError, match="got 1 class"):
        bpm.fit(X, np.ones(40, dtype=int))
    X_nan = X.copy()
    X_nan[3, 1] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        bpm.fit(X_nan, y)
    with pytest.raises(ValueError, match="square training Gram"):
        BayesPointMachine(kernel="precomputed").fit(X, y)
    with pytest.raises(ValueError, match="symmetric training Gram"):
        BayesPointMachine(kernel="precomputed").fit(X @ (X + 1).T, y)
    bpm.fit(X, y)
    with pytest.raises(ValueError, match="features"):
        bpm.predict(X[:, :3])
    with pytest.raises(ValueError, match="reject_fraction"):
        bpm.predict_with_rejection(X, 1.5)
    with pytest.raises(ValueError, match="k\\(x, x\\) <= 0"):
        BayesPointMachine(kernel="linear", softness=0.0).fit(np.vstack([X, np.zeros(4)]), [*y, 1])


def test_smallest_budgets_and_documented_attributes():
    """One perceptron and one bounce are valid budgets; ``n_bounces_`` is 0 for the perceptron
    method; a precomputed kernel keeps scikit-learn's pairwise tag (as ``sklearn.svm.SVC``)."""
    X, y = _separable(1)
    perc = BayesPointMachine(method="perceptron", n_perceptrons=1, random_state=0).fit(X, y)
    assert perc.n_bounces_ == 0 and perc.stopped_by_ == "perceptron"
    one = BayesPointMachine(max_bounces=1, tol=1e-12, random_state=0).fit(X, y)
    assert one.n_bounces_ == 1 and one.stopped_by_ == "max_bounces"
    for kernel in ("precomputed", "linear"):
        ours = BayesPointMachine(kernel=kernel).__sklearn_tags__().input_tags.pairwise
        assert ours == SVC(kernel=kernel).__sklearn_tags__().input_tags.pairwise


def test_zero_decision_and_rejection_bounds():
    """A zero decision (the origin, linear kernel) predicts ``classes_[0]`` in both paths;
    rejecting 0 or all of the trials are the bounds; ``kernel_diag`` must be positive."""
    X, y = _separable(2)
    clf = BayesPointMachine(kernel="linear", random_state=0).fit(X, y)
    X_test = np.concatenate([np.zeros((1, X.shape[1])), X[:5]])
    assert clf.decision_function(X_test[:1])[0] == 0.0
    assert clf.predict(X_test)[0] == clf.classes_[0]
    pred, accepted = clf.predict_with_rejection(X_test[1:], 0.0)
    np.testing.assert_array_equal(pred, clf.predict(X_test[1:]))
    assert accepted.all()
    assert not clf.predict_with_rejection(X_test[1:], 1.0)[1].any()
    diag = np.einsum("ij,ij->i", X_test, X_test)
    assert clf.predict_with_rejection(X_test, 0.0, kernel_diag=diag + 1.0)[0][0] == clf.classes_[0]
    with pytest.raises(ValueError, match="one positive k"):
        clf.confidence(X_test, kernel_diag=diag)
    with pytest.raises(ValueError, match="one positive k"):
        clf.confidence(X_test, kernel_diag=diag[1:] + 1.0)


def test_budgets_and_fractions_out_of_range_are_named():
    X, y = _separable(3)
    for name in ("n_perceptrons", "max_bounces", "max_epochs"):
        with pytest.raises(ValueError, match=f"'{name}' parameter of BayesPointMachine"):
            BayesPointMachine(**{name: 0}).fit(X, y)
    clf = BayesPointMachine(kernel="linear", random_state=0).fit(X, y)
    with pytest.raises(ValueError, match=r"reject_fraction must be in \[0, 1\]"):
        clf.predict_with_rejection(X, -0.5)


@pytest.mark.parametrize("method", ["billiard", "perceptron"])
def test_two_passes_are_the_smallest_perceptron_budget(method):
    """The first pass always updates (every output starts at 0); a second pass without a
    mistake confirms separation: two orthogonal trials are separated in two passes."""
    X, y = np.eye(2), np.array([0, 1])
    clf = BayesPointMachine(kernel="linear", method=method, max_epochs=2, random_state=0)
    np.testing.assert_array_equal(clf.fit(X, y).predict(X), y)
    with pytest.raises(ValueError, match=r"'max_epochs' parameter .* range \[2, inf\)"):
        clone(clf).set_params(max_epochs=1).fit(X, y)


def test_swapping_the_classes_negates_the_decision():
    """Neither class is preferred: the labels are ±1 whichever class is which (the perceptron;
    the billiard's random directions are not mirrored, so it is symmetric in law only)."""
    X, y = _separable(4)
    params = {"kernel": "rbf", "method": "perceptron", "random_state": 0}
    f = BayesPointMachine(**params).fit(X, y).decision_function(X)
    swapped = BayesPointMachine(**params).fit(X, np.where(y == 1, -1, 2))
    np.testing.assert_allclose(swapped.decision_function(X), -f, rtol=1e-10, atol=1e-12)


def test_precomputed_gram_symmetry_is_checked_to_round_off():
    X, y = _separable(5)
    G = 1e6 * (X @ X.T)
    G[0, 1] = G[1, 0] = 0.0
    off = G.copy()
    off[0, 1] += 1e-13 * np.abs(G).max()  # round-off at the matrix's scale passes
    BayesPointMachine(kernel="precomputed", random_state=0).fit(off, y)
    i, j = np.unravel_index(np.argmax(np.abs(G - np.diag(np.diag(G)))), G.shape)
    skew = G.copy()
    skew[i, j] *= 1 + 1e-6  # a relative asymmetry far above round-off is refused
    with pytest.raises(ValueError, match="symmetric training Gram"):
        BayesPointMachine(kernel="precomputed", random_state=0).fit(skew, y)
