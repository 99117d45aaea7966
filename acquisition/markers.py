"""The marker protocol, its LSL string stream, and the marker streams of other tools.

The protocol (``kind/name`` markers, :func:`~bci_universum.markers.validate_marker`) and the
marker maps live in :mod:`bci_universum.markers`. Markers travel on one irregular-rate
``cf_string`` LSL stream, each pushed with an explicit ``local_clock()`` timestamp, and are
recorded as MNE annotations with the same text.

:class:`MarkerReceiver` also reads the marker streams other tools send (:data:`ENCODINGS`):
mne-lsl's annotation streams in both encodings (``"one-hot"``: one float channel per
description holding the duration, ``-1`` for none; ``"string"``: one string channel) and
single-channel numeric event codes. A *marker map*
(:func:`~bci_universum.markers.resolve_marker_map`) turns their
descriptions (``T0``, ``T1``, ``3``) into protocol markers (``universum/rest``, ``cue/left``).
"""

from __future__ import annotations

import logging
import math
from collections.abc import Mapping
from dataclasses import dataclass
from uuid import uuid4

from bci_universum.markers import (
    MARKER_KINDS,
    MarkerError,
    map_marker,
    resolve_marker_map,
    validate_marker,
)

from ._inlet_thread import InletThread
from .streams import OutletOwner, check_stream_name, describe_channels, stream_summary

logger = logging.getLogger(__name__)

MARKER_STREAM_TYPE = "Markers"


#: How a marker stream carries its markers (see :class:`MarkerReceiver`).
ENCODINGS = ("string", "one-hot", "code")


def _code_text(value: float) -> str:
    """``3.0`` → ``"3"``, ``1234567.0`` → ``"1234567"``, ``2.5`` → ``"2.5"``."""
    value = float(value)
    return str(int(value)) if value.is_integer() else repr(value)


@dataclass(frozen=True)
class Marker:
    """One marker: its text, its LSL timestamp (``local_clock()`` seconds) and its duration."""

    text: str
    timestamp: float
    duration: float = 0.0

    @property
    def kind(self) -> str:
        return self.text.split("/", 1)[0]

    @property
    def name(self) -> str:
        return self.text.split("/", 1)[1] if "/" in self.text else ""


class MarkerOutlet(OutletOwner):
    """Publish protocol markers on an irregular-rate LSL string stream.

    Parameters
    ----------
    name : str
        Stream name.
    source_id : str | None
        Unique source identifier; a random one when None.
    kinds : tuple of str
        The marker kinds accepted (default: :data:`MARKER_KINDS`).

    Examples
    --------
    >>> with MarkerOutlet("bci-markers") as outlet:  # doctest: +SKIP
    ...     outlet.wait_for_consumers(5.0)
    ...     outlet.push("cue/left")
    """

    def __init__(
        self,
        name: str = "bci-universum-markers",
        source_id: str | None = None,
        kinds: tuple[str, ...] = MARKER_KINDS,
    ) -> None:
        import pylsl

        self.name = check_stream_name(name)
        self.source_id = source_id if source_id else uuid4().hex
        self.kinds = tuple(kinds)
        self.info = pylsl.StreamInfo(
            name, MARKER_STREAM_TYPE, 1, pylsl.IRREGULAR_RATE, pylsl.cf_string, self.source_id
        )
        self.info.desc().append_child_value("protocol", "kind/name")
        self.info.desc().append_child_value("kinds", ",".join(self.kinds))
        self._outlet = pylsl.StreamOutlet(self.info)

    def push(self, marker: str, timestamp: float | None = None) -> float:
        """Validate and push one marker; return the LSL timestamp it carries.

        Parameters
        ----------
        marker : str
            ``kind/name`` text.
        timestamp : float | None
            LSL time of the event (``pylsl.local_clock()`` seconds); now when None.
        """
        import pylsl

        if self._outlet is None:
            raise RuntimeError(f"Marker outlet {self.name!r} is closed.")
        validate_marker(marker, self.kinds)
        stamp = pylsl.local_clock() if timestamp is None else float(timestamp)
        self._outlet.push_sample([marker], stamp)
        return stamp

    def wait_for_consumers(self, timeout: float) -> bool:
        """Wait until an inlet listens (markers pushed before that are lost); True if one does."""
        if self._outlet is None:
            raise RuntimeError(f"Marker outlet {self.name!r} is closed.")
        return bool(self._outlet.wait_for_consumers(timeout))

    def have_consumers(self) -> bool:
        """True when at least one inlet is connected."""
        return self._outlet is not None and bool(self._outlet.have_consumers())


