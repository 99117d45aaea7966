"""pytest plugin of ``benchmarks/mutation.py``: run only the tests that execute the mutated line,
the most likely to kill the mutant first.

*Order.* Mutant runs use ``-x``, so a killed mutant costs only the tests up to the first
failure. The plugin keeps, per shard, a JSON file (``$BCI_MUTATION_ORDER``) of each test's
duration, measured on the unmutated code, and of how many mutants it has killed; tests run in
increasing order of ``duration / (1 + kills)``. ``BCI_MUTATION_RECORD=1`` (the baseline run)
records the durations.

*Selection* (as mutmut 3 does). A baseline run under coverage.py with
``BCI_MUTATION_COVERAGE_RECORD=1`` writes ``$BCI_MUTATION_COVERAGE``: for each line of the
module ``$BCI_MUTATION_MODULE``, the tests that execute it (lines run inside a fixture broader
than a function are given to every test that uses that fixture) and the pristine source. In a
mutant run the plugin compares the module in the working directory with that source, and keeps
only the tests that execute the changed lines (or the statements they belong to). A line run
while the module is imported (a default argument, a class attribute, a decorator) keeps every
test, and so does a changed line coverage does not know. A mutant on a line no test executes
runs no test, and the run exits with 0 (not pytest's 5, "no tests"): the mutant survives. A test
that failed under coverage (a timing-sensitive test on a loaded machine) may have stopped before
the lines it would run: it runs with every mutant.

*Budget.* With ``BCI_MUTATION_BUDGET=FACTOR:FLOOR`` a mutant's run stops after ``FACTOR`` times
the measured duration of the tests it selected, plus every test's set-up (a fixture broader
than a test is set up by whichever test runs first), and at least ``FLOOR`` seconds: a mutant
that loops forever costs its own tests' time, not the shard's. The stop is faulthandler's
watchdog thread, which also ends a loop inside compiled code; it writes
``Timeout (H:MM:SS)!`` and a traceback to the run's standard output (:data:`OVER_BUDGET`
finds it) and exits with 1. Without every duration measured the budget is not set, and only
cosmic-ray's timeout of the whole shard applies.
Without those variables the plugin does nothing.
"""

from __future__ import annotations

import ast
import difflib
import faulthandler
import json
import os
import re
from pathlib import Path

import pytest

_PATH = os.environ.get("BCI_MUTATION_ORDER")
_RECORD = os.environ.get("BCI_MUTATION_RECORD") == "1"
_MAP = os.environ.get("BCI_MUTATION_COVERAGE")
_MODULE = os.environ.get("BCI_MUTATION_MODULE")
_COVER = bool(_MAP and _MODULE) and os.environ.get("BCI_MUTATION_COVERAGE_RECORD") == "1"
# "0": run the shard's tests whatever the mutated line (the check of the selection)
_SELECT = bool(_MAP and _MODULE) and not _COVER and os.environ.get("BCI_MUTATION_SELECT") != "0"
_IMPORT = ""  # coverage's context of the lines run outside any test: the module's import
_BUDGET = os.environ.get("BCI_MUTATION_BUDGET")
# the run's own standard output, saved before pytest captures it (the plugin is loaded by -p)
_STDOUT = os.dup(1) if _BUDGET else None
#: How faulthandler's stop at the budget shows in a run's output.
OVER_BUDGET = re.compile(r"^Timeout \(\d+:\d\d:\d\d(\.\d+)?\)!$", re.MULTILINE)


def _load() -> dict[str, list]:
    try:
        return json.loads(Path(_PATH).read_text()) if _PATH else {}
    except (OSError, ValueError):  # none yet
        return {}


_stats = _load()
_changed = False
_uncovered = False
_coverage = None
_items: list[pytest.Item] = []
_failed: set[str] = set()
_current = _IMPORT

if _COVER:
    import coverage

    # started before pytest imports the tests (and through them the module)
    _coverage = coverage.Coverage(data_file=None, include=[str(Path(_MODULE).resolve())])
    _coverage.start()


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    global _uncovered
    collected = list(items)
    if _COVER:
        _items.extend(items)
    if _SELECT:
        keep = _selected(items)
        if keep is not None:
            config.hook.pytest_deselected(items=[i for i in items if i.nodeid not in keep])
            items[:] = [i for i in items if i.nodeid in keep]
            _uncovered = not items
    if _PATH and not _RECORD:
        # a test without a measured duration (added since the baseline) goes last
        items.sort(key=lambda item: _cost(_stats.get(item.nodeid)))
        if _BUDGET and _SELECT:
            _set_budget(items, collected)


def _set_budget(selected: list[pytest.Item], collected: list[pytest.Item]) -> None:
    """Stop the run after the time budget of the ``selected`` tests (module docstring)."""
    entries = [_stats.get(item.nodeid) for item in collected]
    if any(entry is None or len(entry) < 3 for entry in entries):
        return
    factor, floor = (float(v) for v in _BUDGET.split(":"))
    run = sum(_stats[item.nodeid][0] for item in selected)
    setup = sum(entry[2] for entry in entries)
    faulthandler.dump_traceback_later(max(floor, factor * (run + setup)), exit=True, file=_STDOUT)


