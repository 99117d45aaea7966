"""Where commands write: the default recordings folder, and never the shipped examples.

Kept free of heavy imports: the command line's ``--help`` shows :data:`DEFAULT_OUTPUT`.
"""

from __future__ import annotations

import argparse
from pathlib import Path

#: Where sessions are recorded when neither the session file nor ``--output`` says: one folder
#: per user whatever the current directory (the runs of a session land together), never the
#: example recordings of a checkout.
DEFAULT_OUTPUT = "~/bci_universum_recordings"


def output_path(text: str) -> Path:
    """argparse ``type`` of every option naming a file or folder that a command writes: ``~``
    expanded, paths inside the shipped example recordings refused
    (:func:`bci_universum.datasets.check_not_example`)."""
    from bci_universum.datasets import check_not_example

    try:
        return check_not_example(text)
    except ValueError as err:
        raise argparse.ArgumentTypeError(str(err)) from err


def check_output_folder(path: Path, option: str = "--output") -> Path:
    """Refuse, naming ``option``, a folder to write into (created if needed) that is an existing
    file or lies inside one; a command calls it before it starts anything."""
    existing = next((p for p in (path, *path.parents) if p.exists()), None)
    if existing is not None and not existing.is_dir():
        what = "is" if existing == path else f"lies inside {existing}, which is"
        raise ValueError(f"{option} {path} {what} an existing file, not a folder.")
    return path
