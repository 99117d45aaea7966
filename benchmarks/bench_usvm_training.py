"""Training time of UniversumSVC against scikit-learn's SVC (libsvm) and LinearSVC (liblinear).

Problems: two overlapping Gaussian classes in d = 64 (means ±μ with ‖μ‖ = 1, Bayes accuracy
≈ 84 %), n labelled trials, C = 1, tol = 1e-3 (the defaults of both libraries), gamma="scale".
Each cell is timed once after a numba warm-up; accuracy on 4000 held-out trials is reported so
that speed is not bought with a sloppy optimum. The universum rows add n trials drawn from the
mixture's centre (N(0, I)) with C_U = 1, ε = 0.05, which triples the number of dual variables.

Run from the repository root::

    python benchmarks/bench_usvm_training.py [--max-svc-rbf N] [--output PATH]
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import sklearn
from report import LoadAverage, add_output_option, run_line, write_results
from sklearn.svm import SVC, LinearSVC

from bci_universum import UNIVERSUM
from bci_universum.classifiers import UniversumSVC
from paradigms.commands._types import int_range, positive_int

D = 64


#: The fewest labelled trials of a problem with both classes (``--sizes``).
MIN_SIZE = 4


def make_problem(n: int, seed: int, n_universum: int = 0):
    rng = np.random.default_rng(seed)
    mu = rng.normal(size=D)
    mu /= np.linalg.norm(mu)

    def draw(k):
        y = rng.integers(0, 2, k)
        return rng.normal(size=(k, D)) + np.where(y[:, None] == 1, mu, -mu), y

    X, y = draw(n)
    X_test, y_test = draw(4000)
    if n_universum:
        X = np.concatenate([X, rng.normal(size=(n_universum, D))])
        y = np.concatenate([y, np.full(n_universum, UNIVERSUM)])
    return X, y, X_test, y_test


def timed(estimator, X, y, X_test, y_test):
    start = time.perf_counter()
    estimator.fit(X, y)
    seconds = time.perf_counter() - start
    return seconds, float(np.mean(estimator.predict(X_test) == y_test))


def warm_up():
    X, y, _, _ = make_problem(200, 0, n_universum=50)
    for kernel, solver in [("rbf", "smo"), ("linear", "smo"), ("linear", "dcd")]:
        UniversumSVC(kernel=kernel, solver=solver).fit(X, y)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--sizes", type=int_range(MIN_SIZE), nargs="+", default=[1000, 4000, 16000]
    )
    parser.add_argument(
        "--max-svc-rbf", type=positive_int, default=16000, help="largest n timed for SVC with RBF"
    )
    parser.add_argument(
        "--max-universum", type=positive_int, default=4000, help="largest n timed with a universum"
    )
    add_output_option(parser, "usvm_training.md")
    args = parser.parse_args(argv)
    load = LoadAverage()
    warm_up()
    rows = []
    for n in args.sizes:
        X, y, X_test, y_test = make_problem(n, seed=n)
        for kernel in ["rbf", "linear"]:
            ours = UniversumSVC(kernel=kernel, C_universum=0.0)
            t_ours, acc_ours = timed(ours, X, y, X_test, y_test)
            if kernel == "rbf" and n > args.max_svc_rbf:
                t_svc = acc_svc = float("nan")
            else:
                t_svc, acc_svc = timed(SVC(kernel=kernel), X, y, X_test, y_test)
            row = {
                "n": n,
                "kernel": kernel,
                "solver": ours.solver_,
                "ours_s": t_ours,
                "svc_s": t_svc,
                "ratio": t_ours / t_svc,
                "acc_ours": acc_ours,
                "acc_svc": acc_svc,
                "linsvc_s": float("nan"),
                "acc_linsvc": float("nan"),
            }
            if kernel == "linear":
                lin = LinearSVC(loss="hinge", dual=True, max_iter=10000)
                row["linsvc_s"], row["acc_linsvc"] = timed(lin, X, y, X_test, y_test)
            rows.append(row)
            print(row, flush=True)
    uni_rows = []
    for n in [s for s in args.sizes if s <= args.max_universum]:
        X, y, X_test, y_test = make_problem(n, seed=n, n_universum=n)
        lab = y != UNIVERSUM
        for kernel in ["rbf", "linear"]:
            t_plain, acc_plain = timed(
                UniversumSVC(kernel=kernel, C_universum=0.0), X, y, X_test, y_test
            )
            est = UniversumSVC(kernel=kernel, C_universum=1.0, epsilon=0.05)
            t_u, acc_u = timed(est, X, y, X_test, y_test)
            t_svc, _ = timed(SVC(kernel=kernel), X[lab], y[lab], X_test, y_test)
            row = {
                "n": n,
                "kernel": kernel,
                "solver": est.solver_,
                "plain_s": t_plain,
                "usvm_s": t_u,
                "svc_s": t_svc,
                "usvm_over_svc": t_u / t_svc,
                "acc_plain": acc_plain,
                "acc_usvm": acc_u,
            }
            uni_rows.append(row)
            print(row, flush=True)
    load.sample()
    header = run_line(parser, args, libraries=[sklearn], load=load)
    write_markdown(header, args, rows, uni_rows)


def write_markdown(header, args, rows, uni_rows):
    lines = [
        "# U-SVM training time vs scikit-learn",
        "",
        header,
        "",
        "Two overlapping Gaussian classes, d = 64, C = 1, tol = 1e-3, gamma='scale'; accuracy "
        "on 4000 held-out trials. Ratio = UniversumSVC time / SVC time (< 1: faster).",
        "",
        "## Plain SVM problems (C_universum = 0)",
        "",
        "| n | kernel | our solver | UniversumSVC s | SVC s | ratio | LinearSVC s | acc ours "
        "| acc SVC | acc LinearSVC |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        lines.append(
            f"| {r['n']} | {r['kernel']} | {r['solver']} | {r['ours_s']:.3f} | "
            f"{r['svc_s']:.3f} | {r['ratio']:.3f} | {r['linsvc_s']:.3f} | "
            f"{r['acc_ours']:.4f} | {r['acc_svc']:.4f} | {r['acc_linsvc']:.4f} |"
        )
    if any(r["kernel"] == "rbf" and np.isnan(r["svc_s"]) for r in rows):
        lines.append("")
        lines.append(f"SVC with RBF was not timed above n = {args.max_svc_rbf} (nan).")
    lines += [
        "",
        "## Cost of a universum as large as the labelled set (C_universum = 1, ε = 0.05)",
        "",
        "| n labelled + n universum | kernel | solver | plain s | U-SVM s | SVC (labelled) s "
        "| U-SVM / SVC | acc plain | acc U-SVM |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for r in uni_rows:
        lines.append(
            f"| {r['n']} + {r['n']} | {r['kernel']} | {r['solver']} | {r['plain_s']:.3f} | "
            f"{r['usvm_s']:.3f} | {r['svc_s']:.3f} | {r['usvm_over_svc']:.3f} | "
            f"{r['acc_plain']:.4f} | {r['acc_usvm']:.4f} |"
        )
    lines.append("")
    lines.append(
        f"Universum cells were timed for n ≤ {args.max_universum} only (the N(0, I) universum "
        "of this synthetic problem carries no information, so accuracy is not expected to rise)."
    )
    write_results(args.output, lines)


if __name__ == "__main__":
    main()
