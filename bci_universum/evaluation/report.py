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

from ..viz import (
    _ordered,
    chance_level,
    plot_learning_curve,
    plot_paired,
    plot_scores,
    save_figure,
)
from .statistics import _CURVE, _cells, compare_to_baseline, compare_to_pipeline, tests_table

__all__ = [
    "COLUMNS",
    "PAIRED_PEERS",
    "paired_comparisons",
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


def results_table(
    rows: Sequence[dict], metric: str = "accuracy", baseline: str = "none", alpha: float = 0.05
) -> str:
    """Markdown tables shaped like thesis Tables 3.6–3.7, one per data set and protocol.

    Cells are ``mean ± sd`` of the score × 100 over the splits (and sessions) of a subject;
    the sd of a single split is ``n/a`` (undefined).
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
            f"### {f'{dataset}: ' if dataset else ''}{protocol}{size}: {metric} × 100 (mean ± sd "
            "over splits)",
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
                    # the sd of one split is undefined, not 0
                    sd = f"{scores.std(ddof=1):.2f}" if scores.size > 1 else "n/a"
                    test = tests.get(key)
                    mark = ""
                    if test is not None and test["p_corrected"] < alpha:
                        mark = "*"
                    elif test is not None and test["p_plain"] < alpha:
                        mark = "†"
                    cols.append(f"{scores.mean():.2f} ± {sd}{mark}")
                lines.append(f"| {pipeline} | {universum} | " + " | ".join(cols) + " |")
        blocks.append("\n".join(lines))
    legend = (
        f"`*`: corrected resampled t-test (Nadeau–Bengio) against universum `{baseline}` of the "
        f"same pipeline, p < {alpha}; `†`: only the plain paired t-test is significant "
        "(too liberal with overlapping training folds)."
    )
    return "\n\n".join([*blocks, legend]) + "\n"


PAIRED_PEERS = (("ts_lr", "none"), ("csp_lda", "none"))
"""The peers (pyRiemann tangent space + LR, MNE CSP + LDA) a paired plot compares the best
universum variant with, first present first, when no ``reference`` is given."""


def paired_comparisons(
    rows: Sequence[dict],
    metric: str = "accuracy",
    baseline: str = "none",
    reference: tuple[str, str] | None = None,
) -> dict[str, tuple[tuple[str, str], tuple[str, str]]]:
    """The ``(a, b)`` pairs a report draws paired plots of (``b`` on the y axis), by name.

    ``b`` is the best universum variant (highest mean ``metric`` over all splits of all
    subjects, learning curves left out); ``a`` is the same pipeline with universum
    ``baseline`` (``"baseline"``) and ``reference``, or else the first of :data:`PAIRED_PEERS`
    evaluated (``"peer"``). Pairs whose ``a`` was not evaluated are left out.
    """
    rows = [r for r in rows if r["metric"] == metric and r["protocol"] != _CURVE]
    scores: dict[tuple[str, str], list[float]] = {}
    for r in rows:
        scores.setdefault((r["pipeline"], r["universum"]), []).append(r["score"])
    variants = [v for v in scores if v[1] != baseline]
    if not variants:
        return {}
    best = max(variants, key=lambda v: np.mean(scores[v]))
    peers = [tuple(reference)] if reference is not None else list(PAIRED_PEERS)
    peer = next((p for p in peers if p in scores and p[0] != best[0]), None)
    against = {"baseline": (best[0], baseline), "peer": peer}
    return {name: (a, best) for name, a in against.items() if a in scores}


def write_report(
    rows: Sequence[dict],
    out_dir: str | os.PathLike,
    *,
    metric: str = "accuracy",
    baseline: str = "none",
    alpha: float = 0.05,
    stem: str = "results",
    reference: tuple[str, str] | None = None,
    n_classes: int | None = None,
) -> dict[str, Path]:
    """Write ``<stem>.csv``, ``<stem>.md``, ``<stem>_tests.csv`` and the plots into ``out_dir``.

    The Markdown file holds the thesis-style tables and a table of every paired test: each
    universum against ``baseline`` of the same pipeline, and, with ``reference`` (a
    ``(pipeline, universum)`` pair), every variant against that reference.

    The plots (:mod:`bci_universum.viz`, PNG): the scores of every pipeline and universum
    (``<stem>_<metric>_scores.png``), paired plots of the best universum variant against its
    baseline and against the peer (:func:`paired_comparisons`,
    ``<stem>_<metric>_paired_<a>_vs_<b>.png``) and the learning curve
    (``<stem>_<metric>_learning_curve.png``), each with the chance level
    (:func:`~bci_universum.viz.chance_level`; for accuracy only when ``n_classes`` is given).
    The plots of an earlier report of the same stem and metric are removed first: paired
    plots named after other pipelines would otherwise stay beside the new ones.

    Returns
    -------
    paths : dict
        ``csv``, ``markdown``, ``tests``, and, when such rows exist, ``scores``,
        ``paired_baseline``, ``paired_peer`` and ``learning_curve``.
    """
    rows = list(rows)
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    prefix = f"{stem}_{metric}"
    for old in out.glob(f"{prefix}_*.png"):  # an earlier report's plots (other pipelines)
        old.unlink()
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
    chance = None if n_classes is None and metric != "roc_auc" else chance_level(metric, n_classes)
    if any(r["protocol"] != _CURVE for r in rows):
        paths["scores"] = save_figure(
            plot_scores(rows, metric, chance), out / f"{prefix}_scores.png"
        )
        for key, (a, b) in paired_comparisons(rows, metric, baseline, reference).items():
            name = f"{prefix}_paired_{'-'.join(a)}_vs_{'-'.join(b)}.png".replace(":", "-")
            paths[f"paired_{key}"] = save_figure(
                plot_paired(rows, a, b, metric, chance), out / name
            )
    if any(r["protocol"] == _CURVE for r in rows):
        figure = plot_learning_curve(rows, metric, chance)
        paths["learning_curve"] = save_figure(figure, out / f"{prefix}_learning_curve.png")
    return paths
