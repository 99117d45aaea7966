"""Real loopback outlets with a sample-counter channel, shared by the acquisition tests."""

import time
from contextlib import contextmanager
from uuid import uuid4

import numpy as np
import pylsl

from acquisition.streams import make_stream_info


def counter_stream_info(n_eeg=4, sfreq=250.0, name=None, source_id=None, fmt="float32"):
    """A stream of ``n_eeg`` EEG channels (µV) plus a last ``counter`` channel."""
    ch_names = [f"EEG{k:02d}" for k in range(n_eeg)] + ["counter"]
    return make_stream_info(
        name or f"test-{uuid4().hex}",
        ch_names,
        sfreq,
        ch_types=["eeg"] * n_eeg + ["counter"],
        units=["microvolts"] * n_eeg + ["n/a"],
        channel_format=fmt,
        source_id=source_id or uuid4().hex,
    )


def counter_chunk(start, n, n_eeg):
    """Samples ``start .. start+n-1``: EEG value = counter + channel/10, counter last."""
    counter = np.arange(start, start + n, dtype=np.float64)
    data = counter[:, None] + np.arange(n_eeg)[None, :] / 10.0
    return np.column_stack([data, counter])


def wait_until(predicate, timeout=10.0, what="condition"):
    """Poll ``predicate`` until it is true; fail after ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout} s waiting for {what}")
        time.sleep(0.01)


def make_outlet(info):
    return pylsl.StreamOutlet(info)


def make_crashed_recording(folder, n_samples=50, n_eeg=2, subject="07"):
    """A real partial recording as a killed recorder leaves it: ``n_samples`` of a counter
    stream with ``n_eeg`` EEG channels, its writer stopped without finalising."""
    from acquisition.receiver import StreamReceiver
    from acquisition.recorder import Recorder

    info = counter_stream_info(n_eeg, 100.0)
    outlet = pylsl.StreamOutlet(info)
    receiver = StreamReceiver(source_id=info.source_id(), timeout=5.0)
    recorder = Recorder(receiver, None, folder, subject=subject).start()
    assert outlet.wait_for_consumers(5.0)
    outlet.push_chunk(counter_chunk(0, n_samples, n_eeg))
    wait_until(lambda: recorder.n_samples == n_samples, what=f"{n_samples} samples on disk")
    crash(recorder)
    del outlet
    return recorder.partial


def crash(recorder):
    """End ``recorder``'s writer and receiver without finalising, as a kill would."""
    recorder._stop_event.set()
    recorder._thread.join(5.0)
    recorder._release()  # as the end of its process would
    recorder.receiver.stop()


@contextmanager
def reaped(proc):
    """Kill and reap ``proc`` on the way out when it still runs (a failed wait or assertion
    must not leave a recording process behind)."""
    try:
        yield proc
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate(timeout=10)
