"""Input checks and the base class shared by the epochs transformers.

CSP, tangent space, spectral features and preprocessing all take epochs
``(n_trials, n_channels, n_times)``: :class:`EpochsTransformer` owns their input tags and the
checks every ``transform`` starts with.
"""

from __future__ import annotations

from typing import ClassVar

import numpy as np
from sklearn.base import BaseEstimator, TransformerMixin
from sklearn.utils.validation import check_is_fitted, validate_data

from .._universum import universum_mask


def check_array_input(name: str, X, expected: str) -> None:
    """Refuse an object that is neither an array nor a list, such as an ``mne.Epochs``.

    An ``mne.Epochs`` iterates as Epochs of one trial and an ``mne.io.Raw`` as (data, times)
    pairs: scikit-learn's validation would count one channel or fail on a ragged array, far
    from the cause.

    Parameters
    ----------
    name : str
        The estimator's name, the start of the message.
    X : object
        The input.
    expected : str
        What the estimator expects (e.g. ``"epochs as an array of shape (...)"``).

    Raises
    ------
    TypeError
        For an object without ``__array__`` that is not a list or tuple.
    """
    if not isinstance(X, list | tuple) and not hasattr(X, "__array__"):
        raise TypeError(
            f"{name} expects {expected}, got {type(X).__name__}: for MNE data, pass "
            "epochs.get_data() or raw.get_data()."
        )


def check_epochs(estimator, X, *, reset: bool, min_times: int = 1) -> np.ndarray:
    """Validate an epochs array ``(n_trials, n_channels, n_times)`` as float64.

    Parameters
    ----------
    estimator : BaseEstimator
        The transformer; ``n_features_in_`` (the number of channels) is set when ``reset``.
    X : array-like
        The epochs: an array, or nested lists (not an ``mne.Epochs``: its ``get_data()``).
    reset : bool
        True in ``fit``; False in ``transform`` (the channel count must match the fit).
    min_times : int
        Minimum number of time samples per trial.

    Returns
    -------
    X : ndarray of shape (n_trials, n_channels, n_times), float64, finite

    Raises
    ------
    TypeError
        For an object that is neither an array nor a list, such as an ``mne.Epochs``.
    """
    name = type(estimator).__name__
    check_array_input(name, X, "epochs as an array of shape (n_trials, n_channels, n_times)")
    if np.ndim(X) != 3:
        raise ValueError(
            f"{name} expects epochs of shape (n_trials, n_channels, n_times), "
            f"got an array with {np.ndim(X)} dimension(s) of shape {np.shape(X)}."
        )
    if (
        not reset
        and hasattr(estimator, "n_features_in_")
        and np.shape(X)[1] != (estimator.n_features_in_)
    ):
        raise ValueError(
            f"X has {np.shape(X)[1]} channels, but {name} was fitted on "
            f"{estimator.n_features_in_} channels."
        )
    X = validate_data(
        estimator,
        X,
        reset=reset,
        allow_nd=True,
        dtype=np.float64,
        ensure_all_finite=True,
        ensure_min_samples=1,
    )
    # scikit-learn counts features (ensure_min_features) of 2-D arrays only
    if X.shape[1] == 0:
        raise ValueError(f"{name} needs at least one channel, got epochs of shape {X.shape}.")
    if X.shape[2] < min_times:
        raise ValueError(
            f"{name} needs at least {min_times} time samples per trial, got {X.shape[2]}."
        )
    return X


