import json
import logging
import os
import select
import signal
import subprocess
import sys
import threading
import time
import warnings
from uuid import uuid4

import mne
import numpy as np
import pylsl
import pytest

import acquisition.recorder as recorder_module
import bci_universum
from acquisition.markers import MarkerOutlet, MarkerReceiver
from acquisition.player import Player
from acquisition.receiver import StreamReceiver
from acquisition.recorder import (
    Recorder,
    RecordingFailed,
    RecordingInProgressError,
    bids_basename,
    hold_interrupts,
    recover,
    unrecovered,
)
from acquisition.streams import declare_speed, make_stream_info

from .lsl_helpers import (
    counter_chunk,
    counter_stream_info,
    crash,
    make_crashed_recording,
    reaped,
    wait_until,
)

pytestmark = pytest.mark.lsl

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _receivers(info, marker_outlet, **kwargs):
    receiver = StreamReceiver(info.name(), source_id=info.source_id(), timeout=5.0, **kwargs)
    markers = MarkerReceiver(marker_outlet.name, source_id=marker_outlet.source_id, timeout=5.0)
    return receiver, markers


def _open_files_under(folder):
    """The files under ``folder`` this process holds open (deleted ones included)."""
    links = (os.path.realpath(f"/proc/self/fd/{fd}") for fd in os.listdir("/proc/self/fd"))
    return [link for link in links if link.startswith(str(folder))]


def test_clean_stop_writes_exactly_what_was_received(tmp_path):
    sfreq, n_eeg, n_total = 250.0, 4, 1000
    info = counter_stream_info(n_eeg, sfreq)
    outlet = pylsl.StreamOutlet(info)
    marker_outlet = MarkerOutlet(f"markers-{uuid4().hex}")
    receiver, markers = _receivers(info, marker_outlet)
    folder = tmp_path / "new" / "sub-07"  # created with its parents
    recorder = Recorder(
        receiver, markers, folder, subject="07", task="calibration", run=2, paradigm="test"
    ).start()
    assert recorder.partial.is_dir()
    assert outlet.wait_for_consumers(5.0) and marker_outlet.wait_for_consumers(5.0)
    t_first = pylsl.local_clock() - n_total / sfreq
    for start in range(0, n_total, 16):
        n = min(16, n_total - start)
        outlet.push_chunk(counter_chunk(start, n, n_eeg), t_first + (start + n - 1) / sfreq)
    sent = {"cue/left": 1.0, "universum/rest": 2.0, "cue/right": 3.5}
    for text, onset in sent.items():
        marker_outlet.push(text, t_first + onset)
    wait_until(lambda: receiver.n_samples == n_total and markers.n_markers == 3)
    fname = recorder.stop()
    assert not receiver.running and not markers.running
    assert recorder.n_samples == n_total and recorder.n_markers == 3
    del outlet
    marker_outlet.close()

    assert fname == folder / "sub-07_ses-01_task-calibration_run-02_raw.fif"
    assert not recorder.partial.exists()
    assert not _open_files_under(folder)  # the partial folder's files were closed
    raw = mne.io.read_raw_fif(fname, preload=True)
    assert raw.n_times == n_total and raw.info["sfreq"] == sfreq
    assert raw.orig_format == "single"  # a float32 stream's precision, not double
    assert raw.ch_names == [f"EEG{k:02d}" for k in range(n_eeg)] + ["counter"]
    expected = counter_chunk(0, n_total, n_eeg).astype(np.float32).astype(np.float64).T
    np.testing.assert_array_equal(raw.get_data(picks="misc")[0], expected[-1])
    # µV on the stream, V in the FIF
    np.testing.assert_allclose(
        raw.get_data(picks="eeg"), expected[:-1] * 1e-6, rtol=1e-6
    )  # FIF float32
    assert list(raw.annotations.description) == list(sent)
    np.testing.assert_allclose(raw.annotations.onset, list(sent.values()), atol=2e-3)
    # the wall-clock time of the first sample
    first_wall = time.time() - (pylsl.local_clock() - t_first)
    assert raw.info["meas_date"].timestamp() == pytest.approx(first_wall, abs=0.5)

    sidecar = json.loads(fname.with_suffix(".json").read_text())
    assert sidecar["n_samples"] == n_total and sidecar["n_markers"] == 3
    assert sidecar["lost_samples"] == 0 and sidecar["recovered"] is False
    assert sidecar["interrupted"] is False
    assert sidecar["subject"] == "07" and sidecar["paradigm"] == "test"
    assert sidecar["run"] == "02"  # the file name's label, as for every run
    assert sidecar["sfreq"] == sfreq and sidecar["ch_names"] == raw.ch_names
    assert sidecar["stream"]["source_id"] == info.source_id()
    assert sidecar["software"] == {
        "bci_universum": bci_universum.__version__,
        "pylsl": pylsl.__version__,
        "liblsl": pylsl.library_version(),
    }
    assert sidecar["first_sample_lsl_time"] == pytest.approx(t_first, abs=1e-3)


@pytest.mark.parametrize("speed", [1, 2])
def test_a_duration_records_its_first_seconds_of_stream(tmp_path, speed):
    """``duration``: the samples stamped within it from the first sample (250 Hz, 3 s: 750),
    none received after; a marker after the end is placed outside the data. A stream sped up
    twice stamps its samples 2 ms apart: 3 s of its stamps hold 1500 samples (6 s of data)."""
    sfreq = 250.0
    info = counter_stream_info(1, sfreq)
    declare_speed(info, speed)
    outlet = pylsl.StreamOutlet(info)
    marker_outlet = MarkerOutlet(f"markers-{uuid4().hex}")
    receiver, markers = _receivers(info, marker_outlet)
    recorder = Recorder(receiver, markers, tmp_path, duration=3.0).start()
    assert outlet.wait_for_consumers(5.0) and marker_outlet.wait_for_consumers(5.0)
    t0 = pylsl.local_clock() - 5.0
    n_pushed, n_kept = 1000 * speed, 750 * speed
    for start in range(0, n_pushed, 50):  # 4 s of stream
        stamps = t0 + (start + np.arange(50)) / (sfreq * speed)  # liblsl would space them 4 ms
        outlet.push_chunk(counter_chunk(start, 50, 1), stamps.tolist())
    marker_outlet.push("cue/left", t0 + 2.0)
    marker_outlet.push("trial/end", t0 + 3.5)
    wait_until(lambda: receiver.n_samples == n_pushed and markers.n_markers == 2)
    wait_until(lambda: recorder.complete, what="the recorder to hold its duration")
    fname = recorder.stop()
    del outlet
    marker_outlet.close()
    raw = mne.io.read_raw_fif(fname)
    np.testing.assert_array_equal(raw.get_data(picks="misc")[0], np.arange(n_kept))
    assert recorder.n_samples == n_kept and list(raw.annotations.description) == ["cue/left"]
    sidecar = json.loads(fname.with_suffix(".json").read_text())
    assert sidecar["n_samples"] == n_kept and sidecar["duration_s"] == 3.0 * speed  # of data
    (outside,) = sidecar["annotations_outside_data"]
    assert outside["text"] == "trial/end"
    # past the data: the last sample's onset plus the LSL seconds from its stamp (3.5 s at 1x)
    last = (n_kept - 1) / sfreq
    assert outside["onset"] == pytest.approx(last + 3.5 - last / speed, abs=1e-3)


