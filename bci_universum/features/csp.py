"""Common spatial patterns (CSP), universum-aware.

Binary CSP solves the generalised eigenproblem ``Σ₁w = λ(Σ₁ + Σ₂)w`` (Ramoser et al. 2000;
Blankertz et al. 2008; ``bci-signal-processing.md`` §12), so ``Wᵀ(Σ₁ + Σ₂)W = I`` and
``λ_j = w_jᵀΣ₁w_j ∈ [0, 1]``. Class covariances are computed as in ``mne.decoding.CSP``'s
default ``cov_est="concat"``: the trials of a class are concatenated in time and the covariance
is not demeaned (inputs are band-pass filtered, hence zero-mean).

Universum trials (label :data:`bci_universum.UNIVERSUM` or ``"universum"``) never enter the
class covariances. With ``universum_weight=λ_U > 0`` their covariance ``Σ_U`` becomes a nuisance
term of the denominator, after the kernel-FDA/oriented-PCA hybrid of the thesis (§2.4.2, where
the universum covariance is added to the within-class scatter)::

    (Σ₁ − Σ₂) w = ν (Σ₁ + Σ₂ + λ_U Σ_U) w,      eigenvalues_ = (1 + ν) / 2

i.e. ``eigh(Σ₁ + ½λ_UΣ_U, Σ₁ + Σ₂ + λ_UΣ_U)``. Both ends of the spectrum are then filters
whose class contrast is large relative to the total *and* universum variance; with λ_U = 0 this
is exactly classic CSP (eigenvalues ``wᵀΣ₁w / wᵀ(Σ₁+Σ₂)w``), and swapping the classes still maps
``λ → 1 − λ``.

Multiclass: one-vs-rest (a binary problem per class against the mean covariance of the other
classes, ``n_components`` filters per class) or approximate joint diagonalisation of the whitened
class covariances (:func:`bci_universum.solvers.joint_diag.joint_diagonalize`, Jacobi rotations)
with components ranked by the information-theoretic criterion of Grosse-Wentrup & Buss (2008),
the criterion of ``mne.decoding.CSP(component_order="mutual_info")``.

Rank-deficient data (flat or unconnected channels, duplicated or interpolated channels, average
reference) are handled as ``mne.decoding.CSP``'s default ``rank=None, restr_type="restricting"``:
the rank ``r`` of the concatenated labelled trials is estimated from their singular values (MNE's
``"auto"`` tolerance, ``n_channels · s_max · eps``), the trials are projected onto their ``r``
leading left singular vectors (:func:`principal_subspace`), covariances are estimated and CSP is
solved there, and the filters and patterns are mapped back to the channels. A filter can then
never lie in the null space of the data (zero power, ``log 0``), even when a shrunk covariance
is full rank.
"""

from __future__ import annotations

from functools import cache
from numbers import Integral, Real
from typing import ClassVar

import numpy as np
import scipy.linalg
from sklearn.base import clone
from sklearn.covariance import (
    OAS,
    EmpiricalCovariance,
    LedoitWolf,
    ShrunkCovariance,
    shrunk_covariance,
)
from sklearn.utils._param_validation import Interval, StrOptions

from .._constraints import NON_NEGATIVE, UNIVERSUM_LABEL
from ..solvers.joint_diag import joint_diagonalize
from ._epochs import EpochsTransformer, check_labelled_epochs, labelled_epochs

COV_ESTIMATORS = ("empirical", "shrinkage", "oas", "ledoit_wolf")
COMPONENT_ORDERS = ("mutual_info", "alternate", "eigenvalue")
RANKS = ("auto", "full")


