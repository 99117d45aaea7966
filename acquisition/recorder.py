"""Crash-safe recording of one data stream and the marker stream into MNE FIF.

While recording, a writer thread appends what the receivers got to a ``<name>_raw.fif.partial``
folder every ``flush_interval`` seconds (≤ 0.5 s) and fsyncs it:

``header.json``
    stream description and session metadata, written once at start;
``data.bin`` / ``timestamps.bin``
    the samples (row-major, one row per sample, in the stream's float type) and their LSL
    timestamps (float64); a torn last record after a kill is cut off on recovery;
``markers.jsonl`` / ``events.jsonl``
    one JSON line per marker and per receiver event (gaps, non-finite samples, silences);
``writer.lock``
    locked (``flock``) by the recording process for as long as it writes; the OS releases it
    when that process ends, also on a kill, so :func:`recover` refuses a recording still running.

A clean :meth:`Recorder.stop` turns the folder into ``<name>_raw.fif`` (data in SI units, markers
as annotations with the same text, acquisition gaps as ``BAD_ACQ_SKIP``) plus a JSON sidecar,
then removes it. After a crash, :func:`recover` (``bci-universum stream recover``) does the same
with whatever reached the disk. A write that fails (a full disk) ends the writing at once, so
what is on disk stays a clean prefix of the recording; :meth:`Recorder.check` reports it while
the recording runs. :func:`unrecovered` lists the partial folders a killed session left (not
those of a recording still running).
"""

from __future__ import annotations

import fcntl
import json
import logging
import os
import queue
import signal
from contextlib import contextmanager
from datetime import datetime, timezone
from pathlib import Path

import numpy as np

from bci_universum._checks import repeated
from bci_universum.datasets.bids import bids_run, check_bids_label
from bci_universum.datasets.channels import unique_channel_names

from ._inlet_thread import start_together
from .markers import MarkerReceiver
from .receiver import StreamReceiver
from .streams import (
    channel_format_name,
    channel_units,
    describe_channels,
    is_number,
    stream_speed,
)
from .worker import Worker

PARTIAL_SUFFIX = ".partial"
#: The file of a partial folder its recording process holds locked (:func:`_lock_partial`).
LOCK_FILE = "writer.lock"
#: The command that finalises a partial recording (:func:`recover`).
RECOVER_COMMAND = "bci-universum stream recover"

logger = logging.getLogger(__name__)


class RecordingExistsError(FileExistsError, ValueError):
    """The recording (or its sidecar, or its partial folder) already exists."""


class RecordingFailed(RuntimeError):
    """Writing a recording to disk failed; what reached it stays in its partial folder."""


class RecordingInProgressError(RuntimeError):
    """A partial recording is still being written by a running process."""


def bids_basename(subject: str, session: str, task: str, run: int | str) -> str:
    """``sub-<subject>_ses-<session>_task-<task>_run-<run>`` (the run as :func:`bids_run`).

    Raises
    ------
    ValueError
        For a label that is not alphanumeric (BIDS labels are letters and digits), or a run
        that is not a positive integer.
    """
    run = bids_run(run)
    for name, value in (("subject", subject), ("session", session), ("task", task)):
        check_bids_label(value, name)
    return f"sub-{subject}_ses-{session}_task-{task}_run-{run}"


def session_folder(output, subject: str, session: str) -> Path:
    """``<output>/sub-<subject>_ses-<session>``, the folder of a session's recordings.

    The labels are checked first (letters and digits only), so no path component can leave
    ``output`` and nothing is created for a bad label.
    """
    check_bids_label(subject, "subject")
    check_bids_label(session, "session")
    return Path(output) / f"sub-{subject}_ses-{session}"


def _fsync_append(handle, payload: bytes) -> None:
    # unbuffered: nothing of a failed write is kept to be written later, after a gap
    view = memoryview(payload)
    while view:
        view = view[handle.write(view) :]
    os.fsync(handle.fileno())


