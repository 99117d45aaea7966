"""Offline evaluation engine: protocols, universa by name, cached jobs on serial/joblib/Dask.

An evaluation crosses data sets (one :class:`~bci_universum.evaluation_data.EpochSet` per
subject and data set), pipelines (name → factory), universa (by name) and a protocol. The
protocol cuts every data set into splits; each (split, pipeline, universum) is one **job**: build
the training set, select hyperparameters by inner cross-validation, refit, score the held-out
labelled trials. Jobs are independent, keyed by a hash of everything that determines their
result, and cached one file per job, so an interrupted evaluation resumes where it stopped.

Protocols
---------
======================  =====================================================================
:class:`WithinSession`  the thesis' nested CV (``universum-svm.md`` §16.6): per session,
                        ``n_splits`` stratified outer folds; inner ``inner_splits``-fold model
                        selection over :data:`THESIS_GRID`
:class:`CrossGroup`     MOABB-style transfer: train on some runs (or sessions), test on another;
                        the universum may come from the *test* run's unlabelled rest periods
:class:`LearningCurve`  ``n`` labelled trials per class (nested subsets), all cheap universum
                        trials of the session, repeated random test sets
======================  =====================================================================

The labelled folds of a split depend only on the seed and the data, never on the pipeline or the
universum, so scores of different pipelines and universa are paired split by split.

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

Metrics
-------
``accuracy`` (fraction of labelled test trials classified correctly; the thesis reports the error
``1 − accuracy``) for every problem, and ``roc_auc`` (area under the ROC curve of the decision
function, or of ``predict_proba`` for the second class) for two-class problems, as MOABB's
``LeftRightImagery``. Inner model selection maximises accuracy.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
import time
import warnings
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from sklearn.base import BaseEstimator, clone
from sklearn.metrics import accuracy_score, roc_auc_score
from sklearn.model_selection import (
    GridSearchCV,
    ParameterGrid,
    StratifiedKFold,
    StratifiedShuffleSplit,
)
from sklearn.pipeline import Pipeline

from ._universum import UNIVERSUM_STR
from .model_selection import UniversumStratifiedKFold, universum_scorer
from .universa import (
    MOTOR_CHANNELS,
    CentredUniversum,
    MeanUniversum,
    NonMotorUniversum,
    WithUniversum,
)

__all__ = [
    "BACKENDS",
    "METRICS",
    "THESIS_GRID",
    "UNIVERSA",
    "CrossGroup",
    "Job",
    "LearningCurve",
    "Split",
    "WithinSession",
    "evaluate",
    "plan_jobs",
    "run_job",
    "select_and_fit",
    "with_universum",
]

THESIS_GRID: dict[str, tuple[float, ...]] = {
    "C": (1.0, 10.0, 100.0),
    "C_universum": (0.0, 1.0, 10.0, 100.0),
    "epsilon": (0.01, 0.05, 0.1, 0.5),
}
"""Inner model-selection grid of the thesis (L2001). Keys are parameter names matched against
the last ``__``-component of the pipeline's parameters (``svm__C`` matches ``C``)."""

UNIVERSUM_PARAMETERS = ("C_universum", "epsilon")
"""Grid entries searched only when the training set has universum trials (they change nothing
otherwise)."""

UNIVERSA = ("none", "U_C3", "centred", "U_mean", "U_nm", "centred_U_nm")
METRICS = ("accuracy", "roc_auc")
BACKENDS = ("serial", "joblib", "dask")
_RECORDED = ("U_C3", "centred")  # universa made of the recorded universum trials
_CACHE_VERSION = 1

PipelineFactory = Callable[[Any], BaseEstimator]
"""``factory(epochs) -> unfitted estimator``; called with the EpochSet being evaluated (for its
``sfreq``, ``ch_names``); must be picklable for the joblib and Dask backends. A factory with the
attribute ``universum_aware = False`` is run with universum ``none`` only (see
:func:`accepts_universum` for the default)."""


# --- small helpers --------------------------------------------------------------------------


def _digest(obj: Any) -> str:
    return hashlib.sha256(json.dumps(obj, sort_keys=True, default=str).encode()).hexdigest()


def derive_seed(*parts: Any) -> int:
    """A deterministic 31-bit seed from ``parts`` (stable across processes and machines)."""
    return int(_digest([repr(p) for p in parts])[:8], 16) & 0x7FFFFFFF


