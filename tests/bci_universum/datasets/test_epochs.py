"""Epoching of labelled and universum trials from annotated recordings; EpochSet; loaders."""

import json
import re
import warnings

import mne
import numpy as np
import pytest

from bci_universum import UNIVERSUM_STR
from bci_universum.datasets import (
    DroppedTrialsWarning,
    EpochSet,
    epochs_from_raw,
    epochset_from_raw,
    load_eegmmidb,
    load_recording,
    load_recordings,
    marker_event_id,
    read_prepared_recording,
    recording_name,
    resolve_markers,
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
    raw.annotations.append(29.0, 0.0, "cue/left")  # its window runs past the end (30 s)
    said = (
        r"5 trials dropped: 1 run past the .* end \(window tmin=0.5 s, tmax=2.5 s\); 1 overlap BAD"
    )
    with pytest.warns(DroppedTrialsWarning, match=rf"3 of {said}.*; 1 hold non-finite samples\.$"):
        X, y, epochs = epochs_from_raw(raw, universum=None, verbose="error")
    assert list(y) == ["left", "right"]
    assert np.isfinite(X).all()
    assert any("NON_FINITE" in log for log in epochs.drop_log)


def test_dropped_trials_are_named_by_file_whatever_the_verbosity(tmp_path):
    """MNE logs dropped epochs at info level; a window too long for the recording is said
    anyway, naming the file (the reader's Raw has no file name, e.g. XDF)."""
    fname = tmp_path / "run_raw.fif"
    _raw(["cue/left", "cue/right", "cue/left"], [1.0, 5.0, 27.0]).save(fname, verbose="error")
    said = r"run_raw.fif: 1 of 3 trials dropped: 1 run past the recording's start or end"
    with pytest.warns(DroppedTrialsWarning, match=said):
        epochs = load_recording(fname, tmin=0.0, tmax=4.0, verbose="error")
    assert list(epochs.y) == ["left", "right"]
    raw = read_prepared_recording(fname, verbose="error")
    with pytest.warns(DroppedTrialsWarning, match=r"^run 7: 1 of 3 trials dropped"):
        epochset_from_raw(raw, ["cue/left", "cue/right"], tmin=0.0, tmax=4.0, name="run 7")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        load_recording(fname, tmin=0.0, tmax=2.0, verbose="error")  # nothing dropped


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"classes": ["cue/left", "cue/up"]}, r"cue/up"),
        ({"classes": ["cue/left"]}, "at least two"),
        (
            {"classes": {"cue/left": "left", "cue/right": "left"}},
            r"at least two classes .*every marker maps to one class",
        ),
        ({"universum": ["universum/sleep"]}, "universum/sleep"),
        ({"classes": {"cue/left": "universum", "cue/right": "r"}}, "sentinel"),
        ({"tmin": 2.0, "tmax": 1.0}, "tmax"),
        ({"tmin": 0.0, "tmax": 40.0}, "Fewer than two classes"),
        (
            {"picks": ["XX", "EEG0"]},
            r"channels \['XX'\] are not in the recording; its channels: "
            r"\['EEG0', 'EEG1', 'EEG2'\]",
        ),
        (
            {"picks": ["eeg0", "EEG1"]},
            r"channels \['eeg0'\] .*case-sensitive: did you mean \['EEG0'\]\?",
        ),
        ({"picks": ["EEG1", "EEG0", "EEG1"]}, r"channels \['EEG1'\] are listed more than once"),
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
    with pytest.raises(
        ValueError, match=r"other channels than the first recording \(it lacks EEG2\)"
    ):
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


def test_epochset_lists_runs_in_recording_order():
    epochs = _small_set(n=9, runs=["4", "4", "4", "8", "8", "8", "12", "12", "12"])
    assert repr(epochs).endswith("runs ['4', '8', '12']>")
    assert repr(epochs).startswith("<EpochSet d subject s: 9 trials")
    epochs.dataset = ""  # load_recordings' default
    assert repr(epochs).startswith("<EpochSet subject s: 9 trials")


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


def test_sequence_labels_and_kinds_are_the_text_after_the_last_slash():
    desc = ["left", "right", "task/cue/up", "task/cue/down", "a/b/rest", "idle"]
    raw = _raw(desc, [1.0, 5.0, 9.0, 13.0, 17.0, 21.0])
    _, labels = marker_event_id(raw.annotations, ["left", "right"], None)
    assert sorted(labels.values()) == ["left", "right"]
    _, labels = marker_event_id(raw.annotations, ["task/cue/up", "task/cue/down"], None)
    assert sorted(labels.values()) == ["down", "up"]
    for classes, universum, y, kinds in [
        (["left", "right"], "idle", ["left", "right"], ["idle"]),
        (["task/cue/up", "task/cue/down"], "a/b/rest", ["down", "up"], ["rest"]),
        (["left", "right"], ["a/b/rest", "idle"], ["left", "right"], ["idle", "rest"]),
    ]:
        e = epochset_from_raw(raw, classes, universum, tmin=0.0, tmax=1.0)
        assert (e.classes, e.kinds) == (y, kinds)


