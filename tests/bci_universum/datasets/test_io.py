"""read_recording: MNE formats, XDF (tricky files, real BCI4ALS runs), clear errors."""

import warnings

import mne
import numpy as np
import pytest
import pyxdf
from scipy.io import loadmat

from bci_universum.datasets import epochs_from_raw, read_recording, run_label, subject_label

from .writers import stream_header as _header
from .writers import write_bci2000, write_xdf

EEGMMIDB = "MNE-eegbci-data/files/eegmmidb/1.0.0/S001"


def test_fif_round_trip(tmp_path):
    rng = np.random.default_rng(0)
    info = mne.create_info(["C3", "C4", "Cz"], 200.0, "eeg")
    raw = mne.io.RawArray(rng.standard_normal((3, 600)) * 1e-5, info, verbose=False)
    raw.set_annotations(mne.Annotations([0.5, 1.25], [0, 1.0], ["cue/left", "cue/right"]))
    fname = tmp_path / "sub-01_raw.fif"
    raw.save(fname, fmt="double", verbose=False)
    back = read_recording(fname)
    np.testing.assert_array_equal(back.get_data(), raw.get_data())
    assert list(back.annotations.description) == ["cue/left", "cue/right"]
    np.testing.assert_allclose(back.annotations.onset - back.first_time, [0.5, 1.25])


@pytest.mark.data
def test_eegmmidb_edf(data_dir):
    raw = read_recording(data_dir / EEGMMIDB / "S001R04.edf")
    assert raw.info["sfreq"] == 160.0 and len(raw.ch_names) == 64 and raw.n_times == 20000
    counts = {d: int(np.sum(raw.annotations.description == d)) for d in ("T0", "T1", "T2")}
    assert counts["T0"] == 15 and counts["T1"] + counts["T2"] == 15


def test_exported_edf(tmp_path):
    info = mne.create_info(["Fz", "C3", "C4"], 128.0, "eeg")
    data = np.random.default_rng(1).standard_normal((3, 1280)) * 2e-5
    raw = mne.io.RawArray(data, info, verbose=False)
    raw.set_annotations(mne.Annotations([1.0, 3.5], [0.0, 0.0], ["cue/left", "universum/rest"]))
    fname = tmp_path / "small.edf"
    mne.export.export_raw(fname, raw, fmt="edf", verbose=False)
    back = read_recording(fname)
    assert back.ch_names == ["Fz", "C3", "C4"] and back.info["sfreq"] == 128.0
    # EDF stores 16-bit integers: equal to within one quantisation step.
    step = (data.max() - data.min()) / 2**15
    np.testing.assert_allclose(back.get_data()[:, :1280], data, atol=2 * step)
    keep = np.isin(back.annotations.description, ["cue/left", "universum/rest"])
    np.testing.assert_allclose(back.annotations.onset[keep], [1.0, 3.5], atol=1 / 128)


@pytest.mark.data
def test_xdf_minimal(xdf_dir):
    fname = xdf_dir / "minimal.xdf"
    streams, _ = pyxdf.load_xdf(str(fname))
    data = next(s for s in streams if s["info"]["name"][0] == "SendDataC")
    # The last marker (5.9 s) comes one period after the last sample (5.8 s): dropped.
    with pytest.warns(RuntimeWarning, match="1 marker"):
        raw = read_recording(fname)
    assert raw.ch_names == ["0", "1", "2"] and raw.get_channel_types() == ["eeg"] * 3
    assert len(raw.annotations) == 8
    # int16 samples in µV (the XDF convention for EEG) → volts.
    np.testing.assert_array_equal(
        (raw.get_data().T * 1e6).astype(np.float32), data["time_series"].astype(np.float32)
    )
    assert raw.info["sfreq"] == pytest.approx(float(data["info"]["effective_srate"]))
    marker = next(s for s in streams if s["info"]["name"][0] == "SendDataString")
    stamps = data["time_stamps"]
    texts = [t[0] for t in marker["time_series"][:8]]
    assert list(raw.annotations.description) == texts
    samples = np.round(raw.annotations.onset * raw.info["sfreq"]).astype(int)
    np.testing.assert_allclose(stamps[samples], marker["time_stamps"][:8], atol=0.1 / 2)


