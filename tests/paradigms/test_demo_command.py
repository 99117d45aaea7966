"""``bci-universum demo`` and ``bci-universum digits`` through the real CLI entry point."""

import json
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import matplotlib.image
import mne
import numpy as np
import pytest

from paradigms.cli import main
from paradigms.replay import feedback_periods
from tests.acquisition.lsl_helpers import reaped

from .session_helpers import read_until

EXAMPLE = Path(__file__).resolve().parents[2] / "recordings" / "sub-01_ses-01"


def _table_rows(text: str, universum: str) -> list[str]:
    section = text.split(f"### Universum {universum}")[1].split("###")[0]
    return [line for line in section.splitlines() if line.startswith("|")]


def test_digits_quick_prints_the_quick_study(capsys):
    assert main(["digits", "--quick", "--seed", "1"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("## OCR study: digits 5 vs 8")
    for universum in ("U_3", "U_mean"):
        rows = _table_rows(out, universum)
        assert len(rows) == 2 + 2  # header, rule, |L| = 10 and 40
        for row in rows[2:]:
            means = [float(m) for m in re.findall(r"(\d+\.\d\d) ± ", row)]
            assert len(means) == 4  # SVM, U-SVM, LS-SVM, U_ls-SVM
            assert all(0 <= m < 15 for m in means)  # percent; observed ≤ 6 %


def test_digits_command_writes_the_table(tmp_path, capsys):
    output = tmp_path / "ocr.md"
    argv = ["digits", "--quick", "--train-sizes", "10", "--universum-sizes", "20"]
    argv += ["--splits", "2", "--seed", "2", "--output", str(output)]
    assert main(argv) == 0
    printed = capsys.readouterr().out
    written = output.read_text(encoding="utf-8")
    assert written.strip() == printed.strip()
    assert "U-SVM \\|U\\|=20" in written
    assert [row.split("|")[1].strip() for row in _table_rows(written, "U_3")[2:]] == ["10"]


def test_digits_command_bad_input(tmp_path, capsys):
    missing = tmp_path / "no" / "such" / "folder" / "ocr.md"
    with pytest.raises(SystemExit):
        main(["digits", "--quick", "--output", str(missing)])
    assert f"--output/-o: the folder {missing.parent} of {missing} does not exist" in (
        capsys.readouterr().err
    )
    assert main(["digits", "--quick", "--train-sizes", "11", "--splits", "2"]) == 1
    assert "train_sizes must be even" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main(["digits", "--splits", "0"])
    assert "expected a positive integer, got 0" in capsys.readouterr().err


def _figure(pattern, text):
    match = re.search(pattern, text)
    assert match, f"{pattern!r} not in the output:\n{text}"
    return float(match.group(1))


def _assert_latencies_ordered_and_bounded(out):
    """Latencies in ms: positive, p50 ≤ p99, and far below a second (not seconds or µs)."""
    p50 = _figure(r"p50 (\d+\.\d) ms", out)
    p99 = _figure(r"p99 (\d+\.\d) ms", out)
    n_decisions = _figure(r"over (\d+) decisions", out)
    assert 0 < p50 <= p99 < 1000, (p50, p99)
    assert n_decisions > 100


@pytest.mark.lsl
@pytest.mark.slow(seconds=45)
def test_demo_runs_a_simulated_session(tmp_path, capsys):
    argv = ["demo", "--trials", "4", "--speed", "8", "--channels", "8", "--seed", "3"]
    assert main([*argv, "--output", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    chance = _figure(r"\(chance (\d+\.\d) %\)", out)
    assert chance == 50.0
    for label in ("with universum", "without"):
        row = re.search(rf"{label}\s+(\d+\.\d)%\s+\d+\.\d\s+((?:\d+ ?)+)\n", out)
        assert row, f"no {label!r} accuracy row in:\n{out}"
        folds = [float(f) for f in row.group(2).split()]
        assert len(folds) == 4  # nested 4-fold CV on 4 + 4 trials
        # the printed mean is the mean of the printed folds (rounded), above chance
        assert float(row.group(1)) == pytest.approx(np.mean(folds), abs=0.5)
        assert float(row.group(1)) > chance
    hits = _figure(r"hit rate: \d+/8 = (\d+)%", out)
    assert hits >= 75
    _assert_latencies_ordered_and_bounded(out)
    model = json.loads((tmp_path / "model.json").read_text())
    assert model["metadata"]["classes"] == ["left", "right"]
    session = tmp_path / "sub-01_ses-01"
    assert len(list(session.glob("*_raw.fif"))) == 3
    # the demo keeps the plots train and online write (their content: test_viz.py): PNGs of
    # their figures' size (inches x 100 dpi), not blank
    plots = {
        "training": (tmp_path / "model_cv.png", (360, 920)),
        "decisions": (session / "sub-01_ses-01_task-online_run-01_decisions.png", (400, 600)),
        "confusion": (session / "sub-01_ses-01_task-online_run-01_confusion.png", (380, 420)),
    }
    for name, (path, size) in plots.items():
        assert f"{name} plot: {path}" in out
        image = matplotlib.image.imread(path)
        assert image.shape[:2] == size and image.std() > 0.05, name


@pytest.mark.lsl
@pytest.mark.slow
def test_demo_replays_the_example_session(capsys):
    session = Path(__file__).resolve().parents[2] / "recordings" / "sub-01_ses-01"
    assert sum(p.stat().st_size for p in session.parent.rglob("*")) <= 10e6
    assert main(["demo", "--replay", str(session), "--speed", "40"]) == 0
    out = capsys.readouterr().out
    assert "universum: rest 10" in out
    assert _figure(r"hit rate: \d+/20 = (\d+)%", out) >= 80
    _assert_latencies_ordered_and_bounded(out)


@pytest.mark.lsl
@pytest.mark.slow
def test_demo_says_when_it_replays_an_interrupted_run(tmp_path, capsys):
    """The example's online run cut short after its fourth feedback trial (real MNE I/O), its
    sidecar marked interrupted as a Ctrl-C leaves it: the replay says so and scores the four.
    An interrupted universum run is left out of training, and not named as trained on."""
    for path in EXAMPLE.glob("*_task-[cu]*_raw.*"):
        shutil.copy(path, tmp_path)
    online = "sub-01_ses-01_task-online_run-01_raw"
    raw = mne.io.read_raw_fif(EXAMPLE / f"{online}.fif", preload=True, verbose="error")
    end = feedback_periods(raw)[3][2]
    raw.crop(tmax=raw.times[end + 100]).save(tmp_path / f"{online}.fif", verbose="error")
    sidecar = json.loads((EXAMPLE / f"{online}.json").read_text())
    (tmp_path / f"{online}.json").write_text(json.dumps(sidecar | {"interrupted": True}))
    universum = tmp_path / "sub-01_ses-01_task-universum_run-01_raw.json"
    universum.write_text(json.dumps(json.loads(universum.read_text()) | {"interrupted": True}))
    assert main(["demo", "--replay", str(tmp_path), "--speed", "40"]) == 0
    out = capsys.readouterr().out
    # the interrupted universum run is not among the runs it says it trains on
    assert "universum_run-01_raw.fif" not in out.split("Replaying")[0], out
    assert f"Recordings: {tmp_path / 'sub-01_ses-01_task-calibration_run-01_raw.fif'}" in out
    assert f"Replaying {online}.fif (interrupted run: its recorded trials only) at x40" in out
    assert re.search(r"hit rate: \d/4 = ", out), out


@pytest.mark.lsl
def test_an_interrupted_demo_says_its_recordings_are_discarded(tmp_path):
    """Without ``--output`` the recordings lived in a temporary folder, gone once the demo
    ends: the message names no file of it (a real process and SIGINT)."""
    argv = [sys.executable, "-m", "paradigms", "demo", "--trials", "4", "--channels", "4"]
    # SIGINT with its default action, as from a terminal (a shell's background job ignores it)
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        proc = subprocess.Popen(argv, stderr=subprocess.PIPE, stdout=subprocess.DEVNULL, text=True)
    finally:
        signal.signal(signal.SIGINT, previous)
    with reaped(proc):
        seen = read_until(proc.stderr, r"calibration run 01: 8 trials -> \S+\n", 120)
        proc.send_signal(signal.SIGINT)
        assert proc.wait(60) == 130
    deadline = time.monotonic() + 10  # the pipe's reader reaches the last line
    while "demo: interrupted" not in "".join(seen) and time.monotonic() < deadline:
        time.sleep(0.01)
    err = "".join(seen)
    recorded = re.search(r"calibration run 01: 8 trials -> (\S+)\n", err)
    assert not Path(recorded[1]).parents[1].exists()  # the temporary folder
    assert (
        "The demo's recordings were temporary and are discarded (--output DIR keeps them).\n"
        "bci-universum demo: interrupted.\n"
    ) in err, err
    assert "recorded in" not in err and "Traceback" not in err


def test_demo_bad_input(tmp_path, capsys):
    assert main(["demo", "--replay", str(tmp_path / "absent")]) == 1
    assert "--replay: session folder" in capsys.readouterr().err
    assert main(["demo", "--replay", str(tmp_path)]) == 1
    assert "needs *_task-calibration_*" in capsys.readouterr().err
    notes = tmp_path / "notes.txt"
    notes.write_text("a file")
    assert main(["demo", "--replay", str(notes)]) == 1
    assert f"--replay: {notes} is a file, not a session folder" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("earlier", "replay"),
    [
        (["model.joblib", "model.json"], False),
        (["model.joblib"], True),
        (["sub-01_ses-01/sub-01_ses-01_task-calibration_run-01_raw.fif"], False),
    ],
)
def test_demo_refuses_an_output_of_an_earlier_demo(tmp_path, capsys, earlier, replay):
    """Before recording anything: the earlier model would block the training, the earlier
    runs would be trained on with the new ones."""
    output = tmp_path / "demo1"
    for name in earlier:
        (output / name).parent.mkdir(parents=True, exist_ok=True)
        (output / name).write_text("an earlier demo's")
    before = sorted(output.rglob("*"))
    argv = ["demo", "--output", str(output)]
    if replay:
        argv += ["--replay", str(Path(__file__).resolve().parents[2] / "recordings")]
    assert main(argv) == 1
    err = capsys.readouterr().err
    assert f"--output: {output} holds an earlier demo (" in err and "another --output" in err
    assert str(output / earlier[0].split("/")[0]) in err
    assert "Waiting for" not in err and "Traceback" not in err
    assert sorted(output.rglob("*")) == before
