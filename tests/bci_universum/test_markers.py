"""Marker maps: one description (streams) and a recording's annotations (files)."""

from datetime import datetime, timezone

import mne
import numpy as np
import pytest

from bci_universum.markers import MARKER_MAPS, annotation_samples, apply_marker_map, map_marker


def test_map_marker_numeric_keys():
    assert map_marker("3.000000000000000", MARKER_MAPS["bci4als"]) == "cue/right"
    assert map_marker("1111.000000000000", MARKER_MAPS["bci4als"]) == "trial/start"
    assert map_marker("T0", MARKER_MAPS["eegmmidb"]) == "universum/rest"
    assert map_marker("cue/left", {"x": None}) == "cue/left"
    assert map_marker("BAD boundary", {"BAD boundary": None}) is None


def test_apply_marker_map_renames_drops_and_keeps_timing():
    info = mne.create_info(["a", "b"], 100.0, "eeg")
    raw = mne.io.RawArray(np.zeros((2, 1000)), info, verbose="error")
    raw.set_annotations(
        mne.Annotations(
            [1.0, 2.0, 3.0, 4.0],
            [0.5, 0.0, 0.25, 1.0],
            ["StimulusCode/1", "StimulusCode/2", "BAD", "trial/start"],
        )
    )
    before = raw.annotations.copy()
    out = apply_marker_map(raw, "StimulusCode/1=cue/left,StimulusCode/2=cue/right,BAD=")
    assert out is raw
    ann = raw.annotations
    assert list(ann.description) == ["cue/left", "cue/right", "trial/start"]
    np.testing.assert_array_equal(ann.onset, before.onset[[0, 1, 3]])
    np.testing.assert_array_equal(ann.duration, before.duration[[0, 1, 3]])
    assert apply_marker_map(raw, None).annotations == raw.annotations
    with pytest.raises(ValueError, match="neither a preset"):
        apply_marker_map(raw, "nonsense")


@pytest.mark.parametrize("meas_date", [None, datetime(2026, 1, 1, tzinfo=timezone.utc)])
@pytest.mark.parametrize("first_samp", [0, 1000])
def test_annotation_samples_count_from_the_first_sample_as_mne_events_do(
    tmp_path, meas_date, first_samp
):
    """With or without a measurement date, from a first sample at 0 or not (a recording
    saved from a longer one), and read back from a FIF: MNE's events, less first_samp."""
    info = mne.create_info(["a"], 100.0, "eeg")
    raw = mne.io.RawArray(np.zeros((1, 3000)), info, first_samp=first_samp, verbose="error")
    raw.set_meas_date(meas_date)
    # onsets relative to the first sample (orig_time None); MNE stores them from time 0
    raw.set_annotations(mne.Annotations([0.0, 1.004, 2.5, 29.99], 0.0, list("wxyz")))
    raw.save(tmp_path / "a_raw.fif", verbose="error")
    for recording in (raw, mne.io.read_raw_fif(tmp_path / "a_raw.fif", verbose="error")):
        events, _ = mne.events_from_annotations(recording, verbose="error")
        samples = annotation_samples(recording)
        np.testing.assert_array_equal(samples, events[:, 0] - recording.first_samp)
        assert samples.tolist() == [0, 100, 250, 2999]
