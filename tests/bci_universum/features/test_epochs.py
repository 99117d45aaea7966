"""The base of the epochs transformers: tags and the checks every ``transform`` starts with."""

import numpy as np
import pytest
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
        where = "WelchPSD" if isinstance(est, BandPower) else name  # its inner PSD estimator
        with pytest.raises(ValueError, match=f"{where}: epochs have 80 samples, but 100 were"):
            est.transform(X[..., :80])
    else:
        assert est.transform(X[..., :80]).shape[0] == len(X)
