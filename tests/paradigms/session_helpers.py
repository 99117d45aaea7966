"""Small, fast session settings shared by the session tests."""

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
