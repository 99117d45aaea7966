"""Reports: CSV round trip, thesis-style tables with significance marks, plots."""

import numpy as np
import pytest
from scipy import stats

from bci_universum.evaluation import (
    LearningCurve,
    WithinSession,
    evaluate,
    paired_comparisons,
    plot_learning_curve,
    plot_paired,
    plot_scores,
    read_csv,
    results_table,
    write_report,
)
from bci_universum.viz import chance_level

from .helpers import GRID, _without_time, assert_png_panels, csp_lda, csp_usvm

pytestmark = pytest.mark.filterwarnings("ignore:pipelines without a universum classifier")


def test_report_files_and_table(data, tmp_path):
    rows = evaluate(data, {"usvm": csp_usvm, "lda": csp_lda}, ["none", "U_C3"],
                    WithinSession(3, 3, GRID), progress=False)  # fmt: skip
    curve = evaluate(data[:1], {"usvm": csp_usvm}, ["none", "U_C3"],
                     LearningCurve((3, 6), 3, param_grid=GRID), progress=False)  # fmt: skip
    paths = write_report(rows + curve, tmp_path / "report", reference=("lda", "none"))
    assert {"csv", "markdown", "scores", "learning_curve"} <= set(paths)
    assert_png_panels(paths["scores"], 1, panel_width=(1.6 + 0.6 * 2) + (1.6 + 0.6))  # usvm, lda
    assert_png_panels(paths["learning_curve"], 1, panel_width=6.5)  # one dataset
    # the one universum variant against its baseline and the reference
    assert paths["paired_baseline"].name == "results_accuracy_paired_usvm-none_vs_usvm-U_C3.png"
    assert paths["paired_peer"].name == "results_accuracy_paired_lda-none_vs_usvm-U_C3.png"
    assert_png_panels(paths["paired_peer"], 1, panel_width=4.4, height=4.4)
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


def test_the_sd_of_a_single_split_is_undefined():
    """One cross-run pair scores one split: its sd is n/a, not 0.00."""
    table = results_table(_rows("S1", "none", [0.5]) + _rows("S2", "none", [0.5, 0.7]))
    line = next(x for x in table.splitlines() if x.startswith("| p | none |"))
    assert line.split(" | ")[2:4] == ["50.00 ± n/a", "60.00 ± 14.14 |"]


def test_a_table_without_a_data_set_name_has_no_empty_heading():
    """EpochSets loaded without ``dataset=`` (load_recordings' default) have dataset ""."""
    rows = [{**r, "dataset": ""} for r in _rows("S1", "none", [0.5, 0.7])]
    assert results_table(rows).startswith("### within-session: accuracy × 100")
    assert results_table(_rows("S1", "none", [0.5, 0.7])).startswith("### d: within-session:")


def _row(pipeline, universum, score, protocol="within-session", n_train=20, metric="accuracy",
         subject="S1", split="f0"):  # fmt: skip
    return {
        "dataset": "demo", "subject": subject, "session": "1", "split": split,
        "pipeline": pipeline, "universum": universum, "protocol": protocol, "n_train": n_train,
        "metric": metric, "score": score,
    }  # fmt: skip


def _box(ax, position):
    """Quartiles and median drawn by ``ax.boxplot`` at x = ``position``."""
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
    assert not any(ln.get_linestyle() == "None" for _, _, ln in lines)  # no fliers: points
    return box_y.min(), median, box_y.max()


def _chance(ax):
    """The y of the legend's chance line and its label."""
    handles, labels = ax.get_legend_handles_labels()
    (line,) = [h for h, label in zip(handles, labels, strict=True) if label.startswith("chance")]
    return set(line.get_ydata()), line.get_label()


def test_chance_level_by_metric():
    assert chance_level("accuracy", 2) == 0.5
    assert chance_level("accuracy", 4) == 0.25
    assert chance_level("roc_auc", 4) == 0.5
    with pytest.raises(ValueError, match="n_classes"):
        chance_level("accuracy", 1)
    with pytest.raises(ValueError, match="kappa"):
        chance_level("kappa")


def test_score_plot_draws_every_split_of_every_pipeline_and_universum(tmp_path):
    rng = np.random.default_rng(0)
    scores = {
        ("usvm", "none"): rng.uniform(0.5, 0.8, 10),
        ("usvm", "U_C3"): np.r_[rng.uniform(0.6, 0.9, 9), 0.05],  # an outlier: a point
        ("lda", "none"): rng.uniform(0.4, 0.7, 10),
    }
    rows = [_row(p, u, s) for (p, u), values in scores.items() for s in values]
    rows += [
        _row("usvm", "none", 0.0, metric="roc_auc"),
        _row("lda", "none", 1.0, "learning-curve"),
    ]
    axes = plot_scores(rows, chance=1 / 3).axes
    assert [ax.get_title() for ax in axes] == ["usvm", "lda"]
    # panel widths follow their number of boxes: 1.6 + 0.6 per box inches
    widths = [ax.get_position().width for ax in axes]
    assert widths[0] / widths[1] == pytest.approx(2.8 / 2.2, rel=0.1)
    assert axes[0].get_ylabel() == "accuracy" and axes[0].get_xlabel() == "universum"
    assert _chance(axes[0]) == ({1 / 3}, "chance (33.3 %)")
    for ax, universa in zip(axes, (["none", "U_C3"], ["none"]), strict=True):
        assert [t.get_text() for t in ax.get_xticklabels()] == universa
        assert len(ax.collections) == len(universa)  # the points of each box
        for position, (universum, points) in enumerate(
            zip(universa, ax.collections, strict=True), 1
        ):
            values = scores[ax.get_title(), universum]
            quartiles = _box(ax, position)
            np.testing.assert_allclose(quartiles, np.percentile(values, [25, 50, 75]))
            xy = points.get_offsets()
            np.testing.assert_array_equal(xy[:, 1], values)
            assert np.all(np.abs(xy[:, 0] - position) <= 0.15)  # the outlier too
    with pytest.raises(ValueError, match="no non-learning-curve rows for metric 'kappa'"):
        plot_scores(rows, "kappa")


