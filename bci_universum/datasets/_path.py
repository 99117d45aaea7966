"""Where the real recordings are.

The recordings used by tests, benchmarks and examples live outside the repository, in a data
folder given by the ``BCI_UNIVERSUM_DATA`` environment variable; without it, a ``shared/data``
folder beside the checkout is used when it exists.
"""

from __future__ import annotations

import os
from pathlib import Path

DATA_ENV = "BCI_UNIVERSUM_DATA"


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
