"""benchmarks/bench_acquisition.py: one Ctrl-C during the latency run ends it, outlet process
and reader threads included."""

import os
import signal
import subprocess
import sys
from functools import partial

import pytest

from benchmarks.report import ROOT

SCRIPT = ROOT / "benchmarks" / "bench_acquisition.py"


def _start(tmp_path):
    """The benchmark in a process group of its own, SIGINT at its default action (a shell
    starts background jobs with it ignored), once its latency run reads the stream."""
    argv = [sys.executable, str(SCRIPT), "--seconds", "60", "--sweep-seconds", "1"]
    proc = subprocess.Popen(
        [*argv, "--output", str(tmp_path / "acquisition.md")],
        stdout=subprocess.PIPE,
        stderr=(tmp_path / "stderr.txt").open("w"),
        text=True,
        start_new_session=True,
        preexec_fn=partial(signal.signal, signal.SIGINT, signal.SIG_DFL),
    )
    line = proc.stdout.readline()
    assert line.startswith("latency: reading"), line
    return proc


def _group_alive(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    return True


@pytest.mark.lsl
@pytest.mark.parametrize("to_group", [True, False], ids=["terminal Ctrl-C", "kill -INT pid"])
def test_one_ctrl_c_ends_the_latency_run(tmp_path, to_group):
    """SIGINT to the process group (a terminal's Ctrl-C) or to the benchmark alone: it ends
    within seconds, its outlet process stopped, and writes no results file."""
    proc = _start(tmp_path)
    try:
        if to_group:
            os.killpg(proc.pid, signal.SIGINT)
        else:
            proc.send_signal(signal.SIGINT)
        proc.wait(20)
        still_running = _group_alive(proc.pid)  # the outlet process, a child in its group
    finally:
        if _group_alive(proc.pid):
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(10)
    err = (tmp_path / "stderr.txt").read_text()
    assert proc.returncode == -signal.SIGINT, err
    assert "KeyboardInterrupt" in err, err
    assert not still_running, "the outlet process outlived the benchmark"
    assert not (tmp_path / "acquisition.md").exists()
