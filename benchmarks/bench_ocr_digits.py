"""OCR digits study (full setting, one run) and LS-U-SVM fit time against KernelRidge.

Writes ``benchmarks/results/ocr_digits.md``::

    PYTHONPATH=. python benchmarks/bench_ocr_digits.py [--n-jobs 2] [--seed 0]

(``PYTHONPATH=.`` only when the package is not installed.)

Part 1 is the study of :mod:`bci_universum.studies.ocr_digits` with its default (full) settings.
Part 2 times ``LeastSquaresUniversumSVC.fit`` against scikit-learn's ``KernelRidge``, the peer a
user would pick for a closed-form kernel least-squares classifier (same RBF kernel, same number of
training points; KernelRidge has no offset and no universum block), as time ratios in one run.
"""

from __future__ import annotations

import argparse
import time
from functools import partial

import numpy as np
import sklearn
from report import LoadAverage, add_output_option, run_line, write_results
from sklearn.kernel_ridge import KernelRidge
from threadpoolctl import threadpool_limits

from bci_universum import UNIVERSUM
from bci_universum.classifiers.ls_usvm import LeastSquaresUniversumSVC
from bci_universum.studies.ocr_digits import run_ocr_study
from paradigms.commands._types import n_jobs, non_negative_int


def _best_times(fits, repeats: int = 15) -> list[float]:
    """Best wall time of each callable, measured interleaved so both see the same load."""
    best = [np.inf] * len(fits)
    for _ in range(repeats):
        for i, fit in enumerate(fits):
            start = time.perf_counter()
            fit()
            best[i] = min(best[i], time.perf_counter() - start)
    return best


def fit_time_table(sizes=(100, 300, 1000, 2000), seed: int = 0) -> str:
    """Markdown table: fit times of LeastSquaresUniversumSVC and KernelRidge, and their ratio."""
    rng = np.random.default_rng(seed)
    lines = [
        "| n (labelled + universum) | LeastSquaresUniversumSVC fit [ms] | KernelRidge fit [ms] "
        "| ratio |",
        "|---|---|---|---|",
    ]
    for n in sizes:
        X = rng.normal(size=(n, 64))
        y = np.where(rng.random(n) < 0.5, 1, -1)
        y_u = y.copy()
        y_u[: n // 3] = UNIVERSUM
        gamma = 1.0 / 64
        ours = LeastSquaresUniversumSVC(C=10.0, C_universum=1.0, gamma=gamma)
        peer = KernelRidge(alpha=0.1, kernel="rbf", gamma=gamma)
        with threadpool_limits(limits=1):
            t_ours, t_peer = _best_times(
                [partial(ours.fit, X, y_u), partial(peer.fit, X, y.astype(float))]
            )
        lines.append(f"| {n} | {1e3 * t_ours:.2f} | {1e3 * t_peer:.2f} | {t_ours / t_peer:.2f} |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n-jobs", type=n_jobs, default=2)
    parser.add_argument("--seed", type=non_negative_int, default=0)
    add_output_option(parser, "ocr_digits.md")
    args = parser.parse_args()

    load = LoadAverage()
    start = time.perf_counter()
    study = run_ocr_study(quick=False, random_state=args.seed, n_jobs=args.n_jobs)
    study_seconds = time.perf_counter() - start
    timing = fit_time_table(seed=args.seed)
    load.sample()
    write_results(
        args.output,
        [
            "# OCR digits study and LS-U-SVM fit time",
            "",
            run_line(parser, args, libraries=[np, sklearn], load=load),
            "",
            study.replace("## OCR study", "## Part 1 - OCR study", 1).replace("### ", "#### "),
            f"Wall time of the full study: {study_seconds:.0f} s with n_jobs={args.n_jobs}.",
            "",
            "## Part 2 - fit time of LeastSquaresUniversumSVC vs scikit-learn KernelRidge",
            "",
            "RBF kernel, 64 features, a third of the points universum trials (for KernelRidge: "
            "all labelled); one BLAS thread; best of 15 interleaved fits; "
            "ratio = ours / KernelRidge (< 1: faster).",
            "",
            timing,
            "",
        ],
    )


if __name__ == "__main__":
    main()
