"""Spike counts over loopback LSL: stream, markers, and online decisions equal to offline ones."""

import numpy as np
import pytest

from acquisition import SpikeCountSource
from acquisition.spike_source import label_marker, spike_counts_to_raw


def test_counts_to_raw_lays_trials_end_to_end_with_markers():
    counts = np.arange(2 * 3 * 4, dtype=float).reshape(2, 3, 4)
    raw = spike_counts_to_raw(counts, 0.05, labels=[22.5, 90.0])
    assert raw.info["sfreq"] == pytest.approx(20.0)
    assert raw.get_channel_types() == ["misc"] * 3
    np.testing.assert_array_equal(raw.get_data()[:, 4:8], counts[1])
    assert list(raw.annotations.description) == [
        "trial/start",
        "cue/22.5",
        "trial/start",
        "cue/90",
    ]
    np.testing.assert_allclose(raw.annotations.onset, [0, 0, 0.2, 0.2])
    assert label_marker(np.float64(0.0)) == "cue/0" and label_marker("up") == "cue/up"
    with pytest.raises(ValueError, match="non-negative"):
        spike_counts_to_raw(-counts, 0.05)
    with pytest.raises(ValueError, match="labels has shape"):
        spike_counts_to_raw(counts, 0.05, labels=[1.0])
    with pytest.raises(ValueError, match="n_trials, n_neurons, n_bins"):
        spike_counts_to_raw(counts[0], 0.05)


@pytest.mark.data
def test_m1_reach_windows_as_a_source(data_dir, monkeypatch):
    monkeypatch.setenv("BCI_UNIVERSUM_DATA", str(data_dir))
    source = SpikeCountSource.from_m1(name="m1-not-started")
    assert source.counts.shape == (570, 171, 10) and source.raw.info["sfreq"] == 20.0
    np.testing.assert_array_equal(source.raw.get_data()[:, 10:20], source.counts[1])
    cues = [text for text in source.marker_texts if text.startswith("cue/")]
    assert cues == [label_marker(angle) for angle in source.labels]
    np.testing.assert_array_equal(source.marker_samples[1::2], np.arange(570) * 10)