def _lock_partial(partial: Path, create: bool = False) -> int | None:
    """Lock the :data:`LOCK_FILE` of the partial folder ``partial`` for this process.

    Returns the file descriptor holding the lock (closing it releases the lock; so does the
    end of the process, also by SIGKILL), or None when ``create`` is False and the folder has
    no lock file (a recording of an older version, or one killed before it made the file).

    Raises
    ------
    RecordingInProgressError
        When another open file (another process, or another recorder) holds the lock and
        ``create`` is False (with ``create``, it waits for the lock).
    """
    flags = os.O_RDWR | (os.O_CREAT if create else 0)
    try:
        fd = os.open(partial / LOCK_FILE, flags, 0o644)
    except FileNotFoundError:
        if create:
            raise
        return None
    try:
        # A new recording's own folder: another process may be checking it (unrecovered()),
        # holding the lock for an instant, so wait for it instead of failing.
        fcntl.flock(fd, fcntl.LOCK_EX | (0 if create else fcntl.LOCK_NB))
    except BlockingIOError:
        os.close(fd)
        raise RecordingInProgressError(
            f"{partial} is still being recorded by a running process; stop it first (it then "
            "writes the FIF itself): only what a killed recording left needs recovering."
        ) from None
    return fd


def _unlock(fd: int | None) -> None:
    if fd is not None:
        os.close(fd)


def recover_hint(partial) -> str:
    """How to turn the partial recording ``partial`` into a FIF, for messages."""
    return f"'{RECOVER_COMMAND} {partial}'"


def _partials(folder: Path) -> list[Path]:
    """The partial folders in ``folder`` (sorted), killed or still being recorded."""
    return sorted(p for p in folder.glob(f"*{PARTIAL_SUFFIX}") if p.is_dir())


def _being_recorded(partial: Path) -> bool:
    """Whether a running process holds the lock of the partial folder ``partial``."""
    try:
        fd = _lock_partial(partial)
    except RecordingInProgressError:
        return True
    _unlock(fd)
    return False


def unrecovered(folder) -> list[Path]:
    """The partial recordings in ``folder`` (sorted) that a killed recording left.

    Those still being written by a running process (its lock on ``writer.lock`` held) are left
    out: they become FIF files when that process stops.
    """
    return [p for p in _partials(Path(folder)) if not _being_recorded(p)]


