"""Per-fold cost of a universum fit against the plain fits it is compared with, in one run.

The decoder study times every job, but its jobs run pipeline after pipeline, minutes or hours
apart on a shared machine; here the fits of one within-session fold (the study's first
10 × 5-fold repeat, its ``DEFAULT_GRID`` and inner 5-fold selection) run back to back, fold
after fold, so that every ratio compares fits under the same load. Each universum fit
(``U_C3``: the recorded rest/idle trials) is compared with two plain fits:

* the study's plain fit: what the universum pipeline is compared with in the study
  (``ts_ulr + none``: the same pipeline, whose grid has only ``C``; ``ts_lr``: pyRiemann-style
  TS + LR, grid over ``C``; ``csp_lda``: MNE-style CSP + LDA, no parameter, hence *no inner
  model selection at all*);
* the same selection without universum: the same pipeline, the same grid and inner folds,
  on the labelled trials only (for the LDA every ``C_universum`` is then the same model, but
  the selection does the same work), i.e. what the universum itself costs.

Wall-clock seconds are the study's ``fit_time``. On shared cores a fit of a few hundredths
of a second is preempted more or less by chance, so the process's CPU seconds of each job
(its fit and the scoring of its test trials, a few milliseconds) are reported beside them.

Run from the repository root (the real recordings must be present)::

    python benchmarks/bench_universum_fit.py [--subjects tomer assaf S001] [--folds 5]
"""

from __future__ import annotations

import argparse
import time
from dataclasses import replace

import numpy as np
from report import LoadAverage, add_output_option, run_line, write_results
from study_decoder import BAND, SUBJECTS, WINDOW, load

from bci_universum.evaluation import WithinSession, plan_jobs
from bci_universum.evaluation.jobs import run_job
from bci_universum.pipelines import pipeline_factory
from bci_universum.training import DEFAULT_GRID
from paradigms.commands._types import int_range

# universum pipeline → the study's plain fit (pipeline, universum)
PAIRS = {
    "ts_ulr": ("ts_ulr", "none"),
    "ts_ulda": ("ts_lr", "none"),
    "csp_ulda": ("csp_lda", "none"),
}
SAME = "same selection, no universum"


def _jobs(subject: str, epochs, pipeline: str, universum: str, n_folds: int) -> tuple:
    factory = pipeline_factory(pipeline, window=WINDOW[subject], band=BAND)
    protocol = WithinSession(5, 5, dict(DEFAULT_GRID), n_repeats=1)
    return factory, plan_jobs([epochs], {pipeline: factory}, [universum], protocol)[:n_folds]


def time_subject(subject: str, n_folds: int) -> list[dict]:
    """Fit seconds (selection and refit, as the study's ``fit_time``) per fold and fit."""
    epochs = load(subject)
    fits = {}
    for pipeline, plain in PAIRS.items():
        factory, with_u = _jobs(subject, epochs, pipeline, "U_C3", n_folds)
        fits[(pipeline, "U_C3")] = (factory, with_u)
        fits[plain] = _jobs(subject, epochs, *plain, n_folds)
        # the universum job's grid on the labelled trials only
        _, labelled = _jobs(subject, epochs, pipeline, "none", n_folds)
        same = [replace(j, param_grid=u.param_grid) for j, u in zip(labelled, with_u, strict=True)]
        fits[(pipeline, SAME)] = (factory, same)
    for factory, jobs in fits.values():  # warm-up: compiled code, imports
        run_job(jobs[0], epochs, factory)
    rows = []
    for fold in range(n_folds):
        for (pipeline, universum), (factory, jobs) in fits.items():
            cpu = time.process_time()
            row = run_job(jobs[fold], epochs, factory)[0]
            cpu = time.process_time() - cpu
            rows.append({"subject": subject, "fold": fold, "fit": (pipeline, universum),
                         "seconds": row["fit_time"], "cpu": cpu, "cap_hits": row["n_cap_hits"],
                         "grid": len(jobs[fold].param_grid)})  # fmt: skip
            print(subject, fold, pipeline, universum, f"{row['fit_time']:.3f} s",
                  f"(CPU {cpu:.3f} s)", flush=True)  # fmt: skip
    return rows


def _grid(rows, fit) -> str:
    sizes = {r["grid"] for r in rows if r["fit"] == fit}
    return "none" if sizes == {0} else "inner 5-fold"


def table(rows: list[dict]) -> list[str]:
    lines = ["| subject | universum fit | compared with | selection | folds | median s (U / "
             "plain) | median ratio | max ratio | CPU: median s (U / plain) | CPU: median "
             "ratio | CPU: max ratio | cap hits (U / plain) |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|"]  # fmt: skip
    for subject in dict.fromkeys(r["subject"] for r in rows):
        mine = [r for r in rows if r["subject"] == subject]
        caps = {(r["fold"], r["fit"]): r["cap_hits"] for r in mine}
        folds = sorted({r["fold"] for r in mine})
        for pipeline, plain in PAIRS.items():
            u = (pipeline, "U_C3")
            for ref in (plain, (pipeline, SAME)):
                cells = []
                for clock in ("seconds", "cpu"):
                    times = {(r["fold"], r["fit"]): r[clock] for r in mine}
                    t_u = np.array([times[(f, u)] for f in folds])
                    t_p = np.array([times[(f, ref)] for f in folds])
                    ratio = t_u / t_p
                    cells.append(
                        f"{np.median(t_u):.2f} / {np.median(t_p):.2f} | "
                        f"{np.median(ratio):.2f} | {ratio.max():.2f}"
                    )
                hits = [sum(caps[(f, fit)] > 0 for f in folds) for fit in (u, ref)]
                lines.append(
                    f"| {subject} | {' + '.join(u)} | {' + '.join(ref)} | {_grid(mine, ref)} | "
                    f"{len(folds)} | {cells[0]} | {cells[1]} | {hits[0]} / {hits[1]} |"
                )
    return lines


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--subjects", nargs="+", choices=SUBJECTS, default=["tomer", "assaf"])
    parser.add_argument("--folds", type=int_range(2), default=5)
    add_output_option(parser, "universum_fit.md")
    args = parser.parse_args(argv)
    load = LoadAverage()
    rows = [r for s in args.subjects for r in time_subject(s, args.folds)]
    load.sample()
    text = [
        "# Per-fold cost of the universum fits",
        "",
        run_line(parser, args, load=load),
        "",
        "Seconds of one fit (inner model selection over the study's `DEFAULT_GRID` and refit) "
        "on the same within-session fold, fits interleaved fold by fold; CPU: the process's "
        "CPU seconds of the job (the fit and the scoring of the test trials), which preemption "
        "on the shared cores does not count. Compared with: the "
        "study's plain fit (`csp_lda` has no parameter, so it does no inner selection: the "
        "universum fit's 5 inner folds and its refit share their trials' CSP statistics, "
        "computed once, and the refit fits only the LDA on the shared features), and the "
        f"same pipeline and selection on the labelled trials only ({SAME}).",
        "",
        *table(rows),
        "",
    ]
    write_results(args.output, text)


if __name__ == "__main__":
    main()
