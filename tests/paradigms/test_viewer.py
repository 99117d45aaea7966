"""The scope offscreen on a real loopback stream: what it draws, filters and marks."""

import os
import signal as signals
import subprocess
import sys
import threading
from contextlib import contextmanager
from uuid import uuid4

import matplotlib.image
import mne
import numpy as np
import pylsl
import pytest
from scipy import signal, stats

from acquisition import StreamReceiver
from acquisition.streams import make_stream_info
from bci_universum.online import design_bandpass
from paradigms.cli import main
from paradigms.viewer import Scope, decimate, pick_stream, stream_quality
from tests.acquisition.lsl_helpers import wait_until

pytestmark = [pytest.mark.lsl, pytest.mark.gui]

SFREQ = 250.0
N_CH = 6
FLAT = 4  # the channel left unconnected
SINE_HZ = 12.0


def _signals(n, seed=0):
    """µV: noise of a different level on every channel (as on a real cap), a 12 Hz rhythm
    on channel 1, channel FLAT constant."""
    rng = np.random.default_rng(seed)
    t = np.arange(n) / SFREQ
    data = 10.0 * np.exp(np.linspace(-0.6, 0.6, N_CH)) * rng.standard_normal((n, N_CH))
    data[:, 1] += 40.0 * np.sin(2 * np.pi * SINE_HZ * t)
    data[:, FLAT] = 3.0
    return data.astype(np.float32)


@pytest.fixture
def stream():
    """A fresh EEG outlet (µV) and a receiver connected to it."""
    name = f"view-{uuid4().hex}"
    info = make_stream_info(name, [f"E{k}" for k in range(N_CH)], SFREQ, source_id=uuid4().hex)
    outlet = pylsl.StreamOutlet(info)
    receiver = StreamReceiver(name, source_id=info.source_id(), timeout=5.0).start()
    wait_until(outlet.have_consumers, what="the receiver")
    yield outlet, receiver
    receiver.stop()


def _push_all(outlet, data):
    """Push ``data`` with the stamps of a stream that started ``len(data)`` samples ago."""
    now = pylsl.local_clock()
    stamps = now - (len(data) - 1 - np.arange(len(data))) / SFREQ
    for k in range(0, len(data), 50):
        outlet.push_chunk(data[k : k + 50], stamps[k : k + 50].tolist())


def _fill(scope, outlet, data):
    _push_all(outlet, data)

    def drawn():
        scope.update()
        return scope.n_samples >= len(data)

    wait_until(drawn, what="the scope to draw every sample")
    scope.update(full=True)


