"""Shared pieces of the classifiers: the universum-aware score and the parameter checks."""

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.metrics import accuracy_score
from sklearn.svm import SVC
from sklearn.utils._param_validation import InvalidParameterError

from bci_universum import UNIVERSUM
from bci_universum.classifiers import (
    BaseKernelUniversumClassifier,
    BayesPointMachine,
    BiasedSVC,
    ECOCUniversumClassifier,
    LeastSquaresUniversumSVC,
    MulticlassUniversumSVC,
    UniversumSVC,
)

BINARY = [UniversumSVC(), LeastSquaresUniversumSVC(), BiasedSVC(), BayesPointMachine(softness=1.0)]
MULTICLASS = [MulticlassUniversumSVC(), ECOCUniversumClassifier()]


def _data(n_classes, seed=0):
    rng = np.random.default_rng(seed)
    y = np.repeat(np.arange(n_classes), 15)
    X = rng.normal(size=(y.size, 3)) + 1.2 * np.eye(3)[y]
    Z = rng.normal(size=(10, 3))
    return np.concatenate([X, Z]), np.concatenate([y, np.full(10, UNIVERSUM)])


@pytest.mark.parametrize("estimator", BINARY + MULTICLASS, ids=lambda e: type(e).__name__)
def test_score_is_the_accuracy_on_the_labelled_trials(estimator):
    X, y = _data(2 if estimator in BINARY else 3)
    clf = estimator.fit(X, y)
    lab = y != UNIVERSUM
    weights = np.random.default_rng(1).uniform(0.1, 2.0, y.size)
    expected = accuracy_score(y[lab], clf.predict(X[lab]), sample_weight=weights[lab])
    assert clf.score(X, y, sample_weight=weights) == expected
    assert clf.score(X, y) == accuracy_score(y[lab], clf.predict(X[lab]))
    # scikit-learn's plain score would count every universum trial as an error
    assert clf.score(X, y) > accuracy_score(y, clf.predict(X))
    with pytest.raises(ValueError, match="only universum trials"):
        clf.score(X[~lab], y[~lab])


@pytest.mark.parametrize(
    ("estimator", "name"),
    [
        (UniversumSVC(C=np.nan), "C"),
        (LeastSquaresUniversumSVC(gamma="wide"), "gamma"),
        (BayesPointMachine(degree=1.5), "degree"),
        (MulticlassUniversumSVC(C_universum=np.inf), "C_universum"),
        (MulticlassUniversumSVC(kernel="sigmoid", coef0=np.inf), "coef0"),
        (BayesPointMachine(kernel="sigmoid", coef0=np.inf), "coef0"),
        (ECOCUniversumClassifier(estimator="svm"), "estimator"),
        (BiasedSVC(prior_weight=np.inf), "prior_weight"),
        (UniversumSVC(universum_label=[1, 2]), "universum_label"),
        (ECOCUniversumClassifier(universum_label=[1, 2]), "universum_label"),
        (MulticlassUniversumSVC(universum_label={"rest"}), "universum_label"),
    ],
    ids=lambda v: v if isinstance(v, str) else type(v).__name__,
)
def test_bad_parameter_is_named_before_fitting(estimator, name):
    X, y = _data(2)
    with pytest.raises(InvalidParameterError, match=f"The '{name}' parameter of "):
        estimator.fit(X, y)
    assert not hasattr(estimator, "classes_")


@pytest.mark.parametrize(
    ("params", "ok"),
    [
        ({"gamma": 0.0}, False),
        ({"gamma": -0.5}, False),
        ({"gamma": 1e-3}, True),
        ({"kernel": "poly", "degree": 0}, True),
        ({"kernel": "poly", "degree": -1}, False),
        ({"C": 0.0}, False),
        ({"C": np.inf}, False),
        ({"C": 1e-3}, True),
        ({"epsilon": 0.0}, True),
        ({"epsilon": -1e-9}, False),
        # SVC refuses a non-finite coef0; the sigmoid's values are then NaN, which its [-1, 1]
        # range check cannot see, and the fit returned a zero decision
        ({"kernel": "sigmoid", "coef0": np.nan}, False),
        ({"kernel": "sigmoid", "coef0": np.inf}, False),
        ({"kernel": "sigmoid", "coef0": -3.0}, True),
    ],
    ids=str,
)
def test_shared_constraints_at_their_edges(params, ok):
    """Kernel parameters as SVC takes them; costs positive and finite, margins non-negative."""
    X, y = _data(2)
    if ok:
        assert UniversumSVC(**params).fit(X, y).classes_.tolist() == [0, 1]
    else:
        with pytest.raises(InvalidParameterError, match=f"'{list(params)[-1]}' parameter"):
            UniversumSVC(**params).fit(X, y)


