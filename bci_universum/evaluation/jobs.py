"""Evaluation jobs: universa by name, planning, fitting and scoring one job, the job cache.

Each (data set, split, pipeline, universum) is one **job**: build the training set, select
hyperparameters by inner cross-validation and refit (:func:`bci_universum.training.select_and_fit`,
the one training path, also ``train``'s), score the held-out labelled trials. Jobs are
independent, keyed by a hash of everything that determines their result, and cached one file per
job, so an interrupted evaluation resumes where it stopped.

Universa (:data:`UNIVERSA`; applied inside each job from its training trials only)
------------------------------------------------------------------------------------
================  ==============================================================================
``none``           recorded universum trials are dropped
``U_C3``           the recorded universum trials (rest, baseline, other task) of the training pool
``centred``        ``U_C3`` centred on the midpoint of the class means, on the features of the
                   final pipeline step (thesis: after feature extraction)
``U_mean``         mean of one random training trial per class (:class:`~.universa.MeanUniversum`)
``U_nm``           training epochs with motor-dominated ICA components removed
                   (:class:`~.universa.NonMotorUniversum`, needs motor channels in ``ch_names``)
``centred_U_nm``  ``U_nm`` centred like ``centred``
================  ==============================================================================

``U_C3`` and ``centred`` accept a kind, e.g. ``"U_C3:rest"``, to keep only the recorded universum
trials whose ``universum_kinds`` entry is ``rest``.

Data sets and filters
---------------------
A data set is an :class:`~bci_universum.datasets.EpochSet` or a mapping
``band -> EpochSet`` of the same trials causally filtered with each band
(:func:`bci_universum.online.filter_raw` on the continuous recording, then epoched; the
loaders' ``band`` argument). A registry pipeline
(:class:`~bci_universum.pipelines.PipelineFactory`) runs on the variant of its ``band``, so
that it is scored on what the online decoder feeds it; an EpochSet whose ``info["band"]`` is
not the pipeline's band is refused.

Metrics
-------
``accuracy`` (fraction of labelled test trials classified correctly; the thesis reports the error
``1 − accuracy``) for every problem, and ``roc_auc`` (area under the ROC curve of the decision
function, or of ``predict_proba`` for the second class) for two-class problems, as MOABB's
``LeftRightImagery``. Inner model selection maximises balanced accuracy
(:data:`bci_universum.training.SELECTION_SCORING`).
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
import time
import warnings
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from sklearn.base import BaseEstimator, clone
from sklearn.exceptions import ConvergenceWarning
from sklearn.metrics import accuracy_score, roc_auc_score
from sklearn.pipeline import Pipeline

from .._checks import repeated
from .._universum import UNIVERSUM_STR
from ..model_selection import UniversumStratifiedKFold
from ..pipelines import PipelineFactory
from ..training import check_class_count, resolve_grid, select_and_fit
from ..universa import (
    MOTOR_CHANNELS,
    CentredUniversum,
    MeanUniversum,
    NonMotorUniversum,
    WithUniversum,
)
from .protocols import Split, _check_counts, _digest, _where, derive_seed

__all__ = [
    "METRICS",
    "UNIVERSA",
    "Job",
    "accepts_universum",
    "check_classes",
    "data_variants",
    "fit_job",
    "parse_universum",
    "plan_jobs",
    "run_job",
    "with_universum",
]

UNIVERSA = ("none", "U_C3", "centred", "U_mean", "U_nm", "centred_U_nm")

METRICS = ("accuracy", "roc_auc")

_RECORDED = ("U_C3", "centred")  # universa made of the recorded universum trials

_CACHE_VERSION = 2  # 2: epochs causally filtered outside the pipeline


def _data_digest(epochs) -> str:
    h = hashlib.sha256()
    h.update(np.ascontiguousarray(epochs.X, dtype=np.float64).tobytes())
    for name in ("y", "runs", "sessions", "universum_kinds"):
        h.update(json.dumps([str(v) for v in np.asarray(getattr(epochs, name))]).encode())
    h.update(json.dumps([float(epochs.sfreq), [str(c) for c in epochs.ch_names]]).encode())
    return h.hexdigest()


def parse_universum(name: str) -> tuple[str, str | None]:
    """Split ``"U_C3:rest"`` into ``("U_C3", "rest")``; validate the name."""
    if not isinstance(name, str):
        raise TypeError(f"universum names must be strings, got {name!r}.")
    base, _, kind = name.partition(":")
    if base not in UNIVERSA:
        raise ValueError(f"unknown universum {name!r}; choose from {UNIVERSA}.")
    if kind and base not in _RECORDED:
        raise ValueError(
            f"universum {name!r}: a kind (':{kind}') applies to recorded universa {_RECORDED}."
        )
    return base, kind or None


def _centre_final_step(estimator):
    if isinstance(estimator, Pipeline):
        last_name, last = estimator.steps[-1]
        steps = [*estimator.steps[:-1], (last_name, WithUniversum(last, CentredUniversum()))]
        return Pipeline(steps, memory=estimator.memory)
    return WithUniversum(estimator, CentredUniversum())


def with_universum(estimator, universum: str, epochs, seed: int):
    """Return ``estimator`` wrapped so that fitting it builds the named universum.

    Recorded universa (``U_C3``) need no wrapping: their trials are in the training set.
    """
    base, _ = parse_universum(universum)
    if base in ("centred", "centred_U_nm"):
        estimator = _centre_final_step(estimator)
    if base == "U_mean":
        estimator = WithUniversum(estimator, MeanUniversum(random_state=seed))
    if base in ("U_nm", "centred_U_nm"):
        motor = [c for c in MOTOR_CHANNELS if c in list(epochs.ch_names)]
        builder = NonMotorUniversum(motor, ch_names=list(epochs.ch_names))
        estimator = WithUniversum(estimator, builder)
    return estimator


def _training_universum(split: Split, universum: str, epochs) -> np.ndarray:
    base, kind = parse_universum(universum)
    if base not in _RECORDED:
        return split.universum[:0]
    if kind is None:
        return split.universum
    kinds = np.asarray(epochs.universum_kinds).astype(str)
    return split.universum[kinds[split.universum] == kind]


@dataclass(frozen=True, eq=False)
class Job:
    """One (data set, split, pipeline, universum) unit of work; ``key`` names its cache file."""

    key: str
    data_index: int
    pipeline: str
    universum: str
    protocol: str
    split: Split
    train: np.ndarray
    param_grid: dict
    seed: int
    band: tuple | None = None


def _band(band) -> tuple | None:
    if band is None:
        return None
    low, high = band
    out = (None if low is None else float(low), None if high is None else float(high))
    return None if out == (None, None) else out


def data_variants(dataset) -> dict:
    """``band -> EpochSet`` of one data set (an EpochSet, or a mapping band → EpochSet).

    The variants must hold the same trials (labels, runs, sessions, universum kinds), only
    filtered differently; an EpochSet's band is its ``info["band"]`` (absent: unfiltered).
    """
    if hasattr(dataset, "X"):
        return {_band(dataset.info.get("band")): dataset}
    if not isinstance(dataset, Mapping) or not dataset:
        raise TypeError(
            f"a data set must be an EpochSet or a mapping band -> EpochSet, got {dataset!r}."
        )
    variants = {_band(band): epochs for band, epochs in dataset.items()}
    first = next(iter(variants.values()))
    for band, epochs in variants.items():
        same = all(
            np.array_equal(np.asarray(getattr(epochs, name)), np.asarray(getattr(first, name)))
            for name in ("y", "runs", "sessions", "universum_kinds")
        )
        if not same or epochs.X.shape != first.X.shape:
            raise ValueError(
                f"{_where(first)}: the epochs filtered with band {band} hold other trials than "
                "the other bands' (same recording, same epoching expected)."
            )
    return variants


def _variant(variants: dict, factory, name: str, epochs) -> tuple:
    """The band and EpochSet pipeline ``name`` runs on."""
    if not hasattr(factory, "band"):
        if len(variants) == 1:
            return next(iter(variants.items()))
        raise ValueError(
            f"{_where(epochs)}: pipeline {name!r} has no band attribute to choose among the "
            f"filtered variants {sorted(map(str, variants))}."
        )
    band = _band(factory.band)
    if band not in variants:
        raise ValueError(
            f"{_where(epochs)}: pipeline {name!r} runs on epochs causally filtered with band "
            f"{band} Hz (bci_universum.online.filter_raw on the continuous recording, then "
            f"epoched: the loaders' band argument); the data hold bands "
            f"{sorted(map(str, variants))}."
        )
    return band, variants[band]


def accepts_universum(estimator) -> bool:
    """Whether the final classifier of ``estimator`` learns from universum trials.

    The final step of a pipeline is inspected; meta-estimators (an ``estimator`` parameter:
    ``WithUniversum``, a wrapper fitting on labelled trials only, ECOC) defer to the estimator
    they wrap. A classifier learns from universum trials when it has a ``universum_label``
    parameter (the universum classifiers); others (LDA, logistic regression) would treat them as
    a class or ignore them.
    """
    while True:
        if isinstance(estimator, Pipeline):
            estimator = estimator.steps[-1][1]
            continue
        params = estimator.get_params(deep=False)
        if isinstance(params.get("estimator"), BaseEstimator):
            estimator = params["estimator"]
            continue
        return "universum_label" in params


def _describe(estimator) -> dict:
    simple = (bool, int, float, str, type(None), tuple, list)
    return {
        k: (repr(v) if isinstance(v, simple) else type(v).__name__)
        for k, v in sorted(estimator.get_params(deep=True).items())
    }


def _check_factories(pipelines) -> None:
    if not isinstance(pipelines, Mapping) or not pipelines:
        raise ValueError("pipelines must be a non-empty mapping name -> factory(epochs).")
    for name, factory in pipelines.items():
        if not callable(factory):
            raise TypeError(f"pipeline {name!r}: the factory {factory!r} is not callable.")


def check_classes(classes) -> None:
    """Refuse a ``classes`` selection that is empty or names a class more than once.

    Parameters
    ----------
    classes : sequence of str or None
        Labelled classes to use (``None``: all those of each data set).

    Raises
    ------
    ValueError
        Naming ``classes`` and what is wrong with it.
    """
    if classes is None:
        return
    classes = list(classes)
    if not classes:
        raise ValueError("classes is empty: name the labelled classes to use (or all: None).")
    twice = repeated(classes)
    if twice:
        raise ValueError(
            f"classes lists {twice} more than once (got {classes}): name each class once."
        )


def check_universa(universa) -> list[str]:
    """Refuse a ``universa`` selection that is empty, names an unknown universum or names one
    more than once (its rows would be computed and counted twice).

    Parameters
    ----------
    universa : str or sequence of str
        Universum names (``"none"``, ``"U_C3:rest"``, ...).

    Returns
    -------
    universa : list of str

    Raises
    ------
    ValueError
        Naming ``universa`` and what is wrong with it.
    """
    universa = [universa] if isinstance(universa, str) else list(universa)
    if not universa:
        raise ValueError("universa must name at least one universum (e.g. 'none').")
    for u in universa:
        parse_universum(u)
    twice = repeated(universa)
    if twice:
        raise ValueError(
            f"universa lists {twice} more than once (got {universa}): its results would be "
            "counted twice; name each universum once."
        )
    return universa


def _check_distinct(datasets_epochs) -> None:
    """Refuse one (data set, subject) given twice: its rows would be counted twice."""
    seen = set()
    for epochs in datasets_epochs:
        who = (epochs.dataset, epochs.subject)
        if who in seen:
            raise ValueError(
                f"{_where(epochs)} is given more than once (e.g. subjects = [1, 1]): its "
                "results would be counted twice; give each subject of a data set once."
            )
        seen.add(who)


def _check_epochs(epochs, classes) -> tuple:
    y = np.asarray(epochs.y).astype(str)
    present = sorted(set(y.tolist()) - {UNIVERSUM_STR})
    if classes is None:
        classes = present
    missing = sorted(set(classes) - set(present))
    if missing:
        raise ValueError(
            f"{_where(epochs)}: labels {missing} are missing from the data "
            f"(labelled classes present: {present})."
        )
    if len(classes) < 2:
        raise ValueError(
            f"{_where(epochs)}: at least 2 labelled classes are needed, got "
            f"{np.asarray(classes).tolist()}."
        )
    return tuple(sorted(classes))


def _check_universa(epochs, universa: list[str]) -> None:
    kinds = set(np.asarray(epochs.universum_kinds).astype(str).tolist())
    for u in universa:
        base, kind = parse_universum(u)
        if base in ("U_nm", "centred_U_nm") and not set(MOTOR_CHANNELS) & set(epochs.ch_names):
            raise ValueError(
                f"{_where(epochs)}: universum {u!r} needs motor channels "
                f"({', '.join(MOTOR_CHANNELS[:4])}, ...) in ch_names."
            )
        if kind is not None and kind not in kinds:
            raise ValueError(
                f"{_where(epochs)}: universum {u!r}: no universum trials of kind {kind!r}."
            )


def _validate_parameters(estimator, what: str) -> None:
    """scikit-learn's parameter validation of ``estimator`` and of every estimator in it."""
    parts = [estimator, *estimator.get_params(deep=True).values()]
    for part in parts:
        if isinstance(part, BaseEstimator) and hasattr(part, "_parameter_constraints"):
            try:
                part._validate_params()
            except (ValueError, TypeError) as err:
                raise ValueError(f"{what}: {err}") from err