@pytest.mark.parametrize("ending", ["stop", "recover"])
def test_channels_sharing_a_label_are_said_at_the_start_and_numbered(tmp_path, caplog, ending):
    """One message, when the recording starts (a recovery says it again): the stream, the
    label, its channels and their names in the FIF; no warning of MNE's own."""
    name = f"twins-{uuid4().hex}"
    # as a foreign amplifier describes it (make_stream_info refuses a label twice)
    info = pylsl.StreamInfo(name, "EEG", 4, 100.0, pylsl.cf_float32, uuid4().hex)
    channels = info.desc().append_child("channels")
    for label in ("C3", "C3", "Cz", "C4"):
        channel = channels.append_child("channel")
        channel.append_child_value("label", label)
        channel.append_child_value("type", "EEG")
        channel.append_child_value("unit", "microvolts")
    outlet = pylsl.StreamOutlet(info)
    receiver = StreamReceiver(name, source_id=info.source_id(), timeout=5.0)
    said = [
        f"LSL stream {name!r} labels several channels alike ('C3': channels 1, 2); the "
        "recording names them C3, C3-1."
    ]
    with caplog.at_level(logging.WARNING, logger="acquisition"):
        recorder = Recorder(receiver, None, tmp_path).start()
        assert caplog.messages == said  # before any sample
        assert outlet.wait_for_consumers(5.0)
        outlet.push_chunk(np.zeros((50, 4)))
        wait_until(lambda: recorder.n_samples == 50)
        caplog.clear()
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            if ending == "stop":
                fname = recorder.stop()
            else:
                crash(recorder)
                fname = recover(recorder.partial)
        assert caplog.messages == ([] if ending == "stop" else said)
    del outlet
    raw = mne.io.read_raw_fif(fname)
    assert raw.ch_names == ["C3", "C3-1", "Cz", "C4"]
    sidecar = json.loads(fname.with_suffix(".json").read_text())
    assert sidecar["ch_names"] == raw.ch_names


def test_lost_samples_are_counted_and_marked(tmp_path):
    info = counter_stream_info(1, 100.0)
    outlet = pylsl.StreamOutlet(info)
    marker_outlet = MarkerOutlet(f"markers-{uuid4().hex}")
    receiver, markers = _receivers(info, marker_outlet)
    with Recorder(receiver, markers, tmp_path) as recorder:
        assert outlet.wait_for_consumers(5.0)
        t0 = pylsl.local_clock() - 5.0
        outlet.push_chunk(counter_chunk(0, 100, 1), t0 + 0.99)
        outlet.push_chunk(counter_chunk(150, 100, 1), t0 + 2.49)  # 50 samples never sent
        marker_outlet.push("cue/left", t0 + 2.0)  # inside the second block: onset 1.5 s
        wait_until(lambda: receiver.n_samples == 200 and markers.n_markers == 1)
    raw = mne.io.read_raw_fif(recorder.fname)
    sidecar = json.loads(recorder.fname.with_suffix(".json").read_text())
    assert raw.n_times == 200 and sidecar["lost_samples"] == 50
    ann = {d: o for d, o in zip(raw.annotations.description, raw.annotations.onset, strict=True)}
    assert ann["BAD_ACQ_SKIP"] == pytest.approx(1.0)
    assert ann["cue/left"] == pytest.approx(1.5, abs=0.011)
    del outlet
    marker_outlet.close()


def test_markers_outside_the_data_are_placed_where_the_sidecar_says(tmp_path):
    """Markers before the first or after the last sample cannot be FIF annotations; the
    sidecar keeps them at their LSL time offset from the first sample."""
    info = counter_stream_info(1, 100.0)
    outlet = pylsl.StreamOutlet(info)
    marker_outlet = MarkerOutlet(f"markers-{uuid4().hex}")
    receiver, markers = _receivers(info, marker_outlet)
    with Recorder(receiver, markers, tmp_path) as recorder:
        assert outlet.wait_for_consumers(5.0) and marker_outlet.wait_for_consumers(5.0)
        t0 = pylsl.local_clock() - 5.0  # first sample at t0, last (index 99) at t0 + 0.99
        outlet.push_chunk(counter_chunk(0, 100, 1), t0 + 0.99)
        sent = {"trial/start": -0.25, "cue/left": 0.5, "trial/end": 1.39, "session/end": 2.49}
        for text, onset in sent.items():
            marker_outlet.push(text, t0 + onset)
        wait_until(lambda: receiver.n_samples == 100 and markers.n_markers == len(sent))
    raw = mne.io.read_raw_fif(recorder.fname)
    sidecar = json.loads(recorder.fname.with_suffix(".json").read_text())
    assert list(raw.annotations.description) == ["cue/left"]
    assert raw.annotations.onset[0] == pytest.approx(0.5, abs=1e-3)  # two inlets' clock offsets
    outside = {a["text"]: a["onset"] for a in sidecar["annotations_outside_data"]}
    assert outside.keys() == {"trial/start", "trial/end", "session/end"}
    for text, onset in outside.items():
        assert onset == pytest.approx(sent[text], abs=1e-3), text
    del outlet
    marker_outlet.close()


