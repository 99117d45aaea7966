"""Linear models with the universum as an *indifference* term, solved exactly.

The classifiers BCI researchers put on tangent-space or CSP features are logistic regression
and (shrinkage) LDA. Here each gets a universum term that asks the decision function to be
indifferent to the non-examples:

:class:`UniversumLogisticRegression`
    ``min_{w,b} ½‖w‖² + C Σ_i log(1 + exp(−y_i f(x_i))) + C_U Σ_u g(x_u)²`` with
    ``f(x) = wᵀx + b``. ``penalty="decision"`` takes ``g = f`` (universum decision values pulled
    to 0, the squared-loss universum of the U_ls-SVM); ``penalty="covariance"`` takes
    ``g(x_u) = wᵀ(x_u − x̄_U)``, i.e. the nuisance-covariance term ``n_U · wᵀΣ_U w``.
    The objective is smooth and strictly convex in ``w``; by the representer theorem ``w`` lies
    in the span of the training trials, so it is solved by Newton's method with a
    backtracking line search in that span (dimension ≤ number of trials, whatever the number
    of tangent-space features), to a gradient norm of ``tol``.
:class:`UniversumLDA`
    Fisher's discriminant with the universum covariance added to the within-class scatter,
    ``w = (Σ_W + C_U Σ_U)⁻¹ (μ₊ − μ₋)``, closed form; ``Σ_W`` is scikit-learn's (shrunk)
    class-prior-weighted within-class covariance, so ``C_universum=0`` is
    :class:`~sklearn.discriminant_analysis.LinearDiscriminantAnalysis` (``solver="lsqr"``).
    Directions in which the universum varies are damped: ``w`` maximises
    ``(wᵀ(μ₊ − μ₋))² / wᵀ(Σ_W + C_U Σ_U)w``.

With ``C_universum = 0`` or without universum trials both are the plain models.
"""

from __future__ import annotations

import warnings
from numbers import Integral, Real
from typing import ClassVar

import numpy as np
import scipy.linalg
from scipy.special import expit
from sklearn.covariance import empirical_covariance, ledoit_wolf, shrunk_covariance
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.metaestimators import available_if
from sklearn.utils.validation import check_is_fitted, validate_data

from .._constraints import NON_NEGATIVE, POSITIVE
from ._base import BaseBinaryUniversumClassifier

__all__ = ["UniversumLDA", "UniversumLogisticRegression", "universum_logistic_objective"]


class _LinearDecision(BaseBinaryUniversumClassifier):
    """``decision_function`` and lean ``decision_trial`` from ``coef_`` and ``intercept_``."""

    def decision_function(self, X) -> np.ndarray:
        """Decision values ``wᵀx + b``; positive means ``classes_[1]``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        scores : ndarray of shape (n_samples,)
        """
        check_is_fitted(self)
        X = validate_data(self, X, reset=False, dtype=np.float64)
        return X @ self.coef_[0] + self.intercept_[0]

    def decision_trial(self, x: np.ndarray) -> float:
        """Lean single-trial path for online use (no validation): ``wᵀx + b``.

        Parameters
        ----------
        x : ndarray of shape (n_features,)

        Returns
        -------
        score : float
        """
        return float(x @ self.coef_[0] + self.intercept_[0])


def universum_logistic_objective(
    w: np.ndarray,
    b: float,
    X: np.ndarray,
    y_signed: np.ndarray,
    X_universum: np.ndarray,
    C: float,
    C_universum: float,
    penalty: str = "decision",
) -> float:
    """The objective :class:`UniversumLogisticRegression` minimises, at ``(w, b)``.

    Parameters
    ----------
    w : ndarray of shape (n_features,)
    b : float
    X : ndarray of shape (n_labelled, n_features)
    y_signed : ndarray of shape (n_labelled,)
        ±1.
    X_universum : ndarray of shape (n_universum, n_features)
    C, C_universum : float
    penalty : {"decision", "covariance"}

    Returns
    -------
    value : float
    """
    margins = y_signed * (X @ w + b)
    loss = np.logaddexp(0.0, -margins).sum()
    if penalty == "decision":
        g = X_universum @ w + b
    else:
        g = (X_universum - X_universum.mean(axis=0)) @ w
    return 0.5 * w @ w + C * loss + C_universum * g @ g


