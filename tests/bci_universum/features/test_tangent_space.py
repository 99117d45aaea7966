"""Tangent space: the lean path equals pyRiemann; universum handling; sklearn contract."""

import pickle
import re
import warnings

import numpy as np
import pytest
from pyriemann.estimation import Covariances
from pyriemann.tangentspace import TangentSpace as PyriemannTangentSpace
from sklearn.base import clone
from sklearn.linear_model import LogisticRegression
from sklearn.pipeline import make_pipeline

from bci_universum import UNIVERSUM
from bci_universum.features import TangentSpace
from bci_universum.features.tangent_space import regularized_covariances


@pytest.fixture
def epochs():
    rng = np.random.default_rng(0)
    n_channels = 16
    A = rng.standard_normal((n_channels, n_channels))
    S = rng.standard_normal((40, n_channels, 120))
    y = np.repeat([0, 1], 20)
    S[y == 0, 0] *= 2.0
    S[y == 1, 1] *= 2.0
    X = np.einsum("ij,njt->nit", A, S) + 3.0  # a DC offset: covariances must demean
    return X, y


@pytest.mark.parametrize("estimator", ["oas", "lwf", "scm"])
def test_covariances_equal_pyriemann(epochs, estimator):
    X, _ = epochs
    ref = Covariances(estimator=estimator).transform(X)
    np.testing.assert_allclose(regularized_covariances(X, estimator), ref, rtol=1e-12, atol=0)


@pytest.mark.parametrize("estimator", ["oas", "lwf", "scm"])
def test_transform_and_single_trial_equal_pyriemann(epochs, estimator):
    X, y = epochs
    ts = TangentSpace(estimator).fit(X, y)
    covs = Covariances(estimator=estimator).transform(X)
    ref_ts = PyriemannTangentSpace(metric="riemann").fit(covs)
    ref = ref_ts.transform(covs)
    np.testing.assert_allclose(ts.reference_, ref_ts.reference_, atol=1e-12)
    np.testing.assert_allclose(ts.transform(X), ref, atol=1e-10)
    for i in (0, 17, 39):
        np.testing.assert_allclose(ts.transform_trial(X[i]), ref[i], atol=1e-10)


