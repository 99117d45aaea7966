"""Signal-quality checks against numpy/scipy/MNE and closed forms, on synthetic defects and a
real recording with unconnected electrodes."""

import mne
import numpy as np
import pytest
from scipy import stats

from acquisition.receiver import StreamEvent
from bci_universum.quality import (
    CHECKS,
    QualityThresholds,
    assess_quality,
    clipped_fraction,
    dropped_samples,
    line_noise_ratio,
    peak_to_peak,
    robust_zscores,
)

SFREQ = 250.0
UV = 1e-6


def _eeg(n_ch=8, seconds=10.0, seed=0):
    """Independent channels: 10 µV white noise plus a 10 Hz rhythm of random phase, with
    electrode gains spread over ±40 % as on a real cap."""
    rng = np.random.default_rng(seed)
    t = np.arange(int(seconds * SFREQ)) / SFREQ
    phase = rng.uniform(0, 2 * np.pi, (n_ch, 1))
    gains = rng.permutation(np.exp(np.linspace(-0.4, 0.4, n_ch)))[:, np.newaxis]
    eeg = 10 * UV * rng.standard_normal((n_ch, t.size)) + 5 * UV * np.sin(
        2 * np.pi * 10 * t + phase
    )
    return gains * eeg, t


@pytest.fixture(scope="module")
def defects():
    """One channel per defect: 0 good, 1 flat, 2 clipped, 3 line noise, 4 artefact,
    5 low variance, 6 non-finite, 7 good."""
    data, t = _eeg()
    data[1] = 25 * UV  # an unconnected input holding its offset
    low, high = np.percentile(data[2], [5, 95])
    data[2] = np.clip(data[2], low, high)
    data[3] += 20 * UV * np.sin(2 * np.pi * 50 * t)
    data[4, 1000] += 1e-3  # a 1 mV electrode pop
    data[5] *= 0.02
    data[6, [100, 2000]] = np.nan
    return data


def test_metrics_against_numpy(defects):
    np.testing.assert_allclose(peak_to_peak(defects[[0, 1, 7]]), np.ptp(defects[[0, 1, 7]], 1))
    x = defects[2]
    expected = np.mean((x == x.max()) | (x == x.min()))
    assert clipped_fraction(defects)[2] == pytest.approx(expected)
    assert expected == pytest.approx(0.10, abs=0.002)  # clipped at the 5th and 95th percentiles
    values = np.log(np.random.default_rng(1).lognormal(size=40))
    reference = (values - np.median(values)) / stats.median_abs_deviation(values, scale="normal")
    np.testing.assert_allclose(robust_zscores(values), reference, rtol=1e-4)


def test_line_noise_ratio_closed_form():
    """White noise of variance s² and a 50 Hz sine of amplitude A: A²/2 in the line band over
    s² · (bandwidth / Nyquist) in 1–40 Hz, plus the noise inside the line band."""
    rng = np.random.default_rng(3)
    t = np.arange(int(60 * SFREQ)) / SFREQ
    s, amplitude = 10 * UV, 20 * UV
    x = s * rng.standard_normal(t.size) + amplitude * np.sin(2 * np.pi * 50 * t)
    ratio = line_noise_ratio(x[np.newaxis], SFREQ, 50.0)[0]
    df = 0.5  # Welch bins of 2 s segments
    density = s**2 / (SFREQ / 2)  # one-sided white-noise power per Hz
    n_band = np.sum((np.arange(0, 125.5, df) >= 1) & (np.arange(0, 125.5, df) <= 40))
    n_line = np.sum(np.abs(np.arange(0, 125.5, df) - 50) <= 1)
    expected = (amplitude**2 / 2 + density * df * n_line) / (density * df * n_band)
    assert ratio == pytest.approx(expected, rel=0.05)
    # no line noise at all: the ratio is the bandwidths' ratio
    quiet = line_noise_ratio(s * rng.standard_normal((1, t.size)), SFREQ, 50.0)[0]
    assert quiet == pytest.approx(n_line / n_band, rel=0.15)
    assert np.isnan(line_noise_ratio(x[np.newaxis], 80.0, 50.0)[0])  # above Nyquist


