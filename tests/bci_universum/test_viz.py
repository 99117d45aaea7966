"""The figures of bci_universum.viz drawn from known data (Agg, read back before saving)."""

import matplotlib.image
import numpy as np
import pytest
from sklearn.metrics import confusion_matrix

from bci_universum.viz import (
    plot_confusion,
    plot_cv_summary,
    plot_decision_values,
    save_figure,
)


def test_decision_values_per_trial_and_mean_sd_per_class(tmp_path):
    rng = np.random.default_rng(0)
    t = np.arange(-0.5, 3.0, 0.25)
    # the same decision times in every trial: the class mean and sd are plain column statistics
    trials = {
        "left": rng.normal(-0.5, 0.3, (3, t.size)),
        "right": rng.normal(0.4, 0.3, (2, t.size)),
    }
    labels = ["left", "right", "left", "right", "left"]
    order = {"left": iter(trials["left"]), "right": iter(trials["right"])}
    values = [next(order[c]) for c in labels]
    fig = plot_decision_values([t] * 5, values, labels, {"feedback": 0.5})
    (ax,) = fig.axes
    assert (ax.get_xlabel(), ax.get_ylabel()) == ("time from cue onset (s)", "decision value")
    singles = [ln for ln in ax.lines if ln.get_alpha() == 0.25]
    drawn = np.array([ln.get_ydata() for ln in singles])
    np.testing.assert_array_equal(drawn, np.vstack([trials["left"], trials["right"]]))
    means = {ln.get_label().split(":")[0]: ln for ln in ax.lines if "mean ± sd" in ln.get_label()}
    assert [ln.get_label() for ln in means.values()] == [
        "left: mean ± sd of 3 trials", "right: mean ± sd of 2 trials"
    ]  # fmt: skip
    for (cls, line), band in zip(means.items(), ax.collections, strict=True):
        np.testing.assert_allclose(line.get_xdata(), t)
        np.testing.assert_allclose(line.get_ydata(), trials[cls].mean(axis=0))
        edges = band.get_paths()[0].vertices
        sd = trials[cls].std(axis=0)
        for x, mean, spread in zip(t, trials[cls].mean(axis=0), sd, strict=True):
            at = edges[np.isclose(edges[:, 0], x), 1]
            np.testing.assert_allclose([at.min(), at.max()], [mean - spread, mean + spread])
    marks = {ln.get_label(): ln for ln in ax.lines}
    assert set(marks["decision boundary"].get_ydata()) == {0.0}
    assert set(marks["cue"].get_xdata()) == {0.0} and set(marks["feedback"].get_xdata()) == {0.5}
    path = save_figure(fig, tmp_path / "decisions.png")
    assert matplotlib.image.imread(path).shape[:2] == (400, 600)


def test_decision_values_of_trials_with_other_times_are_averaged_where_they_overlap():
    a = np.array([0.0, 0.5, 1.0, 1.5])
    fig = plot_decision_values([a, a + 0.5], [np.ones(4), 3 * np.ones(4)], ["x", "x"])
    (mean,) = [ln for ln in fig.axes[0].lines if "mean" in ln.get_label()]
    np.testing.assert_allclose(mean.get_xdata(), [0.0, 0.5, 1.0, 1.5, 2.0])
    np.testing.assert_allclose(mean.get_ydata(), [1, 2, 2, 2, 3])
    with pytest.raises(ValueError, match="differ in length"):
        plot_decision_values([a], [], ["x"])
    with pytest.raises(ValueError, match="no decisions"):
        plot_decision_values([a[:0]], [a[:0]], ["x"])


def test_confusion_matrix_counts_and_undecided_trials():
    targets = ["left", "left", "right", "right", "right", "left"]
    decoded = ["left", "right", "right", None, "right", "left"]
    (ax,) = plot_confusion(targets, decoded, ["left", "right"]).axes
    assert (ax.get_xlabel(), ax.get_ylabel()) == ("decoded class", "target class")
    assert [t.get_text() for t in ax.get_xticklabels()] == ["left", "right", "none"]
    counts = np.array([int(t.get_text()) for t in ax.texts]).reshape(3, 3)
    labels = ["left", "right", "none"]
    expected = confusion_matrix(targets, [d or "none" for d in decoded], labels=labels)
    np.testing.assert_array_equal(counts, expected)
    assert counts[1, 2] == 1  # the right trial without a decision
    assert ax.get_title() == "4 of 6 trials hit"


def test_cv_summary_without_a_grid_has_one_panel_and_checks_shapes():
    fig = plot_cv_summary({"without universum": [0.5, 0.75, 1.0]}, chance=1 / 3)
    (ax,) = fig.axes
    (folds, chance) = ax.lines
    np.testing.assert_array_equal(folds.get_ydata(), [0.5, 0.75, 1.0])
    assert set(chance.get_ydata()) == {1 / 3} and chance.get_label() == "chance (33.3 %)"
    with pytest.raises(ValueError, match="2 grid points but candidate_scores has shape"):
        plot_cv_summary({"x": [1.0]}, [{"C": 1}, {"C": 2}], np.zeros((3, 4)), 0)
