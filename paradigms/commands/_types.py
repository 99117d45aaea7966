"""argparse ``type`` functions for numbers shared by several commands: a bad value is refused
naming the option (``argument --folds: expected an integer ≥ 2, got 0``) before anything runs."""

from __future__ import annotations

import argparse
import math
from collections.abc import Callable


def int_range(low: int, high: int | None = None) -> Callable[[str], int]:
    """An argparse ``type``: an integer in ``[low, high]`` (no upper bound when None)."""
    if high is not None:
        expected = f"an integer between {low} and {high}"
    else:
        expected = {0: "a non-negative integer", 1: "a positive integer"}.get(
            low, f"an integer ≥ {low}"
        )

    def check(text: str) -> int:
        value = int(text)
        if value < low or (high is not None and value > high):
            raise argparse.ArgumentTypeError(f"expected {expected}, got {text}")
        return value

    check.__name__ = "int"  # argparse's "invalid int value: 'x'"
    return check


#: An integer ≥ 1 (sizes, counts).
positive_int = int_range(1)
#: An integer ≥ 0 (seeds).
non_negative_int = int_range(0)


def _float_from_zero(strict: bool) -> Callable[[str], float]:
    """An argparse ``type``: a finite number > 0 (``strict``) or ≥ 0."""
    expected = "a positive number" if strict else "a non-negative number"

    def check(text: str) -> float:
        value = float(text)
        if not (value > 0 if strict else value >= 0) or value == math.inf:  # NaN fails too
            raise argparse.ArgumentTypeError(f"expected {expected}, got {text}")
        return value

    check.__name__ = "float"  # argparse's "invalid float value: 'x'"
    return check


#: A finite number > 0 (frequencies, durations).
positive_float = _float_from_zero(strict=True)
#: A finite number ≥ 0 (weights).
non_negative_float = _float_from_zero(strict=False)


def simulated_channels(text: str) -> int:
    """The electrodes of a simulated subject, as many as the model knows sites
    (:data:`bci_universum.simulation.eeg.CHANNEL_PRIORITY`)."""
    from bci_universum.simulation.eeg import CHANNEL_PRIORITY

    return int_range(3, len(CHANNEL_PRIORITY))(text)


simulated_channels.__name__ = "int"


def n_jobs(text: str) -> int:
    """``--n-jobs``: a positive number of parallel jobs, or -1 for all cores."""
    value = int(text)
    if value < 1 and value != -1:
        raise argparse.ArgumentTypeError(f"expected a positive integer or -1, got {text}")
    return value
