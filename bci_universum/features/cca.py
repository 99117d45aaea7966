"""Canonical correlation analysis: linear CCA, kernel CCA and temporal kernel CCA (tkCCA).

Notes L703–1008 (``bci-signal-processing.md`` §4). All three solve the generalised eigenvalue
problem (6) (L745)

    [[0, C_xy], [C_yx, 0]] [w_x; w_y] = ρ [[C_xx, 0], [0, C_yy]] [w_x; w_y]

in its equivalent, better-conditioned form: the singular value decomposition of the whitened
cross-covariance ``C_xx^{-1/2} C_xy C_yy^{-1/2} = U diag(ρ) Vᵀ``, ``w_x = C_xx^{-1/2} U``,
``w_y = C_yy^{-1/2} V``. The GEV spectrum is ``±ρ_i`` plus zeros; the singular values are the
canonical correlations, largest first. Weights are scaled to ``w_xᵀ C_xx w_x = 1`` (L707; a
plain ``eigh(S, D)`` returns ½ instead).

* :class:`CCA` — primal, with an optional ridge ``C + reg · tr(C)/d · I`` on both covariances
  (scale-free: relative to the mean eigenvalue; it can only lower the canonical correlations).
* :class:`KernelCCA` — dual (L837–839) with centred kernels and the regularised right-hand side
  ``K² + reg · I`` (as in the tkCCA GEV, L1008 with the erratum of §24 applied). ``reg`` must be
  positive: without it a full-rank kernel reaches ρ ≈ 1 on independent data.
* :class:`TemporalKernelCCA` — x is time-embedded over a set of lags (L965–969) and linear CCA
  is solved on ``[x(t − τ_1), …, x(t − τ_T)]`` against ``y(t)``; the weights are a multichannel FIR
  filter ``w_x(τ)`` (canonical convolution) and the correlation of each lag's contribution is
  the canonical correlogram.

Data layout follows scikit-learn's ``CCA``: rows are samples (time points), columns features.
``transform(X, Y)`` returns the pair of score arrays and so does ``fit_transform(X, Y)``, as in
scikit-learn; with ``fit_on="labelled"`` (``Y`` holds class labels, as a Pipeline passes them)
``fit_transform`` returns the x scores only (``fit(X, Y).transform(X)``), so that the
estimators work as Pipeline steps.
"""

from __future__ import annotations

from numbers import Integral, Real

import numpy as np
from sklearn.base import BaseEstimator, TransformerMixin
from sklearn.preprocessing import KernelCenterer
from sklearn.utils.validation import check_is_fitted, validate_data

from .._universum import universum_mask
from ..solvers.kernels import check_kernel, kernel_matrix, resolve_gamma

FIT_ON = ("all", "labelled")

__all__ = ["CCA", "KernelCCA", "TemporalKernelCCA", "time_embed"]


def _inv_sqrt(C: np.ndarray, rank_tol: float) -> np.ndarray:
    """``C^{-1/2}`` restricted to eigenvalues above ``rank_tol · λ_max`` (shape (d, rank))."""
    evals, evecs = np.linalg.eigh(C)
    keep = evals > rank_tol * max(evals[-1], np.finfo(float).tiny)
    if not keep.any():
        raise ValueError("A view has zero variance; canonical correlations are undefined.")
    return evecs[:, keep] / np.sqrt(evals[keep])


def canonical_svd(Cxx, Cyy, Cxy, n_components: int, rank_tol: float = 1e-12):
    """Canonical directions from (regularised) auto- and cross-covariances.

    Returns ``(Wx, Wy, rho)`` with ``Wxᵀ Cxx Wx = Wyᵀ Cyy Wy = I`` and ``Wxᵀ Cxy Wy =
    diag(rho)``, ``rho`` in decreasing order. Each pair's sign makes the largest-magnitude entry
    of the x weights positive.
    """
    Kx = _inv_sqrt(Cxx, rank_tol)
    Ky = _inv_sqrt(Cyy, rank_tol)
    n_max = min(Kx.shape[1], Ky.shape[1])
    if n_components > n_max:
        raise ValueError(
            f"n_components={n_components} exceeds the number of canonical pairs ({n_max}, the "
            "smaller rank of the two views)."
        )
    U, rho, Vt = np.linalg.svd(Kx.T @ Cxy @ Ky)
    Wx = Kx @ U[:, :n_components]
    Wy = Ky @ Vt[:n_components].T
    signs = np.sign(Wx[np.abs(Wx).argmax(axis=0), np.arange(n_components)])
    signs[signs == 0] = 1.0
    return Wx * signs, Wy * signs, rho[:n_components]


