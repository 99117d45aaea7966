"""Paired statistics of evaluation results: every score against a reference, split by split.

Scores are paired by (session, split), which the protocols make identical across pipelines and
universa. Both the corrected resampled t-test (Nadeau & Bengio; it accounts for the overlap of
training folds) and the plain paired t-test (too liberal; reported to make that visible) are
given.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Sequence

from ..model_selection import corrected_paired_ttest, paired_ttest

__all__ = ["compare_to_baseline", "compare_to_pipeline", "tests_table"]

_CURVE = "learning-curve"


def _level(row: dict):
    """Training-size level: separate table cells per size only for learning curves."""
    return row["n_train"] if row["protocol"] == _CURVE else None


def _cells(rows: Iterable[dict], metric: str) -> dict[tuple, dict[tuple, dict]]:
    """(dataset, protocol, level, subject, pipeline, universum) -> {(session, split): row}."""
    cells: dict[tuple, dict[tuple, dict]] = defaultdict(dict)
    for row in rows:
        if row["metric"] != metric:
            continue
        key = (row["dataset"], row["protocol"], _level(row), row["subject"], row["pipeline"],
               row["universum"])  # fmt: skip
        cells[key][(row["session"], row["split"])] = row
    if not cells:
        raise ValueError(f"no result rows for metric {metric!r}.")
    return cells


def _paired(cells, against) -> list[dict]:
    """Paired tests of every cell against the cell ``against(pipeline, universum)`` names."""
    out = []
    for (dataset, protocol, level, subject, pipeline, universum), scored in cells.items():
        reference = against(pipeline, universum)
        if reference is None or reference == (pipeline, universum):
            continue
        base = cells.get((dataset, protocol, level, subject, *reference))
        pairs = sorted(set(scored) & set(base or {}))
        if len(pairs) < 2:
            continue
        a = [scored[p]["score"] for p in pairs]
        b = [base[p]["score"] for p in pairs]
        corrected = corrected_paired_ttest(
            a, b, [scored[p]["n_train"] for p in pairs], [scored[p]["n_test"] for p in pairs]
        )
        plain = paired_ttest(a, b)
        out.append({
            "dataset": dataset, "protocol": protocol, "n_train": level, "subject": subject,
            "pipeline": pipeline, "universum": universum, "reference_pipeline": reference[0],
            "reference_universum": reference[1], "n_pairs": len(pairs),
            "mean_difference": corrected.mean_difference,
            "t_corrected": corrected.statistic, "p_corrected": corrected.pvalue,
            "t_plain": plain.statistic, "p_plain": plain.pvalue,
        })  # fmt: skip
    return out


def compare_to_baseline(
    rows: Iterable[dict], metric: str = "accuracy", baseline: str = "none"
) -> list[dict]:
    """Paired tests of every universum against ``baseline`` for the same pipeline and subject.

    Scores are paired by (session, split). Both the corrected resampled t-test and the plain
    paired t-test are reported.

    Returns
    -------
    comparisons : list of dict
        Keys ``dataset, protocol, n_train (learning curves only, else None), subject, pipeline,
        universum, reference_pipeline, reference_universum, n_pairs, mean_difference
        (score − reference), t_corrected, p_corrected, t_plain, p_plain``.
    """
    return _paired(_cells(rows, metric), lambda pipeline, universum: (pipeline, baseline))


def compare_to_pipeline(
    rows: Iterable[dict], reference: tuple[str, str], metric: str = "accuracy"
) -> list[dict]:
    """Paired tests of every (pipeline, universum) against one ``reference`` pair.

    E.g. ``reference=("ts_lr", "none")`` compares every U-SVM variant with tangent space +
    logistic regression, split by split. Keys as in :func:`compare_to_baseline`.
    """
    return _paired(_cells(rows, metric), lambda pipeline, universum: tuple(reference))


def tests_table(comparisons: Sequence[dict]) -> str:
    """Markdown table of paired tests (differences × 100)."""
    lines = [
        "| data set | protocol | subject | pipeline | universum | against | pairs | "
        "difference × 100 | p corrected | p plain |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for c in comparisons:
        size = "" if c["n_train"] is None else f" (n={c['n_train']})"
        difference = round(100 * c["mean_difference"], 2) + 0.0  # no "-0.00"
        lines.append(
            f"| {c['dataset']} | {c['protocol']}{size} | {c['subject']} | {c['pipeline']} | "
            f"{c['universum']} | {c['reference_pipeline']} + {c['reference_universum']} | "
            f"{c['n_pairs']} | {difference:+.2f} | {c['p_corrected']:.3f} | {c['p_plain']:.3f} |"
        )
    return "\n".join(lines) + "\n"
