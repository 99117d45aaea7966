"""Hinge-loss universum SVM (U-SVM, Weston et al. 2006) and its cone variant (U_c-SVM).

The primal (notes ``universum-svm.md`` §4, with the errata of §18 applied)::

    min_{w,b}  ½‖w‖² + C Σ_i max(0, 1 − y_i f(x_i)) + C_U Σ_j max(0, |f(z_j)| − ε_j)

with ``f(x) = ⟨w, φ(x)⟩ + b``. Each universum trial ``z_j`` enters the dual twice, with labels
+1 and −1, linear term ``ε_j`` and bound ``C_U``; both copies share one kernel row. The U_c-SVM
(``cone=True``, §8) uses ``ε_j = ρ·√k(z_j, z_j)`` with ``ρ = epsilon``; for kernels with a
constant unit diagonal (RBF) it equals the U-SVM.
"""

from __future__ import annotations

from dataclasses import dataclass
from numbers import Integral, Real
from typing import ClassVar

import numpy as np
from sklearn.utils._param_validation import Interval, Options, StrOptions
from sklearn.utils.validation import check_is_fitted

from .._constraints import NON_NEGATIVE, POSITIVE
from .._universum import universum_mask
from ..solvers import ipm_solve, linear_solver
from ..solvers.kernels import check_kernel_range, kernel_diagonal, resolve_gamma
from ..solvers.linear_dcd import dcd_solve
from ..solvers.smo import smo_solve
from ._base import KERNEL_CONSTRAINTS, BaseKernelUniversumClassifier


@dataclass
class UniversumDual:
    """The U-SVM's box-constrained dual, as :func:`~bci_universum.solvers.smo.smo_solve` takes it.

    Variables are the labelled trials, then the +1 copies and the −1 copies of the universum
    trials; ``index`` maps each variable to its row of ``points``.

    Attributes
    ----------
    y, p, upper, index : ndarray of shape (n_variables,)
        Labels, linear term, upper bounds and point index of the variables.
    points : ndarray
        Labelled then universum trials (feature rows, or the kernel sub-matrix when
        precomputed).
    pos : ndarray of shape (n_points,)
        Position of each point among the training trials of ``fit``.
    y_signed : ndarray of shape (n_labelled,)
        ±1 labels of the labelled trials.
    n_labelled : int
    """

    y: np.ndarray
    p: np.ndarray
    upper: np.ndarray
    index: np.ndarray
    points: np.ndarray
    pos: np.ndarray
    y_signed: np.ndarray
    n_labelled: int

    @property
    def n_universum(self) -> int:
        """Number of universum trials (each is two variables)."""
        return (self.y.size - self.n_labelled) // 2


