"""Shared base of the binary universum classifiers (hinge and least-squares U-SVM).

Universum trials travel in ``y`` under a sentinel label (see :mod:`bci_universum._universum`);
as a convenience ``fit`` also accepts them as ``X_universum=``. This module holds what every
binary universum classifier does the same way: validation, the split into labelled and universum
trials, the ±1 label encoding, ``predict`` from the sign of ``decision_function``, and the
scikit-learn tags; :class:`UniversumClassifierMixin` gives every classifier of the package a
``score`` that ignores universum trials.

The base owns ``fit`` (parameter checks, validation and the split into labelled and universum
trials); a subclass implements ``_fit`` on the split trials and ``decision_function`` (positive
values mean ``classes_[1]``). The kernel machines derive from
:class:`BaseKernelUniversumClassifier`, which owns their decision ``Σ_i c_i k(x_i, x) + b``
(batch and single trial) once ``_fit`` has stored the expansion with ``_set_expansion``.
"""

from __future__ import annotations

from numbers import Integral, Real

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin, _fit_context
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_is_fitted, validate_data

from .._constraints import FINITE, UNIVERSUM_LABEL
from .._universum import drop_universum, universum_mask
from ..solvers.kernels import KERNELS, kernel_matrix, kernel_vector

#: ``_parameter_constraints`` shared by the kernel machines of the package (scikit-learn's
#: SVC semantics for ``kernel``, ``gamma``, ``degree`` and ``coef0``).
KERNEL_CONSTRAINTS: dict = {
    "kernel": [StrOptions(set(KERNELS)), callable],
    "gamma": [StrOptions({"scale", "auto"}), Interval(Real, 0, None, closed="neither")],
    "degree": [Interval(Integral, 0, None, closed="left")],
    "coef0": [FINITE],
    "universum_label": UNIVERSUM_LABEL,
}


def encode_binary_labels(y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Encode labelled trials of a two-class problem as ±1.

    Parameters
    ----------
    y : ndarray of shape (n_labelled,)
        Labels of the labelled trials only (no universum sentinel).

    Returns
    -------
    classes : ndarray of shape (2,)
        The sorted class labels; ``classes[1]`` is encoded as +1.
    y_signed : ndarray of float64, shape (n_labelled,)
        −1 for ``classes[0]``, +1 for ``classes[1]``.

    Raises
    ------
    ValueError
        With fewer than two classes, or with more than two (binary-only estimators).
    """
    check_classification_targets(y)
    classes, y_index = np.unique(y, return_inverse=True)
    if classes.size < 2:
        raise ValueError(
            f"The labelled trials contain only one class ({classes.tolist()}); a binary "
            "classifier needs two classes besides the universum trials."
        )
    if classes.size > 2:
        raise ValueError(
            "Only binary classification is supported. The labelled trials contain "
            f"{classes.size} classes {classes.tolist()}; use a multiclass universum classifier "
            "or a one-vs-rest wrapper."
        )
    return classes, np.where(y_index == 1, 1.0, -1.0)


def trial_kernel(
    estimator, x: np.ndarray, points: np.ndarray, index: np.ndarray, sq_norms: np.ndarray | None
) -> np.ndarray:
    """Kernel values of one trial against a fitted kernel machine's expansion points.

    The shared first step of the classifiers' ``decision_trial`` (no validation). With
    ``kernel="precomputed"``, ``x`` already holds kernel values against the trials of ``fit``
    and ``index`` picks the expansion's; otherwise ``points`` are the expansion points and
    ``sq_norms`` their squared norms (for "rbf").
    """
    if estimator.kernel == "precomputed":
        return x[index]
    return kernel_vector(
        x, points, estimator.kernel, estimator.gamma_, estimator.degree, estimator.coef0, sq_norms
    )


class UniversumClassifierMixin(ClassifierMixin):
    """``ClassifierMixin`` whose ``score`` ignores the universum trials in ``y``.

    The host estimator has a ``universum_label`` parameter (``None``: the default sentinel).
    Hosts with a ``kernel`` parameter get the ``pairwise`` tag with ``kernel="precomputed"``.
    """

    def score(self, X, y, sample_weight=None) -> float:
        """Accuracy on the labelled trials; universum trials in ``y`` are ignored.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)
            True labels, possibly with universum trials (sentinel label).
        sample_weight : array-like of shape (n_samples,) or None

        Returns
        -------
        score : float
        """
        X, y, sample_weight = drop_universum(X, y, sample_weight, self.universum_label)
        return super().score(X, y, sample_weight=sample_weight)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        # a kernel machine on a precomputed kernel takes the (test × training) kernel as X:
        # cross-validation must then slice rows and columns
        tags.input_tags.pairwise = getattr(self, "kernel", None) == "precomputed"
        return tags


class BaseBinaryUniversumClassifier(UniversumClassifierMixin, BaseEstimator):
    """Base class of binary classifiers trained with labelled and universum trials.

    Subclasses define ``universum_label`` as an ``__init__`` parameter (``None`` = the default
    sentinel, ``-2`` for numeric labels and ``"universum"`` for string labels).
    """

    def _check_params(self) -> None:
        """Cross-parameter checks that ``_parameter_constraints`` cannot express (none here)."""

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y, X_universum=None):
        """Fit on labelled and universum trials.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features) or (n_samples, n_samples)
            Labelled and universum trials (the square kernel matrix over them with
            ``kernel="precomputed"``).
        y : array-like of shape (n_samples,)
            Two class labels; universum trials carry ``universum_label``.
        X_universum : array-like of shape (n_universum, n_features) or None
            Extra universum trials (not with ``kernel="precomputed"``). Cross-validation
            slices it like ``X`` when it has as many rows as ``X``; prefer the sentinel label.

        Returns
        -------
        self : object
            The fitted estimator.
        """
        self._check_params()
        if getattr(self, "kernel", None) == "precomputed" and X_universum is not None:
            raise ValueError(
                "X_universum cannot be used with kernel='precomputed'; mark the universum "
                "trials in y and pass the kernel matrix over all training trials."
            )
        X_labelled, y_signed, X_u = self._validate_fit_data(X, y, X_universum)
        self._fit(X, y, X_labelled, y_signed, X_u)
        return self

    def _fit(self, X, y, X_labelled, y_signed, X_universum) -> None:
        """Fit on the validated, split trials (``X`` and ``y`` as ``fit`` got them)."""
        raise NotImplementedError

    def _validate_fit_data(
        self, X, y, X_universum=None
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Validate training data, set ``classes_`` and ``n_features_in_``, split the universum.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Labelled and universum trials.
        y : array-like of shape (n_samples,)
            Labels; universum trials carry ``self.universum_label``.
        X_universum : array-like of shape (n_universum, n_features) or None
            Extra universum trials, appended after those marked in ``y``.

        Returns
        -------
        X_labelled : ndarray of float64, shape (n_labelled, n_features)
        y_signed : ndarray of float64, shape (n_labelled,)
            ±1 encoding of the labelled trials (+1 is ``classes_[1]``).
        X_universum : ndarray of float64, shape (n_universum_total, n_features)
            Possibly empty.
        """
        X, y = validate_data(self, X, y, dtype=np.float64, order="C")
        mask = universum_mask(y, self.universum_label)
        if mask.all():
            raise ValueError(
                "All trials carry the universum label "
                f"{self.universum_label if self.universum_label is not None else 'sentinel'}; "
                "at least two labelled classes are needed."
            )
        self.classes_, y_signed = encode_binary_labels(y[~mask])
        X_u = X[mask]
        if X_universum is not None:
            extra = validate_data(self, X_universum, reset=False, dtype=np.float64, order="C")
            X_u = np.concatenate([X_u, extra], axis=0)
        return np.ascontiguousarray(X[~mask]), y_signed, np.ascontiguousarray(X_u)

    def predict(self, X) -> np.ndarray:
        """Predict class labels: ``classes_[1]`` where ``decision_function(X) > 0``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        y_pred : ndarray of shape (n_samples,)
        """
        check_is_fitted(self)
        scores = self.decision_function(X)
        return self.classes_[(scores > 0).astype(int)]

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.classifier_tags.multi_class = False
        return tags


