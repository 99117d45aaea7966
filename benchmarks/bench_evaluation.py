"""Evaluation engine benchmark: inner model selection, backends, resume from the cache.

Run from the repository root::

    PYTHONPATH=. python benchmarks/bench_evaluation.py [--subjects 2] [--folds 4] [--inner 3]

On synthetic two-class epochs (variance over C3 or C4, plus rest trials as a recorded
universum; 32 channels, 1 s at 250 Hz; the registry pipeline ``csp_usvm`` on the whole second,
without band-pass as the synthetic trials are white noise):

1. one job's inner model selection over the thesis grid (48 points) with
   :func:`~bci_universum.evaluation.select_and_fit` (feature steps fitted once per inner fold)
   against :class:`~sklearn.model_selection.GridSearchCV` (feature steps refitted per grid
   point), checking both select the same parameters;
2. the same evaluation (within-session CV, universa ``none`` and ``U_C3``) on the serial,
   joblib (2 processes) and Dask (LocalCluster, 2 worker processes) backends, checking the
   scores are identical;
3. the evaluation rerun on a complete cache (nothing recomputed).

Writes ``benchmarks/results/evaluation.md``.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import sklearn
from report import LoadAverage, add_output_option, run_line, write_results
from sklearn.model_selection import GridSearchCV

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from bci_universum.datasets import EpochSet  # noqa: E402
from bci_universum.evaluation import THESIS_GRID, WithinSession, evaluate, select_and_fit  # noqa: E402
from bci_universum.model_selection import UniversumStratifiedKFold, universum_scorer  # noqa: E402
from bci_universum.pipelines import CLASSIFIER, pipeline_factory  # noqa: E402
from bci_universum.universa import MOTOR_CHANNELS  # noqa: E402
from paradigms.commands._types import int_range, positive_int  # noqa: E402

SFREQ = 250.0
CHANNELS = [*MOTOR_CHANNELS, "Fp1", "Fp2", "F3", "F4", "O1", "O2", "P3", "P4", "T7", "T8", "Pz"]


def synthetic_epochs(subject: str, n_per_class: int = 40, n_rest: int = 40, seed: int = 0):
    """An EpochSet: left/right (variance over C4/C3) and rest trials."""
    rng = np.random.default_rng(seed)
    n_ch, n_t = len(CHANNELS), int(SFREQ)
    c3, c4 = CHANNELS.index("C3"), CHANNELS.index("C4")
    X, y = [], []
    for label, ch in (("left", c4), ("right", c3), ("universum", None)):
        for _ in range(n_rest if ch is None else n_per_class):
            scale = np.ones(n_ch)
            if ch is not None:
                scale[ch] += 0.3 * rng.uniform(0.5, 1.5)
            X.append(rng.standard_normal((n_ch, n_t)) * scale[:, None])
            y.append(label)
    y = np.array(y, dtype=object)
    return EpochSet(
        X=np.array(X), y=y, runs="1", sessions="1",
        universum_kinds=np.where(y == "universum", "rest", ""),
        sfreq=SFREQ, ch_names=CHANNELS, subject=subject, dataset="synthetic",
    )  # fmt: skip


csp_usvm = pipeline_factory("csp_usvm", band=None, window=(0.0, 1.0))


def _without_time(rows):
    return [{k: v for k, v in r.items() if k != "fit_time"} for r in rows]


def bench_selection(epochs, inner: int) -> list[str]:
    grid = {f"{CLASSIFIER}__{k}": list(v) for k, v in THESIS_GRID.items()}
    cv = UniversumStratifiedKFold(inner, shuffle=True, random_state=0)
    start = time.perf_counter()
    _, best = select_and_fit(csp_usvm(epochs), grid, epochs.X, epochs.y, cv)
    fast = time.perf_counter() - start
    start = time.perf_counter()
    search = GridSearchCV(csp_usvm(epochs), grid, cv=cv, scoring=universum_scorer("accuracy"))
    search.fit(epochs.X, epochs.y)
    slow = time.perf_counter() - start
    same = best == search.best_params_
    return [
        "| method | seconds | selected |",
        "|---|---|---|",
        f"| `select_and_fit` (features once per inner fold) | {fast:.1f} | {best} |",
        f"| `GridSearchCV` (features per grid point) | {slow:.1f} | {search.best_params_} |",
        "",
        f"Speed-up ×{slow / fast:.1f}; same parameters selected: {same}.",
    ]


def bench_backends(datasets, folds: int) -> list[str]:
    from distributed import Client, LocalCluster

    grid = {"C": (1.0, 10.0, 100.0), "C_universum": (0.0, 1.0), "epsilon": (0.1,)}
    args = (datasets, {"csp_usvm": csp_usvm}, ["none", "U_C3"], WithinSession(folds, 5, grid))
    lines = ["| backend | workers | seconds | identical to serial |", "|---|---|---|---|"]
    reference = None
    with tempfile.TemporaryDirectory() as tmp:
        runs = [("serial", {}), ("joblib", {"n_jobs": 2})]
        for backend, kwargs in runs:
            start = time.perf_counter()
            cache = Path(tmp) / backend
            rows = evaluate(*args, backend=backend, cache_dir=cache, progress=False, **kwargs)
            took = time.perf_counter() - start
            reference = reference or _without_time(rows)
            workers = kwargs.get("n_jobs", 1)
            same = _without_time(rows) == reference
            lines.append(f"| {backend} | {workers} | {took:.1f} | {same} |")
        with LocalCluster(n_workers=2, threads_per_worker=1) as cluster, Client(cluster) as client:
            start = time.perf_counter()
            rows = evaluate(*args, backend="dask", scheduler=client, progress=False)
            took = time.perf_counter() - start
        lines.append(
            f"| dask LocalCluster | 2 | {took:.1f} | {_without_time(rows) == reference} |"
        )
        start = time.perf_counter()
        rows = evaluate(*args, cache_dir=Path(tmp) / "serial", progress=False)
        took = time.perf_counter() - start
        lines.append(f"| serial, complete cache | 1 | {took:.2f} | "
                     f"{_without_time(rows) == reference} |")  # fmt: skip
    n_jobs = len(datasets) * folds * 2
    lines += ["", f"{n_jobs} jobs ({len(datasets)} subjects × {folds} folds × 2 universa)."]
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--subjects", type=positive_int, default=2)
    parser.add_argument("--folds", type=int_range(2), default=4)
    parser.add_argument("--inner", type=int_range(2), default=3)
    add_output_option(parser, "evaluation.md")
    ns = parser.parse_args()
    load = LoadAverage()
    datasets = [synthetic_epochs(f"S{i + 1}", seed=i) for i in range(ns.subjects)]
    selection = bench_selection(datasets[0], ns.inner)
    backends = bench_backends(datasets, ns.folds)
    load.sample()
    write_results(ns.output, [
        "# Evaluation engine",
        "",
        run_line(parser, ns, libraries=[sklearn], load=load),
        "",
        f"## Inner model selection of one job (thesis grid, {ns.inner}-fold, 80 labelled + 40 "
        "universum trials, 32 channels × 250 samples)",
        "",
        *selection,
        "",
        "## Backends and cache",
        "",
        *backends,
        "",
    ])  # fmt: skip


if __name__ == "__main__":
    main()
