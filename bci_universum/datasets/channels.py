"""Channel names: the one place that makes them unique and compares two channel lists."""

from __future__ import annotations

from collections.abc import Sequence


def unique_channel_names(names: list[str]) -> list[str]:
    """``names`` with running numbers on repeated labels: C3, C3, Cz → C3, C3-1, Cz.

    A numbered name never takes a label the stream already has (C3, C3, C3-1 → C3, C3-2,
    C3-1): MNE needs unique channel names.
    """
    taken = set(names)
    count: dict[str, int] = {}
    unique = []
    for name in names:
        if name in count:
            k = count[name]
            while f"{name}-{k}" in taken:
                k += 1
            count[name] = k + 1
            name = f"{name}-{k}"
            taken.add(name)
        else:
            count[name] = 1
        unique.append(name)
    return unique


def channel_differences(
    expected: Sequence[str], actual: Sequence[str]
) -> tuple[list[str], list[str]]:
    """The channels of ``expected`` that ``actual`` lacks, and those ``actual`` has in addition,
    each in its list's order."""
    return [c for c in expected if c not in actual], [c for c in actual if c not in expected]


def channel_mismatch(expected: Sequence[str], actual: Sequence[str], name: str) -> str:
    """How the channels ``actual`` of ``name`` differ from ``expected``, for messages:
    "<name> lacks C4, Pz and has Fz in addition", or "<name> has them in another order"."""
    missing, extra = channel_differences(expected, actual)
    parts = [f"lacks {', '.join(missing)}"] if missing else []
    parts += [f"has {', '.join(extra)} in addition"] if extra else []
    return f"{name} {' and '.join(parts) or 'has them in another order'}"
