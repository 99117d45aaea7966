"""Sessions on loopback LSL with the simulated subject: calibration, universum, online."""

import contextlib
import json
import re
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import mne
import numpy as np
import pylsl
import pytest

from acquisition.recorder import bids_basename, recover
from bci_universum.drift import DriftMonitor
from paradigms.display import MESSAGES, HeadlessPresenter
from paradigms.feedback import online_run_figures, plot_online_run
from paradigms.session import RunInterrupted, Session, mixed_trials, next_run
from paradigms.timeline import RunPlan, imagery_timeline
from paradigms.training import train_model
from tests.acquisition.lsl_helpers import counter_stream_info, reaped

from .session_helpers import fast_config, read_until

SIM = {"n_channels": 8, "seed": 3}


def _annotations(fname):
    raw = mne.io.read_raw_fif(fname, preload=False, verbose="error")
    return list(raw.annotations.description), raw


def _check_trial_markers(results, extra=()):
    descriptions, raw = _annotations(results["fname"])
    sidecar = json.loads(Path(results["fname"].replace("_raw.fif", "_raw.json")).read_text())
    assert sidecar["annotations_outside_data"] == []
    assert sidecar["run"] == f"{results['run']:02d}"  # as the file name and stream record
    assert descriptions.count("trial/start") == len(results["trials"])
    assert descriptions.count("trial/end") == len(results["trials"])
    for marker in ("run/start", "run/end", *extra):
        assert marker in descriptions
    for condition in {t["condition"] for t in results["trials"]}:
        n = sum(t["condition"] == condition for t in results["trials"])
        assert descriptions.count(condition) == n
    # every trial's cue sits where its marker was stamped: the displayed-frame time
    onsets = raw.annotations.onset
    cues = [
        (o, d) for o, d in zip(onsets, descriptions, strict=True) if d in results["conditions"]
    ]
    trials = sorted(results["trials"], key=lambda t: t["onsets"]["cue"])
    assert [d for _, d in cues] == [t["condition"] for t in trials]
    # the simulated subject streams `speed` times faster than real time: a second of LSL time
    # holds `speed` seconds of data
    speed = sidecar["metadata"]["speed"]
    shown = [speed * (t["onsets"]["cue"] - sidecar["first_sample_lsl_time"]) for t in trials]
    # placed through the recorded sample timestamps: within a sample of the shown frame
    np.testing.assert_allclose([o for o, _ in cues], shown, atol=1 / raw.info["sfreq"])
    return descriptions


class _DecisionListener(threading.Thread):
    """An inlet on the online run's ``decisions`` stream, collecting (timestamp, sample)."""

    def __init__(self, source_id):
        super().__init__(daemon=True)
        self.source_id = source_id
        self.samples = []
        self.error = None
        self._stop_event = threading.Event()

    def run(self):
        try:
            found = []
            while not found and not self._stop_event.is_set():
                found = pylsl.resolve_byprop("source_id", self.source_id, timeout=0.5)
            if not found:
                return
            inlet = pylsl.StreamInlet(found[0], processing_flags=0)
            inlet.open_stream(10.0)
            while not self._stop_event.is_set():
                chunk, stamps = inlet.pull_chunk(timeout=0.1)
                self.samples += list(zip(stamps, chunk, strict=True))
            chunk, stamps = inlet.pull_chunk(timeout=0.0)
            self.samples += list(zip(stamps, chunk, strict=True))
            inlet.close_stream()
        except BaseException as err:  # reported by stop()
            self.error = err

    def stop(self):
        self._stop_event.set()
        self.join(10)
        if self.error is not None:
            raise self.error


