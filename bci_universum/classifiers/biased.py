"""Biased regularisation toward a prior classifier: session-to-session transfer.

Decherchi's biased regularisation (notes ``biased-regularisation-and-model-selection.md`` §4)
replaces the SVM's ``½‖f‖²`` by ``½‖f − λ·f₀‖²``: the new classifier stays close to a prior
``f₀`` (for a BCI, the previous session's fitted pipeline) unless the new labelled trials say
otherwise. Writing ``f = g + λ·f₀`` with ``g`` in the RKHS plus an offset, the problem is an
ordinary (universum) SVM for ``g`` whose margins are shifted by the prior's score::

    min_g  ½‖g‖² + C Σ_i (1 − y_i f(x_i))_+ + C_U Σ_j (|f(z_j)| − ε)_+,   f = g + b + λ·f₀

Its dual is the U-SVM dual with the linear term ``p_v = p_v⁰ + λ·y_v·f₀(x_v)`` for every dual
variable ``v`` (thesis (3.148) for labelled trials; the universum copies with target ``−ε``
are the notes' §18.1 extension), so :class:`BiasedSVC` reuses :class:`UniversumSVC`'s assembly
and solver. The least-squares variant fits ``g`` to the residual targets ``y − λ·f₀`` (thesis
(3.152), here with the U_ls-SVM's offset and universum rows), reusing
:class:`LeastSquaresUniversumSVC`. ``λ = 0`` (or no prior) gives the plain machine.

The prior is given either as a fitted estimator with ``decision_function`` applied to the same
``X``, or as ``"last_column"``: the prior's score is the last column of ``X`` (use
:class:`PriorDecision` in a :class:`~sklearn.pipeline.FeatureUnion` to append it when the
prior needs another input, e.g. raw epochs, than the new model's features).
"""

from __future__ import annotations

import inspect
import warnings
from typing import ClassVar

import numpy as np
from sklearn.base import BaseEstimator, TransformerMixin
from sklearn.exceptions import NotFittedError
from sklearn.utils._param_validation import HasMethods, StrOptions
from sklearn.utils.validation import check_is_fitted, validate_data

from .._constraints import NON_NEGATIVE
from .ls_usvm import LeastSquaresSystem, LeastSquaresUniversumSVC
from .usvm import UniversumDual, UniversumSVC

_FROZEN_HINT = (
    "fit it before passing it as prior, and wrap it in sklearn.frozen.FrozenEstimator so "
    "that clone (cross-validation, grid search) keeps it fitted"
)


def _check_fitted_scorer(estimator, name: str) -> None:
    """Raise a clear error unless ``estimator`` is a fitted model with ``decision_function``."""
    if not hasattr(estimator, "decision_function"):
        raise ValueError(
            f"{name} must be None, 'last_column' or an estimator with decision_function; "
            f"got {type(estimator).__name__}."
        )
    try:
        check_is_fitted(estimator)
    except NotFittedError as err:
        raise NotFittedError(
            f"The {name} {type(estimator).__name__} is not fitted: {_FROZEN_HINT}."
        ) from err


_PRIOR_CONSTRAINTS: dict = {
    "prior": [None, StrOptions({"last_column"}), HasMethods(["decision_function"])],
    "prior_weight": [NON_NEGATIVE],
}


