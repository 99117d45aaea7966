"""``bci-universum calibrate``, ``record-universum`` and ``online`` through the CLI."""

import json
import re
import subprocess
import sys
import time
from pathlib import Path
from uuid import uuid4

import mne
import numpy as np
import pytest

from acquisition import SimulatedSource
from bci_universum import UNIVERSUM_STR
from bci_universum.model_io import ModelMetadata, save_model
from bci_universum.pipelines import make_pipeline
from bci_universum.simulation.eeg import select_channels
from paradigms.cli import main

from .session_helpers import fast_config


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["calibrate", "--set", "paradigm.universum_mode=sometimes"], "universum_mode must be"),
        (["calibrate", "--set", "nonsense"], "not of the form section.key=value"),
        (["calibrate", "--set", "paradigm.trials=3"], r"Unknown key\(s\) \[.trials.\]"),
        (["record-universum", "--speed", "-1"], "speed must be positive"),
        (["calibrate", "missing.toml"], "Session file missing.toml does not exist"),
        (["calibrate", "--set", "stream.silence_timeout=0"], "silence_timeout must be positive"),
        (["online", "missing.joblib"], "Model file missing.joblib does not exist"),
        # a folder exists: "does not exist" would send the user looking for a typo
        (["calibrate", "FOLDER"], r"Session file \S+ is a folder; name the file"),
        (["online", "FOLDER"], r"Model file \S+ is a folder; name the file"),
        (["evaluate", "FOLDER"], r"Evaluation file \S+ is a folder; name the file"),
        (["calibrate", "--simulate", "--stream", "amp"], "--simulate and --stream exclude"),
        (["online", "MODEL", "--simulate", "--source-id", "x"], "--simulate and --source-id ex"),
        (["record-universum", "--subject", "a_b"], r"\[session\] subject label 'a_b' must be"),
        # str.isalnum takes these, BIDS does not
        (["calibrate", "--session", "\u00e9t\u00e9"], r"\[session\] session label 'été' must be"),
        # the options the user typed, not the overrides they stand for
        (
            ["calibrate", "--speed", "0"],
            r"defaults with --output \S+ --speed 0\.0: \[paradigm\] spe",
        ),
        (
            ["calibrate", "--set", "paradigm.trials_per_class=0"],
            r"--set paradigm\.trials_per_class=0 .*: \[paradigm\] trials_per_class must be ≥ 1",
        ),
        (
            ["record-universum", "--universum-mode", "rest_block"],
            r"rest_block universum run records \[online\] rest_trials .* is 0; .*online\.rest_",
        ),
        (
            ["record-universum", "--set", "paradigm.universum_trials=0"],
            r"separate universum run records \[paradigm\] universum_trials .*universum_trials=",
        ),
        (["online", "MODEL", "--set", "online.update_rate=0"], r"\[online\] update_rate must be"),
    ],
)
def test_bad_settings_are_refused(argv, message, tmp_path, capsys):
    """Refused before connecting to any stream, with nothing written."""
    model = tmp_path / "m.joblib"
    model.write_bytes(b"the settings are refused before the model is read")
    argv = [{"MODEL": str(model), "FOLDER": str(tmp_path)}.get(a, a) for a in argv]
    assert main([*argv, "--output", str(tmp_path / "out")]) == 1
    err = capsys.readouterr().err
    assert "error:" in err and "Waiting for" not in err
    assert re.search(message, err), err
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["calibrate", "--output", "FILE"], r"--output/-o: \S+notes\.txt is a file, not a folder"),
        (["record-universum", "-o", "FILE/sub"], r"--output/-o: \S+ lies inside the file \S+"),
        (["online", "MODEL", "--output", "FILE"], r"--output/-o: \S+notes\.txt is a file"),
        (["calibrate", "--screenshots", "FILE"], r"--screenshots: \S+notes\.txt is a file"),
        (["demo", "--output", "FILE"], r"--output/-o: \S+notes\.txt is a file, not a folder"),
        (
            ["calibrate", "--sim-seed", "-1"],
            r"--sim-seed: expected a non-negative integer, got -1",
        ),
        (["calibrate", "--sim-channels", "0"], r"--sim-channels: expected an integer between 3"),
        (["demo", "--channels", "65"], r"--channels: expected an integer between 3 and 64, got"),
        (["calibrate", "--line-freq", "0"], r"--line-freq: expected a positive number, got 0"),
        (["train", "REC", "-o", "m.joblib", "--folds", "0"], r"--folds: expected an integer ≥ 2"),
        (["view", "--window", "0"], r"--window: expected a positive number, got 0"),
        (["view", "--check", "--seconds", "nan"], r"--seconds: expected a positive number"),
        (["view", "--line-freq", "inf"], r"--line-freq: expected a positive number, got inf"),
        (["view", "--band", "-1", "40"], r"--band: expected a positive number, got -1"),
        (["view", "--duration", "-2"], r"--duration: expected a positive number, got -2"),
        (["view", "--timeout", "0"], r"--timeout: expected a positive number, got 0"),
        (["view", ""], r"argument stream: expected the name of an LSL stream, got ''"),
        (["view", "--source-id", ""], r"--source-id: expected the source_id of an LSL stream"),
        (["view", "--screenshot", "s.png"], r"view: error: --screenshot needs --duration"),
        (["view", "--band", "40", "1", "--check"], r"view: error: --band: LOW must be below"),
        (["calibrate", "--source-id", " "], r"--source-id: expected the source_id of an LSL"),
        (["calibrate", "--simulate", "-o", ""], r"--output/-o: expected a path, got ''"),
        (["calibrate", "--stream", ""], r"--stream: expected the name of an LSL stream, got ''"),
        (["stream", "list", "--timeout", "-1"], r"--timeout: expected a positive number, got -1"),
        (["stream", "record", "-o", "out"], r"Name the data stream with --stream, --source-id"),
        (["stream", "record", "--stream", "s", "-o", ""], r"--output/-o: expected a path"),
        (["stream", "record", "--stream", "", "-o", "out"], r"--stream: expected the name"),
        (["stream", "record", "--stream", "s", "-o", "out", "--markers", ""], r"--markers: "),
        (["stream", "record", "--source-id", "", "-o", "out"], r"--source-id: expected the "),
        (
            ["stream", "record", "--stream", "s", "-o", "out", "--marker-source-id", ""],
            r"--marker-source-id: expected the source_id of an LSL stream, got ''",
        ),
        (["stream", "record", "--stream", "s", "-o", "out", "--run", "abc"], r"--run: invalid"),
        (["stream", "record", "--stream", "s", "-o", "out", "--run", "0"], r"--run: expected a "),
        (["stream", "record", "--stream", "s", "-o", "out", "--duration", "0"], r"--duration: "),
        (["stream", "record", "--stream", "s", "-o", "out", "--timeout", "0"], r"--timeout: "),
        (
            ["stream", "record", "--stream", "s", "-o", "out", "--silence-timeout", "nan"],
            r"--silence-timeout: expected a positive number, got nan",
        ),
        (
            ["stream", "record", "--stream", "s", "-o", "out", "--marker-map", "eegmmidb"],
            r"--marker-map needs a marker stream",
        ),
        (["stream", "simulate", "--seed", "-1"], r"--seed: expected a non-negative integer"),
        (["stream", "simulate", "--channels", "2"], r"--channels: expected an integer between 3"),
        (["stream", "simulate", "--sfreq", "1e9"], r"--sfreq: expected a number between 80 and"),
        (["stream", "simulate", "--sfreq", "79"], r"--sfreq: expected a number between 80 and"),
        (["stream", "simulate", "--name", ""], r"--name: expected the name of an LSL stream"),
        (["stream", "simulate", "--markers-from", " "], r"--markers-from: expected the name"),
        (["stream", "simulate", "--speed", "0"], r"--speed: expected a positive number, got 0"),
        (["stream", "simulate", "--duration", "0"], r"--duration: expected a positive number"),
        (["stream", "simulate", "--timeout", "inf"], r"--timeout: expected a positive number"),
        (["stream", "replay", "REC", "--timeout", "0"], r"--timeout: expected a positive number"),
        (["stream", "replay", "REC", "--chunk-size", "0"], r"--chunk-size: expected a positive"),
        (["stream", "replay", "REC", "--speed", "-1"], r"--speed: expected a positive number"),
        (["stream", "replay", "REC", "--name", ""], r"--name: expected the name of an LSL"),
        (["spikes", "stream", "--name", ""], r"--name: expected the name of an LSL stream"),
        (["spikes", "stream", "--duration", "0"], r"--duration: expected a positive number"),
        (["spikes", "stream", "--seed", "-1"], r"--seed: expected a non-negative integer"),
        (["spikes", "stream", "--speed", "0"], r"--speed: expected a positive number, got 0"),
        (["spikes", "stream", "--chunk-size", "0"], r"--chunk-size: expected a positive int"),
        (["spikes", "stream", "--source", "m1", "--m1-file", ""], r"--m1-file: expected the"),
        (["spikes", "stream", "--m1-file", "m1.mat"], r"--m1-file needs --source m1"),
        (["spikes", "stream", "--source", "m1", "--seed", "3"], r"--seed needs --source sim"),
        (["spikes", "decode", "--trials", "0"], r"--trials: expected a positive integer, got 0"),
        (["spikes", "decode", "--seed", "-1"], r"--seed: expected a non-negative integer"),
        (["spikes", "decode", "--timeout", "0"], r"--timeout: expected a positive number"),
        (["demo", "--speed", "0"], r"--speed: expected a positive number, got 0"),
        (["demo", "--trials", "3"], r"--trials: expected an integer ≥ 4, got 3"),
    ],
)
def test_bad_options_are_usage_errors(argv, message, tmp_path, monkeypatch, capsys):
    """argparse refuses them naming the option, before anything runs (nothing written)."""
    monkeypatch.chdir(tmp_path)
    notes = tmp_path / "notes.txt"
    notes.write_text("not a folder")
    model = tmp_path / "m.joblib"
    model.write_bytes(b"not read")
    paths = {"FILE": str(notes), "FILE/sub": str(notes / "sub"), "MODEL": str(model)}
    paths["REC"] = str(notes)
    with pytest.raises(SystemExit) as exit_:
        main([paths.get(a, a) for a in argv])
    assert exit_.value.code == 2
    err = capsys.readouterr().err
    assert re.search(message, err), err
    assert notes.read_text() == "not a folder"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["m.joblib", "notes.txt"]