@pytest.mark.lsl
@pytest.mark.slow(seconds=60)
def test_simulated_session_end_to_end(tmp_path):
    """Calibration, universum, training and online feedback on one simulated subject.

    Calibration has 8 trials per class: trained on 4, the simulated subject's decoder was so
    variable between runs (trial onsets follow the wall clock) that 6 of 8 online trials were
    on target in one run of several, below the 0.8 asked here.
    """
    config = fast_config(tmp_path, **{"paradigm.trials_per_class": 8})
    with Session(config, simulate=SIM) as session:
        cal = session.calibration()
        uni = session.universum()
        trained = train_model([cal["fname"], uni["fname"]], config, n_splits=3)
        monitor = DriftMonitor(n_clusters=4, window_size=10, random_state=0)
        listener = _DecisionListener(f"{session.outlet.source_id}-decisions")
        listener.start()
        try:
            online = session.online((trained.pipeline, trained.metadata), drift=monitor)
        finally:
            listener.stop()

    assert [r["ended"] for r in (cal, uni, online)] == ["completed"] * 3
    assert session.presenter.results == [r["hit"] for r in online["results"]]  # each marked
    cal["conditions"] = config.class_markers
    _check_trial_markers(cal)
    uni["conditions"] = config.universum_markers
    _check_trial_markers(uni)
    assert len(uni["trials"]) == 4

    summary = online["summary"]
    assert summary["n_trials"] == 8
    assert summary["hit_rate"] >= 0.8, online["results"]
    assert 0 < summary["latency_ms_p50"] <= summary["latency_ms_p99"] < 1000

    online["conditions"] = config.class_markers
    descriptions = _check_trial_markers(online, extra=["feedback/start"])
    predicted = [r["predicted"] for r in online["results"]]
    assert set(predicted) <= {"left", "right"}  # every feedback trial was decided
    for cls in ("left", "right"):
        assert descriptions.count(f"decision/{cls}") == predicted.count(cls)
    table = np.genfromtxt(online["decisions"], delimiter="\t", names=True, usecols=range(7))
    in_trial = table["trial"][np.isfinite(table["trial"])].astype(int)
    assert set(in_trial) == {r["index"] for r in online["results"]}
    for r in online["results"]:
        rows = table[table["trial"] == r["index"]]
        assert len(rows) == r["n_decisions"] + r["n_withheld"]
        assert np.mean(rows["value"]) == pytest.approx(r["mean_value"], rel=1e-6)

    # the decisions LSL stream carried every valid decision of the TSV from the moment the
    # listener connected on (it resolves the stream only once the online run creates it)
    valid = table[table["valid"] == 1]
    assert listener.samples, "the listener received no decision"
    first = min(stamp for stamp, _ in listener.samples)
    assert len(listener.samples) == np.sum(valid["lsl_time"] >= first - 1e-6)
    by_time = {
        round(t, 6): (v, sm)
        for t, v, sm in zip(valid["lsl_time"], valid["value"], valid["smoothed"], strict=True)
    }
    for stamp, (value, smoothed) in listener.samples:
        assert by_time[round(stamp, 6)] == pytest.approx((value, smoothed), rel=1e-8)

    _check_online_plots(online, table, config.paradigm.speed)

    saved = json.loads(Path(online["results_file"]).read_text())
    assert saved["summary"]["hit_rate"] == summary["hit_rate"]
    # one drift report per non-overlapping 1 s window once the monitor's 10 are full
    assert online["drift"]["n_reports"] >= 20
    assert saved["drift"] == online["drift"]