def test_recording_never_overwrites(tmp_path):
    info = counter_stream_info(1, 100.0)
    outlet = pylsl.StreamOutlet(info)
    marker_outlet = MarkerOutlet(f"markers-{uuid4().hex}")
    existing = tmp_path / f"{bids_basename('01', '01', 'calibration', '01')}_raw.fif"
    existing.write_bytes(b"precious")
    receiver, markers = _receivers(info, marker_outlet)
    with pytest.raises(FileExistsError, match="refusing to overwrite"):
        Recorder(receiver, markers, tmp_path).start()
    assert existing.read_bytes() == b"precious"
    assert not receiver.running and not markers.running
    del outlet
    marker_outlet.close()


@pytest.mark.parametrize(
    ("kwargs", "error", "fragment"),
    [
        ({"subject": "0 1"}, ValueError, "subject label '0 1'"),
        ({"task": "motor_imagery"}, ValueError, "task label"),
        ({"flush_interval": 1.0}, ValueError, r"flush_interval must be in \(0, 0.5\] s, got 1.0"),
        ({"flush_interval": 0.0}, ValueError, r"flush_interval must be in \(0, 0.5\] s, got 0.0"),
        ({"flush_interval": -0.25}, ValueError, r"in \(0, 0.5\] s, got -0.25"),
        ({"metadata": {"x": object()}}, TypeError, "not JSON serializable"),
        ({"duration": 0}, ValueError, "duration must be positive seconds or None, got 0"),
        ({"duration": float("inf")}, ValueError, "duration must be positive .* got inf"),
        ({"run": "abc"}, ValueError, r"run must be a positive integer .* got 'abc'"),
        ({"run": 0}, ValueError, r"run must be a positive integer .* got 0"),
        ({"run": "-1"}, ValueError, r"run must be a positive integer .* got '-1'"),
        ({"run": 1.0}, ValueError, r"run must be a positive integer .* got 1.0"),
        ({"run": True}, ValueError, r"run must be a positive integer .* got True"),
    ],
)
def test_bad_recorder_parameters(tmp_path, kwargs, error, fragment):
    receiver = StreamReceiver("whatever", timeout=1.0)
    with pytest.raises(error, match=fragment):
        Recorder(receiver, None, tmp_path, **kwargs)


def test_recorder_parameters_at_their_bounds(tmp_path):
    """0.5 s is the longest flush interval allowed; the labels are keyword-only; a run is
    written with two digits however it is given, so that one run has one name."""
    receiver = StreamReceiver("whatever", timeout=1.0)
    assert Recorder(receiver, None, tmp_path, flush_interval=0.5).flush_interval == 0.5
    for run, label in [(1, "01"), ("1", "01"), ("001", "01"), (np.int64(12), "12"), (123, "123")]:
        recorder = Recorder(receiver, None, tmp_path, run=run)
        assert recorder.fname.name == f"sub-01_ses-01_task-calibration_run-{label}_raw.fif"
        assert recorder.labels["run"] == label
    with pytest.raises(TypeError, match="positional"):
        Recorder(receiver, None, tmp_path, "07")
    assert list(tmp_path.iterdir()) == []


def test_recorder_needs_receivers(tmp_path):
    with pytest.raises(TypeError, match="StreamReceiver"):
        Recorder("stream-name", None, tmp_path)


def test_recover_rejects_folders_with_nothing_recoverable(tmp_path):
    with pytest.raises(FileNotFoundError, match="Nothing recoverable"):
        recover(tmp_path)
    empty = tmp_path / "sub-01_ses-01_task-x_run-01_raw.fif.partial"
    empty.mkdir()
    with pytest.raises(FileNotFoundError, match=r"no header\.json"):
        recover(empty)
    (tmp_path / "other_raw.fif.partial").mkdir()
    with pytest.raises(ValueError, match="2 partial recordings"):
        recover(tmp_path)


def _read_line(proc, timeout):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        ready, _, _ = select.select([proc.stdout], [], [], 0.1)
        if ready:
            return proc.stdout.readline()
        if proc.poll() is not None:
            break
    raise AssertionError(f"recorder printed nothing in {timeout} s: {proc.stderr.read()}")


def _record(info, folder, *options):
    """A ``bci-universum stream record`` process of the stream ``info`` into ``folder`` (a
    context manager: its pipes are closed on the way out; :func:`reaped` kills it if needed)."""
    cmd = [
        sys.executable, "-m", "paradigms", "stream", "record",
        "--stream", info.name(), "--source-id", info.source_id(), *options,
        "--output", str(folder), "--lsl-mode", "loopback", "--timeout", "10",
    ]  # fmt: skip
    return subprocess.Popen(
        cmd, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )


def test_sigkill_loses_at_most_one_second_and_recover_restores_the_rest(tmp_path):
    sfreq, n_eeg = 500.0, 8
    info = counter_stream_info(n_eeg, sfreq)
    outlet = pylsl.StreamOutlet(info)
    marker_outlet = MarkerOutlet(f"markers-{uuid4().hex}")
    markers = ("--markers", marker_outlet.name, "--marker-source-id", marker_outlet.source_id)
    with _record(info, tmp_path, *markers) as proc, reaped(proc):
        assert "Recording" in _read_line(proc, 30.0)
        assert outlet.wait_for_consumers(10.0) and marker_outlet.wait_for_consumers(10.0)
        start = pylsl.local_clock()
        counter, marker_times = 0, []
        while pylsl.local_clock() - start < 3.0:  # paced: 10-sample chunks at 500 Hz
            due = int((pylsl.local_clock() - start) * sfreq)
            if due - counter >= 10:
                outlet.push_chunk(counter_chunk(counter, 10, n_eeg), pylsl.local_clock())
                counter += 10
                if counter % 250 == 0:
                    marker_times.append(marker_outlet.push("cue/left"))
            time.sleep(0.002)
        pushed_at_kill, kill_time = counter, pylsl.local_clock()
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(10)
    del outlet
    marker_outlet.close()

    fname = recover(tmp_path)
    raw = mne.io.read_raw_fif(fname, preload=True)
    kept = raw.get_data(picks="misc")[0]
    np.testing.assert_array_equal(kept, np.arange(len(kept)))  # contiguous from 0
    assert len(kept) >= pushed_at_kill - sfreq  # at most 1 s lost
    sidecar = json.loads(fname.with_suffix(".json").read_text())
    assert sidecar["recovered"] is True and sidecar["n_samples"] == len(kept)
    old_markers = [t for t in marker_times if t < kill_time - 1.0]
    # the markers written before the last second are kept; none is invented or doubled
    kept_markers = list(raw.annotations.description).count("cue/left")
    assert len(old_markers) <= kept_markers <= len(marker_times) and len(old_markers) > 0


