"""The one base of every background thread in :mod:`acquisition`.

A :class:`Worker` owns one daemon thread: :meth:`~Worker.start` runs the set-up in the caller's
thread and then the thread, :meth:`~Worker.wait` joins it, :meth:`~Worker.stop` asks it to stop
and joins it (with a timeout), and the context manager does both. An exception in the thread is
kept and raised, wrapped with the worker's description, by :meth:`~Worker.wait` and
:meth:`~Worker.stop`.
"""

from __future__ import annotations

import threading


class Worker:
    """Base class: one background thread with start / wait / stop and a context manager.

    Subclasses implement :meth:`_run` (the thread's body, which returns once
    ``self._stop_event`` is set) and may override :meth:`_prepare` (set-up in the caller's
    thread, returning the arguments of :meth:`_run`) and :meth:`_cleanup` (after the thread
    ended, in the caller's thread).
    """

    _join_timeout = 10.0

    def __init__(self) -> None:
        self._thread: threading.Thread | None = None
        self._stop_event = threading.Event()
        self._error: BaseException | None = None

    @property
    def description(self) -> str:
        """What this worker is, for messages."""
        return type(self).__name__

    @property
    def running(self) -> bool:
        """True while the thread is alive."""
        return self._thread is not None and self._thread.is_alive()

    def start(self):
        """Set up and start the thread; returns the worker."""
        if self.running:
            raise RuntimeError(f"{self.description} is already running.")
        self._stop_event.clear()
        self._error = None
        args = self._prepare()
        self._thread = threading.Thread(
            target=self._main, args=args, name=self.description, daemon=True
        )
        self._thread.start()
        return self

    def wait(self, timeout: float | None = None) -> bool:
        """Wait for the thread to end by itself; True if it did. Raises the thread's error."""
        if self._thread is None:
            raise RuntimeError(f"{self.description} was not started.")
        self._thread.join(timeout)
        self._raise_error()
        return not self._thread.is_alive()

    def stop(self) -> None:
        """Ask the thread to stop, join it, clean up; raises the thread's error."""
        self._halt()
        self._raise_error()

    def _halt(self) -> None:
        self._stop_event.set()
        thread = self._thread
        if thread is not None:
            thread.join(self._join_timeout)
            if thread.is_alive():
                raise RuntimeError(
                    f"The thread of {self.description} did not stop within "
                    f"{self._join_timeout:g} s."
                )
        self._cleanup()

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()

    def _main(self, *args) -> None:
        try:
            self._run(*args)
        except BaseException as err:  # raised in the caller's thread by wait() / stop()
            self._error = err

    def _raise_error(self) -> None:
        if self._error is not None:
            raise RuntimeError(f"{self.description} failed: {self._error}") from self._error

    def _prepare(self) -> tuple:
        return ()

    def _run(self, *args) -> None:
        raise NotImplementedError

    def _cleanup(self) -> None:
        pass