def test_resolve_markers_prefers_the_exact_description_and_refuses_ambiguity():
    present = ["02", "2", "2.0", "3.000", "cue/left", "cue/right"]
    assert resolve_markers(["2", "2.0", "3"], present) == {"2": "2", "2.0": "2.0", "3": "3.000"}
    with pytest.raises(ValueError, match=r"'2\.00' matches several annotations"):
        resolve_markers(["2.00"], present)
    # a text names only itself; a number never matches a text
    for key in ("cue/up", "5"):
        with pytest.raises(ValueError, match=f"'{key}' is not in the recording's annotations"):
            resolve_markers([key], present)


def test_a_window_must_have_a_length():
    raw = _raw(["cue/left", "cue/right"], [1.0, 5.0])
    with pytest.raises(ValueError, match=r"tmax \(1\.0\) must be greater"):
        epochs_from_raw(raw, universum=None, tmin=1.0, tmax=1.0)


def test_a_recording_without_markers_between_others_is_skipped():
    calibration = _raw(["cue/left", "cue/right"], [1.0, 5.0])
    universum = _raw(["universum/rest"], [2.0])
    _, y, _ = epochs_from_raw([calibration, _raw(["trial/end"], [1.0]), universum])
    assert list(y) == ["left", "right", UNIVERSUM_STR]


def test_too_few_surviving_trials_are_refused():
    raw = _raw(["cue/left", "cue/right", "universum/rest"], [1.0, 5.0, 9.0])
    raw.annotations.append(5.2, 0.5, "BAD_ACQ_SKIP")  # the only right trial
    with pytest.raises(ValueError, match=r"Fewer than two classes .*\['left', 'universum'\]"):
        epochs_from_raw(raw)
    raw.annotations.append(9.2, 0.5, "BAD_ACQ_SKIP")  # the only universum trial
    with pytest.raises(ValueError, match="No universum trial survives"):
        epochs_from_raw(raw, classes=())


def test_a_raw_read_from_several_files_is_named_after_the_first(tmp_path):
    names = [tmp_path / f"part{i}_raw.fif" for i in (1, 2)]
    for name in names:
        _raw(["cue/left"], [1.0]).save(name, verbose="error")
    joined = mne.concatenate_raws([mne.io.read_raw_fif(n, verbose="error") for n in names])
    assert recording_name(joined) == str(names[0])


def test_epochset_compares_by_identity_and_hashes():
    e = _small_set(6)
    same = e.subset(np.arange(e.n_trials))
    # array fields make a field-wise == ambiguous: sets are distinct objects, usable as keys
    assert e == e and e != same
    assert len({e, same}) == 2


@pytest.mark.parametrize("sfreq", [0.0, -0.5, np.inf, np.nan])
def test_epochset_refuses_a_bad_sampling_rate(sfreq):
    with pytest.raises(ValueError, match="sfreq must be a positive number"):
        EpochSet(np.zeros((1, 1, 3)), ["a"], "1", "1", "", sfreq, ["C3"])


def test_epochset_takes_any_positive_sampling_rate():
    assert EpochSet(np.zeros((1, 1, 3)), ["a"], "1", "1", "", 0.5, ["C3"]).sfreq == 0.5


def test_epochset_subset_by_indices_or_mask():
    e = _small_set(6)
    picked = e.subset([4, 0])
    np.testing.assert_array_equal(picked.y, e.y[[4, 0]])
    assert picked.n_trials == 2
    with pytest.raises(ValueError, match=r"mask has shape \(2,\), expected \(6,\)"):
        e.subset([True, False])


def test_read_prepared_recording_picks_filters_and_resamples_as_mne(tmp_path):
    fname = tmp_path / "rec_raw.fif"
    _raw(["cue/left", "cue/right"], [1.0, 5.0]).save(fname, verbose="error")
    reference = mne.io.read_raw_fif(fname, preload=True, verbose="error")
    raw = read_prepared_recording(fname=fname, ch_names=["C3", "C4"], verbose="error")
    assert raw.ch_names == ["C3", "C4"]
    np.testing.assert_array_equal(raw.get_data(), reference.get_data()[:2])
    all_three = read_prepared_recording(fname, ch_names=["a", "b", "c"], verbose="error")
    assert all_three.ch_names == ["a", "b", "c"]
    with pytest.raises(ValueError, match="4 channel names for 3 channels"):
        read_prepared_recording(fname, ch_names=["a", "b", "c", "d"])
    # any frequency strictly between 0 and Nyquist (50 Hz)
    for highpass in (0.5, 49.0):
        raw = read_prepared_recording(fname, highpass=highpass, verbose="error")
        expected = reference.copy().filter(highpass, None, verbose="error").get_data()
        np.testing.assert_allclose(raw.get_data(), expected, rtol=0, atol=1e-12)
    for highpass in (0, -1.0, 50.0, 60.0, True, "1"):
        with pytest.raises(ValueError, match=r"highpass must be None or a frequency in \(0, 50\)"):
            read_prepared_recording(fname, highpass=highpass)
    raw = read_prepared_recording(fname, resample=50.0, verbose="error")
    expected = reference.copy().resample(50.0, verbose="error").get_data()
    np.testing.assert_allclose(raw.get_data(), expected, rtol=0, atol=1e-12)
    assert read_prepared_recording(fname, resample=1, verbose="error").info["sfreq"] == 1.0
    for resample in (0, -1.0, True, "50"):
        with pytest.raises(ValueError, match=r"resample must be a rate in Hz \(> 0\), got"):
            read_prepared_recording(fname, resample=resample)


