"""Riemannian tangent-space features of regularised trial covariances, with a lean online path.

``fit`` estimates the trial covariances with ``pyriemann.estimation.Covariances`` and their
Riemannian (affine-invariant) mean with ``pyriemann.tangentspace.TangentSpace(metric="riemann")``.
It then precomputes ``P^{-1/2}`` of that reference ``P`` and the weights of the upper triangle
(1 on the diagonal, √2 off it), so that mapping a trial needs one covariance, two small matrix
products and one symmetric eigendecomposition:

    t(X) = upper( logm( P^{-1/2} C(X) P^{-1/2} ) )

which is pyRiemann's ``tangent_space(covariances(X), P)`` without re-deriving ``P^{-1/2}`` and
the scikit-learn validation on every call. ``transform`` and :meth:`TangentSpace.transform_trial`
run the same vectorised code (:func:`regularized_covariances` and the mapping above); the tests
check both against pyRiemann's own ``Covariances`` + ``TangentSpace`` output.
"""

from __future__ import annotations

import numpy as np
from pyriemann.estimation import Covariances
from pyriemann.geometry.base import invsqrtm
from pyriemann.tangentspace import TangentSpace as _PyriemannTangentSpace
from sklearn.base import BaseEstimator, TransformerMixin
from sklearn.utils.validation import check_is_fitted

from .._universum import universum_mask
from ._epochs import check_epochs

COVARIANCE_ESTIMATORS = ("oas", "lwf", "scm")


def regularized_covariances(X: np.ndarray, estimator: str = "oas") -> np.ndarray:
    """Per-trial covariances, identical to ``pyriemann.estimation.Covariances(estimator)``.

    Parameters
    ----------
    X : ndarray of shape (..., n_channels, n_times)
        Epochs ``(n_trials, n_channels, n_times)`` or one trial ``(n_channels, n_times)``; each
        trial is demeaned over time, as pyRiemann/scikit-learn do.
    estimator : {"oas", "lwf", "scm"}
        Oracle approximating shrinkage (Chen et al. 2010), Ledoit–Wolf shrinkage, or the
        sample covariance; the shrinkage formulas are scikit-learn's ``oas`` and
        ``ledoit_wolf`` (the estimators pyRiemann calls), vectorised over trials.

    Returns
    -------
    covs : ndarray of shape (..., n_channels, n_channels)
    """
    n_channels, n_times = X.shape[-2:]
    Xc = X - X.mean(axis=-1, keepdims=True)
    S = Xc @ np.swapaxes(Xc, -1, -2)
    S /= n_times
    if estimator == "scm":
        return S
    trace = np.trace(S, axis1=-2, axis2=-1)
    mu = trace / n_channels
    if estimator == "oas":
        alpha = np.mean(S**2, axis=(-2, -1))
        num = alpha + mu**2
        den = (n_times + 1) * (alpha - mu**2 / n_channels)
        with np.errstate(divide="ignore", invalid="ignore"):
            shrinkage = np.where(den == 0, 1.0, np.minimum(num / den, 1.0))
    elif estimator == "lwf":
        beta_ = np.sum(np.sum(Xc**2, axis=-2) ** 2, axis=-1)
        delta_ = np.sum(S**2, axis=(-2, -1))
        beta = (beta_ / n_times - delta_) / (n_channels * n_times)
        delta = (delta_ - 2.0 * mu * trace + n_channels * mu**2) / n_channels
        beta = np.minimum(beta, delta)
        with np.errstate(divide="ignore", invalid="ignore"):
            shrinkage = np.where(beta == 0, 0.0, beta / delta)
    else:
        raise ValueError(f"estimator must be one of {COVARIANCE_ESTIMATORS}, got {estimator!r}.")
    S *= (1.0 - shrinkage)[..., None, None]
    diag = np.arange(n_channels)
    S[..., diag, diag] += (shrinkage * mu)[..., None]
    return S


