"""Continuous LSL stream receiver: background acquisition into a ring buffer.

The acquisition thread drains the inlet until it is empty on every pass (so readers always see
the newest data), writes the samples into a ring buffer, and reports what went wrong as
:class:`StreamEvent` entries: dropped samples (from a sample-counter channel when the stream has
one, else from timestamp gaps against the nominal rate), counter resets, silences, resumptions
after an outage, and non-finite samples (kept and flagged, never dropped).
"""

from __future__ import annotations

import queue
from dataclasses import dataclass

import numpy as np

from bci_universum.datasets.channels import channel_mismatch

from ._inlet_thread import InletThread, processing_flags_code
from .streams import (
    NUMPY_DTYPES,
    channel_format_code,
    channel_format_name,
    check_signal_stream,
    counter_channel_index,
    describe_channels,
    is_number,
    stream_speed,
    stream_summary,
)


class StreamSilenceError(TimeoutError):
    """The stream sent nothing for longer than the receiver's ``silence_timeout``."""


@dataclass(frozen=True)
class StreamEvent:
    """Something the receiver noticed in the stream.

    Attributes
    ----------
    kind : str
        ``"gap"`` (``n_samples`` samples missing before ``time``), ``"counter_reset"`` (the
        sample counter went backwards: the source restarted, and its first ``n_samples``
        samples, counted from 0, pushed before this receiver reconnected, never arrived),
        ``"silence"`` (no data for
        ``silence_timeout``; ``time`` is the local clock when noticed), ``"resumed"`` (data again
        after a silence), ``"nonfinite"`` (``n_samples`` samples with NaN/inf from ``time`` on).
    time : float
        LSL time (``local_clock()`` seconds) of the first sample concerned.
    n_samples : int
        Number of samples concerned (0 when not applicable).
    detail : str
        Human-readable description.
    """

    kind: str
    time: float
    n_samples: int
    detail: str


