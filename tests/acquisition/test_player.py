"""Player: replay FIF, EDF and XDF files over real loopback LSL and pull them back."""

import importlib
import time
import warnings
from datetime import datetime, timezone
from uuid import uuid4

import mne
import numpy as np
import pylsl
import pytest

from acquisition.markers import MarkerReceiver
from acquisition.player import Player
from acquisition.receiver import StreamReceiver
from acquisition.recorder import Recorder
from acquisition.streams import counter_channel_index, describe_channels, resolve_stream
from bci_universum.datasets import read_recording
from bci_universum.markers import MARKER_MAPS, map_marker, resolve_marker_map
from tests.acquisition.lsl_helpers import wait_until

EEGMMIDB = "MNE-eegbci-data/files/eegmmidb/1.0.0/S001"


class Consumer:
    """Plain pylsl inlets on a player's data and marker streams."""

    def __init__(self, player, timeout=5.0):
        info = resolve_stream(source_id=player.source_id, timeout=timeout)
        marker_info = resolve_stream(source_id=f"{player.source_id}-markers", timeout=timeout)
        self.data = pylsl.StreamInlet(info, recover=False)
        self.markers = pylsl.StreamInlet(marker_info, recover=False)
        self.markers.open_stream(timeout)
        self.data.open_stream(timeout)
        self.n_pulled = 0

    def pull(self, n_samples, n_markers, timeout=20.0):
        chunks, stamps, markers, marker_stamps = [], [], [], []
        deadline = time.monotonic() + timeout
        while self.n_pulled < n_samples or len(markers) < n_markers:
            assert time.monotonic() < deadline, (
                f"pulled {self.n_pulled}/{n_samples} samples, {len(markers)}/{n_markers} markers"
            )
            data, ts = self.data.pull_chunk(timeout=0.05, max_samples=4096)
            if ts:
                chunks.append(np.asarray(data, dtype=np.float64))
                stamps.extend(ts)
                self.n_pulled += len(ts)
            texts, mts = self.markers.pull_chunk(timeout=0.0)
            markers += [t[0] for t in texts]
            marker_stamps += mts
        data = np.concatenate(chunks) if chunks else np.zeros((0, 0))
        return data, np.array(stamps), markers, np.array(marker_stamps)

    def close(self):
        self.data.close_stream()
        self.markers.close_stream()
        del self.data, self.markers


def expected_samples(raw):
    """What the stream must carry: data in µV (volts for none) cast to float32."""
    scale = np.array([1e6 if t == "eeg" else 1.0 for t in raw.get_channel_types()])
    return (raw.get_data().T * scale).astype(np.float32)


def annotation_events(raw):
    """``(sample of the data, description)`` of each annotation, by MNE's own event count."""
    events, codes = mne.events_from_annotations(raw, regexp=None, verbose=False)
    names = {code: description for description, code in codes.items()}
    return [(int(sample) - raw.first_samp, names[code]) for sample, _, code in events]


def check_replay(raw, player, data, stamps, markers, marker_stamps):
    """Samples equal the file's; every marker sits on the stamp of its annotation's sample."""
    n = raw.n_times
    np.testing.assert_array_equal(data[:n, : len(raw.ch_names)], expected_samples(raw))
    sfreq = raw.info["sfreq"]
    events = [(s, map_marker(d, player.marker_map)) for s, d in annotation_events(raw)]
    samples = np.array([s for s, t in events if t is not None])
    assert markers == [t for _, t in events if t is not None]
    assert np.all(np.abs(marker_stamps - stamps[samples]) < 1 / sfreq)


def _fif(tmp_path, n_times=1000, sfreq=250.0):
    rng = np.random.default_rng(3)
    info = mne.create_info(["C3", "Cz", "C4", "EOG"], sfreq, ["eeg", "eeg", "eeg", "misc"])
    raw = mne.io.RawArray(rng.standard_normal((4, n_times)) * 1e-5, info, verbose=False)
    raw.set_montage("colin27_1020", on_missing="ignore", verbose=False)
    onsets = [0.1, 0.4, 0.7, (n_times - 1) / sfreq]
    raw.set_annotations(mne.Annotations(onsets, 0.0, ["cue/left", "T1", "cue/right", "run/end"]))
    fname = tmp_path / "replay_raw.fif"
    raw.save(fname, fmt="double", verbose=False)
    return fname