def _cost(entry: list | None) -> float:
    return float("inf") if entry is None else entry[0] / (1.0 + entry[1])


def _selected(items: list[pytest.Item]) -> set[str] | None:
    """The ids of the tests that execute the mutated lines; ``None``: keep every test."""
    try:
        cover = json.loads(Path(_MAP).read_text())
    except (OSError, ValueError):  # no map: every test
        return None
    source = cover["source"].splitlines()
    mutated = Path(_MODULE).read_text().splitlines()
    changed = [
        line
        for tag, i1, i2, _, _ in difflib.SequenceMatcher(None, source, mutated).get_opcodes()
        if tag != "equal"
        for line in range(i1 + 1, max(i2, i1 + 1) + 1)
    ]
    if not changed:  # the unmutated module
        return None
    return covering_tests(cover, changed)


def covering_tests(cover: dict, changed: list[int]) -> set[str] | None:
    """The tests of the map ``cover`` that execute the changed lines of its module;
    ``None`` when every test must run (a line run at import, or a line the map does not know)."""
    candidates = set(changed) | _statement_lines(cover["source"], changed)
    if candidates & set(cover["import"]) or not candidates & set(cover["statements"]):
        return None
    tests = {test for line in candidates for test in cover["lines"].get(str(line), [])}
    return tests | set(cover.get("failed", []))


def _statement_lines(source: str, lines: list[int]) -> set[int]:
    """The lines of the innermost statement around each line, its body left out: coverage
    records a statement at its first line or, spread over several lines, at the lines of its
    parts (the condition of an ``if (`` line, never that line itself)."""
    found = set()
    nodes = [n for n in ast.walk(ast.parse(source)) if isinstance(n, ast.stmt)]
    for line in lines:
        around = [n for n in nodes if n.lineno <= line <= (n.end_lineno or n.lineno)]
        if around:
            node = min(around, key=lambda n: (n.end_lineno or n.lineno) - n.lineno)
            body = getattr(node, "body", None)
            end = body[0].lineno - 1 if isinstance(body, list) and body else node.end_lineno
            found.update(range(node.lineno, max(end or node.lineno, node.lineno) + 1))
    return found


def _switch(context: str) -> None:
    global _current
    _current = context
    _coverage.switch_context(context)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem):
    if _COVER:
        _switch(item.nodeid)
    try:
        return (yield)
    finally:
        if _COVER:
            _switch(_IMPORT)


@pytest.hookimpl(wrapper=True)
def pytest_fixture_setup(fixturedef, request):
    # a fixture set up once for a module or a session serves every test that uses it
    broad = _COVER and fixturedef.scope != "function"
    if broad:
        previous = _current
        _switch(f"fixture\0{fixturedef.argname}\0{fixturedef.baseid}")
    try:
        return (yield)
    finally:
        if broad:
            _switch(previous)


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    global _changed
    if _COVER and report.failed:
        _failed.add(report.nodeid)
    if not _PATH or _COVER:
        return
    entry = _stats.setdefault(report.nodeid, [0.0, 0, 0.0])
    if _RECORD:
        # [duration with set-up and teardown, kills, set-up]
        if report.when == "setup":
            entry[:] = [0.0, entry[1], report.duration]
        entry[0] += report.duration
        _changed = True
    elif report.failed:
        entry[1] += 1
        _changed = True


def _write_map() -> None:
    _coverage.stop()
    path = str(Path(_MODULE).resolve())
    data = _coverage.get_data()
    lines: dict[int, set[str]] = {}
    imported = set()
    for line, contexts in data.contexts_by_lineno(path).items():
        for context in contexts:
            if context == _IMPORT:
                imported.add(line)
            elif context.startswith("fixture\0"):
                _, name, base = context.split("\0")
                lines.setdefault(line, set()).update(
                    i.nodeid
                    for i in _items
                    if name in getattr(i, "fixturenames", ()) and i.nodeid.startswith(base)
                )
            else:
                lines.setdefault(line, set()).add(context)
    cover = {
        "source": Path(_MODULE).read_text(),
        "statements": sorted(_coverage.analysis2(path)[1]),
        "import": sorted(imported),
        "lines": {str(k): sorted(v) for k, v in sorted(lines.items())},
        "failed": sorted(_failed),
    }
    Path(_MAP).write_text(json.dumps(cover, indent=0))


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    if _COVER:
        _write_map()
    if _uncovered and exitstatus == pytest.ExitCode.NO_TESTS_COLLECTED:
        session.exitstatus = pytest.ExitCode.OK
    if _PATH and _changed:
        # atomically: a test process stopped at its timeout must not leave half a file
        partial = Path(f"{_PATH}.{os.getpid()}.partial")
        partial.write_text(json.dumps(_stats, indent=0, sort_keys=True))
        os.replace(partial, _PATH)
