"""The one TOML layer: reading configuration files and checking their tables.

Session files (:func:`paradigms.config.load_session_config`) and evaluation files
(:func:`paradigms.evaluation_config.load_evaluation_config`) are read, type-checked and reported
through these functions, so that both give the same errors: every message names the file (or
``--set``) and the ``[section] key`` at fault.
"""

from __future__ import annotations

import sys
from collections.abc import Collection, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import fields
from pathlib import Path
from typing import Any

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

#: A table schema: key → accepted Python types (``float`` also accepts an int; ``bool`` is never
#: taken for a number).
Schema = Mapping[str, tuple[type, ...]]


def read_toml(path: str | Path, what: str) -> dict:
    """Parse a TOML file.

    Parameters
    ----------
    path : str or Path
        The file.
    what : str
        What the file is (``"Session file"``), for the messages.

    Returns
    -------
    data : dict

    Raises
    ------
    FileNotFoundError
        When ``path`` does not exist.
    IsADirectoryError
        When ``path`` is a folder.
    ValueError
        When it is not UTF-8 TOML (the message gives TOML's line and column).
    """
    path = Path(path)
    if path.is_dir():
        raise IsADirectoryError(f"{what} {path} is a folder; name the file.")
    if not path.is_file():
        raise FileNotFoundError(f"{what} {path} does not exist.")
    try:
        return tomllib.loads(path.read_text(encoding="utf-8"))
    except UnicodeDecodeError as err:
        raise ValueError(f"{what} {path} is not UTF-8 text: {err}") from err
    except tomllib.TOMLDecodeError as err:
        raise ValueError(f"{what} {path} is not valid TOML: {err}") from err


def parse_value(text: str) -> Any:
    """A command-line value read as TOML (``10``, ``[1, 2]``, ``"a"``); else the bare string."""
    try:
        return tomllib.loads(f"v = {text.strip()}")["v"]
    except tomllib.TOMLDecodeError:
        return text.strip()


def typed(value: Any, types: tuple[type, ...], where: str) -> Any:
    """``value`` if it has one of ``types`` (ints accepted as floats, bools never as numbers).

    Raises
    ------
    ValueError
        Naming ``where`` (``"[paradigm] speed"``), the expected types and the value.
    """
    if float in types and isinstance(value, int) and not isinstance(value, bool):
        return float(value)
    if not isinstance(value, types) or (isinstance(value, bool) and bool not in types):
        raise ValueError(
            f"{where} must be {' or '.join(t.__name__ for t in types)}, got {value!r}."
        )
    return value


def check_table(
    values: Any, schema: Schema, where: str, *, non_empty: Collection[str] = ()
) -> dict:
    """Check a TOML table against ``schema``: a table, known keys, typed values.

    Parameters
    ----------
    values : object
        What the file holds at ``where``.
    schema : mapping
        Key → accepted types.
    where : str
        The table's name in messages (``"[paradigm]"``, ``"[[datasets]] #2"``).
    non_empty : collection of str
        Keys that select something (subjects, runs, files, ...): an empty list or table
        there would select nothing, and is refused.

    Returns
    -------
    table : dict
        The values, ints converted where a float is expected.
    """
    if not isinstance(values, dict):
        raise ValueError(f"{where} must be a table, got {values!r}.")
    unknown = sorted(set(values) - set(schema))
    if unknown:
        raise ValueError(f"Unknown key(s) {unknown} in {where}; known keys: {sorted(schema)}.")
    table = {k: typed(v, schema[k], f"{where} {k}") for k, v in values.items()}
    for key in sorted(set(non_empty) & set(table)):
        if isinstance(table[key], list | dict) and not table[key]:
            raise ValueError(
                f"{where} {key} is empty: it selects nothing; name at least one entry, or "
                "leave the key out for its default."
            )
    return table


def dataclass_schema(cls) -> dict[str, tuple[type, ...]]:
    """The schema of a dataclass whose fields all have defaults: each default's type."""
    defaults = cls()
    return {f.name: (type(getattr(defaults, f.name)),) for f in fields(cls)}


@contextmanager
def naming(source: str) -> Iterator[None]:
    """Prefix ``source`` to the message of a ValueError or FileNotFoundError raised inside."""
    try:
        yield
    except (ValueError, FileNotFoundError) as err:
        cls = FileNotFoundError if isinstance(err, FileNotFoundError) else ValueError
        raise cls(f"{source}: {err}") from err
