"""How every benchmark reports a run: its command, its machine and its results file.

Each script writes one Markdown file under ``benchmarks/results/`` (``--output`` to write
elsewhere) whose first paragraph, :func:`run_line`, says how the run was made in the same
form for every script: the command that repeats it, the commit, the machine, the versions
of the libraries it compares and the load average while it ran.
"""

from __future__ import annotations

import argparse
import os
import platform
import subprocess
import sys
from collections.abc import Iterable, Iterator
from functools import cache
from importlib.metadata import packages_distributions
from pathlib import Path
from types import ModuleType
from typing import TypeVar

RESULTS = Path(__file__).resolve().parent / "results"
ROOT = RESULTS.parents[1]
#: Environment variables that change the timings, shown before the command when set.
THREAD_VARIABLES = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")
# as the run started: the parallel backends of a run set some of them for their workers
T = TypeVar("T")
_STARTING_ENVIRONMENT = {name: os.environ[name] for name in THREAD_VARIABLES if name in os.environ}


class LoadAverage:
    """The 1-minute load average, sampled when made and at each :meth:`sample`."""

    def __init__(self) -> None:
        self.samples = [os.getloadavg()[0]]

    def sample(self) -> None:
        self.samples.append(os.getloadavg()[0])

    def around(self, items: Iterable[T]) -> Iterator[T]:
        """``items``, sampling the load after each one (interleaved repeats)."""
        for item in items:
            yield item
            self.sample()

    def __str__(self) -> str:
        return f"{min(self.samples):.1f}–{max(self.samples):.1f}"


def add_output_option(parser: argparse.ArgumentParser, name: str) -> None:
    """``--output``, the results file, by default ``results/<name>``."""
    parser.add_argument(
        "--output", type=Path, default=RESULTS / name, help=f"results file (results/{name})"
    )


def command_line(parser: argparse.ArgumentParser, args: argparse.Namespace) -> str:
    """The command that repeats the run: the script and each option not at its default.

    The thread-count variables set in the environment when the script started come first.
    ``--output`` is left out (where the results go, not what they are). A required option
    with a ``metavar`` shows the metavar, as its value is a path on this machine.
    """
    words = [f"{name}={value}" for name, value in _STARTING_ENVIRONMENT.items()]
    words += ["python", f"benchmarks/{Path(sys.argv[0]).name}"]
    for action in parser._actions:
        if not action.option_strings or action.dest in ("help", "output"):
            continue
        value = getattr(args, action.dest)
        if action.required and action.metavar:
            value = action.metavar
        elif value == action.default:
            continue
        words.append(action.option_strings[-1])
        if action.nargs != 0:
            values = value if isinstance(value, list | tuple) else [value]
            words += [f"{v:g}" if isinstance(v, float) else str(v) for v in values]
    return " ".join(words)


@cache
def _distributions() -> dict[str, list[str]]:
    return packages_distributions()  # reads every installed distribution's metadata


def _distribution(module: ModuleType) -> str:
    """The name users install ``module`` by (``scikit-learn`` for ``sklearn``)."""
    return _distributions().get(module.__name__, [module.__name__])[0]


def _commit() -> str:
    """The checkout's commit, and whether the package or a script differs from it."""
    git = ["git", "-C", str(ROOT)]
    try:
        head = subprocess.run(
            [*git, "rev-parse", "--short", "HEAD"], capture_output=True, text=True, check=True
        ).stdout.strip()
        changed = subprocess.run(
            [*git, "status", "--porcelain", "--", "bci_universum", "benchmarks/*.py"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "outside a git checkout"
    return f"commit {head}" + (" with local changes" if changed else "")


def run_line(
    parser: argparse.ArgumentParser,
    args: argparse.Namespace,
    *,
    libraries: Iterable[ModuleType] = (),
    load: LoadAverage | None = None,
    note: str = "",
) -> str:
    """How the run was made, the first paragraph of a results file.

    Parameters
    ----------
    parser, args
        The script's parser and the options it parsed (see :func:`command_line`).
    libraries
        The modules whose version the results depend on (the peers compared with).
    load
        The load average sampled while the run went on.
    note
        What else the reader needs about the run (thread limits, streams), a clause.
    """
    niceness = os.nice(0)
    parts = [
        f"Python {platform.python_version()}, {platform.machine()}, {os.cpu_count()} cores",
        ", ".join(f"{_distribution(module)} {module.__version__}" for module in libraries),
        f"1-minute load average {load}" if load is not None else "",
        f"niceness {niceness}" if niceness else "",
        note,
    ]
    details = "; ".join(part for part in parts if part)
    return f"`{command_line(parser, args)}` (one run at {_commit()}; {details})."


def write_results(path: Path, lines: list[str]) -> None:
    """Write the results file ``path``, making its folder if needed."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(lines).rstrip("\n") + "\n", encoding="utf-8")
    print(f"wrote {path}")