@pytest.mark.lsl
def test_replay_fif_no_pacing_with_counter(tmp_path):
    fname = _fif(tmp_path)
    raw = read_recording(fname)
    player = Player(
        fname,
        name=f"fif-{uuid4().hex}",
        pacing=False,
        counter=True,
        chunk_size=7,
        marker_map={"T1": "cue/right"},
        wait_for_consumers=("data", "markers"),
    )
    with player:
        consumer = Consumer(player)
        data, stamps, markers, mstamps = consumer.pull(raw.n_times, len(raw.annotations))
        full = consumer.data.info()
        consumer.close()
    assert player.n_pushed == raw.n_times and player.n_markers_pushed == 4
    check_replay(raw, player, data, stamps, markers, mstamps)
    assert markers[1] == "cue/right"
    np.testing.assert_array_equal(data[:, -1], np.arange(raw.n_times))
    np.testing.assert_allclose(np.diff(stamps), 1 / 250.0, atol=1e-6)
    channels = describe_channels(full)
    assert [c.name for c in channels] == ["C3", "Cz", "C4", "EOG", "counter"]
    assert [c.unit for c in channels[:4]] == ["microvolts"] * 3 + ["n/a"]
    assert counter_channel_index(full) == 4
    np.testing.assert_allclose(channels[0].position, raw.info["chs"][0]["loc"][:3], atol=1e-9)


@pytest.mark.lsl
def test_paced_replay_speed_and_loop(tmp_path):
    fname = _fif(tmp_path, n_times=250)
    raw = read_recording(fname)
    player = Player(fname, name=f"paced-{uuid4().hex}", speed=5.0, loop=True, counter=True)
    consumer_ready = time.monotonic()
    with player:
        consumer = Consumer(player)
        consumer_ready = time.monotonic()
        data, stamps, _, _ = consumer.pull(600, 0)
        elapsed = time.monotonic() - consumer_ready
        consumer.close()
    # 600 samples at 250 Hz x 5 take at least ~0.48 s of wall time (pacing works) and the
    # stamps advance at 1250 Hz.
    assert elapsed > 0.3
    counter = data[:, -1]
    np.testing.assert_array_equal(np.diff(counter), 1)  # nothing lost, counter keeps counting
    np.testing.assert_allclose(np.diff(stamps), 1 / 1250.0, atol=1e-6)
    start = int(counter[0]) % 250
    looped = np.concatenate([expected_samples(raw)] * 4)[start : start + len(counter)]
    np.testing.assert_array_equal(data[:, :4], looped)


@pytest.mark.lsl
def test_a_slow_replay_loses_no_sample_for_its_receiver(tmp_path):
    """At speed 0.4 samples are stamped 2.5 periods apart: the stream declares its speed, so a
    receiver (and a recording of it) sees every sample and no gap, at the file's own rate."""
    fname = _fif(tmp_path, n_times=200)
    player = Player(fname, name=f"slow-{uuid4().hex}", speed=0.4, wait_for_consumers=("data",))
    with player, StreamReceiver(source_id=player.source_id, timeout=5.0) as receiver:
        wait_until(lambda: receiver.n_samples == 200, timeout=20.0, what="every sample")
        _, stamps = receiver.get_window(0.4)
        assert receiver.sfreq_ == 250.0
        assert receiver.events == []
    np.testing.assert_allclose(np.diff(stamps), 1 / 100.0, atol=1e-4)


@pytest.mark.lsl
def test_flow_control_bounds_samples_in_flight(tmp_path):
    fname = _fif(tmp_path, n_times=3000)
    raw = read_recording(fname)
    pulled = [0]
    player = Player(
        fname,
        name=f"flow-{uuid4().hex}",
        pacing=False,
        chunk_size=10,
        drained=lambda: pulled[0],
        max_ahead=100,
        wait_for_consumers=("data", "markers"),
    )
    in_flight = []
    with player:
        consumer = Consumer(player)
        deadline = time.monotonic() + 20
        chunks = []
        while pulled[0] < raw.n_times:
            assert time.monotonic() < deadline
            in_flight.append(player.n_pushed - pulled[0])
            data, ts = consumer.data.pull_chunk(timeout=0.05, max_samples=37)
            if ts:
                chunks.append(np.asarray(data))
                pulled[0] += len(ts)
        consumer.close()
    assert max(in_flight) <= 100
    np.testing.assert_array_equal(np.concatenate(chunks), expected_samples(raw))