def _newton(Z, y, Zu, C, C_u, with_bias_u, tol, max_iter, theta0=None):
    """Minimise ½‖v‖² + C Σ log(1+e^{−y(Zv+b)}) + C_u Σ (Zu v + b·with_bias_u)² over (v, b).

    Columns of the design are ``[Z, 1]``; the offset is not regularised. ``theta0`` (``[v, b]``)
    warm-starts the iterations (zeros by default). Returns ``(v, b, n_iter)``.
    """
    n_dim = Z.shape[1]
    A = np.hstack([Z, np.ones((len(Z), 1))])
    Au = np.hstack([Zu, np.full((len(Zu), 1), float(with_bias_u))])
    reg = np.ones(n_dim + 1)
    reg[-1] = 0.0
    # The universum term is quadratic: its Hessian is constant.
    H_u = 2.0 * C_u * (Au.T @ Au)

    def value(theta):
        margins = y * (A @ theta)
        g = Au @ theta
        return 0.5 * (reg * theta) @ theta + C * np.logaddexp(0.0, -margins).sum() + C_u * g @ g

    theta = np.zeros(n_dim + 1) if theta0 is None else np.array(theta0, dtype=np.float64)
    f = value(theta)
    for n_iter in range(1, max_iter + 1):
        margins = y * (A @ theta)
        p = expit(-margins)  # σ(−m): derivative of log(1+e^{−m}) is −σ(−m)
        grad = reg * theta - C * A.T @ (y * p) + 2.0 * C_u * Au.T @ (Au @ theta)
        if np.linalg.norm(grad, np.inf) <= tol:
            return theta[:-1], theta[-1], n_iter - 1
        H = np.diag(reg) + C * (A.T * (p * (1.0 - p))) @ A + H_u
        # A tiny ridge keeps H invertible when the offset is unconstrained (separable data
        # without universum); it does not move the optimum of a strictly convex problem.
        H[-1, -1] += 1e-12
        step = scipy.linalg.solve(H, grad, assume_a="pos", check_finite=False)
        decrease = grad @ step
        # Newton decrement: ``decrease / 2`` predicts f − f*. Below the rounding of f, the
        # gradient cannot shrink further (it stalls near 1e-7 on tangent-space features with
        # C = 1–10), so the optimum is reached to machine precision.
        if decrease <= 32 * np.finfo(float).eps * max(1.0, abs(f)):
            return theta[:-1], theta[-1], n_iter - 1
        t = 1.0
        while True:
            candidate = theta - t * step
            f_new = value(candidate)
            if f_new <= f - 1e-4 * t * decrease or t < 1e-10:
                break
            t *= 0.5
        theta, f = candidate, f_new
    warnings.warn(
        f"Newton stopped after max_iter={max_iter} iterations without reaching tol={tol}; "
        "increase max_iter or tol.",
        ConvergenceWarning,
        stacklevel=3,
    )
    return theta[:-1], theta[-1], max_iter