class BaseKernelUniversumClassifier(BaseBinaryUniversumClassifier):
    """Base of the binary kernel machines: decision ``f(x) = Σ_i c_i k(x_i, x) + b``.

    ``_fit`` stores the expansion with :meth:`_set_expansion` and ``intercept_``; this base
    computes the decision from it, for a batch (:meth:`decision_function`) and for one trial
    (:meth:`decision_trial`). The host has the kernel parameters of
    :data:`KERNEL_CONSTRAINTS` and sets ``gamma_``.
    """

    def _set_expansion(self, points: np.ndarray | None, index: np.ndarray, coef: np.ndarray):
        """Store the expansion: its points (``None`` with a precomputed kernel), their
        positions among the training trials (read with a precomputed kernel) and ``c_i``."""
        precomputed = self.kernel == "precomputed"
        self._expansion_points = None if precomputed else points
        self._expansion_index = index if precomputed else None
        self._expansion_coef = coef
        self._expansion_sq_norms = None if precomputed else np.einsum("ij,ij->i", points, points)

    def decision_function(self, X) -> np.ndarray:
        """Signed distance-like score ``f(x)``; positive values mean ``classes_[1]``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Trials; with ``kernel="precomputed"`` the kernel between these trials and the
            trials of ``fit``, shape (n_samples, n_training_trials).

        Returns
        -------
        scores : ndarray of shape (n_samples,)
        """
        check_is_fitted(self)
        X = validate_data(self, X, reset=False, dtype=np.float64, order="C")
        return self._expansion(X)

    def _expansion(self, X: np.ndarray) -> np.ndarray:
        """``Σ_i c_i k(x_i, x) + b`` over the expansion, for validated ``X``."""
        if self.kernel == "precomputed":
            K = X[:, self._expansion_index]
        elif self._expansion_coef.size == 0:
            K = np.zeros((X.shape[0], 0))
        else:
            K = kernel_matrix(
                X, self._expansion_points, self.kernel, self.gamma_, self.degree, self.coef0
            )
        return K @ self._expansion_coef + self.intercept_[0]

    def decision_trial(self, x: np.ndarray) -> float:
        """Lean single-trial path for online use: :meth:`decision_function` of one trial.

        No validation: ``x`` must be a finite float64 vector of ``n_features_in_`` features
        (with ``kernel="precomputed"``: its kernel values against the trials of ``fit``).

        Parameters
        ----------
        x : ndarray of shape (n_features,)

        Returns
        -------
        score : float
        """
        k = trial_kernel(
            self, x, self._expansion_points, self._expansion_index, self._expansion_sq_norms
        )
        return float(k @ self._expansion_coef + self.intercept_[0])