def _data_digest(epochs) -> str:
    h = hashlib.sha256()
    h.update(np.ascontiguousarray(epochs.X, dtype=np.float64).tobytes())
    for name in ("y", "runs", "sessions", "universum_kinds"):
        h.update(json.dumps([str(v) for v in np.asarray(getattr(epochs, name))]).encode())
    h.update(json.dumps([float(epochs.sfreq), [str(c) for c in epochs.ch_names]]).encode())
    return h.hexdigest()


def _where(epochs, session: str | None = None) -> str:
    where = f"data set {epochs.dataset!r}, subject {epochs.subject!r}"
    return where if session is None else f"{where}, session {session!r}"


def _check_counts(y: np.ndarray, idx: np.ndarray, classes, need: int, what: str) -> None:
    for c in classes:
        n = int(np.sum(y[idx] == c))
        if n < need:
            raise ValueError(f"{what}: class {c!r} has {n} labelled trials, fewer than {need}.")


# --- splits and protocols -------------------------------------------------------------------


@dataclass(frozen=True, eq=False)
class Split:
    """One train/test division of one data set.

    Attributes
    ----------
    session : str
        Session the test trials belong to.
    name : str
        Split label (``fold3``, ``R04+R08->R12``, ``repeat2``).
    train, test : ndarray of int
        Indices of the labelled training and test trials.
    universum : ndarray of int
        Indices of the recorded universum trials the training set may use.
    inner_splits : int
        Folds of the inner model selection.
    """

    session: str
    name: str
    train: np.ndarray
    test: np.ndarray
    universum: np.ndarray
    inner_splits: int


def _masks(epochs, classes) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    y = np.asarray(epochs.y).astype(str)
    uni = y == UNIVERSUM_STR
    lab = np.isin(y, list(classes)) & ~uni
    return y, lab, uni


@dataclass(frozen=True)
class WithinSession:
    """Nested cross-validation within each session (thesis protocol; MOABB within-session).

    Parameters
    ----------
    n_splits : int
        Outer stratified folds (thesis: 10); each labelled trial is tested once.
    inner_splits : int
        Folds of the inner model selection (thesis: 10).
    param_grid : mapping
        Inner grid (default :data:`THESIS_GRID`).
    """

    n_splits: int = 10
    inner_splits: int = 10
    param_grid: Mapping[str, tuple] = field(default_factory=lambda: dict(THESIS_GRID))
    name = "within-session"

    def splits(self, epochs, classes, seed: int) -> Iterator[Split]:
        """Yield the outer splits of ``epochs`` (one set of folds per session)."""
        y, lab, uni = _masks(epochs, classes)
        sessions = np.asarray(epochs.sessions).astype(str)
        for session in sorted(set(sessions[lab].tolist())):
            in_s = sessions == session
            labelled = np.flatnonzero(lab & in_s)
            _check_counts(y, labelled, classes, self.n_splits, _where(epochs, session))
            cv = StratifiedKFold(
                self.n_splits,
                shuffle=True,
                random_state=derive_seed(seed, epochs.dataset, epochs.subject, session),
            )
            for k, (tr, te) in enumerate(cv.split(labelled, y[labelled])):
                yield Split(
                    session,
                    f"fold{k}",
                    labelled[tr],
                    labelled[te],
                    np.flatnonzero(uni & in_s),
                    self.inner_splits,
                )


