"""Epoching of labelled and universum trials from annotated recordings; EpochSet; loaders."""

import json
import re
import warnings

import mne
import numpy as np
import pytest

from bci_universum import UNIVERSUM_STR
from bci_universum.datasets import (
    EpochSet,
    epochs_from_raw,
    epochset_from_raw,
    load_eegmmidb,
    load_recording,
    load_recordings,
    marker_event_id,
    recording_name,
)


def _raw(descriptions, onsets, sfreq=100.0, seconds=30.0, n_channels=3):
    rng = np.random.default_rng(0)
    info = mne.create_info([f"EEG{i}" for i in range(n_channels)], sfreq, "eeg")
    raw = mne.io.RawArray(
        rng.standard_normal((n_channels, int(seconds * sfreq))), info, verbose=False
    )
    raw.set_annotations(mne.Annotations(onsets, 0.0, descriptions))
    return raw


def test_epochs_follow_markers_and_label_universum():
    desc = ["cue/left", "cue/right", "universum/rest", "cue/left", "universum/word", "trial/end"]
    onsets = [1.0, 5.0, 9.0, 13.0, 17.0, 20.0]
    raw = _raw(desc, onsets)
    X, y, _epochs = epochs_from_raw(raw, tmin=0.5, tmax=2.5)
    assert list(y) == ["left", "right", "universum", "left", "universum"]
    assert X.shape == (5, 3, 201)
    start = round((13.0 + 0.5) * 100)
    np.testing.assert_array_equal(X[3], raw.get_data()[:, start : start + 201])


def test_explicit_mapping_and_no_universum():
    raw = _raw(["T1", "T2", "T0", "T1", "T2"], [1.0, 5.0, 9.0, 13.0, 17.0])
    _X, y, _ = epochs_from_raw(raw, classes={"T1": "left", "T2": "right"}, universum=None)
    assert list(y) == ["left", "right", "left", "right"]
    _, y, _ = epochs_from_raw(raw, classes={"T1": "left", "T2": "right"}, universum=["T0"])
    assert list(y) == ["left", "right", "universum", "left", "right"]


def test_universum_only_recording():
    raw = _raw(["universum/rest", "trial/end", "universum/rest"], [1.0, 5.0, 9.0])
    raw.annotations.append(9.2, 0.5, "BAD_ACQ_SKIP")
    X, y, _ = epochs_from_raw(raw, classes=(), universum="universum/")
    assert list(y) == ["universum"]
    assert X.shape == (1, 3, 201)
    with pytest.raises(ValueError, match="at least two"):
        epochs_from_raw(raw, classes=(), universum=None)
    with pytest.raises(ValueError, match="No universum markers"):
        epochs_from_raw(raw, classes=(), universum="other/")


def test_bad_segments_and_non_finite_trials_are_dropped():
    raw = _raw(["cue/left", "cue/right", "cue/left", "cue/right"], [1.0, 5.0, 9.0, 13.0])
    raw.annotations.append(5.2, 0.5, "BAD_ACQ_SKIP")
    data = raw.get_data()
    data[0, 1000] = np.nan
    raw._data[:] = data
    X, y, epochs = epochs_from_raw(raw, universum=None)
    assert list(y) == ["left", "right"]
    assert np.isfinite(X).all()
    assert any("NON_FINITE" in log for log in epochs.drop_log)


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"classes": ["cue/left", "cue/up"]}, r"cue/up"),
        ({"classes": ["cue/left"]}, "at least two"),
        ({"universum": ["universum/sleep"]}, "universum/sleep"),
        ({"classes": {"cue/left": "universum", "cue/right": "r"}}, "sentinel"),
        ({"tmin": 2.0, "tmax": 1.0}, "tmax"),
        ({"tmin": 0.0, "tmax": 40.0}, "Fewer than two classes"),
    ],
)
def test_bad_requests_are_refused(kwargs, match):
    raw = _raw(["cue/left", "cue/right", "universum/rest"], [1.0, 5.0, 9.0])
    with pytest.raises(ValueError, match=match):
        epochs_from_raw(raw, **kwargs)


def test_marker_event_id_prefix():
    ann = mne.Annotations([0, 1, 2, 3], 0, ["cue/a", "cue/b", "universum/x", "universumish"])
    event_id, labels = marker_event_id(ann, ["cue/a", "cue/b"], "universum/")
    assert set(event_id) == {"cue/a", "cue/b", "universum/x"}
    assert labels[event_id["universum/x"]] == "universum"
    # codes from 1, as MNE numbers annotations: 0 means "no event" on a stim channel
    raw = _raw(["cue/a", "cue/b", "universum/x"], [1.0, 2.0, 3.0])
    _, auto = mne.events_from_annotations(raw, verbose=False)
    assert sorted(event_id.values()) == sorted(auto.values())


