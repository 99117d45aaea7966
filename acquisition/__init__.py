"""LSL acquisition for bci_universum: configuration, receivers, markers, replay, recording.

Never imports Qt. Depends on :mod:`bci_universum` only.
"""

import lazy_loader as _lazy

# submodules load on first use: a test or script that needs one estimator does not pay for
# the whole package (and its mne/pylsl/numba imports)
__getattr__, __dir__, __all__ = _lazy.attach(
    __name__,
    submod_attrs={
        "decisions": ["DecisionOutlet", "local_clock"],
        "lsl_config": ["configure_lsl"],
        "markers": ["Marker", "MarkerOutlet", "MarkerReceiver"],
        "player": ["Player"],
        "receiver": ["StreamReceiver", "StreamSilenceError"],
        "recorder": ["Recorder", "recover"],
        "simulator": ["SimulatedSource"],
        "spike_source": ["SpikeCountSource"],
        "streams": ["list_streams", "resolve_stream"],
    },
)
