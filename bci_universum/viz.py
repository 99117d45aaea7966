"""Figures: evaluation scores, paired comparisons, learning curves, the cross-validation of
``train`` and the decisions of an online run.

Every function returns a :class:`matplotlib.figure.Figure` built without pyplot (no global
state and no GUI backend: safe in the command line, in worker threads and beside a Qt window);
save it with :func:`save_figure` (or ``fig.savefig``). In Jupyter the figure shows itself.
Score axes carry a dashed chance line named in the legend (:func:`chance_level`), like MOABB's
``score_plot`` and ``paired_plot``.

==============================  ===============================================================
function                        draws
==============================  ===============================================================
:func:`plot_scores`             per pipeline, a box and the points of every split per universum
:func:`plot_paired`             pipeline A against pipeline B, one point per paired split
:func:`plot_learning_curve`     mean score ± confidence band against labelled training trials
:func:`plot_cv_summary`         outer folds with/without universum, inner CV per grid point
:func:`plot_decision_values`    decision value over time per trial, mean ± sd per class
:func:`plot_confusion`          targets against decoded classes (scikit-learn's display)
==============================  ===============================================================
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np
from matplotlib.figure import Figure
from scipy import stats

__all__ = [
    "chance_level",
    "paired_scores",
    "plot_confusion",
    "plot_cv_summary",
    "plot_decision_values",
    "plot_learning_curve",
    "plot_paired",
    "plot_scores",
    "save_figure",
]

_CHANCE_STYLE = {"linestyle": "--", "color": "0.45", "linewidth": 1.2}


def chance_level(metric: str, n_classes: int = 2) -> float:
    """The score of a decoder that guesses: ``1 / n_classes`` for (balanced) accuracy, 0.5 for
    ROC-AUC."""
    if metric == "roc_auc":
        return 0.5
    if metric in ("accuracy", "balanced_accuracy"):
        if not isinstance(n_classes, int | np.integer) or n_classes < 2:
            raise ValueError(f"n_classes must be an integer ≥ 2, got {n_classes!r}.")
        return 1.0 / n_classes
    raise ValueError(f"No chance level for metric {metric!r}; use accuracy or roc_auc.")


def _chance_label(level: float, metric: str) -> str:
    if metric == "roc_auc":
        return f"chance (AUC {level:g})"
    return f"chance ({100 * level:.3g} %)"


def _chance_line(ax, level: float | None, metric: str, vertical: bool = False) -> None:
    """A dashed horizontal (and, for paired axes, vertical) line at chance, named once."""
    if level is None:
        return
    ax.axhline(level, label=_chance_label(level, metric), **_CHANCE_STYLE)
    if vertical:
        ax.axvline(level, **_CHANCE_STYLE)


def _panels(n: int, width: float = 4.0, height: float = 3.6, sharey: bool = True, widths=None):
    """A row of ``n`` panels, ``width`` inches each or ``widths`` inches one by one."""
    widths = [width] * n if widths is None else list(widths)
    fig = Figure(figsize=(sum(widths), height), layout="constrained")
    axes = fig.subplots(1, n, squeeze=False, sharey=sharey, width_ratios=widths)
    return fig, list(axes[0])


def save_figure(fig: Figure, path: str | os.PathLike, dpi: int = 100) -> Path:
    """Write ``fig`` to ``path`` (format from the suffix) and return the path."""
    fig.savefig(path, dpi=dpi)
    return Path(path)


def _ordered(values, first=None) -> list:
    seen = list(dict.fromkeys(values))
    return ([first] if first in seen else []) + [v for v in seen if v != first]


def _label(pair: tuple[str, str]) -> str:
    return " + ".join(pair)


def _metric_rows(rows: Sequence[dict], metric: str, curve: bool) -> list[dict]:
    from .evaluation.protocols import LearningCurve  # the evaluation package imports this one

    rows = [
        r for r in rows if r["metric"] == metric and (r["protocol"] == LearningCurve.name) == curve
    ]
    if not rows:
        kind = "learning-curve" if curve else "non-learning-curve"
        raise ValueError(f"no {kind} rows for metric {metric!r} to plot.")
    return rows


def plot_scores(
    rows: Sequence[dict], metric: str = "accuracy", chance: float | None = None
) -> Figure:
    """Split scores: one panel per pipeline, a box and every split's point per universum.

    Parameters
    ----------
    rows : sequence of dict
        Rows of :func:`~bci_universum.evaluation.evaluate` (learning-curve rows are left out).
    metric : str
        Score to draw.
    chance : float or None
        Chance level (:func:`chance_level`), drawn as a dashed line; None: no line.
    """
    rows = _metric_rows(rows, metric, curve=False)
    pipelines = _ordered(r["pipeline"] for r in rows)
    universa_of = {
        name: _ordered((r["universum"] for r in rows if r["pipeline"] == name), "none")
        for name in pipelines
    }
    # a panel's width grows with its boxes: a pipeline without universum is one narrow box
    widths = [1.6 + 0.6 * len(u) for u in universa_of.values()]
    fig, axes = _panels(len(pipelines), widths=widths)
    jitter = np.random.default_rng(0)
    for ax, pipeline in zip(axes, pipelines, strict=True):
        universa = universa_of[pipeline]
        data = [
            [r["score"] for r in rows if r["pipeline"] == pipeline and r["universum"] == u]
            for u in universa
        ]
        ax.boxplot(data, showfliers=False)  # every point is drawn beside it
        for position, scores in enumerate(data, start=1):
            x = position + jitter.uniform(-0.15, 0.15, len(scores))
            ax.scatter(x, scores, s=12, alpha=0.6, color="C0", zorder=3)
        ax.set_xticks(range(1, len(universa) + 1), universa, rotation=30)
        ax.set_xlabel("universum")
        ax.set_title(pipeline)
        _chance_line(ax, chance, metric)
    axes[0].set_ylabel(metric)
    if chance is not None:
        axes[0].legend(loc="lower left", fontsize="small")
    return fig


def paired_scores(
    rows: Sequence[dict], a: tuple[str, str], b: tuple[str, str], metric: str = "accuracy"
) -> tuple[np.ndarray, np.ndarray, list[str]]:
    """Scores of ``a`` and ``b`` (``(pipeline, universum)``) on the same splits.

    Pairs are matched by (dataset, subject, session, split, training size).

    Returns
    -------
    a_scores, b_scores : ndarray
    subjects : list of str
        The subject of each pair.
    """

    def scored(which):
        return {
            (r["dataset"], r["subject"], r["session"], r["split"], r["n_train"]): r["score"]
            for r in rows
            if r["metric"] == metric and (r["pipeline"], r["universum"]) == tuple(which)
        }

    sa, sb = scored(a), scored(b)
    keys = [k for k in sa if k in sb]
    if not keys:
        raise ValueError(f"no paired {metric} scores of {_label(a)} and {_label(b)}.")
    return np.array([sa[k] for k in keys]), np.array([sb[k] for k in keys]), [k[1] for k in keys]


def plot_paired(
    rows: Sequence[dict],
    a: tuple[str, str],
    b: tuple[str, str],
    metric: str = "accuracy",
    chance: float | None = None,
) -> Figure:
    """``b`` against ``a`` split by split (MOABB's ``paired_plot``): points above the diagonal
    are splits where ``b`` scores higher.

    Parameters
    ----------
    rows : sequence of dict
        Rows of :func:`~bci_universum.evaluation.evaluate`.
    a, b : (str, str)
        ``(pipeline, universum)`` on the x and y axes.
    metric : str
        Score to draw.
    chance : float or None
        Chance level: dashed lines on both axes.
    """
    x, y, subjects = paired_scores(rows, a, b, metric)
    fig, (ax,) = _panels(1, width=4.4, height=4.4)
    for subject in _ordered(subjects):
        mask = np.array([s == subject for s in subjects])
        ax.scatter(x[mask], y[mask], s=18, alpha=0.7, label=f"subject {subject}")
    low = min(np.min(x), np.min(y), chance if chance is not None else 1.0)
    low = max(0.0, low - 0.05)
    ax.plot([low, 1.0], [low, 1.0], color="k", linewidth=0.8, label="equal scores")
    _chance_line(ax, chance, metric, vertical=True)
    ax.set_xlim(low, 1.02)
    ax.set_ylim(low, 1.02)
    ax.set_aspect("equal")
    ax.set_xlabel(f"{_label(a)} ({metric})")
    ax.set_ylabel(f"{_label(b)} ({metric})")
    higher, lower = int(np.sum(y > x)), int(np.sum(y < x))
    ax.set_title(f"{_label(b)}: higher on {higher}, lower on {lower} of {x.size} splits",
                 fontsize=9)  # fmt: skip
    ax.legend(loc="lower right", fontsize="small")
    return fig


def _confidence_band(scores: np.ndarray, confidence: float) -> tuple[float, float]:
    """Mean and half-width of the t-interval of the mean (0 with a single draw)."""
    mean = float(np.mean(scores))
    if scores.size < 2:
        return mean, 0.0
    sem = np.std(scores, ddof=1) / np.sqrt(scores.size)
    return mean, float(stats.t.ppf(0.5 + confidence / 2, scores.size - 1) * sem)


def plot_learning_curve(
    rows: Sequence[dict],
    metric: str = "accuracy",
    chance: float | None = None,
    confidence: float = 0.95,
) -> Figure:
    """Mean score against labelled training trials with a confidence band across draws.

    One panel per data set, one line per (pipeline, universum); the band is the
    ``confidence`` t-interval of the mean over the learning curve's draws (repeats × subjects).

    Parameters
    ----------
    rows : sequence of dict
        Rows of :func:`~bci_universum.evaluation.evaluate` (only learning-curve rows are used).
    metric : str
        Score to draw.
    chance : float or None
        Chance level, drawn as a dashed line.
    confidence : float
        Coverage of the band.
    """
    if not 0 < confidence < 1:
        raise ValueError(f"confidence must be in (0, 1), got {confidence!r}.")
    rows = _metric_rows(rows, metric, curve=True)
    datasets = _ordered(r["dataset"] for r in rows)
    fig, axes = _panels(len(datasets), width=6.5)  # room for the legend
    for ax, dataset in zip(axes, datasets, strict=True):
        sub = [r for r in rows if r["dataset"] == dataset]
        for line in dict.fromkeys((r["pipeline"], r["universum"]) for r in sub):
            sizes = sorted({r["n_train"] for r in sub if (r["pipeline"], r["universum"]) == line})
            mean, half = np.array([
                _confidence_band(
                    np.array([r["score"] for r in sub
                              if (r["pipeline"], r["universum"]) == line and r["n_train"] == n]),
                    confidence,
                )
                for n in sizes
            ]).T  # fmt: skip
            (drawn,) = ax.plot(sizes, mean, marker="o", label=_label(line))
            # the metrics (accuracy, ROC-AUC) lie in [0, 1]; a t-interval of few draws does not
            low, high = np.clip(mean - half, 0, 1), np.clip(mean + half, 0, 1)
            ax.fill_between(sizes, low, high, color=drawn.get_color(), alpha=0.2)
        _chance_line(ax, chance, metric)
        ax.set_xlabel("labelled training trials")
        ax.set_title(f"{dataset} (bands: {100 * confidence:g} % CI of the mean)", fontsize=10)
    # beside the last panel: the bands of many lines leave no free corner inside
    axes[-1].legend(fontsize="small", loc="upper left", bbox_to_anchor=(1.02, 1.0))
    axes[0].set_ylabel(metric)
    return fig


def _grid_label(params: Mapping) -> str:
    return ", ".join(f"{k.rsplit('__', 1)[-1]}={v:g}" for k, v in params.items()) or "default"


def plot_cv_summary(
    folds: Mapping[str, Sequence[float]],
    candidates: Sequence[Mapping] = (),
    candidate_scores: np.ndarray | None = None,
    selected: int | None = None,
    chance: float | None = None,
) -> Figure:
    """Cross-validation of a trained decoder: outer folds, and the final selection's grid.

    Parameters
    ----------
    folds : mapping
        Label (e.g. ``with universum``) → nested-CV accuracy of each outer fold.
    candidates : sequence of mapping
        The grid points of the final selection (parameter → value); none: no grid panel.
    candidate_scores : ndarray of shape (n_candidates, n_inner_folds)
        Inner-CV balanced accuracy of each grid point on each inner fold.
    selected : int or None
        Index of the selected grid point (starred).
    chance : float or None
        Chance level of both scores (1 / n_classes), drawn as a dashed line.
    """
    fig, axes = _panels(2 if len(candidates) else 1, width=4.6, sharey=False)
    left = axes[0]
    for label, scores in folds.items():
        left.plot(np.arange(1, len(scores) + 1), scores, marker="o", label=label)
    left.set_xticks(np.arange(1, max(map(len, folds.values()), default=0) + 1))
    _chance_line(left, chance, "accuracy")
    left.set_xlabel("outer fold")
    left.set_ylabel("accuracy")
    left.set_title("nested cross-validation", fontsize=10)
    left.legend(fontsize="small")
    if not len(candidates):
        return fig
    candidate_scores = np.asarray(candidate_scores, dtype=float)
    if candidate_scores.ndim != 2 or candidate_scores.shape[0] != len(candidates):
        raise ValueError(
            f"{len(candidates)} grid points but candidate_scores has shape "
            f"{candidate_scores.shape}."
        )
    right = axes[1]
    position = np.arange(len(candidates))
    mean = candidate_scores.mean(axis=1)
    right.errorbar(position, mean, yerr=candidate_scores.std(axis=1), marker="o",
                   linestyle="none", capsize=3, label="mean ± sd over inner folds")  # fmt: skip
    if selected is not None:
        right.plot(position[selected], mean[selected], marker="*", markersize=14, color="C3",
                   linestyle="none", label="selected")  # fmt: skip
    _chance_line(right, chance, "balanced_accuracy")
    right.set_xticks(position, [_grid_label(c) for c in candidates], rotation=60, ha="right",
                     fontsize=7)  # fmt: skip
    right.set_xlabel("grid point")
    right.set_ylabel("balanced accuracy (inner CV)")
    right.set_title("final model selection", fontsize=10)
    right.legend(fontsize="small")
    return fig


def _common_grid(times: Sequence[np.ndarray]) -> np.ndarray:
    steps = [np.diff(t) for t in times if len(t) > 1]
    step = float(np.median(np.concatenate(steps))) if steps else 1.0
    start = min(t[0] for t in times)
    stop = max(t[-1] for t in times)
    return start + step * np.arange(round((stop - start) / step) + 1)


def plot_decision_values(
    times: Sequence[np.ndarray],
    values: Sequence[np.ndarray],
    labels: Sequence[str],
    events: Mapping[str, float] | None = None,
) -> Figure:
    """Decision value against time from cue onset: every trial, and mean ± sd per class.

    Parameters
    ----------
    times : sequence of ndarray
        Per trial, the times of its decisions relative to the cue onset (s), increasing.
    values : sequence of ndarray
        Per trial, the decision values.
    labels : sequence of str
        Per trial, its class (the cued target); classes are drawn in sorted order.
    events : mapping or None
        Other onsets to mark (name → seconds from the cue, e.g. ``{"feedback": 0.5}``).
    """
    if not len(times) == len(values) == len(labels):
        raise ValueError(
            f"times, values and labels differ in length: {len(times)}, {len(values)}, "
            f"{len(labels)}."
        )
    trials = [(np.asarray(t, float), np.asarray(v, float), c)
              for t, v, c in zip(times, values, labels, strict=True) if len(t)]  # fmt: skip
    if not trials:
        raise ValueError("no decisions to plot.")
    grid = _common_grid([t for t, _, _ in trials])
    fig, (ax,) = _panels(1, width=6.0, height=4.0)
    for k, cls in enumerate(sorted({c for _, _, c in trials})):  # same colours in every run
        colour = f"C{k}"
        own = [(t, v) for t, v, c in trials if c == cls]
        on_grid = np.full((len(own), grid.size), np.nan)
        for row, (t, v) in zip(on_grid, own, strict=True):
            inside = (grid >= t[0]) & (grid <= t[-1])
            row[inside] = np.interp(grid[inside], t, v)
            ax.plot(t, v, color=colour, alpha=0.25, linewidth=0.7)
        covered = np.any(np.isfinite(on_grid), axis=0)
        mean = np.nanmean(on_grid[:, covered], axis=0)
        sd = np.nanstd(on_grid[:, covered], axis=0)
        ax.plot(grid[covered], mean, color=colour, linewidth=2.2,
                label=f"{cls}: mean ± sd of {len(own)} trials")  # fmt: skip
        ax.fill_between(grid[covered], mean - sd, mean + sd, color=colour, alpha=0.2)
    ax.axhline(0.0, color="k", linewidth=0.8, label="decision boundary")
    ax.axvline(0.0, color="0.3", linestyle=":", label="cue")
    for k, (name, onset) in enumerate((events or {}).items()):
        ax.axvline(onset, color=f"C{k + 4}", linestyle=":", label=name)
    ax.set_xlabel("time from cue onset (s)")
    ax.set_ylabel("decision value")
    ax.legend(fontsize="small")
    return fig


def plot_confusion(
    targets: Sequence[str], predicted: Sequence[str | None], classes: Sequence[str]
) -> Figure:
    """Targets against decoded classes (:class:`sklearn.metrics.ConfusionMatrixDisplay`);
    trials without any valid decision are counted as ``none``."""
    from sklearn.metrics import ConfusionMatrixDisplay

    if len(targets) != len(predicted):
        raise ValueError(f"{len(targets)} targets but {len(predicted)} predictions.")
    if not len(targets):
        raise ValueError("no trials to plot.")
    decoded = ["none" if p is None else str(p) for p in predicted]
    labels = [*map(str, classes), *(["none"] if "none" in decoded else [])]
    fig, (ax,) = _panels(1, width=4.2, height=3.8)
    ConfusionMatrixDisplay.from_predictions(
        [str(t) for t in targets], decoded, labels=labels, ax=ax, colorbar=False
    )
    ax.set_xlabel("decoded class")
    ax.set_ylabel("target class")
    hits = sum(t == d for t, d in zip(map(str, targets), decoded, strict=True))
    ax.set_title(f"{hits} of {len(targets)} trials hit", fontsize=10)
    return fig