def _check_pipeline(name, factory, estimator, grid, epochs, classes) -> None:
    """Refuse, before any fit, what fitting pipeline ``name`` would refuse later.

    Its parameters, and each value of its inner ``grid`` set alone, pass the steps' own
    parameter validation and fit the data's shape: the leading trial-wise steps (the window cut
    out of the epochs) fit one trial, the next step accepts their channel count (CSP's
    ``n_components``); a two-class registry pipeline gets two classes.
    """
    points = [(f"pipeline {name!r}", estimator)]
    for key, values in grid.items():
        what = f"pipeline {name!r}, grid {key.rsplit('__', 1)[-1]}"
        points += [(what, clone(estimator).set_params(**{key: value})) for value in values]
    for what, point in points:
        _validate_parameters(point, what)
        _check_shapes(point, epochs, what)
    if isinstance(factory, PipelineFactory):
        try:
            check_class_count(factory.name, classes)
        except ValueError as err:
            raise ValueError(f"pipeline {name!r}: {err} Choose two with classes = [...].") from err


def _check_shapes(estimator, epochs, what: str) -> None:
    """Run the leading trial-wise steps of ``estimator`` on one trial and check that the next
    step accepts the channels they leave."""
    while isinstance(estimator, WithUniversum):
        estimator = estimator.estimator
    if not isinstance(estimator, Pipeline):
        return
    X = np.asarray(epochs.X[:1], dtype=np.float64)
    for step_name, step in estimator.steps:
        if step in (None, "passthrough"):
            continue
        try:
            if not getattr(step, "_trialwise", False):
                if X.ndim == 3 and hasattr(step, "_check_n_channels"):
                    step._check_n_channels(X.shape[1])
                return
            X = clone(step).fit_transform(X)
        except ValueError as err:
            raise ValueError(f"{_where(epochs)}: {what}, step {step_name!r}: {err}") from err


