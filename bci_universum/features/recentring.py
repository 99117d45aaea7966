"""Rest trials as the reference of Riemannian re-centring (per run, and online).

Across runs and sessions the trial covariances ``C`` of one subject drift as a whole (electrode
impedances, posture, fatigue). Re-centring maps each run so that a reference ``M`` of that run
becomes the identity, ``C ↦ M^{-1/2} C M^{-1/2}`` (Zanini et al. 2018; pyRiemann's
``TLCenter``). Here ``M`` is the Riemannian mean of the run's **rest** (idle, universum) trial
covariances: rest is recorded in every run before feedback starts, carries no class label, and
so can align a new run to the calibration runs without a single labelled trial of it.

The mapping is applied to the signals, ``X ↦ M^{-1/2} X`` (a spatial whitening filter), which
maps every trial's sample covariance exactly as above and lets any covariance-based pipeline
(tangent space, CSP) follow unchanged.

Where the run information lives
-------------------------------
scikit-learn passes no groups to ``transform``, so the run of a trial travels outside the
estimator, like the band-pass: offline, :func:`recentre_runs` re-centres every run of an
:class:`~bci_universum.datasets.EpochSet` on its own rest trials before the pipeline (``runs``
is a field of the EpochSet); online, the decoder's :class:`Recentring` step starts from the
calibration reference and :meth:`Recentring.update` folds in each rest window of the feedback
run as it arrives (a running Riemannian mean, one geodesic step per window), so the reference
follows the current run. Inside a pipeline, :class:`Recentring` fits its reference on the
universum trials it is given (all trials when there are none).
"""

from __future__ import annotations

from dataclasses import replace
from typing import ClassVar

import numpy as np
from pyriemann.geometry.base import invsqrtm
from pyriemann.geometry.geodesic import geodesic_riemann
from pyriemann.geometry.mean import mean_riemann
from sklearn.utils._param_validation import StrOptions
from sklearn.utils.validation import check_is_fitted

from .._constraints import UNIVERSUM_LABEL
from .._universum import universum_mask
from ._epochs import EpochsTransformer, check_epochs
from .tangent_space import COVARIANCE_ESTIMATORS, regularized_covariances

__all__ = ["Recentring", "recentre_runs", "rest_reference"]


def rest_reference(X: np.ndarray, cov_est: str = "oas") -> np.ndarray:
    """Riemannian mean of the trial covariances of ``X`` (the rest trials of one run).

    Parameters
    ----------
    X : ndarray of shape (n_trials, n_channels, n_times)
    cov_est : {"oas", "lwf", "scm"}
        Covariance estimator (as :class:`~bci_universum.features.TangentSpace`).

    Returns
    -------
    M : ndarray of shape (n_channels, n_channels)
    """
    covs = regularized_covariances(X, cov_est)
    return covs[0] if len(covs) == 1 else mean_riemann(covs)


