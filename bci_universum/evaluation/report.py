"""Reports of :func:`~bci_universum.evaluation.evaluate`: tidy CSV, thesis-style tables, plots.

The Markdown table mirrors Tables 3.6–3.7 of the thesis (``universum-svm.md`` §16.7): one row per
pipeline and universum, one column per subject, mean ± standard deviation over splits, and a
significance mark against the same pipeline without universum (paired per split):

* ``*`` — corrected resampled t-test (Nadeau & Bengio) p < alpha;
* ``†`` — only the plain paired t-test p < alpha (it ignores the overlap of training folds
  and is too liberal; shown to make that visible).
"""

from __future__ import annotations

import csv
import os
from collections.abc import Iterable, Sequence
from pathlib import Path

import numpy as np

from .statistics import _CURVE, _cells, compare_to_baseline, compare_to_pipeline, tests_table

__all__ = [
    "COLUMNS",
    "plot_learning_curve",
    "plot_scores",
    "read_csv",
    "results_table",
    "write_csv",
    "write_report",
]

COLUMNS = (
    "dataset", "subject", "session", "pipeline", "universum", "protocol", "split",
    "n_train", "n_test", "n_universum", "metric", "score", "fit_time", "n_cap_hits", "params",
    "key",
)  # fmt: skip

_TEST_COLUMNS = (
    "dataset", "protocol", "n_train", "subject", "pipeline", "universum", "reference_pipeline",
    "reference_universum", "n_pairs", "mean_difference", "t_corrected", "p_corrected",
    "t_plain", "p_plain",
)  # fmt: skip

_INT = ("n_train", "n_test", "n_universum")

_FLOAT = ("score", "fit_time")


def write_csv(rows: Iterable[dict], path: str | os.PathLike) -> Path:
    """Write result rows as a tidy CSV (columns :data:`COLUMNS`)."""
    path = Path(path)
    with path.open("w", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=COLUMNS, restval="", extrasaction="ignore")
        writer.writeheader()
        writer.writerows(rows)
    return path


def read_csv(path: str | os.PathLike) -> list[dict]:
    """Read rows written by :func:`write_csv` (numbers converted back)."""
    with Path(path).open(newline="") as fh:
        rows = list(csv.DictReader(fh))
    for row in rows:
        row.update({k: int(row[k]) for k in _INT})
        row.update({k: float(row[k]) for k in _FLOAT})
        # Rows cached before the cap count was recorded have none.
        row["n_cap_hits"] = int(row["n_cap_hits"]) if row.get("n_cap_hits") else None
    return rows


def _ordered(values: Iterable[str], first: str | None = None) -> list[str]:
    seen = list(dict.fromkeys(values))
    return ([first] if first in seen else []) + [v for v in seen if v != first]


def results_table(
    rows: Sequence[dict], metric: str = "accuracy", baseline: str = "none", alpha: float = 0.05
) -> str:
    """Markdown tables shaped like thesis Tables 3.6–3.7, one per data set and protocol.

    Cells are ``mean ± sd`` of the score × 100 over the splits (and sessions) of a subject.
    """
    rows = list(rows)
    cells = _cells(rows, metric)
    tests = {
        (c["dataset"], c["protocol"], c["n_train"], c["subject"], c["pipeline"], c["universum"]): c
        for c in compare_to_baseline(rows, metric, baseline)
    }
    blocks = []
    for dataset, protocol, level in dict.fromkeys(k[:3] for k in cells):
        keys = [k for k in cells if k[:3] == (dataset, protocol, level)]
        subjects = _ordered(k[3] for k in keys)
        size = "" if level is None else f", {level} labelled training trials"
        lines = [
            f"### {dataset}: {protocol}{size}: {metric} × 100 (mean ± sd over splits)",
            "",
            "| Pipeline | Universum | " + " | ".join(subjects) + " |",
            "|---|---|" + "---|" * len(subjects),
        ]
        for pipeline in _ordered(k[4] for k in keys):
            for universum in _ordered((k[5] for k in keys if k[4] == pipeline), baseline):
                cols = []
                for subject in subjects:
                    key = (dataset, protocol, level, subject, pipeline, universum)
                    if key not in cells:
                        cols.append("—")
                        continue
                    scores = 100 * np.array([r["score"] for r in cells[key].values()])
                    sd = scores.std(ddof=1) if scores.size > 1 else 0.0
                    test = tests.get(key)
                    mark = ""
                    if test is not None and test["p_corrected"] < alpha:
                        mark = "*"
                    elif test is not None and test["p_plain"] < alpha:
                        mark = "†"
                    cols.append(f"{scores.mean():.2f} ± {sd:.2f}{mark}")
                lines.append(f"| {pipeline} | {universum} | " + " | ".join(cols) + " |")
        blocks.append("\n".join(lines))
    legend = (
        f"`*`: corrected resampled t-test (Nadeau–Bengio) against universum `{baseline}` of the "
        f"same pipeline, p < {alpha}; `†`: only the plain paired t-test is significant "
        "(too liberal with overlapping training folds)."
    )
    return "\n\n".join([*blocks, legend]) + "\n"


