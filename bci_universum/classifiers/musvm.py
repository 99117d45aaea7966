"""Multiclass universum SVM (MU-SVM, Dhar et al.): Crammer–Singer with universum copies.

The problem solved is the reformulated primal (18) of the paper, the one its Algorithm 1 solves
(notes ``multiclass-universum-svm.md`` §2.4–2.5)::

    min_W  ½ Σ_l ‖w_l‖² + C Σ_i ξ_i + C* Σ_j Σ_k ζ_jk
    s.t.   (w_{y_i} − w_l)ᵀφ(x_i) ≥ 1 − δ(l, y_i) − ξ_i          (labelled trials)
           (w_k − w_l)ᵀφ(z_j)   ≥ −Δ (1 − δ(l, k)) − ζ_jk        (universum trial j, class k)

i.e. the Crammer–Singer hinge loss on the labelled trials plus, for every universum trial and
every class k, the loss ``[max_l f_l(z) − f_k(z) − Δ]_+``. For two classes this equals the
paper's motivating primal (2), a binary U-SVM without offset; for three or more classes (18)
sums over k where (2) takes the range ``max_l f_l − min_l f_l`` once (§2.4 "Derived"). There is
no intercept (as in the paper and Crammer–Singer): centre or standardise features.
"""

from __future__ import annotations

from numbers import Integral
from typing import ClassVar

import numpy as np
from sklearn.base import BaseEstimator, _fit_context
from sklearn.utils import check_random_state
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_is_fitted, validate_data

from .._constraints import NON_NEGATIVE, POSITIVE
from .._universum import universum_mask
from ..solvers.crammer_singer import cs_solve
from ..solvers.interior_point import cs_uses_interior_point
from ..solvers.kernels import check_kernel_range, kernel_matrix, resolve_gamma
from ._base import KERNEL_CONSTRAINTS, UniversumClassifierMixin, trial_kernel