def check_labelled_epochs(estimator, X, y, universum_label=None, *, min_classes: int = 2):
    """Validate epochs and labels, and find the universum trials (without copying them).

    Parameters are those of :func:`labelled_epochs`.

    Returns
    -------
    X : ndarray of shape (n_trials, n_channels, n_times), float64, finite
    y : ndarray of shape (n_trials,)
    universum : ndarray of bool, shape (n_trials,)
        The universum trials.
    classes : ndarray
        The labelled classes.
    """
    X = check_epochs(estimator, X, reset=True)
    if y is None:
        raise ValueError(f"{type(estimator).__name__} is supervised: y is required.")
    y = np.asarray(y)
    if y.ndim != 1 or y.shape[0] != X.shape[0]:
        raise ValueError(
            f"y must have shape ({X.shape[0]},) to match the {X.shape[0]} trials of X, "
            f"got shape {y.shape}."
        )
    universum = universum_mask(y, universum_label)
    # a NaN label would be a class of no trial (y == nan is never true)
    missing = [v for v in y[~universum] if v is None or v != v]
    if missing:
        raise ValueError(
            f"y contains {len(missing)} missing label(s) ({missing[0]}): label every trial "
            "or drop the unlabelled ones."
        )
    classes = np.unique(y[~universum])
    if classes.size < min_classes:
        raise ValueError(
            f"{type(estimator).__name__} needs at least {min_classes} labelled classes "
            f"besides the universum trials, got {classes.size} ({classes.tolist()})."
        )
    return X, y, universum, classes


def labelled_epochs(estimator, X, y, universum_label=None, *, min_classes: int = 2):
    """Validate epochs and labels and split off the universum trials.

    Parameters
    ----------
    estimator : BaseEstimator
        The transformer being fitted (sets ``n_features_in_``).
    X : array-like of shape (n_trials, n_channels, n_times)
        Epochs, labelled and universum trials mixed.
    y : array-like of shape (n_trials,)
        Labels; universum trials carry the sentinel (see :mod:`bci_universum._universum`).
    universum_label : int, str or None
        The sentinel.
    min_classes : int
        Minimum number of distinct labelled classes.

    Returns
    -------
    X_labelled, y_labelled, X_universum, classes : ndarray
    """
    X, y, universum, classes = check_labelled_epochs(
        estimator, X, y, universum_label, min_classes=min_classes
    )
    return X[~universum], y[~universum], X[universum], classes


class EpochsTransformer(TransformerMixin, BaseEstimator):
    """Base of the transformers on epochs ``(n_trials, n_channels, n_times)``.

    Subclasses set the class attributes below and call :meth:`_check_transform_input` first in
    ``transform``; ``fit`` stores ``_n_times_in`` when the output depends on the trial length.

    Attributes
    ----------
    _fitted_attribute : str
        An attribute that ``fit`` sets (for ``check_is_fitted``).
    _min_times : int
        Minimum number of time samples per trial.
    _requires_fit, _supervised : bool
        scikit-learn tags: whether ``transform`` needs ``fit``, whether ``fit`` needs ``y``.
    _trialwise : bool
        ``fit`` learns nothing from the trials' values (at most their shape) and ``transform``
        maps each trial on its own: model selection may apply the step once to all trials
        instead of once per inner fold (:func:`bci_universum.training.select_and_fit`).
    """

    _fitted_attribute: ClassVar[str] = "n_features_in_"
    _min_times: ClassVar[int] = 1
    _requires_fit: ClassVar[bool] = True
    _supervised: ClassVar[bool] = False
    _trialwise: ClassVar[bool] = False

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.three_d_array = True
        tags.input_tags.two_d_array = False
        tags.requires_fit = self._requires_fit
        tags.target_tags.required = self._supervised
        return tags

    def _check_n_channels(self, n_channels: int) -> None:
        """Raise a ValueError when the parameters cannot work on epochs of ``n_channels``
        channels: a check that needs no trials, so that an evaluation refuses the pipeline
        before fitting anything. Nothing to refuse by default."""

    def _check_fit_input(self, X) -> np.ndarray:
        """The epochs of ``fit``, validated (sets ``n_features_in_``)."""
        return check_epochs(self, X, reset=True, min_times=self._min_times)

    def _check_transform_input(self, X) -> np.ndarray:
        """Fitted, and ``X`` epochs with the channels (and trial length) seen in ``fit``."""
        check_is_fitted(self, self._fitted_attribute)
        X = check_epochs(self, X, reset=False, min_times=self._min_times)
        n_times = getattr(self, "_n_times_in", None)
        if n_times is not None and X.shape[2] != n_times:
            raise ValueError(
                f"{type(self).__name__}: epochs have {X.shape[2]} samples, but {n_times} were "
                "seen in fit."
            )
        return X