class Recorder(Worker):
    """Record a :class:`StreamReceiver` and a :class:`MarkerReceiver` to FIF, incrementally.

    Parameters
    ----------
    receiver : StreamReceiver
        The data stream. If it is not running, the recorder starts it and stops it at the end.
    markers : MarkerReceiver | None
        The marker stream (started and stopped likewise), or None. Any encoding it reads
        (this project's strings, mne-lsl annotation streams, event codes); its ``marker_map``
        turns foreign descriptions into protocol markers as they arrive. The sidecar records
        the encoding and the map; annotations keep the markers' durations.
    folder : path-like
        Where the recording goes (created if needed).
    subject, session, task : str
        BIDS labels of the file name ``sub-01_ses-01_task-calibration_run-01_raw.fif``.
    run : int | str
        The run number (a positive integer, or its digits), written with two digits in the file
        name and the sidecar (``"run": "01"``) as :func:`bids_run` formats it.
    paradigm : str | None
        Paradigm name for the sidecar.
    metadata : dict | None
        Extra JSON-serialisable session metadata for the sidecar.
    flush_interval : float
        Seconds between writes to disk (at most 0.5).
    duration : float | None
        Seconds of the stream to record from its first sample, by its timestamps (a regular
        stream: ``round(duration * sfreq)`` samples); later samples are not written and
        :attr:`complete` turns True once one arrives. None records until :meth:`stop`.

    Attributes
    ----------
    complete : bool
        Whether the recording holds its ``duration`` (always False without one).

    Notes
    -----
    A recording never overwrites anything: the FIF, its sidecar and its partial folder must not
    exist yet.
    """

    def __init__(
        self,
        receiver: StreamReceiver,
        markers: MarkerReceiver | None,
        folder,
        *,
        subject: str = "01",
        session: str = "01",
        task: str = "calibration",
        run: int | str = 1,
        paradigm: str | None = None,
        metadata: dict | None = None,
        flush_interval: float = 0.25,
        duration: float | None = None,
    ) -> None:
        from bci_universum.datasets import check_not_example

        super().__init__()
        if not isinstance(receiver, StreamReceiver):
            raise TypeError(f"receiver must be a StreamReceiver, got {type(receiver).__name__}.")
        if markers is not None and not isinstance(markers, MarkerReceiver):
            raise TypeError(f"markers must be a MarkerReceiver, got {type(markers).__name__}.")
        if not 0 < flush_interval <= 0.5:
            raise ValueError(f"flush_interval must be in (0, 0.5] s, got {flush_interval!r}.")
        if duration is not None and not (is_number(duration) and duration > 0):
            raise ValueError(f"duration must be positive seconds or None, got {duration!r}.")
        self.receiver = receiver
        self.markers = markers
        self.folder = check_not_example(folder, "Recorder folder")
        self.basename = bids_basename(subject, session, task, run)
        self.labels = {"subject": subject, "session": session, "task": task, "run": bids_run(run)}
        self.paradigm = paradigm
        self.metadata = dict(metadata or {})
        json.dumps(self.metadata)  # fail now, not at the end of the session
        self.flush_interval = float(flush_interval)
        self.duration = duration
        self.complete = False
        self.fname = self.folder / f"{self.basename}_raw.fif"
        self.partial = self.fname.with_name(self.fname.name + PARTIAL_SUFFIX)
        self._owned: list = []
        self._lock_fd: int | None = None
        self.n_samples = 0
        self.n_markers = 0

    _join_timeout = 30.0

    @property
    def description(self) -> str:
        return f"Recorder of {self.fname}"

    def start(self) -> Recorder:
        """Create the partial folder, start the receivers if needed and the writer thread."""
        return super().start()

    def _prepare(self) -> tuple:
        if self._thread is not None:
            raise RuntimeError(f"Recorder of {self.fname} is already running.")
        for path in (self.fname, _sidecar_path(self.fname), self.partial):
            if path.exists():
                raise RecordingExistsError(
                    f"Recording {path} already exists; refusing to overwrite."
                )
        # Positions are taken before subscribing: every event of a chunk the queue gets lies at
        # or after them, and nothing received while the receivers start is skipped.
        live = self.receiver.running
        self._event_pos = len(self.receiver.events) if live else 0  # start() clears them
        self._early_markers = self.markers.n_markers if self.markers is not None else 0
        self._marker_pos = self._early_markers
        self._first_stamp: float | None = None
        self._queue = self.receiver.subscribe()
        try:
            idle = [r for r in (self.receiver, self.markers) if r is not None and not r.running]
            start_together(idle)
            self._owned = idle
            self.folder.mkdir(parents=True, exist_ok=True)  # only once the streams are there
            self.partial.mkdir()
            self._lock_fd = _lock_partial(self.partial, create=True)
            self._write_header()
        except BaseException:
            self.receiver.unsubscribe(self._queue)
            self._stop_owned()
            self._release()
            raise
        self._files = {
            name: open(self.partial / name, "ab", buffering=0)  # noqa: SIM115 - closed in _run
            for name in ("data.bin", "timestamps.bin", "markers.jsonl", "events.jsonl")
        }
        return ()

    def _write_header(self) -> None:
        import pylsl

        from bci_universum import __version__

        info = self.receiver.info
        fmt = info.channel_format()
        header = {
            **self.labels,
            "paradigm": self.paradigm,
            "metadata": self.metadata,
            "software": {
                "bci_universum": __version__,
                "pylsl": pylsl.__version__,
                "liblsl": pylsl.library_version(),
            },
            "stream": {
                "name": info.name(),
                "type": info.type(),
                "source_id": info.source_id(),
                "hostname": info.hostname(),
                "n_channels": info.channel_count(),
                "channel_format": channel_format_name(fmt),
                "sfreq": info.nominal_srate(),
                "processing_flags": self.receiver._flags,
                "xml": info.as_xml(),
            },
            "marker_stream": None
            if self.markers is None
            else {
                "name": self.markers.info.name(),
                "source_id": self.markers.info.source_id(),
                "encoding": self.markers.encoding,
                "marker_map": self.markers.marker_map,
            },
            "channels": [
                {
                    "name": ch.name,
                    "type": ch.type,
                    "unit": unit.name,
                    "stream_unit": unit.declared,
                    "scale": unit.scale,
                    "position": ch.position,
                }
                for ch, unit in zip(describe_channels(info), channel_units(info), strict=True)
            ],
            "dtype": "float32" if fmt == pylsl.cf_float32 else "float64",
            "start_wall_time": datetime.now(timezone.utc).isoformat(),
            "start_lsl_time": pylsl.local_clock(),
        }
        path = self.partial / "header.json"
        with open(path, "w") as handle:
            json.dump(header, handle, indent=1)
            handle.flush()
            os.fsync(handle.fileno())
        self._dtype = np.dtype(header["dtype"])
        _say_renamed(header)

    def _run(self) -> None:
        # An error ends the writing at once (Worker keeps it for check() and stop()): a later
        # write could succeed after a lost one and misalign the files.
        try:
            while not self._stop_event.wait(self.flush_interval):
                self._flush()
            self._flush()
        finally:
            for handle in self._files.values():
                handle.close()

    def check(self) -> None:
        """Raise :class:`RecordingFailed` once writing has failed (a full disk), while recording.

        Raises
        ------
        RecordingFailed
            Naming the error and the command that turns what reached the disk into a FIF.
        """
        if self._error is not None:
            raise RecordingFailed(
                f"Writing {self.partial} failed: {self._error}. What reached the disk is kept "
                f"there: once the cause is fixed (e.g. disk space freed), run "
                f"{recover_hint(self.partial)}."
            ) from self._error

    def _flush(self) -> None:
        chunks = []
        while True:
            try:
                chunks.append(self._queue.get_nowait())
            except queue.Empty:
                break
        if chunks:
            data = np.concatenate([c[0] for c in chunks]).astype(self._dtype)
            stamps = np.concatenate([c[1] for c in chunks]).astype(np.float64)
            if self._first_stamp is None:
                self._first_stamp = float(stamps[0])
            n = self._n_within_duration(stamps)
            _fsync_append(self._files["data.bin"], data[:n].tobytes())
            _fsync_append(self._files["timestamps.bin"], stamps[:n].tobytes())
            self.n_samples += n
        if self.markers is not None:
            new, self._marker_pos = self.markers.read_since(self._marker_pos)
            if self._early_markers and self._first_stamp is not None:
                new = self._markers_before_start() + new
            if new:
                lines = "".join(json.dumps(vars(m)) + "\n" for m in new)
                _fsync_append(self._files["markers.jsonl"], lines.encode())
                self.n_markers += len(new)
        if self._first_stamp is None:
            return  # events wait for the first sample, to tell the recording's from earlier ones
        events = self.receiver.events[self._event_pos :]
        self._event_pos += len(events)
        # Events of earlier samples stay out: a chunk that arrived while subscribing reached
        # the receiver's events but not the queue, and a silence before the first sample
        # (the source had not started yet) ends with a "resumed" on that sample.
        first = self._first_stamp - 0.5 / self.receiver.info.nominal_srate()
        kept = []
        for event in events:
            if event.kind == "resumed" and event.time <= self._first_stamp:
                kept = [e for e in kept if e.kind != "silence"]
            elif event.kind == "silence" or event.time >= first:
                kept.append(event)
        events = kept
        if events:
            lines = "".join(json.dumps(vars(e)) + "\n" for e in events)
            _fsync_append(self._files["events.jsonl"], lines.encode())

    def _n_within_duration(self, stamps: np.ndarray) -> int:
        """How many of the samples stamped ``stamps`` lie in the recording's ``duration``
        (an unbroken prefix: once a sample past it has come, no other is written)."""
        if self.duration is None:
            return len(stamps)
        if self.complete:
            return 0
        info = self.receiver.info
        half = 0.5 / (info.nominal_srate() * stream_speed(info))
        beyond = np.flatnonzero(stamps >= self._first_stamp + self.duration - half)
        self.complete = beyond.size > 0
        return int(beyond[0]) if self.complete else len(stamps)

    def _markers_before_start(self) -> list:
        """Markers a live marker receiver got before :meth:`start` that belong to the data.

        A marker can arrive before the data sample it marks (the streams travel separately), so
        those stamped at or after the first recorded sample (within half a sample) are kept.
        """
        early, _ = self.markers.read_since(0)
        first = self._first_stamp - 0.5 / self.receiver.info.nominal_srate()
        kept = [m for m in early[: self._early_markers] if m.timestamp >= first]
        self._early_markers = 0
        return kept

    def stop(self, interrupted: bool = False) -> Path:
        """Stop recording, write the FIF and its sidecar, remove the partial folder.

        Parameters
        ----------
        interrupted : bool, default False
            The run was cut short (Ctrl-C, SIGTERM, the quit key); the sidecar says so.

        Returns
        -------
        fname : Path
            The FIF file.

        Raises
        ------
        RecordingFailed
            When writing failed (the partial folder is left for :func:`recover`).
        RuntimeError
            When the writer thread has not ended 30 s after the receivers stopped.
        """
        if self._thread is None:
            raise RuntimeError(f"Recorder of {self.fname} is not running.")
        # receivers we started stop first, so the last drain holds every sample they got
        self._stop_owned()
        self.receiver.unsubscribe(self._queue)
        self._halt()
        self._thread = None
        try:
            self.check()
            with hold_interrupts(self.fname.name, redeliver=not interrupted):
                return finalize(self.partial, recovered=False, interrupted=interrupted)
        finally:
            self._release()  # the writing is over: a failed recording is left to recover()

    def _stop_owned(self) -> None:
        while self._owned:
            self._owned.pop().stop()

    def _release(self) -> None:
        _unlock(self._lock_fd)
        self._lock_fd = None

    def __exit__(self, *exc) -> None:
        if self._thread is not None:
            self.stop()


