"""``bci-universum stream replay FILE``: replay a recording as LSL data and marker streams."""

from __future__ import annotations

import sys
from pathlib import Path

from ._bids_args import add_bids_arguments, resolve_one
from ._consumers import WAIT_FOR, add_wait_for
from ._files import file_of_kind
from ._lsl_mode import add_lsl_mode
from ._types import positive_float, positive_int, stream_name
from ._until_stopped import STOPPED_HELP, run_until_stopped

MARKER_MAP_HELP = (
    "preset (eegmmidb, bci4als), a JSON file {description: marker}, or 'T1=cue/left,...'"
)


def add_voltage_unit(parser) -> None:
    parser.add_argument(
        "--voltage-unit",
        choices=("microvolts", "volts"),
        default="microvolts",
        help="unit of the EEG channels on the stream: microvolts, the LSL convention, or "
        "volts, MNE's, for mne-lsl StreamLSL readers (default: microvolts)",
    )


def add_parser(stream_subparsers) -> None:
    p = stream_subparsers.add_parser(
        "replay",
        help="replay a recording (FIF, EDF/BDF, GDF, BrainVision, EEGLAB, XDF) as LSL streams",
        description="Push a recording's EEG as an LSL data stream and its annotations as a "
        "marker stream (<name>-markers), paced at --speed times real time or as fast as the "
        f"consumers drain (--no-pacing). {STOPPED_HELP}",
    )
    p.add_argument(
        "file",
        type=file_of_kind("recording"),
        help="the recording, or a BIDS root (with --subject, --task, ...)",
    )
    p.add_argument(
        "--speed",
        type=positive_float,
        default=1.0,
        help="pacing factor, 1 is real time (default: 1)",
    )
    p.add_argument("--loop", action="store_true", help="start over at the end, until stopped")
    p.add_argument(
        "--chunk-size", type=positive_int, default=10, help="samples per chunk (default: 10)"
    )
    p.add_argument(
        "--no-pacing",
        action="store_true",
        help="push as fast as the consumer drains (waits for a consumer first)",
    )
    p.add_argument(
        "--name", type=stream_name, help="data stream name (default: replay-<file stem>)"
    )
    p.add_argument("--counter", action="store_true", help="append a sample-counter channel")
    p.add_argument(
        "--marker-map",
        help=MARKER_MAP_HELP,
    )
    add_voltage_unit(p)
    add_wait_for(
        p,
        None,
        "the data stream, and the marker stream when the recording has markers",
        "the consumers to connect, and at the end for them to have every sample",
    )
    add_lsl_mode(p)
    add_bids_arguments(p)
    p.set_defaults(func=run_replay)


def run_replay(args) -> int:
    from acquisition.lsl_config import configure_lsl
    from acquisition.player import Player
    from bci_universum.markers import resolve_marker_map

    args.file = resolve_one(args.file, args)
    _check_not_partial(Path(args.file))
    marker_map = resolve_marker_map(args.marker_map)
    configure_lsl(args.lsl_mode)
    player = Player(
        args.file,
        name=args.name,
        chunk_size=args.chunk_size,
        speed=args.speed,
        loop=args.loop,
        pacing=not args.no_pacing,
        counter=args.counter,
        marker_map=marker_map,
        consumer_timeout=args.timeout,
        verbose="warning",
        voltage_unit=args.voltage_unit,
    )
    wait_for = args.wait_for or ("both" if player.marker_texts else "data")
    player.wait_for_consumers = WAIT_FOR[wait_for]
    raw = player.raw
    with player:
        announce = (
            f"Replaying {args.file} ({len(raw.ch_names)} ch, {raw.info['sfreq']:g} Hz, "
            f"{raw.n_times / raw.info['sfreq']:.1f} s, {len(player.marker_texts)} markers) as "
            f"{player.name!r} and {player.name + '-markers'!r}"
            + (" without pacing" if args.no_pacing else f" at {args.speed:g}x")
            + (f", once {wait_for} consumer(s) connected" if wait_for != "none" else "")
        )
        ended = run_until_stopped(lambda: not player.running, announce=announce)
        player.wait(0)  # the replay's own error, e.g. no consumer in time
        pushed = f"{player.n_pushed} samples and {player.n_markers_pushed} markers"
        print(f"Pushed {pushed}.", flush=True)
        if ended == "done":
            # liblsl drops what is in transit when an outlet closes
            left = run_until_stopped(lambda: not player.busy_streams(), args.timeout)
            busy = player.busy_streams()
            if left != "done" and busy:
                print(
                    f"Closing {busy} with consumers still connected after {args.timeout:g} s: "
                    "samples they have not received yet are lost.",
                    file=sys.stderr,
                )
    return 0


def _check_not_partial(path: Path) -> None:
    """Refuse the partial folder of a killed recording, naming what turns it into a file."""
    from acquisition.recorder import PARTIAL_SUFFIX, recover_hint

    if path.name.endswith(PARTIAL_SUFFIX) and path.is_dir():
        raise IsADirectoryError(
            f"{path} is the folder of a recording killed before its end, not a recording "
            f"file; {recover_hint(path)} turns it into one."
        )
