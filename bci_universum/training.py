"""Model selection and final fit: the one training path of ``train`` and ``evaluate``.

:func:`select_and_fit` picks a grid point by universum-aware inner cross-validation and refits
it; the evaluation engine calls it once per job, :func:`train` (``bci-universum train``) for the
nested cross-validation table and the final model. Grids name plain parameters (``C``,
``C_universum``, ``epsilon``), resolved against the pipeline by :func:`resolve_grid`.

:func:`train` reads recordings, passes them through the online decoder's causal filter
(:func:`bci_universum.online.filter_raw`), cuts the trials of the pipeline's window (exactly
the samples of the decoder's windows), reports nested cross-validated accuracy with and without
the universum on the same outer folds, refits on all trials and saves the model with its
metadata (:mod:`bci_universum.model_io`): band, window, pipeline, selected parameters and the
recordings used.
"""

from __future__ import annotations

import json
import logging
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import mne
import numpy as np
from sklearn.base import clone
from sklearn.model_selection import GridSearchCV, ParameterGrid
from sklearn.pipeline import Pipeline
from threadpoolctl import threadpool_limits

from ._universum import UNIVERSUM_STR, drop_universum
from .datasets import epochs_from_raw, read_recording, recording_name
from .markers import apply_marker_map, resolve_marker_map
from .model_io import (
    ModelMetadata,
    check_classes,
    check_model_path,
    for_channels,
    load_model,
    save_model,
)
from .model_selection import UniversumStratifiedKFold, universum_scorer
from .online import FILTER_ORDER, filter_raw
from .pipelines import get_pipeline, make_pipeline, pipeline_params, with_prior
from .universa import WithUniversum

logger = logging.getLogger(__name__)

__all__ = [
    "DEFAULT_GRID",
    "PRIOR_WEIGHTS",
    "UNIVERSUM_PARAMETERS",
    "TrainingResult",
    "check_class_count",
    "inner_cv",
    "resolve_grid",
    "select_and_fit",
    "train",
]

DEFAULT_GRID: dict[str, tuple[float, ...]] = {
    "C": (0.1, 1.0, 10.0),
    "C_universum": (0.01, 0.1, 1.0),
}
"""Grid of ``train`` (plain parameter names; those a pipeline lacks are ignored)."""

UNIVERSUM_PARAMETERS = ("C_universum", "epsilon")
"""Grid entries searched only when the training set has universum trials (they change nothing
otherwise)."""

PRIOR_WEIGHTS = (0.0, 0.5, 1.0)
"""Weights ``λ`` of a previous session's model (biased regularisation) tried with a prior."""

SELECTION_SCORING = "balanced_accuracy"
"""Inner-CV score of model selection. A decision that always gives one class scores chance
(1 / n_classes) whatever the fold's class balance, so it never beats a grid point that ranks
the classes better (plain accuracy rewarded it with the majority fraction: a flat learning
curve at 58.3 % on S001)."""

#: Trials per class ``train`` needs: two outer folds whose training parts still split into
#: two inner folds.
MIN_TRIALS_PER_CLASS = 4


def resolve_grid(estimator, param_grid: Mapping, has_universum: bool) -> dict[str, list]:
    """Map grid names onto ``estimator``'s parameters (``C`` → ``clf__C``).

    Entries of :data:`UNIVERSUM_PARAMETERS` are dropped without universum trials; names the
    estimator does not have are ignored (CSP + LDA has no ``C``).
    """
    grid = {}
    for key in sorted(estimator.get_params(deep=True)):
        leaf = key.rsplit("__", 1)[-1]
        if leaf in param_grid and (has_universum or leaf not in UNIVERSUM_PARAMETERS):
            grid[key] = list(param_grid[leaf])
    return grid


def inner_cv(y: np.ndarray, n_splits: int, seed) -> UniversumStratifiedKFold:
    """Universum-aware stratified folds: ``n_splits``, fewer when a class has fewer trials."""
    labelled = np.asarray(y)[np.asarray(y) != UNIVERSUM_STR]
    folds = max(2, min(n_splits, min(Counter(labelled.tolist()).values())))
    return UniversumStratifiedKFold(folds, shuffle=True, random_state=seed)


