"""A background thread that owns one LSL inlet from creation to destruction.

All liblsl inlet calls (create, open, pull, close) happen in that one thread; other threads
only read what it stored under a lock.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence

from .streams import describe_query, resolve_stream
from .worker import Worker

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


class InletThread(Worker):
    """Base class: resolve a stream, open an inlet in a background thread, pull until stopped.

    Subclasses implement :meth:`_on_connect` (validate the full stream info, allocate buffers)
    and :meth:`_pull` (one pull from the inlet, waiting at most ``timeout``, returning the
    number of samples pulled). On :meth:`stop`, what already reached the inlet is pulled before
    it closes.
    """

    _join_timeout = 5.0
    _poll = 0.05

    def __init__(
        self,
        name: str | None,
        source_id: str | None,
        stype: str | None,
        timeout: float,
        processing_flags,
        max_buflen: int,
    ) -> None:
        super().__init__()
        if name is None and source_id is None and stype is None:
            raise ValueError("Select the stream by name, source_id and/or stype.")
        for what, value in (("name", name), ("source_id", source_id), ("stype", stype)):
            if value is not None and not (isinstance(value, str) and value.strip()):
                # a blank selection matches no stream: it would only time out
                raise ValueError(f"{what} must be a non-empty string or None, got {value!r}.")
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
        self.info = None

    @property
    def description(self) -> str:
        return describe_query(self.name, self.source_id, self.stype)

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
        super().start()
        self._await_connection()
        return self

    def stop(self) -> None:
        """Stop acquiring, close the inlet and join the thread (with a timeout).

        Errors of the acquisition thread are raised by the readers, not here. A thread still
        connecting (a start interrupted by Ctrl-C) is told to stop and not joined: it sits in a
        liblsl call for up to ``timeout`` and ends by itself once that returns.
        """
        if self._thread is not None and not self._ready.is_set():
            self._stop_event.set()
            self._thread = None
        self._halt()
        self._thread = None

    def _prepare(self) -> tuple:
        self._ready = threading.Event()
        self._startup: list[BaseException] = []
        return self._ready, self._startup

    def _await_connection(self) -> None:
        # resolve + open_stream + info each wait at most `timeout`
        try:
            ready = self._ready.wait(3 * self.timeout + self._join_timeout)
        except BaseException:  # Ctrl-C: the thread ends by itself once liblsl returns
            self._stop_event.set()
            raise
        if not ready:
            self._stop_event.set()
            raise TimeoutError(f"Connecting to {self.description} did not finish in time.")
        if self._startup:
            self._thread.join(self._join_timeout)
            self._thread = None
            raise self._startup[0]

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
                self._pull(inlet, self._poll)
            # what reached the inlet before the stop is delivered, not dropped with it
            for _ in range(1000):
                if not self._pull(inlet, 0.0):
                    break
        except BaseException as err:
            with self._lock:
                self._error = err
        finally:
            inlet.close_stream()
            del inlet

    def _on_connect(self, info) -> None:
        raise NotImplementedError

    def _pull(self, inlet, timeout: float) -> int:
        raise NotImplementedError


def start_together(inlets) -> None:
    """Start several :class:`InletThread` at once (each connection takes ~0.6 s of clock probes).

    When one fails, the others are stopped and its error is raised.
    """
    launched, ok, error = [], [], None
    try:
        for inlet in inlets:
            try:
                Worker.start(inlet)
                launched.append(inlet)
            except Exception as err:
                error = err
                break
        for inlet in launched:
            try:
                inlet._await_connection()
                ok.append(inlet)
            except Exception as err:
                error = error or err
    except BaseException:  # Ctrl-C, also while launching: none is waited for (daemon threads)
        for inlet in inlets:
            inlet._stop_event.set()
        raise
    if error is not None:
        for inlet in ok:
            inlet.stop()
        raise error
