"""Least-squares universum SVM (U_ls-SVM): a closed-form universum classifier.

The U_ls-SVM (Sinz 2007, §2.2.1.2) fits ``h(x) = Σ_i α_i k(x̃_i, x) + b`` with a squared loss
that pulls labelled trials onto their labels ``±1`` and universum trials onto ``0``::

    min ½‖w‖² + (C/2) Σ_i (y_i − h(x_i))² + (C_U/2) Σ_j h(z_j)²

Its dual is the bordered linear system (eq. 2.20)::

    [ 0   1ᵀ    ] [ b ]   [ 0 ]
    [ 1   K + D ] [ α ] = [ t ]     t = (y; 0_q),  D = diag(1/C · 1_m, 1/C_U · 1_q)

solved here with a Cholesky factor of ``K + D`` and the Schur complement for ``b``. With
``C_universum = 0`` (or without universum trials) the universum block is dropped and the model
is the plain LS-SVM.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from typing import ClassVar

import numpy as np
import scipy.linalg
from sklearn.exceptions import ConvergenceWarning

from .._constraints import NON_NEGATIVE, POSITIVE
from .._universum import universum_mask
from ..solvers.kernels import kernel_matrix, resolve_gamma
from ._base import KERNEL_CONSTRAINTS, BaseKernelUniversumClassifier

#: Relative residual ``‖(K + D)α + b·1 − t‖ / ‖t‖`` above which the solution is reported as
#: inaccurate (at C = 1e10 with a rank-3 linear kernel it is ~2e-5, coefficients right to 1e-5)
_RESIDUAL_RTOL = 1e-4


def solve_ls_usvm(
    K: np.ndarray, targets: np.ndarray, ridge: np.ndarray
) -> tuple[np.ndarray, float]:
    """Solve the bordered U_ls-SVM system ``[0 1ᵀ; 1 K+diag(ridge)] [b; α] = [0; targets]``.

    Parameters
    ----------
    K : ndarray of shape (n, n)
        Kernel matrix over labelled then universum trials.
    targets : ndarray of shape (n,)
        ±1 for labelled trials, 0 for universum trials.
    ridge : ndarray of shape (n,)
        ``1/C`` for labelled trials, ``1/C_U`` for universum trials (all positive).

    Returns
    -------
    alpha : ndarray of shape (n,)
        Dual coefficients; they sum to zero.
    b : float
        The offset.

    Warns
    -----
    ConvergenceWarning
        When the solution leaves a relative residual above 1e-4: ``K + diag(ridge)`` is too
        ill-conditioned for double precision (a rank-deficient kernel, e.g. linear with many
        more trials than features, and a tiny ridge ``1/C``).
    """
    A = K + np.diag(ridge)
    rhs = np.column_stack([targets, np.ones_like(targets)])
    try:
        factor = scipy.linalg.cho_factor(A, lower=True, check_finite=False)
        u, v = scipy.linalg.cho_solve(factor, rhs, check_finite=False).T
    except np.linalg.LinAlgError:
        # K + D is not positive definite: the kernel is not PSD (e.g. sigmoid).
        u, v = scipy.linalg.solve(A, rhs, assume_a="sym", check_finite=False).T
    schur = v.sum()
    if not np.isfinite(schur) or abs(schur) <= np.finfo(float).eps * np.abs(v).sum():
        raise ValueError(
            "The U_ls-SVM system is singular (the kernel matrix is not positive "
            "semi-definite); use another kernel or larger regularisation (smaller C)."
        )
    b = u.sum() / schur
    alpha = u - b * v
    residual = np.linalg.norm(A @ alpha + b - targets)
    if residual > _RESIDUAL_RTOL * np.linalg.norm(targets):
        warnings.warn(
            "The U_ls-SVM system is too ill-conditioned for double precision at the cost "
            f"max(C, C_universum) = {1.0 / ridge.min():.3g}: its solution leaves a relative "
            f"residual of {residual / np.linalg.norm(targets):.1e}, and the coefficients are "
            "inaccurate. Lower C (or C_universum): a rank-deficient kernel matrix (e.g. "
            "linear, more trials than features) leaves only the ridge 1/C on some directions.",
            ConvergenceWarning,
            stacklevel=6,  # solve_ls_usvm, _solve, _fit, fit, its _fit_context: the caller
        )
    return alpha, float(b)


@dataclass
class LeastSquaresSystem:
    """The U_ls-SVM's bordered system before solving (see :func:`solve_ls_usvm`).

    Attributes
    ----------
    K : ndarray of shape (n, n)
        Kernel over the labelled then the universum trials.
    targets : ndarray of shape (n,)
        ±1 for labelled trials, 0 for universum trials.
    ridge : ndarray of shape (n,)
        ``1/C`` and ``1/C_U``.
    support : ndarray of shape (n,)
        Index of each trial in ``X`` of ``fit`` (``-1`` for rows of ``X_universum``).
    points : ndarray of shape (n, n_features)
        The trials (the whole kernel matrix when precomputed).
    n_universum : int
    """

    K: np.ndarray
    targets: np.ndarray
    ridge: np.ndarray
    support: np.ndarray
    points: np.ndarray
    n_universum: int


class LeastSquaresUniversumSVC(BaseKernelUniversumClassifier):
    """Least-squares universum SVM (U_ls-SVM) for two classes, solved in closed form.

    Labelled trials are fitted to ``±1`` and universum trials to ``0`` with a squared loss, in
    an RKHS with an offset (Sinz 2007, eq. 2.17–2.20). The solution is dense: every training
    trial, labelled or universum, carries a dual coefficient.

    Parameters
    ----------
    C : float, default=1.0
        Weight of the squared loss on labelled trials (> 0).
    C_universum : float, default=1.0
        Weight of the squared loss on universum trials (≥ 0). ``0`` gives the plain LS-SVM.
    kernel : {"linear", "rbf", "poly", "sigmoid", "precomputed"} or callable, default="rbf"
        Kernel, as in :class:`sklearn.svm.SVC`. With ``"precomputed"``, ``X`` in ``fit`` is the
        square kernel matrix of all training trials (labelled and universum) and ``X`` in
        ``decision_function`` is the kernel between test and training trials.
    gamma : {"scale", "auto"} or float, default="scale"
        Kernel coefficient of "rbf", "poly" and "sigmoid"; ``"scale"`` is
        ``1 / (n_features · Var X)`` over the labelled trials, so that adding universum trials
        does not change the kernel.
    degree : int, default=3
        Degree of the "poly" kernel.
    coef0 : float, default=0.0
        Independent term of the "poly" and "sigmoid" kernels.
    universum_label : int, str or None, default=None
        Label marking universum trials in ``y``; ``None`` means ``-2`` for numeric labels and
        ``"universum"`` for string labels.

    Attributes
    ----------
    classes_ : ndarray of shape (2,)
        The two labelled classes; ``classes_[1]`` is the positive one. Never the universum label.
    dual_coef_ : ndarray of shape (1, n_labelled + n_universum)
        α over the labelled trials followed by the universum trials (``Σ α = 0``).
    intercept_ : ndarray of shape (1,)
        The offset ``b``.
    coef_ : ndarray of shape (1, n_features)
        ``w = Σ α_i x̃_i``; only with ``kernel="linear"``.
    support_ : ndarray of shape (n_labelled + n_universum,)
        Index of each training trial in ``X`` (universum trials given as ``X_universum`` get
        ``-1``).
    support_vectors_ : ndarray of shape (n_labelled + n_universum, n_features)
        All training trials (the solution is not sparse); empty, shape ``(0, 0)``, for a
        precomputed kernel, as :class:`sklearn.svm.SVC`'s.
    gamma_ : float
        The numeric kernel coefficient used (0 for a precomputed kernel).
    n_universum_ : int
        Number of universum trials used (0 when ``C_universum == 0``).
    n_features_in_ : int
        Number of features seen in ``fit``.

    See Also
    --------
    bci_universum.classifiers.UniversumSVC : the hinge-loss universum SVM.

    References
    ----------
    .. [1] F. Sinz, "A priori knowledge from non-examples", Diploma thesis, Universität
       Tübingen, 2007, §2.2.1.2.
    """

    _parameter_constraints: ClassVar[dict] = {
        **KERNEL_CONSTRAINTS,
        "C": [POSITIVE],
        "C_universum": [NON_NEGATIVE],
    }

    def __init__(
        self,
        C: float = 1.0,
        C_universum: float = 1.0,
        kernel="rbf",
        gamma="scale",
        degree: int = 3,
        coef0: float = 0.0,
        universum_label=None,
    ):
        self.C = C
        self.C_universum = C_universum
        self.kernel = kernel
        self.gamma = gamma
        self.degree = degree
        self.coef0 = coef0
        self.universum_label = universum_label

    def _fit(self, X, y, X_labelled, y_signed, X_universum) -> None:
        self._solve(self._assemble(X, y, X_labelled, y_signed, X_universum))

    def _assemble(self, X, y, X_l, y_signed, X_u) -> LeastSquaresSystem:
        """Build the bordered system over the labelled then the universum trials.

        ``X`` and ``y`` are the arguments of ``fit`` (``X`` is read only for a precomputed
        kernel); ``X_l``, ``y_signed`` and ``X_u`` come from ``_validate_fit_data``.
        """
        mask = universum_mask(np.asarray(y), self.universum_label)
        n_marked = int(mask.sum())
        support = np.concatenate(
            [np.flatnonzero(~mask), np.flatnonzero(mask), np.full(len(X_u) - n_marked, -1)]
        )
        if self.C_universum == 0:
            X_u, support = X_u[:0], support[: len(X_l)]

        if self.kernel == "precomputed":
            X_all = np.asarray(X, dtype=np.float64)
            if X_all.shape[0] != X_all.shape[1]:
                raise ValueError(
                    "With kernel='precomputed', X must be the square kernel matrix of the "
                    f"training trials; got shape {X_all.shape}."
                )
            K = X_all[np.ix_(support, support)]
            self.gamma_ = 0.0
        else:
            X_all = np.concatenate([X_l, X_u], axis=0)
            self.gamma_ = resolve_gamma(self.gamma, X_l)
            K = self._kernel(X_all, X_all)

        n_l, n_u = len(X_l), len(X_u)
        ridge = np.full(n_l + n_u, 1.0 / self.C)
        if n_u:
            ridge[n_l:] = 1.0 / self.C_universum
        return LeastSquaresSystem(
            K=K,
            targets=np.concatenate([y_signed, np.zeros(n_u)]),
            ridge=ridge,
            support=support,
            points=X_all,
            n_universum=n_u,
        )

    def _solve(self, system: LeastSquaresSystem) -> None:
        """Solve the assembled system and store the solution."""
        alpha, b = solve_ls_usvm(system.K, system.targets, system.ridge)
        self.dual_coef_ = alpha[np.newaxis, :]
        self.intercept_ = np.array([b])
        self.support_ = system.support
        precomputed = self.kernel == "precomputed"
        points = system.points
        self.support_vectors_ = np.empty((0, 0)) if precomputed else points
        self._set_expansion(points, self.support_, self.dual_coef_[0])
        self.n_universum_ = system.n_universum
        if self.kernel == "linear":
            self.coef_ = self.dual_coef_ @ points

    def _kernel(self, X: np.ndarray, Y: np.ndarray) -> np.ndarray:
        return kernel_matrix(
            X, Y, kernel=self.kernel, gamma=self.gamma_, degree=self.degree, coef0=self.coef0
        )
