"""The inlet worker base on real loopback streams: one thread owns the inlet, clean errors."""

import threading
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
    """Pulls single samples; records which thread made each inlet call."""

    def __init__(self, source_id, timeout=5.0, reject=None, fail_after=None):
        super().__init__(None, source_id, None, timeout, None, 10)
        self.samples, self.threads = [], set()
        self.reject, self.fail_after = reject, fail_after

    def _on_connect(self, info):
        self.threads.add(threading.get_ident())
        if self.reject is not None:
            raise ValueError(self.reject)
        self.n_channels = info.channel_count()

    def _pull(self, inlet, timeout):
        self.threads.add(threading.get_ident())
        sample, _ = inlet.pull_sample(timeout=timeout)
        if sample is None:
            return 0
        with self._lock:
            self.samples.append(sample)
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
        for row in sent:
            outlet.push_sample(row)
        wait_until(lambda: len(collector.samples) == 10, what="10 samples")
    assert not collector.running
    np.testing.assert_array_equal(collector.samples, sent)
    (owner,) = collector.threads
    assert owner != threading.get_ident()
    # the inlet is closed: the outlet loses its consumer
    wait_until(lambda: not outlet.have_consumers(), what="the inlet to close")
    # and a stopped worker starts again on the same stream
    with collector:
        outlet.push_sample([1.0, 2.0, 3.0])
        wait_until(lambda: len(collector.samples) == 11, what="one more sample")


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
    assert isinstance(failing._error, RuntimeError)
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


def test_bad_parameters():
    with pytest.raises(ValueError, match="by name, source_id and/or stype"):
        InletThread(None, None, None, 1.0, None, 10)
    for timeout in (0, -1.0, None):
        with pytest.raises(ValueError, match="timeout must be a positive number"):
            InletThread("eeg", None, None, timeout, None, 10)
