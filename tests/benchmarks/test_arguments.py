"""Benchmark scripts refuse a bad option when the command line is read, naming the option,
with the command line's own argument types (``paradigms.commands._types``)."""

import os
import subprocess
import sys

import pytest

from benchmarks.report import ROOT


@pytest.mark.parametrize(
    ("script", "argv", "message"),
    [
        ("bench_solver_scaling.py", ["--sizes", "0"], "--sizes: expected an integer ≥ 4, got 0"),
        ("bench_solver_scaling.py", ["--repeats", "0"], "--repeats: expected a positive integer"),
        ("bench_warm_start.py", ["--sizes", "8", "3"], "--sizes: expected an integer ≥ 4, got 3"),
        ("bench_acquisition.py", ["--seconds", "-1"], "--seconds: expected a positive number"),
        ("bench_evaluation.py", ["--folds", "1"], "--folds: expected an integer ≥ 2, got 1"),
        (
            "bench_biased_transfer.py",
            ["--prior-weight", "-1"],
            "--prior-weight: expected a non-negative number, got -1",
        ),
    ],
)
def test_a_bad_option_is_refused_before_the_run(tmp_path, script, argv, message):
    output = tmp_path / "results.md"
    proc = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / script), *argv, "--output", str(output)],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    assert proc.returncode == 2, proc.stderr
    assert f"error: argument {message}" in proc.stderr
    assert "Traceback" not in proc.stderr
    assert not output.exists()