def epochs_covariance(X: np.ndarray, cov_est: str = "empirical", shrinkage: float = 0.1):
    """Covariance of epochs concatenated in time, with scikit-learn's estimators.

    Parameters
    ----------
    X : ndarray of shape (n_trials, n_channels, n_times)
        Epochs (band-pass filtered: the covariance is not demeaned).
    cov_est : {"empirical", "shrinkage", "oas", "ledoit_wolf"}
        :class:`~sklearn.covariance.EmpiricalCovariance`,
        :class:`~sklearn.covariance.ShrunkCovariance` (with ``shrinkage``),
        :class:`~sklearn.covariance.OAS` or :class:`~sklearn.covariance.LedoitWolf`, all with
        ``assume_centered=True`` and rescaled by ``N / (N − 1)`` for ``N`` samples, exactly as
        MNE's ``_regularized_covariance`` (so that features match ``mne.decoding.CSP``).
    shrinkage : float in [0, 1]
        Shrinkage towards ``trace/n · I`` for ``cov_est="shrinkage"``.

    Returns
    -------
    cov : ndarray of shape (n_channels, n_channels)
    """
    data = X.transpose(0, 2, 1).reshape(-1, X.shape[1])
    if cov_est == "empirical":
        est = EmpiricalCovariance(assume_centered=True, store_precision=False)
    elif cov_est == "shrinkage":
        est = ShrunkCovariance(shrinkage=shrinkage, assume_centered=True, store_precision=False)
    elif cov_est == "oas":
        est = OAS(assume_centered=True, store_precision=False)
    elif cov_est == "ledoit_wolf":
        est = LedoitWolf(assume_centered=True, store_precision=False)
    else:
        raise ValueError(f"cov_est must be one of {COV_ESTIMATORS}, got {cov_est!r}.")
    n = data.shape[0]
    return est.fit(data).covariance_ * (n / max(n - 1, 1))


def scatter_covariance(
    S: np.ndarray, n_samples: int, cov_est: str = "empirical", shrinkage: float = 0.1
) -> np.ndarray:
    """:func:`epochs_covariance` from the scatter matrix ``DDᵀ`` of the concatenated epochs.

    Parameters
    ----------
    S : ndarray of shape (n_channels, n_channels)
        ``Σ_i X_i X_iᵀ`` over the epochs ``X_i`` (not demeaned).
    n_samples : int
        Number of time samples ``N`` summed in ``S``.
    cov_est : {"empirical", "shrinkage"}
        The estimators that are functions of ``S`` alone (not OAS or Ledoit-Wolf).
    shrinkage : float in [0, 1]
        Shrinkage for ``"shrinkage"``.

    Returns
    -------
    cov : ndarray of shape (n_channels, n_channels)
    """
    if cov_est not in ("empirical", "shrinkage"):
        raise ValueError(f"cov_est must be 'empirical' or 'shrinkage', got {cov_est!r}.")
    C = S / n_samples
    if cov_est == "shrinkage":
        C = shrunk_covariance(C, shrinkage)
    return C * (n_samples / max(n_samples - 1, 1))


def scatter_full_rank(S: np.ndarray, n_samples: int) -> bool:
    """Whether the scatter ``S = DDᵀ`` of data ``D`` proves :func:`principal_subspace` full.

    The computed ``S`` differs from ``DDᵀ`` by at most ``N · eps · trace(S)`` in norm (``N``
    samples summed) and ``eigvalsh`` adds ``n_channels · eps · λ_max``. A smallest eigenvalue
    above twice that bounds ``s_min² / s_max² > N · eps``: ``s_min`` lies orders of magnitude
    above the ``"auto"`` tolerance ``n_channels · s_max · eps``, so the QR of ``D`` is not
    needed. False means "not proven" (``principal_subspace`` decides).
    """
    d = np.linalg.eigvalsh(S)
    tol = (n_samples * np.trace(S) + S.shape[0] * d[-1]) * np.finfo(float).eps
    return bool(d[0] > 2 * tol)


_RANK_MESSAGE = (
    "CSP: the {what} covariance is not positive definite (rank-deficient data, e.g. average "
    "reference, flat, duplicated or interpolated channels); use rank='auto'."
)


def principal_subspace(X: np.ndarray, rank: str | int = "auto") -> np.ndarray | None:
    """Orthonormal basis (rows) of the leading ``rank`` left singular vectors of epochs.

    The epochs are concatenated in time into ``(n_channels, n_trials · n_times)`` data. For
    ``rank="auto"`` the rank is MNE's ``rank=None`` estimate: singular values above
    ``n_channels · s_max · eps`` (``mne.rank.estimate_rank(tol="auto")``); they are taken from
    the data, not from its covariance, whose null eigenvalues are only resolved to
    ``eps · λ_max``. Returns ``None`` when the basis would be all channels: for ``"auto"``,
    without the data's QR when the scatter proves it (:func:`scatter_full_rank`).
    """
    if rank == "auto" and scatter_full_rank(
        (X @ X.transpose(0, 2, 1)).sum(axis=0), X.shape[0] * X.shape[2]
    ):
        return None
    return _row_space(X.transpose(0, 2, 1).reshape(-1, X.shape[1]), rank)