def _on_disk(partial, n_channels):
    """Samples complete on disk: ``data.bin`` is written before ``timestamps.bin``."""
    rows = (partial / "data.bin").stat().st_size // (n_channels * 4)
    return min(rows, (partial / "timestamps.bin").stat().st_size // 8)


def test_a_running_recording_cannot_be_recovered_and_a_killed_one_can(tmp_path):
    """`stream recover` on the folder of a recording still running refuses and touches nothing
    (it used to finalise it, and the recorder then lost the rest), and ``unrecovered`` does not
    list it; once the recording process is killed, the lock is gone with it: ``unrecovered``
    lists it and recover writes everything."""
    sfreq, n_eeg = 250.0, 2
    info = counter_stream_info(n_eeg, sfreq)
    outlet = pylsl.StreamOutlet(info)
    counter = 0
    with _record(info, tmp_path) as proc, reaped(proc):
        assert "Recording" in _read_line(proc, 30.0)
        assert outlet.wait_for_consumers(10.0)
        partial = next(tmp_path.glob("*.partial"))
        for _ in range(50):  # 250 samples, all written before the recover attempt
            outlet.push_chunk(counter_chunk(counter, 5, n_eeg), pylsl.local_clock())
            counter += 5
        wait_until(lambda: _on_disk(partial, n_eeg + 1) == counter, 30.0, "the first write")
        before = {p.name: p.read_bytes() for p in partial.iterdir()}
        with pytest.raises(RecordingInProgressError, match=r"still being recorded.*stop it"):
            recover(tmp_path)
        assert {p.name: p.read_bytes() for p in partial.iterdir()} == before
        assert sorted(p.name for p in tmp_path.iterdir()) == [partial.name]
        assert unrecovered(tmp_path) == []
        for _ in range(50):  # the recording goes on
            outlet.push_chunk(counter_chunk(counter, 5, n_eeg), pylsl.local_clock())
            counter += 5
        wait_until(lambda: _on_disk(partial, n_eeg + 1) == counter, 30.0, "the next write")
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(10)
    del outlet

    assert unrecovered(tmp_path) == [partial]
    raw = mne.io.read_raw_fif(recover(tmp_path), preload=True, verbose=False)
    np.testing.assert_array_equal(raw.get_data(picks="misc")[0], np.arange(counter))


def _grow(partial, n_samples, n_channels):
    """Extend a partial recording of a counter stream to ``n_samples`` in its own format."""
    counter = np.arange(n_samples, dtype=np.float32)
    rows = np.repeat(counter[:, None], n_channels, axis=1)
    rows.tofile(partial / "data.bin")
    (1000.0 + np.arange(n_samples) / 100.0).tofile(partial / "timestamps.bin")


def test_a_kill_while_the_fif_is_written_leaves_the_recording_recoverable(tmp_path):
    """SIGKILL to `stream recover` while it writes the FIF: no torn FIF under the final name
    (it would block every later recovery), and the next recovery writes every sample."""
    partial = make_crashed_recording(tmp_path)
    n = 4_000_000  # 48 MB of float32: the write lasts long enough to be cut
    _grow(partial, n, 3)
    fif = partial.with_name(partial.name.removesuffix(".partial"))
    cmd = [sys.executable, "-m", "paradigms", "stream", "recover", str(partial)]
    proc = subprocess.Popen(cmd, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        staged = partial / fif.name
        wait_until(lambda: staged.exists() or proc.poll() is not None, 120, "the FIF write")
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(10)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(10)
        proc.stderr.close()
    assert proc.returncode == -signal.SIGKILL  # killed during the finalisation
    assert not fif.exists() and not fif.with_suffix(".json").exists()
    raw = mne.io.read_raw_fif(recover(partial), preload=True, verbose=False)
    np.testing.assert_array_equal(raw.get_data(picks="misc")[0], np.arange(n))
    assert not partial.exists()


def test_a_recording_split_over_several_files_is_moved_whole(tmp_path, monkeypatch):
    """FIF splits a recording over 2 GB into parts that name each other; all of them leave
    the partial folder under their own names. (MNE's split size is lowered to 4 MB here:
    2 GB of test data cannot be written.)"""
    partial = make_crashed_recording(tmp_path)
    n = 700_000  # 8.4 MB of float32
    _grow(partial, n, 3)
    save = mne.io.BaseRaw.save
    monkeypatch.setattr(
        mne.io.BaseRaw, "save", lambda raw, fname, **kw: save(raw, fname, split_size="4MB", **kw)
    )
    fname = recover(partial)
    assert len(list(tmp_path.glob("*_raw*.fif"))) > 1  # really split
    raw = mne.io.read_raw_fif(fname, preload=True, verbose=False)
    np.testing.assert_array_equal(raw.get_data(picks="misc")[0], np.arange(n))
    assert not partial.exists()


def test_interrupts_while_finishing_are_held_then_delivered(caplog):
    """Real signals: the block runs to its end; the first held one reaches its own handler
    afterwards (one message however many came), or is dropped with ``redeliver=False``."""
    handler = signal.getsignal(signal.SIGINT)
    finished = False
    with pytest.raises(KeyboardInterrupt), hold_interrupts("sub-01_raw.fif"):
        for _ in range(3):
            signal.raise_signal(signal.SIGINT)
        finished = True
    assert finished and signal.getsignal(signal.SIGINT) is handler
    assert [r.getMessage() for r in caplog.records] == [
        "Finishing sub-01_raw.fif first; this ends once it is written."
    ]
    terms = []
    previous = signal.signal(signal.SIGTERM, lambda *_: terms.append(1))
    mine = signal.getsignal(signal.SIGTERM)
    try:
        with pytest.raises(KeyboardInterrupt), hold_interrupts("sub-01_raw.fif"):
            signal.raise_signal(signal.SIGINT)
            signal.raise_signal(signal.SIGTERM)
        assert terms == []  # the first one held is delivered, not the last
        with hold_interrupts("sub-01_raw.fif", redeliver=False):
            signal.raise_signal(signal.SIGTERM)
        assert terms == [] and signal.getsignal(signal.SIGTERM) is mine
    finally:
        signal.signal(signal.SIGTERM, previous)


def test_a_new_recording_waits_for_a_check_holding_its_lock(tmp_path):
    """A new recording's folder may be checked by another process (``unrecovered``) at the
    moment the recorder locks it: the recorder waits for that check instead of failing; a check
    (without ``create``) is refused at once."""
    holder = recorder_module._lock_partial(tmp_path, create=True)
    with pytest.raises(recorder_module.RecordingInProgressError):
        recorder_module._lock_partial(tmp_path)
    got, errors = [], []

    def lock():
        try:
            got.append(recorder_module._lock_partial(tmp_path, create=True))
        except Exception as err:
            errors.append(err)

    thread = threading.Thread(target=lock)
    thread.start()
    thread.join(0.5)
    assert thread.is_alive() and not errors  # waiting for the lock
    os.close(holder)
    thread.join(10)
    assert not thread.is_alive() and not errors and len(got) == 1
    os.close(got[0])


def test_nested_holds_leave_the_signals_to_the_outer_one(caplog):
    """A session finishing a run holds interrupts while its recorder finishes the file: one
    message (the outer block's), and the signal is delivered once, after the outer block."""
    handler = signal.getsignal(signal.SIGINT)
    steps = []
    with pytest.raises(KeyboardInterrupt), hold_interrupts("calibration run 01"):
        with hold_interrupts("sub-01_raw.fif"):
            signal.raise_signal(signal.SIGINT)
            steps.append("inner")
        steps.append("outer")
    assert steps == ["inner", "outer"] and signal.getsignal(signal.SIGINT) is handler
    assert [r.getMessage() for r in caplog.records] == [
        "Finishing calibration run 01 first; this ends once it is written."
    ]
    # the run ends because of one: nothing is delivered after it
    with hold_interrupts("online run 02", redeliver=False), hold_interrupts("sub-01_raw.fif"):
        signal.raise_signal(signal.SIGINT)
    assert signal.getsignal(signal.SIGINT) is handler


def test_holding_interrupts_outside_the_main_thread_leaves_signals_alone():
    """Only the main thread may set handlers: elsewhere the block just runs."""
    ran, errors = [], []

    def work():
        try:
            with hold_interrupts("x_raw.fif"):
                ran.append(True)
        except Exception as err:
            errors.append(err)

    thread = threading.Thread(target=work)
    thread.start()
    thread.join(10)
    assert ran == [True] and errors == []


@pytest.mark.parametrize("interrupted", [False, True])
def test_a_ctrl_c_while_stop_writes_is_delivered_after_unless_the_run_was_interrupted(
    tmp_path, monkeypatch, interrupted
):
    """A real SIGINT during the final write: the FIF is complete; the interrupt then goes on
    (a normal stop) or is dropped (the run is already ending because of one)."""
    info = counter_stream_info(2, 100.0)
    outlet = pylsl.StreamOutlet(info)
    receiver = StreamReceiver(source_id=info.source_id(), timeout=5.0)
    recorder = Recorder(receiver, None, tmp_path).start()
    assert outlet.wait_for_consumers(5.0)
    outlet.push_chunk(counter_chunk(0, 50, 2))
    wait_until(lambda: recorder.n_samples == 50, what="50 samples on disk")
    finalize = recorder_module.finalize

    def interrupted_finalize(*args, **kwargs):
        signal.raise_signal(signal.SIGINT)
        return finalize(*args, **kwargs)

    monkeypatch.setattr(recorder_module, "finalize", interrupted_finalize)
    if interrupted:
        recorder.stop(interrupted=True)
    else:
        with pytest.raises(KeyboardInterrupt):
            recorder.stop()
    del outlet
    raw = mne.io.read_raw_fif(recorder.fname, preload=True, verbose=False)
    np.testing.assert_array_equal(raw.get_data(picks="misc")[0], np.arange(50))


def test_a_second_ctrl_c_does_not_cut_the_final_write_short(tmp_path):
    """`stream record` ended by Ctrl-C, then Ctrl-C again while the FIF is written (an
    impatient operator): the FIF holds every sample and the command ends normally."""
    n, n_eeg = 200_000, 31  # 26 MB of float32 (200 s, within liblsl's 360 s buffers)
    info = counter_stream_info(n_eeg, 1000.0)
    outlet = pylsl.StreamOutlet(info)
    with _record(info, tmp_path) as proc, reaped(proc):
        assert "Recording" in _read_line(proc, 30.0)
        assert outlet.wait_for_consumers(10.0)
        for start in range(0, n, 2_000):
            outlet.push_chunk(counter_chunk(start, 2_000, n_eeg))
        partial = next(tmp_path.glob("*.partial"))
        fif = partial.with_name(partial.name.removesuffix(".partial"))
        size = n * (n_eeg + 1) * 4
        wait_until(lambda: (partial / "data.bin").stat().st_size == size, 60, "every sample")
        os.kill(proc.pid, signal.SIGINT)
        wait_until(lambda: fif.exists() or (partial / fif.name).exists(), 60, "the FIF write")
        os.kill(proc.pid, signal.SIGINT)
        out, err = proc.communicate(timeout=60)
    assert proc.returncode == 0, err
    assert f"Wrote {fif}: {n} samples" in out and "Finishing" in err
    raw = mne.io.read_raw_fif(fif, preload=True, verbose=False)
    np.testing.assert_array_equal(raw.get_data(picks="misc")[0], np.arange(n))
    assert not partial.exists()


def test_soak_600000_samples_recorded_none_lost(tmp_path):
    """Ten minutes of 64 ch at 1000 Hz, unpaced, into FIF: samples in = samples on disk."""
    n_eeg, sfreq, n_total, chunk = 63, 1000.0, 600_000, 500
    buffered = int(n_total / sfreq) + 60  # liblsl buffers hold the unpaced backlog
    info = counter_stream_info(n_eeg, sfreq)
    outlet = pylsl.StreamOutlet(info, max_buffered=buffered)
    receiver = StreamReceiver(
        info.name(), source_id=info.source_id(), timeout=5.0, max_buflen=buffered
    )
    block = counter_chunk(0, chunk, n_eeg).astype(np.float32)
    with Recorder(receiver, None, tmp_path, task="soak") as recorder:
        assert outlet.wait_for_consumers(5.0)
        for start in range(0, n_total, chunk):
            block[:, -1] = np.arange(start, start + chunk)
            outlet.push_chunk(block)
        wait_until(lambda: receiver.n_samples >= n_total, timeout=120.0, what="soak samples")
    del outlet
    raw = mne.io.read_raw_fif(recorder.fname, preload=False)
    assert raw.n_times == n_total
    counter = raw.get_data(picks=["counter"])[0]
    np.testing.assert_array_equal(counter, np.arange(n_total))
    sidecar = json.loads(recorder.fname.with_suffix(".json").read_text())
    assert sidecar["lost_samples"] == 0 and sidecar["stream_events"] == []


def test_montage_and_units_from_the_stream_description(tmp_path):
    montage = mne.channels.make_standard_montage("biosemi64")
    ch_pos = montage.get_positions()["ch_pos"]
    info = make_stream_info(
        f"montage-{uuid4().hex}",
        ["C3", "Cz", "C4", "trigger"],
        128.0,
        ch_types=["eeg", "eeg", "eeg", "stim"],
        units=["volts", "millivolts", "microvolts", "n/a"],
        channel_format="double64",
        positions={ch: ch_pos[ch] for ch in ("C3", "Cz", "C4")},
        source_id=uuid4().hex,
    )
    outlet = pylsl.StreamOutlet(info)
    receiver = StreamReceiver(info.name(), source_id=info.source_id(), timeout=5.0)
    with Recorder(receiver, None, tmp_path, task="montage") as recorder:
        assert outlet.wait_for_consumers(5.0)
        outlet.push_chunk(np.tile([1.0, 2.0, 3.0, 5.0], (64, 1)))
        wait_until(lambda: receiver.n_samples == 64)
    del outlet
    raw = mne.io.read_raw_fif(recorder.fname, preload=True)
    assert raw.get_channel_types() == ["eeg", "eeg", "eeg", "stim"]
    np.testing.assert_allclose(raw.get_data()[:, 0], [1.0, 2e-3, 3e-6, 5.0], rtol=1e-6)
    positions = raw.get_montage().get_positions()["ch_pos"]
    for ch in ("C3", "Cz", "C4"):
        np.testing.assert_allclose(positions[ch], ch_pos[ch], atol=1e-9)


def _dense_marker_raw(n_times, sfreq=250.0, every=3):
    """4 EEG channels, a marker every ``every`` samples from the first sample to the last."""
    rng = np.random.default_rng(11)
    info = mne.create_info(["C3", "Cz", "C4", "Pz"], sfreq, "eeg")
    raw = mne.io.RawArray(rng.standard_normal((4, n_times)) * 2e-5, info, verbose=False)
    samples = np.r_[np.arange(0, n_times, every), n_times - 1]
    texts = [f"cue/m{k}" for k in range(len(samples))]
    raw.set_annotations(mne.Annotations(samples / sfreq, 0.0, texts))
    return raw, samples, texts


def _dense_player(raw, **kwargs):
    return Player(
        raw,
        name=f"dense-{uuid4().hex}",
        pacing=False,
        counter=True,
        chunk_size=5,
        wait_for_consumers=("data", "markers"),
        **kwargs,
    )


def _check_dense_recording(fname, raw, samples, texts):
    """Counter contiguous, data bit-exact in float32 µV, every marker of the span on its sample."""
    back = mne.io.read_raw_fif(fname, preload=True, verbose=False)
    counter = back.get_data(picks="counter")[0].astype(int)
    first = counter[0]
    np.testing.assert_array_equal(counter, np.arange(first, first + back.n_times))
    expected = (raw.get_data().T * 1e6).astype(np.float32)  # what the µV float32 stream carries
    recorded = (back.get_data(picks="eeg").T * 1e6).astype(np.float32)
    np.testing.assert_array_equal(recorded, expected[first : first + back.n_times])
    span = (samples >= first) & (samples <= counter[-1])
    assert list(back.annotations.description) == [t for t, k in zip(texts, span, strict=True) if k]
    onsets = np.round(back.annotations.onset * raw.info["sfreq"]).astype(int) + first
    np.testing.assert_array_equal(onsets, samples[span])
    return span.sum()


def test_recorder_owning_its_receivers_keeps_every_marker_of_an_unpaced_replay(tmp_path):
    """Recorder.start() starts the receivers; the replay begins as soon as they connect."""
    raw, samples, texts = _dense_marker_raw(300)
    for run in range(6):
        player = _dense_player(raw)
        receiver = StreamReceiver(source_id=player.source_id, timeout=5.0)
        markers = MarkerReceiver(source_id=f"{player.source_id}-markers", timeout=5.0)
        with player:
            recorder = Recorder(receiver, markers, tmp_path, run=run + 1).start()
            assert player.wait(30.0)
            done = (markers, receiver)
            wait_until(
                lambda done=done: (
                    done[0].n_markers == len(samples) and done[1].n_samples == raw.n_times
                ),
                what="every marker and sample",
            )
            fname = recorder.stop()
        assert _check_dense_recording(fname, raw, samples, texts) == len(samples)


def test_recorders_started_on_live_streams_keep_every_marker_from_their_first_sample(tmp_path):
    """20 recorders, one after the other, each started while an unpaced replay is in flight.

    The replay runs as fast as the receiver pulls up to a gate the test moves: 50 samples past
    the last run while the recorder starts, then 150 past what had arrived when it returned
    (so every recording holds at least 150 samples, and 20 runs never reach the end of the
    file however slowly the test runs); each recorder stops once the gate holds everything
    still.
    """
    raw, samples, texts = _dense_marker_raw(6000)
    gate = [0]
    receiver = StreamReceiver(source_id=uuid4().hex, timeout=5.0)
    player = _dense_player(
        raw, source_id=receiver.source_id, drained=lambda: min(gate[0], receiver.n_samples),
        max_ahead=10,
    )  # fmt: skip
    markers = MarkerReceiver(source_id=f"{player.source_id}-markers", timeout=5.0)
    n_kept = 0
    with player, receiver, markers:
        for run in range(20):
            gate[0] = receiver.n_samples + 50
            recorder = Recorder(receiver, markers, tmp_path, run=run + 1).start()
            gate[0] = receiver.n_samples + 150
            # stalled: the player cannot push another chunk and everything pushed has arrived
            wait_until(
                lambda: (
                    player.n_pushed + 5 > gate[0] + 10
                    and receiver.n_samples == player.n_pushed
                    and markers.n_markers == np.sum(samples < player.n_pushed)
                ),
                what="the replay held at the gate",
            )
            n_kept += _check_dense_recording(recorder.stop(), raw, samples, texts)
    assert n_kept >= 20 * 150 // 3  # a marker every 3 samples
    assert player.n_pushed < raw.n_times


def test_a_silence_before_the_first_sample_is_not_part_of_the_recording(tmp_path):
    info = counter_stream_info(1, 100.0)
    outlet = pylsl.StreamOutlet(info)
    receiver = StreamReceiver(source_id=info.source_id(), timeout=5.0, silence_timeout=0.2)
    with Recorder(receiver, None, tmp_path) as recorder:
        wait_until(lambda: receiver.silent, what="the source silent before it starts")
        outlet.push_chunk(counter_chunk(0, 50, 1))
        wait_until(lambda: recorder.n_samples == 50, what="50 samples")
        # (silent again 0.2 s after them, maybe before the flush that wrote them)
        wait_until(lambda: len(receiver.events) == 3, what="a silence inside the recording")
        outlet.push_chunk(counter_chunk(50, 50, 1))
        wait_until(lambda: recorder.n_samples == 100, what="100 samples")
    sidecar = json.loads(recorder.fname.with_suffix(".json").read_text())
    # a loaded machine may take longer than silence_timeout to stop: a third silence then
    # follows, and belongs to the sidecar only if a flush saw it
    events = [vars(e) for e in receiver.events]
    assert [e["kind"] for e in events[:4]] == ["silence", "resumed", "silence", "resumed"]
    # the second silence and its end, whichever flush saw them
    recorded = sidecar["stream_events"]
    assert len(recorded) >= 2 and recorded == events[2 : 2 + len(recorded)]
    del outlet


def test_a_recording_starts_at_its_first_sample_within_half_a_sample(tmp_path, monkeypatch):
    """Live receivers, exact timestamps (no clock correction; 128 Hz, dyadic times).

    What the receivers got before the recorder started belongs to the recording when it is
    stamped at or after its first sample, within half a sample (the bound included): markers
    that arrived early, and the events of a chunk received while the recorder subscribed.
    Inside the data, onsets follow the recorded timestamps across a gap; a marker one sample
    period after the last sample is outside the data, in the sidecar.
    """
    sfreq = 128.0
    period, half = 1 / sfreq, 0.5 / sfreq
    info = counter_stream_info(1, sfreq)
    outlet = pylsl.StreamOutlet(info)
    marker_outlet = MarkerOutlet(f"markers-{uuid4().hex}")
    receiver = StreamReceiver(source_id=info.source_id(), timeout=5.0, processing_flags=None)
    markers = MarkerReceiver(source_id=marker_outlet.source_id, timeout=5.0, processing_flags=None)

    def push(counters, stamps, nan_first=False):
        chunk = np.column_stack([counters, counters]).astype(float)  # EEG00, counter
        if nan_first:
            chunk[0, 0] = np.nan
        outlet.push_chunk(chunk, list(stamps))

    with receiver, markers:
        assert outlet.wait_for_consumers(5.0) and marker_outlet.wait_for_consumers(5.0)
        first = np.ceil(pylsl.local_clock() * 256) / 256  # the recording's first sample
        push(range(10), first - 20 * period + np.arange(10) * period)
        marker_outlet.push("cue/early", first - half)  # kept: within half a sample
        marker_outlet.push("cue/stale", first - 2 * period)  # before the recording
        wait_until(lambda: receiver.n_samples == 10 and markers.n_markers == 2)
        subscribe = receiver.subscribe

        def subscribe_after_a_chunk():
            # counter 10 (NaN, a sample before the first: its event is left out), then 21
            # after 10 lost samples, half a sample before the first (its gap is kept)
            push([10, 21], [first - period, first - half], nan_first=True)
            wait_until(lambda: receiver.n_samples == 12, what="the chunk while subscribing")
            return subscribe()

        monkeypatch.setattr(receiver, "subscribe", subscribe_after_a_chunk)
        recorder = Recorder(receiver, markers, tmp_path, flush_interval=0.05).start()
        # written before any sample arrived (the early markers wait for the first sample)
        marker_outlet.push("cue/waiting", first + 3 * period)
        wait_until(lambda: recorder.n_markers == 1, timeout=5.0, what="a marker before data")
        push(range(22, 32), first + np.arange(10) * period, nan_first=True)
        wait_until(lambda: recorder.n_samples == 10, what="the first recorded chunk")
        push(range(37, 42), first + np.arange(15, 20) * period)  # 5 lost
        marker_outlet.push("cue/after", first + 20 * period)  # one period after the last
        wait_until(lambda: receiver.n_samples == 27 and markers.n_markers == 4)
        fname = recorder.stop()
    marker_outlet.close()

    raw = mne.io.read_raw_fif(fname, preload=True, verbose=False)
    expected = np.r_[np.arange(22, 32), np.arange(37, 42)]
    np.testing.assert_array_equal(raw.get_data(picks="misc")[0], expected)
    ann = sorted(zip(raw.annotations.onset, raw.annotations.description, strict=True))
    assert [d for _, d in ann] == ["BAD_ACQ_SKIP", "cue/early", "cue/waiting", "BAD_ACQ_SKIP"]
    # FIF keeps annotation onsets in single precision
    np.testing.assert_allclose([o for o, _ in ann], np.array([0, 0, 3, 10]) * period, atol=1e-6)
    sidecar = json.loads(fname.with_suffix(".json").read_text())
    events = [(e["kind"], e["time"], e["n_samples"]) for e in sidecar["stream_events"]]
    assert events == [
        ("gap", first - half, 10),
        ("nonfinite", first, 1),
        ("gap", first + 15 * period, 5),
    ]
    assert sidecar["lost_samples"] == 15 and sidecar["n_markers"] == 3
    assert sidecar["annotations_outside_data"] == [{"text": "cue/after", "onset": 15 * period}]
    assert sidecar["duration_s"] == 15 * period


def test_a_restarted_receiver_records_its_new_events_once(tmp_path):
    """A stopped receiver that already reported events: the recorder restarts it (clearing
    them), and a gap reported while it records is written once, whatever the flushes."""
    sfreq = 100.0
    info = counter_stream_info(1, sfreq)
    outlet = pylsl.StreamOutlet(info)
    receiver = StreamReceiver(source_id=info.source_id(), timeout=5.0)
    with receiver:
        assert outlet.wait_for_consumers(5.0)
        outlet.push_chunk(counter_chunk(0, 10, 1))
        outlet.push_chunk(counter_chunk(15, 5, 1))
        wait_until(lambda: len(receiver.events) == 1, what="an earlier gap")
    recorder = Recorder(receiver, None, tmp_path, flush_interval=0.05).start()
    assert outlet.wait_for_consumers(5.0)
    t0 = pylsl.local_clock()
    for start, n, total in [(0, 10, 10), (13, 7, 17), (20, 10, 27)]:  # 3 lost before 13
        # stamped as sampled at sfreq: a chunk pushed within its own length of the one before
        # (liblsl back-dates an unstamped chunk from the push time) stays after it
        outlet.push_chunk(counter_chunk(start, n, 1), t0 + (start + n - 1) / sfreq)
        wait_until(lambda total=total: recorder.n_samples == total, what=f"{total} samples")
    fname = recorder.stop()
    del outlet
    sidecar = json.loads(fname.with_suffix(".json").read_text())
    assert [(e["kind"], e["n_samples"]) for e in sidecar["stream_events"]] == [("gap", 3)]
    assert sidecar["lost_samples"] == 3
    raw = mne.io.read_raw_fif(fname, verbose=False)
    assert list(raw.annotations.description) == ["BAD_ACQ_SKIP"]
    assert raw.annotations.onset[0] == pytest.approx(10 / sfreq, abs=1e-3)


def test_a_failed_write_is_raised_by_stop_and_the_partial_recording_recovers(
    tmp_path, monkeypatch
):
    """A disk error in the writer thread: stop() names the partial folder and recover();
    recover() writes the samples that reached the disk; no file is left open."""
    import acquisition.recorder as recorder_module

    info = counter_stream_info(1, 100.0)
    outlet = pylsl.StreamOutlet(info)
    receiver = StreamReceiver(source_id=info.source_id(), timeout=5.0)
    recorder = Recorder(receiver, None, tmp_path, flush_interval=0.05).start()
    assert outlet.wait_for_consumers(5.0)
    outlet.push_chunk(counter_chunk(0, 20, 1))
    wait_until(lambda: recorder.n_samples == 20, what="20 samples on disk")
    append = recorder_module._fsync_append

    def full_disk(handle, payload):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(recorder_module, "_fsync_append", full_disk)
    outlet.push_chunk(counter_chunk(20, 20, 1))
    wait_until(lambda: not recorder.running, what="the writer thread to end on the error")
    monkeypatch.setattr(recorder_module, "_fsync_append", append)
    with pytest.raises(RecordingFailed, match=r"Writing .*\.partial failed: .*No space left"):
        recorder.stop()
    del outlet
    assert not _open_files_under(tmp_path)
    raw = mne.io.read_raw_fif(recover(recorder.partial), preload=True, verbose=False)
    np.testing.assert_array_equal(raw.get_data(picks="misc")[0], np.arange(20))


def test_what_the_recorder_counts_is_already_on_disk(tmp_path):
    """``n_samples`` counts samples whose bytes reached the partial files (nothing waits in a
    write buffer for a later flush), so a kill loses none of them and a full disk fails at the
    write that lost data."""
    info = counter_stream_info(1, 100.0)
    outlet = pylsl.StreamOutlet(info)
    receiver = StreamReceiver(source_id=info.source_id(), timeout=5.0)
    with Recorder(receiver, None, tmp_path, flush_interval=0.05) as recorder:
        assert outlet.wait_for_consumers(5.0)
        outlet.push_chunk(counter_chunk(0, 20, 1))
        wait_until(lambda: recorder.n_samples == 20, what="20 samples written")
        data = np.fromfile(recorder.partial / "data.bin", dtype=np.float32).reshape(-1, 2)
        stamps = np.fromfile(recorder.partial / "timestamps.bin", dtype=np.float64)
        np.testing.assert_array_equal(data[:, 1], np.arange(20))
        assert len(stamps) == 20
    del outlet


def test_a_full_disk_is_reported_while_recording_and_what_reached_it_recovers(tmpfs):
    """A real file system running full (a 64 KB tmpfs): check() reports it while the recording
    runs, naming the command that recovers it; nothing is written after the failed write, so
    once there is room the recording recovers as an unbroken start of the stream."""
    folder = tmpfs(64)
    info = counter_stream_info(4, 1000.0)
    outlet = pylsl.StreamOutlet(info)
    receiver = StreamReceiver(source_id=info.source_id(), timeout=5.0)
    recorder = Recorder(receiver, None, folder, flush_interval=0.05).start()
    assert outlet.wait_for_consumers(5.0)
    pushed = 0

    def failed() -> bool:
        nonlocal pushed
        try:
            recorder.check()
        except RecordingFailed as err:
            failed.message = str(err)
            return True
        if recorder.n_samples == pushed:  # written: more
            outlet.push_chunk(counter_chunk(pushed, 500, 4))
            pushed += 500
        return False

    wait_until(failed, what="the writer to run out of space")
    hint = f"'bci-universum stream recover {recorder.partial}'"
    assert "No space left on device" in failed.message and hint in failed.message
    with pytest.raises(RecordingFailed, match="No space left on device") as stopped:
        recorder.stop()
    assert hint in str(stopped.value)
    subprocess.run(["mount", "-o", "remount,size=4m", str(folder)], check=True)  # room made
    raw = mne.io.read_raw_fif(recover(recorder.partial), preload=True, verbose=False)
    counter = raw.get_data(picks="misc")[0]
    assert 0 < len(counter) < pushed
    np.testing.assert_array_equal(counter, np.arange(len(counter)))


def test_stop_waits_30_s_for_the_writer_thread(tmp_path):
    """As documented: a writer thread still running 30 s after the receivers stopped is an
    error (a stand-in thread that never ends reports how long it was waited for)."""

    class NeverEnds:
        waited = None

        def join(self, timeout):
            NeverEnds.waited = timeout

        def is_alive(self):
            return True

    receiver = StreamReceiver("never-started", timeout=1.0)
    recorder = Recorder(receiver, None, tmp_path)
    recorder._thread, recorder._queue = NeverEnds(), receiver.subscribe()
    with pytest.raises(RuntimeError, match="did not stop within 30 s"):
        recorder.stop()
    assert NeverEnds.waited == 30.0
