"""What a warm start could save the U-SVM: SMO started from the solution's bounds and from it.

The plain and U-SVM problems of ``bench_solver_scaling.py`` (RBF, gamma = 1/64, C = 1, d = 64;
n/2 universum trials from N(0, I), C_U = 0.5, epsilon = 0.05) are solved by ``smo_solve`` as
``UniversumSVC.fit`` solves them, from three starts:

- zero, as ``fit`` does;
- the solution's bounds: every variable that ends at its bound starts there, the others at
  zero, with yᵀα = 0 restored on the free variables of the sign it needs, in proportion to
  their final values (what a perfect guess of the bounded variables gives);
- the solution itself (no update: the gradient at the start, a kernel row per support vector,
  and one check of the optimality conditions).

The last start is the least any warm start can cost, so its U-SVM time over the plain fit's from
zero bounds what warm starts can do for the ratio of the two fits. Wall-clock seconds, medians of
interleaved repeats, after a numba warm-up; a start's time includes the gradient at it.

Run from the repository root::

    PYTHONPATH=. python benchmarks/bench_warm_start.py [--sizes 4000 16000] [--repeats 3]
"""

from __future__ import annotations

import argparse
import statistics
import time
from functools import partial

import numpy as np
from bench_solver_scaling import (
    GAMMA,
    RBF,
    add_run_options,
    paired_fits,
    warm_up,
)
from report import LoadAverage, run_line, write_results

from bci_universum.classifiers import UniversumSVC
from bci_universum.solvers.smo import smo_solve

STARTS = ("zero", "bounds", "solution")
SIZES = [4000, 16000]


def bound_start(y: np.ndarray, alpha: np.ndarray, upper: np.ndarray) -> np.ndarray:
    """The solution's bounded variables at their bound, the others at zero, with yᵀα = 0."""
    start = np.where(alpha >= upper, upper, 0.0)
    gap = float(y @ start)
    free = np.flatnonzero((alpha > 0) & (alpha < upper) & (y == -np.sign(gap)))
    start[free] = np.minimum(alpha[free] / alpha[free].sum() * abs(gap), upper[free])
    return start


def problems(n: int) -> dict:
    """Each fit's solver call (its dual as ``fit`` assembles it) and its three starts."""
    out = {}
    for fit, (X, y, params) in paired_fits(n).items():
        est = UniversumSVC(**RBF, **params)
        dual = est._assemble(X, y, *est._validate_fit_data(X, y))
        solve = partial(
            smo_solve,
            dual.y,
            dual.p,
            dual.upper,
            dual.points,
            index=dual.index,
            kernel=RBF["kernel"],
            gamma=GAMMA,
        )
        solution = solve()
        bounds = bound_start(dual.y, solution.alpha, dual.upper)
        starts = dict(zip(STARTS, (None, bounds, solution.alpha), strict=True))
        out[fit] = solve, starts, solution.objective
    return out


def cells(n: int, repeats: int) -> dict:
    fits = problems(n)
    times, updates, objective = {}, {}, {}
    load = LoadAverage()
    for _ in load.around(range(repeats)):
        for fit, (solve, starts, reference) in fits.items():
            for start, alpha0 in starts.items():
                begin = time.perf_counter()
                result = solve(alpha0=alpha0)
                times.setdefault((fit, start), []).append(time.perf_counter() - begin)
                updates[fit, start] = result.n_iter
                objective[fit, start] = abs(result.objective - reference) / abs(reference)
    row = {key: statistics.median(t) for key, t in times.items()}
    row.update(n=n, updates=updates, objective=objective, load=str(load))
    print(row, flush=True)
    return row


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_run_options(parser, SIZES, "warm_start.md")
    args = parser.parse_args(argv)
    warm_up()
    rows = [cells(n, args.repeats) for n in args.sizes]
    write_markdown(run_line(parser, args), args, rows)


def write_markdown(header, args, rows):
    lines = [
        "# Warm starts and the cost of a universum",
        "",
        header,
        "",
        "Problems of `bench_solver_scaling.py`: RBF, gamma = 1/64, C = 1, d = 64; U-SVM with n/2 "
        "universum trials from N(0, I), C_U = 0.5, epsilon = 0.05. `smo_solve` on each fit's "
        "dual from zero (as `fit` does), from the solution's bounds (every variable that ends "
        "at its bound starts there, the others at zero, yᵀα = 0 restored on the free ones) and "
        "from the solution itself. Wall-clock seconds including the gradient at the start, "
        f"medians of {args.repeats} interleaved repeats; updates in brackets; load: 1-minute "
        "load average around the cells. The start from the solution makes no update and is the "
        "least any warm start can cost: the column U-SVM / plain from zero, the U-SVM's time "
        "over the plain fit's from zero, is what a perfect warm start would leave of the cost "
        "of a universum.",
        "",
        "| n labelled | start | plain s (updates) | U-SVM s (updates) "
        "| objective vs from zero, plain / U-SVM | U-SVM / plain from zero | load |",
        "|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        for start in STARTS:
            plain, usvm = r["plain", start], r["usvm", start]
            lines.append(
                f"| {r['n']} | {start} | {plain:.3f} ({r['updates']['plain', start]}) | "
                f"{usvm:.3f} ({r['updates']['usvm', start]}) | "
                f"{r['objective']['plain', start]:.1e} / {r['objective']['usvm', start]:.1e} | "
                f"{usvm / r['plain', 'zero']:.2f} | {r['load']} |"
            )
    write_results(args.output, lines)


if __name__ == "__main__":
    main()