class UniversumLogisticRegression(_LinearDecision):
    """L2 logistic regression whose decision function is indifferent to universum trials.

    Minimises ``½‖w‖² + C Σ_i log(1 + exp(−y_i f(x_i))) + C_universum Σ_u g(x_u)²`` with
    ``f(x) = wᵀx + b`` (the offset is not regularised, as in scikit-learn's
    :class:`~sklearn.linear_model.LogisticRegression`, which this is with
    ``C_universum=0``).

    Parameters
    ----------
    C : float, default=1.0
        Inverse regularisation strength (> 0), as in scikit-learn.
    C_universum : float, default=1.0
        Weight of the universum term (≥ 0).
    penalty : {"decision", "covariance"}, default="decision"
        ``"decision"``: ``g = f``, universum decision values pulled to 0. ``"covariance"``:
        ``g(x_u) = wᵀ(x_u − x̄_U)``, the nuisance-covariance term ``n_U wᵀΣ_U w`` (the
        universum's spread, not its position, is penalised).
    tol : float, default=1e-8
        Newton stops when the gradient's largest entry is at most ``tol``, or when the
        predicted decrease of the objective (the Newton decrement) is below its rounding
        error.
    max_iter : int, default=100
        Newton iterations (each is exact up to a line search; a handful suffice). Reaching
        it emits a :class:`~sklearn.exceptions.ConvergenceWarning`.
    online_universum : int, default=0
        Rest windows the fitted model can take into its universum while it decodes
        (:meth:`update`, called by
        :meth:`bci_universum.online.OnlineDecoder.adapt_to_rest`). ``0``: no online update,
        and ``fit`` keeps nothing. Otherwise ``fit`` keeps its training features (the
        labelled and universum rows it was given, ``n_trials × n_features`` floats) and the
        model holds at most ``online_universum`` online windows, the oldest dropped beyond:
        memory is bounded by the training set plus ``online_universum`` feature vectors.
    universum_label : int, str or None, default=None
        Label of universum trials in ``y``.

    Attributes
    ----------
    classes_ : ndarray of shape (2,)
    coef_ : ndarray of shape (1, n_features)
    intercept_ : ndarray of shape (1,)
    n_iter_ : int
        Newton iterations used (by the last fit or update).
    n_universum_ : int
        Universum trials used (training and online).
    universum_online_ : ndarray of shape (n_online, n_features)
        The online windows' features in the universum, oldest first (only with
        ``online_universum > 0``).
    n_features_in_ : int

    See Also
    --------
    UniversumLDA : the closed-form discriminant with the universum covariance.
    bci_universum.classifiers.LeastSquaresUniversumSVC : squared loss on labelled trials too.
    """

    _parameter_constraints: ClassVar[dict] = {
        "C": [POSITIVE],
        "C_universum": [NON_NEGATIVE],
        "penalty": [StrOptions({"decision", "covariance"})],
        "tol": [POSITIVE],
        "max_iter": [Interval(Integral, 1, None, closed="left")],
        "online_universum": [Interval(Integral, 0, None, closed="left")],
        "universum_label": "no_validation",
    }

    def __init__(
        self,
        C: float = 1.0,
        C_universum: float = 1.0,
        penalty: str = "decision",
        tol: float = 1e-8,
        max_iter: int = 100,
        online_universum: int = 0,
        universum_label=None,
    ):
        self.C = C
        self.C_universum = C_universum
        self.penalty = penalty
        self.tol = tol
        self.max_iter = max_iter
        self.online_universum = online_universum
        self.universum_label = universum_label

    def _fit(self, X, y, X_l, y_signed, X_u) -> None:
        if self.online_universum:
            self._training_features = (X_l, y_signed, X_u)
            self.universum_online_ = np.empty((0, X_l.shape[1]))
        self._solve(X_l, y_signed, X_u)

    def _solve(self, X_l, y_signed, X_u, warm_start: bool = False) -> None:
        if self.C_universum == 0:
            X_u = X_u[:0]
        if self.penalty == "covariance" and len(X_u):
            X_u = X_u - X_u.mean(axis=0)
        # w = Vv in the span of the trials: exact, and Newton runs in ≤ n_trials dimensions.
        _, s, Vt = np.linalg.svd(np.vstack([X_l, X_u]), full_matrices=False)
        basis = Vt[s > s[0] * 1e-12] if s.size and s[0] > 0 else Vt[:0]
        # The previous w lies in the span of the previous trials, a subspace of this one:
        # its coordinates in the new basis are exact.
        theta0 = np.r_[basis @ self.coef_[0], self.intercept_] if warm_start else None
        v, b, self.n_iter_ = _newton(
            X_l @ basis.T,
            y_signed,
            X_u @ basis.T,
            self.C,
            self.C_universum,
            self.penalty == "decision",
            self.tol,
            self.max_iter,
            theta0,
        )
        self.coef_ = (v @ basis)[np.newaxis, :]
        self.intercept_ = np.array([b])
        self.n_universum_ = len(X_u)

    @available_if(lambda self: self.online_universum > 0)
    def update(self, x: np.ndarray) -> None:
        """Add one rest window to the universum and refit, warm-started.

        The model becomes the fit on the training trials with the online windows (at most
        ``online_universum``, the newest) added as universum trials: the same optimum as
        ``fit`` on those trials, reached from the previous coefficients in a few Newton
        steps. Only with ``online_universum > 0`` (otherwise the method does not exist, so
        the online decoder does not treat the model as adaptive).

        Parameters
        ----------
        x : ndarray of shape (n_features,)
            The rest window's features (as the pipeline's steps before this one give them).
        """
        check_is_fitted(self)
        x = np.asarray(x, dtype=np.float64)
        if x.shape != (self.n_features_in_,) or not np.isfinite(x).all():
            raise ValueError(
                f"update expects one finite feature vector of shape ({self.n_features_in_},), "
                f"got shape {x.shape}."
            )
        online = np.vstack([self.universum_online_, x])[-self.online_universum :]
        X_l, y_signed, X_u = self._training_features
        self._solve(X_l, y_signed, np.vstack([X_u, online]), warm_start=True)
        self.universum_online_ = online


