"""benchmarks/report.py: the first paragraph and the file of every benchmark's results."""

import argparse
import subprocess

import numpy as np
import pytest
import sklearn

import benchmarks.report as report


@pytest.fixture
def parser():
    parser = argparse.ArgumentParser()
    parser.add_argument("--tool", type=str, required=True, metavar="PATH")
    parser.add_argument("--sizes", type=int, nargs="+", default=[1000, 2000])
    parser.add_argument("--seconds", type=float, default=30.0)
    parser.add_argument("--quick", action="store_true")
    report.add_output_option(parser, "example.md")
    return parser


@pytest.fixture(autouse=True)
def script(monkeypatch):
    monkeypatch.setattr(report.sys, "argv", ["/somewhere/benchmarks/bench_example.py"])
    monkeypatch.setattr(report, "_STARTING_ENVIRONMENT", {})


def test_command_line_gives_the_options_not_at_their_default(parser, monkeypatch):
    args = parser.parse_args(["--tool", "/home/me/bin/tool", "--output", "/tmp/x.md"])
    assert report.command_line(parser, args) == "python benchmarks/bench_example.py --tool PATH"
    monkeypatch.setenv("OMP_NUM_THREADS", "1")  # set during the run: not in the command
    monkeypatch.setattr(report, "_STARTING_ENVIRONMENT", {"OPENBLAS_NUM_THREADS": "1"})
    options = ["--tool", "t", "--sizes", "300", "600", "--seconds", "2.5", "--quick"]
    args = parser.parse_args(options)
    assert report.command_line(parser, args) == (
        "OPENBLAS_NUM_THREADS=1 python benchmarks/bench_example.py --tool PATH "
        "--sizes 300 600 --seconds 2.5 --quick"
    )


def test_the_output_option_defaults_to_the_results_folder(parser):
    args = parser.parse_args(["--tool", "t"])
    assert args.output == report.RESULTS / "example.md"
    assert report.RESULTS == report.ROOT / "benchmarks" / "results"


def test_load_average_is_the_range_of_its_samples(monkeypatch):
    loads = iter([1.25, 0.5, 3.0])
    monkeypatch.setattr(report.os, "getloadavg", lambda: (next(loads), 0.0, 0.0))
    load = report.LoadAverage()
    load.sample()
    assert str(load) == "0.5–1.2"
    load.sample()
    assert str(load) == "0.5–3.0"


def test_load_average_around_samples_after_each_item(monkeypatch):
    loads = iter([1.0, 2.0, 0.5, 9.0])
    monkeypatch.setattr(report.os, "getloadavg", lambda: (next(loads), 0.0, 0.0))
    load = report.LoadAverage()
    assert list(load.around("ab")) == ["a", "b"]
    assert load.samples == [1.0, 2.0, 0.5]


def test_run_line_names_commit_machine_libraries_load_and_note(parser, monkeypatch):
    monkeypatch.setattr(report.os, "getloadavg", lambda: (0.75, 0.0, 0.0))
    monkeypatch.setattr(report.os, "nice", lambda increment: 0)
    args = parser.parse_args(["--tool", "t"])
    line = report.run_line(
        parser,
        args,
        libraries=[np, sklearn],
        load=report.LoadAverage(),
        note="BLAS single-threaded",
    )
    git = subprocess.run(
        ["git", "-C", str(report.ROOT), "rev-parse", "--short", "HEAD"],
        capture_output=True,
        text=True,
    )
    commit = f"commit {git.stdout.strip()}" if git.returncode == 0 else "outside a git checkout"
    command = "`python benchmarks/bench_example.py --tool PATH`"
    assert line.startswith(f"{command} (one run at {commit}")
    assert f"; Python {report.platform.python_version()}, " in line
    libraries = f"numpy {np.__version__}, scikit-learn {sklearn.__version__}"
    assert f"{report.os.cpu_count()} cores; {libraries}; " in line
    assert line.endswith("; 1-minute load average 0.8–0.8; BLAS single-threaded).")
    assert "niceness" not in line


def test_run_line_leaves_out_what_was_not_given_and_names_a_niceness(parser, monkeypatch):
    monkeypatch.setattr(report.os, "nice", lambda increment: 10)
    line = report.run_line(parser, parser.parse_args(["--tool", "t"]))
    assert line.endswith(" cores; niceness 10).")
    assert "load" not in line and ";;" not in line


def test_write_results_makes_the_folder_and_ends_with_one_newline(tmp_path, capsys):
    path = tmp_path / "new" / "results.md"
    report.write_results(path, ["# Title", "", "text", "", ""])
    assert path.read_text(encoding="utf-8") == "# Title\n\ntext\n"
    assert capsys.readouterr().out == f"wrote {path}\n"
    report.write_results(path, ["replaced"])
    assert path.read_text(encoding="utf-8") == "replaced\n"


def test_commit_notes_changes_to_the_package_or_a_script_only(tmp_path, monkeypatch):
    monkeypatch.setattr(report, "ROOT", tmp_path)
    assert report._commit() == "outside a git checkout"
    for path in ("bci_universum/model.py", "benchmarks/bench_x.py", "benchmarks/results/x.md"):
        (tmp_path / path).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / path).write_text("1\n")
    git = ["git", "-C", str(tmp_path), "-c", "user.name=t", "-c", "user.email=t@t"]
    subprocess.run([*git, "init", "-q"], check=True)
    subprocess.run([*git, "add", "."], check=True)
    subprocess.run([*git, "commit", "-q", "-m", "start"], check=True)
    head = subprocess.run(
        [*git, "rev-parse", "--short", "HEAD"], capture_output=True, text=True, check=True
    ).stdout.strip()
    assert report._commit() == f"commit {head}"
    (tmp_path / "benchmarks/results/x.md").write_text("new results\n")
    assert report._commit() == f"commit {head}"
    for path in ("benchmarks/bench_x.py", "bci_universum/model.py"):
        subprocess.run([*git, "checkout", "-q", "--", "."], check=True)
        (tmp_path / path).write_text("2\n")
        assert report._commit() == f"commit {head} with local changes"