def _final_step_search(estimator, param_grid):
    """Split ``[WithUniversum(]Pipeline(features..., final)[)]`` for a final-step-only grid.

    Returns ``(builder, features, final, prefix)`` or ``None`` when the grid touches other
    steps or the estimator has another shape.
    """
    builder, outer = None, ""
    if isinstance(estimator, WithUniversum):
        builder, estimator, outer = estimator.builder, estimator.estimator, "estimator__"
    if not isinstance(estimator, Pipeline) or len(estimator.steps) < 2:
        return None
    prefix = f"{outer}{estimator.steps[-1][0]}__"
    if not all(key.startswith(prefix) for key in param_grid):
        return None
    return builder, estimator[:-1], estimator.steps[-1][1], prefix


def _shared_feature_fits(features: Pipeline, X, y, folds) -> tuple | None:
    """Feature steps whose last one has ``fit_transform_folds`` (CSP), fitted on ``X, y``
    sharing its per-trial work with the inner folds; None for other steps.

    The steps before it must be trial-wise (``_trialwise``: a window, a band-pass, a channel
    pick), so that applying them once to all trials equals applying them per fold.

    Returns
    -------
    steps : list of (str, estimator)
        The feature steps, fitted on ``X, y``.
    features : ndarray
        Their output for ``X``.
    fold_features : list of (ndarray, ndarray)
        Per inner fold, the features of its training and validation trials.
    """
    *leading, (name, last) = features.steps
    if not hasattr(last, "fit_transform_folds"):
        return None
    if not all(
        step in (None, "passthrough") or getattr(step, "_trialwise", False) for _, step in leading
    ):
        return None
    steps = []
    for step_name, step in leading:
        if step not in (None, "passthrough"):
            step = clone(step)
            X = step.fit_transform(X, y)
        steps.append((step_name, step))
    last = clone(last)
    F, fold_features = last.fit_transform_folds(X, y, folds)
    return [*steps, (name, last)], F, fold_features


def select_and_fit(
    estimator, param_grid: Mapping, X, y, cv, n_jobs: int = 1, return_scores: bool = False
) -> tuple:
    """Pick the grid point of best mean inner-CV balanced accuracy, refit it on ``X, y``.

    Same selection as :class:`~sklearn.model_selection.GridSearchCV` (first of tied best
    points, universum trials never scored), but when the grid only touches the final step of a
    pipeline the feature steps (and a universum builder wrapping the pipeline) are fitted once
    per inner fold instead of once per grid point: the thesis grid has 48 points, and the
    Infomax ICA of U_nm or of the thesis pipeline dominates the cost. A final step with
    ``fit_grid`` (the universum-indifferent LDA and logistic regression) then fits all grid
    points of an inner fold in one call, sharing their factorisations, and a last feature step
    with ``fit_transform_folds`` (CSP) after trial-wise steps computes its per-trial
    statistics once for all inner folds and the refit (whose feature steps are then already
    fitted: only the final step is refitted).

    Parameters
    ----------
    estimator : estimator
        Unfitted.
    param_grid : mapping
        Full parameter paths (see :func:`resolve_grid`) → values; empty: no selection.
    X, y : array-like
        Training trials; universum trials marked in ``y``.
    cv : cross-validator
        Inner folds (universum-aware, e.g. :func:`inner_cv`).
    n_jobs : int
        Parallel jobs of the grid search when it cannot take the final-step shortcut.
    return_scores : bool
        Also return the grid points and their scores.

    Returns
    -------
    model : estimator
        Refitted on all of ``X, y`` with the selected parameters.
    best_params : dict
        Selected parameters (full parameter paths); empty without a grid.
    scores : (list of dict, ndarray of shape (n_candidates, n_folds))
        Only with ``return_scores``: the grid points and their inner-CV balanced accuracy on
        each fold (no points without a grid).
    """
    if not param_grid:
        model = clone(estimator).fit(X, y)
        return (model, {}, ([], np.empty((0, 0)))) if return_scores else (model, {})
    parts = _final_step_search(estimator, param_grid)
    if parts is None:
        search = GridSearchCV(
            estimator, dict(param_grid), cv=cv, scoring=universum_scorer(SELECTION_SCORING),
            n_jobs=n_jobs, error_score="raise",
        )  # fmt: skip
        search.fit(X, y)
        best = dict(search.best_params_)
        if not return_scores:
            return search.best_estimator_, best
        results = search.cv_results_
        folds = [results[f"split{k}_test_score"] for k in range(search.n_splits_)]
        return search.best_estimator_, best, (list(results["params"]), np.column_stack(folds))
    builder, features, final, prefix = parts
    candidates = list(ParameterGrid(dict(param_grid)))
    local = [{key[len(prefix) :]: value for key, value in c.items()} for c in candidates]
    scores = np.empty((len(candidates), cv.get_n_splits()))
    label = getattr(final, "universum_label", None)
    folds = list(cv.split(X, y))
    shared = None if builder is not None else _shared_feature_fits(features, X, y, folds)
    for f, (train, valid) in enumerate(folds):
        y_fit = y[train]
        if shared is not None:
            F_fit, F_valid = shared[2][f]
        else:
            X_fit = X[train]
            if builder is not None:
                X_fit, y_fit = clone(builder).build(X_fit, y_fit)
            steps = clone(features)
            F_fit = steps.fit_transform(X_fit, y_fit)
            F_valid = steps.transform(X[valid])
        # A classifier with ``fit_grid`` fits every grid point at once, sharing the work.
        if hasattr(final, "fit_grid"):
            models = final.fit_grid(F_fit, y_fit, local)
        else:
            models = [clone(final).set_params(**p).fit(F_fit, y_fit) for p in local]
        # a relabelling builder (ThirdCondition) makes more trials universum than the sentinel
        mask = None if builder is None else builder.universum_mask(y[valid])
        F_valid, y_valid, _ = drop_universum(F_valid, y[valid], universum_label=label, mask=mask)
        scores[:, f] = [_balanced_accuracy(y_valid, model.predict(F_valid)) for model in models]
    best = candidates[int(np.argmax(scores.mean(axis=1)))]
    model = clone(estimator).set_params(**best)
    if shared is None:
        model.fit(X, y)
    else:
        steps, F, _ = shared
        model.set_params(**dict(steps))[-1].fit(F, y)
    return (model, best, (candidates, scores)) if return_scores else (model, best)


