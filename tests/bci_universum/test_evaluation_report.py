"""The report plots hold the scores they are given, on the axes they name."""

import matplotlib.image
import matplotlib.pyplot as plt
import numpy as np
import pytest

from bci_universum.evaluation_report import plot_learning_curve, plot_scores


@pytest.fixture
def figures(monkeypatch):
    """The figures the plot functions close after saving, kept open for inspection."""
    kept = []
    monkeypatch.setattr(plt, "close", kept.append)
    yield kept
    monkeypatch.undo()
    for fig in kept:
        plt.close(fig)


def assert_png_panels(path, n_panels, panel_width=4.0):
    """A saved report plot: ``n_panels`` panels of ``panel_width`` inches at 100 dpi, 3.6 in
    high, and not a blank canvas."""
    image = matplotlib.image.imread(path)
    assert image.shape[:2] == (360, round(100 * panel_width * n_panels))
    assert len(np.unique(image.reshape(-1, image.shape[-1]), axis=0)) > 10


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
