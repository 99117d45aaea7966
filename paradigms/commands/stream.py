"""``bci-universum stream``: list, record, recover (here), replay and simulate LSL streams.

``replay`` and ``simulate`` come from :mod:`._stream_replay` and :mod:`._stream_simulate`.

``--lsl-mode`` (:mod:`._lsl_mode`) chooses between this machine only (the default) and the lab
network.
"""

from __future__ import annotations

import logging
import time

from ..output import output_folder
from ._lsl_mode import add_lsl_mode
from ._types import positive_float, positive_int, source_id, stream_name
from ._until_stopped import STOPPED_HELP, run_until_stopped


def add_parser(subparsers) -> None:
    from . import _stream_replay, _stream_simulate

    parser = subparsers.add_parser(
        "stream",
        help="list, record, recover, replay and simulate LSL streams",
        description="List the LSL streams in reach, record a data stream and its markers "
        "crash-safely to FIF, finalise a killed recording, replay a recording or stream a "
        "simulated subject.",
    )
    sub = parser.add_subparsers(dest="stream_command", metavar="SUBCOMMAND", required=True)

    p = sub.add_parser(
        "list",
        help="list the LSL streams visible from this machine",
        description="Print name, type, channels, rate and source_id of every LSL stream that "
        "answers within --timeout.",
    )
    p.add_argument(
        "--timeout", type=positive_float, default=1.0, help="seconds to listen (default: 1)"
    )
    add_lsl_mode(p)
    p.set_defaults(func=run_list)

    p = sub.add_parser(
        "record",
        help="record a data stream and the marker stream to FIF (crash-safe)",
        description="Record an LSL data stream (chosen by --stream, --source-id and/or --type) "
        "and optionally a marker stream into <output>/<BIDS name>_raw.fif with a JSON sidecar. "
        "Data reach the disk every 0.25 s; a killed recording is finalised by "
        f"'bci-universum stream recover'. Never overwrites. {STOPPED_HELP}",
    )
    p.add_argument("--stream", type=stream_name, help="name of the data stream")
    p.add_argument("--source-id", type=source_id, help="source_id of the data stream")
    p.add_argument(
        "--type", dest="stype", metavar="TYPE", help="type of the data stream (e.g. EEG)"
    )
    p.add_argument(
        "--markers", type=stream_name, help="name of the marker stream (none recorded if omitted)"
    )
    p.add_argument("--marker-source-id", type=source_id, help="source_id of the marker stream")
    p.add_argument(
        "--marker-map",
        help="rename the recorded markers (e.g. T0/T1/T2 to universum/rest, cue/left, "
        f"cue/right): {_stream_replay.MARKER_MAP_HELP}",
    )
    p.add_argument(
        "--output",
        "-o",
        required=True,
        type=output_folder,
        metavar="DIR",
        help="folder of the recording (created if needed)",
    )
    p.add_argument("--subject", default="01", help="BIDS subject label (default: 01)")
    p.add_argument("--session", default="01", help="BIDS session label (default: 01)")
    p.add_argument("--task", default="calibration", help="BIDS task label (default: calibration)")
    p.add_argument(
        "--run",
        type=positive_int,
        default=1,
        help="BIDS run number, written as two digits: run-01 (default: 1)",
    )
    p.add_argument("--paradigm", help="paradigm name for the sidecar")
    p.add_argument(
        "--duration",
        type=positive_float,
        help="seconds of stream to record, counted by its timestamps from the first sample "
        "(round(duration x rate) samples; default: until Ctrl-C / SIGTERM)",
    )
    p.add_argument(
        "--timeout",
        type=positive_float,
        default=10.0,
        help="seconds to wait for the streams (default: 10)",
    )
    p.add_argument(
        "--silence-timeout",
        type=positive_float,
        default=5.0,
        help="seconds without data before a silence is reported (default: 5)",
    )
    p.add_argument(
        "--stop-on-silence",
        action="store_true",
        help="stop and write the recording once the data stream falls silent (end of a replay)",
    )
    add_lsl_mode(p)
    p.set_defaults(func=run_record, usage_check=_check_record)

    p = sub.add_parser(
        "recover",
        help="turn a killed recording (a .partial folder) into FIF",
        description="Finalise a recording whose process was killed: write the FIF and its "
        'sidecar (marked "recovered": true and "interrupted": true: train skips it unless '
        "--include-interrupted) from the _raw.fif.partial folder, then remove the folder.",
    )
    p.add_argument("path", help="the _raw.fif.partial folder, its FIF name, or its folder")
    p.set_defaults(func=run_recover)

    _stream_replay.add_parser(sub)
    _stream_simulate.add_parser(sub)


