"""How the LSL benchmarks end a run, finished or interrupted by Ctrl-C.

A run reads a stream that a separate process pushes, with reader threads and a
:class:`~acquisition.receiver.StreamReceiver`. :func:`end_run`, called in a ``finally`` block,
leaves none of them running: a Ctrl-C ends the benchmark at once, not at a second Ctrl-C.
"""

from __future__ import annotations

import subprocess
import threading
from collections.abc import Iterable


def end_run(
    proc: subprocess.Popen,
    receiver,
    stop: threading.Event | None = None,
    threads: Iterable[threading.Thread] = (),
) -> None:
    """Stop a run's reader threads and receiver, then the process pushing its stream.

    Parameters
    ----------
    proc : subprocess.Popen
        The process pushing the stream: terminated if it still runs, then waited for, even
        when stopping the receiver raises. It outlives the readers, so they see no stream loss.
    receiver : acquisition.receiver.StreamReceiver
        The run's receiver, stopped.
    stop : threading.Event | None
        Set to tell the reader ``threads`` to end.
    threads : iterable of threading.Thread
        The reader threads (daemon threads: one blocked in liblsl cannot keep the process
        alive), each joined for up to 5 s if it was started.
    """
    if stop is not None:
        stop.set()
    for thread in threads:
        if thread.is_alive():
            thread.join(5)
    try:
        receiver.stop()
    finally:
        if proc.poll() is None:
            proc.terminate()
        proc.wait()