def _balanced_accuracy(y_true: np.ndarray, y_pred: np.ndarray) -> float:
    """``sklearn.metrics.balanced_accuracy_score`` (the :data:`SELECTION_SCORING`): the mean
    recall of the classes of ``y_true``, without its input checks, which cost more than
    fitting a grid point on a calibration run's features (nine points × five inner folds)."""
    return float(np.mean([np.mean(y_pred[y_true == c] == c) for c in np.unique(y_true)]))


@dataclass(frozen=True)
class TrainingResult:
    """What :func:`train` did.

    Attributes
    ----------
    model_path : Path or None
        Where the model went (None when not saved).
    pipeline : sklearn.pipeline.Pipeline
        The final fitted pipeline.
    metadata : ModelMetadata
        Its metadata (also in the sidecar).
    accuracy_with_universum, accuracy_without_universum : float or None
        Mean nested cross-validated accuracy over the same outer folds (``with`` is None
        when there are no universum trials or the pipeline ignores them).
    fold_accuracies : dict
        ``{"with_universum": [...], "without_universum": [...]}`` per outer fold.
    n_trials : dict
        Labelled trials per class.
    n_universum : dict
        Universum trials per condition.
    n_left_out : dict
        Trials left out of the training, per marker: ``cue/<name>`` of names not in
        ``classes`` and ``universum/<name>`` of names not in ``universum``.
    grid_scores : (list of dict, ndarray)
        The final model's selection: grid points and their inner-CV balanced accuracy per fold
        (:func:`select_and_fit` with ``return_scores``).
    """

    model_path: Path | None
    pipeline: Pipeline
    metadata: ModelMetadata
    accuracy_with_universum: float | None
    accuracy_without_universum: float
    fold_accuracies: dict
    n_trials: dict
    n_universum: dict
    grid_scores: tuple = ([], np.empty((0, 0)))
    n_left_out: dict = field(default_factory=dict)

    def plot(self):
        """The cross-validation summary (:func:`bci_universum.viz.plot_cv_summary`): nested-CV
        accuracy per outer fold with and without the universum, and the inner-CV score of
        every grid point of the final selection, the selected one starred.

        Returns
        -------
        fig : matplotlib.figure.Figure
        """
        from .viz import chance_level, plot_cv_summary

        labels = {"with_universum": "with universum", "without_universum": "without universum"}
        folds = {labels[k]: v for k, v in self.fold_accuracies.items()}
        candidates, scores = self.grid_scores
        selected = self.metadata.params["selected"]
        index = next((k for k, c in enumerate(candidates) if _jsonable(c) == selected), None)
        chance = chance_level("accuracy", len(self.metadata.classes))
        return plot_cv_summary(folds, candidates, scores, index, chance)

    def summary(self) -> str:
        """A short table of the cross-validated accuracies and the training data."""
        meta = self.metadata
        trials = (
            f"Trials: {_counts(self.n_trials)}; universum: {_counts(self.n_universum) or 'none'}"
        )
        if self.n_universum and not get_pipeline(meta.pipeline).universum_aware:
            trials += f" (not used: the {meta.pipeline} pipeline ignores universum trials)"
        if self.n_left_out:
            trials += f"; left out (not in classes or universum): {_counts(self.n_left_out)}"
        lines = [
            f"Pipeline {meta.pipeline}: band {list(meta.band) if meta.band else 'none'} Hz "
            f"(causal), window {list(meta.window)} s, {len(meta.ch_names)} channels, "
            f"{meta.sfreq:g} Hz",
            "Recordings: " + ", ".join(_described(meta)),
            trials,
            f"Nested {meta.cv['n_splits']}-fold CV accuracy, same folds "
            f"(chance {100 / len(meta.classes):.1f} %):",
            f"  {'':<20}{'mean':>8}{'sd':>7}   folds",
        ]
        for label, key in (("with universum", "with_universum"), ("without", "without_universum")):
            folds = self.fold_accuracies.get(key)
            if folds is None:
                lines.append(f"  {label:<20}{'n/a':>8}")
                continue
            folds = 100 * np.asarray(folds)
            per_fold = " ".join(f"{f:.0f}" for f in folds)
            lines.append(f"  {label:<20}{folds.mean():>7.1f}%{folds.std():>7.1f}   {per_fold}")
        prior = meta.params.get("prior")
        if prior:
            lines.append(f"Prior: {prior['model']} ({prior['pipeline']}, {prior['created']})")
        lines.append(f"Selected on all trials: {meta.params['selected']}")
        lines.append(f"Model: {self.model_path if self.model_path else 'not saved'}")
        return "\n".join(lines)


