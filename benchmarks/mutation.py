"""Mutation testing of the core with cosmic-ray: one resumable session per module (shard).

Run from the repository root (``pip install -e .[mutation]`` first)::

    python benchmarks/mutation.py --list                   # shards and their mutant counts
    python benchmarks/mutation.py universum online --minutes 20
    python benchmarks/mutation.py --report                 # rewrite the report only

Each mutant's outcome is committed in ``benchmarks/results/mutation/<shard>.json``, the source of
truth of the report. Its key is the name and source digest of the function (method, class
header or top-level statement) the mutant is in, its operator, and its rank among that
operator's mutants there: a result stays valid until that function's source changes, wherever
else the module changes. A survivor is tested again when the shard's tests change.

Shards are configured in ``pyproject.toml`` (``[tool.cosmic-ray.shards.<name>]``: the module and
the tests that cover it). Each shard is a cosmic-ray session in ``WORK/<name>.sqlite``, a cache
rebuilt from the results file (``WORK`` is ``--work DIR``, else ``$BCI_MUTATION_WORK``, else
``.mutation`` in the checkout); mutants run in a scratch copy of the tree (``WORK/tree``,
refreshed before each run), one test process at a time. Mutants inside numba kernels are
compiled from the mutated source (a changed file invalidates its ``cache=True`` entries);
kernels of the other modules come from the tree's warm cache. A shard with
``disable-jit = true`` runs its tests with ``NUMBA_DISABLE_JIT=1`` instead. Each mutant runs
only the tests that execute its line, after a map made by one run of the shard's tests under
coverage.py (``benchmarks/mutation_order.py``); ``--check-selection N`` runs N random survivors
with that selection and with all the tests. A mutant's run stops at a time budget set by the
baseline durations of its selected tests (``[tool.cosmic-ray] timeout-factor``); kills by
timeout are counted apart, and ``--recheck-timeouts 3`` runs them again with three times the
time. Pending mutants run in
random order and a run stops after ``--minutes`` (the next run resumes), so a partly run shard
reports an unbiased sample. A run whose shards have nothing left to test (no pending mutant,
no survivor whose tests changed) says so and exits with status 3, which ends a loop of runs.

Operators: cosmic-ray's core set, narrowed to one meaningful replacement per operator
(``+``/``-``, ``*``/``/``, each comparison to its boundary and its negation, ...) by
``exclude-operators``. Mutants judged equivalent are listed with the reason in
``benchmarks/mutation_equivalent.toml`` and left out of the kill rate.

Writes ``benchmarks/results/mutation.md``.
"""

from __future__ import annotations

import argparse
import ast
import contextlib
import hashlib
import json
import os
import shlex
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from bci_universum.datasets import DATA_ENV, data_path  # noqa: E402
from paradigms.commands._types import positive_float, positive_int  # noqa: E402

# the session state: kept outside the checkout with --work or $BCI_MUTATION_WORK
WORK_ENV = "BCI_MUTATION_WORK"
NOTHING_TO_RUN = 3  # exit status of a run whose shards have nothing left to test
WORK = ROOT / ".mutation"
TREE = WORK / "tree"
REPORT = ROOT / "benchmarks" / "results" / "mutation.md"
# the outcome of every mutant run, one file per shard: the source of truth of the report
RESULTS = ROOT / "benchmarks" / "results" / "mutation"
EQUIVALENT = ROOT / "benchmarks" / "mutation_equivalent.toml"
COPIED = ("bci_universum", "acquisition", "paradigms", "tests", "benchmarks", "pyproject.toml")
# the pytest plugin that runs the tests most likely to kill a mutant first
ORDER_PLUGIN = "benchmarks.mutation_order"
# the tests in the test process itself, not in the suite's xdist workers (pyproject's addopts):
# the order plugin, coverage.py and the warm server's forks need them there. It changes how
# the tests run, not which, so it stays out of the digest of a shard's tests.
ONE_PROCESS = ("-n", "0")
SERVER = "benchmarks/mutation_server.py"


def load_settings() -> dict:
    return tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["cosmic-ray"]


def _toml_value(value) -> str:
    if isinstance(value, str):
        return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, list | tuple):
        return "[" + ", ".join(_toml_value(v) for v in value) + "]"
    return repr(value)


def pytest_args(shard: dict) -> list[str]:
    """The shard's pytest arguments: its tests only, stopping at the first failure."""
    # plugins the suite does not use cost seconds of start-up per mutant
    args = ["-x", "-q", "--no-header", "-p", "no:cacheprovider", "-p", "no:hypothesispytest"]
    args += ["-p", "no:benchmark", "-p", ORDER_PLUGIN]
    # the warm server has imported pytest's plugins before pytest could rewrite their asserts
    args += ["-W", "ignore::pytest.PytestAssertRewriteWarning"]
    return args + shard["tests"] + shard.get("pytest-args", [])


def test_command(shard: dict) -> list[str]:
    """The command cosmic-ray runs per mutant: pytest in a child of the warm server."""
    socket = str(WORK / f"{TREE.name}.sock")
    return [sys.executable, SERVER, socket, "--", *ONE_PROCESS, *pytest_args(shard)]


