"""TDSEP / SOBI: blind source separation from time-lagged second-order statistics.

Model ``x(t) = A s(t)`` with sources of distinct autocorrelation (notes L1072–1100;
``bci-signal-processing.md`` §6). Steps:

1. centre and whiten: ``z = K x`` with ``K = Λ^{-1/2} Eᵀ`` from the eigendecomposition of the
   covariance ``V = ⟨x xᵀ⟩`` (PCA whitening; eigenvalues below ``rank_tol · λ_max`` are dropped,
   so average-referenced EEG loses its null direction instead of producing inf);
2. estimate the lagged covariances ``V_τ = ⟨x_t x_{t−τ}ᵀ⟩`` for the chosen lags, symmetrise them
   (``(V_τ + V_τᵀ)/2``; finite-sample ``V_τ`` is not symmetric) and whiten, ``K V_τ Kᵀ``;
3. jointly diagonalise them by Jacobi rotations
   (:func:`bci_universum.solvers.joint_diag.joint_diagonalize`), giving ``V`` with
   ``Vᵀ (K V_τ Kᵀ) V`` ≈ diagonal;
4. unmixing ``W = Vᵀ K`` and mixing ``A = K⁺ V`` (the erratum of §6 applied to L1096–1098).

With one lag this is AMUSE / Molgedey–Schuster; with a set of lags it is SOBI (Belouchrani et
al., IEEE TSP 45(2), 1997), offered as :class:`SOBI` with a longer default lag set.
"""

from __future__ import annotations

import warnings
from numbers import Integral

import numpy as np
from sklearn.base import BaseEstimator, TransformerMixin
from sklearn.exceptions import ConvergenceWarning

from ..solvers.joint_diag import joint_diagonalize
from ._bss import SourcesMixin, check_signals, select_fit_trials
from ._metrics import amari_index

__all__ = ["SOBI", "TDSEP", "amari_index"]


def _check_lags(lags) -> np.ndarray:
    """Lags as a sorted array of distinct positive integers (an int ``L`` means 1..L)."""
    if isinstance(lags, Integral) and not isinstance(lags, bool):
        if lags < 1:
            raise ValueError(f"lags must be a positive integer or a sequence of them, got {lags}.")
        return np.arange(1, int(lags) + 1)
    arr = np.asarray(lags)
    if (
        arr.ndim != 1
        or arr.size == 0
        or arr.dtype.kind not in "iu"
        or np.any(arr < 1)
        or np.unique(arr).size != arr.size
    ):
        raise ValueError(
            f"lags must be a positive integer or a non-empty sequence of distinct positive "
            f"integers (samples), got {lags!r}."
        )
    return np.sort(arr).astype(np.int64)


def lagged_covariances(X3: np.ndarray, lags: np.ndarray) -> np.ndarray:
    """Pooled, symmetrised lagged covariances of centred epochs.

    Lagged products are taken within each trial only, never across trial boundaries, and
    pooled over trials: ``V_τ = Σ_e Σ_t x_e(t) x_e(t−τ)ᵀ / Σ_e (n_times − τ)``. For equal-length
    trials this is the average of the per-trial lagged covariances.

    Parameters
    ----------
    X3 : ndarray of shape (n_trials, n_channels, n_times)
        Centred data.
    lags : ndarray of int
        Positive lags in samples, each smaller than ``n_times``.

    Returns
    -------
    covs : ndarray of shape (1 + n_lags, n_channels, n_channels)
        Lag 0 (the covariance) first, then one symmetrised matrix per lag.
    """
    n_trials, _, n_times = X3.shape
    covs = []
    for tau in np.concatenate([[0], lags]):
        C = sum(x[:, tau:] @ x[:, : n_times - tau].T for x in X3)
        C /= n_trials * (n_times - tau)
        covs.append(0.5 * (C + C.T))
    return np.stack(covs)


