"""LSL acquisition for bci_universum: configuration, receivers, markers, replay, recording.

Never imports Qt. Depends on :mod:`bci_universum` only.
"""

from .lsl_config import configure_lsl

__all__ = ["configure_lsl"]
