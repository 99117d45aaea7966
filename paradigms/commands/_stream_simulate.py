"""``bci-universum stream simulate``: a simulated subject as an LSL EEG stream."""

from __future__ import annotations

from . import _stream_replay
from ._lsl_mode import add_lsl_mode
from ._types import (
    non_negative_int,
    positive_float,
    simulated_channels,
    simulated_sfreq,
    stream_name,
)
from ._until_stopped import STOPPED_HELP, run_until_stopped


def add_parser(stream_subparsers) -> None:
    p = stream_subparsers.add_parser(
        "simulate",
        help="stream a simulated subject whose motor imagery follows a marker stream",
        description="Stream the EEG of a simulated subject like an amplifier; with "
        "--markers-from its mental state follows the paradigm's markers (cue/left, cue/right, "
        f"universum/rest, trial/end, ...). {STOPPED_HELP}",
    )
    p.add_argument(
        "--channels",
        type=simulated_channels,
        default=32,
        help="number of electrodes, 3-64 (default: 32)",
    )
    p.add_argument(
        "--sfreq",
        type=simulated_sfreq,
        default=250.0,
        help="sampling rate in Hz, 80 to 100000 (default: 250)",
    )
    p.add_argument(
        "--seed", type=non_negative_int, default=0, help="seed of the simulated subject"
    )
    p.add_argument(
        "--name",
        type=stream_name,
        default="bci-universum-sim",
        help="EEG stream name (default: bci-universum-sim)",
    )
    p.add_argument(
        "--markers-from",
        type=stream_name,
        help="name of the marker stream to obey (cue/left, cue/right, ...)",
    )
    p.add_argument("--speed", type=positive_float, default=1.0, help="pacing factor (default: 1)")
    p.add_argument("--counter", action="store_true", help="append a sample-counter channel")
    _stream_replay.add_voltage_unit(p)
    p.add_argument(
        "--duration",
        type=positive_float,
        help="seconds to stream (default: until Ctrl-C / SIGTERM)",
    )
    p.add_argument(
        "--timeout",
        type=positive_float,
        default=10.0,
        help="seconds to wait for the marker stream (default: 10)",
    )
    add_lsl_mode(p)
    p.set_defaults(func=run_simulate)


def run_simulate(args) -> int:
    from acquisition.lsl_config import configure_lsl
    from acquisition.simulator import SimulatedSource

    source = SimulatedSource(
        args.channels,
        args.sfreq,
        seed=args.seed,
        name=args.name,
        markers_from=args.markers_from,
        speed=args.speed,
        counter=args.counter,
        timeout=args.timeout,
        voltage_unit=args.voltage_unit,
    )
    configure_lsl(args.lsl_mode)
    with source:
        announce = (
            f"Streaming a simulated subject as {args.name!r} ({args.channels} ch, "
            f"{args.sfreq:g} Hz, seed {args.seed})"
            + (f", obeying markers of {args.markers_from!r}" if args.markers_from else "")
        )
        run_until_stopped(lambda: not source.running, args.duration, announce=announce)
    print(f"Pushed {source.n_pushed} samples; {len(source.switches)} state changes.")
    return 0
