"""The base of the epochs transformers: tags and the checks every ``transform`` starts with."""

import mne
import numpy as np
import pytest
from sklearn.base import BaseEstimator, clone
from sklearn.exceptions import NotFittedError

from bci_universum import UNIVERSUM
from bci_universum.features import (
    CSP,
    BandPass,
    BandPower,
    ChannelPicker,
    FilterBank,
    LogVariance,
    TangentSpace,
    TrialPreprocessing,
    WelchPSD,
)
from bci_universum.features._epochs import check_epochs, check_labelled_epochs, labelled_epochs
from bci_universum.features.recentring import Recentring

TRANSFORMERS = [
    BandPass(100.0),
    TrialPreprocessing(100.0, window=(0.0, 0.5), resample_sfreq=None, h_freq=None),
    ChannelPicker([1, 0]),
    WelchPSD(100.0),
    BandPower(100.0, bands=((8.0, 30.0),)),
    LogVariance(),
    FilterBank(100.0, bands=((8.0, 12.0),)),
    TangentSpace(),
    CSP(2),
    Recentring(),
]
#: Transformers whose output depends on the trial length seen in fit.
LENGTH_BOUND = (TrialPreprocessing, WelchPSD, BandPower)


def _epochs(n_times=100, n_channels=3, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(12, n_channels, n_times))
    y = np.array([0, 1] * 5 + [UNIVERSUM] * 2)
    return X, y


@pytest.mark.parametrize("est", TRANSFORMERS, ids=lambda e: type(e).__name__)
def test_epochs_tags_and_transform_checks(est):
    tags = est.__sklearn_tags__()
    assert tags.input_tags.three_d_array and not tags.input_tags.two_d_array
    assert tags.target_tags.required == isinstance(est, CSP)
    # every one checks the channels seen in fit, so transform before fit is refused
    assert tags.requires_fit
    X, y = _epochs()
    with pytest.raises(NotFittedError):
        est.transform(X)
    est.fit(X, y)
    assert est.transform(X).shape[0] == len(X)
    name = type(est).__name__
    with pytest.raises(ValueError, match=f"(2 channels|{name} expects epochs)"):
        est.transform(X[:, :2])
    if isinstance(est, LENGTH_BOUND):
        # BandPower names itself, not its inner WelchPSD
        with pytest.raises(ValueError, match=f"{name}: epochs have 80 samples, but 100 were"):
            est.transform(X[..., :80])
    else:
        assert est.transform(X[..., :80]).shape[0] == len(X)


@pytest.mark.parametrize("est", TRANSFORMERS, ids=lambda e: type(e).__name__)
def test_mne_epochs_are_refused_naming_get_data(est):
    """An ``mne.Epochs`` is not an epochs array: scikit-learn counted it as one channel, so
    fit "worked" and transform then refused the epochs' own channels."""
    X, y = _epochs()
    epochs = mne.EpochsArray(X, mne.create_info(X.shape[1], 100.0, "eeg"), verbose="error")
    name = type(est).__name__  # BandPower too, not its inner WelchPSD
    match = rf"{name} expects epochs as an array .* got EpochsArray: .* epochs\.get_data\(\)"
    with pytest.raises(TypeError, match=match):
        clone(est).fit(epochs, y)
    fitted = clone(est).fit(X, y)
    if isinstance(est, ChannelPicker):  # transform only checks the shape (it runs every update)
        np.testing.assert_array_equal(fitted.transform(epochs), fitted.transform(X))
    else:
        with pytest.raises(TypeError, match=match):
            fitted.transform(epochs)
    # nested lists are array-like
    np.testing.assert_allclose(fitted.transform(X.tolist()), fitted.transform(X))


@pytest.mark.parametrize("est", TRANSFORMERS, ids=lambda e: type(e).__name__)
def test_trialwise_transformers_learn_nothing_from_the_trials(est):
    X, y = _epochs()
    other, _ = _epochs(seed=1)
    first, second = (clone(est).fit(fit_X, y).transform(X) for fit_X in (X, other))
    learned = not np.allclose(first, second)
    # select_and_fit applies a trial-wise step once to all trials instead of once per fold
    assert not (est._trialwise and learned)


def test_check_epochs_bounds():
    est = BaseEstimator()
    X = np.random.default_rng(0).normal(size=(2, 3, 4))
    # one trial, one channel, one sample is an epochs array
    assert check_epochs(est, X[:1, :1, :1], reset=True).shape == (1, 1, 1)
    assert check_epochs(est, X[..., :2], reset=True, min_times=2).shape == (2, 3, 2)
    for bad, match in [
        (X[:0], "0 sample"),
        (X[:, :0], "at least one channel"),
        (X[..., :0], "at least 1 time samples per trial, got 0"),
        (np.where(X > 1, np.nan, X), "NaN"),
    ]:
        with pytest.raises(ValueError, match=match):
            check_epochs(est, bad, reset=True)
    with pytest.raises(ValueError, match="at least 2 time samples per trial, got 1"):
        check_epochs(est, X[..., :1], reset=True, min_times=2)
    with pytest.raises(TypeError):
        check_epochs(est, X, True)  # the flag is keyword-only


def test_base_transformer_takes_trials_of_one_sample():
    X, _ = _epochs()
    assert ChannelPicker([0]).fit_transform(X[..., :1]).shape == (12, 1, 1)
    with pytest.raises(ValueError, match="at least 1 time samples"):
        ChannelPicker([0]).fit(X[..., :0])


def test_labelled_epochs_checks():
    est = BaseEstimator()
    X, y = _epochs()
    X_lab, y_lab, X_u, classes = labelled_epochs(est, X, y, UNIVERSUM)
    np.testing.assert_array_equal(classes, [0, 1])
    assert (len(X_lab), len(y_lab), len(X_u)) == (10, 10, 2)
    one_class = np.where(y == 1, 0, y)
    for check in (check_labelled_epochs, labelled_epochs):
        with pytest.raises(ValueError, match="at least 2 labelled classes"):
            check(est, X, one_class, UNIVERSUM)
        for bad_y in (y[:, None], y[:-1]):
            with pytest.raises(ValueError, match=r"y must have shape \(12,\)"):
                check(est, X, bad_y, UNIVERSUM)
        with pytest.raises(TypeError):
            check(est, X, y, UNIVERSUM, 1)  # min_classes is keyword-only
        # a missing label was a class of no trial: CSP failed in scikit-learn's covariance
        # ("Found array with 0 sample(s)")
        for missing, shown in ((np.nan, "nan"), (None, "None")):
            unlabelled = y.astype(object if missing is None else float)
            unlabelled[[0, 3]] = missing
            with pytest.raises(ValueError, match=rf"y contains 2 missing label\(s\) \({shown}\)"):
                check(est, X, unlabelled, UNIVERSUM)
    nan_labels = y.astype(float)
    nan_labels[0] = np.nan
    with pytest.raises(ValueError, match=r"1 missing label\(s\) \(nan\)"):
        CSP(2).fit(X, nan_labels)