def test_64_channel_lean_path_equals_pyriemann():
    rng = np.random.default_rng(1)
    X = np.einsum("ij,njt->nit", rng.standard_normal((64, 64)), rng.standard_normal((12, 64, 250)))
    ts = TangentSpace().fit(X)
    covs = Covariances(estimator="oas").transform(X)
    ref = PyriemannTangentSpace(metric="riemann").fit(covs).transform(covs)
    assert ref.shape == (12, 64 * 65 // 2)
    for i in (0, 5, 11):
        np.testing.assert_allclose(ts.transform_trial(X[i]), ref[i], rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(ts.transform(X), ref, rtol=1e-10, atol=1e-12)


def test_reference_excludes_universum_unless_all(epochs):
    X, y = epochs
    rng = np.random.default_rng(2)
    U = 4.0 * rng.standard_normal((10, X.shape[1], X.shape[2]))
    Xu = np.concatenate([X, U])
    yu = np.concatenate([y, np.full(10, UNIVERSUM)])
    labelled = TangentSpace().fit(Xu, yu)
    np.testing.assert_allclose(labelled.reference_, TangentSpace().fit(X).reference_)
    everything = TangentSpace(reference="all").fit(Xu, yu)
    np.testing.assert_allclose(everything.reference_, TangentSpace().fit(Xu).reference_)
    assert not np.allclose(everything.reference_, labelled.reference_)
    # universum trials pass through the transform
    assert labelled.transform(Xu).shape == (len(Xu), 16 * 17 // 2)


@pytest.mark.parametrize("params", [{}, {"estimator": "lwf", "reference": "all"}])
def test_sklearn_contract(epochs, params):
    X, y = epochs
    yu = y.copy()
    yu[:4] = UNIVERSUM
    est = TangentSpace(**params)
    a = est.fit_transform(X, yu)
    np.testing.assert_allclose(a, clone(est).fit(X, yu).transform(X))
    np.testing.assert_allclose(pickle.loads(pickle.dumps(est)).transform(X), a)


def test_pipeline_with_universum_trials(epochs):
    X, y = epochs
    Xu = np.concatenate([X, X[:6]])
    yu = np.concatenate([y, np.full(6, UNIVERSUM)])
    pipe = make_pipeline(TangentSpace(), LogisticRegression(max_iter=1000)).fit(Xu, yu)
    np.testing.assert_allclose(pipe[0].reference_, TangentSpace().fit(X).reference_)
    assert pipe.score(X, y) > 0.9


@pytest.mark.parametrize(
    ("make", "match"),
    [
        (lambda X: X[:, :, 0], "3 dimension|n_trials, n_channels, n_times"),
        (lambda X: np.where(np.arange(X.shape[2]) == 3, np.nan, X), "NaN|infinity"),
        (lambda X: X[:, :, :1], "at least 2 time samples"),
    ],
)
def test_bad_input(epochs, make, match):
    X, _ = epochs
    with pytest.raises(ValueError, match=match):
        TangentSpace().fit(make(X))


@pytest.mark.parametrize("n_singular", [10, 11])
def test_fit_names_the_trials_whose_covariance_is_not_positive_definite(n_singular):
    """With the estimator 'scm', a flat trial (all zeros: every eigenvalue 0) and a trial whose
    covariance's condition number exceeds 1e12 (one channel 1e7 times the others) are refused
    by index, the first ten named."""
    rng = np.random.default_rng(0)
    X = rng.standard_normal((20, 4, 100))
    X[0] = 0.0
    X[1, 0] *= 1e7
    X[2:n_singular, 2] = X[2:n_singular, 3]  # a duplicated channel: rank 3
    shown = ", ".join(map(str, range(10))) + (", ..." if n_singular > 10 else "")
    message = f"The covariance of {n_singular} trial(s) [{shown}] of X is not positive definite"
    with pytest.raises(ValueError, match=re.escape(message)):
        TangentSpace("scm").fit(X)


def test_bad_parameters_and_trials(epochs):
    X, y = epochs
    with pytest.raises(ValueError, match="'estimator' parameter of TangentSpace must be a str"):
        TangentSpace("cov").fit(X)
    with pytest.raises(ValueError, match="'reference' parameter of TangentSpace must be a str"):
        TangentSpace(reference="universum").fit(X)
    with pytest.raises(ValueError, match="all are universum"):
        TangentSpace().fit(X, np.full(len(X), UNIVERSUM))
    ts = TangentSpace().fit(X, y)
    with pytest.raises(ValueError, match="shape \\(16, n_times >= 2\\)"):
        ts.transform_trial(X[0, :8])
    bad = X[0].copy()
    bad[2, 5] = np.inf
    with pytest.raises(ValueError, match="NaN or infinite"):
        ts.transform_trial(bad)
    with pytest.raises(ValueError, match="8 channels, but TangentSpace was fitted on 16"):
        ts.transform(X[:, :8])
    flat = X[:2].copy()
    flat[:, 3] = flat[:, 2]
    with pytest.raises(ValueError, match="not positive definite"):
        TangentSpace("scm").fit(X).transform(flat)
    # in fit, the trials are named (indices into X, universum trials counted) instead of
    # pyRiemann's error on the mean, after RuntimeWarnings from its log of negative eigenvalues
    duplicated = X.copy()
    duplicated[[1, 4], 3] = duplicated[[1, 4], 2]
    y_universum = np.where(np.arange(len(y)) == 0, UNIVERSUM, y)  # trial 0 not in the reference
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(ValueError, match=r"2 trial\(s\) \[1, 4\] of X is not positive"):
            TangentSpace("scm").fit(duplicated, y_universum)


@pytest.mark.slow(seconds=25)
@pytest.mark.data
def test_eegmmidb_universum_svc_matches_logistic_regression(data_dir):
    """Issue 4: TS + UniversumSVC (C_universum=0) reaches TS + logistic regression (same CV)."""
    import mne
    from sklearn.model_selection import StratifiedKFold, cross_val_score

    from bci_universum.classifiers import UniversumSVC
    from bci_universum.datasets import epochs_from_raw

    files = mne.datasets.eegbci.load_data(1, [4, 8, 12], path=data_dir, update_path=False)
    raws = [mne.io.read_raw_edf(f, preload=True, verbose=False) for f in files]
    raw = mne.concatenate_raws(raws)
    mne.datasets.eegbci.standardize(raw)
    raw.filter(7.0, 30.0, fir_design="firwin", skip_by_annotation="edge", verbose=False)
    X, y, _ = epochs_from_raw(raw, {"T1": "left", "T2": "right"}, None, 1.0, 2.0, picks="eeg")
    assert X.shape == (45, 64, 161)
    cv = StratifiedKFold(5, shuffle=True, random_state=42)
    usvm = make_pipeline(TangentSpace(), UniversumSVC(kernel="linear", C=1.0, C_universum=0))
    logreg = make_pipeline(TangentSpace(), LogisticRegression(C=1.0, max_iter=1000))
    ours = cross_val_score(usvm, X, y, cv=cv)
    ref = cross_val_score(logreg, X, y, cv=cv)
    # within noise: at most two of the 45 trials fewer correct (last run: 0.733 for both)
    assert ours.mean() >= ref.mean() - 2 / 45, (ours, ref)
    assert ref.mean() > 0.65


# orthogonal zero-mean rows of equal norm: a trial's sample covariance is diagonal, exactly
HADAMARD = np.array([[1, -1, 1, -1], [1, 1, -1, -1], [1, -1, -1, 1]], dtype=float)


@pytest.mark.parametrize("estimator", ["oas", "lwf", "scm"])
def test_covariances_of_degenerate_trials_equal_pyriemann(estimator):
    # a multiple of the identity (no shrinkage target left: OAS's and Ledoit-Wolf's
    # denominators are 0), a rank-one trial (Ledoit-Wolf's beta is 0, so no shrinkage) and a
    # nearly spherical one (OAS's ratio is above 1, and the shrinkage is capped at 1)
    X = np.stack(
        [
            3.0 * HADAMARD,
            np.outer([1.0, 2.0, -1.0], HADAMARD[0]),
            np.sqrt([1.0, 1.1, 0.9])[:, None] * HADAMARD,
        ]
    )
    with np.errstate(all="raise"):
        covs = regularized_covariances(X, estimator)
    np.testing.assert_allclose(covs, Covariances(estimator).transform(X), rtol=1e-12, atol=0)


def test_trials_of_two_samples_and_the_positive_definite_bound():
    ts = TangentSpace("scm").fit(np.stack([HADAMARD] * 3))  # reference: the identity
    np.testing.assert_array_equal(ts.reference_, np.eye(3))
    # with the identity as reference, a diagonal covariance maps to its logs on the diagonal
    variances = np.array([8e-12, 1.0, 4.0])  # condition number 5e11
    expected = np.zeros(6)
    expected[[0, 3, 5]] = np.log(variances)
    x = np.sqrt(variances)[:, None] * HADAMARD
    np.testing.assert_allclose(ts.transform_trial(x), expected, rtol=1e-9, atol=1e-12)
    # refused: the smallest eigenvalue at or below 1e-12 times the largest (2e12; 1e12 exactly)
    for variances in ([2e-12, 1.0, 4.0], [1e-12, 1.0, 1.0]):
        with pytest.raises(ValueError, match="not positive definite"):
            ts.transform_trial(np.sqrt(variances)[:, None] * HADAMARD)
    # two samples are enough for a (shrunk) covariance; one is refused
    X = np.random.default_rng(3).standard_normal((6, 3, 2))
    ts = TangentSpace().fit(X)
    covs = Covariances("oas").transform(X)
    ref = PyriemannTangentSpace(metric="riemann").fit(covs).transform(covs)
    np.testing.assert_allclose(ts.transform_trial(X[0]), ref[0], atol=1e-10)
    with pytest.raises(ValueError, match="n_times >= 2"):
        ts.transform_trial(X[0, :, :1])
