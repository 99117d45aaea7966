"""Session transfer by biased regularisation on eegmmidb S001: learning curves and fit times.

Writes ``benchmarks/results/biased_transfer.md``. Needs the real-data folder.
Run from the repository root: ``PYTHONPATH=. python benchmarks/bench_biased_transfer.py``.
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import sklearn
from report import LoadAverage, add_output_option, run_line, write_results
from sklearn.frozen import FrozenEstimator
from sklearn.svm import SVC
from threadpoolctl import threadpool_limits

from bci_universum.classifiers import BiasedSVC
from bci_universum.datasets import data_path
from bci_universum.studies import biased_transfer as bt
from paradigms.commands._types import non_negative_float, positive_int


def _curve_table(result: bt.TransferResult) -> list[str]:
    lines = [
        "| trials per class | " + " | ".join(bt.METHODS) + " |",
        "|---|" + "---|" * len(bt.METHODS),
    ]
    for s, size in enumerate(result.sizes):
        cells = [f"{result.mean(m)[s]:.3f} ± {result.sem(m)[s]:.3f}" for m in bt.METHODS]
        lines.append(f"| {size} | " + " | ".join(cells) + " |")
    return lines


def _time_table(result: bt.TransferResult) -> list[str]:
    lines = [
        "| trials per class | " + " | ".join(f"{t} (ms)" for t in bt.TIMED) + " |",
        "|---|" + "---|" * len(bt.TIMED),
    ]
    for s, size in enumerate(result.sizes):
        cells = [f"{1e3 * result.fit_seconds[t][s]:.2f}" for t in bt.TIMED]
        lines.append(f"| {size} | " + " | ".join(cells) + " |")
    return lines


def _median_fit_seconds(make, X, y, repeats: int = 3) -> float:
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        make().fit(X, y)
        times.append(time.perf_counter() - start)
    return float(np.median(times))


def _fit_time_scaling(sizes=(200, 1000, 2000), n_features: int = 50) -> list[str]:
    """BiasedSVC vs SVC fit time on larger synthetic problems (the study's are tiny)."""
    rng = np.random.default_rng(0)
    w = rng.normal(size=n_features)
    X_old = rng.normal(size=(500, n_features))
    prior = FrozenEstimator(SVC(kernel="linear").fit(X_old, X_old @ w > 0))
    lines = [
        "| trials | features | SVC (s) | BiasedSVC, prior estimator (s) | ratio |",
        "|---|---|---|---|---|",
    ]
    for n in sizes:
        X = rng.normal(size=(n, n_features))
        y = X @ (w + 0.5 * rng.normal(size=n_features)) + rng.normal(size=n) > 0
        svc = _median_fit_seconds(lambda: SVC(kernel="linear"), X, y)
        biased = _median_fit_seconds(lambda: BiasedSVC(prior=prior, kernel="linear"), X, y)
        lines.append(f"| {n} | {n_features} | {svc:.3f} | {biased:.3f} | {biased / svc:.2f} |")
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument(
        "--draws", type=positive_int, default=10, help="random draws per size and run"
    )
    parser.add_argument(
        "--prior-weight", type=non_negative_float, default=1.0, help="λ of BiasedSVC"
    )
    add_output_option(parser, "biased_transfer.md")
    args = parser.parse_args()

    load = LoadAverage()
    start = time.perf_counter()
    data = bt.load_imagery_runs(data_path(required=True))
    with threadpool_limits(1):  # small matrices: threads only add contention
        results = {
            name: bt.run_transfer_study(
                data, n_draws=args.draws, features=name, prior_weight=args.prior_weight
            )
            for name in ("ts", "csp")
        }
        scaling = _fit_time_scaling()
    elapsed = time.perf_counter() - start
    load.sample()
    n_draws_total = len(data) * args.draws
    lines = [
        "# Biased regularisation: session transfer on eegmmidb S001",
        "",
        run_line(
            parser, args, libraries=[sklearn], load=load, note=f"{elapsed:.0f} s of wall time"
        ),
        "",
        "Imagined left vs right fist, runs R04/R08/R12 (15 trials each, 7–8 per class), "
        "8–30 Hz, 0.5–2.5 s after the cue, 64 channels, single-threaded BLAS. Each run is the new "
        "session in turn; the prior is the registry pipeline `ts_svm` or `csp_svm` (features "
        "+ linear SVC, C = 1; CSP features scaled on the labelled trials) fitted on the other "
        "two runs, the biased models `with_prior` of `ts_usvm` / `csp_usvm`. n trials per "
        "class are drawn from the new run for training, the rest of the run "
        f"is the test set; {n_draws_total} draws per size (3 runs × {args.draws}). Test accuracy "
        "mean ± standard error over the draws (draws share test trials, so the errors are "
        "optimistic). `biased` = new features + the prior's score → `BiasedSVC(prior="
        f"'last_column', prior_weight={args.prior_weight}, kernel='linear', C=1, "
        "fit_intercept=False)`; `biased + offset` = the same with `fit_intercept=True`; "
        "`pooled` = "
        "features + SVC on the other runs and the n new trials.",
        "",
    ]
    titles = {"ts": "Tangent space (OAS, Riemannian mean)", "csp": "CSP (4 components)"}
    for name, result in results.items():
        lines += [f"## {titles[name]}", "", *_curve_table(result), ""]
        lines += [
            "Median fit time: whole pipelines (the biased one also runs the prior on the "
            "training trials) and the classifier step alone on the same features "
            "(`sklearn.svm.SVC(kernel='linear')` vs `BiasedSVC(fit_intercept=True)`).",
            "",
            *_time_table(result),
            "",
        ]
    lines += [
        "## Fit time on larger problems",
        "",
        "The study's problems have 2–12 trials (step times above). Median "
        "of 3 fits on synthetic data (two overlapping Gaussian classes, linear kernel, C = 1), "
        "`SVC` = `sklearn.svm.SVC(kernel='linear')` (libsvm), `BiasedSVC` with a fitted prior "
        "estimator (its `decision_function` on the training trials is included).",
        "",
        *scaling,
        "",
    ]
    write_results(args.output, lines)


if __name__ == "__main__":
    main()
