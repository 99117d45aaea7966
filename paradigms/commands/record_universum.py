"""``bci-universum record-universum``: record universum (non-example) trials."""

from __future__ import annotations

from ..timeline import UNIVERSUM_MODES
from ._session_args import add_session_arguments, config_from_args, describe_run, open_session


def add_parser(subparsers) -> None:
    parser = subparsers.add_parser(
        "record-universum",
        help="record universum trials (rest, another task), separately or interleaved",
        description=(
            "Record universum trials marked universum/<name> ([paradigm] universum): a separate "
            "run, interleaved with calibration trials, or a short rest block."
        ),
    )
    add_session_arguments(parser)
    parser.add_argument(
        "--universum-mode",
        choices=UNIVERSUM_MODES,
        help="a separate run, interleaved with calibration trials, or a rest block (default: "
        "[paradigm] universum_mode)",
    )
    parser.set_defaults(func=run)


def run(args) -> int:
    config = config_from_args(args)
    config.universum_groups(args.universum_mode)  # a run without trials: refused up front
    with open_session(args, config) as session:
        results = session.universum(args.universum_mode)
    print(describe_run(results))
    return 0
