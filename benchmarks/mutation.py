"""Mutation testing of the core with cosmic-ray: one resumable session per module (shard).

Run from the repository root (``pip install -e .[mutation]`` first)::

    python benchmarks/mutation.py --list                   # shards and their mutant counts
    python benchmarks/mutation.py universum online --minutes 20
    python benchmarks/mutation.py --report                 # rewrite the report only

``WORK`` is ``--work DIR``, else ``$BCI_MUTATION_WORK``, else ``.mutation`` in the checkout: a
folder outside the checkout keeps the sessions when the checkout is removed.

Shards are configured in ``pyproject.toml`` (``[tool.cosmic-ray.shards.<name>]``: the module and
the tests that cover it). Each shard is a cosmic-ray session in ``WORK/<name>.sqlite``;
mutants run in a scratch copy of the tree (``WORK/tree``, refreshed before each run), one
test process at a time. Mutants inside numba kernels are compiled from the mutated source (a
changed file invalidates its ``cache=True`` entries); kernels of the other modules come from the
tree's warm cache. A shard with ``disable-jit = true`` runs its tests with
``NUMBA_DISABLE_JIT=1`` instead. Each mutant runs only the tests that execute its line, after a
map made by one run of the shard's tests under coverage.py (``benchmarks/mutation_order.py``);
``--check-selection N`` runs N random mutants with that selection and with all the tests.
Kills by timeout are counted apart; ``--recheck-timeouts 3`` runs them again with three times
the time. Pending mutants run in random order and a run stops after
``--minutes`` (the next run resumes), so a partly run shard reports an unbiased sample. A
session starts over when its module changes; when only its tests change, its survivors are
tested again first.

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
import sqlite3
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

# the session state: kept outside the checkout with --work or $BCI_MUTATION_WORK
WORK_ENV = "BCI_MUTATION_WORK"
WORK = ROOT / ".mutation"
TREE = WORK / "tree"
REPORT = ROOT / "benchmarks" / "results" / "mutation.md"
EQUIVALENT = ROOT / "benchmarks" / "mutation_equivalent.toml"
COPIED = ("bci_universum", "acquisition", "paradigms", "tests", "benchmarks", "pyproject.toml")
# the pytest plugin that runs the tests most likely to kill a mutant first
ORDER_PLUGIN = "benchmarks.mutation_order"
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
    return [sys.executable, SERVER, str(WORK / f"{TREE.name}.sock"), "--", *pytest_args(shard)]


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


def coverage_map(name: str) -> Path:
    """The shard's map of each module line to the tests that execute it."""
    return WORK / f"{name}.coverage.json"


def shard_env(name: str, shard: dict) -> dict:
    """The environment of the shard's test processes."""
    env = dict(
        os.environ,
        BCI_MUTATION_ORDER=str(WORK / f"{name}.order.json"),
        BCI_MUTATION_COVERAGE=str(coverage_map(name)),
        BCI_MUTATION_MODULE=shard["module"],
    )
    # the scratch tree is not beside the data folder: point its tests at the checkout's
    data = data_path()
    if data is not None:
        env.setdefault(DATA_ENV, str(data))
    if shard.get("disable-jit", False):
        env["NUMBA_DISABLE_JIT"] = "1"
    return env


def _digest(paths, *extra) -> str:
    h = hashlib.sha256(repr(extra).encode())
    for path in paths:
        for file in (
            sorted(Path(ROOT, path).rglob("*.py"))
            if Path(ROOT, path).is_dir()
            else [Path(ROOT, path)]
        ):
            h.update(str(file.relative_to(ROOT)).encode() + file.read_bytes())
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
    code = _cosmic(sys.executable, "-m", "pytest", *args, env=env)
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


