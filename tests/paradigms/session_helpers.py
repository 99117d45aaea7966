"""Small, fast session settings and subprocess helpers shared by the session tests."""

import re
import threading
from uuid import uuid4

from paradigms.config import load_session_config


def fast_config(output, speed=5.0, **overrides):
    """Default session, unique stream names, short pauses, few trials, accelerated."""
    tag = uuid4().hex[:8]
    settings = {
        "session.output": str(output),
        "stream.name": f"test-eeg-{tag}",
        "stream.markers": f"test-markers-{tag}",
        "paradigm.speed": speed,
        "paradigm.trials_per_class": 4,
        "paradigm.universum_trials": 4,
        "online.trials_per_class": 4,
        "timeline.pause": [1.0, 1.5],
        **overrides,
    }
    return load_session_config(None, [f"{k}={v!r}" for k, v in settings.items()])


def read_until(stream, pattern, timeout):
    """Read a subprocess pipe in a thread until ``pattern`` appears; return what was read."""
    seen = []
    found = threading.Event()

    def reader():
        for chunk in iter(lambda: stream.read(1), ""):
            seen.append(chunk)
            if re.search(pattern, "".join(seen[-400:])):
                found.set()
        found.set()

    threading.Thread(target=reader, daemon=True).start()
    if not found.wait(timeout):
        raise AssertionError(f"{pattern!r} not seen within {timeout} s: {''.join(seen)}")
    return seen