@pytest.mark.data
def test_eegmmidb_imagery_runs(data_dir):
    paths = mne.datasets.eegbci.load_data(1, [4], path=data_dir, update_path=False)
    raw = mne.io.read_raw_edf(paths[0], preload=True, verbose=False)
    X, y, _ = epochs_from_raw(raw, {"T1": "left", "T2": "right"}, ["T0"], tmin=1.0, tmax=2.0)
    assert {"left", "right", "universum"} == set(y)
    assert (y == "left").sum() + (y == "right").sum() == 15
    assert X.shape[1] == 64


def test_several_recordings_are_concatenated(tmp_path):
    calibration = _raw(["cue/left", "cue/right", "cue/left"], [1.0, 5.0, 9.0])
    universum = _raw(["universum/rest", "universum/rest", "trial/end"], [2.0, 6.0, 9.0])
    universum.reorder_channels(universum.ch_names[::-1])
    fname = tmp_path / "universum_raw.fif"
    universum.save(fname, verbose="error")
    no_trials = _raw(["trial/end"], [1.0])
    X, y, epochs = epochs_from_raw([calibration, fname, no_trials], verbose="error")
    assert list(y) == ["left", "right", "left", "universum", "universum"]
    assert epochs.ch_names == calibration.ch_names
    start = round(6.5 * 100)  # second universum trial, channels back in the first order
    expected = universum.copy().reorder_channels(calibration.ch_names).get_data()
    np.testing.assert_allclose(X[4], expected[:, start : start + 201], rtol=1e-6)


def test_errors_name_a_recording_by_its_file(tmp_path):
    calibration = _raw(["cue/left", "cue/right"], [1.0, 5.0])
    other = _raw(["cue/left"], [1.0], n_channels=2)
    fname = tmp_path / "other_raw.fif"
    other.save(fname, verbose="error")
    read = mne.io.read_raw_fif(fname, verbose="error")
    for second in (fname, read):
        with pytest.raises(ValueError, match=f"^{re.escape(str(fname))} has other channels"):
            epochs_from_raw([calibration, second], verbose="error")
    assert recording_name(fname) == recording_name(read) == str(fname)
    assert recording_name(other) == repr(other)  # a Raw built in memory has no file


def test_several_recordings_must_match():
    calibration = _raw(["cue/left", "cue/right"], [1.0, 5.0])
    with pytest.raises(ValueError, match=r"missing: \['EEG2'\]"):
        epochs_from_raw([calibration, _raw(["cue/left"], [1.0], n_channels=2)])
    with pytest.raises(ValueError, match=r"200\.0 Hz"):
        epochs_from_raw([calibration, _raw(["cue/left"], [1.0], sfreq=200.0)])
    with pytest.raises(FileNotFoundError, match="absent"):
        epochs_from_raw([calibration, "absent_raw.fif"])
    with pytest.raises(ValueError, match="No recordings"):
        epochs_from_raw([])