@pytest.mark.lsl
@pytest.mark.data
def test_replay_eegmmidb_edf_with_marker_map(data_dir):
    fname = data_dir / EEGMMIDB / "S001R04.edf"
    raw = read_recording(fname)
    player = Player(
        fname,
        name=f"edf-{uuid4().hex}",
        pacing=False,
        marker_map="eegmmidb",
        chunk_size=32,
        wait_for_consumers=("data", "markers"),
    )
    with player:
        consumer = Consumer(player)
        pulled = consumer.pull(raw.n_times, len(raw.annotations))
        consumer.close()
    check_replay(raw, player, *pulled)
    assert set(pulled[2]) == {"universum/rest", "cue/left", "cue/right"}


@pytest.mark.lsl
def test_replay_exported_edf(tmp_path):
    info = mne.create_info(["Fz", "C3", "C4"], 128.0, "eeg")
    raw = mne.io.RawArray(np.random.default_rng(1).standard_normal((3, 640)) * 2e-5, info)
    raw.set_annotations(mne.Annotations([1.0, 3.5], [0.0, 0.0], ["cue/left", "universum/rest"]))
    fname = tmp_path / "small.edf"
    mne.export.export_raw(fname, raw, fmt="edf", verbose=False)
    back = read_recording(fname)
    player = Player(
        fname, name=f"edfx-{uuid4().hex}", pacing=False, wait_for_consumers=("data", "markers")
    )
    with player:
        consumer = Consumer(player)
        pulled = consumer.pull(back.n_times, len(back.annotations))
        consumer.close()
    check_replay(back, player, *pulled)


@pytest.mark.lsl
@pytest.mark.data
@pytest.mark.parametrize(
    ("fname", "dropped"),
    [("xdf/minimal.xdf", 1), ("xdf/clock_resets.xdf", 0), ("xdf/empty_streams.xdf", 0)],
)
def test_replay_xdf_examples(data_dir, fname, dropped):
    """Each example replays as read; the reader names every marker it had to drop."""
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        raw = read_recording(data_dir / fname)
    notices = [str(w.message) for w in record if "fall outside the data stream" in str(w.message)]
    expected = [f"{data_dir / fname}: {dropped} marker(s)"] if dropped else []
    assert [notice.split(" fall outside")[0] for notice in notices] == expected
    player = Player(
        raw, name=f"xdf-{uuid4().hex}", pacing=False, wait_for_consumers=("data", "markers")
    )
    with player:
        consumer = Consumer(player)
        pulled = consumer.pull(raw.n_times, len(raw.annotations))
        consumer.close()
    check_replay(raw, player, *pulled)


def record_back(source, raw, tmp_path, marker_map=None, chunk_size=25):
    """Replay ``source`` without pacing, record it with the Recorder, read the FIF back."""
    player = Player(
        source,
        name=f"back-{uuid4().hex}",
        pacing=False,
        counter=True,
        marker_map=marker_map,
        chunk_size=chunk_size,
        wait_for_consumers=("data", "markers"),
    )
    with player:
        receiver = StreamReceiver(source_id=player.source_id, bufsize=200.0, timeout=5.0)
        markers = MarkerReceiver(source_id=f"{player.source_id}-markers", timeout=5.0)
        recorder = Recorder(receiver, markers, tmp_path, task="replay").start()
        wait_until(
            lambda: (
                recorder.n_samples == raw.n_times and recorder.n_markers == player.n_markers_pushed
            ),
            timeout=30,
            what="every sample and marker on disk",
        )
        out = recorder.stop()
    back = mne.io.read_raw_fif(out, preload=True, verbose=False)
    return player, back


def check_recorded(raw, player, back):
    """Samples on disk equal the file's after the float32 cast; markers within one sample."""
    assert back.n_times == raw.n_times
    counter = back.get_data(picks=["counter"])[0]
    np.testing.assert_array_equal(counter, np.arange(raw.n_times))
    data = back.get_data(picks=raw.ch_names).T
    scale = np.array([1e6 if t == "eeg" else 1.0 for t in raw.get_channel_types()])
    # The recorder stores SI units in single precision: equal within float32 eps.
    np.testing.assert_allclose(data * scale, expected_samples(raw), rtol=3e-7, atol=1e-30)
    mapped = [(s, map_marker(d, player.marker_map)) for s, d in annotation_events(raw)]
    expected = sorted((s, t) for s, t in mapped if t)
    recorded = sorted(annotation_events(back))
    assert [t for _, t in recorded] == [t for _, t in expected]
    assert max(abs(a - b) for (a, _), (b, _) in zip(recorded, expected, strict=True)) <= 1