def _described(meta: ModelMetadata) -> list[str]:
    """Each recording's name, with its task and run when the provenance has them."""
    runs = {r["recording"]: r for r in meta.params.get("provenance", {}).get("runs", [])}
    out = []
    for name in meta.recordings:
        run = runs.get(name, {})
        known = [f"{k} {run[k]}" for k in ("task", "run") if run.get(k) is not None]
        out.append(f"{name} ({', '.join(known)})" if known else name)
    return out


def _counts(counts: dict) -> str:
    return ", ".join(f"{name} {n}" for name, n in counts.items())


def _jsonable(values: Mapping) -> dict:
    return json.loads(json.dumps(dict(values), default=str))


def _read_filtered(recordings, marker_map, band, verbose) -> list[mne.io.BaseRaw]:
    """Read every recording, map its markers, check one sampling rate, filter causally.

    The rates are compared before any filtering, so that a recording at another rate is named
    as such (not through the band's Nyquist check); filter errors name their recording too.
    """
    raws = [apply_marker_map(read_recording(r, verbose=verbose), marker_map) for r in recordings]
    names = [recording_name(r) for r in recordings]
    sfreq = raws[0].info["sfreq"]
    for name, raw in zip(names, raws, strict=True):
        if raw.info["sfreq"] != sfreq:
            raise ValueError(
                f"{name} is sampled at {raw.info['sfreq']:g} Hz, {names[0]} at {sfreq:g} Hz: "
                "train on recordings of one sampling rate (resample them first)."
            )
    filtered = []
    for name, raw in zip(names, raws, strict=True):
        try:
            filtered.append(filter_raw(raw, band, verbose=verbose))
        except ValueError as err:
            raise ValueError(f"{name}: {err}") from err
    return filtered


