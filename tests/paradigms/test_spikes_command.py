"""``bci-universum spikes``: stream simulated spike counts over loopback LSL."""

import pytest

from paradigms.cli import build_parser, main

pytestmark = pytest.mark.lsl


def test_spikes_group_registers_stream_and_decode():
    parser = build_parser()
    args = parser.parse_args(["spikes", "stream", "--source", "m1", "--speed", "4"])
    assert args.func.__name__ == "run_stream" and args.speed == 4.0 and args.source == "m1"
    args = parser.parse_args(["spikes", "decode", "--kernel", "rbf"])
    assert args.func.__name__ == "run_decode" and args.trials == 24


def test_stream_pushes_every_trial_and_its_markers(capsys):
    # 240 simulated trials x 10 bins of 80 ms, paced 100x (2400 bins in about 2 s)
    argv = ["spikes", "stream", "--lsl-mode", "loopback", "--speed", "100", "--chunk-size", "5"]
    assert main([*argv, "--name", "spikes-cli-test"]) == 0
    out = capsys.readouterr().out
    assert "240 trials of 20 neurons x 10 bins of 80 ms (sim)" in out
    assert "Pushed 2400 bins and 480 markers." in out


def test_bad_arguments_are_reported(capsys):
    assert main(["spikes", "stream", "--duration", "0"]) == 1
    assert "--duration must be positive" in capsys.readouterr().err
    assert main(["spikes", "decode", "--trials", "0"]) == 1
    assert "--trials must be at least 1" in capsys.readouterr().err
