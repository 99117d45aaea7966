"""EpochSet and the evaluation loaders (synthetic recordings, and the real data when present)."""

import json
import warnings

import mne
import numpy as np
import pytest

from bci_universum import UNIVERSUM_STR
from bci_universum.evaluation_data import (
    EpochSet,
    epochset_from_raw,
    load_eegmmidb,
    load_recording,
)


def _raw(descriptions, onsets, sfreq=100.0, seconds=30.0, n_channels=3):
    rng = np.random.default_rng(0)
    info = mne.create_info([f"EEG{i}" for i in range(n_channels)], sfreq, "eeg")
    raw = mne.io.RawArray(
        rng.standard_normal((n_channels, int(seconds * sfreq))), info, verbose=False
    )
    raw.set_annotations(mne.Annotations(onsets, 0.0, descriptions))
    return raw


def _small_set(n=6, runs="1"):
    y = ["a", "b", UNIVERSUM_STR] * (n // 3)
    kinds = ["", "", "rest"] * (n // 3)
    return EpochSet(np.zeros((n, 2, 5)), y, runs, "1", kinds, 100.0, ["C3", "C4"], "s", "d")


def test_epochset_checks_and_selections():
    e = _small_set(6)
    assert e.classes == ["a", "b"] and e.kinds == ["rest"]
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
    assert e.subject == "run" and set(e.runs) == {"1"}
    with pytest.raises(ValueError, match="Comment/T1"):  # the error lists what is there
        load_recording(fname, {"T1": "left", "T2": "right"}, None)


@pytest.mark.data
def test_eegmmidb_universa(data_dir):
    e = load_eegmmidb(1, (4, 8, 12), path=data_dir, universum=("rest", "baseline", "task"))
    counts = e.counts()
    # 15 task trials per run (T1 + T2), 15 rest periods per run (data README)
    assert counts["left"] + counts["right"] == 45
    assert counts["universum/rest"] == 45
    assert counts["universum/task"] == 45
    # R01, R02: 61 s of data each; a 1 s window every 4 s from 0 s: 15 windows per run
    assert counts["universum/baseline"] == 2 * 15
    assert set(e.runs[e.universum_kinds == "task"]) == {"6", "10", "14"}
    assert set(e.runs[e.universum_kinds == "baseline"]) == {"1", "2"}
    assert e.X.shape[1:] == (64, 161) and e.sfreq == 160.0
    assert "C3" in e.ch_names
    with pytest.raises(FileNotFoundError, match="subject 1 run 3"):
        load_eegmmidb(1, (3,), path=data_dir / "bci4als")


@pytest.mark.data
def test_bci4als_xdf_run(data_dir):
    from acquisition.readers import read_recording

    names = ["C3", "C4", "CP1", "CP2", "FC1", "FC2", "CP5", "CP6", "FC5", "FC6", "T7", "T8", "Cz"]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        e = load_recording(
            data_dir / "bci4als/assaf/Test2/EEG.xdf",
            {"2": "left", "3": "right"},
            {"1": "idle"},
            tmin=0.5,
            tmax=4.5,
            reader=read_recording,
            ch_names=names,
            l_freq=1.0,
            resample=125.0,
            run="2",
            dataset="bci4als",
        )
    assert e.counts() == {"left": 5, "right": 5, "universum/idle": 5}
    assert e.ch_names == names and e.sfreq == 125.0 and e.X.shape[2] == 501
    # high-passed: the DC offset of the raw stream (~0.09 V) is gone
    assert np.abs(e.X.mean(axis=2)).max() < 1e-4