def prepare(
    name: str, shard: dict, settings: dict, measure: bool = True
) -> tuple[Path, Path, bool]:
    """Create the shard's session or keep it; say whether its tests changed since.

    Unless ``measure`` is false, the per-mutant timeout is ``timeout-factor`` times the baseline
    run of the tests, measured again whenever they change (at least ``min-timeout`` seconds).
    """
    session = WORK / f"{name}.sqlite"
    stamps = WORK / f"{name}.json"
    module = _digest([shard["module"]], settings["exclude-operators"])
    tests = _digest(shard["tests"], pytest_args(shard), shard.get("disable-jit", False))
    old = json.loads(stamps.read_text()) if stamps.exists() else {}
    changed = False
    if not session.exists() or old.get("module") != module:
        session.unlink(missing_ok=True)
        config = write_config(name, shard, settings, settings["min-timeout"])
        _cosmic("cosmic-ray", "init", str(config), str(session))
        _cosmic("cr-filter-operators", str(session), str(config))
        _cosmic("cr-filter-pragma", str(session))
        old = {}
    else:
        changed = old.get("tests", tests) != tests or old.get("retest", False)
    skip_inert(session, shard["module"])
    if not measure:
        stamps.write_text(json.dumps(dict(old, module=module)))
        return WORK / f"{name}.toml", session, changed
    seconds = old.get("baseline") if old.get("tests") == tests else None
    if seconds is None or not coverage_map(name).exists():
        seconds = baseline(name, shard)
    timeout = max(settings["min-timeout"], settings["timeout-factor"] * seconds)
    config = write_config(name, shard, settings, timeout)
    # "retest" until the survivors are tested again, should this run be stopped first
    # keep the time spent and mutants run of earlier runs of this session
    stamp = dict(old, module=module, tests=tests, retest=changed, baseline=seconds)
    stamps.write_text(json.dumps(stamp))
    return config, session, changed


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


def _rerun(config: Path, session: Path, env: dict, pick, deadline: float, factor=1.0):
    """Test again the mutants ``pick(item, result)`` chooses (in the tree), with ``factor``
    times the shard's timeout; yield each job id once its new result is stored."""
    from cosmic_ray.config import load_config
    from cosmic_ray.mutating import mutate_and_test
    from cosmic_ray.work_db import WorkDB, use_db

    settings = load_config(str(config))
    with _in_tree(env), use_db(str(session), WorkDB.Mode.open) as db:
        for item in [i for i, r in db.completed_work_items if pick(i, r)]:
            if time.monotonic() > deadline:
                return
            timeout = factor * settings.timeout
            result = mutate_and_test(item.mutations, settings.test_command, timeout)
            db.set_result(item.job_id, result)
            yield item.job_id


def _stamp(session: Path, **changes) -> dict:
    """Update the shard's stamps file; return it."""
    stamps = session.with_suffix(".json")
    stamp = dict(json.loads(stamps.read_text()), **changes)
    stamps.write_text(json.dumps(stamp))
    return stamp


def retest_survivors(config: Path, session: Path, env: dict, deadline: float) -> None:
    """Test the surviving mutants again (first, in the tree) after their tests changed."""
    from cosmic_ray.work_item import TestOutcome

    # equivalent mutants survive any test: not worth a run
    equivalent = _equivalents()

    def alive(item, result) -> bool:
        mutation = item.mutations[0]
        row = {"module": str(mutation.module_path), "operator": mutation.operator_name}
        return result.test_outcome == TestOutcome.SURVIVED and (
            _key(dict(row, diff=result.diff)) not in equivalent
        )

    for _ in _rerun(config, session, env, alive, deadline):
        pass
    if time.monotonic() <= deadline:
        _stamp(session, retest=False)


def recheck_timeouts(config: Path, session: Path, env: dict, deadline: float, factor: float):
    """Test again, with ``factor`` times the timeout, the mutants killed by a timeout only.

    A timeout counts as a kill (an endless loop), but the load of a shared machine can stretch
    a run: a kill is kept as a timeout only when the longer run times out too.
    """
    done = set(json.loads(session.with_suffix(".json").read_text()).get("rechecked", []))

    def timed_out(item, result) -> bool:
        return result.output == "timeout" and item.job_id not in done

    for job in _rerun(config, session, env, timed_out, deadline, factor):
        done.add(job)
        _stamp(session, rechecked=sorted(done))


