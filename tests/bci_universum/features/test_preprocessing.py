"""Band-pass and the thesis trial preprocessing: response, window, resampling, detrend."""

import pickle

import mne
import numpy as np
import pytest
import scipy.signal
from sklearn.base import clone
from sklearn.linear_model import LogisticRegression
from sklearn.pipeline import make_pipeline

from bci_universum import UNIVERSUM
from bci_universum.features import BandPass, ChannelPicker, LogVariance, TrialPreprocessing
from bci_universum.features.preprocessing import check_on_grid


def _sines(sfreq, n_times, freqs, n_trials=3, n_channels=2):
    t = np.arange(n_times) / sfreq
    sig = sum(np.sin(2 * np.pi * f * t) for f in freqs)
    return np.broadcast_to(sig, (n_trials, n_channels, n_times)).copy(), t


def _amplitude(x, sfreq, f):
    """Amplitude of the ``f`` Hz component of ``x`` (least squares on sin and cos)."""
    t = np.arange(x.shape[-1]) / sfreq
    basis = np.stack([np.sin(2 * np.pi * f * t), np.cos(2 * np.pi * f * t)], axis=1)
    coef, *_ = np.linalg.lstsq(basis, x, rcond=None)
    return np.hypot(*coef)


@pytest.mark.parametrize("method", ["fir", "iir"])
def test_bandpass_keeps_pass_band_and_rejects_stop_band(method):
    sfreq = 160.0
    X, _ = _sines(sfreq, 1600, [2.0, 15.0, 60.0])
    out = BandPass(sfreq, 7.0, 30.0, method=method).fit_transform(X)
    np.testing.assert_array_equal(BandPass(sfreq, method=method).fit_transform(X), out)
    mid = out[0, 0, 400:1200]  # away from the edges
    assert abs(_amplitude(mid, sfreq, 15.0) - 1.0) < 0.05
    assert _amplitude(mid, sfreq, 2.0) < 0.05
    assert _amplitude(mid, sfreq, 60.0) < 0.01


def test_iir_bandpass_is_a_forward_backward_4th_order_butterworth():
    """The measured sine response is |H|² of scipy's 4th-order Butterworth design."""
    sfreq, freqs = 160.0, [3.0, 5.0, 45.0]
    X, _ = _sines(sfreq, 3200, freqs)
    out = BandPass(sfreq, 7.0, 30.0, method="iir").fit_transform(X)
    sos = scipy.signal.butter(4, [7.0, 30.0], btype="bandpass", fs=sfreq, output="sos")
    _, h = scipy.signal.sosfreqz(sos, worN=freqs, fs=sfreq)
    measured = [_amplitude(out[0, 0, 800:2400], sfreq, f) for f in freqs]
    np.testing.assert_allclose(measured, np.abs(h) ** 2, rtol=0.02)


def test_trial_preprocessing_thesis_defaults():
    """256 Hz input (MPIMOV), epochs from -1 s to 2 s around the cue offset."""
    sfreq = 256.0
    X, t = _sines(sfreq, 768, [10.0, 70.0])
    t = t - 1.0
    X = X + 0.5 * t  # a linear trend
    pre = TrialPreprocessing(sfreq, tmin=-1.0)
    out = pre.fit_transform(X)
    thesis = TrialPreprocessing(
        sfreq, tmin=-1.0, h_freq=45.0, h_trans_bandwidth=5.0, resample_sfreq=100.0
    )
    np.testing.assert_array_equal(thesis.fit_transform(X), out)
    assert out.shape == (3, 2, 50)  # 500 ms at 100 Hz
    assert pre.sfreq_out_ == 100.0
    np.testing.assert_allclose(pre.times_, np.arange(50) / 100.0)
    # the 10 Hz component survives at the right phase, the 70 Hz one is gone
    expected = np.sin(2 * np.pi * 10.0 * (pre.times_ + 1.0))
    assert np.max(np.abs(out[0, 0] - (expected - _line_fit(expected)))) < 0.05
    # detrended: no mean and no slope left
    np.testing.assert_allclose(out.mean(axis=-1), 0.0, atol=1e-10)
    slope = np.polyfit(np.arange(50), out[0, 0], 1)[0]
    assert abs(slope) < 1e-10