@dataclass(frozen=True)
class CrossGroup:
    """Train on some runs (or sessions), test on another one (MOABB cross-session style).

    Parameters
    ----------
    group : {"run", "session"}
        ``"run"``: within each session, runs are the groups; ``"session"``: sessions are.
    pairs : sequence of (train_groups, test_group) or None
        Explicit transfers, e.g. ``((("R04",), "R08"),)``; ``None``: leave one group out (every
        group with labelled trials is tested once, trained on all other groups).
    universum_from : {"train", "test", "both"}
        Where the recorded universum trials come from: every group except the test group, the
        test group only (its unlabelled rest periods, recorded before its trials), or all.
    inner_splits : int
        Folds of the inner model selection.
    param_grid : mapping
        Inner grid.
    """

    group: str = "run"
    pairs: tuple | None = None
    universum_from: str = "train"
    inner_splits: int = 10
    param_grid: Mapping[str, tuple] = field(default_factory=lambda: dict(THESIS_GRID))

    @property
    def name(self) -> str:
        return f"cross-{self.group}"

    def _validate(self) -> None:
        if self.group not in ("run", "session"):
            raise ValueError(f"CrossGroup.group must be 'run' or 'session', got {self.group!r}.")
        if self.universum_from not in ("train", "test", "both"):
            raise ValueError(
                "CrossGroup.universum_from must be 'train', 'test' or 'both', got "
                f"{self.universum_from!r}."
            )

    def splits(self, epochs, classes, seed: int) -> Iterator[Split]:
        """Yield one split per transfer (train groups → test group)."""
        self._validate()
        y, lab, uni = _masks(epochs, classes)
        sessions = np.asarray(epochs.sessions).astype(str)
        groups = (np.asarray(epochs.runs) if self.group == "run" else sessions).astype(str)
        scopes = sorted(set(sessions.tolist())) if self.group == "run" else [None]
        for scope in scopes:
            in_scope = sessions == scope if scope is not None else np.ones(len(y), bool)
            known = set(groups[in_scope].tolist())
            where = _where(epochs, scope)
            testable = sorted(set(groups[lab & in_scope].tolist()))
            if self.pairs is None:
                pairs = [(tuple(g for g in testable if g != t), t) for t in testable]
            else:
                pairs = [(tuple(tr), te) for tr, te in self.pairs]
            if len(testable) < 2 and self.pairs is None:
                raise ValueError(
                    f"{where}: cross-{self.group} needs at least 2 {self.group}s with labelled "
                    f"trials, found {testable}."
                )
            for train_groups, test_group in pairs:
                missing = sorted({*train_groups, test_group} - known)
                if missing:
                    raise ValueError(
                        f"{where}: {self.group}s {missing} not found ({sorted(known)})."
                    )
                train = np.flatnonzero(lab & in_scope & np.isin(groups, train_groups))
                test = np.flatnonzero(lab & in_scope & (groups == test_group))
                if test.size == 0:
                    raise ValueError(
                        f"{where}: {self.group} {test_group!r} has no labelled trials."
                    )
                _check_counts(y, train, classes, 2, f"{where}, train {self.group}s {train_groups}")
                is_test = groups == test_group
                pool = {"train": ~is_test, "test": is_test, "both": np.ones(len(y), bool)}
                yield Split(
                    str(scope) if scope is not None else test_group,
                    f"{'+'.join(train_groups)}->{test_group}",
                    train,
                    test,
                    np.flatnonzero(uni & in_scope & pool[self.universum_from]),
                    self.inner_splits,
                )


@dataclass(frozen=True)
class LearningCurve:
    """Scores against the number of labelled training trials per class, within each session.

    Each repeat holds out a stratified random ``test_size`` fraction of the labelled trials and
    shuffles the rest; the training set of size ``n`` takes the first ``n`` trials of each class
    (nested: the set for 10 contains the set for 5). All recorded universum trials of the
    session (or ``n_universum`` random ones per repeat) form the training universum.

    Parameters
    ----------
    n_per_class : sequence of int
        Labelled training trials per class.
    n_repeats : int
        Random test sets per session.
    test_size : float
        Fraction of labelled trials held out.
    n_universum : int or None
        Universum trials per repeat (``None``: all).
    inner_splits : int
        Inner folds (reduced to ``n`` when ``n`` is smaller).
    param_grid : mapping
        Inner grid.
    """

    n_per_class: tuple[int, ...] = (5, 10, 20, 40)
    n_repeats: int = 10
    test_size: float = 0.25
    n_universum: int | None = None
    inner_splits: int = 5
    param_grid: Mapping[str, tuple] = field(default_factory=lambda: dict(THESIS_GRID))
    name = "learning-curve"

    def splits(self, epochs, classes, seed: int) -> Iterator[Split]:
        """Yield ``n_repeats × len(n_per_class)`` splits per session."""
        if min(self.n_per_class, default=0) < 2:
            raise ValueError(f"n_per_class must all be >= 2, got {self.n_per_class}.")
        y, lab, uni = _masks(epochs, classes)
        sessions = np.asarray(epochs.sessions).astype(str)
        for session in sorted(set(sessions[lab].tolist())):
            in_s = sessions == session
            labelled = np.flatnonzero(lab & in_s)
            universum = np.flatnonzero(uni & in_s)
            where = _where(epochs, session)
            for r in range(self.n_repeats):
                rng = np.random.default_rng(
                    derive_seed(seed, epochs.dataset, epochs.subject, session, r)
                )
                cv = StratifiedShuffleSplit(
                    1, test_size=self.test_size, random_state=rng.integers(2**31)
                )
                tr, te = next(cv.split(labelled, y[labelled]))
                pool = labelled[rng.permutation(tr)]
                _check_counts(y, pool, classes, max(self.n_per_class), f"{where} (training pool)")
                u = universum
                if self.n_universum is not None and self.n_universum < u.size:
                    u = np.sort(rng.choice(u, self.n_universum, replace=False))
                for n in self.n_per_class:
                    train = np.sort(np.concatenate([pool[y[pool] == c][:n] for c in classes]))
                    yield Split(
                        session,
                        f"repeat{r}",
                        train,
                        np.sort(labelled[te]),
                        u,
                        min(self.inner_splits, n),
                    )


