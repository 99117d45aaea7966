"""benchmarks/mutation.py: a mutant's result is keyed by its function; a mutant's run stops at
its own tests' time budget."""

import json
import os
import re
import subprocess
import sys
from types import SimpleNamespace

import pytest

import benchmarks.mutation as tool
from benchmarks.mutation import (
    ROOT,
    _current,
    _declaration,
    _equivalents,
    _followed_by,
    _mutant_keys,
    _reason,
    _scopes,
    _unchecked_survivors,
)
from benchmarks.mutation_order import OVER_BUDGET, covering_tests

SOURCE = """import numpy as np

LIMIT = 3


def clip(x):
    return min(x, LIMIT)


class Model:
    scale = 2

    def fit(self, x):
        return x * self.scale + 1
"""


def _items(source: str, spots: list[tuple[str, str]]) -> list:
    """One fake cosmic-ray work item per (code fragment, operator), at the fragment's position."""
    lines = source.splitlines()
    items = []
    for job, (fragment, operator) in enumerate(spots):
        row = next(i for i, line in enumerate(lines, 1) if fragment in line)
        spec = SimpleNamespace(start_pos=(row, 0), operator_name=operator, occurrence=job)
        items.append(SimpleNamespace(job_id=str(job), mutations=[spec]))
    return items


SPOTS = [("min(x", "Number"), ("return x *", "Mul_Div"), ("return x *", "Number"),
         ("return x *", "Number"), ("scale = 2", "Number")]  # fmt: skip


def test_a_key_outlives_changes_outside_its_function():
    keys = _mutant_keys(_items(SOURCE, SPOTS), SOURCE)
    assert len(set(keys.values())) == len(SPOTS)
    assert keys["2"].startswith("Model.fit:") and keys["2"].endswith(":Number:0")
    assert keys["3"].endswith(":Number:1")
    # lines move and another function changes: Model.fit's and the class attribute's keys stay
    changed = SOURCE.replace("import numpy as np", "import numpy as np\nimport os\n")
    changed = changed.replace("min(x, LIMIT)", "max(x, LIMIT)")
    again = _mutant_keys(_items(changed, [("max(x", "Number"), *SPOTS[1:]]), changed)
    assert [again[j] for j in "1234"] == [keys[j] for j in "1234"]
    assert again["0"] != keys["0"]
    scopes = {(n, d) for *_, n, d in _scopes(changed)}
    assert [_current(keys[j], scopes) for j in "01234"] == [False, True, True, True, True]


def test_a_key_changes_with_its_function():
    keys = _mutant_keys(_items(SOURCE, SPOTS), SOURCE)
    changed = SOURCE.replace("+ 1", "+ 2")
    scopes = {(n, d) for *_, n, d in _scopes(changed)}
    assert [_current(keys[j], scopes) for j in "01234"] == [True, False, False, False, True]


def test_an_equivalent_entry_can_name_the_line_after_a_shared_mutated_line(tmp_path, monkeypatch):
    """Two loops both mutate to `for i in []:`: an entry naming the line after the mutated one
    declares one of them; an entry without it declares the mutated line wherever it is. One
    place declared twice is an error naming it."""
    source = "def f(x):\n    for i in range(2):\n        x += i\n    for i in range(2):\n"
    source += "        x -= i\n    return x\n"
    lines = source.splitlines()
    op, mutated = "core/ZeroIterationForLoop", "for i in []:"
    records = [
        {"operator": op, "mutated": mutated, "followed_by": _followed_by(lines, n)} for n in (2, 4)
    ]
    assert [r["followed_by"] for r in records] == ["x += i", "x -= i"]
    assert _followed_by(lines, len(lines)) == ""
    entry = f'[[equivalent]]\nmodule = "m.py"\noperator = "{op}"\nmutated = "{mutated}"\n'
    table = tmp_path / "equivalent.toml"
    table.write_text(entry + 'followed_by = "x -= i"\nreason = "the second"\n')
    monkeypatch.setattr(tool, "EQUIVALENT", table)
    equivalent = _equivalents()
    assert [_reason(equivalent, "m.py", r) for r in records] == [None, "the second"]
    assert _declaration(equivalent, "m.py", records[1]) == ("m.py", op, mutated, "x -= i")
    assert _reason(equivalent, "other.py", records[1]) is None
    table.write_text(table.read_text() + "\n" + entry + 'reason = "anywhere"\n')
    equivalent = _equivalents()
    assert [_reason(equivalent, "m.py", r) for r in records] == ["anywhere", "the second"]
    # a record stored before the line after was kept
    assert _reason(equivalent, "m.py", {"operator": op, "mutated": mutated}) == "anywhere"
    table.write_text(table.read_text() + "\n" + entry + 'reason = "again"\n')
    with pytest.raises(ValueError, match=r"declares m\.py core/ZeroIterationForLoop .* twice"):
        _equivalents()


def test_the_selection_is_checked_on_survivors_not_checked_yet():
    """What the selected tests kill, all of them kill: only survivors are worth running with
    every test, each once."""
    outcomes = {"a": "killed", "b": "survived", "c": "survived", "d": "survived"}
    data = {
        "results": {k: {"outcome": o} for k, o in outcomes.items()},
        "selection": [{"key": "c"}],
    }
    items = [SimpleNamespace(job_id=f"job-{k}") for k in "abcde"]  # e: not run yet
    keys = {f"job-{k}": k for k in "abcde"}
    assert [i.job_id for i in _unchecked_survivors(items, keys, data)] == ["job-b", "job-d"]


SPIN = """def spin(n):
    total, i = 0, 0
    while i < n:
        i += 1
        total += i
    return total


def other():
    return 1
"""


