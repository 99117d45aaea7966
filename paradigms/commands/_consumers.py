"""``--wait-for`` and ``--timeout`` of the commands that push streams: which consumers the
first sample waits for, and for how long."""

from __future__ import annotations

import argparse

from ._types import positive_float

# --wait-for -> the Player's (or SpikeCountSource's) wait_for_consumers
WAIT_FOR = {"data": ("data",), "markers": ("markers",), "both": ("data", "markers"), "none": ()}


def add_wait_for(
    parser: argparse.ArgumentParser, default: str | None, default_help: str, timeout_help: str
) -> None:
    """Add ``--wait-for`` (default ``default``, described by ``default_help``) and
    ``--timeout`` (30 s, for what ``timeout_help`` says)."""
    parser.add_argument(
        "--wait-for",
        choices=tuple(WAIT_FOR),
        default=default,
        help=f"consumers to wait for before the first sample (default: {default_help})",
    )
    parser.add_argument(
        "--timeout",
        type=positive_float,
        default=30.0,
        help=f"seconds to wait for {timeout_help} (default: 30)",
    )
