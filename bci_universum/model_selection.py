"""Universum-aware cross-validation: splitters and scorers.

Universum trials travel in ``y`` under a sentinel label (see :mod:`bci_universum._universum`).
Plain scikit-learn splitters would stratify them as a third class and put them in test folds,
and plain scorers would count them as errors. The splitters here stratify the labelled classes
only and, by default, put every universum trial into every training fold and never into a test
fold; :func:`universum_scorer` scores the labelled trials of a test fold only. Together they make
``GridSearchCV`` and ``cross_val_score`` work with universum trials in ``y``::

    search = GridSearchCV(
        LeastSquaresUniversumSVC(),
        {"C": [1, 10, 100], "C_universum": [0, 1, 10, 100]},
        cv=UniversumStratifiedKFold(10),
        scoring=universum_scorer("accuracy"),
    )
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
from sklearn.metrics import get_scorer
from sklearn.model_selection import (
    BaseCrossValidator,
    KFold,
    StratifiedKFold,
    StratifiedShuffleSplit,
)
from sklearn.utils import check_random_state

from ._universum import universum_mask

_UNIVERSUM_MODES = ("train", "split")


def _check_mode(universum: str) -> None:
    if universum not in _UNIVERSUM_MODES:
        raise ValueError(
            f"universum must be one of {_UNIVERSUM_MODES} (universum trials in every training "
            f"fold, or split across folds like labelled trials); got {universum!r}."
        )


def _labelled_and_universum(X, y, universum_label) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Indices of labelled and universum trials, and the labels of the labelled ones."""
    if y is None:
        raise ValueError("The universum-aware splitters need y (labels with universum trials).")
    y = np.asarray(y)
    if y.ndim != 1:
        raise ValueError(f"y must be one-dimensional, got shape {y.shape}.")
    if len(X) != len(y):
        raise ValueError(f"X and y have inconsistent numbers of trials: {len(X)} and {len(y)}.")
    mask = universum_mask(y, universum_label)
    labelled = np.flatnonzero(~mask)
    if labelled.size == 0:
        raise ValueError("y contains only universum trials; there is nothing to stratify.")
    return labelled, np.flatnonzero(mask), y[labelled]


def _merge_folds(labelled, universum, labelled_folds, universum_test):
    """Map per-part fold indices back to ``y`` and join labelled and universum trials."""
    for (train_l, test_l), test_u in zip(labelled_folds, universum_test, strict=True):
        train_u = np.setdiff1d(np.arange(universum.size), test_u, assume_unique=True)
        train = np.sort(np.concatenate([labelled[train_l], universum[train_u]]))
        test = np.sort(np.concatenate([labelled[test_l], universum[test_u]]))
        yield train, test


class UniversumStratifiedKFold(BaseCrossValidator):
    """Stratified k-fold over labelled trials; universum trials kept for training.

    The labelled classes are stratified as in :class:`sklearn.model_selection.StratifiedKFold`;
    the universum label is not treated as a class. With ``universum="train"`` every universum
    trial is in every training fold and in no test fold; with ``universum="split"`` the universum
    trials are split into ``n_splits`` folds too (those in a test fold are then left out of its
    training fold; score with :func:`universum_scorer`).

    Parameters
    ----------
    n_splits : int, default=5
        Number of folds (at least 2).
    shuffle : bool, default=False
        Shuffle each class (and the universum trials) before splitting.
    random_state : int, RandomState instance or None, default=None
        Seed of the shuffling (only with ``shuffle=True``).
    universum : {"train", "split"}, default="train"
        Where universum trials go.
    universum_label : int, str or None, default=None
        Label marking universum trials (``None``: ``-2`` or ``"universum"``).
    """

    def __init__(
        self,
        n_splits: int = 5,
        *,
        shuffle: bool = False,
        random_state=None,
        universum: str = "train",
        universum_label=None,
    ):
        self.n_splits = n_splits
        self.shuffle = shuffle
        self.random_state = random_state
        self.universum = universum
        self.universum_label = universum_label

    def split(self, X, y, groups=None) -> Iterator[tuple[np.ndarray, np.ndarray]]:
        """Generate train and test indices.

        Parameters
        ----------
        X : array-like of shape (n_samples, ...)
            Trials (only their number is used).
        y : array-like of shape (n_samples,)
            Labels with universum trials marked by ``universum_label``.
        groups : None
            Ignored, for API compatibility.

        Yields
        ------
        train, test : ndarray of int
            Indices of the training and test trials of one fold.
        """
        _check_mode(self.universum)
        labelled, universum, y_labelled = _labelled_and_universum(X, y, self.universum_label)
        random_state = self.random_state if self.shuffle else None
        labelled_folds = StratifiedKFold(
            self.n_splits, shuffle=self.shuffle, random_state=random_state
        ).split(labelled, y_labelled)
        if self.universum == "split":
            if universum.size < self.n_splits:
                raise ValueError(
                    f"Cannot split {universum.size} universum trials into {self.n_splits} "
                    "folds; use universum='train' or fewer folds."
                )
            universum_folds = KFold(self.n_splits, shuffle=self.shuffle, random_state=random_state)
            universum_test = (test for _, test in universum_folds.split(universum))
        else:
            universum_test = (np.arange(0) for _ in range(self.n_splits))
        yield from _merge_folds(labelled, universum, labelled_folds, universum_test)

    def get_n_splits(self, X=None, y=None, groups=None) -> int:
        """Number of folds."""
        return self.n_splits


