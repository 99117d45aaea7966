"""ICA spatial filter through MNE (bci-signal-processing.md §9 and §23 P0 item 4)."""

import importlib.util
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


def mixture(seed, kind, n_sources=4, n_times=3000):
    rng = np.random.default_rng(seed)
    if kind == "laplace":
        S = rng.laplace(size=(n_sources, n_times))
    else:
        S = rng.uniform(-1, 1, size=(n_sources, n_times))
    A = rng.normal(size=(n_sources, n_sources))
    return A, S, A @ S


@pytest.mark.parametrize(
    ("method", "kind"),
    [("infomax", "laplace"), ("extended-infomax", "uniform"), ("fastica", "uniform")],
)
def test_separates_non_gaussian_mixture(method, kind):
    A, _, X = mixture(0, kind)
    model = ICA(method=method, random_state=0).fit(X)
    assert amari_index(model.unmixing_matrix_, A) < 0.08


def test_logistic_infomax_fails_on_sub_gaussian_sources():
    """Plain (logistic) Infomax assumes super-Gaussian sources; extended Infomax is needed."""
    A, _, X = mixture(1, "uniform")
    plain = amari_index(ICA(method="infomax", random_state=0).fit(X).unmixing_matrix_, A)
    extended = amari_index(
        ICA(method="extended-infomax", random_state=0).fit(X).unmixing_matrix_, A
    )
    assert extended < 0.08 < plain


def test_matches_mne_sources_and_patterns():
    _, _, X = mixture(2, "laplace")
    model = ICA(method="infomax", random_state=3, max_iter=50).fit(X)
    info = mne.create_info([f"EEG{i:03d}" for i in range(4)], 250.0, "eeg")
    raw = mne.io.RawArray(X, info, verbose="error")
    ref = mne.preprocessing.ICA(method="infomax", rng=3, max_iter=50).fit(raw, verbose="error")
    np.testing.assert_allclose(
        model.transform(X), ref.get_sources(raw).get_data(), rtol=1e-8, atol=1e-10
    )
    # MNE's patterns are in pre-whitened units: one scale factor for one channel type
    ratio = model.mixing_matrix_ / ref.get_components()
    np.testing.assert_allclose(ratio, ratio[0, 0], rtol=1e-8)
    np.testing.assert_allclose(
        model.unmixing_matrix_ @ model.mixing_matrix_, np.eye(4), atol=1e-10
    )
    np.testing.assert_allclose(model.inverse_transform(model.transform(X)), X, atol=1e-8)


def test_epochs_input_and_shapes():
    A, _, X = mixture(3, "uniform", n_times=3000)
    epochs = X.reshape(4, 30, 100).transpose(1, 0, 2)
    model = ICA(method="fastica", random_state=0).fit(epochs)
    assert amari_index(model.unmixing_matrix_, A) < 0.08
    sources = model.transform(epochs)
    assert sources.shape == (30, 4, 100)
    np.testing.assert_allclose(
        sources.transpose(1, 0, 2).reshape(4, -1), model.transform(X), atol=1e-10
    )


def test_reduced_components():
    _, _, X = mixture(4, "uniform")
    model = ICA(n_components=3, method="fastica", random_state=0).fit(X)
    assert model.unmixing_matrix_.shape == (3, 4)
    assert model.mixing_matrix_.shape == (4, 3)


def _epochs_with_universum(seed=0):
    rng = np.random.default_rng(seed)
    A = rng.normal(size=(4, 4))
    X, y = [], []
    for label, gain in ((0, 0.3), (1, 3.0), (UNIVERSUM, 1.0)):
        for _ in range(15):
            S = rng.uniform(-1, 1, size=(4, 100))
            S[0] *= gain
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
    ica = ICA(method="fastica", random_state=0, fit_on=fit_on)
    pipe = make_pipeline(ica, FunctionTransformer(_log_var), _LabelledOnlyLDA()).fit(X, y)
    labelled = y != UNIVERSUM
    assert pipe.score(X[labelled], y[labelled]) > 0.9
    reference = clone(ica).set_params(fit_on="all")
    reference.fit(X[labelled] if fit_on == "labelled" else X)
    np.testing.assert_allclose(
        pipe[0].unmixing_matrix_, reference.unmixing_matrix_, rtol=1e-8, atol=1e-10
    )


def test_fit_transform_clone_pickle():
    X, y = _epochs_with_universum(1)
    model = ICA(method="fastica", random_state=0)
    np.testing.assert_allclose(
        model.fit_transform(X, y), clone(model).fit(X, y).transform(X), atol=1e-10
    )
    assert clone(model).get_params() == model.get_params()
    restored = pickle.loads(pickle.dumps(model))
    np.testing.assert_array_equal(restored.transform(X), model.transform(X))


@pytest.mark.parametrize(
    ("X", "params", "match"),
    [
        (np.zeros(100), {}, "2-D"),
        (np.zeros((2, 2, 3, 100)), {}, "3-D"),
        (np.full((3, 100), np.nan), {}, "NaN"),
        (np.ones((5, 3)), {}, "Too few samples"),
        (None, {"method": "jade"}, "method"),
        (None, {"ch_names": ["Cz"]}, "ch_names"),
        (None, {"sfreq": -1.0}, "sfreq"),
        (None, {"fit_on": "universum"}, "fit_on"),
        (None, {"fit_on": "labelled"}, "fit_on='labelled'"),
    ],
)
def test_bad_input(X, params, match):
    if X is None:
        X = mixture(0, "uniform", n_times=500)[2]
    with pytest.raises(ValueError, match=match):
        ICA(method=params.pop("method", "fastica"), **params).fit(X)


@pytest.mark.skipif(importlib.util.find_spec("picard") is not None, reason="picard installed")
def test_picard_without_package_is_a_clear_error():
    X = mixture(0, "uniform", n_times=500)[2]
    with pytest.raises(ImportError, match="python-picard"):
        ICA(method="picard").fit(X)
