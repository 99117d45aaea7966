"""Riemannian tangent-space features of regularised trial covariances, with a lean online path.

``fit`` estimates the trial covariances with :func:`regularized_covariances` (equal to
``pyriemann.estimation.Covariances``, compiled) and their Riemannian (affine-invariant) mean
with ``pyriemann.tangentspace.TangentSpace(metric="riemann")``. It then precomputes
``P^{-1/2}`` of that reference ``P`` and the weights of the upper triangle (1 on the diagonal,
√2 off it), so that mapping a trial needs one covariance, two small matrix products and one
symmetric eigendecomposition:

    t(X) = upper( logm( P^{-1/2} C(X) P^{-1/2} ) )

which is pyRiemann's ``tangent_space(covariances(X), P)`` without re-deriving ``P^{-1/2}`` and
the scikit-learn validation on every call. The mapping of one trial is one numba function
(:func:`_tangent_vector`: the covariance as one BLAS product of the demeaned trial, its
shrinkage, the whitening, LAPACK's ``syevd`` and the logarithm), so the online path pays no
per-operation Python overhead. ``transform`` runs the same function over the trials and
:meth:`TangentSpace.transform_trial` on one; :func:`regularized_covariances` shares the
covariance code. The tests check all of them against pyRiemann's own ``Covariances`` +
``TangentSpace`` output.
"""

from __future__ import annotations

from typing import ClassVar

import numpy as np
from numba import njit
from pyriemann.geometry.base import invsqrtm
from pyriemann.tangentspace import TangentSpace as _PyriemannTangentSpace
from sklearn.utils._param_validation import StrOptions
from sklearn.utils.validation import check_is_fitted

from .._constraints import UNIVERSUM_LABEL
from .._universum import universum_mask
from ._epochs import EpochsTransformer

COVARIANCE_ESTIMATORS = ("oas", "lwf", "scm")
_ESTIMATOR_CODES = {"scm": 0, "oas": 1, "lwf": 2}


@njit(cache=True)
def _trial_covariance(x: np.ndarray, code: int) -> np.ndarray:
    """Covariance of one trial ``(n_channels, n_times)``: sample (0), OAS (1) or Ledoit-Wolf (2).

    The shrinkage formulas are scikit-learn's ``oas`` and ``ledoit_wolf`` (which pyRiemann
    calls), written for one trial.
    """
    n_channels, n_times = x.shape
    xc = np.empty((n_channels, n_times))
    for i in range(n_channels):
        mean = x[i].sum() / n_times
        for t in range(n_times):
            xc[i, t] = x[i, t] - mean
    S = np.dot(xc, xc.T)
    S /= n_times
    if code == 0:
        return S
    trace = np.trace(S)
    mu = trace / n_channels
    sum_sq = (S * S).sum()
    if code == 1:
        alpha = sum_sq / (n_channels * n_channels)
        num = alpha + mu * mu
        den = (n_times + 1) * (alpha - mu * mu / n_channels)
        shrinkage = 1.0 if den == 0 else min(num / den, 1.0)
    else:
        power = (xc * xc).sum(axis=0)
        beta = ((power * power).sum() / n_times - sum_sq) / (n_channels * n_times)
        delta = (sum_sq - 2.0 * mu * trace + n_channels * mu * mu) / n_channels
        beta = min(beta, delta)
        shrinkage = 0.0 if beta == 0 else beta / delta
    S *= 1.0 - shrinkage
    for i in range(n_channels):
        S[i, i] += shrinkage * mu
    return S


@njit(cache=True)
def _covariances(X: np.ndarray, code: int) -> np.ndarray:
    out = np.empty((X.shape[0], X.shape[1], X.shape[1]))
    for k in range(X.shape[0]):
        out[k] = _trial_covariance(X[k], code)
    return out


@njit(cache=True)
def _tangent_vector(x, code, P, rows, cols, weights, out) -> bool:
    """Write the tangent vector of trial ``x`` into ``out``; False if not positive definite."""
    M = np.dot(np.dot(P, _trial_covariance(x, code)), P)
    eigvals, eigvecs = np.linalg.eigh(M)
    if eigvals[0] <= _PD_TOLERANCE * eigvals[-1]:
        return False
    logs = np.dot(eigvecs * np.log(eigvals), eigvecs.T)
    for k in range(rows.size):
        out[k] = logs[rows[k], cols[k]] * weights[k]
    return True


@njit(cache=True)
def _tangent_vectors(X, code, P, rows, cols, weights, out) -> bool:
    for k in range(X.shape[0]):
        if not _tangent_vector(X[k], code, P, rows, cols, weights, out[k]):
            return False
    return True


#: The smallest eigenvalue of a positive definite covariance, relative to its largest.
_PD_TOLERANCE = 1e-12

_NOT_POSITIVE_DEFINITE = (
    "{what} not positive definite (flat or duplicated channels?); use estimator='oas' or 'lwf'."
)