def _load_trials(recordings, classes, universum, band, window, marker_map, verbose):
    """Causally filtered trials of ``window`` (classes' and present universum conditions').

    Returns ``X, y, epochs`` (as :func:`~bci_universum.datasets.epochs_from_raw`), the
    universum trials per condition name and the trials left out per marker (``cue/<name>`` of
    names not in ``classes``, ``universum/<name>`` of names not in ``universum``).
    """
    class_markers = [f"cue/{c}" for c in classes]
    raws = _read_filtered(recordings, marker_map, band, verbose)
    present = {d for raw in raws for d in raw.annotations.description}
    absent = [m for m in class_markers if m not in present]
    if absent:
        hint = ""
        if any(d.startswith("StimulusCode/") for d in present):
            hint = (
                " A BCI2000 file's events are StimulusCode/<n>: give a marker map, e.g. "
                "'StimulusCode/1=cue/left,StimulusCode/2=cue/right'."
            )
        raise ValueError(
            f"No labelled trials of {absent} in the recordings "
            f"{[recording_name(r) for r in recordings]}; markers found: {sorted(present)}." + hint
        )
    universum_markers = [f"universum/{u}" for u in universum if f"universum/{u}" in present]
    # tmax - 1 sample: a trial holds exactly the samples of an online window of tmax - tmin s.
    tmin, tmax = window
    last = tmax - 1.0 / raws[0].info["sfreq"]
    X, y, epochs = epochs_from_raw(
        raws, class_markers, universum_markers or None, tmin, last, verbose=verbose
    )
    counts = Counter(y[y != UNIVERSUM_STR].tolist())
    missing = [c for c in classes if counts[c] == 0]
    if missing:
        raise ValueError(f"No usable trials of class(es) {missing} (cue/<class> markers).")
    if min(counts.values()) < MIN_TRIALS_PER_CLASS:
        raise ValueError(
            f"Nested cross-validation needs at least {MIN_TRIALS_PER_CLASS} trials per class, got "
            f"{dict(counts)}."
        )
    code_to_marker = {code: marker for marker, code in epochs.event_id.items()}
    markers = Counter(code_to_marker[c] for c in epochs.events[:, 2])
    n_universum = {m.split("/", 1)[1]: markers[m] for m in universum_markers if markers[m]}
    kept = {*class_markers, *universum_markers}
    left_out = Counter(
        d
        for raw in raws
        for d in raw.annotations.description
        if d.startswith(("cue/", "universum/")) and d not in kept
    )
    return X, y, epochs, n_universum, dict(sorted(left_out.items()))


def _load_prior(prior, classes, band, epochs: mne.Epochs) -> tuple:
    """A previous session's pipeline for these epochs, and what to record about it."""
    if isinstance(prior, tuple):
        pipeline, metadata = prior
        source = "given"
    else:
        pipeline, metadata = load_model(prior)
        source = str(prior)
    # Same classes in the same (sorted) order: the prior's positive side is classes_[1].
    check_classes(metadata, classes, model="the prior model")
    if metadata.band != band or metadata.filter_order != FILTER_ORDER:
        raise ValueError(
            f"The prior model was trained on the band {metadata.band} Hz (order "
            f"{metadata.filter_order}), this session uses {band} Hz (order {FILTER_ORDER})."
        )
    pipeline = for_channels(pipeline, metadata, epochs.ch_names, epochs.info["sfreq"])
    info = {"model": source, "created": metadata.created, "pipeline": metadata.pipeline}
    return pipeline, info


def _nested_cv(base, grid, X, y, outer, n_splits, seed, n_jobs, keep_universum) -> list[float]:
    scorer = universum_scorer("accuracy")
    scores = []
    for train, test in outer:
        if not keep_universum:
            train = train[y[train] != UNIVERSUM_STR]
        cv = inner_cv(y[train], n_splits, seed)
        model, _ = select_and_fit(base, grid, X[train], y[train], cv, n_jobs)
        scores.append(float(scorer(model, X[test], y[test])))
    return scores


def check_class_count(pipeline: str, classes: Sequence) -> None:
    """Refuse more (or fewer) than two classes for a binary registry pipeline.

    Parameters
    ----------
    pipeline : str
        Registry name (:data:`bci_universum.pipelines.PIPELINES`).
    classes : sequence
        The classes it would be fitted on.

    Raises
    ------
    ValueError
        Naming the pipeline and the classes, when the pipeline is binary
        (``get_pipeline(pipeline).multiclass`` is False) and there are not two classes.
    """
    if len(classes) != 2 and not get_pipeline(pipeline).multiclass:
        raise ValueError(
            f"The {pipeline} pipeline is binary; got {len(classes)} classes: "
            f"{np.asarray(classes).tolist()}."
        )


