"""The ``bci-universum`` command line.

Each module of :mod:`paradigms.commands` adds one subcommand (or group) through
``add_parser(subparsers)`` and sets ``func`` on its parser. Command modules import their heavy
dependencies inside the handler so that ``bci-universum --help`` stays fast.
"""

from __future__ import annotations

import argparse
import importlib
import pkgutil
import sys

from bci_universum import __version__

from . import commands


def build_parser() -> argparse.ArgumentParser:
    """Return the argument parser with every subcommand registered."""
    parser = argparse.ArgumentParser(
        prog="bci-universum",
        description="Real-time BCIs with universum learning.",
    )
    parser.add_argument("--version", action="version", version=f"bci-universum {__version__}")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    for info in sorted(pkgutil.iter_modules(commands.__path__), key=lambda m: m.name):
        if info.name.startswith("_"):
            continue
        module = importlib.import_module(f"{commands.__name__}.{info.name}")
        module.add_parser(subparsers)
    return parser


def main(argv: list[str] | None = None) -> int:
    """Run ``bci-universum``; return the exit code."""
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command is None:
        parser.print_help()
        return 2
    try:
        result = args.func(args)
    except (ValueError, FileNotFoundError, RuntimeError, TimeoutError) as err:
        print(f"bci-universum {args.command}: error: {err}", file=sys.stderr)
        return 1
    return int(result or 0)


if __name__ == "__main__":
    sys.exit(main())
