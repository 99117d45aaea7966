"""``bci-universum calibrate``, ``record-universum`` and ``online`` through the CLI."""

import re

import pytest

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
        (["calibrate", "--simulate", "--stream", "amp"], "--simulate and --stream exclude"),
        (["record-universum", "--subject", "a_b"], r"\[session\] subject must be alphanumeric"),
    ],
)
def test_bad_settings_are_refused(argv, message, capsys):
    assert main(argv) == 1
    err = capsys.readouterr().err
    assert "error:" in err
    assert re.search(message, err), err


def test_bad_toml_names_the_file(tmp_path, capsys):
    bad = tmp_path / "session.toml"
    bad.write_text("[paradigm\nclasses = 1\n")
    assert main(["calibrate", str(bad)]) == 1
    assert f"Session file {bad} is not valid TOML" in capsys.readouterr().err


@pytest.mark.lsl
def test_calibrate_and_record_universum_commands(tmp_path, capsys):
    config = fast_config(tmp_path)
    common = ["--simulate", "--sim-channels", "4", "--speed", "10"]
    common += ["--set", f"stream.markers={config.stream.markers!r}", "--output", str(tmp_path)]
    common += ["--set", "paradigm.trials_per_class=1", "--set", "paradigm.universum_trials=2"]
    shots = tmp_path / "shots"
    assert main(["calibrate", *common, "--screenshots", str(shots)]) == 0
    assert main(["record-universum", *common, "--universum-mode", "interleaved"]) == 0
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
