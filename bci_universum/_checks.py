"""Small input checks shared by the package, the acquisition and the command line."""

from __future__ import annotations

from collections.abc import Hashable, Iterable


def repeated(items: Iterable[Hashable]) -> list:
    """The items that occur more than once in ``items``, each once, sorted (by ``str`` when
    they do not compare), for messages naming what was listed twice."""
    seen, twice = set(), set()
    for item in items:
        (twice if item in seen else seen).add(item)
    try:
        return sorted(twice)
    except TypeError:
        return sorted(twice, key=str)
