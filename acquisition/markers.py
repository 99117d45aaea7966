"""The marker protocol and its LSL string stream.

A marker is ``kind/name`` (``cue/left``, ``universum/rest``, ``trial/start``): ``kind`` is one of
:data:`MARKER_KINDS`, ``name`` is made of letters, digits and ``_ - . +``, optionally split by
further ``/``. Markers travel on one irregular-rate ``cf_string`` LSL stream, each pushed with an
explicit ``local_clock()`` timestamp, and are recorded as MNE annotations with the same text.
"""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass
from uuid import uuid4

from ._inlet_thread import InletThread

logger = logging.getLogger(__name__)

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
MARKER_STREAM_TYPE = "Markers"
_NAME = re.compile(r"^[A-Za-z0-9_.+\-]+(/[A-Za-z0-9_.+\-]+)*$")


class MarkerError(ValueError):
    """A marker outside the protocol."""


@dataclass(frozen=True)
class Marker:
    """One marker: its text and its LSL timestamp (``local_clock()`` seconds)."""

    text: str
    timestamp: float

    @property
    def kind(self) -> str:
        return self.text.split("/", 1)[0]

    @property
    def name(self) -> str:
        return self.text.split("/", 1)[1] if "/" in self.text else ""


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


class MarkerOutlet:
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

        self.name = name
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

    def close(self) -> None:
        """Destroy the outlet (close inlets first)."""
        self._outlet = None

    def __enter__(self) -> MarkerOutlet:
        return self

    def __exit__(self, *exc) -> None:
        self.close()


class MarkerReceiver(InletThread):
    """Receive markers in a background thread, with clock-corrected LSL timestamps.

    Every marker received is kept (in arrival order). :meth:`get_markers` drains the ones not yet
    returned; :meth:`read_since` lets other consumers (the recorder) keep their own position.
    Markers outside the protocol are kept too, listed in :attr:`invalid_markers` and logged.

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
    ) -> None:
        super().__init__(name, source_id, stype, timeout, processing_flags, max_buflen=360)
        self.kinds = tuple(kinds)
        self._markers: list[Marker] = []
        self._read = 0
        self.invalid_markers: list[Marker] = []

    def _on_connect(self, info) -> None:
        import pylsl

        if info.channel_format() != pylsl.cf_string or info.channel_count() != 1:
            raise ValueError(
                f"{self.description} is not a marker stream: expected 1 string channel, got "
                f"{info.channel_count()} channel(s) of format {info.channel_format()}."
            )

    def _pull(self, inlet, timeout: float) -> int:
        samples, stamps = inlet.pull_chunk(timeout=timeout, max_samples=1024)
        if not stamps:
            return 0
        new = [Marker(str(s[0]), float(t)) for s, t in zip(samples, stamps, strict=True)]
        invalid = []
        for marker in new:
            try:
                validate_marker(marker.text, self.kinds)
            except MarkerError as err:
                logger.warning("%s: %s", self.description, err)
                invalid.append(marker)
        with self._lock:
            self._markers.extend(new)
            self.invalid_markers.extend(invalid)
        return len(new)

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