def test_scope_draws_the_stream(stream, tmp_path):
    outlet, receiver = stream
    scope = Scope(receiver, window=4.0, quality_seconds=4.0)
    try:
        data = _signals(1000)  # exactly the 4 s window
        _fill(scope, outlet, data)
        assert scope.n_samples == 1000
        # traces: offset + sample / scale, the newest sample at t = 0, first channel on top
        for k in range(N_CH):
            x, y = scope.trace(k)
            assert x[-1] == 0.0 and x[0] == pytest.approx(-999 / SFREQ)
            np.testing.assert_allclose((y - (N_CH - 1 - k)) * scope.scales[k], data[:, k], 1e-5)
        scope.autoscale()
        spread = stats.median_abs_deviation(scope.shown, axis=1, scale="normal")
        np.testing.assert_allclose(scope.scales, np.where(spread > 0, 4 * spread, 1.0), 1e-3)
        assert scope.auto_scale
        scope.set_scale("E2", 25.0)
        assert not scope.auto_scale
        scope.update()
        np.testing.assert_allclose(scope.trace("E2")[1] - (N_CH - 3), data[:, 2] / 25.0, 1e-5)
        # what Qt draws: the good channels in one curve, the bad one in the other
        good, bad = scope.curves["good"], scope.curves["bad"]
        assert len(good.yData) == (N_CH - 1) * 1000 and len(bad.yData) == 1000
        np.testing.assert_allclose(bad.yData, scope.trace(FLAT)[1])
        np.testing.assert_allclose(good.yData[2000:3000], scope.trace("E2")[1])

        # spectrum: Welch over the last 2 s, peaking at the injected rhythm on channel 1
        freqs, power = scope.psd_curves[1].xData, scope.psd_curves[1].yData
        assert freqs[np.argmax(power)] == pytest.approx(SINE_HZ, abs=0.5)
        ref_freqs, ref = signal.welch(data[-500:].T.astype(float), SFREQ, nperseg=500)
        shown = (ref_freqs > 0) & (ref_freqs <= 100)
        np.testing.assert_allclose(freqs, ref_freqs[shown])
        np.testing.assert_allclose(power, ref[1, shown], rtol=1e-4)
        assert power.max() > 20 * scope.psd_curves[0].yData.max()

        # quality: the constant channel, and only it, is marked
        assert scope.report.bad_channels == {f"E{FLAT}": ["flat"]}
        for k, label in enumerate(scope.labels):
            text = label.textItem.toPlainText()
            assert ("⚠ flat" in text) == (k == FLAT), text
            assert label.color.name() == ("#ff5050" if k == FLAT else "#dddddd")

        # the band-pass toggle re-filters the window causally from a zero state at the level
        # of its first sample
        scope.set_filter("band-pass", True)
        x = data.T.astype(float)
        expected = signal.sosfilt(design_bandpass(SFREQ, (1.0, 40.0)), x - x[:, :1])
        np.testing.assert_allclose(scope.shown, expected, atol=1e-3)
        # the screenshot is the whole window, the flat channel's label in the warning red
        scope.grab(tmp_path / "scope.png")
        image = matplotlib.image.imread(tmp_path / "scope.png")[..., :3]
        assert image.shape[:2] == (scope.widget.height(), scope.widget.width())
        warning = np.all(np.abs(image - np.array([0xFF, 0x50, 0x50]) / 255) < 0.02, axis=-1)
        assert warning.sum() >= 5
    finally:
        scope.close()


def test_peak_decimation_keeps_every_extreme():
    x = np.arange(10_000) / 1000.0
    y = np.random.default_rng(0).standard_normal((3, 10_000))
    y[1, 1234] = 50.0
    dx, dy = decimate(x, y, 2000)
    assert dy.shape == (3, 2000) and dx.shape == (2000,)
    assert dy[1].max() == 50.0 and dx[-1] == x[-1]
    bins = y.reshape(3, 1000, 10)
    np.testing.assert_array_equal(dy[:, 0::2], bins.min(axis=2))
    np.testing.assert_array_equal(dy[:, 1::2], bins.max(axis=2))
    short_x, short_y = decimate(x[:500], y[:, :500], 2000)  # short enough: drawn as it is
    np.testing.assert_array_equal(short_y, y[:, :500])
    np.testing.assert_array_equal(short_x, x[:500])


def test_scope_keeps_filter_state_across_chunks(stream):
    outlet, receiver = stream
    scope = Scope(receiver, window=8.0, filtered=True, notch=50.0)
    try:
        data = _signals(1500, seed=1)
        _fill(scope, outlet, data)
        notch = signal.tf2sos(*signal.iirnotch(50.0, 30.0, fs=SFREQ))
        sos = np.vstack([design_bandpass(SFREQ, (1.0, 40.0)), notch])
        x = data.T.astype(float)
        expected = signal.sosfilt(sos, x - x[:, :1])
        np.testing.assert_allclose(scope.shown[:, -1500:], expected, atol=1e-3)
        with pytest.raises(ValueError, match="Unknown filter 'lowpass'"):
            scope.set_filter("lowpass", True)
    finally:
        scope.close()


