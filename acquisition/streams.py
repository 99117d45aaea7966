"""LSL stream discovery and stream descriptions (channel names, types, units, montage).

Channel metadata follows the XDF meta-data convention: ``desc/channels/channel/{label, type,
unit}`` and positions in ``desc/channels/channel/location/{X, Y, Z}`` in millimetres. A channel of
LSL type ``"counter"`` is a sample counter (0, 1, 2, ...) that receivers use to detect dropped
samples; in MNE it becomes a ``misc`` channel.
"""

from __future__ import annotations

import numbers
import warnings
from dataclasses import dataclass
from uuid import uuid4

import numpy as np

from bci_universum._checks import repeated
from bci_universum.datasets.channels import unique_channel_names
from bci_universum.datasets.units import VOLTAGE_TYPES, Unit, resolve_unit

COUNTER_TYPE = "counter"

_FORMATS = {
    "float32": 1,
    "double64": 2,
    "float64": 2,
    "string": 3,
    "int32": 4,
    "int16": 5,
    "int8": 6,
    "int64": 7,
}

NUMPY_DTYPES = {
    1: np.float32,
    2: np.float64,
    4: np.int32,
    5: np.int16,
    6: np.int8,
    7: np.int64,
}
_NUMERIC_FORMATS = frozenset(name for name, code in _FORMATS.items() if code in NUMPY_DTYPES)

#: Seconds :func:`resolve_stream` keeps listening, after a first stream matched, for others
#: matching the same selection: on one machine a single stream answers liblsl's first resolve
#: wave and the rest its second, 0.5 s later.
AMBIGUITY_WAIT = 1.0


@dataclass(frozen=True)
class StreamSummary:
    """What :func:`list_streams` reports for one stream.

    ``uid`` is liblsl's identifier of the outlet, the one property that tells any two streams
    apart (MNE-LSL gives all its streams the ``source_id`` ``"MNE-LSL"``).
    """

    name: str
    type: str
    n_channels: int
    sfreq: float
    channel_format: str
    source_id: str
    hostname: str
    uid: str = ""

    def __str__(self) -> str:
        return (
            f"{self.name!r} type={self.type!r} {self.n_channels} ch {self.rate} "
            f"{self.channel_format} source_id={self.source_id!r} host={self.hostname!r}"
        )

    @property
    def rate(self) -> str:
        """``"250 Hz"``, or ``"irregular"`` for an irregular-rate stream."""
        return "irregular" if self.sfreq <= 0 else f"{self.sfreq:g} Hz"

    @property
    def is_signal(self) -> bool:
        """True for a regular-rate numeric stream with channels (what a receiver reads)."""
        return self.sfreq > 0 and self.channel_format in _NUMERIC_FORMATS and self.n_channels > 0


def stream_summary(info) -> StreamSummary:
    """The :class:`StreamSummary` of a ``pylsl.StreamInfo``."""
    return StreamSummary(
        name=info.name(),
        type=info.type(),
        n_channels=info.channel_count(),
        sfreq=info.nominal_srate(),
        channel_format=channel_format_name(info.channel_format()),
        source_id=info.source_id(),
        hostname=info.hostname(),
        uid=info.uid(),
    )


def describe_streams(streams) -> str:
    """The streams of an error message: their summaries joined by ``"; "``, or ``"none"``."""
    return "; ".join(str(s) for s in streams) or "none"


def check_signal_stream(stream: StreamSummary) -> None:
    """Raise a ``ValueError`` naming the stream unless it is a regular-rate numeric stream.

    Receivers, recorders, the scope and sessions read signals; a marker stream (irregular rate,
    strings) given in their place is the usual mistake.
    """
    if stream.is_signal:
        return
    if stream.sfreq > 0 and stream.channel_format in _NUMERIC_FORMATS:
        # liblsl divides by the channel count when pulling: the process would die of SIGFPE
        raise ValueError(f"LSL stream {stream.name!r} has no channels: no signal to read.")
    raise ValueError(
        f"LSL stream {stream.name!r} carries markers ({stream.rate} rate, "
        f"{stream.channel_format}), not a signal: receiving, recording and viewing need a "
        "regular-rate numeric stream (a marker stream is recorded with 'stream record "
        "--markers', read with a MarkerReceiver)."
    )


def is_number(value) -> bool:
    """True for a finite real number (not a bool, not text such as ``"160"``)."""
    return isinstance(value, numbers.Real) and not isinstance(value, bool) and np.isfinite(value)