class TDSEP(SourcesMixin, TransformerMixin, BaseEstimator):
    """Temporal decorrelation source separation (TDSEP; SOBI with a set of lags).

    Parameters
    ----------
    n_components : int or None
        Number of sources; the whitening keeps the ``n_components`` principal directions.
        ``None`` keeps every direction above ``rank_tol``.
    lags : int or sequence of int
        Time lags in samples. An int ``L`` means lags ``1..L``. Sources separate only if their
        autocorrelations differ at one of the lags; choose them to span the autocorrelation time
        of the sources (e.g. 1..10 or 1..20 samples at 250 Hz).
    rank_tol : float
        Whitening drops covariance eigenvalues below ``rank_tol · λ_max``.
    tol : float
        Stopping threshold of the Jacobi sweeps: the largest ``|sin θ|`` of a sweep.
    max_sweeps : int
        Sweep cap of the joint diagonaliser; a :class:`~sklearn.exceptions.ConvergenceWarning`
        is issued if it is reached.
    fit_on : {"all", "labelled"}
        Trials used for fitting when ``y`` marks universum trials. TDSEP is unsupervised, so the
        default uses every trial (universum trials contain the same sources and add samples);
        ``"labelled"`` fits on labelled trials only and transforms universum trials with the
        same filters.
    universum_label : int, str or None
        Sentinel marking universum trials in ``y`` (default: ``bci_universum.UNIVERSUM``).

    Attributes
    ----------
    unmixing_matrix_ : ndarray of shape (``n_components_``, n_channels)
        ``W``; sources are ``W (x − mean_)``.
    mixing_matrix_ : ndarray of shape (n_channels, ``n_components_``)
        ``A``, the spatial patterns (columns), with ``W A = I``.
    whitening_ : ndarray of shape (``n_components_``, n_channels)
        ``K``.
    mean_ : ndarray of shape (n_channels,)
        Channel means of the fitting data.
    lags_ : ndarray of int
        The lags used.
    autocorrelations_ : ndarray of shape (n_lags, ``n_components_``)
        Diagonals of the jointly diagonalised lagged covariances: the lagged autocorrelation
        of each unit-variance source. Components are ordered by decreasing lag-``lags_[0]``
        autocorrelation; each pattern's largest-magnitude entry is positive.
    off_diagonal_ : ndarray
        Joint-diagonalisation criterion before the first sweep and after each sweep.
    n_sweeps_ : int
        Sweeps performed by the joint diagonaliser.
    n_components_ : int
        Number of sources.
    n_features_in_ : int
        Number of channels.

    Notes
    -----
    ``X`` is either one continuous recording ``(n_channels, n_times)`` or epochs
    ``(n_trials, n_channels, n_times)``; ``transform`` returns sources in the same layout.
    For epochs, lagged products are computed within trials and pooled (see
    :func:`lagged_covariances`), so trial boundaries never create spurious lagged products.
    """

    def __init__(
        self,
        n_components=None,
        lags=10,
        rank_tol=1e-10,
        tol=1e-8,
        max_sweeps=200,
        fit_on="all",
        universum_label=None,
    ):
        self.n_components = n_components
        self.lags = lags
        self.rank_tol = rank_tol
        self.tol = tol
        self.max_sweeps = max_sweeps
        self.fit_on = fit_on
        self.universum_label = universum_label

    def fit(self, X, y=None):
        """Estimate the unmixing matrix.

        Parameters
        ----------
        X : array-like of shape (n_channels, n_times) or (n_trials, n_channels, n_times)
            Continuous data or epochs.
        y : array-like of shape (n_trials,) or None
            Labels; only used to drop universum trials when ``fit_on="labelled"``.

        Returns
        -------
        self : TDSEP
        """
        lags = _check_lags(self.lags)
        if not (np.isscalar(self.rank_tol) and 0 <= self.rank_tol < 1):
            raise ValueError(f"rank_tol must be in [0, 1), got {self.rank_tol!r}.")
        X3, continuous = check_signals(self, X, reset=True)
        X3 = select_fit_trials(X3, y, self.fit_on, self.universum_label, continuous)
        n_trials, n_channels, n_times = X3.shape
        if n_times <= lags[-1]:
            raise ValueError(
                f"Too few samples: the largest lag ({lags[-1]}) must be smaller than the "
                f"number of time samples per trial ({n_times})."
            )
        if n_trials * n_times <= n_channels:
            raise ValueError(
                f"Too few samples: {n_trials * n_times} time samples cannot estimate the "
                f"covariance of {n_channels} channels."
            )
        self.mean_ = X3.mean(axis=(0, 2))
        covs = lagged_covariances(X3 - self.mean_[:, None], lags)

        K, K_pinv = self._whitening(covs[0])
        zcovs = K @ covs[1:] @ K.T
        result = joint_diagonalize(zcovs, tol=self.tol, max_sweeps=self.max_sweeps)
        if not result.converged:
            warnings.warn(
                f"TDSEP joint diagonalisation did not converge in {self.max_sweeps} sweeps; "
                "increase max_sweeps or tol.",
                ConvergenceWarning,
                stacklevel=2,
            )
        V = result.rotation
        autocorr = np.einsum("lii->li", result.diagonalized)
        order = np.argsort(-autocorr[0], kind="stable")
        V, autocorr = V[:, order], autocorr[:, order]
        W = V.T @ K
        A = K_pinv @ V
        signs = np.sign(A[np.abs(A).argmax(axis=0), np.arange(A.shape[1])])
        signs[signs == 0] = 1.0
        self.unmixing_matrix_ = W * signs[:, None]
        self.mixing_matrix_ = A * signs[None, :]
        self.whitening_ = K
        self.lags_ = lags
        self.autocorrelations_ = autocorr
        self.off_diagonal_ = result.off_diagonal
        self.n_sweeps_ = result.n_sweeps
        self.n_components_ = W.shape[0]
        return self

    def _whitening(self, cov: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """PCA whitening ``K`` and its pseudo-inverse, with rank and dimension reduction."""
        evals, evecs = np.linalg.eigh(cov)
        evals, evecs = evals[::-1], evecs[:, ::-1]
        if not evals[0] > 0:
            raise ValueError("X has zero variance on every channel; cannot whiten.")
        rank = int(np.sum(evals > self.rank_tol * evals[0]))
        n = self.n_components
        if n is None:
            n = rank
        elif not isinstance(n, Integral) or isinstance(n, bool) or not 1 <= n <= rank:
            raise ValueError(
                f"n_components must be an int in [1, {rank}] (the rank of the data "
                f"covariance) or None, got {n!r}."
            )
        scale = np.sqrt(evals[:n])
        return evecs[:, :n].T / scale[:, None], evecs[:, :n] * scale[None, :]


class SOBI(TDSEP):
    """Second-order blind identification: :class:`TDSEP` with lags 1..100 by default.

    Same procedure and parameters as :class:`TDSEP`; only the default lag set differs (100
    lags, as EEGLAB's ``sobi``). Belouchrani et al., IEEE TSP 45(2), 1997.
    """

    def __init__(
        self,
        n_components=None,
        lags=100,
        rank_tol=1e-10,
        tol=1e-8,
        max_sweeps=200,
        fit_on="all",
        universum_label=None,
    ):
        super().__init__(
            n_components=n_components,
            lags=lags,
            rank_tol=rank_tol,
            tol=tol,
            max_sweeps=max_sweeps,
            fit_on=fit_on,
            universum_label=universum_label,
        )