def _check_online_plots(online, table, speed):
    """The run's plots hold every valid decision of each feedback trial from its cue on, and
    the trials' outcomes."""
    import matplotlib.image

    paths = plot_online_run(online, speed)
    decisions = Path(online["decisions"])
    assert paths == {
        "decisions": decisions.with_suffix(".png"),
        "confusion": decisions.with_name(decisions.name.replace("decisions.tsv", "confusion.png")),
    }
    for path in paths.values():
        assert matplotlib.image.imread(path).std() > 0.05
    figures = online_run_figures(online, speed)
    (ax,) = figures["decisions"].axes
    assert (ax.get_xlabel(), ax.get_ylabel()) == ("time from cue onset (s)", "decision value")
    feedback = [t for t in online["trials"] if "feedback" in t["onsets"]]
    trial_lines = [ln for ln in ax.lines if ln.get_alpha() == 0.25]
    assert len(trial_lines) == len(feedback) == 8
    valid = table[table["valid"] == 1]
    in_order = sorted(feedback, key=lambda t: t["condition"])  # by class, then trial order
    for line, trial in zip(trial_lines, in_order, strict=True):
        cue = trial["onsets"]["cue"]
        mine = valid[(valid["lsl_time"] >= cue) & (valid["lsl_time"] <= trial["end"])]
        assert mine.size > 5
        np.testing.assert_allclose(line.get_xdata(), (mine["lsl_time"] - cue) * speed)
        np.testing.assert_array_equal(line.get_ydata(), mine["value"])
    legend = {t.get_text() for t in ax.get_legend().get_texts()}
    assert {"left: mean ± sd of 4 trials", "right: mean ± sd of 4 trials"} <= legend
    (boundary,) = [ln for ln in ax.lines if ln.get_label() == "decision boundary"]
    assert set(boundary.get_ydata()) == {0.0}
    (cm,) = figures["confusion"].axes
    assert (cm.get_xlabel(), cm.get_ylabel()) == ("decoded class", "target class")
    counts = np.array([int(t.get_text()) for t in cm.texts]).reshape(2, 2)
    for i, target in enumerate(("left", "right")):
        for j, decoded in enumerate(("left", "right")):
            expected = sum(r["target"] == target and r["predicted"] == decoded
                           for r in online["results"])  # fmt: skip
            assert counts[i, j] == expected


@pytest.mark.lsl
def test_stream_stopping_mid_run_ends_it_cleanly(tmp_path):
    config = fast_config(tmp_path, speed=8.0, **{"stream.silence_timeout": 0.5})
    with Session(config, simulate=SIM) as session:
        sfreq = session.receiver.sfreq_
        # stop the subject's stream once about two trials (2 x 10 s) have been received; the
        # recorder starts a little after `start` (1 s margin for a loaded machine)
        start = session.receiver.n_samples

        def stop_source():
            while session.receiver.n_samples - start < 21 * sfreq:
                threading.Event().wait(0.01)
            session.source.stop()

        stopper = threading.Thread(target=stop_source, daemon=True)
        stopper.start()
        results = session.calibration()
        stopper.join(10)
    assert results["ended"].startswith("stream stopped")
    assert 1 <= len(results["trials"]) < 8
    descriptions, raw = _annotations(results["fname"])
    assert raw.n_times >= 20 * sfreq
    assert descriptions.count("trial/end") >= len(results["trials"])
    assert "run/end" not in descriptions
    assert not list(tmp_path.rglob("*.partial"))
    saved = json.loads(Path(results["results_file"]).read_text())
    assert saved["ended"] == results["ended"]


@pytest.mark.lsl
def test_model_not_matching_the_stream_is_refused(tmp_path):
    from bci_universum.model_io import ModelMetadata

    config = fast_config(tmp_path)
    pipeline = type("Fitted", (), {"decision_function": None, "classes_": ["left", "right"]})()
    classes = ["left", "right"]
    wrong_channel = ModelMetadata(["C3", "C4", "XX"], 250.0, (8, 30), (0.5, 1.5), classes)
    wrong_rate = ModelMetadata(["C3", "C4"], 500.0, (8, 30), (0.5, 1.5), classes)
    wrong_classes = ModelMetadata(["C3", "C4"], 250.0, (8, 30), (0.5, 1.5), ["feet", "hand"])
    with Session(config, simulate=SIM) as session:
        lacks = r"lacks the model's channel\(s\) \['XX'\]; the input's channels: \['Fp1'"
        with pytest.raises(ValueError, match=lacks):
            session.online((pipeline, wrong_channel))
        with pytest.raises(ValueError, match="sampling rate"):
            session.online((pipeline, wrong_rate))
        with pytest.raises(ValueError, match=r"\['feet', 'hand'\], differ from \[paradigm\]"):
            session.online((pipeline, wrong_classes))
    assert not list(tmp_path.rglob("*.fif"))


def test_mixed_trials_are_balanced_and_shuffled():
    timeline = imagery_timeline()
    groups = [(("cue/left", "cue/right"), 6), (("universum/rest", "universum/words"), 4)]
    trials = mixed_trials(groups, timeline, seed=1)
    conditions = [t.condition for t in trials]
    assert [t.index for t in trials] == list(range(10))
    assert {c: conditions.count(c) for c in set(conditions)} == {
        "cue/left": 3,
        "cue/right": 3,
        "universum/rest": 2,
        "universum/words": 2,
    }
    assert conditions != sorted(conditions, key=lambda c: c.startswith("universum"))
    assert all(2.0 <= t.pause <= 4.0 for t in trials)
    assert [t.condition for t in mixed_trials(groups, timeline, seed=1)] == conditions


