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
import tempfile
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import mne
import numpy as np
from joblib import Memory
from sklearn.base import clone
from sklearn.frozen import FrozenEstimator
from sklearn.model_selection import GridSearchCV
from sklearn.pipeline import FeatureUnion, Pipeline
from sklearn.preprocessing import StandardScaler
from threadpoolctl import threadpool_limits

from bci_universum import UNIVERSUM_STR
from bci_universum.classifiers import BiasedSVC, PriorDecision, UniversumSVC
from bci_universum.datasets import epochs_from_raw, read_recording
from bci_universum.features import CSP, TangentSpace
from bci_universum.model_io import (
    ModelMetadata,
    check_model_path,
    for_channels,
    load_model,
    save_model,
)
from bci_universum.model_selection import UniversumStratifiedKFold, universum_scorer
from bci_universum.online import causal_filter, design_bandpass

from .config import SessionConfig

PIPELINES = ("tangent-usvm", "csp-usvm")
FILTER_ORDER = 4
# Hyperparameter grid of the classifier; "without universum" drops the universum cost.
DEFAULT_GRID = {"classifier__C": [0.1, 1.0, 10.0], "classifier__C_universum": [0.01, 0.1, 1.0]}
_UNIVERSUM_PARAM = "classifier__C_universum"
# Weights λ of a previous session's model (biased regularisation) tried with ``prior``.
PRIOR_WEIGHTS = (0.0, 0.5, 1.0)
_PRIOR_PARAM = "classifier__prior_weight"
# Two outer folds whose training parts still split into two inner folds.
_MIN_TRIALS = 4


def make_pipeline(name: str, n_channels: int, prior=None) -> Pipeline:
    """The named decoding pipeline (unfitted); input: causally band-passed epochs.

    Parameters
    ----------
    name : {"tangent-usvm", "csp-usvm"}
        ``"tangent-usvm"``: Riemannian tangent space (OAS covariances) → linear
        :class:`~bci_universum.classifiers.UniversumSVC`; ``"csp-usvm"``: CSP log-variance
        (4 filters, OAS covariances) → standardisation → linear ``UniversumSVC``.
    n_channels : int
        Number of channels (CSP uses at most that many filters).
    prior : estimator or None
        A fitted previous-session pipeline taking the same epochs. Its decision value is
        appended to the features (:class:`~bci_universum.classifiers.PriorDecision`) and the
        classifier is a :class:`~bci_universum.classifiers.BiasedSVC` regularised toward it.

    Returns
    -------
    pipeline : sklearn.pipeline.Pipeline
        Steps ``features`` and ``classifier``.
    """
    if name == "tangent-usvm":
        features = TangentSpace(estimator="oas")
    elif name == "csp-usvm":
        csp = CSP(n_components=min(4, n_channels), cov_est="oas")
        features = Pipeline([("csp", csp), ("scale", StandardScaler())])
    else:
        raise ValueError(f"Unknown pipeline {name!r}; known pipelines: {list(PIPELINES)}.")
    if prior is None:
        return Pipeline([("features", features), ("classifier", UniversumSVC(kernel="linear"))])
    union = FeatureUnion(
        [("features", features), ("prior", PriorDecision(FrozenEstimator(prior)))]
    )
    classifier = BiasedSVC(prior="last_column", kernel="linear")
    return Pipeline([("features", union), ("classifier", classifier)])


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
        prior = meta.params.get("prior")
        if prior:
            lines.append(f"Prior: {prior['model']} ({prior['pipeline']}, {prior['created']})")
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


