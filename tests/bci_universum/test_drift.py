"""Drift monitor: divergences, synthetic shifts, and real recordings (notes §15, §18.6)."""

import mne
import numpy as np
import pytest
import pyxdf
from scipy import stats
from scipy.signal import welch
from sklearn.base import clone

from bci_universum.drift import (
    DriftMonitor,
    cluster_histogram,
    f_divergence,
    nearest_centre,
    verdict,
)


def test_divergences_equal_closed_forms():
    rng = np.random.default_rng(0)
    s, t = rng.dirichlet(np.ones(7)), rng.dirichlet(np.ones(7))
    assert f_divergence(s, t, "kl") == pytest.approx(stats.entropy(s, t))
    assert f_divergence(s, t, "tv") == pytest.approx(np.abs(s - t).sum())
    assert f_divergence(s, t, "hellinger") == pytest.approx(np.sum((np.sqrt(s) - np.sqrt(t)) ** 2))
    assert f_divergence(s, t, "chi2") == pytest.approx(np.sum((s - t) ** 2 / t))
    for kind in ("tv", "kl", "hellinger", "chi2"):
        assert f_divergence(s, s, kind) == 0
    with pytest.raises(ValueError, match="Unknown divergence 'js'"):
        f_divergence(s, t, "js")
    with pytest.raises(ValueError, match="differ in shape"):
        f_divergence(s, t[:3])


def test_histogram_smoothing_keeps_empty_bins_finite():
    hist = cluster_histogram(np.zeros(10, dtype=int), 4, smoothing=0.5)
    np.testing.assert_allclose(hist, np.array([10.5, 0.5, 0.5, 0.5]) / 12)
    for kind in ("kl", "chi2"):
        assert np.isfinite(f_divergence(hist, hist[::-1], kind))


def test_nearest_centre_and_verdict():
    centres = np.array([[0.0, 0.0], [10.0, 0.0]])
    np.testing.assert_array_equal(
        nearest_centre(np.array([[1.0, 1.0], [9.0, -1.0]]), centres), [0, 1]
    )
    assert verdict(0.1, 0.2) == "stationary"
    assert verdict(0.3, 0.2) == "modest"
    assert verdict(2.1, 0.2) == "severe"


def _gaussian(rng, n, shift=0.0):
    return rng.standard_normal((n, 2)) + np.array([shift, 0.0])


def test_known_shift_is_severe_and_no_shift_is_stationary():
    """Regression test of the swapped Algorithm 9 branches: a 3σ shift is non-stationary."""
    rng = np.random.default_rng(1)
    monitor = DriftMonitor(
        n_clusters=5, window_size=400, n_resamples=20, resampling="random", random_state=0
    ).fit(_gaussian(rng, 2000))
    shifted = monitor.score(_gaussian(rng, 400, shift=3.0))
    assert shifted.verdict == "severe" and shifted.alarm
    assert shifted.ratio > 10
    same = monitor.score(_gaussian(rng, 400))
    assert same.verdict == "stationary" and not same.alarm


@pytest.mark.parametrize("n_clusters", [10, 20, 50])
def test_divergences_grow_with_the_shift(n_clusters):
    """Trend of thesis Tables 4.16–4.19: every divergence increases with the mean shift."""
    rng = np.random.default_rng(n_clusters)
    monitor = DriftMonitor(n_clusters=n_clusters, window_size=1000, n_resamples=2, random_state=0)
    monitor.fit(_gaussian(rng, 3000))
    windows = [_gaussian(rng, 1000, shift) for shift in (0.0, 1.0, 2.0, 3.0)]
    for kind in ("tv", "kl", "hellinger", "chi2"):
        values = [monitor.set_params(divergence=kind).score(w).divergence for w in windows]
        assert np.all(np.diff(values) > 0), (kind, values)


def test_false_alarm_rate_on_stationary_data():
    """With reference_quantile=0.95, about 5 % of stationary windows alarm; never 'severe'."""
    rng = np.random.default_rng(2)
    monitor = DriftMonitor(n_clusters=6, window_size=30, n_resamples=100, random_state=0)
    monitor.fit(_gaussian(rng, 600))
    reports = [monitor.score(_gaussian(rng, 30)) for _ in range(100)]
    assert np.mean([r.alarm for r in reports]) <= 0.15
    assert not any(r.verdict == "severe" for r in reports)
    assert np.mean([r.ratio < 1 for r in reports]) >= 0.85


def test_update_is_a_rolling_window():
    rng = np.random.default_rng(3)
    monitor = DriftMonitor(n_clusters=4, window_size=20, n_resamples=10, random_state=0)
    monitor.fit(_gaussian(rng, 200))
    stream = _gaussian(rng, 45)
    reports = [monitor.update(x) for x in stream]
    assert all(r is None for r in reports[:19])
    for k in (19, 30, 44):
        assert reports[k] == monitor.score(stream[k - 19 : k + 1])
    monitor.reset()
    assert monitor.update(stream[0]) is None


def test_clone_and_reproducibility():
    rng = np.random.default_rng(4)
    X = _gaussian(rng, 300)
    first = DriftMonitor(n_clusters=4, n_resamples=10, random_state=7).fit(X)
    second = clone(first).fit(X)
    np.testing.assert_array_equal(first.reference_divergences_, second.reference_divergences_)