def test_load_recording_default_window_is_half_a_second_to_two_and_a_half(tmp_path):
    raw = _raw(["cue/left", "cue/right", "universum/rest"], [1.0, 5.0, 9.0])
    fname = tmp_path / "rec_raw.fif"
    raw.save(fname, verbose="error")
    e = load_recording(fname)
    raw = mne.io.read_raw_fif(fname, verbose="error")  # as saved (float32)
    events, event_id = mne.events_from_annotations(raw, verbose=False)
    reference = mne.Epochs(
        raw, events, event_id, tmin=0.5, tmax=2.5, baseline=None, verbose=False
    ).get_data()
    assert e.tmin == 0.5
    np.testing.assert_array_equal(e.X, reference)


def test_load_recordings_takes_sidecars_then_file_names(tmp_path):
    files = [tmp_path / folder / "rec_raw.fif" for folder in ("a", "b")]
    for f in files:
        f.parent.mkdir()
        _raw(["cue/left", "cue/right"], [1.0, 5.0]).save(f, verbose="error")
    files[0].with_suffix(".json").write_text(json.dumps({"subject": "07", "run": "03"}))
    files[1].with_suffix(".json").write_text(json.dumps({"subject": "07"}))
    (e,) = load_recordings(files=files, universum=None, verbose="error")
    # b's run: its folder, as the stems repeat (run_label); the subject: the sidecars'
    assert (e.subject, list(e.runs)) == ("07", ["03", "03", "b", "b"])
    (e,) = load_recordings(files, subject="S9", universum=None, verbose="error")
    assert e.subject == "S9"
    (e,) = load_recordings(files, runs=["x", "y"], universum=None, verbose="error")
    assert list(e.runs) == ["x", "x", "y", "y"]  # given runs come before the sidecar's
    with pytest.raises(ValueError, match="runs names 1 runs for 2 files"):
        load_recordings(files, runs=["x"])


def test_load_recordings_of_different_rates_suggest_resample(tmp_path):
    files = [tmp_path / f"run-0{i}_raw.fif" for i in (1, 2)]
    for f, sfreq in zip(files, (100.0, 100.05), strict=True):
        _raw(["cue/left", "cue/right"], [1.0, 5.0], sfreq=sfreq).save(f, verbose="error")
    with pytest.raises(ValueError, match=r"run-02_raw\.fif: 100\.05 Hz.*pass resample=<Hz>"):
        load_recordings(files, universum=None, verbose="error")
    (e,) = load_recordings(files, universum=None, resample=100.0, verbose="error")
    assert e.sfreq == 100.0 and e.n_trials == 4


def test_load_recordings_refuses_a_file_listed_twice(tmp_path):
    fname = tmp_path / "rec_raw.fif"
    _raw(["cue/left", "cue/right"], [1.0, 5.0]).save(fname, verbose="error")
    # the same file by another path: its trials would land in training and test folds
    twice = [fname, tmp_path / "." / "rec_raw.fif"]
    with pytest.raises(ValueError, match=r"rec_raw\.fif is listed more than once"):
        load_recordings(twice, universum=None, verbose="error")


def test_load_recordings_refuses_two_files_named_one_run(tmp_path):
    # two subjects' Test1/EEG.xdf: one stem, one folder name, one common folder
    files = [tmp_path / who / "Test1" / "rec_raw.fif" for who in ("assaf", "tomer")]
    for f in files:
        f.parent.mkdir(parents=True)
        _raw(["cue/left", "cue/right"], [1.0, 5.0]).save(f, verbose="error")
    match = r"assaf/Test1/rec_raw\.fif and .*tomer/Test1/rec_raw\.fif are both run 'Test1'"
    with pytest.raises(ValueError, match=match):
        load_recordings(files, universum=None, verbose="error")
    (e,) = load_recordings(files, runs=["a1", "t1"], universum=None, verbose="error")
    assert list(dict.fromkeys(e.runs)) == ["a1", "t1"]
    # BIDS numbers runs per task: a session's calibration and universum run-01 load together
    tasks = [tmp_path / f"sub-01_task-{task}_run-01_raw.fif" for task in ("cal", "uni")]
    _raw(["cue/left", "cue/right"], [1.0, 5.0]).save(tasks[0], verbose="error")
    _raw(["universum/rest"], [1.0]).save(tasks[1], verbose="error")
    (e,) = load_recordings(tasks, verbose="error")
    assert set(e.runs) == {"01"} and e.counts() == {"left": 1, "right": 1, "universum/rest": 1}