def test_next_run_never_reuses_a_number(tmp_path):
    """Any file of a run counts, in the session folder or in the session's BIDS copy (its
    files deleted from the session folder, a run's number stays taken there)."""
    folder = tmp_path / "sub-01_ses-01"
    bids = tmp_path / "sub-01" / "ses-01" / "eeg"
    assert next_run(tmp_path, "01", "01", "online") == 1
    folder.mkdir()
    bids.mkdir(parents=True)
    (folder / (bids_basename("01", "01", "online", 1) + "_raw.fif")).touch()
    (folder / (bids_basename("01", "01", "online", 3) + "_raw.fif.partial")).mkdir()
    (folder / (bids_basename("01", "01", "calibration", 7) + "_raw.fif")).touch()
    (bids / (bids_basename("02", "01", "online", 9) + "_events.tsv")).touch()
    assert next_run(tmp_path, "01", "01", "online") == 4
    (folder / (bids_basename("01", "01", "online", 4) + "_decisions.tsv")).touch()
    assert next_run(tmp_path, "01", "01", "online") == 5
    (bids / (bids_basename("01", "01", "online", 6) + "_events.tsv")).touch()
    assert next_run(tmp_path, "01", "01", "online") == 7


def test_a_session_output_that_cannot_be_written_is_refused_before_any_stream(
    read_only_folder,
):
    """``[session] output`` from a session file (no ``--output`` checked it): the session
    refuses it before it starts a stream or waits for one."""
    config = fast_config(read_only_folder / "recordings")
    with pytest.raises(
        ValueError, match=rf"\[session\] output: cannot write into {read_only_folder}"
    ):
        Session(config, simulate=SIM)


def test_a_session_names_the_unrecovered_recording_a_killed_one_left(tmp_path, caplog):
    """Its run numbers go past it (:func:`next_run`); the warning says how to recover it."""
    config = fast_config(tmp_path)
    folder = tmp_path / "sub-01_ses-01"
    partial = folder / (bids_basename("01", "01", "calibration", 1) + "_raw.fif.partial")
    partial.mkdir(parents=True)
    with caplog.at_level("WARNING", logger="paradigms"):
        Session(config, simulate=SIM)
    assert f"holds an unrecovered recording, {partial.name}" in caplog.text
    assert f"'bci-universum stream recover {partial}'" in caplog.text
    assert next_run(tmp_path, "01", "01", "calibration") == 2