def _without_universum(pipelines, estimators, universa) -> set[tuple[str, str]]:
    """(pipeline, universum) pairs to skip: pipelines that cannot learn from a universum."""
    skipped = set()
    for name, estimator in estimators.items():
        aware = getattr(pipelines[name], "universum_aware", None)
        if not (accepts_universum(estimator) if aware is None else aware):
            skipped |= {(name, u) for u in universa if u != "none"}
    return skipped


def plan_jobs(datasets, pipelines, universa, protocol, *, seed: int = 0, classes=None):
    """Validate everything and list the jobs; raises before any computation.

    Parameters are those of :func:`evaluate`.

    Returns
    -------
    jobs : list of Job
    """
    _check_factories(pipelines)
    check_classes(classes)
    universa = check_universa(universa)
    for attr in ("splits", "param_grid", "name"):
        if not hasattr(protocol, attr):
            raise TypeError(
                f"protocol {protocol!r} has no {attr!r}; use WithinSession, CrossGroup or "
                "LearningCurve."
            )
    datasets = list(datasets)
    _check_distinct(next(iter(data_variants(dataset).values())) for dataset in datasets)
    jobs, skipped = [], set()
    for d, dataset in enumerate(datasets):
        variants = data_variants(dataset)
        epochs = next(iter(variants.values()))
        used = _check_epochs(epochs, classes)
        _check_universa(epochs, universa)
        y = np.asarray(epochs.y).astype(str)
        chosen = {
            name: _variant(variants, factory, name, epochs) for name, factory in pipelines.items()
        }
        data_ids = {band: _data_digest(variants[band]) for band, _ in chosen.values()}
        estimators = {name: pipelines[name](e) for name, (_, e) in chosen.items()}
        skip = _without_universum(pipelines, estimators, universa)
        skipped |= skip
        for name, estimator in estimators.items():
            for u in universa:
                if (name, u) not in skip:
                    est = with_universum(estimator, u, epochs, seed)
                    grid = resolve_grid(est, protocol.param_grid, has_universum=u != "none")
                    _check_pipeline(name, pipelines[name], est, grid, epochs, used)
        for split in protocol.splits(epochs, used, seed):
            where = f"{_where(epochs, split.session)}, split {split.name}"
            job_seed = derive_seed(seed, epochs.dataset, epochs.subject, split.session, split.name)
            for u in universa:
                uni = _training_universum(split, u, epochs)
                if parse_universum(u)[0] in _RECORDED and uni.size == 0:
                    raise ValueError(f"{where}: universum {u!r} has no recorded universum trials.")
                train = np.sort(np.concatenate([split.train, uni]))
                for name in estimators:
                    if (name, u) in skip:
                        continue
                    band = chosen[name][0]
                    est = with_universum(estimators[name], u, epochs, job_seed)
                    grid = resolve_grid(est, protocol.param_grid, has_universum=u != "none")
                    if grid:
                        inner = f"{where} (inner {split.inner_splits}-fold model selection)"
                        _check_counts(y, split.train, used, split.inner_splits, inner)
                    key = _digest({
                        "version": _CACHE_VERSION, "data": data_ids[band],
                        "dataset": epochs.dataset, "subject": epochs.subject, "pipeline": name,
                        "estimator": _describe(est), "universum": u, "protocol": protocol.name,
                        "session": split.session, "split": split.name, "train": train.tolist(),
                        "test": split.test.tolist(), "grid": grid,
                        "inner": split.inner_splits, "seed": job_seed,
                    })[:32]  # fmt: skip
                    jobs.append(
                        Job(key, d, name, u, protocol.name, split, train, grid, job_seed, band)
                    )
    if skipped:
        warnings.warn(
            "pipelines without a universum classifier run with universum 'none' only; "
            f"skipping {sorted(skipped)}.",
            UserWarning,
            stacklevel=3,
        )
    return jobs