class UniversumSVC(BaseKernelUniversumClassifier):
    """Hinge-loss universum support vector classifier (U-SVM / U_c-SVM), binary.

    Universum trials travel in ``y`` under the sentinel label (``-2``, or ``"universum"`` for
    string labels; see ``universum_label``) or through ``fit(..., X_universum=...)``. With
    ``C_universum=0`` or without universum trials this is the soft-margin SVM of
    :class:`sklearn.svm.SVC` (the same solution for positive semi-definite kernels; the
    sigmoid kernel is not one, and the solver may stop at another stationary point than
    libsvm's).

    Parameters
    ----------
    C : float, default=1.0
        Cost of the hinge loss of the labelled trials (> 0).
    C_universum : float, default=1.0
        Cost of the ε-insensitive loss of the universum trials (≥ 0; ``np.inf`` = hard tube).
    epsilon : float, default=0.05
        Half-width ε of the insensitive tube around the decision boundary (≥ 0); with
        ``cone=True`` the factor ρ of the per-trial width ``ρ·√k(z, z)``.
    kernel : {"linear", "rbf", "poly", "sigmoid", "precomputed"} or callable, default="rbf"
        As in :class:`sklearn.svm.SVC`. With ``"precomputed"``, ``X`` is the kernel matrix
        between the trials of ``fit`` (labelled and universum, in the order of ``y``).
    gamma : {"scale", "auto"} or float, default="scale"
        Kernel width; ``"scale"`` is ``1 / (n_features · X.var())`` over the labelled trials.
    degree : int, default=3
        Degree of the polynomial kernel.
    coef0 : float, default=0.0
        Independent term of the polynomial and sigmoid kernels.
    cone : bool, default=False
        Use the U_c-SVM tube ``ε_j = epsilon·√k(z_j, z_j)``.
    fit_intercept : bool, default=True
        Learn an offset ``b``. ``False`` drops the dual equality constraint (needed for the
        hard-margin / projected-kernel equivalence).
    tol : float, default=1e-3
        Stopping tolerance on the KKT violation.
    max_iter : int, default=-1
        SMO: cap on updates (``-1``: ``max(10⁷, 100·n_variables)``). DCD: cap on passes per
        inner solve (``-1``: 1000).
    cache_size : float, default=200
        Kernel-row cache of the SMO solver, in megabytes. RBF rows are float32 when
        ``tol ≥ 1e-4`` (as in libsvm; half the memory and about half the fit time of float64
        rows), float64 otherwise. A larger cache rarely pays: one holding every row (2.2 GB)
        fitted 16000 + 8000 trials in the default's time (see the solver benchmarks).
    shrinking : bool, default=True
        Use the shrinking heuristic.
    solver : {"auto", "smo", "dcd", "ipm"}, default="auto"
        ``"dcd"`` (linear kernel only) is dual coordinate descent on ``w`` with an exact offset;
        ``"ipm"`` (linear kernel only) an interior point method finished by SMO; ``"auto"``
        picks by problem shape among the three for the linear kernel
        (:func:`~bci_universum.solvers.linear_solver`), else SMO.
    universum_label : int, str or None, default=None
        Label of universum trials in ``y`` (``None``: ``-2`` or ``"universum"``).
    random_state : int, RandomState or None, default=None
        Seed of the visiting order of ``"dcd"`` (SMO is deterministic).
    verbose : bool, default=False
        Print a summary of the solver run.

    Attributes
    ----------
    classes_ : ndarray of shape (2,)
        Class labels (without the universum sentinel); ``decision_function > 0`` means
        ``classes_[1]``.
    support_ : ndarray of shape (n_SV,)
        Indices (into the trials of ``fit``) of the labelled support vectors, class by class
        as in :class:`sklearn.svm.SVC`: the ``n_support_[0]`` of ``classes_[0]`` first, each
        class in increasing index order.
    support_vectors_ : ndarray of shape (n_SV, n_features)
        The labelled support vectors, in the order of ``support_`` (empty for a precomputed
        kernel).
    dual_coef_ : ndarray of shape (1, n_SV)
        ``y_i α_i`` of the labelled support vectors, in the order of ``support_``.
    universum_support_ : ndarray of shape (n_USV,)
        Indices of the universum trials with a non-zero coefficient, in increasing order, into
        the trials of ``fit`` followed by the rows of ``X_universum``. They belong to no class
        and are counted apart from ``support_`` and ``n_support_``.
    universum_support_vectors_ : ndarray of shape (n_USV, n_features)
    universum_dual_coef_ : ndarray of shape (1, n_USV)
        ``β_j = α_j⁺ − α_j⁻`` of those universum trials.
    intercept_ : ndarray of shape (1,)
        The offset ``b``.
    coef_ : ndarray of shape (1, n_features)
        ``w`` (linear kernel only).
    n_support_ : ndarray of shape (2,)
        Labelled support vectors per class (universum support vectors not counted).
    n_iter_ : int
        Solver iterations: SMO updates (``solver_="smo"``), dual coordinate descent passes
        (``"dcd"``), or with ``"ipm"`` the SMO updates that finish the interior point
        solution — often 0, the interior point iterations themselves are not counted.
    objective_ : float
        Dual objective ``½αᵀQα + pᵀα`` at the solution (minimisation form).
    gamma_ : float
        The numeric kernel width used.
    solver_ : {"smo", "dcd", "ipm"}
        The solver that ran (with ``solver="auto"``: SMO, or for the linear kernel the choice
        of :func:`~bci_universum.solvers.linear_solver` by the dual's size).
    n_features_in_ : int

    Notes
    -----
    The dual is solved by :func:`bci_universum.solvers.smo.smo_solve` (or
    :func:`bci_universum.solvers.linear_dcd.dcd_solve`). References: J. Weston, R. Collobert,
    F. Sinz, L. Bottou, V. Vapnik, "Inference with the Universum", ICML 2006; F. Sinz, "A priori
    knowledge from non-examples", diploma thesis, Tübingen 2007.
    """

    _parameter_constraints: ClassVar[dict] = {
        **KERNEL_CONSTRAINTS,
        "C": [POSITIVE],
        "C_universum": [Interval(Real, 0, np.inf, closed="both")],
        "epsilon": [NON_NEGATIVE],
        "cone": ["boolean"],
        "fit_intercept": ["boolean"],
        "tol": [POSITIVE],
        "max_iter": [Options(Integral, {-1}), Interval(Integral, 1, None, closed="left")],
        "cache_size": [POSITIVE],
        "shrinking": ["boolean"],
        "solver": [StrOptions({"auto", "smo", "dcd", "ipm"})],
        "random_state": ["random_state"],
        "verbose": ["verbose"],
    }

    def __init__(
        self,
        C=1.0,
        C_universum=1.0,
        epsilon=0.05,
        kernel="rbf",
        gamma="scale",
        degree=3,
        coef0=0.0,
        cone=False,
        fit_intercept=True,
        tol=1e-3,
        max_iter=-1,
        cache_size=200,
        shrinking=True,
        solver="auto",
        universum_label=None,
        random_state=None,
        verbose=False,
    ):
        self.C = C
        self.C_universum = C_universum
        self.epsilon = epsilon
        self.kernel = kernel
        self.gamma = gamma
        self.degree = degree
        self.coef0 = coef0
        self.cone = cone
        self.fit_intercept = fit_intercept
        self.tol = tol
        self.max_iter = max_iter
        self.cache_size = cache_size
        self.shrinking = shrinking
        self.solver = solver
        self.universum_label = universum_label
        self.random_state = random_state
        self.verbose = verbose

    def _check_params(self) -> None:
        """Cross-parameter checks that ``_parameter_constraints`` cannot express."""
        if self.solver in ("dcd", "ipm") and self.kernel != "linear":
            raise ValueError(
                f"solver={self.solver!r} needs kernel='linear', got kernel={self.kernel!r}."
            )

    def _fit(self, X, y, X_labelled, y_signed, X_universum) -> None:
        self._solve(self._assemble(X, y, X_labelled, y_signed, X_universum))

    def _assemble(self, X, y, X_lab, y_signed, X_u) -> UniversumDual:
        """Build the box QP over the labelled trials and both copies of each universum trial.

        ``X`` and ``y`` are the arguments of ``fit`` (``X`` is read only for a precomputed
        kernel); ``X_lab``, ``y_signed`` and ``X_u`` come from ``_validate_fit_data``.
        """
        precomputed = self.kernel == "precomputed"
        mask = universum_mask(np.asarray(y), self.universum_label)
        n_train = mask.shape[0]
        # positions in the trials of fit: X rows, then the rows of X_universum
        pos_lab = np.flatnonzero(~mask)
        pos_u = np.concatenate([np.flatnonzero(mask), np.arange(n_train, n_train + len(X_u))])
        if precomputed and self.n_features_in_ != n_train:
            raise ValueError(
                "A precomputed kernel must be square over the training trials, got shape "
                f"({n_train}, {self.n_features_in_})."
            )
        m = X_lab.shape[0]
        q = X_u.shape[0] if self.C_universum > 0 else 0
        pos = np.concatenate([pos_lab, pos_u[:q]])
        self.gamma_ = 0.0 if precomputed else resolve_gamma(self.gamma, X_lab)
        if precomputed:
            K_train = np.asarray(X, dtype=np.float64)
            points = np.ascontiguousarray(K_train[np.ix_(pos, pos)])
            diag_u = np.diag(points)[m:]
        else:
            points = np.concatenate([X_lab, X_u[:q]])
            check_kernel_range(points, self.kernel, **self._kernel_args())
            diag_u = (
                kernel_diagonal(X_u[:q], self.kernel, **self._kernel_args()) if self.cone else None
            )
        eps = np.full(q, float(self.epsilon))
        if self.cone and q:
            if np.any(diag_u < 0):
                raise ValueError("cone=True needs k(z, z) >= 0 for every universum trial.")
            eps = self.epsilon * np.sqrt(diag_u)
        return UniversumDual(
            y=np.concatenate([y_signed, np.ones(q), -np.ones(q)]),
            p=np.concatenate([-np.ones(m), eps, eps]),
            upper=np.concatenate(
                [np.full(m, float(self.C)), np.full(2 * q, float(self.C_universum))]
            ),
            index=np.concatenate([np.arange(m), np.arange(m, m + q), np.arange(m, m + q)]),
            points=points,
            pos=pos,
            y_signed=y_signed,
            n_labelled=m,
        )

    def _kernel_args(self) -> dict:
        return {"gamma": self.gamma_, "degree": self.degree, "coef0": self.coef0}

    def _solve(self, dual: UniversumDual) -> None:
        """Solve the assembled dual with the configured solver and store the solution."""
        solver = self.solver
        if solver == "auto":
            linear = self.kernel == "linear"
            solver = linear_solver(dual.y.size, dual.points.shape[1]) if linear else "smo"
        problem = (dual.y, dual.p, dual.upper, dual.points)
        common = {
            "index": dual.index,
            "equality": self.fit_intercept,
            "tol": self.tol,
            "shrinking": self.shrinking,
        }
        if solver == "ipm":
            result = ipm_solve(*problem, max_iter=self.max_iter, **common)
        elif solver == "dcd":
            max_iter = 1000 if self.max_iter < 0 else self.max_iter
            result = dcd_solve(
                *problem, max_iter=max_iter, random_state=self.random_state, **common
            )
        else:
            result = smo_solve(
                *problem,
                kernel=self.kernel,
                max_iter=self.max_iter,
                cache_size=self.cache_size,
                **common,
                **self._kernel_args(),
            )
        m, q = dual.n_labelled, dual.n_universum
        precomputed = self.kernel == "precomputed"
        self._store_solution(result, dual.y_signed, m, q, dual.points, dual.pos, precomputed)
        self.solver_ = solver
        if self.verbose:
            print(
                f"{type(self).__name__}[{solver}]: {m} labelled, {q} universum trials, "
                f"{result.n_iter} iterations, objective {result.objective:.6g}, "
                f"{'converged' if result.converged else 'NOT converged'}"
            )

    def _store_solution(self, result, y_signed, m, q, points, pos, precomputed):
        alpha = result.alpha
        coef_lab = y_signed * alpha[:m]
        beta = alpha[m : m + q] - alpha[m + q :]
        sv = np.flatnonzero(alpha[:m] > 0)
        sv = sv[np.argsort(y_signed[sv] > 0, kind="stable")]  # class by class, as in SVC
        usv = np.flatnonzero(beta != 0)
        self.support_ = pos[sv]
        self.dual_coef_ = coef_lab[sv][None, :]
        self.universum_support_ = pos[m + usv]
        self.universum_dual_coef_ = beta[usv][None, :]
        # like sklearn.svm.SVC, no vectors (shape (0, 0)) with a precomputed kernel
        self.support_vectors_ = np.empty((0, 0)) if precomputed else points[sv]
        self.universum_support_vectors_ = np.empty((0, 0)) if precomputed else points[m + usv]
        self.n_support_ = np.array([np.sum(y_signed[sv] < 0), np.sum(y_signed[sv] > 0)])
        self.intercept_ = np.array([result.intercept])
        self.n_iter_ = result.n_iter
        self.objective_ = result.objective
        self.converged_ = result.converged
        self._set_expansion(
            None if precomputed else points[np.concatenate([sv, m + usv])],
            np.concatenate([self.support_, self.universum_support_]),
            np.concatenate([self.dual_coef_[0], self.universum_dual_coef_[0]]),
        )

    @property
    def coef_(self) -> np.ndarray:
        """Primal weights ``w`` of shape (1, n_features); only for ``kernel="linear"``."""
        check_is_fitted(self)
        if self.kernel != "linear":
            raise AttributeError("coef_ is only available when using a linear kernel.")
        return (self._expansion_coef @ self._expansion_points)[None, :]
