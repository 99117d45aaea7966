import json
import os
import select
import signal
import subprocess
import sys
import threading
from uuid import uuid4

import mne
import numpy as np
import pylsl
import pytest

from acquisition.markers import MarkerOutlet
from acquisition.streams import make_stream_info
from paradigms.cli import build_parser, main
from tests.acquisition.lsl_helpers import (
    counter_chunk,
    counter_stream_info,
    make_crashed_recording,
    reaped,
    wait_until,
)

pytestmark = pytest.mark.lsl

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def test_stream_group_registers_its_subcommands():
    parser = build_parser()
    args = parser.parse_args(["stream", "recover", "somewhere"])
    assert args.func.__name__ == "run_recover"
    args = parser.parse_args(["stream", "list"])
    assert args.lsl_mode == "loopback" and args.timeout == 1.0
    sub = next(a for a in parser._actions if a.dest == "command").choices["stream"]
    commands = next(a for a in sub._actions if a.dest == "stream_command").choices
    assert set(commands) == {"list", "record", "recover", "replay", "simulate"}


def test_list_shows_a_loopback_stream(capsys):
    info = counter_stream_info(2, 100.0)
    outlet = pylsl.StreamOutlet(info)
    assert main(["stream", "list", "--lsl-mode", "loopback", "--timeout", "1.0"]) == 0
    out = capsys.readouterr().out
    line = next(line for line in out.splitlines() if info.name() in line)
    assert "3 ch 100 Hz float32" in line and info.source_id() in line
    del outlet


def test_record_for_a_duration_writes_fif_and_sidecar(tmp_path, capsys):
    """The stream sends 1.5 s and falls silent: the recording ends once --duration has
    passed and the stream stayed silent for --silence-timeout, with what came."""
    info = counter_stream_info(2, 200.0)
    outlet = pylsl.StreamOutlet(info)
    marker_outlet = MarkerOutlet(f"markers-{uuid4().hex}")
    done = threading.Event()

    def push():
        if outlet.wait_for_consumers(10.0) and marker_outlet.wait_for_consumers(10.0):
            t_last = pylsl.local_clock()
            outlet.push_chunk(counter_chunk(0, 300, 2), t_last)
            marker_outlet.push("trial/start", t_last - 1.0)  # at sample 99
            done.set()

    pusher = threading.Thread(target=push)
    pusher.start()
    code = main(
        [
            "stream", "record",
            "--stream", info.name(), "--source-id", info.source_id(),
            "--markers", marker_outlet.name,
            "--output", str(tmp_path), "--subject", "03", "--task", "universum",
            "--duration", "2.5", "--lsl-mode", "loopback", "--timeout", "5",
            "--silence-timeout", "1",
        ]
    )  # fmt: skip
    pusher.join(10)
    assert done.is_set() and code == 0
    out = capsys.readouterr().out
    fname = tmp_path / "sub-03_ses-01_task-universum_run-01_raw.fif"
    assert f"Wrote {fname}: 300 samples, 1 markers, 0 samples lost." in out
    raw = mne.io.read_raw_fif(fname)
    assert raw.n_times == 300 and list(raw.annotations.description) == ["trial/start"]
    assert raw.annotations.onset[0] == pytest.approx(99 / 200, abs=1e-3)
    sidecar = json.loads(fname.with_suffix(".json").read_text())
    assert sidecar["task"] == "universum" and sidecar["run"] == "01"  # as the file name
    marker_outlet.close()