def _line_fit(x):
    n = np.arange(len(x))
    return np.polyval(np.polyfit(n, x, 1), n)


def test_trial_preprocessing_window_position():
    """An impulse at 0.7 s after the cue offset lands at sample 20 of a (0.5, 1.0) s window."""
    sfreq = 200.0
    X = np.zeros((1, 1, 600))  # -1 s .. 2 s
    X[0, 0, int((1.0 + 0.7) * sfreq)] = 1.0
    pre = TrialPreprocessing(sfreq, tmin=-1.0, window=(0.5, 1.0), detrend=False)
    out = pre.fit_transform(X)
    assert out.shape == (1, 1, 50)
    assert np.argmax(out[0, 0]) == 20


def test_window_start_between_resampled_samples_is_refused():
    """Epochs from tmin=-0.004 s at 250 Hz resample to samples at -0.004 + k / 100 s: a window
    starting at 0 s began at -0.004 s while times_ said 0 s."""
    X = np.zeros((1, 1, 251))
    match = (
        r"window start 0 s \(in epochs from tmin=-0.004 s, resampled\) falls between samples "
        r"at 100 Hz \(0.4 samples\)"
    )
    with pytest.raises(ValueError, match=match):
        TrialPreprocessing(250.0, tmin=-0.004, window=(0.0, 0.5)).fit(X)
    # on the resampled grid, or not resampled: accepted
    pre = TrialPreprocessing(250.0, tmin=-0.2, window=(0.0, 0.5)).fit(np.zeros((1, 1, 300)))
    np.testing.assert_allclose(pre.times_[:2], [0.0, 0.01])
    TrialPreprocessing(250.0, tmin=-0.004, window=(0.0, 0.5), resample_sfreq=None).fit(X)


def test_trial_preprocessing_without_resampling_or_filter():
    X = np.random.default_rng(0).standard_normal((2, 3, 100))
    pre = TrialPreprocessing(100.0, h_freq=None, resample_sfreq=None, window=(0.2, 0.6))
    out = pre.fit_transform(X)
    np.testing.assert_allclose(out, __import__("scipy").signal.detrend(X[:, :, 20:60], axis=-1))


@pytest.mark.parametrize(
    "est",
    [
        BandPass(100.0, 8.0, 30.0),
        TrialPreprocessing(100.0, window=(0.0, 0.8), h_freq=40.0),
        ChannelPicker([3, 0, 1]),
    ],
)
def test_sklearn_contract_and_pipeline(est):
    rng = np.random.default_rng(1)
    X = rng.standard_normal((20, 4, 100))
    y = np.repeat([0, 1], 10)
    X[y == 1, 0] *= 3
    y[:4] = UNIVERSUM
    a = est.fit_transform(X, y)
    np.testing.assert_allclose(a, clone(est).fit(X).transform(X))
    np.testing.assert_allclose(pickle.loads(pickle.dumps(est)).transform(X), a)
    pipe = make_pipeline(clone(est), LogVariance(), LogisticRegression()).fit(X, y)
    assert pipe.predict(X).shape == (20,)