@pytest.mark.parametrize(
    ("command", "flag"), [("calibrate", "--display"), ("demo", "--fullscreen")]
)
def test_a_window_without_a_screen_is_refused(command, flag, tmp_path, monkeypatch, capsys):
    """Without DISPLAY, WAYLAND_DISPLAY or an explicit QT_QPA_PLATFORM nobody would see the
    window (the test suite's QT_QPA_PLATFORM=offscreen is removed for this test)."""
    for name in ("DISPLAY", "WAYLAND_DISPLAY", "QT_QPA_PLATFORM"):
        monkeypatch.delenv(name, raising=False)
    assert main([command, flag, "--output", str(tmp_path / "out")]) == 1
    err = capsys.readouterr().err
    assert f"{flag}: no screen" in err and "QT_QPA_PLATFORM=offscreen" in err, err
    assert "Waiting for" not in err and not (tmp_path / "out").exists()


@pytest.mark.slow(seconds=20)
@pytest.mark.lsl
def test_calibrate_and_record_universum_commands(tmp_path, capsys):
    config = fast_config(tmp_path)
    common = ["--simulate", "--sim-channels", "4", "--speed", "10"]
    common += ["--set", f"stream.markers={config.stream.markers!r}", "--output", str(tmp_path)]
    common += ["--set", "paradigm.trials_per_class=1", "--set", "paradigm.universum_trials=2"]
    shots = tmp_path / "shots"
    assert main(["calibrate", *common, "--screenshots", str(shots)]) == 0
    # the simulated subject is found by its own source_id, whatever [stream] source_id says
    amp = ["--set", "stream.source_id='amplifier-not-here'"]
    assert main(["record-universum", *common, *amp, "--universum-mode", "interleaved"]) == 0
    captured = capsys.readouterr()
    out = captured.out.splitlines()
    assert out[0].startswith("calibration run 01: 2 trials, completed")
    assert out[1].startswith("universum run 01: 4 trials, completed")
    # the quality check ran before the calibration; progress went to stderr
    assert "Signal quality over 1250 samples of 4 channels" in captured.err
    assert re.search(r"calibration run-01: 100%.*2/2", captured.err)
    assert "Waiting for LSL stream" in captured.err
    screens = {"instructions", "start", "fixation", "cue-left", "cue-right", "end"}
    assert {p.stem for p in shots.glob("*.png")} == screens
    assert sorted(p.name for p in (tmp_path / "sub-01_ses-01").glob("*_raw.fif")) == [
        "sub-01_ses-01_task-calibration_run-01_raw.fif",
        "sub-01_ses-01_task-universum_run-01_raw.fif",
    ]


