"""Spike decoding study (thesis §3.3.2, Tables 3.9–3.11) on the V1 simulator and on M1 reaches.

Every kernel (RBF on counts, joint-population spikernel, alignment scores) × classifier (SVM,
LS-SVM, U-SVM, LS-U-SVM, U_c-SVM; one-vs-one ECOC, the universum variants with the remaining
classes as universum) × decoder (d_L1, d_ham, d_hin), nested CV with 10 outer splits and a
3-fold inner selection (:func:`bci_universum.studies.spike_decoding.run_spike_decoding`, default
grids). The M1 data are subsampled to 30 windows per direction sector (240, the thesis' size).

Writes ``benchmarks/results/spike_decoding.md``. Run from the repository root::

    PYTHONPATH=. nice python benchmarks/study_spike_decoding.py [--output PATH]
"""

from __future__ import annotations

import argparse
import time

import numpy as np
from report import LoadAverage, add_output_option, run_line, write_results
from scipy.stats import ttest_rel

from bci_universum.datasets import data_path
from bci_universum.studies.spike_decoding import (
    DECODER_NAMES,
    decode_m1_reaching,
    decode_simulated_v1,
    default_estimators,
    default_kernels,
    results_to_markdown,
)

M1_PER_SECTOR = 30
#: Each universum classifier and the classifier it reduces to without a universum.
BASELINE = {"U-SVM": "SVM", "U_c-SVM": "SVM", "LS-U-SVM": "LS-SVM"}


def universum_use(results) -> list[str]:
    """Lines: how often the inner CV chose C_U > 0, and paired t-tests against the baseline."""
    by_key = {(r["kernel"], r["estimator"], r["decoder"]): r for r in results}
    lines = [
        "| kernel | classifier | decoder | C_U > 0 chosen (of 10 splits) | "
        "Δℓ_0-1 vs baseline (pp) | paired t-test p |",
        "|---|---|---|---|---|---|",
    ]
    for (kernel, estimator, decoder), row in by_key.items():
        if estimator not in BASELINE:
            continue
        base = by_key[kernel, BASELINE[estimator], decoder]
        n_universum = sum(s["C_universum"] > 0 for s in row["selected"])
        diff = row["zero_one"] - base["zero_one"]
        p = ttest_rel(row["zero_one"], base["zero_one"]).pvalue if np.any(diff) else 1.0
        lines.append(
            f"| {kernel} | {estimator} vs {BASELINE[estimator]} | {DECODER_NAMES[decoder]} "
            f"| {n_universum} | {diff.mean():+.2f} | {p:.2f} |"
        )
    return lines


def timed(function, **kwargs):
    wall, cpu = time.perf_counter(), time.process_time()
    results = function(**kwargs)
    return results, time.perf_counter() - wall, time.process_time() - cpu


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_output_option(parser, "spike_decoding.md")
    args = parser.parse_args(argv)
    load = LoadAverage()
    sections = []
    results, wall, cpu = timed(decode_simulated_v1, random_state=0)
    sections.append(("V1 simulator, 240 trials (8 orientations × 30, seed 0)", results, wall, cpu))
    if data_path() is not None:
        results, wall, cpu = timed(decode_m1_reaching, per_sector=M1_PER_SECTOR, random_state=0)
        sections.append(
            (
                f"M1 reaching (Stevenson 2011), {8 * M1_PER_SECTOR} windows "
                f"({M1_PER_SECTOR} per 45° sector drawn with seed 0, of 570), 171 neurons",
                results,
                wall,
                cpu,
            )
        )
    load.sample()
    kernels, estimators = default_kernels(), default_estimators()
    lines = [
        "# Spike decoding: thesis Tables 3.9–3.11 protocol",
        "",
        "One-vs-one ECOC (28 columns for 8 classes); U-SVM, LS-U-SVM and U_c-SVM use the six",
        "remaining classes of each pair as its universum, SVM and LS-SVM train each pair on its",
        "two classes only. Nested CV: 10 stratified outer splits (mean ± std, ddof 1, over them);",
        "inner 3-fold stratified CV selects kernel and classifier parameters by zero-one loss,",
        "separately for every decoder. Angular loss: orientation period 180° (V1), direction",
        "period 360° (M1, sector centres). Chance: 87.5 % error.",
        "",
        "Grids (reduced from the thesis' for the shared machine): C ∈ {1, 10, 100};",
        "C_U ∈ {0, 1, 10, 100} (0 = no universum, so the universum grids contain SVM / LS-SVM);",
        "ε (U-SVM) and ρ (U_c-SVM) ∈ {0.05, 0.5} (thesis: {0.01, 0.05, 0.1, 0.5});",
        f"kernel grids: {', '.join(f'{k} {len(s.grid)} settings' for k, s in kernels.items())}"
        " (see `default_kernels`): "
        + "; ".join(f"{k}: {s.grid}" for k, s in kernels.items())
        + ".",
        "Settings per kernel setting and inner fold: "
        + ", ".join(f"{name} {len(grid)}" for name, (_, grid) in estimators.items())
        + ". RBF and the cosine-normalised spikernel have k(x, x) = 1, where the U_c-SVM equals"
        " the U-SVM (its rows repeat the U-SVM's).",
        "",
        run_line(parser, args, libraries=[np], load=load),
        "",
    ]
    for title, results, wall, cpu in sections:
        lines += [
            f"## {title}",
            "",
            f"Run time: {wall / 60:.1f} min wall, {cpu / 60:.1f} min CPU.",
            "",
            results_to_markdown(results),
            "",
            "Universum use (the universum variant against its baseline, same outer splits):",
            "",
            *universum_use(results),
            "",
        ]
    write_results(args.output, lines)


if __name__ == "__main__":
    main()