def test_learning_curve_plots_mean_and_confidence_band_per_training_size():
    rng = np.random.default_rng(1)
    sizes = (10, 20, 40)
    scores = {(line, n): rng.uniform(0.5, 0.9, 5) for line in ("none", "U_C3") for n in sizes}
    rows = [
        _row("usvm", u, s, "learning-curve", n)
        for (u, n), values in scores.items()
        for s in values
    ]
    rows.append(_row("usvm", "none", 0.7))  # not a learning-curve row: left out
    (ax,) = plot_learning_curve(rows, chance=0.5).axes
    assert ax.get_title().startswith("demo")
    assert (ax.get_xlabel(), ax.get_ylabel()) == ("labelled training trials", "accuracy")
    labels = [t.get_text() for t in ax.get_legend().get_texts()]
    assert labels == ["usvm + none", "usvm + U_C3", "chance (50 %)"]
    assert _chance(ax)[0] == {0.5}
    for line, band, universum in zip(ax.lines, ax.collections, ("none", "U_C3"), strict=False):
        means = [scores[universum, n].mean() for n in sizes]
        np.testing.assert_array_equal(line.get_xdata(), sizes)
        np.testing.assert_allclose(line.get_ydata(), means)
        edges = band.get_paths()[0].vertices
        for n, mean in zip(sizes, means, strict=True):
            values = scores[universum, n]
            low, high = stats.t.interval(0.95, 4, loc=mean, scale=stats.sem(values))
            at = edges[np.isclose(edges[:, 0], n), 1]
            np.testing.assert_allclose([at.min(), at.max()], [low, high])


def test_learning_curve_band_stays_within_the_metric_range():
    """Two draws scoring 0 and 1: the t-interval (about ±6) is cut to [0, 1]."""
    rows = [_row("usvm", "none", s, "learning-curve", 10) for s in (0.0, 1.0)]
    rows += [_row("usvm", "none", s, "learning-curve", 20) for s in (0.9, 1.0)]
    (ax,) = plot_learning_curve(rows).axes
    edges = ax.collections[0].get_paths()[0].vertices
    assert edges[:, 1].min() == 0.0 and edges[:, 1].max() == 1.0


def test_paired_plot_draws_each_split_of_a_against_b():
    rng = np.random.default_rng(2)
    a = {(s, f): rng.uniform(0.5, 0.8) for s in ("S1", "S2") for f in range(4)}
    b = {key: score + rng.normal(0.03, 0.05) for key, score in a.items()}
    rows = [_row("csp_usvm", "none", v, subject=s, split=f"f{f}") for (s, f), v in a.items()]
    rows += [_row("csp_usvm", "U_C3", v, subject=s, split=f"f{f}") for (s, f), v in b.items()]
    rows.append(_row("csp_usvm", "U_C3", 0.9, subject="S3"))  # no partner: left out
    (ax,) = plot_paired(rows, ("csp_usvm", "none"), ("csp_usvm", "U_C3"), chance=0.5).axes
    assert ax.get_xlabel() == "csp_usvm + none (accuracy)"
    assert ax.get_ylabel() == "csp_usvm + U_C3 (accuracy)"
    higher, lower = sum(b[k] > a[k] for k in a), sum(b[k] < a[k] for k in a)
    assert ax.get_title() == f"csp_usvm + U_C3: higher on {higher}, lower on {lower} of 8 splits"
    for points, subject in zip(ax.collections, ("S1", "S2"), strict=True):
        assert points.get_label() == f"subject {subject}"
        keys = [k for k in a if k[0] == subject]
        np.testing.assert_allclose(points.get_offsets(), [(a[k], b[k]) for k in keys])
    diagonal = next(ln for ln in ax.lines if ln.get_label() == "equal scores")
    np.testing.assert_array_equal(diagonal.get_xdata(), diagonal.get_ydata())
    assert _chance(ax) == ({0.5}, "chance (50 %)")
    assert any(set(ln.get_xdata()) == {0.5} for ln in ax.lines)  # the vertical chance line
    with pytest.raises(ValueError, match="no paired accuracy scores"):
        plot_paired(rows, ("csp_usvm", "none"), ("ts_lr", "none"))


def test_paired_comparisons_pick_the_best_universum_variant():
    rows = [_row("csp_usvm", "none", 0.6), _row("csp_usvm", "U_C3", 0.7),
            _row("ts_usvm", "none", 0.7), _row("ts_usvm", "U_C3", 0.75),
            _row("ts_usvm", "centred", 0.8), _row("csp_lda", "none", 0.65),
            _row("ts_lr", "none", 0.9, "learning-curve")]  # fmt: skip
    best = ("ts_usvm", "centred")
    assert paired_comparisons(rows) == {
        "baseline": (("ts_usvm", "none"), best),
        "peer": (("csp_lda", "none"), best),  # ts_lr only has learning-curve rows
    }
    assert paired_comparisons(rows, reference=("csp_usvm", "U_C3"))["peer"] == (
        ("csp_usvm", "U_C3"), best
    )  # fmt: skip
    assert paired_comparisons([r for r in rows if r["universum"] == "none"]) == {}