@contextmanager
def feeding(outlet, chunk=lambda k: _signals(25, seed=k)):
    """Push ``chunk(k)`` every 0.1 s from a thread while the block runs."""
    stop = threading.Event()

    def feed():
        k = 0
        while not stop.is_set():
            outlet.push_chunk(chunk(k))
            k += 1
            stop.wait(0.1)

    pusher = threading.Thread(target=feed, daemon=True)
    pusher.start()
    try:
        yield
    finally:
        stop.set()
        pusher.join()


def test_headless_quality_check(stream):
    outlet, receiver = stream
    with feeding(outlet):
        report = stream_quality(receiver, seconds=1.0)
    assert list(report.bad_channels) == [f"E{FLAT}"]
    with pytest.raises(ValueError, match="at least 1 s"):
        stream_quality(receiver, seconds=0.5)


def test_view_check_command_names_the_bad_channel(stream, capsys):
    outlet, receiver = stream
    name = receiver.info.name()
    with feeding(outlet):
        code = main(["view", name, "--check", "--seconds", "1", "--lsl-mode", "loopback"])
    out = capsys.readouterr().out
    assert code == 1
    assert f"E{FLAT}: flat" in out and "1 bad channel(s)" in out


@pytest.fixture
def recording(tmp_path):
    """A FIF file (volts) of 8 s of the test signals."""
    info = mne.create_info([f"E{k}" for k in range(N_CH)], SFREQ, "eeg")
    raw = mne.io.RawArray(_signals(2000).T.astype(float) * 1e-6, info, verbose=False)
    raw.save(tmp_path / "rec_raw.fif", verbose=False)
    return tmp_path / "rec_raw.fif"


def test_view_check_command_replays_a_recording(recording, capsys):
    code = main(["view", str(recording), "--check", "--seconds", "1", "--lsl-mode", "loopback"])
    out = capsys.readouterr().out
    assert code == 1
    assert "'replay-rec_raw'" in out  # the recording's own stream, not another one
    assert f"E{FLAT}: flat" in out and "1 bad channel(s)" in out


def test_view_check_judges_only_the_data_channels(tmp_path, capsys):
    """A FIF with EOG, trigger and temperature channels next to its EEG: only the EEG is
    judged (MNE's data channels), the others are named as left out. Judged as EEG in µV,
    the trigger and the temperature failed every check."""
    n = 2000
    eeg = _signals(n)[:, :4].T.astype(float) * 1e-6  # four good EEG channels
    t = np.arange(n) / SFREQ
    eog = 300e-6 * np.sin(2 * np.pi * 0.5 * t)
    stim = np.where(np.arange(n) % 500 < 10, 5.0, 0.0)
    temp = np.full(n, 36.5)
    names = ["E0", "E1", "E2", "E3", "EOG", "STI", "Temp"]
    types = ["eeg"] * 4 + ["eog", "stim", "misc"]
    raw = mne.io.RawArray(
        np.vstack([eeg, eog, stim, temp]), mne.create_info(names, SFREQ, types), verbose=False
    )
    fname = tmp_path / "mixed_raw.fif"
    raw.save(fname, verbose=False)
    code = main(["view", str(fname), "--check", "--seconds", "1", "--lsl-mode", "loopback"])
    captured = capsys.readouterr()
    assert code == 0, captured.out
    assert "Not checked (not data channels): EOG (eog), STI (stim), Temp (misc)." in captured.err
    for name in ("EOG", "STI", "Temp"):
        assert name not in captured.out


def test_view_shows_a_recording(recording, tmp_path, capsys):
    shot = tmp_path / "scope.png"
    argv = ["view", str(recording), "--duration", "3", "--screenshot", str(shot)]
    assert main([*argv, "--lsl-mode", "loopback"]) == 0
    assert "Viewing LSL stream name='replay-rec_raw'" in capsys.readouterr().out
    # the flat channel's label turns the warning red only from data the scope received
    image = matplotlib.image.imread(shot)[..., :3]
    warning = np.all(np.abs(image - np.array([0xFF, 0x50, 0x50]) / 255) < 0.02, axis=-1)
    assert warning.sum() >= 5


