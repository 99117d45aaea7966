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
    backtracking (Armijo) line search in that span (dimension ≤ number of trials, whatever the
    number of tangent-space features), to a gradient norm of ``tol``.
:class:`UniversumLDA`
    Fisher's discriminant with the universum covariance added to the within-class scatter,
    ``w = (Σ_W + C_U Σ_U)⁻¹ (μ₊ − μ₋)``, closed form; ``Σ_W`` is scikit-learn's (shrunk)
    class-prior-weighted within-class covariance, so ``C_universum=0`` is
    :class:`~sklearn.discriminant_analysis.LinearDiscriminantAnalysis` (``solver="lsqr"``).
    Directions in which the universum varies are damped: ``w`` maximises
    ``(wᵀ(μ₊ − μ₋))² / wᵀ(Σ_W + C_U Σ_U)w``.

Model selection fits a grid of ``C`` and ``C_universum`` on every inner fold; ``fit_grid`` fits
all grid points of one training set at once, sharing what does not depend on them (as
:class:`~sklearn.linear_model.RidgeCV` solves every ``alpha`` from one SVD): the LDA factorises
``Σ_W`` once and eigendecomposes the universum covariance in its metric, which gives ``w`` for
every ``C_universum`` in closed form; the logistic regression computes the trials' span once
and warm-starts Newton from the neighbouring grid point's solution.

With ``C_universum = 0`` or without universum trials both are the plain models.
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping, Sequence
from numbers import Integral, Real
from typing import ClassVar

import numpy as np
import scipy.linalg
from scipy.special import expit, log_expit
from sklearn.base import clone
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.metaestimators import available_if
from sklearn.utils.validation import check_is_fitted, validate_data

from .._constraints import NON_NEGATIVE, POSITIVE, UNIVERSUM_LABEL
from ._base import BaseBinaryUniversumClassifier

__all__ = ["UniversumLDA", "UniversumLogisticRegression", "universum_logistic_objective"]


class _LinearDecision(BaseBinaryUniversumClassifier):
    """``decision_function`` and lean ``decision_trial`` from ``coef_`` and ``intercept_``;
    ``fit_grid`` over the subclass's ``_fit_grid``, which ``_fit`` calls with one model."""

    def _fit(self, X, y, X_l, y_signed, X_u) -> None:
        self._fit_grid([self], X_l, y_signed, X_u)

    def _fit_grid(self, models, X_l, y_signed, X_u) -> None:
        """Fit every model of ``models`` (copies of ``self`` differing in their parameters) on
        the split trials."""
        raise NotImplementedError

    def fit_grid(self, X, y, grid: Sequence[Mapping]) -> list:
        """One fitted copy of this estimator per grid point, sharing work between them.

        Equal (to the solver's tolerance) to ``[clone(self).set_params(**p).fit(X, y) for p
        in grid]``: model selection calls it on each inner fold.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Labelled and universum trials.
        y : array-like of shape (n_samples,)
            Labels; universum trials carry ``universum_label``.
        grid : sequence of dict
            Parameter settings (e.g. ``ParameterGrid({"C_universum": [0.01, 0.1, 1.0]})``);
            ``universum_label`` cannot vary.

        Returns
        -------
        models : list of estimators
            Fitted, in the order of ``grid``.
        """
        if any("universum_label" in p for p in grid):
            raise ValueError("fit_grid: universum_label cannot vary over the grid.")
        models = [clone(self).set_params(**p) for p in grid]
        for m in models:
            m._validate_params()
        if not models:
            return models
        X_l, y_signed, X_u = models[0]._validate_fit_data(X, y)
        for m in models[1:]:
            m.classes_, m.n_features_in_ = models[0].classes_, models[0].n_features_in_
        self._fit_grid(models, X_l, y_signed, X_u)
        return models

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

    def predict_proba(self, X) -> np.ndarray:
        """Class probabilities ``[σ(−f(x)), σ(f(x))]``, ``σ`` the logistic function.

        The posterior of the logistic model, and of LDA's Gaussian classes with the shared
        covariance, as scikit-learn's binary
        :class:`~sklearn.linear_model.LogisticRegression` and
        :class:`~sklearn.discriminant_analysis.LinearDiscriminantAnalysis` compute it.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        proba : ndarray of shape (n_samples, 2)
            Columns in the order of ``classes_``.
        """
        scores = self.decision_function(X)
        return np.column_stack([expit(-scores), expit(scores)])

    def predict_log_proba(self, X) -> np.ndarray:
        """Logarithm of :meth:`predict_proba`, computed without underflow to ``-inf``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        log_proba : ndarray of shape (n_samples, 2)
        """
        scores = self.decision_function(X)
        return np.column_stack([log_expit(-scores), log_expit(scores)])

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
    warm-starts the iterations (zeros by default). Returns ``(v, b, n_iter)``, ``n_iter`` the
    Newton steps taken (at most ``max_iter``; convergence is checked after the last one too).
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
    n_iter = 0
    while True:
        margins = y * (A @ theta)
        p = expit(-margins)  # σ(−m): derivative of log(1+e^{−m}) is −σ(−m)
        grad = reg * theta - C * A.T @ (y * p) + 2.0 * C_u * Au.T @ (Au @ theta)
        converged = np.linalg.norm(grad, np.inf) <= tol
        if not converged:
            H = np.diag(reg) + C * (A.T * (p * (1.0 - p))) @ A + H_u
            # A tiny ridge keeps H invertible when every trial's logistic weight p(1 − p)
            # rounds to 0 (all margins below about −37) and no universum fixes the offset; it
            # does not move the optimum of a strictly convex problem.
            H[-1, -1] += 1e-12
            step = scipy.linalg.solve(H, grad, assume_a="pos", check_finite=False)
            decrease = grad @ step
            # Newton decrement: ``decrease / 2`` predicts f − f*. Below the rounding of f, the
            # gradient cannot shrink further (it stalls near 1e-7 on tangent-space features
            # with C = 1–10), so the optimum is reached to machine precision.
            converged = decrease <= 32 * np.finfo(float).eps * max(1.0, abs(f))
        if converged or n_iter == max_iter:
            break
        # Backtracking (Armijo): halve the step until f decreases by 1e-4 of the prediction,
        # however small it must get (the offset's step is 1e12 times its gradient when only
        # the ridge holds it); a step too small to move theta ends the halving.
        t = 1.0
        while True:
            candidate = theta - t * step
            f_new = value(candidate)
            if f_new <= f - 1e-4 * t * decrease or np.array_equal(candidate, theta):
                break
            t *= 0.5
        theta, f = candidate, f_new
        n_iter += 1
    if not converged:
        warnings.warn(
            f"Newton stopped after max_iter={max_iter} iterations without reaching tol={tol}; "
            "increase max_iter or tol.",
            ConvergenceWarning,
            stacklevel=3,
        )
    return theta[:-1], theta[-1], n_iter