def channel_format_name(fmt: int) -> str:
    """Return the name of a liblsl channel format code (``1`` → ``"float32"``)."""
    for name, code in _FORMATS.items():
        if code == fmt and name != "float64":
            return name
    return "undefined"


def channel_format_code(fmt: str | int) -> int:
    """Return the liblsl channel format code of ``fmt`` (a name like ``"float32"``, or a code)."""
    if isinstance(fmt, (int, np.integer)):
        if int(fmt) not in (1, 2, 3, 4, 5, 6, 7):
            raise ValueError(f"Unknown LSL channel format code {fmt!r}.")
        return int(fmt)
    try:
        return _FORMATS[str(fmt).lower()]
    except KeyError:
        raise ValueError(
            f"Unknown LSL channel format {fmt!r}; expected one of {sorted(_FORMATS)}."
        ) from None


_UPPER = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"  # XPath 1.0 has no lower-case(): translate() instead


def check_stream_name(name: str) -> str:
    """Return ``name`` if it can name an LSL outlet; raise a ``ValueError`` otherwise.

    liblsl refuses an empty name with an unexplained ``RuntimeError`` ("could not create stream
    description object").
    """
    if not isinstance(name, str) or not name.strip():
        raise ValueError(f"An LSL stream name must be a non-empty string, got {name!r}.")
    return name


def _quote(value: str, what: str) -> str:
    value = str(value)
    if "'" not in value:
        return f"'{value}'"
    if '"' not in value:
        return f'"{value}"'
    raise ValueError(f"LSL stream {what} {value!r} cannot contain both quote characters.")


def stream_query(
    name: str | None = None, source_id: str | None = None, stype: str | None = None
) -> str:
    """Return the liblsl XPath predicate selecting streams by name, source_id and/or type.

    The type matches in any case (``"EEG"`` finds an MNE-LSL player's ``"eeg"`` stream, as
    :func:`describe_channels` reads it); name and source_id match exactly.
    """
    parts = []
    if name is not None:
        parts.append(f"name={_quote(name, 'name')}")
    if source_id is not None:
        parts.append(f"source_id={_quote(source_id, 'source_id')}")
    if stype is not None:
        parts.append(
            f"translate(type,'{_UPPER}','{_UPPER.lower()}')={_quote(stype.lower(), 'type')}"
        )
    if not parts:
        raise ValueError("Select a stream by name, source_id and/or type (all were None).")
    return " and ".join(parts)


def describe_query(
    name: str | None = None, source_id: str | None = None, stype: str | None = None
) -> str:
    """Human-readable description of a stream selection, for error messages."""
    parts = [
        f"{key}={value!r}"
        for key, value in (("name", name), ("source_id", source_id), ("type", stype))
        if value is not None
    ]
    return "LSL stream " + " ".join(parts)


def resolve_stream(
    name: str | None = None,
    source_id: str | None = None,
    stype: str | None = None,
    timeout: float = 5.0,
):
    """Find one stream by name, source_id and/or type.

    Parameters
    ----------
    name, source_id, stype : str | None
        The properties the stream must have (at least one).
    timeout : float
        Seconds to wait for the stream.

    Returns
    -------
    info : pylsl.StreamInfo
        The stream's (short) info, to build an inlet from.

    Raises
    ------
    TimeoutError
        When no such stream appears within ``timeout``; the message names the stream.
    ValueError
        When several streams match (two amplifiers or replays of the same name, several EEG
        streams for ``stype="EEG"``, the data and annotation streams of an MNE-LSL player for
        ``source_id="MNE-LSL"``): the message lists them, with what tells them apart. Telling
        needs :data:`AMBIGUITY_WAIT` more seconds after the first match, unless both ``name``
        and ``source_id`` are given.
    """
    import pylsl

    if timeout is None or not timeout > 0:
        raise ValueError(f"timeout must be a positive number of seconds, got {timeout!r}.")
    query = stream_query(name, source_id, stype)
    found = pylsl.resolve_bypred(query, 1, timeout)
    if not found:
        raise TimeoutError(
            f"No {describe_query(name, source_id, stype)} found within {timeout:g} s."
        )
    if name is None or source_id is None:  # a source_id alone is not unique (MNE-LSL)
        # returns as soon as a second stream answers, else after the wait
        found = pylsl.resolve_bypred(query, 2, min(timeout, AMBIGUITY_WAIT)) or found
    if len(found) > 1:
        raise ambiguity_error(describe_query(name, source_id, stype), map(stream_summary, found))
    return found[0]