class MarkerReceiver(InletThread):
    """Receive markers in a background thread, with clock-corrected LSL timestamps.

    Every marker received is kept (in arrival order). :meth:`get_markers` drains the ones not yet
    returned; :meth:`read_since` lets other consumers (the recorder) keep their own position.
    Markers outside the protocol are kept too, listed in :attr:`invalid_markers` and logged.

    The stream may carry its markers in any of :data:`ENCODINGS` (found when connecting, in
    :attr:`encoding`):

    ``"string"``
        one string channel holding the text (this project's markers; mne-lsl's annotation
        stream with ``annotations_encoding="string"``);
    ``"one-hot"``
        mne-lsl's default annotation stream: irregular rate, one numeric channel per
        description (the channel label), holding the annotation's duration in seconds (``-1``
        for a duration of 0) on the channel of the description and 0 elsewhere;
    ``"code"``
        one numeric channel of event codes, whose text is the number (``3.0`` → ``"3"``).

    Parameters
    ----------
    name, source_id, stype : str | None
        Which stream (at least one); ``stype`` defaults to ``"Markers"``-agnostic matching.
    timeout : float
        Seconds to wait for the stream when starting.
    kinds : tuple of str
        Marker kinds of the protocol.
    processing_flags : str | sequence of str | int | None
        liblsl post-processing (``"clocksync"`` by default: timestamps in this machine's clock).
    marker_map : str | mapping | None
        Applied to every description as it arrives (see
        :func:`~bci_universum.markers.resolve_marker_map`): a preset
        (``"eegmmidb"``: ``T0/T1/T2`` → ``universum/rest``, ``cue/left``, ``cue/right``), a
        ``.json`` file, ``"A=B,..."`` pairs or a mapping. Descriptions mapped to None are dropped
        (counted in :attr:`n_dropped`).
    """

    def __init__(
        self,
        name: str | None = None,
        *,
        source_id: str | None = None,
        stype: str | None = None,
        timeout: float = 5.0,
        kinds: tuple[str, ...] = MARKER_KINDS,
        processing_flags=("clocksync",),
        marker_map: str | Mapping[str, str | None] | None = None,
    ) -> None:
        super().__init__(name, source_id, stype, timeout, processing_flags, max_buflen=360)
        self.kinds = tuple(kinds)
        self.marker_map = resolve_marker_map(marker_map)
        self._markers: list[Marker] = []
        self._read = 0
        self.invalid_markers: list[Marker] = []
        self.n_dropped = 0
        self.encoding: str | None = None
        self._labels: list[str] = []

    def _on_connect(self, info) -> None:
        import pylsl

        n_ch, fmt, rate = info.channel_count(), info.channel_format(), info.nominal_srate()
        channels = describe_channels(info)
        annotations = info.type().lower() == "annotations" or all(
            ch.type == "annotations" for ch in channels
        )
        if fmt == pylsl.cf_string and n_ch == 1:
            self.encoding = "string"
        elif fmt != pylsl.cf_string and rate == 0 and annotations and n_ch > 0:
            self.encoding = "one-hot"
            self._labels = [ch.name for ch in channels]
        elif fmt != pylsl.cf_string and rate == 0 and n_ch == 1:
            self.encoding = "code"
        else:
            stream = stream_summary(info)
            raise ValueError(
                f"{self.description} is not a marker stream: expected 1 string channel, an "
                "mne-lsl annotation stream (irregular rate, one numeric channel per description) "
                f"or 1 numeric channel of event codes at irregular rate; got {n_ch} "
                f"{stream.channel_format} channel(s) at {stream.rate} rate."
            )

    def _decode(self, samples, stamps) -> list[Marker]:
        pairs = zip(samples, stamps, strict=True)
        if self.encoding == "string":
            return [Marker(str(sample[0]), float(stamp)) for sample, stamp in pairs]
        if self.encoding == "code":
            return [Marker(_code_text(sample[0]), float(stamp)) for sample, stamp in pairs]
        out = []
        for sample, stamp in pairs:
            for label, value in zip(self._labels, sample, strict=True):
                if value != 0 and math.isfinite(value):
                    out.append(Marker(label, float(stamp), max(float(value), 0.0)))
        return out

    def _pull(self, inlet, timeout: float) -> int:
        samples, stamps = inlet.pull_chunk(timeout=timeout, max_samples=1024)
        if not stamps:
            return 0
        new, invalid, n_dropped = [], [], 0
        for marker in self._decode(samples, stamps):
            text = map_marker(marker.text, self.marker_map)
            if text is None:
                n_dropped += 1
                continue
            marker = Marker(text, marker.timestamp, marker.duration)
            new.append(marker)
            try:
                validate_marker(marker.text, self.kinds)
            except MarkerError as err:
                logger.warning("%s: %s", self.description, err)
                invalid.append(marker)
        with self._lock:
            self._markers.extend(new)
            self.invalid_markers.extend(invalid)
            self.n_dropped += n_dropped
        return len(stamps)

    def get_markers(self) -> list[Marker]:
        """Return the markers received since the last call."""
        self._raise_error()
        with self._lock:
            out = self._markers[self._read :]
            self._read = len(self._markers)
        return out

    def read_since(self, index: int) -> tuple[list[Marker], int]:
        """Return the markers from position ``index`` on, and the next position."""
        with self._lock:
            out = self._markers[index:]
            return out, len(self._markers)

    @property
    def n_markers(self) -> int:
        """Number of markers received so far."""
        with self._lock:
            return len(self._markers)

    def _raise_error(self) -> None:
        with self._lock:
            err = self._error
        if err is not None:
            raise RuntimeError(f"Receiving markers from {self.description} failed: {err}") from err