def _check_trials(y: np.ndarray, classes: Sequence[str]) -> None:
    counts = Counter(y[y != UNIVERSUM_STR])
    absent = [c for c in classes if counts[c] == 0]
    if absent:
        raise ValueError(f"No usable trials of class(es) {absent} (cue/<class> markers).")
    if min(counts.values()) < _MIN_TRIALS:
        raise ValueError(
            f"Nested cross-validation needs at least {_MIN_TRIALS} trials per class, got "
            f"{dict(counts)}."
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


def _load_trials(files: list, config: SessionConfig, verbose):
    """Causally filtered trials of the configured classes and universum conditions.

    Returns ``X, y, epochs`` (as :func:`epochs_from_raw`) and the universum trials per
    condition name.
    """
    band, (tmin, tmax) = config.pipeline.band, config.pipeline.window
    raws = [filter_like_online(read_recording(f, verbose=verbose), band) for f in files]
    present = {d for raw in raws for d in raw.annotations.description}
    absent = [m for m in config.class_markers if m not in present]
    if absent:
        raise ValueError(
            f"No labelled trials of {absent} in the recordings {[str(f) for f in files]}; "
            f"markers found: {sorted(present)}."
        )
    universum_markers = [m for m in config.universum_markers if m in present]
    # tmax - 1 sample: a trial holds exactly the samples of an online window of tmax - tmin s.
    last = tmax - 1.0 / raws[0].info["sfreq"]
    X, y, epochs = epochs_from_raw(
        raws, config.class_markers, universum_markers or None, tmin, last, verbose=verbose
    )
    _check_trials(y, config.paradigm.classes)
    code_to_marker = {code: marker for marker, code in epochs.event_id.items()}
    markers = Counter(code_to_marker[c] for c in epochs.events[:, 2])
    n_universum = {m.split("/", 1)[1]: markers[m] for m in universum_markers if markers[m]}
    return X, y, epochs, n_universum


def _load_prior(prior, config: SessionConfig, epochs: mne.Epochs) -> tuple:
    """A previous session's pipeline for these epochs, and what to record about it."""
    if isinstance(prior, tuple):
        pipeline, metadata = prior
        source = "given"
    else:
        pipeline, metadata = load_model(prior)
        source = str(prior)
    # Same classes in the same (sorted) order: the prior's positive side is classes_[1].
    if list(metadata.classes) != sorted(config.paradigm.classes):
        raise ValueError(
            f"The prior model's classes {metadata.classes} differ from the session's "
            f"{config.paradigm.classes}."
        )
    band = tuple(config.pipeline.band)
    if metadata.band != band or metadata.filter_order != FILTER_ORDER:
        raise ValueError(
            f"The prior model was trained on the band {metadata.band} Hz (order "
            f"{metadata.filter_order}), this session uses {band} Hz (order {FILTER_ORDER})."
        )
    pipeline = for_channels(pipeline, metadata, epochs.ch_names, epochs.info["sfreq"])
    info = {"model": source, "created": metadata.created, "pipeline": metadata.pipeline}
    return pipeline, info


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
    prior=None,
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
    prior : path-like, (pipeline, ModelMetadata) or None
        A previous session's model (same classes, sampling rate and band; its channels are
        picked by name): biased regularisation toward it
        (:class:`~bci_universum.classifiers.BiasedSVC`), with its weight ``λ`` added to the
        default grid (:data:`PRIOR_WEIGHTS`; 0 ignores the prior). The saved model holds it.
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
    X, y, epochs, n_universum = _load_trials(files, config, verbose)
    n_trials = {c: int(np.sum(y == c)) for c in config.paradigm.classes}
    prior_pipeline, prior_info = (None, None)
    if prior is not None:
        prior_pipeline, prior_info = _load_prior(prior, config, epochs)
    base = make_pipeline(name, X.shape[1], prior_pipeline)
    grid_with = dict(DEFAULT_GRID if param_grid is None else param_grid)
    if prior is not None and param_grid is None:
        grid_with[_PRIOR_PARAM] = list(PRIOR_WEIGHTS)
    grid_without = {k: v for k, v in grid_with.items() if k != _UNIVERSUM_PARAM}
    folds = min(n_splits, *n_trials.values())
    with_universum = bool(n_universum) and use_universum
    grid = grid_with if with_universum else grid_without
    keep = slice(None) if with_universum else y != UNIVERSUM_STR
    # Many small (channels × channels) problems: BLAS threads only contend for the cores.
    # The feature step does not depend on the classifier's grid: cache its fits per fold.
    with threadpool_limits(limits=1, user_api="blas"), tempfile.TemporaryDirectory() as cache:
        base.set_params(memory=Memory(cache, verbose=0))
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
        final = _search(base, grid, y[keep], folds, random_state, n_jobs).fit(X[keep], y[keep])
    fitted = final.best_estimator_.set_params(memory=None)

    def _stats(key):
        folds_ = fold_accuracies.get(key)
        if folds_ is None:
            return None
        return {"mean": float(np.mean(folds_)), "std": float(np.std(folds_)), "folds": folds_}

    metadata = ModelMetadata(
        ch_names=epochs.ch_names,
        sfreq=epochs.info["sfreq"],
        band=tuple(config.pipeline.band),
        window=tuple(config.pipeline.window),
        classes=[str(c) for c in fitted.classes_],
        universum=list(n_universum) if with_universum else [],
        pipeline=name,
        params={
            "selected": _jsonable(final.best_params_),
            "grid": _jsonable(grid),
            "prior": prior_info,
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
