"""The inlet worker base on real loopback streams: one thread owns the inlet, clean errors."""

import signal
import threading
import time
from uuid import uuid4

import numpy as np
import pylsl
import pytest

from acquisition._inlet_thread import InletThread, processing_flags_code, start_together

from .lsl_helpers import wait_until


def test_processing_flags_are_liblsl_bits():
    assert processing_flags_code(None) == 0
    assert processing_flags_code("all") == pylsl.proc_ALL
    assert processing_flags_code("dejitter") == pylsl.proc_dejitter
    both = pylsl.proc_clocksync | pylsl.proc_monotonize
    assert processing_flags_code(("clocksync", "monotonize")) == both
    assert processing_flags_code(["threadsafe"]) == pylsl.proc_threadsafe
    assert processing_flags_code(both) == both
    with pytest.raises(ValueError, match=r"bit mask must be in \[0, 15\], got 16"):
        processing_flags_code(16)
    with pytest.raises(ValueError, match="Unknown processing flag 'smooth'"):
        processing_flags_code(("clocksync", "smooth"))


class _Collector(InletThread):
    """Pulls single samples; records which thread made each inlet call. ``hold``: the pulls
    of the acquisition loop take nothing (they count what waits in the inlet), so that only
    the pulls after :meth:`stop` can deliver it."""

    def __init__(self, source_id, timeout=5.0, reject=None, fail_after=None, hold=False):
        super().__init__(None, source_id, None, timeout, None, 10)
        self.samples, self.stamps, self.threads = [], [], set()
        self.reject, self.fail_after, self.hold = reject, fail_after, hold
        self.waiting = 0

    def _on_connect(self, info):
        self.threads.add(threading.get_ident())
        if self.reject is not None:
            raise ValueError(self.reject)
        self.n_channels = info.channel_count()

    def _pull(self, inlet, timeout):
        self.threads.add(threading.get_ident())
        if self.hold and timeout > 0:
            self.waiting = inlet.samples_available()
            self._stop_event.wait(timeout)
            return 0
        sample, stamp = inlet.pull_sample(timeout=timeout)
        if sample is None:
            return 0
        with self._lock:
            self.samples.append(sample)
            self.stamps.append(stamp)
        if self.fail_after is not None and len(self.samples) >= self.fail_after:
            raise RuntimeError("pull failed")
        return 1


def _outlet():
    info = pylsl.StreamInfo(f"inlet-{uuid4().hex}", "EEG", 3, 100.0, "float32", uuid4().hex)
    return pylsl.StreamOutlet(info), info.source_id()


@pytest.mark.lsl
def test_one_background_thread_owns_the_inlet_from_connect_to_close():
    outlet, source_id = _outlet()
    collector = _Collector(source_id)
    assert not collector.running
    with collector:
        assert collector.running and collector.info.source_id() == source_id
        assert collector.n_channels == 3
        with pytest.raises(RuntimeError, match="already running"):
            collector.start()
        assert outlet.wait_for_consumers(5.0)
        sent = np.arange(30, dtype=np.float32).reshape(10, 3)
        stamps = 1000.0 + np.arange(10) / 100.0
        for row, stamp in zip(sent, stamps, strict=True):
            outlet.push_sample(row, stamp)
        wait_until(lambda: len(collector.samples) == 10, what="10 samples")
    assert not collector.running
    np.testing.assert_array_equal(collector.samples, sent)
    np.testing.assert_array_equal(collector.stamps, stamps)  # no processing flags: as pushed
    (owner,) = collector.threads
    assert owner != threading.get_ident()
    # the inlet is closed: the outlet loses its consumer
    wait_until(lambda: not outlet.have_consumers(), what="the inlet to close")
    # and a stopped worker starts again on the same stream
    with collector:
        outlet.push_sample([1.0, 2.0, 3.0])
        wait_until(lambda: len(collector.samples) == 11, what="one more sample")