@pytest.mark.parametrize(
    ("params", "match"),
    [
        ({"n_clusters": 0}, "n_clusters must be a positive integer"),
        ({"window_size": 2.5}, "window_size must be a positive integer"),
        ({"divergence": "js"}, "divergence must be one of"),
        ({"resampling": "bootstrap"}, "resampling must be one of"),
        ({"reference_quantile": 1.5}, "reference_quantile must be in"),
        ({"smoothing": 0}, "smoothing must be positive"),
        ({"window_size": 100}, "needs at least window_size"),
    ],
)
def test_bad_parameters(params, match):
    X = _gaussian(np.random.default_rng(5), 100)
    with pytest.raises(ValueError, match=match):
        DriftMonitor(**params).fit(X)


def test_bad_inputs():
    rng = np.random.default_rng(6)
    X = _gaussian(rng, 100)
    X_nan = X.copy()
    X_nan[5, 0] = np.nan
    with pytest.raises(ValueError, match="calibration features"):
        DriftMonitor().fit(X_nan)
    monitor = DriftMonitor(n_clusters=3, window_size=10, n_resamples=5, random_state=0).fit(X)
    with pytest.raises(ValueError, match="window_size=10"):
        monitor.score(X[:9])
    with pytest.raises(ValueError, match="2 features"):
        monitor.score(np.ones((10, 3)))
    with pytest.raises(ValueError, match="one feature vector of 2 features"):
        monitor.update(np.ones(3))
    with pytest.raises(ValueError, match="NaN"):
        monitor.update(np.array([np.nan, 0.0]))


# Real recordings ---------------------------------------------------------------------------

#: Sensorimotor channels present in both eegmmidb (BCI2000 cap) and the BCI4ALS OpenBCI cap, so
#: that the cross-device comparison uses the same features.
CHANNELS = ["FC5", "FC1", "FC2", "FC6", "C3", "Cz", "C4", "CP5", "CP1", "CP2", "CP6"]
#: Channel order of the BCI4ALS stream (``EEG_chans.mat``; its T3/T4 are T7/T8).
BCI4ALS_ORDER = [
    "C3",
    "C4",
    "CP1",
    "CP2",
    "FC1",
    "FC2",
    "CP5",
    "CP6",
    "FC5",
    "FC6",
    "T7",
    "T8",
    "Cz",
]
BANDS = ((4.0, 8.0), (8.0, 13.0), (13.0, 30.0))


def _log_band_power(data_uv, sfreq, window_s=2.0):
    """Log theta/alpha/beta power per channel in consecutive 2-s windows (1 Hz high-pass)."""
    data_uv = mne.filter.filter_data(data_uv, sfreq, 1.0, None, verbose="error")
    n = int(window_s * sfreq)
    rows = []
    for k in range(data_uv.shape[1] // n):
        freqs, psd = welch(data_uv[:, k * n : (k + 1) * n], fs=sfreq, nperseg=n // 2)
        rows.append(
            np.concatenate(
                [np.log(psd[:, (freqs >= lo) & (freqs < hi)].mean(1)) for lo, hi in BANDS]
            )
        )
    return np.array(rows)


def _eegmmidb(data_dir, run):
    path = mne.datasets.eegbci.load_data(1, [run], path=data_dir, update_path=False)[0]
    raw = mne.io.read_raw_edf(path, preload=True, verbose="error")
    mne.datasets.eegbci.standardize(raw)
    raw.pick(CHANNELS)
    return _log_band_power(raw.get_data(units="uV"), raw.info["sfreq"])


def _bci4als(data_dir, test):
    streams, _ = pyxdf.load_xdf(str(data_dir / "bci4als" / "assaf" / f"Test{test}" / "EEG.xdf"))
    eeg = next(s for s in streams if s["info"]["type"][0] == "EEG")
    stamps = eeg["time_stamps"]
    sfreq = (len(stamps) - 1) / (stamps[-1] - stamps[0])  # effective rate (runs drop samples)
    data = np.asarray(eeg["time_series"], dtype=float).T
    return _log_band_power(data[[BCI4ALS_ORDER.index(c) for c in CHANNELS]], sfreq)


@pytest.fixture(scope="module")
def eeg_monitor(data_dir):
    calibration = np.vstack([_eegmmidb(data_dir, 4), _eegmmidb(data_dir, 8)])
    return DriftMonitor(n_clusters=8, window_size=30, random_state=0).fit(calibration)


def _windows(features, size=30, step=5):
    return [features[i : i + size] for i in range(0, len(features) - size + 1, step)]


@pytest.mark.data
def test_held_out_run_of_same_condition_raises_no_alarm(data_dir, eeg_monitor):
    """Calibration on imagery runs R04/R08; the later imagery run R12 is the same condition."""
    held_out = _eegmmidb(data_dir, 12)
    reports = [eeg_monitor.score(w) for w in _windows(held_out)]
    assert len(reports) >= 5
    assert not any(r.alarm for r in reports), [r.ratio for r in reports]
    eeg_monitor.reset()
    streamed = [eeg_monitor.update(x) for x in held_out]
    assert not any(r.alarm for r in streamed if r is not None)


@pytest.mark.data
def test_eyes_closed_baseline_raises_an_alarm(data_dir, eeg_monitor):
    """R02 (eyes-closed rest, 60 s) is another condition with strong alpha."""
    reports = [eeg_monitor.score(w) for w in _windows(_eegmmidb(data_dir, 2))]
    assert reports and all(r.alarm for r in reports)


@pytest.mark.data
def test_other_subject_and_device_raises_an_alarm(data_dir, eeg_monitor):
    """A BCI4ALS OpenBCI recording (another subject and amplifier), same channels and features."""
    reports = [eeg_monitor.score(w) for w in _windows(_bci4als(data_dir, 1))]
    assert len(reports) >= 5 and all(r.alarm for r in reports)