@pytest.mark.lsl
def test_a_recording_still_running_in_the_folder_is_not_offered_for_recovery(tmp_path, caplog):
    """A ``stream record`` process recording into the session folder holds its partial
    folder's lock: the session does not call it unrecovered; once that process is killed, it
    does."""
    config = fast_config(tmp_path)
    folder = tmp_path / "sub-01_ses-01"
    outlet = pylsl.StreamOutlet(counter_stream_info(1, 100.0))
    proc = subprocess.Popen(
        [sys.executable, "-m", "paradigms", "stream", "record",
         "--source-id", outlet.get_info().source_id(), "--output", str(folder),
         "--lsl-mode", "loopback", "--timeout", "60"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    with reaped(proc):
        read_until(proc.stdout, r"Recording .* into ", 180.0)  # its partial folder locked
        with caplog.at_level("WARNING", logger="paradigms"):
            Session(config, simulate=SIM)
        assert "unrecovered" not in caplog.text
        proc.kill()
        proc.wait(10)
    with caplog.at_level("WARNING", logger="paradigms"):
        Session(config, simulate=SIM)
    partial = folder / (bids_basename("01", "01", "calibration", 1) + "_raw.fif.partial")
    assert f"holds an unrecovered recording, {partial.name}" in caplog.text


class _Operator(HeadlessPresenter):
    """A headless presenter whose operator presses a key when a given screen first shows."""

    def __init__(self, presses):
        super().__init__()
        self.presses = dict(presses)  # (screen, n-th time shown) -> request
        self._seen = {}

    def show(self, screen, condition=None, text=None):
        t = super().show(screen, condition, text)
        self._seen[screen] = self._seen.get(screen, 0) + 1
        request = self.presses.pop((screen, self._seen[screen]), None)
        if request is not None:
            self.press(request)
        return t


@pytest.mark.lsl
def test_pause_and_break_screens_follow_the_plan(tmp_path):
    config = fast_config(tmp_path, speed=10.0, **{"paradigm.trials_per_class": 2})
    plan = RunPlan(instructions=1.0, start=1.0, break_every=2, break_duration=2.0)
    # P during the first cue pauses after that trial; Space on the pause screen continues
    operator = _Operator({("cue", 1): "pause", ("pause", 1): "continue"})
    with Session(config, presenter=operator, simulate=SIM, plan=plan) as session:
        results = session.calibration()
    screens = [screen for _, screen, _ in operator.history]
    messages = [s for s in screens if s not in ("blank", "fixation", "cue")]
    assert messages == ["instructions", "start", "pause", "break", "end"]
    # the pause follows trial 1 (asked during its cue), the break trial 2, none the last
    assert screens[: screens.index("pause")].count("cue") == 1
    assert screens[: screens.index("break")].count("cue") == 2
    assert operator.text == MESSAGES["end"]
    assert results["ended"] == "completed" and len(results["trials"]) == 4
    descriptions, _ = _annotations(results["fname"])
    order = [d for d in descriptions if d.startswith("run/")]
    assert order == ["run/start", "run/pause", "run/resume", "run/break", "run/end"]
    sidecar = json.loads(Path(results["fname"].replace("_raw.fif", "_raw.json")).read_text())
    assert sidecar["interrupted"] is False


@pytest.mark.lsl
def test_quit_key_finalises_the_run_marked_interrupted(tmp_path):
    config = fast_config(tmp_path, speed=10.0, **{"paradigm.trials_per_class": 2})
    operator = _Operator({("cue", 2): "quit"})
    plan = RunPlan(instructions=0.0, start=0.0)
    with (
        Session(config, presenter=operator, simulate=SIM, plan=plan) as session,
        pytest.raises(RunInterrupted) as caught,
    ):
        session.calibration()
    results = caught.value.results
    assert results["ended"] == "interrupted by the quit key"
    assert len(results["trials"]) == 1
    sidecar = json.loads(Path(results["fname"].replace("_raw.fif", "_raw.json")).read_text())
    assert sidecar["interrupted"] is True
    saved = json.loads(Path(results["results_file"]).read_text())
    assert saved["ended"] == results["ended"]
    descriptions, _ = _annotations(results["fname"])
    assert descriptions.count("trial/end") == 1 and "run/end" not in descriptions
    cues = [d for d in descriptions if d.startswith("cue/")]
    # the completed trial's cue, then at most that of the trial the quit key interrupted
    assert cues[0] == results["trials"][0]["condition"] and len(cues) <= 2
    assert not list(tmp_path.rglob("*.partial"))


@pytest.mark.lsl
def test_a_failed_bids_copy_loses_nothing_of_the_run(tmp_path, caplog):
    """The copy fails for real: the session's BIDS copy holds an ``electrodes.tsv`` of other
    electrodes, which mne-bids refuses to overwrite. The run's recording and results are kept,
    and the warning says where they are and why the copy failed."""
    eeg = tmp_path / "sub-01" / "ses-01" / "eeg"
    eeg.mkdir(parents=True)
    (eeg / "sub-01_ses-01_space-CapTrak_electrodes.tsv").write_text("name\tx\ty\tz\nX\t0\t0\t0\n")
    config = fast_config(tmp_path, speed=10.0, **{"paradigm.trials_per_class": 1})
    plan = RunPlan(instructions=0.0, start=0.0)
    with (
        caplog.at_level("WARNING", logger="paradigms"),
        Session(config, simulate=SIM, plan=plan) as session,
    ):
        results = session.calibration()
    assert results["bids"] is None and results["ended"] == "completed"
    saved = json.loads(Path(results["results_file"]).read_text())
    assert saved["bids"] is None and len(saved["trials"]) == 2
    assert (
        f"calibration run 01 is recorded in {results['fname']} (its results beside it), but "
        f"its copy into the BIDS dataset at {tmp_path} failed: "
    ) in caplog.text
    assert "electrodes.tsv" in caplog.text
    assert len(_annotations(results["fname"])[0]) > 0


def _calibrate(output, channels=4, speed=5, trials_per_class=4):
    """Start ``bci-universum calibrate --simulate`` recording into ``output``, in a process of
    its own whose SIGINT has its default action."""
    config = fast_config(output)
    argv = [sys.executable, "-m", "paradigms", "calibrate", "--simulate"]
    argv += ["--sim-channels", str(channels), "--quality-seconds", "0", "--speed", str(speed)]
    for key in ("session.output", "stream.name", "stream.markers"):
        section, field = key.split(".")
        argv += ["--set", f"{key}={getattr(getattr(config, section), field)!r}"]
    argv += ["--set", f"paradigm.trials_per_class={trials_per_class}"]
    argv += ["--set", "timeline.pause=[1.0, 1.5]"]
    return _popen_as_from_a_terminal(argv)


def _popen_as_from_a_terminal(argv):
    """Start ``argv`` with its output piped, in a process whose SIGINT has its default action."""
    # A shell starts background jobs with SIGINT ignored and the child would inherit that;
    # Ctrl-C comes from a terminal, where SIGINT has its default action: give the child that.
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        return subprocess.Popen(
            argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, bufsize=0
        )
    finally:
        signal.signal(signal.SIGINT, previous)


@pytest.mark.lsl
@pytest.mark.slow
@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM])
def test_signal_to_calibrate_finalises_and_exits_130(tmp_path, signum):
    proc = _calibrate(tmp_path)
    try:
        seen = read_until(proc.stderr, r"calibration run-01: .*\b1/8\b", timeout=120)
        proc.send_signal(signum)
        proc.wait(60)
    finally:
        if proc.poll() is None:
            proc.kill()
    err = "".join(seen) + proc.stderr.read()
    assert proc.returncode == 130, err
    assert "Traceback" not in err
    fname = re.search(r"interrupted; (\d+) trial\(s\) recorded in (\S+) \(sidecar", err)
    assert fname, err
    assert 1 <= int(fname.group(1)) < 8
    sidecar = json.loads(Path(fname.group(2).replace("_raw.fif", "_raw.json")).read_text())
    assert sidecar["interrupted"] is True
    descriptions, _ = _annotations(fname.group(2))
    assert descriptions.count("trial/end") >= int(fname.group(1))
    assert not list(tmp_path.rglob("*.partial"))


