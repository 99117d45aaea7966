"""``bci-universum calibrate``: record a run of labelled trials."""

from __future__ import annotations

from ._session_args import add_session_arguments, config_from_args, describe_run, open_session


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
    parser.set_defaults(func=run)


def run(args) -> int:
    config = config_from_args(args)
    with open_session(args, config) as session:
        results = session.calibration()
    print(describe_run(results))
    return 0