def test_a_screenshot_that_cannot_be_saved_is_an_error(recording, tmp_path, capsys):
    """Refused before connecting when it cannot work (a usage error); an error, not a silent
    exit 0, when the image cannot be written at the end (here a suffix Qt has no writer for)."""
    absent = f"absent-{uuid4().hex}"
    argv = ["view", absent, "--timeout", "1", "--lsl-mode", "loopback"]
    missing, folder = tmp_path / "no" / "s.png", tmp_path / "taken.png"
    folder.mkdir()
    for duration, shot, message in [
        ([], tmp_path / "s.png", "--screenshot needs --duration (the window is saved as it"),
        (["--duration", "1"], missing, f"the folder {missing.parent} of {missing} does not"),
        (["--duration", "1"], folder, f"{folder} is a folder; name a file in it."),
    ]:
        with pytest.raises(SystemExit) as exit_:
            main([*argv, *duration, "--screenshot", str(shot)])
        assert exit_.value.code == 2 and message in capsys.readouterr().err
    unknown = tmp_path / "s.unknown-format"
    argv = ["view", str(recording), "--duration", "1", "--screenshot", str(unknown)]
    assert main([*argv, "--lsl-mode", "loopback"]) == 1
    assert f"Could not write the screenshot {unknown}" in capsys.readouterr().err


def test_view_refuses_a_recording_with_a_source_id(recording, capsys):
    assert main(["view", str(recording), "--source-id", "x", "--lsl-mode", "loopback"]) == 1
    assert "--source-id names a stream" in capsys.readouterr().err


def test_view_names_a_missing_file(tmp_path, capsys):
    missing = tmp_path / "absent_raw.fif"
    assert main(["view", str(missing), "--timeout", "1", "--lsl-mode", "loopback"]) == 1
    assert f"and there is no file '{missing}'." in capsys.readouterr().err
    # a folder is neither a stream name nor a recording file
    assert (
        main(["view", str(tmp_path), "--check", "--timeout", "1", "--lsl-mode", "loopback"]) == 1
    )
    assert f"and '{tmp_path}' is a folder, not a recording file." in capsys.readouterr().err


def test_view_waits_up_to_timeout_for_a_stream(capsys):
    """The stream appears 2.5 s after ``view`` starts looking, later than the 2 s the search
    used to be cut to whatever --timeout said."""
    name = f"late-{uuid4().hex}"
    info = make_stream_info(name, [f"E{k}" for k in range(N_CH)], SFREQ, source_id=uuid4().hex)
    stop = threading.Event()

    def appear_late():
        if not stop.wait(2.5):
            with feeding(pylsl.StreamOutlet(info)):
                stop.wait()

    thread = threading.Thread(target=appear_late)
    thread.start()
    try:
        argv = ["view", name, "--check", "--seconds", "1", "--timeout", "30"]
        code = main([*argv, "--lsl-mode", "loopback"])
    finally:
        stop.set()
        thread.join()
    captured = capsys.readouterr()
    assert code == 1, captured.err  # the flat channel
    assert f"E{FLAT}: flat" in captured.out


def test_view_names_a_marker_stream_given_for_a_signal(capsys):
    """A marker stream by that name is visible: say what it is, not that nothing is there."""
    from acquisition.markers import MarkerOutlet

    with MarkerOutlet(f"markers-{uuid4().hex}") as outlet:
        argv = ["view", outlet.name, "--check", "--timeout", "10", "--lsl-mode", "loopback"]
        assert main(argv) == 1
    err = capsys.readouterr().err
    assert f"LSL stream '{outlet.name}' carries markers (irregular rate, string)" in err
    assert "not found" not in err and "No LSL stream" not in err