class TangentSpace(TransformerMixin, BaseEstimator):
    """Tangent-space vectors of regularised trial covariances at a Riemannian mean.

    Universum trials (sentinel label in ``y``) are transformed like any trial; ``reference``
    says whether they enter the reference mean.

    Parameters
    ----------
    estimator : {"oas", "lwf", "scm"}
        Covariance estimator (pyRiemann's names); "oas" or "lwf" keep single-trial
        covariances positive definite.
    reference : {"labelled", "all"}
        Trials whose covariances define the reference mean: the labelled ones only (universum
        trials excluded; all trials when ``y`` is None) or all trials.
    universum_label : int, str or None
        Sentinel label of universum trials (default: ``-2`` or ``"universum"``).

    Attributes
    ----------
    reference_ : ndarray of shape (n_channels, n_channels)
        Riemannian mean of the reference covariances (pyRiemann).
    isqrt_reference_ : ndarray of shape (n_channels, n_channels)
        ``reference_^{-1/2}``, precomputed for the lean path.
    n_features_in_ : int
        Number of channels.
    """

    def __init__(
        self, estimator: str = "oas", *, reference: str = "labelled", universum_label=None
    ):
        self.estimator = estimator
        self.reference = reference
        self.universum_label = universum_label

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.three_d_array = True
        tags.input_tags.two_d_array = False
        return tags

    def fit(self, X, y=None):
        """Estimate the reference mean and precompute the lean mapping.

        Parameters
        ----------
        X : array-like of shape (n_trials, n_channels, n_times)
            Epochs, labelled and universum trials.
        y : array-like of shape (n_trials,) or None
            Labels with the universum sentinel; only used to exclude universum trials from
            the reference when ``reference="labelled"``.

        Returns
        -------
        self : TangentSpace
        """
        if self.estimator not in COVARIANCE_ESTIMATORS:
            raise ValueError(
                f"estimator must be one of {COVARIANCE_ESTIMATORS}, got {self.estimator!r}."
            )
        if self.reference not in ("labelled", "all"):
            raise ValueError(f"reference must be 'labelled' or 'all', got {self.reference!r}.")
        X = check_epochs(self, X, reset=True, min_times=2)
        if y is not None and self.reference == "labelled":
            y = np.asarray(y)
            if y.shape != (X.shape[0],):
                raise ValueError(
                    f"y must have shape ({X.shape[0]},) to match the trials of X, "
                    f"got shape {y.shape}."
                )
            X = X[~universum_mask(y, self.universum_label)]
            if X.shape[0] == 0:
                raise ValueError("reference='labelled' needs labelled trials; all are universum.")
        covs = Covariances(estimator=self.estimator).transform(X)
        self.reference_ = _PyriemannTangentSpace(metric="riemann").fit(covs).reference_
        self.isqrt_reference_ = invsqrtm(self.reference_)
        n = X.shape[1]
        rows, cols = np.triu_indices(n)
        self._rows, self._cols = rows, cols
        self._weights = np.where(rows == cols, 1.0, np.sqrt(2.0))
        return self

    def _tangent_vectors(self, X: np.ndarray) -> np.ndarray:
        """The mapping of ``transform`` (``X`` of shape (..., n_channels, n_times), finite)."""
        covs = regularized_covariances(X, self.estimator)
        P = self.isqrt_reference_
        eigvals, eigvecs = np.linalg.eigh(P @ covs @ P)
        if np.any(eigvals[..., 0] <= 1e-12 * eigvals[..., -1]):
            raise ValueError(
                "A trial covariance is not positive definite (flat or duplicated channels?); "
                "use estimator='oas' or 'lwf'."
            )
        logs = (eigvecs * np.log(eigvals)[..., None, :]) @ np.swapaxes(eigvecs, -1, -2)
        return logs[..., self._rows, self._cols] * self._weights

    def transform(self, X):
        """Map every trial (labelled and universum) to the tangent space.

        Parameters
        ----------
        X : array-like of shape (n_trials, n_channels, n_times)
            Epochs.

        Returns
        -------
        T : ndarray of shape (n_trials, n_channels * (n_channels + 1) / 2)
        """
        check_is_fitted(self, "isqrt_reference_")
        X = check_epochs(self, X, reset=False, min_times=2)
        return self._tangent_vectors(X)

    def transform_trial(self, x: np.ndarray) -> np.ndarray:
        """Lean single-trial path for online use (same computation as :meth:`transform`).

        Parameters
        ----------
        x : ndarray of shape (n_channels, n_times)
            One trial, float64.

        Returns
        -------
        t : ndarray of shape (n_channels * (n_channels + 1) / 2,)
        """
        check_is_fitted(self, "isqrt_reference_")
        x = np.asarray(x, dtype=np.float64)
        if x.ndim != 2 or x.shape[0] != self.n_features_in_ or x.shape[1] < 2:
            raise ValueError(
                f"transform_trial expects one trial of shape ({self.n_features_in_}, "
                f"n_times >= 2), got shape {x.shape}."
            )
        if not np.isfinite(x).all():
            raise ValueError("The trial contains NaN or infinite samples.")
        return self._tangent_vectors(x)