def test_each_defect_is_named(defects):
    report = assess_quality(defects, SFREQ, [f"E{k}" for k in range(8)])
    assert report.bad_channels == {
        "E1": ["flat"],
        "E2": ["clipped"],
        "E3": ["line_noise"],
        "E4": ["amplitude"],
        "E5": ["variance"],
        "E6": ["nonfinite"],
    }
    assert report.metrics["n_nonfinite"][6] == 2
    assert report.metrics["variance_z"][5] < -5
    text = report.summary()
    assert "6 bad channel(s)" in text and "E1: flat" in text and "E6: 2 non-finite" in text
    assert "E0" not in text and "E7" not in text
    assert not report.ok


def test_clean_data_passes():
    data, _ = _eeg(n_ch=16, seed=5)
    report = assess_quality(data, SFREQ, thresholds=QualityThresholds(line_freq=60.0))
    assert report.ok, report.summary()
    assert report.summary().endswith("all good.")
    assert set(report.bad) == set(CHECKS)


def test_dropped_samples_from_events():
    data, _ = _eeg(seconds=4.0)
    events = [
        StreamEvent("gap", 1.0, 3, "3 samples missing"),
        StreamEvent("silence", 2.0, 0, "silent"),
        {"kind": "gap", "time": 3.0, "n_samples": 2, "detail": "from a sidecar"},
        {"kind": "nonfinite", "time": 3.5, "n_samples": 7, "detail": ""},
    ]
    assert dropped_samples(events) == 5
    report = assess_quality(data, SFREQ, events=events)
    assert report.n_dropped == 5
    assert report.dropped_fraction == pytest.approx(5 / (1000 + 5))
    assert not report.stream_ok and not report.ok
    assert "stream: 5 sample(s) dropped" in report.summary()
    # 0.5 % is above the default 0.1 %; a looser threshold accepts it
    loose = QualityThresholds(max_dropped_fraction=0.01)
    assert assess_quality(data, SFREQ, events=events, thresholds=loose).stream_ok


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"data": np.zeros(500)}, "n_channels, n_times"),
        ({"data": np.zeros((2, 100))}, "at least one second"),
        ({"sfreq": 0.0}, "sfreq"),
        ({"ch_names": ["a"]}, "1 channel names for 2"),
    ],
)
def test_bad_input(kwargs, match):
    args = {"data": np.zeros((2, 500)), "sfreq": SFREQ, **kwargs}
    with pytest.raises(ValueError, match=match):
        assess_quality(args.pop("data"), args.pop("sfreq"), **args)


def test_bad_thresholds():
    with pytest.raises(ValueError, match="flat_ptp"):
        QualityThresholds(flat_ptp=-1)
    with pytest.raises(ValueError, match="fractions"):
        QualityThresholds(clip_fraction=2.0)


@pytest.mark.data
def test_real_recording_unconnected_electrodes(data_dir):
    """The OpenBCI runs of bci4als/assaf leave electrodes 14-16 unconnected; MNE's own
    amplitude annotator finds the same flat channels."""
    from bci_universum.datasets import read_recording

    raw = read_recording(data_dir / "bci4als/assaf/Test1/EEG.xdf", verbose="error")
    raw.crop(60, 70)
    report = assess_quality(raw.get_data(), raw.info["sfreq"], raw.ch_names)
    flat = [name for name, checks in report.bad_channels.items() if "flat" in checks]
    assert flat == ["13", "14", "15"]
    _, mne_bads = mne.preprocessing.annotate_amplitude(
        raw, flat=QualityThresholds().flat_ptp, bad_percent=50, verbose="error"
    )
    assert sorted(mne_bads) == flat
    # the connected channels carry signal: none is flat, clipped or non-finite
    for name in raw.ch_names[:13]:
        assert not {"flat", "clipped", "nonfinite"} & set(report.bad_channels.get(name, []))


def test_variance_needs_both_the_z_score_and_the_ratio():
    """On identical channels the MAD is tiny: a 1.5× channel has a huge z but is in range;
    a 4× channel is out of range."""
    rng = np.random.default_rng(7)
    data = 10 * UV * rng.standard_normal((10, 2500))
    data[3] *= 1.5
    data[6] *= 4.0
    report = assess_quality(data, SFREQ)
    assert report.metrics["variance_z"][3] > 5
    assert list(report.bad_channels) == ["6"]
    assert report.bad_channels["6"] == ["variance"]