# --- universa by name -----------------------------------------------------------------------


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


# --- jobs -----------------------------------------------------------------------------------


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


def resolve_grid(estimator, param_grid: Mapping, has_universum: bool) -> dict[str, list]:
    """Map grid names onto ``estimator``'s parameters (``C`` → ``svm__C``).

    Entries of :data:`UNIVERSUM_PARAMETERS` are dropped without universum trials; names the
    estimator does not have are ignored (CSP + LDA has no ``C``).
    """
    grid = {}
    for key in sorted(estimator.get_params(deep=True)):
        leaf = key.rsplit("__", 1)[-1]
        if leaf in param_grid and (has_universum or leaf not in UNIVERSUM_PARAMETERS):
            grid[key] = list(param_grid[leaf])
    return grid


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
            f"{_where(epochs)}: at least 2 labelled classes are needed, got {list(classes)}."
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
    universa = [universa] if isinstance(universa, str) else list(universa)
    if not universa:
        raise ValueError("universa must name at least one universum (e.g. 'none').")
    for u in universa:
        parse_universum(u)
    for attr in ("splits", "param_grid", "name"):
        if not hasattr(protocol, attr):
            raise TypeError(
                f"protocol {protocol!r} has no {attr!r}; use WithinSession, CrossGroup or "
                "LearningCurve."
            )
    jobs, skipped = [], set()
    for d, epochs in enumerate(datasets):
        used = _check_epochs(epochs, classes)
        _check_universa(epochs, universa)
        data_id = _data_digest(epochs)
        y = np.asarray(epochs.y).astype(str)
        estimators = {name: factory(epochs) for name, factory in pipelines.items()}
        skip = _without_universum(pipelines, estimators, universa)
        skipped |= skip
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
                    est = with_universum(estimators[name], u, epochs, job_seed)
                    grid = resolve_grid(est, protocol.param_grid, has_universum=u != "none")
                    if grid:
                        inner = f"{where} (inner {split.inner_splits}-fold model selection)"
                        _check_counts(y, split.train, used, split.inner_splits, inner)
                    key = _digest({
                        "version": _CACHE_VERSION, "data": data_id, "dataset": epochs.dataset,
                        "subject": epochs.subject, "pipeline": name, "estimator": _describe(est),
                        "universum": u, "protocol": protocol.name, "session": split.session,
                        "split": split.name, "train": train.tolist(),
                        "test": split.test.tolist(), "grid": grid,
                        "inner": split.inner_splits, "seed": job_seed,
                    })[:32]  # fmt: skip
                    jobs.append(Job(key, d, name, u, protocol.name, split, train, grid, job_seed))
    if skipped:
        warnings.warn(
            "pipelines without a universum classifier run with universum 'none' only; "
            f"skipping {sorted(skipped)}.",
            UserWarning,
            stacklevel=3,
        )
    return jobs


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


