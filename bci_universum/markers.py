"""The marker protocol and marker maps, for recordings and streams alike.

A marker is ``kind/name`` (``cue/left``, ``universum/rest``, ``trial/start``): ``kind`` is one of
:data:`MARKER_KINDS`, ``name`` is made of letters, digits and ``_ - . +``, optionally split by
further ``/``. Recordings carry markers as MNE annotations with the same text; the LSL marker
stream (:mod:`acquisition.markers`) carries the same text.

Other tools' recordings and streams name their events differently (eegmmidb's ``T0``/``T1``,
BCI4ALS's numeric codes, BCI2000's ``StimulusCode/<n>``, see
:func:`~bci_universum.datasets.read_recording`). A *marker map* (:func:`resolve_marker_map`)
turns those descriptions into protocol markers: :func:`map_marker` for one description (the
LSL receiver and the player), :func:`apply_marker_map` for a recording's annotations
(``bci-universum train --marker-map``).
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping
from pathlib import Path

import mne
import numpy as np

__all__ = [
    "MARKER_KINDS",
    "MARKER_MAPS",
    "MarkerError",
    "annotation_samples",
    "apply_marker_map",
    "map_marker",
    "resolve_marker_map",
    "validate_marker",
]

MARKER_KINDS = (
    "cue",
    "universum",
    "trial",
    "fixation",
    "feedback",
    "decision",
    "block",
    "run",
    "session",
    "pause",
)
_NAME = re.compile(r"^[A-Za-z0-9_.+\-]+(/[A-Za-z0-9_.+\-]+)*$")


# Ready-made marker maps for public datasets.
MARKER_MAPS: dict[str, dict[str, str | None]] = {
    # PhysioNet eegmmidb imagery/execution runs 3, 4, 7, 8, 11, 12 (left/right fist).
    "eegmmidb": {"T0": "universum/rest", "T1": "cue/left", "T2": "cue/right"},
    # BCI4ALS (bci4als/assaf): trainingVec classes and the run structure codes.
    "bci4als": {
        "111": "run/start",
        "1111": "trial/start",
        "1": "universum/idle",
        "2": "cue/left",
        "3": "cue/right",
        "9": "trial/end",
        "99": "run/end",
    },
}


def resolve_marker_map(
    marker_map: str | Mapping[str, str | None] | None,
) -> dict[str, str | None]:
    """Return a marker map from a preset name, a JSON file, ``"A=B,C=D"`` pairs or a mapping.

    Parameters
    ----------
    marker_map : str | mapping | None
        A preset of :data:`MARKER_MAPS` (``"eegmmidb"``), the path of a ``.json`` file holding
        ``{description: marker}``, pairs ``"T0=universum/rest,T1=cue/left"`` (an empty marker,
        ``"BAD=",`` drops that description), a mapping, or None (no map).

    Returns
    -------
    marker_map : dict
        ``{description: marker or None}``; None drops the description (see :func:`map_marker`).

    Raises
    ------
    ValueError
        Naming the entry: a marker outside the protocol (:func:`validate_marker`), a
        description given twice, or two descriptions matching the same number (``"3"`` and
        ``"3.0"``).
    """
    if marker_map is None:
        return {}
    if isinstance(marker_map, str):
        marker_map = _parse_marker_map(marker_map)
    if not isinstance(marker_map, Mapping):
        raise ValueError(f"marker_map must be a preset name or a mapping, got {marker_map!r}.")
    numbers: dict[float, str] = {}
    for key, value in marker_map.items():
        if not isinstance(key, str) or not (value is None or isinstance(value, str)):
            raise ValueError(f"marker_map entry {key!r}: {value!r} is not text → text or None.")
        if value is not None:
            try:
                validate_marker(value)
            except MarkerError as err:
                hint = " Separate the pairs with commas: 'T1=cue/left,T2=cue/right'."
                raise ValueError(
                    f"marker_map entry {_pair(key, value)}: {err}{hint if '=' in value else ''}"
                ) from None
        number = _as_number(key)
        if number is not None and number in numbers:
            first = numbers[number]
            raise ValueError(
                f"marker_map entries {_pair(first, marker_map[first])} and {_pair(key, value)} "
                f"both match the code {number:g}: keep one."
            )
        if number is not None:
            numbers[number] = key
    return dict(marker_map)


def _parse_marker_map(text: str) -> Mapping:
    if text in MARKER_MAPS:
        return MARKER_MAPS[text]
    path = Path(text)
    if path.suffix.lower() == ".json":
        if not path.is_file():
            raise FileNotFoundError(f"Marker map file not found: {path}")
        try:
            return json.loads(path.read_text(), object_pairs_hook=_distinct_pairs)
        except json.JSONDecodeError as err:
            raise ValueError(f"Marker map file {path} is not valid JSON: {err}") from err
    pairs = [item.split("=", 1) for item in text.split(",") if item.strip()]
    if not pairs or any(len(pair) != 2 or not pair[0].strip() for pair in pairs):
        raise ValueError(
            f"Unknown marker map {text!r}: neither a preset ({', '.join(sorted(MARKER_MAPS))}), "
            "a .json file nor 'description=marker' pairs separated by commas."
        )
    return _distinct_pairs([(key.strip(), value.strip() or None) for key, value in pairs])


def _distinct_pairs(pairs: list[tuple]) -> dict:
    """The ``(description, marker)`` pairs of a marker map as a dict, refusing a description
    given twice (a dict would keep the last one silently)."""
    out: dict = {}
    for key, value in pairs:
        if key in out:
            raise ValueError(
                f"marker_map gives {key!r} twice ({_pair(key, out[key])} and "
                f"{_pair(key, value)}): keep one."
            )
        out[key] = value
    return out


def _pair(key: str, value: str | None) -> str:
    """An entry of a marker map as it is written in pairs, for messages (``'9='``)."""
    return f"'{key}={value or ''}'"


def map_marker(description: str, marker_map: Mapping[str, str | None]) -> str | None:
    """Apply a marker map to one description.

    A key matches the description exactly or, when both read as numbers, numerically (so the
    key ``"3"`` matches the LabRecorder text ``"3.000000000000000"``). Unmatched descriptions go
    out unchanged; a key mapped to ``None`` drops the marker.
    """
    if description in marker_map:
        return marker_map[description]
    number = _as_number(description)
    if number is not None:
        for key, value in marker_map.items():
            if _as_number(key) == number:
                return value
    return description


def _as_number(text: str) -> float | None:
    try:
        value = float(text)
    except ValueError:
        return None
    return value if math.isfinite(value) else None


class MarkerError(ValueError):
    """A marker outside the protocol."""


def validate_marker(text: str, kinds: tuple[str, ...] = MARKER_KINDS) -> tuple[str, str]:
    """Check that ``text`` follows the protocol and return ``(kind, name)``.

    Raises
    ------
    MarkerError
        Naming the marker and what is wrong with it.
    """
    if not isinstance(text, str):
        raise MarkerError(f"Marker {text!r} is not a string.")
    kind, sep, name = text.partition("/")
    if not sep or not name:
        raise MarkerError(
            f"Marker {text!r} is not of the form 'kind/name' (e.g. 'cue/left', 'universum/rest')."
        )
    if kind not in kinds:
        raise MarkerError(
            f"Marker {text!r} has unknown kind {kind!r}; the protocol knows {list(kinds)}."
        )
    if not _NAME.match(name):
        raise MarkerError(
            f"Marker {text!r} has an invalid name {name!r}: use letters, digits and '_-.+', "
            "separated by '/'."
        )
    return kind, name


def apply_marker_map(
    raw: mne.io.BaseRaw, marker_map: str | Mapping[str, str | None] | None
) -> mne.io.BaseRaw:
    """Rename a recording's annotations with a marker map, in place.

    Parameters
    ----------
    raw : mne.io.BaseRaw
        The recording.
    marker_map : str | mapping | None
        As :func:`resolve_marker_map` takes it, e.g. ``"StimulusCode/1=cue/left,
        StimulusCode/2=cue/right"`` for a BCI2000 file. Descriptions mapped to None are
        removed; unmatched ones are kept unchanged; None changes nothing.

    Returns
    -------
    raw : mne.io.BaseRaw
        The same object.
    """
    mapping = resolve_marker_map(marker_map)
    if not mapping:
        return raw
    annotations = raw.annotations
    texts = [map_marker(str(d), mapping) for d in annotations.description]
    keep = [i for i, text in enumerate(texts) if text is not None]
    mapped = mne.Annotations(
        annotations.onset[keep],
        annotations.duration[keep],
        [texts[i] for i in keep],
        orig_time=annotations.orig_time,
        ch_names=[annotations.ch_names[i] for i in keep],
    )
    raw.set_annotations(mapped)
    return raw


def annotation_samples(raw: mne.io.BaseRaw) -> np.ndarray:
    """Sample of each annotation's onset in the data of ``raw`` (0: its first sample).

    MNE keeps onsets relative to the measurement date, or to time zero without one; either
    way they count ``raw.first_time``, which is not zero once a recording was cropped or
    saved from a longer one.

    Parameters
    ----------
    raw : mne.io.BaseRaw
        The recording.

    Returns
    -------
    samples : ndarray of int, shape (n_annotations,)
        Rounded to the nearest sample.
    """
    return raw.time_as_index(raw.annotations.onset - raw.first_time, use_rounding=True)
