"""``bci-universum stream replay FILE``: replay a recording as LSL data and marker streams."""

from __future__ import annotations

import json
import signal
import threading
from pathlib import Path


def add_parser(stream_subparsers) -> None:
    p = stream_subparsers.add_parser(
        "replay",
        help="replay a recording (FIF, EDF/BDF, GDF, BrainVision, EEGLAB, XDF) as LSL streams",
    )
    p.add_argument("file", help="the recording")
    p.add_argument("--speed", type=float, default=1.0, help="pacing factor (default 1: real time)")
    p.add_argument("--loop", action="store_true", help="start over at the end, until stopped")
    p.add_argument("--chunk-size", type=int, default=10, help="samples per chunk (default 10)")
    p.add_argument(
        "--no-pacing",
        action="store_true",
        help="push as fast as the consumer drains (waits for a consumer first)",
    )
    p.add_argument("--name", help="data stream name (default replay-<file stem>)")
    p.add_argument("--counter", action="store_true", help="append a sample-counter channel")
    p.add_argument(
        "--marker-map",
        help="preset (eegmmidb, bci4als), a JSON file {description: marker}, or 'T1=cue/left,...'",
    )
    p.add_argument(
        "--timeout", type=float, default=30.0, help="seconds to wait for a consumer (no pacing)"
    )
    p.add_argument(
        "--lsl-mode",
        choices=("lab", "loopback"),
        default="lab",
        help="liblsl configuration: 'lab' (default) or 'loopback' (this machine only)",
    )
    p.set_defaults(func=run_replay)


def parse_marker_map(text: str | None) -> str | dict | None:
    """A preset name, the mapping in a JSON file, or ``'A=B,C=D'`` pairs."""
    from acquisition.player import MARKER_MAPS

    if text is None or text in MARKER_MAPS:
        return text
    path = Path(text)
    if path.suffix.lower() == ".json":
        if not path.is_file():
            raise FileNotFoundError(f"Marker map file not found: {path}")
        try:
            return json.loads(path.read_text())
        except json.JSONDecodeError as err:
            raise ValueError(f"Marker map file {path} is not valid JSON: {err}") from err
    pairs = [item.split("=", 1) for item in text.split(",") if item.strip()]
    if not pairs or any(len(pair) != 2 or not pair[0].strip() for pair in pairs):
        raise ValueError(
            f"--marker-map {text!r} is neither a preset ({', '.join(sorted(MARKER_MAPS))}), "
            "a .json file nor 'description=marker' pairs separated by commas."
        )
    return {key.strip(): value.strip() for key, value in pairs}


def run_replay(args) -> int:
    from acquisition.lsl_config import configure_lsl
    from acquisition.player import Player

    marker_map = parse_marker_map(args.marker_map)
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
    )
    stop = threading.Event()
    previous = signal.signal(signal.SIGTERM, lambda *_: stop.set())
    try:
        player.start()
        raw = player.raw
        print(
            f"Replaying {args.file} ({len(raw.ch_names)} ch, {raw.info['sfreq']:g} Hz, "
            f"{raw.n_times / raw.info['sfreq']:.1f} s, {len(player.marker_texts)} markers) as "
            f"{player.name!r} and {player.name + '-markers'!r}"
            + (" without pacing" if args.no_pacing else f" at {args.speed:g}x"),
            flush=True,
        )
        try:
            while not stop.is_set() and not player.wait(0.2):
                pass
        except KeyboardInterrupt:
            pass
    finally:
        signal.signal(signal.SIGTERM, previous)
        player.stop()
    print(f"Pushed {player.n_pushed} samples and {player.n_markers_pushed} markers.")
    return 0
