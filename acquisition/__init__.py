"""LSL acquisition for bci_universum: configuration, receivers, markers, replay, recording.

Never imports Qt. Depends on :mod:`bci_universum` only.
"""

from .decisions import DecisionOutlet, local_clock
from .lsl_config import configure_lsl
from .markers import Marker, MarkerOutlet, MarkerReceiver
from .player import Player
from .receiver import StreamReceiver, StreamSilenceError
from .recorder import Recorder, recover
from .simulator import SimulatedSource
from .spike_source import SpikeCountSource
from .streams import list_streams, resolve_stream

__all__ = [
    "DecisionOutlet",
    "Marker",
    "MarkerOutlet",
    "MarkerReceiver",
    "Player",
    "Recorder",
    "SimulatedSource",
    "SpikeCountSource",
    "StreamReceiver",
    "StreamSilenceError",
    "configure_lsl",
    "list_streams",
    "local_clock",
    "recover",
    "resolve_stream",
]
