"""``--lsl-mode``: the one option, with the one default, of every command that touches LSL."""

from __future__ import annotations

import argparse

from acquisition.lsl_config import DEFAULT_LSL_MODE, LSL_MODES


def add_lsl_mode(parser: argparse.ArgumentParser, session_file: bool = False) -> None:
    """Add ``--lsl-mode``; with ``session_file`` its default is the file's ``[session]
    lsl_mode`` (whose own default is the same :data:`~acquisition.lsl_config.DEFAULT_LSL_MODE`)."""
    default = f"[session] lsl_mode, else {DEFAULT_LSL_MODE}" if session_file else DEFAULT_LSL_MODE
    parser.add_argument(
        "--lsl-mode",
        choices=LSL_MODES,
        default=None if session_file else DEFAULT_LSL_MODE,
        help="liblsl configuration: 'loopback' (streams of this machine only, nothing sent to "
        "the network) or 'lab' (liblsl's lsl_api.cfg: streams of other machines too); "
        f"default: {default}",
    )