@contextmanager
def hold_interrupts(what: str, redeliver: bool = True):
    """Hold Ctrl-C and SIGTERM while a recording is being finished (in the main thread).

    Operators press Ctrl-C twice: the second one must not cut short the work the first one
    started (the last markers, the FIF). A held signal goes to its own handler afterwards if
    ``redeliver``; pass False when the recording is ending because of one already.

    A block inside another one (a session finishing a run holds them while its recorder
    finishes the file) leaves them to the outer block: one message, and the outer block's
    ``redeliver`` decides.

    Parameters
    ----------
    what : str
        What is being finished, for the message shown when a signal is held.
    redeliver : bool, default True
        Deliver the first held signal once the block ends without an error.
    """
    if getattr(signal.getsignal(signal.SIGINT), "holds_interrupts", False):
        yield  # an outer block holds them
        return
    held = []

    def hold(signum, frame):
        if not held:
            logger.warning("Finishing %s first; this ends once it is written.", what)
        held.append(signum)

    hold.holds_interrupts = True
    try:
        previous = {sig: signal.signal(sig, hold) for sig in (signal.SIGINT, signal.SIGTERM)}
    except ValueError:  # not the main thread: signals are not ours to hold
        yield
        return
    try:
        yield
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
    if held and redeliver:
        signal.raise_signal(held[0])


