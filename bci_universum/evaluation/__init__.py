"""Offline evaluation: protocols, universa by name, cached jobs on serial/joblib/Dask, reports.

An evaluation crosses data sets (one :class:`~bci_universum.datasets.EpochSet` per
subject and data set, or one per causal filter band), pipelines (registry name → factory,
:class:`~bci_universum.pipelines.PipelineFactory`), universa (by name) and a protocol. Each
(split, pipeline, universum) is one job, fitted by the one training path
(:func:`bci_universum.training.select_and_fit`) on epochs filtered as the online decoder
filters them, so a score describes the decoder ``train`` deploys.

=====================  ======================================================================
module                 holds
=====================  ======================================================================
:mod:`.protocols`      :class:`WithinSession`, :class:`CrossGroup`, :class:`LearningCurve`
:mod:`.jobs`           universa by name, planning (:func:`plan_jobs`), one job
                       (:func:`run_job`), the job cache
:mod:`.backends`       serial, joblib and Dask runners and :func:`evaluate`
:mod:`.statistics`     paired tests against a baseline universum or a reference pipeline
:mod:`.report`         tidy CSV, thesis-style Markdown tables, plots (:func:`write_report`,
                       drawn by :mod:`bci_universum.viz`)
=====================  ======================================================================
"""

from ..training import UNIVERSUM_PARAMETERS, resolve_grid, select_and_fit
from ..viz import plot_learning_curve, plot_paired, plot_scores
from .backends import BACKENDS, evaluate
from .jobs import (
    METRICS,
    UNIVERSA,
    Job,
    accepts_universum,
    check_classes,
    check_universa,
    parse_universum,
    plan_jobs,
    run_job,
    with_universum,
)
from .protocols import THESIS_GRID, CrossGroup, LearningCurve, Split, WithinSession, derive_seed
from .report import (
    COLUMNS,
    paired_comparisons,
    read_csv,
    results_table,
    write_csv,
    write_report,
)
from .statistics import compare_to_baseline, compare_to_pipeline, tests_table

__all__ = [
    "BACKENDS",
    "COLUMNS",
    "METRICS",
    "THESIS_GRID",
    "UNIVERSA",
    "UNIVERSUM_PARAMETERS",
    "CrossGroup",
    "Job",
    "LearningCurve",
    "Split",
    "WithinSession",
    "accepts_universum",
    "check_classes",
    "check_universa",
    "compare_to_baseline",
    "compare_to_pipeline",
    "derive_seed",
    "evaluate",
    "paired_comparisons",
    "parse_universum",
    "plan_jobs",
    "plot_learning_curve",
    "plot_paired",
    "plot_scores",
    "read_csv",
    "resolve_grid",
    "results_table",
    "run_job",
    "select_and_fit",
    "tests_table",
    "with_universum",
    "write_csv",
    "write_report",
]
