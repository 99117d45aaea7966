"""Replay a recording as LSL streams: its data and its annotations as markers.

Timestamps
----------
Sample ``k`` (counted from the start of the replay, across loops) carries the LSL timestamp
``t0 + k / (sfreq * speed)``, where ``t0`` is :func:`pylsl.local_clock` when the first chunk
starts. With pacing, a chunk is pushed as soon as ``local_clock()`` reaches the stamp of its last
sample, and carries exactly these stamps: the "last sample stamped with ``local_clock()``"
convention of LSL amplifiers, without the jitter of the sleep. An annotation at onset ``t``
(seconds from the first sample) goes out on the marker stream with the stamp of sample
``round(t * sfreq)``, pushed right after the chunk holding that sample. Consumers should open their
inlets with ``proc_clocksync | proc_dejitter`` as for any LSL source.

Without pacing (``pacing=False``) there is no waiting between chunks; stamps keep the
recording's spacing (``speed`` is ignored), so they run ahead of ``local_clock()`` and a recorder
rebuilds the original time axis exactly.

Flow control without pacing
---------------------------
liblsl never blocks a push: a consumer whose inlet buffer (``max_buflen``, 360 s of data by
default) overflows silently loses its oldest samples, and a sample pushed before any inlet is
connected is lost. So the player (1) waits until every stream named in ``wait_for_consumers`` has
a consumer (by default the data stream when not pacing), and (2) when given ``drained``, a
callable returning how many samples the consumer has pulled so far, never runs more than
``max_ahead`` samples ahead of it. Without ``drained`` the consumer's inlet buffer must hold
whatever it has not pulled yet.
"""

from __future__ import annotations

import os
import warnings
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from uuid import uuid4

import mne
import numpy as np

from bci_universum.datasets import read_recording
from bci_universum.markers import annotation_samples, map_marker, resolve_marker_map

from .markers import MARKER_STREAM_TYPE
from .streams import (
    COUNTER_TYPE,
    DEFAULT_VOLTAGE_UNIT,
    NUMPY_DTYPES,
    channel_format_code,
    check_stream_name,
    check_voltage_unit,
    declare_speed,
    si_scalings,
    stream_info_from_mne_info,
)
from .worker import Worker


