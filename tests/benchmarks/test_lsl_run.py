"""benchmarks/lsl_run.py: one Ctrl-C during an LSL run of bench_acquisition.py or
bench_online.py ends it, outlet process and reader threads included."""

import os
import signal
import subprocess
import sys
from functools import partial

import pytest

from benchmarks.report import ROOT

#: script, its smallest run whose LSL part lasts a minute, and the line it prints as it starts
SCRIPTS = {
    "bench_acquisition": (["--seconds", "60", "--sweep-seconds", "1"], "latency: reading"),
    "bench_online": (
        ["--updates", "1", "--paced", "1", "--seconds", "60"],
        "end to end: decoding",
    ),
}


def _start(tmp_path, script):
    """The benchmark in a process group of its own, SIGINT at its default action (a shell
    starts background jobs with it ignored), once its LSL run reads the stream."""
    options, started = SCRIPTS[script]
    argv = [sys.executable, str(ROOT / "benchmarks" / f"{script}.py"), *options]
    proc = subprocess.Popen(
        [*argv, "--output", str(tmp_path / "results.md")],
        stdout=subprocess.PIPE,
        stderr=(tmp_path / "stderr.txt").open("w"),
        text=True,
        start_new_session=True,
        preexec_fn=partial(signal.signal, signal.SIGINT, signal.SIG_DFL),
    )
    for line in proc.stdout:  # bench_online prints its decoder timings first
        if line.startswith(started):
            return proc
    proc.wait(10)
    pytest.fail(f"{script} ended before its LSL run: {(tmp_path / 'stderr.txt').read_text()}")


def _group_alive(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    return True


@pytest.mark.lsl
@pytest.mark.parametrize(
    "script",
    ["bench_acquisition", pytest.param("bench_online", marks=pytest.mark.slow)],
)
@pytest.mark.parametrize("to_group", [True, False], ids=["terminal Ctrl-C", "kill -INT pid"])
def test_one_ctrl_c_ends_the_lsl_run(tmp_path, script, to_group):
    """SIGINT to the process group (a terminal's Ctrl-C) or to the benchmark alone: it ends
    within seconds, its outlet process stopped, and writes no results file."""
    proc = _start(tmp_path, script)
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
    assert not (tmp_path / "results.md").exists()
