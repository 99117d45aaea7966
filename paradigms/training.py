"""Training a decoder from recorded sessions (``bci-universum train``).

Recordings written by the project's recorder (labelled trials marked ``cue/<class>``, universum
trials ``universum/<name>``) are band-passed with the *causal* filter of the online decoder
(:func:`bci_universum.online.design_bandpass`, applied from a zero state at the start of every
recording), cut into trials of the session's window, and used to fit a named pipeline whose
hyperparameters are chosen by universum-aware cross-validation. Because the filter is not part of
the pipeline but of the decoder, the online decoder feeds the pipeline exactly what it was
trained on.

Cross-validated accuracy is reported with and without the universum on the same outer folds
(nested CV: the hyperparameters are selected inside every outer training fold; "without" drops
the universum trials and the universum cost from the grid). The final model is refitted on all
trials and saved with its metadata (:mod:`bci_universum.model_io`).
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import mne
import numpy as np
from sklearn.base import clone
from sklearn.model_selection import GridSearchCV
from sklearn.pipeline import Pipeline
from sklearn.preprocessing import StandardScaler

from bci_universum import UNIVERSUM_STR
from bci_universum.classifiers import UniversumSVC
from bci_universum.datasets import epochs_from_raw
from bci_universum.features import CSP, TangentSpace
from bci_universum.model_io import ModelMetadata, check_model_path, save_model
from bci_universum.model_selection import UniversumStratifiedKFold, universum_scorer
from bci_universum.online import causal_filter, design_bandpass

from .config import SessionConfig

PIPELINES = ("tangent-usvm", "csp-usvm")
FILTER_ORDER = 4
# Hyperparameter grid of the classifier; "without universum" drops the universum cost.
DEFAULT_GRID = {"classifier__C": [0.1, 1.0, 10.0], "classifier__C_universum": [0.01, 0.1, 1.0]}
_UNIVERSUM_PARAM = "classifier__C_universum"


def make_pipeline(name: str, n_channels: int) -> Pipeline:
    """The named decoding pipeline (unfitted); input: causally band-passed epochs.

    Parameters
    ----------
    name : {"tangent-usvm", "csp-usvm"}
        ``"tangent-usvm"``: Riemannian tangent space (OAS covariances) → linear
        :class:`~bci_universum.classifiers.UniversumSVC`; ``"csp-usvm"``: CSP log-variance
        (4 filters, OAS covariances) → standardisation → linear ``UniversumSVC``.
    n_channels : int
        Number of channels (CSP uses at most that many filters).

    Returns
    -------
    pipeline : sklearn.pipeline.Pipeline
        Steps ``features`` (… ``scale``) and ``classifier``.
    """
    classifier = ("classifier", UniversumSVC(kernel="linear"))
    if name == "tangent-usvm":
        return Pipeline([("features", TangentSpace(estimator="oas")), classifier])
    if name == "csp-usvm":
        csp = CSP(n_components=min(4, n_channels), cov_est="oas")
        return Pipeline([("features", csp), ("scale", StandardScaler()), classifier])
    raise ValueError(f"Unknown pipeline {name!r}; known pipelines: {list(PIPELINES)}.")


@dataclass(frozen=True)
class TrainingResult:
    """What :func:`train_model` did.

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
        when there are no universum trials).
    fold_accuracies : dict
        ``{"with_universum": [...], "without_universum": [...]}`` per outer fold.
    n_trials : dict
        Labelled trials per class.
    n_universum : dict
        Universum trials per condition.
    """

    model_path: Path | None
    pipeline: Pipeline
    metadata: ModelMetadata
    accuracy_with_universum: float | None
    accuracy_without_universum: float
    fold_accuracies: dict
    n_trials: dict
    n_universum: dict

    def summary(self) -> str:
        """A short table of the cross-validated accuracies and the training data."""
        meta = self.metadata
        lines = [
            f"Pipeline {meta.pipeline}: band {list(meta.band) if meta.band else 'none'} Hz "
            f"(causal), window {list(meta.window)} s, {len(meta.ch_names)} channels, "
            f"{meta.sfreq:g} Hz",
            f"Trials: {_counts(self.n_trials)}; universum: {_counts(self.n_universum) or 'none'}",
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
        lines.append(f"Selected on all trials: {meta.params['selected']}")
        lines.append(f"Model: {self.model_path if self.model_path else 'not saved'}")
        return "\n".join(lines)


def _counts(counts: dict) -> str:
    return ", ".join(f"{name} {n}" for name, n in counts.items())


def recording_files(recordings: Sequence) -> list:
    """Expand folders into their ``*_raw.fif`` recordings; check that files exist.

    Parameters
    ----------
    recordings : sequence of path-like or mne.io.BaseRaw
        Files, session folders (every ``*_raw.fif`` directly inside, sorted), or Raw objects.

    Returns
    -------
    recordings : list of Path or mne.io.BaseRaw
    """
    if isinstance(recordings, str | Path | mne.io.BaseRaw):
        recordings = [recordings]
    if not recordings:
        raise ValueError("No recordings given.")
    out, missing = [], []
    for item in recordings:
        if isinstance(item, mne.io.BaseRaw):
            out.append(item)
            continue
        path = Path(item)
        if path.is_dir():
            found = sorted(path.glob("*_raw.fif"))
            if not found:
                raise FileNotFoundError(f"No recordings (*_raw.fif) in folder {path}.")
            out.extend(found)
        elif path.is_file():
            out.append(path)
        else:
            missing.append(str(path))
    if missing:
        raise FileNotFoundError(f"Recording(s) not found: {missing}.")
    return out


def filter_like_online(raw: mne.io.BaseRaw, band, order: int = FILTER_ORDER) -> mne.io.BaseRaw:
    """A copy of ``raw`` whose data channels went through the online decoder's causal filter.

    The filter starts from a zero state at the first sample, as the decoder does at the start of
    a stream; non-finite samples enter it as zeros (as online) and stay non-finite in the output
    so that the trials holding them are dropped.
    """
    raw = raw.copy().load_data()
    sos = design_bandpass(raw.info["sfreq"], None if band is None else tuple(band), order)

    def _filter(data: np.ndarray) -> np.ndarray:
        bad = ~np.isfinite(data)
        filtered = causal_filter(np.where(bad, 0.0, data).T, sos).T
        filtered[bad] = np.nan
        return filtered

    return raw.apply_function(_filter, picks="data", channel_wise=False)


def _jsonable(values: dict) -> dict:
    return json.loads(json.dumps(values, default=str))


def _read(recording, verbose) -> mne.io.BaseRaw:
    if isinstance(recording, mne.io.BaseRaw):
        return recording
    return mne.io.read_raw(recording, preload=True, verbose=verbose)


def _check_trials(y: np.ndarray, classes: Sequence[str]) -> None:
    counts = Counter(y[y != UNIVERSUM_STR])
    absent = [c for c in classes if counts[c] == 0]
    if absent:
        raise ValueError(f"No usable trials of class(es) {absent} (cue/<class> markers).")
    fewest = min(counts.values())
    if fewest < 2:
        raise ValueError(
            f"Cross-validation needs at least 2 trials per class, got {dict(counts)}."
        )


def _search(pipeline: Pipeline, grid: dict, y_train: np.ndarray, n_splits: int, seed, n_jobs):
    """Grid search with universum-aware folds (as many as the smallest class allows)."""
    labelled = y_train[y_train != UNIVERSUM_STR]
    folds = max(2, min(n_splits, min(Counter(labelled).values())))
    return GridSearchCV(
        pipeline,
        grid,
        cv=UniversumStratifiedKFold(folds, shuffle=True, random_state=seed),
        scoring=universum_scorer("accuracy"),
        n_jobs=n_jobs,
        error_score="raise",
    )


def _nested_cv(pipeline, grid, X, y, outer, seed, n_jobs, keep_universum: bool) -> list[float]:
    scorer = universum_scorer("accuracy")
    scores = []
    for train, test in outer:
        if not keep_universum:
            train = train[y[train] != UNIVERSUM_STR]
        search = _search(clone(pipeline), grid, y[train], len(outer), seed, n_jobs)
        search.fit(X[train], y[train])
        scores.append(float(scorer(search, X[test], y[test])))
    return scores


def train_model(
    recordings: Sequence,
    config: SessionConfig | None = None,
    *,
    output=None,
    pipeline: str | None = None,
    use_universum: bool = True,
    param_grid: dict | None = None,
    n_splits: int = 5,
    random_state: int = 0,
    n_jobs: int = 1,
    overwrite: bool = False,
    verbose=None,
) -> TrainingResult:
    """Fit and evaluate a decoder on recorded sessions and save it with its metadata.

    Parameters
    ----------
    recordings : sequence of path-like or mne.io.BaseRaw
        Recording files, session folders (their ``*_raw.fif``) or Raw objects; labelled and
        universum trials may come from different runs.
    config : SessionConfig or None
        Classes (``[paradigm] classes``), universum conditions (``[paradigm] universum``; those
        absent from the recordings are skipped), pipeline name, band and window
        (``[pipeline]``). ``None``: the defaults.
    output : path-like or None
        Model file to write (with its ``.json`` sidecar); ``None`` does not save.
    pipeline : str or None
        Pipeline name overriding ``[pipeline] name`` (one of :data:`PIPELINES`).
    use_universum : bool
        Fit the final model with the universum trials (when there are any). The CV table
        reports both ways regardless.
    param_grid : dict or None
        Grid over the pipeline's parameters (default :data:`DEFAULT_GRID`); the "without
        universum" search uses it without ``classifier__C_universum``.
    n_splits : int
        Outer (and at most inner) cross-validation folds; fewer when a class has fewer trials.
    random_state : int
        Seed of the fold shuffling.
    n_jobs : int
        Parallel jobs of the grid searches.
    overwrite : bool
        Replace an existing model file.
    verbose : bool | str | int | None
        MNE verbosity.

    Returns
    -------
    result : TrainingResult
    """
    config = SessionConfig() if config is None else config
    name = config.pipeline.name if pipeline is None else pipeline
    if name not in PIPELINES:
        raise ValueError(f"Unknown pipeline {name!r}; known pipelines: {list(PIPELINES)}.")
    if len(config.paradigm.classes) != 2:
        raise ValueError(
            f"The {name} pipeline is binary; [paradigm] classes has "
            f"{len(config.paradigm.classes)}: {config.paradigm.classes}."
        )
    if not isinstance(n_splits, int) or n_splits < 2:
        raise ValueError(f"n_splits must be an integer ≥ 2, got {n_splits!r}.")
    if output is not None:
        output = check_model_path(output, overwrite=overwrite)
    files = recording_files(recordings)
    band, (tmin, tmax) = config.pipeline.band, config.pipeline.window
    raws = [filter_like_online(_read(f, verbose), band) for f in files]
    present = {d for raw in raws for d in raw.annotations.description}
    universum_markers = [m for m in config.universum_markers if m in present]
    absent = [m for m in config.class_markers if m not in present]
    if absent:
        raise ValueError(
            f"No labelled trials of {absent} in the recordings {[str(f) for f in files]}; "
            f"markers found: {sorted(present)}."
        )
    # tmax - 1 sample: a trial holds exactly the samples of an online window of tmax - tmin s.
    last = tmax - 1.0 / raws[0].info["sfreq"]
    X, y, epochs = epochs_from_raw(
        raws, config.class_markers, universum_markers or None, tmin, last, verbose=verbose
    )
    _check_trials(y, config.paradigm.classes)
    code_to_marker = {code: marker for marker, code in epochs.event_id.items()}
    n_universum = dict(
        sorted(
            Counter(
                code_to_marker[c].split("/", 1)[1]
                for c in epochs.events[:, 2]
                if code_to_marker[c] in universum_markers
            ).items()
        )
    )
    n_trials = {c: int(np.sum(y == c)) for c in config.paradigm.classes}

    base = make_pipeline(name, X.shape[1])
    grid_with = dict(DEFAULT_GRID if param_grid is None else param_grid)
    grid_without = {k: v for k, v in grid_with.items() if k != _UNIVERSUM_PARAM}
    folds = min(n_splits, *n_trials.values())
    outer = list(
        UniversumStratifiedKFold(folds, shuffle=True, random_state=random_state).split(X, y)
    )
    fold_accuracies = {
        "without_universum": _nested_cv(
            base, grid_without, X, y, outer, random_state, n_jobs, keep_universum=False
        )
    }
    if n_universum:
        fold_accuracies["with_universum"] = _nested_cv(
            base, grid_with, X, y, outer, random_state, n_jobs, keep_universum=True
        )
    with_universum = bool(n_universum) and use_universum
    keep = slice(None) if with_universum else y != UNIVERSUM_STR
    final = _search(
        base, grid_with if with_universum else grid_without, y[keep], folds, random_state, n_jobs
    ).fit(X[keep], y[keep])
    fitted = final.best_estimator_

    def _stats(key):
        folds_ = fold_accuracies.get(key)
        if folds_ is None:
            return None
        return {"mean": float(np.mean(folds_)), "std": float(np.std(folds_)), "folds": folds_}

    metadata = ModelMetadata(
        ch_names=epochs.ch_names,
        sfreq=epochs.info["sfreq"],
        band=tuple(band),
        window=(tmin, tmax),
        classes=[str(c) for c in fitted.classes_],
        universum=list(n_universum) if with_universum else [],
        pipeline=name,
        params={
            "selected": _jsonable(final.best_params_),
            "grid": _jsonable(grid_with if with_universum else grid_without),
        },
        filter_order=FILTER_ORDER,
        cv={
            "n_splits": folds,
            "scheme": "nested universum-aware stratified k-fold, same outer folds",
            "with_universum": _stats("with_universum"),
            "without_universum": _stats("without_universum"),
        },
        n_trials={**n_trials, **{f"universum/{k}": v for k, v in n_universum.items()}},
        recordings=[str(f) if isinstance(f, Path) else repr(f) for f in files],
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
    )
