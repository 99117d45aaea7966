"""Spike counts over loopback LSL: stream, markers, and online decisions equal to offline ones."""

import numpy as np
import pytest

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