@pytest.mark.parametrize(
    ("est", "match"),
    [
        (BandPass(0.0), r"'sfreq' parameter of BandPass must be a float in the range \(0"),
        (BandPass(100.0, 30.0, 8.0), "l_freq=30.0 must be below h_freq=8.0"),
        (BandPass(100.0, 8.0, 60.0), "h_freq=60.0 must be None or in"),
        (BandPass(100.0, None, None), "cannot both be None"),
        (BandPass(100.0, 0.0, 30.0), "l_freq=0.0 must be None or in"),
        (BandPass(100.0, 8.0, 50.0), "h_freq=50.0 must be None or in"),
        (BandPass(100.0, 8.0, 8.0), "l_freq=8.0 must be below h_freq=8.0"),
        (BandPass(100.0, method="cheby"), "'method' parameter of BandPass must be a str among"),
        (TrialPreprocessing(100.0, h_freq=48.0, resample_sfreq=90.0), "Nyquist"),
        (TrialPreprocessing(100.0, h_freq=45.0, resample_sfreq=90.0), "Nyquist"),
        (TrialPreprocessing(100.0, window=(0.5, 0.2)), "start must be before"),
        (TrialPreprocessing(100.0, window=(0.5, 0.5)), "start must be before"),
        (TrialPreprocessing(100.0, tmin=np.inf), r"'tmin' parameter .* range \(-inf, inf\)"),
        (
            TrialPreprocessing(100.0, window=(0.5, 1.5)),
            r"not inside the epochs, which span \[0, 1\) s relative to the cue offset",
        ),
        (TrialPreprocessing(100.0, tmin=0.2), "not inside the epochs"),
        # one sample before the epochs start
        (
            TrialPreprocessing(
                100.0, tmin=0.0, window=(-0.01, 0.5), h_freq=None, resample_sfreq=None
            ),
            "not inside the epochs",
        ),
        (TrialPreprocessing(100.0, window="late"), "window must be"),
        # 4 ms at 100 Hz falls between samples (it would round to no sample at all)
        (
            TrialPreprocessing(100.0, window=(0.0, 0.004), resample_sfreq=None),
            r"falls between samples at 100 Hz \(0, 0.4 samples\)",
        ),
        # 100.4 samples: off the grid by a fraction of a sample, far from zero
        (
            TrialPreprocessing(100.0, tmin=-0.5, window=(0.0, 0.504)),
            r"window \(0.0, 0.504\) s \(in epochs from tmin=-0.5 s\) falls between samples "
            r"at 100 Hz \(50, 100.4 samples\)",
        ),
        # one input sample is a tenth of an output sample
        (
            TrialPreprocessing(100.0, window=(0.0, 0.01), h_freq=None, resample_sfreq=10.0),
            r"window \(0.0, 0.01\) s is shorter than one sample at the output rate "
            r"resample_sfreq=10 Hz",
        ),
        (
            TrialPreprocessing(100.0, tmin=None, window=(0.0, 0.5)),
            r"window \(0.0, 0.5\) s is 50 samples at 100 Hz, but the epochs have n_times=100",
        ),
    ],
)
def test_bad_parameters(est, match):
    X = np.zeros((2, 3, 100))
    with pytest.raises(ValueError, match=match):
        est.fit(X)


@pytest.mark.parametrize(
    "est",
    [
        BandPass(100.0, None, 30.0),
        BandPass(100.0, 8.0, None),
        BandPass(100.0, 0.5, 45.0),  # a slow-drift high-pass, a low-pass near Nyquist
        TrialPreprocessing(100.0, h_freq=30.0, h_trans_bandwidth=0.5),
        # the window spans the whole epoch, or a single sample
        TrialPreprocessing(100.0, tmin=0.0, window=(0.0, 1.0), h_freq=None, resample_sfreq=None),
        TrialPreprocessing(100.0, tmin=0.0, window=(0.0, 0.01), h_freq=None, resample_sfreq=None),
        # epochs starting between samples, the window on their samples (1.003 - 0.003 s is
        # 99.99999999999999 samples in floating point)
        TrialPreprocessing(100.0, tmin=0.003, window=(0.503, 1.003)),
    ],
)
def test_parameters_at_their_bounds_are_accepted(est):
    X = np.random.default_rng(0).standard_normal((2, 3, 100))
    assert est.fit(X).transform(X).shape[:2] == (2, 3)


@pytest.mark.parametrize(("h_freq", "resample_sfreq"), [(40.0, None), (50.0, 200.0)])
def test_trial_preprocessing_low_pass_equals_mne(h_freq, resample_sfreq):
    """Low-pass below the input Nyquist (MNE's filter), none at it; then MNE's resampling."""
    sfreq = 100.0
    X = np.random.default_rng(1).standard_normal((2, 3, 200))
    pre = TrialPreprocessing(
        sfreq,
        tmin=0.0,
        window=(0.0, 2.0),
        h_freq=h_freq,
        resample_sfreq=resample_sfreq,
        h_trans_bandwidth=4.0,
        detrend=False,
    )
    expected = X
    if h_freq < sfreq / 2:
        expected = mne.filter.filter_data(
            X, sfreq, None, h_freq, h_trans_bandwidth=4.0, phase="zero", verbose="error"
        )
    if resample_sfreq is not None:
        expected = mne.filter.resample(
            expected, up=resample_sfreq, down=sfreq, axis=-1, verbose="error"
        )
    np.testing.assert_allclose(pre.fit_transform(X), expected, atol=1e-12)
    if h_freq < sfreq / 2:
        assert not np.allclose(expected, X, atol=1e-3)  # the filter does something


