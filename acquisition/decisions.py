"""Decisions of an online decoder as an LSL stream, and the LSL clock for the layers above.

:mod:`paradigms` never imports pylsl: it reads the time with :func:`local_clock` and publishes
decisions through :class:`DecisionOutlet`.
"""

from __future__ import annotations

from collections.abc import Sequence
from uuid import uuid4

from .streams import OutletOwner, make_stream_info

DECISION_STREAM_TYPE = "Decisions"


def local_clock() -> float:
    """LSL's clock in seconds: the time base of every timestamp on a stream."""
    import pylsl

    return pylsl.local_clock()


class DecisionOutlet(OutletOwner):
    """Publish decisions (one sample per decision, stamped with its newest data sample).

    An irregular-rate ``double64`` stream of type ``"Decisions"``, one ``misc`` channel (unit
    ``n/a``) per value.

    Parameters
    ----------
    name : str
        Stream name.
    source_id : str | None
        Unique source identifier; a random one when None.
    channels : sequence of str
        Names of the values of a decision (default: the decision value and its smoothed value).
    """

    def __init__(
        self,
        name: str = "decisions",
        source_id: str | None = None,
        channels: Sequence[str] = ("value", "smoothed"),
    ) -> None:
        import pylsl

        self.name = name
        self.source_id = source_id if source_id else uuid4().hex
        self.channels = list(channels)
        self.info = make_stream_info(
            name,
            self.channels,
            pylsl.IRREGULAR_RATE,
            ch_types="misc",
            units="n/a",
            stype=DECISION_STREAM_TYPE,
            channel_format="double64",
            source_id=self.source_id,
        )
        self._outlet = pylsl.StreamOutlet(self.info)

    def push(self, values: Sequence[float], timestamp: float) -> None:
        """Push one decision's values with its LSL timestamp."""
        if self._outlet is None:
            raise RuntimeError(f"Decision outlet {self.name!r} is closed.")
        if len(values) != len(self.channels):
            raise ValueError(
                f"A decision of {self.name!r} has {len(self.channels)} values "
                f"({self.channels}), got {len(values)}."
            )
        self._outlet.push_sample([float(v) for v in values], float(timestamp))
