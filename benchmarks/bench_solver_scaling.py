"""Solver speed at scale: UniversumSVC against scikit-learn's SVC, with default BLAS threads.

Problems are those of ``bench_usvm_training.py`` (two overlapping Gaussian classes in d = 64,
universum trials from the mixture's centre N(0, I)); RBF with gamma = 1/64, C = 1, and for the
universum fits C_U = 0.5, epsilon = 0.05 with n/2 universum trials. Every cell is a wall-clock
fit time with the BLAS thread pool left at its default (the solver never calls BLAS), after a
numba warm-up; cells of one size are interleaved (SVC, plain, universum, repeated) and the
median is reported, with the 1-minute load average of the machine around them.

Also measured: the fit with BLAS limited to one thread (must not matter), the linear solver
choice of ``solver="auto"`` against SMO, DCD and the interior point (IPM), a 10 labelled +
90 universum linear problem in 20 features whose universum trials have 10x the labelled
trials' scale, on which SMO needs ~5·10^5 updates, and (when the real recordings are present)
10 labelled + 90 universum tangent-space features of eegmmidb S001 (2080 features), on which
SMO needs ~130.

Run from the repository root::

    PYTHONPATH=. python benchmarks/bench_solver_scaling.py [--sizes 1000 2000 4000 8000 16000]
"""

from __future__ import annotations

import argparse
import resource
import statistics
import time
import warnings

import numpy as np
import sklearn
from bench_usvm_training import MIN_SIZE, make_problem
from numba import njit
from report import LoadAverage, add_output_option, run_line, write_results
from sklearn.exceptions import ConvergenceWarning
from sklearn.svm import SVC
from threadpoolctl import threadpool_info, threadpool_limits

from bci_universum import UNIVERSUM
from bci_universum.classifiers import UniversumSVC
from bci_universum.datasets import data_path, load_eegmmidb
from bci_universum.features.tangent_space import TangentSpace
from bci_universum.solvers.kernels import KERNEL_CODES, kernel_row
from bci_universum.solvers.smo import _kernel_points
from paradigms.commands._types import int_range, positive_int

GAMMA = 1.0 / 64
RBF = {"kernel": "rbf", "gamma": GAMMA, "C": 1.0}
RBF_CODE = KERNEL_CODES["rbf"]
UNI = {"C_universum": 0.5, "epsilon": 0.05}
PLAIN = {"C_universum": 0.0}
SOLVERS = ("auto", "smo", "dcd", "ipm")
SIZES = [1000, 2000, 4000, 8000, 16000]
REPEATS = 3  # interleaved repeats per size, the default of every solver benchmark


def add_run_options(
    parser: argparse.ArgumentParser, sizes: list[int], results: str, min_size: int = MIN_SIZE
) -> None:
    """``--sizes`` (default ``sizes``, each at least ``min_size``), ``--repeats`` and
    ``--output`` (``results/<results>``)."""
    parser.add_argument("--sizes", type=int_range(min_size), nargs="+", default=sizes)
    parser.add_argument(
        "--repeats",
        type=positive_int,
        default=REPEATS,
        help=f"interleaved repeats per size ({REPEATS})",
    )
    add_output_option(parser, results)


def fit_seconds(estimator, X, y) -> float:
    start = time.perf_counter()
    estimator.fit(X, y)
    return time.perf_counter() - start


def warm_up() -> None:
    X, y, _, _ = make_problem(300, 0, n_universum=150)
    for cache in (200, 0.1):  # float64 and float32 rows
        UniversumSVC(**RBF, **UNI, cache_size=cache).fit(X, y)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        for solver in SOLVERS:
            UniversumSVC(kernel="linear", solver=solver, **UNI).fit(X, y)


def support_counts(est: UniversumSVC) -> dict:
    """Updates, support vectors (points) and those at their bound of a fitted RBF machine."""
    coef = np.concatenate([est.dual_coef_[0], est.universum_dual_coef_[0]])
    bound = np.concatenate(
        [
            np.full(est.dual_coef_.shape[1], est.C),
            np.full(est.universum_dual_coef_.shape[1], est.C_universum),
        ]
    )
    return {
        "updates": est.n_iter_,
        "sv": coef.size,
        "universum_sv": est.universum_dual_coef_.shape[1],
        "at_bound": int(np.sum(np.isclose(np.abs(coef), bound))),
    }


