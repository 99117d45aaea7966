"""pytest plugin of ``benchmarks/mutation.py``: run the tests most likely to kill a mutant first.

Mutant runs use ``-x``, so a killed mutant costs only the tests up to the first failure. The
plugin keeps, per shard, a JSON file (``$BCI_MUTATION_ORDER``) of each test's duration, measured
on the unmutated code, and of how many mutants it has killed; tests run in increasing order of
``duration / (1 + kills)``. ``BCI_MUTATION_RECORD=1`` (the baseline run) records the durations.
Without ``$BCI_MUTATION_ORDER`` the plugin does nothing.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

_PATH = os.environ.get("BCI_MUTATION_ORDER")
_RECORD = os.environ.get("BCI_MUTATION_RECORD") == "1"


def _load() -> dict[str, list[float]]:
    try:
        return json.loads(Path(_PATH).read_text()) if _PATH else {}
    except (OSError, ValueError):  # none yet
        return {}


_stats = _load()
_changed = False


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    if not _PATH or _RECORD:
        return
    # a test without a measured duration (added since the baseline) goes last
    items.sort(key=lambda item: _cost(_stats.get(item.nodeid)))


def _cost(entry: list[float] | None) -> float:
    return float("inf") if entry is None else entry[0] / (1.0 + entry[1])


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    global _changed
    if not _PATH:
        return
    entry = _stats.setdefault(report.nodeid, [0.0, 0])
    if _RECORD:
        entry[0] = (entry[0] if report.when != "setup" else 0.0) + report.duration
        _changed = True
    elif report.failed:
        entry[1] += 1
        _changed = True


def pytest_sessionfinish() -> None:
    if _PATH and _changed:
        # atomically: a test process stopped at its timeout must not leave half a file
        partial = Path(f"{_PATH}.{os.getpid()}.partial")
        partial.write_text(json.dumps(_stats, indent=0, sort_keys=True))
        os.replace(partial, _PATH)
