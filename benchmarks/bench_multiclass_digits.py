"""Multiclass universum learning on scikit-learn's bundled digits: test errors and fit times.

Setting (notes ``multiclass-universum-svm.md`` §5, offline illustration): ``load_digits``
scaled by 1/16, classes 0–3 (L = 4), 8 training digits per class (n = 32), 100 test digits per
class, m = 40 universum digits of another class ('8', and '5' as a contrast); linear kernel;
10 random splits. Fixed settings C = 1, Δ = 0.1, C* = C·n/(mL) (the paper's ratio, 0.2); the
ECOC-U-SVM uses one-vs-one UniversumSVC columns (C = 1, C_U = 0.2, ε = 0.1, hinge decoding),
whose universum is the two zero-coded classes plus the recorded universum digits. Two MU-SVM
rows select (C, Δ) on each split, by the span estimate and by 4-fold CV, over
C ∈ {0.01, 0.1, 1, 10} × Δ ∈ {0, 0.05, 0.1}.

Fit time: median over the splits of one fit (numba warmed up first). The solver comparison
uses a larger problem, all digits 0–7 as labelled trials (≈1440) and digits 8–9 as universum
(≈350 trials, ×8 copies), tol = 1e-3 for both solvers (LIBLINEAR's Crammer–Singer uses the same
per-sample violation test), max_iter = 100 000 passes, median of 5 runs; the MU-SVM with
universum both with the passes alone (``solver="cd"``) and with the default ``solver="auto"``
(here the interior point warm start). A sweep over the number of features on synthetic data
(Gaussian classes, N(0, I) universum trials) compares the two solvers where the passes crawl
and where they do not.

Run from the repository root::

    python benchmarks/bench_multiclass_digits.py [--splits 10] [--output PATH]
"""

from __future__ import annotations

import argparse
import time
import warnings
from pathlib import Path

import numpy as np
import sklearn
from report import LoadAverage, add_output_option, run_line, write_results
from sklearn.datasets import load_digits
from sklearn.exceptions import ConvergenceWarning
from sklearn.model_selection import GridSearchCV
from sklearn.svm import SVC, LinearSVC

from bci_universum import UNIVERSUM
from bci_universum.classifiers import UniversumSVC
from bci_universum.classifiers.ecoc import ECOCUniversumClassifier
from bci_universum.classifiers.musvm import MulticlassUniversumSVC
from bci_universum.model_selection import (
    SpanBoundSearch,
    UniversumStratifiedKFold,
    universum_scorer,
)
from paradigms.commands._types import positive_int

CLASSES = (0, 1, 2, 3)
N_TRAIN, N_TEST, N_UNIVERSUM = 8, 100, 40
GRID = {"C": [0.01, 0.1, 1.0, 10.0], "delta": [0.0, 0.05, 0.1]}
TOL, MAX_ITER = 1e-3, 100_000


def split(X_all, y_all, seed: int, universum_digit: int | None):
    rng = np.random.default_rng(seed)
    train, test = [], []
    for c in CLASSES:
        idx = rng.permutation(np.flatnonzero(y_all == c))
        train.extend(idx[:N_TRAIN])
        test.extend(idx[N_TRAIN : N_TRAIN + N_TEST])
    X, y = X_all[train], y_all[train]
    if universum_digit is not None:
        uni = rng.permutation(np.flatnonzero(y_all == universum_digit))[:N_UNIVERSUM]
        X = np.concatenate([X, X_all[uni]])
        y = np.concatenate([y, np.full(uni.size, UNIVERSUM)])
    return X, y, X_all[test], y_all[test]