def select_and_fit(estimator, param_grid: Mapping, X, y, cv) -> tuple[BaseEstimator, dict]:
    """Pick the grid point of best mean inner-CV accuracy, refit it on ``X, y``.

    Same selection as :class:`~sklearn.model_selection.GridSearchCV` (first of tied best
    points, universum trials never scored), but when the grid only touches the final step of a
    pipeline the feature steps (and a universum builder wrapping the pipeline) are fitted once
    per inner fold instead of once per grid point: the thesis grid has 48 points, and the
    Infomax ICA of U_nm or of the thesis pipeline dominates the cost.

    Returns
    -------
    model : estimator
        Refitted on all of ``X, y`` with the selected parameters.
    best_params : dict
        Selected parameters (full parameter paths); empty without a grid.
    """
    if not param_grid:
        return clone(estimator).fit(X, y), {}
    parts = _final_step_search(estimator, param_grid)
    if parts is None:
        search = GridSearchCV(
            estimator, dict(param_grid), cv=cv, scoring=universum_scorer("accuracy"),
            error_score="raise",
        )  # fmt: skip
        search.fit(X, y)
        return search.best_estimator_, dict(search.best_params_)
    builder, features, final, prefix = parts
    candidates = list(ParameterGrid(dict(param_grid)))
    scorer = universum_scorer("accuracy")
    scores = np.empty((len(candidates), cv.get_n_splits()))
    for f, (train, valid) in enumerate(cv.split(X, y)):
        X_fit, y_fit = X[train], y[train]
        if builder is not None:
            X_fit, y_fit = clone(builder).build(X_fit, y_fit)
        steps = clone(features)
        F_fit = steps.fit_transform(X_fit, y_fit)
        F_valid = steps.transform(X[valid])
        for c, params in enumerate(candidates):
            local = {key[len(prefix) :]: value for key, value in params.items()}
            model = clone(final).set_params(**local).fit(F_fit, y_fit)
            scores[c, f] = scorer(model, F_valid, y[valid])
    best = candidates[int(np.argmax(scores.mean(axis=1)))]
    return clone(estimator).set_params(**best).fit(X, y), best


def _decision_scores(model, X) -> np.ndarray:
    if hasattr(model, "decision_function"):
        return np.asarray(model.decision_function(X), dtype=float)
    return np.asarray(model.predict_proba(X), dtype=float)[:, 1]


def run_job(job: Job, epochs, factory: PipelineFactory) -> list[dict]:
    """Fit and score one job; returns its tidy result rows (one per metric)."""
    y = np.asarray(epochs.y).astype(str).astype(object)
    X = np.asarray(epochs.X, dtype=np.float64)
    estimator = with_universum(factory(epochs), job.universum, epochs, job.seed)
    X_train, y_train = X[job.train], y[job.train]
    start = time.perf_counter()
    cv = UniversumStratifiedKFold(job.split.inner_splits, shuffle=True, random_state=job.seed)
    model, params = select_and_fit(estimator, job.param_grid, X_train, y_train, cv)
    params = {k.rsplit("__", 1)[-1]: v for k, v in sorted(params.items())}
    fit_time = time.perf_counter() - start
    X_test, y_test = X[job.split.test], y[job.split.test]
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
            "params": json.dumps(params, sort_keys=True),
            "key": job.key,
        }
        for m, s in scores.items()
    ]


# --- cache ----------------------------------------------------------------------------------


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


# --- backends -------------------------------------------------------------------------------


def _run_serial(todo, datasets, pipelines, n_jobs, scheduler) -> Iterator[tuple[Job, list]]:
    for job in todo:
        yield job, run_job(job, datasets[job.data_index], pipelines[job.pipeline])


def _run_and_tag(job, epochs, factory):
    return job, run_job(job, epochs, factory)


def _run_joblib(todo, datasets, pipelines, n_jobs, scheduler) -> Iterator[tuple[Job, list]]:
    from joblib import Parallel, delayed

    parallel = Parallel(n_jobs=n_jobs, return_as="generator_unordered")
    yield from parallel(
        delayed(_run_and_tag)(job, datasets[job.data_index], pipelines[job.pipeline])
        for job in todo
    )


def _run_dask(todo, datasets, pipelines, n_jobs, scheduler) -> Iterator[tuple[Job, list]]:
    from distributed import Client, LocalCluster, as_completed

    own = None
    if isinstance(scheduler, Client):
        client = scheduler
    elif scheduler is None:
        own = LocalCluster(n_workers=max(n_jobs, 1), threads_per_worker=1)
        client = Client(own)
    else:
        client = Client(scheduler)
    try:
        used = sorted({job.data_index for job in todo})
        scattered = dict(zip(used, client.scatter([datasets[i] for i in used]), strict=True))
        futures = [
            client.submit(
                _run_and_tag,
                job,
                scattered[job.data_index],
                pipelines[job.pipeline],
                key=f"bci-universum-{job.key}",
                pure=False,
            )
            for job in todo
        ]
        try:
            for future in as_completed(futures):
                yield future.result()
        finally:
            client.cancel(futures)
    finally:
        if client is not scheduler:
            client.close()
        if own is not None:
            own.close()