def _decision_scores(model, X) -> np.ndarray:
    if hasattr(model, "decision_function"):
        return np.asarray(model.decision_function(X), dtype=float)
    return np.asarray(model.predict_proba(X), dtype=float)[:, 1]


def fit_job(job: Job, epochs, factory: Callable) -> tuple[BaseEstimator, dict]:
    """The model of one job: selected on and refitted to its training trials.

    Parameters
    ----------
    job : Job
    epochs : EpochSet
        The data set's variant the job's pipeline runs on (its band).
    factory : callable
        The pipeline's factory.

    Returns
    -------
    model : estimator
        Fitted (:func:`bci_universum.training.select_and_fit`).
    params : dict
        The selected grid point (full parameter paths).
    """
    y = np.asarray(epochs.y).astype(str).astype(object)
    X = np.asarray(epochs.X, dtype=np.float64)
    estimator = with_universum(factory(epochs), job.universum, epochs, job.seed)
    cv = UniversumStratifiedKFold(job.split.inner_splits, shuffle=True, random_state=job.seed)
    return select_and_fit(estimator, job.param_grid, X[job.train], y[job.train], cv)


def _fit_counting_caps(job: Job, epochs, factory: Callable) -> tuple:
    """:func:`fit_job`, and how many solver fits in it (inner folds and refit) hit their
    iteration cap: the solvers report it as a ``ConvergenceWarning``, counted here and
    re-emitted."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", ConvergenceWarning)
        model, params = fit_job(job, epochs, factory)
    for w in caught:
        warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)
    return model, params, sum(issubclass(w.category, ConvergenceWarning) for w in caught)


def run_job(job: Job, epochs, factory: Callable) -> list[dict]:
    """Fit and score one job; returns its tidy result rows (one per metric).

    Besides the scores, a row records the fit time (selection and refit) and ``n_cap_hits``,
    the solver fits of the job that stopped at their iteration cap.
    """
    start = time.perf_counter()
    model, params, n_cap_hits = _fit_counting_caps(job, epochs, factory)
    params = {k.rsplit("__", 1)[-1]: v for k, v in sorted(params.items())}
    fit_time = time.perf_counter() - start
    y = np.asarray(epochs.y).astype(str).astype(object)
    X_test, y_test = np.asarray(epochs.X, dtype=np.float64)[job.split.test], y[job.split.test]
    scores = {
        "accuracy": float(
            accuracy_score(y_test.astype(str), np.asarray(model.predict(X_test)).astype(str))
        )
    }
    classes = np.asarray(model.classes_).astype(str)
    if classes.size == 2:
        scores["roc_auc"] = float(
            roc_auc_score(y_test.astype(str) == classes[1], _decision_scores(model, X_test))
        )
    base = {
        "dataset": str(epochs.dataset),
        "subject": str(epochs.subject),
        "session": job.split.session,
        "pipeline": job.pipeline,
        "universum": job.universum,
        "protocol": job.protocol,
        "split": job.split.name,
        "n_train": int(job.split.train.size),
        "n_test": int(job.split.test.size),
        "n_universum": int(job.train.size - job.split.train.size),
    }
    return [
        {
            **base,
            "metric": m,
            "score": s,
            "fit_time": fit_time,
            "n_cap_hits": n_cap_hits,
            "params": json.dumps(params, sort_keys=True),
            "key": job.key,
        }
        for m, s in scores.items()
    ]


def _cache_path(cache_dir: Path, key: str) -> Path:
    return cache_dir / f"{key}.json"


def _load_cached(cache_dir: Path | None, key: str) -> list[dict] | None:
    if cache_dir is None:
        return None
    path = _cache_path(cache_dir, key)
    try:
        payload = json.loads(path.read_text())
    except (FileNotFoundError, json.JSONDecodeError):
        return None
    return payload["rows"] if payload.get("key") == key else None


def _store(cache_dir: Path | None, key: str, rows: list[dict]) -> None:
    if cache_dir is None:
        return
    fd, tmp = tempfile.mkstemp(dir=cache_dir, prefix=f".{key}.", suffix=".tmp")
    with os.fdopen(fd, "w") as fh:
        json.dump({"key": key, "rows": rows}, fh)
        fh.flush()
        os.fsync(fh.fileno())
    os.replace(tmp, _cache_path(cache_dir, key))
