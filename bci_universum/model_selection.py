"""Universum-aware cross-validation: splitters and scorers.

Universum trials travel in ``y`` under a sentinel label (see :mod:`bci_universum._universum`).
Plain scikit-learn splitters would stratify them as a third class and put them in test folds,
and plain scorers would count them as errors. The splitters here stratify the labelled classes
only and, by default, put every universum trial into every training fold and never into a test
fold; :func:`universum_scorer` scores the labelled trials of a test fold only. Together they make
``GridSearchCV`` and ``cross_val_score`` work with universum trials in ``y``::

    search = GridSearchCV(
        LeastSquaresUniversumSVC(),
        {"C": [1, 10, 100], "C_universum": [0, 1, 10, 100]},
        cv=UniversumStratifiedKFold(10),
        scoring=universum_scorer("accuracy"),
    )

:func:`paired_ttest` and :func:`corrected_paired_ttest` compare two methods scored on the same
resampled splits; the corrected test (Nadeau & Bengio) accounts for the overlap of the training
sets, which makes the plain test too liberal.

For the multiclass universum SVM, :func:`span_bound` estimates the leave-one-out error from one
fit (Dhar et al.'s span estimate) and :class:`SpanBoundSearch` selects parameters by it instead
of by resampling.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np
from joblib import Parallel, delayed
from sklearn.base import BaseEstimator, MetaEstimatorMixin, clone
from sklearn.metrics import get_scorer
from sklearn.model_selection import (
    BaseCrossValidator,
    KFold,
    ParameterGrid,
    StratifiedKFold,
    StratifiedShuffleSplit,
)
from sklearn.utils import check_random_state
from sklearn.utils.validation import check_is_fitted

from ._universum import drop_universum, universum_mask
from .solvers.kernels import kernel_matrix

# --- Paired tests over resampled splits ---------------------------------------------------------


@dataclass(frozen=True)
class PairedTTest:
    """Result of a paired t-test of ``a − b`` over splits (two-sided).

    Attributes
    ----------
    mean_difference : float
        Mean of ``a − b``.
    statistic : float
        t statistic.
    pvalue : float
        Two-sided p-value (Student t with ``df`` degrees of freedom).
    df : int
        Degrees of freedom (number of pairs − 1).
    """

    mean_difference: float
    statistic: float
    pvalue: float
    df: int


def _paired_differences(scores_a, scores_b) -> np.ndarray:
    a = np.asarray(scores_a, dtype=float)
    b = np.asarray(scores_b, dtype=float)
    if a.ndim != 1 or a.shape != b.shape:
        raise ValueError(
            f"scores_a and scores_b must be 1-D with one score per split each; got shapes "
            f"{a.shape} and {b.shape}."
        )
    if a.size < 2:
        raise ValueError(f"a paired t-test needs at least 2 splits, got {a.size}.")
    if not (np.all(np.isfinite(a)) and np.all(np.isfinite(b))):
        raise ValueError("scores contain NaN or infinite values.")
    return a - b


def _t_test(d: np.ndarray, variance_factor: float) -> PairedTTest:
    """t = mean(d) / sqrt(variance_factor · var(d)), var with ddof=1."""
    from scipy import stats

    mean = float(d.mean())
    df = d.size - 1
    if np.ptp(d) <= 1e-12 * np.abs(d).max():  # equal differences (up to rounding): no spread
        t = 0.0 if mean == 0.0 else float(np.copysign(np.inf, mean))
        return PairedTTest(mean, t, 1.0 if t == 0.0 else 0.0, df)
    t = mean / float(np.sqrt(variance_factor * d.var(ddof=1)))
    return PairedTTest(mean, float(t), float(2 * stats.t.sf(abs(t), df)), df)


def paired_ttest(scores_a, scores_b) -> PairedTTest:
    """Plain paired t-test over splits: ``t = mean(d) / sqrt(var(d) / J)``.

    Treats the ``J`` split scores as independent, which they are not when training sets
    overlap (cross-validation, repeated subsampling); use :func:`corrected_paired_ttest` there.

    Parameters
    ----------
    scores_a, scores_b : array-like of shape (n_splits,)
        Scores of two methods on the same splits.

    Returns
    -------
    result : PairedTTest
    """
    d = _paired_differences(scores_a, scores_b)
    return _t_test(d, 1.0 / d.size)


def corrected_paired_ttest(scores_a, scores_b, n_train, n_test) -> PairedTTest:
    """Corrected resampled t-test (Nadeau & Bengio, 2003).

    ``t = mean(d) / sqrt((1/J + n_test/n_train) · var(d))`` with ``J`` splits: the extra term
    ``n_test/n_train`` accounts for the correlation between splits that share training trials.

    Parameters
    ----------
    scores_a, scores_b : array-like of shape (n_splits,)
        Scores of two methods on the same splits.
    n_train, n_test : int or array-like of shape (n_splits,)
        Training and test set sizes (averaged over splits when arrays).

    Returns
    -------
    result : PairedTTest
    """
    d = _paired_differences(scores_a, scores_b)
    n_train = float(np.mean(n_train))
    n_test = float(np.mean(n_test))
    if n_train <= 0 or n_test <= 0:
        raise ValueError(f"n_train and n_test must be positive, got {n_train} and {n_test}.")
    return _t_test(d, 1.0 / d.size + n_test / n_train)


_UNIVERSUM_MODES = ("train", "split")


def _check_mode(universum: str) -> None:
    if universum not in _UNIVERSUM_MODES:
        raise ValueError(
            f"universum must be one of {_UNIVERSUM_MODES} (universum trials in every training "
            f"fold, or split across folds like labelled trials); got {universum!r}."
        )


def _labelled_and_universum(X, y, universum_label) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Indices of labelled and universum trials, and the labels of the labelled ones."""
    if y is None:
        raise ValueError("The universum-aware splitters need y (labels with universum trials).")
    y = np.asarray(y)
    if y.ndim != 1:
        raise ValueError(f"y must be one-dimensional, got shape {y.shape}.")
    if len(X) != len(y):
        raise ValueError(f"X and y have inconsistent numbers of trials: {len(X)} and {len(y)}.")
    mask = universum_mask(y, universum_label)
    labelled = np.flatnonzero(~mask)
    if labelled.size == 0:
        raise ValueError("y contains only universum trials; there is nothing to stratify.")
    return labelled, np.flatnonzero(mask), y[labelled]