def _check_n_components(n_components) -> int:
    if isinstance(n_components, bool) or not isinstance(n_components, Integral):
        raise ValueError(f"n_components must be a positive int, got {n_components!r}.")
    if n_components < 1:
        raise ValueError(f"n_components must be a positive int, got {n_components!r}.")
    return int(n_components)


def _check_views(estimator, X, Y, *, min_samples: int = 2):
    """Validate the paired views (rows = samples); a 1-D Y becomes one column."""
    if Y is None:
        raise ValueError(f"{type(estimator).__name__} needs both views: fit(X, Y).")
    X, Y = validate_data(
        estimator,
        X,
        Y,
        multi_output=True,
        y_numeric=True,
        dtype=np.float64,
        ensure_min_samples=min_samples,
    )
    Y = Y.reshape(len(Y), -1)
    if not np.all(np.isfinite(Y)):
        raise ValueError("Y contains NaN or infinite values.")
    return X, Y


def _fit_rows(X, Y, fit_on, universum_label):
    """Rows used for fitting: all, or those whose 1-D label Y is not the universum sentinel."""
    if fit_on not in FIT_ON:
        raise ValueError(f"fit_on must be one of {FIT_ON}, got {fit_on!r}.")
    if fit_on == "all":
        return X, Y
    if Y.shape[1] != 1:
        raise ValueError("fit_on='labelled' needs a 1-D Y of labels with universum trials.")
    keep = ~universum_mask(Y[:, 0], universum_label)
    if keep.sum() < 2:
        raise ValueError("fit_on='labelled' leaves fewer than 2 non-universum samples.")
    return X[keep], Y[keep]


def _check_y(Y, n_y: int, n_samples: int) -> np.ndarray:
    Y = np.asarray(Y, dtype=np.float64)
    Y = Y.reshape(len(Y), -1) if Y.ndim == 1 else Y
    if Y.ndim != 2 or Y.shape[1] != n_y or Y.shape[0] != n_samples:
        raise ValueError(
            f"Y must have shape ({n_samples}, {n_y}) to match X and the fitted Y, got {Y.shape}."
        )
    if not np.all(np.isfinite(Y)):
        raise ValueError("Y contains NaN or infinite values.")
    return Y


def _ridge_cov(Z: np.ndarray, reg: float) -> np.ndarray:
    """Covariance plus ``reg`` times its mean eigenvalue on the diagonal."""
    C = Z.T @ Z / len(Z)
    return C + reg * np.trace(C) / C.shape[0] * np.eye(C.shape[0])


def _check_reg(reg, *, positive: bool = False, name: str = "reg") -> float:
    if not isinstance(reg, Real) or isinstance(reg, bool) or not np.isfinite(reg):
        raise ValueError(f"{name} must be a finite number, got {reg!r}.")
    if positive and reg <= 0:
        raise ValueError(
            f"{name} must be positive: unregularised kernel CCA is refused because a "
            "full-rank kernel finds a perfect (ρ ≈ 1) spurious correlation even between "
            f"independent views. Got {reg!r}."
        )
    if not positive and reg < 0:
        raise ValueError(f"{name} must be non-negative, got {reg!r}.")
    return float(reg)


class _TwoViewTransformerMixin(TransformerMixin):
    """``fit_transform`` of the two-view estimators: ``transform``'s pair, as sklearn's CCA."""

    def fit_transform(self, X, Y=None):
        """Fit, then return the canonical scores of the training views.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_x)
        Y : array-like of shape (n_samples, n_y) or (n_samples,)
            The second view (required, as in :class:`sklearn.cross_decomposition.CCA`).

        Returns
        -------
        x_scores : ndarray of shape (n_samples, n_components)
        y_scores : ndarray of shape (n_samples, n_components)
            Both as ``fit(X, Y).transform(X, Y)``; with ``fit_on="labelled"`` (``Y`` holds class
            labels, as in a Pipeline) only ``x_scores``, ``fit(X, Y).transform(X)``.
        """
        self.fit(X, Y)
        if getattr(self, "fit_on", "all") == "labelled":
            return self.transform(X)
        return self.transform(X, Y)


