"""Arguments shared by the session commands (``calibrate``, ``record-universum``, ``online``)."""

from __future__ import annotations

import argparse
from contextlib import contextmanager
from pathlib import Path

from ..output import DEFAULT_OUTPUT, output_folder
from ._files import file_of_kind
from ._lsl_mode import add_lsl_mode
from ._types import non_negative_int, simulated_channels, source_id, stream_name


def add_session_arguments(parser: argparse.ArgumentParser) -> None:
    """Session file, overrides, subject, speed, output, display and the EEG source.

    Options that override a session-file key are named after it (``--output`` for
    ``[session] output``, ``--lsl-mode`` for ``[session] lsl_mode``, ...).
    """
    parser.add_argument(
        "config",
        nargs="?",
        type=file_of_kind("session"),
        help="session TOML file (default: the built-in defaults)",
    )
    parser.add_argument(
        "--set",
        dest="overrides",
        action="append",
        default=[],
        metavar="SECTION.KEY=VALUE",
        help="override a session-file setting, e.g. --set paradigm.trials_per_class=10",
    )
    parser.add_argument("--subject", help="BIDS subject label (default: [session] subject)")
    parser.add_argument("--session", help="BIDS session label (default: [session] session)")
    parser.add_argument(
        "--speed",
        type=float,
        help="run the timeline this many times faster than real time (default: [paradigm] speed)",
    )
    parser.add_argument(
        "--output",
        "-o",
        type=output_folder,
        metavar="DIR",
        help="folder of the recordings, one sub-<subject>_ses-<session> folder per session "
        f"(default: [session] output, else {DEFAULT_OUTPUT})",
    )
    add_display_arguments(parser)
    parser.add_argument(
        "--stream",
        type=stream_name,
        help="name of the LSL EEG stream to record (default: [stream] name)",
    )
    parser.add_argument(
        "--source-id",
        type=source_id,
        help="source_id of the LSL EEG stream to record, with --stream or alone for any name; "
        "tells apart streams sharing a name (default: [stream] source_id)",
    )
    parser.add_argument(
        "--simulate",
        action="store_true",
        help="record a simulated subject that obeys the cues instead of an LSL stream",
    )
    parser.add_argument(
        "--sim-channels",
        type=simulated_channels,
        default=16,
        help="with --simulate: electrodes of the simulated subject, 3-64 (default: 16)",
    )
    parser.add_argument(
        "--sim-seed",
        type=non_negative_int,
        default=0,
        help="with --simulate: seed of the simulated subject (default: 0)",
    )
    add_lsl_mode(parser, session_file=True)


def add_display_arguments(parser: argparse.ArgumentParser) -> None:
    """``--display``, ``--fullscreen`` and ``--screenshots`` (see :func:`presenter_arguments`)."""
    parser.add_argument(
        "--display", action="store_true", help="show the paradigm in a window (default: headless)"
    )
    parser.add_argument(
        "--fullscreen", action="store_true", help="show the window full screen (implies --display)"
    )
    parser.add_argument(
        "--screenshots",
        type=output_folder,
        metavar="DIR",
        help="save each screen once as a PNG in DIR, feedback screens once two trials are "
        "scored so the running score shows (implies --display; offscreen when there is no "
        "screen)",
    )


#: The session-file key each option overrides.
OPTION_KEYS = {
    "subject": "session.subject",
    "session": "session.session",
    "lsl_mode": "session.lsl_mode",
    "output": "session.output",
    "speed": "paradigm.speed",
    "stream": "stream.name",
    "source_id": "stream.source_id",
    "adapt_to_rest": "online.adapt_to_rest",
}


def config_from_args(args):
    """The session config: file, then ``--set``, then the options of :data:`OPTION_KEYS`
    (an error names them as typed: ``--speed 0.0``, not ``paradigm.speed=0.0``)."""
    from paradigms.config import load_session_config

    for option in ("stream", "source_id"):
        if args.simulate and getattr(args, option) is not None:
            raise ValueError(
                f"--simulate and {_flag(option)} exclude each other: the EEG comes from one."
            )
    options = []
    for option, key in OPTION_KEYS.items():
        value = getattr(args, option, None)
        flag = _flag(option)
        if isinstance(value, bool):  # a flag: TOML's spelling
            options.append((flag, f"{key}={str(value).lower()}"))
        elif value is not None:
            text = str(value) if isinstance(value, Path) else repr(value)
            options.append((f"{flag} {value}", f"{key}={text}"))
    return load_session_config(args.config, args.overrides, options)


def _flag(option: str) -> str:
    """The option as typed: ``source_id`` → ``--source-id``."""
    return "--" + option.replace("_", "-")


@contextmanager
def open_session(args, config):
    """A :class:`~paradigms.session.Session` with the presenter and source the arguments ask."""
    from paradigms.display import make_presenter
    from paradigms.session import Session

    simulate = None
    if args.simulate:
        simulate = {"n_channels": args.sim_channels, "seed": args.sim_seed}
    presenter = make_presenter(**presenter_arguments(args))
    try:
        with Session(config, presenter=presenter, simulate=simulate, progress=True) as session:
            yield session
    finally:
        presenter.close()


def presenter_arguments(args) -> dict:
    """:func:`~paradigms.display.make_presenter` arguments from ``--display``,
    ``--fullscreen`` and ``--screenshots``.

    Without a screen (no ``DISPLAY``, ``WAYLAND_DISPLAY`` or ``QT_QPA_PLATFORM``) screenshots
    alone are drawn offscreen, while a window asked for is refused: nobody would see it.
    """
    import os

    if args.screenshots is None and not args.fullscreen and not args.display:
        return {"display": False}
    screen = os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY")
    if not (screen or os.environ.get("QT_QPA_PLATFORM")):
        if args.display or args.fullscreen:
            flag = "--fullscreen" if args.fullscreen else "--display"
            raise RuntimeError(
                f"{flag}: no screen (DISPLAY and WAYLAND_DISPLAY are unset); run it on a "
                "desktop, or set QT_QPA_PLATFORM=offscreen to draw the window unseen."
            )
        os.environ["QT_QPA_PLATFORM"] = "offscreen"
    return {"display": True, "fullscreen": args.fullscreen, "screenshots": args.screenshots}


def describe_run(results: dict) -> str:
    """One line about a finished (or interrupted) run."""
    n = len(results["trials"])
    return (
        f"{results['task']} run {results['run']:02d}: {n} trials, {results['ended']} "
        f"-> {results['fname']}"
    )