def test_check_on_grid():
    """Times on the sample grid pass, up to the rounding of their arithmetic; a time a
    fraction of a sample off is refused, whatever its number of whole samples."""
    check_on_grid((0.0, 1.003 - 0.003, 2.0), 100.0, "window")
    with pytest.raises(
        ValueError,
        match=r"^window \(1.0, 2.003\) s falls between samples at 100 Hz \(100, 200.3 "
        r"samples\); use multiples of 0.01 s\.$",
    ):
        check_on_grid((1.0, 2.003), 100.0, "window (1.0, 2.003) s")


def test_bad_epochs():
    X = np.ones((2, 3, 100))
    with pytest.raises(ValueError, match="n_trials, n_channels, n_times"):
        BandPass(100.0).fit(X[0])
    bad = X.copy()
    bad[0, 0, 0] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        BandPass(100.0).fit(bad)
    pre = TrialPreprocessing(100.0).fit(X)
    with pytest.raises(ValueError, match="80 samples, but 100 were seen in fit"):
        pre.transform(X[:, :, :80])
    with pytest.raises(ValueError, match="2 channels, but TrialPreprocessing was fitted on 3"):
        pre.transform(X[:, :2])


CUT = {"h_freq": None, "resample_sfreq": None, "detrend": False}


@pytest.mark.parametrize(
    "pre",
    [
        # the registry pipelines' window step (a cut alone), and the thesis steps
        TrialPreprocessing(100.0, tmin=-0.5, window=(0.2, 1.2), **CUT),
        TrialPreprocessing(100.0, tmin=-0.5, window=(0.0, 0.5), **CUT),
        TrialPreprocessing(100.0, tmin=None, window=(0.2, 1.2), **CUT),
        TrialPreprocessing(100.0, tmin=-0.5, window=(0.2, 1.2)),
        # one step besides the cut: a low-pass below the Nyquist frequency (and above a third
        # of the rate), a resampling, a detrend
        TrialPreprocessing(100.0, tmin=-0.5, window=(0.2, 1.2), **{**CUT, "h_freq": 40.0}),
        TrialPreprocessing(100.0, tmin=-0.5, window=(0.2, 1.2), **{**CUT, "resample_sfreq": 50.0}),
        TrialPreprocessing(100.0, tmin=-0.5, window=(0.2, 1.2), **{**CUT, "detrend": True}),
    ],
)
def test_trial_path_equals_transform(pre):
    """The online decoder's single-trial path: the same output. A trial of another channel
    count is refused as by transform; so is a trial of another length than in fit when the
    window is cut out of it; with tmin=None (the trials are the window) it is kept whole, as
    an online window of another length."""
    n_times = 100 if pre.tmin is None else 200
    X = np.random.default_rng(0).standard_normal((3, 4, n_times))
    pre.fit(X)
    np.testing.assert_array_equal(pre.transform_trial(X[1]), pre.transform(X)[1])
    with pytest.raises(ValueError, match="3 channels, but TrialPreprocessing was fitted on 4"):
        pre.transform_trial(X[1, :3])
    if pre.tmin is None:
        np.testing.assert_array_equal(pre.transform_trial(X[1, :, 1:]), X[1, :, 1:])
        np.testing.assert_array_equal(pre.transform(X[:, :, 1:]), X[:, :, 1:])
        return
    with pytest.raises(ValueError, match=f"{n_times - 1} samples, but {n_times} were seen"):
        pre.transform_trial(X[1, :, 1:])