def check_selection(name: str, shard: dict, settings: dict, count: int, deadline: float):
    """Run ``count`` random mutants with the tests chosen by coverage and with all the shard's
    tests; store both outcomes in ``WORK/<name>.selection.json`` (the report compares them)."""
    import random

    from cosmic_ray.config import load_config
    from cosmic_ray.mutating import mutate_and_test
    from cosmic_ray.work_db import WorkDB, use_db

    config, session, _ = prepare(name, shard, settings)
    cr = load_config(str(config))
    path = WORK / f"{name}.selection.json"
    checks = json.loads(path.read_text()) if path.exists() else []
    seen = {c["job"] for c in checks}
    with use_db(str(session), WorkDB.Mode.open) as db:
        items = [i for i in db.work_items if i.job_id not in seen]
        skipped = {i.job_id for i, r in db.completed_work_items if r.worker_outcome == "skipped"}
    items = [i for i in items if i.job_id not in skipped]
    for item in random.Random(len(checks)).sample(items, min(count, len(items))):
        if time.monotonic() > deadline:
            break
        check = {"job": item.job_id, "line": item.mutations[0].start_pos[0]}
        check["operator"] = item.mutations[0].operator_name
        for select in ("1", "0"):
            with _in_tree(dict(shard_env(name, shard), BCI_MUTATION_SELECT=select)):
                start = time.monotonic()
                result = mutate_and_test(item.mutations, cr.test_command, cr.timeout)
            key = "selected" if select == "1" else "all"
            check[key] = str(result.test_outcome)
            check[f"{key}_timeout"] = result.output == "timeout"
            check[f"{key}_seconds"] = round(time.monotonic() - start, 1)
        with use_db(str(session), WorkDB.Mode.open) as db:
            db.set_result(item.job_id, result)  # all the tests: the stronger verdict
        checks.append(check)
        path.write_text(json.dumps(checks, indent=0))
        print(f"{name}: {check}", flush=True)


def run_shard(name: str, shard: dict, settings: dict, deadline: float) -> None:
    """Test the shard's survivors again if its tests changed, then its pending mutants."""
    config, session, changed = prepare(name, shard, settings)
    env = shard_env(name, shard)
    if changed:
        print(f"{name}: its tests changed, testing the survivors again", flush=True)
        retest_survivors(config, session, env, deadline)
        refresh_tree()
    left = deadline - time.monotonic()
    print(f"{name}: running pending mutants for at most {left / 60:.1f} min", flush=True)
    before, start = _count_run(session), time.monotonic()
    _cosmic("cosmic-ray", "exec", str(config), str(session), timeout=max(left, 1), env=env)
    stamp = json.loads(session.with_suffix(".json").read_text())
    _stamp(
        session,
        seconds=stamp.get("seconds", 0.0) + time.monotonic() - start,
        mutants=stamp.get("mutants", 0) + _count_run(session) - before,
    )


def _count_run(session: Path) -> int:
    return sum(r["test"] is not None for r in _results(session))


def run(names: list[str], minutes: float, recheck: float | None, check: int | None) -> None:
    settings = load_settings()
    shards = settings["shards"]
    unknown = [n for n in names if n not in shards]
    if unknown:
        raise SystemExit(f"Unknown shard(s) {unknown}; known: {sorted(shards)}.")
    deadline = time.monotonic() + 60 * minutes
    for name in names:
        left = deadline - time.monotonic()
        if left < 30:
            print(f"{name}: no time left, skipped")
            continue
        refresh_tree()
        start = time.monotonic()
        with warm_server(name, shards[name]):
            if check:
                check_selection(name, shards[name], settings, check, deadline)
            elif recheck:
                config, session, _ = prepare(name, shards[name], settings)
                env = shard_env(name, shards[name])
                recheck_timeouts(config, session, env, deadline, recheck)
            else:
                run_shard(name, shards[name], settings, deadline)
        session = WORK / f"{name}.sqlite"
        spent = json.loads(session.with_suffix(".json").read_text()).get("machine", 0.0)
        _stamp(session, machine=spent + time.monotonic() - start)
    refresh_tree()  # a run stopped mid-mutant leaves no mutant behind


