"""Stream the simulated subject as an LSL EEG outlet that reacts to the paradigm's markers.

The source generates :class:`bci_universum.simulation.eeg.SimulatedEEG` data in real time (times
``speed``) and pushes it like an amplifier: sample ``k`` carries the stamp ``t0 + k / (sfreq *
speed)`` and a chunk goes out when ``local_clock()`` reaches the stamp of its last sample; behind
real time (generating a chunk costs more than the time it spans), every whole chunk due goes out at
once. With ``markers_from`` it listens to a marker stream and changes the subject's mental state on
``cue/left``, ``cue/right``, ``universum/rest``, ``universum/<task>``, ``trial/end``, ... (see
:func:`~bci_universum.simulation.eeg.state_for_marker`). A marker takes effect at the first sample
whose stamp is not earlier than the marker's own stamp, or at the first sample not yet generated if
it arrives late; every change is listed in :attr:`SimulatedSource.switches`, so a session can be
regenerated offline exactly from the seed and that list.
"""

from __future__ import annotations

import math
import threading
from dataclasses import dataclass
from uuid import uuid4

import numpy as np

from bci_universum.simulation.eeg import STATES, SimulatedEEG, compile_kernels, state_for_marker

from .markers import MarkerReceiver
from .player import data_stream_info
from .streams import (
    DEFAULT_VOLTAGE_UNIT,
    NUMPY_DTYPES,
    channel_format_code,
    check_stream_name,
    check_voltage_unit,
    si_scalings,
)
from .worker import Worker


@dataclass(frozen=True)
class StateSwitch:
    """A change of mental state at a sample index, and the marker that caused it (or None)."""

    sample: int
    state: str
    marker: str | None