def _row_space(D: np.ndarray, rank: str | int) -> np.ndarray | None:
    """:func:`principal_subspace` of the data whose samples are the rows of ``D``.

    ``D`` may also be the stacked R factors of the trials' QR decompositions: their QR is a QR
    of the concatenated trials (TSQR), hence the same ``R`` up to the signs of its rows.
    """
    # The data Dᵀ (channels × samples) = Rᵀ Qᵀ: Dᵀ and Rᵀ (channels × channels) share their
    # left singular vectors and singular values, and Householder QR is backward stable, so
    # this is the SVD of the data to working precision without computing its (channels ×
    # samples) right singular vectors (6× faster on a calibration run).
    R = np.linalg.qr(D, mode="r")
    U, s, _ = np.linalg.svd(R.T, full_matrices=False)
    if rank == "auto":
        rank = int(np.sum(s > s.size * s[0] * np.finfo(float).eps))
    return None if rank == s.size else U[:, :rank].T


def _check_positive_definite(C: np.ndarray, what: str) -> None:
    d = np.linalg.eigvalsh(C)
    if d[0] <= 1e-10 * d[-1]:
        raise ValueError(_RANK_MESSAGE.format(what=what))


def _generalized_eigh(A: np.ndarray, B: np.ndarray):
    _check_positive_definite(B, "summed class")
    return scipy.linalg.eigh(A, B)


