import threading

import pytest

from acquisition.worker import Worker

from .lsl_helpers import wait_until


class Counting(Worker):
    """Counts until stopped, or fails at ``fail_at``."""

    def __init__(self, fail_at=None, limit=None):
        super().__init__()
        self.fail_at, self.limit, self.count = fail_at, limit, 0
        self.cleaned = threading.Event()

    def _prepare(self):
        return (self.fail_at,)

    def _run(self, fail_at):
        while not self._stop_event.wait(0.001):
            self.count += 1
            if self.count == fail_at:
                raise OSError("disk full")
            if self.count == self.limit:
                return

    def _cleanup(self):
        self.cleaned.set()


def test_start_stop_and_context_manager():
    with Counting() as worker:
        assert worker.running
        with pytest.raises(RuntimeError, match="Counting is already running"):
            worker.start()
        wait_until(lambda: worker.count > 0, what="the thread counting")
    assert not worker.running and worker.cleaned.is_set()


def test_wait_returns_when_the_thread_ends_and_raises_its_error():
    worker = Counting(limit=5).start()
    assert worker.wait(10.0) and worker.count == 5
    failing = Counting(fail_at=3).start()
    with pytest.raises(RuntimeError, match="Counting failed: disk full") as err:
        failing.wait(10.0)
    assert isinstance(err.value.__cause__, OSError)
    with pytest.raises(RuntimeError, match="disk full"):
        failing.stop()
    with pytest.raises(RuntimeError, match="was not started"):
        Counting().wait()


def test_a_thread_that_does_not_stop_is_reported():
    class Stubborn(Worker):
        _join_timeout = 0.05

        def _run(self):
            self.release = threading.Event()
            self.release.wait(5.0)

    worker = Stubborn().start()
    with pytest.raises(RuntimeError, match=r"did not stop within 0\.05 s"):
        worker.stop()
    worker.release.set()