def _fold_count(n_splits: int, n_trials: Mapping[str, int]) -> int:
    """``n_splits``, or the trials of the smallest class when it has fewer (every outer fold
    tests one trial of each class at least), with a warning saying so."""
    smallest = min(n_trials, key=n_trials.get)
    if n_trials[smallest] >= n_splits:
        return n_splits
    logger.warning(
        "Cross-validating with %d folds instead of %d: class %r has only %d trials (every "
        "fold tests one trial of each class at least).",
        n_trials[smallest],
        n_splits,
        smallest,
        n_trials[smallest],
    )
    return n_trials[smallest]


def train(
    recordings: Sequence,
    classes: Sequence[str],
    universum: Sequence[str] = (),
    *,
    pipeline: str = "ts_usvm",
    params: Mapping | None = None,
    param_grid: Mapping | None = None,
    use_universum: bool = True,
    n_splits: int = 5,
    random_state: int = 0,
    n_jobs: int = 1,
    prior=None,
    output=None,
    overwrite: bool = False,
    provenance: Mapping | None = None,
    marker_map=None,
    verbose=None,
) -> TrainingResult:
    """Fit and evaluate a registry pipeline on recordings; save it with its metadata.

    Parameters
    ----------
    recordings : sequence of path-like or mne.io.BaseRaw
        Continuous recordings (any format :func:`~bci_universum.datasets.read_recording`
        reads) with ``cue/<class>`` and ``universum/<name>`` annotations; labelled and universum
        trials may come from different runs.
    classes : sequence of str
        Class names (markers ``cue/<class>``).
    universum : sequence of str
        Universum condition names (markers ``universum/<name>``; absent ones are skipped).
    pipeline : str
        Registry name (:data:`bci_universum.pipelines.PIPELINES`).
    params : mapping or None
        Pipeline parameter overrides, e.g. ``band`` and ``window``.
    param_grid : mapping or None
        Grid over plain parameter names (default :data:`DEFAULT_GRID`); the "without universum"
        search drops :data:`UNIVERSUM_PARAMETERS`.
    use_universum : bool
        Fit the final model with the universum trials (when there are any). The CV table
        reports both ways regardless, unless the pipeline ignores universum trials
        (``universum_aware=False`` in its registry entry): then they are not used, the CV
        table reports without only and the metadata records no universum.
    n_splits : int
        Outer (and at most inner) cross-validation folds; lowered, with a logged warning, to
        the trials of the smallest class when it has fewer (every fold tests one trial of
        each class at least).
    random_state : int
        Seed of the fold shuffling (the pipeline's own seed is 0).
    n_jobs : int
        Parallel jobs of grid searches that cannot take the final-step shortcut.
    prior : path-like, (pipeline, ModelMetadata) or None
        A previous session's model (same classes, sampling rate and band; its channels are
        picked by name): biased regularisation toward it (:func:`~.pipelines.with_prior`),
        with its weight added to the default grid (:data:`PRIOR_WEIGHTS`).
    output : path-like or None
        Model file to write (with its ``.json`` sidecar); ``None`` does not save.
    overwrite : bool
        Replace an existing model file.
    provenance : mapping or None
        What to record about the recordings beyond their names (e.g. task and run of each),
        stored in the metadata's ``params["provenance"]``.
    marker_map : str | mapping | None
        Renames the recordings' annotations into ``cue/<class>`` and ``universum/<name>``
        markers before the trials are cut (:func:`~bci_universum.markers.resolve_marker_map`:
        a preset, a ``.json`` file, ``"A=B,..."`` pairs or a mapping), e.g.
        ``"StimulusCode/1=cue/left,StimulusCode/2=cue/right"`` for a BCI2000 ``.dat`` file.
        Recorded in the metadata's ``params["marker_map"]``.
    verbose : bool | str | int | None
        MNE verbosity.

    Returns
    -------
    result : TrainingResult
    """
    # before the overrides: a band or window given to a pipeline without one says less
    if "window" not in pipeline_params(pipeline):
        raise ValueError(f"Pipeline {pipeline!r} does not take EEG epochs (it has no window).")
    p = pipeline_params(pipeline, **(params or {}))
    check_class_count(pipeline, classes)
    if not isinstance(n_splits, int) or n_splits < 2:
        raise ValueError(f"n_splits must be an integer ≥ 2, got {n_splits!r}.")
    marker_map = resolve_marker_map(marker_map)
    if output is not None:
        output = check_model_path(output, overwrite=overwrite)
    if isinstance(recordings, str | Path | mne.io.BaseRaw):
        recordings = [recordings]
    if not recordings:
        raise ValueError("No recordings given.")
    X, y, epochs, n_universum, n_left_out = _load_trials(
        recordings, classes, universum, p["band"], p["window"], marker_map, verbose
    )
    n_trials = {c: int(np.sum(y == c)) for c in classes}
    base = make_pipeline(pipeline, sfreq=epochs.info["sfreq"], **p)
    grid_names = dict(DEFAULT_GRID if param_grid is None else param_grid)
    prior_info = None
    if prior is not None:
        prior_pipeline, prior_info = _load_prior(prior, classes, p["band"], epochs)
        base = with_prior(base, prior_pipeline)
        if param_grid is None:
            grid_names["prior_weight"] = PRIOR_WEIGHTS
    grid_with = resolve_grid(base, grid_names, has_universum=True)
    grid_without = resolve_grid(base, grid_names, has_universum=False)
    folds = _fold_count(n_splits, n_trials)
    # a pipeline whose classifier drops universum trials would fit the same model twice
    learns_universum = bool(n_universum) and get_pipeline(pipeline).universum_aware
    with_universum = learns_universum and use_universum
    grid = grid_with if with_universum else grid_without
    keep = slice(None) if with_universum else y != UNIVERSUM_STR
    # Many small (channels × channels) problems: BLAS threads only contend for the cores.
    with threadpool_limits(limits=1, user_api="blas"):
        outer = list(
            UniversumStratifiedKFold(folds, shuffle=True, random_state=random_state).split(X, y)
        )
        fold_accuracies = {
            "without_universum": _nested_cv(
                base, grid_without, X, y, outer, folds, random_state, n_jobs, False
            )
        }
        if learns_universum:
            fold_accuracies["with_universum"] = _nested_cv(
                base, grid_with, X, y, outer, folds, random_state, n_jobs, True
            )
        cv = inner_cv(y[keep], folds, random_state)
        fitted, selected, grid_scores = select_and_fit(
            base, grid, X[keep], y[keep], cv, n_jobs, return_scores=True
        )

    def _stats(key):
        folds_ = fold_accuracies.get(key)
        if folds_ is None:
            return None
        return {"mean": float(np.mean(folds_)), "std": float(np.std(folds_)), "folds": folds_}

    metadata = ModelMetadata(
        ch_names=epochs.ch_names,
        sfreq=epochs.info["sfreq"],
        band=p["band"],
        window=p["window"],
        classes=[str(c) for c in fitted.classes_],
        universum=list(n_universum) if with_universum else [],
        pipeline=pipeline,
        params={
            "pipeline": _jsonable(p),
            "selected": _jsonable(selected),
            "grid": _jsonable(grid),
            "prior": prior_info,
            "provenance": _jsonable(provenance or {}),
            "marker_map": marker_map,
        },
        filter_order=FILTER_ORDER,
        cv={
            "n_splits": folds,
            "scheme": "nested universum-aware stratified k-fold, same outer folds",
            "with_universum": _stats("with_universum"),
            "without_universum": _stats("without_universum"),
        },
        n_trials={**n_trials, **{f"universum/{k}": v for k, v in n_universum.items()}},
        recordings=[recording_name(r) for r in recordings],
    )
    if output is not None:
        save_model(output, fitted, metadata, overwrite=overwrite)
    return TrainingResult(
        model_path=output,
        pipeline=fitted,
        metadata=metadata,
        accuracy_with_universum=(metadata.cv["with_universum"] or {}).get("mean"),
        accuracy_without_universum=metadata.cv["without_universum"]["mean"],
        fold_accuracies=fold_accuracies,
        n_trials=n_trials,
        n_universum=n_universum,
        grid_scores=grid_scores,
        n_left_out=n_left_out,
    )