def _figure(n_panels: int, width: float = 4.0):
    import matplotlib

    matplotlib.use("Agg", force=False)
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(
        1, n_panels, figsize=(width * n_panels, 3.6), squeeze=False, sharey=True
    )
    return fig, axes[0]


def plot_scores(rows: Sequence[dict], path: str | os.PathLike, metric: str = "accuracy") -> Path:
    """Box plot of split scores: one panel per pipeline, one box per universum."""
    import matplotlib.pyplot as plt

    rows = [r for r in rows if r["metric"] == metric and r["protocol"] != _CURVE]
    if not rows:
        raise ValueError(f"no non-learning-curve rows for metric {metric!r} to plot.")
    pipelines = _ordered(r["pipeline"] for r in rows)
    fig, axes = _figure(len(pipelines))
    for ax, pipeline in zip(axes, pipelines, strict=True):
        universa = _ordered((r["universum"] for r in rows if r["pipeline"] == pipeline), "none")
        data = [
            [r["score"] for r in rows if r["pipeline"] == pipeline and r["universum"] == u]
            for u in universa
        ]
        ax.boxplot(data)
        ax.set_xticks(range(1, len(universa) + 1), universa, rotation=30)
        ax.set_title(pipeline)
    axes[0].set_ylabel(metric)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return Path(path)


def plot_learning_curve(
    rows: Sequence[dict], path: str | os.PathLike, metric: str = "accuracy"
) -> Path:
    """Mean score ± standard error against labelled training trials, per pipeline/universum."""
    import matplotlib.pyplot as plt

    rows = [r for r in rows if r["metric"] == metric and r["protocol"] == _CURVE]
    if not rows:
        raise ValueError(f"no learning-curve rows for metric {metric!r} to plot.")
    datasets = _ordered(r["dataset"] for r in rows)
    fig, axes = _figure(len(datasets), width=5.0)
    for ax, dataset in zip(axes, datasets, strict=True):
        sub = [r for r in rows if r["dataset"] == dataset]
        for line in dict.fromkeys((r["pipeline"], r["universum"]) for r in sub):
            sizes = sorted({r["n_train"] for r in sub if (r["pipeline"], r["universum"]) == line})
            scores = [
                np.array([r["score"] for r in sub
                          if (r["pipeline"], r["universum"]) == line and r["n_train"] == n])
                for n in sizes
            ]  # fmt: skip
            mean = np.array([s.mean() for s in scores])
            sem = np.array([s.std(ddof=1) / np.sqrt(s.size) if s.size > 1 else 0 for s in scores])
            ax.errorbar(sizes, mean, yerr=sem, marker="o", capsize=3, label=" + ".join(line))
        ax.set_xlabel("labelled training trials")
        ax.set_title(dataset)
        ax.legend(fontsize="small")
    axes[0].set_ylabel(metric)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return Path(path)


def write_report(
    rows: Sequence[dict],
    out_dir: str | os.PathLike,
    *,
    metric: str = "accuracy",
    baseline: str = "none",
    alpha: float = 0.05,
    stem: str = "results",
    reference: tuple[str, str] | None = None,
) -> dict[str, Path]:
    """Write ``<stem>.csv``, ``<stem>.md``, ``<stem>_tests.csv`` and the plots into ``out_dir``.

    The Markdown file holds the thesis-style tables and a table of every paired test: each
    universum against ``baseline`` of the same pipeline, and, with ``reference`` (a
    ``(pipeline, universum)`` pair), every variant against that reference.

    Returns
    -------
    paths : dict
        ``csv``, ``markdown``, ``tests``, and ``boxplot`` and/or ``learning_curve`` (when such
        rows exist).
    """
    rows = list(rows)
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    paths = {"csv": write_csv(rows, out / f"{stem}.csv")}
    tests = compare_to_baseline(rows, metric, baseline)
    if reference is not None:
        tests += compare_to_pipeline(rows, reference, metric)
    paths["tests"] = out / f"{stem}_tests.csv"
    with paths["tests"].open("w", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=_TEST_COLUMNS)
        writer.writeheader()
        writer.writerows(tests)
    md = out / f"{stem}.md"
    text = results_table(rows, metric, baseline, alpha)
    if tests:
        text += f"\n### Paired tests ({metric})\n\n" + tests_table(tests)
    md.write_text(text)
    paths["markdown"] = md
    if any(r["protocol"] != _CURVE for r in rows):
        paths["boxplot"] = plot_scores(rows, out / f"{stem}_{metric}_boxplot.png", metric)
    if any(r["protocol"] == _CURVE for r in rows):
        paths["learning_curve"] = plot_learning_curve(
            rows, out / f"{stem}_{metric}_learning_curve.png", metric
        )
    return paths
