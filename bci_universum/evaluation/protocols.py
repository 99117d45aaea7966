"""Evaluation protocols: how every data set is cut into training and test splits.

======================  =====================================================================
:class:`WithinSession`  the thesis' nested CV (``universum-svm.md`` §16.6): per session,
                        ``n_splits`` stratified outer folds, ``n_repeats`` times with other
                        shuffles; inner ``inner_splits``-fold model selection over
                        :data:`THESIS_GRID`
:class:`CrossGroup`     MOABB-style transfer: train on some runs (or sessions), test on another;
                        the universum may come from the *test* run's unlabelled rest periods
:class:`LearningCurve`  ``n`` labelled trials per class (nested subsets), all cheap universum
                        trials of the session, repeated random test sets
======================  =====================================================================

The labelled folds of a split depend only on the seed and the data, never on the pipeline or the
universum, so scores of different pipelines and universa are paired split by split.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from numbers import Integral
from typing import Any

import numpy as np
from sklearn.model_selection import StratifiedKFold, StratifiedShuffleSplit

from .._checks import repeated
from .._universum import UNIVERSUM_STR

__all__ = ["THESIS_GRID", "CrossGroup", "LearningCurve", "Split", "WithinSession", "derive_seed"]

THESIS_GRID: dict[str, tuple[float, ...]] = {
    "C": (1.0, 10.0, 100.0),
    "C_universum": (0.0, 1.0, 10.0, 100.0),
    "epsilon": (0.01, 0.05, 0.1, 0.5),
}
"""Inner model-selection grid of the thesis (L2001). Keys are parameter names matched against
the last ``__``-component of the pipeline's parameters (``svm__C`` matches ``C``)."""


def _digest(obj: Any) -> str:
    return hashlib.sha256(json.dumps(obj, sort_keys=True, default=str).encode()).hexdigest()


def derive_seed(*parts: Any) -> int:
    """A deterministic 31-bit seed from ``parts`` (stable across processes and machines)."""
    return int(_digest([repr(p) for p in parts])[:8], 16) & 0x7FFFFFFF


def _where(epochs, session: str | None = None) -> str:
    where = f"data set {epochs.dataset!r}, subject {epochs.subject!r}"
    return where if session is None else f"{where}, session {session!r}"


def _check_counts(y: np.ndarray, idx: np.ndarray, classes, need: int, what: str) -> None:
    for c in classes:
        n = int(np.sum(y[idx] == c))
        if n < need:
            raise ValueError(f"{what}: class {c!r} has {n} labelled trials, fewer than {need}.")


def _not_count(value, least: int) -> bool:
    """Whether ``value`` is not an integer (bools excluded) of at least ``least``."""
    return isinstance(value, bool) or not isinstance(value, Integral) or value < least


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
        Outer stratified folds (thesis: 10); each labelled trial is tested once per repeat.
    inner_splits : int
        Folds of the inner model selection (thesis: 10).
    param_grid : mapping
        Inner grid (default :data:`THESIS_GRID`).
    n_repeats : int
        Repetitions of the outer cross-validation with other shuffles (repeated k-fold: the
        mean over more splits varies less with the shuffle; the corrected t-test accounts for
        the overlap). The first repeat's folds do not depend on ``n_repeats``.
    """

    n_splits: int = 10
    inner_splits: int = 10
    param_grid: Mapping[str, tuple] = field(default_factory=lambda: dict(THESIS_GRID))
    n_repeats: int = 1
    name = "within-session"

    def splits(self, epochs, classes, seed: int) -> Iterator[Split]:
        """Yield the outer splits of ``epochs`` (``n_repeats`` sets of folds per session)."""
        if not (isinstance(self.n_repeats, int) and self.n_repeats >= 1):
            raise ValueError(f"n_repeats must be a positive integer, got {self.n_repeats!r}.")
        y, lab, uni = _masks(epochs, classes)
        sessions = np.asarray(epochs.sessions).astype(str)
        for session in sorted(set(sessions[lab].tolist())):
            in_s = sessions == session
            labelled = np.flatnonzero(lab & in_s)
            _check_counts(y, labelled, classes, self.n_splits, _where(epochs, session))
            for r in range(self.n_repeats):
                # repeat 0 keeps the folds (and cached jobs) of a single cross-validation
                extra = () if r == 0 else (r,)
                cv = StratifiedKFold(
                    self.n_splits,
                    shuffle=True,
                    random_state=derive_seed(
                        seed, epochs.dataset, epochs.subject, session, *extra
                    ),
                )
                prefix = "" if r == 0 else f"repeat{r}-"
                for k, (tr, te) in enumerate(cv.split(labelled, y[labelled])):
                    yield Split(
                        session,
                        f"{prefix}fold{k}",
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
        group with labelled trials is tested once, trained on all other groups). A test group
        may not be one of its pair's training groups (the score would be inflated by trials
        seen in training).
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

    def __post_init__(self) -> None:
        self._validate()

    def _validate(self) -> None:
        if self.group not in ("run", "session"):
            raise ValueError(f"CrossGroup.group must be 'run' or 'session', got {self.group!r}.")
        if self.universum_from not in ("train", "test", "both"):
            raise ValueError(
                "CrossGroup.universum_from must be 'train', 'test' or 'both', got "
                f"{self.universum_from!r}."
            )
        if self.pairs is not None and not len(self.pairs):
            raise ValueError(
                f"CrossGroup.pairs is empty: it would score nothing; name at least one "
                f"(train {self.group}s, test {self.group}) pair, or None to test on every "
                f"{self.group} in turn."
            )
        seen = set()
        for train_groups, test_group in self.pairs or ():
            pair = (tuple(train_groups), test_group)
            where = f"CrossGroup.pairs: pair ({list(train_groups)}, {test_group!r})"
            if pair in seen:
                raise ValueError(
                    f"{where} is listed more than once: its results would be counted twice; "
                    "name each pair once."
                )
            twice = repeated(pair[0])
            if twice:
                raise ValueError(
                    f"{where} names training {self.group}s {twice} more than once (a typo for "
                    f"another {self.group}?); name each {self.group} once."
                )
            seen.add(pair)
            if test_group in train_groups:
                raise ValueError(
                    f"CrossGroup.pairs: pair ({list(train_groups)}, {test_group!r}) tests on "
                    f"{self.group} {test_group!r}, which is also one of its training "
                    f"{self.group}s (its trials would be scored after being trained on)."
                )

    def splits(self, epochs, classes, seed: int) -> Iterator[Split]:
        """Yield one split per transfer (train groups → test group)."""
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

    def __post_init__(self) -> None:
        sizes = list(self.n_per_class)
        if not sizes or any(_not_count(n, 2) for n in sizes):
            raise ValueError(f"n_per_class must all be integers >= 2, got {self.n_per_class}.")
        twice = repeated(sizes)
        if twice:
            raise ValueError(
                f"n_per_class lists {twice} more than once (got {self.n_per_class}): its "
                "results would be counted twice; name each size once."
            )
        if _not_count(self.n_repeats, 1):
            raise ValueError(f"n_repeats must be a positive integer, got {self.n_repeats!r}.")
        if self.n_universum is not None and _not_count(self.n_universum, 1):
            raise ValueError(
                "n_universum must be a positive integer (universum trials per repeat; None: "
                f"all), got {self.n_universum!r}."
            )

    def splits(self, epochs, classes, seed: int) -> Iterator[Split]:
        """Yield ``n_repeats × len(n_per_class)`` splits per session."""
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