@pytest.mark.lsl
def test_stop_delivers_every_sample_that_reached_the_inlet():
    """Samples already in the inlet when the worker stops are pulled, each once, in order."""
    outlet, source_id = _outlet()
    collector = _Collector(source_id, hold=True)
    with collector:
        assert outlet.wait_for_consumers(5.0)
        sent = np.arange(600, dtype=np.float32).reshape(200, 3)
        stamps = 500.0 + np.arange(200) / 100.0
        for start in range(0, 200, 25):
            outlet.push_chunk(sent[start : start + 25], stamps[start : start + 25])
        wait_until(lambda: collector.waiting == 200, what="200 samples waiting in the inlet")
        assert collector.samples == []
    np.testing.assert_array_equal(collector.samples, sent)
    np.testing.assert_array_equal(collector.stamps, stamps)


@pytest.mark.lsl
def test_start_reports_what_went_wrong():
    missing = _Collector(f"absent-{uuid4().hex}", timeout=0.3)
    with pytest.raises(TimeoutError, match="absent-"):
        missing.start()
    assert not missing.running

    outlet, source_id = _outlet()
    refused = _Collector(source_id, reject="3 channels, expected 8")
    with pytest.raises(ValueError, match="expected 8"):
        refused.start()
    assert not refused.running and refused.info is None

    failing = _Collector(source_id, fail_after=1)
    with failing:
        assert outlet.wait_for_consumers(5.0)
        outlet.push_sample([0.0, 0.0, 0.0])
        wait_until(lambda: not failing.running, what="the failing pull to end the thread")
    assert len(failing.samples) == 1
    with pytest.raises(RuntimeError, match=f"source_id='{source_id}' failed: pull failed"):
        failing._raise_error()  # as the readers of a stopped worker raise it
    del outlet


@pytest.mark.lsl
def test_start_together_starts_all_or_none():
    outlets = [_outlet() for _ in range(2)]
    workers = [_Collector(source_id) for _, source_id in outlets]
    start_together(workers)
    try:
        assert all(w.running for w in workers)
        assert [w.info.source_id() for w in workers] == [sid for _, sid in outlets]
    finally:
        for w in workers:
            w.stop()
    present = _Collector(outlets[0][1])
    with pytest.raises(TimeoutError, match="absent-"):
        start_together([present, _Collector(f"absent-{uuid4().hex}", timeout=0.3)])
    assert not present.running


class _InterruptedLaunch(_Collector):
    """Stands in for a Ctrl-C arriving while ``start_together`` launches this worker."""

    def _prepare(self):
        raise KeyboardInterrupt


@pytest.mark.lsl
def test_ctrl_c_while_launching_ends_start_together_at_once():
    """A Ctrl-C while the second worker is launched: raised at once, the first worker (waiting
    for an absent stream) told to stop, not waited for until its timeout."""
    waiting = _Collector(f"absent-{uuid4().hex}", timeout=5.0)
    started = time.monotonic()
    with pytest.raises(KeyboardInterrupt):
        start_together([waiting, _InterruptedLaunch(f"absent-{uuid4().hex}")])
    assert time.monotonic() - started < 3.0  # not 3 × the first one's 5 s
    assert waiting._stop_event.is_set()


@pytest.mark.lsl
def test_ctrl_c_while_connecting_lets_stop_return_at_once():
    """A Ctrl-C while ``start`` waits for an absent stream: ``stop`` afterwards (a session
    closing its streams) returns at once, without joining the thread still in liblsl's
    resolve (5 s, then "did not stop within 5 s")."""
    worker = _Collector(f"absent-{uuid4().hex}", timeout=10.0)
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    ctrl_c = threading.Timer(
        0.3, signal.pthread_kill, (threading.main_thread().ident, signal.SIGINT)
    )
    try:
        ctrl_c.start()
        with pytest.raises(KeyboardInterrupt):
            worker.start()
    finally:
        ctrl_c.cancel()
        signal.signal(signal.SIGINT, previous)
    started = time.monotonic()
    worker.stop()
    assert time.monotonic() - started < 1.0
    assert worker._stop_event.is_set() and not worker.running


def test_bad_parameters():
    with pytest.raises(ValueError, match="by name, source_id and/or stype"):
        InletThread(None, None, None, 1.0, None, 10)
    for timeout in (0, -1.0, None):
        with pytest.raises(ValueError, match="timeout must be a positive number"):
            InletThread("eeg", None, None, timeout, None, 10)
