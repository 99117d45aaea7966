"""TDSEP / SOBI on known mixtures (bci-signal-processing.md §23 P0 item 3)."""

import pickle

import mne
import numpy as np
import pytest
from sklearn.base import BaseEstimator, ClassifierMixin, clone
from sklearn.discriminant_analysis import LinearDiscriminantAnalysis
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import FunctionTransformer

from bci_universum import UNIVERSUM, split_universum
from bci_universum.features._metrics import amari_index
from bci_universum.features.ica import ICA
from bci_universum.features.tdsep import SOBI, TDSEP, lagged_covariances


def sinusoid_mixture(seed, n_times=5000):
    """Four sinusoids (0.011/0.023/0.037/0.052 cycles/sample), random phases and mixing."""
    rng = np.random.default_rng(seed)
    t = np.arange(n_times)
    S = np.array(
        [
            np.sin(2 * np.pi * f * t + rng.uniform(0, 2 * np.pi))
            for f in (0.011, 0.023, 0.037, 0.052)
        ]
    )
    A = rng.normal(size=(4, 4))
    return A, S, A @ S


def ar1(rng, a, n_times):
    e = rng.normal(size=n_times)
    s = np.empty(n_times)
    s[0] = e[0]
    for t in range(1, n_times):
        s[t] = a * s[t - 1] + e[t]
    return s


def mixed_mixture(seed, n_times=5000):
    """AR(1) a = 0.95, 0.7, −0.5, one sinusoid (f = 0.03), one i.i.d. Laplace; 5×5 mixing."""
    rng = np.random.default_rng(seed)
    S = np.array(
        [ar1(rng, a, n_times) for a in (0.95, 0.7, -0.5)]
        + [np.sin(2 * np.pi * 0.03 * np.arange(n_times) + rng.uniform(0, 2 * np.pi))]
        + [rng.laplace(size=n_times)]
    )
    A = rng.normal(size=(5, 5))
    return A, S, A @ S


def matched_corr(S_true, S_est):
    """For each true source, the best |corr| with any estimated component."""
    n = S_true.shape[0]
    C = np.corrcoef(S_true, S_est)[:n, n:]
    return np.abs(C).max(axis=1)


@pytest.mark.parametrize("seed", range(10))
def test_sinusoid_mixture_amari(seed):
    A, _, X = sinusoid_mixture(seed)
    model = TDSEP(lags=10).fit(X)
    assert amari_index(model.unmixing_matrix_, A) < 0.01


@pytest.mark.parametrize("seed", range(10))
def test_ar_sinusoid_laplace_mixture_amari(seed):
    A, _, X = mixed_mixture(seed)
    model = TDSEP(lags=10).fit(X)
    assert amari_index(model.unmixing_matrix_, A) < 0.05


def test_equivariance_under_invertible_channel_transform():
    _, _, X = mixed_mixture(1)
    B = np.random.default_rng(7).normal(size=(5, 5))
    S1 = TDSEP(lags=10).fit_transform(X)
    S2 = TDSEP(lags=10).fit_transform(B @ X)
    assert matched_corr(S1, S2).min() > 1 - 1e-6


def test_notes_toy_structured_sources_recovered():
    """Ex. 2.2.3 (L1135) with distinct spectra: sin/AR(2) sources separate, white ones need not."""
    rng = np.random.default_rng(0)
    n = 5000
    t = np.arange(n)
    speech = []
    for a1, a2 in ((1.6, -0.8), (0.5, -0.7)):
        e = rng.normal(size=n)
        s = np.zeros(n)
        for i in range(2, n):
            s[i] = a1 * s[i - 1] + a2 * s[i - 2] + e[i]
        speech.append(s)
    structured = [np.sin(2 * np.pi * 0.02 * t), np.sin(2 * np.pi * 0.031 * t + 1.0), *speech]
    white = [rng.normal(size=n), rng.normal(size=n), rng.uniform(-1, 1, size=n)]
    S = np.array(structured + white)
    A = rng.normal(size=(7, 7))
    S_est = TDSEP(lags=10).fit_transform(A @ S)
    assert matched_corr(S[:4], S_est).min() >= 0.99