class Player(Worker):
    """Replay a recording as an LSL data stream plus a marker stream, in a background thread.

    Parameters
    ----------
    recording : path-like | mne.io.BaseRaw
        A file :func:`bci_universum.datasets.read_recording` reads (FIF, EDF/BDF, GDF,
        BrainVision, EEGLAB, XDF, ...) or a Raw.
    name : str | None
        Name of the data stream (default ``"replay-<file stem>"``); the marker stream is
        ``"<name>-markers"``.
    source_id : str | None
        ``source_id`` of the data stream (random by default); the marker stream gets
        ``"<source_id>-markers"``.
    chunk_size : int
        Samples per pushed chunk.
    speed : float
        Pacing factor: 2 replays twice as fast as real time. Ignored without pacing.
    loop : bool
        Start over at the end (sample stamps and the counter keep increasing).
    pacing : bool
        Push in real time (times ``speed``); ``False`` pushes as fast as the consumer drains
        (see the module notes).
    counter : bool
        Append a ``counter`` channel holding the replay's sample index (exact up to 2**24
        samples in float32).
    marker_map : str | mapping | None
        A preset of :data:`~bci_universum.markers.MARKER_MAPS`, a mapping from annotation
        descriptions to markers, a ``.json`` file of one or ``"T1=cue/left,..."`` pairs (see
        :func:`~bci_universum.markers.resolve_marker_map`).
    channel_format : str
        LSL format of the data stream, ``"float32"`` or ``"double64"``.
    wait_for_consumers : iterable of {"data", "markers"} | None
        Streams that must have a consumer before the first push; by default ``("data",)``
        without pacing and nothing with pacing (a live amplifier waits for nobody).
    consumer_timeout : float
        Seconds to wait for those consumers before giving up with an error.
    drained : callable | None
        Without pacing: returns the number of samples the consumer has pulled so far.
    max_ahead : int | None
        Without pacing and with ``drained``: the most samples in flight (default 30 s of data).
    verbose : bool | str | int | None
        MNE verbosity when reading the file.
    stream_type : str
        LSL content type of the data stream.
    voltage_unit : str
        Unit of the voltage channels on the stream: ``"microvolts"`` (default, the LSL
        convention) or ``"volts"`` (MNE's, for mne-lsl's ``StreamLSL``).

    Attributes
    ----------
    raw : mne.io.BaseRaw
        The recording replayed.
    n_pushed : int
        Data samples pushed so far.
    n_markers_pushed : int
        Markers pushed so far.
    data_info, marker_info : pylsl.StreamInfo
        The stream descriptions (available after :meth:`start`).
    """

    def __init__(
        self,
        recording: str | os.PathLike | mne.io.BaseRaw,
        *,
        name: str | None = None,
        source_id: str | None = None,
        chunk_size: int = 10,
        speed: float = 1.0,
        loop: bool = False,
        pacing: bool = True,
        counter: bool = False,
        marker_map: str | Mapping[str, str | None] | None = None,
        channel_format: str = "float32",
        wait_for_consumers: Iterable[str] | None = None,
        consumer_timeout: float = 10.0,
        drained: Callable[[], int] | None = None,
        max_ahead: int | None = None,
        verbose: bool | str | int | None = None,
        stream_type: str = "EEG",
        voltage_unit: str = DEFAULT_VOLTAGE_UNIT,
    ) -> None:
        super().__init__()
        check_voltage_unit(voltage_unit)
        if isinstance(recording, mne.io.BaseRaw):
            raw = recording if recording.preload else recording.copy().load_data()
            stem = Path(raw.filenames[0]).stem if raw.filenames and raw.filenames[0] else "raw"
        elif isinstance(recording, str | os.PathLike):
            raw = read_recording(recording, verbose=verbose)
            stem = Path(recording).name.split(".")[0]
        else:
            raise ValueError(f"recording must be a file path or an MNE Raw, got {recording!r}.")
        if not isinstance(chunk_size, int | np.integer) or chunk_size < 1:
            raise ValueError(f"chunk_size must be a positive integer, got {chunk_size!r}.")
        if not (isinstance(speed, int | float) and np.isfinite(speed) and speed > 0):
            raise ValueError(f"speed must be a positive number, got {speed!r}.")
        if channel_format_code(channel_format) not in (1, 2):
            raise ValueError(
                f"channel_format must be 'float32' or 'double64', got {channel_format!r}."
            )
        if wait_for_consumers is None:
            wait_for_consumers = () if pacing else ("data",)
        wait_for_consumers = tuple(wait_for_consumers)
        bad = [w for w in wait_for_consumers if w not in ("data", "markers")]
        if bad:
            raise ValueError(f"wait_for_consumers accepts 'data' and 'markers', not {bad}.")
        if not consumer_timeout > 0:
            raise ValueError(f"consumer_timeout must be positive, got {consumer_timeout!r}.")
        if max_ahead is not None and max_ahead < chunk_size:
            raise ValueError(
                f"max_ahead ({max_ahead}) must be at least chunk_size ({chunk_size})."
            )
        if counter and COUNTER_TYPE in raw.ch_names:
            raise ValueError(f"The recording already has a channel named {COUNTER_TYPE!r}.")
        self.raw = raw
        self.name = f"replay-{stem}" if name is None else check_stream_name(name)
        self.source_id = source_id or uuid4().hex
        self.chunk_size = int(chunk_size)
        self.speed = float(speed)
        self.loop = bool(loop)
        self.pacing = bool(pacing)
        self.counter = bool(counter)
        self.marker_map = resolve_marker_map(marker_map)
        self.channel_format = channel_format
        self.stream_type = str(stream_type)
        self.voltage_unit = voltage_unit
        self.consumer_timeout = float(consumer_timeout)
        self.drained = drained
        self.max_ahead = int(max_ahead) if max_ahead is not None else int(30 * raw.info["sfreq"])
        self.marker_samples, self.marker_texts = self._markers()
        self.wait_for_consumers = wait_for_consumers
        self.data_info = None
        self.marker_info = None
        self.n_pushed = 0
        self.n_markers_pushed = 0
        self._outlets: tuple = ()

    # -- set-up ---------------------------------------------------------------------------

    def _markers(self) -> tuple[np.ndarray, list[str]]:
        """Sample index and text of every annotation that goes out on the marker stream."""
        annotations = self.raw.annotations
        if len(annotations) == 0:
            return np.zeros(0, dtype=int), []
        samples = annotation_samples(self.raw)
        kept_samples, texts = [], []
        n_outside = 0
        for sample, description in zip(samples, annotations.description, strict=True):
            text = map_marker(str(description), self.marker_map)
            if text is None:
                continue
            if not 0 <= sample < self.raw.n_times:
                n_outside += 1
                continue
            kept_samples.append(int(sample))
            texts.append(text)
        if n_outside:
            warnings.warn(
                f"{n_outside} annotation(s) lie outside the data of {self.name!r}; not replayed.",
                RuntimeWarning,
                stacklevel=3,
            )
        order = np.argsort(kept_samples, kind="stable")
        return np.asarray(kept_samples, dtype=int)[order], [texts[i] for i in order]

    def _stream_data(self) -> np.ndarray:
        scalings = si_scalings(self.data_info)
        if self.counter:
            scalings = scalings[:-1]
        dtype = NUMPY_DTYPES[channel_format_code(self.channel_format)]
        return np.ascontiguousarray((self.raw.get_data().T / scalings).astype(dtype))

    def _make_outlets(self):
        import pylsl

        self.data_info = data_stream_info(
            self.raw.info,
            self.name,
            self.source_id,
            self.channel_format,
            self.counter,
            self.stream_type,
            self.voltage_unit,
            self.speed if self.pacing else 1.0,
        )
        self.marker_info = pylsl.StreamInfo(
            f"{self.name}-markers",
            MARKER_STREAM_TYPE,
            1,
            pylsl.IRREGULAR_RATE,
            pylsl.cf_string,
            f"{self.source_id}-markers",
        )
        self.marker_info.desc().append_child_value("replay_of", self.name)
        return pylsl.StreamOutlet(self.data_info), pylsl.StreamOutlet(self.marker_info)

    # -- control --------------------------------------------------------------------------

    @property
    def description(self) -> str:
        return f"Replay of {self.name!r}"

    def _prepare(self) -> tuple:
        if self._thread is not None:
            raise RuntimeError(f"Player {self.name!r} was already started.")
        self._outlets = self._make_outlets()
        return (self._stream_data(),)

    def _cleanup(self) -> None:
        self._outlets = ()

    def busy_streams(self) -> list[str]:
        """The streams whose consumers may not have everything pushed yet.

        liblsl drops what is still in transit when an outlet closes, so a finished replay keeps
        its streams open while this is not empty. With ``drained``: the data stream until the
        consumer has pulled every sample pushed; otherwise every stream that still has a
        consumer (a :class:`~acquisition.receiver.StreamReceiver` pulls whatever reached its
        inlet before it disconnects).
        """
        if self.running:
            return [self.name, f"{self.name}-markers"]
        if not self._outlets:
            return []
        if self.drained is not None:
            return [self.name] if self.drained() < self.n_pushed else []
        names = (self.name, f"{self.name}-markers")
        return [n for n, o in zip(names, self._outlets, strict=True) if o.have_consumers()]

    # -- the replay thread ----------------------------------------------------------------

    def _wait_for_consumers(self, data_outlet, marker_outlet) -> None:
        import pylsl

        outlets = {
            "data": (data_outlet, self.name),
            "markers": (marker_outlet, f"{self.name}-markers"),
        }
        deadline = pylsl.local_clock() + self.consumer_timeout
        for which in self.wait_for_consumers:
            outlet, stream = outlets[which]
            while not outlet.have_consumers():
                if self._stop_event.is_set():
                    return
                if pylsl.local_clock() > deadline:
                    raise TimeoutError(
                        f"No consumer connected to LSL stream {stream!r} within "
                        f"{self.consumer_timeout:g} s."
                    )
                outlet.wait_for_consumers(0.05)

    def _run(self, data: np.ndarray) -> None:
        import pylsl

        data_outlet, marker_outlet = self._outlets
        self._wait_for_consumers(data_outlet, marker_outlet)
        n_times = data.shape[0]
        sfreq = self.raw.info["sfreq"]
        period = 1.0 / (sfreq * self.speed) if self.pacing else 1.0 / sfreq
        exact_spacing = not self.pacing or self.speed == 1.0
        t0 = pylsl.local_clock()
        pos = 0
        next_marker = 0
        while not self._stop_event.is_set():
            n = min(self.chunk_size, n_times - pos)
            first = self.n_pushed
            stamps = t0 + (first + np.arange(n)) * period
            if self.pacing:
                self._sleep_until(stamps[-1])
            elif self.drained is not None:
                self._wait_drained(first + n)
            if self._stop_event.is_set():
                break
            chunk = data[pos : pos + n]
            if self.counter:
                chunk = np.column_stack([chunk, np.arange(first, first + n, dtype=chunk.dtype)])
            if exact_spacing:
                data_outlet.push_chunk(chunk, float(stamps[-1]))
            else:
                data_outlet.push_chunk(chunk, stamps.tolist())
            self.n_pushed = first + n
            while (
                next_marker < len(self.marker_samples)
                and self.marker_samples[next_marker] < pos + n
            ):
                sample = self.marker_samples[next_marker]
                marker_outlet.push_sample(
                    [self.marker_texts[next_marker]], float(stamps[sample - pos])
                )
                self.n_markers_pushed += 1
                next_marker += 1
            pos += n
            if pos == n_times:
                if not self.loop:
                    break
                pos = 0
                next_marker = 0

    def _sleep_until(self, stamp: float) -> None:
        import pylsl

        while not self._stop_event.is_set():
            left = stamp - pylsl.local_clock()
            if left <= 0:
                return
            self._stop_event.wait(min(left, 0.05))

    def _wait_drained(self, target: int) -> None:
        while not self._stop_event.is_set() and target - self.drained() > self.max_ahead:
            self._stop_event.wait(0.001)