def _estimator_code(estimator: str) -> int:
    if estimator not in _ESTIMATOR_CODES:
        raise ValueError(f"estimator must be one of {COVARIANCE_ESTIMATORS}, got {estimator!r}.")
    return _ESTIMATOR_CODES[estimator]


def regularized_covariances(X: np.ndarray, estimator: str = "oas") -> np.ndarray:
    """Per-trial covariances, identical to ``pyriemann.estimation.Covariances(estimator)``.

    Parameters
    ----------
    X : ndarray of shape (n_trials, n_channels, n_times)
        Epochs, float64 (each trial is demeaned over time, as pyRiemann/scikit-learn do).
    estimator : {"oas", "lwf", "scm"}
        Oracle approximating shrinkage (Chen et al. 2010), Ledoit–Wolf shrinkage, or the
        sample covariance; the shrinkage formulas are scikit-learn's ``oas`` and
        ``ledoit_wolf`` (the estimators pyRiemann calls).

    Returns
    -------
    covs : ndarray of shape (n_trials, n_channels, n_channels)
    """
    code = _estimator_code(estimator)
    return _covariances(np.asarray(X, dtype=np.float64), code)


class TangentSpace(EpochsTransformer):
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

    _fitted_attribute = "isqrt_reference_"
    _min_times = 2
    _parameter_constraints: ClassVar[dict] = {
        "estimator": [StrOptions(set(COVARIANCE_ESTIMATORS))],
        "reference": [StrOptions({"labelled", "all"})],
        "universum_label": UNIVERSUM_LABEL,
    }

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
        self._validate_params()
        self._code = _ESTIMATOR_CODES[self.estimator]
        X = self._check_fit_input(X)
        trials = np.arange(X.shape[0])  # the reference trials' indices into X
        if y is not None and self.reference == "labelled":
            y = np.asarray(y)
            if y.shape != (X.shape[0],):
                raise ValueError(
                    f"y must have shape ({X.shape[0]},) to match the trials of X, "
                    f"got shape {y.shape}."
                )
            trials = trials[~universum_mask(y, self.universum_label)]
            X = X[trials]
            if X.shape[0] == 0:
                raise ValueError("reference='labelled' needs labelled trials; all are universum.")
        covs = regularized_covariances(X, self.estimator)
        eigvals = np.linalg.eigvalsh(covs)
        singular = trials[eigvals[:, 0] <= _PD_TOLERANCE * eigvals[:, -1]]
        if singular.size:
            shown = ", ".join(map(str, singular[:10])) + (", ..." if singular.size > 10 else "")
            what = f"The covariance of {singular.size} trial(s) [{shown}] of X is"
            raise ValueError(_NOT_POSITIVE_DEFINITE.format(what=what))
        self.reference_ = _PyriemannTangentSpace(metric="riemann").fit(covs).reference_
        self.isqrt_reference_ = invsqrtm(self.reference_)
        n = X.shape[1]
        rows, cols = np.triu_indices(n)
        self._rows, self._cols = rows, cols
        self._weights = np.where(rows == cols, 1.0, np.sqrt(2.0))
        return self

    def _map(self, X: np.ndarray) -> np.ndarray:
        """Tangent vectors of ``X`` (one trial or a stack of trials), float64 and finite."""
        # one memory layout into the compiled code, so that a view (the online decoder's
        # read-only window) runs the specialisation compiled before the session, not a new one
        X = np.require(X, np.float64, ("C", "W"))
        out = np.empty(X.shape[:-2] + self._rows.shape)
        args = (self._code, self.isqrt_reference_, self._rows, self._cols, self._weights)
        ok = _tangent_vector(X, *args, out) if X.ndim == 2 else _tangent_vectors(X, *args, out)
        if not ok:
            raise ValueError(_NOT_POSITIVE_DEFINITE.format(what="A trial covariance is"))
        return out

    def transform(self, X):
        """Map every trial (labelled and universum) to the tangent space.

        Parameters
        ----------
        X : array-like of shape (n_trials, n_channels, n_times)
            Epochs.

        Returns
        -------
        T : ndarray of shape (n_trials, n_channels * (n_channels + 1) / 2)

        Raises
        ------
        ValueError
            If a trial's covariance, whitened by the reference, is not numerically positive
            definite: its smallest eigenvalue at most ``1e-12`` times its largest.
        """
        return self._map(self._check_transform_input(X))

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
        check_is_fitted(self, self._fitted_attribute)
        x = np.asarray(x, dtype=np.float64)
        if x.ndim != 2 or x.shape[0] != self.n_features_in_ or x.shape[1] < 2:
            raise ValueError(
                f"transform_trial expects one trial of shape ({self.n_features_in_}, "
                f"n_times >= 2), got shape {x.shape}."
            )
        if not np.isfinite(x).all():
            raise ValueError("The trial contains NaN or infinite samples.")
        return self._map(x)
