"""The command line as a whole: every parser described and helped, one naming scheme, errors
naming the whole subcommand, one LSL mode default, file-kind checks, protected examples."""

import argparse
import logging
import os
import re
import subprocess
import sys
from pathlib import Path

import joblib
import pytest
from tqdm import tqdm

from acquisition.lsl_config import DEFAULT_LSL_MODE, LSL_MODES
from bci_universum.datasets import EXAMPLE_RECORDINGS
from paradigms.cli import build_parser, configure_logging, leaf_parsers, main
from paradigms.commands._session_args import config_from_args
from paradigms.config import SessionConfig, load_session_config
from paradigms.output import DEFAULT_OUTPUT, output_file, output_folder, output_path

ROOT = Path(__file__).resolve().parents[2]
KEBAB = re.compile(r"^--[a-z0-9]+(-[a-z0-9]+)*$|^-[a-zA-Z]$")
# a concept has one option name: these spellings of it are refused
SYNONYMS = {
    "--output": ("--folder", "--dir", "--out", "--outdir", "--output-dir", "--output-folder"),
    "--overwrite": ("--force", "--replace", "--clobber"),
    "--lsl-mode": ("--lsl", "--lsl-config", "--loopback", "--network"),
    "--subject": ("--sub", "--subj", "--subjects"),
    "--session": ("--ses", "--sessions"),
    "--n-jobs": ("--jobs", "--njobs", "-j"),
    "--seed": ("--random-state", "--rng"),
    "--stream": ("--stream-name", "--source-name", "--eeg"),
    "--pipeline": ("--pipe", "--decoder", "--classifier"),
    "--verbose": ("--debug", "--log-level", "--loglevel"),
}
# commands that never touch LSL; every other one takes --lsl-mode
NO_LSL = {
    "bci-universum digits",
    "bci-universum evaluate",
    "bci-universum train",
    "bci-universum stream recover",
}
SESSION_COMMANDS = ("calibrate", "record-universum", "online")
# what each command needs to parse at all
REQUIRED = {
    "bci-universum evaluate": ["e.toml"],
    "bci-universum online": ["m.joblib"],
    "bci-universum stream record": ["--output", "out"],
    "bci-universum stream recover": ["out"],
    "bci-universum stream replay": ["rec_raw.fif"],
    "bci-universum train": ["rec_raw.fif", "-o", "m.joblib"],
}


def _all_parsers(parser=None):
    parser = parser or build_parser()
    yield parser
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for sub in action.choices.values():
                yield from _all_parsers(sub)


def _options(parser):
    return [
        a
        for a in parser._actions
        if not isinstance(a, (argparse._HelpAction, argparse._SubParsersAction))
    ]


def _leaves():
    return {p.prog: p for p in leaf_parsers(build_parser())}


def test_help_lists_subcommands(capsys):
    assert main([]) == 2
    out = capsys.readouterr().out
    assert "usage: bci-universum" in out


def test_every_subcommand_has_a_handler():
    leaves = _leaves()
    assert len(leaves) == 15  # a new command: add it to the lists of this file
    for prog, parser in leaves.items():
        assert callable(parser.get_default("func")), prog
        assert parser.get_default("prog") == prog


def test_module_entry_point_runs():
    proc = subprocess.run(
        [sys.executable, "-m", "paradigms", "--version"], capture_output=True, text=True
    )
    assert proc.returncode == 0
    assert "bci-universum" in proc.stdout


HEAVY = ("sklearn", "numba", "mne", "pyqtgraph", "PyQt5", "PyQt6", "PySide6", "matplotlib")