def run_list(args) -> int:
    from acquisition.lsl_config import configure_lsl
    from acquisition.streams import list_streams

    configure_lsl(args.lsl_mode)
    streams = list_streams(args.timeout)
    hint = "" if args.lsl_mode == "lab" else " (streams of other machines need --lsl-mode lab)"
    print(
        f"{len(streams)} LSL stream(s) found within {args.timeout:g} s in {args.lsl_mode} "
        f"mode{hint if not streams else ''}" + (":" if streams else "."),
        flush=True,
    )
    for summary in streams:
        print(summary)
    return 0


def _check_record(args) -> None:
    if args.stream is None and args.source_id is None and args.stype is None:
        raise ValueError("Name the data stream with --stream, --source-id and/or --type.")
    if args.marker_map is not None and args.markers is None and args.marker_source_id is None:
        raise ValueError("--marker-map needs a marker stream (--markers or --marker-source-id).")


def run_record(args) -> int:
    from acquisition.lsl_config import configure_lsl
    from acquisition.markers import MarkerReceiver
    from acquisition.receiver import StreamReceiver
    from acquisition.recorder import Recorder, hold_interrupts
    from bci_universum.markers import resolve_marker_map

    marker_map = resolve_marker_map(args.marker_map)
    configure_lsl(args.lsl_mode)
    receiver = StreamReceiver(
        args.stream,
        source_id=args.source_id,
        stype=args.stype,
        timeout=args.timeout,
        silence_timeout=args.silence_timeout,
    )
    markers = None
    if args.markers is not None or args.marker_source_id is not None:
        markers = MarkerReceiver(
            args.markers,
            source_id=args.marker_source_id,
            timeout=args.timeout,
            marker_map=marker_map,
        )
    recorder = Recorder(
        receiver,
        markers,
        args.output,
        subject=args.subject,
        session=args.session,
        task=args.task,
        run=args.run,
        paradigm=args.paradigm,
        duration=args.duration,
    )

    streams = receiver.description + (f" and {markers.description}" if markers else "")
    started = []

    def begin() -> None:
        # as sessions do; Ctrl-C and SIGTERM end the wait
        logging.getLogger(__name__).info("Waiting for %s (up to %g s)…", streams, args.timeout)
        recorder.start()
        started.append(time.monotonic())

    def ended() -> bool:
        recorder.check()  # a write that failed (a full disk) ends the recording at once
        if recorder.complete:  # --duration counts the stream's timestamps, not this clock
            return True
        # a stream silent once --duration has passed will not fill it: keep what came
        over = args.duration is not None and time.monotonic() - started[0] > args.duration
        on_silence = over or (args.stop_on_silence and receiver.n_samples > 0)
        return on_silence and receiver.silent

    try:
        announce = (
            f"Recording {streams}{'' if markers else ' (no marker stream)'} "
            f"into {recorder.partial}"
        )
        reason = run_until_stopped(ended, begin=begin, announce=announce)
    except BaseException:
        if recorder.running:  # started, then failed while waiting: keep what was recorded
            recorder.stop()
        raise
    # Ctrl-C is how a recording without --duration ends: a second one while the file is
    # written is impatience, not a new request
    with hold_interrupts(recorder.fname.name, redeliver=reason != "interrupted"):
        fname = recorder.stop()
    lost = sum(e.n_samples for e in receiver.events if e.kind in ("gap", "counter_reset"))
    print(
        f"Wrote {fname}: {recorder.n_samples} samples, {recorder.n_markers} markers, "
        f"{lost} samples lost."
    )
    return 0


def run_recover(args) -> int:
    from acquisition.recorder import recover

    print(f"Recovered {recover(args.path)}")
    return 0