class CCA(_TwoViewTransformerMixin, BaseEstimator):
    """Regularised linear canonical correlation analysis.

    Parameters
    ----------
    n_components : int
        Number of canonical pairs.
    reg : float >= 0
        Ridge on both covariances, ``C + reg · tr(C)/d · I``; 0 is plain CCA (rank-deficient
        views are then handled by dropping null directions).
    fit_on : {"all", "labelled"}
        ``"labelled"`` treats a 1-D ``Y`` as class labels (binary or a continuous target, as in
        a Pipeline) and fits on the samples whose label is not the universum sentinel;
        universum samples are then only transformed. ``"all"`` uses every sample.
    universum_label : int, str or None
        Sentinel marking universum samples in ``Y`` (default: ``bci_universum.UNIVERSUM``).

    Attributes
    ----------
    x_weights_, y_weights_ : ndarray of shape (n_x, n_components), (n_y, n_components)
        Canonical directions with ``w_xᵀ C_xx w_x = w_yᵀ C_yy w_y = 1`` (L707; ``C`` with the
        ridge added).
    correlations_ : ndarray of shape (n_components,)
        Regularised canonical correlations, ``w_xᵀ C_xy w_y`` (with ``reg = 0`` the training
        correlations of the scores; a ridge lowers them).
    x_mean_, y_mean_ : ndarray
        Means removed before projection.
    n_features_in_ : int
        Number of x features.
    """

    def __init__(self, n_components=1, reg=0.0, fit_on="all", universum_label=None):
        self.n_components = n_components
        self.reg = reg
        self.fit_on = fit_on
        self.universum_label = universum_label

    def fit(self, X, Y):
        """Fit the canonical directions.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_x)
        Y : array-like of shape (n_samples, n_y) or (n_samples,)

        Returns
        -------
        self : CCA
        """
        n_components = _check_n_components(self.n_components)
        reg = _check_reg(self.reg)
        X, Y = _fit_rows(*_check_views(self, X, Y), self.fit_on, self.universum_label)
        self.x_mean_, self.y_mean_ = X.mean(axis=0), Y.mean(axis=0)
        Xc, Yc = X - self.x_mean_, Y - self.y_mean_
        Wx, Wy, rho = canonical_svd(
            _ridge_cov(Xc, reg), _ridge_cov(Yc, reg), Xc.T @ Yc / len(X), n_components
        )
        self.x_weights_, self.y_weights_, self.correlations_ = Wx, Wy, rho
        return self

    def transform(self, X, Y=None):
        """Canonical scores of X (and of Y when given).

        Returns
        -------
        x_scores : ndarray of shape (n_samples, n_components)
        y_scores : ndarray of shape (n_samples, n_components), only when ``Y`` is given
        """
        check_is_fitted(self, "x_weights_")
        X = validate_data(self, X, reset=False, dtype=np.float64)
        x_scores = (X - self.x_mean_) @ self.x_weights_
        if Y is None:
            return x_scores
        Y = _check_y(Y, self.y_weights_.shape[0], len(X))
        return x_scores, (Y - self.y_mean_) @ self.y_weights_