def test_binary_classifiers_declare_themselves_binary():
    for estimator in BINARY:
        assert estimator.__sklearn_tags__().classifier_tags.multi_class is False
    for estimator in MULTICLASS:
        assert estimator.__sklearn_tags__().classifier_tags.multi_class is True


@pytest.mark.parametrize("cls", [UniversumSVC, LeastSquaresUniversumSVC, MulticlassUniversumSVC])
def test_a_precomputed_kernel_is_cross_validated_as_a_kernel(cls):
    """The ``pairwise`` tag (as ``sklearn.svm.SVC``'s) makes cross-validation slice a
    precomputed kernel on both axes: the folds score as with the kernel computed from the
    features."""
    from sklearn.metrics.pairwise import rbf_kernel
    from sklearn.model_selection import cross_val_score

    from bci_universum.model_selection import UniversumStratifiedKFold

    X, y = _data(2)
    for kernel in ("rbf", "linear", "precomputed"):
        tag = cls(kernel=kernel).__sklearn_tags__().input_tags.pairwise
        assert tag == SVC(kernel=kernel).__sklearn_tags__().input_tags.pairwise
    cv = UniversumStratifiedKFold(3)
    on_kernel = cross_val_score(cls(kernel="precomputed"), rbf_kernel(X, gamma=0.3), y, cv=cv)
    on_features = cross_val_score(cls(kernel="rbf", gamma=0.3), X, y, cv=cv)
    np.testing.assert_allclose(on_kernel, on_features)


def test_a_zero_decision_predicts_the_first_class():
    X, y = _data(2)
    clf = UniversumSVC(kernel="linear", fit_intercept=False).fit(X, y)
    zero = np.zeros((1, X.shape[1]))
    assert clf.decision_function(zero)[0] == 0.0
    assert clf.predict(zero)[0] == clf.classes_[0] == 0


def test_all_universum_error_names_the_label():
    X, y = _data(2)
    with pytest.raises(ValueError, match="universum label sentinel; at least two labelled"):
        UniversumSVC().fit(X, np.full(len(y), UNIVERSUM))
    with pytest.raises(ValueError, match="universum label 9; at least two labelled"):
        UniversumSVC(universum_label=9).fit(X, np.full(len(y), 9))


def _nan_kernel(A, B):
    return np.full((len(A), len(B)), np.nan)


def _row_norms(A, B):  # a vector, not the (len(A), len(B)) matrix
    return np.einsum("ij,ij->i", A, A)


@pytest.mark.parametrize("estimator", BINARY + MULTICLASS, ids=lambda e: type(e).__name__)
@pytest.mark.parametrize(
    ("params", "scale", "match"),
    [
        ({"kernel": _nan_kernel}, 1.0, r"kernel=<callable _nan_kernel> gives values that are not"),
        (
            {"kernel": "poly", "gamma": 1.0},
            1e110,
            "kernel='poly' gives values that are not finite",
        ),
        (
            {"kernel": _row_norms},
            1.0,
            r"kernel=<callable _row_norms> returned an array of shape \(\d+,\) for",
        ),
    ],
    ids=["callable-nan", "poly-overflow", "callable-shape"],
)
def test_a_non_finite_kernel_is_named(estimator, params, scale, match):
    """As ``SVC`` refuses non-finite dual coefficients, a kernel with NaN or inf values is
    refused, by name, instead of leaving the solver at a meaningless point."""
    X, y = _data(2 if estimator in BINARY else 3)
    if isinstance(estimator, ECOCUniversumClassifier):
        estimator = clone(estimator).set_params(estimator=UniversumSVC(**params))
    else:
        estimator = clone(estimator).set_params(**params)
    with pytest.raises(ValueError, match=match):
        estimator.fit(scale * X, y)


@pytest.mark.parametrize("solver", ["smo", "dcd", "ipm"])
def test_linear_kernel_values_too_large_for_the_solver_are_named(solver):
    """Linear kernel values near 1e221 are finite but their products overflow in every
    solver (the interior point method used to fail inside scipy, SMO never converged)."""
    X, y = _data(2)
    with pytest.raises(ValueError, match=r"kernel='linear' gives values up to .*overflow"):
        UniversumSVC(kernel="linear", solver=solver).fit(1e110 * X, y)