def data_stream_info(
    info: mne.Info,
    name: str,
    source_id: str,
    channel_format: str = "float32",
    counter: bool = False,
    stream_type: str = "EEG",
    voltage_unit: str = DEFAULT_VOLTAGE_UNIT,
    speed: float = 1.0,
):
    """``stream_info_from_mne_info`` of ``info``, plus a last ``counter`` channel if asked, and
    the pace of its timestamps when they run ``speed`` times faster than real time
    (:func:`~acquisition.streams.declare_speed`)."""
    if counter:
        from mne.io import RawArray

        base = RawArray(np.zeros((len(info["ch_names"]), 1)), info.copy(), verbose=False)
        extra = RawArray(
            np.zeros((1, 1)), mne.create_info([COUNTER_TYPE], info["sfreq"], "misc"), verbose=False
        )
        info = base.add_channels([extra], force_update_info=True).info
    stream_info = stream_info_from_mne_info(
        info,
        name,
        source_id,
        stype=stream_type,
        channel_format=channel_format,
        voltage_unit=voltage_unit,
    )
    if counter:
        _mark_last_channel_as_counter(stream_info)
    declare_speed(stream_info, speed)
    return stream_info


def _mark_last_channel_as_counter(info) -> None:
    """Set the type of the last described channel to ``counter`` (unit ``n/a``)."""
    node = info.desc().child("channels").last_child()
    node.set_child_value("type", COUNTER_TYPE)
    node.set_child_value("unit", "n/a")