@pytest.mark.lsl
def test_help_and_stream_list_import_nothing_heavy():
    """Every command starts by building the whole parser: a command module importing
    scikit-learn, numba, MNE or Qt at its top slows every command by seconds."""
    script = (
        "import sys\n"
        "from paradigms.cli import build_parser, main\n"
        "build_parser().format_help()\n"
        "assert main(['stream', 'list', '--timeout', '0.1']) == 0\n"
        f"print(sorted(m for m in {HEAVY!r} if m in sys.modules))\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, timeout=300
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines()[-1] == "[]"


def test_every_parser_is_described_and_every_argument_helped():
    for parser in _all_parsers():
        assert parser.description and len(parser.description) > 20, parser.prog
        for action in _options(parser):
            name = "/".join(action.option_strings) or action.dest
            assert action.help and len(action.help) > 8, f"{parser.prog} {name}: no help"
            if action.default not in (None, False, [], argparse.SUPPRESS) and not isinstance(
                action.default, bool
            ):
                # a default the user cannot see in --help is a surprise
                assert "default: " in action.help, f"{parser.prog} {name}"


def test_simulated_channel_options_say_their_range():
    """Every option taking a simulated subject's electrodes names the range its type accepts."""
    from bci_universum.simulation.eeg import CHANNEL_PRIORITY
    from paradigms.commands._types import simulated_channels

    options = [
        (parser.prog, action)
        for parser in leaf_parsers(build_parser())
        for action in parser._actions
        if action.type is simulated_channels
    ]
    assert len(options) >= 3  # calibrate & co., demo, stream simulate
    for prog, action in options:
        assert f"3-{len(CHANNEL_PRIORITY)} (default: " in action.help, (prog, action.help)


def test_option_names_follow_one_scheme():
    banned = {s: name for name, spellings in SYNONYMS.items() for s in spellings}
    seen: dict[str, tuple] = {}
    for parser in _all_parsers():
        for action in _options(parser):
            for option in action.option_strings:
                assert KEBAB.match(option), f"{parser.prog}: {option} is not kebab-case"
                assert option not in banned, f"{parser.prog}: {option}; use {banned[option]}"
            if not action.option_strings:
                continue
            long = action.option_strings[0]
            kind = (action.dest, getattr(action.type, "__name__", action.type), action.nargs)
            if long in ("--subject", "--session", "--task", "--run"):
                kind = (action.dest,)  # a label to write, or labels to select (nargs +)
            if action.dest in ("output", "screenshots", "screenshot"):
                # a file or a folder (a folder is never an existing file)
                writes = (output_path, output_folder, output_file)
                assert action.type in writes, f"{parser.prog} {long} may write anywhere"
                kind = (action.dest, "output", action.nargs)
            # the same option means the same thing: same destination, type and arity
            assert seen.setdefault(long, kind) == kind, f"{parser.prog} {long}: {kind}"
    # the concepts the scheme names are there under their one name
    assert {"--output", "--overwrite", "--lsl-mode", "--subject", "--stream"} <= set(seen)


@pytest.mark.parametrize("prog", sorted(_leaves()))
def test_lsl_mode_on_every_command_touching_lsl(prog):
    action = next((a for a in _leaves()[prog]._actions if a.dest == "lsl_mode"), None)
    if prog in NO_LSL:
        assert action is None
        return
    assert action is not None, f"{prog} touches LSL without --lsl-mode"
    assert tuple(action.choices) == LSL_MODES
    if prog.split()[-1] in SESSION_COMMANDS:
        assert action.default is None  # the session file's [session] lsl_mode decides
        assert f"[session] lsl_mode, else {DEFAULT_LSL_MODE}" in action.help
    else:
        assert action.default == DEFAULT_LSL_MODE


def test_one_lsl_mode_default_for_option_file_and_api(tmp_path):
    import inspect

    from acquisition.lsl_config import configure_lsl

    assert DEFAULT_LSL_MODE == "loopback"
    assert SessionConfig().session.lsl_mode == DEFAULT_LSL_MODE
    assert inspect.signature(configure_lsl).parameters["mode"].default == DEFAULT_LSL_MODE
    parser = build_parser()
    lab = tmp_path / "lab.toml"
    lab.write_text('[session]\nlsl_mode = "lab"\n')
    for argv, mode in [
        (["calibrate"], DEFAULT_LSL_MODE),
        (["calibrate", "--lsl-mode", "lab"], "lab"),
        (["online", "m.joblib", str(lab)], "lab"),  # the file's key
        (["record-universum", str(lab), "--lsl-mode", "loopback"], "loopback"),  # option wins
    ]:
        assert config_from_args(parser.parse_args(argv)).session.lsl_mode == mode, argv
    with pytest.raises(ValueError, match=r"\[session\] lsl_mode must be one of"):
        load_session_config(None, ["session.lsl_mode='wan'"])


def test_stream_list_says_its_default_mode():
    """A fresh process, nothing configured: the default is the documented one."""
    proc = subprocess.run(
        [sys.executable, "-m", "paradigms", "stream", "list", "--timeout", "0.2"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    assert f"within 0.2 s in {DEFAULT_LSL_MODE} mode" in proc.stdout.splitlines()[0]


@pytest.mark.parametrize("prog", sorted(_leaves()))
def test_usage_errors_name_the_whole_subcommand(prog, capsys):
    argv = prog.split()[1:]
    with pytest.raises(SystemExit) as caught:
        build_parser().parse_args([*argv, *REQUIRED.get(prog, []), "--no-such-option"])
    assert caught.value.code == 2
    assert f"{prog}: error: unrecognized arguments: --no-such-option" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["stream", "recover", "{x}"], "Nothing recoverable"),
        (["stream", "replay", "{x}/missing_raw.fif"], "missing_raw.fif"),
        (["spikes", "stream", "--source", "m1", "--m1-file", "{x}/no.mat"], "M1 recording not"),
    ],
)
def test_command_errors_name_the_whole_subcommand(tmp_path, capsys, argv, message):
    argv = [a.format(x=tmp_path) for a in argv]
    assert main(argv) == 1
    err = capsys.readouterr().err
    assert err.startswith(f"bci-universum {argv[0]} {argv[1]}: error: "), err
    assert message in err