class Recentring(EpochsTransformer):
    """Whiten epochs by a rest reference ``M``: ``X ↦ M^{-1/2} X``, ``C ↦ M^{-1/2} C M^{-1/2}``.

    Parameters
    ----------
    cov_est : {"oas", "lwf", "scm"}, default="oas"
        Covariance estimator of the reference trials.
    universum_label : int, str or None, default=None
        Label of the universum (rest) trials in ``y``.

    Attributes
    ----------
    reference_ : ndarray of shape (n_channels, n_channels)
        ``M``: the Riemannian mean of the reference trials' covariances.
    filter_ : ndarray of shape (n_channels, n_channels)
        ``M^{-1/2}``.
    n_reference_ : int
        Trials folded into ``reference_`` (by ``fit`` and :meth:`update`).
    n_features_in_ : int
        Number of channels.
    """

    _fitted_attribute = "filter_"
    _parameter_constraints: ClassVar[dict] = {
        "cov_est": [StrOptions(set(COVARIANCE_ESTIMATORS))],
        "universum_label": UNIVERSUM_LABEL,
    }

    def __init__(self, cov_est: str = "oas", universum_label=None):
        self.cov_est = cov_est
        self.universum_label = universum_label

    def fit(self, X, y=None):
        """Reference = Riemannian mean of the universum trials' covariances (all without any).

        Parameters
        ----------
        X : array-like of shape (n_trials, n_channels, n_times)
        y : array-like of shape (n_trials,) or None
            Labels; universum (rest) trials carry ``universum_label``.

        Returns
        -------
        self : Recentring
        """
        self._validate_params()
        X = check_epochs(self, X, reset=True, min_times=2)
        if y is not None:
            rest = universum_mask(np.asarray(y), self.universum_label)
            if rest.any():
                X = X[rest]
        self._set_reference(rest_reference(X, self.cov_est), len(X))
        return self

    def _set_reference(self, M: np.ndarray, n: int) -> None:
        self.reference_ = M
        self.filter_ = np.ascontiguousarray(invsqrtm(M))
        self.n_reference_ = n

    def transform(self, X) -> np.ndarray:
        """Whitened epochs ``M^{-1/2} X``.

        Parameters
        ----------
        X : array-like of shape (n_trials, n_channels, n_times)

        Returns
        -------
        X_new : ndarray of shape (n_trials, n_channels, n_times)
        """
        X = self._check_transform_input(X)
        return np.einsum("ij,njt->nit", self.filter_, X)

    def transform_trial(self, x: np.ndarray) -> np.ndarray:
        """Lean single-trial path (no validation): ``M^{-1/2} x`` for ``x`` (channels, times)."""
        return self.filter_ @ x

    def update(self, x: np.ndarray) -> None:
        """Fold one rest window into the reference (running Riemannian mean).

        ``M ← M #_{1/n} C(x)`` with ``n`` the new count: the geodesic step that keeps ``M`` the
        running Riemannian mean estimate of the reference trials seen so far.

        Parameters
        ----------
        x : ndarray of shape (n_channels, n_times)
            A rest window of the current run, in the decoder's (unwhitened) signal space.
        """
        check_is_fitted(self)
        x = np.asarray(x, dtype=np.float64)
        if x.ndim != 2 or x.shape[0] != self.n_features_in_:
            raise ValueError(
                f"update expects one rest window of shape ({self.n_features_in_}, n_times), "
                f"got {x.shape}."
            )
        C = regularized_covariances(x[np.newaxis], self.cov_est)[0]
        n = self.n_reference_ + 1
        self._set_reference(geodesic_riemann(self.reference_, C, 1.0 / n), n)

    def restart(self, x: np.ndarray) -> None:
        """Start a new run's reference from its first rest window (forgets the old reference).

        Parameters
        ----------
        x : ndarray of shape (n_channels, n_times)
        """
        check_is_fitted(self)
        self.n_reference_ = 0
        self.update(x)


def recentre_runs(epochs, cov_est: str = "oas", *, causal: bool = False):
    """Re-centre every run of an EpochSet on the Riemannian mean of its own rest trials.

    Parameters
    ----------
    epochs : EpochSet
        Labelled and universum trials with their ``runs``, in recording order within each
        run; each run needs universum (rest) trials.
    cov_est : {"oas", "lwf", "scm"}
        Covariance estimator of the reference.
    causal : bool
        ``False``: one reference per run, from all its rest trials (a rest block recorded
        before feedback). ``True``: what the online decoder does with
        :meth:`Recentring.update` — each trial is mapped with the running mean of the rest
        trials of its run recorded before it (trials before the run's first rest trial use
        that first one).

    Returns
    -------
    epochs : EpochSet
        A copy whose trials of run ``r`` are ``M_r^{-1/2} X``.

    Raises
    ------
    ValueError
        Naming the runs without rest trials.
    """
    X = epochs.X.copy()
    missing = []
    for run in np.unique(epochs.runs):
        in_run = np.flatnonzero(epochs.runs == run)
        rest = in_run[epochs.is_universum[in_run]]
        if not rest.size:
            missing.append(str(run))
            continue
        if not causal:
            X[in_run] = Recentring(cov_est).fit(epochs.X[rest]).transform(epochs.X[in_run])
            continue
        step = Recentring(cov_est).fit(epochs.X[rest[:1]])
        for i in in_run:
            X[i] = step.transform_trial(epochs.X[i])
            if epochs.is_universum[i] and i != rest[0]:
                step.update(epochs.X[i])
    if missing:
        raise ValueError(
            f"Runs {missing} have no rest (universum) trials to re-centre on; load the "
            "recording with its universum trials or leave those runs out."
        )
    return replace(epochs, X=X)