@pytest.mark.slow(seconds=25)
@pytest.mark.lsl
def test_a_session_keeps_one_channel_set_and_its_run_numbers(tmp_path, capsys):
    """A stream of other channels than the session's runs, in its folder or in its BIDS copy,
    is refused once connected, before anything is recorded, naming both and the way out. A run
    whose files were deleted from the session folder keeps its number (its BIDS copy holds
    it): the next run is numbered after it and copied into the BIDS dataset."""
    config = fast_config(tmp_path)
    argv = ["calibrate", "--simulate", "--speed", "10", "--quality-seconds", "0"]
    argv += ["--output", str(tmp_path), "--set", "paradigm.trials_per_class=1"]
    argv += ["--set", f"stream.markers={config.stream.markers!r}"]
    folder = tmp_path / "sub-01_ses-01"
    assert main([*argv, "--sim-channels", "4"]) == 0
    capsys.readouterr()
    for holder in ("_raw.fif", "_channels.tsv"):
        if holder == "_channels.tsv":
            for path in folder.glob("*_run-01_*"):
                path.unlink()
        before = sorted(tmp_path.rglob("*"))
        assert main([*argv, "--sim-channels", "5"]) == 1
        err = capsys.readouterr().err
        assert (
            "calibrate: error: The stream's 5 channels are not those of the runs subject 01 "
            f"session 01 already holds in {tmp_path} (sub-01_ses-01_task-calibration_run-01"
            f"{holder}: 4 channels; the stream has Pz in addition). "
        ) in err, err
        assert "record into another session (--session or [session] session) or subject" in err
        assert "calibration run" not in err and "Traceback" not in err
        assert sorted(tmp_path.rglob("*")) == before
    assert main([*argv, "--sim-channels", "4"]) == 0
    assert [p.name for p in folder.glob("*_results.json")] == [
        "sub-01_ses-01_task-calibration_run-02_results.json"
    ]
    eeg = tmp_path / "sub-01" / "ses-01" / "eeg"
    assert (eeg / "sub-01_ses-01_task-calibration_run-02_eeg.vhdr").is_file()


