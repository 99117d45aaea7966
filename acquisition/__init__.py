"""LSL acquisition for bci_universum: configuration, receivers, markers, replay, recording.

Never imports Qt. Depends on :mod:`bci_universum` only. The names below load their module on
first use (PEP 562), so that ``acquisition.lsl_config`` stays cheap to import (the command
line's ``--help`` reads the default LSL mode from it).
"""

from importlib import import_module

_HOMES = {
    "DecisionOutlet": "decisions",
    "local_clock": "decisions",
    "configure_lsl": "lsl_config",
    "Marker": "markers",
    "MarkerOutlet": "markers",
    "MarkerReceiver": "markers",
    "Player": "player",
    "StreamReceiver": "receiver",
    "StreamSilenceError": "receiver",
    "Recorder": "recorder",
    "recover": "recorder",
    "SimulatedSource": "simulator",
    "SpikeCountSource": "spike_source",
    "list_streams": "streams",
    "resolve_stream": "streams",
}

__all__ = sorted(_HOMES)


def __getattr__(name: str):
    if name not in _HOMES:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(import_module(f".{_HOMES[name]}", __name__), name)


def __dir__() -> list[str]:
    return __all__