def _sidecar_path(fname: Path) -> Path:
    return fname.with_suffix(".json")


def _read_jsonl(path: Path) -> list[dict]:
    if not path.exists():
        return []
    out = []
    for line in path.read_text().splitlines():
        try:
            out.append(json.loads(line))
        except json.JSONDecodeError:  # a line torn by a kill: only ever the last one
            break
    return out


def _mne_info(header: dict):
    import mne

    channels = header["channels"]
    known = set(mne.io.get_channel_type_constants())
    names = unique_channel_names([ch["name"] for ch in channels])
    types = [ch["type"] if ch["type"] in known else "misc" for ch in channels]
    info = mne.create_info(names, header["stream"]["sfreq"], types)
    positions = {
        name: ch["position"]
        for name, ch, kind in zip(names, channels, types, strict=True)
        if kind == "eeg" and ch["position"] is not None
    }
    if positions and len(positions) == types.count("eeg"):
        montage = mne.channels.make_dig_montage(ch_pos=positions, coord_frame="head")
        info.set_montage(montage, on_missing="ignore")
    return info


def _say_renamed(header: dict) -> None:
    """Log which channels of the recorded stream share a label, and their names in the FIF."""
    names = [ch["name"] for ch in header["channels"]]
    shared = {
        name: [k for k, other in enumerate(names) if other == name] for name in repeated(names)
    }
    if shared:
        unique = unique_channel_names(names)
        logger.warning(
            "LSL stream %r labels several channels alike (%s); the recording names them %s.",
            header["stream"].get("name"),
            "; ".join(
                f"{name!r}: channels {', '.join(str(k + 1) for k in ks)}"
                for name, ks in shared.items()
            ),
            ", ".join(unique[k] for ks in shared.values() for k in ks),
        )


def _onsets(stamps: np.ndarray, times: np.ndarray, sfreq: float) -> np.ndarray:
    """Seconds from the first sample in the recorded data of LSL times ``times``.

    Inside the data, through the recorded timestamps (so gaps where samples were lost do not
    shift later annotations); outside it, by the LSL time difference to the nearest end.
    """
    mono = np.maximum.accumulate(stamps)
    position = np.arange(len(stamps)) / sfreq
    # A stamp lower than an earlier one is raised to it: a time shared by several samples is
    # that of the first of them, the one stamped with it. np.interp returns the last of equal
    # xp; on the reversed arrays, the first.
    onsets = np.interp(-times, -mono[::-1], position[::-1])
    before = times < mono[0]
    after = times > mono[-1]
    onsets[before] = times[before] - mono[0]
    onsets[after] = position[-1] + times[after] - mono[-1]
    return onsets


