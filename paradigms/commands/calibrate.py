"""``bci-universum calibrate``: record a run of labelled trials."""

from __future__ import annotations

from ._session_args import add_session_arguments, config_from_args, describe_run, open_session
from ._types import positive_float


def add_parser(subparsers) -> None:
    parser = subparsers.add_parser(
        "calibrate",
        help="record a calibration run (labelled cue trials)",
        description=(
            "Run the calibration paradigm: [paradigm] trials_per_class trials of each class in "
            "balanced random order, each cue marked cue/<class>, recorded with the markers."
        ),
    )
    add_session_arguments(parser)
    parser.add_argument(
        "--quality-seconds",
        type=float,
        default=5.0,
        help="seconds of the stream whose quality is checked before the run, 0 for no check "
        "(default: 5)",
    )
    parser.add_argument(
        "--line-freq",
        type=positive_float,
        default=50.0,
        help="mains frequency of the check in Hz (default: 50)",
    )
    parser.set_defaults(func=run)


def run(args) -> int:
    import logging

    from bci_universum.quality import QualityThresholds
    from paradigms.viewer import stream_quality

    if args.quality_seconds and args.quality_seconds < 1:
        raise ValueError(f"--quality-seconds must be 0 or at least 1, got {args.quality_seconds}.")
    thresholds = QualityThresholds(line_freq=args.line_freq)
    config = config_from_args(args)
    with open_session(args, config) as session:
        if args.quality_seconds:
            # seconds of data: a simulated subject at --speed delivers them faster
            report = stream_quality(session.receiver, args.quality_seconds, thresholds)
            log = logging.getLogger("paradigms.commands.calibrate")
            log.log(logging.INFO if report.ok else logging.WARNING, report.summary())
        results = session.calibration()
    print(describe_run(results))
    return 0