def _pytest(tmp_path, **env):
    """The order plugin's pytest run on the module ``mod.py`` of ``tmp_path``, as a mutant's."""
    env = dict(
        os.environ,
        PYTHONPATH=str(ROOT),
        BCI_MUTATION_ORDER=str(tmp_path / "order.json"),
        BCI_MUTATION_COVERAGE=str(tmp_path / "map.json"),
        BCI_MUTATION_MODULE="mod.py",
        **env,
    )
    command = [sys.executable, "-m", "pytest", "-n", "0", "-q", "-p", "no:cacheprovider"]
    command += ["-p", "benchmarks.mutation_order", "test_mod.py"]
    return subprocess.run(
        command, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300
    )


def test_a_mutant_that_never_ends_stops_at_its_own_tests_budget(tmp_path):
    (tmp_path / "mod.py").write_text(SPIN)
    (tmp_path / "test_mod.py").write_text(
        "import mod\n\n\ndef test_spin():\n    assert mod.spin(10) == 55\n\n\n"
        "def test_other():\n    assert mod.other() == 1\n"
    )
    assert _pytest(tmp_path, BCI_MUTATION_COVERAGE_RECORD="1").returncode == 0
    assert _pytest(tmp_path, BCI_MUTATION_RECORD="1").returncode == 0
    order = json.loads((tmp_path / "order.json").read_text())
    assert sorted(order) == ["test_mod.py::test_other", "test_mod.py::test_spin"]
    assert all(len(entry) == 3 and entry[0] >= entry[2] >= 0 for entry in order.values())

    (tmp_path / "mod.py").write_text(SPIN.replace("return total", "return total + 1"))
    failed = _pytest(tmp_path, BCI_MUTATION_BUDGET="4:60")
    assert failed.returncode == 1 and "1 passed" not in failed.stdout  # test_other deselected
    assert not OVER_BUDGET.search(failed.stdout)

    (tmp_path / "mod.py").write_text(SPIN.replace("i += 1", "i += 0"))
    stopped = _pytest(tmp_path, BCI_MUTATION_BUDGET="4:1")
    assert stopped.returncode == 1
    assert OVER_BUDGET.search(stopped.stdout)
    assert "in spin" in stopped.stdout  # the traceback of the endless loop


def test_a_condition_over_several_lines_selects_the_tests_that_run_it(tmp_path):
    """Coverage records ``if (`` spread over lines at the lines of its condition: a mutant of
    the ``if (`` line (``if not (``) runs the tests that execute them."""
    coverage = pytest.importorskip("coverage")  # the mutation extra
    source = "def f(x):\n    if (\n        x > 0\n        and x < 3\n    ):\n        return 1\n"
    path = tmp_path / "multiline.py"
    path.write_text(source)
    measure = coverage.Coverage(data_file=None, include=[str(path)])
    measure.start()
    namespace = {}
    exec(compile(source, str(path), "exec"), namespace)
    measure.switch_context("test_f")
    namespace["f"](1)
    measure.stop()
    recorded = measure.get_data().contexts_by_lineno(str(path))
    cover = {
        "source": source,
        "statements": sorted(measure.analysis2(str(path))[1]),
        "import": sorted(line for line, c in recorded.items() if "" in c),
        "lines": {str(k): sorted(set(c) - {""}) for k, c in recorded.items() if set(c) - {""}},
    }
    assert "2" not in cover["lines"]  # the premise: nothing recorded at the ``if (`` line
    assert covering_tests(cover, [2]) == {"test_f"}


def test_the_tests_digest_follows_the_helpers_and_conftests_the_tests_use(tmp_path):
    """A survivor is run again when its tests change: that includes a conftest.py above them
    and a test-package module they import (directly or through another one), not others."""
    files = {
        "tests/__init__.py": "",
        "tests/conftest.py": "A = 1\n",
        "tests/pkg/__init__.py": "",
        "tests/pkg/_helper.py": "from tests.pkg._deeper import B\n",
        "tests/pkg/_deeper.py": "B = 2\n",
        "tests/pkg/_unused.py": "C = 3\n",
        "tests/pkg/test_a.py": "from ._helper import B\n\n\ndef test_b():\n    assert B == 2\n",
    }
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    shard = {"tests": ["tests/pkg/test_a.py"]}
    before = tool.tests_digest(shard, tmp_path)
    for name, counts in [
        ("tests/pkg/_unused.py", False),
        ("tests/pkg/_deeper.py", True),
        ("tests/pkg/_helper.py", True),
        ("tests/conftest.py", True),
        ("tests/pkg/test_a.py", True),
    ]:
        (tmp_path / name).write_text(files[name] + "# changed\n")
        after = tool.tests_digest(shard, tmp_path)
        assert (after != before) == counts, name
        before = after


def test_work_left_counts_pending_mutants_and_survivors_whose_tests_changed():
    records = {
        "a": {"outcome": "survived", "tests": "old"},
        "b": {"outcome": "survived", "tests": "new"},
        "c": {"outcome": "killed", "tests": "old"},
    }
    assert tool.work_left(2, records, "new") == 2 + 1  # "a" survived other tests
    assert tool.work_left(0, records, "old") == 1  # "b"; a kill stands whatever the tests
    assert tool.work_left(0, {}, "new") == 0


def test_every_row_of_the_reports_tables_has_its_headers_cells(tmp_path, monkeypatch):
    """A ``|`` in a mutated line or a reason is escaped, so it does not split its cell."""
    monkeypatch.setattr(tool, "REPORT", tmp_path / "mutation.md")
    columns = None
    for line in tool.report().splitlines():
        if not line.startswith("|"):
            columns = None
            continue
        cells = len(re.split(r"(?<!\\)\|", line)) - 2
        if columns is None:
            columns = cells
        assert cells == columns, line
