"""Where the real recordings are, and where nothing may be written.

The recordings used by tests, benchmarks and examples live outside the repository, in a data
folder given by the ``BCI_UNIVERSUM_DATA`` environment variable; without it, a ``shared/data``
folder beside the checkout is used when it exists. The small example session shipped with the
project (:data:`EXAMPLE_RECORDINGS`) is read-only: :func:`check_not_example` refuses outputs
inside it. :func:`check_writable` tells, before any work, whether a folder can be written.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

DATA_ENV = "BCI_UNIVERSUM_DATA"
#: The example session recorded by the project's own recorder (in a checkout).
EXAMPLE_RECORDINGS = Path(__file__).resolve().parents[2] / "recordings"


def data_path(required: bool = False) -> Path | None:
    """Return the folder that holds the real recordings, or ``None`` when there is none.

    Parameters
    ----------
    required : bool
        Raise ``FileNotFoundError`` instead of returning ``None`` when no folder is found.

    Returns
    -------
    path : Path or None
        ``$BCI_UNIVERSUM_DATA`` if set, else ``<checkout>/../shared/data`` if it exists.
    """
    env = os.environ.get(DATA_ENV)
    if env:
        path = Path(env).expanduser()
        if not path.is_dir():
            raise FileNotFoundError(f"{DATA_ENV}={env!r} is not a folder.")
        return path
    default = Path(__file__).resolve().parents[2].parent / "shared" / "data"
    if default.is_dir():
        return default
    if required:
        raise FileNotFoundError(
            f"No data folder: set {DATA_ENV} to the folder holding the recordings "
            f"(looked for {default})."
        )
    return None


def check_not_example(path: str | os.PathLike, what: str | None = None) -> Path:
    """Refuse an output path inside the shipped example recordings.

    Parameters
    ----------
    path : path-like
        A file or folder about to be written (``~`` is expanded).
    what : str | None
        What names the path for the user (``"[session] output"``), the message's prefix.

    Returns
    -------
    path : Path
        ``path`` with ``~`` expanded.

    Raises
    ------
    ValueError
        When ``path`` is :data:`EXAMPLE_RECORDINGS` or inside it.
    """
    path = Path(path).expanduser()
    if path.resolve().is_relative_to(EXAMPLE_RECORDINGS):
        raise ValueError(
            ("" if what is None else f"{what}: ")
            + f"{path} is inside the example recordings shipped with bci_universum "
            f"({EXAMPLE_RECORDINGS}), which are read-only; write somewhere else."
        )
    return path


def check_writable(folder: str | os.PathLike, what: str | None = None) -> Path:
    """Refuse a folder that cannot be written (read-only, no permission), before any work.

    The operating system decides: a temporary file is created and removed in ``folder`` or,
    when it does not exist yet, in its nearest existing parent (where it would be created).

    Parameters
    ----------
    folder : path-like
        The folder about to be written into (``~`` is expanded).
    what : str | None
        What names the folder for the user (``"--output"``), the message's prefix.

    Returns
    -------
    folder : Path
        ``folder`` with ``~`` expanded.

    Raises
    ------
    ValueError
        When no file can be created there; the message gives the system's reason.
    """
    folder = Path(folder).expanduser()
    existing = next((p for p in (folder, *folder.parents) if p.is_dir()), None)
    try:
        fd, probe = tempfile.mkstemp(dir=existing, prefix=".bci-universum-write-check-")
        os.close(fd)
        os.unlink(probe)
    except OSError as err:
        where = folder if existing == folder else f"{existing} (where {folder} would be created)"
        raise ValueError(
            ("" if what is None else f"{what}: ")
            + f"cannot write into {where}: {err.strerror}; choose a folder you can write to."
        ) from None
    return folder