@pytest.mark.parametrize("cls", [UniversumSVC, LeastSquaresUniversumSVC])
@pytest.mark.parametrize("kernel", ["linear", "poly", "rbf", "precomputed"])
def test_kernel_machines_decide_through_the_shared_expansion(cls, kernel):
    """Batch and single-trial decisions of both kernel machines: one home, the same numbers.

    The linear case is checked against the primal ``X @ coef_ + b``, the precomputed one
    against the linear kernel's fit, the others against the kernel between the test trials and
    the expansion points (sklearn's ``pairwise_kernels``).
    """
    from sklearn.metrics.pairwise import pairwise_kernels

    rng = np.random.default_rng(3)
    X = rng.standard_normal((30, 4))
    y = np.repeat([0, 1, UNIVERSUM], 10)
    X[y == 1] += 1.0
    X_test = rng.standard_normal((6, 4))
    if kernel == "precomputed":
        clf = cls(kernel="precomputed", C_universum=0.5).fit(X @ X.T, y)
        rows = X_test @ X.T
        expected = cls(kernel="linear", C_universum=0.5).fit(X, y).decision_function(X_test)
    else:
        clf = cls(kernel=kernel, C_universum=0.5).fit(X, y)
        rows = X_test
        if kernel == "linear":
            expected = X_test @ clf.coef_[0] + clf.intercept_[0]
        else:
            expected = clf.decision_function(X_test)
            params = {"gamma": clf.gamma_}
            if kernel == "poly":
                params.update(degree=clf.degree, coef0=clf.coef0)
            K = pairwise_kernels(X_test, clf._expansion_points, metric=kernel, **params)
            np.testing.assert_allclose(K @ clf._expansion_coef + clf.intercept_[0], expected)
    # the hinge solvers of the linear and the precomputed kernel stop at their own tolerance
    tol = 1e-2 if kernel == "precomputed" and cls is UniversumSVC else 1e-6
    scores = clf.decision_function(rows)
    np.testing.assert_allclose(scores, expected, atol=tol)
    np.testing.assert_allclose([clf.decision_trial(r) for r in rows], scores, atol=1e-10)
    assert cls.decision_trial is BaseKernelUniversumClassifier.decision_trial


# BiasedSVC evaluates its prior on feature vectors (it rejects a kernel matrix); the ECOC
# classifier keeps no support vectors of its own
@pytest.mark.parametrize(
    "estimator",
    [e for e in [*BINARY, *MULTICLASS] if not isinstance(e, BiasedSVC | ECOCUniversumClassifier)],
    ids=repr,
)
def test_precomputed_support_vectors_are_empty_like_svc(estimator):
    """With a kernel matrix the trials' features are unknown: every kernel machine leaves its
    ``support_vectors_`` empty in the shape of scikit-learn's SVC, whatever else it keeps."""
    X, y = _data(3 if isinstance(estimator, MulticlassUniversumSVC) else 2)
    fitted = clone(estimator).set_params(kernel="precomputed").fit(X @ X.T, y)
    labelled = X[y != UNIVERSUM]
    svc = SVC(kernel="precomputed").fit(labelled @ labelled.T, y[y != UNIVERSUM])
    assert fitted.support_vectors_.shape == svc.support_vectors_.shape == (0, 0)


def test_expansions_of_zero_and_one_point_against_their_closed_form():
    """A prior with margin ≥ 1 on every trial leaves nothing to learn: the expansion is empty
    and ``f = λ·f₀``. Let one trial fall inside the margin (``y₀ f₀(x₀) = m < 1``) and the rbf
    machine without offset has one support vector, ``α₀ = min(C, (1 − m) / k(x₀, x₀))``,
    ``f(x) = λ·f₀(x) + α₀ y₀ k(x₀, x)`` (the dual of the hinge term alone, with the other
    trials kept outside the margin by their prior)."""
    rng = np.random.default_rng(5)
    X = rng.standard_normal((12, 2))
    y = np.repeat([0, 1], 6)
    sign = 2.0 * y - 1.0
    X_test = rng.standard_normal((5, 2))
    f0_test = rng.standard_normal(5)

    def fit(f0):
        clf = BiasedSVC(prior="last_column", kernel="rbf", gamma=1.0, C=2.0, fit_intercept=False)
        return clf.fit(np.column_stack([X, f0]), y)

    def decisions(clf):
        rows = np.column_stack([X_test, f0_test])
        return clf.decision_function(rows), [clf.decision_trial(r) for r in rows]

    empty = fit(3.0 * sign)
    assert empty.support_.size == 0
    for scores in decisions(empty):
        np.testing.assert_array_equal(scores, f0_test)

    f0 = 3.0 * sign
    f0[0] = -0.5  # y₀ = −1: margin m = 0.5, α₀ = 0.5 (k(x₀, x₀) = 1)
    single = fit(f0)
    np.testing.assert_array_equal(single.support_, [0])
    expected = f0_test - 0.5 * np.exp(-np.sum((X_test - X[0]) ** 2, axis=1))
    for scores in decisions(single):
        np.testing.assert_allclose(scores, expected, atol=1e-6)
