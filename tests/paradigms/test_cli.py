import subprocess
import sys

from paradigms.cli import build_parser, main


def test_help_lists_subcommands(capsys):
    assert main([]) == 2
    out = capsys.readouterr().out
    assert "usage: bci-universum" in out


def test_every_subcommand_has_a_handler():
    parser = build_parser()
    sub = next(a for a in parser._actions if a.dest == "command")
    assert sub.choices, "no subcommands registered"
    for name, subparser in sub.choices.items():
        assert subparser.get_default("func") is not None or subparser._subparsers, name


def test_module_entry_point_runs():
    proc = subprocess.run(
        [sys.executable, "-m", "paradigms", "--version"], capture_output=True, text=True
    )
    assert proc.returncode == 0
    assert "bci-universum" in proc.stdout