def ambiguity_error(query: str, matches) -> ValueError:
    """The error for a stream selection (``query``, :func:`describe_query`) that several
    streams (``matches``, :class:`StreamSummary`) answer.

    Its advice names the property that tells them apart as every command gives it (``view``
    takes the stream's name as its argument, ``stream record`` the marker stream's as
    ``--markers``).
    """
    matches = sorted(matches, key=str)
    if len({m.source_id for m in matches}) == len(matches):
        how = (
            "Choose one by its source_id (--source-id, or --marker-source-id for a marker stream)."
        )
    elif len({m.name for m in matches}) == len(matches):
        how = (
            "They share a source_id (MNE-LSL gives all its streams the source_id 'MNE-LSL'): "
            "choose one by its name (--stream NAME, --markers NAME for a marker stream, or "
            "view NAME)."
        )
    else:
        how = (
            "Their names and source_ids do not tell them apart (two MNE-LSL players of one "
            "name): stop the streams you do not mean."
        )
    return ValueError(
        f"{query} is ambiguous, {len(matches)} streams match: {describe_streams(matches)}. {how}"
    )


def list_streams(timeout: float = 1.0) -> list[StreamSummary]:
    """List the LSL streams visible from this machine, sorted by name.

    Parameters
    ----------
    timeout : float
        Seconds to listen for stream announcements.
    """
    import pylsl

    if timeout is None or not timeout > 0:
        raise ValueError(f"timeout must be a positive number of seconds, got {timeout!r}.")
    summaries = [stream_summary(info) for info in pylsl.resolve_streams(timeout)]
    return sorted(summaries, key=lambda s: (s.name, s.source_id))


def make_stream_info(
    name: str,
    ch_names: list[str],
    sfreq: float,
    *,
    ch_types: str | list[str] = "eeg",
    units: str | list[str] = "microvolts",
    stype: str = "EEG",
    channel_format: str | int = "float32",
    source_id: str | None = None,
    positions: dict[str, tuple[float, float, float]] | None = None,
    manufacturer: str = "bci_universum",
):
    """Build a ``pylsl.StreamInfo`` with channel labels, types, units and positions.

    Parameters
    ----------
    name : str
        Stream name.
    ch_names : list of str
        Channel labels.
    sfreq : float
        Nominal sampling rate in Hz (0 for an irregular stream).
    ch_types : str | list of str
        Channel types (MNE names such as ``"eeg"``, ``"stim"``, ``"misc"``, or ``"counter"``
        for a sample-counter channel), one for all or one per channel.
    units : str | list of str
        Units, e.g. ``"microvolts"`` or ``"volts"``; one for all or one per channel.
    stype : str
        Stream content type (``"EEG"``).
    channel_format : str | int
        ``"float32"``, ``"double64"``, ``"int32"``, ... or a liblsl code.
    source_id : str | None
        Unique source identifier; a random one when None.
    positions : dict | None
        Channel positions in metres (MNE head coordinates), written in millimetres.
    manufacturer : str
        Written to ``desc/acquisition/manufacturer``.
    """
    import pylsl

    check_stream_name(name)
    ch_names = [str(ch) for ch in ch_names]
    n = len(ch_names)
    if n == 0:
        raise ValueError("A stream needs at least one channel (ch_names is empty).")
    if len(set(ch_names)) != n:
        dup = repeated(ch_names)
        raise ValueError(f"Duplicate channel names in stream {name!r}: {dup}.")
    if not sfreq >= 0:
        raise ValueError(f"sfreq must be >= 0 Hz, got {sfreq!r}.")
    ch_types = _per_channel(ch_types, n, "ch_types")
    units = _per_channel(units, n, "units")
    fmt = channel_format_code(channel_format)
    info = pylsl.StreamInfo(
        name, stype, n, float(sfreq), fmt, source_id if source_id else uuid4().hex
    )
    desc = info.desc()
    desc.append_child("acquisition").append_child_value("manufacturer", manufacturer)
    channels = desc.append_child("channels")
    for ch, kind, unit in zip(ch_names, ch_types, units, strict=True):
        node = channels.append_child("channel")
        node.append_child_value("label", ch)
        node.append_child_value("type", kind.upper() if kind != COUNTER_TYPE else COUNTER_TYPE)
        node.append_child_value("unit", unit)
        if positions is not None and ch in positions:
            pos = np.asarray(positions[ch], dtype=float) * 1000.0
            if np.all(np.isfinite(pos)):
                location = node.append_child("location")
                for axis, value in zip("XYZ", pos, strict=True):
                    location.append_child_value(axis, repr(float(value)))
    return info


