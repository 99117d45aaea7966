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
    expanded, an empty path (it would be the current folder, whatever the default says) and
    paths inside the shipped example recordings refused
    (:func:`bci_universum.datasets.check_not_example`)."""
    from bci_universum.datasets import check_not_example

    if not text.strip():
        raise argparse.ArgumentTypeError(
            f"expected a path, got {text!r}; name the current folder as '.' to write there"
        )
    try:
        return check_not_example(text)
    except ValueError as err:
        raise argparse.ArgumentTypeError(str(err)) from err


def check_output_folder(
    path: str | Path, what: str | None = None, *, writable: bool = True
) -> Path:
    """Refuse a folder to write into that is an existing file, lies inside one or, with
    ``writable``, cannot be written (:func:`bci_universum.datasets.check_writable`).

    Parameters
    ----------
    path : str or Path
        The folder (it need not exist yet).
    what : str or None
        What names the folder for the user (``"[session] output"``), the message's prefix.
    writable : bool
        Also check that the folder can be written: only where it is about to be, since a
        settings file is read by commands that do not write where it says.

    Returns
    -------
    path : Path
    """
    from bci_universum.datasets import check_writable

    path = Path(path)
    existing = next((p for p in (path, *path.parents) if p.exists()), None)
    if existing is not None and not existing.is_dir():
        where = "is a file" if existing == path else f"lies inside the file {existing}"
        raise ValueError(
            ("" if what is None else f"{what}: ") + f"{path} {where}, not a folder; name a folder."
        )
    if writable:
        check_writable(path, what)
    return path


def output_folder(text: str) -> Path:
    """argparse ``type`` of the options naming a folder that a command writes into:
    :func:`output_path`, then an existing file (or a path inside one) or a folder that cannot be
    written refused, before the command starts."""
    try:
        return check_output_folder(output_path(text))
    except ValueError as err:
        raise argparse.ArgumentTypeError(str(err)) from err


def output_file(text: str) -> Path:
    """argparse ``type`` of the options naming one file a command writes (a table, a
    screenshot): :func:`output_path`, then a name that is a folder, or whose folder does not
    exist or cannot be written, refused before the command starts."""
    from bci_universum.datasets import check_writable

    path = output_path(text)
    try:
        if path.is_dir():
            raise ValueError(f"{path} is a folder; name a file in it.")
        if not path.parent.is_dir():
            raise ValueError(f"the folder {path.parent} of {path} does not exist.")
        check_writable(path.parent)
    except ValueError as err:
        raise argparse.ArgumentTypeError(str(err)) from err
    return path