@pytest.mark.data
def test_xdf_clock_resets(xdf_dir):
    raw = read_recording(xdf_dir / "clock_resets.xdf")
    assert raw.ch_names[:2] == ["0", "1"] and len(raw.ch_names) == 8
    # Effective rate, not the nominal 100 Hz: the amplifier really ran at ~93 Hz.
    assert 90 < raw.info["sfreq"] < 96
    assert raw.n_times == 27815
    boundaries = raw.annotations.onset[raw.annotations.description == "BAD boundary"]
    np.testing.assert_allclose(boundaries, [12876 / raw.info["sfreq"]])
    # All 175 markers lie within the data (after pyxdf's clock-reset handling).
    assert len(raw.annotations) == 175 + 2
    nominal = read_recording(xdf_dir / "clock_resets.xdf", sfreq="nominal")
    assert nominal.info["sfreq"] == 100.0


@pytest.mark.data
def test_xdf_empty_streams(xdf_dir):
    fname = xdf_dir / "empty_streams.xdf"
    raw = read_recording(fname)  # the first numeric stream is empty: the next one is used
    assert raw.n_times == 10 and raw.get_channel_types() == ["misc"]
    np.testing.assert_array_equal(raw.get_data()[0], np.arange(10) + raw.get_data()[0, 0])
    assert list(raw.annotations.description) == ['{"state": 2}']
    with pytest.raises(ValueError, match="is empty"):
        read_recording(fname, stream="Empty data stream: test stream 0 counter")
    with pytest.raises(ValueError, match="no stream named 'nope'"):
        read_recording(fname, stream="nope")
    with pytest.raises(ValueError, match="not a numeric stream"):
        read_recording(fname, stream="ctrl")
    with pytest.raises(ValueError, match="no string stream named"):
        read_recording(fname, marker_streams=["missing"])


@pytest.mark.data
@pytest.mark.parametrize("run", ["Test1", "Test4"])  # effective rate above / below 125 Hz
def test_bci4als_run(data_dir, run):
    fname = data_dir / f"bci4als/assaf/{run}/EEG.xdf"
    raw = read_recording(fname)
    streams, _ = pyxdf.load_xdf(str(fname))
    eeg = next(s for s in streams if s["info"]["name"][0] == "obci_eeg1")
    markers = next(s for s in streams if s["info"]["name"][0] == "MarkerStream")
    assert len(raw.ch_names) == 16 and raw.n_times == len(eeg["time_stamps"])
    assert raw.info["sfreq"] == pytest.approx(eeg["info"]["effective_srate"])
    np.testing.assert_array_equal((raw.get_data().T * 1e6).astype(np.float32), eeg["time_series"])
    assert len(raw.annotations) == len(markers["time_stamps"]) == 47
    samples = np.round(raw.annotations.onset * raw.info["sfreq"]).astype(int)
    period = 1 / 125.0
    assert np.all(np.abs(eeg["time_stamps"][samples] - markers["time_stamps"]) <= period)
    # The class code follows each trial start (1111) and agrees with trainingVec.mat.
    codes = [float(d) for d in raw.annotations.description]
    classes = [codes[k + 1] for k, code in enumerate(codes) if code == 1111.0]
    expected = loadmat(fname.parent / "trainingVec.mat")["trainingVec"].ravel()
    np.testing.assert_array_equal(classes, expected)


def test_missing_file(tmp_path):
    with pytest.raises(FileNotFoundError, match=r"nothere\.fif"):
        read_recording(tmp_path / "nothere.fif")


@pytest.mark.filterwarnings("ignore:Invalid measurement date")
def test_unknown_and_corrupt_formats(tmp_path):
    unknown = tmp_path / "notes.foo"
    unknown.write_text("hello")
    with pytest.raises(ValueError, match=r"notes\.foo.*unknown format \.foo.*XDF.*read_raw"):
        read_recording(unknown)
    bad_edf = tmp_path / "broken.edf"
    bad_edf.write_bytes(b"not an edf file at all")
    with pytest.raises(ValueError, match=r"broken\.edf .*truncated or corrupt.*Bad EDF"):
        read_recording(bad_edf)
    bad_xdf = tmp_path / "broken.xdf"
    bad_xdf.write_bytes(b"nonsense")
    with pytest.raises(ValueError, match=r"broken\.xdf .*truncated or corrupt"):
        read_recording(bad_xdf)
    with pytest.raises(ValueError, match="select streams of an XDF"):
        read_recording(bad_edf, stream="EEG")