def _merge_folds(labelled, universum, labelled_folds, universum_test):
    """Map per-part fold indices back to ``y`` and join labelled and universum trials."""
    for (train_l, test_l), test_u in zip(labelled_folds, universum_test, strict=True):
        train_u = np.setdiff1d(np.arange(universum.size), test_u, assume_unique=True)
        train = np.sort(np.concatenate([labelled[train_l], universum[train_u]]))
        test = np.sort(np.concatenate([labelled[test_l], universum[test_u]]))
        yield train, test


class UniversumStratifiedKFold(BaseCrossValidator):
    """Stratified k-fold over labelled trials; universum trials kept for training.

    The labelled classes are stratified as in :class:`sklearn.model_selection.StratifiedKFold`;
    the universum label is not treated as a class. With ``universum="train"`` every universum
    trial is in every training fold and in no test fold; with ``universum="split"`` the universum
    trials are split into ``n_splits`` folds too (those in a test fold are then left out of its
    training fold; score with :func:`universum_scorer`).

    Parameters
    ----------
    n_splits : int, default=5
        Number of folds (at least 2).
    shuffle : bool, default=False
        Shuffle each class (and the universum trials) before splitting.
    random_state : int, RandomState instance or None, default=None
        Seed of the shuffling (only with ``shuffle=True``).
    universum : {"train", "split"}, default="train"
        Where universum trials go.
    universum_label : int, str or None, default=None
        Label marking universum trials (``None``: ``-2`` or ``"universum"``).
    """

    def __init__(
        self,
        n_splits: int = 5,
        *,
        shuffle: bool = False,
        random_state=None,
        universum: str = "train",
        universum_label=None,
    ):
        self.n_splits = n_splits
        self.shuffle = shuffle
        self.random_state = random_state
        self.universum = universum
        self.universum_label = universum_label

    def split(self, X, y, groups=None) -> Iterator[tuple[np.ndarray, np.ndarray]]:
        """Generate train and test indices.

        Parameters
        ----------
        X : array-like of shape (n_samples, ...)
            Trials (only their number is used).
        y : array-like of shape (n_samples,)
            Labels with universum trials marked by ``universum_label``.
        groups : None
            Ignored, for API compatibility.

        Yields
        ------
        train, test : ndarray of int
            Indices of the training and test trials of one fold.
        """
        _check_mode(self.universum)
        labelled, universum, y_labelled = _labelled_and_universum(X, y, self.universum_label)
        random_state = self.random_state if self.shuffle else None
        labelled_folds = StratifiedKFold(
            self.n_splits, shuffle=self.shuffle, random_state=random_state
        ).split(labelled, y_labelled)
        if self.universum == "split":
            if universum.size < self.n_splits:
                raise ValueError(
                    f"Cannot split {universum.size} universum trials into {self.n_splits} "
                    "folds; use universum='train' or fewer folds."
                )
            universum_folds = KFold(self.n_splits, shuffle=self.shuffle, random_state=random_state)
            universum_test = (test for _, test in universum_folds.split(universum))
        else:
            universum_test = (np.arange(0) for _ in range(self.n_splits))
        yield from _merge_folds(labelled, universum, labelled_folds, universum_test)

    def get_n_splits(self, X=None, y=None, groups=None) -> int:
        """Number of folds."""
        return self.n_splits


