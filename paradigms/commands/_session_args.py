"""Arguments shared by the session commands (``calibrate``, ``record-universum``, ``online``)."""

from __future__ import annotations

import argparse
from contextlib import contextmanager
from pathlib import Path

SIMULATE = "simulate"
MODEL_SUFFIXES = (".joblib", ".pkl", ".pickle")


def add_session_arguments(parser: argparse.ArgumentParser) -> None:
    """Session file, overrides, speed, display and the EEG source."""
    parser.add_argument(
        "config", nargs="?", type=Path, help="session TOML file (default: built-in defaults)"
    )
    parser.add_argument(
        "--set",
        dest="overrides",
        action="append",
        default=[],
        metavar="SECTION.KEY=VALUE",
        help="override a session-file setting, e.g. --set paradigm.trials_per_class=10",
    )
    parser.add_argument(
        "--speed", type=float, help="run the timeline this many times faster than real time"
    )
    parser.add_argument("--output", help="recordings folder (default: [session] output)")
    add_display_arguments(parser)
    parser.add_argument(
        "--source",
        help=f"'{SIMULATE}' for the simulated subject, or the name of the LSL EEG stream "
        "(default: [stream] name)",
    )
    parser.add_argument(
        "--sim-channels", type=int, default=16, help="electrodes of the simulated subject"
    )
    parser.add_argument("--sim-seed", type=int, default=0, help="seed of the simulated subject")
    parser.add_argument(
        "--lsl-mode",
        choices=("lab", "loopback"),
        help="liblsl configuration: 'lab' (the lab network) or 'loopback' (this machine only); "
        "default: [session] lsl_mode",
    )


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
        type=Path,
        metavar="DIR",
        help="save the first sight of each screen as a PNG in DIR (implies --display; "
        "offscreen when there is no screen)",
    )


def config_from_args(args):
    """The session config: file, then ``--set``, then ``--lsl-mode``/``--speed``/``--output``/
    ``--source``."""
    from paradigms.config import load_session_config

    if args.config is not None and args.config.suffix in MODEL_SUFFIXES:
        raise ValueError(f"{args.config} looks like a model file, not a session TOML file.")
    overrides = list(args.overrides)
    if args.lsl_mode is not None:
        overrides.append(f"session.lsl_mode={args.lsl_mode!r}")
    if args.speed is not None:
        overrides.append(f"paradigm.speed={args.speed!r}")
    if args.output is not None:
        overrides.append(f"session.output={str(args.output)!r}")
    if args.source not in (None, SIMULATE):
        overrides.append(f"stream.name={args.source!r}")
    return load_session_config(args.config, overrides)


@contextmanager
def open_session(args, config):
    """A :class:`~paradigms.session.Session` with the presenter and source the arguments ask."""
    from paradigms.display import make_presenter
    from paradigms.session import Session

    simulate = None
    if args.source == SIMULATE:
        simulate = {"n_channels": args.sim_channels, "seed": args.sim_seed}
    presenter = make_presenter(**presenter_arguments(args))
    try:
        with Session(config, presenter=presenter, simulate=simulate, progress=True) as session:
            yield session
    finally:
        presenter.close()


def presenter_arguments(args) -> dict:
    """:func:`~paradigms.display.make_presenter` arguments from ``--display``,
    ``--fullscreen`` and ``--screenshots`` (a window is drawn offscreen without a screen)."""
    import os

    if args.screenshots is None and not args.fullscreen and not args.display:
        return {"display": False}
    if not (os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY")):
        os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    return {"display": True, "fullscreen": args.fullscreen, "screenshots": args.screenshots}


def describe_run(results: dict) -> str:
    """One line about a finished (or interrupted) run."""
    n = len(results["trials"])
    return (
        f"{results['task']} run {results['run']:02d}: {n} trials, {results['ended']} "
        f"-> {results['fname']}"
    )
