"""argparse ``type`` functions for numbers shared by several commands."""

from __future__ import annotations

import argparse


def positive_int(text: str) -> int:
    """An integer ≥ 1 (sizes, counts)."""
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text}")
    return value


def n_jobs(text: str) -> int:
    """``--n-jobs``: a positive number of parallel jobs, or -1 for all cores."""
    value = int(text)
    if value < 1 and value != -1:
        raise argparse.ArgumentTypeError(f"expected a positive integer or -1, got {text}")
    return value
