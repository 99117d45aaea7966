"""Parameter descriptions shared by the dataset readers and loaders, written once.

A docstring names an entry as ``%(band)s`` on a line of its own, indented like the other
parameters; :func:`fill_doc` puts the entry there with that indentation.
"""

from __future__ import annotations

import re
from collections.abc import Callable

DOCS: dict[str, str] = {
    "band": """band : (float | None, float | None) or None
    Causal band-pass of the online decoder, run over each continuous recording before the
    trials are cut (:func:`bci_universum.online.filter_raw`); recorded in ``info["band"]``.""",
    "verbose": """verbose : bool | str | int | None
    MNE verbosity.""",
}

_PLACEHOLDER = re.compile(r"^( *)%\((\w+)\)s$", re.MULTILINE)


def fill_doc(func: Callable) -> Callable:
    """Replace the ``%(name)s`` lines of ``func.__doc__`` by the :data:`DOCS` entries."""

    def entry(match: re.Match) -> str:
        indent, name = match.groups()
        return "\n".join(indent + line if line else line for line in DOCS[name].splitlines())

    if func.__doc__:  # None under python -OO
        func.__doc__ = _PLACEHOLDER.sub(entry, func.__doc__)
    return func
