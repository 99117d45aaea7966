"""The universum sentinel label: how universum trials travel through ``y``.

Universum trials (non-examples) share ``X`` and ``y`` with labelled trials so that they flow
through a scikit-learn Pipeline unchanged. They carry a sentinel label: the integer ``-2``
(:data:`UNIVERSUM`) for numeric labels, the string ``"universum"`` (:data:`UNIVERSUM_STR`) for
string labels, or whatever an estimator's ``universum_label`` parameter says.
"""

from __future__ import annotations

import numpy as np

UNIVERSUM = -2
UNIVERSUM_STR = "universum"


def resolve_universum_label(y: np.ndarray, universum_label=None):
    """Return the sentinel that marks universum trials in ``y``.

    Parameters
    ----------
    y : array-like of shape (n_samples,)
        Labels, numeric or strings.
    universum_label : int, str or None
        The sentinel to use. ``None`` picks :data:`UNIVERSUM` for numeric ``y`` and
        :data:`UNIVERSUM_STR` otherwise.
    """
    if universum_label is not None:
        return universum_label
    y = np.asarray(y)
    if y.dtype.kind in "iufb":
        return UNIVERSUM
    return UNIVERSUM_STR


def universum_mask(y, universum_label=None) -> np.ndarray:
    """Boolean mask of the universum trials in ``y``.

    Parameters
    ----------
    y : array-like of shape (n_samples,)
        Labels with universum trials marked by the sentinel.
    universum_label : int, str or None
        The sentinel (see :func:`resolve_universum_label`).

    Returns
    -------
    mask : ndarray of bool, shape (n_samples,)

    Raises
    ------
    ValueError
        When string labels mark universum trials with the integer :data:`UNIVERSUM` and no
        ``universum_label`` says so (string labels take the string sentinel).
    """
    y = np.asarray(y)
    label = resolve_universum_label(y, universum_label)
    if y.dtype.kind in "iufb":
        if isinstance(label, str):
            return np.zeros(y.shape, dtype=bool)
        return y == label
    values = y.ravel()
    is_str = np.array([isinstance(v, str) for v in values], dtype=bool)
    if universum_label is None and is_str.any() and any(v == UNIVERSUM for v in values[~is_str]):
        raise ValueError(
            f"y mixes string labels with the integer universum sentinel UNIVERSUM "
            f"({UNIVERSUM}): with string labels, universum trials carry the string sentinel "
            f"{UNIVERSUM_STR!r} (UNIVERSUM_STR), or pass universum_label={UNIVERSUM}."
        )
    return np.array([v == label for v in values], dtype=bool).reshape(y.shape)


def split_universum(X, y, universum_label=None):
    """Split trials into labelled ones and universum ones.

    Parameters
    ----------
    X : array-like of shape (n_samples, ...)
        Trials (feature vectors or epochs).
    y : array-like of shape (n_samples,)
        Labels with universum trials marked by the sentinel.
    universum_label : int, str or None
        The sentinel (see :func:`resolve_universum_label`).

    Returns
    -------
    X_labelled, y_labelled, X_universum : ndarray
        The labelled trials, their labels, and the universum trials.
    """
    X = np.asarray(X)
    y = np.asarray(y)
    if X.shape[0] != y.shape[0]:
        raise ValueError(
            f"X and y have inconsistent numbers of trials: {X.shape[0]} and {y.shape[0]}."
        )
    mask = universum_mask(y, universum_label)
    return X[~mask], y[~mask], X[mask]


def drop_universum(X, y, sample_weight=None, universum_label=None, *, mask=None):
    """Keep the labelled trials of ``X, y`` (and their weights) for scoring.

    Parameters
    ----------
    X : array-like or DataFrame of shape (n_samples, ...)
        Trials; a DataFrame keeps its type (rows picked with ``iloc``).
    y : array-like of shape (n_samples,)
        Labels with universum trials marked by the sentinel.
    sample_weight : array-like of shape (n_samples,) or None
    universum_label : int, str or None
        The sentinel (see :func:`resolve_universum_label`).
    mask : array-like of bool, shape (n_samples,), or None
        The trials to drop, when the caller knows more universum trials than the sentinel
        marks (e.g. :meth:`bci_universum.universa.WithUniversum.universum_mask`); ``None``:
        ``universum_mask(y, universum_label)``.

    Returns
    -------
    X_labelled, y_labelled, sample_weight_labelled
        ``sample_weight_labelled`` is None when ``sample_weight`` is.

    Raises
    ------
    ValueError
        When every trial is a universum trial (nothing to score).
    """
    y = np.asarray(y)
    keep = ~(universum_mask(y, universum_label) if mask is None else np.asarray(mask, dtype=bool))
    if not keep.any():
        raise ValueError(
            "Scoring needs labelled trials but the set holds only universum trials; a "
            "universum-aware splitter (e.g. UniversumStratifiedKFold) keeps labelled trials in "
            "every test fold."
        )
    X_kept = X.iloc[keep] if hasattr(X, "iloc") else np.asarray(X)[keep]
    weights = None if sample_weight is None else np.asarray(sample_weight)[keep]
    return X_kept, y[keep], weights