def _results(session: Path) -> list[dict]:
    with sqlite3.connect(session) as db:
        rows = db.execute(
            "SELECT m.job_id, m.module_path, m.operator_name, m.occurrence, m.start_pos_row, "
            "m.definition_name, r.worker_outcome, r.test_outcome, r.diff, r.output = 'timeout' "
            "FROM mutation_specs m LEFT JOIN work_results r ON m.job_id = r.job_id"
        ).fetchall()
    keys = (
        "job", "module", "operator", "occurrence", "line", "definition", "worker", "test",
        "diff", "timeout",
    )  # fmt: skip
    return [dict(zip(keys, row, strict=True)) for row in rows]


def _equivalents() -> dict:
    """``(module, operator, mutated line) -> reason`` (the mutated line, not its number, which
    moves whenever the module above it changes)."""
    if not EQUIVALENT.exists():
        return {}
    entries = tomllib.loads(EQUIVALENT.read_text()).get("equivalent", [])
    return {(e["module"], e["operator"], e["mutated"]): e["reason"] for e in entries}


def _key(row: dict) -> tuple[str, str, str]:
    return row["module"], row["operator"], _diff_line(row["diff"])


def _diff_line(diff: str | None) -> str:
    if not diff:
        return ""
    changed = [
        line[1:].strip()
        for line in diff.splitlines()
        if line.startswith("+") and not line.startswith("+++")
    ]
    return changed[0] if changed else ""


def _uncovered(name: str, row: dict) -> bool:
    """Whether no test executes the mutated line (the mutant survived without a test run)."""
    from benchmarks.mutation_order import covering_tests

    path = coverage_map(name)
    if not path.exists():
        return False
    return covering_tests(json.loads(path.read_text()), [row["line"]]) == set()


def _selection_checks() -> list[str]:
    lines = []
    for path in sorted(WORK.glob("*.selection.json")):
        checks = json.loads(path.read_text())
        same = sum(c["selected"] == c["all"] for c in checks)
        fast = sum(c["selected_seconds"] for c in checks)
        slow = sum(c["all_seconds"] for c in checks)
        lines.append(
            f"- `{path.name.split('.')[0]}`: {len(checks)} random mutants, {same} with the same "
            f"outcome ({sum(c['all'] == 'killed' for c in checks)} killed by all the tests); "
            f"{fast:.0f} s with the selected tests, {slow:.0f} s with all of them."
        )
        lines += [
            f"  - differs: line {c['line']}, {c['operator']}: {c['selected']} with the "
            f"selection, {c['all']} with all the tests"
            for c in checks
            if c["selected"] != c["all"]
        ]
    return lines or ["Not run."]