@pytest.fixture
def twin_streams():
    """Two EEG streams of one name, paced at 10x: 4 channels, then 5 (real LSL outlets)."""
    tag = uuid4().hex[:8]
    sources = []
    try:
        for n in (4, 5):
            source = SimulatedSource(
                n, name=f"twin-eeg-{tag}", source_id=f"twin-{tag}-{n}", speed=10.0
            )
            sources.append(source.start())
        yield sources
    finally:
        for source in sources:
            source.stop()


def _calibrate_argv(tmp_path):
    """``calibrate`` of two trials at 10x into ``tmp_path / "out"``, without a quality check."""
    config = fast_config(tmp_path)
    argv = ["calibrate", "--speed", "10", "--quality-seconds", "0"]
    argv += ["--output", str(tmp_path / "out"), "--set", "paradigm.trials_per_class=1"]
    return [*argv, "--set", f"stream.markers={config.stream.markers!r}"]


@pytest.mark.slow(seconds=15)
@pytest.mark.lsl
def test_source_id_picks_one_of_two_streams_sharing_a_name(twin_streams, tmp_path, capsys):
    """By name alone the session is refused, nothing written, the error listing both streams
    and pointing to ``--source-id``; that way out exists: with ``--stream`` the stream matching
    both is recorded, and ``--source-id`` alone records it whatever its name (the default
    ``[stream] name`` is neither's). The channels tell the twins apart: 5, not 4."""
    chosen = twin_streams[1]
    argv = _calibrate_argv(tmp_path)
    assert main([*argv, "--stream", chosen.name]) == 1
    err = capsys.readouterr().err
    assert "bci-universum calibrate: error:" in err and "is ambiguous" in err, err
    assert f"source_id='{twin_streams[0].source_id}'" in err and "(--source-id, or" in err
    assert not (tmp_path / "out").exists()
    listed = re.search(r"\b5 ch [^;]*?source_id='([^']+)'", err)
    assert listed and listed[1] == chosen.source_id, err

    folder = tmp_path / "out" / "sub-01_ses-01"
    for run, name in enumerate((["--stream", chosen.name], []), start=1):
        assert main([*argv, "--source-id", listed[1], *name]) == 0
        fname = folder / f"sub-01_ses-01_task-calibration_run-{run:02d}_raw.fif"
        raw = mne.io.read_raw_fif(fname, verbose="error")
        assert raw.copy().pick("eeg").ch_names == chosen.model.ch_names


