"""UniverSVM, the seed author's C++ U-SVM, against UniversumSVC: what a universum costs each.

Both tools fit the problems of ``bench_solver_scaling.py`` (two overlapping Gaussian classes in
d = 64; RBF, gamma = 1/64, C = 1; universum fits with n/2 universum trials from N(0, I),
C_U = 0.5, epsilon = 0.05; stopping tolerance 1e-3 and a 200 MB kernel cache in both), each
with and without the universum, interleaved, in one run. The table gives each tool's universum
fit over its own plain fit, beside the objectives and support-vector counts that show both
solve the same problems.

UniverSVM (GPL) is not a dependency and no part of it is in this repository. Build it from
https://github.com/fabiansinz/UniverSVM; with g++ 11 or newer::

    make universvm CFLAGS="-O3 -std=gnu++98 -include cstring -include algorithm"

then, from the repository root::

    PYTHONPATH=. python benchmarks/bench_universvm.py --universvm PATH [--sizes N ...]
"""

from __future__ import annotations

import argparse
import os
import re
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

import numpy as np
from bench_solver_scaling import (
    RBF,
    UNI,
    add_run_options,
    fit_seconds,
    paired_fits,
    warm_up,
)
from report import LoadAverage, run_line, write_results
from sklearn.datasets import dump_svmlight_file

from bci_universum import UNIVERSUM
from bci_universum.classifiers import UniversumSVC

OURS = UniversumSVC(**RBF, **UNI)
# -t 2: RBF exp(-g·‖x − y‖²); -V 0 -o 0: the standard U-SVM solved as one QP; -G: epsilon;
# -e and -m: our fit's stopping tolerance and cache size (libsvm's meaning in both)
UNIVERSVM_ARGS = [
    *("-t", "2", "-g", str(OURS.gamma), "-c", str(OURS.C)),
    *("-C", str(OURS.C_universum), "-G", str(OURS.epsilon)),
    *("-e", str(OURS.tol), "-m", str(OURS.cache_size), "-V", "0", "-o", "0"),
]
UNIVERSVM_LABEL = -2  # UniverSVM reads training points labelled -2 as universum trials
SIZES = [2000, 4000, 8000, 16000]


def write_problem(path: Path, X: np.ndarray, y: np.ndarray) -> None:
    """Write trials in libsvm's format with UniverSVM's labels (±1, universum −2)."""
    labels = np.select([y == UNIVERSUM, y == 1], [UNIVERSVM_LABEL, 1], -1)
    dump_svmlight_file(X, labels, str(path), zero_based=False)


def run_universvm(binary: Path, train: Path, test: Path, folder: Path) -> dict:
    """Fit UniverSVM on ``train``: wall and training seconds, iterations, objective, SVs.

    A one-trial test file keeps UniverSVM from predicting the training set after the fit; the
    wall clock still includes reading the file and writing the model, the tool's own training
    clock (its report's ``time 1``) does not.
    """
    report, model = folder / "report.txt", folder / "model.txt"
    command = [str(binary), *UNIVERSVM_ARGS, "-f", report, "-T", test, train, model]
    start = time.perf_counter()
    out = subprocess.run(command, capture_output=True, text=True, check=True).stdout
    wall = time.perf_counter() - start
    last = re.findall(r"it:(\d+) l:\d+ \|g\|:\S+ w:(\S+)", out)[-1]
    train_s = float(re.search(r"time 1 =(\S+)", report.read_text()).group(1))
    lines = model.read_text().splitlines()
    return {
        "wall": wall,
        "train": train_s,
        "iterations": int(last[0]),
        "objective": -float(last[1]),  # UniverSVM prints the maximised dual
        "sv": len(lines) - [line.strip() for line in lines].index("SV") - 1,
    }


def fit_ours(X: np.ndarray, y: np.ndarray, params: dict) -> dict:
    est = UniversumSVC(**RBF, **params)
    seconds = fit_seconds(est, X, y)
    return {
        "wall": seconds,
        "iterations": est.n_iter_,
        "objective": est.objective_,
        "sv": est.dual_coef_.shape[1] + est.universum_dual_coef_.shape[1],
    }


