"""How the LSL benchmarks end a run, finished or interrupted by Ctrl-C.

A run reads a stream that a separate process pushes, with reader threads and a
:class:`~acquisition.receiver.StreamReceiver`. :func:`lsl_run` starts them and, finished or
interrupted, leaves none of them running: a Ctrl-C ends the benchmark at once, not at a second
Ctrl-C.
"""

from __future__ import annotations

import subprocess
import threading
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager


@contextmanager
def lsl_run(
    proc: subprocess.Popen,
    receiver,
    readers: Iterable[Callable[[], None]] = (),
    stop: threading.Event | None = None,
) -> Iterator[None]:
    """Start ``receiver`` and a daemon thread per reader function; end them on the way out.

    Parameters
    ----------
    proc, receiver, stop
        As :func:`end_run` takes them.
    readers : iterable of callable
        The reader threads' functions; they return once ``stop`` is set.
    """
    threads = [threading.Thread(target=reader, daemon=True) for reader in readers]
    try:
        receiver.start()
        for thread in threads:
            thread.start()
        yield
    finally:  # on Ctrl-C too: no reader thread or pushing process is left running
        end_run(proc, receiver, stop, threads)


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