@pytest.mark.lsl
@pytest.mark.data
def test_replay_bci4als_run_and_record_it_back(data_dir, tmp_path):
    raw = read_recording(data_dir / "bci4als/assaf/Test1/EEG.xdf")
    player, back = record_back(raw, raw, tmp_path, marker_map="bci4als")
    check_recorded(raw, player, back)


# GDF has no writer in MNE or any maintained Python library, so the EDF family's 24-bit
# member (BDF) stands in for it; BrainVision and EEGLAB go through MNE's own exporters.
@pytest.mark.lsl
@pytest.mark.filterwarnings("ignore:Encountered data in 'double' format")
@pytest.mark.parametrize(
    ("fmt", "suffix", "module"),
    [
        ("fif", "_raw.fif", None),
        ("edf", ".edf", "edfio"),
        ("bdf", ".bdf", "edfio"),
        ("brainvision", ".vhdr", "pybv"),
        ("eeglab", ".set", "eeglabio"),
    ],
)
def test_replay_file_and_record_it_back(tmp_path, fmt, suffix, module):
    if module:
        importlib.import_module(module)  # the writer mne.export uses
    info = mne.create_info(["Fz", "C3", "C4", "Pz"], 200.0, "eeg")
    rng = np.random.default_rng(7)
    raw = mne.io.RawArray(rng.standard_normal((4, 2000)) * 2e-5, info, verbose=False)
    raw.set_annotations(
        mne.Annotations(
            [1.0, 3.5, 6.0, 8.25], 0.0, ["cue/left", "universum/rest", "cue/right", "trial/end"]
        )
    )
    fname = tmp_path / f"source{suffix}"
    if fmt == "fif":
        raw.save(fname, verbose=False)
    else:
        mne.export.export_raw(fname, raw, fmt=fmt, verbose=False)
    source = read_recording(fname)
    # BrainVision stores annotations as "<type>/<text>" markers.
    marker_map = {f"Comment/{d}": d for d in raw.annotations.description}
    player, back = record_back(
        fname, source, tmp_path / "rec", marker_map=marker_map, chunk_size=16
    )
    check_recorded(source, player, back)
    assert list(back.annotations.description) == list(raw.annotations.description)


@pytest.mark.lsl
@pytest.mark.parametrize("meas_date", [None, datetime(2026, 1, 1, tzinfo=timezone.utc)])
def test_a_cropped_recording_replays_its_markers_at_their_samples(tmp_path, meas_date):
    """A FIF saved from a crop starts at first_samp > 0, and MNE's onsets count from time 0
    with or without a measurement date: each marker still goes out on its sample."""
    info = mne.create_info(["C3", "C4"], 200.0, "eeg")
    rng = np.random.default_rng(8)
    raw = mne.io.RawArray(rng.standard_normal((2, 2000)) * 2e-5, info, verbose=False)
    raw.set_meas_date(meas_date)
    raw.set_annotations(
        mne.Annotations([3.0, 4.5, 7.25], 0.0, ["cue/left", "cue/right", "trial/end"])
    )
    fname = tmp_path / "cropped_raw.fif"
    raw.crop(2.0, None).save(fname, verbose=False)
    source = read_recording(fname)
    assert source.first_samp == 400
    assert annotation_events(source) == [
        (200, "cue/left"),
        (500, "cue/right"),
        (1050, "trial/end"),
    ]
    player, back = record_back(fname, source, tmp_path / "rec", chunk_size=16)
    check_recorded(source, player, back)
    assert list(back.annotations.description) == ["cue/left", "cue/right", "trial/end"]


@pytest.mark.lsl
def test_no_consumer_times_out(tmp_path):
    player = Player(
        _fif(tmp_path), name=f"lonely-{uuid4().hex}", pacing=False, consumer_timeout=0.3
    )
    player.start()
    with pytest.raises(RuntimeError, match="No consumer connected to LSL stream 'lonely-"):
        player.wait(5.0)
    with pytest.raises(RuntimeError, match="No consumer"):
        player.stop()