def test_patterns_and_filters_are_inverse_and_reconstruct():
    _, _, X = mixed_mixture(3)
    model = TDSEP(lags=5).fit(X)
    W, Am = model.unmixing_matrix_, model.mixing_matrix_
    np.testing.assert_allclose(W @ Am, np.eye(5), atol=1e-10)
    sources = model.transform(X)
    np.testing.assert_allclose(np.cov(sources), np.eye(5), atol=1e-3)
    np.testing.assert_allclose(model.inverse_transform(sources), X, atol=1e-8)
    # the joint diagonaliser lowered the TDSEP loss, components sorted by lag-1 autocorrelation
    assert model.off_diagonal_[-1] < model.off_diagonal_[0]
    assert np.all(np.diff(model.autocorrelations_[0]) <= 0)
    # diagonals equal the measured lagged autocorrelations of the unit-variance sources
    Sc = sources - sources.mean(axis=1, keepdims=True)
    lag1 = (Sc[:, 1:] * Sc[:, :-1]).mean(axis=1)
    np.testing.assert_allclose(model.autocorrelations_[0], lag1, atol=1e-3)


def test_lagged_covariances_definition():
    rng = np.random.default_rng(0)
    X3 = rng.normal(size=(3, 4, 50))
    covs = lagged_covariances(X3, np.array([2]))
    manual = sum(X3[e][:, 2:] @ X3[e][:, :-2].T for e in range(3)) / (3 * 48)
    np.testing.assert_allclose(covs[1], 0.5 * (manual + manual.T), atol=1e-14)
    np.testing.assert_allclose(covs[0], sum(x @ x.T for x in X3) / 150, atol=1e-14)
    np.testing.assert_array_equal(covs[1], covs[1].T)


def test_epochs_match_continuous_separation():
    A, _, X = sinusoid_mixture(4, n_times=6000)
    epochs = X.reshape(4, 20, 300).transpose(1, 0, 2)
    model = TDSEP(lags=10).fit(epochs)
    assert amari_index(model.unmixing_matrix_, A) < 0.01
    sources = model.transform(epochs)
    assert sources.shape == (20, 4, 300)
    np.testing.assert_allclose(
        sources.transpose(1, 0, 2).reshape(4, -1), model.transform(X), atol=1e-10
    )


def test_rank_deficient_average_reference():
    _, _, X = mixed_mixture(5)
    X = X - X.mean(axis=0, keepdims=True)
    model = TDSEP(lags=10).fit(X)
    assert model.n_components_ == 4
    assert np.all(np.isfinite(model.unmixing_matrix_))
    np.testing.assert_allclose(np.cov(model.transform(X)), np.eye(4), atol=1e-3)


def test_dimension_reduction():
    _, _, X = mixed_mixture(6)
    model = TDSEP(n_components=3, lags=10).fit(X)
    assert model.unmixing_matrix_.shape == (3, 5)
    assert model.mixing_matrix_.shape == (5, 3)
    np.testing.assert_allclose(
        model.unmixing_matrix_ @ model.mixing_matrix_, np.eye(3), atol=1e-10
    )


def test_sobi_defaults_and_amuse():
    A, _, X = sinusoid_mixture(8)
    sobi = SOBI().fit(X)
    np.testing.assert_array_equal(sobi.lags_, np.arange(1, 101))
    assert amari_index(sobi.unmixing_matrix_, A) < 0.01
    amuse = TDSEP(lags=[5]).fit(X)
    assert amari_index(amuse.unmixing_matrix_, A) < 0.05


def _epochs_with_universum(seed=0):
    """Labelled trials (two classes, class-specific power of source 0) plus universum trials."""
    rng = np.random.default_rng(seed)
    A = rng.normal(size=(4, 4))
    t = np.arange(200)
    X, y = [], []
    for label, gain in ((0, 0.3), (1, 3.0), (UNIVERSUM, 1.0)):
        for _ in range(15):
            S = np.array([gain * ar1(rng, 0.9, 200), np.sin(0.3 * t + rng.uniform(0, 6))])
            S = np.vstack([S, ar1(rng, -0.5, 200), rng.laplace(size=200)])
            X.append(A @ S)
            y.append(label)
    return np.array(X), np.array(y)


class _LabelledOnlyLDA(ClassifierMixin, BaseEstimator):
    """Test stand-in for a universum classifier: LDA fitted on the labelled trials only."""

    def fit(self, X, y):
        X_l, y_l, _ = split_universum(X, y)
        self.lda_ = LinearDiscriminantAnalysis().fit(X_l, y_l)
        self.classes_ = self.lda_.classes_
        return self

    def predict(self, X):
        return self.lda_.predict(X)


def _log_var(S):
    return np.log(S.var(axis=-1))