class UniversumStratifiedShuffleSplit(BaseCrossValidator):
    """Stratified random train/test splits of labelled trials; universum kept for training.

    Like :class:`sklearn.model_selection.StratifiedShuffleSplit` on the labelled trials. With
    ``universum="train"`` all universum trials join every training set; with ``"split"`` the
    same fraction of universum trials as of labelled trials is drawn into each test set.

    Parameters
    ----------
    n_splits : int, default=10
        Number of re-shuffling and splitting iterations.
    test_size, train_size : float, int or None
        As in :class:`~sklearn.model_selection.StratifiedShuffleSplit` (counts refer to the
        labelled trials).
    random_state : int, RandomState instance or None, default=None
        Seed of the shuffling.
    universum : {"train", "split"}, default="train"
        Where universum trials go.
    universum_label : int, str or None, default=None
        Label marking universum trials.
    """

    def __init__(
        self,
        n_splits: int = 10,
        *,
        test_size=None,
        train_size=None,
        random_state=None,
        universum: str = "train",
        universum_label=None,
    ):
        self.n_splits = n_splits
        self.test_size = test_size
        self.train_size = train_size
        self.random_state = random_state
        self.universum = universum
        self.universum_label = universum_label

    def split(self, X, y, groups=None) -> Iterator[tuple[np.ndarray, np.ndarray]]:
        """Generate train and test indices (see :meth:`UniversumStratifiedKFold.split`)."""
        _check_mode(self.universum)
        labelled, universum, y_labelled = _labelled_and_universum(X, y, self.universum_label)
        rng = check_random_state(self.random_state)
        labelled_folds = list(
            StratifiedShuffleSplit(
                self.n_splits,
                test_size=self.test_size,
                train_size=self.train_size,
                random_state=rng,
            ).split(labelled, y_labelled)
        )
        if self.universum == "split":
            universum_test = [
                rng.permutation(universum.size)[
                    : round(universum.size * len(test) / labelled.size)
                ]
                for _, test in labelled_folds
            ]
        else:
            universum_test = [np.arange(0)] * self.n_splits
        yield from _merge_folds(labelled, universum, labelled_folds, universum_test)

    def get_n_splits(self, X=None, y=None, groups=None) -> int:
        """Number of splitting iterations."""
        return self.n_splits