class KernelCCA(_TwoViewTransformerMixin, BaseEstimator):
    """Regularised kernel CCA (dual CCA, notes L785–841).

    Solves ``[[0, K_x K_y], [K_y K_x, 0]] a = ρ [[K_x² + reg·I, 0], [0, K_y² + reg·I]] a`` with
    doubly centred kernels (``H K H``), each divided by its mean eigenvalue ``tr(K)/N`` so that
    ``reg`` means the same for any kernel scale.

    Parameters
    ----------
    n_components : int
        Number of canonical pairs.
    reg : float > 0
        Ridge ``κ`` added to ``K²`` (both views). Zero is refused: with a full-rank kernel,
        unregularised kCCA reaches ρ ≈ 1 on independent data (notes §4.2 table: κ = 1e−8 gives
        ρ = 0.9998). Tiny values still overfit; judge the fit by held-out correlations.
    kernel : {"linear", "rbf", "poly", "sigmoid", "precomputed"} or callable
        Kernel of both views (``bci_universum.solvers.kernels``).
    gamma : {"scale", "auto"} or float
        Kernel width, resolved per view.
    degree, coef0 : int, float
        Parameters of the polynomial and sigmoid kernels.
    fit_on : {"all", "labelled"}
        ``"labelled"`` treats a 1-D ``Y`` as class labels (binary or a continuous target, as in
        a Pipeline) and fits on the samples whose label is not the universum sentinel;
        universum samples are then only transformed. ``"all"`` uses every sample.
    universum_label : int, str or None
        Sentinel marking universum samples in ``Y`` (default: ``bci_universum.UNIVERSUM``).

    Attributes
    ----------
    x_dual_coef_, y_dual_coef_ : ndarray of shape (n_samples_fit, n_components)
        Dual coefficients ``a_x``, ``a_y``; training scores have unit variance.
    correlations_ : ndarray of shape (n_components,)
        Regularised canonical correlations (training).
    X_fit_, Y_fit_ : ndarray
        Training views, needed for out-of-sample kernels.
    """

    def __init__(
        self,
        n_components=1,
        reg=0.1,
        kernel="rbf",
        gamma="scale",
        degree=3,
        coef0=1.0,
        fit_on="all",
        universum_label=None,
    ):
        self.n_components = n_components
        self.reg = reg
        self.kernel = kernel
        self.gamma = gamma
        self.degree = degree
        self.coef0 = coef0
        self.fit_on = fit_on
        self.universum_label = universum_label

    def _kernel(self, A, B, gamma):
        return kernel_matrix(
            A, B, kernel=self.kernel, gamma=gamma, degree=self.degree, coef0=self.coef0
        )

    def fit(self, X, Y):
        """Fit the dual coefficients.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_x)
        Y : array-like of shape (n_samples, n_y) or (n_samples,)

        Returns
        -------
        self : KernelCCA
        """
        n_components = _check_n_components(self.n_components)
        reg = _check_reg(self.reg, positive=True)
        check_kernel(self.kernel)
        X, Y = _check_views(self, X, Y, min_samples=3)
        X, Y = _fit_rows(X, Y, self.fit_on, self.universum_label)
        self.gamma_x_ = resolve_gamma(self.gamma, X)
        self.gamma_y_ = resolve_gamma(self.gamma, Y)
        self.x_centerer_ = KernelCenterer().fit(self._kernel(X, None, self.gamma_x_))
        self.y_centerer_ = KernelCenterer().fit(self._kernel(Y, None, self.gamma_y_))
        Kx = self.x_centerer_.transform(self._kernel(X, None, self.gamma_x_))
        Ky = self.y_centerer_.transform(self._kernel(Y, None, self.gamma_y_))
        n = len(X)
        self.x_scale_, self.y_scale_ = np.trace(Kx) / n, np.trace(Ky) / n
        if not (self.x_scale_ > 0 and self.y_scale_ > 0):
            raise ValueError("A view has a zero centred kernel; canonical correlations undefined.")
        Kx, Ky = Kx / self.x_scale_, Ky / self.y_scale_
        eye = np.eye(n)
        Ax, Ay, rho = canonical_svd(
            Kx @ Kx + reg * eye, Ky @ Ky + reg * eye, Kx @ Ky, n_components
        )
        self.x_dual_coef_ = Ax / (Kx @ Ax).std(axis=0)
        self.y_dual_coef_ = Ay / (Ky @ Ay).std(axis=0)
        self.correlations_ = rho
        self.X_fit_, self.Y_fit_ = X, Y
        return self

    def transform(self, X, Y=None):
        """Canonical scores of new samples of X (and of Y when given).

        Returns
        -------
        x_scores : ndarray of shape (n_samples, n_components)
        y_scores : ndarray of shape (n_samples, n_components), only when ``Y`` is given
        """
        check_is_fitted(self, "x_dual_coef_")
        X = validate_data(self, X, reset=False, dtype=np.float64)
        Kx = self.x_centerer_.transform(self._kernel(X, self.X_fit_, self.gamma_x_))
        x_scores = Kx / self.x_scale_ @ self.x_dual_coef_
        if Y is None:
            return x_scores
        Y = _check_y(Y, self.Y_fit_.shape[1], len(X))
        Ky = self.y_centerer_.transform(self._kernel(Y, self.Y_fit_, self.gamma_y_))
        return x_scores, Ky / self.y_scale_ @ self.y_dual_coef_


def _check_tk_lags(lags) -> np.ndarray:
    arr = np.asarray(lags)
    if (
        arr.ndim != 1
        or arr.size == 0
        or arr.dtype.kind not in "iu"
        or np.unique(arr).size != arr.size
    ):
        raise ValueError(
            f"lags must be a non-empty sequence of distinct integers (samples), got {lags!r}."
        )
    return arr.astype(np.int64)


def time_embed(X: np.ndarray, lags) -> tuple[np.ndarray, slice]:
    """Stack time-shifted copies of ``X``: row ``t`` is ``[x(t − τ_1), …, x(t − τ_T)]``.

    Parameters
    ----------
    X : ndarray of shape (n_times, n_features)
    lags : sequence of int
        Lags in samples (positive: past of x).

    Returns
    -------
    embedded : ndarray of shape (n_valid, n_lags · n_features)
        Lag-major columns: the features of lag ``τ_1`` first.
    valid : slice
        The time points ``t`` of the rows (where every shifted sample exists).
    """
    lags = _check_tk_lags(lags)
    n_times = len(X)
    start, stop = max(lags.max(), 0), n_times + min(lags.min(), 0)
    if stop - start < 2:
        raise ValueError(
            f"Too few samples: {n_times} time points leave {max(stop - start, 0)} after "
            f"embedding lags {lags.min()}..{lags.max()}."
        )
    embedded = np.hstack([X[start - tau : stop - tau] for tau in lags])
    return embedded, slice(start, stop)


