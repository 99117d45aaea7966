"""The ``bci-universum`` command line.

Each module of :mod:`paradigms.commands` adds one subcommand (or group) through
``add_parser(subparsers)`` and sets ``func`` on its parser. Command modules import their heavy
dependencies inside the handler so that ``bci-universum --help`` stays fast.
"""

from __future__ import annotations

import argparse
import importlib
import logging
import pkgutil
import signal
import sys
from collections.abc import Iterator
from contextlib import contextmanager

from bci_universum import __version__

from . import commands


class CommandLineParser(argparse.ArgumentParser):
    """An argument parser whose unrecognised arguments are reported by the subcommand they
    were given to (argparse reports them as the root's), as are the errors of the
    subcommand's ``usage_check(args)`` (a default set on its parser): options that are fine
    alone but not together, or missing where one of several is needed, are usage errors."""

    def parse_args(self, args=None, namespace=None):
        args, extras = self.parse_known_args(args, namespace)
        if extras:
            self._leaf(args).error(f"unrecognized arguments: {' '.join(extras)}")
        usage_check = getattr(args, "usage_check", None)
        if usage_check is not None:
            try:
                usage_check(args)
            except ValueError as err:
                self._leaf(args).error(str(err))
        return args

    def _leaf(self, args) -> argparse.ArgumentParser:
        return {p.prog: p for p in leaf_parsers(self)}.get(getattr(args, "prog", None), self)


def build_parser() -> argparse.ArgumentParser:
    """Return the argument parser with every subcommand registered."""
    parser = CommandLineParser(
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
    for leaf in leaf_parsers(parser):
        # errors name the whole subcommand: "bci-universum stream record: error: ..."
        leaf.set_defaults(prog=leaf.prog)
    return parser


def leaf_parsers(parser: argparse.ArgumentParser) -> Iterator[argparse.ArgumentParser]:
    """The parsers of ``parser``'s subcommands that run something, nested groups walked."""
    groups = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    if not groups:
        yield parser
    for group in groups:
        for subparser in group.choices.values():
            yield from leaf_parsers(subparser)


INTERRUPTED = 130  # the shell's code for a process ended by SIGINT
_STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM)


def _interrupt(signum, frame):
    """The first Ctrl-C or SIGTERM ends the command; the later ones are ignored to the exit, so
    that they cut short neither what the command does to end nor the interpreter's exit (where a
    run or a recording is finishing, :func:`~acquisition.recorder.hold_interrupts` holds them
    with a message)."""
    for sig in _STOP_SIGNALS:
        signal.signal(sig, signal.SIG_IGN)
    raise KeyboardInterrupt(signal.Signals(signum).name)


@contextmanager
def _interrupts():
    """Ctrl-C and SIGTERM raise KeyboardInterrupt once (:func:`_interrupt`), so both end a
    command the same way; the handlers are restored unless one came (the process is ending)."""
    try:
        previous = {sig: signal.signal(sig, _interrupt) for sig in _STOP_SIGNALS}
    except ValueError:  # not the main thread: leave signals alone
        yield
        return
    try:
        yield
    finally:
        if signal.getsignal(signal.SIGINT) is _interrupt:
            for sig, handler in previous.items():
                signal.signal(sig, handler)


class _StderrHandler(logging.StreamHandler):
    """A handler writing to whatever ``sys.stderr`` is when a record comes (a redirect, a
    test's capture), not to the stream of the moment it was made; on a line of its own above
    a progress bar (tqdm clears the bar, writes, and draws it again)."""

    @property
    def stream(self):
        return sys.stderr

    @stream.setter
    def stream(self, value):
        pass

    def emit(self, record: logging.LogRecord) -> None:
        from tqdm import tqdm

        try:
            tqdm.write(self.format(record), file=sys.stderr)
        except Exception:
            self.handleError(record)


def configure_logging(level: int = logging.INFO) -> None:
    """Show the project's log messages (progress, warnings) on stderr, once per process."""
    for name in ("paradigms", "acquisition", "bci_universum"):
        log = logging.getLogger(name)
        if not any(isinstance(h, _StderrHandler) for h in log.handlers):
            handler = _StderrHandler()
            handler.setFormatter(logging.Formatter("%(message)s"))
            log.addHandler(handler)
            log.setLevel(level)


def main(argv: list[str] | None = None) -> int:
    """Run ``bci-universum``; return the exit code (130 after Ctrl-C or SIGTERM)."""
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command is None:
        parser.print_help()
        return 2
    configure_logging()
    try:
        with _interrupts():
            result = args.func(args)
    except (ValueError, OSError, RuntimeError) as err:  # OSError: files, disks, timeouts
        print(f"{args.prog}: error: {err}", file=sys.stderr)
        return 1
    except KeyboardInterrupt as err:
        results = getattr(err, "results", None)
        where = ""
        if results is not None:
            where = (
                f"; {len(results['trials'])} trial(s) recorded in {results['fname']} "
                "(sidecar marked interrupted)"
            )
        print(f"{args.prog}: interrupted{where}.", file=sys.stderr)
        return INTERRUPTED
    return int(result or 0)


if __name__ == "__main__":
    sys.exit(main())
