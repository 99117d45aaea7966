"""``bci-universum spikes``: stream simulated spike counts over loopback LSL."""

import re
import signal
import subprocess
import sys
import threading
import time

import pytest

# The decode thread and the stream command import these lazily; importing them here first
# keeps the two threads from importing the same modules concurrently.
import acquisition.spike_source  # noqa: F401
import bci_universum.classifiers
import bci_universum.features.spike_kernels
import bci_universum.simulation.spikes  # noqa: F401
from paradigms.cli import build_parser, main
from tests.acquisition.lsl_helpers import reaped

from .session_helpers import read_until

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


@pytest.mark.slow(seconds=25)
def test_decode_follows_a_stream_trial_by_trial(capsys):
    name = "spikes-cli-decode"
    result = {}
    decode = threading.Thread(
        target=lambda: result.update(
            code=main(
                [
                    "spikes",
                    "decode",
                    "--lsl-mode",
                    "loopback",
                    "--stream",
                    name,
                    "--trials",
                    "12",
                    "--timeout",
                    "30",
                ]
            )
        )
    )
    decode.start()  # fits first, then waits for the stream
    # 240 trials paced 10x take 19 s, from when the decoder's two inlets have connected (its
    # fit compiles the spike kernels when the numba cache is cold)
    argv = ["spikes", "stream", "--lsl-mode", "loopback", "--speed", "10", "--name", name]
    assert main([*argv, "--wait-for", "both", "--timeout", "300"]) == 0
    decode.join(60.0)
    assert result["code"] == 0
    out = capsys.readouterr().out
    lines = re.findall(r"trial (\d+): cue ([\d.]+), decoded ([\d.]+)", out)
    assert [int(n) for n, _, _ in lines] == list(range(1, 13))
    # chance is 1/8; measured 11-12 of 12
    assert sum(cue == decoded for _, cue, decoded in lines) >= 8
    assert "Decoded 12 trials" in out


def _spikes_process(*argv: str, **pipes) -> subprocess.Popen:
    """``bci-universum spikes ...`` as a process whose SIGINT has its default action, as from a
    terminal (a shell's background job ignores it)."""
    command = [sys.executable, "-m", "paradigms", "spikes", *argv, "--lsl-mode", "loopback"]
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        return subprocess.Popen(command, text=True, **pipes)
    finally:
        signal.signal(signal.SIGINT, previous)


@pytest.mark.slow(seconds=30)
def test_an_interrupted_decode_says_what_it_decoded_and_exits_130():
    """Ctrl-C before ``--trials`` are decoded interrupts the command (130, not 0 as if it had
    done its work, nor 1 as if its input were bad), after its count of decoded trials."""
    name = "spikes-cli-interrupt"
    stream = _spikes_process(
        "stream", "--name", name, "--loop", "--speed", "10", stdout=subprocess.DEVNULL
    )
    with reaped(stream):
        decode = _spikes_process(
            "decode",
            "--stream",
            name,
            "--timeout",
            "60",
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        with reaped(decode):
            seen = read_until(decode.stdout, r"trial 2: cue ", 120)
            decode.send_signal(signal.SIGINT)
            assert decode.wait(60) == 130
            err = decode.stderr.read()
        deadline = time.monotonic() + 10  # the pipe's reader reaches the last line
        while "Decoded" not in "".join(seen) and time.monotonic() < deadline:
            time.sleep(0.01)
        out = "".join(seen)
        n_printed = len(re.findall(r"trial \d+: cue ", out))
        assert re.search(rf"Decoded {n_printed} trials, \d+ equal to their cue\.\n", out), out
        assert "bci-universum spikes decode: interrupted." in err and "Traceback" not in err
        stream.send_signal(signal.SIGINT)
        assert stream.wait(60) == 0
