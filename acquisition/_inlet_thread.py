"""A background thread that owns one LSL inlet from creation to destruction.

All liblsl inlet calls (create, open, pull, close) happen in that one thread; other threads
only read what it stored under a lock.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence

from .streams import describe_query, resolve_stream

_FLAG_NAMES = {"clocksync": 1, "dejitter": 2, "monotonize": 4, "threadsafe": 8}


def processing_flags_code(flags: str | Sequence[str] | int | None) -> int:
    """Turn ``"all"``, ``("clocksync", "dejitter")``, an int or None into liblsl's bit mask."""
    if flags is None:
        return 0
    if isinstance(flags, int):
        if flags < 0 or flags > 15:
            raise ValueError(f"processing_flags bit mask must be in [0, 15], got {flags}.")
        return flags
    if isinstance(flags, str):
        flags = list(_FLAG_NAMES) if flags == "all" else [flags]
    code = 0
    for flag in flags:
        if flag not in _FLAG_NAMES:
            raise ValueError(
                f"Unknown processing flag {flag!r}; expected some of {sorted(_FLAG_NAMES)} "
                "or 'all'."
            )
        code |= _FLAG_NAMES[flag]
    return code


class InletThread:
    """Base class: resolve a stream, open an inlet in a background thread, pull until stopped.

    Subclasses implement :meth:`_on_connect` (validate the full stream info, allocate buffers)
    and :meth:`_pull` (one bounded-time pull from the inlet).
    """

    _join_timeout = 5.0

    def __init__(
        self,
        name: str | None,
        source_id: str | None,
        stype: str | None,
        timeout: float,
        processing_flags,
        max_buflen: int,
    ) -> None:
        if name is None and source_id is None and stype is None:
            raise ValueError("Select the stream by name, source_id and/or stype.")
        if timeout is None or not timeout > 0:
            raise ValueError(f"timeout must be a positive number of seconds, got {timeout!r}.")
        self.name = name
        self.source_id = source_id
        self.stype = stype
        self.timeout = float(timeout)
        self.processing_flags = processing_flags
        self._flags = processing_flags_code(processing_flags)
        self.max_buflen = int(max_buflen)
        self._lock = threading.Lock()
        self._stop_event = threading.Event()
        self._thread: threading.Thread | None = None
        self._error: BaseException | None = None
        self.info = None

    @property
    def description(self) -> str:
        return describe_query(self.name, self.source_id, self.stype)

    @property
    def running(self) -> bool:
        """True while the acquisition thread is alive."""
        return self._thread is not None and self._thread.is_alive()

    def start(self):
        """Connect (waiting at most ``timeout`` for the stream) and start acquiring.

        Raises
        ------
        TimeoutError
            When the stream is not found or does not answer within ``timeout``.
        ValueError
            When the stream does not match the expectations.
        """
        if self.running:
            raise RuntimeError(f"The receiver of {self.description} is already running.")
        self._stop_event.clear()
        self._error = None
        ready = threading.Event()
        startup: list[BaseException] = []
        self._thread = threading.Thread(
            target=self._run, args=(ready, startup), name=f"lsl-{self.name}", daemon=True
        )
        self._thread.start()
        # resolve + open_stream + info each wait at most `timeout`
        if not ready.wait(3 * self.timeout + self._join_timeout):
            self._stop_event.set()
            raise TimeoutError(f"Connecting to {self.description} did not finish in time.")
        if startup:
            self._thread.join(self._join_timeout)
            self._thread = None
            raise startup[0]
        return self

    def stop(self) -> None:
        """Stop acquiring, close the inlet and join the thread (with a timeout)."""
        self._stop_event.set()
        thread, self._thread = self._thread, None
        if thread is not None:
            thread.join(self._join_timeout)
            if thread.is_alive():
                raise RuntimeError(
                    f"The acquisition thread of {self.description} did not stop within "
                    f"{self._join_timeout:g} s."
                )

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()

    def _run(self, ready: threading.Event, startup: list) -> None:
        import pylsl

        inlet = None
        try:
            inlet = pylsl.StreamInlet(
                resolve_stream(self.name, self.source_id, self.stype, self.timeout),
                max_buflen=self.max_buflen,
                recover=True,
                processing_flags=self._flags,
            )
            try:
                # description and first clock offset before subscribing: the outlet sees a
                # consumer only once this inlet can pull at once (a paced replay waiting for
                # consumers would otherwise run ahead by the set-up time)
                info = inlet.info(self.timeout)
                inlet.time_correction(self.timeout)
                inlet.open_stream(self.timeout)
            except pylsl.util.TimeoutError:
                raise TimeoutError(
                    f"{self.description} was found but did not answer within {self.timeout:g} s."
                ) from None
            self._on_connect(info)
            self.info = info
        except BaseException as err:
            startup.append(err)
            ready.set()
            del inlet
            return
        ready.set()
        try:
            while not self._stop_event.is_set():
                self._pull(inlet)
        except BaseException as err:
            with self._lock:
                self._error = err
        finally:
            inlet.close_stream()
            del inlet

    def _on_connect(self, info) -> None:
        raise NotImplementedError

    def _pull(self, inlet) -> None:
        raise NotImplementedError
