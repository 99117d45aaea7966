"""Welch PSD (5 windows), band power, log-variance and the filter bank."""

import pickle

import numpy as np
import pytest
import scipy.signal
from sklearn.base import clone
from sklearn.discriminant_analysis import LinearDiscriminantAnalysis
from sklearn.pipeline import make_pipeline

from bci_universum import UNIVERSUM
from bci_universum.features import CSP, BandPass, BandPower, FilterBank, LogVariance, WelchPSD
from bci_universum.features.spectral import welch_segment_length


@pytest.fixture
def noise():
    return np.random.default_rng(0).standard_normal((6, 3, 50))


def test_thesis_welch_has_five_segments_of_sixteen(noise):
    psd = WelchPSD(100.0, flatten=False).fit(noise)
    assert welch_segment_length(50, 5) == 16
    assert (psd.nperseg_, psd.n_segments_) == (16, 5)
    np.testing.assert_allclose(psd.freqs_, np.arange(9) * 6.25)
    # independent: average of the five Hann-windowed, demeaned periodograms
    x = noise[2, 1]
    win = scipy.signal.get_window("hann", 16)
    periodograms = []
    for start in range(0, 50 - 16 + 1, 8):
        seg = x[start : start + 16]
        spec = np.abs(np.fft.rfft((seg - seg.mean()) * win)) ** 2 / (100.0 * np.sum(win**2))
        spec[1:-1] *= 2  # one-sided
        periodograms.append(spec)
    assert len(periodograms) == 5
    np.testing.assert_allclose(psd.transform(noise)[2, 1], np.mean(periodograms, axis=0))


def test_psd_peak_and_parseval():
    sfreq = 200.0
    t = np.arange(2000) / sfreq
    rng = np.random.default_rng(1)
    X = 3 * np.sin(2 * np.pi * 25.0 * t) + 0.1 * rng.standard_normal((4, 2, 2000))
    psd = WelchPSD(sfreq, nperseg=200, flatten=False).fit(X)
    P = psd.transform(X)
    assert np.all(psd.freqs_[np.argmax(P, axis=-1)] == 25.0)
    df = psd.freqs_[1] - psd.freqs_[0]
    np.testing.assert_allclose(P.sum(axis=-1) * df, X.var(axis=-1), rtol=0.05)
    sub = WelchPSD(sfreq, nperseg=200, fmin=20.0, fmax=30.0, log=True).fit(X)
    np.testing.assert_allclose(sub.freqs_, np.arange(20.0, 31.0))
    assert sub.transform(X).shape == (4, 2 * 11)
    np.testing.assert_allclose(sub.transform(X), np.log10(P[..., 20:31]).reshape(4, -1))


def test_band_power_is_mean_psd_in_band():
    rng = np.random.default_rng(2)
    X = rng.standard_normal((5, 4, 400))
    bp = BandPower(100.0, bands=[(8, 12), (18, 26)], nperseg=100, log=False).fit(X)
    P = WelchPSD(100.0, nperseg=100, flatten=False).fit(X).transform(X)
    f = np.arange(51.0)
    expected = np.stack(
        [P[..., (f >= 8) & (f <= 12)].mean(-1), P[..., (f >= 18) & (f <= 26)].mean(-1)], axis=-1
    )
    np.testing.assert_allclose(bp.transform(X), expected.reshape(5, -1))
    logged = BandPower(100.0, bands=[(8, 12), (18, 26)], nperseg=100).fit(X).transform(X)
    np.testing.assert_allclose(logged, np.log10(expected.reshape(5, -1)))


def test_log_variance():
    X = np.random.default_rng(3).standard_normal((4, 3, 80)) + 2.0
    np.testing.assert_allclose(LogVariance().fit_transform(X), np.log(X.var(axis=-1)))
    np.testing.assert_allclose(
        LogVariance(demean=False).fit_transform(X), np.log(np.mean(X**2, axis=-1))
    )


def test_filter_bank_with_csp_fits_each_band_on_labelled_trials():
    rng = np.random.default_rng(4)
    sfreq = 100.0
    X = rng.standard_normal((40, 6, 200))
    y = np.repeat([0, 1], 20)
    X[y == 1, 0] *= 2
    U = rng.standard_normal((8, 6, 200)) * 3
    Xu = np.concatenate([X, U])
    yu = np.concatenate([y, np.full(8, UNIVERSUM)])
    bands = [(8.0, 12.0), (16.0, 24.0)]
    fb = FilterBank(sfreq, bands, CSP(2)).fit(Xu, yu)
    out = fb.transform(Xu)
    assert out.shape == (48, 4)
    for k, (lo, hi) in enumerate(bands):
        Xb = BandPass(sfreq, lo, hi, method="iir").fit_transform(X)
        ref = CSP(2).fit(Xb, y)
        np.testing.assert_allclose(fb.estimators_[k].filters_, ref.filters_)
        np.testing.assert_allclose(out[:40, 2 * k : 2 * k + 2], ref.transform(Xb))
    default = FilterBank(sfreq, bands).fit(X)
    assert default.transform(X).shape == (40, 12)  # log-variance of 6 channels per band