class _UniversumScorer:
    """Apply a scikit-learn scorer to the labelled trials of a test set only."""

    def __init__(self, scorer, universum_label):
        self._scorer = scorer
        self._universum_label = universum_label

    def __call__(self, estimator, X, y_true, sample_weight=None, **kwargs) -> float:
        label = getattr(estimator, "universum_label", None)
        if self._universum_label is not None:
            label = self._universum_label
        X, y_true, sample_weight = drop_universum(X, y_true, sample_weight, label)
        if sample_weight is not None:
            kwargs["sample_weight"] = sample_weight
        return self._scorer(estimator, X, y_true, **kwargs)

    def __repr__(self) -> str:
        return f"universum_scorer({self._scorer!r})"


def universum_scorer(scoring="accuracy", *, universum_label=None):
    """Wrap a scikit-learn scorer so that it ignores universum trials.

    Parameters
    ----------
    scoring : str or callable, default="accuracy"
        A scorer name (``sklearn.metrics.get_scorer_names()``) or a scorer callable
        ``scorer(estimator, X, y)``.
    universum_label : int, str or None, default=None
        Label marking universum trials. ``None`` uses the estimator's ``universum_label``
        parameter when it has one, else ``-2`` / ``"universum"``.

    Returns
    -------
    scorer : callable
        ``scorer(estimator, X, y)`` evaluated on the labelled trials of ``(X, y)``.
    """
    if isinstance(scoring, str):
        scoring = get_scorer(scoring)
    elif not callable(scoring):
        raise ValueError(
            "scoring must be a scorer name or a callable scorer(estimator, X, y); "
            f"got {scoring!r}."
        )
    return _UniversumScorer(scoring, universum_label)


# --- Span-based leave-one-out estimate of the MU-SVM (Dhar et al., §3.3) -----------------------

_PINV_RCOND = 1e-10


@dataclass
class SpanBound:
    """The span estimate (22) of the leave-one-out error of a fitted MU-SVM.

    Attributes
    ----------
    bound : float
        ``(count_type1 + count_type2) / n_labelled``.
    count_type1 : int
        Labelled Type-1 support vectors with ``S_t² ≥ α_t·f(x_t)``.
    count_type2 : int
        Labelled Type-2 (bounded) support vectors; each counts as an error.
    n_labelled : int
        Number of labelled trials (the denominator).
    type1, type2 : ndarray of int
        Rows of ``alpha_`` (augmented problem) that are Type-1 / Type-2 support vectors.
    span_sq : ndarray of shape (n_labelled,)
        ``S_t²`` of every labelled trial (NaN where it is not a Type-1 support vector).
    margin_term : ndarray of shape (n_labelled,)
        ``α_t·f(x_t)`` of every labelled trial.
    """

    bound: float
    count_type1: int
    count_type2: int
    n_labelled: int
    type1: np.ndarray
    type2: np.ndarray
    span_sq: np.ndarray
    margin_term: np.ndarray


def _trial_kernel(estimator, X, positions: np.ndarray) -> np.ndarray:
    """Kernel matrix between the fit trials at ``positions`` (the estimator's kernel)."""
    if estimator.kernel == "precomputed":
        return np.ascontiguousarray(X[np.ix_(positions, positions)], dtype=np.float64)
    Xp = X[positions]
    return kernel_matrix(
        Xp, None, estimator.kernel, estimator.gamma_, estimator.degree, estimator.coef0
    )


def _distances_to_span(K: np.ndarray, targets: np.ndarray) -> np.ndarray:
    """``d_t² = K_tt − K_tR K_RR⁺ K_Rt`` with R all other rows, for each position ``t``.

    The squared feature-space distance from ``φ_t`` to the linear span of the other points. With
    a well-conditioned ``K`` this is ``1 / (K⁻¹)_tt``; otherwise (duplicate points, more points
    than linear dimensions) each ``t`` uses the pseudo-inverse of ``K_RR``.
    """
    if K.shape[0] == 1:
        return np.array([K[0, 0]])
    eigvals = np.linalg.eigvalsh(K)
    if eigvals[0] > 1e-8 * max(eigvals[-1], np.finfo(float).tiny):
        return 1.0 / np.diag(np.linalg.inv(K))[targets]
    out = np.empty(targets.size)
    for k, t in enumerate(targets):
        rest = np.delete(np.arange(K.shape[0]), t)
        k_rt = K[rest, t]
        proj = k_rt @ np.linalg.pinv(K[np.ix_(rest, rest)], rcond=_PINV_RCOND, hermitian=True)
        out[k] = K[t, t] - proj @ k_rt
    return np.maximum(out, 0.0)