class SimulatedSource(Worker):
    """An LSL EEG source driven by a simulated subject, in a background thread.

    Parameters
    ----------
    n_channels : int
        Electrodes (3 to 64, see :data:`~bci_universum.simulation.eeg.CHANNEL_PRIORITY`).
    sfreq : float
        Sampling rate in Hz.
    seed : int
        Seed of the simulated subject.
    name : str
        Name of the EEG stream.
    source_id : str | None
        Its ``source_id`` (random by default).
    markers_from : str | None
        Name of the marker stream to obey; None for none (use :meth:`set_state`).
    markers_source_id : str | None
        ``source_id`` of that marker stream, instead of or with its name.
    speed : float
        Pacing factor (2 streams twice as fast as real time).
    chunk_size : int | None
        Samples per chunk (default: 40 ms of data); a multiple of it when the source catches
        up with real time.
    counter : bool
        Append a ``counter`` channel with the sample index.
    timeout : float
        Seconds to wait for the marker stream when starting.
    channel_format : str
        ``"float32"`` or ``"double64"``.
    voltage_unit : str
        Unit of the EEG channels on the stream: ``"microvolts"`` (default) or ``"volts"``.
    **model_kwargs
        Passed to :class:`~bci_universum.simulation.eeg.SimulatedEEG` (``erd_depth``,
        ``lapse_rate``, ``blink_rate``, ``ch_names``, ...).

    Attributes
    ----------
    model : SimulatedEEG
        The simulated subject.
    n_pushed : int
        Samples pushed so far.
    switches : list of StateSwitch
        Every state change so far.
    data_info : pylsl.StreamInfo
        The stream description (after :meth:`start`).
    t0 : float | None
        LSL stamp of sample 0 (set when streaming starts).
    """

    def __init__(
        self,
        n_channels: int = 32,
        sfreq: float = 250.0,
        *,
        seed: int = 0,
        name: str = "bci-universum-sim",
        source_id: str | None = None,
        markers_from: str | None = None,
        markers_source_id: str | None = None,
        speed: float = 1.0,
        chunk_size: int | None = None,
        counter: bool = False,
        timeout: float = 10.0,
        channel_format: str = "float32",
        voltage_unit: str = DEFAULT_VOLTAGE_UNIT,
        **model_kwargs,
    ) -> None:
        super().__init__()
        check_voltage_unit(voltage_unit)
        self.model = SimulatedEEG(n_channels, sfreq, seed=seed, **model_kwargs)
        if not (isinstance(speed, int | float) and math.isfinite(speed) and speed > 0):
            raise ValueError(f"speed must be a positive number, got {speed!r}.")
        if chunk_size is None:
            chunk_size = max(1, round(0.04 * sfreq))
        if not isinstance(chunk_size, int | np.integer) or chunk_size < 1:
            raise ValueError(f"chunk_size must be a positive integer, got {chunk_size!r}.")
        if channel_format_code(channel_format) not in (1, 2):
            raise ValueError(
                f"channel_format must be 'float32' or 'double64', got {channel_format!r}."
            )
        if not timeout > 0:
            raise ValueError(f"timeout must be positive, got {timeout!r}.")
        self.name = check_stream_name(name)
        self.source_id = source_id or uuid4().hex
        self.markers_from = markers_from
        self.markers_source_id = markers_source_id
        self.speed = float(speed)
        self.chunk_size = int(chunk_size)
        self.counter = bool(counter)
        self.timeout = float(timeout)
        self.channel_format = channel_format
        self.voltage_unit = voltage_unit
        self.sfreq = self.model.sfreq
        self.n_pushed = 0
        self.switches: list[StateSwitch] = []
        self.data_info = None
        self.t0: float | None = None
        self._pending: list[tuple[float | None, str, str | None]] = []
        self._lock = threading.Lock()
        self._receiver: MarkerReceiver | None = None

    @property
    def state(self) -> str:
        """The subject's current mental state."""
        return self.model.state

    def set_state(self, state: str) -> None:
        """Switch state from the next sample generated (no marker needed)."""
        if state not in STATES:
            raise ValueError(f"Unknown state {state!r}; expected one of {STATES}.")
        with self._lock:
            self._pending.append((None, state, None))

    @property
    def description(self) -> str:
        return f"Simulated source {self.name!r}"

    def _prepare(self) -> tuple:
        """Connect to the marker stream (if any) and create the outlet."""
        import pylsl

        if self._thread is not None:
            raise RuntimeError(f"Simulated source {self.name!r} was already started.")
        if self.markers_from is not None or self.markers_source_id is not None:
            self._receiver = MarkerReceiver(
                self.markers_from, source_id=self.markers_source_id, timeout=self.timeout
            ).start()
        self.data_info = data_stream_info(
            self.model.info(),
            self.name,
            self.source_id,
            self.channel_format,
            self.counter,
            voltage_unit=self.voltage_unit,
            speed=self.speed,
        )
        scalings = si_scalings(self.data_info)[: len(self.model.ch_names)]
        compile_kernels()
        return pylsl.StreamOutlet(self.data_info), scalings

    def _cleanup(self) -> None:
        if self._receiver is not None:
            self._receiver.stop()

    # -- the streaming thread -------------------------------------------------------------

    def _run(self, outlet, scalings: np.ndarray) -> None:
        import pylsl

        dtype = NUMPY_DTYPES[channel_format_code(self.channel_format)]
        period = 1.0 / (self.sfreq * self.speed)
        t0 = self.t0 = pylsl.local_clock()
        while not self._stop_event.is_set():
            first = self.n_pushed
            last_stamp = t0 + (first + self.chunk_size - 1) * period
            while not self._stop_event.is_set():
                left = last_stamp - pylsl.local_clock()
                if left <= 0:
                    break
                self._stop_event.wait(min(left, 0.02))
            if self._stop_event.is_set():
                break
            self._collect_markers()
            # behind real time (a busy machine, a high speed: generating costs more than the
            # time a chunk spans), send every whole chunk due at once, as an amplifier does
            # after a hiccup, rather than drift ever further behind the markers
            due = int((pylsl.local_clock() - t0) / period) + 1 - first
            n = self.chunk_size * max(1, due // self.chunk_size)
            data = self._generate(first, n, t0, period)
            chunk = (data.T / scalings).astype(dtype)
            if self.counter:
                chunk = np.column_stack([chunk, np.arange(first, first + n)])
            chunk = np.ascontiguousarray(chunk, dtype=dtype)
            if self.speed == 1.0:
                outlet.push_chunk(chunk, float(t0 + (first + n - 1) * period))
            else:  # liblsl would space the stamps by the nominal rate
                outlet.push_chunk(chunk, (t0 + (first + np.arange(n)) * period).tolist())
            self.n_pushed = first + n

    def _collect_markers(self) -> None:
        if self._receiver is None:
            return
        for marker in self._receiver.get_markers():
            state = state_for_marker(marker.text)
            if state is not None:
                with self._lock:
                    self._pending.append((marker.timestamp, state, marker.text))

    def _generate(self, first: int, n: int, t0: float, period: float) -> np.ndarray:
        """Generate samples first .. first+n-1, applying due state changes at their sample."""
        with self._lock:
            pending, self._pending = self._pending, []
        due, later = [], []
        for stamp, state, text in pending:
            sample = first if stamp is None else math.ceil((stamp - t0) / period - 1e-9)
            if sample < first + n:
                due.append((max(first, sample), state, text))
            else:
                later.append((stamp, state, text))
        with self._lock:
            self._pending = later + self._pending
        parts = []
        position = first
        for sample, state, text in sorted(due, key=lambda d: d[0]):
            if sample > position:
                parts.append(self.model.generate(sample - position))
                position = sample
            self.model.set_state(state)
            self.switches.append(StateSwitch(sample, state, text))
        parts.append(self.model.generate(first + n - position))
        return np.concatenate(parts, axis=1)


SimulatedSubject = SimulatedSource