def report() -> str:
    settings = load_settings()
    equivalent = _equivalents()
    table = [
        "| shard | module | mutants | run | killed | by timeout (rechecked) | survived "
        "(no test runs the line) | equivalent | kill rate | s / mutant |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    survivors, equivalents, machine = [], [], 0.0
    for name, shard in settings["shards"].items():
        session = WORK / f"{name}.sqlite"
        if not session.exists():
            table.append(f"| {name} | `{shard['module']}` | not run | | | | | | | |")
            continue
        # incompetent: cosmic-ray could not build the mutant (not a test outcome)
        rows = [
            r for r in _results(session) if r["worker"] != "SKIPPED" and r["test"] != "INCOMPETENT"
        ]
        done = [r for r in rows if r["test"] is not None]
        killed = [r for r in done if r["test"] == "KILLED"]
        alive = [r for r in done if r["test"] == "SURVIVED"]
        equiv = [r for r in alive if _key(r) in equivalent]
        real = [r for r in alive if r not in equiv]
        bare = [r for r in real if _uncovered(name, r)]
        counted = len(done) - len(equiv)
        rate = f"{100 * len(killed) / counted:.1f} %" if counted else "n/a"
        stamps = WORK / f"{name}.json"
        stamp = json.loads(stamps.read_text()) if stamps.exists() else {}
        current = _digest([shard["module"]], settings["exclude-operators"])
        if done and stamp.get("module") != current:
            rate += " (stale: module changed since)"
        timeouts = [r for r in killed if r["timeout"]]
        rechecked = sum(r["job"] in stamp.get("rechecked", []) for r in timeouts)
        cost = f"{stamp['seconds'] / stamp['mutants']:.1f}" if stamp.get("mutants") else ""
        machine += stamp.get("machine", 0.0)
        table.append(
            f"| {name} | `{shard['module']}` | {len(rows)} | {len(done)} | {len(killed)} | "
            f"{len(timeouts)} ({rechecked}) | {len(real)} ({len(bare)}) | {len(equiv)} | "
            f"{rate} | {cost} |"
        )
        survivors += [(name, r, r in bare) for r in real]
        equivalents += [(name, r, equivalent[_key(r)]) for r in equiv]
    lines = [
        "# Mutation testing of the core",
        "",
        "Command: `python benchmarks/mutation.py SHARD ... --minutes N` (cosmic-ray, local "
        "distributor: one test process at a time, pending mutants in random order; each mutant "
        "runs only the shard's tests that execute its line, found by a baseline run under "
        "coverage.py; `--report` rewrites this file). Shards, their tests and the operator set "
        "are in `pyproject.toml` (`[tool.cosmic-ray]`). "
        "Kill rate = killed / (run − equivalent); a shard run only in part reports a random "
        "sample of its mutants. *mutants* leaves out the skipped ones (message-only code, "
        "`# pragma: no mutate`, excluded operators; docs/user_guide/testing.rst) and those "
        "cosmic-ray could not build. *by timeout*: kills by the time limit alone, *rechecked*: "
        "of those, how many timed out again with three times the limit "
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
        "Random mutants run twice, with the tests coverage selects and with all the shard's "
        "tests (`python benchmarks/mutation.py SHARD --check-selection 30`):",
        "",
        *_selection_checks(),
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
            f"| {name} | {r['line']} | {r['definition'] or ''} | {r['operator']} | "
            f"`{_diff_line(r['diff'])}` | {'none' if bare else 'some'} |"
            for name, r, bare in sorted(survivors, key=lambda x: (x[0], x[1]["line"]))
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
            f"| {name} | {r['line']} | {r['operator']} | `{_diff_line(r['diff'])}` | {why} |"
            for name, r, why in sorted(equivalents, key=lambda x: (x[0], x[1]["line"]))
        ]
    else:
        lines.append("None.")
    text = "\n".join(lines) + "\n"
    REPORT.write_text(text)
    return text


def list_shards() -> None:
    """Create or update every shard's session (no test runs) and print its progress."""
    settings = load_settings()
    refresh_tree()
    for name, shard in settings["shards"].items():
        _, session, _ = prepare(name, shard, settings, measure=False)
        rows = [r for r in _results(session) if r["worker"] != "SKIPPED"]
        done = sum(r["test"] is not None for r in rows)
        print(f"{name:<16} {shard['module']:<44} {done}/{len(rows)} mutants run", flush=True)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("shards", nargs="*", help="shards to run (default: all, in order)")
    parser.add_argument("--minutes", type=float, default=30.0, help="time budget (30)")
    parser.add_argument(
        "--list", action="store_true", help="create the sessions, list the shards and stop"
    )
    parser.add_argument("--report", action="store_true", help="only rewrite the report")
    parser.add_argument(
        "--recheck-timeouts",
        type=float,
        metavar="FACTOR",
        help="test again the mutants killed by a timeout, with FACTOR times the timeout",
    )
    parser.add_argument(
        "--check-selection",
        type=int,
        metavar="N",
        help="run N random mutants with the tests coverage selects and with all the tests",
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
    if not args.report:
        shards = args.shards or list(load_settings()["shards"])
        run(shards, args.minutes, args.recheck_timeouts, args.check_selection)
    print(report())
    return 0


if __name__ == "__main__":
    sys.exit(main())