class MulticlassUniversumSVC(UniversumClassifierMixin, BaseEstimator):
    """Multiclass universum SVM (MU-SVM): Crammer–Singer SVM that keeps universum trials near
    every class boundary.

    Universum trials travel in ``y`` under the sentinel label (``-2``, or ``"universum"`` for
    string labels; see ``universum_label``). Each becomes ``n_classes`` copies, one per class,
    with margin ``−Δ`` against the other classes and cost ``C_universum``. With
    ``C_universum=0`` or no universum trials this is the Crammer–Singer SVM of
    ``sklearn.svm.LinearSVC(multi_class="crammer_singer", fit_intercept=False)`` (any kernel).

    Parameters
    ----------
    C : float, default=1.0
        Cost of the labelled trials' Crammer–Singer hinge loss (> 0).
    C_universum : float or "auto", default="auto"
        Cost C* of each universum copy (≥ 0). ``"auto"`` is the paper's ``C·n/(m·L)`` (n
        labelled trials, m universum trials, L classes), recomputed at every fit.
    delta : float, default=0.0
        Width Δ ≥ 0 of the insensitive zone of the universum loss.
    kernel : {"linear", "rbf", "poly", "sigmoid", "precomputed"} or callable, default="linear"
        As in :class:`sklearn.svm.SVC`. With ``"precomputed"``, ``X`` is the kernel matrix
        between the trials of ``fit`` (labelled and universum, in the order of ``y``).
    gamma : {"scale", "auto"} or float, default="scale"
        Kernel width; ``"scale"`` is ``1 / (n_features · X.var())`` over the labelled trials.
    degree : int, default=3
        Degree of the polynomial kernel.
    coef0 : float, default=0.0
        Independent term of the polynomial and sigmoid kernels.
    tol : float, default=1e-3
        Stopping tolerance on the per-trial optimality violation of the dual.
    max_iter : int, default=10000
        Cap on solver passes over all (augmented) trials (a pass over the shrunk active set is
        cheap; large C and many universum copies need thousands).
    solver : {"auto", "cd", "ipm"}, default="auto"
        ``"cd"``: sequential dual passes from zero. ``"ipm"`` (linear kernel): the passes
        start from an interior point solution
        (:func:`~bci_universum.solvers.interior_point.cs_warm_start`), whose few dozen Newton
        steps do not slow down where the universum copies make the passes crawl (thousands to
        tens of thousands of them). ``"auto"``: ``"ipm"`` for the linear kernel with universum
        trials when :func:`~bci_universum.solvers.interior_point.cs_uses_interior_point`
        accepts the shape, else ``"cd"``.
    universum_label : int, str or None, default=None
        Label of universum trials in ``y`` (``None``: ``-2`` or ``"universum"``).
    random_state : int, RandomState or None, default=None
        Seed of the solver's visiting order (the decision function is unique; the dual
        variables need not be).

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
        Class labels (without the universum sentinel).
    C_universum_ : float
        The cost C* used.
    alpha_ : ndarray of shape (n_labelled + n_universum·n_classes, n_classes)
        Dual variables of the augmented problem: the labelled trials in the order of ``y``,
        then the ``n_classes`` copies (classes in ``classes_`` order) of each universum trial.
    augmented_trials_ : ndarray of int, shape (n_augmented,)
        Position in the trials of ``fit`` of every row of ``alpha_``.
    augmented_classes_ : ndarray of int, shape (n_augmented,)
        Class index (into ``classes_``) of every row of ``alpha_``.
    augmented_costs_ : ndarray of shape (n_augmented,)
        Cost ``C_i`` of every row (``C`` or ``C*``).
    support_ : ndarray of int, shape (n_SV,)
        Positions in the trials of ``fit`` with a non-zero coefficient vector.
    support_vectors_ : ndarray of shape (n_SV, n_features)
        Those trials (empty for a precomputed kernel).
    dual_coef_ : ndarray of shape (n_classes, n_SV)
        Compressed coefficients: ``f_l(x) = Σ_s dual_coef_[l, s] k(sv_s, x)``.
    coef_ : ndarray of shape (n_classes, n_features)
        ``w_l`` (linear kernel only).
    objective_ : float
        Minimisation form of the dual (19) at the solution (``−W(α)``).
    n_iter_ : int
        Sequential dual passes; with ``solver_="ipm"`` the passes that confirm the interior
        point solution (often 1), the interior point iterations themselves are not counted.
    solver_ : {"cd", "ipm"}
        The solver that ran.
    gamma_ : float
        Numeric kernel width used.
    n_features_in_ : int

    Notes
    -----
    Reference: S. Dhar, N. Ramakrishnan, V. Cherkassky, M. Shah, "Universum Learning for
    Multiclass SVM" (the span bound of its §3.3 is
    :func:`bci_universum.model_selection.span_bound`). The dual is solved by
    :func:`bci_universum.solvers.crammer_singer.cs_solve`. Prediction is ``argmax_l f_l(x)``;
    exact ties go to the first class in ``classes_``. For two classes ``decision_function``
    returns ``f_1 − f_0`` (positive means ``classes_[1]``), otherwise all ``n_classes`` scores.
    """

    _parameter_constraints: ClassVar[dict] = {
        **KERNEL_CONSTRAINTS,
        "C": [POSITIVE],
        "C_universum": [NON_NEGATIVE, StrOptions({"auto"})],
        "delta": [NON_NEGATIVE],
        "tol": [POSITIVE],
        "max_iter": [Interval(Integral, 1, None, closed="left")],
        "solver": [StrOptions({"auto", "cd", "ipm"})],
        "random_state": ["random_state"],
    }

    def __init__(
        self,
        C=1.0,
        C_universum="auto",
        delta=0.0,
        kernel="linear",
        gamma="scale",
        degree=3,
        coef0=0.0,
        tol=1e-3,
        max_iter=10_000,
        solver="auto",
        universum_label=None,
        random_state=None,
    ):
        self.C = C
        self.C_universum = C_universum
        self.delta = delta
        self.kernel = kernel
        self.gamma = gamma
        self.degree = degree
        self.coef0 = coef0
        self.tol = tol
        self.max_iter = max_iter
        self.solver = solver
        self.universum_label = universum_label
        self.random_state = random_state

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y):
        """Fit the MU-SVM.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features) or (n_samples, n_samples)
            Labelled and universum trials (the kernel matrix if ``kernel="precomputed"``).
        y : array-like of shape (n_samples,)
            Class labels (at least two classes), the universum sentinel for universum trials.

        Returns
        -------
        self : MulticlassUniversumSVC
        """
        if self.solver == "ipm" and self.kernel != "linear":
            raise ValueError(f"solver='ipm' needs kernel='linear', got kernel={self.kernel!r}.")
        X, y = validate_data(self, X, y, dtype=np.float64, order="C")
        precomputed = self.kernel == "precomputed"
        if precomputed and X.shape[0] != X.shape[1]:
            raise ValueError(
                f"A precomputed kernel must be square over the training trials, got {X.shape}."
            )
        mask = universum_mask(y, self.universum_label)
        y_lab = y[~mask]
        check_classification_targets(y_lab)
        self.classes_, codes = np.unique(y_lab, return_inverse=True)
        if self.classes_.size < 2:
            raise ValueError(
                f"The labelled trials contain {self.classes_.size} class(es) "
                f"{self.classes_.tolist()}; MulticlassUniversumSVC needs at least two besides "
                "the universum trials."
            )
        pos_lab, pos_u = np.flatnonzero(~mask), np.flatnonzero(mask)
        n, m, L = pos_lab.size, pos_u.size, self.classes_.size
        if isinstance(self.C_universum, str):
            c_u = float(self.C) * n / (m * L) if m else 0.0
        else:
            c_u = float(self.C_universum)
        self.C_universum_ = c_u
        if c_u == 0.0:
            pos_u, m = pos_u[:0], 0
        points_pos = np.concatenate([pos_lab, pos_u])
        self.gamma_ = 0.0 if precomputed else resolve_gamma(self.gamma, X[pos_lab])
        if precomputed:
            points = np.ascontiguousarray(X[np.ix_(points_pos, points_pos)])
        else:
            points = X[points_pos]
            check_kernel_range(points, self.kernel, self.gamma_, self.degree, self.coef0)
        copies = np.tile(np.arange(L), m)
        y_aug = np.concatenate([codes, copies])
        index = np.concatenate([np.arange(n), n + np.repeat(np.arange(m), L)])
        e = np.concatenate(
            [1.0 - np.eye(L)[codes], -float(self.delta) * (1.0 - np.eye(L)[copies])]
        )
        upper = np.concatenate([np.full(n, float(self.C)), np.full(m * L, c_u)])
        seed = check_random_state(self.random_state).randint(2**31 - 1)
        solver = self.solver
        if solver == "auto":
            shape = (y_aug.size, points.shape[0], L, points.shape[1])
            linear = self.kernel == "linear"
            # without a universum the passes converge fast (a few hundred on digits 0-7)
            use_ipm = linear and m > 0 and cs_uses_interior_point(*shape)
            solver = "ipm" if use_ipm else "cd"
        result = cs_solve(
            y_aug,
            e,
            upper,
            points,
            index=index,
            kernel=self.kernel,
            gamma=self.gamma_,
            degree=self.degree,
            coef0=self.coef0,
            tol=self.tol,
            max_iter=self.max_iter,
            seed=seed,
            solver=solver,
        )
        self.solver_ = solver
        self.alpha_ = result.alpha
        self.augmented_trials_ = points_pos[index]
        self.augmented_classes_ = y_aug
        self.augmented_costs_ = upper
        self.objective_ = result.objective
        self.n_iter_ = result.n_iter
        keep = np.flatnonzero(np.any(result.coef != 0.0, axis=1))
        self.support_ = points_pos[keep]
        self.dual_coef_ = np.ascontiguousarray(result.coef[keep].T)
        self.support_vectors_ = points[keep] if not precomputed else np.empty((0, 0))
        self._support_sq_norms = np.einsum("ij,ij->i", *2 * [self.support_vectors_])
        return self

    @property
    def coef_(self) -> np.ndarray:
        """Weights ``w_l`` of shape (n_classes, n_features); only for ``kernel="linear"``."""
        check_is_fitted(self)
        if self.kernel != "linear":
            raise AttributeError("coef_ is only available when using a linear kernel.")
        return self.dual_coef_ @ self.support_vectors_

    def _scores(self, X) -> np.ndarray:
        """All class scores ``f_l(x)``, shape (n_samples, n_classes)."""
        check_is_fitted(self)
        X = validate_data(self, X, reset=False, dtype=np.float64, order="C")
        if self.kernel == "precomputed":
            K = X[:, self.support_]
        else:
            # never empty: the first pass moves every labelled trial (its margin violation is 1)
            K = kernel_matrix(
                X, self.support_vectors_, self.kernel, self.gamma_, self.degree, self.coef0
            )
        return K @ self.dual_coef_.T

    def decision_function(self, X) -> np.ndarray:
        """Class scores ``f_l(x)``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Trials; with ``kernel="precomputed"`` the kernel between these trials and the
            trials of ``fit``.

        Returns
        -------
        scores : ndarray of shape (n_samples, n_classes), or (n_samples,) for two classes
            For two classes ``f_1 − f_0``: positive values mean ``classes_[1]``.
        """
        return self._signed(self._scores(X))

    def _signed(self, scores: np.ndarray) -> np.ndarray:
        if self.classes_.size == 2:
            return scores[..., 1] - scores[..., 0]
        return scores

    def decision_trial(self, x: np.ndarray):
        """Lean single-trial path for online use: :meth:`decision_function` of one trial.

        No validation: ``x`` must be a finite float64 vector of ``n_features_in_`` features
        (with ``kernel="precomputed"``: its kernel values against the trials of ``fit``).

        Parameters
        ----------
        x : ndarray of shape (n_features,)

        Returns
        -------
        scores : ndarray of shape (n_classes,), or float for two classes
        """
        k = trial_kernel(self, x, self.support_vectors_, self.support_, self._support_sq_norms)
        return self._signed(self.dual_coef_ @ k)

    def predict(self, X) -> np.ndarray:
        """Predict ``argmax_l f_l(x)`` (exact ties: the first class in ``classes_``).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        y_pred : ndarray of shape (n_samples,)
        """
        check_is_fitted(self)
        return self.classes_[np.argmax(self._scores(X), axis=1)]