@pytest.mark.lsl
@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM])
def test_signal_while_waiting_for_the_stream_exits_130_at_once(tmp_path, signum):
    """Ctrl-C while the session waits for an absent EEG stream: the command says it was
    interrupted and exits with 130 at once, instead of waiting for the connecting thread and
    failing with "did not stop within 5 s" (exit code 1)."""
    config = fast_config(tmp_path / "out")
    argv = [sys.executable, "-m", "paradigms", "calibrate", "--quality-seconds", "0"]
    argv += ["--stream", f"absent-{config.stream.name}", "--set", "stream.timeout=20"]
    argv += ["--set", f"stream.markers={config.stream.markers!r}", "-o", str(tmp_path / "out")]
    proc = _popen_as_from_a_terminal(argv)
    try:
        seen = read_until(proc.stderr, "Waiting for LSL stream", timeout=60)
        signalled = time.monotonic()
        proc.send_signal(signum)
        proc.wait(30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(10)
    elapsed = time.monotonic() - signalled
    err = "".join(seen) + proc.stderr.read()
    assert proc.returncode == 130, err
    assert "bci-universum calibrate: interrupted." in err
    assert "did not stop" not in err and "Traceback" not in err, err
    assert elapsed < 4.0, err  # not the 5 s join of the connecting thread
    assert not (tmp_path / "out").exists()


@pytest.mark.lsl
@pytest.mark.slow
@pytest.mark.parametrize("barrage_after", ["the first Ctrl-C", "the FIF"])
def test_ctrl_c_pressed_again_and_again_while_a_run_finishes_loses_nothing(
    tmp_path, barrage_after
):
    """Ctrl-C, then Ctrl-C every 20 ms until the process ends, from the first one on (while
    the FIF is written) or once the FIF is out (while the BIDS copy and the results are
    written and the streams closed): each is held, the run's files are all written and the
    command ends with its message and 130, without a traceback."""
    proc = _calibrate(tmp_path)
    folder = tmp_path / "sub-01_ses-01"
    n_held = 0
    try:
        seen = read_until(proc.stderr, r"calibration run-01: .*\b1/8\b", timeout=120)
        proc.send_signal(signal.SIGINT)
        deadline = time.monotonic() + 60
        if barrage_after == "the FIF":
            while not list(folder.glob("*_raw.fif")) and time.monotonic() < deadline:
                time.sleep(0.005)
        while proc.poll() is None and time.monotonic() < deadline:
            proc.send_signal(signal.SIGINT)
            n_held += 1
            with contextlib.suppress(subprocess.TimeoutExpired):
                proc.wait(0.02)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(10)
    deadline = time.monotonic() + 10  # the pipe's reader reaches the last line
    while "interrupted" not in "".join(seen) and time.monotonic() < deadline:
        time.sleep(0.01)
    err = "".join(seen)
    assert proc.returncode == 130, err
    assert n_held > 1, err
    assert "Traceback" not in err and "Exception ignored" not in err, err
    assert "Finishing calibration run 01 first" in err
    fname = re.search(r"interrupted; (\d+) trial\(s\) recorded in (\S+) \(sidecar", err)
    assert fname, err
    results = json.loads(Path(fname.group(2).replace("_raw.fif", "_results.json")).read_text())
    assert results["ended"] == "interrupted by Ctrl-C/SIGTERM"
    assert len(results["trials"]) == int(fname.group(1))
    bids = tmp_path / "sub-01" / "ses-01" / "eeg"
    assert (bids / "sub-01_ses-01_task-calibration_run-01_eeg.vhdr").exists()
    assert (tmp_path / "sub-01" / "ses-01" / "sub-01_ses-01_scans.tsv").exists()
    assert not list(tmp_path.rglob("*.partial"))


@pytest.mark.lsl
@pytest.mark.slow
def test_a_full_disk_stops_the_run_at_once_and_names_the_way_out(tmpfs):
    """A real full file system (a 400 KB tmpfs as the output): the run stops as soon as the
    recorder fails to write, not after its last trial; the error names the command that
    recovers the recording, which holds what reached the disk once there is room."""
    output = tmpfs(400)
    proc = _calibrate(output, channels=16, speed=10, trials_per_class=8)
    with reaped(proc):
        _, err = proc.communicate(timeout=180)
    partial = output / "sub-01_ses-01" / "sub-01_ses-01_task-calibration_run-01_raw.fif.partial"
    assert proc.returncode == 1, err
    assert f"error: Writing {partial} failed: [Errno 28] No space left on device" in err
    assert f"'bci-universum stream recover {partial}'" in err
    assert "Traceback" not in err
    done = max(int(n) for n in re.findall(r"\b(\d+)/16\b", err))
    assert done < 16, err
    subprocess.run(["mount", "-o", "remount,size=8m", str(output)], check=True)
    raw = mne.io.read_raw_fif(recover(partial), verbose="error")
    assert raw.n_times > 0 and "run/start" in raw.annotations.description


@pytest.mark.lsl
@pytest.mark.parametrize("source_id", ["", "amp-2"])
def test_missing_stream_error_lists_the_visible_streams(tmp_path, caplog, source_id):
    """The wait and the error name the stream as selected: its source_id too, when set."""
    from acquisition.streams import make_stream_info

    config = fast_config(tmp_path, **{"stream.timeout": 1.0, "stream.source_id": source_id})
    other = pylsl.StreamOutlet(make_stream_info(f"visible-{config.stream.markers}", ["C3"], 100.0))
    caplog.set_level("INFO", logger="paradigms.session")
    with pytest.raises(TimeoutError, match=r"Visible LSL streams: .*'visible-") as caught:
        Session(config).__enter__()
    selected = f"LSL stream name='{config.stream.name}'"
    selected += f" source_id='{source_id}'" if source_id else ""
    assert f"No {selected} found" in str(caught.value)
    assert f"Waiting for {selected} (up to" in caplog.text
    del other
    assert not list(tmp_path.rglob("*.fif"))


def _random_model(session, name):
    """``name`` fitted on noise for the simulated stream's channels, with its metadata."""
    from bci_universum.model_io import ModelMetadata
    from bci_universum.pipelines import make_pipeline

    ch_names, sfreq = session.receiver.ch_names_, session.receiver.sfreq_
    window = (0.5, 1.5)
    pipeline = make_pipeline(name, sfreq=sfreq, band=(8.0, 30.0), window=window)
    rng = np.random.default_rng(0)
    y = np.array(["left", "right", "universum"] * 8, dtype=object)
    pipeline.fit(rng.standard_normal((y.size, len(ch_names), round(sfreq))), y)
    meta = ModelMetadata(ch_names, sfreq, (8.0, 30.0), window, ["left", "right"], pipeline=name)
    return pipeline, meta


@pytest.mark.lsl
def test_online_run_without_trials_saves_valid_json(tmp_path):
    """A run that scores no trial has no hit rate: null in its results file, not NaN."""
    config = fast_config(tmp_path, **{"stream.silence_timeout": 0.5})
    with Session(config, simulate=SIM) as session:
        model = _random_model(session, "ts_lr")

        def stop_source():  # once the run has started (run/start pushed), before a trial ends
            while session._n_pushed < 1:
                threading.Event().wait(0.01)
            session.source.stop()

        stopper = threading.Thread(target=stop_source, daemon=True)
        stopper.start()
        results = session.online(model)
        stopper.join(10)
    assert results["ended"].startswith("stream stopped"), results["ended"]
    assert results["summary"]["n_trials"] == 0
    text = Path(results["results_file"]).read_text()
    saved = json.loads(text, parse_constant=lambda c: pytest.fail(f"{c} in {text}"))
    assert saved["summary"]["hit_rate"] is None


@pytest.mark.lsl
def test_update_rate_above_the_stream_rate_names_the_setting(tmp_path):
    config = fast_config(tmp_path, **{"online.update_rate": 1000.0})
    refused = pytest.raises(ValueError, match=r"\[online\] update_rate \(1000\.0 Hz\) exceeds")
    with Session(config, simulate=SIM) as session, refused:
        session.online(_random_model(session, "ts_lr"))
    assert not list(tmp_path.rglob("*.fif"))


@pytest.mark.lsl
def test_adapt_to_rest_needs_an_adaptive_model(tmp_path):
    config = fast_config(tmp_path)
    config.online.adapt_to_rest = True
    refused = pytest.raises(ValueError, match=r"adapt_to_rest: the model \(ts_ulr\) has no step")
    with Session(config, simulate=SIM) as session, refused:
        session.online(_random_model(session, "ts_ulr"))
    assert not list(tmp_path.rglob("*.fif"))


@pytest.mark.lsl
@pytest.mark.slow
def test_online_run_adapts_the_universum_after_each_rest_trial(tmp_path):
    config = fast_config(tmp_path, **{"online.rest_trials": 2, "online.trials_per_class": 1})
    config.online.adapt_to_rest = True
    with Session(config, simulate=SIM) as session:
        model = _random_model(session, "ats_ulr")
        results = session.online(model)
    rests = [t for t in results["trials"] if t["condition"] == "universum/rest"]
    first_feedback = min(t["onsets"]["cue"] for t in results["trials"] if t not in rests)
    assert len(rests) == 2 and len(results["adaptations"]) == 2
    for rest, adapted in zip(rests, results["adaptations"], strict=True):
        # folded in once the decoder got past the rest trial's end, before any feedback
        assert rest["end"] <= adapted < first_feedback
    assert model[0][-1].universum_online_.shape[0] == 0  # the trained model is untouched
