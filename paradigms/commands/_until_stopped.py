"""Block a command until its work is done, a duration has passed, SIGTERM or Ctrl-C."""

from __future__ import annotations

import signal
import threading
import time
from collections.abc import Callable

#: What the help of a command that runs until stopped says of Ctrl-C and SIGTERM: once
#: :func:`run_until_stopped` has begun they are how it ends (exit code 0), before they
#: interrupt it (``KeyboardInterrupt``, exit code 130).
STOPPED_HELP = (
    "Ctrl-C or SIGTERM stop it cleanly (exit code 0) once it has said that it runs; before "
    "that, while it starts or waits for a stream, they interrupt it (exit code 130)."
)


def run_until_stopped(
    done: Callable[[], bool] | None = None,
    duration: float | None = None,
    poll: float = 0.2,
    begin: Callable[[], None] | None = None,
    announce: str | None = None,
) -> str:
    """Wait until ``done()`` is true, ``duration`` seconds have passed, SIGTERM or Ctrl-C.

    Parameters
    ----------
    done : callable | None
        Polled every ``poll`` seconds; None waits for the other conditions only.
    duration : float | None
        Seconds to wait at most; None for no limit.
    poll : float
        Seconds between checks.
    begin : callable | None
        Called once SIGTERM is handled, before waiting: start the work there. Ctrl-C or
        SIGTERM while it runs (waiting for streams) raise ``KeyboardInterrupt`` to the caller:
        there is nothing begun to end.
    announce : str | None
        Printed once ``begin`` has returned and from then on a signal stops the wait, so that
        a signal sent as soon as the announcement appears stops it cleanly.

    Returns
    -------
    reason : str
        ``"done"``, ``"duration"``, ``"terminated"`` (SIGTERM) or ``"interrupted"`` (Ctrl-C).
    """
    stop = threading.Event()
    begun = False

    def terminate(signum, frame):
        if begun:
            stop.set()
            return
        if callable(previous):  # the command's own handler (it ignores any later signal)
            previous(signum, frame)
        raise KeyboardInterrupt(signal.Signals(signum).name)

    previous = signal.signal(signal.SIGTERM, terminate)
    try:
        if begin is not None:
            begin()
        begun = True
        if announce is not None:
            print(announce, flush=True)
        deadline = None if duration is None else time.monotonic() + duration
        while not stop.is_set():
            if done is not None and done():
                return "done"
            left = poll if deadline is None else min(poll, deadline - time.monotonic())
            if left <= 0:
                return "duration"
            stop.wait(left)
        return "terminated"
    except KeyboardInterrupt:
        if not begun:
            raise
        return "interrupted"
    finally:
        signal.signal(signal.SIGTERM, previous)
