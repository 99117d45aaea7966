"""``bci-universum view``: a scope of an LSL stream or a recording, or a headless
signal-quality check."""

from __future__ import annotations

import argparse
import sys
from contextlib import nullcontext
from pathlib import Path

from ..output import output_file
from ._lsl_mode import add_lsl_mode
from ._types import positive_float, source_id, stream_name


def add_parser(subparsers) -> None:
    parser = subparsers.add_parser(
        "view",
        help="look at an LSL stream or a recording: traces, spectrum, channel quality (or "
        "--check headless)",
        description=(
            "Show the traces of an LSL stream (the first EEG stream found when none is named) "
            "with a band-pass and notch toggle (keys f, n), per-channel scales (+, -, a), the "
            "spectrum of the last 2 s and each channel's quality verdict. Given a recording "
            "file instead, replay it in a loop at real time as an LSL stream and show that. "
            "With --check, assess the quality of --seconds of data without a window, name the "
            "bad channels and exit 1 when there are any."
        ),
    )
    parser.add_argument(
        "stream",
        nargs="?",
        type=stream_name,
        help="name of the LSL stream, or a recording file (FIF, EDF/BDF, GDF, BrainVision, "
        "EEGLAB, XDF) to replay into the scope (default: pick a stream)",
    )
    parser.add_argument(
        "--source-id", type=source_id, help="source_id of the stream (with or without a name)"
    )
    parser.add_argument(
        "--check", action="store_true", help="headless quality check instead of the scope"
    )
    parser.add_argument(
        "--seconds",
        type=positive_float,
        default=5.0,
        help="seconds of data the quality covers (default: 5)",
    )
    parser.add_argument(
        "--window", type=positive_float, default=10.0, help="seconds of traces (default: 10)"
    )
    parser.add_argument(
        "--band",
        type=positive_float,
        nargs=2,
        default=(1.0, 40.0),
        metavar=("LOW", "HIGH"),
        help="band-pass of the filter toggle in Hz (default: 1 40)",
    )
    parser.add_argument(
        "--line-freq",
        type=positive_float,
        default=50.0,
        help="mains frequency in Hz: the notch and the line-noise check (default: 50)",
    )
    parser.add_argument(
        "--filtered", action="store_true", help="start with the band-pass and notch on"
    )
    parser.add_argument(
        "--duration", type=positive_float, help="close the scope after this many seconds"
    )
    parser.add_argument(
        "--screenshot",
        type=output_file,
        metavar="FILE",
        help="with --duration: save the window as this PNG at the end",
    )
    parser.add_argument(
        "--timeout",
        type=positive_float,
        default=5.0,
        help="seconds to find the stream (default: 5)",
    )
    add_lsl_mode(parser)
    parser.set_defaults(func=run, usage_check=_check)


def _check(args: argparse.Namespace) -> None:
    if args.screenshot is not None and args.duration is None:
        raise ValueError("--screenshot needs --duration (the window is saved as it closes).")
    low, high = args.band
    if low >= high:  # also with --check, which has no use for it: a typo all the same
        raise ValueError(f"--band: LOW must be below HIGH, got {low:g} {high:g}.")


def _replay(args):
    """A looping real-time :class:`~acquisition.player.Player` of the recording ``args.stream``
    names, when it names an existing file; else ``None``."""
    path = Path(args.stream).expanduser() if args.stream is not None else None
    if path is None or not path.is_file():
        return None
    if args.source_id is not None:
        raise ValueError("--source-id names a stream; it cannot go with a recording file.")
    from acquisition.player import Player

    return Player(path, loop=True, verbose="warning")


def run(args) -> int:
    from acquisition import StreamReceiver, configure_lsl
    from bci_universum.quality import QualityThresholds
    from paradigms.viewer import Scope, pick_stream, stream_quality

    thresholds = QualityThresholds(line_freq=args.line_freq)
    configure_lsl(args.lsl_mode)
    player = _replay(args)
    name, source_id = (player.name, player.source_id) if player else (args.stream, args.source_id)
    if source_id is None:
        try:
            name = pick_stream(name, args.timeout).name
        except TimeoutError as err:
            if name is not None and Path(name).expanduser().is_dir():
                raise TimeoutError(
                    f"{err}; and {name!r} is a folder, not a recording file."
                ) from None
            if name is not None and Path(name).suffix:
                raise TimeoutError(f"{err}; and there is no file {name!r}.") from None
            raise
    receiver = StreamReceiver(
        name,
        source_id=source_id,
        timeout=args.timeout,
        bufsize=max(30.0, 2 * args.seconds, args.window),
    )
    with player or nullcontext(), receiver:
        if args.check:
            print(f"Checking {receiver.description} for {args.seconds:g} s ...", flush=True)
            report = stream_quality(receiver, args.seconds, thresholds)
            print(report.summary())
            return 0 if report.ok else 1
        scope = Scope(
            receiver,
            window=args.window,
            band=tuple(args.band),
            notch=args.line_freq,
            filtered=args.filtered,
            thresholds=thresholds,
        ).show()
        message = f"Viewing {receiver.description} (q or Ctrl-C to close)."
        if scope.exec(args.duration, args.screenshot, ready=lambda: print(message, flush=True)):
            print(f"{args.prog}: interrupted.", file=sys.stderr)
            return 130
    return 0