def _span(X_l: np.ndarray, X_u: np.ndarray) -> np.ndarray:
    """Orthonormal basis (rows) of the span of the trials: ``w = Vv`` there is exact, and
    Newton runs in ≤ n_trials dimensions whatever the number of features."""
    # There are labelled trials of both classes, so ``s`` is not empty; all-zero trials
    # (s[0] = 0) span nothing.
    _, s, Vt = np.linalg.svd(np.vstack([X_l, X_u]), full_matrices=False)
    return Vt[s > s[0] * 1e-12]


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
        it without converging emits a :class:`~sklearn.exceptions.ConvergenceWarning`.
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
        "universum_label": UNIVERSUM_LABEL,
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

    def _fit_grid(self, models, X_l, y_signed, X_u) -> None:
        # Models using the same trials share the span; in grid order, each warm-starts from
        # the previous one's solution (the objective is strictly convex: same optimum).
        spans: dict = {}
        for m in models:
            if m.online_universum:
                m._training_features = (X_l, y_signed, X_u)
                m.universum_online_ = np.empty((0, X_l.shape[1]))
            used = m._used_universum(X_u)
            key = (len(used) > 0, m.penalty)
            if key not in spans:
                spans[key] = [_span(X_l, used), None]
            basis, start = spans[key]
            spans[key][1] = m._newton_in(basis, X_l, y_signed, used, start)

    def _used_universum(self, X_u: np.ndarray) -> np.ndarray:
        """The universum rows the objective sees: none, or centred for the covariance."""
        if self.C_universum == 0:
            return X_u[:0]
        return X_u - X_u.mean(axis=0) if self.penalty == "covariance" and len(X_u) else X_u

    def _newton_in(self, basis, X_l, y_signed, X_u, theta0) -> np.ndarray:
        """Newton in the span ``basis`` from ``theta0``; sets the solution, returns ``[v, b]``."""
        v, b, self.n_iter_ = _newton(
            X_l @ basis.T, y_signed, X_u @ basis.T, self.C, self.C_universum,
            self.penalty == "decision", self.tol, self.max_iter, theta0,
        )  # fmt: skip
        self.coef_ = (v @ basis)[np.newaxis, :]
        self.intercept_ = np.array([b])
        self.n_universum_ = len(X_u)
        return np.r_[v, b]

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
        X_u = self._used_universum(np.vstack([X_u, online]))
        basis = _span(X_l, X_u)
        # The previous w lies in the span of the previous trials, a subspace of this one:
        # its coordinates in the new basis are exact.
        self._newton_in(basis, X_l, y_signed, X_u, np.r_[basis @ self.coef_[0], self.intercept_])
        self.universum_online_ = online