def cells(n: int, repeats: int, binary: Path, folder: Path) -> dict:
    problems = paired_fits(n)
    X_lab, y_lab, _ = problems["plain"]
    test = folder / "test.txt"
    write_problem(test, X_lab[:1], y_lab[:1])
    for fit, (Xf, yf, _) in problems.items():
        write_problem(folder / f"{fit}.txt", Xf, yf)
    runs = {(tool, fit): [] for tool in ("universvm", "ours") for fit in problems}
    load = LoadAverage()
    for _ in load.around(range(repeats)):
        for fit in problems:
            runs["universvm", fit].append(
                run_universvm(binary, folder / f"{fit}.txt", test, folder)
            )
        for fit, (Xf, yf, params) in problems.items():
            runs["ours", fit].append(fit_ours(Xf, yf, params))
    row = {"n": n, "load": str(load)}
    for (tool, fit), results in runs.items():
        row[tool, fit] = {key: statistics.median(r[key] for r in results) for key in results[0]}
    print(row, flush=True)
    return row


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--universvm", type=Path, required=True, metavar="PATH", help="the built binary"
    )
    add_run_options(parser, SIZES, "universvm.md", min_size=2)
    args = parser.parse_args(argv)
    if not (args.universvm.is_file() and os.access(args.universvm, os.X_OK)):
        parser.error(f"--universvm {args.universvm} is not an executable file")
    warm_up()
    with tempfile.TemporaryDirectory() as folder:
        rows = [cells(n, args.repeats, args.universvm, Path(folder)) for n in args.sizes]
    write_markdown(run_line(parser, args, note="both tools single-threaded"), args, rows)


def write_markdown(header, args, rows):
    lines = [
        "# UniverSVM against UniversumSVC: the cost of a universum",
        "",
        header + " UniverSVM built from "
        "fabiansinz/UniverSVM with `-O3` and run as `universvm "
        f"{' '.join(UNIVERSVM_ARGS)} -T test train model`.",
        "",
        "Problems of `bench_solver_scaling.py`: RBF, gamma = 1/64, C = 1, d = 64; universum fits "
        "with n/2 universum trials from N(0, I), C_U = 0.5, epsilon = 0.05. Seconds are medians "
        f"of {args.repeats} interleaved repeats: UniverSVM's training clock (its report's "
        "`time 1`; in brackets the wall clock of the process, which adds reading the file and "
        "writing the model) and UniversumSVC's `fit` wall clock after a numba warm-up. Load: "
        "1-minute load average around the cells.",
        "",
        "| n labelled | UniverSVM plain s | UniverSVM U-SVM s | UniverSVM U-SVM / plain "
        "| ours plain s | ours U-SVM s | ours U-SVM / plain | UniverSVM / ours, U-SVM | load |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        uv_plain, uv_usvm = r["universvm", "plain"], r["universvm", "usvm"]
        our_plain, our_usvm = r["ours", "plain"], r["ours", "usvm"]
        lines.append(
            f"| {r['n']} | {uv_plain['train']:.2f} ({uv_plain['wall']:.2f}) | "
            f"{uv_usvm['train']:.2f} ({uv_usvm['wall']:.2f}) | "
            f"{uv_usvm['train'] / uv_plain['train']:.2f} | {our_plain['wall']:.3f} | "
            f"{our_usvm['wall']:.3f} | {our_usvm['wall'] / our_plain['wall']:.2f} | "
            f"{uv_usvm['train'] / our_usvm['wall']:.1f} | "
            f"{r['load']} |"
        )
    lines += [
        "",
        "Same problems, same optima: dual objectives (UniverSVM prints six decimals), support "
        "vectors (points with a non-zero coefficient) and iterations (updates) of each fit.",
        "",
        "| n labelled | fit | UniverSVM objective | ours objective | relative difference "
        "| SV UniverSVM / ours | iterations UniverSVM / ours |",
        "|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        for fit in ("plain", "usvm"):
            uv, ours = r["universvm", fit], r["ours", fit]
            difference = abs(uv["objective"] - ours["objective"]) / abs(ours["objective"])
            lines.append(
                f"| {r['n']} | {'plain' if fit == 'plain' else 'U-SVM'} | "
                f"{uv['objective']:.6f} | {ours['objective']:.6f} | {difference:.1e} | "
                f"{uv['sv']:.0f} / {ours['sv']:.0f} | "
                f"{uv['iterations']:.0f} / {ours['iterations']:.0f} |"
            )
    write_results(args.output, lines)


if __name__ == "__main__":
    main()