def _small_set(n=6, runs="1"):
    y = ["a", "b", UNIVERSUM_STR] * (n // 3)
    kinds = ["", "", "rest"] * (n // 3)
    return EpochSet(np.zeros((n, 2, 5)), y, runs, "1", kinds, 100.0, ["C3", "C4"], "s", "d")


def test_epochset_checks_and_selections():
    e = _small_set(6)
    assert e.classes == ["a", "b"] and e.kinds == ["rest"]
    assert e.tmin == 0.0  # trials start at their marker unless told otherwise
    assert e.counts() == {"a": 2, "b": 2, "universum/rest": 2}
    assert e.with_universum(None).n_trials == 4
    assert e.with_universum("all").n_trials == 6
    assert e.select_classes(["a"]).counts() == {"a": 2, "universum/rest": 2}
    both = EpochSet.concatenate([e, _small_set(3, runs="2")])
    assert both.n_trials == 9 and sorted(set(both.runs)) == ["1", "2"]
    with pytest.raises(ValueError, match="kind"):
        e.with_universum(["baseline"])
    with pytest.raises(ValueError, match="classes"):
        e.select_classes(["c"])
    with pytest.raises(ValueError, match="universum_kinds"):
        EpochSet(np.zeros((2, 1, 3)), ["a", "b"], "1", "1", ["", "rest"], 100.0, ["C3"])
    with pytest.raises(ValueError, match="channel names"):
        EpochSet(np.zeros((2, 1, 3)), ["a", "b"], "1", "1", "", 100.0, ["C3", "C4"])
    other = _small_set(3)
    other.sfreq = 50.0
    with pytest.raises(ValueError, match="sfreq"):
        EpochSet.concatenate([e, other])


def test_epochset_from_raw_kinds_and_numeric_markers():
    raw = _raw(
        ["2.000000", "3.000000", "1.000000", "2.000000", "9.0"], [1.0, 5.0, 9.0, 13.0, 17.0]
    )
    e = epochset_from_raw(
        raw, {"2": "left", "3": "right"}, {"1": "idle"}, tmin=0.0, tmax=1.0, run="7"
    )
    assert list(e.y) == ["left", "right", UNIVERSUM_STR, "left"]
    assert list(e.universum_kinds) == ["", "", "idle", ""]
    assert set(e.runs) == {"7"}
    start = round(13.0 * 100)
    np.testing.assert_array_equal(e.X[3], raw.get_data()[:, start : start + 101])
    with pytest.raises(ValueError, match="'4'"):
        epochset_from_raw(raw, {"2": "left", "4": "right"}, tmin=0.0, tmax=1.0)


def test_load_project_recording_reads_sidecar(tmp_path):
    raw = _raw(
        ["cue/left", "cue/right", "universum/rest", "cue/left", "universum/word"],
        [1.0, 5.0, 9.0, 13.0, 17.0],
    )
    fname = tmp_path / "sub-07_ses-02_task-calibration_run-03_raw.fif"
    raw.save(fname, verbose=False)
    fname.with_suffix(".json").write_text(
        json.dumps({"subject": "07", "session": "02", "run": "03"})
    )
    e = load_recording(fname, tmin=0.5, tmax=2.5, dataset="own")
    assert e.counts() == {"left": 2, "right": 1, "universum/rest": 1, "universum/word": 1}
    assert (e.subject, set(e.sessions), set(e.runs)) == ("07", {"02"}, {"03"})
    with pytest.raises(FileNotFoundError):
        load_recording(tmp_path / "missing_raw.fif")
    with pytest.raises(ValueError, match="missing"):
        load_recording(fname, classes=["cue/left", "cue/missing"])


def test_load_any_mne_file_with_a_mapping(tmp_path):
    raw = _raw(["T1", "T2", "T0", "T1", "T2"], [1.0, 5.0, 9.0, 13.0, 17.0])
    fname = tmp_path / "run.vhdr"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # pybv's float32 conversion
        mne.export.export_raw(fname, raw, verbose=False)
    # BrainVision stores annotations as "Comment/<text>"
    e = load_recording(
        fname, {"Comment/T1": "left", "Comment/T2": "right"}, {"Comment/T0": "rest"}, tmax=1.0
    )
    assert e.counts() == {"left": 2, "right": 2, "universum/rest": 1}
    assert e.subject == "run" and set(e.runs) == {"run"}  # named after the file
    with pytest.raises(ValueError, match="Comment/T1"):  # the error lists what is there
        load_recording(fname, {"T1": "left", "T2": "right"}, None)


@pytest.mark.data
def test_load_recordings_names_runs_and_subject_after_plain_files(data_dir):
    folder = data_dir / "MNE-eegbci-data/files/eegmmidb/1.0.0/S001"
    files = [folder / f"S001R{run:02d}.edf" for run in (4, 8, 12)]
    (e,) = load_recordings(
        files, classes={"T1": "left", "T2": "right"}, universum={"T0": "rest"}, tmin=1.0,
        tmax=2.0, verbose="error",
    )  # fmt: skip
    assert e.subject == "S001"
    counts = dict(zip(*np.unique(e.runs[~e.is_universum], return_counts=True), strict=True))
    assert counts == {"S001R04": 15, "S001R08": 15, "S001R12": 15}  # data README: 15 per run
    # the same trials as the eegmmidb loader's, which names runs by number
    reference = load_eegmmidb(1, (4, 8, 12), path=data_dir, tmin=1.0, tmax=2.0)
    for run in (4, 8, 12):
        mine = e.subset(e.runs == f"S001R{run:02d}")
        theirs = reference.subset(reference.runs == str(run))
        assert list(mine.y) == list(theirs.y)
        np.testing.assert_allclose(mine.X, theirs.X, rtol=0, atol=1e-12)