_HEADER_KEYS = (
    "subject", "session", "task", "run", "paradigm", "metadata", "software", "stream",
    "marker_stream", "channels", "dtype", "start_wall_time", "start_lsl_time",
)  # fmt: skip
_CHANNEL_KEYS = ("name", "type", "unit", "stream_unit", "scale", "position")


def _read_header(partial: Path) -> dict:
    """The ``header.json`` of a partial recording, checked; errors name the file and the key."""
    path = partial / "header.json"
    if not path.is_file():
        raise FileNotFoundError(f"{partial} has no header.json: nothing recoverable there.")
    try:
        header = json.loads(path.read_text())
    except (json.JSONDecodeError, UnicodeDecodeError) as err:
        raise ValueError(
            f"{path} is corrupt ({err}): without it the samples cannot be interpreted."
        ) from None
    if not isinstance(header, dict):
        raise ValueError(f"{path} does not hold a recording header (a JSON object).")
    missing = [key for key in _HEADER_KEYS if key not in header]
    if missing:
        raise ValueError(f"{path} lacks {missing}: it is corrupt or not a recorder's header.")
    channels = header["channels"]
    if not isinstance(channels, list) or not channels:
        raise ValueError(f"{path}: 'channels' must be a non-empty list, got {channels!r}.")
    for k, ch in enumerate(channels):
        lacking = [key for key in _CHANNEL_KEYS if not isinstance(ch, dict) or key not in ch]
        if lacking:
            raise ValueError(f"{path}: channel {k} lacks {lacking}.")
        if not is_number(ch["scale"]) or ch["scale"] == 0:
            raise ValueError(
                f"{path}: channel {k} 'scale' must be a finite non-zero number, "
                f"got {ch['scale']!r}."
            )
    if header["dtype"] not in ("float32", "float64"):
        raise ValueError(
            f"{path}: 'dtype' must be 'float32' or 'float64', got {header['dtype']!r}."
        )
    stream = header["stream"]
    if not isinstance(stream, dict) or not (
        is_number(stream.get("sfreq")) and stream["sfreq"] > 0
    ):
        raise ValueError(f"{path}: 'stream' must give a positive 'sfreq'.")
    if stream.get("n_channels", len(channels)) != len(channels):
        raise ValueError(
            f"{path}: the stream has {stream['n_channels']!r} channels ('n_channels') but "
            f"'channels' describes {len(channels)}: the samples cannot be cut into rows."
        )
    if not is_number(header["start_lsl_time"]):
        raise ValueError(
            f"{path}: 'start_lsl_time' must be a number, got {header['start_lsl_time']!r}."
        )
    try:
        datetime.fromisoformat(header["start_wall_time"])
    except (TypeError, ValueError):
        raise ValueError(
            f"{path}: 'start_wall_time' must be an ISO 8601 time, "
            f"got {header['start_wall_time']!r}."
        ) from None
    return header