_BACKEND_RUNNERS = {"serial": _run_serial, "joblib": _run_joblib, "dask": _run_dask}


def evaluate(
    datasets,
    pipelines: Mapping[str, PipelineFactory],
    universa: Iterable[str] | str = ("none",),
    protocol=None,
    *,
    cache_dir: str | os.PathLike | None = None,
    n_jobs: int = 1,
    backend: str = "serial",
    scheduler=None,
    seed: int = 0,
    progress: bool = True,
    classes: Iterable[str] | None = None,
) -> list[dict]:
    """Evaluate pipelines × universa on data sets under a protocol.

    Everything is validated and every job planned before the first fit, so a bad configuration
    (unknown universum, missing labels, too few trials for the folds) fails at once.

    Parameters
    ----------
    datasets : EpochSet or iterable of EpochSet
        One per (data set, subject); see :mod:`bci_universum.evaluation_data`.
    pipelines : mapping of str to callable
        ``name -> factory(epochs)`` returning an unfitted estimator (picklable for joblib/Dask).
    universa : str or iterable of str
        Names from :data:`UNIVERSA` (``"U_C3:rest"`` selects a recorded kind).
    protocol : WithinSession, CrossGroup or LearningCurve
        Default ``WithinSession()`` (the thesis protocol).
    cache_dir : path or None
        One JSON file per finished job, written atomically; jobs found there are not rerun.
    n_jobs : int
        Parallel workers (joblib processes; Dask workers of a LocalCluster it starts itself).
    backend : {"serial", "joblib", "dask"}
        Execution backend; all give identical scores for the same ``seed``.
    scheduler : str, distributed.Client or None
        Dask scheduler address or client (``None``: a LocalCluster with ``n_jobs`` workers).
    seed : int
        Seed of all splits, inner folds and random universa.
    progress : bool
        Show a tqdm progress bar over jobs.
    classes : iterable of str or None
        Labelled classes to use (default: all labelled classes of each data set).

    Returns
    -------
    rows : list of dict
        Tidy rows ``dataset, subject, session, pipeline, universum, protocol, split, n_train,
        n_test, n_universum, metric, score, fit_time, params, key`` in planning order.
        ``n_train`` counts labelled training trials, ``n_universum`` the recorded universum
        trials added to them (generated universa, U_mean and U_nm, are not counted); ``params``
        is the JSON of the selected grid point; ``fit_time`` (s) covers model selection and
        refit; ``key`` names the job's cache file.
    """
    from tqdm.auto import tqdm

    if backend not in BACKENDS:
        raise ValueError(f"backend must be one of {BACKENDS}, got {backend!r}.")
    if backend == "dask":
        try:
            import distributed  # noqa: F401
        except ImportError as err:  # pragma: no cover - depends on the environment
            raise ImportError(
                "backend='dask' needs dask[distributed] (pip install 'bci-universum[dask]')."
            ) from err
    datasets = [datasets] if hasattr(datasets, "X") else list(datasets)
    protocol = WithinSession() if protocol is None else protocol
    jobs = plan_jobs(
        datasets,
        pipelines,
        universa,
        protocol,
        seed=seed,
        classes=None if classes is None else list(classes),
    )
    cache = None
    if cache_dir is not None:
        cache = Path(cache_dir)
        cache.mkdir(parents=True, exist_ok=True)
    results = {job.key: _load_cached(cache, job.key) for job in jobs}
    todo = [job for job in jobs if results[job.key] is None]
    with tqdm(
        total=len(jobs),
        initial=len(jobs) - len(todo),
        disable=not progress,
        desc="evaluate",
        unit="job",
    ) as bar:
        if todo:
            runner = _BACKEND_RUNNERS[backend]
            for job, rows in runner(todo, datasets, dict(pipelines), n_jobs, scheduler):
                _store(cache, job.key, rows)
                results[job.key] = rows
                bar.update()
    return [row for job in jobs for row in results[job.key]]