def test_bad_arguments(tmp_path):
    fname = _fif(tmp_path)
    for kwargs, message in [
        ({"chunk_size": 0}, "chunk_size"),
        ({"speed": -1.0}, "speed"),
        ({"marker_map": "nope"}, "Unknown marker map 'nope'"),
        ({"marker_map": {"T1": 3}}, "marker_map entry 'T1'"),
        ({"wait_for_consumers": ("dta",)}, "not \\['dta'\\]"),
        ({"channel_format": "int16"}, "channel_format"),
        ({"max_ahead": 2, "chunk_size": 10}, "max_ahead"),
        ({"consumer_timeout": 0}, "consumer_timeout"),
        ({"name": ""}, "An LSL stream name must be a non-empty string, got ''"),
    ]:
        with pytest.raises(ValueError, match=message):
            Player(fname, **kwargs)
    with pytest.raises(FileNotFoundError, match=r"missing\.fif"):
        Player(tmp_path / "missing.fif")
    with pytest.raises(ValueError, match="file path or an MNE Raw"):
        Player(42)
    raw = read_recording(fname)
    raw.rename_channels({"EOG": "counter"})
    with pytest.raises(ValueError, match="already has a channel named 'counter'"):
        Player(raw, counter=True)


def _replay_cli(argv):
    import argparse

    from paradigms.commands import _stream_replay

    parser = argparse.ArgumentParser()
    _stream_replay.add_parser(parser.add_subparsers())
    args = parser.parse_args(["replay", *argv])
    return args.func(args)


@pytest.mark.lsl
def test_cli_replay(tmp_path, capsys):
    fname = _fif(tmp_path, n_times=500)
    name = f"cli-{uuid4().hex}"
    argv = [str(fname), "--speed", "50", "--name", name, "--lsl-mode", "loopback"]
    argv += ["--wait-for", "none"]
    assert _replay_cli([*argv, "--marker-map", "T1=cue/right,run/end=run/stop"]) == 0
    out = capsys.readouterr().out
    assert f"as {name!r}" in out and "Pushed 500 samples and 4 markers." in out


def test_cli_replay_bad_input(tmp_path):
    with pytest.raises(FileNotFoundError, match=r"nothing\.edf"):
        _replay_cli([str(tmp_path / "nothing.edf"), "--lsl-mode", "loopback"])
    assert resolve_marker_map("bci4als") == MARKER_MAPS["bci4als"]
    assert resolve_marker_map("T0=universum/rest, T1=cue/left") == {
        "T0": "universum/rest",
        "T1": "cue/left",
    }
    with pytest.raises(ValueError, match="neither a preset"):
        resolve_marker_map("nonsense")
    with pytest.raises(FileNotFoundError, match=r"map\.json"):
        resolve_marker_map(str(tmp_path / "map.json"))
    (tmp_path / "bad.json").write_text("{not json")
    with pytest.raises(ValueError, match="not valid JSON"):
        resolve_marker_map(str(tmp_path / "bad.json"))
    (tmp_path / "twice.json").write_text('{"T1": "cue/left", "T1": "cue/right"}')
    with pytest.raises(ValueError, match=r"gives 'T1' twice \('T1=cue/left' and 'T1=cue/"):
        resolve_marker_map(str(tmp_path / "twice.json"))


@pytest.mark.lsl
def test_a_finished_replay_keeps_its_streams_while_consumers_may_lack_samples(tmp_path):
    fname = _fif(tmp_path, n_times=300)
    player = Player(
        fname, name=f"busy-{uuid4().hex}", pacing=False, wait_for_consumers=("data", "markers")
    )
    with player:
        consumer = Consumer(player)
        assert player.wait(10.0)
        # liblsl drops what is in transit when an outlet closes: both streams are still consumed
        assert player.busy_streams() == [player.name, f"{player.name}-markers"]
        consumer.pull(300, 4)
        consumer.close()
        wait_until(lambda: player.busy_streams() == [], what="the consumers gone")
    pulled = [0]
    player = Player(fname, name=f"busy-{uuid4().hex}", pacing=False, drained=lambda: pulled[0])
    with player:
        consumer = Consumer(player)
        assert player.wait(10.0)
        assert player.busy_streams() == [player.name]  # nothing pulled yet
        pulled[0] = len(consumer.pull(300, 0)[1])
        assert player.busy_streams() == []
        consumer.close()