@pytest.mark.parametrize("duration", ["1.02", "0.62"])
def test_record_for_a_duration_holds_its_seconds_of_stream(tmp_path, capsys, duration):
    """A stream sending on: --duration D holds the first D s of it by its timestamps (D x 250
    samples from the first one), nothing received after. The stream comes in chunks of 25
    samples: whole chunks cannot make these counts."""
    sfreq = 250.0
    info = counter_stream_info(1, sfreq)
    outlet = pylsl.StreamOutlet(info)
    stop = threading.Event()

    def push():  # in real time, regularly stamped
        t0, k = pylsl.local_clock(), 0
        while not stop.wait(0.1):
            outlet.push_chunk(counter_chunk(k, 25, 1), t0 + (k + 24) / sfreq)
            k += 25

    pusher = threading.Thread(target=push)
    pusher.start()
    try:
        argv = ["stream", "record", "--source-id", info.source_id(), "--output", str(tmp_path)]
        assert main([*argv, "--duration", duration, "--lsl-mode", "loopback"]) == 0
    finally:
        stop.set()
        pusher.join()
    n = round(float(duration) * sfreq)
    fname = tmp_path / "sub-01_ses-01_task-calibration_run-01_raw.fif"
    assert f"Wrote {fname}: {n} samples" in capsys.readouterr().out
    counter = mne.io.read_raw_fif(fname).get_data(picks="misc")[0]
    np.testing.assert_array_equal(counter, np.arange(counter[0], counter[0] + n))


def test_a_full_disk_ends_a_recording_at_once(tmpfs):
    """``stream record --duration 120`` into a 64 KB file system fed 600 samples a second:
    the command stops as the writes fail (the old code recorded on for the whole duration),
    naming the command that recovers what reached the disk."""
    folder = tmpfs(64)
    info = counter_stream_info(8, 600.0)
    outlet = pylsl.StreamOutlet(info)
    stop = threading.Event()

    def push():
        k = 0
        while not stop.wait(0.05):
            outlet.push_chunk(counter_chunk(k, 30, 8))
            k += 30

    pusher = threading.Thread(target=push)
    pusher.start()
    try:
        proc = subprocess.run(
            [sys.executable, "-m", "paradigms", "stream", "record", "--stream", info.name(),
             "--source-id", info.source_id(), "--output", str(folder), "--duration", "120",
             "--lsl-mode", "loopback", "--timeout", "10"],
            capture_output=True, text=True, timeout=60, cwd=ROOT,
        )  # fmt: skip
    finally:
        stop.set()
        pusher.join()
    assert proc.returncode == 1, proc.stderr
    assert "No space left on device" in proc.stderr
    assert "'bci-universum stream recover " in proc.stderr and "Traceback" not in proc.stderr