def _noise_model(path, n_channels):
    """A ts_usvm model of the simulated subject's first ``n_channels`` channels, fitted on
    noise: decisions at chance, at the cost of a real model of that many channels."""
    window = (0.5, 1.5)
    pipeline = make_pipeline("ts_usvm", sfreq=250.0, band=(8.0, 30.0), window=window)
    y = np.array(["left", "right", UNIVERSUM_STR] * 8, dtype=object)
    rng = np.random.default_rng(0)
    pipeline.fit(rng.standard_normal((y.size, n_channels, 250)), y)
    meta = ModelMetadata(
        select_channels(n_channels), 250.0, (8.0, 30.0), window, ["left", "right"]
    )
    return save_model(path, pipeline, meta)


def _strict_json(text):
    def refuse(constant):
        raise ValueError(f"{constant} is not JSON")

    return json.loads(text, parse_constant=refuse)


@pytest.mark.lsl
def test_an_online_run_whose_decoder_falls_behind_goes_on_and_warns(tmp_path):
    """64 channels (a few ms per decision on one BLAS thread) decided at 125 Hz of data and
    10x: a decision window completes every 0.8 ms of real time, faster than it is decoded.
    The run must go on deciding on the newest window (it froze: the decoding loop never
    returned to the timeline), warn the operator and write every decision it made; a real
    process, so that a freeze ends at the timeout."""
    model = _noise_model(tmp_path / "m64.joblib", 64)
    config = fast_config(tmp_path)
    argv = [str(model), "--simulate", "--sim-channels", "64", "--speed", "10"]
    argv += ["--output", str(tmp_path), "--set", f"stream.markers={config.stream.markers!r}"]
    argv += ["--set", "online.trials_per_class=1", "--set", "online.update_rate=125"]
    argv += ["--set", "timeline.pause=[1.0, 1.5]"]
    proc = subprocess.run(
        [sys.executable, "-m", "paradigms", "online", *argv],
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("online run 01: 2 trials, completed"), proc.stdout
    warning = re.search(r"The online loop falls behind the stream: [^\n]*", proc.stderr)
    assert warning, proc.stderr
    # on a line of its own, not after the progress bar's text
    assert re.search(r"(^|[\r\n])The online loop falls behind", proc.stderr), proc.stderr
    assert "every 0.80 ms of real time" in warning[0]
    assert "--speed" in warning[0] and "online.update_rate" in warning[0]
    skipped = re.search(r"^skipped \d+ stale decision windows: [^\n]*", proc.stdout, re.MULTILINE)
    assert skipped, proc.stdout
    # the same figures in both (the summary said "the decoder (0.72 ms per decision)" where
    # the warning said "decoding 1.85 ms"), and it is the loop that falls behind
    figures = r"[\d.]+ ms per decision \([\d.]+ ms of it decoding\)"
    assert re.findall(figures, skipped[0]) == re.findall(figures, warning[0]) != []
    assert "the online loop fell behind" in skipped[0]

    folder = tmp_path / "sub-01_ses-01"
    (results_file,) = folder.glob("*_task-online_run-01_results.json")
    saved = _strict_json(results_file.read_text())
    summary = saved["summary"]
    assert summary["n_trials"] == 2 and summary["n_skipped"] > 0
    assert all(r["predicted"] in ("left", "right") for r in saved["results"])
    # every decision made is in the file, each window once and in order
    table = np.genfromtxt(folder / saved["decisions"], delimiter="\t", names=True, usecols=(1, 4))
    assert table.size == summary["n_decisions"] > 0
    assert np.all(np.diff(table["sample"]) > 0) and np.all(table["valid"] == 1)
    # on fresh windows: the lag does not grow with a backlog (it reached 12 s, then 24 s)
    assert summary["latency_ms_p50"] < 1000


@pytest.mark.lsl
@pytest.mark.slow
def test_ctrl_c_during_feedback_leaves_the_cut_trial_unscored(tmp_path):
    """Ctrl-C while a feedback trial runs: that trial was scored (results held one more
    trial than trials, the summary counted it); it is left out. The decisions file's
    ``sample`` column indexes the recording (it counted from the decoder's start, 20-40
    samples off): each decision's sample has its LSL time in the recording."""
    import signal

    model = _noise_model(tmp_path / "m8.joblib", 8)
    config = fast_config(tmp_path)
    argv = [sys.executable, "-m", "paradigms", "online", str(model), "--simulate"]
    argv += ["--sim-channels", "8", "--speed", "5", "--output", str(tmp_path)]
    argv += ["--set", f"stream.markers={config.stream.markers!r}"]
    argv += ["--set", "online.trials_per_class=4", "--set", "timeline.pause=[1.0, 1.5]"]
    decisions = tmp_path / "sub-01_ses-01" / "sub-01_ses-01_task-online_run-01_decisions.tsv"

    def feedback_started() -> bool:  # a decision of a trial's feedback period is written
        rows = decisions.read_text().splitlines()[1:] if decisions.exists() else []
        return any(len(fields) > 5 and fields[5] for fields in (r.split("\t") for r in rows))

    # Ctrl-C comes from a terminal, where SIGINT has its default action (see
    # test_signal_to_calibrate_finalises_and_exits_130)
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    finally:
        signal.signal(signal.SIGINT, previous)
    try:
        deadline = time.monotonic() + 120
        while not feedback_started():
            assert proc.poll() is None and time.monotonic() < deadline, proc.communicate()
            time.sleep(0.005)
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 130, err
    recorded = re.search(r"interrupted; (\d+) trial\(s\) recorded in (\S+) \(sidecar", err)
    assert recorded, err
    (results_file,) = decisions.parent.glob("*_task-online_run-01_results.json")
    saved = _strict_json(results_file.read_text())
    feedback = [t["index"] for t in saved["trials"] if "feedback" in t["onsets"]]
    assert [r["index"] for r in saved["results"]] == feedback
    assert saved["summary"]["n_trials"] == len(feedback)
    # the operator is told what the scored trials gave (none: the first one was cut)
    summary = saved["summary"]
    assert f"hit rate: {summary['n_hits']}/{summary['n_trials'] - summary['n_undecided']}" in out
    assert "online run 01: 0 trials, interrupted by Ctrl-C/SIGTERM -> " in out
    assert len(saved["trials"]) == int(recorded.group(1))

    sidecar = json.loads(Path(recorded.group(2)).with_suffix(".json").read_text())
    table = np.genfromtxt(decisions, delimiter="\t", names=True, usecols=(0, 1))
    assert table.size > 0
    # the simulated subject stamps sample k of its stream t0 + k / (sfreq * speed): within a
    # quarter sample (liblsl's clock correction moves the stamps by some microseconds)
    period = 1 / (sidecar["sfreq"] * 5.0)
    at = sidecar["first_sample_lsl_time"] + table["sample"] * period
    np.testing.assert_allclose(table["lsl_time"], at, rtol=0, atol=period / 4)
    assert table["sample"].max() < sidecar["n_samples"]


def test_online_refuses_a_model_of_other_classes_before_connecting(tmp_path, capsys):
    model = _noise_model(tmp_path / "lr.joblib", 8)
    session = tmp_path / "fh.toml"
    session.write_text('[paradigm]\nclasses = ["feet", "hand"]\n')
    config = fast_config(tmp_path)
    argv = ["online", str(model), str(session), "--simulate", "--speed", "10"]
    argv += ["--output", str(tmp_path / "out"), "--set", "online.trials_per_class=1"]
    argv += ["--set", f"stream.markers={config.stream.markers!r}"]
    assert main(argv) == 1
    err = capsys.readouterr().err
    assert (
        f"bci-universum online: error: The classes of the model {model}, ['left', 'right'], "
        "differ from [paradigm] classes, ['feet', 'hand']."
    ) in err
    assert "Waiting for LSL stream" not in err and not (tmp_path / "out").exists()