class UniversumLDA(_LinearDecision):
    """Two-class LDA with the universum covariance added to the within-class scatter.

    ``w = (Σ_W + C_universum · Σ_U)⁻¹ (μ₁ − μ₀)`` and
    ``b = −wᵀ(μ₀ + μ₁)/2 + log(π₁/π₀)``, in closed form. ``Σ_W`` is the class-prior-weighted
    average of the class covariances (shrunk as ``shrinkage`` says), ``Σ_U`` the universum
    trials' covariance (maximum likelihood). With ``C_universum=0`` this is scikit-learn's
    ``LinearDiscriminantAnalysis(solver="lsqr", shrinkage=shrinkage)``. With one labelled trial
    per class ``Σ_W`` is zero: ``fit`` then needs universum trials and ``C_universum > 0``
    (``w = (C_universum · Σ_U)⁺ (μ₁ − μ₀)``, the universum's covariance as the within-class
    one) and raises a ``ValueError`` otherwise, as scikit-learn's LDA does.

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
        "universum_label": UNIVERSUM_LABEL,
    }

    def __init__(self, C_universum: float = 1.0, shrinkage="auto", universum_label=None):
        self.C_universum = C_universum
        self.shrinkage = shrinkage
        self.universum_label = universum_label

    def _scatter_parts(self, groups, priors) -> tuple[np.ndarray, np.ndarray]:
        """``Σ_W = diag(δ) + V Vᵀ``, the class-prior-weighted shrunk class covariances as
        scikit-learn's LDA computes them (``_cov``): each is its centred trials' scatter plus
        a diagonal (``shrinkage="auto"``: Ledoit–Wolf on the standardised trials, scaled
        back; a float: the fixed intensity; ``None``: no diagonal)."""
        delta, parts = np.zeros(groups[0].shape[1]), []
        for p, g in zip(priors, groups, strict=True):
            centred = g - g.mean(axis=0)
            if self.shrinkage == "auto":
                scale = g.std(axis=0)
                scale[scale == 0] = 1.0
                alpha, mu = _ledoit_wolf_gram(centred / scale)
                delta = delta + p * alpha * mu * scale**2
            else:
                alpha = self.shrinkage or 0.0
                delta = delta + p * alpha * np.sum(centred**2) / centred.size
            parts.append(np.sqrt(p * (1.0 - alpha) / len(g)) * centred)
        return delta, np.concatenate(parts).T

    def _fit_grid(self, models, X_l, y_signed, X_u) -> None:
        groups = [X_l[y_signed < 0], X_l[y_signed > 0]]
        priors = np.array([len(g) for g in groups], dtype=float) / len(X_l)
        means = np.array([g.mean(axis=0) for g in groups])
        diff = means[1] - means[0]
        # Σ_U = U Uᵀ: the centred universum trials, scaled.
        U = (X_u - X_u.mean(axis=0)).T / np.sqrt(len(X_u)) if len(X_u) else X_u.T
        if len(X_l) == len(groups) and (min(m.C_universum for m in models) == 0 or not U.any()):
            # scikit-learn's LDA refuses this too; Σ_W = 0 alone would give w = 0 silently
            raise ValueError(
                "UniversumLDA cannot estimate the within-class covariance from one labelled "
                "trial per class: give more labelled trials than classes, or universum trials "
                "(at least two distinct ones) with C_universum > 0, whose covariance then "
                "stands in for it."
            )
        by_shrinkage: dict = {}
        for m in models:
            by_shrinkage.setdefault(repr(m.shrinkage), []).append(m)
        # More features than trials (tangent space of many channels): Σ_W + c Σ_U is a
        # diagonal plus a low-rank term, solved in the trials' dimension.
        wide = len(X_l) + U.shape[1] < X_l.shape[1]
        for same in by_shrinkage.values():
            weights = [m.C_universum for m in same]
            delta, V = same[0]._scatter_parts(groups, priors)
            # Woodbury needs δ safely positive (not without shrinkage or at intensity 0).
            if wide and np.min(delta) > 1e-10 * np.max(delta + np.sum(V**2, axis=1)):
                directions = _low_rank_directions(delta, V, U, diff, weights)
            else:
                scatter = V @ V.T
                scatter.flat[:: len(delta) + 1] += delta
                directions = _universum_directions(scatter, U, diff, weights)
            for m, w in zip(same, directions, strict=True):
                m.priors_, m.means_ = priors, means
                m.coef_ = w[np.newaxis, :]
                m.intercept_ = np.array(
                    [-0.5 * w @ (means[0] + means[1]) + np.log(priors[1] / priors[0])]
                )
                m.n_universum_ = len(X_u) if m.C_universum > 0 else 0


def _ledoit_wolf_gram(Z: np.ndarray) -> tuple[float, float]:
    """``sklearn.covariance.ledoit_wolf_shrinkage`` of the centred rows ``Z`` and the target's
    scale ``μ = trace(ZᵀZ / n) / d``, from the smaller of the Gram matrices (``‖ZᵀZ‖_F =
    ‖ZZᵀ‖_F``): ``O(n d min(n, d))``, without scikit-learn's input checks (called per class
    on every inner fold)."""
    n, d = Z.shape
    squares = Z**2
    trace = squares.sum() / n
    mu = trace / d
    delta_ = np.sum((Z.T @ Z if n > d else Z @ Z.T) ** 2) / n**2
    beta_ = np.sum(squares.sum(axis=1) ** 2)  # the sum of the entries of (Z²)ᵀ Z²
    beta = (beta_ / n - delta_) / (d * n)
    delta = (delta_ - 2.0 * mu * trace + d * mu**2) / d
    beta = min(beta, delta)
    return (0.0 if beta == 0 else beta / delta), mu


def _low_rank_directions(delta, V, U, diff, weights) -> list[np.ndarray]:
    """``w = (diag(δ) + V Vᵀ + c U Uᵀ)⁻¹ diff`` for every ``c`` of ``weights``, by Woodbury's
    identity in the ``r`` columns of ``[V, U]``: ``O(d r²)`` once, ``O(r³)`` per weight."""
    W = np.column_stack([V, U])
    DW = W / delta[:, None]
    w0 = diff / delta
    gram, rhs = W.T @ DW, W.T @ w0
    out = []
    for c in weights:
        s = np.r_[np.ones(V.shape[1]), np.full(U.shape[1], np.sqrt(c))]
        small = np.eye(s.size) + s[:, None] * gram * s[None, :]
        coef = scipy.linalg.solve(small, s * rhs, assume_a="pos", check_finite=False)
        out.append(w0 - DW @ (s * coef))
    return out


def _universum_directions(scatter, U, diff, weights) -> list[np.ndarray]:
    """``w = (Σ_W + c U Uᵀ)⁻¹ diff`` for every ``c`` of ``weights``.

    With ``Σ_W = L Lᵀ`` (Cholesky) and the eigendecomposition ``Uᵀ Σ_W⁻¹ U = Q Λ Qᵀ`` (the
    generalised eigenproblem of ``(Σ_U, Σ_W)`` on the universum's span), Woodbury's identity
    gives ``w(c) = w₀ − Σ_W⁻¹U Q diag(c / (1 + cΛ)) Qᵀ Uᵀ w₀`` with ``w₀ = Σ_W⁻¹ diff``: one
    factorisation for the whole grid. A singular ``Σ_W`` (no shrinkage, fewer trials than
    features) gets the minimum-norm least-squares solution of each system instead, as
    scikit-learn's ``lsqr`` solver.
    """
    try:
        factor = scipy.linalg.cho_factor(scatter, check_finite=False)
        # The pivots bound the condition number from below: far from 1/eps, the factor of a
        # singular matrix would not be left to rounding.
        diagonal = np.abs(np.diag(factor[0]))
        singular = diagonal.min() ** 2 <= 1e-10 * diagonal.max() ** 2
    except np.linalg.LinAlgError:
        singular = True
    if singular:
        return [
            scipy.linalg.lstsq(scatter + c * (U @ U.T), diff, check_finite=False)[0]
            for c in weights
        ]
    solved = scipy.linalg.cho_solve(factor, np.column_stack([diff, U]), check_finite=False)
    w0, SU = solved[:, 0], solved[:, 1:]
    lam, Q = np.linalg.eigh(U.T @ SU)
    lam = np.clip(lam, 0.0, None)  # Uᵀ Σ_W⁻¹ U is positive semi-definite
    B, a = SU @ Q, Q.T @ (U.T @ w0)
    return [w0 - B @ (c * a / (1.0 + c * lam)) for c in weights]