def span_bound(estimator, X, y, *, sv_tol: float = 1e-6) -> SpanBound:
    """Span estimate (22) of the leave-one-out error of a fitted MU-SVM, without refitting.

    Follows Corollary 2 of Dhar et al. with the errata of the notes
    (``multiclass-universum-svm.md`` §2.9): the span of a labelled Type-1 support vector t is
    the closed form ``S_t² = ‖α_t‖²·d_t²`` (E3), ``d_t`` the feature-space distance from
    ``φ(x_t)`` to the linear span of the other Type-1 support vectors (universum copies
    included), computed with a pseudo-inverse so that singular kernel blocks (duplicate copies,
    averaged universa) give the right value (E2, E4); t counts as an error when
    ``S_t² ≥ α_t·f(x_t)``; every labelled Type-2 support vector counts; the denominator is the
    number of labelled trials. It is an estimate, not a strict upper bound, for three or more
    classes (E5), and it is exactly 1 when every labelled trial is bounded (E8).

    Parameters
    ----------
    estimator : MulticlassUniversumSVC
        Fitted on ``(X, y)``.
    X : array-like of shape (n_samples, n_features) or (n_samples, n_samples)
        The training trials of that fit (the kernel matrix for ``kernel="precomputed"``).
    y : array-like of shape (n_samples,)
        The labels of that fit (universum trials marked by the sentinel).
    sv_tol : float, default=1e-6
        Relative tolerance separating Type 1 (``sv_tol·C_i < α_iy < (1 − sv_tol)·C_i``) from
        Type 2 (``α_iy ≥ (1 − sv_tol)·C_i``) support vectors (E10); keep it above the solver's
        accuracy.

    Returns
    -------
    result : SpanBound
    """
    for attr in ("alpha_", "augmented_trials_", "augmented_classes_", "augmented_costs_"):
        if not hasattr(estimator, attr):
            raise TypeError(
                "span_bound needs a fitted MulticlassUniversumSVC (missing attribute "
                f"{attr!r} on {type(estimator).__name__})."
            )
    if not 0 < sv_tol < 0.5:
        raise ValueError(f"sv_tol must lie in (0, 0.5), got {sv_tol!r}.")
    X = np.asarray(X, dtype=np.float64)
    y = np.asarray(y)
    if X.shape[0] != y.shape[0]:
        raise ValueError(f"X and y have inconsistent numbers of trials: {len(X)} and {len(y)}.")
    alpha = estimator.alpha_
    rows = np.arange(alpha.shape[0])
    is_universum = universum_mask(y, estimator.universum_label)
    n = int(np.count_nonzero(~is_universum))
    trials = estimator.augmented_trials_
    if trials.size < n or trials.max(initial=-1) >= X.shape[0] or np.any(is_universum[trials[:n]]):
        raise ValueError("X and y are not the trials the estimator was fitted on.")
    costs = estimator.augmented_costs_
    own = alpha[rows, estimator.augmented_classes_]
    type1 = np.flatnonzero((own > sv_tol * costs) & (own < (1.0 - sv_tol) * costs))
    type2 = np.flatnonzero((costs > 0) & (own >= (1.0 - sv_tol) * costs))
    positions, point_of_row = np.unique(trials, return_inverse=True)
    K = _trial_kernel(estimator, X, positions)
    coef = np.zeros((positions.size, alpha.shape[1]))
    np.add.at(coef, point_of_row, alpha)
    f_rows = (K @ coef)[point_of_row[:n]]
    margin_term = np.einsum("il,il->i", alpha[:n], f_rows)
    span_sq = np.full(n, np.nan)
    train_type1 = type1[type1 < n]
    if train_type1.size:
        sv_points = point_of_row[type1]
        K_sv = K[np.ix_(sv_points, sv_points)]
        d2 = _distances_to_span(K_sv, np.flatnonzero(type1 < n))
        span_sq[train_type1] = np.sum(alpha[train_type1] ** 2, axis=1) * d2
    count1 = int(np.count_nonzero(span_sq[train_type1] >= margin_term[train_type1]))
    count2 = int(np.count_nonzero(type2 < n))
    return SpanBound(
        bound=(count1 + count2) / n,
        count_type1=count1,
        count_type2=count2,
        n_labelled=n,
        type1=type1,
        type2=type2,
        span_sq=span_sq,
        margin_term=margin_term,
    )