@pytest.mark.parametrize("tmin", [-0.5, None])
def test_window_cut_takes_the_lean_path(tmin, monkeypatch):
    """The registry pipelines' window step (a cut alone) slices a trial of the fitted shape
    without the batch ``transform``: the online decoder runs it on every update, and its
    latency is why the lean path exists. Its output equals transform's (test above), so only
    the call tells the paths apart: ``transform`` is replaced on the instance by one that
    raises (a monkeypatch, as no output can show which path ran)."""
    n_times = 100 if tmin is None else 200
    X = np.random.default_rng(0).standard_normal((3, 4, n_times))
    pre = TrialPreprocessing(100.0, tmin=tmin, window=(0.2, 1.2), **CUT).fit(X)
    expected = pre.transform(X)[1]

    def batch_path(X):
        raise AssertionError("transform_trial went through transform")

    monkeypatch.setattr(pre, "transform", batch_path)
    np.testing.assert_array_equal(pre.transform_trial(X[1]), expected)


def test_channel_picker_selects_and_reorders():
    X = np.random.default_rng(0).standard_normal((3, 4, 10))
    picker = ChannelPicker([2, 0]).fit(X)
    np.testing.assert_array_equal(picker.transform(X), X[:, [2, 0]])
    np.testing.assert_array_equal(picker.transform_trial(X[1]), X[1, [2, 0]])
    assert pickle.loads(pickle.dumps(picker)).transform(X).shape == (3, 2, 10)
    with pytest.raises(ValueError, match="out of range"):
        ChannelPicker([4]).fit(X)
    with pytest.raises(ValueError, match="out of range"):
        ChannelPicker([-1]).fit(X)
    # the range is the channels' (axis 1), whatever the number of trials
    with pytest.raises(ValueError, match="out of range"):
        ChannelPicker([3]).fit(np.zeros((10, 3, 5)))
    assert ChannelPicker([3]).fit_transform(np.zeros((2, 4, 5))).shape == (2, 1, 5)
    for picks in ([], np.array([], dtype=int), [0.5]):
        with pytest.raises(ValueError, match="non-empty sequence of int"):
            ChannelPicker(picks).fit(X)
    with pytest.raises(ValueError, match="4 channels"):
        picker.transform(X[:, :3])


@pytest.mark.parametrize(
    "step",
    [
        BandPass(100.0, 8.0, 30.0),
        TrialPreprocessing(100.0, window=(0.2, 1.2), h_freq=None, resample_sfreq=None),
        ChannelPicker([2, 0, 1]),
    ],
    ids=lambda s: type(s).__name__,
)
def test_trialwise_steps_let_model_selection_share_the_csp_work(step):
    """A trial-wise step gives each trial the same output whatever trials it was fitted on,
    so model selection applies it once and CSP computes its per-trial statistics once for
    all inner folds and the refit (``fit_transform_folds``), with the features of a fit per
    fold and of a fit on all trials."""
    from sklearn.pipeline import Pipeline

    from bci_universum.features import CSP
    from bci_universum.training import _shared_feature_fits

    rng = np.random.default_rng(3)
    X = rng.normal(size=(24, 3, 150))
    y = np.array([0, 1] * 10 + [UNIVERSUM] * 4)
    folds = [(np.arange(0, 16), np.arange(16, 24)), (np.arange(8, 24), np.arange(0, 8))]
    for train, _ in folds:
        np.testing.assert_array_equal(
            clone(step).fit(X[train], y[train]).transform(X[:5]),
            clone(step).fit(X, y).transform(X[:5]),
        )
    features = Pipeline([("step", step), ("csp", CSP(2))])
    shared = _shared_feature_fits(features, X, y, folds)
    assert shared is not None
    steps, F, per_fold = shared
    for (train, valid), (F_fit, F_valid) in zip(folds, per_fold, strict=True):
        fitted = clone(features).fit(X[train], y[train])
        np.testing.assert_allclose(F_fit, fitted.transform(X[train]), rtol=1e-9)
        np.testing.assert_allclose(F_valid, fitted.transform(X[valid]), rtol=1e-9)
    fitted = clone(features).fit(X, y)
    np.testing.assert_allclose(F, fitted.transform(X), rtol=1e-9)
    np.testing.assert_allclose(Pipeline(steps).transform(X), F, rtol=1e-9)
