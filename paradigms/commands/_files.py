"""argparse ``type`` checks of the files a command reads: a model where a TOML file is expected
(or a recording), and the reverse, is refused naming the argument before anything runs."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from pathlib import Path

MODEL_SUFFIXES = (".joblib", ".pkl", ".pickle")
_SUFFIX_KINDS = {".toml": "toml", **dict.fromkeys(MODEL_SUFFIXES, "model")}
#: What each expected file may be, of the kinds told apart here.
_ALLOWED = {"model": ("model",), "session": ("toml",), "evaluation": ("toml",), "recording": ()}
_LABELS = {
    "model": "a model file",
    "session": "a session file (TOML)",
    "evaluation": "an evaluation file (TOML)",
    "recording": "a recording",
}


def file_kind(path: Path, sniff: bool = True) -> str | None:
    """``"model"`` or ``"toml"`` by suffix, or with ``sniff`` ``"model"`` for a pickle of
    another name (its first byte, 0x80, cannot begin a UTF-8 TOML file); None otherwise."""
    kind = _SUFFIX_KINDS.get(path.suffix.lower())
    if kind is None and sniff and path.is_file():
        with path.open("rb") as f:
            if f.read(1) == b"\x80":
                return "model"
    return kind


def file_of_kind(expected: str, hint: str = "") -> Callable[[str], Path]:
    """An argparse ``type`` that refuses a model where ``expected`` is a TOML file (``session``,
    ``evaluation``) or a ``recording``, and a TOML file where it is a ``model`` or a
    ``recording``; ``hint`` ends the message."""
    if expected not in _ALLOWED:
        raise ValueError(f"Unknown file kind {expected!r}; expected one of {tuple(_ALLOWED)}.")

    def check(text: str) -> Path:
        path = Path(text).expanduser()
        # a recording's format is read_recording's to check (its content may be anything)
        found = file_kind(path, sniff=expected != "recording")
        if found is not None and found not in _ALLOWED[expected]:
            raise argparse.ArgumentTypeError(
                f"{path} is {'a model file' if found == 'model' else 'a TOML file'}, not "
                f"{_LABELS[expected]}{hint}."
            )
        return path

    check.__name__ = f"{expected} file"  # argparse's "invalid <name> value" messages
    return check