class StreamReceiver(InletThread):
    """Receive a regular-rate LSL stream in a background thread into a ring buffer.

    Parameters
    ----------
    name, source_id, stype : str | None
        Which stream: its name, source_id and/or type (at least one).
    bufsize : float, default=30.0
        Length of the ring buffer in seconds.
    timeout : float, default=5.0
        Seconds to wait for the stream to appear and answer when starting.
    silence_timeout : float | None, default=5.0
        After this many seconds without data a ``"silence"`` event is reported and
        :meth:`get_window` raises :class:`StreamSilenceError` until data flows again (liblsl
        reconnects to a restarted source with the same ``source_id``). None disables it.
    n_channels, sfreq, ch_names, channel_format : optional
        Expectations checked when connecting (a clear ``ValueError`` when they do not hold);
        ``channel_format`` is a name such as ``"float32"`` or a liblsl code.
    counter_channel : str | int | None
        A channel carrying a sample counter (0, 1, 2, ...), by name or index, used to detect
        dropped samples exactly. None: the first channel of LSL type ``"counter"``, if any;
        otherwise dropped samples are detected from timestamp gaps.
    gap_tolerance : float, default=1.0
        Without a counter, a timestamp step longer than ``(1 + gap_tolerance)`` sample periods
        is reported as a gap.
    processing_flags : str | sequence of str | int | None
        liblsl timestamp post-processing: ``"clocksync"`` (default: timestamps in this
        machine's clock), ``"dejitter"``, ``"monotonize"``, ``"threadsafe"`` or ``"all"``.
        liblsl's dejitter smooths timestamp gaps away, so with ``"dejitter"`` dropped samples
        are detected only through a counter channel.
    max_buflen : int, default=360
        Seconds of data liblsl itself buffers for this inlet (liblsl's own default).
    max_chunk : int, default=4096
        Largest number of samples pulled at once (the thread loops until the inlet is empty).

    Notes
    -----
    Stop receivers before destroying the outlets they read (inlets are closed first).
    """

    def __init__(
        self,
        name: str | None = None,
        *,
        source_id: str | None = None,
        stype: str | None = None,
        bufsize: float = 30.0,
        timeout: float = 5.0,
        silence_timeout: float | None = 5.0,
        n_channels: int | None = None,
        sfreq: float | None = None,
        ch_names: list[str] | None = None,
        channel_format: str | int | None = None,
        counter_channel: str | int | None = None,
        gap_tolerance: float = 1.0,
        processing_flags=("clocksync",),
        max_buflen: int = 360,
        max_chunk: int = 4096,
    ) -> None:
        super().__init__(name, source_id, stype, timeout, processing_flags, max_buflen)
        if not bufsize > 0:
            raise ValueError(f"bufsize must be a positive number of seconds, got {bufsize!r}.")
        if silence_timeout is not None and not silence_timeout > 0:
            raise ValueError(f"silence_timeout must be positive or None, got {silence_timeout!r}.")
        if not gap_tolerance > 0:
            raise ValueError(f"gap_tolerance must be positive, got {gap_tolerance!r}.")
        if int(max_chunk) < 1:
            raise ValueError(f"max_chunk must be >= 1, got {max_chunk!r}.")
        if sfreq is not None and not (is_number(sfreq) and sfreq > 0):
            raise ValueError(f"sfreq must be a positive number of Hz or None, got {sfreq!r}.")
        if n_channels is not None and not (
            isinstance(n_channels, int | np.integer)
            and not isinstance(n_channels, bool)
            and n_channels > 0
        ):
            raise ValueError(f"n_channels must be a positive integer or None, got {n_channels!r}.")
        if isinstance(ch_names, str):
            raise ValueError(
                f"ch_names must be a list of channel names, got the string {ch_names!r}."
            )
        self.bufsize = float(bufsize)
        self.silence_timeout = silence_timeout
        self.n_channels = n_channels
        self.sfreq = sfreq
        self.ch_names = list(ch_names) if ch_names is not None else None
        self.channel_format = channel_format
        self._expected_format = (
            None if channel_format is None else channel_format_code(channel_format)
        )
        self.counter_channel = counter_channel
        self.gap_tolerance = float(gap_tolerance)
        self.max_chunk = int(max_chunk)
        self._subscribers: tuple[queue.SimpleQueue, ...] = ()
        self._reset_state()

    def _reset_state(self) -> None:
        self._events: list[StreamEvent] = []
        self._events_read = 0
        self._n_total = 0
        self._window_mark = 0
        self._last_ts = np.nan
        self._last_counter: float | None = None
        self._last_arrival: float | None = None
        self._silent = False

    # -- connection ---------------------------------------------------------------------------

    def _prepare(self) -> tuple:
        self._reset_state()
        return super()._prepare()

    def _on_connect(self, info) -> None:
        import pylsl

        stream = f"LSL stream {info.name()!r}"
        fmt = info.channel_format()
        check_signal_stream(stream_summary(info))
        if self._expected_format is not None and fmt != self._expected_format:
            raise ValueError(
                f"{stream} carries {channel_format_name(fmt)}, expected "
                f"{channel_format_name(self._expected_format)}."
            )
        n_ch = info.channel_count()
        if self.n_channels is not None and n_ch != self.n_channels:
            raise ValueError(f"{stream} has {n_ch} channels, expected {self.n_channels}.")
        if self.sfreq is not None and not np.isclose(info.nominal_srate(), self.sfreq):
            raise ValueError(
                f"{stream} samples at {info.nominal_srate():g} Hz, expected {self.sfreq:g} Hz."
            )
        names = [ch.name for ch in describe_channels(info)]
        if self.ch_names is not None and names != self.ch_names:
            raise ValueError(
                f"{stream} has channels {names}, expected {self.ch_names} "
                f"({channel_mismatch(self.ch_names, names, 'it')})."
            )
        self._counter_index = self._find_counter(info, names)
        self._stream_sfreq = info.nominal_srate()
        # samples per second of timestamps: a replay at speed 0.5 is no gap every other sample
        self._stamp_rate = self._stream_sfreq * stream_speed(info)
        self._stream_ch_names = names
        self._capacity = max(int(np.ceil(self.bufsize * self._stream_sfreq)), 1)
        self._data = np.zeros((self._capacity, n_ch))
        self._ts = np.zeros(self._capacity)
        self._dest = np.empty((self.max_chunk, n_ch), dtype=NUMPY_DTYPES[fmt])
        self._float_data = fmt in (pylsl.cf_float32, pylsl.cf_double64)
        self._last_arrival = pylsl.local_clock()

    def _find_counter(self, info, names: list[str]) -> int | None:
        if self.counter_channel is None:
            return counter_channel_index(info)
        if isinstance(self.counter_channel, (int, np.integer)):
            if not 0 <= self.counter_channel < len(names):
                raise ValueError(
                    f"counter_channel {self.counter_channel} is out of range for LSL stream "
                    f"{info.name()!r} with {len(names)} channels."
                )
            return int(self.counter_channel)
        if self.counter_channel not in names:
            raise ValueError(
                f"counter_channel {self.counter_channel!r} is not a channel of LSL stream "
                f"{info.name()!r} ({names})."
            )
        return names.index(self.counter_channel)

    # -- acquisition thread -------------------------------------------------------------------

    def _pull(self, inlet, timeout: float) -> int:
        import pylsl

        _, stamps = inlet.pull_chunk(
            timeout=timeout,
            max_samples=self.max_chunk,
            dest_obj=self._dest,
            min_samples=1,
            as_numpy=True,
        )
        now = pylsl.local_clock()
        n = len(stamps)
        if n == 0:
            self._check_silence(now)
            return 0
        self._ingest(self._dest[:n].astype(np.float64), np.asarray(stamps, dtype=float), now)
        return n

    def _check_silence(self, now: float) -> None:
        if self.silence_timeout is None or self._silent:
            return
        quiet = now - self._last_arrival
        if quiet > self.silence_timeout:
            self._silent = True
            self._add_events(
                [
                    StreamEvent(
                        "silence",
                        now,
                        0,
                        f"{self.description} sent nothing for {quiet:.2f} s "
                        f"(silence_timeout={self.silence_timeout:g} s).",
                    )
                ]
            )

    def _ingest(self, data: np.ndarray, stamps: np.ndarray, now: float) -> None:
        events = []
        if self._silent:
            events.append(
                StreamEvent(
                    "resumed",
                    float(stamps[0]),
                    0,
                    f"{self.description} sends again after "
                    f"{now - self._last_arrival:.2f} s without data.",
                )
            )
            self._silent = False
        events += self._detect_gaps(data, stamps)
        if self._float_data:
            bad = ~np.isfinite(data)
            if bad.any():
                rows = np.flatnonzero(bad.any(axis=1))
                chans = [self._stream_ch_names[k] for k in np.flatnonzero(bad.any(axis=0))]
                events.append(
                    StreamEvent(
                        "nonfinite",
                        float(stamps[rows[0]]),
                        len(rows),
                        f"{len(rows)} sample(s) with NaN/inf on channel(s) {chans} "
                        f"of {self.description}.",
                    )
                )
        n = len(stamps)
        with self._lock:
            # under the lock with the events: an unsubscribed reader has both or neither
            for q in self._subscribers:
                q.put((data, stamps))
            keep = min(n, self._capacity)
            pos = (self._n_total + n - keep) % self._capacity
            first = min(keep, self._capacity - pos)
            self._data[pos : pos + first] = data[n - keep : n - keep + first]
            self._ts[pos : pos + first] = stamps[n - keep : n - keep + first]
            self._data[: keep - first] = data[n - keep + first :]
            self._ts[: keep - first] = stamps[n - keep + first :]
            self._n_total += n
            self._last_ts = float(stamps[-1])
            self._last_arrival = now
            self._events.extend(events)

    def _detect_gaps(self, data: np.ndarray, stamps: np.ndarray) -> list[StreamEvent]:
        if self._counter_index is not None:
            return self._counter_events(data[:, self._counter_index], stamps)
        if self._flags & processing_flags_code("dejitter"):
            return []
        previous = self._last_ts
        steps = np.diff(stamps, prepend=stamps[0] if np.isnan(previous) else previous)
        missing = np.rint(steps * self._stamp_rate).astype(np.int64) - 1
        where = np.flatnonzero((steps * self._stamp_rate > 1 + self.gap_tolerance) & (missing > 0))
        return [
            StreamEvent(
                "gap",
                float(stamps[i]),
                int(missing[i]),
                f"{missing[i]} sample(s) missing before t={stamps[i]:.4f} "
                f"({steps[i] * 1e3:.1f} ms step) in {self.description}.",
            )
            for i in where
        ]

    def _counter_events(self, counter: np.ndarray, stamps: np.ndarray) -> list[StreamEvent]:
        """Gaps and restarts from the counter channel.

        A source that restarts counts from 0 again: what it pushed before this inlet reconnected
        never arrives. Its counter may go backwards (a ``counter_reset`` of ``counter``
        samples missed) or, when the new source ran longer than the old one before the
        reconnection, forwards; the clock tells the two apart: a forward jump whose counter
        places sample 0 after the previous sample received is a restart, not a gap.
        """
        previous = self._last_counter
        self._last_counter = float(counter[-1])
        steps = np.diff(counter, prepend=counter[0] - 1 if previous is None else previous)
        before = np.r_[self._last_ts, stamps[:-1]]
        origins = stamps - counter / self._stamp_rate
        slack = 0.05 + 2.0 / self._stamp_rate
        out = []
        for i in np.flatnonzero(steps != 1):
            restarted = steps[i] < 1 or origins[i] > before[i] - slack
            missing = max(round(counter[i]), 0) if restarted else round(steps[i]) - 1
            if restarted:
                detail = (
                    f"sample counter of {self.description} went from "
                    f"{counter[i] - steps[i]:.0f} to {counter[i]:.0f} (source restarted; "
                    f"its first {missing} sample(s) missed)."
                )
            else:
                detail = (
                    f"{missing} sample(s) missing before counter {counter[i]:.0f} "
                    f"of {self.description}."
                )
            kind = "counter_reset" if restarted else "gap"
            out.append(StreamEvent(kind, float(stamps[i]), missing, detail))
        return out

    def _add_events(self, events: list[StreamEvent]) -> None:
        with self._lock:
            self._events.extend(events)

    # -- readers ------------------------------------------------------------------------------

    @property
    def ch_names_(self) -> list[str]:
        """Channel names of the connected stream."""
        self._require_connected()
        return list(self._stream_ch_names)

    @property
    def sfreq_(self) -> float:
        """Nominal sampling rate of the connected stream."""
        self._require_connected()
        return self._stream_sfreq

    @property
    def n_samples(self) -> int:
        """Number of samples received since :meth:`start` (monotonically increasing)."""
        with self._lock:
            return self._n_total

    @property
    def n_new_samples(self) -> int:
        """Samples received since the last :meth:`get_window` (may exceed the buffer)."""
        with self._lock:
            return self._n_total - self._window_mark

    @property
    def lag(self) -> float:
        """``local_clock()`` minus the newest sample's timestamp (NaN before the first sample)."""
        import pylsl

        with self._lock:
            return pylsl.local_clock() - self._last_ts

    @property
    def last_timestamp(self) -> float:
        """The newest sample's LSL timestamp (NaN before the first sample)."""
        with self._lock:
            return self._last_ts

    @property
    def events(self) -> list[StreamEvent]:
        """Every event reported since :meth:`start`."""
        with self._lock:
            return list(self._events)

    def pop_events(self) -> list[StreamEvent]:
        """Events reported since the last call."""
        with self._lock:
            out = self._events[self._events_read :]
            self._events_read = len(self._events)
        return out

    @property
    def silent(self) -> bool:
        """True while the stream has been silent for longer than ``silence_timeout``."""
        with self._lock:
            return self._silent

    def get_window(self, seconds: float | None = None) -> tuple[np.ndarray, np.ndarray]:
        """Return the newest samples.

        Parameters
        ----------
        seconds : float | None
            Window length; the whole buffer when None. Fewer samples come back while the buffer
            is filling up.

        Returns
        -------
        data : ndarray, shape (n_channels, n_times)
            Samples in stream units (non-finite values kept; see the ``"nonfinite"`` events).
        timestamps : ndarray, shape (n_times,)
            LSL timestamps (``local_clock()`` seconds).

        Raises
        ------
        StreamSilenceError
            When the stream has been silent for longer than ``silence_timeout``.
        RuntimeError
            When the acquisition thread failed.
        """
        self._require_connected()
        if seconds is None:
            n = self._capacity
        else:
            if not seconds > 0:
                raise ValueError(f"seconds must be positive, got {seconds!r}.")
            n = round(seconds * self._stream_sfreq)
            if n > self._capacity:
                raise ValueError(
                    f"A {seconds:g} s window is longer than the {self.bufsize:g} s buffer."
                )
        with self._lock:
            if self._error is not None:
                raise RuntimeError(
                    f"Acquisition from {self.description} failed: {self._error}"
                ) from self._error
            if self._silent:
                raise StreamSilenceError(self._events[-1].detail if self._events else "silent")
            n = min(n, self._n_total)
            idx = np.arange(self._n_total - n, self._n_total) % self._capacity
            data = self._data[idx].T.copy()
            stamps = self._ts[idx].copy()
            self._window_mark = self._n_total
        return data, stamps

    def subscribe(self) -> queue.SimpleQueue:
        """Return a queue receiving every later chunk as ``(data (n, n_ch), timestamps)``.

        Nothing is dropped however slow the reader is (used by the recorder).
        """
        q: queue.SimpleQueue = queue.SimpleQueue()
        with self._lock:
            self._subscribers = (*self._subscribers, q)
        return q

    def unsubscribe(self, q: queue.SimpleQueue) -> None:
        """Stop feeding a queue returned by :meth:`subscribe`."""
        with self._lock:
            self._subscribers = tuple(s for s in self._subscribers if s is not q)

    def _require_connected(self) -> None:
        if self.info is None:
            raise RuntimeError(f"The receiver of {self.description} was never started.")