def _fit_and_bound(estimator, params, X, y, sv_tol):
    estimator = clone(estimator).set_params(**params)
    estimator.fit(X, y)
    return estimator, span_bound(estimator, X, y, sv_tol=sv_tol)


class SpanBoundSearch(MetaEstimatorMixin, BaseEstimator):
    """Model selection for the MU-SVM by the span estimate instead of cross-validation.

    Fits ``estimator`` once per grid point on all the data and keeps the point with the lowest
    :func:`span_bound` (exact ties: the first point in ``ParameterGrid`` order, as in
    ``GridSearchCV``). No resampling: one fit per grid point.

    Parameters
    ----------
    estimator : MulticlassUniversumSVC
        The model to tune.
    param_grid : dict or list of dict
        As in :class:`~sklearn.model_selection.GridSearchCV`.
    sv_tol : float, default=1e-6
        Support-vector tolerance of :func:`span_bound`.
    n_jobs : int or None, default=None
        Grid points fitted in parallel by joblib.

    Attributes
    ----------
    cv_results_ : dict
        ``params``, ``bound``, ``count_type1``, ``count_type2``, ``rank_bound`` per grid point.
    best_index_ : int
    best_params_ : dict
    best_bound_ : float
    best_estimator_ : estimator
        The model fitted at the best grid point (on all the data).
    classes_ : ndarray
    """

    def __init__(self, estimator, param_grid, *, sv_tol=1e-6, n_jobs=None):
        self.estimator = estimator
        self.param_grid = param_grid
        self.sv_tol = sv_tol
        self.n_jobs = n_jobs

    def fit(self, X, y):
        """Fit every grid point and select the one with the lowest span estimate.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)
            Labels, the universum sentinel for universum trials.

        Returns
        -------
        self : SpanBoundSearch
        """
        grid = list(ParameterGrid(self.param_grid))
        if not grid:
            raise ValueError("param_grid is empty.")
        out = Parallel(n_jobs=self.n_jobs)(
            delayed(_fit_and_bound)(self.estimator, params, X, y, self.sv_tol) for params in grid
        )
        bounds = np.array([b.bound for _, b in out])
        order = np.argsort(bounds, kind="stable")
        rank = np.empty(len(grid), dtype=np.int64)
        rank[order] = np.arange(1, len(grid) + 1)
        self.cv_results_ = {
            "params": grid,
            "bound": bounds,
            "count_type1": np.array([b.count_type1 for _, b in out]),
            "count_type2": np.array([b.count_type2 for _, b in out]),
            "rank_bound": rank,
        }
        self.best_index_ = int(np.argmin(bounds))
        self.best_params_ = grid[self.best_index_]
        self.best_bound_ = float(bounds[self.best_index_])
        self.best_estimator_ = out[self.best_index_][0]
        return self

    @property
    def classes_(self) -> np.ndarray:
        check_is_fitted(self)
        return self.best_estimator_.classes_

    def predict(self, X) -> np.ndarray:
        """Predict with the selected model."""
        check_is_fitted(self)
        return self.best_estimator_.predict(X)

    def decision_function(self, X) -> np.ndarray:
        """Decision function of the selected model."""
        check_is_fitted(self)
        return self.best_estimator_.decision_function(X)

    def score(self, X, y) -> float:
        """Score of the selected model (its ``score``: labelled trials only)."""
        check_is_fitted(self)
        return self.best_estimator_.score(X, y)