def test_pick_stream_lists_what_it_sees(stream):
    _, receiver = stream
    name = receiver.info.name()
    assert pick_stream(name, timeout=1.0).name == name
    with pytest.raises(TimeoutError, match=f"Visible streams: .*{name}"):
        pick_stream(f"absent-{uuid4().hex}", timeout=1.0)
    twin = make_stream_info(name, [f"E{k}" for k in range(N_CH)], SFREQ, source_id=uuid4().hex)
    outlet = pylsl.StreamOutlet(twin)
    # both are seen (no "Viewing ..." of one, then a refusal of the name)
    with pytest.raises(ValueError, match=f"name='{name}' is ambiguous, 2 streams match"):
        pick_stream(name, timeout=1.0)
    del outlet


def test_view_tells_apart_streams_sharing_a_source_id(capsys):
    """An MNE-LSL player's data and annotation streams share their source_id ('MNE-LSL'; a
    unique one here) and host: the one hid the other from ``view NAME`` and from the visible
    streams listed, and ``--source-id`` alone picked the annotation stream. The error says
    to choose by name as view takes it (its argument, not ``--stream``); a second player's
    data stream of the same name and source_id cannot be chosen so, and the error says what
    to do instead."""
    shared, name = f"MNE-LSL-{uuid4().hex}", f"player-{uuid4().hex}"
    data = make_stream_info(name, [f"E{k}" for k in range(N_CH)], SFREQ, source_id=shared)
    annotations = pylsl.StreamInfo(f"{name}-annotations", "annotations", 1, 0, "string", shared)
    outlets = [pylsl.StreamOutlet(info) for info in (data, annotations)]
    assert pick_stream(name, timeout=5.0).name == name
    with pytest.raises(TimeoutError, match="Visible streams") as caught:
        pick_stream(f"absent-{uuid4().hex}", timeout=1.0)
    assert f"'{name}' type" in str(caught.value)
    assert f"'{name}-annotations' type" in str(caught.value)
    argv = ["view", "--source-id", shared, "--check", "--timeout", "5"]
    assert main([*argv, "--lsl-mode", "loopback"]) == 1
    err = capsys.readouterr().err
    assert "is ambiguous, 2 streams match" in err and "carries markers" not in err
    assert f"'{name}' type" in err and f"'{name}-annotations' type" in err
    assert "choose one by its name (" in err and "or view NAME)" in err
    outlets.append(pylsl.StreamOutlet(data))  # a second player, same name and source_id
    assert main(["view", name, "--check", "--timeout", "5", "--lsl-mode", "loopback"]) == 1
    err = capsys.readouterr().err
    assert f"name='{name}' is ambiguous, 2 streams match" in err
    assert "do not tell them apart (two MNE-LSL players of one name): stop the streams" in err
    del outlets


def test_quality_leaves_sample_counters_out():
    from tests.acquisition.lsl_helpers import counter_chunk, counter_stream_info

    info = counter_stream_info(n_eeg=3)
    outlet = pylsl.StreamOutlet(info)
    with StreamReceiver(info.name(), source_id=info.source_id(), timeout=5.0) as receiver:
        wait_until(outlet.have_consumers, what="the receiver")
        with feeding(outlet, lambda k: counter_chunk(25 * k, 25, 3).astype(np.float32)):
            report = stream_quality(receiver, seconds=1.0)
    assert report.ch_names == ["EEG00", "EEG01", "EEG02"]


@pytest.mark.slow
@pytest.mark.parametrize("signum", [signals.SIGINT, signals.SIGTERM])
def test_view_closes_on_a_signal_with_130(stream, signum):
    outlet, receiver = stream
    argv = [sys.executable, "-m", "paradigms", "view", receiver.info.name()]
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen"}
    with feeding(outlet):
        proc = subprocess.Popen(
            [*argv, "--lsl-mode", "loopback"],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
        )
        try:
            assert proc.stdout.readline().startswith("Viewing LSL stream")
            proc.send_signal(signum)
            _, err = proc.communicate(timeout=30)
        finally:
            if proc.poll() is None:
                proc.kill()
    assert proc.returncode == 130, err
    assert "interrupted" in err and "Traceback" not in err
