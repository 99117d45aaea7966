"""Reports: CSV round trip, thesis-style tables with significance marks, plots."""

import numpy as np
import pytest

from bci_universum.evaluation import (
    LearningCurve,
    WithinSession,
    evaluate,
    read_csv,
    results_table,
    write_report,
)

from .helpers import GRID, _without_time, csp_lda, csp_usvm

pytestmark = pytest.mark.filterwarnings("ignore:pipelines without a universum classifier")


def test_report_files_and_table(data, tmp_path):
    rows = evaluate(data, {"usvm": csp_usvm, "lda": csp_lda}, ["none", "U_C3"],
                    WithinSession(3, 3, GRID), progress=False)  # fmt: skip
    curve = evaluate(data[:1], {"usvm": csp_usvm}, ["none", "U_C3"],
                     LearningCurve((3, 6), 3, param_grid=GRID), progress=False)  # fmt: skip
    paths = write_report(rows + curve, tmp_path / "report")
    assert {"csv", "markdown", "boxplot", "learning_curve"} <= set(paths)
    assert all(p.stat().st_size > 0 for p in paths.values())
    back = read_csv(paths["csv"])
    assert _without_time(back) == _without_time(
        [{**r, "fit_time": 0} for r in rows + curve]
    )  # fmt: skip
    table = paths["markdown"].read_text()
    assert "| Pipeline | Universum | S1 | S2 |" in table
    row = next(line for line in table.splitlines() if line.startswith("| usvm | none |"))
    scores = [r["score"] for r in rows if r["pipeline"] == "usvm" and r["universum"] == "none"
              and r["subject"] == "S1" and r["metric"] == "accuracy"]  # fmt: skip
    assert f"{100 * np.mean(scores):.2f} ± {100 * np.std(scores, ddof=1):.2f}" in row
    assert "6 labelled training trials" in results_table(curve)


def _rows(subject, universum, scores, n_train=90, n_test=10):
    return [
        {"dataset": "d", "subject": subject, "session": "1", "pipeline": "p",
         "universum": universum, "protocol": "within-session", "split": f"fold{i}",
         "n_train": n_train, "n_test": n_test, "n_universum": 0, "metric": "accuracy",
         "score": s, "fit_time": 0.0, "params": "{}", "key": ""}
        for i, s in enumerate(scores)
    ]  # fmt: skip


def test_table_marks_corrected_and_plain_significance():
    base = [0.60, 0.70, 0.65, 0.75, 0.62, 0.68, 0.71, 0.66, 0.64, 0.69]
    rng = np.random.default_rng(0)
    big = [b + 0.10 + 0.01 * rng.standard_normal() for b in base]  # clear gain
    small = list(np.add(base, [0.04, 0.0, 0.02, 0.03, 0.01, 0.0, 0.03, 0.02, 0.0, 0.05]))
    rows = (_rows("S1", "none", base) + _rows("S1", "U_C3", big)
            + _rows("S2", "none", base, 20, 20) + _rows("S2", "U_C3", small, 20, 20))  # fmt: skip
    table = results_table(rows)
    line = next(x for x in table.splitlines() if x.startswith("| p | U_C3 |"))
    s1, s2 = line.split(" | ")[2:4]
    assert s1.endswith("*")
    # small gain: plain t = 3.59 (p = 0.006); corrected with n_test/n_train = 1:
    # t = 3.59 * sqrt(0.1 / 1.1) = 1.08 (p = 0.31)
    assert s2.rstrip(" |").endswith("†")
    baseline = next(x for x in table.splitlines() if x.startswith("| p | none |"))
    assert "*" not in baseline and "†" not in baseline
    assert f"{100 * np.mean(base):.2f} ± {100 * np.std(base, ddof=1):.2f}" in baseline