class UniversumLDA(_LinearDecision):
    """Two-class LDA with the universum covariance added to the within-class scatter.

    ``w = (Σ_W + C_universum · Σ_U)⁻¹ (μ₁ − μ₀)`` and
    ``b = −wᵀ(μ₀ + μ₁)/2 + log(π₁/π₀)``, in closed form. ``Σ_W`` is the class-prior-weighted
    average of the class covariances (shrunk as ``shrinkage`` says), ``Σ_U`` the universum
    trials' covariance (maximum likelihood). With ``C_universum=0`` this is scikit-learn's
    ``LinearDiscriminantAnalysis(solver="lsqr", shrinkage=shrinkage)``.

    Parameters
    ----------
    C_universum : float, default=1.0
        Weight of the universum covariance (≥ 0).
    shrinkage : "auto", float or None, default="auto"
        Shrinkage of the class covariances: ``"auto"`` Ledoit–Wolf, a float in [0, 1] a fixed
        intensity, ``None`` none (as scikit-learn's LDA).
    universum_label : int, str or None, default=None
        Label of universum trials in ``y``.

    Attributes
    ----------
    classes_ : ndarray of shape (2,)
    coef_ : ndarray of shape (1, n_features)
    intercept_ : ndarray of shape (1,)
    means_ : ndarray of shape (2, n_features)
    priors_ : ndarray of shape (2,)
    n_universum_ : int
    n_features_in_ : int
    """

    _parameter_constraints: ClassVar[dict] = {
        "C_universum": [NON_NEGATIVE],
        "shrinkage": [StrOptions({"auto"}), Interval(Real, 0, 1, closed="both"), None],
        "universum_label": "no_validation",
    }

    def __init__(self, C_universum: float = 1.0, shrinkage="auto", universum_label=None):
        self.C_universum = C_universum
        self.shrinkage = shrinkage
        self.universum_label = universum_label

    def _covariance(self, X: np.ndarray) -> np.ndarray:
        """One class's covariance, shrunk as scikit-learn's LDA does (``_cov``)."""
        if self.shrinkage is None:
            return empirical_covariance(X)
        if self.shrinkage == "auto":
            scale = X.std(axis=0)
            scale[scale == 0] = 1.0
            cov = ledoit_wolf((X - X.mean(axis=0)) / scale)[0]
            return scale[:, None] * cov * scale[None, :]
        return shrunk_covariance(empirical_covariance(X), self.shrinkage)

    def _fit(self, X, y, X_l, y_signed, X_u) -> None:
        groups = [X_l[y_signed < 0], X_l[y_signed > 0]]
        self.priors_ = np.array([len(g) for g in groups], dtype=float) / len(X_l)
        self.means_ = np.array([g.mean(axis=0) for g in groups])
        scatter = sum(p * self._covariance(g) for p, g in zip(self.priors_, groups, strict=True))
        use_u = self.C_universum > 0 and len(X_u) > 0
        if use_u:
            scatter = scatter + self.C_universum * empirical_covariance(X_u)
        diff = self.means_[1] - self.means_[0]
        # lstsq, as scikit-learn's lsqr solver: a singular scatter gets the minimum-norm w.
        w = scipy.linalg.lstsq(scatter, diff, check_finite=False)[0]
        self.coef_ = w[np.newaxis, :]
        self.intercept_ = np.array(
            [
                -0.5 * w @ (self.means_[0] + self.means_[1])
                + np.log(self.priors_[1] / self.priors_[0])
            ]
        )
        self.n_universum_ = len(X_u) if use_u else 0