@contextlib.contextmanager
def warm_server(name: str, shard: dict):
    """Run ``benchmarks/mutation_server.py`` in the tree for the shard's test commands."""
    socket_path = WORK / f"{TREE.name}.sock"
    server = subprocess.Popen(
        [sys.executable, SERVER, str(socket_path)],
        cwd=TREE,
        env=shard_env(name, shard),
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        if server.stdout.readline().strip() != "ready":
            raise SystemExit(f"{name}: the warm test server did not start.")
        yield
    finally:
        server.kill()
        server.wait()
        socket_path.unlink(missing_ok=True)


def write_config(name: str, shard: dict, settings: dict, timeout: float) -> Path:
    """cosmic-ray's own configuration file for one shard."""
    lines = [
        "[cosmic-ray]",
        f"module-path = {_toml_value(shard['module'])}",
        f"timeout = {_toml_value(float(timeout))}",
        "excluded-modules = []",
        f"test-command = {_toml_value(shlex.join(test_command(shard)))}",
        "",
        "[cosmic-ray.distributor]",
        'name = "local"',
        "",
        "[cosmic-ray.filters.operators-filter]",
        f"exclude-operators = {_toml_value(settings['exclude-operators'])}",
    ]
    path = WORK / f"{name}.toml"
    path.write_text("\n".join(lines) + "\n")
    return path


def order_file(name: str) -> Path:
    """The shard's durations and kills of each test (``benchmarks/mutation_order.py``)."""
    return WORK / f"{name}.order.json"


def _setup_times_known(name: str) -> bool:
    """Whether the baseline recorded each test's set-up time, which the time budget needs."""
    try:
        entries = json.loads(order_file(name).read_text()).values()
    except (OSError, ValueError):
        return False
    return all(len(entry) >= 3 for entry in entries)


def coverage_map(name: str) -> Path:
    """The shard's map of each module line to the tests that execute it."""
    return WORK / f"{name}.coverage.json"


def shard_env(name: str, shard: dict, factor: float = 1.0) -> dict:
    """The environment of the shard's test processes; a mutant's time budget is ``factor``
    times that of ``[tool.cosmic-ray]`` (``benchmarks/mutation_order.py``)."""
    settings = load_settings()
    budget = (settings["timeout-factor"] * factor, settings["min-timeout"] * factor)
    env = dict(
        os.environ,
        BCI_MUTATION_ORDER=str(order_file(name)),
        BCI_MUTATION_COVERAGE=str(coverage_map(name)),
        BCI_MUTATION_MODULE=shard["module"],
        BCI_MUTATION_BUDGET=":".join(f"{v:g}" for v in budget),
    )
    # the scratch tree is not beside the data folder: point its tests at the checkout's
    data = data_path()
    if data is not None:
        env.setdefault(DATA_ENV, str(data))
    if shard.get("disable-jit", False):
        env["NUMBA_DISABLE_JIT"] = "1"
    return env


def _files(paths, root: Path) -> list[Path]:
    """The files named by ``paths`` (relative to ``root``), a folder standing for its modules."""
    return [
        file
        for path in paths
        for file in (
            sorted(Path(root, path).rglob("*.py"))
            if Path(root, path).is_dir()
            else [Path(root, path)]
        )
    ]


def _digest(paths, *extra, root: Path = ROOT) -> str:
    h = hashlib.sha256(repr(extra).encode())
    for file in _files(paths, root):
        h.update(str(file.relative_to(root)).encode() + file.read_bytes())
    return h.hexdigest()


def refresh_tree() -> None:
    """Copy the sources and tests into the scratch tree (undoing any interrupted mutant)."""
    TREE.mkdir(parents=True, exist_ok=True)
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc", "*.partial")
    for name in COPIED:
        src, dst = ROOT / name, TREE / name
        if src.is_dir():
            shutil.copytree(src, dst, ignore=ignore, dirs_exist_ok=True)
        else:
            shutil.copy2(src, dst)


def _cosmic(*args, cwd=None, timeout=None, env=None) -> int:
    """Run a cosmic-ray command in its own process group; kill the group at ``timeout``."""
    proc = subprocess.Popen(args, cwd=cwd or TREE, env=env, start_new_session=True)
    try:
        return proc.wait(timeout=timeout)
    except (subprocess.TimeoutExpired, SystemExit) as err:
        os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
        if isinstance(err, SystemExit):
            raise
        return -1


def skip_inert(session: Path, module: str) -> int:
    """Mark as skipped the mutants that can only change a message or an annotation.

    A mutant inside a ``raise`` statement, a ``warnings.warn``/``logger.*`` call or a
    ``__repr__``/``__str__`` changes the text a user reads, never a result: the conditions that
    decide whether to raise or warn stay mutated. Under ``from __future__ import annotations``
    a type annotation is never evaluated at run time. ``cache=`` of a numba decorator only
    decides whether the compiled kernel is kept on disk.
    """
    from cosmic_ray.work_db import WorkDB, use_db
    from cosmic_ray.work_item import WorkerOutcome, WorkResult

    tree = ast.parse((TREE / module).read_text())
    lazy_annotations = any(
        isinstance(node, ast.ImportFrom)
        and node.module == "__future__"
        and any(a.name == "annotations" for a in node.names)
        for node in tree.body
    )
    nodes = []
    for node in ast.walk(tree):
        func = node.func if isinstance(node, ast.Call) else None
        if (
            isinstance(node, ast.Raise)
            or (isinstance(node, ast.FunctionDef) and node.name in ("__repr__", "__str__"))
            or (isinstance(func, ast.Attribute) and func.attr == "warn")
            or (
                isinstance(func, ast.Attribute)
                and isinstance(func.value, ast.Name)
                and func.value.id in ("logger", "log", "logging")
            )
        ):
            nodes.append(node)
        if lazy_annotations and isinstance(node, ast.arg | ast.AnnAssign) and node.annotation:
            nodes.append(node.annotation)
        if lazy_annotations and isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            nodes += [node.returns] if node.returns else []
        if isinstance(node, ast.FunctionDef):
            # numba's on-disk cache of a kernel (@njit(cache=True)) only changes start-up time
            nodes += [
                k.value
                for d in node.decorator_list
                if isinstance(d, ast.Call)
                for k in d.keywords
                if k.arg == "cache"
            ]
    spans = [((n.lineno, n.col_offset), (n.end_lineno, n.end_col_offset)) for n in nodes]
    skipped = 0
    with use_db(str(session), WorkDB.Mode.open) as db:
        for item in db.work_items:
            if all(
                any(a <= tuple(m.start_pos) and tuple(m.end_pos) <= b for a, b in spans)
                for m in item.mutations
            ):
                result = WorkResult(worker_outcome=WorkerOutcome.SKIPPED)
                db.set_result(item.job_id, result)
                skipped += 1
    return skipped


def baseline(name: str, shard: dict) -> float:
    """Run the shard's tests on the unmutated tree: map which tests execute which lines of the
    module, record their durations, return the time of the timed run.

    The run under coverage.py comes first and warms the tree's numba cache; the module is then
    touched so that its own numba kernels compile in the timed run as they will for a mutant.
    """
    print(f"{name}: which tests execute which lines (a run under coverage.py)", flush=True)
    env = dict(shard_env(name, shard), BCI_MUTATION_COVERAGE_RECORD="1")
    # numba kernels run as Python so that coverage.py sees their lines; a mutant runs the same
    # code paths compiled or not
    if "numba" in (TREE / shard["module"]).read_text():
        env["NUMBA_DISABLE_JIT"] = "1"
    coverage_map(name).unlink(missing_ok=True)
    args = [a for a in pytest_args(shard) if a != "-x"]
    code = _cosmic(sys.executable, "-m", "pytest", *ONE_PROCESS, *args, env=env)
    if not coverage_map(name).exists():
        raise SystemExit(f"{name}: the run under coverage.py failed (exit code {code}).")
    print(f"{name}: baseline run of its tests", flush=True)
    os.utime(TREE / shard["module"])
    start = time.monotonic()
    env = dict(shard_env(name, shard), BCI_MUTATION_RECORD="1")
    code = _cosmic(*test_command(shard), env=env)
    if code != 0:
        raise SystemExit(f"{name}: the tests fail on the unmutated code (exit code {code}).")
    return time.monotonic() - start


def _scopes(source: str) -> list[tuple[int, int, str, str]]:
    """``(first line, last line, name, digest)`` of each scope of a module's source.

    A scope is a function or method (decorators included, nested functions part of it), a
    statement of a class body or of the module, or a class's header (its decorators and
    ``class`` line). Scopes never share a line, so a mutant's line finds its scope.
    """
    lines = source.splitlines(keepends=True)
    found = []

    def visit(body: list[ast.stmt], prefix: str) -> None:
        for node in body:
            first = min([node.lineno] + [d.lineno for d in getattr(node, "decorator_list", [])])
            last, name = node.end_lineno, prefix + f"<{type(node).__name__}>"
            if isinstance(node, ast.ClassDef):
                visit(node.body, f"{prefix}{node.name}.")
                last, name = node.body[0].lineno - 1, prefix + node.name
            elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                name = prefix + node.name
            text = "".join(lines[first - 1 : last])
            found.append((first, last, name, hashlib.sha256(text.encode()).hexdigest()[:10]))

    visit(ast.parse(source).body, "")
    return found


def _mutant_keys(items, source: str) -> dict[str, str]:
    """``job id -> key`` of the mutants: ``scope name:scope digest:operator:k``, the mutant
    being the k-th of its operator in its scope. A key outlives any change outside its scope."""
    scopes = _scopes(source)
    groups: dict[tuple, list] = {}
    for item in items:
        m = item.mutations[0]
        line = m.start_pos[0]
        scope = next(((n, d) for a, b, n, d in scopes if a <= line <= b), ("<module>", ""))
        groups.setdefault((*scope, m.operator_name), []).append((m.occurrence, item.job_id))
    return {
        job: f"{name}:{digest}:{operator}:{k}"
        for (name, digest, operator), jobs in groups.items()
        for k, (_, job) in enumerate(sorted(jobs))
    }


def _current(key: str, scopes: set[tuple[str, str]]) -> bool:
    """Whether the scope of a stored result is unchanged in the module's current source."""
    name, digest = key.split(":")[:2]
    return (name, digest) in scopes


def results_path(name: str) -> Path:
    return RESULTS / f"{name}.json"


def load_results(name: str) -> dict:
    """The shard's committed results (the source of truth; the session is a cache of them)."""
    path = results_path(name)
    data = json.loads(path.read_text()) if path.exists() else {}
    defaults = {"mutants": None, "seconds": 0.0, "mutants_run": 0, "machine": 0.0}
    return {**defaults, "selection": [], **data, "results": data.get("results", {})}


def save_results(name: str, data: dict) -> None:
    """Write the results one mutant per line (small diffs when a few change)."""
    RESULTS.mkdir(parents=True, exist_ok=True)
    head = [f"{json.dumps(k)}: {json.dumps(v)}" for k, v in data.items() if k != "results"]
    rows = [
        f"  {json.dumps(k)}: {json.dumps(v, sort_keys=True)}"
        for k, v in sorted(data["results"].items())
    ]
    body = ",\n".join([*head, '"results": {\n' + ",\n".join(rows) + "\n}"])
    results_path(name).write_text("{\n" + body + "\n}\n")


def _record(name: str, item, result, tests: str, rechecked: bool = False) -> dict:
    from benchmarks.mutation_order import covering_tests

    m = item.mutations[0]
    cover = coverage_map(name)
    line = m.start_pos[0]
    uncovered = cover.exists() and covering_tests(json.loads(cover.read_text()), [line]) == set()
    return {
        "line": line,
        "definition": m.definition_name or "",
        "operator": m.operator_name,
        "mutated": _diff_line(result.diff),
        "outcome": str(result.test_outcome.value),
        "timeout": timed_out(result),
        "rechecked": rechecked,
        "uncovered": bool(uncovered) and result.test_outcome == "survived",
        "tests": tests[:12],
    }


def timed_out(result) -> bool:
    """Whether a mutant's run was stopped at its time budget or at cosmic-ray's timeout."""
    from benchmarks.mutation_order import OVER_BUDGET

    return result.output == "timeout" or bool(OVER_BUDGET.search(result.output or ""))


def sync(name: str, shard: dict, session: Path, tests: str, fresh=(), rechecked=False) -> dict:
    """Make the session and the committed results agree; return the results.

    A stored result of a mutant still pending in the session is set in the session (not run
    again); a session result the file lacks, or one of the ``fresh`` jobs just run again, is
    stored with the digest ``tests`` of the tests it ran; results of mutants the module no
    longer has (their scope changed) are dropped.
    """
    from cosmic_ray.work_db import WorkDB, use_db
    from cosmic_ray.work_item import TestOutcome, WorkerOutcome, WorkResult

    data = load_results(name)
    stored, kept = data["results"], {}
    with use_db(str(session), WorkDB.Mode.open) as db:
        items = list(db.work_items)
        done = {i.job_id: r for i, r in db.completed_work_items}
        source = session_source(name).read_text()
        keys, lines = _mutant_keys(items, source), source.splitlines()
        for item in items:
            key, result = keys[item.job_id], done.get(item.job_id)
            if result is not None and result.worker_outcome == WorkerOutcome.SKIPPED:
                continue
            if result is None and key in stored:
                record = stored[key]
                result = WorkResult(
                    worker_outcome=WorkerOutcome.NORMAL,
                    test_outcome=TestOutcome(record["outcome"]),
                    output="timeout" if record["timeout"] else None,
                )
                db.set_result(item.job_id, result)
            elif result is not None and (key not in stored or item.job_id in fresh):
                stored[key] = _record(name, item, result, tests, rechecked)
            kept[key] = stored.get(key)
            if key in stored:
                line = item.mutations[0].start_pos[0]
                kept[key]["line"] = line
                if kept[key]["outcome"] == "survived":
                    kept[key]["followed_by"] = _followed_by(lines, line)
    data["mutants"] = len(kept)
    data["results"] = {k: v for k, v in kept.items() if v is not None}
    save_results(name, data)
    return data


def prepare(name: str, shard: dict, settings: dict, measure: bool = True) -> tuple[Path, Path]:
    """Create the shard's session (from the committed results) or keep it.

    Unless ``measure`` is false, the per-mutant timeout is ``timeout-factor`` times the baseline
    run of the tests, measured again whenever they change (at least ``min-timeout`` seconds).
    """
    session = WORK / f"{name}.sqlite"
    stamps = WORK / f"{name}.json"
    module = _digest([shard["module"]], settings["exclude-operators"], root=TREE)
    tests = tests_digest(shard, TREE)
    old = json.loads(stamps.read_text()) if stamps.exists() else {}
    if not session.exists() or old.get("module") != module:
        session.unlink(missing_ok=True)
        config = write_config(name, shard, settings, settings["min-timeout"])
        _cosmic("cosmic-ray", "init", str(config), str(session))
        _cosmic("cr-filter-operators", str(session), str(config))
        _cosmic("cr-filter-pragma", str(session))
        old = {}
    if old.get("module") != module or not session_source(name).exists():
        shutil.copy2(TREE / shard["module"], session_source(name))
    skip_inert(session, shard["module"])
    # results the session holds were run with the tests of its stamp
    sync(name, shard, session, old.get("tests", tests))
    if not measure:
        stamps.write_text(json.dumps(dict(old, module=module)))
        return WORK / f"{name}.toml", session
    seconds = old.get("baseline") if old.get("tests") == tests else None
    if seconds is None or not coverage_map(name).exists() or not _setup_times_known(name):
        seconds = baseline(name, shard)
    timeout = max(settings["min-timeout"], settings["timeout-factor"] * seconds)
    config = write_config(name, shard, settings, timeout)
    stamps.write_text(json.dumps(dict(module=module, tests=tests, baseline=seconds)))
    return config, session


def session_source(name: str) -> Path:
    """The module's pristine source the shard's session was made from."""
    return WORK / f"{name}.source.py"


def tests_digest(shard: dict, root: Path = ROOT) -> str:
    """Digest of the shard's tests, with the conftest files and test-package modules they use:
    in the scratch tree, that of the tests the mutants ran."""
    extra = (pytest_args(shard), shard.get("disable-jit", False))
    files = _files(shard["tests"], root)
    files += sorted(_test_support(files, root) - set(files))
    return _digest([file.relative_to(root) for file in files], *extra, root=root)


def _test_support(files: list[Path], root: Path) -> set[Path]:
    """The files under ``tests/`` that ``files`` depend on besides themselves: the conftest.py
    of each folder from theirs up to ``tests/``, and the test-package modules they import
    (relative or ``tests.…`` imports), followed through those modules' own imports."""
    tests, found, todo = root / "tests", set(), list(files)
    while todo:
        file = todo.pop()
        folder = file.parent
        while folder.is_relative_to(tests):
            conftest = folder / "conftest.py"
            if conftest.is_file() and conftest not in found:
                found.add(conftest)
                todo.append(conftest)
            folder = folder.parent
        for module in _imported_test_modules(file, root):
            if module not in found:
                found.add(module)
                todo.append(module)
    return found


def _imported_test_modules(file: Path, root: Path) -> set[Path]:
    """The modules of the test package that ``file`` imports."""
    modules = set()
    for node in ast.walk(ast.parse(file.read_text())):
        if isinstance(node, ast.ImportFrom) and node.level:
            base = file.parents[node.level - 1]
            parts = node.module.split(".") if node.module else []
        elif isinstance(node, ast.ImportFrom) and (node.module or "").startswith("tests."):
            base, parts = root, node.module.split(".")
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.startswith("tests."):
                    modules |= _module_files(root, alias.name.split("."))
            continue
        else:
            continue
        # `from .pkg import name` imports module pkg, or pkg.name when that is a module
        for candidate in [parts] + [[*parts, alias.name] for alias in node.names]:
            modules |= _module_files(base, candidate) if candidate else set()
    return modules


def _module_files(base: Path, parts: list[str]) -> set[Path]:
    path = base.joinpath(*parts)
    return {f for f in (path.with_suffix(".py"), path / "__init__.py") if f.is_file()}


@contextlib.contextmanager
def _in_tree(env: dict):
    """Run cosmic-ray's own mutate-and-test in the tree, with the shard's environment."""
    saved, here = dict(os.environ), Path.cwd()
    os.environ.update(env)
    os.chdir(TREE)
    try:
        yield
    finally:
        os.chdir(here)
        os.environ.clear()
        os.environ.update(saved)


def _rerun(name, shard, config, session, pick, deadline: float, factor=1.0, rechecked=False):
    """Test again the mutants whose stored result ``pick(record)`` chooses (in the tree), with
    ``factor`` times the shard's timeout; store each new result."""
    from cosmic_ray.config import load_config
    from cosmic_ray.mutating import mutate_and_test
    from cosmic_ray.work_db import WorkDB, use_db

    settings = load_config(str(config))
    records = load_results(name)["results"]
    with use_db(str(session), WorkDB.Mode.open) as db:
        items = list(db.work_items)
    keys = _mutant_keys(items, session_source(name).read_text())
    for item in [i for i in items if pick(records.get(keys[i.job_id]))]:
        if time.monotonic() > deadline:
            return
        with _in_tree(shard_env(name, shard, factor)):
            result = mutate_and_test(
                item.mutations, settings.test_command, factor * settings.timeout
            )
        with use_db(str(session), WorkDB.Mode.open) as db:
            db.set_result(item.job_id, result)
        sync(name, shard, session, tests_digest(shard, TREE), {item.job_id}, rechecked)


def retest_survivors(name, shard, config: Path, session: Path, tests: str, deadline: float):
    """Test again (first) the surviving mutants whose tests changed since they survived, those
    declared equivalent too: a new test can show a declaration wrong. ``tests`` is the short
    digest of the current tests."""
    _rerun(name, shard, config, session, lambda record: _stale(record, tests), deadline)


def _stale(record: dict | None, tests: str) -> bool:
    """Whether a stored survivor survived tests that have changed since."""
    return record is not None and record["outcome"] == "survived" and record["tests"] != tests


def recheck_timeouts(name, shard, config: Path, session: Path, deadline: float, factor: float):
    """Test again, with ``factor`` times the timeout, the mutants killed by a timeout only.

    A timeout counts as a kill (an endless loop), but the load of a shared machine can stretch
    a run: a kill is kept as a timeout only when the longer run times out too.
    """

    def unchecked(record) -> bool:
        return record is not None and record["timeout"] and not record["rechecked"]

    _rerun(name, shard, config, session, unchecked, deadline, factor, rechecked=True)


def _unchecked_survivors(items: list, keys: dict[str, str], data: dict) -> list:
    """The work items whose stored outcome is a survival not checked yet. Only a survivor's
    verdict can change with more tests (what the selected tests kill, all of them kill), so
    the selection is checked on survivors, declared equivalent or not."""
    survived = {k for k, r in data["results"].items() if r["outcome"] == "survived"}
    seen = {c["key"] for c in data["selection"]}
    return [i for i in items if keys[i.job_id] in survived - seen]


def check_selection(name: str, shard: dict, settings: dict, count: int, deadline: float):
    """Run ``count`` random survivors with the tests chosen by coverage and with all the
    shard's tests; store both outcomes with the shard's results (the report compares them),
    and the verdict of all the tests as the mutant's."""
    import random

    from cosmic_ray.config import load_config
    from cosmic_ray.mutating import mutate_and_test
    from cosmic_ray.work_db import WorkDB, use_db

    config, session = prepare(name, shard, settings)
    cr = load_config(str(config))
    data = load_results(name)
    with use_db(str(session), WorkDB.Mode.open) as db:
        items = list(db.work_items)
    keys = _mutant_keys(items, session_source(name).read_text())
    items = _unchecked_survivors(items, keys, data)
    for item in random.Random(len(data["selection"])).sample(items, min(count, len(items))):
        if time.monotonic() > deadline:
            break
        check = {"key": keys[item.job_id], "line": item.mutations[0].start_pos[0]}
        check["operator"] = item.mutations[0].operator_name
        for select in ("1", "0"):
            with _in_tree(dict(shard_env(name, shard), BCI_MUTATION_SELECT=select)):
                start = time.monotonic()
                result = mutate_and_test(item.mutations, cr.test_command, cr.timeout)
            key = "selected" if select == "1" else "all"
            check[key] = result.test_outcome.value
            check[f"{key}_timeout"] = timed_out(result)
            check[f"{key}_seconds"] = round(time.monotonic() - start, 1)
        with use_db(str(session), WorkDB.Mode.open) as db:
            db.set_result(item.job_id, result)  # all the tests: the stronger verdict
        data = sync(name, shard, session, tests_digest(shard, TREE), {item.job_id})
        data["selection"].append(check)
        save_results(name, data)
        print(f"{name}: {check}", flush=True)


def _pending(session: Path) -> int:
    """How many mutants of the session have no result yet."""
    from cosmic_ray.work_db import WorkDB, use_db

    with use_db(str(session), WorkDB.Mode.open) as db:
        return len(db.pending_work_items)


def work_left(pending: int, records: dict, tests: str) -> int:
    """How many mutants a run would test: the ``pending`` ones, and the survivors whose tests
    changed (``tests`` is the short digest of the current tests)."""
    return pending + sum(_stale(record, tests) for record in records.values())


def run_shard(name: str, shard: dict, settings: dict, deadline: float) -> bool:
    """Test the survivors whose tests changed again, then the pending mutants; return whether
    there was any to test."""
    config, session = prepare(name, shard, settings)
    tests = tests_digest(shard, TREE)[:12]
    if not work_left(_pending(session), load_results(name)["results"], tests):
        print(f"{name}: nothing to run (every mutant has a result with the current tests)")
        return False
    print(f"{name}: testing again the survivors whose tests changed", flush=True)
    retest_survivors(name, shard, config, session, tests, deadline)
    # undo a mutant left by an interrupted retest (not a refresh: the tests must stay those
    # of the coverage map and of the digest the results are stored with)
    shutil.copy2(session_source(name), TREE / shard["module"])
    left = deadline - time.monotonic()
    print(f"{name}: running pending mutants for at most {left / 60:.1f} min", flush=True)
    before, start = len(load_results(name)["results"]), time.monotonic()
    try:
        env = shard_env(name, shard)
        _cosmic("cosmic-ray", "exec", str(config), str(session), timeout=max(left, 1), env=env)
    finally:
        data = sync(name, shard, session, tests_digest(shard, TREE))
        data["seconds"] += time.monotonic() - start
        data["mutants_run"] += len(data["results"]) - before
        save_results(name, data)
    return True


def run(names: list[str], minutes: float, recheck: float | None, check: int | None) -> bool:
    """Run the shards within ``minutes``; return whether any of them had mutants to test."""
    settings = load_settings()
    shards = settings["shards"]
    unknown = [n for n in names if n not in shards]
    if unknown:
        raise SystemExit(f"Unknown shard(s) {unknown}; known: {sorted(shards)}.")
    deadline = time.monotonic() + 60 * minutes
    ran = False
    for name in names:
        left = deadline - time.monotonic()
        if left < 30:
            print(f"{name}: no time left, skipped")
            ran = True  # not known to be complete
            continue
        refresh_tree()
        start = time.monotonic()
        try:
            with warm_server(name, shards[name]):
                if check:
                    check_selection(name, shards[name], settings, check, deadline)
                    ran = True
                elif recheck:
                    config, session = prepare(name, shards[name], settings)
                    recheck_timeouts(name, shards[name], config, session, deadline, recheck)
                    ran = True
                else:
                    ran |= run_shard(name, shards[name], settings, deadline)
        finally:
            data = load_results(name)
            data["machine"] += time.monotonic() - start
            save_results(name, data)
    refresh_tree()  # a run stopped mid-mutant leaves no mutant behind
    return ran


def _followed_by(lines: list[str], line: int) -> str:
    """The source line after line ``line`` (1-based), stripped: it tells apart the places of a
    module whose mutated lines are the same (e.g. ``for i in []:`` from several loops)."""
    return lines[line].strip() if line < len(lines) else ""


def _equivalents() -> dict:
    """``(module, operator, mutated line, line after it or None) -> reason`` (the mutated line,
    not its number, which moves whenever the module above it changes). An entry names the
    line after (``followed_by``) when the mutated line alone would match other places."""
    if not EQUIVALENT.exists():
        return {}
    equivalent = {}
    for e in tomllib.loads(EQUIVALENT.read_text()).get("equivalent", []):
        key = (e["module"], e["operator"], e["mutated"], e.get("followed_by"))
        if key in equivalent:
            raise ValueError(
                f"{EQUIVALENT.name} declares {e['module']} {e['operator']} {e['mutated']!r} "
                f"twice: name the line after each place (followed_by)"
            )
        equivalent[key] = e["reason"]
    return equivalent


def _declaration(equivalent: dict, module: str, record: dict) -> tuple | None:
    """The key of the entry declaring a surviving mutant equivalent (``None``: none does)."""
    key = (module, record["operator"], record["mutated"])
    for declared in ((*key, record.get("followed_by")), (*key, None)):
        if declared in equivalent:
            return declared
    return None


def _reason(equivalent: dict, module: str, record: dict) -> str | None:
    """Why a surviving mutant is equivalent (``None``: it is not declared)."""
    key = _declaration(equivalent, module, record)
    return None if key is None else equivalent[key]


def _diff_line(diff: str | None) -> str:
    if not diff:
        return ""
    changed = [
        line[1:].strip()
        for line in diff.splitlines()
        if line.startswith("+") and not line.startswith("+++")
    ]
    return changed[0] if changed else ""


def _selection_checks(name: str, checks: list[dict]) -> list[str]:
    if not checks:
        return []
    same = sum(c["selected"] == c["all"] for c in checks)
    fast = sum(c["selected_seconds"] for c in checks)
    slow = sum(c["all_seconds"] for c in checks)
    lines = [
        f"- `{name}`: random survivors checked: {len(checks)}, with the same outcome: {same} "
        f"({sum(c['all'] == 'killed' for c in checks)} killed by all the tests); "
        f"{fast:.0f} s with the selected tests, {slow:.0f} s with all of them."
    ]
    return lines + [
        f"  - differs: line {c['line']}, {c['operator']}: {c['selected']} with the "
        f"selection, {c['all']} with all the tests"
        for c in checks
        if c["selected"] != c["all"]
    ]


def _cell(text: str) -> str:
    """``text`` in a Markdown table cell: a bare ``|`` would end the cell, even in code."""
    return text.replace("|", "\\|")


def report() -> str:
    """Write the report from the committed results alone (no session needed)."""
    settings = load_settings()
    equivalent = _equivalents()
    table = [
        "| shard | module | mutants | current | re-run needed | killed | by timeout (rechecked) "
        "| survived (no test runs the line) | equivalent | kill rate | s / mutant |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    survivors, equivalents, selection, machine, used = [], [], [], 0.0, set()
    for name, shard in settings["shards"].items():
        data = load_results(name)
        machine += data["machine"]
        if data["mutants"] is None:
            table.append(f"| {name} | `{shard['module']}` | not run | | | | | | | | |")
            continue
        scopes = {(n, d) for *_, n, d in _scopes((ROOT / shard["module"]).read_text())}
        tests = tests_digest(shard)[:12]
        # incompetent: cosmic-ray could not build the mutant (not a test outcome)
        rows = {k: r for k, r in data["results"].items() if r["outcome"] != "incompetent"}
        used |= {
            _declaration(equivalent, shard["module"], r)
            for r in rows.values()
            if r["outcome"] == "survived"
        }
        done = {k: r for k, r in rows.items() if _current(k, scopes) and not _stale(r, tests)}
        rerun = len(rows) - len(done)
        killed = [r for r in done.values() if r["outcome"] == "killed"]
        alive = [r for r in done.values() if r["outcome"] == "survived"]
        equiv = [r for r in alive if _reason(equivalent, shard["module"], r) is not None]
        real = [r for r in alive if r not in equiv]
        counted = len(done) - len(equiv)
        rate = f"{100 * len(killed) / counted:.1f} %" if counted else "n/a"
        timeouts = [r for r in killed if r["timeout"]]
        rechecked = sum(r["rechecked"] for r in timeouts)
        cost = f"{data['seconds'] / data['mutants_run']:.1f}" if data["mutants_run"] else ""
        table.append(
            f"| {name} | `{shard['module']}` | {data['mutants']} | {len(done)} | {rerun} | "
            f"{len(killed)} | {len(timeouts)} ({rechecked}) | {len(real)} "
            f"({sum(r['uncovered'] for r in real)}) | {len(equiv)} | {rate} | {cost} |"
        )
        survivors += [(name, r) for r in real]
        equivalents += [(name, r, _reason(equivalent, shard["module"], r)) for r in equiv]
        selection += _selection_checks(name, data["selection"])
    lines = [
        "# Mutation testing of the core",
        "",
        "Command: `python benchmarks/mutation.py SHARD ... --minutes N` (cosmic-ray, local "
        "distributor: one test process at a time, pending mutants in random order; each mutant "
        "runs only the shard's tests that execute its line, found by a baseline run under "
        "coverage.py; `--report` rewrites this file from the results alone). Each mutant's "
        "outcome is kept in `benchmarks/results/mutation/SHARD.json`, keyed by the source of "
        "the function (or statement) it mutates, so a run goes on where the last one stopped. "
        "Shards, their tests and the operator set are in `pyproject.toml` "
        "(`[tool.cosmic-ray]`). "
        "*mutants* leaves out the skipped ones (message-only code, `# pragma: no mutate`, "
        "excluded operators; docs/user_guide/testing.rst), as counted when the shard last ran. "
        "*current*: results whose function is unchanged since (survivors: whose tests are "
        "unchanged too), less the mutants cosmic-ray could not build; *re-run needed*: "
        "stored results whose function changed, or survivors whose tests changed. "
        "Kill rate = killed / (current − equivalent); a shard run only in part reports a "
        "random sample of its mutants. *by timeout*: kills by the time limit alone, "
        "*rechecked*: of those, how many timed out again with three times the limit "
        "(`--recheck-timeouts 3`). "
        "*s / mutant*: wall-clock seconds per mutant of this machine's runs (tests in forks of "
        "a warm server, under the load of the machine at the time, 2 cores shared).",
        "",
        *table,
        "",
        f"Machine time of the runs recorded here: {machine / 3600:.2f} h (wall clock, "
        "baselines, rechecks and selection checks included).",
        "",
        "## Selection check",
        "",
        "Random survivors run twice, with the tests coverage selects and with all the shard's "
        "tests (`python benchmarks/mutation.py SHARD --check-selection 30`); only a survivor's "
        "verdict can change with more tests:",
        "",
        *(selection or ["Not run."]),
        "",
        "## Surviving mutants",
        "",
    ]
    if survivors:
        lines += [
            "| shard | line | function | operator | mutated line | tests that run it |",
            "|---|---|---|---|---|---|",
        ]
        lines += [
            f"| {name} | {r['line']} | {r['definition']} | {r['operator']} | "
            f"`{_cell(r['mutated'])}` | {'none' if r['uncovered'] else 'some'} |"
            for name, r in sorted(survivors, key=lambda x: (x[0], x[1]["line"]))
        ]
    else:
        lines.append("None.")
    lines += ["", "## Equivalent mutants (not counted)", ""]
    if equivalents:
        lines += [
            "| shard | line | operator | mutated line | why equivalent |",
            "|---|---|---|---|---|",
        ]
        lines += [
            f"| {name} | {r['line']} | {r['operator']} | `{_cell(r['mutated'])}` | {_cell(why)} |"
            for name, r, why in sorted(equivalents, key=lambda x: (x[0], x[1]["line"]))
        ]
    else:
        lines.append("None.")
    unused = sorted(k for k in equivalent if k not in used)
    lines += ["", "## Declarations matching no survivor", ""]
    lines.append(
        f"Entries of `{EQUIVALENT.name}` whose mutant was killed or is gone: remove them."
        if unused
        else "None."
    )
    lines += [f"- `{module}` {op}: `{mutated}`" for module, op, mutated, _ in unused]
    text = "\n".join(lines) + "\n"
    REPORT.write_text(text)
    return text


def list_shards() -> None:
    """Create or update every shard's session (no test runs) and print its progress."""
    settings = load_settings()
    refresh_tree()
    for name, shard in settings["shards"].items():
        prepare(name, shard, settings, measure=False)
        data = load_results(name)
        done = len(data["results"])
        print(f"{name:<16} {shard['module']:<44} {done}/{data['mutants']} mutants run", flush=True)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("shards", nargs="*", help="shards to run (default: all, in order)")
    parser.add_argument("--minutes", type=positive_float, default=30.0, help="time budget (30)")
    parser.add_argument(
        "--list", action="store_true", help="create the sessions, list the shards and stop"
    )
    parser.add_argument("--report", action="store_true", help="only rewrite the report")
    parser.add_argument(
        "--recheck-timeouts",
        type=positive_float,
        metavar="FACTOR",
        help="test again the mutants killed by a timeout, with FACTOR times the timeout",
    )
    parser.add_argument(
        "--check-selection",
        type=positive_int,
        metavar="N",
        help="run N random survivors with the tests coverage selects and with all the tests",
    )
    parser.add_argument(
        "--work",
        type=Path,
        default=Path(os.environ.get(WORK_ENV, ROOT / ".mutation")),
        help=f"folder of the sessions and scratch trees (${WORK_ENV}, else .mutation)",
    )
    parser.add_argument(
        "--tree",
        default="tree",
        help="scratch tree under the work folder (shards run in parallel need their own)",
    )
    args = parser.parse_args(argv)
    # stopped with SIGTERM: unwind, so that the warm server and cosmic-ray's group are ended
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    global WORK, TREE
    WORK = args.work.resolve()
    TREE = WORK / args.tree
    WORK.mkdir(parents=True, exist_ok=True)
    if args.list:
        list_shards()
        return 0
    ran = True
    if not args.report:
        shards = args.shards or list(load_settings()["shards"])
        ran = run(shards, args.minutes, args.recheck_timeouts, args.check_selection)
    print(report())
    return 0 if ran else NOTHING_TO_RUN


if __name__ == "__main__":
    sys.exit(main())