class TemporalKernelCCA(_TwoViewTransformerMixin, BaseEstimator):
    """Temporal kernel CCA (tkCCA): canonical convolution from x to y over a set of lags.

    Maximises ``Corr(Σ_τ w_x(τ)ᵀ x(t − τ), w_yᵀ y(t))`` (L965) by regularised linear CCA on the
    time embedding of x (L967–969). Positive lags mean x leads y (e.g. neural activity before
    the haemodynamic response). The linear kernel is solved in the primal, where the
    canonical convolution ``w_x(τ)`` is explicit; with more embedded features than samples use
    :class:`KernelCCA` with ``kernel="linear"`` on :func:`time_embed` output (the dual, L1008).

    Parameters
    ----------
    lags : sequence of int
        Lags in samples (``range(0, 11)`` by default); cover the expected coupling delay.
    n_components : int
        Number of canonical pairs.
    reg : float >= 0
        Ridge on both covariances (see :class:`CCA`); the embedded covariance is
        ill-conditioned for smooth x, so a small positive value is the default.

    Attributes
    ----------
    filters_ : ndarray of shape (n_components, n_lags, n_x)
        Canonical convolutions ``w_x(τ)``, one multichannel FIR filter per component.
    y_weights_ : ndarray of shape (n_y, n_components)
        Canonical directions of y.
    correlations_ : ndarray of shape (n_components,)
        Canonical correlations.
    correlogram_ : ndarray of shape (n_components, n_lags)
        ``corr(w_x(τ)ᵀ x(t − τ), w_yᵀ y(t))`` on the training data: how much each lag
        contributes.
    lags_ : ndarray of int
        The lags.
    embedded_mean_, y_mean_ : ndarray
        Means of the embedded x and of y, removed before projection.
    """

    def __init__(self, lags=tuple(range(11)), n_components=1, reg=1e-3):
        self.lags = lags
        self.n_components = n_components
        self.reg = reg

    def fit(self, X, Y):
        """Fit the canonical convolution.

        Parameters
        ----------
        X : array-like of shape (n_times, n_x)
            The leading signal (its past enters through the lags).
        Y : array-like of shape (n_times, n_y) or (n_times,)

        Returns
        -------
        self : TemporalKernelCCA
        """
        lags = _check_tk_lags(self.lags)
        X, Y = _check_views(self, X, Y)
        Xe, valid = time_embed(X, lags)
        cca = CCA(n_components=self.n_components, reg=self.reg).fit(Xe, Y[valid])
        n_x = X.shape[1]
        self.filters_ = cca.x_weights_.T.reshape(-1, len(lags), n_x)
        self.y_weights_ = cca.y_weights_
        self.correlations_ = cca.correlations_
        self.embedded_mean_, self.y_mean_ = cca.x_mean_, cca.y_mean_
        self.lags_ = lags
        y_scores = (Y[valid] - self.y_mean_) @ self.y_weights_
        lagged = (Xe - self.embedded_mean_).reshape(len(Xe), len(lags), n_x)
        parts = np.einsum("tlc,klc->tkl", lagged, self.filters_)
        self.correlogram_ = np.array(
            [
                [np.corrcoef(parts[:, k, j], y_scores[:, k])[0, 1] for j in range(len(lags))]
                for k in range(len(self.correlations_))
            ]
        )
        return self

    def transform(self, X, Y=None):
        """Canonical scores on the time points where every lag exists.

        Parameters
        ----------
        X : array-like of shape (n_times, n_x)
        Y : array-like of shape (n_times, n_y) or None

        Returns
        -------
        x_scores : ndarray of shape (n_valid, n_components)
            ``Σ_τ w_x(τ)ᵀ x(t − τ)`` for ``t`` in ``max(lags, 0) .. n_times + min(lags, 0)``.
        y_scores : ndarray of shape (n_valid, n_components), only when ``Y`` is given
        """
        check_is_fitted(self, "filters_")
        X = validate_data(self, X, reset=False, dtype=np.float64)
        Xe, valid = time_embed(X, self.lags_)
        x_scores = (Xe - self.embedded_mean_) @ self.filters_.reshape(len(self.filters_), -1).T
        if Y is None:
            return x_scores
        Y = _check_y(Y, self.y_weights_.shape[0], len(X))
        return x_scores, (Y[valid] - self.y_mean_) @ self.y_weights_