def finalize(partial, recovered: bool = True, interrupted: bool = False) -> Path:
    """Turn a partial recording folder into ``<name>_raw.fif`` and its JSON sidecar.

    Parameters
    ----------
    partial : path-like
        The ``*_raw.fif.partial`` folder.
    recovered : bool, default True
        Whether this follows a crash (noted in the sidecar). A recovered run counts as
        interrupted: the kill (or the failed write) cut it short.
    interrupted : bool, default False
        Whether the run was cut short by the operator (noted in the sidecar).

    Returns
    -------
    fname : Path
        The FIF file. The partial folder is removed once the FIF reads back complete.
    """
    import mne

    partial = Path(partial)
    header = _read_header(partial)
    for name in ("data.bin", "timestamps.bin"):
        if not (partial / name).is_file():
            raise FileNotFoundError(f"{partial / name} is missing: the samples are not there.")
    fname = partial.with_name(partial.name[: -len(PARTIAL_SUFFIX)])
    _check_destination(fname, partial)
    if recovered:  # a recording says it when it starts
        _say_renamed(header)
    info = _mne_info(header)
    n_ch = info["nchan"]
    sfreq = info["sfreq"]
    data = np.fromfile(partial / "data.bin", dtype=header["dtype"])
    stamps = np.fromfile(partial / "timestamps.bin", dtype=np.float64)
    n = min(len(data) // n_ch, len(stamps))
    if n == 0:
        raise ValueError(f"{partial} holds no complete sample: nothing to write.")
    data = data[: n * n_ch].reshape(n, n_ch).T.astype(np.float64)
    stamps = stamps[:n]
    scales = np.array([ch["scale"] for ch in header["channels"]])
    data *= scales[:, None]
    # FIF stores data / cal: with the unit's scale as cal it holds the stream's own values,
    # bit-exact at the stream's precision (single for float32 streams, double otherwise)
    for ch, scale in zip(info["chs"], scales, strict=True):
        ch["cal"] = float(scale)
    raw = mne.io.RawArray(data, info, verbose="error")
    start = datetime.fromisoformat(header["start_wall_time"])
    first_wall = start.timestamp() + stamps[0] - header["start_lsl_time"]
    raw.set_meas_date(datetime.fromtimestamp(first_wall, tz=timezone.utc))
    raw.info["subject_info"] = {"his_id": f"sub-{header['subject']}"}

    markers = _read_jsonl(partial / "markers.jsonl")
    events = _read_jsonl(partial / "events.jsonl")
    skips = [e for e in events if e["kind"] in ("gap", "counter_reset")]
    times = np.array([m["timestamp"] for m in markers] + [e["time"] for e in skips])
    descriptions = [m["text"] for m in markers] + ["BAD_ACQ_SKIP"] * len(skips)
    durations = np.array([m.get("duration", 0.0) for m in markers] + [0.0] * len(skips))
    onsets = _onsets(stamps, times, sfreq) if len(times) else np.zeros(0)
    duration = n / sfreq
    # the two inlets' clock corrections differ by microseconds: a marker on the first sample
    # may come out a hair before it
    onsets[(onsets < 0) & (onsets >= -0.5 / sfreq)] = 0.0
    inside = (onsets >= 0) & (onsets < duration)
    raw.set_annotations(
        mne.Annotations(
            onsets[inside],
            durations[inside],
            [d for d, keep in zip(descriptions, inside, strict=True) if keep],
            orig_time=raw.info["meas_date"],
        ),
        emit_warning=False,  # a marker lasting past the end of the recording is cut there
    )
    outside = [
        {"text": d, "onset": float(o)}
        for d, o, keep in zip(descriptions, onsets, inside, strict=True)
        if not keep
    ]
    # Everything is written inside the partial folder under its final name, then moved out: a
    # kill during the write leaves the folder recoverable, never a torn FIF in the way.
    for stale in partial.glob("*.fif"):
        stale.unlink()
    staged = partial / fname.name
    fmt = "single" if header["dtype"] == "float32" else "double"
    raw.save(staged, fmt=fmt, verbose="error")  # stale ones are gone
    check = mne.io.read_raw_fif(staged, preload=False, verbose="error")
    if check.n_times != n:
        raise RuntimeError(f"{fname} reads back {check.n_times} samples instead of {n}.")

    sidecar = {
        **{key: header[key] for key in ("subject", "session", "task", "run", "paradigm")},
        "metadata": header["metadata"],
        "software": header["software"],
        "stream": {k: v for k, v in header["stream"].items() if k != "xml"},
        "marker_stream": header["marker_stream"],
        "sfreq": sfreq,
        "ch_names": info["ch_names"],
        "ch_types": info.get_channel_types(),
        "units": [ch["unit"] for ch in header["channels"]],
        "stream_units": [ch["stream_unit"] for ch in header["channels"]],
        "unit_scalings": [ch["scale"] for ch in header["channels"]],
        "start_time": raw.info["meas_date"].isoformat(),
        "first_sample_lsl_time": float(stamps[0]),
        "duration_s": duration,
        "n_samples": n,
        "n_markers": len(markers),
        "lost_samples": int(sum(e["n_samples"] for e in skips)),
        "stream_events": events,
        "annotations_outside_data": outside,
        "recovered": bool(recovered),
        "interrupted": bool(interrupted or recovered),
    }
    staged_sidecar = _sidecar_path(staged)
    staged_sidecar.write_text(json.dumps(sidecar, indent=1))
    _publish(staged, staged_sidecar, fname.parent)
    for path in partial.iterdir():
        path.unlink()
    partial.rmdir()
    return fname


def _check_destination(fname: Path, partial: Path) -> None:
    """Refuse to finalise over an existing recording, saying how to get the samples out."""
    sidecar = _sidecar_path(fname)
    if fname.exists():
        raise _in_the_way(fname, partial)
    if sidecar.exists():
        if not _is_sidecar_of(sidecar, partial):
            raise _in_the_way(sidecar, partial)
        sidecar.unlink()  # this recording's own, published just before a kill: written again


def _in_the_way(path: Path, partial: Path) -> RecordingExistsError:
    """The error for a file at ``path``, where finalising ``partial`` writes, readable or not."""
    return RecordingExistsError(
        f"{path} already exists (another recording, or a write cut short by an older "
        f"version); refusing to overwrite it. The samples are safe in {partial}: move "
        f"{path.name} away, then run {recover_hint(partial)}."
    )


def _is_sidecar_of(sidecar: Path, partial: Path) -> bool:
    """Whether ``sidecar`` is the one a finalisation of ``partial`` published before it was
    killed, just before moving the FIF out (the FIF is moved last)."""
    try:
        content = json.loads(sidecar.read_text())
        first = np.fromfile(partial / "timestamps.bin", dtype=np.float64, count=1)
        return (
            isinstance(content, dict)
            and content.get("first_sample_lsl_time") == float(first[0])
            and content.get("stream", {}).get("source_id")
            == _read_header(partial)["stream"].get("source_id")
        )
    except (OSError, ValueError, IndexError, AttributeError):
        return False


def _publish(staged: Path, staged_sidecar: Path, folder: Path) -> None:
    """Move a finished FIF (and its split parts) and its sidecar from the partial folder to
    ``folder``, never over an existing file, the FIF's first file last: its presence means
    the recording is complete. If one is refused, those already moved go back.

    Split parts keep their names, which the first file refers to.
    """
    parts = sorted(p for p in staged.parent.glob("*.fif") if p != staged)
    order = [*parts, staged_sidecar, staged]
    for path in order:
        _fsync_file(path)
    moved = []
    try:
        for path in order:
            _move_new(path, folder / path.name)
            moved.append(path)
    except RecordingExistsError:
        for path in reversed(moved):
            os.replace(folder / path.name, path)
        raise
    _fsync_file(folder)


def _move_new(path: Path, target: Path) -> None:
    """Rename ``path`` (in a partial folder) to ``target`` unless ``target`` exists
    (atomically, where the file system has hard links)."""
    try:
        os.link(path, target)
    except FileExistsError:
        raise _in_the_way(target, path.parent) from None
    except OSError:  # no hard links here (FAT, exFAT): check, then rename
        if target.exists():
            raise _in_the_way(target, path.parent) from None
        os.replace(path, target)
    else:
        path.unlink()


def _fsync_file(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def recover(path) -> Path:
    """Turn what a crashed or killed recording left on disk into a valid FIF and sidecar.

    Parameters
    ----------
    path : path-like
        The ``*_raw.fif.partial`` folder, the FIF name it was heading for, or a folder holding
        exactly one partial recording.

    Returns
    -------
    fname : Path
        The recovered FIF (its sidecar says ``"recovered": true`` and ``"interrupted": true``:
        the kill cut the run short).

    Raises
    ------
    FileNotFoundError
        When there is nothing recoverable at ``path``.
    ValueError
        When a folder holds several partial recordings (name the one to recover).
    RecordingInProgressError
        When the recording is still running (its process holds the partial folder's lock);
        nothing is touched.
    """
    partial = _find_partial(Path(path))
    fd = _lock_partial(partial)  # held while finalising: one recovery at a time
    try:
        return finalize(partial, recovered=True)
    finally:
        _unlock(fd)


def _find_partial(path: Path) -> Path:
    """The partial folder :func:`recover` means by ``path``."""
    if path.name.endswith(PARTIAL_SUFFIX) and path.is_dir():
        return path
    sibling = path.with_name(path.name + PARTIAL_SUFFIX)
    if sibling.is_dir():
        return sibling
    if path.is_dir():  # a running recording is found too: recover refuses it, naming it
        found = _partials(path)
        if len(found) == 1:
            return found[0]
        if len(found) > 1:
            raise ValueError(
                f"{path} holds {len(found)} partial recordings; recover one of "
                f"{[p.name for p in found]}."
            )
    raise FileNotFoundError(f"Nothing recoverable at {path}: no *{PARTIAL_SUFFIX} recording.")