def test_sigterm_stops_a_recording_cleanly(tmp_path):
    info = counter_stream_info(1, 100.0)
    outlet = pylsl.StreamOutlet(info)
    cmd = [
        sys.executable, "-m", "paradigms", "stream", "record",
        "--source-id", info.source_id(), "--output", str(tmp_path),
        "--lsl-mode", "loopback", "--timeout", "60",
    ]  # fmt: skip
    proc = subprocess.Popen(
        cmd, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    with reaped(proc):
        # a new Python process imports the packages first: a minute or more on a busy machine
        ready, _, _ = select.select([proc.stdout], [], [], 180.0)
        assert ready and "no marker stream" in proc.stdout.readline()
        assert outlet.wait_for_consumers(10.0)
        outlet.push_chunk(counter_chunk(0, 120, 1))
        # SIGTERM once the writer has flushed every sample to the partial folder
        stamps = tmp_path / "sub-01_ses-01_task-calibration_run-01_raw.fif.partial"
        stamps /= "timestamps.bin"
        wait_until(
            lambda: stamps.exists() and stamps.stat().st_size == 120 * 8,
            what="120 timestamps on disk",
        )
        proc.send_signal(signal.SIGTERM)
        out, err = proc.communicate(timeout=30)
    assert proc.returncode == 0, err
    assert "120 samples" in out
    raw = mne.io.read_raw_fif(tmp_path / "sub-01_ses-01_task-calibration_run-01_raw.fif")
    np.testing.assert_array_equal(raw.get_data()[-1], np.arange(120))
    del outlet


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM])
def test_a_signal_stops_a_running_simulate_or_replay_with_0(tmp_path, capsys, signum):
    """Once they say they run, Ctrl-C and SIGTERM are how ``stream simulate`` and ``stream
    replay`` end (as ``stream record``, :func:`test_sigterm_stops_a_recording_cleanly`): exit
    code 0 and what was pushed, as their help and command_line.rst say."""
    for command in ("stream record", "stream replay", "stream simulate", "spikes stream"):
        with pytest.raises(SystemExit):
            main([*command.split(), "--help"])
        helped = " ".join(capsys.readouterr().out.split())
        assert "SIGTERM stop it cleanly (exit code 0) once it has said that it runs" in helped
        assert "they interrupt it (exit code 130)" in helped
    fname = tmp_path / "short_raw.fif"
    info = mne.create_info(["C3", "C4", "Cz"], 100.0, "eeg")
    mne.io.RawArray(np.zeros((3, 200)), info).save(fname)
    name = f"stopped-{uuid4().hex}"
    commands = {
        "Streaming": ["simulate", "--channels", 3, "--name", name],
        "Replaying": ["replay", fname, "--loop", "--wait-for", "none", "--name", f"{name}-r"],
    }
    # Ctrl-C comes from a terminal, where SIGINT has its default action (a child started
    # from a shell's background job would inherit an ignored SIGINT)
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        procs = {said: _cli(*argv) for said, argv in commands.items()}
    finally:
        signal.signal(signal.SIGINT, previous)
    with reaped(procs["Streaming"]), reaped(procs["Replaying"]):
        for said, proc in procs.items():
            # a new Python process imports the packages first: a minute or more on a busy machine
            ready, _, _ = select.select([proc.stdout], [], [], 180.0)
            assert ready and proc.stdout.readline().startswith(said)
            proc.send_signal(signum)
            out, err = proc.communicate(timeout=60)
            assert proc.returncode == 0, err
            assert out.startswith("Pushed ") and "Traceback" not in err


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM])
def test_a_signal_while_waiting_for_the_streams_ends_record_with_130(tmp_path, signum):
    """Ctrl-C while `stream record` waits for its streams gave "Recorder ... is not running"
    (exit 1), SIGTERM was ignored until --timeout ran out. Both end the wait at once with 130
    and nothing written. The signal is sent once the command says it waits."""
    absent = f"absent-{uuid4().hex}"
    cmd = [
        sys.executable, "-m", "paradigms", "stream", "record", "--stream", absent,
        "--markers", f"{absent}-markers", "--output", str(tmp_path / "rec"),
        "--lsl-mode", "loopback", "--timeout", "120",
    ]  # fmt: skip
    proc = subprocess.Popen(
        cmd, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    lines = []

    def read_stderr():
        for line in proc.stderr:
            lines.append(line)

    reader = threading.Thread(target=read_stderr)
    with reaped(proc):
        reader.start()
        # a new Python process imports the packages first: a minute or more on a busy machine
        wait_until(lambda: any("Waiting for" in line for line in lines), 180.0, "the wait")
        proc.send_signal(signum)
        proc.wait(10)  # not --timeout
        reader.join(10)
    err = "".join(lines)
    assert proc.returncode == 130, err
    assert lines[-1] == "bci-universum stream record: interrupted.\n"
    assert "not running" not in err and "Traceback" not in err
    assert not (tmp_path / "rec").exists()


def test_recover_command_finalises_a_partial_recording(tmp_path, capsys):
    partial = make_crashed_recording(tmp_path, n_eeg=1)
    fname = partial.with_name(partial.name.removesuffix(".partial"))
    assert main(["stream", "recover", str(partial)]) == 0
    assert f"Recovered {fname}" in capsys.readouterr().out
    sidecar = json.loads(fname.with_suffix(".json").read_text())
    assert sidecar["recovered"] is True and sidecar["n_samples"] == 50
    with pytest.raises(SystemExit):  # the help says what the sidecar holds
        main(["stream", "recover", "--help"])
    assert 'marked "recovered": true' in " ".join(capsys.readouterr().out.split())


@pytest.mark.parametrize(
    ("argv", "fragment"),
    [
        (
            ["stream", "record", "--stream", "nobody-{uid}", "--output", "X", "--timeout", "0.3"],
            "No LSL stream name='nobody-{uid}' found within 0.3 s",
        ),
        (["stream", "recover", "X"], "Nothing recoverable"),
        (["stream", "record", "--stream", "s", "--subject", "a_b", "--output", "X"], "subject"),
    ],
)
def test_bad_input_exits_with_a_clear_error(tmp_path, capsys, argv, fragment):
    uid = uuid4().hex
    argv = [a.replace("X", str(tmp_path)).replace("{uid}", uid) for a in argv]
    if argv[1] == "record":
        argv += ["--lsl-mode", "loopback"]
    assert main(argv) == 1
    assert fragment.replace("{uid}", uid) in capsys.readouterr().err


def test_record_refuses_an_ambiguous_stream_naming_the_candidates(tmp_path, capsys):
    """Two streams answer to the name (and to --type): nothing is recorded, the error lists
    both and points to --source-id."""
    name, stype = f"twin-{uuid4().hex}", f"type-{uuid4().hex}"  # other tests' streams differ
    infos = [
        make_stream_info(name, [f"c{k}" for k in range(n)], 100.0, stype=stype, source_id=sid)
        for n, sid in ((1, f"a-{uuid4().hex}"), (2, f"b-{uuid4().hex}"))
    ]
    outlets = [pylsl.StreamOutlet(info) for info in infos]
    for selection in (["--stream", name], ["--type", stype]):
        argv = ["stream", "record", *selection, "--output", str(tmp_path), "--duration", "1"]
        assert main([*argv, "--lsl-mode", "loopback", "--timeout", "5"]) == 1
        err = capsys.readouterr().err
        assert "is ambiguous" in err and "--source-id" in err, err
        assert all(f"source_id='{info.source_id()}'" in err for info in infos)
    assert not any(tmp_path.iterdir())
    del outlets


@pytest.mark.parametrize("inside", [False, True])
def test_record_refuses_an_output_that_is_a_file(tmp_path, capsys, inside):
    """--output names an existing file (or a folder inside one): refused before any stream is
    looked for, the file untouched."""
    afile = tmp_path / "afile"
    afile.write_text("keep")
    output = afile / "sub" if inside else afile
    argv = ["stream", "record", "--stream", "s", "--output", str(output), "--duration", "1"]
    with pytest.raises(SystemExit) as exit_:
        main([*argv, "--lsl-mode", "loopback", "--timeout", "60"])
    assert exit_.value.code == 2
    what = f"lies inside the file {afile}" if inside else "is a file"
    assert f"--output/-o: {output} {what}, not a folder" in capsys.readouterr().err
    assert afile.read_text() == "keep"


@pytest.mark.parametrize("run", [[], ["--run", "01"], ["--run", "1"]])
def test_record_refuses_to_overwrite(tmp_path, capsys, run):
    """``--run 1`` is run-01, as the session commands write it: not a second file
    ``run-1`` beside it (MNE-BIDS reads both as run 1)."""
    info = counter_stream_info(1, 100.0)
    outlet = pylsl.StreamOutlet(info)
    (tmp_path / "sub-01_ses-01_task-calibration_run-01_raw.fif").write_bytes(b"keep")
    argv = ["stream", "record", "--source-id", info.source_id(), "--output", str(tmp_path)]
    assert main([*argv, *run, "--lsl-mode", "loopback", "--duration", "1"]) == 1
    assert "refusing to overwrite" in capsys.readouterr().err
    assert [p.name for p in tmp_path.iterdir()] == [
        "sub-01_ses-01_task-calibration_run-01_raw.fif"
    ]
    del outlet


def test_replay_names_a_folder_for_what_it_is(tmp_path, capsys):
    """A folder is not "not found": it is named as a folder, and the partial folder of a
    killed recording comes with the command that turns it into a file."""
    partial = make_crashed_recording(tmp_path, n_eeg=1)
    assert main(["stream", "replay", str(tmp_path)]) == 1
    assert f"error: {tmp_path} is a folder, not a recording file." in capsys.readouterr().err
    assert main(["stream", "replay", str(partial)]) == 1
    err = capsys.readouterr().err
    assert f"'bci-universum stream recover {partial}' turns it into one" in err, err


def _cli(*argv):
    cmd = [sys.executable, "-m", "paradigms", "stream", *map(str, argv), "--lsl-mode", "loopback"]
    return subprocess.Popen(
        cmd, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )


def _finish(proc, timeout=120):
    with reaped(proc):
        out, err = proc.communicate(timeout=timeout)
    assert proc.returncode == 0, err
    return out, err


def _replay_and_record(fname, folder, marker_map):
    """``stream record --stop-on-silence`` and ``stream replay --no-pacing`` as two processes."""
    name = f"rt-{uuid4().hex}"
    recorder = _cli(
        "record", "--stream", name, "--markers", f"{name}-markers", "--output", folder,
        "--timeout", 60, "--stop-on-silence", "--silence-timeout", 1.0,
    )  # fmt: skip
    replay = _cli(
        "replay", fname, "--no-pacing", "--counter", "--name", name, "--marker-map", marker_map,
        "--timeout", 60,
    )  # fmt: skip
    replayed, _ = _finish(replay)
    recorded, _ = _finish(recorder)
    return replayed, recorded


def _check_round_trip(fname, folder, marker_map):
    from bci_universum.datasets import read_recording
    from bci_universum.markers import resolve_marker_map
    from tests.acquisition.test_player import check_recorded, expected_samples

    raw = read_recording(fname, verbose="error")
    replayed, recorded = _replay_and_record(fname, folder, marker_map)
    n_markers = len(raw.annotations)
    assert f"Pushed {raw.n_times} samples and {n_markers} markers." in replayed
    assert f": {raw.n_times} samples, {n_markers} markers, 0 samples lost." in recorded
    back = mne.io.read_raw_fif(next(folder.glob("*_raw.fif")), preload=True, verbose="error")
    mapping = resolve_marker_map(marker_map)
    player = type("Replayed", (), {"marker_map": mapping})
    check_recorded(raw, player, back)  # every sample, every marker within one sample
    scale = np.array([1e6 if t == "eeg" else 1.0 for t in raw.get_channel_types()])
    on_disk = (back.get_data(picks=raw.ch_names).T * scale).astype(np.float32)
    np.testing.assert_array_equal(on_disk, expected_samples(raw))  # bit-exact in float32


def test_cli_round_trip_of_a_gdf_file(tmp_path):
    from tests.acquisition.gdf import write_gdf

    rng = np.random.default_rng(5)
    sfreq, n_times = 250.0, 7500
    events = [(s, (769, 770, 783)[k % 3]) for k, s in enumerate(range(0, n_times, 40))]
    fname = tmp_path / "imagery.gdf"
    write_gdf(fname, rng.standard_normal((8, n_times)) * 20, [f"E{k}" for k in range(8)], sfreq,
              events)  # fmt: skip
    _check_round_trip(fname, tmp_path / "rec", "769=cue/left,770=cue/right,783=universum/rest")


@pytest.mark.filterwarnings("ignore:Encountered data in 'double' format")
def test_cli_round_trip_of_an_eeglab_set(tmp_path):
    pytest.importorskip("eeglabio")
    rng = np.random.default_rng(6)
    raw = mne.io.RawArray(
        rng.standard_normal((6, 5000)) * 2e-5, mne.create_info(6, 200.0, "eeg"), verbose=False
    )
    onsets = np.arange(0, 25.0, 0.35)
    raw.set_annotations(mne.Annotations(onsets, 0.0, ["cue/left", "cue/right"] * 36))
    fname = tmp_path / "imagery.set"
    mne.export.export_raw(fname, raw, fmt="eeglab", verbose=False)
    _check_round_trip(fname, tmp_path / "rec", "cue/left=cue/left")


@pytest.mark.data
def test_cli_round_trip_of_a_labrecorder_xdf(data_dir, tmp_path):
    _check_round_trip(data_dir / "bci4als/assaf/Test1/EEG.xdf", tmp_path / "rec", "bci4als")