def _order(evals: np.ndarray, component_order: str) -> np.ndarray:
    """Indices sorting binary-GEV components (MNE's rules for the first two)."""
    if component_order == "mutual_info":
        return np.argsort(np.abs(evals - 0.5))[::-1]
    if component_order == "alternate":
        i = np.argsort(evals)
        ix = np.empty_like(i)
        ix[1::2] = i[: len(i) // 2]
        ix[0::2] = i[len(i) // 2 :][::-1]
        return ix
    return np.argsort(evals)[::-1]


def _contrast_gev(C_pos, C_neg, C_U, weight, component_order):
    """Filters (rows) and eigenvalues of one universum-penalised CSP contrast."""
    A = C_pos
    B = C_pos + C_neg
    if weight > 0:
        A = A + 0.5 * weight * C_U
        B = B + weight * C_U
    evals, evecs = _generalized_eigh(A, B)
    ix = _order(evals, component_order)
    return evecs[:, ix].T, evals[ix]


def _mutual_info(covs: np.ndarray, priors: np.ndarray, W: np.ndarray) -> np.ndarray:
    """Grosse-Wentrup & Buss information criterion per filter (rows of W, wᵀΣ̄w = 1)."""
    var = np.einsum("kc,ncd,kd->nk", W, covs, W)  # (n_classes, n_filters)
    aa = priors @ np.log(np.sqrt(var))
    bb = priors @ (var**2 - 1)
    return -(aa + (3.0 / 16) * bb**2)


def _haufe_patterns(W: np.ndarray, C: np.ndarray) -> np.ndarray:
    """Patterns ``A = CW(WᵀCW)⁻¹`` (Haufe et al. 2014) as rows, one per filter row of W.

    The pseudo-inverse: one-vs-rest CSP may keep more filters than channels, whose
    components are then linearly dependent (``WᵀCW`` singular).
    """
    F = W.T
    return np.linalg.pinv(F.T @ C @ F, hermitian=True) @ (C @ F).T


class CSP(EpochsTransformer):
    """Common spatial patterns on epochs, fitted on labelled trials only.

    Parameters
    ----------
    n_components : int
        Number of filters used by ``transform`` (for ``multiclass="ovr"``: per class).
    cov_est : {"empirical", "shrinkage", "oas", "ledoit_wolf"}
        Covariance estimator (scikit-learn), see :func:`epochs_covariance`.
    shrinkage : float in [0, 1]
        Shrinkage value for ``cov_est="shrinkage"`` (as ``mne.decoding.CSP(reg=float)``).
    rank : "auto", "full" or int
        Dimension of the subspace CSP is solved in (see the module docstring). ``"auto"``:
        the rank of the labelled trials (as MNE's default ``rank=None``), so rank-deficient
        data give finite features; ``"full"``: all channels, rank-deficient data are rejected
        (empirical covariance) or may give filters with zero power (shrunk covariances); an
        int ``r``: the ``r`` leading principal directions of the labelled trials.
    norm_trace : bool
        Divide each class covariance by its trace (Ramoser variant). Off by default: with it
        on, CSP is no longer invariant to an invertible mixing of the channels.
    transform_into : {"log_var", "filtered"}
        ``"log_var"``: per-component average power of the filtered trials (log by default),
        shape ``(n_trials, n_filters)``; ``"filtered"``: the spatially filtered epochs,
        shape ``(n_trials, n_filters, n_times)``.
    log : bool
        For ``"log_var"``: take the log of the power (``mne.decoding.CSP(log=True)``); if
        False, z-score the power with the mean and SD of the labelled training trials
        (``log=False`` in MNE).
    relative_power : bool
        For ``"log_var"``: divide each trial's component powers by their sum before the log
        (Ramoser et al. 2000).
    component_order : {"mutual_info", "alternate", "eigenvalue"}
        ``"mutual_info"`` (default, as MNE): two classes by ``|λ − 0.5|`` decreasing, more by
        the information criterion; ``"alternate"``: largest, smallest, second largest, ...
        (two classes or one-vs-rest); ``"eigenvalue"``: by ``λ`` decreasing (not for "ajd").
    multiclass : {"ajd", "ovr"}
        Multiclass method: joint diagonalisation (Jacobi) or one-vs-rest.
    universum_weight : float >= 0
        Weight ``λ_U`` of the universum covariance in the denominator (see the module
        docstring). Requires universum trials in ``fit`` when > 0. Not for ``"ajd"``.
    universum_label : int, str or None
        Sentinel label of universum trials (default: ``-2`` or ``"universum"``).

    Attributes
    ----------
    filters_ : ndarray of shape (n_filters, n_channels)
        Spatial filters as rows, ordered; binary and "ajd": ``rank_`` filters (the first
        ``n_components`` are used), "ovr": ``n_components`` per class, class by class.
    patterns_ : ndarray of shape (n_filters, n_channels)
        Spatial patterns as rows (Haufe et al. 2014; equals ``inv(filters_).T`` rows when
        the filters are square).
    eigenvalues_ : ndarray
        Binary: ``(rank_,)`` eigenvalues in filter order; "ovr": ``(n_classes *
        n_components,)`` eigenvalues of each filter's own contrast; "ajd": ``(n_classes,
        rank_)`` class variances ``wᵀΣ_cw`` with ``wᵀΣ̄w = 1``.
    rank_ : int
        Dimension of the subspace the filters span (``n_channels`` for ``rank="full"``).
    classes_ : ndarray
        Labelled classes (never the universum sentinel).
    n_features_in_ : int
        Number of channels.
    mean_, std_ : ndarray of shape (n_out,)
        Mean and SD of the training power (used when ``log=False``).
    """

    def __init__(
        self,
        n_components: int = 4,
        *,
        cov_est: str = "empirical",
        shrinkage: float = 0.1,
        rank: str | int = "auto",
        norm_trace: bool = False,
        transform_into: str = "log_var",
        log: bool = True,
        relative_power: bool = False,
        component_order: str = "mutual_info",
        multiclass: str = "ajd",
        universum_weight: float = 0.0,
        universum_label=None,
    ):
        self.n_components = n_components
        self.cov_est = cov_est
        self.shrinkage = shrinkage
        self.rank = rank
        self.norm_trace = norm_trace
        self.transform_into = transform_into
        self.log = log
        self.relative_power = relative_power
        self.component_order = component_order
        self.multiclass = multiclass
        self.universum_weight = universum_weight
        self.universum_label = universum_label

    _fitted_attribute = "filters_"
    _supervised = True
    _parameter_constraints: ClassVar[dict] = {
        "n_components": [Interval(Integral, 1, None, closed="left")],
        "cov_est": [StrOptions(set(COV_ESTIMATORS))],
        "shrinkage": [Interval(Real, 0, 1, closed="both")],
        "rank": [StrOptions(set(RANKS)), Interval(Integral, 1, None, closed="left")],
        "norm_trace": ["boolean"],
        "transform_into": [StrOptions({"log_var", "filtered"})],
        "log": ["boolean"],
        "relative_power": ["boolean"],
        "component_order": [StrOptions(set(COMPONENT_ORDERS))],
        "multiclass": [StrOptions({"ajd", "ovr"})],
        "universum_weight": [NON_NEGATIVE],
        "universum_label": UNIVERSUM_LABEL,
    }

    def _cov(self, X):
        return self._normalised(epochs_covariance(X, self.cov_est, self.shrinkage))

    def _normalised(self, C):
        return C / np.trace(C) if self.norm_trace else C

    def fit(self, X, y):
        """Fit the spatial filters on the labelled trials of ``X``.

        Parameters
        ----------
        X : array-like of shape (n_trials, n_channels, n_times)
            Band-pass filtered epochs; universum trials may be present.
        y : array-like of shape (n_trials,)
            Class labels; universum trials carry the sentinel label.

        Returns
        -------
        self : CSP
        """
        self._validate_params()
        X_lab, y_lab, X_u, classes = labelled_epochs(self, X, y, self.universum_label)
        self._check_n_channels(X_lab.shape[1])
        restr = None if self.rank == "full" else principal_subspace(X_lab, self.rank)
        # Covariances are estimated in the subspace, so shrinkage targets trace/rank there.
        X_fit, X_u = (X_lab, X_u) if restr is None else (restr @ X_lab, restr @ X_u)
        covs = np.stack([self._cov(X_fit[y_lab == c]) for c in classes])
        C_U = self._cov(X_u) if self.universum_weight > 0 and X_u.shape[0] else None
        self._solve(covs, C_U, X_u.shape[0], y_lab, classes, restr, X_lab.shape[1])
        power = self._power(X_lab)
        self.mean_ = power.mean(axis=0)
        self.std_ = power.std(axis=0)
        return self

    def _check_n_channels(self, n_channels: int) -> None:
        """Refuse ``n_components`` or ``rank`` above ``n_channels`` (before any fit)."""
        if self.n_components > n_channels:
            raise ValueError(
                f"n_components={self.n_components} exceeds the number of channels ({n_channels})."
            )
        if self.rank not in RANKS and self.rank > n_channels:
            raise ValueError(f"rank={self.rank} exceeds the number of channels ({n_channels}).")

    def _solve(
        self, covs, C_U, n_universum, y_lab, classes, restr, n_channels, patterns=True
    ) -> None:
        """Filters from the class (and universum) covariances in the subspace ``restr``; the
        patterns too unless ``patterns`` is False."""
        rank = n_channels if restr is None else restr.shape[0]
        if self.n_components > rank:
            raise ValueError(
                f"n_components={self.n_components} exceeds the dimension CSP is solved in "
                f"({rank} of {n_channels} channels with rank={self.rank!r}; for 'auto', the "
                "rank of the labelled trials: flat or duplicated channels?)."
            )
        weight = float(self.universum_weight)
        if weight > 0 and n_universum == 0:
            raise ValueError(
                f"universum_weight={weight} needs universum trials in y (label "
                f"{self.universum_label if self.universum_label is not None else -2!r} or "
                "'universum'), but none were given."
            )
        multi = classes.size > 2
        if self.component_order == "alternate" and multi and self.multiclass == "ajd":
            raise ValueError("component_order='alternate' needs two classes or multiclass='ovr'.")
        if multi and self.multiclass == "ajd":
            if self.component_order == "eigenvalue":
                raise ValueError("component_order='eigenvalue' is undefined for multiclass='ajd'.")
            if weight > 0:
                raise ValueError("universum_weight > 0 is supported for two classes or 'ovr'.")

        C_mean = covs.mean(axis=0)
        if not multi:
            filters, evals = _contrast_gev(covs[0], covs[1], C_U, weight, self.component_order)
            n_out = self.n_components
        elif self.multiclass == "ovr":
            parts = []
            for i in range(classes.size):
                rest = np.delete(covs, i, axis=0).mean(axis=0)
                F, ev = _contrast_gev(covs[i], rest, C_U, weight, self.component_order)
                parts.append((F[: self.n_components], ev[: self.n_components]))
            filters = np.concatenate([p[0] for p in parts])
            evals = np.concatenate([p[1] for p in parts])
            n_out = filters.shape[0]
        else:
            priors = np.array([np.mean(y_lab == c) for c in classes])
            filters, evals = self._fit_ajd(covs, C_mean, priors)
            n_out = self.n_components
        if patterns:
            self.patterns_ = _haufe_patterns(filters, C_mean)
            if restr is not None:
                self.patterns_ = self.patterns_ @ restr
        if restr is not None:
            filters = filters @ restr

        self.classes_ = classes
        self.filters_ = filters
        self.eigenvalues_ = evals
        self.rank_ = rank
        self._n_out = n_out

    def fit_transform_folds(self, X, y, folds) -> tuple[np.ndarray, list]:
        """``fit_transform(X, y)`` and the features of inner cross-validation folds, sharing
        the per-trial work between the folds and the fit on all trials.

        Equal to rounding to ``self.fit_transform(X, y)`` and ``[(c.fit_transform(X[t],
        y[t]), c.transform(X[v])) for t, v in folds]`` with ``c = clone(self)`` each time: the
        class covariances of ``"empirical"`` and ``"shrinkage"`` are functions of the sum of
        the trials' scatter matrices ``X_i X_iᵀ`` (the trials are concatenated, not demeaned),
        and the power of a filter ``w`` is ``wᵀX_iX_iᵀw / n_times``, so each trial's scatter
        is computed once for all fits. A fit's principal subspace (:func:`principal_subspace`)
        is all channels when its summed scatter proves it (:func:`scatter_full_rank`); else
        the R factors of the trials' QR decompositions, computed once, are stacked (TSQR: the
        same ``R`` as the QR of the concatenated trials). Other covariance estimators and
        ``transform_into="filtered"`` fit each fold and all trials as ``fit`` does.

        Parameters
        ----------
        X : array-like of shape (n_trials, n_channels, n_times)
            Epochs, labelled and universum trials.
        y : array-like of shape (n_trials,)
            Labels; universum trials carry the sentinel.
        folds : iterable of (train, valid)
            Indices into ``X`` (as a cross-validator's ``split``).

        Returns
        -------
        features : ndarray
            ``transform(X)`` of this CSP, fitted on all of ``X, y``.
        fold_features : list of (ndarray, ndarray)
            Per fold, the features of ``X[train]`` and of ``X[valid]`` of a CSP fitted on
            ``X[train]``.
        """
        if self.cov_est not in ("empirical", "shrinkage") or self.transform_into != "log_var":
            out = []
            for train, valid in folds:
                csp = clone(self)
                out.append((csp.fit_transform(X[train], y[train]), csp.transform(X[valid])))
            return self.fit_transform(X, y), out
        self._validate_params()
        X, y, universum, _ = check_labelled_epochs(self, X, y, self.universum_label)
        self._check_n_channels(X.shape[1])
        scatters = X @ X.transpose(0, 2, 1)
        # the trials' QR, once a fit's subspace needs it
        r_factors = cache(lambda: np.linalg.qr(X.transpose(0, 2, 1), mode="r"))
        stats = (scatters, X.shape[2], y, universum, r_factors)
        fold = clone(self)  # refitted on each fold, without patterns (only features are used)
        out = []
        for train, valid in folds:
            features = fold._fit_scatters(stats, train, patterns=False)
            out.append((features[train], features[valid]))
        return self._fit_scatters(stats, np.arange(X.shape[0]), patterns=True), out

    def _fit_scatters(self, stats, train, patterns: bool) -> np.ndarray:
        """Fit on the trials ``train``, from ``stats``: all trials' scatter matrices, their
        number of samples, labels, universum mask and QR R factors (a cached callable), as
        :meth:`fit_transform_folds` computes them; return the features of all trials."""
        scatters, n_times, y, universum, r_factors = stats
        lab, uni = train[~universum[train]], train[universum[train]]
        y_lab = y[lab]
        classes = np.unique(y_lab)
        n_trials, n_channels = scatters.shape[:2]
        groups = [lab[y_lab == c] for c in classes] + [uni]
        # the summed scatter of each class and of the universum, in one product
        member = np.zeros((len(groups), n_trials))
        for g, trials in enumerate(groups):
            member[g, trials] = 1.0
        sums = (member @ scatters.reshape(n_trials, -1)).reshape(-1, n_channels, n_channels)
        restr = None
        if self.rank != "full" and not (
            self.rank == "auto" and scatter_full_rank(sums[:-1].sum(axis=0), lab.size * n_times)
        ):
            restr = _row_space(r_factors()[lab].reshape(-1, n_channels), self.rank)
        covs = np.stack(
            [
                self._scatter_cov(sums[k], groups[k].size * n_times, restr)
                for k in range(classes.size)
            ]
        )
        C_U = (
            self._scatter_cov(sums[-1], uni.size * n_times, restr)
            if self.universum_weight > 0 and uni.size
            else None
        )
        self._solve(covs, C_U, uni.size, y_lab, classes, restr, n_channels, patterns)
        W = self.filters_[: self._n_out]
        # wᵀ(X_i X_iᵀ)w for every trial and filter, as batched products (einsum's three-operand
        # loop costs ten times more)
        power = self._relative(np.sum((scatters @ W.T) * W.T, axis=1) / n_times)
        self.mean_ = power[lab].mean(axis=0)
        self.std_ = power[lab].std(axis=0)
        return self._power_features(power)

    def _scatter_cov(self, S, n_samples, restr):
        """``_cov`` of the trials whose summed scatter is ``S`` (``n_samples`` time samples),
        in ``restr``."""
        if restr is not None:
            S = restr @ S @ restr.T
        return self._normalised(scatter_covariance(S, n_samples, self.cov_est, self.shrinkage))

    def _fit_ajd(self, covs, C_mean, priors):
        _check_positive_definite(C_mean, "mean class")
        d, V = np.linalg.eigh(C_mean)
        P = (V / np.sqrt(d)) @ V.T
        rotation = joint_diagonalize(np.stack([P @ C @ P for C in covs])).rotation
        W = rotation.T @ P  # rows: filters with wᵀΣ̄w = 1
        ix = np.argsort(_mutual_info(covs, priors, W))[::-1]
        W = W[ix]
        return W, np.einsum("kc,ncd,kd->nk", W, covs, W)

    def _filtered(self, X):
        return self.filters_[: self._n_out] @ X

    def _power(self, X):
        return self._relative(np.mean(self._filtered(X) ** 2, axis=-1))

    def _relative(self, power):
        if self.relative_power:
            power /= power.sum(axis=-1, keepdims=True)
        return power

    def _power_features(self, power):
        """``"log_var"`` features from the components' power."""
        if self.log:
            return np.log(power)
        return (power - self.mean_) / self.std_

    def _features(self, X):
        """The output of ``transform`` for ``X`` of shape (..., n_channels, n_times), finite."""
        if self.transform_into == "filtered":
            return self._filtered(X)
        return self._power_features(self._power(X))

    def transform(self, X):
        """Apply the filters to all trials (labelled and universum).

        Parameters
        ----------
        X : array-like of shape (n_trials, n_channels, n_times)
            Epochs.

        Returns
        -------
        features : ndarray
            ``(n_trials, n_out)`` for ``"log_var"``, ``(n_trials, n_out, n_times)`` for
            ``"filtered"``.
        """
        return self._features(self._check_transform_input(X))

    def transform_trial(self, x: np.ndarray) -> np.ndarray:
        """Lean single-trial path for online use: :meth:`transform` of one trial, unvalidated.

        Parameters
        ----------
        x : ndarray of shape (n_channels, n_times)
            One trial, float64 and finite (the caller's responsibility).

        Returns
        -------
        features : ndarray
            ``(n_out,)`` for ``"log_var"``, ``(n_out, n_times)`` for ``"filtered"``.
        """
        return self._features(x)
