"""Bayes point machine: the centre of mass of version space as a kernel classifier.

Herbrich, Graepel & Campbell, "Bayes Point Machines", JMLR 2001; equations, errata and tests in
``reference/bayes-point-machine.md`` (cited below as "notes").
"""

from __future__ import annotations

from numbers import Integral, Real
from typing import ClassVar

import numpy as np
from sklearn.base import BaseEstimator, _fit_context
from sklearn.utils import check_random_state
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_is_fitted, validate_data

from .._constraints import NON_NEGATIVE
from .._universum import universum_mask
from ..solvers.billiard import kernel_billiard, perceptron, perceptron_average
from ..solvers.kernels import kernel_matrix, resolve_gamma
from ._base import KERNEL_CONSTRAINTS, UniversumClassifierMixin

METHODS = ("billiard", "perceptron")


class BayesPointMachine(UniversumClassifierMixin, BaseEstimator):
    """Bayes point machine (binary kernel classifier without bias).

    The weight vector is an estimate of the centre of mass of version space, the set of unit
    weight vectors ``w = Σ_j α_j φ(x_j)`` that classify every training trial correctly. It is
    found either by the kernel billiard (``method="billiard"``: a ball bouncing inside version
    space, its trajectory averaged on the sphere; converges to the centre of mass) or by
    averaging kernel perceptrons trained on random permutations of the trials
    (``method="perceptron"``: cheaper, biased). The decision function is
    ``f(x) = Σ_j α_j k(x_j, x)`` with ``‖w‖ = 1``; there is no intercept, so standardise the
    features (or use a kernel with a constant offset) inside the pipeline.

    Universum trials (label ``universum_label``) are **ignored** by ``fit``: the Bayes point
    machine has no universum term (the paper never mentions one). Their number is stored in
    ``n_universum_ignored_`` so that a pipeline feeding them in can see it.

    Parameters
    ----------
    kernel : {"rbf", "linear", "poly", "sigmoid", "precomputed"} or callable, default="rbf"
        Kernel, with scikit-learn ``SVC`` semantics (see :mod:`bci_universum.solvers.kernels`).
        With ``"precomputed"``, ``fit`` takes the square training Gram matrix and the other
        methods take ``k(X_test, X_train)``, with universum columns included or not.
    gamma : {"scale", "auto"} or float, default="scale"
        Kernel coefficient for "rbf", "poly" and "sigmoid". For the paper's
        ``exp(−‖x − x'‖²/(2σ²))`` use ``gamma = 1/(2σ²)``.
    degree : int, default=3
        Degree of the "poly" kernel.
    coef0 : float, default=0.0
        Independent term of the "poly" and "sigmoid" kernels.
    softness : float, default=0.1
        The paper's λ: soft boundaries by training on ``G + λI`` (``k_λ(x, x') = k(x, x') +
        λ·1[x = x']`` applied by training index; notes §3.4 and §5 item 10 — for kernels with
        ``k(x, x) ≠ 1`` this differs from the ``(1 + λ)k(x_i, x_i)`` diagonal of the paper's
        eq. 27), so its scale is relative to ``k(x, x)`` (1 for "rbf"). Test points use the
        unmodified kernel. ``0`` is the paper's hard version (its Table 1), which needs
        training data separable in feature space; any ``λ > 0`` makes every labelling
        separable, hence the small positive default: noisy data such as EEG features are
        rarely separable.
    method : {"billiard", "perceptron"}, default="billiard"
        How version space is sampled (see above).
    n_perceptrons : int, default=100
        Number of permutations averaged by ``method="perceptron"``.
    tol : float, default=1e-3
        Billiard stopping rule: stop when the bound on the weight a new trajectory segment can
        still have in the centre estimate (``ρ₂(p_min, Ξ/(Ξ + ξ_max))``, notes §3.2) is at
        most ``tol``. It bounds the change of the centre estimate per bounce. About 1e-2 gives
        10³ bounces, 1e-3 10⁴ and 1e-4 10⁵ for m ≈ 150 (notes §9).
    max_bounces : int, default=100_000
        Budget of the billiard's bounces, and of its direction redraws (the anytime cap; a
        redraw happens when no wall is in reach, as in a degenerate version space);
        ``n_bounces_`` and ``stopped_by_`` say which limit ended the run.
    max_epochs : int, default=1000
        Passes over the data of each perceptron (the billiard's start point and
        ``method="perceptron"``) before the data are declared not separable; at least 2, as
        the first pass always updates and only a pass without a mistake confirms separation.
    random_state : int, RandomState instance or None, default=None
        Seed of the permutations and billiard directions.
    universum_label : int, str or None, default=None
        Sentinel of universum trials in ``y`` (``None``: ``-2`` or ``"universum"``).

    Attributes
    ----------
    classes_ : ndarray of shape (2,)
        The two class labels; ``decision_function > 0`` means ``classes_[1]``.
    dual_coef_ : ndarray of shape (n_train,)
        ``α`` of the centre estimate, normalised so that ``αᵀ(G + λI)α = 1``.
    support_ : ndarray of shape (n_train,)
        Indices of the labelled training trials (all of them: the solution is dense).
    support_vectors_ : ndarray of shape (n_train, n_features)
        The labelled training trials (empty, shape ``(0, 0)``, for a precomputed kernel, as
        :class:`sklearn.svm.SVC`'s).
    gamma_ : float
        The numeric kernel coefficient used.
    n_bounces_ : int
        Billiard bounces played (0 for ``method="perceptron"``).
    stopped_by_ : str
        ``"tol"`` or ``"max_bounces"`` for the billiard, ``"perceptron"`` otherwise.
    n_universum_ignored_ : int
        Universum trials present in ``y`` and left out of the fit.
    n_features_in_ : int
        Number of features seen during ``fit``.

    Notes
    -----
    The printed algorithms contain errors; the corrected versions (notes §3 and §5) are used:
    the perceptron updates the permuted index with the mistake test ``≤ 0``; the billiard uses
    the corrected chord length, the non-negative root of ρ₂, excludes the wall just left and
    the uninformative first midpoint from ``p_min``, and starts from a perceptron solution.
    """

    _parameter_constraints: ClassVar[dict] = {
        **KERNEL_CONSTRAINTS,
        "softness": [NON_NEGATIVE],
        "method": [StrOptions(set(METHODS))],
        "n_perceptrons": [Interval(Integral, 1, None, closed="left")],
        "tol": [Interval(Real, 0, 1, closed="right")],
        "max_bounces": [Interval(Integral, 1, None, closed="left")],
        "max_epochs": [Interval(Integral, 2, None, closed="left")],
        "random_state": ["random_state"],
    }

    def __init__(
        self,
        kernel="rbf",
        gamma="scale",
        degree=3,
        coef0=0.0,
        softness=0.1,
        method="billiard",
        n_perceptrons=100,
        tol=1e-3,
        max_bounces=100_000,
        max_epochs=1000,
        random_state=None,
        universum_label=None,
    ):
        self.kernel = kernel
        self.gamma = gamma
        self.degree = degree
        self.coef0 = coef0
        self.softness = softness
        self.method = method
        self.n_perceptrons = n_perceptrons
        self.tol = tol
        self.max_bounces = max_bounces
        self.max_epochs = max_epochs
        self.random_state = random_state
        self.universum_label = universum_label

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.classifier_tags.multi_class = False
        return tags

    def _kernel(self, X: np.ndarray, Y: np.ndarray | None = None) -> np.ndarray:
        return kernel_matrix(
            X, Y, kernel=self.kernel, gamma=self.gamma_, degree=self.degree, coef0=self.coef0
        )

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y):
        """Estimate the Bayes point from labelled trials (universum trials are ignored).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Training trials (the Gram matrix for ``kernel="precomputed"``).
        y : array-like of shape (n_samples,)
            Two class labels, plus optional universum trials under the sentinel label.

        Returns
        -------
        self : BayesPointMachine
        """
        X, y = validate_data(self, X, y, dtype=np.float64)
        if self.kernel == "precomputed" and X.shape[0] != X.shape[1]:
            raise ValueError(
                f"With kernel='precomputed', X must be the square training Gram matrix; "
                f"got shape {X.shape}."
            )
        is_universum = universum_mask(y, self.universum_label)
        labelled = np.flatnonzero(~is_universum)
        self.n_universum_ignored_ = int(is_universum.sum())
        y_lab = y[labelled]
        check_classification_targets(y_lab)
        self.classes_ = np.unique(y_lab)
        if self.classes_.size != 2:
            raise ValueError(
                f"Only binary classification is supported. BayesPointMachine needs exactly 2 "
                f"classes besides universum trials, got {self.classes_.size} "
                f"class{'' if self.classes_.size == 1 else 'es'}: {self.classes_.tolist()}."
            )
        y_pm = np.where(y_lab == self.classes_[1], 1.0, -1.0)

        self.support_ = labelled
        if self.kernel == "precomputed":
            G = np.ascontiguousarray(X[np.ix_(labelled, labelled)])
            if not np.allclose(G, G.T, rtol=1e-10, atol=1e-12 * np.abs(G).max()):
                raise ValueError(
                    "With kernel='precomputed', X must be a symmetric training Gram matrix."
                )
            self.support_vectors_ = np.empty((0, 0))
            self.gamma_ = 0.0
        else:
            self.support_vectors_ = X[labelled]
            self.gamma_ = resolve_gamma(self.gamma, self.support_vectors_)
            G = self._kernel(self.support_vectors_)
        G_train = G + self.softness * np.eye(labelled.size)
        if not np.all(np.diag(G_train) > 0):
            raise ValueError(
                "The kernel gives k(x, x) <= 0 for some training trial (e.g. an all-zero "
                "trial with a linear kernel); such a trial cannot be classified without a bias."
            )

        seed = check_random_state(self.random_state).randint(np.iinfo(np.int32).max)
        rng = np.random.default_rng(seed)
        m = labelled.size
        if self.method == "perceptron":
            perms = np.stack([rng.permutation(m) for _ in range(self.n_perceptrons)])
            alpha, n_failed = perceptron_average(G_train, y_pm, perms, self.max_epochs)
            if n_failed:
                self._raise_not_separable(f"{n_failed} of {self.n_perceptrons} perceptrons")
            self.n_bounces_ = 0
            self.stopped_by_ = "perceptron"
        else:
            alpha0, _, converged = perceptron(G_train, y_pm, rng.permutation(m), self.max_epochs)
            if not converged:
                self._raise_not_separable("the perceptron giving the billiard's start point")
            alpha, info = kernel_billiard(
                G_train, y_pm, alpha0, rng, tol=self.tol, max_bounces=self.max_bounces
            )
            self.n_bounces_ = info["n_bounces"]
            self.stopped_by_ = info["stopped_by"]
        self.dual_coef_ = alpha
        return self

    def _raise_not_separable(self, what: str) -> None:
        raise ValueError(
            f"The training trials are not separable in the kernel's feature space: {what} did "
            f"not converge within max_epochs={self.max_epochs} passes (softness="
            f"{self.softness}). Use softness > 0 (soft boundaries make every labelling "
            f"separable), another kernel, or a larger max_epochs."
        )

    def _test_kernel(self, X) -> np.ndarray:
        check_is_fitted(self)
        X = validate_data(self, X, dtype=np.float64, reset=False)
        if self.kernel == "precomputed":
            return np.ascontiguousarray(X[:, self.support_])
        return self._kernel(X, self.support_vectors_)

    def decision_function(self, X) -> np.ndarray:
        """Real-valued output ``f(x) = Σ_j α_j k(x_j, x)`` (positive: ``classes_[1]``).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Trials (``k(X, X_train)`` for a precomputed kernel).

        Returns
        -------
        f : ndarray of shape (n_samples,)
        """
        return self._test_kernel(X) @ self.dual_coef_

    def predict(self, X) -> np.ndarray:
        """Class labels ``classes_[f(x) > 0]``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        y_pred : ndarray of shape (n_samples,)
        """
        f = self.decision_function(X)
        return self.classes_[(f > 0).astype(int)]

    def confidence(self, X, kernel_diag=None) -> np.ndarray:
        """Normalised output ``|f(x)| / (‖w‖ √k(x, x))`` in [0, 1] (the paper's L511).

        It is the absolute cosine between the Bayes point and the trial in feature space; the
        paper found that rejecting trials with the smallest value lowers the error steadily.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Trials (``k(X, X_train)`` for a precomputed kernel).
        kernel_diag : array-like of shape (n_samples,) or None
            ``k(x, x)`` of each trial; required for a precomputed kernel, computed otherwise.

        Returns
        -------
        confidence : ndarray of shape (n_samples,)
        """
        return self._normalise(self.decision_function(X), X, kernel_diag)

    def _normalise(self, f, X, kernel_diag) -> np.ndarray:
        if kernel_diag is None:
            if self.kernel == "precomputed":
                raise ValueError(
                    "confidence needs k(x, x) of each trial, which a precomputed kernel does "
                    "not provide: pass kernel_diag."
                )
            kernel_diag = self._kernel_diagonal(np.asarray(X, dtype=np.float64))
        kernel_diag = np.asarray(kernel_diag, dtype=np.float64)
        if kernel_diag.shape != f.shape or not np.all(kernel_diag > 0):
            raise ValueError(
                f"kernel_diag must hold one positive k(x, x) per trial ({f.shape[0]}), got "
                f"shape {kernel_diag.shape}."
            )
        return np.abs(f) / np.sqrt(kernel_diag)

    def _kernel_diagonal(self, X: np.ndarray) -> np.ndarray:
        if self.kernel == "rbf":
            return np.ones(X.shape[0])
        return np.array([self._kernel(x[None, :])[0, 0] for x in X])

    def predict_with_rejection(self, X, reject_fraction: float, kernel_diag=None):
        """Predict and reject the least confident fraction of the trials.

        The ``floor(reject_fraction · n)`` trials with the smallest :meth:`confidence` are
        rejected (ties broken by trial order), as in the paper's rejection protocol (L521).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Trials.
        reject_fraction : float
            Fraction in [0, 1] of the trials to reject.
        kernel_diag : array-like of shape (n_samples,) or None
            See :meth:`confidence`.

        Returns
        -------
        y_pred : ndarray of shape (n_samples,)
            Predicted labels of all trials.
        accepted : ndarray of bool, shape (n_samples,)
            False for the rejected trials.
        """
        if not (isinstance(reject_fraction, Real) and 0 <= reject_fraction <= 1):
            raise ValueError(f"reject_fraction must be in [0, 1], got {reject_fraction!r}.")
        f = self.decision_function(X)
        conf = self._normalise(f, X, kernel_diag)
        y_pred = self.classes_[(f > 0).astype(int)]
        n_reject = int(np.floor(reject_fraction * conf.size))
        accepted = np.ones(conf.size, dtype=bool)
        accepted[np.argsort(conf, kind="stable")[:n_reject]] = False
        return y_pred, accepted