def models():
    """(row name, universum digit or None, factory)."""
    c_star = N_TRAIN * len(CLASSES) / (N_UNIVERSUM * len(CLASSES))  # C·n/(mL), C = 1
    mu = {"C": 1.0, "delta": 0.1, "random_state": 0}
    usvm = UniversumSVC(kernel="linear", C=1.0, C_universum=0.2, epsilon=0.1)
    return [
        ("SVC, linear, one-vs-one (libsvm)", None, lambda: SVC(kernel="linear", C=1.0)),
        (
            "LinearSVC crammer_singer, no intercept (liblinear)",
            None,
            lambda: LinearSVC(multi_class="crammer_singer", fit_intercept=False, C=1.0),
        ),
        (
            "ECOC ovo, C_U = 0 (plain SVMs, hinge decoding)",
            None,
            lambda: ECOCUniversumClassifier(
                UniversumSVC(kernel="linear", C=1.0, C_universum=0.0), decoder="hinge"
            ),
        ),
        (
            "ECOC-U-SVM ovo, zero-coded classes only",
            None,
            lambda: ECOCUniversumClassifier(usvm, coding="ovo", decoder="hinge"),
        ),
        (
            "ECOC-U-SVM ovo, + universum '8'",
            8,
            lambda: ECOCUniversumClassifier(usvm, coding="ovo", decoder="hinge"),
        ),
        ("MU-SVM C* = 0 (= Crammer–Singer)", None, lambda: MulticlassUniversumSVC(**mu)),
        (
            f"MU-SVM universum '8' (C* = {c_star:g})",
            8,
            lambda: MulticlassUniversumSVC(**mu),
        ),
        (
            f"MU-SVM universum '5' (C* = {c_star:g})",
            5,
            lambda: MulticlassUniversumSVC(**mu),
        ),
        (
            "MU-SVM universum '8', (C, Δ) by span estimate",
            8,
            lambda: SpanBoundSearch(MulticlassUniversumSVC(random_state=0), GRID),
        ),
        (
            "MU-SVM universum '8', (C, Δ) by 4-fold CV",
            8,
            lambda: GridSearchCV(
                MulticlassUniversumSVC(random_state=0),
                GRID,
                cv=UniversumStratifiedKFold(4),
                scoring=universum_scorer(),
            ),
        ),
    ]


def accuracy_study(X_all, y_all, n_splits: int):
    rows = []
    for name, digit, factory in models():
        errors, seconds, chosen = [], [], []
        for seed in range(n_splits):
            X, y, X_test, y_test = split(X_all, y_all, seed, digit)
            est = factory()
            start = time.perf_counter()
            est.fit(X, y)
            seconds.append(time.perf_counter() - start)
            errors.append(float(np.mean(est.predict(X_test) != y_test)))
            if hasattr(est, "best_params_"):
                chosen.append(tuple(sorted(est.best_params_.items())))
        rows.append((name, np.array(errors), float(np.median(seconds)), chosen))
        print(f"{name}: {100 * np.mean(errors):.2f} %")
    return rows


def timing_study(X_all, y_all, repeats: int = 5):
    lab = y_all <= 7
    X_lab, y_lab = X_all[lab], y_all[lab]
    X_u = X_all[y_all >= 8]
    X_mu = np.concatenate([X_lab, X_u])
    y_mu = np.concatenate([y_lab, np.full(len(X_u), UNIVERSUM)])
    runs = {
        "LinearSVC crammer_singer (liblinear)": lambda: LinearSVC(
            multi_class="crammer_singer", fit_intercept=False, C=1.0, tol=TOL, max_iter=MAX_ITER
        ).fit(X_lab, y_lab),
        "MU-SVM, no universum (same problem)": lambda: MulticlassUniversumSVC(
            C=1.0, tol=TOL, max_iter=MAX_ITER, random_state=0
        ).fit(X_lab, y_lab),
        "MU-SVM, universum 8–9 (Δ = 0.1, C* auto), solver='cd'": lambda: MulticlassUniversumSVC(
            C=1.0, delta=0.1, tol=TOL, max_iter=MAX_ITER, random_state=0, solver="cd"
        ).fit(X_mu, y_mu),
        "MU-SVM, universum 8–9, solver='auto'": lambda: MulticlassUniversumSVC(
            C=1.0, delta=0.1, tol=TOL, max_iter=MAX_ITER, random_state=0
        ).fit(X_mu, y_mu),
    }
    times = {}
    for name, run in runs.items():
        samples = []
        for _ in range(repeats):
            start = time.perf_counter()
            model = run()
            samples.append(time.perf_counter() - start)
        times[name] = (float(np.median(samples)), model)
    return times, len(y_lab), len(X_u)


SWEEP = ((200, 100, 4), (60, 30, 3))  # labelled trials, universum trials, classes
SWEEP_FEATURES = (4, 8, 16, 32, 64, 128)


def solver_sweep(repeats: int = 3):
    """Median fit times (s) and passes of the MU-SVM with each solver on synthetic problems."""
    rows = []
    for n_lab, m, n_classes in SWEEP:
        for d in SWEEP_FEATURES:
            rng = np.random.default_rng(d)
            y = rng.integers(0, n_classes, n_lab)
            X = rng.normal(size=(n_lab, d)) + 2.0 * np.eye(d)[y % d]
            X = np.vstack([X, rng.normal(size=(m, d))])
            y = np.concatenate([y, np.full(m, UNIVERSUM)])
            cells = []
            for solver in ("cd", "ipm"):
                samples = []
                for _ in range(repeats):
                    model = MulticlassUniversumSVC(delta=0.1, max_iter=MAX_ITER, solver=solver)
                    start = time.perf_counter()
                    model.fit(X, y)
                    samples.append(time.perf_counter() - start)
                cells.append((float(np.median(samples)), model.n_iter_, model.objective_))
            auto = MulticlassUniversumSVC(delta=0.1).fit(X, y).solver_
            rows.append((n_lab, m, n_classes, d, cells, auto))
    return rows