def test_xdf_without_numeric_stream(tmp_path):
    fname = write_xdf(
        tmp_path / "markers_only.xdf",
        [(_header("mk", "Markers", 1, 0, "string"), [1.0, 2.0], [["a"], ["b"]])],
    )
    with pytest.raises(ValueError, match=r"markers_only\.xdf has no numeric stream.*'mk'"):
        read_recording(fname)
    empty = write_xdf(
        tmp_path / "empty.xdf",
        [(_header("eeg", "EEG", 2, 100, "float32"), [], [])],
    )
    with pytest.raises(ValueError, match=r"Every numeric stream .* is empty"):
        read_recording(empty)


def test_written_xdf_units_and_labels(tmp_path):
    header = _header("amp", "EEG", 2, 50, "float32")
    header["desc"] = (
        "<channels><channel><label>C3</label><unit>microvolts</unit><type>EEG</type></channel>"
        "<channel><label>GSR</label><unit>n/a</unit><type>GSR</type></channel></channels>"
    )
    values = np.arange(20, dtype=np.float32).reshape(10, 2)
    stamps = 100 + np.arange(10) / 50
    fname = write_xdf(
        tmp_path / "two.xdf",
        [
            (header, stamps, values),
            (_header("mk", "Markers", 1, 0, "string"), [stamps[3] + 0.004], [["cue/left"]]),
        ],
    )
    raw = read_recording(fname)
    assert raw.ch_names == ["C3", "GSR"] and raw.get_channel_types() == ["eeg", "gsr"]
    np.testing.assert_allclose(raw.get_data()[0], values[:, 0] * 1e-6)
    np.testing.assert_allclose(raw.get_data()[1], values[:, 1])
    np.testing.assert_allclose(raw.annotations.onset, [3 / raw.info["sfreq"]])


@pytest.fixture
def xdf_dir(data_dir):
    return data_dir / "xdf"


def _bci2000_counts(n=400, n_ch=3):
    counts = np.random.default_rng(1).integers(-2000, 2000, size=(n, n_ch))
    code = np.zeros(n, dtype=int)
    code[50:90], code[200:240], code[300:340] = 1, 2, 1
    return counts, code


def test_bci2000_dat_names_microvolts_and_stimulus_codes(tmp_path):
    counts, code = _bci2000_counts()
    fname = write_bci2000(
        tmp_path / "S01R01.dat", counts, code, 100, ["C3", "Cz", "C4"],
        gains=["0.1muV", "0.1", "0.0002mV"], offsets=[0, 10, 0],
    )  # fmt: skip
    raw = read_recording(fname)
    assert raw.ch_names == ["C3", "Cz", "C4", "STI 014"] and raw.info["sfreq"] == 100
    expected = (counts - [0, 10, 0]) * [0.1, 0.1, 0.2] * 1e-6
    np.testing.assert_allclose(raw.get_data(picks="eeg").T, expected, rtol=1e-12, atol=0)
    ann = raw.annotations
    assert list(ann.description) == ["StimulusCode/1", "StimulusCode/2", "StimulusCode/1"]
    np.testing.assert_allclose(ann.onset, [0.5, 2.0, 3.0])
    np.testing.assert_allclose(ann.duration, [0.4, 0.4, 0.4])
    # the codes are trial markers like any other: epoching finds them
    X, y, _ = epochs_from_raw(
        raw, {"StimulusCode/1": "left", "StimulusCode/2": "right"}, None, tmin=0.0, tmax=0.3
    )
    assert list(y) == ["left", "right", "left"] and X.shape == (3, 3, 31)
    np.testing.assert_allclose(X[1].T, expected[200:231])


def test_bci2000_without_gains_warns_and_bad_gain_is_named(tmp_path):
    counts, code = _bci2000_counts()
    fname = write_bci2000(tmp_path / "raw_units.dat", counts, code, 100, ["a", "b", "c"])
    with pytest.warns(RuntimeWarning, match=r"raw_units\.dat: no SourceChGain"):
        raw = read_recording(fname)
    np.testing.assert_array_equal(raw.get_data(picks="eeg").T, counts)
    bad = write_bci2000(
        tmp_path / "bad_gain.dat", counts, code, 100, ["a", "b", "c"], gains=["1", "x", "1"]
    )
    with pytest.raises(ValueError, match=r"bad_gain\.dat.*SourceChGain value 'x'"):
        read_recording(bad)
    whole = write_bci2000(
        tmp_path / "whole.dat", counts, code, 100, ["a", "b", "c"], gains=[1, 1, 1]
    )
    cut = tmp_path / "cut.dat"
    cut.write_bytes(whole.read_bytes()[:-5])  # 3 int16 + 2 state bytes per sample
    with pytest.warns(RuntimeWarning, match=r"cut\.dat is truncated .*3 of 8 bytes.*399 samples"):
        assert read_recording(cut).n_times == 399


