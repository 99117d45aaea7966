"""Bayes point machine vs hard-margin SVC (Table 1 stand-ins, rejection curve, fit time) and
the drift monitor's cost, in one run. Writes ``benchmarks/results/bpm.md``.

Run from the repository root: ``python benchmarks/bench_bpm.py [--splits 10]``.
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import scipy
import sklearn
from report import LoadAverage, add_output_option, run_line, write_results
from scipy import stats

from bci_universum.drift import DriftMonitor
from bci_universum.studies import bpm_table1 as t1
from paradigms.commands._types import positive_int


def _drift_costs(rng: np.random.Generator) -> dict:
    """Fit and per-window costs of the drift monitor (33 features, like 11 channels × 3 bands),
    against a per-feature two-sample Kolmogorov–Smirnov test, the check a user might write."""
    calibration = rng.standard_normal((124, 33))
    window = rng.standard_normal((30, 33))
    start = time.perf_counter()
    monitor = DriftMonitor(random_state=0).fit(calibration)
    fit_s = time.perf_counter() - start
    repeats = 200
    start = time.perf_counter()
    for _ in range(repeats):
        monitor.score(window)
    score_s = (time.perf_counter() - start) / repeats
    start = time.perf_counter()
    for _ in range(repeats):
        stats.ks_2samp(calibration, window, axis=0)
    ks_s = (time.perf_counter() - start) / repeats
    return {"fit_s": fit_s, "score_s": score_s, "ks_s": ks_s}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument(
        "--splits", type=positive_int, default=10, help="random 60:40 splits per dataset"
    )
    add_output_option(parser, "bpm.md")
    args = parser.parse_args()

    load = LoadAverage()
    start = time.perf_counter()
    results = t1.run_table1(n_splits=args.splits, random_state=0)
    elapsed = time.perf_counter() - start
    summaries = {name: t1.summarise(result) for name, result in results.items()}
    pooled_curve = np.mean([s["rejection"] for s in summaries.values()], axis=0)
    drift = _drift_costs(np.random.default_rng(0))
    load.sample()

    lines = [
        "# Bayes point machine vs hard-margin SVC, and drift-monitor cost",
        "",
        run_line(
            parser,
            args,
            libraries=[sklearn, scipy],
            load=load,
            note=f"Table 1 in {elapsed:.0f} s of wall time",
        ),
        "",
        "## Table 1 on stand-in datasets (NOT the paper's UCI sets)",
        "",
        "Test error % (mean ± standard error over random 60 %:40 % splits), RBF "
        "`exp(−‖x−x'‖²/(2σ²))`, standardised features, hard margins (λ = 0). SVM = "
        "`sklearn.svm.SVC(C=1e6)` (with bias); BPM = `BayesPointMachine(softness=0, "
        "tol=1e-3, max_bounces=60000)` (kernel billiard, no bias); perceptron avg = "
        "100 permutations. `1 − p`: one-sided paired t-test that the BPM error is lower. "
        "Margins: geometric training margin of the normalised weight vector. Fit-time ratio: "
        "median BPM (billiard) fit time / median SVC fit time.",
        "",
        t1.markdown_table(results),
        "",
        "| stand-in | what it is |",
        "|---|---|",
        *(f"| {name} | {t1.STAND_INS[name].description} |" for name in results),
        "",
        "## Rejection curve (BPM, billiard)",
        "",
        "Test error % on the kept trials after rejecting the least confident fraction "
        "(smallest normalised output |f(x)|), averaged over splits.",
        "",
        "| rejected | " + " | ".join(f"{r:.0%}" for r in t1.REJECT_FRACTIONS) + " |",
        "|---|" + "---|" * len(t1.REJECT_FRACTIONS),
        *(
            f"| {name} | " + " | ".join(f"{e:.2f}" for e in s["rejection"]) + " |"
            for name, s in summaries.items()
        ),
        "| mean of the stand-ins | " + " | ".join(f"{e:.2f}" for e in pooled_curve) + " |",
        "",
        "## Drift monitor cost",
        "",
        "124 calibration vectors × 33 features, windows of 30, 8 clusters, 50 resamples "
        "(the settings of the eegmmidb test).",
        "",
        "| step | time | ratio to `scipy.stats.ks_2samp` on all 33 features |",
        "|---|---|---|",
        f"| fit (codebook + 50 reference resamples) | {drift['fit_s']:.2f} s | — |",
        f"| score one window | {1e3 * drift['score_s']:.3f} ms | "
        f"{drift['score_s'] / drift['ks_s']:.2f} |",
        f"| per-feature KS test, one window | {1e3 * drift['ks_s']:.3f} ms | 1 |",
        "",
    ]
    write_results(args.output, lines)


if __name__ == "__main__":
    main()