def kernel_floor_seconds(est: UniversumSVC, X: np.ndarray) -> float:
    """Time to compute every support vector's kernel row over all points once.

    Any exact solver needs these entries to check every variable's optimality conditions.
    They are computed as the fit's solver computes its rows (:func:`kernel_row`, no BLAS,
    float32 on centred points at the default tol), so this is a
    floor for a solver limited by its kernel evaluations (up to the symmetric half of the
    block of support vectors).
    """
    # the points and squared norms the fit's solver used (float32 and centred at tol ≥ 1e-4)
    points, sq, empty, _ = _kernel_points(X, RBF_CODE, est.cache_size, est.tol)
    XT = np.ascontiguousarray(points.T)
    out = np.empty(X.shape[0], dtype=empty.dtype)
    sv = np.concatenate([est.support_, est.universum_support_])
    _rows(points, sq, XT, sv[:1], RBF_CODE, out)  # compiled for this dtype before the clock
    start = time.perf_counter()
    _rows(points, sq, XT, sv, RBF_CODE, out)
    return time.perf_counter() - start


@njit
def _rows(points, sq, XT, sv, kcode, out):
    """The rows of the points ``sv`` over all points, one after the other into ``out``."""
    for s in sv:
        kernel_row(points[s], sq[s], XT, sq, 0, s, kcode, GAMMA, 3.0, 0.0, out)


def row_dtype(est: UniversumSVC, n_points: int) -> np.dtype:
    """The dtype of the kernel rows that ``est`` caches in an RBF fit on ``n_points`` points."""
    _, _, empty, _ = _kernel_points(np.zeros((n_points, 1)), RBF_CODE, est.cache_size, est.tol)
    return empty.dtype


def cache_holding_all(est: UniversumSVC, n_points: int) -> float:
    """A cache size (MB) that holds a row per point in the rows' dtype, with a margin."""
    return 1.001 * row_dtype(est, n_points).itemsize * n_points * n_points / 2**20