def _fif_and_edf(tmp_path, seconds=30):
    info = mne.create_info(["C3", "C4"], 100.0, "eeg")
    data = np.random.default_rng(0).standard_normal((2, int(seconds * 100))) * 1e-5
    raw = mne.io.RawArray(data, info, verbose=False)
    raw.set_annotations(mne.Annotations([1.0, 5.0], 0.0, ["cue/left", "cue/right"]))
    fif = tmp_path / "whole_raw.fif"
    raw.save(fif, verbose=False)
    edf = tmp_path / "whole.edf"
    mne.export.export_raw(edf, raw, verbose=False)
    return fif, edf


@pytest.mark.filterwarnings("ignore:Invalid measurement date")
def test_empty_and_truncated_files_are_named(tmp_path):
    fif, edf = _fif_and_edf(tmp_path)
    empty = tmp_path / "empty.fif"
    empty.write_bytes(b"")
    with pytest.raises(ValueError, match=r"empty\.fif is empty \(0 bytes\)"):
        read_recording(empty)
    half = tmp_path / "trunc_half_raw.fif"
    half.write_bytes(fif.read_bytes()[: fif.stat().st_size // 2])
    with pytest.raises(ValueError, match=r"trunc_half_raw\.fif .*truncated or corrupt"):
        read_recording(half)
    cut = tmp_path / "cut.edf"
    cut.write_bytes(edf.read_bytes()[: edf.stat().st_size // 2])
    with pytest.warns(RuntimeWarning, match=r"cut\.edf is truncated \(\d+ of the 30 data"):
        raw = read_recording(cut)
    assert 0 < raw.n_times < 3000
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        assert read_recording(edf).n_times == 3000  # the whole file: no warning


def test_xdf_without_footer_is_reported_truncated(tmp_path):
    header = _header("amp", "EEG", 1, 50, "float32")
    stamps = 10 + np.arange(40) / 50
    streams = [(header, stamps, np.ones((40, 1)))]
    closed = write_xdf(tmp_path / "closed.xdf", streams)
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        read_recording(closed)
    unclosed = write_xdf(tmp_path / "unclosed.xdf", streams, footer=False)
    with pytest.warns(RuntimeWarning, match=r"unclosed\.xdf is truncated .*'amp'.*40 samples"):
        read_recording(unclosed)


@pytest.mark.data
@pytest.mark.filterwarnings("ignore:Segments and clock-segments differ")
def test_half_written_bci4als_xdf_is_reported_truncated(data_dir, tmp_path):
    whole = (data_dir / "bci4als/assaf/Test1/EEG.xdf").read_bytes()
    half = tmp_path / "EEG.xdf"
    half.write_bytes(whole[: len(whole) // 2])
    with pytest.warns(RuntimeWarning, match=r"EEG\.xdf is truncated .*'obci_eeg1'") as record:
        raw = read_recording(half)
    n = raw.n_times
    assert 0 < n < 15830 and f"read {n} samples" in str(record[0].message)


def test_run_and_subject_labels_come_from_the_files(tmp_path):
    bids = tmp_path / "sub-07_ses-01_task-imagery_run-03_raw.fif"
    assert (run_label(bids), subject_label(bids)) == ("03", "07")
    bci4als = [tmp_path / "assaf" / f"Test{k}" / "EEG.xdf" for k in (1, 2, 10)]
    assert [run_label(f, bci4als) for f in bci4als] == ["Test1", "Test2", "Test10"]
    assert {subject_label(f, bci4als) for f in bci4als} == {"assaf"}
    plain = [tmp_path / "S001" / f"S001R{r:02d}.edf" for r in (4, 8, 12)]
    assert [run_label(f, plain) for f in plain] == ["S001R04", "S001R08", "S001R12"]
    assert {subject_label(f, plain) for f in plain} == {"S001"}
    assert (run_label(plain[0]), subject_label(plain[0])) == ("S001R04", "S001R04")
    assert run_label(tmp_path / "x" / "rec.xdf.gz") == "rec"
