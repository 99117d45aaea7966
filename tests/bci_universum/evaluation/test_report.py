"""Reports: CSV round trip, thesis-style tables with significance marks, plots."""

import matplotlib.pyplot as plt
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
from bci_universum.evaluation.report import plot_learning_curve, plot_scores

from .helpers import GRID, _without_time, assert_png_panels, csp_lda, csp_usvm

pytestmark = pytest.mark.filterwarnings("ignore:pipelines without a universum classifier")


def test_report_files_and_table(data, tmp_path):
    rows = evaluate(data, {"usvm": csp_usvm, "lda": csp_lda}, ["none", "U_C3"],
                    WithinSession(3, 3, GRID), progress=False)  # fmt: skip
    curve = evaluate(data[:1], {"usvm": csp_usvm}, ["none", "U_C3"],
                     LearningCurve((3, 6), 3, param_grid=GRID), progress=False)  # fmt: skip
    paths = write_report(rows + curve, tmp_path / "report")
    assert {"csv", "markdown", "boxplot", "learning_curve"} <= set(paths)
    assert_png_panels(paths["boxplot"], 2)  # usvm, lda
    assert_png_panels(paths["learning_curve"], 1, panel_width=5.0)  # one dataset
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


@pytest.fixture
def figures(monkeypatch):
    """The figures the plot functions close after saving, kept open for inspection."""
    kept = []
    monkeypatch.setattr(plt, "close", kept.append)
    yield kept
    monkeypatch.undo()
    for fig in kept:
        plt.close(fig)


def _row(pipeline, universum, score, protocol="within-session", n_train=20, metric="accuracy"):
    return {
        "dataset": "demo", "pipeline": pipeline, "universum": universum, "protocol": protocol,
        "n_train": n_train, "metric": metric, "score": score,
    }  # fmt: skip


def _box(ax, position):
    """Quartiles, median and outliers drawn by ``ax.boxplot`` at x = ``position``."""
    lines = [
        (np.asarray(line.get_xdata(), float), np.asarray(line.get_ydata(), float), line)
        for line in ax.lines
        if len(line.get_xdata()) and np.all(np.abs(np.asarray(line.get_xdata()) - position) < 0.5)
    ]
    (box_x, box_y, _) = next((x, y, ln) for x, y, ln in lines if len(x) == 5)
    width = np.ptp(box_x)
    median = next(
        y[0] for x, y, ln in lines if len(x) == 2 and y[0] == y[1] and np.ptp(x) == width
    )
    fliers = next((y for x, y, ln in lines if ln.get_linestyle() == "None"), [])
    return (box_y.min(), median, box_y.max()), sorted(fliers)


def test_box_plot_draws_every_pipeline_and_universum_from_its_scores(tmp_path, figures):
    rng = np.random.default_rng(0)
    scores = {
        ("usvm", "none"): rng.uniform(0.5, 0.8, 10),
        ("usvm", "U_C3"): np.r_[rng.uniform(0.6, 0.9, 9), 0.05],  # one outlier
        ("lda", "none"): rng.uniform(0.4, 0.7, 10),
    }
    rows = [_row(p, u, s) for (p, u), values in scores.items() for s in values]
    rows += [_row("usvm", "none", 0.0, metric="kappa"), _row("lda", "none", 1.0, "learning-curve")]
    path = plot_scores(rows, tmp_path / "box.png")
    assert_png_panels(path, 2)
    (fig,) = figures
    axes = fig.axes
    assert [ax.get_title() for ax in axes] == ["usvm", "lda"]
    assert axes[0].get_ylabel() == "accuracy"
    for ax, universa in zip(axes, (["none", "U_C3"], ["none"]), strict=True):
        assert [t.get_text() for t in ax.get_xticklabels()] == universa
        for position, universum in enumerate(universa, start=1):
            values = scores[ax.get_title(), universum]
            quartiles, fliers = _box(ax, position)
            np.testing.assert_allclose(quartiles, np.percentile(values, [25, 50, 75]))
            q1, q3 = np.percentile(values, [25, 75])
            outside = values[(values < q1 - 1.5 * (q3 - q1)) | (values > q3 + 1.5 * (q3 - q1))]
            np.testing.assert_allclose(fliers, sorted(outside))
    assert len(_box(axes[0], 2)[1]) == 1  # the outlier is drawn


def test_learning_curve_plots_mean_and_standard_error_per_training_size(tmp_path, figures):
    rng = np.random.default_rng(1)
    sizes = (10, 20, 40)
    scores = {(line, n): rng.uniform(0.5, 0.9, 5) for line in ("none", "U_C3") for n in sizes}
    rows = [
        _row("usvm", u, s, "learning-curve", n)
        for (u, n), values in scores.items()
        for s in values
    ]
    rows.append(_row("usvm", "none", 0.7))  # not a learning-curve row: left out
    path = plot_learning_curve(rows, tmp_path / "curve.png")
    assert_png_panels(path, 1, panel_width=5.0)
    (fig,) = figures
    (ax,) = fig.axes
    assert ax.get_title() == "demo"
    assert (ax.get_xlabel(), ax.get_ylabel()) == ("labelled training trials", "accuracy")
    assert [t.get_text() for t in ax.get_legend().get_texts()] == ["usvm + none", "usvm + U_C3"]
    for container, universum in zip(ax.containers, ("none", "U_C3"), strict=True):
        data_line, _, (bars,) = container.lines
        mean = [scores[universum, n].mean() for n in sizes]
        sem = [scores[universum, n].std(ddof=1) / np.sqrt(5) for n in sizes]
        np.testing.assert_array_equal(data_line.get_xdata(), sizes)
        np.testing.assert_allclose(data_line.get_ydata(), mean)
        segments = np.array(bars.get_segments())  # (n_sizes, 2 ends, xy)
        np.testing.assert_allclose(segments[:, 0, 1], np.subtract(mean, sem))
        np.testing.assert_allclose(segments[:, 1, 1], np.add(mean, sem))