def paired_fits(n: int) -> dict:
    """The plain fit of n labelled trials and the fit with n/2 universum trials besides.

    Maps ``"plain"`` and ``"usvm"`` to ``(X, y, parameters)``, the parameters on top of ``RBF``.
    """
    X, y, _, _ = make_problem(n, seed=n, n_universum=n // 2)
    lab = y != UNIVERSUM
    return {"plain": (X[lab], y[lab], PLAIN), "usvm": (X, y, UNI)}


def rbf_cells(n: int, repeats: int) -> dict:
    fits = paired_fits(n)
    (X_lab, y_lab, _), (X, y, _) = fits["plain"], fits["usvm"]
    times = {"svc": [], "plain": [], "usvm": []}
    load = LoadAverage()
    for _ in load.around(range(repeats)):
        times["svc"].append(fit_seconds(SVC(**RBF), X_lab, y_lab))
        plain = UniversumSVC(**RBF, **PLAIN)
        times["plain"].append(fit_seconds(plain, X_lab, y_lab))
        usvm = UniversumSVC(**RBF, **UNI)
        times["usvm"].append(fit_seconds(usvm, X, y))
    row = {k: statistics.median(v) for k, v in times.items()}
    row.update(
        n=n,
        rows={"plain": row_dtype(plain, n).name, "usvm": row_dtype(usvm, n + n // 2).name},
        load=str(load),
        counts={"plain": support_counts(plain), "usvm": support_counts(usvm)},
        floor={
            "plain": kernel_floor_seconds(plain, X_lab),
            "usvm": kernel_floor_seconds(usvm, X),
        },
    )
    print(row, flush=True)
    return row


def cache_cells(n: int, repeats: int) -> dict:
    """Plain and U-SVM fits whose cache holds every row: wall-clock and system CPU seconds."""
    fits = paired_fits(n)
    times = {fit: [] for fit in fits}
    system = {fit: [] for fit in fits}
    cache_mb = {}
    for _ in range(repeats):
        for fit, (Xf, yf, params) in fits.items():
            cache_mb[fit] = cache_holding_all(UniversumSVC(**params), Xf.shape[0])
            est = UniversumSVC(**RBF, **params, cache_size=cache_mb[fit])
            before = resource.getrusage(resource.RUSAGE_SELF).ru_stime
            times[fit].append(fit_seconds(est, Xf, yf))
            system[fit].append(resource.getrusage(resource.RUSAGE_SELF).ru_stime - before)
    cells = {fit: statistics.median(t) for fit, t in times.items()}
    cells.update({f"{fit}_system": statistics.median(t) for fit, t in system.items()})
    cells["cache_mb"] = cache_mb
    print(cells, flush=True)
    return cells


def thread_cells(n: int, repeats: int) -> dict:
    X, y, _ = paired_fits(n)["usvm"]
    times = {"default": [], "one": []}
    for _ in range(repeats):
        times["default"].append(fit_seconds(UniversumSVC(**RBF, **UNI), X, y))
        with threadpool_limits(1):
            times["one"].append(fit_seconds(UniversumSVC(**RBF, **UNI), X, y))
    return {k: statistics.median(v) for k, v in times.items()}


def linear_cells(n: int) -> dict:
    fits = paired_fits(n)
    (X_lab, y_lab, _), (X, y, _) = fits["plain"], fits["usvm"]
    row = {"n": n, "svc": fit_seconds(SVC(kernel="linear"), X_lab, y_lab)}
    for solver in SOLVERS:
        est = UniversumSVC(kernel="linear", solver=solver, random_state=0, **UNI)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)  # DCD's, reported by objective
            row[solver] = fit_seconds(est, X, y)
        row[f"{solver}_objective"] = est.objective_
        if solver == "auto":
            row["chosen"] = est.solver_
    print(row, flush=True)
    return row


def few_labelled_problem(seed: int = 20, d: int = 20):
    """10 labelled + 90 universum trials; the universum has 10x the labelled trials' scale."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(10, d))
    y = np.repeat([1, 0], 5)
    X[:, 0] += np.where(y == 1, 1.0, -1.0)
    Z = 10.0 * rng.normal(size=(90, d))
    return np.concatenate([X, Z]), np.concatenate([y, np.full(90, UNIVERSUM)])


def s001_problem():
    """10 labelled + 90 universum trials of eegmmidb S001 in the tangent space (or None)."""
    path = data_path()
    if path is None:
        return None
    trials = load_eegmmidb(
        1, path=path, band=(7.0, 30.0), universum=("rest", "baseline", "task"), verbose=False
    )
    y = np.asarray(trials.y)
    rng = np.random.default_rng(0)
    counts = {"left": 5, "right": 5, "universum": 90}
    pick = np.concatenate(
        [rng.choice(np.flatnonzero(y == c), k, replace=False) for c, k in counts.items()]
    )
    X = TangentSpace().fit(trials.X[pick], y[pick]).transform(trials.X[pick])
    X = (X - X[:10].mean(axis=0)) / X[:10].std(axis=0)  # standardised on the labelled trials
    return X, y[pick]


def few_labelled_cells(repeats: int, problem) -> list[dict]:
    X, y = problem
    rows = []
    for solver in SOLVERS:
        seconds, est = [], None
        for _ in range(repeats):
            est = UniversumSVC(kernel="linear", solver=solver, random_state=0, **UNI)
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                seconds.append(fit_seconds(est, X, y))
        row = {
            "solver": solver,
            "chosen": est.solver_,
            "s": statistics.median(seconds),
            "n_iter": est.n_iter_,
            "objective": est.objective_,
            "warned": any("max_iter" in str(w.message) for w in caught),
        }
        print(row, flush=True)
        rows.append(row)
    return rows


def exponent(ns, ts) -> float:
    return float(np.polyfit(np.log(ns), np.log(ts), 1)[0])


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_run_options(parser, SIZES, "solver_scaling.md")
    args = parser.parse_args(argv)
    blas = [(i["internal_api"], i["num_threads"]) for i in threadpool_info()]
    warm_up()
    rbf = [rbf_cells(n, args.repeats) for n in args.sizes]
    cache = cache_cells(args.sizes[-1], args.repeats)
    threads = thread_cells(min(args.sizes[-1], 4000), args.repeats)
    linear = linear_cells(min(args.sizes[-1], 2000))
    few = few_labelled_cells(5, few_labelled_problem())
    real = s001_problem()
    s001 = few_labelled_cells(3, real) if real is not None else []
    header = run_line(
        parser, args, libraries=[sklearn], note=f"BLAS thread pools at their defaults: {blas}"
    )
    write_markdown(args, header, rbf, cache, threads, linear, few, s001)


def write_markdown(args, header, rbf, cache, threads, linear, few, s001):
    scaled = [r for r in rbf if r["n"] >= 2000]
    ns = [r["n"] for r in scaled]
    lines = [
        "# Solver speed at scale",
        "",
        header,
        "",
        "RBF, gamma = 1/64, C = 1, d = 64; universum fits: n/2 universum trials from N(0, I), "
        "C_U = 0.5, epsilon = 0.05. Wall-clock fit seconds, median of interleaved repeats "
        f"({args.repeats}); load = 1-minute load average around the cells.",
        "",
        "Rows: the dtype of the kernel rows each fit caches (float32 for RBF at the default "
        "tol = 1e-3, as in libsvm).",
        "",
        "| n labelled | SVC s | plain s | U-SVM (n + n/2) s | plain / SVC | U-SVM / plain "
        "| U-SVM / SVC | rows plain, U-SVM | load |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rbf:
        lines.append(
            f"| {r['n']} | {r['svc']:.3f} | {r['plain']:.3f} | {r['usvm']:.3f} | "
            f"{r['plain'] / r['svc']:.2f} | {r['usvm'] / r['plain']:.2f} | "
            f"{r['usvm'] / r['svc']:.2f} | {r['rows']['plain']}, {r['rows']['usvm']} | "
            f"{r['load']} |"
        )
    if len(ns) >= 2:
        lines += [
            "",
            f"Scaling exponent (least squares on log t vs log n, n = {ns[0]} … {ns[-1]}): "
            f"SVC {exponent(ns, [r['svc'] for r in scaled]):.2f}, plain "
            f"{exponent(ns, [r['plain'] for r in scaled]):.2f}, U-SVM "
            f"{exponent(ns, [r['usvm'] for r in scaled]):.2f}.",
        ]
    lines += [
        "",
        "Where the U-SVM's time goes (the last repeat's fits): updates and support vectors "
        "(points with a non-zero coefficient; in brackets, at their bound C or C_U) of the two "
        "fits; the ratio of their kernel work (support vectors × points: every support vector's "
        "row over all points is needed to check every variable's optimality conditions) beside "
        "the ratio of their fit times; and each fit's time over the time to compute every one "
        "of its support vectors' kernel rows over all its points once, as the solver computes "
        "its rows (`kernel_row`, no BLAS, in the dtype of the fit's rows).",
        "",
        "| n labelled | plain updates | U-SVM updates | plain SV (at bound) "
        "| U-SVM SV (at bound; universum) | SV rows (SV × points), U-SVM / plain "
        "| U-SVM / plain fit time | plain fit / its SV rows | U-SVM fit / its SV rows |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rbf:
        plain, usvm = r["counts"]["plain"], r["counts"]["usvm"]
        work = usvm["sv"] * (r["n"] + r["n"] // 2) / (plain["sv"] * r["n"])
        lines.append(
            f"| {r['n']} | {plain['updates']} | {usvm['updates']} | "
            f"{plain['sv']} ({plain['at_bound']}) | {usvm['sv']} ({usvm['at_bound']}; "
            f"{usvm['universum_sv']}) | {work:.2f} | "
            f"{r['usvm'] / r['plain']:.2f} | {r['plain'] / r['floor']['plain']:.2f} | "
            f"{r['usvm'] / r['floor']['usvm']:.2f} |"
        )
    n_c, mb = args.sizes[-1], cache["cache_mb"]
    largest = rbf[-1]
    lines += [
        "",
        f"## A cache holding every row, n = {n_c} (+ {n_c // 2} universum)",
        "",
        "Each fit with the default 200 MB cache and with one that holds a row per point (plain "
        f"{mb['plain']:.0f} MB, U-SVM {mb['usvm']:.0f} MB: every row is computed once). "
        "Medians of interleaved repeats; the default column is the table above. System CPU "
        "time is the kernel's, mostly the page faults of the cache's fresh memory.",
        "",
        "| | 200 MB (default) | every row | every row, system CPU s |",
        "|---|---|---|---|",
        f"| plain s | {largest['plain']:.3f} | {cache['plain']:.3f} | "
        f"{cache['plain_system']:.3f} |",
        f"| U-SVM s | {largest['usvm']:.3f} | {cache['usvm']:.3f} | {cache['usvm_system']:.3f} |",
        f"| U-SVM / plain | {largest['usvm'] / largest['plain']:.2f} | "
        f"{cache['usvm'] / cache['plain']:.2f} | |",
    ]
    n_t = min(args.sizes[-1], 4000)
    lines += [
        "",
        f"BLAS threads: the U-SVM fit at n = {n_t} + {n_t // 2} takes {threads['default']:.3f} s "
        f"with the default pool and {threads['one']:.3f} s with one thread "
        f"(ratio {threads['default'] / threads['one']:.2f}).",
        "",
        f"## Linear kernel, n = {linear['n']} + {linear['n'] // 2} universum (one fit each)",
        "",
        "| | SVC (labelled) | SMO | DCD | IPM | auto |",
        "|---|---|---|---|---|---|",
        f"| s | {linear['svc']:.3f} | {linear['smo']:.3f} | {linear['dcd']:.3f} | "
        f"{linear['ipm']:.3f} | {linear['auto']:.3f} ({linear['chosen']}) |",
        "| objective | | "
        + " | ".join(f"{linear[f'{s}_objective']:.8g}" for s in ("smo", "dcd", "ipm", "auto"))
        + " |",
    ]
    sections = [("10 labelled + 90 universum trials, linear, d = 20, universum at 10x scale", few)]
    if s001:
        sections.append(("eegmmidb S001: 10 labelled + 90 universum trials, tangent space", s001))
    for title, rows in sections:
        lines += [
            "",
            f"## {title}",
            "",
            "| solver | ran | s | iterations | objective | hit max_iter |",
            "|---|---|---|---|---|---|",
        ]
        lines += [
            f"| {r['solver']} | {r['chosen']} | {r['s']:.4f} | {r['n_iter']} | "
            f"{r['objective']:.8g} | {r['warned']} |"
            for r in rows
        ]
    write_results(args.output, lines)


if __name__ == "__main__":
    main()
