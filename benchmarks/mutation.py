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
``NUMBA_DISABLE_JIT=1`` instead. Pending mutants run in random order and a run stops after
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
        f"test-command = {_toml_value(' '.join(test_command(shard)))}",
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


def shard_env(name: str, shard: dict) -> dict:
    """The environment of the shard's test processes."""
    env = dict(os.environ, BCI_MUTATION_ORDER=str(WORK / f"{name}.order.json"))
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
    a type annotation is never evaluated at run time.
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
    """Run the shard's tests on the unmutated tree, record their durations, return the time.

    The module is touched first so that its numba kernels compile as they will for a mutant.
    """
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
    if seconds is None:
        print(f"{name}: baseline run of its tests", flush=True)
        seconds = baseline(name, shard)
    timeout = max(settings["min-timeout"], settings["timeout-factor"] * seconds)
    config = write_config(name, shard, settings, timeout)
    # "retest" until the survivors are tested again, should this run be stopped first
    # keep the time spent and mutants run of earlier runs of this session
    stamp = dict(old, module=module, tests=tests, retest=changed, baseline=seconds)
    stamps.write_text(json.dumps(stamp))
    return config, session, changed


def retest_survivors(config: Path, session: Path, deadline: float) -> None:
    """Test the surviving mutants again (first, in the tree) after their tests changed."""
    from cosmic_ray.config import load_config
    from cosmic_ray.mutating import mutate_and_test
    from cosmic_ray.work_db import WorkDB, use_db
    from cosmic_ray.work_item import TestOutcome

    settings = load_config(str(config))
    here = Path.cwd()
    os.chdir(TREE)
    try:
        with use_db(str(session), WorkDB.Mode.open) as db:
            # equivalent mutants survive any test: not worth a run
            equivalent = _equivalents()
            alive = [
                i
                for i, r in db.completed_work_items
                if r.test_outcome == TestOutcome.SURVIVED
                and _key(
                    {
                        "module": str(i.mutations[0].module_path),
                        "operator": i.mutations[0].operator_name,
                        "diff": r.diff,
                    }
                )
                not in equivalent
            ]
            for item in alive:
                if time.monotonic() > deadline:
                    return
                result = mutate_and_test(item.mutations, settings.test_command, settings.timeout)
                db.set_result(item.job_id, result)
    finally:
        os.chdir(here)
    stamps = session.with_suffix(".json")
    stamps.write_text(json.dumps(dict(json.loads(stamps.read_text()), retest=False)))


def run_shard(name: str, shard: dict, settings: dict, deadline: float) -> None:
    """Test the shard's survivors again if its tests changed, then its pending mutants."""
    config, session, changed = prepare(name, shard, settings)
    env = shard_env(name, shard)
    if changed:
        print(f"{name}: its tests changed, testing the survivors again", flush=True)
        saved = dict(os.environ)
        os.environ.update(env)
        try:
            retest_survivors(config, session, deadline)
        finally:
            os.environ.clear()
            os.environ.update(saved)
        refresh_tree()
    left = deadline - time.monotonic()
    print(f"{name}: running pending mutants for at most {left / 60:.1f} min", flush=True)
    before, start = _count_run(session), time.monotonic()
    _cosmic("cosmic-ray", "exec", str(config), str(session), timeout=max(left, 1), env=env)
    stamps = session.with_suffix(".json")
    stamp = json.loads(stamps.read_text())
    stamp["seconds"] = stamp.get("seconds", 0.0) + time.monotonic() - start
    stamp["mutants"] = stamp.get("mutants", 0) + _count_run(session) - before
    stamps.write_text(json.dumps(stamp))


def _count_run(session: Path) -> int:
    return sum(r["test"] is not None for r in _results(session))


def run(names: list[str], minutes: float) -> None:
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
        with warm_server(name, shards[name]):
            run_shard(name, shards[name], settings, deadline)
    refresh_tree()  # a run stopped mid-mutant leaves no mutant behind


def _results(session: Path) -> list[dict]:
    with sqlite3.connect(session) as db:
        rows = db.execute(
            "SELECT m.module_path, m.operator_name, m.occurrence, m.start_pos_row, "
            "m.definition_name, r.worker_outcome, r.test_outcome, r.diff "
            "FROM mutation_specs m LEFT JOIN work_results r ON m.job_id = r.job_id"
        ).fetchall()
    keys = ("module", "operator", "occurrence", "line", "definition", "worker", "test", "diff")
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


def report() -> str:
    settings = load_settings()
    equivalent = _equivalents()
    table = [
        "| shard | module | mutants | run | killed | survived | equivalent | kill rate "
        "| s / mutant |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    survivors, equivalents = [], []
    for name, shard in settings["shards"].items():
        session = WORK / f"{name}.sqlite"
        if not session.exists():
            table.append(f"| {name} | `{shard['module']}` | not run | | | | | | |")
            continue
        rows = [r for r in _results(session) if r["worker"] != "SKIPPED"]
        done = [r for r in rows if r["test"] is not None]
        killed = [r for r in done if r["test"] != "SURVIVED"]
        alive = [r for r in done if r["test"] == "SURVIVED"]
        equiv = [r for r in alive if _key(r) in equivalent]
        real = [r for r in alive if r not in equiv]
        counted = len(done) - len(equiv)
        rate = f"{100 * len(killed) / counted:.1f} %" if counted else "n/a"
        stamps = WORK / f"{name}.json"
        stamp = json.loads(stamps.read_text()) if stamps.exists() else {}
        current = _digest([shard["module"]], settings["exclude-operators"])
        if done and stamp.get("module") != current:
            rate += " (stale: module changed since)"
        cost = f"{stamp['seconds'] / stamp['mutants']:.1f}" if stamp.get("mutants") else ""
        table.append(
            f"| {name} | `{shard['module']}` | {len(rows)} | {len(done)} | {len(killed)} | "
            f"{len(real)} | {len(equiv)} | {rate} | {cost} |"
        )
        survivors += [(name, r) for r in real]
        equivalents += [(name, r, equivalent[_key(r)]) for r in equiv]
    lines = [
        "# Mutation testing of the core",
        "",
        "Command: `python benchmarks/mutation.py SHARD ... --minutes N` (cosmic-ray, local "
        "distributor: one test process at a time, numba kernels recompiled from the mutated "
        "source, pending mutants in random order; `--report` rewrites this file). Shards, "
        "their tests and the operator set are in `pyproject.toml` (`[tool.cosmic-ray]`). "
        "Kill rate = killed / (run − equivalent); a shard run only in part reports a random "
        "sample of its mutants. *mutants* leaves out the skipped ones (message-only code, "
        "`# pragma: no mutate`, excluded operators; docs/user_guide/testing.rst). "
        "*s / mutant*: wall-clock seconds per mutant of this machine's runs (tests in forks of "
        "a warm server, under the load of the machine at the time).",
        "",
        *table,
        "",
        "## Surviving mutants",
        "",
    ]
    if survivors:
        lines += ["| shard | line | function | operator | mutated line |", "|---|---|---|---|---|"]
        lines += [
            f"| {name} | {r['line']} | {r['definition'] or ''} | {r['operator']} | "
            f"`{_diff_line(r['diff'])}` |"
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
        run(args.shards or list(load_settings()["shards"]), args.minutes)
    print(report())
    return 0


if __name__ == "__main__":
    sys.exit(main())
