"""argparse ``type`` functions for numbers and names shared by several commands: a bad value is
refused naming the option (``argument --folds: expected an integer ≥ 2, got 0``) before anything
runs."""

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


def float_range(
    low: float, high: float = math.inf, *, open_low: bool = False
) -> Callable[[str], float]:
    """An argparse ``type``: a finite number in ``[low, high]`` (``(low, high]`` with
    ``open_low``)."""
    if high != math.inf:
        expected = f"a number between {low:g} and {high:g}"
    elif low == 0:
        expected = "a positive number" if open_low else "a non-negative number"
    else:
        expected = f"a number {'>' if open_low else '≥'} {low:g}"

    def check(text: str) -> float:
        value = float(text)
        above = value > low if open_low else value >= low
        if not (above and value <= high) or value == math.inf:  # NaN fails too
            raise argparse.ArgumentTypeError(f"expected {expected}, got {text}")
        return value

    check.__name__ = "float"  # argparse's "invalid float value: 'x'"
    return check


#: A finite number > 0 (frequencies, durations).
positive_float = float_range(0, open_low=True)
#: A finite number ≥ 0 (weights).
non_negative_float = float_range(0)


def simulated_channels(text: str) -> int:
    """The electrodes of a simulated subject, as many as the model knows sites
    (:data:`bci_universum.simulation.eeg.CHANNEL_PRIORITY`)."""
    from bci_universum.simulation.eeg import CHANNEL_PRIORITY

    return int_range(3, len(CHANNEL_PRIORITY))(text)


simulated_channels.__name__ = "int"


def trials_per_class(text: str) -> int:
    """Trials per class of a session ``train`` can cross-validate
    (:data:`bci_universum.training.MIN_TRIALS_PER_CLASS` or more)."""
    from bci_universum.training import MIN_TRIALS_PER_CLASS

    return int_range(MIN_TRIALS_PER_CLASS)(text)


trials_per_class.__name__ = "int"


def simulated_sfreq(text: str) -> float:
    """The sampling rate of a simulated subject, in the range the model covers
    (:data:`bci_universum.simulation.eeg.SFREQ_RANGE`)."""
    from bci_universum.simulation.eeg import SFREQ_RANGE

    return float_range(*SFREQ_RANGE)(text)


simulated_sfreq.__name__ = "float"


def _not_blank(expected: str) -> Callable[[str], str]:
    """An argparse ``type``: any text but an empty (or blank) one."""

    def check(text: str) -> str:
        if not text.strip():
            raise argparse.ArgumentTypeError(f"expected {expected}, got {text!r}")
        return text

    return check


#: The name of an LSL stream: not empty (liblsl creates no stream without a name, so none has
#: one to be found by).
stream_name = _not_blank("the name of an LSL stream")
stream_name.__name__ = "stream_name"
#: The source_id of an LSL stream: not empty (the source_id of the streams created without one,
#: which it cannot tell apart: they are found by their name).
source_id = _not_blank("the source_id of an LSL stream")
source_id.__name__ = "source_id"
#: A file a command reads: not empty (that would be the current folder).
input_file = _not_blank("the path of a file")
input_file.__name__ = "input_file"


def n_jobs(text: str) -> int:
    """``--n-jobs``: a positive number of parallel jobs, or -1 for all cores."""
    value = int(text)
    if value < 1 and value != -1:
        raise argparse.ArgumentTypeError(f"expected a positive integer or -1, got {text}")
    return value