class UniversumStratifiedShuffleSplit(BaseCrossValidator):
    """Stratified random train/test splits of labelled trials; universum kept for training.

    Like :class:`sklearn.model_selection.StratifiedShuffleSplit` on the labelled trials. With
    ``universum="train"`` all universum trials join every training set; with ``"split"`` the
    same fraction of universum trials as of labelled trials is drawn into each test set.

    Parameters
    ----------
    n_splits : int, default=10
        Number of re-shuffling and splitting iterations.
    test_size, train_size : float, int or None
        As in :class:`~sklearn.model_selection.StratifiedShuffleSplit` (counts refer to the
        labelled trials).
    random_state : int, RandomState instance or None, default=None
        Seed of the shuffling.
    universum : {"train", "split"}, default="train"
        Where universum trials go.
    universum_label : int, str or None, default=None
        Label marking universum trials.
    """

    def __init__(
        self,
        n_splits: int = 10,
        *,
        test_size=None,
        train_size=None,
        random_state=None,
        universum: str = "train",
        universum_label=None,
    ):
        self.n_splits = n_splits
        self.test_size = test_size
        self.train_size = train_size
        self.random_state = random_state
        self.universum = universum
        self.universum_label = universum_label

    def split(self, X, y, groups=None) -> Iterator[tuple[np.ndarray, np.ndarray]]:
        """Generate train and test indices (see :meth:`UniversumStratifiedKFold.split`)."""
        _check_mode(self.universum)
        labelled, universum, y_labelled = _labelled_and_universum(X, y, self.universum_label)
        rng = check_random_state(self.random_state)
        labelled_folds = list(
            StratifiedShuffleSplit(
                self.n_splits,
                test_size=self.test_size,
                train_size=self.train_size,
                random_state=rng,
            ).split(labelled, y_labelled)
        )
        if self.universum == "split":
            universum_test = [
                rng.permutation(universum.size)[
                    : round(universum.size * len(test) / labelled.size)
                ]
                for _, test in labelled_folds
            ]
        else:
            universum_test = [np.arange(0)] * self.n_splits
        yield from _merge_folds(labelled, universum, labelled_folds, universum_test)

    def get_n_splits(self, X=None, y=None, groups=None) -> int:
        """Number of splitting iterations."""
        return self.n_splits


class _UniversumScorer:
    """Apply a scikit-learn scorer to the labelled trials of a test set only."""

    def __init__(self, scorer, universum_label):
        self._scorer = scorer
        self._universum_label = universum_label

    def __call__(self, estimator, X, y_true, sample_weight=None, **kwargs) -> float:
        y_true = np.asarray(y_true)
        label = getattr(estimator, "universum_label", None)
        if self._universum_label is not None:
            label = self._universum_label
        keep = ~universum_mask(y_true, label)
        if not keep.any():
            raise ValueError(
                "The test set holds only universum trials; a universum-aware splitter "
                "(e.g. UniversumStratifiedKFold) keeps labelled trials in every test fold."
            )
        X_kept = X.iloc[keep] if hasattr(X, "iloc") else np.asarray(X)[keep]
        if sample_weight is not None:
            kwargs["sample_weight"] = np.asarray(sample_weight)[keep]
        return self._scorer(estimator, X_kept, y_true[keep], **kwargs)

    def __repr__(self) -> str:
        return f"universum_scorer({self._scorer!r})"


def universum_scorer(scoring="accuracy", *, universum_label=None):
    """Wrap a scikit-learn scorer so that it ignores universum trials.

    Parameters
    ----------
    scoring : str or callable, default="accuracy"
        A scorer name (``sklearn.metrics.get_scorer_names()``) or a scorer callable
        ``scorer(estimator, X, y)``.
    universum_label : int, str or None, default=None
        Label marking universum trials. ``None`` uses the estimator's ``universum_label``
        parameter when it has one, else ``-2`` / ``"universum"``.

    Returns
    -------
    scorer : callable
        ``scorer(estimator, X, y)`` evaluated on the labelled trials of ``(X, y)``.
    """
    if isinstance(scoring, str):
        scoring = get_scorer(scoring)
    elif not callable(scoring):
        raise ValueError(
            "scoring must be a scorer name or a callable scorer(estimator, X, y); "
            f"got {scoring!r}."
        )
    return _UniversumScorer(scoring, universum_label)