def _per_channel(value, n: int, what: str) -> list[str]:
    if isinstance(value, str):
        return [value] * n
    value = [str(v) for v in value]
    if len(value) != n:
        raise ValueError(f"{what} has {len(value)} entries for {n} channels.")
    return value


#: The unit of the voltage channels on the project's own outlets (Player, SimulatedSource):
#: microvolts, the XDF meta-data convention of LSL amplifiers (and of LabRecorder, pyxdf and
#: EEGLAB). ``voltage_unit="volts"`` sends MNE's SI convention instead, which mne-lsl's
#: ``StreamLSL`` hands out unchanged.
DEFAULT_VOLTAGE_UNIT = "microvolts"


def check_voltage_unit(voltage_unit: str) -> str:
    """Return ``voltage_unit`` if it is a voltage unit (``"microvolts"``, ``"volts"``, ...)."""
    voltages = ("V", "mV", "µV", "nV")
    if not isinstance(voltage_unit, str) or resolve_unit(voltage_unit, "eeg").name not in voltages:
        raise ValueError(
            f"Unknown voltage_unit {voltage_unit!r}; expected e.g. 'microvolts' or 'volts'."
        )
    return voltage_unit


def stream_info_from_mne_info(
    info,
    name: str,
    source_id: str | None = None,
    *,
    stype: str = "EEG",
    channel_format: str | int = "float32",
    voltage_unit: str = DEFAULT_VOLTAGE_UNIT,
):
    """Describe an MNE ``Info`` as a ``pylsl.StreamInfo``.

    Voltage channels (EEG, EOG, EMG, ECG, sEEG, ECoG) get ``voltage_unit``; the others get
    ``"n/a"``. Whoever pushes the data must scale it to these units: divide MNE's SI data by
    :func:`si_scalings` of the returned info. Montage positions are written when present.

    Parameters
    ----------
    info : mne.Info
        Channel names, types, sampling rate and montage.
    name : str
        Stream name.
    source_id : str | None
        Unique source identifier; a random one when None.
    stype : str
        Stream content type.
    channel_format : str | int
        LSL channel format.
    voltage_unit : str
        Unit of the voltage channels on the stream (``"microvolts"`` or ``"volts"``).
    """
    check_voltage_unit(voltage_unit)
    ch_types = info.get_channel_types()
    units = [voltage_unit if kind in VOLTAGE_TYPES else "n/a" for kind in ch_types]
    positions = {}
    for ch in info["chs"]:
        loc = np.asarray(ch["loc"][:3], dtype=float)
        if np.all(np.isfinite(loc)) and np.any(loc != 0):
            positions[ch["ch_name"]] = tuple(loc)
    return make_stream_info(
        name,
        info["ch_names"],
        info["sfreq"],
        ch_types=ch_types,
        units=units,
        stype=stype,
        channel_format=channel_format,
        source_id=source_id,
        positions=positions or None,
    )


@dataclass(frozen=True)
class ChannelDescription:
    """One channel of a stream description."""

    name: str
    type: str
    unit: str
    position: tuple[float, float, float] | None


def describe_channels(info) -> list[ChannelDescription]:
    """Read the channel labels, types, units and positions (metres) of a ``pylsl.StreamInfo``.

    Channels without a description get the names ``"0", "1", ...``, the stream's type in lower
    case (``"eeg"`` for an ``EEG`` stream, else ``"misc"``) and an empty unit.
    """
    n = info.channel_count()
    default_type = "eeg" if info.type().lower() == "eeg" else "misc"
    described = []
    node = info.desc().child("channels").child("channel")
    while not node.empty() and len(described) < n:
        label = node.child_value("label") or str(len(described))
        kind = (node.child_value("type") or default_type).lower()
        unit = node.child_value("unit")
        location = node.child("location")
        position = None
        if not location.empty():
            try:
                position = tuple(float(location.child_value(a)) / 1000.0 for a in "XYZ")
            except ValueError:
                position = None
        described.append(ChannelDescription(label, kind, unit, position))
        node = node.next_sibling("channel")
    for k in range(len(described), n):
        described.append(ChannelDescription(str(k), default_type, "", None))
    return described