@pytest.mark.parametrize(
    "est",
    [
        WelchPSD(100.0),
        BandPower(100.0, bands=[(8, 30)]),
        LogVariance(),
        FilterBank(100.0, [(8.0, 12.0), (12.0, 30.0)], CSP(2)),
    ],
)
def test_sklearn_contract_and_pipeline(est):
    rng = np.random.default_rng(5)
    X = rng.standard_normal((24, 4, 100))
    y = np.repeat([0, 1], 12)
    X[y == 1, 1] *= 2
    y[:4] = UNIVERSUM
    a = est.fit_transform(X, y)
    np.testing.assert_allclose(a, clone(est).fit(X, y).transform(X))
    np.testing.assert_allclose(pickle.loads(pickle.dumps(est)).transform(X), a)
    pipe = make_pipeline(clone(est), LinearDiscriminantAnalysis()).fit(X, y)
    assert pipe.predict(X).shape == (24,)


@pytest.mark.parametrize(
    ("est", "match"),
    [
        (WelchPSD(-1.0), "sfreq"),
        (WelchPSD(100.0, n_windows=0), "n_windows"),
        (WelchPSD(100.0, n_windows=60), "segment length"),
        (WelchPSD(100.0, nperseg=500), "segment length"),
        (WelchPSD(100.0, fmin=60.0), "no frequency bin"),
        (BandPower(100.0, bands=[(1.0, 2.0)]), "holds no frequency bin"),
        (BandPower(100.0, bands=[(20.0, 10.0)]), "must be below h_freq"),
        (BandPower(100.0, bands=["alpha"]), "each band must be"),
        (BandPower(100.0, bands=[]), "at least one"),
        (BandPower(100.0, bands=[(10.0, 80.0)]), r"band \(10.0, 80.0\) of BandPower: h_freq=80.0"),
        (BandPower(100.0, n_windows=0), "'n_windows' parameter of BandPower"),
        (BandPower(100.0, log="no"), "'log' parameter of BandPower"),
        (LogVariance(demean="yes"), "'demean' parameter of LogVariance"),
        (FilterBank(100.0, [(8.0, 70.0)]), "h_freq=70.0"),
        (FilterBank(100.0, []), "at least one"),
        (FilterBank(100.0, [(8.0,)]), "each band must be"),
        # one band, not a list of bands: its edges are not bands
        (FilterBank(100.0, (8.0, 12.0)), r"each band must be \(l_freq, h_freq\) in Hz, got 8.0"),
    ],
)
def test_bad_parameters(est, match, noise):
    with pytest.raises(ValueError, match=match):
        est.fit(noise)


def test_bands_may_run_from_zero_to_nyquist(noise):
    """A PSD band's open edges: 0 Hz and the Nyquist frequency hold bins (filters reject them)."""
    bp = BandPower(100.0, bands=[(0, 10), (40, 50), (0, 50)], log=False).fit(noise)
    P = WelchPSD(100.0, flatten=False).fit(noise).transform(noise)
    np.testing.assert_allclose(bp.transform(noise)[:, 2::3], P.mean(axis=-1))


@pytest.mark.parametrize(
    "est",
    [
        LogVariance(),
        LogVariance(demean=False),
        BandPower(100.0, bands=[(6, 20)]),
        WelchPSD(100.0, log=True),
    ],
    ids=repr,
)
@pytest.mark.parametrize("level", [0.0, 3.0], ids=["zero", "constant"])
def test_a_flat_channel_is_named_instead_of_a_minus_infinite_feature(est, level, noise):
    """A disconnected electrode (a constant channel) has zero variance and PSD: the log is
    refused with the channel and the trials named, not turned into -inf for the next step. A
    constant non-zero channel has power without demeaning (mean power)."""
    X = noise.copy()
    X[[1, 4], 2] = level
    if level and getattr(est, "demean", True) is False:
        assert np.isfinite(clone(est).fit_transform(X)).all()
        return
    with pytest.raises(
        ValueError, match=r"zero power in channel\(s\) \[2\] of 2 trial\(s\) \[1, 4\]"
    ):
        clone(est).fit_transform(X)
    assert np.isfinite(clone(est).fit(X).transform(noise)).all()


def test_bad_epochs(noise):
    for est in (WelchPSD(100.0), LogVariance(), BandPower(100.0, bands=[(6, 20)])):
        with pytest.raises(ValueError, match="n_trials, n_channels, n_times"):
            est.fit(noise[0])
        bad = noise.copy()
        bad[1, 1, 1] = np.inf
        with pytest.raises(ValueError, match=r"infinity|NaN"):
            est.fit(bad)
    psd = WelchPSD(100.0).fit(noise)
    with pytest.raises(ValueError, match="40 samples, but 50 were seen"):
        psd.transform(noise[:, :, :40])
