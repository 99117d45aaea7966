"""Input handling shared by the blind source separation transformers (TDSEP/SOBI, ICA).

Both accept continuous data ``(n_channels, n_times)`` and epochs ``(n_trials, n_channels,
n_times)``. A 2-D array is always read as one continuous recording (channels × times, as in
MNE), not as scikit-learn's ``(n_samples, n_features)``; internally it becomes one trial.
"""

from __future__ import annotations

import numpy as np
from sklearn.utils.validation import check_is_fitted, validate_data

from .._universum import universum_mask
from ._epochs import check_array_input

FIT_ON = ("all", "labelled")


def check_signals(estimator, X, *, reset: bool) -> tuple[np.ndarray, bool]:
    """Validate ``X`` and return it as C-contiguous float64 epochs plus a "was continuous" flag.

    ``n_features_in_`` is the number of channels for both layouts.
    """
    name = type(estimator).__name__
    check_array_input(
        name,
        X,
        "an array of shape (n_channels, n_times) or (n_trials, n_channels, n_times)",
    )
    ndim = np.ndim(X)
    if not reset and ndim in (2, 3) and np.shape(X)[-2] != estimator.n_features_in_:
        raise ValueError(
            f"X has {np.shape(X)[-2]} channels, but {name} was fitted on "
            f"{estimator.n_features_in_} channels."
        )
    if ndim not in (2, 3):
        raise ValueError(
            f"X must be 2-D (n_channels, n_times) or 3-D (n_trials, n_channels, n_times), "
            f"got {ndim}-D input of shape {np.shape(X)}."
        )
    continuous = ndim == 2
    X3 = np.asarray(X)[np.newaxis] if continuous else X
    X3 = validate_data(
        estimator, X3, reset=reset, allow_nd=True, dtype=np.float64, ensure_min_features=1
    )
    if X3.shape[2] < 1:
        raise ValueError(f"X has no time samples (shape {np.shape(X)}).")
    return np.ascontiguousarray(X3), continuous


def select_fit_trials(X3: np.ndarray, y, fit_on: str, universum_label, continuous: bool):
    """Trials used to fit an unsupervised spatial filter.

    ``fit_on="all"`` keeps every trial, universum ones included (the filters are unsupervised,
    and universum trials carry the same sources); ``"labelled"`` drops trials whose label is the
    universum sentinel, so that universum trials are only transformed.
    """
    if fit_on not in FIT_ON:
        raise ValueError(f"fit_on must be one of {FIT_ON}, got {fit_on!r}.")
    if fit_on == "all":
        return X3
    if continuous or y is None:
        raise ValueError("fit_on='labelled' needs epochs and their labels y.")
    y = np.asarray(y)
    if y.shape != (X3.shape[0],):
        raise ValueError(
            f"y must have one label per trial ({X3.shape[0]} trials), got shape {y.shape}."
        )
    keep = ~universum_mask(y, universum_label)
    if not keep.any():
        raise ValueError("fit_on='labelled' but every trial carries the universum label.")
    return X3[keep]


def restore_layout(S3: np.ndarray, continuous: bool) -> np.ndarray:
    """Return epochs as given, or the single trial of continuous input as 2-D."""
    return S3[0] if continuous else S3


class SourcesMixin:
    """``transform`` / ``inverse_transform`` of a fitted linear spatial filter.

    Needs ``unmixing_matrix_`` (n_components, n_channels), ``mixing_matrix_``
    (n_channels, n_components), ``mean_`` (n_channels,) and ``n_components_``.
    """

    def transform(self, X):
        """Sources ``W (x − mean_)`` in the layout of ``X``.

        Parameters
        ----------
        X : array-like of shape (n_channels, n_times) or (n_trials, n_channels, n_times)

        Returns
        -------
        sources : ndarray of shape (n_components_, n_times) or (n_trials, n_components_, n_times)
        """
        check_is_fitted(self, "unmixing_matrix_")
        X3, continuous = check_signals(self, X, reset=False)
        S = self.unmixing_matrix_ @ (X3 - self.mean_[:, None])
        return restore_layout(S, continuous)

    def inverse_transform(self, S):
        """Back-project sources to channels: ``A s + mean_``.

        Parameters
        ----------
        S : array-like of shape (n_components_, n_times) or (n_trials, n_components_, n_times)

        Returns
        -------
        X : ndarray of shape (n_channels, n_times) or (n_trials, n_channels, n_times)
        """
        check_is_fitted(self, "mixing_matrix_")
        S = np.asarray(S, dtype=np.float64)
        if S.ndim not in (2, 3) or S.shape[-2] != self.n_components_:
            raise ValueError(
                f"S must have shape (n_components, n_times) or (n_trials, n_components, "
                f"n_times) with n_components = {self.n_components_}, got {S.shape}."
            )
        if not np.all(np.isfinite(S)):
            raise ValueError("S contains NaN or infinite values.")
        return self.mixing_matrix_ @ S + self.mean_[:, None]