def write_markdown(header: str, path: Path, rows, times, n_lab, n_u, n_splits, sweep):
    ref = rows[1][1]
    lines = [
        "# Multiclass universum learning on load_digits",
        "",
        header,
        "",
        f"Classes 0–3, {N_TRAIN} training digits per class, {N_TEST} test digits per class, "
        f"{N_UNIVERSUM} universum digits, linear kernel, {n_splits} random splits (seeds "
        f"0–{n_splits - 1}). Test error in % (mean ± SD over splits), paired difference to the "
        "Crammer–Singer LinearSVC row (mean ± SD), median fit time of one split (for the two "
        "selection rows: the whole search over 12 grid points).",
        "",
        "| model | test error % | Δ vs LinearSVC C&S (points) | fit time (ms) |",
        "|---|---|---|---|",
    ]
    for name, err, sec, _ in rows:
        diff = 100 * (err - ref)
        lines.append(
            f"| {name} | {100 * err.mean():.2f} ± {100 * err.std():.2f} | "
            f"{diff.mean():+.2f} ± {diff.std():.2f} | {1000 * sec:.1f} |"
        )
    lines += ["", "Grid points chosen per split (C, Δ):", ""]
    for name, _, _, chosen in rows:
        if chosen:
            picks = ", ".join(f"({dict(c)['C']:g}, {dict(c)['delta']:g})" for c in chosen)
            lines.append(f"* {name}: {picks}")
    base = times["LinearSVC crammer_singer (liblinear)"][0]
    lines += [
        "",
        f"## Solver fit time: {n_lab} labelled digits 0–7 (d = 64), universum {n_u} digits 8–9",
        "",
        f"tol = {TOL:g} for both solvers, C = 1, no intercept, median of 5 fits; passes over "
        "the (augmented) trials in the last column.",
        "",
        "| fit | time (ms) | ratio to LinearSVC | passes |",
        "|---|---|---|---|",
    ]
    for name, (sec, model) in times.items():
        n_iter = int(np.max(model.n_iter_))
        lines.append(f"| {name} | {1000 * sec:.1f} | {sec / base:.2f} | {n_iter} |")
    lines += [
        "",
        "## MU-SVM solvers by shape (synthetic, linear kernel, Δ = 0.1, C* auto)",
        "",
        "Median of 3 fits at the default tol; passes from zero (`cd`) and after the interior "
        "point (`ipm`); the relative difference of the two objectives; what `solver='auto'` "
        "picks.",
        "",
        "| labelled | universum | classes | features | cd ms (passes) | ipm ms (passes) | "
        "cd / ipm time | objective rel. diff. | auto |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for n_lab, m, n_classes, d, ((t_cd, it_cd, o_cd), (t_ip, it_ip, o_ip)), auto in sweep:
        lines.append(
            f"| {n_lab} | {m} | {n_classes} | {d} | {1000 * t_cd:.1f} ({it_cd}) | "
            f"{1000 * t_ip:.1f} ({it_ip}) | {t_cd / t_ip:.2f} | "
            f"{abs(o_cd - o_ip) / abs(o_ip):.1e} | {auto} |"
        )
    write_results(path, lines)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--splits", type=positive_int, default=10)
    add_output_option(parser, "multiclass_digits.md")
    args = parser.parse_args(argv)
    load = LoadAverage()
    digits = load_digits()
    X_all, y_all = digits.data / 16.0, digits.target
    warnings.simplefilter("ignore", ConvergenceWarning)
    # numba warm-up (compilation is not part of any timing)
    X, y, _, _ = split(X_all, y_all, 0, 8)
    MulticlassUniversumSVC().fit(X, y)
    ECOCUniversumClassifier(UniversumSVC(kernel="linear")).fit(X, y)
    rows = accuracy_study(X_all, y_all, args.splits)
    times, n_lab, n_u = timing_study(X_all, y_all)
    sweep = solver_sweep()
    load.sample()
    header = run_line(parser, args, libraries=[sklearn], load=load)
    write_markdown(header, args.output, rows, times, n_lab, n_u, args.splits, sweep)


if __name__ == "__main__":
    main()