def channel_units(info, *, warn: bool = True) -> list[Unit]:
    """The unit of every channel of a ``pylsl.StreamInfo``, resolved by :func:`resolve_unit`.

    Parameters
    ----------
    info : pylsl.StreamInfo
        The stream description.
    warn : bool
        Warn (naming the channel and the text) about each unit that is not understood: its
        values are then kept as they are, with a factor of 1.
    """
    channels = describe_channels(info)
    units = [resolve_unit(ch.unit, ch.type) for ch in channels]
    if warn:
        _warn_unknown_units(info.name(), [ch.name for ch in channels], units)
    return units


def _warn_unknown_units(stream: str, ch_names: list[str], units: list[Unit]) -> None:
    """Warn about every channel whose unit is not understood."""
    for ch_name, unit in zip(ch_names, units, strict=True):
        if not unit.known:
            warnings.warn(
                f"Channel {ch_name!r} of LSL stream {stream!r} declares the unknown unit "
                f"{unit.declared!r}; its values are kept as they are (factor 1). Known units "
                "are names (microvolts), symbols (µV, uV, mV, V, fT) and mne-lsl "
                "power-of-ten codes (-6).",
                RuntimeWarning,
                stacklevel=3,
            )


def si_scalings(info) -> np.ndarray:
    """Per-channel factors turning stream values into SI units (e.g. 1e-6 for microvolts).

    Channels without a physical unit get 1; so do channels whose unit is not understood, with
    a warning naming the channel and the unit (see :func:`resolve_unit`).
    """
    return np.array([unit.scale for unit in channel_units(info)])


def declare_speed(info, speed: float) -> None:
    """Write a paced replay's or simulation's ``speed`` into ``desc/acquisition/speed``.

    Such a stream declares the nominal rate of its signal (a 160 Hz recording stays 160 Hz for
    every consumer, its recordings and decoders) but stamps its samples ``speed`` times
    faster, in real time; :func:`stream_speed` reads it back so that a receiver tells this
    pace from lost samples. Nothing is written at speed 1.
    """
    if speed != 1.0:
        acquisition = info.desc().child("acquisition")
        if acquisition.empty():
            acquisition = info.desc().append_child("acquisition")
        acquisition.append_child_value("speed", repr(float(speed)))


def stream_speed(info) -> float:
    """The ``speed`` a stream declares (:func:`declare_speed`): its timestamps advance
    ``speed / nominal_srate`` seconds per sample. 1 when it declares none (or nonsense)."""
    try:
        speed = float(info.desc().child("acquisition").child_value("speed") or 1.0)
    except ValueError:
        return 1.0
    return speed if np.isfinite(speed) and speed > 0 else 1.0


def counter_channel_index(info) -> int | None:
    """Index of the first channel of type ``"counter"``, or None."""
    for k, ch in enumerate(describe_channels(info)):
        if ch.type == COUNTER_TYPE:
            return k
    return None


def mne_info_from_stream_info(info):
    """Build an MNE ``Info`` from a ``pylsl.StreamInfo`` (with its description).

    Channel types unknown to MNE (and ``"counter"``) become ``misc``; positions, when every
    EEG channel has one, become the montage.

    Raises
    ------
    ValueError
        For an irregular-rate or string stream, which has no MNE ``Info``.
    """
    import mne

    if info.nominal_srate() <= 0:
        raise ValueError(
            f"LSL stream {info.name()!r} has an irregular rate; it cannot become an MNE Info."
        )
    if info.channel_format() == _FORMATS["string"]:
        raise ValueError(f"LSL stream {info.name()!r} carries strings, not signals.")
    known = set(mne.io.get_channel_type_constants())
    channels = describe_channels(info)
    names = unique_channel_names([ch.name for ch in channels])
    types = [ch.type if ch.type in known else "misc" for ch in channels]
    mne_info = mne.create_info(names, info.nominal_srate(), types)
    positions = {
        name: ch.position
        for name, ch, kind in zip(names, channels, types, strict=True)
        if ch.position is not None and kind == "eeg"
    }
    n_eeg = sum(kind == "eeg" for kind in types)
    if positions and len(positions) == n_eeg:
        montage = mne.channels.make_dig_montage(ch_pos=positions, coord_frame="head")
        mne_info.set_montage(montage, on_missing="ignore")
    return mne_info


class OutletOwner:
    """Owns one pylsl outlet in ``self._outlet``: ``close`` destroys it, and the object is a
    context manager that closes it on exit (close the inlets reading it first)."""

    _outlet = None

    def close(self) -> None:
        """Destroy the outlet."""
        self._outlet = None

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        self.close()