class _BiasedMixin:
    """Prior handling shared by the biased hinge and least-squares classifiers.

    The host class provides ``_check_params``, ``_validate_fit_data``, ``_assemble`` (the
    problem for ``g``), ``_solve`` and ``_expansion`` (``g(x) + b``); the subclass provides
    ``_shift(problem, prior_scores)``, which moves the problem's targets by ``λ·f₀``.
    """

    def __init_subclass__(cls, **kwargs):
        """Give ``cls`` an ``__init__`` of ``prior``, ``prior_weight`` and the host's parameters.

        The host's (e.g. :class:`UniversumSVC`'s) parameter list stays its only home: the
        signature scikit-learn reads (``get_params``, ``clone``) is built from it.
        """
        super().__init_subclass__(**kwargs)
        host = inspect.signature(super().__init__).parameters.values()
        self_param, *host_params = host
        kind = inspect.Parameter.POSITIONAL_OR_KEYWORD

        def __init__(self, prior=None, prior_weight=1.0, **params):
            super().__init__(**params)
            self.prior = prior
            self.prior_weight = prior_weight

        __init__.__signature__ = inspect.Signature(
            [
                self_param,
                inspect.Parameter("prior", kind, default=None),
                inspect.Parameter("prior_weight", kind, default=1.0),
                *(p.replace(kind=inspect.Parameter.KEYWORD_ONLY) for p in host_params),
            ]
        )
        __init__.__qualname__ = f"{cls.__qualname__}.__init__"
        cls.__init__ = __init__

    def _check_prior_params(self) -> None:
        if self.kernel == "precomputed":
            raise ValueError(
                f"{type(self).__name__} needs feature vectors: kernel='precomputed' is not "
                "supported (the prior is evaluated on X)."
            )
        if self.prior is not None and not isinstance(self.prior, str):
            _check_fitted_scorer(self.prior, "prior")
        if self.prior is None and self.prior_weight != 1.0:
            warnings.warn(
                f"prior_weight={self.prior_weight!r} has no effect without a prior "
                "(prior=None): the fit is the plain universum classifier. Pass prior= (a "
                "fitted estimator or 'last_column').",
                UserWarning,
                stacklevel=5,  # _check_prior_params, _check_params, fit, _fit_context: caller
            )

    def _check_prior_data(self) -> None:
        """Checks that need ``n_features_in_`` and ``classes_`` (set by the validation)."""
        if isinstance(self.prior, str):
            if self.n_features_in_ < 2:
                raise ValueError(
                    "prior='last_column' needs at least one feature besides the prior's score "
                    f"in the last column; got n_features = {self.n_features_in_}."
                )
        elif self.prior is not None:
            n_prior = getattr(self.prior, "n_features_in_", None)
            if n_prior is not None and n_prior != self.n_features_in_:
                raise ValueError(
                    f"The prior was fitted on {n_prior} features but X has "
                    f"{self.n_features_in_}; the prior must take the same input as this "
                    "estimator (or pass its score as the last column with prior='last_column')."
                )
            prior_classes = getattr(self.prior, "classes_", None)
            if prior_classes is not None and (
                len(prior_classes) != 2 or np.any(np.asarray(prior_classes) != self.classes_)
            ):
                raise ValueError(
                    f"The prior's classes {np.asarray(prior_classes).tolist()} differ from the "
                    f"training classes {self.classes_.tolist()}; its decision_function would "
                    "point the wrong way."
                )

    def _split_prior(self, X: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Features for the kernel and the prior's score ``f₀(x)`` of each row of ``X``."""
        if self.prior is None:
            return X, np.zeros(X.shape[0])
        if isinstance(self.prior, str):
            return np.ascontiguousarray(X[:, :-1]), X[:, -1].copy()
        if X.shape[0] == 0:
            return X, np.zeros(0)
        scores = np.asarray(self.prior.decision_function(X), dtype=np.float64)
        if scores.shape != (X.shape[0],):
            raise ValueError(
                "The prior's decision_function must return one score per trial (a binary "
                f"classifier); got shape {scores.shape} for {X.shape[0]} trials."
            )
        return X, scores

    def _check_params(self) -> None:
        super()._check_params()
        self._check_prior_params()

    def _fit(self, X, y, X_labelled, y_signed, X_universum) -> None:
        """Fit ``g`` with the prior's score as a margin offset (``X`` holds the prior's score
        as last column with ``prior="last_column"``)."""
        self._check_prior_data()
        X_lab, f0_lab = self._split_prior(X_labelled)
        X_u, f0_u = self._split_prior(X_universum)
        problem = self._assemble(None, y, X_lab, y_signed, X_u)
        self._solve(self._shift(problem, np.concatenate([f0_lab, f0_u])))

    def decision_function(self, X) -> np.ndarray:
        """Score ``f(x) = g(x) + b + λ·f₀(x)``; positive values mean ``classes_[1]``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Trials, with the prior's score as last column when ``prior="last_column"``.

        Returns
        -------
        scores : ndarray of shape (n_samples,)
        """
        check_is_fitted(self)
        X = validate_data(self, X, reset=False, dtype=np.float64, order="C")
        X, f0 = self._split_prior(X)
        return self._expansion(X) + self.prior_weight * f0

    def decision_trial(self, x: np.ndarray) -> float:
        """Single-trial path for online use: :meth:`decision_function` of one trial.

        The host's lean path on the kernel's features plus the prior's term. No validation:
        ``x`` must be a finite float64 vector of ``n_features_in_`` features.

        Parameters
        ----------
        x : ndarray of shape (n_features,)

        Returns
        -------
        score : float
        """
        X, f0 = self._split_prior(x[np.newaxis])
        return super().decision_trial(X[0]) + self.prior_weight * float(f0[0])


class BiasedSVC(_BiasedMixin, UniversumSVC):
    """Hinge-loss SVM regularised toward a prior classifier, with an optional universum.

    Minimises ``½‖f − λ·f₀‖² + C Σ_i (1 − y_i f(x_i))_+ + C_U Σ_j (|f(z_j)| − ε)_+`` where
    ``f₀`` is a prior classifier's decision function (e.g. the previous session's fitted
    pipeline) and ``λ = prior_weight``. The solution is ``f = g + b + λ·f₀`` with ``g`` a kernel
    expansion over the support vectors, found by the same dual solver as
    :class:`UniversumSVC`. With ``prior=None`` or ``prior_weight=0`` it is exactly the
    U-SVM (and without universum trials the soft-margin SVM of :class:`sklearn.svm.SVC`).

    Parameters
    ----------
    prior : None, "last_column" or estimator, default=None
        The prior ``f₀``: a fitted estimator whose ``decision_function`` takes the same ``X``
        (a two-class classifier with the same ``classes_``; wrap it in
        :class:`sklearn.frozen.FrozenEstimator` so that ``clone`` keeps it fitted), or
        ``"last_column"``: the last column of ``X`` holds ``f₀(x)`` and the kernel uses the
        other columns (see :class:`PriorDecision`).
    prior_weight : float, default=1.0
        ``λ ≥ 0``: how closely the solution follows the prior (1: ``‖f − f₀‖²``, the form of
        Kienzle & Chellapilla; 0: ignore the prior). Another value than 1 with
        ``prior=None`` has no effect and warns (``UserWarning``).
    C, C_universum, epsilon, kernel, gamma, degree, coef0, cone, fit_intercept, tol, \
max_iter, cache_size, shrinking, solver, universum_label, random_state, verbose
        As in :class:`UniversumSVC` (``kernel="precomputed"`` is not supported).

    Attributes
    ----------
    classes_, support_, support_vectors_, dual_coef_, universum_support_, \
universum_support_vectors_, intercept_, n_support_, n_iter_, objective_, gamma_, n_features_in_
        As in :class:`UniversumSVC`, for the data term ``g``; ``objective_`` is the dual
        objective ``½αᵀQα + pᵀα`` with the prior-shifted linear term ``p``.
    coef_ : ndarray of shape (1, n_kernel_features)
        Weights of ``g`` (linear kernel only), i.e. ``w − λ·w₀``: the correction learnt from
        the data, without the prior's term.

    See Also
    --------
    BiasedLeastSquaresSVC : the closed-form least-squares variant.
    PriorDecision : appends a prior's score as the last feature column.

    Notes
    -----
    The labelled variables' linear term is ``−1 + λ y_i f₀(x_i)`` (thesis (3.148)); each
    universum trial gives two variables with labels ±1 and linear term ``ε + λ (±1) f₀(z)``.
    With ``fit_intercept=True`` the dual keeps the equality ``Σ y_v α_v = 0``; the thesis's
    bSVM has no offset (``fit_intercept=False``).

    References
    ----------
    .. [1] S. Decherchi, "On the Structure of the Hypothesis Space, Model Selection, and
       Applications of Statistical Learning Theory", PhD thesis, Univ. of Genoa, §3.5.
    .. [2] W. Kienzle, K. Chellapilla, "Personalized handwriting recognition via biased
       regularization", ICML 2006.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.frozen import FrozenEstimator
    >>> from sklearn.svm import SVC
    >>> from bci_universum.classifiers import BiasedSVC
    >>> rng = np.random.default_rng(0)
    >>> X_old = rng.normal(size=(100, 3)); y_old = (X_old[:, 0] > 0).astype(int)
    >>> prior = FrozenEstimator(SVC(kernel="linear").fit(X_old, y_old))
    >>> X_new = rng.normal(size=(6, 3)); y_new = (X_new[:, 0] > 0.2).astype(int)
    >>> clf = BiasedSVC(prior=prior, prior_weight=1.0, kernel="linear").fit(X_new, y_new)
    """

    _parameter_constraints: ClassVar[dict] = {
        **UniversumSVC._parameter_constraints,
        **_PRIOR_CONSTRAINTS,
    }

    def _shift(self, dual: UniversumDual, prior_scores: np.ndarray) -> UniversumDual:
        f0 = prior_scores[dual.index]
        dual.p = dual.p + self.prior_weight * dual.y * f0
        return dual


class BiasedLeastSquaresSVC(_BiasedMixin, LeastSquaresUniversumSVC):
    """Biased regularised least squares (bRLS) with an offset and an optional universum.

    Minimises ``½‖f − λ·f₀‖² + (C/2) Σ_i (y_i − f(x_i))² + (C_U/2) Σ_j f(z_j)²`` with
    ``f = g + b + λ·f₀``: the U_ls-SVM fitted to the residual targets ``y_i − λ f₀(x_i)``
    (labelled) and ``−λ f₀(z_j)`` (universum), solved in closed form by
    :func:`~bci_universum.classifiers.ls_usvm.solve_ls_usvm`.

    Parameters
    ----------
    prior : None, "last_column" or estimator, default=None
        The prior ``f₀``, as in :class:`BiasedSVC`.
    prior_weight : float, default=1.0
        ``λ ≥ 0``.
    C, C_universum, kernel, gamma, degree, coef0, universum_label
        As in :class:`LeastSquaresUniversumSVC` (``kernel="precomputed"`` is not supported).

    Attributes
    ----------
    classes_, dual_coef_, intercept_, support_, support_vectors_, gamma_, n_universum_, \
n_features_in_
        As in :class:`LeastSquaresUniversumSVC`, for the data term ``g``.
    coef_ : ndarray of shape (1, n_kernel_features)
        Weights of ``g`` (linear kernel only), without the prior's term.

    See Also
    --------
    BiasedSVC : the hinge-loss variant.

    References
    ----------
    .. [1] S. Decherchi, PhD thesis, Univ. of Genoa, §3.5.3, eq. (3.151)–(3.152).
    """

    _parameter_constraints: ClassVar[dict] = {
        **LeastSquaresUniversumSVC._parameter_constraints,
        **_PRIOR_CONSTRAINTS,
    }

    def _shift(self, system: LeastSquaresSystem, prior_scores: np.ndarray) -> LeastSquaresSystem:
        n = system.targets.size
        system.targets = system.targets - self.prior_weight * prior_scores[:n]
        return system


class PriorDecision(TransformerMixin, BaseEstimator):
    """A fitted classifier's decision values as one feature column.

    For session transfer in one pipeline: in a :class:`~sklearn.pipeline.FeatureUnion` next to
    the new session's feature extractor, it appends the previous session's score so that a
    following :class:`BiasedSVC` (``prior="last_column"``) can use it. ``fit`` does not refit
    the wrapped classifier.

    Parameters
    ----------
    estimator : estimator
        A fitted classifier with ``decision_function`` (wrap it in
        :class:`sklearn.frozen.FrozenEstimator` so that ``clone`` keeps it fitted).

    Attributes
    ----------
    estimator_ : estimator
        The wrapped classifier (the same object as ``estimator``).
    """

    def __init__(self, estimator):
        self.estimator = estimator

    def fit(self, X=None, y=None):
        """Check that the wrapped classifier is fitted; nothing is learnt.

        Parameters
        ----------
        X, y : ignored

        Returns
        -------
        self : PriorDecision
        """
        _check_fitted_scorer(self.estimator, "estimator")
        self.estimator_ = self.estimator
        return self

    def transform(self, X) -> np.ndarray:
        """Decision values of the wrapped classifier.

        Parameters
        ----------
        X : array-like
            Whatever the wrapped classifier takes (e.g. epochs).

        Returns
        -------
        scores : ndarray of shape (n_samples, 1)
        """
        check_is_fitted(self)
        scores = np.asarray(self.estimator_.decision_function(X), dtype=np.float64)
        if scores.ndim != 1:
            raise ValueError(
                "The wrapped classifier must be binary (one decision value per trial); got "
                f"decision_function output of shape {scores.shape}."
            )
        return scores[:, None]

    def transform_trial(self, x: np.ndarray) -> np.ndarray:
        """Single-trial path for online use: :meth:`transform` of one trial, without
        validation, through the wrapped classifier's own single-trial path
        (:func:`bci_universum.online.trial_decision_path`).

        Parameters
        ----------
        x : ndarray
            One trial, as the wrapped classifier takes it (e.g. an epoch).

        Returns
        -------
        score : ndarray of shape (1,)
        """
        from ..online import trial_decision_path

        return trial_decision_path(self.estimator_)(x)

    def get_feature_names_out(self, input_features=None) -> np.ndarray:
        """Name of the single output column.

        Parameters
        ----------
        input_features : ignored

        Returns
        -------
        names : ndarray of str, shape (1,)
        """
        return np.array(["prior_decision"], dtype=object)