@pytest.mark.parametrize("fit_on", ["all", "labelled"])
def test_pipeline_with_universum_trials(fit_on):
    X, y = _epochs_with_universum()
    pipe = make_pipeline(
        TDSEP(lags=5, fit_on=fit_on), FunctionTransformer(_log_var), _LabelledOnlyLDA()
    )
    pipe.fit(X, y)
    labelled = y != UNIVERSUM
    assert pipe.score(X[labelled], y[labelled]) > 0.9
    assert pipe.predict(X[~labelled]).shape == (15,)


def test_fit_on_labelled_ignores_universum_trials():
    X, y = _epochs_with_universum(1)
    labelled = y != UNIVERSUM
    a = TDSEP(lags=5, fit_on="labelled").fit(X, y)
    b = TDSEP(lags=5).fit(X[labelled])
    np.testing.assert_allclose(a.unmixing_matrix_, b.unmixing_matrix_, atol=1e-10)
    c = TDSEP(lags=5, fit_on="all").fit(X, y)
    assert not np.allclose(c.unmixing_matrix_, b.unmixing_matrix_)


def test_fit_transform_clone_pickle():
    X, y = _epochs_with_universum(2)
    model = TDSEP(lags=5)
    np.testing.assert_allclose(model.fit_transform(X, y), clone(model).fit(X, y).transform(X))
    assert clone(model).get_params() == model.get_params()
    restored = pickle.loads(pickle.dumps(model))
    np.testing.assert_array_equal(restored.transform(X), model.transform(X))


@pytest.mark.parametrize(
    ("X", "params", "match"),
    [
        (np.zeros(100), {}, "2-D"),
        (np.zeros((2, 2, 3, 100)), {}, "3-D"),
        (np.full((3, 100), np.nan), {}, "NaN"),
        (None, {"lags": 0}, "lags"),
        (None, {"lags": [1, 1]}, "lags"),
        (None, {"lags": [0.5]}, "lags"),
        (None, {"lags": []}, "lags"),
        (None, {"lags": 1000}, "Too few samples"),
        (np.ones((5, 3)), {"lags": 1}, "Too few samples"),
        (None, {"n_components": 7}, "n_components"),
        (None, {"fit_on": "universum"}, "fit_on"),
        (None, {"fit_on": "labelled"}, "fit_on='labelled'"),
        (None, {"rank_tol": -1.0}, "rank_tol"),
    ],
)
def test_bad_input(X, params, match):
    if X is None:
        X = mixed_mixture(0, n_times=500)[2]
    with pytest.raises(ValueError, match=match):
        TDSEP(**params).fit(X)


def test_transform_rejects_wrong_channel_count_and_unfitted():
    _, _, X = mixed_mixture(0, n_times=500)
    with pytest.raises(Exception, match="not fitted"):
        TDSEP().transform(X)
    model = TDSEP(lags=3).fit(X)
    with pytest.raises(ValueError, match="X has 4 channels, but TDSEP was fitted on 5 channels"):
        model.transform(X[:4])
    with pytest.raises(ValueError, match="n_components"):
        model.inverse_transform(np.zeros((3, 10)))


@pytest.mark.parametrize("estimator", [TDSEP(lags=3), ICA(random_state=0)], ids=["TDSEP", "ICA"])
def test_mne_objects_are_refused_naming_get_data(estimator):
    """An mne.Epochs iterates as Epochs of one trial (scikit-learn counted one feature) and an
    mne.io.Raw as (data, times) pairs (a ragged-array error): both are named instead."""
    _, _, X = mixed_mixture(0, n_times=600)
    info = mne.create_info(X.shape[0], 100.0, "eeg")
    raw = mne.io.RawArray(X, info, verbose="error")
    epochs = mne.EpochsArray(X.reshape(5, 3, 200).transpose(1, 0, 2), info, verbose="error")
    name = type(estimator).__name__
    for mne_object in (raw, epochs):
        kind = type(mne_object).__name__
        match = rf"{name} expects an array .* got {kind}: .* raw\.get_data\(\)"
        with pytest.raises(TypeError, match=match):
            clone(estimator).fit(mne_object)
    fitted = clone(estimator).fit(X)
    with pytest.raises(TypeError, match=r"got EpochsArray: .* epochs\.get_data\(\)"):
        fitted.transform(epochs)
    trials = epochs.get_data()
    np.testing.assert_array_equal(fitted.transform(trials)[1], fitted.transform(trials[1]))