def test_pipelines_go_by_registry_names(tmp_path, capsys):
    argv = ["train", str(tmp_path), "--pipeline", "ts_nope", "-o", str(tmp_path / "m.joblib")]
    assert main(argv) == 1
    err = capsys.readouterr().err
    assert "bci-universum train: error: --pipeline: Unknown pipeline 'ts_nope'" in err
    assert "'ts_lr'" in err and not any(tmp_path.iterdir())


def test_nested_error_in_a_real_process(tmp_path):
    """No data stream named is a usage error (exit 2), as command_line.rst shows it."""
    proc = subprocess.run(
        [sys.executable, "-m", "paradigms", "stream", "record", "--output", str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 2
    assert proc.stderr.startswith("usage: bci-universum stream record ")
    assert proc.stderr.splitlines()[-1] == (
        "bci-universum stream record: error: Name the data stream with --stream, --source-id "
        "and/or --type."
    )
    assert "Traceback" not in proc.stderr and not any(tmp_path.iterdir())


@pytest.fixture
def files(tmp_path):
    """A session file, a model (joblib pickle) also under a neutral name, a recording name."""
    (tmp_path / "session.toml").write_text('[paradigm]\nclasses = ["left", "right"]\n')
    joblib.dump({"pipeline": None}, tmp_path / "model.joblib")
    (tmp_path / "model.bin").write_bytes((tmp_path / "model.joblib").read_bytes())
    return tmp_path


MODEL_IS_NOT = "is a model file, not"
TOML_IS_NOT = "is a TOML file, not"


@pytest.mark.parametrize(
    ("argv", "argument", "message"),
    [
        (["online", "S", "M"], "model", f"S {TOML_IS_NOT} a model file (the model comes first"),
        (["calibrate", "M"], "config", f"M {MODEL_IS_NOT} a session file (TOML)"),
        (["record-universum", "B"], "config", f"B {MODEL_IS_NOT} a session file"),
        (["online", "M", "M"], "config", f"M {MODEL_IS_NOT} a session file"),
        (["train", "D", "--config", "B", "-o", "m"], "--config", f"B {MODEL_IS_NOT} a session"),
        (["train", "D", "--prior", "S", "-o", "m"], "--prior", f"S {TOML_IS_NOT} a model file"),
        (["train", "M", "-o", "m"], "SESSION_DIR_OR_FILE", f"M {MODEL_IS_NOT} a recording"),
        (["evaluate", "M"], "config", f"M {MODEL_IS_NOT} an evaluation file (TOML)"),
        (["stream", "replay", "S"], "file", f"S {TOML_IS_NOT} a recording"),
    ],
)
def test_a_file_of_the_wrong_kind_is_named(files, capsys, argv, argument, message):
    """S: a session file, M: a model, B: a model named model.bin, D: a folder."""
    names = {"S": "session.toml", "M": "model.joblib", "B": "model.bin", "D": "", "m": "m.joblib"}
    argv = [str(files / names[a]) if a in names else a for a in argv]
    message = " ".join(str(files / names[w]) if w in names else w for w in message.split(" "))
    prog = " ".join(["bci-universum", *argv[: 2 if argv[0] == "stream" else 1]])
    with pytest.raises(SystemExit) as caught:
        main(argv)
    assert caught.value.code == 2
    err = capsys.readouterr().err
    assert f"{prog}: error: argument {argument}: {message}" in err, err


def test_files_of_the_right_kind_pass(files):
    parser = build_parser()
    args = parser.parse_args(["online", f"{files}/model.joblib", f"{files}/session.toml"])
    assert (args.model.name, args.config.name) == ("model.joblib", "session.toml")
    argv = ["train", str(files), "rec_raw.fif", "--prior", f"{files}/model.bin", "-o", "m.joblib"]
    args = parser.parse_args(argv)
    assert [p.name for p in args.recordings] == [files.name, "rec_raw.fif"]


@pytest.mark.parametrize(
    "argv",
    [
        ["calibrate", "-o", "{e}"],
        ["record-universum", "--output", "{e}/sub-01_ses-01"],
        ["online", "m.joblib", "--screenshots", "{e}/shots"],
        ["demo", "--output", "{e}"],
        ["digits", "--output", "{e}/table.md"],
        ["evaluate", "e.toml", "--output", "{e}/results"],
        ["train", "x", "-o", "{e}/sub-01_ses-01/model.joblib"],
        ["stream", "record", "--stream", "s", "--output", "{e}"],
        ["view", "--screenshot", "{e}/scope.png"],
    ],
)
def test_no_option_writes_into_the_shipped_examples(argv, capsys):
    argv = [a.format(e=EXAMPLE_RECORDINGS) for a in argv]
    with pytest.raises(SystemExit):
        build_parser().parse_args(argv)
    assert "is inside the example recordings shipped with bci_universum" in (
        capsys.readouterr().err
    )


@pytest.mark.parametrize(
    ("argv", "option"),
    [
        (["calibrate", "--simulate", "-o", "{ro}"], "--output/-o"),
        (["record-universum", "--output", "{ro}/new"], "--output/-o"),
        (["online", "m.joblib", "--screenshots", "{ro}/shots"], "--screenshots"),
        (["demo", "--output", "{ro}"], "--output/-o"),
        (["evaluate", "e.toml", "--output", "{ro}/results"], "--output/-o"),
        (["stream", "record", "--stream", "s", "--output", "{ro}"], "--output/-o"),
        (["train", "x_raw.fif", "-o", "{ro}/model.joblib"], "--output"),
        (["digits", "--output", "{ro}/table.md"], "--output/-o"),
        (["view", "x", "--duration", "1", "--screenshot", "{ro}/s.png"], "--screenshot"),
    ],
)
def test_a_read_only_output_is_refused_before_any_work(
    argv, option, read_only_folder, tmp_path, monkeypatch, capsys
):
    """The operating system's refusal to write there is named with the option and the folder,
    before a stream is waited for or a model trained (``x_raw.fif`` need not even exist)."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "m.joblib").touch()
    (tmp_path / "e.toml").touch()
    (tmp_path / "x_raw.fif").touch()
    argv = [a.format(ro=read_only_folder) for a in argv]
    try:
        code = main(argv)
    except SystemExit as exit_:
        code = exit_.code
    err = capsys.readouterr().err
    assert code in (1, 2), err
    assert re.search(rf"{option}:.* cannot write into {read_only_folder}\b", err), err
    assert "Traceback" not in err and "Waiting" not in err
    assert not list(tmp_path.glob("*.tmp")) and not os.listdir(read_only_folder)


def test_no_session_file_writes_into_the_shipped_examples(tmp_path):
    from acquisition import Recorder, StreamReceiver

    with pytest.raises(ValueError, match=r"--set session.output=.*\[session\] output: .*inside"):
        load_session_config(None, [f"session.output={str(EXAMPLE_RECORDINGS)!r}"])
    fname = tmp_path / "session.toml"
    fname.write_text(f"[session]\noutput = {str(EXAMPLE_RECORDINGS / 'new')!r}\n")
    with pytest.raises(ValueError, match=r"session\.toml: \[session\] output: .*new is inside"):
        load_session_config(fname)
    with pytest.raises(ValueError, match=r"Recorder folder: .* is inside the example"):
        Recorder(StreamReceiver("never-resolved"), None, EXAMPLE_RECORDINGS / "sub-01_ses-01")


def test_default_output_is_the_users_folder(monkeypatch, tmp_path):
    monkeypatch.setenv("HOME", str(tmp_path))
    assert DEFAULT_OUTPUT.startswith("~")
    assert SessionConfig().session.output == str(tmp_path / DEFAULT_OUTPUT[2:])


@pytest.mark.lsl
@pytest.mark.slow
def test_calibrate_with_default_settings_from_a_checkout_writes_to_home(tmp_path):
    """Run from the checkout's root like a new user: the run lands in the user's folder, and
    the shipped example recordings are untouched."""
    before = sorted(p.relative_to(ROOT) for p in EXAMPLE_RECORDINGS.rglob("*"))
    argv = [sys.executable, "-m", "paradigms", "calibrate", "--simulate", "--sim-channels", "4"]
    argv += ["--speed", "20", "--quality-seconds", "0", "--set", "paradigm.trials_per_class=1"]
    argv += ["--set", "timeline.pause=[0.5, 0.5]"]
    env = {**os.environ, "HOME": str(tmp_path), "PYTHONPATH": str(ROOT)}
    proc = subprocess.run(argv, cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    session = tmp_path / "bci_universum_recordings" / "sub-01_ses-01"
    assert f"-> {session}/sub-01_ses-01_task-calibration_run-01_raw.fif" in proc.stdout
    assert (session / "sub-01_ses-01_task-calibration_run-01_raw.fif").is_file()
    assert sorted(p.relative_to(ROOT) for p in EXAMPLE_RECORDINGS.rglob("*")) == before


def test_a_log_message_takes_its_own_line_above_a_progress_bar(capsys):
    """A warning during a run (the online loop falling behind) is not glued to the bar."""
    configure_logging()
    with tqdm(total=3, desc="online run-01", file=sys.stderr) as bar:
        bar.update()
        logging.getLogger("paradigms.session").warning("the loop falls behind")
        bar.update()
    err = capsys.readouterr().err
    assert re.search(r"(^|[\r\n])the loop falls behind\n", err), repr(err)
    assert "2/3" in err.split("the loop falls behind")[1]  # the bar goes on below it
